/*
 * src/mart/mart_frames.c: the MART steps of many frames at once
 * (spart_mart_update_frames, spart_mart_update_from_images_frames,
 * spart_mart_decide_frames, spart_mart_keep_frames of spart/mart_steps.h): the checks of their
 * arguments, then the operation of the table of their location
 * (src/mart/mart_ops.h), as src/mart/mart_steps.c does for one frame.
 */
#include <stdint.h>

#include "core/internal.h"
#include "mart/mart_ops.h"
#include "mart/mart_steps.h"
#include "operator/operator_ops.h"
#include "operator/regridder_internal.h"
#include "spart/mart_steps.h"

/* Sizes of at least 1 whose products (the arrays' lengths) fit an int64. */
static spart_status check_frame_sizes(spart_context *context, const char *what, int64_t frames,
                                      int64_t channels, int64_t scene_size)
{
    if (frames < 1 || channels < 1 || scene_size < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: num_frames (%lld), num_channel (%lld) and the scene size (%lld) "
                          "must be at least 1",
                          what, (long long)frames, (long long)channels, (long long)scene_size);
    }
    if (channels > INT64_MAX / scene_size || frames > INT64_MAX / (channels * scene_size)) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "%s: %lld frames of %lld channels of %lld values do not fit an int64",
                          what, (long long)frames, (long long)channels, (long long)scene_size);
    }
    return SPART_OK;
}

spart_status spart_mart_update_frames(spart_context *context, double *scenes,
                                      const double *observed_back, const double *predicted_back,
                                      int64_t num_frames, int64_t num_channel, int64_t scene_size,
                                      double gamma, int on_device,
                                      const spart_mart_run_state *states)
{
    const char *what = "mart_update_frames";
    if (context == NULL || scenes == NULL || observed_back == NULL || predicted_back == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_update_frames: NULL argument (only states may be NULL)");
    }
    spart_status status = check_frame_sizes(context, what, num_frames, num_channel, scene_size);
    if (status == SPART_OK && !(gamma > 0.0)) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "mart_update_frames: gamma = %g must be positive", gamma);
    }
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {scenes, observed_back, predicted_back, states};
        const char *names[] = {"scenes", "observed_back", "predicted_back", "states"};
        status = spart_mart_enter(context, on_device, what, 4, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->update_frames(context, scenes, observed_back, predicted_back, num_frames,
                                   num_channel, scene_size, gamma, states);
    return ops->end(context, error, what, token);
}

spart_status spart_mart_decide_frames(spart_context *context, const spart_mart_run_rule *rule,
                                      int64_t num_frames, const double *merits,
                                      double *history_rows, spart_mart_run_state *states,
                                      int on_device)
{
    const char *what = "mart_decide_frames";
    if (context == NULL || rule == NULL || merits == NULL || history_rows == NULL ||
        states == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_decide_frames: NULL argument");
    }
    spart_status status = check_frame_sizes(context, what, num_frames, rule->num_channel, 2);
    if (status == SPART_OK && rule->max_iterations < 1) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "mart_decide_frames: rule->max_iterations = %lld must be at least 1",
                            (long long)rule->max_iterations);
    }
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {merits, history_rows, states};
        const char *names[] = {"merits", "history_rows", "states"};
        status = spart_mart_enter(context, on_device, what, 3, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->decide_frames(context, rule, num_frames, merits, history_rows, states);
    return ops->end(context, error, what, token);
}

spart_status spart_mart_flat_guess_frames(spart_context *context, const double *backprojected,
                                          int64_t num_frames, int64_t num_channel,
                                          int64_t scene_size, double *scenes, void *workspace,
                                          size_t workspace_bytes, int on_device)
{
    const char *what = "mart_flat_guess_frames";
    if (context == NULL || backprojected == NULL || scenes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_flat_guess_frames: NULL argument");
    }
    spart_status status = check_frame_sizes(context, what, num_frames, num_channel, scene_size);
    const spart_mart_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_mart_select(context, on_device, what, &ops);
    }
    /* frame f's sums in its own one-frame workspace, f of them side by side */
    size_t frame_bytes =
        status == SPART_OK ? spart_mart_workspace_size(num_channel, 1, scene_size) : 0;
    if (status == SPART_OK && ops->needs_workspace) {
        if (workspace == NULL) {
            status = spart_fail(context, SPART_ERROR_NULL_POINTER,
                                "mart_flat_guess_frames: workspace is NULL");
        } else if (frame_bytes == 0 || (size_t)num_frames > SIZE_MAX / frame_bytes) {
            status = spart_fail(context, SPART_ERROR_OVERFLOW,
                                "mart_flat_guess_frames: the workspace of %lld frames is more "
                                "bytes than a size_t counts",
                                (long long)num_frames);
        } else if (workspace_bytes < (size_t)num_frames * frame_bytes) {
            status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                "mart_flat_guess_frames: workspace of %zu bytes, %zu needed "
                                "(num_frames x spart_mart_workspace_size(num_channel, 1, "
                                "scene_size))",
                                workspace_bytes, (size_t)num_frames * frame_bytes);
        }
    }
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {backprojected, scenes, workspace};
        const char *names[] = {"backprojected", "scenes", "workspace"};
        status = ops->begin(context, what, 3, pointers, names, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->flat_guess_frames(context, backprojected, num_frames, num_channel, scene_size,
                                       scenes, workspace, (int64_t)(frame_bytes / sizeof(double)));
    return ops->end(context, error, what, token);
}

spart_status spart_mart_keep_frames(spart_context *context, const double *scenes,
                                    int64_t num_frames, int64_t scene_size, double *kept,
                                    const spart_mart_run_state *states, int on_device)
{
    const char *what = "mart_keep_frames";
    if (context == NULL || scenes == NULL || kept == NULL || states == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_keep_frames: NULL argument");
    }
    spart_status status = check_frame_sizes(context, what, num_frames, 1, scene_size);
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {scenes, kept, states};
        const char *names[] = {"scenes", "kept", "states"};
        status = spart_mart_enter(context, on_device, what, 3, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->keep_frames(context, scenes, num_frames, scene_size, kept, states);
    return ops->end(context, error, what, token);
}

spart_status
spart_mart_update_from_images_frames(spart_context *context, const spart_regridder *backward,
                                     const double *images, const double *observed_back,
                                     int64_t num_frames, int64_t num_channel, double gamma,
                                     double *scenes, double *predicted_back, void *workspace,
                                     size_t workspace_bytes, const spart_mart_run_state *states)
{
    const char *what = "mart_update_from_images_frames";
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (backward == NULL || images == NULL || observed_back == NULL || scenes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_update_from_images_frames: NULL argument");
    }
    const spart_mart_ops *ops = NULL;
    spart_status status = spart_mart_select(context, backward->ops->on_device, what, &ops);
    int64_t rows = spart_shape_size(&backward->output.shape);
    if (status == SPART_OK && (num_channel < 1 || rows % num_channel != 0)) {
        status = spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                            "mart_update_from_images_frames: the backward regridder gives %lld "
                            "values, which is not %lld channels of one scene each",
                            (long long)rows, (long long)num_channel);
    }
    int64_t scene_size = status == SPART_OK ? rows / num_channel : 0;
    if (status == SPART_OK) {
        status = check_frame_sizes(context, what, num_frames, num_channel, scene_size);
    }
    if (status == SPART_OK && !(gamma > 0.0)) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "mart_update_from_images_frames: gamma = %g must be positive", gamma);
    }
    int fused = status == SPART_OK && ops->fusable(backward);
    if (status == SPART_OK && !fused && predicted_back == NULL) {
        status = spart_fail(context, SPART_ERROR_NULL_POINTER,
                            "mart_update_from_images_frames: predicted_back is NULL, and this "
                            "backward regridder needs it (with batch axes, or on a device with "
                            "long rows)");
    }
    if (status != SPART_OK) {
        return status;
    }
    if (fused) {
        return ops->backproject_update_frames(context, backward, images, observed_back, scenes,
                                              num_frames, num_channel, scene_size, gamma, states);
    }
    spart_shape input = backward->input.shape;
    if (input.ndim >= SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "mart_update_from_images_frames: the backward regridder's input has "
                          "%d axes; a leading axis of frames does not fit",
                          input.ndim);
    }
    spart_array x = {images, {input.ndim + 1, {num_frames}}};
    for (int k = 0; k < input.ndim; k++) {
        x.shape.dims[k + 1] = input.dims[k];
    }
    status = workspace != NULL
                 ? spart_regridder_apply_workspace(context, backward, &x, predicted_back,
                                                   num_frames * rows, workspace, workspace_bytes)
                 : spart_regridder_apply(context, backward, &x, predicted_back, num_frames * rows);
    if (status == SPART_OK) {
        status = spart_mart_update_frames(context, scenes, observed_back, predicted_back,
                                          num_frames, num_channel, scene_size, gamma,
                                          backward->ops->on_device, states);
    }
    return status;
}

int spart_mart_update_from_images_is_one_pass(const spart_regridder *backward)
{
    const spart_mart_ops *ops = NULL;
    if (backward == NULL || spart_mart_select(NULL, backward->ops->on_device,
                                              "mart_update_from_images", &ops) != SPART_OK) {
        return 0;
    }
    return ops->fusable(backward);
}
