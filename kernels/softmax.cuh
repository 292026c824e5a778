/*
 * kernels/softmax.cuh: what the softmax's kernels share (kernels/softmax.cu,
 * kernels/softmax_aggregate.cu): the view of the rows, the window slots of
 * long rows' chunks, and a group's lanes with the order of
 * src/softmax/softmax_kernels.h (the chunk's largest score and its sum of
 * exp, the write of a chunk). See kernels/softmax.cu for the groups.
 */
#ifndef SPART_SOFTMAX_CUH
#define SPART_SOFTMAX_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "core/exp_math.h"
#include "softmax/softmax_kernels.h"

#include "csr_row_sum.cuh"
#include "csr_search.cuh"
#include "launch.cuh"

namespace spart_softmax
{

constexpr int64_t CHUNK = SPART_SOFTMAX_CHUNK_EDGES;
constexpr int LANES = SPART_SOFTMAX_LANES;
constexpr int SLOT_STATS = SPART_SOFTMAX_SLOT_STATS;

enum { ROW_FINITE = 0, ROW_ZERO = 1, ROW_NAN = 2 };

__device__ __forceinline__ double quiet_nan()
{
    return __longlong_as_double(0x7ff8000000000000LL);
}

template <typename V> __device__ __forceinline__ void store(V *values, int64_t i, double value)
{
    values[i] = (V)(value != value ? quiet_nan() : value);
}

template <typename V> __device__ __forceinline__ V nan_max(V m, V x)
{
    return (x > m || x != x) ? x : m;
}

__device__ __forceinline__ int kind_of(double m)
{
    if (m != m || m == (double)INFINITY) {
        return ROW_NAN;
    }
    return m == -(double)INFINITY ? ROW_ZERO : ROW_FINITE;
}

/* The problem as the kernels take it (by value). */
struct rows_view {
    int64_t rows;
    int64_t edges;
    int64_t heads;
    const int64_t *row_ptr;
    const int32_t *row_ptr32;
    int64_t slot_doubles; /* per slot and head: SLOT_STATS + width */
    int64_t slots;        /* 2 a window */
    int64_t *slot_rows;   /* after the slots: the forward's notes of long rows */
};

__device__ __forceinline__ int64_t row_start(const rows_view &v, int64_t r)
{
    return v.row_ptr != nullptr ? v.row_ptr[r] : (int64_t)v.row_ptr32[r];
}

/* The row holding edge k, or -1 when none does. */
__device__ __forceinline__ int64_t row_holding(const rows_view &v, int64_t k)
{
    if (v.rows == 0 || k < row_start(v, 0) || k >= row_start(v, v.rows)) {
        return -1;
    }
    const int64_t below = v.row_ptr != nullptr ? keys_below(v.row_ptr, v.rows + 1, k + 1)
                                               : keys_below(v.row_ptr32, v.rows + 1, k + 1);
    return below - 1;
}

/* A chunk of a long row in a window slot: its row's first edge and
 * length, the chunk's first edge and length, and the slot of the row's
 * chunk 0. */
struct window_chunk {
    int64_t row_begin;
    int64_t row_length;
    int64_t begin;
    int64_t length;
    int64_t home; /* slot of the row's chunk 0 */
    bool first;   /* this is chunk 0 */
};

/* The chunk of row `row` (in 0 .. R-1) in slot `slot` of window q, if it
 * has one there. */
__device__ inline bool chunk_of_row_in_slot(const rows_view &v, int64_t q, int slot, int64_t row,
                                            window_chunk *c)
{
    const int64_t window_begin = q * CHUNK;
    int64_t window_end = window_begin + CHUNK;
    window_end = window_end < v.edges ? window_end : v.edges;
    const int64_t b = row_start(v, row), n = row_start(v, row + 1) - b;
    if (n <= CHUNK || (slot == 0) != (b <= window_begin)) {
        return false;
    }
    const int64_t offset = slot == 0 ? (window_begin - b + CHUNK - 1) / CHUNK * CHUNK : 0;
    if (b + offset >= b + n || b + offset >= window_end) {
        return false;
    }
    c->row_begin = b;
    c->row_length = n;
    c->begin = b + offset;
    c->length = n - offset < CHUNK ? n - offset : CHUNK;
    c->first = offset == 0;
    c->home = 2 * (b / CHUNK) + (b % CHUNK == 0 ? 0 : 1);
    return true;
}

/* The chunk in slot `slot` of window q, if there is one (see
 * softmax_kernels.h): the rows holding the window's first or last edge,
 * found by a binary search. */
__device__ inline bool chunk_in_slot(const rows_view &v, int64_t q, int slot, window_chunk *c)
{
    const int64_t window_begin = q * CHUNK;
    int64_t window_end = window_begin + CHUNK;
    window_end = window_end < v.edges ? window_end : v.edges;
    const int64_t row = row_holding(v, slot == 0 ? window_begin : window_end - 1);
    return row >= 0 && chunk_of_row_in_slot(v, q, slot, row, c);
}

/* The same from the slot's note (v.slot_rows, written by the forward's
 * rows kernel for every chunk of every long row): a note is taken only
 * when its row has a chunk in this slot, and a slot holds at most one
 * chunk, so a stale note (from an earlier call) is either this call's
 * answer or refused. */
__device__ inline bool chunk_in_noted_slot(const rows_view &v, int64_t q, int slot, window_chunk *c)
{
    const int64_t row = v.slot_rows[2 * q + slot];
    return row >= 0 && row < v.rows && chunk_of_row_in_slot(v, q, slot, row, c);
}

/* The slot's chunk either way. */
template <bool NOTED>
__device__ __forceinline__ bool chunk_here(const rows_view &v, int64_t slot, window_chunk *c)
{
    return NOTED ? chunk_in_noted_slot(v, slot / 2, (int)(slot % 2), c)
                 : chunk_in_slot(v, slot / 2, (int)(slot % 2), c);
}

/* The slot of chunk c (>= 1) of a row starting at b. */
__device__ __forceinline__ int64_t slot_of_chunk(int64_t b, int64_t c)
{
    return c == 0 ? 2 * (b / CHUNK) + (b % CHUNK == 0 ? 0 : 1) : 2 * ((b + c * CHUNK) / CHUNK);
}

/* Note row r (from b, n > CHUNK edges) in the slots of its chunks. */
__device__ inline void note_long_row(const rows_view &v, int64_t r, int64_t b, int64_t n)
{
    for (int64_t c = 0; c * CHUNK < n; c++) {
        v.slot_rows[slot_of_chunk(b, c)] = r;
    }
}

/* The order's tree on N lanes held in registers: lane l += lane l + d for
 * d = N/2, ..., 1 (loops of fixed trip counts, so that they unroll and the
 * lanes stay in registers). */
template <int N> __device__ __forceinline__ double tree_in_registers(double (&lanes)[N])
{
#pragma unroll
    for (int level = 0; (N >> (level + 1)) > 0; level++) {
        const int d = N >> (level + 1);
#pragma unroll
        for (int l = 0; l < N / 2; l++) {
            if (l < d) {
                lanes[l] = __dadd_rn(lanes[l], lanes[l + d]);
            }
        }
    }
    return lanes[0];
}

/* ---- a group's lanes ---------------------------------------------------------------------- */

template <int HB, int S> struct group_lanes {
    static constexpr int T = HB * S;
    static constexpr int A = LANES / S;
    spart_rows::row_group group;
    int j;  /* edge lane */
    int hl; /* head within the block */
    __device__ group_lanes() : group(spart_rows::group_of_thread(T))
    {
        j = group.lane / HB;
        hl = group.lane % HB;
    }
    /* The NaN-propagating largest of the group's values of this head. */
    template <typename V> __device__ V max_all(V m) const
    {
        for (int d = 1; d < S; d *= 2) {
            m = nan_max(m, __shfl_xor_sync(group.mask, m, d * HB, T));
        }
        return m;
    }
    /* The tree of the order on the thread's A lanes, then across
     * threads; every thread of the head receives the head's sum. */
    __device__ double tree(double (&acc)[A]) const
    {
        double sum = tree_in_registers<A>(acc);
        for (int d = S / 2; d > 0; d >>= 1) {
            const double other = __shfl_down_sync(group.mask, sum, d * HB, T);
            sum = __dadd_rn(sum, other);
        }
        return __shfl_sync(group.mask, sum, hl, T);
    }
};

/* The chunk (or short row) [begin, begin + n) of head h: its largest
 * score into *m and its sum of exp(s - m); terms[k] = the term of edge
 * j + k S when n <= 32. */
template <typename V, int HB, int S>
__device__ double chunk_sum(const group_lanes<HB, S> &g, const V *__restrict__ scores, int64_t H,
                            int64_t h, int64_t begin, int64_t n, double *m_out,
                            double (&terms)[LANES / S])
{
    constexpr int A = LANES / S;
    V local = -(V)INFINITY;
#pragma unroll 4
    for (int64_t i = g.j; i < n; i += S) {
        local = nan_max(local, scores[(begin + i) * H + h]);
    }
    const double m = (double)g.max_all(local);
    *m_out = m;
    double acc[A];
#pragma unroll
    for (int k = 0; k < A; k++) {
        acc[k] = 0.0;
        terms[k] = 0.0;
    }
    if (m == -(double)INFINITY) {
        return 0.0; /* the same for every thread of the head */
    }
    for (int64_t base = 0; base < n; base += LANES) {
#pragma unroll
        for (int k = 0; k < A; k++) {
            const int64_t i = base + g.j + k * S;
            if (i < n) {
                const double t = spart_exp((double)scores[(begin + i) * H + h] - m);
                acc[k] = __dadd_rn(acc[k], t);
                terms[k] = t;
            }
        }
    }
    return g.tree(acc);
}

/* Write the chunk [begin, begin + n) of head h: terms (n <= 32) or
 * exp(s - m) again, times inv; or zeros or NaN by the row's kind. */
template <typename V, int HB, int S>
__device__ void write_chunk(const group_lanes<HB, S> &g, const V *scores, V *out, int64_t H,
                            int64_t h, int64_t begin, int64_t n, int kind, double m, double inv,
                            const double (&terms)[LANES / S], bool have_terms)
{
    constexpr int A = LANES / S;
    if (have_terms) {
#pragma unroll
        for (int k = 0; k < A; k++) {
            const int64_t i = g.j + k * S;
            if (i < n) {
                const double value = kind == ROW_FINITE ? __dmul_rn(terms[k], inv)
                                                        : (kind == ROW_ZERO ? 0.0 : quiet_nan());
                store(out, (begin + i) * H + h, value);
            }
        }
        return;
    }
#pragma unroll 4
    for (int64_t i = g.j; i < n; i += S) {
        const int64_t at = (begin + i) * H + h;
        double value = kind == ROW_ZERO ? 0.0 : quiet_nan();
        if (kind == ROW_FINITE) {
            value = __dmul_rn(spart_exp((double)scores[at] - m), inv);
        }
        store(out, at, value);
    }
}

/* The items of a row kernel: (row or slot, head block) pairs, a group
 * each, over a grid-stride loop. */
template <int HB, int S> __device__ __forceinline__ int64_t first_group()
{
    return spart_launch::first_item() / (HB * S);
}

template <int HB, int S> __device__ __forceinline__ int64_t group_stride()
{
    return spart_launch::item_stride() / (HB * S);
}

/* ---- the forward's window kernels (the aggregation's too) ---- */

/* Window kernels: item = (slot, head block). */
template <typename V, int HB, int S>
__global__ void forward_chunk_stats(rows_view v, const V *scores, double *slots)
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
        double m, terms[LANES / S];
        const double sum = chunk_sum<V, HB, S>(g, scores, v.heads, h, c.begin, c.length, &m, terms);
        if (g.j == 0) {
            double *stats = slots + (slot * v.heads + h) * v.slot_doubles;
            stats[0] = m;
            stats[1] = sum;
        }
    }
}

/* One group a long row (at its chunk 0's slot): M, then the exps of each
 * chunk's m_c - M side by side (into the chunk's field 3), then S by one
 * thread in chunk order; M and inv into the home slot's fields 2 and 3. */
template <int HB, int S, bool NOTED> __global__ void forward_combine(rows_view v, double *slots)
{
    const group_lanes<HB, S> g;
    const int64_t blocks = v.heads / HB, count = v.slots;
    for (int64_t item = first_group<HB, S>(); item < count * blocks;
         item += group_stride<HB, S>()) {
        const int64_t slot = item / blocks, h = (item % blocks) * HB + g.hl;
        window_chunk c;
        if (!chunk_here<NOTED>(v, slot, &c) || !c.first) {
            continue;
        }
        const int64_t chunks = (c.row_length + CHUNK - 1) / CHUNK;
        /* chunk k >= 1 of the row lies in slot 0 of window b / C + k:
         * slots a fixed stride apart */
        const int64_t stride = 2 * v.heads * v.slot_doubles;
        double *const second =
            slots + (2 * (c.row_begin / CHUNK + 1) * v.heads + h) * v.slot_doubles;
        double *const home = slots + (slot * v.heads + h) * v.slot_doubles;
        auto stats = [&](int64_t chunk) {
            return chunk == 0 ? home : second + (chunk - 1) * stride;
        };
        double local = -(double)INFINITY;
        for (int64_t k = g.j; k < chunks; k += S) {
            local = nan_max(local, stats(k)[0]);
        }
        const double m = g.max_all(local);
        const int kind = kind_of(m);
        if (kind == ROW_FINITE) {
            for (int64_t k = g.j; k < chunks; k += S) {
                stats(k)[3] = spart_exp(stats(k)[0] - m);
            }
        }
        __syncwarp(g.group.mask);
        if (g.j == 0) {
            double sum = 0.0;
            if (kind == ROW_FINITE) {
                sum = __fma_rn(home[1], home[3], sum);
                const double *p = second;
#pragma unroll 8
                for (int64_t k = 1; k < chunks; k++, p += stride) {
                    sum = __fma_rn(p[1], p[3], sum);
                }
            }
            home[2] = m;
            home[3] = 1.0 / sum;
        }
        __syncwarp(g.group.mask);
    }
}

/* ---- choosing the shape --------------------------------------------------------------------- */

/* HB: the largest power of two up to 8 dividing H. */
inline int heads_per_group(int64_t heads)
{
    int hb = 1;
    while (hb < 8 && heads % (2 * hb) == 0) {
        hb *= 2;
    }
    return hb;
}

/* S for rows of `mean` edges: at least 4, at most 32 / HB, about the mean. */
inline int edge_lanes(int hb, int64_t mean)
{
    int s = 4;
    while (s < 32 / hb && s < mean) {
        s *= 2;
    }
    return s;
}

inline unsigned blocks_for_groups(int64_t groups, int threads_per_group)
{
    if (groups <= 0) {
        return 0;
    }
    const int64_t blocks =
        spart_launch::blocks_for(groups * threads_per_group, spart_launch::threads_per_block);
    return (unsigned)(blocks < spart_launch::max_blocks_items ? blocks
                                                              : spart_launch::max_blocks_items);
}

/* Launch kernel<HB, S> on `groups` groups (nothing for none). */
template <int HB, int S, typename... Parameters, typename... Arguments>
cudaError_t launch_groups(void (*kernel)(Parameters...), int64_t groups, cudaStream_t stream,
                          Arguments... arguments)
{
    const unsigned blocks = blocks_for_groups(groups, HB * S);
    if (blocks == 0) {
        return cudaSuccess;
    }
    return spart_launch::launch(kernel, dim3(blocks), stream, arguments...);
}

inline rows_view view_of(const spart_softmax_problem *p, int64_t width)
{
    rows_view v;
    v.rows = p->num_rows;
    v.edges = p->num_edges;
    v.heads = p->num_heads;
    v.row_ptr = p->row_ptr;
    v.row_ptr32 = p->row_ptr32;
    v.slot_doubles = SLOT_STATS + width;
    v.slots = 2 * spart_softmax_num_windows(p->num_edges);
    v.slot_rows = nullptr; /* slot_rows_of, where the workspace is known */
    return v;
}

/* The notes of long rows: after the slots' doubles (softmax_kernels.h;
 * a workspace of at least one window). */
inline int64_t *slot_rows_of(const rows_view &v, double *workspace)
{
    const int64_t slots = v.slots > 0 ? v.slots : 2;
    return (int64_t *)(workspace + slots * v.heads * v.slot_doubles);
}

} // namespace spart_softmax

#endif /* SPART_SOFTMAX_CUH */
