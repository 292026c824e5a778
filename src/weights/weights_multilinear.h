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
    int64_t shape[MAX_AXES];       /* vertices along each axis */
    int64_t stride[MAX_AXES];      /* flat-index distance between neighbours */
    int64_t offset[MAX_CORNERS];   /* flat-index offset of each corner of a cell */
    const double *const *vertices; /* vertices[k][v]: coordinate k of vertex v */
} grid;

/* What a point's weights are made from. */
typedef struct location {
    int64_t cell[MAX_AXES]; /* first corner of the cell, per axis */
    double xi[MAX_AXES];    /* local coordinates in that cell */
    int inside;             /* whether the point is inside the grid */
} location;

/* The weight of corner `corner` at local coordinates xi: the shared
 * arithmetic of src/weights/multilinear_math.h (the device's too). */
static inline double corner_weight(int corner, int num_axes, const double *xi)
{
    return spart_multilinear_corner_weight(corner, num_axes, xi);
}

/* Write point `point`'s 2^N entries into slots point * 2^N ... of the
 * three arrays (which start at the element's first new entry). */
static inline void write_point_weights(const grid *g, const location *where,
                                       const double *weights_input, int nan_outside, int64_t point,
                                       int64_t *indices_input, int64_t *indices_output,
                                       double *values)
{
    int64_t base = 0;
    for (int m = 0; m < g->num_axes; m++) {
        base += where->cell[m] * g->stride[m];
    }
    for (int b = 0; b < g->num_corners; b++) {
        int64_t index = base + g->offset[b];
        double weight = corner_weight(b, g->num_axes, where->xi);
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
