/*
 * kernels/mart_merits.cu: the merits of the MART iteration on a CUDA
 * device (chi2 and the correlation of the residuals a channel), twin of
 * host/mart_steps.c's: the same per-element functions (the shared
 * src/mart/mart_math.h, built with --fmad=false) and the same order of the
 * sums (src/mart/mart_steps.h): one warp per chunk of SPART_MART_CHUNK
 * (1024) values, lane l adding values l, l + 32, ... from 0.0, the lanes
 * combined by __shfl_down_sync (lane l += lane l + h, h = 16..1, exactly
 * the host's pairs; kernels/mart_steps.cuh), then one thread per channel
 * adding the chunk sums in chunk order. No atomics; everything on the
 * caller's stream.
 *
 * Three ways to the same bits, by the images' size:
 *   - four launches that spread the chunks over the whole device;
 *   - images of at most fused_merit_chunks chunks a channel in one launch
 *     (one block per channel: its warps share the chunks, and the block's
 *     barriers order the two passes);
 *   - up to 8 chunks, where the device has thread block clusters, a
 *     cluster per channel of a block per chunk, the chunk sums meeting in
 *     the cluster's shared memory (merits_cluster_kernel), which can also
 *     finish the prediction (clamp, noise widths) on the values it loads.
 *
 * In batched runs the kernels take the run's stop flag (or NULL) and
 * return at once once it is set.
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
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

using spart_mart_steps::combine_lanes;
using spart_mart_steps::full_warp;
using spart_mart_steps::run_stopped;

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
    /* channel c by warp c (the block): add_chunks's order, the loads side by side */
    const int64_t c = blockIdx.x;
    double totals[SPART_MART_PASS_SUMS];
    spart_mart_steps::ordered_warp_sums<SPART_MART_PASS_SUMS>(
        partial + c * chunks * SPART_MART_PASS_SUMS, chunks, SPART_MART_PASS_SUMS, totals);
    if (threadIdx.x == 0) {
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
    const int64_t c = blockIdx.x;
    double totals[3];
    spart_mart_steps::ordered_warp_sums<3>(partial + c * chunks * SPART_MART_PASS_SUMS, chunks,
                                           SPART_MART_PASS_SUMS, totals);
    if (threadIdx.x == 0) {
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

} /* namespace */

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
        merits_finish1_kernel<<<(unsigned)num_channel, SPART_MART_LANES, 0, s>>>(
            partial, num_channel, image_size, chunks, results, stop);
        merits_pass2_kernel<<<grid, SPART_MART_LANES, 0, s>>>(
            observed, predicted, image_size, num_channel, chunks, results, partial, stop);
        merits_finish2_kernel<<<(unsigned)num_channel, SPART_MART_LANES, 0, s>>>(
            partial, num_channel, image_size, chunks, results, stop);
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
