/*
 * kernels/softmax_tiles.cuh: design 1 of the device forward's rows of up
 * to a chunk (issue 22, 2026-12-02), included by kernels/softmax.cu and
 * kernels/softmax_blocks.cuh: rows binned in their tile of 256 rows.
 */
#ifndef SPART_SOFTMAX_TILES_CUH
#define SPART_SOFTMAX_TILES_CUH

#include "softmax.cuh"

namespace spart_softmax
{

/* Design 1 (issue 22, 2026-12-02): a block takes a tile of TILE_ROWS
 * consecutive rows, sorts them into two lists in shared memory by length
 * (warp ballots, in row order), and gives
 *  - each short row (1 .. 32 edges) and block of HB heads a group of
 *    HB x 4 threads: 8 lanes of the order a thread, in registers, the
 *    row's scores read once and each exp computed once (chunk_sum);
 *  - each medium row (33 .. a chunk) and head a whole warp, lane j of the
 *    order on thread j, the first WARP_CACHE x 32 edges' terms in
 *    registers (one read, one exp), loads issued WARP_CACHE at a time;
 *    longer rows read their scores again for the sum and the write.
 * The warps take their items without waiting for each other (no block
 * barrier after the lists), so a long row delays only its own warp; rows
 * of more than a chunk are the window kernels', and their chunks' slots are
 * noted here (so the window kernels need no binary search). The order is the same as
 * every other layout's (the contract's lanes and tree), only who computes
 * what changes. */
constexpr int TILE_ROWS = spart_launch::threads_per_block;
constexpr int SHORT_ROW = LANES;
constexpr int WARP_CACHE = 16;
constexpr int64_t WARP_ROUND = (int64_t)LANES * WARP_CACHE;
/* Design 2 gives the tiles' warps rows of up to one round only. */
constexpr int64_t WARP_ROW_MAX = WARP_ROUND;

/* The row [b, b + n) (32 < n <= a chunk), head h, by one warp. */
template <typename V, bool ONE_ROUND>
__device__ void warp_row_forward(const V *__restrict__ scores, V *__restrict__ out, int64_t H,
                                 int64_t h, int64_t b, int64_t n, int lane)
{
    const unsigned full = 0xffffffffu;
    double cache[WARP_CACHE];
    V local = -(V)INFINITY;
#pragma unroll
    for (int k = 0; k < WARP_CACHE; k++) {
        const int64_t i = lane + (int64_t)LANES * k;
        cache[k] = 0.0;
        if (i < n) {
            const V x = scores[(b + i) * H + h];
            cache[k] = (double)x;
            local = nan_max(local, x);
        }
    }
    for (int64_t base = WARP_ROUND; !ONE_ROUND && base < n; base += WARP_ROUND) {
#pragma unroll
        for (int k = 0; k < WARP_CACHE; k++) {
            const int64_t i = base + lane + (int64_t)LANES * k;
            if (i < n) {
                local = nan_max(local, scores[(b + i) * H + h]);
            }
        }
    }
    for (int d = 16; d > 0; d >>= 1) {
        local = nan_max(local, __shfl_xor_sync(full, local, d));
    }
    const double m = (double)local;
    const int kind = kind_of(m);
    double acc = 0.0;
    if (kind == ROW_FINITE) {
#pragma unroll
        for (int k = 0; k < WARP_CACHE; k++) {
            if (lane + (int64_t)LANES * k < n) {
                const double term = spart_exp(cache[k] - m);
                cache[k] = term;
                acc = __dadd_rn(acc, term);
            }
        }
        for (int64_t base = WARP_ROUND; !ONE_ROUND && base < n; base += WARP_ROUND) {
            double x[WARP_CACHE];
#pragma unroll
            for (int k = 0; k < WARP_CACHE; k++) {
                const int64_t i = base + lane + (int64_t)LANES * k;
                x[k] = i < n ? (double)scores[(b + i) * H + h] : 0.0;
            }
#pragma unroll
            for (int k = 0; k < WARP_CACHE; k++) {
                if (base + lane + (int64_t)LANES * k < n) {
                    acc = __dadd_rn(acc, spart_exp(x[k] - m));
                }
            }
        }
    }
    /* the order's tree: lane l += lane l + d, d = 16 .. 1 */
    for (int d = 16; d > 0; d >>= 1) {
        acc = __dadd_rn(acc, __shfl_down_sync(full, acc, d));
    }
    const double inv = 1.0 / __shfl_sync(full, acc, 0);
    for (int64_t base = 0; base < (ONE_ROUND ? 1 : n); base += WARP_ROUND) {
#pragma unroll
        for (int k = 0; k < WARP_CACHE; k++) {
            const int64_t i = base + lane + (int64_t)LANES * k;
            if (i < n) {
                const int64_t at = (b + i) * H + h;
                double value = kind == ROW_ZERO ? 0.0 : quiet_nan();
                if (kind == ROW_FINITE) {
                    const double term = base == 0 ? cache[k] : spart_exp((double)scores[at] - m);
                    value = __dmul_rn(term, inv);
                }
                store(out, at, value);
            }
        }
    }
}

/* Append the rows whose `take` is set to list (in row order; count in
 * *count): one ballot a warp, the warps' counts in `warp_counts`. Every
 * thread of the block calls it. */
__device__ inline void tile_list(bool take, int row_in_tile, int *list, int *count,
                                 int *warp_counts)
{
    const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
    const unsigned ballot = __ballot_sync(0xffffffffu, take);
    if (lane == 0) {
        warp_counts[warp] = __popc(ballot);
    }
    __syncthreads();
    int before = 0, total = 0;
    for (int w = 0; w < TILE_ROWS / 32; w++) {
        before += w < warp ? warp_counts[w] : 0;
        total += warp_counts[w];
    }
    if (take) {
        list[before + __popc(ballot & ((1u << lane) - 1u))] = row_in_tile;
    }
    *count = total;
    __syncthreads();
}

/* ONE_ROUND: the rows of the warps hold at most WARP_ROUND edges (design
 * 2), so the later rounds' registers are not needed. At least MIN_BLOCKS
 * blocks a multiprocessor (round 5: 141 registers a thread, one block). */
template <typename V, int HB, bool ONE_ROUND, int MIN_BLOCKS>
__global__ void __launch_bounds__(TILE_ROWS, MIN_BLOCKS)
    forward_tiles(rows_view v, const V *scores, V *out, int64_t medium_max)
{
    constexpr int S = 4;
    __shared__ int short_rows[TILE_ROWS];
    __shared__ int medium_rows[TILE_ROWS];
    __shared__ int warp_counts[TILE_ROWS / 32];
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB;
    const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
    const int groups = TILE_ROWS / (HB * S), group = (int)threadIdx.x / (HB * S);
    for (int64_t tile = blockIdx.x; tile * TILE_ROWS < v.rows; tile += gridDim.x) {
        const int64_t first = tile * TILE_ROWS;
        const int64_t r = first + threadIdx.x;
        const int64_t b0 = r < v.rows ? row_start(v, r) : 0;
        const int64_t n = r < v.rows ? row_start(v, r + 1) - b0 : 0;
        if (n > CHUNK) {
            note_long_row(v, r, b0, n); /* for the window kernels, read after this launch */
        }
        int shorts, mediums;
        tile_list(n > 0 && n <= SHORT_ROW, (int)threadIdx.x, short_rows, &shorts, warp_counts);
        tile_list(n > SHORT_ROW && n <= medium_max, (int)threadIdx.x, medium_rows, &mediums,
                  warp_counts);
        for (int64_t item = group; item < (int64_t)shorts * blocks; item += groups) {
            const int64_t row = first + short_rows[item / blocks];
            const int64_t h = (item % blocks) * HB + g.hl;
            const int64_t b = row_start(v, row), length = row_start(v, row + 1) - b;
            double m, terms[LANES / S];
            const double sum = chunk_sum<V, HB, S>(g, scores, v.heads, h, b, length, &m, terms);
            write_chunk<V, HB, S>(g, scores, out, v.heads, h, b, length, kind_of(m), m, 1.0 / sum,
                                  terms, true);
        }
        for (int64_t item = warp; item < (int64_t)mediums * v.heads; item += TILE_ROWS / 32) {
            const int64_t row = first + medium_rows[item / v.heads];
            const int64_t b = row_start(v, row), length = row_start(v, row + 1) - b;
            warp_row_forward<V, ONE_ROUND>(scores, out, v.heads, item % v.heads, b, length, lane);
        }
        __syncthreads(); /* the lists are rewritten by the next tile */
    }
}

} // namespace spart_softmax

#endif /* SPART_SOFTMAX_TILES_CUH */
