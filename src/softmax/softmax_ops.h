/*
 * src/softmax/softmax_ops.h: the one place where a softmax call learns
 * whether it runs on the host or on a CUDA device. src/softmax/softmax.c
 * checks the arguments, asks spart_softmax_select for the table of the
 * segments' location and calls it: begin (on a device: enter the
 * context's device and check that every array is its memory), the
 * operation, end (leave; a CUDA error becomes a status). Host table:
 * src/softmax/softmax_ops_host.c (host/softmax.c); CUDA table:
 * src/softmax/softmax_ops_cuda.c (kernels/softmax.cu), built only with
 * CUDA.
 *
 * The operations return 0 or a CUDA error (as int).
 */
#ifndef SPART_SOFTMAX_OPS_H
#define SPART_SOFTMAX_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "softmax/softmax_kernels.h"
#include "spart/softmax.h"

typedef struct spart_softmax_ops {
    const char *where; /* for sentences: "host", "CUDA device" */
    spart_status (*begin)(spart_context *context, const char *what, int count,
                          const void *const *pointers, const char *const *names, int *token);
    spart_status (*end)(spart_context *context, int error, const char *what, int token);
    /* Workspace of the plain forms, where the arrays are (stream-ordered
     * on a device); release accepts NULL. */
    spart_status (*allocate)(spart_context *context, const char *what, size_t bytes,
                             void **workspace);
    void (*release)(spart_context *context, void *workspace);
    /* The first bad row pointer (R + 1: none) into *first_bad, a host
     * value (on a device: copied back, the stream waited for). */
    int (*check_rows)(spart_context *context, const spart_softmax_problem *problem,
                      int64_t *first_bad);
    int (*forward)(spart_context *context, const spart_softmax_problem *problem, const void *scores,
                   void *out, double *workspace);
    int (*backward)(spart_context *context, const spart_softmax_problem *problem, const void *out,
                    const void *grad_out, void *grad_scores, double *workspace);
    int (*aggregate)(spart_context *context, const spart_softmax_problem *problem,
                     const void *scores, const void *features, void *aggregated, void *out,
                     double *workspace);
} spart_softmax_ops;

/* The table of `on_device`'s location into *ops; SPART_ERROR_NO_DEVICE
 * ("spart was built without CUDA: ...") for a device without CUDA. */
spart_status spart_softmax_select(spart_context *context, int on_device, const char *what,
                                  const spart_softmax_ops **ops);

extern const spart_softmax_ops spart_softmax_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_softmax_ops spart_softmax_cuda_ops;
#endif

#endif /* SPART_SOFTMAX_OPS_H */
