/*
 * solvers/mart.c: the MART driver (spart/mart.h), ctis.inverters.
 * MartInverter step for step, over caller-supplied operators, from the
 * public steps of spart/mart_steps.h, and nothing else of the library.
 *
 * The steps run on the host or, for
 * operators on a CUDA device, on the device: the working arrays live where
 * the operators work, and only the merits (two values per channel) and the
 * kept states come back to the host. The steps sum in one fixed order, on
 * the host and the device alike, so a run gives the same bits for any
 * thread count and on either.
 *
 * Batches: with capturable device operators and no callback, the driver
 * records `batch_iterations` iterations as one CUDA graph, each ending with
 * its stopping rule checked on the device (spart_mart_decide), and
 * reads the merits of the whole batch with one copy: one launch and one
 * wait per batch instead of per iteration. The iterations of a batch after
 * the rule stopped the run, or after the iteration limit, change nothing
 * (the update, the merits and the decision are gated by the batch's run
 * state, which the driver passes them (mart_work.gate);
 * the prediction runs, from the unchanged state, which gives the same
 * images again). The host then walks the batch's merits with the same
 * rule and checks that the device stopped where it does, so the result
 * is that of the one-by-one loop, bit for bit.
 */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/device_memory.h"
#include "spart/mart.h"
#include "spart/mart_steps.h"
#include "mart_internal.h"

void spart_mart_options_init(spart_mart_options *options)
{
    if (options == NULL) {
        return;
    }
    memset(options, 0, sizeof *options);
    options->gamma = 0.0;
    options->stop_rule = SPART_MART_STOP_THRESHOLD;
    options->threshold = 1e-3;
    options->target = 1.0;
    options->max_iterations = 100;
}

/* ---- the driver --------------------------------------------------------------------------- */

spart_status spart_mart_check_arguments(spart_context *context,
                                        const spart_mart_operators *operators,
                                        const double *observed, const spart_mart_options *options,
                                        spart_mart_result **result)
{
    if (operators == NULL || observed == NULL || options == NULL || result == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "mart: operators, observed, options and result must not "
                                       "be NULL");
    }
    if (operators->forward == NULL || operators->backward == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "mart: operators->forward and operators->backward must "
                                       "be set");
    }
    if (operators->num_channel < 1 || operators->scene_size < 1 || operators->image_size < 1) {
        return spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "mart: num_channel (%lld), scene_size (%lld) and image_size (%lld) must be at least 1",
            (long long)operators->num_channel, (long long)operators->scene_size,
            (long long)operators->image_size);
    }
    if (!(options->gamma >= 0.0) || isinf(options->gamma)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart: gamma = %g must be positive and finite (0 for the "
                                       "default 2 / num_channel)",
                                       options->gamma);
    }
    if (!isfinite(options->threshold) || !isfinite(options->target)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart: threshold = %g and target = %g must be finite",
                                       options->threshold, options->target);
    }
    if (options->max_iterations < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart: max_iterations = %lld must be at least 1",
                                       (long long)options->max_iterations);
    }
    if (options->stop_rule != SPART_MART_STOP_THRESHOLD &&
        options->stop_rule != SPART_MART_STOP_TARGET &&
        options->stop_rule != SPART_MART_STOP_COUNT) {
        return spart_context_set_error(context, SPART_ERROR_UNKNOWN_ENUM,
                                       "mart: stop_rule = %d is not a spart_mart_stop_rule",
                                       (int)options->stop_rule);
    }
    return SPART_OK;
}

/* Working arrays of one solve, where the operators work. */
typedef struct mart_work {
    int on_device;
    double *scene;          /* the current state, scene_size */
    double *predicted;      /* num_channel x image_size */
    double *widths;         /* num_channel x image_size */
    double *observed_back;  /* clamped backprojection of the observations, C x scene */
    double *predicted_back; /* C x scene */
    void *workspace;        /* of the sums */
    size_t workspace_bytes;
    double *chi2;        /* host, num_channel: this iteration */
    double *correlation; /* host, num_channel */
    /* While a batch is recorded, its run state (the steps that change the
     * state or the merits change nothing once it has stopped); else NULL. */
    const spart_mart_run_state *gate;
} mart_work;

static void free_work(spart_context *context, mart_work *work)
{
    void *arrays[] = {work->scene,         work->predicted,      work->widths,
                      work->observed_back, work->predicted_back, work->workspace};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        spart_memory_free(context, work->on_device, arrays[k]);
    }
    spart_context_free_memory(context, work->chi2);
    spart_context_free_memory(context, work->correlation);
}

static spart_status allocate_work(spart_context *context, const spart_mart_operators *operators,
                                  mart_work *work)
{
    int64_t c = operators->num_channel;
    size_t images = (size_t)(c * operators->image_size) * sizeof(double);
    size_t scenes = (size_t)(c * operators->scene_size) * sizeof(double);
    memset(work, 0, sizeof *work);
    work->on_device = operators->on_device;
    work->workspace_bytes =
        spart_mart_workspace_size(c, operators->image_size, operators->scene_size);
    void **arrays[] = {(void **)&work->scene,          (void **)&work->predicted,
                       (void **)&work->widths,         (void **)&work->observed_back,
                       (void **)&work->predicted_back, &work->workspace};
    /* host Regridder operators update in place: no backprojection of the
     * prediction to keep (one byte keeps the allocation loop plain) */
    size_t predicted_scenes = spart_mart_regridders_update_in_place(operators) ? 1 : scenes;
    size_t bytes[] = {(size_t)operators->scene_size * sizeof(double),
                      images,
                      images,
                      scenes,
                      predicted_scenes,
                      work->workspace_bytes};
    spart_status status = SPART_OK;
    for (size_t k = 0; k < sizeof bytes / sizeof bytes[0] && status == SPART_OK; k++) {
        status = spart_memory_allocate(context, work->on_device, bytes[k], arrays[k]);
    }
    work->chi2 = spart_mart_alloc_doubles(context, 2 * (size_t)c); /* room for r (graphs) */
    work->correlation = spart_mart_alloc_doubles(context, (size_t)c);
    if (status == SPART_OK && (work->chi2 == NULL || work->correlation == NULL)) {
        status = SPART_ERROR_OUT_OF_MEMORY;
    }
    if (status != SPART_OK) {
        free_work(context, work);
        return spart_context_set_error(context, status,
                                       "mart: could not allocate the working arrays (%lld "
                                       "channels, %lld values per scene, %lld per image%s)",
                                       (long long)c, (long long)operators->scene_size,
                                       (long long)operators->image_size,
                                       work->on_device ? ", on the device" : "");
    }
    return SPART_OK;
}

/* Copy the current state (host or device) into `destination` (host). */
static spart_status copy_scene_to_host(spart_context *context, const mart_work *work,
                                       int64_t scene_size, double *destination)
{
    return spart_memory_copy(context, destination, 0, work->scene, work->on_device,
                             (size_t)scene_size * sizeof(double));
}

static spart_status call_forward(spart_context *context, const spart_mart_operators *operators,
                                 mart_work *work, int64_t iteration)
{
    spart_status status =
        operators->forward(operators->user, context, work->scene, work->predicted, work->widths);
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status,
                                    "mart: the forward operator failed at iteration %lld",
                                    (long long)iteration);
    }
    return SPART_OK;
}

static spart_status call_backward(spart_context *context, const spart_mart_operators *operators,
                                  const double *images, double *scenes, const char *what)
{
    spart_status status = operators->backward(operators->user, context, images, scenes);
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status, "mart: the backward operator failed on the %s",
                                    what);
    }
    return SPART_OK;
}

/* The guess (given or flat) and the clamped backprojection of the
 * observations. */
static spart_status start(spart_context *context, const spart_mart_operators *operators,
                          const double *observed, const spart_mart_options *options,
                          mart_work *work)
{
    int64_t channels = operators->num_channel;
    int64_t scene_size = operators->scene_size;
    spart_status status =
        call_backward(context, operators, observed, work->observed_back, "observed images");
    if (status == SPART_OK && options->guess != NULL) {
        status = spart_memory_copy(context, work->scene, work->on_device, options->guess,
                                   work->on_device, (size_t)scene_size * sizeof(double));
    } else if (status == SPART_OK) {
        status =
            spart_mart_flat_guess(context, work->observed_back, channels, scene_size, work->scene,
                                  work->workspace, work->workspace_bytes, work->on_device);
    }
    if (status == SPART_OK) {
        status =
            spart_mart_clamp(context, work->observed_back, channels * scene_size, work->on_device);
    }
    return status;
}

/* Predict the images of the current state and their merits per channel
 * (to the host arrays; with `in_graph`, on the device, left in the
 * workspace, no wait: there operators of a Regridder pair end the
 * prediction inside the merits' kernel, the same bits). */
static spart_status predict_and_measure(spart_context *context,
                                        const spart_mart_operators *operators,
                                        const double *observed, mart_work *work, int64_t iteration,
                                        int in_graph)
{
    if (in_graph && spart_mart_operators_are_regridders(operators)) {
        spart_status status = spart_mart_regridders_predict_and_measure(
            context, operators, work->scene, observed, work->predicted, work->widths,
            work->workspace, work->workspace_bytes, work->gate);
        if (status != SPART_OK) {
            return spart_mart_fail_keep(context, status,
                                        "mart: the prediction and its merits failed at "
                                        "iteration %lld",
                                        (long long)iteration);
        }
        return SPART_OK;
    }
    spart_status status = call_forward(context, operators, work, iteration);
    if (status == SPART_OK && in_graph) {
        status =
            spart_mart_merits_gated(context, observed, work->predicted, work->widths,
                                    operators->num_channel, operators->image_size, work->workspace,
                                    work->workspace_bytes, work->on_device, work->gate);
    } else if (status == SPART_OK) {
        status = spart_mart_merits(context, observed, work->predicted, work->widths,
                                   operators->num_channel, operators->image_size, work->chi2,
                                   work->correlation, work->workspace, work->workspace_bytes,
                                   work->on_device);
    }
    return status;
}

/* The update that ends an iteration: backproject the prediction, multiply
 * the state by the correction. Operators of a Regridder pair do both in
 * one call (one pass on a device), with the same bits. */
static spart_status advance(spart_context *context, const spart_mart_operators *operators,
                            mart_work *work, double gamma)
{
    if (spart_mart_operators_are_regridders(operators)) {
        spart_status status =
            spart_mart_regridders_update(context, operators, work->predicted, work->observed_back,
                                         gamma, work->scene, work->predicted_back, work->gate);
        if (status != SPART_OK) {
            return spart_mart_fail_keep(context, status,
                                        "mart: the backprojection of the predicted images and "
                                        "the update failed");
        }
        return SPART_OK;
    }
    spart_status status = call_backward(context, operators, work->predicted, work->predicted_back,
                                        "predicted images");
    if (status == SPART_OK) {
        status = spart_mart_update_gated(context, work->scene, work->observed_back,
                                         work->predicted_back, operators->num_channel,
                                         operators->scene_size, gamma, work->on_device, work->gate);
    }
    return status;
}

/* What a recorded iteration needs. */
typedef struct recorded_iteration {
    const spart_mart_operators *operators;
    const double *observed;
    mart_work *work;
    double gamma;
} recorded_iteration;

/* The device work between two merits: the update that ends one iteration
 * and the prediction and merits of the next, recorded once as a graph. */
static spart_status record_iteration(void *user, spart_context *context)
{
    recorded_iteration *r = user;
    spart_status status = advance(context, r->operators, r->work, r->gamma);
    if (status == SPART_OK) {
        status = predict_and_measure(context, r->operators, r->observed, r->work, 1, 1);
    }
    return status;
}

/* Iteration i up to its merit, in work->chi2 and work->correlation: the
 * prediction of the first state, or the update ending iteration i - 1 and
 * the prediction of the new state (one graph launch and one copy of the
 * merits when `graph` is there). */
static spart_status next_merits(spart_context *context, const spart_mart_operators *operators,
                                const double *observed, mart_work *work, double gamma,
                                const spart_device_graph *graph, int64_t iteration)
{
    if (iteration == 0) {
        return predict_and_measure(context, operators, observed, work, iteration, 0);
    }
    if (graph == NULL) {
        spart_status status = advance(context, operators, work, gamma);
        if (status == SPART_OK) {
            status = predict_and_measure(context, operators, observed, work, iteration, 0);
        }
        return status;
    }
    /* chi2 and r lie side by side at the start of the workspace, and
     * work->chi2 has room for both: one copy, one wait. */
    spart_status status = spart_device_graph_launch(context, graph);
    int64_t channels = operators->num_channel;
    if (status == SPART_OK) {
        status = spart_device_copy_to_host(context, work->chi2, work->workspace,
                                           2 * (size_t)channels * sizeof(double));
    }
    if (status == SPART_OK) {
        memcpy(work->correlation, work->chi2 + channels, (size_t)channels * sizeof(double));
    }
    return status;
}

static double mean_merit(const mart_work *work, int64_t channels)
{
    double sum = 0.0;
    for (int64_t c = 0; c < channels; c++) {
        sum += work->chi2[c];
    }
    return sum / (double)channels;
}

/* The end of iteration `iteration`, whose merits are in work->chi2 and
 * work->correlation (and whose state was kept, when asked): the merits
 * recorded, the callback told, the rule checked. *stopped becomes 1 when
 * the callback or the rule ends the run; *merit_previous follows ctis. */
static spart_status conclude_iteration(spart_context *context, const spart_mart_options *options,
                                       spart_mart_result *result, const mart_work *work,
                                       int64_t iteration, double start_time, double *merit_previous,
                                       int *stopped)
{
    spart_status status =
        spart_mart_result_append_merits(context, result, work->chi2, work->correlation);
    if (status != SPART_OK) {
        return status;
    }
    int64_t channels = result->num_channel;
    double merit = mean_merit(work, channels);
    if (options->callback != NULL) {
        spart_mart_progress progress = {
            iteration, channels, work->chi2, work->correlation, merit, omp_get_wtime() - start_time,
            0};
        if (options->callback(options->callback_user, &progress) != 0) {
            snprintf(result->message, sizeof result->message,
                     "Stopped by the callback at iteration %lld.", (long long)iteration);
            *stopped = 1;
            return SPART_OK;
        }
    }
    if (spart_mart_rule_stops(options, *merit_previous, merit, iteration, result)) {
        result->success = 1;
        *stopped = 1;
        return SPART_OK;
    }
    *merit_previous = merit;
    return SPART_OK;
}

/* ---- batches of iterations on the device (see the top of this file) ---- */

/* Iterations recorded in one batch: one launch and one wait for this many.
 * Small, since a batch that the rule stops early still runs the prediction
 * of each iteration after the stop. */
enum { batch_iterations = 8 };

typedef struct mart_batch {
    spart_device_graph *graph;
    spart_mart_run_rule rule;
    int64_t scene_size;
    int keep;                    /* keep the state of each iteration */
    void *block;                 /* device: the state, then the merit rows */
    spart_mart_run_state *state; /* at the start of block */
    double *history;             /* batch_iterations rows of 2 num_channel values */
    double *kept;                /* device: batch_iterations states, or NULL */
    void *copy;                  /* host: block as the last batch left it */
    size_t block_bytes;
    /* what a recorded iteration needs */
    const spart_mart_operators *operators;
    const double *observed;
    mart_work *work;
    double gamma;
} mart_batch;

/* Room for the state at the start of the block, in whole doubles so that
 * the rows after it stay aligned. */
static size_t state_bytes(void)
{
    size_t doubles = (sizeof(spart_mart_run_state) + sizeof(double) - 1) / sizeof(double);
    return doubles * sizeof(double);
}

static void free_batch(spart_context *context, mart_batch *batch)
{
    spart_device_graph_free(batch->graph);
    spart_device_free(context, batch->block);
    spart_device_free(context, batch->kept);
    spart_context_free_memory(context, batch->copy);
    batch->graph = NULL;
    batch->block = NULL;
    batch->kept = NULL;
    batch->copy = NULL;
}

/* Whether iterations can be recorded as CUDA graphs: device operators
 * that only enqueue work, and more than one iteration to replay. */
static int records_graphs(const spart_mart_operators *operators, const spart_mart_options *options)
{
    return operators->on_device && operators->capturable && options->max_iterations > 1;
}

/* Whether the run can go in batches: graphs, and no callback (which sees
 * every iteration on the host and may stop the run). */
static int runs_in_batches(const spart_mart_operators *operators, const spart_mart_options *options)
{
    return records_graphs(operators, options) && options->callback == NULL;
}

/* batch_iterations iterations as the graph replays them: the update that
 * ends the previous iteration, the prediction and merits of the new state,
 * its state kept (when asked), and the rule on the device, every step but
 * the prediction reading the stop flag. */
static spart_status record_batch(void *user, spart_context *context)
{
    mart_batch *batch = user;
    int64_t channels = batch->rule.num_channel;
    batch->work->gate = batch->state;
    spart_status status = SPART_OK;
    for (int k = 0; k < batch_iterations && status == SPART_OK; k++) {
        status = advance(context, batch->operators, batch->work, batch->gamma);
        if (status == SPART_OK) {
            status =
                predict_and_measure(context, batch->operators, batch->observed, batch->work, 1, 1);
        }
        if (status == SPART_OK && batch->keep) {
            status = spart_mart_keep(context, batch->work->scene, batch->scene_size,
                                     batch->kept + k * batch->scene_size, batch->state,
                                     batch->work->on_device);
        }
        if (status == SPART_OK) {
            status = spart_mart_decide(context, &batch->rule, batch->work->workspace,
                                       batch->history + k * 2 * channels, batch->state,
                                       batch->work->on_device);
        }
    }
    batch->work->gate = NULL;
    return status;
}

/* Allocate a batch and record its graph. */
static spart_status prepare_batch(spart_context *context, const spart_mart_operators *operators,
                                  const double *observed, const spart_mart_options *options,
                                  mart_work *work, double gamma, mart_batch *batch)
{
    int64_t channels = operators->num_channel;
    memset(batch, 0, sizeof *batch);
    batch->rule.num_channel = channels;
    batch->rule.max_iterations = options->max_iterations;
    batch->rule.stop_below_threshold = options->stop_rule == SPART_MART_STOP_THRESHOLD;
    batch->rule.stop_at_target = options->stop_rule == SPART_MART_STOP_TARGET;
    batch->rule.threshold = options->threshold;
    batch->rule.target = options->target;
    batch->scene_size = operators->scene_size;
    batch->keep = options->keep_intermediate != 0;
    batch->operators = operators;
    batch->observed = observed;
    batch->work = work;
    batch->gamma = gamma;
    batch->block_bytes = state_bytes() + (size_t)(batch_iterations * 2 * channels) * sizeof(double);
    spart_status status = spart_device_malloc(context, batch->block_bytes, &batch->block);
    if (status == SPART_OK && batch->keep) {
        size_t kept_bytes = (size_t)(batch_iterations * batch->scene_size) * sizeof(double);
        status = spart_device_malloc(context, kept_bytes, (void **)&batch->kept);
    }
    if (status == SPART_OK) {
        batch->copy = spart_context_malloc(context, batch->block_bytes);
        status = batch->copy != NULL ? SPART_OK : SPART_ERROR_OUT_OF_MEMORY;
        if (status != SPART_OK) {
            spart_context_set_error(context, status, "mart: could not allocate %zu bytes",
                                    batch->block_bytes);
        }
    }
    if (status == SPART_OK) {
        batch->state = batch->block;
        batch->history = (double *)((char *)batch->block + state_bytes());
        status = spart_device_graph_record(context, record_batch, batch, &batch->graph);
    }
    if (status != SPART_OK) {
        free_batch(context, batch);
    }
    return status;
}

/* The device's state as the host left it after `iterations` iterations,
 * the last merit that did not stop the run being `merit_previous`. */
static spart_status start_batches(spart_context *context, mart_batch *batch, int64_t iterations,
                                  double merit_previous)
{
    spart_mart_run_state state;
    memset(&state, 0, sizeof state);
    state.stopped = SPART_MART_RUN_GOING;
    state.iterations = iterations;
    state.merit_previous = merit_previous;
    return spart_device_copy_to_device(context, batch->state, &state, sizeof state);
}

/* One batch: the graph launched, its merits (and the device's state) read
 * with one copy, then the host's walk over them from iteration *iteration,
 * as the one-by-one loop walks them, checking that the device stopped
 * where the host does. */
static spart_status run_batch(spart_context *context, const spart_mart_options *options,
                              spart_mart_result *result, mart_work *work, mart_batch *batch,
                              double start_time, int64_t *iteration, double *merit_previous,
                              int *stopped, int64_t *solution_capacity)
{
    int64_t channels = batch->rule.num_channel;
    spart_status status = spart_device_graph_launch(context, batch->graph);
    if (status == SPART_OK && *iteration == 1 && !batch->keep) {
        /* the first block: the solution's fresh host pages mapped meanwhile */
        spart_mart_result_touch(context, result);
    }
    if (status == SPART_OK) {
        status = spart_device_copy_to_host(context, batch->copy, batch->block, batch->block_bytes);
    }
    const double *rows = (const double *)((const char *)batch->copy + state_bytes());
    for (int k = 0; k < batch_iterations && status == SPART_OK && !*stopped &&
                    *iteration < options->max_iterations;
         k++) {
        memcpy(work->chi2, rows + k * 2 * channels, (size_t)channels * sizeof(double));
        memcpy(work->correlation, rows + k * 2 * channels + channels,
               (size_t)channels * sizeof(double));
        if (batch->keep) {
            status =
                spart_mart_result_append_state(context, result, batch->kept + k * batch->scene_size,
                                               work->on_device, solution_capacity);
        }
        if (status == SPART_OK) {
            status = conclude_iteration(context, options, result, work, *iteration, start_time,
                                        merit_previous, stopped);
        }
        (*iteration)++;
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_mart_run_state device;
    memcpy(&device, batch->copy, sizeof device);
    int expected = *stopped                                ? SPART_MART_RUN_STOPPED_BY_RULE
                   : *iteration == options->max_iterations ? SPART_MART_RUN_OUT_OF_ITERATIONS
                                                           : SPART_MART_RUN_GOING;
    if (device.iterations != *iteration || device.stopped != expected) {
        return spart_context_set_error(context, SPART_ERROR_INTERNAL,
                                       "mart: the device's stopping rule left the run at %lld "
                                       "iterations (state %d) where the host's left it at %lld "
                                       "(state %d)",
                                       (long long)device.iterations, device.stopped,
                                       (long long)*iteration, expected);
    }
    return SPART_OK;
}

spart_status spart_mart_solve(spart_context *context, const spart_mart_operators *operators,
                              const double *observed, const spart_mart_options *options,
                              spart_mart_result **result)
{
    return spart_mart_solve_into(context, operators, observed, options, NULL, 0, result);
}

spart_status spart_mart_solve_into(spart_context *context, const spart_mart_operators *operators,
                                   const double *observed, const spart_mart_options *options,
                                   double *solution, int solution_on_device,
                                   spart_mart_result **result)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER, "mart: context is NULL");
    }
    spart_mart_options defaults;
    spart_mart_options_init(&defaults);
    if (options == NULL) {
        options = &defaults;
    }
    spart_status status = spart_mart_check_arguments(context, operators, observed, options, result);
    if (status != SPART_OK) {
        return status;
    }
    *result = NULL;
    double start_time = omp_get_wtime();
    int64_t channels = operators->num_channel;
    int64_t scene_size = operators->scene_size;
    double gamma = options->gamma > 0.0 ? options->gamma : 2.0 / (double)channels;

    spart_mart_result *made = spart_mart_result_allocate(
        context, operators, solution == NULL || options->keep_intermediate);
    if (made == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "mart: could not allocate the result");
    }
    made->gamma = gamma;
    mart_work work;
    status = allocate_work(context, operators, &work);
    if (status != SPART_OK) {
        spart_mart_result_free(made);
        return status;
    }
    status = start(context, operators, observed, options, &work);

    /* Device operators that only enqueue work: batches of iterations in
     * one graph each or, with a callback, one graph per iteration. */
    spart_device_graph *graph = NULL;
    mart_batch batch;
    memset(&batch, 0, sizeof batch);
    recorded_iteration recorded = {operators, observed, &work, gamma};
    if (status == SPART_OK && runs_in_batches(operators, options)) {
        status = prepare_batch(context, operators, observed, options, &work, gamma, &batch);
    } else if (status == SPART_OK && records_graphs(operators, options)) {
        status = spart_device_graph_record(context, record_iteration, &recorded, &graph);
    }

    int64_t solution_capacity = 1;
    double merit_previous = INFINITY;
    int stopped = 0;
    int64_t i = 0;
    while (status == SPART_OK && !stopped && i < options->max_iterations) {
        if (batch.graph != NULL && i > 0) {
            status = run_batch(context, options, made, &work, &batch, start_time, &i,
                               &merit_previous, &stopped, &solution_capacity);
            continue;
        }
        status = next_merits(context, operators, observed, &work, gamma, graph, i);
        if (status == SPART_OK && options->keep_intermediate) {
            status = spart_mart_result_append_state(context, made, work.scene, work.on_device,
                                                    &solution_capacity);
        }
        if (status == SPART_OK) {
            status = conclude_iteration(context, options, made, &work, i, start_time,
                                        &merit_previous, &stopped);
        }
        i++;
        /* the first iteration's merits came to the host: the device's
         * rule takes over from there */
        if (status == SPART_OK && !stopped && batch.graph != NULL) {
            status = start_batches(context, &batch, i, merit_previous);
        }
    }
    /* A run that used every iteration makes the last update too (ctis). */
    if (status == SPART_OK && !stopped) {
        status = advance(context, operators, &work, gamma);
    }
    spart_device_graph_free(graph);
    free_batch(context, &batch);
    if (status == SPART_OK && !stopped) {
        spart_mart_out_of_iterations(options, made);
    }
    /* The solution: without intermediate states, the current state (after
     * the last update when the iteration limit ended the run); with them,
     * ctis's solutions[-1], the state at the start of the last iteration
     * (docs/differences.md). */
    size_t scene_bytes = (size_t)scene_size * sizeof(double);
    if (status == SPART_OK && !options->keep_intermediate && solution == NULL) {
        status = copy_scene_to_host(context, &work, scene_size, made->solutions);
        made->num_solutions = 1;
    } else if (status == SPART_OK && !options->keep_intermediate) {
        status = spart_memory_copy(context, solution, solution_on_device != 0, work.scene,
                                   work.on_device, scene_bytes);
    } else if (status == SPART_OK && solution != NULL) {
        status = spart_memory_copy(context, solution, solution_on_device != 0,
                                   spart_mart_result_solution(made), 0, scene_bytes);
    }
    free_work(context, &work);
    if (status != SPART_OK) {
        spart_mart_result_free(made);
        return status;
    }
    *result = made;
    return SPART_OK;
}
