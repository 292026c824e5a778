/*
 * kernels/mart_steps.cu: the steps of the MART iteration on a CUDA device,
 * twin of host/mart_steps.c: the same per-element functions (the shared
 * src/mart/mart_math.h, built with --fmad=false so that no multiply-add is
 * contracted) and the same order of the sums (src/mart/mart_steps.h): one warp
 * per chunk of SPART_MART_CHUNK (1024) values, lane l adding values l, l + 32, ... from 0.0,
 * the lanes combined by __shfl_down_sync (lane l += lane l + h, h = 16..1,
 * exactly the host's pairs), then one thread per channel adding the chunk
 * sums in chunk order. No atomics; everything on the caller's stream.
 *
 * Fused steps, each giving the bits of the steps it replaces:
 *   - the merits of images of at most SPART_MART_FUSED_CHUNKS chunks a
 *     channel in one launch (one block per channel: its warps share the
 *     chunks, and the block's barriers order the two passes), instead of
 *     four; up to 8 chunks, where the device has thread block clusters,
 *     a cluster per channel of a block per chunk, the chunk sums meeting
 *     in the cluster's shared memory (merits_cluster_kernel);
 *   - the backprojection of the predicted images and the update in one
 *     pass (spart_cuda_mart_backproject_update): each voxel's rows summed
 *     as the product sums them (kernels/csr_row_sum.cuh), then its
 *     correction, so the backprojection never goes to memory.
 *
 * Batched runs (src/mart/mart_device_batch.h): the merits and update kernels
 * take the run's stop flag (or NULL) and return at once once it is set;
 * decide_kernel checks the stopping rule on the device after each
 * iteration's merits, one thread, in the host's order of operations.
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "csr_row_sum.cuh"
#include "device/device_internal.h"
#include "mart/mart_math.h"
#include "mart/mart_steps.h"

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

/* Whether a batched MART run has stopped (`stop` is its flag in device
 * memory, or NULL outside such a run): the steps that would change the
 * state or the merits then return at once. The flag changes only between
 * kernels (spart_mart_device_decide), so every thread of a launch reads
 * the same value and a block returns as a whole. */
__device__ __forceinline__ bool run_stopped(const int *stop)
{
    return stop != nullptr && *stop != SPART_MART_DEVICE_RUNNING;
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

/* Images of at most this many chunks a channel have their merits in one
 * launch (a block per channel); larger ones take four launches that
 * spread the chunks over the whole device. */
constexpr int64_t fused_merit_chunks = 64;

/* Values a lane loads before it adds any: a chunk's 32 values a lane then
 * cost four round trips to memory instead of 32 (the additions keep their
 * order). A slot past the chunk's end reads the chunk's first value, which
 * is not added, so that every load of a round is issued without a branch. */
constexpr int merit_batch = 8;

/* Pass 1 over chunk k of one channel by one warp: lane 0 ends with the
 * chunk's sums of z^2 over unmasked pixels, their count, predicted and
 * residual. */
__device__ __forceinline__ void merit_chunk_pass1(const double *o, const double *d, const double *w,
                                                  int64_t image_size, int64_t k, int lane,
                                                  double (&sums)[SPART_MART_PASS_SUMS])
{
    int64_t start = k * SPART_MART_CHUNK;
    int64_t end = start + SPART_MART_CHUNK < image_size ? start + SPART_MART_CHUNK : image_size;
    for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
        sums[q] = 0.0;
    }
    for (int64_t base = start + lane; base < end; base += merit_batch * SPART_MART_LANES) {
        double ov[merit_batch], dv[merit_batch], wv[merit_batch];
#pragma unroll
        for (int u = 0; u < merit_batch; u++) {
            const int64_t p = base + u * SPART_MART_LANES;
            const int64_t at = p < end ? p : start;
            ov[u] = o[at];
            dv[u] = d[at];
            wv[u] = w[at];
        }
#pragma unroll
        for (int u = 0; u < merit_batch; u++) {
            if (base + u * SPART_MART_LANES < end) {
                double residual = ov[u] - dv[u];
                if (wv[u] != 0.0) {
                    double z = residual / wv[u];
                    sums[0] = sums[0] + z * z;
                    sums[1] = sums[1] + 1.0;
                }
                sums[2] = sums[2] + dv[u];
                sums[3] = sums[3] + residual;
            }
        }
    }
    for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
        sums[q] = combine_lanes(sums[q]);
    }
}

/* Pass 2 over chunk k of one channel by one warp: the centred cross
 * product and squares, in lane 0. */
__device__ __forceinline__ void merit_chunk_pass2(const double *o, const double *d,
                                                  int64_t image_size, int64_t k, int lane,
                                                  double mean_predicted, double mean_residual,
                                                  double (&sums)[3])
{
    int64_t start = k * SPART_MART_CHUNK;
    int64_t end = start + SPART_MART_CHUNK < image_size ? start + SPART_MART_CHUNK : image_size;
    for (int q = 0; q < 3; q++) {
        sums[q] = 0.0;
    }
    for (int64_t base = start + lane; base < end; base += merit_batch * SPART_MART_LANES) {
        double ov[merit_batch], dv[merit_batch];
#pragma unroll
        for (int u = 0; u < merit_batch; u++) {
            const int64_t p = base + u * SPART_MART_LANES;
            const int64_t at = p < end ? p : start;
            ov[u] = o[at];
            dv[u] = d[at];
        }
#pragma unroll
        for (int u = 0; u < merit_batch; u++) {
            if (base + u * SPART_MART_LANES < end) {
                double de = dv[u] - mean_predicted;
                double dr = (ov[u] - dv[u]) - mean_residual;
                sums[0] = sums[0] + de * dr;
                sums[1] = sums[1] + de * de;
                sums[2] = sums[2] + dr * dr;
            }
        }
    }
    for (int q = 0; q < 3; q++) {
        sums[q] = combine_lanes(sums[q]);
    }
}

/* Chunk sums of `count` quantities, added in chunk order from 0.0
 * (partial[k * SPART_MART_PASS_SUMS + q]). */
__device__ void add_chunks(const double *partial, int64_t chunks, int count, double *totals)
{
    for (int q = 0; q < count; q++) {
        totals[q] = 0.0;
    }
    for (int64_t k = 0; k < chunks; k++) {
        for (int q = 0; q < count; q++) {
            totals[q] = totals[q] + partial[k * SPART_MART_PASS_SUMS + q];
        }
    }
}

/* chi2 and the two means of one channel from its pass-1 totals. */
__device__ __forceinline__ void finish_pass1(const double (&totals)[SPART_MART_PASS_SUMS],
                                             int64_t image_size, double *chi2,
                                             double *mean_predicted, double *mean_residual)
{
    double n = (double)image_size;
    *chi2 = totals[1] > 0.0 ? totals[0] / totals[1] : nan("");
    *mean_predicted = totals[2] / n;
    *mean_residual = totals[3] / n;
}

/* The correlation of one channel from its pass-2 totals. */
__device__ __forceinline__ double finish_pass2(const double (&totals)[3], int64_t image_size)
{
    double n = (double)image_size;
    double covariance = totals[0] / n;
    double deviation_predicted = sqrt(totals[1] / n);
    double deviation_residual = sqrt(totals[2] / n);
    return covariance / (deviation_predicted * deviation_residual);
}

/* Pass 1: block (chunk, channel), one warp. partial[(c * chunks + k) * 4 + q]. */
__global__ void merits_pass1_kernel(const double *observed, const double *predicted,
                                    const double *widths, int64_t image_size, int64_t chunks,
                                    double *partial, const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    int64_t k = blockIdx.x;
    int64_t c = blockIdx.y;
    int lane = threadIdx.x;
    double sums[SPART_MART_PASS_SUMS];
    merit_chunk_pass1(observed + c * image_size, predicted + c * image_size,
                      widths + c * image_size, image_size, k, lane, sums);
    if (lane == 0) {
        for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
            partial[(c * chunks + k) * SPART_MART_PASS_SUMS + q] = sums[q];
        }
    }
}

/* chi2[c] and the means of channel c into results (chi2 at c, means at
 * 2C + 2c and 2C + 2c + 1). */
__global__ void merits_finish1_kernel(const double *partial, int64_t num_channel,
                                      int64_t image_size, int64_t chunks, double *results,
                                      const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    for (int64_t c = threadIdx.x; c < num_channel; c += blockDim.x) {
        double totals[SPART_MART_PASS_SUMS];
        add_chunks(partial + c * chunks * SPART_MART_PASS_SUMS, chunks, SPART_MART_PASS_SUMS,
                   totals);
        finish_pass1(totals, image_size, &results[c], &results[2 * num_channel + 2 * c],
                     &results[2 * num_channel + 2 * c + 1]);
    }
}

__global__ void merits_pass2_kernel(const double *observed, const double *predicted,
                                    int64_t image_size, int64_t num_channel, int64_t chunks,
                                    const double *results, double *partial, const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    int64_t k = blockIdx.x;
    int64_t c = blockIdx.y;
    int lane = threadIdx.x;
    double sums[3];
    merit_chunk_pass2(observed + c * image_size, predicted + c * image_size, image_size, k, lane,
                      results[2 * num_channel + 2 * c], results[2 * num_channel + 2 * c + 1], sums);
    if (lane == 0) {
        for (int q = 0; q < 3; q++) {
            partial[(c * chunks + k) * SPART_MART_PASS_SUMS + q] = sums[q];
        }
    }
}

__global__ void merits_finish2_kernel(const double *partial, int64_t num_channel,
                                      int64_t image_size, int64_t chunks, double *results,
                                      const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    for (int64_t c = threadIdx.x; c < num_channel; c += blockDim.x) {
        double totals[3];
        add_chunks(partial + c * chunks * SPART_MART_PASS_SUMS, chunks, 3, totals);
        results[num_channel + c] = finish_pass2(totals, image_size);
    }
}

/* Both passes of one channel (blockIdx.x) in one block: warp w takes
 * chunks w, w + warps, ...; the chunk sums wait in shared memory
 * (chunks x SPART_MART_PASS_SUMS doubles, then the two means) for thread
 * 0, which adds them in chunk order between the block's barriers. Same
 * sums, same order, as the four kernels above. */
__global__ void merits_fused_kernel(const double *observed, const double *predicted,
                                    const double *widths, int64_t num_channel, int64_t image_size,
                                    int64_t chunks, double *results, const int *stop)
{
    extern __shared__ double partial[]; /* chunks x SPART_MART_PASS_SUMS, then 2 means */
    if (run_stopped(stop)) {
        return; /* the whole block: before any barrier */
    }
    double *means = partial + chunks * SPART_MART_PASS_SUMS;
    const int64_t c = blockIdx.x;
    const int lane = (int)(threadIdx.x % SPART_MART_LANES);
    const int64_t warp = threadIdx.x / SPART_MART_LANES;
    const int64_t warps = blockDim.x / SPART_MART_LANES;
    const double *o = observed + c * image_size;
    const double *d = predicted + c * image_size;
    const double *w = widths + c * image_size;
    for (int64_t k = warp; k < chunks; k += warps) {
        double sums[SPART_MART_PASS_SUMS];
        merit_chunk_pass1(o, d, w, image_size, k, lane, sums);
        if (lane == 0) {
            for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
                partial[k * SPART_MART_PASS_SUMS + q] = sums[q];
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double totals[SPART_MART_PASS_SUMS];
        add_chunks(partial, chunks, SPART_MART_PASS_SUMS, totals);
        finish_pass1(totals, image_size, &results[c], &means[0], &means[1]);
        results[2 * num_channel + 2 * c] = means[0];
        results[2 * num_channel + 2 * c + 1] = means[1];
    }
    __syncthreads();
    const double mean_predicted = means[0];
    const double mean_residual = means[1];
    for (int64_t k = warp; k < chunks; k += warps) {
        double sums[3];
        merit_chunk_pass2(o, d, image_size, k, lane, mean_predicted, mean_residual, sums);
        if (lane == 0) {
            for (int q = 0; q < 3; q++) {
                partial[k * SPART_MART_PASS_SUMS + q] = sums[q];
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double totals[3];
        add_chunks(partial, chunks, 3, totals);
        results[num_channel + c] = finish_pass2(totals, image_size);
    }
}

/* Images of at most this many chunks a channel have their merits from
 * merits_cluster_kernel: a thread block cluster of one block per chunk (8
 * is the most blocks a portable cluster holds). */
constexpr int64_t cluster_merit_chunks = 8;

/* Threads of a block of merits_cluster_kernel. */
constexpr int cluster_merit_threads = 256;

/* The prediction's last step (spart_mart_finish_prediction, as
 * widths_kernel makes it), which merits_cluster_kernel can make on the
 * values it loads anyway: each predicted value clamped and its noise
 * width worked out, both written back, so that the merits need not wait
 * for a kernel of their own to do it. */
struct prediction_finish {
    bool finish; /* false: the images are finished, the widths given */
    double gain;
    double read_variance;
};

/* The helpers of merits_cluster_kernel exist where its body does (device
 * code for compute capability 9.0 and later): elsewhere nothing calls
 * them, which nvcc warns of. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

/* Values of a chunk a lane adds. */
constexpr int lane_values = SPART_MART_CHUNK / SPART_MART_LANES;

/* A lane's sum of values[lane], values[lane + 32], ... (those below
 * count), added in that order from 0.0, leaving out those whose width is
 * 0 when `widths` is not NULL; *added counts the values added. The loads
 * are all issued before the first addition. */
__device__ __forceinline__ double add_lane_values(const double *values, const double *widths,
                                                  int lane, int count, double *added)
{
    double value[lane_values];
    bool taken[lane_values];
#pragma unroll
    for (int j = 0; j < lane_values; j++) {
        const int p = lane + j * SPART_MART_LANES;
        value[j] = p < count ? values[p] : 0.0;
        taken[j] = p < count && (widths == nullptr || widths[p] != 0.0);
    }
    double sum = 0.0;
    double taken_count = 0.0;
#pragma unroll
    for (int j = 0; j < lane_values; j++) {
        if (taken[j]) {
            sum = sum + value[j];
            taken_count = taken_count + 1.0;
        }
    }
    *added = taken_count;
    return sum;
}

/* add_chunks for chunk sums held one a lane (lane k * SPART_MART_PASS_SUMS
 * + q holds chunk k's sum q; one warp, every lane calling): the same
 * additions in the same order, and every lane ends with the totals. */
__device__ __forceinline__ void add_lane_chunks(double value, int64_t chunks, int count,
                                                double *totals)
{
    for (int q = 0; q < count; q++) {
        totals[q] = 0.0;
    }
    for (int64_t k = 0; k < chunks; k++) {
        for (int q = 0; q < count; q++) {
            totals[q] =
                totals[q] + __shfl_sync(full_warp, value, (int)(k * SPART_MART_PASS_SUMS + q));
        }
    }
}

#endif /* __CUDA_ARCH__ >= 900 */

/* As merits_fused_kernel for images of at most cluster_merit_chunks chunks
 * a channel, on devices with thread block clusters (compute capability 9.0
 * and later): a cluster per channel, block k of the cluster taking chunk k.
 *
 * The fixed order binds only the additions: a lane adds its values in
 * order, one after the other. What is added (a residual, a quotient and
 * its square, a centred product) depends on one pixel alone, so the
 * block's 256 threads work those out first, a few pixels each, into
 * shared memory; then one warp a sum adds them in the lanes' order (the
 * same terms from the same operations, the same additions, so the same
 * bits as merit_chunk_pass1 and merit_chunk_pass2). The chunk's values
 * come into shared memory in one asynchronous copy.
 *
 * The chunk sums meet through the cluster's distributed shared memory.
 * Pass 1's stay in their own block, where, after a cluster barrier, every
 * block reads them all (a lane a value, one trip) and adds them in chunk
 * order (the same additions, so the same means in every block) for its
 * pass 2. Pass 2's go to block 0, which may be written once that barrier
 * has shown every block of the cluster started, and block 0 adds them
 * after a second barrier, which also keeps every block, whose pass-1 sums
 * the others read, running until they are done. */
__global__ void __launch_bounds__(cluster_merit_threads)
    merits_cluster_kernel(const double *observed, double *predicted, double *widths,
                          int64_t num_channel, int64_t image_size, int64_t chunks,
                          prediction_finish finish, double *results, const int *stop)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    /* the chunk's values; then, in place, the terms of each sum */
    __shared__ double chunk_observed[SPART_MART_CHUNK]; /* then residuals */
    __shared__ double chunk_predicted[SPART_MART_CHUNK];
    __shared__ double chunk_widths[SPART_MART_CHUNK];
    __shared__ double terms[SPART_MART_CHUNK];
    __shared__ double pass1_sums[SPART_MART_PASS_SUMS]; /* this chunk's */
    /* block 0's are the cluster's: chunk k's sums at k * SPART_MART_PASS_SUMS */
    __shared__ double pass2_sums[cluster_merit_chunks * SPART_MART_PASS_SUMS];
    __shared__ double means[2];
    cg::cluster_group cluster = cg::this_cluster();
    cg::thread_block block = cg::this_thread_block();
    const int64_t k = (int64_t)cluster.block_rank();
    const int64_t c = blockIdx.y;
    const int warp = (int)(threadIdx.x / SPART_MART_LANES);
    const int lane = (int)(threadIdx.x % SPART_MART_LANES);
    const int64_t start = k * SPART_MART_CHUNK;
    const int count =
        (int)((start + SPART_MART_CHUNK < image_size ? start + SPART_MART_CHUNK : image_size) -
              start);
    const size_t bytes = (size_t)count * sizeof(double);
    cg::memcpy_async(block, chunk_observed, observed + c * image_size + start, bytes);
    cg::memcpy_async(block, chunk_predicted, predicted + c * image_size + start, bytes);
    if (!finish.finish) {
        cg::memcpy_async(block, chunk_widths, widths + c * image_size + start, bytes);
    }
    /* the stop flag is read while the copies are under way */
    const bool stopped = run_stopped(stop);
    cg::wait(block);
    if (finish.finish) { /* whether or not the run has stopped, as widths_kernel does */
        for (int p = (int)threadIdx.x; p < count; p += cluster_merit_threads) {
            const double d = spart_mart_clamped(chunk_predicted[p]);
            const double w = spart_mart_width(d, finish.gain, finish.read_variance);
            chunk_predicted[p] = d;
            chunk_widths[p] = w;
            predicted[c * image_size + start + p] = d;
            widths[c * image_size + start + p] = w;
        }
    }
    if (stopped) {
        return; /* the whole cluster: before any cluster barrier */
    }
    /* pass 1's terms: residuals, and squared quotients where the width is
     * not 0 (the others are not added) */
    for (int p = (int)threadIdx.x; p < count; p += cluster_merit_threads) {
        const double residual = chunk_observed[p] - chunk_predicted[p];
        chunk_observed[p] = residual;
        if (chunk_widths[p] != 0.0) {
            const double z = residual / chunk_widths[p];
            terms[p] = z * z;
        }
    }
    __syncthreads();
    /* warp 0: the squares (where the width is not 0) and their count; 1:
     * predicted; 2: residuals */
    if (warp < 3) {
        double added = 0.0;
        const double sum =
            add_lane_values(warp == 0 ? terms : (warp == 1 ? chunk_predicted : chunk_observed),
                            warp == 0 ? chunk_widths : nullptr, lane, count, &added);
        const double chunk_sum = combine_lanes(sum);
        const double chunk_added = combine_lanes(added);
        if (lane == 0) {
            pass1_sums[warp == 0 ? 0 : warp + 1] = chunk_sum;
            if (warp == 0) {
                pass1_sums[1] = chunk_added;
            }
        }
    }
    cluster.sync();
    if (warp == 0) {
        const double value =
            lane < chunks * SPART_MART_PASS_SUMS
                ? *cluster.map_shared_rank(pass1_sums + lane % SPART_MART_PASS_SUMS,
                                           (unsigned)(lane / SPART_MART_PASS_SUMS))
                : 0.0;
        double totals[SPART_MART_PASS_SUMS];
        add_lane_chunks(value, chunks, SPART_MART_PASS_SUMS, totals);
        if (lane == 0) {
            double chi2;
            finish_pass1(totals, image_size, &chi2, &means[0], &means[1]);
            if (k == 0) {
                results[c] = chi2;
                results[2 * num_channel + 2 * c] = means[0];
                results[2 * num_channel + 2 * c + 1] = means[1];
            }
        }
    }
    __syncthreads();
    /* pass 2's terms, in place: the centred cross product in terms, the
     * squares in chunk_widths (predicted) and chunk_observed (residuals) */
    const double mean_predicted = means[0];
    const double mean_residual = means[1];
    for (int p = (int)threadIdx.x; p < count; p += cluster_merit_threads) {
        const double de = chunk_predicted[p] - mean_predicted;
        const double dr = chunk_observed[p] - mean_residual;
        terms[p] = de * dr;
        chunk_widths[p] = de * de;
        chunk_observed[p] = dr * dr;
    }
    __syncthreads();
    if (warp < 3) {
        double added = 0.0;
        const double centred = combine_lanes(
            add_lane_values(warp == 0 ? terms : (warp == 1 ? chunk_widths : chunk_observed),
                            nullptr, lane, count, &added));
        if (lane == 0) {
            cluster.map_shared_rank(pass2_sums, 0)[k * SPART_MART_PASS_SUMS + warp] = centred;
        }
    }
    cluster.sync();
    if (k == 0 && warp == 0) {
        const double value = lane < chunks * SPART_MART_PASS_SUMS && lane % SPART_MART_PASS_SUMS < 3
                                 ? pass2_sums[lane]
                                 : 0.0;
        double totals[3];
        add_lane_chunks(value, chunks, 3, totals);
        if (lane == 0) {
            results[num_channel + c] = finish_pass2(totals, image_size);
        }
    }
#else
    __trap(); /* launched only where the device and this build have clusters */
#endif
}

/* Whether merits_cluster_kernel can run on the current device: clusters
 * there, and this build's code of the kernel made for them. */
bool merits_clusters_available()
{
    int device = 0, clusters = 0;
    cudaFuncAttributes attributes;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device) != cudaSuccess ||
        cudaFuncGetAttributes(&attributes, merits_cluster_kernel) != cudaSuccess) {
        (void)cudaGetLastError(); /* not an error of the launch to come */
        return false;
    }
    return clusters != 0 && attributes.ptxVersion >= 90 && attributes.binaryVersion >= 90;
}

/* Whether the merits of these images go to merits_cluster_kernel. */
bool merits_by_cluster(int64_t chunks, int64_t num_channel)
{
    return chunks <= cluster_merit_chunks && num_channel <= 65535 && merits_clusters_available();
}

cudaError_t launch_merits_cluster(const double *observed, double *predicted, double *widths,
                                  int64_t num_channel, int64_t image_size, int64_t chunks,
                                  prediction_finish finish, double *results, const int *stop,
                                  cudaStream_t stream)
{
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = (unsigned)chunks;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)chunks, (unsigned)num_channel);
    config.blockDim = dim3(cluster_merit_threads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, merits_cluster_kernel, observed, predicted, widths,
                              num_channel, image_size, chunks, finish, results, stop);
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

/* The product over channels of voxel v's factors, its rows c * scene_size
 * + v summed by a group of g lanes ROWS channels at a time (as the product
 * sums them; kernels/csr_row_sum.cuh), in channel order from 1 in lane 0,
 * as spart_mart_correction's: the ratios (per_channel false; *single_power
 * says whether every ratio is in the single power's range,
 * spart_mart_single_power_ratio) or, in ctis's per-channel form, their
 * powers ratio^gamma (true). Lane 0 holds the result. */
template <typename Value, typename Column, int ROWS, int UNROLL>
__device__ __forceinline__ double
voxel_product(const spart_device_csr &matrix, const Column *__restrict__ columns,
              const Value *__restrict__ values, const double *__restrict__ images,
              const double *__restrict__ observed_back, const spart_rows::row_group &group,
              int64_t v, int64_t num_channel, int64_t scene_size, double gamma, bool per_channel,
              bool *single_power)
{
    const spart_rows::vector_layout single = {1, 0, 1, 0, 0};
    double product = 1.0;
    bool all_ratios = true;
    const double low = spart_mart_single_ratio_low(num_channel);
    const double high = spart_mart_single_ratio_high(num_channel);
    for (int64_t c0 = 0; c0 < num_channel; c0 += ROWS) {
        int64_t begin[ROWS], end[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            begin[r] = 0;
            end[r] = 0;
            if (c0 + r < num_channel) {
                const int64_t row = (c0 + r) * scene_size + v;
                begin[r] = matrix.row_ptr[row];
                end[r] = matrix.row_ptr[row + 1];
            }
        }
        double sum[ROWS][1];
        spart_rows::rows_sum<Value, Column, 1, ROWS, UNROLL>(columns, values, begin, end, group,
                                                             images, single, 0, 1, sum);
        if (group.lane == 0) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (c0 + r < num_channel) {
                    const double observed = observed_back[(c0 + r) * scene_size + v];
                    if (per_channel) {
                        product = product * spart_mart_ratio_power(observed, sum[r][0], gamma);
                    } else {
                        const double ratio = spart_mart_ratio(observed, sum[r][0]);
                        all_ratios =
                            all_ratios && spart_mart_single_power_ratio(ratio, low, high) != 0;
                        product = product * ratio;
                    }
                }
            }
        }
    }
    *single_power = all_ratios;
    return product;
}

/* scene[v] *= its correction (spart_mart_correction) from the rows
 * c * scene_size + v of the backprojection and observed_back. One voxel
 * per group, grid-stride. The product of the ratios first; where a ratio
 * is outside the single power's range the group sums the voxel's rows
 * again for the per-channel form (the same sums, so the same bits), as it
 * does for every voxel when spart_mart_per_channel_form says. Both passes
 * go through one call of voxel_product: two inlined copies of the rows'
 * sums made the kernel 19 % slower on the H200 (75.7 -> 90 us at
 * 256 x 256), though the second copy almost never runs. */
template <typename Value, typename Column, int ROWS, int UNROLL>
__global__ void __launch_bounds__(threads_per_block)
    backproject_update_kernel(spart_device_csr matrix, const Column *__restrict__ columns,
                              const Value *__restrict__ values, const double *__restrict__ images,
                              const double *__restrict__ observed_back, double *__restrict__ scene,
                              int64_t num_channel, int64_t scene_size, double gamma,
                              double inverse_channels, const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    const spart_rows::row_group group = spart_rows::group_of_thread(matrix.group_size);
    const bool per_channel_form = spart_mart_per_channel_form(gamma, inverse_channels) != 0;
    const double exponent = spart_mart_voxel_exponent(gamma, inverse_channels);
    const int64_t groups_per_block = blockDim.x / matrix.group_size;
    const int64_t first = (int64_t)blockIdx.x * groups_per_block + threadIdx.x / group.size;
    const int64_t stride = (int64_t)gridDim.x * groups_per_block;
    for (int64_t v = first; v < scene_size; v += stride) {
        bool per_channel = per_channel_form;
        double product = 1.0;
        for (;;) {
            bool single_power = false;
            product = voxel_product<Value, Column, ROWS, UNROLL>(
                matrix, columns, values, images, observed_back, group, v, num_channel, scene_size,
                gamma, per_channel, &single_power);
            /* lane 0 knows; the whole group sums the rows again or not */
            single_power = __shfl_sync(group.mask, single_power ? 1 : 0, 0, group.size) != 0;
            if (per_channel || single_power) {
                break;
            }
            per_channel = true;
        }
        if (group.lane == 0) {
            scene[v] =
                scene[v] * spart_mart_pow(product, per_channel ? inverse_channels : exponent);
        }
    }
}

/* Where the backprojection's row c * scene_size + v lies, from its row
 * pointers. */
struct pointer_rows {
    const int64_t *__restrict__ row_ptr;
    int64_t scene_size;

    __device__ __forceinline__ void range(int64_t c, int64_t v, int64_t *begin, int64_t *end) const
    {
        const int64_t row = c * scene_size + v;
        *begin = row_ptr[row];
        *end = row_ptr[row + 1];
    }
};

/* The same from the short-row index, for the voxels of one block of
 * SPART_DEVICE_SHORT_ROW_BLOCK (first_voxel, first_voxel + 1, ...): each
 * channel's row starts within its index block, scanned into shared memory
 * (starts[c * (block + 1) + local]), and the block's first entry
 * (block_starts[c]). */
struct indexed_rows {
    const int *starts;
    const int64_t *block_starts;
    int64_t first_voxel;

    __device__ __forceinline__ void range(int64_t c, int64_t v, int64_t *begin, int64_t *end) const
    {
        const int *channel = starts + c * (SPART_DEVICE_SHORT_ROW_BLOCK + 1);
        const int local = (int)(v - first_voxel);
        *begin = block_starts[c] + channel[local];
        *end = block_starts[c] + channel[local + 1];
    }
};

/* voxel_product (above) with the loads held together, for the kernel of
 * a thread a voxel (group size 1): lane 0 holds the result, and *state
 * the voxel's value scene[v].
 *
 * Once a batch of rows is summed, lane 0 loads the batch's observed
 * backprojections (and, with the first batch, scene[v]) together, before
 * any ratio: loaded where each ratio needs it, under the ratio's test for
 * a positive prediction, each waited for its own trip to memory, four
 * trips and a fifth for the state where one does (measured on an H200,
 * Nsight Compute: a quarter of the kernel's stalls at 256 x 256). */
template <typename Value, typename Column, int ROWS, int UNROLL, typename Rows>
__device__ __forceinline__ double
voxel_product_held(const Rows &rows, const Column *__restrict__ columns,
                   const Value *__restrict__ values, const double *__restrict__ images,
                   const double *__restrict__ observed_back, const double *__restrict__ scene,
                   const spart_rows::row_group &group, int64_t v, int64_t num_channel,
                   int64_t scene_size, double gamma, bool per_channel, bool *single_power,
                   double *state)
{
    const spart_rows::vector_layout single = {1, 0, 1, 0, 0};
    double product = 1.0;
    bool all_ratios = true;
    const double low = spart_mart_single_ratio_low(num_channel);
    const double high = spart_mart_single_ratio_high(num_channel);
    for (int64_t c0 = 0; c0 < num_channel; c0 += ROWS) {
        int64_t begin[ROWS], end[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            begin[r] = 0;
            end[r] = 0;
            if (c0 + r < num_channel) {
                rows.range(c0 + r, v, &begin[r], &end[r]);
            }
        }
        double sum[ROWS][1];
        spart_rows::rows_sum<Value, Column, 1, ROWS, UNROLL>(columns, values, begin, end, group,
                                                             images, single, 0, 1, sum);
        if (group.lane == 0) {
            double observed[ROWS];
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int64_t c = c0 + r < num_channel ? c0 + r : c0;
                observed[r] = observed_back[c * scene_size + v];
            }
            if (c0 == 0) {
                *state = scene[v];
            }
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (c0 + r < num_channel) {
                    if (per_channel) {
                        product = product * spart_mart_ratio_power(observed[r], sum[r][0], gamma);
                    } else {
                        const double ratio = spart_mart_ratio(observed[r], sum[r][0]);
                        all_ratios =
                            all_ratios && spart_mart_single_power_ratio(ratio, low, high) != 0;
                        product = product * ratio;
                    }
                }
            }
        }
    }
    *single_power = all_ratios;
    return product;
}

/* voxel_product_held in ctis's per-channel form, out of line: the rare pass (a
 * ratio outside the single power's range, or every voxel where
 * spart_mart_per_channel_form says) then costs the common pass no
 * registers. Inlined twice, the rows' sums made the kernel 19 % slower on
 * the H200 (75.7 -> 90 us at 256 x 256); in one loop of two passes through
 * one inlined call, the powers of the per-channel form held registers in
 * the common pass (48 registers either way, but 76.1 against 73.8 us). */
template <typename Value, typename Column, int ROWS, int UNROLL, typename Rows>
__device__ __noinline__ double voxel_product_held_per_channel(
    const Rows rows, const Column *__restrict__ columns, const Value *__restrict__ values,
    const double *__restrict__ images, const double *__restrict__ observed_back,
    const double *__restrict__ scene, spart_rows::row_group group, int64_t v, int64_t num_channel,
    int64_t scene_size, double gamma, double *state)
{
    bool ignored = false;
    return voxel_product_held<Value, Column, ROWS, UNROLL>(
        rows, columns, values, images, observed_back, scene, group, v, num_channel, scene_size,
        gamma, true, &ignored, state);
}

/* Voxel v's update by its group (lane 0 writes scene[v]): the product of
 * its ratios, and where one lies outside the single power's range (or
 * per_channel_form says) ctis's per-channel form, then the power. */
template <typename Value, typename Column, int ROWS, int UNROLL, int G, typename Rows>
__device__ __forceinline__ void
update_voxel(const Rows &rows, const Column *__restrict__ columns, const Value *__restrict__ values,
             const double *__restrict__ images, const double *__restrict__ observed_back,
             double *__restrict__ scene, const spart_rows::row_group &group, int64_t v,
             int64_t num_channel, int64_t scene_size, double gamma, double inverse_channels,
             bool per_channel_form, double exponent)
{
    bool per_channel = per_channel_form;
    double product = 1.0;
    double state = 0.0;
    if (!per_channel) {
        bool single_power = false;
        product = voxel_product_held<Value, Column, ROWS, UNROLL>(
            rows, columns, values, images, observed_back, scene, group, v, num_channel, scene_size,
            gamma, false, &single_power, &state);
        if (G != 1) { /* lane 0 knows; the whole group sums the rows again or not */
            single_power = __shfl_sync(group.mask, single_power ? 1 : 0, 0, group.size) != 0;
        }
        per_channel = !single_power;
    }
    if (per_channel) {
        product = voxel_product_held_per_channel<Value, Column, ROWS, UNROLL>(
            rows, columns, values, images, observed_back, scene, group, v, num_channel, scene_size,
            gamma, &state);
    }
    if (group.lane == 0) {
        scene[v] = state * spart_mart_pow(product, per_channel ? inverse_channels : exponent);
    }
}

/* backproject_update_kernel (above) for matrices of group size G = 1
 * (MART's backprojection at 256 x 256: 1.43 entries a row), a thread a
 * voxel: the group's arithmetic and shuffles go away, the loads of observed
 * and state are held together (voxel_product_held), and the per-channel
 * pass is out of line. H200, 256 x 256: 82 -> 71 us in a graph. For group
 * size 2 (the tutorial's backprojection, 3.24 entries a row) the held
 * loads took 64 registers, so its 640 blocks no longer fit one wave: 8.5
 * -> 10.3 us; that size keeps the kernel above. */
template <typename Value, typename Column, int ROWS, int UNROLL, int G>
__global__ void __launch_bounds__(threads_per_block)
    backproject_update_held_kernel(spart_device_csr matrix, const Column *__restrict__ columns,
                                   const Value *__restrict__ values,
                                   const double *__restrict__ images,
                                   const double *__restrict__ observed_back,
                                   double *__restrict__ scene, int64_t num_channel,
                                   int64_t scene_size, double gamma, double inverse_channels,
                                   const int *stop)
{
    if (run_stopped(stop)) {
        return;
    }
    const spart_rows::row_group group = spart_rows::group_of_thread(G > 0 ? G : matrix.group_size);
    const bool per_channel_form = spart_mart_per_channel_form(gamma, inverse_channels) != 0;
    const double exponent = spart_mart_voxel_exponent(gamma, inverse_channels);
    const int64_t groups_per_block = threads_per_block / group.size;
    const int64_t first = (int64_t)blockIdx.x * groups_per_block + threadIdx.x / group.size;
    const int64_t stride = (int64_t)gridDim.x * groups_per_block;
    const pointer_rows rows = {matrix.row_ptr, scene_size};
    for (int64_t v = first; v < scene_size; v += stride) {
        update_voxel<Value, Column, ROWS, UNROLL, G>(
            rows, columns, values, images, observed_back, scene, group, v, num_channel, scene_size,
            gamma, inverse_channels, per_channel_form, exponent);
    }
}

/* The most channels backproject_update_indexed_kernel takes (the starts
 * of each channel's rows in a block are held in shared memory). */
constexpr int indexed_update_channels = 4;

/* Its blocks a multiprocessor (a launch bound: at most 64 registers a
 * thread, as the held kernel takes; without it ptxas took up to 80, which
 * left room for 3 blocks). */
constexpr int indexed_update_min_blocks = 4;

/* backproject_update_held_kernel for group size 1 through the matrix's
 * short-row index (spart_device_short_rows), for scenes whose size is a
 * multiple of SPART_DEVICE_SHORT_ROW_BLOCK (256, the threads of a block)
 * and at most indexed_update_channels channels: the rows of one block of
 * 256 voxels then make one index block in each channel. A thread block
 * takes such a block of voxels: warp c reads channel c's row lengths (8
 * bytes a lane) and first entry and scans them into row starts in shared
 * memory (as product_indexed_rows does), and then each thread updates its
 * voxel as the held kernel does. The index takes 1 byte a row where the
 * row pointers take 8: at 256 x 256 with four channels, 42 of the
 * update's 195 MB. The same sums, ratios and powers as the held kernel,
 * so the same bits. (A warp a block of voxels, its 8 rounds of 32 voxels
 * one after the other, took 104 us at 256 x 256 on an H200 against the
 * held kernel's 71: each round waited for its own loads.) */
template <typename Value, typename Column>
__global__ void __launch_bounds__(threads_per_block, indexed_update_min_blocks)
    backproject_update_indexed_kernel(
        spart_device_short_rows index, const Column *__restrict__ columns,
        const Value *__restrict__ values, const double *__restrict__ images,
        const double *__restrict__ observed_back, double *__restrict__ scene, int64_t num_channel,
        int64_t scene_size, double gamma, double inverse_channels, const int *stop)
{
    constexpr int block = SPART_DEVICE_SHORT_ROW_BLOCK;
    static_assert(block == threads_per_block, "a thread a voxel of the index block");
    __shared__ int starts[indexed_update_channels * (block + 1)];
    __shared__ int64_t block_starts[indexed_update_channels];
    if (run_stopped(stop)) {
        return;
    }
    const spart_rows::row_group group = spart_rows::group_of_thread(1);
    const bool per_channel_form = spart_mart_per_channel_form(gamma, inverse_channels) != 0;
    const double exponent = spart_mart_voxel_exponent(gamma, inverse_channels);
    const int lane = (int)(threadIdx.x & 31u);
    const int warp = (int)(threadIdx.x / 32);
    const int64_t blocks_per_channel = scene_size / block;
    const uint64_t *words = reinterpret_cast<const uint64_t *>(index.row_lengths);
    for (int64_t b = blockIdx.x; b < blocks_per_channel; b += gridDim.x) {
        if (warp < num_channel) {
            const int64_t index_block = warp * blocks_per_channel + b;
            const uint64_t word = words[index_block * (block / 8) + lane];
            if (lane == 0) {
                block_starts[warp] = index.block_starts[index_block];
            }
            spart_rows::scan_short_row_starts(word, lane, starts + warp * (block + 1));
        }
        __syncthreads();
        const indexed_rows rows = {starts, block_starts, b * block};
        update_voxel<Value, Column, 4, 2, 1>(
            rows, columns, values, images, observed_back, scene, group, b * block + threadIdx.x,
            num_channel, scene_size, gamma, inverse_channels, per_channel_form, exponent);
        __syncthreads(); /* the starts are read before the next block's overwrite them */
    }
}

/* The launch for one value and column type, with the row shape of the
 * products (kernels/csr_product.cu): several channels a group for short
 * rows, one channel and more entries a round for long ones; a thread a
 * voxel for rows of g = 1. */
template <typename Value, typename Column>
cudaError_t launch_backproject_update(const spart_device_csr &matrix, const Column *columns,
                                      const Value *values, const double *images,
                                      const double *observed_back, double *scene,
                                      int64_t num_channel, int64_t scene_size, double gamma,
                                      const spart_device_short_rows *index, const int *stop,
                                      cudaStream_t stream)
{
    const double inverse_channels = 1.0 / (double)num_channel;
    const int64_t groups_per_block = threads_per_block / matrix.group_size;
    int64_t blocks = (scene_size + groups_per_block - 1) / groups_per_block;
    blocks = blocks < 65535 * 16 ? blocks : 65535 * 16;
    if (matrix.group_size == 1 && index != nullptr && num_channel <= indexed_update_channels &&
        scene_size % SPART_DEVICE_SHORT_ROW_BLOCK == 0) {
        int64_t voxel_blocks = scene_size / SPART_DEVICE_SHORT_ROW_BLOCK;
        voxel_blocks = voxel_blocks < 65535 * 16 ? voxel_blocks : 65535 * 16;
        backproject_update_indexed_kernel<Value, Column>
            <<<(unsigned)voxel_blocks, threads_per_block, 0, stream>>>(
                *index, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop);
    } else if (matrix.group_size == 1) {
        backproject_update_held_kernel<Value, Column, 4, 2, 1>
            <<<(unsigned)blocks, threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop);
    } else if (matrix.group_size < 16) {
        backproject_update_kernel<Value, Column, 4, 2>
            <<<(unsigned)blocks, threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop);
    } else if (matrix.group_size == 16) {
        backproject_update_kernel<Value, Column, 2, 4>
            <<<(unsigned)blocks, threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop);
    } else {
        backproject_update_kernel<Value, Column, 1, 8>
            <<<(unsigned)blocks, threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop);
    }
    return cudaGetLastError();
}

/* The end of one iteration of a batched run (one thread): unless the run
 * has stopped, its merits to `history_row`, the iteration counted, and the
 * rule checked as the driver's rule_stops checks it on the host: the mean
 * merit summed in channel order from 0.0 and divided, then the same
 * comparison, so that both stop at the same iteration. */
__global__ void decide_kernel(spart_mart_device_rule rule, const double *merits,
                              double *history_row, spart_mart_device_state *state)
{
    if (state->stopped != SPART_MART_DEVICE_RUNNING) {
        return;
    }
    const int64_t channels = rule.num_channel;
    double sum = 0.0;
    for (int64_t c = 0; c < channels; c++) {
        history_row[c] = merits[c];
        history_row[channels + c] = merits[channels + c];
        sum = sum + merits[c];
    }
    const double merit = sum / (double)channels;
    const bool below_threshold =
        rule.stop_below_threshold && state->merit_previous - merit < rule.threshold;
    const bool at_target = rule.stop_at_target && merit <= rule.target;
    state->iterations = state->iterations + 1;
    if (below_threshold || at_target) {
        state->stopped = SPART_MART_DEVICE_STOPPED_BY_RULE;
    } else {
        state->merit_previous = merit;
        if (state->iterations >= rule.max_iterations) {
            state->stopped = SPART_MART_DEVICE_OUT_OF_ITERATIONS;
        }
    }
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

extern "C" int spart_cuda_mart_backproject_update(const spart_device_csr *matrix,
                                                  const double *images, const double *observed_back,
                                                  double *scene, int64_t num_channel,
                                                  int64_t scene_size, double gamma,
                                                  const spart_device_short_rows *index,
                                                  const int *stop, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (scene_size <= 0 || num_channel <= 0) {
        return cudaSuccess;
    }
    const spart_device_csr &m = *matrix;
    if (m.values64 != nullptr && m.columns32 != nullptr) {
        return (int)launch_backproject_update<double, int32_t>(m, m.columns32, m.values64, images,
                                                               observed_back, scene, num_channel,
                                                               scene_size, gamma, index, stop, s);
    }
    if (m.values64 != nullptr) {
        return (int)launch_backproject_update<double, int64_t>(m, m.columns64, m.values64, images,
                                                               observed_back, scene, num_channel,
                                                               scene_size, gamma, index, stop, s);
    }
    if (m.columns32 != nullptr) {
        return (int)launch_backproject_update<float, int32_t>(m, m.columns32, m.values32, images,
                                                              observed_back, scene, num_channel,
                                                              scene_size, gamma, index, stop, s);
    }
    return (int)launch_backproject_update<float, int64_t>(m, m.columns64, m.values32, images,
                                                          observed_back, scene, num_channel,
                                                          scene_size, gamma, index, stop, s);
}

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
                                        void *workspace, const int *stop, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t chunks = spart_mart_num_chunks(image_size);
    double *results = (double *)workspace; /* 4 C: chi2, r, means */
    double *partial = results + 4 * num_channel;
    if (merits_by_cluster(chunks, num_channel)) {
        const prediction_finish given = {false, 0.0, 0.0}; /* nothing written to the images */
        cudaError_t error = launch_merits_cluster(observed, const_cast<double *>(predicted),
                                                  const_cast<double *>(widths), num_channel,
                                                  image_size, chunks, given, results, stop, s);
        if (error != cudaSuccess) {
            return (int)error;
        }
    } else if (chunks <= fused_merit_chunks) {
        int64_t warps = chunks < 32 ? chunks : 32;
        size_t shared = (size_t)(chunks * SPART_MART_PASS_SUMS + 2) * sizeof(double);
        merits_fused_kernel<<<(unsigned)num_channel, (unsigned)(warps * SPART_MART_LANES), shared,
                              s>>>(observed, predicted, widths, num_channel, image_size, chunks,
                                   results, stop);
    } else {
        dim3 grid((unsigned)chunks, (unsigned)num_channel);
        merits_pass1_kernel<<<grid, SPART_MART_LANES, 0, s>>>(observed, predicted, widths,
                                                              image_size, chunks, partial, stop);
        merits_finish1_kernel<<<1, 256, 0, s>>>(partial, num_channel, image_size, chunks, results,
                                                stop);
        merits_pass2_kernel<<<grid, SPART_MART_LANES, 0, s>>>(
            observed, predicted, image_size, num_channel, chunks, results, partial, stop);
        merits_finish2_kernel<<<1, 256, 0, s>>>(partial, num_channel, image_size, chunks, results,
                                                stop);
    }
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

extern "C" int spart_mart_device_finish_and_merits(const double *observed, double *images,
                                                   double *widths, int64_t num_channel,
                                                   int64_t image_size, double gain,
                                                   double read_variance, void *workspace,
                                                   const int *stop, void *stream)
{
    int64_t chunks = spart_mart_num_chunks(image_size);
    if (merits_by_cluster(chunks, num_channel)) {
        const prediction_finish finish = {true, gain, read_variance};
        return (int)launch_merits_cluster(observed, images, widths, num_channel, image_size, chunks,
                                          finish, (double *)workspace, stop, (cudaStream_t)stream);
    }
    int error = spart_mart_device_noise_widths(images, widths, num_channel * image_size, gain,
                                               read_variance, stream);
    if (error != 0) {
        return error;
    }
    return spart_mart_device_merits(observed, images, widths, num_channel, image_size, NULL, NULL,
                                    workspace, stop, stream);
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
