/*
 * spart/device_memory.h: memory of the context's CUDA device, for code
 * built on spart that keeps its arrays there (the MART driver on device
 * operators, an embedding code moving images in and scenes out).
 *
 * Availability: as spart/device.h. Without CUDA, or with no device
 * visible, every function returns SPART_ERROR_NO_DEVICE (free does
 * nothing).
 *
 * Synchronisation: the copies wait for the context's stream before they
 * return (they are for set-up and results, not for the inner loop), so
 * host data are ready on return; allocation and free are cudaMalloc and
 * cudaFree.
 */
#ifndef SPART_DEVICE_MEMORY_H
#define SPART_DEVICE_MEMORY_H

#include "spart/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `bytes` bytes (at least 1) of the context's device. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_NO_DEVICE,
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_device_malloc(spart_context *context, size_t bytes,
                                                           void **pointer);

/* Free memory of spart_device_malloc. Accepts NULL. */
SPART_API void spart_device_free(spart_context *context, void *pointer);

/* Copy `bytes` bytes host -> device, device -> host, or device -> device,
 * on the context's stream, and wait for it. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_NO_DEVICE, SPART_ERROR_INTERNAL
 * (a CUDA error, named). */
SPART_NODISCARD SPART_API spart_status spart_device_copy_to_device(spart_context *context,
                                                                   void *device, const void *host,
                                                                   size_t bytes);
SPART_NODISCARD SPART_API spart_status spart_device_copy_to_host(spart_context *context, void *host,
                                                                 const void *device, size_t bytes);
SPART_NODISCARD SPART_API spart_status spart_device_copy_on_device(spart_context *context, void *to,
                                                                   const void *from, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_DEVICE_MEMORY_H */
