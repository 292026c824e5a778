/*
 * src/weights/weights_convolve_cuda.c: the CUDA table's convolution of
 * weights whose entries lie on a device (spart_weights_convolve through
 * src/weights/weights_ops.h): the kernel and its tables (prepared and
 * checked on the host by spart_convolve_prepare, as for host weights)
 * copied to the weights' device, the entries read where they lie, and
 * convolved there by the twin of the host passes (kernels/weights_convolve.cu,
 * contract src/weights/weights_convolve_device.h: the same runs, cells and
 * values, so the same entries bit for bit as spart_weights_convolve on a
 * host copy). The result is weights on the same device. Built with CUDA
 * only.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/shape.h"
#include "device/device_select.h"
#include "weights/weights_convolve.h"
#include "weights/weights_convolve_device.h"
#include "weights/weights_device_build.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"

/* The host tables the device convolution reads, copied to the device. */
enum { UPLOAD_KERNEL, UPLOAD_ELEMENT_BASE, UPLOAD_DENSE, UPLOAD_OFFSETS, UPLOAD_COUNT };

static const char *const what = "weights_convolve (on the device)";

spart_status spart_weights_convolve_on_device(spart_context *context, const spart_weights *weights,
                                              const spart_convolve_setup *setup,
                                              const spart_array *kernel, spart_weights **convolved)
{
    int previous = -1;
    spart_status status = spart_device_select(context, weights->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    cudaStream_t stream = context->cuda_device == weights->cuda_device
                              ? (cudaStream_t)context->cuda_stream
                              : (cudaStream_t)0;
    const spart_convolve_layout *l = &setup->layout;
    const spart_convolve_entries *e = &setup->entries;
    spart_weights *made =
        spart_weights_allocate(&context->allocator, &setup->orthogonal, &setup->input,
                               &setup->output, weights->num_axis_input, weights->axis_input,
                               weights->num_axis_output, weights->axis_output, 0);
    if (made == NULL) {
        spart_device_leave(previous);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    int64_t kernel_size = spart_shape_size(&kernel->shape);
    int64_t num_kernels = l->size_kernel > 0 ? kernel_size / l->size_kernel : 0;
    const void *from[UPLOAD_COUNT] = {kernel->data, l->element_base, l->dense, e->offsets};
    const size_t bytes[UPLOAD_COUNT] = {
        (size_t)kernel_size * sizeof(double), (size_t)e->num_elements * sizeof(int64_t),
        (size_t)num_kernels + 1, ((size_t)e->num_elements + 1) * sizeof(int64_t)};
    void *uploads[UPLOAD_COUNT] = {NULL};
    cudaError_t error = cudaSuccess;
    for (int a = 0; a < UPLOAD_COUNT && error == cudaSuccess; a++) {
        error = cudaMallocAsync(&uploads[a], bytes[a] > 0 ? bytes[a] : 1, stream);
        if (error != cudaSuccess) {
            uploads[a] = NULL;
        } else if (bytes[a] > 0) {
            error = cudaMemcpyAsync(uploads[a], from[a], bytes[a], cudaMemcpyHostToDevice, stream);
        }
    }
    spart_device_convolve_result result;
    memset(&result, 0, sizeof result);
    if (error == cudaSuccess) {
        spart_device_convolve_layout layout;
        memset(&layout, 0, sizeof layout);
        layout.ndim = l->ndim;
        for (int a = 0; a < l->ndim; a++) {
            layout.shape_output[a] = l->shape_output[a];
            layout.shape_kernel[a] = l->shape_kernel[a];
            layout.row_strides[a] = l->row_strides[a];
        }
        layout.size_kernel = l->size_kernel;
        layout.kernel = uploads[UPLOAD_KERNEL];
        layout.element_base = uploads[UPLOAD_ELEMENT_BASE];
        layout.dense = uploads[UPLOAD_DENSE];
        /* the entries where they lie: prepare made no host copy of device
         * weights (it refuses a broadcast of their elements) */
        spart_device_convolve_entries entries = {
            e->num_elements,  e->offsets[e->num_elements], uploads[UPLOAD_OFFSETS],
            e->indices_input, e->indices_output,           e->values};
        error = (cudaError_t)spart_cuda_weights_convolve(&layout, &entries, made->offsets, &result,
                                                         stream);
    }
    for (int a = 0; a < UPLOAD_COUNT; a++) {
        if (uploads[a] != NULL) {
            (void)cudaFreeAsync(uploads[a], stream);
        }
    }
    cudaError_t done = cudaStreamSynchronize(stream);
    error = error != cudaSuccess ? error : done;
    if (error != cudaSuccess) {
        void *arrays[3] = {result.indices_input, result.indices_output, result.values};
        for (int a = 0; a < 3; a++) {
            (void)cudaFree(arrays[a]);
        }
        spart_weights_free(made);
        spart_device_leave(previous);
        return spart_device_failure(context, (int)error, what);
    }
    spart_free(&context->allocator, made->indices_input);
    spart_free(&context->allocator, made->indices_output);
    spart_free(&context->allocator, made->values);
    /* stream-ordered allocations, freed by cudaFree (which waits for the
     * device) through the release of device weights */
    made->indices_input = result.indices_input;
    made->indices_output = result.indices_output;
    made->values = result.values;
    made->on_device = 1;
    made->cuda_device = weights->cuda_device;
    made->release_device = spart_wdev_release_entries;
    spart_device_leave(previous);
    *convolved = made;
    return SPART_OK;
}
