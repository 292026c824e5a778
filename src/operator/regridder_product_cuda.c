/*
 * src/operator/regridder_product_cuda.c: a device regridder's product.
 * One launch for one vector or for vectors one after the other (leading
 * axes), with x first copied into tiles of 8 interleaved vectors for a
 * large batch (x_tiles_needed); where batch axes are declared, x packed
 * into interleaved vectors, multiplied, y unpacked (kernels/csr_product.cu,
 * kernels/csr_product_tiles.cu).
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_internal.h"
#include "device/device_select.h"
#include "operator/csr_product_by_row.h"
#include "operator/regridder_cuda.h"

/* Bytes rounded up to whole 256-byte blocks (cudaMalloc's alignment). */
static size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* Whether vectors must be packed into interleaved ones for the product:
 * only when a side declares batch axes. Leading axes alone give vectors one
 * after the other in C order, which the product reads and writes as they
 * lie. */
static int packing_needed(const spart_regridder *regridder, int64_t num_vectors)
{
    return num_vectors != 1 &&
           (regridder->input.num_batch != 1 || regridder->output.num_batch != 1);
}

/* Bytes of x at and above which a batch of vectors in C order is read in
 * tiles (below). */
static const double x_tile_bytes = 8.0 * 1024 * 1024;

/* Whether vectors one after the other in C order (leading axes alone) are
 * first copied into tiles of 8 interleaved vectors for the product
 * (spart_cuda_csr_product_c_order): for 5 or more vectors (the product
 * takes them 8 at a time) over a matrix of short rows
 * (spart_device_rows_are_short: no long rows, fewer than 64 entries a row
 * on average), or whose x fills 8 MiB or more. Read as they lie, each
 * term gathers its x from 8 planes, a 32-byte sector each for 8 bytes
 * used; in tiles, from one 64-byte line, at the price of one more pass
 * over x. Short rows are then summed by kernels of their own
 * (kernels/csr_product_tiles.cu). Measured on an H200 (docs/benchmarks.md in git history,
 * "Eight vectors by quads of lanes"), 8 vectors of the CTIS operators: a
 * and its transpose (short rows, x of 4 and 1.4 MB) 0.055 -> 0.038-0.042
 * and 0.062 -> 0.032-0.035 ms in tiles, b and its transpose (short rows,
 * x of 67 and 18 MB) 0.486 -> 0.373-0.375 and 0.634 -> 0.256-0.266 ms; c
 * and its transpose (rows of 1700 and 256 entries, x of 2.4 and 0.35 MB)
 * stay as they lie: in tiles they took 0.178 and 0.154 ms against 0.105
 * and 0.111 (the copy is not paid back where x stays in the caches and
 * rows are long). */
/* Bytes of x at and above which 2 to 4 vectors in C order are copied
 * into one tile of 4 interleaved vectors (spart_cuda_pack_x4) for the
 * product: vectors larger than the L2 cache (50 MB on an H200), whose
 * gathers each pull a 32-byte sector for 8 bytes used. In one tile the
 * sector serves all 4 vectors, at the price of one more pass over x
 * (reading F vectors, writing 4). docs/dev/esis-products-notes.md has the
 * measurements on the ESIS-scale operators. */
static const double x_four_bytes = 64.0 * 1024 * 1024;

static int x_tiles_needed(const spart_regridder *regridder, int64_t num_vectors)
{
    double x_bytes = (double)regridder->csr.num_columns * (double)num_vectors * sizeof(double);
    spart_device_csr matrix = spart_regridder_device_matrix(regridder);
    if (regridder->plan.row_rule == SPART_PLAN_BY_ROW && regridder->device.uniform_group == 0) {
        return num_vectors >= 5 && !packing_needed(regridder, num_vectors); /* always in tiles */
    }
    if (num_vectors >= 2 && num_vectors <= 4) {
        return !packing_needed(regridder, num_vectors) && x_bytes >= x_four_bytes;
    }
    return num_vectors >= 5 && !packing_needed(regridder, num_vectors) &&
           (x_bytes >= x_tile_bytes || spart_device_rows_are_short(&matrix));
}

/* Doubles of the tiles x is copied into where x_tiles_needed says. */
static size_t x_tiles_doubles(const spart_regridder *regridder, int64_t num_vectors)
{
    int64_t columns = regridder->csr.num_columns;
    if (regridder->plan.row_rule == SPART_PLAN_BY_ROW && regridder->device.uniform_group == 0) {
        return (size_t)((num_vectors + 7) / 8 * 8 * columns);
    }
    return (size_t)spart_device_x_tiles_doubles(num_vectors, columns);
}

size_t spart_device_workspace_bytes(const spart_regridder *regridder, int64_t num_vectors)
{
    size_t vectors = (size_t)(num_vectors > 0 ? num_vectors : 0);
    size_t bytes = round_up((size_t)regridder->device.num_long_chunks * vectors * sizeof(double));
    if (packing_needed(regridder, num_vectors)) {
        bytes += round_up((size_t)regridder->csr.num_columns * vectors * sizeof(double));
        bytes += round_up((size_t)regridder->csr.num_rows * vectors * sizeof(double));
    }
    if (x_tiles_needed(regridder, num_vectors)) {
        bytes += round_up(x_tiles_doubles(regridder, num_vectors) * sizeof(double));
    }
    return bytes;
}

spart_device_csr spart_regridder_device_matrix(const spart_regridder *regridder)
{
    const spart_csr *csr = &regridder->csr;
    const spart_regridder_device *device = &regridder->device;
    spart_device_csr matrix;
    memset(&matrix, 0, sizeof matrix);
    matrix.num_rows = csr->num_rows;
    matrix.num_columns = csr->num_columns;
    matrix.num_entries = csr->num_entries;
    matrix.row_ptr = csr->row_ptr;
    matrix.columns32 = csr->columns32;
    matrix.columns64 = csr->columns64;
    matrix.values64 = csr->values64;
    matrix.values32 = csr->values32;
    matrix.group_size =
        regridder->plan.row_rule == SPART_PLAN_BY_ROW && regridder->device.uniform_group > 0
            ? regridder->device.uniform_group
            : regridder->plan.group_size;
    matrix.chunk_length = regridder->plan.chunk_length;
    matrix.num_long_rows = device->num_long_rows;
    matrix.long_rows = device->long_rows;
    matrix.long_first_chunk = device->long_first_chunk;
    matrix.num_long_chunks = device->num_long_chunks;
    matrix.chunk_begin = device->chunk_begin;
    matrix.chunk_end = device->chunk_end;
    return matrix;
}

static spart_device_axis_map describe_axes(const spart_axis_map *map)
{
    spart_device_axis_map result;
    memset(&result, 0, sizeof result);
    result.ndim = map->shape.ndim;
    for (int k = 0; k < map->shape.ndim; k++) {
        result.dims[k] = map->shape.dims[k];
        result.matrix_stride[k] = map->matrix_stride[k];
        result.batch_stride[k] = map->batch_stride[k];
    }
    result.num_batch = map->num_batch;
    return result;
}

/* SPART_OK when `pointer` is memory the kernels on `device` may use
 * (src/device/device_select.h). */
static spart_status check_device_pointer(spart_context *context, const void *pointer, int device,
                                         const char *name)
{
    return spart_device_check_pointer(context, pointer, device, "device product", name);
}

/* The checks of a device product: the context's device is the
 * regridder's, and x, y and the workspace are its device memory. */
static spart_status check_device_product(spart_context *context, const spart_regridder *regridder,
                                         const spart_array *x, const double *y, int64_t size_y,
                                         const void *workspace, size_t needed,
                                         int workspace_is_ours)
{
    int device = regridder->device.cuda_device;
    if (context->cuda_device != device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the regridder lives on CUDA device %d but the context uses device %d "
                          "(spart_context_set_cuda_device)",
                          device, context->cuda_device);
    }
    spart_status status = SPART_OK;
    if (spart_shape_size(&x->shape) > 0) {
        status = check_device_pointer(context, x->data, device, "x->data");
    }
    if (status == SPART_OK && size_y > 0) {
        status = check_device_pointer(context, y, device, "y");
    }
    if (status == SPART_OK && needed > 0 && !workspace_is_ours) {
        status = check_device_pointer(context, workspace, device, "the workspace");
    }
    return status;
}

spart_status spart_device_product(spart_context *context, const spart_regridder *regridder,
                                  const spart_array *x, double *y, int64_t size_y,
                                  int64_t num_leading, int64_t num_vectors, void *workspace,
                                  int workspace_is_ours)
{
    size_t needed = spart_device_workspace_bytes(regridder, num_vectors);
    int previous = -1;
    spart_status status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    status = check_device_product(context, regridder, x, y, size_y, workspace, needed,
                                  workspace_is_ours);
    if (status != SPART_OK) {
        spart_device_leave(previous);
        return status;
    }
    spart_device_csr matrix = spart_regridder_device_matrix(regridder);
    void *stream = context->cuda_stream;
    size_t vectors = (size_t)num_vectors;
    char *free_space = workspace;
    double *chunk_sums = (double *)free_space;
    free_space += round_up((size_t)matrix.num_long_chunks * vectors * sizeof(double));
    int error = cudaSuccess;
    if (regridder->plan.row_rule == SPART_PLAN_BY_ROW && regridder->device.uniform_group == 0 &&
        !packing_needed(regridder, num_vectors)) {
        double *x_tiles = x_tiles_needed(regridder, num_vectors) ? (double *)free_space : NULL;
        error = spart_cuda_csr_product_by_row(&matrix, regridder->device.bin_rows,
                                              regridder->device.bin_start, x->data, num_vectors,
                                              x_tiles, y, chunk_sums, stream);
    } else if (num_vectors == 1 && regridder->device.short_row_lengths != NULL) {
        spart_device_short_rows index = {regridder->device.short_row_lengths,
                                         regridder->device.short_row_starts};
        error = spart_cuda_csr_product_indexed(&matrix, &index, x->data, y, stream);
    } else if (num_vectors == 1) {
        error = spart_cuda_csr_product(&matrix, x->data, 1, y, chunk_sums, stream);
    } else if (!packing_needed(regridder, num_vectors)) {
        double *x_tiles = x_tiles_needed(regridder, num_vectors) ? (double *)free_space : NULL;
        error = spart_cuda_csr_product_c_order(&matrix, x->data, num_vectors, x_tiles, y,
                                               chunk_sums, stream);
    } else {
        double *packed_x = (double *)free_space;
        free_space += round_up((size_t)matrix.num_columns * vectors * sizeof(double));
        double *packed_y = (double *)free_space;
        spart_device_axis_map input = describe_axes(&regridder->input);
        spart_device_axis_map output = describe_axes(&regridder->output);
        error = spart_cuda_pack(&input, num_leading, x->data, packed_x, stream);
        if (error == cudaSuccess) {
            error = spart_cuda_csr_product(&matrix, packed_x, num_vectors, packed_y, chunk_sums,
                                           stream);
        }
        if (error == cudaSuccess) {
            error = spart_cuda_unpack(&output, num_leading, packed_y, y, stream);
        }
    }
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error, "device product");
    }
    return SPART_OK;
}

spart_status spart_device_workspace_allocate(spart_context *context,
                                             const spart_regridder *regridder, size_t bytes,
                                             void **workspace)
{
    int previous = -1;
    *workspace = NULL;
    spart_status status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    cudaError_t error = cudaMallocAsync(workspace, bytes, (cudaStream_t)context->cuda_stream);
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        *workspace = NULL;
        return spart_device_failure(context, (int)error, "apply: allocating the device workspace");
    }
    return SPART_OK;
}

spart_status spart_device_workspace_free(spart_context *context, const spart_regridder *regridder,
                                         void *workspace)
{
    int previous = -1;
    spart_status status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    cudaError_t error = cudaFreeAsync(workspace, (cudaStream_t)context->cuda_stream);
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error, "apply: freeing the device workspace");
    }
    return SPART_OK;
}
