/*
 * src/vcs/vcs_stats.c: the recipes' statistics (spart/vcs.h's table), in
 * float64, each summed in one fixed order: a row's depth over its runs in
 * the by-rows grouping; a column's gene_scale, mean and variance over its
 * entries in the by-columns grouping (storage order). Slices run in
 * parallel, each sums alone, so the thread count changes nothing.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vcs/vcs_internal.h"
#include "vcs/vcs_math.h"

int spart_vcs_recipe_g(spart_vcs_recipe recipe)
{
    switch (recipe) {
    case SPART_VCS_CP10K_LOG1P:
    case SPART_VCS_SCANPY: return SPART_VCS_G_LOG1P;
    case SPART_VCS_PARAFAC2: return SPART_VCS_G_LOG10_1P1000;
    case SPART_VCS_PEARSON: return SPART_VCS_G_SQRT;
    default: return SPART_VCS_G_IDENTITY;
    }
}

int spart_vcs_recipe_centres(spart_vcs_recipe recipe)
{
    return recipe == SPART_VCS_PARAFAC2 || recipe == SPART_VCS_SCANPY ||
           recipe == SPART_VCS_PEARSON;
}

int spart_vcs_recipe_scales(spart_vcs_recipe recipe)
{
    return recipe == SPART_VCS_SCANPY || recipe == SPART_VCS_PEARSON;
}

/* 0: no row target (row_scale 1); -1: the median depth; else the target. */
static double recipe_target(spart_vcs_recipe recipe)
{
    switch (recipe) {
    case SPART_VCS_CP10K_LOG1P:
    case SPART_VCS_SCANPY: return 1e4;
    case SPART_VCS_PARAFAC2: return -1.0;
    case SPART_VCS_PEARSON: return 1.0;
    default: return 0.0;
    }
}

static int recipe_has_gene_scale(spart_vcs_recipe recipe)
{
    return recipe == SPART_VCS_PARAFAC2 || recipe == SPART_VCS_PEARSON;
}

void spart_vcs_stats_free(const spart_allocator *allocator, spart_vcs_stats *stats)
{
    spart_free(allocator, stats->row_scale);
    spart_free(allocator, stats->gene_scale);
    spart_free(allocator, stats->centre);
    spart_free(allocator, stats->scale);
    spart_free(allocator, stats->offset);
    spart_free(allocator, stats->row_factor);
    spart_free(allocator, stats->col_factor);
    memset(stats, 0, sizeof *stats);
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a;
    const double y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (sorted copy; the mean of the middle two for an
 * even n), as NumPy's. */
static spart_status median(spart_context *context, const double *values, int64_t n, double *result)
{
    double *copy = spart_alloc(&context->allocator, (size_t)n + 1, sizeof(double));
    if (copy == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS statistics: out of memory");
    }
    memcpy(copy, values, (size_t)n * sizeof(double));
    qsort(copy, (size_t)n, sizeof(double), compare_double);
    *result = n % 2 == 1 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2.0;
    spart_free(&context->allocator, copy);
    return SPART_OK;
}

static spart_status row_scales(spart_context *context, spart_vcs_data *data, int threads)
{
    const spart_vcs_layout *rows = &data->groupings[SPART_VCS_BY_ROWS];
    double *row_scale = data->stats.row_scale;
    const int64_t n_rows = data->n_rows;
    const double target = recipe_target(data->recipe);
    /* depth first, into row_scale */
#pragma omp parallel for num_threads(threads) schedule(static) if (n_rows > 256)
    for (int64_t i = 0; i < n_rows; i++) {
        double depth = 0.0;
        for (int64_t u = rows->major_ptr[i]; u < rows->major_ptr[i + 1]; u++) {
            depth =
                fma(rows->values[u], (double)(rows->value_ptr[u + 1] - rows->value_ptr[u]), depth);
        }
        row_scale[i] = depth;
    }
    double divisor = target;
    if (target < 0.0 && n_rows > 0) {
        spart_status status = median(context, row_scale, n_rows, &divisor);
        if (status != SPART_OK) {
            return status;
        }
    }
    for (int64_t i = 0; i < n_rows; i++) {
        /* no target, a target <= 0 or an empty row: 1 */
        row_scale[i] = (divisor > 0.0 && row_scale[i] > 0.0) ? row_scale[i] / divisor : 1.0;
    }
    return SPART_OK;
}

/* gene_scale (sum_i x_ij a_i), its factor b, centre, scale and offset of
 * every column; a (row_factor) is final. col_factor_given: b is supplied
 * (col_factor and gene_scale already set). */
static void column_stats(spart_vcs_data *data, int has_gene_scale, int col_factor_given,
                         int threads)
{
    const spart_vcs_layout *cols = &data->groupings[SPART_VCS_BY_COLS];
    spart_vcs_stats *st = &data->stats;
    const int centres = spart_vcs_recipe_centres(data->recipe);
    const int scales = spart_vcs_recipe_scales(data->recipe);
    const double n = (double)data->n_rows;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (data->n_cols > 256)
    for (int64_t j = 0; j < data->n_cols; j++) {
        const int64_t first = cols->major_ptr[j], last = cols->major_ptr[j + 1];
        if (has_gene_scale) {
            double sum = 0.0;
            for (int64_t u = first; u < last; u++) {
                for (int64_t e = cols->value_ptr[u]; e < cols->value_ptr[u + 1]; e++) {
                    sum = fma(cols->values[u], st->row_factor[cols->indices[e]], sum);
                }
            }
            st->gene_scale[j] = sum;
        }
        if (!col_factor_given) {
            st->col_factor[j] = st->gene_scale[j] > 0.0 ? 1.0 / st->gene_scale[j] : 0.0;
        }
        const double b = st->col_factor[j];
        double mean = 0.0, scale = 1.0;
        if ((centres || scales) && b > 0.0 && data->n_rows > 0) {
            double s = 0.0;
            for (int64_t u = first; u < last; u++) {
                for (int64_t e = cols->value_ptr[u]; e < cols->value_ptr[u + 1]; e++) {
                    s = s + spart_vcs_g(st->g_code,
                                        spart_vcs_argument(cols->values[u],
                                                           st->row_factor[cols->indices[e]], b));
                }
            }
            mean = s / n;
            double sum_d = 0.0, sum_d2 = 0.0;
            for (int64_t u = first; u < last; u++) {
                for (int64_t e = cols->value_ptr[u]; e < cols->value_ptr[u + 1]; e++) {
                    const double d =
                        spart_vcs_g(st->g_code,
                                    spart_vcs_argument(cols->values[u],
                                                       st->row_factor[cols->indices[e]], b)) -
                        mean;
                    sum_d = sum_d + d;
                    sum_d2 = fma(d, d, sum_d2);
                }
            }
            const double n0 = n - (double)(cols->value_ptr[cols->major_ptr[j + 1]] -
                                           cols->value_ptr[cols->major_ptr[j]]);
            const double m2 = fma(n0 * mean, mean, sum_d2);
            const double c = sum_d - n0 * mean;
            double variance = (m2 - c * c / n) / n;
            variance = variance > 0.0 ? variance : 0.0;
            const double eps = DBL_EPSILON;
            const double bound = n * eps * variance + (n * mean * eps) * (n * mean * eps);
            if (scales && !(variance <= bound)) {
                scale = 1.0 / sqrt(variance);
            }
        }
        st->centre[j] = centres ? mean : 0.0;
        st->scale[j] = scale;
        st->offset[j] = -(st->centre[j] * scale);
    }
}

spart_status spart_vcs_compute_stats(spart_context *context, spart_vcs_data *data,
                                     const double *row_factor, const double *col_factor)
{
    const spart_allocator *allocator = &context->allocator;
    spart_vcs_stats *st = &data->stats;
    if (st->row_scale == NULL) {
        st->row_scale = spart_alloc(allocator, (size_t)data->n_rows + 1, sizeof(double));
        st->gene_scale = spart_alloc(allocator, (size_t)data->n_cols + 1, sizeof(double));
        st->centre = spart_alloc(allocator, (size_t)data->n_cols + 1, sizeof(double));
        st->scale = spart_alloc(allocator, (size_t)data->n_cols + 1, sizeof(double));
        st->offset = spart_alloc(allocator, (size_t)data->n_cols + 1, sizeof(double));
        st->row_factor = spart_alloc(allocator, (size_t)data->n_rows + 1, sizeof(double));
        st->col_factor = spart_alloc(allocator, (size_t)data->n_cols + 1, sizeof(double));
        if (st->row_scale == NULL || st->gene_scale == NULL || st->centre == NULL ||
            st->scale == NULL || st->offset == NULL || st->row_factor == NULL ||
            st->col_factor == NULL) {
            spart_vcs_stats_free(allocator, st);
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS statistics: out of memory");
        }
    }
    const int threads = spart_threads(context);
    st->g_code = spart_vcs_recipe_g(data->recipe);
    st->has_offset = spart_vcs_recipe_centres(data->recipe);
    if (row_factor != NULL) {
        for (int64_t i = 0; i < data->n_rows; i++) {
            st->row_factor[i] = row_factor[i];
            st->row_scale[i] = 1.0 / row_factor[i];
        }
    } else {
        spart_status status = row_scales(context, data, threads);
        if (status != SPART_OK) {
            return status;
        }
        for (int64_t i = 0; i < data->n_rows; i++) {
            st->row_factor[i] = 1.0 / st->row_scale[i];
        }
    }
    int has_gene_scale = recipe_has_gene_scale(data->recipe);
    if (col_factor != NULL) {
        for (int64_t j = 0; j < data->n_cols; j++) {
            st->col_factor[j] = col_factor[j];
            st->gene_scale[j] = 1.0 / col_factor[j];
        }
        has_gene_scale = 0; /* supplied */
    } else if (!has_gene_scale) {
        for (int64_t j = 0; j < data->n_cols; j++) {
            st->gene_scale[j] = 1.0;
        }
    }
    column_stats(data, has_gene_scale, col_factor != NULL, threads);
    int genes_one = 1, rows_one = 1;
    for (int64_t j = 0; j < data->n_cols; j++) {
        genes_one &= st->col_factor[j] == 1.0;
    }
    for (int64_t i = 0; i < data->n_rows; i++) {
        rows_one &= st->row_factor[i] == 1.0;
    }
    data->minor_factor_is_one[SPART_VCS_BY_ROWS] = genes_one;
    data->minor_factor_is_one[SPART_VCS_BY_COLS] = rows_one;
    return SPART_OK;
}
