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
 * The work is split over rows with OpenMP. Speed comes from letting the
 * compiler see constants, never from changing the order:
 *   - the row kernel is compiled twice (target_clones, chosen by the
 *     processor's features when the library loads): with AVX2 and hardware
 *     FMA, and for baseline x86-64, where fma() is the C library's, slower
 *     but giving the same, correctly rounded, results. Every helper is
 *     always inlined, so that each clone has its own copy (a helper left
 *     out of line is compiled for the baseline only, and calls the C
 *     library's fma for every entry);
 *   - one vector, float64 values and int32 columns (the usual matrix) has
 *     a kernel per group size, so that the g lanes are a fixed-size array
 *     the compiler keeps in vector registers (lane l still sums entries l,
 *     l+g, ... with fma, and the tree is the same);
 *   - several vectors update each lane's vectors four at a time through
 *     pointers declared not to overlap, so that the four fma() become one
 *     vector fma (each vector still sums in its own lane order); batches
 *     of 2, 4 and 8 vectors have the width a constant, so these loops
 *     unroll.
 */
#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "operator/regridder_internal.h"

/* Entries handed to a thread at a time (as whole rows): tasks of equal
 * work, so that two threads also share a matrix of a few long rows. */
#define ENTRIES_PER_TASK 32768

/* Vectors updated together in a batch (a vector fma on AVX2). */
#define VECTOR_BLOCK 4

/* Helpers that must be compiled into each clone of the row kernel. */
#if defined(__GNUC__) || defined(__clang__)
#define KERNEL_INLINE static inline __attribute__((always_inline))
#else
#define KERNEL_INLINE static inline
#endif

/* The clones of the row kernel, dispatched on CPU features (not on the CPU
 * model, as arch=haswell is: that would give every newer processor the
 * baseline). x86-64-v3 is AVX2 + FMA; GCC dispatches on it from GCC 12. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_CLONES __attribute__((target_clones("fma", "default")))
#else
#define KERNEL_CLONES
#endif

spart_product_plan spart_plan_product(const spart_csr *csr)
{
    spart_product_plan plan;
    plan.group_size = 1;
    while (plan.group_size < 32 &&
           2 * (int64_t)plan.group_size * csr->num_rows <= csr->num_entries) {
        plan.group_size *= 2;
    }
    plan.chunk_length = SPART_CHUNK_LENGTH;
    plan.row_lengths = NULL;
    plan.block_starts = NULL;
    plan.row_stripes = 1;
    plan.row_rule = SPART_PLAN_MEAN;
    return plan;
}

spart_product_plan spart_plan_product_by_rule(const spart_csr *csr, int rule)
{
    spart_product_plan plan = spart_plan_product(csr);
    if (rule == SPART_PLAN_BY_ROW) {
        plan.row_rule = SPART_PLAN_BY_ROW;
        plan.group_size = 32; /* the most a row takes; each row has its own */
    }
    return plan;
}

/* How the product's rows are handed out: tasks of rows_per_task rows
 * within each stripe of stripe_rows rows, the stripes side by side. */
typedef struct task_split {
    int64_t stripes;
    int64_t stripe_rows;
    int64_t rows_per_task;
    int64_t tasks_per_stripe;
} task_split;

/* Tasks of about ENTRIES_PER_TASK entries (as whole rows), so that two
 * threads also share a matrix of a few long rows; stripes as the plan
 * says when they divide the rows evenly. */
static task_split split_tasks(const spart_csr *csr, const spart_product_plan *plan)
{
    task_split split;
    int64_t mean_row = csr->num_rows > 0 ? csr->num_entries / csr->num_rows : 0;
    split.rows_per_task = ENTRIES_PER_TASK / (mean_row > 0 ? mean_row : 1);
    if (split.rows_per_task < 1) {
        split.rows_per_task = 1;
    }
    split.stripes = plan->row_stripes;
    if (split.stripes < 1 || csr->num_rows % split.stripes != 0) {
        split.stripes = 1;
    }
    split.stripe_rows = csr->num_rows / split.stripes;
    split.tasks_per_stripe = (split.stripe_rows + split.rows_per_task - 1) / split.rows_per_task;
    return split;
}

/* Task t's rows [*begin, *end): block t / stripes of stripe t % stripes,
 * so that consecutive tasks are the same rows of each stripe, reading the
 * same part of x while it is in the caches. */
static void task_rows(const task_split *split, int64_t task, int64_t *begin, int64_t *end)
{
    int64_t stripe = task % split->stripes, block = task / split->stripes;
    int64_t stripe_end = (stripe + 1) * split->stripe_rows;
    *begin = stripe * split->stripe_rows + block * split->rows_per_task;
    *end = *begin + split->rows_per_task < stripe_end ? *begin + split->rows_per_task : stripe_end;
}

size_t spart_host_csr_product_scratch(const spart_product_plan *plan, int64_t num_vectors)
{
    return (size_t)plan->group_size * (size_t)(num_vectors > 0 ? num_vectors : 1);
}

KERNEL_INLINE int64_t column_of(const int32_t *columns32, const int64_t *columns64, int64_t k)
{
    return columns32 != NULL ? (int64_t)columns32[k] : columns64[k];
}

KERNEL_INLINE double value_of(const double *values64, const float *values32, int64_t k)
{
    return values64 != NULL ? values64[k] : (double)values32[k];
}

/* One chunk of one row for a single vector: the tree-combined lane sum.
 * Inlined with a constant group_size, the lanes become a fixed array. */
KERNEL_INLINE double chunk_sum_single(const int32_t *columns32, const int64_t *columns64,
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

/* Rows [row_begin, row_end) for one vector, into y[0 .. row_end - row_begin):
 * chunk sums in chunk order. */
KERNEL_INLINE void rows_single(const int64_t *row_ptr, const int32_t *columns32,
                               const int64_t *columns64, const double *values64,
                               const float *values32, int64_t chunk, int group_size,
                               const double *x, double *y, int64_t row_begin, int64_t row_end)
{
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        double total = 0.0;
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            double sum = chunk_sum_single(columns32, columns64, values64, values32, start, stop,
                                          group_size, x);
            total = start == begin ? sum : total + sum;
        }
        y[r - row_begin] = total;
    }
}

/* lane[t] = fma(value, xk[t], lane[t]) for t < width; lane and xk never
 * overlap (scratch and x), which lets four of them be one vector fma. */
KERNEL_INLINE void lane_update(double *restrict lane, const double *restrict xk, double value,
                               int64_t width)
{
    int64_t t = 0;
    for (; t + VECTOR_BLOCK <= width; t += VECTOR_BLOCK) {
        for (int u = 0; u < VECTOR_BLOCK; u++) {
            lane[t + u] = fma(value, xk[t + u], lane[t + u]);
        }
    }
    for (; t < width; t++) {
        lane[t] = fma(value, xk[t], lane[t]);
    }
}

/* into[t] = into[t] + from[t] for t < width (two distinct lanes). */
KERNEL_INLINE void lane_add(double *restrict into, const double *restrict from, int64_t width)
{
    int64_t t = 0;
    for (; t + VECTOR_BLOCK <= width; t += VECTOR_BLOCK) {
        for (int u = 0; u < VECTOR_BLOCK; u++) {
            into[t + u] = into[t + u] + from[t + u];
        }
    }
    for (; t < width; t++) {
        into[t] = into[t] + from[t];
    }
}

/* One chunk of one row for num_vectors interleaved vectors: lanes[l * T + t]. */
KERNEL_INLINE void chunk_sum_batch(const int32_t *columns32, const int64_t *columns64,
                                   const double *values64, const float *values32, int64_t begin,
                                   int64_t end, int group_size, const double *x,
                                   int64_t num_vectors, double *lanes)
{
    int64_t width = num_vectors;
    memset(lanes, 0, (size_t)group_size * (size_t)width * sizeof(double));
    for (int64_t k = begin; k < end; k++) {
        double *lane = lanes + (int64_t)((k - begin) & (group_size - 1)) * width;
        double value = value_of(values64, values32, k);
        lane_update(lane, x + column_of(columns32, columns64, k) * width, value, width);
    }
    for (int half = group_size / 2; half >= 1; half /= 2) {
        for (int l = 0; l < half; l++) {
            lane_add(lanes + l * width, lanes + (l + half) * width, width);
        }
    }
}

/* Rows [row_begin, row_end) for num_vectors > 1 interleaved vectors, row
 * r's values where `layout` puts row r - row_begin of y. */
KERNEL_INLINE void rows_batch(const int64_t *row_ptr, const int32_t *columns32,
                              const int64_t *columns64, const double *values64,
                              const float *values32, int64_t chunk, int group_size, const double *x,
                              int64_t num_vectors, double *y, const spart_batch_layout *layout,
                              int64_t row_begin, int64_t row_end, double *lanes)
{
    int64_t vector_stride = layout->vector_stride;
    for (int64_t r = row_begin; r < row_end; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        double *yr = y + (r - row_begin) * layout->row_stride;
        if (begin == end) {
            for (int64_t t = 0; t < num_vectors; t++) {
                yr[t * vector_stride] = 0.0;
            }
        }
        for (int64_t start = begin; start < end; start += chunk) {
            int64_t stop = end - start > chunk ? start + chunk : end;
            chunk_sum_batch(columns32, columns64, values64, values32, start, stop, group_size, x,
                            num_vectors, lanes);
            for (int64_t t = 0; t < num_vectors; t++) {
                double *at = yr + t * vector_stride;
                *at = start == begin ? lanes[t] : *at + lanes[t];
            }
        }
    }
}

/* One vector of the usual matrix (float64 values, int32 columns), with
 * the group size a constant in each case. */
KERNEL_INLINE void rows_single_usual(const spart_csr *csr, int64_t chunk, int group_size,
                                     const double *x, double *y, int64_t row_begin, int64_t row_end)
{
    const int64_t *row_ptr = csr->row_ptr;
    const int32_t *columns = csr->columns32;
    const double *values = csr->values64;
    if (columns == NULL || values == NULL) {
        return; /* never: called for the usual matrix only */
    }
    switch (group_size) {
    case 1:
        rows_single(row_ptr, columns, NULL, values, NULL, chunk, 1, x, y, row_begin, row_end);
        break;
    case 2:
        rows_single(row_ptr, columns, NULL, values, NULL, chunk, 2, x, y, row_begin, row_end);
        break;
    case 4:
        rows_single(row_ptr, columns, NULL, values, NULL, chunk, 4, x, y, row_begin, row_end);
        break;
    case 8:
        rows_single(row_ptr, columns, NULL, values, NULL, chunk, 8, x, y, row_begin, row_end);
        break;
    case 16:
        rows_single(row_ptr, columns, NULL, values, NULL, chunk, 16, x, y, row_begin, row_end);
        break;
    default:
        rows_single(row_ptr, columns, NULL, values, NULL, chunk, 32, x, y, row_begin, row_end);
        break;
    }
}

/* Several vectors of the usual matrix, with the common batch widths a
 * constant (the loops over the vectors then unroll). */
KERNEL_INLINE void rows_batch_usual(const spart_csr *csr, int64_t chunk, int group_size,
                                    const double *x, int64_t num_vectors, double *y,
                                    const spart_batch_layout *layout, int64_t row_begin,
                                    int64_t row_end, double *lanes)
{
    const int64_t *row_ptr = csr->row_ptr;
    const int32_t *columns = csr->columns32;
    const double *values = csr->values64;
    if (columns == NULL || values == NULL) {
        return; /* never: called for the usual matrix only */
    }
    switch (num_vectors) {
    case 2:
        rows_batch(row_ptr, columns, NULL, values, NULL, chunk, group_size, x, 2, y, layout,
                   row_begin, row_end, lanes);
        break;
    case 4:
        rows_batch(row_ptr, columns, NULL, values, NULL, chunk, group_size, x, 4, y, layout,
                   row_begin, row_end, lanes);
        break;
    case 8:
        rows_batch(row_ptr, columns, NULL, values, NULL, chunk, group_size, x, 8, y, layout,
                   row_begin, row_end, lanes);
        break;
    default:
        rows_batch(row_ptr, columns, NULL, values, NULL, chunk, group_size, x, num_vectors, y,
                   layout, row_begin, row_end, lanes);
        break;
    }
}

/* Rows [row_begin, row_end) of Y = A X, into y from its first row on. */
KERNEL_CLONES static void product_rows(const spart_csr *csr, const spart_product_plan *plan,
                                       const double *x, int64_t num_vectors, double *y,
                                       const spart_batch_layout *layout, int64_t row_begin,
                                       int64_t row_end, double *lanes)
{
    int group_size = plan->group_size;
    int64_t chunk = plan->chunk_length;
    int usual = csr->values64 != NULL && csr->columns32 != NULL;
    int planned = group_size >= 1 && group_size <= 32 && (group_size & (group_size - 1)) == 0;
    if (plan->row_rule == SPART_PLAN_BY_ROW) {
        /* Each row with its own group size: runs of rows of the same g,
         * each summed by the kernels below with that g. */
        const int64_t *row_ptr = csr->row_ptr;
        /* A run's rows have one g: the vector kernels of the mean rule
         * (host/csr_product_simd.c) sum them in that g's order. */
        spart_simd_level level = usual && (num_vectors == 1 || num_vectors == 4 || num_vectors == 8)
                                     ? spart_host_simd_level()
                                     : SPART_SIMD_NONE;
        spart_product_plan run_plan = *plan;
        run_plan.row_rule = SPART_PLAN_MEAN;
        run_plan.row_lengths = NULL;
        run_plan.block_starts = NULL;
        for (int64_t r = row_begin; r < row_end;) {
            int g = spart_row_group_size(row_ptr[r + 1] - row_ptr[r]);
            int64_t run_end = r + 1;
            while (run_end < row_end &&
                   spart_row_group_size(row_ptr[run_end + 1] - row_ptr[run_end]) == g) {
                run_end++;
            }
            run_plan.group_size = g;
            if (level != SPART_SIMD_NONE && num_vectors == 1) {
                spart_host_csr_rows_simd(csr, &run_plan, x, y + (r - row_begin), r, run_end, level);
            } else if (level != SPART_SIMD_NONE) {
                spart_host_csr_rows_simd_batch(csr, &run_plan, x, num_vectors,
                                               y + (r - row_begin) * layout->row_stride, layout, r,
                                               run_end, level);
            } else if (num_vectors == 1 && usual) {
                rows_single_usual(csr, chunk, g, x, y + (r - row_begin), r, run_end);
            } else if (num_vectors == 1) {
                rows_single(row_ptr, csr->columns32, csr->columns64, csr->values64, csr->values32,
                            chunk, g, x, y + (r - row_begin), r, run_end);
            } else if (usual) {
                rows_batch_usual(csr, chunk, g, x, num_vectors,
                                 y + (r - row_begin) * layout->row_stride, layout, r, run_end,
                                 lanes);
            } else {
                rows_batch(row_ptr, csr->columns32, csr->columns64, csr->values64, csr->values32,
                           chunk, g, x, num_vectors, y + (r - row_begin) * layout->row_stride,
                           layout, r, run_end, lanes);
            }
            r = run_end;
        }
        return;
    }
    if (num_vectors == 1 && usual && planned) {
        rows_single_usual(csr, chunk, group_size, x, y, row_begin, row_end);
    } else if (num_vectors == 1) {
        rows_single(csr->row_ptr, csr->columns32, csr->columns64, csr->values64, csr->values32,
                    chunk, group_size, x, y, row_begin, row_end);
    } else if (usual) {
        rows_batch_usual(csr, chunk, group_size, x, num_vectors, y, layout, row_begin, row_end,
                         lanes);
    } else {
        rows_batch(csr->row_ptr, csr->columns32, csr->columns64, csr->values64, csr->values32,
                   chunk, group_size, x, num_vectors, y, layout, row_begin, row_end, lanes);
    }
}

spart_simd_level spart_host_csr_simd_level(const spart_csr *csr, const spart_product_plan *plan)
{
    int planned = plan->group_size >= 1 && plan->group_size <= 32 &&
                  (plan->group_size & (plan->group_size - 1)) == 0 &&
                  plan->row_rule == SPART_PLAN_MEAN;
    if (csr->values64 == NULL || csr->columns32 == NULL || !planned) {
        return SPART_SIMD_NONE;
    }
    return spart_host_simd_level();
}

void spart_host_csr_product_rows(const spart_csr *csr, const spart_product_plan *plan,
                                 const double *x, double *y_rows, int64_t row_begin,
                                 int64_t row_end, spart_simd_level level)
{
    if (level != SPART_SIMD_NONE) {
        spart_host_csr_rows_simd(csr, plan, x, y_rows, row_begin, row_end, level);
    } else {
        product_rows(csr, plan, x, 1, y_rows, NULL, row_begin, row_end, NULL);
    }
}

void spart_host_csr_product(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                            int64_t num_vectors, double *y, const spart_batch_layout *layout,
                            int threads, double *scratch)
{
    if (num_vectors <= 0) {
        return;
    }
    task_split split = split_tasks(csr, plan);
    int64_t tasks = split.stripes * split.tasks_per_stripe;
    size_t per_thread = spart_host_csr_product_scratch(plan, num_vectors);
    /* One vector, or a batch of 4 or 8, of the usual matrix: the same order
     * in vector instructions where the processor has them
     * (host/csr_product_simd.c). */
    int simd_width = num_vectors == 1 || num_vectors == 4 || num_vectors == 8;
    spart_simd_level level = simd_width ? spart_host_csr_simd_level(csr, plan) : SPART_SIMD_NONE;
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
            int64_t begin = 0, end = 0;
            task_rows(&split, task, &begin, &end);
            if (level != SPART_SIMD_NONE && num_vectors == 1) {
                spart_host_csr_rows_simd(csr, plan, x, y + begin, begin, end, level);
            } else if (level != SPART_SIMD_NONE) {
                spart_host_csr_rows_simd_batch(csr, plan, x, num_vectors,
                                               y + begin * layout->row_stride, layout, begin, end,
                                               level);
            } else if (num_vectors == 1) {
                product_rows(csr, plan, x, 1, y + begin, NULL, begin, end, NULL);
            } else {
                product_rows(csr, plan, x, num_vectors, y + begin * layout->row_stride, layout,
                             begin, end, lanes);
            }
        }
    }
}
