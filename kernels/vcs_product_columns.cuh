/*
 * kernels/vcs_product_columns.cuh: design 2 of the walk of
 * kernels/vcs_product.cu (included there only), for groupings of short
 * slices (g <= 8, rows of a cells x genes matrix: A @ B). Same bits as
 * design 1 and as host/vcs_product.c: the order of src/vcs/vcs_kernels.h is
 * kept accumulator for accumulator.
 *
 * Design 1 gives each of a slice's g lanes its own entries, so every lane
 * gathers a different row of X: a warp's 16-byte load touches 32 cache
 * lines for 32 entries, four such loads an entry for 16 float32 columns.
 * Here a team of 4 lanes owns a slice and a slab of 16 columns, 4 a lane:
 * the team prepares 4 (or g) entries at once (each lane one: the run, the
 * index, Delta, g's log where it depends on the entry), hands them round by
 * shuffles, and every lane applies each entry to its 4 columns with one
 * 16-byte load of X (a warp's load: 8 rows of X, 8 lines, for 8 entries).
 * Each lane keeps g accumulators per column: the entry e of the slice goes
 * to accumulator e mod g, as to design 1's lane e mod g, so the sums are
 * the same fma in the same order; the tree over the g accumulators is the
 * design-1 tree in registers (acc[l] += acc[l + h], h = g/2, ..., 1).
 */
#ifndef SPART_VCS_PRODUCT_COLUMNS_CUH
#define SPART_VCS_PRODUCT_COLUMNS_CUH

namespace vcs_columns
{

constexpr int team = 4;           /* lanes a slice */
constexpr int columns_a_lane = 4; /* one 16-byte float32 load (two double2) */
constexpr int slab = team * columns_a_lane;
constexpr int teams_a_warp = 32 / team;
constexpr int runs_cached = 16; /* g of a run shared by the team, up to 16 runs */
constexpr unsigned full_warp = 0xffffffffu;

/* Four columns of a row of X in unit stride, 16-byte aligned. */
template <typename T> __device__ __forceinline__ void load_four(const T *at, double *four);

template <> __device__ __forceinline__ void load_four<float>(const float *at, double *four)
{
    const float4 v = __ldg((const float4 *)at);
    four[0] = (double)v.x;
    four[1] = (double)v.y;
    four[2] = (double)v.z;
    four[3] = (double)v.w;
}

template <> __device__ __forceinline__ void load_four<double>(const double *at, double *four)
{
    const double2 a = __ldg((const double2 *)at);
    const double2 b = __ldg((const double2 *)at + 1);
    four[0] = a.x;
    four[1] = a.y;
    four[2] = b.x;
    four[3] = b.y;
}

/* G: the grouping's group size (1, 2, 4 or 8). aligned: X has unit column
 * stride and rows and base 16-byte aligned (a lane's 4 columns are one
 * vector load where all 4 exist). */
/* Three blocks of 256 threads an SM where g <= 4 (at most 85 registers a
 * thread): at 116-126 registers only two fit, and Nsight Compute (round 9)
 * found both designs waiting at 25% occupancy (4 warps a scheduler). */
template <typename T, typename Offset, typename Index, int G>
__global__ void __launch_bounds__(spart_launch::threads_per_block, G <= 4 ? 3 : 2)
    columns_kernel(spart_vcs_kernel_grouping gr, spart_vcs_kernel_stats st, int64_t width,
                   const T *__restrict__ x, int64_t x_row_stride, int64_t x_col_stride,
                   T *__restrict__ z, int64_t z_row_stride, int64_t z_col_stride,
                   const double *__restrict__ rank1, bool aligned)
{
    /* entries a team prepares at once: one a lane (or g); two a lane
     * changed nothing (round 9 on the H200: 0.256 against 0.257 ms) */
    constexpr int chunk = G > team ? G : team;
    constexpr int per_lane = chunk / team;
    const Offset *__restrict__ major_ptr = (const Offset *)gr.major_ptr;
    const Offset *__restrict__ value_ptr = (const Offset *)gr.value_ptr;
    const Index *__restrict__ indices = (const Index *)gr.indices;
    const int lane_in_warp = threadIdx.x & 31;
    const int t = lane_in_warp & (team - 1);
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    __shared__ double run_g[spart_launch::threads_per_block / team][runs_cached];
    double *my_runs = run_g[threadIdx.x / team];
    /* the loops are uniform over a warp, so every lane reaches the shuffles */
    for (int64_t base = warp * teams_a_warp; base < gr.n_major; base += warps * teams_a_warp) {
        const int64_t m = base + lane_in_warp / team;
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
        const bool runs_shared = gr.minor_factor_is_one && run_last - run_first <= runs_cached;
        if (runs_shared) {
            for (int64_t u = run_first + t; u < run_last; u += team) {
                my_runs[u - run_first] =
                    spart_vcs_g(st.g_code, spart_vcs_argument(run_value(gr, u), major_a, major_b));
            }
        }
        __syncwarp();
        for (int64_t c0 = 0; c0 < width; c0 += slab) {
            const int64_t column = c0 + (int64_t)t * columns_a_lane;
            const int here = (int)(width - column < 0                ? 0
                                   : width - column < columns_a_lane ? width - column
                                                                     : columns_a_lane);
            double acc[G][columns_a_lane];
#pragma unroll
            for (int l = 0; l < G; l++) {
#pragma unroll
                for (int q = 0; q < columns_a_lane; q++) {
                    acc[l][q] = 0.0;
                }
            }
            int64_t u = run_first;
            int64_t cached_run = -1;
            double g_run = 0.0, x_run = 0.0;
            for (int64_t e0 = slice_start; __any_sync(full_warp, e0 < slice_end); e0 += chunk) {
                /* prepare: this lane's entries e0 + p * team + t */
                int k_mine[per_lane];
                double delta_mine[per_lane];
#pragma unroll
                for (int p = 0; p < per_lane; p++) {
                    const int64_t e = e0 + p * team + t;
                    k_mine[p] = 0;
                    delta_mine[p] = 0.0;
                    if (e < slice_end) {
                        while ((int64_t)value_ptr[u + 1] <= e) {
                            u++;
                        }
                        if (u != cached_run) {
                            cached_run = u;
                            x_run = run_value(gr, u);
                            if (runs_shared) {
                                g_run = my_runs[u - run_first];
                            } else if (gr.minor_factor_is_one) {
                                g_run = spart_vcs_g(st.g_code,
                                                    spart_vcs_argument(x_run, major_a, major_b));
                            }
                        }
                        const int k = (int)minor_index(gr, indices, e, u);
                        double delta;
                        if (gr.by_rows) {
                            const double scale_k = st.scale != nullptr ? st.scale[k] : 1.0;
                            delta = gr.minor_factor_is_one
                                        ? __dmul_rn(scale_k, g_run)
                                        : spart_vcs_delta(st.g_code, x_run, major_a,
                                                          st.col_factor[k], scale_k);
                        } else {
                            delta = gr.minor_factor_is_one
                                        ? __dmul_rn(major_scale, g_run)
                                        : spart_vcs_delta(st.g_code, x_run, st.row_factor[k],
                                                          major_b, major_scale);
                        }
                        k_mine[p] = k;
                        delta_mine[p] = delta;
                    }
                }
                /* apply: entry e0 + j to accumulator j mod G (chunk is a multiple of G) */
#pragma unroll
                for (int j = 0; j < chunk; j++) {
                    const int k = __shfl_sync(full_warp, k_mine[j / team], j % team, team);
                    const double delta =
                        __shfl_sync(full_warp, delta_mine[j / team], j % team, team);
                    if (e0 + j < slice_end && here > 0) {
                        const T *row = x + (int64_t)k * x_row_stride;
                        double four[columns_a_lane];
                        if (aligned && here == columns_a_lane) {
                            load_four<T>(row + column, four);
                        } else {
#pragma unroll
                            for (int q = 0; q < columns_a_lane; q++) {
                                four[q] = q < here
                                              ? (double)__ldg(row + (column + q) * x_col_stride)
                                              : 0.0;
                            }
                        }
#pragma unroll
                        for (int q = 0; q < columns_a_lane; q++) {
                            acc[j % G][q] = __fma_rn(delta, four[q], acc[j % G][q]);
                        }
                    }
                }
            }
#pragma unroll
            for (int h = G / 2; h >= 1; h /= 2) {
#pragma unroll
                for (int l = 0; l < h; l++) {
#pragma unroll
                    for (int q = 0; q < columns_a_lane; q++) {
                        acc[l][q] = __dadd_rn(acc[l][q], acc[l + h][q]);
                    }
                }
            }
            if (valid) {
#pragma unroll
                for (int q = 0; q < columns_a_lane; q++) {
                    if (q < here) {
                        double value = acc[0][q];
                        if (st.has_offset) {
                            value = gr.by_rows ? __dadd_rn(value, rank1[column + q])
                                               : __fma_rn(st.offset[m], rank1[column + q], value);
                        }
                        z[m * z_row_stride + (column + q) * z_col_stride] = (T)value;
                    }
                }
            }
        }
        __syncwarp(); /* every lane has read my_runs before the next slice writes it */
    }
}

/* Launch design 2 for group size G on the blocks its slices need. */
template <typename T, typename Offset, typename Index, int G>
cudaError_t launch_g(const spart_vcs_kernel_grouping *gr, const spart_vcs_kernel_stats *st,
                     const spart_vcs_kernel_product *p, const double *rank1, bool aligned,
                     cudaStream_t stream)
{
    const int64_t slices_a_block = (spart_launch::threads_per_block / 32) * teams_a_warp;
    int64_t blocks = (gr->n_major + slices_a_block - 1) / slices_a_block;
    blocks = blocks < 65535 * 16 ? blocks : 65535 * 16;
    return spart_launch::launch(columns_kernel<T, Offset, Index, G>, dim3((unsigned)blocks), stream,
                                *gr, *st, p->width, (const T *)p->x, p->x_row_stride,
                                p->x_col_stride, (T *)p->z, p->z_row_stride, p->z_col_stride, rank1,
                                aligned);
}

/* Whether design 2 takes this grouping (g of at most 8). */
inline bool applies(const spart_vcs_kernel_grouping *gr)
{
    return gr->group_size <= 8;
}

template <typename T, typename Offset, typename Index>
cudaError_t launch(const spart_vcs_kernel_grouping *gr, const spart_vcs_kernel_stats *st,
                   const spart_vcs_kernel_product *p, const double *rank1, bool aligned,
                   cudaStream_t stream)
{
    switch (gr->group_size) {
    case 1: return launch_g<T, Offset, Index, 1>(gr, st, p, rank1, aligned, stream);
    case 2: return launch_g<T, Offset, Index, 2>(gr, st, p, rank1, aligned, stream);
    case 4: return launch_g<T, Offset, Index, 4>(gr, st, p, rank1, aligned, stream);
    default: return launch_g<T, Offset, Index, 8>(gr, st, p, rank1, aligned, stream);
    }
}

} // namespace vcs_columns

#endif /* SPART_VCS_PRODUCT_COLUMNS_CUH */
