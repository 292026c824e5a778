/*
 * tests/unit/test_tiny_instrument.h: the tiny ideal instrument that
 * test_instrument.c checks and that tests/fortran/c_reference.c builds for
 * the Fortran tests' C references (test_fortran_mart.f90 describes the same
 * one in Fortran): 2 channels (0 and 90 degrees), 3 bins around 171 A, a
 * 6x6 scene over +-3" at 1"/pixel, a 16x16 sensor, all in memory owned by
 * the caller (params points into the struct).
 */
#ifndef SPART_TEST_TINY_INSTRUMENT_H
#define SPART_TEST_TINY_INSTRUMENT_H

#include "spart/instrument.h"

typedef struct tiny_instrument {
    double angle[2];
    double wavelength[4];
    double scene_x[7], scene_y[7];
    double sensor_x[17], sensor_y[17];
    spart_instrument_params params;
} tiny_instrument;

static inline void make_tiny_instrument(tiny_instrument *s)
{
    s->angle[0] = 0.0;
    s->angle[1] = 90.0;
    for (int l = 0; l < 4; l++) {
        s->wavelength[l] = 170.97 + 0.02 * l;
    }
    for (int i = 0; i < 7; i++) {
        s->scene_x[i] = -3.0 + i;
        s->scene_y[i] = -3.0 + i;
    }
    for (int i = 0; i < 17; i++) {
        s->sensor_x[i] = i;
        s->sensor_y[i] = i;
    }
    spart_instrument_params *p = &s->params;
    spart_instrument_params_init(p);
    p->num_channel = 2;
    p->angle = s->angle;
    p->dispersion = 0.01;
    p->plate_scale = 1.0;
    p->wavelength_ref = 171.0;
    p->position_ref[0] = 8.0;
    p->position_ref[1] = 8.0;
    p->area_effective = 2.0;
    p->exposure_time = 10.0;
    p->quantum_yield = 1.5;
    p->num_wavelength = 3;
    p->wavelength = s->wavelength;
    p->num_scene_x = 6;
    p->scene_x = s->scene_x;
    p->num_scene_y = 6;
    p->scene_y = s->scene_y;
    p->num_sensor_x = 16;
    p->sensor_x = s->sensor_x;
    p->num_sensor_y = 16;
    p->sensor_y = s->sensor_y;
}

#endif /* SPART_TEST_TINY_INSTRUMENT_H */
