/* src/core/context.c: the context (allocator hooks, threads, log) and memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/internal.h"

static void *default_malloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}

static void *default_realloc(void *user, void *pointer, size_t size)
{
    (void)user;
    return realloc(pointer, size);
}

static void default_free(void *user, void *pointer)
{
    (void)user;
    free(pointer);
}

spart_status spart_context_create(spart_context **context)
{
    const spart_allocator allocator = {default_malloc, default_realloc, default_free, NULL};
    return spart_context_create_with_allocator(&allocator, context);
}

spart_status spart_context_create_with_allocator(const spart_allocator *allocator,
                                                 spart_context **context)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context: the output pointer is NULL");
    }
    *context = NULL;
    if (allocator == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "allocator is NULL");
    }
    if (allocator->malloc_fn == NULL || allocator->realloc_fn == NULL ||
        allocator->free_fn == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER,
                          "allocator: malloc_fn, realloc_fn and free_fn must all be given");
    }
    spart_context *made = allocator->malloc_fn(allocator->user, sizeof *made);
    if (made == NULL) {
        return spart_fail(NULL, SPART_ERROR_OUT_OF_MEMORY, "context: could not allocate %zu bytes",
                          sizeof *made);
    }
    memset(made, 0, sizeof *made);
    made->allocator = *allocator;
    *context = made;
    return SPART_OK;
}

void spart_context_free(spart_context *context)
{
    if (context == NULL) {
        return;
    }
    if (context->release_cuda_pool != NULL) {
        context->release_cuda_pool(context->cuda_pool);
    }
    const spart_allocator allocator = context->allocator;
    allocator.free_fn(allocator.user, context);
}

/* More threads than any machine has cores by far: INT_MAX would make
 * OpenMP try to start them. */
#define SPART_MAX_THREADS 65536

spart_status spart_context_set_threads(spart_context *context, int threads)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (threads < 0 || threads > SPART_MAX_THREADS) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "threads = %d is outside [0, %d] (0 means the OpenMP default)", threads,
                          SPART_MAX_THREADS);
    }
    context->threads = threads;
    return SPART_OK;
}

int spart_threads(const spart_context *context)
{
    if (context != NULL && context->threads > 0) {
        return context->threads;
    }
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int spart_context_threads(const spart_context *context)
{
    return spart_threads(context);
}

spart_status spart_context_set_log(spart_context *context, spart_log_fn log, void *user)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    /* setters leave an earlier error sentence alone (a caller reads it after) */
    context->log = log;
    context->log_user = user;
    return SPART_OK;
}

spart_status spart_context_set_progress(spart_context *context, spart_progress_fn progress,
                                        void *user)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    /* setters leave an earlier error sentence alone (a caller reads it after) */
    context->progress = progress;
    context->progress_user = user;
    return SPART_OK;
}

void spart_report_progress(const spart_context *context, const char *stage, int64_t done,
                           int64_t total)
{
    if (context == NULL || context->progress == NULL || total <= 0) {
        return;
    }
    /* Only where done crosses a hundredth of total (or at either end). */
    int64_t step = total / 100 > 0 ? total / 100 : 1;
    if (done == 0 || done >= total || done % step == 0) {
        context->progress(context->progress_user, stage, done < total ? done : total, total);
    }
}

void *spart_alloc(const spart_allocator *allocator, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        return NULL;
    }
    size_t bytes = count * size;
    /* Never ask for zero bytes: some allocators return NULL for it. */
    return allocator->malloc_fn(allocator->user, bytes > 0 ? bytes : 1);
}

void *spart_alloc_zero(const spart_allocator *allocator, size_t count, size_t size)
{
    void *pointer = spart_alloc(allocator, count, size);
    if (pointer != NULL) {
        memset(pointer, 0, count * size);
    }
    return pointer;
}

void *spart_realloc(const spart_allocator *allocator, void *pointer, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        return NULL;
    }
    size_t bytes = count * size;
    return allocator->realloc_fn(allocator->user, pointer, bytes > 0 ? bytes : 1);
}

void spart_free(const spart_allocator *allocator, void *pointer)
{
    if (pointer != NULL) {
        allocator->free_fn(allocator->user, pointer);
    }
}

int64_t spart_shape_size(const spart_shape *shape)
{
    if (shape == NULL || shape->ndim < 0 || shape->ndim > SPART_MAX_NDIM) {
        return -1;
    }
    int64_t size = 1;
    for (int k = 0; k < shape->ndim; k++) {
        int64_t n = shape->dims[k];
        if (n < 0) {
            return -1;
        }
        if (n != 0 && size > INT64_MAX / n) {
            return -1;
        }
        size *= n;
    }
    return size;
}

const char *spart_shape_format(const spart_shape *shape, char *buffer, size_t size)
{
    if (shape->ndim == 0) {
        snprintf(buffer, size, "scalar");
        return buffer;
    }
    size_t used = 0;
    buffer[0] = '\0';
    for (int k = 0; k < shape->ndim && used < size; k++) {
        int written = snprintf(buffer + used, size - used, k == 0 ? "%lld" : "x%lld",
                               (long long)shape->dims[k]);
        if (written < 0) {
            break;
        }
        used += (size_t)written;
    }
    return buffer;
}

void *spart_context_malloc(const spart_context *context, size_t bytes)
{
    return context != NULL ? spart_alloc(&context->allocator, bytes, 1) : NULL;
}

void *spart_context_realloc(const spart_context *context, void *pointer, size_t bytes)
{
    return context != NULL ? spart_realloc(&context->allocator, pointer, bytes, 1) : NULL;
}

void spart_context_free_memory(const spart_context *context, void *pointer)
{
    if (context != NULL) {
        spart_free(&context->allocator, pointer);
    }
}
