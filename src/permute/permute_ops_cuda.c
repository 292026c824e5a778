/*
 * src/permute/permute_ops_cuda.c: the CUDA device's table of permute
 * operations (src/permute/permute_internal.h): place copies the plan's
 * tables (items, terms, tile starts, the small tiles' items) into one allocation on the context's
 * device; execute enters that device, checks that the arrays are its
 * memory and enqueues the one kernel of kernels/permute.cu on the
 * context's stream. Built only with CUDA.
 */
#include <cuda_runtime_api.h>

#include "device/device_select.h"
#include "permute/permute_internal.h"

/* Bytes rounded up to 256, so that each table starts aligned. */
static size_t aligned(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

static spart_status cuda_place(spart_context *context, spart_permute_plan *plan)
{
    const char *what = "permute_plan_create";
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    const spart_permute_work *w = &plan->work;
    size_t items = aligned((size_t)w->num_items * sizeof(spart_permute_item));
    size_t terms = aligned((size_t)plan->num_terms * sizeof(spart_permute_term));
    size_t starts = aligned((size_t)(w->num_items + 1) * sizeof(int64_t));
    size_t small_tiles = (size_t)(w->num_tiles - w->item_table_start);
    size_t smalls = aligned((small_tiles + 1) * sizeof(int32_t));
    char *tables = NULL;
    cudaError_t error = cudaMalloc((void **)&tables, items + terms + starts + smalls);
    if (error == cudaSuccess && w->num_items > 0) {
        error = cudaMemcpy(tables, w->items, (size_t)w->num_items * sizeof(spart_permute_item),
                           cudaMemcpyHostToDevice);
    }
    if (error == cudaSuccess && plan->num_terms > 0) {
        error = cudaMemcpy(tables + items, w->terms,
                           (size_t)plan->num_terms * sizeof(spart_permute_term),
                           cudaMemcpyHostToDevice);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpy(tables + items + terms, w->tile_start,
                           (size_t)(w->num_items + 1) * sizeof(int64_t), cudaMemcpyHostToDevice);
    }
    if (error == cudaSuccess && small_tiles > 0) {
        error = cudaMemcpy(tables + items + terms + starts, w->small_item,
                           small_tiles * sizeof(int32_t), cudaMemcpyHostToDevice);
    }
    if (error != cudaSuccess) {
        cudaFree(tables);
        status = spart_device_failure(context, (int)error, what);
    } else {
        plan->device_tables = tables;
        plan->device_work = *w;
        plan->device_work.items = (const spart_permute_item *)(void *)tables;
        plan->device_work.terms = (const spart_permute_term *)(void *)(tables + items);
        plan->device_work.tile_start = (const int64_t *)(void *)(tables + items + terms);
        plan->device_work.small_item = (const int32_t *)(void *)(tables + items + terms + starts);
    }
    spart_device_leave(previous);
    return status;
}

static void cuda_release(spart_permute_plan *plan)
{
    if (plan->device_tables != NULL) {
        int previous = -1;
        cudaGetDevice(&previous);
        cudaSetDevice(plan->cuda_device);
        cudaFree(plan->device_tables);
        cudaSetDevice(previous);
        plan->device_tables = NULL;
    }
}

static spart_status cuda_execute(spart_context *context, const spart_permute_plan *plan,
                                 const spart_permute_scalars *scalars, const void *source,
                                 void *destination)
{
    const char *what = "permute_execute";
    if (context->cuda_device != plan->cuda_device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: the plan lives on CUDA device %d, the context uses device %d", what,
                          plan->cuda_device, context->cuda_device);
    }
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    if (plan->source_length > 0) {
        status = spart_device_check_pointer(context, source, plan->cuda_device, what, "source");
    }
    if (status == SPART_OK && plan->destination_length > 0) {
        status = spart_device_check_pointer(context, destination, plan->cuda_device, what,
                                            "destination");
    }
    if (status == SPART_OK) {
        int error = spart_permute_device(&plan->device_work, scalars, source, destination,
                                         (size_t)plan->tile_bytes, context->cuda_stream);
        if (error != 0) {
            status = spart_fail(context, SPART_ERROR_INTERNAL, "%s: CUDA error (%s)", what,
                                spart_permute_device_error_string(error));
        }
    }
    spart_device_leave(previous);
    return status;
}

const spart_permute_ops spart_permute_cuda_ops = {
    .where = "CUDA device",
    .place = cuda_place,
    .release = cuda_release,
    .execute = cuda_execute,
};
