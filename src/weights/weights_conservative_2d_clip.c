/*
 * src/weights/weights_conservative_2d_clip.c: first-order conservative weights from
 * a 2-D logically rectangular grid onto a uniform axis-aligned lattice.
 *
 * The input vertices are first expressed in lattice-cell units, as
 * regridding 3.6.0 maps them (_weights_conservative_2d/_clipping), so that
 * output cell (i, j) is the unit square [i, i+1] x [j, j+1]. Where the
 * package clips each input cell against the four half-planes of every
 * lattice cell of its bounding box, this file finds all the overlaps of a
 * cell in one walk along its four edges, by Green's theorem: the signed
 * area of a polygon P inside the unit square of column c and row r is
 *
 *     - sum over the edges of P of the integral of clamp(y - r, 0, 1) dx
 *       along the part of the edge with c <= x <= c + 1.
 *
 * Each edge is cut where it crosses a lattice line, into pieces that each
 * lie in one lattice cell; a piece from (xa, ya) to (xb, yb) in column c,
 * row r adds the trapezoid (xa - xb) ((ya - r) + (yb - r)) / 2 to its own
 * cell and its full height, xa - xb, to every cell below it in its column;
 * one running sum per column, from the top of the cell's block down, adds
 * those up. Vertical edges add nothing. Pieces left or right of the
 * lattice are dropped, pieces below it add nothing, pieces above it add
 * their height to the whole column: the parts of a cell outside the lattice
 * give no weight, as in the package. Each non-zero overlap over the cell's
 * signed area (so orientation cancels), times weights_input, is one entry.
 * The work per input cell is the number of lattice lines its edges cross
 * plus the number of lattice cells of its bounding box, with no
 * allocation: one scratch block per thread, grown when a cell needs more.
 *
 * Most cells, when the two grids have cells of similar sizes, lie inside
 * one lattice cell (their entry is weights_input, at once) or inside a
 * block of 2 x 2, 2 x 1 or 1 x 2 lattice cells: those take the same sums
 * with the block's one inner line per axis handled by clamps instead of
 * the walk, so that hardly any branch depends on the cell's shape (which
 * no branch predictor could learn), and the two columns of a block are
 * summed side by side in the two lanes of a vector. Only larger cells, and
 * cells reaching out of the lattice, walk.
 *
 * The sums are the exact overlaps up to rounding, as the package's clipped
 * polygons are, but in a different order, so the weights differ from the
 * package's in the last bits (about 1e-15 relative in the tests, and
 * closer to the exact areas; the parity tests allow 1e-12). Exact, bit for
 * bit: a cell inside one lattice cell gives weights_input (fraction 1),
 * and cells whose corners and crossings are exactly representable (dyadic
 * lattices, their refinements and coarsenings, cells with corners on the
 * lattice lines) give exact fractions; lattice cells a cell does not reach
 * get no entry.
 *
 * The walk along the edges is in src/weights/weights_conservative_2d_clip_walk.c;
 * the cells within 2 x 2 lattice cells and the driver are here.
 *
 * Entries come out sorted by (input, output) with one entry per pair:
 * input cells in C order, the lattice cells of each in C order. With
 * `parallel`, contiguous blocks of rows of input cells (one index along
 * axis 0) are weighed by OpenMP threads, each block into its own list, and
 * the lists are joined in block order; every cell is computed by the same
 * operations whatever the thread, so the result is the same, bit for bit,
 * for any thread count.
 */
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/internal.h"
#include "weights/clip_lattice_math.h"
#include "weights/lattice_steps_math.h"
#include "weights/weights_conservative_2d_clip.h"
#include "weights/weights_kernels.h"

/* How many cells of a row are made ready before they are weighed. */
#define CELLS_PER_RUN 32

/* Rows of a grid's equality tests on the threads from this many vertices
 * (a 2049^2 lattice tested on one thread took most of a device build's
 * time from host arrays); the answer is the same either way. */
#define LATTICE_TEST_THREADED ((int64_t)1 << 20)

/* Whether row i of x equals x[i * num_y] throughout (so a NaN fails). */
static int row_is_constant(const double *x, int64_t i, int64_t num_y)
{
    int same = 1;
    for (int64_t j = 0; j < num_y; j++) {
        same &= x[i * num_y + j] == x[i * num_y];
    }
    return same;
}

/* Whether row i of y equals y's first row throughout. */
static int row_is_first_row(const double *y, int64_t i, int64_t num_y)
{
    int same = 1;
    for (int64_t j = 0; j < num_y; j++) {
        same &= y[i * num_y + j] == y[j];
    }
    return same;
}

/* Whether x[i * num_y + j] equals x[i * num_y] for every j (exactly, so a
 * NaN fails), i.e. x varies only along axis 0. */
static int varies_only_along_axis_0(const double *x, int64_t num_x, int64_t num_y)
{
    if (num_x * num_y < LATTICE_TEST_THREADED) {
        for (int64_t i = 0; i < num_x; i++) {
            if (!row_is_constant(x, i, num_y)) {
                return 0; /* most grids that are not lattices fail at once */
            }
        }
        return 1;
    }
    int same = 1;
#pragma omp parallel for schedule(static) reduction(& : same)
    for (int64_t i = 0; i < num_x; i++) {
        same &= row_is_constant(x, i, num_y);
    }
    return same;
}

/* Whether y[i * num_y + j] equals y[j] for every i (exactly). */
static int varies_only_along_axis_1(const double *y, int64_t num_x, int64_t num_y)
{
    if (num_x * num_y < LATTICE_TEST_THREADED) {
        for (int64_t i = 0; i < num_x; i++) {
            if (!row_is_first_row(y, i, num_y)) {
                return 0;
            }
        }
        return 1;
    }
    int same = 1;
#pragma omp parallel for schedule(static) reduction(& : same)
    for (int64_t i = 0; i < num_x; i++) {
        same &= row_is_first_row(y, i, num_y);
    }
    return same;
}

/* Whether the num vertices a[0], a[stride], ... have finite steps, the
 * first non-zero and every one within SPART_LATTICE_RTOL of the first
 * (spart_lattice_step_fits, shared with the device's test). */
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
        if (!spart_lattice_step_fits(step, step_first)) {
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

/* The input grid in lattice-cell units, and the lattice's cell counts. */
typedef struct clip_problem {
    const double *x; /* x[i * num_y + j], (x - x0) / step_x */
    const double *y;
    int64_t num_y;       /* input vertices along axis 1 */
    int64_t num_cells_x; /* lattice cells along each axis */
    int64_t num_cells_y;
    const double *weights_input;
} clip_problem;

/* Append the overlaps of a cell inside a block of at most 2 x 2 lattice
 * cells that are not 0 (those outside the block, when it has one column
 * or row, are 0), times weight_per_area. Every candidate is written and
 * only the non-zero ones are kept (the count moves on by 0 or 1), because
 * which of them are 0 follows no pattern a branch predictor could learn.
 * 0 on success, -1 when out of memory. */
static int append_overlaps_2x2(double overlap[2][2], const spart_clip_block *block,
                               int64_t num_cells_y, int64_t index_input, double weight_per_area,
                               spart_triples *list)
{
    while (list->count + 4 > list->capacity) {
        if (spart_triples_grow(list) != 0) {
            return -1;
        }
    }
    int64_t count = list->count;
    for (int64_t c = 0; c < 2; c++) {
        const int64_t first_output = (block->lower_x + c) * num_cells_y + block->lower_y;
        for (int64_t r = 0; r < 2; r++) {
            list->indices_input[count] = index_input;
            list->indices_output[count] = first_output + r;
            list->values[count] = overlap[c][r] * weight_per_area;
            count += overlap[c][r] != 0;
        }
    }
    list->count = count;
    return 0;
}

/* The corners of input cell (i, j) in winding order: (i, j), (i+1, j),
 * (i+1, j+1), (i, j+1). */
static void cell_corners(const clip_problem *problem, int64_t i, int64_t j, double *cx, double *cy)
{
    const double *x_0 = problem->x + i * problem->num_y + j, *x_1 = x_0 + problem->num_y;
    const double *y_0 = problem->y + i * problem->num_y + j, *y_1 = y_0 + problem->num_y;
    cx[0] = x_0[0];
    cx[1] = x_1[0];
    cx[2] = x_1[1];
    cx[3] = x_0[1];
    cy[0] = y_0[0];
    cy[1] = y_1[0];
    cy[2] = y_1[1];
    cy[3] = y_0[1];
}

/* Make input cell (i, j) ready to be weighed. */
static void cell_prepare(const clip_problem *problem, int64_t i, int64_t j, spart_clip_cell *cell)
{
    double cx[4], cy[4];
    cell_corners(problem, i, j, cx, cy);
    const int64_t index_input = i * (problem->num_y - 1) + j;
    const double weight_input =
        problem->weights_input != NULL ? problem->weights_input[index_input] : 1.0;
    spart_clip_cell_prepare(cx, cy, problem->num_cells_x, problem->num_cells_y, weight_input, cell);
}

/* Weigh input cell `index_input`, made ready in `cell`, against the
 * lattice cells of its block and append its entries. 0 on success, -1
 * when out of memory. */
static int weigh_cell(const clip_problem *problem, block_sums *sums, const spart_clip_cell *cell,
                      int64_t index_input, spart_triples *list)
{
    const spart_clip_block *block = &cell->block;
    double overlap[2][2];
    switch (cell->kind) {
    case SPART_CLIP_INSIDE_ONE:
        return spart_triples_append(list, index_input,
                                    block->lower_x * problem->num_cells_y + block->lower_y,
                                    cell->weight);
    case SPART_CLIP_ONE_ROW:
    case SPART_CLIP_ONE_COLUMN:
    case SPART_CLIP_2X2:
        spart_clip_overlaps_small(cell, overlap);
        return append_overlaps_2x2(overlap, block, problem->num_cells_y, index_input, cell->weight,
                                   list);
    case SPART_CLIP_WALK:
        if (spart_clip_sums_start(sums, block->width, block->height) != 0) {
            return -1;
        }
        spart_clip_add_cell(&sums->block, cell->x, cell->y);
        return spart_clip_append_overlaps(sums, block, problem->num_cells_y, index_input,
                                          cell->weight, list);
    default: return 0; /* SPART_CLIP_NONE */
    }
}

/* About how many entries rows first..last-1 of input cells give: a box of
 * w x h lattice cells at a random place covers (w + 1)(h + 1) of them on
 * average. Every sixteenth row is enough for an estimate. */
static double entries_expected(const clip_problem *problem, int64_t first, int64_t last)
{
    const int64_t stride = 16;
    double expected = 0.0;
    int64_t rows_seen = 0;
    for (int64_t i = first; i < last; i += stride) {
        const double *x_0 = problem->x + i * problem->num_y, *x_1 = x_0 + problem->num_y;
        const double *y_0 = problem->y + i * problem->num_y, *y_1 = y_0 + problem->num_y;
        for (int64_t j = 0; j + 1 < problem->num_y; j++) {
            double width = spart_clip_max4(x_0[j], x_1[j], x_1[j + 1], x_0[j + 1]) -
                           spart_clip_min4(x_0[j], x_1[j], x_1[j + 1], x_0[j + 1]);
            double height = spart_clip_max4(y_0[j], y_1[j], y_1[j + 1], y_0[j + 1]) -
                            spart_clip_min4(y_0[j], y_1[j], y_1[j + 1], y_0[j + 1]);
            expected += (width + 1) * (height + 1);
        }
        rows_seen++;
    }
    return rows_seen > 0 ? expected * (double)(last - first) / (double)rows_seen : 0.0;
}

/* Weigh rows first..last-1 of input cells (row i: cells (i, 0), (i, 1),
 * ...) into `list`, in order, with a scratch block of their own. The list
 * gets its room at once, so that it is seldom copied as it grows: as many
 * entries as expected from the cells' bounding boxes, but not more than 4
 * per input cell (a thin cell lying across the lattice can have a box far
 * larger than what it covers; such lists grow as they fill instead), and
 * at least twice what the list had (a list that gathers many elements in
 * turn then seldom grows). 0 on success, -1 when out of memory. */
static int clip_rows(const clip_problem *problem, int64_t first, int64_t last, spart_triples *list)
{
    const double num_cells = (double)((last - first) * (problem->num_y - 1));
    const double expected = entries_expected(problem, first, last);
    const double room = expected < 4 * num_cells ? expected : 4 * num_cells;
    if (spart_triples_reserve_more(list, (int64_t)room) != 0) {
        return -1;
    }
    block_sums sums;
    spart_clip_sums_init(&sums, list->allocator);
    int failed = 0;
    const int64_t num_cells_row = problem->num_y - 1;
    for (int64_t i = first; i < last && !failed; i++) {
        /* page in the room of a row in bulk: most cells give at most 4
         * entries */
        spart_triples_prepare(list, 4 * num_cells_row);
        /* A run of cells is made ready first, then weighed: the first
         * loop's cells are short and independent, so the processor
         * overlaps them, and the second starts each cell's sums at once. */
        for (int64_t j_run = 0; j_run < num_cells_row && !failed; j_run += CELLS_PER_RUN) {
            const int64_t run =
                num_cells_row - j_run < CELLS_PER_RUN ? num_cells_row - j_run : CELLS_PER_RUN;
            spart_clip_cell cells[CELLS_PER_RUN];
            for (int64_t k = 0; k < run; k++) {
                cell_prepare(problem, i, j_run + k, &cells[k]);
            }
            const int64_t first_index = i * num_cells_row + j_run;
            for (int64_t k = 0; k < run && !failed; k++) {
                failed = weigh_cell(problem, &sums, &cells[k], first_index + k, list) != 0;
            }
        }
    }
    spart_clip_sums_release(&sums);
    return failed ? -1 : 0;
}

/* clip_rows as spart_triples_list_rows takes it. */
static int list_clipped_rows(const void *problem, int64_t first, int64_t last, spart_triples *list)
{
    return clip_rows(problem, first, last, list);
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
        x[k] = spart_clip_lattice_units(x_input[k], origin_x, step_x);
        y[k] = spart_clip_lattice_units(y_input[k], origin_y, step_y);
    }
    const clip_problem problem = {
        .x = x,
        .y = y,
        .num_y = num_y_input,
        .num_cells_x = num_x_output - 1,
        .num_cells_y = num_y_output - 1,
        .weights_input = weights_input,
    };
    spart_status status =
        spart_triples_list_rows(triples, num_x_input - 1, parallel, list_clipped_rows, &problem);
    spart_free(triples->allocator, x);
    spart_free(triples->allocator, y);
    return status;
}
