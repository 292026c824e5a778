/*
 * src/weights/weights_conservative_2d_sweep.h: what the two files of the
 * Ramshaw sweep share (src/weights/weights_conservative_2d_sweep.c, the
 * passes along the grid lines; weights_conservative_2d_sweep_grid.c, the
 * static grid and the locating of a point in it): the static grid, its
 * boundary faces and the corners of a cell. Included by those two files
 * alone.
 */
#ifndef SPART_WEIGHTS_CONSERVATIVE_2D_SWEEP_H
#define SPART_WEIGHTS_CONSERVATIVE_2D_SWEEP_H

#include <stdint.h>

/* "No edge" and "no cell" (the reference's sys.maxsize). */
#define NONE (-1)

/* The corners of a cell, (0,0), (1,0), (1,1), (0,1): edge e runs from
 * corner e - 1 to corner e, so edge 0 is the left (i = a), 1 the bottom
 * (j = b), 2 the right (i = a + 1) and 3 the top (j = b + 1) edge. */
static const int corner_offset_i[4] = {0, 1, 1, 0};
static const int corner_offset_j[4] = {0, 0, 1, 1};

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

/* Doubles needed by spart_sweep_set_up_static_grid's face boxes for a grid
 * of num_x by num_y vertices. */
int64_t spart_sweep_face_box_count(int64_t num_x, int64_t num_y);

/* Make `grid` describe the vertices (x, y), using the scratch arrays
 * xy (2 num_x num_y), boundary (2 (2 (num_x - 1) + 2 (num_y - 1))) and
 * boxes (spart_sweep_face_box_count). */
void spart_sweep_set_up_static_grid(static_grid *grid, const double *x, const double *y,
                                    int64_t num_x, int64_t num_y, double *xy, double *boundary,
                                    double *boxes);

/* The cell holding the point (NONE, NONE where none does), by the
 * reference's secant locator with brute force behind it. */
void spart_sweep_locate_point(const static_grid *grid, double px, double py, int64_t *i_cell,
                              int64_t *j_cell);

#endif /* SPART_WEIGHTS_CONSERVATIVE_2D_SWEEP_H */
