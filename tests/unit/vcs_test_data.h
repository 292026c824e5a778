/*
 * tests/unit/vcs_test_data.h: count matrices for the VCS tests and
 * benchmarks (counts 1..7 with a skew like single-cell data: most counts
 * are 1, a seventh of a percent are 7; cell depths vary threefold), and a
 * dense float64 reference of the normalized view written from the
 * formulas of spart/vcs.h with the C library's log1p, log10 and sqrt.
 *
 * Everything is static inline.
 */
#ifndef SPART_VCS_TEST_DATA_H
#define SPART_VCS_TEST_DATA_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spart/vcs.h"

/* A reproducible uniform number in [0, 1) (splitmix64). */
static inline double vcs_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z = z ^ (z >> 31);
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* A count in 1..7: P = .60 .20 .09 .05 .03 .02 .01. */
static inline double vcs_count(uint64_t *state)
{
    static const double cumulative[7] = {0.60, 0.80, 0.89, 0.94, 0.97, 0.99, 1.0};
    const double u = vcs_uniform(state);
    for (int k = 0; k < 7; k++) {
        if (u < cumulative[k]) {
            return (double)(k + 1);
        }
    }
    return 7.0;
}

/* COO triples of an n_rows x n_cols count matrix of about density d, in
 * row order (columns ascending): each row's density scaled by a factor in
 * [0.5, 1.5]. *nnz entries; the arrays are malloc'ed. */
static inline void vcs_random_counts(int64_t n_rows, int64_t n_cols, double density, uint64_t seed,
                                     int64_t *nnz, int64_t **rows, int64_t **cols, double **values)
{
    uint64_t state = seed;
    int64_t capacity = (int64_t)((double)n_rows * (double)n_cols * density * 1.6) + 16;
    *rows = malloc((size_t)capacity * sizeof(int64_t));
    *cols = malloc((size_t)capacity * sizeof(int64_t));
    *values = malloc((size_t)capacity * sizeof(double));
    int64_t count = 0;
    for (int64_t i = 0; i < n_rows; i++) {
        const double row_density = density * (0.5 + vcs_uniform(&state));
        /* geometric gaps: the row's entries in one pass over its columns */
        double log_keep = log1p(-(row_density < 1.0 ? row_density : 0.999999));
        int64_t j = -1;
        for (;;) {
            const double u = vcs_uniform(&state);
            j += 1 + (int64_t)floor(log1p(-u) / log_keep);
            if (j >= n_cols || count >= capacity) {
                break;
            }
            (*rows)[count] = i;
            (*cols)[count] = j;
            (*values)[count] = vcs_count(&state);
            count++;
        }
    }
    *nnz = count;
}

/* The dense matrix of COO triples (row-major, calloc'ed). */
static inline double *vcs_dense(int64_t n_rows, int64_t n_cols, int64_t nnz, const int64_t *rows,
                                const int64_t *cols, const double *values)
{
    double *dense = calloc((size_t)(n_rows * n_cols + 1), sizeof(double));
    for (int64_t k = 0; k < nnz; k++) {
        dense[rows[k] * n_cols + cols[k]] = values[k];
    }
    return dense;
}

static inline double vcs_reference_g(spart_vcs_recipe recipe, double u)
{
    switch (recipe) {
    case SPART_VCS_CP10K_LOG1P:
    case SPART_VCS_SCANPY: return log1p(u);
    case SPART_VCS_PARAFAC2: return log10(1.0 + 1000.0 * u);
    case SPART_VCS_PEARSON: return u > 0.0 ? sqrt(u) : 0.0;
    default: return u;
    }
}

static inline int vcs_compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The normalized view Y (n_rows x n_cols, malloc'ed) of a dense count
 * matrix, its statistics straight from the definitions: depth, target,
 * gene scale, then the mean and the population variance of g over all
 * rows by two direct passes. row_factor / col_factor (NULL: the
 * recipe's) are supplied a and b. */
static inline double *vcs_reference_view(const double *x, int64_t n_rows, int64_t n_cols,
                                         spart_vcs_recipe recipe, const double *row_factor,
                                         const double *col_factor)
{
    double *row_scale = malloc((size_t)(n_rows + 1) * sizeof(double));
    double *gene_scale = malloc((size_t)(n_cols + 1) * sizeof(double));
    double *y = malloc((size_t)(n_rows * n_cols + 1) * sizeof(double));
    double target = 0.0;
    if (recipe == SPART_VCS_CP10K_LOG1P || recipe == SPART_VCS_SCANPY) {
        target = 1e4;
    } else if (recipe == SPART_VCS_PEARSON) {
        target = 1.0;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        double depth = 0.0;
        for (int64_t j = 0; j < n_cols; j++) {
            depth += x[i * n_cols + j];
        }
        row_scale[i] = depth;
    }
    if (recipe == SPART_VCS_PARAFAC2 && n_rows > 0) {
        double *sorted = malloc((size_t)n_rows * sizeof(double));
        memcpy(sorted, row_scale, (size_t)n_rows * sizeof(double));
        qsort(sorted, (size_t)n_rows, sizeof(double), vcs_compare_doubles);
        target =
            n_rows % 2 ? sorted[n_rows / 2] : 0.5 * (sorted[n_rows / 2 - 1] + sorted[n_rows / 2]);
        free(sorted);
    }
    for (int64_t i = 0; i < n_rows; i++) {
        row_scale[i] = (target > 0.0 && row_scale[i] > 0.0) ? row_scale[i] / target : 1.0;
        if (row_factor != NULL) {
            row_scale[i] = 1.0 / row_factor[i];
        }
    }
    const int has_b = recipe == SPART_VCS_PARAFAC2 || recipe == SPART_VCS_PEARSON;
    const int centres = has_b || recipe == SPART_VCS_SCANPY;
    const int scales = recipe == SPART_VCS_SCANPY || recipe == SPART_VCS_PEARSON;
    for (int64_t j = 0; j < n_cols; j++) {
        double b = 0.0;
        for (int64_t i = 0; i < n_rows; i++) {
            b += x[i * n_cols + j] / row_scale[i];
        }
        gene_scale[j] = col_factor != NULL ? 1.0 / col_factor[j] : has_b ? b : 1.0;
        const double gs = gene_scale[j];
        double mean = 0.0, variance = 0.0;
        for (int64_t i = 0; i < n_rows; i++) {
            const double g =
                gs > 0.0 ? vcs_reference_g(recipe, x[i * n_cols + j] / row_scale[i] / gs) : 0.0;
            y[i * n_cols + j] = g;
            mean += g;
        }
        mean = n_rows > 0 ? mean / (double)n_rows : 0.0;
        for (int64_t i = 0; i < n_rows; i++) {
            const double d = y[i * n_cols + j] - mean;
            variance += d * d;
        }
        variance = n_rows > 0 ? variance / (double)n_rows : 0.0;
        const double n = (double)n_rows, eps = DBL_EPSILON;
        const double s = (scales && gs > 0.0 &&
                          variance > n * eps * variance + (n * mean * eps) * (n * mean * eps))
                             ? 1.0 / sqrt(variance)
                             : 1.0;
        const double c = (centres && gs > 0.0) ? mean : 0.0;
        for (int64_t i = 0; i < n_rows; i++) {
            y[i * n_cols + j] = s * (y[i * n_cols + j] - c);
        }
    }
    free(row_scale);
    free(gene_scale);
    return y;
}

#endif /* SPART_VCS_TEST_DATA_H */
