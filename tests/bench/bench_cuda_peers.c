/*
 * tests/bench/bench_cuda_peers.c: timers, the copy-rate floor, the check of
 * repeated runs, and cuSPARSE SpMV and SpMM on a Regridder's CSR arrays,
 * for the device benchmarks (bench_cuda_peers.h).
 */
#include <string.h>

#include "bench_cuda_peers.h"
#include "bench_util.h"
#include "operator/regridder_internal.h"

double elapsed_ms(timer *t)
{
    float ms = 0.0f;
    CHECK_CUDA(cudaEventSynchronize(t->stop));
    CHECK_CUDA(cudaEventElapsedTime(&ms, t->start, t->stop));
    return (double)ms;
}

/* The device-to-device copy rate in bytes per second (read + written). */
double copy_rate(int repeat)
{
    size_t bytes = (size_t)1 << 31;
    void *a = NULL, *b = NULL;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemset(a, 1, bytes));
    timer t;
    CHECK_CUDA(cudaEventCreate(&t.start));
    CHECK_CUDA(cudaEventCreate(&t.stop));
    double times[64];
    for (int run = -2; run < repeat; run++) {
        CHECK_CUDA(cudaEventRecord(t.start, 0));
        CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        CHECK_CUDA(cudaEventRecord(t.stop, 0));
        double ms = elapsed_ms(&t);
        if (run >= 0) {
            times[run] = ms;
        }
    }
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    return 2.0 * (double)bytes / (bench_median(times, repeat) * 1e-3);
}

run_check run_check_open(int64_t n)
{
    run_check check = {n, malloc((size_t)n * sizeof(double)), malloc((size_t)n * sizeof(double)),
                       0};
    if (check.first == NULL || check.latest == NULL) {
        fprintf(stderr, "out of host memory for %lld values\n", (long long)n);
        exit(1);
    }
    return check;
}

/* After timed run `run` (0 the first), outside the timed region. */
void run_check_add(run_check *check, int run, const double *y_device)
{
    if (run < 0) {
        return;
    }
    double *into = run == 0 ? check->first : check->latest;
    CHECK_CUDA(
        cudaMemcpy(into, y_device, (size_t)check->n * sizeof(double), cudaMemcpyDeviceToHost));
    if (run > 0 && memcmp(check->first, check->latest, (size_t)check->n * sizeof(double)) != 0) {
        check->differing++;
    }
}

void run_check_close(run_check *check)
{
    free(check->first);
    free(check->latest);
}

/* cuSPARSE's description of the device regridder's CSR matrix, with
 * int32 row offsets made from its int64 row pointers (*offsets_device,
 * device memory the caller frees). */
cusparseSpMatDescr_t cusparse_matrix(const spart_regridder *host, const spart_regridder *device,
                                     int32_t **offsets_device)
{
    const spart_csr *csr = &host->csr;
    int32_t *offsets = malloc((size_t)(csr->num_rows + 1) * sizeof(int32_t));
    for (int64_t r = 0; r <= csr->num_rows; r++) {
        offsets[r] = (int32_t)csr->row_ptr[r];
    }
    CHECK_CUDA(cudaMalloc((void **)offsets_device, (size_t)(csr->num_rows + 1) * sizeof(int32_t)));
    CHECK_CUDA(cudaMemcpy(*offsets_device, offsets, (size_t)(csr->num_rows + 1) * sizeof(int32_t),
                          cudaMemcpyHostToDevice));
    free(offsets);
    int float32 = csr->values32 != NULL;
    void *values = float32 ? (void *)device->csr.values32 : (void *)device->csr.values64;
    cusparseSpMatDescr_t matrix;
    CHECK_CUSPARSE(cusparseCreateCsr(&matrix, csr->num_rows, csr->num_columns, csr->num_entries,
                                     *offsets_device, device->csr.columns32, values,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, float32 ? CUDA_R_32F : CUDA_R_64F));
    return matrix;
}

/* Median time of cuSPARSE SpMV with `algorithm` on the device regridder's
 * arrays (int32 row offsets made from its int64 row pointers). */
double time_cusparse(cusparseHandle_t handle, const spart_regridder *host,
                     const spart_regridder *device, const double *x_device, double *y_device,
                     cusparseSpMVAlg_t algorithm, int repeat, int *differing)
{
    run_check check = run_check_open(host->csr.num_rows);
    const spart_csr *csr = &host->csr;
    int32_t *offsets_device = NULL;
    cusparseSpMatDescr_t matrix = cusparse_matrix(host, device, &offsets_device);
    cusparseDnVecDescr_t x, y;
    CHECK_CUSPARSE(cusparseCreateDnVec(&x, csr->num_columns, (void *)x_device, CUDA_R_64F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&y, csr->num_rows, y_device, CUDA_R_64F));
    double alpha = 1.0, beta = 0.0;
    size_t bytes = 0;
    CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix,
                                           x, &beta, y, CUDA_R_64F, algorithm, &bytes));
    void *buffer = NULL;
    CHECK_CUDA(cudaMalloc(&buffer, bytes > 0 ? bytes : 1));
    timer t;
    CHECK_CUDA(cudaEventCreate(&t.start));
    CHECK_CUDA(cudaEventCreate(&t.stop));
    double times[64];
    for (int run = -3; run < repeat; run++) {
        CHECK_CUDA(cudaEventRecord(t.start, 0));
        CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x,
                                    &beta, y, CUDA_R_64F, algorithm, buffer));
        CHECK_CUDA(cudaEventRecord(t.stop, 0));
        double ms = elapsed_ms(&t);
        if (run >= 0) {
            times[run] = ms;
        }
        CHECK_CUDA(cudaMemset(y_device, 0xff, (size_t)csr->num_rows * sizeof(double)));
        CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x,
                                    &beta, y, CUDA_R_64F, algorithm, buffer));
        run_check_add(&check, run, y_device);
    }
    *differing = check.differing;
    run_check_close(&check);
    CHECK_CUSPARSE(cusparseDestroySpMat(matrix));
    CHECK_CUSPARSE(cusparseDestroyDnVec(x));
    CHECK_CUSPARSE(cusparseDestroyDnVec(y));
    CHECK_CUDA(cudaFree(buffer));
    CHECK_CUDA(cudaFree(offsets_device));
    return bench_median(times, repeat);
}

/* Median time of cuSPARSE SpMM with `algorithm` for `width` vectors one
 * after the other (column-major X of columns x width and Y of rows x
 * width: the layout of spart's leading axes), with its differing runs; a
 * negative time where cuSPARSE refuses the algorithm for these types (a
 * float32 matrix with float64 vectors) or this layout. */
double time_cusparse_spmm(cusparseHandle_t handle, const spart_regridder *host,
                          const spart_regridder *device, const double *x_device, double *y_device,
                          int64_t width, cusparseSpMMAlg_t algorithm, int repeat, int *differing)
{
    const spart_csr *csr = &host->csr;
    int32_t *offsets_device = NULL;
    cusparseSpMatDescr_t matrix = cusparse_matrix(host, device, &offsets_device);
    cusparseDnMatDescr_t x, y;
    CHECK_CUSPARSE(cusparseCreateDnMat(&x, csr->num_columns, width, csr->num_columns,
                                       (void *)x_device, CUDA_R_64F, CUSPARSE_ORDER_COL));
    CHECK_CUSPARSE(cusparseCreateDnMat(&y, csr->num_rows, width, csr->num_rows, y_device,
                                       CUDA_R_64F, CUSPARSE_ORDER_COL));
    double alpha = 1.0, beta = 0.0;
    size_t bytes = 0;
    double result = -1.0;
    *differing = -1;
    cusparseStatus_t status = cusparseSpMM_bufferSize(
        handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix,
        x, &beta, y, CUDA_R_64F, algorithm, &bytes);
    void *buffer = NULL;
    if (status == CUSPARSE_STATUS_SUCCESS) {
        CHECK_CUDA(cudaMalloc(&buffer, bytes > 0 ? bytes : 1));
        status =
            cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                         &alpha, matrix, x, &beta, y, CUDA_R_64F, algorithm, buffer);
    }
    if (status == CUSPARSE_STATUS_SUCCESS) {
        run_check check = run_check_open(csr->num_rows * width);
        timer t;
        CHECK_CUDA(cudaEventCreate(&t.start));
        CHECK_CUDA(cudaEventCreate(&t.stop));
        double times[64];
        for (int run = -3; run < repeat; run++) {
            CHECK_CUDA(cudaEventRecord(t.start, 0));
            CHECK_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x, &beta,
                                        y, CUDA_R_64F, algorithm, buffer));
            CHECK_CUDA(cudaEventRecord(t.stop, 0));
            double ms = elapsed_ms(&t);
            if (run >= 0) {
                times[run] = ms;
            }
            CHECK_CUDA(
                cudaMemset(y_device, 0xff, (size_t)(csr->num_rows * width) * sizeof(double)));
            CHECK_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x, &beta,
                                        y, CUDA_R_64F, algorithm, buffer));
            run_check_add(&check, run, y_device);
        }
        *differing = check.differing;
        run_check_close(&check);
        result = bench_median(times, repeat);
    }
    CHECK_CUSPARSE(cusparseDestroySpMat(matrix));
    CHECK_CUSPARSE(cusparseDestroyDnMat(x));
    CHECK_CUSPARSE(cusparseDestroyDnMat(y));
    CHECK_CUDA(cudaFree(buffer));
    CHECK_CUDA(cudaFree(offsets_device));
    return result;
}
