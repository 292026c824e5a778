/*
 * src/device/device_memory_cuda.c: the CUDA halves of device memory,
 * copies and graphs (src/device/device_memory.h: called by
 * src/device/device_memory.c once the arguments are checked and the
 * context's device is current), and the selection of a device for a call
 * (src/device/device_select.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_memory.h"
#include "device/device_select.h"

spart_status spart_device_failure(spart_context *context, int error, const char *what)
{
    cudaError_t cuda = (cudaError_t)error;
    spart_status status = SPART_ERROR_INTERNAL;
    if (cuda == cudaErrorMemoryAllocation) {
        status = SPART_ERROR_OUT_OF_MEMORY;
    } else if (cuda == cudaErrorNoDevice || cuda == cudaErrorInsufficientDriver ||
               cuda == cudaErrorInvalidDevice || cuda == cudaErrorDevicesUnavailable) {
        status = SPART_ERROR_NO_DEVICE;
    }
    return spart_fail(context, status, "%s: CUDA error %s (%s)", what, cudaGetErrorName(cuda),
                      cudaGetErrorString(cuda));
}

spart_status spart_device_check_exists(spart_context *context, int device)
{
    int count = 0;
    cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: leave no error behind */
        /* The runtime says "insufficient driver" also when there is no
         * driver at all: tell the two apart by the driver's version (0:
         * none installed). */
        int driver = 0;
        int runtime = 0;
        (void)cudaDriverGetVersion(&driver);
        (void)cudaRuntimeGetVersion(&runtime);
        if (error == cudaErrorInsufficientDriver && driver == 0) {
            return spart_fail(context, SPART_ERROR_NO_DEVICE,
                              "no CUDA device can be used: no NVIDIA driver is installed "
                              "(libcuda was not found)");
        }
        if (error == cudaErrorInsufficientDriver) {
            return spart_fail(context, SPART_ERROR_NO_DEVICE,
                              "no CUDA device can be used: the NVIDIA driver supports CUDA "
                              "%d.%d, older than the CUDA %d.%d runtime spart was built with "
                              "(update the driver)",
                              driver / 1000, driver % 1000 / 10, runtime / 1000,
                              runtime % 1000 / 10);
        }
        return spart_fail(context, SPART_ERROR_NO_DEVICE,
                          "no CUDA device is visible (cudaGetDeviceCount: %s)",
                          cudaGetErrorString(error));
    }
    if (count == 0) {
        return spart_fail(context, SPART_ERROR_NO_DEVICE, "no CUDA device is visible");
    }
    if (device >= count) {
        return spart_fail(
            context, SPART_ERROR_NO_DEVICE,
            "CUDA device %d does not exist: %d device(s) are visible, numbered from 0", device,
            count);
    }
    return SPART_OK;
}

spart_status spart_device_select(spart_context *context, int device, int *previous)
{
    cudaError_t error = cudaGetDevice(previous);
    if (error == cudaSuccess && *previous != device) {
        error = cudaSetDevice(device);
    }
    if (error != cudaSuccess) {
        *previous = -1;
        return spart_device_failure(context, (int)error, "selecting the CUDA device");
    }
    return SPART_OK;
}

void spart_device_leave(int previous)
{
    int current = -1;
    if (previous >= 0 && cudaGetDevice(&current) == cudaSuccess && current != previous) {
        (void)cudaSetDevice(previous);
    }
}

spart_status spart_device_check_pointer(spart_context *context, const void *pointer, int device,
                                        const char *what, const char *name)
{
    struct cudaPointerAttributes attributes;
    memset(&attributes, 0, sizeof attributes);
    cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
    if (error != cudaSuccess) {
        (void)cudaGetLastError();
        attributes.type = cudaMemoryTypeUnregistered;
    }
    if (attributes.type == cudaMemoryTypeManaged) {
        return SPART_OK;
    }
    if (attributes.type != cudaMemoryTypeDevice) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: %s is host memory, but the work runs on CUDA device %d: pass "
                          "device memory (spart_device_malloc or cudaMalloc)",
                          what, name, device);
    }
    if (attributes.device != device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: %s is memory of CUDA device %d, but the work runs on device %d",
                          what, name, attributes.device, device);
    }
    return SPART_OK;
}

spart_status spart_device_malloc_entered(spart_context *context, size_t bytes, void **pointer)
{
    cudaError_t error = cudaMalloc(pointer, bytes > 0 ? bytes : 1);
    if (error != cudaSuccess) {
        *pointer = NULL;
        (void)cudaGetLastError();
        return spart_device_failure(context, (int)error, "device_malloc");
    }
    return SPART_OK;
}

void spart_device_free_entered(void *pointer)
{
    (void)cudaFree(pointer);
}

/* ---- stream-ordered memory of the context's pool ---- */

static void release_pool(void *pool)
{
    /* Memory still allocated from it, or frees still pending, keep it
     * alive until they are done (cudaMemPoolDestroy's contract). */
    (void)cudaMemPoolDestroy((cudaMemPool_t)pool);
}

/* The context's pool for its device: made at the first call, with a
 * release threshold that keeps every byte freed into it (the pool does not
 * give memory back at synchronisations, so the next call's allocation is
 * a stream-ordered reuse, not a new mapping); NULL when the context has
 * since moved to another device (the default pool serves then). */
static cudaError_t context_pool(spart_context *context, cudaMemPool_t *pool)
{
    *pool = NULL;
    if (context->cuda_pool != NULL) {
        if (context->cuda_pool_device == context->cuda_device) {
            *pool = (cudaMemPool_t)context->cuda_pool;
        }
        return cudaSuccess;
    }
    struct cudaMemPoolProps properties;
    memset(&properties, 0, sizeof properties);
    properties.allocType = cudaMemAllocationTypePinned;
    properties.handleTypes = cudaMemHandleTypeNone;
    properties.location.type = cudaMemLocationTypeDevice;
    properties.location.id = context->cuda_device;
    cudaMemPool_t made = NULL;
    cudaError_t error = cudaMemPoolCreate(&made, &properties);
    if (error == cudaSuccess) {
        uint64_t keep = UINT64_MAX;
        error = cudaMemPoolSetAttribute(made, cudaMemPoolAttrReleaseThreshold, &keep);
        if (error != cudaSuccess) {
            (void)cudaMemPoolDestroy(made);
        }
    }
    if (error == cudaSuccess) {
        context->cuda_pool = made;
        context->cuda_pool_device = context->cuda_device;
        context->release_cuda_pool = release_pool;
        *pool = made;
    }
    return error;
}

spart_status spart_device_malloc_async_entered(spart_context *context, size_t bytes, void **pointer)
{
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    cudaMemPool_t pool = NULL;
    cudaError_t error = context_pool(context, &pool);
    if (error == cudaSuccess) {
        error = pool != NULL ? cudaMallocFromPoolAsync(pointer, bytes > 0 ? bytes : 1, pool, stream)
                             : cudaMallocAsync(pointer, bytes > 0 ? bytes : 1, stream);
    }
    if (error != cudaSuccess) {
        *pointer = NULL;
        (void)cudaGetLastError();
        return spart_device_failure(context, (int)error, "memory_allocate_async");
    }
    return SPART_OK;
}

void spart_device_free_async_entered(spart_context *context, void *pointer)
{
    (void)cudaFreeAsync(pointer, (cudaStream_t)context->cuda_stream);
}

spart_status spart_device_copy_entered(spart_context *context, void *to, const void *from,
                                       size_t bytes, spart_copy_kind kind, const char *what)
{
    spart_status status = SPART_OK;
    enum cudaMemcpyKind kinds[3] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                    cudaMemcpyDeviceToDevice};
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    cudaError_t error = cudaMemcpyAsync(to, from, bytes, kinds[kind], stream);
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    if (error != cudaSuccess) {
        status = spart_device_failure(context, (int)error, what);
    }
    return status;
}

/* ---- graphs ---- */

struct spart_device_graph {
    spart_context *context; /* whose allocator holds this object */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

void spart_device_graph_free(spart_device_graph *graph)
{
    if (graph == NULL) {
        return;
    }
    if (graph->exec != NULL) {
        (void)cudaGraphExecDestroy(graph->exec);
    }
    if (graph->graph != NULL) {
        (void)cudaGraphDestroy(graph->graph);
    }
    spart_free(&graph->context->allocator, graph);
}

spart_status spart_device_graph_record_entered(spart_context *context,
                                               spart_status (*record)(void *user,
                                                                      spart_context *context),
                                               void *user, spart_device_graph **graph)
{
    spart_status status = SPART_OK;
    spart_device_graph *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "device_graph_record: could not allocate the graph");
    }
    made->context = context;
    /* The legacy default stream cannot be captured: record on a private
     * stream standing in for the context's. */
    cudaStream_t stream = NULL;
    cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    void *context_stream = context->cuda_stream;
    if (error == cudaSuccess) {
        error = cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed);
    }
    if (error != cudaSuccess) {
        status = spart_device_failure(context, (int)error, "device_graph_record: starting");
    } else {
        context->cuda_stream = stream;
        status = record(user, context);
        context->cuda_stream = context_stream;
        error = cudaStreamEndCapture(stream, &made->graph);
        if (status == SPART_OK && error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, "device_graph_record: capturing");
        }
    }
    if (status == SPART_OK) {
        error = cudaGraphInstantiate(&made->exec, made->graph, 0);
        if (error != cudaSuccess) {
            status =
                spart_device_failure(context, (int)error, "device_graph_record: instantiating");
        }
    }
    if (stream != NULL) {
        (void)cudaStreamDestroy(stream);
    }
    (void)cudaGetLastError();
    if (status != SPART_OK) {
        spart_device_graph_free(made);
        return status;
    }
    *graph = made;
    return SPART_OK;
}

spart_status spart_device_graph_launch_entered(spart_context *context,
                                               const spart_device_graph *graph)
{
    cudaError_t error = cudaGraphLaunch(graph->exec, (cudaStream_t)context->cuda_stream);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error, "device_graph_launch");
    }
    return SPART_OK;
}
