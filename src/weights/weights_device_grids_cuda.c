/*
 * src/weights/weights_device_grids_cuda.c: the CUDA table's build of
 * weights from grids already in device memory
 * (spart_weights_build_device_grids in spart/weights.h; the shapes were
 * checked by src/weights/weights_build_device.c as the host build checks
 * them). Built with CUDA only.
 *
 * What the host build checks in the coordinates' values is checked here on
 * the device, with the host's statuses and sentences: every array is
 * memory of the context's device (or managed), and the first non-finite
 * coordinate (input grids always, output grids for conservative weights,
 * in the host's order) is found by kernels/weights_check.cu and named as
 * spart_weights_check_finite names it.
 *
 * Then one of two paths, the same entries either way:
 * - conservative 2-D weights by clipping whose every element's grids (and
 *   weights_input) lie in place in the caller's arrays (dense along the
 *   resampled axes, as C-order NumPy/CuPy arrays and their broadcasts
 *   are): the clip kernels read the caller's arrays where they lie, the
 *   lattice decision made on the device with the host's tests
 *   (spart_wdev_outputs_are_lattices_on_device). Nothing crosses the bus
 *   but the counts' totals and the answers of the checks.
 * - anything else (multilinear and 1-D weights, whose builders decide
 *   from the grids on the host; the sweep; grids that must be gathered):
 *   the arrays are copied to host memory and built as
 *   spart_weights_build_device builds host grids.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/shape.h"
#include "device/device_select.h"
#include "weights/weights_build.h"
#include "weights/weights_check_device.h"
#include "weights/weights_device_build.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"

static const char *const what = "weights_build_device_grids";

/* The arrays the build reads: the coordinates of both sides, then
 * options->weights_input (when given). */
typedef struct grid_arrays {
    int count;
    const spart_array *array[2 * 3 + 1];
    char name[2 * 3 + 1][40];
} grid_arrays;

static void list_arrays(int num_coordinates, const spart_array *coordinates_input,
                        const spart_array *coordinates_output, const spart_weights_options *options,
                        grid_arrays *arrays)
{
    memset(arrays, 0, sizeof *arrays);
    for (int side = 0; side < 2; side++) {
        for (int c = 0; c < num_coordinates; c++) {
            int k = arrays->count++;
            arrays->array[k] = side == 0 ? &coordinates_input[c] : &coordinates_output[c];
            snprintf(arrays->name[k], sizeof arrays->name[k], "coordinates_%s[%d].data",
                     side == 0 ? "input" : "output", c);
        }
    }
    if (options->weights_input != NULL) {
        int k = arrays->count++;
        arrays->array[k] = options->weights_input;
        snprintf(arrays->name[k], sizeof arrays->name[k], "options->weights_input->data");
    }
}

/* Every array with values is memory of the context's device. */
static spart_status check_pointers(spart_context *context, const grid_arrays *arrays)
{
    for (int k = 0; k < arrays->count; k++) {
        if (spart_shape_size(&arrays->array[k]->shape) == 0) {
            continue;
        }
        spart_status status = spart_device_check_pointer(
            context, arrays->array[k]->data, context->cuda_device, what, arrays->name[k]);
        if (status != SPART_OK) {
            return status;
        }
    }
    return SPART_OK;
}

/* The coordinates' finiteness, on the device: the first non-finite value
 * of each checked array (input grids; output grids for conservative
 * weights), read back at once, the first failure in the host's order named
 * in the host's sentence (spart_weights_check_finite,
 * src/weights/weights_layout.c). */
static spart_status check_finite(spart_context *context, int num_coordinates,
                                 const spart_array *coordinates_input,
                                 const spart_array *coordinates_output, int conservative)
{
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    const int sides = conservative ? 2 : 1;
    const int count = sides * num_coordinates;
    size_t offsets[2 * 3 + 1];
    size_t total = 0;
    for (int k = 0; k < count; k++) {
        const spart_array *a =
            k < num_coordinates ? &coordinates_input[k] : &coordinates_output[k - num_coordinates];
        offsets[k] = total;
        total +=
            (spart_cuda_first_non_finite_workspace(spart_shape_size(&a->shape)) + 255) / 256 * 256;
    }
    void *workspace = NULL;
    cudaError_t error = cudaMallocAsync(&workspace, total, stream);
    int64_t answers[2 * 3][2];
    memset(answers, 0, sizeof answers);
    for (int k = 0; k < count && error == cudaSuccess; k++) {
        const spart_array *a =
            k < num_coordinates ? &coordinates_input[k] : &coordinates_output[k - num_coordinates];
        int64_t size = spart_shape_size(&a->shape);
        char *at = (char *)workspace + offsets[k];
        error = (cudaError_t)spart_cuda_first_non_finite(
            a->data, size, at, spart_cuda_first_non_finite_workspace(size), stream);
        if (error == cudaSuccess) {
            error = cudaMemcpyAsync(answers[k], at, 2 * sizeof(int64_t), cudaMemcpyDeviceToHost,
                                    stream);
        }
    }
    if (workspace != NULL) {
        cudaError_t freed = cudaFreeAsync(workspace, stream);
        error = error == cudaSuccess ? freed : error;
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error,
                                    "weights_build_device_grids: the coordinates' check");
    }
    for (int k = 0; k < count; k++) {
        const spart_array *a =
            k < num_coordinates ? &coordinates_input[k] : &coordinates_output[k - num_coordinates];
        if (answers[k][0] < spart_shape_size(&a->shape)) {
            double value;
            memcpy(&value, &answers[k][1], sizeof value);
            /* the host build's sentence (spart_weights_check_finite) */
            return spart_fail(context, SPART_ERROR_NOT_FINITE,
                              "coordinates_%s[%d] has the non-finite value %g at flat index %lld",
                              k < num_coordinates ? "input" : "output",
                              k < num_coordinates ? k : k - num_coordinates, value,
                              (long long)answers[k][0]);
        }
    }
    return SPART_OK;
}

/* Whether the device clips this problem from the caller's arrays in place:
 * conservative 2-D by clipping, every element's blocks (grids and
 * weights_input) dense in the caller's arrays. */
static spart_status clips_in_place(spart_context *context, int num_coordinates,
                                   const spart_array *coordinates_input,
                                   const spart_array *coordinates_output,
                                   const spart_weights_options *options, int *in_place)
{
    *in_place = options->method == SPART_METHOD_CONSERVATIVE && num_coordinates == 2 &&
                options->algorithm != SPART_ALGORITHM_SWEEP &&
                options->perturb != SPART_PERTURB_YES;
    if (!*in_place) {
        return SPART_OK;
    }
    spart_weights_layout l;
    memset(&l, 0, sizeof l);
    spart_status status = spart_weights_layout_make(
        context, num_coordinates, coordinates_input, coordinates_output, options->num_axis_input,
        options->axis_input, options->num_axis_output, options->axis_output, 1, &l);
    spart_shape full_values;
    int64_t strides_values[SPART_MAX_NDIM];
    if (status == SPART_OK) {
        status = spart_weights_input_strides(context, &l, options->weights_input, 1, &full_values,
                                             strides_values);
    }
    for (int64_t e = 0; status == SPART_OK && *in_place && e < l.num_elements; e++) {
        int64_t index[SPART_MAX_NDIM] = {0};
        spart_unravel(e, &l.shape_orthogonal, index);
        for (int c = 0; c < num_coordinates; c++) {
            *in_place =
                *in_place &&
                spart_block_in_place(coordinates_input[c].data, l.strides_input[c], &l.full_input,
                                     l.resampled_input, l.num_axes_input, index) != NULL &&
                spart_block_in_place(coordinates_output[c].data, l.strides_output[c],
                                     &l.full_output, l.resampled_output, l.num_axes_output,
                                     index) != NULL;
        }
        if (options->weights_input != NULL) {
            *in_place = *in_place && spart_block_in_place(
                                         options->weights_input->data, strides_values, &full_values,
                                         l.resampled_input, l.num_axes_input, index) != NULL;
        }
    }
    return status;
}

/* Copies of the arrays in host memory, and the build of
 * spart_weights_build_device from them. */
static spart_status build_from_host_copies(spart_context *context, int num_coordinates,
                                           const spart_array *coordinates_input,
                                           const spart_array *coordinates_output,
                                           const spart_weights_options *options,
                                           spart_weights **weights)
{
    spart_array input[3], output[3], values;
    spart_weights_options copied = *options;
    double *host[2 * 3 + 1] = {NULL};
    grid_arrays arrays;
    list_arrays(num_coordinates, coordinates_input, coordinates_output, options, &arrays);
    spart_status status = SPART_OK;
    cudaError_t error = cudaSuccess;
    for (int k = 0; k < arrays.count && status == SPART_OK && error == cudaSuccess; k++) {
        int64_t size = spart_shape_size(&arrays.array[k]->shape);
        host[k] = spart_alloc(&context->allocator, (size_t)(size > 0 ? size : 1), sizeof(double));
        if (host[k] == NULL) {
            status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
        } else if (size > 0) {
            error = cudaMemcpy(host[k], arrays.array[k]->data, (size_t)size * sizeof(double),
                               cudaMemcpyDeviceToHost);
        }
        spart_array *to = k < num_coordinates       ? &input[k]
                          : k < 2 * num_coordinates ? &output[k - num_coordinates]
                                                    : &values;
        to->shape = arrays.array[k]->shape;
        to->data = host[k];
    }
    if (status == SPART_OK && error != cudaSuccess) {
        status = spart_device_failure(context, (int)error,
                                      "weights_build_device_grids: the grids' copy to the host");
    }
    if (status == SPART_OK) {
        copied.weights_input = options->weights_input != NULL ? &values : NULL;
        status = spart_wdev_build(context, num_coordinates, input, output, &copied, 0, weights);
    }
    for (int k = 0; k < arrays.count; k++) {
        spart_free(&context->allocator, host[k]);
    }
    return status;
}

spart_status spart_weights_build_grids_on_device(spart_context *context, int num_coordinates,
                                                 const spart_array *coordinates_input,
                                                 const spart_array *coordinates_output,
                                                 const spart_weights_options *options,
                                                 spart_weights **weights)
{
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    grid_arrays arrays;
    list_arrays(num_coordinates, coordinates_input, coordinates_output, options, &arrays);
    status = check_pointers(context, &arrays);
    if (status == SPART_OK) {
        status = check_finite(context, num_coordinates, coordinates_input, coordinates_output,
                              options->method == SPART_METHOD_CONSERVATIVE);
    }
    int in_place = 0;
    if (status == SPART_OK) {
        status = clips_in_place(context, num_coordinates, coordinates_input, coordinates_output,
                                options, &in_place);
    }
    if (status == SPART_OK) {
        status = in_place ? spart_wdev_build(context, num_coordinates, coordinates_input,
                                             coordinates_output, options, 1, weights)
                          : build_from_host_copies(context, num_coordinates, coordinates_input,
                                                   coordinates_output, options, weights);
    }
    spart_device_leave(previous);
    return status;
}

spart_status spart_wdev_outputs_are_lattices_on_device(device_build *b, int *lattice)
{
    const spart_weights_layout *l = &b->layout;
    const int64_t count = spart_weights_layout_output_shared(l) ? 1 : l->num_elements;
    const int64_t num_x = l->grid_shape_output[0], num_y = l->grid_shape_output[1];
    *lattice = 0;
    if (num_x < 2 || num_y < 2) {
        return SPART_OK; /* spart_host_grid_is_lattice: no steps, no lattice */
    }
    int32_t *flag = NULL;
    int32_t not_lattice = 1;
    cudaError_t error = cudaMallocAsync((void **)&flag, sizeof(int32_t), b->stream);
    if (error == cudaSuccess) {
        error = cudaMemsetAsync(flag, 0, sizeof(int32_t), b->stream);
    }
    for (int64_t e = 0; e < count && error == cudaSuccess; e++) {
        const double *host_input[3], *host_output[3];
        error = spart_wdev_upload_element(b, e, 0, host_input, host_output);
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_cuda_grid_not_lattice(b->output[0], b->output[1], num_x,
                                                             num_y, flag, b->stream);
        }
    }
    if (error == cudaSuccess) {
        error =
            cudaMemcpyAsync(&not_lattice, flag, sizeof(int32_t), cudaMemcpyDeviceToHost, b->stream);
    }
    if (flag != NULL) {
        cudaError_t freed = cudaFreeAsync(flag, b->stream);
        error = error == cudaSuccess ? freed : error;
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(b->stream);
    }
    if (error != cudaSuccess) {
        return spart_device_failure(b->context, (int)error,
                                    "weights_build_device_grids: the lattice test");
    }
    *lattice = !not_lattice;
    return SPART_OK;
}
