/*
 * Every error path of the weights API: each bad argument gets its status,
 * a sentence naming it, and no object left behind.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"

typedef struct fixture {
    spart_context *context;
    double x[6];
    double x_out[4];
    double xy[2][9]; /* a 3x3 grid */
    spart_array input[2];
    spart_array output[2];
    spart_weights_options options;
} fixture;

static int set_up(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    assert_int_equal(spart_context_create(&f.context), SPART_OK);
    for (int i = 0; i < 6; i++) {
        f.x[i] = i;
    }
    for (int i = 0; i < 4; i++) {
        f.x_out[i] = 0.5 + i;
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            f.xy[0][i * 3 + j] = i;
            f.xy[1][i * 3 + j] = j;
        }
    }
    f.input[0] = (spart_array){f.x, {1, {6}}};
    f.output[0] = (spart_array){f.x_out, {1, {4}}};
    spart_weights_options_init(&f.options);
    f.options.method = SPART_METHOD_CONSERVATIVE;
    *state = &f;
    return 0;
}

static int tear_down(void **state)
{
    fixture *f = *state;
    spart_context_free(f->context);
    return 0;
}

/* Build with the fixture's arrays and expect `status` and a sentence that
 * contains `words`; the output pointer must come back NULL. */
static void expect_build_error(fixture *f, int num_coordinates, spart_status status,
                               const char *words)
{
    spart_weights *weights = (spart_weights *)f; /* poisoned */
    spart_status got = spart_weights_build(f->context, num_coordinates, f->input, f->output,
                                           &f->options, &weights);
    assert_int_equal(got, status);
    assert_null(weights);
    const char *sentence = spart_context_error(f->context);
    if (strstr(sentence, words) == NULL) {
        fail_msg("error sentence \"%s\" does not mention \"%s\"", sentence, words);
    }
}

static void build_rejects_null_context(void **state)
{
    fixture *f = *state;
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build(NULL, 1, f->input, f->output, &f->options, &weights),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_last_error(), "context"));
}

static void build_rejects_null_output_pointer(void **state)
{
    fixture *f = *state;
    assert_int_equal(spart_weights_build(f->context, 1, f->input, f->output, &f->options, NULL),
                     SPART_ERROR_NULL_POINTER);
}

static void build_rejects_null_coordinates(void **state)
{
    fixture *f = *state;
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build(f->context, 1, NULL, f->output, &f->options, &weights),
                     SPART_ERROR_NULL_POINTER);
    assert_null(weights);
    f->input[0].data = NULL;
    expect_build_error(f, 1, SPART_ERROR_NULL_POINTER, "coordinates_input[0].data");
}

static void build_rejects_bad_coordinate_counts(void **state)
{
    fixture *f = *state;
    expect_build_error(f, 0, SPART_ERROR_INVALID_ARGUMENT, "num_coordinates = 0");
    expect_build_error(f, -1, SPART_ERROR_INVALID_ARGUMENT, "num_coordinates = -1");
    expect_build_error(f, 4, SPART_ERROR_INVALID_ARGUMENT, "num_coordinates = 4");
}

static void build_rejects_negative_extent(void **state)
{
    fixture *f = *state;
    f->input[0].shape.dims[0] = -6;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "coordinates_input[0]");
}

static void build_rejects_bad_ndim(void **state)
{
    fixture *f = *state;
    f->output[0].shape.ndim = SPART_MAX_NDIM + 1;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "coordinates_output[0]");
    f->output[0].shape.ndim = 0;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "scalars");
}

static void build_rejects_shapes_that_do_not_broadcast(void **state)
{
    fixture *f = *state;
    f->input[0] = (spart_array){f->xy[0], {2, {3, 3}}};
    f->input[1] = (spart_array){f->xy[1], {2, {9, 1}}};
    f->output[0] = f->input[0];
    f->output[1] = (spart_array){f->xy[1], {2, {3, 3}}};
    expect_build_error(f, 2, SPART_ERROR_SHAPE_MISMATCH, "does not broadcast");
}

static void build_rejects_orthogonal_axes_that_do_not_broadcast(void **state)
{
    fixture *f = *state;
    /* Input (2, 3): 2 elements along axis 0; output (4, 3): 4 elements. */
    static double a[6] = {0, 1, 2, 0, 1, 2}, b[12] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
    f->input[0] = (spart_array){a, {2, {2, 3}}};
    f->output[0] = (spart_array){b, {2, {4, 3}}};
    f->options.num_axis_input = 1;
    f->options.axis_input[0] = -1;
    f->options.num_axis_output = 1;
    f->options.axis_output[0] = -1;
    expect_build_error(f, 1, SPART_ERROR_SHAPE_MISMATCH, "orthogonal axes");
}

static void build_rejects_axes_out_of_range(void **state)
{
    fixture *f = *state;
    f->options.num_axis_input = 1;
    f->options.axis_input[0] = 1;
    expect_build_error(f, 1, SPART_ERROR_AXIS_OUT_OF_RANGE, "axis_input[0] = 1");
    f->options.axis_input[0] = -2;
    expect_build_error(f, 1, SPART_ERROR_AXIS_OUT_OF_RANGE, "axis_input[0] = -2");
    f->options.axis_input[0] = 0;
    f->options.num_axis_output = 1;
    f->options.axis_output[0] = 3;
    expect_build_error(f, 1, SPART_ERROR_AXIS_OUT_OF_RANGE, "axis_output[0] = 3");
}

static void build_rejects_repeated_axes(void **state)
{
    fixture *f = *state;
    f->input[0] = (spart_array){f->xy[0], {2, {3, 3}}};
    f->input[1] = (spart_array){f->xy[1], {2, {3, 3}}};
    f->output[0] = f->input[0];
    f->output[1] = f->input[1];
    f->options.num_axis_input = 2;
    f->options.axis_input[0] = 0;
    f->options.axis_input[1] = -2;
    expect_build_error(f, 2, SPART_ERROR_INVALID_ARGUMENT, "repeated");
}

static void build_rejects_axis_count_mismatch(void **state)
{
    fixture *f = *state;
    f->input[0] = (spart_array){f->xy[0], {2, {3, 3}}};
    f->input[1] = (spart_array){f->xy[1], {2, {3, 3}}};
    f->output[0] = f->input[0];
    f->output[1] = f->input[1];
    f->options.num_axis_input = 1;
    f->options.axis_input[0] = 0;
    f->options.num_axis_output = 1;
    f->options.axis_output[0] = 0;
    expect_build_error(f, 2, SPART_ERROR_INVALID_ARGUMENT, "num_coordinates = 2");
    f->options.num_axis_output = 0;
    expect_build_error(f, 2, SPART_ERROR_INVALID_ARGUMENT, "must match");
}

static void build_rejects_non_finite_coordinates(void **state)
{
    fixture *f = *state;
    f->x[3] = NAN;
    expect_build_error(f, 1, SPART_ERROR_NOT_FINITE, "coordinates_input[0]");
    f->x[3] = 3;
    f->x_out[1] = INFINITY;
    expect_build_error(f, 1, SPART_ERROR_NOT_FINITE, "flat index 1");
    f->options.method = SPART_METHOD_MULTILINEAR;
    f->x[2] = -INFINITY;
    expect_build_error(f, 1, SPART_ERROR_NOT_FINITE, "coordinates_input[0]");
}

static void build_rejects_fewer_than_two_vertices(void **state)
{
    fixture *f = *state;
    f->input[0].shape.dims[0] = 1;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "at least two");
    f->input[0].shape.dims[0] = 6;
    f->output[0].shape.dims[0] = 1;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "output grid has 1");
    f->input[0].shape.dims[0] = 0;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "has 0 vertices");
}

static void build_rejects_unknown_enums(void **state)
{
    fixture *f = *state;
    f->options.method = (spart_method)7;
    expect_build_error(f, 1, SPART_ERROR_UNKNOWN_ENUM, "method = 7");
    f->options.method = SPART_METHOD_MULTILINEAR;
    f->options.bounds = (spart_bounds)-1;
    expect_build_error(f, 1, SPART_ERROR_UNKNOWN_ENUM, "bounds = -1");
    f->options.bounds = SPART_BOUNDS_NAN;
    f->options.perturb = (spart_perturb)3;
    expect_build_error(f, 1, SPART_ERROR_UNKNOWN_ENUM, "perturb = 3");
    f->options.perturb = SPART_PERTURB_NO;
    f->options.algorithm = (spart_algorithm)9;
    expect_build_error(f, 1, SPART_ERROR_UNKNOWN_ENUM, "algorithm = 9");
}

static void build_rejects_bad_axis_counts(void **state)
{
    fixture *f = *state;
    f->options.num_axis_input = -1;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "num_axis_input = -1");
    f->options.num_axis_input = SPART_MAX_NDIM + 1;
    expect_build_error(f, 1, SPART_ERROR_INVALID_ARGUMENT, "num_axis_input");
}

static void conservative_3d_is_not_implemented(void **state)
{
    fixture *f = *state;
    expect_build_error(f, 3, SPART_ERROR_NOT_IMPLEMENTED, "not 3");
}

static void build_rejects_weights_input_of_wrong_shape(void **state)
{
    fixture *f = *state;
    static double w[6] = {1, 1, 1, 1, 1, 1};
    spart_array weights_input = {w, {1, {6}}}; /* 5 cells, not 6 */
    f->options.weights_input = &weights_input;
    expect_build_error(f, 1, SPART_ERROR_SHAPE_MISMATCH, "weights_input");
    weights_input.data = NULL;
    weights_input.shape.dims[0] = 5;
    expect_build_error(f, 1, SPART_ERROR_NULL_POINTER, "weights_input");
}

/* A valid 1-D conservative weights object from the fixture, if the 1-D
 * kernel is available; skips the test otherwise. */
static spart_weights *valid_weights(fixture *f)
{
    spart_weights *weights = NULL;
    spart_status status =
        spart_weights_build(f->context, 1, f->input, f->output, &f->options, &weights);
    if (status == SPART_ERROR_NOT_IMPLEMENTED) {
        skip();
    }
    assert_int_equal(status, SPART_OK);
    return weights;
}

static void regrid_rejects_wrong_output_size(void **state)
{
    fixture *f = *state;
    spart_weights *weights = valid_weights(f);
    double in[5] = {1, 1, 1, 1, 1}, out[3];
    spart_array values = {in, {1, {5}}};
    assert_int_equal(
        spart_regrid_from_weights(f->context, weights, &values, 0, NULL, 0, NULL, out, 4),
        SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "size_output = 4"));
    assert_int_equal(
        spart_regrid_from_weights(f->context, weights, &values, 0, NULL, 0, NULL, out, 3),
        SPART_OK);
    spart_weights_free(weights);
}

static void regrid_rejects_values_of_wrong_shape(void **state)
{
    fixture *f = *state;
    spart_weights *weights = valid_weights(f);
    double in[6] = {0}, out[3];
    spart_array values = {in, {1, {6}}};
    assert_int_equal(
        spart_regrid_from_weights(f->context, weights, &values, 0, NULL, 0, NULL, out, 3),
        SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "values_input has shape 6"));
    spart_shape shape;
    assert_int_equal(spart_regrid_from_weights_shape(f->context, weights, &values.shape, 0, NULL, 0,
                                                     NULL, &shape),
                     SPART_ERROR_SHAPE_MISMATCH);
    spart_weights_free(weights);
}

static void regrid_rejects_bad_axes_and_nulls(void **state)
{
    fixture *f = *state;
    spart_weights *weights = valid_weights(f);
    double in[5] = {0}, out[3];
    spart_array values = {in, {1, {5}}};
    int axis = 2;
    assert_int_equal(
        spart_regrid_from_weights(f->context, weights, &values, 1, &axis, 0, NULL, out, 3),
        SPART_ERROR_AXIS_OUT_OF_RANGE);
    assert_int_equal(spart_regrid_from_weights(f->context, NULL, &values, 0, NULL, 0, NULL, out, 3),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regrid_from_weights(f->context, weights, NULL, 0, NULL, 0, NULL, out, 3),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_regrid_from_weights(f->context, weights, &values, 0, NULL, 0, NULL, NULL, 3),
        SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regrid_from_weights(NULL, weights, &values, 0, NULL, 0, NULL, out, 3),
                     SPART_ERROR_NULL_POINTER);
    spart_weights_free(weights);
}

static void transpose_conservative_rejects_other_grids(void **state)
{
    fixture *f = *state;
    spart_weights *weights = valid_weights(f);
    spart_weights *transposed = (spart_weights *)f;
    /* Swapped grids: 3 input cells where the weights address 5. */
    assert_int_equal(spart_weights_transpose_conservative(f->context, weights, 1, f->output,
                                                          f->input, &f->options, &transposed),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_null(transposed);
    assert_non_null(strstr(spart_context_error(f->context), "cells"));
    assert_int_equal(spart_weights_transpose_conservative(f->context, weights, 3, f->input,
                                                          f->output, &f->options, &transposed),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_weights_transpose(f->context, NULL, &transposed),
                     SPART_ERROR_NULL_POINTER);
    spart_weights_free(weights);
}

static void create_from_arrays_checks_indices(void **state)
{
    fixture *f = *state;
    spart_shape orthogonal = {1, {2}};
    spart_shape input = {1, {4}}, output = {1, {3}};
    int64_t offsets[3] = {0, 2, 3};
    int64_t in[3] = {0, 3, 4}, out[3] = {0, 2, 1};
    double values[3] = {1, 2, 3};
    spart_weights *weights = (spart_weights *)f;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &input, &output, 0,
                                                      NULL, 0, NULL, offsets, in, out, values,
                                                      &weights),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(weights);
    assert_non_null(strstr(spart_context_error(f->context), "element 1"));
    in[2] = 3;
    offsets[1] = 4;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &input, &output, 0,
                                                      NULL, 0, NULL, offsets, in, out, values,
                                                      &weights),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "offsets[2]"));
    offsets[1] = 2;
    int axis = 5;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &input, &output, 1,
                                                      &axis, 0, NULL, offsets, in, out, values,
                                                      &weights),
                     SPART_ERROR_AXIS_OUT_OF_RANGE);
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &input, &output, 0,
                                                      NULL, 0, NULL, offsets, in, out, values,
                                                      &weights),
                     SPART_OK);
    assert_int_equal(spart_weights_num_entries(weights), 3);
    assert_int_equal(spart_weights_num_elements(weights), 2);
    int64_t count = 0;
    const int64_t *element_in = NULL;
    assert_int_equal(spart_weights_element(weights, 1, &count, &element_in, NULL, NULL), SPART_OK);
    assert_int_equal(count, 1);
    assert_int_equal(element_in[0], 3);
    assert_int_equal(spart_weights_element(weights, 2, &count, NULL, NULL, NULL),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_weights_free(weights);
    spart_weights_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(build_rejects_null_context, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_null_output_pointer, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_null_coordinates, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_bad_coordinate_counts, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_negative_extent, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_bad_ndim, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_shapes_that_do_not_broadcast, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_orthogonal_axes_that_do_not_broadcast, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_axes_out_of_range, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_repeated_axes, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_axis_count_mismatch, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_non_finite_coordinates, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_fewer_than_two_vertices, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_unknown_enums, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_bad_axis_counts, set_up, tear_down),
        cmocka_unit_test_setup_teardown(conservative_3d_is_not_implemented, set_up, tear_down),
        cmocka_unit_test_setup_teardown(build_rejects_weights_input_of_wrong_shape, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(regrid_rejects_wrong_output_size, set_up, tear_down),
        cmocka_unit_test_setup_teardown(regrid_rejects_values_of_wrong_shape, set_up, tear_down),
        cmocka_unit_test_setup_teardown(regrid_rejects_bad_axes_and_nulls, set_up, tear_down),
        cmocka_unit_test_setup_teardown(transpose_conservative_rejects_other_grids, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(create_from_arrays_checks_indices, set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
