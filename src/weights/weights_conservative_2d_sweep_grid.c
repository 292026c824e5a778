/*
 * src/weights/weights_conservative_2d_sweep_grid.c: the static grid of the
 * Ramshaw sweep (src/weights/weights_conservative_2d_sweep.c): its
 * vertices interleaved, its boundary as a closed polygon, a bounding-box
 * tree over each boundary face, and the locating of a point in its cells
 * as the reference locates it (a secant method on the bilinear map of
 * fractional indices, brute force behind it).
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "weights/geometry_2d.h"
#include "weights/weights_conservative_2d_sweep.h"

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
int64_t spart_sweep_face_box_count(int64_t num_x, int64_t num_y)
{
    return 16 * (power_of_two_at_least(num_x - 1) + power_of_two_at_least(num_y - 1));
}

/* Make `grid` describe the vertices (x, y), using the scratch arrays
 * xy (2 num_x num_y), boundary (2 (2 (num_x - 1) + 2 (num_y - 1))) and
 * boxes (spart_sweep_face_box_count). */
void spart_sweep_set_up_static_grid(static_grid *grid, const double *x, const double *y,
                                    int64_t num_x, int64_t num_y, double *xy, double *boundary,
                                    double *boxes)
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
void spart_sweep_locate_point(const static_grid *grid, double px, double py, int64_t *i_cell,
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
