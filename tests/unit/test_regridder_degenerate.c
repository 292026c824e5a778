/*
 * The host Regridder's exact transpose (the dot-product test), degenerate
 * shapes (empty elements and rows, NaN, exact zeros, int64 columns, float32
 * values) and bad input. Roles and determinism are in test_regridder.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/regridder_internal.h"

#include "spart.h"
#include "test_util.h"
#include "test_regridder_util.h"

/* ---- transpose ------------------------------------------------------------------- */

static void transpose_passes_the_dot_product_test(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {1, 3, 4, 5}, out[] = {2, 1, 6};
    spart_regridder *regridder = make(f, f->trailing, 4, in, 3, out);
    spart_regridder *transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    spart_regridder *again = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, transposed, &again), SPART_OK);
    assert_ptr_equal(again, regridder);
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &again), SPART_OK);
    assert_ptr_equal(again, transposed);
    spart_shape tin = spart_regridder_shape_input(transposed);
    assert_int_equal(tin.ndim, 3);
    assert_int_equal(tin.dims[1], 1);
    double *x = random_values(60, 30), *u = random_values(12, 31);
    spart_array xa = {x, {4, {1, 3, 4, 5}}}, ua = {u, {3, {2, 1, 6}}};
    int64_t n = 0, m = 0;
    double *ax = apply(f, regridder, &xa, &n);
    double *atu = apply(f, transposed, &ua, &m);
    assert_int_equal(n, 12);
    assert_int_equal(m, 60);
    double left = 0.0, right = 0.0;
    for (int k = 0; k < 12; k++) {
        left += ax[k] * u[k];
    }
    for (int k = 0; k < 60; k++) {
        right += x[k] * atu[k];
    }
    assert_true(fabs(left - right) <= 1e-13 * fabs(left));
    spart_regridder_free(transposed); /* owned by regridder: does nothing */
    free(x);
    free(u);
    free(ax);
    free(atu);
    spart_regridder_free(regridder);
}

/* ---- degenerate shapes --------------------------------------------------------------- */

static void empty_elements_and_rows_give_zeros(void **state)
{
    fixture *f = *state;
    const int64_t orthogonal[] = {3}, input[] = {3, 4}, output[] = {3, 5};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 0, 2, 2}; /* elements 0 and 2 empty */
    const int64_t indices_in[] = {1, 3}, indices_out[] = {4, 4};
    const double values[] = {2.0, 3.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
    double x[12] = {0, 0, 0, 0, 0, 10, 0, 100, 0, 0, 0, 0};
    spart_array xa = {x, {2, {3, 4}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    double expected[15] = {0};
    expected[9] = 2.0 * 10 + 3.0 * 100;
    assert_memory_equal(y, expected, sizeof expected);
    free(y);
    /* A batch of zero columns: nothing to do, nothing written. */
    spart_array none = {x, {3, {0, 3, 4}}};
    spart_shape shape_y;
    assert_int_equal(spart_regridder_apply_shape(f->context, regridder, &none.shape, &shape_y),
                     SPART_OK);
    assert_int_equal(spart_shape_size(&shape_y), 0);
    double dummy = 0;
    assert_int_equal(spart_regridder_apply(f->context, regridder, &none, &dummy, 0), SPART_OK);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

static void nan_reaches_only_the_rows_that_touch_it(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    double *x = random_values(120, 40);
    x[7] = NAN;
    spart_array xa = {x, {4, {2, 3, 4, 5}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    const int64_t *row_ptr = NULL;
    const int32_t *columns = NULL;
    assert_int_equal(spart_regridder_csr(regridder, &row_ptr, &columns, NULL, NULL), SPART_OK);
    for (int64_t r = 0; r < n; r++) {
        int touches = 0;
        for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++) {
            touches |= columns[k] == 7;
        }
        assert_int_equal(isnan(y[r]) != 0, touches);
    }
    free(x);
    free(y);
    spart_regridder_free(regridder);
}

static void drop_zeros_leaves_out_exact_zeros(void **state)
{
    fixture *f = *state;
    const int64_t orthogonal[] = {1}, input[] = {1, 4}, output[] = {1, 2};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 4};
    const int64_t indices_in[] = {0, 1, 2, 3}, indices_out[] = {0, 0, 1, 1};
    const double values[] = {1.0, 0.0, -0.0, 4.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.drop_zeros = 1;
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(f->context, weights, &options, &regridder), SPART_OK);
    assert_int_equal(spart_regridder_num_entries(regridder), 2);
    spart_regridder_free(regridder);
    options.drop_zeros = 0;
    assert_int_equal(spart_regridder_create(f->context, weights, &options, &regridder), SPART_OK);
    assert_int_equal(spart_regridder_num_entries(regridder), 4);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

static void huge_column_count_uses_int64_columns(void **state)
{
    fixture *f = *state;
    /* 2^31 + 5 input cells along one axis, three entries. */
    const int64_t big = ((int64_t)1 << 31) + 5;
    const int64_t orthogonal[] = {1}, input[] = {1, big}, output[] = {1, 2};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 3};
    const int64_t indices_in[] = {0, big - 1, big - 2}, indices_out[] = {0, 1, 1};
    const double values[] = {1.0, 2.0, 3.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    assert_int_equal(spart_regridder_csr(regridder, NULL, &columns32, &columns64, NULL), SPART_OK);
    assert_null(columns32);
    assert_non_null(columns64);
    assert_int_equal(columns64[1], big - 1);
    assert_int_equal(columns64[2], big - 2);
    /* (Its transpose would have 2^31 + 5 rows: 16 GiB of row pointers.) */
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

static void float32_values_are_summed_in_float64(void **state)
{
    fixture *f = *state;
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.value_type = SPART_FLOAT32;
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(f->context, f->trailing, &options, &regridder),
                     SPART_OK);
    assert_int_equal(spart_regridder_value_type(regridder), SPART_FLOAT32);
    double *x = random_values(120, 50);
    spart_array xa = {x, {4, {2, 3, 4, 5}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    double expected[36];
    reference_product(f->context, regridder, x, expected);
    assert_memory_equal(y, expected, sizeof expected);
    free(x);
    free(y);
    spart_regridder_free(regridder);
}

static void apply_rejects_bad_shapes_and_sizes(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    double x[120] = {0}, y[36];
    spart_array wrong = {x, {4, {2, 3, 5, 4}}};
    assert_int_equal(spart_regridder_apply(f->context, regridder, &wrong, y, 36),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "x has shape 2x3x5x4"));
    spart_array right = {x, {4, {2, 3, 4, 5}}};
    assert_int_equal(spart_regridder_apply(f->context, regridder, &right, y, 35),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "size_y = 35"));
    assert_int_equal(spart_regridder_apply(f->context, regridder, &right, NULL, 36),
                     SPART_ERROR_NULL_POINTER);
    /* y where x still lies, in part or whole: refused, nothing written */
    static double shared[156];
    spart_array x_in_shared = {shared, {4, {2, 3, 4, 5}}};
    assert_int_equal(spart_regridder_apply(f->context, regridder, &x_in_shared, shared + 100, 36),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "x and y overlap"));
    assert_int_equal(spart_regridder_apply(f->context, regridder, &x_in_shared, shared, 36),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_regridder_apply(f->context, regridder, &x_in_shared, shared + 120, 36),
                     SPART_OK); /* just past x: no overlap */
    static double xb[240];
    spart_array batch = {xb, {5, {2, 2, 3, 4, 5}}};
    size_t bytes = 0;
    assert_int_equal(spart_regridder_workspace_size(f->context, regridder, &batch.shape, &bytes),
                     SPART_OK);
    assert_true(bytes > 0);
    double small[4];
    double y2[72];
    assert_int_equal(
        spart_regridder_apply_workspace(f->context, regridder, &batch, y2, 72, small, sizeof small),
        SPART_ERROR_INVALID_ARGUMENT);
    spart_regridder_free(regridder);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, set_up, tear_down)
    const struct CMUnitTest tests[] = {
        TEST(transpose_passes_the_dot_product_test),   TEST(empty_elements_and_rows_give_zeros),
        TEST(nan_reaches_only_the_rows_that_touch_it), TEST(drop_zeros_leaves_out_exact_zeros),
        TEST(huge_column_count_uses_int64_columns),    TEST(float32_values_are_summed_in_float64),
        TEST(apply_rejects_bad_shapes_and_sizes),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
