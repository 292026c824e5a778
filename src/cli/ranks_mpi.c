/*
 * src/cli/ranks_mpi.c: `spart invert` over MPI ranks (src/cli/ranks.h),
 * for a spart built with MPI. MPI is initialised only when a launcher
 * started the process (its environment says so), so a plain run stays a
 * plain process.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "ranks.h"

static int initialised_here = 0;
static int rank = 0;
static int size = 1;

/* The variables Open MPI, MPICH / Hydra, PMIx and Slurm set in the
 * processes they start. */
static int launched_by_mpi(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                           "MPI_LOCALNRANKS"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (getenv(names[k]) != NULL) {
            return 1;
        }
    }
    return 0;
}

int cli_ranks_begin(char *error, size_t error_size)
{
    if (!launched_by_mpi()) {
        return 0;
    }
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(error, error_size, "MPI_Init failed although an MPI launcher started spart");
        return -1;
    }
    initialised_here = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return 0;
}

void cli_ranks_end(void)
{
    if (initialised_here) {
        MPI_Finalize();
        initialised_here = 0;
    }
}

int cli_ranks_rank(void)
{
    return rank;
}

int cli_ranks_size(void)
{
    return size;
}

int cli_ranks_agree(int code)
{
    if (size == 1) {
        return code;
    }
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

spart_status cli_ranks_solve(spart_context *context, const spart_mart_regridder_pair *pair,
                             const spart_mart_operators *operators, const double *observed,
                             const spart_mart_options *options, spart_mart_result **result)
{
    if (size == 1) {
        return spart_mart_solve(context, operators, observed, options, result);
    }
    spart_communicator *communicator = NULL;
    spart_distributed_operator *forward = NULL;
    spart_distributed_operator *backward = NULL;
    spart_status status = spart_communicator_create(context, NULL, &communicator);
    if (status == SPART_OK) {
        status = spart_distributed_operator_create(context, communicator, pair->forward,
                                                   operators->on_device, &forward);
    }
    if (status == SPART_OK) {
        status = spart_distributed_operator_create(context, communicator, pair->backward,
                                                   operators->on_device, &backward);
    }
    spart_distributed_mart_pair split = {forward, backward, pair->num_channel, pair->gain,
                                         pair->read_noise};
    spart_mart_operators over_ranks;
    if (status == SPART_OK) {
        status = spart_distributed_mart_operators(context, &split, &over_ranks);
    }
    if (status == SPART_OK) {
        status = spart_mart_solve(context, &over_ranks, observed, options, result);
    }
    spart_distributed_operator_free(forward);
    spart_distributed_operator_free(backward);
    spart_communicator_free(communicator);
    return status;
}
