/*
 * kernels/weights_check.cu: the checks of weights and grids in device
 * memory (src/weights/weights_check_device.h). First, the index check of
 * weights whose entries live in device memory, the twin of the check in
 * spart_weights_create_from_arrays (src/weights/weights.c): entry k is out of range
 * when indices_input[k] is not in [0, size_input) or indices_output[k] is
 * not in [0, size_output), and the first such entry is the one reported.
 *
 * Two launches. The first: every thread walks its entries in grid-stride
 * order, so the first failure it meets is its lowest, and stops there; the
 * block's lowest is taken by a fixed binary tree in shared memory and
 * written to its own slot. The second: one block takes the lowest over the
 * block slots the same way and writes it, with the entry's two indices, to
 * the head of the workspace for the host to read once. No atomics.
 *
 * The first non-finite value of a coordinate array (the twin of
 * spart_weights_check_finite's search) is found the same way: each thread
 * its lowest, the blocks' lowest by the tree, the lowest of the blocks by
 * one block. Whether a grid is a lattice (the twin of
 * spart_host_grid_is_lattice): every vertex tests its own equalities and
 * the step that starts at it; a block with a failure sets the flag to 1
 * (every writer writes the same value).
 *
 * Everything is enqueued on the caller's stream; nothing here allocates or
 * synchronises.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "weights/lattice_steps_math.h"
#include "weights/weights_check_device.h"

namespace
{

constexpr int threads_per_block = 256;
constexpr int64_t max_blocks = 2048; /* grid-stride beyond this */
constexpr size_t head_bytes = 256;   /* the three answers, padded to 256 bytes */

int64_t blocks_for(int64_t num_entries)
{
    int64_t blocks = (num_entries + threads_per_block - 1) / threads_per_block;
    return blocks < 1 ? 1 : (blocks < max_blocks ? blocks : max_blocks);
}

/* Launch `kernel` on `blocks` blocks; the launch's own error is returned,
 * never one left behind by another call. */
template <typename... Parameters, typename... Arguments>
cudaError_t launch(void (*kernel)(Parameters...), int64_t blocks, cudaStream_t stream,
                   Arguments... arguments)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)blocks);
    config.blockDim = dim3(threads_per_block);
    config.stream = stream;
    return cudaLaunchKernelEx(&config, kernel, arguments...);
}

/* Whether index lies in [0, size): one unsigned comparison also catches
 * negative indices. */
__device__ __forceinline__ bool in_range(int64_t index, int64_t size)
{
    return (uint64_t)index < (uint64_t)size;
}

/* The lowest of the block's `candidate`s, by a fixed binary tree in shared
 * memory; valid in thread 0. */
__device__ int64_t block_lowest(int64_t candidate)
{
    __shared__ int64_t lowest[threads_per_block];
    lowest[threadIdx.x] = candidate;
    __syncthreads();
    for (int half = threads_per_block / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            int64_t other = lowest[threadIdx.x + half];
            if (other < lowest[threadIdx.x]) {
                lowest[threadIdx.x] = other;
            }
        }
        __syncthreads();
    }
    return lowest[0];
}

/* Each block's first failing entry (num_entries for none) into
 * block_first[blockIdx.x]. */
__global__ void first_bad_per_block(const int64_t *indices_input, const int64_t *indices_output,
                                    int64_t num_entries, int64_t size_input, int64_t size_output,
                                    int64_t *block_first)
{
    int64_t first = num_entries;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < num_entries; k += stride) {
        if (!in_range(indices_input[k], size_input) || !in_range(indices_output[k], size_output)) {
            first = k;
            break;
        }
    }
    int64_t lowest = block_lowest(first);
    if (threadIdx.x == 0) {
        block_first[blockIdx.x] = lowest;
    }
}

/* The lowest of the blocks' answers and that entry's indices into
 * answer[0..2]. One block. */
__global__ void first_bad_overall(const int64_t *indices_input, const int64_t *indices_output,
                                  int64_t num_entries, const int64_t *block_first,
                                  int64_t num_blocks, int64_t *answer)
{
    int64_t first = num_entries;
    for (int64_t b = threadIdx.x; b < num_blocks; b += blockDim.x) {
        if (block_first[b] < first) {
            first = block_first[b];
        }
    }
    int64_t lowest = block_lowest(first);
    if (threadIdx.x == 0) {
        answer[0] = lowest;
        answer[1] = lowest < num_entries ? indices_input[lowest] : 0;
        answer[2] = lowest < num_entries ? indices_output[lowest] : 0;
    }
}

/* Each block's first non-finite value (size for none) into
 * block_first[blockIdx.x]. x - x is 0 for a finite x and NaN otherwise,
 * the host's test (isfinite) in other words. */
__global__ void first_non_finite_per_block(const double *values, int64_t size, int64_t *block_first)
{
    int64_t first = size;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < size; k += stride) {
        if (!isfinite(values[k])) {
            first = k;
            break;
        }
    }
    int64_t lowest = block_lowest(first);
    if (threadIdx.x == 0) {
        block_first[blockIdx.x] = lowest;
    }
}

/* The lowest of the blocks' answers and that value's bits into
 * answer[0..1]. One block. */
__global__ void first_non_finite_overall(const double *values, int64_t size,
                                         const int64_t *block_first, int64_t num_blocks,
                                         int64_t *answer)
{
    int64_t first = size;
    for (int64_t b = threadIdx.x; b < num_blocks; b += blockDim.x) {
        if (block_first[b] < first) {
            first = block_first[b];
        }
    }
    int64_t lowest = block_lowest(first);
    if (threadIdx.x == 0) {
        answer[0] = lowest;
        answer[1] = lowest < size ? __double_as_longlong(values[lowest]) : 0;
    }
}

/* Whether the vertex at flat index k of an num_x x num_y grid breaks the
 * lattice: its x differs from its row's first, its y from its column's
 * first, or the step starting at it along its axis (x along axis 0 from
 * the first column, y along axis 1 from the first row) is not finite or
 * does not fit the first step (spart_host_grid_is_lattice's tests). */
__device__ bool vertex_breaks_lattice(const double *x, const double *y, int64_t num_x,
                                      int64_t num_y, int64_t k)
{
    const int64_t i = k / num_y, j = k - i * num_y;
    if (!(x[k] == x[i * num_y]) || !(y[k] == y[j])) {
        return true;
    }
    if (j == 0 && i + 1 < num_x) {
        const double step_first = x[num_y] - x[0];
        const double step = x[(i + 1) * num_y] - x[i * num_y];
        if (!isfinite(step) || step_first == 0 || !isfinite(step_first) ||
            !spart_lattice_step_fits(step, step_first)) {
            return true;
        }
    }
    if (i == 0 && j + 1 < num_y) {
        const double step_first = y[1] - y[0];
        const double step = y[j + 1] - y[j];
        if (!isfinite(step) || step_first == 0 || !isfinite(step_first) ||
            !spart_lattice_step_fits(step, step_first)) {
            return true;
        }
    }
    return false;
}

__global__ void grid_not_lattice(const double *x, const double *y, int64_t num_x, int64_t num_y,
                                 int32_t *not_lattice)
{
    const int64_t size = num_x * num_y;
    int broken = 0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < size && !broken;
         k += stride) {
        broken = vertex_breaks_lattice(x, y, num_x, num_y, k);
    }
    if (__syncthreads_or(broken) && threadIdx.x == 0) {
        *not_lattice = 1;
    }
}

} // namespace

extern "C" size_t spart_cuda_first_non_finite_workspace(int64_t size)
{
    return head_bytes + (size_t)blocks_for(size) * sizeof(int64_t);
}

extern "C" int spart_cuda_first_non_finite(const double *values, int64_t size, void *workspace,
                                           size_t workspace_bytes, void *stream)
{
    if (size < 0 || workspace_bytes < spart_cuda_first_non_finite_workspace(size)) {
        return (int)cudaErrorInvalidValue;
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    int64_t *answer = static_cast<int64_t *>(workspace);
    int64_t *block_first = reinterpret_cast<int64_t *>(static_cast<char *>(workspace) + head_bytes);
    int64_t blocks = blocks_for(size);
    cudaError_t error = launch(first_non_finite_per_block, blocks, s, values, size, block_first);
    if (error == cudaSuccess) {
        error = launch(first_non_finite_overall, 1, s, values, size, (const int64_t *)block_first,
                       blocks, answer);
    }
    return (int)error;
}

extern "C" int spart_cuda_grid_not_lattice(const double *x, const double *y, int64_t num_x,
                                           int64_t num_y, int32_t *not_lattice, void *stream)
{
    if (num_x < 2 || num_y < 2) {
        return (int)cudaErrorInvalidValue;
    }
    return (int)launch(grid_not_lattice, blocks_for(num_x * num_y),
                       static_cast<cudaStream_t>(stream), x, y, num_x, num_y, not_lattice);
}

extern "C" size_t spart_cuda_first_bad_entry_workspace(int64_t num_entries)
{
    return head_bytes + (size_t)blocks_for(num_entries) * sizeof(int64_t);
}

extern "C" int spart_cuda_first_bad_entry(const int64_t *indices_input,
                                          const int64_t *indices_output, int64_t num_entries,
                                          int64_t size_input, int64_t size_output, void *workspace,
                                          size_t workspace_bytes, void *stream)
{
    if (num_entries < 0 || workspace_bytes < spart_cuda_first_bad_entry_workspace(num_entries)) {
        return (int)cudaErrorInvalidValue;
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    int64_t *answer = static_cast<int64_t *>(workspace);
    int64_t *block_first = reinterpret_cast<int64_t *>(static_cast<char *>(workspace) + head_bytes);
    int64_t blocks = blocks_for(num_entries);
    cudaError_t error = launch(first_bad_per_block, blocks, s, indices_input, indices_output,
                               num_entries, size_input, size_output, block_first);
    if (error == cudaSuccess) {
        error = launch(first_bad_overall, 1, s, indices_input, indices_output, num_entries,
                       (const int64_t *)block_first, blocks, answer);
    }
    return (int)error;
}
