/*
 * tests/unit/test_cuda_util.h: what the device tests (test_cuda_*.c)
 * share: reproducible numbers, CSR matrices made directly in the internal
 * layout, comparing a device regridder's arrays and products with a host
 * regridder's bit for bit, the fixture of a context on device 0, and the
 * skip rule of the `cuda` label (exit 77 without a device, failure with
 * SPART_REQUIRE_GPU=1).
 *
 * Include after <cmocka.h>. Everything is static inline, so a test that
 * uses only part of it builds without warnings.
 */
#ifndef SPART_TEST_CUDA_UTIL_H
#define SPART_TEST_CUDA_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "operator/operator_ops.h"
#include "spart.h"
#include "test_util.h"

/* ---- numbers ------------------------------------------------------------------------- */

/* A value of either sign whose exponent spans 2^-30 .. 2^30, so that any
 * change of order or rounding shows in the last bits. */
static inline double spread_value(uint64_t *state)
{
    double mantissa = 2.0 * next_uniform(state) - 1.0;
    int exponent = (int)(next_uniform(state) * 61.0) - 30;
    return ldexp(mantissa, exponent);
}

/* Row lengths drawn in [0, 2 * mean], a tenth of the rows empty. */
static inline int64_t *random_lengths(int64_t rows, int64_t mean, uint64_t seed)
{
    int64_t *lengths = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
    uint64_t state = seed;
    for (int64_t r = 0; r < rows; r++) {
        int empty = next_uniform(&state) < 0.1;
        lengths[r] = empty ? 0 : (int64_t)(next_uniform(&state) * (double)(2 * mean + 1));
    }
    return lengths;
}

/* The number of cells along `count` of a shape's axes. */
static inline int64_t resampled_cells(const spart_shape *shape, int count, const int *axes)
{
    int64_t cells = 1;
    for (int a = 0; a < count; a++) {
        cells *= shape->dims[axes[a]];
    }
    return cells;
}

static inline void check_cuda(cudaError_t error, const char *what)
{
    if (error != cudaSuccess) {
        (void)cudaGetLastError(); /* leave no error behind for the next test */
        fail_msg("%s: %s", what, cudaGetErrorString(error));
    }
}

/* n doubles of new device memory (through the context), a copy of host's
 * when host is not NULL. */
static inline double *doubles_to_device(spart_context *context, const double *host, int64_t n)
{
    void *device = NULL;
    size_t bytes = (size_t)n * sizeof(double);
    assert_int_equal(spart_device_malloc(context, bytes, &device), SPART_OK);
    if (host != NULL) {
        assert_int_equal(spart_device_copy_to_device(context, device, host, bytes), SPART_OK);
    }
    return device;
}

/* ---- matrices made directly --------------------------------------------------------- */

/* A host regridder from x of shape (columns) to y of shape (rows) whose row
 * r has lengths[r] entries in random columns with spread values (int64
 * columns or float32 values when asked), made in the internal layout so
 * that any shape and column type can be had. */
static inline spart_regridder *csr_regridder(spart_context *context, int64_t rows, int64_t columns,
                                             const int64_t *lengths, int float32, int int64_columns,
                                             uint64_t seed)
{
    const spart_allocator *allocator = &context->allocator;
    spart_regridder *regridder = spart_alloc_zero(allocator, 1, sizeof *regridder);
    assert_non_null(regridder);
    regridder->allocator = *allocator;
    regridder->ops = spart_operator_ops_for(-1); /* host memory */
    regridder->owns_arrays = 1;
    spart_csr *csr = &regridder->csr;
    csr->num_rows = rows;
    csr->num_columns = columns;
    csr->row_ptr = spart_alloc(allocator, (size_t)rows + 1, sizeof(int64_t));
    assert_non_null(csr->row_ptr);
    csr->row_ptr[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        csr->row_ptr[r + 1] = csr->row_ptr[r] + lengths[r];
    }
    int64_t entries = csr->row_ptr[rows];
    csr->num_entries = entries;
    size_t n = (size_t)(entries > 0 ? entries : 1);
    if (int64_columns) {
        csr->columns64 = spart_alloc(allocator, n, sizeof(int64_t));
    } else {
        csr->columns32 = spart_alloc(allocator, n, sizeof(int32_t));
    }
    if (float32) {
        csr->values32 = spart_alloc(allocator, n, sizeof(float));
    } else {
        csr->values64 = spart_alloc(allocator, n, sizeof(double));
    }
    uint64_t state = seed;
    for (int64_t k = 0; k < entries; k++) {
        int64_t column = (int64_t)(next_uniform(&state) * (double)columns);
        double value = spread_value(&state);
        if (int64_columns) {
            csr->columns64[k] = column;
        } else {
            csr->columns32[k] = (int32_t)column;
        }
        if (float32) {
            csr->values32[k] = (float)value;
        } else {
            csr->values64[k] = value;
        }
    }
    regridder->input.shape.ndim = 1;
    regridder->input.shape.dims[0] = columns;
    regridder->input.matrix_stride[0] = 1;
    regridder->input.num_batch = 1;
    regridder->output.shape.ndim = 1;
    regridder->output.shape.dims[0] = rows;
    regridder->output.matrix_stride[0] = 1;
    regridder->output.num_batch = 1;
    regridder->plan = spart_plan_product(csr);
    return regridder;
}

/* An empty regridder from x of shape (columns) to y of shape (rows) whose
 * arrays will live on CUDA device 0, for the internal build functions to
 * fill. */
static inline spart_regridder *device_shell(spart_context *context, int64_t rows, int64_t columns)
{
    spart_regridder *shell = spart_alloc_zero(&context->allocator, 1, sizeof *shell);
    assert_non_null(shell);
    shell->allocator = context->allocator;
    shell->owns_arrays = 1;
    shell->ops = spart_operator_ops_for(0);
    shell->device.cuda_device = 0;
    shell->csr.num_rows = rows;
    shell->csr.num_columns = columns;
    shell->input.shape.ndim = 1;
    shell->input.shape.dims[0] = columns;
    shell->input.matrix_stride[0] = 1;
    shell->input.num_batch = 1;
    shell->output.shape.ndim = 1;
    shell->output.shape.dims[0] = rows;
    shell->output.matrix_stride[0] = 1;
    shell->output.num_batch = 1;
    return shell;
}

/* ---- comparing a device regridder with a host one ------------------------------------ */

/* The device regridder's long-row table, copied to the host (NULL when it
 * has none); *count gets its number of int64. */
static inline int64_t *long_table_of(const spart_regridder *device, size_t *count)
{
    const spart_regridder_device *d = &device->device;
    *count = (size_t)(d->num_long_rows > 0 ? 2 * d->num_long_rows + 1 + 2 * d->num_long_chunks : 0);
    if (*count == 0) {
        assert_null(d->long_table);
        return NULL;
    }
    int64_t *table = malloc(*count * sizeof(int64_t));
    check_cuda(cudaMemcpy(table, d->long_table, *count * sizeof(int64_t), cudaMemcpyDeviceToHost),
               "copying a long-row table");
    return table;
}

/* `device` holds exactly `host`'s CSR arrays (sizes, row pointers, column
 * and value types and bits), plan, and long-row table (as
 * spart_regridder_to_device makes it from the host arrays). Returns a
 * digest of the arrays. */
static inline uint64_t assert_same_csr(spart_context *context, const spart_regridder *host,
                                       const spart_regridder *device, const char *what)
{
    assert_int_equal(spart_regridder_cuda_device(device), 0);
    spart_regridder *back = NULL;
    if (spart_regridder_to_host(context, device, &back) != SPART_OK) {
        fail_msg("%s: spart_regridder_to_host: %s", what, spart_context_error(context));
    }
    const spart_csr *a = &back->csr, *b = &host->csr;
    if (a->num_rows != b->num_rows || a->num_columns != b->num_columns ||
        a->num_entries != b->num_entries) {
        fail_msg("%s: the device matrix is %lld x %lld with %lld entries, the host's %lld x %lld "
                 "with %lld",
                 what, (long long)a->num_rows, (long long)a->num_columns, (long long)a->num_entries,
                 (long long)b->num_rows, (long long)b->num_columns, (long long)b->num_entries);
    }
    size_t rows = (size_t)b->num_rows + 1, n = (size_t)b->num_entries;
    assert_true((a->columns32 != NULL) == (b->columns32 != NULL));
    assert_true((a->values32 != NULL) == (b->values32 != NULL));
    size_t column_bytes = n * (b->columns32 != NULL ? sizeof(int32_t) : sizeof(int64_t));
    size_t value_bytes = n * (b->values32 != NULL ? sizeof(float) : sizeof(double));
    const void *columns_a = a->columns32 != NULL ? (const void *)a->columns32 : a->columns64;
    const void *columns_b = b->columns32 != NULL ? (const void *)b->columns32 : b->columns64;
    const void *values_a = a->values32 != NULL ? (const void *)a->values32 : a->values64;
    const void *values_b = b->values32 != NULL ? (const void *)b->values32 : b->values64;
    if (memcmp(a->row_ptr, b->row_ptr, rows * sizeof(int64_t)) != 0) {
        fail_msg("%s: the row pointers differ", what);
    }
    if (n > 0 && memcmp(columns_a, columns_b, column_bytes) != 0) {
        fail_msg("%s: the columns differ", what);
    }
    if (n > 0 && memcmp(values_a, values_b, value_bytes) != 0) {
        fail_msg("%s: the values differ", what);
    }
    assert_int_equal(back->plan.group_size, host->plan.group_size);
    assert_int_equal(device->plan.group_size, host->plan.group_size);
    assert_int_equal(device->plan.chunk_length, host->plan.chunk_length);
    /* The long-row table made on the device equals the one made on the host
     * from the same row pointers. */
    spart_regridder *copied = NULL;
    assert_int_equal(spart_regridder_to_device(context, host, &copied), SPART_OK);
    assert_int_equal(device->device.num_long_rows, copied->device.num_long_rows);
    assert_int_equal(device->device.num_long_chunks, copied->device.num_long_chunks);
    size_t count = 0, count_copied = 0;
    int64_t *table = long_table_of(device, &count);
    int64_t *table_copied = long_table_of(copied, &count_copied);
    assert_int_equal(count, count_copied);
    if (count > 0 && memcmp(table, table_copied, count * sizeof(int64_t)) != 0) {
        fail_msg("%s: the long-row tables differ", what);
    }
    uint64_t result = digest_bytes(b->row_ptr, rows * sizeof(int64_t)) ^
                      (n > 0 ? digest_bytes(columns_b, column_bytes) * 3 : 0) ^
                      (n > 0 ? digest_bytes(values_b, value_bytes) * 5 : 0);
    free(table);
    free(table_copied);
    spart_regridder_free(copied);
    spart_regridder_free(back);
    return result;
}

/* y = A x with x of spread values, once through the host regridder, once
 * through the device one (x and y copied), the same bits. */
static inline void assert_same_products(spart_context *context, const spart_regridder *host,
                                        const spart_regridder *device, uint64_t seed,
                                        const char *what)
{
    spart_shape shape_x = spart_regridder_shape_input(host);
    spart_shape shape_y = spart_regridder_shape_output(host);
    int64_t n_x = spart_shape_size(&shape_x), n_y = spart_shape_size(&shape_y);
    size_t bytes_x = (size_t)(n_x > 0 ? n_x : 1) * sizeof(double);
    size_t bytes_y = (size_t)(n_y > 0 ? n_y : 1) * sizeof(double);
    double *x = malloc(bytes_x), *expected = malloc(bytes_y), *got = malloc(bytes_y);
    uint64_t state = seed;
    for (int64_t k = 0; k < n_x; k++) {
        x[k] = spread_value(&state);
    }
    spart_array xa = {x, shape_x};
    if (spart_regridder_apply(context, host, &xa, expected, n_y) != SPART_OK) {
        fail_msg("%s: host apply: %s", what, spart_context_error(context));
    }
    double *x_device = NULL, *y_device = NULL;
    check_cuda(cudaMalloc((void **)&x_device, bytes_x), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&y_device, bytes_y), "cudaMalloc");
    check_cuda(cudaMemcpy(x_device, x, bytes_x, cudaMemcpyHostToDevice), "cudaMemcpy");
    check_cuda(cudaMemset(y_device, 0xff, bytes_y), "cudaMemset");
    spart_array xd = {x_device, shape_x};
    if (spart_regridder_apply(context, device, &xd, y_device, n_y) != SPART_OK) {
        fail_msg("%s: device apply: %s", what, spart_context_error(context));
    }
    check_cuda(cudaDeviceSynchronize(), "the device product");
    check_cuda(cudaMemcpy(got, y_device, bytes_y, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (int64_t k = 0; k < n_y; k++) {
        if (memcmp(got + k, expected + k, sizeof(double)) != 0) {
            fail_msg("%s: y[%lld] is %.17g on the device, %.17g on the host", what, (long long)k,
                     got[k], expected[k]);
        }
    }
    check_cuda(cudaFree(x_device), "cudaFree");
    check_cuda(cudaFree(y_device), "cudaFree");
    free(x);
    free(expected);
    free(got);
}

/* ---- the fixture ------------------------------------------------------------------------- */

/* What a group of device tests shares: a context on CUDA device 0. */
typedef struct fixture {
    spart_context *context;
} fixture;

/* The group set-up of cmocka_run_group_tests: -1 (the group fails) when
 * the context or device 0 cannot be had. */
static inline int cuda_set_up(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL || spart_context_create(&f->context) != SPART_OK ||
        spart_context_set_cuda_device(f->context, 0) != SPART_OK) {
        return -1;
    }
    *state = f;
    return 0;
}

static inline int cuda_tear_down(void **state)
{
    fixture *f = *state;
    spart_context_free(f->context);
    free(f);
    return 0;
}

/* A copy of a host regridder on device 0 (the test fails if it cannot be made). */
static inline spart_regridder *to_device(fixture *f, const spart_regridder *host)
{
    spart_regridder *device = NULL;
    if (spart_regridder_to_device(f->context, host, &device) != SPART_OK) {
        fail_msg("spart_regridder_to_device: %s", spart_context_error(f->context));
    }
    assert_int_equal(spart_regridder_cuda_device(device), 0);
    return device;
}

/* ---- the skip rule ------------------------------------------------------------------------ */

/* -1 when CUDA device 0 is visible (run the tests); otherwise the exit code
 * of the program: 77 (skipped), or 1 under SPART_REQUIRE_GPU=1. Says why. */
static inline int cuda_tests_exit_code(void)
{
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    int code = -1;
    if (spart_context_set_cuda_device(context, 0) != SPART_OK) {
        const char *require = getenv("SPART_REQUIRE_GPU");
        int required = require != NULL && strcmp(require, "1") == 0;
        printf("%s: %s\n", required ? "FAILED, SPART_REQUIRE_GPU=1" : "skipped",
               spart_context_error(context));
        code = required ? 1 : 77;
    }
    spart_context_free(context);
    return code;
}

#endif /* SPART_TEST_CUDA_UTIL_H */
