/*
 * host/csr_product_avx2.c: y = A x for one vector of the usual matrix
 * (float64 values, int32 columns) with AVX2 and FMA instructions: the
 * row-group order of host/csr_product.c, bit for bit, spelled out in
 * vector instructions because the compiler does not find them itself.
 *
 * The order (regridder.h): a row's entries are cut into chunks of
 * plan->chunk_length; in a chunk, lane l of g sums entries l, l+g, l+2g,
 * ... with fma from +0.0; the lanes combine in a binary tree (lane l +=
 * lane l+h for h = g/2, ..., 1); the chunk sums add in chunk order.
 *
 * For g >= 4 lane l of the order is element l % 4 of vector register
 * l / 4: a group of g entries is g/4 vector fmas, each on four values
 * loaded at once and four x values fetched by one hardware gather (x[col]
 * for four columns), which is what the plain C kernel cannot get from the
 * compiler. A row's last, partial group updates only the lanes it reaches:
 * the loads are masked and the fma's result is blended into those lanes
 * alone, so the other lanes keep their exact values (-0.0 included). The
 * tree adds the registers pairwise (h >= 4), then the halves and the
 * elements of the last register in the same pairs as the scalar tree.
 *
 * For g = 1 and 2 (rows of a few entries, as in a backprojection) the
 * lanes are scalar registers: there is nothing to gather four at a time.
 *
 * Only compiled for x86-64 with GCC or clang; elsewhere
 * spart_host_avx2_available() says no and host/csr_product.c keeps its own
 * kernel.
 */
#include <math.h>

#include "regridder_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Every function of the kernel is compiled for AVX2 + FMA and inlined into
 * the one entry point, so that the group size is a constant in each copy. */
#define AVX2_FUNCTION static inline __attribute__((target("avx2,fma"), always_inline))

int spart_host_avx2_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* acc + values[k .. k+3] * x[columns[k .. k+3]], lane by lane with fma. */
AVX2_FUNCTION __m256d quad_fma(const int32_t *columns, const double *values, const double *x,
                               int64_t k, __m256d acc)
{
    __m128i index = _mm_loadu_si128((const __m128i *)(columns + k));
    __m256d gathered = _mm256_i32gather_pd(x, index, 8);
    return _mm256_fmadd_pd(_mm256_loadu_pd(values + k), gathered, acc);
}

/* The same for the first `count` (1 to 3) lanes only; the other lanes of
 * acc are returned unchanged, and nothing past entry k + count - 1 is
 * read. */
AVX2_FUNCTION __m256d quad_fma_partial(const int32_t *columns, const double *values,
                                       const double *x, int64_t k, int count, __m256d acc)
{
    __m256i reached = _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
    __m128i reached32 = _mm_cmpgt_epi32(_mm_set1_epi32(count), _mm_setr_epi32(0, 1, 2, 3));
    __m128i index = _mm_maskload_epi32((const int *)(columns + k), reached32);
    __m256d gathered =
        _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, index, _mm256_castsi256_pd(reached), 8);
    __m256d value = _mm256_maskload_pd(values + k, reached);
    __m256d updated = _mm256_fmadd_pd(value, gathered, acc);
    return _mm256_blendv_pd(acc, updated, _mm256_castsi256_pd(reached));
}

/* One chunk, g = 4 * quads lanes in `quads` registers (quads = 1, 2, 4, 8). */
AVX2_FUNCTION double chunk_sum_quads(const int32_t *columns, const double *values, const double *x,
                                     int64_t begin, int64_t end, int quads)
{
    __m256d lanes[8];
    for (int q = 0; q < quads; q++) {
        lanes[q] = _mm256_setzero_pd();
    }
    int64_t group_size = 4 * (int64_t)quads;
    int64_t k = begin;
    for (; k + group_size <= end; k += group_size) {
        for (int q = 0; q < quads; q++) {
            lanes[q] = quad_fma(columns, values, x, k + 4 * q, lanes[q]);
        }
    }
    for (int q = 0; q < quads && k + 4 * q < end; q++) { /* the partial group */
        int64_t left = end - (k + 4 * q);
        lanes[q] = left >= 4 ? quad_fma(columns, values, x, k + 4 * q, lanes[q])
                             : quad_fma_partial(columns, values, x, k + 4 * q, (int)left, lanes[q]);
    }
    /* the tree: lane l += lane l + h for h = g/2, ..., 4 (whole registers),
     * then h = 2 (the register's halves) and h = 1 (its two elements) */
    for (int half = quads / 2; half >= 1; half /= 2) {
        for (int q = 0; q < half; q++) {
            lanes[q] = _mm256_add_pd(lanes[q], lanes[q + half]);
        }
    }
    __m128d pairs =
        _mm_add_pd(_mm256_castpd256_pd128(lanes[0]), _mm256_extractf128_pd(lanes[0], 1));
    return _mm_cvtsd_f64(_mm_add_sd(pairs, _mm_unpackhi_pd(pairs, pairs)));
}

/* One chunk with g = 1: a single fma chain. */
AVX2_FUNCTION double chunk_sum_one(const int32_t *columns, const double *values, const double *x,
                                   int64_t begin, int64_t end)
{
    double lane = 0.0;
    for (int64_t k = begin; k < end; k++) {
        lane = fma(values[k], x[columns[k]], lane);
    }
    return lane;
}

/* One chunk with g = 2: even entries in lane 0, odd ones in lane 1. */
AVX2_FUNCTION double chunk_sum_two(const int32_t *columns, const double *values, const double *x,
                                   int64_t begin, int64_t end)
{
    double even = 0.0, odd = 0.0;
    int64_t k = begin;
    for (; k + 2 <= end; k += 2) {
        even = fma(values[k], x[columns[k]], even);
        odd = fma(values[k + 1], x[columns[k + 1]], odd);
    }
    if (k < end) {
        even = fma(values[k], x[columns[k]], even);
    }
    return even + odd;
}

AVX2_FUNCTION double chunk_sum(const int32_t *columns, const double *values, const double *x,
                               int64_t begin, int64_t end, int group_size)
{
    switch (group_size) {
    case 1: return chunk_sum_one(columns, values, x, begin, end);
    case 2: return chunk_sum_two(columns, values, x, begin, end);
    case 4: return chunk_sum_quads(columns, values, x, begin, end, 1);
    case 8: return chunk_sum_quads(columns, values, x, begin, end, 2);
    case 16: return chunk_sum_quads(columns, values, x, begin, end, 4);
    default: return chunk_sum_quads(columns, values, x, begin, end, 8);
    }
}

/* Rows [row_begin, row_end): chunk sums in chunk order; a row that fits in
 * one chunk (all but the longest) is that chunk's sum. */
AVX2_FUNCTION void rows_of_group_size(const spart_csr *csr, int64_t chunk, const double *x,
                                      double *y, int64_t row_begin, int64_t row_end, int group_size)
{
    const int64_t *row_ptr = csr->row_ptr;
    const int32_t *columns = csr->columns32;
    const double *values = csr->values64;
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        if (end - begin <= chunk) {
            y[r] = chunk_sum(columns, values, x, begin, end, group_size);
            continue;
        }
        double total = 0.0;
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            double sum = chunk_sum(columns, values, x, start, stop, group_size);
            total = start == begin ? sum : total + sum;
        }
        y[r] = total;
    }
}

__attribute__((target("avx2,fma"))) void
spart_host_csr_rows_avx2(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                         double *y, int64_t row_begin, int64_t row_end)
{
    int64_t chunk = plan->chunk_length;
    switch (plan->group_size) {
    case 1: rows_of_group_size(csr, chunk, x, y, row_begin, row_end, 1); break;
    case 2: rows_of_group_size(csr, chunk, x, y, row_begin, row_end, 2); break;
    case 4: rows_of_group_size(csr, chunk, x, y, row_begin, row_end, 4); break;
    case 8: rows_of_group_size(csr, chunk, x, y, row_begin, row_end, 8); break;
    case 16: rows_of_group_size(csr, chunk, x, y, row_begin, row_end, 16); break;
    default: rows_of_group_size(csr, chunk, x, y, row_begin, row_end, 32); break;
    }
}

#else

int spart_host_avx2_available(void)
{
    return 0;
}

void spart_host_csr_rows_avx2(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                              double *y, int64_t row_begin, int64_t row_end)
{
    (void)csr, (void)plan, (void)x, (void)y, (void)row_begin, (void)row_end;
}

#endif
