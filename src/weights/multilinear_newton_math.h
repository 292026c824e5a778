/*
 * src/weights/multilinear_newton_math.h: the multilinear map of one cell
 * of a grid (regridding._cells) and Newton's method on it, which finds a
 * point's local coordinates in a cell of a curvilinear grid: the same
 * floating-point operations in the same order as regridding's numba code,
 * written once for the host (src/weights/weights_multilinear_newton.c) and
 * the device (kernels/weights_multilinear.cu). No fma, no contraction on
 * either side.
 *
 * Static inline; a CUDA file includes this header with SPART_MATH_FUNCTION
 * defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_MULTILINEAR_NEWTON_MATH_H
#define SPART_MULTILINEAR_NEWTON_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "weights/multilinear_math.h"

/* A Newton step shorter than this, in units of the local coordinates, has
 * converged (regridding._cells.tolerance). */
#define SPART_NEWTON_TOLERANCE 1e-13

/* The rounding error of a position per corner of a cell, as a fraction of
 * the largest term it sums (regridding._cells.rounding). */
#define SPART_POSITION_ROUNDING (64 * DBL_EPSILON)

/* Python's max(a, b) for floats: a unless b is larger (a NaN b is
 * ignored, a NaN a kept), as the reference's numba code computes it. */
SPART_MATH_FUNCTION double spart_ml_larger(double a, double b)
{
    return b > a ? b : a;
}

/* ---- the multilinear map of one cell (regridding._cells) --------------- */

/* The position at local coordinates xi of the cell whose first corner is
 * vertex `base`, measured from that corner (so that its rounding error is
 * relative to the cell's size, not its distance from the origin). */
SPART_MATH_FUNCTION void spart_ml_cell_position(const grid *g, int64_t base, const double *xi,
                                                double *x)
{
    int n = g->num_axes;
    for (int k = 0; k < n; k++) {
        x[k] = 0;
    }
    for (int b = 0; b < g->num_corners; b++) {
        int64_t index = base + g->offset[b];
        double weight = spart_multilinear_corner_weight(b, n, xi);
        for (int k = 0; k < n; k++) {
            x[k] += weight * (g->vertices[k][index] - g->vertices[k][base]);
        }
    }
}

/* The position as cell_position, and its derivative jacobian[k][m] of
 * coordinate k with respect to xi_m. */
SPART_MATH_FUNCTION void spart_ml_cell_evaluate(const grid *g, int64_t base, const double *xi,
                                                double *x, double jacobian[MAX_AXES][MAX_AXES])
{
    int n = g->num_axes;
    for (int k = 0; k < n; k++) {
        x[k] = 0;
        for (int m = 0; m < n; m++) {
            jacobian[k][m] = 0;
        }
    }
    for (int b = 0; b < g->num_corners; b++) {
        int64_t index = base + g->offset[b];
        double weight = spart_multilinear_corner_weight(b, n, xi);
        for (int k = 0; k < n; k++) {
            x[k] += weight * (g->vertices[k][index] - g->vertices[k][base]);
        }
        for (int m = 0; m < n; m++) {
            /* the product of every factor but the one along m, multiplied
             * out rather than divided, since a factor can be zero */
            double derivative = ((b >> m) & 1) ? 1.0 : -1.0;
            for (int j = 0; j < n; j++) {
                if (j != m) {
                    derivative *= ((b >> j) & 1) ? xi[j] : 1 - xi[j];
                }
            }
            for (int k = 0; k < n; k++) {
                jacobian[k][m] += derivative * (g->vertices[k][index] - g->vertices[k][base]);
            }
        }
    }
}

/* The point measured from vertex `base`, as positions are measured. */
SPART_MATH_FUNCTION void spart_ml_cell_target(const grid *g, int64_t base, const double *point,
                                              double *goal)
{
    for (int k = 0; k < g->num_axes; k++) {
        goal[k] = point[k] - g->vertices[k][base];
    }
}

SPART_MATH_FUNCTION double spart_ml_distance_squared(int n, const double *x, const double *y)
{
    double result = 0.0;
    for (int k = 0; k < n; k++) {
        double d = x[k] - y[k];
        result += d * d;
    }
    return result;
}

/* Solve a x = b (n by n) by Gaussian elimination with partial pivoting;
 * a and b are overwritten. 0 when a is singular (or holds NaN). */
SPART_MATH_FUNCTION int spart_ml_solve(int n, double a[MAX_AXES][MAX_AXES], double *b, double *x)
{
    for (int column = 0; column < n; column++) {
        int pivot = column;
        double largest = fabs(a[column][column]);
        for (int row = column + 1; row < n; row++) {
            if (fabs(a[row][column]) > largest) {
                largest = fabs(a[row][column]);
                pivot = row;
            }
        }
        if (!(largest > 0)) {
            return 0;
        }
        if (pivot != column) {
            for (int j = 0; j < n; j++) {
                double swap = a[column][j];
                a[column][j] = a[pivot][j];
                a[pivot][j] = swap;
            }
            double swap_b = b[column];
            b[column] = b[pivot];
            b[pivot] = swap_b;
        }
        for (int row = column + 1; row < n; row++) {
            double factor = a[row][column] / a[column][column];
            for (int j = column; j < n; j++) {
                a[row][j] -= factor * a[column][j];
            }
            b[row] -= factor * b[column];
        }
    }
    for (int row = n - 1; row >= 0; row--) {
        double total = b[row];
        for (int j = row + 1; j < n; j++) {
            total -= a[row][j] * x[j];
        }
        x[row] = total / a[row][row];
    }
    return 1;
}

/* With `clamp`, move (cell, xi) to the cell its local coordinates fall in,
 * clamped to the grid (whole-cell shifts of xi are exact), so that a point
 * beyond the grid stays in the edge cell with xi outside [0, 1]. Returns
 * the flat index of the cell's first corner, moved or not. */
SPART_MATH_FUNCTION int64_t spart_ml_move_to_cell(const grid *g, int clamp, int64_t *cell,
                                                  double *xi)
{
    int64_t base = 0;
    for (int m = 0; m < g->num_axes; m++) {
        if (clamp) {
            double shift = floor(xi[m]);
            double low = -(double)cell[m];
            double high = (double)(g->shape[m] - 2 - cell[m]);
            if (shift != shift) {
                shift = 0.0;
            } else if (shift < low) {
                shift = low;
            } else if (shift > high) {
                shift = high;
            }
            cell[m] += (int64_t)shift;
            xi[m] -= shift;
        }
        base += cell[m] * g->stride[m];
    }
    return base;
}

/* The squared distance between a position and its goal below which the
 * difference is rounding error: each coordinate rounds to a multiple of
 * SPART_POSITION_ROUNDING per corner of its largest term (the weights' magnitude
 * times the cell's extent, or the goal's distance from the first corner). */
SPART_MATH_FUNCTION double spart_ml_rounding_floor(const grid *g, int64_t base, const double *xi,
                                                   const double *goal)
{
    int n = g->num_axes;
    double total = 1.0;
    for (int m = 0; m < n; m++) {
        total *= fabs(xi[m]) + fabs(1 - xi[m]);
    }
    double factor = (double)g->num_corners * SPART_POSITION_ROUNDING;
    double result = 0.0;
    for (int k = 0; k < n; k++) {
        double extent = 0.0;
        for (int b = 0; b < g->num_corners; b++) {
            extent = spart_ml_larger(
                extent, fabs(g->vertices[k][base + g->offset[b]] - g->vertices[k][base]));
        }
        double error = factor * (total * extent + fabs(goal[k]));
        result += error * error;
    }
    return result;
}

/* Newton's method for the local coordinates of `point`, from (cell, xi),
 * as regridding._cells.newton: each step is halved until it brings the
 * position closer; converged once a step is below SPART_NEWTON_TOLERANCE or the
 * distance is down to rounding_floor. Without `clamp` the iterate stays in
 * its cell (continued beyond it); with it, it moves between cells, clamped
 * to the grid. Returns whether it converged; (cell, xi) is where it
 * stopped either way. */
SPART_MATH_FUNCTION int spart_ml_newton(const grid *g, const double *point, int clamp,
                                        int64_t *cell, double *xi)
{
    int n = g->num_axes;
    double jacobian[MAX_AXES][MAX_AXES];
    double matrix[MAX_AXES][MAX_AXES];
    double x[MAX_AXES], residual[MAX_AXES], step[MAX_AXES], goal[MAX_AXES];
    double xi_trial[MAX_AXES], x_trial[MAX_AXES], goal_trial[MAX_AXES];
    int64_t cell_trial[MAX_AXES];

    int64_t base = spart_ml_move_to_cell(g, clamp, cell, xi);
    spart_ml_cell_target(g, base, point, goal);
    spart_ml_cell_evaluate(g, base, xi, x, jacobian);
    double error = spart_ml_distance_squared(n, x, goal);

    for (int iteration = 0; iteration < NEWTON_ITERATIONS; iteration++) {
        if (error <= spart_ml_rounding_floor(g, base, xi, goal)) {
            return 1;
        }
        for (int k = 0; k < n; k++) {
            for (int m = 0; m < n; m++) {
                matrix[k][m] = jacobian[k][m];
            }
            residual[k] = x[k] - goal[k];
        }
        if (!spart_ml_solve(n, matrix, residual, step)) {
            return 0;
        }
        double size = 0.0;
        double scale = 1.0;
        for (int m = 0; m < n; m++) {
            size = spart_ml_larger(size, fabs(step[m]));
            scale = spart_ml_larger(scale, fabs(xi[m]));
        }
        if (!(size < INFINITY)) {
            return 0;
        }

        double fraction = 1.0;
        int accepted = 0;
        int64_t base_trial = base;
        for (int halving = 0; halving < NEWTON_HALVINGS; halving++) {
            for (int m = 0; m < n; m++) {
                cell_trial[m] = cell[m];
                xi_trial[m] = xi[m] - fraction * step[m];
            }
            base_trial = spart_ml_move_to_cell(g, clamp, cell_trial, xi_trial);
            spart_ml_cell_target(g, base_trial, point, goal_trial);
            spart_ml_cell_position(g, base_trial, xi_trial, x_trial);
            if (spart_ml_distance_squared(n, x_trial, goal_trial) < error) {
                accepted = 1;
                break;
            }
            fraction = fraction / 2;
        }
        if (!accepted) {
            /* no point along the step is closer: the step is down to the
             * rounding of the position, or the continuation of the cell
             * stops short of the point */
            return size <= SPART_NEWTON_TOLERANCE * scale;
        }
        for (int m = 0; m < n; m++) {
            cell[m] = cell_trial[m];
            xi[m] = xi_trial[m];
        }
        base = base_trial;
        if (fraction * size <= SPART_NEWTON_TOLERANCE * scale) {
            return 1;
        }
        spart_ml_cell_target(g, base, point, goal);
        spart_ml_cell_evaluate(g, base, xi, x, jacobian);
        error = spart_ml_distance_squared(n, x, goal);
    }
    return 0;
}

#endif /* SPART_MULTILINEAR_NEWTON_MATH_H */
