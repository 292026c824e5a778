/*
 * tests/mpi/mpi_test_util.h: what the MPI tests share: a check that
 * counts failures on this rank, the verdict of all ranks, and whether the
 * test runs its operators on the CUDA device (--device).
 *
 * The MPI tests are plain programs, not cmocka (every rank would print its
 * own report): each rank checks, the failures are summed over the ranks
 * (counts, never results), and rank 0 says what failed. Run under mpirun
 * by tests/modules/mpi.cmake with 1, 2 and 4 ranks.
 */
#ifndef SPART_MPI_TEST_UTIL_H
#define SPART_MPI_TEST_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/device.h"
#include "spart/distributed.h"

static int mpi_test_failures = 0;
static int mpi_test_checks = 0;

#define MPI_CHECK(condition, ...)                                                                  \
    do {                                                                                           \
        mpi_test_checks++;                                                                         \
        if (!(condition)) {                                                                        \
            int rank_;                                                                             \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                                                 \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank_, __FILE__, __LINE__,       \
                    #condition);                                                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            mpi_test_failures++;                                                                   \
        }                                                                                          \
    } while (0)

/* A status that must be SPART_OK; stops the test (every rank) otherwise,
 * since a collective that failed on one rank leaves the others waiting. */
#define MPI_REQUIRE_OK(context, call)                                                              \
    do {                                                                                           \
        spart_status status_ = (call);                                                             \
        if (status_ != SPART_OK) {                                                                 \
            int rank_;                                                                             \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                                                 \
            fprintf(stderr, "rank %d: %s:%d: %s gave %s: %s\n", rank_, __FILE__, __LINE__, #call,  \
                    spart_status_string(status_), spart_context_error(context));                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* The same bits (NaN would be a failure here: no test input makes one). */
static inline int same_bits(const double *a, const double *b, int64_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof(double)) == 0;
}

/* The first index where a and b differ, or -1. */
static inline int64_t first_difference(const double *a, const double *b, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        if (memcmp(a + k, b + k, sizeof(double)) != 0) {
            return k;
        }
    }
    return -1;
}

/* Sum the failures over the ranks; rank 0 prints the verdict. Returns the
 * exit code (0 or 1). */
static inline int mpi_test_verdict(const char *name)
{
    int failures = 0;
    int checks = 0;
    MPI_Allreduce(&mpi_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mpi_test_checks, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        printf("%s on %d ranks: %d checks, %d failed\n", name, size, checks, failures);
    }
    return failures == 0 ? 0 : 1;
}

/* --device: the operators on the context's CUDA device (the GPU job). */
static inline int mpi_test_on_device(int argc, char **argv)
{
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--device") == 0) {
            return 1;
        }
    }
    return 0;
}

/* --device on a host of several GPUs: each rank its own (its rank on the
 * host mod the devices visible); with one GPU the ranks share it. */
static inline void mpi_test_choose_device(spart_context *context)
{
    MPI_Comm host;
    int local_rank = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(host, &local_rank);
        MPI_Comm_free(&host);
    }
    int devices = 0;
    while (devices < 1024 && spart_context_set_cuda_device(context, devices) == SPART_OK) {
        devices++;
    }
    if (devices > 0 && spart_context_set_cuda_device(context, local_rank % devices) != SPART_OK) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

#endif /* SPART_MPI_TEST_UTIL_H */
