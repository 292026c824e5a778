/*
 * kernels/csr_transpose.cu: the values of the conservative transpose on
 * the device, the twin of scale_entries in src/operator/regridder_conservative.c.
 *
 * The conservative transpose shares the exact transpose's row pointers and
 * columns and has values of its own: entry k of the exact transpose, whose
 * row is forward column i and whose column is forward row o, becomes
 * (v * F_in[g, cell(i)]) / V_out[g, cell(o)], with g the grid element the
 * entry came from, read back from i and o. One thread per entry (its row
 * found by a binary search in row_ptr), so that a row of millions of
 * entries is spread like any other. The multiplication and the division are
 * explicit round-to-nearest operations (__dmul_rn, __ddiv_rn) as the host's
 * (v * F) / V is, so both give the same bits. Float32 values are widened
 * before and rounded to nearest after, as on the host.
 *
 * Enqueued on the caller's stream; no allocation, no synchronisation, no
 * atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "csr_search.cuh"
#include "device/device_internal.h"
#include "launch.cuh"

namespace
{

using spart_launch::threads_per_block;

__device__ __forceinline__ void store_value(double *slot, double value)
{
    *slot = value;
}

__device__ __forceinline__ void store_value(float *slot, double value)
{
    *slot = __double2float_rn(value);
}

/* A matrix index of one side split into its resampled cell, C order over
 * the resampled axes; the orthogonal indices this side holds are added
 * into *grid with their strides. */
__device__ int64_t decode(const spart_device_side_decoder &side, int64_t index, int64_t *grid)
{
    int64_t cell = 0;
    for (int a = 0; a < side.num_resampled; a++) {
        cell = cell * side.resampled_extent[a] +
               (index / side.resampled_stride[a]) % side.resampled_extent[a];
    }
    for (int a = 0; a < side.num_orthogonal; a++) {
        *grid +=
            (index / side.orthogonal_stride[a]) % side.orthogonal_extent[a] * side.grid_stride[a];
    }
    return cell;
}

template <typename Column, typename Value>
__global__ void __launch_bounds__(threads_per_block)
    conservative_values(const int64_t *__restrict__ row_ptr, int64_t num_rows, int64_t num_entries,
                        const Column *__restrict__ columns, const Value *__restrict__ values,
                        spart_device_entry_decoder decoder, const double *__restrict__ factor_input,
                        const double *__restrict__ volume_output, Value *__restrict__ scaled)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < num_entries; k += stride) {
        const int64_t column = piece_holding(row_ptr, num_rows, k); /* a forward column */
        int64_t grid = 0;
        const int64_t cell_in = decode(decoder.input, column, &grid);
        const int64_t cell_out = decode(decoder.output, (int64_t)columns[k], &grid);
        const double value = (double)values[k];
        const double product = __dmul_rn(value, factor_input[grid * decoder.cells_input + cell_in]);
        store_value(scaled + k,
                    __ddiv_rn(product, volume_output[grid * decoder.cells_output + cell_out]));
    }
}

template <typename Column, typename Value>
cudaError_t launch_values(const spart_device_csr &exact, const Column *columns, const Value *values,
                          const spart_device_entry_decoder &decoder, const double *factor_input,
                          const double *volume_output, Value *scaled, cudaStream_t stream)
{
    return spart_launch::launch_items(conservative_values<Column, Value>, exact.num_entries, stream,
                                      exact.row_ptr, exact.num_rows, exact.num_entries, columns,
                                      values, decoder, factor_input, volume_output, scaled);
}

template <typename Column>
cudaError_t launch_for_values(const spart_device_csr &exact, const Column *columns,
                              const spart_device_entry_decoder &decoder, const double *factor_input,
                              const double *volume_output, double *values64, float *values32,
                              cudaStream_t stream)
{
    if (exact.values32 != nullptr) {
        return launch_values(exact, columns, exact.values32, decoder, factor_input, volume_output,
                             values32, stream);
    }
    return launch_values(exact, columns, exact.values64, decoder, factor_input, volume_output,
                         values64, stream);
}

} // namespace

extern "C" int spart_cuda_conservative_values(const spart_device_csr *exact,
                                              const spart_device_entry_decoder *decoder,
                                              const double *factor_input,
                                              const double *volume_output, double *values64,
                                              float *values32, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (exact->columns32 != nullptr) {
        return launch_for_values(*exact, exact->columns32, *decoder, factor_input, volume_output,
                                 values64, values32, s);
    }
    return launch_for_values(*exact, exact->columns64, *decoder, factor_input, volume_output,
                             values64, values32, s);
}
