/*
 * spart/vcs.h: value-compressed sparse (VCS) count matrices and their
 * normalized views, multiplied by dense matrices on the host (OpenMP) or
 * on a CUDA device.
 *
 * A count matrix X (n_rows cells x n_cols genes, counts >= 0) is stored
 * grouped by rows (VCSR) or by columns (VCSC): each slice of the major
 * axis holds its distinct nonzero values once, ascending, and each value
 * the minor indices where it occurs, ascending (runs). A slice with few
 * distinct values, as count data has, is smaller than its CSR row. The
 * layout is canonical: one stable sort keyed by (major, value, minor), so
 * the same matrix gives the same arrays whatever the input order (CSR or
 * COO) and the thread count.
 *
 * The normalized view, never expanded, is
 *
 *     Y_ij = s_j * (g((x_ij * a_i) * b_j) - c_j) = Delta_ij + o_j,
 *     a_i = 1 / row_scale_i,  b_j = 1 / gene_scale_j,  o_j = -c_j * s_j,
 *
 * Delta_ij = s_j * g((x_ij * a_i) * b_j) on stored entries (the products
 * in that order; vsparse divides by the scales, which rounds differently
 * in the last bits), 0 elsewhere: the stored part plus a rank-1 term
 * 1 o^T. The recipes (statistics in float64, over all rows,
 * implicit zeros included, population variance):
 *
 *   recipe       row_scale_i          gene_scale_j               g(u)              c_j     s_j
 *   RAW          1                    1                          u                 0       1
 *   CP10K_LOG1P  depth_i / 1e4        1                          log1p(u)          0       1
 *   PARAFAC2     depth_i / median     sum_i x_ij a_i             log10(1 + 1000u)  mean g  1
 *   SCANPY       depth_i / 1e4        1                          log1p(u)          mean g  1/std g
 *   PEARSON      depth_i              sum_i x_ij a_i             sqrt(u)           mean g  1/std g
 *
 * depth_i = sum_j x_ij; a row of depth 0 gets row_scale 1; median is over
 * all rows, empty ones included (the mean of the two middle depths for an
 * even count). A column with gene_scale <= 0 (no positive entry) has
 * b = 0, so Delta = 0, c = 0, s = 1. The mean of g is S / n (S the sum over stored
 * entries); the variance takes the two-pass form with the implicit zeros,
 * var = max(0, (M2 - C^2 / n) / n), M2 = sum d^2 + n0 mu^2, C = sum d -
 * n0 mu, d = g - mu over stored entries, n0 the implicit zeros; a column
 * with var <= n eps var + (n mu eps)^2 (eps of float64) is constant and
 * gets s = 1, else s = 1 / sqrt(var). Each statistic is summed in one
 * fixed order (a slice's entries in storage order), whatever the thread
 * count. log1p, log10(1 + 1000u) and the square root come from one
 * implementation that host and device share (src/vcs/vcs_math.h).
 *
 * Products, B dense in C order, float32 or float64, `width` columns of
 * B for A @ B and rows of B for B @ A (A is n_rows x n_cols, or the
 * transpose for a transposed view):
 *
 *   SPART_VCS_A_TIMES_B:  out (n_rows x width)  = A @ B,  B (n_cols x width)
 *   SPART_VCS_B_TIMES_A:  out (width x n_cols)  = B @ A,  B (width x n_rows)
 *
 * A @ B = Delta B + 1 (o^T B) and B @ A = B Delta + (B 1) o^T. A host
 * matrix keeps both groupings (the second is the regroup of the first,
 * made once, at creation), so every direction walks slices of the output:
 * no scatter, no atomics. A device matrix carries its format's grouping,
 * or both (spart_vcs_to_device), and needs the grouping whose major axis
 * is the output's rows: rows for A @ B, columns for B @ A.
 *
 * Memory: a matrix owns its arrays. A transposed view shares them (a
 * count of views keeps them until the last is freed).
 *
 * Thread safety: products on one matrix may run from several threads at
 * once (they only read it); views of one matrix may be made and freed from
 * one thread at a time.
 *
 * Determinism: every output value is summed in one fixed order chosen from
 * the matrix alone: the output slice's entries in storage order (runs by
 * value, minor ascending); lane l of g sums entries l, l + g, l + 2g, ...
 * with fma in float64 from +0.0 (Delta times B's value in float64), and
 * the g lane sums combine in a binary tree (lane l += lane l + h, h = g/2,
 * ..., 1); g is the least power of two at least the grouping's mean slice
 * length / 32 (rounded up), at most 32. The rank-1 term's vector (o^T B or B 1) is summed over
 * 256 fixed parts of B's rows, each in order with fma from +0.0, the 256
 * sums in the same tree; it is added last (A @ B: sum + v_c; B @ A:
 * fma(o_j, v_c, sum)), for recipes with a centre only. The result is
 * rounded once to B's type. Host and device give the same bits, for any
 * thread count, run after run, and a row of B alone or in a batch.
 */
#ifndef SPART_VCS_H
#define SPART_VCS_H

#include "spart/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A VCS count matrix with its normalized view, on the host or a device. */
typedef struct spart_vcs spart_vcs;

/* The recipes of the table above. */
typedef enum spart_vcs_recipe {
    SPART_VCS_RAW = 0,
    SPART_VCS_CP10K_LOG1P = 1,
    SPART_VCS_PARAFAC2 = 2,
    SPART_VCS_SCANPY = 3,
    SPART_VCS_PEARSON = 4
} spart_vcs_recipe;

/* The grouping a matrix is stored in. */
typedef enum spart_vcs_format {
    SPART_VCS_VCSR = 0, /* by rows */
    SPART_VCS_VCSC = 1  /* by columns */
} spart_vcs_format;

/* The side B is multiplied on. */
typedef enum spart_vcs_direction {
    SPART_VCS_A_TIMES_B = 0, /* out = A @ B */
    SPART_VCS_B_TIMES_A = 1  /* out = B @ A */
} spart_vcs_direction;

/* A host VCS matrix from CSR arrays: row_ptr (n_rows + 1, starting at 0,
 * nondecreasing), col_idx and values (row_ptr[n_rows] entries, any order
 * within a row). Explicit zeros are dropped; a (row, column) given twice is
 * an error. The statistics of `recipe` are computed (a float64 fixed-order
 * reduction). n_rows and n_cols may be 0; n_cols is at most 2^31 - 1.
 *
 * Errors: SPART_ERROR_NULL_POINTER; SPART_ERROR_INVALID_ARGUMENT (negative
 * sizes, a bad row_ptr, a column outside [0, n_cols), a duplicate entry, a
 * negative count for a recipe other than RAW); SPART_ERROR_NOT_FINITE (a
 * NaN or infinite value); SPART_ERROR_UNKNOWN_ENUM (recipe, format);
 * SPART_ERROR_OVERFLOW; SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status
spart_vcs_create_from_csr(spart_context *context, int64_t n_rows, int64_t n_cols,
                          const int64_t *row_ptr, const int64_t *col_idx, const double *values,
                          spart_vcs_recipe recipe, spart_vcs_format format, spart_vcs **vcs);

/* The same from COO triples (nnz of each, any order). */
SPART_NODISCARD SPART_API spart_status
spart_vcs_create_from_coo(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                          const int64_t *rows, const int64_t *cols, const double *values,
                          spart_vcs_recipe recipe, spart_vcs_format format, spart_vcs **vcs);

/* Free a matrix or a view (NULL: nothing). */
SPART_API void spart_vcs_free(spart_vcs *vcs);

/* The sizes of the matrix as a view sees it (a transposed view swaps rows
 * and columns), its stored entries and its distinct values summed over the
 * slices of its format (runs). Errors: SPART_ERROR_NULL_POINTER. */
SPART_NODISCARD SPART_API spart_status spart_vcs_shape(const spart_vcs *vcs, int64_t *n_rows,
                                                       int64_t *n_cols, int64_t *nnz,
                                                       int64_t *n_runs);

/* The view's format (a transposed view of a VCSR matrix is VCSC), whether
 * it is transposed, and whether it lives on a device. */
SPART_API spart_vcs_format spart_vcs_get_format(const spart_vcs *vcs);
SPART_API int spart_vcs_is_transposed(const spart_vcs *vcs);
SPART_API int spart_vcs_on_device(const spart_vcs *vcs);

/* The transpose as a new view of the same arrays (no copy): VCSR of A is
 * VCSC of A^T. The view's A @ B is A^T @ B; it is freed on its own.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_vcs_transpose(spart_context *context,
                                                           const spart_vcs *vcs, spart_vcs **view);

/* The counts (and, when `delta` is not NULL, Delta) of a host matrix as
 * the view sees it, as CSR with columns ascending in each row: row_ptr
 * (n_rows + 1), col_idx and values (nnz), arrays the caller sizes from
 * spart_vcs_shape. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (a device matrix), SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_vcs_to_csr(spart_context *context,
                                                        const spart_vcs *vcs, int64_t *row_ptr,
                                                        int64_t *col_idx, double *values,
                                                        double *delta);

/* A new host matrix of the rows `rows` (n_select_rows of them, each once,
 * in the order given; NULL: all) and the columns `cols` of a host view,
 * with the view's recipe and format, its statistics computed anew.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (an index
 * out of range or repeated, a device matrix), SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_vcs_select(spart_context *context,
                                                        const spart_vcs *vcs, int64_t n_select_rows,
                                                        const int64_t *rows, int64_t n_select_cols,
                                                        const int64_t *cols, spart_vcs **selected);

/* The statistics of the matrix (not of a transposed view: rows are cells):
 * row_scale (n_rows), gene_scale, centre c and scale s (n_cols each); any
 * may be NULL. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (a device matrix). */
SPART_NODISCARD SPART_API spart_status spart_vcs_statistics(spart_context *context,
                                                            const spart_vcs *vcs, double *row_scale,
                                                            double *gene_scale, double *centre,
                                                            double *scale);

/* Supplied statistics (vsparse's from_stats) for a host matrix, in place
 * of the recipe's: row factors a (n_rows; row_scale = 1 / a) and column
 * factors b (n_cols; gene_scale = 1 / b), either NULL to keep the
 * recipe's; c and s are computed anew from them. Every view of the matrix
 * sees the change. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (a factor <= 0, a device matrix),
 * SPART_ERROR_NOT_FINITE, SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_vcs_set_factors(spart_context *context, spart_vcs *vcs,
                                                             const double *row_factor,
                                                             const double *col_factor);

/* A copy of a host matrix on the context's CUDA device: the compressed
 * arrays of its format's grouping (both groupings when both_groupings is
 * nonzero) and the O(n_rows + n_cols) statistics, never an expanded copy.
 * Offsets are int32 below 2^31 entries, else int64; the runs' values
 * float32 where every one is exact in it (counts are); indices uint16 when
 * the minor axis has at most 65,536 entries, or over a longer one with the
 * runs split where the indices' high 16 bits change, when that costs fewer
 * bytes, else int32 (the entries and their order are the same). *device_bytes
 * (NULL: not asked) is what it holds on the device.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (already
 * on a device), SPART_ERROR_NO_DEVICE (no CUDA or no device),
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_vcs_to_device(spart_context *context,
                                                           const spart_vcs *vcs, int both_groupings,
                                                           spart_vcs **device,
                                                           int64_t *device_bytes);

/* Bytes of scratch a product needs (spart_vcs_multiply_workspace): host
 * or device memory as the matrix. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_UNKNOWN_ENUM, SPART_ERROR_INVALID_ARGUMENT (negative width). */
SPART_NODISCARD SPART_API spart_status spart_vcs_workspace_size(spart_context *context,
                                                                const spart_vcs *vcs,
                                                                spart_vcs_direction direction,
                                                                int64_t width, size_t *bytes);

/* out = A @ B or B @ A (float64 B and out) with the view's normalized
 * values. B and out are host arrays for a host matrix, the device's for a
 * device matrix: then the work is only queued on the context's stream
 * (read out after synchronising it), as every device product of spart.
 * width 0 writes nothing.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_UNKNOWN_ENUM,
 * SPART_ERROR_INVALID_ARGUMENT (negative width, host memory for a device
 * matrix, a device matrix without the grouping the direction needs),
 * SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_NO_DEVICE. */
SPART_NODISCARD SPART_API spart_status spart_vcs_multiply(spart_context *context,
                                                          const spart_vcs *vcs,
                                                          spart_vcs_direction direction,
                                                          int64_t width, const double *b,
                                                          double *out);

/* The same for float32 B and out (sums in float64, rounded once). */
SPART_NODISCARD SPART_API spart_status spart_vcs_multiply_float(spart_context *context,
                                                                const spart_vcs *vcs,
                                                                spart_vcs_direction direction,
                                                                int64_t width, const float *b,
                                                                float *out);

/* The same with caller-owned scratch of spart_vcs_workspace_size bytes
 * (host or device memory as the matrix; is_float: B and out are float32).
 * Errors: as above, SPART_ERROR_INVALID_ARGUMENT for a small workspace. */
SPART_NODISCARD SPART_API spart_status spart_vcs_multiply_workspace(
    spart_context *context, const spart_vcs *vcs, spart_vcs_direction direction, int64_t width,
    int is_float, const void *b, void *out, void *workspace, size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_VCS_H */
