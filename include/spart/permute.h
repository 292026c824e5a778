/*
 * spart/permute.h: many strided N-d blocks permuted and recombined at once
 * (the "permute with recoupling" of symmetric-tensor codes such as
 * TensorKit), on the host (OpenMP) or on a CUDA device (one launch).
 *
 * A flat destination array and a flat source array of one element type
 * are each cut into dense N-d strided subblocks (sizes, strides and an
 * offset, all counted in elements). Subblocks are grouped into fusion
 * blocks. A fusion block has m source subblocks of a common shape sz, n
 * destination subblocks of the permuted shape (sz[p[0]], ..., sz[p[N-1]])
 * and a dense real n x m recoupling matrix U, and computes
 *
 *     dst_i = beta * dst_i + alpha * sum_j U[i,j] * permute(op(src_j), p)
 *
 * for i = 1..n, where permute is NumPy's transpose (axis k of the result
 * is axis p[k] of the source) and op is the identity or the complex
 * conjugate. Blocks with n = m = 1 and no U are plain scaled transposes
 * (abelian symmetries, or one dense tensor).
 *
 * Plan once, execute many times (as FFTW): spart_permute_plan_create
 * takes the block descriptions, checks them (every subblock inside its
 * array, no destination element written twice), cuts every destination
 * subblock into tiles whose power-of-two extents a cost model picks
 * (32-byte sectors read and written, contiguous runs, a cost per tile and
 * per idle lane), orders the work heaviest first and, for a device plan,
 * copies its tables to the device. spart_permute_execute then runs on new
 * data: a tile is gathered in source order and written in destination
 * order, so that both sides read and write whole sectors.
 *
 * Memory: the plan owns its tables (host memory, and device memory of the
 * context's CUDA device for a device plan); the caller owns the source
 * and destination arrays, which must not overlap.
 *
 * Thread safety: a plan is read only by spart_permute_execute; several
 * threads may execute one plan at once (each with its own context).
 *
 * Determinism: each destination element is computed by the same
 * operations in the same order on the host and on the device, whatever
 * the thread count or the tiles: acc = U[i,j1] * x_j1, then acc =
 * fma(U[i,j], x_j, acc) for the other j with U[i,j] != 0 in increasing j
 * (a zero U[i,j] is skipped, so a NaN in src_j does not reach dst_i; no
 * nonzero U leaves acc = 0); then dst = alpha * acc when beta = 0 (dst is
 * never read), else dst = fma(beta, dst, alpha * acc). For complex types
 * U multiplies each part; alpha * acc is (fma(ar, cr, -(ai * ci)),
 * fma(ar, ci, ai * cr)) and the beta step adds (fma(br, dr, fma(-bi, di,
 * t_re)), fma(br, di, fma(bi, dr, t_im))). float32 and complex64 are
 * computed in float32 (U rounded to float32 once, in the plan). No
 * atomics: each destination element belongs to one subblock, computed by
 * one thread. Host and device give the same bits for every type.
 */
#ifndef SPART_PERMUTE_H
#define SPART_PERMUTE_H

#include "spart/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most axes a block may have. */
#define SPART_PERMUTE_MAX_AXES 8

/* The element type of source and destination. Complex types are pairs
 * (real, imaginary) as C's _Complex and NumPy's complex types lay them
 * out. */
typedef enum spart_permute_type {
    SPART_PERMUTE_FLOAT32 = 0,
    SPART_PERMUTE_FLOAT64 = 1,
    SPART_PERMUTE_COMPLEX64 = 2,
    SPART_PERMUTE_COMPLEX128 = 3
} spart_permute_type;

/* What is done to each source element first. The conjugate of a real
 * type is the identity. */
typedef enum spart_permute_op {
    SPART_PERMUTE_IDENTITY = 0,
    SPART_PERMUTE_CONJUGATE = 1
} spart_permute_op;

/* One fusion block. Sizes and strides are per axis; every offset and
 * stride counts elements (not bytes) from the start of its flat array.
 * Strides may be any sign; a destination subblock must not write one
 * element twice. The arrays are read by spart_permute_plan_create only. */
typedef struct spart_permute_block {
    /* [num_axes]: the common shape sz of the source subblocks; the
     * destination subblocks have shape (sz[p[0]], ..., sz[p[N-1]]). A zero
     * size makes the block empty. */
    const int64_t *sizes;
    int64_t num_destination; /* n >= 0 */
    int64_t num_source;      /* m >= 0 */
    /* [n * m], C order (U[i, j] at recoupling[i * m + j]), finite; NULL
     * means n = m = 1 and U = 1. */
    const double *recoupling;
    const int64_t *destination_offsets; /* [n] */
    const int64_t *destination_strides; /* [n * num_axes]: destination axis order */
    const int64_t *source_offsets;      /* [m] */
    const int64_t *source_strides;      /* [m * num_axes]: source axis order */
} spart_permute_block;

typedef struct spart_permute_plan spart_permute_plan;

/* Make a plan for `num_blocks` fusion blocks with elements of `type`,
 * `num_axes` (0 to SPART_PERMUTE_MAX_AXES) axes permuted by `permutation`
 * (a permutation of 0..num_axes-1, NULL when num_axes = 0) and `op`,
 * between a source of `source_length` elements and a destination of
 * `destination_length` elements. on_device = 0: the plan runs on host
 * memory; 1: on device memory of the context's CUDA device (its tables
 * are copied there now).
 * Errors: SPART_ERROR_NULL_POINTER (context, plan, blocks with
 * num_blocks > 0, a block's arrays its counts need), SPART_ERROR_UNKNOWN_ENUM
 * (type, op), SPART_ERROR_INVALID_ARGUMENT (num_axes, permutation, a negative
 * count, size or length, a subblock outside its array, two destination
 * elements at one place), SPART_ERROR_NOT_FINITE (a recoupling value),
 * SPART_ERROR_OVERFLOW (a size product or address past int64),
 * SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_NO_DEVICE (on_device without
 * CUDA or without the device). On failure *plan is NULL. */
SPART_NODISCARD SPART_API spart_status spart_permute_plan_create(
    spart_context *context, spart_permute_type type, int num_axes, const int *permutation,
    spart_permute_op op, int64_t num_blocks, const spart_permute_block *blocks,
    int64_t source_length, int64_t destination_length, int on_device, spart_permute_plan **plan);

/* Free a plan (host and device tables). Accepts NULL. */
SPART_API void spart_permute_plan_free(spart_permute_plan *plan);

/* Run the plan: every destination subblock of every fusion block gets
 * beta * dst + alpha * sum_j U[i,j] permute(op(src_j)). `alpha` and `beta`
 * point to one value of the plan's type (host memory, read at the call);
 * `source` and `destination` are arrays of the plan's lengths, in host
 * memory for a host plan and device memory of the context's device for a
 * device plan; they must not overlap. beta = 0 never reads the
 * destination (NaN there is overwritten). Destination elements that no
 * subblock covers are left as they are. A device plan enqueues one kernel
 * on the context's stream and returns without waiting.
 * Errors: SPART_ERROR_NULL_POINTER (anything but an array of a plan whose
 * length is 0), SPART_ERROR_INVALID_ARGUMENT (source and destination
 * overlap, an array in the wrong memory), SPART_ERROR_NO_DEVICE,
 * SPART_ERROR_INTERNAL (a CUDA launch error). */
SPART_NODISCARD SPART_API spart_status spart_permute_execute(spart_context *context,
                                                             const spart_permute_plan *plan,
                                                             const void *alpha, const void *source,
                                                             const void *beta, void *destination);

/* What the plan chose, for tests and benchmarks: the number of work
 * items (destination subblocks that are not empty), of tiles, and the
 * bytes of shared memory a device tile takes. NULL pointers are skipped.
 * Errors: SPART_ERROR_NULL_POINTER (plan). */
SPART_NODISCARD SPART_API spart_status spart_permute_plan_counts(const spart_permute_plan *plan,
                                                                 int64_t *num_items,
                                                                 int64_t *num_tiles,
                                                                 int64_t *tile_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_PERMUTE_H */
