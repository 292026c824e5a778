/*
 * src/scoring/scoring_ops_cuda.c: the CUDA device's table of scoring
 * operations (src/scoring/scoring_ops.h): enter the context's device,
 * check that every array is its memory, launch kernels/scoring.cu on the
 * context's stream (scratch, when the launch needs it and the caller gave
 * none, stream-ordered: cudaMallocAsync and cudaFreeAsync, so nothing
 * waits), leave. Built only with CUDA.
 */
#include <cuda_runtime_api.h>

#include "core/internal.h"
#include "device/device_select.h"
#include "scoring/scoring_kernels.h"
#include "scoring/scoring_ops.h"

static spart_status cuda_run(spart_context *context, const spart_scoring_problem *problem,
                             void *workspace, const char *what)
{
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    const void *pointers[] = {problem->query, problem->candidates, problem->probabilities,
                              problem->logits, workspace};
    const char *names[] = {"query", "candidates", "probabilities", "logits", "workspace"};
    for (int k = 0; k < 5 && status == SPART_OK; k++) {
        if (pointers[k] != NULL) { /* NULL: logits or workspace left out */
            status = spart_device_check_pointer(context, pointers[k], context->cuda_device, what,
                                                names[k]);
        }
    }
    int error = 0;
    int path = SPART_SCORING_PATH_AUTO;
    if (status == SPART_OK) {
        path = spart_scoring_device_path(problem, SPART_SCORING_PATH_AUTO, &error);
    }
    void *scratch = workspace;
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    if (status == SPART_OK && error == 0 && path == SPART_SCORING_PATH_GRID && scratch == NULL) {
        size_t bytes =
            (size_t)spart_scoring_workspace_values(problem->num_question, problem->num_candidate) *
            sizeof(double);
        error = (int)cudaMallocAsync(&scratch, bytes, stream);
    }
    if (status == SPART_OK && error == 0) {
        error = spart_scoring_device_launch(problem, scratch, path, stream);
    }
    if (workspace == NULL && scratch != NULL) {
        int freed = (int)cudaFreeAsync(scratch, stream);
        error = error != 0 ? error : freed;
    }
    if (status == SPART_OK && error != 0) {
        status = spart_device_failure(context, error, what);
    }
    spart_device_leave(previous);
    return status;
}

const spart_scoring_ops spart_scoring_cuda_ops = {
    .where = "CUDA device",
    .run = cuda_run,
};
