/*
 * tests/bench/bench_cuda_csr_matrix.c: the CSR matrix of spart/csr_matrix.h
 * on one GPU against cuSPARSE on matrices outside the project's own
 * operators: R-MAT power-law graphs (a = 0.57, b = c = 0.19), random
 * columns, a band whose row lengths vary by a factor of three, one row of
 * 3 M entries among 1 M rows of 3. One float64 vector against SpMV
 * CSR_ALG1 and CSR_ALG2 (the deterministic one); eight vectors against
 * SpMM CSR_ALG1-3 (the best shown); the floor is the bytes a product must
 * move at the device-to-device copy rate of the same run. spart reads the
 * caller's device arrays wrapped (int64 row pointers, int32 columns,
 * float64 values); cuSPARSE the same columns and values with int32 row
 * offsets. Runs whose y differs in any bit from the first run's are
 * counted (spart's must be 0).
 *
 *   bench_cuda_csr_matrix [--repeat R] [--quick] [--markdown FILE]
 *
 * --quick: the 2^20 graph, random columns and the skewed matrix alone.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <omp.h>

#include "bench_cuda_peers.h"
#include "bench_util.h"
#include "operator/csr_product_by_row.h"
#include "operator/regridder_internal.h"
#include "spart.h"
#include "spart/csr_matrix.h"

/* A matrix on the host: int64 row pointers, int32 columns, float64 values. */
typedef struct host_csr {
    char name[96];
    int64_t rows, columns, entries, longest;
    int64_t *row_ptr;
    int32_t *column;
    double *value;
} host_csr;

typedef struct result_row {
    char name[96];
    int64_t rows, entries, longest;
    double floor_ms, spart_ms, alg1_ms, alg2_ms;
    int spart_differing, alg1_differing, alg2_differing;
    double floor8_ms, spart8_ms, spmm8_ms;
    double mean_ms, mean8_ms; /* the same arrays with the first plan rule (one g, the mean's) */
    int spmm8_algorithm, spart8_differing;
} result_row;
enum { MAX_ROWS = 16 };
static result_row results[MAX_ROWS];
static int result_count = 0;

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A uniform number in [0, 1) from entry k's draw d (counter-based, so
 * the matrix does not depend on the thread count). */
static double draw(uint64_t seed, int64_t k, int d)
{
    return (double)(mix(seed ^ mix((uint64_t)k * 64 + (uint64_t)d)) >> 11) / 9007199254740992.0;
}

static void finish(host_csr *m, const int64_t *lengths)
{
    m->row_ptr = malloc((size_t)(m->rows + 1) * sizeof(int64_t));
    m->row_ptr[0] = 0;
    m->longest = 0;
    for (int64_t r = 0; r < m->rows; r++) {
        m->row_ptr[r + 1] = m->row_ptr[r] + lengths[r];
        m->longest = lengths[r] > m->longest ? lengths[r] : m->longest;
    }
    m->entries = m->row_ptr[m->rows];
    m->column = malloc((size_t)(m->entries + 1) * sizeof(int32_t));
    m->value = malloc((size_t)(m->entries + 1) * sizeof(double));
}

/* R-MAT: 2^scale rows and columns, edge_factor entries a row on average. */
static host_csr rmat(int scale, int64_t edge_factor)
{
    host_csr m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "R-MAT 2^%d, %lld a row", scale, (long long)edge_factor);
    m.rows = m.columns = (int64_t)1 << scale;
    int64_t edges = m.rows * edge_factor;
    int32_t *row_of = malloc((size_t)edges * sizeof(int32_t));
    int32_t *column_of = malloc((size_t)edges * sizeof(int32_t));
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < edges; e++) {
        uint64_t bits = mix((uint64_t)e * 7919 + 12345);
        int32_t r = 0, c = 0;
        for (int level = 0; level < scale; level++) {
            if (level % 2 == 0 && level > 0) {
                bits = mix(bits);
            }
            double u = (double)((bits >> (level % 2 == 0 ? 0 : 32)) & 0xffffffffu) / 4294967296.0;
            int down = u >= 0.76;
            int right = (u >= 0.57 && u < 0.76) || u >= 0.95;
            r = 2 * r + down;
            c = 2 * c + right;
        }
        row_of[e] = r;
        column_of[e] = c;
    }
    int64_t *lengths = calloc((size_t)m.rows, sizeof(int64_t));
    for (int64_t e = 0; e < edges; e++) {
        lengths[row_of[e]]++;
    }
    finish(&m, lengths);
    int64_t *cursor = malloc((size_t)m.rows * sizeof(int64_t));
    memcpy(cursor, m.row_ptr, (size_t)m.rows * sizeof(int64_t));
    for (int64_t e = 0; e < edges; e++) {
        int64_t at = cursor[row_of[e]]++;
        m.column[at] = column_of[e];
        m.value[at] = 0.5 + draw(7, e, 0);
    }
    free(cursor);
    free(lengths);
    free(row_of);
    free(column_of);
    return m;
}

/* Rows of given lengths; columns random (band = 0) or contiguous from
 * the row's diagonal position. */
static host_csr of_lengths(const char *name, int64_t rows, int64_t columns, int64_t *lengths,
                           int band)
{
    host_csr m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name);
    m.rows = rows;
    m.columns = columns;
    finish(&m, lengths);
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t r = 0; r < rows; r++) {
        int64_t first = band ? (int64_t)((double)r / (double)rows * (double)(columns - 64)) : 0;
        for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; k++) {
            int64_t offset = k - m.row_ptr[r];
            m.column[k] =
                (int32_t)(band ? first + offset : (int64_t)(draw(3, k, 0) * (double)columns));
            m.value[k] = 0.5 + draw(5, k, 1);
        }
    }
    return m;
}

static host_csr random_columns(int64_t rows, int64_t per_row)
{
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    for (int64_t r = 0; r < rows; r++) {
        lengths[r] = per_row;
    }
    host_csr m = of_lengths("random columns, 8 a row", rows, rows, lengths, 0);
    free(lengths);
    return m;
}

static host_csr band(int64_t rows)
{
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    for (int64_t r = 0; r < rows; r++) {
        lengths[r] = 12 + (int64_t)(draw(11, r, 0) * 24.0); /* 12 to 35 */
    }
    host_csr m = of_lengths("band, rows of 12 to 35", rows, rows, lengths, 1);
    free(lengths);
    return m;
}

static host_csr skewed(void)
{
    int64_t rows = (int64_t)1 << 20;
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    for (int64_t r = 0; r < rows; r++) {
        lengths[r] = 3;
    }
    lengths[rows / 2] = 3000000;
    host_csr m = of_lengths("skewed: one row of 3 M among 1 M rows of 3", rows, rows, lengths, 0);
    free(lengths);
    return m;
}

static void host_free(host_csr *m)
{
    free(m->row_ptr);
    free(m->column);
    free(m->value);
}

/* One timed operation, with the bits of its y compared run to run. */
typedef void (*operation)(void *state);

static double time_operation(operation op, void *state, double *y_device, int64_t n, int repeat,
                             int *differing)
{
    timer t;
    CHECK_CUDA(cudaEventCreate(&t.start));
    CHECK_CUDA(cudaEventCreate(&t.stop));
    double times[64];
    double *first = malloc((size_t)n * sizeof(double));
    double *latest = malloc((size_t)n * sizeof(double));
    *differing = 0;
    for (int run = -3; run < repeat; run++) {
        CHECK_CUDA(cudaEventRecord(t.start, 0));
        op(state);
        CHECK_CUDA(cudaEventRecord(t.stop, 0));
        double ms = elapsed_ms(&t);
        if (run < 0) {
            continue;
        }
        times[run] = ms;
        CHECK_CUDA(cudaMemcpy(run == 0 ? first : latest, y_device, (size_t)n * sizeof(double),
                              cudaMemcpyDeviceToHost));
        if (run > 0 && memcmp(first, latest, (size_t)n * sizeof(double)) != 0) {
            (*differing)++;
        }
        CHECK_CUDA(cudaMemset(y_device, 0xff, (size_t)n * sizeof(double)));
    }
    CHECK_CUDA(cudaEventDestroy(t.start));
    CHECK_CUDA(cudaEventDestroy(t.stop));
    free(first);
    free(latest);
    return bench_median(times, repeat);
}

typedef struct spart_state {
    spart_context *context;
    spart_csr_matrix *matrix;
    spart_csr_product product;
    const double *x;
    double *y;
    void *workspace;
    size_t bytes;
} spart_state;

static void run_spart(void *state)
{
    spart_state *s = state;
    CHECK_SPART(s->context,
                spart_csr_matrix_multiply_workspace(s->context, s->matrix, &s->product, s->x, s->y,
                                                    s->workspace, s->bytes));
}

/* The first rule's product: a regridder of the same arrays with one g
 * from the mean row length (as every matrix had before the plan by row). */
typedef struct mean_state {
    spart_context *context;
    spart_regridder *device;
    spart_array x;
    double *y;
    int64_t size_y;
    void *workspace;
    size_t bytes;
} mean_state;

static void run_mean(void *state)
{
    mean_state *s = state;
    CHECK_SPART(s->context, spart_regridder_apply_workspace(s->context, s->device, &s->x, s->y,
                                                            s->size_y, s->workspace, s->bytes));
}

static void time_mean_rule(spart_context *context, const spart_csr_arrays *device_arrays,
                           const host_csr *m, const double *x, double *y, int width, int repeat,
                           result_row *row)
{
    spart_csr_arrays arrays = *device_arrays;
    arrays.row_ptr = m->row_ptr;
    arrays.columns = m->column;
    arrays.values = m->value;
    arrays.on_device = 0;
    spart_csr_matrix_options options;
    spart_csr_matrix_options_init(&options);
    options.wrap = 1;
    spart_csr_matrix *host = NULL;
    CHECK_SPART(context, spart_csr_matrix_create(context, &arrays, &options, &host));
    spart_regridder *regridder = spart_csr_matrix_regridder(host);
    regridder->plan = spart_plan_product(&regridder->csr); /* the mean's g */
    mean_state s;
    memset(&s, 0, sizeof s);
    s.context = context;
    CHECK_SPART(context, spart_regridder_to_device(context, regridder, &s.device));
    spart_csr_matrix_free(host);
    s.y = y;
    for (int batch = 0; batch < 2; batch++) {
        int64_t vectors = batch ? width : 1;
        s.x.data = x;
        s.x.shape.ndim = 2;
        s.x.shape.dims[0] = vectors;
        s.x.shape.dims[1] = m->columns;
        s.size_y = vectors * m->rows;
        CHECK_SPART(context,
                    spart_regridder_workspace_size(context, s.device, &s.x.shape, &s.bytes));
        s.workspace = NULL;
        if (s.bytes > 0) {
            CHECK_CUDA(cudaMalloc(&s.workspace, s.bytes));
        }
        int differing = 0;
        double ms = time_operation(run_mean, &s, y, s.size_y, repeat, &differing);
        *(batch ? &row->mean8_ms : &row->mean_ms) = ms;
        CHECK_CUDA(cudaFree(s.workspace));
    }
    spart_regridder_free(s.device);
}

typedef struct spmv_state {
    cusparseHandle_t handle;
    cusparseSpMatDescr_t matrix;
    cusparseDnVecDescr_t x, y;
    cusparseDnMatDescr_t xm, ym;
    cusparseSpMVAlg_t spmv;
    cusparseSpMMAlg_t spmm;
    void *buffer;
} spmv_state;

static void run_spmv(void *state)
{
    spmv_state *s = state;
    double alpha = 1.0, beta = 0.0;
    CHECK_CUSPARSE(cusparseSpMV(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s->matrix,
                                s->x, &beta, s->y, CUDA_R_64F, s->spmv, s->buffer));
}

static void run_spmm(void *state)
{
    spmv_state *s = state;
    double alpha = 1.0, beta = 0.0;
    CHECK_CUSPARSE(cusparseSpMM(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s->matrix, s->xm, &beta,
                                s->ym, CUDA_R_64F, s->spmm, s->buffer));
}

static void *upload(const void *host, size_t bytes)
{
    void *device = NULL;
    CHECK_CUDA(cudaMalloc(&device, bytes > 0 ? bytes : 1));
    CHECK_CUDA(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    return device;
}

static void measure(spart_context *context, cusparseHandle_t handle, host_csr *m, double rate,
                    int repeat)
{
    result_row *row = &results[result_count++];
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", m->name);
    row->rows = m->rows;
    row->entries = m->entries;
    row->longest = m->longest;
    const int width = 8;
    int64_t *row_ptr = upload(m->row_ptr, (size_t)(m->rows + 1) * sizeof(int64_t));
    int32_t *columns = upload(m->column, (size_t)m->entries * sizeof(int32_t));
    double *values = upload(m->value, (size_t)m->entries * sizeof(double));
    int32_t *offsets32 = malloc((size_t)(m->rows + 1) * sizeof(int32_t));
    for (int64_t r = 0; r <= m->rows; r++) {
        offsets32[r] = (int32_t)m->row_ptr[r];
    }
    int32_t *offsets = upload(offsets32, (size_t)(m->rows + 1) * sizeof(int32_t));
    free(offsets32);
    double *x_host = malloc((size_t)(m->columns * width) * sizeof(double));
    for (int64_t k = 0; k < m->columns * width; k++) {
        x_host[k] = draw(13, k, 0) - 0.5;
    }
    double *x = upload(x_host, (size_t)(m->columns * width) * sizeof(double));
    free(x_host);
    double *y = NULL;
    CHECK_CUDA(cudaMalloc((void **)&y, (size_t)(m->rows * width) * sizeof(double)));

    /* spart, wrapped */
    spart_csr_arrays arrays;
    memset(&arrays, 0, sizeof arrays);
    arrays.num_rows = m->rows;
    arrays.num_columns = m->columns;
    arrays.num_entries = m->entries;
    arrays.row_ptr = row_ptr;
    arrays.row_ptr_type = SPART_INT64;
    arrays.columns = columns;
    arrays.column_type = SPART_INT32;
    arrays.values = values;
    arrays.value_type = SPART_FLOAT64;
    arrays.on_device = 1;
    spart_csr_matrix_options options;
    spart_csr_matrix_options_init(&options);
    options.wrap = 1;
    spart_state s;
    memset(&s, 0, sizeof s);
    s.context = context;
    CHECK_SPART(context, spart_csr_matrix_create(context, &arrays, &options, &s.matrix));
    s.x = x;
    s.y = y;
    for (int batch = 0; batch < 2; batch++) {
        spart_csr_product_init(&s.product);
        s.product.num_vectors = batch ? width : 1;
        CHECK_SPART(context,
                    spart_csr_matrix_workspace_size(context, s.matrix, &s.product, &s.bytes));
        s.workspace = NULL;
        if (s.bytes > 0) {
            CHECK_CUDA(cudaMalloc(&s.workspace, s.bytes));
        }
        int differing = 0;
        double ms =
            time_operation(run_spart, &s, y, m->rows * s.product.num_vectors, repeat, &differing);
        if (batch) {
            row->spart8_ms = ms;
            row->spart8_differing = differing;
        } else {
            row->spart_ms = ms;
            row->spart_differing = differing;
        }
        CHECK_CUDA(cudaFree(s.workspace));
    }
    spart_csr_matrix_free(s.matrix);
    time_mean_rule(context, &arrays, m, x, y, width, repeat, row);

    /* cuSPARSE */
    spmv_state c;
    memset(&c, 0, sizeof c);
    c.handle = handle;
    CHECK_CUSPARSE(cusparseCreateCsr(&c.matrix, m->rows, m->columns, m->entries, offsets, columns,
                                     values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&c.x, m->columns, x, CUDA_R_64F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&c.y, m->rows, y, CUDA_R_64F));
    const cusparseSpMVAlg_t spmv[2] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};
    double alpha = 1.0, beta = 0.0;
    for (int a = 0; a < 2; a++) {
        size_t bytes = 0;
        c.spmv = spmv[a];
        CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                               c.matrix, c.x, &beta, c.y, CUDA_R_64F, c.spmv,
                                               &bytes));
        CHECK_CUDA(cudaMalloc(&c.buffer, bytes > 0 ? bytes : 1));
        int differing = 0;
        double ms = time_operation(run_spmv, &c, y, m->rows, repeat, &differing);
        if (a == 0) {
            row->alg1_ms = ms;
            row->alg1_differing = differing;
        } else {
            row->alg2_ms = ms;
            row->alg2_differing = differing;
        }
        CHECK_CUDA(cudaFree(c.buffer));
    }
    CHECK_CUSPARSE(cusparseCreateDnMat(&c.xm, m->columns, width, m->columns, x, CUDA_R_64F,
                                       CUSPARSE_ORDER_COL));
    CHECK_CUSPARSE(
        cusparseCreateDnMat(&c.ym, m->rows, width, m->rows, y, CUDA_R_64F, CUSPARSE_ORDER_COL));
    const cusparseSpMMAlg_t spmm[3] = {CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2,
                                       CUSPARSE_SPMM_CSR_ALG3};
    row->spmm8_ms = -1.0;
    for (int a = 0; a < 3; a++) {
        size_t bytes = 0;
        c.spmm = spmm[a];
        cusparseStatus_t status = cusparseSpMM_bufferSize(
            handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
            c.matrix, c.xm, &beta, c.ym, CUDA_R_64F, c.spmm, &bytes);
        if (status != CUSPARSE_STATUS_SUCCESS) {
            continue;
        }
        CHECK_CUDA(cudaMalloc(&c.buffer, bytes > 0 ? bytes : 1));
        status =
            cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                         &alpha, c.matrix, c.xm, &beta, c.ym, CUDA_R_64F, c.spmm, c.buffer);
        if (status == CUSPARSE_STATUS_SUCCESS) {
            int differing = 0;
            double ms = time_operation(run_spmm, &c, y, m->rows * width, repeat, &differing);
            if (row->spmm8_ms < 0.0 || ms < row->spmm8_ms) {
                row->spmm8_ms = ms;
                row->spmm8_algorithm = a + 1;
            }
        }
        CHECK_CUDA(cudaFree(c.buffer));
    }
    CHECK_CUSPARSE(cusparseDestroyDnMat(c.xm));
    CHECK_CUSPARSE(cusparseDestroyDnMat(c.ym));
    CHECK_CUSPARSE(cusparseDestroyDnVec(c.x));
    CHECK_CUSPARSE(cusparseDestroyDnVec(c.y));
    CHECK_CUSPARSE(cusparseDestroySpMat(c.matrix));

    /* the floor: row pointers (int32, the least a product reads), columns,
     * values, x and y once */
    double matrix_bytes = 4.0 * (double)(m->rows + 1) + 12.0 * (double)m->entries;
    row->floor_ms = (matrix_bytes + 8.0 * (double)(m->columns + m->rows)) / rate * 1e3;
    row->floor8_ms = (matrix_bytes + 64.0 * (double)(m->columns + m->rows)) / rate * 1e3;
    printf("%-44s spart %.3f ms (%d differ; mean rule %.3f), ALG1 %.3f (%d), ALG2 "
           "%.3f (%d), "
           "floor %.3f; 8 vectors: spart %.3f (%d; mean rule %.3f), SpMM ALG%d %.3f, floor "
           "%.3f\n",
           row->name, row->spart_ms, row->spart_differing, row->mean_ms, row->alg1_ms,
           row->alg1_differing, row->alg2_ms, row->alg2_differing, row->floor_ms, row->spart8_ms,
           row->spart8_differing, row->mean8_ms, row->spmm8_algorithm, row->spmm8_ms,
           row->floor8_ms);
    fflush(stdout);
    CHECK_CUDA(cudaFree(row_ptr));
    CHECK_CUDA(cudaFree(columns));
    CHECK_CUDA(cudaFree(values));
    CHECK_CUDA(cudaFree(offsets));
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
}

static void write_markdown(const char *path, int argc, char **argv, double rate, int repeat,
                           int cusparse_version)
{
    char timing[160];
    snprintf(timing, sizeof timing,
             "median of %d runs after 3 warm-ups, CUDA events; float64 values, vectors and sums",
             repeat);
    FILE *out = bench_markdown_open(path, argc, argv, omp_get_max_threads(), timing);
    if (out == NULL) {
        exit(1);
    }
    struct cudaDeviceProp properties;
    CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    fprintf(out, "- GPU: %s, %d multiprocessors; CUDA runtime %d.%d, driver %d.%d\n",
            properties.name, properties.multiProcessorCount, runtime / 1000, runtime % 1000 / 10,
            driver / 1000, driver % 1000 / 10);
    fprintf(out,
            "- peers: cuSPARSE %d, SpMV CSR_ALG1 and CSR_ALG2 (deterministic), SpMM CSR_ALG1-3 "
            "for eight vectors (the best); int32 offsets, the same columns and values\n",
            cusparse_version);
    fprintf(out,
            "- floor: int32 row offsets, columns, values, x and y once at the copy rate of "
            "this run, %.2f TB/s; 'differ': runs (of %d) whose y differs from the first run's\n\n",
            rate * 1e-12, repeat);
    fprintf(out, "| matrix | rows | entries | longest row | floor ms | spart ms | "
                 "spart, mean's g ms | ALG1 ms | ALG2 ms | spart vs ALG2 | spart vs ALG1 | "
                 "differ spart/ALG1/ALG2 "
                 "| floor 8 ms | spart 8 ms | spart 8, mean's g ms | best SpMM 8 ms | spart vs "
                 "SpMM |\n");
    bench_markdown_rule(out, 17);
    for (int k = 0; k < result_count; k++) {
        const result_row *r = &results[k];
        fprintf(out,
                "| %s | %lld | %lld | %lld | %.3f | %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx | "
                "%d/%d/%d | %.3f | %.3f | %.3f | %.3f (ALG%d) | %.2fx |\n",
                r->name, (long long)r->rows, (long long)r->entries, (long long)r->longest,
                r->floor_ms, r->spart_ms, r->mean_ms, r->alg1_ms, r->alg2_ms,
                r->alg2_ms / r->spart_ms, r->alg1_ms / r->spart_ms, r->spart_differing,
                r->alg1_differing, r->alg2_differing, r->floor8_ms, r->spart8_ms, r->mean8_ms,
                r->spmm8_ms, r->spmm8_algorithm, r->spmm8_ms / r->spart8_ms);
    }
    fclose(out);
}

int main(int argc, char **argv)
{
    int repeat = 10, quick = 0;
    const char *markdown = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--repeat") == 0 && a + 1 < argc) {
            repeat = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[a], "--markdown") == 0 && a + 1 < argc) {
            markdown = argv[++a];
        } else {
            fprintf(stderr, "usage: %s [--repeat R] [--quick] [--markdown FILE]\n", argv[0]);
            return 2;
        }
    }
    repeat = repeat < 1 ? 1 : repeat > 64 ? 64 : repeat;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    cusparseHandle_t handle;
    CHECK_CUSPARSE(cusparseCreate(&handle));
    int cusparse_version = 0;
    CHECK_CUSPARSE(cusparseGetVersion(handle, &cusparse_version));
    double rate = copy_rate(repeat);
    printf("copy rate %.2f TB/s\n", rate * 1e-12);
    for (int k = 0; k < 6; k++) {
        if (quick && (k == 1 || k == 3 || k == 5)) {
            continue;
        }
        double start = bench_seconds();
        host_csr m = k == 0   ? rmat(20, 16)
                     : k == 1 ? rmat(22, 8)
                     : k == 2 ? random_columns((int64_t)1 << 22, 8)
                     : k == 3 ? band((int64_t)1 << 22)
                     : k == 4 ? skewed()
                              : rmat(21, 32);
        printf("(made in %.1f s) ", bench_seconds() - start);
        measure(context, handle, &m, rate, repeat);
        host_free(&m);
        if (markdown != NULL) { /* after each matrix: what is measured survives a time limit */
            write_markdown(markdown, argc, argv, rate, repeat, cusparse_version);
        }
    }
    CHECK_CUSPARSE(cusparseDestroy(handle));
    spart_context_free(context);
    return 0;
}
