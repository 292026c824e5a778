/*
 * src/operator/csr_product_by_row_cuda.c: the bins of a device matrix
 * planned by row (src/operator/csr_product_by_row.h), made on the device
 * when its plan is made or it is copied there. Built with CUDA only.
 */
#include <cuda_runtime_api.h>

#include "operator/csr_product_by_row.h"
#include "operator/regridder_cuda.h"

/* The g all rows share, from the bins' sizes (bins 0-4: g = 1 to 16;
 * 5 and 6: 32; 7, the long rows: chunks of 32), or 0 when they differ. */
static int uniform_group(const int64_t *bin_start)
{
    int g = 0;
    for (int bin = 0; bin < SPART_ROW_BINS; bin++) {
        if (bin_start[bin + 1] == bin_start[bin]) {
            continue;
        }
        int of_bin = bin >= 5 ? 32 : 1 << bin;
        if (g != 0 && g != of_bin) {
            return 0;
        }
        g = of_bin;
    }
    return g != 0 ? g : 32;
}

cudaError_t spart_regridder_bin_rows_on_device(spart_regridder *regridder, cudaStream_t stream)
{
    spart_regridder_device *device = &regridder->device;
    int64_t rows = regridder->csr.num_rows;
    size_t bytes = spart_cuda_row_bins_workspace(rows);
    void *workspace = NULL;
    int64_t *start = NULL;
    cudaError_t error = spart_device_allocate_array((size_t)(rows > 0 ? rows : 1), sizeof(int32_t),
                                                    (void **)&device->bin_rows);
    if (error != cudaSuccess) {
        device->bin_rows = NULL;
        return error;
    }
    error = cudaMallocAsync(&workspace, bytes + 256, stream);
    if (error != cudaSuccess) {
        return error;
    }
    start = (int64_t *)((char *)workspace + bytes);
    error =
        (cudaError_t)spart_cuda_row_bins(regridder->csr.row_ptr, rows, regridder->plan.chunk_length,
                                         device->bin_rows, start, workspace, bytes, stream);
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(device->bin_start, start, sizeof device->bin_start,
                                cudaMemcpyDeviceToHost, stream);
    }
    cudaError_t freed = cudaFreeAsync(workspace, stream);
    cudaError_t finished = cudaStreamSynchronize(stream);
    if (error == cudaSuccess && freed == cudaSuccess && finished == cudaSuccess) {
        device->uniform_group = uniform_group(device->bin_start);
    }
    return error != cudaSuccess ? error : freed != cudaSuccess ? freed : finished;
}
