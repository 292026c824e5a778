/*
 * src/vcs/vcs_kernels.h: the twin contract of the VCS product, host
 * (host/vcs_product.c, OpenMP) and device (kernels/vcs_product.cu, CUDA).
 * Both perform the operations below in the same order and give the same
 * bits.
 *
 * The product walks one grouping, whose slices are the output's rows:
 *
 *   Z = Y X      (grouping by rows:    slice i, minor j;  X has n_cols rows)
 *   Z = Y^T X    (grouping by columns: slice j, minor i;  X has n_rows rows)
 *
 * X(k, c) = x[k * x_row_stride + c * x_col_stride], Z(m, c) likewise in z.
 * For the entry of slice m at minor k with count v (row i, column j):
 *
 *   Delta = s_j * g((v * a_i) * b_j),  a = 1 / row_scale, b = 1 / gene_scale (0: skipped)
 *
 * (spart_vcs_delta of src/vcs/vcs_math.h; where the minor axis's factor in
 * the argument is 1 for every slice, g is taken once a run: the same bits).
 *
 * Order of a value Z(m, c): the slice's entries in storage order (runs by
 * value, minor ascending within a run), e = 0, 1, ..., n_m - 1; lane l of
 * g (the grouping's group_size) sums e = l, l + g, ... as
 * acc = fma(Delta_e, (double)X(k_e, c), acc) from +0.0; the lanes combine
 * in a binary tree, lane l += lane l + h for h = g/2, ..., 1; t = lane 0.
 *
 * The rank-1 term, for recipes with a centre (has_offset): the vector
 * v_c = sum_k w_k X(k, c) over X's rows k, w = o (Z = Y X) or 1 (Z = Y^T
 * X); the rows are cut into SPART_VCS_RANK1_PARTS parts of
 * ceil(rows / parts) (the last ones short or empty); part p sums its rows in
 * order as fma(w_k, X(k, c), acc) from +0.0; the parts combine in the same
 * binary tree. Then Z(m, c) = t + v_c (Z = Y X) or fma(o_m, v_c, t)
 * (Z = Y^T X); without a centre Z(m, c) = t. The value is rounded once to
 * the output type.
 */
#ifndef SPART_VCS_KERNELS_H
#define SPART_VCS_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPART_VCS_RANK1_PARTS 256

/* One grouping as a kernel reads it. The host's arrays are int64 offsets
 * and int32 indices; the device's are int32 or int64 offsets
 * (offset_bytes 4 or 8) and uint16 or int32 indices (index_bytes 2 or 4).
 * A split run is still the same entries in the same order: the order
 * below counts entries, not runs. */
typedef struct spart_vcs_kernel_grouping {
    int64_t n_major, n_minor;
    const void *major_ptr; /* n_major + 1: each slice's runs */
    const void *value_ptr; /* n_runs + 1: each run's entries */
    const double *values;  /* n_runs */
    const void *indices;   /* nnz minor indices */
    /* device only, else NULL: the runs' values as float32 where every one
     * is exact in it (values is then NULL); the high 16 bits of each run's
     * minor indices where the upload split the runs at each change of them
     * (uint16 indices over a minor axis of more than 65,536) */
    const float *values_float;
    const uint16_t *run_high;
    int offset_bytes, index_bytes;
    int group_size;          /* g, a power of two from 1 to 32 */
    int by_rows;             /* 1: slices are rows (Z = Y X); 0: columns (Z = Y^T X) */
    int minor_factor_is_one; /* the minor axis's scale in g's argument is 1 everywhere */
} spart_vcs_kernel_grouping;

/* The statistics (row factor a: n_rows; column factor b, scale s, offset o:
 * n_cols). scale NULL: every s is 1 (a recipe that does not scale; s * g
 * is then g, not computed). */
typedef struct spart_vcs_kernel_stats {
    const double *row_factor, *col_factor, *scale, *offset;
    int g_code;
    int has_offset; /* a recipe with a centre: the rank-1 term is added */
} spart_vcs_kernel_stats;

/* One product: Z (n_major x width) from X (n_minor x width). is_float:
 * X and Z are float32, else float64. */
typedef struct spart_vcs_kernel_product {
    int64_t width;
    int is_float;
    const void *x;
    int64_t x_row_stride, x_col_stride;
    void *z;
    int64_t z_row_stride, z_col_stride;
} spart_vcs_kernel_product;

/* Host: Z with `threads` OpenMP threads; `scratch` holds
 * spart_vcs_host_scratch_doubles(...) doubles. */
int64_t spart_vcs_host_scratch_doubles(const spart_vcs_kernel_grouping *grouping, int64_t width,
                                       int threads);
void spart_vcs_host_product(const spart_vcs_kernel_grouping *grouping,
                            const spart_vcs_kernel_stats *stats,
                            const spart_vcs_kernel_product *product, double *scratch, int threads);

/* Host: g_values[j] = spart_vcs_g(g_code, argument[j]), j < n, as the
 * product computes g where it depends on the entry (a vectorized loop
 * for the log recipes, the same bits; test_vcs checks them). */
void spart_vcs_host_g_block(int g_code, const double *argument, double *g_values, int64_t n);

/* Device: enqueue the product on `stream` (a cudaStream_t); `rank1` holds
 * width doubles of device scratch (unused without an offset). Returns 0 or
 * a cudaError_t as int; never allocates or synchronises. */
int spart_vcs_device_product(const spart_vcs_kernel_grouping *grouping,
                             const spart_vcs_kernel_stats *stats,
                             const spart_vcs_kernel_product *product, double *rank1, void *stream);

/* Device: dst (cols x rows) = transpose of src (rows x cols), elements of
 * element_bytes (4 or 8), on `stream`; 0 or a cudaError_t as int. */
int spart_vcs_device_transpose(const void *src, void *dst, int64_t rows, int64_t cols,
                               int element_bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_VCS_KERNELS_H */
