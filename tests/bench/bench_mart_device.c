/*
 * tests/bench/bench_mart_device.c: milliseconds per MART iteration of the
 * ideal instrument on the host (all threads) and on the CUDA device, on the
 * ctis tutorial problem (4 channels, 20 bins, 64x64 scene, 128x64 sensor)
 * and the same instrument with a 256x256 scene, side by side in one run,
 * with the device iteration against its floor: the bytes its two products
 * must move (CSR arrays, x and y) and its elementwise steps must read and
 * write, over the device copy bandwidth measured in the same run.
 *
 * Prints a table; --json FILE writes the figures; --scene N runs the N x N
 * problem alone (64 or 256); --markdown FILE writes the first table in
 * Markdown under a header block (machine, versions, command line), for
 * docs/performance.md (scripts/performance_page.py). Label `bench` (built
 * with -DSPART_BUILD_BENCHMARKS=ON). Without a device, the device columns
 * say so and the program exits 77.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "spart.h"

typedef struct problem_figures {
    int scene;
    int64_t entries_forward, entries_backward;
    double build_ms, host_ms, device_ms, floor_ms;
    double device_marginal_ms; /* (t(60 iterations) - t(10)) / 50: setup left out */
    double fused_floor_ms;     /* floor without the backprojection of the prediction in memory */
    double forward_ms, backward_ms;         /* one device product each, synchronised */
    double backward_update_ms;              /* spart_mart_update_from_images, synchronised */
    double update_ms, merits_ms, widths_ms; /* one device step each, synchronised */
    double forward_floor_ms, backward_floor_ms;
    /* GPU time of each step, recorded 20 times in one graph and replayed
     * (no host waits): the prediction (product, widths), the merits, the
     * fused backprojection and update, and the four together as the
     * driver records an iteration */
    double graph_forward_ms, graph_widths_ms, graph_merits_ms, graph_update_ms;
    double graph_iteration_ms;
    /* the backprojection of the predicted images alone (the product the
     * fused update makes inside), the same way */
    double graph_backward_ms;
    double update_floor_ms; /* the fused update's compulsory bytes over the copy rate */
    int64_t iterations;
    int same_bits;
} problem_figures;

static int check(spart_context *context, spart_status status, const char *what)
{
    if (status != SPART_OK) {
        fprintf(stderr, "bench_mart_device: %s: %s\n", what, spart_context_error(context));
        return 0;
    }
    return 1;
}

/* Device copy bandwidth (bytes read + written per second) of a 1 GiB copy. */
static double device_bandwidth(spart_context *context)
{
    size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    if (spart_device_malloc(context, bytes, &a) != SPART_OK ||
        spart_device_malloc(context, bytes, &b) != SPART_OK) {
        spart_device_free(context, a);
        return 0.0;
    }
    double best = 1e30;
    for (int k = 0; k < 5; k++) {
        double t = omp_get_wtime();
        if (spart_device_copy_on_device(context, b, a, bytes) != SPART_OK) {
            break;
        }
        t = omp_get_wtime() - t;
        best = t < best ? t : best;
    }
    spart_device_free(context, a);
    spart_device_free(context, b);
    return 2.0 * (double)bytes / best;
}

/* Bytes one product moves: values, columns, row pointers, x, y. */
static double product_bytes(const spart_regridder *r)
{
    double value = spart_regridder_value_type(r) == SPART_FLOAT32 ? 4.0 : 8.0;
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    if (spart_regridder_csr(r, NULL, &columns32, &columns64, NULL) != SPART_OK) {
        return 0.0;
    }
    double column = columns32 != NULL ? 4.0 : 8.0;
    double entries = (double)spart_regridder_num_entries(r);
    double rows = (double)spart_regridder_num_rows(r);
    double columns = (double)spart_regridder_num_columns(r);
    return entries * (value + column) + rows * 8.0 + columns * 8.0 + rows * 8.0;
}

/* ms of one device product (best of 20, each waited for). */
static double time_product(spart_context *context, const spart_regridder *r)
{
    int64_t columns = spart_regridder_num_columns(r), rows = spart_regridder_num_rows(r);
    void *x = NULL, *y = NULL;
    if (spart_device_malloc(context, (size_t)columns * sizeof(double), &x) != SPART_OK ||
        spart_device_malloc(context, (size_t)rows * sizeof(double), &y) != SPART_OK) {
        spart_device_free(context, x);
        return -1.0;
    }
    double *zeros = calloc((size_t)columns, sizeof(double));
    double best = 1e30;
    double ignored = 0.0;
    if (spart_device_copy_to_device(context, x, zeros, (size_t)columns * sizeof(double)) ==
        SPART_OK) {
        spart_array array = {x, spart_regridder_shape_input(r)};
        for (int k = 0; k < 20; k++) {
            double t = omp_get_wtime();
            if (spart_regridder_apply(context, r, &array, y, rows) != SPART_OK ||
                spart_device_copy_to_host(context, &ignored, y, sizeof(double)) != SPART_OK) {
                break;
            }
            t = omp_get_wtime() - t;
            best = t < best ? t : best;
        }
    }
    free(zeros);
    spart_device_free(context, x);
    spart_device_free(context, y);
    return best * 1e3;
}

/* ms of one device MART step (best of 20, each waited for): the update
 * over channels x scene values, the merits and the widths over the images. */
static void device_step_times(spart_context *context, int64_t scene_size, problem_figures *f)
{
    int64_t channels = 4, image = 128 * 64;
    size_t scenes = (size_t)(channels * scene_size) * sizeof(double);
    size_t images = (size_t)(channels * image) * sizeof(double);
    size_t work_bytes = spart_mart_workspace_size(channels, image, scene_size);
    void *scene = NULL, *observed_back = NULL, *predicted_back = NULL;
    void *observed = NULL, *predicted = NULL, *widths = NULL, *workspace = NULL;
    f->update_ms = f->merits_ms = f->widths_ms = -1.0;
    if (spart_device_malloc(context, (size_t)scene_size * sizeof(double), &scene) != SPART_OK ||
        spart_device_malloc(context, scenes, &observed_back) != SPART_OK ||
        spart_device_malloc(context, scenes, &predicted_back) != SPART_OK ||
        spart_device_malloc(context, images, &observed) != SPART_OK ||
        spart_device_malloc(context, images, &predicted) != SPART_OK ||
        spart_device_malloc(context, images, &widths) != SPART_OK ||
        spart_device_malloc(context, work_bytes, &workspace) != SPART_OK) {
        goto done;
    }
    double *ones = malloc(scenes > images ? scenes : images);
    for (size_t k = 0; k < (scenes > images ? scenes : images) / sizeof(double); k++) {
        ones[k] = 1.0 + (double)(k % 7);
    }
    int ok =
        spart_device_copy_to_device(context, scene, ones, (size_t)scene_size * 8) == SPART_OK &&
        spart_device_copy_to_device(context, observed_back, ones, scenes) == SPART_OK &&
        spart_device_copy_to_device(context, predicted_back, ones, scenes) == SPART_OK &&
        spart_device_copy_to_device(context, observed, ones, images) == SPART_OK &&
        spart_device_copy_to_device(context, predicted, ones, images) == SPART_OK;
    free(ones);
    double chi2[4], r[4], ignored = 0.0;
    double best[3] = {1e30, 1e30, 1e30};
    for (int k = 0; ok && k < 20; k++) {
        double t = omp_get_wtime();
        ok = spart_mart_update(context, scene, observed_back, predicted_back, channels, scene_size,
                               0.5, 1) == SPART_OK &&
             spart_device_copy_to_host(context, &ignored, scene, sizeof(double)) == SPART_OK;
        t = omp_get_wtime() - t;
        best[0] = t < best[0] ? t : best[0];
        t = omp_get_wtime();
        ok = ok && spart_mart_merits(context, observed, predicted, widths, channels, image, chi2, r,
                                     workspace, work_bytes, 1) == SPART_OK;
        t = omp_get_wtime() - t;
        best[1] = t < best[1] ? t : best[1];
        t = omp_get_wtime();
        ok = ok &&
             spart_mart_noise_widths(context, predicted, widths, channels * image, 1.0, 0.0, 1) ==
                 SPART_OK &&
             spart_device_copy_to_host(context, &ignored, widths, sizeof(double)) == SPART_OK;
        t = omp_get_wtime() - t;
        best[2] = t < best[2] ? t : best[2];
    }
    if (ok) {
        f->update_ms = best[0] * 1e3;
        f->merits_ms = best[1] * 1e3;
        f->widths_ms = best[2] * 1e3;
    }
done:
    spart_device_free(context, scene);
    spart_device_free(context, observed_back);
    spart_device_free(context, predicted_back);
    spart_device_free(context, observed);
    spart_device_free(context, predicted);
    spart_device_free(context, widths);
    spart_device_free(context, workspace);
}

/* ms of the backprojection of images and the update together (best of
 * 20, each waited for). */
static double time_backward_update(spart_context *context, const spart_regridder *backward)
{
    int64_t images = spart_regridder_num_columns(backward);
    int64_t rows = spart_regridder_num_rows(backward);
    int64_t scene_size = rows / 4;
    void *x = NULL, *observed_back = NULL, *scene = NULL, *scratch = NULL;
    double best = -1.0;
    double *ones = malloc((size_t)rows * sizeof(double));
    for (int64_t k = 0; k < rows; k++) {
        ones[k] = 1.0 + (double)(k % 5);
    }
    if (spart_device_malloc(context, (size_t)images * sizeof(double), &x) == SPART_OK &&
        spart_device_malloc(context, (size_t)rows * sizeof(double), &observed_back) == SPART_OK &&
        spart_device_malloc(context, (size_t)scene_size * sizeof(double), &scene) == SPART_OK &&
        spart_device_malloc(context, (size_t)rows * sizeof(double), &scratch) == SPART_OK &&
        spart_device_copy_to_device(context, x, ones, (size_t)images * sizeof(double)) ==
            SPART_OK &&
        spart_device_copy_to_device(context, observed_back, ones, (size_t)rows * sizeof(double)) ==
            SPART_OK &&
        spart_device_copy_to_device(context, scene, ones, (size_t)scene_size * sizeof(double)) ==
            SPART_OK) {
        best = 1e30;
        double ignored = 0.0;
        for (int k = 0; k < 20; k++) {
            double t = omp_get_wtime();
            if (spart_mart_update_from_images(context, backward, x, observed_back, 4, 0.5, scene,
                                              scratch) != SPART_OK ||
                spart_device_copy_to_host(context, &ignored, scene, sizeof(double)) != SPART_OK) {
                best = -1.0;
                break;
            }
            t = omp_get_wtime() - t;
            best = t < best ? t : best;
        }
    }
    free(ones);
    spart_device_free(context, x);
    spart_device_free(context, observed_back);
    spart_device_free(context, scene);
    spart_device_free(context, scratch);
    return best > 0.0 ? best * 1e3 : -1.0;
}

static void device_product_times(spart_context *context, const spart_regridder *forward,
                                 const spart_regridder *backward, double bandwidth,
                                 problem_figures *f)
{
    f->forward_ms = time_product(context, forward);
    f->backward_ms = time_product(context, backward);
    f->backward_update_ms = time_backward_update(context, backward);
    f->forward_floor_ms = product_bytes(forward) / bandwidth * 1e3;
    f->backward_floor_ms = product_bytes(backward) / bandwidth * 1e3;
}

/* ---- GPU time of the steps without host waits ---------------------------------------------- */

/* The device arrays of one iteration, as the driver holds them. */
typedef struct step_arrays {
    const spart_regridder *forward, *backward;
    int64_t channels, image_size, scene_size;
    void *scene, *predicted, *widths, *observed, *observed_back, *scratch;
    void *workspace;
    size_t workspace_bytes;
} step_arrays;

static spart_status step_forward(spart_context *context, const step_arrays *a)
{
    spart_array x = {a->scene, spart_regridder_shape_input(a->forward)};
    return spart_regridder_apply(context, a->forward, &x, a->predicted,
                                 a->channels * a->image_size);
}

static spart_status step_backward(spart_context *context, const step_arrays *a)
{
    spart_array images = {a->predicted, spart_regridder_shape_input(a->backward)};
    return spart_regridder_apply(context, a->backward, &images, a->scratch,
                                 a->channels * a->scene_size);
}

static spart_status step_widths(spart_context *context, const step_arrays *a)
{
    return spart_mart_noise_widths(context, a->predicted, a->widths, a->channels * a->image_size,
                                   1.0, 0.0, 1);
}

static spart_status step_merits(spart_context *context, const step_arrays *a)
{
    return spart_mart_merits(context, a->observed, a->predicted, a->widths, a->channels,
                             a->image_size, NULL, NULL, a->workspace, a->workspace_bytes, 1);
}

/* In place. observed_back is the backprojection of the predicted images,
 * so every correction is 1 (through the same divisions and roots as any
 * other) and the state does not drift over the repeats. */
static spart_status step_update(spart_context *context, const step_arrays *a)
{
    return spart_mart_update_from_images(context, a->backward, a->predicted, a->observed_back,
                                         a->channels, 0.5, a->scene, a->scratch);
}

/* One iteration as the driver records it: the update, the prediction of
 * the new state and its merits (left on the device). */
static spart_status step_iteration(spart_context *context, const step_arrays *a)
{
    spart_status status = step_update(context, a);
    status = status == SPART_OK ? step_forward(context, a) : status;
    status = status == SPART_OK ? step_widths(context, a) : status;
    return status == SPART_OK ? step_merits(context, a) : status;
}

/* Wait for the context's stream (a copy of one value back waits for it). */
static int wait_for_device(spart_context *context, const void *device)
{
    double ignored = 0.0;
    return spart_device_copy_to_host(context, &ignored, device, sizeof ignored) == SPART_OK;
}

typedef struct repeated_step {
    spart_status (*step)(spart_context *context, const step_arrays *a);
    const step_arrays *arrays;
    int repeats;
} repeated_step;

static spart_status record_repeated(void *user, spart_context *context)
{
    const repeated_step *r = user;
    spart_status status = SPART_OK;
    for (int k = 0; k < r->repeats && status == SPART_OK; k++) {
        status = r->step(context, r->arrays);
    }
    return status;
}

/* ms of GPU time per step: the step recorded 20 times in one graph, the
 * graph launched once to warm up, then five launches back to back and one
 * wait (best of 3). */
static double graph_step_ms(spart_context *context,
                            spart_status (*step)(spart_context *, const step_arrays *),
                            const step_arrays *arrays)
{
    repeated_step repeated = {step, arrays, 20};
    spart_device_graph *graph = NULL;
    if (!check(context, spart_device_graph_record(context, record_repeated, &repeated, &graph),
               "recording a step")) {
        return -1.0;
    }
    double best = 1e30;
    int ok = spart_device_graph_launch(context, graph) == SPART_OK &&
             wait_for_device(context, arrays->scene);
    for (int trial = 0; ok && trial < 3; trial++) {
        double t = omp_get_wtime();
        for (int k = 0; ok && k < 5; k++) {
            ok = spart_device_graph_launch(context, graph) == SPART_OK;
        }
        ok = ok && wait_for_device(context, arrays->scene);
        t = (omp_get_wtime() - t) / (5.0 * repeated.repeats);
        best = t < best ? t : best;
    }
    spart_device_graph_free(graph);
    return ok ? best * 1e3 : -1.0;
}

static void *device_array(spart_context *context, size_t bytes, int *ok)
{
    void *pointer = NULL;
    if (*ok && spart_device_malloc(context, bytes, &pointer) != SPART_OK) {
        *ok = 0;
    }
    return pointer;
}

/* GPU time of each step and of a whole iteration, on the problem's device
 * operators and observations. */
static void graph_step_times(spart_context *context, const spart_regridder *forward,
                             const spart_regridder *backward, const void *d_observed,
                             problem_figures *f)
{
    step_arrays a;
    memset(&a, 0, sizeof a);
    a.forward = forward;
    a.backward = backward;
    a.channels = 4;
    a.image_size = 128 * 64;
    a.scene_size = spart_regridder_num_columns(forward);
    size_t scene_bytes = (size_t)a.scene_size * sizeof(double);
    size_t image_bytes = (size_t)(a.channels * a.image_size) * sizeof(double);
    size_t back_bytes = (size_t)(a.channels * a.scene_size) * sizeof(double);
    a.workspace_bytes = spart_mart_workspace_size(a.channels, a.image_size, a.scene_size);
    int ok = 1;
    a.scene = device_array(context, scene_bytes, &ok);
    a.predicted = device_array(context, image_bytes, &ok);
    a.widths = device_array(context, image_bytes, &ok);
    a.observed_back = device_array(context, back_bytes, &ok);
    a.scratch = device_array(context, back_bytes, &ok);
    a.workspace = device_array(context, a.workspace_bytes, &ok);
    a.observed = (void *)d_observed;
    double *values = malloc(scene_bytes);
    for (int64_t k = 0; k < a.scene_size; k++) {
        values[k] = 1.0 + (double)(k % 7);
    }
    ok = ok && spart_device_copy_to_device(context, a.scene, values, scene_bytes) == SPART_OK;
    free(values);
    /* predicted images of that scene, clamped, with their widths, and
     * their backprojection as the observed one */
    ok = ok && step_forward(context, &a) == SPART_OK && step_widths(context, &a) == SPART_OK;
    spart_array images = {a.predicted, spart_regridder_shape_input(backward)};
    ok = ok &&
         spart_regridder_apply(context, backward, &images, a.observed_back,
                               a.channels * a.scene_size) == SPART_OK &&
         spart_mart_clamp(context, a.observed_back, a.channels * a.scene_size, 1) == SPART_OK;
    f->graph_forward_ms = ok ? graph_step_ms(context, step_forward, &a) : -1.0;
    f->graph_widths_ms = ok ? graph_step_ms(context, step_widths, &a) : -1.0;
    f->graph_merits_ms = ok ? graph_step_ms(context, step_merits, &a) : -1.0;
    f->graph_update_ms = ok ? graph_step_ms(context, step_update, &a) : -1.0;
    f->graph_iteration_ms = ok ? graph_step_ms(context, step_iteration, &a) : -1.0;
    f->graph_backward_ms = ok ? graph_step_ms(context, step_backward, &a) : -1.0;
    void *arrays[] = {a.scene, a.predicted, a.widths, a.observed_back, a.scratch, a.workspace};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        spart_device_free(context, arrays[k]);
    }
}

/* ms per iteration of a fixed-count run; the run's chi2 history into chi2. */
static double time_mart(spart_context *context, const spart_mart_operators *operators,
                        const double *observed, int64_t iterations, double *chi2)
{
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = iterations;
    spart_mart_result *result = NULL;
    double t = omp_get_wtime();
    if (!check(context, spart_mart_solve(context, operators, observed, &options, &result),
               "mart")) {
        return -1.0;
    }
    t = omp_get_wtime() - t;
    memcpy(chi2, spart_mart_result_mean_chi_squared(result),
           (size_t)(iterations * 4) * sizeof(double));
    spart_mart_result_free(result);
    return t / (double)iterations * 1e3;
}

/* ms per iteration with the fixed costs of a solve (working arrays, the
 * flat guess, recording the graph) left out: the difference of a 60- and a
 * 10-iteration run over 50, each the best of 3. */
static double marginal_iteration_ms(spart_context *context, const spart_mart_operators *operators,
                                    const double *observed)
{
    double *chi2 = malloc(60 * 4 * sizeof(double));
    double best_short = 1e30, best_long = 1e30;
    for (int k = 0; k < 3; k++) {
        double t_short = time_mart(context, operators, observed, 10, chi2) * 10.0;
        double t_long = time_mart(context, operators, observed, 60, chi2) * 60.0;
        best_short = t_short < best_short ? t_short : best_short;
        best_long = t_long < best_long ? t_long : best_long;
    }
    free(chi2);
    return (best_long - best_short) / 50.0;
}

/* --profile N: only a 3-iteration device solve of the N x N scene (for a
 * profiler's kernel filters), no timings. */
static int profile_only = 0;

static int run_problem(spart_context *context, int n, double bandwidth, problem_figures *f)
{
    double angle[4], velocity[21], wavelength[21], sensor_x[129], sensor_y[65];
    double *x = malloc((size_t)(n + 1) * sizeof(double));
    double *y = malloc((size_t)(n + 1) * sizeof(double));
    spart_instrument_params params;
    bench_mart_params(n, angle, velocity, wavelength, x, y, sensor_x, sensor_y, &params);
    int64_t scene_size = 20 * (int64_t)n * n;
    double *scene = malloc((size_t)scene_size * sizeof(double));
    double *observed = malloc(4 * 128 * 64 * sizeof(double));
    f->scene = n;
    f->iterations = 30;
    double *chi2_host = malloc((size_t)(f->iterations * 4) * sizeof(double));
    double *chi2_device = malloc((size_t)(f->iterations * 4) * sizeof(double));
    int ok = check(
        context,
        spart_scene_gaussians(context, 171.0, 20, velocity, n, x, n, y, NULL, wavelength, scene),
        "scene");
    spart_instrument *instrument = NULL;
    double t = omp_get_wtime();
    ok = ok && check(context, spart_instrument_create(context, &params, &instrument), "instrument");
    f->build_ms = (omp_get_wtime() - t) * 1e3;
    ok = ok &&
         check(context, spart_instrument_observe(context, instrument, scene, 1, observed, NULL),
               "observe");
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    ok = ok &&
         check(context, spart_instrument_mart_operators(context, instrument, &pair, &operators),
               "operators");
    if (ok) {
        f->entries_forward = spart_regridder_num_entries(pair.forward);
        f->entries_backward = spart_regridder_num_entries(pair.backward);
        f->host_ms =
            profile_only ? 0.0 : time_mart(context, &operators, observed, f->iterations, chi2_host);
    }
    f->device_ms = -1.0;
    spart_regridder *forward = NULL, *backward = NULL;
    void *d_observed = NULL;
    if (ok && bandwidth > 0.0) {
        size_t bytes = 4 * 128 * 64 * sizeof(double);
        ok = check(context, spart_regridder_to_device(context, pair.forward, &forward), "device") &&
             check(context, spart_regridder_to_device(context, pair.backward, &backward),
                   "device") &&
             check(context, spart_device_malloc(context, bytes, &d_observed), "device") &&
             check(context, spart_device_copy_to_device(context, d_observed, observed, bytes),
                   "device");
        pair.forward = forward;
        pair.backward = backward;
        ok = ok && check(context, spart_mart_operators_from_regridders(context, &pair, &operators),
                         "operators");
        if (ok && profile_only) {
            time_mart(context, &operators, d_observed, 3, chi2_device);
        } else if (ok) {
            time_mart(context, &operators, d_observed, 2, chi2_device); /* warm up */
            f->device_ms = time_mart(context, &operators, d_observed, f->iterations, chi2_device);
            f->device_marginal_ms = marginal_iteration_ms(context, &operators, d_observed);
            f->same_bits =
                memcmp(chi2_host, chi2_device, (size_t)(f->iterations * 4) * sizeof(double)) == 0;
            device_product_times(context, forward, backward, bandwidth, f);
            device_step_times(context, scene_size, f);
            graph_step_times(context, forward, backward, d_observed, f);
            /* floor: both products, and the elementwise passes over the
             * per-channel scenes (observed and predicted backprojections
             * read, the scene read and written) and the images (predicted
             * and widths written, then read with the observed ones). */
            double images = 4.0 * 128 * 64 * 8.0;
            double scenes = 4.0 * (double)scene_size * 8.0;
            double bytes_moved = product_bytes(forward) + product_bytes(backward) + 2.0 * scenes +
                                 2.0 * (double)scene_size * 8.0 + 5.0 * images;
            f->floor_ms = bytes_moved / bandwidth * 1e3;
            /* fused (spart_mart_update_from_images): the backprojection of
             * the prediction is neither written nor read back */
            f->fused_floor_ms = (bytes_moved - 2.0 * scenes) / bandwidth * 1e3;
            /* the fused update: the backward operator's arrays (entries,
             * row pointers, images), the observed backprojections, the
             * scene read and written */
            double update_bytes = product_bytes(backward) -
                                  (double)spart_regridder_num_rows(backward) * 8.0 + scenes +
                                  2.0 * (double)scene_size * 8.0;
            f->update_floor_ms = update_bytes / bandwidth * 1e3;
        }
    }
    spart_device_free(context, d_observed);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_instrument_free(instrument);
    free(x);
    free(y);
    free(scene);
    free(observed);
    free(chi2_host);
    free(chi2_device);
    return ok;
}

/* The first table in Markdown under its header block (--markdown FILE). */
static int write_markdown(const char *path, int argc, char **argv, const problem_figures *figures,
                          int count, int threads, double bandwidth)
{
    FILE *out = bench_markdown_open(
        path, argc, argv, threads,
        "ms per iteration: a 30-iteration solve (after a warm-up) over 30, wall clock, the "
        "device synchronised; marginal: (t(60) - t(10)) / 50, best of 3");
    if (out == NULL) {
        return -1;
    }
    fprintf(out, "- problem: the ideal instrument of the ctis tutorial's shape (4 channels at "
                 "90 degrees, 20 velocity bins, 128 x 64 sensor), noise-free Gaussian scene\n");
    fprintf(out,
            "- floor: the bytes an iteration must move (both products' CSR arrays, x and y; "
            "the elementwise passes) at the device copy bandwidth measured in the same run, "
            "%.0f GB/s\n\n",
            bandwidth * 1e-9);
    fprintf(out, "| scene | weights forward | weights backward | host ms/iteration | "
                 "device ms/iteration | device marginal ms | device floor ms | host / device | "
                 "same bits |\n");
    bench_markdown_rule(out, 9);
    for (int k = 0; k < count; k++) {
        const problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        fprintf(out, "| %d x %d | %lld | %lld | %.3f |", f->scene, f->scene,
                (long long)f->entries_forward, (long long)f->entries_backward, f->host_ms);
        if (f->device_ms > 0) {
            fprintf(out, " %.3f | %.4f | %.4f | %.1fx | %s |\n", f->device_ms,
                    f->device_marginal_ms, f->floor_ms, f->host_ms / f->device_ms,
                    f->same_bits ? "yes" : "NO");
        } else {
            fprintf(out, " no device | - | - | - | - |\n");
        }
    }
    fclose(out);
    return 0;
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    const char *markdown = NULL;
    int profile_scene = 0;
    int only_scene = 0; /* --scene N: that problem alone (64 or 256) */
    for (int k = 1; k + 1 < argc; k++) {
        if (strcmp(argv[k], "--json") == 0) {
            json = argv[k + 1];
        }
        if (strcmp(argv[k], "--markdown") == 0) {
            markdown = argv[k + 1];
        }
        if (strcmp(argv[k], "--profile") == 0) {
            profile_scene = atoi(argv[k + 1]);
        }
        if (strcmp(argv[k], "--scene") == 0) {
            only_scene = atoi(argv[k + 1]);
        }
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    int have_device = spart_context_set_cuda_device(context, 0) == SPART_OK;
    if (profile_scene > 0) {
        problem_figures figure;
        memset(&figure, 0, sizeof figure);
        profile_only = 1;
        int ok = have_device && run_problem(context, profile_scene, 1.0, &figure);
        spart_context_free(context);
        return ok ? 0 : 1;
    }
    double bandwidth = have_device ? device_bandwidth(context) : 0.0;
    int sizes[2] = {64, 256};
    problem_figures figures[2];
    memset(figures, 0, sizeof figures);
    printf("MART per iteration, ideal instrument (4 channels, 20 bins, 128x64 sensor); host %d "
           "threads; device copy bandwidth %.0f GB/s\n",
           spart_context_threads(context), bandwidth / 1e9);
    printf("%-7s %12s %12s %10s %10s %10s %10s %9s %9s %6s\n", "scene", "entries fwd",
           "entries back", "build ms", "host ms", "device ms", "floor ms", "host/dev", "floor/dev",
           "bits");
    for (int k = 0; k < 2; k++) {
        if (only_scene != 0 && sizes[k] != only_scene) {
            continue;
        }
        if (!run_problem(context, sizes[k], bandwidth, &figures[k])) {
            spart_context_free(context);
            return 1;
        }
        problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        printf("%3dx%-3d %12lld %12lld %10.1f %10.3f %10.3f %10.3f %9.1f %8.0f%% %6s\n", f->scene,
               f->scene, (long long)f->entries_forward, (long long)f->entries_backward, f->build_ms,
               f->host_ms, f->device_ms, f->floor_ms,
               f->device_ms > 0 ? f->host_ms / f->device_ms : 0.0,
               f->device_ms > 0 ? 100.0 * f->floor_ms / f->device_ms : 0.0,
               f->device_ms > 0 ? (f->same_bits ? "same" : "DIFFER") : "-");
    }
    printf("\ndevice ms per iteration without a solve's fixed costs ((t(60) - t(10)) / 50), "
           "against the floor and the floor of the fused iteration (no backprojection of the "
           "prediction in memory):\n");
    printf("%-7s %12s %10s %10s %12s %12s\n", "scene", "marginal ms", "floor ms", "floor/dev",
           "fused floor", "fused/dev");
    for (int k = 0; k < 2; k++) {
        problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        printf("%3dx%-3d %12.4f %10.4f %9.0f%% %12.4f %11.0f%%\n", f->scene, f->scene,
               f->device_marginal_ms, f->floor_ms,
               f->device_marginal_ms > 0 ? 100.0 * f->floor_ms / f->device_marginal_ms : 0.0,
               f->fused_floor_ms,
               f->device_marginal_ms > 0 ? 100.0 * f->fused_floor_ms / f->device_marginal_ms : 0.0);
    }
    printf("\nGPU ms per step, each recorded 20 times in one graph and replayed (no host waits); "
           "\"iteration\" is the four in one graph as the driver records them; host gap = "
           "marginal - iteration (the iteration graph's launch, the copy of the merits, the "
           "wait for them):\n");
    printf("%-7s %10s %10s %10s %10s %12s %10s %10s\n", "scene", "forward", "widths", "merits",
           "update", "update floor", "iteration", "host gap");
    for (int k = 0; k < 2; k++) {
        problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        printf("%3dx%-3d %10.4f %10.4f %10.4f %10.4f %12.4f %10.4f %10.4f\n", f->scene, f->scene,
               f->graph_forward_ms, f->graph_widths_ms, f->graph_merits_ms, f->graph_update_ms,
               f->update_floor_ms, f->graph_iteration_ms,
               f->device_marginal_ms - f->graph_iteration_ms);
    }
    printf("\nthe two products alone, each recorded 20 times in one graph (GPU ms a product; "
           "an iteration makes both, one after the other), against the iteration's goal:\n");
    printf("%-7s %10s %10s %10s %10s %10s\n", "scene", "forward", "backward", "sum", "floor",
           "goal");
    for (int k = 0; k < 2; k++) {
        problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        printf("%3dx%-3d %10.4f %10.4f %10.4f %10.4f %10.4f\n", f->scene, f->scene,
               f->graph_forward_ms, f->graph_backward_ms,
               f->graph_forward_ms + f->graph_backward_ms, f->floor_ms, 1.25 * f->floor_ms);
    }
    printf("\nsolve fixed costs ((end to end - marginal) x 30 iterations): %.3f ms (64x64), "
           "%.3f ms (256x256)\n",
           (figures[0].device_ms - figures[0].device_marginal_ms) * 30.0,
           (figures[1].device_ms - figures[1].device_marginal_ms) * 30.0);
    printf("\none device product (waited for, so launch and copy latency included):\n");
    printf("%-7s %12s %12s %12s %12s\n", "scene", "forward ms", "floor ms", "backward ms",
           "floor ms");
    for (int k = 0; k < 2; k++) {
        problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        printf("%3dx%-3d %12.4f %12.4f %12.4f %12.4f\n", f->scene, f->scene, f->forward_ms,
               f->forward_floor_ms, f->backward_ms, f->backward_floor_ms);
    }
    printf("\none device step (waited for):\n%-7s %12s %12s %12s %22s\n", "scene", "update ms",
           "merits ms", "widths ms", "backward + update ms");
    for (int k = 0; k < 2; k++) {
        problem_figures *f = &figures[k];
        if (f->scene == 0) {
            continue; /* not run (--scene) */
        }
        printf("%3dx%-3d %12.4f %12.4f %12.4f %22.4f\n", f->scene, f->scene, f->update_ms,
               f->merits_ms, f->widths_ms, f->backward_update_ms);
    }
    if (json != NULL) {
        FILE *file = fopen(json, "w");
        if (file != NULL) {
            fprintf(file, "{\"bandwidth_bytes_per_s\": %.6e, \"threads\": %d, \"problems\": [",
                    bandwidth, spart_context_threads(context));
            int written = 0;
            for (int k = 0; k < 2; k++) {
                problem_figures *f = &figures[k];
                if (f->scene == 0) {
                    continue; /* not run (--scene) */
                }
                fprintf(file,
                        "%s{\"scene\": %d, \"entries_forward\": %lld, \"entries_backward\": %lld, "
                        "\"build_ms\": %.3f, \"host_ms\": %.4f, \"device_ms\": %.4f, "
                        "\"floor_ms\": %.4f, \"device_marginal_ms\": %.4f, "
                        "\"fused_floor_ms\": %.4f, \"graph_forward_ms\": %.4f, "
                        "\"graph_widths_ms\": %.4f, \"graph_merits_ms\": %.4f, "
                        "\"graph_update_ms\": %.4f, \"update_floor_ms\": %.4f, "
                        "\"graph_iteration_ms\": %.4f, \"graph_backward_ms\": %.4f, "
                        "\"same_bits\": %d}",
                        written++ ? ", " : "", f->scene, (long long)f->entries_forward,
                        (long long)f->entries_backward, f->build_ms, f->host_ms, f->device_ms,
                        f->floor_ms, f->device_marginal_ms, f->fused_floor_ms, f->graph_forward_ms,
                        f->graph_widths_ms, f->graph_merits_ms, f->graph_update_ms,
                        f->update_floor_ms, f->graph_iteration_ms, f->graph_backward_ms,
                        f->same_bits);
            }
            fprintf(file, "]}\n");
            fclose(file);
        }
    }
    if (markdown != NULL && write_markdown(markdown, argc, argv, figures, 2,
                                           spart_context_threads(context), bandwidth) != 0) {
        spart_context_free(context);
        return 1;
    }
    spart_context_free(context);
    return have_device ? 0 : 77;
}
