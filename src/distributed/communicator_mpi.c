/*
 * src/distributed/communicator_mpi.c: the communicator over MPI and the
 * module's collectives (distributed_internal.h). Built only with MPI
 * (CMake SPART_ENABLE_MPI); src/distributed/no_mpi.c stands for it
 * without. MPI counts are int: a rank's block of 2^31 items or more is
 * refused with a sentence rather than cut.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "distributed/distributed_internal.h"

int spart_distributed_has_mpi(void)
{
    return 1;
}

/* The status of a failed MPI call, with MPI's own words. */
static spart_status mpi_failure(spart_context *context, int code, const char *what)
{
    char words[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, words, &length) != MPI_SUCCESS) {
        snprintf(words, sizeof words, "MPI error %d", code);
    }
    return spart_fail(context, SPART_ERROR_INTERNAL, "%s: MPI failed: %s", what, words);
}

static MPI_Comm comm_of(const spart_communicator *communicator)
{
    return *(const MPI_Comm *)communicator->mpi_comm;
}

spart_status spart_communicator_create(spart_context *context, const void *mpi_comm,
                                       spart_communicator **communicator)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (communicator == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "communicator_create: communicator must not be NULL");
    }
    *communicator = NULL;
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "communicator_create: MPI is %s: the program calls MPI_Init before "
                          "and MPI_Finalize after spart's communicators",
                          finalized ? "already finalised" : "not initialised");
    }
    MPI_Comm parent = mpi_comm != NULL ? *(const MPI_Comm *)mpi_comm : MPI_COMM_WORLD;
    spart_communicator *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    MPI_Comm *duplicate = spart_alloc(&context->allocator, 1, sizeof *duplicate);
    if (made == NULL || duplicate == NULL) {
        spart_free(&context->allocator, made);
        spart_free(&context->allocator, duplicate);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "communicator_create: out of memory");
    }
    int code = MPI_Comm_dup(parent, duplicate);
    if (code == MPI_SUCCESS) {
        /* Errors come back as codes, turned into statuses, never abort. */
        code = MPI_Comm_set_errhandler(*duplicate, MPI_ERRORS_RETURN);
    }
    if (code == MPI_SUCCESS) {
        code = MPI_Comm_rank(*duplicate, &made->rank);
    }
    if (code == MPI_SUCCESS) {
        code = MPI_Comm_size(*duplicate, &made->size);
    }
    if (code != MPI_SUCCESS) {
        spart_free(&context->allocator, made);
        spart_free(&context->allocator, duplicate);
        return mpi_failure(context, code, "communicator_create");
    }
    made->allocator = context->allocator;
    made->mpi_comm = duplicate;
    *communicator = made;
    return SPART_OK;
}

void spart_communicator_free(spart_communicator *communicator)
{
    if (communicator == NULL) {
        return;
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
        MPI_Comm_free((MPI_Comm *)communicator->mpi_comm);
    }
    spart_allocator allocator = communicator->allocator;
    spart_free(&allocator, communicator->mpi_comm);
    spart_free(&allocator, communicator);
}

/* counts and displacements as MPI's ints, refusing what does not fit. */
static spart_status int_counts(spart_context *context, const spart_communicator *communicator,
                               const int64_t *counts, const int64_t *displacements, int *out_counts,
                               int *out_displacements, const char *what)
{
    for (int r = 0; r < communicator->size; r++) {
        if (counts[r] < 0 || counts[r] > INT_MAX || displacements[r] < 0 ||
            displacements[r] > INT_MAX) {
            return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                              "%s: rank %d's block (%lld items at %lld) does not fit MPI's int "
                              "counts; use more ranks",
                              what, r, (long long)counts[r], (long long)displacements[r]);
        }
        out_counts[r] = (int)counts[r];
        out_displacements[r] = (int)displacements[r];
    }
    return SPART_OK;
}

/* Scratch of 2 x size ints (or 4 x for alltoallv). */
static int *int_scratch(spart_context *context, const spart_communicator *communicator, int blocks)
{
    return spart_alloc(&context->allocator, (size_t)blocks * (size_t)communicator->size,
                       sizeof(int));
}

spart_status spart_comm_allgatherv(spart_context *context, const spart_communicator *communicator,
                                   const void *values, int64_t count, void *gathered,
                                   const int64_t *counts, const int64_t *displacements,
                                   size_t item_bytes, const char *what)
{
    if (count != counts[communicator->rank]) {
        return spart_fail(
            context, SPART_ERROR_INTERNAL, "%s: rank %d gives %lld values where %lld were agreed",
            what, communicator->rank, (long long)count, (long long)counts[communicator->rank]);
    }
    int *scratch = int_scratch(context, communicator, 2);
    if (scratch == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    int *int_counts_ = scratch;
    int *int_displacements = scratch + communicator->size;
    spart_status status = int_counts(context, communicator, counts, displacements, int_counts_,
                                     int_displacements, what);
    if (status == SPART_OK) {
        MPI_Datatype type = item_bytes == 8 ? MPI_DOUBLE : MPI_BYTE;
        /* MPI_DOUBLE moves the 8 bytes as they are (one host, or hosts of
         * one floating-point format): values, never arithmetic. */
        static const double nothing = 0.0; /* a send buffer apart from `gathered` */
        int code = MPI_Allgatherv(count > 0 ? values : &nothing, (int)count, type, gathered,
                                  int_counts_, int_displacements, type, comm_of(communicator));
        if (code != MPI_SUCCESS) {
            status = mpi_failure(context, code, what);
        }
    }
    spart_free(&context->allocator, scratch);
    return status;
}

spart_status spart_comm_allgather_int64(spart_context *context,
                                        const spart_communicator *communicator, int64_t value,
                                        int64_t *values, const char *what)
{
    int code = MPI_Allgather(&value, 1, MPI_INT64_T, values, 1, MPI_INT64_T, comm_of(communicator));
    return code == MPI_SUCCESS ? SPART_OK : mpi_failure(context, code, what);
}

spart_status spart_comm_alltoallv(spart_context *context, const spart_communicator *communicator,
                                  const void *send, const int64_t *send_counts,
                                  const int64_t *send_displacements, void *receive,
                                  const int64_t *receive_counts,
                                  const int64_t *receive_displacements, const char *what)
{
    int size = communicator->size;
    int *scratch = int_scratch(context, communicator, 4);
    if (scratch == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    spart_status status = int_counts(context, communicator, send_counts, send_displacements,
                                     scratch, scratch + size, what);
    if (status == SPART_OK) {
        status = int_counts(context, communicator, receive_counts, receive_displacements,
                            scratch + 2 * size, scratch + 3 * size, what);
    }
    if (status == SPART_OK) {
        /* 8-byte items: int64 indices or doubles, moved as they are. */
        int code =
            MPI_Alltoallv(send, scratch, scratch + size, MPI_INT64_T, receive, scratch + 2 * size,
                          scratch + 3 * size, MPI_INT64_T, comm_of(communicator));
        if (code != MPI_SUCCESS) {
            status = mpi_failure(context, code, what);
        }
    }
    spart_free(&context->allocator, scratch);
    return status;
}

spart_status spart_comm_max_int(spart_context *context, const spart_communicator *communicator,
                                int value, int *largest, const char *what)
{
    int code = MPI_Allreduce(&value, largest, 1, MPI_INT, MPI_MAX, comm_of(communicator));
    return code == MPI_SUCCESS ? SPART_OK : mpi_failure(context, code, what);
}
