/*
 * src/weights/weights_multilinear_curvilinear.c: the multilinear weights'
 * locator on curvilinear grids (regridding._curvilinear): a hierarchy of
 * bounding boxes (level one: blocks of 2^N cells; each level above: blocks
 * of 2^N blocks) is descended depth first, and in each cell whose box
 * holds the point, the point's local coordinates are found by Newton's
 * method (src/weights/weights_multilinear_newton.c). The first cell where
 * they are inside the unit cube (to 1e-9) holds the point. A point in no
 * cell is extrapolated by Newton's method across the whole grid from the
 * cell whose box is nearest; NaN where that fails. The same search order
 * as regridding's, so the same cell.
 */
#include <math.h>
#include <stdint.h>

#include "core/internal.h"
#include "weights/weights_multilinear.h"

/* How far outside the unit cube a point's local coordinates may be for it
 * to count as inside the cell (regridding._curvilinear.tolerance): points on
 * a shared face or on the grid's boundary come out of Newton's method off
 * the face by rounding. */
static const double cell_tolerance = 1e-9;

/* ---- curvilinear grids: the hierarchy of bounding boxes ---------------- */

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

static void unravel(int64_t index, int n, const int64_t *shape, int64_t *out)
{
    for (int m = n - 1; m >= 0; m--) {
        out[m] = index % shape[m];
        index = index / shape[m];
    }
}

static int64_t ravel(const int64_t *index, int n, const int64_t *shape)
{
    int64_t result = 0;
    for (int m = 0; m < n; m++) {
        result = result * shape[m] + index[m];
    }
    return result;
}

/* Child `corner` of block `block` one level below, whose shape is `below`:
 * its index per axis in `child`; 0 when it is past the edge. */
static int child_of_block(int n, const int64_t *block, int corner, const int64_t *below,
                          int64_t *child)
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
static int64_t first_child_slot(const box_tree *tree, int level, const int64_t *block)
{
    int64_t parent = ravel(block, tree->num_axes, tree->shapes[level]);
    return tree->start[level - 1] + (parent << tree->num_axes);
}

static const double *box_lower(const box_tree *tree, int64_t slot)
{
    return tree->boxes + slot * 2 * tree->num_axes;
}

static const double *box_upper(const box_tree *tree, int64_t slot)
{
    return tree->boxes + slot * 2 * tree->num_axes + tree->num_axes;
}

static void box_empty(int n, double *lower, double *upper)
{
    for (int c = 0; c < n; c++) {
        lower[c] = INFINITY;
        upper[c] = -INFINITY;
    }
}

/* The box of block `block` of level one: every vertex of its (up to) 2^N
 * cells; a NaN coordinate is left out. */
static void box_of_cells(const grid *g, const int64_t *block, double *lower, double *upper)
{
    int n = g->num_axes;
    int64_t first[MAX_AXES], last[MAX_AXES], vertex[MAX_AXES];
    for (int m = 0; m < n; m++) {
        first[m] = 2 * block[m];
        last[m] = 2 * block[m] + 2 < g->shape[m] - 1 ? 2 * block[m] + 2 : g->shape[m] - 1;
        vertex[m] = first[m];
    }
    box_empty(n, lower, upper);
    for (;;) {
        int64_t index = 0;
        for (int m = 0; m < n; m++) {
            index += vertex[m] * g->stride[m];
        }
        for (int c = 0; c < n; c++) {
            double value = g->vertices[c][index];
            if (value < lower[c]) {
                lower[c] = value;
            }
            if (value > upper[c]) {
                upper[c] = value;
            }
        }
        int m = n - 1;
        while (m >= 0) {
            vertex[m] += 1;
            if (vertex[m] <= last[m]) {
                break;
            }
            vertex[m] = first[m];
            m--;
        }
        if (m < 0) {
            return;
        }
    }
}

/* The box of block `block` of `level` >= 2: the boxes of its children. */
static void box_of_boxes(const box_tree *tree, int level, const int64_t *block, double *lower,
                         double *upper)
{
    int n = tree->num_axes;
    int64_t child[MAX_AXES];
    int64_t first = first_child_slot(tree, level, block);
    box_empty(n, lower, upper);
    for (int b = 0; b < (1 << n); b++) {
        if (!child_of_block(n, block, b, tree->shapes[level - 1], child)) {
            continue;
        }
        const double *child_lower = box_lower(tree, first + b);
        const double *child_upper = box_upper(tree, first + b);
        for (int c = 0; c < n; c++) {
            if (child_lower[c] < lower[c]) {
                lower[c] = child_lower[c];
            }
            if (child_upper[c] > upper[c]) {
                upper[c] = child_upper[c];
            }
        }
    }
}

/* The box of slot `slot` of level `level` >= 1 (empty past the edge). */
static void box_of_slot(const grid *g, const box_tree *tree, int level, int64_t slot, double *lower,
                        double *upper)
{
    int n = g->num_axes;
    int64_t block[MAX_AXES];
    if (level == tree->num_levels) {
        for (int m = 0; m < n; m++) {
            block[m] = 0;
        }
    } else {
        int64_t parent[MAX_AXES];
        unravel(slot >> n, n, tree->shapes[level + 1], parent);
        if (!child_of_block(n, parent, (int)(slot & ((1 << n) - 1)), tree->shapes[level], block)) {
            box_empty(n, lower, upper);
            return;
        }
    }
    if (level == 1) {
        box_of_cells(g, block, lower, upper);
    } else {
        box_of_boxes(tree, level, block, lower, upper);
    }
}

static void box_tree_release(box_tree *tree, const spart_allocator *allocator)
{
    spart_free(allocator, tree->boxes);
    tree->boxes = NULL;
}

/* Build the hierarchy (regridding._curvilinear.tree): level zero are the
 * cells, each level above halves the blocks along every axis (rounding
 * up) until one block holds the grid. Boxes are exact minima and maxima,
 * so building them in parallel changes nothing. */
static spart_status box_tree_build(const grid *g, const spart_allocator *allocator, int parallel,
                                   box_tree *tree)
{
    int n = g->num_axes;
    int level = 0;
    int more = 0;
    tree->num_axes = n;
    tree->boxes = NULL;
    for (int m = 0; m < n; m++) {
        tree->shapes[0][m] = g->shape[m] - 1;
        more = more || tree->shapes[0][m] > 1;
    }
    while (more) {
        more = 0;
        for (int m = 0; m < n; m++) {
            tree->shapes[level + 1][m] = (tree->shapes[level][m] + 1) / 2;
            more = more || tree->shapes[level + 1][m] > 1;
        }
        level++;
    }
    tree->num_levels = level;
    tree->start[0] = 0;
    tree->start[1] = 0;
    for (int l = 1; l <= tree->num_levels; l++) {
        int64_t count = 1;
        if (l < tree->num_levels) {
            for (int m = 0; m < n; m++) {
                count *= tree->shapes[l + 1][m];
            }
            count <<= n;
        }
        tree->start[l + 1] = tree->start[l] + count;
    }
    int64_t num_slots = tree->start[tree->num_levels + 1];
    if (num_slots == 0) {
        return SPART_OK;
    }
    tree->boxes = spart_alloc(allocator, (size_t)num_slots * 2 * (size_t)n, sizeof(double));
    if (tree->boxes == NULL) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    for (int l = 1; l <= tree->num_levels; l++) {
        int64_t first = tree->start[l];
        int64_t count = tree->start[l + 1] - first;
#pragma omp parallel for num_threads(parallel > 1 ? parallel : 1) if (parallel > 1) schedule(static)
        for (int64_t k = 0; k < count; k++) {
            double *lower = tree->boxes + (first + k) * 2 * n;
            box_of_slot(g, tree, l, k, lower, lower + n);
        }
    }
    return SPART_OK;
}

/* Whether the point is in the box of slot `slot`, boundary included. */
static int in_box(const box_tree *tree, int64_t slot, const double *point)
{
    const double *lower = box_lower(tree, slot);
    const double *upper = box_upper(tree, slot);
    for (int c = 0; c < tree->num_axes; c++) {
        if (!(lower[c] <= point[c] && point[c] <= upper[c])) {
            return 0;
        }
    }
    return 1;
}

/* The bounding box of the cell whose first corner is vertex `base`. */
static void cell_box(const grid *g, int64_t base, int c, double *low, double *high)
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
 * cell_tolerance); xi is left where Newton's method stopped. */
static int in_cell(const grid *g, const double *point, int64_t *cell, double *xi)
{
    int n = g->num_axes;
    int64_t base = 0;
    for (int m = 0; m < n; m++) {
        base += cell[m] * g->stride[m];
    }
    for (int c = 0; c < n; c++) {
        double low, high;
        cell_box(g, base, c, &low, &high);
        if (!(low <= point[c] && point[c] <= high)) {
            return 0;
        }
    }
    for (int m = 0; m < n; m++) {
        xi[m] = 0.5;
    }
    if (!spart_multilinear_newton(g, point, 0, cell, xi)) {
        return 0;
    }
    for (int m = 0; m < n; m++) {
        if (!(-cell_tolerance <= xi[m] && xi[m] <= 1 + cell_tolerance)) {
            return 0;
        }
    }
    return 1;
}

/* The stack of a depth-first search, one per thread: for each block
 * waiting, its level, its slot and its index along each axis (kept per
 * axis, so that no division is needed to find its children). */
typedef struct search_stack {
    int level[STACK_CAPACITY];
    int64_t slot[STACK_CAPACITY];
    int64_t block[STACK_CAPACITY][MAX_AXES];
} search_stack;

static void stack_push(search_stack *stack, int64_t *size, int n, int level, int64_t slot,
                       const int64_t *block)
{
    stack->level[*size] = level;
    stack->slot[*size] = slot;
    for (int m = 0; m < n; m++) {
        stack->block[*size][m] = block[m];
    }
    (*size)++;
}

/* Pop the top block into (level, slot, block). */
static void stack_pop(search_stack *stack, int64_t *size, int n, int *level, int64_t *slot,
                      int64_t *block)
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
static int search_cell(const grid *g, const box_tree *tree, const double *point,
                       search_stack *stack, int64_t *cell, double *xi)
{
    int n = g->num_axes;
    int top = tree->num_levels;
    if (top == 0) {
        for (int m = 0; m < n; m++) {
            cell[m] = 0;
        }
        return in_cell(g, point, cell, xi);
    }
    if (!in_box(tree, tree->start[top], point)) {
        return 0;
    }
    const int64_t root[MAX_AXES] = {0, 0, 0};
    int64_t size = 0;
    stack_push(stack, &size, n, top, tree->start[top], root);
    while (size > 0) {
        int level;
        int64_t slot, block[MAX_AXES];
        stack_pop(stack, &size, n, &level, &slot, block);
        const int64_t *below = tree->shapes[level - 1];
        if (level == 1) {
            for (int b = 0; b < g->num_corners; b++) {
                if (child_of_block(n, block, b, below, cell) && in_cell(g, point, cell, xi)) {
                    return 1;
                }
            }
        } else {
            /* pushed in reverse, so that they come off in corner order */
            int64_t first = first_child_slot(tree, level, block);
            for (int b = g->num_corners - 1; b >= 0; b--) {
                if (child_of_block(n, block, b, below, cell) && in_box(tree, first + b, point)) {
                    stack_push(stack, &size, n, level - 1, first + b, cell);
                }
            }
        }
    }
    return 0;
}

/* The distance from value to [low, high], 0 inside. */
static double interval_distance(double low, double high, double value)
{
    if (value < low) {
        return low - value;
    }
    if (value > high) {
        return value - high;
    }
    return 0.0;
}

static double box_distance_squared(const box_tree *tree, int64_t slot, const double *point)
{
    const double *lower = box_lower(tree, slot);
    const double *upper = box_upper(tree, slot);
    double result = 0.0;
    for (int c = 0; c < tree->num_axes; c++) {
        double d = interval_distance(lower[c], upper[c], point[c]);
        result += d * d;
    }
    return result;
}

static double cell_distance_squared(const grid *g, int64_t base, const double *point)
{
    double result = 0.0;
    for (int c = 0; c < g->num_axes; c++) {
        double low, high;
        cell_box(g, base, c, &low, &high);
        double d = interval_distance(low, high, point[c]);
        result += d * d;
    }
    return result;
}

/* The cell whose bounding box is nearest the point, by branch and bound
 * with the nearest child first (regridding._curvilinear._nearest): a cell
 * replaces the best so far only when strictly nearer, and among children
 * at equal distance the later corner is searched first, as there. */
static void nearest_cell(const grid *g, const box_tree *tree, const double *point,
                         search_stack *stack, int64_t *nearest)
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
    stack_push(stack, &size, n, top, tree->start[top], root);
    while (size > 0) {
        int level;
        int64_t slot, block[MAX_AXES];
        stack_pop(stack, &size, n, &level, &slot, block);
        if (!(box_distance_squared(tree, slot, point) < best)) {
            continue;
        }
        const int64_t *below = tree->shapes[level - 1];
        if (level == 1) {
            for (int b = 0; b < g->num_corners; b++) {
                if (!child_of_block(n, block, b, below, child)) {
                    continue;
                }
                int64_t base = 0;
                for (int m = 0; m < n; m++) {
                    base += child[m] * g->stride[m];
                }
                double distance = cell_distance_squared(g, base, point);
                if (distance < best) {
                    best = distance;
                    for (int m = 0; m < n; m++) {
                        nearest[m] = child[m];
                    }
                }
            }
        } else {
            int num_children = 0;
            int64_t first = first_child_slot(tree, level, block);
            for (int b = 0; b < g->num_corners; b++) {
                if (!child_of_block(n, block, b, below, child)) {
                    continue;
                }
                double distance = box_distance_squared(tree, first + b, point);
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
                stack_push(stack, &size, n, level - 1, child_slot[j], child_block[j]);
            }
        }
    }
}

/* Locate point p on a curvilinear grid (regridding._curvilinear.locate).
 * A point in no cell, or with a coordinate that is not finite, gets the
 * first cell and NaN local coordinates, unless `extrapolate` and it is
 * finite: then Newton's method runs across the grid from the nearest cell,
 * and where it does not converge the cell it stopped in keeps NaN xi. */
static void locate_curvilinear(const grid *g, const box_tree *tree, const double *const *points,
                               int64_t p, int extrapolate, search_stack *stack, location *where)
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
    where->inside = finite && search_cell(g, tree, point, stack, where->cell, where->xi);
    if (where->inside) {
        return;
    }
    if (finite && extrapolate) {
        nearest_cell(g, tree, point, stack, where->cell);
        for (int m = 0; m < n; m++) {
            where->xi[m] = 0.5;
        }
        if (!spart_multilinear_newton(g, point, 1, where->cell, where->xi)) {
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

static int64_t weights_curvilinear(const grid *g, const box_tree *tree, int64_t num_points,
                                   const double *const *points, const double *weights_input,
                                   int nan_outside, int extrapolate, int parallel,
                                   int64_t *indices_input, int64_t *indices_output, double *values)
{
    int64_t outside = 0;
#pragma omp parallel num_threads(parallel > 1 ? parallel : 1) if (parallel > 1) reduction(+ : outside)
    {
        search_stack stack;
#pragma omp for schedule(dynamic, POINTS_PER_CHUNK)
        for (int64_t p = 0; p < num_points; p++) {
            location where;
            locate_curvilinear(g, tree, points, p, extrapolate, &stack, &where);
            outside += !where.inside;
            write_point_weights(g, &where, weights_input, nan_outside, p, indices_input,
                                indices_output, values);
        }
    }
    return outside;
}

spart_status spart_multilinear_curvilinear(const grid *g, const spart_allocator *allocator,
                                           int64_t num_points, const double *const *points,
                                           const double *weights_input, int nan_outside,
                                           int extrapolate, int parallel, int64_t *indices_input,
                                           int64_t *indices_output, double *values,
                                           int64_t *num_outside)
{
    box_tree tree;
    spart_status status = box_tree_build(g, allocator, parallel, &tree);
    if (status != SPART_OK) {
        return status;
    }
    *num_outside =
        weights_curvilinear(g, &tree, num_points, points, weights_input, nan_outside, extrapolate,
                            parallel, indices_input, indices_output, values);
    box_tree_release(&tree, allocator);
    return SPART_OK;
}
