/* The 2-D conservative kernel by exact clipping between any two grids
 * (src/weights/weights_conservative_2d_clip_general.c). */
#include <math.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weights/triples.h"
#include "weights/weights_kernels.h"
#include "test_util.h"
#include "test_conservative_util.h"

/* ---- grids ------------------------------------------------------------------ */

/* Rotate every vertex about the origin by `angle`, then shift it. */
static void rotate_shift(grid *g, double angle, double shift_x, double shift_y)
{
    for (int64_t k = 0; k < num_vertices(g); k++) {
        double x = g->x[k], y = g->y[k];
        g->x[k] = x * cos(angle) - y * sin(angle) + shift_x;
        g->y[k] = x * sin(angle) + y * cos(angle) + shift_y;
    }
}

/* Bend the grid: x += bend y^2, y += bend x^2. */
static void bend(grid *g, double bend_factor)
{
    for (int64_t k = 0; k < num_vertices(g); k++) {
        double x = g->x[k], y = g->y[k];
        g->x[k] = x + bend_factor * (y * y);
        g->y[k] = y + bend_factor * (x * x);
    }
}

/* A rotated, bent, shifted curvilinear grid of num by num vertices. */
static grid curvilinear(int64_t num, double half_width, double angle, double bend_factor,
                        double shift_x, double shift_y)
{
    grid g = lattice(-half_width, half_width, num, -half_width, half_width, num);
    rotate_shift(&g, angle, 0, 0);
    bend(&g, bend_factor);
    rotate_shift(&g, 0, shift_x, shift_y);
    return g;
}

static grid copy(const grid *g)
{
    grid c = grid_new(g->num_x, g->num_y);
    memcpy(c.x, g->x, (size_t)num_vertices(g) * sizeof(double));
    memcpy(c.y, g->y, (size_t)num_vertices(g) * sizeof(double));
    return c;
}

/* The mirror image x -> -x: the same shapes, the opposite orientation. */
static grid mirrored(const grid *g)
{
    grid m = copy(g);
    for (int64_t k = 0; k < num_vertices(g); k++) {
        m.x[k] = -g->x[k];
    }
    return m;
}

/* The same vertices with axis 0 reversed: cell (a, b) becomes cell
 * (num_x - 2 - a, b), of the opposite orientation. */
static grid reversed_along_axis_0(const grid *g)
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
static int64_t reversed_cell(const grid *g, int64_t cell)
{
    int64_t num_cells_y = g->num_y - 1;
    int64_t a = cell / num_cells_y, b = cell % num_cells_y;
    return (g->num_x - 2 - a) * num_cells_y + b;
}

/* The shoelace area of cell (a, b), counterclockwise positive. */
static double cell_area(const grid *g, int64_t cell)
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

static spart_triples clip_general(const grid *in, const grid *out, const double *weights_input,
                                  int parallel)
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
static spart_triples clip_lattice(const grid *in, const grid *out)
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
static spart_triples sweep_coalesced(const grid *in, const grid *out)
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
static double max_difference(const spart_triples *a, const spart_triples *b)
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
static double *output_areas(const spart_triples *t, const grid *in, int64_t num_output)
{
    double *areas = calloc((size_t)num_output, sizeof(double));
    assert_non_null(areas);
    for (int64_t k = 0; k < t->count; k++) {
        areas[t->indices_output[k]] += t->values[k] * fabs(cell_area(in, t->indices_input[k]));
    }
    return areas;
}

/* ---- identical grids: the identity, without perturbation ---------------------- */

static void check_identity(const grid *g)
{
    spart_triples t = clip_general(g, g, NULL, 1);
    assert_int_equal(t.count, num_cells(g));
    for (int64_t k = 0; k < t.count; k++) {
        assert_int_equal(t.indices_input[k], k);
        assert_int_equal(t.indices_output[k], k);
        assert_close(t.values[k], 1.0, 1e-12);
    }
    spart_triples_release(&t);
}

static void identical_rotated_curvilinear_grids_give_the_identity(void **state)
{
    (void)state;
    grid rotated = lattice(-4, 4, 65, -4, 4, 65);
    rotate_shift(&rotated, 0.2, 0, 0);
    check_identity(&rotated);
    grid warped = curvilinear(66, 5, 0.4, 0.05, 0, 0);
    check_identity(&warped);
    grid shifted = curvilinear(30, 1, -0.7, 0.2, 100.25, -37.5);
    check_identity(&shifted);
    grid flat = lattice(-1, 1, 9, -1, 1, 12);
    check_identity(&flat);
    grid_free(&rotated);
    grid_free(&warped);
    grid_free(&shifted);
    grid_free(&flat);
}

static void identical_clockwise_grids_give_the_identity(void **state)
{
    (void)state;
    grid g = curvilinear(21, 2, 0.3, 0.05, 0.5, 0);
    grid clockwise = reversed_along_axis_0(&g);
    check_identity(&clockwise);
    grid mirror = mirrored(&g);
    check_identity(&mirror);
    grid_free(&g);
    grid_free(&clockwise);
    grid_free(&mirror);
}

/* ---- opposite orientations: positive weights, the true overlaps ----------------- */

/* A grid against itself with axis 0 reversed: the same cells under other
 * names, of the opposite orientation, so a permutation of ones. */
static void a_grid_against_itself_reversed_gives_a_permutation(void **state)
{
    (void)state;
    grid g = curvilinear(25, 3, 0.3, 0.05, 0, 0);
    grid r = reversed_along_axis_0(&g);
    spart_triples t = clip_general(&g, &r, NULL, 1);
    assert_int_equal(t.count, num_cells(&g));
    for (int64_t k = 0; k < t.count; k++) {
        assert_int_equal(t.indices_output[k], reversed_cell(&g, t.indices_input[k]));
        assert_close(t.values[k], 1.0, 1e-12);
    }
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&r);
}

/* Two cells [0, 1] and [1, 2] (by [0, 1]) against their mirror image moved
 * to x in [0.5, 2.5], whose cell 0 is [1.5, 2.5] and cell 1 [0.5, 1.5]:
 * every overlap is half a cell. */
static void mirrored_boxes_give_the_exact_overlaps(void **state)
{
    (void)state;
    grid in = lattice(0, 2, 3, 0, 1, 2);
    grid out = lattice(2.5, 0.5, 3, 0, 1, 2);
    spart_triples t = clip_general(&in, &out, NULL, 1);
    assert_int_equal(t.count, 3);
    const int64_t expected_input[3] = {0, 1, 1};
    const int64_t expected_output[3] = {1, 0, 1};
    for (int64_t k = 0; k < 3; k++) {
        assert_int_equal(t.indices_input[k], expected_input[k]);
        assert_int_equal(t.indices_output[k], expected_output[k]);
        assert_close(t.values[k], 0.5, 1e-15);
    }
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

/* A curvilinear grid against its mirror image x -> -x: every weight is
 * positive, and equals the overlap found by the sweep (correct for grids
 * of one orientation) against the mirror image with axis 0 reversed,
 * which has the same cells in the input's orientation. */
static void a_grid_against_its_mirror_image_gives_the_true_overlaps(void **state)
{
    (void)state;
    grid g = curvilinear(17, 1.5, 0.3, 0.04, 0.1234, 0.0567);
    grid m = mirrored(&g);
    grid m_reversed = reversed_along_axis_0(&m);
    spart_triples t = clip_general(&g, &m, NULL, 1);
    assert_true(t.count > num_cells(&g));
    for (int64_t k = 0; k < t.count; k++) {
        assert_true(t.values[k] > 0);
        t.indices_output[k] = reversed_cell(&m, t.indices_output[k]);
    }
    spart_triples truth = sweep_coalesced(&g, &m_reversed);
    /* renamed, the clipping list is sorted again by (input, output) */
    spart_triples t_sorted = clip_general(&g, &m_reversed, NULL, 1);
    double *dense = calloc((size_t)(num_cells(&g) * num_cells(&m)), sizeof(double));
    assert_non_null(dense);
    for (int64_t k = 0; k < t.count; k++) {
        dense[t.indices_input[k] * num_cells(&m) + t.indices_output[k]] = t.values[k];
    }
    for (int64_t k = 0; k < t_sorted.count; k++) {
        double v = dense[t_sorted.indices_input[k] * num_cells(&m) + t_sorted.indices_output[k]];
        assert_close(v, t_sorted.values[k], 1e-13);
    }
    assert_int_equal(t_sorted.count, t.count);
    assert_true(max_difference(&t_sorted, &truth) < 1e-11);
    free(dense);
    spart_triples_release(&t);
    spart_triples_release(&t_sorted);
    spart_triples_release(&truth);
    grid_free(&g);
    grid_free(&m);
    grid_free(&m_reversed);
}

/* Where the output is a lattice of the opposite orientation (x
 * descending), or the input is mirrored, the lattice kernel's exact
 * overlaps are matched. */
static void a_mirrored_lattice_matches_the_lattice_kernel(void **state)
{
    (void)state;
    grid g = curvilinear(23, 0.8, 0.3, 0.1, 0.05, -0.02);
    grid descending = lattice(1, -1, 11, -0.9, 1.1, 13);
    spart_triples general = clip_general(&g, &descending, NULL, 1);
    spart_triples reference = clip_lattice(&g, &descending);
    assert_true(general.count > num_cells(&g));
    assert_true(max_difference(&general, &reference) < 1e-13);
    for (int64_t k = 0; k < general.count; k++) {
        assert_true(general.values[k] > 0);
    }
    spart_triples_release(&general);
    spart_triples_release(&reference);

    grid m = mirrored(&g);
    grid ascending = lattice(-1, 1, 11, -0.9, 1.1, 13);
    general = clip_general(&m, &ascending, NULL, 1);
    reference = clip_lattice(&m, &ascending);
    assert_true(max_difference(&general, &reference) < 1e-13);
    for (int64_t k = 0; k < general.count; k++) {
        assert_true(general.values[k] > 0);
    }
    spart_triples_release(&general);
    spart_triples_release(&reference);
    grid_free(&g);
    grid_free(&m);
    grid_free(&descending);
    grid_free(&ascending);
}

/* ---- agreement with the other kernels ----------------------------------------------- */

static void check_against_the_lattice_kernel(const grid *in, const grid *out)
{
    spart_triples general = clip_general(in, out, NULL, 1);
    spart_triples reference = clip_lattice(in, out);
    assert_true(general.count > 0);
    double difference = max_difference(&general, &reference);
    if (!(difference < 1e-13)) {
        fail_msg("the kernels differ by %g", difference);
    }
    spart_triples_release(&general);
    spart_triples_release(&reference);
}

static void lattice_outputs_match_the_lattice_kernel(void **state)
{
    (void)state;
    const double angles[3] = {0.3, -0.2, 0.9};
    for (int k = 0; k < 3; k++) {
        grid g = curvilinear(31, 0.7, angles[k], 0.1, 0, 0);
        grid out = bounding_lattice(&g, 12);
        check_against_the_lattice_kernel(&g, &out);
        grid coarse = lattice(-0.5, 0.6, 5, -0.45, 0.4, 4);
        check_against_the_lattice_kernel(&g, &coarse);
        grid_free(&g);
        grid_free(&out);
        grid_free(&coarse);
    }
    /* regridding's README warp onto its bounding lattice */
    grid warp = curvilinear(66, 5, 0.4, 0.05, 0, 0);
    grid out = bounding_lattice(&warp, 33);
    check_against_the_lattice_kernel(&warp, &out);
    /* lattices onto lattices, with coincident and collinear edges */
    grid fine = lattice(-1, 1, 21, -1, 1, 17);
    grid coarse = lattice(-1, 1, 6, -1.5, 1, 5);
    check_against_the_lattice_kernel(&fine, &coarse);
    check_against_the_lattice_kernel(&coarse, &fine);
    grid_free(&warp);
    grid_free(&out);
    grid_free(&fine);
    grid_free(&coarse);
}

static void check_against_the_sweep(const grid *in, const grid *out)
{
    spart_triples general = clip_general(in, out, NULL, 1);
    spart_triples reference = sweep_coalesced(in, out);
    assert_true(general.count > 0);
    double difference = max_difference(&general, &reference);
    if (!(difference < 1e-11)) {
        fail_msg("the kernels differ by %g", difference);
    }
    spart_triples_release(&general);
    spart_triples_release(&reference);
}

/* Grids in general position, where the sweep needs no perturbation. */
static void rotated_and_warped_grids_match_the_sweep(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 4, -1, 1.2, 5);
    rotate_shift(&in, 0.3, 0, 0);
    grid out = lattice(-1.2, 1.1, 5, -0.9, 1.3, 4);
    rotate_shift(&out, -0.1, 0.05, -0.02);
    check_against_the_sweep(&in, &out);
    check_against_the_sweep(&out, &in);

    grid warped = curvilinear(40, 2, 0.35, 0.06, 0.013, -0.021);
    grid other = curvilinear(29, 2.3, -0.15, -0.04, 0.0, 0.0);
    check_against_the_sweep(&warped, &other);
    check_against_the_sweep(&other, &warped);

    grid fine = lattice(-3, 3, 61, -3, 3, 61);
    rotate_shift(&fine, 0.2, 0.001, 0.002);
    grid rotated = lattice(-3, 3, 61, -3, 3, 61);
    rotate_shift(&rotated, 0.0, 0, 0);
    check_against_the_sweep(&fine, &rotated);
    grid_free(&in);
    grid_free(&out);
    grid_free(&warped);
    grid_free(&other);
    grid_free(&fine);
    grid_free(&rotated);
}

/* From /tmp/venv/bin/python with regridding 3.6.0 (as in the sweep
 * kernel's test, tests/unit/test_conservative_2d_sweep.c):
 *   rot = lambda x, y, a: (x*cos(a) - y*sin(a), x*sin(a) + y*cos(a))
 *   xi, yi = rot(*meshgrid(linspace(-1, 1, 4), linspace(-1, 1.2, 5), indexing="ij"), 0.3)
 *   xo, yo = rot(*meshgrid(linspace(-1.2, 1.1, 5), linspace(-0.9, 1.3, 4), indexing="ij"), -0.1)
 *   W, _, _ = regridding.weights((xi, yi), (xo + 0.05, yo - 0.02),
 *                                method="conservative", perturb=False)
 * (the output is no lattice, so 3.6.0 uses the sweep); W[()] coalesced. */
static const struct {
    int64_t input;
    int64_t output;
    double value;
} reference_weights[] = {
    {0, 0, 0.062311757336994095},  {0, 3, 0.41133505921175195},  {0, 6, 0.0017313092000025981},
    {1, 0, 0.4480790814480708},    {1, 1, 0.007362516638157419}, {1, 3, 0.4732227108514401},
    {1, 4, 0.07133569106233172},   {2, 0, 0.05092598646272567},  {2, 1, 0.7507638344351366},
    {2, 4, 0.1957539964547887},    {3, 1, 0.3277217948676081},   {3, 2, 0.4549943487836193},
    {3, 4, 0.000653516825121065},  {4, 3, 0.06778672818809459},  {4, 6, 0.8074715217770168},
    {4, 9, 0.054465632880124126},  {5, 3, 0.19765550174871344},  {5, 4, 0.194206165818058},
    {5, 6, 0.2620956482399938},    {5, 7, 0.34604268419323464},  {6, 4, 0.6634896071943449},
    {6, 5, 0.07717646583140986},   {6, 7, 0.21775557876497412},  {6, 8, 0.04157834820927095},
    {7, 1, 0.0015508458950172638}, {7, 2, 0.15215307993429872},  {7, 4, 0.02456102264535559},
    {7, 5, 0.8113948756699018},    {7, 8, 0.010340175855426608}, {8, 6, 0.033942964468455544},
    {8, 9, 0.7775023774809645},    {8, 10, 0.09276353351810517}, {9, 6, 0.027547997236601493},
    {9, 7, 0.3007337398107134},    {9, 9, 0.01286113747249197},  {9, 10, 0.6588571254801932},
    {10, 7, 0.28546799723107785},  {10, 8, 0.3916181452752204},  {10, 10, 0.10941242849508503},
    {10, 11, 0.21350142899861688}, {11, 5, 0.09870771368573618}, {11, 8, 0.7026531885764233},
    {11, 11, 0.03161615973826534},
};

/* The same pairs as the package, and the same values to rounding. */
static void rotated_grids_match_regridding(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 4, -1, 1.2, 5);
    rotate_shift(&in, 0.3, 0, 0);
    grid out = lattice(-1.2, 1.1, 5, -0.9, 1.3, 4);
    rotate_shift(&out, -0.1, 0.05, -0.02);
    spart_triples t = clip_general(&in, &out, NULL, 1);
    const int64_t num_reference = sizeof reference_weights / sizeof reference_weights[0];
    assert_int_equal(t.count, num_reference);
    for (int64_t k = 0; k < num_reference; k++) {
        assert_int_equal(t.indices_input[k], reference_weights[k].input);
        assert_int_equal(t.indices_output[k], reference_weights[k].output);
        assert_close(t.values[k], reference_weights[k].value, 1e-14);
    }
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

/* ---- conservation -------------------------------------------------------------------- */

/* regridding's README warp (66 x 66 vertices on +-5, rotated 0.4, bent)
 * onto a rotated, bent output grid that covers it: every input cell gives
 * away exactly all of itself. */
static void a_warp_onto_a_covering_curvilinear_grid_conserves(void **state)
{
    (void)state;
    grid in = curvilinear(66, 5, 0.4, 0.05, 0, 0);
    grid out = curvilinear(47, 12, -0.15, 0.01, 0.3, 0.2);
    spart_triples t = clip_general(&in, &out, NULL, 1);
    double *totals = input_totals(&t, num_cells(&in));
    double sum = 0;
    for (int64_t k = 0; k < num_cells(&in); k++) {
        assert_close(totals[k], 1.0, 1e-12);
        sum += totals[k];
    }
    assert_close(sum / (double)num_cells(&in), 1.0, 1e-14);
    free(totals);
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

/* Half the output grid covers part of the input: no cell gives away more
 * than itself, and those well inside give away all of themselves. */
static void a_partly_covered_grid_gives_away_at_most_itself(void **state)
{
    (void)state;
    grid in = curvilinear(30, 1, 0.25, 0.05, 0, 0);
    grid out = lattice(0, 2, 15, -2, 2, 27);
    rotate_shift(&out, 0.05, 0, 0);
    spart_triples t = clip_general(&in, &out, NULL, 1);
    double *totals = input_totals(&t, num_cells(&in));
    int64_t full = 0, empty = 0;
    for (int64_t k = 0; k < num_cells(&in); k++) {
        assert_true(totals[k] >= 0 && totals[k] <= 1 + 1e-12);
        full += fabs(totals[k] - 1) <= 1e-12;
        empty += totals[k] == 0;
    }
    assert_true(full > 100);
    assert_true(empty > 100);
    free(totals);
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

/* ---- boxes, exact without perturbation (regridding.md section 7, item 4) ---- */

/* Regrid a constant between lattices centred on the origin, with no
 * jitter: boxes share edges and corners, and the values are exact. */
static void check_box_regrid(int64_t nx_in, int64_t ny_in, double half_x_in, double half_y_in,
                             int64_t nx_out, int64_t ny_out, double half_x_out, double half_y_out,
                             double value, double expected)
{
    grid in = lattice(-half_x_in, half_x_in, nx_in, -half_y_in, half_y_in, ny_in);
    grid out = lattice(-half_x_out, half_x_out, nx_out, -half_y_out, half_y_out, ny_out);
    spart_triples t = clip_general(&in, &out, NULL, 1);
    double *values_output = calloc((size_t)num_cells(&out), sizeof(double));
    assert_non_null(values_output);
    for (int64_t k = 0; k < t.count; k++) {
        values_output[t.indices_output[k]] += t.values[k] * value;
    }
    for (int64_t k = 0; k < num_cells(&out); k++) {
        assert_close(values_output[k], expected, 1e-14 * fabs(expected));
    }
    free(values_output);
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

static void box_inside_a_larger_box_keeps_its_value(void **state)
{
    (void)state;
    check_box_regrid(2, 2, 1, 1, 2, 2, 2, 2, 1.0, 1.0);
}

static void larger_box_onto_a_smaller_box_gives_a_quarter(void **state)
{
    (void)state;
    check_box_regrid(2, 2, 2, 2, 2, 2, 1, 1, 1.0, 0.25);
}

static void boxes_of_crossed_aspect_give_a_half(void **state)
{
    (void)state;
    check_box_regrid(2, 2, 1, 2, 2, 2, 2, 1, 1.0, 0.5);
    check_box_regrid(2, 2, 2, 1, 2, 2, 1, 2, 1.0, 0.5);
}

static void four_cells_onto_one_box_sum_to_four(void **state)
{
    (void)state;
    check_box_regrid(3, 3, 1, 1, 2, 2, 1, 1, 1.0, 4.0);
}

static void one_box_onto_four_cells_gives_quarters(void **state)
{
    (void)state;
    check_box_regrid(2, 2, 1, 1, 3, 3, 1, 1, 1.0, 0.25);
}

static void halving_the_cells_quarters_the_values(void **state)
{
    (void)state;
    check_box_regrid(6, 6, 1, 1, 11, 11, 1, 1, 10.0, 2.5);
}

static void doubling_the_cells_quadruples_the_values(void **state)
{
    (void)state;
    check_box_regrid(11, 11, 1, 1, 6, 6, 1, 1, 10.0, 40.0);
}

/* ---- non-convex output cells ----------------------------------------------------- */

/* The dart (0, 0), (4, 0), (1, 1), (0, 4), reflex at (1, 1), as the single
 * cell of a 2 x 2 vertex output grid, its corners starting at dart vertex
 * `first` and running counterclockwise or clockwise. */
static grid dart(int first, int clockwise)
{
    const double dart_x[4] = {0, 4, 1, 0};
    const double dart_y[4] = {0, 0, 1, 4};
    /* grid corners in winding order: (0, 0), (1, 0), (1, 1), (0, 1) */
    const int64_t vertex_of_corner[4] = {0, 2, 3, 1};
    grid g = grid_new(2, 2);
    for (int k = 0; k < 4; k++) {
        int d = clockwise ? (first + 4 - k) % 4 : (first + k) % 4;
        g.x[vertex_of_corner[k]] = dart_x[d];
        g.y[vertex_of_corner[k]] = dart_y[d];
    }
    return g;
}

/* The unit cells of [0, 4]^2 in the dart: all of [0, 1]^2, then under the
 * edge from (4, 0) to (1, 1): the integral of (4 - x) / 3 over each unit of
 * x in [1, 4], i.e. 5/6, 1/2, 1/6, and the same by symmetry in y; nothing
 * of the cells beyond the reflex corner, which its convex hull would
 * cover. Whichever corner starts the cell and whichever way it runs. */
static void a_non_convex_output_cell_gets_exactly_its_overlaps(void **state)
{
    (void)state;
    grid in = lattice(0, 4, 5, 0, 4, 5);
    double expected[16] = {0};
    expected[0] = 1;
    expected[1 * 4 + 0] = expected[0 * 4 + 1] = 5.0 / 6;
    expected[2 * 4 + 0] = expected[0 * 4 + 2] = 0.5;
    expected[3 * 4 + 0] = expected[0 * 4 + 3] = 1.0 / 6;
    for (int first = 0; first < 4; first++) {
        for (int clockwise = 0; clockwise <= 1; clockwise++) {
            grid out = dart(first, clockwise);
            spart_triples t = clip_general(&in, &out, NULL, first % 2 + 1);
            double got[16] = {0};
            for (int64_t k = 0; k < t.count; k++) {
                assert_int_equal(t.indices_output[k], 0);
                got[t.indices_input[k]] = t.values[k];
            }
            for (int k = 0; k < 16; k++) {
                assert_close(got[k], expected[k], 1e-15);
            }
            spart_triples_release(&t);
            grid_free(&out);
        }
    }
    grid_free(&in);
}

/* A 3 x 3 vertex lattice on [0, 2]^2 with its middle vertex pulled to
 * (1.8, 1.8): cell (1, 1) has a reflex corner there. A fine lattice onto
 * it gives every output cell exactly its area, and every input cell
 * gives away all of itself. */
static void a_grid_with_a_reflex_corner_receives_exact_areas(void **state)
{
    (void)state;
    grid out = lattice(0, 2, 3, 0, 2, 3);
    out.x[1 * 3 + 1] = 1.8;
    out.y[1 * 3 + 1] = 1.8;
    /* cells (0, 0), (0, 1), (1, 0), (1, 1) */
    const double expected_area[4] = {1.8, 1.0, 1.0, 0.2};
    for (int reversed = 0; reversed <= 1; reversed++) {
        grid in = lattice(0, 2, 41, 0, 2, 37);
        if (reversed) {
            grid r = reversed_along_axis_0(&in);
            grid_free(&in);
            in = r;
        }
        spart_triples t = clip_general(&in, &out, NULL, 1);
        double *areas = output_areas(&t, &in, 4);
        for (int64_t c = 0; c < 4; c++) {
            assert_close(fabs(cell_area(&out, c)), expected_area[c], 1e-15);
            assert_close(areas[c], expected_area[c], 1e-13);
        }
        double *totals = input_totals(&t, num_cells(&in));
        for (int64_t k = 0; k < num_cells(&in); k++) {
            assert_close(totals[k], 1.0, 1e-13);
        }
        free(totals);
        free(areas);
        spart_triples_release(&t);
        grid_free(&in);
    }
    grid_free(&out);
}

/* A cell with two equal corners is a triangle: (0, 0), (2, 0), (2, 2),
 * (2, 2) holds half of unit cells (0, 0) and (1, 1) of [0, 2]^2, all of
 * (1, 0) and nothing of (0, 1). */
static void a_triangular_output_cell_gets_exactly_its_overlaps(void **state)
{
    (void)state;
    grid in = lattice(0, 2, 3, 0, 2, 3);
    grid out = grid_new(2, 2);
    /* vertices (0, 0), (0, 1), (1, 0), (1, 1) of the 2 x 2 grid */
    const double corner_x[4] = {0, 2, 2, 2};
    const double corner_y[4] = {0, 2, 0, 2};
    memcpy(out.x, corner_x, sizeof corner_x);
    memcpy(out.y, corner_y, sizeof corner_y);
    const double expected[4] = {0.5, 0, 1, 0.5};
    for (int reversed = 0; reversed <= 1; reversed++) {
        grid output = reversed ? reversed_along_axis_0(&out) : copy(&out);
        spart_triples t = clip_general(&in, &output, NULL, 1);
        double got[4] = {0};
        for (int64_t k = 0; k < t.count; k++) {
            got[t.indices_input[k]] = t.values[k];
        }
        for (int k = 0; k < 4; k++) {
            assert_close(got[k], expected[k], 1e-15);
        }
        spart_triples_release(&t);
        grid_free(&output);
    }
    grid_free(&in);
    grid_free(&out);
}

/* 2000 thin slanted strips, cell j between y = x + j / 2000 and
 * y = x + (j + 1) / 2000 for x in [0, 1]: each box spans the whole grid,
 * so the buckets are widened; each strip still receives exactly its area
 * from a lattice that covers it. */
static void long_slanted_slivers_receive_their_areas(void **state)
{
    (void)state;
    const int64_t num = 2001;
    grid out = grid_new(2, num);
    for (int64_t j = 0; j < num; j++) {
        double shift = linspace_at(0, 1, num, j);
        out.x[j] = 0;
        out.y[j] = shift;
        out.x[num + j] = 1;
        out.y[num + j] = 1 + shift;
    }
    grid in = lattice(0, 1, 21, 0, 2, 41);
    spart_triples t = clip_general(&in, &out, NULL, 2);
    double *areas = output_areas(&t, &in, num - 1);
    for (int64_t c = 0; c < num - 1; c++) {
        double expected = fabs(cell_area(&out, c));
        assert_close(areas[c], expected, 1e-12 * expected);
    }
    free(areas);
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

/* ---- weights_input, threads, degenerate shapes -------------------------------------- */

/* weights_input multiplies each cell's fractions last, so exactly. */
static void weights_input_scales_each_entry(void **state)
{
    (void)state;
    grid in = curvilinear(13, 1, 0.3, 0.05, 0, 0);
    grid out = curvilinear(11, 1.1, -0.2, 0.02, 0.01, 0);
    double weights_input[144];
    for (int64_t k = 0; k < 144; k++) {
        weights_input[k] = 0.25 + (double)(k % 5);
    }
    spart_triples plain = clip_general(&in, &out, NULL, 1);
    spart_triples weighted = clip_general(&in, &out, weights_input, 1);
    assert_int_equal(plain.count, weighted.count);
    for (int64_t k = 0; k < plain.count; k++) {
        assert_int_equal(plain.indices_input[k], weighted.indices_input[k]);
        assert_int_equal(plain.indices_output[k], weighted.indices_output[k]);
        assert_true(weighted.values[k] == plain.values[k] * weights_input[plain.indices_input[k]]);
    }
    spart_triples_release(&plain);
    spart_triples_release(&weighted);
    grid_free(&in);
    grid_free(&out);
}

/* Serial, one thread, two threads and more: the same list, bit for bit. */
static void thread_counts_give_identical_weights(void **state)
{
    (void)state;
    grid in = curvilinear(40, 1.3, 0.9, 0.1, 0, 0);
    grid out = curvilinear(25, 1.2, -0.3, -0.05, 0.02, 0.01);
    double weights_input[39 * 39];
    for (int64_t k = 0; k < 39 * 39; k++) {
        weights_input[k] = 0.5 + (double)(k % 7) / 4;
    }
    spart_triples serial = clip_general(&in, &out, weights_input, 0);
    assert_true(serial.count > 1000);
    const int parallel[3] = {1, 2, 5};
    for (int k = 0; k < 3; k++) {
        spart_triples t = clip_general(&in, &out, weights_input, parallel[k]);
        assert_triples_bits_equal(&serial, &t);
        spart_triples_release(&t);
    }
    spart_triples_release(&serial);
    grid_free(&in);
    grid_free(&out);
}

static void grids_far_apart_give_nothing(void **state)
{
    (void)state;
    grid in = curvilinear(8, 1, 0.3, 0, 0, 0);
    grid out = curvilinear(9, 1, -0.3, 0, 10, 3);
    spart_triples t = clip_general(&in, &out, NULL, 2);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

/* Two halves of one curvilinear grid share a line of vertices: they touch
 * but do not overlap, which the clipping finds exactly. */
static void grids_sharing_a_boundary_give_nothing(void **state)
{
    (void)state;
    grid whole = curvilinear(21, 1, 0.3, 0.1, 0, 0);
    grid lower = grid_new(11, 21);
    grid upper = grid_new(11, 21);
    memcpy(lower.x, whole.x, 11 * 21 * sizeof(double));
    memcpy(lower.y, whole.y, 11 * 21 * sizeof(double));
    memcpy(upper.x, whole.x + 10 * 21, 11 * 21 * sizeof(double));
    memcpy(upper.y, whole.y + 10 * 21, 11 * 21 * sizeof(double));
    spart_triples t = clip_general(&lower, &upper, NULL, 1);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    t = clip_general(&upper, &lower, NULL, 1);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    grid_free(&whole);
    grid_free(&lower);
    grid_free(&upper);
}

/* Cells of zero area, on either side, take part in nothing. */
static void cells_of_zero_area_are_skipped(void **state)
{
    (void)state;
    grid in = lattice(0, 2, 3, 0, 1, 2);
    in.x[2] = 0; /* vertex (1, 0) onto (0, 0): cell 0 is a triangle */
    in.x[3] = 0; /* vertex (1, 1) onto (0, 1): cell 0 is a segment */
    grid out = lattice(-1, 3, 3, -1, 2, 2);
    spart_triples t = clip_general(&in, &out, NULL, 1);
    for (int64_t k = 0; k < t.count; k++) {
        assert_int_equal(t.indices_input[k], 1);
    }
    assert_true(t.count > 0);
    spart_triples_release(&t);
    t = clip_general(&out, &in, NULL, 1);
    for (int64_t k = 0; k < t.count; k++) {
        assert_int_equal(t.indices_output[k], 1);
    }
    assert_true(t.count > 0);
    spart_triples_release(&t);
    grid_free(&in);
    grid_free(&out);
}

static void grids_without_cells_give_nothing(void **state)
{
    (void)state;
    grid line = lattice(0, 1, 1, 0, 1, 5);
    grid box = lattice(0, 1, 2, 0, 1, 2);
    spart_triples t = clip_general(&line, &box, NULL, 1);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    t = clip_general(&box, &line, NULL, 1);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    grid_free(&line);
    grid_free(&box);
}

/* Every allocation failing in turn, serial and in blocks:
 * SPART_ERROR_OUT_OF_MEMORY, nothing leaked, and the list keeps exactly
 * the entries it came with. */
static void out_of_memory_frees_everything_and_keeps_the_list(void **state)
{
    (void)state;
    grid in = curvilinear(9, 1, 0.2, 0.05, 0, 0);
    grid out = curvilinear(7, 1.2, -0.1, 0, 0, 0);
    for (int parallel = 1; parallel <= 2; parallel++) {
        int succeeded = 0;
        for (int64_t fail_at = 1; !succeeded; fail_at++) {
            failing_allocator counts = {0, -1, 0};
            spart_allocator allocator = {failing_malloc, failing_realloc, failing_free, &counts};
            spart_triples t;
            spart_triples_init(&t, &allocator);
            assert_int_equal(spart_triples_append(&t, 7, 8, 0.5), 0);
            int64_t live_before = counts.live;
            counts.fail_at = counts.allocations + fail_at - 1;
            spart_status status = spart_host_weights_conservative_2d_clip_general(
                in.x, in.y, in.num_x, in.num_y, out.x, out.y, out.num_x, out.num_y, NULL, parallel,
                &t);
            if (status == SPART_OK) {
                succeeded = 1;
                assert_true(t.count > 1);
            } else {
                assert_int_equal(status, SPART_ERROR_OUT_OF_MEMORY);
                assert_int_equal(t.count, 1);
                assert_int_equal(t.indices_input[0], 7);
                assert_int_equal(t.indices_output[0], 8);
                assert_true(t.values[0] == 0.5);
                assert_int_equal(counts.live, live_before);
            }
            spart_triples_release(&t);
            assert_int_equal(counts.live, 0);
        }
    }
    grid_free(&in);
    grid_free(&out);
}

/* The kernel appends: entries already in the list stay first. */
static void entries_are_appended_after_existing_ones(void **state)
{
    (void)state;
    grid in = curvilinear(6, 1, 0.3, 0, 0, 0);
    grid out = curvilinear(5, 1, -0.1, 0, 0.05, 0);
    spart_triples fresh = clip_general(&in, &out, NULL, 1);
    spart_triples appended;
    spart_triples_init(&appended, &plain_allocator);
    assert_int_equal(spart_triples_append(&appended, 3, 4, 2.5), 0);
    assert_int_equal(spart_host_weights_conservative_2d_clip_general(in.x, in.y, in.num_x, in.num_y,
                                                                     out.x, out.y, out.num_x,
                                                                     out.num_y, NULL, 2, &appended),
                     SPART_OK);
    assert_int_equal(appended.count, fresh.count + 1);
    assert_int_equal(appended.indices_input[0], 3);
    assert_int_equal(appended.indices_output[0], 4);
    size_t n = (size_t)fresh.count;
    assert_memory_equal(appended.indices_input + 1, fresh.indices_input, n * sizeof(int64_t));
    assert_memory_equal(appended.indices_output + 1, fresh.indices_output, n * sizeof(int64_t));
    assert_memory_equal(appended.values + 1, fresh.values, n * sizeof(double));
    spart_triples_release(&fresh);
    spart_triples_release(&appended);
    grid_free(&in);
    grid_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identical_rotated_curvilinear_grids_give_the_identity),
        cmocka_unit_test(identical_clockwise_grids_give_the_identity),
        cmocka_unit_test(a_grid_against_itself_reversed_gives_a_permutation),
        cmocka_unit_test(mirrored_boxes_give_the_exact_overlaps),
        cmocka_unit_test(a_grid_against_its_mirror_image_gives_the_true_overlaps),
        cmocka_unit_test(a_mirrored_lattice_matches_the_lattice_kernel),
        cmocka_unit_test(lattice_outputs_match_the_lattice_kernel),
        cmocka_unit_test(rotated_and_warped_grids_match_the_sweep),
        cmocka_unit_test(rotated_grids_match_regridding),
        cmocka_unit_test(a_warp_onto_a_covering_curvilinear_grid_conserves),
        cmocka_unit_test(a_partly_covered_grid_gives_away_at_most_itself),
        cmocka_unit_test(box_inside_a_larger_box_keeps_its_value),
        cmocka_unit_test(larger_box_onto_a_smaller_box_gives_a_quarter),
        cmocka_unit_test(boxes_of_crossed_aspect_give_a_half),
        cmocka_unit_test(four_cells_onto_one_box_sum_to_four),
        cmocka_unit_test(one_box_onto_four_cells_gives_quarters),
        cmocka_unit_test(halving_the_cells_quarters_the_values),
        cmocka_unit_test(doubling_the_cells_quadruples_the_values),
        cmocka_unit_test(a_non_convex_output_cell_gets_exactly_its_overlaps),
        cmocka_unit_test(a_grid_with_a_reflex_corner_receives_exact_areas),
        cmocka_unit_test(a_triangular_output_cell_gets_exactly_its_overlaps),
        cmocka_unit_test(long_slanted_slivers_receive_their_areas),
        cmocka_unit_test(weights_input_scales_each_entry),
        cmocka_unit_test(thread_counts_give_identical_weights),
        cmocka_unit_test(grids_far_apart_give_nothing),
        cmocka_unit_test(grids_sharing_a_boundary_give_nothing),
        cmocka_unit_test(cells_of_zero_area_are_skipped),
        cmocka_unit_test(grids_without_cells_give_nothing),
        cmocka_unit_test(out_of_memory_frees_everything_and_keeps_the_list),
        cmocka_unit_test(entries_are_appended_after_existing_ones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
