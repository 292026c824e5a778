/*
 * kernels/csr_product.cu: Y = A X for a CSR matrix in device memory, in the
 * row-group order of its twin host/csr_product.c, so that both give the
 * same bits:
 *
 *   - a row's entries are cut into chunks of chunk_length entries;
 *   - each chunk is summed by the row's g lanes as kernels/csr_row_sum.cuh
 *     says (lane l sums entries l, l+g, ... with fma from +0.0, then the
 *     fixed binary tree);
 *   - the chunk sums add in chunk order, starting from the first; an empty
 *     row gives +0.0.
 *
 * Work split. Each row gets g consecutive lanes of a warp, 32/g rows per
 * warp; a group takes ROWS rows at once (their loads in flight together),
 * grid-stride over the rows. Rows of several chunks ("long rows", listed
 * when the regridder is copied to the device) are not summed there: in the
 * same launch, blocks of their own give each of their chunks a group,
 * writing one partial sum per chunk to scratch, and add_chunk_sums then
 * adds each long row's chunk sums in chunk order. A long row therefore
 * costs one chunk's time on one group plus a short sequential addition,
 * instead of serialising the product, and the arithmetic is the sequential
 * one, bit for bit.
 *
 * Rows of one round. A one-vector product of a matrix of g = 2, 4, 8 or 16
 * whose rows other than the long ones hold about g entries or fewer
 * (rows_fit_one_round) gives each row one thread instead of g lanes
 * (product_rows_by_thread): a warp loads the entries of 32 rows with
 * coalesced loads, forms each entry's term fma(v, x, +0.0), and each
 * thread adds its row's terms in the lanes' tree. Warps whose 32 rows do
 * not all fit one round sum them by groups, as above. There a block
 * takes 16/g of the long rows' chunks at once: all its threads stage the
 * chunks' values and x in shared memory, and 16 lanes, g a chunk,
 * add them (sum_chunks_staged).
 *
 * Short-row index. A matrix of g <= 2 whose rows hold at most 255 entries
 * may carry an index (one byte a row and every 256th row start, see
 * spart_device_short_rows); a one-vector product then reads it instead of
 * the int64 row pointers, a warp per block of 256 rows, which saves 7
 * bytes of every row's 8 (product_indexed_rows).
 *
 * Several vectors are done TILE at a time (TILE = 1, 4 or 8, a template
 * parameter), interleaved (X[column * T + t]) or one after the other in C
 * order (x[t * columns + column], no packing needed): each vector's sum
 * follows the single-vector order exactly, so a column alone equals the
 * column inside any batch, in either layout. Batches in 64-byte tiles of 8
 * vectors over matrices of short rows have kernels of their own
 * (kernels/csr_product_tiles.cu).
 *
 * Everything is enqueued on the caller's stream; nothing synchronises,
 * allocates or uses atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "csr_row_sum.cuh"
#include "device/device_internal.h"
#include "launch.cuh"

namespace
{

using spart_launch::blocks_for;
using spart_launch::launch;
using spart_launch::max_blocks_y;
using spart_launch::threads_per_block;
using spart_rows::group_of_thread;
using spart_rows::row_group;
using spart_rows::rows_sum;
using spart_rows::vector_layout;

/* Blocks a multiprocessor for the kernels whose group size is fixed at
 * compile time (a launch bound, so at most 64 registers a thread). With
 * the group size a constant, a round's loads have constant strides, and
 * with a launch bound that names blocks a multiprocessor ptxas issues a
 * round's loads before its first fma (seen in the machine code of a
 * one-block build); with the group size read at run time, or without that
 * bound (ptxas then held the kernel to 32 registers), it interleaved
 * loads and fmas. Measured on an H200 (docs/benchmarks.md, "GPU product:
 * group sizes fixed at compile time"): 4 blocks (64 registers) was within
 * 3 % of the fastest choice on the ESIS-scale forward operator and the
 * fastest on a band whose columns spread over 65536; 1 block (72
 * registers) was 11 % slower there. */
constexpr int min_blocks_fixed_group = 4;

/* The same for the short-row index's kernel (group size 1 or 2): 2
 * blocks (up to 128 registers; it takes 80) and 1 block were equally
 * fast on the ESIS-scale transpose shape, 8 % faster than the group size
 * read at run time without the bound. */
constexpr int min_blocks_indexed = 2;

/* Blocks a multiprocessor for product_rows_by_thread with long rows (at
 * most 64 registers a thread): the chunks' blocks are many and each waits
 * at its barriers while its adding lanes work, so the more of them side
 * by side the better. */
constexpr int min_blocks_chunks = 4;

/* The same for its rows of 16 (up to 128 registers): a lane's 16 loads in
 * flight need more than 64 (ptxas spilled them, or kept them in local
 * memory, under the bound above or none). */
constexpr int min_blocks_sixteen = 2;

/* Write lane 0's sums for vectors t0 .. t0 + width - 1 of row `row`. */
template <int TILE>
__device__ __forceinline__ void store_row(const row_group &group, const double (&sum)[TILE],
                                          int width, const vector_layout &layout, int64_t row,
                                          int64_t t0, double *__restrict__ y)
{
    if (group.lane != 0) {
        return;
    }
#pragma unroll
    for (int j = 0; j < TILE; j++) {
        if (TILE == 1) {
            y[row] = sum[j];
        } else if (j < width) {
            y[row * layout.y_row + (t0 + j) * layout.y_vector] = sum[j];
        }
    }
}

/* Entries a lane loads per round in a long row's chunk (up to
 * SPART_CHUNK_LENGTH / g entries a lane, so as many in flight as the
 * registers allow). */
template <int TILE> __host__ __device__ constexpr int chunk_unroll()
{
    return TILE == 1 ? 8 : 4;
}

/* The long rows' chunks first_chunk, first_chunk + chunk_stride, ... for
 * vectors t0 .. t0 + width - 1: one group a chunk, chunk_unroll entries a
 * lane in flight, each chunk's sum into chunk_sums[chunk * T + t]. */
template <typename Value, typename Column, int TILE, bool X_TILES>
__device__ __forceinline__ void
sum_long_chunks(const spart_device_csr &matrix, const Column *__restrict__ columns,
                const Value *__restrict__ values, const double *__restrict__ x,
                const vector_layout &layout, int64_t num_vectors, int64_t t0, int width,
                const row_group &group, int64_t first_chunk, int64_t chunk_stride,
                double *__restrict__ chunk_sums)
{
    for (int64_t chunk = first_chunk; chunk < matrix.num_long_chunks; chunk += chunk_stride) {
        const int64_t begin[1] = {matrix.chunk_begin[chunk]};
        const int64_t end[1] = {matrix.chunk_end[chunk]};
        double sum[1][TILE];
        rows_sum<Value, Column, TILE, 1, chunk_unroll<TILE>(), X_TILES>(
            columns, values, begin, end, group, x, layout, t0, width, sum);
        if (group.lane == 0) {
#pragma unroll
            for (int j = 0; j < TILE; j++) {
                if (j < width) {
                    chunk_sums[chunk * num_vectors + t0 + j] = sum[0][j];
                }
            }
        }
    }
}

/* One launch for both kinds of work, so that the long rows' chunks run
 * beside the short rows rather than after them: blocks [0, chunk_blocks)
 * take the long rows' chunks (one group per chunk, chunk_unroll entries a
 * lane in flight, its sum into chunk_sums[chunk * T + t]); the other
 * blocks take the rows of at most one chunk, ROWS at a time per group (row
 * item + r * item_stride for r < ROWS, so that the groups of a warp read
 * neighbouring rows; long rows are skipped there). blockIdx.y walks the
 * tiles of TILE vectors. A matrix without long rows takes the instance
 * without the chunks' code (CHUNKS false), whose registers are the short
 * rows' alone. G, when not 0, is the matrix's group size fixed at compile
 * time, and the kernel is built for min_blocks_fixed_group blocks a
 * multiprocessor (see there). */
template <typename Value, typename Column, int TILE, int ROWS, int UNROLL, bool CHUNKS, int G,
          bool X_TILES>
__global__ void __launch_bounds__(threads_per_block, G > 0 ? min_blocks_fixed_group : 0)
    product_rows(spart_device_csr matrix, const Column *__restrict__ columns,
                 const Value *__restrict__ values, const double *__restrict__ x,
                 vector_layout layout, int64_t num_vectors, double *__restrict__ y,
                 double *__restrict__ chunk_sums, unsigned chunk_blocks)
{
    const int group_size = G > 0 ? G : matrix.group_size;
    const row_group group = group_of_thread(group_size);
    const int64_t groups_per_block = blockDim.x / group_size;
    const int64_t group_in_block = threadIdx.x / group.size;
    const int do_chunks = blockIdx.x < chunk_blocks;
    const int64_t block = do_chunks ? blockIdx.x : blockIdx.x - chunk_blocks;
    const int64_t blocks = do_chunks ? chunk_blocks : gridDim.x - chunk_blocks;
    const int64_t first_item = block * groups_per_block + group_in_block;
    const int64_t item_stride = blocks * groups_per_block;
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const int64_t t0 = tile * TILE;
        const int width = num_vectors - t0 < TILE ? (int)(num_vectors - t0) : TILE;
        if (CHUNKS && do_chunks) {
            sum_long_chunks<Value, Column, TILE, X_TILES>(matrix, columns, values, x, layout,
                                                          num_vectors, t0, width, group, first_item,
                                                          item_stride, chunk_sums);
            continue;
        }
        for (int64_t base = first_item; base < matrix.num_rows; base += item_stride * ROWS) {
            int64_t begin[ROWS], end[ROWS];
            bool mine[ROWS]; /* a row of this launch's short pass */
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int64_t row = base + r * item_stride;
                begin[r] = 0;
                end[r] = 0;
                mine[r] = row < matrix.num_rows;
                if (mine[r]) {
                    begin[r] = matrix.row_ptr[row];
                    end[r] = matrix.row_ptr[row + 1];
                }
                if (end[r] - begin[r] > matrix.chunk_length) {
                    mine[r] = false; /* a long row: its chunks are summed apart */
                    end[r] = begin[r];
                }
            }
            double sum[ROWS][TILE];
            rows_sum<Value, Column, TILE, ROWS, UNROLL, X_TILES>(columns, values, begin, end, group,
                                                                 x, layout, t0, width, sum);
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (mine[r]) {
                    store_row<TILE>(group, sum[r], width, layout, base + r * item_stride, t0, y);
                }
            }
        }
    }
}

/* Each long row's value for each vector: its chunk sums added in chunk
 * order, starting from the first; a block per row and vector. The block's
 * threads stage up to staged_chunk_sums of the row's chunk sums in shared
 * memory at once (16 loads a thread in flight, one trip to memory), and
 * thread 0 then adds them in order, reading 16 ahead of its additions.
 * Measured on an H200, a row of 1024 chunks: a warp loading 128 sums a
 * trip took 13-15 us, one trip after another; staged, the additions wait
 * on nothing but each other. */
constexpr int staged_chunk_sums = 16 * threads_per_block;

__global__ void __launch_bounds__(threads_per_block)
    add_chunk_sums(spart_device_csr matrix, const double *__restrict__ chunk_sums,
                   int64_t num_vectors, vector_layout layout, double *__restrict__ y)
{
    __shared__ double staged[staged_chunk_sums];
    const int64_t count = matrix.num_long_rows * num_vectors;
    for (int64_t item = blockIdx.x; item < count; item += gridDim.x) {
        const int64_t long_row = item / num_vectors;
        const int64_t t = item - long_row * num_vectors;
        const int64_t first = matrix.long_first_chunk[long_row];
        const int64_t last = matrix.long_first_chunk[long_row + 1];
        double total = 0.0;
        for (int64_t piece = first; piece < last; piece += staged_chunk_sums) {
            const int n =
                last - piece < staged_chunk_sums ? (int)(last - piece) : staged_chunk_sums;
            double loaded[staged_chunk_sums / threads_per_block];
#pragma unroll
            for (int i = 0; i < staged_chunk_sums / threads_per_block; i++) {
                const int k = (int)threadIdx.x + i * threads_per_block;
                loaded[i] = k < n ? chunk_sums[(piece + k) * num_vectors + t] : 0.0;
            }
#pragma unroll
            for (int i = 0; i < staged_chunk_sums / threads_per_block; i++) {
                const int k = (int)threadIdx.x + i * threads_per_block;
                if (k < n) {
                    staged[k] = loaded[i];
                }
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                int k = 0;
                if (piece == first) {
                    total = staged[0]; /* the first chunk's sum starts the total */
                    k = 1;
                }
                for (; k + 16 <= n; k += 16) {
                    double next[16];
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        next[j] = staged[k + j];
                    }
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        total = __dadd_rn(total, next[j]);
                    }
                }
                for (; k < n; k++) {
                    total = __dadd_rn(total, staged[k]);
                }
            }
            __syncthreads(); /* the piece is added before the next overwrites it */
        }
        if (threadIdx.x == 0) {
            const int64_t row = matrix.long_rows[long_row];
            y[num_vectors == 1 ? row : row * layout.y_row + t * layout.y_vector] = total;
        }
    }
}

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
 * (g = 8, 1024 chunks; docs/benchmarks.md, "The long row on the GPU"): a
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

/* Copy between C order and interleaved vectors (see spart_cuda_pack). */
__global__ void __launch_bounds__(threads_per_block)
    repack(spart_device_axis_map map, int64_t num_leading, int64_t size, const double *from,
           double *to, int to_packed)
{
    const int64_t num_vectors = num_leading * map.num_batch;
    const int64_t count = num_leading * size;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < count;
         item += stride) {
        const int64_t lead = item / size;
        int64_t rest = item - lead * size;
        int64_t matrix = 0, batch = 0;
        for (int k = map.ndim - 1; k >= 0; k--) {
            const int64_t index = rest % map.dims[k];
            rest /= map.dims[k];
            matrix += index * map.matrix_stride[k];
            batch += index * map.batch_stride[k];
        }
        const int64_t slot = matrix * num_vectors + lead * map.num_batch + batch;
        if (to_packed) {
            to[slot] = from[item];
        } else {
            to[item] = from[slot];
        }
    }
}

/* The launches of one product, for one value type, column type, tile
 * width and row shape (ROWS rows a group, UNROLL entries a lane per
 * round; G the group size when fixed at compile time, else 0): the rows
 * and the long rows' chunks, then the chunk sums. With long_rows_only,
 * the long rows alone (the others summed by another kernel). */
template <typename Value, typename Column, int TILE, int ROWS, int UNROLL, int G = 0,
          bool X_TILES = false>
cudaError_t launch_product(const spart_device_csr &matrix, const Column *columns,
                           const Value *values, const double *x, const vector_layout &layout,
                           int64_t num_vectors, double *y, double *chunk_sums, cudaStream_t stream,
                           bool long_rows_only = false)
{
    const int64_t groups_per_block = threads_per_block / matrix.group_size;
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    const unsigned tile_blocks = (unsigned)(tiles < max_blocks_y ? tiles : max_blocks_y);
    const unsigned chunk_blocks =
        (unsigned)(matrix.num_long_chunks > 0 ? blocks_for(matrix.num_long_chunks, groups_per_block)
                                              : 0);
    const int64_t row_items = (matrix.num_rows + ROWS - 1) / ROWS;
    const unsigned row_blocks =
        (unsigned)(matrix.num_rows > 0 && !long_rows_only ? blocks_for(row_items, groups_per_block)
                                                          : 0);
    if (chunk_blocks + row_blocks == 0) {
        return cudaSuccess;
    }
    const dim3 grid(chunk_blocks + row_blocks, tile_blocks);
    if (matrix.num_long_chunks == 0) {
        return launch(product_rows<Value, Column, TILE, ROWS, UNROLL, false, G, X_TILES>, grid,
                      stream, matrix, columns, values, x, layout, num_vectors, y, chunk_sums, 0u);
    }
    cudaError_t error =
        launch(product_rows<Value, Column, TILE, ROWS, UNROLL, true, G, X_TILES>, grid, stream,
               matrix, columns, values, x, layout, num_vectors, y, chunk_sums, chunk_blocks);
    if (error != cudaSuccess) {
        return error;
    }
    unsigned blocks = (unsigned)blocks_for(matrix.num_long_rows * num_vectors, 1);
    return launch(add_chunk_sums, dim3(blocks), stream, matrix, (const double *)chunk_sums,
                  num_vectors, layout, y);
}

/* One vector, rows of at most G entries a thread (product_rows_by_thread),
 * with the long rows' chunks in the same launch and their sums after. */
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
    cudaError_t error = launch(product_rows_by_thread<Value, Column, G, true>, grid, stream, matrix,
                               columns, values, x, y, chunk_sums, chunk_blocks);
    if (error != cudaSuccess) {
        return error;
    }
    const vector_layout one = {1, 1, 1, 1, 1};
    unsigned blocks = (unsigned)blocks_for(matrix.num_long_rows, 1);
    return launch(add_chunk_sums, dim3(blocks), stream, matrix, (const double *)chunk_sums,
                  (int64_t)1, one, y);
}

/* The row shape for a tile width, group size and mean row length. A group
 * size g < 32 means rows of 1 to 4 entries a lane on average (the plan
 * doubles g while the mean row holds 2g entries or more): one vector
 * takes four rows a group and two entries a lane per round, so that most
 * rows cost one round trip; g = 32 with rows of 1 to 2 entries a lane
 * the same, g fixed at compile time (the forward operator of the ctis
 * tutorial, 32 entries a row: 10.8 -> 7.5 us on an H200, where two rows
 * and four entries a round left three of a lane's four slots empty and
 * took twice the warps); g = 16, or g = 32 with rows of up to 4 entries
 * a lane, two rows and four entries a round; longer rows eight entries a
 * round, with g = 32 fixed at compile time. Tiles of 4 vectors take one
 * row and four entries a round, each holding TILE values of x; tiles of 8
 * one row and two entries a round (on an H200, the CTIS operators of
 * bench_cuda_product --ctis: as fast or up to 15 % faster than four,
 * docs/benchmarks.md "Eight vectors in tiles"), except that tiles of 8
 * vectors as they lie (not in 64-byte tiles) at g = 32 without long rows
 * take one entry a round with g fixed at compile time (8 vectors of the
 * transpose of CTIS c, rows of 256 entries: 0.111 -> 0.093 ms on an H200,
 * docs/benchmarks.md "Eight vectors by quads of lanes"). (These shapes
 * take 32 to 64 registers for one vector, 48 to 96 for tiles; two rows a
 * group in tiles took 100.) One vector over rows of
 * about g entries, g = 2, 4, 8 or 16, takes a thread a row
 * (launch_rows_by_thread). */
template <typename Value, typename Column, int TILE, bool X_TILES = false>
cudaError_t launch_for_shape(const spart_device_csr &matrix, const Column *columns,
                             const Value *values, const double *x, const vector_layout &layout,
                             int64_t num_vectors, double *y, double *chunk_sums,
                             cudaStream_t stream)
{
    const int g = matrix.group_size;
    const int64_t mean = matrix.num_rows > 0 ? matrix.num_entries / matrix.num_rows : 0;
    if constexpr (TILE == 1) {
        if (spart_device_rows_fit_one_round(&matrix)) {
            if (g == 2) {
                return launch_rows_by_thread<Value, Column, 2>(matrix, columns, values, x, y,
                                                               chunk_sums, stream);
            }
            if (g == 4) {
                return launch_rows_by_thread<Value, Column, 4>(matrix, columns, values, x, y,
                                                               chunk_sums, stream);
            }
            if (g == 8) {
                return launch_rows_by_thread<Value, Column, 8>(matrix, columns, values, x, y,
                                                               chunk_sums, stream);
            }
            return launch_rows_by_thread<Value, Column, 16>(matrix, columns, values, x, y,
                                                            chunk_sums, stream);
        }
        if (g < 16) {
            return launch_product<Value, Column, TILE, 4, 2>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
        }
        if (g == 32 && mean < 2 * 32) {
            return launch_product<Value, Column, TILE, 4, 2, 32>(
                matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
        }
        if (g == 16 || mean <= 4 * 32) {
            return launch_product<Value, Column, TILE, 2, 4>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
        }
        /* Here g = 32 (g < 16 and g = 16 were taken above), fixed at
         * compile time. */
        return launch_product<Value, Column, TILE, 1, 8, 32>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
    } else {
        (void)g, (void)mean;
        if constexpr (TILE == 8 && !X_TILES) {
            if (g == 32 && matrix.num_long_chunks == 0) {
                return launch_product<Value, Column, TILE, 1, 1, 32>(
                    matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
            }
        }
        if constexpr (TILE == 8) {
            return launch_product<Value, Column, TILE, 1, 2, 0, X_TILES>(
                matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
        } else {
            return launch_product<Value, Column, TILE, 1, 4>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
        }
    }
}

template <int TILE, bool X_TILES = false>
cudaError_t launch_for_types(const spart_device_csr &matrix, const double *x,
                             const vector_layout &layout, int64_t num_vectors, double *y,
                             double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_for_shape<double, int32_t, TILE, X_TILES>(matrix, matrix.columns32,
                                                                matrix.values64, x, layout,
                                                                num_vectors, y, chunk_sums, stream);
    }
    if (matrix.values64 != nullptr) {
        return launch_for_shape<double, int64_t, TILE, X_TILES>(matrix, matrix.columns64,
                                                                matrix.values64, x, layout,
                                                                num_vectors, y, chunk_sums, stream);
    }
    if (matrix.columns32 != nullptr) {
        return launch_for_shape<float, int32_t, TILE, X_TILES>(matrix, matrix.columns32,
                                                               matrix.values32, x, layout,
                                                               num_vectors, y, chunk_sums, stream);
    }
    return launch_for_shape<float, int64_t, TILE, X_TILES>(
        matrix, matrix.columns64, matrix.values32, x, layout, num_vectors, y, chunk_sums, stream);
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

/* The long rows alone of a product in tiles of 8 vectors (their chunks,
 * then the chunk sums), beside spart_cuda_csr_product_short_rows_in_tiles,
 * which leaves them out. */
cudaError_t launch_long_rows_in_tiles(const spart_device_csr &matrix, const double *x_tiles,
                                      const vector_layout &layout, int64_t num_vectors, double *y,
                                      double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_product<double, int32_t, 8, 1, 2, 0, true>(
            matrix, matrix.columns32, matrix.values64, x_tiles, layout, num_vectors, y, chunk_sums,
            stream, true);
    }
    if (matrix.values64 != nullptr) {
        return launch_product<double, int64_t, 8, 1, 2, 0, true>(
            matrix, matrix.columns64, matrix.values64, x_tiles, layout, num_vectors, y, chunk_sums,
            stream, true);
    }
    if (matrix.columns32 != nullptr) {
        return launch_product<float, int32_t, 8, 1, 2, 0, true>(
            matrix, matrix.columns32, matrix.values32, x_tiles, layout, num_vectors, y, chunk_sums,
            stream, true);
    }
    return launch_product<float, int64_t, 8, 1, 2, 0, true>(
        matrix, matrix.columns64, matrix.values32, x_tiles, layout, num_vectors, y, chunk_sums,
        stream, true);
}

/* The product for any layout: tiles of 1, 4 or 8 vectors; x in tiles of
 * 8 interleaved vectors where x_tiles says (vector_layout). */
cudaError_t launch_any(const spart_device_csr &matrix, const double *x, const vector_layout &layout,
                       int64_t num_vectors, double *y, double *chunk_sums, bool x_tiles,
                       cudaStream_t stream)
{
    if (num_vectors <= 0) {
        return cudaSuccess;
    }
    if (x_tiles) {
        return launch_for_types<8, true>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
    }
    if (num_vectors == 1) {
        return launch_for_types<1>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
    }
    if (num_vectors <= 4) {
        return launch_for_types<4>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
    }
    return launch_for_types<8>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
}

cudaError_t launch_repack(const spart_device_axis_map *map, int64_t num_leading, const double *from,
                          double *to, int to_packed, cudaStream_t stream)
{
    int64_t size = 1;
    for (int k = 0; k < map->ndim; k++) {
        size *= map->dims[k];
    }
    if (num_leading * size == 0) {
        return cudaSuccess;
    }
    unsigned blocks = (unsigned)blocks_for(num_leading * size, threads_per_block);
    return launch(repack, dim3(blocks), stream, *map, num_leading, size, from, to, to_packed);
}

} // namespace

extern "C" int spart_cuda_csr_product(const spart_device_csr *matrix, const double *x,
                                      int64_t num_vectors, double *y, double *chunk_sums,
                                      void *stream)
{
    const vector_layout interleaved = {num_vectors, 1, num_vectors, 1, 1};
    return launch_any(*matrix, x, interleaved, num_vectors, y, chunk_sums, false,
                      static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_csr_product_indexed(const spart_device_csr *matrix,
                                              const spart_device_short_rows *index, const double *x,
                                              double *y, void *stream)
{
    if (matrix->group_size > 2 || matrix->num_long_chunks > 0) {
        return cudaErrorInvalidValue; /* never: the index is made for these alone */
    }
    return launch_indexed_for_types(*matrix, *index, x, y, static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_csr_product_c_order(const spart_device_csr *matrix, const double *x,
                                              int64_t num_vectors, double *x_tiles, double *y,
                                              double *chunk_sums, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int64_t columns = matrix->num_columns;
    if (x_tiles == nullptr) {
        const vector_layout c_order = {1, columns, 1, matrix->num_rows, columns};
        return launch_any(*matrix, x, c_order, num_vectors, y, chunk_sums, false, s);
    }
    const int error = spart_cuda_pack_tiles(x, columns, num_vectors, x_tiles, stream);
    if (error != cudaSuccess) {
        return error;
    }
    const vector_layout in_tiles = {8, 1, 1, matrix->num_rows, columns};
    if (spart_device_rows_are_short(matrix)) {
        const int short_error =
            spart_cuda_csr_product_short_rows_in_tiles(matrix, x_tiles, num_vectors, y, stream);
        if (short_error != cudaSuccess || matrix->num_long_chunks == 0) {
            return short_error;
        }
        return launch_long_rows_in_tiles(*matrix, x_tiles, in_tiles, num_vectors, y, chunk_sums, s);
    }
    return launch_any(*matrix, x_tiles, in_tiles, num_vectors, y, chunk_sums, true, s);
}

extern "C" int spart_cuda_pack(const spart_device_axis_map *map, int64_t num_leading,
                               const double *values, double *packed, void *stream)
{
    return launch_repack(map, num_leading, values, packed, 1, static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_unpack(const spart_device_axis_map *map, int64_t num_leading,
                                 const double *packed, double *values, void *stream)
{
    return launch_repack(map, num_leading, packed, values, 0, static_cast<cudaStream_t>(stream));
}
