/*
 * src/weights/geometry_2d.c: point in polygon and grid cell areas, as regridding
 * 3.6.0 computes them (see src/weights/geometry_2d.h).
 */
#include "weights/geometry_2d.h"

/* The change in winding number from the polygon edge (x0, y0) -> (x1, y1),
 * both relative to the query point: +-1 where the edge crosses the
 * horizontal through the point, +-1/2 where it starts or ends on it. */
static double winding_of_edge(double x0, double y0, double x1, double y1)
{
    if (y0 * y1 < 0) {
        /* the crossing is computed from the endpoint below the horizontal,
         * whichever way the edge runs, so that the two cells sharing an
         * edge round it identically */
        double xa = y0 < 0 ? x0 : x1;
        double ya = y0 < 0 ? y0 : y1;
        double xb = y0 < 0 ? x1 : x0;
        double yb = y0 < 0 ? y1 : y0;
        double r = xa + ya * (xb - xa) / (ya - yb);
        if (r > 0) {
            return y0 < 0 ? 1.0 : -1.0;
        }
        return y0 < 0 ? -1.0 : 1.0;
    }
    if (y0 == 0) {
        if (x0 > 0) {
            return y1 > 0 ? 0.5 : (y1 < 0 ? -0.5 : 0.0);
        }
        if (x0 < 0) {
            return y1 < 0 ? 0.5 : (y1 > 0 ? -0.5 : 0.0);
        }
        return 0.0;
    }
    if (y1 == 0) {
        if (x1 > 0) {
            return y0 < 0 ? 0.5 : (y0 > 0 ? -0.5 : 0.0);
        }
        if (x1 < 0) {
            return y0 > 0 ? 0.5 : (y0 < 0 ? -0.5 : 0.0);
        }
    }
    return 0.0;
}

int spart_point_in_polygon(double x, double y, const double *vertices_x, const double *vertices_y,
                           int64_t num_vertices)
{
    /* halves and ones add exactly, so the order of the sum is immaterial */
    double winding = 0.0;
    for (int64_t k = 0; k < num_vertices; k++) {
        int64_t previous = k == 0 ? num_vertices - 1 : k - 1;
        double x0 = vertices_x[previous] - x;
        double y0 = vertices_y[previous] - y;
        double x1 = vertices_x[k] - x;
        double y1 = vertices_y[k] - y;
        winding += winding_of_edge(x0, y0, x1, y1);
    }
    return winding != 0.0;
}

double spart_grid_cell_area(const double *x, const double *y, int64_t num_y, int64_t a, int64_t b)
{
    return spart_grid_cell_area_math(x, y, num_y, a, b); /* src/weights/grid_area_math.h */
}

void spart_grid_cell_areas(const double *x, const double *y, int64_t num_x, int64_t num_y,
                           double *areas)
{
    /* rows on the threads when there are many cells (a whole sensor's, for
     * the conservative transpose of weights on a device); inside a
     * parallel region this stays on its thread. Each area is its own. */
    int64_t num_cells_y = num_y - 1;
#pragma omp parallel for schedule(static) if ((num_x - 1) * num_cells_y > 262144)
    for (int64_t a = 0; a < num_x - 1; a++) {
        for (int64_t b = 0; b < num_cells_y; b++) {
            areas[a * num_cells_y + b] = spart_grid_cell_area(x, y, num_y, a, b);
        }
    }
}
