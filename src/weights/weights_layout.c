/*
 * src/weights/weights_layout.c: the layout of a weights problem
 * (src/weights/weights_build.h): each side's coordinate arrays checked
 * and broadcast together, the axes normalised as regridding's
 * _normalize_input_output_coordinates does, the orthogonal shape and the
 * per-array strides; the gathering of one element's resampled coordinates;
 * the checks that coordinates are finite; and the strides of
 * weights_input. Used by the driver of the builders
 * (src/weights/weights_build.c) and the conservative transpose.
 */
#include <math.h>
#include <string.h>

#include "core/shape.h"
#include "weights/weights_build.h"
#include "weights/weights_internal.h"

/* Check one side's coordinate arrays and broadcast them together. */
static spart_status broadcast_coordinates(spart_context *context, const char *side,
                                          int num_coordinates, const spart_array *coordinates,
                                          spart_shape *shape)
{
    char text_a[128], text_b[128];
    memset(shape, 0, sizeof *shape);
    for (int c = 0; c < num_coordinates; c++) {
        const spart_array *array = &coordinates[c];
        if (!spart_shape_is_valid(&array->shape)) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "coordinates_%s[%d]: ndim = %d or an extent is negative or too "
                              "large",
                              side, c, array->shape.ndim);
        }
        if (array->data == NULL && spart_shape_size(&array->shape) > 0) {
            return spart_fail(context, SPART_ERROR_NULL_POINTER, "coordinates_%s[%d].data is NULL",
                              side, c);
        }
        spart_shape joined;
        if (spart_shape_broadcast(shape, &array->shape, &joined) != 0) {
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "coordinates_%s[%d] has shape %s, which does not broadcast "
                              "against %s",
                              side, c, spart_shape_format(&array->shape, text_a, sizeof text_a),
                              spart_shape_format(shape, text_b, sizeof text_b));
        }
        *shape = joined;
    }
    if (shape->ndim == 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "coordinates_%s are scalars: a grid needs at least one axis", side);
    }
    return SPART_OK;
}

spart_status spart_weights_layout_make(spart_context *context, int num_coordinates,
                                       const spart_array *coordinates_input,
                                       const spart_array *coordinates_output, int num_axis_input,
                                       const int *axis_input, int num_axis_output,
                                       const int *axis_output, int match_axes,
                                       spart_weights_layout *layout)
{
    char text_a[128], text_b[128];
    memset(layout, 0, sizeof *layout);
    layout->num_coordinates = num_coordinates;
    spart_status status = broadcast_coordinates(
        context, "input", num_coordinates, coordinates_input, &layout->shape_coordinates_input);
    if (status != SPART_OK) {
        return status;
    }
    status = broadcast_coordinates(context, "output", num_coordinates, coordinates_output,
                                   &layout->shape_coordinates_output);
    if (status != SPART_OK) {
        return status;
    }
    status = spart_axes_normalize_checked(context, "axis_input", num_axis_input, axis_input,
                                          layout->shape_coordinates_input.ndim, "coordinates",
                                          layout->axes_input, &layout->num_axes_input);
    if (status != SPART_OK) {
        return status;
    }
    status = spart_axes_normalize_checked(context, "axis_output", num_axis_output, axis_output,
                                          layout->shape_coordinates_output.ndim, "coordinates",
                                          layout->axes_output, &layout->num_axes_output);
    if (status != SPART_OK) {
        return status;
    }
    if (match_axes && layout->num_axes_output != layout->num_axes_input) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "axis_output has %d axes but axis_input has %d: they must match",
                          layout->num_axes_output, layout->num_axes_input);
    }
    if (layout->num_axes_input != num_coordinates) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_coordinates = %d must equal the number of axes in axis_input, %d",
                          num_coordinates, layout->num_axes_input);
    }
    spart_shape orthogonal_input = spart_shape_without_axes(
        &layout->shape_coordinates_input, layout->axes_input, layout->num_axes_input);
    spart_shape orthogonal_output = spart_shape_without_axes(
        &layout->shape_coordinates_output, layout->axes_output, layout->num_axes_output);
    if (spart_shape_broadcast(&orthogonal_input, &orthogonal_output, &layout->shape_orthogonal) !=
        0) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the orthogonal axes of the input grid, %s, do not broadcast against "
                          "those of the output grid, %s",
                          spart_shape_format(&orthogonal_input, text_a, sizeof text_a),
                          spart_shape_format(&orthogonal_output, text_b, sizeof text_b));
    }
    if (layout->shape_orthogonal.ndim + layout->num_axes_input > SPART_MAX_NDIM ||
        layout->shape_orthogonal.ndim + layout->num_axes_output > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the broadcast grids would have more than %d axes", SPART_MAX_NDIM);
    }
    layout->full_input =
        spart_shape_insert_axes(&layout->shape_orthogonal, &layout->shape_coordinates_input,
                                layout->axes_input, layout->num_axes_input);
    layout->full_output =
        spart_shape_insert_axes(&layout->shape_orthogonal, &layout->shape_coordinates_output,
                                layout->axes_output, layout->num_axes_output);
    /* Resampled axes as non-negative numbers of the full shapes, ascending. */
    for (int a = 0; a < layout->num_axes_input; a++) {
        layout->resampled_input[layout->num_axes_input - 1 - a] =
            layout->full_input.ndim + layout->axes_input[a];
    }
    for (int a = 0; a < layout->num_axes_output; a++) {
        layout->resampled_output[layout->num_axes_output - 1 - a] =
            layout->full_output.ndim + layout->axes_output[a];
    }
    layout->num_elements = spart_shape_size(&layout->shape_orthogonal);
    layout->size_input = 1;
    for (int a = 0; a < layout->num_axes_input; a++) {
        int64_t n = layout->full_input.dims[layout->resampled_input[a]];
        layout->grid_shape_input[a] = n;
        layout->size_input *= n;
    }
    layout->size_output = 1;
    for (int a = 0; a < layout->num_axes_output; a++) {
        int64_t n = layout->full_output.dims[layout->resampled_output[a]];
        layout->grid_shape_output[a] = n;
        layout->size_output *= n;
    }
    for (int c = 0; c < num_coordinates; c++) {
        spart_broadcast_strides(&coordinates_input[c].shape, &layout->full_input,
                                layout->strides_input[c]);
        spart_broadcast_strides(&coordinates_output[c].shape, &layout->full_output,
                                layout->strides_output[c]);
    }
    return SPART_OK;
}

/* Whether every coordinate array has stride 0 along every orthogonal axis:
 * then all elements share one grid. */
static int grid_is_shared(const int64_t (*strides)[SPART_MAX_NDIM], int num_coordinates,
                          const spart_shape *full, const int *resampled, int num_resampled)
{
    for (int c = 0; c < num_coordinates; c++) {
        for (int k = 0; k < full->ndim; k++) {
            if (!spart_axes_contain(resampled, num_resampled, k) && strides[c][k] != 0 &&
                full->dims[k] > 1) {
                return 0;
            }
        }
    }
    return 1;
}

spart_status spart_weights_layout_gather(const spart_weights_layout *layout, int output,
                                         const spart_array *coordinates, int64_t element,
                                         double *const *blocks)
{
    if (layout->num_coordinates < 1 || layout->num_coordinates > 3) {
        return SPART_ERROR_INTERNAL; /* the layout was checked: 1 to 3 */
    }
    int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
    spart_unravel(element, &layout->shape_orthogonal, orthogonal_index);
    for (int c = 0; c < layout->num_coordinates; c++) {
        if (output) {
            /* coordinates holds num_coordinates arrays */
            /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
            spart_gather_block(coordinates[c].data, layout->strides_output[c], &layout->full_output,
                               layout->resampled_output, layout->num_axes_output, orthogonal_index,
                               blocks[c]);
        } else {
            spart_gather_block(coordinates[c].data, layout->strides_input[c], &layout->full_input,
                               layout->resampled_input, layout->num_axes_input, orthogonal_index,
                               blocks[c]);
        }
    }
    return SPART_OK;
}

int spart_weights_layout_input_shared(const spart_weights_layout *layout)
{
    return grid_is_shared(layout->strides_input, layout->num_coordinates, &layout->full_input,
                          layout->resampled_input, layout->num_axes_input);
}

int spart_weights_layout_output_shared(const spart_weights_layout *layout)
{
    return grid_is_shared(layout->strides_output, layout->num_coordinates, &layout->full_output,
                          layout->resampled_output, layout->num_axes_output);
}

/* Whether all of values[0 .. size-1] are finite: x - x is 0 for a finite
 * x and NaN for an infinity or a NaN, and a NaN stays in a sum. Four sums
 * side by side and no exit in the loop, which compilers turn into vector
 * code (a plain search for the first non-finite value takes a comparison
 * and a branch per value). */
static int all_finite(const double *values, int64_t size)
{
    double probe[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t k = 0;
    for (; k + 4 <= size; k += 4) {
        for (int lane = 0; lane < 4; lane++) {
            probe[lane] += values[k + lane] - values[k + lane];
        }
    }
    for (; k < size; k++) {
        probe[0] += values[k] - values[k];
    }
    return (probe[0] + probe[1]) + (probe[2] + probe[3]) == 0.0;
}

/* all_finite over the threads for large arrays (an instrument's mapped
 * planes: 2.5e8 values at ESIS scale), chunk by chunk: the same answer. */
static int all_finite_threads(const double *values, int64_t size)
{
    const int64_t chunk = (int64_t)1 << 16;
    if (size <= 16 * chunk) {
        return all_finite(values, size);
    }
    int64_t chunks = (size + chunk - 1) / chunk;
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t begin = c * chunk;
        int64_t length = size - begin < chunk ? size - begin : chunk;
        bad |= !all_finite(values + begin, length);
    }
    return !bad;
}

/* The first non-finite value of a coordinate array, or -1. */
static int64_t first_non_finite(const spart_array *array)
{
    int64_t size = spart_shape_size(&array->shape);
    if (all_finite_threads(array->data, size)) {
        return -1;
    }
    for (int64_t k = 0; k < size; k++) {
        if (!isfinite(array->data[k])) {
            return k;
        }
    }
    return -1;
}

spart_status spart_weights_check_finite(spart_context *context, const char *side,
                                        int num_coordinates, const spart_array *coordinates)
{
    for (int c = 0; c < num_coordinates; c++) {
        int64_t bad = first_non_finite(&coordinates[c]);
        if (bad >= 0) {
            return spart_fail(context, SPART_ERROR_NOT_FINITE,
                              "coordinates_%s[%d] has the non-finite value %g at flat index %lld",
                              side, c, coordinates[c].data[bad], (long long)bad);
        }
    }
    return SPART_OK;
}

spart_status spart_weights_input_strides(spart_context *context, const spart_weights_layout *layout,
                                         const spart_array *weights_input, int cells,
                                         spart_shape *full_values, int64_t *strides)
{
    char text_a[128], text_b[128];
    *full_values = layout->full_input;
    for (int a = 0; a < layout->num_axes_input; a++) {
        full_values->dims[layout->resampled_input[a]] -= cells ? 1 : 0;
    }
    if (weights_input == NULL) {
        return SPART_OK;
    }
    if (!spart_shape_is_valid(&weights_input->shape)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "weights_input: ndim = %d or an extent is out of range",
                          weights_input->shape.ndim);
    }
    if (weights_input->data == NULL && spart_shape_size(&weights_input->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights_input->data is NULL");
    }
    if (!spart_shape_broadcasts_to(&weights_input->shape, full_values)) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "weights_input has shape %s, which does not broadcast to the input "
                          "values' shape %s",
                          spart_shape_format(&weights_input->shape, text_a, sizeof text_a),
                          spart_shape_format(full_values, text_b, sizeof text_b));
    }
    spart_broadcast_strides(&weights_input->shape, full_values, strides);
    return SPART_OK;
}
