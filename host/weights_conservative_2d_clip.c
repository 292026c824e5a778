/*
 * host/weights_conservative_2d_clip.c: first-order conservative weights from
 * a 2-D logically rectangular grid onto a uniform axis-aligned lattice, by
 * clipping each input cell against the lattice cells it can touch
 * (regridding 3.6.0, _weights_conservative_2d/_clipping/_host.py and
 * _shared.py).
 *
 * The input vertices are first expressed in lattice-cell units, so that
 * output cell (i, j) is the unit square [i, i+1] x [j, j+1]. Each input
 * cell is then clipped (Sutherland-Hodgman) against every unit square of
 * its bounding box, and each non-zero overlap area over the cell's area
 * (both signed, so orientation cancels) is one entry. The reference is
 * compiled without fastmath, and this file performs its operations in its
 * order, so the weights are the reference's bit for bit.
 *
 * Entries come out sorted by (input, output) with one entry per pair:
 * cells in C order, candidates in C order. With `parallel`, contiguous
 * blocks of rows of input cells (one index along axis 0) are clipped by
 * OpenMP threads, each block into its own list, and the lists are joined in
 * block order, so the result is the same for any thread count.
 */
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "internal.h"
#include "weights_kernels.h"

/* Vertex slots of a polygon being clipped. Clipping an n-gon against a
 * half-plane gives at most n + c/2 vertices, c <= n being the (even) number
 * of edges that cross the boundary, so a quadrilateral, of any shape, has
 * at most 6, 9, 13 and 19 vertices after the four clips. (The reference
 * reserves 16, enough for the simple cells it supports.) */
#define CLIP_SLOTS 20

/* The lattice's relative tolerance on its steps, as the reference's. */
#define LATTICE_RTOL 1e-10

/* Whether x[i * num_y + j] equals x[i * num_y] for every j (exactly, so a
 * NaN fails), i.e. x varies only along axis 0. */
static int varies_only_along_axis_0(const double *x, int64_t num_x, int64_t num_y)
{
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            if (!(x[i * num_y + j] == x[i * num_y])) {
                return 0;
            }
        }
    }
    return 1;
}

/* Whether y[i * num_y + j] equals y[j] for every i (exactly). */
static int varies_only_along_axis_1(const double *y, int64_t num_x, int64_t num_y)
{
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            if (!(y[i * num_y + j] == y[j])) {
                return 0;
            }
        }
    }
    return 1;
}

/* Whether the num vertices a[0], a[stride], ... have finite steps, the
 * first non-zero and every one within LATTICE_RTOL of the first, as
 * NumPy's allclose(step, step[0], rtol=1e-10, atol=0) decides. */
static int steps_are_uniform(const double *a, int64_t num, int64_t stride)
{
    if (num < 2) {
        return 0;
    }
    for (int64_t k = 0; k + 1 < num; k++) {
        if (!isfinite(a[(k + 1) * stride] - a[k * stride])) {
            return 0;
        }
    }
    const double step_first = a[stride] - a[0];
    if (step_first == 0) {
        return 0;
    }
    for (int64_t k = 0; k + 1 < num; k++) {
        double step = a[(k + 1) * stride] - a[k * stride];
        if (!(fabs(step - step_first) <= 0 + LATTICE_RTOL * fabs(step_first))) {
            return 0;
        }
    }
    return 1;
}

int spart_host_grid_is_lattice(const double *x, const double *y, int64_t num_x, int64_t num_y)
{
    if (num_x < 1 || num_y < 1) {
        return 0;
    }
    if (!varies_only_along_axis_0(x, num_x, num_y) || !varies_only_along_axis_1(y, num_x, num_y)) {
        return 0;
    }
    return steps_are_uniform(x, num_x, num_y) && steps_are_uniform(y, num_y, 1);
}

/* A polygon of at most CLIP_SLOTS vertices: vertex k is
 * (coordinate[0][k], coordinate[1][k]). */
typedef struct polygon {
    int num;
    double coordinate[2][CLIP_SLOTS];
} polygon;

/* The input grid in lattice-cell units, and the lattice's cell counts. */
typedef struct clip_problem {
    const double *x; /* x[i * num_y + j], (x - x0) / step_x */
    const double *y;
    int64_t num_y;       /* input vertices along axis 1 */
    int64_t num_cells_x; /* lattice cells along each axis */
    int64_t num_cells_y;
    const double *weights_input;
} clip_problem;

/* Twice the signed area of the triangle (origin, vertex 1, vertex 2): the
 * reference's cross_2d, the term of the shoelace sum. */
static double cross_2d(double x1, double y1, double x2, double y2)
{
    return x1 * y2 - x2 * y1;
}

/* The signed area of a polygon, the shoelace sum halved once at the end. */
static double area_signed(const polygon *p)
{
    const double *x = p->coordinate[0];
    const double *y = p->coordinate[1];
    double sum = 0.0;
    for (int k = 0; k < p->num; k++) {
        int next = k + 1 == p->num ? 0 : k + 1;
        sum += cross_2d(x[k], y[k], x[next], y[next]);
    }
    return sum / 2;
}

/* Clip `in` against the half-plane sign * (coordinate `axis` - bound) >= 0
 * into `out`, Sutherland-Hodgman style: a vertex on the kept side is kept,
 * and an edge that crosses the boundary adds its crossing point. The
 * winding order is kept, so the signed area keeps its orientation. */
static void clip_halfplane(const polygon *in, int axis, double sign, double bound, polygon *out)
{
    const double *x = in->coordinate[0];
    const double *y = in->coordinate[1];
    const double *c = in->coordinate[axis];
    int num = 0;
    for (int k = 0; k < in->num; k++) {
        int next = k + 1 == in->num ? 0 : k + 1;
        double distance_1 = sign * (c[k] - bound);
        double distance_2 = sign * (c[next] - bound);
        int inside_1 = distance_1 >= 0;
        int inside_2 = distance_2 >= 0;
        if (inside_1) {
            out->coordinate[0][num] = x[k];
            out->coordinate[1][num] = y[k];
            num++;
        }
        if (inside_1 != inside_2) {
            double denominator = distance_1 - distance_2;
            if (denominator != 0) {
                double t = distance_1 / denominator;
                out->coordinate[0][num] = x[k] + t * (x[next] - x[k]);
                out->coordinate[1][num] = y[k] + t * (y[next] - y[k]);
                num++;
            }
        }
    }
    out->num = num;
}

/* The smallest and largest coordinate `axis` of a polygon's vertices. */
static void coordinate_range(const polygon *p, int axis, double *lowest, double *highest)
{
    const double *c = p->coordinate[axis];
    double lo = c[0], hi = c[0];
    for (int k = 1; k < p->num; k++) {
        lo = c[k] < lo ? c[k] : lo;
        hi = c[k] > hi ? c[k] : hi;
    }
    *lowest = lo;
    *highest = hi;
}

/* Clip `in` to the band bound <= coordinate `axis` <= bound + 1: first
 * the half-plane above `bound`, then the one below `bound + 1`, as the
 * reference does. A half-plane that already holds every vertex is not
 * clipped against: Sutherland-Hodgman would copy the polygon unchanged,
 * so skipping it saves time and changes no bit. `lowest` and `highest`
 * are the range of `in` along `axis`. Returns the clipped polygon: `in`
 * itself, `first` or `second`. */
static const polygon *clip_to_band(const polygon *in, int axis, double bound, double lowest,
                                   double highest, polygon *first, polygon *second)
{
    const polygon *p = in;
    if (lowest < bound) {
        clip_halfplane(p, axis, 1.0, bound, first);
        p = first;
        if (p->num == 0) {
            return p;
        }
        double ignored;
        coordinate_range(p, axis, &ignored, &highest);
    }
    if (highest > bound + 1) {
        clip_halfplane(p, axis, -1.0, bound + 1, second);
        p = second;
    }
    return p;
}

/* floor(value) clamped to [0, limit], with NaN read as 0. */
static int64_t floor_clamped(double value, int64_t limit)
{
    if (!(value > 0)) {
        return 0;
    }
    if (value >= (double)limit) {
        return limit;
    }
    return (int64_t)floor(value);
}

/* ceil(value) clamped to [0, limit], with NaN read as limit. */
static int64_t ceil_clamped(double value, int64_t limit)
{
    if (!(value < (double)limit)) {
        return limit;
    }
    if (value <= 0) {
        return 0;
    }
    return (int64_t)ceil(value);
}

static double min4(double a, double b, double c, double d)
{
    double m = a;
    m = b < m ? b : m;
    m = c < m ? c : m;
    return d < m ? d : m;
}

static double max4(double a, double b, double c, double d)
{
    double m = a;
    m = b > m ? b : m;
    m = c > m ? c : m;
    return d > m ? d : m;
}

/* Clip input cell (i, j) against the lattice cells of its bounding box and
 * append its entries. 0 on success, -1 when out of memory. */
static int clip_cell(const clip_problem *problem, int64_t i, int64_t j, spart_triples *row)
{
    /* corners in winding order: (i,j), (i+1,j), (i+1,j+1), (i,j+1) */
    const int64_t corner[4] = {i * problem->num_y + j, (i + 1) * problem->num_y + j,
                               (i + 1) * problem->num_y + j + 1, i * problem->num_y + j + 1};
    double cx[4], cy[4];
    for (int k = 0; k < 4; k++) {
        cx[k] = problem->x[corner[k]];
        cy[k] = problem->y[corner[k]];
    }

    /* the block of lattice cells the bounding box touches, on the grid */
    int64_t lower_x = floor_clamped(min4(cx[0], cx[1], cx[2], cx[3]), problem->num_cells_x);
    int64_t upper_x = ceil_clamped(max4(cx[0], cx[1], cx[2], cx[3]), problem->num_cells_x);
    int64_t lower_y = floor_clamped(min4(cy[0], cy[1], cy[2], cy[3]), problem->num_cells_y);
    int64_t upper_y = ceil_clamped(max4(cy[0], cy[1], cy[2], cy[3]), problem->num_cells_y);
    if (lower_x >= upper_x || lower_y >= upper_y) {
        return 0;
    }

    /* Shift the cell onto its block, as the reference does: the shoelace
     * then sums products of small numbers, which also fixes its bits. */
    polygon cell;
    cell.num = 4;
    for (int k = 0; k < 4; k++) {
        cell.coordinate[0][k] = cx[k] - (double)lower_x;
        cell.coordinate[1][k] = cy[k] - (double)lower_y;
    }
    double area_cell = area_signed(&cell);
    if (area_cell == 0) {
        return 0;
    }
    const int64_t index_input = i * (problem->num_y - 1) + j;
    double weight_input =
        problem->weights_input != NULL ? problem->weights_input[index_input] : 1.0;
    double weight_cell = weight_input / area_cell;

    double lowest_x, highest_x;
    coordinate_range(&cell, 0, &lowest_x, &highest_x);
    polygon buffer[4];
    for (int64_t cell_x = lower_x; cell_x < upper_x; cell_x++) {
        /* The reference clips against x >= bound_x, x <= bound_x + 1,
         * y >= bound_y and y <= bound_y + 1 for every candidate. The two x
         * clips do not depend on cell_y: done once per column, they give
         * the same polygon, the slab. */
        double bound_x = (double)(cell_x - lower_x);
        const polygon *slab =
            clip_to_band(&cell, 0, bound_x, lowest_x, highest_x, &buffer[0], &buffer[1]);
        if (slab->num == 0) {
            continue; /* every y clip of an empty polygon stays empty */
        }
        double lowest_y, highest_y;
        coordinate_range(slab, 1, &lowest_y, &highest_y);
        for (int64_t cell_y = lower_y; cell_y < upper_y; cell_y++) {
            double bound_y = (double)(cell_y - lower_y);
            /* the reference skips the candidate when fewer than 3 vertices
             * are left after either y clip */
            const polygon *p = slab;
            if (lowest_y < bound_y) {
                clip_halfplane(p, 1, 1.0, bound_y, &buffer[2]);
                p = &buffer[2];
            }
            if (p->num < 3) {
                continue;
            }
            double ignored, highest = highest_y;
            if (p != slab) {
                coordinate_range(p, 1, &ignored, &highest);
            }
            if (highest > bound_y + 1) {
                clip_halfplane(p, 1, -1.0, bound_y + 1, &buffer[3]);
                p = &buffer[3];
            }
            if (p->num < 3) {
                continue;
            }
            double area = area_signed(p);
            if (area == 0) {
                continue;
            }
            int64_t index_output = cell_x * problem->num_cells_y + cell_y;
            if (spart_triples_append(row, index_input, index_output, area * weight_cell) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* Clip rows first..last-1 of input cells (row i: cells (i, 0), (i, 1),
 * ...) into `list`, in order. 0 on success, -1 when out of memory. */
static int clip_rows(const clip_problem *problem, int64_t first, int64_t last, spart_triples *list)
{
    for (int64_t i = first; i < last; i++) {
        for (int64_t j = 0; j + 1 < problem->num_y; j++) {
            if (clip_cell(problem, i, j, list) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* How many blocks of rows to hand to threads: a few per thread, so that
 * rows of unequal cost even out; one when not parallel. */
static int64_t num_blocks_for(int64_t num_rows, int parallel)
{
    int64_t threads = parallel > 1 ? parallel : 1;
    int64_t blocks = threads > 1 ? 4 * threads : 1;
    return blocks < num_rows ? blocks : num_rows;
}

/* Clip the rows in `num_blocks` contiguous blocks, each into its own list,
 * by OpenMP threads, and join the lists in block order: the entries come
 * out in row order whatever the number of threads or blocks. */
static spart_status clip_blocks(const clip_problem *problem, int64_t num_rows, int64_t num_blocks,
                                int threads, spart_triples *triples)
{
    const spart_allocator *allocator = triples->allocator;
    spart_triples *lists = spart_alloc(allocator, (size_t)num_blocks, sizeof *lists);
    int *failed = spart_alloc_zero(allocator, (size_t)num_blocks, sizeof *failed);
    if (lists == NULL || failed == NULL) {
        spart_free(allocator, lists);
        spart_free(allocator, failed);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    for (int64_t b = 0; b < num_blocks; b++) {
        spart_triples_init(&lists[b], allocator);
    }
    /* each block writes only its own list and flag */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t b = 0; b < num_blocks; b++) {
        int64_t first = b * num_rows / num_blocks;
        int64_t last = (b + 1) * num_rows / num_blocks;
        failed[b] = clip_rows(problem, first, last, &lists[b]);
    }
    spart_status status = SPART_OK;
    for (int64_t b = 0; b < num_blocks; b++) {
        if (failed[b] != 0) {
            status = SPART_ERROR_OUT_OF_MEMORY;
        }
    }
    if (spart_triples_join(triples, lists, num_blocks, status == SPART_OK) != 0) {
        status = SPART_ERROR_OUT_OF_MEMORY;
    }
    spart_free(allocator, lists);
    spart_free(allocator, failed);
    return status;
}

spart_status spart_host_weights_conservative_2d_clip(const double *x_input, const double *y_input,
                                                     int64_t num_x_input, int64_t num_y_input,
                                                     const double *x_output, const double *y_output,
                                                     int64_t num_x_output, int64_t num_y_output,
                                                     const double *weights_input, int parallel,
                                                     spart_triples *triples)
{
    if (num_x_input < 2 || num_y_input < 2 || num_x_output < 2 || num_y_output < 2) {
        return SPART_OK; /* no cells on one side: nothing overlaps */
    }
    /* the input grid in lattice-cell units, as the reference maps it, so
     * that lattice cell (i, j) is the unit square [i, i+1] x [j, j+1] */
    const double origin_x = x_output[0];
    const double origin_y = y_output[0];
    const double step_x = x_output[num_y_output] - x_output[0];
    const double step_y = y_output[1] - y_output[0];
    const size_t num_vertices = (size_t)num_x_input * (size_t)num_y_input;
    double *x = spart_alloc(triples->allocator, num_vertices, sizeof *x);
    double *y = spart_alloc(triples->allocator, num_vertices, sizeof *y);
    if (x == NULL || y == NULL) {
        spart_free(triples->allocator, x);
        spart_free(triples->allocator, y);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static) num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
    for (size_t k = 0; k < num_vertices; k++) {
        x[k] = (x_input[k] - origin_x) / step_x;
        y[k] = (y_input[k] - origin_y) / step_y;
    }
    const clip_problem problem = {
        .x = x,
        .y = y,
        .num_y = num_y_input,
        .num_cells_x = num_x_output - 1,
        .num_cells_y = num_y_output - 1,
        .weights_input = weights_input,
    };
    const int64_t num_rows = num_x_input - 1;
    const int64_t num_blocks = num_blocks_for(num_rows, parallel);
    spart_status status = SPART_OK;
    if (num_blocks <= 1) {
        /* one thread: straight into the caller's list */
        if (clip_rows(&problem, 0, num_rows, triples) != 0) {
            status = SPART_ERROR_OUT_OF_MEMORY;
        }
    } else {
        status = clip_blocks(&problem, num_rows, num_blocks, parallel, triples);
    }
    spart_free(triples->allocator, x);
    spart_free(triples->allocator, y);
    return status;
}
