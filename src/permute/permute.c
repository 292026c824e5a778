/*
 * src/permute/permute.c: spart/permute.h: the plan's arguments checked
 * once, its table of operations chosen once (host or CUDA device,
 * src/permute/permute_internal.h), and execute's checks and scalars.
 */
#include <string.h>

#include "permute/permute_internal.h"

spart_status spart_permute_select(spart_context *context, int on_device,
                                  const spart_permute_ops **ops)
{
    if (!on_device) {
        *ops = &spart_permute_host_ops;
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    (void)context;
    *ops = &spart_permute_cuda_ops;
    return SPART_OK;
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: permute_plan_create cannot make a device "
                      "plan (rebuild with -DSPART_ENABLE_CUDA=ON)");
#endif
}

/* The arguments that are not blocks. */
static spart_status check_arguments(spart_context *context, spart_permute_type type, int num_axes,
                                    const int *permutation, spart_permute_op op, int64_t num_blocks,
                                    const spart_permute_block *blocks, int64_t source_length,
                                    int64_t destination_length)
{
    if (type < SPART_PERMUTE_FLOAT32 || type > SPART_PERMUTE_COMPLEX128) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "permute_plan_create: type = %d is not a spart_permute_type", (int)type);
    }
    if (op != SPART_PERMUTE_IDENTITY && op != SPART_PERMUTE_CONJUGATE) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "permute_plan_create: op = %d is not a spart_permute_op", (int)op);
    }
    if (num_axes < 0 || num_axes > SPART_PERMUTE_MAX_AXES) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "permute_plan_create: num_axes = %d is outside 0..%d", num_axes,
                          SPART_PERMUTE_MAX_AXES);
    }
    if (num_axes > 0 && permutation == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "permute_plan_create: permutation is NULL");
    }
    int seen = 0;
    for (int k = 0; k < num_axes; k++) {
        int p = permutation[k];
        if (p < 0 || p >= num_axes || (seen & (1 << p))) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "permute_plan_create: permutation[%d] = %d: the permutation must "
                              "hold each of 0..%d once",
                              k, p, num_axes - 1);
        }
        seen |= 1 << p;
    }
    if (num_blocks < 0 || source_length < 0 || destination_length < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "permute_plan_create: num_blocks = %lld, source_length = %lld, "
                          "destination_length = %lld (none may be negative)",
                          (long long)num_blocks, (long long)source_length,
                          (long long)destination_length);
    }
    if (num_blocks > 0 && blocks == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "permute_plan_create: blocks is NULL");
    }
    int bytes = spart_permute_element_bytes((int)type);
    if (source_length > INT64_MAX / bytes || destination_length > INT64_MAX / bytes) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "permute_plan_create: the arrays' bytes overflow int64");
    }
    return SPART_OK;
}

void spart_permute_plan_free(spart_permute_plan *plan)
{
    if (plan == NULL) {
        return;
    }
    if (plan->ops != NULL) {
        plan->ops->release(plan);
    }
    spart_allocator allocator = plan->allocator;
    spart_free(&allocator, plan->items);
    spart_free(&allocator, plan->terms);
    spart_free(&allocator, plan->tile_start);
    spart_free(&allocator, plan->small_item);
    spart_free(&allocator, plan);
}

spart_status spart_permute_plan_create(spart_context *context, spart_permute_type type,
                                       int num_axes, const int *permutation, spart_permute_op op,
                                       int64_t num_blocks, const spart_permute_block *blocks,
                                       int64_t source_length, int64_t destination_length,
                                       int on_device, spart_permute_plan **plan)
{
    if (plan != NULL) {
        *plan = NULL;
    }
    if (context == NULL || plan == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "permute_plan_create: NULL context or plan");
    }
    spart_clear_error(context);
    spart_status status = check_arguments(context, type, num_axes, permutation, op, num_blocks,
                                          blocks, source_length, destination_length);
    const spart_permute_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_permute_select(context, on_device, &ops);
    }
    if (status == SPART_OK) {
        status = spart_permute_check_blocks(context, num_axes, permutation, num_blocks, blocks,
                                            source_length, destination_length);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_permute_plan *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "permute_plan_create: out of memory");
    }
    made->allocator = context->allocator;
    made->type = type;
    made->cuda_device = context->cuda_device;
    made->source_length = source_length;
    made->destination_length = destination_length;
    int conjugate = op == SPART_PERMUTE_CONJUGATE &&
                    (type == SPART_PERMUTE_COMPLEX64 || type == SPART_PERMUTE_COMPLEX128);
    status = spart_permute_build_work(context, made, num_axes, permutation, conjugate, num_blocks,
                                      blocks);
    if (status == SPART_OK) {
        status = ops != NULL ? ops->place(context, made)
                             : spart_fail(context, SPART_ERROR_INTERNAL,
                                          "permute_plan_create: no table of operations");
    }
    if (status == SPART_OK) {
        made->ops = ops;
        *plan = made;
    } else {
        spart_permute_plan_free(made);
    }
    return status;
}

spart_status spart_permute_plan_counts(const spart_permute_plan *plan, int64_t *num_items,
                                       int64_t *num_tiles, int64_t *tile_bytes)
{
    if (plan == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "permute_plan_counts: plan is NULL");
    }
    if (num_items != NULL) {
        *num_items = plan->work.num_items;
    }
    if (num_tiles != NULL) {
        *num_tiles = plan->work.num_tiles;
    }
    if (tile_bytes != NULL) {
        *tile_bytes = plan->tile_bytes;
    }
    return SPART_OK;
}

void spart_permute_plan_set_variant(spart_permute_plan *plan, int variant)
{
    plan->work.variant = variant;
    plan->device_work.variant = variant;
}

void spart_permute_plan_set_host_staging(spart_permute_plan *plan, int staged)
{
    plan->work.host_staged = staged;
    plan->device_work.host_staged = staged;
}

void spart_permute_plan_set_host_order(spart_permute_plan *plan, int y_fastest)
{
    plan->work.host_y_order = y_fastest;
    plan->device_work.host_y_order = y_fastest;
}

void spart_permute_plan_set_stream_stores(spart_permute_plan *plan, int stream)
{
    plan->work.stream_stores = stream;
    plan->device_work.stream_stores = stream;
}

/* alpha and beta of the plan's type as (real, imaginary) doubles. */
static spart_permute_scalars read_scalars(spart_permute_type type, const void *alpha,
                                          const void *beta)
{
    spart_permute_scalars s;
    memset(&s, 0, sizeof s);
    const void *values[2] = {alpha, beta};
    double *into[2] = {s.alpha, s.beta};
    for (int k = 0; k < 2; k++) {
        if (type == SPART_PERMUTE_FLOAT32 || type == SPART_PERMUTE_COMPLEX64) {
            const float *v = values[k];
            into[k][0] = v[0];
            into[k][1] = type == SPART_PERMUTE_COMPLEX64 ? v[1] : 0.0;
        } else {
            const double *v = values[k];
            into[k][0] = v[0];
            into[k][1] = type == SPART_PERMUTE_COMPLEX128 ? v[1] : 0.0;
        }
    }
    s.beta_zero = s.beta[0] == 0.0 && s.beta[1] == 0.0;
    return s;
}

spart_status spart_permute_execute(spart_context *context, const spart_permute_plan *plan,
                                   const void *alpha, const void *source, const void *beta,
                                   void *destination)
{
    if (context == NULL || plan == NULL || alpha == NULL || beta == NULL ||
        (source == NULL && plan->source_length > 0) ||
        (destination == NULL && plan->destination_length > 0)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "permute_execute: NULL argument");
    }
    spart_clear_error(context);
    int bytes = spart_permute_element_bytes((int)plan->type);
    uintptr_t source_start = (uintptr_t)source, destination_start = (uintptr_t)destination;
    uintptr_t source_end = source_start + (uintptr_t)plan->source_length * (uintptr_t)bytes;
    uintptr_t destination_end =
        destination_start + (uintptr_t)plan->destination_length * (uintptr_t)bytes;
    if (source_start < destination_end && destination_start < source_end) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "permute_execute: source and destination overlap (the permute does "
                          "not work in place)");
    }
    spart_permute_scalars scalars = read_scalars(plan->type, alpha, beta);
    return plan->ops->execute(context, plan, &scalars, source, destination);
}
