/*
 * tests/unit/test_cuda_product_util.h: what the device product's tests share
 * (test_cuda_product.c, test_cuda_product_rows.c): spread values, bitwise
 * comparison, random matrices, and one product on each side compared.
 */
#ifndef SPART_TEST_CUDA_PRODUCT_UTIL_H
#define SPART_TEST_CUDA_PRODUCT_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "operator/regridder_internal.h"
#include "spart.h"
#include "test_cuda_util.h"

/* ---- numbers ------------------------------------------------------------------------- */

static inline double *spread_values(int64_t n, uint64_t seed)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        values[k] = spread_value(&state);
    }
    return values;
}

static inline void assert_same_bits(const double *got, const double *expected, int64_t n,
                                    const char *what)
{
    for (int64_t k = 0; k < n; k++) {
        if (memcmp(got + k, expected + k, sizeof(double)) != 0) {
            fail_msg("%s: value %lld of %lld is %.17g, the host gives %.17g", what, (long long)k,
                     (long long)n, got[k], expected[k]);
        }
    }
}

/* ---- matrices ------------------------------------------------------------------------- */

static inline spart_regridder *random_regridder(spart_context *context, int64_t rows,
                                                int64_t columns, int64_t mean, int float32,
                                                int int64_columns, uint64_t seed)
{
    int64_t *lengths = random_lengths(rows, mean, seed);
    spart_regridder *regridder =
        csr_regridder(context, rows, columns, lengths, float32, int64_columns, seed + 1);
    free(lengths);
    return regridder;
}

/* Values of row `row` that make each of its terms v x exactly -0.0 (v =
 * -0.0 where x > 0, +0.0 where x < 0): the row's sum is +0.0 only if each
 * lane starts from +0.0, as the host's do. */
static inline void make_terms_negative_zero(spart_csr *csr, int64_t row, const double *x)
{
    for (int64_t k = csr->row_ptr[row]; k < csr->row_ptr[row + 1]; k++) {
        int64_t column = csr->columns32 != NULL ? csr->columns32[k] : csr->columns64[k];
        double zero = x[column] > 0.0 ? -0.0 : 0.0;
        if (csr->values64 != NULL) {
            csr->values64[k] = zero;
        } else {
            csr->values32[k] = (float)zero;
        }
    }
}

/* ---- products on both sides ----------------------------------------------------------- */

static inline int64_t size_of_y(fixture *f, const spart_regridder *regridder,
                                const spart_shape *shape_x)
{
    spart_shape shape_y;
    assert_int_equal(spart_regridder_apply_shape(f->context, regridder, shape_x, &shape_y),
                     SPART_OK);
    return spart_shape_size(&shape_y);
}

/* y = A x on the host, y poisoned first. */
static inline double *host_product(fixture *f, const spart_regridder *host, const double *x,
                                   spart_shape shape_x)
{
    int64_t n = size_of_y(f, host, &shape_x);
    double *y = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (int64_t k = 0; k < n; k++) {
        y[k] = NAN;
    }
    spart_array xa = {x, shape_x};
    if (spart_regridder_apply(f->context, host, &xa, y, n) != SPART_OK) {
        fail_msg("host apply: %s", spart_context_error(f->context));
    }
    return y;
}

static inline void *device_alloc(size_t bytes)
{
    void *pointer = NULL;
    check_cuda(cudaMalloc(&pointer, bytes > 0 ? bytes : 1), "cudaMalloc");
    return pointer;
}

/* x copied to the device. */
static inline double *device_copy(const double *x, int64_t n)
{
    double *copy = device_alloc((size_t)n * sizeof(double));
    if (n > 0) {
        check_cuda(cudaMemcpy(copy, x, (size_t)n * sizeof(double), cudaMemcpyHostToDevice),
                   "cudaMemcpy to the device");
    }
    return copy;
}

/* y of n doubles on the device, every byte 0xff (a NaN): each value must be written. */
static inline double *device_poisoned(int64_t n)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(double);
    double *y = device_alloc(bytes);
    check_cuda(cudaMemset(y, 0xff, bytes), "cudaMemset");
    return y;
}

static inline double *copy_back(const double *device_y, int64_t n)
{
    double *y = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    check_cuda(cudaDeviceSynchronize(), "the product");
    if (n > 0) {
        check_cuda(cudaMemcpy(y, device_y, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost),
                   "cudaMemcpy to the host");
    }
    return y;
}

/* y = A x through a device regridder, x given and y returned in host memory. */
static inline double *device_product(fixture *f, const spart_regridder *device, const double *x,
                                     spart_shape shape_x)
{
    int64_t n = size_of_y(f, device, &shape_x);
    double *x_device = device_copy(x, spart_shape_size(&shape_x));
    double *y_device = device_poisoned(n);
    spart_array xa = {x_device, shape_x};
    if (spart_regridder_apply(f->context, device, &xa, y_device, n) != SPART_OK) {
        fail_msg("device apply: %s", spart_context_error(f->context));
    }
    double *y = copy_back(y_device, n);
    check_cuda(cudaFree(x_device), "cudaFree");
    check_cuda(cudaFree(y_device), "cudaFree");
    return y;
}

/* The device product of `host` for x of shape (num_leading, columns) or
 * (columns) equals the host product bit for bit; returns its digest. */
static inline uint64_t assert_device_equals_host(fixture *f, const spart_regridder *host,
                                                 const spart_regridder *device, int64_t num_leading,
                                                 uint64_t seed, const char *what)
{
    spart_shape shape = spart_regridder_shape_input(host);
    if (num_leading != 1) {
        memmove(shape.dims + 1, shape.dims, (size_t)shape.ndim * sizeof(int64_t));
        shape.dims[0] = num_leading;
        shape.ndim++;
    }
    double *x = spread_values(spart_shape_size(&shape), seed);
    int64_t n = size_of_y(f, host, &shape);
    double *expected = host_product(f, host, x, shape);
    double *got = device_product(f, device, x, shape);
    assert_same_bits(got, expected, n, what);
    uint64_t result = digest_doubles(got, n);
    free(x);
    free(expected);
    free(got);
    return result;
}

#endif
