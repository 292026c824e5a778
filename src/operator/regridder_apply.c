/*
 * src/operator/regridder_apply.c: y = A x. x is leading axes + the input shape; its
 * matrix axes give the column, its leading and batch axes the vector. When
 * there is one vector (no leading or batch axes) x and y are the column
 * and the result as they lie. Otherwise the kernels read interleaved
 * vectors X[column * T + vector]: x is used as it lies when it is laid
 * out so already (batch axes after the matrix axes, no leading axes),
 * else packed into the workspace. The product writes y as it lies when
 * the output has no batch axes (its vectors one after another, as leading
 * axes lay them out) or lies interleaved like x; otherwise into
 * interleaved vectors Y, unpacked into y after.
 */
#include <stdint.h>
#include <string.h>

#include "operator/regridder_internal.h"
#include "core/shape.h"

/* The number of vectors for x of shape `shape_x`: leading axes times batch
 * axes. Checks that shape_x ends with the input shape. */
static spart_status count_vectors(spart_context *context, const spart_regridder *regridder,
                                  const spart_shape *shape_x, int64_t *num_leading,
                                  int64_t *num_vectors)
{
    char text_a[128], text_b[128];
    const spart_shape *input = &regridder->input.shape;
    int lead = shape_x->ndim - input->ndim;
    int matches = spart_shape_size(shape_x) >= 0 && lead >= 0 && shape_x->ndim <= SPART_MAX_NDIM;
    for (int k = 0; matches && k < input->ndim; k++) {
        matches = shape_x->dims[lead + k] == input->dims[k];
    }
    if (!matches) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "x has shape %s, which is not leading axes followed by the "
                          "regridder's input shape %s",
                          spart_shape_format(shape_x, text_a, sizeof text_a),
                          spart_shape_format(input, text_b, sizeof text_b));
    }
    if (regridder->output.shape.ndim + lead > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "y would have more than %d axes",
                          SPART_MAX_NDIM);
    }
    *num_leading = 1;
    for (int k = 0; k < lead; k++) {
        *num_leading *= shape_x->dims[k];
    }
    *num_vectors = *num_leading * regridder->input.num_batch;
    return SPART_OK;
}

spart_status spart_regridder_apply_shape(spart_context *context, const spart_regridder *regridder,
                                         const spart_shape *shape_x, spart_shape *shape_y)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || shape_x == NULL || shape_y == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder, shape_x and shape_y must not be NULL");
    }
    int64_t num_leading = 0, num_vectors = 0;
    spart_status status = count_vectors(context, regridder, shape_x, &num_leading, &num_vectors);
    if (status != SPART_OK) {
        return status;
    }
    int lead = shape_x->ndim - regridder->input.shape.ndim;
    spart_shape result;
    memset(&result, 0, sizeof result);
    result.ndim = lead + regridder->output.shape.ndim;
    for (int k = 0; k < lead; k++) {
        result.dims[k] = shape_x->dims[k];
    }
    for (int k = 0; k < regridder->output.shape.ndim; k++) {
        result.dims[lead + k] = regridder->output.shape.dims[k];
    }
    *shape_y = result;
    return SPART_OK;
}

/* Whether the n_a doubles at a and the n_b at b share memory (addresses
 * compared as integers: the arrays may belong to different objects). */
static int values_overlap(const double *a, int64_t n_a, const double *b, int64_t n_b)
{
    if (a == NULL || b == NULL || n_a <= 0 || n_b <= 0) {
        return 0;
    }
    uintptr_t a_begin = (uintptr_t)a, b_begin = (uintptr_t)b;
    uintptr_t a_end = a_begin + (uintptr_t)n_a * sizeof(double);
    uintptr_t b_end = b_begin + (uintptr_t)n_b * sizeof(double);
    return a_begin < b_end && b_begin < a_end;
}

/* Whether x and y can be used as they lie: one vector. */
static int packing_needed(int64_t num_vectors)
{
    return num_vectors != 1;
}

/* Whether a batch's product writes y as it lies: an output without batch
 * axes holds its vectors one after another (row r of vector t at
 * y[t * rows + r]), a layout the kernels write directly. */
static int output_written_in_place(const spart_regridder *regridder)
{
    return regridder->output.num_batch == 1;
}

/* Whether one side's values, for num_leading leading vectors, already lie
 * as the kernels' interleaved vectors (the value of matrix index m and
 * vector t at m * T + t): no leading axes, and every axis's C-order
 * stride is its stride in that layout, as when the batch axes come after
 * the matrix axes (x of shape (..., N, N, 8) for a trailing batch axis of
 * 8). Axes of extent 1 are free to lie anywhere. */
static int lies_interleaved(const spart_axis_map *map, int64_t num_leading)
{
    if (num_leading != 1) {
        return 0;
    }
    int64_t c_stride = 1;
    for (int k = map->shape.ndim - 1; k >= 0; k--) {
        int64_t interleaved_stride =
            map->is_batch[k] ? map->batch_stride[k] : map->matrix_stride[k] * map->num_batch;
        if (map->shape.dims[k] > 1 && interleaved_stride != c_stride) {
            return 0;
        }
        c_stride *= map->shape.dims[k];
    }
    return 1;
}

/* Whether the product writes y as it lies, interleaved like X. */
static int output_lies_interleaved(const spart_regridder *regridder, int64_t num_leading)
{
    return !output_written_in_place(regridder) && lies_interleaved(&regridder->output, num_leading);
}

/* Packed x starts on a cache line of the workspace: a batch of 8 reads
 * one column's 8 values as one 64-byte load, which would otherwise cost
 * two lines each time (a third slower, measured). */
#define PACKED_ALIGNMENT 64

static size_t workspace_doubles(const spart_regridder *regridder, int64_t num_leading,
                                int64_t num_vectors, int threads)
{
    if (!packing_needed(num_vectors)) {
        return 0;
    }
    size_t vectors = (size_t)num_vectors;
    size_t packed_x = lies_interleaved(&regridder->input, num_leading)
                          ? 0
                          : (size_t)regridder->csr.num_columns * vectors;
    size_t packed_y =
        output_written_in_place(regridder) || output_lies_interleaved(regridder, num_leading)
            ? 0
            : (size_t)regridder->csr.num_rows * vectors;
    size_t alignment_slack = PACKED_ALIGNMENT / sizeof(double);
    return alignment_slack + packed_x + packed_y +
           (size_t)threads * spart_host_csr_product_scratch(&regridder->plan, num_vectors);
}

/* The first cache-line boundary at or after `workspace` (within the slack
 * workspace_doubles counts). */
static double *first_aligned(void *workspace)
{
    uintptr_t address = (uintptr_t)workspace;
    uintptr_t misalignment = address % PACKED_ALIGNMENT;
    size_t skip = misalignment == 0 ? 0 : (size_t)(PACKED_ALIGNMENT - misalignment);
    return (double *)((char *)workspace + skip);
}

spart_status spart_regridder_workspace_size(spart_context *context,
                                            const spart_regridder *regridder,
                                            const spart_shape *shape_x, size_t *bytes)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || shape_x == NULL || bytes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder, shape_x and bytes must not be NULL");
    }
    int64_t num_leading = 0, num_vectors = 0;
    spart_status status = count_vectors(context, regridder, shape_x, &num_leading, &num_vectors);
    if (status == SPART_OK && regridder->device.on_device) {
        *bytes = spart_device_workspace_bytes(regridder, num_vectors);
    } else if (status == SPART_OK) {
        *bytes = workspace_doubles(regridder, num_leading, num_vectors, spart_threads(context)) *
                 sizeof(double);
    }
    return status;
}

/* Values per tile edge of the blocked transpose, and flat values per task
 * of the general repack. */
#define TILE 64
#define REPACK_TASK 65536

/* The common case, no declared batch axes: the matrix index of a value is
 * its flat index, so packing is the transpose of a num_leading x size
 * matrix (and unpacking its inverse), done in tiles for locality. */
static void transpose_tiles(int64_t num_leading, int64_t size, const double *from_values,
                            double *to_values, double *packed, int threads)
{
    int to_packed = from_values != NULL;
    int64_t tiles_lead = (num_leading + TILE - 1) / TILE;
    int64_t tiles_flat = (size + TILE - 1) / TILE;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t tile = 0; tile < tiles_lead * tiles_flat; tile++) {
        int64_t lead_begin = (tile / tiles_flat) * TILE, flat_begin = (tile % tiles_flat) * TILE;
        int64_t lead_end = lead_begin + TILE < num_leading ? lead_begin + TILE : num_leading;
        int64_t flat_end = flat_begin + TILE < size ? flat_begin + TILE : size;
        for (int64_t flat = flat_begin; flat < flat_end; flat++) {
            for (int64_t lead = lead_begin; lead < lead_end; lead++) {
                if (to_packed) {
                    packed[flat * num_leading + lead] = from_values[lead * size + flat];
                } else {
                    to_values[lead * size + flat] = packed[flat * num_leading + lead];
                }
            }
        }
    }
}

/* Move values between their C-order layout (leading axes, then the side's
 * axes) and interleaved vectors packed[matrix_index * T + vector]: from
 * from_values into packed when from_values is given, else from packed
 * into to_values. Parallel over fixed runs of flat indices, each starting
 * its odometer where its run starts. */
static void repack(const spart_axis_map *map, int64_t num_leading, const double *from_values,
                   double *to_values, double *packed, int threads)
{
    int64_t size = spart_shape_size(&map->shape);
    if (map->num_batch == 1 && from_values != NULL && num_leading == 8 &&
        spart_host_pack_eight(from_values, size, packed, threads)) {
        return;
    }
    if (map->num_batch == 1) {
        transpose_tiles(num_leading, size, from_values, to_values, packed, threads);
        return;
    }
    int to_packed = from_values != NULL;
    int64_t num_vectors = num_leading * map->num_batch;
    int64_t total = num_leading * size;
    int64_t tasks = (total + REPACK_TASK - 1) / REPACK_TASK;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t task = 0; task < tasks; task++) {
        int64_t begin = task * REPACK_TASK;
        int64_t end = begin + REPACK_TASK < total ? begin + REPACK_TASK : total;
        int64_t lead = begin / size, flat = begin % size;
        int64_t index[SPART_MAX_NDIM] = {0};
        spart_unravel(flat, &map->shape, index);
        int64_t matrix = 0, batch = 0;
        for (int k = 0; k < map->shape.ndim; k++) {
            matrix += index[k] * map->matrix_stride[k];
            batch += index[k] * map->batch_stride[k];
        }
        for (int64_t at = begin; at < end; at++) {
            int64_t slot = matrix * num_vectors + lead * map->num_batch + batch;
            if (to_packed) {
                packed[slot] = from_values[at];
            } else {
                to_values[at] = packed[slot];
            }
            if (++flat == size) { /* the next leading index */
                flat = 0;
                lead++;
            }
            for (int k = map->shape.ndim - 1; k >= 0; k--) {
                index[k]++;
                matrix += map->matrix_stride[k];
                batch += map->batch_stride[k];
                if (index[k] < map->shape.dims[k]) {
                    break;
                }
                matrix -= index[k] * map->matrix_stride[k];
                batch -= index[k] * map->batch_stride[k];
                index[k] = 0;
            }
        }
    }
}

spart_status spart_regridder_apply_workspace(spart_context *context,
                                             const spart_regridder *regridder, const spart_array *x,
                                             double *y, int64_t size_y, void *workspace,
                                             size_t workspace_bytes)
{
    return spart_regridder_apply_checked(context, regridder, x, y, size_y, workspace,
                                         workspace_bytes, 0);
}

spart_status spart_regridder_apply_checked(spart_context *context, const spart_regridder *regridder,
                                           const spart_array *x, double *y, int64_t size_y,
                                           void *workspace, size_t workspace_bytes,
                                           int workspace_is_ours)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || x == NULL || y == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "regridder, x and y must not be NULL");
    }
    int64_t num_leading = 0, num_vectors = 0;
    spart_status status = count_vectors(context, regridder, &x->shape, &num_leading, &num_vectors);
    if (status != SPART_OK) {
        return status;
    }
    int64_t expected = num_leading * spart_shape_size(&regridder->output.shape);
    if (size_y != expected) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "size_y = %lld, but y holds %lld values", (long long)size_y,
                          (long long)expected);
    }
    if (x->data == NULL && spart_shape_size(&x->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "x->data is NULL");
    }
    if (values_overlap(x->data, spart_shape_size(&x->shape), y, size_y)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "x and y overlap: y is written while x is still read (give y its own "
                          "memory)");
    }
    if (num_vectors == 0) {
        return SPART_OK;
    }
    if (regridder->device.on_device) {
        return spart_device_product(context, regridder, x, y, size_y, num_leading, num_vectors,
                                    workspace, workspace_bytes, workspace_is_ours);
    }
    int threads = spart_threads(context);
    size_t needed =
        workspace_doubles(regridder, num_leading, num_vectors, threads) * sizeof(double);
    if (workspace_bytes < needed || (needed > 0 && workspace == NULL)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "workspace of %zu bytes given, %zu needed (spart_regridder_workspace_"
                          "size)",
                          workspace_bytes, needed);
    }
    if (!packing_needed(num_vectors)) {
        spart_host_csr_product(&regridder->csr, &regridder->plan, x->data, 1, y, NULL, threads,
                               NULL);
        return SPART_OK;
    }
    if (workspace == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "workspace is NULL");
    }
    double *free_space = first_aligned(workspace);
    const double *packed_x = x->data;
    if (!lies_interleaved(&regridder->input, num_leading)) {
        repack(&regridder->input, num_leading, x->data, NULL, free_space, threads);
        packed_x = free_space;
        free_space += regridder->csr.num_columns * num_vectors;
    }
    if (output_written_in_place(regridder)) {
        spart_batch_layout in_place = {1, regridder->csr.num_rows};
        spart_host_csr_product(&regridder->csr, &regridder->plan, packed_x, num_vectors, y,
                               &in_place, threads, free_space);
        return SPART_OK;
    }
    if (output_lies_interleaved(regridder, num_leading)) {
        spart_batch_layout interleaved = {num_vectors, 1};
        spart_host_csr_product(&regridder->csr, &regridder->plan, packed_x, num_vectors, y,
                               &interleaved, threads, free_space);
        return SPART_OK;
    }
    double *packed_y = free_space;
    double *lanes = packed_y + regridder->csr.num_rows * num_vectors;
    spart_batch_layout interleaved = {num_vectors, 1};
    spart_host_csr_product(&regridder->csr, &regridder->plan, packed_x, num_vectors, packed_y,
                           &interleaved, threads, lanes);
    repack(&regridder->output, num_leading, NULL, y, packed_y, threads);
    return SPART_OK;
}

spart_status spart_regridder_apply(spart_context *context, const spart_regridder *regridder,
                                   const spart_array *x, double *y, int64_t size_y)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (regridder != NULL && regridder->device.on_device) {
        return spart_device_apply(context, regridder, x, y, size_y);
    }
    size_t bytes = 0;
    spart_status status =
        regridder != NULL && x != NULL
            ? spart_regridder_workspace_size(context, regridder, &x->shape, &bytes)
            : SPART_OK;
    if (status != SPART_OK) {
        return status;
    }
    void *workspace = NULL;
    if (bytes > 0) {
        workspace = spart_alloc(&context->allocator, bytes, 1);
        if (workspace == NULL) {
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                              "apply: could not allocate %zu bytes of workspace", bytes);
        }
    }
    status = spart_regridder_apply_workspace(context, regridder, x, y, size_y, workspace, bytes);
    spart_free(&context->allocator, workspace);
    return status;
}
