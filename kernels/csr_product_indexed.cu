/*
 * kernels/csr_product_indexed.cu: the one-vector product Y = A x of a CSR
 * matrix that carries a short-row index (g <= 2, rows of at most 255
 * entries, no long rows; spart_device_short_rows): one byte a row and
 * every 256th row start, read instead of the int64 row pointers, which
 * saves 7 bytes of every row's 8 (product_indexed_rows). A warp takes a
 * block of 256 rows; its row groups sum them as kernels/csr_row_sum.cuh
 * says, the same sums in the same order as kernels/csr_product.cu (and
 * host/csr_product.c), so the same bits.
 *
 * Everything is enqueued on the caller's stream; nothing synchronises,
 * allocates or uses atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "csr_product.cuh"
#include "csr_row_sum.cuh"
#include "device/device_internal.h"
#include "launch.cuh"

namespace
{

using spart_launch::blocks_for;
using spart_launch::launch;
using spart_launch::threads_per_block;
using spart_product::store_row;
using spart_rows::group_of_thread;
using spart_rows::row_group;
using spart_rows::rows_sum;
using spart_rows::vector_layout;

/* The same for the short-row index's kernel (group size 1 or 2): 2
 * blocks (up to 128 registers; it takes 80) and 1 block were equally
 * fast on the ESIS-scale transpose shape, 8 % faster than the group size
 * read at run time without the bound. */
constexpr int min_blocks_indexed = 2;

/* Rows of a matrix with a short-row index (one vector; no long rows):
 * each warp takes a block of SPART_DEVICE_SHORT_ROW_BLOCK rows at a time.
 * Its lanes read the block's lengths (8 bytes a lane) and its first
 * entry, scan the lengths into row starts in shared memory, and the
 * warp's row groups then sum the block's rows ROWS at a time with
 * rows_sum, the rows of one step neighbours across the groups (row
 * first + r * groups + group), as the row-pointer path has them. */
constexpr int index_block = SPART_DEVICE_SHORT_ROW_BLOCK;

template <typename Value, typename Column, int G, int ROWS, int UNROLL>
__global__ void __launch_bounds__(threads_per_block, min_blocks_indexed)
    product_indexed_rows(spart_device_csr matrix, spart_device_short_rows index,
                         const Column *__restrict__ columns, const Value *__restrict__ values,
                         const double *__restrict__ x, double *__restrict__ y)
{
    __shared__ int row_starts[threads_per_block / 32][index_block + 1];
    const row_group group = group_of_thread(G);
    const int warp_lane = (int)(threadIdx.x & 31u);
    const int warp_in_block = (int)(threadIdx.x / 32);
    const int groups = 32 / group.size;
    const int group_in_warp = warp_lane / group.size;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    const int64_t num_blocks = (matrix.num_rows + index_block - 1) / index_block;
    const uint64_t *words = reinterpret_cast<const uint64_t *>(index.row_lengths);
    int *starts = row_starts[warp_in_block];
    const vector_layout one = {1, 1, 1, 1, 1}; /* one vector: x[column], y[row] */
    for (int64_t b = (int64_t)blockIdx.x * (blockDim.x / 32) + warp_in_block; b < num_blocks;
         b += warps) {
        const uint64_t word = words[b * (index_block / 8) + warp_lane];
        const int64_t block_start = index.block_starts[b];
        spart_rows::scan_short_row_starts(word, warp_lane, starts);
        __syncwarp();
        for (int first = 0; first < index_block; first += ROWS * groups) {
            int64_t begin[ROWS], end[ROWS];
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int local = first + r * groups + group_in_warp;
                begin[r] = block_start + starts[local];
                end[r] = block_start + starts[local + 1];
            }
            double sum[ROWS][1];
            rows_sum<Value, Column, 1, ROWS, UNROLL>(columns, values, begin, end, group, x, one, 0,
                                                     1, sum);
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int64_t row = b * index_block + first + r * groups + group_in_warp;
                if (row < matrix.num_rows) {
                    store_row<1>(group, sum[r], 1, one, row, 0, y);
                }
            }
        }
        __syncwarp(); /* the starts are read before the next block's overwrite them */
    }
}

/* One vector through the short-row index: four rows a group, two entries
 * a lane per round (the row-pointer path's shape for g < 16), the group
 * size (1 or 2) fixed at compile time. */
template <typename Value, typename Column>
cudaError_t launch_indexed(const spart_device_csr &matrix, const spart_device_short_rows &index,
                           const Column *columns, const Value *values, const double *x, double *y,
                           cudaStream_t stream)
{
    if (matrix.num_rows == 0) {
        return cudaSuccess;
    }
    const int64_t index_blocks = (matrix.num_rows + index_block - 1) / index_block;
    const dim3 grid((unsigned)blocks_for(index_blocks, threads_per_block / 32));
    if (matrix.group_size == 1) {
        return launch(product_indexed_rows<Value, Column, 1, 4, 2>, grid, stream, matrix, index,
                      columns, values, x, y);
    }
    return launch(product_indexed_rows<Value, Column, 2, 4, 2>, grid, stream, matrix, index,
                  columns, values, x, y);
}

cudaError_t launch_indexed_for_types(const spart_device_csr &matrix,
                                     const spart_device_short_rows &index, const double *x,
                                     double *y, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_indexed(matrix, index, matrix.columns32, matrix.values64, x, y, stream);
    }
    if (matrix.values64 != nullptr) {
        return launch_indexed(matrix, index, matrix.columns64, matrix.values64, x, y, stream);
    }
    if (matrix.columns32 != nullptr) {
        return launch_indexed(matrix, index, matrix.columns32, matrix.values32, x, y, stream);
    }
    return launch_indexed(matrix, index, matrix.columns64, matrix.values32, x, y, stream);
}

} // namespace

extern "C" int spart_cuda_csr_product_indexed(const spart_device_csr *matrix,
                                              const spart_device_short_rows *index, const double *x,
                                              double *y, void *stream)
{
    if (matrix->group_size > 2 || matrix->num_long_chunks > 0) {
        return cudaErrorInvalidValue; /* never: the index is made for these alone */
    }
    return launch_indexed_for_types(*matrix, *index, x, y, static_cast<cudaStream_t>(stream));
}
