/*
 * src/scoring/scoring_kernels.h: the twin contract of candidate scoring
 * (spart/scoring.h): host/scoring.c (OpenMP) and kernels/scoring.cu
 * (CUDA) do the same operations in the same order, written here once:
 *
 *   1. per candidate: dot, cc = |c|^2 and qq = |q|^2 over the D values in
 *      quads of SPART_SCORING_QUAD, the quads in segments of
 *      SPART_SCORING_SEGMENT_QUADS (64 quads, 256 values: a function of D
 *      alone, never of the launch); in segment s lane l of
 *      SPART_SCORING_LANES (32) takes the segment's quads l and l+32 in
 *      order, within a quad its values in order, fma from +0.0 (a value
 *      past D not added): the partial P(l, s); lane l's sum is R_l = +0.0
 *      + P(l, 0) + P(l, 1) + ... added in segment order; the lanes
 *      combine in the binary tree lane l += lane l+h, h = 16, ..., 1
 *      (spart_scoring_host_tree on the host, __shfl_down_sync on the
 *      device). A lane's quads are j = l, l+32, ... as before; the
 *      segments cut its fma chain every two quads, so that several warps
 *      can share one row (each a segment) and combine in this order;
 *   2. z = spart_scoring_logit(dot, qq, cc, ...);
 *   3. per chunk of SPART_SCORING_CHUNK candidates: m_c = max z and s_c =
 *      sum of exp(z - m_c), lane l adding the chunk's candidates l, l+32,
 *      ... from +0.0, then the tree;
 *   4. per question: m = max m_c; s = fma(s_c, exp(m_c - m), s) over the
 *      chunks in order from +0.0;
 *   5. p = exp(z - m) / s (spart_scoring_probability).
 *
 * The maxima use spart_scoring_max (NaN wins, so that the result does not
 * depend on the order a maximum is taken in).
 *
 * The per-value functions are static inline with SPART_MATH_FUNCTION (a
 * CUDA file defines it as `static __host__ __device__ inline` first, as
 * for src/core/exp_math.h).
 */
#ifndef SPART_SCORING_KERNELS_H
#define SPART_SCORING_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/exp_math.h"

#define SPART_SCORING_LANES 32
#define SPART_SCORING_QUAD 4
/* Quads a segment of a row: two a lane (see step 1). */
#define SPART_SCORING_SEGMENT_QUADS 64
#ifndef SPART_SCORING_CHUNK
#define SPART_SCORING_CHUNK 1024 /* spart/scoring.h says the same */
#endif
#define SPART_SCORING_NORM_FLOOR 1e-12

#ifdef __cplusplus
extern "C" {
#endif

/* A scoring call as the twins take it: plain C types. */
typedef struct spart_scoring_problem {
    const void *query;      /* Q x D */
    const void *candidates; /* Q x K x D */
    void *probabilities;    /* Q x K */
    void *logits;           /* Q x K or NULL */
    int64_t num_question;
    int64_t num_candidate;
    int64_t dimension;
    double scale;
    double temperature;
    int cosine;  /* 0: dot */
    int float32; /* 0: float64 arrays */
} spart_scoring_problem;

/* Segments of a row of D values. */
SPART_MATH_FUNCTION int64_t spart_scoring_num_segments(int64_t dimension)
{
    const int64_t quads = (dimension + SPART_SCORING_QUAD - 1) / SPART_SCORING_QUAD;
    return (quads + SPART_SCORING_SEGMENT_QUADS - 1) / SPART_SCORING_SEGMENT_QUADS;
}

/* Chunks of K candidates. */
SPART_MATH_FUNCTION int64_t spart_scoring_num_chunks(int64_t num_candidate)
{
    return (num_candidate + SPART_SCORING_CHUNK - 1) / SPART_SCORING_CHUNK;
}

/* The workspace's float64 values: Q K logits, then (m_c, s_c) for each
 * chunk of each question. */
SPART_MATH_FUNCTION int64_t spart_scoring_workspace_values(int64_t num_question,
                                                           int64_t num_candidate)
{
    return num_question * num_candidate +
           2 * num_question * spart_scoring_num_chunks(num_candidate);
}

/* The larger of a and b; NaN when either is NaN. */
SPART_MATH_FUNCTION double spart_scoring_max(double a, double b)
{
    if (a != a || b != b) {
        return a + b;
    }
    return a > b ? a : b;
}

/* Step 2: the logit from the combined sums. */
SPART_MATH_FUNCTION double spart_scoring_logit(double dot, double qq, double cc, int cosine,
                                               double scale, double temperature)
{
    double sim = dot;
    if (cosine) {
        double nq = sqrt(qq), nc = sqrt(cc);
        nq = nq > SPART_SCORING_NORM_FLOOR ? nq : SPART_SCORING_NORM_FLOOR;
        nc = nc > SPART_SCORING_NORM_FLOOR ? nc : SPART_SCORING_NORM_FLOOR;
        sim = dot / (nq * nc);
    }
    return (sim * scale) / temperature;
}

/* Step 5. */
SPART_MATH_FUNCTION double spart_scoring_probability(double z, double m, double s)
{
    return spart_exp(z - m) / s;
}

/* ---- host (host/scoring.c) ---- */

/* The binary tree over 32 lane sums: lane[0] afterwards. */
double spart_scoring_host_tree(double *lanes);

/* The whole call; `workspace` holds spart_scoring_workspace_values
 * doubles. */
void spart_scoring_host_run(const spart_scoring_problem *problem, double *workspace, int threads);

/* ---- device (kernels/scoring.cu): enqueue on `stream`, never allocate or
 * wait, return a cudaError_t as int ---- */

/* How a device call is laid out: one block a question (its logits in
 * shared memory, no workspace), or the question's candidates spread over
 * the whole grid (a cooperative kernel, phases split by grid barriers,
 * the logits in the workspace). AUTO chooses from the shape and the
 * device. The bits are the same either way. */
enum { SPART_SCORING_PATH_AUTO = 0, SPART_SCORING_PATH_BLOCK = 1, SPART_SCORING_PATH_GRID = 2 };

/* The most candidates the one-block path takes. */
#define SPART_SCORING_BLOCK_MAX_K 2048

/* The path a launch takes (AUTO resolved for the current device); -1 and
 * *error on a CUDA error. */
int spart_scoring_device_path(const spart_scoring_problem *problem, int path, int *error);

/* Launch one call on the current device (workspace: device memory of
 * spart_scoring_workspace_values doubles, may be NULL for the BLOCK
 * path). */
int spart_scoring_device_launch(const spart_scoring_problem *problem, double *workspace, int path,
                                void *stream);
/* The same with `rows` candidate rows a warp (1, 2 or 4; 0: the device
 * code's choice; SPART_SCORING_ROWS_SPLIT: on the GRID path a block's
 * warps share rows, a segment each, where a row has 2 to 32 segments),
 * for the tests and the benchmark: the bits do not depend on it. */
#define SPART_SCORING_ROWS_SPLIT (-1)
int spart_scoring_device_launch_rows(const spart_scoring_problem *problem, double *workspace,
                                     int path, int rows, void *stream);

/* The blocks of 256 threads that launch would take (for the benchmark's
 * baselines, run at the same size). */
int spart_scoring_device_blocks(const spart_scoring_problem *problem, int path, int rows,
                                int64_t *blocks);

const char *spart_scoring_device_error_string(int error);

#ifdef __cplusplus
}
#endif

#endif /* SPART_SCORING_KERNELS_H */
