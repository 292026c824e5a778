/*
 * src/weights/weights_conservative_2d_sweep.c: first-order conservative weights
 * between two 2-D logically rectangular grids by Ramshaw's (1985) edge
 * sweep, as regridding 3.6.0 (_weights_conservative_2d/_sweep/_sweep.py).
 *
 * The area of the overlap of two cells is the contour integral
 * 1/2 (x dy - y dx) around it, and its contour is made of the pieces of
 * each cell's edges that lie in the other cell. So every grid line of one
 * grid (the sweep grid) is walked through the cells of the other (the
 * static grid), and each piece p1 -> p2 of it inside static cell S adds
 * the signed triangle area (origin, p1, p2) to the pairs of S with the two
 * sweep cells either side of the line. Divided by the input cell's area,
 * the sums over all pieces are the fractions of each input cell in each
 * output cell.
 *
 * The order of the work is the reference's, since it fixes the order of
 * the fragments and so the bits of their sums: pass A sweeps the output
 * grid through the input grid, pass B the input grid through the output
 * grid; in each pass the lines j = const (walked along axis 0) come
 * first, then the lines i = const. Lines may be walked in parallel, each
 * into its own list; the lists are joined in line order, so the result
 * does not depend on the thread count.
 *
 * One deliberate difference: where a line passes exactly through a vertex
 * of the other grid, the reference can step around that vertex from cell
 * to cell forever. A walk that makes no progress for more steps than it
 * has distinct states must be in such a cycle (it is deterministic), so
 * spart stops there with SPART_ERROR_INVALID_ARGUMENT instead of hanging.
 * Wherever the reference finishes, the result is the same.
 *
 * Known reference behaviour kept as it is: when the two grids have
 * opposite orientations (one mirrored), individual weights are wrong
 * although each input cell's total is right (regridding.md section 5,
 * item 2); degenerate grids (coincident vertices, collinear edges) give
 * wrong weights unless perturbed.
 */
#include <math.h>
#include <string.h>

#include "weights/geometry_2d.h"
#include "core/internal.h"
#include "weights/weights_kernels.h"

/* "No edge" and "no cell" (the reference's sys.maxsize). */
#define NONE (-1)

/* The corners of a cell, (0,0), (1,0), (1,1), (0,1): edge e runs from
 * corner e - 1 to corner e, so edge 0 is the left (i = a), 1 the bottom
 * (j = b), 2 the right (i = a + 1) and 3 the top (j = b + 1) edge. */
static const int corner_offset_i[4] = {0, 1, 1, 0};
static const int corner_offset_j[4] = {0, 0, 1, 1};

/* The neighbouring cell across each edge. */
static const int neighbour_offset_i[4] = {-1, 0, 1, 0};
static const int neighbour_offset_j[4] = {0, -1, 0, 1};

/* ---- the static grid ---------------------------------------------------- */

/* A bounding-box tree over the edges of one face of the static grid's
 * boundary, so that a segment outside the grid is tested only against the
 * boundary edges whose bounding boxes touch its own. The reference tests
 * every boundary edge, but an edge whose box does not touch the segment's
 * never counts as a crossing there, so skipping it changes nothing. The
 * tree is complete, in heap order: node 1 is the root, node k has children
 * 2k and 2k + 1, and leaf num_leaves + m is edge m. */
typedef struct boundary_face {
    int64_t num_edges;
    int64_t num_leaves;  /* a power of two >= num_edges */
    const double *first; /* vertex m of the face is first[m * stride] (x, then y) */
    int64_t stride;
    double *boxes; /* 4 per node: x low, x high, y low, y high */
    /* the static cell next to edge m is (fixed, m) when the face runs along
     * axis 1 (i = const), (m, fixed) when it runs along axis 0 */
    int runs_along_axis_1;
    int64_t fixed;
} boundary_face;

typedef struct static_grid {
    const double *x;
    const double *y;
    double *xy; /* (x, y) of vertex (i, j) at xy[2 * (i * num_y + j)] */
    int64_t num_x;
    int64_t num_y;
    int64_t num_cells_x;
    int64_t num_cells_y;
    double x_low, x_high, y_low, y_high; /* the bounding box */
    double *boundary_x;                  /* the boundary as a closed polygon */
    double *boundary_y;
    int64_t num_boundary;
    /* faces in the reference's order: i = 0, i = last, j = 0, j = last */
    boundary_face faces[4];
} static_grid;

static double static_x(const static_grid *grid, int64_t i, int64_t j)
{
    return grid->xy[2 * (i * grid->num_y + j)];
}

static double static_y(const static_grid *grid, int64_t i, int64_t j)
{
    return grid->xy[2 * (i * grid->num_y + j) + 1];
}

static int cell_in_bounds(const static_grid *grid, int64_t i, int64_t j)
{
    return i >= 0 && j >= 0 && i < grid->num_cells_x && j < grid->num_cells_y;
}

/* The boundary vertices in the reference's order: along j = 0 with i
 * rising, along i = last with j rising, along j = last with i falling,
 * along i = 0 with j falling. */
static void fill_boundary_polygon(static_grid *grid)
{
    int64_t nx = grid->num_x;
    int64_t ny = grid->num_y;
    int64_t n = 0;
    for (int64_t i = 0; i < nx - 1; i++, n++) {
        grid->boundary_x[n] = grid->x[i * ny];
        grid->boundary_y[n] = grid->y[i * ny];
    }
    for (int64_t j = 0; j < ny - 1; j++, n++) {
        grid->boundary_x[n] = grid->x[(nx - 1) * ny + j];
        grid->boundary_y[n] = grid->y[(nx - 1) * ny + j];
    }
    for (int64_t i = nx - 1; i > 0; i--, n++) {
        grid->boundary_x[n] = grid->x[i * ny + ny - 1];
        grid->boundary_y[n] = grid->y[i * ny + ny - 1];
    }
    for (int64_t j = ny - 1; j > 0; j--, n++) {
        grid->boundary_x[n] = grid->x[j];
        grid->boundary_y[n] = grid->y[j];
    }
}

static int64_t power_of_two_at_least(int64_t n)
{
    int64_t p = 1;
    while (p < n) {
        p *= 2;
    }
    return p;
}

/* Fill the boxes of a face whose `first`, `stride` and `num_edges` are set;
 * `boxes` has room for 8 * num_leaves doubles. */
static void build_face_tree(boundary_face *face)
{
    int64_t leaves = face->num_leaves;
    for (int64_t m = 0; m < leaves; m++) {
        double *box = face->boxes + 4 * (leaves + m);
        if (m >= face->num_edges) {
            /* an empty box, which touches nothing */
            box[0] = (double)INFINITY;
            box[1] = -(double)INFINITY;
            box[2] = (double)INFINITY;
            box[3] = -(double)INFINITY;
            continue;
        }
        const double *p = face->first + m * face->stride;
        const double *q = p + face->stride;
        box[0] = fmin(p[0], q[0]);
        box[1] = fmax(p[0], q[0]);
        box[2] = fmin(p[1], q[1]);
        box[3] = fmax(p[1], q[1]);
    }
    for (int64_t k = leaves - 1; k >= 1; k--) {
        double *box = face->boxes + 4 * k;
        const double *left = face->boxes + 4 * (2 * k);
        const double *right = face->boxes + 4 * (2 * k + 1);
        box[0] = fmin(left[0], right[0]);
        box[1] = fmax(left[1], right[1]);
        box[2] = fmin(left[2], right[2]);
        box[3] = fmax(left[3], right[3]);
    }
}

static void set_up_faces(static_grid *grid, double *boxes)
{
    int64_t nx = grid->num_x;
    int64_t ny = grid->num_y;
    for (int f = 0; f < 4; f++) {
        boundary_face *face = &grid->faces[f];
        int high = f % 2; /* the reference: low face, then high face */
        face->runs_along_axis_1 = f < 2;
        if (face->runs_along_axis_1) {
            int64_t i = high ? nx - 1 : 0;
            face->num_edges = ny - 1;
            face->first = grid->xy + 2 * (i * ny);
            face->stride = 2;
            face->fixed = high ? grid->num_cells_x - 1 : 0;
        } else {
            int64_t j = high ? ny - 1 : 0;
            face->num_edges = nx - 1;
            face->first = grid->xy + 2 * j;
            face->stride = 2 * ny;
            face->fixed = high ? grid->num_cells_y - 1 : 0;
        }
        face->num_leaves = power_of_two_at_least(face->num_edges);
        face->boxes = boxes;
        boxes += 8 * face->num_leaves;
        build_face_tree(face);
    }
}

/* Doubles needed by set_up_faces for a grid of num_x by num_y vertices. */
static int64_t face_box_count(int64_t num_x, int64_t num_y)
{
    return 16 * (power_of_two_at_least(num_x - 1) + power_of_two_at_least(num_y - 1));
}

/* Make `grid` describe the vertices (x, y), using the scratch arrays
 * xy (2 num_x num_y), boundary (2 (2 (num_x - 1) + 2 (num_y - 1))) and
 * boxes (face_box_count). */
static void set_up_static_grid(static_grid *grid, const double *x, const double *y, int64_t num_x,
                               int64_t num_y, double *xy, double *boundary, double *boxes)
{
    grid->x = x;
    grid->y = y;
    grid->xy = xy;
    grid->num_x = num_x;
    grid->num_y = num_y;
    grid->num_cells_x = num_x - 1;
    grid->num_cells_y = num_y - 1;
    int64_t n = num_x * num_y;
    grid->x_low = x[0];
    grid->x_high = x[0];
    grid->y_low = y[0];
    grid->y_high = y[0];
    for (int64_t k = 0; k < n; k++) {
        xy[2 * k] = x[k];
        xy[2 * k + 1] = y[k];
        grid->x_low = fmin(grid->x_low, x[k]);
        grid->x_high = fmax(grid->x_high, x[k]);
        grid->y_low = fmin(grid->y_low, y[k]);
        grid->y_high = fmax(grid->y_high, y[k]);
    }
    grid->num_boundary = 2 * (num_x - 1) + 2 * (num_y - 1);
    grid->boundary_x = boundary;
    grid->boundary_y = boundary + grid->num_boundary;
    fill_boundary_polygon(grid);
    set_up_faces(grid, boxes);
}

/* ---- finding the cell of the static grid that holds a point --------------- */

/* floor(v) as an index, as numba converts it on x86: NaN, infinities and
 * values beyond int64 become INT64_MIN. Only iterates gone astray reach
 * those, and then any index outside the grid would do as well. */
static int64_t floor_index(double v)
{
    double f = floor(v);
    if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) {
        return INT64_MIN;
    }
    return (int64_t)f;
}

/* The reference's bilinear interpolation of a[num_x][num_y] at fractional
 * indices (i, j), its base cell clamped into the grid (so it extrapolates). */
static double bilinear(const double *a, int64_t num_x, int64_t num_y, double i, double j)
{
    int64_t i0 = floor_index(i);
    int64_t j0 = floor_index(j);
    i0 = i0 < 0 ? 0 : (i0 > num_x - 2 ? num_x - 2 : i0);
    j0 = j0 < 0 ? 0 : (j0 > num_y - 2 ? num_y - 2 : j0);
    double a00 = a[i0 * num_y + j0];
    double a01 = a[i0 * num_y + j0 + 1];
    double a10 = a[(i0 + 1) * num_y + j0];
    double a11 = a[(i0 + 1) * num_y + j0 + 1];
    double di = i - (double)i0;
    double dj = j - (double)j0;
    double w00 = (1 - di) * (1 - dj);
    double w01 = (1 - di) * dj;
    double w10 = di * (1 - dj);
    double w11 = di * dj;
    return (a00 * w00) + (a01 * w01) + (a10 * w10) + (a11 * w11);
}

static int cell_holds_point(const static_grid *grid, int64_t i, int64_t j, double px, double py)
{
    double corners_x[4];
    double corners_y[4];
    for (int c = 0; c < 4; c++) {
        corners_x[c] = static_x(grid, i + corner_offset_i[c], j + corner_offset_j[c]);
        corners_y[c] = static_y(grid, i + corner_offset_i[c], j + corner_offset_j[c]);
    }
    return spart_point_in_polygon(px, py, corners_x, corners_y, 4);
}

/* The first cell, i outer and j inner, that holds the point; NONE if none. */
static void locate_brute(const static_grid *grid, double px, double py, int64_t *i, int64_t *j)
{
    for (int64_t a = 0; a < grid->num_cells_x; a++) {
        for (int64_t b = 0; b < grid->num_cells_y; b++) {
            if (cell_holds_point(grid, a, b, px, py)) {
                *i = a;
                *j = b;
                return;
            }
        }
    }
    *i = NONE;
    *j = NONE;
}

/* The first cell holding the point among the (up to) 3 x 3 around
 * (i0, j0), else the brute-force answer: the same cell as locate_brute,
 * since a point on a shared face also lies in the lower neighbour. */
static void locate_near(const static_grid *grid, double px, double py, int64_t i0, int64_t j0,
                        int64_t *i, int64_t *j)
{
    int64_t a_low = i0 > 0 ? i0 - 1 : 0;
    int64_t a_high = i0 < grid->num_cells_x - 2 ? i0 + 2 : grid->num_cells_x;
    int64_t b_low = j0 > 0 ? j0 - 1 : 0;
    int64_t b_high = j0 < grid->num_cells_y - 2 ? j0 + 2 : grid->num_cells_y;
    for (int64_t a = a_low; a < a_high; a++) {
        for (int64_t b = b_low; b < b_high; b++) {
            if (cell_holds_point(grid, a, b, px, py)) {
                *i = a;
                *j = b;
                return;
            }
        }
    }
    locate_brute(grid, px, py, i, j);
}

/* The cell holding the point, by the reference's secant locator: Newton's
 * method on the bilinear map from fractional indices to coordinates, from
 * the middle of the grid, with a forward-difference Jacobian; whenever it
 * does not settle in a cell holding the point, brute force. */
static void locate_point(const static_grid *grid, double px, double py, int64_t *i_cell,
                         int64_t *j_cell)
{
    const double h = 1e-3;
    const double *x = grid->x;
    const double *y = grid->y;
    int64_t nx = grid->num_x;
    int64_t ny = grid->num_y;
    double i = (double)nx / 2;
    double j = (double)ny / 2;
    for (int iteration = 0; iteration < 100; iteration++) {
        double x_at = bilinear(x, nx, ny, i, j);
        double y_at = bilinear(y, nx, ny, i, j);
        int64_t i0 = floor_index(i);
        int64_t j0 = floor_index(j);
        double error_x = x_at - px;
        double error_y = y_at - py;
        if (cell_in_bounds(grid, i0, j0) && cell_holds_point(grid, i0, j0, px, py)) {
            locate_near(grid, px, py, i0, j0, i_cell, j_cell);
            return;
        }
        double dx_di = (bilinear(x, nx, ny, i + h, j) - x_at) / h;
        double dx_dj = (bilinear(x, nx, ny, i, j + h) - x_at) / h;
        double dy_di = (bilinear(y, nx, ny, i + h, j) - y_at) / h;
        double dy_dj = (bilinear(y, nx, ny, i, j + h) - y_at) / h;
        double determinant = dx_di * dy_dj - dx_dj * dy_di;
        if (determinant == 0) {
            locate_brute(grid, px, py, i_cell, j_cell);
            return;
        }
        double step_i = (+dy_dj * error_x - dx_dj * error_y) / determinant;
        double step_j = (-dy_di * error_x + dx_di * error_y) / determinant;
        i -= step_i;
        j -= step_j;
        if (fabs(step_i) < 1e-10 && fabs(step_j) < 1e-10) {
            locate_near(grid, px, py, floor_index(i), floor_index(j), i_cell, j_cell);
            return;
        }
    }
    locate_brute(grid, px, py, i_cell, j_cell);
}

/* ---- one pass along one axis --------------------------------------------- */

typedef struct sweep_pass {
    const static_grid *grid;
    /* point k of line l at line_xy[2 * (l * num_points + k)] (x, then y) */
    const double *line_xy;
    int64_t num_lines;
    int64_t num_points;
    int along_axis_0;   /* lines j = const of the sweep grid, walked along i */
    int sweep_is_input; /* pass B */
    int64_t num_cells_y_sweep;
    const double *area_input;    /* signed area per input cell */
    const double *weights_input; /* or NULL */
    /* the most steps a walk can take without moving before it must be in a
     * cycle: its distinct states (static cell, edge or cell last crossed,
     * inside or outside) */
    int64_t max_stalled_steps;
    /* a line's list starts with room for 2 fragments per step of a line
     * that crosses about as many static cells as the grid has along its
     * sides, so that most lists never grow */
    int64_t first_capacity;
} sweep_pass;

/* Where a walk along one line stands: the segment p1 -> p2 from point j,
 * the static cell it is in (or outside), and the edge it entered that cell
 * through (or, outside, the boundary cell it just left). */
typedef struct line_walk {
    int64_t line;
    int64_t j;
    double x1, y1, x2, y2;
    int outside;
    int64_t cell_i, cell_j;
    int64_t last;
} line_walk;

/* Append without a function call per fragment; the list grows by doubling
 * through its own reserve. */
static inline int append_fragment(spart_triples *list, int64_t index_input, int64_t index_output,
                                  double value, int64_t first_capacity)
{
    if (list->count == list->capacity) {
        int64_t grown = list->capacity < first_capacity ? first_capacity : 2 * list->capacity;
        if (spart_triples_reserve(list, grown) != 0) {
            return -1;
        }
    }
    int64_t k = list->count++;
    list->indices_input[k] = index_input;
    list->indices_output[k] = index_output;
    list->values[k] = value;
    return 0;
}

/* One fragment: the piece's area, over the input cell's area, for the
 * sweep cell at (line `sweep_line`, point j) and the current static cell. */
static int save_fragment(const sweep_pass *pass, const line_walk *walk, int64_t sweep_line,
                         double area, spart_triples *list)
{
    /* lines along axis 0 are lines j = const: the sweep cell is (j, line) */
    int64_t sweep_cell = pass->along_axis_0 ? walk->j * pass->num_cells_y_sweep + sweep_line
                                            : sweep_line * pass->num_cells_y_sweep + walk->j;
    int64_t static_cell = walk->cell_i * pass->grid->num_cells_y + walk->cell_j;
    int64_t index_input = pass->sweep_is_input ? sweep_cell : static_cell;
    int64_t index_output = pass->sweep_is_input ? static_cell : sweep_cell;
    double weight = area / pass->area_input[index_input];
    if (pass->weights_input != NULL) {
        weight *= pass->weights_input[index_input];
    }
    return append_fragment(list, index_input, index_output, weight, pass->first_capacity);
}

/* The piece p1 -> p2 of line l, inside the current static cell, borders
 * sweep cell l - 1 on its left and sweep cell l on its right. */
static int save_fragments(const sweep_pass *pass, const line_walk *walk, spart_triples *list)
{
    double area = spart_triangle_area_from_origin(walk->x1, walk->y1, walk->x2, walk->y2);
    if (pass->along_axis_0) {
        area = -area;
    }
    if (walk->line >= 1 && save_fragment(pass, walk, walk->line - 1, area, list) != 0) {
        return -1;
    }
    if (walk->line < pass->num_lines - 1 &&
        save_fragment(pass, walk, walk->line, -area, list) != 0) {
        return -1;
    }
    return 0;
}

/* The crossing of the segment with boundary edge m of a face, if it is
 * nearer than *t_nearest and not into the cell just left: then enter. */
static void try_boundary_edge(const static_grid *grid, int face_number, int64_t m, double x1,
                              double y1, double x2, double y2, double *t_nearest, line_walk *walk,
                              int64_t cell_left)
{
    const boundary_face *face = &grid->faces[face_number];
    const double *q1 = face->first + m * face->stride;
    const double *q2 = q1 + face->stride;
    double t;
    double u;
    spart_segment_intersection_parameters(x1, y1, x2, y2, q1[0], q1[1], q2[0], q2[1], &t, &u);
    if (!spart_segments_intersect(t, u) || !(t < *t_nearest)) {
        return;
    }
    int64_t cell_i = face->runs_along_axis_1 ? face->fixed : m;
    int64_t cell_j = face->runs_along_axis_1 ? m : face->fixed;
    if (cell_i * grid->num_cells_y + cell_j == cell_left) {
        return;
    }
    *t_nearest = t;
    walk->cell_i = cell_i;
    walk->cell_j = cell_j;
    walk->x2 = x1 + t * (x2 - x1);
    walk->y2 = y1 + t * (y2 - y1);
    /* the face's number is the entry edge's: left, bottom, right, top */
    walk->last = face_number < 2 ? 2 * face_number : 2 * (face_number - 2) + 1;
    walk->outside = 0;
}

/* Visit, in edge order, the edges of a face whose boxes touch the segment's. */
static void search_face(const static_grid *grid, int face_number, double x1, double y1, double x2,
                        double y2, double *t_nearest, line_walk *walk, int64_t cell_left)
{
    const boundary_face *face = &grid->faces[face_number];
    double x_low = fmin(x1, x2);
    double x_high = fmax(x1, x2);
    double y_low = fmin(y1, y2);
    double y_high = fmax(y1, y2);
    int64_t stack[64];
    int depth = 0;
    stack[depth++] = 1;
    while (depth > 0) {
        int64_t node = stack[--depth];
        const double *box = face->boxes + 4 * node;
        if (!(box[0] <= x_high && x_low <= box[1] && box[2] <= y_high && y_low <= box[3])) {
            continue;
        }
        if (node >= face->num_leaves) {
            try_boundary_edge(grid, face_number, node - face->num_leaves, x1, y1, x2, y2, t_nearest,
                              walk, cell_left);
            continue;
        }
        /* the right child is pushed first so that the left is visited first */
        stack[depth++] = 2 * node + 1;
        stack[depth++] = 2 * node;
    }
}

/* Outside the static grid: enter it at the nearest crossing of the
 * segment with its boundary, other than back into the cell just left;
 * if there is none, go on to the next point. */
static void step_outside(const sweep_pass *pass, line_walk *walk)
{
    int64_t cell_left = walk->last;
    double x1 = walk->x1;
    double y1 = walk->y1;
    double x2 = walk->x2;
    double y2 = walk->y2;
    double t_nearest = (double)INFINITY;
    walk->last = NONE;
    for (int f = 0; f < 4; f++) {
        search_face(pass->grid, f, x1, y1, x2, y2, &t_nearest, walk, cell_left);
    }
    if (walk->outside) {
        walk->j++;
    }
}

/* Inside static cell S: leave it through the first of its edges (in edge
 * order, not the nearest) that the segment crosses, other than the one it
 * came in through, saving the piece inside S; if none, the piece to p2 is
 * saved and the walk goes on to the next point. */
static int step_inside(const sweep_pass *pass, line_walk *walk, spart_triples *list)
{
    const static_grid *grid = pass->grid;
    int64_t next_i = walk->cell_i;
    int64_t next_j = walk->cell_j;
    int64_t next_point = walk->j + 1;
    int64_t next_last = NONE;
    for (int e = 0; e < 4; e++) {
        if (e == walk->last) {
            continue;
        }
        int from = (e + 3) % 4;
        int64_t i3 = walk->cell_i + corner_offset_i[from];
        int64_t j3 = walk->cell_j + corner_offset_j[from];
        int64_t i4 = walk->cell_i + corner_offset_i[e];
        int64_t j4 = walk->cell_j + corner_offset_j[e];
        double t;
        double u;
        spart_segment_intersection_parameters(
            walk->x1, walk->y1, walk->x2, walk->y2, static_x(grid, i3, j3), static_y(grid, i3, j3),
            static_x(grid, i4, j4), static_y(grid, i4, j4), &t, &u);
        if (spart_segments_intersect(t, u)) {
            walk->x2 = walk->x1 + t * (walk->x2 - walk->x1);
            walk->y2 = walk->y1 + t * (walk->y2 - walk->y1);
            next_i = walk->cell_i + neighbour_offset_i[e];
            next_j = walk->cell_j + neighbour_offset_j[e];
            next_point = walk->j;
            next_last = (e + 2) % 4;
            break;
        }
    }
    if (save_fragments(pass, walk, list) != 0) {
        return -1;
    }
    if (!cell_in_bounds(grid, next_i, next_j)) {
        next_last = walk->cell_i * grid->num_cells_y + walk->cell_j;
        walk->outside = 1;
    }
    walk->cell_i = next_i;
    walk->cell_j = next_j;
    walk->j = next_point;
    walk->last = next_last;
    return 0;
}

/* Where line l starts: in the static cell holding its first point, or
 * outside. A point within rounding of the boundary may pass the boundary
 * test and lie in no cell: then it starts outside, as just beyond. */
static void start_line(const sweep_pass *pass, int64_t l, line_walk *walk)
{
    const static_grid *grid = pass->grid;
    const double *first = pass->line_xy + 2 * (l * pass->num_points);
    walk->line = l;
    walk->j = 0;
    walk->x1 = first[0];
    walk->y1 = first[1];
    walk->outside = 1;
    walk->cell_i = NONE;
    walk->cell_j = NONE;
    walk->last = NONE;
    int in_box = grid->x_low <= walk->x1 && walk->x1 <= grid->x_high && grid->y_low <= walk->y1 &&
                 walk->y1 <= grid->y_high;
    if (in_box && spart_point_in_polygon(walk->x1, walk->y1, grid->boundary_x, grid->boundary_y,
                                         grid->num_boundary)) {
        locate_point(grid, walk->x1, walk->y1, &walk->cell_i, &walk->cell_j);
        walk->outside = walk->cell_i == NONE;
    }
}

/* Walk line l through the static grid, appending its fragments to `list`. */
static spart_status walk_line(const sweep_pass *pass, int64_t l, spart_triples *list)
{
    line_walk walk;
    start_line(pass, l, &walk);
    const double *points = pass->line_xy + 2 * (l * pass->num_points);
    int64_t stalled = 0;
    while (walk.j < pass->num_points - 1) {
        int64_t j_before = walk.j;
        walk.x2 = points[2 * (walk.j + 1)];
        walk.y2 = points[2 * (walk.j + 1) + 1];
        if (walk.outside) {
            step_outside(pass, &walk);
        } else if (step_inside(pass, &walk, list) != 0) {
            return SPART_ERROR_OUT_OF_MEMORY;
        }
        if (walk.j == j_before && walk.x2 == walk.x1 && walk.y2 == walk.y1) {
            if (++stalled > pass->max_stalled_steps) {
                return SPART_ERROR_INVALID_ARGUMENT;
            }
        } else {
            stalled = 0;
        }
        walk.x1 = walk.x2;
        walk.y1 = walk.y2;
    }
    return SPART_OK;
}

/* The lists of one pass along one axis, one per sweep line. */
typedef struct line_lists {
    spart_triples *lists;
    int64_t num_lines;
} line_lists;

static void release_line_lists(const spart_allocator *allocator, line_lists *lines)
{
    if (lines->lists != NULL) {
        for (int64_t l = 0; l < lines->num_lines; l++) {
            spart_triples_release(&lines->lists[l]);
        }
    }
    spart_free(allocator, lines->lists);
    lines->lists = NULL;
    lines->num_lines = 0;
}

/* Walk every line of one pass along one axis, each into its own list. */
static spart_status walk_lines(const sweep_pass *pass, int parallel,
                               const spart_allocator *allocator, line_lists *lines)
{
    int64_t n = pass->num_lines;
    lines->lists = spart_alloc(allocator, (size_t)n, sizeof *lines->lists);
    spart_status *statuses = spart_alloc(allocator, (size_t)n, sizeof *statuses);
    if (lines->lists == NULL || statuses == NULL) {
        spart_free(allocator, statuses);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    lines->num_lines = n;
    for (int64_t l = 0; l < n; l++) {
        spart_triples_init(&lines->lists[l], allocator);
    }
#pragma omp parallel for schedule(dynamic)                                                         \
    num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
    for (int64_t l = 0; l < n; l++) {
        /* the walk appends to a list of its own on the stack: neighbouring
         * lists share cache lines, and threads walk neighbouring lines */
        spart_triples list = lines->lists[l];
        statuses[l] = walk_line(pass, l, &list);
        lines->lists[l] = list;
    }
    spart_status status = SPART_OK;
    for (int64_t l = 0; l < n && status == SPART_OK; l++) {
        status = statuses[l];
    }
    spart_free(allocator, statuses);
    return status;
}

/* Copy one line's list into `triples` at `offset` and release it. */
static void move_line(spart_triples *list, spart_triples *triples, int64_t offset)
{
    size_t n = (size_t)list->count;
    if (n > 0) {
        memcpy(triples->indices_input + offset, list->indices_input, n * sizeof(int64_t));
        memcpy(triples->indices_output + offset, list->indices_output, n * sizeof(int64_t));
        memcpy(triples->values + offset, list->values, n * sizeof(double));
    }
    spart_triples_release(list);
}

/* Append every list to `triples`, passes in order and lines in order
 * within each, releasing each list once copied. The destination grows
 * once, to its final size, so each fragment is copied once. */
static spart_status join_line_lists(line_lists *passes, int num_passes, int parallel,
                                    spart_triples *triples)
{
    const spart_allocator *allocator = triples->allocator;
    int64_t num_lists = 0;
    for (int p = 0; p < num_passes; p++) {
        num_lists += passes[p].num_lines;
    }
    int64_t *offsets = spart_alloc(allocator, (size_t)num_lists, sizeof(int64_t));
    if (offsets == NULL) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t total = triples->count;
    int64_t k = 0;
    for (int p = 0; p < num_passes; p++) {
        for (int64_t l = 0; l < passes[p].num_lines; l++, k++) {
            offsets[k] = total;
            total += passes[p].lists[l].count;
        }
    }
    if (spart_triples_reserve(triples, total) != 0) {
        spart_free(allocator, offsets);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t first = 0;
    for (int p = 0; p < num_passes; p++) {
        spart_triples *lists = passes[p].lists;
        const int64_t *pass_offsets = offsets + first;
#pragma omp parallel for schedule(dynamic, 16)                                                     \
    num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
        for (int64_t l = 0; l < passes[p].num_lines; l++) {
            move_line(&lists[l], triples, pass_offsets[l]);
        }
        first += passes[p].num_lines;
    }
    triples->count = total;
    spart_free(allocator, offsets);
    return SPART_OK;
}

/* Lay out the sweep grid's lines along one axis, each line's points
 * consecutive: along axis 0, line l is j = l walked along i. */
static void fill_lines(const double *x, const double *y, int64_t num_x, int64_t num_y,
                       int along_axis_0, double *line_xy)
{
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            int64_t k = along_axis_0 ? j * num_x + i : i * num_y + j;
            line_xy[2 * k] = x[i * num_y + j];
            line_xy[2 * k + 1] = y[i * num_y + j];
        }
    }
}

/* The scratch memory of the whole sweep, sized for the larger grid. */
typedef struct sweep_scratch {
    double *area_input;
    double *static_xy;
    double *boundary;
    double *boxes;
    double *line_xy;
} sweep_scratch;

static void free_scratch(const spart_allocator *allocator, sweep_scratch *scratch)
{
    spart_free(allocator, scratch->area_input);
    spart_free(allocator, scratch->static_xy);
    spart_free(allocator, scratch->boundary);
    spart_free(allocator, scratch->boxes);
    spart_free(allocator, scratch->line_xy);
}

static int64_t max_int64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int allocate_scratch(const spart_allocator *allocator, int64_t num_x_input,
                            int64_t num_y_input, int64_t num_x_output, int64_t num_y_output,
                            sweep_scratch *scratch)
{
    int64_t vertices = max_int64(num_x_input * num_y_input, num_x_output * num_y_output);
    int64_t perimeter = max_int64(num_x_input + num_y_input, num_x_output + num_y_output);
    int64_t boxes = max_int64(face_box_count(num_x_input, num_y_input),
                              face_box_count(num_x_output, num_y_output));
    memset(scratch, 0, sizeof *scratch);
    scratch->area_input =
        spart_alloc(allocator, (size_t)((num_x_input - 1) * (num_y_input - 1)), sizeof(double));
    scratch->static_xy = spart_alloc(allocator, 2 * (size_t)vertices, sizeof(double));
    scratch->boundary = spart_alloc(allocator, 4 * (size_t)perimeter, sizeof(double));
    scratch->boxes = spart_alloc(allocator, (size_t)boxes, sizeof(double));
    scratch->line_xy = spart_alloc(allocator, 2 * (size_t)vertices, sizeof(double));
    if (scratch->area_input == NULL || scratch->static_xy == NULL || scratch->boundary == NULL ||
        scratch->boxes == NULL || scratch->line_xy == NULL) {
        free_scratch(allocator, scratch);
        return -1;
    }
    return 0;
}

spart_status spart_host_weights_conservative_2d_sweep(
    const double *x_input, const double *y_input, int64_t num_x_input, int64_t num_y_input,
    const double *x_output, const double *y_output, int64_t num_x_output, int64_t num_y_output,
    const double *weights_input, int parallel, spart_triples *triples)
{
    const spart_allocator *allocator = triples->allocator;
    int64_t count_before = triples->count;
    sweep_scratch scratch;
    if (allocate_scratch(allocator, num_x_input, num_y_input, num_x_output, num_y_output,
                         &scratch) != 0) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    spart_grid_cell_areas(x_input, y_input, num_x_input, num_y_input, scratch.area_input);

    /* pass A along axis 0 and axis 1, then pass B likewise */
    line_lists passes[4];
    memset(passes, 0, sizeof passes);
    spart_status status = SPART_OK;
    int p = 0;
    for (int sweep_is_input = 0; sweep_is_input <= 1 && status == SPART_OK; sweep_is_input++) {
        /* pass A sweeps the output grid through the input grid, pass B the
         * input grid through the output grid */
        const double *x_sweep = sweep_is_input ? x_input : x_output;
        const double *y_sweep = sweep_is_input ? y_input : y_output;
        int64_t num_x_sweep = sweep_is_input ? num_x_input : num_x_output;
        int64_t num_y_sweep = sweep_is_input ? num_y_input : num_y_output;
        static_grid grid;
        if (sweep_is_input) {
            set_up_static_grid(&grid, x_output, y_output, num_x_output, num_y_output,
                               scratch.static_xy, scratch.boundary, scratch.boxes);
        } else {
            set_up_static_grid(&grid, x_input, y_input, num_x_input, num_y_input, scratch.static_xy,
                               scratch.boundary, scratch.boxes);
        }
        for (int along_axis_0 = 1; along_axis_0 >= 0 && status == SPART_OK; along_axis_0--) {
            fill_lines(x_sweep, y_sweep, num_x_sweep, num_y_sweep, along_axis_0, scratch.line_xy);
            sweep_pass pass;
            pass.grid = &grid;
            pass.line_xy = scratch.line_xy;
            pass.num_lines = along_axis_0 ? num_y_sweep : num_x_sweep;
            pass.num_points = along_axis_0 ? num_x_sweep : num_y_sweep;
            pass.along_axis_0 = along_axis_0;
            pass.sweep_is_input = sweep_is_input;
            pass.num_cells_y_sweep = num_y_sweep - 1;
            pass.area_input = scratch.area_input;
            pass.weights_input = weights_input;
            pass.max_stalled_steps = 6 * grid.num_cells_x * grid.num_cells_y + 6;
            pass.first_capacity = 2 * (pass.num_points + grid.num_cells_x + grid.num_cells_y);
            status = walk_lines(&pass, parallel, allocator, &passes[p++]);
        }
    }
    if (status == SPART_OK) {
        status = join_line_lists(passes, 4, parallel, triples);
    }
    for (int k = 0; k < 4; k++) {
        release_line_lists(allocator, &passes[k]);
    }
    free_scratch(allocator, &scratch);
    if (status != SPART_OK) {
        /* leave the list as it came: no partial results */
        triples->count = count_before;
    }
    return status;
}
