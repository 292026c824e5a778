/*
 * kernels/mart_frames.cu: the MART steps of many frames at once on a CUDA
 * device (spart_mart_update_frames, spart_mart_decide_frames,
 * spart_mart_keep_frames), twin of host/mart_frames.c. Each frame gets
 * the one-frame kernel's operations of kernels/mart_steps.cu in their
 * order: the update's correction of each voxel (the shared
 * src/mart/mart_math.h, --fmad=false), the decision of one frame by one
 * thread, the copy of a kept state. The frame is blockIdx.y for the
 * element-wise kernels (a block never straddles two frames) and the
 * thread for the decision; a frame whose state has stopped returns at
 * once (its state changes only between kernels). No atomics; everything
 * on the caller's stream, so the kernels can be recorded in a graph.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "mart/mart_math.h"
#include "mart/mart_steps.h"
#include "mart_steps.cuh"

namespace
{

using spart_mart_steps::blocks_for;
using spart_mart_steps::threads_per_block;

/* Frames a launch's y dimension takes; more are launched in slices. */
constexpr int64_t max_frames_per_launch = 65535;

__device__ __forceinline__ bool frame_stopped(const spart_mart_device_state *states, int64_t f)
{
    return states != nullptr && states[f].stopped != SPART_MART_DEVICE_RUNNING;
}

/* update_kernel of kernels/mart_steps.cu for frame first + blockIdx.y. */
__global__ void update_frames_kernel(double *scenes, const double *observed_back,
                                     const double *predicted_back, int64_t first,
                                     int64_t num_channel, int64_t scene_size, double gamma,
                                     double inverse_channels, const spart_mart_device_state *states)
{
    const int64_t f = first + blockIdx.y;
    if (frame_stopped(states, f)) {
        return;
    }
    double *scene = scenes + f * scene_size;
    const double *observed = observed_back + f * num_channel * scene_size;
    const double *predicted = predicted_back + f * num_channel * scene_size;
    for (int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; v < scene_size;
         v += (int64_t)gridDim.x * blockDim.x) {
        double factor = spart_mart_correction(observed + v, predicted + v, scene_size, num_channel,
                                              gamma, inverse_channels);
        scene[v] = scene[v] * factor;
    }
}

/* decide_kernel of kernels/mart_steps.cu, frame f by thread f. */
__global__ void decide_frames_kernel(spart_mart_device_rule rule, int64_t num_frames,
                                     const double *merits, double *history_rows,
                                     spart_mart_device_state *states)
{
    const int64_t f = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (f >= num_frames || states[f].stopped != SPART_MART_DEVICE_RUNNING) {
        return;
    }
    const int64_t channels = rule.num_channel;
    spart_mart_steps::decide_frame(rule, merits + f * channels,
                                   merits + num_frames * channels + f * channels,
                                   history_rows + f * 2 * channels, states + f);
}

/* keep_kernel of kernels/mart_steps.cu for frame first + blockIdx.y. */
__global__ void keep_frames_kernel(const double *scenes, int64_t first, int64_t scene_size,
                                   double *kept, const spart_mart_device_state *states)
{
    const int64_t f = first + blockIdx.y;
    if (frame_stopped(states, f)) {
        return;
    }
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < scene_size;
         i += (int64_t)gridDim.x * blockDim.x) {
        kept[f * scene_size + i] = scenes[f * scene_size + i];
    }
}

/* The flat guess of many frames, flat_pass_kernel, flat_finish_kernel and
 * fill_kernel of kernels/mart_steps.cu for frame first + blockIdx.y (the
 * finish: frame f by warp f, the block), frame f's mean and chunk sums in its own
 * region of the workspace (`stride` doubles a frame: the mean, then the
 * sums), as the one-frame guess lays them out. */
__global__ void flat_pass_frames_kernel(const double *backprojected, int64_t first,
                                        int64_t num_channel, int64_t scene_size, double *workspace,
                                        int64_t stride)
{
    const int64_t f = first + blockIdx.y;
    double total = spart_mart_steps::flat_chunk(backprojected + f * num_channel * scene_size,
                                                num_channel, scene_size, blockIdx.x, threadIdx.x);
    if (threadIdx.x == 0) {
        workspace[f * stride + 1 + blockIdx.x] = total;
    }
}

__global__ void flat_finish_frames_kernel(int64_t chunks, int64_t scene_size, double *workspace,
                                          int64_t stride)
{
    double *region = workspace + blockIdx.x * stride;
    double mean = spart_mart_steps::flat_mean(region + 1, chunks, scene_size);
    if (threadIdx.x == 0) {
        region[0] = mean;
    }
}

__global__ void fill_frames_kernel(double *scenes, int64_t first, int64_t scene_size,
                                   const double *workspace, int64_t stride)
{
    const int64_t f = first + blockIdx.y;
    const double value = workspace[f * stride];
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < scene_size;
         i += (int64_t)gridDim.x * blockDim.x) {
        scenes[f * scene_size + i] = value;
    }
}

/* Blocks along x for one frame of n values: the frames multiply the
 * grid, so fewer blocks a frame once there are many frames (each block
 * strides over the rest), never fewer than one. */
inline unsigned frame_blocks(int64_t n, int64_t frames)
{
    int64_t blocks = blocks_for(n);
    int64_t wanted = (4096 + frames - 1) / frames; /* about 4096 blocks in all */
    return (unsigned)(blocks < wanted ? blocks : (wanted < 1 ? 1 : wanted));
}

} /* namespace */

extern "C" int spart_mart_device_update_frames(double *scenes, const double *observed_back,
                                               const double *predicted_back, int64_t num_frames,
                                               int64_t num_channel, int64_t scene_size,
                                               double gamma, const spart_mart_device_state *states,
                                               void *stream)
{
    double inverse_channels = 1.0 / (double)num_channel;
    for (int64_t first = 0; first < num_frames; first += max_frames_per_launch) {
        int64_t count =
            num_frames - first < max_frames_per_launch ? num_frames - first : max_frames_per_launch;
        dim3 grid(frame_blocks(scene_size, num_frames), (unsigned)count);
        update_frames_kernel<<<grid, threads_per_block, 0, (cudaStream_t)stream>>>(
            scenes, observed_back, predicted_back, first, num_channel, scene_size, gamma,
            inverse_channels, states);
    }
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_flat_guess_frames(const double *backprojected, int64_t num_frames,
                                                   int64_t num_channel, int64_t scene_size,
                                                   double *scenes, void *workspace, int64_t stride,
                                                   void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    double *regions = (double *)workspace;
    int64_t chunks = spart_mart_num_chunks(scene_size);
    for (int64_t first = 0; first < num_frames; first += max_frames_per_launch) {
        int64_t count =
            num_frames - first < max_frames_per_launch ? num_frames - first : max_frames_per_launch;
        dim3 grid((unsigned)chunks, (unsigned)count);
        flat_pass_frames_kernel<<<grid, SPART_MART_LANES, 0, s>>>(backprojected, first, num_channel,
                                                                  scene_size, regions, stride);
    }
    flat_finish_frames_kernel<<<(unsigned)num_frames, SPART_MART_LANES, 0, s>>>(chunks, scene_size,
                                                                                regions, stride);
    for (int64_t first = 0; first < num_frames; first += max_frames_per_launch) {
        int64_t count =
            num_frames - first < max_frames_per_launch ? num_frames - first : max_frames_per_launch;
        dim3 grid(frame_blocks(scene_size, num_frames), (unsigned)count);
        fill_frames_kernel<<<grid, threads_per_block, 0, s>>>(scenes, first, scene_size, regions,
                                                              stride);
    }
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_decide_frames_launch(const spart_mart_device_rule *rule,
                                                      int64_t num_frames, const double *merits,
                                                      double *history_rows,
                                                      spart_mart_device_state *states, void *stream)
{
    const int threads = 64;
    unsigned blocks = (unsigned)((num_frames + threads - 1) / threads);
    decide_frames_kernel<<<blocks, threads, 0, (cudaStream_t)stream>>>(*rule, num_frames, merits,
                                                                       history_rows, states);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_keep_frames_launch(const double *scenes, int64_t num_frames,
                                                    int64_t scene_size, double *kept,
                                                    const spart_mart_device_state *states,
                                                    void *stream)
{
    for (int64_t first = 0; first < num_frames; first += max_frames_per_launch) {
        int64_t count =
            num_frames - first < max_frames_per_launch ? num_frames - first : max_frames_per_launch;
        dim3 grid(frame_blocks(scene_size, num_frames), (unsigned)count);
        keep_frames_kernel<<<grid, threads_per_block, 0, (cudaStream_t)stream>>>(
            scenes, first, scene_size, kept, states);
    }
    return (int)cudaGetLastError();
}
