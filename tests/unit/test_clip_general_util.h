/*
 * tests/unit/test_clip_general_util.h: the grids and kernel runs shared by
 * the tests of the general 2-D clipping kernel
 * (test_conservative_2d_clip_general.c and
 * test_conservative_2d_clip_general_cells.c): rotated, bent, mirrored and
 * reversed grids, the three kernels run on them, and comparisons.
 */
#include "test_conservative_util.h"
#ifndef SPART_TEST_CLIP_GENERAL_UTIL_H
#define SPART_TEST_CLIP_GENERAL_UTIL_H

/* ---- grids ------------------------------------------------------------------ */

/* Rotate every vertex about the origin by `angle`, then shift it. */
static inline void rotate_shift(grid *g, double angle, double shift_x, double shift_y)
{
    for (int64_t k = 0; k < num_vertices(g); k++) {
        double x = g->x[k], y = g->y[k];
        g->x[k] = x * cos(angle) - y * sin(angle) + shift_x;
        g->y[k] = x * sin(angle) + y * cos(angle) + shift_y;
    }
}

/* Bend the grid: x += bend y^2, y += bend x^2. */
static inline void bend(grid *g, double bend_factor)
{
    for (int64_t k = 0; k < num_vertices(g); k++) {
        double x = g->x[k], y = g->y[k];
        g->x[k] = x + bend_factor * (y * y);
        g->y[k] = y + bend_factor * (x * x);
    }
}

/* A rotated, bent, shifted curvilinear grid of num by num vertices. */
static inline grid curvilinear(int64_t num, double half_width, double angle, double bend_factor,
                               double shift_x, double shift_y)
{
    grid g = lattice(-half_width, half_width, num, -half_width, half_width, num);
    rotate_shift(&g, angle, 0, 0);
    bend(&g, bend_factor);
    rotate_shift(&g, 0, shift_x, shift_y);
    return g;
}

static inline grid copy(const grid *g)
{
    grid c = grid_new(g->num_x, g->num_y);
    memcpy(c.x, g->x, (size_t)num_vertices(g) * sizeof(double));
    memcpy(c.y, g->y, (size_t)num_vertices(g) * sizeof(double));
    return c;
}

/* The mirror image x -> -x: the same shapes, the opposite orientation. */
static inline grid mirrored(const grid *g)
{
    grid m = copy(g);
    for (int64_t k = 0; k < num_vertices(g); k++) {
        m.x[k] = -g->x[k];
    }
    return m;
}

/* The same vertices with axis 0 reversed: cell (a, b) becomes cell
 * (num_x - 2 - a, b), of the opposite orientation. */
static inline grid reversed_along_axis_0(const grid *g)
{
    grid r = grid_new(g->num_x, g->num_y);
    for (int64_t i = 0; i < g->num_x; i++) {
        for (int64_t j = 0; j < g->num_y; j++) {
            r.x[i * g->num_y + j] = g->x[(g->num_x - 1 - i) * g->num_y + j];
            r.y[i * g->num_y + j] = g->y[(g->num_x - 1 - i) * g->num_y + j];
        }
    }
    return r;
}

/* The index of cell (a, b) after reversing axis 0. */
static inline int64_t reversed_cell(const grid *g, int64_t cell)
{
    int64_t num_cells_y = g->num_y - 1;
    int64_t a = cell / num_cells_y, b = cell % num_cells_y;
    return (g->num_x - 2 - a) * num_cells_y + b;
}

/* The shoelace area of cell (a, b), counterclockwise positive. */
static inline double cell_area(const grid *g, int64_t cell)
{
    int64_t num_cells_y = g->num_y - 1;
    int64_t a = cell / num_cells_y, b = cell % num_cells_y;
    const int64_t corner[4] = {a * g->num_y + b, (a + 1) * g->num_y + b, (a + 1) * g->num_y + b + 1,
                               a * g->num_y + b + 1};
    double sum = 0;
    for (int k = 0; k < 4; k++) {
        int64_t p = corner[k], q = corner[(k + 1) % 4];
        sum += g->x[p] * g->y[q] - g->x[q] * g->y[p];
    }
    return sum / 2;
}

/* ---- running the kernels ------------------------------------------------------ */

static inline spart_triples clip_general(const grid *in, const grid *out,
                                         const double *weights_input, int parallel)
{
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_host_weights_conservative_2d_clip_general(
                         in->x, in->y, in->num_x, in->num_y, out->x, out->y, out->num_x, out->num_y,
                         weights_input, parallel, &t),
                     SPART_OK);
    assert_sorted_unique_in_range(&t, num_cells(in), num_cells(out));
    return t;
}

/* The lattice clipping kernel (the output must be a lattice). */
static inline spart_triples clip_lattice(const grid *in, const grid *out)
{
    assert_true(spart_host_grid_is_lattice(out->x, out->y, out->num_x, out->num_y));
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_host_weights_conservative_2d_clip(in->x, in->y, in->num_x, in->num_y,
                                                             out->x, out->y, out->num_x, out->num_y,
                                                             NULL, 1, &t),
                     SPART_OK);
    return t;
}

/* The sweep kernel, unperturbed, its fragments summed per pair. */
static inline spart_triples sweep_coalesced(const grid *in, const grid *out)
{
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_host_weights_conservative_2d_sweep(in->x, in->y, in->num_x, in->num_y,
                                                              out->x, out->y, out->num_x,
                                                              out->num_y, NULL, 1, &t),
                     SPART_OK);
    assert_int_equal(spart_weights_coalesce(&t), SPART_OK);
    return t;
}

/* The largest difference between two lists sorted by (input, output), a
 * pair missing from one list counting as 0 there. */
static inline double max_difference(const spart_triples *a, const spart_triples *b)
{
    double largest = 0;
    int64_t k = 0, m = 0;
    while (k < a->count || m < b->count) {
        int order;
        if (k == a->count) {
            order = 1;
        } else if (m == b->count) {
            order = -1;
        } else if (a->indices_input[k] != b->indices_input[m]) {
            order = a->indices_input[k] < b->indices_input[m] ? -1 : 1;
        } else if (a->indices_output[k] != b->indices_output[m]) {
            order = a->indices_output[k] < b->indices_output[m] ? -1 : 1;
        } else {
            order = 0;
        }
        double value_a = order <= 0 ? a->values[k++] : 0.0;
        double value_b = order >= 0 ? b->values[m++] : 0.0;
        largest = fmax(largest, fabs(value_a - value_b));
    }
    return largest;
}

/* The area each output cell receives: sum of weight * input cell area. */
static inline double *output_areas(const spart_triples *t, const grid *in, int64_t num_output)
{
    double *areas = calloc((size_t)num_output, sizeof(double));
    assert_non_null(areas);
    for (int64_t k = 0; k < t->count; k++) {
        areas[t->indices_output[k]] += t->values[k] * fabs(cell_area(in, t->indices_input[k]));
    }
    return areas;
}

#endif
