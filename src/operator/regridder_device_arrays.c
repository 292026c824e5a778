/*
 * src/operator/regridder_device_arrays.c: spart_regridder_create_device_from_arrays,
 * a device regridder assembled from weights whose entries the caller
 * already holds in device memory. Shapes, axes and offsets are checked on
 * the host by the checks of spart_weights_create_from_arrays
 * (src/weights/weights_arrays.h), the options by those of spart_regridder_create;
 * the entry pointers are checked to be memory of the context's device; the
 * indices are checked on the device (kernels/weights_check.cu), with three
 * numbers read back; then the device assembly (src/operator/regridder_device.c)
 * reads the caller's arrays in place, borrowed: never written, freed or
 * copied.
 *
 * Built without CUDA, the host checks still run (so that bad arguments get
 * the same error everywhere), then SPART_ERROR_NO_DEVICE.
 */
#include <string.h>

#ifdef SPART_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "weights/weights_check_device.h"
#endif

#include "device/device_select.h"
#include "operator/regridder_device.h"
#include "spart/device.h"
#include "weights/weights_arrays.h"
#include "weights/weights_internal.h"

static const char *const what = "create_device_from_arrays";

/* Weights with the caller's shapes, axes and offsets and no entries of
 * their own: what the assembly reads besides the entries. */
static spart_status make_shell(spart_context *context, const spart_shape *shape_orthogonal,
                               const spart_shape *shape_input, const spart_shape *shape_output,
                               const spart_weights_layout *layout, const int64_t *offsets,
                               spart_weights **shell)
{
    *shell = spart_weights_allocate(&context->allocator, shape_orthogonal, shape_input,
                                    shape_output, layout->num_axis_input, layout->axis_input,
                                    layout->num_axis_output, layout->axis_output, 0);
    if (*shell == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    memcpy((*shell)->offsets, offsets, ((size_t)layout->num_elements + 1) * sizeof(int64_t));
    return SPART_OK;
}

/* Every check that reads no device memory, in the order of
 * spart_weights_create_from_arrays and then spart_regridder_create: the
 * shell of the weights when all pass, else NULL with *status and the
 * sentence saying why. */
static spart_weights *checked_shell(spart_context *context, const spart_shape *shape_orthogonal,
                                    const spart_shape *shape_input, const spart_shape *shape_output,
                                    int num_axis_input, const int *axis_input, int num_axis_output,
                                    const int *axis_output, const int64_t *offsets,
                                    const void *const *entries,
                                    const spart_regridder_options *options, spart_status *status)
{
    spart_weights_layout layout;
    *status = spart_weights_check_layout(context, shape_orthogonal, shape_input, shape_output,
                                         num_axis_input, axis_input, num_axis_output, axis_output,
                                         offsets, &layout);
    if (*status != SPART_OK) {
        return NULL;
    }
    if (layout.num_entries > 0 &&
        (entries[0] == NULL || entries[1] == NULL || entries[2] == NULL)) {
        *status = spart_fail(context, SPART_ERROR_NULL_POINTER,
                             "indices_input, indices_output and values must not be NULL");
        return NULL;
    }
    spart_weights *shell = NULL;
    *status =
        make_shell(context, shape_orthogonal, shape_input, shape_output, &layout, offsets, &shell);
    if (*status == SPART_OK) {
        *status = spart_regridder_check_options(context, shell, options);
    }
    if (*status != SPART_OK) {
        spart_weights_free(shell);
        return NULL;
    }
    return shell;
}

#ifdef SPART_HAVE_CUDA

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
static spart_status build_on_device(spart_context *context, const spart_weights *shell,
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

#endif /* SPART_HAVE_CUDA */

spart_status spart_regridder_create_device_from_arrays(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, const int64_t *indices_input,
    const int64_t *indices_output, const double *values, const spart_regridder_options *options,
    spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder: the output pointer is NULL");
    }
    *regridder = NULL;
    const void *const entries[3] = {indices_input, indices_output, values};
    /* A shell exists only when every host check has passed. */
    spart_status status = SPART_OK;
    spart_weights *shell =
        checked_shell(context, shape_orthogonal, shape_input, shape_output, num_axis_input,
                      axis_input, num_axis_output, axis_output, offsets, entries, options, &status);
    int previous = -1;
    if (shell != NULL) {
        status = spart_device_enter(context, what, &previous);
    }
#ifdef SPART_HAVE_CUDA
    if (shell != NULL && status == SPART_OK) {
        status = build_on_device(context, shell, entries, options, regridder);
    }
#endif
    spart_device_leave(previous);
    spart_weights_free(shell);
    return status;
}
