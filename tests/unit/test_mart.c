/*
 * tests/unit/test_mart.c: the MART driver step by step on cases small
 * enough to check by hand, its stopping rules and result semantics (as
 * ctis 0.3.1), its errors, and the update from images. The arithmetic
 * under the steps (pow, corrections, merits) is in test_mart_math.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../solvers/mart_internal.h"
#include "mart/mart_math.h"
#include "spart/mart.h"
#include "spart/weights.h"
#include "test_util.h"

/* ---- a toy problem -------------------------------------------------------------------------- */

/* Channel c sees voxel v with weight gain[c][v]; the backprojection is the
 * plain transpose. Widths: sqrt(d) (Poisson). */
typedef struct toy {
    int64_t channels, voxels, pixels;
    double weight[2][2][2]; /* [channel][pixel][voxel] */
    int fail_forward_at;    /* call number that fails, or -1 */
    int forward_calls;
} toy;

static spart_status toy_forward(void *user, spart_context *context, const double *scene,
                                double *images, double *widths)
{
    toy *t = user;
    if (t->forward_calls++ == t->fail_forward_at) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT, "toy says no");
    }
    for (int64_t c = 0; c < t->channels; c++) {
        for (int64_t p = 0; p < t->pixels; p++) {
            double d = 0.0;
            for (int64_t v = 0; v < t->voxels; v++) {
                d += t->weight[c][p][v] * scene[v];
            }
            images[c * t->pixels + p] = d;
            widths[c * t->pixels + p] = sqrt(d);
        }
    }
    return SPART_OK;
}

static spart_status toy_backward(void *user, spart_context *context, const double *images,
                                 double *scenes)
{
    (void)context;
    toy *t = user;
    for (int64_t c = 0; c < t->channels; c++) {
        for (int64_t v = 0; v < t->voxels; v++) {
            double b = 0.0;
            for (int64_t p = 0; p < t->pixels; p++) {
                b += t->weight[c][p][v] * images[c * t->pixels + p];
            }
            scenes[c * t->voxels + v] = b;
        }
    }
    return SPART_OK;
}

static spart_mart_operators toy_operators(toy *t)
{
    spart_mart_operators operators = {t->channels, t->voxels, t->pixels, toy_forward, toy_backward,
                                      t,           0,         0,         NULL,        NULL};
    return operators;
}

/* One voxel seen by one pixel of one channel with weight 2. */
static toy one_voxel(void)
{
    toy t;
    memset(&t, 0, sizeof t);
    t.channels = 1;
    t.voxels = 1;
    t.pixels = 1;
    t.weight[0][0][0] = 2.0;
    t.fail_forward_at = -1;
    return t;
}

static void one_voxel_with_gamma_one_is_solved_in_one_update(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = one_voxel();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0};
    const double guess[] = {1.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.gamma = 1.0;
    options.guess = guess;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    /* L0 = 1 predicts 2, ratio 20 / 4 = 5, L1 = 5 predicts 10: chi2 0,
     * then 0 again: the merit falls by 0 < threshold at iteration 2. */
    assert_int_equal(spart_mart_result_num_iterations(result), 3);
    assert_int_equal(spart_mart_result_success(result), 1);
    assert_string_equal(spart_mart_result_message(result), "Achieved merit less than 0.001.");
    assert_true(spart_mart_result_solution(result)[0] == 5.0);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    assert_true(fabs(chi2[0] - 32.0) < 32.0 * 1e-15); /* ((10 - 2) / sqrt 2)^2, rounded */
    assert_true(chi2[1] == 0.0);
    spart_mart_result_free(result);
    spart_context_free(context);
}

static void flat_guess_is_the_mean_of_the_backprojection(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = one_voxel();
    t.voxels = 2;
    t.weight[0][0][1] = 2.0; /* both voxels seen equally */
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {8.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 1;
    options.keep_intermediate = 1;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    /* backprojection 16 per voxel: the guess is 16 everywhere */
    assert_true(spart_mart_result_solutions(result, 0)[0] == 16.0);
    assert_true(spart_mart_result_solutions(result, 0)[1] == 16.0);
    assert_true(spart_mart_result_gamma(result) == 2.0); /* 2 / one channel */
    spart_mart_result_free(result);
    spart_context_free(context);
}

static void zero_backprojection_gives_ratio_one_and_a_zero_voxel_stays_zero(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = one_voxel();
    t.voxels = 2;
    t.pixels = 2;
    t.weight[0][0][0] = 1.0; /* voxel 1 unseen: ratio 0/0 -> 1 */
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {0.0, 0.0}; /* voxel 0 observes zero: 0/x -> 0 */
    const double guess[] = {3.0, 7.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.guess = guess;
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = 3;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    const double *solution = spart_mart_result_solution(result);
    assert_true(solution[0] == 0.0);
    assert_true(solution[1] == 7.0);
    assert_int_equal(spart_mart_result_num_iterations(result), 3);
    assert_int_equal(spart_mart_result_success(result), 1);
    assert_string_equal(spart_mart_result_message(result), "Completed 3 iterations.");
    spart_mart_result_free(result);
    spart_context_free(context);
}

/* Two channels that disagree: MART oscillates, the merit stalls. */
static toy two_channels(void)
{
    toy t;
    memset(&t, 0, sizeof t);
    t.channels = 2;
    t.voxels = 2;
    t.pixels = 2;
    t.weight[0][0][0] = 1.0;
    t.weight[0][1][1] = 1.0;
    t.weight[1][0][0] = 0.5;
    t.weight[1][0][1] = 0.5;
    t.weight[1][1][0] = 0.25;
    t.weight[1][1][1] = 0.75;
    t.fail_forward_at = -1;
    return t;
}

static void iteration_limit_is_a_failure_with_ctis_message(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = two_channels();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0, 1.0, 3.0, 9.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 2;
    options.threshold = -1e300; /* never met */
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    assert_int_equal(spart_mart_result_success(result), 0);
    assert_int_equal(spart_mart_result_num_iterations(result), 2);
    assert_string_equal(spart_mart_result_message(result),
                        "Max number of iterations (2) exceeded.");
    assert_int_equal(spart_mart_result_num_solutions(result), 1);
    spart_mart_result_free(result);
    spart_context_free(context);
}

static void intermediate_solution_at_the_limit_is_the_state_before_the_last_update(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = two_channels();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0, 1.0, 3.0, 9.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 2;
    options.threshold = -1e300;
    spart_mart_result *plain = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &plain), SPART_OK);
    options.keep_intermediate = 1;
    spart_mart_result *kept = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &kept), SPART_OK);
    assert_int_equal(spart_mart_result_num_solutions(kept), 2);
    /* kept: the states at the start of iterations 0 and 1; plain: after 2
     * updates. ctis returns solutions[-1] for both. */
    const double *last_kept = spart_mart_result_solution(kept);
    assert_ptr_equal(last_kept, spart_mart_result_solutions(kept, 1));
    assert_true(last_kept[0] != spart_mart_result_solution(plain)[0]);
    /* the same merits either way */
    assert_memory_equal(spart_mart_result_mean_chi_squared(kept),
                        spart_mart_result_mean_chi_squared(plain), 4 * sizeof(double));
    spart_mart_result_free(plain);
    spart_mart_result_free(kept);
    spart_context_free(context);
}

static void intermediate_solution_on_convergence_equals_the_plain_one(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = two_channels();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0, 1.0, 3.0, 9.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.threshold = 1e-2;
    spart_mart_result *plain = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &plain), SPART_OK);
    options.keep_intermediate = 1;
    spart_mart_result *kept = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &kept), SPART_OK);
    assert_int_equal(spart_mart_result_success(plain), 1);
    int64_t n = spart_mart_result_num_iterations(plain);
    assert_int_equal(spart_mart_result_num_solutions(kept), n);
    assert_memory_equal(spart_mart_result_solution(kept), spart_mart_result_solution(plain),
                        2 * sizeof(double));
    spart_mart_result_free(plain);
    spart_mart_result_free(kept);
    spart_context_free(context);
}

/* Records the merits the callback sees; stops at `stop_at`. */
typedef struct watcher {
    int64_t seen;
    int64_t stop_at;
    double merits[64];
} watcher;

static int watch(void *user, const spart_mart_progress *progress)
{
    watcher *w = user;
    w->merits[w->seen++] = progress->merit;
    return progress->iteration == w->stop_at;
}

static void a_rising_merit_stops_the_run_as_a_success(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = two_channels();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0, 1.0, 3.0, 9.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.gamma = 4.0; /* overshoots */
    options.threshold = -1e300;
    watcher w = {0, -1, {0}};
    options.callback = watch;
    options.callback_user = &w;
    options.max_iterations = 50;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    spart_mart_result_free(result);
    /* find where the merit first rises, then run with ctis's threshold: it
     * must stop there, as a success. */
    int64_t rise = -1;
    for (int64_t i = 1; i < w.seen && rise < 0; i++) {
        if (w.merits[i] > w.merits[i - 1]) {
            rise = i;
        }
    }
    assert_true(rise > 0);
    options.threshold = 0.0;
    options.callback = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    assert_int_equal(spart_mart_result_success(result), 1);
    assert_true(spart_mart_result_num_iterations(result) <= rise + 1);
    spart_mart_result_free(result);
    spart_context_free(context);
}

static void target_rule_stops_at_the_first_merit_under_the_target(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = one_voxel();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0};
    const double guess[] = {1.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.gamma = 0.5;
    options.guess = guess;
    options.stop_rule = SPART_MART_STOP_TARGET;
    options.target = 1.0;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    int64_t n = spart_mart_result_num_iterations(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    assert_int_equal(spart_mart_result_success(result), 1);
    assert_true(chi2[n - 1] <= 1.0);
    for (int64_t i = 0; i + 1 < n; i++) {
        assert_true(chi2[i] > 1.0);
    }
    spart_mart_result_free(result);
    spart_context_free(context);
}

static void callback_stops_the_run_cleanly(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = two_channels();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0, 1.0, 3.0, 9.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.threshold = -1e300;
    watcher w = {0, 2, {0}};
    options.callback = watch;
    options.callback_user = &w;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    assert_int_equal(w.seen, 3);
    assert_int_equal(spart_mart_result_num_iterations(result), 3);
    assert_int_equal(spart_mart_result_success(result), 0);
    assert_string_equal(spart_mart_result_message(result),
                        "Stopped by the callback at iteration 2.");
    spart_mart_result_free(result);
    spart_context_free(context);
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void bad_options_are_refused_with_a_sentence(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = one_voxel();
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0};
    spart_mart_result *result = NULL;
    spart_mart_options options;

    spart_mart_options_init(&options);
    options.gamma = -1.0;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "gamma"));
    assert_null(result);

    spart_mart_options_init(&options);
    options.max_iterations = 0;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "max_iterations"));

    spart_mart_options_init(&options);
    options.stop_rule = (spart_mart_stop_rule)7;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result),
                     SPART_ERROR_UNKNOWN_ENUM);

    spart_mart_options_init(&options);
    operators.num_channel = 0;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "num_channel"));

    operators = toy_operators(&t);
    assert_int_equal(spart_mart_solve(context, &operators, NULL, &options, &result),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_mart_solve(NULL, &operators, observed, &options, &result),
                     SPART_ERROR_NULL_POINTER);
    spart_context_free(context);
}

static void a_failing_operator_ends_the_solve_with_its_status(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    toy t = one_voxel();
    t.fail_forward_at = 1;
    spart_mart_operators operators = toy_operators(&t);
    const double observed[] = {10.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    const char *sentence = spart_context_error(context);
    assert_non_null(strstr(sentence, "forward operator failed at iteration 1"));
    assert_non_null(strstr(sentence, "toy says no"));
    spart_context_free(context);
}

/* ---- the update from images ----------------------------------------------------------------- */

/* A backward Regridder from 3 pixels to 2 channels x 2 voxels (4 values),
 * one voxel of channel 1 with a negative backprojection. */
static spart_regridder *small_backward(spart_context *context)
{
    const spart_shape orthogonal = {0, {0}}, shape_in = {1, {3}}, shape_out = {1, {4}};
    const int axis[1] = {0};
    const int64_t offsets[2] = {0, 6};
    const int64_t in[6] = {0, 1, 2, 0, 1, 2};
    const int64_t out[6] = {0, 0, 1, 2, 3, 3};
    const double values[6] = {0.5, 0.25, 1.5, -0.75, 2.0, 0.125};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &shape_in, &shape_out,
                                                      1, axis, 1, axis, offsets, in, out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *backward = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &backward), SPART_OK);
    spart_weights_free(weights);
    return backward;
}

static void update_from_images_equals_apply_then_update(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_regridder *backward = small_backward(context);
    const double images[3] = {3.0, 1.5, 7.0};
    const double observed_back[4] = {2.0, 1.0, 0.5, 4.0};
    double expected[2] = {1.0, 2.0}, got[2] = {1.0, 2.0};
    double predicted_back[4], scratch[4];
    spart_array x = {images, spart_regridder_shape_input(backward)};
    assert_int_equal(spart_regridder_apply(context, backward, &x, predicted_back, 4), SPART_OK);
    assert_int_equal(
        spart_mart_update(context, expected, observed_back, predicted_back, 2, 2, 0.7, 0),
        SPART_OK);
    assert_int_equal(spart_mart_update_from_images(context, backward, images, observed_back, 2, 0.7,
                                                   got, scratch),
                     SPART_OK);
    assert_memory_equal(got, expected, sizeof got);
    assert_true(got[0] != 1.0 && got[1] != 2.0);
    spart_regridder_free(backward);
    spart_context_free(context);
}

static void update_from_images_refuses_a_backward_of_other_channels(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_regridder *backward = small_backward(context);
    const double images[3] = {3.0, 1.5, 7.0};
    const double observed_back[4] = {2.0, 1.0, 0.5, 4.0};
    double scene[2] = {1.0, 2.0}, scratch[4];
    assert_int_equal(spart_mart_update_from_images(context, backward, images, observed_back, 3, 0.7,
                                                   scene, scratch),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(context), "not 3 channels"));
    assert_int_equal(spart_mart_update_from_images(context, backward, images, observed_back, 2, 0.0,
                                                   scene, scratch),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(
        spart_mart_update_from_images(context, NULL, images, observed_back, 2, 0.7, scene, scratch),
        SPART_ERROR_NULL_POINTER);
    assert_true(scene[0] == 1.0 && scene[1] == 2.0);
    spart_regridder_free(backward);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_voxel_with_gamma_one_is_solved_in_one_update),
        cmocka_unit_test(flat_guess_is_the_mean_of_the_backprojection),
        cmocka_unit_test(zero_backprojection_gives_ratio_one_and_a_zero_voxel_stays_zero),
        cmocka_unit_test(iteration_limit_is_a_failure_with_ctis_message),
        cmocka_unit_test(intermediate_solution_at_the_limit_is_the_state_before_the_last_update),
        cmocka_unit_test(intermediate_solution_on_convergence_equals_the_plain_one),
        cmocka_unit_test(a_rising_merit_stops_the_run_as_a_success),
        cmocka_unit_test(target_rule_stops_at_the_first_merit_under_the_target),
        cmocka_unit_test(callback_stops_the_run_cleanly),
        cmocka_unit_test(bad_options_are_refused_with_a_sentence),
        cmocka_unit_test(a_failing_operator_ends_the_solve_with_its_status),
        cmocka_unit_test(update_from_images_equals_apply_then_update),
        cmocka_unit_test(update_from_images_refuses_a_backward_of_other_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
