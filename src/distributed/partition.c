/*
 * src/distributed/partition.c: how frames and rows are split over ranks
 * (spart/distributed.h), the rank and size of a communicator, and the
 * public all-gather. Pure functions of the sizes and the row pointers, so
 * every rank computes the same split without a message.
 */
#include "distributed/distributed_internal.h"

int spart_distributed_has_nccl(void)
{
#if defined(SPART_HAVE_NCCL)
    return 1;
#else
    return 0;
#endif
}

int spart_communicator_rank(const spart_communicator *communicator)
{
    return communicator != NULL ? communicator->rank : 0;
}

int spart_communicator_size(const spart_communicator *communicator)
{
    return communicator != NULL ? communicator->size : 1;
}

/* floor(r * n / size) without overflow for n up to 2^62 and size < 2^31. */
static int64_t even_boundary(int64_t n, int r, int size)
{
    return (n / size) * r + ((n % size) * r) / size;
}

spart_status spart_distributed_partition_frames(spart_context *context, int64_t num_frames,
                                                int num_ranks, int64_t *first_frame)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (first_frame == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "partition_frames: first_frame must not be NULL");
    }
    if (num_frames < 0 || num_ranks < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "partition_frames: num_frames = %lld must be >= 0 and num_ranks = %d "
                          ">= 1",
                          (long long)num_frames, num_ranks);
    }
    for (int r = 0; r <= num_ranks; r++) {
        first_frame[r] = even_boundary(num_frames, r, num_ranks);
    }
    return SPART_OK;
}

/* ceil(r * n / size), as even_boundary. */
static int64_t share_target(int64_t n, int r, int size)
{
    return (n / size) * r + ((n % size) * r + size - 1) / size;
}

spart_status spart_distributed_partition_rows(spart_context *context, const int64_t *row_ptr,
                                              int64_t num_rows, int num_ranks, int64_t *first_row)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (row_ptr == NULL || first_row == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "partition_rows: row_ptr and first_row must not be NULL");
    }
    if (num_rows < 0 || num_ranks < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "partition_rows: num_rows = %lld must be >= 0 and num_ranks = %d >= 1",
                          (long long)num_rows, num_ranks);
    }
    if (row_ptr[0] != 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "partition_rows: row_ptr[0] = %lld must be 0", (long long)row_ptr[0]);
    }
    for (int64_t r = 0; r < num_rows; r++) {
        if (row_ptr[r + 1] < row_ptr[r]) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "partition_rows: row_ptr[%lld] = %lld is less than row_ptr[%lld] "
                              "= %lld (row pointers never decrease)",
                              (long long)(r + 1), (long long)row_ptr[r + 1], (long long)r,
                              (long long)row_ptr[r]);
        }
    }
    int64_t entries = row_ptr[num_rows];
    first_row[0] = 0;
    first_row[num_ranks] = num_rows;
    if (entries == 0) {
        for (int r = 1; r < num_ranks; r++) {
            first_row[r] = even_boundary(num_rows, r, num_ranks);
        }
        return SPART_OK;
    }
    int64_t row = 0;
    for (int r = 1; r < num_ranks; r++) {
        /* the first row whose start reaches ceil(r * entries / num_ranks) */
        int64_t target = share_target(entries, r, num_ranks);
        int64_t low = row;
        int64_t high = num_rows;
        while (low < high) { /* row_ptr[low..] ascending: the first row_ptr >= target */
            int64_t middle = low + (high - low) / 2;
            if (row_ptr[middle] < target) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        row = low;
        first_row[r] = row;
    }
    return SPART_OK;
}

spart_status spart_comm_counts_from_firsts(spart_context *context, const int64_t *first, int size,
                                           int64_t **counts, int64_t **displacements)
{
    *counts = spart_alloc(&context->allocator, (size_t)size, sizeof **counts);
    *displacements = spart_alloc(&context->allocator, (size_t)size, sizeof **displacements);
    if (*counts == NULL || *displacements == NULL) {
        spart_free(&context->allocator, *counts);
        spart_free(&context->allocator, *displacements);
        *counts = *displacements = NULL;
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "distributed: out of memory");
    }
    for (int r = 0; r < size; r++) {
        (*counts)[r] = first[r + 1] - first[r];
        (*displacements)[r] = first[r];
    }
    return SPART_OK;
}

spart_status spart_distributed_allgather(spart_context *context,
                                         const spart_communicator *communicator,
                                         const double *values, int64_t count, double *gathered)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (communicator == NULL || gathered == NULL || (values == NULL && count > 0)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "distributed_allgather: communicator, gathered and values (with count "
                          "> 0) must not be NULL");
    }
    if (count < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "distributed_allgather: count = %lld must be >= 0", (long long)count);
    }
    int size = communicator->size;
    int64_t *first = spart_alloc(&context->allocator, (size_t)size + 1, sizeof *first);
    if (first == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_allgather: out of memory");
    }
    spart_status status = spart_comm_allgather_int64(context, communicator, count, first + 1,
                                                     "distributed_allgather");
    int64_t *counts = NULL;
    int64_t *displacements = NULL;
    if (status == SPART_OK) {
        first[0] = 0;
        for (int r = 0; r < size; r++) {
            first[r + 1] += first[r]; /* counts to first items */
        }
        status = spart_comm_counts_from_firsts(context, first, size, &counts, &displacements);
    }
    if (status == SPART_OK) {
        status = spart_comm_allgatherv(context, communicator, values, count, gathered, counts,
                                       displacements, sizeof(double), "distributed_allgather");
    }
    spart_free(&context->allocator, counts);
    spart_free(&context->allocator, displacements);
    spart_free(&context->allocator, first);
    return status;
}

spart_status spart_comm_agree(spart_context *context, const spart_communicator *communicator,
                              spart_status mine, const char *what)
{
    int failed = 0; /* the highest failed rank + 1, or 0 */
    spart_status status = spart_comm_max_int(
        context, communicator, mine != SPART_OK ? communicator->rank + 1 : 0, &failed, what);
    if (mine != SPART_OK) {
        return mine; /* its own sentence stays in the context */
    }
    if (status == SPART_OK && failed > 0) {
        status = spart_fail(context, SPART_ERROR_INTERNAL,
                            "%s: rank %d failed (its own error says why); this rank stops too",
                            what, failed - 1);
    }
    return status;
}
