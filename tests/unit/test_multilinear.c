/*
 * The multilinear weights kernel (src/weights/weights_multilinear.c) against
 * regridding 3.6.0's weights(..., method="multilinear") and against
 * analytic answers: multilinear interpolation reproduces linear functions
 * on any grid, curvilinear ones included. The curvilinear cases, thread
 * counts, degenerate shapes and memory are in test_multilinear_curvilinear.c.
 *
 * Reference numbers come from
 *     from regridding._weights._weights_multilinear import weights_multilinear
 *     W, _, _ = weights_multilinear(grid, points, bounds=...)
 *     indices_input, indices_output, values = W[()]
 * (the uncoalesced entries, which is what the kernel appends), printed
 * with "%.17g"; each case says its grid and points.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "weights/weights_kernels.h"

#include "test_multilinear_util.h"

/* ---- 1-D: regridding.md section 7 item 1 -------------------------------- */

/* line_x, line_points and their entries are in test_multilinear_util.h. */
static const double line_squares[] = {0, 1, 4, 9, 16};

static void run_line(run *r, const double *points, int64_t num_points, spart_bounds bounds)
{
    const int64_t shape[] = {5};
    const double *grid[] = {line_x};
    const double *p[] = {points};
    run_init(r);
    assert_int_equal(run_kernel(r, 1, shape, grid, num_points, p, NULL, bounds, 1), SPART_OK);
}

static void line_extrapolate_matches_reference(void **state)
{
    (void)state;
    run r;
    run_line(&r, line_points, 4, SPART_BOUNDS_EXTRAPOLATE);
    assert_entries(&r.triples, 8, line_indices, line_values, 2, 0);
    double out[4];
    interpolate(&r.triples, line_squares, 4, out);
    const double expected[] = {-0.5, 0.5, 12.5, 19.5};
    assert_memory_equal(out, expected, sizeof expected);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
}

static void line_nan_gives_nan_outside(void **state)
{
    (void)state;
    run r;
    run_line(&r, line_points, 4, SPART_BOUNDS_NAN);
    double out[4];
    interpolate(&r.triples, line_squares, 4, out);
    assert_true(isnan(out[0]));
    assert_close(out[1], 0.5, 0);
    assert_close(out[2], 12.5, 0);
    assert_true(isnan(out[3]));
    assert_int_equal(r.triples.indices_input[0], 0); /* the cells are still given */
    assert_int_equal(r.triples.indices_input[7], 4);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
}

static void line_error_counts_outside_and_appends_as_extrapolate(void **state)
{
    (void)state;
    run r;
    run_line(&r, line_points, 4, SPART_BOUNDS_ERROR);
    assert_entries(&r.triples, 8, line_indices, line_values, 2, 0);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
    run_line(&r, line_points + 1, 2, SPART_BOUNDS_ERROR);
    assert_int_equal(r.num_outside, 0);
    run_release(&r);
}

static void line_exact_vertex_takes_the_cell_below(void **state)
{
    (void)state;
    run r;
    const double points[] = {2.0, 0.0, 4.0};
    run_line(&r, points, 3, SPART_BOUNDS_EXTRAPOLATE);
    /* weights_multilinear((np.arange(5.0),), (np.array([2.0, 0.0, 4.0]),)) */
    const int64_t indices[] = {1, 2, 0, 1, 3, 4};
    const double values[] = {0, 1, 1, 0, 0, 1};
    assert_entries(&r.triples, 6, indices, values, 2, 0);
    assert_int_equal(r.num_outside, 0);
    run_release(&r);
}

static void line_descending_is_the_ascending_line_reversed(void **state)
{
    (void)state;
    const double descending[] = {4, 3, 2, 1, 0};
    const double squares_descending[] = {16, 9, 4, 1, 0};
    const double points[] = {-0.5, 0.5, 3.5, 4.5, 2.25};
    const int64_t shape[] = {5};
    const double *grid[] = {descending};
    const double *p[] = {points};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 1, shape, grid, 5, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    /* weights_multilinear((np.arange(5.0)[::-1],), (points,)), as regridding
     * 3.6.0 gives (older releases were wrong here) */
    const int64_t indices[] = {3, 4, 3, 4, 0, 1, 0, 1, 1, 2};
    const double values[] = {-0.5, 1.5, 0.5, 0.5, 0.5, 0.5, 1.5, -0.5, 0.25, 0.75};
    assert_entries(&r.triples, 10, indices, values, 2, 0);
    double out[5];
    interpolate(&r.triples, squares_descending, 5, out);
    const double expected[] = {-0.5, 0.5, 12.5, 19.5, 5.25};
    assert_memory_equal(out, expected, sizeof expected);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
}

static void line_weights_input_multiplies_each_vertex(void **state)
{
    (void)state;
    const int64_t shape[] = {5};
    const double *grid[] = {line_x};
    const double *p[] = {line_points};
    const double ones[] = {1, 1, 1, 1, 1};
    const double zeros[] = {0, 0, 0, 0, 0};
    const double scale[] = {1, 2, 4, 8, 16};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 1, shape, grid, 4, p, ones, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_entries(&r.triples, 8, line_indices, line_values, 2, 0);
    run_release(&r);
    run_init(&r);
    assert_int_equal(run_kernel(&r, 1, shape, grid, 4, p, zeros, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    for (int k = 0; k < 8; k++) {
        assert_true(r.triples.values[k] == 0);
    }
    run_release(&r);
    run_init(&r);
    assert_int_equal(run_kernel(&r, 1, shape, grid, 4, p, scale, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    for (int k = 0; k < 8; k++) {
        double expected = line_values[k] * scale[line_indices[k]];
        assert_memory_equal(&r.triples.values[k], &expected, sizeof expected);
    }
    run_release(&r);
}

static void line_non_finite_points_are_nan_and_outside(void **state)
{
    (void)state;
    run r;
    const double points[] = {NAN, INFINITY, -INFINITY, 1.5};
    run_line(&r, points, 4, SPART_BOUNDS_EXTRAPOLATE);
    /* weights_multilinear((np.arange(5.0),), (np.array([nan, inf, -inf, 1.5]),)) */
    const int64_t indices[] = {3, 4, 3, 4, 0, 1, 1, 2};
    const double values[] = {NAN, NAN, NAN, NAN, NAN, NAN, 0.5, 0.5};
    assert_entries(&r.triples, 8, indices, values, 2, 0);
    assert_int_equal(r.num_outside, 3);
    run_release(&r);
}

/* ---- rectilinear 2-D and 3-D -------------------------------------------- */

static void rectilinear_swapped_axes_match_reference(void **state)
{
    (void)state;
    /* ya = [3.0, 2.0, 0.5]; xa = [-1.0, 0.0, 1.5, 4.0]
     * Y, X = np.meshgrid(ya, xa, indexing="ij")   # x along axis 1
     * weights_multilinear((X, Y), (pts_x, pts_y)) */
    const double ya[] = {3.0, 2.0, 0.5};
    const double xa[] = {-1.0, 0.0, 1.5, 4.0};
    double x[12], y[12];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++) {
            x[i * 4 + j] = xa[j];
            y[i * 4 + j] = ya[i];
        }
    }
    const double points_x[] = {0.3, 5.0, -2.0};
    const double points_y[] = {2.5, 1.0, 4.0};
    const int64_t indices[] = {1, 5, 2, 6, 6, 10, 7, 11, 0, 4, 1, 5};
    const double values[] = {0.40000000000000002,
                             0.40000000000000002,
                             0.099999999999999992,
                             0.099999999999999992,
                             -0.13333333333333328,
                             -0.26666666666666666,
                             0.46666666666666651,
                             0.93333333333333335,
                             4,
                             -2,
                             -2,
                             1};
    const int64_t shape[] = {3, 4};
    const double *grid[] = {x, y};
    const double *p[] = {points_x, points_y};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 2, shape, grid, 3, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_entries(&r.triples, 12, indices, values, 4, 0);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
}

/* A non-uniform lattice of nx by ny (by nz) vertices. */
static double lattice_coordinate(int axis, int index)
{
    const double scale[] = {1.0, -0.7, 0.4};
    return scale[axis] * (index + 0.3 * index * index / 7.0);
}

static void bilinear_reproduces_linear_functions_on_a_lattice(void **state)
{
    (void)state;
    enum { NX = 7, NY = 5, NP = 500 };
    double x[NX * NY], y[NX * NY], f[NX * NY];
    for (int i = 0; i < NX; i++) {
        for (int j = 0; j < NY; j++) {
            x[i * NY + j] = lattice_coordinate(0, i);
            y[i * NY + j] = lattice_coordinate(1, j);
            f[i * NY + j] = 2.0 + 3.0 * x[i * NY + j] - 1.5 * y[i * NY + j];
        }
    }
    double px[NP], py[NP], out[NP];
    uint64_t seed = 1;
    for (int p = 0; p < NP; p++) {
        px[p] = uniform(&seed, -2.0, 12.0);
        py[p] = uniform(&seed, -7.0, 1.0);
    }
    const int64_t shape[] = {NX, NY};
    const double *grid[] = {x, y};
    const double *points[] = {px, py};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 2, shape, grid, NP, points, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    interpolate(&r.triples, f, NP, out);
    for (int p = 0; p < NP; p++) {
        assert_close(out[p], 2.0 + 3.0 * px[p] - 1.5 * py[p], 1e-12);
    }
    assert_true(r.num_outside > 0);
    run_release(&r);
}

static void trilinear_reproduces_linear_functions_on_a_lattice(void **state)
{
    (void)state;
    enum { NX = 4, NY = 6, NZ = 5, NV = NX * NY * NZ, NP = 500 };
    double x[NV], y[NV], z[NV], f[NV];
    for (int i = 0; i < NX; i++) {
        for (int j = 0; j < NY; j++) {
            for (int k = 0; k < NZ; k++) {
                int v = (i * NY + j) * NZ + k;
                x[v] = lattice_coordinate(0, i);
                y[v] = lattice_coordinate(1, j);
                z[v] = lattice_coordinate(2, k);
                f[v] = 1.0 - x[v] + 2.0 * y[v] + 0.5 * z[v];
            }
        }
    }
    double px[NP], py[NP], pz[NP], out[NP];
    uint64_t seed = 2;
    for (int p = 0; p < NP; p++) {
        px[p] = uniform(&seed, -1.0, 6.0);
        py[p] = uniform(&seed, -8.0, 1.0);
        pz[p] = uniform(&seed, -0.5, 3.0);
    }
    const int64_t shape[] = {NX, NY, NZ};
    const double *grid[] = {x, y, z};
    const double *points[] = {px, py, pz};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 3, shape, grid, NP, points, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_int_equal(r.triples.count, 8 * NP);
    interpolate(&r.triples, f, NP, out);
    for (int p = 0; p < NP; p++) {
        assert_close(out[p], 1.0 - px[p] + 2.0 * py[p] + 0.5 * pz[p], 1e-12);
    }
    run_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(line_extrapolate_matches_reference),
        cmocka_unit_test(line_nan_gives_nan_outside),
        cmocka_unit_test(line_error_counts_outside_and_appends_as_extrapolate),
        cmocka_unit_test(line_exact_vertex_takes_the_cell_below),
        cmocka_unit_test(line_descending_is_the_ascending_line_reversed),
        cmocka_unit_test(line_weights_input_multiplies_each_vertex),
        cmocka_unit_test(line_non_finite_points_are_nan_and_outside),
        cmocka_unit_test(rectilinear_swapped_axes_match_reference),
        cmocka_unit_test(bilinear_reproduces_linear_functions_on_a_lattice),
        cmocka_unit_test(trilinear_reproduces_linear_functions_on_a_lattice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
