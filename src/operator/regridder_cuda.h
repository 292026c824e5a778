/*
 * src/operator/regridder_cuda.h: what the CUDA glue of device regridders
 * (the files of src/operator named *_cuda.c) shares between its files, and with the MART
 * update that reads a backward regridder's matrix on the device
 * (src/mart/backproject_update_cuda.c). CUDA glue only (built with CUDA).
 */
#ifndef SPART_REGRIDDER_CUDA_H
#define SPART_REGRIDDER_CUDA_H

#include <cuda_runtime_api.h>

#include "device/device_internal.h"
#include "operator/operator_ops.h"
#include "operator/regridder_device.h"

/* A device regridder's matrix as the kernels take it. */
spart_device_csr spart_regridder_device_matrix(const spart_regridder *regridder);

/* cudaMalloc of count * size bytes (at least one) for a regridder's array. */
cudaError_t spart_device_allocate_array(size_t count, size_t size, void **array);

/* The plan of a device matrix whose CSR arrays are set: the group size,
 * the table of long rows (made on the device) and the short-row index. */
cudaError_t spart_regridder_plan_on_device(spart_regridder *regridder, cudaStream_t stream);

/* The device short-row index of a device matrix (optional: without
 * device memory for it, the matrix goes without). */
cudaError_t spart_regridder_index_rows_on_device(spart_regridder *regridder, cudaStream_t stream);

/* The bins of a device matrix planned by row (SPART_PLAN_BY_ROW): its
 * bin_rows and bin_start (src/operator/csr_product_by_row_cuda.c); the
 * stream is waited for. */
cudaError_t spart_regridder_bin_rows_on_device(spart_regridder *regridder, cudaStream_t stream);

/* Free a device regridder's CUDA memory (its CSR arrays and tables). */
void spart_regridder_release_on_device(spart_regridder *regridder);

/* ---- the product (src/operator/regridder_product_cuda.c) ---- */
size_t spart_device_workspace_bytes(const spart_regridder *regridder, int64_t num_vectors);
spart_status spart_device_product(spart_context *context, const spart_regridder *regridder,
                                  const spart_array *x, double *y, int64_t size_y,
                                  int64_t num_leading, int64_t num_vectors, void *workspace,
                                  int workspace_is_ours);
spart_status spart_device_workspace_allocate(spart_context *context,
                                             const spart_regridder *regridder, size_t bytes,
                                             void **workspace);
spart_status spart_device_workspace_free(spart_context *context, const spart_regridder *regridder,
                                         void *workspace);

#endif /* SPART_REGRIDDER_CUDA_H */
