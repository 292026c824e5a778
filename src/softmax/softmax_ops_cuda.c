/*
 * src/softmax/softmax_ops_cuda.c: the CUDA device's table of softmax
 * operations (src/softmax/softmax_ops.h): each enters the context's
 * device, checks that its arrays are that device's memory, enqueues the
 * kernels of kernels/softmax.cu and kernels/softmax_aggregate.cu on the
 * context's stream and leaves. Built only with CUDA (without it
 * spart_softmax_select says SPART_ERROR_NO_DEVICE).
 */
#include <cuda_runtime_api.h>

#include "core/internal.h"
#include "device/device_select.h"
#include "softmax/softmax_ops.h"

static spart_status cuda_begin(spart_context *context, const char *what, int count,
                               const void *const *pointers, const char *const *names, int *token)
{
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    for (int k = 0; k < count && status == SPART_OK; k++) {
        if (pointers[k] != NULL) { /* NULL: an array with no values, or an optional one */
            status = spart_device_check_pointer(context, pointers[k], context->cuda_device, what,
                                                names[k]);
        }
    }
    if (status != SPART_OK) {
        spart_device_leave(previous);
    }
    *token = previous;
    return status;
}

static spart_status cuda_end(spart_context *context, int error, const char *what, int token)
{
    spart_status status = SPART_OK;
    if (error != 0) {
        status = spart_device_failure(context, error, what);
    }
    spart_device_leave(token);
    return status;
}

static spart_status cuda_allocate(spart_context *context, const char *what, size_t bytes,
                                  void **workspace)
{
    int previous = -1;
    *workspace = NULL;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status == SPART_OK) {
        cudaError_t error = cudaMallocAsync(workspace, bytes, (cudaStream_t)context->cuda_stream);
        if (error != cudaSuccess) {
            *workspace = NULL;
            status = spart_device_failure(context, (int)error, what);
        }
        spart_device_leave(previous);
    }
    return status;
}

static void cuda_release(spart_context *context, void *workspace)
{
    if (workspace == NULL) {
        return;
    }
    int previous = -1;
    if (spart_device_enter(context, "softmax", &previous) == SPART_OK) {
        (void)cudaFreeAsync(workspace, (cudaStream_t)context->cuda_stream);
        spart_device_leave(previous);
    }
}

/* The first bad row pointer: a kernel into device scratch, copied back,
 * the stream waited for. */
static int cuda_check_rows(spart_context *context, const spart_softmax_problem *problem,
                           int64_t *first_bad)
{
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    int64_t *scratch = NULL;
    cudaError_t error = cudaMallocAsync((void **)&scratch, sizeof(int64_t), stream);
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_softmax_device_check_rows(problem, scratch, stream);
        if (error == cudaSuccess) {
            error = cudaMemcpyAsync(first_bad, scratch, sizeof(int64_t), cudaMemcpyDeviceToHost,
                                    stream);
        }
        cudaError_t freed = cudaFreeAsync(scratch, stream);
        if (error == cudaSuccess) {
            error = freed;
        }
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    return (int)error;
}

static int cuda_forward(spart_context *context, const spart_softmax_problem *problem,
                        const void *scores, void *out, double *workspace)
{
    return spart_softmax_device_forward(problem, scores, out, workspace, context->cuda_stream);
}

static int cuda_backward(spart_context *context, const spart_softmax_problem *problem,
                         const void *out, const void *grad_out, void *grad_scores,
                         double *workspace)
{
    return spart_softmax_device_backward(problem, out, grad_out, grad_scores, workspace,
                                         context->cuda_stream);
}

static int cuda_aggregate(spart_context *context, const spart_softmax_problem *problem,
                          const void *scores, const void *features, void *aggregated, void *out,
                          double *workspace)
{
    return spart_softmax_device_aggregate(problem, scores, features, aggregated, out, workspace,
                                          context->cuda_stream);
}

const spart_softmax_ops spart_softmax_cuda_ops = {
    .where = "CUDA device",
    .begin = cuda_begin,
    .end = cuda_end,
    .allocate = cuda_allocate,
    .release = cuda_release,
    .check_rows = cuda_check_rows,
    .forward = cuda_forward,
    .backward = cuda_backward,
    .aggregate = cuda_aggregate,
};
