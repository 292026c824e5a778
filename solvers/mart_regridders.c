/*
 * solvers/mart_regridders.c: MART operators from a pair of Regridders
 * (spart_mart_operators_from_regridders): the forward product with the
 * noise widths of a counting detector, and the backward product.
 */
#include <math.h>

#include "spart/mart.h"

/* Predicted images d = max(A x, 0) (counts cannot be negative; ctis clamps
 * too) and widths sqrt(gain d + read_noise^2). */
static spart_status forward_from_regridder(void *user, spart_context *context, const double *scene,
                                           double *images, double *widths)
{
    const spart_mart_regridder_pair *pair = user;
    spart_array x = {scene, spart_regridder_shape_input(pair->forward)};
    int64_t size = spart_regridder_num_rows(pair->forward);
    spart_status status = spart_regridder_apply(context, pair->forward, &x, images, size);
    if (status != SPART_OK) {
        return status;
    }
    double read_variance = pair->read_noise * pair->read_noise;
#pragma omp parallel for num_threads(spart_context_threads(context))                               \
    schedule(static) if (size > 65536)
    for (int64_t p = 0; p < size; p++) {
        double d = images[p] > 0.0 ? images[p] : 0.0;
        images[p] = d;
        if (widths != NULL) {
            widths[p] = sqrt(pair->gain * d + read_variance);
        }
    }
    return SPART_OK;
}

static spart_status backward_from_regridder(void *user, spart_context *context,
                                            const double *images, double *scenes)
{
    const spart_mart_regridder_pair *pair = user;
    spart_array x = {images, spart_regridder_shape_input(pair->backward)};
    return spart_regridder_apply(context, pair->backward, &x, scenes,
                                 spart_regridder_num_rows(pair->backward));
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
    operators->num_channel = channels;
    operators->scene_size = scene_size;
    operators->image_size = images / channels;
    operators->forward = forward_from_regridder;
    operators->backward = backward_from_regridder;
    operators->user = (void *)pair;
    return SPART_OK;
}
