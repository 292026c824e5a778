/*
 * src/operator/csr_vectors.h: the elementwise passes of a CSR matrix's
 * products and the checks of its arrays (spart/csr_matrix.h), twins:
 * host/csr_vectors.c (OpenMP) and kernels/csr_vectors.cu (CUDA), the same
 * operations in the same order, so the same bits.
 *
 *   - combine: out = beta == 0 ? alpha * s : fma(alpha, s, beta * y), one
 *     rounding each (explicit fma; host -ffp-contract=off, device
 *     __dmul_rn / __fma_rn); a float32 y is converted to double first and
 *     the result rounded to float32 once (round to nearest even);
 *   - float32 to float64 and int32 to int64: exact conversions;
 *   - checks: the first bad row pointer i (row_ptr[0] != 0, row_ptr[i] <
 *     row_ptr[i - 1], or row_ptr[num_rows] != num_entries), num_rows + 1
 *     when there is none; the first entry whose column is outside
 *     [0, num_columns), num_entries when there is none. Minima, so the
 *     answer does not depend on how the work is split.
 *
 * Plain C (the kernels include it without include/).
 */
#ifndef SPART_CSR_VECTORS_H
#define SPART_CSR_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host (host/csr_vectors.c), `threads` OpenMP threads ---- */
void spart_host_combine(const double *sums, int64_t count, double alpha, double beta, void *y,
                        int y_is_float, int threads);
void spart_host_float_to_double(const float *from, int64_t count, double *to, int threads);
void spart_host_int32_to_int64(const int32_t *from, int64_t count, int64_t *to, int threads);
int64_t spart_host_first_bad_row_ptr(const void *row_ptr, int is_int32, int64_t num_rows,
                                     int64_t num_entries, int threads);
int64_t spart_host_first_bad_column(const void *columns, int is_int32, int64_t num_entries,
                                    int64_t num_columns, int threads);

/* ---- CUDA (kernels/csr_vectors.cu): enqueued on `stream`, cudaError_t
 * as int. The checks write their answer to answer[0] (device memory),
 * using `scratch` of spart_cuda_first_bad_scratch() int64 values. ---- */
int spart_cuda_combine(const double *sums, int64_t count, double alpha, double beta, void *y,
                       int y_is_float, void *stream);
int spart_cuda_float_to_double(const float *from, int64_t count, double *to, void *stream);
int spart_cuda_int32_to_int64(const int32_t *from, int64_t count, int64_t *to, void *stream);
int64_t spart_cuda_first_bad_scratch(void);
int spart_cuda_first_bad_row_ptr(const void *row_ptr, int is_int32, int64_t num_rows,
                                 int64_t num_entries, int64_t *scratch, int64_t *answer,
                                 void *stream);
int spart_cuda_first_bad_column(const void *columns, int is_int32, int64_t num_entries,
                                int64_t num_columns, int64_t *scratch, int64_t *answer,
                                void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_CSR_VECTORS_H */
