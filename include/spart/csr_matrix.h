/*
 * spart/csr_matrix.h: any sparse matrix as an operator, made straight from
 * CSR arrays (no weights, no shapes), applied as y = alpha op(A) x + beta y
 * on the host (OpenMP) or on a CUDA device, op(A) = A or its transpose.
 *
 * The arrays. num_rows + 1 row pointers (int32 or int64), num_entries
 * column indices (int32 or int64) and values (float32 or float64), in
 * host memory or in device memory of the context's CUDA device
 * (spart_csr_arrays.on_device). Row r holds entries [row_ptr[r],
 * row_ptr[r + 1]). Entries of one row may come in any column order and
 * may repeat a column: they are summed as they lie, in the order below.
 *
 * Copied or wrapped. By default the arrays are copied (row pointers
 * widened to int64, columns kept in their type, values in theirs) and the
 * caller may free them at once. With spart_csr_matrix_options.wrap the
 * matrix reads the caller's columns and values where they lie, and its
 * row pointers too when they are int64 (int32 row pointers are widened
 * into an array of the matrix's own, 8 bytes a row): nothing of the
 * entries is copied. While a wrapped matrix (or its transpose, which is a
 * copy made on first use) may still be used, the caller must keep those
 * arrays allocated and must not change the row pointers or the columns:
 * the plan of the product (the table of rows longer than a chunk, on a
 * device the bins of rows) is made from the row pointers once. The values
 * may be rewritten between products of A (op(A) = A): each product reads
 * them where they lie, as they are when it runs (on a device, write them
 * on the context's stream or synchronise first), so a matrix whose values
 * change every step (attention weights) is wrapped once. The transpose is
 * a copy made from the entries on first use and keeps the values it was
 * made from. Free the matrix first, then the arrays.
 * spart_csr_matrix_arrays tells where the matrix reads its arrays (the
 * caller's pointers when wrapped).
 *
 * What an unchecked matrix assumes. row_ptr[0] = 0, row_ptr[num_rows] =
 * num_entries, row pointers never decreasing, every column in
 * [0, num_columns). The library does not read the arrays to check this
 * unless asked (spart_csr_matrix_options.check, a pass over the arrays
 * where they lie: on a device, a reduction there and a few numbers read
 * back): arrays that break it are then refused with
 * SPART_ERROR_INVALID_ARGUMENT and a sentence naming the first bad row
 * pointer or entry. Unchecked bad arrays give wrong products or read
 * outside the arrays.
 *
 * Products. y = alpha op(A) x + beta y for num_vectors vectors laid one
 * after another (x[v * n_in + c], y[v * n_out + r], n_in and n_out the
 * columns and rows of op(A)). Vectors are float64 or float32
 * (spart_csr_product.vector_type, the same for x and y); float32 vectors
 * are converted to float64 and every sum is formed in float64. Each value
 * of y is, from s, the sum of its row below:
 *   beta = 0: alpha * s (y is never read, so NaN or garbage in y does not
 *             matter);
 *   else:     fma(alpha, s, beta * y)
 * rounded once more to float32 for float32 vectors. alpha = 1, beta = 0
 * gives s itself.
 *
 * Determinism. Each value is summed in one fixed order that depends on
 * the matrix alone: a row's entries are cut into chunks of
 * SPART_CHUNK_LENGTH; within a chunk, lane l of the row's g lanes sums
 * entries l, l + g, l + 2g, ... with fma from +0.0 (float32 values
 * converted to float64 first); the g lane sums combine in a binary tree
 * (lane l += lane l + h for h = g/2, ..., 1); chunk sums add in chunk
 * order; an empty row gives +0.0. g is the row's own: doubled from 1
 * while the row holds 2g entries or more, at most 32 (a row of 1 entry
 * has g = 1, of 2-3 entries g = 2, ..., of 32 or more g = 32), the plan
 * "by row", saved in operator files as PLANRULE = 1. (A regridder made
 * from weights takes one g for all its rows from the mean row length,
 * spart/regridder.h; a matrix of 2^31 rows or more does too.) The same
 * bits come out for any thread count, run after run, on the host and on
 * the device, for a vector alone or inside any batch, and float32 vectors
 * give the sums of the float64 vectors of the same values. op(A) = A^T is
 * the exact transpose: a matrix of its own (row c holds column c's
 * entries in row order) planned by row as well, built on first use and
 * kept. A NaN result is NaN in the same places; which NaN is not
 * promised.
 *
 * Thread safety: products may run from several threads at once, except
 * the first one with SPART_OPERATION_TRANSPOSE (or the first workspace
 * query for it), which builds the transpose: do not race it.
 *
 * Device: a matrix made from device arrays lives on the context's CUDA
 * device (copied there with cudaMemcpyAsync, or wrapped); x, y and the
 * workspace of its products must be device memory of that device;
 * products only enqueue work on the context's stream (read y after
 * synchronising it). Creating and transposing synchronise. In a build
 * without CUDA, device calls answer SPART_ERROR_NO_DEVICE.
 */
#ifndef SPART_CSR_MATRIX_H
#define SPART_CSR_MATRIX_H

#include "spart/common.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The type of an index array. */
typedef enum spart_index_type { SPART_INT64 = 0, SPART_INT32 = 1 } spart_index_type;

/* The CSR arrays of a matrix, as the caller holds them. */
typedef struct spart_csr_arrays {
    int64_t num_rows;
    int64_t num_columns;
    int64_t num_entries;
    const void *row_ptr; /* num_rows + 1 values of row_ptr_type */
    spart_index_type row_ptr_type;
    const void *columns; /* num_entries values of column_type */
    spart_index_type column_type;
    const void *values; /* num_entries values of value_type */
    spart_value_type value_type;
    int on_device; /* nonzero: device memory of the context's CUDA device */
} spart_csr_arrays;

/* How a matrix is made. Start from spart_csr_matrix_options_init(). */
typedef struct spart_csr_matrix_options {
    int wrap;  /* nonzero: read the caller's arrays in place (see the top) */
    int check; /* nonzero: check the arrays first (see the top) */
} spart_csr_matrix_options;

/* Fill `options` with the defaults: copy, no check. */
SPART_API void spart_csr_matrix_options_init(spart_csr_matrix_options *options);

typedef struct spart_csr_matrix spart_csr_matrix;

/* A matrix from CSR arrays (options NULL: the defaults). Errors:
 * SPART_ERROR_NULL_POINTER (an array NULL while it must hold values),
 * SPART_ERROR_INVALID_ARGUMENT (negative sizes; int32 indices where the
 * sizes do not fit them; with check, bad arrays; device arrays that are
 * not memory of the context's device), SPART_ERROR_UNKNOWN_ENUM,
 * SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_NO_DEVICE. */
SPART_NODISCARD SPART_API spart_status
spart_csr_matrix_create(spart_context *context, const spart_csr_arrays *arrays,
                        const spart_csr_matrix_options *options, spart_csr_matrix **matrix);

/* A copy of `matrix` (host or device) in device memory of the context's
 * device, or in host memory: it owns its arrays. Errors: those of
 * spart_regridder_to_device / spart_regridder_to_host. */
SPART_NODISCARD SPART_API spart_status spart_csr_matrix_to_device(spart_context *context,
                                                                  const spart_csr_matrix *matrix,
                                                                  spart_csr_matrix **device);
SPART_NODISCARD SPART_API spart_status spart_csr_matrix_to_host(spart_context *context,
                                                                const spart_csr_matrix *matrix,
                                                                spart_csr_matrix **host);

/* Free a matrix and its transpose; wrapped arrays stay the caller's.
 * Accepts NULL. */
SPART_API void spart_csr_matrix_free(spart_csr_matrix *matrix);

SPART_API int64_t spart_csr_matrix_num_rows(const spart_csr_matrix *matrix);
SPART_API int64_t spart_csr_matrix_num_columns(const spart_csr_matrix *matrix);
SPART_API int64_t spart_csr_matrix_num_entries(const spart_csr_matrix *matrix);
/* Nonzero when the matrix lives on a CUDA device. */
SPART_API int spart_csr_matrix_on_device(const spart_csr_matrix *matrix);

/* Where the matrix reads its arrays: int64 row pointers, the columns
 * (exactly one of columns32 / columns64 set) and the values (of the
 * matrix's value type). Any output pointer may be NULL. */
SPART_NODISCARD SPART_API spart_status spart_csr_matrix_arrays(const spart_csr_matrix *matrix,
                                                               const int64_t **row_ptr,
                                                               const int32_t **columns32,
                                                               const int64_t **columns64,
                                                               const void **values);

/* The regridder the matrix is (input shape (num_columns), output shape
 * (num_rows)), owned by the matrix: for spart_regridder_save, the MART
 * operators and anything else that takes a regridder. Do not free it;
 * it reads wrapped arrays as the matrix does. */
SPART_API spart_regridder *spart_csr_matrix_regridder(spart_csr_matrix *matrix);

/* A or its transpose. */
typedef enum spart_operation {
    SPART_OPERATION_NONE = 0,
    SPART_OPERATION_TRANSPOSE = 1
} spart_operation;

/* What one product computes: y = alpha op(A) x + beta y for num_vectors
 * vectors of vector_type. Start from spart_csr_product_init() (one
 * float64 vector, alpha 1, beta 0, op(A) = A). */
typedef struct spart_csr_product {
    spart_operation operation;
    int64_t num_vectors;
    double alpha;
    double beta;
    spart_value_type vector_type;
} spart_csr_product;

SPART_API void spart_csr_product_init(spart_csr_product *product);

/* Bytes of scratch spart_csr_matrix_multiply_workspace needs for
 * `product` (0 for one float64 vector with beta = 0 over a matrix without
 * rows longer than a chunk; scratch for the float64 copies of float32
 * vectors, for op(A) x when beta is not 0, and for the batch's own needs,
 * spart_regridder_workspace_size). Builds the transpose when asked about
 * it. Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT,
 * SPART_ERROR_UNKNOWN_ENUM, those of building the transpose. */
SPART_NODISCARD SPART_API spart_status
spart_csr_matrix_workspace_size(spart_context *context, spart_csr_matrix *matrix,
                                const spart_csr_product *product, size_t *bytes);

/* y = alpha op(A) x + beta y (see the top). x holds num_vectors * n_in
 * values, y num_vectors * n_out, of the product's vector type; x and y
 * must not overlap (SPART_ERROR_INVALID_ARGUMENT). The simple entry point
 * allocates its scratch (on a device: stream-ordered); the _workspace
 * one takes at least the queried bytes. */
SPART_NODISCARD SPART_API spart_status spart_csr_matrix_multiply(spart_context *context,
                                                                 spart_csr_matrix *matrix,
                                                                 const spart_csr_product *product,
                                                                 const void *x, void *y);
SPART_NODISCARD SPART_API spart_status spart_csr_matrix_multiply_workspace(
    spart_context *context, spart_csr_matrix *matrix, const spart_csr_product *product,
    const void *x, void *y, void *workspace, size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_CSR_MATRIX_H */
