/*
 * kernels/softmax_blocks.cuh: design 2 of the device forward (issue 22,
 * 2026-12-02), included by kernels/softmax.cu: a whole block of 256
 * threads a chunk. Design 1 (the tiles' lists) gave a row of 33 .. 4096
 * edges to one warp and the chunks of long rows to lane groups, whose 32
 * threads walk up to 4096 edges in eight rounds of loads, one memory
 * latency each, twice (max and sum) and again for the write; on the H200
 * (round 5) the rows of up to a chunk took 2.9 ms and the long rows 0.9
 * ms on the products-sized graph, 21 and 7 times the copy floor.
 *
 * Here every chunk of more than 512 edges (a row of 513 .. 4096 edges, or
 * one chunk of a longer row) and one head goes to a block: thread t loads
 * edges t, t + 256, ... (16 loads in flight, one latency), the block takes
 * the largest score, each thread computes its terms once, keeps them in
 * registers and puts them in shared memory, where warp 0 adds them in the
 * order (lane l: edges l, l + 32, ... from +0.0, then the tree) and the
 * block reads the sum back; a row of one chunk is written from the
 * registers (scores read once, each exp once). Long rows: the chunks'
 * (m_c, s_c) into their slots, a block a long row combines them (the
 * chunks' values gathered into shared memory 1024 at a time, the chain in
 * chunk order run from there), and a block a chunk writes it. Rows of up
 * to 512 edges stay with the tiles of design 1. Same order, same bits.
 */
#ifndef SPART_SOFTMAX_BLOCKS_CUH
#define SPART_SOFTMAX_BLOCKS_CUH

#include "softmax_tiles.cuh"

namespace spart_softmax
{

constexpr int BLOCK = spart_launch::threads_per_block;
constexpr int PER_THREAD = (int)(CHUNK / BLOCK);
constexpr int CHAIN_BATCH = 1024;
/* Blocks a multiprocessor the chunk kernels are built for (64 registers a
 * thread; 33 KB of shared memory a block fits 4). Round 6 ran them at 3
 * (72-80 registers). */
constexpr int BLOCKS_A_SM = 4;

struct block_scratch {
    double terms[CHUNK];
    double warp_values[BLOCK / 32];
    double result;
};

/* The chunk [begin, begin + n) (n <= a chunk) of head h by the whole
 * block: its largest score into *m_out and its sum of exp(s - m) in the
 * order (both for every thread); thread t's terms (edges t + 256 k) stay
 * in regs[k]. Every thread of the block calls it. */
template <typename V>
__device__ double block_chunk_sum(block_scratch &sh, const V *__restrict__ scores, int64_t H,
                                  int64_t h, int64_t begin, int64_t n, double *m_out,
                                  double (&regs)[PER_THREAD])
{
    const int t = (int)threadIdx.x, lane = t % 32, warp = t / 32;
    V local = -(V)INFINITY;
#pragma unroll
    for (int k = 0; k < PER_THREAD; k++) {
        const int64_t i = t + (int64_t)BLOCK * k;
        regs[k] = 0.0;
        if (i < n) {
            const V x = scores[(begin + i) * H + h];
            regs[k] = (double)x;
            local = nan_max(local, x);
        }
    }
    for (int d = 16; d > 0; d >>= 1) {
        local = nan_max(local, __shfl_xor_sync(0xffffffffu, local, d));
    }
    if (lane == 0) {
        sh.warp_values[warp] = (double)local;
    }
    __syncthreads();
    double m = sh.warp_values[0];
    for (int w = 1; w < BLOCK / 32; w++) {
        m = nan_max(m, sh.warp_values[w]);
    }
    *m_out = m;
    const bool finite = kind_of(m) == ROW_FINITE;
    if (finite) {
#pragma unroll
        for (int k = 0; k < PER_THREAD; k++) {
            const int64_t i = t + (int64_t)BLOCK * k;
            if (i < n) {
                const double term = spart_exp(regs[k] - m);
                regs[k] = term;
                sh.terms[i] = term;
            }
        }
    }
    __syncthreads();
    if (warp == 0) {
        double acc = 0.0;
        if (finite) {
#pragma unroll 8
            for (int64_t i = lane; i < n; i += 32) {
                acc = __dadd_rn(acc, sh.terms[i]);
            }
        }
        for (int d = 16; d > 0; d >>= 1) {
            acc = __dadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, d));
        }
        if (lane == 0) {
            sh.result = acc;
        }
    }
    __syncthreads();
    const double sum = sh.result;
    __syncthreads(); /* the scratch is free again */
    return sum;
}

/* Rows of 513 .. a chunk edges, found in tiles of 256 rows as
 * forward_tiles finds its lists: a block a row and head, written from the
 * registers. TILE_PARTS blocks share a tile's list (block p of the tile
 * takes its items p, p + TILE_PARTS, ...), so a tile of many such rows
 * does not go one row after another. */
constexpr int TILE_PARTS = 8;

template <typename V>
__global__ void __launch_bounds__(BLOCK, BLOCKS_A_SM)
    forward_block_rows(rows_view v, const V *scores, V *out)
{
    __shared__ block_scratch sh;
    __shared__ int rows[TILE_ROWS];
    __shared__ int warp_counts[TILE_ROWS / 32];
    const int t = (int)threadIdx.x;
    const int part = (int)(blockIdx.x % TILE_PARTS);
    for (int64_t tile = blockIdx.x / TILE_PARTS; tile * TILE_ROWS < v.rows;
         tile += gridDim.x / TILE_PARTS) {
        const int64_t first = tile * TILE_ROWS, r = first + t;
        const int64_t n = r < v.rows ? row_start(v, r + 1) - row_start(v, r) : 0;
        int count;
        tile_list(n > WARP_ROW_MAX && n <= CHUNK, t, rows, &count, warp_counts);
        for (int64_t item = part; item < (int64_t)count * v.heads; item += TILE_PARTS) {
            const int64_t row = first + rows[item / v.heads], h = item % v.heads;
            const int64_t b = row_start(v, row), length = row_start(v, row + 1) - b;
            double m, regs[PER_THREAD];
            const double sum = block_chunk_sum<V>(sh, scores, v.heads, h, b, length, &m, regs);
            const int kind = kind_of(m);
            const double inv = 1.0 / sum;
#pragma unroll
            for (int k = 0; k < PER_THREAD; k++) {
                const int64_t i = t + (int64_t)BLOCK * k;
                if (i < length) {
                    const double value = kind == ROW_FINITE
                                             ? __dmul_rn(regs[k], inv)
                                             : (kind == ROW_ZERO ? 0.0 : quiet_nan());
                    store(out, (b + i) * v.heads + h, value);
                }
            }
        }
        __syncthreads(); /* the list is rewritten by the next tile */
    }
}

/* The chunks of long rows (noted slots): (m_c, s_c), a block a chunk and
 * head. */
template <typename V>
__global__ void __launch_bounds__(BLOCK, BLOCKS_A_SM)
    forward_block_chunk_stats(rows_view v, const V *scores, double *slots)
{
    __shared__ block_scratch sh;
    for (int64_t item = blockIdx.x; item < v.slots * v.heads; item += gridDim.x) {
        const int64_t slot = item / v.heads, h = item % v.heads;
        window_chunk c;
        if (!chunk_in_noted_slot(v, slot / 2, (int)(slot % 2), &c)) {
            continue; /* the same for the whole block */
        }
        double m, regs[PER_THREAD];
        const double sum = block_chunk_sum<V>(sh, scores, v.heads, h, c.begin, c.length, &m, regs);
        if (threadIdx.x == 0) {
            double *stats = slots + (slot * v.heads + h) * v.slot_doubles;
            stats[0] = m;
            stats[1] = sum;
        }
    }
}

/* A block a long row and head (at its chunk 0's slot): M, the chunks'
 * exp(m_c - M) (into field 3), then S = fma(s_c, exp(m_c - M), S) in chunk
 * order by thread 0 from shared memory, CHAIN_BATCH chunks at a time; M
 * and inv = 1 / S into the home slot's fields 2 and 3. */
__global__ void __launch_bounds__(BLOCK) forward_block_combine(rows_view v, double *slots)
{
    __shared__ double s_batch[CHAIN_BATCH], e_batch[CHAIN_BATCH];
    __shared__ double warp_values[BLOCK / 32];
    const int t = (int)threadIdx.x, lane = t % 32, warp = t / 32;
    for (int64_t item = blockIdx.x; item < v.slots * v.heads; item += gridDim.x) {
        const int64_t slot = item / v.heads, h = item % v.heads;
        window_chunk c;
        if (!chunk_in_noted_slot(v, slot / 2, (int)(slot % 2), &c) || !c.first) {
            continue;
        }
        const int64_t chunks = (c.row_length + CHUNK - 1) / CHUNK;
        const int64_t stride = 2 * v.heads * v.slot_doubles;
        double *const second =
            slots + (2 * (c.row_begin / CHUNK + 1) * v.heads + h) * v.slot_doubles;
        double *const home = slots + (slot * v.heads + h) * v.slot_doubles;
        auto stats = [&](int64_t chunk) {
            return chunk == 0 ? home : second + (chunk - 1) * stride;
        };
        double local = -(double)INFINITY;
        for (int64_t k = t; k < chunks; k += BLOCK) {
            local = nan_max(local, stats(k)[0]);
        }
        for (int d = 16; d > 0; d >>= 1) {
            local = nan_max(local, __shfl_xor_sync(0xffffffffu, local, d));
        }
        if (lane == 0) {
            warp_values[warp] = local;
        }
        __syncthreads();
        double m = warp_values[0];
        for (int w = 1; w < BLOCK / 32; w++) {
            m = nan_max(m, warp_values[w]);
        }
        const int kind = kind_of(m);
        double sum = 0.0;
        for (int64_t base = 0; base < chunks; base += CHAIN_BATCH) {
            __syncthreads(); /* the batch before is used up (and warp_values read) */
            for (int j = t; j < CHAIN_BATCH && base + j < chunks; j += BLOCK) {
                double *s = stats(base + j);
                const double e = kind == ROW_FINITE ? spart_exp(s[0] - m) : 0.0;
                if (kind == ROW_FINITE) {
                    s[3] = e;
                }
                s_batch[j] = s[1];
                e_batch[j] = e;
            }
            __syncthreads();
            if (t == 0 && kind == ROW_FINITE) {
                const int64_t in_batch = chunks - base < CHAIN_BATCH ? chunks - base : CHAIN_BATCH;
#pragma unroll 8
                for (int64_t j = 0; j < in_batch; j++) {
                    sum = __fma_rn(s_batch[j], e_batch[j], sum);
                }
            }
        }
        if (t == 0) {
            home[2] = m;
            home[3] = 1.0 / sum;
        }
        __syncthreads();
    }
}

/* The chunks of long rows written from their row's M and inv, a block a
 * chunk and head. */
template <typename V>
__global__ void __launch_bounds__(BLOCK, BLOCKS_A_SM)
    forward_block_chunk_write(rows_view v, const V *scores, V *out, const double *slots)
{
    const int t = (int)threadIdx.x;
    for (int64_t item = blockIdx.x; item < v.slots * v.heads; item += gridDim.x) {
        const int64_t slot = item / v.heads, h = item % v.heads;
        window_chunk c;
        if (!chunk_in_noted_slot(v, slot / 2, (int)(slot % 2), &c)) {
            continue;
        }
        const double *home = slots + (c.home * v.heads + h) * v.slot_doubles;
        const double m = home[2], inv = home[3];
        const int kind = kind_of(m);
        double x[PER_THREAD];
#pragma unroll
        for (int k = 0; k < PER_THREAD; k++) {
            const int64_t i = t + (int64_t)BLOCK * k;
            x[k] = i < c.length ? (double)scores[(c.begin + i) * v.heads + h] : 0.0;
        }
#pragma unroll
        for (int k = 0; k < PER_THREAD; k++) {
            const int64_t i = t + (int64_t)BLOCK * k;
            if (i < c.length) {
                const double value = kind == ROW_FINITE ? __dmul_rn(spart_exp(x[k] - m), inv)
                                                        : (kind == ROW_ZERO ? 0.0 : quiet_nan());
                store(out, (c.begin + i) * v.heads + h, value);
            }
        }
    }
}

/* Blocks for `items` items a block, grid-striding beyond the bound. */
inline unsigned blocks_for_items(int64_t items)
{
    return (unsigned)(items < spart_launch::max_blocks_items ? items
                                                             : spart_launch::max_blocks_items);
}

/* Design 2: the tiles of design 1 for rows of up to 512 edges (and the
 * notes of long rows), a block a row of 513 .. a chunk edges, a block a
 * chunk of a long row. */
template <typename V, int HB>
cudaError_t forward_blocks(const rows_view &v, const V *scores, V *out, double *slots,
                           cudaStream_t stream, bool rows_only)
{
    const int64_t tiles = (v.rows + TILE_ROWS - 1) / TILE_ROWS;
    cudaError_t error = cudaSuccess;
    if (tiles > 0) {
        error = spart_launch::launch(forward_tiles<V, HB, true, 3>, dim3(blocks_for_items(tiles)),
                                     stream, v, scores, out, WARP_ROW_MAX);
        if (error == cudaSuccess) {
            /* a multiple of TILE_PARTS blocks */
            const int64_t parts = tiles * TILE_PARTS;
            const int64_t bound = spart_launch::max_blocks_items / TILE_PARTS * TILE_PARTS;
            error = spart_launch::launch(forward_block_rows<V>,
                                         dim3((unsigned)(parts < bound ? parts : bound)), stream, v,
                                         scores, out);
        }
    }
    if (error != cudaSuccess || v.edges <= CHUNK || rows_only) {
        return error; /* rows_only: the benchmark's timing of the rows alone */
    }
    const dim3 grid(blocks_for_items(v.slots * v.heads));
    error = spart_launch::launch(forward_block_chunk_stats<V>, grid, stream, v, scores, slots);
    if (error == cudaSuccess) {
        error = spart_launch::launch(forward_block_combine, grid, stream, v, slots);
    }
    if (error == cudaSuccess) {
        error = spart_launch::launch(forward_block_chunk_write<V>, grid, stream, v, scores, out,
                                     (const double *)slots);
    }
    return error;
}

} // namespace spart_softmax

#endif /* SPART_SOFTMAX_BLOCKS_CUH */
