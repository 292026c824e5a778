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
 * cudaFree, except the stream-ordered pair spart_memory_allocate_async
 * and spart_memory_free_async (cudaMallocFromPoolAsync and cudaFreeAsync
 * on the context's stream, from a pool the context owns).
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

/* ---- memory wherever a computation runs ----------------------------------------------
 * For code that works on host or device arrays alike (the MART driver, a
 * user's own iterative method): `on_device` says where (0: host memory of
 * the context's allocator hooks; nonzero: the context's CUDA device), so
 * the caller never writes the choice itself. The same errors as the
 * functions above; host allocation fails with SPART_ERROR_OUT_OF_MEMORY. */

/* `bytes` bytes (at least 1) of host or device memory. */
SPART_NODISCARD SPART_API spart_status spart_memory_allocate(spart_context *context, int on_device,
                                                             size_t bytes, void **pointer);

/* Free memory of spart_memory_allocate made with the same `on_device`.
 * Accepts NULL. */
SPART_API void spart_memory_free(spart_context *context, int on_device, void *pointer);

/* Stream-ordered memory for work on the context's stream: the scratch of
 * a call that is made again and again (the MART frames solve's working
 * arrays). On the device, `bytes` bytes (at least 1) allocated in order on
 * the context's stream (cudaMallocFromPoolAsync) from a memory pool the
 * context owns: memory freed into it with spart_memory_free_async stays
 * with the pool, so the next allocation of that size on the same context
 * reuses it without a new mapping (cudaMalloc and cudaFree cost about as
 * much as a small solve). The pool is made at the first call for the
 * context's device and destroyed by spart_context_free; it holds at most
 * the largest amount the context's calls had allocated at once. After a
 * change of the context's device, the new device's default pool serves
 * instead (the same semantics, without the keeping). Work enqueued on the
 * context's stream after the call may use the memory; work on another
 * stream must first wait for the context's stream. On the host: as
 * spart_memory_allocate. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_NO_DEVICE, SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL
 * (a CUDA error, named). */
SPART_NODISCARD SPART_API spart_status spart_memory_allocate_async(spart_context *context,
                                                                   int on_device, size_t bytes,
                                                                   void **pointer);

/* Free memory of spart_memory_allocate_async made with the same context
 * (its device and stream unchanged) and `on_device`: on the device, in
 * order on the context's stream (cudaFreeAsync), after the work enqueued
 * there before it; the memory returns to the context's pool. Accepts
 * NULL. */
SPART_API void spart_memory_free_async(spart_context *context, int on_device, void *pointer);

/* Copy `bytes` bytes from `from` (device memory when from_device) to `to`
 * (device memory when to_device); a copy that involves the device waits
 * for the context's stream. */
SPART_NODISCARD SPART_API spart_status spart_memory_copy(spart_context *context, void *to,
                                                         int to_device, const void *from,
                                                         int from_device, size_t bytes);

/* A CUDA graph: device work recorded once and replayed with one launch,
 * which saves the launch overhead of many small kernels (a MART iteration
 * on a small problem is mostly that). */
typedef struct spart_device_graph spart_device_graph;

/* Record into a new graph the device work `record` enqueues on the
 * context's stream (CUDA stream capture, on a private stream of the
 * context's device that stands in for the context's stream meanwhile).
 * `record` must only enqueue work: no synchronisation and no copies to
 * pageable host memory. Nothing runs while recording. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_NO_DEVICE, the status of `record`,
 * SPART_ERROR_INTERNAL (capture refused, named). */
SPART_NODISCARD SPART_API spart_status spart_device_graph_record(
    spart_context *context, spart_status (*record)(void *user, spart_context *context), void *user,
    spart_device_graph **graph);

/* Enqueue the recorded work on the context's stream (it does not wait).
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_NO_DEVICE,
 * SPART_ERROR_INTERNAL. */
SPART_NODISCARD SPART_API spart_status spart_device_graph_launch(spart_context *context,
                                                                 const spart_device_graph *graph);

/* Free a graph. Accepts NULL. */
SPART_API void spart_device_graph_free(spart_device_graph *graph);

#ifdef __cplusplus
}
#endif

#endif /* SPART_DEVICE_MEMORY_H */
