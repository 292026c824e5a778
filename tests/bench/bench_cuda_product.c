/*
 * bench_cuda_product: first measurements of the device product against its
 * floor and its peer, all in one program on one GPU.
 *
 * One large synthetic operator: float32 values, int32 columns, int64 row
 * pointers (spart's layout), rows of a fixed length whose columns lie in a
 * band around the diagonal (neighbouring rows touch neighbouring columns,
 * as a regridder's do), x and y in float64; once with each row's columns
 * spread over 65536 columns, once nearly contiguous. It is timed as
 *   - spart's device product, one vector (and eight, per vector);
 *   - cuSPARSE SpMV, CSR_ALG1 and CSR_ALG2, on the same arrays (fp32 matrix,
 *     fp64 vectors and compute; int32 row offsets, since cuSPARSE takes one
 *     index type);
 *   - the floor: the product's compulsory bytes (matrix once, x once, y
 *     once) at the device-to-device copy rate measured here.
 * A matrix of rows of 3-4 entries (a conservative transpose's shape) shows
 * the short-row index (timed with it and through the row pointers), and a
 * skewed matrix (one row of 4 M entries among short rows) the long-row
 * path. Each time is the median of --repeat runs after a
 * warm-up, by CUDA events. The device product is also compared bit for bit
 * with the host product.
 *
 * With --esis it times instead two operators of the ESIS Level-4 scale
 * (issue 4): a forward operator of 2.14e9 float32 weights in rows of 2900
 * entries over 2^28 columns, and one shaped as its conservative transpose
 * (the same entries in 623 M rows of 3 or 4, over the forward operator's
 * rows as columns). ESIS has about 2.21e9 weights per direction; 2.14e9 is
 * the most that cuSPARSE's int32 row offsets (one index type for offsets
 * and columns) can describe, so that the comparison can run at all; spart's
 * own row pointers are int64 and need no such limit. Its host side needs
 * about 60 GB of memory and the device about 40 GB.
 *
 * With --skew-parts it times only the skewed matrix and its two parts
 * (without its long row; the long row alone); with --long-row, only the
 * long row alone. With --ctis, the CTIS-shaped operators of the host
 * benchmark (bench_ctis_operators.h) and their transposes, one vector and
 * eight; with --ctis-case NAME, the CTIS case NAME (a, b or c) alone.
 *
 * Usage: bench_cuda_product [--entries N] [--row-length L] [--columns C]
 *                           [--repeat R] [--esis] [--skew-parts] [--long-row] [--ctis]
 *                           [--ctis-case NAME] [--markdown FILE]
 *
 * --markdown FILE also writes one row per matrix (spart and cuSPARSE, one
 * vector and eight) in Markdown under a header block (GPU, CUDA and
 * cuSPARSE versions, command line), for docs/performance.md
 * (scripts/performance_page.py).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "bench_ctis_operators.h"
#include "bench_cuda_peers.h"
#include "bench_util.h"
#include "operator/operator_ops.h"
#include "spart.h"

/* The matrices measured, for --markdown. */
typedef struct markdown_row {
    char name[160];
    int64_t rows, entries;
    int float32;
    double spart_ms, alg1_ms, alg2_ms, floor_ms;
    double batch_ms, spmm_ms; /* eight vectors; < 0: not timed (spmm: refused by all) */
} markdown_row;
enum { MARKDOWN_ROWS = 32 };
static markdown_row markdown_rows[MARKDOWN_ROWS];
static int markdown_count = 0;

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 11;
}

static double uniform(uint64_t *state)
{
    return (double)next_random(state) / 9007199254740992.0;
}

/* A host regridder from x (columns) to y (rows) with the given row lengths:
 * float32 values in [0.5, 1.5), int32 columns in a band of `band` columns
 * around the row's diagonal position, ascending within the row. */
static spart_regridder *band_regridder(spart_context *context, int64_t rows, int64_t columns,
                                       const int64_t *lengths, int64_t band, int float32,
                                       uint64_t seed)
{
    const spart_allocator *allocator = &context->allocator;
    spart_regridder *regridder = spart_alloc_zero(allocator, 1, sizeof *regridder);
    regridder->allocator = *allocator;
    regridder->ops = spart_operator_ops_for(-1); /* host memory */
    regridder->owns_arrays = 1;
    spart_csr *csr = &regridder->csr;
    csr->num_rows = rows;
    csr->num_columns = columns;
    csr->row_ptr = spart_alloc(allocator, (size_t)rows + 1, sizeof(int64_t));
    csr->row_ptr[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        csr->row_ptr[r + 1] = csr->row_ptr[r] + lengths[r];
    }
    csr->num_entries = csr->row_ptr[rows];
    size_t n = (size_t)csr->num_entries + 1;
    csr->columns32 = spart_alloc(allocator, n, sizeof(int32_t));
    if (float32) {
        csr->values32 = spart_alloc(allocator, n, sizeof(float));
    } else {
        csr->values64 = spart_alloc(allocator, n, sizeof(double));
    }
    if (csr->row_ptr == NULL || csr->columns32 == NULL ||
        (csr->values32 == NULL && csr->values64 == NULL)) {
        fprintf(stderr, "out of host memory for %lld entries\n", (long long)csr->num_entries);
        exit(1);
    }
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        uint64_t state = seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1);
        int64_t begin = csr->row_ptr[r], length = lengths[r];
        int64_t centre = rows > 1 ? r * (columns - 1) / (rows - 1) : 0;
        int64_t width = length > band ? length : band;
        int64_t first = centre - width / 2;
        if (first < 0) {
            first = 0;
        }
        if (first + width > columns) {
            first = columns - width > 0 ? columns - width : 0;
        }
        /* Ascending columns: a random walk with mean step width / length. */
        double step = (double)width / (double)(length > 0 ? length : 1);
        double position = (double)first;
        for (int64_t k = 0; k < length; k++) {
            int64_t column = (int64_t)position;
            if (column >= columns) {
                column = columns - 1;
            }
            csr->columns32[begin + k] = (int32_t)column;
            position += step * 2.0 * uniform(&state);
            double value = 0.5 + uniform(&state);
            if (float32) {
                csr->values32[begin + k] = (float)value;
            } else {
                csr->values64[begin + k] = value;
            }
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

/* Median time of spart's product for x (device) of shape `shape`; the
 * runs whose y differs from the first run's into *differing. */
static double time_spart(spart_context *context, const spart_regridder *device,
                         const double *x_device, spart_shape shape, double *y_device, int64_t n,
                         int repeat, int *differing)
{
    run_check check = run_check_open(n);
    size_t bytes = 0;
    CHECK_SPART(context, spart_regridder_workspace_size(context, device, &shape, &bytes));
    void *workspace = NULL;
    if (bytes > 0) {
        CHECK_CUDA(cudaMalloc(&workspace, bytes));
    }
    spart_array xa = {x_device, shape};
    timer t;
    CHECK_CUDA(cudaEventCreate(&t.start));
    CHECK_CUDA(cudaEventCreate(&t.stop));
    double times[64];
    for (int run = -3; run < repeat; run++) {
        CHECK_CUDA(cudaEventRecord(t.start, 0));
        CHECK_SPART(context, spart_regridder_apply_workspace(context, device, &xa, y_device, n,
                                                             workspace, bytes));
        CHECK_CUDA(cudaEventRecord(t.stop, 0));
        double ms = elapsed_ms(&t);
        if (run >= 0) {
            times[run] = ms;
        }
        CHECK_CUDA(cudaMemset(y_device, 0xff, (size_t)n * sizeof(double))); /* poison */
        CHECK_SPART(context, spart_regridder_apply_workspace(context, device, &xa, y_device, n,
                                                             workspace, bytes));
        run_check_add(&check, run, y_device);
    }
    CHECK_CUDA(cudaFree(workspace));
    *differing = check.differing;
    run_check_close(&check);
    return bench_median(times, repeat);
}

static double *device_random(int64_t n, uint64_t seed)
{
    double *host = malloc((size_t)n * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        host[k] = 2.0 * uniform(&state) - 1.0;
    }
    double *device = NULL;
    CHECK_CUDA(cudaMalloc((void **)&device, (size_t)n * sizeof(double)));
    CHECK_CUDA(cudaMemcpy(device, host, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    free(host);
    return device;
}

/* Rows whose device product differs from the host product in any bit. */
static int64_t rows_differing_from_host(spart_context *context, const spart_regridder *host,
                                        const double *x_device, const double *y_device)
{
    int64_t rows = host->csr.num_rows, columns = host->csr.num_columns;
    double *x = malloc((size_t)columns * sizeof(double));
    double *expected = malloc((size_t)rows * sizeof(double));
    double *got = malloc((size_t)rows * sizeof(double));
    CHECK_CUDA(cudaMemcpy(x, x_device, (size_t)columns * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(got, y_device, (size_t)rows * sizeof(double), cudaMemcpyDeviceToHost));
    spart_array xa = {x, spart_regridder_shape_input(host)};
    CHECK_SPART(context, spart_regridder_apply(context, host, &xa, expected, rows));
    int64_t differing = 0;
    for (int64_t r = 0; r < rows; r++) {
        differing += memcmp(got + r, expected + r, sizeof(double)) != 0;
    }
    free(x);
    free(expected);
    free(got);
    return differing;
}

/* The largest |a - b| / max(|b|, tiny) over the rows (spart against cuSPARSE). */
static double largest_relative_difference(const double *a_device, const double *b_device, int64_t n)
{
    double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
    CHECK_CUDA(cudaMemcpy(a, a_device, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(b, b_device, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    double largest = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double scale = fabs(b[k]) > 1e-300 ? fabs(b[k]) : 1e-300;
        double difference = fabs(a[k] - b[k]) / scale;
        largest = difference > largest ? difference : largest;
    }
    free(a);
    free(b);
    return largest;
}

static void print_spmm(const char *name, double ms, int differing, int repeat)
{
    if (ms < 0.0) {
        printf("  %-34s refused by cuSPARSE for these types and column-major vectors\n", name);
        return;
    }
    printf("  %-34s %9.3f ms  (%.3f ms per vector; %d of %d runs differ from the first)\n", name,
           ms, ms / 8.0, differing, repeat - 1);
}

/* Time one matrix: spart (1 and 8 vectors), cuSPARSE SpMV ALG1 and ALG2
 * (and SpMM for 8 vectors), the floor; count the runs of each whose
 * result differs in any bit from its first run's. */
static void measure(spart_context *context, cusparseHandle_t handle, const char *name,
                    spart_regridder *host, double rate, int repeat, int with_batch)
{
    const spart_csr *csr = &host->csr;
    int float32 = csr->values32 != NULL;
    spart_regridder *device = NULL;
    CHECK_SPART(context, spart_regridder_to_device(context, host, &device));
    int64_t rows = csr->num_rows, columns = csr->num_columns, entries = csr->num_entries;
    /* Room for eight vectors only where the batch is timed (the ESIS-scale
     * operators would need 80 GB more). */
    int64_t vectors = with_batch ? 8 : 1;
    double *x = device_random(columns * vectors, 7);
    double *y = NULL, *y_peer = NULL;
    CHECK_CUDA(cudaMalloc((void **)&y, (size_t)(rows * vectors) * sizeof(double)));
    CHECK_CUDA(cudaMalloc((void **)&y_peer, (size_t)(rows * vectors) * sizeof(double)));
    double value_bytes = float32 ? 4.0 : 8.0;
    double bytes = (double)entries * (value_bytes + 4.0) + (double)(rows + 1) * 8.0 +
                   (double)columns * 8.0 + (double)rows * 8.0;
    double floor_ms = bytes / rate * 1e3;
    spart_shape one = spart_regridder_shape_input(host);
    int spart_differing = 0, alg1_differing = 0, alg2_differing = 0;
    double spart_ms = time_spart(context, device, x, one, y, rows, repeat, &spart_differing);
    int64_t differing = rows_differing_from_host(context, host, x, y);
    double alg1_ms = time_cusparse(handle, host, device, x, y_peer, CUSPARSE_SPMV_CSR_ALG1, repeat,
                                   &alg1_differing);
    double alg2_ms = time_cusparse(handle, host, device, x, y_peer, CUSPARSE_SPMV_CSR_ALG2, repeat,
                                   &alg2_differing);
    double relative = largest_relative_difference(y, y_peer, rows);
    printf("\n%s: %lld rows x %lld columns, %lld entries (%s values, int32 columns, int64 row "
           "pointers), group size %d\n",
           name, (long long)rows, (long long)columns, (long long)entries,
           float32 ? "float32" : "float64", host->plan.group_size);
    printf("  compulsory bytes %.3f GB; floor at the copy rate %.3f ms; runs that differ from "
           "the first of %d\n",
           bytes * 1e-9, floor_ms, repeat);
    printf("  %-34s %9.3f ms  %6.2f TB/s  %5.1f%% of copy rate  (%lld rows differ from the host; "
           "%d of %d runs differ from the first)\n",
           "spart, one vector", spart_ms, bytes / (spart_ms * 1e-3) * 1e-12,
           100.0 * floor_ms / spart_ms, (long long)differing, spart_differing, repeat - 1);
    printf("  %-34s %9.3f ms  %6.2f TB/s  %5.1f%% of copy rate  (%d of %d runs differ)\n",
           "cuSPARSE SpMV CSR_ALG1", alg1_ms, bytes / (alg1_ms * 1e-3) * 1e-12,
           100.0 * floor_ms / alg1_ms, alg1_differing, repeat - 1);
    printf("  %-34s %9.3f ms  %6.2f TB/s  %5.1f%% of copy rate  (%d of %d runs differ; largest "
           "relative difference from spart %.2e)\n",
           "cuSPARSE SpMV CSR_ALG2", alg2_ms, bytes / (alg2_ms * 1e-3) * 1e-12,
           100.0 * floor_ms / alg2_ms, alg2_differing, repeat - 1, relative);
    printf("  spart / cuSPARSE: %.2fx ALG1, %.2fx ALG2 (below 1: spart faster)\n",
           spart_ms / alg1_ms, spart_ms / alg2_ms);
    markdown_row *row = markdown_count < MARKDOWN_ROWS ? &markdown_rows[markdown_count++] : NULL;
    if (row != NULL) {
        snprintf(row->name, sizeof row->name, "%s", name);
        row->rows = rows;
        row->entries = entries;
        row->float32 = float32;
        row->spart_ms = spart_ms;
        row->alg1_ms = alg1_ms;
        row->alg2_ms = alg2_ms;
        row->floor_ms = floor_ms;
        row->batch_ms = -1.0;
        row->spmm_ms = -1.0;
    }
    if (device->device.short_row_lengths != NULL) {
        /* The same product through the int64 row pointers (the index set
         * aside for a moment): what the short-row index gains. */
        uint8_t *lengths = device->device.short_row_lengths;
        device->device.short_row_lengths = NULL;
        int pointer_differing = 0;
        double pointer_ms =
            time_spart(context, device, x, one, y, rows, repeat, &pointer_differing);
        int64_t pointer_rows = rows_differing_from_host(context, host, x, y);
        device->device.short_row_lengths = lengths;
        double index_bytes =
            bytes - (double)(rows + 1) * 8.0 + (double)rows + (double)(rows / 256 + 1) * 8.0;
        printf("  %-34s %9.3f ms  %6.2f TB/s  %5.1f%% of copy rate  (%lld rows differ from the "
               "host; %d of %d runs differ from the first)\n",
               "spart through row pointers", pointer_ms, bytes / (pointer_ms * 1e-3) * 1e-12,
               100.0 * floor_ms / pointer_ms, (long long)pointer_rows, pointer_differing,
               repeat - 1);
        printf("  short-row index: spart above reads it (%.3f GB instead of %.3f GB: floor %.3f "
               "ms, %.1f%% of it); through the index / through row pointers: %.2fx\n",
               index_bytes * 1e-9, bytes * 1e-9, index_bytes / rate * 1e3,
               100.0 * (index_bytes / rate * 1e3) / spart_ms, spart_ms / pointer_ms);
    }
    if (with_batch) {
        spart_shape eight = one; /* (8, the input's shape) */
        memmove(eight.dims + 1, eight.dims, (size_t)eight.ndim * sizeof(int64_t));
        eight.dims[0] = 8;
        eight.ndim++;
        int batch_differing = 0, spmm_differing[3] = {0, 0, 0};
        double batch_ms =
            time_spart(context, device, x, eight, y, rows * 8, repeat, &batch_differing);
        double batch_bytes = (double)entries * (value_bytes + 4.0) + (double)(rows + 1) * 8.0 +
                             8.0 * ((double)columns * 8.0 + (double)rows * 8.0);
        printf("  %-34s %9.3f ms  (%.3f ms per vector; floor %.3f ms; %d of %d runs differ)\n",
               "spart, eight vectors (one launch)", batch_ms, batch_ms / 8.0,
               batch_bytes / rate * 1e3, batch_differing, repeat - 1);
        const cusparseSpMMAlg_t algorithms[3] = {CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2,
                                                 CUSPARSE_SPMM_CSR_ALG3};
        const char *names[3] = {"cuSPARSE SpMM CSR_ALG1, eight", "cuSPARSE SpMM CSR_ALG2, eight",
                                "cuSPARSE SpMM CSR_ALG3, eight"};
        for (int a = 0; a < 3; a++) {
            double ms = time_cusparse_spmm(handle, host, device, x, y_peer, 8, algorithms[a],
                                           repeat, &spmm_differing[a]);
            print_spmm(names[a], ms, spmm_differing[a], repeat);
            if (row != NULL && ms >= 0.0 && (row->spmm_ms < 0.0 || ms < row->spmm_ms)) {
                row->spmm_ms = ms;
            }
        }
        if (row != NULL) {
            row->batch_ms = batch_ms;
        }
    }
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
    CHECK_CUDA(cudaFree(y_peer));
    spart_regridder_free(device);
}

/* The two ESIS-scale operators of the header's comment, one after the
 * other (each is freed before the next is made). */
static void measure_esis(spart_context *context, cusparseHandle_t handle, double rate, int repeat)
{
    const int64_t entries = 2140000000, forward_length = 2900;
    const int64_t forward_rows = entries / forward_length, columns = (int64_t)1 << 28;
    int64_t *lengths = malloc((size_t)forward_rows * sizeof(int64_t));
    if (lengths == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (int64_t r = 0; r < forward_rows; r++) {
        lengths[r] = forward_length;
    }
    spart_regridder *forward =
        band_regridder(context, forward_rows, columns, lengths, forward_length, 1, 3);
    measure(context, handle, "ESIS-scale forward operator", forward, rate, repeat, 0);
    spart_regridder_free(forward);
    free(lengths);

    /* Shaped as the conservative transpose: as many entries, in rows of 3
     * or 4 (about 3.4 on average, as 2.14e9 / 623e6). */
    const int64_t transpose_rows = 623000000;
    lengths = malloc((size_t)transpose_rows * sizeof(int64_t));
    if (lengths == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    int64_t placed = 0;
    for (int64_t r = 0; r < transpose_rows; r++) {
        int64_t target = (r + 1) * entries / transpose_rows;
        lengths[r] = target - placed;
        placed = target;
    }
    spart_regridder *transpose =
        band_regridder(context, transpose_rows, forward_rows, lengths, 64, 1, 4);
    measure(context, handle, "ESIS-scale conservative transpose (shape)", transpose, rate, repeat,
            0);
    spart_regridder_free(transpose);
    free(lengths);
}

/* Skewed: one row of 4 Mi entries, the others 8 (float64 values, g = 8).
 * With `parts` 1, its two parts as well: the same matrix without its long
 * row (every row 8 entries), and the long row alone among 512 Ki empty
 * rows (the same g, so the same chunk sums), to tell which costs what;
 * with `parts` 2, the long row alone only (for a profiler). The skewed
 * matrix and the one without its long row also take 8 vectors against
 * cuSPARSE SpMM. */
static void measure_skew(spart_context *context, cusparseHandle_t handle, double rate, int repeat,
                         int parts)
{
    int64_t skew_rows = (int64_t)1 << 22;
    int64_t *lengths = malloc((size_t)skew_rows * sizeof(int64_t));
    for (int64_t r = 0; r < skew_rows; r++) {
        lengths[r] = 8;
    }
    lengths[0] = skew_rows;
    spart_regridder *skew = NULL;
    if (parts < 2) {
        skew = band_regridder(context, skew_rows, skew_rows, lengths, 64, 0, 2);
        measure(context, handle, "skew", skew, rate, repeat, 1);
        spart_regridder_free(skew);
    }
    if (parts == 1) {
        lengths[0] = 8;
        skew = band_regridder(context, skew_rows, skew_rows, lengths, 64, 0, 2);
        measure(context, handle, "skew without its long row", skew, rate, repeat, 1);
        spart_regridder_free(skew);
    }
    if (parts > 0) {
        int64_t few_rows = skew_rows / 8;
        for (int64_t r = 0; r < few_rows; r++) {
            lengths[r] = 0;
        }
        lengths[0] = skew_rows;
        skew = band_regridder(context, few_rows, skew_rows, lengths, 64, 0, 2);
        measure(context, handle, "the long row alone (among empty rows)", skew, rate, repeat, 0);
        spart_regridder_free(skew);
    }
    free(lengths);
}

/* The CTIS-shaped operators of the host benchmark (bench_ctis_operators.h:
 * a, the tutorial's forward model; b, its 256 x 256 scene; c, a PSF-folded
 * forward model with rows of up to 4096 entries), float64 values: each
 * forward operator and its exact transpose (the backprojection's pattern;
 * the conservative transpose has the same arrays with other values). */
static void measure_ctis(spart_context *context, cusparseHandle_t handle, double rate, int repeat,
                         const char *only)
{
    for (int k = 0; k < BENCH_CTIS_CASES; k++) {
        const bench_ctis_spec *s = &BENCH_CTIS_SPECS[k];
        if (only != NULL && strcmp(only, s->name) != 0) {
            continue;
        }
        bench_ctis_weights op;
        if (bench_ctis_make_weights(s, &op) != 0) {
            fprintf(stderr, "out of host memory for case %s\n", s->name);
            exit(1);
        }
        spart_weights *weights = NULL;
        spart_regridder *forward = NULL, *transpose = NULL;
        CHECK_SPART(context, bench_ctis_load_weights(context, &op, &weights));
        CHECK_SPART(context, bench_ctis_regridder(context, &op, weights, &forward));
        CHECK_SPART(context, spart_regridder_transpose(context, forward, &transpose));
        char name[160];
        snprintf(name, sizeof name, "CTIS %s, forward (%s)", s->name, s->description);
        measure(context, handle, name, forward, rate, repeat, 1);
        snprintf(name, sizeof name, "CTIS %s, its transpose", s->name);
        measure(context, handle, name, transpose, rate, repeat, 1);
        spart_regridder_free(forward); /* and the transpose it owns */
        spart_weights_free(weights);
        bench_ctis_free_weights(&op);
    }
}

/* The rows measured, in Markdown under their header block (--markdown). */
static void write_markdown(const char *path, int argc, char **argv,
                           const struct cudaDeviceProp *properties, int cusparse_version,
                           double rate, int repeat)
{
    char timing[160];
    snprintf(timing, sizeof timing,
             "median of %d runs after a warm-up, CUDA events; float64 vectors and sums", repeat);
    FILE *out = bench_markdown_open(path, argc, argv, omp_get_max_threads(), timing);
    if (out == NULL) {
        exit(1);
    }
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    fprintf(out,
            "- GPU: %s, %d multiprocessors, %.0f MB L2, %.0f GB; CUDA runtime %d.%d, "
            "driver %d.%d\n",
            properties->name, properties->multiProcessorCount, properties->l2CacheSize / 1e6,
            (double)properties->totalGlobalMem / 1e9, runtime / 1000, runtime % 1000 / 10,
            driver / 1000, driver % 1000 / 10);
    fprintf(out,
            "- peers: cuSPARSE %d (SpMV CSR_ALG1 and CSR_ALG2; SpMM CSR_ALG1-3 for eight "
            "vectors, the best shown) on the same arrays\n",
            cusparse_version);
    fprintf(out,
            "- floor: the bytes a product must move (matrix, x and y once) at the "
            "device-to-device copy rate measured in the same run, %.2f TB/s\n\n",
            rate * 1e-12);
    fprintf(out, "| matrix | rows | entries | values | floor ms | spart ms | cuSPARSE ALG1 ms | "
                 "cuSPARSE ALG2 ms | spart speed-up | spart 8 vectors ms | cuSPARSE SpMM 8 ms |\n");
    bench_markdown_rule(out, 11);
    for (int k = 0; k < markdown_count; k++) {
        const markdown_row *r = &markdown_rows[k];
        double best_peer = r->alg1_ms < r->alg2_ms ? r->alg1_ms : r->alg2_ms;
        fprintf(out, "| %s | %lld | %lld | %s | %.3f | %.3f | %.3f | %.3f | %.2fx |", r->name,
                (long long)r->rows, (long long)r->entries, r->float32 ? "float32" : "float64",
                r->floor_ms, r->spart_ms, r->alg1_ms, r->alg2_ms, best_peer / r->spart_ms);
        if (r->batch_ms >= 0.0) {
            fprintf(out, " %.3f |", r->batch_ms);
        } else {
            fprintf(out, " - |");
        }
        if (r->spmm_ms >= 0.0) {
            fprintf(out, " %.3f |\n", r->spmm_ms);
        } else {
            fprintf(out, " %s |\n", r->batch_ms >= 0.0 ? "refused" : "-");
        }
    }
    fclose(out);
}

int main(int argc, char **argv)
{
    int64_t entries = 100000000, row_length = 2000, columns = (int64_t)1 << 20;
    int repeat = 20, esis = 0, skew_parts = 0, ctis = 0;
    const char *ctis_case = NULL; /* --ctis-case NAME: that CTIS case alone */
    const char *markdown = NULL;  /* --markdown FILE */
    for (int a = 1; a < argc; a++) {
        int has_value = a + 1 < argc;
        if (strcmp(argv[a], "--esis") == 0) {
            esis = 1;
        } else if (strcmp(argv[a], "--skew-parts") == 0) {
            skew_parts = 1;
        } else if (strcmp(argv[a], "--long-row") == 0) {
            skew_parts = 2;
        } else if (strcmp(argv[a], "--ctis") == 0) {
            ctis = 1;
        } else if (has_value && strcmp(argv[a], "--ctis-case") == 0) {
            ctis = 1;
            ctis_case = argv[++a];
        } else if (has_value && strcmp(argv[a], "--markdown") == 0) {
            markdown = argv[++a];
        } else if (has_value && strcmp(argv[a], "--entries") == 0) {
            entries = atoll(argv[++a]);
        } else if (has_value && strcmp(argv[a], "--row-length") == 0) {
            row_length = atoll(argv[++a]);
        } else if (has_value && strcmp(argv[a], "--columns") == 0) {
            columns = atoll(argv[++a]);
        } else if (has_value && strcmp(argv[a], "--repeat") == 0) {
            repeat = atoi(argv[++a]);
        }
    }
    if (repeat < 1 || repeat > 64) {
        repeat = 20;
    }
    spart_context *context = NULL;
    CHECK_SPART(context, spart_context_create(&context));
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    struct cudaDeviceProp properties;
    CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
    printf("device: %s, %d multiprocessors, %.0f MB L2\n", properties.name,
           properties.multiProcessorCount, properties.l2CacheSize / 1e6);
    cusparseHandle_t handle;
    CHECK_CUSPARSE(cusparseCreate(&handle));
    int cusparse_version = 0;
    CHECK_CUSPARSE(cusparseGetVersion(handle, &cusparse_version));
    printf("cuSPARSE %d; median of %d runs after warm-up, CUDA events\n", cusparse_version, repeat);
    double rate = copy_rate(repeat);
    printf("device-to-device copy: %.3f TB/s (bytes read + written)\n", rate * 1e-12);

    if (ctis) {
        measure_ctis(context, handle, rate, repeat, ctis_case);
        if (markdown != NULL) {
            write_markdown(markdown, argc, argv, &properties, cusparse_version, rate, repeat);
        }
        CHECK_CUSPARSE(cusparseDestroy(handle));
        spart_context_free(context);
        return 0;
    }
    if (esis || skew_parts) {
        if (esis) {
            measure_esis(context, handle, rate, repeat);
        } else {
            measure_skew(context, handle, rate, repeat, skew_parts);
        }
        if (markdown != NULL) {
            write_markdown(markdown, argc, argv, &properties, cusparse_version, rate, repeat);
        }
        CHECK_CUSPARSE(cusparseDestroy(handle));
        spart_context_free(context);
        return 0;
    }

    int64_t rows = entries / row_length;
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    for (int64_t r = 0; r < rows; r++) {
        lengths[r] = row_length;
    }
    /* Each row's columns spread over a band of 65536 (one x sector per
     * entry: gathers through L2 dominate), then nearly contiguous (the
     * matrix stream dominates, as in a conservative regridder's rows). */
    spart_regridder *band = band_regridder(context, rows, columns, lengths, 65536, 1, 1);
    measure(context, handle, "band, columns spread over 65536", band, rate, repeat, 1);
    spart_regridder_free(band);
    band = band_regridder(context, rows, columns, lengths, row_length, 1, 1);
    measure(context, handle, "band, columns nearly contiguous", band, rate, repeat, 1);
    spart_regridder_free(band);
    free(lengths);

    /* Short rows of 3 or 4 entries (about 3.4: a conservative transpose's
     * shape, g = 2, the short-row index), columns in a band of 64. */
    int64_t short_rows = entries * 10 / 34;
    lengths = malloc((size_t)short_rows * sizeof(int64_t));
    int64_t placed = 0;
    for (int64_t r = 0; r < short_rows; r++) {
        int64_t target = (r + 1) * entries / short_rows;
        lengths[r] = target - placed;
        placed = target;
    }
    spart_regridder *short_matrix = band_regridder(context, short_rows, columns, lengths, 64, 1, 5);
    measure(context, handle, "short rows of 3-4", short_matrix, rate, repeat, 0);
    spart_regridder_free(short_matrix);
    free(lengths);

    measure_skew(context, handle, rate, repeat, 0);

    if (markdown != NULL) {
        write_markdown(markdown, argc, argv, &properties, cusparse_version, rate, repeat);
    }
    CHECK_CUSPARSE(cusparseDestroy(handle));
    spart_context_free(context);
    return 0;
}
