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

#include "mart_internal.h"
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

/* ---- every result on every rank ------------------------------------------------------ */

/* A result as doubles: its sizes and flags, its message (bytes), its kept
 * states and its histories, moved as they are (no arithmetic). */
enum { RESULT_HEADER = 6, MESSAGE_DOUBLES = 160 / sizeof(double) };

static int64_t packed_size(const spart_mart_result *result)
{
    int64_t iterations = spart_mart_result_num_iterations(result);
    return RESULT_HEADER + MESSAGE_DOUBLES +
           spart_mart_result_num_solutions(result) * spart_mart_result_scene_size(result) +
           2 * iterations * spart_mart_result_num_channel(result);
}

static double *pack(const spart_mart_result *result, double *to)
{
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    int64_t scene = spart_mart_result_scene_size(result);
    int64_t states = spart_mart_result_num_solutions(result);
    to[0] = (double)iterations;
    to[1] = (double)states;
    to[2] = (double)spart_mart_result_success(result);
    to[3] = spart_mart_result_gamma(result);
    to[4] = (double)channels;
    to[5] = (double)scene;
    to += RESULT_HEADER;
    memset(to, 0, MESSAGE_DOUBLES * sizeof(double));
    snprintf((char *)to, MESSAGE_DOUBLES * sizeof(double), "%s", spart_mart_result_message(result));
    to += MESSAGE_DOUBLES;
    memcpy(to, spart_mart_result_solutions(result, 0), (size_t)(states * scene) * sizeof *to);
    to += states * scene;
    memcpy(to, spart_mart_result_mean_chi_squared(result),
           (size_t)(iterations * channels) * sizeof *to);
    to += iterations * channels;
    memcpy(to, spart_mart_result_correlation(result), (size_t)(iterations * channels) * sizeof *to);
    return to + iterations * channels;
}

/* A new result from pack's doubles (NULL when memory runs out); *next is
 * where the following result starts. */
static spart_mart_result *unpack(spart_context *context, const double *from, const double **next)
{
    int64_t iterations = (int64_t)from[0];
    int64_t states = (int64_t)from[1];
    spart_mart_operators sizes;
    memset(&sizes, 0, sizeof sizes);
    sizes.num_channel = (int64_t)from[4];
    sizes.scene_size = (int64_t)from[5];
    spart_mart_result *made = spart_mart_result_allocate(context, &sizes, 1);
    if (made == NULL) {
        return NULL;
    }
    made->success = (int)from[2];
    made->gamma = from[3];
    memcpy(made->message, from + RESULT_HEADER, sizeof made->message);
    made->message[sizeof made->message - 1] = '\0';
    const double *at = from + RESULT_HEADER + MESSAGE_DOUBLES;
    int64_t capacity = 1;
    spart_status status = SPART_OK;
    for (int64_t k = 0; k < states && status == SPART_OK; k++, at += sizes.scene_size) {
        status = spart_mart_result_append_state(context, made, at, 0, &capacity);
    }
    const double *chi2 = at;
    const double *correlation = at + iterations * sizes.num_channel;
    for (int64_t i = 0; i < iterations && status == SPART_OK; i++) {
        status = spart_mart_result_append_merits(context, made, chi2 + i * sizes.num_channel,
                                                 correlation + i * sizes.num_channel);
    }
    *next = correlation + iterations * sizes.num_channel;
    if (status != SPART_OK) {
        spart_mart_result_free(made);
        return NULL;
    }
    return made;
}

/* The frames of this rank's block, [*first, *end). */
static spart_status my_block(spart_context *context, const spart_communicator *communicator,
                             int64_t num_frames, int64_t *first, int64_t *end)
{
    int size = spart_communicator_size(communicator);
    int rank = spart_communicator_rank(communicator);
    int64_t *blocks = malloc(((size_t)size + 1) * sizeof *blocks);
    if (blocks == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "results_allgather: out of memory");
    }
    spart_status status = spart_distributed_partition_frames(context, num_frames, size, blocks);
    *first = blocks[rank];
    *end = blocks[rank + 1];
    free(blocks);
    return status;
}

/* Every rank's packed size (-1: a result of its block missing); fails
 * on every rank alike when one is missing. */
static spart_status agree_sizes(spart_context *context, const spart_communicator *communicator,
                                int64_t mine, int64_t *total)
{
    int size = spart_communicator_size(communicator);
    double *sizes = malloc((size_t)size * sizeof *sizes);
    if (sizes == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "results_allgather: out of memory");
    }
    double own = (double)mine;
    spart_status status = spart_distributed_allgather(context, communicator, &own, 1, sizes);
    *total = 0;
    for (int r = 0; r < size && status == SPART_OK; r++) {
        if (sizes[r] < 0.0) {
            status = spart_context_set_error(
                context, SPART_ERROR_INVALID_ARGUMENT,
                "results_allgather: rank %d lacks a result of its own frames (as "
                "spart_mart_solve_frames_distributed leaves them: each rank its block)",
                r);
        }
        *total += (int64_t)sizes[r];
    }
    free(sizes);
    return status;
}

spart_status spart_mart_results_allgather(spart_context *context,
                                          const spart_communicator *communicator,
                                          int64_t num_frames, spart_mart_result **results)
{
    if (communicator == NULL || results == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "results_allgather: communicator and results must not be "
                                       "NULL");
    }
    if (num_frames < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "results_allgather: num_frames = %lld must be at least 1",
                                       (long long)num_frames);
    }
    int64_t first = 0;
    int64_t end = 0;
    spart_status status = my_block(context, communicator, num_frames, &first, &end);
    if (status != SPART_OK) {
        return status;
    }
    int64_t mine = 0;
    for (int64_t f = first; f < end && mine >= 0; f++) {
        mine = results[f] != NULL ? mine + packed_size(results[f]) : -1;
    }
    int64_t total = 0;
    status = agree_sizes(context, communicator, mine, &total);
    double *packed = NULL;
    double *all = NULL;
    if (status == SPART_OK) {
        packed = malloc(((size_t)mine + 1) * sizeof *packed);
        all = malloc(((size_t)total + 1) * sizeof *all);
        if (packed == NULL || all == NULL) { /* then the gather below fails on every rank */
            status = spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                             "results_allgather: out of memory");
        }
    }
    if (status == SPART_OK) {
        double *at = packed;
        for (int64_t f = first; f < end; f++) {
            at = pack(results[f], at);
        }
        /* rank order is frame order: every frame's result, one after another */
        status = spart_distributed_allgather(context, communicator, packed, mine, all);
    }
    const double *at = all;
    for (int64_t f = 0; f < num_frames && status == SPART_OK; f++) {
        spart_mart_result *copy = unpack(context, at, &at);
        if (copy == NULL) {
            status = spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                             "results_allgather: out of memory for frame %lld",
                                             (long long)f);
        } else if (f >= first && f < end) {
            spart_mart_result_free(copy); /* this rank's own, kept as they are */
        } else {
            spart_mart_result_free(results[f]);
            results[f] = copy;
        }
    }
    free(all);
    free(packed);
    return status;
}
