/* The 2-D conservative sweep kernel (src/weights/weights_conservative_2d_sweep.c),
 * called directly; fragments are summed per pair by the tests themselves. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "core/internal.h"
#include "weights/weights_kernels.h"
#include "test_util.h"
#include "test_conservative_util.h"

/* ---- helpers ------------------------------------------------------------ */

/* x cos a - y sin a, x sin a + y cos a, then a shift. */
static void grid_rotate_shift(grid *g, double angle, double shift_x, double shift_y)
{
    double c = cos(angle);
    double s = sin(angle);
    for (int64_t k = 0; k < g->num_x * g->num_y; k++) {
        double x = g->x[k];
        double y = g->y[k];
        g->x[k] = x * c - y * s + shift_x;
        g->y[k] = x * s + y * c + shift_y;
    }
}

/* Run the kernel; every index must address a cell. */
static spart_status sweep(const grid *in, const grid *out, const double *weights_input,
                          int parallel, spart_triples *triples)
{
    spart_status status = spart_host_weights_conservative_2d_sweep(
        in->x, in->y, in->num_x, in->num_y, out->x, out->y, out->num_x, out->num_y, weights_input,
        parallel, triples);
    for (int64_t k = 0; k < triples->count; k++) {
        assert_true(triples->indices_input[k] >= 0);
        assert_true(triples->indices_input[k] < num_cells(in));
        assert_true(triples->indices_output[k] >= 0);
        assert_true(triples->indices_output[k] < num_cells(out));
    }
    return status;
}

/* The dense matrix weight[input][output], fragments summed in order. */
static double *dense_weights(const spart_triples *triples, int64_t num_input, int64_t num_output)
{
    double *dense = calloc((size_t)(num_input * num_output), sizeof(double));
    assert_non_null(dense);
    for (int64_t k = 0; k < triples->count; k++) {
        dense[triples->indices_input[k] * num_output + triples->indices_output[k]] +=
            triples->values[k];
    }
    return dense;
}

/* output[o] = sum over fragments of value * input[i] */
static double *regrid(const spart_triples *triples, const double *values_input, int64_t num_output)
{
    double *values_output = calloc((size_t)num_output, sizeof(double));
    assert_non_null(values_output);
    for (int64_t k = 0; k < triples->count; k++) {
        values_output[triples->indices_output[k]] +=
            triples->values[k] * values_input[triples->indices_input[k]];
    }
    return values_output;
}

/* Regrid a constant from one lattice to another, the output shifted by
 * 1e-6 against degeneracy, and check every output value (rtol 1e-3). */
static void check_lattice_regrid(int64_t nx_in, int64_t ny_in, double half_x_in, double half_y_in,
                                 int64_t nx_out, int64_t ny_out, double half_x_out,
                                 double half_y_out, double value, double expected)
{
    grid in = lattice(-half_x_in, half_x_in, nx_in, -half_y_in, half_y_in, ny_in);
    grid out = lattice(-half_x_out, half_x_out, nx_out, -half_y_out, half_y_out, ny_out);
    grid_rotate_shift(&out, 0.0, 1e-6, 1e-6);
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
    double *values_input = malloc((size_t)num_cells(&in) * sizeof(double));
    assert_non_null(values_input);
    for (int64_t k = 0; k < num_cells(&in); k++) {
        values_input[k] = value;
    }
    double *values_output = regrid(&triples, values_input, num_cells(&out));
    for (int64_t k = 0; k < num_cells(&out); k++) {
        assert_close(values_output[k], expected, 1e-3 * fabs(expected));
    }
    free(values_input);
    free(values_output);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* ---- boxes (regridding.md section 7, item 4) ------------------------------ */

static void box_inside_a_larger_box_keeps_its_value(void **state)
{
    (void)state;
    check_lattice_regrid(2, 2, 1, 1, 2, 2, 2, 2, 1.0, 1.0);
}

static void larger_box_onto_a_smaller_box_gives_a_quarter(void **state)
{
    (void)state;
    check_lattice_regrid(2, 2, 2, 2, 2, 2, 1, 1, 1.0, 0.25);
}

static void boxes_of_crossed_aspect_give_a_half(void **state)
{
    (void)state;
    check_lattice_regrid(2, 2, 1, 2, 2, 2, 2, 1, 1.0, 0.5);
    check_lattice_regrid(2, 2, 2, 1, 2, 2, 1, 2, 1.0, 0.5);
}

static void four_cells_onto_one_box_sum_to_four(void **state)
{
    (void)state;
    check_lattice_regrid(3, 3, 1, 1, 2, 2, 2, 2, 1.0, 4.0);
}

static void one_box_onto_four_cells_gives_quarters(void **state)
{
    (void)state;
    check_lattice_regrid(2, 2, 1, 1, 3, 3, 2, 2, 1.0, 0.25);
}

static void halving_the_cells_quarters_the_values(void **state)
{
    (void)state;
    check_lattice_regrid(6, 6, 1, 1, 11, 11, 1, 1, 10.0, 2.5);
}

static void doubling_the_cells_quadruples_the_values(void **state)
{
    (void)state;
    check_lattice_regrid(11, 11, 1, 1, 6, 6, 1, 1, 10.0, 40.0);
}

/* An input lattice rotated by k right angles (orientation kept) lands on
 * the unrotated lattice as numpy.rot90(values, k). */
static void input_rotated_by_right_angles_gives_rot90(void **state)
{
    (void)state;
    const int64_t n = 4; /* vertices per axis: 3 x 3 cells */
    const int64_t c = n - 1;
    double values[9];
    for (int64_t k = 0; k < c * c; k++) {
        values[k] = (double)(k + 1);
    }
    for (int quarter = 1; quarter <= 3; quarter++) {
        grid in = lattice(-1, 1, n, -1, 1, n);
        grid_rotate_shift(&in, quarter * 1.5707963267948966, 0, 0);
        grid out = lattice(-1, 1, n, -1, 1, n);
        grid_rotate_shift(&out, 0, 1e-6, 1e-6);
        spart_triples triples;
        spart_triples_init(&triples, &plain_allocator);
        assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
        double *result = regrid(&triples, values, c * c);
        for (int64_t i = 0; i < c; i++) {
            for (int64_t j = 0; j < c; j++) {
                /* rot90 once: out[i][j] = v[j][c-1-i]; apply `quarter` times */
                int64_t a = i;
                int64_t b = j;
                for (int q = 0; q < quarter; q++) {
                    int64_t next_a = b;
                    int64_t next_b = c - 1 - a;
                    a = next_a;
                    b = next_b;
                }
                double expected = values[a * c + b];
                assert_close(result[i * c + j], expected, 1e-3 * expected);
            }
        }
        free(result);
        spart_triples_release(&triples);
        grid_free(&in);
        grid_free(&out);
    }
}

/* ---- conservation ------------------------------------------------------------ */

/* Input 13 x 12 vertices rotated 0.2 rad, inside a slightly rotated larger
 * output grid: every input cell is covered, so its weights sum to 1. */
static void rotated_grid_inside_the_output_keeps_every_total(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 13, -1.1, 1, 12);
    grid_rotate_shift(&in, 0.2, 0, 0);
    grid out = lattice(-1.6, 1.6, 21, -1.7, 1.5, 19);
    grid_rotate_shift(&out, 0.01, 0, 0);
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
    double *totals = input_totals(&triples, num_cells(&in));
    for (int64_t k = 0; k < num_cells(&in); k++) {
        assert_close(totals[k], 1.0, 1e-12);
    }
    free(totals);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* The same input half covered: totals between 0 and 1, both reached. */
static void rotated_grid_half_covered_loses_the_uncovered_part(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 13, -1.1, 1, 12);
    grid_rotate_shift(&in, 0.2, 0, 0);
    grid out = lattice(0, 1.6, 11, -1.7, 1.5, 19);
    grid_rotate_shift(&out, 0.01, 0, 0);
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
    double *totals = input_totals(&triples, num_cells(&in));
    int64_t full = 0;
    int64_t empty = 0;
    for (int64_t k = 0; k < num_cells(&in); k++) {
        assert_true(totals[k] >= -1e-12);
        assert_true(totals[k] <= 1 + 1e-12);
        full += fabs(totals[k] - 1) < 1e-12;
        empty += totals[k] == 0;
    }
    assert_true(full > 0);
    assert_true(empty > 0);
    free(totals);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* regridding.md section 7, item 6: 66 x 66 vertices on +-5, rotated 0.4
 * rad and bent (x += 0.05 y^2, y += 0.05 x^2), onto a 33 x 33 lattice a
 * little larger than its bounding box. */
static void curvilinear_warp_keeps_every_total(void **state)
{
    (void)state;
    grid in = lattice(-5, 5, 66, -5, 5, 66);
    grid_rotate_shift(&in, 0.4, 0, 0);
    double low = INFINITY;
    double high = -INFINITY;
    for (int64_t k = 0; k < 66 * 66; k++) {
        double x = in.x[k];
        double y = in.y[k];
        in.x[k] = x + 0.05 * (y * y);
        in.y[k] = y + 0.05 * (x * x);
        low = fmin(low, fmin(in.x[k], in.y[k]));
        high = fmax(high, fmax(in.x[k], in.y[k]));
    }
    grid out = lattice(low - 0.1, high + 0.1, 33, low - 0.1, high + 0.1, 33);
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
    double *totals = input_totals(&triples, num_cells(&in));
    double sum = 0;
    for (int64_t k = 0; k < num_cells(&in); k++) {
        assert_close(totals[k], 1.0, 1e-12);
        sum += totals[k];
    }
    assert_close(sum / (double)num_cells(&in), 1.0, 1e-14);
    free(totals);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* ---- agreement with regridding 3.6.0 --------------------------------------------- */

/* From /tmp/venv/bin/python with regridding 3.6.0:
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

static void rotated_grids_agree_with_regridding(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 4, -1, 1.2, 5);
    grid_rotate_shift(&in, 0.3, 0, 0);
    grid out = lattice(-1.2, 1.1, 5, -0.9, 1.3, 4);
    grid_rotate_shift(&out, -0.1, 0.05, -0.02);
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
    double *dense = dense_weights(&triples, 12, 12);
    double *expected = calloc(12 * 12, sizeof(double));
    assert_non_null(expected);
    size_t num_reference = sizeof reference_weights / sizeof reference_weights[0];
    for (size_t k = 0; k < num_reference; k++) {
        expected[reference_weights[k].input * 12 + reference_weights[k].output] =
            reference_weights[k].value;
    }
    for (int64_t k = 0; k < 12 * 12; k++) {
        assert_close(dense[k], expected[k], 1e-12);
    }
    free(dense);
    free(expected);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* weights_input multiplies each fragment last, so exactly. */
static void weights_input_scales_every_fragment(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 4, -1, 1.2, 5);
    grid_rotate_shift(&in, 0.3, 0, 0);
    grid out = lattice(-1.2, 1.1, 5, -0.9, 1.3, 4);
    grid_rotate_shift(&out, -0.1, 0.05, -0.02);
    double weights_input[12];
    for (int k = 0; k < 12; k++) {
        weights_input[k] = 0.5 + 0.25 * k;
    }
    spart_triples plain;
    spart_triples weighted;
    spart_triples_init(&plain, &plain_allocator);
    spart_triples_init(&weighted, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &plain), SPART_OK);
    assert_int_equal(sweep(&in, &out, weights_input, 1, &weighted), SPART_OK);
    assert_int_equal(plain.count, weighted.count);
    for (int64_t k = 0; k < plain.count; k++) {
        assert_int_equal(plain.indices_input[k], weighted.indices_input[k]);
        assert_int_equal(plain.indices_output[k], weighted.indices_output[k]);
        double expected = plain.values[k] * weights_input[plain.indices_input[k]];
        assert_true(weighted.values[k] == expected);
    }
    spart_triples_release(&plain);
    spart_triples_release(&weighted);
    grid_free(&in);
    grid_free(&out);
}

/* ---- determinism, empty results, errors ------------------------------------------ */

static void one_and_two_threads_give_identical_fragments(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 41, -1, 1, 37);
    grid_rotate_shift(&in, 0.2, 0.01, 0);
    grid out = lattice(-1.1, 1.1, 33, -1.05, 1.1, 35);
    grid_rotate_shift(&out, -0.05, 0, 0.02);
    spart_triples one;
    spart_triples two;
    spart_triples_init(&one, &plain_allocator);
    spart_triples_init(&two, &plain_allocator);
    int threads_before = omp_get_max_threads();
    omp_set_num_threads(1);
    assert_int_equal(sweep(&in, &out, NULL, 1, &one), SPART_OK);
    omp_set_num_threads(2);
    assert_int_equal(sweep(&in, &out, NULL, 1, &two), SPART_OK);
    omp_set_num_threads(threads_before);
    assert_true(one.count > 0);
    assert_int_equal(one.count, two.count);
    size_t n = (size_t)one.count;
    assert_memory_equal(one.indices_input, two.indices_input, n * sizeof(int64_t));
    assert_memory_equal(one.indices_output, two.indices_output, n * sizeof(int64_t));
    assert_memory_equal(one.values, two.values, n * sizeof(double));
    spart_triples_release(&one);
    spart_triples_release(&two);
    grid_free(&in);
    grid_free(&out);
}

static void serial_and_parallel_give_identical_fragments(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 21, -1, 1, 17);
    grid_rotate_shift(&in, 0.2, 0.01, 0);
    grid out = lattice(-1.1, 1.1, 13, -1.05, 1.1, 15);
    grid_rotate_shift(&out, -0.05, 0, 0.02);
    spart_triples serial;
    spart_triples parallel;
    spart_triples_init(&serial, &plain_allocator);
    spart_triples_init(&parallel, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 0, &serial), SPART_OK);
    assert_int_equal(sweep(&in, &out, NULL, 1, &parallel), SPART_OK);
    assert_int_equal(serial.count, parallel.count);
    size_t n = (size_t)serial.count;
    assert_memory_equal(serial.indices_input, parallel.indices_input, n * sizeof(int64_t));
    assert_memory_equal(serial.indices_output, parallel.indices_output, n * sizeof(int64_t));
    assert_memory_equal(serial.values, parallel.values, n * sizeof(double));
    spart_triples_release(&serial);
    spart_triples_release(&parallel);
    grid_free(&in);
    grid_free(&out);
}

static void grids_far_apart_give_no_entries(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 13, -1.1, 1, 12);
    grid_rotate_shift(&in, 0.2, 0, 0);
    grid out = lattice(-1.3, 1.2, 9, -1.2, 1.25, 8);
    grid_rotate_shift(&out, -0.1, 10, 0);
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_OK);
    assert_int_equal(triples.count, 0);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* Lines of the output grid (x = u + v/2, y = u - v/2) pass exactly through
 * vertices of the integer input lattice; there regridding 3.6.0 steps
 * around the vertex forever. The kernel reports it instead. */
static void line_through_a_vertex_is_reported_not_looped_around(void **state)
{
    (void)state;
    grid in = lattice(0, 4, 5, 0, 4, 5);
    grid out = lattice(-1, 5, 7, -3, 3, 7);
    for (int64_t k = 0; k < 49; k++) {
        double u = out.x[k];
        double v = out.y[k];
        out.x[k] = u + 0.5 * v;
        out.y[k] = u - 0.5 * v;
    }
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(sweep(&in, &out, NULL, 1, &triples), SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(triples.count, 0);
    spart_triples_release(&triples);
    grid_free(&in);
    grid_free(&out);
}

/* Every allocation failing in turn: SPART_ERROR_OUT_OF_MEMORY, nothing
 * leaked, and the list keeps exactly the entries it came with. */
static void out_of_memory_frees_everything_and_keeps_the_list(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 9, -1.1, 1, 8);
    grid_rotate_shift(&in, 0.2, 0, 0);
    grid out = lattice(-1.3, 1.2, 7, -1.2, 1.25, 9);
    grid_rotate_shift(&out, -0.1, 0, 0);
    int succeeded = 0;
    for (int64_t fail_at = 1; !succeeded; fail_at++) {
        failing_allocator counts = {0, -1, 0};
        spart_allocator allocator = {failing_malloc, failing_realloc, failing_free, &counts};
        spart_triples triples;
        spart_triples_init(&triples, &allocator);
        assert_int_equal(spart_triples_append(&triples, 7, 8, 0.5), 0);
        int64_t live_before = counts.live;
        counts.fail_at = counts.allocations + fail_at - 1;
        spart_status status = sweep(&in, &out, NULL, 0, &triples);
        if (status == SPART_OK) {
            succeeded = 1;
            assert_true(triples.count > 1);
        } else {
            assert_int_equal(status, SPART_ERROR_OUT_OF_MEMORY);
            assert_int_equal(triples.count, 1);
            assert_int_equal(triples.indices_input[0], 7);
            assert_int_equal(triples.indices_output[0], 8);
            assert_true(triples.values[0] == 0.5);
            assert_int_equal(counts.live, live_before);
        }
        spart_triples_release(&triples);
        assert_int_equal(counts.live, 0);
    }
    grid_free(&in);
    grid_free(&out);
}

/* The kernel appends: entries already in the list stay first. */
static void entries_are_appended_after_existing_ones(void **state)
{
    (void)state;
    grid in = lattice(-1, 1, 4, -1, 1.2, 5);
    grid_rotate_shift(&in, 0.3, 0, 0);
    grid out = lattice(-1.2, 1.1, 5, -0.9, 1.3, 4);
    grid_rotate_shift(&out, -0.1, 0.05, -0.02);
    spart_triples fresh;
    spart_triples appended;
    spart_triples_init(&fresh, &plain_allocator);
    spart_triples_init(&appended, &plain_allocator);
    assert_int_equal(spart_triples_append(&appended, 3, 4, 2.5), 0);
    assert_int_equal(sweep(&in, &out, NULL, 1, &fresh), SPART_OK);
    assert_int_equal(sweep(&in, &out, NULL, 1, &appended), SPART_OK);
    assert_int_equal(appended.count, fresh.count + 1);
    assert_int_equal(appended.indices_input[0], 3);
    assert_int_equal(appended.indices_output[0], 4);
    size_t n = (size_t)fresh.count;
    assert_memory_equal(appended.indices_input + 1, fresh.indices_input, n * sizeof(int64_t));
    assert_memory_equal(appended.values + 1, fresh.values, n * sizeof(double));
    spart_triples_release(&fresh);
    spart_triples_release(&appended);
    grid_free(&in);
    grid_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_inside_a_larger_box_keeps_its_value),
        cmocka_unit_test(larger_box_onto_a_smaller_box_gives_a_quarter),
        cmocka_unit_test(boxes_of_crossed_aspect_give_a_half),
        cmocka_unit_test(four_cells_onto_one_box_sum_to_four),
        cmocka_unit_test(one_box_onto_four_cells_gives_quarters),
        cmocka_unit_test(halving_the_cells_quarters_the_values),
        cmocka_unit_test(doubling_the_cells_quadruples_the_values),
        cmocka_unit_test(input_rotated_by_right_angles_gives_rot90),
        cmocka_unit_test(rotated_grid_inside_the_output_keeps_every_total),
        cmocka_unit_test(rotated_grid_half_covered_loses_the_uncovered_part),
        cmocka_unit_test(curvilinear_warp_keeps_every_total),
        cmocka_unit_test(rotated_grids_agree_with_regridding),
        cmocka_unit_test(weights_input_scales_every_fragment),
        cmocka_unit_test(one_and_two_threads_give_identical_fragments),
        cmocka_unit_test(serial_and_parallel_give_identical_fragments),
        cmocka_unit_test(grids_far_apart_give_no_entries),
        cmocka_unit_test(line_through_a_vertex_is_reported_not_looped_around),
        cmocka_unit_test(out_of_memory_frees_everything_and_keeps_the_list),
        cmocka_unit_test(entries_are_appended_after_existing_ones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
