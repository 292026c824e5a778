/*
 * tests/unit/test_mart_frames.c: many frames per solve on the host
 * (spart_mart_solve_frames): every frame's result is, bit for bit, that
 * of spart_mart_solve on the frame alone, for 1, 3, 8 and 30 frames, in
 * one batch or several, with frames that stop at different iterations,
 * every stopping rule, kept states, guesses, a callback that stops one
 * frame, and operators of the caller's own (with and without frames
 * callbacks); the frames steps (spart_mart_*_frames) against the
 * one-frame steps; the errors. The device's runs are in
 * test_cuda_mart_frames.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spart/device_memory.h"
#include "spart/mart.h"
#include "spart/mart_steps.h"
#include "test_mart_frames_util.h"
#include "test_util.h"

/* One thread: the bits do not depend on the count (test_mart.c and the
 * products' tests hold that), and on a busy 2-core machine two threads
 * spend most of these tiny iterations waiting for each other. */
static spart_context *new_context(void)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    assert_int_equal(spart_context_set_threads(context, 1), SPART_OK);
    return context;
}

/* Each frame alone with spart_mart_solve, then all with
 * spart_mart_solve_frames (batch_frames as given): the same bits. Returns
 * the frames' iteration counts (malloc'd) when `iterations` is not NULL. */
static void check_frames_equal_alone(spart_context *context, const spart_mart_operators *operators,
                                     const double *observed, int64_t num_frames,
                                     const spart_mart_options *options, int64_t batch_frames,
                                     int64_t **iterations)
{
    spart_mart_result **results = calloc((size_t)num_frames, sizeof *results);
    spart_status status = spart_mart_solve_frames(context, operators, num_frames, observed, options,
                                                  batch_frames, results);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    if (iterations != NULL) {
        *iterations = malloc((size_t)num_frames * sizeof(int64_t));
    }
    for (int64_t f = 0; f < num_frames; f++) {
        int64_t lone =
            assert_frame_equals_alone(context, operators, observed, f, options, results[f]);
        if (iterations != NULL) {
            (*iterations)[f] = lone;
        }
        spart_mart_result_free(results[f]);
    }
    free(results);
}

/* Number of distinct values among n. */
static int64_t distinct(const int64_t *values, int64_t n)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        while (j < i && values[j] != values[i]) {
            j++;
        }
        count += j == i;
    }
    return count;
}

static void frames_equal_alone_for_1_3_8_30_frames(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 30, &c);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.threshold = 1e-2;
    options.max_iterations = 40;
    const int64_t frames[] = {1, 3, 8, 30};
    for (int k = 0; k < 4; k++) {
        int64_t *iterations = NULL;
        /* 30 frames in batches of 8 (three full ones and one of 6) */
        check_frames_equal_alone(context, &c.operators, c.observed, frames[k], &options,
                                 frames[k] == 30 ? 8 : 0, &iterations);
        if (frames[k] >= 8) { /* the frames' runs end at different iterations */
            assert_true(distinct(iterations, frames[k]) >= 3);
        }
        free(iterations);
    }
    free_tiny_case(&c);
    spart_context_free(context);
}

/* Every rule, and the ways a run ends: the target, a fixed count with kept
 * states and gamma 0.3, the iteration limit of ctis's rule, one iteration,
 * a rising merit (gamma 2.05); batches of 1, 2 and all frames. */
static void every_rule_and_batch_width(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 5, &c);
    for (int variant = 0; variant < 5; variant++) {
        spart_mart_options options;
        spart_mart_options_init(&options);
        options.max_iterations = 20;
        if (variant == 0) {
            options.stop_rule = SPART_MART_STOP_TARGET;
            options.target = 3.0;
        } else if (variant == 1) {
            options.stop_rule = SPART_MART_STOP_COUNT;
            options.max_iterations = 6;
            options.keep_intermediate = 1;
            options.gamma = 0.3;
        } else if (variant == 2) {
            options.max_iterations = 4; /* ctis's rule runs out: the last update made */
        } else if (variant == 3) {
            options.max_iterations = 1;
        } else {
            options.gamma = 2.05;
            options.keep_intermediate = 1;
        }
        for (int64_t width = 1; width <= 5; width += 2) {
            check_frames_equal_alone(context, &c.operators, c.observed, 5, &options, width, NULL);
        }
    }
    free_tiny_case(&c);
    spart_context_free(context);
}

/* A workspace kept by the caller gives the same bits, twice over; one too
 * small (or not aligned) is refused. */
static void a_workspace_kept_across_solves(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 4, &c);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 9;
    size_t bytes = 0;
    assert_int_equal(
        spart_mart_frames_workspace_size(context, &c.operators, 4, &options, 3, &bytes), SPART_OK);
    assert_true(bytes > 0);
    void *workspace = NULL;
    assert_int_equal(spart_memory_allocate(context, 0, bytes, &workspace), SPART_OK);
    assert_true((uintptr_t)workspace % sizeof(double) == 0);
    spart_mart_result *plain[4], *kept[4];
    assert_int_equal(
        spart_mart_solve_frames(context, &c.operators, 4, c.observed, &options, 3, plain),
        SPART_OK);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(spart_mart_solve_frames_workspace(context, &c.operators, 4, c.observed,
                                                           &options, 3, workspace, bytes, kept),
                         SPART_OK);
        for (int64_t f = 0; f < 4; f++) {
            assert_results_same_bits(plain[f], kept[f], f);
            spart_mart_result_free(kept[f]);
        }
    }
    assert_int_equal(spart_mart_solve_frames_workspace(context, &c.operators, 4, c.observed,
                                                       &options, 3, workspace, bytes - 1, kept),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "spart_mart_frames_workspace_size"));
    assert_null(kept[0]);
    assert_int_equal(spart_mart_solve_frames_workspace(context, &c.operators, 4, c.observed,
                                                       &options, 3, (char *)workspace + 4,
                                                       bytes - 8, kept),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_mart_frames_workspace_size(context, &c.operators, 4, &options, 3, NULL),
                     SPART_ERROR_NULL_POINTER);
    for (int64_t f = 0; f < 4; f++) {
        spart_mart_result_free(plain[f]);
    }
    spart_memory_free(context, 0, workspace);
    free_tiny_case(&c);
    spart_context_free(context);
}

/* The solutions written into the caller's buffer (spart_mart_solve_into,
 * spart_mart_solve_frames_into, with and without a kept workspace): the
 * plain calls' bits, with every rule that ends a run differently and with
 * kept states; a NULL buffer is the plain call. */
static void solutions_into_the_callers_buffer(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 5, &c);
    int64_t n = c.p.scene_size;
    double *buffer = malloc((size_t)(5 * n) * sizeof(double));
    for (int variant = 0; variant < 3; variant++) {
        spart_mart_options options;
        spart_mart_options_init(&options);
        options.threshold = 1e-2;
        options.max_iterations = variant == 1 ? 4 : 30; /* 1: out of iterations */
        options.keep_intermediate = variant == 2;
        spart_mart_result *plain[5], *into[5];
        assert_int_equal(
            spart_mart_solve_frames(context, &c.operators, 5, c.observed, &options, 2, plain),
            SPART_OK);
        size_t bytes = 0;
        assert_int_equal(
            spart_mart_frames_workspace_size(context, &c.operators, 5, &options, 2, &bytes),
            SPART_OK);
        void *workspace = NULL;
        assert_int_equal(spart_memory_allocate(context, 0, bytes, &workspace), SPART_OK);
        for (int kept = 0; kept < 2; kept++) {
            memset(buffer, 0xff, (size_t)(5 * n) * sizeof(double));
            assert_int_equal(spart_mart_solve_frames_into(context, &c.operators, 5, c.observed,
                                                          &options, 2, kept ? workspace : NULL,
                                                          kept ? bytes : 0, buffer, 0, into),
                             SPART_OK);
            for (int64_t f = 0; f < 5; f++) {
                assert_into_same_bits(plain[f], into[f], buffer + f * n, options.keep_intermediate,
                                      f);
                spart_mart_result_free(into[f]);
            }
        }
        /* one frame: spart_mart_solve against spart_mart_solve_into */
        spart_mart_result *alone = NULL, *alone_into = NULL;
        int64_t pixels = 4 * c.p.image_size;
        assert_int_equal(
            spart_mart_solve(context, &c.operators, c.observed + 3 * pixels, &options, &alone),
            SPART_OK);
        assert_int_equal(spart_mart_solve_into(context, &c.operators, c.observed + 3 * pixels,
                                               &options, buffer, 0, &alone_into),
                         SPART_OK);
        assert_into_same_bits(alone, alone_into, buffer, options.keep_intermediate, 3);
        spart_mart_result_free(alone_into);
        /* NULL: the plain call, the solution in the result */
        assert_int_equal(spart_mart_solve_into(context, &c.operators, c.observed + 3 * pixels,
                                               &options, NULL, 0, &alone_into),
                         SPART_OK);
        assert_results_same_bits(alone, alone_into, 3);
        spart_mart_result_free(alone_into);
        spart_mart_result_free(alone);
        for (int64_t f = 0; f < 5; f++) {
            spart_mart_result_free(plain[f]);
        }
        spart_memory_free(context, 0, workspace);
    }
    free(buffer);
    free_tiny_case(&c);
    spart_context_free(context);
}

static void guesses_are_per_frame(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 3, &c);
    double *guesses = malloc((size_t)(3 * c.p.scene_size) * sizeof(double));
    for (int64_t v = 0; v < 3 * c.p.scene_size; v++) {
        guesses[v] = 1.0 + (double)(v % 7) / 10.0 + (double)(v / c.p.scene_size);
    }
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.guess = guesses;
    options.max_iterations = 10;
    check_frames_equal_alone(context, &c.operators, c.observed, 3, &options, 2, NULL);
    free(guesses);
    free_tiny_case(&c);
    spart_context_free(context);
}

/* The callback is told each frame; stopping frame 1 at its iteration 3
 * stops that frame only, as a lone run of frame 1 stops there. */
static int stop_frame_one_at_three(void *user, const spart_mart_progress *progress)
{
    int64_t *calls = user;
    if (calls != NULL) {
        calls[progress->frame]++;
    }
    return progress->frame == 1 && progress->iteration == 3;
}

static int stop_at_three(void *user, const spart_mart_progress *progress)
{
    (void)user;
    return progress->iteration == 3;
}

static void a_callback_stops_one_frame(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 3, &c);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = 8;
    int64_t calls[3] = {0, 0, 0};
    options.callback = stop_frame_one_at_three;
    options.callback_user = calls;
    spart_mart_result *results[3] = {NULL, NULL, NULL};
    assert_int_equal(
        spart_mart_solve_frames(context, &c.operators, 3, c.observed, &options, 0, results),
        SPART_OK);
    assert_int_equal(calls[0], 8);
    assert_int_equal(calls[1], 4);
    assert_int_equal(calls[2], 8);
    for (int64_t f = 0; f < 3; f++) {
        spart_mart_options alone = options;
        alone.callback = f == 1 ? stop_at_three : NULL;
        alone.callback_user = NULL;
        assert_frame_equals_alone(context, &c.operators, c.observed, f, &alone, results[f]);
        spart_mart_result_free(results[f]);
    }
    free_tiny_case(&c);
    spart_context_free(context);
}

/* ---- operators of the caller's own ---- */

/* The Regridder operators behind callbacks the driver does not know (so
 * it takes the general path: frames callbacks, or one frame at a time). */
typedef struct wrapped {
    spart_mart_operators inner;
    int64_t frames_calls;
} wrapped;

static spart_status wrapped_forward(void *user, spart_context *context, const double *scene,
                                    double *images, double *widths)
{
    wrapped *w = user;
    return w->inner.forward(w->inner.user, context, scene, images, widths);
}

static spart_status wrapped_backward(void *user, spart_context *context, const double *images,
                                     double *scenes)
{
    wrapped *w = user;
    return w->inner.backward(w->inner.user, context, images, scenes);
}

static spart_status wrapped_forward_frames(void *user, spart_context *context, int64_t frames,
                                           const double *scenes, double *images, double *widths)
{
    wrapped *w = user;
    w->frames_calls++;
    return w->inner.forward_frames(w->inner.user, context, frames, scenes, images, widths);
}

static spart_status wrapped_backward_frames(void *user, spart_context *context, int64_t frames,
                                            const double *images, double *scenes)
{
    wrapped *w = user;
    w->frames_calls++;
    return w->inner.backward_frames(w->inner.user, context, frames, images, scenes);
}

static void callers_operators_with_and_without_frames_callbacks(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 3, &c);
    wrapped w;
    memset(&w, 0, sizeof w);
    w.inner = c.operators;
    assert_non_null(w.inner.forward_frames);
    assert_non_null(w.inner.backward_frames);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 12;
    for (int with_frames = 0; with_frames < 2; with_frames++) {
        spart_mart_operators operators = w.inner;
        operators.forward = wrapped_forward;
        operators.backward = wrapped_backward;
        operators.forward_frames = with_frames ? wrapped_forward_frames : NULL;
        operators.backward_frames = with_frames ? wrapped_backward_frames : NULL;
        operators.user = &w;
        w.frames_calls = 0;
        check_frames_equal_alone(context, &operators, c.observed, 3, &options, 0, NULL);
        if (with_frames) {
            assert_true(w.frames_calls > 0);
        } else {
            assert_int_equal(w.frames_calls, 0);
        }
    }
    free_tiny_case(&c);
    spart_context_free(context);
}

/* ---- the frames steps against the one-frame steps ---- */

static void frames_steps_equal_one_frame_steps(void **state)
{
    (void)state;
    spart_context *context = new_context();
    enum { frames = 3, channels = 2, voxels = 1500 };
    uint64_t seed = 7;
    double scenes[frames * voxels], alone[frames * voxels];
    double observed_back[frames * channels * voxels], predicted_back[frames * channels * voxels];
    for (int i = 0; i < frames * voxels; i++) {
        scenes[i] = alone[i] = next_uniform(&seed) + 0.5;
    }
    for (int i = 0; i < frames * channels * voxels; i++) {
        observed_back[i] = next_uniform(&seed);
        predicted_back[i] = i % 97 == 0 ? 0.0 : next_uniform(&seed);
    }
    spart_mart_run_state states[frames];
    memset(states, 0, sizeof states);
    states[1].stopped = SPART_MART_RUN_STOPPED_BY_RULE;
    assert_int_equal(spart_mart_update_frames(context, scenes, observed_back, predicted_back,
                                              frames, channels, voxels, 0.4, 0, states),
                     SPART_OK);
    for (int f = 0; f < frames; f++) {
        assert_int_equal(spart_mart_update_gated(context, alone + f * voxels,
                                                 observed_back + f * channels * voxels,
                                                 predicted_back + f * channels * voxels, channels,
                                                 voxels, 0.4, 0, &states[f]),
                         SPART_OK);
    }
    assert_memory_equal(scenes, alone, sizeof scenes);

    /* decide: frame f's merits at f C (chi2) and frames C + f C (r) */
    spart_mart_run_rule rule = {channels, 5, 1, 0, 1e-3, 1.0};
    double merits[2 * frames * channels] = {4, 6, 1, 1, 2, 2, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    double rows[frames * 2 * channels], row_alone[2 * channels];
    spart_mart_run_state decided[frames], one[frames];
    for (int f = 0; f < frames; f++) {
        memset(&decided[f], 0, sizeof decided[f]);
        decided[f].merit_previous = f == 2 ? 2.0000001 : INFINITY;
        one[f] = decided[f];
    }
    decided[1].stopped = one[1].stopped = SPART_MART_RUN_OUT_OF_ITERATIONS;
    for (int i = 0; i < frames * 2 * channels; i++) {
        rows[i] = -1.0;
    }
    assert_int_equal(spart_mart_decide_frames(context, &rule, frames, merits, rows, decided, 0),
                     SPART_OK);
    for (int f = 0; f < frames; f++) {
        double row_merits[2 * channels] = {merits[f * channels], merits[f * channels + 1],
                                           merits[frames * channels + f * channels],
                                           merits[frames * channels + f * channels + 1]};
        for (int c = 0; c < 2 * channels; c++) {
            row_alone[c] = -1.0;
        }
        assert_int_equal(spart_mart_decide(context, &rule, row_merits, row_alone, &one[f], 0),
                         SPART_OK);
        assert_memory_equal(&decided[f], &one[f], sizeof one[f]);
        assert_memory_equal(rows + f * 2 * channels, row_alone, sizeof row_alone);
    }
    assert_int_equal(decided[0].stopped, SPART_MART_RUN_GOING);
    assert_int_equal(decided[2].stopped, SPART_MART_RUN_STOPPED_BY_RULE);

    /* keep: stopped frames keep what was there */
    double kept[frames * voxels];
    for (int i = 0; i < frames * voxels; i++) {
        kept[i] = -2.0;
    }
    assert_int_equal(spart_mart_keep_frames(context, scenes, frames, voxels, kept, states, 0),
                     SPART_OK);
    assert_memory_equal(kept, scenes, voxels * sizeof(double));
    assert_true(kept[voxels] == -2.0 && kept[2 * voxels - 1] == -2.0);
    assert_memory_equal(kept + 2 * voxels, scenes + 2 * voxels, voxels * sizeof(double));

    /* the flat guess: each frame's of the one-frame step */
    double guesses[frames * voxels], guess_alone[voxels];
    assert_int_equal(spart_mart_flat_guess_frames(context, observed_back, frames, channels, voxels,
                                                  guesses, NULL, 0, 0),
                     SPART_OK);
    for (int f = 0; f < frames; f++) {
        assert_int_equal(spart_mart_flat_guess(context, observed_back + f * channels * voxels,
                                               channels, voxels, guess_alone, NULL, 0, 0),
                         SPART_OK);
        assert_memory_equal(guesses + f * voxels, guess_alone, sizeof guess_alone);
    }
    assert_int_equal(spart_mart_flat_guess_frames(context, observed_back, 0, channels, voxels,
                                                  guesses, NULL, 0, 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_context_free(context);
}

/* ---- errors ---- */

static void errors_are_sentences(void **state)
{
    (void)state;
    spart_context *context = new_context();
    tiny_case c;
    make_tiny_case(context, 2, &c);
    spart_mart_result *results[2] = {(spart_mart_result *)&c.pair, (spart_mart_result *)&c.pair};
    assert_int_equal(spart_mart_solve_frames(NULL, &c.operators, 2, c.observed, NULL, 0, results),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_mart_solve_frames(context, &c.operators, 2, c.observed, NULL, 0, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(context), "results"));
    assert_int_equal(
        spart_mart_solve_frames(context, &c.operators, 0, c.observed, NULL, 0, results),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "num_frames = 0"));
    assert_int_equal(
        spart_mart_solve_frames(context, &c.operators, 2, c.observed, NULL, -1, results),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "batch_frames = -1"));
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 0;
    assert_int_equal(
        spart_mart_solve_frames(context, &c.operators, 2, c.observed, &options, 0, results),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "max_iterations"));
    assert_int_equal(
        spart_mart_solve_frames(context, &c.operators, INT64_MAX / 2, c.observed, NULL, 0, results),
        SPART_ERROR_OVERFLOW);
    /* the steps */
    double value = 1.0;
    spart_mart_run_state run_state;
    memset(&run_state, 0, sizeof run_state);
    spart_mart_run_rule rule = {1, 1, 1, 0, 1e-3, 1.0};
    assert_int_equal(spart_mart_update_frames(context, NULL, &value, &value, 1, 1, 1, 1.0, 0, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_mart_update_frames(context, &value, &value, &value, 0, 1, 1, 1.0, 0, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "num_frames (0)"));
    assert_int_equal(
        spart_mart_update_frames(context, &value, &value, &value, 1, 1, 1, 0.0, 0, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "gamma"));
    assert_int_equal(
        spart_mart_update_frames(context, &value, &value, &value, INT64_MAX, 2, 2, 1.0, 0, NULL),
        SPART_ERROR_OVERFLOW);
    assert_int_equal(spart_mart_decide_frames(context, &rule, 1, &value, NULL, &run_state, 0),
                     SPART_ERROR_NULL_POINTER);
    rule.max_iterations = 0;
    assert_int_equal(spart_mart_decide_frames(context, &rule, 1, &value, &value, &run_state, 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_mart_keep_frames(context, &value, 1, 1, &value, NULL, 0),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_mart_keep_frames(context, &value, 1, 0, &value, &run_state, 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_mart_update_from_images_is_one_pass(NULL), 0);
    assert_int_equal(spart_mart_update_from_images_is_one_pass(c.pair.backward), 1);
    assert_int_equal(spart_mart_update_from_images_frames(context, NULL, &value, &value, 1, 1, 1.0,
                                                          &value, NULL, NULL, 0, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_mart_update_from_images_frames(context, c.pair.backward, c.observed,
                                                          c.observed, 0, 4, 1.0, c.observed, NULL,
                                                          NULL, 0, NULL),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "num_frames (0)"));
    assert_int_equal(spart_mart_update_from_images_frames(context, c.pair.backward, c.observed,
                                                          c.observed, 1, 3, 1.0, c.observed, NULL,
                                                          NULL, 0, NULL),
                     SPART_ERROR_SHAPE_MISMATCH);
    /* host memory named device memory: no device where none can be used
     * (a build without CUDA, or no GPU), not the device's memory where one
     * can */
    spart_context *probe = NULL;
    assert_int_equal(spart_context_create(&probe), SPART_OK);
    const int device_usable = spart_context_set_cuda_device(probe, 0) == SPART_OK;
    spart_context_free(probe);
    assert_int_equal(spart_mart_keep_frames(context, &value, 1, 1, &value, &run_state, 1),
                     device_usable ? SPART_ERROR_INVALID_ARGUMENT : SPART_ERROR_NO_DEVICE);
    free_tiny_case(&c);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_equal_alone_for_1_3_8_30_frames),
        cmocka_unit_test(every_rule_and_batch_width),
        cmocka_unit_test(guesses_are_per_frame),
        cmocka_unit_test(a_workspace_kept_across_solves),
        cmocka_unit_test(solutions_into_the_callers_buffer),
        cmocka_unit_test(a_callback_stops_one_frame),
        cmocka_unit_test(callers_operators_with_and_without_frames_callbacks),
        cmocka_unit_test(frames_steps_equal_one_frame_steps),
        cmocka_unit_test(errors_are_sentences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
