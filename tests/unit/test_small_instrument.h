/*
 * tests/unit/test_small_instrument.h: the instrument the device MART tests
 * (test_cuda_mart.c, test_cuda_psf.c) solve for: the ctis tutorial's
 * geometry at a smaller size, with its scene. Include after <cmocka.h>.
 */
#ifndef SPART_TEST_SMALL_INSTRUMENT_H
#define SPART_TEST_SMALL_INSTRUMENT_H

#include <stdint.h>
#include <stdlib.h>

#include "spart.h"

/* The ctis tutorial's geometry at a smaller size: 4 channels, 20 bins,
 * a 32x32 scene over +-10", a 64x48 sensor, Gaussian blobs plus 1 %
 * (scene, which the caller frees; scene_size values). */
typedef struct small_instrument {
    double angle[4], velocity[21], wavelength[21], scene_x[33], scene_y[33];
    double sensor_x[65], sensor_y[49];
    spart_instrument_params params;
    double *scene;
    int64_t scene_size;
} small_instrument;

static inline void make_small_instrument(spart_context *context, small_instrument *p)
{
    for (int c = 0; c < 4; c++) {
        p->angle[c] = 5.64 + 90.0 * c;
    }
    for (int l = 0; l < 21; l++) {
        p->velocity[l] = -500.0 + 50.0 * l;
    }
    for (int i = 0; i < 33; i++) {
        p->scene_x[i] = -10.0 + 20.0 * i / 32.0;
        p->scene_y[i] = p->scene_x[i];
    }
    for (int i = 0; i < 65; i++) {
        p->sensor_x[i] = i;
    }
    for (int i = 0; i < 49; i++) {
        p->sensor_y[i] = i;
    }
    p->scene_size = 20 * 32 * 32;
    p->scene = malloc((size_t)p->scene_size * sizeof(double));
    assert_int_equal(spart_scene_gaussians(context, 171.0, 20, p->velocity, 32, p->scene_x, 32,
                                           p->scene_y, NULL, p->wavelength, p->scene),
                     SPART_OK);
    double peak = 0.0;
    for (int64_t v = 0; v < p->scene_size; v++) {
        peak = p->scene[v] > peak ? p->scene[v] : peak;
    }
    for (int64_t v = 0; v < p->scene_size; v++) {
        p->scene[v] += peak / 100.0;
    }
    spart_instrument_params *q = &p->params;
    spart_instrument_params_init(q);
    q->num_channel = 4;
    q->angle = p->angle;
    q->dispersion = 171.0 * 10.0 / 299792.458;
    q->plate_scale = 0.8;
    q->wavelength_ref = 171.0;
    q->position_ref[0] = 32.0;
    q->position_ref[1] = 24.0;
    q->area_effective = 1.0;
    q->exposure_time = 20.0;
    q->read_noise = 1.5;
    q->num_wavelength = 20;
    q->wavelength = p->wavelength;
    q->num_scene_x = 32;
    q->scene_x = p->scene_x;
    q->num_scene_y = 32;
    q->scene_y = p->scene_y;
    q->num_sensor_x = 64;
    q->sensor_x = p->sensor_x;
    q->num_sensor_y = 48;
    q->sensor_y = p->sensor_y;
    q->solid_angle_steradian = 1;
}

#endif /* SPART_TEST_SMALL_INSTRUMENT_H */
