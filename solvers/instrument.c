/*
 * solvers/instrument.c: the ideal CTIS instrument (spart/instrument.h), as
 * ctis.instruments.IdealInstrument builds it: the scene grid mapped onto
 * the sensor per (channel, wavelength bin), conservative 2-D weights, their
 * conservative transpose, the unit factors folded into both, assembled
 * into two Regridders. Uses the public API only.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "spart/device.h"
#include "spart/instrument.h"
#include "spart/weights.h"
#include "instrument_build.h"
#include "instrument_lines.h"
#include "mart_internal.h"

/* Planck's constant (erg s) and the speed of light (A/s), exact SI values. */
static const double planck_erg_s = 6.62607015e-27;
static const double light_angstrom_per_s = 2.99792458e18;
/* Square arcseconds per steradian: (648000 / pi)^2. */
static const double arcsec2_per_steradian = 4.25451702961521995e10;

struct spart_instrument {
    const spart_context *context; /* whose allocator holds the arrays */
    int64_t num_channel;
    int64_t num_line;
    int64_t num_wavelength; /* bins of all lines */
    int64_t num_scene_x, num_scene_y;
    int64_t num_sensor_x, num_sensor_y;
    double quantum_yield;
    double read_noise;
    int on_device;                /* the operators (and PSF) on the context's device */
    double *photons_per_radiance; /* scene_size */
    spart_regridder *forward;
    spart_regridder *backward;
    spart_weights *weights;               /* the geometric weights, when kept (else NULL) */
    spart_psf *psf;                       /* the PSF composed by FFT (else NULL) */
    spart_mart_regridder_psf psf_problem; /* the operators with it, for MART */
};

void spart_instrument_params_init(spart_instrument_params *params)
{
    if (params == NULL) {
        return;
    }
    memset(params, 0, sizeof *params);
    params->quantum_yield = 1.0;
    params->value_type = SPART_FLOAT64;
}

/* ---- checks ----------------------------------------------------------------------------- */

static spart_status check_positive(spart_context *context, const char *name, double value)
{
    if (!isfinite(value)) {
        return spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                       "instrument: %s = %g is not finite", name, value);
    }
    if (!(value > 0.0)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "instrument: %s = %g must be positive", name, value);
    }
    return SPART_OK;
}

static spart_status check_finite(spart_context *context, const char *name, double value)
{
    if (!isfinite(value)) {
        return spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                       "instrument: %s = %g is not finite", name, value);
    }
    return SPART_OK;
}

/* A vertex array: count + 1 finite values, strictly monotonic (the
 * wavelengths, which must increase, are solvers/instrument_lines.c's). */
static spart_status check_vertices(spart_context *context, const char *name, const double *v,
                                   int64_t count)
{
    if (count < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "instrument: num_%s = %lld must be at least 1", name,
                                       (long long)count);
    }
    if (v == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER, "instrument: %s is NULL",
                                       name);
    }
    for (int64_t i = 0; i <= count; i++) {
        if (!isfinite(v[i])) {
            return spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                           "instrument: %s[%lld] = %g is not finite", name,
                                           (long long)i, v[i]);
        }
    }
    double direction = v[1] > v[0] ? 1.0 : -1.0;
    for (int64_t i = 0; i < count; i++) {
        double step = (v[i + 1] - v[i]) * direction;
        if (!(step > 0.0)) {
            return spart_context_set_error(
                context, SPART_ERROR_INVALID_ARGUMENT,
                "instrument: %s must be strictly monotonic: %s[%lld] = %g, %s[%lld] = %g", name,
                name, (long long)i, v[i], name, (long long)(i + 1), v[i + 1]);
        }
    }
    return SPART_OK;
}

static spart_status check_params(spart_context *context, const spart_instrument_params *p)
{
    if (p->num_channel < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "instrument: num_channel = %lld must be at least 1",
                                       (long long)p->num_channel);
    }
    if (p->angle == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "instrument: angle is NULL");
    }
    for (int64_t c = 0; c < p->num_channel; c++) {
        if (!isfinite(p->angle[c])) {
            return spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                           "instrument: angle[%lld] = %g is not finite",
                                           (long long)c, p->angle[c]);
        }
    }
    spart_status status = check_finite(context, "dispersion", p->dispersion);
    if (status == SPART_OK && p->dispersion == 0.0) {
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                         "instrument: dispersion must not be 0");
    }
    const char *positive_names[] = {"plate_scale", "area_effective", "exposure_time",
                                    "quantum_yield"};
    double positive_values[] = {p->plate_scale, p->area_effective, p->exposure_time,
                                p->quantum_yield};
    for (int k = 0; k < 4 && status == SPART_OK; k++) {
        status = check_positive(context, positive_names[k], positive_values[k]);
    }
    const char *finite_names[] = {"wavelength_ref", "position_ref[0]", "position_ref[1]",
                                  "read_noise"};
    double finite_values[] = {p->wavelength_ref, p->position_ref[0], p->position_ref[1],
                              p->read_noise};
    for (int k = 0; k < 4 && status == SPART_OK; k++) {
        status = check_finite(context, finite_names[k], finite_values[k]);
    }
    if (status == SPART_OK && p->read_noise < 0.0) {
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                         "instrument: read_noise = %g must not be negative",
                                         p->read_noise);
    }
    int64_t bins = 0; /* the spectral bins: one line's, or several lines' */
    if (status == SPART_OK) {
        status = spart_instrument_check_lines(context, p, &bins);
    }
    if (status == SPART_OK) {
        status = check_vertices(context, "scene_x", p->scene_x, p->num_scene_x);
    }
    if (status == SPART_OK) {
        status = check_vertices(context, "scene_y", p->scene_y, p->num_scene_y);
    }
    if (status == SPART_OK) {
        status = check_vertices(context, "sensor_x", p->sensor_x, p->num_sensor_x);
    }
    if (status == SPART_OK) {
        status = check_vertices(context, "sensor_y", p->sensor_y, p->num_sensor_y);
    }
    if (status == SPART_OK && p->psf_mode != SPART_PSF_AUTO && p->psf_mode != SPART_PSF_FFT &&
        p->psf_mode != SPART_PSF_FOLDED) {
        status = spart_context_set_error(context, SPART_ERROR_UNKNOWN_ENUM,
                                         "instrument: psf_mode = %d is not a spart_psf_mode",
                                         (int)p->psf_mode);
    }
    if (status == SPART_OK && p->psf != NULL && (p->psf_size[0] < 1 || p->psf_size[1] < 1)) {
        status = spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "instrument: psf_size = %lld x %lld must be at least 1 x 1 when psf is given",
            (long long)p->psf_size[0], (long long)p->psf_size[1]);
    }
    if (status == SPART_OK && p->keep_weights != 0 && p->keep_weights != 1) {
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                         "instrument: keep_weights = %d must be 0 or 1",
                                         p->keep_weights);
    }
    if (status == SPART_OK && p->memory_budget > 0 &&
        (p->keep_weights || (p->psf != NULL && p->psf_mode == SPART_PSF_FOLDED))) {
        status = spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "instrument: memory_budget = %zu builds the weights one plane at a time, so it "
            "cannot %s (give memory_budget = 0)",
            p->memory_budget,
            p->keep_weights ? "keep them (keep_weights = 1)" : "fold a PSF into them");
    }
    if (status == SPART_OK && p->on_device != 0 && p->on_device != 1) {
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                         "instrument: on_device = %d must be 0 or 1", p->on_device);
    }
    if (status == SPART_OK && p->solid_angle_steradian != 0 && p->solid_angle_steradian != 1) {
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                         "instrument: solid_angle_steradian = %d must be 0 or 1",
                                         p->solid_angle_steradian);
    }
    if (status == SPART_OK && p->value_type != SPART_FLOAT64 && p->value_type != SPART_FLOAT32) {
        status = spart_context_set_error(context, SPART_ERROR_UNKNOWN_ENUM,
                                         "instrument: value_type = %d is not a spart_value_type",
                                         (int)p->value_type);
    }
    return status;
}

/* ---- geometry ------------------------------------------------------------------------------ */

/* s = A t dlambda dOmega / E per scene voxel, in ctis's order: the
 * radiance times area and exposure, times the voxel volume, over the
 * energy of a photon at the bin centre. A line's intensity scale
 * multiplies the area (scale 1 leaves every bit as it was). */
static void photons_per_radiance(const spart_instrument_params *p, const spart_spectral_bins *bins,
                                 double *s)
{
    double solid_angle_unit = p->solid_angle_steradian ? 1.0 / arcsec2_per_steradian : 1.0;
    /* bins on the threads: each value is its own */
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t l = 0; l < bins->count; l++) {
        double area_time = (p->area_effective * bins->scale[l]) * p->exposure_time;
        double width = bins->high[l] - bins->low[l];
        double centre = (bins->low[l] + bins->high[l]) / 2.0;
        double energy = (planck_erg_s * light_angstrom_per_s) / centre;
        for (int64_t i = 0; i < p->num_scene_x; i++) {
            double dx = fabs(p->scene_x[i + 1] - p->scene_x[i]);
            for (int64_t j = 0; j < p->num_scene_y; j++) {
                double dy = fabs(p->scene_y[j + 1] - p->scene_y[j]);
                double solid_angle = (dx * dy) * solid_angle_unit;
                double volume = width * solid_angle;
                s[(l * p->num_scene_x + i) * p->num_scene_y + j] = (area_time * volume) / energy;
            }
        }
    }
}

/* ---- assembly ------------------------------------------------------------------------------ */

/* The PSF folded into the weights: W becomes P W, one kernel per channel
 * shared by the channel's wavelengths. The weights' output shape is the
 * sensor's alone (x', y'), so the kernel is channel x 1 (the orthogonal
 * axes, beyond the output shape) x 1 x 1 (the same at every pixel) x kx x
 * ky. */
static spart_status fold_psf(spart_context *context, const spart_instrument_params *p,
                             spart_weights **weights)
{
    spart_array kernel = {p->psf, {6, {p->num_channel, 1, 1, 1, p->psf_size[0], p->psf_size[1]}}};
    spart_weights *folded = NULL;
    spart_status status = spart_weights_convolve(context, *weights, &kernel, &folded);
    if (status == SPART_OK) {
        spart_weights_free(*weights);
        *weights = folded;
    }
    return status;
}

/* A copy of `weights` (the public API has no copy: its arrays made anew). */
static spart_status copy_weights(spart_context *context, const spart_weights *weights,
                                 spart_weights **copy)
{
    const int64_t *offsets = NULL, *indices_input = NULL, *indices_output = NULL;
    const double *values = NULL;
    spart_status status =
        spart_weights_arrays(weights, &offsets, &indices_input, &indices_output, &values);
    if (status != SPART_OK) {
        return status;
    }
    int num_axis_input = 0, num_axis_output = 0;
    int axis_input[SPART_MAX_NDIM], axis_output[SPART_MAX_NDIM];
    spart_weights_axes(weights, &num_axis_input, axis_input, &num_axis_output, axis_output);
    spart_shape orthogonal = spart_weights_shape_orthogonal(weights);
    spart_shape input = spart_weights_shape_input(weights);
    spart_shape output = spart_weights_shape_output(weights);
    return spart_weights_create_from_arrays(context, &orthogonal, &input, &output, num_axis_input,
                                            axis_input, num_axis_output, axis_output, offsets,
                                            indices_input, indices_output, values, copy);
}

/* The weights of every (channel, wavelength) plane and their conservative
 * transpose, with the unit factors folded in. */
static spart_status build_weights(spart_context *context, const spart_instrument_params *p,
                                  const spart_spectral_bins *bins, const double *s,
                                  spart_weights **forward, spart_weights **backward,
                                  spart_weights **geometric)
{
    int64_t c = p->num_channel, l = bins->count;
    int64_t nx = p->num_scene_x, ny = p->num_scene_y;
    int64_t mx = p->num_sensor_x, my = p->num_sensor_y;
    size_t mapped_count = (size_t)(c * l * (nx + 1) * (ny + 1));
    size_t sensor_count = (size_t)((mx + 1) * (my + 1));
    size_t scene_size = (size_t)(l * nx * ny);
    double *mapped = spart_mart_alloc_doubles(context, 2 * mapped_count);
    double *sensor = spart_mart_alloc_doubles(context, 2 * sensor_count);
    double *factor = spart_mart_alloc_doubles(context, 2 * scene_size);
    spart_status status = SPART_OK;
    if (mapped == NULL || sensor == NULL || factor == NULL) {
        /* name the allocation that failed, with its own size */
        const char *what = mapped == NULL   ? "the mapped scene vertices"
                           : sensor == NULL ? "the sensor's vertices"
                                            : "the unit factors of the scene";
        size_t count = mapped == NULL   ? 2 * mapped_count
                       : sensor == NULL ? 2 * sensor_count
                                        : 2 * scene_size;
        spart_context_free_memory(context, mapped);
        spart_context_free_memory(context, sensor);
        spart_context_free_memory(context, factor);
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "instrument: could not allocate %s (%zu values, %.3g GB)",
                                       what, count, (double)count * sizeof(double) / 1e9);
    }
    if (status == SPART_OK) {
        spart_instrument_map_scene(p, bins, mapped, mapped + mapped_count);
        spart_instrument_sensor_vertices(p, sensor, sensor + sensor_count);
        spart_array input[2] = {
            {mapped, spart_instrument_shape4(c, l, nx + 1, ny + 1)},
            {mapped + mapped_count, spart_instrument_shape4(c, l, nx + 1, ny + 1)}};
        /* 4 axes (1 x 1 x ...): the weights then keep the orthogonal axes in
         * their output shape, along which a folded PSF may vary. */
        spart_shape sensor_shape = {4, {1, 1, mx + 1, my + 1}};
        spart_array output[2] = {{sensor, sensor_shape}, {sensor + sensor_count, sensor_shape}};
        spart_weights_options options;
        spart_instrument_weights_options(&options);
        /* On a device every step below runs where the weights lie: the
         * fold, the transpose and the scaling dispatch on their location. */
        status = p->on_device
                     ? spart_weights_build_device(context, 2, input, output, &options, forward)
                     : spart_weights_build(context, 2, input, output, &options, forward);
        if (status == SPART_OK && p->psf != NULL && p->psf_mode == SPART_PSF_FOLDED) {
            status = fold_psf(context, p, forward);
        }
        if (status == SPART_OK) {
            status = spart_weights_transpose_conservative(context, *forward, 2, input, output,
                                                          &options, backward);
        }
        if (status == SPART_OK && p->keep_weights) {
            status = p->on_device ? spart_weights_to_host(context, *forward, geometric)
                                  : copy_weights(context, *forward, geometric);
        }
    }
    /* Forward: photons per radiance times the quantum yield, per input
     * voxel. Backward: ctis divides the images by the quantum yield and the
     * number of bins and multiplies the product by E / (dlambda dOmega) /
     * (A t), i.e. by 1 / (quantum yield bins s) per output voxel. */
    if (status == SPART_OK) {
        double *forward_factor = factor;
        double *backward_factor = factor + scene_size;
        double num_bins = (double)l; /* of every line */
#pragma omp parallel for schedule(static)
        for (size_t v = 0; v < scene_size; v++) {
            forward_factor[v] = s[v] * p->quantum_yield;
            backward_factor[v] = 1.0 / ((p->quantum_yield * num_bins) * s[v]);
        }
        spart_array forward_scale = {forward_factor, spart_instrument_shape4(1, l, nx, ny)};
        spart_array backward_scale = {backward_factor, spart_instrument_shape4(1, l, nx, ny)};
        status = spart_weights_scale(context, *forward, &forward_scale, NULL);
        if (status == SPART_OK) {
            status = spart_weights_scale(context, *backward, NULL, &backward_scale);
        }
    }
    spart_context_free_memory(context, mapped);
    spart_context_free_memory(context, sensor);
    spart_context_free_memory(context, factor);
    return status;
}

/* Forward: (wavelength, x, y) -> (channel, x', y'), the scene shared by
 * the channels, the wavelengths summed. Backward: (channel, x', y') ->
 * (channel, wavelength, x, y), each channel's images spread over every
 * wavelength. */
static spart_status assemble(spart_context *context, const spart_instrument_params *p,
                             spart_weights **forward_weights, spart_weights **backward_weights,
                             spart_instrument *made)
{
    /* Each direction's weights are freed as soon as its Regridder holds
     * them: the forward weights before the backward assembly, so that the
     * peak is one direction's weights less (docs/dev/esis-notes.md). */
    spart_regridder_options options;
    spart_instrument_operator_options(p, made->num_wavelength, 0, &options);
    spart_status status =
        p->on_device
            ? spart_regridder_create_device(context, *forward_weights, &options, &made->forward)
            : spart_regridder_create(context, *forward_weights, &options, &made->forward);
    spart_weights_free(*forward_weights);
    *forward_weights = NULL;
    if (status == SPART_OK) {
        spart_instrument_operator_options(p, made->num_wavelength, 1, &options);
        status = p->on_device ? spart_regridder_create_device(context, *backward_weights, &options,
                                                              &made->backward)
                              : spart_regridder_create(context, *backward_weights, &options,
                                                       &made->backward);
    }
    spart_weights_free(*backward_weights);
    *backward_weights = NULL;
    return status;
}

/* The PSF composed by FFT on the forward operator's images, kernels shaped
 * channel x 1 x kx x ky as the images are channel x 1 x x' x y'. */
static spart_status compose_psf(spart_context *context, const spart_instrument_params *p,
                                spart_instrument *made)
{
    spart_array kernels = {
        p->psf, spart_instrument_shape4(p->num_channel, 1, p->psf_size[0], p->psf_size[1])};
    spart_shape images = spart_regridder_shape_output(made->forward);
    spart_status status = spart_psf_create(context, &kernels, &images, &made->psf);
    if (status == SPART_OK && made->on_device) { /* beside the device operators */
        spart_psf *device = NULL;
        status = spart_psf_to_device(context, made->psf, &device);
        spart_psf_free(made->psf);
        made->psf = device;
    }
    if (status == SPART_OK) {
        spart_mart_regridder_psf problem = {
            made->forward,    made->psf, made->backward, made->num_channel, made->quantum_yield,
            made->read_noise, NULL};
        made->psf_problem = problem;
    }
    return status;
}

spart_status spart_instrument_create(spart_context *context, const spart_instrument_params *params,
                                     spart_instrument **instrument)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (params == NULL || instrument == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "instrument: params and instrument must not be NULL");
    }
    *instrument = NULL;
    spart_status status = check_params(context, params);
    if (status != SPART_OK) {
        return status;
    }
    spart_instrument *made = spart_context_malloc(context, sizeof *made);
    if (made == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "instrument: could not allocate the instrument");
    }
    memset(made, 0, sizeof *made);
    made->context = context;
    spart_spectral_bins bins;
    status = spart_spectral_bins_make(context, params, &bins);
    if (status != SPART_OK) {
        spart_context_free_memory(context, made);
        return status;
    }
    made->num_channel = params->num_channel;
    made->num_line = bins.lines;
    made->num_wavelength = bins.count;
    made->num_scene_x = params->num_scene_x;
    made->num_scene_y = params->num_scene_y;
    made->num_sensor_x = params->num_sensor_x;
    made->num_sensor_y = params->num_sensor_y;
    made->quantum_yield = params->quantum_yield;
    made->read_noise = params->read_noise;
    made->on_device = params->on_device;
    int64_t scene_size = bins.count * params->num_scene_x * params->num_scene_y;
    made->photons_per_radiance = spart_mart_alloc_doubles(context, (size_t)scene_size);
    if (made->photons_per_radiance == NULL) {
        spart_spectral_bins_free(context, &bins);
        spart_instrument_free(made);
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "instrument: could not allocate %lld values",
                                       (long long)scene_size);
    }
    photons_per_radiance(params, &bins, made->photons_per_radiance);
    spart_weights *forward_weights = NULL;
    spart_weights *backward_weights = NULL;
    int folded = params->psf != NULL && params->psf_mode == SPART_PSF_FOLDED;
    if (params->on_device && !params->keep_weights && !folded) {
        /* the device planes builder (solvers/instrument_device.c), in
         * memory or within memory_budget */
        status = spart_instrument_assemble_on_device(
            context, params, &bins, made->photons_per_radiance, &made->forward, &made->backward);
    } else if (params->memory_budget > 0) {
        status = spart_instrument_assemble_streamed(
            context, params, &bins, made->photons_per_radiance, &made->forward, &made->backward);
    } else {
        status = build_weights(context, params, &bins, made->photons_per_radiance, &forward_weights,
                               &backward_weights, &made->weights);
        if (status == SPART_OK) {
            status = assemble(context, params, &forward_weights, &backward_weights, made);
        }
    }
    spart_spectral_bins_free(context, &bins);
    if (status == SPART_OK && params->psf != NULL && params->psf_mode != SPART_PSF_FOLDED) {
        status = compose_psf(context, params, made);
    }
    spart_weights_free(forward_weights);
    spart_weights_free(backward_weights);
    if (status != SPART_OK) {
        spart_instrument_free(made);
        return status;
    }
    *instrument = made;
    return SPART_OK;
}

void spart_instrument_free(spart_instrument *instrument)
{
    if (instrument == NULL) {
        return;
    }
    spart_regridder_free(instrument->forward);
    spart_regridder_free(instrument->backward);
    spart_weights_free(instrument->weights);
    spart_psf_free(instrument->psf);
    spart_context_free_memory(instrument->context, instrument->photons_per_radiance);
    spart_context_free_memory(instrument->context, instrument);
}

int64_t spart_instrument_num_channel(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->num_channel : 0;
}

int64_t spart_instrument_num_wavelength(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->num_wavelength : 0;
}

int64_t spart_instrument_num_line(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->num_line : 0;
}

int64_t spart_instrument_scene_size(const spart_instrument *instrument)
{
    return instrument != NULL
               ? instrument->num_wavelength * instrument->num_scene_x * instrument->num_scene_y
               : 0;
}

int64_t spart_instrument_image_size(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->num_sensor_x * instrument->num_sensor_y : 0;
}

const spart_regridder *spart_instrument_forward(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->forward : NULL;
}

const spart_regridder *spart_instrument_backward(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->backward : NULL;
}

const spart_psf *spart_instrument_psf(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->psf : NULL;
}

const spart_weights *spart_instrument_weights(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->weights : NULL;
}

const double *spart_instrument_photons_per_radiance(const spart_instrument *instrument)
{
    return instrument != NULL ? instrument->photons_per_radiance : NULL;
}

/* ---- products -------------------------------------------------------------------------------- */

static spart_status check_call(spart_context *context, const spart_instrument *instrument,
                               const void *in, const void *out, const char *what)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (instrument == NULL || in == NULL || out == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "%s: the instrument and the arrays must not be NULL", what);
    }
    return SPART_OK;
}

spart_status spart_instrument_mart_operators(spart_context *context,
                                             const spart_instrument *instrument,
                                             spart_mart_regridder_pair *pair,
                                             spart_mart_operators *operators)
{
    spart_status status =
        check_call(context, instrument, pair, operators, "instrument_mart_operators");
    if (status != SPART_OK) {
        return status;
    }
    pair->forward = instrument->forward;
    pair->backward = instrument->backward;
    pair->num_channel = instrument->num_channel;
    pair->gain = instrument->quantum_yield;
    pair->read_noise = instrument->read_noise;
    if (instrument->psf != NULL) { /* the PSF composed: the instrument holds the problem */
        return spart_mart_operators_from_regridders_psf(context, &instrument->psf_problem,
                                                        operators);
    }
    return spart_mart_operators_from_regridders(context, pair, operators);
}

spart_status spart_instrument_image(spart_context *context, const spart_instrument *instrument,
                                    const double *scene, double *images, double *widths)
{
    spart_status status = check_call(context, instrument, scene, images, "instrument_image");
    if (status != SPART_OK) {
        return status;
    }
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    status = spart_instrument_mart_operators(context, instrument, &pair, &operators);
    if (status == SPART_OK) {
        status = operators.forward(operators.user, context, scene, images, widths);
    }
    return status;
}

spart_status spart_instrument_backproject(spart_context *context,
                                          const spart_instrument *instrument, const double *images,
                                          double *scenes)
{
    spart_status status = check_call(context, instrument, images, scenes, "instrument_backproject");
    if (status != SPART_OK) {
        return status;
    }
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    status = spart_instrument_mart_operators(context, instrument, &pair, &operators);
    if (status == SPART_OK) {
        status = operators.backward(operators.user, context, images, scenes);
    }
    return status;
}

spart_status spart_instrument_observe(spart_context *context, const spart_instrument *instrument,
                                      const double *scene, uint64_t seed, double *images,
                                      double *widths)
{
    spart_status status = check_call(context, instrument, scene, images, "instrument_observe");
    if (status == SPART_OK && instrument->on_device) {
        status = spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "instrument_observe: the instrument was built on a device (on_device = 1) and its "
            "images are device memory, but the Poisson draws run on the host: image with "
            "spart_instrument_image and draw from a host copy, or build with on_device = 0");
    }
    if (status == SPART_OK) {
        status = spart_instrument_image(context, instrument, scene, images, widths);
    }
    if (status != SPART_OK) {
        return status;
    }
    int64_t size = instrument->num_channel * spart_instrument_image_size(instrument);
    double qy = instrument->quantum_yield;
    for (int64_t p = 0; p < size; p++) {
        if (!(images[p] / qy < 2147483647.0)) {
            return spart_context_set_error(
                context, SPART_ERROR_INVALID_ARGUMENT,
                "instrument_observe: pixel %lld expects %g photons, more than the Poisson "
                "sampler takes (2^31 - 1)",
                (long long)p, images[p] / qy);
        }
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "instrument_observe: could not allocate the generator");
    }
    gsl_rng_set(rng, (unsigned long)seed);
    for (int64_t p = 0; p < size; p++) {
        double photons = (double)gsl_ran_poisson(rng, images[p] / qy);
        double electrons = photons * qy;
        if (instrument->read_noise > 0.0) {
            electrons = electrons + gsl_ran_gaussian(rng, instrument->read_noise);
        }
        images[p] = electrons;
    }
    gsl_rng_free(rng);
    return SPART_OK;
}
