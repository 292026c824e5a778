/*
 * solvers/mart_frames.c: MART over many frames per solve
 * (spart_mart_solve_frames, spart/mart.h): the frames of a batch share
 * every pass of the iteration, each keeps its own merits, rule and result,
 * bit for bit those of spart_mart_solve on that frame alone.
 *
 * The working arrays hold `width` frames side by side, frame f of an
 * array at f times its one-frame size; a batch of `count` <= width frames
 * uses the first count of each. One iteration of a batch:
 *   advance  backward product of the predicted images of every frame
 *            (one pass over the matrix), then spart_mart_update_frames,
 *            frame f gated by its run state (a stopped frame keeps its
 *            state);
 *   predict  forward product of every scene, the end of the prediction
 *            and the merits of count x num_channel channels (each channel
 *            summed on its own, so frame f's are the one-frame solve's);
 *   keep     spart_mart_keep_frames, when intermediate states are kept;
 *   decide   spart_mart_decide_frames: each frame's merits to its history
 *            row, its rule checked, its state advanced.
 * The first iteration has no advance. The iterations of a block (8 when a
 * device run is recorded as a CUDA graph without a callback, else 1) run
 * on the device (or host) without a wait; then the host reads the states
 * and history rows of the block with one copy and walks them frame by
 * frame with the one-frame driver's rule (spart_mart_rule_stops), the
 * callback told the frame, and checks that the device left each frame
 * where the host does. A frame the callback stops is marked stopped on
 * the device before the next block.
 *
 * The end of a frame is the one-frame driver's: a frame that used every
 * iteration gets its last update (one more advance, the others gated
 * off); without intermediate states its solution is its state then.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/device_memory.h"
#include "spart/mart.h"
#include "spart/mart_steps.h"
#include "mart_internal.h"

/* Iterations a recorded block holds without a callback (as the
 * one-frame driver's batches). */
enum { graph_block_iterations = 8 };

/* How a frame's run stands on the host. */
enum { frame_going = 0, frame_by_rule = 1, frame_by_callback = 2, frame_out_of_iterations = 3 };

typedef struct frame_run {
    spart_mart_result *result;
    int64_t iterations;
    double merit_previous;
    int how; /* frame_going, ... */
    int64_t solution_capacity;
} frame_run;

/* The working arrays, where the operators work, for `width` frames. */
typedef struct frames_work {
    const spart_mart_operators *operators;
    const spart_mart_options *options;
    int on_device;
    int keep;
    int64_t width, block_iterations, channels, scene_size, image_size;
    double gamma;
    spart_mart_run_rule rule;
    double *scenes;         /* width x scene_size */
    double *observed;       /* width x C x image_size: the batch's observations */
    double *predicted;      /* width x C x image_size */
    double *widths;         /* width x C x image_size */
    double *observed_back;  /* width x C x scene_size, clamped */
    double *predicted_back; /* width x C x scene_size */
    void *workspace;        /* the merits' sums, for width x C channels */
    size_t workspace_bytes;
    void *product_workspace; /* the Regridders' products over width vectors, or NULL */
    size_t product_bytes;
    void *block; /* the run states (width), then the history rows (block x width x 2C) */
    size_t states_bytes, block_bytes;
    spart_mart_run_state *states;
    double *history;
    double *kept;        /* block x width x scene_size, or NULL */
    void *owned;         /* the one allocation the arrays above are carved from, or NULL
                            (the caller's workspace) */
    void *host_block;    /* host copy of block */
    int64_t count;       /* frames of the batch being solved (<= width) */
    frame_run *runs;     /* the batch's frames */
    int64_t first_frame; /* index of runs[0] among all frames */
    double start_time;
    double *solutions_out; /* spart_mart_solve_frames_into's buffer, or NULL: the results */
    int solutions_out_on_device;
} frames_work;

/* ---- the steps of one iteration, for the batch's `count` frames ---- */

static spart_status backward_frames(spart_context *context, frames_work *work, const double *images,
                                    double *scenes, const char *what)
{
    const spart_mart_operators *ops = work->operators;
    int64_t count = work->count;
    spart_status status = SPART_OK;
    if (spart_mart_operators_are_regridders(ops)) {
        status = spart_mart_regridders_backward_frames(
            context, ops, count, images, scenes, work->product_workspace, work->product_bytes);
    } else if (ops->backward_frames != NULL) {
        status = ops->backward_frames(ops->user, context, count, images, scenes);
    } else {
        for (int64_t f = 0; f < count && status == SPART_OK; f++) {
            status =
                ops->backward(ops->user, context, images + f * work->channels * work->image_size,
                              scenes + f * work->channels * work->scene_size);
        }
    }
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status,
                                    "mart frames: the backward operator failed on the %s of "
                                    "frames %lld to %lld",
                                    what, (long long)work->first_frame,
                                    (long long)(work->first_frame + count - 1));
    }
    return SPART_OK;
}

static spart_status advance(spart_context *context, frames_work *work)
{
    if (spart_mart_operators_are_regridders(work->operators)) {
        spart_status status = spart_mart_regridders_update_frames(
            context, work->operators, work->count, work->predicted, work->observed_back,
            work->gamma, work->scenes, work->predicted_back, work->product_workspace,
            work->product_bytes, work->states);
        if (status != SPART_OK) {
            return spart_mart_fail_keep(context, status,
                                        "mart frames: the backprojection of the predicted images "
                                        "of frames %lld to %lld and their update failed",
                                        (long long)work->first_frame,
                                        (long long)(work->first_frame + work->count - 1));
        }
        return SPART_OK;
    }
    spart_status status =
        backward_frames(context, work, work->predicted, work->predicted_back, "predicted images");
    if (status == SPART_OK) {
        status = spart_mart_update_frames(
            context, work->scenes, work->observed_back, work->predicted_back, work->count,
            work->channels, work->scene_size, work->gamma, work->on_device, work->states);
    }
    return status;
}

static spart_status predict_and_measure(spart_context *context, frames_work *work)
{
    const spart_mart_operators *ops = work->operators;
    int64_t count = work->count;
    spart_status status = SPART_OK;
    if (spart_mart_operators_are_regridders(ops)) {
        status = spart_mart_regridders_predict_and_measure_frames(
            context, ops, count, work->scenes, work->observed, work->predicted, work->widths,
            work->workspace, work->workspace_bytes, work->product_workspace, work->product_bytes);
    } else {
        if (ops->forward_frames != NULL) {
            status = ops->forward_frames(ops->user, context, count, work->scenes, work->predicted,
                                         work->widths);
        } else {
            int64_t images = work->channels * work->image_size;
            for (int64_t f = 0; f < count && status == SPART_OK; f++) {
                status = ops->forward(ops->user, context, work->scenes + f * work->scene_size,
                                      work->predicted + f * images, work->widths + f * images);
            }
        }
        if (status == SPART_OK) {
            status = spart_mart_merits_gated(
                context, work->observed, work->predicted, work->widths, count * work->channels,
                work->image_size, work->workspace, work->workspace_bytes, work->on_device, NULL);
        }
    }
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status,
                                    "mart frames: the prediction of frames %lld to %lld and its "
                                    "merits failed",
                                    (long long)work->first_frame,
                                    (long long)(work->first_frame + count - 1));
    }
    return SPART_OK;
}

/* Iteration k of a block: [advance,] predict, keep, decide. */
static spart_status run_iteration(spart_context *context, frames_work *work, int64_t k,
                                  int with_advance)
{
    int64_t count = work->count;
    spart_status status = with_advance ? advance(context, work) : SPART_OK;
    if (status == SPART_OK) {
        status = predict_and_measure(context, work);
    }
    if (status == SPART_OK && work->keep) {
        status = spart_mart_keep_frames(context, work->scenes, count, work->scene_size,
                                        work->kept + k * count * work->scene_size, work->states,
                                        work->on_device);
    }
    if (status == SPART_OK) {
        status = spart_mart_decide_frames(context, &work->rule, count, work->workspace,
                                          work->history + k * count * 2 * work->channels,
                                          work->states, work->on_device);
    }
    return status;
}

/* A block of block_iterations iterations after the first, as a graph
 * records it. */
static spart_status record_block(void *user, spart_context *context)
{
    frames_work *work = user;
    spart_status status = SPART_OK;
    for (int64_t k = 0; k < work->block_iterations && status == SPART_OK; k++) {
        status = run_iteration(context, work, k, 1);
    }
    return status;
}

/* ---- the host's walk over a block ---- */

/* The device's view of frame f must be the host's (frames the callback
 * stopped excepted: the host marks them on the device afterwards). */
static spart_status check_frame(spart_context *context, const frames_work *work, int64_t f,
                                const spart_mart_run_state *device)
{
    const frame_run *run = &work->runs[f];
    if (run->how == frame_by_callback) {
        return SPART_OK;
    }
    int expected = run->how == frame_by_rule             ? SPART_MART_RUN_STOPPED_BY_RULE
                   : run->how == frame_out_of_iterations ? SPART_MART_RUN_OUT_OF_ITERATIONS
                                                         : SPART_MART_RUN_GOING;
    if (device->iterations != run->iterations || device->stopped != expected) {
        return spart_context_set_error(
            context, SPART_ERROR_INTERNAL,
            "mart frames: frame %lld: the %s's stopping rule left the "
            "run at %lld iterations (state %d) where the host's left "
            "it at %lld (state %d)",
            (long long)(work->first_frame + f), work->on_device ? "device" : "step",
            (long long)device->iterations, device->stopped, (long long)run->iterations, expected);
    }
    return SPART_OK;
}

/* Frame f's iteration k of the block: its merits recorded, its state kept,
 * the callback told, the rule checked. */
static spart_status conclude_frame(spart_context *context, frames_work *work, int64_t f, int64_t k,
                                   const double *row)
{
    frame_run *run = &work->runs[f];
    const spart_mart_options *options = work->options;
    int64_t channels = work->channels;
    spart_status status =
        spart_mart_result_append_merits(context, run->result, row, row + channels);
    if (status == SPART_OK && work->keep) {
        const double *kept = work->kept + (k * work->count + f) * work->scene_size;
        status = spart_mart_result_append_state(context, run->result, kept, work->on_device,
                                                &run->solution_capacity);
    }
    if (status != SPART_OK) {
        return status;
    }
    int64_t iteration = run->iterations++;
    double sum = 0.0;
    for (int64_t c = 0; c < channels; c++) {
        sum += row[c];
    }
    double merit = sum / (double)channels;
    if (options->callback != NULL) {
        spart_mart_progress progress = {iteration,
                                        channels,
                                        row,
                                        row + channels,
                                        merit,
                                        omp_get_wtime() - work->start_time,
                                        work->first_frame + f};
        if (options->callback(options->callback_user, &progress) != 0) {
            snprintf(run->result->message, sizeof run->result->message,
                     "Stopped by the callback at iteration %lld.", (long long)iteration);
            run->how = frame_by_callback;
            return SPART_OK;
        }
    }
    if (spart_mart_rule_stops(options, run->merit_previous, merit, iteration, run->result)) {
        run->result->success = 1;
        run->how = frame_by_rule;
        return SPART_OK;
    }
    run->merit_previous = merit;
    if (run->iterations == options->max_iterations) {
        run->how = frame_out_of_iterations;
    }
    return SPART_OK;
}

/* After a block of `iterations` iterations: its states and rows read with
 * one copy, walked as the one-frame driver walks them, the states
 * checked, and the callback's stops marked where the run is. */
static spart_status conclude_block(spart_context *context, frames_work *work, int64_t iterations)
{
    int64_t count = work->count;
    int64_t row_values = 2 * work->channels;
    size_t bytes = work->states_bytes + (size_t)(iterations * count * row_values) * sizeof(double);
    spart_status status =
        spart_memory_copy(context, work->host_block, 0, work->block, work->on_device, bytes);
    const spart_mart_run_state *device = work->host_block;
    const double *rows = (const double *)((const char *)work->host_block + work->states_bytes);
    int marked = 0;
    for (int64_t k = 0; k < iterations && status == SPART_OK; k++) {
        for (int64_t f = 0; f < count && status == SPART_OK; f++) {
            if (work->runs[f].how == frame_going) {
                status = conclude_frame(context, work, f, k, rows + (k * count + f) * row_values);
                marked |= work->runs[f].how == frame_by_callback;
            }
        }
    }
    for (int64_t f = 0; f < count && status == SPART_OK; f++) {
        status = check_frame(context, work, f, device + f);
    }
    if (status == SPART_OK && marked) {
        spart_mart_run_state *states = work->host_block;
        for (int64_t f = 0; f < count; f++) {
            if (work->runs[f].how == frame_by_callback) {
                states[f].stopped = SPART_MART_RUN_STOPPED_BY_RULE; /* any stop gates it off */
            }
        }
        status = spart_memory_copy(context, work->states, work->on_device, states, 0,
                                   work->states_bytes);
    }
    return status;
}

static int any_going(const frames_work *work)
{
    for (int64_t f = 0; f < work->count; f++) {
        if (work->runs[f].how == frame_going) {
            return 1;
        }
    }
    return 0;
}

/* ---- one batch ---- */

/* The states of a fresh batch, where the run is. */
static spart_status reset_states(spart_context *context, frames_work *work)
{
    spart_mart_run_state *states = work->host_block;
    for (int64_t f = 0; f < work->count; f++) {
        memset(&states[f], 0, sizeof states[f]);
        states[f].stopped = SPART_MART_RUN_GOING;
        states[f].merit_previous = INFINITY;
    }
    return spart_memory_copy(context, work->states, work->on_device, states, 0,
                             (size_t)work->count * sizeof(spart_mart_run_state));
}

/* The observations copied in, their clamped backprojection, the guesses. */
static spart_status start_batch(spart_context *context, frames_work *work, const double *observed)
{
    int64_t count = work->count;
    int64_t channel_scenes = work->channels * work->scene_size;
    size_t images = (size_t)(count * work->channels * work->image_size) * sizeof(double);
    spart_status status = spart_memory_copy(
        context, work->observed, work->on_device,
        observed + work->first_frame * work->channels * work->image_size, work->on_device, images);
    if (status == SPART_OK) {
        status =
            backward_frames(context, work, work->observed, work->observed_back, "observed images");
    }
    const double *guess = work->options->guess;
    if (status == SPART_OK && guess != NULL) {
        status = spart_memory_copy(context, work->scenes, work->on_device,
                                   guess + work->first_frame * work->scene_size, work->on_device,
                                   (size_t)(count * work->scene_size) * sizeof(double));
    }
    if (status == SPART_OK && guess == NULL) {
        status = spart_mart_flat_guess_frames(context, work->observed_back, count, work->channels,
                                              work->scene_size, work->scenes, work->workspace,
                                              work->workspace_bytes, work->on_device);
    }
    if (status == SPART_OK) {
        status =
            spart_mart_clamp(context, work->observed_back, count * channel_scenes, work->on_device);
    }
    if (status == SPART_OK) {
        status = reset_states(context, work);
    }
    return status;
}

/* The end of the batch: the last update of frames that used every
 * iteration (the others gated off), and the solutions. */
static spart_status finish_batch(spart_context *context, frames_work *work)
{
    int64_t count = work->count;
    spart_mart_run_state *states = work->host_block;
    int any = 0;
    for (int64_t f = 0; f < count; f++) {
        int last_update = work->runs[f].how == frame_out_of_iterations;
        states[f].stopped = last_update ? SPART_MART_RUN_GOING : SPART_MART_RUN_STOPPED_BY_RULE;
        any |= last_update;
    }
    spart_status status = SPART_OK;
    if (any) {
        status = spart_memory_copy(context, work->states, work->on_device, states, 0,
                                   (size_t)count * sizeof(spart_mart_run_state));
        if (status == SPART_OK) {
            status = advance(context, work);
        }
    }
    size_t scene_bytes = (size_t)work->scene_size * sizeof(double);
    double *out = work->solutions_out != NULL
                      ? work->solutions_out + work->first_frame * work->scene_size
                      : NULL;
    for (int64_t f = 0; f < count && status == SPART_OK; f++) {
        frame_run *run = &work->runs[f];
        if (run->how == frame_out_of_iterations) {
            spart_mart_out_of_iterations(work->options, run->result);
        }
        if (!work->keep && out == NULL) {
            status = spart_memory_copy(context, run->result->solutions, 0,
                                       work->scenes + f * work->scene_size, work->on_device,
                                       scene_bytes);
            run->result->num_solutions = 1;
        } else if (work->keep && out != NULL) {
            /* ctis's solutions[-1]: the last kept state, in the result */
            status = spart_memory_copy(context, out + f * work->scene_size,
                                       work->solutions_out_on_device,
                                       spart_mart_result_solution(run->result), 0, scene_bytes);
        }
    }
    /* the caller's buffer: the batch's states are side by side, as there,
     * so one copy takes them all */
    if (status == SPART_OK && !work->keep && out != NULL) {
        status = spart_memory_copy(context, out, work->solutions_out_on_device, work->scenes,
                                   work->on_device, (size_t)count * scene_bytes);
    }
    return status;
}

/* Frames first_frame ... first_frame + count - 1, to the end; `graph`
 * (NULL: none) replays a block of this count. */
static spart_status solve_batch(spart_context *context, frames_work *work, const double *observed,
                                const spart_device_graph *graph)
{
    spart_status status = start_batch(context, work, observed);
    if (status == SPART_OK) {
        status = run_iteration(context, work, 0, 0);
    }
    if (status == SPART_OK) {
        status = conclude_block(context, work, 1);
    }
    int touched = !work->on_device || work->keep || work->solutions_out != NULL;
    while (status == SPART_OK && any_going(work)) {
        if (graph != NULL) {
            status = spart_device_graph_launch(context, graph);
        } else {
            status = run_iteration(context, work, 0, 1);
        }
        if (status == SPART_OK && !touched) {
            /* while the device runs the block: the results' fresh host
             * pages mapped on the threads (spart_mart_result_touch) */
            for (int64_t f = 0; f < work->count; f++) {
                spart_mart_result_touch(context, work->runs[f].result);
            }
            touched = 1;
        }
        if (status == SPART_OK) {
            status = conclude_block(context, work, graph != NULL ? work->block_iterations : 1);
        }
    }
    if (status == SPART_OK) {
        status = finish_batch(context, work);
    }
    return status;
}

/* ---- the working arrays ---- */

static void free_work(spart_context *context, frames_work *work)
{
    spart_memory_free_async(context, work->on_device, work->owned);
    work->owned = NULL;
    spart_context_free_memory(context, work->host_block);
    spart_context_free_memory(context, work->runs);
}

/* The product workspace of the Regridders' operators for the widest batch
 * and the last one (NULL for other operators). */
static spart_status product_workspace_bytes(spart_context *context, const frames_work *work,
                                            int64_t num_frames, size_t *bytes)
{
    *bytes = 0;
    if (!spart_mart_operators_are_regridders(work->operators)) {
        return SPART_OK;
    }
    int64_t widths[2] = {work->width, num_frames % work->width};
    for (int k = 0; k < 2; k++) {
        size_t needed = 0;
        spart_status status = widths[k] < 1 ? SPART_OK
                                            : spart_mart_regridders_frames_workspace(
                                                  context, work->operators, widths[k], &needed);
        if (status != SPART_OK) {
            return status;
        }
        *bytes = needed > *bytes ? needed : *bytes;
    }
    return SPART_OK;
}

/* The arrays' places in one block (256-byte aligned, as cudaMalloc's),
 * where the operators work: their sizes into bytes[], their offsets into
 * offsets[], the block's size returned (0 when a size_t cannot count it). */
enum { num_arrays = 10 };
static size_t layout_work(spart_context *context, frames_work *work, int64_t num_frames,
                          size_t bytes[num_arrays], size_t offsets[num_arrays])
{
    int64_t width = work->width;
    int64_t channels = work->channels;
    size_t frame_images = (size_t)(channels * work->image_size) * sizeof(double);
    size_t frame_scenes = (size_t)(channels * work->scene_size) * sizeof(double);
    size_t scene = (size_t)work->scene_size * sizeof(double);
    size_t states = (size_t)width * sizeof(spart_mart_run_state);
    work->states_bytes = (states + 63) / 64 * 64; /* the rows after it aligned */
    work->block_bytes = work->states_bytes +
                        (size_t)(work->block_iterations * width * 2 * channels) * sizeof(double);
    /* the merits of width x C channels, and the flat guesses of width frames */
    size_t merits = spart_mart_workspace_size(width * channels, work->image_size, work->scene_size);
    size_t guess = spart_mart_workspace_size(channels, 1, work->scene_size);
    if (merits == 0 || guess == 0 || (size_t)width > SIZE_MAX / guess) {
        return 0;
    }
    work->workspace_bytes = merits > (size_t)width * guess ? merits : (size_t)width * guess;
    if (product_workspace_bytes(context, work, num_frames, &work->product_bytes) != SPART_OK) {
        return 0;
    }
    size_t sizes[num_arrays] = {
        (size_t)width * scene, (size_t)width * frame_images, (size_t)width * frame_images,
        (size_t)width * frame_images, (size_t)width * frame_scenes,
        /* the backprojection of the prediction, unless one pass needs none */
        spart_mart_regridders_update_is_one_pass(work->operators) ? 0
                                                                  : (size_t)width * frame_scenes,
        work->workspace_bytes, work->product_bytes, work->block_bytes,
        work->keep ? (size_t)(work->block_iterations * width) * scene : 0};
    size_t total = 0;
    for (int k = 0; k < num_arrays; k++) {
        bytes[k] = sizes[k];
        offsets[k] = total;
        size_t rounded = (sizes[k] + 255) / 256 * 256;
        if (rounded < sizes[k] || total > SIZE_MAX - rounded) {
            return 0;
        }
        total += rounded;
    }
    return total;
}

/* The working arrays: carved from `given` (the caller's workspace of
 * given_bytes, or NULL: one allocation of the library's), and the host's
 * small arrays. */
static spart_status allocate_work(spart_context *context, frames_work *work, int64_t num_frames,
                                  void *given, size_t given_bytes)
{
    size_t bytes[num_arrays], offsets[num_arrays];
    size_t total = layout_work(context, work, num_frames, bytes, offsets);
    spart_status status = total > 0 ? SPART_OK : SPART_ERROR_OVERFLOW;
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status,
                                    "mart frames: the working arrays of %lld frames do not fit a "
                                    "size_t, or their products' workspace could not be sized",
                                    (long long)work->width);
    }
    size_t alignment = work->on_device ? 256 : sizeof(double);
    if (given != NULL && (given_bytes < total || (uintptr_t)given % alignment != 0)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart frames: workspace of %zu bytes at %p; %zu bytes on "
                                       "a %zu-byte boundary needed "
                                       "(spart_mart_frames_workspace_size)",
                                       given_bytes, given, total, alignment);
    }
    char *base = given;
    if (given == NULL) {
        /* stream-ordered from the context's pool: a call after the first
         * reuses the memory instead of mapping it anew */
        status = spart_memory_allocate_async(context, work->on_device, total, &work->owned);
        base = work->owned;
    }
    if (status == SPART_OK) {
        work->host_block = spart_context_malloc(context, work->block_bytes);
        work->runs = spart_context_malloc(context, (size_t)work->width * sizeof(frame_run));
        status =
            work->host_block != NULL && work->runs != NULL ? SPART_OK : SPART_ERROR_OUT_OF_MEMORY;
    }
    if (status != SPART_OK) {
        free_work(context, work);
        return spart_mart_fail_keep(context, status,
                                    "mart frames: could not allocate the working arrays of %lld "
                                    "frames (%lld channels, %lld values per scene, %lld per "
                                    "image%s: %zu bytes)",
                                    (long long)work->width, (long long)work->channels,
                                    (long long)work->scene_size, (long long)work->image_size,
                                    work->on_device ? ", on the device" : "", total);
    }
    void **arrays[num_arrays] = {
        (void **)&work->scenes, (void **)&work->observed,      (void **)&work->predicted,
        (void **)&work->widths, (void **)&work->observed_back, (void **)&work->predicted_back,
        &work->workspace,       &work->product_workspace,      &work->block,
        (void **)&work->kept};
    for (int k = 0; k < num_arrays; k++) {
        *arrays[k] = bytes[k] > 0 ? base + offsets[k] : NULL;
    }
    work->states = work->block;
    work->history = (double *)((char *)work->block + work->states_bytes);
    return SPART_OK;
}

/* ---- the entry point ---- */

/* Solve every batch: the widest batches replay one graph, the last
 * (narrower) one its own. */
static spart_status solve_all(spart_context *context, frames_work *work, int64_t num_frames,
                              const double *observed, spart_mart_result **results)
{
    const spart_mart_operators *operators = work->operators;
    int graphs = operators->on_device && operators->capturable && work->options->max_iterations > 1;
    spart_device_graph *graph = NULL;
    int64_t graph_count = 0;
    spart_status status = SPART_OK;
    for (int64_t first = 0; first < num_frames && status == SPART_OK; first += work->width) {
        work->first_frame = first;
        work->count = num_frames - first < work->width ? num_frames - first : work->width;
        for (int64_t f = 0; f < work->count; f++) {
            frame_run *run = &work->runs[f];
            memset(run, 0, sizeof *run);
            run->result = results[first + f];
            run->merit_previous = INFINITY;
            run->how = frame_going;
            run->solution_capacity = 1;
        }
        if (graphs && graph_count != work->count) {
            spart_device_graph_free(graph);
            graph = NULL;
            graph_count = work->count;
            status = spart_device_graph_record(context, record_block, work, &graph);
        }
        if (status == SPART_OK) {
            status = solve_batch(context, work, observed, graph);
        }
    }
    spart_device_graph_free(graph);
    return status;
}

/* The checks, and the work's sizes and rule (no arrays yet). */
static spart_status prepare(spart_context *context, const spart_mart_operators *operators,
                            int64_t num_frames, const double *observed,
                            const spart_mart_options *options, int64_t batch_frames,
                            spart_mart_result **results, frames_work *work)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER,
                                       "mart frames: context is NULL");
    }
    spart_mart_result *unused = NULL;
    spart_status status = spart_mart_check_arguments(context, operators, observed, options,
                                                     results != NULL ? results : &unused);
    if (status == SPART_OK && results == NULL) {
        status = spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                         "mart frames: results must not be NULL");
    }
    if (status == SPART_OK) {
        status = spart_mart_frames_check(context, operators, num_frames, batch_frames);
    }
    if (status != SPART_OK) {
        return status;
    }
    memset(work, 0, sizeof *work);
    work->operators = operators;
    work->options = options;
    work->on_device = operators->on_device;
    work->keep = options->keep_intermediate != 0;
    work->channels = operators->num_channel;
    work->scene_size = operators->scene_size;
    work->image_size = operators->image_size;
    work->gamma = options->gamma > 0.0 ? options->gamma : 2.0 / (double)work->channels;
    work->width = spart_mart_frames_width(operators, num_frames, batch_frames);
    work->block_iterations =
        operators->on_device && operators->capturable && options->callback == NULL
            ? graph_block_iterations
            : 1;
    work->rule.num_channel = work->channels;
    work->rule.max_iterations = options->max_iterations;
    work->rule.stop_below_threshold = options->stop_rule == SPART_MART_STOP_THRESHOLD;
    work->rule.stop_at_target = options->stop_rule == SPART_MART_STOP_TARGET;
    work->rule.threshold = options->threshold;
    work->rule.target = options->target;
    work->start_time = omp_get_wtime();
    return SPART_OK;
}

spart_status spart_mart_frames_workspace_size(spart_context *context,
                                              const spart_mart_operators *operators,
                                              int64_t num_frames, const spart_mart_options *options,
                                              int64_t batch_frames, size_t *bytes)
{
    spart_mart_options defaults;
    spart_mart_options_init(&defaults);
    options = options != NULL ? options : &defaults;
    if (bytes == NULL || operators == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "mart frames: operators and bytes must not be NULL");
    }
    *bytes = 0;
    spart_mart_result *unused[1] = {NULL};
    double observed = 0.0; /* the sizes do not depend on the observations */
    frames_work work;
    spart_status status =
        prepare(context, operators, num_frames, &observed, options, batch_frames, unused, &work);
    size_t sizes[num_arrays], offsets[num_arrays];
    if (status == SPART_OK) {
        *bytes = layout_work(context, &work, num_frames, sizes, offsets);
        if (*bytes == 0) {
            status = spart_mart_fail_keep(context, SPART_ERROR_OVERFLOW,
                                          "mart frames: the working arrays of %lld frames do not "
                                          "fit a size_t, or their products' workspace could not "
                                          "be sized",
                                          (long long)work.width);
        }
    }
    return status;
}

spart_status spart_mart_solve_frames(spart_context *context, const spart_mart_operators *operators,
                                     int64_t num_frames, const double *observed,
                                     const spart_mart_options *options, int64_t batch_frames,
                                     spart_mart_result **results)
{
    return spart_mart_solve_frames_into(context, operators, num_frames, observed, options,
                                        batch_frames, NULL, 0, NULL, 0, results);
}

spart_status spart_mart_solve_frames_workspace(spart_context *context,
                                               const spart_mart_operators *operators,
                                               int64_t num_frames, const double *observed,
                                               const spart_mart_options *options,
                                               int64_t batch_frames, void *workspace,
                                               size_t workspace_bytes, spart_mart_result **results)
{
    return spart_mart_solve_frames_into(context, operators, num_frames, observed, options,
                                        batch_frames, workspace, workspace_bytes, NULL, 0, results);
}

spart_status spart_mart_solve_frames_into(spart_context *context,
                                          const spart_mart_operators *operators, int64_t num_frames,
                                          const double *observed, const spart_mart_options *options,
                                          int64_t batch_frames, void *workspace,
                                          size_t workspace_bytes, double *solutions,
                                          int solutions_on_device, spart_mart_result **results)
{
    spart_mart_options defaults;
    spart_mart_options_init(&defaults);
    options = options != NULL ? options : &defaults;
    frames_work work;
    spart_status status =
        prepare(context, operators, num_frames, observed, options, batch_frames, results, &work);
    if (status != SPART_OK) {
        return status;
    }
    work.solutions_out = solutions;
    work.solutions_out_on_device = solutions != NULL && solutions_on_device != 0;
    memset(results, 0, (size_t)num_frames * sizeof *results);
    for (int64_t f = 0; f < num_frames && status == SPART_OK; f++) {
        results[f] = spart_mart_result_allocate(context, operators, solutions == NULL || work.keep);
        if (results[f] == NULL) {
            status = spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                             "mart frames: could not allocate the result of "
                                             "frame %lld",
                                             (long long)f);
        } else {
            results[f]->gamma = work.gamma;
        }
    }
    if (status == SPART_OK) {
        status = allocate_work(context, &work, num_frames, workspace, workspace_bytes);
        if (status == SPART_OK) {
            status = solve_all(context, &work, num_frames, observed, results);
            free_work(context, &work);
        }
    }
    if (status != SPART_OK) {
        for (int64_t f = 0; f < num_frames; f++) {
            spart_mart_result_free(results[f]);
            results[f] = NULL;
        }
    }
    return status;
}
