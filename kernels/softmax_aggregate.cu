/*
 * kernels/softmax_aggregate.cu: the softmax and the aggregation in one
 * pass on a CUDA device, twin of spart_softmax_host_aggregate in
 * host/softmax.c (same operations, same order:
 * src/softmax/softmax_kernels.h).
 *
 * Rows of up to 32 edges (most rows of a power-law graph) go to a warp
 * each (aggregate_short_rows). Longer rows up to a chunk: a block a row (of
 * H F threads rounded up to warps, 64 to 256: aggregate_threads). Its
 * warps first find each head's M and inv (a group of
 * 32 threads a block of heads, as the forward's groups); then the row
 * goes by in rounds of 32 edges: the block computes o = exp(s - M) * inv
 * of the round's edges and heads into shared memory (and writes them to
 * `out` when asked), then each thread, one output value (head h, feature
 * f) a thread, adds o * X[col, h, f] of edge k of the round into its lane
 * k: lane k of the order holds edges k, k + 32, ..., as the order wants,
 * and the lanes combine in the order's tree in the thread's registers.
 * Rows of more than a chunk go by windows: the forward's chunk kernels
 * find M and inv, a block a chunk sums its part into the chunk's slot,
 * and one thread a value adds the chunks' parts in chunk order.
 */
#include "softmax.cuh"

namespace
{
using namespace spart_softmax;

/* Shared memory of a block: per head M, inv and the kind (as doubles),
 * the round's o (32 x H) and the round's columns (32). */
struct block_tiles {
    double *m;
    double *inv;
    double *kind;
    double *o;
    int64_t *columns;
};

__device__ block_tiles tiles_of(double *shared, int64_t H)
{
    block_tiles t;
    t.m = shared;
    t.inv = shared + H;
    t.kind = shared + 2 * H;
    t.o = shared + 3 * H;
    t.columns = (int64_t *)(shared + 3 * H + LANES * H);
    return t;
}

size_t shared_bytes(int64_t H)
{
    return (size_t)(3 * H + LANES * H) * sizeof(double) + LANES * sizeof(int64_t);
}

/* The aggregation's view of the call. */
template <typename V> struct gather_view {
    const V *scores;
    const V *features;
    V *aggregated;
    V *out; /* or NULL */
    const int64_t *columns;
    const int32_t *columns32;
    int64_t width;
};

/* The rounds of 32 edges of [begin, begin + n), with M, inv and the kind
 * of each head in the tiles: acc[k] of the thread's value u = h F + f
 * (u < H F) += o * X[col, h, f] for edge k of each round. Every thread of
 * the block calls it. out is written when write_out. */
template <typename V>
__device__ void gather_rounds(const rows_view &v, const gather_view<V> &a, const block_tiles &t,
                              int64_t begin, int64_t n, int64_t u, bool write_out,
                              double (&acc)[LANES])
{
    const int64_t H = v.heads, F = a.width;
#pragma unroll
    for (int k = 0; k < LANES; k++) {
        acc[k] = 0.0;
    }
    for (int64_t base = 0; base < n; base += LANES) {
        const int64_t round = n - base < LANES ? n - base : LANES;
        for (int64_t w = threadIdx.x; w < round * H; w += blockDim.x) {
            const int64_t k = w / H, h = w % H, at = (begin + base + k) * H + h;
            const int kind = (int)t.kind[h];
            double o = kind == ROW_ZERO ? 0.0 : quiet_nan();
            if (kind == ROW_FINITE) {
                o = __dmul_rn(spart_exp((double)a.scores[at] - t.m[h]), t.inv[h]);
            }
            t.o[w] = o;
            if (write_out) {
                store(a.out, at, o);
            }
        }
        for (int64_t k = threadIdx.x; k < round; k += blockDim.x) {
            const int64_t e = begin + base + k;
            t.columns[k] = a.columns != nullptr ? a.columns[e] : (int64_t)a.columns32[e];
        }
        __syncthreads();
        if (u < H * F) {
            const int64_t h = u / F, f = u % F;
#pragma unroll
            for (int k = 0; k < LANES; k++) {
                if (k < round) {
                    const double x = (double)a.features[(t.columns[k] * H + h) * F + f];
                    acc[k] = __fma_rn(t.o[k * H + h], x, acc[k]);
                }
            }
        }
        __syncthreads();
    }
}

/* The order's tree on a thread's 32 lanes. */
__device__ double lanes_tree(double (&acc)[LANES])
{
    return tree_in_registers<LANES>(acc);
}

/* M, inv and the kind of each head of the row [b, b + n) (n <= a chunk)
 * into the tiles: warp w takes the head blocks w, w + 8, ... */
template <typename V, int HB>
__device__ void row_stats(const rows_view &v, const V *scores, int64_t b, int64_t n,
                          const block_tiles &t)
{
    constexpr int S = 32 / HB;
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB;
    for (int64_t block = threadIdx.x / 32; block < blocks; block += blockDim.x / 32) {
        const int64_t h = block * HB + g.hl;
        double m = -(double)INFINITY, sum = 0.0, terms[LANES / S];
        if (n > 0) {
            sum = chunk_sum<V, HB, S>(g, scores, v.heads, h, b, n, &m, terms);
        }
        if (g.j == 0) {
            t.m[h] = m;
            t.inv[h] = 1.0 / sum;
            t.kind[h] = (double)kind_of(m);
        }
    }
    __syncthreads();
}

template <typename V, int HB> __global__ void aggregate_rows(rows_view v, gather_view<V> a)
{
    extern __shared__ double shared[];
    const block_tiles t = tiles_of(shared, v.heads);
    const int64_t H = v.heads, F = a.width;
    for (int64_t r = blockIdx.x; r < v.rows; r += gridDim.x) {
        const int64_t b = row_start(v, r), n = row_start(v, r + 1) - b;
        if (n > CHUNK || n <= LANES) {
            continue; /* the same for the whole block; short rows: aggregate_short_rows */
        }
        row_stats<V, HB>(v, a.scores, b, n, t);
        for (int64_t u0 = 0; u0 < H * F; u0 += blockDim.x) {
            const int64_t u = u0 + threadIdx.x;
            double acc[LANES];
            gather_rounds<V>(v, a, t, b, n, u, a.out != nullptr && u0 == 0, acc);
            if (u < H * F) {
                const int kind = (int)t.kind[u / F];
                const double y = lanes_tree(acc);
                store(a.aggregated, r * H * F + u,
                      kind == ROW_FINITE ? y : (kind == ROW_ZERO ? 0.0 : quiet_nan()));
            }
        }
        __syncthreads();
    }
}

/* Doubles of shared memory a warp of aggregate_short_rows holds: the
 * tiles of one row (tiles_of). */
__host__ __device__ int64_t warp_tile_doubles(int64_t H)
{
    return 3 * H + LANES * H + LANES;
}

/* Rows of at most LANES edges (empty ones too), a warp each: most rows of
 * a power-law graph, which a block a row (aggregate_rows) walked with its
 * block barriers. The warp finds each head's M and inv with the groups of
 * row_stats, computes the row's o into its own tiles (writing `out` when
 * asked), then each thread sums its values u = lane, lane + 32, ... < H F
 * as gather_rounds does in its one round: edge k in lane k of the order,
 * the order's tree. The same operations, so the same bits. */
template <typename V, int HB> __global__ void aggregate_short_rows(rows_view v, gather_view<V> a)
{
    extern __shared__ double shared[];
    constexpr int S = 32 / HB;
    const int64_t H = v.heads, F = a.width, head_blocks = H / HB;
    const int64_t warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const block_tiles t = tiles_of(shared + warp * warp_tile_doubles(H), H);
    const group_lanes<HB, S> g;
    for (int64_t r = (int64_t)blockIdx.x * warps + warp; r < v.rows;
         r += (int64_t)gridDim.x * warps) {
        const int64_t b = row_start(v, r), n = row_start(v, r + 1) - b;
        if (n > LANES) {
            continue; /* the same for the whole warp */
        }
        for (int64_t block = 0; block < head_blocks; block++) {
            const int64_t h = block * HB + g.hl;
            double m = -(double)INFINITY, sum = 0.0, terms[LANES / S];
            if (n > 0) {
                sum = chunk_sum<V, HB, S>(g, a.scores, H, h, b, n, &m, terms);
            }
            if (g.j == 0) {
                t.m[h] = m;
                t.inv[h] = 1.0 / sum;
                t.kind[h] = (double)kind_of(m);
            }
        }
        __syncwarp();
        for (int64_t w = lane; w < n * H; w += 32) {
            const int64_t k = w / H, h = w % H, at = (b + k) * H + h;
            const int kind = (int)t.kind[h];
            double o = kind == ROW_ZERO ? 0.0 : quiet_nan();
            if (kind == ROW_FINITE) {
                o = __dmul_rn(spart_exp((double)a.scores[at] - t.m[h]), t.inv[h]);
            }
            t.o[w] = o;
            if (a.out != nullptr) {
                store(a.out, at, o);
            }
        }
        if (lane < n) {
            t.columns[lane] =
                a.columns != nullptr ? a.columns[b + lane] : (int64_t)a.columns32[b + lane];
        }
        __syncwarp();
        for (int64_t u = lane; u < H * F; u += 32) {
            const int64_t h = u / F, f = u % F;
            double acc[LANES];
#pragma unroll
            for (int k = 0; k < LANES; k++) {
                acc[k] = 0.0;
            }
#pragma unroll
            for (int k = 0; k < LANES; k++) {
                if (k < n) {
                    const double x = (double)a.features[(t.columns[k] * H + h) * F + f];
                    acc[k] = __fma_rn(t.o[k * H + h], x, acc[k]);
                }
            }
            const int kind = (int)t.kind[h];
            const double y = lanes_tree(acc);
            store(a.aggregated, r * H * F + u,
                  kind == ROW_FINITE ? y : (kind == ROW_ZERO ? 0.0 : quiet_nan()));
        }
        __syncwarp();
    }
}

/* A block a window slot holding a chunk of a long row: its part of the
 * sums into the slot's fields SLOT_STATS + f of each head. */
template <typename V> __global__ void aggregate_chunks(rows_view v, gather_view<V> a, double *slots)
{
    extern __shared__ double shared[];
    const block_tiles t = tiles_of(shared, v.heads);
    const int64_t H = v.heads, F = a.width;
    for (int64_t slot = blockIdx.x; slot < v.slots; slot += gridDim.x) {
        window_chunk c;
        if (!chunk_in_slot(v, slot / 2, (int)(slot % 2), &c)) {
            continue;
        }
        for (int64_t h = threadIdx.x; h < H; h += blockDim.x) {
            const double *home = slots + (c.home * H + h) * v.slot_doubles;
            t.m[h] = home[2];
            t.inv[h] = home[3];
            t.kind[h] = (double)kind_of(home[2]);
        }
        __syncthreads();
        for (int64_t u0 = 0; u0 < H * F; u0 += blockDim.x) {
            const int64_t u = u0 + threadIdx.x;
            double acc[LANES];
            gather_rounds<V>(v, a, t, c.begin, c.length, u, a.out != nullptr && u0 == 0, acc);
            if (u < H * F) {
                const double part = lanes_tree(acc);
                slots[(slot * H + u / F) * v.slot_doubles + SLOT_STATS + u % F] = part;
            }
        }
        __syncthreads();
    }
}

/* One thread a value of a long row (at its chunk 0's slot): the chunks'
 * parts added in chunk order. */
template <typename V>
__global__ void aggregate_combine(rows_view v, gather_view<V> a, const double *slots)
{
    const int64_t H = v.heads, F = a.width;
    for (int64_t item = spart_launch::first_item(); item < v.slots * H * F;
         item += spart_launch::item_stride()) {
        const int64_t slot = item / (H * F), u = item % (H * F), h = u / F, f = u % F;
        window_chunk c;
        if (!chunk_in_slot(v, slot / 2, (int)(slot % 2), &c) || !c.first) {
            continue;
        }
        const int64_t chunks = (c.row_length + CHUNK - 1) / CHUNK;
        const int kind = kind_of(slots[(slot * H + h) * v.slot_doubles + 2]);
        double y = kind == ROW_ZERO ? 0.0 : quiet_nan();
        if (kind == ROW_FINITE) {
            y = slots[(slot * H + h) * v.slot_doubles + SLOT_STATS + f];
            for (int64_t k = 1; k < chunks; k++) {
                const int64_t at = slot_of_chunk(c.row_begin, k);
                y = __dadd_rn(y, slots[(at * H + h) * v.slot_doubles + SLOT_STATS + f]);
            }
        }
        const int64_t row = row_holding(v, c.row_begin);
        store(a.aggregated, row * H * F + u, y);
    }
}

/* Threads of an aggregation block: one a value (head, feature) of a row,
 * H F rounded up to whole warps, at least 64 (the round's o are computed by
 * all of them) and at most 256. Round 8 (H200) ran every block at 256
 * threads: with H F = 64 three quarters of them idled through each row's
 * gather and barriers, and fewer blocks shared a multiprocessor. Every loop
 * of the kernels strides by blockDim.x, so the shape changes who computes
 * what, never the order. */
int aggregate_threads(int64_t values)
{
    const int64_t warps = (values + 31) / 32;
    const int64_t threads = 32 * warps;
    return (int)(threads < 64
                     ? 64
                     : (threads > spart_launch::threads_per_block ? spart_launch::threads_per_block
                                                                  : threads));
}

/* Launch a block kernel of `threads` threads with `bytes` of shared memory
 * on `blocks` blocks. */
template <typename... Parameters, typename... Arguments>
cudaError_t launch_blocks(void (*kernel)(Parameters...), int64_t blocks, int threads, size_t bytes,
                          cudaStream_t stream, Arguments... arguments)
{
    if (blocks <= 0) {
        return cudaSuccess;
    }
    cudaLaunchConfig_t config = {};
    config.gridDim =
        dim3((unsigned)(blocks < spart_launch::max_blocks_items ? blocks
                                                                : spart_launch::max_blocks_items));
    config.blockDim = dim3((unsigned)threads);
    config.dynamicSmemBytes = bytes;
    config.stream = stream;
    if (bytes > 48 * 1024) {
        cudaError_t error =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        if (error != cudaSuccess) {
            return error;
        }
    }
    return cudaLaunchKernelEx(&config, kernel, arguments...);
}

template <typename V, int HB>
cudaError_t aggregate_shaped(const rows_view &v, const gather_view<V> &a, double *slots,
                             cudaStream_t stream)
{
    const size_t bytes = shared_bytes(v.heads);
    const int threads = aggregate_threads(v.heads * a.width);
    /* rows of up to 32 edges: warps of 4 a block, fewer where their tiles
     * would pass 48 KiB */
    const size_t warp_bytes = (size_t)warp_tile_doubles(v.heads) * sizeof(double);
    int64_t warps = (int64_t)(48 * 1024 / warp_bytes);
    warps = warps < 1 ? 1 : (warps > 4 ? 4 : warps);
    cudaError_t error = launch_blocks(aggregate_short_rows<V, HB>, (v.rows + warps - 1) / warps,
                                      (int)(32 * warps), (size_t)warps * warp_bytes, stream, v, a);
    if (error == cudaSuccess) {
        error = launch_blocks(aggregate_rows<V, HB>, v.rows, threads, bytes, stream, v, a);
    }
    if (error != cudaSuccess || v.edges <= CHUNK) {
        return error;
    }
    constexpr int SL = 32 / HB;
    const int64_t slot_groups = v.slots * (v.heads / HB);
    error = launch_groups<HB, SL>(forward_chunk_stats<V, HB, SL>, slot_groups, stream, v, a.scores,
                                  slots);
    if (error == cudaSuccess) {
        error =
            launch_groups<HB, SL>(forward_combine<HB, SL, false>, slot_groups, stream, v, slots);
    }
    if (error == cudaSuccess) {
        error = launch_blocks(aggregate_chunks<V>, v.slots, threads, bytes, stream, v, a, slots);
    }
    if (error == cudaSuccess) {
        error = spart_launch::launch_items(aggregate_combine<V>, v.slots * v.heads * a.width,
                                           stream, v, a, (const double *)slots);
    }
    return error;
}

template <typename V>
cudaError_t aggregate_typed(const spart_softmax_problem *p, const gather_view<V> &a, double *slots,
                            cudaStream_t stream)
{
    const rows_view v = view_of(p, p->width);
    switch (heads_per_group(v.heads)) {
    case 8: return aggregate_shaped<V, 8>(v, a, slots, stream);
    case 4: return aggregate_shaped<V, 4>(v, a, slots, stream);
    case 2: return aggregate_shaped<V, 2>(v, a, slots, stream);
    default: return aggregate_shaped<V, 1>(v, a, slots, stream);
    }
}

} // namespace

extern "C" int spart_softmax_device_aggregate(const spart_softmax_problem *problem,
                                              const void *scores, const void *features,
                                              void *aggregated, void *out, double *workspace,
                                              void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (problem->is_float32) {
        gather_view<float> a{(const float *)scores, (const float *)features, (float *)aggregated,
                             (float *)out,          problem->columns,        problem->columns32,
                             problem->width};
        return (int)aggregate_typed<float>(problem, a, workspace, st);
    }
    gather_view<double> a{(const double *)scores, (const double *)features, (double *)aggregated,
                          (double *)out,          problem->columns,         problem->columns32,
                          problem->width};
    return (int)aggregate_typed<double>(problem, a, workspace, st);
}
