/*
 * src/softmax/softmax_kernels.h: the twin contract of the segmented
 * softmax (spart/softmax.h): the host loops (host/softmax.c) and the CUDA
 * kernels (kernels/softmax.cu) do the same operations in the same order,
 * so both give the same bits. src/softmax/softmax_ops.h chooses between
 * them; nothing else should.
 *
 * The order, for each row r (edges b .. b+n-1) and head h, the row cut
 * into chunks of SPART_SOFTMAX_CHUNK_EDGES edges from b:
 *
 *   chunk c:  m_c = the largest score (NaN-propagating: NaN if any is
 *             NaN); s_c = 0 if m_c = -inf, else the sum of
 *             spart_exp(s - m_c) over the chunk's edges by 32 lanes: lane
 *             l adds the terms of edges l, l+32, ... of the chunk in order
 *             from +0.0 (plain double additions), then lane l += lane l+d
 *             for d = 16, 8, 4, 2, 1 (lane 0 holds s_c);
 *   row:      M = the largest m_c; if M is NaN or +inf the row is NaN
 *             (every value written is SPART_SOFTMAX_NAN); if M = -inf it
 *             gives zeros; else S = s_0 for one chunk, and for several
 *             S = 0, S = fma(s_c, spart_exp(m_c - M), S) for c = 0, 1, ...
 *             (the same value for one chunk: fma(s_0, 1, 0) = s_0); then
 *             inv = 1 / S;
 *   out:      o = spart_exp(s - M) * inv, rounded once to the value type.
 *
 * The backward: per chunk, 32 lanes, lane l: acc = fma(out, g, acc) over
 * edges l, l+32, ...; the same tree; dot = chunk 0's sum, then dot += the
 * sum of chunk c for c = 1, 2, ...; grad = out * (g - dot) (double), rounded
 * once.
 *
 * The aggregation: M and inv as above; per feature f, per chunk, 32 lanes,
 * lane l: acc = fma(o, X[col[e], h, f], acc) over edges l, l+32, ... with
 * o unrounded; the same tree; y = chunk 0's sum, then y += chunk c's sum;
 * rounded once. A zero row (M = -inf) and an empty row give y = 0; a NaN
 * row gives y = SPART_SOFTMAX_NAN.
 *
 * float32 values are converted to double when read. The largest score is
 * taken in the value type (exact). A NaN result is written as the positive
 * quiet NaN, never a NaN whose payload follows the hardware.
 *
 * Long rows (more than one chunk) are worked chunk by chunk side by side;
 * their chunks' partial results go to the workspace: on the device in
 * slots by window (below), on the host by chunk of the row in hand. The
 * workspace's size is the same for both.
 *
 * Windows (the device's way to find long rows without a list): window q
 * holds edges q C .. q C + C - 1 (C = SPART_SOFTMAX_CHUNK_EDGES). Chunk c
 * of a long row r starts at b + c C, in window q = (b + c C) / C; each
 * window holds the start of at most two chunks of long rows: slot 0 for
 * the row holding edge q C (b <= q C), slot 1 for a row that starts inside
 * the window (b > q C). A long row's own results (M, inv) live in the slot
 * of its chunk 0. A slot holds, per head, SPART_SOFTMAX_SLOT_STATS doubles
 * and `width` doubles of the aggregation's partial sums. After the slots'
 * doubles, one int64 a slot: the device forward's note of the long row
 * whose chunk starts in it (written by the rows' kernel, checked against
 * the row pointers when read, so a stale note is never taken).
 */
#ifndef SPART_SOFTMAX_KERNELS_H
#define SPART_SOFTMAX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Must equal SPART_SOFTMAX_CHUNK of spart/softmax.h (the kernels do not
 * see include/; src/softmax/softmax.c checks). */
#define SPART_SOFTMAX_CHUNK_EDGES 4096
#define SPART_SOFTMAX_LANES 32
/* Doubles a slot holds per head besides the aggregation's: m_c, s_c (or
 * the chunk's dot), M, inv (or the row's dot). */
#define SPART_SOFTMAX_SLOT_STATS 4

/* One call's arrays and sizes, checked by src/softmax/softmax.c. */
typedef struct spart_softmax_problem {
    int64_t num_rows;
    int64_t num_edges;
    int64_t num_heads;
    const int64_t *row_ptr; /* exactly one of the two */
    const int32_t *row_ptr32;
    int is_float32; /* the values' type: 1 float32, 0 float64 */
    /* the aggregation only */
    int64_t num_nodes;
    int64_t width;
    const int64_t *columns; /* exactly one of the two */
    const int32_t *columns32;
} spart_softmax_problem;

/* Windows of E edges, and the doubles of workspace for `width` features
 * (2 slots a window, at least one window: never 0 bytes; a slot's doubles
 * for each head, then one int64 a slot). */
static inline int64_t spart_softmax_num_windows(int64_t num_edges)
{
    return (num_edges + SPART_SOFTMAX_CHUNK_EDGES - 1) / SPART_SOFTMAX_CHUNK_EDGES;
}

static inline int64_t spart_softmax_workspace_doubles(int64_t num_edges, int64_t num_heads,
                                                      int64_t width)
{
    const int64_t windows = spart_softmax_num_windows(num_edges);
    return 2 * (windows > 0 ? windows : 1) * (num_heads * (SPART_SOFTMAX_SLOT_STATS + width) + 1);
}

/* ---- host: OpenMP over rows, then over the chunks of each long row;
 * `workspace` holds spart_softmax_workspace_doubles doubles. ---- */
void spart_softmax_host_forward(const spart_softmax_problem *problem, const void *scores, void *out,
                                double *workspace, int threads);
void spart_softmax_host_backward(const spart_softmax_problem *problem, const void *out,
                                 const void *grad_out, void *grad_scores, double *workspace,
                                 int threads);
/* out may be NULL. */
void spart_softmax_host_aggregate(const spart_softmax_problem *problem, const void *scores,
                                  const void *features, void *aggregated, void *out,
                                  double *workspace, int threads);

/* ---- device: each enqueues on `stream` (a cudaStream_t) and returns a
 * cudaError_t as int (0: success); never allocates, never waits. Arrays
 * and the workspace are device memory. ---- */
int spart_softmax_device_forward(const spart_softmax_problem *problem, const void *scores,
                                 void *out, double *workspace, void *stream);
int spart_softmax_device_backward(const spart_softmax_problem *problem, const void *out,
                                  const void *grad_out, void *grad_scores, double *workspace,
                                  void *stream);
int spart_softmax_device_aggregate(const spart_softmax_problem *problem, const void *scores,
                                   const void *features, void *aggregated, void *out,
                                   double *workspace, void *stream);
/* The first bad row pointer (rows checked as spart_softmax_check_rows
 * says) into *first_bad (device memory, one int64: R + 1 when none); the
 * caller copies it back. */
int spart_softmax_device_check_rows(const spart_softmax_problem *problem, int64_t *first_bad,
                                    void *stream);
const char *spart_softmax_device_error_string(int error);
/* A benchmark's hook, not API: the device forward's layout, 2 (the
 * default) a block a chunk of more than 512 edges, 1 rows binned in tiles,
 * 0 a group every row (kernels/softmax.cu says more); the bits are the
 * same. */
void spart_softmax_bench_set_forward_design(int design);
/* A benchmark's second floor, not API: out[i] = spart_exp(scores[i]) (or,
 * with `shorter`, the table exp spart_softmax_exp_float32 of
 * src/softmax/softmax_exp.h)
 * for `count` float32 values of device memory (one read, one exp, one
 * write each), enqueued on `stream`. */
int spart_softmax_bench_exp_pass(const float *scores, float *out, int64_t count, int shorter,
                                 void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_SOFTMAX_KERNELS_H */
