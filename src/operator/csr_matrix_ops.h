/*
 * src/operator/csr_matrix_ops.h: a CSR matrix (spart/csr_matrix.h) and
 * its table of operations, chosen once, when the matrix is made, from
 * where its arrays live: the host's (src/operator/csr_matrix_host.c) or
 * the CUDA device's (src/operator/csr_matrix_cuda.c, built with CUDA
 * only; without it spart_csr_matrix_select answers SPART_ERROR_NO_DEVICE).
 *
 * A matrix is a spart_regridder of input shape (num_columns) and output
 * shape (num_rows), so its products, plan, transpose, device copies and
 * files are the regridder's (operator_ops.h). What a matrix adds: arrays
 * taken from the caller (copied, or wrapped: the regridder's CSR pointers
 * are then the caller's, and are set to NULL before the regridder is
 * freed), alpha and beta, and float32 vectors (the elementwise passes of
 * src/operator/csr_vectors.h).
 */
#ifndef SPART_CSR_MATRIX_OPS_H
#define SPART_CSR_MATRIX_OPS_H

#include "operator/operator_ops.h"
#include "spart/csr_matrix.h"

/* What a check of the arrays found: the first bad row pointer (num_rows
 * + 1: none) with it and its predecessor, then (only when the row
 * pointers are good) the first entry whose column is out of range
 * (num_entries: none) and that column. */
typedef struct spart_csr_check {
    int64_t bad_row_ptr;
    int64_t row_ptr_value;
    int64_t row_ptr_before;
    int64_t bad_entry;
    int64_t column;
} spart_csr_check;

typedef struct spart_csr_matrix_ops {
    /* Check the arrays where they lie into *found. */
    spart_status (*check_arrays)(spart_context *context, const spart_csr_arrays *arrays,
                                 spart_csr_check *found);
    /* Set made->csr (sizes set) from the arrays, copied or wrapped (int32
     * row pointers always widened into an array of made's own), and make
     * its plan. On failure what was made stays for the release (with the
     * caller's pointers not yet in made->csr). */
    spart_status (*adopt)(spart_context *context, const spart_csr_arrays *arrays, int wrap,
                          spart_regridder *made);
    /* x and y of a product are memory the product may use (x_bytes,
     * y_bytes > 0). */
    spart_status (*check_vectors)(spart_context *context, const spart_regridder *regridder,
                                  const void *x, const void *y);
    /* to[i] = from[i], float to double. */
    spart_status (*float_to_double)(spart_context *context, const spart_regridder *regridder,
                                    const float *from, int64_t count, double *to);
    /* y = alpha sums + beta y (csr_vectors.h). */
    spart_status (*combine)(spart_context *context, const spart_regridder *regridder,
                            const double *sums, int64_t count, double alpha, double beta, void *y,
                            int y_is_float);
} spart_csr_matrix_ops;

struct spart_csr_matrix {
    spart_allocator allocator;
    const spart_csr_matrix_ops *ops;
    spart_regridder *regridder;
    /* Which of the regridder's CSR arrays are the caller's (wrapped). */
    int borrows_row_ptr;
    int borrows_columns;
    int borrows_values;
};

extern const spart_csr_matrix_ops spart_csr_matrix_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_csr_matrix_ops spart_csr_matrix_cuda_ops;
#endif

/* The table for arrays on a device or on the host; SPART_ERROR_NO_DEVICE
 * with a sentence naming `what` in a build without CUDA. */
spart_status spart_csr_matrix_select(spart_context *context, int on_device, const char *what,
                                     const spart_csr_matrix_ops **ops);

/* The bytes of one index or value of each type. */
size_t spart_index_bytes(spart_index_type type);
size_t spart_value_bytes(spart_value_type type);

#endif /* SPART_CSR_MATRIX_OPS_H */
