/*
 * host/csr_product.c: Y = A X for a CSR matrix, in the row-group order
 * that the CUDA kernel (kernels/csr_product.cu, to come) follows too:
 * each row's entries are cut into chunks of plan->chunk_length; in a chunk,
 * lane l of g sums entries l, l+g, l+2g, ... with fma from +0.0; the lanes
 * combine in a binary tree (lane l += lane l+h for h = g/2, ..., 1); the
 * chunk sums add in chunk order, starting from the first. An empty row
 * gives +0.0. Every value of Y is summed the same way whatever the thread
 * count and whatever the number of vectors, so a column alone equals the
 * same column in a batch.
 *
 * The work is split over rows with OpenMP. The row kernel is compiled
 * twice (target_clones): with hardware FMA for processors that have it,
 * and for baseline x86-64, where fma() is the C library's, slower but
 * giving the same, correctly rounded, results.
 */
#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "regridder_internal.h"

/* Rows handed to a thread at a time. */
#define ROWS_PER_TASK 256

spart_product_plan spart_plan_product(const spart_csr *csr)
{
    spart_product_plan plan;
    plan.group_size = 1;
    while (plan.group_size < 32 &&
           2 * (int64_t)plan.group_size * csr->num_rows <= csr->num_entries) {
        plan.group_size *= 2;
    }
    plan.chunk_length = SPART_CHUNK_LENGTH;
    return plan;
}

size_t spart_host_csr_product_scratch(const spart_product_plan *plan, int64_t num_vectors)
{
    return (size_t)plan->group_size * (size_t)(num_vectors > 0 ? num_vectors : 1);
}

static inline int64_t column_of(const int32_t *columns32, const int64_t *columns64, int64_t k)
{
    return columns32 != NULL ? (int64_t)columns32[k] : columns64[k];
}

static inline double value_of(const double *values64, const float *values32, int64_t k)
{
    return values64 != NULL ? values64[k] : (double)values32[k];
}

/* One chunk of one row for a single vector: the tree-combined lane sum. */
static inline double chunk_sum_single(const int32_t *columns32, const int64_t *columns64,
                                      const double *values64, const float *values32, int64_t begin,
                                      int64_t end, int group_size, const double *x)
{
    double lanes[32];
    if (group_size < 1 || group_size > 32) {
        group_size = 1; /* never: plans hold powers of two up to 32 */
    }
    for (int l = 0; l < group_size; l++) {
        lanes[l] = 0.0;
    }
    int64_t k = begin;
    for (; k + group_size <= end; k += group_size) {
        for (int l = 0; l < group_size; l++) {
            double value = value_of(values64, values32, k + l);
            lanes[l] = fma(value, x[column_of(columns32, columns64, k + l)], lanes[l]);
        }
    }
    for (int l = 0; k < end; k++, l++) { /* fewer than group_size entries are left */
        double value = value_of(values64, values32, k);
        /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): l < group_size, set above */
        lanes[l] = fma(value, x[column_of(columns32, columns64, k)], lanes[l]);
    }
    for (int half = group_size / 2; half >= 1; half /= 2) {
        for (int l = 0; l < half; l++) {
            lanes[l] = lanes[l] + lanes[l + half];
        }
    }
    return lanes[0];
}

/* One chunk of one row for num_vectors interleaved vectors: lanes[l * T + t]. */
static inline void chunk_sum_batch(const int32_t *columns32, const int64_t *columns64,
                                   const double *values64, const float *values32, int64_t begin,
                                   int64_t end, int group_size, const double *x,
                                   int64_t num_vectors, double *lanes)
{
    int64_t width = num_vectors;
    memset(lanes, 0, (size_t)group_size * (size_t)width * sizeof(double));
    for (int64_t k = begin; k < end; k++) {
        double *lane = lanes + (int64_t)((k - begin) & (group_size - 1)) * width;
        double value = value_of(values64, values32, k);
        const double *xk = x + column_of(columns32, columns64, k) * width;
        for (int64_t t = 0; t < width; t++) {
            lane[t] = fma(value, xk[t], lane[t]);
        }
    }
    for (int half = group_size / 2; half >= 1; half /= 2) {
        for (int l = 0; l < half; l++) {
            for (int64_t t = 0; t < width; t++) {
                lanes[l * width + t] = lanes[l * width + t] + lanes[(l + half) * width + t];
            }
        }
    }
}

/* Rows [row_begin, row_end) of Y = A X. */
__attribute__((target_clones("arch=haswell", "default"))) static void
product_rows(const spart_csr *csr, const spart_product_plan *plan, const double *x,
             int64_t num_vectors, double *y, int64_t row_begin, int64_t row_end, double *lanes)
{
    const int32_t *columns32 = csr->columns32;
    const int64_t *columns64 = csr->columns64;
    const double *values64 = csr->values64;
    const float *values32 = csr->values32;
    int group_size = plan->group_size;
    int64_t chunk = plan->chunk_length;
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = csr->row_ptr[r], end = csr->row_ptr[r + 1];
        if (num_vectors == 1) {
            double total = 0.0;
            for (int64_t start = begin; start < end; start += chunk) {
                int64_t stop = end - start > chunk ? start + chunk : end;
                double sum = chunk_sum_single(columns32, columns64, values64, values32, start, stop,
                                              group_size, x);
                total = start == begin ? sum : total + sum;
            }
            y[r] = total;
            continue;
        }
        double *yr = y + r * num_vectors;
        if (begin == end) {
            memset(yr, 0, (size_t)num_vectors * sizeof(double));
        }
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            chunk_sum_batch(columns32, columns64, values64, values32, start, stop, group_size, x,
                            num_vectors, lanes);
            for (int64_t t = 0; t < num_vectors; t++) {
                yr[t] = start == begin ? lanes[t] : yr[t] + lanes[t];
            }
        }
    }
}

void spart_host_csr_product(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                            int64_t num_vectors, double *y, int threads, double *scratch)
{
    if (num_vectors <= 0) {
        return;
    }
    int64_t tasks = (csr->num_rows + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
    size_t per_thread = spart_host_csr_product_scratch(plan, num_vectors);
#pragma omp parallel num_threads(threads)
    {
        /* One vector needs no scratch: its lanes live on the stack. */
        double *lanes = NULL;
        if (num_vectors > 1) {
#ifdef _OPENMP
            lanes = scratch + (size_t)omp_get_thread_num() * per_thread;
#else
            lanes = scratch;
#endif
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; task++) {
            int64_t begin = task * ROWS_PER_TASK;
            int64_t end =
                begin + ROWS_PER_TASK < csr->num_rows ? begin + ROWS_PER_TASK : csr->num_rows;
            product_rows(csr, plan, x, num_vectors, y, begin, end, lanes);
        }
    }
}
