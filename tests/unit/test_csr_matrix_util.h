/*
 * tests/unit/test_csr_matrix_util.h: what the CSR matrix tests
 * (test_csr_matrix.c on the host, test_cuda_csr_matrix.c on a device)
 * share: power-law (R-MAT) matrices with empty rows, matrices with a row
 * of exactly one chunk plus one entry, and a plain reference of the
 * documented summation order (spart/csr_matrix.h, spart/regridder.h:
 * chunks, g lanes with fma from +0.0, the binary tree, chunks in order),
 * written here from the header's words, not from the library's code.
 *
 * Include after <cmocka.h> and test_util.h.
 */
#ifndef SPART_TEST_CSR_MATRIX_UTIL_H
#define SPART_TEST_CSR_MATRIX_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spart/csr_matrix.h"

/* A matrix held as a caller holds one: int64 row pointers and columns,
 * float64 values (narrower copies made on demand). */
typedef struct test_csr {
    int64_t rows, columns, entries;
    int64_t *row_ptr;
    int64_t *column;
    double *value;
} test_csr;

static inline void test_csr_free(test_csr *m)
{
    free(m->row_ptr);
    free(m->column);
    free(m->value);
    memset(m, 0, sizeof *m);
}

/* A value of either sign spanning 2^-20 .. 2^20, so that another order
 * shows in the last bits. */
static inline double test_spread(uint64_t *state)
{
    double mantissa = 2.0 * next_uniform(state) - 1.0;
    int exponent = (int)(next_uniform(state) * 41.0) - 20;
    return ldexp(mantissa, exponent);
}

/* An R-MAT graph of 2^scale rows and columns, about edge_factor entries a
 * row (a = 0.57, b = c = 0.19, d = 0.05): power-law row lengths, many
 * empty rows; repeated (row, column) pairs kept. Entries of a row in the
 * order drawn (not sorted by column). */
static inline test_csr test_rmat(int scale, int64_t edge_factor, uint64_t seed)
{
    test_csr m;
    memset(&m, 0, sizeof m);
    m.rows = m.columns = (int64_t)1 << scale;
    m.entries = m.rows * edge_factor;
    int64_t *pairs = malloc((size_t)m.entries * 2 * sizeof(int64_t));
    uint64_t state = seed;
    for (int64_t e = 0; e < m.entries; e++) {
        int64_t r = 0, c = 0;
        for (int level = 0; level < scale; level++) {
            double u = next_uniform(&state);
            int down = u >= 0.57 + 0.19; /* c or d */
            int right = (u >= 0.57 && u < 0.76) || u >= 0.95;
            r = 2 * r + down;
            c = 2 * c + right;
        }
        pairs[2 * e] = r;
        pairs[2 * e + 1] = c;
    }
    m.row_ptr = calloc((size_t)m.rows + 1, sizeof(int64_t));
    m.column = malloc((size_t)(m.entries > 0 ? m.entries : 1) * sizeof(int64_t));
    m.value = malloc((size_t)(m.entries > 0 ? m.entries : 1) * sizeof(double));
    for (int64_t e = 0; e < m.entries; e++) {
        m.row_ptr[pairs[2 * e] + 1]++;
    }
    for (int64_t r = 0; r < m.rows; r++) {
        m.row_ptr[r + 1] += m.row_ptr[r];
    }
    int64_t *cursor = malloc((size_t)m.rows * sizeof(int64_t));
    memcpy(cursor, m.row_ptr, (size_t)m.rows * sizeof(int64_t));
    for (int64_t e = 0; e < m.entries; e++) {
        int64_t at = cursor[pairs[2 * e]]++;
        m.column[at] = pairs[2 * e + 1];
        m.value[at] = test_spread(&state);
    }
    free(cursor);
    free(pairs);
    return m;
}

/* A matrix whose row lengths are given (columns drawn at random). */
static inline test_csr test_rows_of(int64_t rows, int64_t columns, const int64_t *lengths,
                                    uint64_t seed)
{
    test_csr m;
    memset(&m, 0, sizeof m);
    m.rows = rows;
    m.columns = columns;
    m.row_ptr = calloc((size_t)rows + 1, sizeof(int64_t));
    for (int64_t r = 0; r < rows; r++) {
        m.row_ptr[r + 1] = m.row_ptr[r] + lengths[r];
    }
    m.entries = m.row_ptr[rows];
    m.column = malloc((size_t)(m.entries > 0 ? m.entries : 1) * sizeof(int64_t));
    m.value = malloc((size_t)(m.entries > 0 ? m.entries : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t e = 0; e < m.entries; e++) {
        m.column[e] = columns > 0 ? (int64_t)(next_uniform(&state) * (double)columns) : 0;
        m.value[e] = test_spread(&state);
    }
    return m;
}

/* A row's group size as the header says: doubled from 1 while the row
 * holds 2g entries or more, at most 32. */
static inline int test_group_size(int64_t length)
{
    int g = 1;
    while (g < 32 && 2 * (int64_t)g <= length) {
        g *= 2;
    }
    return g;
}

/* Row r of y = A x in the documented order; values rounded to float
 * first when values_float. */
static inline double test_row_sum(const test_csr *m, int64_t r, const double *x, int g,
                                  int values_float)
{
    double total = 0.0;
    double lane[32];
    int64_t begin = m->row_ptr[r], end = m->row_ptr[r + 1];
    for (int64_t chunk = begin; chunk < end || chunk == begin; chunk += SPART_CHUNK_LENGTH) {
        int64_t chunk_end = end - chunk > SPART_CHUNK_LENGTH ? chunk + SPART_CHUNK_LENGTH : end;
        for (int l = 0; l < g; l++) {
            lane[l] = 0.0;
            for (int64_t k = chunk + l; k < chunk_end; k += g) {
                double v = values_float ? (double)(float)m->value[k] : m->value[k];
                lane[l] = fma(v, x[m->column[k]], lane[l]);
            }
        }
        for (int h = g / 2; h >= 1; h /= 2) {
            for (int l = 0; l < h; l++) {
                lane[l] = lane[l] + lane[l + h];
            }
        }
        total = chunk == begin ? lane[0] : total + lane[0];
        if (end == begin) {
            break;
        }
    }
    return total;
}

/* y = A x for one vector in the documented order. */
static inline void test_reference(const test_csr *m, const double *x, int values_float, double *y)
{
    for (int64_t r = 0; r < m->rows; r++) {
        int g = test_group_size(m->row_ptr[r + 1] - m->row_ptr[r]);
        y[r] = test_row_sum(m, r, x, g, values_float);
    }
}

/* The exact transpose: row c holds column c's entries in row order. */
static inline test_csr test_transpose(const test_csr *m)
{
    test_csr t;
    memset(&t, 0, sizeof t);
    t.rows = m->columns;
    t.columns = m->rows;
    t.entries = m->entries;
    t.row_ptr = calloc((size_t)t.rows + 1, sizeof(int64_t));
    t.column = malloc((size_t)(t.entries > 0 ? t.entries : 1) * sizeof(int64_t));
    t.value = malloc((size_t)(t.entries > 0 ? t.entries : 1) * sizeof(double));
    for (int64_t e = 0; e < m->entries; e++) {
        t.row_ptr[m->column[e] + 1]++;
    }
    for (int64_t r = 0; r < t.rows; r++) {
        t.row_ptr[r + 1] += t.row_ptr[r];
    }
    int64_t *cursor = malloc((size_t)(t.rows > 0 ? t.rows : 1) * sizeof(int64_t));
    memcpy(cursor, t.row_ptr, (size_t)t.rows * sizeof(int64_t));
    for (int64_t r = 0; r < m->rows; r++) {
        for (int64_t k = m->row_ptr[r]; k < m->row_ptr[r + 1]; k++) {
            int64_t at = cursor[m->column[k]]++;
            t.column[at] = r;
            t.value[at] = m->value[k];
        }
    }
    free(cursor);
    return t;
}

/* Narrow copies of the arrays a caller may hold. */
static inline int32_t *test_narrow(const int64_t *from, int64_t n)
{
    int32_t *to = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
    for (int64_t k = 0; k < n; k++) {
        to[k] = (int32_t)from[k];
    }
    return to;
}

static inline float *test_floats(const double *from, int64_t n)
{
    float *to = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t k = 0; k < n; k++) {
        to[k] = (float)from[k];
    }
    return to;
}

/* Vectors of values spanning many binades, one in 16 exactly 0. */
static inline double *test_vectors(int64_t count, uint64_t seed)
{
    double *x = malloc((size_t)(count > 0 ? count : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < count; k++) {
        x[k] = k % 16 == 5 ? 0.0 : test_spread(&state);
    }
    return x;
}

/* The arrays of `m` with int64 indices and float64 values (host). */
static inline spart_csr_arrays test_arrays(const test_csr *m)
{
    spart_csr_arrays a;
    memset(&a, 0, sizeof a);
    a.num_rows = m->rows;
    a.num_columns = m->columns;
    a.num_entries = m->entries;
    a.row_ptr = m->row_ptr;
    a.row_ptr_type = SPART_INT64;
    a.columns = m->column;
    a.column_type = SPART_INT64;
    a.values = m->value;
    a.value_type = SPART_FLOAT64;
    return a;
}

#endif /* SPART_TEST_CSR_MATRIX_UTIL_H */
