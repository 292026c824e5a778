/*
 * kernels/scoring.cuh: the device functions of candidate scoring that
 * kernels/scoring.cu is made of, in the order of
 * src/scoring/scoring_kernels.h: a warp's sums over candidate rows (lane
 * order and tree), a block's chunk sums, a question's total, the writing
 * of the probabilities. Also included by the benchmark's unfused
 * baseline (tests/bench/bench_scoring_kernels.cu), which launches the
 * same arithmetic as separate passes, so the two can be compared bit for
 * bit. Include after defining SPART_MATH_FUNCTION as
 * `static __host__ __device__ inline` and including
 * scoring/scoring_kernels.h.
 */
#ifndef SPART_SCORING_CUH
#define SPART_SCORING_CUH

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

namespace spart_scoring
{

constexpr int threads_per_block = 256;
constexpr int warps_per_block = threads_per_block / 32;
constexpr unsigned full_mask = 0xffffffffu;

struct view {
    const void *query;
    const void *candidates;
    void *probabilities;
    void *logits;
    int64_t num_question, num_candidate, dimension;
    double scale, temperature;
    bool vector; /* rows start on 16 bytes and D is a multiple of 4 */
    bool split;  /* GRID: a block's warps share rows, a segment each */
};

/* The binary tree over a warp's lanes (lane 0 gets the sum). */
__device__ __forceinline__ double lane_tree(double v)
{
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) {
        v = __dadd_rn(v, __shfl_down_sync(full_mask, v, h));
    }
    return v;
}

/* The same tree's sum in every lane: lane l adds lane l ^ h, which for
 * l < h is lane l + h as in lane_tree, and for l >= h is the sum its
 * partner l - h makes with the two terms swapped (a + b = b + a exactly):
 * every lane ends with lane_tree's bits. */
__device__ __forceinline__ double lane_tree_all(double v)
{
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) {
        v = __dadd_rn(v, __shfl_xor_sync(full_mask, v, h));
    }
    return v;
}

/* The maximum over a warp's lanes (lane 0), NaN winning. */
__device__ __forceinline__ double lane_max(double v)
{
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) {
        v = spart_scoring_max(v, __shfl_down_sync(full_mask, v, h));
    }
    return v;
}

/* Quad j of a row in its own type (kept so until each fma converts it
 * exactly to double: half the registers for float32, so more loads stay
 * in flight); a value past D reads as 0 but is never added (the caller
 * stops at D). */
template <typename T>
__device__ __forceinline__ void load_quad(const T *row, int64_t d, int64_t j, bool vector, T *v)
{
    if (vector) {
        if constexpr (sizeof(T) == 4) {
            const float4 w = __ldg(reinterpret_cast<const float4 *>(row) + j);
            v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
        } else {
            const double2 a = __ldg(reinterpret_cast<const double2 *>(row) + 2 * j);
            const double2 b = __ldg(reinterpret_cast<const double2 *>(row) + 2 * j + 1);
            v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
        }
        return;
    }
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int64_t i = 4 * j + e;
        v[e] = i < d ? __ldg(row + i) : (T)0;
    }
}

/* Step 1 for `count` (1 .. ROWS) consecutive candidate rows of one
 * question, by a whole warp walking every segment of the rows in turn:
 * lane 0 returns the dots (DOT) and |c|^2 and |q|^2 (SQUARES), each
 * combined in the contract's order (a lane's partial of a segment from
 * +0.0, added to its sum at the segment's end; then the tree). */
template <typename T, bool DOT, bool SQUARES, int ROWS, bool SHARED = false, bool ALL = false>
__device__ __forceinline__ void row_sums(const view &p, const T *query, const T *rows, int count,
                                         double *dot_sum, double *cc_sum, double *qq_sum,
                                         double (*shared_sums)[32] = nullptr)
{
    constexpr bool COSINE = SQUARES;
    constexpr int64_t segment = SPART_SCORING_SEGMENT_QUADS;
    /* A batch: `unroll` quads of the query and of each row (a lane's
     * quads j0, j0 + 32, ...). Batches are loaded one ahead of the fma
     * (two sets of registers, a and b), so that a warp always has loads in
     * flight while it adds; the fma still run in the lane's quad order. */
    constexpr int unroll = ROWS == 1 ? 4 : ROWS == 2 ? 2 : 1;
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t d = p.dimension;
    const int64_t quads = (d + 3) / 4;
    /* the segment's partials (a) and the lane's sums over segments (s):
     * in registers, or with SHARED in the warp's shared_sums (slot 0 |q|^2,
     * 1 + r the dots, 1 + ROWS + r the |c|^2; a lane its own column), which
     * frees 4 ROWS + 2 registers (four rows a warp spilled without) */
    double dot_a[ROWS], cc_a[ROWS], qq_a = 0.0;
    double dot_s[ROWS], cc_s[ROWS], qq_s = 0.0;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        dot_a[r] = 0.0;
        cc_a[r] = 0.0;
        dot_s[r] = 0.0;
        cc_s[r] = 0.0;
    }
    if constexpr (SHARED) {
#pragma unroll
        for (int slot = 0; slot < 1 + 2 * ROWS; slot++) {
            shared_sums[slot][lane] = 0.0;
        }
    }
    /* sum += partial; partial = +0.0 */
    auto flush = [&](double &sum, int slot, double &partial) {
        if constexpr (SHARED) {
            shared_sums[slot][lane] = __dadd_rn(shared_sums[slot][lane], partial);
        } else {
            sum = __dadd_rn(sum, partial);
        }
        partial = 0.0;
    };
    auto total = [&](double sum, int slot) {
        if constexpr (SHARED) {
            return shared_sums[slot][lane];
        } else {
            return sum;
        }
    };
    auto load = [&](int64_t j0, T(&qv)[unroll][4], T(&cv)[unroll][ROWS][4]) {
#pragma unroll
        for (int u = 0; u < unroll; u++) {
            const int64_t j = j0 + 32 * u;
            if (j < quads) {
                load_quad(query, d, j, p.vector, qv[u]);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    if (r < count) {
                        load_quad(rows + r * d, d, j, p.vector, cv[u][r]);
                    }
                }
            }
        }
    };
    auto add = [&](int64_t j0, const T(&qv)[unroll][4], const T(&cv)[unroll][ROWS][4]) {
#pragma unroll
        for (int u = 0; u < unroll; u++) {
            const int64_t j = j0 + 32 * u;
            if (j < quads) {
                const int n = d - 4 * j < 4 ? (int)(d - 4 * j) : 4;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    if (e < n) {
                        const double a = (double)qv[u][e];
                        if (COSINE) {
                            qq_a = __fma_rn(a, a, qq_a);
                        }
#pragma unroll
                        for (int r = 0; r < ROWS; r++) {
                            if (r < count) {
                                const double b = (double)cv[u][r][e];
                                if (DOT) {
                                    dot_a[r] = __fma_rn(a, b, dot_a[r]);
                                }
                                if (COSINE) {
                                    cc_a[r] = __fma_rn(b, b, cc_a[r]);
                                }
                            }
                        }
                    }
                }
                /* the lane's last quad of its segment: the partial joins
                 * the sum, the next segment's starts from +0.0 */
                if ((j & (segment - 1)) >= segment - 32 || j + 32 >= quads) {
                    if (COSINE) {
                        flush(qq_s, 0, qq_a);
                    }
#pragma unroll
                    for (int r = 0; r < ROWS; r++) {
                        if (DOT) {
                            flush(dot_s[r], 1 + r, dot_a[r]);
                        }
                        if (COSINE) {
                            flush(cc_s[r], 1 + ROWS + r, cc_a[r]);
                        }
                    }
                }
            }
        }
    };
    constexpr int64_t step = 32 * unroll;
    T qa[unroll][4], ca[unroll][ROWS][4], qb[unroll][4], cb[unroll][ROWS][4];
    load(lane, qa, ca);
    for (int64_t j0 = lane; j0 < quads; j0 += 2 * step) {
        load(j0 + step, qb, cb);
        add(j0, qa, ca);
        load(j0 + 2 * step, qa, ca);
        add(j0 + step, qb, cb);
    }
    /* the trees: lane 0's sums, or with ALL every lane's */
    auto tree = [](double v) { return ALL ? lane_tree_all(v) : lane_tree(v); };
    *qq_sum = COSINE ? tree(total(qq_s, 0)) : 0.0;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        if (r < count) {
            dot_sum[r] = DOT ? tree(total(dot_s[r], 1 + r)) : 0.0;
            cc_sum[r] = COSINE ? tree(total(cc_s[r], 1 + ROWS + r)) : 0.0;
        }
    }
}

/* The block's shared sums of the walking warps (more than one row a
 * warp): a warp's 1 + 2 x 4 lane sums. */
struct walk_scratch {
    double sums[warps_per_block][1 + 2 * 4][32];
};

/* The block's shared partials when its warps share rows (SPLIT): a
 * (row, segment) unit's 32 lane partials of the dot, |c|^2 and |q|^2. */
constexpr int split_units = 32;
struct split_scratch {
    double part[split_units][3][32];
};

/* Rows a block takes at once when its warps share rows, for `segments`
 * segments a row: a warp a (row, segment) unit when they fit. */
__host__ __device__ inline int split_rows(int64_t segments)
{
    return segments >= warps_per_block ? 1 : (int)(warps_per_block / segments);
}

/* One (row, segment) unit's values in a lane's registers: its two quads
 * of the query and of the row. */
template <typename T> struct unit_values {
    T q[2][4], c[2][4];
};

/* Load a unit's quads (a lane's quads seg * 64 + lane and + 32 that are
 * below the row's end). */
template <typename T>
__device__ __forceinline__ void load_unit(const view &p, const T *query, const T *row, int64_t seg,
                                          unit_values<T> &v)
{
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t d = p.dimension;
    const int64_t quads = (d + 3) / 4;
    const int64_t j0 = seg * SPART_SCORING_SEGMENT_QUADS + lane;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int64_t j = j0 + 32 * u;
        if (j < quads) {
            load_quad(query, d, j, p.vector, v.q[u]);
            load_quad(row, d, j, p.vector, v.c[u]);
        }
    }
}

/* Step 1 for one loaded unit: lane l's partials P(l, s) (no tree), stored
 * in part[unit]. */
template <typename T, bool COSINE>
__device__ __forceinline__ void add_unit(const view &p, int64_t seg, const unit_values<T> &v,
                                         double (*part)[32])
{
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t d = p.dimension;
    const int64_t quads = (d + 3) / 4;
    const int64_t j0 = seg * SPART_SCORING_SEGMENT_QUADS + lane;
    double dot = 0.0, cc = 0.0, qq = 0.0;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int64_t j = j0 + 32 * u;
        if (j < quads) {
            const int n = d - 4 * j < 4 ? (int)(d - 4 * j) : 4;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                if (e < n) {
                    const double a = (double)v.q[u][e], b = (double)v.c[u][e];
                    dot = __fma_rn(a, b, dot);
                    if (COSINE) {
                        qq = __fma_rn(a, a, qq);
                        cc = __fma_rn(b, b, cc);
                    }
                }
            }
        }
    }
    part[0][lane] = dot;
    part[1][lane] = cc;
    part[2][lane] = qq;
}

/* Steps 1 and 2 for rows [first, first + count) of question t (count <=
 * split_rows) by the whole block, its warps sharing the rows' segments
 * (units (r, s) taken round robin); then warp r adds row r's partials in
 * segment order and takes the tree; lane 0 writes z[first + r]. The
 * contract's bits: each partial is made in the lane order, and the sums
 * in segment order, whoever made the partials. */
template <typename T, bool COSINE>
__device__ inline void score_rows_split(const view &p, int64_t t, int64_t first, int count,
                                        int64_t segments, split_scratch *s, double *z)
{
    const T *query = static_cast<const T *>(p.query) + t * p.dimension;
    const T *rows =
        static_cast<const T *>(p.candidates) + (t * p.num_candidate + first) * p.dimension;
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x & 31u);
    const int64_t units = (int64_t)count * segments; /* <= split_units */
    /* a warp's units two at a time, both loaded before either is added */
    for (int64_t unit = warp; unit < units; unit += 2 * warps_per_block) {
        const int64_t other = unit + warps_per_block;
        unit_values<T> v0, v1;
        load_unit<T>(p, query, rows + (unit / segments) * p.dimension, unit % segments, v0);
        if (other < units) {
            load_unit<T>(p, query, rows + (other / segments) * p.dimension, other % segments, v1);
        }
        add_unit<T, COSINE>(p, unit % segments, v0, s->part[unit]);
        if (other < units) {
            add_unit<T, COSINE>(p, other % segments, v1, s->part[other]);
        }
    }
    __syncthreads();
    if (warp < count) {
        double dot = 0.0, cc = 0.0, qq = 0.0;
        for (int64_t seg = 0; seg < segments; seg++) {
            const double(*part)[32] = s->part[warp * segments + seg];
            dot = __dadd_rn(dot, part[0][lane]);
            if (COSINE) {
                cc = __dadd_rn(cc, part[1][lane]);
                qq = __dadd_rn(qq, part[2][lane]);
            }
        }
        dot = lane_tree(dot);
        if (COSINE) {
            cc = lane_tree(cc);
            qq = lane_tree(qq);
        }
        if (lane == 0) {
            z[first + warp] = spart_scoring_logit(dot, qq, cc, COSINE, p.scale, p.temperature);
        }
    }
    __syncthreads(); /* the partials are the next rows' */
}

/* Steps 1 and 2 for `count` (1 .. ROWS) consecutive candidate rows of one
 * question, by a whole warp: lane r returns row r's logit (r < count).
 * With several rows every lane gets every sum (lane_tree_all) and takes
 * its own row's: the rows' square roots and divisions run side by side in
 * their lanes, not one after the other in lane 0. */
template <typename T, bool COSINE, int ROWS>
__device__ __forceinline__ double score_rows(const view &p, const T *query, const T *rows,
                                             int count, double (*shared_sums)[32])
{
    double dot[ROWS], cc[ROWS], qq = 0.0;
    if constexpr (ROWS > 1) {
        if (shared_sums != nullptr) {
            row_sums<T, true, COSINE, ROWS, true, true>(p, query, rows, count, dot, cc, &qq,
                                                        shared_sums);
        } else {
            row_sums<T, true, COSINE, ROWS, false, true>(p, query, rows, count, dot, cc, &qq);
        }
    } else {
        row_sums<T, true, COSINE, ROWS>(p, query, rows, count, dot, cc, &qq);
    }
    const int lane = (int)(threadIdx.x & 31u);
    double d = dot[0], c = COSINE ? cc[0] : 0.0;
#pragma unroll
    for (int r = 1; r < ROWS; r++) {
        if (lane == r && r < count) {
            d = dot[r];
            c = COSINE ? cc[r] : 0.0;
        }
    }
    return spart_scoring_logit(d, qq, c, COSINE, p.scale, p.temperature);
}

/* The block's shared scratch for the sums. */
struct block_scratch {
    double e[SPART_SCORING_CHUNK]; /* exponentials of one chunk */
    double warp_max[warps_per_block];
    double value[2]; /* a broadcast: maximum, then sum */
};

/* The maximum of n values (strided by `stride`) over the whole block,
 * returned to every thread. */
__device__ inline double block_max(const double *values, int64_t n, int64_t stride,
                                   block_scratch *s)
{
    double m = -INFINITY;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        m = spart_scoring_max(m, values[k * stride]);
    }
    m = lane_max(m);
    if ((threadIdx.x & 31u) == 0) {
        s->warp_max[threadIdx.x / 32] = m;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double all = s->warp_max[0];
        for (int w = 1; w < warps_per_block; w++) {
            all = spart_scoring_max(all, s->warp_max[w]);
        }
        s->value[0] = all;
    }
    __syncthreads();
    return s->value[0];
}

/* Step 3 by the whole block for the n <= SPART_SCORING_CHUNK logits z:
 * (m_c, s_c) into stats (by thread 0) and s->value; the exponentials
 * exp(z_k - m_c) stay in s->e for write_one_chunk. */
__device__ inline void chunk_sums(const double *z, int64_t n, double *stats, block_scratch *s)
{
    const double m = block_max(z, n, 1, s);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        s->e[k] = spart_exp(z[k] - m);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        double sum = 0.0;
#pragma unroll 8
        for (int64_t k = threadIdx.x; k < n; k += 32) {
            sum = __dadd_rn(sum, s->e[k]);
        }
        sum = lane_tree(sum);
        if (threadIdx.x == 0) {
            stats[0] = m;
            stats[1] = sum;
            s->value[1] = sum;
        }
    }
    __syncthreads();
}

/* Step 4 by the whole block from a question's chunks' (m_c, s_c): (m, s)
 * returned to every thread. The block stages s_c and exp(m_c - m) in
 * shared memory, SPART_SCORING_CHUNK / 2 chunks a round, so that thread 0's
 * chain of fma reads only shared memory (one load from global memory an
 * fma was 15 us for the 98 chunks of 10^5 candidates). */
__device__ inline void question_total(const double *stats, int64_t chunks, block_scratch *s,
                                      double *m, double *sum)
{
    constexpr int64_t round = SPART_SCORING_CHUNK / 2;
    const double max = block_max(stats, chunks, 2, s);
    double total = 0.0;
    for (int64_t first = 0; first < chunks; first += round) {
        const int64_t n = chunks - first < round ? chunks - first : round;
        for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
            s->e[2 * c] = stats[2 * (first + c) + 1];
            s->e[2 * c + 1] = spart_exp(stats[2 * (first + c)] - max);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
#pragma unroll 8
            for (int64_t c = 0; c < n; c++) {
                total = __fma_rn(s->e[2 * c], s->e[2 * c + 1], total);
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        s->value[1] = total;
    }
    __syncthreads();
    *m = max;
    *sum = s->value[1];
    __syncthreads();
}

/* Step 5 and the logits for candidates [first, end) of question t, by
 * the whole block. */
template <typename T>
__device__ inline void write_probabilities(const view &p, const double *z, int64_t t, int64_t first,
                                           int64_t end, double m, double s)
{
    T *probabilities = static_cast<T *>(p.probabilities) + t * p.num_candidate;
    T *logits = p.logits != nullptr ? static_cast<T *>(p.logits) + t * p.num_candidate : nullptr;
    for (int64_t k = first + threadIdx.x; k < end; k += blockDim.x) {
        const double zk = z[k];
        probabilities[k] = (T)spart_scoring_probability(zk, m, s);
        if (logits != nullptr) {
            logits[k] = (T)zk;
        }
    }
}

/* Step 5 and the logits for a question of one chunk (K <= 1,024) by the
 * whole block, right after its chunk_sums: p_k = e_k / s_0 from the
 * exponentials chunk_sums left in s->e. The same bits as
 * write_probabilities after question_total: with one chunk m = m_0, and s
 * = fma(s_0, exp(0), +0.0) = s_0 (spart_exp(0) is exactly 1), so
 * exp(z_k - m) / s is e_k / s_0; but no second block maximum, barrier
 * round or exponential. */
template <typename T>
__device__ inline void write_one_chunk(const view &p, const double *z, int64_t t,
                                       const block_scratch *s)
{
    const int64_t n = p.num_candidate;
    T *probabilities = static_cast<T *>(p.probabilities) + t * n;
    T *logits = p.logits != nullptr ? static_cast<T *>(p.logits) + t * n : nullptr;
    const double sum = s->value[1];
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        probabilities[k] = (T)(s->e[k] / sum);
        if (logits != nullptr) {
            logits[k] = (T)z[k];
        }
    }
}

/* Steps 3 to 5 and the logits for a question of at most 32 candidates,
 * by one warp (the caller's warp 0), without a block barrier: lane k holds
 * z_k; the maximum by lane_max, lane k's sum +0.0 + exp(z_k - m) (lanes
 * past K: +0.0), the tree, p_k = e_k / s. The same bits as chunk_sums and
 * write_one_chunk, whose lane l adds the chunk's candidates l, l + 32,
 * ... from +0.0: with K <= 32 just candidate l. */
template <typename T> __device__ inline void warp_softmax(const view &p, const double *z, int64_t t)
{
    const int64_t n = p.num_candidate;
    const int lane = (int)(threadIdx.x & 31u);
    const double zk = lane < n ? z[lane] : -INFINITY;
    const double m = __shfl_sync(full_mask, lane_max(zk), 0);
    const double e = lane < n ? spart_exp(zk - m) : 0.0;
    const double sum = __shfl_sync(full_mask, lane_tree(__dadd_rn(0.0, e)), 0);
    if (lane < n) {
        static_cast<T *>(p.probabilities)[t * n + lane] = (T)(e / sum);
        if (p.logits != nullptr) {
            static_cast<T *>(p.logits)[t * n + lane] = (T)zk;
        }
    }
}

/* Candidates [first, end) of question t scored by warp `warp` of
 * `warps` (ROWS a warp at once) into z[k]. */
template <typename T, bool COSINE, int ROWS>
__device__ inline void score_range(const view &p, int64_t t, int64_t first, int64_t end,
                                   int64_t warp, int64_t warps, double *z,
                                   double (*shared_sums)[32] = nullptr)
{
    const T *query = static_cast<const T *>(p.query) + t * p.dimension;
    const T *candidates = static_cast<const T *>(p.candidates) + t * p.num_candidate * p.dimension;
    for (int64_t k = first + warp * ROWS; k < end; k += warps * ROWS) {
        const int count = end - k < ROWS ? (int)(end - k) : ROWS;
        const double mine =
            score_rows<T, COSINE, ROWS>(p, query, candidates + k * p.dimension, count, shared_sums);
        const int lane = (int)(threadIdx.x & 31u);
        if (lane < count) {
            z[k + lane] = mine;
        }
    }
}

/* A call's arguments as the kernels take them. */
inline view view_of(const spart_scoring_problem *problem)
{
    view p;
    p.query = problem->query;
    p.candidates = problem->candidates;
    p.probabilities = problem->probabilities;
    p.logits = problem->logits;
    p.num_question = problem->num_question;
    p.num_candidate = problem->num_candidate;
    p.dimension = problem->dimension;
    p.scale = problem->scale;
    p.temperature = problem->temperature;
    p.vector = problem->dimension % 4 == 0 && (uintptr_t)problem->query % 16 == 0 &&
               (uintptr_t)problem->candidates % 16 == 0;
    p.split = false;
    return p;
}

} // namespace spart_scoring

#endif /* SPART_SCORING_CUH */
