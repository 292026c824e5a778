/*
 * src/cli/problem.c: grids from a config, and the ideal instrument on them.
 */
#include "problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The speed of light in km/s (exact), for Doppler velocities. */
#define SPEED_OF_LIGHT_KM_S 299792.458

static double *new_doubles(int64_t count)
{
    return malloc((size_t)count * sizeof(double));
}

/* Pixel vertices 0, 1, ..., count. */
static void pixel_vertices(int64_t count, double *vertices)
{
    for (int64_t k = 0; k <= count; k++) {
        vertices[k] = (double)k;
    }
}

/* One line's bin edges (count of them) into `wavelength` and `velocity`:
 * from velocities through the optical Doppler relation (as
 * spart_scene_gaussians and ctis), or given as wavelengths, whose
 * velocities are then worked out the same way. */
static int make_line_edges(spart_context *context, const config_line *line, int64_t count,
                           double *wavelength, double *velocity, char *error, size_t error_size)
{
    if (line->has_velocity) {
        config_axis_vertices(&line->velocity, velocity);
        if (spart_wavelength_from_velocity(context, line->wavelength_rest, count, velocity,
                                           wavelength) != SPART_OK) {
            snprintf(error, error_size, "the wavelength bins: %s", spart_context_error(context));
            return -1;
        }
        return 0;
    }
    config_axis_vertices(&line->wavelength, wavelength);
    for (int64_t k = 0; k < count; k++) {
        velocity[k] = SPEED_OF_LIGHT_KM_S * (wavelength[k] / line->wavelength_rest - 1.0);
    }
    return 0;
}

static int64_t line_bins(const config_line *line)
{
    return line->has_velocity ? line->velocity.cells : line->wavelength.cells;
}

/* Every line's edges, and the library's lines pointing into them. */
static int make_spectral_edges(spart_context *context, const config_instrument *instrument,
                               problem *made, char *error, size_t error_size)
{
    for (int64_t k = 0; k < made->num_line; k++) {
        int64_t bins = made->line_bin[k + 1] - made->line_bin[k];
        double *wavelength = made->wavelength + made->line_bin[k] + k;
        double *velocity = made->velocity + made->line_bin[k] + k;
        if (make_line_edges(context, &instrument->line[k], bins + 1, wavelength, velocity, error,
                            error_size) != 0) {
            return -1;
        }
        spart_instrument_line line = {bins, wavelength, instrument->line[k].intensity_scale};
        made->lines[k] = line;
    }
    return 0;
}

int problem_make_grids(spart_context *context, const config *cfg, problem *made, char *error,
                       size_t error_size)
{
    const config_instrument *instrument = &cfg->instrument;
    memset(made, 0, sizeof *made);
    made->num_channel = instrument->num_channel;
    made->num_line = instrument->num_line;
    for (int64_t k = 0; k < made->num_line; k++) {
        made->line_bin[k + 1] = made->line_bin[k] + line_bins(&instrument->line[k]);
    }
    made->num_wavelength = made->line_bin[made->num_line];
    made->num_scene_x = instrument->scene_x.cells;
    made->num_scene_y = instrument->scene_y.cells;
    made->num_sensor_x = instrument->sensor_pixels_x;
    made->num_sensor_y = instrument->sensor_pixels_y;
    made->scene_size = made->num_wavelength * made->num_scene_x * made->num_scene_y;
    made->image_size = made->num_sensor_x * made->num_sensor_y;
    made->wavelength = new_doubles(made->num_wavelength + made->num_line);
    made->velocity = new_doubles(made->num_wavelength + made->num_line);
    made->scene_x = new_doubles(made->num_scene_x + 1);
    made->scene_y = new_doubles(made->num_scene_y + 1);
    made->sensor_x = new_doubles(made->num_sensor_x + 1);
    made->sensor_y = new_doubles(made->num_sensor_y + 1);
    if (made->wavelength == NULL || made->velocity == NULL || made->scene_x == NULL ||
        made->scene_y == NULL || made->sensor_x == NULL || made->sensor_y == NULL) {
        snprintf(error, error_size, "out of memory for the grids");
        return -1;
    }
    config_axis_vertices(&instrument->scene_x, made->scene_x);
    config_axis_vertices(&instrument->scene_y, made->scene_y);
    pixel_vertices(made->num_sensor_x, made->sensor_x);
    pixel_vertices(made->num_sensor_y, made->sensor_y);
    return make_spectral_edges(context, instrument, made, error, error_size);
}

/* instrument.psf's kernels: per channel the library's normalised
 * elliptical Gaussian (spart_psf_gaussian) of size x size pixels,
 * [channel][x][y], centred at floor(size / 2). NULL with the library's
 * sentence in the context if a kernel is refused or memory runs out. */
static double *psf_kernels(spart_context *context, const config_instrument *instrument)
{
    int64_t n = instrument->psf_size;
    int64_t size[2] = {n, n};
    double *psf = malloc((size_t)(instrument->num_channel * n * n) * sizeof(double));
    if (psf == NULL) {
        spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                "out of memory for the PSF kernels");
        return NULL;
    }
    for (int64_t c = 0; c < instrument->num_channel; c++) {
        if (spart_psf_gaussian(context, instrument->psf_major[c], instrument->psf_minor[c],
                               instrument->psf_angle[c], size, psf + c * n * n,
                               n * n) != SPART_OK) {
            free(psf);
            return NULL;
        }
    }
    return psf;
}

/* The library's description of the instrument, pointing into `made`. */
static void fill_params(const config *cfg, const problem *made, spart_instrument_params *params)
{
    const config_instrument *instrument = &cfg->instrument;
    spart_instrument_params_init(params);
    params->num_channel = instrument->num_channel;
    params->angle = instrument->angle;
    params->dispersion = instrument->dispersion;
    params->plate_scale = instrument->plate_scale;
    params->wavelength_ref = instrument->wavelength_ref;
    params->position_ref[0] = instrument->position_ref[0];
    params->position_ref[1] = instrument->position_ref[1];
    params->area_effective = instrument->area_effective;
    params->exposure_time = instrument->exposure_time;
    params->quantum_yield = instrument->quantum_yield;
    params->read_noise = instrument->read_noise;
    if (instrument->has_lines) {
        params->num_line = made->num_line;
        params->lines = made->lines;
    } else { /* one line: the form of ctis's instrument, as before lines existed */
        params->num_wavelength = made->num_wavelength;
        params->wavelength = made->wavelength;
    }
    params->num_scene_x = made->num_scene_x;
    params->scene_x = made->scene_x;
    params->num_scene_y = made->num_scene_y;
    params->scene_y = made->scene_y;
    params->num_sensor_x = made->num_sensor_x;
    params->sensor_x = made->sensor_x;
    params->num_sensor_y = made->num_sensor_y;
    params->sensor_y = made->sensor_y;
    params->solid_angle_steradian = instrument->solid_angle_steradian;
    params->memory_budget = (size_t)(instrument->memory_budget_gb * 1e9);
    params->value_type = cfg->solver.value_type;
    if (made->psf != NULL) {
        params->psf = made->psf;
        params->psf_size[0] = instrument->psf_size;
        params->psf_size[1] = instrument->psf_size;
        params->psf_mode = (spart_psf_mode)instrument->psf_mode;
    }
}

int problem_build_instrument(spart_context *context, const config *cfg, problem *made,
                             int keep_weights, progress *report, char *error, size_t error_size)
{
    if (cfg->instrument.has_psf && made->psf == NULL) {
        made->psf = psf_kernels(context, &cfg->instrument);
        if (made->psf == NULL) {
            snprintf(error, error_size, "the PSF kernels: %s", spart_context_error(context));
            return -1;
        }
    }
    if (keep_weights && cfg->instrument.memory_budget_gb > 0.0) {
        config_error_at(cfg, cfg->instrument.memory_budget_position, "instrument.memory_budget_gb",
                        error, error_size,
                        "%g GB builds the weights one plane at a time, but spart build keeps and "
                        "saves every weight: leave memory_budget_gb out (or 0) to build and save "
                        "the operators",
                        cfg->instrument.memory_budget_gb);
        return 1;
    }
    spart_instrument_params params;
    fill_params(cfg, made, &params);
    params.keep_weights = keep_weights;
    char what[160];
    snprintf(what, sizeof what,
             "building the instrument: weights and operators of %lld channels x %lld bins%s",
             (long long)made->num_channel, (long long)made->num_wavelength,
             made->num_line > 1 ? " of several lines" : "");
    progress_step_begin(report, what);
    /* The library moves the step's bar as it builds (a terminal only). */
    int hooked = spart_context_set_progress(context, progress_library, report) == SPART_OK;
    spart_status status = spart_instrument_create(context, &params, &made->instrument);
    if (hooked && spart_context_set_progress(context, NULL, NULL) != SPART_OK) {
        status = SPART_ERROR_INTERNAL;
    }
    if (status != SPART_OK) {
        if (report->enabled) {
            fprintf(report->stream, " failed\n");
        }
        snprintf(error, error_size, "building the instrument: %s", spart_context_error(context));
        return -1;
    }
    progress_step_end(report);
    return 0;
}

/* "1x20x64x64" */
static void shape_text(const spart_shape *shape, char *text, size_t size)
{
    int used = 0;
    text[0] = '\0';
    for (int k = 0; k < shape->ndim && used >= 0 && (size_t)used < size; k++) {
        used += snprintf(text + used, size - (size_t)used, "%s%lld", k > 0 ? "x" : "",
                         (long long)shape->dims[k]);
    }
}

static int same_shape(const spart_shape *a, const spart_shape *b)
{
    if (a->ndim != b->ndim) {
        return 0;
    }
    for (int k = 0; k < a->ndim; k++) {
        if (a->dims[k] != b->dims[k]) {
            return 0;
        }
    }
    return 1;
}

/* A loaded operator must map the shapes the config's grids give, as the
 * instrument lays them out (spart/instrument.h). */
static int check_loaded(const config *cfg, const spart_regridder *regridder, const char *path,
                        const spart_shape *input, const spart_shape *output, char *error,
                        size_t error_size)
{
    spart_shape found_input = spart_regridder_shape_input(regridder);
    spart_shape found_output = spart_regridder_shape_output(regridder);
    if (same_shape(&found_input, input) && same_shape(&found_output, output)) {
        return 0;
    }
    char texts[4][128];
    shape_text(&found_input, texts[0], sizeof texts[0]);
    shape_text(&found_output, texts[1], sizeof texts[1]);
    shape_text(input, texts[2], sizeof texts[2]);
    shape_text(output, texts[3], sizeof texts[3]);
    config_error_at(cfg, cfg->instrument.operators_position, "instrument.operators", error,
                    error_size,
                    "%s maps %s values to %s, but the config's grids need %s to %s (were the "
                    "operators built from another config?)",
                    path, texts[0], texts[1], texts[2], texts[3]);
    return 1;
}

static int load_one(spart_context *context, const config *cfg, const char *name,
                    spart_regridder **regridder, char *error, size_t error_size)
{
    char path[CONFIG_PATH_LENGTH + 32];
    snprintf(path, sizeof path, "%s/%s", cfg->instrument.operators, name);
    if (spart_regridder_load(context, path, regridder) != SPART_OK) {
        config_error_at(cfg, cfg->instrument.operators_position, "instrument.operators", error,
                        error_size, "%s", spart_context_error(context));
        return 1;
    }
    return 0;
}

static int load_operators(spart_context *context, const config *cfg, problem *made,
                          progress *report, char *error, size_t error_size)
{
    char what[CONFIG_PATH_LENGTH + 64];
    snprintf(what, sizeof what, "loading the operators from %s", cfg->instrument.operators);
    progress_step_begin(report, what);
    spart_shape scene = {4, {1, made->num_wavelength, made->num_scene_x, made->num_scene_y}};
    spart_shape images = {4, {made->num_channel, 1, made->num_sensor_x, made->num_sensor_y}};
    spart_shape scenes = {
        4, {made->num_channel, made->num_wavelength, made->num_scene_x, made->num_scene_y}};
    int result = load_one(context, cfg, "forward.fits", &made->loaded_forward, error, error_size);
    if (result == 0) {
        result = check_loaded(cfg, made->loaded_forward, "forward.fits", &scene, &images, error,
                              error_size);
    }
    if (result == 0) {
        result = load_one(context, cfg, "backward.fits", &made->loaded_backward, error, error_size);
    }
    if (result == 0) {
        result = check_loaded(cfg, made->loaded_backward, "backward.fits", &images, &scenes, error,
                              error_size);
    }
    if (result == 0) {
        progress_step_end(report);
    } else if (report->enabled) {
        fprintf(report->stream, " failed\n");
    }
    return result;
}

int problem_make_operators(spart_context *context, const config *cfg, problem *made,
                           progress *report, char *error, size_t error_size)
{
    if (cfg->instrument.operators[0] != '\0') {
        return load_operators(context, cfg, made, report, error, error_size);
    }
    return problem_build_instrument(context, cfg, made, 0, report, error, error_size);
}

const spart_regridder *problem_forward(const problem *made)
{
    return made->instrument != NULL ? spart_instrument_forward(made->instrument)
                                    : made->loaded_forward;
}

const spart_regridder *problem_backward(const problem *made)
{
    return made->instrument != NULL ? spart_instrument_backward(made->instrument)
                                    : made->loaded_backward;
}

void problem_free(problem *made)
{
    spart_regridder_free(made->loaded_forward);
    spart_regridder_free(made->loaded_backward);
    spart_instrument_free(made->instrument);
    free(made->wavelength);
    free(made->velocity);
    free(made->scene_x);
    free(made->scene_y);
    free(made->sensor_x);
    free(made->sensor_y);
    free(made->psf);
    memset(made, 0, sizeof *made);
}

int64_t problem_bin_line(const problem *made, int64_t l)
{
    int64_t k = 0;
    while (k + 1 < made->num_line && l >= made->line_bin[k + 1]) {
        k++;
    }
    return k;
}

double problem_bin_velocity(const problem *made, int64_t l)
{
    int64_t e = l + problem_bin_line(made, l); /* its lower edge */
    return (made->velocity[e] + made->velocity[e + 1]) / 2.0;
}

double problem_bin_width(const problem *made, int64_t l)
{
    int64_t e = l + problem_bin_line(made, l);
    return made->wavelength[e + 1] - made->wavelength[e];
}

const char *problem_radiance_unit(const config *cfg)
{
    return cfg->instrument.solid_angle_steradian ? "erg / (Angstrom cm2 s sr)"
                                                 : "erg / (Angstrom cm2 s arcsec2)";
}
