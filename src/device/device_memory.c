/*
 * src/device/device_memory.c: memory of the context's CUDA device, copies
 * and graphs (spart/device_memory.h): the checks of each call's arguments
 * and the selection of the context's device, written once for both
 * builds; the CUDA work itself is in src/device/device_memory_cuda.c
 * (src/device/device_memory.h).
 */
#include <stdio.h>

#include "device/device_memory.h"
#include "device/device_select.h"

spart_status spart_device_enter(spart_context *context, const char *what, int *previous)
{
    *previous = -1;
    spart_status status = spart_device_check_exists(context, context->cuda_device);
    if (status == SPART_OK) {
        status = spart_device_select(context, context->cuda_device, previous);
    }
    if (status != SPART_OK) {
        char sentence[SPART_ERROR_LENGTH];
        snprintf(sentence, sizeof sentence, "%s", spart_context_error(context));
        spart_fail(context, status, "%s: %s", what, sentence);
    }
    return status;
}

spart_status spart_device_malloc(spart_context *context, size_t bytes, void **pointer)
{
    if (context == NULL || pointer == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "device_malloc: context and pointer must not be NULL");
    }
    spart_clear_error(context);
    *pointer = NULL;
    int previous;
    spart_status status = spart_device_enter(context, "device_malloc", &previous);
    if (status == SPART_OK) {
        status = spart_device_malloc_entered(context, bytes, pointer);
        spart_device_leave(previous);
    }
    return status;
}

void spart_device_free(spart_context *context, void *pointer)
{
    if (context == NULL || pointer == NULL) {
        return;
    }
    int previous;
    if (spart_device_enter(context, "device_free", &previous) == SPART_OK) {
        spart_device_free_entered(pointer);
        spart_device_leave(previous);
    }
}

spart_status spart_device_malloc_async(spart_context *context, size_t bytes, void **pointer)
{
    spart_clear_error(context);
    *pointer = NULL;
    int previous;
    spart_status status = spart_device_enter(context, "memory_allocate_async", &previous);
    if (status == SPART_OK) {
        status = spart_device_malloc_async_entered(context, bytes, pointer);
        spart_device_leave(previous);
    }
    return status;
}

void spart_device_free_async(spart_context *context, void *pointer)
{
    int previous;
    if (pointer != NULL &&
        spart_device_enter(context, "memory_free_async", &previous) == SPART_OK) {
        spart_device_free_async_entered(context, pointer);
        spart_device_leave(previous);
    }
}

static spart_status copy(spart_context *context, void *to, const void *from, size_t bytes,
                         spart_copy_kind kind, const char *what)
{
    if (context == NULL || to == NULL || from == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: arguments must not be NULL",
                          what);
    }
    spart_clear_error(context);
    int previous;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status == SPART_OK) {
        status = spart_device_copy_entered(context, to, from, bytes, kind, what);
        spart_device_leave(previous);
    }
    return status;
}

spart_status spart_device_copy_to_device(spart_context *context, void *device, const void *host,
                                         size_t bytes)
{
    return copy(context, device, host, bytes, SPART_COPY_TO_DEVICE, "device_copy_to_device");
}

spart_status spart_device_copy_to_host(spart_context *context, void *host, const void *device,
                                       size_t bytes)
{
    return copy(context, host, device, bytes, SPART_COPY_TO_HOST, "device_copy_to_host");
}

spart_status spart_device_copy_on_device(spart_context *context, void *to, const void *from,
                                         size_t bytes)
{
    return copy(context, to, from, bytes, SPART_COPY_ON_DEVICE, "device_copy_on_device");
}

spart_status spart_device_graph_record(spart_context *context,
                                       spart_status (*record)(void *user, spart_context *context),
                                       void *user, spart_device_graph **graph)
{
    if (context == NULL || record == NULL || graph == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "device_graph_record: context, record and graph must not be NULL");
    }
    spart_clear_error(context);
    *graph = NULL;
    int previous;
    spart_status status = spart_device_enter(context, "device_graph_record", &previous);
    if (status == SPART_OK) {
        status = spart_device_graph_record_entered(context, record, user, graph);
        spart_device_leave(previous);
    }
    return status;
}

spart_status spart_device_graph_launch(spart_context *context, const spart_device_graph *graph)
{
    if (context == NULL || graph == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "device_graph_launch: context and graph must not be NULL");
    }
    int previous;
    spart_status status = spart_device_enter(context, "device_graph_launch", &previous);
    if (status == SPART_OK) {
        status = spart_device_graph_launch_entered(context, graph);
        spart_device_leave(previous);
    }
    return status;
}
