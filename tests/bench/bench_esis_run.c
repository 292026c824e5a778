/*
 * tests/bench/bench_esis_run.c: the ESIS-scale run of issue 26 from the
 * instrument description to the solutions on disk, on one CUDA device,
 * stage by stage:
 *
 *   build     spart_instrument_create on the host (weights, assembly into
 *             two float32 Regridders; in memory, or streamed within
 *             --budget GB: params.memory_budget), or with --device on the
 *             CUDA device (params.on_device: weights, transpose, factors
 *             and assembly there; --budget GB then of device memory an
 *             operator)
 *   upload    both operators copied to the device (spart_regridder_to_device);
 *             the host instrument is then freed (none with --device)
 *   frames    synthetic observations of moving features (not part of the
 *             run: a production run reads them): the eight Gaussians of
 *             spart_scene_gaussians in every line, drifting 0.75" a frame,
 *             made on the host, their expected images (no noise) made by
 *             the device's forward operator
 *   solve     a batch at a time: every frame --iterations MART iterations
 *             (SPART_MART_STOP_COUNT), in batches of --batch frames
 *             (default: the batch the WHOLE problem's sizes would fit on
 *             this device, so that the slice runs as the whole would),
 *             each batch's solutions into one of two pinned host slots
 *             taken in turn (spart_mart_solve_frames_into: one copy a batch
 *             at the bus's rate; a slot is reused once its last batch is
 *             written); --plain: spart_mart_solve_frames, each result's
 *             own solution
 *   write     every frame's solution as the spart command writes it
 *             (<out>/frame-NNNN/solution.fits through the command's own
 *             fits_cube_write, under a temporary name, flushed to disk
 *             and renamed: output_files.h), float64 or --float32, by a
 *             writer thread while the next batch is solved
 *             (--serial-write: after each batch, by the main thread);
 *             each file removed once written, by a third thread (not in
 *             the writer's way: a production run keeps its files) unless
 *             --keep. --fsync-thread: each file flushed to disk and
 *             renamed by a second thread while the writer fills the next
 *             one's pages (the disk's write-back beside the page copy).
 *             --write-frames N writes the first N only
 *
 * The table gives the solve calls' time, the writer's own time, and the
 * wall time of the two together (from the first batch to the last file):
 * the whole run is the build, the upload, the pinning and that wall time.
 * --distinct-frames K synthesises K scenes only (frame f observes scene f
 * mod K: the solve costs the same; the frames' Gaussians cost the job's
 * time, not the run's).
 *
 * and, beside the run: the device's copy rate (a device-to-device copy of
 * 1 GiB), one product of each operator over 1 vector and over a batch of
 * vectors with the fraction of the copy rate it reaches (the bytes it must
 * move: CSR arrays once, x and y of every vector), and the peak device
 * memory in use (cudaMemGetInfo sampled every 2 ms by a second thread,
 * less what was in use before the program touched the device).
 *
 * The whole problem (7 lines x 24 bins x 1139^2 cells x 4 channels, 1.74e9
 * weights a direction) is larger than one 150 s job: by default the
 * benchmark runs the whole field of one line (1/7 of the problem) and
 * extrapolates every stage that grows with the weights and the scene by
 * the ratio of (channel, bin, cell) triples (the images do not grow, so
 * this overestimates a little). Run with --lines 2 to see how close to
 * linear the stages are.
 *
 *   bench_esis_run [--cells N] [--lines L] [--bins B] [--frames F]
 *                  [--iterations I] [--batch B] [--budget GB] [--device]
 *                  [--write-frames N] [--float32] [--serial-write] [--plain]
 *                  [--fsync-thread]
 *                  [--distinct-frames K] [--breakdown] [--out DIR] [--keep]
 *                  [--markdown FILE]
 *
 * Needs a CUDA device (exits 77 without one). Exits 1 on a spart error.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_device_product.h"
#include "bench_esis_params.h"
#include "bench_esis_writer.h"
#include "bench_util.h"
#include "cli/fits_cube.h"
#include "cli/output_files.h"
#include "spart.h"

typedef struct options {
    int cells, lines, bins, frames, iterations, batch, keep, device, write_frames, breakdown;
    int float32;         /* --float32: solutions written as float32 (BITPIX -32) */
    int serial_write;    /* --serial-write: each batch written after it, not beside the next */
    int plain;           /* --plain: the plain call's solutions, not pinned slots */
    int fsync_thread;    /* --fsync-thread: each file flushed and renamed by a second thread */
    int distinct_frames; /* --distinct-frames K: frame f observes scene f mod K (0: all) */
    double budget_gb;
    const char *out, *markdown;
} options;

static void usage(const char *name)
{
    fprintf(stderr,
            "usage: %s [--cells N] [--lines L (1-7)] [--bins B] [--frames F] [--iterations I] "
            "[--batch B] [--budget GB] [--device] [--write-frames N] [--float32] [--serial-write] "
            "[--fsync-thread] "
            "[--plain] "
            "[--distinct-frames K] [--breakdown] [--out DIR] [--keep] [--markdown FILE]\n",
            name);
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = {.cells = ESIS_CELLS,
                 .lines = 1,
                 .bins = ESIS_BINS,
                 .frames = 30,
                 .iterations = 32,
                 .out = "esis_run_out"};
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--keep") == 0 || strcmp(argv[k], "--device") == 0 ||
            strcmp(argv[k], "--breakdown") == 0 || strcmp(argv[k], "--float32") == 0 ||
            strcmp(argv[k], "--serial-write") == 0 || strcmp(argv[k], "--plain") == 0 ||
            strcmp(argv[k], "--fsync-thread") == 0) {
            o.fsync_thread |= strcmp(argv[k], "--fsync-thread") == 0;
            o.plain |= strcmp(argv[k], "--plain") == 0;
            o.float32 |= strcmp(argv[k], "--float32") == 0;
            o.serial_write |= strcmp(argv[k], "--serial-write") == 0;
            o.keep |= strcmp(argv[k], "--keep") == 0;
            o.device |= strcmp(argv[k], "--device") == 0;
            o.breakdown |= strcmp(argv[k], "--breakdown") == 0;
            continue;
        }
        const char *value = k + 1 < argc ? argv[k + 1] : NULL;
        if (value == NULL) {
            usage(argv[0]);
        } else if (strcmp(argv[k], "--cells") == 0) {
            o.cells = atoi(value);
        } else if (strcmp(argv[k], "--lines") == 0) {
            o.lines = atoi(value);
        } else if (strcmp(argv[k], "--bins") == 0) {
            o.bins = atoi(value);
        } else if (strcmp(argv[k], "--frames") == 0) {
            o.frames = atoi(value);
        } else if (strcmp(argv[k], "--iterations") == 0) {
            o.iterations = atoi(value);
        } else if (strcmp(argv[k], "--write-frames") == 0) {
            o.write_frames = atoi(value);
        } else if (strcmp(argv[k], "--distinct-frames") == 0) {
            o.distinct_frames = atoi(value);
        } else if (strcmp(argv[k], "--batch") == 0) {
            o.batch = atoi(value);
        } else if (strcmp(argv[k], "--budget") == 0) {
            o.budget_gb = atof(value);
        } else if (strcmp(argv[k], "--out") == 0) {
            o.out = value;
        } else if (strcmp(argv[k], "--markdown") == 0) {
            o.markdown = value;
        } else {
            usage(argv[0]);
        }
        k++;
    }
    if (o.cells < 2 || o.lines < 1 || o.lines > ESIS_LINES || o.bins < 1 || o.frames < 1 ||
        o.iterations < 1 || o.batch < 0 || o.budget_gb < 0 || o.write_frames < 0 ||
        o.distinct_frames < 0) {
        usage(argv[0]);
    }
    if (o.write_frames == 0 || o.write_frames > o.frames) {
        o.write_frames = o.frames;
    }
    if (o.distinct_frames == 0 || o.distinct_frames > o.frames) {
        o.distinct_frames = o.frames;
    }
    return o;
}

/* ---- device memory in use, sampled by a second thread ---------------------------------- */

typedef struct memory_sampler {
    pthread_t thread;
    volatile int stop;
    size_t baseline; /* in use before the program touched the device */
    size_t peak;     /* the most in use seen since, baseline included */
} memory_sampler;

static size_t device_used(void)
{
    size_t free_bytes = 0, total = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total));
    return total - free_bytes;
}

static void *sample_memory(void *user)
{
    memory_sampler *s = user;
    CHECK_CUDA(cudaSetDevice(0));
    while (!s->stop) {
        size_t used = device_used();
        s->peak = used > s->peak ? used : s->peak;
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* Peak resident host memory of this process so far, bytes. */
static double host_peak_bytes(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss * 1024.0;
}

/* ---- the stages ---------------------------------------------------------------------------- */

/* Line k of frame f's scene: the eight Gaussians, moved f x 0.75". */
static void make_line(spart_context *context, const esis_arrays *a, int64_t frame, int k,
                      double *scene)
{
    spart_scene_gaussians_options gaussians;
    spart_scene_gaussians_options_init(&gaussians);
    gaussians.drift = 0.75;
    gaussians.frame = frame;
    CHECK_SPART(context,
                spart_scene_gaussians(context, ESIS_REST[k], a->bins, a->velocity, a->cells,
                                      a->scene, a->cells, a->scene, &gaussians, NULL, scene));
}

/* The observed images of every frame on the device (frames x pixels),
 * expected images of the moving scenes made by the device's forward
 * operator. Scenes are made on the host, a thread a (frame, line). */
static void make_frames(spart_context *context, const esis_arrays *a,
                        const spart_mart_operators *operators, int frames, int distinct,
                        double *d_observed)
{
    int64_t scene_size = operators->scene_size;
    /* a scene a thread, within about 8 GB of host buffers */
    int threads = omp_get_max_threads();
    int64_t fit = (int64_t)(8e9 / ((double)scene_size * sizeof(double)));
    threads = fit < 1 ? 1 : (fit < threads ? (int)fit : threads);
    int64_t pixels = operators->num_channel * operators->image_size;
    double *scenes = esis_alloc((size_t)threads * (size_t)scene_size * sizeof(double));
    double *d_scene = NULL, *d_widths = NULL;
    CHECK_SPART(context, spart_device_malloc(context, (size_t)scene_size * sizeof(double),
                                             (void **)&d_scene));
    CHECK_SPART(context,
                spart_device_malloc(context, (size_t)pixels * sizeof(double), (void **)&d_widths));
    int64_t plane = (int64_t)a->bins * a->cells * a->cells;
    for (int first = 0; first < distinct; first += threads) {
        int count = distinct - first < threads ? distinct - first : threads;
        /* a (frame, line) a task: each line's Gaussians its own call */
#pragma omp parallel for schedule(dynamic, 1)
        for (int task = 0; task < count * a->lines; task++) {
            int k = task / a->lines, line = task % a->lines;
            spart_context *own = NULL;
            if (spart_context_create(&own) != SPART_OK) {
                fprintf(stderr, "cannot create a context\n");
                exit(1);
            }
            make_line(own, a, first + k, line,
                      scenes + (size_t)k * (size_t)scene_size + (size_t)(line * plane));
            spart_context_free(own);
        }
        for (int k = 0; k < count; k++) {
            CHECK_SPART(context, spart_device_copy_to_device(
                                     context, d_scene, scenes + (size_t)k * (size_t)scene_size,
                                     (size_t)scene_size * sizeof(double)));
            CHECK_SPART(context,
                        operators->forward(operators->user, context, d_scene,
                                           d_observed + (int64_t)(first + k) * pixels, d_widths));
        }
    }
    /* frames beyond the distinct ones repeat them (f mod distinct) */
    for (int f = distinct; f < frames; f++) {
        CHECK_SPART(context,
                    spart_device_copy_on_device(context, d_observed + (int64_t)f * pixels,
                                                d_observed + (int64_t)(f % distinct) * pixels,
                                                (size_t)pixels * sizeof(double)));
    }
    double back = 0.0;
    CHECK_SPART(context, spart_device_copy_to_host(context, &back, d_observed, sizeof back));
    spart_device_free(context, d_scene);
    spart_device_free(context, d_widths);
    free(scenes);
}

/* ---- the report ---------------------------------------------------------------------------- */

typedef struct figures {
    double build, upload, frames, solve, write;
    double solve_write; /* the solve and the writer together: first batch to last file */
    double pin, wait;   /* pinning the two slots; the solve waiting for a slot */
    double commit;      /* --fsync-thread: the committing thread's time */
    double host_peak, device_baseline, device_peak_build, device_peak, device_total;
    double weights, csr_bytes, workspace_frame, observed_bytes, written_bytes;
    double rate;
    double forward_1, backward_1, forward_b, backward_b; /* seconds */
    double forward_bytes_1, backward_bytes_1, forward_bytes_b, backward_bytes_b;
    int batch, batch_full, min_iterations, max_iterations;
    double solve_1, solve_8; /* --breakdown: the same solve at 1 and 8 iterations */
    double factor;
} figures;

static void print_report(FILE *out, const options *o, const figures *g)
{
    double x = g->factor;
    double run = g->build + g->upload + g->pin + g->solve_write;
    fprintf(out, "\n| stage | this run s | whole ESIS s (x %.2f) |\n", x);
    bench_markdown_rule(out, 3);
    fprintf(out, "| build (%s, %s) | %.2f | %.1f |\n", o->budget_gb > 0 ? "streamed" : "in memory",
            o->device ? "device" : "host", g->build, g->build * x);
    fprintf(out, "| upload (both operators) | %.2f | %.1f |\n", g->upload, g->upload * x);
    fprintf(out, "| pin two host slots of a batch's solutions (%s) | %.2f | %.1f |\n",
            o->plain ? "none: --plain, the results' own solutions" : "cudaHostAlloc", g->pin,
            g->pin * x);
    fprintf(out,
            "| solve (%d frames x %d iterations, batches of %d, %s: the solve calls' time) | "
            "%.2f | %.1f |\n",
            o->frames, o->iterations, g->batch,
            o->plain ? "spart_mart_solve_frames" : "spart_mart_solve_frames_into pinned slots",
            g->solve, g->solve * x);
    fprintf(out,
            "| write (%d of %d solutions, %.2f GB %s, %s: the writer's time, %s) | %.2f | "
            "%.1f |\n",
            o->write_frames, o->frames, g->written_bytes / 1e9, o->float32 ? "float32" : "float64",
            o->fsync_thread ? "into the page cache (flushed below)"
                            : "each flushed to disk and renamed into place",
            o->serial_write ? "after each batch" : "beside the next batch's solve", g->write,
            g->write * x);
    if (o->fsync_thread) {
        fprintf(out,
                "| flush and rename (a second thread's time, beside the writer: --fsync-thread) | "
                "%.2f | %.1f |\n",
                g->commit, g->commit * x);
    }
    fprintf(out,
            "| solve and write together (the first batch to the last file: the wall time) | %.2f | "
            "%.1f |\n",
            g->solve_write, g->solve_write * x);
    fprintf(out, "| (of which the solve waited for the writer to free a slot) | %.2f | %.1f |\n",
            g->wait, g->wait * x);
    fprintf(out, "| **whole run** (build + upload + pin + solve and write)%s | %.2f | %.1f |\n",
            o->write_frames < o->frames ? " (not every solution written)" : "", run, run * x);
    fprintf(out, "| (frames synthesised, not in the run%s) | %.2f | %.1f |\n",
            o->distinct_frames < o->frames ? "; distinct scenes only, the others repeat them" : "",
            g->frames, g->frames * x);
    double iteration_ms = 1e3 * g->solve / ((double)o->frames * o->iterations);
    fprintf(out,
            "\nMART: %.3f ms a frame-iteration (%d-%d iterations a frame); the goal's 10 s for "
            "30 x 32 whole-ESIS iterations is %.2f ms a frame-iteration there, %.3f ms here "
            "(/ %.2f).\n",
            iteration_ms, g->min_iterations, g->max_iterations, 10e3 / (30.0 * 32.0),
            10e3 / (30.0 * 32.0) / x, x);
    if (g->solve_8 > 0) {
        double per_iteration = (g->solve_8 - g->solve_1) / (7.0 * o->frames);
        double once = g->solve_1 / o->frames - per_iteration;
        double products = (g->forward_b + g->backward_b) / g->batch;
        fprintf(out,
                "\nThe solve split (--breakdown: the same solve to 1 and to 8 iterations): "
                "%.2f and %.2f s; an iteration of a frame %.3f ms (whole ESIS x %.2f: %.2f ms), "
                "a frame once (observation backprojected, guess, result to the host) %.1f ms "
                "(whole: %.0f ms). The plain products over a batch take %.3f ms a frame (%.0f %% "
                "of an iteration).\n",
                g->solve_1, g->solve_8, 1e3 * per_iteration, x, 1e3 * per_iteration * x, 1e3 * once,
                1e3 * once * x, 1e3 * products, 100.0 * products / per_iteration);
    }
    fprintf(out,
            "\n| memory | this run GB | whole ESIS GB |\n|---|---|---|\n"
            "| host peak (resident) | %.2f | %s |\n"
            "| device peak in the build (sampled, less %.2f GB in use before) | %.2f | |\n"
            "| device peak after it (upload, frames, solve, products) | %.2f | %.1f (operators "
            "%.1f + observed %.2f + %d frames' working arrays %.1f) |\n"
            "| device total | %.1f | |\n",
            g->host_peak / 1e9, "see esis-notes (38-64 streamed, 127-148 in memory)",
            g->device_baseline / 1e9, (g->device_peak_build - g->device_baseline) / 1e9,
            (g->device_peak - g->device_baseline) / 1e9,
            (g->csr_bytes * x + g->observed_bytes + g->batch_full * g->workspace_frame * x) / 1e9,
            g->csr_bytes * x / 1e9, g->observed_bytes / 1e9, g->batch_full,
            g->batch_full * g->workspace_frame * x / 1e9, g->device_total / 1e9);
    fprintf(out,
            "\n| product | vectors | ms | bytes moved (GB) | GB/s | of the copy rate (%.0f GB/s) "
            "|\n",
            g->rate / 1e9);
    bench_markdown_rule(out, 6);
    const char *names[4] = {"forward", "backward", "forward", "backward"};
    double seconds[4] = {g->forward_1, g->backward_1, g->forward_b, g->backward_b};
    double bytes[4] = {g->forward_bytes_1, g->backward_bytes_1, g->forward_bytes_b,
                       g->backward_bytes_b};
    int vectors[4] = {1, 1, g->batch, g->batch};
    for (int k = 0; k < 4; k++) {
        fprintf(out, "| %s | %d | %.3f | %.3f | %.0f | %.0f %% |\n", names[k], vectors[k],
                1e3 * seconds[k], bytes[k] / 1e9, bytes[k] / seconds[k] / 1e9,
                100.0 * bytes[k] / seconds[k] / g->rate);
    }
}

/* --breakdown: the same frames solved to 1 and to 8 iterations (then
 * freed), so that the solve splits into what a frame costs once (the
 * backprojection of its observation, the first guess, its result copied
 * to the host: solve_1 less an iteration) and what an iteration costs
 * ((solve_8 - solve_1) / 7). */
static void breakdown(spart_context *context, const spart_mart_operators *operators,
                      const options *o, const double *d_observed, const spart_mart_options *mart,
                      figures *g)
{
    spart_mart_result **results = calloc((size_t)o->frames, sizeof *results);
    double *seconds[2] = {&g->solve_1, &g->solve_8};
    const int64_t counts[2] = {1, 8};
    for (int k = 0; k < 2; k++) {
        spart_mart_options short_run = *mart;
        short_run.max_iterations = counts[k];
        double start = bench_seconds();
        CHECK_SPART(context, spart_mart_solve_frames(context, operators, o->frames, d_observed,
                                                     &short_run, g->batch, results));
        *seconds[k] = bench_seconds() - start;
        for (int f = 0; f < o->frames; f++) {
            spart_mart_result_free(results[f]);
        }
    }
    free(results);
    printf("  breakdown: solve to 1 iteration %.2f s, to 8 %.2f s\n", g->solve_1, g->solve_8);
}

/* ---- the run ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0); /* each stage's line kept if the run is cut short */
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        printf("bench_esis_run: no CUDA device; skipped\n");
        return 77;
    }
    figures g;
    memset(&g, 0, sizeof g);
    CHECK_CUDA(cudaSetDevice(0));
    CHECK_CUDA(cudaFree(NULL)); /* the runtime's own context, before the baseline */
    size_t free_bytes = 0, total = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total));
    g.device_total = (double)total;
    memory_sampler sampler = {0};
    sampler.baseline = total - free_bytes;
    sampler.peak = sampler.baseline;
    g.device_baseline = (double)sampler.baseline;
    if (pthread_create(&sampler.thread, NULL, sample_memory, &sampler) != 0) {
        fprintf(stderr, "cannot start the memory sampler\n");
        return 1;
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    esis_arrays arrays;
    spart_instrument_params params;
    esis_params(context, o.cells, o.lines, o.bins, o.budget_gb * 1e9, &arrays, &params);
    params.on_device = o.device;
    g.factor = esis_full_factor(&arrays);
    printf("ESIS run: %d lines x %d bins x %d^2 cells x %d channels (1/%.2f of the whole), %d "
           "frames x %d iterations, %d host threads\n",
           o.lines, o.bins, o.cells, ESIS_CHANNELS, g.factor, o.frames, o.iterations,
           omp_get_max_threads());

    /* build */
    double start = bench_seconds();
    spart_instrument *instrument = NULL;
    CHECK_SPART(context, spart_instrument_create(context, &params, &instrument));
    g.build = bench_seconds() - start;
    g.host_peak = host_peak_bytes();
    /* the build's peak, then the rest's from what the build left */
    g.device_peak_build = (double)sampler.peak;
    sampler.peak = device_used();
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    CHECK_SPART(context, spart_instrument_mart_operators(context, instrument, &pair, &operators));
    g.weights = (double)spart_regridder_num_entries(pair.forward);
    g.csr_bytes = bench_csr_bytes(pair.forward) + bench_csr_bytes(pair.backward);
    printf("  build %.2f s: %.4g weights a direction, CSR %.2f GB, host peak %.2f GB\n", g.build,
           g.weights, g.csr_bytes / 1e9, g.host_peak / 1e9);

    /* upload (built on the device: nothing to copy, the instrument owns them) */
    spart_regridder *forward = NULL, *backward = NULL;
    const spart_regridder *d_forward = pair.forward, *d_backward = pair.backward;
    if (!o.device) {
        start = bench_seconds();
        CHECK_SPART(context, spart_regridder_to_device(context, pair.forward, &forward));
        CHECK_SPART(context, spart_regridder_to_device(context, pair.backward, &backward));
        g.upload = bench_seconds() - start;
        pair.forward = d_forward = forward;
        pair.backward = d_backward = backward;
        CHECK_SPART(context, spart_mart_operators_from_regridders(context, &pair, &operators));
        spart_instrument_free(instrument);
        instrument = NULL;
    }
    printf("  upload %.2f s\n", g.upload);

    /* the batch the whole problem would fit, and this run's */
    spart_mart_options mart;
    spart_mart_options_init(&mart);
    mart.stop_rule = SPART_MART_STOP_COUNT;
    mart.max_iterations = o.iterations;
    size_t one_frame = 0;
    CHECK_SPART(context,
                spart_mart_frames_workspace_size(context, &operators, 1, &mart, 1, &one_frame));
    g.workspace_frame = (double)one_frame;
    int64_t pixels = operators.num_channel * operators.image_size;
    g.observed_bytes = (double)o.frames * (double)pixels * 8.0;
    double room = (double)free_bytes - g.csr_bytes * g.factor - g.observed_bytes - 4e9;
    g.batch_full = (int)(room / (g.workspace_frame * g.factor));
    g.batch_full = g.batch_full < 1 ? 1 : (g.batch_full > o.frames ? o.frames : g.batch_full);
    g.batch = o.batch > 0 ? o.batch : g.batch_full;
    printf("  working arrays %.2f GB a frame (whole ESIS %.1f GB): batches of %d (the whole "
           "problem fits %d)\n",
           g.workspace_frame / 1e9, g.workspace_frame * g.factor / 1e9, g.batch, g.batch_full);

    /* frames */
    double *d_observed = NULL;
    CHECK_SPART(context,
                spart_device_malloc(context, (size_t)g.observed_bytes, (void **)&d_observed));
    start = bench_seconds();
    make_frames(context, &arrays, &operators, o.frames, o.distinct_frames, d_observed);
    g.frames = bench_seconds() - start;
    printf("  frames %.2f s\n", g.frames);

    /* solve and write: a batch at a time, each batch's solutions written by
     * the writer thread while the next batch is solved (--serial-write:
     * after each batch, by the main thread); each frame's result freed once
     * written. The solutions go into two pinned host slots of a batch each,
     * taken in turn (spart_mart_solve_frames_into: one copy of a batch at
     * the bus's rate); a slot is reused once the writer has written the
     * batch it held. --plain: the plain call, each result's own solution
     * (its fresh pages touched by the library's threads) */
    spart_mart_result **results = calloc((size_t)o.frames, sizeof *results);
    const double **solutions = calloc((size_t)o.frames, sizeof *solutions);
    double *slots[2] = {NULL, NULL};
    size_t slot_bytes = (size_t)g.batch * (size_t)operators.scene_size * sizeof(double);
    start = bench_seconds();
    for (int k = 0; k < 2 && !o.plain; k++) {
        if (cudaHostAlloc((void **)&slots[k], slot_bytes, cudaHostAllocDefault) != cudaSuccess) {
            fprintf(stderr, "cannot pin %.2f GB for the solutions: the plain call instead\n",
                    (double)slot_bytes / 1e9);
            (void)cudaGetLastError();
            o.plain = 1;
        }
    }
    g.pin = o.plain ? 0.0 : bench_seconds() - start;
    writer_state writer;
    memset(&writer, 0, sizeof writer);
    pthread_mutex_init(&writer.lock, NULL);
    pthread_cond_init(&writer.changed, NULL);
    writer.results = results;
    writer.solutions = solutions;
    esis_write_options write_options = {o.out, o.float32, o.keep, o.fsync_thread, o.write_frames};
    writer.o = &write_options;
    writer.a = &arrays;
    writer.catch_up = o.serial_write;
    /* after the writer: the commits (--fsync-thread), then the removals */
    output_file *files = calloc((size_t)o.frames, sizeof *files);
    stage_state committer, remover;
    pthread_t committer_thread, remover_thread;
    if (!o.keep) {
        stage_start(&remover, &remover_thread, 0, files, &write_options, NULL);
    }
    if (o.fsync_thread) {
        stage_start(&committer, &committer_thread, 1, files, &write_options,
                    o.keep ? NULL : &remover);
    }
    writer.files = files;
    writer.after = o.fsync_thread ? &committer : (o.keep ? NULL : &remover);
    pthread_t writer_thread;
    if (!o.serial_write && pthread_create(&writer_thread, NULL, write_frames, &writer) != 0) {
        fprintf(stderr, "cannot start the writer thread\n");
        return 1;
    }
    g.min_iterations = 1 << 30;
    start = bench_seconds();
    for (int first = 0, b = 0; first < o.frames; first += g.batch, b++) {
        int count = o.frames - first < g.batch ? o.frames - first : g.batch;
        double *slot = slots[b % 2];
        if (!o.plain) { /* the slot's batch before last must be written */
            double wait_start = bench_seconds();
            pthread_mutex_lock(&writer.lock);
            while (writer.written < first - g.batch) {
                pthread_cond_wait(&writer.changed, &writer.lock);
            }
            pthread_mutex_unlock(&writer.lock);
            g.wait += bench_seconds() - wait_start;
        }
        double batch_start = bench_seconds();
        if (o.plain) {
            CHECK_SPART(context, spart_mart_solve_frames(context, &operators, count,
                                                         d_observed + (int64_t)first * pixels,
                                                         &mart, count, results + first));
        } else {
            CHECK_SPART(context,
                        spart_mart_solve_frames_into(context, &operators, count,
                                                     d_observed + (int64_t)first * pixels, &mart,
                                                     count, NULL, 0, slot, 0, results + first));
        }
        g.solve += bench_seconds() - batch_start;
        for (int f = first; f < first + count; f++) {
            int n = (int)spart_mart_result_num_iterations(results[f]);
            g.min_iterations = n < g.min_iterations ? n : g.min_iterations;
            g.max_iterations = n > g.max_iterations ? n : g.max_iterations;
            solutions[f] = o.plain ? spart_mart_result_solution(results[f])
                                   : slot + (size_t)(f - first) * (size_t)operators.scene_size;
        }
        pthread_mutex_lock(&writer.lock);
        writer.ready = first + count;
        pthread_cond_broadcast(&writer.changed);
        pthread_mutex_unlock(&writer.lock);
        if (o.serial_write) {
            write_frames(&writer);
        }
    }
    double solved = bench_seconds() - start;
    pthread_mutex_lock(&writer.lock);
    writer.finished = 1;
    pthread_cond_broadcast(&writer.changed);
    pthread_mutex_unlock(&writer.lock);
    if (!o.serial_write) {
        pthread_join(writer_thread, NULL);
    }
    if (o.fsync_thread) {
        stage_finish(&committer, committer_thread);
        g.commit = committer.busy;
    }
    g.solve_write = bench_seconds() - start;
    if (!o.keep) {
        stage_finish(&remover, remover_thread);
    }
    free(files);
    for (int k = 0; k < 2; k++) {
        if (slots[k] != NULL) {
            cudaFreeHost(slots[k]);
        }
    }
    free(solutions);
    g.write = writer.busy;
    g.written_bytes = writer.bytes;
    pthread_cond_destroy(&writer.changed);
    pthread_mutex_destroy(&writer.lock);
    printf("  solve %.2f s of calls (%.3f ms a frame-iteration; %d-%d iterations a frame), "
           "all batches solved after %.2f s\n",
           g.solve, 1e3 * g.solve / ((double)o.frames * o.iterations), g.min_iterations,
           g.max_iterations, solved);
    printf("  write %.2f s of the writer's time (%d solutions, %.2f GB, %.2f GB/s with fsync), "
           "%s\n",
           g.write, o.write_frames, g.written_bytes / 1e9, g.written_bytes / g.write / 1e9,
           o.serial_write ? "after each batch" : "beside the next batch's solve");
    printf("  solve and write: %.2f s from the first batch to the last file\n", g.solve_write);
    if (o.breakdown) {
        breakdown(context, &operators, &o, d_observed, &mart, &g);
    }
    spart_device_free(context, d_observed);
    if (!o.keep) {
        rmdir(o.out);
    }
    free(results);

    /* the copy rate and the products */
    g.rate = bench_device_copy_rate(context, (size_t)1 << 30, 5);
    g.forward_1 = bench_device_product_seconds(context, d_forward, 1, 0, 5, NULL);
    g.backward_1 = bench_device_product_seconds(context, d_backward, 1, 0, 5, NULL);
    g.forward_b = bench_device_product_seconds(context, d_forward, g.batch, 0, 5, NULL);
    g.backward_b = bench_device_product_seconds(context, d_backward, g.batch, 0, 5, NULL);
    g.forward_bytes_1 = bench_product_bytes(d_forward, 1);
    g.backward_bytes_1 = bench_product_bytes(d_backward, 1);
    g.forward_bytes_b = bench_product_bytes(d_forward, g.batch);
    g.backward_bytes_b = bench_product_bytes(d_backward, g.batch);
    sampler.stop = 1;
    pthread_join(sampler.thread, NULL);
    g.device_peak = (double)sampler.peak;

    print_report(stdout, &o, &g);
    if (o.markdown != NULL) {
        FILE *out = bench_markdown_open(o.markdown, argc, argv, omp_get_max_threads(),
                                        "one run; products the best of 5");
        if (out != NULL) {
            fprintf(out,
                    "\nESIS run: %d lines x %d bins x %d^2 cells x 4 channels (1/%.2f of the "
                    "whole problem), %.4g weights a direction, float32 CSR %.2f GB; %d frames "
                    "x %d iterations.\n",
                    o.lines, o.bins, o.cells, g.factor, g.weights, g.csr_bytes / 1e9, o.frames,
                    o.iterations);
            print_report(out, &o, &g);
            fclose(out);
        }
    }
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_instrument_free(instrument);
    esis_arrays_free(&arrays);
    spart_context_free(context);
    return 0;
}
