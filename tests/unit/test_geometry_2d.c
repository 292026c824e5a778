/* The shared 2-D geometry (src/weights/geometry_2d.h): segment crossings, point in
 * polygon, and signed cell areas, as regridding 3.6.0 decides them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "weights/geometry_2d.h"

static const double square_x[4] = {0, 1, 1, 0};
static const double square_y[4] = {0, 0, 1, 1};

static int in_unit_square(double x, double y)
{
    return spart_point_in_polygon(x, y, square_x, square_y, 4);
}

static void unit_square_holds_its_interior(void **state)
{
    (void)state;
    assert_true(in_unit_square(0.5, 0.5));
    assert_true(in_unit_square(0.1, 0.9));
    assert_false(in_unit_square(1.5, 0.5));
    assert_false(in_unit_square(0.5, -0.5));
}

/* regridding.md section 3.4: left, bottom and top edges and all four
 * corners inside, the right edge outside. */
static void unit_square_holds_all_edges_but_the_right(void **state)
{
    (void)state;
    assert_true(in_unit_square(0, 0.5));
    assert_true(in_unit_square(0.5, 0));
    assert_true(in_unit_square(0.5, 1));
    assert_false(in_unit_square(1, 0.5));
    assert_true(in_unit_square(0, 0));
    assert_true(in_unit_square(1, 0));
    assert_true(in_unit_square(1, 1));
    assert_true(in_unit_square(0, 1));
}

/* Two cells sharing a slanted edge: a point on it is in exactly one. */
static void shared_slanted_edge_belongs_to_one_cell(void **state)
{
    (void)state;
    const double left_x[4] = {0, 1, 1.3, 0};
    const double left_y[4] = {0, 0, 1, 1};
    const double right_x[4] = {1, 2, 2, 1.3};
    const double right_y[4] = {0, 0, 1, 1};
    for (int k = 1; k < 10; k++) {
        double t = k / 10.0;
        double x = 1 + 0.3 * t;
        double y = t;
        int in_left = spart_point_in_polygon(x, y, left_x, left_y, 4);
        int in_right = spart_point_in_polygon(x, y, right_x, right_y, 4);
        assert_int_equal(in_left + in_right, 1);
    }
}

static void crossing_segments_give_their_parameters(void **state)
{
    (void)state;
    double t;
    double u;
    spart_segment_intersection_parameters(0, 0, 2, 2, 0, 1, 2, 0, &t, &u);
    assert_true(fabs(t - 1.0 / 3) < 1e-15);
    assert_true(fabs(u - 1.0 / 3) < 1e-15);
    assert_true(spart_segments_intersect(t, u));
}

/* regridding.md section 7, item 13: touching q at its start (u = 0) is a
 * crossing, ending on q (t = 1) is not. */
static void crossing_counts_at_the_start_of_q_not_at_the_end_of_p(void **state)
{
    (void)state;
    double t;
    double u;
    spart_segment_intersection_parameters(-1, 0, 1, 0, 0, 0, 0, 1, &t, &u);
    assert_true(t == 0.5 && u == 0);
    assert_true(spart_segments_intersect(t, u));
    spart_segment_intersection_parameters(-1, 0.5, 0, 0.5, 0, 0, 0, 1, &t, &u);
    assert_true(t == 1);
    assert_false(spart_segments_intersect(t, u));
}

static void segments_with_disjoint_boxes_never_cross(void **state)
{
    (void)state;
    double t;
    double u;
    spart_segment_intersection_parameters(0, 0, 1, 1, 2, 0, 3, 1, &t, &u);
    assert_true(isinf(t) && isinf(u));
    assert_false(spart_segments_intersect(t, u));
}

static void parallel_and_collinear_segments_never_cross(void **state)
{
    (void)state;
    double t;
    double u;
    spart_segment_intersection_parameters(0, 0, 1, 0, 0.5, 0, 2, 0, &t, &u);
    assert_false(spart_segments_intersect(t, u));
    spart_segment_intersection_parameters(0, 0, 1, 1, 0, 0.5, 1, 1.5, &t, &u);
    assert_false(spart_segments_intersect(t, u));
}

/* x grows along axis 0 and y along axis 1: positive; mirrored: negative. */
static void cell_areas_are_signed_by_orientation(void **state)
{
    (void)state;
    /* 3 x 2 vertices: x = 0, 1, 3 along axis 0; y = 0, 2 along axis 1 */
    const double x[6] = {0, 0, 1, 1, 3, 3};
    const double y[6] = {0, 2, 0, 2, 0, 2};
    double areas[2];
    spart_grid_cell_areas(x, y, 3, 2, areas);
    assert_true(areas[0] == 2);
    assert_true(areas[1] == 4);
    const double mirrored_x[6] = {0, 0, -1, -1, -3, -3};
    assert_true(spart_grid_cell_area(mirrored_x, y, 2, 1, 0) == -4);
}

static void rotated_cell_area_is_its_true_area(void **state)
{
    (void)state;
    double c = cos(0.7);
    double s = sin(0.7);
    double x[4];
    double y[4];
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            double u = 3 + 0.5 * i;
            double v = -2 + 0.25 * j;
            x[i * 2 + j] = u * c - v * s;
            y[i * 2 + j] = u * s + v * c;
        }
    }
    assert_true(fabs(spart_grid_cell_area(x, y, 2, 0, 0) - 0.125) < 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unit_square_holds_its_interior),
        cmocka_unit_test(unit_square_holds_all_edges_but_the_right),
        cmocka_unit_test(shared_slanted_edge_belongs_to_one_cell),
        cmocka_unit_test(crossing_segments_give_their_parameters),
        cmocka_unit_test(crossing_counts_at_the_start_of_q_not_at_the_end_of_p),
        cmocka_unit_test(segments_with_disjoint_boxes_never_cross),
        cmocka_unit_test(parallel_and_collinear_segments_never_cross),
        cmocka_unit_test(cell_areas_are_signed_by_orientation),
        cmocka_unit_test(rotated_cell_area_is_its_true_area),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
