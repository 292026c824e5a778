/*
 * src/cli/ranks.h: `spart invert` under mpirun. The command started by an
 * MPI launcher (mpirun -np P spart invert CONFIG.yaml) initialises MPI and
 * runs on every rank with the same config: each rank builds the problem,
 * MART's operators are split over the ranks (spart/distributed.h: rows by
 * entries, each rank its share, the one-process result on every rank),
 * and rank 0 alone prints and writes the outputs, the same files as one
 * process writes. Started without a launcher, or built without MPI
 * (src/cli/ranks_no_mpi.c), it is one rank and never touches MPI.
 */
#ifndef SPART_CLI_RANKS_H
#define SPART_CLI_RANKS_H

#include "spart.h"
#include "spart/distributed.h"

/* Initialise MPI when an MPI launcher started this process. Returns 0, or
 * -1 with a sentence in `error`. */
int cli_ranks_begin(char *error, size_t error_size);

/* Finalise MPI if cli_ranks_begin initialised it. */
void cli_ranks_end(void);

/* This process's rank and the number of ranks (0 and 1 without MPI). */
int cli_ranks_rank(void);
int cli_ranks_size(void);

/* The largest of the ranks' exit codes, on every rank, so that a failure
 * on one rank (an output folder only rank 0 checks) stops them all before
 * a collective would wait for it. With one rank: `code`. */
int cli_ranks_agree(int code);

/* Several ranks on a host with several GPUs: each rank's context uses
 * its own, device (local rank mod the devices visible), the ranks of a
 * host numbered by MPI_Comm_split_type; with one GPU they share it. No-op
 * with one rank, or where no device is visible. */
void cli_ranks_choose_device(spart_context *context);

/* MART over the ranks: `pair` holds the host regridders, split over the
 * ranks (on the context's device when on_device), then spart_mart_solve
 * on every rank with `observed` (device memory when on_device). With one
 * rank: spart_mart_solve on `operators` as given. The status and the
 * context's sentence are spart's. */
spart_status cli_ranks_solve(spart_context *context, const spart_mart_regridder_pair *pair,
                             const spart_mart_operators *operators, const double *observed,
                             const spart_mart_options *options, spart_mart_result **result);

/* Many frames (spart_mart_solve_frames, `results` of num_frames
 * pointers): with one rank as given. With several and at least as many
 * frames as ranks, the frames split over the ranks, each rank solving its
 * block with the whole `operators` (spart_mart_solve_frames_distributed),
 * then every result on every rank (spart_mart_results_allgather; rank 0
 * writes them); with fewer frames than ranks, the operators split as in
 * cli_ranks_solve, every rank solving every frame. The same results, bit
 * for bit, every way. */
spart_status cli_ranks_solve_frames(spart_context *context, const spart_mart_regridder_pair *pair,
                                    const spart_mart_operators *operators, int64_t num_frames,
                                    const double *observed, const spart_mart_options *options,
                                    spart_mart_result **results);

#endif /* SPART_CLI_RANKS_H */
