/*
 * host/vcs_product.c: the host twin of kernels/vcs_product.cu, the VCS
 * product Z = Y X or Y^T X over one grouping (OpenMP over slices). The order
 * of operations is src/vcs/vcs_kernels.h's: each slice's entries in
 * storage order shared out to g lanes (entry e to lane e mod g), fma in
 * float64 from +0.0, the lanes in a binary tree, then the rank-1 term. A
 * thread takes whole slices, so the thread count changes nothing.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "vcs/vcs_kernels.h"

/* g and its log are inlined into each clone of the slice kernel, so that
 * their fma is the processor's instruction, not a call into libm (the same
 * correctly rounded result). */
#if defined(__GNUC__) || defined(__clang__)
#define SPART_MATH_FUNCTION static inline __attribute__((always_inline))
#define KERNEL_INLINE static inline __attribute__((always_inline))
#else
#define KERNEL_INLINE static inline
#endif
#include "vcs/vcs_math.h"

/* The clones of the slice kernel, dispatched on CPU features, as
 * host/csr_product.c's row kernel (x86-64-v3 is AVX2 + FMA). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_CLONES __attribute__((target_clones("fma", "default")))
#else
#define KERNEL_CLONES
#endif

int64_t spart_vcs_host_scratch_doubles(const spart_vcs_kernel_grouping *grouping, int64_t width,
                                       int threads)
{
    return (int64_t)threads * grouping->group_size * width +
           (int64_t)(SPART_VCS_RANK1_PARTS + 1) * width;
}

KERNEL_INLINE double read_x(const spart_vcs_kernel_product *p, int64_t k, int64_t c)
{
    const int64_t at = k * p->x_row_stride + c * p->x_col_stride;
    return p->is_float ? (double)((const float *)p->x)[at] : ((const double *)p->x)[at];
}

KERNEL_INLINE void write_z(const spart_vcs_kernel_product *p, int64_t m, int64_t c, double value)
{
    const int64_t at = m * p->z_row_stride + c * p->z_col_stride;
    if (p->is_float) {
        ((float *)p->z)[at] = (float)value;
    } else {
        ((double *)p->z)[at] = value;
    }
}

/* v_c = sum_k w_k X(k, c) (w = offset by rows, 1 by columns) over 256
 * parts of X's rows, each summed in order, the parts in a binary tree. */
static void rank1_vector(const spart_vcs_kernel_grouping *grouping,
                         const spart_vcs_kernel_stats *stats,
                         const spart_vcs_kernel_product *product, double *parts, double *v,
                         int threads)
{
    const int64_t n = grouping->n_minor, width = product->width;
    const int64_t length = (n + SPART_VCS_RANK1_PARTS - 1) / SPART_VCS_RANK1_PARTS;
    const double *weight = grouping->by_rows ? stats->offset : NULL;
#pragma omp parallel for num_threads(threads) schedule(static) if (n * width > 65536)
    for (int64_t part = 0; part < SPART_VCS_RANK1_PARTS; part++) {
        double *acc = parts + part * width;
        for (int64_t c = 0; c < width; c++) {
            acc[c] = 0.0;
        }
        const int64_t first = part * length;
        const int64_t last = first + length < n ? first + length : n;
        for (int64_t k = first; k < last; k++) {
            const double w = weight != NULL ? weight[k] : 1.0;
            for (int64_t c = 0; c < width; c++) {
                acc[c] = fma(w, read_x(product, k, c), acc[c]);
            }
        }
    }
    for (int64_t h = SPART_VCS_RANK1_PARTS / 2; h >= 1; h /= 2) {
        for (int64_t part = 0; part < h; part++) {
            for (int64_t c = 0; c < width; c++) {
                parts[part * width + c] = parts[part * width + c] + parts[(part + h) * width + c];
            }
        }
    }
    memcpy(v, parts, (size_t)width * sizeof(double));
}

KERNEL_INLINE int64_t offset_at(const void *array, int bytes, int64_t k)
{
    return bytes == 4 ? (int64_t)((const int32_t *)array)[k] : ((const int64_t *)array)[k];
}

KERNEL_INLINE int64_t index_at(const void *array, int bytes, int64_t k)
{
    return bytes == 2 ? (int64_t)((const uint16_t *)array)[k]
                      : (int64_t)((const int32_t *)array)[k];
}

/* One slice: the lanes' sums into acc (g x width), then the tree, the
 * rank-1 term and the output row. */
KERNEL_CLONES static void slice_product(const spart_vcs_kernel_grouping *gr,
                                        const spart_vcs_kernel_stats *st,
                                        const spart_vcs_kernel_product *p, const double *v,
                                        int64_t m, double *acc)
{
    const int64_t width = p->width;
    const int g = gr->group_size;
    memset(acc, 0, (size_t)g * (size_t)width * sizeof(double));
    const int64_t run_first = offset_at(gr->major_ptr, gr->offset_bytes, m);
    const int64_t run_last = offset_at(gr->major_ptr, gr->offset_bytes, m + 1);
    const int64_t slice_start = offset_at(gr->value_ptr, gr->offset_bytes, run_first);
    /* the major axis's factors */
    const double major_a = gr->by_rows ? st->row_factor[m] : 1.0;
    const double major_b = gr->by_rows ? 1.0 : st->col_factor[m];
    for (int64_t u = run_first; u < run_last; u++) {
        const double x = gr->values[u];
        const int64_t e_first = offset_at(gr->value_ptr, gr->offset_bytes, u);
        const int64_t e_last = offset_at(gr->value_ptr, gr->offset_bytes, u + 1);
        double g_run = 0.0;
        if (gr->minor_factor_is_one) {
            g_run = spart_vcs_g(st->g_code, spart_vcs_argument(x, major_a, major_b));
        }
        for (int64_t e = e_first; e < e_last; e++) {
            const int64_t k = index_at(gr->indices, gr->index_bytes, e);
            double delta;
            if (gr->by_rows) {
                delta = gr->minor_factor_is_one ? st->scale[k] * g_run
                                                : spart_vcs_delta(st->g_code, x, major_a,
                                                                  st->col_factor[k], st->scale[k]);
            } else {
                delta = gr->minor_factor_is_one ? st->scale[m] * g_run
                                                : spart_vcs_delta(st->g_code, x, st->row_factor[k],
                                                                  major_b, st->scale[m]);
            }
            double *lane = acc + ((e - slice_start) & (g - 1)) * width;
            if (p->x_col_stride == 1 && !p->is_float) { /* the common case, vectorizable */
                const double *x_row = (const double *)p->x + k * p->x_row_stride;
                for (int64_t c = 0; c < width; c++) {
                    lane[c] = fma(delta, x_row[c], lane[c]);
                }
            } else if (p->x_col_stride == 1) {
                const float *x_row = (const float *)p->x + k * p->x_row_stride;
                for (int64_t c = 0; c < width; c++) {
                    lane[c] = fma(delta, (double)x_row[c], lane[c]);
                }
            } else {
                for (int64_t c = 0; c < width; c++) {
                    lane[c] = fma(delta, read_x(p, k, c), lane[c]);
                }
            }
        }
    }
    for (int h = g / 2; h >= 1; h /= 2) {
        for (int l = 0; l < h; l++) {
            for (int64_t c = 0; c < width; c++) {
                acc[l * width + c] = acc[l * width + c] + acc[(l + h) * width + c];
            }
        }
    }
    for (int64_t c = 0; c < width; c++) {
        double z = acc[c];
        if (st->has_offset) {
            z = gr->by_rows ? z + v[c] : fma(st->offset[m], v[c], z);
        }
        write_z(p, m, c, z);
    }
}

void spart_vcs_host_product(const spart_vcs_kernel_grouping *grouping,
                            const spart_vcs_kernel_stats *stats,
                            const spart_vcs_kernel_product *product, double *scratch, int threads)
{
    const int64_t width = product->width;
    if (width <= 0) {
        return;
    }
    double *v = scratch;
    double *parts = v + width;
    double *lanes = parts + (int64_t)SPART_VCS_RANK1_PARTS * width;
    if (stats->has_offset) {
        rank1_vector(grouping, stats, product, parts, v, threads);
    }
    const int64_t lane_doubles = (int64_t)grouping->group_size * width;
    /* small products stay on one thread (the order is the same) */
    const int parallel = grouping->n_major * width > 1024;
#pragma omp parallel num_threads(threads) if (parallel)
    {
        double *acc = lanes + (int64_t)omp_get_thread_num() * lane_doubles;
#pragma omp for schedule(dynamic, 64)
        for (int64_t m = 0; m < grouping->n_major; m++) {
            slice_product(grouping, stats, product, v, m, acc);
        }
    }
}
