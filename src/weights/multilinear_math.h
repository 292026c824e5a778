/*
 * src/weights/multilinear_math.h: the arithmetic of multilinear weights on a
 * rectilinear grid that the host kernel (src/weights/weights_multilinear.c)
 * and its CUDA twin (kernels/weights_multilinear.cu) must agree on bit for
 * bit, written once: locating a coordinate along one axis (a binary search
 * of its ascending profile, as numpy.searchsorted, and the local
 * coordinate in the cell found) and the weight of a cell's corner.
 *
 * Order of operations (the reference's, regridding._rectilinear.locate):
 * xi = (value - v[j]) / (v[j + 1] - v[j]), then 1 - xi on a descending
 * axis; a corner's weight is multiplied up from 1.0 in axis order, by xi
 * where the corner is one step further along the axis and by 1 - xi where
 * it is not; then times weights_input. No fma: none of these is one.
 *
 * Static inline; a CUDA file includes this header with SPART_MATH_FUNCTION
 * defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_MULTILINEAR_MATH_H
#define SPART_MULTILINEAR_MATH_H

#include <math.h>
#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* numpy.searchsorted(values, value, side="left") on n ascending values:
 * the first index whose value is not less than `value`, n for NaN (NumPy
 * sorts NaN after everything). */
SPART_MATH_FUNCTION int64_t spart_search_sorted_left(const double *values, int64_t n, double value)
{
    if (value != value) {
        return n;
    }
    int64_t low = 0;
    int64_t high = n;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (values[middle] < value) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

/* Locate `value` along an axis of n vertices whose profile `values` is
 * ascending (the axis itself descends when `descending`): the cell's
 * first vertex along the axis in *cell, the local coordinate in *xi (NaN
 * for a value that is not finite). Returns whether the value lies within
 * the axis's extent; outside it the edge cell is extended. */
SPART_MATH_FUNCTION int spart_multilinear_locate_axis(const double *values, int64_t n,
                                                      int descending, double value, int64_t *cell,
                                                      double *xi)
{
    int inside = values[0] <= value && value <= values[n - 1];
    int64_t j = spart_search_sorted_left(values, n, value) - 1;
    if (j < 0) {
        j = 0;
    } else if (j > n - 2) {
        j = n - 2;
    }
    double fraction = (value - values[j]) / (values[j + 1] - values[j]);
    if (!isfinite(value)) {
        fraction = NAN;
    }
    if (descending) {
        j = n - 2 - j;
        fraction = 1 - fraction;
    }
    *cell = j;
    *xi = fraction;
    return inside;
}

/* The weight of corner `corner` at local coordinates xi, multiplied up
 * from 1 in axis order as the reference does. */
SPART_MATH_FUNCTION double spart_multilinear_corner_weight(int corner, int num_axes,
                                                           const double *xi)
{
    double weight = 1.0;
    for (int m = 0; m < num_axes; m++) {
        if ((corner >> m) & 1) {
            weight *= xi[m];
        } else {
            weight *= 1 - xi[m];
        }
    }
    return weight;
}

/* ---- the grid and a point's place in it (rectilinear and curvilinear) --- */

enum {
    MAX_AXES = 3,
    MAX_CORNERS = 1 << MAX_AXES,
    /* levels of boxes above the cells: each halves the blocks along every
     * axis, so 63 levels cover any int64 extent */
    MAX_LEVELS = 64,
    /* a depth-first search holds at most the children of one block per
     * level, plus the root */
    STACK_CAPACITY = MAX_LEVELS * MAX_CORNERS + 1,
    /* the most steps Newton's method takes, and the most times one step is
     * halved, before it gives up (regridding._cells) */
    NEWTON_ITERATIONS = 64,
    NEWTON_HALVINGS = 30,
    /* points per chunk of the parallel loops: locating costs differ between
     * points inside and outside a curvilinear grid */
    POINTS_PER_CHUNK = 1024
};

/* The input grid: its vertices' coordinates and the index arithmetic. */
typedef struct grid {
    int num_axes;
    int num_corners;
    int64_t shape[MAX_AXES];          /* vertices along each axis */
    int64_t stride[MAX_AXES];         /* flat-index distance between neighbours */
    int64_t offset[MAX_CORNERS];      /* flat-index offset of each corner of a cell */
    const double *vertices[MAX_AXES]; /* vertices[k][v]: coordinate k of vertex v */
} grid;

/* What a point's weights are made from. */
typedef struct location {
    int64_t cell[MAX_AXES]; /* first corner of the cell, per axis */
    double xi[MAX_AXES];    /* local coordinates in that cell */
    int inside;             /* whether the point is inside the grid */
} location;

/* Write point `point`'s 2^N entries into slots point * 2^N ... of the
 * three arrays (which start at the element's first new entry). */
SPART_MATH_FUNCTION void write_point_weights(const grid *g, const location *where,
                                             const double *weights_input, int nan_outside,
                                             int64_t point, int64_t *indices_input,
                                             int64_t *indices_output, double *values)
{
    int64_t base = 0;
    for (int m = 0; m < g->num_axes; m++) {
        base += where->cell[m] * g->stride[m];
    }
    for (int b = 0; b < g->num_corners; b++) {
        int64_t index = base + g->offset[b];
        double weight = spart_multilinear_corner_weight(b, g->num_axes, where->xi);
        if (weights_input != NULL) {
            weight *= weights_input[index];
        }
        if (nan_outside && !where->inside) {
            weight = NAN;
        }
        int64_t slot = point * g->num_corners + b;
        indices_input[slot] = index;
        indices_output[slot] = point;
        values[slot] = weight;
    }
}

#endif /* SPART_MULTILINEAR_MATH_H */
