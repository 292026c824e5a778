/* The 2-D conservative kernel by exact clipping between any two grids
 * (src/weights/weights_conservative_2d_clip_general.c), on cells whose
 * weights are known exactly: boxes, non-convex and triangular output cells,
 * slivers; then weights_input, thread counts, degenerate grids and memory.
 * Rotated and warped grids, orientation and conservation are in
 * test_conservative_2d_clip_general.c. */
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
#include "test_clip_general_util.h"

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
