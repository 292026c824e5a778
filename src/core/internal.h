/*
 * src/core/internal.h: what the library's own files share and users never see:
 * the context's layout, allocation through its hooks, and error sentences.
 */
#ifndef SPART_INTERNAL_H
#define SPART_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "spart/common.h"

#define SPART_ERROR_LENGTH 512

struct spart_context {
    spart_allocator allocator;
    int threads; /* 0: the OpenMP default */
    spart_log_fn log;
    void *log_user;
    spart_progress_fn progress; /* NULL: no progress reports */
    void *progress_user;
    char error[SPART_ERROR_LENGTH];
    int cuda_device;   /* the CUDA device of device work (default 0) */
    void *cuda_stream; /* its cudaStream_t; NULL: the default stream */
    /* The context's own pool of stream-ordered device memory
     * (spart_memory_allocate_async; src/device/device_memory_cuda.c), made
     * at its first use on device cuda_pool_device, and what destroys it in
     * spart_context_free (NULL: no pool), so that core needs no CUDA. */
    void *cuda_pool;
    int cuda_pool_device;
    void (*release_cuda_pool)(void *pool);
};

/* Record `status` with a printf-style sentence in the context (NULL: the
 * thread's last error only) and return `status`, so that a check reads
 *     return spart_fail(ctx, SPART_ERROR_..., "...", ...); */
spart_status spart_fail(spart_context *context, spart_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Clear the context's error sentence at the start of a public call. */
void spart_clear_error(spart_context *context);

/* Allocation through the context's hooks. Sizes are checked for overflow:
 * count * size that does not fit size_t returns NULL. */
void *spart_alloc(const spart_allocator *allocator, size_t count, size_t size);
void *spart_alloc_zero(const spart_allocator *allocator, size_t count, size_t size);
void *spart_realloc(const spart_allocator *allocator, void *pointer, size_t count, size_t size);
void spart_free(const spart_allocator *allocator, void *pointer);

/* Report progress (spart_context_set_progress) if the context asked for
 * it: every call at done = 0 and done = total, else only when `done`
 * crosses another hundredth of `total`. Call from one thread at a time. */
void spart_report_progress(const spart_context *context, const char *stage, int64_t done,
                           int64_t total);

/* The number of OpenMP threads a context's work uses. */
int spart_threads(const spart_context *context);

/* Write a shape as "3x4x5" (or "scalar") into `buffer`. */
const char *spart_shape_format(const spart_shape *shape, char *buffer, size_t size);

#endif /* SPART_INTERNAL_H */
