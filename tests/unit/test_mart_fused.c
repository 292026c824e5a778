/*
 * tests/unit/test_mart_fused.c: spart_mart_update_from_images on the host,
 * the backward product and the MART update in one pass: the bits of
 * spart_regridder_apply followed by spart_mart_update, whatever the
 * exponents, block edges, thread count or axis roles, without scratch, and
 * the same MART runs as the unfused steps.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_util.h"

/* Random triples of `elements` weights elements: each of `voxels` voxels
 * reached by 0 to 4 of `pixels` pixels, values in [0, 1). */
typedef struct triples {
    int64_t elements;
    int64_t *offsets, *pixel, *voxel;
    double *values;
} triples;

static triples random_triples(int64_t elements, int64_t pixels, int64_t voxels, uint64_t seed)
{
    triples t = {elements, NULL, NULL, NULL, NULL};
    int64_t capacity = elements * voxels * 4;
    t.offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    t.pixel = malloc((size_t)capacity * sizeof(int64_t));
    t.voxel = malloc((size_t)capacity * sizeof(int64_t));
    t.values = malloc((size_t)capacity * sizeof(double));
    uint64_t state = seed;
    int64_t k = 0;
    for (int64_t e = 0; e < elements; e++) {
        t.offsets[e] = k;
        for (int64_t v = 0; v < voxels; v++) {
            int reached = (int)(next_uniform(&state) * 5.0);
            for (int j = 0; j < reached; j++, k++) {
                t.pixel[k] = (int64_t)(next_uniform(&state) * (double)pixels);
                t.voxel[k] = v;
                t.values[k] = next_uniform(&state);
            }
        }
    }
    t.offsets[elements] = k;
    return t;
}

static void free_triples(triples *t)
{
    free(t->offsets);
    free(t->pixel);
    free(t->voxel);
    free(t->values);
}

/* A Regridder of the triples from values of shape `input` (2 axes, the
 * second resampled) to `output`: pixels to voxels (to_voxels) or back. */
static spart_regridder *regridder_of(spart_context *context, const triples *t, const int64_t *input,
                                     const int64_t *output, int to_voxels)
{
    const int64_t orthogonal[] = {t->elements};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), i = shape_of(2, input), u = shape_of(2, output);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &o, &i, &u, 1, axes, 1, axes,
                                                      t->offsets, to_voxels ? t->pixel : t->voxel,
                                                      to_voxels ? t->voxel : t->pixel, t->values,
                                                      &weights),
                     SPART_OK);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = i;
    options.has_shape_output = 1;
    options.shape_output = u;
    spart_regridder *regridder = NULL;
    spart_status status = spart_regridder_create(context, weights, &options, &regridder);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_create: %s", spart_context_error(context));
    }
    spart_weights_free(weights);
    return regridder;
}

/* A backprojection-like Regridder from `channels` images of `pixels`
 * values to `channels` scenes of `voxels` values: `elements` weights
 * elements (one per channel, or one shared by every channel when
 * elements = 1, which makes the channel a batch axis). */
static spart_regridder *backward_regridder(spart_context *context, int64_t elements,
                                           int64_t channels, int64_t pixels, int64_t voxels,
                                           uint64_t seed)
{
    triples t = random_triples(elements, pixels, voxels, seed);
    const int64_t input[] = {channels, pixels}, output[] = {channels, voxels};
    spart_regridder *regridder = regridder_of(context, &t, input, output, 1);
    free_triples(&t);
    return regridder;
}

/* The arrays of one update: predicted images (some 0, some negative),
 * the clamped backprojection of observations (some 0), a scene. */
typedef struct update_case {
    int64_t channels, pixels, voxels;
    double *images, *observed_back, *scene;
} update_case;

static update_case make_case(int64_t channels, int64_t pixels, int64_t voxels, uint64_t seed)
{
    update_case u = {channels, pixels, voxels, NULL, NULL, NULL};
    u.images = malloc((size_t)(channels * pixels) * sizeof(double));
    u.observed_back = malloc((size_t)(channels * voxels) * sizeof(double));
    u.scene = malloc((size_t)voxels * sizeof(double));
    uint64_t state = seed;
    for (int64_t p = 0; p < channels * pixels; p++) {
        double draw = next_uniform(&state);
        u.images[p] = draw < 0.1 ? 0.0 : (draw < 0.15 ? -draw : 10.0 * draw);
    }
    for (int64_t p = 0; p < pixels; p++) {
        u.images[(channels - 1) * pixels + p] = 0.0; /* a channel with no signal */
    }
    for (int64_t v = 0; v < channels * voxels; v++) {
        double draw = next_uniform(&state);
        u.observed_back[v] = draw < 0.1 ? 0.0 : 5.0 * draw;
    }
    for (int64_t v = 0; v < voxels; v++) {
        u.scene[v] = 0.5 + next_uniform(&state);
    }
    return u;
}

static void free_case(update_case *u)
{
    free(u->images);
    free(u->observed_back);
    free(u->scene);
}

/* The scene after spart_regridder_apply and spart_mart_update. */
static double *unfused_scene(spart_context *context, const spart_regridder *backward,
                             const update_case *u, double gamma)
{
    int64_t scenes = u->channels * u->voxels;
    double *predicted_back = malloc((size_t)scenes * sizeof(double));
    double *scene = malloc((size_t)u->voxels * sizeof(double));
    memcpy(scene, u->scene, (size_t)u->voxels * sizeof(double));
    spart_array x = {u->images, spart_regridder_shape_input(backward)};
    assert_int_equal(spart_regridder_apply(context, backward, &x, predicted_back, scenes),
                     SPART_OK);
    assert_int_equal(spart_mart_update(context, scene, u->observed_back, predicted_back,
                                       u->channels, u->voxels, gamma, 0),
                     SPART_OK);
    free(predicted_back);
    return scene;
}

/* The scene after spart_mart_update_from_images with `scratch` (NULL: none). */
static double *fused_scene(spart_context *context, const spart_regridder *backward,
                           const update_case *u, double gamma, double *scratch)
{
    double *scene = malloc((size_t)u->voxels * sizeof(double));
    memcpy(scene, u->scene, (size_t)u->voxels * sizeof(double));
    spart_status status = spart_mart_update_from_images(
        context, backward, u->images, u->observed_back, u->channels, gamma, scene, scratch);
    if (status != SPART_OK) {
        fail_msg("spart_mart_update_from_images: %s", spart_context_error(context));
    }
    return scene;
}

static void fused_update_gives_the_bits_of_apply_then_update(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    /* 3 channels (the root 1/3 takes the general pow), 601 voxels: two
     * full blocks of 256 and a partial one */
    spart_regridder *backward = backward_regridder(context, 3, 3, 70, 601, 1);
    update_case u = make_case(3, 70, 601, 2);
    const double gammas[] = {0.5, 2.0 / 3.0, 1.0, 2.0, 0.25};
    const int threads[] = {1, 2, 3};
    for (int t = 0; t < 3; t++) {
        assert_int_equal(spart_context_set_threads(context, threads[t]), SPART_OK);
        for (int g = 0; g < 5; g++) {
            double *expected = unfused_scene(context, backward, &u, gammas[g]);
            double *got = fused_scene(context, backward, &u, gammas[g], NULL);
            assert_memory_equal(got, expected, (size_t)u.voxels * sizeof(double));
            free(expected);
            free(got);
        }
    }
    free_case(&u);
    spart_regridder_free(backward);
    spart_context_free(context);
}

static void fused_update_with_four_channels_and_a_large_scene(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    /* 4 channels (the root's sqrt(sqrt) path), a scene above the threshold
     * of the parallel loop */
    spart_regridder *backward = backward_regridder(context, 4, 4, 300, 9000, 3);
    update_case u = make_case(4, 300, 9000, 4);
    assert_int_equal(spart_context_set_threads(context, 2), SPART_OK);
    double *expected = unfused_scene(context, backward, &u, 0.5);
    double *got = fused_scene(context, backward, &u, 0.5, NULL);
    assert_memory_equal(got, expected, (size_t)u.voxels * sizeof(double));
    free(expected);
    free(got);
    free_case(&u);
    spart_regridder_free(backward);
    spart_context_free(context);
}

static void fused_update_with_the_channel_as_a_batch_axis_needs_scratch(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    /* one element shared by the 2 channels: its matrix has the voxels as
     * rows and the channels as a batch of vectors */
    spart_regridder *backward = backward_regridder(context, 1, 2, 40, 300, 5);
    assert_int_equal(spart_regridder_num_rows(backward), 300);
    update_case u = make_case(2, 40, 300, 6);
    double scene[300];
    memcpy(scene, u.scene, sizeof scene);
    assert_int_equal(spart_mart_update_from_images(context, backward, u.images, u.observed_back, 2,
                                                   1.0, scene, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(context), "predicted_back is NULL"));
    assert_memory_equal(scene, u.scene, sizeof scene);
    double *scratch = malloc(600 * sizeof(double));
    double *expected = unfused_scene(context, backward, &u, 1.0);
    double *got = fused_scene(context, backward, &u, 1.0, scratch);
    assert_memory_equal(got, expected, (size_t)u.voxels * sizeof(double));
    free(scratch);
    free(expected);
    free(got);
    free_case(&u);
    spart_regridder_free(backward);
    spart_context_free(context);
}

/* ---- the driver ------------------------------------------------------------------------- */

/* Operators whose backward callback is the regridders' own one called
 * through a wrapper, so that the driver cannot fuse it. */
typedef struct wrapped {
    spart_mart_operators inner;
} wrapped;

static spart_status wrapped_forward(void *user, spart_context *context, const double *scene,
                                    double *images, double *widths)
{
    const wrapped *w = user;
    return w->inner.forward(w->inner.user, context, scene, images, widths);
}

static spart_status wrapped_backward(void *user, spart_context *context, const double *images,
                                     double *scenes)
{
    const wrapped *w = user;
    return w->inner.backward(w->inner.user, context, images, scenes);
}

static spart_mart_result *solve(spart_context *context, const spart_mart_operators *operators,
                                const double *observed)
{
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = 6;
    spart_mart_result *result = NULL;
    spart_status status = spart_mart_solve(context, operators, observed, &options, &result);
    if (status != SPART_OK) {
        fail_msg("spart_mart_solve: %s", spart_context_error(context));
    }
    return result;
}

static void solve_with_regridder_operators_gives_the_unfused_bits(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    const int64_t channels = 4, pixels = 200, voxels = 1500;
    /* the forward operator: every channel's element applied to one scene */
    triples t = random_triples(channels, pixels, voxels, 9);
    const int64_t images[] = {channels, pixels}, scenes[] = {channels, voxels};
    const int64_t scene[] = {1, voxels};
    spart_regridder *backward = regridder_of(context, &t, images, scenes, 1);
    spart_regridder *forward = regridder_of(context, &t, scene, images, 0);
    free_triples(&t);
    spart_mart_regridder_pair pair = {forward, backward, channels, 1.0, 0.0};
    spart_mart_operators operators;
    assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators), SPART_OK);
    wrapped w = {operators};
    spart_mart_operators unfusable = operators;
    unfusable.forward = wrapped_forward;
    unfusable.backward = wrapped_backward;
    unfusable.user = &w;
    /* observed: the forward image of a positive scene */
    update_case u = make_case(channels, pixels, voxels, 10);
    double *observed = malloc((size_t)(channels * pixels) * sizeof(double));
    spart_array x = {u.scene, spart_regridder_shape_input(forward)};
    assert_int_equal(spart_regridder_apply(context, forward, &x, observed, channels * pixels),
                     SPART_OK);
    spart_mart_result *fused = solve(context, &operators, observed);
    spart_mart_result *plain = solve(context, &unfusable, observed);
    int64_t n = spart_mart_result_num_iterations(plain) * channels;
    assert_int_equal(spart_mart_result_num_iterations(fused), 6);
    assert_memory_equal(spart_mart_result_mean_chi_squared(fused),
                        spart_mart_result_mean_chi_squared(plain), (size_t)n * sizeof(double));
    assert_memory_equal(spart_mart_result_correlation(fused), spart_mart_result_correlation(plain),
                        (size_t)n * sizeof(double));
    assert_memory_equal(spart_mart_result_solution(fused), spart_mart_result_solution(plain),
                        (size_t)voxels * sizeof(double));
    spart_mart_result_free(fused);
    spart_mart_result_free(plain);
    free(observed);
    free_case(&u);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_context_free(context);
}

/* ---- a user's own loop of the public steps (spart/mart_steps.h) ---------------------------- */

/* A problem of a Regridder pair on the host, and its observations: the
 * forward image of a positive scene, with noise. */
typedef struct pair_problem {
    int64_t channels, pixels, voxels;
    spart_regridder *forward, *backward;
    spart_mart_regridder_pair pair;
    double *observed;
} pair_problem;

static pair_problem make_pair_problem(spart_context *context)
{
    pair_problem q = {4, 200, 1500, NULL, NULL, {0}, NULL};
    triples t = random_triples(q.channels, q.pixels, q.voxels, 21);
    const int64_t images[] = {q.channels, q.pixels}, scenes[] = {q.channels, q.voxels};
    const int64_t scene[] = {1, q.voxels};
    q.backward = regridder_of(context, &t, images, scenes, 1);
    q.forward = regridder_of(context, &t, scene, images, 0);
    free_triples(&t);
    spart_mart_regridder_pair pair = {q.forward, q.backward, q.channels, 1.5, 0.5};
    q.pair = pair;
    update_case u = make_case(q.channels, q.pixels, q.voxels, 22);
    int64_t n = q.channels * q.pixels;
    q.observed = malloc((size_t)n * sizeof(double));
    assert_non_null(q.observed);
    spart_array x = {u.scene, spart_regridder_shape_input(q.forward)};
    assert_int_equal(spart_regridder_apply(context, q.forward, &x, q.observed, n), SPART_OK);
    uint64_t noise = 23;
    for (int64_t p = 0; p < n; p++) {
        q.observed[p] *= 0.8 + 0.4 * next_uniform(&noise);
    }
    free_case(&u);
    return q;
}

static void free_pair_problem(pair_problem *q)
{
    spart_regridder_free(q->forward);
    spart_regridder_free(q->backward);
    free(q->observed);
}

static spart_mart_result *solve_with(spart_context *context, const pair_problem *q,
                                     const spart_mart_options *options)
{
    spart_mart_operators operators;
    assert_int_equal(spart_mart_operators_from_regridders(context, &q->pair, &operators), SPART_OK);
    spart_mart_result *result = NULL;
    if (spart_mart_solve(context, &operators, q->observed, options, &result) != SPART_OK) {
        fail_msg("spart_mart_solve: %s", spart_context_error(context));
    }
    return result;
}

/* The start of a run: the clamped backprojection of the observations and
 * the flat guess. */
static void start_run(spart_context *context, const pair_problem *q, double *observed_back,
                      double *scene)
{
    spart_array x = {q->observed, spart_regridder_shape_input(q->backward)};
    assert_int_equal(
        spart_regridder_apply(context, q->backward, &x, observed_back, q->channels * q->voxels),
        SPART_OK);
    assert_int_equal(
        spart_mart_flat_guess(context, observed_back, q->channels, q->voxels, scene, NULL, 0, 0),
        SPART_OK);
    assert_int_equal(spart_mart_clamp(context, observed_back, q->channels * q->voxels, 0),
                     SPART_OK);
}

/* The prediction of `scene` (unclamped) into `images`. */
static void predict(spart_context *context, const pair_problem *q, const double *scene,
                    double *images)
{
    spart_array x = {scene, spart_regridder_shape_input(q->forward)};
    assert_int_equal(
        spart_regridder_apply(context, q->forward, &x, images, q->channels * q->pixels), SPART_OK);
}

/* MART written out with the public steps, one iteration at a time, as a
 * user would write it: the bits of spart_mart_solve, merits and solution. */
static void a_loop_of_the_public_steps_gives_the_bits_of_the_solve(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    pair_problem q = make_pair_problem(context);
    const int64_t c = q.channels, images = q.channels * q.pixels;
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 40;
    options.threshold = 1e-9; /* runs to the limit: the last update made too */
    spart_mart_result *result = solve_with(context, &q, &options);

    double gamma = 2.0 / (double)c;
    double *observed_back = malloc((size_t)(c * q.voxels) * sizeof(double));
    double *scene = malloc((size_t)q.voxels * sizeof(double));
    double *predicted = malloc((size_t)images * sizeof(double));
    double *widths = malloc((size_t)images * sizeof(double));
    double *chi2 = malloc((size_t)(options.max_iterations * c) * sizeof(double));
    double *r = malloc((size_t)(options.max_iterations * c) * sizeof(double));
    start_run(context, &q, observed_back, scene);
    double merit_previous = INFINITY;
    int64_t i = 0;
    int stopped = 0;
    for (; i < options.max_iterations && !stopped; i++) {
        predict(context, &q, scene, predicted);
        assert_int_equal(spart_mart_finish_prediction(context, predicted, widths, images,
                                                      q.pair.gain, q.pair.read_noise, 0),
                         SPART_OK);
        assert_int_equal(spart_mart_merits(context, q.observed, predicted, widths, c, q.pixels,
                                           chi2 + i * c, r + i * c, NULL, 0, 0),
                         SPART_OK);
        double sum = 0.0;
        for (int64_t k = 0; k < c; k++) {
            sum += chi2[i * c + k];
        }
        double merit = sum / (double)c;
        stopped = merit_previous - merit < options.threshold;
        merit_previous = merit;
        if (!stopped) {
            assert_int_equal(spart_mart_update_from_images(context, q.backward, predicted,
                                                           observed_back, c, gamma, scene, NULL),
                             SPART_OK);
        }
    }
    assert_int_equal(spart_mart_result_num_iterations(result), i);
    assert_int_equal(spart_mart_result_success(result), stopped);
    assert_memory_equal(spart_mart_result_mean_chi_squared(result), chi2,
                        (size_t)(i * c) * sizeof(double));
    assert_memory_equal(spart_mart_result_correlation(result), r, (size_t)(i * c) * sizeof(double));
    assert_memory_equal(spart_mart_result_solution(result), scene,
                        (size_t)q.voxels * sizeof(double));
    free(observed_back), free(scene), free(predicted), free(widths), free(chi2), free(r);
    spart_mart_result_free(result);
    free_pair_problem(&q);
    spart_context_free(context);
}

/* The same run in batches of 8 iterations as spart_mart_solve records
 * them on a device, here on the host: the rule decided by
 * spart_mart_decide into a run state, the steps gated by it, the host
 * looking only once a batch. The iterations after the stop change
 * nothing: the bits of spart_mart_solve, and the kept states too. */
static void a_run_in_gated_batches_gives_the_bits_of_the_solve(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    pair_problem q = make_pair_problem(context);
    const int64_t c = q.channels, images = q.channels * q.pixels, batch = 8;
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.threshold = 5e-3;
    options.keep_intermediate = 1;
    spart_mart_result *result = solve_with(context, &q, &options);
    int64_t done = spart_mart_result_num_iterations(result);
    assert_true(spart_mart_result_success(result));
    assert_true(done > 2 && done % batch != 0); /* stops inside a batch */

    double gamma = 2.0 / (double)c;
    size_t bytes = spart_mart_workspace_size(c, q.pixels, q.voxels);
    void *workspace = malloc(bytes);
    double *observed_back = malloc((size_t)(c * q.voxels) * sizeof(double));
    double *scene = malloc((size_t)q.voxels * sizeof(double));
    double *predicted = malloc((size_t)images * sizeof(double));
    double *widths = malloc((size_t)images * sizeof(double));
    int64_t rows = (done / batch + 1) * batch;
    double *history = malloc((size_t)(rows * 2 * c) * sizeof(double));
    double *kept = malloc((size_t)(rows * q.voxels) * sizeof(double));
    start_run(context, &q, observed_back, scene);
    spart_mart_run_state run = {SPART_MART_RUN_GOING, 0, 0, INFINITY};
    spart_mart_run_rule rule = {c, options.max_iterations, 1, 0, options.threshold, 0.0};
    int64_t k = 0;
    while (run.stopped == SPART_MART_RUN_GOING) {
        for (int64_t end = k + batch; k < end; k++) {
            if (k > 0) {
                assert_int_equal(spart_mart_update_from_images_gated(context, q.backward, predicted,
                                                                     observed_back, c, gamma, scene,
                                                                     NULL, &run),
                                 SPART_OK);
            }
            predict(context, &q, scene, predicted);
            assert_int_equal(spart_mart_finish_and_measure(
                                 context, q.observed, predicted, widths, c, q.pixels, q.pair.gain,
                                 q.pair.read_noise, workspace, bytes, 0, &run),
                             SPART_OK);
            assert_int_equal(
                spart_mart_keep(context, scene, q.voxels, kept + k * q.voxels, &run, 0), SPART_OK);
            assert_int_equal(
                spart_mart_decide(context, &rule, workspace, history + k * 2 * c, &run, 0),
                SPART_OK);
        }
    }
    assert_int_equal(run.stopped, SPART_MART_RUN_STOPPED_BY_RULE);
    assert_int_equal(run.iterations, done);
    for (int64_t i = 0; i < done; i++) {
        assert_memory_equal(spart_mart_result_mean_chi_squared(result) + i * c, history + i * 2 * c,
                            (size_t)c * sizeof(double));
        assert_memory_equal(spart_mart_result_correlation(result) + i * c, history + i * 2 * c + c,
                            (size_t)c * sizeof(double));
        assert_memory_equal(spart_mart_result_solutions(result, i), kept + i * q.voxels,
                            (size_t)q.voxels * sizeof(double));
    }
    /* the state it stopped at, unchanged by the rest of the batch */
    assert_memory_equal(spart_mart_result_solutions(result, done - 1), scene,
                        (size_t)q.voxels * sizeof(double));
    free(workspace), free(observed_back), free(scene), free(predicted), free(widths);
    free(history), free(kept);
    spart_mart_result_free(result);
    free_pair_problem(&q);
    spart_context_free(context);
}

/* A stopped gate changes nothing, a NULL gate is no gate; the checks. */
static void gated_steps_check_their_arguments(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double scene[2] = {1.0, 2.0}, back[2] = {1.0, 1.0}, predicted_back[2] = {2.0, 0.5};
    spart_mart_run_state stopped = {SPART_MART_RUN_STOPPED_BY_RULE, 0, 3, 1.0};
    assert_int_equal(
        spart_mart_update_gated(context, scene, back, predicted_back, 1, 2, 1.0, 0, &stopped),
        SPART_OK);
    assert_true(scene[0] == 1.0 && scene[1] == 2.0);
    assert_int_equal(
        spart_mart_update_gated(context, scene, back, predicted_back, 1, 2, 1.0, 0, NULL),
        SPART_OK);
    assert_true(scene[0] == 0.5 && scene[1] == 4.0);
    spart_mart_run_rule rule = {1, 0, 1, 0, 1e-3, 0.0};
    double merits[2] = {1.0, 0.0}, row[2];
    spart_mart_run_state run = {SPART_MART_RUN_GOING, 0, 0, INFINITY};
    assert_int_equal(spart_mart_decide(context, &rule, merits, row, &run, 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_mart_keep(context, scene, 2, NULL, &run, 0), SPART_ERROR_NULL_POINTER);
    /* host memory for a device step: no device here, or not its memory */
    spart_status status = spart_mart_clamp(context, scene, 2, 1);
    assert_true(status == SPART_ERROR_NO_DEVICE || status == SPART_ERROR_INVALID_ARGUMENT);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fused_update_gives_the_bits_of_apply_then_update),
        cmocka_unit_test(fused_update_with_four_channels_and_a_large_scene),
        cmocka_unit_test(fused_update_with_the_channel_as_a_batch_axis_needs_scratch),
        cmocka_unit_test(solve_with_regridder_operators_gives_the_unfused_bits),
        cmocka_unit_test(a_loop_of_the_public_steps_gives_the_bits_of_the_solve),
        cmocka_unit_test(a_run_in_gated_batches_gives_the_bits_of_the_solve),
        cmocka_unit_test(gated_steps_check_their_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
