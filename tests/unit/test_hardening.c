/*
 * The library's answers to the arguments that overflowed, were accepted
 * without sense, or lost an earlier error (issue 29, items 3, 7 and 12):
 * each case failed before its fix.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spart/mart_steps.h"
#include "spart/scene.h"
#include "spart/weights.h"
#include "spart.h"

static spart_context *new_context(void)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    return context;
}

/* 3: sizes of 2^40 overflowed a signed product (undefined; the plain build
 * returned a wrapped size). Now 0, and the steps refuse them. */
static void workspace_size_of_huge_sizes_is_zero(void **state)
{
    (void)state;
    int64_t huge = (int64_t)1 << 40;
    assert_int_equal(spart_mart_workspace_size(huge, huge, huge), 0);
    assert_int_equal(spart_mart_workspace_size(INT64_MAX, INT64_MAX, 1), 0);
    assert_int_equal(spart_mart_workspace_size(INT64_MAX, 1, 1), 0);
    /* one channel of INT64_MAX pixels: 2^55 + 4 sums, which a size_t counts */
    assert_int_equal(spart_mart_workspace_size(1, INT64_MAX, 1),
                     ((size_t)1 << 55 | 4) * sizeof(double));
    /* ordinary sizes keep their answer */
    assert_true(spart_mart_workspace_size(2, 4096, 4096) >= 2 * 4 * sizeof(double));
    spart_context *context = new_context();
    double value = 1.0;
    double workspace[8];
    spart_status status =
        spart_mart_finish_and_measure(context, &value, &value, &value, huge, huge, 1.0, 0.0,
                                      workspace, sizeof workspace, 0, NULL);
    assert_int_equal(status, SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "more bytes than a size_t counts"));
    spart_context_free(context);
}

/* 7: a setter called after a failure cleared its sentence (the command
 * printed "building the instrument: " and nothing after it). */
static void setters_keep_the_earlier_error(void **state)
{
    (void)state;
    spart_context *context = new_context();
    assert_int_equal(spart_context_set_threads(context, -5), SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_context_set_progress(context, NULL, NULL), SPART_OK);
    assert_non_null(strstr(spart_context_error(context), "threads = -5"));
    assert_int_equal(spart_context_set_log(context, NULL, NULL), SPART_OK);
    assert_non_null(strstr(spart_context_error(context), "threads = -5"));
    assert_int_equal(spart_context_set_threads(context, 2), SPART_OK);
    assert_non_null(strstr(spart_context_error(context), "threads = -5"));
    spart_context_free(context);
}

/* 12: INT_MAX threads would make OpenMP try to start them. */
static void threads_are_bounded(void **state)
{
    (void)state;
    spart_context *context = new_context();
    assert_int_equal(spart_context_set_threads(context, INT_MAX), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "threads = 2147483647"));
    assert_int_equal(spart_context_set_threads(context, 65536), SPART_OK);
    spart_context_free(context);
}

/* 12: weights from arrays: one element of a 2-cell grid onto a 2-cell grid. */
static spart_status from_arrays(spart_context *context, const spart_shape *orthogonal,
                                const spart_shape *input, const spart_shape *output, int num_axis,
                                const int *axis, spart_weights **weights)
{
    int64_t offsets[4] = {0, 1, 1, 1};
    int64_t indices[1] = {0};
    double values[1] = {1.0};
    return spart_weights_create_from_arrays(context, orthogonal, input, output, num_axis, axis,
                                            num_axis, axis, offsets, indices, indices, values,
                                            weights);
}

static void weights_from_arrays_refuse_bad_axes(void **state)
{
    (void)state;
    spart_context *context = new_context();
    spart_shape scalar = {0, {0}};
    spart_shape grid = {1, {2}};
    spart_weights *weights = NULL;
    /* the control: every axis resampled, one element */
    assert_int_equal(from_arrays(context, &scalar, &grid, &grid, 0, NULL, &weights), SPART_OK);
    spart_weights_free(weights);
    weights = NULL;
    assert_int_equal(from_arrays(context, &scalar, &grid, &grid, 1, NULL, &weights),
                     SPART_ERROR_NULL_POINTER);
    assert_null(weights);
    assert_int_equal(from_arrays(context, &scalar, &grid, &grid, -1, NULL, &weights),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(weights);
    spart_context_free(context);
}

static void weights_from_arrays_refuse_unbroadcastable_orthogonal(void **state)
{
    (void)state;
    spart_context *context = new_context();
    /* input 3x2 and output 3x2 resampled on axis 1: their orthogonal axis
     * (3) does not broadcast to an orthogonal shape of 2 elements */
    spart_shape orthogonal = {1, {2}};
    spart_shape side = {2, {3, 2}};
    int axis[1] = {1};
    int64_t offsets[3] = {0, 1, 1};
    int64_t indices[1] = {0};
    double values[1] = {1.0};
    spart_weights *weights = NULL;
    spart_status status =
        spart_weights_create_from_arrays(context, &orthogonal, &side, &side, 1, axis, 1, axis,
                                         offsets, indices, indices, values, &weights);
    assert_int_equal(status, SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(context), "do not broadcast"));
    assert_null(weights);
    /* the same with an orthogonal shape of 3 is fine */
    spart_shape three = {1, {3}};
    int64_t offsets3[4] = {0, 1, 1, 1};
    status = spart_weights_create_from_arrays(context, &three, &side, &side, 1, axis, 1, axis,
                                              offsets3, indices, indices, values, &weights);
    assert_int_equal(status, SPART_OK);
    spart_weights_free(weights);
    spart_context_free(context);
}

/* 12: below -c the optical convention gives a negative wavelength. */
static void velocity_below_minus_c_is_refused(void **state)
{
    (void)state;
    spart_context *context = new_context();
    double velocity[2] = {-100.0, -400000.0};
    double wavelength[2] = {0.0, 0.0};
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, 1, velocity, wavelength),
                     SPART_OK);
    assert_true(wavelength[0] > 0.0);
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, 2, velocity, wavelength),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "velocity[1]"));
    velocity[1] = -299792.458; /* exactly -c: wavelength 0 */
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, 2, velocity, wavelength),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workspace_size_of_huge_sizes_is_zero),
        cmocka_unit_test(setters_keep_the_earlier_error),
        cmocka_unit_test(threads_are_bounded),
        cmocka_unit_test(weights_from_arrays_refuse_bad_axes),
        cmocka_unit_test(weights_from_arrays_refuse_unbroadcastable_orthogonal),
        cmocka_unit_test(velocity_below_minus_c_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
