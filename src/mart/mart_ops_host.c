/*
 * src/mart/mart_ops_host.c: the host's table of MART operations
 * (src/mart/mart_ops.h): the OpenMP loops of host/mart_steps.c, and the
 * stopping rule and the copy of a state of a run in batches (the same
 * operations in the same order as kernels/mart_steps.cu's decide_kernel
 * and keep_kernel). Host memory needs no checks: begin and end do nothing.
 */
#include <stddef.h>
#include <string.h>

#include "core/internal.h"
#include "mart/mart_ops.h"
#include "mart/mart_steps.h"
#include "operator/regridder_internal.h"

/* Whether a run has stopped (`gate`: its state, or NULL outside one). */
static int stopped(const spart_mart_run_state *gate)
{
    return gate != NULL && gate->stopped != SPART_MART_RUN_GOING;
}

static spart_status host_begin(spart_context *context, const char *what, int count,
                               const void *const *pointers, const char *const *names, int *token)
{
    (void)context, (void)what, (void)count, (void)pointers, (void)names;
    *token = 0;
    return SPART_OK;
}

static spart_status host_end(spart_context *context, int error, const char *what, int token)
{
    (void)context, (void)error, (void)what, (void)token;
    return SPART_OK;
}

static int host_clamp(spart_context *context, double *values, int64_t n)
{
    spart_mart_host_clamp(values, n, spart_threads(context));
    return 0;
}

static int host_noise_widths(spart_context *context, double *images, double *widths, int64_t n,
                             double gain, double read_variance)
{
    spart_mart_host_noise_widths(images, widths, n, gain, read_variance, spart_threads(context));
    return 0;
}

static int host_merits(spart_context *context, const double *observed, const double *predicted,
                       const double *widths, int64_t num_channel, int64_t image_size, double *chi2,
                       double *correlation, void *workspace, const spart_mart_run_state *gate)
{
    if (stopped(gate)) {
        return 0;
    }
    if (chi2 == NULL) { /* the results stay in the workspace, as on a device */
        chi2 = workspace;
        correlation = chi2 + num_channel;
    }
    spart_mart_host_merits(observed, predicted, widths, num_channel, image_size, chi2, correlation,
                           spart_threads(context));
    return 0;
}

static int host_finish_and_merits(spart_context *context, const double *observed, double *images,
                                  double *widths, int64_t num_channel, int64_t image_size,
                                  double gain, double read_variance, void *workspace,
                                  const spart_mart_run_state *gate)
{
    host_noise_widths(context, images, widths, num_channel * image_size, gain, read_variance);
    return host_merits(context, observed, images, widths, num_channel, image_size, NULL, NULL,
                       workspace, gate);
}

static int host_flat_guess(spart_context *context, const double *backprojected, int64_t num_channel,
                           int64_t scene_size, double *scene, void *workspace)
{
    (void)context, (void)workspace;
    spart_mart_host_flat_guess(backprojected, num_channel, scene_size, scene);
    return 0;
}

static int host_update(spart_context *context, double *scene, const double *observed_back,
                       const double *predicted_back, int64_t num_channel, int64_t scene_size,
                       double gamma, const spart_mart_run_state *gate)
{
    if (!stopped(gate)) {
        spart_mart_host_update(scene, observed_back, predicted_back, num_channel, scene_size, gamma,
                               spart_threads(context));
    }
    return 0;
}

static int host_keep(spart_context *context, const double *scene, int64_t scene_size, double *kept,
                     const spart_mart_run_state *state)
{
    (void)context;
    if (!stopped(state) && kept != scene) {
        memcpy(kept, scene, (size_t)scene_size * sizeof(double));
    }
    return 0;
}

/* Many frames at once: host/mart_frames.c, the states and the rule under
 * the kernels' names (their layouts are checked below). */
_Static_assert(sizeof(spart_mart_run_state) == sizeof(spart_mart_device_state) &&
                   offsetof(spart_mart_run_state, stopped) ==
                       offsetof(spart_mart_device_state, stopped) &&
                   offsetof(spart_mart_run_state, iterations) ==
                       offsetof(spart_mart_device_state, iterations) &&
                   offsetof(spart_mart_run_state, merit_previous) ==
                       offsetof(spart_mart_device_state, merit_previous),
               "spart_mart_run_state and spart_mart_device_state differ");

static spart_mart_device_rule device_rule_of(const spart_mart_run_rule *rule)
{
    spart_mart_device_rule device = {
        rule->num_channel,    rule->max_iterations, rule->stop_below_threshold,
        rule->stop_at_target, rule->threshold,      rule->target};
    return device;
}

static int host_update_frames(spart_context *context, double *scenes, const double *observed_back,
                              const double *predicted_back, int64_t num_frames, int64_t num_channel,
                              int64_t scene_size, double gamma, const spart_mart_run_state *states)
{
    spart_mart_host_update_frames(
        scenes, observed_back, predicted_back, num_frames, num_channel, scene_size, gamma,
        (const spart_mart_device_state *)(const void *)states, spart_threads(context));
    return 0;
}

static int host_decide_frames(spart_context *context, const spart_mart_run_rule *rule,
                              int64_t num_frames, const double *merits, double *history_rows,
                              spart_mart_run_state *states)
{
    (void)context;
    spart_mart_device_rule device = device_rule_of(rule);
    spart_mart_host_decide_frames(&device, num_frames, merits, history_rows,
                                  (spart_mart_device_state *)(void *)states);
    return 0;
}

/* One frame's decision: host/mart_frames.c's for one frame, whose merits
 * (chi2, then r) and history row lie as this one's. */
static int host_decide(spart_context *context, const spart_mart_run_rule *rule,
                       const double *merits, double *history_row, spart_mart_run_state *state)
{
    return host_decide_frames(context, rule, 1, merits, history_row, state);
}

static int host_flat_guess_frames(spart_context *context, const double *backprojected,
                                  int64_t num_frames, int64_t num_channel, int64_t scene_size,
                                  double *scenes, void *workspace, int64_t stride)
{
    (void)context, (void)workspace, (void)stride;
    spart_mart_host_flat_guess_frames(backprojected, num_frames, num_channel, scene_size, scenes);
    return 0;
}

static int host_keep_frames(spart_context *context, const double *scenes, int64_t num_frames,
                            int64_t scene_size, double *kept, const spart_mart_run_state *states)
{
    (void)context;
    spart_mart_host_keep_frames(scenes, num_frames, scene_size, kept,
                                (const spart_mart_device_state *)(const void *)states);
    return 0;
}

/* A host regridder (the table is chosen by where it lives) whose
 * one-vector product reads and writes its values as they lie (no batch
 * axes). */
static int host_fusable(const spart_regridder *backward)
{
    return backward->input.num_batch == 1 && backward->output.num_batch == 1;
}

static spart_status host_backproject_update(spart_context *context, const spart_regridder *backward,
                                            const double *images, const double *observed_back,
                                            double *scene, int64_t num_channel, int64_t scene_size,
                                            double gamma, const spart_mart_run_state *gate)
{
    if (stopped(gate)) {
        return SPART_OK;
    }
    spart_backward_rows rows = {&backward->csr, &backward->plan,
                                (int)spart_host_csr_simd_level(&backward->csr, &backward->plan)};
    spart_mart_host_backproject_update(scene, &rows, images, observed_back, num_channel, scene_size,
                                       gamma, spart_threads(context));
    return SPART_OK;
}

static spart_status
host_backproject_update_frames(spart_context *context, const spart_regridder *backward,
                               const double *images, const double *observed_back, double *scenes,
                               int64_t num_frames, int64_t num_channel, int64_t scene_size,
                               double gamma, const spart_mart_run_state *states)
{
    int64_t image_values = backward->csr.num_columns;
    int64_t channel_scenes = num_channel * scene_size;
    for (int64_t f = 0; f < num_frames; f++) {
        spart_status status = host_backproject_update(
            context, backward, images + f * image_values, observed_back + f * channel_scenes,
            scenes + f * scene_size, num_channel, scene_size, gamma,
            states != NULL ? states + f : NULL);
        if (status != SPART_OK) {
            return status;
        }
    }
    return SPART_OK;
}

const spart_mart_ops spart_mart_host_ops = {
    .where = "host",
    .needs_workspace = 0,
    .begin = host_begin,
    .end = host_end,
    .clamp = host_clamp,
    .noise_widths = host_noise_widths,
    .merits = host_merits,
    .finish_and_merits = host_finish_and_merits,
    .flat_guess = host_flat_guess,
    .update = host_update,
    .decide = host_decide,
    .keep = host_keep,
    .update_frames = host_update_frames,
    .decide_frames = host_decide_frames,
    .keep_frames = host_keep_frames,
    .flat_guess_frames = host_flat_guess_frames,
    .fusable = host_fusable,
    .backproject_update = host_backproject_update,
    .backproject_update_frames = host_backproject_update_frames,
};
