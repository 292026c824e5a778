/*
 * tests/unit/test_multilinear_util.h: what the multilinear kernel's tests
 * share (test_multilinear.c, test_multilinear_curvilinear.c): a counting
 * allocator that can be told to fail, a run of the kernel, interpolation
 * through the weights, and comparisons with reference entries.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weights/weights_kernels.h"
#ifndef SPART_TEST_MULTILINEAR_UTIL_H
#define SPART_TEST_MULTILINEAR_UTIL_H

/* ---- helpers ------------------------------------------------------------ */

/* An allocator over malloc that counts live blocks, and can be told to
 * fail, to check that scratch memory is returned and failures reported. */
typedef struct counting {
    int64_t live;
    int fail;
} counting;

static inline void *counting_malloc(void *user, size_t size)
{
    counting *c = user;
    if (c->fail) {
        return NULL;
    }
    c->live++;
    return malloc(size);
}

static inline void *counting_realloc(void *user, void *pointer, size_t size)
{
    counting *c = user;
    if (c->fail) {
        return NULL;
    }
    if (pointer == NULL) {
        c->live++;
    }
    return realloc(pointer, size);
}

static inline void counting_free(void *user, void *pointer)
{
    counting *c = user;
    if (pointer != NULL) {
        c->live--;
    }
    free(pointer);
}

typedef struct run {
    counting count;
    spart_allocator allocator;
    spart_triples triples;
    int64_t num_outside;
} run;

static inline void run_init(run *r)
{
    memset(r, 0, sizeof *r);
    r->allocator.malloc_fn = counting_malloc;
    r->allocator.realloc_fn = counting_realloc;
    r->allocator.free_fn = counting_free;
    r->allocator.user = &r->count;
    spart_triples_init(&r->triples, &r->allocator);
}

static inline spart_status run_kernel(run *r, int ndim, const int64_t *shape,
                                      const double *const *grid, int64_t num_points,
                                      const double *const *points, const double *weights_input,
                                      spart_bounds bounds, int parallel)
{
    return spart_host_weights_multilinear(ndim, shape, grid, num_points, points, weights_input,
                                          bounds, parallel, &r->triples, &r->num_outside);
}

static inline void run_release(run *r)
{
    spart_triples_release(&r->triples);
    assert_int_equal(r->count.live, 0);
}

/* The interpolated values out[p] = sum of value * f[input] over point p's
 * entries, in entry order. */
static inline void interpolate(const spart_triples *t, const double *f, int64_t num_points,
                               double *out)
{
    for (int64_t p = 0; p < num_points; p++) {
        out[p] = 0.0;
    }
    for (int64_t k = 0; k < t->count; k++) {
        out[t->indices_output[k]] += t->values[k] * f[t->indices_input[k]];
    }
}

/* |actual - expected| <= tolerance (0: equal). */
static inline void assert_close(double actual, double expected, double tolerance)
{
    if (!(fabs(actual - expected) <= tolerance)) {
        fail_msg("%.17g differs from %.17g by more than %g", actual, expected, tolerance);
    }
}

/* Entries equal to reference numbers: indices exactly, values to `tolerance`
 * (0: bit for bit), NaN where the reference has NaN. */
static inline void assert_entries(const spart_triples *t, int64_t count,
                                  const int64_t *indices_input, const double *values, int corners,
                                  double tolerance)
{
    assert_int_equal(t->count, count);
    for (int64_t k = 0; k < count; k++) {
        assert_int_equal(t->indices_input[k], indices_input[k]);
        assert_int_equal(t->indices_output[k], k / corners);
        if (isnan(values[k])) {
            assert_true(isnan(t->values[k]));
        } else if (tolerance == 0) {
            assert_memory_equal(&t->values[k], &values[k], sizeof(double));
        } else {
            assert_close(t->values[k], values[k], tolerance);
        }
    }
}

/* A reproducible uniform draw in [low, high) (a 64-bit LCG). */
static inline double uniform(uint64_t *state, double low, double high)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return low + (high - low) * (double)(*state >> 11) * 0x1.0p-53;
}

/* The 1-D case of regridding.md section 7 item 1: a line of 5 vertices, 4
 * points, and weights_multilinear((np.arange(5.0),),
 * (np.array([-0.5, 0.5, 3.5, 4.5]),))'s entries. */
static const double line_x[] = {0, 1, 2, 3, 4};
static const double line_points[] = {-0.5, 0.5, 3.5, 4.5};
static const int64_t line_indices[] = {0, 1, 0, 1, 3, 4, 3, 4};
static const double line_values[] = {1.5, -0.5, 0.5, 0.5, 0.5, 0.5, -0.5, 1.5};

#endif
