/*
 * host/csr_product_simd.c: y = A x for one vector of the usual matrix
 * (float64 values, int32 columns) with the vector instructions of x86-64
 * (AVX2 and FMA, or AVX-512): the row-group order of host/csr_product.c,
 * bit for bit, spelled out in vector instructions because the compiler
 * does not find them itself.
 *
 * The order (regridder.h): a row's entries are cut into chunks of
 * plan->chunk_length; in a chunk, lane l of g sums entries l, l+g, l+2g,
 * ... with fma from +0.0; the lanes combine in a binary tree (lane l +=
 * lane l+h for h = g/2, ..., 1); the chunk sums add in chunk order.
 *
 * For g >= 4, lane l of the order is element l % W of vector register
 * l / W, W = 4 doubles (AVX2) or 8 (AVX-512, for g >= 8): a group of g
 * entries is g / W vector fmas, each on W values loaded at once and W x
 * values fetched by one hardware gather (x[column] for W columns), which
 * is what the plain C kernel cannot get from the compiler. A row's last,
 * partial group updates only the lanes it reaches: the loads are masked
 * and the fma's result goes into those lanes alone (a blend, or an
 * AVX-512 mask), so the other lanes keep their exact values (-0.0
 * included). The tree adds whole registers pairwise while h >= W, then the
 * halves of the last register, and so on down to its first two elements:
 * the same pairs as the scalar tree.
 *
 * For g = 1 and 2 (rows of a few entries, as in a backprojection) the
 * lanes are scalar registers: there is nothing to gather four at a time.
 *
 * Only compiled for x86-64 with GCC or clang; elsewhere the level is
 * SPART_SIMD_NONE and host/csr_product.c keeps its own kernel.
 */
#include <math.h>

#include "operator/regridder_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Every function of a kernel is compiled for its instruction set and
 * inlined into the one entry point of that set, so that the group size is
 * a constant in each copy. */
#define AVX2_FUNCTION static inline __attribute__((target("avx2,fma"), always_inline))
#define AVX512_FUNCTION                                                                            \
    static inline __attribute__((target("avx512f,avx512vl,avx2,fma"), always_inline))

spart_simd_level spart_host_simd_level(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        return SPART_SIMD_NONE;
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
        return SPART_SIMD_AVX512;
    }
    return SPART_SIMD_AVX2;
}

/* ---- lanes of one or two scalar registers (g = 1, 2) ---------------------------------------- */

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

/* ---- lanes in AVX2 registers of 4 doubles ---------------------------------------------------- */

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

/* The tree within one register of 4 lanes: (l0 + l2) + (l1 + l3). */
AVX2_FUNCTION double quad_tree(__m256d lanes)
{
    __m128d pairs = _mm_add_pd(_mm256_castpd256_pd128(lanes), _mm256_extractf128_pd(lanes, 1));
    return _mm_cvtsd_f64(_mm_add_sd(pairs, _mm_unpackhi_pd(pairs, pairs)));
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
    for (int half = quads / 2; half >= 1; half /= 2) { /* h = g/2, ..., 4 */
        for (int q = 0; q < half; q++) {
            lanes[q] = _mm256_add_pd(lanes[q], lanes[q + half]);
        }
    }
    return quad_tree(lanes[0]);
}

AVX2_FUNCTION double chunk_sum_avx2(const int32_t *columns, const double *values, const double *x,
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

/* ---- lanes in AVX-512 registers of 8 doubles (g >= 8) ------------------------------------- */

/* acc + values[k .. k+7] * x[columns[k .. k+7]], lane by lane with fma. */
AVX512_FUNCTION __m512d octet_fma(const int32_t *columns, const double *values, const double *x,
                                  int64_t k, __m512d acc)
{
    __m256i index = _mm256_loadu_si256((const __m256i *)(columns + k));
    __m512d gathered = _mm512_i32gather_pd(index, x, 8);
    return _mm512_fmadd_pd(_mm512_loadu_pd(values + k), gathered, acc);
}

/* The same for the first `count` (1 to 7) lanes only: the loads are
 * masked, and the fma writes those lanes alone (the others keep acc's). */
AVX512_FUNCTION __m512d octet_fma_partial(const int32_t *columns, const double *values,
                                          const double *x, int64_t k, int count, __m512d acc)
{
    __mmask8 reached = (__mmask8)((1u << count) - 1u);
    __m256i index = _mm256_maskz_loadu_epi32(reached, columns + k);
    __m512d gathered = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), reached, index, x, 8);
    __m512d value = _mm512_maskz_loadu_pd(reached, values + k);
    return _mm512_mask3_fmadd_pd(value, gathered, acc, reached);
}

/* One chunk, g = 8 * octets lanes in `octets` registers (1, 2, 4). */
AVX512_FUNCTION double chunk_sum_octets(const int32_t *columns, const double *values,
                                        const double *x, int64_t begin, int64_t end, int octets)
{
    __m512d lanes[4];
    for (int q = 0; q < octets; q++) {
        lanes[q] = _mm512_setzero_pd();
    }
    int64_t group_size = 8 * (int64_t)octets;
    int64_t k = begin;
    for (; k + group_size <= end; k += group_size) {
        for (int q = 0; q < octets; q++) {
            lanes[q] = octet_fma(columns, values, x, k + 8 * q, lanes[q]);
        }
    }
    for (int q = 0; q < octets && k + 8 * q < end; q++) { /* the partial group */
        int64_t left = end - (k + 8 * q);
        lanes[q] = left >= 8
                       ? octet_fma(columns, values, x, k + 8 * q, lanes[q])
                       : octet_fma_partial(columns, values, x, k + 8 * q, (int)left, lanes[q]);
    }
    for (int half = octets / 2; half >= 1; half /= 2) { /* h = g/2, ..., 8 */
        for (int q = 0; q < half; q++) {
            lanes[q] = _mm512_add_pd(lanes[q], lanes[q + half]);
        }
    }
    /* h = 4: the register's halves, then the 4-lane tree */
    __m256d quad =
        _mm256_add_pd(_mm512_castpd512_pd256(lanes[0]), _mm512_extractf64x4_pd(lanes[0], 1));
    __m128d pairs = _mm_add_pd(_mm256_castpd256_pd128(quad), _mm256_extractf128_pd(quad, 1));
    return _mm_cvtsd_f64(_mm_add_sd(pairs, _mm_unpackhi_pd(pairs, pairs)));
}

AVX512_FUNCTION double chunk_sum_avx512(const int32_t *columns, const double *values,
                                        const double *x, int64_t begin, int64_t end, int group_size)
{
    switch (group_size) {
    case 8: return chunk_sum_octets(columns, values, x, begin, end, 1);
    case 16: return chunk_sum_octets(columns, values, x, begin, end, 2);
    case 32: return chunk_sum_octets(columns, values, x, begin, end, 4);
    default: return chunk_sum_avx2(columns, values, x, begin, end, group_size);
    }
}

/* ---- rows --------------------------------------------------------------------------------- */

/* How far ahead of the row being summed one vector's product asks for the
 * matrix's values and columns (a software prefetch), and up to what row
 * length. Rows of a few dozen entries (a forward model's: case b of
 * bench_regridder, 56 to 64) each start a short run that the hardware
 * prefetcher alone keeps too few lines ahead of: with the prefetch, case
 * b's product takes 15-20 % less time (interleaved runs, 2 threads).
 * Longer rows are long runs that the hardware follows by itself. */
#define SINGLE_PREFETCH_ENTRIES 512
#define SINGLE_PREFETCH_LONGEST_ROW 256

/* Ask for the values and columns of entries [begin, end) +
 * SINGLE_PREFETCH_ENTRIES (a line of each at a time) when the row is short
 * and they lie before prefetch_end, the end of the rows being worked. */
static inline __attribute__((always_inline)) void prefetch_row(const int32_t *columns,
                                                               const double *values, int64_t begin,
                                                               int64_t end, int64_t prefetch_end)
{
    if (end - begin > SINGLE_PREFETCH_LONGEST_ROW || end + SINGLE_PREFETCH_ENTRIES > prefetch_end) {
        return;
    }
    for (int64_t k = begin + SINGLE_PREFETCH_ENTRIES; k < end + SINGLE_PREFETCH_ENTRIES; k += 8) {
        _mm_prefetch((const char *)(values + k), _MM_HINT_T0);
    }
    for (int64_t k = begin + SINGLE_PREFETCH_ENTRIES; k < end + SINGLE_PREFETCH_ENTRIES; k += 16) {
        _mm_prefetch((const char *)(columns + k), _MM_HINT_T0);
    }
}

/* A chunk's sum in one instruction set: chunk_sum_avx2 or chunk_sum_avx512. */
typedef double (*chunk_sum_function)(const int32_t *columns, const double *values, const double *x,
                                     int64_t begin, int64_t end, int group_size);

/* Rows [row_begin, row_end) into y[0 .. row_end - row_begin): chunk sums in
 * chunk order; a row that fits in one chunk (all but the longest) is that
 * chunk's sum. Written once for both instruction sets: it is inlined into
 * rows_avx2 and rows_avx512, where chunk_sum is a known function of that
 * set, so the compiler inlines the sum with the group size a constant (a
 * function of one set cannot be inlined into a function of the other,
 * hence the two wrappers). */
static inline __attribute__((always_inline)) void
rows_of_chunks(const int64_t *row_ptr, const int32_t *columns, const double *values, int64_t chunk,
               const double *x, double *y, int64_t row_begin, int64_t row_end, int group_size,
               chunk_sum_function chunk_sum)
{
    int64_t prefetch_end = row_ptr[row_end];
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        prefetch_row(columns, values, begin, end, prefetch_end);
        if (end - begin <= chunk) {
            y[r - row_begin] = chunk_sum(columns, values, x, begin, end, group_size);
            continue;
        }
        double total = 0.0;
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            double sum = chunk_sum(columns, values, x, start, stop, group_size);
            total = start == begin ? sum : total + sum;
        }
        y[r - row_begin] = total;
    }
}

AVX2_FUNCTION void rows_avx2(const int64_t *row_ptr, const int32_t *columns, const double *values,
                             int64_t chunk, const double *x, double *y, int64_t row_begin,
                             int64_t row_end, int group_size)
{
    rows_of_chunks(row_ptr, columns, values, chunk, x, y, row_begin, row_end, group_size,
                   chunk_sum_avx2);
}

AVX512_FUNCTION void rows_avx512(const int64_t *row_ptr, const int32_t *columns,
                                 const double *values, int64_t chunk, const double *x, double *y,
                                 int64_t row_begin, int64_t row_end, int group_size)
{
    rows_of_chunks(row_ptr, columns, values, chunk, x, y, row_begin, row_end, group_size,
                   chunk_sum_avx512);
}

/* Rows [row_begin, row_end) of a matrix with a short-row index (g = 1 or
 * 2, rows of at most 255 entries, so each row is one chunk): each row's
 * entries start where the previous row's end, counted from its block's
 * start, so row_ptr is not read. */
AVX2_FUNCTION void rows_short_avx2(const spart_product_plan *plan, const int32_t *columns,
                                   const double *values, const double *x, double *y,
                                   int64_t row_begin, int64_t row_end, int group_size)
{
    const uint8_t *lengths = plan->row_lengths;
    int64_t block_first = row_begin - row_begin % SPART_SHORT_ROW_BLOCK;
    int64_t begin = plan->block_starts[block_first / SPART_SHORT_ROW_BLOCK];
    for (int64_t r = block_first; r < row_begin; r++) {
        begin += lengths[r];
    }
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t end = begin + lengths[r];
        y[r - row_begin] = group_size == 1 ? chunk_sum_one(columns, values, x, begin, end)
                                           : chunk_sum_two(columns, values, x, begin, end);
        begin = end;
    }
}

__attribute__((target("avx2,fma"))) static void
product_short_rows(const spart_csr *csr, const spart_product_plan *plan, const double *x, double *y,
                   int64_t row_begin, int64_t row_end)
{
    if (plan->group_size == 1) {
        rows_short_avx2(plan, csr->columns32, csr->values64, x, y, row_begin, row_end, 1);
    } else {
        rows_short_avx2(plan, csr->columns32, csr->values64, x, y, row_begin, row_end, 2);
    }
}

__attribute__((target("avx2,fma"))) static void product_avx2(const spart_csr *csr, int64_t chunk,
                                                             int group_size, const double *x,
                                                             double *y, int64_t row_begin,
                                                             int64_t row_end)
{
    const int64_t *p = csr->row_ptr;
    const int32_t *c = csr->columns32;
    const double *v = csr->values64;
    switch (group_size) {
    case 1: rows_avx2(p, c, v, chunk, x, y, row_begin, row_end, 1); break;
    case 2: rows_avx2(p, c, v, chunk, x, y, row_begin, row_end, 2); break;
    case 4: rows_avx2(p, c, v, chunk, x, y, row_begin, row_end, 4); break;
    case 8: rows_avx2(p, c, v, chunk, x, y, row_begin, row_end, 8); break;
    case 16: rows_avx2(p, c, v, chunk, x, y, row_begin, row_end, 16); break;
    default: rows_avx2(p, c, v, chunk, x, y, row_begin, row_end, 32); break;
    }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) static void
product_avx512(const spart_csr *csr, int64_t chunk, int group_size, const double *x, double *y,
               int64_t row_begin, int64_t row_end)
{
    const int64_t *p = csr->row_ptr;
    const int32_t *c = csr->columns32;
    const double *v = csr->values64;
    switch (group_size) {
    case 8: rows_avx512(p, c, v, chunk, x, y, row_begin, row_end, 8); break;
    case 16: rows_avx512(p, c, v, chunk, x, y, row_begin, row_end, 16); break;
    case 32: rows_avx512(p, c, v, chunk, x, y, row_begin, row_end, 32); break;
    default: product_avx2(csr, chunk, group_size, x, y, row_begin, row_end); break;
    }
}

/* ---- batches of 4 or 8 interleaved vectors ---------------------------------------------------
 * X[column * T + t] and Y[row * T + t]: the T values of one column lie
 * side by side, so one vector register holds an entry's x for every
 * vector (T = 8: one AVX-512 register; T = 4: one AVX2 register; T = 8
 * with AVX2: two). Lane l of the order is then a register (or two) of T
 * accumulators: vector t's lane l sums entries l, l+g, ... with fma, in
 * order, its tree and chunk sums the same pairs as one vector's, so a
 * column in a batch equals the column alone. */

/* acc + values[k] * X[columns[k]] for the 4 vectors of one AVX2 register
 * (`half` 0 or 1: which four of eight). */
AVX2_FUNCTION __m256d batch_quad_fma(const int32_t *columns, const double *values, const double *x,
                                     int64_t k, int width, int half, __m256d acc)
{
    const double *xk = x + (int64_t)columns[k] * width + 4 * half;
    return _mm256_fmadd_pd(_mm256_broadcast_sd(values + k), _mm256_loadu_pd(xk), acc);
}

/* One chunk of a batch of width = 4 * halves vectors (halves 1 or 2),
 * g lanes: the chunk's sums of the vectors into out[0 .. width). */
AVX2_FUNCTION void chunk_sum_batch_avx2(const int32_t *columns, const double *values,
                                        const double *x, int64_t begin, int64_t end, int group_size,
                                        int halves, __m256d *out)
{
    __m256d lanes[32][2];
    for (int l = 0; l < group_size; l++) {
        for (int h = 0; h < halves; h++) {
            lanes[l][h] = _mm256_setzero_pd();
        }
    }
    int width = 4 * halves;
    int64_t k = begin;
    for (; k + group_size <= end; k += group_size) {
        for (int l = 0; l < group_size; l++) {
            for (int h = 0; h < halves; h++) {
                lanes[l][h] = batch_quad_fma(columns, values, x, k + l, width, h, lanes[l][h]);
            }
        }
    }
    for (int l = 0; l < group_size && k + l < end; l++) { /* the partial group */
        for (int h = 0; h < halves; h++) {
            lanes[l][h] = batch_quad_fma(columns, values, x, k + l, width, h, lanes[l][h]);
        }
    }
    for (int half = group_size / 2; half >= 1; half /= 2) {
        for (int l = 0; l < half; l++) {
            for (int h = 0; h < halves; h++) {
                lanes[l][h] = _mm256_add_pd(lanes[l][h], lanes[l + half][h]);
            }
        }
    }
    for (int h = 0; h < halves; h++) {
        out[h] = lanes[0][h];
    }
}

/* Four of row r's sums (vectors 4 * half to 4 * half + 3) into y (at row
 * r - row_begin of the layout). */
AVX2_FUNCTION void store_batch_quad_avx2(double *y, const spart_batch_layout *layout, int64_t row,
                                         int half, __m256d sums)
{
    int64_t stride = layout->vector_stride;
    double *at = y + row * layout->row_stride + 4 * half * stride;
    if (stride == 1) {
        _mm256_storeu_pd(at, sums);
        return;
    }
    __m128d low = _mm256_castpd256_pd128(sums), high = _mm256_extractf128_pd(sums, 1);
    _mm_storel_pd(at, low);
    _mm_storeh_pd(at + stride, low);
    _mm_storel_pd(at + 2 * stride, high);
    _mm_storeh_pd(at + 3 * stride, high);
}

AVX2_FUNCTION void rows_batch_avx2(const int64_t *row_ptr, const int32_t *columns,
                                   const double *values, int64_t chunk, const double *x, double *y,
                                   const spart_batch_layout *layout, int64_t row_begin,
                                   int64_t row_end, int group_size, int halves)
{
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        __m256d total[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            __m256d sum[2];
            chunk_sum_batch_avx2(columns, values, x, start, stop, group_size, halves, sum);
            for (int h = 0; h < halves; h++) {
                total[h] = start == begin ? sum[h] : _mm256_add_pd(total[h], sum[h]);
            }
        }
        for (int h = 0; h < halves; h++) { /* an empty row: +0.0 */
            store_batch_quad_avx2(y, layout, r - row_begin, h, total[h]);
        }
    }
}

/* acc + values[k] * X[columns[k]] for the 8 interleaved vectors. */
AVX512_FUNCTION __m512d batch_octet_fma(const int32_t *columns, const double *values,
                                        const double *x, int64_t k, __m512d acc)
{
    __m512d xk = _mm512_loadu_pd(x + (int64_t)columns[k] * 8);
    return _mm512_fmadd_pd(_mm512_set1_pd(values[k]), xk, acc);
}

/* How far ahead of the entries being summed a batch of 8 asks for the
 * matrix's values and columns (a software prefetch). Each entry takes a
 * batch longer than one vector, and the hardware prefetcher alone then
 * keeps too few of the matrix's lines in flight: with it, rows of
 * thousands of entries (bench_regridder's case c) take 10 to 15 % less
 * time. */
#define BATCH_PREFETCH_ENTRIES 512

/* Ask for the values and columns of entries k + BATCH_PREFETCH_ENTRIES
 * onwards (count of them, count >= 8: a line of values a time), unless
 * they lie past prefetch_end, the end of the rows being worked. */
AVX512_FUNCTION void prefetch_entries(const int32_t *columns, const double *values, int64_t k,
                                      int count, int64_t prefetch_end)
{
    int64_t ahead = k + BATCH_PREFETCH_ENTRIES;
    if (count < 8 || ahead + count > prefetch_end) {
        return;
    }
    for (int l = 0; l < count; l += 8) {
        _mm_prefetch((const char *)(values + ahead + l), _MM_HINT_T0);
    }
    _mm_prefetch((const char *)(columns + ahead), _MM_HINT_T0);
}

/* One chunk of a batch of 8 vectors in AVX-512 registers, g lanes: lane l
 * sums entries begin + l, + g, + 2g, ... with fma from +0.0, then the
 * tree. The loops over the lanes are unrolled so that each lane is a
 * register (at -O2 GCC left them in a stack array, loaded and stored for
 * every entry); with g = 32 the compiler keeps most of the 32 lanes in
 * the 32 registers and spills a few, which measured faster than walking
 * the chunk twice with 16 lanes each (case c's kernel 10-25 %). */
AVX512_FUNCTION __m512d chunk_sum_batch_avx512(const int32_t *columns, const double *values,
                                               const double *x, int64_t begin, int64_t end,
                                               int group_size, int64_t prefetch_end)
{
    __m512d lanes[32];
#pragma GCC unroll 32
    for (int l = 0; l < group_size; l++) {
        lanes[l] = _mm512_setzero_pd();
    }
    int64_t k = begin;
    for (; k + group_size <= end; k += group_size) {
        prefetch_entries(columns, values, k, group_size, prefetch_end);
#pragma GCC unroll 32
        for (int l = 0; l < group_size; l++) {
            lanes[l] = batch_octet_fma(columns, values, x, k + l, lanes[l]);
        }
    }
#pragma GCC unroll 32
    for (int l = 0; l < group_size; l++) { /* the partial group */
        if (k + l < end) {
            lanes[l] = batch_octet_fma(columns, values, x, k + l, lanes[l]);
        }
    }
#pragma GCC unroll 32
    for (int half = group_size / 2; half >= 1; half /= 2) {
#pragma GCC unroll 16
        for (int l = 0; l < half; l++) {
            lanes[l] = _mm512_add_pd(lanes[l], lanes[l + half]);
        }
    }
    return lanes[0];
}

/* The lane that comes i-th when a chunk's g lanes are visited in the order
 * of the tree's leaves: i with its log2(g) bits reversed (g = 8: lanes 0,
 * 4, 2, 6, 1, 5, 3, 7). */
AVX512_FUNCTION int tree_leaf(int i, int group_size)
{
    int lane = 0;
#pragma GCC unroll 5
    for (int bit = 1; bit < group_size; bit *= 2) {
        lane = 2 * lane + ((i & bit) != 0);
    }
    return lane;
}

/* A chunk of at most 2g entries (every row of a forward model like
 * bench_regridder's case b: g = 32, rows of up to 64 entries) for a batch
 * of 8, lane by lane: lane l is its entries l and l + g (those that
 * exist), with fma from +0.0, as in chunk_sum_batch_avx512. The lanes are
 * visited in the order of the tree's leaves, and each pair of subtrees is
 * added as soon as its right half is done (left + right, as the tree adds
 * lane l and lane l + h): the same operations on the same operands, with
 * at most log2(g) + 1 sums live instead of g lanes. With g lanes live, the
 * compiler spilled all 32 around a row's partial group (case b's kernel
 * in cache: 1.25 -> 0.96 ns an entry). */
AVX512_FUNCTION __m512d short_chunk_sum_batch_avx512(const int32_t *columns, const double *values,
                                                     const double *x, int64_t begin, int64_t end,
                                                     int group_size)
{
    __m512d done[6]; /* sums of finished left subtrees, the largest first */
    int depth = 0;
#pragma GCC unroll 32
    for (int i = 0; i < group_size; i++) {
        int lane = tree_leaf(i, group_size);
        __m512d sum = _mm512_setzero_pd();
        if (begin + lane < end) {
            sum = batch_octet_fma(columns, values, x, begin + lane, sum);
        }
        if (begin + lane + group_size < end) {
            sum = batch_octet_fma(columns, values, x, begin + lane + group_size, sum);
        }
        /* leaf i completes one subtree for each trailing one bit of i */
#pragma GCC unroll 5
        for (int bits = i; (bits & 1) == 1; bits >>= 1) {
            sum = _mm512_add_pd(done[--depth], sum);
        }
        done[depth++] = sum;
    }
    return done[0];
}

/* Row r's 8 sums into y (at row r - row_begin of the layout). */
AVX512_FUNCTION void store_batch_row_avx512(double *y, const spart_batch_layout *layout,
                                            int64_t row, __m512i vector_offsets, __m512d sums)
{
    double *at = y + row * layout->row_stride;
    if (layout->vector_stride == 1) {
        _mm512_storeu_pd(at, sums);
    } else {
        _mm512_i64scatter_pd(at, vector_offsets, sums, 8);
    }
}

AVX512_FUNCTION void rows_batch_avx512(const int64_t *row_ptr, const int32_t *columns,
                                       const double *values, int64_t chunk, const double *x,
                                       double *y, const spart_batch_layout *layout,
                                       int64_t row_begin, int64_t row_end, int group_size)
{
    int64_t stride = layout->vector_stride;
    __m512i vector_offsets = _mm512_setr_epi64(0, stride, 2 * stride, 3 * stride, 4 * stride,
                                               5 * stride, 6 * stride, 7 * stride);
    int64_t prefetch_end = row_ptr[row_end];
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        __m512d total = _mm512_setzero_pd(); /* an empty row: +0.0 */
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            __m512d sum;
            if (stop - start <= 2 * (int64_t)group_size) {
                prefetch_entries(columns, values, start, group_size, prefetch_end);
                prefetch_entries(columns, values, start + group_size, group_size, prefetch_end);
                sum = short_chunk_sum_batch_avx512(columns, values, x, start, stop, group_size);
            } else {
                sum = chunk_sum_batch_avx512(columns, values, x, start, stop, group_size,
                                             prefetch_end);
            }
            total = start == begin ? sum : _mm512_add_pd(total, sum);
        }
        store_batch_row_avx512(y, layout, r - row_begin, vector_offsets, total);
    }
}

/* rows_batch_avx2 with the group size a constant (halves constant too). */
AVX2_FUNCTION void rows_batch_avx2_of_group_size(const spart_csr *csr, int64_t chunk,
                                                 int group_size, const double *x, int halves,
                                                 double *y, const spart_batch_layout *layout,
                                                 int64_t row_begin, int64_t row_end)
{
    const int64_t *p = csr->row_ptr;
    const int32_t *c = csr->columns32;
    const double *v = csr->values64;
    switch (group_size) {
    case 1: rows_batch_avx2(p, c, v, chunk, x, y, layout, row_begin, row_end, 1, halves); break;
    case 2: rows_batch_avx2(p, c, v, chunk, x, y, layout, row_begin, row_end, 2, halves); break;
    case 4: rows_batch_avx2(p, c, v, chunk, x, y, layout, row_begin, row_end, 4, halves); break;
    case 8: rows_batch_avx2(p, c, v, chunk, x, y, layout, row_begin, row_end, 8, halves); break;
    case 16: rows_batch_avx2(p, c, v, chunk, x, y, layout, row_begin, row_end, 16, halves); break;
    default: rows_batch_avx2(p, c, v, chunk, x, y, layout, row_begin, row_end, 32, halves); break;
    }
}

__attribute__((target("avx2,fma"))) static void
batch_avx2(const spart_csr *csr, int64_t chunk, int group_size, const double *x, int halves,
           double *y, const spart_batch_layout *layout, int64_t row_begin, int64_t row_end)
{
    if (halves == 1) {
        rows_batch_avx2_of_group_size(csr, chunk, group_size, x, 1, y, layout, row_begin, row_end);
    } else {
        rows_batch_avx2_of_group_size(csr, chunk, group_size, x, 2, y, layout, row_begin, row_end);
    }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) static void
batch_avx512(const spart_csr *csr, int64_t chunk, int group_size, const double *x, double *y,
             const spart_batch_layout *layout, int64_t row_begin, int64_t row_end)
{
    const int64_t *p = csr->row_ptr;
    const int32_t *c = csr->columns32;
    const double *v = csr->values64;
    switch (group_size) {
    case 1: rows_batch_avx512(p, c, v, chunk, x, y, layout, row_begin, row_end, 1); break;
    case 2: rows_batch_avx512(p, c, v, chunk, x, y, layout, row_begin, row_end, 2); break;
    case 4: rows_batch_avx512(p, c, v, chunk, x, y, layout, row_begin, row_end, 4); break;
    case 8: rows_batch_avx512(p, c, v, chunk, x, y, layout, row_begin, row_end, 8); break;
    case 16: rows_batch_avx512(p, c, v, chunk, x, y, layout, row_begin, row_end, 16); break;
    default: rows_batch_avx512(p, c, v, chunk, x, y, layout, row_begin, row_end, 32); break;
    }
}

void spart_host_csr_rows_simd_batch(const spart_csr *csr, const spart_product_plan *plan,
                                    const double *x, int64_t num_vectors, double *y_rows,
                                    const spart_batch_layout *layout, int64_t row_begin,
                                    int64_t row_end, spart_simd_level level)
{
    if (num_vectors == 8 && level == SPART_SIMD_AVX512) {
        batch_avx512(csr, plan->chunk_length, plan->group_size, x, y_rows, layout, row_begin,
                     row_end);
    } else if ((num_vectors == 4 || num_vectors == 8) && level != SPART_SIMD_NONE) {
        batch_avx2(csr, plan->chunk_length, plan->group_size, x, (int)(num_vectors / 4), y_rows,
                   layout, row_begin, row_end);
    }
}

void spart_host_csr_rows_simd(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                              double *y_rows, int64_t row_begin, int64_t row_end,
                              spart_simd_level level)
{
    if (level != SPART_SIMD_NONE && plan->row_lengths != NULL && plan->group_size <= 2) {
        product_short_rows(csr, plan, x, y_rows, row_begin, row_end);
    } else if (level == SPART_SIMD_AVX512) {
        product_avx512(csr, plan->chunk_length, plan->group_size, x, y_rows, row_begin, row_end);
    } else if (level == SPART_SIMD_AVX2) {
        product_avx2(csr, plan->chunk_length, plan->group_size, x, y_rows, row_begin, row_end);
    }
}

#else

void spart_host_csr_rows_simd_batch(const spart_csr *csr, const spart_product_plan *plan,
                                    const double *x, int64_t num_vectors, double *y_rows,
                                    const spart_batch_layout *layout, int64_t row_begin,
                                    int64_t row_end, spart_simd_level level)
{
    (void)csr, (void)plan, (void)x, (void)num_vectors, (void)y_rows, (void)layout, (void)row_begin;
    (void)row_end, (void)level;
}

spart_simd_level spart_host_simd_level(void)
{
    return SPART_SIMD_NONE;
}

void spart_host_csr_rows_simd(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                              double *y_rows, int64_t row_begin, int64_t row_end,
                              spart_simd_level level)
{
    (void)csr, (void)plan, (void)x, (void)y_rows, (void)row_begin, (void)row_end, (void)level;
}

#endif
