/*
 * kernels/mart_backproject_update.cu: the MART update from the predicted
 * images in one pass on a CUDA device (spart_cuda_mart_backproject_update):
 * the backprojection of the predicted images and the update fused, each
 * voxel's rows summed as the product sums them (kernels/csr_row_sum.cuh),
 * then its correction (the shared src/mart/mart_math.h, built with
 * --fmad=false), so that the backprojection never goes to memory. The same
 * bits as the backprojection followed by spart_mart_device_update
 * (kernels/mart_steps.cu). In batched runs the kernels take the run's stop
 * flag (or NULL) and return at once once it is set.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "csr_row_sum.cuh"
#include "device/device_internal.h"
#include "mart/mart_math.h"
#include "mart/mart_steps.h"
#include "mart_steps.cuh"
#include "operator/csr_product_designs.h"

namespace
{

using spart_mart_steps::run_stopped;

/* Many frames in one launch (spart_mart_update_from_images_frames): frame
 * blockIdx.y's arrays lie these many values (stop: ints) after frame 0's;
 * with one frame gridDim.y is 1 and every offset 0, so a frame's
 * operations are those of a launch for it alone. */
struct frame_strides {
    int64_t images, observed_back, scene, stop;
};

/* Move the pointers to frame blockIdx.y. */
__device__ __forceinline__ void to_frame(const frame_strides &strides,
                                         const double *__restrict__ &images,
                                         const double *__restrict__ &observed_back,
                                         double *__restrict__ &scene, const int *&stop)
{
    const int64_t f = blockIdx.y;
    images += f * strides.images;
    observed_back += f * strides.observed_back;
    scene += f * strides.scene;
    if (stop != nullptr) {
        stop += f * strides.stop;
    }
}
using spart_mart_steps::threads_per_block;

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
                              double inverse_channels, const int *stop, frame_strides strides)
{
    to_frame(strides, images, observed_back, scene, stop);
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
                                   const int *stop, frame_strides strides)
{
    to_frame(strides, images, observed_back, scene, stop);
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
    backproject_update_indexed_kernel(spart_device_short_rows index,
                                      const Column *__restrict__ columns,
                                      const Value *__restrict__ values,
                                      const double *__restrict__ images,
                                      const double *__restrict__ observed_back,
                                      double *__restrict__ scene, int64_t num_channel,
                                      int64_t scene_size, double gamma, double inverse_channels,
                                      const int *stop, frame_strides strides)
{
    constexpr int block = SPART_DEVICE_SHORT_ROW_BLOCK;
    static_assert(block == threads_per_block, "a thread a voxel of the index block");
    __shared__ int starts[indexed_update_channels * (block + 1)];
    __shared__ int64_t block_starts[indexed_update_channels];
    to_frame(strides, images, observed_back, scene, stop);
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
cudaError_t
launch_backproject_update(const spart_device_csr &matrix, const Column *columns,
                          const Value *values, const double *images, const double *observed_back,
                          double *scene, int64_t num_channel, int64_t scene_size, double gamma,
                          const spart_device_short_rows *index, const int *stop, int64_t num_frames,
                          frame_strides strides, cudaStream_t stream)
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
            <<<dim3((unsigned)voxel_blocks, (unsigned)num_frames), threads_per_block, 0, stream>>>(
                *index, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop, strides);
    } else if (matrix.group_size == 1) {
        backproject_update_held_kernel<Value, Column, 4, 2, 1>
            <<<dim3((unsigned)blocks, (unsigned)num_frames), threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop, strides);
    } else if (matrix.group_size < 16) {
        backproject_update_kernel<Value, Column, 4, 2>
            <<<dim3((unsigned)blocks, (unsigned)num_frames), threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop, strides);
    } else if (matrix.group_size == 16) {
        backproject_update_kernel<Value, Column, 2, 4>
            <<<dim3((unsigned)blocks, (unsigned)num_frames), threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop, strides);
    } else {
        backproject_update_kernel<Value, Column, 1, 8>
            <<<dim3((unsigned)blocks, (unsigned)num_frames), threads_per_block, 0, stream>>>(
                matrix, columns, values, images, observed_back, scene, num_channel, scene_size,
                gamma, inverse_channels, stop, strides);
    }
    return cudaGetLastError();
}

/* ---- many frames a pass: the backward matrix read once for FRAMES frames ---- */

/* Frames a group takes at once in backproject_update_batch_kernel. */
constexpr int batch_frames = 4;

/* The products over channels of voxel v's factors for frames t0 .. t0 +
 * width - 1 (width <= FRAMES), as voxel_product_held makes each frame's
 * alone: its rows c * scene_size + v summed by the group for all the
 * frames at once (kernels/csr_row_sum.cuh with a tile of FRAMES vectors:
 * each frame's sum in the one-vector order), then, in lane 0, frame j's
 * ratios in channel order from 1 (per_channel[j] false; single[j] says
 * whether every ratio is in the single power's range) or their powers
 * (true). Frames whose `active` bit is clear are summed (the group walks
 * the rows together) but their factors are not formed. state[j] gets
 * scene[v] of frame j. */
template <typename Value, typename Column, int FRAMES, int ROWS, int UNROLL, bool X4>
__device__ __forceinline__ void
voxel_products_batch(const spart_device_csr &matrix, const Column *__restrict__ columns,
                     const Value *__restrict__ values, const double *__restrict__ images,
                     const double *__restrict__ observed_back, const double *__restrict__ scene,
                     const frame_strides &strides, const spart_rows::row_group &group, int64_t v,
                     int64_t t0, int width, int64_t num_channel, int64_t scene_size, double gamma,
                     unsigned active, const bool (&per_channel)[FRAMES], double (&product)[FRAMES],
                     bool (&single)[FRAMES], double (&state)[FRAMES])
{
    /* frame t0 + j of images at (t0 + j) * strides.images */
    /* frame t0 + j of images at (t0 + j) * strides.images or, X4, the
     * tile of frames t0 .. t0 + 3 at t0 * strides.images, a column's 4
     * values together (spart_cuda_pack_x4) */
    const spart_rows::vector_layout frames =
        X4 ? spart_rows::vector_layout{4, 1, 1, 0, strides.images}
           : spart_rows::vector_layout{1, strides.images, 1, 0, strides.images};
    const double low = spart_mart_single_ratio_low(num_channel);
    const double high = spart_mart_single_ratio_high(num_channel);
#pragma unroll
    for (int j = 0; j < FRAMES; j++) {
        product[j] = 1.0;
        single[j] = true;
    }
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
        double sum[ROWS][FRAMES];
        spart_rows::rows_sum<Value, Column, FRAMES, ROWS, UNROLL, X4>(
            columns, values, begin, end, group, images, frames, t0, width, sum);
        if (group.lane != 0) {
            continue;
        }
        /* every frame's observed backprojections (and with the first
         * channels its state) loaded together before any ratio, as
         * voxel_product_held does: loaded frame by frame under the
         * frame's test, each frame waited for its own trip */
        double observed[ROWS][FRAMES];
#pragma unroll
        for (int j = 0; j < FRAMES; j++) {
            const int64_t f = t0 + (j < width ? j : 0);
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int64_t c = c0 + r < num_channel ? c0 + r : c0;
                observed[r][j] = observed_back[f * strides.observed_back + c * scene_size + v];
            }
            if (c0 == 0) {
                state[j] = scene[f * strides.scene + v];
            }
        }
#pragma unroll
        for (int j = 0; j < FRAMES; j++) {
            if (((active >> j) & 1u) == 0) {
                continue;
            }
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (c0 + r < num_channel) {
                    if (per_channel[j]) {
                        product[j] =
                            product[j] * spart_mart_ratio_power(observed[r][j], sum[r][j], gamma);
                    } else {
                        const double ratio = spart_mart_ratio(observed[r][j], sum[r][j]);
                        single[j] =
                            single[j] && spart_mart_single_power_ratio(ratio, low, high) != 0;
                        product[j] = product[j] * ratio;
                    }
                }
            }
        }
    }
}

/* The update of FRAMES frames at once (the tiles of FRAMES frames
 * interleaved in blockIdx.x): each voxel's rows are read once for all of them, so a
 * pass reads the backward matrix once for the tile instead of once a
 * frame. Frame f gets the operations of backproject_update_kernel (and of
 * the held and indexed kernels: the same sums, ratios and powers) on its
 * own: the product of its ratios, ctis's per-channel form where one ratio
 * is outside the single power's range or per_channel_form says, then
 * scene[v] * pow. A stopped frame (its stop flag set) is not written; a
 * tile whose frames have all stopped returns at once. */
template <typename Value, typename Column, int FRAMES, int ROWS, int UNROLL, bool X4>
__global__ void __launch_bounds__(threads_per_block) backproject_update_batch_kernel(
    spart_device_csr matrix, const Column *__restrict__ columns, const Value *__restrict__ values,
    const double *__restrict__ images, const double *__restrict__ observed_back,
    double *__restrict__ scene, int64_t num_frames, int64_t num_channel, int64_t scene_size,
    double gamma, double inverse_channels, const int *stops, frame_strides strides)
{
    /* the tiles of frames take neighbouring blocks (blockIdx.x = voxel
     * block x tiles + tile), so that the blocks in flight together read
     * the same rows: beyond 4 frames the matrix comes once from memory,
     * its other tiles' reads hitting the L2 cache */
    const int64_t tiles = (num_frames + FRAMES - 1) / FRAMES;
    const int64_t t0 = (int64_t)(blockIdx.x % tiles) * FRAMES;
    const int64_t voxel_block = (int64_t)blockIdx.x / tiles;
    const int64_t voxel_blocks = (int64_t)gridDim.x / tiles;
    const int width = num_frames - t0 < FRAMES ? (int)(num_frames - t0) : FRAMES;
    unsigned active = 0;
    for (int j = 0; j < width; j++) {
        const int *stop = stops != nullptr ? stops + (t0 + j) * strides.stop : nullptr;
        active |= run_stopped(stop) ? 0u : 1u << j;
    }
    if (active == 0) {
        return;
    }
    const spart_rows::row_group group = spart_rows::group_of_thread(matrix.group_size);
    const bool per_channel_form = spart_mart_per_channel_form(gamma, inverse_channels) != 0;
    const double exponent = spart_mart_voxel_exponent(gamma, inverse_channels);
    const int64_t groups_per_block = blockDim.x / group.size;
    const int64_t first = voxel_block * groups_per_block + threadIdx.x / group.size;
    const int64_t stride = voxel_blocks * groups_per_block;
    for (int64_t v = first; v < scene_size; v += stride) {
        bool per_channel[FRAMES], single[FRAMES];
        double product[FRAMES], state[FRAMES];
#pragma unroll
        for (int j = 0; j < FRAMES; j++) {
            per_channel[j] = per_channel_form;
            state[j] = 0.0;
        }
        voxel_products_batch<Value, Column, FRAMES, ROWS, UNROLL, X4>(
            matrix, columns, values, images, observed_back, scene, strides, group, v, t0, width,
            num_channel, scene_size, gamma, active, per_channel, product, single, state);
        /* frames whose ratios left the single power's range: the
         * per-channel form, their rows summed again (the same sums) */
        unsigned again = 0;
        if (!per_channel_form && group.lane == 0) {
#pragma unroll
            for (int j = 0; j < FRAMES; j++) {
                const bool redo = ((active >> j) & 1u) != 0 && !single[j];
                per_channel[j] = redo;
                again |= redo ? 1u << j : 0u;
            }
        }
        again = __shfl_sync(group.mask, again, 0, group.size);
        if (again != 0) {
            double redone[FRAMES];
            bool ignored[FRAMES];
            double state_again[FRAMES];
#pragma unroll
            for (int j = 0; j < FRAMES; j++) {
                per_channel[j] = true;
            }
            voxel_products_batch<Value, Column, FRAMES, ROWS, UNROLL, X4>(
                matrix, columns, values, images, observed_back, scene, strides, group, v, t0, width,
                num_channel, scene_size, gamma, again, per_channel, redone, ignored, state_again);
#pragma unroll
            for (int j = 0; j < FRAMES; j++) {
                product[j] = ((again >> j) & 1u) != 0 ? redone[j] : product[j];
                per_channel[j] = ((again >> j) & 1u) != 0;
            }
        }
        if (group.lane == 0) {
#pragma unroll
            for (int j = 0; j < FRAMES; j++) {
                if (((active >> j) & 1u) != 0) {
                    const double power = spart_mart_pow(
                        product[j],
                        per_channel[j] || per_channel_form ? inverse_channels : exponent);
                    scene[(t0 + j) * strides.scene + v] = state[j] * power;
                }
            }
        }
    }
}

/* The batch kernel's launch for one value and column type: rows of a few
 * entries (g <= 8) four channels a group and one round (two entries a
 * lane for g = 1), longer rows one channel and four entries a round. */
template <typename Value, typename Column, bool X4 = false>
cudaError_t launch_backproject_update_batch(const spart_device_csr &matrix, const Column *columns,
                                            const Value *values, const double *images,
                                            const double *observed_back, double *scene,
                                            int64_t num_frames, int64_t num_channel,
                                            int64_t scene_size, double gamma, const int *stops,
                                            frame_strides strides, cudaStream_t stream)
{
    const double inverse_channels = 1.0 / (double)num_channel;
    const int64_t groups_per_block = threads_per_block / matrix.group_size;
    const int64_t tiles = (num_frames + batch_frames - 1) / batch_frames;
    int64_t blocks = (scene_size + groups_per_block - 1) / groups_per_block;
    blocks = blocks < 65535 * 16 ? blocks : 65535 * 16;
    const dim3 grid((unsigned)(blocks * tiles));
    if (matrix.group_size == 1) {
        backproject_update_batch_kernel<Value, Column, batch_frames, 4, 2, X4>
            <<<grid, threads_per_block, 0, stream>>>(matrix, columns, values, images, observed_back,
                                                     scene, num_frames, num_channel, scene_size,
                                                     gamma, inverse_channels, stops, strides);
    } else if (matrix.group_size <= 8) {
        backproject_update_batch_kernel<Value, Column, batch_frames, 4, 1, X4>
            <<<grid, threads_per_block, 0, stream>>>(matrix, columns, values, images, observed_back,
                                                     scene, num_frames, num_channel, scene_size,
                                                     gamma, inverse_channels, stops, strides);
    } else {
        backproject_update_batch_kernel<Value, Column, batch_frames, 1, 4, X4>
            <<<grid, threads_per_block, 0, stream>>>(matrix, columns, values, images, observed_back,
                                                     scene, num_frames, num_channel, scene_size,
                                                     gamma, inverse_channels, stops, strides);
    }
    return cudaGetLastError();
}

} /* namespace */

/* Frames first .. first + count - 1 (count <= 65535, the grid's y). */
static cudaError_t launch_frames(const spart_device_csr &m, const double *images,
                                 const double *observed_back, double *scene, int64_t num_channel,
                                 int64_t scene_size, double gamma,
                                 const spart_device_short_rows *index, const int *stop,
                                 int64_t count, frame_strides strides, cudaStream_t s)
{
    if (m.values64 != nullptr && m.columns32 != nullptr) {
        return launch_backproject_update<double, int32_t>(
            m, m.columns32, m.values64, images, observed_back, scene, num_channel, scene_size,
            gamma, index, stop, count, strides, s);
    }
    if (m.values64 != nullptr) {
        return launch_backproject_update<double, int64_t>(
            m, m.columns64, m.values64, images, observed_back, scene, num_channel, scene_size,
            gamma, index, stop, count, strides, s);
    }
    if (m.columns32 != nullptr) {
        return launch_backproject_update<float, int32_t>(
            m, m.columns32, m.values32, images, observed_back, scene, num_channel, scene_size,
            gamma, index, stop, count, strides, s);
    }
    return launch_backproject_update<float, int64_t>(m, m.columns64, m.values32, images,
                                                     observed_back, scene, num_channel, scene_size,
                                                     gamma, index, stop, count, strides, s);
}

/* The batch kernel for frames first .. first + count - 1 (count <=
 * 256 * batch_frames). */
static cudaError_t launch_batch(const spart_device_csr &m, const double *images,
                                const double *observed_back, double *scene, int64_t num_channel,
                                int64_t scene_size, double gamma, const int *stop, int64_t count,
                                frame_strides strides, cudaStream_t s)
{
    if (m.values64 != nullptr && m.columns32 != nullptr) {
        return launch_backproject_update_batch<double, int32_t>(
            m, m.columns32, m.values64, images, observed_back, scene, count, num_channel,
            scene_size, gamma, stop, strides, s);
    }
    if (m.values64 != nullptr) {
        return launch_backproject_update_batch<double, int64_t>(
            m, m.columns64, m.values64, images, observed_back, scene, count, num_channel,
            scene_size, gamma, stop, strides, s);
    }
    if (m.columns32 != nullptr) {
        return launch_backproject_update_batch<float, int32_t>(
            m, m.columns32, m.values32, images, observed_back, scene, count, num_channel,
            scene_size, gamma, stop, strides, s);
    }
    return launch_backproject_update_batch<float, int64_t>(m, m.columns64, m.values32, images,
                                                           observed_back, scene, count, num_channel,
                                                           scene_size, gamma, stop, strides, s);
}

extern "C" int spart_cuda_mart_backproject_update_frames(
    const spart_device_csr *matrix, const double *images, const double *observed_back,
    double *scenes, int64_t num_frames, int64_t num_channel, int64_t scene_size, double gamma,
    const spart_device_short_rows *index, const int *stops, int64_t stop_stride, void *stream)
{
    if (num_frames < 2) {
        return spart_cuda_mart_backproject_update_frames_apart(
            matrix, images, observed_back, scenes, num_frames, num_channel, scene_size, gamma,
            index, stops, stop_stride, stream);
    }
    cudaStream_t s = (cudaStream_t)stream;
    if (scene_size <= 0 || num_channel <= 0) {
        return cudaSuccess;
    }
    const int64_t image_values = matrix->num_columns; /* the images of one frame */
    const frame_strides strides = {image_values, num_channel * scene_size, scene_size, stop_stride};
    const int64_t most = 256 * batch_frames; /* blocks x tiles within the grid's x */
    for (int64_t first = 0; first < num_frames; first += most) {
        const int64_t count = num_frames - first < most ? num_frames - first : most;
        cudaError_t error = launch_batch(
            *matrix, images + first * strides.images, observed_back + first * strides.observed_back,
            scenes + first * strides.scene, num_channel, scene_size, gamma,
            stops != nullptr ? stops + first * stop_stride : nullptr, count, strides, s);
        if (error != cudaSuccess) {
            return (int)error;
        }
    }
    return cudaSuccess;
}

extern "C" int spart_cuda_mart_backproject_update_frames_apart(
    const spart_device_csr *matrix, const double *images, const double *observed_back,
    double *scenes, int64_t num_frames, int64_t num_channel, int64_t scene_size, double gamma,
    const spart_device_short_rows *index, const int *stops, int64_t stop_stride, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (scene_size <= 0 || num_channel <= 0 || num_frames <= 0) {
        return cudaSuccess;
    }
    const int64_t image_values = matrix->num_columns; /* the images of one frame */
    const frame_strides strides = {image_values, num_channel * scene_size, scene_size, stop_stride};
    const int64_t most = 65535;
    for (int64_t first = 0; first < num_frames; first += most) {
        const int64_t count = num_frames - first < most ? num_frames - first : most;
        cudaError_t error = launch_frames(
            *matrix, images + first * strides.images, observed_back + first * strides.observed_back,
            scenes + first * strides.scene, num_channel, scene_size, gamma, index,
            stops != nullptr ? stops + first * stop_stride : nullptr, count, strides, s);
        if (error != cudaSuccess) {
            return (int)error;
        }
    }
    return cudaSuccess;
}

extern "C" int spart_cuda_mart_backproject_update(const spart_device_csr *matrix,
                                                  const double *images, const double *observed_back,
                                                  double *scene, int64_t num_channel,
                                                  int64_t scene_size, double gamma,
                                                  const spart_device_short_rows *index,
                                                  const int *stop, void *stream)
{
    return spart_cuda_mart_backproject_update_frames(matrix, images, observed_back, scene, 1,
                                                     num_channel, scene_size, gamma, index, stop, 0,
                                                     stream);
}

extern "C" int spart_cuda_mart_backproject_update_frames_packed(
    const spart_device_csr *matrix, const double *images, double *images_x4,
    const double *observed_back, double *scenes, int64_t num_frames, int64_t num_channel,
    int64_t scene_size, double gamma, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t image_values = matrix->num_columns;
    if (scene_size <= 0 || num_channel <= 0 || num_frames <= 0 || num_frames > 256 * batch_frames) {
        return num_frames > 256 * batch_frames ? (int)cudaErrorInvalidValue : (int)cudaSuccess;
    }
    if (matrix->values32 == nullptr || matrix->columns32 == nullptr) {
        return (int)cudaErrorNotSupported;
    }
    for (int64_t t0 = 0; t0 < num_frames; t0 += batch_frames) {
        const int64_t count = num_frames - t0 < batch_frames ? num_frames - t0 : batch_frames;
        const int error = spart_cuda_pack_x4(images + t0 * image_values, image_values, count,
                                             images_x4 + t0 * image_values, stream);
        if (error != cudaSuccess) {
            return error;
        }
    }
    const frame_strides strides = {image_values, num_channel * scene_size, scene_size, 0};
    return (int)launch_backproject_update_batch<float, int32_t, true>(
        *matrix, matrix->columns32, matrix->values32, images_x4, observed_back, scenes, num_frames,
        num_channel, scene_size, gamma, nullptr, strides, s);
}
