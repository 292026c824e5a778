/*
 * kernels/softmax.cu: the segmented softmax, its backward and the
 * aggregation on a CUDA device, twin of host/softmax.c (same operations,
 * same order: src/softmax/softmax_kernels.h).
 *
 * Groups. A row (or a chunk of a long row) and a block of HB heads (the
 * largest power of two up to 8 dividing H) go to a group of T = HB * S
 * threads of one warp: thread (j, hl), lane j * HB + hl of the group,
 * works head hl of the block and the edge lanes j, j + S, j + 2S, ... of
 * the order's 32 lanes (S = 4, 8, 16 or 32: A = 32 / S lanes a thread, in
 * registers). So the group reads the row's scores as they lie, T
 * consecutive values at a time, and a lane's terms still come in its
 * order (edges l, l + 32, ...). The tree of the order: lane l += lane
 * l + d for d = 16 .. S inside each thread (acc[k] += acc[k + d / S]),
 * then for d = S/2 .. 1 across threads by __shfl_down_sync (thread j gets
 * thread j + d's value, exactly lane l + d's). S changes the speed, never
 * the bits. A row of at most 32 edges keeps its terms in registers from
 * the sum to the write; a longer one computes them again.
 *
 * That is design 0 of the forward (and the backward's layout); the
 * forward's default is design 2 (kernels/softmax_blocks.cuh), and design 1
 * is kept beside it (kernels/softmax_tiles.cuh): the same bits, see
 * forward_design.
 *
 * Long rows (more than SPART_SOFTMAX_CHUNK_EDGES edges) are skipped by the
 * row kernels and done by window kernels (the windows of
 * softmax_kernels.h, so no list of long rows is needed and nothing waits
 * for the host): chunk results into the window slots, one group a long
 * row combines them in chunk order, then the chunks are written.
 *
 * Every fma is __fma_rn and every addition __dadd_rn (the file is also
 * built with --fmad=false); no atomics in a result.
 */
#include "softmax.cuh"
#include "softmax_blocks.cuh"

namespace
{
using namespace spart_softmax;

/* The forward's layout: 2 a block a chunk of more than 512 edges
 * (kernels/softmax_blocks.cuh, the default since the H200's round 6 of
 * 2026-12-02: 1.2-2.7x design 0, 1.4-2.3x design 1), 1 the tiles' lists
 * (kernels/softmax_tiles.cuh), 0 a group of HB x S threads every row
 * (forward_rows, the first design). Set only by the benchmark's hook
 * spart_softmax_bench_set_forward_design; the bits are the same. 3 and 4
 * (the benchmark only, wrong results): designs 1 and 2 without their long
 * rows, to time the parts apart. */
int forward_design = 2;

/* ---- the forward ---------------------------------------------------------------------------- */

/* The chunks of long rows: a group of
 * T = 32 HB threads an item (a row or chunk and a block of HB heads), S =
 * 32: thread j is lane j of the order, its edges j, j + 32, ... in order.
 * The item goes by in rounds of 512 edges (16 a lane), each round's loads
 * all issued before they are used; a row of one round keeps its scores
 * and then its terms in registers (read once, each exp computed once), a
 * longer one reads them again for the sum and the write. The lanes meet
 * in shared memory, where every thread of a head takes the largest score
 * or runs the order's tree on the 32 of its head. A group may span warps:
 * it meets at __syncthreads, so every thread of a block calls the helpers
 * below the same number of times (a thread without an item with n = 0). */
constexpr int ROUND_CACHE = 16;
constexpr int64_t ROUND_EDGES = (int64_t)LANES * ROUND_CACHE;

template <int HB> struct lane_block {
    static constexpr int T = LANES * HB;
    static constexpr int GROUPS = spart_launch::threads_per_block / T;
    int group;
    int j;         /* the lane */
    int hl;        /* the head within the block */
    int head_base; /* shared[head_base + l HB] is lane l of this head */
    __device__ lane_block()
    {
        const int t = (int)threadIdx.x % T;
        group = (int)threadIdx.x / T;
        j = t / HB;
        hl = t % HB;
        head_base = group * T + hl;
    }
    /* The largest of the head's 32 lane values (NaN-propagating). */
    __device__ double max_of_lanes(double *shared, double local) const
    {
        shared[threadIdx.x] = local;
        __syncthreads();
        double m = -(double)INFINITY;
        for (int l = 0; l < LANES; l++) {
            m = nan_max(m, shared[head_base + l * HB]);
        }
        __syncthreads();
        return m;
    }
    /* The order's tree on the head's 32 lane sums. */
    __device__ double tree_of_lanes(double *shared, double acc) const
    {
        shared[threadIdx.x] = acc;
        __syncthreads();
        double lanes[LANES];
#pragma unroll
        for (int l = 0; l < LANES; l++) {
            lanes[l] = shared[head_base + l * HB];
        }
        __syncthreads();
        return tree_in_registers<LANES>(lanes);
    }
};

/* The item [begin, begin + n) (n <= a chunk) of head h: its largest score
 * into *m_out and its sum of exp(s - m) (0 when m = -inf); with n <= 512
 * the terms stay in `cache` (edge j + 32 k in cache[k]). */
template <typename V, int HB>
__device__ double lanes_chunk_sum(const lane_block<HB> &lb, double *shared,
                                  const V *__restrict__ scores, int64_t H, int64_t h, int64_t begin,
                                  int64_t n, double *m_out, double (&cache)[ROUND_CACHE])
{
    V local = -(V)INFINITY;
#pragma unroll
    for (int k = 0; k < ROUND_CACHE; k++) {
        const int64_t i = lb.j + (int64_t)LANES * k;
        cache[k] = 0.0;
        if (i < n) {
            const V x = scores[(begin + i) * H + h];
            cache[k] = (double)x;
            local = nan_max(local, x);
        }
    }
    for (int64_t base = ROUND_EDGES; base < n; base += ROUND_EDGES) {
#pragma unroll
        for (int k = 0; k < ROUND_CACHE; k++) {
            const int64_t i = base + lb.j + (int64_t)LANES * k;
            if (i < n) {
                local = nan_max(local, scores[(begin + i) * H + h]);
            }
        }
    }
    const double m = lb.max_of_lanes(shared, (double)local);
    *m_out = m;
    double acc = 0.0;
    if (m != -(double)INFINITY) {
#pragma unroll
        for (int k = 0; k < ROUND_CACHE; k++) {
            const int64_t i = lb.j + (int64_t)LANES * k;
            if (i < n) {
                const double term = spart_exp(cache[k] - m);
                cache[k] = term;
                acc = __dadd_rn(acc, term);
            }
        }
        for (int64_t base = ROUND_EDGES; base < n; base += ROUND_EDGES) {
            double x[ROUND_CACHE];
#pragma unroll
            for (int k = 0; k < ROUND_CACHE; k++) {
                const int64_t i = base + lb.j + (int64_t)LANES * k;
                x[k] = i < n ? (double)scores[(begin + i) * H + h] : 0.0;
            }
#pragma unroll
            for (int k = 0; k < ROUND_CACHE; k++) {
                if (base + lb.j + (int64_t)LANES * k < n) {
                    acc = __dadd_rn(acc, spart_exp(x[k] - m));
                }
            }
        }
    }
    return lb.tree_of_lanes(shared, acc);
}

/* Write the item [begin, begin + n) of head h from the cached terms (n <=
 * 512 and `cached`) or from exp(s - m) again. */
template <typename V, int HB>
__device__ void lanes_write(const lane_block<HB> &lb, const V *scores, V *out, int64_t H, int64_t h,
                            int64_t begin, int64_t n, int kind, double m, double inv,
                            const double (&cache)[ROUND_CACHE], bool cached)
{
    for (int64_t base = 0; base < n; base += ROUND_EDGES) {
#pragma unroll
        for (int k = 0; k < ROUND_CACHE; k++) {
            const int64_t i = base + lb.j + (int64_t)LANES * k;
            if (i < n) {
                const int64_t at = (begin + i) * H + h;
                double value = kind == ROW_ZERO ? 0.0 : quiet_nan();
                if (kind == ROW_FINITE) {
                    const double term = cached ? cache[k] : spart_exp((double)scores[at] - m);
                    value = __dmul_rn(term, inv);
                }
                store(out, at, value);
            }
        }
    }
}

/* The chunks of long rows: (m_c, s_c) into the slots. */
template <typename V, int HB, bool NOTED>
__global__ void forward_lane_chunk_stats(rows_view v, const V *scores, double *slots)
{
    __shared__ double shared[spart_launch::threads_per_block];
    const lane_block<HB> lb;
    const int64_t blocks = v.heads / HB, items = v.slots * blocks;
    for (int64_t first = (int64_t)blockIdx.x * lb.GROUPS; first < items;
         first += (int64_t)gridDim.x * lb.GROUPS) {
        const int64_t item = first + lb.group;
        int64_t slot = 0, h = 0;
        window_chunk c;
        c.begin = 0;
        c.length = 0;
        if (item < items) {
            slot = item / blocks;
            h = (item % blocks) * HB + lb.hl;
            if (!chunk_here<NOTED>(v, slot, &c)) {
                c.length = 0;
            }
        }
        double m, cache[ROUND_CACHE];
        const double sum =
            lanes_chunk_sum<V, HB>(lb, shared, scores, v.heads, h, c.begin, c.length, &m, cache);
        if (c.length > 0 && lb.j == 0) {
            double *stats = slots + (slot * v.heads + h) * v.slot_doubles;
            stats[0] = m;
            stats[1] = sum;
        }
    }
}

/* The chunks of long rows written from their row's M and inv. */
template <typename V, int HB, bool NOTED>
__global__ void forward_lane_chunk_write(rows_view v, const V *scores, V *out, const double *slots)
{
    const lane_block<HB> lb;
    const int64_t blocks = v.heads / HB, items = v.slots * blocks;
    for (int64_t first = (int64_t)blockIdx.x * lb.GROUPS; first < items;
         first += (int64_t)gridDim.x * lb.GROUPS) {
        const int64_t item = first + lb.group;
        window_chunk c;
        if (item >= items || !chunk_here<NOTED>(v, item / blocks, &c)) {
            continue;
        }
        const int64_t h = (item % blocks) * HB + lb.hl;
        const double *home = slots + (c.home * v.heads + h) * v.slot_doubles;
        const double m = home[2], inv = home[3];
        double cache[ROUND_CACHE];
        lanes_write<V, HB>(lb, scores, out, v.heads, h, c.begin, c.length, kind_of(m), m, inv,
                           cache, false);
    }
}

template <typename V, int HB, int S>
__global__ void forward_rows(rows_view v, const V *scores, V *out)
{
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB;
    for (int64_t item = first_group<HB, S>(); item < v.rows * blocks;
         item += group_stride<HB, S>()) {
        const int64_t r = item / blocks, h = (item % blocks) * HB + g.hl;
        const int64_t b = row_start(v, r), n = row_start(v, r + 1) - b;
        if (n == 0 || n > CHUNK) { /* long rows: the window kernels */
            continue;
        }
        double m, terms[LANES / S];
        const double sum = chunk_sum<V, HB, S>(g, scores, v.heads, h, b, n, &m, terms);
        write_chunk<V, HB, S>(g, scores, out, v.heads, h, b, n, kind_of(m), m, 1.0 / sum, terms,
                              n <= LANES);
    }
}

/* ---- the backward --------------------------------------------------------------------------- */

template <typename V, int HB, int S>
__device__ double chunk_dot(const group_lanes<HB, S> &g, const V *__restrict__ out,
                            const V *__restrict__ grad_out, int64_t H, int64_t h, int64_t begin,
                            int64_t n)
{
    constexpr int A = LANES / S;
    double acc[A];
#pragma unroll
    for (int k = 0; k < A; k++) {
        acc[k] = 0.0;
    }
    for (int64_t base = 0; base < n; base += LANES) {
#pragma unroll
        for (int k = 0; k < A; k++) {
            const int64_t i = base + g.j + k * S;
            if (i < n) {
                const int64_t at = (begin + i) * H + h;
                acc[k] = __fma_rn((double)out[at], (double)grad_out[at], acc[k]);
            }
        }
    }
    return g.tree(acc);
}

template <typename V, int HB, int S>
__device__ void write_gradient(const group_lanes<HB, S> &g, const V *out, const V *grad_out,
                               V *grad, int64_t H, int64_t h, int64_t begin, int64_t n, double dot)
{
#pragma unroll 4
    for (int64_t i = g.j; i < n; i += S) {
        const int64_t at = (begin + i) * H + h;
        const double o = (double)out[at], d = __dsub_rn((double)grad_out[at], dot);
        store(grad, at, __dmul_rn(o, d));
    }
}

template <typename V, int HB, int S>
__global__ void backward_rows(rows_view v, const V *out, const V *grad_out, V *grad)
{
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB;
    for (int64_t item = first_group<HB, S>(); item < v.rows * blocks;
         item += group_stride<HB, S>()) {
        const int64_t r = item / blocks, h = (item % blocks) * HB + g.hl;
        const int64_t b = row_start(v, r), n = row_start(v, r + 1) - b;
        if (n == 0 || n > CHUNK) {
            continue;
        }
        const double dot = chunk_dot<V, HB, S>(g, out, grad_out, v.heads, h, b, n);
        write_gradient<V, HB, S>(g, out, grad_out, grad, v.heads, h, b, n, dot);
    }
}

template <typename V, int HB, int S>
__global__ void backward_chunk_dots(rows_view v, const V *out, const V *grad_out, double *slots)
{
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB, count = v.slots;
    for (int64_t item = first_group<HB, S>(); item < count * blocks;
         item += group_stride<HB, S>()) {
        const int64_t slot = item / blocks, h = (item % blocks) * HB + g.hl;
        window_chunk c;
        if (!chunk_in_slot(v, slot / 2, (int)(slot % 2), &c)) {
            continue;
        }
        const double dot = chunk_dot<V, HB, S>(g, out, grad_out, v.heads, h, c.begin, c.length);
        if (g.j == 0) {
            slots[(slot * v.heads + h) * v.slot_doubles + 1] = dot;
        }
    }
}

/* One thread a long row and head (at its chunk 0's slot): the dot, chunk
 * after chunk, into the home slot's field 2. */
__global__ void backward_combine(rows_view v, double *slots)
{
    const int64_t count = v.slots;
    for (int64_t item = spart_launch::first_item(); item < count * v.heads;
         item += spart_launch::item_stride()) {
        const int64_t slot = item / v.heads, h = item % v.heads;
        window_chunk c;
        if (!chunk_in_slot(v, slot / 2, (int)(slot % 2), &c) || !c.first) {
            continue;
        }
        const int64_t chunks = (c.row_length + CHUNK - 1) / CHUNK;
        double dot = slots[(slot * v.heads + h) * v.slot_doubles + 1];
        for (int64_t k = 1; k < chunks; k++) {
            dot = __dadd_rn(
                dot, slots[(slot_of_chunk(c.row_begin, k) * v.heads + h) * v.slot_doubles + 1]);
        }
        slots[(slot * v.heads + h) * v.slot_doubles + 2] = dot;
    }
}

template <typename V, int HB, int S>
__global__ void backward_chunk_write(rows_view v, const V *out, const V *grad_out, V *grad,
                                     const double *slots)
{
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB, count = v.slots;
    for (int64_t item = first_group<HB, S>(); item < count * blocks;
         item += group_stride<HB, S>()) {
        const int64_t slot = item / blocks, h = (item % blocks) * HB + g.hl;
        window_chunk c;
        if (!chunk_in_slot(v, slot / 2, (int)(slot % 2), &c)) {
            continue;
        }
        const double dot = slots[(c.home * v.heads + h) * v.slot_doubles + 2];
        write_gradient<V, HB, S>(g, out, grad_out, grad, v.heads, h, c.begin, c.length, dot);
    }
}

/* The forward with a fixed shape: rows of up to a chunk by groups of
 * HB x S threads, long rows' chunks by lane groups. (Lane groups for every
 * row of more than 32 edges were slower on the H200, round 2 of
 * 2026-12-01: launched over all rows, every block paid their barriers.) */
template <typename V, int HB, int S>
cudaError_t forward_shaped(rows_view v, const V *scores, V *out, double *slots, cudaStream_t stream)
{
    v.slot_rows = slot_rows_of(v, slots);
    if (forward_design == 2 || forward_design == 4) {
        return forward_blocks<V, HB>(v, scores, out, slots, stream, forward_design == 4);
    }
    const int64_t blocks = v.heads / HB;
    cudaError_t error = cudaSuccess;
    if (forward_design != 0) {
        const int64_t tiles = (v.rows + TILE_ROWS - 1) / TILE_ROWS;
        if (tiles > 0) {
            error =
                spart_launch::launch(forward_tiles<V, HB, false, 2>, dim3(blocks_for_items(tiles)),
                                     stream, v, scores, out, (int64_t)CHUNK);
        }
    } else {
        error =
            launch_groups<HB, S>(forward_rows<V, HB, S>, v.rows * blocks, stream, v, scores, out);
    }
    if (error != cudaSuccess || v.edges <= CHUNK || forward_design == 3) {
        return error; /* no row can be long (3: the benchmark's timing of the rows alone) */
    }
    constexpr int SL = 32 / HB;
    const int64_t slot_items = v.slots * blocks;
    if (forward_design == 1) { /* the slots are noted */
        error = launch_groups<HB, LANES>(forward_lane_chunk_stats<V, HB, true>, slot_items, stream,
                                         v, scores, slots);
        if (error == cudaSuccess) {
            error =
                launch_groups<HB, SL>(forward_combine<HB, SL, true>, slot_items, stream, v, slots);
        }
        if (error == cudaSuccess) {
            error = launch_groups<HB, LANES>(forward_lane_chunk_write<V, HB, true>, slot_items,
                                             stream, v, scores, out, (const double *)slots);
        }
        return error;
    }
    error = launch_groups<HB, LANES>(forward_lane_chunk_stats<V, HB, false>, slot_items, stream, v,
                                     scores, slots);
    if (error == cudaSuccess) {
        error = launch_groups<HB, SL>(forward_combine<HB, SL, false>, slot_items, stream, v, slots);
    }
    if (error == cudaSuccess) {
        error = launch_groups<HB, LANES>(forward_lane_chunk_write<V, HB, false>, slot_items, stream,
                                         v, scores, out, (const double *)slots);
    }
    return error;
}

template <typename V, int HB, int S>
cudaError_t backward_shaped(const rows_view &v, const V *out, const V *grad_out, V *grad,
                            double *slots, cudaStream_t stream)
{
    const int64_t blocks = v.heads / HB;
    cudaError_t error = launch_groups<HB, S>(backward_rows<V, HB, S>, v.rows * blocks, stream, v,
                                             out, grad_out, grad);
    if (error != cudaSuccess || v.edges <= CHUNK) {
        return error;
    }
    constexpr int SL = 32 / HB;
    const int64_t windows = spart_softmax_num_windows(v.edges);
    error = launch_groups<HB, SL>(backward_chunk_dots<V, HB, SL>, 2 * windows * blocks, stream, v,
                                  out, grad_out, slots);
    if (error == cudaSuccess) {
        error =
            spart_launch::launch_items(backward_combine, 2 * windows * v.heads, stream, v, slots);
    }
    if (error == cudaSuccess) {
        error = launch_groups<HB, SL>(backward_chunk_write<V, HB, SL>, 2 * windows * blocks, stream,
                                      v, out, grad_out, grad, (const double *)slots);
    }
    return error;
}

/* Dispatch on HB and S (S <= 32 / HB). Op is a functor with a template
 * operator()<HB, S>(). */
template <typename Op> cudaError_t dispatch_shape(int hb, int s, Op op)
{
    switch (hb) {
    case 8: return op.template run<8, 4>();
    case 4: return s >= 8 ? op.template run<4, 8>() : op.template run<4, 4>();
    case 2:
        return s >= 16 ? op.template run<2, 16>()
                       : (s >= 8 ? op.template run<2, 8>() : op.template run<2, 4>());
    default:
        return s >= 32   ? op.template run<1, 32>()
               : s >= 16 ? op.template run<1, 16>()
               : s >= 8  ? op.template run<1, 8>()
                         : op.template run<1, 4>();
    }
}

template <typename V> struct forward_op {
    rows_view v;
    const V *scores;
    V *out;
    double *slots;
    cudaStream_t stream;
    template <int HB, int S> cudaError_t run() const
    {
        return forward_shaped<V, HB, S>(v, scores, out, slots, stream);
    }
};

template <typename V> struct backward_op {
    rows_view v;
    const V *out;
    const V *grad_out;
    V *grad;
    double *slots;
    cudaStream_t stream;
    template <int HB, int S> cudaError_t run() const
    {
        return backward_shaped<V, HB, S>(v, out, grad_out, grad, slots, stream);
    }
};

int64_t mean_row(const spart_softmax_problem *p)
{
    return p->num_rows > 0 ? p->num_edges / p->num_rows : 0;
}

/* ---- checking the rows ---------------------------------------------------------------------- */

__global__ void set_first_bad(int64_t *first_bad, int64_t value)
{
    if (threadIdx.x == 0) {
        *first_bad = value;
    }
}

__global__ void check_rows_kernel(rows_view v, int64_t *first_bad)
{
    for (int64_t r = spart_launch::first_item(); r <= v.rows; r += spart_launch::item_stride()) {
        const int64_t here = row_start(v, r), before = r > 0 ? row_start(v, r - 1) : 0;
        if (here < before || here > v.edges) {
            atomicMin((unsigned long long *)first_bad,
                      (unsigned long long)r); /* a check, not a result */
        }
    }
}

} // namespace

/* ---- entry points --------------------------------------------------------------------------- */

extern "C" int spart_softmax_device_forward(const spart_softmax_problem *problem,
                                            const void *scores, void *out, double *workspace,
                                            void *stream)
{
    const rows_view v = view_of(problem, 0);
    const int hb = heads_per_group(v.heads);
    const int s = edge_lanes(hb, mean_row(problem));
    cudaStream_t st = (cudaStream_t)stream;
    if (problem->is_float32) {
        forward_op<float> op{v, (const float *)scores, (float *)out, workspace, st};
        return (int)dispatch_shape(hb, s, op);
    }
    forward_op<double> op{v, (const double *)scores, (double *)out, workspace, st};
    return (int)dispatch_shape(hb, s, op);
}

extern "C" int spart_softmax_device_backward(const spart_softmax_problem *problem, const void *out,
                                             const void *grad_out, void *grad_scores,
                                             double *workspace, void *stream)
{
    const rows_view v = view_of(problem, 0);
    const int hb = heads_per_group(v.heads);
    const int s = edge_lanes(hb, mean_row(problem));
    cudaStream_t st = (cudaStream_t)stream;
    if (problem->is_float32) {
        backward_op<float> op{
            v, (const float *)out, (const float *)grad_out, (float *)grad_scores, workspace, st};
        return (int)dispatch_shape(hb, s, op);
    }
    backward_op<double> op{
        v, (const double *)out, (const double *)grad_out, (double *)grad_scores, workspace, st};
    return (int)dispatch_shape(hb, s, op);
}

/* The benchmark's hook (tests/bench/bench_softmax.py, through ctypes; not
 * API, so it is exported by name only): which layout the forward takes for
 * rows of up to a chunk (see forward_design). Not thread-safe. */
extern "C" __attribute__((visibility("default"))) void
spart_softmax_bench_set_forward_design(int design)
{
    forward_design = design;
}

extern "C" int spart_softmax_device_check_rows(const spart_softmax_problem *problem,
                                               int64_t *first_bad, void *stream)
{
    const rows_view v = view_of(problem, 0);
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t error = spart_launch::launch(set_first_bad, dim3(1), st, first_bad, v.rows + 1);
    if (error == cudaSuccess) {
        error = spart_launch::launch_items(check_rows_kernel, v.rows + 1, st, v, first_bad);
    }
    return (int)error;
}

extern "C" const char *spart_softmax_device_error_string(int error)
{
    return cudaGetErrorString((cudaError_t)error);
}
