/*
 * spart/scoring.h: fused candidate scoring. For each question t, a query
 * q (D values) and the question's own K candidates C_t (K x D), the
 * probability distribution over those candidates
 *
 *     sim_k = q . c_k                                         (dot)
 *           = (q . c_k) / (max(|q|, 1e-12) max(|c_k|, 1e-12))  (cosine)
 *     z_k   = sim_k * scale / temperature                     (the logits)
 *     p_k   = exp(z_k - max_j z_j) / sum_j exp(z_j - max_j z_j)
 *
 * in one pass over the candidates (one kernel launch on a device), with
 * the logits z written too when asked. The floor 1e-12 is on the norms,
 * not their squares: a zero candidate scores 0 under cosine, never NaN.
 * A row sums to 1 over its own question's candidates; rows of different
 * questions are not comparable.
 *
 * Arrays, C order: query (Q x D), candidates (Q x K x D), probabilities
 * (Q x K, written), logits (Q x K, written, or NULL). All four have one
 * type, float32 or float64 (spart_value_type). Any K >= 1 (10^5 and more:
 * a question's candidates are spread over many blocks on a device, so one
 * question does not leave the GPU idle), any D >= 1.
 *
 * Where: on the host (OpenMP over questions and candidates) or, with
 * on_device nonzero, on the context's CUDA device: every array (and the
 * workspace) memory of that device, the work queued on the context's
 * stream, never waited for (no synchronisation, no allocation in the
 * _workspace form), so a call can be recorded in a CUDA graph
 * (spart_device_graph_record): one kernel node.
 *
 * Arithmetic: every sum in float64, from values converted exactly from
 * float32 (a product of two float32 values is exact in float64, so a dot
 * of D terms is good to about D * 2^-53 of the sum of its |terms|,
 * whatever D): the probabilities of float32 inputs are then the float64
 * result rounded once to float32. Float64 costs nothing on an H200 (its
 * three fma per candidate value are far below the FP64 rate at the copy
 * rate); on GPUs with slow FP64 it would.
 *
 * Determinism, the order of operations (the same on host and device, for
 * any block size, thread count, batch or single question, so the same
 * bits everywhere):
 *   - the dot q.c_k, |c_k|^2 and |q|^2: the D values in quads (values
 *     4j .. 4j+3), the quads in segments of 64 (256 values; segment s
 *     holds quads 64s .. 64s+63); in segment s lane l of 32 takes the
 *     segment's quads l and l+32 in order and, within a quad, its values
 *     in order, accumulating with fma from +0.0 (a value past D is not
 *     added): the partial P(l, s); lane l's sum is +0.0 + P(l, 0) +
 *     P(l, 1) + ..., added in segment order; the 32 lanes combine in a
 *     binary tree, lane l += lane l+h for h = 16, 8, 4, 2, 1. (The
 *     segments depend on D alone: on a device several warps may share a
 *     long row, a segment each, and still give these bits.);
 *   - cosine: sim = dot / (max(sqrt(qq), 1e-12) * max(sqrt(cc), 1e-12));
 *     z = (sim * scale) / temperature, each operation rounded;
 *   - the candidates in chunks of SPART_SCORING_CHUNK (1024): per chunk c
 *     its maximum m_c and s_c = sum of exp(z_k - m_c), lane l of 32 adding
 *     the chunk's candidates l, l+32, ... in order from +0.0, the lanes in
 *     the binary tree above;
 *   - m = max over chunks of m_c; s = sum over chunks in chunk order, from
 *     +0.0, of fma(s_c, exp(m_c - m), s) (one chunk: s = s_0);
 *   - p_k = exp(z_k - m) / s, then rounded to the arrays' type; the
 *     logits are z rounded to that type.
 * exp is spart's own (built from +, -, *, fma), sqrt and / are correctly
 * rounded on both sides. A NaN input gives NaN probabilities for its
 * question (which NaN is not part of the promise).
 *
 * Memory: the _workspace form allocates nothing; it takes a workspace of
 * spart_scoring_workspace_size bytes where the arrays are (aligned for
 * double; its contents on entry do not matter). The simple forms allocate
 * the scratch they need through the context (on a device stream-ordered,
 * cudaMallocAsync, so they do not wait either; a device call for few
 * candidates needs none).
 *
 * Thread safety: one context runs one call at a time; distinct contexts
 * may score from distinct threads.
 *
 * Errors, every function: SPART_ERROR_NULL_POINTER (context, query,
 * candidates, probabilities, or a workspace that is needed);
 * SPART_ERROR_INVALID_ARGUMENT (Q, K or D below 1; scale or temperature
 * not a finite number above 0; logits the same array as probabilities; a
 * workspace too small or not aligned for double; an array that is not
 * memory of the context's device where device memory is needed);
 * SPART_ERROR_UNKNOWN_ENUM (similarity or value type);
 * SPART_ERROR_OVERFLOW (Q x K x D past int64); SPART_ERROR_NO_DEVICE
 * (on_device with a library built without CUDA, or no device);
 * SPART_ERROR_OUT_OF_MEMORY; SPART_ERROR_INTERNAL (a CUDA error, named).
 */
#ifndef SPART_SCORING_H
#define SPART_SCORING_H

#include "spart/common.h"
#include "spart/regridder.h" /* spart_value_type */

#ifdef __cplusplus
extern "C" {
#endif

/* Candidates per chunk of the softmax's sum (see Determinism). */
#define SPART_SCORING_CHUNK 1024

/* How a query and a candidate are compared. */
typedef enum spart_similarity {
    SPART_SIMILARITY_DOT = 0,   /* q . c */
    SPART_SIMILARITY_COSINE = 1 /* q . c over the floored norms */
} spart_similarity;

/* Bytes of workspace spart_scoring_apply_batch_workspace needs for Q
 * questions of K candidates (0 for sizes below 1 or past size_t): Q K
 * float64 logits and two float64 per chunk of each question. */
SPART_API size_t spart_scoring_workspace_size(int64_t num_question, int64_t num_candidate);

/* One question: query (D values), candidates (K x D), probabilities (K
 * values, written), logits (K values, written, or NULL). */
SPART_NODISCARD SPART_API spart_status spart_scoring_apply(
    spart_context *context, const void *query, const void *candidates, void *probabilities,
    void *logits, int64_t num_candidate, int64_t dimension, spart_similarity similarity,
    double scale, double temperature, spart_value_type value_type, int on_device);

/* Q questions in one call (one launch on a device): query (Q x D),
 * candidates (Q x K x D), probabilities and logits (Q x K). Row t is the
 * same bits as spart_scoring_apply on question t alone. */
SPART_NODISCARD SPART_API spart_status spart_scoring_apply_batch(
    spart_context *context, const void *query, const void *candidates, void *probabilities,
    void *logits, int64_t num_question, int64_t num_candidate, int64_t dimension,
    spart_similarity similarity, double scale, double temperature, spart_value_type value_type,
    int on_device);

/* spart_scoring_apply_batch with the caller's workspace (where the arrays
 * are, at least spart_scoring_workspace_size bytes): allocates nothing. */
SPART_NODISCARD SPART_API spart_status spart_scoring_apply_batch_workspace(
    spart_context *context, const void *query, const void *candidates, void *probabilities,
    void *logits, int64_t num_question, int64_t num_candidate, int64_t dimension,
    spart_similarity similarity, double scale, double temperature, spart_value_type value_type,
    int on_device, void *workspace, size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_SCORING_H */
