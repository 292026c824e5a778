/*
 * tests/unit/permute_cases.h: what the permute tests (test_permute.c,
 * test_cuda_permute.c) share: random fusion blocks laid out in padded,
 * strided subblocks of a flat source and destination, random values of
 * the four element types, and the float64 reference of the notes' CPU
 * algorithm (per block: copy the sources into the columns of an L x m
 * buffer, multiply by U transposed, permute each column into its
 * destination subblock).
 *
 * Include after <cmocka.h> and test_util.h.
 */
#ifndef SPART_PERMUTE_CASES_H
#define SPART_PERMUTE_CASES_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spart/permute.h"

/* A set of fusion blocks and the arrays they describe. */
typedef struct permute_case {
    spart_permute_type type;
    int num_axes;
    int permutation[SPART_PERMUTE_MAX_AXES];
    int64_t num_blocks;
    spart_permute_block *blocks;
    int64_t source_length, destination_length;
    int64_t *sizes, *offsets, *strides; /* storage the blocks point into */
    double *recoupling;
} permute_case;

/* What to draw. */
typedef struct case_shape {
    int64_t min_size, max_size; /* extents of each axis */
    int64_t max_count;          /* n and m drawn in 0..max_count (1: plain blocks) */
    int pad;                    /* 1: pad each axis by 0 or 1 element */
    int zero_coefficients;      /* 1: about a quarter of U is 0 */
    int odd;                    /* 1: odd extents only */
} case_shape;

static inline int64_t draw_between(uint64_t *state, int64_t low, int64_t high)
{
    return low + (int64_t)(next_uniform(state) * (double)(high - low + 1));
}

static inline int case_components(spart_permute_type type)
{
    return type == SPART_PERMUTE_COMPLEX64 || type == SPART_PERMUTE_COMPLEX128 ? 2 : 1;
}

static inline int case_single(spart_permute_type type)
{
    return type == SPART_PERMUTE_FLOAT32 || type == SPART_PERMUTE_COMPLEX64;
}

static inline size_t case_element_bytes(spart_permute_type type)
{
    return (size_t)case_components(type) * (case_single(type) ? sizeof(float) : sizeof(double));
}

/* Padded C-order strides of `sizes` into strides[0..num_axes-1]; returns
 * the elements the layout spans. */
static inline int64_t padded_strides(int num_axes, const int64_t *sizes, int pad, uint64_t *state,
                                     int64_t *strides)
{
    int64_t span = 1;
    for (int k = num_axes - 1; k >= 0; k--) {
        strides[k] = span;
        span *= sizes[k] + (pad ? draw_between(state, 0, 1) : 0);
    }
    return span;
}

/* Random blocks: `num_blocks` fusion blocks of `num_axes` axes permuted by
 * `permutation`, drawn as `shape` says. */
static inline permute_case make_case(spart_permute_type type, int num_axes, const int *permutation,
                                     int64_t num_blocks, const case_shape *shape, uint64_t seed)
{
    permute_case c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.num_axes = num_axes;
    for (int k = 0; k < num_axes; k++) {
        c.permutation[k] = permutation[k];
    }
    c.num_blocks = num_blocks;
    uint64_t state = seed;
    int64_t most = shape->max_count > 1 ? shape->max_count : 1;
    size_t axes = (size_t)(num_axes > 0 ? num_axes : 1);
    c.blocks = calloc((size_t)num_blocks + 1, sizeof *c.blocks);
    c.sizes = calloc((size_t)num_blocks * axes + 1, sizeof(int64_t));
    c.offsets = calloc((size_t)(num_blocks * 2 * most) + 1, sizeof(int64_t));
    c.strides = calloc((size_t)(num_blocks * 2 * most) * axes + 1, sizeof(int64_t));
    c.recoupling = calloc((size_t)(num_blocks * most * most) + 1, sizeof(double));
    for (int64_t b = 0; b < num_blocks; b++) {
        spart_permute_block *block = &c.blocks[b];
        int64_t *sizes = c.sizes + b * (int64_t)axes;
        for (int k = 0; k < num_axes; k++) {
            sizes[k] = draw_between(&state, shape->min_size, shape->max_size);
            sizes[k] |= shape->odd ? 1 : 0;
        }
        int64_t n = shape->max_count > 1 ? draw_between(&state, 0, shape->max_count) : 1;
        int64_t m = shape->max_count > 1 ? draw_between(&state, 0, shape->max_count) : 1;
        block->sizes = sizes;
        block->num_destination = n;
        block->num_source = m;
        int64_t *offsets = c.offsets + b * 2 * most;
        int64_t *strides = c.strides + b * 2 * most * (int64_t)axes;
        block->destination_offsets = offsets;
        block->source_offsets = offsets + most;
        block->destination_strides = strides;
        block->source_strides = strides + most * (int64_t)axes;
        int64_t permuted[SPART_PERMUTE_MAX_AXES];
        for (int k = 0; k < num_axes; k++) {
            permuted[k] = sizes[permutation[k]];
        }
        for (int64_t j = 0; j < m; j++) {
            offsets[most + j] = c.source_length + (shape->pad ? draw_between(&state, 0, 2) : 0);
            c.source_length =
                offsets[most + j] + padded_strides(num_axes, sizes, shape->pad, &state,
                                                   strides + (most + j) * (int64_t)axes);
        }
        for (int64_t i = 0; i < n; i++) {
            offsets[i] = c.destination_length + (shape->pad ? draw_between(&state, 0, 2) : 0);
            c.destination_length = offsets[i] + padded_strides(num_axes, permuted, shape->pad,
                                                               &state, strides + i * (int64_t)axes);
        }
        if (n == 1 && m == 1 && shape->max_count <= 1) {
            block->recoupling = NULL;
        } else {
            double *u = c.recoupling + b * most * most;
            for (int64_t t = 0; t < n * m; t++) {
                int zero = shape->zero_coefficients && next_uniform(&state) < 0.25;
                u[t] = zero ? 0.0 : 2.0 * next_uniform(&state) - 1.0;
            }
            block->recoupling = u;
        }
    }
    return c;
}

static inline void free_case(permute_case *c)
{
    free(c->blocks);
    free(c->sizes);
    free(c->offsets);
    free(c->strides);
    free(c->recoupling);
}

/* `count` elements of c's type with values in [-1, 1) (exactly floats for
 * float32 types), or all NaN. */
static inline void *case_values(const permute_case *c, int64_t count, uint64_t seed, int nan)
{
    int64_t reals = count * case_components(c->type);
    void *values = malloc((size_t)(reals > 0 ? reals : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < reals; k++) {
        double v = nan ? NAN : 2.0 * next_uniform(&state) - 1.0;
        if (case_single(c->type)) {
            ((float *)values)[k] = (float)v;
        } else {
            ((double *)values)[k] = v;
        }
    }
    return values;
}

/* Real component k of an array of c's type, as a double. */
static inline double case_component(const permute_case *c, const void *values, int64_t k)
{
    return case_single(c->type) ? (double)((const float *)values)[k] : ((const double *)values)[k];
}

/* The reference in float64 (complex as pairs): `expected` (destination
 * length times components) starts as the destination and gets
 * beta * dst + alpha * (U X^T permuted) on every destination subblock. */
static inline void case_reference(const permute_case *c, int conjugate, const double *alpha,
                                  const double *beta, const void *source, double *expected)
{
    const int n_c = case_components(c->type), N = c->num_axes;
    for (int64_t b = 0; b < c->num_blocks; b++) {
        const spart_permute_block *block = &c->blocks[b];
        int64_t length = 1;
        for (int k = 0; k < N; k++) {
            length *= block->sizes[k];
        }
        int64_t n = block->num_destination, m = block->num_source;
        if (length == 0 || n == 0) {
            continue;
        }
        /* X: L x m, column j = source j in C order of sz. */
        double *x = calloc((size_t)(length * (m > 0 ? m : 1) * n_c), sizeof(double));
        double *y = calloc((size_t)(length * n * n_c), sizeof(double));
        for (int64_t j = 0; j < m; j++) {
            for (int64_t l = 0; l < length; l++) {
                int64_t rest = l, at = block->source_offsets[j];
                for (int k = N - 1; k >= 0; k--) {
                    at += (rest % block->sizes[k]) * block->source_strides[j * N + k];
                    rest /= block->sizes[k];
                }
                for (int p = 0; p < n_c; p++) {
                    double v = case_component(c, source, at * n_c + p);
                    x[(l * m + j) * n_c + p] = p == 1 && conjugate ? -v : v;
                }
            }
        }
        /* Y = X U^T: L x n. */
        for (int64_t l = 0; l < length; l++) {
            for (int64_t i = 0; i < n; i++) {
                for (int64_t j = 0; j < m; j++) {
                    double u = block->recoupling != NULL ? block->recoupling[i * m + j] : 1.0;
                    if (case_single(c->type)) {
                        u = (double)(float)u;
                    }
                    for (int p = 0; p < n_c; p++) {
                        y[(l * n + i) * n_c + p] += u * x[(l * m + j) * n_c + p];
                    }
                }
            }
        }
        /* Column i permuted into destination i: element l of sz at source
         * index s lands at destination index d with d[k] = s[perm[k]]. */
        for (int64_t i = 0; i < n; i++) {
            for (int64_t l = 0; l < length; l++) {
                int64_t s[SPART_PERMUTE_MAX_AXES], rest = l;
                for (int k = N - 1; k >= 0; k--) {
                    s[k] = rest % block->sizes[k];
                    rest /= block->sizes[k];
                }
                int64_t at = block->destination_offsets[i];
                for (int k = 0; k < N; k++) {
                    at += s[c->permutation[k]] * block->destination_strides[i * N + k];
                }
                double *d = expected + at * n_c;
                const double *v = y + (l * n + i) * n_c;
                if (n_c == 1) {
                    d[0] = (beta[0] == 0.0 ? 0.0 : beta[0] * d[0]) + alpha[0] * v[0];
                } else {
                    double re = alpha[0] * v[0] - alpha[1] * v[1];
                    double im = alpha[0] * v[1] + alpha[1] * v[0];
                    if (beta[0] != 0.0 || beta[1] != 0.0) {
                        re += beta[0] * d[0] - beta[1] * d[1];
                        im += beta[0] * d[1] + beta[1] * d[0];
                    }
                    d[0] = re;
                    d[1] = im;
                }
            }
        }
        free(x);
        free(y);
    }
}

#endif /* SPART_PERMUTE_CASES_H */
