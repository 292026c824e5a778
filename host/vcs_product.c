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

/* A slice's entries are prepared in blocks of this many (a multiple of 32,
 * so that a block starts at lane 0 of every g): their g's arguments, then
 * their Delta, then the lanes' fma. */
#define BLOCK 512

int64_t spart_vcs_host_scratch_doubles(const spart_vcs_kernel_grouping *grouping, int64_t width,
                                       int threads)
{
    return (int64_t)threads * (grouping->group_size * width + 2 * BLOCK) +
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

/* log1p(u) for 0 <= u <= DBL_MAX without a branch: spart_log1p's two
 * paths (the series near 0, the log of w = 1 + u elsewhere; w is then
 * normal and finite) both taken and one selected, the exponent of w made
 * a double by integer operations (exact), so a loop of these vectorizes
 * and gives spart_log1p's bits (the same operations in the same order). */
KERNEL_INLINE double log1p_nonnegative(double u)
{
    const double near = spart_log_atanh_series(u / (2.0 + u));
    const double w = 1.0 + u;
    uint64_t bits;
    memcpy(&bits, &w, sizeof bits);
    const uint64_t exponent_bits = (bits >> 52) | 0x4330000000000000ULL; /* 2^52 + E */
    double exponent;
    memcpy(&exponent, &exponent_bits, sizeof exponent);
    double k = (exponent - 4503599627370496.0) - 1023.0;
    const uint64_t mantissa_bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double mantissa;
    memcpy(&mantissa, &mantissa_bits, sizeof mantissa);
    const int halve = mantissa > 1.41421356237309504880;
    mantissa = halve ? mantissa * 0.5 : mantissa;
    k = halve ? k + 1.0 : k;
    const double log_m = spart_log_atanh_series((mantissa - 1.0) / (mantissa + 1.0));
    const double ln2_high = 6.93147180369123816490e-01;
    const double ln2_low = 1.90821492927058770002e-10;
    const double log_w = fma(k, ln2_high, fma(k, ln2_low, log_m));
    const double far = log_w * (u / (w - 1.0));
    return u < 0.41 ? near : far;
}

/* delta[j] = g(argument[j]), j < n: the log recipes by the loops above
 * (vectorized), then every argument outside [0, DBL_MAX] (after the
 * factor 1000 of log10(1 + 1000u)) again by the scalar g; the others by
 * the scalar g. The bits of spart_vcs_g either way. */
KERNEL_INLINE void g_of_block(int g_code, const double *argument, double *delta, int64_t n)
{
    if (g_code == SPART_VCS_G_LOG1P) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            delta[j] = log1p_nonnegative(argument[j]);
        }
    } else if (g_code == SPART_VCS_G_LOG10_1P1000) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            delta[j] = log1p_nonnegative(1000.0 * argument[j]) * SPART_VCS_INVERSE_LN10;
        }
    } else {
        for (int64_t j = 0; j < n; j++) {
            delta[j] = spart_vcs_g(g_code, argument[j]);
        }
        return;
    }
    const double factor = g_code == SPART_VCS_G_LOG10_1P1000 ? 1000.0 : 1.0;
    for (int64_t j = 0; j < n; j++) {
        const double u = factor * argument[j];
        if (!(u >= 0.0 && u <= 1.7976931348623157e308)) {
            delta[j] = spart_vcs_g(g_code, argument[j]);
        }
    }
}

/* Delta of the block e0 .. e0 + n - 1 of slice m into delta (argument is
 * scratch); *run is the run holding e0 and moves on. st->scale NULL: every
 * s is 1 (not multiplied: the same bits). */
KERNEL_INLINE void block_deltas(const spart_vcs_kernel_grouping *gr,
                                const spart_vcs_kernel_stats *st, int64_t m, double major_a,
                                double major_b, int64_t e0, int64_t n, int64_t *run,
                                double *argument, double *delta)
{
    const int64_t e_end = e0 + n;
    int64_t u = *run;
    for (int64_t e = e0; e < e_end; u++) {
        const double x = gr->values[u];
        int64_t e_last = offset_at(gr->value_ptr, gr->offset_bytes, u + 1);
        e_last = e_last < e_end ? e_last : e_end;
        if (gr->minor_factor_is_one) {
            const double g_run = spart_vcs_g(st->g_code, spart_vcs_argument(x, major_a, major_b));
            if (st->scale == NULL) { /* s = 1: 1 * g is g */
                for (; e < e_last; e++) {
                    delta[e - e0] = g_run;
                }
            }
            for (; e < e_last; e++) {
                const double s = gr->by_rows ? st->scale[index_at(gr->indices, gr->index_bytes, e)]
                                             : st->scale[m];
                delta[e - e0] = s * g_run;
            }
        } else if (gr->by_rows) {
            for (; e < e_last; e++) {
                const int64_t k = index_at(gr->indices, gr->index_bytes, e);
                argument[e - e0] = spart_vcs_argument(x, major_a, st->col_factor[k]);
            }
        } else {
            for (; e < e_last; e++) {
                const int64_t k = index_at(gr->indices, gr->index_bytes, e);
                argument[e - e0] = spart_vcs_argument(x, st->row_factor[k], major_b);
            }
        }
    }
    /* the run that holds e_end (or the last one) */
    *run = offset_at(gr->value_ptr, gr->offset_bytes, u) > e_end ? u - 1 : u;
    if (!gr->minor_factor_is_one) {
        g_of_block(st->g_code, argument, delta, n);
        for (int64_t j = 0; j < n && st->scale != NULL; j++) {
            const double s = gr->by_rows ? st->scale[index_at(gr->indices, gr->index_bytes, e0 + j)]
                                         : st->scale[m];
            delta[j] = s * delta[j];
        }
    }
}

/* X's row of entry e (e < e_end), asked for ahead of its use: B @ A
 * gathers rows of a B^T of n_rows x width, beyond the caches of one core. */
#define PREFETCH 16
KERNEL_INLINE void prefetch_row(const spart_vcs_kernel_grouping *gr,
                                const spart_vcs_kernel_product *p, int64_t e, int64_t e_end)
{
#if defined(__GNUC__) || defined(__clang__)
    if (e < e_end) {
        __builtin_prefetch((const double *)p->x +
                           index_at(gr->indices, gr->index_bytes, e) * p->x_row_stride);
    }
#else
    (void)gr, (void)p, (void)e, (void)e_end;
#endif
}

/* The lanes' fma of a block (it starts at lane 0) for 8 float64 columns
 * in unit stride, G lanes in registers: entry j to lane j mod G, the
 * order of every lane's sum unchanged. */
KERNEL_INLINE void block_fma_8(const spart_vcs_kernel_grouping *gr,
                               const spart_vcs_kernel_product *p, int G, int64_t e0, int64_t n,
                               const double *delta, double *acc)
{
    double lanes[8][8];
    for (int l = 0; l < G; l++) {
        for (int c = 0; c < 8; c++) {
            lanes[l][c] = acc[l * 8 + c];
        }
    }
    const double *x = (const double *)p->x;
    const int64_t stride = p->x_row_stride;
    int64_t j = 0;
    for (; j + G <= n; j += G) {
        for (int l = 0; l < G; l++) {
            prefetch_row(gr, p, e0 + j + l + PREFETCH, e0 + n);
            const double *row = x + index_at(gr->indices, gr->index_bytes, e0 + j + l) * stride;
            const double d = delta[j + l];
            for (int c = 0; c < 8; c++) {
                lanes[l][c] = fma(d, row[c], lanes[l][c]);
            }
        }
    }
    for (int l = 0; j < n; j++, l++) {
        const double *row = x + index_at(gr->indices, gr->index_bytes, e0 + j) * stride;
        for (int c = 0; c < 8; c++) {
            lanes[l][c] = fma(delta[j], row[c], lanes[l][c]);
        }
    }
    for (int l = 0; l < G; l++) {
        for (int c = 0; c < 8; c++) {
            acc[l * 8 + c] = lanes[l][c];
        }
    }
}

/* The lanes' fma of a block, any width and stride (acc in memory). */
KERNEL_INLINE void block_fma(const spart_vcs_kernel_grouping *gr, const spart_vcs_kernel_product *p,
                             int64_t e0, int64_t n, const double *delta, double *acc)
{
    const int64_t width = p->width;
    const int g = gr->group_size;
    if (width == 8 && p->x_col_stride == 1 && !p->is_float) { /* a constant width */
        for (int64_t j = 0; j < n; j++) {
            prefetch_row(gr, p, e0 + j + PREFETCH, e0 + n);
            const double *x_row = (const double *)p->x +
                                  index_at(gr->indices, gr->index_bytes, e0 + j) * p->x_row_stride;
            double *lane = acc + (j & (g - 1)) * 8;
            for (int c = 0; c < 8; c++) {
                lane[c] = fma(delta[j], x_row[c], lane[c]);
            }
        }
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        const int64_t k = index_at(gr->indices, gr->index_bytes, e0 + j);
        const double d = delta[j];
        double *lane = acc + (j & (g - 1)) * width;
        if (p->x_col_stride == 1 && !p->is_float) { /* the common case, vectorizable */
            const double *x_row = (const double *)p->x + k * p->x_row_stride;
            for (int64_t c = 0; c < width; c++) {
                lane[c] = fma(d, x_row[c], lane[c]);
            }
        } else if (p->x_col_stride == 1) {
            const float *x_row = (const float *)p->x + k * p->x_row_stride;
            for (int64_t c = 0; c < width; c++) {
                lane[c] = fma(d, (double)x_row[c], lane[c]);
            }
        } else {
            for (int64_t c = 0; c < width; c++) {
                lane[c] = fma(d, read_x(p, k, c), lane[c]);
            }
        }
    }
}

KERNEL_CLONES void spart_vcs_host_g_block(int g_code, const double *argument, double *g_values,
                                          int64_t n)
{
    g_of_block(g_code, argument, g_values, n);
}

/* One slice: block by block, the entries' Delta (vectorized g where it
 * depends on the entry), the lanes' sums into acc (g x width), then the
 * tree, the rank-1 term and the output row. */
KERNEL_CLONES static void slice_product(const spart_vcs_kernel_grouping *gr,
                                        const spart_vcs_kernel_stats *st,
                                        const spart_vcs_kernel_product *p, const double *v,
                                        int64_t m, double *acc, double *argument, double *delta)
{
    const int64_t width = p->width;
    const int g = gr->group_size;
    memset(acc, 0, (size_t)g * (size_t)width * sizeof(double));
    const int64_t run_first = offset_at(gr->major_ptr, gr->offset_bytes, m);
    const int64_t run_last = offset_at(gr->major_ptr, gr->offset_bytes, m + 1);
    const int64_t slice_start = offset_at(gr->value_ptr, gr->offset_bytes, run_first);
    const int64_t slice_end = offset_at(gr->value_ptr, gr->offset_bytes, run_last);
    /* the major axis's factors */
    const double major_a = gr->by_rows ? st->row_factor[m] : 1.0;
    const double major_b = gr->by_rows ? 1.0 : st->col_factor[m];
    const int fast = width == 8 && p->x_col_stride == 1 && !p->is_float && g <= 8;
    int64_t run = run_first;
    for (int64_t e0 = slice_start; e0 < slice_end; e0 += BLOCK) {
        const int64_t n = slice_end - e0 < BLOCK ? slice_end - e0 : BLOCK;
        block_deltas(gr, st, m, major_a, major_b, e0, n, &run, argument, delta);
        if (fast) {
            switch (g) { /* G a constant in each: the lanes stay in registers */
            case 1: block_fma_8(gr, p, 1, e0, n, delta, acc); break;
            case 2: block_fma_8(gr, p, 2, e0, n, delta, acc); break;
            case 4: block_fma_8(gr, p, 4, e0, n, delta, acc); break;
            default: block_fma_8(gr, p, 8, e0, n, delta, acc); break;
            }
        } else {
            block_fma(gr, p, e0, n, delta, acc);
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
    const int64_t lane_doubles = (int64_t)grouping->group_size * width + 2 * BLOCK;
    /* small products stay on one thread (the order is the same) */
    const int parallel = grouping->n_major * width > 1024;
#pragma omp parallel num_threads(threads) if (parallel)
    {
        double *acc = lanes + (int64_t)omp_get_thread_num() * lane_doubles;
        double *argument = acc + (int64_t)grouping->group_size * width;
        double *delta = argument + BLOCK;
#pragma omp for schedule(dynamic, 64)
        for (int64_t m = 0; m < grouping->n_major; m++) {
            slice_product(grouping, stats, product, v, m, acc, argument, delta);
        }
    }
}
