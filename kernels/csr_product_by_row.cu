/*
 * kernels/csr_product_by_row.cu: Y = A X for a matrix planned by row
 * (src/operator/csr_product_by_row.h): each row by its own group size, in
 * the order of kernels/csr_row_sum.cuh, twin of host/csr_product.c (which
 * takes the same g row by row), so the same bits.
 *
 * One launch: blocks [first_block[b], first_block[b + 1]) take bin b's
 * rows, read through the bin's list of row indices, with the bin's group
 * size fixed at compile time and its own shape (rows a group, entries a
 * lane a round), grid-stride within the bin; blockIdx.y walks tiles of
 * vectors. The long rows (bin 7) go to the long-row pass of
 * kernels/csr_product.cu. The bins themselves are made once by a stable
 * radix sort of the rows on their bin (CUB).
 *
 * Everything is enqueued on the caller's stream; nothing synchronises,
 * allocates or uses atomics.
 */
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include <stdint.h>

#include "csr_product.cuh"
#include "csr_row_sum.cuh"
#include "launch.cuh"
#include "operator/csr_product_by_row.h"

namespace
{

using spart_launch::blocks_for;
using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch;
using spart_launch::launch_items;
using spart_launch::max_blocks_items;
using spart_launch::max_blocks_y;
using spart_launch::threads_per_block;
using spart_product::store_row;
using spart_rows::group_of_thread;
using spart_rows::row_group;
using spart_rows::rows_sum;
using spart_rows::vector_layout;

constexpr int bins = 8;
constexpr int summed_bins = 7; /* bin 7, the long rows, is summed apart */

__host__ __device__ constexpr int bin_of(int64_t length, int64_t chunk_length)
{
    return length > chunk_length ? 7
           : length >= 256       ? 6
           : length >= 32        ? 5
           : length >= 16        ? 4
           : length >= 8         ? 3
           : length >= 4         ? 2
           : length >= 2         ? 1
                                 : 0;
}

/* The shape of each bin for one vector (TILE 1) and for tiles of 4 or 8:
 * group size, rows a group, entries a lane per round. Rows of a bin hold
 * g to 2g - 1 entries (bins 0-4): one or two a lane, one round; bin 5 up
 * to 8 a lane; bin 6 up to 128 a lane, eight at a time. */
__host__ __device__ constexpr int bin_group(int bin)
{
    return bin >= 5 ? 32 : 1 << bin;
}

template <int TILE> __host__ __device__ constexpr int bin_rows_per_group(int bin)
{
    return TILE > 1 ? 1 : bin <= 3 ? 4 : bin <= 5 ? 2 : 1;
}

template <int TILE> __host__ __device__ constexpr int bin_unroll(int bin)
{
    /* Tiles hold TILE values of x an entry: two entries a round, as the
     * mean rule's tile kernels (kernels/csr_product.cu), within the 64
     * registers of 4 blocks a multiprocessor. */
    return TILE > 1 ? (bin == 0 ? 1 : 2) : bin == 0 ? 1 : bin <= 4 ? 2 : bin == 5 ? 4 : 8;
}

/* Where each bin's rows and blocks start (kernel parameter). */
struct bin_launch {
    int64_t start[bins + 1];
    unsigned first_block[summed_bins + 1];
};

/* Bin `BIN`'s rows for the calling block (its bin's block block of
 * blocks), vectors t0 .. t0 + width - 1. */
template <typename Value, typename Column, int TILE, int BIN, bool X_TILES>
__device__ __forceinline__ void
sum_bin(const spart_device_csr &matrix, const Column *__restrict__ columns,
        const Value *__restrict__ values, const int32_t *__restrict__ list, int64_t count,
        int64_t block, int64_t blocks, const double *__restrict__ x, const vector_layout &layout,
        int64_t t0, int width, double *__restrict__ y)
{
    constexpr int G = bin_group(BIN);
    constexpr int ROWS = bin_rows_per_group<TILE>(BIN);
    constexpr int UNROLL = bin_unroll<TILE>(BIN);
    const row_group group = group_of_thread(G);
    const int64_t groups_per_block = threads_per_block / G;
    const int64_t first = block * groups_per_block + threadIdx.x / G;
    const int64_t stride = blocks * groups_per_block;
    for (int64_t base = first; base < count; base += stride * ROWS) {
        int64_t begin[ROWS], end[ROWS];
        int32_t row[ROWS]; /* -1: none (rows < 2^31 under this plan) */
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int64_t at = base + r * stride;
            row[r] = at < count ? list[at] : -1;
            begin[r] = row[r] >= 0 ? matrix.row_ptr[row[r]] : 0;
            end[r] = row[r] >= 0 ? matrix.row_ptr[row[r] + 1] : 0;
        }
        double sum[ROWS][TILE];
        rows_sum<Value, Column, TILE, ROWS, UNROLL, X_TILES>(columns, values, begin, end, group, x,
                                                             layout, t0, width, sum);
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            if (row[r] >= 0) {
                store_row<TILE>(group, sum[r], width, layout, row[r], t0, y);
            }
        }
    }
}

/* The launch bound: 4 blocks a multiprocessor (64 registers a thread, as
 * the mean rule's fixed-g kernels). A bound of 2 (up to 128 registers, no
 * spills in the bins of four rows a group) was measured beside it for one
 * vector (docs/dev/csr-matrix-notes.md, round 2) and was no faster (the
 * band 1.24x slower), so it was withdrawn. */
template <typename Value, typename Column, int TILE, bool X_TILES>
__global__ void __launch_bounds__(threads_per_block, 4)
    product_by_row(spart_device_csr matrix, const Column *__restrict__ columns,
                   const Value *__restrict__ values, const int32_t *__restrict__ bin_rows,
                   bin_launch launch_bins, const double *__restrict__ x, vector_layout layout,
                   int64_t num_vectors, double *__restrict__ y)
{
    int bin = 0;
    while (bin + 1 < summed_bins && blockIdx.x >= launch_bins.first_block[bin + 1]) {
        bin++;
    }
    const int64_t block = blockIdx.x - launch_bins.first_block[bin];
    const int64_t blocks = launch_bins.first_block[bin + 1] - launch_bins.first_block[bin];
    const int32_t *list = bin_rows + launch_bins.start[bin];
    const int64_t count = launch_bins.start[bin + 1] - launch_bins.start[bin];
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const int64_t t0 = tile * TILE;
        const int width = num_vectors - t0 < TILE ? (int)(num_vectors - t0) : TILE;
        switch (bin) {
        case 0:
            sum_bin<Value, Column, TILE, 0, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        case 1:
            sum_bin<Value, Column, TILE, 1, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        case 2:
            sum_bin<Value, Column, TILE, 2, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        case 3:
            sum_bin<Value, Column, TILE, 3, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        case 4:
            sum_bin<Value, Column, TILE, 4, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        case 5:
            sum_bin<Value, Column, TILE, 5, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        default:
            sum_bin<Value, Column, TILE, 6, X_TILES>(matrix, columns, values, list, count, block,
                                                     blocks, x, layout, t0, width, y);
            break;
        }
    }
}

template <int TILE> int64_t rows_per_block(int bin)
{
    return (int64_t)(threads_per_block / bin_group(bin)) * bin_rows_per_group<TILE>(bin);
}

template <typename Value, typename Column, int TILE, bool X_TILES>
cudaError_t launch_by_row(const spart_device_csr &matrix, const Column *columns,
                          const Value *values, const int32_t *bin_rows, const int64_t *bin_start,
                          const double *x, const vector_layout &layout, int64_t num_vectors,
                          double *y, cudaStream_t stream)
{
    bin_launch b;
    unsigned total = 0;
    for (int k = 0; k <= bins; k++) {
        b.start[k] = bin_start[k];
    }
    for (int k = 0; k < summed_bins; k++) {
        b.first_block[k] = total;
        const int64_t count = bin_start[k + 1] - bin_start[k];
        int64_t blocks = count > 0 ? blocks_for(count, rows_per_block<TILE>(k)) : 0;
        blocks = blocks < max_blocks_items ? blocks : max_blocks_items;
        total += (unsigned)blocks;
    }
    b.first_block[summed_bins] = total;
    if (total == 0) {
        return cudaSuccess;
    }
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    const dim3 grid(total, (unsigned)(tiles < max_blocks_y ? tiles : max_blocks_y));
    return launch(product_by_row<Value, Column, TILE, X_TILES>, grid, stream, matrix, columns,
                  values, bin_rows, b, x, layout, num_vectors, y);
}

template <int TILE, bool X_TILES = false>
cudaError_t launch_for_types(const spart_device_csr &matrix, const int32_t *bin_rows,
                             const int64_t *bin_start, const double *x, const vector_layout &layout,
                             int64_t num_vectors, double *y, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_by_row<double, int32_t, TILE, X_TILES>(matrix, matrix.columns32,
                                                             matrix.values64, bin_rows, bin_start,
                                                             x, layout, num_vectors, y, stream);
    }
    if (matrix.values64 != nullptr) {
        return launch_by_row<double, int64_t, TILE, X_TILES>(matrix, matrix.columns64,
                                                             matrix.values64, bin_rows, bin_start,
                                                             x, layout, num_vectors, y, stream);
    }
    if (matrix.columns32 != nullptr) {
        return launch_by_row<float, int32_t, TILE, X_TILES>(matrix, matrix.columns32,
                                                            matrix.values32, bin_rows, bin_start, x,
                                                            layout, num_vectors, y, stream);
    }
    return launch_by_row<float, int64_t, TILE, X_TILES>(matrix, matrix.columns64, matrix.values32,
                                                        bin_rows, bin_start, x, layout, num_vectors,
                                                        y, stream);
}

__global__ void __launch_bounds__(threads_per_block)
    bin_keys(const int64_t *__restrict__ row_ptr, int64_t rows, int64_t chunk_length,
             uint8_t *__restrict__ keys, int32_t *__restrict__ ids)
{
    for (int64_t r = first_item(); r < rows; r += item_stride()) {
        keys[r] = (uint8_t)bin_of(row_ptr[r + 1] - row_ptr[r], chunk_length);
        ids[r] = (int32_t)r;
    }
}

/* start[k] = the first position of sorted keys >= k (k = 0 .. bins),
 * each written once: at position i for the bins between keys[i - 1] and
 * keys[i], at the end for those above the last key. */
__global__ void __launch_bounds__(threads_per_block)
    bin_bounds(const uint8_t *__restrict__ keys, int64_t rows, int64_t *__restrict__ start)
{
    for (int64_t i = first_item(); i <= rows; i += item_stride()) {
        const int low = i == 0 ? -1 : (int)keys[i - 1];
        const int high = i == rows ? bins : (int)keys[i];
        for (int k = low + 1; k <= high; k++) {
            start[k] = i;
        }
    }
}

size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

} // namespace

extern "C" size_t spart_cuda_row_bins_workspace(int64_t rows)
{
    size_t sort = 0;
    (void)cub::DeviceRadixSort::SortPairs(nullptr, sort, (const uint8_t *)nullptr,
                                          (uint8_t *)nullptr, (const int32_t *)nullptr,
                                          (int32_t *)nullptr, (int)rows, 0, 3);
    const size_t n = (size_t)(rows > 0 ? rows : 1);
    return round_up(sort) + 2 * round_up(n) + round_up(n * sizeof(int32_t));
}

extern "C" int spart_cuda_row_bins(const int64_t *row_ptr, int64_t rows, int64_t chunk_length,
                                   int32_t *bin_rows, int64_t *bin_start, void *workspace,
                                   size_t bytes, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    size_t sort = 0;
    cudaError_t error = cub::DeviceRadixSort::SortPairs(
        nullptr, sort, (const uint8_t *)nullptr, (uint8_t *)nullptr, (const int32_t *)nullptr,
        (int32_t *)nullptr, (int)rows, 0, 3, s);
    if (error != cudaSuccess) {
        return error;
    }
    const size_t n = (size_t)(rows > 0 ? rows : 1);
    char *space = static_cast<char *>(workspace);
    void *temporary = space;
    uint8_t *keys_in = reinterpret_cast<uint8_t *>(space + round_up(sort));
    uint8_t *keys_out = keys_in + round_up(n);
    int32_t *ids = reinterpret_cast<int32_t *>(keys_out + round_up(n));
    if (bytes < round_up(sort) + 2 * round_up(n) + round_up(n * sizeof(int32_t))) {
        return cudaErrorInvalidValue;
    }
    error = launch_items(bin_keys, rows, s, row_ptr, rows, chunk_length, keys_in, ids);
    if (error == cudaSuccess && rows > 0) {
        error = cub::DeviceRadixSort::SortPairs(temporary, sort, keys_in, keys_out, ids, bin_rows,
                                                (int)rows, 0, 3, s);
    }
    if (error == cudaSuccess) {
        error = launch_items(bin_bounds, rows + 1, s, (const uint8_t *)keys_out, rows, bin_start);
    }
    return error;
}

extern "C" int spart_cuda_csr_product_by_row(const spart_device_csr *matrix,
                                             const int32_t *bin_rows, const int64_t *bin_start,
                                             const double *x, int64_t num_vectors, double *x_tiles,
                                             double *y, double *chunk_sums, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (num_vectors <= 0) {
        return cudaSuccess;
    }
    const vector_layout c_order = {1, matrix->num_columns, 1, matrix->num_rows,
                                   matrix->num_columns};
    cudaError_t error;
    if (x_tiles != nullptr) {
        error = (cudaError_t)spart_cuda_pack_tiles(x, matrix->num_columns, num_vectors, x_tiles,
                                                   stream);
        const vector_layout in_tiles = {8, 1, 1, matrix->num_rows, matrix->num_columns};
        if (error == cudaSuccess) {
            error = launch_for_types<8, true>(*matrix, bin_rows, bin_start, x_tiles, in_tiles,
                                              num_vectors, y, s);
        }
        if (error != cudaSuccess || matrix->num_long_chunks == 0) {
            return error;
        }
        return spart_cuda_csr_product_long_rows(matrix, x_tiles, 1, num_vectors, y, chunk_sums,
                                                stream);
    }
    if (num_vectors == 1) {
        error = launch_for_types<1>(*matrix, bin_rows, bin_start, x, c_order, 1, y, s);
    } else if (num_vectors <= 4) {
        error = launch_for_types<4>(*matrix, bin_rows, bin_start, x, c_order, num_vectors, y, s);
    } else {
        error = launch_for_types<8>(*matrix, bin_rows, bin_start, x, c_order, num_vectors, y, s);
    }
    if (error != cudaSuccess || matrix->num_long_chunks == 0) {
        return error;
    }
    return spart_cuda_csr_product_long_rows(matrix, x, 0, num_vectors, y, chunk_sums, stream);
}
