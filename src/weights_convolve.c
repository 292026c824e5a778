/*
 * src/weights_convolve.c: fold a kernel (a point-spread function on the
 * output cells) into weights, as regridding.convolve_weights (3.6.0):
 * the weights W become P W with P[i', i] = K_i(i' - i). This file checks
 * the kernel and works out where each element's and each cell's kernel
 * lives; host/weights_convolve.c does the work.
 */
#include <math.h>

#include "shape.h"
#include "weights_convolve.h"
#include "weights_internal.h"

/* The kernel's leading axes, padded with ones on the left to the rank of
 * shape_output, and the strides (in doubles) of the caller's array along
 * them; also checks the rank. */
static spart_status kernel_grid(spart_context *context, const spart_weights *weights,
                                const spart_array *kernel, int64_t *grid, int64_t *grid_strides)
{
    int ndim_output = weights->shape_output.ndim;
    int ndim_kernel = weights->num_axis_output;
    int leading = kernel->shape.ndim - ndim_kernel;
    char text_a[128], text_b[128];
    if (leading < 0) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the kernel has %d axes (shape %s), fewer than the %d resampled output "
                          "axes it acts along",
                          kernel->shape.ndim,
                          spart_shape_format(&kernel->shape, text_a, sizeof text_a), ndim_kernel);
    }
    if (leading > ndim_output) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the leading axes of the kernel (shape %s) are more than the %d axes "
                          "of the output grid %s",
                          spart_shape_format(&kernel->shape, text_a, sizeof text_a), ndim_output,
                          spart_shape_format(&weights->shape_output, text_b, sizeof text_b));
    }
    int64_t stride = 1;
    for (int a = kernel->shape.ndim - 1; a >= leading; a--) {
        stride *= kernel->shape.dims[a];
    }
    for (int ax = ndim_output - 1; ax >= 0; ax--) {
        int from = ax - (ndim_output - leading);
        grid[ax] = from >= 0 ? kernel->shape.dims[from] : 1;
        grid_strides[ax] = grid[ax] == 1 ? 0 : stride;
        stride *= grid[ax];
    }
    return SPART_OK;
}

/* A kernel axis along the output grid must be 1 or the grid's extent. */
static spart_status check_resampled(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel, const int64_t *grid)
{
    for (int a = 0; a < weights->num_axis_output; a++) {
        int ax = weights->axis_output[a];
        if (grid[ax] != 1 && grid[ax] != weights->shape_output.dims[ax]) {
            char text_a[128], text_b[128];
            return spart_fail(
                context, SPART_ERROR_SHAPE_MISMATCH,
                "the kernel of shape %s varies along output axis %d with %lld cells, but the "
                "output grid %s has %lld there",
                spart_shape_format(&kernel->shape, text_a, sizeof text_a), ax, (long long)grid[ax],
                spart_shape_format(&weights->shape_output, text_b, sizeof text_b),
                (long long)weights->shape_output.dims[ax]);
        }
    }
    return SPART_OK;
}

/* The kernel along the orthogonal output axes must broadcast against the
 * output grid and, right-aligned, against the weights' orthogonal shape
 * without growing it. Fills, per orthogonal axis of the weights, the
 * kernel's stride (0: shared). */
static spart_status check_orthogonal(spart_context *context, const spart_weights *weights,
                                     const spart_array *kernel, const int64_t *grid,
                                     const int64_t *grid_strides, int64_t *element_strides)
{
    int orthogonal_axes[SPART_MAX_NDIM];
    int num_orthogonal = 0;
    for (int ax = 0; ax < weights->shape_output.ndim; ax++) {
        if (!spart_axes_contain(weights->axis_output, weights->num_axis_output, ax)) {
            orthogonal_axes[num_orthogonal++] = ax;
        }
    }
    const spart_shape *shape_w = &weights->shape_orthogonal;
    for (int j = 0; j < shape_w->ndim; j++) {
        element_strides[j] = 0;
    }
    char text_a[128], text_b[128], text_c[128];
    for (int j = 0; j < num_orthogonal; j++) {
        int ax = orthogonal_axes[j];
        int64_t k = grid[ax];
        int64_t o = weights->shape_output.dims[ax];
        int in_weights = shape_w->ndim - (num_orthogonal - j);
        int64_t w = in_weights >= 0 ? shape_w->dims[in_weights] : 1;
        int fits = (k == 1 || k == o || o == 1) && (k == 1 || k == w || w == 1);
        if (!fits) {
            return spart_fail(
                context, SPART_ERROR_SHAPE_MISMATCH,
                "the kernel of shape %s does not broadcast along output axis %d against the "
                "output grid %s and the weights' orthogonal shape %s",
                spart_shape_format(&kernel->shape, text_a, sizeof text_a), ax,
                spart_shape_format(&weights->shape_output, text_b, sizeof text_b),
                spart_shape_format(shape_w, text_c, sizeof text_c));
        }
        if (k != 1 && w == 1) {
            return spart_fail(
                context, SPART_ERROR_NOT_IMPLEMENTED,
                "the kernel of shape %s varies along output axis %d, along which the weights "
                "(orthogonal shape %s) are shared: regridding copies the weights out along it, "
                "spart does not yet; build the weights with that axis orthogonal",
                spart_shape_format(&kernel->shape, text_a, sizeof text_a), ax,
                spart_shape_format(shape_w, text_c, sizeof text_c));
        }
        if (in_weights >= 0) {
            element_strides[in_weights] = grid_strides[ax];
        }
    }
    return SPART_OK;
}

static spart_status check_finite(spart_context *context, const spart_array *kernel)
{
    int64_t size = spart_shape_size(&kernel->shape);
    if (kernel->data == NULL) {
        return SPART_OK; /* an empty kernel (checked before) */
    }
    for (int64_t i = 0; i < size; i++) {
        if (!isfinite(kernel->data[i])) {
            return spart_fail(context, SPART_ERROR_NOT_FINITE,
                              "kernel[%lld] = %g: the kernel must be finite", (long long)i,
                              kernel->data[i]);
        }
    }
    return SPART_OK;
}

static spart_status check_arguments(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel)
{
    if (!spart_shape_is_valid(&kernel->shape)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the kernel's shape is not valid (ndim %d)", kernel->shape.ndim);
    }
    if (kernel->data == NULL && spart_shape_size(&kernel->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "kernel->data is NULL");
    }
    if (weights->num_axis_output < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the weights have no resampled output axis to convolve along");
    }
    return check_finite(context, kernel);
}

/* Fill the layout: shapes, strides and each element's kernel offset (into
 * `element_base`, num_elements numbers). */
static spart_status make_layout(spart_context *context, const spart_weights *weights,
                                const spart_array *kernel, int64_t *element_base,
                                spart_convolve_layout *layout)
{
    int64_t grid[SPART_MAX_NDIM];
    int64_t grid_strides[SPART_MAX_NDIM];
    int64_t element_strides[SPART_MAX_NDIM];
    spart_status status = kernel_grid(context, weights, kernel, grid, grid_strides);
    if (status == SPART_OK) {
        status = check_resampled(context, weights, kernel, grid);
    }
    if (status == SPART_OK) {
        status = check_orthogonal(context, weights, kernel, grid, grid_strides, element_strides);
    }
    if (status != SPART_OK) {
        return status;
    }
    int leading = kernel->shape.ndim - weights->num_axis_output;
    layout->ndim = weights->num_axis_output;
    for (int a = 0; a < layout->ndim; a++) {
        int ax = weights->axis_output[a];
        layout->shape_output[a] = weights->shape_output.dims[ax];
        layout->shape_kernel[a] = kernel->shape.dims[leading + a];
        layout->row_strides[a] = grid_strides[ax];
    }
    layout->kernel = kernel->data;
    layout->element_base = element_base;
    layout->size_kernel = 0;
    layout->dense = NULL;
    int64_t index[SPART_MAX_NDIM];
    for (int64_t e = 0; e < weights->num_elements; e++) {
        spart_unravel(e, &weights->shape_orthogonal, index);
        element_base[e] = 0;
        for (int j = 0; j < weights->shape_orthogonal.ndim; j++) {
            element_base[e] += index[j] * element_strides[j];
        }
    }
    return SPART_OK;
}

/* Turn run sizes into run starts (exclusive prefix sum) and the result's
 * element offsets. Returns the total number of entries. */
static int64_t place_runs(const spart_weights *weights, int64_t *runs, int64_t *offsets)
{
    int64_t total = weights->offsets[weights->num_elements];
    int64_t sum = 0;
    for (int64_t w = 0; w < total; w++) {
        int64_t size = runs[w];
        runs[w] = sum;
        sum += size;
    }
    for (int64_t e = 0; e <= weights->num_elements; e++) {
        int64_t w = weights->offsets[e];
        offsets[e] = w < total ? runs[w] : sum;
    }
    return sum;
}

/* Both passes, once the layout is known. */
static spart_status convolve(spart_context *context, const spart_weights *weights,
                             const spart_convolve_layout *layout, spart_weights **convolved)
{
    int64_t total = weights->offsets[weights->num_elements];
    spart_convolve_entries entries = {weights->num_elements, weights->offsets,
                                      weights->indices_input, weights->indices_output,
                                      weights->values};
    int threads = spart_threads(context);
    int64_t *runs = spart_alloc(&context->allocator, (size_t)total + 1, sizeof(int64_t));
    int64_t *offsets =
        spart_alloc(&context->allocator, (size_t)weights->num_elements + 1, sizeof(int64_t));
    if (runs == NULL || offsets == NULL ||
        spart_convolve_count_host(&context->allocator, layout, &entries, threads, runs) != 0) {
        spart_free(&context->allocator, runs);
        spart_free(&context->allocator, offsets);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights_convolve: could not allocate scratch space");
    }
    int64_t result_total = place_runs(weights, runs, offsets);
    spart_weights *made = spart_weights_allocate(
        &context->allocator, &weights->shape_orthogonal, &weights->shape_input,
        &weights->shape_output, weights->num_axis_input, weights->axis_input,
        weights->num_axis_output, weights->axis_output, result_total);
    int failed = made == NULL;
    if (!failed) {
        for (int64_t e = 0; e <= weights->num_elements; e++) {
            made->offsets[e] = offsets[e];
        }
        failed = spart_convolve_write_host(&context->allocator, layout, &entries, threads, runs,
                                           made->indices_input, made->indices_output, made->values);
    }
    spart_free(&context->allocator, runs);
    spart_free(&context->allocator, offsets);
    if (failed) {
        spart_weights_free(made);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights_convolve: could not allocate %lld entries",
                          (long long)result_total);
    }
    *convolved = made;
    return SPART_OK;
}

/* Per kernel (a block of size_kernel elements of the caller's array):
 * whether none of its elements is zero, so that the host kernel may spread
 * whole rows. Sets layout->size_kernel; NULL when out of memory. */
static unsigned char *find_dense_kernels(spart_context *context, const spart_array *kernel,
                                         spart_convolve_layout *layout)
{
    int64_t size_kernel = 1;
    for (int a = 0; a < layout->ndim; a++) {
        size_kernel *= layout->shape_kernel[a];
    }
    layout->size_kernel = size_kernel;
    int64_t count = size_kernel > 0 ? spart_shape_size(&kernel->shape) / size_kernel : 0;
    unsigned char *dense = spart_alloc(&context->allocator, (size_t)count + 1, 1);
    if (dense == NULL) {
        return NULL;
    }
    for (int64_t b = 0; b < count; b++) {
        dense[b] = 1;
        for (int64_t k = 0; k < size_kernel; k++) {
            if (kernel->data[b * size_kernel + k] == 0.0) {
                dense[b] = 0;
                break;
            }
        }
    }
    return dense;
}

spart_status spart_weights_convolve(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel, spart_weights **convolved)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || kernel == NULL || convolved == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights, kernel and convolved must not be NULL");
    }
    *convolved = NULL;
    spart_status status = check_arguments(context, weights, kernel);
    if (status != SPART_OK) {
        return status;
    }
    int64_t *element_base =
        spart_alloc(&context->allocator, (size_t)weights->num_elements + 1, sizeof(int64_t));
    if (element_base == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights_convolve: could not allocate %lld offsets",
                          (long long)weights->num_elements);
    }
    spart_convolve_layout layout;
    status = make_layout(context, weights, kernel, element_base, &layout);
    unsigned char *dense = NULL;
    if (status == SPART_OK) {
        dense = find_dense_kernels(context, kernel, &layout);
        status = dense == NULL ? spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                                            "weights_convolve: could not allocate %lld flags",
                                            (long long)spart_shape_size(&kernel->shape))
                               : SPART_OK;
    }
    if (status == SPART_OK) {
        layout.dense = dense;
        status = convolve(context, weights, &layout, convolved);
    }
    spart_free(&context->allocator, dense);
    spart_free(&context->allocator, element_base);
    return status;
}
