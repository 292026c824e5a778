/*
 * solvers/instrument_geometry.c: the ideal instrument's geometry and the
 * options of its weights and operators (solvers/instrument_build.h).
 * Uses the public API only.
 */
#include <math.h>

#include "instrument_build.h"

spart_shape spart_instrument_shape4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    spart_shape shape = {4, {a, b, c, d}};
    return shape;
}

void spart_instrument_map_plane(const spart_instrument_params *p, const spart_spectral_bins *bins,
                                int64_t c, int64_t l, double *out_x, double *out_y)
{
    /* the library's mapping (ctis's order of operations), whose arithmetic
     * the device build shares */
    spart_instrument_map_vertices(p, c, bins->low[l], bins->high[l], out_x, out_y);
}

void spart_instrument_map_scene(const spart_instrument_params *p, const spart_spectral_bins *bins,
                                double *mapped_x, double *mapped_y)
{
    /* planes on the threads: each value is its own, so the bits do not
     * depend on the thread count */
    int64_t plane = (p->num_scene_x + 1) * (p->num_scene_y + 1);
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int64_t c = 0; c < p->num_channel; c++) {
        for (int64_t l = 0; l < bins->count; l++) {
            int64_t at = (c * bins->count + l) * plane;
            spart_instrument_map_plane(p, bins, c, l, mapped_x + at, mapped_y + at);
        }
    }
}

void spart_instrument_sensor_vertices(const spart_instrument_params *p, double *x, double *y)
{
    int64_t ny = p->num_sensor_y + 1;
    for (int64_t i = 0; i <= p->num_sensor_x; i++) {
        for (int64_t j = 0; j < ny; j++) {
            x[i * ny + j] = p->sensor_x[i];
            y[i * ny + j] = p->sensor_y[j];
        }
    }
}

void spart_instrument_weights_options(spart_weights_options *options)
{
    spart_weights_options_init(options);
    options->method = SPART_METHOD_CONSERVATIVE;
    options->num_axis_input = 2;
    options->axis_input[0] = -2;
    options->axis_input[1] = -1;
    options->num_axis_output = 2;
    options->axis_output[0] = -2;
    options->axis_output[1] = -1;
}

void spart_instrument_operator_options(const spart_instrument_params *p, int64_t num_wavelength,
                                       int backward, spart_regridder_options *options)
{
    int64_t c = p->num_channel, l = num_wavelength;
    spart_regridder_options_init(options);
    options->value_type = p->value_type;
    options->has_shape_input = 1;
    options->has_shape_output = 1;
    options->num_axis_input = 2;
    options->axis_input[0] = -2;
    options->axis_input[1] = -1;
    options->num_axis_output = 2;
    options->axis_output[0] = -2;
    options->axis_output[1] = -1;
    spart_shape scene = spart_instrument_shape4(1, l, p->num_scene_x, p->num_scene_y);
    spart_shape images = spart_instrument_shape4(c, 1, p->num_sensor_x, p->num_sensor_y);
    spart_shape scenes = spart_instrument_shape4(c, l, p->num_scene_x, p->num_scene_y);
    options->shape_input = backward ? images : scene;
    options->shape_output = backward ? scenes : images;
}
