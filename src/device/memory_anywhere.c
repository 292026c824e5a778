/*
 * src/device/memory_anywhere.c: host or device memory by a flag
 * (spart/device_memory.h, "memory wherever a computation runs"), so that
 * code working on either kind of array (the solvers) never tests where its
 * memory lives itself. The device half goes through the functions of
 * src/device/device_memory.c, which say SPART_ERROR_NO_DEVICE without CUDA.
 */
#include <string.h>

#include "core/internal.h"
#include "device/device_memory.h"
#include "spart/device_memory.h"

spart_status spart_memory_allocate(spart_context *context, int on_device, size_t bytes,
                                   void **pointer)
{
    if (context == NULL || pointer == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "context and pointer must not be NULL");
    }
    if (on_device) {
        return spart_device_malloc(context, bytes, pointer);
    }
    *pointer = spart_context_malloc(context, bytes > 0 ? bytes : 1);
    if (*pointer == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "could not allocate %zu bytes of host memory", bytes);
    }
    return SPART_OK;
}

void spart_memory_free(spart_context *context, int on_device, void *pointer)
{
    if (on_device) {
        spart_device_free(context, pointer);
    } else {
        spart_context_free_memory(context, pointer);
    }
}

spart_status spart_memory_allocate_async(spart_context *context, int on_device, size_t bytes,
                                         void **pointer)
{
    if (context == NULL || pointer == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "memory_allocate_async: context and pointer must not be NULL");
    }
    if (on_device) {
        return spart_device_malloc_async(context, bytes, pointer);
    }
    return spart_memory_allocate(context, 0, bytes, pointer);
}

void spart_memory_free_async(spart_context *context, int on_device, void *pointer)
{
    if (context == NULL) {
        return;
    }
    if (on_device) {
        spart_device_free_async(context, pointer);
    } else {
        spart_context_free_memory(context, pointer);
    }
}

spart_status spart_memory_copy(spart_context *context, void *to, int to_device, const void *from,
                               int from_device, size_t bytes)
{
    if (context == NULL || ((to == NULL || from == NULL) && bytes > 0)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "context, to and from must not be NULL");
    }
    if (to_device && from_device) {
        return spart_device_copy_on_device(context, to, from, bytes);
    }
    if (to_device) {
        return spart_device_copy_to_device(context, to, from, bytes);
    }
    if (from_device) {
        return spart_device_copy_to_host(context, to, from, bytes);
    }
    if (bytes > 0) {
        memmove(to, from, bytes);
    }
    return SPART_OK;
}
