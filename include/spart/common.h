/*
 * spart/common.h: what every spart module shares.
 *
 * The status codes every fallible function returns, the context that
 * carries allocator hooks, thread count and the last error sentence, the
 * version of the library, and the two small value types (spart_shape and
 * spart_array) that describe NumPy-style arrays in C order.
 *
 * Memory: the context owns nothing the caller passed in. Objects made in a
 * context remember its allocator and must be freed before the context.
 *
 * Thread safety: one context per thread. Distinct contexts, and distinct
 * objects, may be used from distinct threads at once; one object is never
 * mutated concurrently.
 *
 * Determinism: nothing here depends on timing or thread count.
 */
#ifndef SPART_COMMON_H
#define SPART_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "spart/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SPART_NODISCARD __attribute__((warn_unused_result))
#else
#define SPART_NODISCARD
#endif

#if defined(_WIN32) && defined(SPART_SHARED_LIBRARY)
#ifdef SPART_BUILDING_LIBRARY
#define SPART_API __declspec(dllexport)
#else
#define SPART_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define SPART_API __attribute__((visibility("default")))
#else
#define SPART_API
#endif

/* The most axes an array may have (NumPy allows 64; 16 is plenty here). */
#define SPART_MAX_NDIM 16

/* What a function says about its work. SPART_OK is zero; every other code
 * comes with a sentence in spart_context_error(). */
typedef enum spart_status {
    SPART_OK = 0,
    SPART_ERROR_NULL_POINTER = 1,      /* a required pointer was NULL */
    SPART_ERROR_INVALID_ARGUMENT = 2,  /* a size, count or value out of range */
    SPART_ERROR_SHAPE_MISMATCH = 3,    /* shapes that do not broadcast or match */
    SPART_ERROR_AXIS_OUT_OF_RANGE = 4, /* an axis number outside the array */
    SPART_ERROR_NOT_FINITE = 5,        /* a NaN or infinite coordinate */
    SPART_ERROR_OUT_OF_BOUNDS = 6,     /* a point outside the grid, bounds = error */
    SPART_ERROR_UNKNOWN_ENUM = 7,      /* an enum value the library does not know */
    SPART_ERROR_OUT_OF_MEMORY = 8,     /* an allocation failed */
    SPART_ERROR_OVERFLOW = 9,          /* a size that does not fit its integer type */
    SPART_ERROR_IO = 10,               /* a file could not be read or written */
    SPART_ERROR_FILE_FORMAT = 11,      /* a file is not what spart wrote */
    SPART_ERROR_NO_DEVICE = 12,        /* no usable CUDA device */
    SPART_ERROR_NOT_IMPLEMENTED = 13,  /* a case the library does not support */
    SPART_ERROR_INTERNAL = 14          /* a bug in spart: please report it */
} spart_status;

/* The name of a status code, such as "SPART_ERROR_NULL_POINTER"; a fixed
 * string for unknown codes. Never NULL. */
SPART_API const char *spart_status_string(spart_status status);

/* The version as "MAJOR.MINOR.PATCH", of the library actually linked. */
SPART_API const char *spart_version(void);
/* The version as MAJOR*10000 + MINOR*100 + PATCH. */
SPART_API int spart_version_number(void);

/* Allocator hooks (as CHOLMOD's Common). Each receives `user` first.
 * malloc and realloc return NULL on failure; free accepts NULL. All three
 * must be given together, and must return memory aligned for double and
 * int64. The library calls them from several OpenMP threads at once (its
 * parallel builders give each thread its own lists), so they must be
 * thread-safe. */
typedef struct spart_allocator {
    void *(*malloc_fn)(void *user, size_t size);
    void *(*realloc_fn)(void *user, void *pointer, size_t size);
    void (*free_fn)(void *user, void *pointer);
    void *user;
} spart_allocator;

/* A log callback: receives the context's user pointer and one line of
 * text without a newline. The library never prints by itself. */
typedef void (*spart_log_fn)(void *user, const char *line);

typedef struct spart_context spart_context;

/* Make a context with the C library's allocator.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_OUT_OF_MEMORY. On failure
 * *context is NULL and spart_last_error() says why. */
SPART_NODISCARD SPART_API spart_status spart_context_create(spart_context **context);

/* Make a context whose every allocation goes through `allocator` (copied).
 * Errors: SPART_ERROR_NULL_POINTER (also for a hook left NULL),
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status
spart_context_create_with_allocator(const spart_allocator *allocator, spart_context **context);

/* Free a context. Accepts NULL. */
SPART_API void spart_context_free(spart_context *context);

/* The sentence describing the last error in this context ("" if none).
 * Valid until the next call that uses the context. NULL context: the
 * thread's last error, as spart_last_error(). */
SPART_API const char *spart_context_error(const spart_context *context);

/* The sentence describing the last error of any spart call on this
 * thread, also of calls that had no context to write to. */
SPART_API const char *spart_last_error(void);

/* Use `threads` OpenMP threads in this context's host work; 0 (the
 * default) means the OpenMP default (OMP_NUM_THREADS or the core count).
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (negative,
 * or above 65536). Setters leave an earlier error sentence in place. */
SPART_NODISCARD SPART_API spart_status spart_context_set_threads(spart_context *context,
                                                                 int threads);

/* The number of host threads this context's work uses (>= 1). */
SPART_API int spart_context_threads(const spart_context *context);

/* Send the library's log lines to `log` (NULL: discard them). */
SPART_NODISCARD SPART_API spart_status spart_context_set_log(spart_context *context,
                                                             spart_log_fn log, void *user);

/* Record an error in the context, as the library does: `status` with a
 * printf-style sentence (also the thread's last error), and return
 * `status`. For code built on spart (operator callbacks, solvers) that
 * reports through the same channel. NULL context: the thread's last error
 * only. */
SPART_API spart_status spart_context_set_error(spart_context *context, spart_status status,
                                               const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Memory through the context's allocator hooks: `bytes` bytes (aligned for
 * double and int64), or NULL on failure or for a NULL context; realloc as
 * C's; free accepts NULL. Memory from one context goes back to the same. */
SPART_API void *spart_context_malloc(const spart_context *context, size_t bytes);
SPART_API void *spart_context_realloc(const spart_context *context, void *pointer, size_t bytes);
SPART_API void spart_context_free_memory(const spart_context *context, void *pointer);

/* A progress callback for long work: receives the context's progress user
 * pointer, the stage ("weights", "conservative transpose", "assembly"),
 * and how far it is (done of total units; done = total at the end). Called
 * from one thread at a time (the calling thread, or thread 0 of a parallel
 * region), at most about a hundred times per stage; it must return quickly
 * and not call spart with the same context. */
typedef void (*spart_progress_fn)(void *user, const char *stage, int64_t done, int64_t total);

/* Report the progress of this context's long work to `progress` (NULL:
 * none, the default). Errors: SPART_ERROR_NULL_POINTER. */
SPART_NODISCARD SPART_API spart_status spart_context_set_progress(spart_context *context,
                                                                  spart_progress_fn progress,
                                                                  void *user);

/* The shape of an array: `ndim` extents, C order (last axis fastest). A
 * zero-dimensional shape (ndim = 0) is a scalar. */
typedef struct spart_shape {
    int ndim;
    int64_t dims[SPART_MAX_NDIM];
} spart_shape;

/* A read-only float64 array, dense in C order, whose shape broadcasts as
 * NumPy's does: missing leading axes and axes of length 1 are repeated. */
typedef struct spart_array {
    const double *data;
    spart_shape shape;
} spart_array;

/* The number of elements of a shape (1 for ndim = 0); -1 if it overflows
 * int64 or the shape is invalid. */
SPART_API int64_t spart_shape_size(const spart_shape *shape);

#ifdef __cplusplus
}
#endif

#endif /* SPART_COMMON_H */
