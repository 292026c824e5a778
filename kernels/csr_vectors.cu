/*
 * kernels/csr_vectors.cu: the elementwise passes and array checks of a
 * CSR matrix on a CUDA device, twin of host/csr_vectors.c; the operations
 * and their order are in src/operator/csr_vectors.h (explicit __dmul_rn
 * and __fma_rn, built with --fmad=false).
 *
 * The checks find the first bad index as a minimum in two passes: each
 * block's minimum into scratch, then one block's minimum of those. No
 * atomics; everything is enqueued on the caller's stream.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "launch.cuh"
#include "operator/csr_vectors.h"

namespace
{

using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch;
using spart_launch::launch_items;
using spart_launch::threads_per_block;

template <typename Y>
__global__ void __launch_bounds__(threads_per_block)
    combine(const double *__restrict__ sums, int64_t count, double alpha, double beta, Y *y)
{
    for (int64_t i = first_item(); i < count; i += item_stride()) {
        double result;
        if (beta == 0.0) {
            result = __dmul_rn(alpha, sums[i]);
        } else {
            result = __fma_rn(alpha, sums[i], __dmul_rn(beta, (double)y[i]));
        }
        if constexpr (sizeof(Y) == sizeof(float)) {
            y[i] = __double2float_rn(result);
        } else {
            y[i] = result;
        }
    }
}

template <typename From, typename To>
__global__ void __launch_bounds__(threads_per_block)
    convert(const From *__restrict__ from, int64_t count, To *__restrict__ to)
{
    for (int64_t i = first_item(); i < count; i += item_stride()) {
        to[i] = (To)from[i];
    }
}

/* Blocks of the first pass of a check (and scratch values). */
constexpr int check_blocks = 512;

/* The minimum of `value` over the block, in thread 0. */
__device__ int64_t block_minimum(int64_t value)
{
    __shared__ int64_t warp_min[threads_per_block / 32];
    for (int offset = 16; offset > 0; offset /= 2) {
        const int64_t other = __shfl_down_sync(0xffffffffu, value, offset);
        value = other < value ? other : value;
    }
    if ((threadIdx.x & 31u) == 0) {
        warp_min[threadIdx.x / 32] = value;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < threads_per_block / 32; w++) {
            value = warp_min[w] < value ? warp_min[w] : value;
        }
    }
    return value;
}

template <typename Index>
__global__ void __launch_bounds__(threads_per_block)
    first_bad_row_ptr(const Index *__restrict__ row_ptr, int64_t num_rows, int64_t num_entries,
                      int64_t *__restrict__ scratch)
{
    int64_t first = num_rows + 1;
    for (int64_t i = first_item(); i <= num_rows; i += item_stride()) {
        const int64_t value = (int64_t)row_ptr[i];
        const bool bad = (i == 0 && value != 0) || (i > 0 && value < (int64_t)row_ptr[i - 1]) ||
                         (i == num_rows && value != num_entries);
        if (bad && i < first) {
            first = i;
        }
    }
    first = block_minimum(first);
    if (threadIdx.x == 0) {
        scratch[blockIdx.x] = first;
    }
}

template <typename Index>
__global__ void __launch_bounds__(threads_per_block)
    first_bad_column(const Index *__restrict__ columns, int64_t num_entries, int64_t num_columns,
                     int64_t *__restrict__ scratch)
{
    int64_t first = num_entries;
    for (int64_t i = first_item(); i < num_entries; i += item_stride()) {
        const int64_t column = (int64_t)columns[i];
        if ((column < 0 || column >= num_columns) && i < first) {
            first = i;
        }
    }
    first = block_minimum(first);
    if (threadIdx.x == 0) {
        scratch[blockIdx.x] = first;
    }
}

__global__ void __launch_bounds__(threads_per_block)
    minimum_of(const int64_t *__restrict__ scratch, int count, int64_t none,
               int64_t *__restrict__ answer)
{
    int64_t value = none;
    for (int i = (int)threadIdx.x; i < count; i += threads_per_block) {
        value = scratch[i] < value ? scratch[i] : value;
    }
    value = block_minimum(value);
    if (threadIdx.x == 0) {
        answer[0] = value;
    }
}

} // namespace

extern "C" int spart_cuda_combine(const double *sums, int64_t count, double alpha, double beta,
                                  void *y, int y_is_float, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (y_is_float) {
        return launch_items(combine<float>, count, s, sums, count, alpha, beta,
                            static_cast<float *>(y));
    }
    return launch_items(combine<double>, count, s, sums, count, alpha, beta,
                        static_cast<double *>(y));
}

extern "C" int spart_cuda_float_to_double(const float *from, int64_t count, double *to,
                                          void *stream)
{
    return launch_items(convert<float, double>, count, static_cast<cudaStream_t>(stream), from,
                        count, to);
}

extern "C" int spart_cuda_int32_to_int64(const int32_t *from, int64_t count, int64_t *to,
                                         void *stream)
{
    return launch_items(convert<int32_t, int64_t>, count, static_cast<cudaStream_t>(stream), from,
                        count, to);
}

extern "C" int64_t spart_cuda_first_bad_scratch(void)
{
    return check_blocks;
}

extern "C" int spart_cuda_first_bad_row_ptr(const void *row_ptr, int is_int32, int64_t num_rows,
                                            int64_t num_entries, int64_t *scratch, int64_t *answer,
                                            void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t error =
        is_int32 ? launch(first_bad_row_ptr<int32_t>, dim3(check_blocks), s,
                          static_cast<const int32_t *>(row_ptr), num_rows, num_entries, scratch)
                 : launch(first_bad_row_ptr<int64_t>, dim3(check_blocks), s,
                          static_cast<const int64_t *>(row_ptr), num_rows, num_entries, scratch);
    if (error != cudaSuccess) {
        return error;
    }
    return launch(minimum_of, dim3(1), s, (const int64_t *)scratch, check_blocks, num_rows + 1,
                  answer);
}

extern "C" int spart_cuda_first_bad_column(const void *columns, int is_int32, int64_t num_entries,
                                           int64_t num_columns, int64_t *scratch, int64_t *answer,
                                           void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t error =
        is_int32 ? launch(first_bad_column<int32_t>, dim3(check_blocks), s,
                          static_cast<const int32_t *>(columns), num_entries, num_columns, scratch)
                 : launch(first_bad_column<int64_t>, dim3(check_blocks), s,
                          static_cast<const int64_t *>(columns), num_entries, num_columns, scratch);
    if (error != cudaSuccess) {
        return error;
    }
    return launch(minimum_of, dim3(1), s, (const int64_t *)scratch, check_blocks, num_entries,
                  answer);
}
