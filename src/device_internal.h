/*
 * src/device_internal.h: the CUDA kernels' entry points, as the C glue
 * (src/regridder_device.c) calls them. They are defined in
 * kernels/csr_product.cu, compiled by nvcc, exported with C linkage, and
 * exist only in builds with SPART_HAVE_CUDA. Plain C types only, so that
 * the header reads the same in C and in CUDA C++.
 *
 * Every entry point only enqueues work on `stream` (a cudaStream_t; NULL is
 * the default stream): it never synchronises and never allocates, so a
 * product can be captured in a CUDA Graph. Each returns the cudaError_t of
 * its launches (0: cudaSuccess).
 *
 * Determinism: the kernels add in the order of host/csr_product.c (see
 * spart/regridder.h): the same bits as the host, run after run, for any
 * launch configuration. No atomics.
 */
#ifndef SPART_DEVICE_INTERNAL_H
#define SPART_DEVICE_INTERNAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPART_DEVICE_MAX_NDIM 16

/* A CSR matrix in device memory with its plan. Exactly one of columns32 /
 * columns64 and one of values64 / values32 is set. Rows of more than
 * chunk_length entries ("long rows") are left to the chunked pass: each of
 * their chunks is summed on its own into a scratch slot, and the chunk sums
 * are then added per row in chunk order. */
typedef struct spart_device_csr {
    int64_t num_rows;
    int64_t num_columns;
    int64_t num_entries;
    const int64_t *row_ptr; /* num_rows + 1 */
    const int32_t *columns32;
    const int64_t *columns64;
    const double *values64;
    const float *values32;
    int group_size;       /* lanes per row: a power of two, 1 to 32 */
    int64_t chunk_length; /* entries per chunk, a multiple of group_size */
    int64_t num_long_rows;
    const int64_t *long_rows;        /* num_long_rows: their row indices, ascending */
    const int64_t *long_first_chunk; /* num_long_rows + 1: each one's first chunk */
    int64_t num_long_chunks;
    const int64_t *chunk_begin; /* num_long_chunks: each chunk's first entry */
    const int64_t *chunk_end;   /* and one past its last */
} spart_device_csr;

/* How one side's values map onto the matrix index and the batch index (as
 * spart_axis_map in regridder_internal.h). */
typedef struct spart_device_axis_map {
    int ndim;
    int64_t dims[SPART_DEVICE_MAX_NDIM];
    int64_t matrix_stride[SPART_DEVICE_MAX_NDIM];
    int64_t batch_stride[SPART_DEVICE_MAX_NDIM];
    int64_t num_batch;
} spart_device_axis_map;

/* Y = A X for num_vectors >= 1 interleaved vectors (X[column * num_vectors
 * + t], Y[row * num_vectors + t]), overwriting Y. chunk_sums holds
 * num_long_chunks * num_vectors doubles (unused when there are no long
 * rows). */
int spart_cuda_csr_product(const spart_device_csr *matrix, const double *x, int64_t num_vectors,
                           double *y, double *chunk_sums, void *stream);

/* Move values between C order (num_leading blocks of the side's shape)
 * and interleaved vectors packed[matrix_index * T + lead * num_batch +
 * batch], T = num_leading * num_batch: spart_cuda_pack fills `packed` from
 * `values`, spart_cuda_unpack fills `values` from `packed`. */
int spart_cuda_pack(const spart_device_axis_map *map, int64_t num_leading, const double *values,
                    double *packed, void *stream);
int spart_cuda_unpack(const spart_device_axis_map *map, int64_t num_leading, const double *packed,
                      double *values, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_DEVICE_INTERNAL_H */
