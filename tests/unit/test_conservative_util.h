/*
 * tests/unit/test_conservative_util.h: what the tests of the 2-D
 * conservative kernels (test_conservative_2d_clip.c,
 * test_conservative_2d_clip_general.c, test_conservative_2d_sweep.c)
 * share: grids of vertices and lattices laid out as numpy.linspace and
 * numpy.meshgrid make them, checks of the kernels' lists of (input,
 * output, value), and an allocator that fails its n-th allocation.
 *
 * Include after <cmocka.h>. Everything is static inline, so a test that
 * uses only part of it builds without warnings.
 */
#ifndef SPART_TEST_CONSERVATIVE_UTIL_H
#define SPART_TEST_CONSERVATIVE_UTIL_H

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "weights/triples.h"

/* ---- grids ------------------------------------------------------------------------------ */

/* A grid of num_x by num_y vertices, x[i * num_y + j]. */
typedef struct grid {
    int64_t num_x, num_y;
    double *x, *y;
} grid;

static inline grid grid_new(int64_t num_x, int64_t num_y)
{
    grid g = {num_x, num_y, calloc((size_t)(num_x * num_y), sizeof(double)),
              calloc((size_t)(num_x * num_y), sizeof(double))};
    assert_non_null(g.x);
    assert_non_null(g.y);
    return g;
}

static inline void grid_free(grid *g)
{
    free(g->x);
    free(g->y);
}

static inline int64_t num_vertices(const grid *g)
{
    return g->num_x * g->num_y;
}

static inline int64_t num_cells(const grid *g)
{
    return (g->num_x - 1) * (g->num_y - 1);
}

/* np.linspace(start, stop, num)[k]: k * step + start, the last exactly stop. */
static inline double linspace_at(double start, double stop, int64_t num, int64_t k)
{
    if (k == num - 1) {
        return stop;
    }
    return (double)k * ((stop - start) / (double)(num - 1)) + start;
}

/* np.meshgrid(linspace(x0, x1, num_x), linspace(y0, y1, num_y), indexing="ij") */
static inline grid lattice(double x0, double x1, int64_t num_x, double y0, double y1, int64_t num_y)
{
    grid g = grid_new(num_x, num_y);
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            g.x[i * num_y + j] = linspace_at(x0, x1, num_x, i);
            g.y[i * num_y + j] = linspace_at(y0, y1, num_y, j);
        }
    }
    return g;
}

/* A lattice of num by num vertices spanning the bounding box of g. */
static inline grid bounding_lattice(const grid *g, int64_t num)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int64_t k = 0; k < num_vertices(g); k++) {
        x0 = fmin(x0, g->x[k]);
        x1 = fmax(x1, g->x[k]);
        y0 = fmin(y0, g->y[k]);
        y1 = fmax(y1, g->y[k]);
    }
    return lattice(x0, x1, num, y0, y1, num);
}

/* ---- the kernels' lists -------------------------------------------------------------- */

/* The sum of each input cell's weights. */
static inline double *input_totals(const spart_triples *t, int64_t num_input)
{
    double *totals = calloc((size_t)num_input, sizeof(double));
    assert_non_null(totals);
    for (int64_t k = 0; k < t->count; k++) {
        totals[t->indices_input[k]] += t->values[k];
    }
    return totals;
}

/* Every list from the kernel is sorted by (input, output), one entry per
 * pair, every index on its grid. */
static inline void assert_sorted_unique_in_range(const spart_triples *t, int64_t num_input,
                                                 int64_t num_output)
{
    for (int64_t k = 0; k < t->count; k++) {
        assert_true(t->indices_input[k] >= 0 && t->indices_input[k] < num_input);
        assert_true(t->indices_output[k] >= 0 && t->indices_output[k] < num_output);
        if (k > 0) {
            int64_t i0 = t->indices_input[k - 1], i1 = t->indices_input[k];
            assert_true(i0 < i1 || (i0 == i1 && t->indices_output[k - 1] < t->indices_output[k]));
        }
    }
}

/* The same entries, bit for bit, in the same order. */
static inline void assert_triples_bits_equal(const spart_triples *a, const spart_triples *b)
{
    assert_int_equal(a->count, b->count);
    size_t n = (size_t)a->count;
    assert_memory_equal(a->indices_input, b->indices_input, n * sizeof(int64_t));
    assert_memory_equal(a->indices_output, b->indices_output, n * sizeof(int64_t));
    assert_memory_equal(a->values, b->values, n * sizeof(double));
}

/* |actual - expected| <= tolerance (0: equal). */
static inline void assert_close(double actual, double expected, double tolerance)
{
    if (!(fabs(actual - expected) <= tolerance)) {
        fail_msg("%.17g differs from %.17g by more than %g", actual, expected, tolerance);
    }
}

/* The weights of the lattice clipping kernel from `input` onto the lattice
 * `output` (test_conservative_2d_clip.c and _polygons.c). */
static inline spart_triples clip_onto_lattice(const grid *input, const grid *output,
                                              const double *weights_input, int parallel)
{
    assert_true(spart_host_grid_is_lattice(output->x, output->y, output->num_x, output->num_y));
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_host_weights_conservative_2d_clip(
                         input->x, input->y, input->num_x, input->num_y, output->x, output->y,
                         output->num_x, output->num_y, weights_input, parallel, &t),
                     SPART_OK);
    return t;
}

/* ---- an allocator that fails ---------------------------------------------------------- */

/* An allocator that fails its n-th allocation and counts what is live. */
typedef struct failing_allocator {
    _Atomic int64_t allocations; /* atomic: blocks allocate from several threads */
    int64_t fail_at;
    _Atomic int64_t live;
} failing_allocator;

static inline void *failing_malloc(void *user, size_t size)
{
    failing_allocator *state = user;
    if (state->allocations++ == state->fail_at) {
        return NULL;
    }
    void *pointer = malloc(size);
    state->live += pointer != NULL;
    return pointer;
}

static inline void *failing_realloc(void *user, void *pointer, size_t size)
{
    failing_allocator *state = user;
    if (state->allocations++ == state->fail_at) {
        return NULL;
    }
    if (pointer == NULL) {
        state->live++;
    }
    return realloc(pointer, size);
}

static inline void failing_free(void *user, void *pointer)
{
    failing_allocator *state = user;
    state->live -= pointer != NULL;
    free(pointer);
}

#endif /* SPART_TEST_CONSERVATIVE_UTIL_H */
