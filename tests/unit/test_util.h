/*
 * tests/unit/test_util.h: small helpers many unit tests share: a context
 * (alone, or as the fixture of a group), the C library's allocator,
 * reproducible numbers, shapes, signed random weights, golden digests,
 * and comparing results bit for bit.
 *
 * Include after <cmocka.h>. Everything is static inline, so a test that
 * uses only part of it builds without warnings.
 */
#ifndef SPART_TEST_UTIL_H
#define SPART_TEST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spart.h"

/* ---- contexts ------------------------------------------------------------------------------ */

/* A new context; the test fails if there is none. */
static inline spart_context *context_or_fail(void)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    return context;
}

/* The group set-up of cmocka_run_group_tests whose state is a context. */
static inline int context_set_up(void **state)
{
    *state = context_or_fail();
    return 0;
}

static inline int context_tear_down(void **state)
{
    spart_context_free(*state);
    return 0;
}

/* ---- allocators ------------------------------------------------------------------------- */

/* The C library's malloc, realloc and free as a spart_allocator. */
static inline void *plain_malloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}

static inline void *plain_realloc(void *user, void *pointer, size_t size)
{
    (void)user;
    return realloc(pointer, size);
}

static inline void plain_free(void *user, void *pointer)
{
    (void)user;
    free(pointer);
}

static const spart_allocator plain_allocator = {plain_malloc, plain_realloc, plain_free, NULL};

/* ---- numbers and shapes -------------------------------------------------------------------- */

/* A reproducible stream of numbers in [0, 1) (not rand(): the same everywhere). */
static inline double next_uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

static inline spart_shape shape_of(int ndim, const int64_t *dims)
{
    spart_shape shape;
    memset(&shape, 0, sizeof shape);
    shape.ndim = ndim;
    for (int a = 0; a < ndim; a++) {
        shape.dims[a] = dims[a];
    }
    return shape;
}

/* ---- weights --------------------------------------------------------------------------------- */

/* One element from `columns` input cells to `rows` output cells, its
 * `entries` entries given: input cell in[k], output cell out[k], values[k]. */
static inline spart_weights *one_element_weights(spart_context *context, int64_t rows,
                                                 int64_t columns, int64_t entries,
                                                 const int64_t *in, const int64_t *out,
                                                 const double *values)
{
    const int64_t orthogonal[] = {1}, input[] = {1, columns}, output[] = {1, rows};
    const int axes_input[] = {1}, axes_output[] = {1};
    int64_t offsets[2] = {0, entries};
    spart_weights *weights = NULL;
    spart_shape o = shape_of(1, orthogonal), i = shape_of(2, input), u = shape_of(2, output);
    assert_int_equal(spart_weights_create_from_arrays(context, &o, &i, &u, 1, axes_input, 1,
                                                      axes_output, offsets, in, out, values,
                                                      &weights),
                     SPART_OK);
    return weights;
}

/* One element from `columns` input cells to `rows` output cells with
 * `entries` entries: signed values, one in eight of them tiny, so that some
 * products underflow and some lanes end as -0.0; with `all_negative_tiny`,
 * every value is tiny and negative instead. */
static inline spart_weights *signed_weights(spart_context *context, int64_t rows, int64_t columns,
                                            int64_t entries, uint64_t seed, int all_negative_tiny)
{
    int64_t *in = malloc((size_t)entries * sizeof(int64_t));
    int64_t *out = malloc((size_t)entries * sizeof(int64_t));
    double *values = malloc((size_t)entries * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < entries; k++) {
        in[k] = (int64_t)(next_uniform(&state) * (double)columns);
        out[k] = (int64_t)(next_uniform(&state) * (double)rows);
        values[k] = 2.0 * next_uniform(&state) - 1.0;
        if (all_negative_tiny) {
            values[k] = -1e-200 * (1.0 + fabs(values[k]));
        } else if (k % 8 == 3) {
            values[k] *= 1e-200;
        }
    }
    spart_weights *weights = one_element_weights(context, rows, columns, entries, in, out, values);
    free(in);
    free(out);
    free(values);
    return weights;
}

/* ---- comparing results --------------------------------------------------------------------- */

/* FNV-1a over `bytes` bytes: the golden digest of an array. */
static inline uint64_t digest_bytes(const void *data, size_t bytes)
{
    uint64_t hash = 1469598103934665603ULL;
    const unsigned char *p = data;
    for (size_t k = 0; k < bytes; k++) {
        hash = (hash ^ p[k]) * 1099511628211ULL;
    }
    return hash;
}

/* The golden digest of n doubles. */
static inline uint64_t digest_doubles(const double *values, int64_t n)
{
    return digest_bytes(values, (size_t)n * sizeof(double));
}

/* a and b hold the same bits, except that a NaN may be any NaN: which NaN
 * an operation on two NaNs gives (the sign and payload of the first
 * operand, on x86) depends on the operand order the compiler picks, which
 * is not part of the summation order (a GPU gives its canonical NaN). */
static inline void assert_same_bits_or_nan(const double *a, const double *b, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        if (isnan(a[k]) && isnan(b[k])) {
            continue;
        }
        if (memcmp(&a[k], &b[k], sizeof(double)) != 0) {
            fail_msg("value %lld: %a, expected %a", (long long)k, a[k], b[k]);
        }
    }
}

#endif /* SPART_TEST_UTIL_H */
