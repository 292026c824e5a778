/*
 * tests/unit/test_cuda_mart_frames.c: many frames per solve on a CUDA
 * device (spart_mart_solve_frames): every frame's result is, bit for bit,
 * the host's spart_mart_solve of that frame alone (and the device's), for
 * 1, 3, 8 and 30 frames, with frames that stop at different iterations
 * inside the graphs' blocks, every rule, kept states, a callback (graphs
 * of one iteration), operators that may not be recorded (no graphs), and
 * batches of several widths; the solutions written into the caller's
 * buffer (device, pinned and pageable host memory); the frames steps on
 * the device against the host's. The host's own runs are in test_mart_frames.c.
 *
 * SPART_MART_FRAMES_SMALL=1 (for the sanitizers): 3 frames and the steps
 * only. Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/internal.h"
#include "spart.h"
#include "test_cuda_util.h"
#include "test_mart_frames_util.h"

/* Whether to run the small cases only (SPART_MART_FRAMES_SMALL=1). */
static int small_only(void)
{
    const char *small = getenv("SPART_MART_FRAMES_SMALL");
    return small != NULL && strcmp(small, "1") == 0;
}

/* The tiny case's operators on the device (regridders owned here; `device`
 * points to `pair`: keep the struct where it is made). */
typedef struct device_problem {
    spart_mart_regridder_pair pair;
    spart_mart_operators device;
    spart_regridder *forward, *backward;
} device_problem;

static void make_device_problem(spart_context *context, const tiny_case *c, device_problem *d)
{
    memset(d, 0, sizeof *d);
    assert_int_equal(spart_regridder_to_device(context, c->pair.forward, &d->forward), SPART_OK);
    assert_int_equal(spart_regridder_to_device(context, c->pair.backward, &d->backward), SPART_OK);
    d->pair = c->pair;
    d->pair.forward = d->forward;
    d->pair.backward = d->backward;
    assert_int_equal(spart_mart_operators_from_regridders(context, &d->pair, &d->device), SPART_OK);
    assert_int_equal(d->device.on_device, 1);
    assert_int_equal(d->device.capturable, 1);
}

static void free_device_problem(device_problem *d)
{
    spart_regridder_free(d->forward);
    spart_regridder_free(d->backward);
}

/* The frames on the device (observations and guesses copied there) against
 * each frame alone on the host, and alone on the device. */
static void check_device_frames(spart_context *context, const spart_mart_operators *host,
                                const spart_mart_operators *device, const double *observed,
                                int64_t num_frames, const spart_mart_options *options,
                                int64_t batch_frames, int64_t *iterations)
{
    int64_t pixels = host->num_channel * host->image_size;
    double *d_observed = doubles_to_device(context, observed, num_frames * pixels);
    spart_mart_options on_device = *options;
    double *d_guess = NULL;
    if (options->guess != NULL) {
        d_guess = doubles_to_device(context, options->guess, num_frames * host->scene_size);
        on_device.guess = d_guess;
    }
    spart_mart_result **results = calloc((size_t)num_frames, sizeof *results);
    spart_status status = spart_mart_solve_frames(context, device, num_frames, d_observed,
                                                  &on_device, batch_frames, results);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    for (int64_t f = 0; f < num_frames; f++) {
        int64_t lone = assert_frame_equals_alone(context, host, observed, f, options, results[f]);
        if (iterations != NULL) {
            iterations[f] = lone;
        }
        /* and alone on the device (a few frames: the same bits again) */
        if (f < 2) {
            assert_frame_equals_alone(context, device, d_observed, f, &on_device, results[f]);
        }
        spart_mart_result_free(results[f]);
    }
    free(results);
    spart_device_free(context, d_observed);
    spart_device_free(context, d_guess);
}

static void device_frames_equal_host_alone_for_1_3_8_30_frames(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_case c;
    make_tiny_case(context, 30, &c);
    device_problem d;
    make_device_problem(context, &c, &d);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.threshold = 1e-2;
    options.max_iterations = 40;
    const int64_t frames[] = {3, 1, 8, 30};
    for (int k = 0; k < (small_only() ? 1 : 4); k++) {
        int64_t iterations[30];
        check_device_frames(context, &c.operators, &d.device, c.observed, frames[k], &options,
                            frames[k] == 30 ? 8 : 0, iterations);
        if (frames[k] >= 8) { /* stops inside the graphs' blocks of 8, not at their ends */
            int inside = 0;
            for (int64_t f = 0; f < frames[k]; f++) {
                inside |= (iterations[f] - 1) % 8 != 0;
            }
            assert_true(inside);
        }
    }
    free_device_problem(&d);
    free_tiny_case(&c);
    spart_context_free(context);
}

static int stop_frame_two_at_five(void *user, const spart_mart_progress *progress)
{
    (void)user;
    return progress->frame == 2 && progress->iteration == 5;
}

/* Every rule and way to end, kept states, guesses, batch widths; a
 * callback (a graph an iteration); operators that may not be recorded. */
static void device_frames_every_rule_and_path(void **state)
{
    (void)state;
    if (small_only()) {
        skip();
    }
    spart_context *context = context_or_fail();
    tiny_case c;
    make_tiny_case(context, 5, &c);
    device_problem d;
    make_device_problem(context, &c, &d);
    double *guesses = malloc((size_t)(5 * c.p.scene_size) * sizeof(double));
    for (int64_t v = 0; v < 5 * c.p.scene_size; v++) {
        guesses[v] = 1.0 + (double)(v % 5) / 8.0;
    }
    for (int variant = 0; variant < 7; variant++) {
        spart_mart_options options;
        spart_mart_options_init(&options);
        options.max_iterations = 20;
        spart_mart_operators device = d.device;
        if (variant == 0) {
            options.stop_rule = SPART_MART_STOP_TARGET;
            options.target = 3.0;
        } else if (variant == 1) {
            options.stop_rule = SPART_MART_STOP_COUNT;
            options.max_iterations = 11;
            options.keep_intermediate = 1;
            options.gamma = 0.3;
        } else if (variant == 2) {
            options.max_iterations = 4;
            options.guess = guesses;
        } else if (variant == 3) {
            options.max_iterations = 1;
        } else if (variant == 4) {
            options.gamma = 2.05;
            options.keep_intermediate = 1;
        } else if (variant == 5) {
            options.stop_rule = SPART_MART_STOP_COUNT;
            options.callback = stop_frame_two_at_five;
        } else {
            device.capturable = 0; /* every step enqueued by the driver itself */
        }
        for (int64_t width = 2; width <= 5; width += 3) {
            if (variant != 5) {
                check_device_frames(context, &c.operators, &device, c.observed, 5, &options, width,
                                    NULL);
                continue;
            }
            /* the callback: frame 2 alone stops at iteration 5 as a lone run would */
            int64_t pixels = 4 * c.p.image_size;
            double *d_observed = doubles_to_device(context, c.observed, 5 * pixels);
            spart_mart_result *results[5];
            assert_int_equal(
                spart_mart_solve_frames(context, &device, 5, d_observed, &options, width, results),
                SPART_OK);
            for (int64_t f = 0; f < 5; f++) {
                assert_int_equal(spart_mart_result_num_iterations(results[f]), f == 2 ? 6 : 20);
                spart_mart_result_free(results[f]);
            }
            spart_device_free(context, d_observed);
        }
    }
    free(guesses);
    free_device_problem(&d);
    free_tiny_case(&c);
    spart_context_free(context);
}

/* The device memory the context's pool has reserved, and of that what is
 * in use, once the context's stream is done. */
static void pool_bytes(spart_context *context, uint64_t *reserved, uint64_t *used)
{
    cudaMemPool_t pool = (cudaMemPool_t)context->cuda_pool;
    assert_non_null(pool);
    assert_int_equal(cudaStreamSynchronize((cudaStream_t)context->cuda_stream), cudaSuccess);
    assert_int_equal(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, reserved),
                     cudaSuccess);
    assert_int_equal(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, used),
                     cudaSuccess);
}

/* The plain call takes its working memory from the context's own pool
 * (spart_memory_allocate_async) and gives it back there: a second solve
 * reserves no more, nothing stays in use, and the bits are the first's. */
static void plain_calls_reuse_the_contexts_pool(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_case c;
    make_tiny_case(context, 8, &c);
    device_problem d;
    make_device_problem(context, &c, &d);
    double *d_observed = doubles_to_device(context, c.observed, 8 * 4 * c.p.image_size);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = 6;
    spart_mart_result *first[8], *second[8];
    assert_int_equal(spart_mart_solve_frames(context, &d.device, 8, d_observed, &options, 0, first),
                     SPART_OK);
    uint64_t reserved = 0, used = 0, reserved_again = 0;
    pool_bytes(context, &reserved, &used);
    assert_true(reserved > 0);
    assert_int_equal(used, 0);
    assert_int_equal(
        spart_mart_solve_frames(context, &d.device, 8, d_observed, &options, 0, second), SPART_OK);
    pool_bytes(context, &reserved_again, &used);
    assert_int_equal(reserved_again, reserved);
    assert_int_equal(used, 0);
    for (int64_t f = 0; f < 8; f++) {
        assert_results_same_bits(first[f], second[f], f);
        spart_mart_result_free(first[f]);
        spart_mart_result_free(second[f]);
    }
    /* the pair itself: device memory usable on the context's stream */
    void *scratch = NULL;
    double values[4] = {1.0, -2.0, 3.5, 0.25}, back[4] = {0.0, 0.0, 0.0, 0.0};
    assert_int_equal(spart_memory_allocate_async(context, 1, sizeof values, &scratch), SPART_OK);
    assert_int_equal(spart_memory_copy(context, scratch, 1, values, 0, sizeof values), SPART_OK);
    assert_int_equal(spart_memory_copy(context, back, 0, scratch, 1, sizeof values), SPART_OK);
    assert_memory_equal(back, values, sizeof values);
    spart_memory_free_async(context, 1, scratch);
    spart_memory_free_async(context, 1, NULL);
    assert_int_equal(spart_memory_allocate_async(context, 1, 8, NULL), SPART_ERROR_NULL_POINTER);
    spart_device_free(context, d_observed);
    free_device_problem(&d);
    free_tiny_case(&c);
    spart_context_free(context);
}

/* The solutions written into the caller's buffer, on the device, in
 * pinned host memory and in pageable host memory (spart_mart_solve_frames_into,
 * spart_mart_solve_into): the plain calls' bits, frames that stop at
 * different iterations and frames out of iterations, with and without
 * kept states, in batches of 3 (the last one of 2). */
static void device_solutions_into_the_callers_buffer(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    enum { frames = 8 };
    tiny_case c;
    make_tiny_case(context, frames, &c);
    device_problem d;
    make_device_problem(context, &c, &d);
    int64_t n = c.p.scene_size, pixels = 4 * c.p.image_size;
    size_t bytes = (size_t)(frames * n) * sizeof(double);
    double *d_observed = doubles_to_device(context, c.observed, frames * pixels);
    double *pageable = malloc(bytes), *pinned = NULL, *on_device = NULL, *back = malloc(bytes);
    assert_int_equal(cudaMallocHost((void **)&pinned, bytes), cudaSuccess);
    assert_int_equal(spart_device_malloc(context, bytes, (void **)&on_device), SPART_OK);
    for (int variant = 0; variant < (small_only() ? 1 : 3); variant++) {
        spart_mart_options options;
        spart_mart_options_init(&options);
        options.threshold = 1e-2;
        options.max_iterations = variant == 1 ? 5 : 40; /* 1: some frames out of iterations */
        options.keep_intermediate = variant == 2;
        spart_mart_result *plain[frames], *into[frames];
        assert_int_equal(
            spart_mart_solve_frames(context, &d.device, frames, d_observed, &options, 3, plain),
            SPART_OK);
        for (int where = 0; where < 3; where++) {
            double *buffer = where == 0 ? on_device : where == 1 ? pinned : pageable;
            assert_int_equal(cudaMemset(on_device, 0xff, bytes), cudaSuccess);
            memset(pinned, 0xff, bytes);
            memset(pageable, 0xff, bytes);
            assert_int_equal(spart_mart_solve_frames_into(context, &d.device, frames, d_observed,
                                                          &options, 3, NULL, 0, buffer, where == 0,
                                                          into),
                             SPART_OK);
            const double *solutions = buffer;
            if (where == 0) {
                assert_int_equal(cudaMemcpy(back, on_device, bytes, cudaMemcpyDeviceToHost),
                                 cudaSuccess);
                solutions = back;
            }
            for (int64_t f = 0; f < frames; f++) {
                assert_into_same_bits(plain[f], into[f], solutions + f * n,
                                      options.keep_intermediate, f);
                spart_mart_result_free(into[f]);
            }
            /* one frame, frame 5 (its own iteration count) */
            spart_mart_result *alone = NULL;
            assert_int_equal(spart_mart_solve_into(context, &d.device, d_observed + 5 * pixels,
                                                   &options, buffer, where == 0, &alone),
                             SPART_OK);
            if (where == 0) {
                assert_int_equal(
                    cudaMemcpy(back, on_device, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost),
                    cudaSuccess);
            }
            assert_into_same_bits(plain[5], alone, solutions, options.keep_intermediate, 5);
            spart_mart_result_free(alone);
        }
        for (int64_t f = 0; f < frames; f++) {
            spart_mart_result_free(plain[f]);
        }
    }
    cudaFreeHost(pinned);
    free(pageable);
    free(back);
    spart_device_free(context, on_device);
    spart_device_free(context, d_observed);
    free_device_problem(&d);
    free_tiny_case(&c);
    spart_context_free(context);
}

/* The frames steps on the device give the host's bits. */
static void device_frames_steps_equal_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    enum { frames = 5, channels = 3, voxels = 3000 };
    uint64_t seed = 11;
    int64_t scene_values = frames * voxels, back_values = frames * channels * voxels;
    double *scenes = malloc((size_t)scene_values * sizeof(double));
    double *back = malloc((size_t)(2 * back_values) * sizeof(double));
    for (int64_t i = 0; i < scene_values; i++) {
        scenes[i] = next_uniform(&seed) + 0.25;
    }
    for (int64_t i = 0; i < 2 * back_values; i++) {
        back[i] = i % 89 == 0 ? 0.0 : next_uniform(&seed);
    }
    spart_mart_run_state states[frames];
    memset(states, 0, sizeof states);
    states[1].stopped = SPART_MART_RUN_STOPPED_BY_RULE;
    states[3].stopped = SPART_MART_RUN_OUT_OF_ITERATIONS;
    for (int f = 0; f < frames; f++) {
        states[f].merit_previous = f == 4 ? 0.0 : INFINITY; /* frame 4's merit rises */
    }
    double *d_scenes = doubles_to_device(context, scenes, scene_values);
    double *d_back = doubles_to_device(context, back, 2 * back_values);
    void *d_states = NULL;
    assert_int_equal(spart_device_malloc(context, sizeof states, &d_states), SPART_OK);
    assert_int_equal(spart_device_copy_to_device(context, d_states, states, sizeof states),
                     SPART_OK);
    assert_int_equal(spart_mart_update_frames(context, scenes, back, back + back_values, frames,
                                              channels, voxels, 0.45, 0, states),
                     SPART_OK);
    assert_int_equal(spart_mart_update_frames(context, d_scenes, d_back, d_back + back_values,
                                              frames, channels, voxels, 0.45, 1, d_states),
                     SPART_OK);
    double *back_to_host = malloc((size_t)scene_values * sizeof(double));
    assert_int_equal(spart_device_copy_to_host(context, back_to_host, d_scenes,
                                               (size_t)scene_values * sizeof(double)),
                     SPART_OK);
    assert_memory_equal(back_to_host, scenes, (size_t)scene_values * sizeof(double));

    /* keep and decide */
    double *d_kept = doubles_to_device(context, NULL, scene_values);
    assert_int_equal(spart_mart_keep_frames(context, d_scenes, frames, voxels, d_kept, d_states, 1),
                     SPART_OK);
    double *kept = malloc((size_t)scene_values * sizeof(double));
    assert_int_equal(
        spart_device_copy_to_host(context, kept, d_kept, (size_t)scene_values * sizeof(double)),
        SPART_OK);
    assert_memory_equal(kept, scenes, voxels * sizeof(double));
    assert_memory_equal(kept + 4 * voxels, scenes + 4 * voxels, voxels * sizeof(double));
    spart_mart_run_rule rule = {channels, 3, 1, 0, 1e-3, 1.0};
    double merits[2 * frames * channels], rows[frames * 2 * channels];
    for (int i = 0; i < 2 * frames * channels; i++) {
        merits[i] = next_uniform(&seed);
        rows[i] = -1.0;
    }
    double *d_merits = doubles_to_device(context, merits, 2 * frames * channels);
    double *d_rows = doubles_to_device(context, rows, 2 * frames * channels);
    assert_int_equal(spart_mart_decide_frames(context, &rule, frames, merits, rows, states, 0),
                     SPART_OK);
    assert_int_equal(
        spart_mart_decide_frames(context, &rule, frames, d_merits, d_rows, d_states, 1), SPART_OK);
    spart_mart_run_state device_states[frames];
    double device_rows[frames * 2 * channels];
    assert_int_equal(
        spart_device_copy_to_host(context, device_states, d_states, sizeof device_states),
        SPART_OK);
    assert_int_equal(spart_device_copy_to_host(context, device_rows, d_rows, sizeof device_rows),
                     SPART_OK);
    assert_memory_equal(device_states, states, sizeof states);
    assert_memory_equal(device_rows, rows, sizeof rows);
    assert_int_equal(states[4].stopped, SPART_MART_RUN_STOPPED_BY_RULE); /* merit rose */

    /* the flat guesses of every frame: the host's (each the one-frame guess) */
    size_t frame_bytes = spart_mart_workspace_size(channels, 1, voxels);
    void *d_workspace = NULL;
    assert_int_equal(spart_device_malloc(context, frames * frame_bytes, &d_workspace), SPART_OK);
    assert_int_equal(
        spart_mart_flat_guess_frames(context, back, frames, channels, voxels, scenes, NULL, 0, 0),
        SPART_OK);
    assert_int_equal(spart_mart_flat_guess_frames(context, d_back, frames, channels, voxels,
                                                  d_scenes, d_workspace, frames * frame_bytes, 1),
                     SPART_OK);
    assert_int_equal(spart_device_copy_to_host(context, back_to_host, d_scenes,
                                               (size_t)scene_values * sizeof(double)),
                     SPART_OK);
    assert_memory_equal(back_to_host, scenes, (size_t)scene_values * sizeof(double));
    assert_int_equal(spart_mart_flat_guess_frames(context, d_back, frames, channels, voxels,
                                                  d_scenes, d_workspace, frames * frame_bytes - 8,
                                                  1),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_device_free(context, d_workspace);

    free(scenes);
    free(back);
    free(back_to_host);
    free(kept);
    spart_device_free(context, d_scenes);
    spart_device_free(context, d_back);
    spart_device_free(context, d_states);
    spart_device_free(context, d_kept);
    spart_device_free(context, d_merits);
    spart_device_free(context, d_rows);
    spart_context_free(context);
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_frames_equal_host_alone_for_1_3_8_30_frames),
        cmocka_unit_test(device_frames_every_rule_and_path),
        cmocka_unit_test(device_frames_steps_equal_host),
        cmocka_unit_test(plain_calls_reuse_the_contexts_pool),
        cmocka_unit_test(device_solutions_into_the_callers_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
