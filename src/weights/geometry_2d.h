/*
 * src/weights/geometry_2d.h: the plane geometry the 2-D conservative kernels share:
 * where two segments cross, whether a point lies in a polygon, and the
 * signed areas of the cells of a logically rectangular grid.
 *
 * Every function performs the floating-point operations of its
 * counterpart in regridding 3.6.0 (regridding/geometry.py and
 * _weights_conservative_2d/_grids.py) in the same order, without FMA, so
 * that the host kernels reproduce the reference's decisions. The segment
 * functions are defined here, inline, because the sweep calls them several
 * times per step of its inner loop.
 *
 * Grids are given as vertex coordinates x[i * num_y + j], y[i * num_y + j]
 * for i < num_x along axis 0 and j < num_y along axis 1; cell (a, b) has
 * corners (a, b), (a+1, b), (a+1, b+1), (a, b+1).
 *
 * No function allocates or keeps state; all are safe to call from any
 * thread.
 */
#ifndef SPART_GEOMETRY_2D_H
#define SPART_GEOMETRY_2D_H

#include <math.h>
#include <stdint.h>

/* spart_triangle_area_from_origin and the cell area's arithmetic, shared
 * with the device */
#include "weights/grid_area_math.h"

/* Where segment p1 -> p2 crosses segment q1 -> q2, as the parameters t
 * (along p) and u (along q) of the crossing: p1 + t (p2 - p1) = q1 + u (q2 - q1).
 * Segments whose bounding boxes (closed) do not touch give t = u = +inf;
 * parallel segments give infinities, collinear ones NaN, as the reference's
 * plain divisions do. */
static inline void spart_segment_intersection_parameters(double x1, double y1, double x2, double y2,
                                                         double x3, double y3, double x4, double y4,
                                                         double *t, double *u)
{
    double xp_low = x1 < x2 ? x1 : x2;
    double xp_high = x1 < x2 ? x2 : x1;
    double xq_low = x3 < x4 ? x3 : x4;
    double xq_high = x3 < x4 ? x4 : x3;
    double yp_low = y1 < y2 ? y1 : y2;
    double yp_high = y1 < y2 ? y2 : y1;
    double yq_low = y3 < y4 ? y3 : y4;
    double yq_high = y3 < y4 ? y4 : y3;
    if (!(xp_low <= xq_high && xq_low <= xp_high) || !(yp_low <= yq_high && yq_low <= yp_high)) {
        *t = (double)INFINITY;
        *u = (double)INFINITY;
        return;
    }
    double t_numerator = (x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4);
    double u_numerator = (x1 - x2) * (y1 - y3) - (y1 - y2) * (x1 - x3);
    double determinant = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4);
    *t = t_numerator / determinant;
    *u = -u_numerator / determinant;
}

/* Whether the parameters of spart_segment_intersection_parameters describe
 * a crossing: 0 <= t < 1 and 0 <= u < 1, so a segment touching q at q1
 * crosses it and one ending on q does not. NaN never crosses. */
static inline int spart_segments_intersect(double t, double u)
{
    return 0.0 <= t && t < 1.0 && 0.0 <= u && u < 1.0;
}

/* Whether (x, y) lies inside the closed polygon of `num_vertices` vertices
 * (vertices_x[k], vertices_y[k]), by the winding number with half crossings
 * for vertices on the horizontal through the point (Kumar 2018), as
 * regridding 3.6.0. On the unit square (0,0), (1,0), (1,1), (0,1): the
 * interior, the left, bottom and top edges and all corners are inside, the
 * right edge is outside, so that neighbouring cells never both leave out a
 * point of their shared edge. */
int spart_point_in_polygon(double x, double y, const double *vertices_x, const double *vertices_y,
                           int64_t num_vertices);

/* The signed area of cell (a, b) of a grid with num_y vertices along axis
 * 1: positive when x grows along axis 0 and y along axis 1. The shoelace
 * terms are summed from 0 in the order of the reference's grid_volume:
 * first the two edges that run along axis 0 (j = b, then j = b + 1), then
 * the two that run along axis 1 (i = a, then i = a + 1). */
double spart_grid_cell_area(const double *x, const double *y, int64_t num_y, int64_t a, int64_t b);

/* The signed areas of all (num_x - 1) * (num_y - 1) cells, in C order,
 * into `areas`. num_x, num_y >= 2. */
void spart_grid_cell_areas(const double *x, const double *y, int64_t num_x, int64_t num_y,
                           double *areas);

#endif /* SPART_GEOMETRY_2D_H */
