/*
 * src/weights/multilinear_curvilinear_math.h: locating a point on a
 * curvilinear grid (regridding._curvilinear), written once for the host
 * (src/weights/weights_multilinear_curvilinear.c, which also builds the
 * hierarchy of boxes) and the device (kernels/weights_multilinear.cu): the
 * depth-first search of the boxes, children in corner order, Newton's
 * method in each cell whose box holds the point
 * (src/weights/multilinear_newton_math.h), the first cell that holds it
 * winning; else the nearest cell by branch and bound and Newton's method
 * across the grid from it. The same search order and floating-point
 * operations on both sides, so the same cell and the same bits.
 *
 * The search stack holds SPART_ML_STACK_CAPACITY blocks: a file may define
 * SPART_ML_STACK_LEVELS (the most levels of boxes it searches) before
 * including this header to make it smaller (the device does, to keep a
 * thread's memory small, and takes only trees of at most that many
 * levels); the default covers any grid.
 *
 * Static inline; a CUDA file includes this header with SPART_MATH_FUNCTION
 * defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_MULTILINEAR_CURVILINEAR_MATH_H
#define SPART_MULTILINEAR_CURVILINEAR_MATH_H

#include <math.h>
#include <stdint.h>

#include "weights/multilinear_math.h"
#include "weights/multilinear_newton_math.h"

#ifndef SPART_ML_STACK_LEVELS
#define SPART_ML_STACK_LEVELS MAX_LEVELS
#endif
#define SPART_ML_STACK_CAPACITY (SPART_ML_STACK_LEVELS * MAX_CORNERS + 1)

/* How far outside the unit cube a point's local coordinates may be for it
 * to count as inside the cell (regridding._curvilinear.tolerance): points on
 * a shared face or on the grid's boundary come out of Newton's method off
 * the face by rounding. */
#define SPART_CELL_TOLERANCE 1e-9

/*
 * The boxes are stored siblings together: the 2^N children of a block of
 * level l + 1 take 2^N consecutive slots of level l (a child past the
 * grid's edge keeps an empty slot), so that testing a block's children
 * reads one or two cache lines rather than 2^N scattered ones. Slot s
 * holds its box's lower corner at boxes[s * 2N + c] and its upper corner
 * at boxes[s * 2N + N + c]. The layout changes no box and no search order.
 */
typedef struct box_tree {
    int num_axes;
    int num_levels; /* levels above the cells; 0 for a grid of one cell */
    /* shapes[level][m]: blocks along axis m; level 0 are the cells */
    int64_t shapes[MAX_LEVELS + 1][MAX_AXES];
    /* the slots of level l >= 1 are start[l] .. start[l + 1] - 1 */
    int64_t start[MAX_LEVELS + 2];
    double *boxes;
} box_tree;

SPART_MATH_FUNCTION int64_t spart_ml_ravel(const int64_t *index, int n, const int64_t *shape)
{
    int64_t result = 0;
    for (int m = 0; m < n; m++) {
        result = result * shape[m] + index[m];
    }
    return result;
}

/* Child `corner` of block `block` one level below, whose shape is `below`:
 * its index per axis in `child`; 0 when it is past the edge. */
SPART_MATH_FUNCTION int spart_ml_child_of_block(int n, const int64_t *block, int corner,
                                                const int64_t *below, int64_t *child)
{
    int valid = 1;
    for (int m = 0; m < n; m++) {
        child[m] = 2 * block[m] + ((corner >> m) & 1);
        if (child[m] >= below[m]) {
            valid = 0;
        }
    }
    return valid;
}

/* The slot of the first child (at level - 1 >= 1) of block `block` of
 * `level`; child `corner` is that slot plus `corner`. */
SPART_MATH_FUNCTION int64_t spart_ml_first_child_slot(const box_tree *tree, int level,
                                                      const int64_t *block)
{
    int64_t parent = spart_ml_ravel(block, tree->num_axes, tree->shapes[level]);
    return tree->start[level - 1] + (parent << tree->num_axes);
}

SPART_MATH_FUNCTION const double *spart_ml_box_lower(const box_tree *tree, int64_t slot)
{
    return tree->boxes + slot * 2 * tree->num_axes;
}

SPART_MATH_FUNCTION const double *spart_ml_box_upper(const box_tree *tree, int64_t slot)
{
    return tree->boxes + slot * 2 * tree->num_axes + tree->num_axes;
}

/* Whether the point is in the box of slot `slot`, boundary included. */
SPART_MATH_FUNCTION int spart_ml_in_box(const box_tree *tree, int64_t slot, const double *point)
{
    const double *lower = spart_ml_box_lower(tree, slot);
    const double *upper = spart_ml_box_upper(tree, slot);
    for (int c = 0; c < tree->num_axes; c++) {
        if (!(lower[c] <= point[c] && point[c] <= upper[c])) {
            return 0;
        }
    }
    return 1;
}

/* The bounding box of the cell whose first corner is vertex `base`. */
SPART_MATH_FUNCTION void spart_ml_cell_box(const grid *g, int64_t base, int c, double *low,
                                           double *high)
{
    *low = INFINITY;
    *high = -INFINITY;
    for (int b = 0; b < g->num_corners; b++) {
        double value = g->vertices[c][base + g->offset[b]];
        if (value < *low) {
            *low = value;
        }
        if (value > *high) {
            *high = value;
        }
    }
}

/* Whether the point is in the cell (its box holds it and Newton's method
 * from the cell's middle converges to xi inside the unit cube to
 * SPART_CELL_TOLERANCE); xi is left where Newton's method stopped. */
SPART_MATH_FUNCTION int spart_ml_in_cell(const grid *g, const double *point, int64_t *cell,
                                         double *xi)
{
    int n = g->num_axes;
    int64_t base = 0;
    for (int m = 0; m < n; m++) {
        base += cell[m] * g->stride[m];
    }
    for (int c = 0; c < n; c++) {
        double low, high;
        spart_ml_cell_box(g, base, c, &low, &high);
        if (!(low <= point[c] && point[c] <= high)) {
            return 0;
        }
    }
    for (int m = 0; m < n; m++) {
        xi[m] = 0.5;
    }
    if (!spart_ml_newton(g, point, 0, cell, xi)) {
        return 0;
    }
    for (int m = 0; m < n; m++) {
        if (!(-SPART_CELL_TOLERANCE <= xi[m] && xi[m] <= 1 + SPART_CELL_TOLERANCE)) {
            return 0;
        }
    }
    return 1;
}

/* The stack of a depth-first search, one per thread: for each block
 * waiting, its level, its slot and its index along each axis (kept per
 * axis, so that no division is needed to find its children). */
typedef struct search_stack {
    int level[SPART_ML_STACK_CAPACITY];
    int64_t slot[SPART_ML_STACK_CAPACITY];
    int64_t block[SPART_ML_STACK_CAPACITY][MAX_AXES];
} search_stack;

SPART_MATH_FUNCTION void spart_ml_stack_push(search_stack *stack, int64_t *size, int n, int level,
                                             int64_t slot, const int64_t *block)
{
    stack->level[*size] = level;
    stack->slot[*size] = slot;
    for (int m = 0; m < n; m++) {
        stack->block[*size][m] = block[m];
    }
    (*size)++;
}

/* Pop the top block into (level, slot, block). */
SPART_MATH_FUNCTION void spart_ml_stack_pop(search_stack *stack, int64_t *size, int n, int *level,
                                            int64_t *slot, int64_t *block)
{
    (*size)--;
    *level = stack->level[*size];
    *slot = stack->slot[*size];
    for (int m = 0; m < n; m++) {
        block[m] = stack->block[*size][m];
    }
}

/* Find the cell holding the point by descending the boxes, children in
 * corner order (regridding._curvilinear._search): the first cell that
 * holds it wins. Returns whether one does; cell and xi then say which and
 * where. */
SPART_MATH_FUNCTION int spart_ml_search_cell(const grid *g, const box_tree *tree,
                                             const double *point, search_stack *stack,
                                             int64_t *cell, double *xi)
{
    int n = g->num_axes;
    int top = tree->num_levels;
    if (top == 0) {
        for (int m = 0; m < n; m++) {
            cell[m] = 0;
        }
        return spart_ml_in_cell(g, point, cell, xi);
    }
    if (!spart_ml_in_box(tree, tree->start[top], point)) {
        return 0;
    }
    const int64_t root[MAX_AXES] = {0, 0, 0};
    int64_t size = 0;
    spart_ml_stack_push(stack, &size, n, top, tree->start[top], root);
    while (size > 0) {
        int level;
        int64_t slot, block[MAX_AXES];
        spart_ml_stack_pop(stack, &size, n, &level, &slot, block);
        const int64_t *below = tree->shapes[level - 1];
        if (level == 1) {
            for (int b = 0; b < g->num_corners; b++) {
                if (spart_ml_child_of_block(n, block, b, below, cell) &&
                    spart_ml_in_cell(g, point, cell, xi)) {
                    return 1;
                }
            }
        } else {
            /* pushed in reverse, so that they come off in corner order */
            int64_t first = spart_ml_first_child_slot(tree, level, block);
            for (int b = g->num_corners - 1; b >= 0; b--) {
                if (spart_ml_child_of_block(n, block, b, below, cell) &&
                    spart_ml_in_box(tree, first + b, point)) {
                    spart_ml_stack_push(stack, &size, n, level - 1, first + b, cell);
                }
            }
        }
    }
    return 0;
}

/* The distance from value to [low, high], 0 inside. */
SPART_MATH_FUNCTION double spart_ml_interval_distance(double low, double high, double value)
{
    if (value < low) {
        return low - value;
    }
    if (value > high) {
        return value - high;
    }
    return 0.0;
}

SPART_MATH_FUNCTION double spart_ml_box_distance_squared(const box_tree *tree, int64_t slot,
                                                         const double *point)
{
    const double *lower = spart_ml_box_lower(tree, slot);
    const double *upper = spart_ml_box_upper(tree, slot);
    double result = 0.0;
    for (int c = 0; c < tree->num_axes; c++) {
        double d = spart_ml_interval_distance(lower[c], upper[c], point[c]);
        result += d * d;
    }
    return result;
}

SPART_MATH_FUNCTION double spart_ml_cell_distance_squared(const grid *g, int64_t base,
                                                          const double *point)
{
    double result = 0.0;
    for (int c = 0; c < g->num_axes; c++) {
        double low, high;
        spart_ml_cell_box(g, base, c, &low, &high);
        double d = spart_ml_interval_distance(low, high, point[c]);
        result += d * d;
    }
    return result;
}

/* The cell whose bounding box is nearest the point, by branch and bound
 * with the nearest child first (regridding._curvilinear._nearest): a cell
 * replaces the best so far only when strictly nearer, and among children
 * at equal distance the later corner is searched first, as there. */
SPART_MATH_FUNCTION void spart_ml_nearest_cell(const grid *g, const box_tree *tree,
                                               const double *point, search_stack *stack,
                                               int64_t *nearest)
{
    int n = g->num_axes;
    int top = tree->num_levels;
    int64_t child[MAX_AXES];
    int64_t child_slot[MAX_CORNERS];
    int64_t child_block[MAX_CORNERS][MAX_AXES];
    double child_distance[MAX_CORNERS];
    for (int m = 0; m < n; m++) {
        nearest[m] = 0;
    }
    if (top == 0) {
        return;
    }
    double best = INFINITY;
    const int64_t root[MAX_AXES] = {0, 0, 0};
    int64_t size = 0;
    spart_ml_stack_push(stack, &size, n, top, tree->start[top], root);
    while (size > 0) {
        int level;
        int64_t slot, block[MAX_AXES];
        spart_ml_stack_pop(stack, &size, n, &level, &slot, block);
        if (!(spart_ml_box_distance_squared(tree, slot, point) < best)) {
            continue;
        }
        const int64_t *below = tree->shapes[level - 1];
        if (level == 1) {
            for (int b = 0; b < g->num_corners; b++) {
                if (!spart_ml_child_of_block(n, block, b, below, child)) {
                    continue;
                }
                int64_t base = 0;
                for (int m = 0; m < n; m++) {
                    base += child[m] * g->stride[m];
                }
                double distance = spart_ml_cell_distance_squared(g, base, point);
                if (distance < best) {
                    best = distance;
                    for (int m = 0; m < n; m++) {
                        nearest[m] = child[m];
                    }
                }
            }
        } else {
            int num_children = 0;
            int64_t first = spart_ml_first_child_slot(tree, level, block);
            for (int b = 0; b < g->num_corners; b++) {
                if (!spart_ml_child_of_block(n, block, b, below, child)) {
                    continue;
                }
                double distance = spart_ml_box_distance_squared(tree, first + b, point);
                if (!(distance < best)) {
                    continue;
                }
                /* in order of decreasing distance, so that the nearest is
                 * pushed last and comes off first */
                int j = num_children;
                while (j > 0 && child_distance[j - 1] < distance) {
                    child_distance[j] = child_distance[j - 1];
                    child_slot[j] = child_slot[j - 1];
                    for (int m = 0; m < n; m++) {
                        child_block[j][m] = child_block[j - 1][m];
                    }
                    j--;
                }
                child_distance[j] = distance;
                child_slot[j] = first + b;
                for (int m = 0; m < n; m++) {
                    child_block[j][m] = child[m];
                }
                num_children++;
            }
            for (int j = 0; j < num_children; j++) {
                spart_ml_stack_push(stack, &size, n, level - 1, child_slot[j], child_block[j]);
            }
        }
    }
}

/* Locate point p on a curvilinear grid (regridding._curvilinear.locate).
 * A point in no cell, or with a coordinate that is not finite, gets the
 * first cell and NaN local coordinates, unless `extrapolate` and it is
 * finite: then Newton's method runs across the grid from the nearest cell,
 * and where it does not converge the cell it stopped in keeps NaN xi. */
SPART_MATH_FUNCTION void spart_ml_locate_curvilinear(const grid *g, const box_tree *tree,
                                                     const double *const *points, int64_t p,
                                                     int extrapolate, search_stack *stack,
                                                     location *where)
{
    int n = g->num_axes;
    double point[MAX_AXES];
    int finite = 1;
    for (int c = 0; c < n; c++) {
        point[c] = points[c][p];
        if (!isfinite(point[c])) {
            finite = 0;
        }
    }
    where->inside = finite && spart_ml_search_cell(g, tree, point, stack, where->cell, where->xi);
    if (where->inside) {
        return;
    }
    if (finite && extrapolate) {
        spart_ml_nearest_cell(g, tree, point, stack, where->cell);
        for (int m = 0; m < n; m++) {
            where->xi[m] = 0.5;
        }
        if (!spart_ml_newton(g, point, 1, where->cell, where->xi)) {
            for (int m = 0; m < n; m++) {
                where->xi[m] = NAN;
            }
        }
        return;
    }
    for (int m = 0; m < n; m++) {
        where->cell[m] = 0;
        where->xi[m] = NAN;
    }
}

#endif /* SPART_MULTILINEAR_CURVILINEAR_MATH_H */
