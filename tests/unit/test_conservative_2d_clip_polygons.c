/* The lattice clipping kernel (src/weights/weights_conservative_2d_clip.c)
 * against polygon clipping, cell by cell: single cells, cells on lattice
 * lines, cells partly outside, random cells. The lattice test and the
 * kernel on whole grids are in test_conservative_2d_clip.c. */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
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

/* ---- against polygon clipping, cell by cell --------------------------------- */

/* The lattice of these tests: unit cells on [0, 6] x [0, 6], so that
 * lattice-cell units are the grid's own and every input below is exact. */
#define UNIT_CELLS 6

/* A polygon of the reference clipping below (a quadrilateral clipped by
 * four half-planes has at most 4 + 2 + 3 + 4 + 6 vertices). */
typedef struct test_polygon {
    int num;
    double x[24], y[24];
} test_polygon;

/* Sutherland-Hodgman against sign * (coordinate `axis` - bound) >= 0. */
static test_polygon clip_against(const test_polygon *in, int axis, double sign, double bound)
{
    test_polygon out = {0, {0}, {0}};
    for (int k = 0; k < in->num; k++) {
        int next = (k + 1) % in->num;
        double a = sign * ((axis == 0 ? in->x[k] : in->y[k]) - bound);
        double b = sign * ((axis == 0 ? in->x[next] : in->y[next]) - bound);
        if (a >= 0) {
            out.x[out.num] = in->x[k];
            out.y[out.num] = in->y[k];
            out.num++;
        }
        if ((a >= 0) != (b >= 0)) {
            double t = a / (a - b);
            out.x[out.num] = in->x[k] + t * (in->x[next] - in->x[k]);
            out.y[out.num] = in->y[k] + t * (in->y[next] - in->y[k]);
            out.num++;
        }
    }
    return out;
}

/* The shoelace sum taken from the first vertex, so that the products are
 * of the polygon's own size, not of its distance from the origin. */
static double polygon_area(const test_polygon *p)
{
    double sum = 0;
    for (int k = 1; k + 1 < p->num; k++) {
        sum += (p->x[k] - p->x[0]) * (p->y[k + 1] - p->y[0]) -
               (p->x[k + 1] - p->x[0]) * (p->y[k] - p->y[0]);
    }
    return sum / 2;
}

/* The signed area of the quadrilateral (qx[k], qy[k]) inside lattice cell
 * [c, c+1] x [r, r+1], clipped the way regridding clips (the cell moved to
 * the origin first, as regridding does). */
static double clipped_area(const double *qx, const double *qy, double c, double r)
{
    test_polygon p = {4, {0}, {0}};
    for (int k = 0; k < 4; k++) {
        p.x[k] = qx[k] - c;
        p.y[k] = qy[k] - r;
    }
    p = clip_against(&p, 0, 1.0, 0.0);
    p = clip_against(&p, 0, -1.0, 1.0);
    p = clip_against(&p, 1, 1.0, 0.0);
    p = clip_against(&p, 1, -1.0, 1.0);
    return polygon_area(&p);
}

/* The weights of one input cell with corners (qx[k], qy[k]) in winding
 * order (i, j), (i+1, j), (i+1, j+1), (i, j+1), on the unit lattice, as a
 * dense row of UNIT_CELLS^2 fractions. */
static void weights_of_one_cell(const double *qx, const double *qy, double *row)
{
    grid g = grid_new(2, 2);
    const int at[4] = {0, 2, 3, 1}; /* corner k at vertex (i, j) = at[k] */
    for (int k = 0; k < 4; k++) {
        g.x[at[k]] = qx[k];
        g.y[at[k]] = qy[k];
    }
    grid out = lattice(0, UNIT_CELLS, UNIT_CELLS + 1, 0, UNIT_CELLS, UNIT_CELLS + 1);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 0);
    assert_sorted_unique_in_range(&t, 1, UNIT_CELLS * UNIT_CELLS);
    memset(row, 0, UNIT_CELLS * UNIT_CELLS * sizeof *row);
    for (int64_t k = 0; k < t.count; k++) {
        assert_true(t.values[k] != 0); /* zeros are left out */
        row[t.indices_output[k]] = t.values[k];
    }
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&out);
}

/* The kernel's fractions are the clipped areas over the cell's area to
 * `tolerance`, with an entry wherever the clipped area is more than
 * `tolerance` of the cell and none where it is 0; in all, the covered
 * fraction of the cell to 1e-14. */
static void assert_matches_clipping(const double *qx, const double *qy, double tolerance)
{
    double row[UNIT_CELLS * UNIT_CELLS];
    weights_of_one_cell(qx, qy, row);
    test_polygon whole = {4, {qx[0], qx[1], qx[2], qx[3]}, {qy[0], qy[1], qy[2], qy[3]}};
    double area = polygon_area(&whole);
    double total = 0, total_expected = 0;
    for (int c = 0; c < UNIT_CELLS; c++) {
        for (int r = 0; r < UNIT_CELLS; r++) {
            double overlap = clipped_area(qx, qy, c, r);
            double expected = area != 0 ? overlap / area : 0;
            double got = row[c * UNIT_CELLS + r];
            assert_true(fabs(got - expected) <= tolerance);
            if (overlap == 0) {
                assert_true(got == 0);
            }
            if (fabs(expected) > tolerance) {
                assert_true(got != 0);
            }
            total += got;
            total_expected += expected;
        }
    }
    assert_true(fabs(total - total_expected) <= 1e-14);
}

/* The same cell traversed the other way round (a mirrored grid): the same
 * fractions, both areas having changed sign. */
static void assert_matches_clipping_both_ways(const double *qx, const double *qy, double tolerance)
{
    assert_matches_clipping(qx, qy, tolerance);
    const double rx[4] = {qx[0], qx[3], qx[2], qx[1]};
    const double ry[4] = {qy[0], qy[3], qy[2], qy[1]};
    assert_matches_clipping(rx, ry, tolerance);
}

/* Cells of every kind the kernel tells apart: inside one lattice cell,
 * inside a block of 2 x 2 (or 1 x 2, 2 x 1) lattice cells, and larger;
 * each also mirrored. */
static void single_cells_match_polygon_clipping(void **state)
{
    (void)state;
    static const double cells[][2][4] = {
        {{2.2, 2.8, 2.7, 2.1}, {3.1, 3.2, 3.9, 3.7}}, /* inside lattice cell (2, 3) */
        {{1.6, 2.5, 2.3, 1.4}, {1.2, 1.5, 2.6, 2.3}}, /* across x = 2 and y = 2 */
        {{1.2, 1.8, 1.9, 1.1}, {0.6, 0.7, 1.4, 1.3}}, /* across y = 1 only */
        {{3.6, 4.4, 4.3, 3.7}, {5.1, 5.2, 5.8, 5.9}}, /* across x = 4 only */
        {{2.5, 3.9, 3.2, 2.1}, {2.5, 2.2, 3.9, 3.6}}, /* a 2 x 2 block, rotated */
        {{1.1, 4.7, 4.2, 0.6}, {0.4, 1.9, 5.3, 3.8}}, /* over many lattice cells */
        {{0.3, 5.8, 5.1, 0.9}, {2.9, 2.6, 3.4, 3.3}}, /* long and thin, 6 x 2 */
        {{1.5, 2.5, 1.6, 2.4}, {1.5, 1.6, 2.5, 2.6}}, /* self-crossing (a bowtie) */
        {{1.2, 2.9, 1.8, 1.4}, {1.1, 1.3, 1.6, 2.8}}, /* not convex (a dart) */
        {{2.3, 2.3, 2.9, 2.9}, {1.2, 1.2, 1.9, 1.4}}, /* two corners at one point */
    };
    for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) {
        assert_matches_clipping_both_ways(cells[k][0], cells[k][1], 1e-14);
    }
}

/* Corners and edges on the lattice lines: the fractions are exact
 * (every corner, crossing and area is a dyadic number). */
static void cells_on_lattice_lines_give_exact_fractions(void **state)
{
    (void)state;
    double row[UNIT_CELLS * UNIT_CELLS];
    /* a diamond through four lattice vertices: half of each of 4 cells */
    const double diamond_x[4] = {2, 3, 2, 1}, diamond_y[4] = {1, 2, 3, 2};
    weights_of_one_cell(diamond_x, diamond_y, row);
    for (int k = 0; k < UNIT_CELLS * UNIT_CELLS; k++) {
        int c = k / UNIT_CELLS, r = k % UNIT_CELLS;
        int inside = (c == 1 || c == 2) && (r == 1 || r == 2);
        assert_true(row[k] == (inside ? 0.25 : 0.0));
    }
    /* exactly 4 x 2 lattice cells: an eighth of it in each */
    const double block_x[4] = {0, 4, 4, 0}, block_y[4] = {1, 1, 3, 3};
    weights_of_one_cell(block_x, block_y, row);
    for (int k = 0; k < UNIT_CELLS * UNIT_CELLS; k++) {
        int c = k / UNIT_CELLS, r = k % UNIT_CELLS;
        assert_true(row[k] == (c < 4 && (r == 1 || r == 2) ? 0.125 : 0.0));
    }
    /* half a lattice cell off in x: quarters, a half, quarters */
    const double offset_x[4] = {0.5, 2.5, 2.5, 0.5}, offset_y[4] = {4, 4, 5, 5};
    weights_of_one_cell(offset_x, offset_y, row);
    for (int k = 0; k < UNIT_CELLS * UNIT_CELLS; k++) {
        int c = k / UNIT_CELLS, r = k % UNIT_CELLS;
        double expected = r != 4 ? 0.0 : c == 1 ? 0.5 : (c == 0 || c == 2) ? 0.25 : 0.0;
        assert_true(row[k] == expected);
    }
    /* a lattice cell exactly, and a triangle filling half of one */
    const double cell_x[4] = {3, 4, 4, 3}, cell_y[4] = {0, 0, 1, 1};
    weights_of_one_cell(cell_x, cell_y, row);
    for (int k = 0; k < UNIT_CELLS * UNIT_CELLS; k++) {
        assert_true(row[k] == (k == 3 * UNIT_CELLS ? 1.0 : 0.0));
    }
    const double triangle_x[4] = {5, 6, 5, 5}, triangle_y[4] = {5, 5, 6, 6};
    weights_of_one_cell(triangle_x, triangle_y, row);
    for (int k = 0; k < UNIT_CELLS * UNIT_CELLS; k++) {
        assert_true(row[k] == (k == 5 * UNIT_CELLS + 5 ? 1.0 : 0.0));
    }
}

/* Cells partly outside the lattice give the fraction the lattice covers,
 * on every side and across corners, and nothing for the rest. */
static void cells_partly_outside_give_the_covered_fraction(void **state)
{
    (void)state;
    static const double cells[][2][4] = {
        {{-0.6, 0.7, 0.5, -0.4}, {2.2, 2.4, 3.3, 3.1}},   /* left */
        {{5.4, 6.8, 6.6, 5.2}, {1.3, 1.1, 2.2, 2.4}},     /* right */
        {{2.1, 3.2, 3.3, 2.2}, {-0.7, -0.5, 0.6, 0.4}},   /* below */
        {{3.3, 4.1, 4.2, 3.4}, {5.5, 5.4, 6.9, 7.0}},     /* above */
        {{-0.5, 0.6, 0.4, -0.7}, {-0.6, -0.4, 0.7, 0.5}}, /* across a corner */
        {{-2.0, 8.0, 7.5, -1.5}, {-1.5, -2.0, 8.0, 7.5}}, /* over the whole lattice */
        {{-3.0, -1.0, -1.2, -2.9}, {1.0, 1.2, 2.2, 2.0}}, /* outside: nothing */
    };
    for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) {
        assert_matches_clipping_both_ways(cells[k][0], cells[k][1], 1e-14);
    }
}

/* Random quadrilaterals from a twentieth of a lattice cell to four
 * lattice cells across, anywhere on and around the lattice, convex or not,
 * either way round (300,000 of them passed once; 3,000 keep the test
 * fast). */
static void random_cells_match_polygon_clipping(void **state)
{
    (void)state;
    uint64_t seed = 29;
    for (int trial = 0; trial < 3000; trial++) {
        double u[10];
        for (int k = 0; k < 10; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            u[k] = (double)(seed >> 11) * 0x1.0p-53;
        }
        double size = 0.05 + 4 * u[0] * u[0], angle = 6.3 * u[1];
        double center_x = -1 + 8 * u[2], center_y = -1 + 8 * u[3];
        double qx[4], qy[4];
        for (int k = 0; k < 4; k++) {
            /* corners of a square, each moved by up to half its size */
            double a = angle + 1.5707963267948966 * k;
            double jitter_x = 0.5 * size * (u[4 + k] - 0.5);
            double jitter_y = 0.5 * size * (u[4 + (k + 1) % 6] - 0.5);
            qx[k] = center_x + size * 0.7 * cos(a) + jitter_x;
            qy[k] = center_y + size * 0.7 * sin(a) + jitter_y;
        }
        assert_matches_clipping_both_ways(qx, qy, 1e-14);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_cells_match_polygon_clipping),
        cmocka_unit_test(cells_on_lattice_lines_give_exact_fractions),
        cmocka_unit_test(cells_partly_outside_give_the_covered_fraction),
        cmocka_unit_test(random_cells_match_polygon_clipping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
