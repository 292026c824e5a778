/*
 * solvers/mart_frames_distributed.c: frames over the ranks
 * (spart_mart_solve_frames_distributed, spart/distributed.h). Each rank
 * solves its contiguous block of frames (spart_distributed_partition_frames)
 * with spart_mart_solve_frames (in batches, each frame exactly as
 * spart_mart_solve solves it alone), so every frame's result is the
 * one-process result; then the ranks learn
 * whether all succeeded, and gather the solutions and iteration counts in
 * rank order, which is frame order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/distributed.h"
#include "spart/mart.h"

static void free_results(spart_mart_result **results, int64_t num_frames)
{
    for (int64_t f = 0; f < num_frames; f++) {
        spart_mart_result_free(results[f]);
        results[f] = NULL;
    }
}

/* The callback of the caller, told the frame's number in the whole
 * sequence (spart_mart_solve_frames counts from this rank's first). */
typedef struct callback_offset {
    spart_mart_callback callback;
    void *user;
    int64_t first;
} callback_offset;

static int offset_callback(void *user, const spart_mart_progress *progress)
{
    const callback_offset *offset = user;
    spart_mart_progress shifted = *progress;
    shifted.frame += offset->first;
    return offset->callback(offset->user, &shifted);
}

/* This rank's frames [first, end), in batches (spart_mart_solve_frames:
 * each frame the bits of spart_mart_solve of that frame alone). */
static spart_status solve_mine(spart_context *context, const spart_mart_operators *operators,
                               const double *observed, int64_t first, int64_t end,
                               const spart_mart_options *options, int64_t batch_frames,
                               spart_mart_result **results)
{
    if (end == first) {
        return SPART_OK;
    }
    spart_mart_options mine = *options;
    callback_offset offset = {options->callback, options->callback_user, first};
    if (options->guess != NULL) {
        mine.guess = options->guess + first * operators->scene_size;
    }
    if (options->callback != NULL) {
        mine.callback = offset_callback;
        mine.callback_user = &offset;
    }
    int64_t frame_size = operators->num_channel * operators->image_size;
    return spart_mart_solve_frames(context, operators, end - first, observed + first * frame_size,
                                   &mine, batch_frames, results + first);
}

/* Every rank's outcome (-1: all its frames solved, else the first frame
 * of its block), so that all ranks stop together rather than wait in a
 * gather. */
static spart_status agree(spart_context *context, const spart_communicator *communicator,
                          int64_t failed_frame, spart_status mine)
{
    int size = spart_communicator_size(communicator);
    double *all = malloc((size_t)size * sizeof *all);
    if (all == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "solve_frames_distributed: out of memory");
    }
    char sentence[512];
    snprintf(sentence, sizeof sentence, "%s", spart_context_error(context));
    double value = (double)failed_frame;
    spart_status status = spart_distributed_allgather(context, communicator, &value, 1, all);
    if (status == SPART_OK && mine != SPART_OK) {
        status = spart_context_set_error(context, mine, "%s", sentence);
    } else if (status == SPART_OK) {
        for (int r = 0; r < size; r++) {
            if (all[r] >= 0.0) {
                status = spart_context_set_error(
                    context, SPART_ERROR_INTERNAL,
                    "solve_frames_distributed: rank %d failed to solve its frames (from "
                    "frame %lld; its own error says why); no results are kept",
                    r, (long long)all[r]);
                break;
            }
        }
    }
    free(all);
    return status;
}

/* The solutions and iteration counts of every frame, in frame order. */
static spart_status gather(spart_context *context, const spart_communicator *communicator,
                           spart_mart_result **results, int64_t first, int64_t end,
                           int64_t num_frames, int64_t scene_size, double *solutions,
                           int64_t *iterations)
{
    int64_t mine = end - first;
    double *block = malloc(((size_t)mine * (size_t)scene_size + 1) * sizeof *block);
    double *counts = malloc(((size_t)mine + (size_t)num_frames + 1) * sizeof *counts);
    if (block == NULL || counts == NULL) {
        free(block);
        free(counts);
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "solve_frames_distributed: out of memory");
    }
    for (int64_t f = first; f < end; f++) {
        memcpy(block + (f - first) * scene_size, spart_mart_result_solution(results[f]),
               (size_t)scene_size * sizeof *block);
        counts[f - first] = (double)spart_mart_result_num_iterations(results[f]);
    }
    spart_status status = SPART_OK;
    if (solutions != NULL) {
        status =
            spart_distributed_allgather(context, communicator, block, mine * scene_size, solutions);
    }
    if (status == SPART_OK && iterations != NULL) {
        double *all = counts + mine;
        status = spart_distributed_allgather(context, communicator, counts, mine, all);
        for (int64_t f = 0; f < num_frames && status == SPART_OK; f++) {
            iterations[f] = (int64_t)all[f];
        }
    }
    free(block);
    free(counts);
    return status;
}

spart_status spart_mart_solve_frames_distributed(spart_context *context,
                                                 const spart_communicator *communicator,
                                                 const spart_mart_operators *operators,
                                                 int64_t num_frames, const double *observed,
                                                 const spart_mart_options *options,
                                                 int64_t batch_frames, spart_mart_result **results,
                                                 double *solutions, int64_t *iterations)
{
    if (communicator == NULL || operators == NULL || observed == NULL || options == NULL ||
        results == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "solve_frames_distributed: communicator, operators, "
                                       "observed, options and results must not be NULL");
    }
    if (num_frames < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "solve_frames_distributed: num_frames = %lld must be at "
                                       "least 1",
                                       (long long)num_frames);
    }
    for (int64_t f = 0; f < num_frames; f++) {
        results[f] = NULL;
    }
    int size = spart_communicator_size(communicator);
    int rank = spart_communicator_rank(communicator);
    int64_t *first_frame = malloc(((size_t)size + 1) * sizeof *first_frame);
    if (first_frame == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "solve_frames_distributed: out of memory");
    }
    spart_status status =
        spart_distributed_partition_frames(context, num_frames, size, first_frame);
    int64_t first = first_frame[rank];
    int64_t end = first_frame[rank + 1];
    free(first_frame);
    if (status != SPART_OK) {
        return status;
    }
    spart_status mine =
        solve_mine(context, operators, observed, first, end, options, batch_frames, results);
    status = agree(context, communicator, mine == SPART_OK ? -1 : first, mine);
    if (status == SPART_OK) {
        status = gather(context, communicator, results, first, end, num_frames,
                        operators->scene_size, solutions, iterations);
    }
    if (status != SPART_OK) {
        free_results(results, num_frames);
    }
    return status;
}
