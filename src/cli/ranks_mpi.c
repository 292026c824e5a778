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

void cli_ranks_choose_device(spart_context *context)
{
    if (size == 1) {
        return;
    }
    MPI_Comm host;
    int local_rank = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(host, &local_rank);
        MPI_Comm_free(&host);
    }
    /* the devices visible: the first number spart refuses */
    int devices = 0;
    while (devices < 1024 && spart_context_set_cuda_device(context, devices) == SPART_OK) {
        devices++;
    }
    if (devices > 0 && spart_context_set_cuda_device(context, local_rank % devices) != SPART_OK &&
        spart_context_set_cuda_device(context, 0) != SPART_OK) {
        return; /* the device went away meanwhile: the solve will say so */
    }
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

/* MART's operators split over the ranks (the pair's host regridders),
 * then `solve` on every rank with them. */
typedef spart_status (*solve_fn)(spart_context *context, const spart_mart_operators *operators,
                                 void *user);

static spart_status solve_split(spart_context *context, const spart_mart_regridder_pair *pair,
                                int on_device, solve_fn solve, void *user)
{
    spart_communicator *communicator = NULL;
    spart_distributed_operator *forward = NULL;
    spart_distributed_operator *backward = NULL;
    spart_status status = spart_communicator_create(context, NULL, &communicator);
    if (status == SPART_OK) {
        status = spart_distributed_operator_create(context, communicator, pair->forward, on_device,
                                                   &forward);
    }
    if (status == SPART_OK) {
        status = spart_distributed_operator_create(context, communicator, pair->backward, on_device,
                                                   &backward);
    }
    spart_distributed_mart_pair split = {forward, backward, pair->num_channel, pair->gain,
                                         pair->read_noise};
    spart_mart_operators over_ranks;
    if (status == SPART_OK) {
        status = spart_distributed_mart_operators(context, &split, &over_ranks);
    }
    if (status == SPART_OK) {
        status = solve(context, &over_ranks, user);
    }
    spart_distributed_operator_free(forward);
    spart_distributed_operator_free(backward);
    spart_communicator_free(communicator);
    return status;
}

typedef struct solve_arguments {
    int64_t num_frames; /* 0: spart_mart_solve */
    const double *observed;
    const spart_mart_options *options;
    spart_mart_result **results;
} solve_arguments;

static spart_status solve_with(spart_context *context, const spart_mart_operators *operators,
                               void *user)
{
    const solve_arguments *a = user;
    if (a->num_frames == 0) {
        return spart_mart_solve(context, operators, a->observed, a->options, a->results);
    }
    return spart_mart_solve_frames(context, operators, a->num_frames, a->observed, a->options, 0,
                                   a->results);
}

spart_status cli_ranks_solve(spart_context *context, const spart_mart_regridder_pair *pair,
                             const spart_mart_operators *operators, const double *observed,
                             const spart_mart_options *options, spart_mart_result **result)
{
    solve_arguments arguments = {0, observed, options, result};
    if (size == 1) {
        return solve_with(context, operators, &arguments);
    }
    return solve_split(context, pair, operators->on_device, solve_with, &arguments);
}

/* Frames over the ranks, each rank with the whole operators, then every
 * result on every rank. */
static spart_status solve_frames_split(spart_context *context,
                                       const spart_mart_operators *operators, int64_t num_frames,
                                       const double *observed, const spart_mart_options *options,
                                       spart_mart_result **results)
{
    spart_communicator *communicator = NULL;
    spart_status status = spart_communicator_create(context, NULL, &communicator);
    if (status == SPART_OK) {
        status = spart_mart_solve_frames_distributed(context, communicator, operators, num_frames,
                                                     observed, options, 0, results, NULL, NULL);
    }
    if (status == SPART_OK) {
        status = spart_mart_results_allgather(context, communicator, num_frames, results);
        if (status != SPART_OK) {
            for (int64_t f = 0; f < num_frames; f++) {
                spart_mart_result_free(results[f]);
                results[f] = NULL;
            }
        }
    }
    spart_communicator_free(communicator);
    return status;
}

spart_status cli_ranks_solve_frames(spart_context *context, const spart_mart_regridder_pair *pair,
                                    const spart_mart_operators *operators, int64_t num_frames,
                                    const double *observed, const spart_mart_options *options,
                                    spart_mart_result **results)
{
    if (size == 1 || num_frames < 1) {
        return spart_mart_solve_frames(context, operators, num_frames, observed, options, 0,
                                       results);
    }
    if (num_frames >= size) {
        return solve_frames_split(context, operators, num_frames, observed, options, results);
    }
    solve_arguments arguments = {num_frames, observed, options, results};
    return solve_split(context, pair, operators->on_device, solve_with, &arguments);
}
