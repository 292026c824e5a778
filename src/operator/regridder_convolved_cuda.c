/*
 * src/operator/regridder_convolved_cuda.c: the device half of
 * spart_regridder_create_device_convolved (src/operator/regridder_convolved.c): the unconvolved
 * entries, the kernel and its tables copied to the device, convolved there
 * (kernels/weights_convolve.cu), and assembled without a copy to the host. Built with CUDA only.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "weights/weights_convolve_device.h"
#include "device/device_select.h"
#include "operator/regridder_convolved.h"
#include "operator/regridder_device.h"
#include "spart/device.h"
#include "weights/weights_internal.h"

/* The host arrays the device convolution reads, copied to the device. */
enum {
    UPLOAD_KERNEL,
    UPLOAD_ELEMENT_BASE,
    UPLOAD_DENSE,
    UPLOAD_OFFSETS,
    UPLOAD_INDICES_INPUT,
    UPLOAD_INDICES_OUTPUT,
    UPLOAD_VALUES,
    UPLOAD_COUNT
};

/* Copy every array to stream-ordered device memory (uploads[], freed by
 * the caller with cudaFreeAsync, whatever happened). */
static cudaError_t upload_all(const spart_convolve_setup *setup, const spart_array *kernel,
                              cudaStream_t stream, void **uploads)
{
    const spart_convolve_layout *layout = &setup->layout;
    const spart_convolve_entries *entries = &setup->entries;
    int64_t kernel_size = spart_shape_size(&kernel->shape);
    int64_t num_kernels = layout->size_kernel > 0 ? kernel_size / layout->size_kernel : 0;
    size_t total = (size_t)entries->offsets[entries->num_elements];
    const void *from[UPLOAD_COUNT] = {
        kernel->data,           layout->element_base,    layout->dense,  entries->offsets,
        entries->indices_input, entries->indices_output, entries->values};
    const size_t bytes[UPLOAD_COUNT] = {(size_t)kernel_size * sizeof(double),
                                        (size_t)entries->num_elements * sizeof(int64_t),
                                        (size_t)num_kernels + 1,
                                        ((size_t)entries->num_elements + 1) * sizeof(int64_t),
                                        total * sizeof(int64_t),
                                        total * sizeof(int64_t),
                                        total * sizeof(double)};
    cudaError_t error = cudaSuccess;
    for (int a = 0; a < UPLOAD_COUNT && error == cudaSuccess; a++) {
        error = cudaMallocAsync(&uploads[a], bytes[a] > 0 ? bytes[a] : 1, stream);
        if (error != cudaSuccess) {
            uploads[a] = NULL;
        } else if (bytes[a] > 0) {
            error = cudaMemcpyAsync(uploads[a], from[a], bytes[a], cudaMemcpyHostToDevice, stream);
        }
    }
    return error;
}

/* The layout and the entries as the CUDA entry point reads them. */
static void describe(const spart_convolve_setup *setup, void *const *uploads,
                     spart_device_convolve_layout *layout, spart_device_convolve_entries *entries)
{
    memset(layout, 0, sizeof *layout);
    layout->ndim = setup->layout.ndim;
    for (int a = 0; a < layout->ndim; a++) {
        layout->shape_output[a] = setup->layout.shape_output[a];
        layout->shape_kernel[a] = setup->layout.shape_kernel[a];
        layout->row_strides[a] = setup->layout.row_strides[a];
    }
    layout->size_kernel = setup->layout.size_kernel;
    layout->kernel = uploads[UPLOAD_KERNEL];
    layout->element_base = uploads[UPLOAD_ELEMENT_BASE];
    layout->dense = uploads[UPLOAD_DENSE];
    memset(entries, 0, sizeof *entries);
    entries->num_elements = setup->entries.num_elements;
    entries->num_entries = setup->entries.offsets[setup->entries.num_elements];
    entries->offsets = uploads[UPLOAD_OFFSETS];
    entries->indices_input = uploads[UPLOAD_INDICES_INPUT];
    entries->indices_output = uploads[UPLOAD_INDICES_OUTPUT];
    entries->values = uploads[UPLOAD_VALUES];
}

/* Convolve on the device: the shell's offsets and the device entries of
 * the result. */
static spart_status convolve_on_device(spart_context *context, const spart_convolve_setup *setup,
                                       const spart_array *kernel, spart_weights *shell,
                                       spart_device_entries *convolved, cudaStream_t stream)
{
    void *uploads[UPLOAD_COUNT] = {NULL};
    spart_device_convolve_result result;
    memset(&result, 0, sizeof result);
    cudaError_t error = upload_all(setup, kernel, stream, uploads);
    if (error == cudaSuccess) {
        spart_device_convolve_layout layout;
        spart_device_convolve_entries entries;
        describe(setup, uploads, &layout, &entries);
        error = (cudaError_t)spart_cuda_weights_convolve(&layout, &entries, shell->offsets, &result,
                                                         stream);
    }
    for (int a = 0; a < UPLOAD_COUNT; a++) {
        if (uploads[a] != NULL) {
            (void)cudaFreeAsync(uploads[a], stream);
        }
    }
    if (error != cudaSuccess) {
        (void)cudaStreamSynchronize(stream);
        return spart_device_failure(context, (int)error, "convolving the weights on the device");
    }
    convolved->indices_input = result.indices_input;
    convolved->indices_output = result.indices_output;
    convolved->values = result.values;
    return SPART_OK;
}

/* Free what the assembly did not take over. */
static void release_entries(spart_device_entries *entries, cudaStream_t stream)
{
    void *arrays[3] = {entries->indices_input, entries->indices_output, entries->values};
    for (int a = 0; a < 3; a++) {
        if (arrays[a] != NULL) {
            (void)cudaFreeAsync(arrays[a], stream);
        }
    }
    memset(entries, 0, sizeof *entries);
    (void)cudaStreamSynchronize(stream);
}

/* Convolve and assemble on the context's device (current already). */
spart_status spart_regridder_build_convolved_on_device(
    spart_context *context, const spart_convolve_setup *setup, const spart_array *kernel,
    spart_weights *shell, const spart_regridder_options *options, spart_regridder **regridder)
{
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    spart_device_entries convolved;
    memset(&convolved, 0, sizeof convolved);
    spart_report_progress(context, "convolve", 0, 1);
    spart_status status = convolve_on_device(context, setup, kernel, shell, &convolved, stream);
    if (status == SPART_OK) {
        spart_report_progress(context, "convolve", 1, 1);
        status = spart_regridder_create_from_device_entries(
            context, shell, options, context->cuda_device, &convolved, regridder);
    }
    release_entries(&convolved, stream);
    return status;
}
