/*
 * tests/unit/softmax_test_util.h: what the softmax tests share
 * (test_softmax.c, test_cuda_softmax.c): graphs whose row lengths follow a
 * power law (with empty rows, rows of one edge and, when asked, one row
 * longer than several chunks), random scores, the segments of a call, and
 * the float64 reference the results are held to.
 *
 * Include after <cmocka.h> and test_util.h.
 */
#ifndef SPART_SOFTMAX_TEST_UTIL_H
#define SPART_SOFTMAX_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "spart/softmax.h"

/* A graph's rows: R + 1 row pointers (int64 and the same as int32) and E
 * columns in 0 .. N-1. */
typedef struct test_graph {
    int64_t rows;
    int64_t edges;
    int64_t nodes;
    int64_t *row_ptr;
    int32_t *row_ptr32;
    int64_t *columns;
    int32_t *columns32;
} test_graph;

/* Rows of power-law lengths (mean about `mean`; a fifth of them empty,
 * some of one edge), and, when long_row > 0, row 7 of long_row edges. */
static inline test_graph test_graph_make(int64_t rows, double mean, int64_t long_row, uint64_t seed)
{
    test_graph g;
    g.rows = rows;
    g.nodes = rows > 0 ? rows : 1;
    g.row_ptr = malloc((size_t)(rows + 1) * sizeof(int64_t));
    g.row_ptr32 = malloc((size_t)(rows + 1) * sizeof(int32_t));
    assert_non_null(g.row_ptr);
    g.row_ptr[0] = 0;
    uint64_t state = seed;
    for (int64_t r = 0; r < rows; r++) {
        const double u = next_uniform(&state);
        int64_t length = 0;
        if (u >= 0.2) {
            /* Pareto with exponent 2: mean twice the scale */
            length = (int64_t)(0.5 * mean / sqrt(1.0 - (u - 0.2) / 0.8 * 0.999));
        }
        if (r == 7 && long_row > 0) {
            length = long_row;
        }
        g.row_ptr[r + 1] = g.row_ptr[r] + length;
    }
    g.edges = g.row_ptr[rows];
    for (int64_t r = 0; r <= rows; r++) {
        g.row_ptr32[r] = (int32_t)g.row_ptr[r];
    }
    g.columns = malloc((size_t)(g.edges > 0 ? g.edges : 1) * sizeof(int64_t));
    g.columns32 = malloc((size_t)(g.edges > 0 ? g.edges : 1) * sizeof(int32_t));
    for (int64_t e = 0; e < g.edges; e++) {
        g.columns[e] = (int64_t)(next_uniform(&state) * (double)g.nodes);
        g.columns32[e] = (int32_t)g.columns[e];
    }
    return g;
}

static inline void test_graph_free(test_graph *g)
{
    free(g->row_ptr);
    free(g->row_ptr32);
    free(g->columns);
    free(g->columns32);
}

/* Segments over g's int64 row pointers. */
static inline spart_softmax_segments test_segments(const test_graph *g, int64_t heads,
                                                   spart_value_type type)
{
    spart_softmax_segments s = {0};
    s.num_rows = g->rows;
    s.num_edges = g->edges;
    s.num_heads = heads;
    s.row_ptr = g->row_ptr;
    s.value_type = type;
    return s;
}

static inline spart_softmax_gather test_gather(const test_graph *g, int64_t width)
{
    spart_softmax_gather gather = {0};
    gather.num_nodes = g->nodes;
    gather.width = width;
    gather.columns = g->columns;
    return gather;
}

/* n random doubles spread over [-scale, scale]. */
static inline double *random_doubles(int64_t n, double scale, uint64_t seed)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) {
        values[i] = scale * (2.0 * next_uniform(&state) - 1.0);
    }
    return values;
}

static inline float *to_floats(const double *values, int64_t n)
{
    float *floats = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        floats[i] = (float)values[i];
    }
    return floats;
}

/* The float64 reference of the softmax (three passes in long double,
 * libm's expl), for scores given as doubles. */
static inline void reference_softmax(const test_graph *g, int64_t heads, const double *scores,
                                     double *out)
{
    for (int64_t r = 0; r < g->rows; r++) {
        for (int64_t h = 0; h < heads; h++) {
            long double m = -INFINITY, sum = 0.0L;
            for (int64_t e = g->row_ptr[r]; e < g->row_ptr[r + 1]; e++) {
                m = scores[e * heads + h] > m ? scores[e * heads + h] : m;
            }
            for (int64_t e = g->row_ptr[r]; e < g->row_ptr[r + 1]; e++) {
                sum += expl((long double)scores[e * heads + h] - m);
            }
            for (int64_t e = g->row_ptr[r]; e < g->row_ptr[r + 1]; e++) {
                out[e * heads + h] = (double)(expl((long double)scores[e * heads + h] - m) / sum);
            }
        }
    }
}

/* The float64 reference of the backward from out and g (doubles). */
static inline void reference_backward(const test_graph *g, int64_t heads, const double *out,
                                      const double *grad_out, double *grad)
{
    for (int64_t r = 0; r < g->rows; r++) {
        for (int64_t h = 0; h < heads; h++) {
            long double dot = 0.0L;
            for (int64_t e = g->row_ptr[r]; e < g->row_ptr[r + 1]; e++) {
                dot += (long double)out[e * heads + h] * grad_out[e * heads + h];
            }
            for (int64_t e = g->row_ptr[r]; e < g->row_ptr[r + 1]; e++) {
                grad[e * heads + h] =
                    (double)(out[e * heads + h] * ((long double)grad_out[e * heads + h] - dot));
            }
        }
    }
}

/* The float64 reference of the aggregation from the reference softmax
 * `out` and the features (doubles). */
static inline void reference_aggregate(const test_graph *g, int64_t heads, int64_t width,
                                       const double *out, const double *features, double *y)
{
    for (int64_t r = 0; r < g->rows; r++) {
        for (int64_t h = 0; h < heads; h++) {
            for (int64_t f = 0; f < width; f++) {
                long double sum = 0.0L;
                for (int64_t e = g->row_ptr[r]; e < g->row_ptr[r + 1]; e++) {
                    sum += (long double)out[e * heads + h] *
                           features[(g->columns[e] * heads + h) * width + f];
                }
                y[(r * heads + h) * width + f] = (double)sum;
            }
        }
    }
}

#endif /* SPART_SOFTMAX_TEST_UTIL_H */
