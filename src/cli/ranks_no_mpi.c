/*
 * src/cli/ranks_no_mpi.c: one rank, for a spart built without MPI (CMake
 * builds this file or src/cli/ranks_mpi.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ranks.h"

/* Started by an MPI launcher as one of several ranks: each would write
 * the same outputs at once, so such a run is refused. */
int cli_ranks_begin(char *error, size_t error_size)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *value = getenv(names[k]);
        if (value != NULL && strtol(value, NULL, 10) > 1) {
            snprintf(error, error_size,
                     "started as one of %s MPI ranks (%s), but this spart was built without "
                     "MPI: every rank would solve alone and write the same files; run it "
                     "without mpirun, or build spart with -DSPART_ENABLE_MPI=ON",
                     value, names[k]);
            return -1;
        }
    }
    return 0;
}

void cli_ranks_end(void) {}

int cli_ranks_rank(void)
{
    return 0;
}

int cli_ranks_size(void)
{
    return 1;
}

void cli_ranks_choose_device(spart_context *context)
{
    (void)context;
}

int cli_ranks_agree(int code)
{
    return code;
}

spart_status cli_ranks_solve(spart_context *context, const spart_mart_regridder_pair *pair,
                             const spart_mart_operators *operators, const double *observed,
                             const spart_mart_options *options, spart_mart_result **result)
{
    (void)pair;
    return spart_mart_solve(context, operators, observed, options, result);
}

spart_status cli_ranks_solve_frames(spart_context *context, const spart_mart_regridder_pair *pair,
                                    const spart_mart_operators *operators, int64_t num_frames,
                                    const double *observed, const spart_mart_options *options,
                                    spart_mart_result **results)
{
    (void)pair;
    return spart_mart_solve_frames(context, operators, num_frames, observed, options, 0, results);
}
