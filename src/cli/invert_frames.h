/*
 * src/cli/invert_frames.h: `spart invert` over a sequence of frames (more
 * than one: observations.synthesize.frames, or observations.file naming a
 * cube with a frame axis or a pattern of files; observations.h). The frames
 * are solved together (spart_mart_solve_frames: each frame's result is the
 * one a run of that frame alone gives, bit for bit) and each frame's
 * outputs go into its own folder, <outputs.folder>/frame-0000/ ..., with
 * the files of a one-frame run (results.h, pictures.h); frames.csv in the
 * output folder has a row a frame.
 */
#ifndef SPART_CLI_INVERT_FRAMES_H
#define SPART_CLI_INVERT_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "config.h"
#include "device.h"
#include "observations.h"
#include "problem.h"
#include "progress.h"
#include "spart.h"

/* The table of every frame's outcome, in the output folder. */
#define INVERT_FRAMES_TABLE "frames.csv"

/* What the inversion made before its frames: the config, the context, the
 * grids and operators, the progress lines, the setting that asked for a
 * device (for sentences), the frames found, and when the run began. */
typedef struct invert_frames_inputs {
    const config *cfg;
    spart_context *context;
    const problem *made;
    progress *report;
    const char *device_setting;
    const observation_files *files;
    double start;
} invert_frames_inputs;

/* Refuse existing outputs (frames.csv and every frame's files) before any
 * long work. Returns as output_folder_prepare. */
int invert_frames_prepare_outputs(const config *cfg, int64_t frames, int overwrite, char *error,
                                  size_t error_size);

/* Read or synthesise the frames, solve them (every MPI rank, the
 * operators split over the ranks: cli_ranks_solve_frames), write their
 * outputs (rank 0) and the summary; `code` is the exit code so far (the
 * ranks agree on it before the solve). Returns an exit code (EXIT_DONE,
 * EXIT_NOT_CONVERGED when a frame did not meet its rule, ...). */
int invert_frames(const cli_options *options, const invert_frames_inputs *in, int code);

#endif /* SPART_CLI_INVERT_FRAMES_H */
