/*
 * kernels/launch.cuh: the launch conventions shared by the kernels
 * (products, assembly, the folding of a PSF into weights): blocks of 256
 * threads, grids bounded so that kernels stride over what is left, and
 * launches that return their own error.
 */
#ifndef SPART_LAUNCH_CUH
#define SPART_LAUNCH_CUH

#include <cuda_runtime.h>

#include <stdint.h>

namespace spart_launch
{

constexpr int threads_per_block = 256;
constexpr int64_t max_blocks_x = (int64_t)1 << 24;     /* grid-stride beyond this */
constexpr int64_t max_blocks_y = 65535;                /* vector tiles, grid-stride beyond */
constexpr int64_t max_blocks_items = (int64_t)1 << 20; /* launch_items: grid-stride beyond */

/* Blocks for `items`, items_per_block a block, at most max_blocks_x. */
inline int64_t blocks_for(int64_t items, int64_t items_per_block)
{
    int64_t blocks = (items + items_per_block - 1) / items_per_block;
    return blocks < max_blocks_x ? blocks : max_blocks_x;
}

/* Launch `kernel` on `grid` blocks of threads_per_block threads. The
 * launch's own error is returned (cudaLaunchKernelEx), never an earlier
 * one left in the thread's last-error state by someone else's call. */
template <typename... Parameters, typename... Arguments>
cudaError_t launch(void (*kernel)(Parameters...), dim3 grid, cudaStream_t stream,
                   Arguments... arguments)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(threads_per_block);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    return cudaLaunchKernelEx(&config, kernel, arguments...);
}

/* The first item of the calling thread in a grid-stride loop, and the
 * stride. */
__device__ __forceinline__ int64_t first_item()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t item_stride()
{
    return (int64_t)gridDim.x * blockDim.x;
}

/* Launch `kernel`, which takes `items` items a thread each and strides
 * over the grid, on the blocks one pass needs, at most max_blocks_items;
 * nothing for no items. */
template <typename... Parameters, typename... Arguments>
cudaError_t launch_items(void (*kernel)(Parameters...), int64_t items, cudaStream_t stream,
                         Arguments... arguments)
{
    if (items <= 0) {
        return cudaSuccess;
    }
    const int64_t blocks = blocks_for(items, threads_per_block);
    const unsigned grid = (unsigned)(blocks < max_blocks_items ? blocks : max_blocks_items);
    return launch(kernel, dim3(grid), stream, arguments...);
}

} // namespace spart_launch

#endif /* SPART_LAUNCH_CUH */
