/*
 * src/weights/grid_area_math.h: the signed area of a cell of a logically
 * rectangular grid, written once for the host (src/weights/geometry_2d.c,
 * every conservative transpose's cell volumes) and the device (the ideal
 * instrument's planes, kernels/instrument_planes.cu), so that both give the
 * same bits: products and differences each rounded once (host C with
 * -ffp-contract=off, CUDA with --fmad=false), the terms summed in the
 * fixed order of regridding 3.6.0's grid_volume (geometry_2d.h).
 *
 * Grids are vertex coordinates x[i * num_y + j], y[i * num_y + j]; cell
 * (a, b) has corners (a, b), (a+1, b), (a+1, b+1), (a, b+1).
 */
#ifndef SPART_GRID_AREA_MATH_H
#define SPART_GRID_AREA_MATH_H

#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* The signed area of the triangle (origin, p1, p2): positive when
 * counterclockwise. Summed around a closed polygon it gives its area. */
SPART_MATH_FUNCTION double spart_triangle_area_from_origin(double x1, double y1, double x2,
                                                           double y2)
{
    return (x1 * y2 - x2 * y1) / 2;
}

/* The signed area of cell (a, b) of a grid with num_y vertices along axis
 * 1: positive when x grows along axis 0 and y along axis 1. The shoelace
 * terms are summed from 0 in the order of the reference's grid_volume:
 * first the two edges that run along axis 0 (j = b, then j = b + 1), then
 * the two that run along axis 1 (i = a, then i = a + 1). */
SPART_MATH_FUNCTION double spart_grid_cell_area_math(const double *x, const double *y,
                                                     int64_t num_y, int64_t a, int64_t b)
{
    /* the edges running along axis 0, with the roles of x and y swapped as
     * the reference's transposed sweep has them (hence their sign) */
    int64_t low_a = a * num_y;
    int64_t high_a = (a + 1) * num_y;
    double along_0_low =
        spart_triangle_area_from_origin(y[low_a + b], x[low_a + b], y[high_a + b], x[high_a + b]);
    double along_0_high = spart_triangle_area_from_origin(y[low_a + b + 1], x[low_a + b + 1],
                                                          y[high_a + b + 1], x[high_a + b + 1]);
    /* the edges running along axis 1 */
    double along_1_low = spart_triangle_area_from_origin(x[low_a + b], y[low_a + b],
                                                         x[low_a + b + 1], y[low_a + b + 1]);
    double along_1_high = spart_triangle_area_from_origin(x[high_a + b], y[high_a + b],
                                                          x[high_a + b + 1], y[high_a + b + 1]);
    return 0.0 - along_0_low + along_0_high - along_1_low + along_1_high;
}

#endif /* SPART_GRID_AREA_MATH_H */
