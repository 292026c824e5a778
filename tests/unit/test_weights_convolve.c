/* spart_weights_convolve (src/weights/weights_convolve.c, host/weights_convolve.c):
 * a kernel folded into weights, as regridding.convolve_weights. The small
 * cases are checked by hand; tests/parity/test_convolve_parity.py compares
 * with the package itself. */
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

static spart_context *make_context(void)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    return context;
}

/* Weights of one element on a 1-D or 2-D grid (every axis resampled). */
static spart_weights *make_weights(spart_context *context, int ndim, const int64_t *dims_input,
                                   const int64_t *dims_output, int64_t count,
                                   const int64_t *indices_input, const int64_t *indices_output,
                                   const double *values)
{
    spart_shape orthogonal = shape_of(0, NULL);
    spart_shape input = shape_of(ndim, dims_input);
    spart_shape output = shape_of(ndim, dims_output);
    int64_t offsets[2] = {0, count};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 0,
                                                      NULL, 0, NULL, offsets, indices_input,
                                                      indices_output, values, &weights),
                     SPART_OK);
    return weights;
}

static spart_weights *convolve(spart_context *context, const spart_weights *weights, int ndim,
                               const int64_t *dims, const double *kernel)
{
    spart_array array = {kernel, shape_of(ndim, dims)};
    spart_weights *convolved = NULL;
    assert_int_equal(spart_weights_convolve(context, weights, &array, &convolved), SPART_OK);
    return convolved;
}

static spart_status convolve_status(spart_context *context, const spart_weights *weights, int ndim,
                                    const int64_t *dims, const double *kernel)
{
    spart_array array = {kernel, shape_of(ndim, dims)};
    spart_weights *convolved = NULL;
    spart_status status = spart_weights_convolve(context, weights, &array, &convolved);
    assert_null(convolved);
    return status;
}

/* The entries of all elements must be exactly these, in this order. */
static void assert_entries(const spart_weights *weights, int64_t count,
                           const int64_t *indices_input, const int64_t *indices_output,
                           const double *values)
{
    const int64_t *offsets, *ii, *io;
    const double *v;
    assert_int_equal(spart_weights_num_entries(weights), count);
    assert_int_equal(spart_weights_arrays(weights, &offsets, &ii, &io, &v), SPART_OK);
    for (int64_t k = 0; k < count; k++) {
        assert_int_equal(ii[k], indices_input[k]);
        assert_int_equal(io[k], indices_output[k]);
        assert_memory_equal(&v[k], &values[k], sizeof(double));
    }
}

static void a_delta_kernel_reproduces_the_weights(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[2] = {3, 3}, dims_output[2] = {4, 5};
    int64_t ii[5] = {0, 0, 4, 7, 7};
    int64_t io[5] = {0, 6, 12, 13, 19};
    double v[5] = {0.25, 0.5, 1.0, 0.125, 0.375};
    spart_weights *weights = make_weights(context, 2, dims_input, dims_output, 5, ii, io, v);
    int64_t dims_kernel[2] = {3, 3};
    double kernel[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    spart_weights *convolved = convolve(context, weights, 2, dims_kernel, kernel);
    assert_entries(convolved, 5, ii, io, v);
    spart_shape shape = spart_weights_shape_output(convolved);
    assert_int_equal(shape.ndim, 2);
    assert_int_equal(shape.dims[1], 5);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void a_box_spreads_one_entry_over_the_nine_cells_around_it(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[2] = {1, 1}, dims_output[2] = {5, 5};
    int64_t ii[1] = {0}, io[1] = {2 * 5 + 2};
    double v[1] = {0.9};
    spart_weights *weights = make_weights(context, 2, dims_input, dims_output, 1, ii, io, v);
    int64_t dims_kernel[2] = {3, 3};
    double kernel[9];
    for (int k = 0; k < 9; k++) {
        kernel[k] = 1.0 / 9.0;
    }
    spart_weights *convolved = convolve(context, weights, 2, dims_kernel, kernel);
    int64_t expected_ii[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t expected_io[9] = {6, 7, 8, 11, 12, 13, 16, 17, 18};
    double expected_v[9];
    for (int k = 0; k < 9; k++) {
        expected_v[k] = 0.9 * (1.0 / 9.0);
    }
    assert_entries(convolved, 9, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void light_spread_past_the_edge_is_lost(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[2] = {1, 1}, dims_output[2] = {4, 4};
    int64_t ii[1] = {0}, io[1] = {0};
    double v[1] = {1.0};
    spart_weights *weights = make_weights(context, 2, dims_input, dims_output, 1, ii, io, v);
    int64_t dims_kernel[2] = {3, 3};
    double kernel[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    spart_weights *convolved = convolve(context, weights, 2, dims_kernel, kernel);
    /* only the lower right 2x2 of the kernel stays on the grid */
    int64_t expected_ii[4] = {0, 0, 0, 0};
    int64_t expected_io[4] = {0, 1, 4, 5};
    double expected_v[4] = {5, 6, 8, 9};
    assert_entries(convolved, 4, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void an_even_kernel_is_centred_at_half_its_length(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[1] = {1}, dims_output[1] = {6};
    int64_t ii[1] = {0}, io[1] = {3};
    double v[1] = {1.0};
    spart_weights *weights = make_weights(context, 1, dims_input, dims_output, 1, ii, io, v);
    int64_t dims_kernel[1] = {4};
    double kernel[4] = {1, 2, 3, 4};
    spart_weights *convolved = convolve(context, weights, 1, dims_kernel, kernel);
    /* centre at index 2: offsets -2, -1, 0, +1 */
    int64_t expected_ii[4] = {0, 0, 0, 0};
    int64_t expected_io[4] = {1, 2, 3, 4};
    double expected_v[4] = {1, 2, 3, 4};
    assert_entries(convolved, 4, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void entries_of_one_input_merge_in_grid_order(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[1] = {2}, dims_output[1] = {6};
    int64_t ii[3] = {0, 0, 1};
    int64_t io[3] = {3, 2, 5};
    double v[3] = {2.0, 1.0, 4.0};
    spart_weights *weights = make_weights(context, 1, dims_input, dims_output, 3, ii, io, v);
    int64_t dims_kernel[1] = {3};
    double kernel[3] = {1, 1, 1};
    spart_weights *convolved = convolve(context, weights, 1, dims_kernel, kernel);
    /* input 0: cell 1 gets 1, cells 2 and 3 get 2 + 1, cell 4 gets 2 */
    int64_t expected_ii[6] = {0, 0, 0, 0, 1, 1};
    int64_t expected_io[6] = {1, 2, 3, 4, 4, 5};
    double expected_v[6] = {1, 3, 3, 2, 4, 4};
    assert_entries(convolved, 6, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void a_run_with_gaps_between_its_cells_gives_only_the_cells_reached(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[1] = {1}, dims_output[1] = {10};
    int64_t ii[2] = {0, 0}, io[2] = {1, 5};
    double v[2] = {1.0, 2.0};
    spart_weights *weights = make_weights(context, 1, dims_input, dims_output, 2, ii, io, v);
    int64_t dims_kernel[1] = {3};
    double kernel[3] = {1, 1, 1};
    spart_weights *convolved = convolve(context, weights, 1, dims_kernel, kernel);
    /* the box is cells 0 .. 6; cell 3 lies between the two kernels */
    int64_t expected_ii[6] = {0, 0, 0, 0, 0, 0};
    int64_t expected_io[6] = {0, 1, 2, 4, 5, 6};
    double expected_v[6] = {1, 1, 1, 2, 2, 2};
    assert_entries(convolved, 6, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void zero_kernel_elements_reach_no_cell_and_negative_ones_count(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[1] = {1}, dims_output[1] = {5};
    int64_t ii[1] = {0}, io[1] = {2};
    double v[1] = {0.5};
    spart_weights *weights = make_weights(context, 1, dims_input, dims_output, 1, ii, io, v);
    int64_t dims_kernel[1] = {3};
    double kernel[3] = {0.0, 1.5, -0.25};
    spart_weights *convolved = convolve(context, weights, 1, dims_kernel, kernel);
    int64_t expected_ii[2] = {0, 0};
    int64_t expected_io[2] = {2, 3};
    double expected_v[2] = {0.75, -0.125};
    assert_entries(convolved, 2, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void each_element_takes_its_own_kernel(void **state)
{
    (void)state;
    spart_context *context = make_context();
    /* two wavelengths, a 1-D grid of 4 cells each */
    int64_t dims_orthogonal[1] = {2}, dims_input[2] = {2, 1}, dims_output[2] = {2, 4};
    spart_shape orthogonal = shape_of(1, dims_orthogonal);
    spart_shape input = shape_of(2, dims_input);
    spart_shape output = shape_of(2, dims_output);
    int axis[1] = {1};
    int64_t offsets[3] = {0, 1, 2};
    int64_t ii[2] = {0, 0}, io[2] = {1, 2};
    double v[2] = {1.0, 1.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axis, 1, axis, offsets, ii, io, v, &weights),
                     SPART_OK);
    /* kernel shape (2, 1, 3): one kernel per wavelength */
    int64_t dims_kernel[3] = {2, 1, 3};
    double kernel[6] = {1, 2, 3, 4, 5, 6};
    spart_weights *convolved = convolve(context, weights, 3, dims_kernel, kernel);
    int64_t expected_ii[6] = {0, 0, 0, 0, 0, 0};
    int64_t expected_io[6] = {0, 1, 2, 1, 2, 3};
    double expected_v[6] = {1, 2, 3, 4, 5, 6};
    assert_entries(convolved, 6, expected_ii, expected_io, expected_v);
    const int64_t *result_offsets;
    assert_int_equal(spart_weights_arrays(convolved, &result_offsets, NULL, NULL, NULL), SPART_OK);
    assert_int_equal(result_offsets[1], 3);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void a_kernel_varying_over_the_grid_is_read_where_the_light_lands(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[1] = {2}, dims_output[1] = {4};
    int64_t ii[2] = {0, 1}, io[2] = {0, 2};
    double v[2] = {1.0, 1.0};
    spart_weights *weights = make_weights(context, 1, dims_input, dims_output, 2, ii, io, v);
    /* shape (4, 2): one kernel of length 2 (offsets -1, 0) per output cell */
    int64_t dims_kernel[2] = {4, 2};
    double kernel[8] = {10, 11, 20, 21, 30, 31, 40, 41};
    spart_weights *convolved = convolve(context, weights, 2, dims_kernel, kernel);
    /* cell 0: offset -1 falls off the grid; cell 2: kernel of row 2 */
    int64_t expected_ii[3] = {0, 1, 1};
    int64_t expected_io[3] = {0, 1, 2};
    double expected_v[3] = {11, 30, 31};
    assert_entries(convolved, 3, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

/* A 64-bit LCG, so that the case is the same everywhere. */
static double next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

static void the_result_does_not_depend_on_the_thread_count(void **state)
{
    (void)state;
    enum { INPUTS = 2000, PER_INPUT = 3 };
    int64_t dims_input[1] = {INPUTS}, dims_output[2] = {40, 40};
    int64_t *ii = malloc(INPUTS * PER_INPUT * sizeof(int64_t));
    int64_t *io = malloc(INPUTS * PER_INPUT * sizeof(int64_t));
    double *v = malloc(INPUTS * PER_INPUT * sizeof(double));
    double kernel[25];
    uint64_t seed = 8;
    for (int64_t k = 0; k < INPUTS * PER_INPUT; k++) {
        ii[k] = k / PER_INPUT;
        io[k] = (int64_t)(next_random(&seed) * 1600.0);
        v[k] = next_random(&seed);
    }
    for (int k = 0; k < 25; k++) {
        kernel[k] = next_random(&seed);
    }
    spart_context *context = make_context();
    spart_shape input = shape_of(1, dims_input), output = shape_of(2, dims_output);
    spart_shape orthogonal = shape_of(0, NULL);
    int axis_input[1] = {0}, axis_output[2] = {0, 1};
    int64_t offsets[2] = {0, INPUTS * PER_INPUT};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axis_input, 2, axis_output, offsets, ii, io,
                                                      v, &weights),
                     SPART_OK);
    int64_t dims_kernel[2] = {5, 5};
    spart_weights *one = convolve(context, weights, 2, dims_kernel, kernel);
    int64_t count = spart_weights_num_entries(one);
    const int64_t *one_ii, *one_io;
    const double *one_v;
    assert_int_equal(spart_weights_arrays(one, NULL, &one_ii, &one_io, &one_v), SPART_OK);
    assert_true(count > INPUTS * PER_INPUT);
    for (int threads = 1; threads <= 4; threads++) {
        assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
        spart_weights *again = convolve(context, weights, 2, dims_kernel, kernel);
        assert_entries(again, count, one_ii, one_io, one_v);
        spart_weights_free(again);
    }
    spart_weights_free(one);
    spart_weights_free(weights);
    spart_context_free(context);
    free(ii);
    free(io);
    free(v);
}

static void bad_kernels_are_refused_with_a_reason(void **state)
{
    (void)state;
    spart_context *context = make_context();
    int64_t dims_input[2] = {2, 2}, dims_output[2] = {4, 4};
    int64_t ii[1] = {0}, io[1] = {5};
    double v[1] = {1.0};
    spart_weights *weights = make_weights(context, 2, dims_input, dims_output, 1, ii, io, v);
    double kernel[48] = {0};
    int64_t one_axis[1] = {3};
    assert_int_equal(convolve_status(context, weights, 1, one_axis, kernel),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(context), "fewer than the 2"));
    int64_t wrong_grid[3] = {3, 3, 3}; /* 3 cells where the grid has 4 */
    assert_int_equal(convolve_status(context, weights, 3, wrong_grid, kernel),
                     SPART_ERROR_SHAPE_MISMATCH);
    int64_t too_many[5] = {2, 1, 1, 3, 3}; /* three leading axes, a 2-D grid */
    assert_int_equal(convolve_status(context, weights, 5, too_many, kernel),
                     SPART_ERROR_SHAPE_MISMATCH);
    int64_t square[2] = {3, 3};
    kernel[4] = NAN;
    assert_int_equal(convolve_status(context, weights, 2, square, kernel), SPART_ERROR_NOT_FINITE);
    kernel[4] = INFINITY;
    assert_int_equal(convolve_status(context, weights, 2, square, kernel), SPART_ERROR_NOT_FINITE);
    assert_non_null(strstr(spart_context_error(context), "kernel[4]"));
    spart_array no_data = {NULL, shape_of(2, square)};
    spart_weights *convolved = NULL;
    assert_int_equal(spart_weights_convolve(context, weights, &no_data, &convolved),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_weights_convolve(context, NULL, &no_data, &convolved),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_weights_convolve(NULL, weights, &no_data, &convolved),
                     SPART_ERROR_NULL_POINTER);
    spart_weights_free(weights);
    spart_context_free(context);
}

static void a_kernel_along_an_axis_the_weights_share_broadcasts_them(void **state)
{
    (void)state;
    spart_context *context = make_context();
    /* weights with one element, output (3, 4): axis 0 orthogonal, shared */
    int64_t dims_orthogonal[1] = {1}, dims_input[2] = {1, 2}, dims_output[2] = {3, 4};
    spart_shape orthogonal = shape_of(1, dims_orthogonal);
    spart_shape input = shape_of(2, dims_input), output = shape_of(2, dims_output);
    int axis[1] = {1};
    int64_t offsets[2] = {0, 1};
    int64_t ii[1] = {0}, io[1] = {1};
    double v[1] = {1.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axis, 1, axis, offsets, ii, io, v, &weights),
                     SPART_OK);
    /* three kernels along axis 0: the weights are copied out to 3 elements */
    int64_t dims_kernel[3] = {3, 1, 3};
    double kernel[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    spart_weights *convolved = convolve(context, weights, 3, dims_kernel, kernel);
    spart_shape result_orthogonal = spart_weights_shape_orthogonal(convolved);
    spart_shape result_input = spart_weights_shape_input(convolved);
    assert_int_equal(result_orthogonal.ndim, 1);
    assert_int_equal(result_orthogonal.dims[0], 3);
    assert_int_equal(result_input.dims[0], 3); /* (1, 2) broadcast to (3, 2) */
    assert_int_equal(result_input.dims[1], 2);
    int64_t expected_ii[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t expected_io[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    double expected_v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    assert_entries(convolved, 9, expected_ii, expected_io, expected_v);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_delta_kernel_reproduces_the_weights),
        cmocka_unit_test(a_box_spreads_one_entry_over_the_nine_cells_around_it),
        cmocka_unit_test(light_spread_past_the_edge_is_lost),
        cmocka_unit_test(an_even_kernel_is_centred_at_half_its_length),
        cmocka_unit_test(entries_of_one_input_merge_in_grid_order),
        cmocka_unit_test(a_run_with_gaps_between_its_cells_gives_only_the_cells_reached),
        cmocka_unit_test(zero_kernel_elements_reach_no_cell_and_negative_ones_count),
        cmocka_unit_test(each_element_takes_its_own_kernel),
        cmocka_unit_test(a_kernel_varying_over_the_grid_is_read_where_the_light_lands),
        cmocka_unit_test(the_result_does_not_depend_on_the_thread_count),
        cmocka_unit_test(bad_kernels_are_refused_with_a_reason),
        cmocka_unit_test(a_kernel_along_an_axis_the_weights_share_broadcasts_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
