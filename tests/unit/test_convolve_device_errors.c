/*
 * spart_regridder_create_device_convolved where there may be no device
 * (label `unit`): its arguments are checked on the host before any device
 * work, so a bad kernel gets the status and the sentence that
 * spart_weights_convolve gives it, and bad regridder options those of
 * spart_regridder_create, with or without a GPU; valid arguments without a
 * device (a build without CUDA, or none visible) get
 * SPART_ERROR_NO_DEVICE with a sentence, and no regridder.
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

/* Weights from a 2 x 2 input grid to a 4 x 4 output grid: input cell 0
 * sends two entries, input cell 3 one. */
static spart_weights *small_weights(spart_context *context)
{
    const int64_t dims_input[2] = {2, 2}, dims_output[2] = {4, 4};
    const spart_shape orthogonal = shape_of(0, NULL);
    const spart_shape input = shape_of(2, dims_input), output = shape_of(2, dims_output);
    const int axes[2] = {0, 1};
    const int64_t offsets[2] = {0, 3};
    const int64_t indices_input[3] = {0, 0, 3};
    const int64_t indices_output[3] = {5, 6, 15};
    const double values[3] = {0.5, 0.25, 2.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 2,
                                                      axes, 2, axes, offsets, indices_input,
                                                      indices_output, values, &weights),
                     SPART_OK);
    return weights;
}

/* Both functions refuse `kernel` with the same status and sentence. */
static void assert_refused_alike(spart_context *context, const spart_weights *weights,
                                 const spart_array *kernel, spart_status expected)
{
    spart_weights *convolved = NULL;
    assert_int_equal(spart_weights_convolve(context, weights, kernel, &convolved), expected);
    char sentence[512];
    strncpy(sentence, spart_context_error(context), sizeof sentence - 1);
    sentence[sizeof sentence - 1] = '\0';
    assert_true(strlen(sentence) > 0);
    spart_regridder *regridder = (spart_regridder *)&regridder; /* must become NULL */
    assert_int_equal(
        spart_regridder_create_device_convolved(context, weights, kernel, NULL, &regridder),
        expected);
    assert_null(regridder);
    assert_string_equal(spart_context_error(context), sentence);
}

static void bad_kernels_get_the_errors_of_spart_weights_convolve(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    spart_weights *weights = small_weights(context);
    double data[27] = {0};
    const int64_t one_axis[1] = {3}, wrong_grid[3] = {3, 3, 3}, too_many[5] = {2, 1, 1, 3, 3};
    const int64_t square[2] = {3, 3};
    spart_array kernel = {data, shape_of(1, one_axis)};
    assert_refused_alike(context, weights, &kernel, SPART_ERROR_SHAPE_MISMATCH);
    kernel.shape = shape_of(3, wrong_grid);
    assert_refused_alike(context, weights, &kernel, SPART_ERROR_SHAPE_MISMATCH);
    kernel.shape = shape_of(5, too_many);
    assert_refused_alike(context, weights, &kernel, SPART_ERROR_SHAPE_MISMATCH);
    kernel.shape = shape_of(2, square);
    data[4] = NAN;
    assert_refused_alike(context, weights, &kernel, SPART_ERROR_NOT_FINITE);
    data[4] = -INFINITY;
    assert_refused_alike(context, weights, &kernel, SPART_ERROR_NOT_FINITE);
    spart_array no_data = {NULL, shape_of(2, square)};
    assert_refused_alike(context, weights, &no_data, SPART_ERROR_NULL_POINTER);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void null_arguments_are_refused(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    spart_weights *weights = small_weights(context);
    double data[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    const int64_t square[2] = {3, 3};
    spart_array kernel = {data, shape_of(2, square)};
    spart_regridder *regridder = NULL;
    assert_int_equal(
        spart_regridder_create_device_convolved(NULL, weights, &kernel, NULL, &regridder),
        SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_regridder_create_device_convolved(context, NULL, &kernel, NULL, &regridder),
        SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_regridder_create_device_convolved(context, weights, NULL, NULL, &regridder),
        SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_create_device_convolved(context, weights, &kernel, NULL, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_true(strlen(spart_context_error(context)) > 0);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void bad_options_get_the_errors_of_spart_regridder_create(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    spart_weights *weights = small_weights(context);
    double data[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    const int64_t square[2] = {3, 3};
    spart_array kernel = {data, shape_of(2, square)};
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.value_type = (spart_value_type)5;
    spart_regridder *regridder = (spart_regridder *)&regridder;
    assert_int_equal(
        spart_regridder_create_device_convolved(context, weights, &kernel, &options, &regridder),
        SPART_ERROR_UNKNOWN_ENUM);
    assert_null(regridder);
    spart_regridder_options_init(&options);
    options.has_shape_output = 1;
    options.shape_output = shape_of(2, (const int64_t[]){4, 5}); /* the grid is 4 x 4 */
    assert_int_equal(
        spart_regridder_create_device_convolved(context, weights, &kernel, &options, &regridder),
        SPART_ERROR_SHAPE_MISMATCH);
    assert_null(regridder);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void valid_arguments_without_a_device_say_no_device(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    if (spart_context_set_cuda_device(context, 0) == SPART_OK) {
        spart_context_free(context);
        skip(); /* a device is visible: test_cuda_convolve covers this machine */
    }
    spart_weights *weights = small_weights(context);
    double data[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    const int64_t square[2] = {3, 3};
    spart_array kernel = {data, shape_of(2, square)};
    spart_regridder *regridder = (spart_regridder *)&regridder;
    assert_int_equal(
        spart_regridder_create_device_convolved(context, weights, &kernel, NULL, &regridder),
        SPART_ERROR_NO_DEVICE);
    assert_null(regridder);
    assert_non_null(strstr(spart_context_error(context), "CUDA"));
    spart_weights_free(weights);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_kernels_get_the_errors_of_spart_weights_convolve),
        cmocka_unit_test(null_arguments_are_refused),
        cmocka_unit_test(bad_options_get_the_errors_of_spart_regridder_create),
        cmocka_unit_test(valid_arguments_without_a_device_say_no_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
