/*
 * The conservative transpose of a regridder equals the conservative
 * transpose of its weights, assembled, bit for bit, for every role that
 * keeps track of the elements; and says so clearly where it cannot.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spart.h"

/* Three 1-D input grids of 9 vertices (one per orthogonal element, each
 * shifted and stretched) onto one shared output grid of 6 vertices, with
 * weights_input varying per element and cell. */
typedef struct fixture {
    spart_context *context;
    double x_input[3 * 9];
    double x_output[6];
    double weights_input[3 * 8];
    spart_array grid_input;
    spart_array grid_output;
    spart_array weights_input_array;
    spart_weights_options options;
    spart_weights *weights;
} fixture;

static int set_up(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    assert_int_equal(spart_context_create(&f.context), SPART_OK);
    for (int e = 0; e < 3; e++) {
        for (int i = 0; i < 9; i++) {
            double t = i / 8.0;
            f.x_input[e * 9 + i] = -1.0 + 0.1 * e + (2.0 + 0.2 * e) * t + 0.05 * t * t;
        }
        for (int c = 0; c < 8; c++) {
            f.weights_input[e * 8 + c] = 1.0 + 0.25 * c + 0.5 * e;
        }
    }
    for (int o = 0; o < 6; o++) {
        f.x_output[o] = -0.9 + 2.1 * o / 5.0;
    }
    f.grid_input = (spart_array){f.x_input, {2, {3, 9}}};
    f.grid_output = (spart_array){f.x_output, {1, {6}}};
    f.weights_input_array = (spart_array){f.weights_input, {2, {3, 8}}};
    spart_weights_options_init(&f.options);
    f.options.method = SPART_METHOD_CONSERVATIVE;
    f.options.weights_input = &f.weights_input_array;
    f.options.num_axis_input = 1;
    f.options.axis_input[0] = -1;
    assert_int_equal(
        spart_weights_build(f.context, 1, &f.grid_input, &f.grid_output, &f.options, &f.weights),
        SPART_OK);
    *state = &f;
    return 0;
}

static int tear_down(void **state)
{
    fixture *f = *state;
    spart_weights_free(f->weights);
    spart_context_free(f->context);
    return 0;
}

/* The dense matrix of a regridder (rows x columns), duplicates added. */
static double *dense(const spart_regridder *regridder)
{
    int64_t rows = spart_regridder_num_rows(regridder);
    int64_t columns = spart_regridder_num_columns(regridder);
    double *matrix = calloc((size_t)(rows * columns), sizeof(double));
    const int64_t *row_ptr = NULL;
    const int32_t *cols = NULL;
    const void *values = NULL;
    assert_int_equal(spart_regridder_csr(regridder, &row_ptr, &cols, NULL, &values), SPART_OK);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++) {
            matrix[r * columns + cols[k]] += ((const double *)values)[k];
        }
    }
    return matrix;
}

/* Regridder options with the given value shapes. */
static spart_regridder *make(fixture *f, const spart_weights *weights, const int64_t *in,
                             int ndim_in, const int64_t *out, int ndim_out)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    if (in != NULL) {
        options.has_shape_input = 1;
        options.shape_input.ndim = ndim_in;
        memcpy(options.shape_input.dims, in, (size_t)ndim_in * sizeof(int64_t));
    }
    if (out != NULL) {
        options.has_shape_output = 1;
        options.shape_output.ndim = ndim_out;
        memcpy(options.shape_output.dims, out, (size_t)ndim_out * sizeof(int64_t));
    }
    spart_regridder *regridder = NULL;
    spart_status status = spart_regridder_create(f->context, weights, &options, &regridder);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_create: %s", spart_context_error(f->context));
    }
    return regridder;
}

/* The regridder's conservative transpose against the transposed weights
 * assembled with the swapped value shapes. */
static void check_role(fixture *f, const int64_t *in, const int64_t *out)
{
    spart_regridder *forward = make(f, f->weights, in, 2, out, 2);
    spart_regridder *conservative = NULL;
    spart_status status = spart_regridder_transpose_conservative(
        f->context, forward, 1, &f->grid_input, &f->grid_output, &f->options, &conservative);
    if (status != SPART_OK) {
        fail_msg("transpose_conservative: %s", spart_context_error(f->context));
    }
    spart_weights *transposed_weights = NULL;
    assert_int_equal(spart_weights_transpose_conservative(f->context, f->weights, 1, &f->grid_input,
                                                          &f->grid_output, &f->options,
                                                          &transposed_weights),
                     SPART_OK);
    spart_regridder *expected = make(f, transposed_weights, out, 2, in, 2);
    assert_int_equal(spart_regridder_num_rows(conservative), spart_regridder_num_rows(expected));
    assert_int_equal(spart_regridder_num_entries(conservative),
                     spart_regridder_num_entries(expected));
    int64_t size = spart_regridder_num_rows(expected) * spart_regridder_num_columns(expected);
    double *got = dense(conservative), *want = dense(expected);
    assert_memory_equal(got, want, (size_t)size * sizeof(double));
    /* The exact transpose shares the pattern and keeps its own values. */
    spart_regridder *exact = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, forward, &exact), SPART_OK);
    const int64_t *row_ptr_exact = NULL, *row_ptr_conservative = NULL;
    const void *values_exact = NULL, *values_conservative = NULL;
    assert_int_equal(spart_regridder_csr(exact, &row_ptr_exact, NULL, NULL, &values_exact),
                     SPART_OK);
    assert_int_equal(
        spart_regridder_csr(conservative, &row_ptr_conservative, NULL, NULL, &values_conservative),
        SPART_OK);
    assert_ptr_equal(row_ptr_exact, row_ptr_conservative);
    assert_ptr_not_equal(values_exact, values_conservative);
    free(got);
    free(want);
    spart_regridder_free(expected);
    spart_weights_free(transposed_weights);
    spart_regridder_free(forward);
}

static void diagonal_role_matches_the_weights(void **state)
{
    const int64_t in[] = {3, 8}, out[] = {3, 5};
    check_role(*state, in, out);
}

static void summed_role_matches_the_weights(void **state)
{
    /* Elements summed into one output: each entry's element is its column's. */
    const int64_t in[] = {3, 8}, out[] = {1, 5};
    check_role(*state, in, out);
}

static void lost_elements_are_refused(void **state)
{
    fixture *f = *state;
    /* Shared input and summed output: entries of the three elements land
     * on the same (row, column), and the input grids differ per element. */
    const int64_t in[] = {1, 8}, out[] = {1, 5};
    spart_regridder *forward = make(f, f->weights, in, 2, out, 2);
    spart_regridder *conservative = (spart_regridder *)f;
    assert_int_equal(spart_regridder_transpose_conservative(f->context, forward, 1, &f->grid_input,
                                                            &f->grid_output, &f->options,
                                                            &conservative),
                     SPART_ERROR_NOT_IMPLEMENTED);
    assert_null(conservative);
    assert_non_null(strstr(spart_context_error(f->context), "is lost"));
    spart_regridder_free(forward);
}

static void other_grids_are_refused(void **state)
{
    fixture *f = *state;
    spart_regridder *forward = make(f, f->weights, NULL, 0, NULL, 0);
    spart_regridder *conservative = NULL;
    spart_array wrong = {f->x_output, {1, {5}}};
    assert_int_equal(spart_regridder_transpose_conservative(f->context, forward, 1, &f->grid_input,
                                                            &wrong, &f->options, &conservative),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_int_equal(spart_regridder_transpose_conservative(f->context, forward, 3, &f->grid_input,
                                                            &f->grid_output, &f->options,
                                                            &conservative),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_regridder_free(forward);
}

static void rotated_2d_grids_match_the_weights(void **state)
{
    fixture *f = *state;
    enum { N = 9 };
    static double x[N * N], y[N * N], xo[N * N], yo[N * N];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            double u = -1.0 + 2.0 * i / (N - 1), v = -1.0 + 2.0 * j / (N - 1);
            x[i * N + j] = u;
            y[i * N + j] = v;
            xo[i * N + j] = u * cos(0.3) - v * sin(0.3) + 0.01;
            yo[i * N + j] = u * sin(0.3) + v * cos(0.3) + 0.02;
        }
    }
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array out[2] = {{xo, {2, {N, N}}}, {yo, {2, {N, N}}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    spart_weights *weights = NULL, *transposed_weights = NULL;
    assert_int_equal(spart_weights_build(f->context, 2, in, out, &options, &weights), SPART_OK);
    spart_regridder *forward = make(f, weights, NULL, 0, NULL, 0);
    spart_regridder *conservative = NULL;
    assert_int_equal(spart_regridder_transpose_conservative(f->context, forward, 2, in, out,
                                                            &options, &conservative),
                     SPART_OK);
    assert_int_equal(spart_weights_transpose_conservative(f->context, weights, 2, in, out, &options,
                                                          &transposed_weights),
                     SPART_OK);
    spart_regridder *expected = make(f, transposed_weights, NULL, 0, NULL, 0);
    int64_t size = spart_regridder_num_rows(expected) * spart_regridder_num_columns(expected);
    double *got = dense(conservative), *want = dense(expected);
    assert_memory_equal(got, want, (size_t)size * sizeof(double));
    free(got);
    free(want);
    spart_regridder_free(expected);
    spart_regridder_free(forward);
    spart_weights_free(weights);
    spart_weights_free(transposed_weights);
}

/* A regridder saved and loaded has the same conservative transpose, bit
 * for bit (the file keeps the roles of the axes). */
static void a_loaded_regridder_has_the_same_conservative_transpose(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {3, 8}, out[] = {1, 5};
    spart_regridder *forward = make(f, f->weights, in, 2, out, 2);
    char folder[] = "test_regridder_conservative-XXXXXX";
    assert_non_null(mkdtemp(folder));
    char path[96];
    snprintf(path, sizeof path, "%s/forward.fits", folder);
    assert_int_equal(spart_regridder_save(f->context, forward, path, 0), SPART_OK);
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_load(f->context, path, &loaded), SPART_OK);
    remove(path);
    rmdir(folder);
    spart_regridder *expected = NULL, *got = NULL;
    assert_int_equal(spart_regridder_transpose_conservative(f->context, forward, 1, &f->grid_input,
                                                            &f->grid_output, &f->options,
                                                            &expected),
                     SPART_OK);
    spart_status status = spart_regridder_transpose_conservative(
        f->context, loaded, 1, &f->grid_input, &f->grid_output, &f->options, &got);
    if (status != SPART_OK) {
        fail_msg("transpose_conservative of the loaded regridder: %s",
                 spart_context_error(f->context));
    }
    int64_t entries = spart_regridder_num_entries(expected);
    assert_int_equal(spart_regridder_num_entries(got), entries);
    const int64_t *rows_expected = NULL, *rows_got = NULL;
    const int32_t *columns_expected = NULL, *columns_got = NULL;
    const void *values_expected = NULL, *values_got = NULL;
    assert_int_equal(
        spart_regridder_csr(expected, &rows_expected, &columns_expected, NULL, &values_expected),
        SPART_OK);
    assert_int_equal(spart_regridder_csr(got, &rows_got, &columns_got, NULL, &values_got),
                     SPART_OK);
    assert_memory_equal(rows_expected, rows_got,
                        (size_t)(spart_regridder_num_rows(expected) + 1) * sizeof(int64_t));
    assert_memory_equal(columns_expected, columns_got, (size_t)entries * sizeof(int32_t));
    assert_memory_equal(values_expected, values_got, (size_t)entries * sizeof(double));
    spart_regridder_free(loaded);
    spart_regridder_free(forward);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(diagonal_role_matches_the_weights, set_up, tear_down),
        cmocka_unit_test_setup_teardown(summed_role_matches_the_weights, set_up, tear_down),
        cmocka_unit_test_setup_teardown(lost_elements_are_refused, set_up, tear_down),
        cmocka_unit_test_setup_teardown(other_grids_are_refused, set_up, tear_down),
        cmocka_unit_test_setup_teardown(rotated_2d_grids_match_the_weights, set_up, tear_down),
        cmocka_unit_test_setup_teardown(a_loaded_regridder_has_the_same_conservative_transpose,
                                        set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
