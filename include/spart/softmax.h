/*
 * spart/softmax.h: the segmented multi-head softmax of graph attention,
 * its backward, and the aggregation that follows it, on CSR rows.
 *
 * Scores s of E edges and H heads lie as an (E, H) array in C order
 * (heads contiguous); the edges are grouped into R rows by R + 1 row
 * pointers (int64 or int32): row r owns edges row_ptr[r] .. row_ptr[r+1]-1.
 * Each row and head is normalised on its own:
 *
 *   out[e,h]    = exp(s[e,h] - m[r,h]) / sum over e' in r of exp(s[e',h] - m[r,h])
 *   grad_s[e,h] = out[e,h] * (g[e,h] - sum over e' in r of out[e',h] * g[e',h])
 *   y[r,h,:]    = sum over e in r of out[e,h] * X[col[e],h,:]      (the aggregation)
 *
 * with m[r,h] the row's largest score. Graph attention normalises over the
 * edges coming INTO a node: make the rows the destination nodes (the CSR
 * of the transposed adjacency, i.e. edges sorted by destination, with
 * row_ptr from the destinations' counts and col[e] the source of edge e),
 * as PyG's softmax(src, index=destination) does. The result for an edge
 * does not depend on how the other rows are laid out.
 *
 * Values are float64, or float32 computed and summed in float64 and
 * rounded once when written.
 *
 * Edge rules: an empty row writes nothing (the aggregation writes y = 0
 * there, the sum over no edges); a row (and head) whose scores are all
 * -inf gives zeros (as PyTorch's safe softmax; y = 0); a row with a +inf
 * or NaN score gives NaN for every edge of that row and head (y too), and
 * nowhere else; a row of one finite score gives exactly 1. A NaN written
 * is the positive quiet NaN (the same bits on host and device). Edges
 * before row_ptr[0] or from row_ptr[R] on belong to no row and are not
 * written.
 *
 * Where: on the host (OpenMP) or, with segments.on_device nonzero, on the
 * context's CUDA device: every array then is memory of that device, the
 * work is only enqueued on the context's stream (no call waits, except
 * spart_softmax_check_rows), and the calls of the _workspace forms can be
 * recorded in a CUDA graph (spart/device_memory.h).
 *
 * Memory: nothing is kept between calls. The _workspace forms take
 * scratch of spart_softmax_workspace_size bytes where the arrays are (it
 * holds the partial results of rows longer than a chunk); the plain forms
 * allocate it themselves (on a device, stream-ordered).
 *
 * Thread safety: distinct calls may run from distinct threads with
 * distinct contexts; a context runs one call at a time.
 *
 * Determinism: every value comes from one fixed order of operations that
 * depends on the row pointers alone, never on the thread count, the
 * device, the launch shape or the number of heads (a head alone gives the
 * bits it gives among others), so host and device give the same bits. For
 * each row and head, the row is cut into chunks of SPART_SOFTMAX_CHUNK
 * edges from its first edge. For chunk c, its largest score m_c (NaN if
 * any score is NaN) and its sum s_c of exp(s - m_c) in the lane order of
 * the CSR product with 32 lanes: lane l adds the terms of edges l, l+32,
 * l+64, ... of the chunk in order from +0.0; the lanes combine in a binary
 * tree (lane l += lane l+h for h = 16, 8, 4, 2, 1); a chunk whose largest
 * score is -inf has s_c = 0. The row: M = the largest m_c, S = 0 and then
 * S = fma(s_c, exp(m_c - M), S) for c = 0, 1, ... in order (a row of one
 * chunk has S = s_0), and out = exp(s - M) * (1 / S) rounded to the value
 * type. exp is spart's own (built from +, -, * and fma, src/core/exp_math.h;
 * relative error about 1 ulp of float64), the same code on host and
 * device. The backward's dot sum over e' of out * g and the aggregation's
 * sum over e of o * X (o = exp(s - M) * (1 / S) in float64, before
 * rounding) follow the same chunks and lanes with fma (lane l:
 * acc = fma(a, b, acc)), the chunk sums added in chunk order from the
 * first; then grad_s = out * (g - dot) in float64, rounded once.
 *
 * Accuracy: against exact arithmetic, a float64 result is within a few
 * units in the last place times log2 of the row length; a float32 result
 * is the float64 value rounded once (within 1 ulp of float32 of the exact
 * value).
 *
 * Errors, every call: SPART_ERROR_NULL_POINTER (a NULL context, a NULL
 * array that has values to hold), SPART_ERROR_INVALID_ARGUMENT (negative
 * sizes, H = 0, row pointers that are negative, descend or pass E (on a
 * device only when spart_softmax_check_rows is asked), too little
 * workspace, an array that is not memory of the context's device for a
 * device call), SPART_ERROR_UNKNOWN_ENUM (a value type), SPART_ERROR_OVERFLOW
 * (E * H or R * H * F that does not fit int64), SPART_ERROR_NO_DEVICE (a
 * device call without CUDA or without the device), SPART_ERROR_OUT_OF_MEMORY
 * (the plain forms' workspace), SPART_ERROR_INTERNAL (a CUDA error, named).
 */
#ifndef SPART_SOFTMAX_H
#define SPART_SOFTMAX_H

#include "spart/common.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Edges per chunk of a row in the order of operations (above). */
#define SPART_SOFTMAX_CHUNK 4096

/* The rows and the sizes every call shares. Exactly one of row_ptr and
 * row_ptr32 is set (num_rows + 1 values: int64 or int32). */
typedef struct spart_softmax_segments {
    int64_t num_rows;            /* R >= 0 */
    int64_t num_edges;           /* E >= 0: the scores' first extent */
    int64_t num_heads;           /* H >= 1: the scores' second extent */
    const int64_t *row_ptr;      /* int64 row pointers, or NULL */
    const int32_t *row_ptr32;    /* int32 row pointers, or NULL */
    spart_value_type value_type; /* of every value array of the call */
    int on_device;               /* nonzero: arrays on the context's CUDA device */
} spart_softmax_segments;

/* The gather of the aggregation: edge e reads node col[e] of the features
 * X, an (num_nodes, H, width) array in C order. Exactly one of columns
 * and columns32 is set (E values). */
typedef struct spart_softmax_gather {
    int64_t num_nodes;        /* N >= 0 */
    int64_t width;            /* F >= 1: features a head */
    const int64_t *columns;   /* int64 columns, or NULL */
    const int32_t *columns32; /* int32 columns, or NULL */
} spart_softmax_gather;

/* Bytes of workspace the _workspace forms need for these segments (and,
 * for the aggregation, `width` features a head; 0 for the softmax and its
 * backward). The same size on host and device; it depends on E, H and
 * width only: 16 H (4 + width) max(1, ceil(E / SPART_SOFTMAX_CHUNK))
 * bytes (two slots of partial results a chunk's worth of edges). 0 for a
 * NULL `segments` or invalid sizes. */
SPART_API size_t spart_softmax_workspace_size(const spart_softmax_segments *segments,
                                              int64_t width);

/* Check the row pointers: row_ptr[0] >= 0, ascending, row_ptr[R] <= E.
 * The host calls check them themselves; device calls do not (they assume
 * it): call this to have them checked on a device too. On a device it
 * copies them to the host and waits for the context's stream, so it may
 * not be recorded in a graph. Errors: SPART_ERROR_INVALID_ARGUMENT naming
 * the first bad pointer, and those of every call. */
SPART_NODISCARD SPART_API spart_status
spart_softmax_check_rows(spart_context *context, const spart_softmax_segments *segments);

/* The softmax: out (E, H) from scores (E, H), both of the segments' value
 * type. out may be scores (in place). */
SPART_NODISCARD SPART_API spart_status spart_softmax_forward(spart_context *context,
                                                             const spart_softmax_segments *segments,
                                                             const void *scores, void *out);
SPART_NODISCARD SPART_API spart_status spart_softmax_forward_workspace(
    spart_context *context, const spart_softmax_segments *segments, const void *scores, void *out,
    void *workspace, size_t workspace_bytes);

/* The backward: grad_scores (E, H) from the forward's out and the
 * gradient grad_out of the loss with respect to out (both (E, H)).
 * grad_scores may be grad_out (in place), not out. */
SPART_NODISCARD SPART_API spart_status
spart_softmax_backward(spart_context *context, const spart_softmax_segments *segments,
                       const void *out, const void *grad_out, void *grad_scores);
SPART_NODISCARD SPART_API spart_status spart_softmax_backward_workspace(
    spart_context *context, const spart_softmax_segments *segments, const void *out,
    const void *grad_out, void *grad_scores, void *workspace, size_t workspace_bytes);

/* The softmax and the aggregation in one pass: aggregated (R, H, F) =
 * for each row and head the sum over its edges of out[e,h] times the
 * features X[col[e], h, :] (`features`, (N, H, F)), without writing out;
 * `out` (E, H) receives the softmax too when it is not NULL. Also
 * SPART_ERROR_INVALID_ARGUMENT for F < 1 and, on the host, a column
 * outside 0 .. N-1. */
SPART_NODISCARD SPART_API spart_status
spart_softmax_aggregate(spart_context *context, const spart_softmax_segments *segments,
                        const spart_softmax_gather *gather, const void *scores,
                        const void *features, void *aggregated, void *out);
SPART_NODISCARD SPART_API spart_status spart_softmax_aggregate_workspace(
    spart_context *context, const spart_softmax_segments *segments,
    const spart_softmax_gather *gather, const void *scores, const void *features, void *aggregated,
    void *out, void *workspace, size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_SOFTMAX_H */
