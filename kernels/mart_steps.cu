/*
 * kernels/mart_steps.cu: the steps of the MART iteration on a CUDA device,
 * twin of host/mart_steps.c: the same per-element functions (the shared
 * src/mart_math.h, built with --fmad=false so that no multiply-add is
 * contracted) and the same order of the sums (src/mart_steps.h): one warp
 * per chunk of SPART_MART_CHUNK (1024) values, lane l adding values l, l + 32, ... from 0.0,
 * the lanes combined by __shfl_down_sync (lane l += lane l + h, h = 16..1,
 * exactly the host's pairs), then one thread per channel adding the chunk
 * sums in chunk order. No atomics; everything on the caller's stream.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "mart_math.h"
#include "mart_steps.h"

namespace
{

constexpr int threads_per_block = 256;
constexpr unsigned full_warp = 0xffffffffu;

__device__ __forceinline__ double combine_lanes(double value)
{
    for (int h = SPART_MART_LANES / 2; h >= 1; h /= 2) {
        value = value + __shfl_down_sync(full_warp, value, h);
    }
    return value;
}

int64_t blocks_for(int64_t n)
{
    int64_t blocks = (n + threads_per_block - 1) / threads_per_block;
    return blocks < 1 ? 1 : (blocks > 65535 * 16 ? 65535 * 16 : blocks);
}

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

/* Pass 1: block (chunk, channel), one warp. partial[(c * chunks + k) * 4 + q]. */
__global__ void merits_pass1_kernel(const double *observed, const double *predicted,
                                    const double *widths, int64_t image_size, int64_t chunks,
                                    double *partial)
{
    int64_t k = blockIdx.x;
    int64_t c = blockIdx.y;
    int lane = threadIdx.x;
    int64_t start = k * SPART_MART_CHUNK;
    int64_t end = start + SPART_MART_CHUNK < image_size ? start + SPART_MART_CHUNK : image_size;
    const double *o = observed + c * image_size;
    const double *d = predicted + c * image_size;
    const double *w = widths + c * image_size;
    double sums[SPART_MART_PASS_SUMS] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t p = start + lane; p < end; p += SPART_MART_LANES) {
        double residual = o[p] - d[p];
        if (w[p] != 0.0) {
            double z = residual / w[p];
            sums[0] = sums[0] + z * z;
            sums[1] = sums[1] + 1.0;
        }
        sums[2] = sums[2] + d[p];
        sums[3] = sums[3] + residual;
    }
    for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
        double total = combine_lanes(sums[q]);
        if (lane == 0) {
            partial[(c * chunks + k) * SPART_MART_PASS_SUMS + q] = total;
        }
    }
}

/* Chunk sums of `count` quantities of channel c, added in chunk order. */
__device__ void add_chunks(const double *partial, int64_t c, int64_t chunks, int count,
                           double *totals)
{
    for (int q = 0; q < count; q++) {
        totals[q] = 0.0;
    }
    for (int64_t k = 0; k < chunks; k++) {
        for (int q = 0; q < count; q++) {
            totals[q] = totals[q] + partial[(c * chunks + k) * SPART_MART_PASS_SUMS + q];
        }
    }
}

/* chi2[c] and the means of channel c into results (chi2 at c, means at
 * 2C + 2c and 2C + 2c + 1). */
__global__ void merits_finish1_kernel(const double *partial, int64_t num_channel,
                                      int64_t image_size, int64_t chunks, double *results)
{
    for (int64_t c = threadIdx.x; c < num_channel; c += blockDim.x) {
        double totals[SPART_MART_PASS_SUMS];
        add_chunks(partial, c, chunks, SPART_MART_PASS_SUMS, totals);
        double n = (double)image_size;
        results[c] = totals[1] > 0.0 ? totals[0] / totals[1] : nan("");
        results[2 * num_channel + 2 * c] = totals[2] / n;
        results[2 * num_channel + 2 * c + 1] = totals[3] / n;
    }
}

__global__ void merits_pass2_kernel(const double *observed, const double *predicted,
                                    int64_t image_size, int64_t num_channel, int64_t chunks,
                                    const double *results, double *partial)
{
    int64_t k = blockIdx.x;
    int64_t c = blockIdx.y;
    int lane = threadIdx.x;
    int64_t start = k * SPART_MART_CHUNK;
    int64_t end = start + SPART_MART_CHUNK < image_size ? start + SPART_MART_CHUNK : image_size;
    const double *o = observed + c * image_size;
    const double *d = predicted + c * image_size;
    double mean_predicted = results[2 * num_channel + 2 * c];
    double mean_residual = results[2 * num_channel + 2 * c + 1];
    double sums[3] = {0.0, 0.0, 0.0};
    for (int64_t p = start + lane; p < end; p += SPART_MART_LANES) {
        double de = d[p] - mean_predicted;
        double dr = (o[p] - d[p]) - mean_residual;
        sums[0] = sums[0] + de * dr;
        sums[1] = sums[1] + de * de;
        sums[2] = sums[2] + dr * dr;
    }
    for (int q = 0; q < 3; q++) {
        double total = combine_lanes(sums[q]);
        if (lane == 0) {
            partial[(c * chunks + k) * SPART_MART_PASS_SUMS + q] = total;
        }
    }
}

__global__ void merits_finish2_kernel(const double *partial, int64_t num_channel,
                                      int64_t image_size, int64_t chunks, double *results)
{
    for (int64_t c = threadIdx.x; c < num_channel; c += blockDim.x) {
        double totals[3];
        add_chunks(partial, c, chunks, 3, totals);
        double n = (double)image_size;
        double covariance = totals[0] / n;
        double deviation_predicted = sqrt(totals[1] / n);
        double deviation_residual = sqrt(totals[2] / n);
        results[num_channel + c] = covariance / (deviation_predicted * deviation_residual);
    }
}

__global__ void flat_pass_kernel(const double *backprojected, int64_t num_channel,
                                 int64_t scene_size, double *partial)
{
    int64_t k = blockIdx.x;
    int lane = threadIdx.x;
    int64_t start = k * SPART_MART_CHUNK;
    int64_t end = start + SPART_MART_CHUNK < scene_size ? start + SPART_MART_CHUNK : scene_size;
    double channels = (double)num_channel;
    double lane_sum = 0.0;
    for (int64_t v = start + lane; v < end; v += SPART_MART_LANES) {
        double sum = 0.0;
        for (int64_t c = 0; c < num_channel; c++) {
            sum = sum + backprojected[c * scene_size + v];
        }
        lane_sum = lane_sum + sum / channels;
    }
    double total = combine_lanes(lane_sum);
    if (lane == 0) {
        partial[k] = total;
    }
}

__global__ void flat_finish_kernel(const double *partial, int64_t chunks, int64_t scene_size,
                                   double *mean)
{
    double total = 0.0;
    for (int64_t k = 0; k < chunks; k++) {
        total = total + partial[k];
    }
    *mean = total / (double)scene_size;
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
                              double gamma, double inverse_channels)
{
    for (int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; v < scene_size;
         v += (int64_t)gridDim.x * blockDim.x) {
        double f = spart_mart_correction(observed_back + v, predicted_back + v, scene_size,
                                         num_channel, gamma, inverse_channels);
        scene[v] = scene[v] * f;
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

extern "C" int spart_mart_device_merits(const double *observed, const double *predicted,
                                        const double *widths, int64_t num_channel,
                                        int64_t image_size, double *chi2, double *correlation,
                                        void *workspace, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t chunks = spart_mart_num_chunks(image_size);
    double *results = (double *)workspace; /* 4 C: chi2, r, means */
    double *partial = results + 4 * num_channel;
    dim3 grid((unsigned)chunks, (unsigned)num_channel);
    merits_pass1_kernel<<<grid, SPART_MART_LANES, 0, s>>>(observed, predicted, widths, image_size,
                                                          chunks, partial);
    merits_finish1_kernel<<<1, 256, 0, s>>>(partial, num_channel, image_size, chunks, results);
    merits_pass2_kernel<<<grid, SPART_MART_LANES, 0, s>>>(observed, predicted, image_size,
                                                          num_channel, chunks, results, partial);
    merits_finish2_kernel<<<1, 256, 0, s>>>(partial, num_channel, image_size, chunks, results);
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess || chi2 == NULL) {
        return (int)error; /* without host arrays the results stay in the workspace */
    }
    error = cudaMemcpyAsync(chi2, results, (size_t)num_channel * sizeof(double),
                            cudaMemcpyDeviceToHost, s);
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(correlation, results + num_channel,
                                (size_t)num_channel * sizeof(double), cudaMemcpyDeviceToHost, s);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(s);
    }
    return (int)error;
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
    flat_finish_kernel<<<1, 1, 0, s>>>(partial, chunks, scene_size, mean);
    fill_kernel<<<(unsigned)blocks_for(scene_size), threads_per_block, 0, s>>>(scene, scene_size,
                                                                               mean);
    return (int)cudaGetLastError();
}

extern "C" int spart_mart_device_update(double *scene, const double *observed_back,
                                        const double *predicted_back, int64_t num_channel,
                                        int64_t scene_size, double gamma, void *stream)
{
    double inverse_channels = 1.0 / (double)num_channel;
    update_kernel<<<(unsigned)blocks_for(scene_size), threads_per_block, 0, (cudaStream_t)stream>>>(
        scene, observed_back, predicted_back, num_channel, scene_size, gamma, inverse_channels);
    return (int)cudaGetLastError();
}

extern "C" const char *spart_mart_device_error_string(int error)
{
    return cudaGetErrorString((cudaError_t)error);
}
