/*
 * kernels/weights_conservative_2d_clip.cu: the entry points of the device
 * clipping (src/weights/weights_clip_device.h): the state, the count (the
 * kernel's counts, CUB's exclusive scan in input-cell order, the total to
 * the host) and the write. The kernels are in
 * kernels/weights_conservative_2d_lattice.cu (onto a lattice) and
 * kernels/weights_conservative_2d_general.cu (onto any grid).
 */
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>
#include <new>
#include <stdint.h>

#include "weights_conservative_2d_clip.cuh"

namespace
{

/* Free what the state holds and the state. */
void state_free(spart_device_clip_counts *state, cudaStream_t stream)
{
    if (state == NULL) {
        return;
    }
    void *arrays[5] = {state->starts, state->cells, state->buckets.start, state->buckets.cell_index,
                       state->columns};
    for (int a = 0; a < 5; a++) {
        if (arrays[a] != NULL) {
            cudaFreeAsync(arrays[a], stream);
        }
    }
    delete state;
}

bool grid_is_valid(const spart_device_clip_grid *grid)
{
    return grid != NULL && grid->num_x >= 0 && grid->num_y >= 0 &&
           ((grid->x != NULL && grid->y != NULL) || grid->num_x * grid->num_y == 0);
}

} // namespace

cudaError_t spart_clip_scan_to_host(int64_t *counts, int64_t n, int64_t *starts, int64_t *total,
                                    cudaStream_t stream)
{
    cudaError_t status = cudaMemsetAsync(counts + n, 0, sizeof *counts, stream);
    size_t bytes = 0;
    if (status == cudaSuccess) {
        status = cub::DeviceScan::ExclusiveSum(NULL, bytes, counts, starts, n + 1, stream);
    }
    void *scratch = NULL;
    if (status == cudaSuccess) {
        status = cudaMallocAsync(&scratch, bytes, stream);
    }
    if (status == cudaSuccess) {
        status = cub::DeviceScan::ExclusiveSum(scratch, bytes, counts, starts, n + 1, stream);
        const cudaError_t freed = cudaFreeAsync(scratch, stream);
        status = status != cudaSuccess ? status : freed;
    }
    if (status == cudaSuccess) {
        status = cudaMemcpyAsync(total, starts + n, sizeof *total, cudaMemcpyDeviceToHost, stream);
    }
    return status == cudaSuccess ? cudaStreamSynchronize(stream) : status;
}

extern "C" int spart_cuda_clip_2d_count(const spart_device_clip_grid *input,
                                        const spart_device_clip_grid *output, int lattice,
                                        const double *weights_input,
                                        spart_device_clip_counts **counts, int64_t *num_entries,
                                        void *stream_pointer)
{
    if (counts == NULL || num_entries == NULL) {
        return (int)cudaErrorInvalidValue;
    }
    *counts = NULL;
    *num_entries = 0;
    if (!grid_is_valid(input) || !grid_is_valid(output)) {
        return (int)cudaErrorInvalidValue;
    }
    cudaStream_t stream = (cudaStream_t)stream_pointer;
    spart_device_clip_counts *state = new (std::nothrow) spart_device_clip_counts();
    if (state == NULL) {
        return (int)cudaErrorMemoryAllocation;
    }
    state->input = *input;
    state->output = *output;
    state->lattice = lattice != 0;
    state->weights_input = weights_input;
    /* no cells on one side: nothing overlaps, as on the host */
    const bool cells =
        input->num_x >= 2 && input->num_y >= 2 && output->num_x >= 2 && output->num_y >= 2;
    state->num_cells_input = cells ? (input->num_x - 1) * (input->num_y - 1) : 0;
    const int64_t n = state->num_cells_input;
    int64_t *cell_counts = NULL;
    cudaError_t status =
        cudaMallocAsync((void **)&state->starts, (size_t)(n + 1) * sizeof(int64_t), stream);
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&cell_counts, (size_t)(n + 1) * sizeof(int64_t), stream);
    }
    if (status == cudaSuccess && n > 0) {
        if (state->lattice) {
            status = spart_clip_lattice_count(state, cell_counts, stream);
        } else {
            status = spart_clip_general_prepare(state, stream);
            if (status == cudaSuccess) {
                status = spart_clip_general_count(state, cell_counts, stream);
            }
        }
    }
    int64_t total = 0;
    if (status == cudaSuccess) {
        status = spart_clip_scan_to_host(cell_counts, n, state->starts, &total, stream);
    }
    if (cell_counts != NULL) {
        cudaError_t freed = cudaFreeAsync(cell_counts, stream);
        status = status != cudaSuccess ? status : freed;
    }
    if (status != cudaSuccess) {
        state_free(state, stream);
        return (int)status;
    }
    *counts = state;
    *num_entries = total;
    return (int)cudaSuccess;
}

extern "C" int spart_cuda_clip_2d_write(spart_device_clip_counts *state, int64_t *indices_input,
                                        int64_t *indices_output, double *values,
                                        void *stream_pointer)
{
    if (state == NULL) {
        return (int)cudaErrorInvalidValue;
    }
    if (state->num_cells_input == 0) {
        return (int)cudaSuccess;
    }
    cudaStream_t stream = (cudaStream_t)stream_pointer;
    if (state->lattice) {
        return (int)spart_clip_lattice_write(state, indices_input, indices_output, values, stream);
    }
    return (int)spart_clip_general_write(state, indices_input, indices_output, values, stream);
}

extern "C" void spart_cuda_clip_2d_counts_free(spart_device_clip_counts *state,
                                               void *stream_pointer)
{
    state_free(state, (cudaStream_t)stream_pointer);
}
