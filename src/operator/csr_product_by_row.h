/*
 * src/operator/csr_product_by_row.h: the device product of a matrix
 * planned by row (SPART_PLAN_BY_ROW, src/operator/regridder_internal.h):
 * each row summed by its own group size g (spart_row_group_size), in the
 * order of kernels/csr_row_sum.cuh, so the same bits as the host
 * (host/csr_product.c, which takes the same g row by row).
 *
 * The rows are put into bins of like length once, when the plan is made
 * (a stable radix sort of the rows on their bin: rows ascending within a
 * bin); one launch then gives each bin its own blocks, group size and
 * shape (rows a group, entries a lane per round), so that no lane waits
 * on a row much longer than its own:
 *
 *   bin 0: rows of 0 or 1 entries, g = 1    bin 4: 16 to 31, g = 16
 *   bin 1: 2 to 3, g = 2                    bin 5: 32 to 255, g = 32
 *   bin 2: 4 to 7, g = 4                    bin 6: 256 to a chunk, g = 32
 *   bin 3: 8 to 15, g = 8                   bin 7: longer than a chunk
 *
 * Bin 7's rows are summed chunk by chunk by the long-row pass of
 * kernels/csr_product.cu (g = 32), their chunk sums added in order. The
 * bins split the work and never the order: which bin a row is in does not
 * change its sum. Kernels in kernels/csr_product_by_row.cu; plain C.
 */
#ifndef SPART_CSR_PRODUCT_BY_ROW_H
#define SPART_CSR_PRODUCT_BY_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "device/device_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of workspace spart_cuda_row_bins needs for `rows` rows. */
size_t spart_cuda_row_bins_workspace(int64_t rows);

/* The bins of a matrix's rows (rows < 2^31): bin_rows (rows values) the
 * row indices by bin, ascending within a bin; bin_start (device memory,
 * SPART_ROW_BINS + 1 values) where each bin starts. Enqueued on stream. */
int spart_cuda_row_bins(const int64_t *row_ptr, int64_t rows, int64_t chunk_length,
                        int32_t *bin_rows, int64_t *bin_start, void *workspace, size_t bytes,
                        void *stream);

/* Y = A X by row for num_vectors >= 1 vectors one after the other in C
 * order (x[t * num_columns + column], y[t * num_rows + row]); bin_start
 * in host memory; matrix->group_size 32 (the long rows' chunks).
 * chunk_sums: num_long_chunks * num_vectors doubles. x_tiles NULL: x read
 * as it lies; else (ceil(num_vectors / 8) * 8 * num_columns doubles) x is
 * first copied into tiles of 8 interleaved vectors (spart_cuda_pack_tiles)
 * and read from them (a column's 8 values in one 64-byte line). */
int spart_cuda_csr_product_by_row(const spart_device_csr *matrix, const int32_t *bin_rows,
                                  const int64_t *bin_start, const double *x, int64_t num_vectors,
                                  double *x_tiles, double *y, double *chunk_sums, void *stream);

/* The long rows alone (their chunks, then the chunk sums) of a product of
 * vectors in C order (x_in_tiles: x in tiles of 8, spart_cuda_pack_tiles),
 * by the groups of matrix->group_size (kernels/csr_product.cu). */
int spart_cuda_csr_product_long_rows(const spart_device_csr *matrix, const double *x,
                                     int x_in_tiles, int64_t num_vectors, double *y,
                                     double *chunk_sums, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_CSR_PRODUCT_BY_ROW_H */
