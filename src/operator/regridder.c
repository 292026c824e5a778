/*
 * src/operator/regridder.c: making a regridder from weights (the roles of the
 * orthogonal axes, the row and column of every entry, the assembly and
 * the plan), applying it, and its exact transpose.
 */
#include <string.h>

#include "core/shape.h"
#include "device/device_select.h"
#include "operator/operator_ops.h"
#include "operator/regridder_device.h"
#include "spart/device.h"
#include "operator/regridder_internal.h"
#include "weights/weights_internal.h"

void spart_regridder_options_init(spart_regridder_options *options)
{
    if (options != NULL) {
        memset(options, 0, sizeof *options);
        options->value_type = SPART_FLOAT64;
    }
}

static spart_status resampled_axes(spart_context *context, const char *side,
                                   const spart_shape *shape, int count, const int *axes,
                                   const spart_shape *weights_shape, int weights_count,
                                   const int *weights_axes, int *result)
{
    char text_a[128], text_b[128];
    int negative[SPART_MAX_NDIM] = {0};
    int n = 0, bad = 0;
    if (count == 0) {
        for (int a = 0; a < weights_count; a++) {
            negative[a] = weights_axes[a] - weights_shape->ndim;
        }
        n = weights_count;
        for (int a = 0; a < n; a++) {
            if (-negative[a] > shape->ndim) {
                return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                                  "shape_%s %s has too few axes for the weights' resampled axes",
                                  side, spart_shape_format(shape, text_a, sizeof text_a));
            }
        }
    } else {
        int status = spart_axes_normalize(count, axes, shape->ndim, 0, negative, &n, &bad);
        if (status != 0) {
            return spart_fail(context,
                              status == -1 ? SPART_ERROR_AXIS_OUT_OF_RANGE
                                           : SPART_ERROR_INVALID_ARGUMENT,
                              "axis_%s[%d] = %d is %s for shape_%s %s", side, bad, axes[bad],
                              status == -1 ? "out of range" : "repeated", side,
                              spart_shape_format(shape, text_a, sizeof text_a));
        }
    }
    if (n != weights_count) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "axis_%s names %d axes but the weights resample %d", side, n,
                          weights_count);
    }
    for (int a = 0; a < n; a++) {
        result[a] = shape->ndim + negative[a];
        int64_t extent = shape->dims[result[a]];
        int64_t expected = weights_shape->dims[weights_axes[a]];
        if (extent != expected) {
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "shape_%s %s has %lld values along resampled axis %d, but the "
                              "weights (shape_%s %s) address %lld",
                              side, spart_shape_format(shape, text_a, sizeof text_a),
                              (long long)extent, result[a], side,
                              spart_shape_format(weights_shape, text_b, sizeof text_b),
                              (long long)expected);
        }
    }
    return SPART_OK;
}

int spart_list_orthogonal_axes(const spart_shape *shape, const int *resampled, int count, int *axes)
{
    int n = 0;
    for (int k = 0; k < shape->ndim; k++) {
        if (!spart_axes_contain(resampled, count, k)) {
            axes[n++] = k;
        }
    }
    return n;
}

/* The shapes a regridder takes and gives by default: the weights' shapes
 * with their orthogonal axes broadcast together (and with the weights'
 * own), as regrid_from_weights lays out values; the diagonal role on
 * every orthogonal axis. Returns -1 when they do not broadcast. */
static int default_shapes(const spart_weights *weights, spart_shape *input, spart_shape *output)
{
    int axes_in[SPART_MAX_NDIM] = {0}, axes_out[SPART_MAX_NDIM] = {0};
    spart_shape orthogonal_in, orthogonal_out, joined, orthogonal;
    memset(&orthogonal_in, 0, sizeof orthogonal_in);
    memset(&orthogonal_out, 0, sizeof orthogonal_out);
    for (int k = 0; k < weights->shape_input.ndim; k++) {
        if (!spart_axes_contain(weights->axis_input, weights->num_axis_input, k)) {
            orthogonal_in.dims[orthogonal_in.ndim++] = weights->shape_input.dims[k];
        }
    }
    for (int k = 0; k < weights->shape_output.ndim; k++) {
        if (!spart_axes_contain(weights->axis_output, weights->num_axis_output, k)) {
            orthogonal_out.dims[orthogonal_out.ndim++] = weights->shape_output.dims[k];
        }
    }
    if (spart_shape_broadcast(&orthogonal_in, &orthogonal_out, &joined) != 0 ||
        spart_shape_broadcast(&joined, &weights->shape_orthogonal, &orthogonal) != 0) {
        return -1;
    }
    /* Resampled axes as negative numbers, -1 first, as the insertion wants. */
    for (int a = 0; a < weights->num_axis_input; a++) {
        axes_in[a] =
            weights->axis_input[weights->num_axis_input - 1 - a] - weights->shape_input.ndim;
    }
    for (int a = 0; a < weights->num_axis_output; a++) {
        axes_out[a] =
            weights->axis_output[weights->num_axis_output - 1 - a] - weights->shape_output.ndim;
    }
    *input = spart_shape_insert_axes(&orthogonal, &weights->shape_input, axes_in,
                                     weights->num_axis_input);
    *output = spart_shape_insert_axes(&orthogonal, &weights->shape_output, axes_out,
                                      weights->num_axis_output);
    return 0;
}

static spart_status make_layout(spart_context *context, const spart_weights *weights,
                                const spart_regridder_options *options,
                                spart_regridder_roles *layout)
{
    char text[128];
    memset(layout, 0, sizeof *layout);
    spart_shape default_input, default_output;
    if (default_shapes(weights, &default_input, &default_output) != 0) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the orthogonal axes of the weights' shapes do not broadcast together");
    }
    layout->shape_input = options->has_shape_input ? options->shape_input : default_input;
    layout->shape_output = options->has_shape_output ? options->shape_output : default_output;
    if (!spart_shape_is_valid(&layout->shape_input) ||
        !spart_shape_is_valid(&layout->shape_output)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "shape_input or shape_output: ndim or an extent is out of range");
    }
    if (options->num_axis_input < 0 || options->num_axis_input > SPART_MAX_NDIM ||
        options->num_axis_output < 0 || options->num_axis_output > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_axis_input = %d and num_axis_output = %d must be in [0, %d]",
                          options->num_axis_input, options->num_axis_output, SPART_MAX_NDIM);
    }
    spart_status status = resampled_axes(
        context, "input", &layout->shape_input, options->num_axis_input, options->axis_input,
        &weights->shape_input, weights->num_axis_input, weights->axis_input, layout->axes_input);
    if (status == SPART_OK) {
        status =
            resampled_axes(context, "output", &layout->shape_output, options->num_axis_output,
                           options->axis_output, &weights->shape_output, weights->num_axis_output,
                           weights->axis_output, layout->axes_output);
    }
    if (status != SPART_OK) {
        return status;
    }
    layout->num_resampled_input = weights->num_axis_input;
    layout->num_resampled_output = weights->num_axis_output;
    int n_in = spart_list_orthogonal_axes(&layout->shape_input, layout->axes_input,
                                          layout->num_resampled_input, layout->orthogonal_input);
    int n_out = spart_list_orthogonal_axes(&layout->shape_output, layout->axes_output,
                                           layout->num_resampled_output, layout->orthogonal_output);
    if (n_in != n_out) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the input values have %d orthogonal axes and the output values %d: "
                          "they must have the same number",
                          n_in, n_out);
    }
    layout->num_orthogonal = n_in;
    const spart_shape *orthogonal = &weights->shape_orthogonal;
    if (orthogonal->ndim > n_in) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the weights have %d orthogonal axes (%s) but the values only %d",
                          orthogonal->ndim, spart_shape_format(orthogonal, text, sizeof text),
                          n_in);
    }
    for (int k = 0; k < n_in; k++) {
        int from_end = n_in - k;
        int64_t nw =
            from_end <= orthogonal->ndim ? orthogonal->dims[orthogonal->ndim - from_end] : 1;
        int64_t ni = layout->shape_input.dims[layout->orthogonal_input[k]];
        int64_t no = layout->shape_output.dims[layout->orthogonal_output[k]];
        layout->weights_extent[k] = nw;
        int fits = nw == 1 ? ni == no : (ni == 1 || ni == nw) && (no == 1 || no == nw);
        if (!fits) {
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "orthogonal axis %d (input axis %d, output axis %d): the weights "
                              "have %lld elements, the input %lld and the output %lld, which "
                              "fit no role (N N N, N 1 N, N N 1, N 1 1 or 1 M M)",
                              k, layout->orthogonal_input[k], layout->orthogonal_output[k],
                              (long long)nw, (long long)ni, (long long)no);
        }
    }
    return SPART_OK;
}

/* Fill one side's axis map: orthogonal axis k is a batch axis when the
 * weights do not vary along it (nw = 1) and it has more than one value. */
static spart_status make_axis_map(spart_context *context, const spart_regridder_roles *layout,
                                  const spart_shape *shape, const int *orthogonal,
                                  spart_axis_map *map, int64_t *matrix_size)
{
    memset(map, 0, sizeof *map);
    map->shape = *shape;
    for (int k = 0; k < layout->num_orthogonal; k++) {
        int axis = orthogonal[k];
        map->is_batch[axis] = layout->weights_extent[k] == 1 && shape->dims[axis] > 1;
    }
    int64_t matrix_stride = 1, batch_stride = 1;
    for (int axis = shape->ndim - 1; axis >= 0; axis--) {
        int64_t extent = shape->dims[axis];
        if (map->is_batch[axis]) {
            map->batch_stride[axis] = batch_stride;
            batch_stride *= extent;
        } else {
            map->matrix_stride[axis] = matrix_stride;
            if (extent != 0 && matrix_stride > INT64_MAX / extent) {
                return spart_fail(context, SPART_ERROR_OVERFLOW,
                                  "the operator would have more than 2^63 rows or columns");
            }
            matrix_stride *= extent;
        }
    }
    map->num_batch = batch_stride;
    *matrix_size = matrix_stride;
    return SPART_OK;
}

/* Per element: the row (column) offset of its orthogonal position, over
 * the axes where both the weights and that side vary. */
static void element_offsets(const spart_weights *weights, const spart_regridder_roles *layout,
                            const spart_axis_map *map, const int *orthogonal, int64_t *offset)
{
    const spart_shape *shape_w = &weights->shape_orthogonal;
    int64_t index[SPART_MAX_NDIM] = {0};
    for (int64_t e = 0; e < weights->num_elements; e++) {
        spart_unravel(e, shape_w, index);
        int64_t sum = 0;
        for (int k = 0; k < shape_w->ndim; k++) {
            int orthogonal_axis = layout->num_orthogonal - shape_w->ndim + k;
            int axis = orthogonal[orthogonal_axis];
            if (shape_w->dims[k] > 1 && map->shape.dims[axis] > 1) {
                sum += index[k] * map->matrix_stride[axis];
            }
        }
        offset[e] = sum;
    }
}

/* The stride of the resampled block when the resampled axes form one
 * dense C-order block of the matrix index (then cell i lands at i times
 * it), or 0 when they do not. */
static int64_t affine_stride(const spart_axis_map *map, const int *resampled, int count)
{
    for (int a = 0; a + 1 < count; a++) {
        int axis = resampled[a], next = resampled[a + 1];
        if (map->matrix_stride[axis] != map->matrix_stride[next] * map->shape.dims[next]) {
            return 0;
        }
    }
    return count > 0 ? map->matrix_stride[resampled[count - 1]] : 0;
}

/* Per resampled cell (flat, C order over the resampled axes): its offset
 * in the row (column) index. */
static void cell_lookup(const spart_axis_map *map, const int *resampled, int count,
                        int64_t num_cells, int64_t *lookup)
{
    spart_shape cells;
    memset(&cells, 0, sizeof cells);
    cells.ndim = count;
    for (int a = 0; a < count; a++) {
        cells.dims[a] = map->shape.dims[resampled[a]];
    }
    int64_t index[SPART_MAX_NDIM] = {0};
    for (int64_t i = 0; i < num_cells; i++) {
        spart_unravel(i, &cells, index);
        int64_t sum = 0;
        for (int a = 0; a < count; a++) {
            sum += index[a] * map->matrix_stride[resampled[a]];
        }
        lookup[i] = sum;
    }
}

static spart_regridder *allocate_regridder(const spart_allocator *allocator)
{
    spart_regridder *regridder = spart_alloc_zero(allocator, 1, sizeof *regridder);
    if (regridder != NULL) {
        regridder->allocator = *allocator;
        regridder->owns_arrays = 1;
    }
    return regridder;
}

static spart_status assemble(spart_context *context, const spart_weights *weights,
                             const spart_regridder_roles *layout, int drop_zeros,
                             spart_value_type value_type, spart_device_entries *device_entries,
                             const spart_assembly_step *step, spart_regridder *regridder)
{
    const spart_allocator *allocator = &context->allocator;
    size_t elements = (size_t)weights->num_elements;
    int64_t row_stride =
        affine_stride(&regridder->output, layout->axes_output, layout->num_resampled_output);
    int64_t column_stride =
        affine_stride(&regridder->input, layout->axes_input, layout->num_resampled_input);
    int64_t *row_offset = spart_alloc(allocator, elements, sizeof(int64_t));
    int64_t *column_offset = spart_alloc(allocator, elements, sizeof(int64_t));
    int64_t *row_lookup =
        row_stride > 0 ? NULL
                       : spart_alloc(allocator, (size_t)weights->size_output, sizeof(int64_t));
    int64_t *column_lookup =
        column_stride > 0 ? NULL
                          : spart_alloc(allocator, (size_t)weights->size_input, sizeof(int64_t));
    spart_status status = SPART_OK;
    if (row_offset == NULL || column_offset == NULL || (row_stride == 0 && row_lookup == NULL) ||
        (column_stride == 0 && column_lookup == NULL)) {
        status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                            "regridder: could not allocate the assembly tables");
    } else {
        element_offsets(weights, layout, &regridder->output, layout->orthogonal_output, row_offset);
        element_offsets(weights, layout, &regridder->input, layout->orthogonal_input,
                        column_offset);
        if (row_lookup != NULL) {
            cell_lookup(&regridder->output, layout->axes_output, layout->num_resampled_output,
                        weights->size_output, row_lookup);
        }
        if (column_lookup != NULL) {
            cell_lookup(&regridder->input, layout->axes_input, layout->num_resampled_input,
                        weights->size_input, column_lookup);
        }
        spart_assembly_source source;
        memset(&source, 0, sizeof source);
        source.num_elements = weights->num_elements;
        source.offsets = weights->offsets;
        source.indices_input = weights->indices_input;
        source.indices_output = weights->indices_output;
        source.values = weights->values;
        source.row_offset = row_offset;
        source.column_offset = column_offset;
        source.row_lookup = row_lookup;
        source.column_lookup = column_lookup;
        source.row_lookup_stride = row_stride;
        source.column_lookup_stride = column_stride;
        source.drop_zeros = drop_zeros;
        source.device_entries = device_entries;
        spart_report_progress(context, "assembly", 0, 1);
        status = step != NULL
                     ? step->function(context, &source, weights->size_input, weights->size_output,
                                      value_type, regridder, step->argument)
                     : regridder->ops->assemble(context, &source, weights->size_input,
                                                weights->size_output, value_type, regridder);
        if (status == SPART_OK) {
            spart_report_progress(context, "assembly", 1, 1);
        }
    }
    spart_free(allocator, row_offset);
    spart_free(allocator, column_offset);
    spart_free(allocator, row_lookup);
    spart_free(allocator, column_lookup);
    return status;
}

spart_status spart_regridder_create(spart_context *context, const spart_weights *weights,
                                    const spart_regridder_options *options,
                                    spart_regridder **regridder)
{
    return spart_regridder_create_on(context, weights, options, -1, regridder);
}

/* What spart_regridder_create checks before it reads any entry, for
 * `options` (not NULL): the value type, the roles' layout, and both sides'
 * axis maps with the matrix's rows and columns. */
static spart_status check_layout(spart_context *context, const spart_weights *weights,
                                 const spart_regridder_options *options,
                                 spart_regridder_roles *layout, spart_axis_map *input,
                                 int64_t *num_columns, spart_axis_map *output, int64_t *num_rows)
{
    memset(layout, 0, sizeof *layout);
    memset(input, 0, sizeof *input);
    memset(output, 0, sizeof *output);
    *num_columns = 0;
    *num_rows = 0;
    if (options->value_type != SPART_FLOAT64 && options->value_type != SPART_FLOAT32) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "options->value_type = %d is not a spart_value_type (0 float64, 1 "
                          "float32)",
                          (int)options->value_type);
    }
    spart_status status = make_layout(context, weights, options, layout);
    if (status == SPART_OK) {
        status = make_axis_map(context, layout, &layout->shape_input, layout->orthogonal_input,
                               input, num_columns);
    }
    if (status == SPART_OK) {
        status = make_axis_map(context, layout, &layout->shape_output, layout->orthogonal_output,
                               output, num_rows);
    }
    return status;
}

spart_status spart_regridder_check_options(spart_context *context, const spart_weights *weights,
                                           const spart_regridder_options *options)
{
    spart_regridder_options defaults;
    spart_regridder_options_init(&defaults);
    spart_regridder_roles layout;
    spart_axis_map input, output;
    int64_t num_columns = 0, num_rows = 0;
    return check_layout(context, weights, options != NULL ? options : &defaults, &layout, &input,
                        &num_columns, &output, &num_rows);
}

/* The stripes of rows that read the same input: the leading output axes
 * that are orthogonal axes of a shared input (N 1 N: the weights and the
 * output vary along them, the input does not) cut the rows into that many
 * equal, contiguous stripes, each element applied to the same x (the
 * channels of a CTIS forward model). The host product visits the
 * stripes' rows side by side, so that the part of x they read is fetched
 * from memory once rather than once per stripe; the order of each row's
 * sums does not change. */
int64_t spart_regridder_row_stripes(const spart_regridder_roles *layout,
                                    const spart_axis_map *output)
{
    int64_t stripes = 1;
    for (int axis = 0; axis < output->shape.ndim; axis++) {
        int k = 0;
        while (k < layout->num_orthogonal && layout->orthogonal_output[k] != axis) {
            k++;
        }
        int64_t extent = output->shape.dims[axis];
        if (extent == 1) {
            continue; /* one stripe either way */
        }
        if (k == layout->num_orthogonal || output->is_batch[axis] ||
            layout->shape_input.dims[layout->orthogonal_input[k]] != 1) {
            break; /* a resampled axis, a batch axis, or an input of its own */
        }
        stripes *= extent;
    }
    return stripes;
}

/* spart_regridder_create_on, with the entries in device memory when
 * device_entries is not NULL (cuda_device >= 0 then), or assembled by
 * `step` instead of the table's assembly when step is not NULL. */
static spart_status create_regridder(spart_context *context, const spart_weights *weights,
                                     const spart_regridder_options *options, int cuda_device,
                                     spart_device_entries *device_entries,
                                     const spart_assembly_step *step, spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || weights == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights and regridder must not be NULL");
    }
    *regridder = NULL;
    /* Weights built on a device (spart_weights_build_device) are assembled
     * where they lie, on their own device, their entries borrowed; the
     * host assembly cannot read them. */
    spart_device_entries resident;
    if (weights->on_device && device_entries == NULL && step == NULL) {
        if (cuda_device != weights->cuda_device) {
            return cuda_device < 0
                       ? spart_weights_require_host(context, weights, "regridder_create")
                       : spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                    "regridder_create_device: the weights live on "
                                    "CUDA device %d, the context's device is %d",
                                    weights->cuda_device, cuda_device);
        }
        memset(&resident, 0, sizeof resident);
        resident.indices_input = weights->indices_input;
        resident.indices_output = weights->indices_output;
        resident.values = weights->values;
        resident.borrowed = 1;
        device_entries = &resident;
    }
    if (cuda_device >= 0) {
        spart_status exists = spart_device_check_exists(context, cuda_device);
        if (exists != SPART_OK) {
            return exists;
        }
    }
    spart_regridder_options defaults;
    spart_regridder_options_init(&defaults);
    if (options == NULL) {
        options = &defaults;
    }
    spart_regridder_roles layout;
    spart_axis_map input, output;
    int64_t num_columns = 0, num_rows = 0;
    spart_status status =
        check_layout(context, weights, options, &layout, &input, &num_columns, &output, &num_rows);
    if (status != SPART_OK) {
        return status;
    }
    spart_regridder *made = allocate_regridder(&context->allocator);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "regridder: out of memory");
    }
    made->ops = spart_operator_ops_for(cuda_device);
    made->device.cuda_device = cuda_device >= 0 ? cuda_device : 0;
    made->input = input;
    made->output = output;
    made->csr.num_columns = num_columns;
    made->csr.num_rows = num_rows;
    status = assemble(context, weights, &layout, options->drop_zeros, options->value_type,
                      device_entries, step, made);
    if (status != SPART_OK) {
        spart_regridder_free(made);
        return status;
    }
    made->plan = spart_plan_product(&made->csr);
    made->plan.row_stripes = spart_regridder_row_stripes(&layout, &output);
    made->ops->index_rows(made, spart_threads(context));
    made->roles = layout;
    made->has_roles = 1;
    *regridder = made;
    return SPART_OK;
}

spart_status spart_regridder_create_on(spart_context *context, const spart_weights *weights,
                                       const spart_regridder_options *options, int cuda_device,
                                       spart_regridder **regridder)
{
    return create_regridder(context, weights, options, cuda_device, NULL, NULL, regridder);
}

spart_status spart_regridder_create_device(spart_context *context, const spart_weights *weights,
                                           const spart_regridder_options *options,
                                           spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    return create_regridder(context, weights, options, context->cuda_device, NULL, NULL, regridder);
}

spart_status spart_regridder_create_from_device_entries(
    spart_context *context, const spart_weights *weights, const spart_regridder_options *options,
    int cuda_device, spart_device_entries *entries, spart_regridder **regridder)
{
    return create_regridder(context, weights, options, cuda_device, entries, NULL, regridder);
}

spart_status spart_regridder_create_by_step(spart_context *context, const spart_weights *shell,
                                            const spart_regridder_options *options, int cuda_device,
                                            const spart_assembly_step *step,
                                            spart_regridder **regridder)
{
    return create_regridder(context, shell, options, cuda_device, NULL, step, regridder);
}

/* Free a regridder and the regridders it owns (its transposes, and
 * theirs). A conservative transpose shares its pattern (row pointers and
 * columns) with the exact transpose and owns only its values. */
static void free_regridder(spart_regridder *regridder)
{
    const spart_allocator allocator = regridder->allocator;
    if (regridder->transposed != NULL && regridder->transposed->owner == regridder) {
        free_regridder(regridder->transposed);
    }
    if (regridder->conservative != NULL && regridder->conservative->owner == regridder) {
        free_regridder(regridder->conservative);
    }
    regridder->ops->release(regridder);
    spart_free(&allocator, regridder);
}

void spart_regridder_free(spart_regridder *regridder)
{
    if (regridder == NULL || regridder->owner != NULL) {
        return;
    }
    free_regridder(regridder);
}

spart_shape spart_regridder_shape_input(const spart_regridder *regridder)
{
    spart_shape empty;
    memset(&empty, 0, sizeof empty);
    return regridder != NULL ? regridder->input.shape : empty;
}

spart_shape spart_regridder_shape_output(const spart_regridder *regridder)
{
    spart_shape empty;
    memset(&empty, 0, sizeof empty);
    return regridder != NULL ? regridder->output.shape : empty;
}

int64_t spart_regridder_num_rows(const spart_regridder *regridder)
{
    return regridder != NULL ? regridder->csr.num_rows : 0;
}

int64_t spart_regridder_num_columns(const spart_regridder *regridder)
{
    return regridder != NULL ? regridder->csr.num_columns : 0;
}

int64_t spart_regridder_num_entries(const spart_regridder *regridder)
{
    return regridder != NULL ? regridder->csr.num_entries : 0;
}

spart_value_type spart_regridder_value_type(const spart_regridder *regridder)
{
    return regridder != NULL && regridder->csr.values32 != NULL ? SPART_FLOAT32 : SPART_FLOAT64;
}

int spart_regridder_group_size(const spart_regridder *regridder)
{
    return regridder != NULL ? regridder->plan.group_size : 0;
}

spart_status spart_regridder_csr(const spart_regridder *regridder, const int64_t **row_ptr,
                                 const int32_t **columns32, const int64_t **columns64,
                                 const void **values)
{
    if (regridder == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "regridder is NULL");
    }
    if (row_ptr != NULL) {
        *row_ptr = regridder->csr.row_ptr;
    }
    if (columns32 != NULL) {
        *columns32 = regridder->csr.columns32;
    }
    if (columns64 != NULL) {
        *columns64 = regridder->csr.columns64;
    }
    if (values != NULL) {
        *values = regridder->csr.values32 != NULL ? (const void *)regridder->csr.values32
                                                  : (const void *)regridder->csr.values64;
    }
    return SPART_OK;
}
