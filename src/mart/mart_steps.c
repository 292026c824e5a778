/*
 * src/mart/mart_steps.c: the MART building blocks of spart/mart.h: argument
 * checks, then the host loops (host/mart_steps.c) or the device kernels
 * (kernels/mart_steps.cu).
 */
#include "device/device_select.h"
#include "core/internal.h"
#include "mart/mart_device_batch.h"
#include "mart/mart_steps.h"
#include "operator/regridder_internal.h"
#include "spart/mart.h"

size_t spart_mart_workspace_size(int64_t num_channel, int64_t image_size, int64_t scene_size)
{
    if (num_channel < 1 || image_size < 1 || scene_size < 1) {
        return 0;
    }
    size_t merits = (size_t)(4 * num_channel + num_channel * spart_mart_num_chunks(image_size) *
                                                   SPART_MART_PASS_SUMS);
    size_t flat = (size_t)(1 + spart_mart_num_chunks(scene_size));
    return (merits > flat ? merits : flat) * sizeof(double);
}

/* Enter the device for a device step (and check that every array is
 * memory of that device: a kernel reading host memory would crash);
 * nothing for a host step. `pointers` and `names` list the arrays. */
static spart_status begin(spart_context *context, int on_device, const char *what, int *previous,
                          int count, const void *const *pointers, const char *const *names)
{
    *previous = -1;
    if (!on_device) {
        return SPART_OK;
    }
    spart_status status = spart_device_enter(context, what, previous);
    for (int k = 0; k < count && status == SPART_OK; k++) {
        status =
            spart_device_check_pointer(context, pointers[k], context->cuda_device, what, names[k]);
    }
    if (status != SPART_OK) {
        spart_device_leave(*previous);
    }
    return status;
}

/* The end of a device step: leave the device, turn a CUDA error into a
 * status. */
static spart_status finish(spart_context *context, int on_device, int error, const char *what,
                           int previous)
{
    spart_status status = SPART_OK;
    if (on_device && error != 0) {
        status = spart_fail(context, SPART_ERROR_INTERNAL, "%s: CUDA error (%s)", what,
                            spart_mart_device_error_string(error));
    }
    if (on_device) {
        spart_device_leave(previous);
    }
    return status;
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
    if (bytes < needed) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: workspace of %zu bytes, %zu needed "
                          "(spart_mart_workspace_size)",
                          what, bytes, needed);
    }
    return SPART_OK;
}

#if !defined(SPART_HAVE_CUDA)
/* Without CUDA the device steps are never reached (begin fails with
 * SPART_ERROR_NO_DEVICE); these keep the calls linkable. */
int spart_mart_device_clamp(double *values, int64_t n, void *stream)
{
    (void)values, (void)n, (void)stream;
    return -1;
}
int spart_mart_device_noise_widths(double *images, double *widths, int64_t n, double gain,
                                   double read_variance, void *stream)
{
    (void)images, (void)widths, (void)n, (void)gain, (void)read_variance, (void)stream;
    return -1;
}
int spart_mart_device_merits(const double *observed, const double *predicted, const double *widths,
                             int64_t num_channel, int64_t image_size, double *chi2,
                             double *correlation, void *workspace, const int *stop, void *stream)
{
    (void)observed, (void)predicted, (void)widths, (void)num_channel, (void)image_size;
    (void)chi2, (void)correlation, (void)workspace, (void)stop, (void)stream;
    return -1;
}
int spart_mart_device_finish_and_merits(const double *observed, double *images, double *widths,
                                        int64_t num_channel, int64_t image_size, double gain,
                                        double read_variance, void *workspace, const int *stop,
                                        void *stream)
{
    (void)observed, (void)images, (void)widths, (void)num_channel, (void)image_size, (void)gain;
    (void)read_variance, (void)workspace, (void)stop, (void)stream;
    return -1;
}
int spart_mart_device_flat_guess(const double *backprojected, int64_t num_channel,
                                 int64_t scene_size, double *scene, void *workspace, void *stream)
{
    (void)backprojected, (void)num_channel, (void)scene_size, (void)scene, (void)workspace;
    (void)stream;
    return -1;
}
int spart_mart_device_update(double *scene, const double *observed_back,
                             const double *predicted_back, int64_t num_channel, int64_t scene_size,
                             double gamma, const int *stop, void *stream)
{
    (void)scene, (void)observed_back, (void)predicted_back, (void)num_channel;
    (void)scene_size, (void)gamma, (void)stop, (void)stream;
    return -1;
}
int spart_mart_device_decide_launch(const spart_mart_device_rule *rule, const double *merits,
                                    double *history_row, spart_mart_device_state *state,
                                    void *stream)
{
    (void)rule, (void)merits, (void)history_row, (void)state, (void)stream;
    return -1;
}
int spart_mart_device_keep_launch(const double *scene, int64_t scene_size, double *kept,
                                  const spart_mart_device_state *state, void *stream)
{
    (void)scene, (void)scene_size, (void)kept, (void)state, (void)stream;
    return -1;
}
const char *spart_mart_device_error_string(int error)
{
    (void)error;
    return "spart was built without CUDA";
}
#endif

spart_status spart_mart_clamp(spart_context *context, double *values, int64_t n, int on_device)
{
    if (context == NULL || values == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_clamp: NULL argument");
    }
    spart_status status = check_sizes(context, "mart_clamp", n, 1);
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {values};
        const char *names[] = {"values"};
        status = begin(context, on_device, "mart_clamp", &previous, 1, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = 0;
    if (on_device) {
        error = spart_mart_device_clamp(values, n, context->cuda_stream);
    } else {
        spart_mart_host_clamp(values, n, spart_threads(context));
    }
    return finish(context, on_device, error, "mart_clamp", previous);
}

spart_status spart_mart_noise_widths(spart_context *context, double *images, double *widths,
                                     int64_t n, double gain, double read_noise, int on_device)
{
    if (context == NULL || images == NULL || widths == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_noise_widths: NULL argument");
    }
    spart_status status = check_sizes(context, "mart_noise_widths", n, 1);
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {images, widths};
        const char *names[] = {"images", "widths"};
        status = begin(context, on_device, "mart_noise_widths", &previous, 2, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    double read_variance = read_noise * read_noise;
    int error = 0;
    if (on_device) {
        error = spart_mart_device_noise_widths(images, widths, n, gain, read_variance,
                                               context->cuda_stream);
    } else {
        spart_mart_host_noise_widths(images, widths, n, gain, read_variance,
                                     spart_threads(context));
    }
    return finish(context, on_device, error, "mart_noise_widths", previous);
}

spart_status spart_mart_merits(spart_context *context, const double *observed,
                               const double *predicted, const double *widths, int64_t num_channel,
                               int64_t image_size, double *chi2, double *correlation,
                               void *workspace, size_t workspace_bytes, int on_device)
{
    if (context == NULL || observed == NULL || predicted == NULL || widths == NULL ||
        (!on_device && (chi2 == NULL || correlation == NULL)) ||
        ((chi2 == NULL) != (correlation == NULL))) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_merits: NULL argument (chi2 and correlation may be NULL "
                          "together on the device only)");
    }
    spart_status status = check_sizes(context, "mart_merits", num_channel, image_size);
    if (status == SPART_OK && on_device) {
        status = check_workspace(context, "mart_merits", workspace, workspace_bytes,
                                 spart_mart_workspace_size(num_channel, image_size, 1));
    }
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {observed, predicted, widths, workspace};
        const char *names[] = {"observed", "predicted", "widths", "workspace"};
        status = begin(context, on_device, "mart_merits", &previous, 4, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = 0;
    if (on_device) {
        error = spart_mart_device_merits(observed, predicted, widths, num_channel, image_size, chi2,
                                         correlation, workspace, context->cuda_mart_stop,
                                         context->cuda_stream);
    } else {
        spart_mart_host_merits(observed, predicted, widths, num_channel, image_size, chi2,
                               correlation, spart_threads(context));
    }
    return finish(context, on_device, error, "mart_merits", previous);
}

spart_status spart_mart_device_finish_and_measure(spart_context *context, const double *observed,
                                                  double *images, double *widths,
                                                  int64_t num_channel, int64_t image_size,
                                                  double gain, double read_noise, void *workspace,
                                                  size_t workspace_bytes)
{
    if (context == NULL || observed == NULL || images == NULL || widths == NULL ||
        workspace == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_device_finish_and_measure: NULL argument");
    }
    const char *what = "mart_device_finish_and_measure";
    spart_status status = check_sizes(context, what, num_channel, image_size);
    if (status == SPART_OK) {
        status = check_workspace(context, what, workspace, workspace_bytes,
                                 spart_mart_workspace_size(num_channel, image_size, 1));
    }
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {observed, images, widths, workspace};
        const char *names[] = {"observed", "images", "widths", "workspace"};
        status = begin(context, 1, what, &previous, 4, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = spart_mart_device_finish_and_merits(
        observed, images, widths, num_channel, image_size, gain, read_noise * read_noise, workspace,
        context->cuda_mart_stop, context->cuda_stream);
    return finish(context, 1, error, what, previous);
}

spart_status spart_mart_flat_guess(spart_context *context, const double *backprojected,
                                   int64_t num_channel, int64_t scene_size, double *scene,
                                   void *workspace, size_t workspace_bytes, int on_device)
{
    if (context == NULL || backprojected == NULL || scene == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_flat_guess: NULL argument");
    }
    spart_status status = check_sizes(context, "mart_flat_guess", num_channel, scene_size);
    if (status == SPART_OK && on_device) {
        status = check_workspace(context, "mart_flat_guess", workspace, workspace_bytes,
                                 spart_mart_workspace_size(num_channel, 1, scene_size));
    }
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {backprojected, scene, workspace};
        const char *names[] = {"backprojected", "scene", "workspace"};
        status = begin(context, on_device, "mart_flat_guess", &previous, 3, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = 0;
    if (on_device) {
        error = spart_mart_device_flat_guess(backprojected, num_channel, scene_size, scene,
                                             workspace, context->cuda_stream);
    } else {
        spart_mart_host_flat_guess(backprojected, num_channel, scene_size, scene);
    }
    return finish(context, on_device, error, "mart_flat_guess", previous);
}

spart_status spart_mart_update(spart_context *context, double *scene, const double *observed_back,
                               const double *predicted_back, int64_t num_channel,
                               int64_t scene_size, double gamma, int on_device)
{
    if (context == NULL || scene == NULL || observed_back == NULL || predicted_back == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_update: NULL argument");
    }
    spart_status status = check_sizes(context, "mart_update", num_channel, scene_size);
    if (status == SPART_OK && !(gamma > 0.0)) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "mart_update: gamma = %g must be positive", gamma);
    }
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {scene, observed_back, predicted_back};
        const char *names[] = {"scene", "observed_back", "predicted_back"};
        status = begin(context, on_device, "mart_update", &previous, 3, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = 0;
    if (on_device) {
        error =
            spart_mart_device_update(scene, observed_back, predicted_back, num_channel, scene_size,
                                     gamma, context->cuda_mart_stop, context->cuda_stream);
    } else {
        spart_mart_host_update(scene, observed_back, predicted_back, num_channel, scene_size, gamma,
                               spart_threads(context));
    }
    return finish(context, on_device, error, "mart_update", previous);
}

/* Whether spart_mart_host_backproject_update serves `backward`: a host
 * regridder whose one-vector product reads and writes its values as they
 * lie (no batch axes). */
static int host_fusable(const spart_regridder *backward)
{
    return !backward->device.on_device && backward->input.num_batch == 1 &&
           backward->output.num_batch == 1;
}

/* The checks of spart_mart_update_from_images; the scene size into
 * *scene_size. */
static spart_status check_update_from_images(spart_context *context,
                                             const spart_regridder *backward, const double *images,
                                             const double *observed_back, int64_t num_channel,
                                             double gamma, const double *scene,
                                             const double *predicted_back, int64_t *scene_size)
{
    if (backward == NULL || images == NULL || observed_back == NULL || scene == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_update_from_images: NULL argument");
    }
    if (predicted_back == NULL && !host_fusable(backward)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "mart_update_from_images: predicted_back is NULL, and this backward "
                          "regridder needs it (on a device, or with batch axes)");
    }
    spart_status status = check_sizes(context, "mart_update_from_images", num_channel, 1);
    if (status == SPART_OK && !(gamma > 0.0)) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "mart_update_from_images: gamma = %g must be positive", gamma);
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

spart_status spart_mart_update_from_images(spart_context *context, const spart_regridder *backward,
                                           const double *images, const double *observed_back,
                                           int64_t num_channel, double gamma, double *scene,
                                           double *predicted_back)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    int64_t scene_size = 0;
    spart_status status =
        check_update_from_images(context, backward, images, observed_back, num_channel, gamma,
                                 scene, predicted_back, &scene_size);
    if (status != SPART_OK) {
        return status;
    }
    if (spart_device_mart_fusable(backward)) {
        return spart_device_mart_backproject_update(context, backward, images, observed_back, scene,
                                                    num_channel, scene_size, gamma);
    }
    if (host_fusable(backward)) {
        spart_backward_rows rows = {
            &backward->csr, &backward->plan,
            (int)spart_host_csr_simd_level(&backward->csr, &backward->plan)};
        spart_mart_host_backproject_update(scene, &rows, images, observed_back, num_channel,
                                           scene_size, gamma, spart_threads(context));
        return SPART_OK;
    }
    spart_array x = {images, backward->input.shape};
    status = spart_regridder_apply(context, backward, &x, predicted_back, num_channel * scene_size);
    if (status == SPART_OK) {
        status = spart_mart_update(context, scene, observed_back, predicted_back, num_channel,
                                   scene_size, gamma, backward->device.on_device);
    }
    return status;
}

/* ---- the stopping rule on the device (src/mart/mart_device_batch.h) ---- */

void spart_mart_device_gate(spart_context *context, const spart_mart_device_state *state)
{
    if (context != NULL) {
        context->cuda_mart_stop = state != NULL ? &state->stopped : NULL;
    }
}

spart_status spart_mart_device_decide(spart_context *context, const spart_mart_device_rule *rule,
                                      const double *merits, double *history_row,
                                      spart_mart_device_state *state)
{
    if (context == NULL || rule == NULL || merits == NULL || history_row == NULL || state == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_device_decide: NULL argument");
    }
    spart_status status =
        check_sizes(context, "mart_device_decide", rule->num_channel, rule->max_iterations);
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {merits, history_row, state};
        const char *names[] = {"merits", "history_row", "state"};
        status = begin(context, 1, "mart_device_decide", &previous, 3, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error =
        spart_mart_device_decide_launch(rule, merits, history_row, state, context->cuda_stream);
    return finish(context, 1, error, "mart_device_decide", previous);
}

spart_status spart_mart_device_keep(spart_context *context, const double *scene, int64_t scene_size,
                                    double *kept, const spart_mart_device_state *state)
{
    if (context == NULL || scene == NULL || kept == NULL || state == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "mart_device_keep: NULL argument");
    }
    spart_status status = check_sizes(context, "mart_device_keep", scene_size, 1);
    int previous;
    if (status == SPART_OK) {
        const void *pointers[] = {scene, kept, state};
        const char *names[] = {"scene", "kept", "state"};
        status = begin(context, 1, "mart_device_keep", &previous, 3, pointers, names);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = spart_mart_device_keep_launch(scene, scene_size, kept, state, context->cuda_stream);
    return finish(context, 1, error, "mart_device_keep", previous);
}
