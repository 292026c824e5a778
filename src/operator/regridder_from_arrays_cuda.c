/*
 * src/operator/regridder_from_arrays_cuda.c: the device half of
 * spart_regridder_create_device_from_arrays (src/operator/regridder_from_arrays.c): the entry
 * pointers checked to be memory of the context's device, the indices checked there
 * (kernels/weights_check.cu), then the device assembly reads the caller's
 * arrays in place. Built with CUDA only.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "weights/weights_check_device.h"
#include "device/device_select.h"
#include "operator/regridder_from_arrays.h"
#include "operator/regridder_device.h"
#include "spart/device.h"
#include "weights/weights_arrays.h"
#include "weights/weights_internal.h"

static const char *const what = "create_device_from_arrays";

/* Each entry array is memory of the context's device (current already). */
static spart_status check_pointers(spart_context *context, const void *const *entries)
{
    static const char *const names[3] = {"indices_input", "indices_output", "values"};
    spart_status status = SPART_OK;
    for (int a = 0; a < 3 && status == SPART_OK; a++) {
        status =
            spart_device_check_pointer(context, entries[a], context->cuda_device, what, names[a]);
    }
    return status;
}

/* Every index against its side's cells, on the device; the first entry out
 * of range refused as spart_weights_create_from_arrays refuses it. */
static spart_status check_indices(spart_context *context, const spart_weights *shell,
                                  const int64_t *indices_input, const int64_t *indices_output)
{
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    int64_t total = shell->offsets[shell->num_elements];
    size_t bytes = spart_cuda_first_bad_entry_workspace(total);
    void *workspace = NULL;
    int64_t answer[3] = {0, 0, 0};
    cudaError_t error = cudaMallocAsync(&workspace, bytes, stream);
    if (error != cudaSuccess) {
        workspace = NULL;
    } else {
        error = (cudaError_t)spart_cuda_first_bad_entry(indices_input, indices_output, total,
                                                        shell->size_input, shell->size_output,
                                                        workspace, bytes, stream);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(answer, workspace, sizeof answer, cudaMemcpyDeviceToHost, stream);
    }
    if (workspace != NULL) {
        (void)cudaFreeAsync(workspace, stream);
    }
    cudaError_t finished = cudaStreamSynchronize(stream);
    if (error == cudaSuccess) {
        error = finished;
    }
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error,
                                    "create_device_from_arrays: the index check");
    }
    if (answer[0] < total) {
        return spart_weights_fail_bad_entry(context, shell->offsets, shell->num_elements, answer[0],
                                            answer[1], answer[2], shell->size_input,
                                            shell->size_output);
    }
    return SPART_OK;
}

/* Check the entries where they lie and assemble them (the context's device
 * current). */
spart_status spart_regridder_build_from_arrays_on_device(spart_context *context,
                                                         const spart_weights *shell,
                                                         const void *const *entries,
                                                         const spart_regridder_options *options,
                                                         spart_regridder **regridder)
{
    if (shell->offsets[shell->num_elements] == 0) {
        /* Nothing to read: the assembly of no entries, from the shell. */
        return spart_regridder_create_on(context, shell, options, context->cuda_device, regridder);
    }
    spart_status status = check_pointers(context, entries);
    if (status == SPART_OK) {
        status = check_indices(context, shell, entries[0], entries[1]);
    }
    if (status != SPART_OK) {
        return status;
    }
    /* Borrowed: the assembly reads these and neither writes nor frees
     * them, so the const is only set aside for the struct's sake. */
    spart_device_entries borrowed;
    memset(&borrowed, 0, sizeof borrowed);
    borrowed.indices_input = (int64_t *)entries[0];
    borrowed.indices_output = (int64_t *)entries[1];
    borrowed.values = (double *)entries[2];
    borrowed.borrowed = 1;
    return spart_regridder_create_from_device_entries(context, shell, options, context->cuda_device,
                                                      &borrowed, regridder);
}
