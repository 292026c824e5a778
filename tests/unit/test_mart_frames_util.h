/*
 * tests/unit/test_mart_frames_util.h: what the tests of many frames per
 * solve (test_mart_frames.c on the host, test_cuda_mart_frames.c on a
 * device) share: a tiny instrument (the ctis tutorial's geometry, 16 x 16
 * scene cells, 10 bins, a 40 x 32 sensor), frames of a moving, brightening
 * scene observed with their own noise, a solve's result copied out, the
 * comparison of two results bit for bit and of a frame with its lone
 * solve, and the problem with its host operators and frames in one struct.
 * Include after <cmocka.h>.
 */
#ifndef SPART_TEST_MART_FRAMES_UTIL_H
#define SPART_TEST_MART_FRAMES_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/instrument.h"
#include "spart/mart.h"
#include "spart/scene.h"

enum { tiny_bins = 10, tiny_cells = 16, tiny_sensor_x = 40, tiny_sensor_y = 32 };

typedef struct tiny_problem {
    double angle[4], velocity[tiny_bins + 1], wavelength[tiny_bins + 1];
    double scene_x[tiny_cells + 1], scene_y[tiny_cells + 1];
    double sensor_x[tiny_sensor_x + 1], sensor_y[tiny_sensor_y + 1];
    spart_instrument_params params;
    spart_instrument *instrument;
    int64_t scene_size, image_size; /* image_size: one channel's */
    double *scene;                  /* the truth of frame 0 */
} tiny_problem;

static inline void make_tiny_problem(spart_context *context, tiny_problem *p)
{
    memset(p, 0, sizeof *p);
    for (int c = 0; c < 4; c++) {
        p->angle[c] = 5.64 + 90.0 * c;
    }
    for (int l = 0; l <= tiny_bins; l++) {
        p->velocity[l] = -250.0 + 50.0 * l;
    }
    for (int i = 0; i <= tiny_cells; i++) {
        p->scene_x[i] = -8.0 + 16.0 * i / tiny_cells;
        p->scene_y[i] = p->scene_x[i];
    }
    for (int i = 0; i <= tiny_sensor_x; i++) {
        p->sensor_x[i] = i;
    }
    for (int i = 0; i <= tiny_sensor_y; i++) {
        p->sensor_y[i] = i;
    }
    p->scene_size = (int64_t)tiny_bins * tiny_cells * tiny_cells;
    p->scene = malloc((size_t)p->scene_size * sizeof(double));
    assert_int_equal(spart_scene_gaussians(context, 171.0, tiny_bins, p->velocity, tiny_cells,
                                           p->scene_x, tiny_cells, p->scene_y, NULL, p->wavelength,
                                           p->scene),
                     SPART_OK);
    spart_instrument_params *q = &p->params;
    spart_instrument_params_init(q);
    q->num_channel = 4;
    q->angle = p->angle;
    q->dispersion = 171.0 * 20.0 / 299792.458;
    q->plate_scale = 0.8;
    q->wavelength_ref = 171.0;
    q->position_ref[0] = tiny_sensor_x / 2.0;
    q->position_ref[1] = tiny_sensor_y / 2.0;
    q->area_effective = 1.0;
    q->exposure_time = 20.0;
    q->read_noise = 1.5;
    q->num_wavelength = tiny_bins;
    q->wavelength = p->wavelength;
    q->num_scene_x = tiny_cells;
    q->scene_x = p->scene_x;
    q->num_scene_y = tiny_cells;
    q->scene_y = p->scene_y;
    q->num_sensor_x = tiny_sensor_x;
    q->sensor_x = p->sensor_x;
    q->num_sensor_y = tiny_sensor_y;
    q->sensor_y = p->sensor_y;
    q->solid_angle_steradian = 1;
    assert_int_equal(spart_instrument_create(context, q, &p->instrument), SPART_OK);
    p->image_size = spart_instrument_image_size(p->instrument);
}

static inline void free_tiny_problem(tiny_problem *p)
{
    spart_instrument_free(p->instrument);
    free(p->scene);
}

/* num_frames observations (num_frames x 4 x image_size): frame f sees the
 * scene rolled by f cells along x, its peak 1 + f / 4 times brighter over
 * a background of 1 % of the first peak, with its own noise (seed 100 + f),
 * so that the frames' runs differ and stop at different iterations. */
static inline double *tiny_frames(spart_context *context, const tiny_problem *p, int64_t num_frames)
{
    int64_t pixels = 4 * p->image_size;
    double *observed = malloc((size_t)(num_frames * pixels) * sizeof(double));
    double *scene = malloc((size_t)p->scene_size * sizeof(double));
    double peak = 0.0;
    for (int64_t v = 0; v < p->scene_size; v++) {
        peak = p->scene[v] > peak ? p->scene[v] : peak;
    }
    for (int64_t f = 0; f < num_frames; f++) {
        double scale = 1.0 + (double)f / 4.0;
        for (int64_t l = 0; l < tiny_bins; l++) {
            for (int64_t x = 0; x < tiny_cells; x++) {
                for (int64_t y = 0; y < tiny_cells; y++) {
                    int64_t from = (l * tiny_cells + (x + f) % tiny_cells) * tiny_cells + y;
                    scene[(l * tiny_cells + x) * tiny_cells + y] =
                        scale * p->scene[from] + peak / 100.0;
                }
            }
        }
        assert_int_equal(spart_instrument_observe(context, p->instrument, scene,
                                                  (uint64_t)(100 + f), observed + f * pixels, NULL),
                         SPART_OK);
    }
    free(scene);
    return observed;
}

/* A result copied out of its object. */
typedef struct frame_copy {
    int64_t iterations, solutions, channels, scene_size;
    int success;
    double gamma;
    char message[160];
    double *chi2, *correlation, *solution;
} frame_copy;

static inline void copy_result(const spart_mart_result *result, frame_copy *out)
{
    out->iterations = spart_mart_result_num_iterations(result);
    out->solutions = spart_mart_result_num_solutions(result);
    out->channels = spart_mart_result_num_channel(result);
    out->scene_size = spart_mart_result_scene_size(result);
    out->success = spart_mart_result_success(result);
    out->gamma = spart_mart_result_gamma(result);
    snprintf(out->message, sizeof out->message, "%s", spart_mart_result_message(result));
    size_t merits = (size_t)(out->iterations * out->channels) * sizeof(double);
    size_t states = (size_t)(out->solutions * out->scene_size) * sizeof(double);
    out->chi2 = malloc(merits > 0 ? merits : 1);
    out->correlation = malloc(merits > 0 ? merits : 1);
    out->solution = malloc(states);
    memcpy(out->chi2, spart_mart_result_mean_chi_squared(result), merits);
    memcpy(out->correlation, spart_mart_result_correlation(result), merits);
    for (int64_t k = 0; k < out->solutions; k++) {
        memcpy(out->solution + k * out->scene_size, spart_mart_result_solutions(result, k),
               (size_t)out->scene_size * sizeof(double));
    }
}

static inline void free_copy(frame_copy *copy)
{
    free(copy->chi2);
    free(copy->correlation);
    free(copy->solution);
}

/* Two results the same bit for bit (memcmp of every array). */
static inline void assert_same_bits(const frame_copy *a, const frame_copy *b, int64_t frame)
{
    if (a->iterations != b->iterations || a->success != b->success ||
        a->solutions != b->solutions || strcmp(a->message, b->message) != 0 ||
        memcmp(&a->gamma, &b->gamma, sizeof a->gamma) != 0) {
        fail_msg("frame %lld: %lld iterations (%d, %lld states, \"%s\") against %lld (%d, %lld "
                 "states, \"%s\")",
                 (long long)frame, (long long)a->iterations, a->success, (long long)a->solutions,
                 a->message, (long long)b->iterations, b->success, (long long)b->solutions,
                 b->message);
    }
    size_t merits = (size_t)(a->iterations * a->channels) * sizeof(double);
    size_t states = (size_t)(a->solutions * a->scene_size) * sizeof(double);
    if (memcmp(a->chi2, b->chi2, merits) != 0 || memcmp(a->correlation, b->correlation, merits) ||
        memcmp(a->solution, b->solution, states) != 0) {
        fail_msg("frame %lld: the merits or the states differ in their bits", (long long)frame);
    }
}

/* Two results the same bit for bit; returns the first's iterations. */
static inline int64_t assert_results_same_bits(const spart_mart_result *a,
                                               const spart_mart_result *b, int64_t frame)
{
    frame_copy x, y;
    copy_result(a, &x);
    copy_result(b, &y);
    assert_same_bits(&x, &y, frame);
    int64_t iterations = x.iterations;
    free_copy(&x);
    free_copy(&y);
    return iterations;
}

/* A result of an _into form (spart_mart_solve_into,
 * spart_mart_solve_frames_into) and the solution it wrote into the
 * caller's buffer (host memory), against the plain call's result: the same
 * bits; without kept states the _into result holds no solution. */
static inline void assert_into_same_bits(const spart_mart_result *plain,
                                         const spart_mart_result *into, const double *solution,
                                         int keep, int64_t frame)
{
    frame_copy x, y;
    copy_result(plain, &x);
    copy_result(into, &y);
    if (!keep) {
        assert_int_equal(y.solutions, 0);
        assert_null(spart_mart_result_solution(into));
        free(y.solution);
        y.solutions = 1;
        y.solution = malloc((size_t)y.scene_size * sizeof(double));
        memcpy(y.solution, solution, (size_t)y.scene_size * sizeof(double));
    } else if (memcmp(spart_mart_result_solution(plain), solution,
                      (size_t)x.scene_size * sizeof(double)) != 0) {
        fail_msg("frame %lld: the buffer's solution is not the result's last state",
                 (long long)frame);
    }
    assert_same_bits(&x, &y, frame);
    free_copy(&x);
    free_copy(&y);
}

/* Frame f of `observed` (frames of num_channel x image_size values, where
 * the operators work) solved alone by spart_mart_solve, with frame f's
 * guess of options->guess (frames of scene_size values) if any: the bits
 * of `result` (that frame's result of a frames solve). Returns the lone
 * run's iterations. */
static inline int64_t assert_frame_equals_alone(spart_context *context,
                                                const spart_mart_operators *operators,
                                                const double *observed, int64_t f,
                                                const spart_mart_options *options,
                                                const spart_mart_result *result)
{
    int64_t pixels = operators->num_channel * operators->image_size;
    spart_mart_options alone = *options;
    if (options->guess != NULL) {
        alone.guess = options->guess + f * operators->scene_size;
    }
    spart_mart_result *single = NULL;
    spart_status status =
        spart_mart_solve(context, operators, observed + f * pixels, &alone, &single);
    if (status != SPART_OK) {
        fail_msg("frame %lld alone: %s", (long long)f, spart_context_error(context));
    }
    int64_t iterations = assert_results_same_bits(single, result, f);
    spart_mart_result_free(single);
    return iterations;
}

/* The tiny problem, its operators on the host (the instrument's Regridder
 * pair, which `operators` points to: keep the struct where it is made) and
 * num_frames frames observed (tiny_frames). */
typedef struct tiny_case {
    tiny_problem p;
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    double *observed;
} tiny_case;

static inline void make_tiny_case(spart_context *context, int64_t num_frames, tiny_case *c)
{
    make_tiny_problem(context, &c->p);
    assert_int_equal(
        spart_instrument_mart_operators(context, c->p.instrument, &c->pair, &c->operators),
        SPART_OK);
    c->observed = tiny_frames(context, &c->p, num_frames);
}

static inline void free_tiny_case(tiny_case *c)
{
    free(c->observed);
    free_tiny_problem(&c->p);
}

#endif /* SPART_TEST_MART_FRAMES_UTIL_H */
