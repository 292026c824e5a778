/*
 * host/softmax.c: the segmented softmax, its backward and the aggregation
 * on the host, twin of kernels/softmax.cu (same operations, same order;
 * the order is written in src/softmax/softmax_kernels.h).
 *
 * Rows of at most one chunk are shared out to the threads 64 at a time
 * (their results do not depend on who computes them). The forward walks a
 * row once for a block of up to 8 heads (an edge's heads lie side by
 * side), each head with its own maximum, lanes and terms, so a head gives
 * the bits it gives alone; a block's terms exp(s - M) are computed once and
 * kept on the thread's stack when they fit (64 KiB), else computed again
 * for the write. Rows of several chunks come after, one at a time, their
 * chunks side by side: the chunks' partial results go to the workspace
 * (chunk c of the row at c * H * slot), and one thread combines them in
 * chunk order. The kernels of the forward, the backward and the
 * aggregation (a row, or a chunk of a long row) are compiled twice
 * (target_clones, as host/csr_product.c): with AVX2 and FMA the fma() and
 * floor() of spart_exp are instructions, in the baseline clone calls of the
 * C library; the results are the same, correctly rounded either way.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define SPART_MATH_FUNCTION static inline __attribute__((always_inline))
#endif
#include "core/exp_math.h"
#include "softmax/softmax_kernels.h"

/* Helpers compiled into each clone of the kernels below (as in
 * host/csr_product.c): with AVX2 and FMA, fma() and floor() of spart_exp
 * are instructions; in the baseline clone they are the C library's calls,
 * slower and with the same, correctly rounded, results. */
#if defined(__GNUC__) || defined(__clang__)
#define KERNEL_INLINE static inline __attribute__((always_inline))
#else
#define KERNEL_INLINE static inline
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_CLONES __attribute__((target_clones("fma", "default")))
#else
#define KERNEL_CLONES
#endif

#define CHUNK SPART_SOFTMAX_CHUNK_EDGES
#define LANES SPART_SOFTMAX_LANES
/* Features of the aggregation summed together (their lanes on the stack). */
#define FEATURE_TILE 16

/* ---- values, rows, NaN ---------------------------------------------------------------------- */

KERNEL_INLINE double load(const void *values, int is_float32, int64_t i)
{
    return is_float32 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}

/* The positive quiet NaN, whatever NaN the arithmetic made. */
KERNEL_INLINE double quiet_nan(void)
{
    const uint64_t bits = 0x7ff8000000000000ULL;
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Write `value` rounded once to the value type; a NaN as the quiet NaN
 * (its float32 form is 0x7fc00000). */
KERNEL_INLINE void store(void *values, int is_float32, int64_t i, double value)
{
    if (value != value) {
        value = quiet_nan();
    }
    if (is_float32) {
        ((float *)values)[i] = (float)value;
    } else {
        ((double *)values)[i] = value;
    }
}

KERNEL_INLINE int64_t row_begin(const spart_softmax_problem *p, int64_t r)
{
    return p->row_ptr != NULL ? p->row_ptr[r] : (int64_t)p->row_ptr32[r];
}

KERNEL_INLINE int64_t column_of(const spart_softmax_problem *p, int64_t e)
{
    return p->columns != NULL ? p->columns[e] : (int64_t)p->columns32[e];
}

/* The larger of m and x, NaN when either is NaN. */
KERNEL_INLINE double nan_max(double m, double x)
{
    return (x > m || x != x) ? x : m;
}

/* lane l += lane l + d, d = 16, ..., 1: the chunk's sum in lanes[0]. */
KERNEL_INLINE double combine_lanes(double *lanes)
{
    for (int d = LANES / 2; d >= 1; d /= 2) {
        for (int l = 0; l < d; l++) {
            lanes[l] = lanes[l] + lanes[l + d];
        }
    }
    return lanes[0];
}

/* ---- the forward's steps -------------------------------------------------------------------- */

/* Chunk [begin, begin + n) of head h: its largest score *m and its sum of
 * exp(s - m) (0 if m = -inf); `terms` (n values, or NULL) receives each
 * exp(s - m). */
KERNEL_INLINE double chunk_sum(const spart_softmax_problem *p, const void *scores, int64_t begin,
                               int64_t n, int64_t h, double *m_out, double *terms)
{
    const int64_t H = p->num_heads;
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        m = nan_max(m, load(scores, p->is_float32, (begin + i) * H + h));
    }
    *m_out = m;
    if (m == -INFINITY) {
        if (terms != NULL) {
            for (int64_t i = 0; i < n; i++) {
                terms[i] = 0.0;
            }
        }
        return 0.0;
    }
    double lanes[LANES] = {0.0};
    for (int64_t i = 0; i < n; i++) {
        const double t = spart_exp(load(scores, p->is_float32, (begin + i) * H + h) - m);
        if (terms != NULL) {
            terms[i] = t;
        }
        lanes[i % LANES] = lanes[i % LANES] + t;
    }
    return combine_lanes(lanes);
}

/* What a row (and head) gives, from M and S. */
enum row_kind { ROW_FINITE = 0, ROW_ZERO = 1, ROW_NAN = 2 };

KERNEL_INLINE int row_kind_of(double m)
{
    if (m != m || m == INFINITY) {
        return ROW_NAN;
    }
    return m == -INFINITY ? ROW_ZERO : ROW_FINITE;
}

/* Write the chunk [begin, begin + n) of head h: terms (or exp(s - M)
 * recomputed when NULL) times inv, or zeros, or NaN. */
KERNEL_INLINE void write_chunk(const spart_softmax_problem *p, const void *scores, void *out,
                               int64_t begin, int64_t n, int64_t h, int kind, double m, double inv,
                               const double *terms)
{
    const int64_t H = p->num_heads;
    for (int64_t i = 0; i < n; i++) {
        const int64_t at = (begin + i) * H + h;
        double value;
        if (kind == ROW_NAN) {
            value = quiet_nan();
        } else if (kind == ROW_ZERO) {
            value = 0.0;
        } else {
            const double t =
                terms != NULL ? terms[i] : spart_exp(load(scores, p->is_float32, at) - m);
            value = t * inv;
        }
        store(out, p->is_float32, at, value);
    }
}

/* M, inv and the kind of a long row of head h from its chunks' (m_c, s_c)
 * at stats[c * stride], stats[c * stride + 1]. */
static void combine_chunks(const double *stats, int64_t stride, int64_t chunks, double *m_out,
                           double *inv_out, int *kind_out)
{
    double m = -INFINITY;
    for (int64_t c = 0; c < chunks; c++) {
        m = nan_max(m, stats[c * stride]);
    }
    double sum = 0.0;
    const int kind = row_kind_of(m);
    if (kind == ROW_FINITE) {
        for (int64_t c = 0; c < chunks; c++) {
            sum = fma(stats[c * stride + 1], spart_exp(stats[c * stride] - m), sum);
        }
    }
    *m_out = m;
    *inv_out = 1.0 / sum;
    *kind_out = kind;
}

/* ---- the forward ----------------------------------------------------------------------------- */

/* The forward walks a row once for a block of up to HEAD_BLOCK heads (the
 * heads of an edge lie side by side), so each head's scores are read in
 * the order of the contract as they are with one head: a head's m, lanes
 * and terms are its own, and its bits do not depend on its neighbours. */
#define HEAD_BLOCK 8
/* Terms exp(s - m) a thread keeps for the write (64 KiB on its stack): a
 * row's block of heads whose terms do not fit computes them again when
 * writing (the same bits: spart_exp is a function of its argument). */
#define TERMS_KEPT (2 * CHUNK)

/* Chunk [begin, begin + n) of heads h0 .. h0 + hb - 1: per head j its
 * largest score m[j] and its sum s[j] of exp(s - m[j]) (0 if m[j] = -inf)
 * in the contract's lane order; terms[i * hb + j] (when not NULL) gets
 * each term. is_float32 is a constant where this is inlined. */
KERNEL_INLINE void chunk_stats_heads(const void *scores, int is_float32, int64_t H, int64_t begin,
                                     int64_t n, int64_t h0, int hb, double *m, double *s,
                                     double *terms)
{
    for (int j = 0; j < hb; j++) {
        m[j] = -INFINITY;
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t at = (begin + i) * H + h0;
        for (int j = 0; j < hb; j++) {
            m[j] = nan_max(m[j], load(scores, is_float32, at + j));
        }
    }
    double lanes[LANES][HEAD_BLOCK];
    for (int l = 0; l < LANES; l++) {
        for (int j = 0; j < hb; j++) {
            lanes[l][j] = 0.0;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t at = (begin + i) * H + h0;
        double *lane = lanes[i % LANES];
        for (int j = 0; j < hb; j++) {
            /* a zero head (m = -inf) has s = 0 and zero terms */
            const double t =
                m[j] == -INFINITY ? 0.0 : spart_exp(load(scores, is_float32, at + j) - m[j]);
            if (terms != NULL) {
                terms[i * hb + j] = t;
            }
            lane[j] = lane[j] + t;
        }
    }
    for (int j = 0; j < hb; j++) {
        double column[LANES];
        for (int l = 0; l < LANES; l++) {
            column[l] = lanes[l][j];
        }
        s[j] = m[j] == -INFINITY ? 0.0 : combine_lanes(column);
    }
}

/* Write chunk [begin, begin + n) of heads h0 .. h0 + hb - 1: the terms
 * (recomputed from m[j] when `terms` is NULL) times inv[j], or zeros, or
 * NaN, by each head's kind. */
KERNEL_INLINE void chunk_write_heads(const void *scores, void *out, int is_float32, int64_t H,
                                     int64_t begin, int64_t n, int64_t h0, int hb, const int *kind,
                                     const double *m, const double *inv, const double *terms)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t at = (begin + i) * H + h0;
        for (int j = 0; j < hb; j++) {
            double value;
            if (kind[j] == ROW_NAN) {
                value = quiet_nan();
            } else if (kind[j] == ROW_ZERO) {
                value = 0.0;
            } else {
                const double t = terms != NULL ? terms[i * hb + j]
                                               : spart_exp(load(scores, is_float32, at + j) - m[j]);
                value = t * inv[j];
            }
            store(out, is_float32, at + j, value);
        }
    }
}

/* A row of at most one chunk, every head: S = s_0 (one chunk). */
KERNEL_INLINE void forward_short_row_typed(const spart_softmax_problem *p, const void *scores,
                                           void *out, int is_float32, int64_t begin, int64_t n,
                                           double *terms)
{
    const int64_t H = p->num_heads;
    for (int64_t h0 = 0; h0 < H; h0 += HEAD_BLOCK) {
        const int hb = (int)(H - h0 < HEAD_BLOCK ? H - h0 : HEAD_BLOCK);
        double *kept = n * hb <= TERMS_KEPT ? terms : NULL;
        double m[HEAD_BLOCK], s[HEAD_BLOCK], inv[HEAD_BLOCK];
        int kind[HEAD_BLOCK];
        chunk_stats_heads(scores, is_float32, H, begin, n, h0, hb, m, s, kept);
        for (int j = 0; j < hb; j++) {
            kind[j] = row_kind_of(m[j]);
            inv[j] = 1.0 / s[j];
        }
        chunk_write_heads(scores, out, is_float32, H, begin, n, h0, hb, kind, m, inv, kept);
    }
}

/* The rows of at most one chunk in [first, last), the value type a
 * constant in each branch; a clone per processor kind (KERNEL_CLONES). */
KERNEL_CLONES static void forward_short_rows(const spart_softmax_problem *p, const void *scores,
                                             void *out, int64_t first, int64_t last, double *terms)
{
    for (int64_t r = first; r < last; r++) {
        const int64_t begin = row_begin(p, r), n = row_begin(p, r + 1) - begin;
        if (n > 0 && n <= CHUNK) {
            if (p->is_float32) {
                forward_short_row_typed(p, scores, out, 1, begin, n, terms);
            } else {
                forward_short_row_typed(p, scores, out, 0, begin, n, terms);
            }
        }
    }
}

/* Chunk c of a long row: its (m_c, s_c) of every head into stats (2 a
 * head), or, with `write`, its values from the row's (M, inv, kind) in
 * `row` (3 a head). */
KERNEL_CLONES static void forward_long_chunk(const spart_softmax_problem *p, const void *scores,
                                             void *out, int64_t first, int64_t length,
                                             double *stats, const double *row, int write)
{
    const int64_t H = p->num_heads;
    for (int64_t h0 = 0; h0 < H; h0 += HEAD_BLOCK) {
        const int hb = (int)(H - h0 < HEAD_BLOCK ? H - h0 : HEAD_BLOCK);
        double m[HEAD_BLOCK], s[HEAD_BLOCK], inv[HEAD_BLOCK];
        int kind[HEAD_BLOCK];
        if (!write) {
            if (p->is_float32) {
                chunk_stats_heads(scores, 1, H, first, length, h0, hb, m, s, NULL);
            } else {
                chunk_stats_heads(scores, 0, H, first, length, h0, hb, m, s, NULL);
            }
            for (int j = 0; j < hb; j++) {
                stats[2 * (h0 + j)] = m[j];
                stats[2 * (h0 + j) + 1] = s[j];
            }
            continue;
        }
        for (int j = 0; j < hb; j++) {
            m[j] = row[3 * (h0 + j)];
            inv[j] = row[3 * (h0 + j) + 1];
            kind[j] = (int)row[3 * (h0 + j) + 2];
        }
        if (p->is_float32) {
            chunk_write_heads(scores, out, 1, H, first, length, h0, hb, kind, m, inv, NULL);
        } else {
            chunk_write_heads(scores, out, 0, H, first, length, h0, hb, kind, m, inv, NULL);
        }
    }
}

static void forward_long_row(const spart_softmax_problem *p, const void *scores, void *out,
                             int64_t begin, int64_t n, double *workspace, int threads)
{
    const int64_t H = p->num_heads, chunks = (n + CHUNK - 1) / CHUNK;
    const int64_t stride = 2 * H;              /* (m_c, s_c) of every head, chunk after chunk */
    double *row = workspace + chunks * stride; /* (M, inv, kind) of every head */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        const int64_t length = n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK;
        forward_long_chunk(p, scores, out, begin + c * CHUNK, length, workspace + c * stride, NULL,
                           0);
    }
    for (int64_t h = 0; h < H; h++) {
        int kind;
        combine_chunks(workspace + 2 * h, stride, chunks, &row[3 * h], &row[3 * h + 1], &kind);
        row[3 * h + 2] = (double)kind;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        const int64_t length = n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK;
        forward_long_chunk(p, scores, out, begin + c * CHUNK, length, NULL, row, 1);
    }
}

/* Rows handed to a thread at a time. */
#define ROWS_PER_TASK 64

void spart_softmax_host_forward(const spart_softmax_problem *problem, const void *scores, void *out,
                                double *workspace, int threads)
{
    const spart_softmax_problem *p = problem;
    const int64_t tasks = (p->num_rows + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
#pragma omp parallel num_threads(threads)
    {
        double terms[TERMS_KEPT];
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            const int64_t first = t * ROWS_PER_TASK;
            const int64_t last =
                first + ROWS_PER_TASK < p->num_rows ? first + ROWS_PER_TASK : p->num_rows;
            forward_short_rows(p, scores, out, first, last, terms);
        }
    }
    for (int64_t r = 0; r < p->num_rows; r++) {
        const int64_t begin = row_begin(p, r), n = row_begin(p, r + 1) - begin;
        if (n > CHUNK) {
            forward_long_row(p, scores, out, begin, n, workspace, threads);
        }
    }
}

/* ---- the backward --------------------------------------------------------------------------- */

/* The sum of out * g over the chunk [begin, begin + n) of head h. */
KERNEL_INLINE double chunk_dot(const spart_softmax_problem *p, const void *out,
                               const void *grad_out, int64_t begin, int64_t n, int64_t h)
{
    const int64_t H = p->num_heads;
    double lanes[LANES] = {0.0};
    for (int64_t i = 0; i < n; i++) {
        const int64_t at = (begin + i) * H + h;
        lanes[i % LANES] =
            fma(load(out, p->is_float32, at), load(grad_out, p->is_float32, at), lanes[i % LANES]);
    }
    return combine_lanes(lanes);
}

KERNEL_INLINE void write_gradient(const spart_softmax_problem *p, const void *out,
                                  const void *grad_out, void *grad_scores, int64_t begin, int64_t n,
                                  int64_t h, double dot)
{
    const int64_t H = p->num_heads;
    for (int64_t i = 0; i < n; i++) {
        const int64_t at = (begin + i) * H + h;
        const double o = load(out, p->is_float32, at), g = load(grad_out, p->is_float32, at);
        store(grad_scores, p->is_float32, at, o * (g - dot));
    }
}

/* A row of at most one chunk, every head. */
KERNEL_CLONES static void backward_short_row(const spart_softmax_problem *p, const void *out,
                                             const void *grad_out, void *grad_scores, int64_t begin,
                                             int64_t n)
{
    for (int64_t h = 0; h < p->num_heads; h++) {
        const double dot = chunk_dot(p, out, grad_out, begin, n, h);
        write_gradient(p, out, grad_out, grad_scores, begin, n, h, dot);
    }
}

/* A chunk of a long row, every head: its dots into dots[h], or, with
 * `write`, its gradients from the row's dots[h]. */
KERNEL_CLONES static void backward_long_chunk(const spart_softmax_problem *p, const void *out,
                                              const void *grad_out, void *grad_scores,
                                              int64_t first, int64_t length, double *dots,
                                              int write)
{
    for (int64_t h = 0; h < p->num_heads; h++) {
        if (write) {
            write_gradient(p, out, grad_out, grad_scores, first, length, h, dots[h]);
        } else {
            dots[h] = chunk_dot(p, out, grad_out, first, length, h);
        }
    }
}

void spart_softmax_host_backward(const spart_softmax_problem *problem, const void *out,
                                 const void *grad_out, void *grad_scores, double *workspace,
                                 int threads)
{
    const spart_softmax_problem *p = problem;
    const int64_t H = p->num_heads;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
    for (int64_t r = 0; r < p->num_rows; r++) {
        const int64_t begin = row_begin(p, r), n = row_begin(p, r + 1) - begin;
        if (n > 0 && n <= CHUNK) {
            backward_short_row(p, out, grad_out, grad_scores, begin, n);
        }
    }
    for (int64_t r = 0; r < p->num_rows; r++) {
        const int64_t begin = row_begin(p, r), n = row_begin(p, r + 1) - begin;
        if (n <= CHUNK) {
            continue;
        }
        const int64_t chunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t length = n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK;
            backward_long_chunk(p, out, grad_out, grad_scores, begin + c * CHUNK, length,
                                workspace + c * H, 0);
        }
        double *dots = workspace + chunks * H;
        for (int64_t h = 0; h < H; h++) {
            double dot = workspace[h];
            for (int64_t c = 1; c < chunks; c++) {
                dot = dot + workspace[c * H + h];
            }
            dots[h] = dot;
        }
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t length = n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK;
            backward_long_chunk(p, out, grad_out, grad_scores, begin + c * CHUNK, length, dots, 1);
        }
    }
}

/* ---- the aggregation ------------------------------------------------------------------------ */

/* The sums over the chunk [begin, begin + n) of head h of o_i X[col, h, f]
 * for features f0 .. f0 + count - 1 into sums[0 .. count-1], o_i =
 * weights[i]. */
KERNEL_INLINE void chunk_gather(const spart_softmax_problem *p, const void *features, int64_t begin,
                                int64_t n, int64_t h, const double *weights, int64_t f0, int count,
                                double *sums)
{
    const int64_t H = p->num_heads, F = p->width;
    double lanes[FEATURE_TILE][LANES];
    for (int j = 0; j < count; j++) {
        for (int l = 0; l < LANES; l++) {
            lanes[j][l] = 0.0;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t node = column_of(p, begin + i);
        const int64_t at = (node * H + h) * F + f0;
        for (int j = 0; j < count; j++) {
            lanes[j][i % LANES] =
                fma(weights[i], load(features, p->is_float32, at + j), lanes[j][i % LANES]);
        }
    }
    for (int j = 0; j < count; j++) {
        sums[j] = combine_lanes(lanes[j]);
    }
}

/* o = exp(s - M) * inv for the chunk [begin, begin + n) of head h into
 * weights (0 for a zero row); written to `out` too when it is not NULL. */
KERNEL_INLINE void chunk_weights(const spart_softmax_problem *p, const void *scores, void *out,
                                 int64_t begin, int64_t n, int64_t h, int kind, double m,
                                 double inv, double *weights)
{
    const int64_t H = p->num_heads;
    for (int64_t i = 0; i < n; i++) {
        weights[i] = kind == ROW_FINITE
                         ? spart_exp(load(scores, p->is_float32, (begin + i) * H + h) - m) * inv
                         : 0.0;
    }
    if (out != NULL) {
        write_chunk(p, scores, out, begin, n, h, kind, m, inv, NULL);
    }
}

/* y[r, h, :] of a row of at most one chunk. */
KERNEL_CLONES static void aggregate_short_row(const spart_softmax_problem *p, const void *scores,
                                              const void *features, void *aggregated, void *out,
                                              int64_t r, int64_t begin, int64_t n, double *weights)
{
    const int64_t H = p->num_heads, F = p->width;
    for (int64_t h = 0; h < H; h++) {
        double m = -INFINITY, inv = 0.0;
        int kind = ROW_ZERO;
        if (n > 0) {
            const double sum = chunk_sum(p, scores, begin, n, h, &m, NULL);
            kind = row_kind_of(m);
            inv = 1.0 / sum;
            chunk_weights(p, scores, out, begin, n, h, kind, m, inv, weights);
        }
        for (int64_t f0 = 0; f0 < F; f0 += FEATURE_TILE) {
            const int count = (int)(F - f0 < FEATURE_TILE ? F - f0 : FEATURE_TILE);
            double sums[FEATURE_TILE];
            if (kind == ROW_FINITE) {
                chunk_gather(p, features, begin, n, h, weights, f0, count, sums);
            }
            for (int j = 0; j < count; j++) {
                const double y = kind == ROW_NAN ? quiet_nan() : kind == ROW_ZERO ? 0.0 : sums[j];
                store(aggregated, p->is_float32, (r * H + h) * F + f0 + j, y);
            }
        }
    }
}

/* A chunk of a long row: (m_c, s_c) of every head into stats (2 a head). */
KERNEL_CLONES static void aggregate_chunk_stats(const spart_softmax_problem *p, const void *scores,
                                                int64_t first, int64_t length, double *stats)
{
    for (int64_t h = 0; h < p->num_heads; h++) {
        stats[2 * h + 1] = chunk_sum(p, scores, first, length, h, &stats[2 * h], NULL);
    }
}

/* A chunk of a long row: its weights from the row's (M, inv, kind) in
 * `row` (3 a head), written to `out` when not NULL, and its partial sums
 * of every head's F features into sums[h * F ..]. */
KERNEL_CLONES static void aggregate_chunk_sums(const spart_softmax_problem *p, const void *scores,
                                               const void *features, void *out, int64_t first,
                                               int64_t length, const double *row, double *sums,
                                               double *weights)
{
    const int64_t H = p->num_heads, F = p->width;
    for (int64_t h = 0; h < H; h++) {
        const int kind = (int)row[3 * h + 2];
        chunk_weights(p, scores, out, first, length, h, kind, row[3 * h], row[3 * h + 1], weights);
        for (int64_t f0 = 0; f0 < F && kind == ROW_FINITE; f0 += FEATURE_TILE) {
            const int count = (int)(F - f0 < FEATURE_TILE ? F - f0 : FEATURE_TILE);
            chunk_gather(p, features, first, length, h, weights, f0, count, sums + h * F + f0);
        }
    }
}

static void aggregate_long_row(const spart_softmax_problem *p, const void *scores,
                               const void *features, void *aggregated, void *out, int64_t r,
                               int64_t begin, int64_t n, double *workspace, int threads)
{
    const int64_t H = p->num_heads, F = p->width, chunks = (n + CHUNK - 1) / CHUNK;
    const int64_t stride = H * (2 + F); /* per chunk: (m_c, s_c) and F partial sums a head */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        const int64_t length = n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK;
        aggregate_chunk_stats(p, scores, begin + c * CHUNK, length, workspace + c * stride);
    }
    double *row = workspace + chunks * stride; /* (M, inv, kind) of every head */
    for (int64_t h = 0; h < H; h++) {
        int kind;
        combine_chunks(workspace + 2 * h, stride, chunks, &row[3 * h], &row[3 * h + 1], &kind);
        row[3 * h + 2] = (double)kind;
    }
#pragma omp parallel num_threads(threads)
    {
        double weights[CHUNK];
#pragma omp for schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t length = n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK;
            aggregate_chunk_sums(p, scores, features, out, begin + c * CHUNK, length, row,
                                 workspace + c * stride + 2 * H, weights);
        }
    }
    for (int64_t h = 0; h < H; h++) {
        const int kind = (int)row[3 * h + 2];
        for (int64_t f = 0; f < F; f++) {
            double y = kind == ROW_NAN ? quiet_nan() : 0.0;
            if (kind == ROW_FINITE) {
                y = workspace[2 * H + h * F + f];
                for (int64_t c = 1; c < chunks; c++) {
                    y = y + workspace[c * stride + 2 * H + h * F + f];
                }
            }
            store(aggregated, p->is_float32, (r * H + h) * F + f, y);
        }
    }
}

void spart_softmax_host_aggregate(const spart_softmax_problem *problem, const void *scores,
                                  const void *features, void *aggregated, void *out,
                                  double *workspace, int threads)
{
    const spart_softmax_problem *p = problem;
#pragma omp parallel num_threads(threads)
    {
        double weights[CHUNK];
#pragma omp for schedule(dynamic, 64)
        for (int64_t r = 0; r < p->num_rows; r++) {
            const int64_t begin = row_begin(p, r), n = row_begin(p, r + 1) - begin;
            if (n <= CHUNK) {
                aggregate_short_row(p, scores, features, aggregated, out, r, begin, n, weights);
            }
        }
    }
    for (int64_t r = 0; r < p->num_rows; r++) {
        const int64_t begin = row_begin(p, r), n = row_begin(p, r + 1) - begin;
        if (n > CHUNK) {
            aggregate_long_row(p, scores, features, aggregated, out, r, begin, n, workspace,
                               threads);
        }
    }
}
