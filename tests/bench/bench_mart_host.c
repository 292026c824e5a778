/*
 * tests/bench/bench_mart_host.c: where a host MART iteration's time goes.
 * On the ideal instrument of the ctis tutorial (4 channels, 20 bins,
 * 128x64 sensor, 64x64 scene) and the same with a 256x256 scene, it times
 * a whole MART iteration (a fixed-count run) and each of its steps alone:
 * the forward product, the noise widths, the merits, the backward product
 * and the update apart, and the two in one pass as spart_mart_solve runs
 * them (spart_mart_update_from_images), each against its floor (the bytes
 * the step must move at least over the copy bandwidth the same program
 * measures, STREAM-like `b[k] = a[k]`, read and write counted). The sum of
 * the steps a run makes (forward, widths, merits, fused update) is beside
 * the measured iteration.
 *
 * First it prints the update's arithmetic alone, ns per voxel on one thread
 * in cache (gamma 1/2, the square roots; 0.3, the general power).
 *
 * It also prints a 64-bit digest of each run's merit history and solution:
 * a change that is meant to keep the bits must keep the digests.
 *
 *     bench_mart_host [--threads N] [--repeat N] [--scene 64|256]
 *
 * Label `bench` (built with -DSPART_BUILD_BENCHMARKS=ON); it never asserts
 * a speed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "spart.h"

enum {
    CHANNELS = BENCH_MART_CHANNELS,
    BINS = BENCH_MART_BINS,
    SENSOR_X = BENCH_MART_SENSOR_X,
    SENSOR_Y = BENCH_MART_SENSOR_Y,
    ITERATIONS = 30
};

typedef struct step_times {
    double forward, widths, merits, backward, update; /* ms, best of the repeats */
    double fused;                                     /* backward product and update in one */
} step_times;

static int check(spart_context *context, spart_status status, const char *what)
{
    if (status != SPART_OK) {
        fprintf(stderr, "bench_mart_host: %s: %s\n", what, spart_context_error(context));
        return 0;
    }
    return 1;
}

/* FNV-1a over the bytes of `n` doubles, continuing from `hash`. */
static uint64_t digest(uint64_t hash, const double *values, int64_t n)
{
    const unsigned char *bytes = (const unsigned char *)values;
    for (size_t k = 0; k < (size_t)n * sizeof(double); k++) {
        hash = (hash ^ bytes[k]) * 0x100000001b3ULL;
    }
    return hash;
}

/* Bytes of row structure a product reads per row: 8 (row_ptr), or 1 where
 * the library reads a short-row index instead (g <= 2 and no row longer
 * than 255 entries; src/operator/regridder_internal.h). */
static double row_bytes(const spart_regridder *r)
{
    const int64_t *row_ptr = NULL;
    if (spart_regridder_group_size(r) > 2 ||
        spart_regridder_csr(r, &row_ptr, NULL, NULL, NULL) != SPART_OK) {
        return 8.0;
    }
    for (int64_t k = 0; k < spart_regridder_num_rows(r); k++) {
        if (row_ptr[k + 1] - row_ptr[k] > 255) {
            return 8.0;
        }
    }
    return 1.0;
}

/* Bytes one product must move: values, columns, row structure, x, y. */
static double product_bytes(const spart_regridder *r)
{
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    if (spart_regridder_csr(r, NULL, &columns32, &columns64, NULL) != SPART_OK) {
        return 0.0;
    }
    double value = spart_regridder_value_type(r) == SPART_FLOAT32 ? 4.0 : 8.0;
    double column = columns32 != NULL ? 4.0 : 8.0;
    double entries = (double)spart_regridder_num_entries(r);
    double rows = (double)spart_regridder_num_rows(r);
    double columns = (double)spart_regridder_num_columns(r);
    return entries * (value + column) + rows * row_bytes(r) + columns * 8.0 + rows * 8.0;
}

static double elapsed_ms(double since)
{
    return (bench_seconds() - since) * 1e3;
}

/* Each step of an iteration alone, on the arrays of a real run's state
 * (the flat guess's prediction), best of `repeat`. */
static int time_steps(spart_context *context, const spart_mart_regridder_pair *pair,
                      const double *observed, int64_t scene_size, int repeat, step_times *t)
{
    int64_t image_size = (int64_t)SENSOR_X * SENSOR_Y;
    int64_t images = CHANNELS * image_size, scenes = CHANNELS * scene_size;
    double *scene = malloc((size_t)scene_size * sizeof(double));
    double *predicted = malloc((size_t)images * sizeof(double));
    double *widths = malloc((size_t)images * sizeof(double));
    double *observed_back = malloc((size_t)scenes * sizeof(double));
    double *predicted_back = malloc((size_t)scenes * sizeof(double));
    double chi2[CHANNELS], r[CHANNELS];
    int ok = scene != NULL && predicted != NULL && widths != NULL && observed_back != NULL &&
             predicted_back != NULL;
    spart_array back_in = {observed, spart_regridder_shape_input(pair->backward)};
    ok =
        ok && check(context,
                    spart_regridder_apply(context, pair->backward, &back_in, observed_back, scenes),
                    "backward");
    for (int64_t v = 0; ok && v < scene_size; v++) {
        scene[v] = 1e-9 * (1.0 + (double)(v % 13) / 13.0);
    }
    spart_array forward_in = {scene, spart_regridder_shape_input(pair->forward)};
    spart_array predicted_in = {predicted, spart_regridder_shape_input(pair->backward)};
    step_times best = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    for (int k = 0; ok && k < repeat; k++) {
        double start = bench_seconds();
        ok = check(context,
                   spart_regridder_apply(context, pair->forward, &forward_in, predicted, images),
                   "forward");
        best.forward = bench_smaller(best.forward, elapsed_ms(start));
        start = bench_seconds();
        ok = ok && check(context,
                         spart_mart_noise_widths(context, predicted, widths, images, pair->gain,
                                                 pair->read_noise, 0),
                         "widths");
        best.widths = bench_smaller(best.widths, elapsed_ms(start));
        start = bench_seconds();
        ok = ok && check(context,
                         spart_mart_merits(context, observed, predicted, widths, CHANNELS,
                                           image_size, chi2, r, NULL, 0, 0),
                         "merits");
        best.merits = bench_smaller(best.merits, elapsed_ms(start));
        start = bench_seconds();
        ok = ok && check(context,
                         spart_regridder_apply(context, pair->backward, &predicted_in,
                                               predicted_back, scenes),
                         "backward");
        best.backward = bench_smaller(best.backward, elapsed_ms(start));
        start = bench_seconds();
        /* gamma 0.5 as the run; the scene drifts a little over the repeats */
        ok = ok && check(context,
                         spart_mart_update(context, scene, observed_back, predicted_back, CHANNELS,
                                           scene_size, 0.5, 0),
                         "update");
        best.update = bench_smaller(best.update, elapsed_ms(start));
        start = bench_seconds();
        ok = ok &&
             check(context,
                   spart_mart_update_from_images(context, pair->backward, predicted, observed_back,
                                                 CHANNELS, 0.5, scene, predicted_back),
                   "fused update");
        best.fused = bench_smaller(best.fused, elapsed_ms(start));
    }
    *t = best;
    free(scene);
    free(predicted);
    free(widths);
    free(observed_back);
    free(predicted_back);
    return ok;
}

/* ns per voxel of the update's arithmetic alone: one thread, 8192 voxels
 * of 4 channels (0.5 MB, in the core's cache), ratios in [1/3, 3], best of
 * 200 calls; the update of a run is this plus its memory traffic. */
static double update_arithmetic_ns(double gamma)
{
    enum { VOXELS = 8192, CALLS = 200 };
    static double observed_back[CHANNELS * VOXELS], predicted_back[CHANNELS * VOXELS];
    static double scene[VOXELS];
    uint64_t state = 1;
    for (int64_t k = 0; k < CHANNELS * VOXELS; k++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        observed_back[k] = 0.5 + (double)(state >> 11) * 0x1p-53;
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        predicted_back[k] = 0.5 + (double)(state >> 11) * 0x1p-53;
    }
    for (int64_t v = 0; v < VOXELS; v++) {
        scene[v] = 1.0;
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return -1.0;
    }
    double best = INFINITY;
    int ok = check(context, spart_context_set_threads(context, 1), "threads");
    for (int k = 0; ok && k < CALLS; k++) {
        double start = bench_seconds();
        ok = check(context,
                   spart_mart_update(context, scene, observed_back, predicted_back, CHANNELS,
                                     VOXELS, gamma, 0),
                   "update");
        best = bench_smaller(best, elapsed_ms(start));
    }
    spart_context_free(context);
    return ok ? best * 1e6 / VOXELS : -1.0;
}

/* ms per iteration of fixed-count runs (best of `repeat`), and the digest
 * of the last run's merit history and solution. */
static double time_mart(spart_context *context, const spart_mart_operators *operators,
                        const double *observed, int repeat, uint64_t *hash)
{
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = ITERATIONS;
    double best = INFINITY;
    for (int k = 0; k < repeat; k++) {
        spart_mart_result *result = NULL;
        double start = bench_seconds();
        if (!check(context, spart_mart_solve(context, operators, observed, &options, &result),
                   "mart")) {
            return -1.0;
        }
        best = bench_smaller(best, elapsed_ms(start) / ITERATIONS);
        uint64_t h = 0xcbf29ce484222325ULL;
        h = digest(h, spart_mart_result_mean_chi_squared(result), ITERATIONS * CHANNELS);
        h = digest(h, spart_mart_result_correlation(result), ITERATIONS * CHANNELS);
        h = digest(h, spart_mart_result_solution(result), operators->scene_size);
        *hash = h;
        spart_mart_result_free(result);
    }
    return best;
}

static int run_problem(spart_context *context, int n, int repeat, double bandwidth)
{
    double angle[CHANNELS], velocity[BINS + 1], wavelength[BINS + 1];
    double sensor_x[SENSOR_X + 1], sensor_y[SENSOR_Y + 1];
    double *x = malloc((size_t)(n + 1) * sizeof(double));
    double *y = malloc((size_t)(n + 1) * sizeof(double));
    int64_t scene_size = (int64_t)BINS * n * n;
    double *truth = malloc((size_t)scene_size * sizeof(double));
    double *observed = malloc((size_t)CHANNELS * SENSOR_X * SENSOR_Y * sizeof(double));
    spart_instrument_params params;
    bench_mart_params(n, angle, velocity, wavelength, x, y, sensor_x, sensor_y, &params);
    spart_instrument *instrument = NULL;
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    int ok = check(context,
                   spart_scene_gaussians(context, 171.0, BINS, velocity, n, x, n, y, NULL,
                                         wavelength, truth),
                   "scene") &&
             check(context, spart_instrument_create(context, &params, &instrument), "instrument") &&
             check(context, spart_instrument_observe(context, instrument, truth, 1, observed, NULL),
                   "observe") &&
             check(context, spart_instrument_mart_operators(context, instrument, &pair, &operators),
                   "operators");
    step_times t;
    uint64_t hash = 0;
    double iteration = -1.0;
    ok = ok && time_steps(context, &pair, observed, scene_size, repeat, &t);
    if (ok) {
        iteration = time_mart(context, &operators, observed, repeat, &hash);
        ok = iteration > 0.0;
    }
    if (ok) {
        double images = (double)CHANNELS * SENSOR_X * SENSOR_Y * 8.0;
        double scenes = (double)CHANNELS * (double)scene_size * 8.0;
        double scene = (double)scene_size * 8.0;
        /* the least each step moves: widths read the prediction and write
         * it and the widths; merits read three images; the update reads
         * both backprojections and reads and writes the scene; fused, it
         * reads the backward matrix, its x and the observed
         * backprojection, and reads and writes the scene */
        double backward_y = (double)spart_regridder_num_rows(pair.backward) * 8.0;
        double bytes[6] = {product_bytes(pair.forward),
                           3.0 * images,
                           3.0 * images,
                           product_bytes(pair.backward),
                           2.0 * scenes + 2.0 * scene,
                           product_bytes(pair.backward) - backward_y + scenes + 2.0 * scene};
        double ms[6] = {t.forward, t.widths, t.merits, t.backward, t.update, t.fused};
        const char *names[6] = {"forward product",  "widths", "merits",
                                "backward product", "update", "fused update"};
        printf("\n%dx%d scene: %lld forward entries, %lld backward entries (%lld rows)\n", n, n,
               (long long)spart_regridder_num_entries(pair.forward),
               (long long)spart_regridder_num_entries(pair.backward),
               (long long)spart_regridder_num_rows(pair.backward));
        printf("%-22s %10s %10s %10s %8s\n", "step", "ms", "MB", "floor ms", "% floor");
        for (int k = 0; k < 6; k++) {
            double floor_ms = bytes[k] / bandwidth * 1e3;
            printf("%-22s %10.3f %10.2f %10.3f %7.0f%%\n", names[k], ms[k], bytes[k] / 1e6,
                   floor_ms, 100.0 * floor_ms / ms[k]);
        }
        /* a run's iteration: forward, widths, merits and the fused update */
        double sum_ms = ms[0] + ms[1] + ms[2] + ms[5];
        double sum_bytes = bytes[0] + bytes[1] + bytes[2] + bytes[5];
        double floor_ms = sum_bytes / bandwidth * 1e3;
        printf("%-22s %10.3f %10.2f %10.3f %7.0f%%\n", "sum of a run's steps", sum_ms,
               sum_bytes / 1e6, floor_ms, 100.0 * floor_ms / sum_ms);
        printf("%-22s %10.3f %10s %10.3f %7.0f%%\n", "MART iteration", iteration, "", floor_ms,
               100.0 * floor_ms / iteration);
        printf("digest of %d iterations (merits, r, solution): %016llx\n", ITERATIONS,
               (unsigned long long)hash);
    }
    spart_instrument_free(instrument);
    free(x);
    free(y);
    free(truth);
    free(observed);
    return ok;
}

int main(int argc, char **argv)
{
    int threads = 0, repeat = 5, scene = 0;
    for (int k = 1; k + 1 < argc; k += 2) {
        if (strcmp(argv[k], "--threads") == 0) {
            threads = atoi(argv[k + 1]);
        } else if (strcmp(argv[k], "--repeat") == 0) {
            repeat = atoi(argv[k + 1]);
        } else if (strcmp(argv[k], "--scene") == 0) {
            scene = atoi(argv[k + 1]);
        }
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    if (threads > 0 && !check(context, spart_context_set_threads(context, threads), "threads")) {
        spart_context_free(context);
        return 1;
    }
    threads = spart_context_threads(context);
    double bandwidth = bench_copy_bandwidth(threads);
    printf("host MART steps, ideal instrument (4 channels, 20 bins, 128x64 sensor); %d threads; "
           "best of %d; copy bandwidth %.1f GB/s\n",
           threads, repeat < 1 ? 1 : repeat, bandwidth / 1e9);
    printf("update arithmetic (1 thread, in cache): %.2f ns/voxel with gamma 1/2, %.2f with "
           "gamma 0.3\n",
           update_arithmetic_ns(0.5), update_arithmetic_ns(0.3));
    int sizes[2] = {64, 256};
    int ok = bandwidth > 0.0;
    for (int k = 0; ok && k < 2; k++) {
        if (scene == 0 || scene == sizes[k]) {
            ok = run_problem(context, sizes[k], repeat < 1 ? 1 : repeat, bandwidth);
        }
    }
    spart_context_free(context);
    return ok ? 0 : 1;
}
