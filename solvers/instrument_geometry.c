/*
 * solvers/instrument_geometry.c: the ideal instrument's geometry and the
 * options of its weights and operators (solvers/instrument_build.h).
 * Uses the public API only.
 */
#include <math.h>

#include "instrument_build.h"

static const double pi = 3.14159265358979323846;

spart_shape spart_instrument_shape4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    spart_shape shape = {4, {a, b, c, d}};
    return shape;
}

void spart_instrument_map_plane(const spart_instrument_params *p, const spart_spectral_bins *bins,
                                int64_t c, int64_t l, double *out_x, double *out_y)
{
    /* ctis's order of operations (named_arrays' rotation and dispersion
     * matrices): rotate, then x' * (1 / plate_scale) + (w - w_ref) * (1 /
     * dispersion), then the reference position; the bin is 0.5 a + 0.5 b
     * of its two edges. This gives ctis's coordinates bit for bit. */
    int64_t nx = p->num_scene_x + 1;
    int64_t ny = p->num_scene_y + 1;
    double inverse_plate_scale = 1.0 / p->plate_scale;
    double inverse_dispersion = 1.0 / p->dispersion;
    double radians = p->angle[c] * (pi / 180.0);
    double cos_a = cos(radians);
    double sin_a = sin(radians);
    double shift_low = (bins->low[l] - p->wavelength_ref) * inverse_dispersion;
    double shift_high = (bins->high[l] - p->wavelength_ref) * inverse_dispersion;
    for (int64_t i = 0; i < nx; i++) {
        for (int64_t j = 0; j < ny; j++) {
            double x = p->scene_x[i];
            double y = p->scene_y[j];
            double rotated_x = cos_a * x + (-sin_a) * y;
            double rotated_y = sin_a * x + cos_a * y;
            double sensor_x = rotated_x * inverse_plate_scale;
            double low = (sensor_x + shift_low) + p->position_ref[0];
            double high = (sensor_x + shift_high) + p->position_ref[0];
            out_x[i * ny + j] = 0.5 * low + 0.5 * high;
            out_y[i * ny + j] = rotated_y * inverse_plate_scale + p->position_ref[1];
        }
    }
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
