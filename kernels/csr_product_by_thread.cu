/*
 * kernels/csr_product_by_thread.cu: the one-vector product Y = A x of a
 * CSR matrix of group size g = 2, 4, 8 or 16 whose rows other than the
 * long ones hold about g entries or fewer (spart_device_rows_fit_one_round):
 * each row gets one thread instead of g lanes (product_rows_by_thread),
 * with the same operations in the same order as the groups of
 * kernels/csr_product.cu (and so as host/csr_product.c), so the same bits.
 * A warp loads the entries of 32 rows with coalesced loads, forms each
 * entry's term fma(v, x, +0.0), and each thread adds its row's terms in
 * the lanes' tree. Warps whose 32 rows do not all fit one round sum them
 * by groups. There a block takes 16/g of the long rows' chunks at once:
 * all its threads stage the chunks' values and x in shared memory, and 16
 * lanes, g a chunk, add them (sum_chunks_staged); kernels/csr_product.cu
 * adds the chunk sums after.
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

/* Blocks a multiprocessor for product_rows_by_thread with long rows (at
 * most 64 registers a thread): the chunks' blocks are many and each waits
 * at its barriers while its adding lanes work, so the more of them side
 * by side the better. */
constexpr int min_blocks_chunks = 4;

/* The same for its rows of 16 (up to 128 registers): a lane's 16 loads in
 * flight need more than 64 (ptxas spilled them, or kept them in local
 * memory, under the bound above or none). */
constexpr int min_blocks_sixteen = 2;

/* Rows of at most G entries, one thread a row (one vector, 2 <= G <= 16).
 * A row that fits one round of its G lanes gives lane l the single term
 * fma(v_l, x_l, +0.0) for l < length and +0.0 for the others; the thread
 * forms those G values and adds them in the lanes' tree (l += l + h for h
 * = G/2, ..., 1), the same operations as the group, so the same bits.
 *
 * Each warp takes 32 neighbouring rows at a time. When all of them hold
 * at most G entries their entries lie together, [begin of the first, end
 * of the last), at most 32 G: the warp loads them with coalesced loads
 * (lane k takes entries k, k + 32, ...), gathers x, forms every entry's
 * term fma(v, x, +0.0) (which does not depend on the lane that forms it)
 * into shared memory, and each thread then reads its row's terms there.
 * A warp thus sums 32 rows a trip to memory, where groups of G lanes sum
 * 4 x 32 / G. Term p lies at p + p / G, so that rows of exactly G entries
 * (thread t reads terms G t + l) fall in distinct banks.
 *
 * A warp whose rows are not all that short (a long row among them, or one
 * of more than G entries) sums them as product_rows does, by groups of G
 * lanes, four rows a group, two entries a lane a round; long rows are
 * left to their chunks. Blocks [0, chunk_blocks) take the long rows'
 * chunks, 16 / G chunks a block (sum_chunks_staged). */
template <int G> __device__ __forceinline__ int staged_slot(int term)
{
    return term + term / G;
}

template <typename Value, typename Column, int G>
__device__ __forceinline__ void
sum_rows_by_thread(const Column *__restrict__ columns, const Value *__restrict__ values,
                   const double *__restrict__ x, int64_t begin, int64_t end, int64_t row,
                   int64_t num_rows, double *__restrict__ staged, double *__restrict__ y)
{
    const unsigned warp = 0xffffffffu;
    const int warp_lane = (int)(threadIdx.x & 31u);
    const int64_t warp_begin = __shfl_sync(warp, begin, 0);
    const int total = (int)(__shfl_sync(warp, end, 31) - warp_begin);
    if (total > 0) {
        /* Every load issued without a branch (a slot past the rows reads
         * the first entry; its term is not stored), as in round_sum. */
        double value[G];
        Column column[G];
        double xv[G];
#pragma unroll
        for (int i = 0; i < G; i++) {
            const int term = warp_lane + 32 * i;
            const int64_t at = warp_begin + (term < total ? term : 0);
            value[i] = (double)values[at];
            column[i] = columns[at];
        }
#pragma unroll
        for (int i = 0; i < G; i++) {
            xv[i] = x[(int64_t)column[i]];
        }
#pragma unroll
        for (int i = 0; i < G; i++) {
            const int term = warp_lane + 32 * i;
            if (term < total) {
                staged[staged_slot<G>(term)] = __fma_rn(value[i], xv[i], 0.0);
            }
        }
        __syncwarp();
    }
    const int length = (int)(end - begin);
    const int start = (int)(begin - warp_begin);
    double lane[G];
#pragma unroll
    for (int l = 0; l < G; l++) {
        lane[l] = l < length ? staged[staged_slot<G>(start + l)] : 0.0;
    }
    /* The tree's levels h = G / 2, ..., 1 with a constant bound on the
     * inner loop, so that nvcc unrolls both and lane[] stays in registers
     * (with the bound h it kept a lane[] of 16 in local memory). */
#pragma unroll
    for (int level = 1; level < G; level *= 2) {
        const int h = G / (2 * level); /* G / 2, ..., 1 */
#pragma unroll
        for (int l = 0; l < G / 2; l++) {
            if (l < h) {
                lane[l] = __dadd_rn(lane[l], lane[l + h]);
            }
        }
    }
    if (row < num_rows) {
        y[row] = lane[0];
    }
    __syncwarp(); /* the terms are read before the next rows' overwrite them */
}

/* The warp's 32 rows (first_row + lane, their ranges [begin, end) in the
 * lanes) by groups of G lanes, four rows a group, as product_rows sums
 * them; rows past the matrix and long rows are not written. */
template <typename Value, typename Column, int G>
__device__ __forceinline__ void
sum_rows_by_groups(const spart_device_csr &matrix, const Column *__restrict__ columns,
                   const Value *__restrict__ values, const double *__restrict__ x, int64_t begin,
                   int64_t end, int64_t first_row, double *__restrict__ y)
{
    constexpr int ROWS = 4;
    constexpr int groups = 32 / G;
    const unsigned warp = 0xffffffffu;
    const row_group group = group_of_thread(G);
    const int group_in_warp = (int)(threadIdx.x & 31u) / G;
    const vector_layout one = {1, 1, 1, 1, 1}; /* one vector: x[column], y[row] */
    for (int first = 0; first < 32; first += ROWS * groups) {
        int64_t row_begin[ROWS], row_end[ROWS];
        bool mine[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int local = first + r * groups + group_in_warp;
            const int64_t b = __shfl_sync(warp, begin, local & 31);
            const int64_t e = __shfl_sync(warp, end, local & 31);
            mine[r] =
                local < 32 && first_row + local < matrix.num_rows && e - b <= matrix.chunk_length;
            row_begin[r] = b;
            row_end[r] = mine[r] ? e : b;
        }
        double sum[ROWS][1];
        rows_sum<Value, Column, 1, ROWS, 2>(columns, values, row_begin, row_end, group, x, one, 0,
                                            1, sum);
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            if (mine[r]) {
                store_row<1>(group, sum[r], 1, one, first_row + first + r * groups + group_in_warp,
                             0, y);
            }
        }
    }
}

/* The staging of long rows' chunks in product_rows_by_thread: a block
 * takes 16 / G chunks at once, added by half its first warp (lanes c G ..
 * c G + G - 1 are chunk c's G lanes). A round stages chunk_part entries
 * of each chunk (values as doubles, and x at their columns), 1024 entries
 * in all, 4 loads a thread, in one of two buffers, while the adding lanes
 * add the previous round from the other; each chunk's part sits
 * chunk_part + G doubles after the previous one, so that the adding lanes
 * fall in distinct banks. Measured on an H200 with a row of 4 Mi entries
 * (g = 8, 1024 chunks; docs/benchmarks.md in git history, "The long row on the GPU"): a
 * block a chunk left 7 warps of 8 idle while its lanes added; 32 / G
 * chunks a block gave too few blocks (256) to keep the multiprocessors'
 * loads in flight; 16 / G gives 512, about four a multiprocessor. */
template <int G> __host__ __device__ constexpr int chunks_per_block()
{
    return 16 / G;
}
template <int G> __host__ __device__ constexpr int chunk_part()
{
    return 64 * G;
}
template <int G> __host__ __device__ constexpr int chunk_part_stride()
{
    return 64 * G + G;
}
/* Two rounds' values and x (one being added, the next being staged). */
template <int G> __host__ __device__ constexpr int chunk_staging_doubles()
{
    return 2 * 2 * chunks_per_block<G>() * chunk_part_stride<G>();
}

/* A thread's loads of one round of the staged chunks (entries start ..
 * start + chunk_part - 1 of each chunk): values as doubles and their
 * columns, +0.0 and column 0 where a chunk has ended. */
template <typename Value, typename Column, int G>
__device__ __forceinline__ void
load_chunk_round(const Column *__restrict__ columns, const Value *__restrict__ values,
                 const int64_t *begin, const int *length, int start,
                 double (&value)[chunks_per_block<G>() * chunk_part<G>() / threads_per_block],
                 Column (&column)[chunks_per_block<G>() * chunk_part<G>() / threads_per_block])
{
    constexpr int part = chunk_part<G>();
    constexpr int loads = chunks_per_block<G>() * part / threads_per_block;
#pragma unroll
    for (int i = 0; i < loads; i++) {
        const int k = (int)threadIdx.x + i * threads_per_block;
        const int c = k / part, offset = k % part;
        const bool inside = start + offset < length[c];
        const int64_t at = begin[c] + start + (inside ? offset : 0);
        value[i] = inside ? (double)values[at] : 0.0;
        column[i] = inside ? columns[at] : 0;
    }
}

/* Chunks first_chunk .. first_chunk + 16 / G - 1 (those that exist) into
 * chunk_sums, staged as above. Lane l of a chunk adds the entries l, l +
 * G, ... of every part in order with fma from +0.0, and at the end the
 * chunk's lanes add in the fixed tree: the operations of a group of G
 * lanes reading memory (rows_sum), so the same bits. While the adding
 * lanes work, the block's other warps gather and stage the next round,
 * then wait at its barrier. All the block's threads call it. */
template <typename Value, typename Column, int G>
__device__ __forceinline__ void
sum_chunks_staged(const spart_device_csr &matrix, const Column *__restrict__ columns,
                  const Value *__restrict__ values, const double *__restrict__ x,
                  int64_t first_chunk, double *__restrict__ staged, double *__restrict__ chunk_sums)
{
    constexpr int chunks = chunks_per_block<G>();
    constexpr int part = chunk_part<G>();
    constexpr int stride = chunk_part_stride<G>();
    constexpr int loads = chunks * part / threads_per_block;
    double *staged_values = staged;
    __shared__ int64_t begin[chunks];
    __shared__ int length[chunks];
    if (threadIdx.x < chunks) {
        const int64_t chunk = first_chunk + threadIdx.x;
        const bool exists = chunk < matrix.num_long_chunks;
        begin[threadIdx.x] = exists ? matrix.chunk_begin[chunk] : 0;
        length[threadIdx.x] =
            exists ? (int)(matrix.chunk_end[chunk] - matrix.chunk_begin[chunk]) : 0;
    }
    __syncthreads();
    int longest = 0;
#pragma unroll
    for (int c = 0; c < chunks; c++) {
        longest = length[c] > longest ? length[c] : longest;
    }
    const int adder = (int)threadIdx.x; /* < 16: the adding lanes */
    const int my_chunk = adder / G, lane = adder % G;
    double sum = 0.0;
    /* Round r's values and columns are loaded while round r - 1 is added:
     * a round then costs one trip to memory (the gathers of x), not two. */
    double value[loads];
    Column column[loads];
    load_chunk_round<Value, Column, G>(columns, values, begin, length, 0, value, column);
    for (int start = 0, round = 0; start < longest; start += part, round++) {
        double *round_values = staged_values + (round & 1) * 2 * chunks * stride;
        double *round_x = round_values + chunks * stride;
        double xv[loads];
#pragma unroll
        for (int i = 0; i < loads; i++) {
            xv[i] = x[(int64_t)column[i]];
        }
#pragma unroll
        for (int i = 0; i < loads; i++) {
            const int k = (int)threadIdx.x + i * threads_per_block;
            const int c = k / part, offset = k % part;
            if (start + offset < length[c]) {
                round_values[c * stride + offset] = value[i];
            }
        }
        load_chunk_round<Value, Column, G>(columns, values, begin, length, start + part, value,
                                           column);
#pragma unroll
        for (int i = 0; i < loads; i++) {
            const int k = (int)threadIdx.x + i * threads_per_block;
            const int c = k / part, offset = k % part;
            if (start + offset < length[c]) {
                round_x[c * stride + offset] = xv[i];
            }
        }
        /* Round r's stores are seen by the adders; round r - 1's additions,
         * in the other buffer, ended before this barrier, and round r + 1
         * writes that buffer only after it. */
        __syncthreads();
        if (adder < 16) {
            const int count = length[my_chunk] - start < part ? length[my_chunk] - start : part;
            const int steps = lane < count ? (count - lane + G - 1) / G : 0;
            const double *v = round_values + my_chunk * stride + lane;
            const double *xs = round_x + my_chunk * stride + lane;
            int s = 0;
            /* Four terms' operands read before their fmas, in order. */
            for (; s + 4 <= steps; s += 4) {
                double a[4], b[4];
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    a[j] = v[(s + j) * G];
                    b[j] = xs[(s + j) * G];
                }
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    sum = __fma_rn(a[j], b[j], sum);
                }
            }
            for (; s < steps; s++) {
                sum = __fma_rn(v[s * G], xs[s * G], sum);
            }
        }
    }
    if (adder < 16) {
#pragma unroll
        for (int h = G / 2; h >= 1; h /= 2) {
            sum = __dadd_rn(sum, __shfl_down_sync(0xffffu, sum, h, G));
        }
        if (lane == 0 && first_chunk + my_chunk < matrix.num_long_chunks) {
            chunk_sums[first_chunk + my_chunk] = sum;
        }
    }
    __syncthreads(); /* begin and length are read before the next call sets them */
}

template <typename Value, typename Column, int G, bool CHUNKS>
__global__ void __launch_bounds__(threads_per_block, G == 16  ? min_blocks_sixteen
                                                     : CHUNKS ? min_blocks_chunks
                                                              : 0)
    product_rows_by_thread(spart_device_csr matrix, const Column *__restrict__ columns,
                           const Value *__restrict__ values, const double *__restrict__ x,
                           double *__restrict__ y, double *__restrict__ chunk_sums,
                           unsigned chunk_blocks)
{
    constexpr int warps_per_block = threads_per_block / 32;
    constexpr int row_staging = warps_per_block * (32 * G + 32);
    constexpr int staging = CHUNKS && chunk_staging_doubles<G>() > row_staging
                                ? chunk_staging_doubles<G>()
                                : row_staging;
    __shared__ double staged_all[staging];
    double(*staged)[32 * G + 32] = reinterpret_cast<double(*)[32 * G + 32]>(staged_all);
    const int warp_lane = (int)(threadIdx.x & 31u);
    const int warp_in_block = (int)(threadIdx.x / 32);
    if (CHUNKS && blockIdx.x < chunk_blocks) {
        constexpr int chunks = chunks_per_block<G>();
        for (int64_t first = (int64_t)blockIdx.x * chunks; first < matrix.num_long_chunks;
             first += (int64_t)chunk_blocks * chunks) {
            sum_chunks_staged<Value, Column, G>(matrix, columns, values, x, first, staged_all,
                                                chunk_sums);
        }
        return;
    }
    const int64_t warps = (int64_t)(gridDim.x - chunk_blocks) * warps_per_block;
    const int64_t first_warp =
        (int64_t)(blockIdx.x - chunk_blocks) * warps_per_block + warp_in_block;
    for (int64_t first_row = first_warp * 32; first_row < matrix.num_rows;
         first_row += warps * 32) {
        const int64_t row = first_row + warp_lane;
        int64_t begin, end;
        spart_rows::lane_row_range(matrix.row_ptr, matrix.num_rows, row, &begin, &end);
        if (__all_sync(0xffffffffu, end - begin <= G)) {
            sum_rows_by_thread<Value, Column, G>(columns, values, x, begin, end, row,
                                                 matrix.num_rows, staged[warp_in_block], y);
        } else {
            sum_rows_by_groups<Value, Column, G>(matrix, columns, values, x, begin, end, first_row,
                                                 y);
        }
    }
}

/* One vector, rows of at most G entries a thread (product_rows_by_thread),
 * with the long rows' chunks in the same launch (their sums added by the
 * caller). */
template <typename Value, typename Column, int G>
cudaError_t launch_rows_by_thread(const spart_device_csr &matrix, const Column *columns,
                                  const Value *values, const double *x, double *y,
                                  double *chunk_sums, cudaStream_t stream)
{
    const unsigned chunk_blocks =
        (unsigned)(matrix.num_long_chunks > 0
                       ? blocks_for(matrix.num_long_chunks, chunks_per_block<G>())
                       : 0);
    const int64_t row_warps = (matrix.num_rows + 31) / 32;
    const unsigned row_blocks = (unsigned)blocks_for(row_warps, threads_per_block / 32);
    const dim3 grid(chunk_blocks + row_blocks);
    if (matrix.num_long_chunks == 0) {
        return launch(product_rows_by_thread<Value, Column, G, false>, grid, stream, matrix,
                      columns, values, x, y, chunk_sums, 0u);
    }
    return launch(product_rows_by_thread<Value, Column, G, true>, grid, stream, matrix, columns,
                  values, x, y, chunk_sums, chunk_blocks);
}

/* launch_rows_by_thread for the matrix's group size. */
template <typename Value, typename Column>
cudaError_t launch_rows_by_thread_for_group(const spart_device_csr &matrix, const Column *columns,
                                            const Value *values, const double *x, double *y,
                                            double *chunk_sums, cudaStream_t stream)
{
    const int g = matrix.group_size;
    if (g == 2) {
        return launch_rows_by_thread<Value, Column, 2>(matrix, columns, values, x, y, chunk_sums,
                                                       stream);
    }
    if (g == 4) {
        return launch_rows_by_thread<Value, Column, 4>(matrix, columns, values, x, y, chunk_sums,
                                                       stream);
    }
    if (g == 8) {
        return launch_rows_by_thread<Value, Column, 8>(matrix, columns, values, x, y, chunk_sums,
                                                       stream);
    }
    return launch_rows_by_thread<Value, Column, 16>(matrix, columns, values, x, y, chunk_sums,
                                                    stream);
}

} // namespace

cudaError_t spart_product::launch_rows_by_thread(const spart_device_csr &matrix, const double *x,
                                                 double *y, double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_rows_by_thread_for_group(matrix, matrix.columns32, matrix.values64, x, y,
                                               chunk_sums, stream);
    }
    if (matrix.values64 != nullptr) {
        return launch_rows_by_thread_for_group(matrix, matrix.columns64, matrix.values64, x, y,
                                               chunk_sums, stream);
    }
    if (matrix.columns32 != nullptr) {
        return launch_rows_by_thread_for_group(matrix, matrix.columns32, matrix.values32, x, y,
                                               chunk_sums, stream);
    }
    return launch_rows_by_thread_for_group(matrix, matrix.columns64, matrix.values32, x, y,
                                           chunk_sums, stream);
}
