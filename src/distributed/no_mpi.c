/*
 * src/distributed/no_mpi.c: stands for src/distributed/communicator_mpi.c
 * in a build without MPI (CMake builds exactly one of the two). No
 * communicator can be made, so the collectives below are never reached
 * through the public API; they refuse all the same.
 */
#include "distributed/distributed_internal.h"

#define SPART_NO_MPI_SENTENCE                                                                      \
    "this spart was built without MPI (SPART_ENABLE_MPI=OFF, or no MPI was found when it was "     \
    "configured): install an MPI (Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin) "     \
    "and configure with -DSPART_ENABLE_MPI=ON"

int spart_distributed_has_mpi(void)
{
    return 0;
}

spart_status spart_communicator_create(spart_context *context, const void *mpi_comm,
                                       spart_communicator **communicator)
{
    (void)mpi_comm;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (communicator == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "communicator_create: communicator must not be NULL");
    }
    *communicator = NULL;
    return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED, "communicator_create: %s",
                      SPART_NO_MPI_SENTENCE);
}

void spart_communicator_free(spart_communicator *communicator)
{
    (void)communicator;
}

static spart_status refuse(spart_context *context, const char *what)
{
    return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED, "%s: %s", what, SPART_NO_MPI_SENTENCE);
}

spart_status spart_comm_allgatherv(spart_context *context, const spart_communicator *communicator,
                                   const void *values, int64_t count, void *gathered,
                                   const int64_t *counts, const int64_t *displacements,
                                   size_t item_bytes, const char *what)
{
    (void)communicator, (void)values, (void)count, (void)gathered, (void)counts;
    (void)displacements, (void)item_bytes;
    return refuse(context, what);
}

spart_status spart_comm_allgather_int64(spart_context *context,
                                        const spart_communicator *communicator, int64_t value,
                                        int64_t *values, const char *what)
{
    (void)communicator, (void)value, (void)values;
    return refuse(context, what);
}

spart_status spart_comm_alltoallv(spart_context *context, const spart_communicator *communicator,
                                  const void *send, const int64_t *send_counts,
                                  const int64_t *send_displacements, void *receive,
                                  const int64_t *receive_counts,
                                  const int64_t *receive_displacements, const char *what)
{
    (void)communicator, (void)send, (void)send_counts, (void)send_displacements, (void)receive;
    (void)receive_counts, (void)receive_displacements;
    return refuse(context, what);
}

spart_status spart_comm_max_int(spart_context *context, const spart_communicator *communicator,
                                int value, int *largest, const char *what)
{
    (void)communicator;
    *largest = value;
    return refuse(context, what);
}
