/*
 * solvers/mart_internal.h: the steps of the MART driver, exposed to the
 * unit tests, and small helpers of the solvers built on the public API.
 */
#ifndef SPART_MART_INTERNAL_H
#define SPART_MART_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "spart/common.h"
#include "spart/mart.h"

/* count doubles through the context's allocator (NULL on overflow). */
double *spart_mart_alloc_doubles(const spart_context *context, size_t count);
double *spart_mart_realloc_doubles(const spart_context *context, double *pointer, size_t count);

/* Fail with `status`, keeping the sentence already in the context (what
 * a callback said) after ours: "<ours>: <theirs>". */
spart_status spart_mart_fail_keep(spart_context *context, spart_status status, const char *format,
                                  ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The end of every forward operator of a counting detector: predicted
 * counts clamped at 0 in place and, when `widths` is not NULL, their noise
 * widths sqrt(gain d + read_noise^2); on the host or the device. */
spart_status spart_mart_finish_prediction(spart_context *context, double *images, double *widths,
                                          int64_t size, double gain, double read_noise,
                                          int on_device);

/* A float written as Python's repr writes it (0.001, 1e-05, 100.0), for
 * messages worded as ctis's. */
typedef struct spart_mart_float_text {
    char text[48];
} spart_mart_float_text;
spart_mart_float_text spart_mart_python_float(double value);

#endif /* SPART_MART_INTERNAL_H */
