/*
 * src/weights/weights_transpose.c: the exact transpose (indices swapped) and the
 * conservative transpose of weights, as regridding's transpose_weights and
 * transpose_weights_conservative. The conservative transpose scales each
 * entry v to (v * F_in[input]) / V_out[output] with F_in = V_in / (w * w)
 * (V_in without weights_input), which turns "fraction of the input cell"
 * into "fraction of the output cell". Volumes are magnitudes: regridding
 * uses signed volumes, which makes the transpose of grids of opposite
 * orientation negative (docs/differences.md). The factors are computed on
 * the host; the entries are rewritten where they lie, through the table of
 * their location (src/weights/weights_ops.h, src/weights/weights_values.h).
 */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "weights/geometry_2d.h"
#include "core/shape.h"
#include "weights/weights_build.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"
#include "weights/weights_values.h"

spart_status spart_weights_transpose(spart_context *context, const spart_weights *weights,
                                     spart_weights **transposed)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || transposed == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights and transposed must not be NULL");
    }
    spart_status on_host = spart_weights_require_host(context, weights, "weights_transpose");
    if (on_host != SPART_OK) {
        return on_host;
    }
    *transposed = NULL;
    int64_t total = weights->offsets[weights->num_elements];
    spart_weights *made = spart_weights_allocate(
        &context->allocator, &weights->shape_orthogonal, &weights->shape_output,
        &weights->shape_input, weights->num_axis_output, weights->axis_output,
        weights->num_axis_input, weights->axis_input, total);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "transpose: could not allocate %lld entries", (long long)total);
    }
    size_t n = (size_t)total;
    memcpy(made->offsets, weights->offsets, ((size_t)weights->num_elements + 1) * sizeof(int64_t));
    memcpy(made->indices_input, weights->indices_output, n * sizeof(int64_t));
    memcpy(made->indices_output, weights->indices_input, n * sizeof(int64_t));
    memcpy(made->values, weights->values, n * sizeof(double));
    *transposed = made;
    return SPART_OK;
}

/* Cell lengths of a 1-D grid of n vertices, as magnitudes. */
static void cell_lengths(const double *x, int64_t n, double *volume)
{
    for (int64_t i = 0; i + 1 < n; i++) {
        volume[i] = fabs(x[i + 1] - x[i]);
    }
}

void spart_weights_layout_cell_volumes(const spart_weights_layout *layout, int output,
                                       const spart_array *coordinates, int64_t element,
                                       double *scratch, double *volume)
{
    int64_t size = output ? layout->size_output : layout->size_input;
    const int64_t *shape = output ? layout->grid_shape_output : layout->grid_shape_input;
    double *blocks[3] = {scratch, scratch + size, NULL};
    spart_weights_layout_gather(layout, output, coordinates, element, blocks);
    if (layout->num_coordinates == 1) {
        cell_lengths(blocks[0], shape[0], volume);
        return;
    }
    spart_grid_cell_areas(blocks[0], blocks[1], shape[0], shape[1], volume);
    int64_t cells = (shape[0] - 1) * (shape[1] - 1);
    for (int64_t c = 0; c < cells; c++) {
        volume[c] = fabs(volume[c]);
    }
}

void spart_weights_layout_grid_factors(
    const spart_weights_layout *layout, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_array *weights_input,
    const spart_shape *full_values, const int64_t *weight_strides, int64_t element, double *scratch,
    double *weight_block, double *factor_input, double *volume_output)
{
    spart_weights_layout_cell_volumes(layout, 0, coordinates_input, element, scratch, factor_input);
    spart_weights_layout_cell_volumes(layout, 1, coordinates_output, element, scratch,
                                      volume_output);
    if (weights_input == NULL) {
        return;
    }
    int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
    spart_unravel(element, &layout->shape_orthogonal, orthogonal_index);
    spart_gather_block(weights_input->data, weight_strides, full_values, layout->resampled_input,
                       layout->num_axes_input, orthogonal_index, weight_block);
    int64_t cells = 1;
    for (int a = 0; a < layout->num_axes_input; a++) {
        cells *= layout->grid_shape_input[a] - 1;
    }
    for (int64_t c = 0; c < cells; c++) {
        factor_input[c] = factor_input[c] / (weight_block[c] * weight_block[c]);
    }
}

static spart_status check_cells(spart_context *context, const spart_weights *weights,
                                const spart_weights_layout *layout)
{
    int match = layout->num_axes_input == weights->num_axis_input &&
                layout->num_axes_output == weights->num_axis_output;
    for (int a = 0; match && a < layout->num_axes_input; a++) {
        match =
            layout->grid_shape_input[a] - 1 == weights->shape_input.dims[weights->axis_input[a]];
    }
    for (int a = 0; match && a < layout->num_axes_output; a++) {
        match =
            layout->grid_shape_output[a] - 1 == weights->shape_output.dims[weights->axis_output[a]];
    }
    if (!match) {
        char text_a[128], text_b[128];
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the grids do not have the cells the weights address (input %s, "
                          "output %s): pass the grids and axes the conservative weights were "
                          "built with, input and output swapped if they were transposed since",
                          spart_shape_format(&weights->shape_input, text_a, sizeof text_a),
                          spart_shape_format(&weights->shape_output, text_b, sizeof text_b));
    }
    return SPART_OK;
}

spart_status spart_weights_layout_conservative(spart_context *context, int num_coordinates,
                                               const spart_array *coordinates_input,
                                               const spart_array *coordinates_output,
                                               const spart_weights_options *options,
                                               spart_weights_layout *layout)
{
    memset(layout, 0, sizeof *layout);
    if (num_coordinates < 1 || num_coordinates > 2) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_coordinates = %d: conservative weights have 1 or 2 resampled "
                          "dimensions",
                          num_coordinates);
    }
    return spart_weights_layout_make(
        context, num_coordinates, coordinates_input, coordinates_output, options->num_axis_input,
        options->axis_input, options->num_axis_output, options->axis_output, 1, layout);
}

/* What fill_factors reads. */
typedef struct transpose_factors {
    const spart_weights_layout *layout;
    const spart_array *coordinates_input;
    const spart_array *coordinates_output;
    const spart_array *weights_input;
    const spart_shape *full_values;
    const int64_t *weight_strides;
    const spart_shape *joined;
} transpose_factors;

/* Result element e's factors: F_in = V_in / (w * w) per input cell and
 * V_out per output cell, of the grids of e (the operations of
 * spart_weights_layout_grid_factors, one side at a time). */
static void fill_factors(const void *user, int64_t element, double *scratch, double *factor_input,
                         double *volume_output)
{
    const transpose_factors *f = user;
    const spart_weights_layout *layout = f->layout;
    int64_t grid = spart_broadcast_index(element, f->joined, &layout->shape_orthogonal);
    size_t largest = (size_t)(layout->size_input > layout->size_output ? layout->size_input
                                                                       : layout->size_output);
    if (factor_input != NULL) {
        spart_weights_layout_cell_volumes(layout, 0, f->coordinates_input, grid, scratch,
                                          factor_input);
        if (f->weights_input != NULL) {
            double *weight_block = scratch + 2 * largest;
            int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
            spart_unravel(grid, &layout->shape_orthogonal, orthogonal_index);
            spart_gather_block(f->weights_input->data, f->weight_strides, f->full_values,
                               layout->resampled_input, layout->num_axes_input, orthogonal_index,
                               weight_block);
            int64_t cells = 1;
            for (int a = 0; a < layout->num_axes_input; a++) {
                cells *= layout->grid_shape_input[a] - 1;
            }
            for (int64_t c = 0; c < cells; c++) {
                factor_input[c] = factor_input[c] / (weight_block[c] * weight_block[c]);
            }
        }
    }
    if (volume_output != NULL) {
        spart_weights_layout_cell_volumes(layout, 1, f->coordinates_output, grid, scratch,
                                          volume_output);
    }
}

spart_status spart_weights_transpose_host(spart_context *context, const spart_weights *weights,
                                          const spart_weights_factors *factors,
                                          spart_weights *shell, spart_weights **transposed)
{
    int64_t num_elements = factors->num_elements;
    int64_t total = shell->offsets[num_elements];
    spart_weights *made =
        spart_weights_allocate(&context->allocator, &shell->shape_orthogonal, &shell->shape_input,
                               &shell->shape_output, shell->num_axis_input, shell->axis_input,
                               shell->num_axis_output, shell->axis_output, total);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "transpose: could not allocate %lld entries", (long long)total);
    }
    memcpy(made->offsets, shell->offsets, ((size_t)num_elements + 1) * sizeof(int64_t));
    size_t cells_in = (size_t)factors->cells_input;
    size_t cells_out = (size_t)factors->cells_output;
    int failed = 0;
#pragma omp parallel num_threads(spart_threads(context)) if (num_elements > 1)
    {
        double *scratch = spart_alloc(
            &context->allocator, factors->scratch_doubles + cells_in + cells_out, sizeof(double));
        if (scratch == NULL) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t e = 0; e < num_elements; e++) {
            if (scratch == NULL) {
                continue;
            }
            if (omp_get_thread_num() == 0) {
                spart_report_progress(context, "conservative transpose", e, num_elements);
            }
            double *factor_input = scratch + factors->scratch_doubles;
            double *volume_output = factor_input + cells_in;
            factors->fill(factors->user, e, scratch, factor_input, volume_output);
            int64_t source = factors->source[e];
            int64_t at = made->offsets[e];
            for (int64_t k = weights->offsets[source]; k < weights->offsets[source + 1]; k++) {
                int64_t i = weights->indices_input[k];
                int64_t out = weights->indices_output[k];
                made->indices_input[at] = out;
                made->indices_output[at] = i;
                made->values[at] = spart_weights_transposed_value(
                    weights->values[k], factor_input[i], volume_output[out]);
                at++;
            }
        }
        spart_free(&context->allocator, scratch);
    }
    if (failed) {
        spart_weights_free(made);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "transpose: could not allocate scratch space");
    }
    *transposed = made;
    return SPART_OK;
}

spart_status spart_weights_transpose_conservative(spart_context *context,
                                                  const spart_weights *weights, int num_coordinates,
                                                  const spart_array *coordinates_input,
                                                  const spart_array *coordinates_output,
                                                  const spart_weights_options *options,
                                                  spart_weights **transposed)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || transposed == NULL || coordinates_input == NULL ||
        coordinates_output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights, coordinates_input, coordinates_output and transposed must "
                          "not be NULL");
    }
    *transposed = NULL;
    spart_weights_options defaults;
    spart_weights_options_init(&defaults);
    const spart_weights_options *o = options != NULL ? options : &defaults;
    spart_weights_layout layout;
    spart_status status = spart_weights_layout_conservative(
        context, num_coordinates, coordinates_input, coordinates_output, o, &layout);
    if (status == SPART_OK) {
        status = check_cells(context, weights, &layout);
    }
    spart_shape full_values;
    int64_t weight_strides[SPART_MAX_NDIM];
    if (status == SPART_OK) {
        status = spart_weights_input_strides(context, &layout, o->weights_input, 1, &full_values,
                                             weight_strides);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_shape joined;
    if (spart_shape_broadcast(&layout.shape_orthogonal, &weights->shape_orthogonal, &joined) != 0) {
        char text_a[128], text_b[128];
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the orthogonal axes of the grids, %s, do not broadcast against those "
                          "of the weights, %s",
                          spart_shape_format(&layout.shape_orthogonal, text_a, sizeof text_a),
                          spart_shape_format(&weights->shape_orthogonal, text_b, sizeof text_b));
    }
    int64_t num_elements = spart_shape_size(&joined);
    const spart_weights_ops *ops = NULL;
    status =
        spart_weights_select(context, weights->on_device, "weights_transpose_conservative", &ops);
    if (status != SPART_OK) {
        return status;
    }
    /* Each joined element's source element and entries, counted to size
     * the result. */
    spart_weights *shell = spart_weights_allocate(&context->allocator, &joined,
                                                  &weights->shape_output, &weights->shape_input,
                                                  weights->num_axis_output, weights->axis_output,
                                                  weights->num_axis_input, weights->axis_input, 0);
    int64_t *source = spart_alloc(&context->allocator,
                                  (size_t)(num_elements > 0 ? num_elements : 1), sizeof(int64_t));
    if (shell == NULL || source == NULL) {
        spart_weights_free(shell);
        spart_free(&context->allocator, source);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "transpose: could not allocate %lld elements' offsets",
                          (long long)num_elements);
    }
    for (int64_t e = 0; e < num_elements; e++) {
        source[e] = spart_broadcast_index(e, &joined, &weights->shape_orthogonal);
        shell->offsets[e + 1] =
            shell->offsets[e] + weights->offsets[source[e] + 1] - weights->offsets[source[e]];
    }
    transpose_factors f = {&layout,          coordinates_input, coordinates_output,
                           o->weights_input, &full_values,      weight_strides,
                           &joined};
    spart_weights_factors factors;
    memset(&factors, 0, sizeof factors);
    factors.num_elements = num_elements;
    factors.source = source;
    factors.cells_input = weights->size_input;
    factors.cells_output = weights->size_output;
    factors.shared_input = spart_weights_layout_input_shared(&layout) && o->weights_input == NULL;
    factors.shared_output = spart_weights_layout_output_shared(&layout);
    factors.scratch_doubles =
        2 * (size_t)(layout.size_input > layout.size_output ? layout.size_input
                                                            : layout.size_output) +
        (size_t)weights->size_input;
    factors.fill = fill_factors;
    factors.user = &f;
    spart_report_progress(context, "conservative transpose", 0, num_elements);
    status = ops->transpose_conservative(context, weights, &factors, shell, transposed);
    spart_weights_free(shell);
    spart_free(&context->allocator, source);
    if (status == SPART_OK) {
        spart_report_progress(context, "conservative transpose", num_elements, num_elements);
    }
    return status;
}
