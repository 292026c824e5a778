/*
 * tests/bench/bench_esis_params.h: the instrument of examples/esis.yaml
 * (issue 26), or a slice of it, as spart_instrument_params, for the ESIS
 * benchmarks (bench_esis_run.c, bench_instrument_esis.c,
 * bench_instrument_device.c). A slice keeps the cell size, plate scale,
 * dispersion and the 2048 x 2080 sensor and takes fewer lines, bins or
 * cells; every (channel, bin, cell) triple then lands on the same few
 * pixels as in the whole problem, which is what the benchmarks extrapolate
 * by.
 *
 * Everything is static, as bench_util.h.
 */
#ifndef SPART_BENCH_ESIS_PARAMS_H
#define SPART_BENCH_ESIS_PARAMS_H

#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "spart.h"

enum {
    ESIS_CHANNELS = 4,
    ESIS_LINES = 7,
    ESIS_BINS = 24,
    ESIS_CELLS = 1139,
    ESIS_SENSOR_X = 2048,
    ESIS_SENSOR_Y = 2080
};

/* examples/esis.yaml's lines (rest wavelength A, intensity scale), in an
 * order whose first L stay within the sensor for every L. */
static const double ESIS_REST[ESIS_LINES] = {609.79, 604.15, 599.59, 624.94,
                                             629.73, 584.33, 580.91};
static const double ESIS_SCALE[ESIS_LINES] = {0.5, 0.15, 0.1, 0.25, 1.0, 0.5, 0.15};

/* The arrays an instrument's params point into (esis_arrays_free frees them). */
typedef struct esis_arrays {
    int cells, lines, bins;
    double angle[ESIS_CHANNELS];
    double *velocity; /* bins + 1 edges, km/s (every line the same) */
    double *edges;    /* lines x (bins + 1), A */
    double *scene;    /* cells + 1 vertices, arcsec (x and y) */
    double *sensor_x, *sensor_y;
    spart_instrument_line line[ESIS_LINES];
} esis_arrays;

static void *esis_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* Fill `p` for `lines` (1-7) x `bins` x cells^2 x 4 channels on the
 * ESIS sensor, float32 operators; memory_budget_bytes > 0 builds through
 * params.memory_budget (streamed). */
static void esis_params(spart_context *context, int cells, int lines, int bins,
                        double memory_budget_bytes, esis_arrays *a, spart_instrument_params *p)
{
    a->cells = cells;
    a->lines = lines;
    a->bins = bins;
    a->edges = esis_alloc((size_t)(lines * (bins + 1)) * sizeof(double));
    a->scene = esis_alloc((size_t)(cells + 1) * sizeof(double));
    a->sensor_x = esis_alloc((size_t)(ESIS_SENSOR_X + 1) * sizeof(double));
    a->sensor_y = esis_alloc((size_t)(ESIS_SENSOR_Y + 1) * sizeof(double));
    a->velocity = esis_alloc((size_t)(bins + 1) * sizeof(double));
    for (int c = 0; c < ESIS_CHANNELS; c++) {
        a->angle[c] = 90.0 * c;
    }
    for (int v = 0; v <= bins; v++) {
        a->velocity[v] = -450.0 + 900.0 * v / bins;
    }
    for (int k = 0; k < lines; k++) {
        double *edges = a->edges + k * (bins + 1);
        CHECK_SPART(context, spart_wavelength_from_velocity(context, ESIS_REST[k], bins + 1,
                                                            a->velocity, edges));
        spart_instrument_line line = {bins, edges, ESIS_SCALE[k]};
        a->line[k] = line;
    }
    for (int i = 0; i <= cells; i++) {
        a->scene[i] = 0.75 * (i - cells / 2.0);
    }
    for (int64_t i = 0; i <= ESIS_SENSOR_X; i++) {
        a->sensor_x[i] = (double)i;
    }
    for (int64_t i = 0; i <= ESIS_SENSOR_Y; i++) {
        a->sensor_y[i] = (double)i;
    }
    spart_instrument_params_init(p);
    p->num_channel = ESIS_CHANNELS;
    p->angle = a->angle;
    p->dispersion = 0.074;
    p->plate_scale = 0.75;
    p->wavelength_ref = 607.0;
    /* as examples/esis.yaml: the cells' edges on pixel edges across the
     * dispersion (an odd count of cells centred on 0 needs half a pixel) */
    p->position_ref[0] = ESIS_SENSOR_X / 2.0;
    p->position_ref[1] = ESIS_SENSOR_Y / 2.0 + (cells % 2 == 1 ? 0.5 : 0.0);
    p->area_effective = 1.0;
    p->exposure_time = 10.0;
    p->quantum_yield = 5.4;
    p->read_noise = 4.0;
    p->num_scene_x = cells;
    p->scene_x = a->scene;
    p->num_scene_y = cells;
    p->scene_y = a->scene;
    p->num_sensor_x = ESIS_SENSOR_X;
    p->sensor_x = a->sensor_x;
    p->num_sensor_y = ESIS_SENSOR_Y;
    p->sensor_y = a->sensor_y;
    p->solid_angle_steradian = 1;
    p->value_type = SPART_FLOAT32;
    p->num_line = lines;
    p->lines = a->line;
    p->memory_budget = (size_t)memory_budget_bytes;
}

static void esis_arrays_free(esis_arrays *a)
{
    free(a->velocity);
    free(a->edges);
    free(a->scene);
    free(a->sensor_x);
    free(a->sensor_y);
}

/* How many times the whole problem is the slice: the ratio of (channel,
 * bin, cell) triples (the channels are the same). */
static double esis_full_factor(const esis_arrays *a)
{
    return (double)ESIS_LINES * ESIS_BINS * (double)ESIS_CELLS * ESIS_CELLS /
           ((double)a->lines * a->bins * (double)a->cells * a->cells);
}

#endif /* SPART_BENCH_ESIS_PARAMS_H */
