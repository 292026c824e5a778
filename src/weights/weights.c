/* src/weights/weights.c: the weights object: making, reading and freeing it. */
#include <string.h>

#include "core/shape.h"
#include "weights/weights_arrays.h"
#include "weights/weights_internal.h"

void spart_weights_options_init(spart_weights_options *options)
{
    if (options == NULL) {
        return;
    }
    memset(options, 0, sizeof *options);
    options->method = SPART_METHOD_MULTILINEAR;
    options->bounds = SPART_BOUNDS_EXTRAPOLATE;
    options->perturb = SPART_PERTURB_DEFAULT;
    options->seed = 42;
    options->algorithm = SPART_ALGORITHM_AUTO;
    options->coalesce = 1;
    options->weights_input = NULL;
}

static int64_t resampled_size(const spart_shape *shape, int num_axes, const int *axes)
{
    int64_t size = 1;
    for (int k = 0; k < num_axes; k++) {
        size *= shape->dims[axes[k]];
    }
    return size;
}

spart_weights *spart_weights_allocate(const spart_allocator *allocator,
                                      const spart_shape *shape_orthogonal,
                                      const spart_shape *shape_input,
                                      const spart_shape *shape_output, int num_axis_input,
                                      const int *axis_input, int num_axis_output,
                                      const int *axis_output, int64_t num_entries)
{
    spart_weights *weights = spart_alloc_zero(allocator, 1, sizeof *weights);
    if (weights == NULL) {
        return NULL;
    }
    weights->allocator = *allocator;
    weights->shape_orthogonal = *shape_orthogonal;
    weights->shape_input = *shape_input;
    weights->shape_output = *shape_output;
    weights->num_axis_input = num_axis_input;
    weights->num_axis_output = num_axis_output;
    for (int k = 0; k < num_axis_input; k++) {
        weights->axis_input[k] = axis_input[k];
    }
    for (int k = 0; k < num_axis_output; k++) {
        weights->axis_output[k] = axis_output[k];
    }
    weights->size_input = resampled_size(shape_input, num_axis_input, axis_input);
    weights->size_output = resampled_size(shape_output, num_axis_output, axis_output);
    weights->num_elements = spart_shape_size(shape_orthogonal);
    size_t n = (size_t)num_entries;
    weights->offsets = spart_alloc(allocator, (size_t)weights->num_elements + 1, sizeof(int64_t));
    weights->indices_input = spart_alloc(allocator, n, sizeof(int64_t));
    weights->indices_output = spart_alloc(allocator, n, sizeof(int64_t));
    weights->values = spart_alloc(allocator, n, sizeof(double));
    if (weights->offsets == NULL || weights->indices_input == NULL ||
        weights->indices_output == NULL || weights->values == NULL) {
        spart_weights_free(weights);
        return NULL;
    }
    weights->offsets[0] = 0;
    return weights;
}

void spart_weights_free(spart_weights *weights)
{
    if (weights == NULL) {
        return;
    }
    const spart_allocator allocator = weights->allocator;
    if (weights->on_device && weights->release_device != NULL) {
        weights->release_device(weights); /* the entry arrays, in device memory */
    } else {
        spart_free(&allocator, weights->indices_input);
        spart_free(&allocator, weights->indices_output);
        spart_free(&allocator, weights->values);
    }
    spart_free(&allocator, weights->offsets);
    spart_free(&allocator, weights);
}

spart_status spart_weights_require_host(spart_context *context, const spart_weights *weights,
                                        const char *what)
{
    if (weights == NULL || !weights->on_device) {
        return SPART_OK;
    }
    return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                      "%s: the weights live in the memory of CUDA device %d (made by "
                      "spart_weights_build_device); this function reads them on the host: copy "
                      "them with spart_weights_to_host first",
                      what, weights->cuda_device);
}

int spart_weights_cuda_device(const spart_weights *weights)
{
    return weights != NULL && weights->on_device ? weights->cuda_device : -1;
}

spart_status spart_weights_adopt_entries(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, spart_triples *entries, spart_weights **weights)
{
    spart_weights *made =
        spart_weights_allocate(&context->allocator, shape_orthogonal, shape_input, shape_output,
                               num_axis_input, axis_input, num_axis_output, axis_output, 0);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights: out of memory");
    }
    /* Give back the list's spare room (shrinking in place, as a rule). */
    if (entries->count < entries->capacity && spart_triples_reserve_exactly(entries) != 0) {
        spart_weights_free(made);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights: out of memory");
    }
    if (entries->indices_input != NULL) {
        spart_free(&context->allocator, made->indices_input);
        spart_free(&context->allocator, made->indices_output);
        spart_free(&context->allocator, made->values);
        made->indices_input = entries->indices_input;
        made->indices_output = entries->indices_output;
        made->values = entries->values;
    }
    memcpy(made->offsets, offsets, (size_t)(made->num_elements + 1) * sizeof(int64_t));
    spart_triples_init(entries, entries->allocator);
    *weights = made;
    return SPART_OK;
}

/* Check one side's shape and axes for create_from_arrays. */
static spart_status check_side(spart_context *context, const char *name, const spart_shape *shape,
                               int num_axes, const int *axes, int *normalized, int *count)
{
    char text[128];
    if (!spart_shape_is_valid(shape)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: ndim = %d or an extent is out of range", name, shape->ndim);
    }
    /* 0 numbers means every axis; a negative count, or numbers promised
     * without an array, are mistakes, not "every axis". */
    if (num_axes < 0 || num_axes > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "axis for %s: %d axes, expected 0 (every axis) to %d", name, num_axes,
                          SPART_MAX_NDIM);
    }
    if (num_axes > 0 && axes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "axis for %s: %d axes promised but the array is NULL", name, num_axes);
    }
    int bad = 0;
    int negative[SPART_MAX_NDIM] = {0};
    int status = spart_axes_normalize(num_axes, axes, shape->ndim, 0, negative, count, &bad);
    if (status == -1) {
        return spart_fail(context, SPART_ERROR_AXIS_OUT_OF_RANGE,
                          "axis for %s: axis %d is outside an array of shape %s", name, axes[bad],
                          spart_shape_format(shape, text, sizeof text));
    }
    if (status == -2) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "axis for %s: axis %d is repeated",
                          name, axes[bad]);
    }
    for (int k = 0; k < *count; k++) {
        normalized[k] = negative[k] + shape->ndim;
    }
    return SPART_OK;
}

spart_status spart_weights_check_layout(spart_context *context, const spart_shape *shape_orthogonal,
                                        const spart_shape *shape_input,
                                        const spart_shape *shape_output, int num_axis_input,
                                        const int *axis_input, int num_axis_output,
                                        const int *axis_output, const int64_t *offsets,
                                        spart_weights_layout *layout)
{
    memset(layout, 0, sizeof *layout);
    if (shape_orthogonal == NULL || shape_input == NULL || shape_output == NULL ||
        offsets == NULL) {
        return spart_fail(
            context, SPART_ERROR_NULL_POINTER,
            "shape_orthogonal, shape_input, shape_output and offsets must not be NULL");
    }
    if (!spart_shape_is_valid(shape_orthogonal)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "shape_orthogonal: ndim = %d or an extent is out of range",
                          shape_orthogonal->ndim);
    }
    spart_status status = check_side(context, "shape_input", shape_input, num_axis_input,
                                     axis_input, layout->axis_input, &layout->num_axis_input);
    if (status != SPART_OK) {
        return status;
    }
    status = check_side(context, "shape_output", shape_output, num_axis_output, axis_output,
                        layout->axis_output, &layout->num_axis_output);
    if (status != SPART_OK) {
        return status;
    }
    /* The orthogonal axes of each side must broadcast with shape_orthogonal
     * (weights of one element may be shared along a side's axis). */
    const spart_shape *sides[2] = {shape_input, shape_output};
    const int *side_axes[2] = {layout->axis_input, layout->axis_output};
    int side_counts[2] = {layout->num_axis_input, layout->num_axis_output};
    for (int side = 0; side < 2; side++) {
        int negative[SPART_MAX_NDIM];
        for (int k = 0; k < side_counts[side]; k++) {
            negative[k] = side_axes[side][k] - sides[side]->ndim;
        }
        spart_shape orthogonal = spart_shape_without_axes(sides[side], negative, side_counts[side]);
        spart_shape joined;
        if (spart_shape_broadcast(&orthogonal, shape_orthogonal, &joined) != 0) {
            char text_a[128];
            char text_b[128];
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "the orthogonal axes of %s, %s, do not broadcast with "
                              "shape_orthogonal %s",
                              side == 0 ? "shape_input" : "shape_output",
                              spart_shape_format(&orthogonal, text_a, sizeof text_a),
                              spart_shape_format(shape_orthogonal, text_b, sizeof text_b));
        }
    }
    int64_t num_elements = spart_shape_size(shape_orthogonal);
    if (offsets[0] != 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "offsets[0] = %lld, expected 0",
                          (long long)offsets[0]);
    }
    for (int64_t e = 0; e < num_elements; e++) {
        if (offsets[e + 1] < offsets[e]) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "offsets[%lld] = %lld is less than offsets[%lld] = %lld",
                              (long long)(e + 1), (long long)offsets[e + 1], (long long)e,
                              (long long)offsets[e]);
        }
    }
    layout->num_elements = num_elements;
    layout->num_entries = offsets[num_elements];
    layout->size_input = resampled_size(shape_input, layout->num_axis_input, layout->axis_input);
    layout->size_output =
        resampled_size(shape_output, layout->num_axis_output, layout->axis_output);
    return SPART_OK;
}

spart_status spart_weights_fail_bad_entry(spart_context *context, const int64_t *offsets,
                                          int64_t num_elements, int64_t entry, int64_t index_input,
                                          int64_t index_output, int64_t size_input,
                                          int64_t size_output)
{
    /* The element holding the entry: the last one that starts at or before
     * it (empty elements start where the next one does, so they are passed
     * over). */
    int64_t low = 0, high = num_elements - 1;
    while (low < high) {
        int64_t middle = low + (high - low + 1) / 2;
        if (offsets[middle] <= entry) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                      "weights element %lld: entry %lld has indices_input = %lld and "
                      "indices_output = %lld, outside [0, %lld) and [0, %lld)",
                      (long long)low, (long long)(entry - offsets[low]), (long long)index_input,
                      (long long)index_output, (long long)size_input, (long long)size_output);
}

spart_status spart_weights_create_from_arrays(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, const int64_t *indices_input,
    const int64_t *indices_output, const double *values, spart_weights **weights)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights: the output pointer is NULL");
    }
    *weights = NULL;
    spart_weights_layout layout;
    spart_status status = spart_weights_check_layout(
        context, shape_orthogonal, shape_input, shape_output, num_axis_input, axis_input,
        num_axis_output, axis_output, offsets, &layout);
    if (status != SPART_OK) {
        return status;
    }
    int64_t num_elements = layout.num_elements, total = layout.num_entries;
    if (total > 0 && (indices_input == NULL || indices_output == NULL || values == NULL)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "indices_input, indices_output and values must not be NULL");
    }
    for (int64_t k = 0; k < total; k++) {
        if (indices_input[k] < 0 || indices_input[k] >= layout.size_input ||
            indices_output[k] < 0 || indices_output[k] >= layout.size_output) {
            return spart_weights_fail_bad_entry(context, offsets, num_elements, k, indices_input[k],
                                                indices_output[k], layout.size_input,
                                                layout.size_output);
        }
    }
    spart_weights *made = spart_weights_allocate(
        &context->allocator, shape_orthogonal, shape_input, shape_output, layout.num_axis_input,
        layout.axis_input, layout.num_axis_output, layout.axis_output, total);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights: could not allocate %lld entries", (long long)total);
    }
    size_t n = (size_t)total;
    memcpy(made->offsets, offsets, ((size_t)num_elements + 1) * sizeof(int64_t));
    if (n > 0) {
        memcpy(made->indices_input, indices_input, n * sizeof(int64_t));
        memcpy(made->indices_output, indices_output, n * sizeof(int64_t));
        memcpy(made->values, values, n * sizeof(double));
    }
    *weights = made;
    return SPART_OK;
}

static spart_shape empty_shape(void)
{
    spart_shape shape;
    memset(&shape, 0, sizeof shape);
    return shape;
}

spart_shape spart_weights_shape_orthogonal(const spart_weights *weights)
{
    return weights != NULL ? weights->shape_orthogonal : empty_shape();
}

spart_shape spart_weights_shape_input(const spart_weights *weights)
{
    return weights != NULL ? weights->shape_input : empty_shape();
}

spart_shape spart_weights_shape_output(const spart_weights *weights)
{
    return weights != NULL ? weights->shape_output : empty_shape();
}

int64_t spart_weights_num_elements(const spart_weights *weights)
{
    return weights != NULL ? weights->num_elements : 0;
}

int64_t spart_weights_num_entries(const spart_weights *weights)
{
    return weights != NULL ? weights->offsets[weights->num_elements] : 0;
}

void spart_weights_axes(const spart_weights *weights, int *num_axis_input, int *axis_input,
                        int *num_axis_output, int *axis_output)
{
    if (weights == NULL) {
        return;
    }
    if (num_axis_input != NULL) {
        *num_axis_input = weights->num_axis_input;
    }
    if (num_axis_output != NULL) {
        *num_axis_output = weights->num_axis_output;
    }
    for (int k = 0; k < weights->num_axis_input && axis_input != NULL; k++) {
        axis_input[k] = weights->axis_input[k];
    }
    for (int k = 0; k < weights->num_axis_output && axis_output != NULL; k++) {
        axis_output[k] = weights->axis_output[k];
    }
}

spart_status spart_weights_element(const spart_weights *weights, int64_t element, int64_t *count,
                                   const int64_t **indices_input, const int64_t **indices_output,
                                   const double **values)
{
    if (weights == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "weights is NULL");
    }
    if (element < 0 || element >= weights->num_elements) {
        return spart_fail(NULL, SPART_ERROR_INVALID_ARGUMENT, "element = %lld is outside [0, %lld)",
                          (long long)element, (long long)weights->num_elements);
    }
    int64_t start = weights->offsets[element];
    if (count != NULL) {
        *count = weights->offsets[element + 1] - start;
    }
    if (indices_input != NULL) {
        *indices_input = weights->indices_input + start;
    }
    if (indices_output != NULL) {
        *indices_output = weights->indices_output + start;
    }
    if (values != NULL) {
        *values = weights->values + start;
    }
    return SPART_OK;
}

spart_status spart_weights_arrays(const spart_weights *weights, const int64_t **offsets,
                                  const int64_t **indices_input, const int64_t **indices_output,
                                  const double **values)
{
    if (weights == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "weights is NULL");
    }
    if (offsets != NULL) {
        *offsets = weights->offsets;
    }
    if (indices_input != NULL) {
        *indices_input = weights->indices_input;
    }
    if (indices_output != NULL) {
        *indices_output = weights->indices_output;
    }
    if (values != NULL) {
        *values = weights->values;
    }
    return SPART_OK;
}
