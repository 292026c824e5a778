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
 * question, by a whole warp: lane 0 returns the dots (DOT) and |c|^2 and
 * |q|^2 (SQUARES), each combined in the tree. */
template <typename T, bool DOT, bool SQUARES, int ROWS>
__device__ __forceinline__ void row_sums(const view &p, const T *query, const T *rows, int count,
                                         double *dot_sum, double *cc_sum, double *qq_sum)
{
    constexpr bool COSINE = SQUARES;
    /* A batch: `unroll` quads of the query and of each row (a lane's
     * quads j0, j0 + 32, ...). Batches are loaded one ahead of the fma
     * (two sets of registers, a and b), so that a warp always has loads in
     * flight while it adds; the fma still run in the lane's quad order. */
    constexpr int unroll = ROWS == 1 ? 4 : ROWS == 2 ? 2 : 1;
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t d = p.dimension;
    const int64_t quads = (d + 3) / 4;
    double dot[ROWS], cc[ROWS], qq = 0.0;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        dot[r] = 0.0;
        cc[r] = 0.0;
    }
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
                            qq = __fma_rn(a, a, qq);
                        }
#pragma unroll
                        for (int r = 0; r < ROWS; r++) {
                            if (r < count) {
                                const double b = (double)cv[u][r][e];
                                if (DOT) {
                                    dot[r] = __fma_rn(a, b, dot[r]);
                                }
                                if (COSINE) {
                                    cc[r] = __fma_rn(b, b, cc[r]);
                                }
                            }
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
    *qq_sum = COSINE ? lane_tree(qq) : 0.0;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        if (r < count) {
            dot_sum[r] = DOT ? lane_tree(dot[r]) : 0.0;
            cc_sum[r] = COSINE ? lane_tree(cc[r]) : 0.0;
        }
    }
}

/* Steps 1 and 2 for `count` (1 .. ROWS) consecutive candidate rows of one
 * question, by a whole warp; lane 0 returns the logits in z[0 .. count). */
template <typename T, bool COSINE, int ROWS>
__device__ __forceinline__ void score_rows(const view &p, const T *query, const T *rows, int count,
                                           double *z)
{
    double dot[ROWS], cc[ROWS], qq = 0.0;
    row_sums<T, true, COSINE, ROWS>(p, query, rows, count, dot, cc, &qq);
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        if (r < count) {
            z[r] = spart_scoring_logit(dot[r], qq, cc[r], COSINE, p.scale, p.temperature);
        }
    }
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
 * (m_c, s_c) into stats (by thread 0). */
__device__ inline void chunk_sums(const double *z, int64_t n, double *stats, block_scratch *s)
{
    const double m = block_max(z, n, 1, s);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        s->e[k] = spart_exp(z[k] - m);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        double sum = 0.0;
        for (int64_t k = threadIdx.x; k < n; k += 32) {
            sum = __dadd_rn(sum, s->e[k]);
        }
        sum = lane_tree(sum);
        if (threadIdx.x == 0) {
            stats[0] = m;
            stats[1] = sum;
        }
    }
    __syncthreads();
}

/* Step 4 by the whole block from a question's chunks' (m_c, s_c): (m, s)
 * returned to every thread. */
__device__ inline void question_total(const double *stats, int64_t chunks, block_scratch *s,
                                      double *m, double *sum)
{
    const double max = block_max(stats, chunks, 2, s);
    double total = 0.0;
    for (int64_t first = 0; first < chunks; first += SPART_SCORING_CHUNK) {
        const int64_t n =
            chunks - first < SPART_SCORING_CHUNK ? chunks - first : SPART_SCORING_CHUNK;
        for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
            s->e[c] = spart_exp(stats[2 * (first + c)] - max);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int64_t c = 0; c < n; c++) {
                total = __fma_rn(stats[2 * (first + c) + 1], s->e[c], total);
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

/* Candidates [first, end) of question t scored by warp `warp` of
 * `warps` (ROWS a warp at once) into z[k]. */
template <typename T, bool COSINE, int ROWS>
__device__ inline void score_range(const view &p, int64_t t, int64_t first, int64_t end,
                                   int64_t warp, int64_t warps, double *z)
{
    const T *query = static_cast<const T *>(p.query) + t * p.dimension;
    const T *candidates = static_cast<const T *>(p.candidates) + t * p.num_candidate * p.dimension;
    for (int64_t k = first + warp * ROWS; k < end; k += warps * ROWS) {
        const int count = end - k < ROWS ? (int)(end - k) : ROWS;
        double out[ROWS];
        score_rows<T, COSINE, ROWS>(p, query, candidates + k * p.dimension, count, out);
        if ((threadIdx.x & 31u) == 0) {
            for (int r = 0; r < count; r++) {
                z[k + r] = out[r];
            }
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
    return p;
}

} // namespace spart_scoring

#endif /* SPART_SCORING_CUH */
