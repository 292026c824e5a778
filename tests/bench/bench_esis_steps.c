/*
 * tests/bench/bench_esis_steps.c: where a MART iteration and a frame's
 * one-off work go at ESIS scale (issue 26), step by step, on a CUDA
 * device: the steps spart_mart_solve_frames runs for a batch of B frames
 * (solvers/mart_frames.c), each timed alone with CUDA events on the
 * context's stream, against its floor (the bytes it must move over the
 * copy rate measured by this program: device to device for the device's
 * steps, device to pinned host for the solutions' trip to the host).
 *
 *   an iteration of a batch:
 *     forward      the forward product over the B scenes (one pass)
 *     measure      the prediction's end and the merits of B x 4 channels
 *                  (spart_mart_finish_and_measure)
 *     decide       the stopping rule of every frame (spart_mart_decide_frames)
 *     advance      the backprojection of the prediction fused with the
 *                  update (spart_mart_update_from_images_frames), and apart
 *                  from it the plain backward product over B vectors
 *   a batch once:
 *     observed     the observations copied in (device to device)
 *     back         their backprojection (backward product over B)
 *     guess        the flat guess of each frame (spart_mart_flat_guess)
 *     clamp        the clamp of the backprojection (B x 4 scenes)
 *     solutions    the B solutions to the caller: the plain call's way (one
 *                  copy a frame into freshly allocated pageable memory),
 *                  into pageable memory touched before, into pinned memory
 *                  (one copy), into device memory (one copy), and into fresh
 *                  pageable memory first touched by the host's threads
 *   beside them, the whole frames solve of the same batch to 9 and to 17
 *   iterations (graphs of 8): an iteration from the difference, the rest
 *   of the batch from the first, both plain and into a device buffer.
 *
 * The instrument is examples/esis.yaml's, or a slice (bench_esis_params.h),
 * built on the device in memory; the frames are the forward images of a
 * fixed positive scene (the costs do not depend on the values).
 *
 *   bench_esis_steps [--cells N] [--lines L] [--bins K] [--batch B]
 *                    [--repeat R] [--budget GB] [--no-split] [--markdown FILE]
 *
 * Defaults: the whole 1139^2 field of one line (1/7 of ESIS), B = 8, built
 * in memory (--budget GB: streamed within GB an operator, as the whole
 * problem must be: --lines 7 --budget 40 --batch 4 --repeat 1 --no-split;
 * --no-split leaves out the plain backward product beside the fused pass,
 * whose B x 4 scenes of output the whole problem has no room for).
 * Exit 77 (skipped) without a device. No timed assertions.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_esis_params.h"
#include "bench_util.h"
#include "spart.h"

typedef struct options {
    int cells, lines, bins, batch, repeat;
    int split;        /* 0 (--no-split): no plain backward product beside the fused one (memory) */
    double budget_gb; /* > 0: built streamed within it (the whole problem needs it) */
    const char *markdown;
} bench_options;

static void usage(const char *name)
{
    fprintf(stderr,
            "usage: %s [--cells N] [--lines L] [--bins K] [--batch B] [--repeat R] "
            "[--budget GB] [--no-split] [--markdown FILE]\n",
            name);
    exit(2);
}

static bench_options parse(int argc, char **argv)
{
    bench_options o = {ESIS_CELLS, 1, ESIS_BINS, 8, 3, 1, 0.0, NULL};
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--no-split") == 0) {
            o.split = 0;
            continue;
        }
        if (k + 1 >= argc) {
            usage(argv[0]);
        }
        if (strcmp(argv[k], "--cells") == 0) {
            o.cells = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--lines") == 0) {
            o.lines = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--bins") == 0) {
            o.bins = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--batch") == 0) {
            o.batch = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--repeat") == 0) {
            o.repeat = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--budget") == 0) {
            o.budget_gb = atof(argv[++k]);
        } else if (strcmp(argv[k], "--markdown") == 0) {
            o.markdown = argv[++k];
        } else {
            usage(argv[0]);
        }
    }
    if (o.cells < 2 || o.lines < 1 || o.lines > ESIS_LINES || o.bins < 1 || o.batch < 1 ||
        o.repeat < 1) {
        usage(argv[0]);
    }
    return o;
}

/* ---- the steps' table ---- */

enum { max_steps = 24 };

typedef struct step {
    const char *name;
    const char *what; /* the bytes its floor counts */
    double bytes;     /* that must move */
    double rate;      /* bytes a second of its floor's copy */
    double ms;        /* the best of the repeats, for the whole batch */
    int per_iteration;
    int images_only; /* moves images only: the whole problem's is the same (same sensor) */
} step;

typedef struct table {
    step steps[max_steps];
    int count;
} table;

static step *add_step(table *t, const char *name, const char *what, double bytes, double rate,
                      int per_iteration)
{
    step *s = &t->steps[t->count++];
    s->name = name;
    s->what = what;
    s->bytes = bytes;
    s->rate = rate;
    s->ms = 1e30;
    s->per_iteration = per_iteration;
    return s;
}

/* ---- the problem on the device ---- */

typedef struct problem {
    spart_context *context;
    cudaStream_t stream;
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    int64_t batch, channels, scene_size, image_size;
    spart_shape scenes_shape, images_shape; /* the products' inputs over the batch */
    double *scenes, *observed, *observed_frames, *predicted, *widths, *observed_back;
    double *predicted_back; /* NULL when the advance is one pass */
    double *back_scratch;   /* the plain backward product's output, for the split */
    double *history;
    spart_mart_run_state *states;
    void *workspace, *product_workspace;
    size_t workspace_bytes, product_bytes;
} problem;

static double *device_doubles(spart_context *context, int64_t n)
{
    void *p = NULL;
    CHECK_SPART(context, spart_device_malloc(context, (size_t)n * sizeof(double), &p));
    return p;
}

static spart_shape batch_shape(spart_shape one, int64_t batch)
{
    spart_shape shape = {one.ndim + 1, {batch}};
    memcpy(shape.dims + 1, one.dims, (size_t)one.ndim * sizeof(int64_t));
    return shape;
}

static void product(problem *p, const spart_regridder *r, const spart_shape *shape, const double *x,
                    double *y, int64_t size_y)
{
    spart_array array = {(void *)x, *shape};
    CHECK_SPART(p->context,
                spart_regridder_apply_workspace(p->context, r, &array, y, size_y,
                                                p->product_workspace, p->product_bytes));
}

/* The arrays of a batch, the frames (forward images of a fixed scene). */
static void make_problem(spart_context *context, cudaStream_t stream, int64_t batch, int split,
                         problem *p)
{
    p->context = context;
    p->stream = stream;
    p->batch = batch;
    p->channels = p->operators.num_channel;
    p->scene_size = p->operators.scene_size;
    p->image_size = p->operators.image_size;
    int64_t images = batch * p->channels * p->image_size;
    p->scenes_shape = batch_shape(spart_regridder_shape_input(p->pair.forward), batch);
    p->images_shape = batch_shape(spart_regridder_shape_input(p->pair.backward), batch);
    p->scenes = device_doubles(context, batch * p->scene_size);
    p->observed = device_doubles(context, images);
    p->observed_frames = device_doubles(context, images);
    p->predicted = device_doubles(context, images);
    p->widths = device_doubles(context, images);
    p->observed_back = device_doubles(context, batch * p->channels * p->scene_size);
    if (!spart_mart_update_from_images_is_one_pass(p->pair.backward)) {
        p->predicted_back = device_doubles(context, batch * p->channels * p->scene_size);
    }
    if (split) {
        p->back_scratch = device_doubles(context, batch * p->channels * p->scene_size);
    }
    p->history = device_doubles(context, batch * 2 * p->channels);
    CHECK_SPART(context, spart_device_malloc(context, (size_t)batch * sizeof(spart_mart_run_state),
                                             (void **)&p->states));
    /* the merits of B x C channels, the flat guesses of B frames */
    size_t merits = spart_mart_workspace_size(batch * p->channels, p->image_size, p->scene_size);
    size_t guesses = (size_t)batch * spart_mart_workspace_size(p->channels, 1, p->scene_size);
    p->workspace_bytes = merits > guesses ? merits : guesses;
    CHECK_SPART(context, spart_device_malloc(context, p->workspace_bytes, &p->workspace));
    size_t forward_bytes = 0, backward_bytes = 0;
    CHECK_SPART(context, spart_regridder_workspace_size(context, p->pair.forward, &p->scenes_shape,
                                                        &forward_bytes));
    CHECK_SPART(context, spart_regridder_workspace_size(context, p->pair.backward, &p->images_shape,
                                                        &backward_bytes));
    p->product_bytes = forward_bytes > backward_bytes ? forward_bytes : backward_bytes;
    if (p->product_bytes > 0) {
        CHECK_SPART(context, spart_device_malloc(context, p->product_bytes, &p->product_workspace));
    }
    /* a positive scene, the same in every frame; its images are the frames */
    double *scene = malloc((size_t)p->scene_size * sizeof(double));
#pragma omp parallel for
    for (int64_t v = 0; v < p->scene_size; v++) {
        scene[v] = 1.0 + (double)(v % 97) / 97.0;
    }
    for (int64_t f = 0; f < batch; f++) {
        CHECK_SPART(context,
                    spart_device_copy_to_device(context, p->scenes + f * p->scene_size, scene,
                                                (size_t)p->scene_size * sizeof(double)));
    }
    free(scene);
    product(p, p->pair.forward, &p->scenes_shape, p->scenes, p->observed_frames, images);
    CHECK_SPART(context, spart_mart_clamp(context, p->observed_frames, images, 1));
    CHECK_CUDA(cudaStreamSynchronize(stream));
}

static void free_problem(problem *p)
{
    void *arrays[] = {p->scenes,  p->observed,      p->observed_frames, p->predicted,
                      p->widths,  p->observed_back, p->predicted_back,  p->back_scratch,
                      p->history, p->states,        p->workspace,       p->product_workspace};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        spart_device_free(p->context, arrays[k]);
    }
}

/* The run states of a fresh batch (every frame going). */
static void reset_states(problem *p)
{
    spart_mart_run_state states[256];
    int64_t n = p->batch < 256 ? p->batch : 256;
    for (int64_t f = 0; f < n; f++) {
        memset(&states[f], 0, sizeof states[f]);
        states[f].stopped = SPART_MART_RUN_GOING;
        states[f].merit_previous = 1e300;
    }
    CHECK_SPART(p->context, spart_memory_copy(p->context, p->states, 1, states, 0,
                                              (size_t)n * sizeof(spart_mart_run_state)));
}

/* ---- timing ---- */

typedef enum which {
    do_observed,
    do_back,
    do_guess,
    do_guess_alone,
    do_clamp,
    do_forward,
    do_measure,
    do_decide,
    do_backward,
    do_advance
} which;

static void run_step(problem *p, which w, const spart_mart_run_rule *rule)
{
    spart_context *c = p->context;
    int64_t images = p->batch * p->channels * p->image_size;
    int64_t channel_scenes = p->channels * p->scene_size;
    switch (w) {
    case do_observed:
        CHECK_CUDA(cudaMemcpyAsync(p->observed, p->observed_frames, (size_t)images * sizeof(double),
                                   cudaMemcpyDeviceToDevice, p->stream));
        break;
    case do_back:
        product(p, p->pair.backward, &p->images_shape, p->observed, p->observed_back,
                p->batch * channel_scenes);
        break;
    case do_guess:
        CHECK_SPART(c, spart_mart_flat_guess_frames(c, p->observed_back, p->batch, p->channels,
                                                    p->scene_size, p->scenes, p->workspace,
                                                    p->workspace_bytes, 1));
        break;
    case do_guess_alone:
        for (int64_t f = 0; f < p->batch; f++) {
            CHECK_SPART(c, spart_mart_flat_guess(
                               c, p->observed_back + f * channel_scenes, p->channels, p->scene_size,
                               p->scenes + f * p->scene_size, p->workspace, p->workspace_bytes, 1));
        }
        break;
    case do_clamp:
        CHECK_SPART(c, spart_mart_clamp(c, p->observed_back, p->batch * channel_scenes, 1));
        break;
    case do_forward:
        product(p, p->pair.forward, &p->scenes_shape, p->scenes, p->predicted, images);
        break;
    case do_measure:
        CHECK_SPART(c, spart_mart_finish_and_measure(c, p->observed, p->predicted, p->widths,
                                                     p->batch * p->channels, p->image_size,
                                                     p->pair.gain, p->pair.read_noise, p->workspace,
                                                     p->workspace_bytes, 1, NULL));
        break;
    case do_decide:
        CHECK_SPART(
            c, spart_mart_decide_frames(c, rule, p->batch, p->workspace, p->history, p->states, 1));
        break;
    case do_backward:
        product(p, p->pair.backward, &p->images_shape, p->predicted, p->back_scratch,
                p->batch * channel_scenes);
        break;
    case do_advance:
        CHECK_SPART(c, spart_mart_update_from_images_frames(
                           c, p->pair.backward, p->predicted, p->observed_back, p->batch,
                           p->channels, 2.0 / (double)p->channels, p->scenes, p->predicted_back,
                           p->product_workspace, p->product_bytes, p->states));
        break;
    }
}

/* ms of one step on the stream (CUDA events around it). */
static double time_step(problem *p, which w, const spart_mart_run_rule *rule)
{
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaEventRecord(start, p->stream));
    run_step(p, w, rule);
    CHECK_CUDA(cudaEventRecord(stop, p->stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return (double)ms;
}

/* Copy rates: device to device (read + written), device to pinned host. */
static double device_rate(spart_context *context, size_t bytes)
{
    void *a = NULL, *b = NULL;
    CHECK_SPART(context, spart_device_malloc(context, bytes, &a));
    CHECK_SPART(context, spart_device_malloc(context, bytes, &b));
    CHECK_CUDA(cudaMemset(a, 0, bytes));
    double best = 1e30;
    for (int k = 0; k < 5; k++) {
        double t = bench_seconds();
        CHECK_SPART(context, spart_device_copy_on_device(context, b, a, bytes));
        best = bench_smaller(best, bench_seconds() - t);
    }
    spart_device_free(context, a);
    spart_device_free(context, b);
    return 2.0 * (double)bytes / best;
}

static double pinned_rate(spart_context *context, size_t bytes)
{
    void *a = NULL, *host = NULL;
    CHECK_SPART(context, spart_device_malloc(context, bytes, &a));
    CHECK_CUDA(cudaMemset(a, 0, bytes));
    CHECK_CUDA(cudaMallocHost(&host, bytes));
    double best = 1e30;
    for (int k = 0; k < 5; k++) {
        double t = bench_seconds();
        CHECK_SPART(context, spart_memory_copy(context, host, 0, a, 1, bytes));
        best = bench_smaller(best, bench_seconds() - t);
    }
    cudaFreeHost(host);
    spart_device_free(context, a);
    return (double)bytes / best;
}

/* The batch's solutions to the caller, five ways (ms for the batch). */
enum { to_fresh, to_touched, to_pinned, to_device, to_prefaulted, num_ways };

static double solutions_ms(problem *p, int way, double *touched, double *pinned, double *device)
{
    size_t scene = (size_t)p->scene_size * sizeof(double);
    size_t all = (size_t)p->batch * scene;
    double t = bench_seconds();
    if (way == to_fresh || way == to_prefaulted) {
        /* as the plain call: a result's solution allocated, then copied */
        for (int64_t f = 0; f < p->batch; f++) {
            char *fresh = malloc(scene);
            if (way == to_prefaulted) {
                int64_t pages = (int64_t)(scene / 4096);
#pragma omp parallel for
                for (int64_t k = 0; k < pages; k++) {
                    fresh[k * 4096] = 0;
                }
            }
            CHECK_SPART(p->context, spart_memory_copy(p->context, fresh, 0,
                                                      p->scenes + f * p->scene_size, 1, scene));
            free(fresh);
        }
    } else {
        double *to = way == to_touched ? touched : way == to_pinned ? pinned : device;
        CHECK_SPART(p->context,
                    spart_memory_copy(p->context, to, way == to_device, p->scenes, 1, all));
    }
    return (bench_seconds() - t) * 1e3;
}

/* ---- the whole solve, for comparison ---- */

static double solve_seconds(problem *p, int64_t iterations, double *into)
{
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = iterations;
    spart_mart_result **results = calloc((size_t)p->batch, sizeof *results);
    double t = bench_seconds();
    CHECK_SPART(p->context, spart_mart_solve_frames_into(p->context, &p->operators, p->batch,
                                                         p->observed_frames, &options, p->batch,
                                                         NULL, 0, into, into != NULL, results));
    double seconds = bench_seconds() - t;
    for (int64_t f = 0; f < p->batch; f++) {
        spart_mart_result_free(results[f]);
    }
    free(results);
    return seconds;
}

/* ---- the report ---- */

static void print_table(FILE *out, const table *t, int64_t batch, double factor)
{
    fprintf(out,
            "| step | what its floor moves | ms a batch | ms a frame | floor ms a frame | "
            "of the floor | ms a frame, whole ESIS (x %.2f; images-only steps x 1) |\n",
            factor);
    bench_markdown_rule(out, 7);
    for (int k = 0; k < t->count; k++) {
        const step *s = &t->steps[k];
        double frame = s->ms / (double)batch;
        double floor = s->rate > 0.0 ? s->bytes / s->rate * 1e3 / (double)batch : 0.0;
        fprintf(out, "| %s%s | %s | %.3f | %.3f | %.3f | %.0f %% | %.2f |\n", s->name,
                s->per_iteration ? " (an iteration)" : " (once)", s->what, s->ms, frame, floor,
                frame > 0.0 ? 100.0 * floor / frame : 0.0, frame * (s->images_only ? 1.0 : factor));
    }
}

int main(int argc, char **argv)
{
    bench_options o = parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        printf("bench_esis_steps: no CUDA device; skipped\n");
        return 77;
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    cudaStream_t stream = NULL;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_SPART(context, spart_context_set_cuda_stream(context, stream));
    esis_arrays arrays;
    spart_instrument_params params;
    esis_params(context, o.cells, o.lines, o.bins, o.budget_gb * 1e9, &arrays, &params);
    params.on_device = 1;
    double factor = esis_full_factor(&arrays);
    double start = bench_seconds();
    spart_instrument *instrument = NULL;
    CHECK_SPART(context, spart_instrument_create(context, &params, &instrument));
    printf("ESIS steps: %d lines x %d bins x %d^2 cells x 4 channels (1/%.2f of the whole), "
           "built on the device in %.2f s; batches of %d\n",
           o.lines, o.bins, o.cells, factor, bench_seconds() - start, o.batch);
    problem p;
    memset(&p, 0, sizeof p);
    CHECK_SPART(context,
                spart_instrument_mart_operators(context, instrument, &p.pair, &p.operators));
    make_problem(context, stream, o.batch, o.split, &p);
    double rate = device_rate(context, (size_t)1 << 30);
    double bus = pinned_rate(context, (size_t)1 << 30);
    printf("copy rates: device %.0f GB/s (read + written), device to pinned host %.1f GB/s\n",
           rate / 1e9, bus / 1e9);

    double B = (double)o.batch, C = (double)p.channels;
    double scene = (double)p.scene_size * 8.0, image = (double)p.image_size * 8.0;
    double forward_csr = bench_csr_bytes(p.pair.forward);
    double backward_csr = bench_csr_bytes(p.pair.backward);
    table t;
    memset(&t, 0, sizeof t);
    step *observed = add_step(&t, "observations copied in", "B C images read + written",
                              2.0 * B * C * image, rate, 0);
    step *back =
        add_step(&t, "their backprojection (backward product)", "CSR once, B C images, B C scenes",
                 backward_csr + B * C * (image + scene), rate, 0);
    step *guess = add_step(&t, "flat guesses (spart_mart_flat_guess_frames, as the solve)",
                           "B C scenes read, B scenes written", B * (C + 1.0) * scene, rate, 0);
    step *guess_alone =
        add_step(&t, "(the same, a spart_mart_flat_guess a frame)",
                 "B C scenes read, B scenes written", B * (C + 1.0) * scene, rate, 0);
    step *clamp = add_step(&t, "clamp of the backprojection", "B C scenes read + written",
                           2.0 * B * C * scene, rate, 0);
    step *forward = add_step(&t, "forward product", "CSR once, B scenes, B C images",
                             forward_csr + B * (scene + C * image), rate, 1);
    step *measure = add_step(&t, "prediction's end and merits (finish_and_measure)",
                             "B C images: predicted, observed read; predicted, widths written",
                             4.0 * B * C * image, rate, 1);
    step *decide =
        add_step(&t, "decide (the rule of every frame)", "nothing (one launch)", 0.0, rate, 1);
    observed->images_only = measure->images_only = decide->images_only = 1;
    step *advance = add_step(&t, "backprojection + update (fused, every frame)",
                             "CSR once, B C images, B C scenes (observed_back), B scenes read + "
                             "written",
                             backward_csr + B * C * (image + scene) + 2.0 * B * scene, rate, 1);
    step *backward =
        !o.split ? NULL
                 : add_step(&t, "(the backward product alone, for the split; not in the sum)",
                            "CSR once, B C images, B C scenes",
                            backward_csr + B * C * (image + scene), rate, 1);
    const char *ways[num_ways] = {
        "solutions: a copy a frame into fresh pageable memory (the plain call)",
        "solutions: one copy into pageable memory touched before",
        "solutions: one copy into pinned memory (spart_mart_solve_frames_into)",
        "solutions: one copy into device memory (spart_mart_solve_frames_into)",
        "solutions: a copy a frame into fresh pageable memory its pages touched by the threads "
        "first"};
    step *solutions[num_ways];
    for (int w = 0; w < num_ways; w++) {
        int on_device = w == to_device;
        solutions[w] =
            add_step(&t, ways[w], on_device ? "B scenes read + written" : "B scenes over the bus",
                     on_device ? 2.0 * B * scene : B * scene, on_device ? rate : bus, 0);
    }
    spart_mart_run_rule rule = {p.channels, 1000000, 0, 0, 0.0, 0.0};
    size_t all = (size_t)(B * scene);
    double *touched = malloc(all), *pinned = NULL, *device = NULL;
    memset(touched, 0, all);
    CHECK_CUDA(cudaMallocHost((void **)&pinned, all));
    memset(pinned, 0, all);
    CHECK_SPART(context, spart_device_malloc(context, all, (void **)&device));
    for (int r = 0; r < o.repeat; r++) {
        reset_states(&p);
        observed->ms = bench_smaller(observed->ms, time_step(&p, do_observed, &rule));
        back->ms = bench_smaller(back->ms, time_step(&p, do_back, &rule));
        guess->ms = bench_smaller(guess->ms, time_step(&p, do_guess, &rule));
        guess_alone->ms = bench_smaller(guess_alone->ms, time_step(&p, do_guess_alone, &rule));
        clamp->ms = bench_smaller(clamp->ms, time_step(&p, do_clamp, &rule));
        forward->ms = bench_smaller(forward->ms, time_step(&p, do_forward, &rule));
        measure->ms = bench_smaller(measure->ms, time_step(&p, do_measure, &rule));
        decide->ms = bench_smaller(decide->ms, time_step(&p, do_decide, &rule));
        advance->ms = bench_smaller(advance->ms, time_step(&p, do_advance, &rule));
        if (backward != NULL) {
            backward->ms = bench_smaller(backward->ms, time_step(&p, do_backward, &rule));
        }
        for (int w = 0; w < num_ways; w++) {
            solutions[w]->ms =
                bench_smaller(solutions[w]->ms, solutions_ms(&p, w, touched, pinned, device));
        }
    }
    print_table(stdout, &t, o.batch, factor); /* kept if the solves are cut short */
    /* the whole solve of the batch: 9 and 17 iterations, plain and into
     * the device buffer */
    double plain9 = 1e30, plain17 = 1e30, into9 = 1e30, into17 = 1e30;
    for (int r = 0; r < (o.repeat < 2 ? o.repeat : 2); r++) {
        plain9 = bench_smaller(plain9, solve_seconds(&p, 9, NULL));
        plain17 = bench_smaller(plain17, solve_seconds(&p, 17, NULL));
        into9 = bench_smaller(into9, solve_seconds(&p, 9, device));
        into17 = bench_smaller(into17, solve_seconds(&p, 17, device));
    }
    double iteration_plain = (plain17 - plain9) / 8.0 * 1e3 / B;
    double iteration_into = (into17 - into9) / 8.0 * 1e3 / B;
    double once_plain = plain9 * 1e3 / B - 9.0 * iteration_plain;
    double once_into = into9 * 1e3 / B - 9.0 * iteration_into;
    double sum_iteration = (forward->ms + measure->ms + decide->ms + advance->ms) / B;

    FILE *outs[2] = {stdout, NULL};
    if (o.markdown != NULL) {
        outs[1] = bench_markdown_open(o.markdown, argc, argv, omp_get_max_threads(),
                                      "each step the best of the repeats, timed alone with CUDA "
                                      "events on the context's stream (host copies by the wall "
                                      "clock); the whole solves the best of 2");
    }
    for (int k = 0; k < 2; k++) {
        FILE *out = outs[k];
        if (out == NULL) {
            continue;
        }
        struct cudaDeviceProp properties;
        if (k == 1 && cudaGetDeviceProperties(&properties, 0) == cudaSuccess) {
            fprintf(out, "- GPU: %s\n", properties.name);
        }
        fprintf(out,
                "- problem: %d lines x %d bins x %d^2 cells x 4 channels (1/%.2f of ESIS), "
                "float32 CSR %.2f GB, built on the device; a batch of %d frames\n"
                "- copy rates measured here: device %.0f GB/s (read + written), device to "
                "pinned host %.1f GB/s\n\n",
                o.lines, o.bins, o.cells, factor, (forward_csr + backward_csr) / 1e9, o.batch,
                rate / 1e9, bus / 1e9);
        print_table(out, &t, o.batch, factor);
        fprintf(out,
                "\nThe whole frames solve of the batch (to 9 and 17 iterations, the difference "
                "8 iterations: one graph):\n\n"
                "| solve | ms an iteration of a frame | ms a frame besides its iterations | "
                "whole ESIS (x %.2f): an iteration / once |\n",
                factor);
        bench_markdown_rule(out, 4);
        fprintf(out, "| plain (results in fresh pageable memory) | %.3f | %.1f | %.2f / %.0f |\n",
                iteration_plain, once_plain, iteration_plain * factor, once_plain * factor);
        fprintf(out, "| into a device buffer | %.3f | %.1f | %.2f / %.0f |\n", iteration_into,
                once_into, iteration_into * factor, once_into * factor);
        fprintf(out,
                "| the steps above summed (forward, measure, decide, advance) | %.3f | | "
                "%.2f / |\n",
                sum_iteration, sum_iteration * factor);
        if (k == 1) {
            fclose(out);
        }
    }
    free(touched);
    cudaFreeHost(pinned);
    spart_device_free(context, device);
    free_problem(&p);
    spart_instrument_free(instrument);
    esis_arrays_free(&arrays);
    spart_context_free(context);
    cudaStreamDestroy(stream);
    return 0;
}
