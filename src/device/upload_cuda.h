/*
 * src/device/upload_cuda.h: the stream of device work on a device, and
 * stream-ordered uploads of host arrays (src/device/upload_cuda.c). Large
 * copies go through two pinned buffers: all threads fill one while the
 * other's copy to the device runs, so the copy runs at the pinned rate.
 * CUDA glue only (built with CUDA).
 */
#ifndef SPART_UPLOAD_CUDA_H
#define SPART_UPLOAD_CUDA_H

#include <cuda_runtime_api.h>

#include "core/internal.h"

/* The stream of device work on `device`: the context's when the context
 * uses that device, else the default stream. */
cudaStream_t spart_device_stream_for(const spart_context *context, int device);

/* Two pinned buffers of stage_bytes each (stage_bytes 0: no staging, plain
 * copies), filled by `threads` OpenMP threads. */
typedef struct spart_stager {
    size_t stage_bytes;
    int threads;
    void *buffer[2];
    cudaEvent_t copied[2]; /* each buffer's last copy to the device */
    int next;
} spart_stager;

cudaError_t spart_stager_open(spart_stager *s, size_t stage_bytes, int threads);

/* Wait for the buffers' copies, then free them. */
void spart_stager_close(spart_stager *s);

/* A stream-ordered device copy of count * size bytes of host memory
 * (*copy NULL when `host` is NULL), staged when `s` has buffers (s may be
 * NULL: a plain copy). */
cudaError_t spart_device_upload(spart_stager *s, const void *host, size_t count, size_t size,
                                cudaStream_t stream, void **copy);

/* Copy `bytes` of host memory into device memory the caller holds, on
 * `stream`: through the stager's buffers when it has them (s may be
 * NULL: a plain copy). The host memory may be reused once the call
 * returns when staged (it was copied into the pinned buffers); a plain
 * copy from pageable memory returns once the driver has taken it too. */
cudaError_t spart_stager_copy(spart_stager *s, void *device, const void *host, size_t bytes,
                              cudaStream_t stream);

/* Free stream-ordered scratch (NULL: nothing) and forget it. */
void spart_device_discard(void **scratch, cudaStream_t stream);

#endif /* SPART_UPLOAD_CUDA_H */
