/*
 * src/weights/weights_conservative_2d_clip_general.c: first-order conservative
 * weights between any two 2-D logically rectangular grids, by exact
 * polygon clipping, with no perturbation.
 *
 * The weight of a pair (input cell, output cell) is the area of their
 * intersection over the area of the input cell, times weights_input. The
 * intersection is found by clipping the input cell, a quadrilateral of
 * any shape and orientation, against the output cell with
 * Sutherland-Hodgman. Clipping against a convex region is exact for any
 * subject: each half-plane clip keeps the subject's winding number inside
 * the half-plane, so the signed area that comes out is the integral of the
 * input cell's winding number over the region, which is the signed area
 * of the intersection. So an output cell that is convex is clipped against
 * as a whole, and one that is not (a warped grid can have a reflex corner)
 * is cut along its interior diagonal into two triangles, each clipped
 * against in turn. Every clip region is made counterclockwise first; the
 * input cell keeps its own orientation, which its area shares, so the
 * ratio is positive whichever way either grid runs.
 *
 * Degenerate alignments need no jitter. A vertex of one grid equal to a
 * vertex of the other gives exactly zero in every side-of-line test
 * against an edge ending there, so an input cell that only touches a
 * clip edge is found to lie outside without any crossing being computed,
 * and an input cell equal to a convex output cell clips to itself (a
 * weight of exactly weights_input). Crossings are computed only between
 * vertices strictly on opposite sides, so no crossing point is ever a
 * rounded copy of a vertex. Edges that are collinear only to rounding (a
 * rotated grid and its refinement) can overlap by slivers of rounding
 * size; those are exact areas of the grids as given, and are kept.
 *
 * Candidate output cells come from a grid of buckets over the output
 * cells' bounding boxes, built once: each output cell is listed in every
 * bucket its box touches, and an input cell visits the buckets its own box
 * touches, clipping against an output cell only in the first bucket that
 * both boxes touch, so once.
 *
 * Entries come out sorted by (input, output) with one entry per pair of
 * non-zero overlap. With `parallel` > 1, contiguous blocks of rows of input
 * cells (one index along axis 0) are clipped by OpenMP threads, each block
 * into its own list, and the lists are joined in block order; each pair's
 * area is computed on its own, so the result is the same bit for bit for
 * any thread count.
 */
#include <math.h>
#include <stdlib.h>

#include "core/internal.h"
#include "weights/weights_kernels.h"

/* Vertex slots of a polygon being clipped. Clipping an n-gon against a
 * half-plane gives at most n + c/2 vertices, c <= n being the (even)
 * number of edges that cross the boundary, so a quadrilateral, of any
 * shape, has at most 6, 9, 13 and 19 vertices after four clips. */
#define CLIP_SLOTS 20

/* The most entries per output cell in the bucket lists, on average. Cells
 * about as wide as a bucket take about 4. */
#define MAX_LISTINGS_PER_CELL 16

/* A polygon of at most CLIP_SLOTS vertices (x[k], y[k]). */
typedef struct polygon {
    int num;
    double x[CLIP_SLOTS];
    double y[CLIP_SLOTS];
} polygon;

/* An output cell prepared for clipping. The box comes first, since most
 * candidates are rejected by it alone. */
typedef struct output_cell {
    double box[4]; /* x low, x high, y low, y high */
    /* corners counterclockwise; when the cell is not convex, rotated so
     * that the diagonal from corner 0 to corner 2 is interior */
    double x[4];
    double y[4];
    int convex; /* 1: one convex region; 0: triangles (0, 1, 2) and (0, 2, 3) */
    /* the first bucket (lowest along both axes) that the box touches */
    int64_t first_bucket_x, first_bucket_y;
} output_cell;

/* A uniform grid of buckets over the output cells' bounding boxes: bucket
 * (a, b) lists the cells cell_index[start[a * num_y + b] ...
 * start[a * num_y + b + 1] - 1], in ascending order. */
typedef struct bucket_grid {
    double origin_x, origin_y;
    double scale_x, scale_y; /* buckets per unit length */
    int64_t num_x, num_y;
    int64_t *start;
    int64_t *cell_index;
} bucket_grid;

/* Everything a block of rows needs, shared read-only by the threads. */
typedef struct clip_problem {
    const double *x_input;
    const double *y_input;
    int64_t num_x_input;
    int64_t num_y_input;
    const double *weights_input;
    const output_cell *cells; /* NULL entries are not listed in any bucket */
    bucket_grid buckets;
} clip_problem;

/* One overlap of the input cell being clipped: an output cell and the
 * signed area of the intersection. */
typedef struct overlap {
    int64_t index_output;
    double area;
} overlap;

/* A growable list of overlaps, one per block of rows. */
typedef struct overlap_list {
    const spart_allocator *allocator;
    int64_t count;
    int64_t capacity;
    overlap *items;
} overlap_list;

/* ---- plane geometry ------------------------------------------------------- */

/* The smaller and larger of two numbers, inline (fmin and fmax are calls
 * where NaN must be honoured; boxes with NaN are never used). */
static double smaller(double a, double b)
{
    return b < a ? b : a;
}

static double larger(double a, double b)
{
    return b > a ? b : a;
}

/* Twice the signed area of the triangle (a, b, c): positive when the turn
 * a -> b -> c is counterclockwise. */
static double turn(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* The signed area of a polygon, the shoelace sum halved once at the end. */
static double area_signed(const polygon *p)
{
    double sum = 0.0;
    for (int k = 0; k < p->num; k++) {
        int next = k + 1 == p->num ? 0 : k + 1;
        sum += p->x[k] * p->y[next] - p->x[next] * p->y[k];
    }
    return sum / 2;
}

/* Clip `in` against the half-plane left of the line a -> b (turn >= 0)
 * into `out`, Sutherland-Hodgman style, given each vertex's turn in
 * `side`. A vertex on the kept side or on the line is kept; an edge whose
 * ends lie strictly on opposite sides adds its crossing. An edge with one
 * end on the line adds nothing more, that end being kept already, so
 * crossings are never rounded copies of vertices. Winding order is kept. */
static void clip_halfplane(const polygon *in, const double *side, polygon *out)
{
    int num = 0;
    for (int k = 0; k < in->num; k++) {
        int next = k + 1 == in->num ? 0 : k + 1;
        double side_1 = side[k];
        double side_2 = side[next];
        if (side_1 >= 0) {
            out->x[num] = in->x[k];
            out->y[num] = in->y[k];
            num++;
        }
        if ((side_1 > 0 && side_2 < 0) || (side_1 < 0 && side_2 > 0)) {
            double t = side_1 / (side_1 - side_2);
            out->x[num] = in->x[k] + t * (in->x[next] - in->x[k]);
            out->y[num] = in->y[k] + t * (in->y[next] - in->y[k]);
            num++;
        }
    }
    out->num = num;
}

/* The signed area of the part of `subject` inside the convex polygon of
 * `num_region` counterclockwise vertices (region_x[k], region_y[k]).
 * `buffer` holds two polygons of scratch. A half-plane that holds every
 * vertex is not clipped against (nothing would change), and one that holds
 * none in its interior ends the clipping with zero area. */
static double clipped_area(const polygon *subject, const double *region_x, const double *region_y,
                           int num_region, polygon buffer[2])
{
    const polygon *p = subject;
    int next_buffer = 0;
    for (int e = 0; e < num_region; e++) {
        int f = e + 1 == num_region ? 0 : e + 1;
        if (region_x[e] == region_x[f] && region_y[e] == region_y[f]) {
            continue; /* an edge of no length (a cell with two equal corners) bounds nothing */
        }
        double side[CLIP_SLOTS];
        int any_inside = 0;
        int any_outside = 0;
        for (int k = 0; k < p->num; k++) {
            side[k] = turn(region_x[e], region_y[e], region_x[f], region_y[f], p->x[k], p->y[k]);
            any_inside |= side[k] > 0;
            any_outside |= side[k] < 0;
        }
        if (!any_inside) {
            return 0.0; /* on or outside the line: no area (NaN: none either) */
        }
        if (any_outside) {
            clip_halfplane(p, side, &buffer[next_buffer]);
            p = &buffer[next_buffer];
            next_buffer = 1 - next_buffer;
        }
    }
    return area_signed(p);
}

/* The signed area of the intersection of `subject` with output cell `cell`,
 * both shifted by (-shift_x, -shift_y). */
static double overlap_area(const polygon *subject, const output_cell *cell, double shift_x,
                           double shift_y, polygon buffer[2])
{
    double x[4], y[4];
    for (int k = 0; k < 4; k++) {
        x[k] = cell->x[k] - shift_x;
        y[k] = cell->y[k] - shift_y;
    }
    if (cell->convex) {
        return clipped_area(subject, x, y, 4, buffer);
    }
    const double second_x[3] = {x[0], x[2], x[3]};
    const double second_y[3] = {y[0], y[2], y[3]};
    double first = clipped_area(subject, x, y, 3, buffer);
    return first + clipped_area(subject, second_x, second_y, 3, buffer);
}

/* ---- output cells ----------------------------------------------------------- */

/* Output cell (a, b) of a grid with num_y vertices along axis 1, prepared
 * for clipping: its box, its corners counterclockwise, and whether it is
 * convex or, if not, which diagonal cuts it into two triangles. Returns 0
 * for a cell of zero (or non-finite) area, which overlaps nothing. */
static int prepare_output_cell(const double *x, const double *y, int64_t num_y, int64_t a,
                               int64_t b, output_cell *cell)
{
    const int64_t corner[4] = {a * num_y + b, (a + 1) * num_y + b, (a + 1) * num_y + b + 1,
                               a * num_y + b + 1};
    polygon quad;
    quad.num = 4;
    for (int k = 0; k < 4; k++) {
        quad.x[k] = x[corner[k]] - x[corner[0]];
        quad.y[k] = y[corner[k]] - y[corner[0]];
    }
    double area = area_signed(&quad);
    if (!(area != 0) || !isfinite(area)) {
        return 0;
    }
    /* counterclockwise: a clockwise cell is walked backwards from corner 0 */
    for (int k = 0; k < 4; k++) {
        int from = area > 0 ? k : (4 - k) % 4;
        cell->x[k] = x[corner[from]];
        cell->y[k] = y[corner[from]];
    }
    /* the turn at each corner; a reflex corner turns clockwise */
    double corner_turn[4];
    for (int k = 0; k < 4; k++) {
        int previous = (k + 3) % 4;
        int next = (k + 1) % 4;
        corner_turn[k] = turn(cell->x[previous], cell->y[previous], cell->x[k], cell->y[k],
                              cell->x[next], cell->y[next]);
    }
    cell->convex =
        corner_turn[0] >= 0 && corner_turn[1] >= 0 && corner_turn[2] >= 0 && corner_turn[3] >= 0;
    if (!cell->convex) {
        /* The diagonal 0-2 is interior when the turns at corners 1 and 3
         * (those of the triangles it makes) are both counterclockwise, as
         * when the reflex corner is 0 or 2; otherwise the diagonal 1-3 is.
         * Taking the diagonal whose smaller turn is the larger decides
         * robustly, and then corner 1 becomes corner 0 if needed. */
        double turn_02 = smaller(corner_turn[1], corner_turn[3]);
        double turn_13 = smaller(corner_turn[0], corner_turn[2]);
        if (turn_13 > turn_02) {
            double first_x = cell->x[0];
            double first_y = cell->y[0];
            for (int k = 0; k < 3; k++) {
                cell->x[k] = cell->x[k + 1];
                cell->y[k] = cell->y[k + 1];
            }
            cell->x[3] = first_x;
            cell->y[3] = first_y;
        }
    }
    cell->box[0] = smaller(smaller(cell->x[0], cell->x[1]), smaller(cell->x[2], cell->x[3]));
    cell->box[1] = larger(larger(cell->x[0], cell->x[1]), larger(cell->x[2], cell->x[3]));
    cell->box[2] = smaller(smaller(cell->y[0], cell->y[1]), smaller(cell->y[2], cell->y[3]));
    cell->box[3] = larger(larger(cell->y[0], cell->y[1]), larger(cell->y[2], cell->y[3]));
    return isfinite(cell->box[0]) && isfinite(cell->box[1]) && isfinite(cell->box[2]) &&
           isfinite(cell->box[3]);
}

/* ---- the bucket grid ----------------------------------------------------------- */

/* The bucket holding `value` along one axis, clamped to [0, num - 1]. */
static int64_t bucket_of(double value, double origin, double scale, int64_t num)
{
    double position = (value - origin) * scale;
    if (!(position > 0)) {
        return 0;
    }
    if (position >= (double)num) {
        return num - 1;
    }
    return (int64_t)position;
}

/* The block of buckets a box touches: [*low_x, *high_x] x [*low_y, *high_y]. */
static void buckets_of_box(const bucket_grid *grid, const double *box, int64_t *low_x,
                           int64_t *high_x, int64_t *low_y, int64_t *high_y)
{
    *low_x = bucket_of(box[0], grid->origin_x, grid->scale_x, grid->num_x);
    *high_x = bucket_of(box[1], grid->origin_x, grid->scale_x, grid->num_x);
    *low_y = bucket_of(box[2], grid->origin_y, grid->scale_y, grid->num_y);
    *high_y = bucket_of(box[3], grid->origin_y, grid->scale_y, grid->num_y);
}

/* How many buckets along an axis of length `extent`, buckets being
 * `width` long: at least 1, at most `limit`. */
static int64_t num_buckets_along(double extent, double width, int64_t limit)
{
    double num = ceil(extent / width);
    if (!(num >= 1)) {
        return 1;
    }
    return num >= (double)limit ? limit : (int64_t)num;
}

/* Whether listing every usable cell in each bucket its box touches would
 * take more than `limit` entries (counting stops there). */
static int listings_exceed(const output_cell *cells, const unsigned char *usable, int64_t num_cells,
                           const bucket_grid *grid, int64_t limit)
{
    int64_t listings = 0;
    for (int64_t c = 0; c < num_cells && listings <= limit; c++) {
        if (usable[c]) {
            int64_t low_x, high_x, low_y, high_y;
            buckets_of_box(grid, cells[c].box, &low_x, &high_x, &low_y, &high_y);
            listings += (high_x - low_x + 1) * (high_y - low_y + 1);
        }
    }
    return listings > limit;
}

/* Size the bucket grid to the box holding every usable output cell, with
 * about as many square buckets as cells (at most three times as many), so
 * that a bucket is about as wide as a cell. Where cells have boxes far
 * larger than that (long slanted slivers), each would be listed in very
 * many buckets: the buckets are then widened until the lists hold at most
 * MAX_LISTINGS_PER_CELL entries per cell, bounding the memory. */
static void size_bucket_grid(const output_cell *cells, const unsigned char *usable,
                             int64_t num_cells, bucket_grid *grid)
{
    double low_x = INFINITY, high_x = -INFINITY, low_y = INFINITY, high_y = -INFINITY;
    int64_t num_usable = 0;
    for (int64_t c = 0; c < num_cells; c++) {
        if (usable[c]) {
            low_x = smaller(low_x, cells[c].box[0]);
            high_x = larger(high_x, cells[c].box[1]);
            low_y = smaller(low_y, cells[c].box[2]);
            high_y = larger(high_y, cells[c].box[3]);
            num_usable++;
        }
    }
    grid->origin_x = num_usable > 0 ? low_x : 0.0;
    grid->origin_y = num_usable > 0 ? low_y : 0.0;
    double extent_x = num_usable > 0 ? high_x - low_x : 0.0;
    double extent_y = num_usable > 0 ? high_y - low_y : 0.0;
    int64_t limit = num_usable > 1 ? num_usable : 1;
    double width = sqrt(extent_x * extent_y / (double)limit);
    grid->num_x = num_buckets_along(extent_x, width, limit);
    grid->num_y = num_buckets_along(extent_y, width, limit);
    for (;;) {
        grid->scale_x = extent_x > 0 ? (double)grid->num_x / extent_x : 0.0;
        grid->scale_y = extent_y > 0 ? (double)grid->num_y / extent_y : 0.0;
        if (grid->num_x * grid->num_y == 1 ||
            !listings_exceed(cells, usable, num_cells, grid, MAX_LISTINGS_PER_CELL * limit)) {
            return;
        }
        grid->num_x = (grid->num_x + 1) / 2;
        grid->num_y = (grid->num_y + 1) / 2;
    }
}

/* Fill the grid's lists: count each bucket's cells, turn the counts into
 * starts, then place the cells in ascending order. */
static spart_status fill_bucket_grid(output_cell *cells, const unsigned char *usable,
                                     int64_t num_cells, const spart_allocator *allocator,
                                     bucket_grid *grid)
{
    const int64_t num_buckets = grid->num_x * grid->num_y;
    grid->start = spart_alloc_zero(allocator, (size_t)num_buckets + 1, sizeof *grid->start);
    if (grid->start == NULL) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    for (int64_t c = 0; c < num_cells; c++) {
        if (!usable[c]) {
            continue;
        }
        int64_t low_x, high_x, low_y, high_y;
        buckets_of_box(grid, cells[c].box, &low_x, &high_x, &low_y, &high_y);
        cells[c].first_bucket_x = low_x;
        cells[c].first_bucket_y = low_y;
        for (int64_t a = low_x; a <= high_x; a++) {
            for (int64_t b = low_y; b <= high_y; b++) {
                grid->start[a * grid->num_y + b + 1]++;
            }
        }
    }
    for (int64_t k = 0; k < num_buckets; k++) {
        grid->start[k + 1] += grid->start[k];
    }
    grid->cell_index =
        spart_alloc(allocator, (size_t)grid->start[num_buckets] + 1, sizeof *grid->cell_index);
    int64_t *cursor = spart_alloc(allocator, (size_t)num_buckets, sizeof *cursor);
    if (grid->cell_index == NULL || cursor == NULL) {
        spart_free(allocator, cursor);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    for (int64_t k = 0; k < num_buckets; k++) {
        cursor[k] = grid->start[k];
    }
    for (int64_t c = 0; c < num_cells; c++) {
        if (!usable[c]) {
            continue;
        }
        int64_t low_x, high_x, low_y, high_y;
        buckets_of_box(grid, cells[c].box, &low_x, &high_x, &low_y, &high_y);
        for (int64_t a = low_x; a <= high_x; a++) {
            for (int64_t b = low_y; b <= high_y; b++) {
                grid->cell_index[cursor[a * grid->num_y + b]++] = c;
            }
        }
    }
    spart_free(allocator, cursor);
    return SPART_OK;
}

/* Prepare every output cell and list it in the buckets. On failure the
 * caller frees what was allocated (problem->cells and the grid's arrays). */
static spart_status prepare_output(const double *x_output, const double *y_output,
                                   int64_t num_x_output, int64_t num_y_output, int parallel,
                                   const spart_allocator *allocator, output_cell **cells_out,
                                   bucket_grid *grid)
{
    const int64_t num_cells_y = num_y_output - 1;
    const int64_t num_cells = (num_x_output - 1) * num_cells_y;
    output_cell *cells = spart_alloc(allocator, (size_t)num_cells, sizeof *cells);
    unsigned char *usable = spart_alloc(allocator, (size_t)num_cells, sizeof *usable);
    *cells_out = cells;
    if (cells == NULL || usable == NULL) {
        spart_free(allocator, usable);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static) num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
    for (int64_t c = 0; c < num_cells; c++) {
        usable[c] = (unsigned char)prepare_output_cell(x_output, y_output, num_y_output,
                                                       c / num_cells_y, c % num_cells_y, &cells[c]);
    }
    size_bucket_grid(cells, usable, num_cells, grid);
    spart_status status = fill_bucket_grid(cells, usable, num_cells, allocator, grid);
    spart_free(allocator, usable);
    return status;
}

/* ---- the overlaps of one input cell ------------------------------------------------ */

/* Append an overlap; 0 on success, -1 when out of memory. */
static int overlap_append(overlap_list *list, int64_t index_output, double area)
{
    if (list->count == list->capacity) {
        int64_t grown = list->capacity < 64 ? 64 : 2 * list->capacity;
        overlap *items = spart_realloc(list->allocator, list->items, (size_t)grown, sizeof *items);
        if (items == NULL) {
            return -1;
        }
        list->items = items;
        list->capacity = grown;
    }
    list->items[list->count].index_output = index_output;
    list->items[list->count].area = area;
    list->count++;
    return 0;
}

static int compare_overlaps(const void *a, const void *b)
{
    int64_t index_a = ((const overlap *)a)->index_output;
    int64_t index_b = ((const overlap *)b)->index_output;
    return (index_a > index_b) - (index_a < index_b);
}

/* Sort overlaps by output cell (all distinct, so any sort gives the same
 * order): insertion sort for the few of a typical cell, qsort beyond. */
static void sort_overlaps(overlap *items, int64_t count)
{
    if (count > 32) {
        qsort(items, (size_t)count, sizeof *items, compare_overlaps);
        return;
    }
    for (int64_t k = 1; k < count; k++) {
        overlap item = items[k];
        int64_t m = k;
        while (m > 0 && items[m - 1].index_output > item.index_output) {
            items[m] = items[m - 1];
            m--;
        }
        items[m] = item;
    }
}

/* Whether two boxes overlap with positive area (boxes that only touch
 * cannot hold an overlap of positive area). */
static int boxes_overlap(const double *a, const double *b)
{
    return a[0] < b[1] && b[0] < a[1] && a[2] < b[3] && b[2] < a[3];
}

/* Clip `subject` (input cell shifted by (-shift_x, -shift_y), box `box`)
 * against every output cell whose box overlaps its own, into `overlaps`,
 * unsorted. 0 on success, -1 when out of memory. */
static int find_overlaps(const clip_problem *problem, const polygon *subject, const double *box,
                         double shift_x, double shift_y, overlap_list *overlaps)
{
    const bucket_grid *grid = &problem->buckets;
    int64_t low_x, high_x, low_y, high_y;
    buckets_of_box(grid, box, &low_x, &high_x, &low_y, &high_y);
    polygon buffer[2];
    for (int64_t a = low_x; a <= high_x; a++) {
        for (int64_t b = low_y; b <= high_y; b++) {
            const int64_t bucket = a * grid->num_y + b;
            for (int64_t k = grid->start[bucket]; k < grid->start[bucket + 1]; k++) {
                const int64_t c = grid->cell_index[k];
                const output_cell *cell = &problem->cells[c];
                if (!boxes_overlap(box, cell->box)) {
                    continue;
                }
                /* visit the pair only in the first bucket both boxes touch */
                if (a != (cell->first_bucket_x > low_x ? cell->first_bucket_x : low_x) ||
                    b != (cell->first_bucket_y > low_y ? cell->first_bucket_y : low_y)) {
                    continue;
                }
                double area = overlap_area(subject, cell, shift_x, shift_y, buffer);
                if (area != 0 && overlap_append(overlaps, c, area) != 0) {
                    return -1;
                }
            }
        }
    }
    return 0;
}

/* Clip input cell (i, j) against the output cells and append its entries,
 * sorted by output cell. 0 on success, -1 when out of memory. */
static int clip_cell(const clip_problem *problem, int64_t i, int64_t j, overlap_list *overlaps,
                     spart_triples *list)
{
    const int64_t num_y = problem->num_y_input;
    /* corners in winding order: (i,j), (i+1,j), (i+1,j+1), (i,j+1) */
    const int64_t corner[4] = {i * num_y + j, (i + 1) * num_y + j, (i + 1) * num_y + j + 1,
                               i * num_y + j + 1};
    /* Work relative to corner 0, shifting the output cells alike: the
     * shoelace then sums products of small numbers, and equal vertices of
     * the two grids stay equal. */
    const double shift_x = problem->x_input[corner[0]];
    const double shift_y = problem->y_input[corner[0]];
    polygon subject;
    subject.num = 4;
    double box[4] = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (int k = 0; k < 4; k++) {
        double x = problem->x_input[corner[k]];
        double y = problem->y_input[corner[k]];
        subject.x[k] = x - shift_x;
        subject.y[k] = y - shift_y;
        box[0] = smaller(box[0], x);
        box[1] = larger(box[1], x);
        box[2] = smaller(box[2], y);
        box[3] = larger(box[3], y);
    }
    const double area_input = area_signed(&subject);
    if (!(area_input != 0) || !isfinite(area_input)) {
        return 0;
    }
    overlaps->count = 0;
    if (find_overlaps(problem, &subject, box, shift_x, shift_y, overlaps) != 0) {
        return -1;
    }
    sort_overlaps(overlaps->items, overlaps->count);
    const int64_t index_input = i * (num_y - 1) + j;
    const double weight_input =
        problem->weights_input != NULL ? problem->weights_input[index_input] : 1.0;
    for (int64_t k = 0; k < overlaps->count; k++) {
        /* both areas carry the input cell's orientation: the ratio is
         * positive, and exactly 1 for an output cell equal to the input */
        double value = overlaps->items[k].area / area_input * weight_input;
        if (spart_triples_append(list, index_input, overlaps->items[k].index_output, value) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Clip rows first..last-1 of input cells (row i: cells (i, 0), (i, 1),
 * ...) into `list`, in order. 0 on success, -1 when out of memory. */
static int clip_rows(const clip_problem *problem, int64_t first, int64_t last, spart_triples *list)
{
    overlap_list overlaps = {list->allocator, 0, 0, NULL};
    int failed = 0;
    for (int64_t i = first; i < last && !failed; i++) {
        /* page in the room of a row at about 4 entries a cell, in bulk */
        spart_triples_prepare(list, 4 * (problem->num_y_input - 1));
        for (int64_t j = 0; j + 1 < problem->num_y_input && !failed; j++) {
            failed = clip_cell(problem, i, j, &overlaps, list) != 0;
        }
    }
    spart_free(list->allocator, overlaps.items);
    return failed ? -1 : 0;
}

/* clip_rows as spart_triples_list_rows takes it (blocks of rows, in
 * parallel). */
static int list_clipped_rows(const void *problem, int64_t first, int64_t last, spart_triples *list)
{
    return clip_rows(problem, first, last, list);
}

spart_status spart_host_weights_conservative_2d_clip_general(
    const double *x_input, const double *y_input, int64_t num_x_input, int64_t num_y_input,
    const double *x_output, const double *y_output, int64_t num_x_output, int64_t num_y_output,
    const double *weights_input, int parallel, spart_triples *triples)
{
    if (num_x_input < 2 || num_y_input < 2 || num_x_output < 2 || num_y_output < 2) {
        return SPART_OK; /* no cells on one side: nothing overlaps */
    }
    const spart_allocator *allocator = triples->allocator;
    clip_problem problem = {
        .x_input = x_input,
        .y_input = y_input,
        .num_x_input = num_x_input,
        .num_y_input = num_y_input,
        .weights_input = weights_input,
    };
    output_cell *cells = NULL;
    spart_status status = prepare_output(x_output, y_output, num_x_output, num_y_output, parallel,
                                         allocator, &cells, &problem.buckets);
    problem.cells = cells;
    if (status == SPART_OK) {
        status = spart_triples_list_rows(triples, num_x_input - 1, parallel, list_clipped_rows,
                                         &problem);
    }
    spart_free(allocator, cells);
    spart_free(allocator, problem.buckets.start);
    spart_free(allocator, problem.buckets.cell_index);
    return status;
}
