/*
 * kernels/csr_product.cuh: what the three files of the CSR product share
 * (kernels/csr_product.cu, the rows by groups of lanes and the entry
 * points; kernels/csr_product_by_thread.cu, rows of one round a thread;
 * kernels/csr_product_indexed.cu, the short-row index): the store of a
 * row's sums, and the launch of the rows by thread that csr_product.cu
 * chooses by the matrix's shape.
 */
#ifndef SPART_CSR_PRODUCT_CUH
#define SPART_CSR_PRODUCT_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "csr_row_sum.cuh"
#include "device/device_internal.h"

namespace spart_product
{

using spart_rows::row_group;
using spart_rows::vector_layout;

/* Write lane 0's sums for vectors t0 .. t0 + width - 1 of row `row`. */
template <int TILE>
__device__ __forceinline__ void store_row(const row_group &group, const double (&sum)[TILE],
                                          int width, const vector_layout &layout, int64_t row,
                                          int64_t t0, double *__restrict__ y)
{
    if (group.lane != 0) {
        return;
    }
#pragma unroll
    for (int j = 0; j < TILE; j++) {
        if (TILE == 1) {
            y[row] = sum[j];
        } else if (j < width) {
            y[row * layout.y_row + (t0 + j) * layout.y_vector] = sum[j];
        }
    }
}

/* One vector, rows of at most g entries a thread (product_rows_by_thread in
 * kernels/csr_product_by_thread.cu, g = 2, 4, 8 or 16, the matrix's value
 * and column types), with the long rows' chunks in the same launch, their
 * sums into chunk_sums; the caller then adds each long row's chunk sums
 * (add_chunk_sums). */
cudaError_t launch_rows_by_thread(const spart_device_csr &matrix, const double *x, double *y,
                                  double *chunk_sums, cudaStream_t stream);

} // namespace spart_product

#endif /* SPART_CSR_PRODUCT_CUH */
