/*
 * kernels/launch.cuh: the launch conventions shared by the product kernels
 * (kernels/csr_product.cu, kernels/csr_product_tiles.cu): blocks of 256
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
constexpr int64_t max_blocks_x = (int64_t)1 << 24; /* grid-stride beyond this */
constexpr int64_t max_blocks_y = 65535;            /* vector tiles, grid-stride beyond */

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

} // namespace spart_launch

#endif /* SPART_LAUNCH_CUH */
