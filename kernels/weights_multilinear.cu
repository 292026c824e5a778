/*
 * kernels/weights_multilinear.cu: multilinear weights on a rectilinear
 * input grid, on the device: the CUDA twin of the rectilinear path of
 * src/weights/weights_multilinear.c. Contract: src/weights/weights_device.h;
 * the arithmetic, shared with the host: src/weights/multilinear_math.h.
 *
 * A thread a point: on a rectilinear grid it locates the point along each
 * axis on the grid's profiles; on a curvilinear one it searches the host's
 * hierarchy of boxes with the host's code
 * (src/weights/multilinear_curvilinear_math.h, Newton's method of
 * multilinear_newton_math.h); then it writes its 2^N entries at slots
 * p * 2^N + corner, as the host kernel does. The points outside the grid are counted a block at a
 * time (__syncthreads_count) into the block's own slot, and the slots are
 * summed in block order by one thread: no atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "weights/multilinear_math.h"
#include "weights/weights_device.h"
/* a thread's search stack for trees of up to SPART_DEVICE_TREE_LEVELS
 * levels (the driver takes deeper ones to the host) */
#define SPART_ML_STACK_LEVELS SPART_DEVICE_TREE_LEVELS
#include "weights/multilinear_curvilinear_math.h"

#include "launch.cuh"

namespace
{

constexpr int64_t max_blocks = 4096;

/* The grid as a point's thread reads it. */
struct rectilinear_grid {
    int num_axes;
    int num_corners;
    int64_t shape[3];
    int64_t stride[3];
    int64_t offset[8];
    const double *profile[3];
    int coordinate[3];
    int descending[3];
    const double *points[3];
    const double *weights_input;
};

int64_t blocks_for(int64_t num_points)
{
    int64_t blocks =
        (num_points + spart_launch::threads_per_block - 1) / spart_launch::threads_per_block;
    return blocks < 1 ? 1 : (blocks < max_blocks ? blocks : max_blocks);
}

__global__ void point_weights(rectilinear_grid g, int64_t num_points, int nan_outside,
                              spart_device_entries_out out, int64_t *block_outside)
{
    int64_t outside = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    /* `first` is the block's, so every thread of a block runs the same
     * iterations (__syncthreads_count needs them all) */
    for (int64_t first = (int64_t)blockIdx.x * blockDim.x; first < num_points; first += stride) {
        int64_t p = first + threadIdx.x;
        int is_outside = 0;
        if (p < num_points) {
            int64_t cell[3] = {0, 0, 0};
            double xi[3] = {0.0, 0.0, 0.0};
            int inside = 1;
            for (int m = 0; m < g.num_axes; m++) {
                double value = g.points[g.coordinate[m]][p];
                if (!spart_multilinear_locate_axis(g.profile[m], g.shape[m], g.descending[m], value,
                                                   &cell[m], &xi[m])) {
                    inside = 0;
                }
            }
            is_outside = !inside;
            int64_t base = 0;
            for (int m = 0; m < g.num_axes; m++) {
                base += cell[m] * g.stride[m];
            }
            for (int b = 0; b < g.num_corners; b++) {
                int64_t index = base + g.offset[b];
                double weight = spart_multilinear_corner_weight(b, g.num_axes, xi);
                if (g.weights_input != NULL) {
                    weight *= g.weights_input[index];
                }
                if (nan_outside && !inside) {
                    weight = NAN;
                }
                int64_t slot = p * g.num_corners + b;
                out.indices_input[slot] = index;
                out.indices_output[slot] = p;
                out.values[slot] = weight;
            }
        }
        outside += __syncthreads_count(is_outside);
    }
    if (threadIdx.x == 0) {
        block_outside[blockIdx.x] = outside;
    }
}

/* A thread a point on a curvilinear grid: the host's search
 * (spart_ml_locate_curvilinear) and the host's writing of its 2^N entries. */
__global__ void curvilinear_weights(grid g, box_tree tree, const double *x, const double *y,
                                    const double *z, int64_t num_points, int nan_outside,
                                    int extrapolate, const double *weights_input,
                                    spart_device_entries_out out, int64_t *block_outside)
{
    const double *points[3] = {x, y, z};
    search_stack stack;
    int64_t outside = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t first = (int64_t)blockIdx.x * blockDim.x; first < num_points; first += stride) {
        int64_t p = first + threadIdx.x;
        int is_outside = 0;
        if (p < num_points) {
            location where;
            spart_ml_locate_curvilinear(&g, &tree, points, p, extrapolate, &stack, &where);
            is_outside = !where.inside;
            write_point_weights(&g, &where, weights_input, nan_outside, p, out.indices_input,
                                out.indices_output, out.values);
        }
        outside += __syncthreads_count(is_outside);
    }
    if (threadIdx.x == 0) {
        block_outside[blockIdx.x] = outside;
    }
}

__global__ void sum_in_order(const int64_t *block_outside, int64_t num_blocks, int64_t *outside)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int64_t sum = 0;
        for (int64_t b = 0; b < num_blocks; b++) {
            sum += block_outside[b];
        }
        *outside = sum;
    }
}

/* The vertices' layout of the element's input grid, for either grid type:
 * its axes and corners, the shape, the strides of C order, and each corner's
 * offset from a cell's first vertex (bit m of the corner: one step along
 * axis m), as the host's grid_init in src/weights/weights_multilinear.c. */
template <typename Grid> void set_cell_layout(Grid &g, const spart_device_element &element)
{
    g.num_axes = element.num_coordinates;
    g.num_corners = 1 << g.num_axes;
    int64_t stride = 1;
    for (int m = g.num_axes - 1; m >= 0; m--) {
        g.shape[m] = element.shape_input[m];
        g.stride[m] = stride;
        stride *= g.shape[m];
    }
    for (int b = 0; b < g.num_corners; b++) {
        g.offset[b] = 0;
        for (int m = 0; m < g.num_axes; m++) {
            if ((b >> m) & 1) {
                g.offset[b] += g.stride[m];
            }
        }
    }
}

/* A thread-a-point kernel over `blocks` blocks, each counting its points
 * outside the grid into block_outside[block] (the kernel's last argument),
 * then those counts summed in block order into *outside. */
template <typename... Parameters, typename... Arguments>
cudaError_t launch_and_count(void (*kernel)(Parameters...), int64_t blocks, cudaStream_t stream,
                             int64_t *block_outside, int64_t *outside, Arguments... arguments)
{
    cudaError_t error =
        spart_launch::launch(kernel, dim3((unsigned)blocks), stream, arguments..., block_outside);
    if (error == cudaSuccess) {
        error = spart_launch::launch(sum_in_order, dim3(1), stream, (const int64_t *)block_outside,
                                     blocks, outside);
    }
    return error;
}

} // namespace

extern "C" int spart_cuda_weights_multilinear_curvilinear(const spart_device_element *element,
                                                          const struct box_tree *tree,
                                                          int nan_outside, int extrapolate,
                                                          spart_device_entries_out out,
                                                          int64_t *outside, void *scratch,
                                                          size_t scratch_bytes, void *stream)
{
    const int64_t num_points = element->num_points;
    const int64_t blocks = blocks_for(num_points);
    if (scratch_bytes < (size_t)blocks * sizeof(int64_t) ||
        tree->num_levels > SPART_DEVICE_TREE_LEVELS) {
        return (int)cudaErrorInvalidValue;
    }
    grid g = {};
    set_cell_layout(g, *element);
    for (int m = 0; m < g.num_axes; m++) {
        g.vertices[m] = element->input[m];
    }
    return (int)launch_and_count(curvilinear_weights, blocks, (cudaStream_t)stream,
                                 (int64_t *)scratch, outside, g, *tree, element->output[0],
                                 element->output[1], element->output[2], num_points, nan_outside,
                                 extrapolate, element->weights_input, out);
}

extern "C" size_t spart_cuda_weights_multilinear_scratch(int64_t num_points)
{
    return (size_t)blocks_for(num_points) * sizeof(int64_t);
}

extern "C" int spart_cuda_weights_multilinear(const spart_device_element *element,
                                              const spart_device_rectilinear *grid, int nan_outside,
                                              spart_device_entries_out out, int64_t *outside,
                                              void *scratch, size_t scratch_bytes, void *stream)
{
    const int64_t num_points = element->num_points;
    const int64_t blocks = blocks_for(num_points);
    if (scratch_bytes < (size_t)blocks * sizeof(int64_t)) {
        return (int)cudaErrorInvalidValue;
    }
    rectilinear_grid g = {};
    set_cell_layout(g, *element);
    for (int m = 0; m < g.num_axes; m++) {
        g.profile[m] = grid->profile[m];
        g.coordinate[m] = grid->coordinate[m];
        g.descending[m] = grid->descending[m];
        g.points[m] = element->output[m];
    }
    g.weights_input = element->weights_input;
    return (int)launch_and_count(point_weights, blocks, (cudaStream_t)stream, (int64_t *)scratch,
                                 outside, g, num_points, nan_outside, out);
}
