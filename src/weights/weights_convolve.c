/*
 * src/weights/weights_convolve.c: fold a kernel (a point-spread function on the
 * output cells) into weights, as regridding.convolve_weights (3.6.0):
 * the weights W become P W with P[i', i] = K_i(i' - i). This file checks
 * the kernel and works out where each element's and each cell's kernel
 * lives; host/weights_convolve.c does the work.
 */
#include <math.h>
#include <string.h>

#include "core/shape.h"
#include "weights/weights_convolve.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"

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

/* What the kernel's orthogonal axes make of the result: its orthogonal
 * shape and grid shapes (the weights', or broadcast where the kernel varies
 * along an axis the weights are shared along, as the package broadcasts
 * them), and the kernel's extent and stride along each orthogonal output
 * axis. */
typedef struct convolve_plan {
    spart_shape orthogonal;
    spart_shape input;
    spart_shape output;
    int num_kernel_orthogonal;
    int64_t kernel_orthogonal[SPART_MAX_NDIM];
    int64_t kernel_strides[SPART_MAX_NDIM];
} convolve_plan;

/* The axes of `shape` not in `resampled`, ascending; returns their count. */
static int orthogonal_axes(const spart_shape *shape, const int *resampled, int num_resampled,
                           int *axes)
{
    int count = 0;
    for (int ax = 0; ax < shape->ndim; ax++) {
        if (!spart_axes_contain(resampled, num_resampled, ax)) {
            axes[count++] = ax;
        }
    }
    return count;
}

/* Whether the numbers that are not 1 are all the same. */
static int broadcast_together(int64_t a, int64_t b, int64_t c)
{
    int64_t common = 1;
    int64_t values[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        if (values[k] != 1 && common != 1 && values[k] != common) {
            return 0;
        }
        common = values[k] != 1 ? values[k] : common;
    }
    return 1;
}

/* A grid's shape broadcast along its orthogonal axes (right-aligned) to
 * the result's orthogonal shape `joined`. */
static spart_status broadcast_grid(spart_context *context, const char *name,
                                   const spart_shape *shape, const int *resampled,
                                   int num_resampled, const spart_shape *joined,
                                   spart_shape *result)
{
    int axes[SPART_MAX_NDIM];
    int count = orthogonal_axes(shape, resampled, num_resampled, axes);
    char text_a[128], text_b[128];
    if (count < joined->ndim) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the kernel gives the weights the orthogonal shape %s, but the %s grid "
                          "%s has only %d orthogonal axes to broadcast",
                          spart_shape_format(joined, text_a, sizeof text_a), name,
                          spart_shape_format(shape, text_b, sizeof text_b), count);
    }
    *result = *shape;
    for (int j = 0; j < joined->ndim; j++) {
        int ax = axes[count - joined->ndim + j];
        int64_t extent = shape->dims[ax];
        int64_t wanted = joined->dims[j];
        if (extent != wanted && extent != 1 && wanted != 1) {
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "the %s grid %s does not broadcast to the orthogonal shape %s the "
                              "kernel gives the weights",
                              name, spart_shape_format(shape, text_b, sizeof text_b),
                              spart_shape_format(joined, text_a, sizeof text_a));
        }
        result->dims[ax] = extent == 1 ? wanted : extent;
    }
    return SPART_OK;
}

/* The kernel along the orthogonal output axes must broadcast together with
 * the output grid and (right-aligned) the weights' orthogonal shape. The
 * result's orthogonal shape is the weights' broadcast against the kernel's
 * orthogonal extents, leading ones dropped down to the weights' rank (as
 * the package); where that grows, the grids' shapes grow too. */
static spart_status plan_orthogonal(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel, const int64_t *grid,
                                    const int64_t *grid_strides, convolve_plan *plan)
{
    int axes[SPART_MAX_NDIM];
    int count = orthogonal_axes(&weights->shape_output, weights->axis_output,
                                weights->num_axis_output, axes);
    const spart_shape *shape_w = &weights->shape_orthogonal;
    char text_a[128], text_b[128], text_c[128];
    memset(plan, 0, sizeof *plan);
    plan->num_kernel_orthogonal = count;
    for (int j = 0; j < count; j++) {
        int ax = axes[j];
        int in_weights = shape_w->ndim - (count - j);
        int64_t w = in_weights >= 0 ? shape_w->dims[in_weights] : 1;
        if (!broadcast_together(grid[ax], weights->shape_output.dims[ax], w)) {
            return spart_fail(
                context, SPART_ERROR_SHAPE_MISMATCH,
                "the kernel of shape %s does not broadcast along output axis %d against the "
                "output grid %s and the weights' orthogonal shape %s",
                spart_shape_format(&kernel->shape, text_a, sizeof text_a), ax,
                spart_shape_format(&weights->shape_output, text_b, sizeof text_b),
                spart_shape_format(shape_w, text_c, sizeof text_c));
        }
        plan->kernel_orthogonal[j] = grid[ax];
        plan->kernel_strides[j] = grid_strides[ax];
    }
    int first = 0;
    while (count - first > shape_w->ndim && plan->kernel_orthogonal[first] == 1) {
        first++;
    }
    spart_shape stripped;
    memset(&stripped, 0, sizeof stripped);
    stripped.ndim = count - first;
    for (int j = 0; j < stripped.ndim; j++) {
        stripped.dims[j] = plan->kernel_orthogonal[first + j];
    }
    if (spart_shape_broadcast(shape_w, &stripped, &plan->orthogonal) != 0) {
        return spart_fail(context, SPART_ERROR_INTERNAL,
                          "weights_convolve: orthogonal shapes checked but not broadcast");
    }
    plan->input = weights->shape_input;
    plan->output = weights->shape_output;
    if (spart_shape_equal(&plan->orthogonal, shape_w)) {
        return SPART_OK;
    }
    spart_status status =
        broadcast_grid(context, "input", &weights->shape_input, weights->axis_input,
                       weights->num_axis_input, &plan->orthogonal, &plan->input);
    if (status == SPART_OK) {
        status = broadcast_grid(context, "output", &weights->shape_output, weights->axis_output,
                                weights->num_axis_output, &plan->orthogonal, &plan->output);
    }
    return status;
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

/* Check the kernel's shape and fill the plan and the layout (all but the
 * per-element offsets and the dense flags). */
static spart_status make_layout(spart_context *context, const spart_weights *weights,
                                const spart_array *kernel, convolve_plan *plan,
                                spart_convolve_layout *layout)
{
    int64_t grid[SPART_MAX_NDIM] = {0};
    int64_t grid_strides[SPART_MAX_NDIM] = {0};
    spart_status status = kernel_grid(context, weights, kernel, grid, grid_strides);
    if (status == SPART_OK) {
        status = check_resampled(context, weights, kernel, grid);
    }
    if (status == SPART_OK) {
        status = plan_orthogonal(context, weights, kernel, grid, grid_strides, plan);
    }
    if (status != SPART_OK) {
        return status;
    }
    int leading = kernel->shape.ndim - weights->num_axis_output;
    memset(layout, 0, sizeof *layout);
    layout->ndim = weights->num_axis_output;
    for (int a = 0; a < layout->ndim; a++) {
        int ax = weights->axis_output[a];
        layout->shape_output[a] = weights->shape_output.dims[ax];
        layout->shape_kernel[a] = kernel->shape.dims[leading + a];
        layout->row_strides[a] = grid_strides[ax];
    }
    layout->kernel = kernel->data;
    return SPART_OK;
}

/* The offset of each result element's kernel (of output cell 0). */
static void fill_element_base(const convolve_plan *plan, int64_t *element_base)
{
    int64_t num_elements = spart_shape_size(&plan->orthogonal);
    int count = plan->num_kernel_orthogonal;
    int64_t index[SPART_MAX_NDIM];
    for (int64_t e = 0; e < num_elements; e++) {
        spart_unravel(e, &plan->orthogonal, index);
        element_base[e] = 0;
        for (int j = 0; j < count; j++) {
            int d = plan->orthogonal.ndim - (count - j);
            if (d >= 0 && plan->kernel_orthogonal[j] != 1) {
                element_base[e] += index[d] * plan->kernel_strides[j];
            }
        }
    }
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

/* The entries the convolution reads: the weights' own arrays, or, where the
 * kernel broadcasts the weights along an orthogonal axis, copies repeated
 * along it (in `owned`, freed by the caller). Returns nonzero when out of
 * memory. */
static int expand_entries(const spart_allocator *allocator, const spart_weights *weights,
                          const convolve_plan *plan, spart_convolve_entries *entries, void **owned)
{
    *owned = NULL;
    entries->num_elements = weights->num_elements;
    entries->offsets = weights->offsets;
    entries->indices_input = weights->indices_input;
    entries->indices_output = weights->indices_output;
    entries->values = weights->values;
    if (spart_shape_equal(&plan->orthogonal, &weights->shape_orthogonal)) {
        return 0;
    }
    int64_t num_elements = spart_shape_size(&plan->orthogonal);
    int64_t total = 0;
    for (int64_t e = 0; e < num_elements; e++) {
        int64_t source = spart_broadcast_index(e, &plan->orthogonal, &weights->shape_orthogonal);
        total += weights->offsets[source + 1] - weights->offsets[source];
    }
    /* one block: offsets, indices_input, indices_output, values */
    size_t count = (size_t)num_elements + 1 + 3 * (size_t)total;
    int64_t *block = spart_alloc(allocator, count, sizeof(int64_t));
    if (block == NULL) {
        return 1;
    }
    int64_t *offsets = block;
    int64_t *indices_input = offsets + num_elements + 1;
    int64_t *indices_output = indices_input + total;
    double *values = (double *)(indices_output + total);
    offsets[0] = 0;
    for (int64_t e = 0; e < num_elements; e++) {
        int64_t source = spart_broadcast_index(e, &plan->orthogonal, &weights->shape_orthogonal);
        int64_t begin = weights->offsets[source];
        int64_t length = weights->offsets[source + 1] - begin;
        memcpy(indices_input + offsets[e], weights->indices_input + begin,
               (size_t)length * sizeof(int64_t));
        memcpy(indices_output + offsets[e], weights->indices_output + begin,
               (size_t)length * sizeof(int64_t));
        memcpy(values + offsets[e], weights->values + begin, (size_t)length * sizeof(double));
        offsets[e + 1] = offsets[e] + length;
    }
    entries->num_elements = num_elements;
    entries->offsets = offsets;
    entries->indices_input = indices_input;
    entries->indices_output = indices_output;
    entries->values = values;
    *owned = block;
    return 0;
}

/* Turn run sizes into run starts (exclusive prefix sum) and the result's
 * element offsets. Returns the total number of entries. */
static int64_t place_runs(const spart_convolve_entries *entries, int64_t *runs, int64_t *offsets)
{
    int64_t total = entries->offsets[entries->num_elements];
    int64_t sum = 0;
    for (int64_t w = 0; w < total; w++) {
        int64_t size = runs[w];
        runs[w] = sum;
        sum += size;
    }
    for (int64_t e = 0; e <= entries->num_elements; e++) {
        int64_t w = entries->offsets[e];
        offsets[e] = w < total ? runs[w] : sum;
    }
    return sum;
}

/* Both passes, once the layout is known. */
spart_status spart_weights_convolve_host(spart_context *context, const spart_weights *weights,
                                         const spart_convolve_setup *setup,
                                         const spart_array *kernel, spart_weights **convolved)
{
    (void)kernel; /* read through setup->layout */
    const spart_convolve_entries *entries = &setup->entries;
    const spart_convolve_layout *layout = &setup->layout;
    int64_t total = entries->offsets[entries->num_elements];
    int threads = spart_threads(context);
    int64_t *runs = spart_alloc(&context->allocator, (size_t)total + 1, sizeof(int64_t));
    int64_t *offsets =
        spart_alloc(&context->allocator, (size_t)entries->num_elements + 1, sizeof(int64_t));
    if (runs == NULL || offsets == NULL ||
        spart_convolve_count_host(&context->allocator, layout, entries, threads, runs) != 0) {
        spart_free(&context->allocator, runs);
        spart_free(&context->allocator, offsets);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights_convolve: could not allocate scratch space");
    }
    int64_t result_total = place_runs(entries, runs, offsets);
    spart_weights *made =
        spart_weights_allocate(&context->allocator, &setup->orthogonal, &setup->input,
                               &setup->output, weights->num_axis_input, weights->axis_input,
                               weights->num_axis_output, weights->axis_output, result_total);
    int failed = made == NULL;
    if (!failed) {
        for (int64_t e = 0; e <= entries->num_elements; e++) {
            made->offsets[e] = offsets[e];
        }
        failed = spart_convolve_write_host(&context->allocator, layout, entries, threads, runs,
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

spart_status spart_convolve_prepare(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel, spart_convolve_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    convolve_plan plan;
    spart_status status = check_arguments(context, weights, kernel);
    if (status == SPART_OK) {
        status = make_layout(context, weights, kernel, &plan, &setup->layout);
    }
    if (status == SPART_OK && weights->on_device &&
        !spart_shape_equal(&plan.orthogonal, &weights->shape_orthogonal)) {
        char text_a[128], text_b[128];
        status = spart_fail(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "weights_convolve: the weights are on a device and the kernel broadcasts their "
            "orthogonal shape %s to %s, which would copy entries on the host: convolve a host "
            "copy (spart_weights_to_host)",
            spart_shape_format(&weights->shape_orthogonal, text_a, sizeof text_a),
            spart_shape_format(&plan.orthogonal, text_b, sizeof text_b));
    }
    if (status != SPART_OK) {
        return status;
    }
    setup->orthogonal = plan.orthogonal;
    setup->input = plan.input;
    setup->output = plan.output;
    const spart_allocator *allocator = &context->allocator;
    int64_t num_elements = spart_shape_size(&plan.orthogonal);
    setup->element_base = spart_alloc(allocator, (size_t)num_elements + 1, sizeof(int64_t));
    setup->dense = find_dense_kernels(context, kernel, &setup->layout);
    if (setup->element_base == NULL || setup->dense == NULL ||
        expand_entries(allocator, weights, &plan, &setup->entries, &setup->owned_entries) != 0) {
        spart_convolve_release(allocator, setup);
        spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                   "weights_convolve: could not allocate the kernels' offsets and the weights "
                   "broadcast to the orthogonal shape");
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    fill_element_base(&plan, setup->element_base);
    setup->layout.element_base = setup->element_base;
    setup->layout.dense = setup->dense;
    return SPART_OK;
}

void spart_convolve_release(const spart_allocator *allocator, spart_convolve_setup *setup)
{
    spart_free(allocator, setup->owned_entries);
    spart_free(allocator, setup->dense);
    spart_free(allocator, setup->element_base);
    memset(setup, 0, sizeof *setup);
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
    const spart_weights_ops *ops = NULL;
    spart_status status =
        spart_weights_select(context, weights->on_device, "weights_convolve", &ops);
    if (status != SPART_OK) {
        return status;
    }
    spart_convolve_setup setup;
    status = spart_convolve_prepare(context, weights, kernel, &setup);
    if (status == SPART_OK) {
        /* where the entries lie: the host's OpenMP passes, or the
         * device's kernels (src/weights/weights_convolve_cuda.c) */
        status = ops->convolve(context, weights, &setup, kernel, convolved);
        spart_convolve_release(&context->allocator, &setup);
    }
    return status;
}
