/*
 * src/weights/weights_multilinear.h: what the three files of the
 * multilinear weights share (src/weights/weights_multilinear.c, the kernel
 * and the rectilinear locator; weights_multilinear_newton.c, Newton's
 * method on one cell's multilinear map; weights_multilinear_curvilinear.c,
 * the curvilinear locator): the grid, a point's location in it, and the
 * weights of a cell's corners. Included by those three files alone.
 */
#ifndef SPART_WEIGHTS_MULTILINEAR_H
#define SPART_WEIGHTS_MULTILINEAR_H

#include <math.h>
#include <stdint.h>

#include "core/internal.h"
#include "weights/multilinear_math.h"
#include "weights/multilinear_newton_math.h"

/* The weight of corner `corner` at local coordinates xi: the shared
 * arithmetic of src/weights/multilinear_math.h (the device's too). */
static inline double corner_weight(int corner, int num_axes, const double *xi)
{
    return spart_multilinear_corner_weight(corner, num_axes, xi);
}

/* Newton's method for the local coordinates of `point` in cell `cell`
 * (regridding._cells.newton; src/weights/weights_multilinear_newton.c).
 * Without `clamp` the iterate stays in its cell (continued beyond it);
 * with it, it moves between cells, clamped to the grid. Returns whether it
 * converged; (cell, xi) is where it stopped either way. */
int spart_multilinear_newton(const grid *g, const double *point, int clamp, int64_t *cell,
                             double *xi);

/* The weights of num_points points on a curvilinear grid
 * (src/weights/weights_multilinear_curvilinear.c): the hierarchy of
 * bounding boxes built from `allocator` and freed before return, each
 * point located and its 2^N entries written to slots point * 2^N ... of
 * the three arrays; *num_outside counts the points outside the grid. */
spart_status spart_multilinear_curvilinear(const grid *g, const spart_allocator *allocator,
                                           int64_t num_points, const double *const *points,
                                           const double *weights_input, int nan_outside,
                                           int extrapolate, int parallel, int64_t *indices_input,
                                           int64_t *indices_output, double *values,
                                           int64_t *num_outside);

#endif /* SPART_WEIGHTS_MULTILINEAR_H */
