/*
 * src/scoring/scoring_ops.h: the one place where a scoring call learns
 * whether it runs on the host or on a CUDA device (as src/mart/mart_ops.h
 * for the MART steps). src/scoring/scoring.c checks the arguments and
 * asks spart_scoring_select for the table of on_device's location: the
 * host's (src/scoring/scoring_ops_host.c over host/scoring.c) or the CUDA
 * device's (src/scoring/scoring_ops_cuda.c over kernels/scoring.cu, built
 * only with CUDA).
 */
#ifndef SPART_SCORING_OPS_H
#define SPART_SCORING_OPS_H

#include <stddef.h>

#include "scoring/scoring_kernels.h"
#include "spart/common.h"

typedef struct spart_scoring_ops {
    const char *where; /* for sentences: "host", "CUDA device" */
    /* The whole call, arguments already checked: on a device, enter the
     * context's device, check that every array is its memory, launch on
     * the context's stream, leave. `workspace` NULL: allocate the scratch
     * that is needed (on a device stream-ordered, and only when the
     * launch needs it), else spart_scoring_workspace_values doubles where
     * the arrays are. */
    spart_status (*run)(spart_context *context, const spart_scoring_problem *problem,
                        void *workspace, const char *what);
} spart_scoring_ops;

/* The table of `on_device`'s location into *ops; SPART_ERROR_NO_DEVICE
 * ("spart was built without CUDA: ...") for a device without CUDA. */
spart_status spart_scoring_select(spart_context *context, int on_device, const char *what,
                                  const spart_scoring_ops **ops);

extern const spart_scoring_ops spart_scoring_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_scoring_ops spart_scoring_cuda_ops;
#endif

#endif /* SPART_SCORING_OPS_H */
