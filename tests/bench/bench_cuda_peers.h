/*
 * tests/bench/bench_cuda_peers.h: what the device benchmarks share to time
 * spart against its peers fairly: CUDA-event timers, the device copy rate
 * (the bandwidth floor), a check that repeated runs give the same bits,
 * and cuSPARSE SpMV and SpMM on a Regridder's own CSR arrays.
 */
#ifndef SPART_BENCH_CUDA_PEERS_H
#define SPART_BENCH_CUDA_PEERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "spart.h"

/* CHECK_CUDA and CHECK_SPART (bench_util.h) for a cuSPARSE call. */
#define CHECK_CUSPARSE(call)                                                                       \
    do {                                                                                           \
        cusparseStatus_t check_status = (call);                                                    \
        if (check_status != CUSPARSE_STATUS_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cusparseGetErrorString(check_status));                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct timer {
    cudaEvent_t start, stop;
} timer;

/* Counts the runs whose y differs in any bit from the first run's. */
typedef struct run_check {
    int64_t n;      /* values of y */
    double *first;  /* the first run's y (host) */
    double *latest; /* the latest run's y (host) */
    int differing;
} run_check;

double elapsed_ms(timer *t);
double copy_rate(int repeat);
run_check run_check_open(int64_t n);
void run_check_add(run_check *check, int run, const double *y_device);
void run_check_close(run_check *check);
cusparseSpMatDescr_t cusparse_matrix(const spart_regridder *host, const spart_regridder *device,
                                     int32_t **offsets_device);
double time_cusparse(cusparseHandle_t handle, const spart_regridder *host,
                     const spart_regridder *device, const double *x_device, double *y_device,
                     cusparseSpMVAlg_t algorithm, int repeat, int *differing);
double time_cusparse_spmm(cusparseHandle_t handle, const spart_regridder *host,
                          const spart_regridder *device, const double *x_device, double *y_device,
                          int64_t width, cusparseSpMMAlg_t algorithm, int repeat, int *differing);

#endif
