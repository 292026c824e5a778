/*
 * src/distributed/distributed_mart.c: MART's operators over distributed
 * operators (spart_distributed_mart_operators). Every rank runs the same
 * spart_mart_solve on whole vectors; only the products are split, and
 * each gives every rank the whole result in rank order, so every merit
 * and every update is the one-process value on every rank.
 */
#include <math.h>
#include <string.h>

#include "distributed/distributed_internal.h"
#include "spart/mart_steps.h"

/* Predicted images, clamped, and their noise widths: the forward product,
 * then spart_mart_finish_prediction as the regridders' operators do. */
static spart_status forward(void *user, spart_context *context, const double *scene, double *images,
                            double *widths)
{
    const spart_distributed_mart_pair *pair = user;
    spart_status status = spart_distributed_operator_apply(context, pair->forward, scene, images);
    if (status == SPART_OK) {
        status =
            spart_mart_finish_prediction(context, images, widths, pair->forward->num_rows,
                                         pair->gain, pair->read_noise, pair->forward->on_device);
    }
    return status;
}

static spart_status backward(void *user, spart_context *context, const double *images,
                             double *scenes)
{
    const spart_distributed_mart_pair *pair = user;
    return spart_distributed_operator_apply(context, pair->backward, images, scenes);
}

spart_status spart_distributed_mart_operators(spart_context *context,
                                              const spart_distributed_mart_pair *pair,
                                              spart_mart_operators *operators)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (pair == NULL || operators == NULL || pair->forward == NULL || pair->backward == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "distributed_mart_operators: pair, pair->forward, pair->backward and "
                          "operators must not be NULL");
    }
    if (pair->num_channel < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "distributed_mart_operators: num_channel = %lld must be at least 1",
                          (long long)pair->num_channel);
    }
    if (!(pair->gain > 0.0) || isinf(pair->gain) || !(pair->read_noise >= 0.0) ||
        isinf(pair->read_noise)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "distributed_mart_operators: gain = %g must be positive and read_noise "
                          "= %g non-negative, both finite",
                          pair->gain, pair->read_noise);
    }
    const spart_distributed_operator *f = pair->forward;
    const spart_distributed_operator *b = pair->backward;
    int64_t channels = pair->num_channel;
    if (b->num_columns != f->num_rows || b->num_rows != channels * f->num_columns ||
        f->num_rows % channels != 0) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "distributed_mart_operators: the operators do not chain: forward %lld "
                          "x %lld (rows x columns), backward %lld x %lld, %lld channels "
                          "(backward must be %lld x %lld)",
                          (long long)f->num_rows, (long long)f->num_columns, (long long)b->num_rows,
                          (long long)b->num_columns, (long long)channels,
                          (long long)(channels * f->num_columns), (long long)f->num_rows);
    }
    if (f->on_device != b->on_device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "distributed_mart_operators: the forward operator is on the %s and the "
                          "backward one on the %s: make both with the same on_device",
                          f->on_device ? "device" : "host", b->on_device ? "device" : "host");
    }
    if (f->communicator != b->communicator) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "distributed_mart_operators: the two operators were split over "
                          "different communicators");
    }
    /* every field this version does not set (the many-frame callbacks of
     * spart_mart_solve_frames among them) NULL or 0: the driver's defaults */
    memset(operators, 0, sizeof *operators);
    operators->num_channel = channels;
    operators->scene_size = f->num_columns;
    operators->image_size = f->num_rows / channels;
    operators->forward = forward;
    operators->backward = backward;
    operators->user = (void *)pair;
    operators->on_device = f->on_device;
    operators->capturable = 0; /* each product waits for MPI */
    return SPART_OK;
}
