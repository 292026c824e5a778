/*
 * tests/bench/bench_mart_frames.c: many frames per MART solve on a CUDA
 * device (spart_mart_solve_frames) against its peer, the one-frame loop
 * (spart_mart_solve once a frame, the same operators, options and
 * observations), in one run: frames per second for the benchmarks'
 * instrument (bench_util.h: 4 channels, 20 bins, a 128 x 64 sensor) on
 * 64 x 64 and 256 x 256 scenes with F = 1, 8 and 64 frames, each frame a
 * fixed count of iterations (so both do the same work), and the two
 * products over F vectors against the copy-rate floor (the bytes a
 * product must move, CSR arrays once and x and y of every frame, over the
 * device's copy rate measured here). Checks that both give the same bits
 * (a speed is a figure to read, not a timed assertion: the program fails
 * only when a run fails or the bits differ).
 *
 * Three ways to receive the solutions, each timed for both sides alike:
 * plain (spart_mart_solve / spart_mart_solve_frames: each solution copied
 * into host memory the result allocates, so its pages are touched first by
 * that copy unless the allocator happens to reuse freed ones), and the
 * _into forms writing into one buffer of F solutions the caller allocated
 * once outside the timing, pinned host memory (cudaMallocHost) or device
 * memory (spart_mart_solve_into once a frame, into frame k's place;
 * spart_mart_solve_frames_into).
 *
 *   bench_mart_frames [--iterations K] [--repeat R] [--quick] [--markdown FILE]
 *
 * --quick: the 64 x 64 scene only. Exit 77 (skipped) without a device.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_device_product.h"
#include "bench_util.h"
#include "spart.h"

enum { max_frames = 64, num_frame_counts = 3 };
static const int64_t frame_counts[num_frame_counts] = {1, 8, 64};

typedef struct figures {
    int scene;
    int64_t frames;
    double loop_seconds, frames_seconds; /* best of the repeats */
    /* the same with one iteration a frame: what a solve costs besides its
     * iterations (allocations, graphs, guesses, results) */
    double loop_one_seconds, frames_one_seconds;
    /* both sides with their solutions written into a buffer of F
     * solutions allocated once outside the timing: pinned host memory,
     * device memory (the _into forms) */
    double loop_pinned_seconds, frames_pinned_seconds;
    double loop_device_seconds, frames_device_seconds;
    /* the plain frames solve, first call on a fresh context (its memory
     * pool made and mapped in the call; later calls reuse it) */
    double first_seconds;
    int same_bits;
    double forward_ms, backward_ms;             /* one product over `frames` vectors */
    double forward_floor_ms, backward_floor_ms; /* its bytes over the copy rate */
} figures;

/* Whether two results hold the same bits (merits and solution). */
static int same_result(const spart_mart_result *a, const spart_mart_result *b)
{
    int64_t n = spart_mart_result_num_iterations(a);
    int64_t values = n * spart_mart_result_num_channel(a) * (int64_t)sizeof(double);
    return n == spart_mart_result_num_iterations(b) &&
           memcmp(spart_mart_result_mean_chi_squared(a), spart_mart_result_mean_chi_squared(b),
                  (size_t)values) == 0 &&
           memcmp(spart_mart_result_solution(a), spart_mart_result_solution(b),
                  (size_t)spart_mart_result_scene_size(a) * sizeof(double)) == 0;
}

/* Where the solutions go: the results (plain), or a buffer of F
 * solutions, pinned host or device memory (the _into forms). */
typedef struct destination {
    double *buffer; /* NULL: plain */
    int on_device;
} destination;

/* The one-frame loop of the first `frames` frames into alone[] (and frame
 * k's solution into the buffer's place k); its seconds. */
static double solve_loop(spart_context *context, const spart_mart_operators *operators,
                         const double *d_observed, int64_t frames,
                         const spart_mart_options *options, destination to,
                         spart_mart_result **alone)
{
    int64_t pixels = operators->num_channel * operators->image_size;
    double t = bench_seconds();
    for (int64_t k = 0; k < frames; k++) {
        double *solution = to.buffer != NULL ? to.buffer + k * operators->scene_size : NULL;
        CHECK_SPART(context, spart_mart_solve_into(context, operators, d_observed + k * pixels,
                                                   options, solution, to.on_device, &alone[k]));
    }
    return bench_seconds() - t;
}

/* The frames solve of the first `frames` frames, every one in one batch;
 * its seconds. */
static double solve_frames(spart_context *context, const spart_mart_operators *operators,
                           const double *d_observed, int64_t frames,
                           const spart_mart_options *options, destination to,
                           spart_mart_result **results)
{
    double t = bench_seconds();
    CHECK_SPART(context,
                spart_mart_solve_frames_into(context, operators, frames, d_observed, options,
                                             frames, NULL, 0, to.buffer, to.on_device, results));
    return bench_seconds() - t;
}

static void free_results(spart_mart_result **results, int64_t frames)
{
    for (int64_t k = 0; k < frames; k++) {
        spart_mart_result_free(results[k]);
    }
}

/* Whether the solutions in `to` (F of them) are those of the plain
 * results. */
static int same_solutions(spart_context *context, destination to, spart_mart_result **plain,
                          int64_t frames)
{
    int64_t n = spart_mart_result_scene_size(plain[0]);
    size_t bytes = (size_t)(frames * n) * sizeof(double);
    double *host = malloc(bytes);
    CHECK_SPART(context, spart_memory_copy(context, host, 0, to.buffer, to.on_device, bytes));
    int same = 1;
    for (int64_t k = 0; k < frames; k++) {
        same = same && memcmp(host + k * n, spart_mart_result_solution(plain[k]),
                              (size_t)n * sizeof(double)) == 0;
    }
    free(host);
    return same;
}

/* The one-frame loop and the frames solve of the first `frames` frames,
 * each way of receiving the solutions, `repeat` times each, alternating.
 * Each timed solve starts after the results of the one before it are
 * freed, so that the plain calls find the host's memory for their results
 * alike (a solve that finds another's freed results to reuse skips the
 * first touch of their pages, 0.66 MB a frame at 64 x 64 and 10.5 MB at
 * 256 x 256); the _into forms write into buffers allocated (and touched)
 * once, before the timing. The bits are compared in a pass of their own,
 * untimed. */
static void time_solves(spart_context *context, const spart_mart_operators *operators,
                        const double *d_observed, int64_t frames, const spart_mart_options *options,
                        int repeat, figures *f)
{
    spart_mart_result *alone[max_frames], *together[max_frames];
    size_t bytes = (size_t)(frames * operators->scene_size) * sizeof(double);
    destination ways[3] = {{NULL, 0}, {NULL, 0}, {NULL, 1}};
    CHECK_CUDA(cudaMallocHost((void **)&ways[1].buffer, bytes));
    memset(ways[1].buffer, 0, bytes);
    CHECK_SPART(context, spart_device_malloc(context, bytes, (void **)&ways[2].buffer));
    CHECK_CUDA(cudaMemset(ways[2].buffer, 0, bytes));
    double *loop[3] = {&f->loop_seconds, &f->loop_pinned_seconds, &f->loop_device_seconds};
    double *batch[3] = {&f->frames_seconds, &f->frames_pinned_seconds, &f->frames_device_seconds};
    for (int w = 0; w < 3; w++) {
        *loop[w] = *batch[w] = 1e30;
    }
    for (int r = 0; r < repeat; r++) {
        for (int w = 0; w < 3; w++) {
            double seconds =
                solve_loop(context, operators, d_observed, frames, options, ways[w], alone);
            *loop[w] = bench_smaller(*loop[w], seconds);
            free_results(alone, frames);
            seconds =
                solve_frames(context, operators, d_observed, frames, options, ways[w], together);
            *batch[w] = bench_smaller(*batch[w], seconds);
            free_results(together, frames);
        }
    }
    (void)solve_loop(context, operators, d_observed, frames, options, ways[0], alone);
    (void)solve_frames(context, operators, d_observed, frames, options, ways[0], together);
    f->same_bits = 1;
    for (int64_t k = 0; k < frames; k++) {
        f->same_bits = f->same_bits && same_result(alone[k], together[k]);
    }
    spart_mart_result *into[max_frames];
    for (int w = 1; w < 3; w++) {
        (void)solve_loop(context, operators, d_observed, frames, options, ways[w], into);
        f->same_bits = f->same_bits && same_solutions(context, ways[w], alone, frames);
        free_results(into, frames);
        (void)solve_frames(context, operators, d_observed, frames, options, ways[w], into);
        f->same_bits = f->same_bits && same_solutions(context, ways[w], alone, frames);
        free_results(into, frames);
    }
    free_results(alone, frames);
    free_results(together, frames);
    cudaFreeHost(ways[1].buffer);
    spart_device_free(context, ways[2].buffer);
}

/* The plain frames solve's first call on a context of its own (the same
 * device and default stream): what a caller who solves once per context
 * pays, its pool made and its memory mapped in the call. */
static double first_call_seconds(const spart_mart_operators *operators, const double *d_observed,
                                 int64_t frames, const spart_mart_options *options)
{
    spart_context *fresh = NULL;
    CHECK_SPART(fresh, spart_context_create(&fresh));
    CHECK_SPART(fresh, spart_context_set_cuda_device(fresh, 0));
    spart_mart_result *results[max_frames];
    double t = bench_seconds();
    CHECK_SPART(fresh, spart_mart_solve_frames(fresh, operators, frames, d_observed, options,
                                               frames, results));
    double seconds = bench_seconds() - t;
    for (int64_t k = 0; k < frames; k++) {
        spart_mart_result_free(results[k]);
    }
    spart_context_free(fresh);
    return seconds;
}

/* ms an iteration of a frame costs: the difference of the solves of
 * `iterations` and of 1 iteration, over the frames and the extra
 * iterations; and the rest of a frame's solve (its cost at 1 iteration less
 * that iteration). */
static double iteration_ms(double one, double all, int64_t frames, int iterations)
{
    return iterations > 1 ? (all - one) / (double)(iterations - 1) / (double)frames * 1e3 : 0.0;
}

static double fixed_ms(double one, double all, int64_t frames, int iterations)
{
    return one / (double)frames * 1e3 - iteration_ms(one, all, frames, iterations);
}

/* Every frame count on an n x n scene: the instrument, 64 frames observed
 * with their own noise, the operators moved to the device. */
static void run_scene(spart_context *context, int n, int iterations, int repeat, double rate,
                      figures *out)
{
    double angle[4], velocity[21], wavelength[21], sensor_x[129], sensor_y[65];
    double *x = malloc((size_t)(n + 1) * sizeof(double));
    double *y = malloc((size_t)(n + 1) * sizeof(double));
    spart_instrument_params params;
    bench_mart_params(n, angle, velocity, wavelength, x, y, sensor_x, sensor_y, &params);
    int64_t scene_size = (int64_t)BENCH_MART_BINS * n * n;
    double *scene = malloc((size_t)scene_size * sizeof(double));
    CHECK_SPART(context, spart_scene_gaussians(context, 171.0, BENCH_MART_BINS, velocity, n, x, n,
                                               y, NULL, wavelength, scene));
    spart_instrument *instrument = NULL;
    CHECK_SPART(context, spart_instrument_create(context, &params, &instrument));
    int64_t pixels = BENCH_MART_CHANNELS * spart_instrument_image_size(instrument);
    double *observed = malloc((size_t)(max_frames * pixels) * sizeof(double));
    for (int64_t k = 0; k < max_frames; k++) {
        CHECK_SPART(context, spart_instrument_observe(context, instrument, scene, (uint64_t)(1 + k),
                                                      observed + k * pixels, NULL));
    }
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    CHECK_SPART(context, spart_instrument_mart_operators(context, instrument, &pair, &operators));
    spart_regridder *forward = NULL, *backward = NULL;
    CHECK_SPART(context, spart_regridder_to_device(context, pair.forward, &forward));
    CHECK_SPART(context, spart_regridder_to_device(context, pair.backward, &backward));
    pair.forward = forward;
    pair.backward = backward;
    CHECK_SPART(context, spart_mart_operators_from_regridders(context, &pair, &operators));
    void *d_observed = NULL;
    size_t bytes = (size_t)(max_frames * pixels) * sizeof(double);
    CHECK_SPART(context, spart_device_malloc(context, bytes, &d_observed));
    CHECK_SPART(context, spart_device_copy_to_device(context, d_observed, observed, bytes));
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = iterations;
    spart_mart_options one = options;
    one.max_iterations = 1;
    for (int k = 0; k < num_frame_counts; k++) {
        figures *f = &out[k];
        f->scene = n;
        f->frames = frame_counts[k];
        figures single;
        time_solves(context, &operators, d_observed, f->frames, &one, repeat, &single);
        f->loop_one_seconds = single.loop_seconds;
        f->frames_one_seconds = single.frames_seconds;
        time_solves(context, &operators, d_observed, f->frames, &options, repeat, f);
        f->first_seconds = first_call_seconds(&operators, d_observed, f->frames, &options);
        f->same_bits = f->same_bits && single.same_bits;
        f->forward_ms =
            1e3 * bench_device_product_seconds(context, forward, f->frames, 1, 10, NULL);
        f->backward_ms =
            1e3 * bench_device_product_seconds(context, backward, f->frames, 1, 10, NULL);
        f->forward_floor_ms = bench_product_bytes(forward, f->frames) / rate * 1e3;
        f->backward_floor_ms = bench_product_bytes(backward, f->frames) / rate * 1e3;
        printf("%4d x %-4d F = %2lld: loop %9.1f frames/s, frames solve %9.1f frames/s (%.2fx), "
               "%s; forward %.3f ms (%.0f %% of the copy rate), backward %.3f ms (%.0f %%)\n",
               n, n, (long long)f->frames, (double)f->frames / f->loop_seconds,
               (double)f->frames / f->frames_seconds, f->loop_seconds / f->frames_seconds,
               f->same_bits ? "same bits" : "BITS DIFFER", f->forward_ms,
               100.0 * f->forward_floor_ms / f->forward_ms, f->backward_ms,
               100.0 * f->backward_floor_ms / f->backward_ms);
        printf("              into a pinned buffer: loop %.1f, frames solve %.1f frames/s "
               "(%.2fx); into a device buffer: loop %.1f, frames solve %.1f frames/s (%.2fx); "
               "plain, first call on a fresh context: %.1f frames/s (%.2fx)\n",
               (double)f->frames / f->loop_pinned_seconds,
               (double)f->frames / f->frames_pinned_seconds,
               f->loop_pinned_seconds / f->frames_pinned_seconds,
               (double)f->frames / f->loop_device_seconds,
               (double)f->frames / f->frames_device_seconds,
               f->loop_device_seconds / f->frames_device_seconds,
               (double)f->frames / f->first_seconds, f->loop_seconds / f->first_seconds);
        printf("              a frame's solve besides its iterations: loop %.3f ms, frames "
               "solve %.3f ms; an iteration of a frame: loop %.4f ms, frames solve %.4f ms\n",
               fixed_ms(f->loop_one_seconds, f->loop_seconds, f->frames, iterations),
               fixed_ms(f->frames_one_seconds, f->frames_seconds, f->frames, iterations),
               iteration_ms(f->loop_one_seconds, f->loop_seconds, f->frames, iterations),
               iteration_ms(f->frames_one_seconds, f->frames_seconds, f->frames, iterations));
        fflush(stdout);
    }
    spart_device_free(context, d_observed);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_instrument_free(instrument);
    free(observed);
    free(scene);
    free(x);
    free(y);
}

static void write_markdown(const char *path, int argc, char **argv, const figures *all, int count,
                           int iterations, double rate)
{
    FILE *out = bench_markdown_open(path, argc, argv, omp_get_max_threads(),
                                    "the best of the repeats of each whole solve (the one-frame "
                                    "loop and the frames solves alternate, each started after the "
                                    "results of the one before are freed; the bits compared in a "
                                    "pass of their own); a product the best of 10, each waited "
                                    "for");
    if (out == NULL) {
        return;
    }
    struct cudaDeviceProp properties;
    int runtime = 0;
    if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess) {
        fprintf(out, "- GPU: %s\n", properties.name);
    }
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        fprintf(out, "- CUDA runtime %d.%d\n", runtime / 1000, (runtime % 1000) / 10);
    }
    fprintf(out,
            "- problem: the benchmarks' instrument (4 channels, 20 bins, 128 x 64 sensor), "
            "float64, %d iterations a frame (SPART_MART_STOP_COUNT), each frame its own noise; "
            "peer: spart_mart_solve once a frame (its graphs of 8 iterations); the frames solve "
            "takes every frame in one batch\n"
            "- floor of a product: CSR arrays once plus x and y of every frame, at the device "
            "copy rate measured in the same run (%.0f GB/s, read + written)\n"
            "- an iteration of a frame: (the solve of K iterations - the solve of 1) / (K - 1) "
            "/ frames; a frame besides its iterations: the solve of 1 iteration / frames less "
            "that (allocations, graphs, the guess, the results copied back)\n"
            "- the plain frames solve takes its working memory from the context's own pool "
            "(stream-ordered, kept between calls): its column is warm; the first call on a fresh "
            "context (one run, not the best of the repeats) makes the pool and maps the memory\n"
            "- plain: spart_mart_solve once a frame against spart_mart_solve_frames, each "
            "solution copied into host memory its result allocates (first touched by that copy "
            "unless glibc reuses freed pages); into pinned / into device: the same solves "
            "through spart_mart_solve_into (frame k into place k) and "
            "spart_mart_solve_frames_into, both writing into one buffer of F solutions the "
            "program allocated once before the timing (cudaMallocHost / device memory); each "
            "speed-up is the loop's seconds over the frames solve's, the same way on both "
            "sides\n\n",
            iterations, rate / 1e9);
    fprintf(out, "| scene | frames | plain: loop, frames/s | plain: frames solve, frames/s | "
                 "plain: speed-up | into pinned: loop / frames solve, frames/s | into pinned: "
                 "speed-up | into device: loop / frames solve, frames/s | into device: speed-up "
                 "| same bits | plain frames solve, first call on a fresh context, frames/s "
                 "(speed-up) | ms an iteration of a frame (plain), loop / frames | ms a frame "
                 "besides its iterations (plain), loop / frames | forward ms | forward, %% of "
                 "copy rate | backward ms | backward, %% of copy rate |\n");
    bench_markdown_rule(out, 16);
    for (int k = 0; k < count; k++) {
        const figures *f = &all[k];
        fprintf(out,
                "| %d x %d | %lld | %.1f | %.1f | %.2fx | %.1f / %.1f | %.2fx | %.1f / %.1f | "
                "%.2fx | %s | %.1f (%.2fx) | %.4f / %.4f | "
                "%.3f / %.3f | %.3f | %.0f | %.3f | %.0f |\n",
                f->scene, f->scene, (long long)f->frames, (double)f->frames / f->loop_seconds,
                (double)f->frames / f->frames_seconds, f->loop_seconds / f->frames_seconds,
                (double)f->frames / f->loop_pinned_seconds,
                (double)f->frames / f->frames_pinned_seconds,
                f->loop_pinned_seconds / f->frames_pinned_seconds,
                (double)f->frames / f->loop_device_seconds,
                (double)f->frames / f->frames_device_seconds,
                f->loop_device_seconds / f->frames_device_seconds, f->same_bits ? "yes" : "NO",
                (double)f->frames / f->first_seconds, f->loop_seconds / f->first_seconds,
                iteration_ms(f->loop_one_seconds, f->loop_seconds, f->frames, iterations),
                iteration_ms(f->frames_one_seconds, f->frames_seconds, f->frames, iterations),
                fixed_ms(f->loop_one_seconds, f->loop_seconds, f->frames, iterations),
                fixed_ms(f->frames_one_seconds, f->frames_seconds, f->frames, iterations),
                f->forward_ms, 100.0 * f->forward_floor_ms / f->forward_ms, f->backward_ms,
                100.0 * f->backward_floor_ms / f->backward_ms);
    }
    fclose(out);
}

int main(int argc, char **argv)
{
    int iterations = 16, repeat = 3, quick = 0;
    const char *markdown = NULL;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--iterations") == 0 && k + 1 < argc) {
            iterations = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--repeat") == 0 && k + 1 < argc) {
            repeat = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[k], "--markdown") == 0 && k + 1 < argc) {
            markdown = argv[++k];
        } else {
            fprintf(stderr, "usage: %s [--iterations K] [--repeat R] [--quick] [--markdown FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (iterations < 1 || repeat < 1) {
        fprintf(stderr, "%s: --iterations and --repeat must be at least 1\n", argv[0]);
        return 2;
    }
    spart_context *context = NULL;
    CHECK_SPART(context, spart_context_create(&context));
    if (spart_context_set_cuda_device(context, 0) != SPART_OK) {
        printf("skipped: %s\n", spart_context_error(context));
        spart_context_free(context);
        return 77;
    }
    double rate = bench_device_copy_rate(context, (size_t)1 << 28, 6);
    printf("device copy rate %.0f GB/s (read + written); %d iterations a frame\n", rate / 1e9,
           iterations);
    figures all[2 * num_frame_counts];
    int scenes = quick ? 1 : 2;
    const int sizes[2] = {64, 256};
    for (int s = 0; s < scenes; s++) {
        run_scene(context, sizes[s], iterations, repeat, rate, all + s * num_frame_counts);
    }
    int count = scenes * num_frame_counts;
    if (markdown != NULL) {
        write_markdown(markdown, argc, argv, all, count, iterations, rate);
    }
    int failed = 0;
    for (int k = 0; k < count; k++) {
        failed |= !all[k].same_bits;
    }
    spart_context_free(context);
    if (failed) {
        fprintf(stderr, "%s: the frames solve and the one-frame loop gave different bits\n",
                argv[0]);
    }
    return failed;
}
