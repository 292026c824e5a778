/*
 * kernels/mart_steps.cuh: the launch shape and the warp sum shared by the
 * kernels of the MART steps (kernels/mart_steps.cu, kernels/mart_merits.cu,
 * kernels/mart_backproject_update.cu): blocks of 256 threads, the lanes of
 * a warp combined in the host's pairs (lane l += lane l + h, h = 16..1),
 * the decision of a frame's iteration, and the stop flag of a batched run. Kept in one place so
 * that the three files add in the same order.
 */
#ifndef SPART_MART_STEPS_CUH
#define SPART_MART_STEPS_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "mart/mart_steps.h"

namespace spart_mart_steps
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

/* The flat guess's sum of chunk k (voxels k * SPART_MART_CHUNK ...) of
 * one frame's backprojection (num_channel x scene_size): each voxel's
 * channels summed in channel order and divided by num_channel, the voxels
 * of a lane added in order, the lanes combined; lane 0 holds the total.
 * The one-frame flat guess (kernels/mart_steps.cu) and that of many
 * (kernels/mart_frames.cu). */
__device__ __forceinline__ double flat_chunk(const double *backprojected, int64_t num_channel,
                                             int64_t scene_size, int64_t k, int lane)
{
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
    return combine_lanes(lane_sum);
}

/* Count running sums of values[k * stride + q] (q < Count) over k = 0 ...
 * n - 1, each added in k order from 0.0 (totals[q] = totals[q] + value), as
 * one thread's loop adds them, by one whole warp: the lanes load 32 k at a
 * time side by side, and every lane adds them in k order from the
 * shuffles, so all lanes end with the one-thread loop's bits. The loads
 * no longer wait one behind the other (a thread's loop paid a load's
 * latency a value: 2 ms for the 30 000 chunk sums of a flat guess at 1/7
 * of ESIS); what is left in series is the additions. */
template <int Count>
__device__ __forceinline__ void ordered_warp_sums(const double *values, int64_t n, int64_t stride,
                                                  double (&totals)[Count])
{
    const int lane = (int)(threadIdx.x % 32);
    for (int q = 0; q < Count; q++) {
        totals[q] = 0.0;
    }
    for (int64_t base = 0; base < n; base += 32) {
        const int64_t k = base + lane;
        double v[Count];
        for (int q = 0; q < Count; q++) {
            v[q] = k < n ? values[k * stride + q] : 0.0;
        }
        if (n - base >= 32) {
#pragma unroll
            for (int j = 0; j < 32; j++) {
                for (int q = 0; q < Count; q++) {
                    totals[q] = totals[q] + __shfl_sync(full_warp, v[q], j);
                }
            }
        } else {
            const int m = (int)(n - base);
            for (int j = 0; j < m; j++) {
                for (int q = 0; q < Count; q++) {
                    totals[q] = totals[q] + __shfl_sync(full_warp, v[q], j);
                }
            }
        }
    }
}

/* The flat guess's mean: the chunks' sums added in chunk order from 0.0,
 * over the scene's size (a whole warp calls it; every lane gets it). */
__device__ __forceinline__ double flat_mean(const double *partial, int64_t chunks,
                                            int64_t scene_size)
{
    double total[1];
    ordered_warp_sums<1>(partial, chunks, 1, total);
    return total[0] / (double)scene_size;
}

/* The end of one iteration of a running frame (one thread): its merits
 * (chi2 and r, num_channel each) to `row` (chi2 then r), the iteration
 * counted, and the rule checked as the driver's rule_stops checks it on the
 * host: the mean merit summed in channel order from 0.0 and divided, then
 * the same comparison, so that both stop at the same iteration. The
 * decision of one frame (kernels/mart_steps.cu) and of many
 * (kernels/mart_frames.cu); host/mart_frames.c is its twin. */
__device__ __forceinline__ void decide_frame(const spart_mart_device_rule &rule, const double *chi2,
                                             const double *r, double *row,
                                             spart_mart_device_state *state)
{
    const int64_t channels = rule.num_channel;
    double sum = 0.0;
    for (int64_t c = 0; c < channels; c++) {
        row[c] = chi2[c];
        row[channels + c] = r[c];
        sum = sum + chi2[c];
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

/* Whether a batched MART run has stopped (`stop` is its flag in device
 * memory, or NULL outside such a run): the steps that would change the
 * state or the merits then return at once. The flag changes only between
 * kernels (spart_mart_device_decide), so every thread of a launch reads
 * the same value and a block returns as a whole. */
__device__ __forceinline__ bool run_stopped(const int *stop)
{
    return stop != nullptr && *stop != SPART_MART_DEVICE_RUNNING;
}

/* Blocks of threads_per_block for n items, a thread each, at most
 * 65535 * 16 (the kernels stride over the rest). */
inline int64_t blocks_for(int64_t n)
{
    int64_t blocks = (n + threads_per_block - 1) / threads_per_block;
    return blocks < 1 ? 1 : (blocks > 65535 * 16 ? 65535 * 16 : blocks);
}

} // namespace spart_mart_steps

#endif /* SPART_MART_STEPS_CUH */
