/*
 * tests/bench/bench_cuda_vcs.c: the VCS products on one GPU against
 * cuSPARSE SpMM on the expanded, column-sorted CSR of Delta (float32
 * values, int32 indices) plus the same rank-1 term (cuBLAS: o^T B by a
 * GEMV and a rank-1 update for A @ B; B 1 and the update for B @ A), and
 * the floor (the bytes a product must read and write at the
 * device-to-device copy rate measured in the same run).
 *
 * Shapes: 60,000 x 2,000 at density 0.05 (about 6 M entries) and 200,000
 * x 3,000 at 0.02; --large adds 1,000,000 x 5,000 at 0.02 (about 100 M).
 * --shape K runs shape K alone. Counts 1..7 with a skew (tests/unit/vcs_test_data.h). Width 16,
 * float32 B, recipes parafac2 (g a nonzero) and cp10k_log1p (g once a run by rows). For B @ A
 * cuSPARSE takes the CSR of Delta transposed (opA = T) and, as a second peer, the CSR of Delta^T
 * (an extra copy).
 *
 * spart's device matrix holds both groupings (all four directions): VCSR @
 * B and VCSC @ B walk the same grouping (by rows), as B @ VCSR and B @ VCSC
 * do (by columns), so their times are one measurement each (the walk is the
 * same on a matrix holding that grouping alone).
 * The table gives the bytes each direction needs on the device (its
 * format's grouping alone where that is the output's, else both) and of
 * both against the float32 CSR (int32 row pointers). Times: --repeat calls back to back after a
 * warm-up, timed by CUDA events on the stream (each side only enqueues), the mean shown. Exits 77
 * without a device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <omp.h>

#include "bench_cuda_peers.h"
#include "bench_util.h"
#include "spart/vcs.h"
#include "vcs_test_data.h"

#define CHECK_CUBLAS(call)                                                                         \
    do {                                                                                           \
        if ((call) != CUBLAS_STATUS_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct row {
    char shape[64];
    const char *recipe;
    const char *direction;
    int64_t nnz;
    double floor_ms, spart_ms, peer_ms, peer_t_ms;
    double bytes_needed, bytes_both, csr_bytes;
} row;

static row rows_out[64];
static int n_rows_out = 0;
static int only_recipe = -1; /* --recipe K: recipes[K] alone */

static void *to_device(const void *host, size_t bytes)
{
    void *d = NULL;
    CHECK_CUDA(cudaMalloc(&d, bytes > 0 ? bytes : 1));
    if (bytes > 0) {
        CHECK_CUDA(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    }
    return d;
}

/* The float32 CSR of Delta (or of Delta^T) on the device, int32 indices. */
typedef struct device_csr {
    int64_t rows, cols, nnz;
    int32_t *row_ptr, *col_idx;
    float *values;
} device_csr;

static device_csr csr_of_delta(spart_context *context, const spart_vcs *view)
{
    device_csr c;
    int64_t nnz;
    CHECK_SPART(context, spart_vcs_shape(view, &c.rows, &c.cols, &nnz, NULL));
    c.nnz = nnz;
    int64_t *row_ptr = malloc((size_t)(c.rows + 1) * sizeof(int64_t));
    int64_t *col_idx = malloc((size_t)(nnz + 1) * sizeof(int64_t));
    double *values = malloc((size_t)(nnz + 1) * sizeof(double));
    double *delta = malloc((size_t)(nnz + 1) * sizeof(double));
    CHECK_SPART(context, spart_vcs_to_csr(context, view, row_ptr, col_idx, values, delta));
    int32_t *rp = malloc((size_t)(c.rows + 1) * sizeof(int32_t));
    int32_t *ci = malloc((size_t)(nnz + 1) * sizeof(int32_t));
    float *v = malloc((size_t)(nnz + 1) * sizeof(float));
    for (int64_t i = 0; i <= c.rows; i++) {
        rp[i] = (int32_t)row_ptr[i];
    }
    for (int64_t k = 0; k < nnz; k++) {
        ci[k] = (int32_t)col_idx[k];
        v[k] = (float)delta[k];
    }
    c.row_ptr = to_device(rp, (size_t)(c.rows + 1) * sizeof(int32_t));
    c.col_idx = to_device(ci, (size_t)nnz * sizeof(int32_t));
    c.values = to_device(v, (size_t)nnz * sizeof(float));
    free(row_ptr), free(col_idx), free(values), free(delta), free(rp), free(ci), free(v);
    return c;
}

static void csr_free(device_csr *c)
{
    cudaFree(c->row_ptr), cudaFree(c->col_idx), cudaFree(c->values);
}

/* cuSPARSE SpMM (the best algorithm that accepts the case) plus the rank-1
 * term. a_times_b: C (m x w, row-major) = A B + 1 (o^T B), A = csr
 * (opA N), B (k x w row-major). Else C = B A as C^T = op(A) B^T in
 * column-major views: transposed = 1: A = csr of Delta with opA = T;
 * transposed = 0: A = csr of Delta^T, opA = N. */
static double time_peer(cusparseHandle_t sp, cublasHandle_t bl, const device_csr *csr,
                        int a_times_b, int transposed, const float *b, float *c,
                        const float *offset, const float *ones, float *v, int64_t width, int repeat)
{
    cusparseSpMatDescr_t a;
    CHECK_CUSPARSE(cusparseCreateCsr(&a, csr->rows, csr->cols, csr->nnz, csr->row_ptr, csr->col_idx,
                                     csr->values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    const cusparseOperation_t op =
        transposed ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    const int64_t out_rows = transposed ? csr->cols : csr->rows;
    const int64_t in_rows = transposed ? csr->rows : csr->cols;
    cusparseDnMatDescr_t bd, cd;
    if (a_times_b) {
        CHECK_CUSPARSE(cusparseCreateDnMat(&bd, in_rows, width, width, (void *)b, CUDA_R_32F,
                                           CUSPARSE_ORDER_ROW));
        CHECK_CUSPARSE(
            cusparseCreateDnMat(&cd, out_rows, width, width, c, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    } else { /* B^T and C^T as column-major views of the row-major arrays */
        CHECK_CUSPARSE(cusparseCreateDnMat(&bd, in_rows, width, in_rows, (void *)b, CUDA_R_32F,
                                           CUSPARSE_ORDER_COL));
        CHECK_CUSPARSE(
            cusparseCreateDnMat(&cd, out_rows, width, out_rows, c, CUDA_R_32F, CUSPARSE_ORDER_COL));
    }
    const float one = 1.0f, zero = 0.0f;
    const cusparseSpMMAlg_t algorithms[4] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1,
                                             CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
    double best = -1.0;
    double *times = malloc((size_t)repeat * sizeof(double));
    for (int alg = 0; alg < 4; alg++) {
        size_t bytes = 0;
        if (cusparseSpMM_bufferSize(sp, op, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, bd, &zero,
                                    cd, CUDA_R_32F, algorithms[alg],
                                    &bytes) != CUSPARSE_STATUS_SUCCESS) {
            continue;
        }
        void *buffer = NULL;
        CHECK_CUDA(cudaMalloc(&buffer, bytes > 0 ? bytes : 1));
        int ok = 1;
        cudaEvent_t start, stop;
        CHECK_CUDA(cudaEventCreate(&start));
        CHECK_CUDA(cudaEventCreate(&stop));
        for (int r = -1; r < repeat && ok; r++) {
            if (r == 0) {
                CHECK_CUDA(cudaDeviceSynchronize());
                CHECK_CUDA(cudaEventRecord(start, 0));
            }
            ok = cusparseSpMM(sp, op, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, bd, &zero, cd,
                              CUDA_R_32F, algorithms[alg], buffer) == CUSPARSE_STATUS_SUCCESS;
            if (a_times_b) { /* v = B^T o (B^T is w x k column-major), C^T += v 1^T */
                CHECK_CUBLAS(cublasSgemv(bl, CUBLAS_OP_N, (int)width, (int)in_rows, &one, b,
                                         (int)width, offset, 1, &zero, v, 1));
                CHECK_CUBLAS(
                    cublasSger(bl, (int)width, (int)out_rows, &one, v, 1, ones, 1, c, (int)width));
            } else { /* v = B 1 (B^T is in_rows x w column-major), C^T += o v^T */
                CHECK_CUBLAS(cublasSgemv(bl, CUBLAS_OP_T, (int)in_rows, (int)width, &one, b,
                                         (int)in_rows, ones, 1, &zero, v, 1));
                CHECK_CUBLAS(cublasSger(bl, (int)out_rows, (int)width, &one, offset, 1, v, 1, c,
                                        (int)out_rows));
            }
        }
        CHECK_CUDA(cudaEventRecord(stop, 0));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float elapsed = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&elapsed, start, stop));
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        times[0] = (double)elapsed / repeat * 1e-3;
        if (ok) {
            const double ms = 1e3 * times[0];
            best = best < 0.0 || ms < best ? ms : best;
        }
        cudaFree(buffer);
    }
    free(times);
    cusparseDestroySpMat(a);
    cusparseDestroyDnMat(bd);
    cusparseDestroyDnMat(cd);
    return best;
}

static double time_spart(spart_context *context, const spart_vcs *device,
                         spart_vcs_direction direction, int64_t width, const float *b, float *c,
                         int repeat)
{
    size_t bytes = 0;
    CHECK_SPART(context, spart_vcs_workspace_size(context, device, direction, width, &bytes));
    void *workspace = NULL;
    CHECK_CUDA(cudaMalloc(&workspace, bytes));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_SPART(context, spart_vcs_multiply_workspace(context, device, direction, width, 1, b, c,
                                                      workspace, bytes));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaEventRecord(start, 0));
    for (int r = 0; r < repeat; r++) {
        CHECK_SPART(context, spart_vcs_multiply_workspace(context, device, direction, width, 1, b,
                                                          c, workspace, bytes));
    }
    CHECK_CUDA(cudaEventRecord(stop, 0));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(workspace);
    return (double)ms / repeat;
}

static void measure_shape(spart_context *context, cusparseHandle_t sp, cublasHandle_t bl,
                          int64_t n_rows, int64_t n_cols, double density, int64_t width, int repeat,
                          double rate)
{
    int64_t nnz, *rows, *cols;
    double *values;
    const double t0 = bench_seconds();
    vcs_random_counts(n_rows, n_cols, density, 12345, &nnz, &rows, &cols, &values);
    fprintf(stderr, "%lld x %lld: %lld entries generated in %.1f s\n", (long long)n_rows,
            (long long)n_cols, (long long)nnz, bench_seconds() - t0);
    const spart_vcs_recipe recipes[2] = {SPART_VCS_PARAFAC2, SPART_VCS_CP10K_LOG1P};
    const char *recipe_names[2] = {"parafac2", "cp10k_log1p"};
    float *b_host =
        malloc((size_t)(n_rows > n_cols ? n_rows : n_cols) * (size_t)width * sizeof(float));
    uint64_t state = 7;
    for (int64_t k = 0; k < (n_rows > n_cols ? n_rows : n_cols) * width; k++) {
        b_host[k] = (float)(2.0 * vcs_uniform(&state) - 1.0);
    }
    const size_t big = (size_t)(n_rows > n_cols ? n_rows : n_cols);
    float *b = to_device(b_host, big * (size_t)width * sizeof(float));
    float *c = NULL, *v = NULL, *ones = NULL;
    CHECK_CUDA(cudaMalloc((void **)&c, big * (size_t)width * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&v, (size_t)width * sizeof(float)));
    float *ones_host = malloc(big * sizeof(float));
    for (size_t k = 0; k < big; k++) {
        ones_host[k] = 1.0f;
    }
    ones = to_device(ones_host, big * sizeof(float));
    for (int r = 0; r < 2; r++) {
        if (only_recipe >= 0 && r != only_recipe) {
            continue;
        }
        const double t1 = bench_seconds();
        spart_vcs *host = NULL, *host_t = NULL;
        CHECK_SPART(context, spart_vcs_create_from_coo(context, n_rows, n_cols, nnz, rows, cols,
                                                       values, recipes[r], SPART_VCS_VCSR, &host));
        CHECK_SPART(context, spart_vcs_transpose(context, host, &host_t));
        fprintf(stderr, "  %s built in %.1f s\n", recipe_names[r], bench_seconds() - t1);
        /* the offset o as float32 for the peer's rank-1 term */
        double *centre = malloc((size_t)n_cols * sizeof(double));
        double *scale = malloc((size_t)n_cols * sizeof(double));
        CHECK_SPART(context, spart_vcs_statistics(context, host, NULL, NULL, centre, scale));
        float *offset_host = malloc((size_t)n_cols * sizeof(float));
        for (int64_t j = 0; j < n_cols; j++) {
            offset_host[j] = (float)(-(centre[j] * scale[j]));
        }
        float *offset = to_device(offset_host, (size_t)n_cols * sizeof(float));
        device_csr csr = csr_of_delta(context, host);
        device_csr csr_t = csr_of_delta(context, host_t);
        const double csr_bytes = 8.0 * (double)nnz + 4.0 * (double)(n_rows + 1);
        /* One device matrix with both groupings serves the four directions:
         * A @ B walks the rows (VCSR's own grouping, VCSC's regroup), B @ A
         * the columns. The format-only bytes: VCSR's upload, and VCSC's the
         * same with the other grouping (both - VCSR + the statistics). */
        spart_vcs *d_format = NULL, *d_both = NULL;
        int64_t bytes_vcsr = 0, bytes_both = 0;
        CHECK_SPART(context, spart_vcs_to_device(context, host, 0, &d_format, &bytes_vcsr));
        CHECK_SPART(context, spart_vcs_to_device(context, host, 1, &d_both, &bytes_both));
        spart_vcs_free(d_format);
        const int64_t stats_bytes = 8 * (n_rows + 3 * n_cols);
        const int64_t bytes_vcsc = bytes_both - bytes_vcsr + stats_bytes;
        for (int format = 0; format < 2; format++) {
            for (int direction = 0; direction < 2; direction++) {
                row *o = &rows_out[n_rows_out++];
                snprintf(o->shape, sizeof o->shape, "%lld x %lld", (long long)n_rows,
                         (long long)n_cols);
                o->recipe = recipe_names[r];
                o->direction = format == 0 ? (direction == 0 ? "VCSR @ B" : "B @ VCSR")
                                           : (direction == 0 ? "VCSC @ B" : "B @ VCSC");
                o->nnz = nnz;
                /* what the direction needs on the device: its format's own
                 * grouping where that is the output's (VCSR @ B, B @ VCSC),
                 * both groupings where it is not */
                const int aligned = format == direction;
                o->bytes_needed =
                    (double)(aligned ? (format == 0 ? bytes_vcsr : bytes_vcsc) : bytes_both);
                o->bytes_both = (double)bytes_both;
                o->csr_bytes = csr_bytes;
                const int64_t in_rows = direction == 0 ? n_cols : n_rows;
                const int64_t out_rows = direction == 0 ? n_rows : n_cols;
                /* floor: the grouping walked, B and C once */
                const double walked = (double)(direction == 0 ? bytes_vcsr : bytes_vcsc);
                o->floor_ms =
                    1e3 * 2.0 * (walked + 4.0 * (double)((in_rows + out_rows) * width)) / rate;
                if (format == 1) { /* the same walk as format 0's row above */
                    const row *same = o - 2;
                    o->spart_ms = same->spart_ms;
                    o->peer_ms = same->peer_ms;
                    o->peer_t_ms = same->peer_t_ms;
                    continue;
                }
                o->spart_ms = time_spart(context, d_both, (spart_vcs_direction)direction, width, b,
                                         c, repeat);
                if (direction == 0) {
                    o->peer_ms =
                        time_peer(sp, bl, &csr, 1, 0, b, c, offset, ones, v, width, repeat);
                    o->peer_t_ms = -1.0;
                } else {
                    o->peer_ms =
                        time_peer(sp, bl, &csr, 0, 1, b, c, offset, ones, v, width, repeat);
                    o->peer_t_ms =
                        time_peer(sp, bl, &csr_t, 0, 0, b, c, offset, ones, v, width, repeat);
                }
                fprintf(stderr,
                        "  %s %s: spart %.3f ms, cuSPARSE %.3f ms (%.2fx), bytes %.3f / %.3f of "
                        "CSR\n",
                        o->recipe, o->direction, o->spart_ms, o->peer_ms, o->spart_ms / o->peer_ms,
                        o->bytes_needed / csr_bytes, o->bytes_both / csr_bytes);
            }
        }
        spart_vcs_free(d_both);
        csr_free(&csr);
        csr_free(&csr_t);
        cudaFree(offset);
        free(offset_host), free(centre), free(scale);
        spart_vcs_free(host_t);
        spart_vcs_free(host);
    }
    cudaFree(b), cudaFree(c), cudaFree(v), cudaFree(ones);
    free(b_host), free(ones_host), free(rows), free(cols), free(values);
}

int main(int argc, char **argv)
{
    const char *markdown = NULL;
    int repeat = 20, large = 0, shape = -1;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--markdown") == 0 && a + 1 < argc) {
            markdown = argv[++a];
        } else if (strcmp(argv[a], "--repeat") == 0 && a + 1 < argc) {
            repeat = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--recipe") == 0 && a + 1 < argc) {
            only_recipe = atoi(argv[++a]); /* 0 parafac2, 1 cp10k_log1p */
        } else if (strcmp(argv[a], "--large") == 0) {
            large = 1;
        } else if (strcmp(argv[a], "--shape") == 0 && a + 1 < argc) {
            shape = atoi(argv[++a]); /* that shape alone: 0, 1 or 2 */
        } else {
            fprintf(stderr,
                    "usage: %s [--markdown FILE] [--repeat N] [--shape 0|1|2] [--recipe 0|1] "
                    "[--large]\n",
                    argv[0]);
            return 2;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    spart_context *context = NULL;
    CHECK_SPART(context, spart_context_create(&context));
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    cusparseHandle_t sp;
    cublasHandle_t bl;
    CHECK_CUSPARSE(cusparseCreate(&sp));
    CHECK_CUBLAS(cublasCreate(&bl));
    const double rate = copy_rate(5); /* bench_cuda_peers.h: the median of 5 */
    const int64_t width = 16;
    if (shape < 0 || shape == 0) {
        measure_shape(context, sp, bl, 60000, 2000, 0.05, width, repeat, rate);
    }
    if (shape < 0 || shape == 1) {
        measure_shape(context, sp, bl, 200000, 3000, 0.02, width, repeat, rate);
    }
    if (large || shape == 2) {
        measure_shape(context, sp, bl, 1000000, 5000, 0.02, width, repeat, rate);
    }
    struct cudaDeviceProp properties;
    CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
    FILE *out = markdown != NULL ? bench_markdown_open(markdown, argc, argv, omp_get_max_threads(),
                                                       "the mean of back-to-back calls after a "
                                                       "warm-up, CUDA events")
                                 : stdout;
    if (out == NULL) {
        return 1;
    }
    int cusparse_version = 0;
    cusparseGetVersion(sp, &cusparse_version);
    fprintf(out, "- GPU: %s; cuSPARSE %d; copy rate %.2f TB/s; width %lld, float32 B\n",
            properties.name, cusparse_version, rate * 1e-12, (long long)width);
    fprintf(out, "- peer: cuSPARSE SpMM (best of DEFAULT, CSR_ALG1-3) on the float32 CSR of "
                 "Delta, int32 indices, columns sorted, plus the rank-1 term by cuBLAS "
                 "(GEMV + GER); for B @ A opA = T on that CSR, and (last column) opA = N on "
                 "the CSR of Delta^T, an extra copy\n");
    fprintf(out, "- spart: the device's walk (g lanes over a slice's entries); the same walk "
                 "whether the device matrix holds one "
                 "grouping or both; bytes: what the direction needs on the device (its format's "
                 "grouping where that is the output's: VCSR @ B, B @ VCSC; both groupings for "
                 "VCSC @ B and B @ VCSR), and both, over the float32 CSR with int32 row "
                 "pointers\n\n");
    fprintf(out, "| shape | entries | recipe | direction | floor ms | spart ms | cuSPARSE ms | "
                 "ratio | cuSPARSE on Delta^T ms | bytes needed / CSR | "
                 "bytes (both) / CSR |\n");
    bench_markdown_rule(out, 11);
    for (int k = 0; k < n_rows_out; k++) {
        const row *o = &rows_out[k];
        fprintf(out, "| %s | %lld | %s | %s | %.3f | %.3f | %.3f | %.2f |", o->shape,
                (long long)o->nnz, o->recipe, o->direction, o->floor_ms, o->spart_ms, o->peer_ms,
                o->spart_ms / o->peer_ms);
        if (o->peer_t_ms > 0) {
            fprintf(out, " %.3f |", o->peer_t_ms);
        } else {
            fprintf(out, " - |");
        }
        fprintf(out, " %.3f | %.3f |\n", o->bytes_needed / o->csr_bytes,
                o->bytes_both / o->csr_bytes);
    }
    if (out != stdout) {
        fclose(out);
    }
    cublasDestroy(bl);
    cusparseDestroy(sp);
    spart_context_free(context);
    return 0;
}
