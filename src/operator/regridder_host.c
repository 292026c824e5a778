/*
 * src/operator/regridder_host.c: the host's table of operations
 * (operator_ops.h): assembly, transposes and products of a regridder whose
 * arrays are host memory, with OpenMP (host/csr_assemble.c,
 * host/csr_product*.c). The product: x is leading axes + the input shape;
 * its matrix axes give the column, its leading and batch axes the vector.
 * When there is one vector (no leading or batch axes) x and y are the
 * column and the result as they lie. Otherwise the kernels read
 * interleaved vectors X[column * T + vector]: x is used as it lies when it
 * is laid out so already (batch axes after the matrix axes, no leading
 * axes), else packed into the workspace. The product writes y as it lies
 * when the output has no batch axes (its vectors one after another, as
 * leading axes lay them out) or lies interleaved like x; otherwise into
 * interleaved vectors Y, unpacked into y after.
 */
#include <stdint.h>
#include <string.h>

#include "core/shape.h"
#include "operator/operator_ops.h"

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

static size_t host_workspace_bytes(const spart_regridder *regridder, int64_t num_leading,
                                   int64_t num_vectors, int threads)
{
    return workspace_doubles(regridder, num_leading, num_vectors, threads) * sizeof(double);
}

static spart_status host_product(spart_context *context, const spart_regridder *regridder,
                                 const spart_array *x, double *y, int64_t size_y,
                                 int64_t num_leading, int64_t num_vectors, void *workspace,
                                 int workspace_is_ours)
{
    (void)size_y, (void)workspace_is_ours;
    int threads = spart_threads(context);
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

void spart_regridder_index_short_rows(spart_regridder *regridder, int threads)
{
    const spart_csr *csr = &regridder->csr;
    int64_t rows = csr->num_rows;
    if (!regridder->owns_arrays || rows == 0 || regridder->plan.group_size > 2 ||
        regridder->plan.chunk_length < 255) {
        return;
    }
    int64_t longest = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : longest)
    for (int64_t r = 0; r < rows; r++) {
        int64_t length = csr->row_ptr[r + 1] - csr->row_ptr[r];
        longest = length > longest ? length : longest;
    }
    if (longest > 255) {
        return;
    }
    int64_t blocks = (rows + SPART_SHORT_ROW_BLOCK - 1) / SPART_SHORT_ROW_BLOCK;
    uint8_t *lengths = spart_alloc(&regridder->allocator, (size_t)rows, sizeof(uint8_t));
    int64_t *starts = spart_alloc(&regridder->allocator, (size_t)blocks, sizeof(int64_t));
    if (lengths == NULL || starts == NULL) { /* optional: go without */
        spart_free(&regridder->allocator, lengths);
        spart_free(&regridder->allocator, starts);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        lengths[r] = (uint8_t)(csr->row_ptr[r + 1] - csr->row_ptr[r]);
        if (r % SPART_SHORT_ROW_BLOCK == 0) {
            starts[r / SPART_SHORT_ROW_BLOCK] = csr->row_ptr[r];
        }
    }
    regridder->short_row_lengths = lengths;
    regridder->short_row_starts = starts;
    regridder->plan.row_lengths = lengths;
    regridder->plan.block_starts = starts;
}

static void host_index_rows(spart_regridder *regridder, int threads)
{
    spart_regridder_index_short_rows(regridder, threads);
}

static spart_status host_assemble(spart_context *context, const spart_assembly_source *source,
                                  int64_t cells_input, int64_t cells_output,
                                  spart_value_type value_type, spart_regridder *regridder)
{
    (void)cells_input, (void)cells_output;
    spart_status status = spart_host_csr_assemble(
        &context->allocator, source, regridder->csr.num_rows, regridder->csr.num_columns,
        value_type, spart_threads(context), &regridder->csr);
    if (status != SPART_OK) {
        return spart_fail(context, status,
                          "regridder: could not allocate the CSR arrays for %lld entries",
                          (long long)source->offsets[source->num_elements]);
    }
    return SPART_OK;
}

static spart_status host_transpose(spart_context *context, const spart_regridder *regridder,
                                   spart_regridder *transposed)
{
    spart_status status = spart_host_csr_transpose(&regridder->allocator, &regridder->csr,
                                                   spart_threads(context), &transposed->csr);
    if (status != SPART_OK) {
        return spart_fail(context, status,
                          "transpose: could not allocate the CSR arrays for %lld entries",
                          (long long)regridder->csr.num_entries);
    }
    return SPART_OK;
}

/* The conservative transpose's values on the host, scaled here. */
static spart_status host_conservative(spart_context *context, const spart_regridder *exact,
                                      const spart_conservative_scaling *scaling,
                                      spart_regridder *conservative)
{
    size_t n = (size_t)exact->csr.num_entries;
    spart_csr *csr = &conservative->csr;
    if (exact->csr.values32 != NULL) {
        csr->values32 = spart_alloc(&conservative->allocator, n, sizeof(float));
    } else {
        csr->values64 = spart_alloc(&conservative->allocator, n, sizeof(double));
    }
    if (csr->values32 == NULL && csr->values64 == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "conservative transpose: could not allocate %zu values", n);
    }
    spart_conservative_scale_entries(scaling->decoder, &exact->csr, scaling->factor_input,
                                     scaling->volume_output, spart_threads(context), csr);
    return SPART_OK;
}

static spart_status host_workspace_allocate(spart_context *context,
                                            const spart_regridder *regridder, size_t bytes,
                                            void **workspace)
{
    (void)regridder;
    *workspace = spart_alloc(&context->allocator, bytes, 1);
    if (*workspace == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "apply: could not allocate %zu bytes of workspace", bytes);
    }
    return SPART_OK;
}

static spart_status host_workspace_free(spart_context *context, const spart_regridder *regridder,
                                        void *workspace)
{
    (void)regridder;
    spart_free(&context->allocator, workspace);
    return SPART_OK;
}

/* A regridder that owns its arrays frees them all; a conservative
 * transpose owns its values only (the pattern is its exact transpose's). */
static void host_release(spart_regridder *regridder)
{
    const spart_allocator *allocator = &regridder->allocator;
    if (regridder->owns_arrays) {
        spart_csr_release(allocator, &regridder->csr);
        spart_free(allocator, regridder->short_row_lengths);
        spart_free(allocator, regridder->short_row_starts);
    } else {
        spart_free(allocator, regridder->csr.values32);
        spart_free(allocator, regridder->csr.values64);
    }
}

const spart_operator_ops spart_operator_host_ops = {
    .name = "host",
    .on_device = 0,
    .assemble = host_assemble,
    .index_rows = host_index_rows,
    .transpose = host_transpose,
    .conservative = host_conservative,
    .workspace_bytes = host_workspace_bytes,
    .product = host_product,
    .workspace_allocate = host_workspace_allocate,
    .workspace_free = host_workspace_free,
    .release = host_release,
};
