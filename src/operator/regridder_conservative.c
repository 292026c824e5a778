/*
 * src/operator/regridder_conservative.c: the conservative transpose of a regridder.
 * It has the exact transpose's pattern (row pointers and columns, shared,
 * not copied) and values of its own: each entry v of the exact transpose,
 * which came from entry (input cell i, output cell o) of some orthogonal
 * element, becomes (v * F_in[i]) / V_out[o] with that element's grid
 * factors, F_in = V_in / (w * w) (V_in without weights_input) and V the
 * cell sizes, exactly as spart_weights_transpose_conservative scales the
 * weights. The element of an entry is read back from its row and column:
 * along an orthogonal axis where the input and the output both have one
 * value (the operator sums the elements there) it cannot be, and the grids
 * must then not vary along that axis. A device regridder's values are
 * scaled on the device (src/operator/regridder_build_cuda.c), the grid factors (one
 * per cell, not per entry) computed here.
 */
#include <string.h>

#include "operator/operator_ops.h"
#include "core/shape.h"
#include "weights/weights_build.h"

/* Where an orthogonal axis's index comes from when decoding an entry. */
enum index_source { FROM_NOWHERE = 0, FROM_COLUMN = 1, FROM_ROW = 2 };

/* What decoding needs: spart_conservative_decoder (regridder_internal.h). */
typedef spart_conservative_decoder decoder;

/* Split a matrix index of one side into its resampled cell and the
 * orthogonal indices (written to `orthogonal` for axes whose source is
 * `side`). */
static int64_t decode(const spart_axis_map *map, const int *resampled, int num_resampled,
                      const int *orthogonal_axes, const int *source, int side, int num_orthogonal,
                      int64_t index, int64_t *orthogonal)
{
    int64_t cell = 0;
    for (int a = 0; a < num_resampled; a++) {
        int axis = resampled[a];
        cell = cell * map->shape.dims[axis] +
               (index / map->matrix_stride[axis]) % map->shape.dims[axis];
    }
    for (int k = 0; k < num_orthogonal; k++) {
        if (source[k] == side) {
            int axis = orthogonal_axes[k];
            orthogonal[k] = (index / map->matrix_stride[axis]) % map->shape.dims[axis];
        }
    }
    return cell;
}

/* Check that the grids fit the regridder and say where each orthogonal
 * axis's grid index comes from. */
static spart_status make_decoder(spart_context *context, const spart_regridder *regridder,
                                 const spart_weights_layout *layout, decoder *d)
{
    char text[128];
    const spart_regridder_roles *roles = &regridder->roles;
    memset(d, 0, sizeof *d);
    d->roles = roles;
    d->input = &regridder->input;
    d->output = &regridder->output;
    int match = layout->num_axes_input == roles->num_resampled_input &&
                layout->num_axes_output == roles->num_resampled_output;
    d->cells_input = 1;
    d->cells_output = 1;
    for (int a = 0; match && a < roles->num_resampled_input; a++) {
        int64_t cells = roles->shape_input.dims[roles->axes_input[a]];
        match = layout->grid_shape_input[a] - 1 == cells;
        d->cells_input *= cells;
    }
    for (int a = 0; match && a < roles->num_resampled_output; a++) {
        int64_t cells = roles->shape_output.dims[roles->axes_output[a]];
        match = layout->grid_shape_output[a] - 1 == cells;
        d->cells_output *= cells;
    }
    if (!match) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the grids do not have the cells the regridder resamples: pass the "
                          "grids and axes its weights were built with");
    }
    const spart_shape *grid = &layout->shape_orthogonal;
    if (grid->ndim > roles->num_orthogonal) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the grids have %d orthogonal axes (%s) but the regridder %d", grid->ndim,
                          spart_shape_format(grid, text, sizeof text), roles->num_orthogonal);
    }
    int64_t stride = 1;
    for (int k = roles->num_orthogonal - 1; k >= 0; k--) {
        int g = grid->ndim - (roles->num_orthogonal - k);
        int64_t extent = g >= 0 ? grid->dims[g] : 1;
        int64_t ni = roles->shape_input.dims[roles->orthogonal_input[k]];
        int64_t no = roles->shape_output.dims[roles->orthogonal_output[k]];
        int64_t nw = roles->weights_extent[k];
        d->source[k] = nw > 1 && ni > 1 ? FROM_COLUMN : nw > 1 && no > 1 ? FROM_ROW : FROM_NOWHERE;
        if (extent > 1 && d->source[k] == FROM_NOWHERE) {
            return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                              "orthogonal axis %d: the grids vary along it (%lld elements) but "
                              "the regridder %s, so which element an entry came from is lost",
                              k, (long long)extent,
                              nw == 1 ? "applies one matrix along it"
                                      : "sums its elements into one shared input");
        }
        if (extent > 1 && extent != nw) {
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "orthogonal axis %d: the grids have %lld elements, the weights %lld",
                              k, (long long)extent, (long long)nw);
        }
        d->grid_stride[k] = extent > 1 ? stride : 0;
        stride *= extent;
    }
    return SPART_OK;
}

/* The grid factors of every grid element: F_in (cells_input each) and
 * V_out (cells_output each). */
static spart_status grid_factors(spart_context *context, const spart_weights_layout *layout,
                                 const decoder *d, int num_coordinates,
                                 const spart_array *coordinates_input,
                                 const spart_array *coordinates_output,
                                 const spart_weights_options *options, double **factor_input,
                                 double **volume_output)
{
    (void)num_coordinates;
    int64_t elements = layout->num_elements;
    spart_shape full_values;
    int64_t weight_strides[SPART_MAX_NDIM] = {0};
    spart_status status = spart_weights_input_strides(context, layout, options->weights_input, 1,
                                                      &full_values, weight_strides);
    if (status != SPART_OK) {
        return status;
    }
    size_t vertices = (size_t)(layout->size_input > layout->size_output ? layout->size_input
                                                                        : layout->size_output);
    *factor_input =
        spart_alloc(&context->allocator, (size_t)(elements * d->cells_input), sizeof(double));
    *volume_output =
        spart_alloc(&context->allocator, (size_t)(elements * d->cells_output), sizeof(double));
    double *scratch =
        spart_alloc(&context->allocator, 2 * vertices + (size_t)d->cells_input, sizeof(double));
    if (*factor_input == NULL || *volume_output == NULL || scratch == NULL) {
        spart_free(&context->allocator, scratch);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "conservative transpose: could not allocate the grid factors");
    }
    double *weight_block = scratch + 2 * vertices;
    for (int64_t e = 0; e < elements; e++) {
        spart_weights_layout_grid_factors(layout, coordinates_input, coordinates_output,
                                          options->weights_input, &full_values, weight_strides, e,
                                          scratch, weight_block, *factor_input + e * d->cells_input,
                                          *volume_output + e * d->cells_output);
    }
    spart_free(&context->allocator, scratch);
    return SPART_OK;
}

/* The values of the conservative transpose, row by row of the exact
 * transpose (a row of it is a column of the forward operator). */
void spart_conservative_scale_entries(const decoder *d, const spart_csr *exact,
                                      const double *factor_input, const double *volume_output,
                                      int threads, spart_csr *conservative)
{
    const spart_regridder_roles *roles = d->roles;
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
    for (int64_t column = 0; column < exact->num_rows; column++) {
        int64_t orthogonal[SPART_MAX_NDIM] = {0};
        int64_t cell_in =
            decode(d->input, roles->axes_input, roles->num_resampled_input, roles->orthogonal_input,
                   d->source, FROM_COLUMN, roles->num_orthogonal, column, orthogonal);
        for (int64_t k = exact->row_ptr[column]; k < exact->row_ptr[column + 1]; k++) {
            int64_t row = exact->columns32 != NULL ? exact->columns32[k] : exact->columns64[k];
            int64_t cell_out = decode(d->output, roles->axes_output, roles->num_resampled_output,
                                      roles->orthogonal_output, d->source, FROM_ROW,
                                      roles->num_orthogonal, row, orthogonal);
            int64_t grid = 0;
            for (int a = 0; a < roles->num_orthogonal; a++) {
                grid += orthogonal[a] * d->grid_stride[a];
            }
            /* Exactly one of values64 / values32 is set, in both matrices. */
            /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
            double value = exact->values64 != NULL ? exact->values64[k] : exact->values32[k];
            double scaled = (value * factor_input[grid * d->cells_input + cell_in]) /
                            volume_output[grid * d->cells_output + cell_out];
            /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
            if (conservative->values64 != NULL) {
                conservative->values64[k] = scaled;
            } else {
                conservative->values32[k] = (float)scaled;
            }
        }
    }
}

/* The conservative transpose before its values: owned by `forward`, with
 * the pattern (row pointers, columns, long-row table) of its exact
 * transpose `exact`, shared, not copied. */
static spart_regridder *shell_sharing_pattern(spart_context *context, spart_regridder *forward,
                                              const spart_regridder *exact, spart_status *status)
{
    spart_regridder *made = spart_alloc(&forward->allocator, 1, sizeof *made);
    if (made == NULL) {
        *status =
            spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "conservative transpose: out of memory");
        return NULL;
    }
    *made = *exact;
    made->owns_arrays = 0;
    made->transposed = NULL;
    made->conservative = NULL;
    made->has_roles = 0;
    made->owner = forward;
    made->csr.values64 = NULL;
    made->csr.values32 = NULL;
    return made;
}

spart_status spart_regridder_transpose_conservative(spart_context *context,
                                                    spart_regridder *regridder, int num_coordinates,
                                                    const spart_array *coordinates_input,
                                                    const spart_array *coordinates_output,
                                                    const spart_weights_options *options,
                                                    spart_regridder **transposed)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || transposed == NULL || coordinates_input == NULL ||
        coordinates_output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder, coordinates_input, coordinates_output and transposed must "
                          "not be NULL");
    }
    *transposed = NULL;
    if (!regridder->has_roles) {
        return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                          "this regridder was not made from weights (it is a transpose, or was "
                          "loaded from a file without the roles of its axes): its conservative "
                          "transpose needs the weights' roles");
    }
    spart_weights_options defaults;
    spart_weights_options_init(&defaults);
    const spart_weights_options *o = options != NULL ? options : &defaults;
    spart_weights_layout layout;
    spart_status status = spart_weights_layout_conservative(
        context, num_coordinates, coordinates_input, coordinates_output, o, &layout);
    decoder d;
    if (status == SPART_OK) {
        status = make_decoder(context, regridder, &layout, &d);
    }
    spart_regridder *exact = NULL;
    if (status == SPART_OK) {
        status = spart_regridder_transpose(context, regridder, &exact);
    }
    double *factor_input = NULL, *volume_output = NULL;
    if (status == SPART_OK) {
        status = grid_factors(context, &layout, &d, num_coordinates, coordinates_input,
                              coordinates_output, o, &factor_input, &volume_output);
    }
    spart_regridder *made = NULL;
    if (status == SPART_OK) {
        made = shell_sharing_pattern(context, regridder, exact, &status);
    }
    if (status == SPART_OK) {
        spart_conservative_scaling scaling = {&d, layout.num_elements, factor_input, volume_output};
        status = regridder->ops->conservative(context, exact, &scaling, made);
        if (status != SPART_OK) {
            made->ops->release(made); /* its values only: it owns no pattern */
            spart_free(&regridder->allocator, made);
        }
    }
    if (status == SPART_OK) {
        if (regridder->conservative != NULL) {
            spart_regridder *old = regridder->conservative;
            old->owner = NULL;
            old->owns_arrays = 0;
            spart_regridder_free(old);
        }
        regridder->conservative = made;
        *transposed = made;
    }
    spart_free(&context->allocator, factor_input);
    spart_free(&context->allocator, volume_output);
    return status;
}
