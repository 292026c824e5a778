/* The 2-D conservative kernel by exact clipping between any two grids
 * (src/weights/weights_conservative_2d_clip_general.c) on rotated, warped,
 * mirrored and reversed grids: the identity, orientation, agreement with
 * the lattice kernel, the sweep and regridding, conservation. Exact cells
 * and degenerate cases are in test_conservative_2d_clip_general_cells.c. */
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

#include "test_clip_general_util.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
