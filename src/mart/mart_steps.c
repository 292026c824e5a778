/*
 * src/mart/mart_steps.c: the MART steps of spart/mart_steps.h: the checks
 * of their arguments, then the operation of the table of their location
 * (src/mart/mart_ops.h), chosen here once a call and nowhere else.
 */
#include "core/internal.h"
#include "mart/mart_ops.h"
#include "mart/mart_steps.h"
#include "operator/operator_ops.h"
#include "operator/regridder_internal.h"
#include "spart/mart_steps.h"

#include <stdint.h>

spart_status spart_mart_select(spart_context *context, int on_device, const char *what,
                               const spart_mart_ops **ops)
{
    if (!on_device) {
        *ops = &spart_mart_host_ops;
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    (void)context, (void)what;
    *ops = &spart_mart_cuda_ops;
    return SPART_OK;
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: %s cannot run on a device (rebuild with "
                      "-DSPART_ENABLE_CUDA=ON)",
                      what);
#endif
}

/* a * b, or 0 when it does not fit in a size_t */
static size_t product_or_zero(size_t a, size_t b)
{
    return (b != 0 && a > SIZE_MAX / b) ? 0 : a * b;
}

size_t spart_mart_workspace_size(int64_t num_channel, int64_t image_size, int64_t scene_size)
{
    if (num_channel < 1 || image_size < 1 || scene_size < 1) {
        return 0;
    }
    /* In size_t with every step checked: sizes of 2^40 must give 0 (too
     * large), not a wrapped size. */
    size_t per_channel =
        product_or_zero((size_t)spart_mart_num_chunks(image_size), SPART_MART_PASS_SUMS);
    if (per_channel == 0 || per_channel > SIZE_MAX - 4) {
        return 0;
    }
    size_t merits = product_or_zero((size_t)num_channel, 4 + per_channel);
    size_t flat = 1 + (size_t)spart_mart_num_chunks(scene_size);
    if (merits == 0) {
        return 0;
    }
    return product_or_zero(merits > flat ? merits : flat, sizeof(double));
}

static spart_status check_sizes(spart_context *context, const char *what, int64_t a, int64_t b)
{
    if (a < 1 || b < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: sizes %lld and %lld must be at least 1", what, (long long)a,
                          (long long)b);
    }
    return SPART_OK;
}

static spart_status check_workspace(spart_context *context, const char *what, void *workspace,
                                    size_t bytes, size_t needed)
{
    if (workspace == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: workspace is NULL", what);
    }
    if (needed == 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: the sizes need a workspace of more bytes than a size_t counts",
                          what);
    }
    if (bytes < needed) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: workspace of %zu bytes, %zu needed "
                          "(spart_mart_workspace_size)",
                          what, bytes, needed);
    }
    return SPART_OK;
}

spart_status spart_mart_enter(spart_context *context, int on_device, const char *what, int count,
                              const void *const *pointers, const char *const *names,
                              const spart_mart_ops **ops, int *token)
{
    spart_status status = spart_mart_select(context, on_device, what, ops);
    if (status == SPART_OK) {
        status = (*ops)->begin(context, what, count, pointers, names, token);
    }
    return status;
}

spart_status spart_mart_clamp(spart_context *context, double *values, int64_t n, int on_device)
{
    const char *what = "mart_clamp";
    if (context == NULL || values == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_clamp: NULL argument");
    }
    spart_status status = check_sizes(context, what, n, 1);
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {values};
        const char *names[] = {"values"};
        status = spart_mart_enter(context, on_device, what, 1, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    return ops->end(context, ops->clamp(context, values, n), what, token);
}

spart_status spart_mart_noise_widths(spart_context *context, double *images, double *widths,
                                     int64_t n, double gain, double read_noise, int on_device)
{
    const char *what = "mart_noise_widths";
    if (context == NULL || images == NULL || widths == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_noise_widths: NULL argument");
    }
    spart_status status = check_sizes(context, what, n, 1);
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {images, widths};
        const char *names[] = {"images", "widths"};
        status = spart_mart_enter(context, on_device, what, 2, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    double read_variance = read_noise * read_noise;
    int error = ops->noise_widths(context, images, widths, n, gain, read_variance);
    return ops->end(context, error, what, token);
}

spart_status spart_mart_finish_prediction(spart_context *context, double *images, double *widths,
                                          int64_t n, double gain, double read_noise, int on_device)
{
    if (widths != NULL) {
        return spart_mart_noise_widths(context, images, widths, n, gain, read_noise, on_device);
    }
    return spart_mart_clamp(context, images, n, on_device);
}

/* spart_mart_merits and spart_mart_merits_gated. */
static spart_status merits(spart_context *context, const char *what, const double *observed,
                           const double *predicted, const double *widths, int64_t num_channel,
                           int64_t image_size, double *chi2, double *correlation, void *workspace,
                           size_t workspace_bytes, int on_device, const spart_mart_run_state *gate)
{
    if (context == NULL || observed == NULL || predicted == NULL || widths == NULL ||
        ((chi2 == NULL) != (correlation == NULL))) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "%s: NULL argument (chi2 and correlation may be NULL together only)",
                          what);
    }
    spart_status status = check_sizes(context, what, num_channel, image_size);
    const spart_mart_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_mart_select(context, on_device, what, &ops);
    }
    if (status == SPART_OK && (ops->needs_workspace || chi2 == NULL)) {
        status = check_workspace(context, what, workspace, workspace_bytes,
                                 spart_mart_workspace_size(num_channel, image_size, 1));
    }
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {observed, predicted, widths, workspace, gate};
        const char *names[] = {"observed", "predicted", "widths", "workspace", "gate"};
        status = ops->begin(context, what, 5, pointers, names, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->merits(context, observed, predicted, widths, num_channel, image_size, chi2,
                            correlation, workspace, gate);
    return ops->end(context, error, what, token);
}

spart_status spart_mart_merits(spart_context *context, const double *observed,
                               const double *predicted, const double *widths, int64_t num_channel,
                               int64_t image_size, double *chi2, double *correlation,
                               void *workspace, size_t workspace_bytes, int on_device)
{
    return merits(context, "mart_merits", observed, predicted, widths, num_channel, image_size,
                  chi2, correlation, workspace, workspace_bytes, on_device, NULL);
}

spart_status spart_mart_merits_gated(spart_context *context, const double *observed,
                                     const double *predicted, const double *widths,
                                     int64_t num_channel, int64_t image_size, void *workspace,
                                     size_t workspace_bytes, int on_device,
                                     const spart_mart_run_state *gate)
{
    return merits(context, "mart_merits_gated", observed, predicted, widths, num_channel,
                  image_size, NULL, NULL, workspace, workspace_bytes, on_device, gate);
}

spart_status spart_mart_finish_and_measure(spart_context *context, const double *observed,
                                           double *images, double *widths, int64_t num_channel,
                                           int64_t image_size, double gain, double read_noise,
                                           void *workspace, size_t workspace_bytes, int on_device,
                                           const spart_mart_run_state *gate)
{
    const char *what = "mart_finish_and_measure";
    if (context == NULL || observed == NULL || images == NULL || widths == NULL ||
        workspace == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_finish_and_measure: NULL argument");
    }
    spart_status status = check_sizes(context, what, num_channel, image_size);
    if (status == SPART_OK) {
        status = check_workspace(context, what, workspace, workspace_bytes,
                                 spart_mart_workspace_size(num_channel, image_size, 1));
    }
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {observed, images, widths, workspace, gate};
        const char *names[] = {"observed", "images", "widths", "workspace", "gate"};
        status = spart_mart_enter(context, on_device, what, 5, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->finish_and_merits(context, observed, images, widths, num_channel, image_size,
                                       gain, read_noise * read_noise, workspace, gate);
    return ops->end(context, error, what, token);
}

spart_status spart_mart_flat_guess(spart_context *context, const double *backprojected,
                                   int64_t num_channel, int64_t scene_size, double *scene,
                                   void *workspace, size_t workspace_bytes, int on_device)
{
    const char *what = "mart_flat_guess";
    if (context == NULL || backprojected == NULL || scene == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_flat_guess: NULL argument");
    }
    spart_status status = check_sizes(context, what, num_channel, scene_size);
    const spart_mart_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_mart_select(context, on_device, what, &ops);
    }
    if (status == SPART_OK && ops->needs_workspace) {
        status = check_workspace(context, what, workspace, workspace_bytes,
                                 spart_mart_workspace_size(num_channel, 1, scene_size));
    }
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {backprojected, scene, workspace};
        const char *names[] = {"backprojected", "scene", "workspace"};
        status = ops->begin(context, what, 3, pointers, names, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->flat_guess(context, backprojected, num_channel, scene_size, scene, workspace);
    return ops->end(context, error, what, token);
}

static spart_status check_gamma(spart_context *context, const char *what, double gamma)
{
    if (!(gamma > 0.0)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "%s: gamma = %g must be positive",
                          what, gamma);
    }
    return SPART_OK;
}

/* spart_mart_update and spart_mart_update_gated. */
static spart_status update(spart_context *context, const char *what, double *scene,
                           const double *observed_back, const double *predicted_back,
                           int64_t num_channel, int64_t scene_size, double gamma, int on_device,
                           const spart_mart_run_state *gate)
{
    if (context == NULL || scene == NULL || observed_back == NULL || predicted_back == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: NULL argument", what);
    }
    spart_status status = check_sizes(context, what, num_channel, scene_size);
    if (status == SPART_OK) {
        status = check_gamma(context, what, gamma);
    }
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {scene, observed_back, predicted_back, gate};
        const char *names[] = {"scene", "observed_back", "predicted_back", "gate"};
        status = spart_mart_enter(context, on_device, what, 4, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->update(context, scene, observed_back, predicted_back, num_channel, scene_size,
                            gamma, gate);
    return ops->end(context, error, what, token);
}

spart_status spart_mart_update(spart_context *context, double *scene, const double *observed_back,
                               const double *predicted_back, int64_t num_channel,
                               int64_t scene_size, double gamma, int on_device)
{
    return update(context, "mart_update", scene, observed_back, predicted_back, num_channel,
                  scene_size, gamma, on_device, NULL);
}

spart_status spart_mart_update_gated(spart_context *context, double *scene,
                                     const double *observed_back, const double *predicted_back,
                                     int64_t num_channel, int64_t scene_size, double gamma,
                                     int on_device, const spart_mart_run_state *gate)
{
    return update(context, "mart_update_gated", scene, observed_back, predicted_back, num_channel,
                  scene_size, gamma, on_device, gate);
}

/* The checks of spart_mart_update_from_images; the table of backward's
 * location into *ops, the scene size into *scene_size. */
static spart_status check_update_from_images(spart_context *context,
                                             const spart_regridder *backward, const double *images,
                                             const double *observed_back, int64_t num_channel,
                                             double gamma, const double *scene,
                                             const double *predicted_back,
                                             const spart_mart_ops **ops, int64_t *scene_size)
{
    const char *what = "mart_update_from_images";
    *scene_size = 0;
    if (backward == NULL || images == NULL || observed_back == NULL || scene == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_update_from_images: NULL argument");
    }
    spart_status status = spart_mart_select(context, backward->ops->on_device, what, ops);
    if (status != SPART_OK) {
        return status;
    }
    if (predicted_back == NULL && !(*ops)->fusable(backward)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_update_from_images: predicted_back is NULL, and this backward "
                          "regridder needs it (with batch axes, or on a device with long rows)");
    }
    status = check_sizes(context, what, num_channel, 1);
    if (status == SPART_OK) {
        status = check_gamma(context, what, gamma);
    }
    int64_t rows = spart_shape_size(&backward->output.shape);
    if (status == SPART_OK && (rows < num_channel || rows % num_channel != 0)) {
        status = spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                            "mart_update_from_images: the backward regridder gives %lld values, "
                            "which is not %lld channels of one scene each",
                            (long long)rows, (long long)num_channel);
    }
    *scene_size = status == SPART_OK ? rows / num_channel : 0;
    return status;
}

spart_status spart_mart_update_from_images_gated(spart_context *context,
                                                 const spart_regridder *backward,
                                                 const double *images, const double *observed_back,
                                                 int64_t num_channel, double gamma, double *scene,
                                                 double *predicted_back,
                                                 const spart_mart_run_state *gate)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    const spart_mart_ops *ops = NULL;
    int64_t scene_size = 0;
    spart_status status =
        check_update_from_images(context, backward, images, observed_back, num_channel, gamma,
                                 scene, predicted_back, &ops, &scene_size);
    if (status != SPART_OK) {
        return status;
    }
    if (ops->fusable(backward)) {
        return ops->backproject_update(context, backward, images, observed_back, scene, num_channel,
                                       scene_size, gamma, gate);
    }
    spart_array x = {images, backward->input.shape};
    status = spart_regridder_apply(context, backward, &x, predicted_back, num_channel * scene_size);
    if (status == SPART_OK) {
        status = update(context, "mart_update", scene, observed_back, predicted_back, num_channel,
                        scene_size, gamma, backward->ops->on_device, gate);
    }
    return status;
}

spart_status spart_mart_update_from_images(spart_context *context, const spart_regridder *backward,
                                           const double *images, const double *observed_back,
                                           int64_t num_channel, double gamma, double *scene,
                                           double *predicted_back)
{
    return spart_mart_update_from_images_gated(context, backward, images, observed_back,
                                               num_channel, gamma, scene, predicted_back, NULL);
}

/* ---- runs in batches ---- */

spart_status spart_mart_decide(spart_context *context, const spart_mart_run_rule *rule,
                               const double *merits_row, double *history_row,
                               spart_mart_run_state *state, int on_device)
{
    const char *what = "mart_decide";
    if (context == NULL || rule == NULL || merits_row == NULL || history_row == NULL ||
        state == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_decide: NULL argument");
    }
    spart_status status = check_sizes(context, what, rule->num_channel, rule->max_iterations);
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {merits_row, history_row, state};
        const char *names[] = {"merits", "history_row", "state"};
        status = spart_mart_enter(context, on_device, what, 3, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    return ops->end(context, ops->decide(context, rule, merits_row, history_row, state), what,
                    token);
}

spart_status spart_mart_keep(spart_context *context, const double *scene, int64_t scene_size,
                             double *kept, const spart_mart_run_state *state, int on_device)
{
    const char *what = "mart_keep";
    if (context == NULL || scene == NULL || kept == NULL || state == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_keep: NULL argument");
    }
    spart_status status = check_sizes(context, what, scene_size, 1);
    const spart_mart_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {scene, kept, state};
        const char *names[] = {"scene", "kept", "state"};
        status = spart_mart_enter(context, on_device, what, 3, pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    return ops->end(context, ops->keep(context, scene, scene_size, kept, state), what, token);
}
