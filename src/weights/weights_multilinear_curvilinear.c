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
#include "weights/multilinear_curvilinear_math.h"
#include "weights/weights_kernels.h"
#include "weights/weights_multilinear.h"

/* ---- curvilinear grids: the hierarchy of bounding boxes ---------------- */

static void unravel(int64_t index, int n, const int64_t *shape, int64_t *out)
{
    for (int m = n - 1; m >= 0; m--) {
        out[m] = index % shape[m];
        index = index / shape[m];
    }
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
    int64_t first = spart_ml_first_child_slot(tree, level, block);
    box_empty(n, lower, upper);
    for (int b = 0; b < (1 << n); b++) {
        if (!spart_ml_child_of_block(n, block, b, tree->shapes[level - 1], child)) {
            continue;
        }
        const double *child_lower = spart_ml_box_lower(tree, first + b);
        const double *child_upper = spart_ml_box_upper(tree, first + b);
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
        if (!spart_ml_child_of_block(n, parent, (int)(slot & ((1 << n) - 1)), tree->shapes[level],
                                     block)) {
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
            spart_ml_locate_curvilinear(g, tree, points, p, extrapolate, &stack, &where);
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

spart_status spart_host_multilinear_box_tree(int ndim, const int64_t *shape,
                                             const double *const *coordinates_input,
                                             const spart_allocator *allocator, int parallel,
                                             struct box_tree *tree, int64_t *num_boxes)
{
    grid g;
    g.num_axes = ndim;
    g.num_corners = 1 << ndim;
    int64_t stride = 1;
    for (int m = ndim - 1; m >= 0; m--) {
        g.shape[m] = shape[m];
        g.stride[m] = stride;
        stride *= shape[m];
    }
    for (int m = 0; m < MAX_AXES; m++) {
        g.vertices[m] = m < ndim ? coordinates_input[m] : NULL;
    }
    for (int b = 0; b < g.num_corners; b++) {
        g.offset[b] = 0;
        for (int m = 0; m < ndim; m++) {
            g.offset[b] += ((b >> m) & 1) ? g.stride[m] : 0;
        }
    }
    spart_status status = box_tree_build(&g, allocator, parallel, tree);
    *num_boxes = status == SPART_OK ? tree->start[tree->num_levels + 1] : 0;
    return status;
}
