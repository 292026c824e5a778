/*
 * solvers/scene_gaussians.c: the synthetic scene of ctis.scenes.gaussians
 * (spart/scene.h).
 *
 * Every step follows the order of operations of ctis 0.3.1 on named_arrays
 * and astropy, so that the values agree with ctis to the rounding of exp:
 * the Doppler conversions as astropy scales km/s against c in m/s, cell
 * centres as named_arrays interpolates them (0.5 a + 0.5 b), the distance
 * as named_arrays' vector length (sqrt of the sum of squares, squared
 * again), the eight blobs summed in NumPy's pairwise order.
 *
 * Uses the public API only (errors through spart_context_set_error).
 */
#include <math.h>

#include "spart/scene.h"

/* The speed of light in m/s (exact, SI) and the factors astropy applies
 * when it mixes km/s with c in m/s: a ratio (km/s)/(m/s) is scaled by 1000
 * to become dimensionless, and m/s is converted to km/s by 0.001. */
#define SPEED_OF_LIGHT_M_PER_S 299792458.0
#define KM_PER_M_RATIO_SCALE 1000.0
#define M_TO_KM_SCALE 0.001

enum { NUM_BLOBS = 8 };

/* The blobs of ctis.scenes.gaussians: amplitude (in units of 1000
 * erg / (A sr cm^2 s)), centre x and y (arcsec), centre velocity (km/s). */
static const double BLOB_AMPLITUDE[NUM_BLOBS] = {3.38, 6, 4, 3.38, 5, 7, 3.7, 5.5};
static const double BLOB_X[NUM_BLOBS] = {-2.5, 2.5, 0, 0, 0, -4, 0, 4};
static const double BLOB_Y[NUM_BLOBS] = {0, 0, -2, 2, 4, 4, -4, -4};
static const double BLOB_VELOCITY[NUM_BLOBS] = {200, -200, -150, 150, -100, 100, -100, -150};
static const double AMPLITUDE_SCALE = 1000.0;
/* The direction each blob moves along in a sequence of frames (spart/scene.h):
 * 45 k degrees from +x, sqrt(1/2) written out so that every platform moves
 * the blobs by the same bits. */
#define HALF_SQRT2 0.70710678118654752440
static const double BLOB_DIRECTION_X[NUM_BLOBS] = {1,  HALF_SQRT2,  0, -HALF_SQRT2,
                                                   -1, -HALF_SQRT2, 0, HALF_SQRT2};
static const double BLOB_DIRECTION_Y[NUM_BLOBS] = {0, HALF_SQRT2,  1,  HALF_SQRT2,
                                                   0, -HALF_SQRT2, -1, -HALF_SQRT2};

void spart_scene_gaussians_options_init(spart_scene_gaussians_options *options)
{
    if (options == NULL) {
        return;
    }
    options->width_velocity = 30.0;
    options->width_x = 1.0;
    options->width_y = 1.0;
    options->drift = 0.0;
    options->frame = 0;
}

/* wavelength_rest (1 + v / c), as astropy evaluates (1 + v / c) * w0 with v
 * in km/s and c in m/s. */
static double doppler_wavelength(double wavelength_rest, double velocity)
{
    double ratio = (velocity / SPEED_OF_LIGHT_M_PER_S) * KM_PER_M_RATIO_SCALE;
    return (1.0 + ratio) * wavelength_rest;
}

/* c (w / w0 - 1) in km/s, as named_arrays' DopplerVectorArray.velocity. */
static double doppler_velocity(double wavelength_rest, double wavelength)
{
    return (SPEED_OF_LIGHT_M_PER_S * (wavelength / wavelength_rest - 1.0)) * M_TO_KM_SCALE;
}

/* A velocity as ctis sees it after the conversion to wavelength and back. */
static double velocity_round_trip(double wavelength_rest, double velocity)
{
    return doppler_velocity(wavelength_rest, doppler_wavelength(wavelength_rest, velocity));
}

/* The centre of the cell between two vertices, as named_arrays' linear
 * interpolation at 0.5 computes it. */
static double cell_centre(double vertex_low, double vertex_high)
{
    return vertex_low * 0.5 + vertex_high * 0.5;
}

static spart_status check_finite(spart_context *context, const char *name, int64_t count,
                                 const double *values)
{
    for (int64_t i = 0; i < count; i++) {
        if (!isfinite(values[i])) {
            return spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                           "%s[%lld] = %g is not finite", name, (long long)i,
                                           values[i]);
        }
    }
    return SPART_OK;
}

static spart_status check_positive(spart_context *context, const char *name, double value)
{
    if (!isfinite(value)) {
        return spart_context_set_error(context, SPART_ERROR_NOT_FINITE, "%s = %g is not finite",
                                       name, value);
    }
    if (!(value > 0.0)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "%s = %g is not positive", name, value);
    }
    return SPART_OK;
}

spart_status spart_wavelength_from_velocity(spart_context *context, double wavelength_rest,
                                            int64_t count, const double *velocity,
                                            double *wavelength)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (count < 0) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "count = %lld is negative", (long long)count);
    }
    if (count > 0 && (velocity == NULL || wavelength == NULL)) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER, "%s is NULL",
                                       velocity == NULL ? "velocity" : "wavelength");
    }
    spart_status status = check_positive(context, "wavelength_rest", wavelength_rest);
    if (status == SPART_OK) {
        status = check_finite(context, "velocity", count, velocity);
    }
    if (status != SPART_OK) {
        return status;
    }
    for (int64_t i = 0; i < count; i++) {
        wavelength[i] = doppler_wavelength(wavelength_rest, velocity[i]);
        /* at or below -c the optical convention gives no wavelength */
        if (!(wavelength[i] > 0.0)) {
            return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                           "velocity[%lld] = %g km/s is at or below -c "
                                           "(-299792.458 km/s): its wavelength would be %g, not "
                                           "positive",
                                           (long long)i, velocity[i], wavelength[i]);
        }
    }
    return SPART_OK;
}

/* Check the counts and the pointers of spart_scene_gaussians. */
static spart_status check_grid(spart_context *context, int64_t num_wavelength,
                               const double *velocity, int64_t num_x, const double *x,
                               int64_t num_y, const double *y, const double *scene)
{
    const char *count_names[3] = {"num_wavelength", "num_x", "num_y"};
    const int64_t counts[3] = {num_wavelength, num_x, num_y};
    for (int k = 0; k < 3; k++) {
        if (counts[k] < 1) {
            return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                           "%s = %lld is below 1", count_names[k],
                                           (long long)counts[k]);
        }
    }
    const char *pointer_names[4] = {"velocity", "x", "y", "scene"};
    const void *pointers[4] = {velocity, x, y, scene};
    for (int k = 0; k < 4; k++) {
        if (pointers[k] == NULL) {
            return spart_context_set_error(context, SPART_ERROR_NULL_POINTER, "%s is NULL",
                                           pointer_names[k]);
        }
    }
    if (num_x > INT64_MAX / num_y || num_x * num_y > INT64_MAX / num_wavelength) {
        return spart_context_set_error(
            context, SPART_ERROR_OVERFLOW, "a scene of %lld x %lld x %lld values overflows int64",
            (long long)num_wavelength, (long long)num_x, (long long)num_y);
    }
    spart_status status = check_finite(context, "velocity", num_wavelength + 1, velocity);
    if (status == SPART_OK) {
        status = check_finite(context, "x", num_x + 1, x);
    }
    if (status == SPART_OK) {
        status = check_finite(context, "y", num_y + 1, y);
    }
    return status;
}

static spart_status check_widths(spart_context *context,
                                 const spart_scene_gaussians_options *options)
{
    spart_status status =
        check_positive(context, "options->width_velocity", options->width_velocity);
    if (status == SPART_OK) {
        status = check_positive(context, "options->width_x", options->width_x);
    }
    if (status == SPART_OK) {
        status = check_positive(context, "options->width_y", options->width_y);
    }
    if (status == SPART_OK && !isfinite(options->drift)) {
        status = spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                         "options->drift = %g is not finite", options->drift);
    }
    if (status == SPART_OK && options->frame < 0) {
        status =
            spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                    "options->frame = %lld is negative", (long long)options->frame);
    }
    return status;
}

/* One blob's term at a point whose offsets from its centre, divided by the
 * widths, are (a, b, d): amplitude exp(-|(a, b, d)|^2 / 2), the length
 * taken and squared again as named_arrays does. */
static double blob_term(double amplitude, double a, double b, double d)
{
    double length = sqrt((a * a + b * b) + d * d);
    return amplitude * exp(-(length * length) / 2.0);
}

/* The sum of eight terms in NumPy's pairwise order for a block of eight. */
static double pairwise_sum_of_eight(const double *t)
{
    return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

spart_status spart_scene_gaussians(spart_context *context, double wavelength_rest,
                                   int64_t num_wavelength, const double *velocity, int64_t num_x,
                                   const double *x, int64_t num_y, const double *y,
                                   const spart_scene_gaussians_options *options, double *wavelength,
                                   double *scene)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_scene_gaussians_options defaults;
    spart_scene_gaussians_options_init(&defaults);
    if (options == NULL) {
        options = &defaults;
    }
    spart_status status = check_grid(context, num_wavelength, velocity, num_x, x, num_y, y, scene);
    if (status == SPART_OK) {
        status = check_positive(context, "wavelength_rest", wavelength_rest);
    }
    if (status == SPART_OK) {
        status = check_widths(context, options);
    }
    if (status != SPART_OK) {
        return status;
    }

    double blob_velocity[NUM_BLOBS], amplitude[NUM_BLOBS], blob_x[NUM_BLOBS], blob_y[NUM_BLOBS];
    double moved = (double)options->frame * options->drift; /* arcsec */
    for (int k = 0; k < NUM_BLOBS; k++) {
        blob_velocity[k] = velocity_round_trip(wavelength_rest, BLOB_VELOCITY[k]);
        amplitude[k] = BLOB_AMPLITUDE[k] * AMPLITUDE_SCALE;
        /* no motion leaves ctis's centres untouched (not even + 0.0) */
        blob_x[k] = moved != 0.0 ? BLOB_X[k] + moved * BLOB_DIRECTION_X[k] : BLOB_X[k];
        blob_y[k] = moved != 0.0 ? BLOB_Y[k] + moved * BLOB_DIRECTION_Y[k] : BLOB_Y[k];
    }
    double width_velocity = velocity_round_trip(wavelength_rest, options->width_velocity);

    for (int64_t l = 0; l < num_wavelength; l++) {
        double low = doppler_wavelength(wavelength_rest, velocity[l]);
        double high = doppler_wavelength(wavelength_rest, velocity[l + 1]);
        double v = doppler_velocity(wavelength_rest, cell_centre(low, high));
        for (int64_t i = 0; i < num_x; i++) {
            double xc = cell_centre(x[i], x[i + 1]);
            for (int64_t j = 0; j < num_y; j++) {
                double yc = cell_centre(y[j], y[j + 1]);
                double terms[NUM_BLOBS];
                for (int k = 0; k < NUM_BLOBS; k++) {
                    terms[k] = blob_term(amplitude[k], (v - blob_velocity[k]) / width_velocity,
                                         (xc - blob_x[k]) / options->width_x,
                                         (yc - blob_y[k]) / options->width_y);
                }
                scene[(l * num_x + i) * num_y + j] = pairwise_sum_of_eight(terms);
            }
        }
    }
    if (wavelength != NULL) {
        for (int64_t l = 0; l <= num_wavelength; l++) {
            wavelength[l] = doppler_wavelength(wavelength_rest, velocity[l]);
        }
    }
    return SPART_OK;
}
