/*
 * src/device/device_memory.h: the CUDA halves of spart/device_memory.h
 * (src/device/device_memory_cuda.c). src/device/device_memory.c checks
 * the arguments of each public call, makes the context's device current
 * (spart_device_enter) and calls these; without CUDA, spart_device_enter
 * refuses first, and src/device/no_cuda.c stands in for them.
 */
#ifndef SPART_DEVICE_MEMORY_INTERNAL_H
#define SPART_DEVICE_MEMORY_INTERNAL_H

#include "core/internal.h"
#include "spart/device_memory.h"

/* Which way a copy goes. */
typedef enum spart_copy_kind {
    SPART_COPY_TO_DEVICE = 0,
    SPART_COPY_TO_HOST = 1,
    SPART_COPY_ON_DEVICE = 2
} spart_copy_kind;

/* cudaMalloc of `bytes` (at least 1): *pointer, or NULL and a status. */
spart_status spart_device_malloc_entered(spart_context *context, size_t bytes, void **pointer);

/* cudaFree. */
void spart_device_free_entered(void *pointer);

/* Stream-ordered on the context's stream, from the context's own pool
 * (made at the first call, its release threshold the largest, so the
 * memory stays with the pool between calls until spart_context_free):
 * cudaMallocFromPoolAsync of `bytes` (at least 1), or NULL and a status.
 * When the context's device is no longer the pool's, the device's default
 * pool serves (cudaMallocAsync). */
spart_status spart_device_malloc_async_entered(spart_context *context, size_t bytes,
                                               void **pointer);

/* cudaFreeAsync on the context's stream. */
void spart_device_free_async_entered(spart_context *context, void *pointer);

/* The two above with their checks and the context's device made current
 * (src/device/device_memory.c), for spart_memory_allocate_async and
 * spart_memory_free_async. */
spart_status spart_device_malloc_async(spart_context *context, size_t bytes, void **pointer);
void spart_device_free_async(spart_context *context, void *pointer);

/* A copy on the context's stream, waited for; `what` names the call in
 * a failure's sentence. */
spart_status spart_device_copy_entered(spart_context *context, void *to, const void *from,
                                       size_t bytes, spart_copy_kind kind, const char *what);

/* Record `record`'s work on a private stream standing in for the
 * context's, and instantiate it. */
spart_status spart_device_graph_record_entered(spart_context *context,
                                               spart_status (*record)(void *user,
                                                                      spart_context *context),
                                               void *user, spart_device_graph **graph);

/* Launch a recorded graph on the context's stream. */
spart_status spart_device_graph_launch_entered(spart_context *context,
                                               const spart_device_graph *graph);

#endif /* SPART_DEVICE_MEMORY_INTERNAL_H */
