/*
 * kernels/csr_product_tiles.cu: Y = A X for batches of vectors in tiles of
 * 8 interleaved vectors (x_tiles: the tile of vectors t0 .. t0 + 7 at
 * x_tiles[t0 * num_columns], a column's 8 values in one 64-byte line) over
 * matrices of short rows (fewer than 64 entries a row on average besides
 * the long rows: spart_device_rows_are_short), with y in C order (y[t *
 * num_rows + row]). Long rows (more than a chunk) are skipped here and
 * summed by their chunks (kernels/csr_product.cu). The order of operations
 * is the row group's of kernels/csr_row_sum.cuh (and so of
 * host/csr_product.c): each vector's sums are the single-vector
 * product's, bit for bit.
 *
 * Why kernels of their own. The row groups of kernels/csr_product.cu give
 * each term of a tile one lane, which loads the tile's 64 bytes in four
 * 16-byte loads: a warp's load touches 32 lines, and a row of about g
 * entries pays a tree of 8 sums a level. Here a quad of lanes shares a
 * term (lane 4 s + p holds vectors 2p and 2p + 1 of slot s's terms, one
 * 16-byte load: a warp's load touches 8 lines for 8 terms), and the rows'
 * bounds and entries are loaded ahead, so that a row costs about one trip
 * to memory instead of three. Measured on an H200 with 8 vectors of the
 * CTIS operators (docs/benchmarks.md in git history, "Eight vectors by quads of lanes"):
 * faster than cuSPARSE SpMM (CSR ALG1, ALG2 and ALG3) on all of them.
 *
 * Three kernels, chosen by the matrix (spart_cuda_csr_product_short_rows_in_tiles):
 *   - product_tiles_by_thread: rows of at most g entries (g = 2 to 16,
 *     spart_device_rows_fit_one_round), the warp's entries staged in
 *     shared memory, a quad a row;
 *   - product_tiles_pipelined: g = 32, rows of at most 64 entries, a row
 *     at a time with the next row's loads in flight;
 *   - product_tiles_by_quads: the others (and the warps of the first two
 *     whose rows do not fit), ROWS rows and UNROLL entries a chain a round.
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

/* Tiles of 8 interleaved vectors (x_tiles: the tile of vectors t0 .. t0 +
 * 7 at x_tiles[t0 * num_columns], a column's 8 values together), a quad
 * of lanes a term: lane 4 s + p of a warp (slot s = 0 .. 7, p = 0 .. 3)
 * holds vectors t0 + 2p and t0 + 2p + 1 of the terms of slot s, and reads
 * them with one 16-byte load, so that a warp's load of x touches 8 lines
 * (8 terms) where a lane a term touches 32 lines four times (32 terms).
 *
 * The order of operations is the group's (csr_row_sum.cuh). The G lanes
 * of a row become the row's slots: for G >= 8 a row takes all 8 slots,
 * slot s summing the chains of lanes s, s + 8, ..., s + G - 8 (lane l's
 * entries l, l + G, ... in order with fma from +0.0); for G < 8 a warp
 * takes 8 / G rows at a time, slot s summing lane s % G of row s / G.
 * The tree then adds lane l + h into lane l for h = G / 2, ..., 1: in a
 * lane's own registers while h >= 8 (lanes l and l + h share a slot),
 * from slot s + h by a shuffle of 4 h lanes below. A warp takes ROWS such
 * steps of rows at once, UNROLL entries a chain per round, all loads of
 * a round issued before its fmas (a slot past its row reads the matrix's
 * first entry, whose term is not added), as round_sum does.
 *
 * sum_rows_by_quads sums rows base .. base + ROWS * rows_a_step - 1 (those
 * below num_rows) into y in C order (y[t * num_rows + row]), leaving long
 * rows (more than a chunk) to their chunks. All lanes of the warp call it
 * with the same base. */
template <int G> __host__ __device__ constexpr int quad_rows_a_step()
{
    return G >= 8 ? 1 : 8 / G;
}

/* A quad's lane's sums of one row: lanes s, s + 8, ... of the row's G
 * (G / 8 chains for G >= 8, else one), vectors 2p and 2p + 1. */
template <int G> __host__ __device__ constexpr int quad_chains()
{
    return G >= 8 ? G / 8 : 1;
}

/* sum += v x for both vectors of the pair, where the entry is present (a
 * term that is not is not added, so that a sum keeps its sign). */
__device__ __forceinline__ void add_pair_term(double v, double2 xv, bool present, double (&sum)[2])
{
    const double a = __fma_rn(v, xv.x, sum[0]);
    const double b = __fma_rn(v, xv.y, sum[1]);
    sum[0] = present ? a : sum[0];
    sum[1] = present ? b : sum[1];
}

/* The lanes' tree of one row, lane l += lane l + h for h = G / 2, ..., 1:
 * in the lane's own chains while h >= 8, from the slot h below by a
 * shuffle of 4 h lanes after. The row's sums end in chain 0 of its first
 * slot. All lanes of the warp call it. */
template <int G> __device__ __forceinline__ void add_quad_tree(double (&sum)[quad_chains<G>()][2])
{
#pragma unroll
    for (int h = G / 2; h >= 1; h /= 2) {
        if (h >= 8) {
#pragma unroll
            for (int m = 0; m < quad_chains<G>(); m++) {
                if (m < h / 8) {
                    sum[m][0] = __dadd_rn(sum[m][0], sum[m + h / 8][0]);
                    sum[m][1] = __dadd_rn(sum[m][1], sum[m + h / 8][1]);
                }
            }
        } else {
            const double a = __shfl_down_sync(0xffffffffu, sum[0][0], 4 * h);
            const double b = __shfl_down_sync(0xffffffffu, sum[0][1], 4 * h);
            sum[0][0] = __dadd_rn(sum[0][0], a);
            sum[0][1] = __dadd_rn(sum[0][1], b);
        }
    }
}

/* Row `row`'s sums for vectors t and t + 1 into y in C order, those below
 * num_vectors. */
__device__ __forceinline__ void store_pair(const double (&sum)[2], int64_t row, int64_t num_rows,
                                           int64_t t, int64_t num_vectors, double *__restrict__ y)
{
    if (t < num_vectors) {
        y[t * num_rows + row] = sum[0];
    }
    if (t + 1 < num_vectors) {
        y[(t + 1) * num_rows + row] = sum[1];
    }
}

template <typename Value, typename Column, int G, int ROWS, int UNROLL>
__device__ __forceinline__ void
sum_rows_by_quads(const spart_device_csr &matrix, const Column *__restrict__ columns,
                  const Value *__restrict__ values, const double2 *__restrict__ x, int64_t t0,
                  int64_t num_vectors, int64_t base, double *__restrict__ y)
{
    constexpr int chains = quad_chains<G>();
    constexpr int rows_a_step = quad_rows_a_step<G>();
    const int warp_lane = (int)(threadIdx.x & 31u);
    const int slot = warp_lane / 4, pair = warp_lane % 4;
    const int row_in_step = G >= 8 ? 0 : slot / G;
    const int first_lane = G >= 8 ? slot : slot % G; /* the row's lane of chain 0 */
    int64_t begin[ROWS];
    int length[ROWS];
    bool mine[ROWS]; /* a row of the matrix, not a long one (its chunks are summed apart) */
    int longest = 0;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const int64_t row = base + r * rows_a_step + row_in_step;
        const bool inside = row < matrix.num_rows;
        begin[r] = inside ? matrix.row_ptr[row] : 0;
        const int64_t entries = inside ? matrix.row_ptr[row + 1] - begin[r] : 0;
        mine[r] = inside && entries <= matrix.chunk_length;
        length[r] = mine[r] ? (int)entries : 0;
        longest = length[r] > longest ? length[r] : longest;
    }
    double sum[ROWS][chains][2];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
#pragma unroll
        for (int m = 0; m < chains; m++) {
            sum[r][m][0] = 0.0;
            sum[r][m][1] = 0.0;
        }
    }
    for (int offset = first_lane; offset < longest; offset += UNROLL * G) {
        double value[ROWS][chains][UNROLL];
        double2 xv[ROWS][chains][UNROLL];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
#pragma unroll
            for (int m = 0; m < chains; m++) {
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    const int k = offset + 8 * m + u * G;
                    const int64_t at = k < length[r] ? begin[r] + k : 0;
                    value[r][m][u] = (double)values[at];
                    xv[r][m][u] = x[(int64_t)columns[at] * 4 + pair];
                }
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
#pragma unroll
            for (int m = 0; m < chains; m++) {
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    add_pair_term(value[r][m][u], xv[r][m][u], offset + 8 * m + u * G < length[r],
                                  sum[r][m]);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        add_quad_tree<G>(sum[r]);
    }
    if (first_lane == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            if (mine[r]) {
                store_pair(sum[r][0], base + r * rows_a_step + row_in_step, matrix.num_rows,
                           t0 + 2 * pair, num_vectors, y);
            }
        }
    }
}

template <typename Value, typename Column, int G, int ROWS, int UNROLL>
__global__ void __launch_bounds__(threads_per_block, 2)
    product_tiles_by_quads(spart_device_csr matrix, const Column *__restrict__ columns,
                           const Value *__restrict__ values, const double *__restrict__ x_tiles,
                           int64_t num_vectors, double *__restrict__ y)
{
    constexpr int rows_a_warp = ROWS * quad_rows_a_step<G>();
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    const int64_t first_warp = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int64_t tiles = (num_vectors + 7) / 8;
    for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const int64_t t0 = tile * 8;
        const double2 *x = reinterpret_cast<const double2 *>(x_tiles + t0 * matrix.num_columns);
        for (int64_t base = first_warp * rows_a_warp; base < matrix.num_rows;
             base += warps * rows_a_warp) {
            sum_rows_by_quads<Value, Column, G, ROWS, UNROLL>(matrix, columns, values, x, t0,
                                                              num_vectors, base, y);
        }
    }
}

/* Tiles of 8 vectors over rows of at most 2 G entries, G = 8, 16 or 32
 * (the forward operators of a CTIS instrument: 59 entries a row at G =
 * 32), by quads of lanes as sum_rows_by_quads, a row at a time, with the
 * next row's loads in flight: each warp takes 32 neighbouring rows, its
 * lanes read their bounds at once (one trip for 32 rows), and while a
 * row's gathers of x are in flight the warp loads the next row's values
 * and columns, so that a row costs about one trip to memory instead of
 * three. Same operations as sum_rows_by_quads with ROWS = 1, UNROLL = 2
 * (one round: every entry of a row of at most 2 G), so the same bits. A
 * warp among whose rows one holds more than 2 G entries sums them by
 * sum_rows_by_quads. */
template <typename Value, typename Column, int G> struct quad_row_entries {
    double value[quad_chains<G>()][2];
    Column column[quad_chains<G>()][2];
    int length;
};

template <typename Value, typename Column, int G>
__device__ __forceinline__ void
load_quad_row(const Column *__restrict__ columns, const Value *__restrict__ values, int64_t begin,
              int length, int slot, quad_row_entries<Value, Column, G> &row)
{
    row.length = length;
#pragma unroll
    for (int m = 0; m < quad_chains<G>(); m++) {
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int k = slot + 8 * m + u * G;
            const int64_t at = k < length ? begin + k : 0;
            row.value[m][u] = (double)values[at];
            row.column[m][u] = columns[at];
        }
    }
}

template <typename Value, typename Column, int G>
__global__ void __launch_bounds__(threads_per_block, 2)
    product_tiles_pipelined(spart_device_csr matrix, const Column *__restrict__ columns,
                            const Value *__restrict__ values, const double *__restrict__ x_tiles,
                            int64_t num_vectors, double *__restrict__ y)
{
    constexpr int chains = quad_chains<G>();
    const int warp_lane = (int)(threadIdx.x & 31u);
    const int slot = warp_lane / 4, pair = warp_lane % 4;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    const int64_t first_warp = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int64_t tiles = (num_vectors + 7) / 8;
    for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const int64_t t0 = tile * 8;
        const double2 *x = reinterpret_cast<const double2 *>(x_tiles + t0 * matrix.num_columns);
        for (int64_t first_row = first_warp * 32; first_row < matrix.num_rows;
             first_row += warps * 32) {
            const int64_t my_row = first_row + warp_lane;
            int64_t begin, end;
            spart_rows::lane_row_range(matrix.row_ptr, matrix.num_rows, my_row, &begin, &end);
            if (!__all_sync(0xffffffffu, end - begin <= 2 * G)) {
                for (int64_t base = first_row; base < first_row + 32; base++) {
                    sum_rows_by_quads<Value, Column, G, 1, 2>(matrix, columns, values, x, t0,
                                                              num_vectors, base, y);
                }
                continue;
            }
            const int rows =
                matrix.num_rows - first_row < 32 ? (int)(matrix.num_rows - first_row) : 32;
            quad_row_entries<Value, Column, G> next;
            load_quad_row<Value, Column, G>(columns, values, __shfl_sync(0xffffffffu, begin, 0),
                                            (int)__shfl_sync(0xffffffffu, end - begin, 0), slot,
                                            next);
            for (int i = 0; i < rows; i++) {
                const quad_row_entries<Value, Column, G> row = next;
                double2 xv[chains][2];
#pragma unroll
                for (int m = 0; m < chains; m++) {
#pragma unroll
                    for (int u = 0; u < 2; u++) {
                        xv[m][u] = x[(int64_t)row.column[m][u] * 4 + pair];
                    }
                }
                const int after = i + 1 < rows ? i + 1 : i;
                const int64_t next_begin = __shfl_sync(0xffffffffu, begin, after);
                const int next_length = (int)__shfl_sync(0xffffffffu, end - begin, after);
                if (i + 1 < rows) {
                    load_quad_row<Value, Column, G>(columns, values, next_begin, next_length, slot,
                                                    next);
                }
                double sum[chains][2];
#pragma unroll
                for (int m = 0; m < chains; m++) {
                    sum[m][0] = 0.0;
                    sum[m][1] = 0.0;
#pragma unroll
                    for (int u = 0; u < 2; u++) {
                        add_pair_term(row.value[m][u], xv[m][u], slot + 8 * m + u * G < row.length,
                                      sum[m]);
                    }
                }
                add_quad_tree<G>(sum);
                if (slot == 0) {
                    store_pair(sum[0], first_row + i, matrix.num_rows, t0 + 2 * pair, num_vectors,
                               y);
                }
            }
        }
    }
}

/* Tiles of 8 vectors over rows of at most G entries (G = 2, 4, 8 or 16;
 * spart_device_rows_fit_one_round), four lanes a row: each warp takes 16
 * neighbouring rows at a time. Lanes 0 .. 15 read the rows' bounds; when every row
 * holds at most G entries, their entries lie together, at most 16 G: the
 * warp loads them with coalesced loads into shared memory (one trip), and
 * then, 8 rows at a time, lane 4 r + p gathers vectors t0 + 2p and t0 + 2p
 * + 1 of every entry of row r (G 16-byte loads in flight), forms each
 * entry's term fma(v, x, +0.0) (a row of at most G entries gives lane l of
 * its group the single term of entry l, or +0.0) and adds the G terms in
 * the lanes' tree: the group's operations, so the same bits. A warp whose
 * rows are not all that short sums them by quads (sum_rows_by_quads). */
constexpr int thread_rows_a_trip = 16;

template <typename Value, typename Column, int G>
__global__ void __launch_bounds__(threads_per_block, 2)
    product_tiles_by_thread(spart_device_csr matrix, const Column *__restrict__ columns,
                            const Value *__restrict__ values, const double *__restrict__ x_tiles,
                            int64_t num_vectors, double *__restrict__ y)
{
    constexpr int warps_per_block = threads_per_block / 32;
    constexpr int entries = thread_rows_a_trip * G;
    __shared__ double staged_values[warps_per_block][entries];
    __shared__ Column staged_columns[warps_per_block][entries];
    const int warp_lane = (int)(threadIdx.x & 31u);
    const int warp_in_block = (int)(threadIdx.x / 32);
    const int pair = warp_lane % 4;
    const int64_t warps = (int64_t)gridDim.x * warps_per_block;
    const int64_t first_warp = (int64_t)blockIdx.x * warps_per_block + warp_in_block;
    const int64_t tiles = (num_vectors + 7) / 8;
    double *my_values = staged_values[warp_in_block];
    Column *my_columns = staged_columns[warp_in_block];
    for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const int64_t t0 = tile * 8;
        const double2 *x = reinterpret_cast<const double2 *>(x_tiles + t0 * matrix.num_columns);
        for (int64_t first_row = first_warp * thread_rows_a_trip; first_row < matrix.num_rows;
             first_row += warps * thread_rows_a_trip) {
            const int64_t row = first_row + (warp_lane < thread_rows_a_trip ? warp_lane : 0);
            int64_t begin, end;
            spart_rows::lane_row_range(matrix.row_ptr, matrix.num_rows, row, &begin, &end);
            if (!__all_sync(0xffffffffu, end - begin <= G)) {
                constexpr int step = 4 * quad_rows_a_step<G>();
                for (int64_t base = first_row; base < first_row + thread_rows_a_trip;
                     base += step) {
                    sum_rows_by_quads<Value, Column, G, 4, 2>(matrix, columns, values, x, t0,
                                                              num_vectors, base, y);
                }
                continue;
            }
            const int64_t warp_begin = __shfl_sync(0xffffffffu, begin, 0);
            const int total =
                (int)(__shfl_sync(0xffffffffu, end, thread_rows_a_trip - 1) - warp_begin);
            /* Every load issued without a branch (a slot past the rows reads
             * the first entry and is not stored), as in round_sum. */
            double value[entries / 32 > 0 ? entries / 32 : 1];
            Column column[entries / 32 > 0 ? entries / 32 : 1];
#pragma unroll
            for (int i = 0; i < entries / 32; i++) {
                const int k = warp_lane + 32 * i;
                const int64_t at = k < total ? warp_begin + k : 0;
                value[i] = (double)values[at];
                column[i] = columns[at];
            }
#pragma unroll
            for (int i = 0; i < entries / 32; i++) {
                const int k = warp_lane + 32 * i;
                if (k < total) {
                    my_values[k] = value[i];
                    my_columns[k] = column[i];
                }
            }
            __syncwarp();
#pragma unroll 1
            for (int half = 0; half < thread_rows_a_trip / 8; half++) {
                const int local = half * 8 + warp_lane / 4;
                const int64_t row_begin = __shfl_sync(0xffffffffu, begin, local);
                const int64_t row_end = __shfl_sync(0xffffffffu, end, local);
                const int start = (int)(row_begin - warp_begin);
                const int length = (int)(row_end - row_begin);
                double2 xv[G];
#pragma unroll
                for (int l = 0; l < G; l++) {
                    const int64_t c = l < length ? (int64_t)my_columns[start + l] : 0;
                    xv[l] = x[c * 4 + pair];
                }
                double lane[G][2];
#pragma unroll
                for (int l = 0; l < G; l++) {
                    const double v = l < length ? my_values[start + l] : 0.0;
                    lane[l][0] = l < length ? __fma_rn(v, xv[l].x, 0.0) : 0.0;
                    lane[l][1] = l < length ? __fma_rn(v, xv[l].y, 0.0) : 0.0;
                }
#pragma unroll
                for (int level = 1; level < G; level *= 2) {
                    const int h = G / (2 * level); /* G / 2, ..., 1 */
#pragma unroll
                    for (int l = 0; l < G / 2; l++) {
                        if (l < h) {
                            lane[l][0] = __dadd_rn(lane[l][0], lane[l + h][0]);
                            lane[l][1] = __dadd_rn(lane[l][1], lane[l + h][1]);
                        }
                    }
                }
                if (first_row + local < matrix.num_rows) {
                    store_pair(lane[0], first_row + local, matrix.num_rows, t0 + 2 * pair,
                               num_vectors, y);
                }
            }
            __syncwarp(); /* the entries are read before the next rows' overwrite them */
        }
    }
}

/* Vectors one after the other in C order (x[t * columns + column]) into
 * tiles of 8 interleaved vectors (tiles[(t / 8) * columns * 8 + column * 8
 * + t % 8]), the last tile padded with zeros: a thread a column and tile,
 * its 8 loads coalesced across the warp (neighbouring columns), its 64
 * bytes stored in four 16-byte stores. */
__global__ void __launch_bounds__(threads_per_block)
    pack_tiles(const double *__restrict__ x, int64_t columns, int64_t num_vectors,
               double *__restrict__ tiles)
{
    const int64_t count = (num_vectors + 7) / 8 * columns;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < count;
         item += stride) {
        const int64_t tile = item / columns;
        const int64_t column = item - tile * columns;
        double v[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int64_t t = tile * 8 + j;
            v[j] = t < num_vectors ? x[t * columns + column] : 0.0;
        }
        double2 *to = reinterpret_cast<double2 *>(tiles + item * 8);
#pragma unroll
        for (int h = 0; h < 4; h++) {
            to[h] = make_double2(v[2 * h], v[2 * h + 1]);
        }
    }
}

/* 1 to 4 vectors in C order into one tile of 4 interleaved vectors
 * (x4[column * 4 + t], zeros past num_vectors): a column's values in one
 * 32-byte sector. */
__global__ void __launch_bounds__(threads_per_block)
    pack_x4(const double *__restrict__ x, int64_t columns, int64_t num_vectors,
            double *__restrict__ x4)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t column = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; column < columns;
         column += stride) {
        double v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            v[j] = j < num_vectors ? x[j * columns + column] : 0.0;
        }
        double2 *to = reinterpret_cast<double2 *>(x4 + column * 4);
        to[0] = make_double2(v[0], v[1]);
        to[1] = make_double2(v[2], v[3]);
    }
}

/* The grid of a tiles kernel whose warps take `rows_a_warp` rows at a
 * time: blockIdx.y walks the tiles. */
dim3 tiles_grid(const spart_device_csr &matrix, int64_t rows_a_warp, int64_t num_vectors)
{
    const int64_t warps = (matrix.num_rows + rows_a_warp - 1) / rows_a_warp;
    const int64_t tiles = (num_vectors + 7) / 8;
    return dim3((unsigned)blocks_for(warps, threads_per_block / 32),
                (unsigned)(tiles < max_blocks_y ? tiles : max_blocks_y));
}

/* product_tiles_by_quads with ROWS steps of rows at once and UNROLL
 * entries a chain a round: 8 entries a lane in flight (chains x ROWS x
 * UNROLL; rows of 1 to 2 entries a lane, the plan's g, one round). */
template <typename Value, typename Column, int G, int ROWS, int UNROLL>
cudaError_t launch_by_quads(const spart_device_csr &matrix, const Column *columns,
                            const Value *values, const double *x_tiles, int64_t num_vectors,
                            double *y, cudaStream_t stream)
{
    const dim3 grid = tiles_grid(matrix, ROWS * quad_rows_a_step<G>(), num_vectors);
    return launch(product_tiles_by_quads<Value, Column, G, ROWS, UNROLL>, grid, stream, matrix,
                  columns, values, x_tiles, num_vectors, y);
}

template <typename Value, typename Column, int G>
cudaError_t launch_by_thread(const spart_device_csr &matrix, const Column *columns,
                             const Value *values, const double *x_tiles, int64_t num_vectors,
                             double *y, cudaStream_t stream)
{
    const dim3 grid = tiles_grid(matrix, thread_rows_a_trip, num_vectors);
    return launch(product_tiles_by_thread<Value, Column, G>, grid, stream, matrix, columns, values,
                  x_tiles, num_vectors, y);
}

/* The kernel for the matrix's rows (see the file's comment). Measured on
 * an H200, 8 vectors (docs/benchmarks.md in git history, "Eight vectors by quads of
 * lanes"): the transpose of CTIS b (rows of 16, g = 16) took 0.55 ms by
 * quads of four rows a step and 0.25 by thread; its forward operator (59
 * entries a row, g = 32) 0.46 by quads and 0.38-0.39 pipelined. */
template <typename Value, typename Column>
cudaError_t launch_for_rows(const spart_device_csr &matrix, const Column *columns,
                            const Value *values, const double *x_tiles, int64_t num_vectors,
                            double *y, cudaStream_t stream)
{
    const int g = matrix.group_size;
    if (spart_device_rows_fit_one_round(&matrix)) {
        switch (g) {
        case 2:
            return launch_by_thread<Value, Column, 2>(matrix, columns, values, x_tiles, num_vectors,
                                                      y, stream);
        case 4:
            return launch_by_thread<Value, Column, 4>(matrix, columns, values, x_tiles, num_vectors,
                                                      y, stream);
        case 8:
            return launch_by_thread<Value, Column, 8>(matrix, columns, values, x_tiles, num_vectors,
                                                      y, stream);
        default:
            return launch_by_thread<Value, Column, 16>(matrix, columns, values, x_tiles,
                                                       num_vectors, y, stream);
        }
    }
    /* Short rows (fewer than 64 entries on average) at g = 32: at most 2 g
     * in most warps. A matrix without entries reads none (by quads). */
    if (g == 32 && matrix.num_entries > 0) {
        const dim3 grid = tiles_grid(matrix, 32, num_vectors);
        return launch(product_tiles_pipelined<Value, Column, 32>, grid, stream, matrix, columns,
                      values, x_tiles, num_vectors, y);
    }
    switch (g) {
    case 1:
        return launch_by_quads<Value, Column, 1, 4, 2>(matrix, columns, values, x_tiles,
                                                       num_vectors, y, stream);
    case 2:
        return launch_by_quads<Value, Column, 2, 4, 2>(matrix, columns, values, x_tiles,
                                                       num_vectors, y, stream);
    case 4:
        return launch_by_quads<Value, Column, 4, 4, 2>(matrix, columns, values, x_tiles,
                                                       num_vectors, y, stream);
    case 8:
        return launch_by_quads<Value, Column, 8, 4, 2>(matrix, columns, values, x_tiles,
                                                       num_vectors, y, stream);
    case 16:
        return launch_by_quads<Value, Column, 16, 4, 1>(matrix, columns, values, x_tiles,
                                                        num_vectors, y, stream);
    default:
        return launch_by_quads<Value, Column, 32, 1, 2>(matrix, columns, values, x_tiles,
                                                        num_vectors, y, stream);
    }
}

} // namespace

extern "C" int spart_cuda_pack_tiles(const double *x, int64_t num_columns, int64_t num_vectors,
                                     double *x_tiles, void *stream)
{
    const int64_t tiles = (num_vectors + 7) / 8;
    if (tiles * num_columns == 0) {
        return cudaSuccess;
    }
    const unsigned blocks = (unsigned)blocks_for(tiles * num_columns, threads_per_block);
    return launch(pack_tiles, dim3(blocks), static_cast<cudaStream_t>(stream), x, num_columns,
                  num_vectors, x_tiles);
}

extern "C" int spart_cuda_pack_x4(const double *x, int64_t num_columns, int64_t num_vectors,
                                  double *x4, void *stream)
{
    if (num_columns == 0 || num_vectors <= 0) {
        return cudaSuccess;
    }
    const unsigned blocks = (unsigned)blocks_for(num_columns, threads_per_block);
    return launch(pack_x4, dim3(blocks), static_cast<cudaStream_t>(stream), x, num_columns,
                  num_vectors, x4);
}

extern "C" int spart_cuda_csr_product_short_rows_in_tiles(const spart_device_csr *matrix,
                                                          const double *x_tiles,
                                                          int64_t num_vectors, double *y,
                                                          void *stream)
{
    if (!spart_device_rows_are_short(matrix)) {
        return cudaErrorInvalidValue; /* never: the caller asks first */
    }
    if (num_vectors <= 0) {
        return cudaSuccess;
    }
    const spart_device_csr &m = *matrix;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (m.values64 != nullptr && m.columns32 != nullptr) {
        return launch_for_rows(m, m.columns32, m.values64, x_tiles, num_vectors, y, s);
    }
    if (m.values64 != nullptr) {
        return launch_for_rows(m, m.columns64, m.values64, x_tiles, num_vectors, y, s);
    }
    if (m.columns32 != nullptr) {
        return launch_for_rows(m, m.columns32, m.values32, x_tiles, num_vectors, y, s);
    }
    return launch_for_rows(m, m.columns64, m.values32, x_tiles, num_vectors, y, s);
}
