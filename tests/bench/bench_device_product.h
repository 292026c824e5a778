/*
 * tests/bench/bench_device_product.h: a Regridder's product timed on the
 * device and the device's copy rate, as the ESIS and MART benchmarks time
 * them (bench_esis_run, bench_instrument_esis, bench_mart_frames), so that
 * their fractions of the copy rate are measured the same way:
 *
 *   bench_product_bytes           the bytes a product must move: the CSR
 *                                 arrays once (values, columns as stored,
 *                                 row pointers), x and y (float64) of
 *                                 every vector
 *   bench_device_product_seconds  one product over `vectors` vectors of
 *                                 ones, after a warm-up, each ended by a
 *                                 copy of one value back (which waits
 *                                 for it: launch latency included, as an
 *                                 iteration pays it); the best of `repeat`
 *                                 and, where asked, their median
 *   bench_device_copy_rate        bytes read + written a second by a
 *                                 device-to-device copy, the best of
 *                                 `repeat`, each waited for the same way
 *
 * Only the library's own calls (spart/device.h): the benchmarks built
 * without the CUDA runtime use it too. Include after bench_util.h.
 */
#ifndef SPART_BENCH_DEVICE_PRODUCT_H
#define SPART_BENCH_DEVICE_PRODUCT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "spart.h"

static inline double bench_product_bytes(const spart_regridder *r, int64_t vectors)
{
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    CHECK_SPART(NULL, spart_regridder_csr(r, NULL, &columns32, &columns64, NULL));
    double value = spart_regridder_value_type(r) == SPART_FLOAT32 ? 4.0 : 8.0;
    double column = columns32 != NULL ? 4.0 : 8.0;
    double rows = (double)spart_regridder_num_rows(r);
    double columns = (double)spart_regridder_num_columns(r);
    return (double)spart_regridder_num_entries(r) * (value + column) + (rows + 1.0) * 8.0 +
           (double)vectors * (rows + columns) * 8.0;
}

/* `count` ones into device memory at `x`, through a host block of at most
 * 8 Mi values. */
static inline void bench_device_ones(spart_context *context, double *x, int64_t count)
{
    int64_t block = count < ((int64_t)1 << 23) ? count : ((int64_t)1 << 23);
    double *ones = malloc((size_t)(block > 0 ? block : 1) * sizeof(double));
    if (ones == NULL) {
        fprintf(stderr, "bench_device_ones: out of memory\n");
        exit(1);
    }
    for (int64_t k = 0; k < block; k++) {
        ones[k] = 1.0;
    }
    for (int64_t at = 0; at < count; at += block) {
        int64_t n = count - at < block ? count - at : block;
        CHECK_SPART(context,
                    spart_device_copy_to_device(context, x + at, ones, (size_t)n * sizeof(double)));
    }
    free(ones);
}

/* Seconds of one product of the device Regridder `r` over `vectors`
 * vectors: with `batch_axis` (or vectors > 1) x has a leading batch axis
 * of `vectors`, else the operator's own input shape. The best of `repeat`
 * (at least 1) after a warm-up; *median (if not NULL) their median. */
static inline double bench_device_product_seconds(spart_context *context, const spart_regridder *r,
                                                  int64_t vectors, int batch_axis, int repeat,
                                                  double *median)
{
    spart_shape input = spart_regridder_shape_input(r);
    spart_shape shape = input;
    if (batch_axis || vectors > 1) {
        shape.ndim = input.ndim + 1;
        shape.dims[0] = vectors;
        memcpy(shape.dims + 1, input.dims, (size_t)input.ndim * sizeof(int64_t));
    }
    int64_t size_x = vectors * spart_regridder_num_columns(r);
    int64_t size_y = vectors * spart_regridder_num_rows(r);
    size_t workspace_bytes = 0;
    CHECK_SPART(context, spart_regridder_workspace_size(context, r, &shape, &workspace_bytes));
    void *x = NULL, *y = NULL, *workspace = NULL;
    CHECK_SPART(context, spart_device_malloc(context, (size_t)size_x * sizeof(double), &x));
    CHECK_SPART(context, spart_device_malloc(context, (size_t)size_y * sizeof(double), &y));
    if (workspace_bytes > 0) {
        CHECK_SPART(context, spart_device_malloc(context, workspace_bytes, &workspace));
    }
    bench_device_ones(context, x, size_x);
    spart_array array = {x, shape};
    repeat = repeat < 1 ? 1 : (repeat > 64 ? 64 : repeat);
    double times[64], back = 0.0;
    for (int k = 0; k <= repeat; k++) { /* the first warms up */
        double start = bench_seconds();
        CHECK_SPART(context, spart_regridder_apply_workspace(context, r, &array, y, size_y,
                                                             workspace, workspace_bytes));
        CHECK_SPART(context, spart_device_copy_to_host(context, &back, y, sizeof back));
        if (k > 0) {
            times[k - 1] = bench_seconds() - start;
        }
    }
    spart_device_free(context, x);
    spart_device_free(context, y);
    spart_device_free(context, workspace);
    double best = bench_least(times, repeat);
    if (median != NULL) {
        *median = bench_median(times, repeat);
    }
    return best;
}

/* The device's copy rate (bytes read + written a second) over `bytes`. */
static inline double bench_device_copy_rate(spart_context *context, size_t bytes, int repeat)
{
    void *a = NULL, *b = NULL;
    double back = 0.0, best = 1e300;
    CHECK_SPART(context, spart_device_malloc(context, bytes, &a));
    CHECK_SPART(context, spart_device_malloc(context, bytes, &b));
    bench_device_ones(context, a, (int64_t)(bytes / sizeof(double)));
    for (int k = 0; k < (repeat < 1 ? 1 : repeat); k++) {
        double start = bench_seconds();
        CHECK_SPART(context, spart_device_copy_on_device(context, b, a, bytes));
        CHECK_SPART(context, spart_device_copy_to_host(context, &back, b, sizeof back));
        best = bench_smaller(best, bench_seconds() - start);
    }
    spart_device_free(context, a);
    spart_device_free(context, b);
    return 2.0 * (double)bytes / best;
}

#endif /* SPART_BENCH_DEVICE_PRODUCT_H */
