/*
 * tests/bench/bench_esis_products.c (issue 26, label bench): the products
 * of the ESIS-scale operators over F = 1, 2, 4 and 8 vectors, as the MART
 * frames solve makes them (F frames one after the other in C order), each
 * way side by side in one run:
 *
 *   lone         F one-vector products (the matrix read F times);
 *   as they lie  one product over the F vectors read where they lie
 *                (spart_cuda_csr_product_c_order without tiles: the matrix
 *                read once, each gather a 32-byte sector a vector);
 *   interleaved  the same after x is copied into tiles (2-4 vectors: one
 *                tile of 4, a column's values in one sector; 5-8: a tile
 *                of 8, one 64-byte line), what the library takes for
 *                vectors larger than the L2 cache;
 *   cuSPARSE     SpMV (F = 1) and SpMM (CSR, F > 1) on the same CSR arrays
 *                with int32 row offsets and float32 vectors (cuSPARSE has
 *                no float32 matrix with float64 vectors), so it moves half
 *                the vector bytes spart does;
 *
 * and MART's fused backprojection and update (the backward matrix) over F
 * frames: a pass a frame against 4 frames a pass. Each way's bits are
 * compared with the lone products' (the fused ones with a pass a frame).
 *
 * The matrices: the instrument's forward and backward operators built on
 * the device (params.on_device; by default the whole 1139^2 field of one
 * line, 1/168 of ESIS's triples: 2.6e8 weights a direction) and a
 * synthetic matrix with the forward's rows (the same row lengths) whose
 * columns are drawn uniformly over the forward's columns (no locality:
 * every gather its own sector). The floors: the bytes that must move (the
 * CSR arrays once, x and y of every vector) at the copy rate this program
 * measures, and the same with every gather a whole 32-byte sector of its
 * own (an upper bound of what the gathers move when no two share a
 * sector: F sectors a term as they lie, 1 (F <= 4) or 2 (F = 8)
 * interleaved).
 *
 * Usage: bench_esis_products [--cells N] [--lines L] [--bins B]
 *          [--repeat R] [--no-esis] [--markdown FILE]
 */
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_esis_params.h"
#include "bench_util.h"
#include "device/device_internal.h"
#include "operator/csr_product_designs.h"
#include "operator/regridder_cuda.h"
#include "operator/regridder_internal.h"

#define CHECK_CUSPARSE(call)                                                                       \
    do {                                                                                           \
        cusparseStatus_t check_status = (call);                                                    \
        if (check_status != CUSPARSE_STATUS_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cusparseGetErrorString(check_status));                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { MOST_VECTORS = 8 };
static const int64_t widths[] = {1, 2, 4, 8};
#define NUM_WIDTHS 4

typedef struct options {
    int cells, lines, bins, repeat, esis;
    const char *markdown;
} options;

/* ---- timing ---- */

typedef void (*work)(void *);

/* The best of `repeat` runs of `fn` (after one warm-up), ms by CUDA events
 * on the default stream. */
static double best_ms(work fn, void *args, int repeat)
{
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    fn(args);
    CHECK_CUDA(cudaDeviceSynchronize());
    double best = 1e300;
    for (int k = 0; k < repeat; k++) {
        CHECK_CUDA(cudaEventRecord(start, 0));
        fn(args);
        CHECK_CUDA(cudaEventRecord(stop, 0));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        best = bench_smaller(best, (double)ms);
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return best;
}

/* The device's copy rate (bytes/s, read + written) over 1 GiB. */
static double copy_rate(void)
{
    size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemset(a, 0, bytes));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    double best = 1e300;
    for (int k = 0; k < 6; k++) {
        CHECK_CUDA(cudaEventRecord(start, 0));
        CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        CHECK_CUDA(cudaEventRecord(stop, 0));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (k > 0) {
            best = bench_smaller(best, (double)ms);
        }
    }
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    return 2.0 * (double)bytes / (best * 1e-3);
}

/* ---- device vectors ---- */

static void *device_alloc(size_t bytes)
{
    void *p = NULL;
    CHECK_CUDA(cudaMalloc(&p, bytes > 0 ? bytes : 1));
    return p;
}

/* n values a vector, `count` vectors, each from a shifted view of one
 * host pattern (positive, 0.5 to 1.5). */
static double *device_vectors(int64_t n, int64_t count)
{
    double *host = malloc((size_t)(n + 64 * count) * sizeof(double));
    for (int64_t i = 0; i < n + 64 * count; i++) {
        uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        host[i] = 0.5 + (double)(h >> 11) * (1.0 / 9007199254740992.0);
    }
    double *d = device_alloc((size_t)(n * count) * sizeof(double));
    for (int64_t f = 0; f < count; f++) {
        CHECK_CUDA(cudaMemcpy(d + f * n, host + 64 * f, (size_t)n * sizeof(double),
                              cudaMemcpyHostToDevice));
    }
    free(host);
    return d;
}

/* Whether two device arrays hold the same bits, compared a slice at a
 * time through pinned buffers (the backward's y over 8 vectors is 8 GB
 * at 1/168 of ESIS: through pageable memory its copies took most of a
 * minute). */
static int same_bits(const double *a, const double *b, int64_t n)
{
    const int64_t slice = (int64_t)1 << 25; /* 256 MB */
    void *ha = NULL, *hb = NULL;
    CHECK_CUDA(cudaMallocHost(&ha, (size_t)slice * sizeof(double)));
    CHECK_CUDA(cudaMallocHost(&hb, (size_t)slice * sizeof(double)));
    int same = 1;
    for (int64_t first = 0; first < n && same; first += slice) {
        const size_t bytes = (size_t)(n - first < slice ? n - first : slice) * sizeof(double);
        CHECK_CUDA(cudaMemcpy(ha, a + first, bytes, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(hb, b + first, bytes, cudaMemcpyDeviceToHost));
        same = memcmp(ha, hb, bytes) == 0;
    }
    CHECK_CUDA(cudaFreeHost(ha));
    CHECK_CUDA(cudaFreeHost(hb));
    return same;
}

/* ---- the products ---- */

enum { LONE, AS_THEY_LIE, INTERLEAVED, CUSPARSE, DESIGN };

typedef struct product_run {
    const spart_device_csr *m;
    const spart_device_short_rows *index; /* the one-vector product's, or NULL */
    int way;
    int design; /* DESIGN: spart_cuda_csr_product_tile_design's */
    int64_t vectors;
    const double *x;
    double *y, *x_tiles, *chunk_sums;
    /* cuSPARSE */
    cusparseHandle_t handle;
    cusparseSpMatDescr_t matrix;
    cusparseDnVecDescr_t xv, yv;
    cusparseDnMatDescr_t xm, ym;
    void *buffer;
} product_run;

static void run_product(void *p)
{
    product_run *r = p;
    const spart_device_csr *m = r->m;
    int error = cudaSuccess;
    if (r->way == LONE) {
        for (int64_t f = 0; f < r->vectors && error == cudaSuccess; f++) {
            const double *x = r->x + f * m->num_columns;
            double *y = r->y + f * m->num_rows;
            error = r->index != NULL ? spart_cuda_csr_product_indexed(m, r->index, x, y, NULL)
                                     : spart_cuda_csr_product(m, x, 1, y, r->chunk_sums, NULL);
        }
    } else if (r->way == AS_THEY_LIE || r->way == INTERLEAVED) {
        error = r->vectors == 1
                    ? spart_cuda_csr_product(m, r->x, 1, r->y, r->chunk_sums, NULL)
                    : spart_cuda_csr_product_c_order(m, r->x, r->vectors,
                                                     r->way == INTERLEAVED ? r->x_tiles : NULL,
                                                     r->y, r->chunk_sums, NULL);
    } else if (r->way == DESIGN) {
        error = r->vectors <= 4
                    ? spart_cuda_pack_x4(r->x, m->num_columns, r->vectors, r->x_tiles, NULL)
                    : spart_cuda_pack_tiles(r->x, m->num_columns, r->vectors, r->x_tiles, NULL);
        if (error == cudaSuccess) {
            error = spart_cuda_csr_product_tile_design(m, r->x_tiles, r->vectors, r->y,
                                                       r->chunk_sums, r->design, NULL);
        }
    } else {
        const float alpha = 1.0f, beta = 0.0f;
        if (r->vectors == 1) {
            CHECK_CUSPARSE(cusparseSpMV(r->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                        r->matrix, r->xv, &beta, r->yv, CUDA_R_32F,
                                        CUSPARSE_SPMV_ALG_DEFAULT, r->buffer));
        } else {
            CHECK_CUSPARSE(cusparseSpMM(r->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, r->matrix, r->xm,
                                        &beta, r->ym, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                        r->buffer));
        }
    }
    if (error != cudaSuccess) {
        fprintf(stderr, "product: %s\n", cudaGetErrorString((cudaError_t)error));
        exit(1);
    }
}

/* cuSPARSE's matrix on the same columns and values, with int32 row
 * offsets (NULL when the entries do not fit an int32). */
static cusparseSpMatDescr_t cusparse_matrix(const spart_device_csr *m, int32_t **offsets)
{
    *offsets = NULL;
    if (m->num_entries > INT32_MAX || m->columns32 == NULL || m->values32 == NULL) {
        return NULL;
    }
    int64_t *host64 = malloc((size_t)(m->num_rows + 1) * sizeof(int64_t));
    int32_t *host32 = malloc((size_t)(m->num_rows + 1) * sizeof(int32_t));
    CHECK_CUDA(cudaMemcpy(host64, m->row_ptr, (size_t)(m->num_rows + 1) * sizeof(int64_t),
                          cudaMemcpyDeviceToHost));
    for (int64_t r = 0; r <= m->num_rows; r++) {
        host32[r] = (int32_t)host64[r];
    }
    *offsets = device_alloc((size_t)(m->num_rows + 1) * sizeof(int32_t));
    CHECK_CUDA(cudaMemcpy(*offsets, host32, (size_t)(m->num_rows + 1) * sizeof(int32_t),
                          cudaMemcpyHostToDevice));
    free(host64);
    free(host32);
    cusparseSpMatDescr_t matrix;
    CHECK_CUSPARSE(cusparseCreateCsr(&matrix, m->num_rows, m->num_columns, m->num_entries, *offsets,
                                     (void *)m->columns32, (void *)m->values32, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    return matrix;
}

/* Time cuSPARSE over `vectors` float32 vectors (x32, y32 device). */
static double time_cusparse(cusparseHandle_t handle, cusparseSpMatDescr_t matrix,
                            const spart_device_csr *m, int64_t vectors, float *x32, float *y32,
                            int repeat)
{
    product_run r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.way = CUSPARSE;
    r.vectors = vectors;
    r.handle = handle;
    r.matrix = matrix;
    const float alpha = 1.0f, beta = 0.0f;
    size_t bytes = 0;
    if (vectors == 1) {
        CHECK_CUSPARSE(cusparseCreateDnVec(&r.xv, m->num_columns, x32, CUDA_R_32F));
        CHECK_CUSPARSE(cusparseCreateDnVec(&r.yv, m->num_rows, y32, CUDA_R_32F));
        CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                               matrix, r.xv, &beta, r.yv, CUDA_R_32F,
                                               CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    } else {
        CHECK_CUSPARSE(cusparseCreateDnMat(&r.xm, m->num_columns, vectors, m->num_columns, x32,
                                           CUDA_R_32F, CUSPARSE_ORDER_COL));
        CHECK_CUSPARSE(cusparseCreateDnMat(&r.ym, m->num_rows, vectors, m->num_rows, y32,
                                           CUDA_R_32F, CUSPARSE_ORDER_COL));
        CHECK_CUSPARSE(cusparseSpMM_bufferSize(
            handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
            matrix, r.xm, &beta, r.ym, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    }
    r.buffer = device_alloc(bytes);
    double ms = best_ms(run_product, &r, repeat);
    if (vectors == 1) {
        cusparseDestroyDnVec(r.xv);
        cusparseDestroyDnVec(r.yv);
    } else {
        cusparseDestroyDnMat(r.xm);
        cusparseDestroyDnMat(r.ym);
    }
    CHECK_CUDA(cudaFree(r.buffer));
    return ms;
}

typedef struct report {
    FILE *md;
    double rate; /* bytes/s */
    int repeat;
} report;

static void row(const report *rep, const char *name, int64_t f, const char *way, double ms,
                double floor_bytes, double sector_bytes, const char *bits)
{
    double floor_ms = floor_bytes / rep->rate * 1e3;
    double sector_ms = sector_bytes / rep->rate * 1e3;
    printf("  %-10s F=%lld %-12s %9.3f ms (%7.3f a vector) floor %7.3f ms (%3.0f %%) sectors %7.3f "
           "ms bits %s\n",
           name, (long long)f, way, ms, ms / (double)f, floor_ms, 100.0 * floor_ms / ms, sector_ms,
           bits);
    if (rep->md != NULL) {
        fprintf(rep->md, "| %s | %lld | %s | %.3f | %.3f | %.3f | %.0f %% | %.3f | %s |\n", name,
                (long long)f, way, ms, ms / (double)f, floor_ms, 100.0 * floor_ms / ms, sector_ms,
                bits);
        fflush(rep->md);
    }
    fflush(stdout);
}

/* Every way over F = 1, 2, 4, 8 vectors of `m`. */
static void products_of(const report *rep, const char *name, const spart_device_csr *m,
                        const spart_device_short_rows *index)
{
    const int64_t rows = m->num_rows, cols = m->num_columns, nnz = m->num_entries;
    double *x = device_vectors(cols, MOST_VECTORS);
    double *y_lone = device_alloc((size_t)(rows * MOST_VECTORS) * sizeof(double));
    double *y = device_alloc((size_t)(rows * MOST_VECTORS) * sizeof(double));
    double *x_tiles =
        device_alloc((size_t)spart_device_x_tiles_doubles(MOST_VECTORS, cols) * sizeof(double));
    double *chunk_sums =
        device_alloc((size_t)(m->num_long_chunks * MOST_VECTORS + 1) * sizeof(double));
    float *x32 = device_alloc((size_t)(cols * MOST_VECTORS) * sizeof(float));
    float *y32 = device_alloc((size_t)(rows * MOST_VECTORS) * sizeof(float));
    CHECK_CUDA(cudaMemset(x32, 0, (size_t)(cols * MOST_VECTORS) * sizeof(float)));
    cusparseHandle_t handle = NULL;
    CHECK_CUSPARSE(cusparseCreate(&handle));
    int32_t *offsets = NULL;
    cusparseSpMatDescr_t matrix = cusparse_matrix(m, &offsets);
    const double matrix_bytes = (double)(rows + 1) * 8.0 +
                                (double)nnz * (m->values32 != NULL ? 4.0 : 8.0) +
                                (double)nnz * (m->columns32 != NULL ? 4.0 : 8.0);
    for (int w = 0; w < NUM_WIDTHS; w++) {
        const int64_t f = widths[w];
        const double vectors_bytes = (double)f * (double)(rows + cols) * 8.0;
        const double floor_bytes = matrix_bytes + vectors_bytes;
        product_run r;
        memset(&r, 0, sizeof r);
        r.m = m;
        r.index = index;
        r.way = LONE;
        r.vectors = f;
        r.x = x;
        r.y = y_lone;
        r.x_tiles = x_tiles;
        r.chunk_sums = chunk_sums;
        double ms = best_ms(run_product, &r, rep->repeat);
        /* lone: the matrix F times, a sector a gather */
        row(rep, name, f, "lone", ms, floor_bytes,
            f * (matrix_bytes + (double)nnz * 32.0) + vectors_bytes, "-");
        if (f > 1) {
            r.way = AS_THEY_LIE;
            r.y = y;
            ms = best_ms(run_product, &r, rep->repeat);
            row(rep, name, f, "as they lie", ms, floor_bytes,
                matrix_bytes + (double)nnz * 32.0 * (double)f + vectors_bytes,
                same_bits(y, y_lone, rows * f) ? "equal" : "DIFFER");
            r.way = INTERLEAVED;
            CHECK_CUDA(cudaMemset(y, 0xff, (size_t)(rows * f) * sizeof(double)));
            ms = best_ms(run_product, &r, rep->repeat);
            const double sectors = f <= 4 ? 1.0 : 2.0;
            const double packed = f <= 4 ? 4.0 : 8.0;
            row(rep, name, f, "interleaved", ms, floor_bytes,
                matrix_bytes + (double)nnz * 32.0 * sectors + vectors_bytes +
                    (double)cols * 8.0 * (f + packed) /* the copy into tiles */,
                same_bits(y, y_lone, rows * f) ? "equal" : "DIFFER");
            /* the other shapes of the tiles' kernels (float32, g = 32) */
            for (int design = 1; design <= 2 && m->group_size == 32 && m->values32 != NULL &&
                                 m->columns32 != NULL && (f == 4 || f == 8);
                 design++) {
                r.way = DESIGN;
                r.design = design;
                CHECK_CUDA(cudaMemset(y, 0xff, (size_t)(rows * f) * sizeof(double)));
                ms = best_ms(run_product, &r, rep->repeat);
                char way[32];
                snprintf(way, sizeof way, "design %d", design);
                row(rep, name, f, way, ms, floor_bytes,
                    matrix_bytes + (double)nnz * 32.0 * sectors + vectors_bytes +
                        (double)cols * 8.0 * (f + packed),
                    same_bits(y, y_lone, rows * f) ? "equal" : "DIFFER");
            }
        }
        if (matrix != NULL) {
            ms = time_cusparse(handle, matrix, m, f, x32, y32, rep->repeat);
            row(rep, name, f, "cuSPARSE f32", ms, floor_bytes,
                (f == 1 ? 1.0 : 1.0) * (matrix_bytes + (double)nnz * 32.0 * (double)f) +
                    vectors_bytes / 2.0,
                "-");
        }
    }
    if (matrix != NULL) {
        cusparseDestroySpMat(matrix);
        CHECK_CUDA(cudaFree(offsets));
    }
    cusparseDestroy(handle);
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y_lone));
    CHECK_CUDA(cudaFree(y));
    CHECK_CUDA(cudaFree(x_tiles));
    CHECK_CUDA(cudaFree(chunk_sums));
    CHECK_CUDA(cudaFree(x32));
    CHECK_CUDA(cudaFree(y32));
}

/* ---- MART's fused backprojection and update ---- */

typedef struct update_run {
    const spart_device_csr *m;
    const spart_device_short_rows *index;
    int64_t frames, channels, scene_size;
    const double *images, *observed_back;
    double *scenes;
    int together; /* 0: a pass a frame, 1: 4 frames a pass, 2: the same, images packed */
    double *images_x4;
} update_run;

static void run_update(void *p)
{
    update_run *u = p;
    int error = u->together == 2 ? spart_cuda_mart_backproject_update_frames_packed(
                                       u->m, u->images, u->images_x4, u->observed_back, u->scenes,
                                       u->frames, u->channels, u->scene_size, 1.0, NULL)
                : u->together ? spart_cuda_mart_backproject_update_frames(
                                    u->m, u->images, u->observed_back, u->scenes, u->frames,
                                    u->channels, u->scene_size, 1.0, u->index, NULL, 0, NULL)
                              : spart_cuda_mart_backproject_update_frames_apart(
                                    u->m, u->images, u->observed_back, u->scenes, u->frames,
                                    u->channels, u->scene_size, 1.0, u->index, NULL, 0, NULL);
    if (error != cudaSuccess) {
        fprintf(stderr, "update: %s\n", cudaGetErrorString((cudaError_t)error));
        exit(1);
    }
}

static void updates_of(const report *rep, const spart_device_csr *m,
                       const spart_device_short_rows *index, int64_t channels)
{
    const int64_t rows = m->num_rows, cols = m->num_columns, nnz = m->num_entries;
    const int64_t scene_size = rows / channels;
    double *images = device_vectors(cols, MOST_VECTORS);
    double *observed_back = device_vectors(rows, MOST_VECTORS);
    double *start = device_vectors(scene_size, MOST_VECTORS);
    double *scenes = device_alloc((size_t)(scene_size * MOST_VECTORS) * sizeof(double));
    double *apart = device_alloc((size_t)(scene_size * MOST_VECTORS) * sizeof(double));
    double *images_x4 = device_alloc((size_t)(cols * MOST_VECTORS) * sizeof(double));
    const double matrix_bytes = (double)(rows + 1) * 8.0 +
                                (double)nnz * (m->values32 != NULL ? 4.0 : 8.0) +
                                (double)nnz * (m->columns32 != NULL ? 4.0 : 8.0);
    for (int w = 0; w < NUM_WIDTHS; w++) {
        const int64_t f = widths[w];
        /* images read, observed_back read, scenes read and written */
        const double vectors_bytes =
            (double)f * ((double)cols + (double)rows + 2.0 * scene_size) * 8.0;
        const size_t scene_bytes = (size_t)(scene_size * f) * sizeof(double);
        update_run u = {m,      index,         f,      channels, scene_size,
                        images, observed_back, scenes, 0,        images_x4};
        double ms_apart = best_ms(run_update, &u, rep->repeat);
        CHECK_CUDA(cudaMemcpy(scenes, start, scene_bytes, cudaMemcpyDeviceToDevice));
        run_update(&u);
        CHECK_CUDA(cudaMemcpy(apart, scenes, scene_bytes, cudaMemcpyDeviceToDevice));
        row(rep, "update", f, "a pass a frame", ms_apart, matrix_bytes + vectors_bytes,
            f * (matrix_bytes + (double)nnz * 32.0) + vectors_bytes, "-");
        if (f > 1) {
            u.together = 1;
            double ms = best_ms(run_update, &u, rep->repeat);
            CHECK_CUDA(cudaMemcpy(scenes, start, scene_bytes, cudaMemcpyDeviceToDevice));
            run_update(&u);
            CHECK_CUDA(cudaDeviceSynchronize());
            row(rep, "update", f, "4 frames a pass", ms, matrix_bytes + vectors_bytes,
                (double)((f + 3) / 4) * matrix_bytes + (double)nnz * 32.0 * (double)f +
                    vectors_bytes,
                same_bits(scenes, apart, scene_size * f) ? "equal" : "DIFFER");
            if (m->values32 != NULL && m->columns32 != NULL) {
                u.together = 2;
                ms = best_ms(run_update, &u, rep->repeat);
                CHECK_CUDA(cudaMemcpy(scenes, start, scene_bytes, cudaMemcpyDeviceToDevice));
                run_update(&u);
                CHECK_CUDA(cudaDeviceSynchronize());
                const double tiles = (double)((f + 3) / 4);
                row(rep, "update", f, "4 frames a pass, images packed", ms,
                    matrix_bytes + vectors_bytes,
                    tiles * matrix_bytes + (double)nnz * 32.0 * tiles + vectors_bytes +
                        (double)cols * 8.0 * (f + 4.0 * tiles),
                    same_bits(scenes, apart, scene_size * f) ? "equal" : "DIFFER");
            }
        }
    }
    CHECK_CUDA(cudaFree(images));
    CHECK_CUDA(cudaFree(observed_back));
    CHECK_CUDA(cudaFree(start));
    CHECK_CUDA(cudaFree(scenes));
    CHECK_CUDA(cudaFree(apart));
    CHECK_CUDA(cudaFree(images_x4));
}

/* ---- the synthetic matrix ---- */

/* `forward`'s rows with columns drawn uniformly over its columns and
 * values in (0, 1]: float32 values, int32 columns (device arrays the
 * caller frees through *columns and *values). */
static spart_device_csr synthetic_of(const spart_device_csr *forward, int32_t **columns,
                                     float **values)
{
    const int64_t nnz = forward->num_entries;
    int32_t *hc = malloc((size_t)nnz * sizeof(int32_t));
    float *hv = malloc((size_t)nnz * sizeof(float));
    const uint64_t cols = (uint64_t)forward->num_columns;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nnz; i++) {
        uint64_t h = ((uint64_t)i + 1) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        hc[i] = (int32_t)(h % cols);
        hv[i] = (float)((double)((h >> 40) + 1) / 16777216.0);
    }
    *columns = device_alloc((size_t)nnz * sizeof(int32_t));
    *values = device_alloc((size_t)nnz * sizeof(float));
    CHECK_CUDA(cudaMemcpy(*columns, hc, (size_t)nnz * sizeof(int32_t), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(*values, hv, (size_t)nnz * sizeof(float), cudaMemcpyHostToDevice));
    free(hc);
    free(hv);
    spart_device_csr m = *forward;
    m.columns32 = *columns;
    m.columns64 = NULL;
    m.values32 = *values;
    m.values64 = NULL;
    return m;
}

static void describe(const report *rep, const char *name, const spart_device_csr *m)
{
    printf("%s: %lld rows, %lld columns, %lld entries (%.1f a row), g = %d, %lld long rows\n", name,
           (long long)m->num_rows, (long long)m->num_columns, (long long)m->num_entries,
           m->num_rows > 0 ? (double)m->num_entries / (double)m->num_rows : 0.0, m->group_size,
           (long long)m->num_long_rows);
    if (rep->md != NULL) {
        fprintf(rep->md,
                "- %s: %lld rows, %lld columns, %lld entries (%.1f a row), g = %d, %lld "
                "long rows\n",
                name, (long long)m->num_rows, (long long)m->num_columns, (long long)m->num_entries,
                m->num_rows > 0 ? (double)m->num_entries / (double)m->num_rows : 0.0, m->group_size,
                (long long)m->num_long_rows);
    }
}

static options parse(int argc, char **argv)
{
    options o = {ESIS_CELLS, 1, ESIS_BINS, 5, 1, NULL};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc) {
            o.cells = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--lines") == 0 && i + 1 < argc) {
            o.lines = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--bins") == 0 && i + 1 < argc) {
            o.bins = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            o.repeat = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--markdown") == 0 && i + 1 < argc) {
            o.markdown = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: %s [--cells N] [--lines L] [--bins B] [--repeat R] [--markdown FILE]\n",
                    argv[0]);
            exit(2);
        }
    }
    return o;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run cut short keeps what it printed */
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    CHECK_CUDA(cudaSetDevice(0));
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    report rep = {NULL, copy_rate(), o.repeat};
    if (o.markdown != NULL) {
        rep.md = bench_markdown_open(o.markdown, argc, argv, omp_get_max_threads(),
                                     "one run; each figure the best of --repeat after a warm-up "
                                     "(CUDA events)");
        if (rep.md == NULL) {
            return 1;
        }
        struct cudaDeviceProp prop;
        CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
        int cusparse_version = 0;
        cusparseHandle_t h = NULL;
        CHECK_CUSPARSE(cusparseCreate(&h));
        CHECK_CUSPARSE(cusparseGetVersion(h, &cusparse_version));
        cusparseDestroy(h);
        fprintf(rep.md,
                "- GPU: %s; cuSPARSE %d; copy rate %.0f GB/s (1 GiB device to device, "
                "read + written)\n",
                prop.name, cusparse_version, rep.rate / 1e9);
    }
    printf("copy rate %.0f GB/s\n", rep.rate / 1e9);

    esis_arrays arrays;
    spart_instrument_params params;
    esis_params(context, o.cells, o.lines, o.bins, 0.0, &arrays, &params);
    params.on_device = 1;
    double start = bench_seconds();
    spart_instrument *instrument = NULL;
    CHECK_SPART(context, spart_instrument_create(context, &params, &instrument));
    CHECK_CUDA(cudaDeviceSynchronize());
    const double build = bench_seconds() - start;
    const spart_regridder *forward = spart_instrument_forward(instrument);
    const spart_regridder *backward = spart_instrument_backward(instrument);
    spart_device_csr mf = spart_regridder_device_matrix(forward);
    spart_device_csr mb = spart_regridder_device_matrix(backward);
    spart_device_short_rows fi = {forward->device.short_row_lengths,
                                  forward->device.short_row_starts};
    spart_device_short_rows bi = {backward->device.short_row_lengths,
                                  backward->device.short_row_starts};
    printf("ESIS slice %d lines x %d bins x %d^2 cells (1/%.1f of ESIS), built on the device in "
           "%.2f s\n",
           o.lines, o.bins, o.cells, esis_full_factor(&arrays), build);
    if (rep.md != NULL) {
        fprintf(rep.md,
                "\nESIS slice: %d lines x %d bins x %d^2 cells x 4 channels (1/%.1f of ESIS), "
                "built on the device in %.2f s.\n\n",
                o.lines, o.bins, o.cells, esis_full_factor(&arrays), build);
    }
    int32_t *sc = NULL;
    float *sv = NULL;
    spart_device_csr ms = synthetic_of(&mf, &sc, &sv);
    describe(&rep, "forward", &mf);
    describe(&rep, "backward", &mb);
    describe(&rep, "synthetic", &ms);
    if (rep.md != NULL) {
        fprintf(rep.md, "\nfloor = the CSR arrays once + x and y of every vector at the copy rate; "
                        "sectors = the same with every gather a 32-byte sector of its own (no "
                        "sector shared: an upper bound of the gathers' traffic; F sectors a term "
                        "as they lie, 1 (F <= 4) or 2 (F = 8) interleaved, plus the copy into "
                        "tiles). %% = floor / time. bits: each vector against the lone products "
                        "(the fused update against a pass a frame).\n\n");
        fprintf(rep.md, "| matrix | F | way | ms | ms a vector | floor ms | of floor | sectors "
                        "ms | bits |\n");
        bench_markdown_rule(rep.md, 9);
    }
    products_of(&rep, "forward", &mf, fi.row_lengths != NULL ? &fi : NULL);
    products_of(&rep, "backward", &mb, bi.row_lengths != NULL ? &bi : NULL);
    products_of(&rep, "synthetic", &ms, NULL);
    if (mb.num_long_rows == 0) {
        updates_of(&rep, &mb, bi.row_lengths != NULL ? &bi : NULL,
                   spart_instrument_num_channel(instrument));
    }
    CHECK_CUDA(cudaFree(sc));
    CHECK_CUDA(cudaFree(sv));
    if (rep.md != NULL) {
        fclose(rep.md);
    }
    spart_instrument_free(instrument);
    esis_arrays_free(&arrays);
    spart_context_free(context);
    return 0;
}
