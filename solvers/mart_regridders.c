/*
 * solvers/mart_regridders.c: MART operators from a pair of Regridders
 * (spart_mart_operators_from_regridders): the forward product with the
 * noise widths of a counting detector, and the backward product, which the
 * driver may fuse with the update (spart_mart_regridders_update), and the
 * same over many frames at once (a leading axis of vectors: one pass over
 * each matrix for all of them) for spart_mart_solve_frames.
 */
#include <math.h>

#include "spart/device.h"
#include "spart/mart.h"
#include "spart/mart_steps.h"
#include "mart_internal.h"

/* The forward Regridder's product A x of the scene, unclamped, into
 * `images` (num_rows values). */
static spart_status apply_forward(spart_context *context, const spart_mart_regridder_pair *pair,
                                  const double *scene, double *images)
{
    spart_array x = {scene, spart_regridder_shape_input(pair->forward)};
    return spart_regridder_apply(context, pair->forward, &x, images,
                                 spart_regridder_num_rows(pair->forward));
}

/* Predicted images d = max(A x, 0) (counts cannot be negative; ctis clamps
 * too) and widths sqrt(gain d + read_noise^2), where the regridders are. */
static spart_status forward_from_regridder(void *user, spart_context *context, const double *scene,
                                           double *images, double *widths)
{
    const spart_mart_regridder_pair *pair = user;
    spart_status status = apply_forward(context, pair, scene, images);
    if (status == SPART_OK) {
        status = spart_mart_finish_prediction(
            context, images, widths, spart_regridder_num_rows(pair->forward), pair->gain,
            pair->read_noise, spart_regridder_cuda_device(pair->forward) >= 0);
    }
    return status;
}

spart_status spart_mart_regridders_predict_and_measure(spart_context *context,
                                                       const spart_mart_operators *operators,
                                                       const double *scene, const double *observed,
                                                       double *images, double *widths,
                                                       void *workspace, size_t workspace_bytes,
                                                       const spart_mart_run_state *gate)
{
    const spart_mart_regridder_pair *pair = operators->user;
    spart_status status = apply_forward(context, pair, scene, images);
    if (status == SPART_OK) {
        status = spart_mart_finish_and_measure(
            context, observed, images, widths, operators->num_channel, operators->image_size,
            pair->gain, pair->read_noise, workspace, workspace_bytes, operators->on_device, gate);
    }
    return status;
}

static spart_status backward_from_regridder(void *user, spart_context *context,
                                            const double *images, double *scenes)
{
    const spart_mart_regridder_pair *pair = user;
    spart_array x = {images, spart_regridder_shape_input(pair->backward)};
    return spart_regridder_apply(context, pair->backward, &x, scenes,
                                 spart_regridder_num_rows(pair->backward));
}

/* ---- many frames: the products over num_frames vectors (leading axis) ---- */

/* `shape` with a leading axis of `frames` vectors. */
static spart_status frames_shape(spart_context *context, spart_shape shape, int64_t frames,
                                 spart_shape *out)
{
    if (shape.ndim >= SPART_MAX_NDIM) {
        return spart_context_set_error(context, SPART_ERROR_SHAPE_MISMATCH,
                                       "mart frames: a regridder's shape has %d axes, so a "
                                       "leading axis of frames does not fit (at most %d)",
                                       shape.ndim, SPART_MAX_NDIM);
    }
    out->ndim = shape.ndim + 1;
    out->dims[0] = frames;
    for (int k = 0; k < shape.ndim; k++) {
        out->dims[k + 1] = shape.dims[k];
    }
    return SPART_OK;
}

/* y = A x for `frames` vectors x (one product, every vector in one pass
 * over the matrix; each vector the bits it gets alone), with the caller's
 * workspace or, when it is NULL, one the product allocates. */
static spart_status apply_frames(spart_context *context, const spart_regridder *regridder,
                                 int64_t frames, const double *x_values, double *y, void *workspace,
                                 size_t workspace_bytes)
{
    spart_array x = {x_values, {0, {0}}};
    spart_status status =
        frames_shape(context, spart_regridder_shape_input(regridder), frames, &x.shape);
    int64_t size_y = frames * spart_regridder_num_rows(regridder);
    if (status == SPART_OK && workspace == NULL) {
        status = spart_regridder_apply(context, regridder, &x, y, size_y);
    } else if (status == SPART_OK) {
        status = spart_regridder_apply_workspace(context, regridder, &x, y, size_y, workspace,
                                                 workspace_bytes);
    }
    return status;
}

static spart_status forward_frames_from_regridder(void *user, spart_context *context,
                                                  int64_t num_frames, const double *scenes,
                                                  double *images, double *widths)
{
    const spart_mart_regridder_pair *pair = user;
    spart_status status = apply_frames(context, pair->forward, num_frames, scenes, images, NULL, 0);
    if (status == SPART_OK) {
        status = spart_mart_finish_prediction(
            context, images, widths, num_frames * spart_regridder_num_rows(pair->forward),
            pair->gain, pair->read_noise, spart_regridder_cuda_device(pair->forward) >= 0);
    }
    return status;
}

static spart_status backward_frames_from_regridder(void *user, spart_context *context,
                                                   int64_t num_frames, const double *images,
                                                   double *scenes)
{
    const spart_mart_regridder_pair *pair = user;
    return apply_frames(context, pair->backward, num_frames, images, scenes, NULL, 0);
}

spart_status spart_mart_regridders_frames_workspace(spart_context *context,
                                                    const spart_mart_operators *operators,
                                                    int64_t num_frames, size_t *bytes)
{
    const spart_mart_regridder_pair *pair = operators->user;
    const spart_regridder *both[2] = {pair->forward, pair->backward};
    *bytes = 0;
    for (int k = 0; k < 2; k++) {
        spart_shape shape;
        size_t needed = 0;
        spart_status status =
            frames_shape(context, spart_regridder_shape_input(both[k]), num_frames, &shape);
        if (status == SPART_OK) {
            status = spart_regridder_workspace_size(context, both[k], &shape, &needed);
        }
        if (status != SPART_OK) {
            return status;
        }
        *bytes = needed > *bytes ? needed : *bytes;
    }
    return SPART_OK;
}

spart_status spart_mart_regridders_predict_and_measure_frames(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const double *scenes, const double *observed, double *images, double *widths, void *workspace,
    size_t workspace_bytes, void *product_workspace, size_t product_bytes)
{
    const spart_mart_regridder_pair *pair = operators->user;
    spart_status status = apply_frames(context, pair->forward, num_frames, scenes, images,
                                       product_workspace, product_bytes);
    if (status == SPART_OK) {
        status = spart_mart_finish_and_measure(
            context, observed, images, widths, num_frames * operators->num_channel,
            operators->image_size, pair->gain, pair->read_noise, workspace, workspace_bytes,
            operators->on_device, NULL);
    }
    return status;
}

int spart_mart_regridders_update_is_one_pass(const spart_mart_operators *operators)
{
    return spart_mart_operators_are_regridders(operators) &&
           spart_mart_update_from_images_is_one_pass(
               ((const spart_mart_regridder_pair *)operators->user)->backward);
}

spart_status spart_mart_regridders_update_frames(spart_context *context,
                                                 const spart_mart_operators *operators,
                                                 int64_t num_frames, const double *images,
                                                 const double *observed_back, double gamma,
                                                 double *scenes, double *predicted_back,
                                                 void *product_workspace, size_t product_bytes,
                                                 const spart_mart_run_state *states)
{
    const spart_mart_regridder_pair *pair = operators->user;
    return spart_mart_update_from_images_frames(
        context, pair->backward, images, observed_back, num_frames, pair->num_channel, gamma,
        scenes, predicted_back, product_workspace, product_bytes, states);
}

spart_status spart_mart_regridders_backward_frames(spart_context *context,
                                                   const spart_mart_operators *operators,
                                                   int64_t num_frames, const double *images,
                                                   double *scenes, void *product_workspace,
                                                   size_t product_bytes)
{
    const spart_mart_regridder_pair *pair = operators->user;
    return apply_frames(context, pair->backward, num_frames, images, scenes, product_workspace,
                        product_bytes);
}

int spart_mart_operators_are_regridders(const spart_mart_operators *operators)
{
    return operators->backward == backward_from_regridder && operators->user != NULL;
}

int spart_mart_regridders_update_in_place(const spart_mart_operators *operators)
{
    if (!spart_mart_operators_are_regridders(operators)) {
        return 0;
    }
    const spart_regridder *backward =
        ((const spart_mart_regridder_pair *)operators->user)->backward;
    spart_shape input = spart_regridder_shape_input(backward);
    spart_shape output = spart_regridder_shape_output(backward);
    /* batch axes would make the values' sizes a multiple of the matrix's */
    return spart_regridder_cuda_device(backward) < 0 &&
           spart_regridder_num_rows(backward) == spart_shape_size(&output) &&
           spart_regridder_num_columns(backward) == spart_shape_size(&input);
}

spart_status spart_mart_regridders_update(spart_context *context,
                                          const spart_mart_operators *operators,
                                          const double *images, const double *observed_back,
                                          double gamma, double *scene, double *predicted_back,
                                          const spart_mart_run_state *gate)
{
    const spart_mart_regridder_pair *pair = operators->user;
    return spart_mart_update_from_images_gated(context, pair->backward, images, observed_back,
                                               pair->num_channel, gamma, scene, predicted_back,
                                               gate);
}

spart_status spart_mart_operators_from_regridders(spart_context *context,
                                                  const spart_mart_regridder_pair *pair,
                                                  spart_mart_operators *operators)
{
    if (pair == NULL || operators == NULL || pair->forward == NULL || pair->backward == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "mart operators: pair, pair->forward, pair->backward and "
                                       "operators must not be NULL");
    }
    if (pair->num_channel < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart operators: num_channel = %lld must be at least 1",
                                       (long long)pair->num_channel);
    }
    if (!(pair->gain > 0.0) || isinf(pair->gain) || !(pair->read_noise >= 0.0) ||
        isinf(pair->read_noise)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart operators: gain = %g must be positive and "
                                       "read_noise = %g non-negative, both finite",
                                       pair->gain, pair->read_noise);
    }
    int64_t scene_size = spart_regridder_num_columns(pair->forward);
    int64_t images = spart_regridder_num_rows(pair->forward);
    int64_t channels = pair->num_channel;
    if (spart_regridder_num_columns(pair->backward) != images ||
        spart_regridder_num_rows(pair->backward) != channels * scene_size ||
        images % channels != 0) {
        return spart_context_set_error(
            context, SPART_ERROR_SHAPE_MISMATCH,
            "mart operators: the regridders do not chain: forward %lld x %lld (rows x columns), "
            "backward %lld x %lld, %lld channels (backward must be %lld x %lld)",
            (long long)images, (long long)scene_size,
            (long long)spart_regridder_num_rows(pair->backward),
            (long long)spart_regridder_num_columns(pair->backward), (long long)channels,
            (long long)(channels * scene_size), (long long)images);
    }
    int device_forward = spart_regridder_cuda_device(pair->forward);
    int device_backward = spart_regridder_cuda_device(pair->backward);
    if (device_forward != device_backward) {
        return spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "mart operators: the forward regridder is on %s%d and the "
            "backward one on %s%d: move both to the same place",
            device_forward >= 0 ? "CUDA device " : "the host ", device_forward,
            device_backward >= 0 ? "CUDA device " : "the host ", device_backward);
    }
    operators->on_device = device_forward >= 0;
    operators->capturable = operators->on_device; /* products only enqueue work */
    operators->num_channel = channels;
    operators->scene_size = scene_size;
    operators->image_size = images / channels;
    operators->forward = forward_from_regridder;
    operators->backward = backward_from_regridder;
    operators->forward_frames = forward_frames_from_regridder;
    operators->backward_frames = backward_frames_from_regridder;
    operators->user = (void *)pair;
    return SPART_OK;
}
