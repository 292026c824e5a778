/*
 * src/weights/regrid.c: applying weights as regridding.regrid_from_weights does,
 * and the one-call spart_regrid. Per orthogonal element, out[o] += v * in[i]
 * over the entries in stored order, from zero, without FMA: the same bits
 * as the Python package. Parallel over elements; each element is summed by
 * one thread, so the result does not depend on the thread count.
 */
#include <string.h>

#include "core/shape.h"
#include "weights/weights_build.h"
#include "weights/weights_internal.h"

/* The shapes and axes of one application of weights to values. */
typedef struct regrid_layout {
    spart_shape shape_orthogonal;
    spart_shape full_input;  /* the values broadcast to this */
    spart_shape full_output; /* the result's shape */
    int resampled_input[SPART_MAX_NDIM];
    int num_input;
    int resampled_output[SPART_MAX_NDIM];
    int num_output;
    int64_t size_input;
    int64_t size_output;
} regrid_layout;

/* Normalise axes against the weights' shape (descending, negative). No
 * axes given: the resampled axes the weights were built with. */
static spart_status normalize(spart_context *context, const char *name, int count, const int *axes,
                              int ndim, int num_stored, const int *stored, int *normalized,
                              int *normalized_count)
{
    int stored_negative[SPART_MAX_NDIM] = {0};
    if (count <= 0 || axes == NULL) {
        for (int a = 0; a < num_stored; a++) {
            stored_negative[a] = stored[a] - ndim;
        }
        count = num_stored;
        axes = stored_negative;
    }
    return spart_axes_normalize_checked(context, name, count, axes, ndim, "the weights' shape",
                                        normalized, normalized_count);
}

static spart_status make_layout(spart_context *context, const spart_weights *weights,
                                const spart_shape *shape_values, int num_axis_input,
                                const int *axis_input, int num_axis_output, const int *axis_output,
                                regrid_layout *layout)
{
    char text_a[128], text_b[128], text_c[128];
    memset(layout, 0, sizeof *layout);
    if (!spart_shape_is_valid(shape_values)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "values_input: ndim = %d or an extent is out of range",
                          shape_values->ndim);
    }
    if (num_axis_input < 0 || num_axis_input > SPART_MAX_NDIM || num_axis_output < 0 ||
        num_axis_output > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_axis_input = %d and num_axis_output = %d must be in [0, %d]",
                          num_axis_input, num_axis_output, SPART_MAX_NDIM);
    }
    int axes_in[SPART_MAX_NDIM] = {0}, axes_out[SPART_MAX_NDIM] = {0};
    spart_status status =
        normalize(context, "axis_input", num_axis_input, axis_input, weights->shape_input.ndim,
                  weights->num_axis_input, weights->axis_input, axes_in, &layout->num_input);
    if (status == SPART_OK) {
        status = normalize(context, "axis_output", num_axis_output, axis_output,
                           weights->shape_output.ndim, weights->num_axis_output,
                           weights->axis_output, axes_out, &layout->num_output);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_shape orthogonal_input =
        spart_shape_without_axes(&weights->shape_input, axes_in, layout->num_input);
    spart_shape orthogonal_output =
        spart_shape_without_axes(&weights->shape_output, axes_out, layout->num_output);
    spart_shape orthogonal_values =
        spart_shape_without_axes(shape_values, axes_in, layout->num_input);
    if (shape_values->ndim < layout->num_input) {
        orthogonal_values.ndim = 0;
    }
    spart_shape joined;
    if (spart_shape_broadcast(&orthogonal_input, &orthogonal_output, &joined) != 0 ||
        spart_shape_broadcast(&joined, &orthogonal_values, &layout->shape_orthogonal) != 0) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the orthogonal axes of the weights' input %s, output %s and of the "
                          "values %s do not broadcast together",
                          spart_shape_format(&orthogonal_input, text_a, sizeof text_a),
                          spart_shape_format(&orthogonal_output, text_b, sizeof text_b),
                          spart_shape_format(&orthogonal_values, text_c, sizeof text_c));
    }
    if (!spart_shape_broadcasts_to(&weights->shape_orthogonal, &layout->shape_orthogonal)) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the weights' orthogonal shape %s does not broadcast to %s",
                          spart_shape_format(&weights->shape_orthogonal, text_a, sizeof text_a),
                          spart_shape_format(&layout->shape_orthogonal, text_b, sizeof text_b));
    }
    if (layout->shape_orthogonal.ndim + layout->num_input > SPART_MAX_NDIM ||
        layout->shape_orthogonal.ndim + layout->num_output > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the values would have more than %d axes", SPART_MAX_NDIM);
    }
    layout->full_input = spart_shape_insert_axes(&layout->shape_orthogonal, &weights->shape_input,
                                                 axes_in, layout->num_input);
    layout->full_output = spart_shape_insert_axes(&layout->shape_orthogonal, &weights->shape_output,
                                                  axes_out, layout->num_output);
    if (!spart_shape_broadcasts_to(shape_values, &layout->full_input)) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "values_input has shape %s, which does not broadcast to %s",
                          spart_shape_format(shape_values, text_a, sizeof text_a),
                          spart_shape_format(&layout->full_input, text_b, sizeof text_b));
    }
    layout->size_input = 1;
    for (int a = 0; a < layout->num_input; a++) {
        layout->resampled_input[layout->num_input - 1 - a] = layout->full_input.ndim + axes_in[a];
        layout->size_input *= weights->shape_input.dims[weights->shape_input.ndim + axes_in[a]];
    }
    layout->size_output = 1;
    for (int a = 0; a < layout->num_output; a++) {
        layout->resampled_output[layout->num_output - 1 - a] =
            layout->full_output.ndim + axes_out[a];
        layout->size_output *= weights->shape_output.dims[weights->shape_output.ndim + axes_out[a]];
    }
    /* The weights' indices are known to lie below their own element sizes;
     * other axes would let them run past the values. */
    if (layout->size_input != weights->size_input || layout->size_output != weights->size_output) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "axis_input and axis_output select %lld input and %lld output values "
                          "per element, but the weights address %lld and %lld",
                          (long long)layout->size_input, (long long)layout->size_output,
                          (long long)weights->size_input, (long long)weights->size_output);
    }
    return SPART_OK;
}

spart_status spart_regrid_from_weights_shape(spart_context *context, const spart_weights *weights,
                                             const spart_shape *shape_values_input,
                                             int num_axis_input, const int *axis_input,
                                             int num_axis_output, const int *axis_output,
                                             spart_shape *shape_values_output)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || shape_values_input == NULL || shape_values_output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights, shape_values_input and shape_values_output must not be NULL");
    }
    regrid_layout layout;
    spart_status status = make_layout(context, weights, shape_values_input, num_axis_input,
                                      axis_input, num_axis_output, axis_output, &layout);
    if (status == SPART_OK) {
        *shape_values_output = layout.full_output;
    }
    return status;
}

/* One element: gather its input block, sum the entries in stored order,
 * scatter the result. */
static void apply_element(const spart_weights *weights, const regrid_layout *layout,
                          const double *values, const int64_t *value_strides, int64_t element,
                          double *input_block, double *output_block, double *result)
{
    int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
    spart_unravel(element, &layout->shape_orthogonal, orthogonal_index);
    spart_gather_block(values, value_strides, &layout->full_input, layout->resampled_input,
                       layout->num_input, orthogonal_index, input_block);
    memset(output_block, 0, (size_t)layout->size_output * sizeof(double));
    int64_t source =
        spart_broadcast_index(element, &layout->shape_orthogonal, &weights->shape_orthogonal);
    const int64_t *indices_input = weights->indices_input;
    const int64_t *indices_output = weights->indices_output;
    const double *weight_values = weights->values;
    for (int64_t k = weights->offsets[source]; k < weights->offsets[source + 1]; k++) {
        double product = weight_values[k] * input_block[indices_input[k]];
        output_block[indices_output[k]] = output_block[indices_output[k]] + product;
    }
    spart_scatter_block(output_block, &layout->full_output, layout->resampled_output,
                        layout->num_output, orthogonal_index, result);
}

spart_status spart_regrid_from_weights(spart_context *context, const spart_weights *weights,
                                       const spart_array *values_input, int num_axis_input,
                                       const int *axis_input, int num_axis_output,
                                       const int *axis_output, double *values_output,
                                       int64_t size_output)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || values_input == NULL || values_output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights, values_input and values_output must not be NULL");
    }
    spart_status on_host = spart_weights_require_host(context, weights, "regrid_from_weights");
    if (on_host != SPART_OK) {
        return on_host;
    }
    regrid_layout layout;
    spart_status status = make_layout(context, weights, &values_input->shape, num_axis_input,
                                      axis_input, num_axis_output, axis_output, &layout);
    if (status != SPART_OK) {
        return status;
    }
    if (values_input->data == NULL && spart_shape_size(&values_input->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "values_input->data is NULL");
    }
    int64_t needed = spart_shape_size(&layout.full_output);
    if (size_output != needed) {
        char text[128];
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "size_output = %lld, but the result of shape %s has %lld values",
                          (long long)size_output,
                          spart_shape_format(&layout.full_output, text, sizeof text),
                          (long long)needed);
    }
    int64_t value_strides[SPART_MAX_NDIM];
    spart_broadcast_strides(&values_input->shape, &layout.full_input, value_strides);
    int64_t num_elements = spart_shape_size(&layout.shape_orthogonal);
    size_t block = (size_t)(layout.size_input + layout.size_output);
    int failed = 0;
#pragma omp parallel num_threads(spart_threads(context)) if (num_elements > 1)
    {
        double *scratch = spart_alloc(&context->allocator, block, sizeof(double));
        if (scratch == NULL) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t e = 0; e < num_elements; e++) {
            if (scratch != NULL) {
                apply_element(weights, &layout, values_input->data, value_strides, e, scratch,
                              scratch + layout.size_input, values_output);
            }
        }
        spart_free(&context->allocator, scratch);
    }
    if (failed) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "regrid_from_weights: could not allocate scratch blocks");
    }
    return SPART_OK;
}

spart_status spart_regrid_shape(spart_context *context, int num_coordinates,
                                const spart_array *coordinates_input,
                                const spart_array *coordinates_output,
                                const spart_shape *shape_values_input,
                                const spart_weights_options *options,
                                spart_shape *shape_values_output)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (shape_values_input == NULL || shape_values_output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "shape_values_input and shape_values_output must not be NULL");
    }
    spart_weights_options defaults;
    spart_weights_options_init(&defaults);
    const spart_weights_options *o = options != NULL ? options : &defaults;
    /* The shapes alone: no weights are built. */
    spart_weights shell;
    spart_status status = spart_weights_describe(context, num_coordinates, coordinates_input,
                                                 coordinates_output, o, &shell);
    if (status != SPART_OK) {
        return status;
    }
    regrid_layout layout;
    status = make_layout(context, &shell, shape_values_input, o->num_axis_input, o->axis_input,
                         o->num_axis_output, o->axis_output, &layout);
    if (status == SPART_OK) {
        *shape_values_output = layout.full_output;
    }
    return status;
}

spart_status spart_regrid(spart_context *context, int num_coordinates,
                          const spart_array *coordinates_input,
                          const spart_array *coordinates_output, const spart_array *values_input,
                          const spart_weights_options *options, double *values_output,
                          int64_t size_output)
{
    if (values_input == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "values_input must not be NULL");
    }
    /* As regridding.regrid: the fragments are applied as built (no
     * coalescing) unless the caller's options say otherwise. */
    spart_weights_options defaults;
    spart_weights_options_init(&defaults);
    defaults.coalesce = 0;
    const spart_weights_options *o = options != NULL ? options : &defaults;
    spart_weights *weights = NULL;
    spart_status status = spart_weights_build(context, num_coordinates, coordinates_input,
                                              coordinates_output, o, &weights);
    if (status != SPART_OK) {
        return status;
    }
    status =
        spart_regrid_from_weights(context, weights, values_input, o->num_axis_input, o->axis_input,
                                  o->num_axis_output, o->axis_output, values_output, size_output);
    spart_weights_free(weights);
    return status;
}
