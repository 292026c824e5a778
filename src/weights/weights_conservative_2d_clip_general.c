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
#include "weights/clip_polygon_math.h"
#include "weights/weights_kernels.h"

/* The most entries per output cell in the bucket lists, on average. Cells
 * about as wide as a bucket take about 4. */
#define MAX_LISTINGS_PER_CELL 16

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
    const spart_clip_output_cell *cells; /* unusable ones are not listed in any bucket */
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
static int listings_exceed(const spart_clip_output_cell *cells, const unsigned char *usable,
                           int64_t num_cells, const bucket_grid *grid, int64_t limit)
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
static void size_bucket_grid(const spart_clip_output_cell *cells, const unsigned char *usable,
                             int64_t num_cells, bucket_grid *grid)
{
    double low_x = INFINITY, high_x = -INFINITY, low_y = INFINITY, high_y = -INFINITY;
    int64_t num_usable = 0;
    for (int64_t c = 0; c < num_cells; c++) {
        if (usable[c]) {
            low_x = spart_clip_smaller(low_x, cells[c].box[0]);
            high_x = spart_clip_larger(high_x, cells[c].box[1]);
            low_y = spart_clip_smaller(low_y, cells[c].box[2]);
            high_y = spart_clip_larger(high_y, cells[c].box[3]);
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
static spart_status fill_bucket_grid(spart_clip_output_cell *cells, const unsigned char *usable,
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
                                   const spart_allocator *allocator,
                                   spart_clip_output_cell **cells_out, bucket_grid *grid)
{
    const int64_t num_cells_y = num_y_output - 1;
    const int64_t num_cells = (num_x_output - 1) * num_cells_y;
    spart_clip_output_cell *cells = spart_alloc(allocator, (size_t)num_cells, sizeof *cells);
    unsigned char *usable = spart_alloc(allocator, (size_t)num_cells, sizeof *usable);
    *cells_out = cells;
    if (cells == NULL || usable == NULL) {
        spart_free(allocator, usable);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static) num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
    for (int64_t c = 0; c < num_cells; c++) {
        usable[c] = (unsigned char)spart_clip_output_cell_prepare(
            x_output, y_output, num_y_output, c / num_cells_y, c % num_cells_y, &cells[c]);
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

/* Clip `subject` (input cell shifted by (-shift_x, -shift_y), box `box`)
 * against every output cell whose box overlaps its own, into `overlaps`,
 * unsorted. 0 on success, -1 when out of memory. */
static int find_overlaps(const clip_problem *problem, const spart_clip_polygon *subject,
                         const double *box, double shift_x, double shift_y, overlap_list *overlaps)
{
    const bucket_grid *grid = &problem->buckets;
    int64_t low_x, high_x, low_y, high_y;
    buckets_of_box(grid, box, &low_x, &high_x, &low_y, &high_y);
    spart_clip_polygon buffer[2];
    for (int64_t a = low_x; a <= high_x; a++) {
        for (int64_t b = low_y; b <= high_y; b++) {
            const int64_t bucket = a * grid->num_y + b;
            for (int64_t k = grid->start[bucket]; k < grid->start[bucket + 1]; k++) {
                const int64_t c = grid->cell_index[k];
                const spart_clip_output_cell *cell = &problem->cells[c];
                if (!spart_clip_boxes_overlap(box, cell->box)) {
                    continue;
                }
                /* visit the pair only in the first bucket both boxes touch */
                if (a != (cell->first_bucket_x > low_x ? cell->first_bucket_x : low_x) ||
                    b != (cell->first_bucket_y > low_y ? cell->first_bucket_y : low_y)) {
                    continue;
                }
                double area = spart_clip_overlap_area(subject, cell, shift_x, shift_y, buffer);
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
    spart_clip_polygon subject;
    double box[4], shift_x, shift_y;
    const double area_input = spart_clip_input_cell_prepare(
        problem->x_input, problem->y_input, num_y, i, j, &subject, box, &shift_x, &shift_y);
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
        double value = spart_clip_overlap_value(overlaps->items[k].area, area_input, weight_input);
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
    spart_clip_output_cell *cells = NULL;
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
