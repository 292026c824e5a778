/*
 * The multilinear weights kernel (src/weights/weights_multilinear.c) on
 * curvilinear 2-D and 3-D grids (against regridding 3.6.0's entries and
 * linear functions reproduced), then determinism over thread counts,
 * degenerate shapes and memory. Reference numbers as in test_multilinear.c.
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

/* ---- curvilinear 2-D and 3-D -------------------------------------------- */

/* A grid of nx by ny vertices rotated by `angle` and bent by `warp`. */
static void curved_grid(int nx, int ny, double angle, double warp, double *x, double *y)
{
    double c = cos(angle), s = sin(angle);
    for (int i = 0; i < nx; i++) {
        for (int j = 0; j < ny; j++) {
            double u = (double)i / (nx - 1);
            double v = 2.0 * j / (ny - 1);
            x[i * ny + j] = c * u - s * v + warp * sin(3.0 * v);
            y[i * ny + j] = s * u + c * v + warp * u * u;
        }
    }
}

static void check_bilinear_reproduction(double angle, double warp)
{
    enum { NX = 13, NY = 17, NV = NX * NY, NP = 2000 };
    double x[NV], y[NV], f[NV];
    curved_grid(NX, NY, angle, warp, x, y);
    for (int v = 0; v < NV; v++) {
        f[v] = -1.0 + 0.5 * x[v] + 2.5 * y[v];
    }
    double px[NP], py[NP], out[NP];
    uint64_t seed = 3;
    for (int p = 0; p < NP; p++) {
        px[p] = uniform(&seed, -0.8, 1.3);
        py[p] = uniform(&seed, -0.1, 2.2);
    }
    const int64_t shape[] = {NX, NY};
    const double *grid[] = {x, y};
    const double *points[] = {px, py};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 2, shape, grid, NP, points, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    interpolate(&r.triples, f, NP, out);
    int64_t reproduced = 0;
    for (int p = 0; p < NP; p++) {
        /* a point the continuation of the edge cells does not reach is
         * NaN, as in regridding; every other is reproduced */
        if (!isnan(out[p])) {
            assert_close(out[p], -1.0 + 0.5 * px[p] + 2.5 * py[p], 1e-11);
            reproduced++;
        }
    }
    assert_true(r.num_outside > 0);
    assert_true(reproduced >= NP - r.num_outside);
    run_release(&r);
}

static void bilinear_reproduces_linear_functions_on_a_rotated_grid(void **state)
{
    (void)state;
    check_bilinear_reproduction(0.3, 0.0);
}

static void bilinear_reproduces_linear_functions_on_a_warped_grid(void **state)
{
    (void)state;
    check_bilinear_reproduction(-0.4, 0.08);
}

static void trilinear_reproduces_linear_functions_on_a_warped_grid(void **state)
{
    (void)state;
    enum { N0 = 6, N1 = 7, N2 = 5, NV = N0 * N1 * N2, NP = 1000 };
    double x[NV], y[NV], z[NV], f[NV];
    for (int i = 0; i < N0; i++) {
        for (int j = 0; j < N1; j++) {
            for (int k = 0; k < N2; k++) {
                int v = (i * N1 + j) * N2 + k;
                double a = i / 5.0, b = j / 3.0, c = k / 4.0;
                x[v] = a + 0.1 * sin(2.0 * b) + 0.05 * c;
                y[v] = b + 0.1 * sin(3.0 * c) - 0.07 * a;
                z[v] = c + 0.1 * cos(2.0 * a) + 0.03 * b;
                f[v] = 0.25 + 2.0 * x[v] - y[v] + 3.0 * z[v];
            }
        }
    }
    double px[NP], py[NP], pz[NP], out[NP];
    uint64_t seed = 4;
    for (int p = 0; p < NP; p++) {
        px[p] = uniform(&seed, -0.2, 1.2);
        py[p] = uniform(&seed, -0.2, 2.2);
        pz[p] = uniform(&seed, -0.1, 1.2);
    }
    const int64_t shape[] = {N0, N1, N2};
    const double *grid[] = {x, y, z};
    const double *points[] = {px, py, pz};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 3, shape, grid, NP, points, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    interpolate(&r.triples, f, NP, out);
    for (int p = 0; p < NP; p++) {
        if (!isnan(out[p])) {
            assert_close(out[p], 0.25 + 2.0 * px[p] - py[p] + 3.0 * pz[p], 1e-11);
        }
    }
    assert_true(r.num_outside > 0);
    run_release(&r);
}

/* i, j = np.meshgrid(np.arange(4.), np.arange(3.), indexing="ij")
 * x = i + 0.25*j + 0.0625*i*j;  y = j - 0.125*i + 0.03125*i*i
 * (every vertex exact in binary) */
static void warped_2d_grid(double *x, double *y)
{
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 3; j++) {
            x[i * 3 + j] = i + 0.25 * j + 0.0625 * i * j;
            y[i * 3 + j] = j - 0.125 * i + 0.03125 * i * i;
        }
    }
}

/* inside, inside, outside, outside, and the vertex (2, 1) */
static const double warped_2d_points_x[] = {1.3, 2.9, -0.5, 3.5, 2.375};
static const double warped_2d_points_y[] = {0.7, 1.8, 0.4, 2.5, 0.875};

static void run_warped_2d(run *r, spart_bounds bounds)
{
    double x[12], y[12];
    warped_2d_grid(x, y);
    const int64_t shape[] = {4, 3};
    const double *grid[] = {x, y};
    const double *p[] = {warped_2d_points_x, warped_2d_points_y};
    run_init(r);
    assert_int_equal(run_kernel(r, 2, shape, grid, 5, p, NULL, bounds, 1), SPART_OK);
}

static void curvilinear_2d_matches_reference(void **state)
{
    (void)state;
    /* weights_multilinear((x, y), (points_x[:, None], points_y[:, None])) */
    const int64_t indices[] = {3, 6, 4, 7, 7, 10, 8, 11, 0, 3, 1, 4, 7, 10, 8, 11, 3, 6, 4, 7};
    const double values[] = {0.19467888883619447,
                             0.010038709143507655,
                             0.75628424651427506,
                             0.038998155506022862,
                             0.067161173899690077,
                             0.012861389942313929,
                             0.77211678315618015,
                             0.14786065300181578,
                             1.0291988824702849,
                             -0.37537491709030152,
                             0.54492341491620555,
                             -0.19874738029618919,
                             -0.33739922446490211,
                             -0.27360710378735636,
                             0.88960172853717479,
                             0.72140459971508375,
                             0,
                             1.1102230246251565e-16,
                             0,
                             0.99999999999999989};
    run r;
    run_warped_2d(&r, SPART_BOUNDS_EXTRAPOLATE);
    assert_entries(&r.triples, 20, indices, values, 4, 1e-12);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
}

static void curvilinear_2d_nan_gives_the_first_cell_and_nan(void **state)
{
    (void)state;
    /* as above with bounds="nan" */
    const int64_t indices[] = {3, 6, 4, 7, 7, 10, 8, 11, 0, 3, 1, 4, 0, 3, 1, 4, 3, 6, 4, 7};
    const double values[] = {0.19467888883619447,
                             0.010038709143507655,
                             0.75628424651427506,
                             0.038998155506022862,
                             0.067161173899690077,
                             0.012861389942313929,
                             0.77211678315618015,
                             0.14786065300181578,
                             NAN,
                             NAN,
                             NAN,
                             NAN,
                             NAN,
                             NAN,
                             NAN,
                             NAN,
                             0,
                             1.1102230246251565e-16,
                             0,
                             0.99999999999999989};
    run r;
    run_warped_2d(&r, SPART_BOUNDS_NAN);
    assert_entries(&r.triples, 20, indices, values, 4, 1e-12);
    assert_int_equal(r.num_outside, 2);
    run_release(&r);
}

static void curvilinear_3d_matches_reference(void **state)
{
    (void)state;
    /* i, j, k = np.meshgrid(np.arange(3.), np.arange(3.), np.arange(3.), indexing="ij")
     * x = i + 0.125*j + 0.0625*j*k; y = j + 0.125*k - 0.0625*i*i;
     * z = k + 0.125*i + 0.03125*i*j
     * weights_multilinear((x, y, z), (px[:, None, None], py[:, None, None],
     *                                 pz[:, None, None])) */
    double x[27], y[27], z[27];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            for (int k = 0; k < 3; k++) {
                int v = (i * 3 + j) * 3 + k;
                x[v] = i + 0.125 * j + 0.0625 * j * k;
                y[v] = j + 0.125 * k - 0.0625 * i * i;
                z[v] = k + 0.125 * i + 0.03125 * i * j;
            }
        }
    }
    const double px[] = {0.6, 1.4, 2.5};
    const double py[] = {0.7, 1.2, -0.3};
    const double pz[] = {0.8, 0.3, 1.0};
    const int64_t indices[] = {0,  9,  3,  12, 1, 10, 4,  13, 12, 21, 15, 24,
                               13, 22, 16, 25, 9, 18, 12, 21, 10, 19, 13, 22};
    const double values[] = {
        0.049756408064027431, 0.047981254470286984, 0.088294593238082059,  0.085144517286201843,
        0.13372688773164759,  0.12895592908384715,  0.23730332668038592,   0.22883708344552103,
        0.49111101622696696,  0.14710529341583159,  0.20418109343592311,   0.061159531485597142,
        0.052419775735548534, 0.015701595434801267, 0.021793701981231307,  0.006527992284100146,
        -0.16369172962850054, 0.48660365196975935,  0.0064748837130686734, -0.019247777929949611,
        -0.36410940078212861, 1.0823818927150981,   0.014402474909697087,  -0.042813994967044508};
    const int64_t shape[] = {3, 3, 3};
    const double *grid[] = {x, y, z};
    const double *p[] = {px, py, pz};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 3, shape, grid, 3, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_entries(&r.triples, 24, indices, values, 8, 1e-12);
    assert_int_equal(r.num_outside, 1);
    run_release(&r);
}

static void curvilinear_extrapolation_not_reached_is_nan(void **state)
{
    (void)state;
    /* a half ring: radius 1 and 2 at 0, 90 and 180 degrees
     * x = [[1, 0, -1], [2, 0, -2]]; y = [[0, 1, 0], [0, 2, 0]]
     * weights_multilinear((x, y), ([[0], [1.5], [-0.5]], [[0], [-0.5], [-2]]))
     * The last point, below the ring, is reached by no edge cell's
     * continuation. */
    const double x[] = {1, 0, -1, 2, 0, -2};
    const double y[] = {0, 1, 0, 0, 2, 0};
    const double px[] = {0.0, 1.5, -0.5};
    const double py[] = {0.0, -0.5, -2.0};
    const int64_t indices[] = {0, 3, 1, 4, 0, 3, 1, 4, 1, 4, 2, 5};
    const double values[] = {1, -0.5, 1, -0.5, 1.5, 0, -0.5, -0.0, NAN, NAN, NAN, NAN};
    const int64_t shape[] = {2, 3};
    const double *grid[] = {x, y};
    const double *p[] = {px, py};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 2, shape, grid, 3, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_entries(&r.triples, 12, indices, values, 4, 1e-12);
    assert_int_equal(r.num_outside, 3);
    run_release(&r);
}

static void curvilinear_non_finite_points_are_nan_and_outside(void **state)
{
    (void)state;
    double x[12], y[12];
    warped_2d_grid(x, y);
    const double px[] = {NAN, 1.0, INFINITY};
    const double py[] = {0.5, -INFINITY, 0.5};
    const int64_t shape[] = {4, 3};
    const double *grid[] = {x, y};
    const double *p[] = {px, py};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 2, shape, grid, 3, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    /* the first cell's corners, as regridding gives */
    const int64_t first_cell[] = {0, 3, 1, 4};
    assert_int_equal(r.triples.count, 12);
    for (int k = 0; k < 12; k++) {
        assert_true(isnan(r.triples.values[k]));
        assert_int_equal(r.triples.indices_input[k], first_cell[k % 4]);
    }
    assert_int_equal(r.num_outside, 3);
    run_release(&r);
}

static void curvilinear_weights_input_multiplies_each_vertex(void **state)
{
    (void)state;
    double scale[12];
    for (int v = 0; v < 12; v++) {
        scale[v] = 0.5 + 0.25 * v;
    }
    double x[12], y[12];
    warped_2d_grid(x, y);
    const int64_t shape[] = {4, 3};
    const double *grid[] = {x, y};
    const double *p[] = {warped_2d_points_x, warped_2d_points_y};
    run plain, weighted;
    run_init(&plain);
    run_init(&weighted);
    assert_int_equal(run_kernel(&plain, 2, shape, grid, 5, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_int_equal(
        run_kernel(&weighted, 2, shape, grid, 5, p, scale, SPART_BOUNDS_EXTRAPOLATE, 1), SPART_OK);
    assert_int_equal(weighted.triples.count, plain.triples.count);
    for (int64_t k = 0; k < plain.triples.count; k++) {
        double expected = plain.triples.values[k] * scale[plain.triples.indices_input[k]];
        assert_int_equal(weighted.triples.indices_input[k], plain.triples.indices_input[k]);
        assert_memory_equal(&weighted.triples.values[k], &expected, sizeof expected);
    }
    run_release(&plain);
    run_release(&weighted);
}

/* ---- determinism, degenerate shapes, memory ----------------------------- */

static void same_output_for_one_and_two_threads(void **state)
{
    (void)state;
    enum { NX = 40, NY = 30, NV = NX * NY, NP = 20000 };
    static double x[NV], y[NV], px[NP], py[NP];
    curved_grid(NX, NY, 0.5, 0.05, x, y);
    uint64_t seed = 5;
    for (int p = 0; p < NP; p++) {
        px[p] = uniform(&seed, -1.5, 1.5);
        py[p] = uniform(&seed, -0.5, 2.5);
    }
    const int64_t shape[] = {NX, NY};
    const double *grid[] = {x, y};
    const double *points[] = {px, py};
    const spart_bounds modes[] = {SPART_BOUNDS_EXTRAPOLATE, SPART_BOUNDS_NAN};
    int threads_before = omp_get_max_threads();
    for (int mode = 0; mode < 2; mode++) {
        run serial, one, two;
        run_init(&serial);
        run_init(&one);
        run_init(&two);
        assert_int_equal(run_kernel(&serial, 2, shape, grid, NP, points, NULL, modes[mode], 0),
                         SPART_OK);
        omp_set_num_threads(1);
        assert_int_equal(run_kernel(&one, 2, shape, grid, NP, points, NULL, modes[mode], 1),
                         SPART_OK);
        omp_set_num_threads(2);
        assert_int_equal(run_kernel(&two, 2, shape, grid, NP, points, NULL, modes[mode], 1),
                         SPART_OK);
        const run *others[] = {&one, &two};
        for (int o = 0; o < 2; o++) {
            const spart_triples *t = &others[o]->triples;
            size_t n = (size_t)serial.triples.count;
            assert_int_equal(t->count, serial.triples.count);
            assert_int_equal(others[o]->num_outside, serial.num_outside);
            assert_memory_equal(t->indices_input, serial.triples.indices_input, n * 8);
            assert_memory_equal(t->indices_output, serial.triples.indices_output, n * 8);
            assert_memory_equal(t->values, serial.triples.values, n * 8);
        }
        assert_true(serial.num_outside > 0 && serial.num_outside < NP);
        run_release(&serial);
        run_release(&one);
        run_release(&two);
    }
    omp_set_num_threads(threads_before);
}

static void zero_points_append_nothing(void **state)
{
    (void)state;
    double x[12], y[12];
    warped_2d_grid(x, y);
    const int64_t shape[] = {4, 3};
    const double *grid[] = {x, y};
    const double *p[] = {NULL, NULL};
    run r;
    run_init(&r);
    r.num_outside = 99;
    assert_int_equal(run_kernel(&r, 2, shape, grid, 0, p, NULL, SPART_BOUNDS_NAN, 1), SPART_OK);
    assert_int_equal(r.triples.count, 0);
    assert_int_equal(r.num_outside, 0);
    run_release(&r);
}

static void appends_after_existing_entries(void **state)
{
    (void)state;
    run r;
    run_init(&r);
    assert_int_equal(spart_triples_append(&r.triples, 7, 8, 9.0), 0);
    const int64_t shape[] = {5};
    const double *grid[] = {line_x};
    const double *p[] = {line_points};
    assert_int_equal(run_kernel(&r, 1, shape, grid, 4, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    assert_int_equal(r.triples.count, 9);
    assert_int_equal(r.triples.indices_input[0], 7);
    for (int k = 0; k < 8; k++) {
        assert_int_equal(r.triples.indices_input[1 + k], line_indices[k]);
        assert_int_equal(r.triples.indices_output[1 + k], k / 2);
        assert_close(r.triples.values[1 + k], line_values[k], 0);
    }
    run_release(&r);
}

static void one_cell_grids_work(void **state)
{
    (void)state;
    /* a single rotated cell: bilinear reproduction inside and outside */
    double x[4], y[4], f[4];
    curved_grid(2, 2, 0.7, 0.0, x, y);
    for (int v = 0; v < 4; v++) {
        f[v] = 3.0 * x[v] - y[v];
    }
    const double px[] = {0.1, 2.0, -1.0};
    const double py[] = {0.8, -1.0, 3.0};
    const int64_t shape[] = {2, 2};
    const double *grid[] = {x, y};
    const double *p[] = {px, py};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 2, shape, grid, 3, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_OK);
    double out[3];
    interpolate(&r.triples, f, 3, out);
    for (int k = 0; k < 3; k++) {
        assert_close(out[k], 3.0 * px[k] - py[k], 1e-12);
    }
    run_release(&r);
}

static void rejects_bad_dimensions(void **state)
{
    (void)state;
    const int64_t shape[] = {5, 1, 3, 3};
    const double *grid[] = {line_x, line_x, line_x, line_x};
    const double *p[] = {line_points, line_points, line_points, line_points};
    run r;
    run_init(&r);
    assert_int_equal(run_kernel(&r, 0, shape, grid, 4, p, NULL, SPART_BOUNDS_NAN, 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel(&r, 4, shape, grid, 4, p, NULL, SPART_BOUNDS_NAN, 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel(&r, 2, shape, grid, 4, p, NULL, SPART_BOUNDS_NAN, 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(r.triples.count, 0);
    run_release(&r);
}

static void reports_out_of_memory(void **state)
{
    (void)state;
    double x[12], y[12];
    warped_2d_grid(x, y);
    const int64_t shape[] = {4, 3};
    const double *grid[] = {x, y};
    const double *p[] = {warped_2d_points_x, warped_2d_points_y};
    run r;
    run_init(&r);
    r.count.fail = 1;
    assert_int_equal(run_kernel(&r, 2, shape, grid, 5, p, NULL, SPART_BOUNDS_EXTRAPOLATE, 1),
                     SPART_ERROR_OUT_OF_MEMORY);
    assert_int_equal(r.triples.count, 0);
    run_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bilinear_reproduces_linear_functions_on_a_rotated_grid),
        cmocka_unit_test(bilinear_reproduces_linear_functions_on_a_warped_grid),
        cmocka_unit_test(trilinear_reproduces_linear_functions_on_a_warped_grid),
        cmocka_unit_test(curvilinear_2d_matches_reference),
        cmocka_unit_test(curvilinear_2d_nan_gives_the_first_cell_and_nan),
        cmocka_unit_test(curvilinear_3d_matches_reference),
        cmocka_unit_test(curvilinear_extrapolation_not_reached_is_nan),
        cmocka_unit_test(curvilinear_non_finite_points_are_nan_and_outside),
        cmocka_unit_test(curvilinear_weights_input_multiplies_each_vertex),
        cmocka_unit_test(same_output_for_one_and_two_threads),
        cmocka_unit_test(zero_points_append_nothing),
        cmocka_unit_test(appends_after_existing_entries),
        cmocka_unit_test(one_cell_grids_work),
        cmocka_unit_test(rejects_bad_dimensions),
        cmocka_unit_test(reports_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
