/*
 * src/device/upload_cuda.c: the stream of device work on a device, and
 * stream-ordered uploads of host arrays, staged through two pinned buffers
 * when they are large (src/device/upload_cuda.h). Used by the builders of
 * device operators (src/operator/regridder_build_cuda.c).
 */
#include <string.h>

#include "device/upload_cuda.h"

/* The stream of device work on `device`: the context's when the context
 * uses that device, else the default stream. */
cudaStream_t spart_device_stream_for(const spart_context *context, int device)
{
    return device == context->cuda_device ? (cudaStream_t)context->cuda_stream : 0;
}

cudaError_t spart_stager_open(spart_stager *s, size_t stage_bytes, int threads)
{
    memset(s, 0, sizeof *s);
    s->threads = threads;
    cudaError_t error = cudaSuccess;
    for (int b = 0; b < 2 && error == cudaSuccess && stage_bytes > 0; b++) {
        error = cudaMallocHost(&s->buffer[b], stage_bytes);
        if (error == cudaSuccess) {
            error = cudaEventCreateWithFlags(&s->copied[b], cudaEventDisableTiming);
        }
    }
    s->stage_bytes = stage_bytes;
    return error;
}

/* Wait for the buffers' copies, then free them. */
void spart_stager_close(spart_stager *s)
{
    for (int b = 0; b < 2; b++) {
        if (s->copied[b] != NULL) {
            (void)cudaEventSynchronize(s->copied[b]);
            (void)cudaEventDestroy(s->copied[b]);
        }
        if (s->buffer[b] != NULL) {
            (void)cudaFreeHost(s->buffer[b]);
        }
    }
    memset(s, 0, sizeof *s);
}

/* bytes of `from` to the device at `to` through the stager's buffers. */
static cudaError_t staged_copy(spart_stager *s, void *to, const void *from, size_t bytes,
                               cudaStream_t stream)
{
    cudaError_t error = cudaSuccess;
    for (size_t offset = 0; offset < bytes && error == cudaSuccess; offset += s->stage_bytes) {
        size_t length = bytes - offset < s->stage_bytes ? bytes - offset : s->stage_bytes;
        int b = s->next;
        s->next ^= 1;
        error = cudaEventSynchronize(s->copied[b]); /* the buffer's last copy is done */
        if (error != cudaSuccess) {
            break;
        }
        char *buffer = s->buffer[b];
        const char *source = (const char *)from + offset;
        int64_t pieces = 4 * (int64_t)s->threads;
#pragma omp parallel for schedule(static) num_threads(s->threads)
        for (int64_t piece = 0; piece < pieces; piece++) {
            size_t begin = length * (size_t)piece / (size_t)pieces;
            size_t end = length * (size_t)(piece + 1) / (size_t)pieces;
            memcpy(buffer + begin, source + begin, end - begin);
        }
        error =
            cudaMemcpyAsync((char *)to + offset, buffer, length, cudaMemcpyHostToDevice, stream);
        if (error == cudaSuccess) {
            error = cudaEventRecord(s->copied[b], stream);
        }
    }
    return error;
}

cudaError_t spart_stager_copy(spart_stager *s, void *device, const void *host, size_t bytes,
                              cudaStream_t stream)
{
    if (bytes == 0) {
        return cudaSuccess;
    }
    if (s != NULL && s->stage_bytes > 0) {
        return staged_copy(s, device, host, bytes, stream);
    }
    return cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream);
}

/* A stream-ordered device copy of count * size bytes of host memory
 * (*copy NULL when `host` is NULL), staged when the stager has buffers. */
cudaError_t spart_device_upload(spart_stager *s, const void *host, size_t count, size_t size,
                                cudaStream_t stream, void **copy)
{
    *copy = NULL;
    if (host == NULL) {
        return cudaSuccess;
    }
    size_t bytes = count * size;
    cudaError_t error = cudaMallocAsync(copy, bytes > 0 ? bytes : 1, stream);
    if (error != cudaSuccess) {
        *copy = NULL;
    } else if (bytes > 0 && s != NULL && s->stage_bytes > 0) {
        error = staged_copy(s, *copy, host, bytes, stream);
    } else if (bytes > 0) {
        error = cudaMemcpyAsync(*copy, host, bytes, cudaMemcpyHostToDevice, stream);
    }
    return error;
}

/* Free stream-ordered scratch (NULL: nothing) and forget it. */
void spart_device_discard(void **scratch, cudaStream_t stream)
{
    if (*scratch != NULL) {
        (void)cudaFreeAsync(*scratch, stream);
        *scratch = NULL;
    }
}
