/*
 * src/weights/weights_multilinear.c: the weights that interpolate values sampled
 * on the vertices of a logically-rectangular grid of 1 to 3 axes at a set
 * of points, as regridding 3.6.0's weights(..., method="multilinear").
 *
 * Each point is found in a cell of the grid, given by its first corner and
 * the local coordinates xi of the point in the cell (the unit cube), and
 * each of the cell's 2^N corners gets the weight prod_m (xi_m or 1 - xi_m):
 * xi_m where bit m of the corner's number is set (the corner is one vertex
 * further along axis m), 1 - xi_m where it is not.
 *
 * Two locators, chosen as regridding chooses them:
 * - rectilinear: every coordinate varies along exactly one axis, a
 *   different one for each, strictly monotonically. A binary search per
 *   axis then gives the cell and xi exactly, and a point outside the grid
 *   is extrapolated from the edge cell along each axis on its own.
 * - curvilinear: anything else. A hierarchy of bounding boxes (level one:
 *   blocks of 2^N cells; each level above: blocks of 2^N blocks) is
 *   descended depth first, and in each cell whose box holds the point, the
 *   point's local coordinates are found by Newton's method on the
 *   multilinear map. The first cell where they are inside the unit cube
 *   (to 1e-9) holds the point. A point in no cell is extrapolated by
 *   Newton's method across the whole grid, with the edge cells continued
 *   beyond it, from the cell whose box is nearest; NaN where that fails.
 * Both are ports of regridding's numba functions (not fastmath) with the
 * same floating-point operations in the same order and the same search
 * order, so the results agree bit for bit: on rectilinear grids by
 * construction, on curvilinear ones on every grid tried (the promise there
 * is 1e-12).
 *
 * Memory: the profiles of a rectilinear grid or the boxes of a curvilinear
 * one come from the triples list's allocator and are freed before return.
 * Determinism: each point is independent and writes its own 2^N slots, so
 * the result is the same for any number of threads.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "core/internal.h"
#include "weights/weights_kernels.h"

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

/* A Newton step shorter than this, in units of the local coordinates, has
 * converged (regridding._cells.tolerance). */
static const double newton_tolerance = 1e-13;

/* The rounding error of a position per corner of a cell, as a fraction of
 * the largest term it sums (regridding._cells.rounding). */
static const double position_rounding = 64 * DBL_EPSILON;

/* How far outside the unit cube a point's local coordinates may be for it
 * to count as inside the cell (regridding._curvilinear.tolerance): points on
 * a shared face or on the grid's boundary come out of Newton's method off
 * the face by rounding. */
static const double cell_tolerance = 1e-9;

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

/* Python's max(a, b) for floats: a unless b is larger (a NaN b is
 * ignored, a NaN a kept), as the reference's numba code computes it. */
static double larger(double a, double b)
{
    return b > a ? b : a;
}

static void grid_init(grid *g, int num_axes, const int64_t *shape, const double *const *vertices)
{
    g->num_axes = num_axes;
    g->num_corners = 1 << num_axes;
    g->vertices = vertices;
    int64_t stride = 1;
    for (int m = num_axes - 1; m >= 0; m--) {
        g->shape[m] = shape[m];
        g->stride[m] = stride;
        stride *= shape[m];
    }
    for (int b = 0; b < g->num_corners; b++) {
        g->offset[b] = 0;
        for (int m = 0; m < num_axes; m++) {
            if ((b >> m) & 1) {
                g->offset[b] += g->stride[m];
            }
        }
    }
}

static int64_t grid_num_vertices(const grid *g)
{
    int64_t n = 1;
    for (int m = 0; m < g->num_axes; m++) {
        n *= g->shape[m];
    }
    return n;
}

/* The weight of corner `corner` at local coordinates xi, multiplied up
 * from 1 in axis order as the reference does. */
static double corner_weight(int corner, int num_axes, const double *xi)
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

/* Write point `point`'s 2^N entries into slots point * 2^N ... of the
 * three arrays (which start at the element's first new entry). */
static void write_point_weights(const grid *g, const location *where, const double *weights_input,
                                int nan_outside, int64_t point, int64_t *indices_input,
                                int64_t *indices_output, double *values)
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

/* ---- rectilinear grids ------------------------------------------------- */

typedef struct rectilinear {
    int coordinate[MAX_AXES];  /* which coordinate varies along axis m */
    int descending[MAX_AXES];  /* whether it decreases along axis m */
    double *profile[MAX_AXES]; /* its values along axis m, ascending */
} rectilinear;

static void rectilinear_release(rectilinear *r, const spart_allocator *allocator)
{
    for (int m = 0; m < MAX_AXES; m++) {
        spart_free(allocator, r->profile[m]);
        r->profile[m] = NULL;
    }
}

/* Whether coordinate array c differs anywhere from its value at index 0
 * along axis m (a NaN differs from everything, as with NumPy's !=). */
static int coordinate_varies_along(const grid *g, const double *c, int m)
{
    int64_t inner = g->stride[m]; /* vertices per step along m */
    int64_t outer = grid_num_vertices(g) / (inner * g->shape[m]);
    for (int64_t o = 0; o < outer; o++) {
        const double *first = c + o * g->shape[m] * inner; /* index 0 along m */
        for (int64_t along = 1; along < g->shape[m]; along++) {
            for (int64_t i = 0; i < inner; i++) {
                if (first[along * inner + i] != first[i]) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Whether the grid is rectilinear as regridding's _rectilinear.profiles
 * decides: each coordinate varies along exactly one axis, no two along the
 * same, strictly monotonically. Fills `r` (profiles allocated) when it is.
 * 1: rectilinear, 0: not, -1: out of memory. */
static int rectilinear_profiles(const grid *g, const spart_allocator *allocator, rectilinear *r)
{
    int n_axes = g->num_axes;
    for (int m = 0; m < MAX_AXES; m++) {
        r->coordinate[m] = -1;
        r->descending[m] = 0;
        r->profile[m] = NULL;
    }
    for (int k = 0; k < n_axes; k++) {
        int num_varies = 0;
        int axis = -1;
        for (int m = 0; m < n_axes; m++) {
            if (coordinate_varies_along(g, g->vertices[k], m)) {
                num_varies++;
                axis = m;
            }
        }
        if (num_varies != 1 || r->coordinate[axis] >= 0) {
            return 0;
        }
        r->coordinate[axis] = k;
    }
    for (int m = 0; m < n_axes; m++) {
        const double *c = g->vertices[r->coordinate[m]];
        int64_t n = g->shape[m];
        int all_increasing = 1;
        int all_decreasing = 1;
        for (int64_t i = 0; i + 1 < n; i++) {
            double difference = c[(i + 1) * g->stride[m]] - c[i * g->stride[m]];
            all_increasing = all_increasing && difference > 0;
            all_decreasing = all_decreasing && difference < 0;
        }
        if (!all_increasing && !all_decreasing) {
            return 0;
        }
        r->descending[m] = all_decreasing;
    }
    for (int m = 0; m < n_axes; m++) {
        const double *c = g->vertices[r->coordinate[m]];
        int64_t n = g->shape[m];
        r->profile[m] = spart_alloc(allocator, (size_t)n, sizeof(double));
        if (r->profile[m] == NULL) {
            rectilinear_release(r, allocator);
            return -1;
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t from = r->descending[m] ? n - 1 - i : i;
            r->profile[m][i] = c[from * g->stride[m]];
        }
    }
    return 1;
}

/* numpy.searchsorted(values, value, side="left") on n ascending values:
 * the first index whose value is not less than `value`, n for NaN (NumPy
 * sorts NaN after everything). */
static int64_t search_sorted_left(const double *values, int64_t n, double value)
{
    if (isnan(value)) {
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

/* Locate point p on a rectilinear grid (regridding._rectilinear.locate).
 * A coordinate that is not finite is outside, with local coordinate NaN. */
static void locate_rectilinear(const grid *g, const rectilinear *r, const double *const *points,
                               int64_t p, location *where)
{
    where->inside = 1;
    for (int m = 0; m < g->num_axes; m++) {
        const double *values = r->profile[m];
        int64_t n = g->shape[m];
        double value = points[r->coordinate[m]][p];
        if (!(values[0] <= value && value <= values[n - 1])) {
            where->inside = 0;
        }
        int64_t j = search_sorted_left(values, n, value) - 1;
        if (j < 0) {
            j = 0;
        } else if (j > n - 2) {
            j = n - 2;
        }
        double fraction = (value - values[j]) / (values[j + 1] - values[j]);
        if (!isfinite(value)) {
            fraction = NAN;
        }
        if (r->descending[m]) {
            j = n - 2 - j;
            fraction = 1 - fraction;
        }
        where->cell[m] = j;
        where->xi[m] = fraction;
    }
}

/* ---- the multilinear map of one cell (regridding._cells) --------------- */

/* The position at local coordinates xi of the cell whose first corner is
 * vertex `base`, measured from that corner (so that its rounding error is
 * relative to the cell's size, not its distance from the origin). */
static void cell_position(const grid *g, int64_t base, const double *xi, double *x)
{
    int n = g->num_axes;
    for (int k = 0; k < n; k++) {
        x[k] = 0;
    }
    for (int b = 0; b < g->num_corners; b++) {
        int64_t index = base + g->offset[b];
        double weight = corner_weight(b, n, xi);
        for (int k = 0; k < n; k++) {
            x[k] += weight * (g->vertices[k][index] - g->vertices[k][base]);
        }
    }
}

/* The position as cell_position, and its derivative jacobian[k][m] of
 * coordinate k with respect to xi_m. */
static void cell_evaluate(const grid *g, int64_t base, const double *xi, double *x,
                          double jacobian[MAX_AXES][MAX_AXES])
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
        double weight = corner_weight(b, n, xi);
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
static void cell_target(const grid *g, int64_t base, const double *point, double *goal)
{
    for (int k = 0; k < g->num_axes; k++) {
        goal[k] = point[k] - g->vertices[k][base];
    }
}

static double distance_squared(int n, const double *x, const double *y)
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
static int solve(int n, double a[MAX_AXES][MAX_AXES], double *b, double *x)
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
static int64_t move_to_cell(const grid *g, int clamp, int64_t *cell, double *xi)
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
 * position_rounding per corner of its largest term (the weights' magnitude
 * times the cell's extent, or the goal's distance from the first corner). */
static double rounding_floor(const grid *g, int64_t base, const double *xi, const double *goal)
{
    int n = g->num_axes;
    double total = 1.0;
    for (int m = 0; m < n; m++) {
        total *= fabs(xi[m]) + fabs(1 - xi[m]);
    }
    double factor = (double)g->num_corners * position_rounding;
    double result = 0.0;
    for (int k = 0; k < n; k++) {
        double extent = 0.0;
        for (int b = 0; b < g->num_corners; b++) {
            extent =
                larger(extent, fabs(g->vertices[k][base + g->offset[b]] - g->vertices[k][base]));
        }
        double error = factor * (total * extent + fabs(goal[k]));
        result += error * error;
    }
    return result;
}

/* Newton's method for the local coordinates of `point`, from (cell, xi),
 * as regridding._cells.newton: each step is halved until it brings the
 * position closer; converged once a step is below newton_tolerance or the
 * distance is down to rounding_floor. Without `clamp` the iterate stays in
 * its cell (continued beyond it); with it, it moves between cells, clamped
 * to the grid. Returns whether it converged; (cell, xi) is where it
 * stopped either way. */
static int newton(const grid *g, const double *point, int clamp, int64_t *cell, double *xi)
{
    int n = g->num_axes;
    double jacobian[MAX_AXES][MAX_AXES];
    double matrix[MAX_AXES][MAX_AXES];
    double x[MAX_AXES], residual[MAX_AXES], step[MAX_AXES], goal[MAX_AXES];
    double xi_trial[MAX_AXES], x_trial[MAX_AXES], goal_trial[MAX_AXES];
    int64_t cell_trial[MAX_AXES];

    int64_t base = move_to_cell(g, clamp, cell, xi);
    cell_target(g, base, point, goal);
    cell_evaluate(g, base, xi, x, jacobian);
    double error = distance_squared(n, x, goal);

    for (int iteration = 0; iteration < NEWTON_ITERATIONS; iteration++) {
        if (error <= rounding_floor(g, base, xi, goal)) {
            return 1;
        }
        for (int k = 0; k < n; k++) {
            for (int m = 0; m < n; m++) {
                matrix[k][m] = jacobian[k][m];
            }
            residual[k] = x[k] - goal[k];
        }
        if (!solve(n, matrix, residual, step)) {
            return 0;
        }
        double size = 0.0;
        double scale = 1.0;
        for (int m = 0; m < n; m++) {
            size = larger(size, fabs(step[m]));
            scale = larger(scale, fabs(xi[m]));
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
            base_trial = move_to_cell(g, clamp, cell_trial, xi_trial);
            cell_target(g, base_trial, point, goal_trial);
            cell_position(g, base_trial, xi_trial, x_trial);
            if (distance_squared(n, x_trial, goal_trial) < error) {
                accepted = 1;
                break;
            }
            fraction = fraction / 2;
        }
        if (!accepted) {
            /* no point along the step is closer: the step is down to the
             * rounding of the position, or the continuation of the cell
             * stops short of the point */
            return size <= newton_tolerance * scale;
        }
        for (int m = 0; m < n; m++) {
            cell[m] = cell_trial[m];
            xi[m] = xi_trial[m];
        }
        base = base_trial;
        if (fraction * size <= newton_tolerance * scale) {
            return 1;
        }
        cell_target(g, base, point, goal);
        cell_evaluate(g, base, xi, x, jacobian);
        error = distance_squared(n, x, goal);
    }
    return 0;
}

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
    if (!newton(g, point, 0, cell, xi)) {
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
        if (!newton(g, point, 1, where->cell, where->xi)) {
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

/* ---- the kernel ------------------------------------------------------- */

static int64_t weights_rectilinear(const grid *g, const rectilinear *r, int64_t num_points,
                                   const double *const *points, const double *weights_input,
                                   int nan_outside, int parallel, int64_t *indices_input,
                                   int64_t *indices_output, double *values)
{
    int64_t outside = 0;
#pragma omp parallel for num_threads(parallel > 1 ? parallel : 1) if (parallel > 1) schedule(static) reduction(+ : outside)
    for (int64_t p = 0; p < num_points; p++) {
        location where;
        locate_rectilinear(g, r, points, p, &where);
        outside += !where.inside;
        write_point_weights(g, &where, weights_input, nan_outside, p, indices_input, indices_output,
                            values);
    }
    return outside;
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

spart_status spart_host_weights_multilinear(int ndim, const int64_t *shape,
                                            const double *const *coordinates_input,
                                            int64_t num_points, const double *const *points,
                                            const double *weights_input, spart_bounds bounds,
                                            int parallel, spart_triples *triples,
                                            int64_t *num_outside)
{
    *num_outside = 0;
    if (ndim < 1 || ndim > MAX_AXES || num_points < 0) {
        return SPART_ERROR_INVALID_ARGUMENT;
    }
    for (int m = 0; m < ndim; m++) {
        if (shape[m] < 2) {
            return SPART_ERROR_INVALID_ARGUMENT;
        }
    }
    if (num_points == 0) {
        return SPART_OK;
    }
    grid g;
    grid_init(&g, ndim, shape, coordinates_input);
    int64_t num_corners = g.num_corners;
    if (num_points > (INT64_MAX - triples->count) / num_corners) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t first = triples->count;
    int64_t num_entries = num_points * num_corners;
    if (spart_triples_reserve(triples, first + num_entries) != 0) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t *indices_input = triples->indices_input + first;
    int64_t *indices_output = triples->indices_output + first;
    double *values = triples->values + first;
    int nan_outside = bounds == SPART_BOUNDS_NAN;

    rectilinear r;
    int is_rectilinear = rectilinear_profiles(&g, triples->allocator, &r);
    if (is_rectilinear < 0) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    if (is_rectilinear) {
        *num_outside = weights_rectilinear(&g, &r, num_points, points, weights_input, nan_outside,
                                           parallel, indices_input, indices_output, values);
        rectilinear_release(&r, triples->allocator);
    } else {
        box_tree tree;
        spart_status status = box_tree_build(&g, triples->allocator, parallel, &tree);
        if (status != SPART_OK) {
            return status;
        }
        /* regridding extrapolates only for bounds="extrapolate"; "raise"
         * fails before the weights are seen, and this kernel's contract
         * asks for the extrapolated ones then. */
        int extrapolate = bounds != SPART_BOUNDS_NAN;
        *num_outside =
            weights_curvilinear(&g, &tree, num_points, points, weights_input, nan_outside,
                                extrapolate, parallel, indices_input, indices_output, values);
        box_tree_release(&tree, triples->allocator);
    }
    triples->count = first + num_entries;
    return SPART_OK;
}
