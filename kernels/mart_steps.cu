/*
 * kernels/mart_steps.cu: the element-wise steps of the MART iteration on a
 * CUDA device, twin of host/mart_steps.c: the clamp and the noise widths
 * of the predicted images, the flat first guess, the update from two
 * backprojections, and the two one-thread kernels of a batched run
 * (src/mart/mart_steps.h): decide_kernel checks the stopping rule on the
 * device after each iteration's merits, in the host's order of operations,
 * and keep_kernel keeps the scene. The same per-element functions as the
 * host (the shared src/mart/mart_math.h, built with --fmad=false so that
 * no multiply-add is contracted) and the same order of the sums: the flat
 * guess's chunks of SPART_MART_CHUNK (1024) voxels summed by one warp each
 * (kernels/mart_steps.cuh), then in chunk order. No atomics; everything on
 * the caller's stream.
 *
 * The merits are in kernels/mart_merits.cu, the backprojection fused with
 * the update in kernels/mart_backproject_update.cu.
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
using spart_mart_steps::run_stopped;
using spart_mart_steps::threads_per_block;

__global__ void clamp_kernel(double *values, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        values[i] = spart_mart_clamped(values[i]);
    }
}

__global__ void widths_kernel(double *images, double *widths, int64_t n, double gain,
                              double read_variance)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double d = spart_mart_clamped(images[i]);
        images[i] = d;
        widths[i] = spart_mart_width(d, gain, read_variance);
    }
}

__global__ void flat_pass_kernel(const double *backprojected, int64_t num_channel,
                                 int64_t scene_size, double *partial)
{
    int64_t k = blockIdx.x;
    double total =
        spart_mart_steps::flat_chunk(backprojected, num_channel, scene_size, k, threadIdx.x);
    if (threadIdx.x == 0) {
        partial[k] = total;
    }
}

__global__ void flat_finish_kernel(const double *partial, int64_t chunks, int64_t scene_size,
                                   double *mean)
{
    double value = spart_mart_steps::flat_mean(partial, chunks, scene_size);
    if (threadIdx.x == 0) {
        *mean = value;
    }
}

__global__ void fill_kernel(double *scene, int64_t n, const double *value)
{
    double v = *value;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        scene[i] = v;
    }
}

__global__ void update_kernel(double *scene, const double *observed_back,
                              const double *predicted_back, int64_t num_channel, int64_t scene_size,
                              double gamma, double inverse_channels, const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    for (int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; v < scene_size;
         v += (int64_t)gridDim.x * blockDim.x) {
        double f = spart_mart_correction(observed_back + v, predicted_back + v, scene_size,
                                         num_channel, gamma, inverse_channels);
        scene[v] = scene[v] * f;
    }
}

/* The end of one iteration of a batched run (one thread): unless the run
 * has stopped, decide_frame (kernels/mart_steps.cuh) on its merits (chi2,
 * then r). */
__global__ void decide_kernel(spart_mart_device_rule rule, const double *merits,
                              double *history_row, spart_mart_device_state *state)
{
    if (state->stopped != SPART_MART_DEVICE_RUNNING) {
        return;
    }
    spart_mart_steps::decide_frame(rule, merits, merits + rule.num_channel, history_row, state);
}

/* kept = scene, unless the batched run has stopped. */
__global__ void keep_kernel(const double *scene, int64_t scene_size, double *kept,
                            const spart_mart_device_state *state)
{
    if (state->stopped != SPART_MART_DEVICE_RUNNING) {
        return;
    }
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < scene_size;
         i += (int64_t)gridDim.x * blockDim.x) {
        kept[i] = scene[i];
    }
}

} /* namespace */

extern "C" int spart_mart_device_clamp(double *values, int64_t n, void *stream)
{
    clamp_kernel<<<(unsigned)blocks_for(n), threads_per_block, 0, (cudaStream_t)stream>>>(values,
                                                                                          n);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_noise_widths(double *images, double *widths, int64_t n,
                                              double gain, double read_variance, void *stream)
{
    widths_kernel<<<(unsigned)blocks_for(n), threads_per_block, 0, (cudaStream_t)stream>>>(
        images, widths, n, gain, read_variance);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_flat_guess(const double *backprojected, int64_t num_channel,
                                            int64_t scene_size, double *scene, void *workspace,
                                            void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t chunks = spart_mart_num_chunks(scene_size);
    double *mean = (double *)workspace;
    double *partial = mean + 1;
    flat_pass_kernel<<<(unsigned)chunks, SPART_MART_LANES, 0, s>>>(backprojected, num_channel,
                                                                   scene_size, partial);
    flat_finish_kernel<<<1, SPART_MART_LANES, 0, s>>>(partial, chunks, scene_size, mean);
    fill_kernel<<<(unsigned)blocks_for(scene_size), threads_per_block, 0, s>>>(scene, scene_size,
                                                                               mean);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_update(double *scene, const double *observed_back,
                                        const double *predicted_back, int64_t num_channel,
                                        int64_t scene_size, double gamma, const int *stop,
                                        void *stream)
{
    double inverse_channels = 1.0 / (double)num_channel;
    update_kernel<<<(unsigned)blocks_for(scene_size), threads_per_block, 0, (cudaStream_t)stream>>>(
        scene, observed_back, predicted_back, num_channel, scene_size, gamma, inverse_channels,
        stop);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_decide_launch(const spart_mart_device_rule *rule,
                                               const double *merits, double *history_row,
                                               spart_mart_device_state *state, void *stream)
{
    decide_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(*rule, merits, history_row, state);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_keep_launch(const double *scene, int64_t scene_size, double *kept,
                                             const spart_mart_device_state *state, void *stream)
{
    keep_kernel<<<(unsigned)blocks_for(scene_size), threads_per_block, 0, (cudaStream_t)stream>>>(
        scene, scene_size, kept, state);
    return (int)cudaGetLastError();
}

extern "C" const char *spart_mart_device_error_string(int error)
{
    return cudaGetErrorString((cudaError_t)error);
}
