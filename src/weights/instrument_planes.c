/*
 * src/weights/instrument_planes.c: the planes of an ideal CTIS instrument
 * on the host side (spart/instrument.h): each plane's constants and the
 * scene's vertices mapped onto the sensor (spart_instrument_map_vertices,
 * which solvers/instrument_geometry.c calls for the host build), the
 * checks of the device builder, and, in a build without CUDA, its entry
 * points answering SPART_ERROR_NO_DEVICE (with CUDA they are
 * src/weights/instrument_planes_cuda.c's). The arithmetic is
 * src/weights/instrument_planes.h's, which the device's mapping shares.
 */
#include <math.h>

#include "core/internal.h"
#include "weights/instrument_planes.h"
#include "spart/instrument.h"

static const double pi = 3.14159265358979323846;

void spart_instrument_plane_map(const spart_instrument_params *params, int64_t channel, double low,
                                double high, spart_plane_map *map)
{
    /* ctis's order of operations (named_arrays' rotation and dispersion
     * matrices): rotate, then x' * (1 / plate_scale) + (w - w_ref) * (1 /
     * dispersion), then the reference position; the bin is 0.5 a + 0.5 b
     * of its two edges. This gives ctis's coordinates bit for bit. */
    double inverse_dispersion = 1.0 / params->dispersion;
    double radians = params->angle[channel] * (pi / 180.0);
    map->cos_a = cos(radians);
    map->sin_a = sin(radians);
    map->inverse_plate_scale = 1.0 / params->plate_scale;
    map->shift_low = (low - params->wavelength_ref) * inverse_dispersion;
    map->shift_high = (high - params->wavelength_ref) * inverse_dispersion;
    map->position_x = params->position_ref[0];
    map->position_y = params->position_ref[1];
}

void spart_instrument_map_vertices(const spart_instrument_params *params, int64_t channel,
                                   double low, double high, double *x, double *y)
{
    if (params == NULL || x == NULL || y == NULL || params->scene_x == NULL ||
        params->scene_y == NULL || channel < 0 || channel >= params->num_channel) {
        return;
    }
    spart_plane_map map;
    spart_instrument_plane_map(params, channel, low, high, &map);
    int64_t nx = params->num_scene_x + 1;
    int64_t ny = params->num_scene_y + 1;
    for (int64_t i = 0; i < nx; i++) {
        for (int64_t j = 0; j < ny; j++) {
            spart_plane_map_vertex(&map, params->scene_x[i], params->scene_y[j], &x[i * ny + j],
                                   &y[i * ny + j]);
        }
    }
}

spart_status spart_instrument_planes_check(spart_context *context,
                                           const spart_instrument_params *params, int64_t num_bins,
                                           const double *bin_low, const double *bin_high,
                                           const double *photons_per_radiance,
                                           spart_instrument_planes **planes)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (planes != NULL) {
        *planes = NULL;
    }
    if (params == NULL || bin_low == NULL || bin_high == NULL || photons_per_radiance == NULL ||
        planes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "instrument_planes_create: params, bin_low, bin_high, "
                          "photons_per_radiance and planes must not be NULL");
    }
    if (params->num_channel < 1 || num_bins < 1 || params->num_scene_x < 1 ||
        params->num_scene_y < 1 || params->num_sensor_x < 1 || params->num_sensor_y < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "instrument_planes_create: num_channel = %lld, num_bins = %lld, scene "
                          "%lld x %lld and sensor %lld x %lld must all be at least 1",
                          (long long)params->num_channel, (long long)num_bins,
                          (long long)params->num_scene_x, (long long)params->num_scene_y,
                          (long long)params->num_sensor_x, (long long)params->num_sensor_y);
    }
    if (params->angle == NULL || params->scene_x == NULL || params->scene_y == NULL ||
        params->sensor_x == NULL || params->sensor_y == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "instrument_planes_create: params' angle, scene and sensor vertices "
                          "must not be NULL");
    }
    if (!(params->plate_scale > 0.0) || params->dispersion == 0.0 ||
        !(params->quantum_yield > 0.0)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "instrument_planes_create: plate_scale = %g and quantum_yield = %g "
                          "must be positive and dispersion = %g not 0 (params as "
                          "spart_instrument_create accepts them)",
                          params->plate_scale, params->quantum_yield, params->dispersion);
    }
    return SPART_OK;
}

#if !defined(SPART_HAVE_CUDA)

static spart_status no_device(spart_context *context, const char *what)
{
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "%s: spart was built without CUDA, so the instrument's planes cannot be "
                      "built on a device",
                      what);
}

spart_status spart_instrument_planes_create(spart_context *context,
                                            const spart_instrument_params *params, int64_t num_bins,
                                            const double *bin_low, const double *bin_high,
                                            const double *photons_per_radiance,
                                            spart_instrument_planes **planes)
{
    spart_status status = spart_instrument_planes_check(context, params, num_bins, bin_low,
                                                        bin_high, photons_per_radiance, planes);
    return status != SPART_OK ? status : no_device(context, "instrument_planes_create");
}

spart_status spart_instrument_planes_count(spart_context *context, spart_instrument_planes *planes,
                                           int64_t first_plane, int64_t num_planes,
                                           int64_t *entries)
{
    (void)planes, (void)first_plane, (void)num_planes, (void)entries;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    return no_device(context, "instrument_planes_count");
}

spart_status spart_instrument_planes_block(spart_context *context, spart_instrument_planes *planes,
                                           int backward, int64_t first_plane, int64_t num_planes,
                                           spart_weights_block *block)
{
    (void)planes, (void)backward, (void)first_plane, (void)num_planes, (void)block;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    return no_device(context, "instrument_planes_block");
}

void spart_instrument_planes_free(spart_instrument_planes *planes)
{
    (void)planes;
}

#endif
