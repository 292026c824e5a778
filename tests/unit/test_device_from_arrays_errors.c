/*
 * spart_regridder_create_device_from_arrays where there may be no device
 * (label `unit`): its arguments are checked on the host before any device
 * work, so a bad layout gets the status and the sentence that
 * spart_weights_create_from_arrays gives the same arrays, and bad
 * regridder options those of spart_regridder_create, with or without a
 * GPU; NULL pointers are refused; valid arguments without a device (a
 * build without CUDA, or none visible) get SPART_ERROR_NO_DEVICE with a
 * sentence, and no regridder, even with indices out of range (they are
 * checked on the device, never read on the host).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_util.h"

/* Weights as arrays: two elements along the first axis, from 2 x 3 input
 * cells to 4 input cells (resampled axes last), three entries each. */
typedef struct arrays {
    spart_shape orthogonal;
    spart_shape input;
    spart_shape output;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t offsets[3];
    int64_t indices_input[6];
    int64_t indices_output[6];
    double values[6];
} arrays;

static arrays valid_arrays(void)
{
    arrays a;
    memset(&a, 0, sizeof a);
    a.orthogonal = shape_of(1, (const int64_t[]){2});
    a.input = shape_of(3, (const int64_t[]){2, 2, 3});
    a.output = shape_of(2, (const int64_t[]){2, 4});
    a.num_axis_input = 2;
    a.axis_input[0] = 1;
    a.axis_input[1] = 2;
    a.num_axis_output = 1;
    a.axis_output[0] = -1;
    const int64_t offsets[3] = {0, 3, 6};
    const int64_t in[6] = {0, 5, 2, 1, 1, 4};
    const int64_t out[6] = {3, 0, 1, 2, 2, 0};
    const double values[6] = {0.5, 0.25, 1.0, -2.0, 0.0, 3.0};
    memcpy(a.offsets, offsets, sizeof offsets);
    memcpy(a.indices_input, in, sizeof in);
    memcpy(a.indices_output, out, sizeof out);
    memcpy(a.values, values, sizeof values);
    return a;
}

/* Both functions refuse `a` (with these shape pointers and offsets) with
 * the same status and sentence, and make nothing. */
static void assert_refused_alike(spart_context *context, const arrays *a,
                                 const spart_shape *orthogonal, const spart_shape *input,
                                 const spart_shape *output, const int64_t *offsets,
                                 const int64_t *indices_input, spart_status expected)
{
    spart_weights *weights = (spart_weights *)&weights; /* must become NULL */
    assert_int_equal(
        spart_weights_create_from_arrays(context, orthogonal, input, output, a->num_axis_input,
                                         a->axis_input, a->num_axis_output, a->axis_output, offsets,
                                         indices_input, a->indices_output, a->values, &weights),
        expected);
    assert_null(weights);
    char sentence[512];
    snprintf(sentence, sizeof sentence, "%s", spart_context_error(context));
    assert_true(strlen(sentence) > 0);
    spart_regridder *regridder = (spart_regridder *)&regridder; /* must become NULL */
    assert_int_equal(spart_regridder_create_device_from_arrays(
                         context, orthogonal, input, output, a->num_axis_input, a->axis_input,
                         a->num_axis_output, a->axis_output, offsets, indices_input,
                         a->indices_output, a->values, NULL, &regridder),
                     expected);
    assert_null(regridder);
    assert_string_equal(spart_context_error(context), sentence);
}

static void assert_layout_refused_alike(spart_context *context, const arrays *a,
                                        spart_status expected)
{
    assert_refused_alike(context, a, &a->orthogonal, &a->input, &a->output, a->offsets,
                         a->indices_input, expected);
}

static void null_shapes_and_offsets_get_the_errors_of_create_from_arrays(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    arrays a = valid_arrays();
    assert_refused_alike(context, &a, NULL, &a.input, &a.output, a.offsets, a.indices_input,
                         SPART_ERROR_NULL_POINTER);
    assert_refused_alike(context, &a, &a.orthogonal, NULL, &a.output, a.offsets, a.indices_input,
                         SPART_ERROR_NULL_POINTER);
    assert_refused_alike(context, &a, &a.orthogonal, &a.input, NULL, a.offsets, a.indices_input,
                         SPART_ERROR_NULL_POINTER);
    assert_refused_alike(context, &a, &a.orthogonal, &a.input, &a.output, NULL, a.indices_input,
                         SPART_ERROR_NULL_POINTER);
    /* Entry arrays may be NULL only when there are no entries. */
    assert_refused_alike(context, &a, &a.orthogonal, &a.input, &a.output, a.offsets, NULL,
                         SPART_ERROR_NULL_POINTER);
    spart_context_free(context);
}

static void bad_shapes_and_axes_get_the_errors_of_create_from_arrays(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    arrays a = valid_arrays();
    a.orthogonal.ndim = SPART_MAX_NDIM + 1;
    assert_layout_refused_alike(context, &a, SPART_ERROR_INVALID_ARGUMENT);
    a = valid_arrays();
    a.input.dims[1] = -2;
    assert_layout_refused_alike(context, &a, SPART_ERROR_INVALID_ARGUMENT);
    a = valid_arrays();
    a.axis_input[1] = 3; /* the input has 3 axes */
    assert_layout_refused_alike(context, &a, SPART_ERROR_AXIS_OUT_OF_RANGE);
    a = valid_arrays();
    a.axis_output[0] = -3;
    assert_layout_refused_alike(context, &a, SPART_ERROR_AXIS_OUT_OF_RANGE);
    a = valid_arrays();
    a.axis_input[1] = -2; /* axis 1 again */
    assert_layout_refused_alike(context, &a, SPART_ERROR_INVALID_ARGUMENT);
    spart_context_free(context);
}

static void bad_offsets_get_the_errors_of_create_from_arrays(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    arrays a = valid_arrays();
    a.offsets[0] = 1;
    assert_layout_refused_alike(context, &a, SPART_ERROR_INVALID_ARGUMENT);
    a = valid_arrays();
    a.offsets[2] = 2; /* less than offsets[1] = 3 */
    assert_layout_refused_alike(context, &a, SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "offsets[2] = 2"));
    spart_context_free(context);
}

static void bad_options_get_the_errors_of_spart_regridder_create(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    arrays a = valid_arrays();
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(
                         context, &a.orthogonal, &a.input, &a.output, a.num_axis_input,
                         a.axis_input, a.num_axis_output, a.axis_output, a.offsets, a.indices_input,
                         a.indices_output, a.values, &weights),
                     SPART_OK);
    spart_regridder_options options[3];
    const spart_status expected[3] = {SPART_ERROR_UNKNOWN_ENUM, SPART_ERROR_SHAPE_MISMATCH,
                                      SPART_ERROR_INVALID_ARGUMENT};
    for (int k = 0; k < 3; k++) {
        spart_regridder_options_init(&options[k]);
    }
    options[0].value_type = (spart_value_type)7;
    options[1].has_shape_output = 1;
    options[1].shape_output = shape_of(2, (const int64_t[]){3, 4}); /* 2 elements */
    options[2].num_axis_input = -1;
    for (int k = 0; k < 3; k++) {
        spart_regridder *host = (spart_regridder *)&host;
        assert_int_equal(spart_regridder_create(context, weights, &options[k], &host), expected[k]);
        assert_null(host);
        char sentence[512];
        snprintf(sentence, sizeof sentence, "%s", spart_context_error(context));
        spart_regridder *regridder = (spart_regridder *)&regridder;
        assert_int_equal(spart_regridder_create_device_from_arrays(
                             context, &a.orthogonal, &a.input, &a.output, a.num_axis_input,
                             a.axis_input, a.num_axis_output, a.axis_output, a.offsets,
                             a.indices_input, a.indices_output, a.values, &options[k], &regridder),
                         expected[k]);
        assert_null(regridder);
        assert_string_equal(spart_context_error(context), sentence);
    }
    spart_weights_free(weights);
    spart_context_free(context);
}

static void null_context_and_result_are_refused(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    arrays a = valid_arrays();
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create_device_from_arrays(
                         NULL, &a.orthogonal, &a.input, &a.output, a.num_axis_input, a.axis_input,
                         a.num_axis_output, a.axis_output, a.offsets, a.indices_input,
                         a.indices_output, a.values, NULL, &regridder),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_create_device_from_arrays(
                         context, &a.orthogonal, &a.input, &a.output, a.num_axis_input,
                         a.axis_input, a.num_axis_output, a.axis_output, a.offsets, a.indices_input,
                         a.indices_output, a.values, NULL, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(context), "regridder"));
    spart_context_free(context);
}

static void valid_arguments_without_a_device_say_no_device(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    if (spart_context_set_cuda_device(context, 0) == SPART_OK) {
        spart_context_free(context);
        skip(); /* a device is visible: test_cuda_from_arrays covers this machine */
    }
    arrays a = valid_arrays();
    a.indices_input[4] = 99; /* out of range, but only the device reads indices */
    for (int empty = 0; empty <= 1; empty++) {
        if (empty) {
            memset(a.offsets, 0, sizeof a.offsets);
        }
        spart_regridder *regridder = (spart_regridder *)&regridder;
        assert_int_equal(spart_regridder_create_device_from_arrays(
                             context, &a.orthogonal, &a.input, &a.output, a.num_axis_input,
                             a.axis_input, a.num_axis_output, a.axis_output, a.offsets,
                             empty ? NULL : a.indices_input, empty ? NULL : a.indices_output,
                             empty ? NULL : a.values, NULL, &regridder),
                         SPART_ERROR_NO_DEVICE);
        assert_null(regridder);
        assert_non_null(strstr(spart_context_error(context), "CUDA"));
    }
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_shapes_and_offsets_get_the_errors_of_create_from_arrays),
        cmocka_unit_test(bad_shapes_and_axes_get_the_errors_of_create_from_arrays),
        cmocka_unit_test(bad_offsets_get_the_errors_of_create_from_arrays),
        cmocka_unit_test(bad_options_get_the_errors_of_spart_regridder_create),
        cmocka_unit_test(null_context_and_result_are_refused),
        cmocka_unit_test(valid_arguments_without_a_device_say_no_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
