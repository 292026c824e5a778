/*
 * tests/unit/test_cuda_csr_matrix.c: a CSR matrix made from device
 * arrays (spart/csr_matrix.h) gives the host's bits and the reference's:
 * R-MAT power-law matrices with empty rows, rows of one chunk plus one,
 * a row of 10 M entries; a vector alone and inside batches of 3, 8 and
 * 33; every index and value type, copied and wrapped; alpha and beta,
 * float32 vectors; the transpose. Wrapped device arrays are read where
 * they lie (the matrix's pointers are the caller's); bad arrays are
 * refused by the device check with the host's sentence; empty matrices.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart/csr_matrix.h"
#include "test_cuda_util.h"
#include "test_csr_matrix_util.h"

static void *to_device_bytes(const void *host, size_t bytes)
{
    void *device = NULL;
    check_cuda(cudaMalloc(&device, bytes > 0 ? bytes : 1), "cudaMalloc");
    if (bytes > 0) {
        check_cuda(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    return device;
}

static void from_device_bytes(void *host, const void *device, size_t bytes)
{
    if (bytes > 0) {
        check_cuda(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    }
}

/* Device copies of a caller's arrays (freed with free_device_arrays). */
static spart_csr_arrays device_arrays(const spart_csr_arrays *host)
{
    spart_csr_arrays d = *host;
    size_t rows = (size_t)host->num_rows + 1, entries = (size_t)host->num_entries;
    d.row_ptr = to_device_bytes(host->row_ptr, rows * (host->row_ptr_type == SPART_INT32 ? 4 : 8));
    d.columns =
        to_device_bytes(host->columns, entries * (host->column_type == SPART_INT32 ? 4 : 8));
    d.values = to_device_bytes(host->values, entries * (host->value_type == SPART_FLOAT32 ? 4 : 8));
    d.on_device = 1;
    return d;
}

static void free_device_arrays(spart_csr_arrays *d)
{
    check_cuda(cudaFree((void *)d->row_ptr), "cudaFree");
    check_cuda(cudaFree((void *)d->columns), "cudaFree");
    check_cuda(cudaFree((void *)d->values), "cudaFree");
}

static spart_csr_matrix *make(spart_context *context, const spart_csr_arrays *a, int wrap,
                              int check)
{
    spart_csr_matrix_options options;
    spart_csr_matrix_options_init(&options);
    options.wrap = wrap;
    options.check = check;
    spart_csr_matrix *matrix = NULL;
    if (spart_csr_matrix_create(context, a, &options, &matrix) != SPART_OK) {
        fail_msg("spart_csr_matrix_create: %s", spart_context_error(context));
    }
    return matrix;
}

/* y = op(A) x on the device for `vectors` vectors of `type`, x and y in
 * host memory (copied over and back), alpha, beta and y's start given. */
static void device_multiply(spart_context *context, spart_csr_matrix *matrix,
                            const spart_csr_product *p, const void *x, size_t x_bytes, void *y,
                            size_t y_bytes)
{
    void *x_device = to_device_bytes(x, x_bytes);
    void *y_device = to_device_bytes(y, y_bytes);
    if (spart_csr_matrix_multiply(context, matrix, p, x_device, y_device) != SPART_OK) {
        fail_msg("spart_csr_matrix_multiply: %s", spart_context_error(context));
    }
    check_cuda(cudaDeviceSynchronize(), "sync");
    from_device_bytes(y, y_device, y_bytes);
    check_cuda(cudaFree(x_device), "cudaFree");
    check_cuda(cudaFree(y_device), "cudaFree");
}

/* Host and device matrices of the same arrays give the reference's bits
 * for a vector alone and in batches of 3, 8, 33, A and A^T, float64 and
 * float32 vectors, alpha and beta. */
static void check_against_host(spart_context *context, spart_csr_matrix *host,
                               spart_csr_matrix *device, const test_csr *m, const test_csr *t,
                               int values_float)
{
    const int64_t batches[4] = {1, 3, 8, 33};
    for (int op = 0; op < 2; op++) {
        const test_csr *a = op ? t : m;
        const int64_t n_in = a->columns, n_out = a->rows;
        double *x = test_vectors(n_in * 33, 17);
        double *expected = malloc((size_t)(n_out * 33 + 1) * sizeof(double));
        double *y_host = malloc((size_t)(n_out * 33 + 1) * sizeof(double));
        double *y_device = malloc((size_t)(n_out * 33 + 1) * sizeof(double));
        for (int64_t v = 0; v < 33; v++) {
            test_reference(a, x + v * n_in, values_float, expected + v * n_out);
        }
        for (int b = 0; b < 4; b++) {
            spart_csr_product p;
            spart_csr_product_init(&p);
            p.operation = (spart_operation)op;
            p.num_vectors = batches[b];
            memset(y_device, 0xff, (size_t)(n_out * 33 + 1) * sizeof(double));
            device_multiply(context, device, &p, x, (size_t)(n_in * batches[b]) * 8, y_device,
                            (size_t)(n_out * batches[b]) * 8);
            assert_same_bits_or_nan(y_device, expected, n_out * batches[b]);
            /* alpha, beta: host and device the same bits */
            p.alpha = -1.25;
            p.beta = 0.5;
            for (int64_t k = 0; k < n_out * batches[b]; k++) {
                y_host[k] = y_device[k] = (double)k;
            }
            assert_int_equal(spart_csr_matrix_multiply(context, host, &p, x, y_host), SPART_OK);
            device_multiply(context, device, &p, x, (size_t)(n_in * batches[b]) * 8, y_device,
                            (size_t)(n_out * batches[b]) * 8);
            assert_same_bits_or_nan(y_device, y_host, n_out * batches[b]);
            /* float32 vectors, beta = 0 over NaN */
            p.vector_type = SPART_FLOAT32;
            p.beta = 0.0;
            float *x32 = test_floats(x, n_in * batches[b]);
            float *yh32 = malloc((size_t)(n_out * batches[b] + 1) * sizeof(float));
            float *yd32 = malloc((size_t)(n_out * batches[b] + 1) * sizeof(float));
            for (int64_t k = 0; k < n_out * batches[b]; k++) {
                yh32[k] = yd32[k] = NAN;
            }
            assert_int_equal(spart_csr_matrix_multiply(context, host, &p, x32, yh32), SPART_OK);
            device_multiply(context, device, &p, x32, (size_t)(n_in * batches[b]) * 4, yd32,
                            (size_t)(n_out * batches[b]) * 4);
            assert_memory_equal(yh32, yd32, (size_t)(n_out * batches[b]) * sizeof(float));
            for (int64_t k = 0; k < n_out * batches[b]; k++) {
                assert_false(isnan(yd32[k]));
            }
            free(x32);
            free(yh32);
            free(yd32);
        }
        free(x);
        free(expected);
        free(y_host);
        free(y_device);
    }
}

static void check_all_kinds(spart_context *context, const test_csr *m)
{
    test_csr t = test_transpose(m);
    int32_t *row_ptr32 = test_narrow(m->row_ptr, m->rows + 1);
    int32_t *columns32 = test_narrow(m->column, m->entries);
    float *values32 = test_floats(m->value, m->entries);
    /* SPART_TEST_SMALL=1 (under compute-sanitizer): the widest and the
     * narrowest types alone. */
    const char *small = getenv("SPART_TEST_SMALL");
    const int step = small != NULL && strcmp(small, "1") == 0 ? 7 : 1;
    for (int kind = 0; kind < 8; kind += step) {
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
        spart_csr_matrix *host = make(context, &a, 0, 1);
        spart_csr_arrays d = device_arrays(&a);
        for (int wrap = 0; wrap < 2; wrap++) {
            spart_csr_matrix *device = make(context, &d, wrap, 1);
            assert_int_equal(spart_csr_matrix_on_device(device), 1);
            check_against_host(context, host, device, m, &t, (kind & 4) != 0);
            spart_csr_matrix_free(device);
        }
        /* a host matrix copied to the device: the same products */
        spart_csr_matrix *copied = NULL;
        assert_int_equal(spart_csr_matrix_to_device(context, host, &copied), SPART_OK);
        check_against_host(context, host, copied, m, &t, (kind & 4) != 0);
        spart_csr_matrix_free(copied);
        free_device_arrays(&d);
        spart_csr_matrix_free(host);
    }
    free(row_ptr32);
    free(columns32);
    free(values32);
    test_csr_free(&t);
}

static void test_power_law(void **state)
{
    fixture *f = *state;
    test_csr m = test_rmat(11, 8, 2026);
    check_all_kinds(f->context, &m);
    test_csr_free(&m);
}

static void test_chunk_edges(void **state)
{
    fixture *f = *state;
    const int64_t lengths[6] = {SPART_CHUNK_LENGTH + 1,     3, SPART_CHUNK_LENGTH, 0,
                                2 * SPART_CHUNK_LENGTH + 1, 1};
    test_csr m = test_rows_of(6, 700, lengths, 11);
    check_all_kinds(f->context, &m);
    test_csr_free(&m);
}

/* Matrices whose rows all have one g under the row rule (summed by the
 * mean rule's kernels with that g on the device): rows of 8 (g = 8), of 1
 * with -0.0 products among them (g = 1), of 40 with a long row (g = 32). */
static void test_uniform_rows(void **state)
{
    fixture *f = *state;
    const int64_t rows = 3000;
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    for (int shape = 0; shape < 3; shape++) {
        for (int64_t r = 0; r < rows; r++) {
            lengths[r] = shape == 0 ? 8 : shape == 1 ? 1 : 40;
        }
        if (shape == 2) {
            lengths[17] = 3 * SPART_CHUNK_LENGTH + 5;
        }
        test_csr m = test_rows_of(rows, 2500, lengths, 40 + (uint64_t)shape);
        if (shape == 1) {
            for (int64_t e = 0; e < m.entries; e += 3) {
                m.value[e] = -0.0; /* x > 0 or 0: products of -0.0 or +0.0 */
            }
        }
        check_all_kinds(f->context, &m);
        test_csr_free(&m);
    }
    free(lengths);
}

/* One row of 10 M entries among short ones, wrapped float32 values. */
static void test_ten_million(void **state)
{
    fixture *f = *state;
    const int64_t lengths[3] = {2, 10 * 1000 * 1000, 5};
    test_csr m = test_rows_of(3, 1000, lengths, 3);
    spart_csr_arrays a = test_arrays(&m);
    float *values32 = test_floats(m.value, m.entries);
    a.values = values32;
    a.value_type = SPART_FLOAT32;
    spart_csr_arrays d = device_arrays(&a);
    spart_csr_matrix *matrix = make(f->context, &d, 1, 1);
    double *x = test_vectors(m.columns * 3, 1);
    double y[9], expected[9];
    for (int v = 0; v < 3; v++) {
        test_reference(&m, x + v * m.columns, 1, expected + 3 * v);
    }
    spart_csr_product p;
    spart_csr_product_init(&p);
    device_multiply(f->context, matrix, &p, x, (size_t)m.columns * 8, y, 3 * 8);
    assert_same_bits_or_nan(y, expected, 3);
    p.num_vectors = 3;
    device_multiply(f->context, matrix, &p, x, (size_t)m.columns * 3 * 8, y, 9 * 8);
    assert_same_bits_or_nan(y, expected, 9);
    spart_csr_matrix_free(matrix);
    free_device_arrays(&d);
    free(values32);
    free(x);
    test_csr_free(&m);
}

/* Wrapped device arrays are where the matrix reads: its pointers are the
 * caller's; int32 row pointers get an int64 array of the matrix's own. */
static void test_wrapped_pointers(void **state)
{
    fixture *f = *state;
    test_csr m = test_rmat(8, 4, 1);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_arrays d = device_arrays(&a);
    spart_csr_matrix *matrix = make(f->context, &d, 1, 0);
    const int64_t *row_ptr = NULL, *columns64 = NULL;
    const void *values = NULL;
    assert_int_equal(spart_csr_matrix_arrays(matrix, &row_ptr, NULL, &columns64, &values),
                     SPART_OK);
    assert_ptr_equal(row_ptr, d.row_ptr);
    assert_ptr_equal(columns64, d.columns);
    assert_ptr_equal(values, d.values);
    /* free the matrix, then the caller's arrays are still theirs to free */
    spart_csr_matrix_free(matrix);
    free_device_arrays(&d);
    int32_t *row_ptr32 = test_narrow(m.row_ptr, m.rows + 1);
    a.row_ptr = row_ptr32;
    a.row_ptr_type = SPART_INT32;
    d = device_arrays(&a);
    matrix = make(f->context, &d, 1, 0);
    assert_int_equal(spart_csr_matrix_arrays(matrix, &row_ptr, NULL, &columns64, &values),
                     SPART_OK);
    assert_ptr_not_equal((const void *)row_ptr, d.row_ptr);
    assert_ptr_equal(columns64, d.columns);
    assert_ptr_equal(values, d.values);
    spart_csr_matrix_free(matrix);
    free_device_arrays(&d);
    /* host arrays said to be on the device are refused, never read */
    a.on_device = 1;
    spart_csr_matrix *refused = NULL;
    assert_int_equal(spart_csr_matrix_create(f->context, &a, NULL, &refused),
                     SPART_ERROR_INVALID_ARGUMENT);
    free(row_ptr32);
    test_csr_free(&m);
}

/* A wrapped device matrix's values rewritten between products of A (as a
 * step of attention weights would): each product reads them as they are,
 * the host's bits for a matrix copied from the new values. */
static void test_wrapped_values_rewritten(void **state)
{
    fixture *f = *state;
    test_csr m = test_rmat(9, 6, 5);
    spart_csr_arrays a = test_arrays(&m);
    spart_csr_arrays d = device_arrays(&a);
    spart_csr_matrix *wrapped = make(f->context, &d, 1, 0);
    double *x = test_vectors(m.columns, 7);
    double *y = malloc((size_t)m.rows * sizeof(double));
    double *expected = malloc((size_t)m.rows * sizeof(double));
    spart_csr_product p;
    spart_csr_product_init(&p);
    for (int step = 0; step < 3; step++) {
        for (int64_t e = 0; e < m.entries; e++) {
            m.value[e] = m.value[e] * 0.5 + (double)step;
        }
        check_cuda(cudaMemcpy((void *)d.values, m.value, (size_t)m.entries * sizeof(double),
                              cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        spart_csr_matrix *host = make(f->context, &a, 0, 0);
        if (spart_csr_matrix_multiply(f->context, host, &p, x, expected) != SPART_OK) {
            fail_msg("host multiply: %s", spart_context_error(f->context));
        }
        device_multiply(f->context, wrapped, &p, x, (size_t)m.columns * sizeof(double), y,
                        (size_t)m.rows * sizeof(double));
        assert_memory_equal(y, expected, (size_t)m.rows * sizeof(double));
        spart_csr_matrix_free(host);
    }
    spart_csr_matrix_free(wrapped);
    free_device_arrays(&d);
    free(x), free(y), free(expected);
    test_csr_free(&m);
}

static void expect_refusal(spart_context *context, const spart_csr_arrays *host, const char *needle)
{
    spart_csr_arrays d = device_arrays(host);
    spart_csr_matrix_options options;
    spart_csr_matrix_options_init(&options);
    options.check = 1;
    spart_csr_matrix *matrix = NULL;
    assert_int_equal(spart_csr_matrix_create(context, &d, &options, &matrix),
                     SPART_ERROR_INVALID_ARGUMENT);
    const char *said = spart_context_error(context);
    if (strstr(said, needle) == NULL) {
        fail_msg("'%s' does not say '%s'", said, needle);
    }
    free_device_arrays(&d);
}

static void test_checks(void **state)
{
    fixture *f = *state;
    int32_t row_ptr[5] = {0, 2, 1, 4, 5};
    int64_t columns[5] = {0, 1, 2, 3, 4};
    double values[5] = {1, 2, 3, 4, 5};
    spart_csr_arrays a;
    memset(&a, 0, sizeof a);
    a.num_rows = 4;
    a.num_columns = 5;
    a.num_entries = 5;
    a.row_ptr = row_ptr;
    a.row_ptr_type = SPART_INT32;
    a.columns = columns;
    a.values = values;
    expect_refusal(f->context, &a, "row_ptr[2] = 1 is less than row_ptr[1] = 2");
    row_ptr[2] = 3;
    row_ptr[0] = 1;
    expect_refusal(f->context, &a, "row_ptr[0] = 1");
    row_ptr[0] = 0;
    row_ptr[4] = 4;
    expect_refusal(f->context, &a, "row_ptr[num_rows = 4] = 4");
    row_ptr[4] = 5;
    columns[3] = 5;
    expect_refusal(f->context, &a, "columns[3] = 5 is outside");
}

static void test_degenerate(void **state)
{
    fixture *f = *state;
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
        spart_csr_arrays d = device_arrays(&a);
        for (int wrap = 0; wrap < 2; wrap++) {
            spart_csr_matrix *matrix = make(f->context, &d, wrap, 1);
            for (int op = 0; op < 2; op++) {
                int64_t n_in = op ? a.num_rows : a.num_columns;
                int64_t n_out = op ? a.num_columns : a.num_rows;
                double x[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
                double y[16];
                for (int k = 0; k < 16; k++) {
                    y[k] = NAN;
                }
                spart_csr_product p;
                spart_csr_product_init(&p);
                p.operation = (spart_operation)op;
                p.num_vectors = 2;
                device_multiply(f->context, matrix, &p, x, (size_t)(2 * n_in) * 8, y,
                                (size_t)(2 * n_out) * 8);
                for (int64_t k = 0; k < 2 * n_out; k++) {
                    assert_true(y[k] == 0.0 && !signbit(y[k]));
                }
            }
            spart_csr_matrix_free(matrix);
        }
        free_device_arrays(&d);
    }
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_law),        cmocka_unit_test(test_chunk_edges),
        cmocka_unit_test(test_uniform_rows),     cmocka_unit_test(test_ten_million),
        cmocka_unit_test(test_wrapped_pointers), cmocka_unit_test(test_checks),
        cmocka_unit_test(test_degenerate),       cmocka_unit_test(test_wrapped_values_rewritten),
    };
    /* SPART_TEST_SMALL=1: the small cases alone (for compute-sanitizer). */
    const struct CMUnitTest small_tests[] = {
        cmocka_unit_test(test_chunk_edges),      cmocka_unit_test(test_uniform_rows),
        cmocka_unit_test(test_wrapped_pointers), cmocka_unit_test(test_checks),
        cmocka_unit_test(test_degenerate),       cmocka_unit_test(test_wrapped_values_rewritten),
    };
    const char *small = getenv("SPART_TEST_SMALL");
    if (small != NULL && strcmp(small, "1") == 0) {
        return cmocka_run_group_tests(small_tests, cuda_set_up, cuda_tear_down);
    }
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
