/*
 * tests/unit/test_csr_matrix.c: a CSR matrix made from a caller's arrays
 * (spart/csr_matrix.h) on the host: its products against a plain
 * reference of the documented order, bit for bit, on R-MAT power-law
 * matrices with empty rows, rows of one chunk plus one entry and a row of
 * 10 M entries; the same bits for 1, 2 and 16 threads, for a vector alone
 * and inside batches of 3, 8 and 33, for every index and value type,
 * copied or wrapped; a golden digest; alpha and beta (beta = 0 never
 * reads y); float32 vectors; the transpose; the checks of the arrays; and
 * empty matrices.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spart.h"
#include "spart/csr_matrix.h"
#include "test_util.h"
#include "test_csr_matrix_util.h"

/* The golden digest of test_golden_digest. */
#define GOLDEN_POWER_LAW 0xc9bc39986c07a629ULL

static spart_csr_matrix *make(spart_context *context, const spart_csr_arrays *a, int wrap,
                              int check)
{
    spart_csr_matrix_options options;
    spart_csr_matrix_options_init(&options);
    options.wrap = wrap;
    options.check = check;
    spart_csr_matrix *matrix = NULL;
    assert_int_equal(spart_csr_matrix_create(context, a, &options, &matrix), SPART_OK);
    return matrix;
}

/* y = op(A) x for `vectors` float64 vectors, alpha 1, beta 0. */
static void multiply(spart_context *context, spart_csr_matrix *matrix, spart_operation op,
                     int64_t vectors, const double *x, double *y)
{
    spart_csr_product p;
    spart_csr_product_init(&p);
    p.operation = op;
    p.num_vectors = vectors;
    assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x, y), SPART_OK);
}

/* A vector alone, and each vector of batches of 3, 8 and 33, with 1, 2
 * and 16 threads: the reference's bits. */
static void check_products(spart_context *context, spart_csr_matrix *matrix, spart_operation op,
                           const test_csr *m, int values_float)
{
    const int64_t n_in = m->columns, n_out = m->rows;
    const int64_t batches[4] = {1, 3, 8, 33};
    const int threads[3] = {1, 2, 16};
    double *x = test_vectors(n_in * 33, 7);
    double *expected = malloc((size_t)(n_out * 33 + 1) * sizeof(double));
    double *y = malloc((size_t)(n_out * 33 + 1) * sizeof(double));
    for (int64_t v = 0; v < 33; v++) {
        test_reference(m, x + v * n_in, values_float, expected + v * n_out);
    }
    for (int t = 0; t < 3; t++) {
        assert_int_equal(spart_context_set_threads(context, threads[t]), SPART_OK);
        for (int b = 0; b < 4; b++) {
            memset(y, 0xff, (size_t)(n_out * batches[b] + 1) * sizeof(double));
            multiply(context, matrix, op, batches[b], x, y);
            assert_same_bits_or_nan(y, expected, n_out * batches[b]);
        }
    }
    assert_int_equal(spart_context_set_threads(context, 2), SPART_OK);
    free(x);
    free(expected);
    free(y);
}

/* Every index and value type, copied and wrapped, A and A^T. */
static void check_all_kinds(spart_context *context, const test_csr *m)
{
    test_csr t = test_transpose(m);
    int32_t *row_ptr32 = test_narrow(m->row_ptr, m->rows + 1);
    int32_t *columns32 = test_narrow(m->column, m->entries);
    float *values32 = test_floats(m->value, m->entries);
    for (int kind = 0; kind < 8; kind++) {
        spart_csr_arrays a = test_arrays(m);
        if (kind & 1) {
            a.row_ptr = row_ptr32;
            a.row_ptr_type = SPART_INT32;
        }
        if (kind & 2) {
            a.columns = columns32;
            a.column_type = SPART_INT32;
        }
        if (kind & 4) {
            a.values = values32;
            a.value_type = SPART_FLOAT32;
        }
        for (int wrap = 0; wrap < 2; wrap++) {
            spart_csr_matrix *matrix = make(context, &a, wrap, 1);
            check_products(context, matrix, SPART_OPERATION_NONE, m, (kind & 4) != 0);
            check_products(context, matrix, SPART_OPERATION_TRANSPOSE, &t, (kind & 4) != 0);
            spart_csr_matrix_free(matrix);
        }
    }
    free(row_ptr32);
    free(columns32);
    free(values32);
    test_csr_free(&t);
}

static void test_power_law(void **state)
{
    test_csr m = test_rmat(11, 8, 2026);
    int64_t empty = 0, longest = 0;
    for (int64_t r = 0; r < m.rows; r++) {
        int64_t length = m.row_ptr[r + 1] - m.row_ptr[r];
        empty += length == 0;
        longest = length > longest ? length : longest;
    }
    assert_true(empty > m.rows / 10); /* the case asked for: many empty rows */
    assert_true(longest > 64 * 8);
    check_all_kinds(*state, &m);
    test_csr_free(&m);
}

/* Rows of exactly one chunk, one chunk plus one, two chunks plus one,
 * and short ones beside them. */
static void test_chunk_edges(void **state)
{
    const int64_t lengths[6] = {SPART_CHUNK_LENGTH + 1,     3, SPART_CHUNK_LENGTH, 0,
                                2 * SPART_CHUNK_LENGTH + 1, 1};
    test_csr m = test_rows_of(6, 700, lengths, 11);
    check_all_kinds(*state, &m);
    test_csr_free(&m);
}

/* The digest of y for the power-law matrix, fixed: the summation order
 * must not change from version to version (files and users' results). */
static void test_golden_digest(void **state)
{
    spart_context *context = *state;
    test_csr m = test_rmat(12, 16, 99);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_matrix *matrix = make(context, &a, 1, 0);
    double *x = test_vectors(m.columns * 8, 5);
    double *y = malloc((size_t)(m.rows * 8) * sizeof(double));
    uint64_t digests[3];
    const int threads[3] = {1, 2, 16};
    for (int t = 0; t < 3; t++) {
        assert_int_equal(spart_context_set_threads(context, threads[t]), SPART_OK);
        multiply(context, matrix, SPART_OPERATION_NONE, 8, x, y);
        digests[t] = digest_doubles(y, m.rows * 8);
    }
    assert_int_equal(spart_context_set_threads(context, 2), SPART_OK);
    print_message("golden digest %016llx\n", (unsigned long long)digests[0]);
    assert_true(digests[0] == digests[1] && digests[1] == digests[2]);
    assert_true(digests[0] == GOLDEN_POWER_LAW);
    free(x);
    free(y);
    spart_csr_matrix_free(matrix);
    test_csr_free(&m);
}

/* The matrix's regridder saved to a file and loaded: the file records
 * the plan by row (PLANRULE), so the loaded regridder gives the same bits
 * (and a loaded file without PLANRULE keeps the mean's rule:
 * test_regridder_fits). */
static void test_file_keeps_the_rule(void **state)
{
    spart_context *context = *state;
    test_csr m = test_rmat(10, 8, 77);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_matrix *matrix = make(context, &a, 0, 0);
    char path[] = "/tmp/spart_test_csr_matrix_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(spart_regridder_save(context, spart_csr_matrix_regridder(matrix), path, 1),
                     SPART_OK);
    spart_regridder *loaded = NULL;
    if (spart_regridder_load(context, path, &loaded) != SPART_OK) {
        fail_msg("load: %s", spart_context_error(context));
    }
    remove(path);
    double *x = test_vectors(m.columns, 3);
    double *y = malloc((size_t)m.rows * sizeof(double));
    double *expected = malloc((size_t)m.rows * sizeof(double));
    test_reference(&m, x, 0, expected);
    spart_shape shape = {1, {m.columns}};
    spart_array xa = {x, shape};
    assert_int_equal(spart_regridder_apply(context, loaded, &xa, y, m.rows), SPART_OK);
    assert_same_bits_or_nan(y, expected, m.rows);
    spart_regridder_free(loaded);
    spart_csr_matrix_free(matrix);
    free(x);
    free(y);
    free(expected);
    test_csr_free(&m);
}

/* One row of 10 M entries (2442 chunks) among short rows, float32
 * values, wrapped: the reference's bits. */
static void test_ten_million(void **state)
{
    spart_context *context = *state;
    const int64_t lengths[3] = {2, 10 * 1000 * 1000, 5};
    test_csr m = test_rows_of(3, 1000, lengths, 3);
    spart_csr_arrays a = test_arrays(&m);
    float *values32 = test_floats(m.value, m.entries);
    a.values = values32;
    a.value_type = SPART_FLOAT32;
    spart_csr_matrix *matrix = make(context, &a, 1, 0);
    double *x = test_vectors(m.columns * 3, 1);
    double y[9], expected[9];
    for (int v = 0; v < 3; v++) {
        test_reference(&m, x + v * m.columns, 1, expected + 3 * v);
    }
    multiply(context, matrix, SPART_OPERATION_NONE, 1, x, y);
    assert_same_bits_or_nan(y, expected, 3);
    multiply(context, matrix, SPART_OPERATION_NONE, 3, x, y);
    assert_same_bits_or_nan(y, expected, 9);
    spart_csr_matrix_free(matrix);
    free(values32);
    free(x);
    test_csr_free(&m);
}

/* alpha and beta, float64 and float32 vectors: the header's formula;
 * beta = 0 with NaN in y gives no NaN. */
static void test_alpha_beta(void **state)
{
    spart_context *context = *state;
    test_csr m = test_rmat(9, 8, 4);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_matrix *matrix = make(context, &a, 0, 1);
    const int64_t vectors = 3, n = m.rows * vectors;
    double *x = test_vectors(m.columns * vectors, 8);
    double *sums = malloc((size_t)n * sizeof(double));
    double *y = malloc((size_t)n * sizeof(double));
    double *y0 = test_vectors(n, 9);
    float *x32 = test_floats(x, m.columns * vectors);
    double *x_back = malloc((size_t)(m.columns * vectors) * sizeof(double));
    for (int64_t k = 0; k < m.columns * vectors; k++) {
        x_back[k] = (double)x32[k];
    }
    float *y32 = malloc((size_t)n * sizeof(float));
    const double alphas[3] = {1.0, -0.75, 3.0e10};
    const double betas[3] = {0.0, 1.0, -2.5};
    spart_csr_product p;
    spart_csr_product_init(&p);
    p.num_vectors = vectors;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            p.alpha = alphas[i];
            p.beta = betas[j];
            /* float64 vectors */
            p.vector_type = SPART_FLOAT64;
            for (int64_t v = 0; v < vectors; v++) {
                test_reference(&m, x + v * m.columns, 0, sums + v * m.rows);
            }
            for (int64_t k = 0; k < n; k++) {
                y[k] = p.beta == 0.0 ? NAN : y0[k];
            }
            assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x, y), SPART_OK);
            for (int64_t k = 0; k < n; k++) {
                double expected =
                    p.beta == 0.0 ? p.alpha * sums[k] : fma(p.alpha, sums[k], p.beta * y0[k]);
                assert_false(isnan(y[k]));
                assert_memory_equal(&y[k], &expected, sizeof(double));
            }
            /* float32 vectors: summed in float64 from the float values */
            p.vector_type = SPART_FLOAT32;
            for (int64_t v = 0; v < vectors; v++) {
                test_reference(&m, x_back + v * m.columns, 0, sums + v * m.rows);
            }
            for (int64_t k = 0; k < n; k++) {
                y32[k] = p.beta == 0.0 ? NAN : (float)y0[k];
            }
            assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x32, y32), SPART_OK);
            for (int64_t k = 0; k < n; k++) {
                double expected = p.beta == 0.0
                                      ? p.alpha * sums[k]
                                      : fma(p.alpha, sums[k], p.beta * (double)(float)y0[k]);
                float narrow = (float)expected;
                assert_memory_equal(&y32[k], &narrow, sizeof(float));
            }
        }
    }
    spart_csr_matrix_free(matrix);
    free(x);
    free(sums);
    free(y);
    free(y0);
    free(x32);
    free(x_back);
    free(y32);
    test_csr_free(&m);
}

/* Wrapped arrays are read where they lie: the matrix's pointers are the
 * caller's (row pointers too when int64); copies are not. */
static void test_wrapped_pointers(void **state)
{
    spart_context *context = *state;
    test_csr m = test_rmat(8, 4, 1);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_matrix *matrix = make(context, &a, 1, 0);
    const int64_t *row_ptr = NULL, *columns64 = NULL;
    const int32_t *columns32 = NULL;
    const void *values = NULL;
    assert_int_equal(spart_csr_matrix_arrays(matrix, &row_ptr, &columns32, &columns64, &values),
                     SPART_OK);
    assert_ptr_equal(row_ptr, m.row_ptr);
    assert_ptr_equal(columns64, m.column);
    assert_null(columns32);
    assert_ptr_equal(values, m.value);
    spart_csr_matrix_free(matrix); /* frees nothing of the caller's */
    matrix = make(context, &a, 0, 0);
    assert_int_equal(spart_csr_matrix_arrays(matrix, &row_ptr, NULL, &columns64, &values),
                     SPART_OK);
    assert_ptr_not_equal(row_ptr, m.row_ptr);
    assert_ptr_not_equal(columns64, m.column);
    assert_ptr_not_equal(values, m.value);
    assert_int_equal(spart_csr_matrix_num_rows(matrix), m.rows);
    assert_int_equal(spart_csr_matrix_num_columns(matrix), m.columns);
    assert_int_equal(spart_csr_matrix_num_entries(matrix), m.entries);
    assert_int_equal(spart_csr_matrix_on_device(matrix), 0);
    assert_non_null(spart_csr_matrix_regridder(matrix));
    spart_csr_matrix_free(matrix);
    test_csr_free(&m);
}

/* A wrapped matrix's values may be rewritten between products of A: each
 * product reads them as they are (the header's promise for values that
 * change every step), giving the bits of a matrix copied from the new
 * values; the transpose, made on first use, keeps the values it was made
 * from. */
static void test_wrapped_values_rewritten(void **state)
{
    spart_context *context = *state;
    test_csr m = test_rmat(9, 6, 5);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_matrix *wrapped = make(context, &a, 1, 0);
    double *x = test_vectors(m.columns > m.rows ? m.columns : m.rows, 7);
    double *y = malloc((size_t)m.rows * sizeof(double));
    double *expected = malloc((size_t)m.rows * sizeof(double));
    double *yt = malloc((size_t)m.columns * sizeof(double));
    double *yt_first = malloc((size_t)m.columns * sizeof(double));
    multiply(context, wrapped, SPART_OPERATION_TRANSPOSE, 1, x, yt_first);
    for (int step = 0; step < 3; step++) {
        for (int64_t e = 0; e < m.entries; e++) {
            m.value[e] = m.value[e] * 0.5 + (double)step; /* new weights each step */
        }
        spart_csr_matrix *copied = make(context, &a, 0, 0);
        multiply(context, copied, SPART_OPERATION_NONE, 1, x, expected);
        multiply(context, wrapped, SPART_OPERATION_NONE, 1, x, y);
        assert_memory_equal(y, expected, (size_t)m.rows * sizeof(double));
        spart_csr_matrix_free(copied);
    }
    multiply(context, wrapped, SPART_OPERATION_TRANSPOSE, 1, x, yt);
    assert_memory_equal(yt, yt_first, (size_t)m.columns * sizeof(double));
    spart_csr_matrix_free(wrapped);
    free(x), free(y), free(expected), free(yt), free(yt_first);
    test_csr_free(&m);
}

/* Refused with a sentence naming `needle`. */
static void expect_refusal(spart_context *context, const spart_csr_arrays *a, spart_status status,
                           const char *needle)
{
    spart_csr_matrix_options options;
    spart_csr_matrix_options_init(&options);
    options.check = 1;
    spart_csr_matrix *matrix = (spart_csr_matrix *)(uintptr_t)1;
    assert_int_equal(spart_csr_matrix_create(context, a, &options, &matrix), status);
    assert_null(matrix);
    const char *said = spart_context_error(context);
    if (strstr(said, needle) == NULL) {
        fail_msg("'%s' does not say '%s'", said, needle);
    }
}

static void test_checks(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[5] = {0, 2, 1, 4, 5};
    int64_t columns[5] = {0, 1, 2, 3, 4};
    double values[5] = {1, 2, 3, 4, 5};
    spart_csr_arrays a;
    memset(&a, 0, sizeof a);
    a.num_rows = 4;
    a.num_columns = 5;
    a.num_entries = 5;
    a.row_ptr = row_ptr;
    a.columns = columns;
    a.values = values;
    expect_refusal(context, &a, SPART_ERROR_INVALID_ARGUMENT,
                   "row_ptr[2] = 1 is less than row_ptr[1] = 2");
    row_ptr[2] = 3;
    row_ptr[0] = 1;
    expect_refusal(context, &a, SPART_ERROR_INVALID_ARGUMENT, "row_ptr[0] = 1");
    row_ptr[0] = 0;
    row_ptr[4] = 4;
    expect_refusal(context, &a, SPART_ERROR_INVALID_ARGUMENT, "row_ptr[num_rows = 4] = 4");
    row_ptr[4] = 5;
    columns[3] = 5;
    expect_refusal(context, &a, SPART_ERROR_INVALID_ARGUMENT, "columns[3] = 5 is outside");
    columns[3] = -1;
    expect_refusal(context, &a, SPART_ERROR_INVALID_ARGUMENT, "columns[3] = -1");
    columns[3] = 3;
    a.num_rows = -1;
    expect_refusal(context, &a, SPART_ERROR_INVALID_ARGUMENT, "must not be negative");
    a.num_rows = 4;
    a.value_type = (spart_value_type)7;
    expect_refusal(context, &a, SPART_ERROR_UNKNOWN_ENUM, "value_type = 7");
    a.value_type = SPART_FLOAT64;
    a.columns = NULL;
    expect_refusal(context, &a, SPART_ERROR_NULL_POINTER, "columns and values");
    a.columns = columns;
    spart_csr_matrix *matrix = make(context, &a, 1, 1);
    /* products that cannot be */
    spart_csr_product p;
    spart_csr_product_init(&p);
    double x[5] = {0}, y[4] = {0};
    p.operation = (spart_operation)3;
    assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x, y),
                     SPART_ERROR_UNKNOWN_ENUM);
    p.operation = SPART_OPERATION_NONE;
    assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x, x + 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    p.num_vectors = 2;
    size_t bytes = 0;
    assert_int_equal(spart_csr_matrix_workspace_size(context, matrix, &p, &bytes), SPART_OK);
    spart_csr_matrix_free(matrix);
}

/* No rows, no columns, no entries. */
static void test_degenerate(void **state)
{
    spart_context *context = *state;
    int64_t zero_rows[1] = {0};
    int64_t rows_of_nothing[4] = {0, 0, 0, 0};
    const struct {
        int64_t rows, columns;
        int64_t *row_ptr;
    } cases[4] = {
        {0, 0, zero_rows}, {0, 5, zero_rows}, {3, 0, rows_of_nothing}, {3, 4, rows_of_nothing}};
    for (int c = 0; c < 4; c++) {
        spart_csr_arrays a;
        memset(&a, 0, sizeof a);
        a.num_rows = cases[c].rows;
        a.num_columns = cases[c].columns;
        a.row_ptr = cases[c].row_ptr;
        for (int wrap = 0; wrap < 2; wrap++) {
            spart_csr_matrix *matrix = make(context, &a, wrap, 1);
            for (int op = 0; op < 2; op++) {
                int64_t n_out = op ? a.num_columns : a.num_rows;
                double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
                double y[16];
                for (int k = 0; k < 16; k++) {
                    y[k] = NAN;
                }
                spart_csr_product p;
                spart_csr_product_init(&p);
                p.operation = (spart_operation)op;
                p.num_vectors = 2;
                assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x, y), SPART_OK);
                for (int64_t k = 0; k < 2 * n_out; k++) {
                    assert_true(y[k] == 0.0 && !signbit(y[k]));
                }
                p.beta = 2.0;
                for (int k = 0; k < 16; k++) {
                    y[k] = 1.5;
                }
                assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, x, y), SPART_OK);
                for (int64_t k = 0; k < 2 * n_out; k++) {
                    assert_true(y[k] == 3.0);
                }
                p.num_vectors = 0;
                assert_int_equal(spart_csr_matrix_multiply(context, matrix, &p, NULL, NULL),
                                 SPART_OK);
            }
            spart_csr_matrix_free(matrix);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_law),
        cmocka_unit_test(test_chunk_edges),
        cmocka_unit_test(test_golden_digest),
        cmocka_unit_test(test_ten_million),
        cmocka_unit_test(test_alpha_beta),
        cmocka_unit_test(test_wrapped_pointers),
        cmocka_unit_test(test_wrapped_values_rewritten),
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_file_keeps_the_rule),
    };
    return cmocka_run_group_tests(tests, context_set_up, context_tear_down);
}
