/*
 * kernels/vcs_product.cu: the CUDA twin of host/vcs_product.c, the VCS
 * product Z = Y X or Y^T X over one grouping, in the order of
 * src/vcs/vcs_kernels.h. A group of g lanes owns an output slice; lane l
 * takes the slice's entries l, l + g, ... across all its runs (a cursor
 * walks the runs, so short runs of large counts leave no lane idle), with
 * __fma_rn in float64 from +0.0; the lanes combine by shuffles in the
 * binary tree (lane l += lane l + h, h = g/2, ..., 1). Columns of X go in
 * passes of 16 accumulators a lane. X is read in its own type and widened
 * at each entry: a float64 copy of a float32 B would double the bytes the
 * gathers pull through L2 (and a 2,000 x 16 float32 B stays in L1 where its
 * float64 copy does not); the conversions cost less. The rank-1 vector: a block a column,
 * 256 threads for the 256 parts, a tree in shared memory. No atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "vcs/vcs_kernels.h"
#include "vcs/vcs_math.h"

#include "launch.cuh"

namespace
{

constexpr int columns_a_pass = 16;
/* g of a run, where it depends on the run alone (minor_factor_is_one), is
 * computed once by the slice's group into shared memory (runs_cached a
 * warp: 2g a slice), not by every lane that meets the run. */
constexpr int runs_cached = 64;
static_assert(SPART_VCS_RANK1_PARTS == spart_launch::threads_per_block, "a rank-1 part a thread");

/* A run's value: float32 where the upload found every value exact in it
 * (the same double). */
__device__ __forceinline__ double run_value(const spart_vcs_kernel_grouping &gr, int64_t u)
{
    return gr.values_float != nullptr ? (double)__ldg(gr.values_float + u) : __ldg(gr.values + u);
}

/* The minor index of entry e of run u: its stored bits, and the run's high
 * 16 bits where the upload split the runs. */
template <typename Index>
__device__ __forceinline__ int64_t minor_index(const spart_vcs_kernel_grouping &gr,
                                               const Index *indices, int64_t e, int64_t u)
{
    const int64_t low = (int64_t)indices[e];
    return gr.run_high != nullptr ? low | ((int64_t)__ldg(gr.run_high + u) << 16) : low;
}

template <typename T> __device__ __forceinline__ double load_x(const T *x, int64_t at)
{
    return (double)__ldg(x + at);
}

/* A full pass of 16 columns of a row of X in unit stride, read as four
 * float4 (or eight double2) where the row is 16-byte aligned. */
template <typename T>
__device__ __forceinline__ void fma_full_pass(const T *row, double delta, double *acc);

template <>
__device__ __forceinline__ void fma_full_pass<float>(const float *row, double delta, double *acc)
{
    const float4 *quad = (const float4 *)row;
#pragma unroll
    for (int v = 0; v < 4; v++) {
        const float4 four = __ldg(quad + v);
        acc[4 * v + 0] = __fma_rn(delta, (double)four.x, acc[4 * v + 0]);
        acc[4 * v + 1] = __fma_rn(delta, (double)four.y, acc[4 * v + 1]);
        acc[4 * v + 2] = __fma_rn(delta, (double)four.z, acc[4 * v + 2]);
        acc[4 * v + 3] = __fma_rn(delta, (double)four.w, acc[4 * v + 3]);
    }
}

template <>
__device__ __forceinline__ void fma_full_pass<double>(const double *row, double delta, double *acc)
{
    const double2 *pair = (const double2 *)row;
#pragma unroll
    for (int v = 0; v < 8; v++) {
        const double2 two = __ldg(pair + v);
        acc[2 * v + 0] = __fma_rn(delta, two.x, acc[2 * v + 0]);
        acc[2 * v + 1] = __fma_rn(delta, two.y, acc[2 * v + 1]);
    }
}

/* The walk (118 registers, two blocks of 256 an SM). aligned: X has unit
 * column stride and 16-byte aligned rows, so full passes read vectors (the
 * same fma, in the same order). */
template <typename T, typename Offset, typename Index, bool aligned>
__global__ void gather_kernel(spart_vcs_kernel_grouping gr, spart_vcs_kernel_stats st,
                              int64_t width, const T *__restrict__ x, int64_t x_row_stride,
                              int64_t x_col_stride, T *__restrict__ z, int64_t z_row_stride,
                              int64_t z_col_stride, const double *__restrict__ rank1)
{
    const Offset *__restrict__ major_ptr = (const Offset *)gr.major_ptr;
    const Offset *__restrict__ value_ptr = (const Offset *)gr.value_ptr;
    const Index *__restrict__ indices = (const Index *)gr.indices;
    const int g = gr.group_size;
    const int lane_in_warp = threadIdx.x & 31;
    const int lane = lane_in_warp & (g - 1);
    const int slices_a_warp = 32 / g;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    __shared__ double run_g[spart_launch::threads_per_block / 32][runs_cached];
    double *my_runs = run_g[threadIdx.x >> 5] + (lane_in_warp / g) * (2 * g);
    /* the loop is uniform over a warp, so every lane reaches the shuffles */
    for (int64_t base = warp * slices_a_warp; base < gr.n_major; base += warps * slices_a_warp) {
        const int64_t m = base + lane_in_warp / g;
        const bool valid = m < gr.n_major;
        int64_t run_first = 0, run_last = 0, slice_start = 0, slice_end = 0;
        double major_a = 1.0, major_b = 1.0, major_scale = 1.0;
        if (valid) {
            run_first = (int64_t)major_ptr[m];
            run_last = (int64_t)major_ptr[m + 1];
            slice_start = (int64_t)value_ptr[run_first];
            slice_end = (int64_t)value_ptr[run_last];
            if (gr.by_rows) {
                major_a = st.row_factor[m];
            } else {
                major_b = st.col_factor[m];
                major_scale = st.scale != nullptr ? st.scale[m] : 1.0;
            }
        }
        const bool runs_shared = gr.minor_factor_is_one && run_last - run_first <= 2 * g;
        if (runs_shared) {
            for (int64_t u = run_first + lane; u < run_last; u += g) {
                my_runs[u - run_first] =
                    spart_vcs_g(st.g_code, spart_vcs_argument(run_value(gr, u), major_a, major_b));
            }
        }
        __syncwarp();
        for (int64_t c0 = 0; c0 < width; c0 += columns_a_pass) {
            const int columns = (int)(width - c0 < columns_a_pass ? width - c0 : columns_a_pass);
            double acc[columns_a_pass];
#pragma unroll
            for (int q = 0; q < columns_a_pass; q++) {
                acc[q] = 0.0;
            }
            int64_t u = run_first;
            int64_t cached_run = -1;
            double g_run = 0.0, x_run = 0.0;
            for (int64_t e = slice_start + lane; e < slice_end; e += g) {
                while ((int64_t)value_ptr[u + 1] <= e) {
                    u++;
                }
                if (u != cached_run) {
                    cached_run = u;
                    x_run = run_value(gr, u);
                    if (runs_shared) {
                        g_run = my_runs[u - run_first];
                    } else if (gr.minor_factor_is_one) {
                        g_run = spart_vcs_g(st.g_code, spart_vcs_argument(x_run, major_a, major_b));
                    }
                }
                const int64_t k = minor_index(gr, indices, e, u);
                double delta;
                if (gr.by_rows) {
                    const double scale_k = st.scale != nullptr ? st.scale[k] : 1.0;
                    delta = gr.minor_factor_is_one ? __dmul_rn(scale_k, g_run)
                                                   : spart_vcs_delta(st.g_code, x_run, major_a,
                                                                     st.col_factor[k], scale_k);
                } else {
                    delta = gr.minor_factor_is_one
                                ? __dmul_rn(major_scale, g_run)
                                : spart_vcs_delta(st.g_code, x_run, st.row_factor[k], major_b,
                                                  major_scale);
                }
                const T *row = x + k * x_row_stride + c0 * x_col_stride;
                if (aligned && columns == columns_a_pass) {
                    fma_full_pass<T>(row, delta, acc);
                } else {
#pragma unroll
                    for (int q = 0; q < columns_a_pass; q++) {
                        if (q < columns) {
                            acc[q] = __fma_rn(delta, load_x(row, q * x_col_stride), acc[q]);
                        }
                    }
                }
            }
            for (int h = g / 2; h >= 1; h /= 2) {
#pragma unroll
                for (int q = 0; q < columns_a_pass; q++) {
                    acc[q] = __dadd_rn(acc[q], __shfl_down_sync(0xffffffffu, acc[q], h, g));
                }
            }
            if (valid && lane == 0) {
#pragma unroll
                for (int q = 0; q < columns_a_pass; q++) {
                    if (q < columns) {
                        double value = acc[q];
                        if (st.has_offset) {
                            value = gr.by_rows ? __dadd_rn(value, rank1[c0 + q])
                                               : __fma_rn(st.offset[m], rank1[c0 + q], value);
                        }
                        z[m * z_row_stride + (c0 + q) * z_col_stride] = (T)value;
                    }
                }
            }
        }
        __syncwarp(); /* every lane has read my_runs before the next slice writes it */
    }
}

/* v_c over the 256 parts of X's rows: block c (grid-stride), thread p sums
 * its part; the tree in shared memory. */
template <typename T>
__global__ void rank1_kernel(int64_t n, int64_t width, const T *__restrict__ x,
                             int64_t x_row_stride, int64_t x_col_stride,
                             const double *__restrict__ weight, double *__restrict__ v)
{
    __shared__ double part_sum[SPART_VCS_RANK1_PARTS];
    const int p = threadIdx.x;
    const int64_t length = (n + SPART_VCS_RANK1_PARTS - 1) / SPART_VCS_RANK1_PARTS;
    for (int64_t c = blockIdx.x; c < width; c += gridDim.x) {
        double acc = 0.0;
        const int64_t first = p * length;
        const int64_t last = first + length < n ? first + length : n;
        /* eight loads issued before their fma (in order): a part is a
         * chain of dependent fma, and one load at a time would wait for
         * memory at every step */
        int64_t k = first;
        for (; k + 8 <= last; k += 8) {
            double xs[8], ws[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                xs[j] = load_x(x, (k + j) * x_row_stride + c * x_col_stride);
                ws[j] = weight != nullptr ? weight[k + j] : 1.0;
            }
#pragma unroll
            for (int j = 0; j < 8; j++) {
                acc = __fma_rn(ws[j], xs[j], acc);
            }
        }
        for (; k < last; k++) {
            const double w = weight != nullptr ? weight[k] : 1.0;
            acc = __fma_rn(w, load_x(x, k * x_row_stride + c * x_col_stride), acc);
        }
        part_sum[p] = acc;
        __syncthreads();
        for (int h = SPART_VCS_RANK1_PARTS / 2; h >= 1; h /= 2) {
            if (p < h) {
                part_sum[p] = __dadd_rn(part_sum[p], part_sum[p + h]);
            }
            __syncthreads();
        }
        if (p == 0) {
            v[c] = part_sum[0];
        }
        __syncthreads();
    }
}

template <typename E>
__global__ void transpose_kernel(const E *__restrict__ src, E *__restrict__ dst, int64_t rows,
                                 int64_t cols)
{
    __shared__ E tile[32][33];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5; /* 32 x 8 threads */
    const int64_t tiles_c = (cols + 31) / 32, tiles = ((rows + 31) / 32) * tiles_c;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t r0 = (t / tiles_c) * 32, c0 = (t % tiles_c) * 32;
        for (int j = ty; j < 32; j += 8) {
            if (r0 + j < rows && c0 + tx < cols) {
                tile[j][tx] = src[(r0 + j) * cols + c0 + tx];
            }
        }
        __syncthreads();
        for (int j = ty; j < 32; j += 8) {
            if (c0 + j < cols && r0 + tx < rows) {
                dst[(c0 + j) * rows + r0 + tx] = tile[tx][j];
            }
        }
        __syncthreads();
    }
}

template <typename T, typename Offset, typename Index>
cudaError_t product(const spart_vcs_kernel_grouping *gr, const spart_vcs_kernel_stats *st,
                    const spart_vcs_kernel_product *p, double *rank1, cudaStream_t stream)
{
    const T *x = (const T *)p->x;
    T *z = (T *)p->z;
    if (st->has_offset) {
        const int64_t blocks = p->width < 65535 ? p->width : 65535;
        cudaError_t error =
            spart_launch::launch(rank1_kernel<T>, dim3((unsigned)blocks), stream, gr->n_minor,
                                 p->width, x, p->x_row_stride, p->x_col_stride,
                                 gr->by_rows ? st->offset : (const double *)nullptr, rank1);
        if (error != cudaSuccess) {
            return error;
        }
    }
    if (gr->n_major == 0) {
        return cudaSuccess;
    }
    const int64_t slices_a_block = (spart_launch::threads_per_block / 32) * (32 / gr->group_size);
    int64_t blocks = (gr->n_major + slices_a_block - 1) / slices_a_block;
    blocks = blocks < 65535 * 16 ? blocks : 65535 * 16;
    const bool aligned = p->x_col_stride == 1 && (uintptr_t)x % 16 == 0 &&
                         ((size_t)p->x_row_stride * sizeof(T)) % 16 == 0;
    auto kernel =
        aligned ? gather_kernel<T, Offset, Index, true> : gather_kernel<T, Offset, Index, false>;
    return spart_launch::launch(kernel, dim3((unsigned)blocks), stream, *gr, *st, p->width, x,
                                p->x_row_stride, p->x_col_stride, z, p->z_row_stride,
                                p->z_col_stride, (const double *)rank1);
}

template <typename T>
cudaError_t product_for_type(const spart_vcs_kernel_grouping *gr, const spart_vcs_kernel_stats *st,
                             const spart_vcs_kernel_product *p, double *rank1, cudaStream_t stream)
{
    if (gr->offset_bytes == 4) {
        return gr->index_bytes == 2 ? product<T, int32_t, uint16_t>(gr, st, p, rank1, stream)
                                    : product<T, int32_t, int32_t>(gr, st, p, rank1, stream);
    }
    return gr->index_bytes == 2 ? product<T, int64_t, uint16_t>(gr, st, p, rank1, stream)
                                : product<T, int64_t, int32_t>(gr, st, p, rank1, stream);
}

} // namespace

extern "C" int spart_vcs_device_product(const spart_vcs_kernel_grouping *grouping,
                                        const spart_vcs_kernel_stats *stats,
                                        const spart_vcs_kernel_product *product, double *rank1,
                                        void *stream)
{
    if (product->width <= 0) {
        return 0;
    }
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t error = product->is_float
                            ? product_for_type<float>(grouping, stats, product, rank1, s)
                            : product_for_type<double>(grouping, stats, product, rank1, s);
    return (int)error;
}

extern "C" int spart_vcs_device_transpose(const void *src, void *dst, int64_t rows, int64_t cols,
                                          int element_bytes, void *stream)
{
    if (rows <= 0 || cols <= 0) {
        return 0;
    }
    const int64_t tiles = ((rows + 31) / 32) * ((cols + 31) / 32);
    const unsigned blocks = (unsigned)(tiles < 65535 * 16 ? tiles : 65535 * 16);
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t error = element_bytes == 4
                            ? spart_launch::launch(transpose_kernel<float>, dim3(blocks), s,
                                                   (const float *)src, (float *)dst, rows, cols)
                            : spart_launch::launch(transpose_kernel<double>, dim3(blocks), s,
                                                   (const double *)src, (double *)dst, rows, cols);
    return (int)error;
}
