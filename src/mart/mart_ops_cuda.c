/*
 * src/mart/mart_ops_cuda.c: the CUDA device's table of MART operations
 * (src/mart/mart_ops.h): each enters the context's device, checks that
 * its arrays are that device's memory, enqueues the kernels of
 * kernels/mart_steps.cu on the context's stream and leaves. Built only
 * with CUDA (without it spart_mart_select says SPART_ERROR_NO_DEVICE).
 */
#include <stddef.h>

#include "core/internal.h"
#include "device/device_select.h"
#include "mart/mart_ops.h"
#include "mart/mart_steps.h"
#include "mart/backproject_update.h"

/* The kernels take the public run state under their own name (they see
 * src/ only): the same layout and the same constants. */
_Static_assert(sizeof(spart_mart_run_state) == sizeof(spart_mart_device_state),
               "spart_mart_run_state and spart_mart_device_state differ");
_Static_assert(offsetof(spart_mart_run_state, stopped) ==
                       offsetof(spart_mart_device_state, stopped) &&
                   offsetof(spart_mart_run_state, iterations) ==
                       offsetof(spart_mart_device_state, iterations) &&
                   offsetof(spart_mart_run_state, merit_previous) ==
                       offsetof(spart_mart_device_state, merit_previous),
               "spart_mart_run_state and spart_mart_device_state differ");
_Static_assert((int)SPART_MART_RUN_GOING == (int)SPART_MART_DEVICE_RUNNING &&
                   (int)SPART_MART_RUN_STOPPED_BY_RULE == (int)SPART_MART_DEVICE_STOPPED_BY_RULE &&
                   (int)SPART_MART_RUN_OUT_OF_ITERATIONS ==
                       (int)SPART_MART_DEVICE_OUT_OF_ITERATIONS,
               "the run states' constants differ");

/* The stop flag the kernels read: the gate's `stopped`, or NULL. */
static const int *stop_flag(const spart_mart_run_state *gate)
{
    return gate != NULL ? &gate->stopped : NULL;
}

static spart_status cuda_begin(spart_context *context, const char *what, int count,
                               const void *const *pointers, const char *const *names, int *token)
{
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    for (int k = 0; k < count && status == SPART_OK; k++) {
        if (pointers[k] != NULL) { /* NULL: an optional array left out (a gate) */
            status = spart_device_check_pointer(context, pointers[k], context->cuda_device, what,
                                                names[k]);
        }
    }
    if (status != SPART_OK) {
        spart_device_leave(previous);
    }
    *token = previous;
    return status;
}

static spart_status cuda_end(spart_context *context, int error, const char *what, int token)
{
    spart_status status = SPART_OK;
    if (error != 0) {
        status = spart_fail(context, SPART_ERROR_INTERNAL, "%s: CUDA error (%s)", what,
                            spart_mart_device_error_string(error));
    }
    spart_device_leave(token);
    return status;
}

static int cuda_clamp(spart_context *context, double *values, int64_t n)
{
    return spart_mart_device_clamp(values, n, context->cuda_stream);
}

static int cuda_noise_widths(spart_context *context, double *images, double *widths, int64_t n,
                             double gain, double read_variance)
{
    return spart_mart_device_noise_widths(images, widths, n, gain, read_variance,
                                          context->cuda_stream);
}

static int cuda_merits(spart_context *context, const double *observed, const double *predicted,
                       const double *widths, int64_t num_channel, int64_t image_size, double *chi2,
                       double *correlation, void *workspace, const spart_mart_run_state *gate)
{
    return spart_mart_device_merits(observed, predicted, widths, num_channel, image_size, chi2,
                                    correlation, workspace, stop_flag(gate), context->cuda_stream);
}

static int cuda_finish_and_merits(spart_context *context, const double *observed, double *images,
                                  double *widths, int64_t num_channel, int64_t image_size,
                                  double gain, double read_variance, void *workspace,
                                  const spart_mart_run_state *gate)
{
    return spart_mart_device_finish_and_merits(observed, images, widths, num_channel, image_size,
                                               gain, read_variance, workspace, stop_flag(gate),
                                               context->cuda_stream);
}

static int cuda_flat_guess(spart_context *context, const double *backprojected, int64_t num_channel,
                           int64_t scene_size, double *scene, void *workspace)
{
    return spart_mart_device_flat_guess(backprojected, num_channel, scene_size, scene, workspace,
                                        context->cuda_stream);
}

static int cuda_update(spart_context *context, double *scene, const double *observed_back,
                       const double *predicted_back, int64_t num_channel, int64_t scene_size,
                       double gamma, const spart_mart_run_state *gate)
{
    return spart_mart_device_update(scene, observed_back, predicted_back, num_channel, scene_size,
                                    gamma, stop_flag(gate), context->cuda_stream);
}

static int cuda_decide(spart_context *context, const spart_mart_run_rule *rule,
                       const double *merits, double *history_row, spart_mart_run_state *state)
{
    spart_mart_device_rule device_rule = {
        rule->num_channel,    rule->max_iterations, rule->stop_below_threshold,
        rule->stop_at_target, rule->threshold,      rule->target};
    return spart_mart_device_decide_launch(&device_rule, merits, history_row,
                                           (spart_mart_device_state *)(void *)state,
                                           context->cuda_stream);
}

static int cuda_keep(spart_context *context, const double *scene, int64_t scene_size, double *kept,
                     const spart_mart_run_state *state)
{
    return spart_mart_device_keep_launch(scene, scene_size, kept,
                                         (const spart_mart_device_state *)(const void *)state,
                                         context->cuda_stream);
}

static int cuda_update_frames(spart_context *context, double *scenes, const double *observed_back,
                              const double *predicted_back, int64_t num_frames, int64_t num_channel,
                              int64_t scene_size, double gamma, const spart_mart_run_state *states)
{
    return spart_mart_device_update_frames(
        scenes, observed_back, predicted_back, num_frames, num_channel, scene_size, gamma,
        (const spart_mart_device_state *)(const void *)states, context->cuda_stream);
}

static int cuda_decide_frames(spart_context *context, const spart_mart_run_rule *rule,
                              int64_t num_frames, const double *merits, double *history_rows,
                              spart_mart_run_state *states)
{
    spart_mart_device_rule device_rule = {
        rule->num_channel,    rule->max_iterations, rule->stop_below_threshold,
        rule->stop_at_target, rule->threshold,      rule->target};
    return spart_mart_device_decide_frames_launch(&device_rule, num_frames, merits, history_rows,
                                                  (spart_mart_device_state *)(void *)states,
                                                  context->cuda_stream);
}

static int cuda_flat_guess_frames(spart_context *context, const double *backprojected,
                                  int64_t num_frames, int64_t num_channel, int64_t scene_size,
                                  double *scenes, void *workspace, int64_t stride)
{
    return spart_mart_device_flat_guess_frames(backprojected, num_frames, num_channel, scene_size,
                                               scenes, workspace, stride, context->cuda_stream);
}

static int cuda_keep_frames(spart_context *context, const double *scenes, int64_t num_frames,
                            int64_t scene_size, double *kept, const spart_mart_run_state *states)
{
    return spart_mart_device_keep_frames_launch(
        scenes, num_frames, scene_size, kept, (const spart_mart_device_state *)(const void *)states,
        context->cuda_stream);
}

const spart_mart_ops spart_mart_cuda_ops = {
    .where = "CUDA device",
    .needs_workspace = 1,
    .begin = cuda_begin,
    .end = cuda_end,
    .clamp = cuda_clamp,
    .noise_widths = cuda_noise_widths,
    .merits = cuda_merits,
    .finish_and_merits = cuda_finish_and_merits,
    .flat_guess = cuda_flat_guess,
    .update = cuda_update,
    .decide = cuda_decide,
    .keep = cuda_keep,
    .update_frames = cuda_update_frames,
    .decide_frames = cuda_decide_frames,
    .keep_frames = cuda_keep_frames,
    .flat_guess_frames = cuda_flat_guess_frames,
    .fusable = spart_mart_cuda_fusable,
    .backproject_update = spart_mart_cuda_backproject_update,
    .backproject_update_frames = spart_mart_cuda_backproject_update_frames,
};
