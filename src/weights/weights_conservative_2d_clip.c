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
#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/internal.h"
#include "weights/weights_conservative_2d_clip.h"
#include "weights/weights_kernels.h"

/* The lattice's relative tolerance on its steps, as the reference's. */
#define LATTICE_RTOL 1e-10

/* How many cells of a row are made ready before they are weighed. */
#define CELLS_PER_RUN 32

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

/* The input grid in lattice-cell units, and the lattice's cell counts. */
typedef struct clip_problem {
    const double *x; /* x[i * num_y + j], (x - x0) / step_x */
    const double *y;
    int64_t num_y;       /* input vertices along axis 1 */
    int64_t num_cells_x; /* lattice cells along each axis */
    int64_t num_cells_y;
    const double *weights_input;
} clip_problem;

/* The smaller and the larger of two numbers, in the form compilers turn
 * into single instructions (minsd, maxsd). */
static double min_of(double a, double b)
{
    return a < b ? a : b;
}

static double max_of(double a, double b)
{
    return a > b ? a : b;
}

/* floor(value) clamped to [0, limit], with NaN read as 0: the value is
 * clamped first (a NaN fails value > 0), then truncated, which is floor
 * for a value >= 0; no branch. */
static int64_t floor_clamped(double value, int64_t limit)
{
    return (int64_t)min_of(max_of(value, 0.0), (double)limit);
}

/* ceil(value) clamped to [0, limit], with NaN read as limit: the value is
 * clamped first (a NaN fails value < limit), then truncated and raised by
 * one when that lost a fraction; no branch. */
static int64_t ceil_clamped(double value, int64_t limit)
{
    const double clamped = max_of(min_of(value, (double)limit), 0.0);
    const int64_t truncated = (int64_t)clamped;
    return truncated + ((double)truncated < clamped);
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

/* The signed area of the quadrilateral (x[k], y[k]), k = 0..3, in winding
 * order: half the cross product of its diagonals, which is the shoelace
 * sum regrouped, with differences of nearby coordinates instead of
 * products of large ones. */
static double quadrilateral_area(const double *x, const double *y)
{
    return ((x[2] - x[0]) * (y[3] - y[1]) - (x[3] - x[1]) * (y[2] - y[0])) * 0.5;
}

/* The sums of one column of a block of at most 2 x 2 lattice cells: twice
 * the moments of the pieces in row 0 (from the cell's lowest point) and
 * in row 1 (from y = 1), the heights of those in row 1, and the widths of
 * those in row 0 (whether the cell reaches row 0 of the column at all). */
typedef struct column_2x2 {
    double moment_0, moment_1;
    double height_1;
    double width_0;
} column_2x2;

/* max(d, 0), exactly (d + |d| is 2d or 0), in arithmetic rather than a
 * comparison: compilers turn comparisons with constants into branches,
 * which the shapes of the cells would make unpredictable. */
static double positive_part(double d)
{
    return (d + fabs(d)) * 0.5;
}

/* Add the part of an edge that lies in one column, from (xa, ya) to
 * (xb, yb) (xa = xb when the edge does not reach the column). The part is
 * shared between the rows by the fraction of its height below y = 1
 * (DBL_MIN keeps a level part from dividing 0 by 0: on the line it
 * belongs to row 1, as in the walk). Its piece in row 0 runs from `low` to
 * min(high, 1) = high - height_above, the one in row 1 from max(low, 1) =
 * (low - 1) + height_below + 1 to `high` (exactly: heights lie in [0, 2],
 * where h - 1 is exact whenever it is positive). */
static inline void add_column_part(column_2x2 *column, double xa, double ya, double xb, double yb,
                                   double lowest)
{
    const double low = min_of(ya, yb), high = max_of(ya, yb);
    const double height_below = positive_part(1.0 - low);  /* 1 - min(low, 1) */
    const double height_above = positive_part(high - 1.0); /* max(high, 1) - 1 */
    const double below = height_below / max_of((high - low) + DBL_MIN, height_below);
    const double minus_dx = xa - xb;
    const double minus_dx_0 = minus_dx * below;
    const double minus_dx_1 = minus_dx - minus_dx_0;
    column->moment_0 += minus_dx_0 * ((low - lowest) + ((high - height_above) - lowest));
    column->moment_1 += minus_dx_1 * (((low - 1.0) + height_below) + height_above);
    column->height_1 += minus_dx_1;
    column->width_0 += fabs(minus_dx_0);
}

/* The overlaps of a column's parts: row 0 holds nothing below it, so its
 * overlap is written with the heights of row 1, as in overlap_of. */
static void column_overlaps(const column_2x2 *column, double lowest, double *overlap)
{
    overlap[0] =
        column->width_0 > 0 ? column->moment_0 * 0.5 + (1.0 - lowest) * column->height_1 : 0.0;
    overlap[1] = column->moment_1 * 0.5;
}

/* Two doubles that go through the same operations, the left column's
 * (lane 0) and the right one's (lane 1): a vector of two lanes (the
 * vector_size extension of GCC and Clang). Each lane's arithmetic is IEEE
 * double arithmetic, exactly as on a lone double (and never contracted:
 * -ffp-contract=off), so the sums are the bits the scalar code gives;
 * where the processor has two-lane vectors (SSE2 on every x86-64, NEON)
 * each operation is one instruction for both columns, which takes about
 * a tenth off the lattice kernel. */
typedef double pair __attribute__((vector_size(16)));
typedef int64_t pair_mask __attribute__((vector_size(16)));

static inline pair pair_of(double a)
{
    return (pair){a, a};
}

/* min_of and max_of on each lane (a < b ? a : b, and a > b ? a : b).
 * SSE2's MINPD and MAXPD compute exactly these, NaNs and signed zeros
 * included (either comparison false: the second operand), in one
 * instruction where the comparison and blend take five; elsewhere the
 * blend is written out. */
static inline pair pair_min(pair a, pair b)
{
#ifdef __SSE2__
    return (pair)_mm_min_pd((__m128d)a, (__m128d)b);
#else
    const pair_mask a_smaller = a < b;
    return (pair)((a_smaller & (pair_mask)a) | (~a_smaller & (pair_mask)b));
#endif
}

static inline pair pair_max(pair a, pair b)
{
#ifdef __SSE2__
    return (pair)_mm_max_pd((__m128d)a, (__m128d)b);
#else
    const pair_mask a_larger = a > b;
    return (pair)((a_larger & (pair_mask)a) | (~a_larger & (pair_mask)b));
#endif
}

/* fabs on each lane: the sign bit cleared. */
static inline pair pair_abs(pair a)
{
    return (pair)((pair_mask)a & (pair_mask){INT64_MAX, INT64_MAX});
}

/* positive_part on each lane. With MAXPD (no branch) it is max(d, 0)
 * itself, one instruction where the sum takes three, and the same number
 * for every d it is given here: heights within a block of 2 x 2 lattice
 * cells, far from overflow, -0 included (both give +0). (A NaN, which
 * only an edge of NaN crossings could bring, gives 0 here but leaves the
 * column's sums NaN all the same, through `below`.) */
static inline pair pair_positive_part(pair d)
{
#ifdef __SSE2__
    return pair_max(d, pair_of(0.0));
#else
    return (d + pair_abs(d)) * 0.5;
#endif
}

/* The corners of a cell in a block of two columns (0 <= x <= 2) clamped
 * to the left column (lane 0) and to the right one (lane 1): each clamp is
 * one bound. */
static void clamp_to_columns(const double *x, pair *clamped)
{
    for (int k = 0; k < 4; k++) {
        clamped[k] = (pair){min_of(x[k], 1.0), max_of(x[k], 1.0)};
    }
}

/* column_2x2 of the two columns, lane 0 the left, lane 1 the right. */
typedef struct columns_2x2 {
    pair moment_0, moment_1;
    pair height_1;
    pair width_0;
} columns_2x2;

/* add_column_part on both columns at once. */
static inline void add_column_parts(columns_2x2 *columns, pair xa, pair ya, pair xb, pair yb,
                                    double lowest)
{
    const pair low = pair_min(ya, yb), high = pair_max(ya, yb);
    const pair height_below = pair_positive_part(1.0 - low);
    const pair height_above = pair_positive_part(high - 1.0);
    const pair below = height_below / pair_max((high - low) + DBL_MIN, height_below);
    const pair minus_dx = xa - xb;
    const pair minus_dx_0 = minus_dx * below;
    const pair minus_dx_1 = minus_dx - minus_dx_0;
    columns->moment_0 += minus_dx_0 * ((low - lowest) + ((high - height_above) - lowest));
    columns->moment_1 += minus_dx_1 * (((low - 1.0) + height_below) + height_above);
    columns->height_1 += minus_dx_1;
    columns->width_0 += pair_abs(minus_dx_0);
}

/* The slopes (y[next] - y[k]) / (x[next] - x[k]) of a cell's four edges,
 * two edges to a vector division: each lane is the division a lone double
 * would do, so the slopes are the same numbers, for half the divisions.
 * A vertical edge (x[next] = x[k]) gets an infinity or a NaN, which the
 * callers never use: they skip vertical edges. */
static inline void edge_slopes(const double *x, const double *y, double *slope)
{
    const pair dx_01 = (pair){x[1], x[2]} - (pair){x[0], x[1]};
    const pair dx_23 = (pair){x[3], x[0]} - (pair){x[2], x[3]};
    const pair dy_01 = (pair){y[1], y[2]} - (pair){y[0], y[1]};
    const pair dy_23 = (pair){y[3], y[0]} - (pair){y[2], y[3]};
    const pair slope_01 = dy_01 / dx_01, slope_23 = dy_23 / dx_23;
    slope[0] = slope_01[0];
    slope[1] = slope_01[1];
    slope[2] = slope_23[0];
    slope[3] = slope_23[1];
}

/* The overlaps of a cell that lies inside a block of 2 x 2 lattice cells
 * (block coordinates in [0, 2] x [0, 2]), overlap[c][r] for column c and
 * row r: the sums of the walk, with the one inner line of each axis
 * (x = 1, y = 1) handled by clamps instead of crossings, so that hardly
 * any branch depends on the cell's shape. Moments are taken from the
 * cell's lowest point (`lowest`, in [0, 1)) in row 0 and from y = 1 in
 * row 1. The two columns are summed side by side, in the lanes of pairs. */
static void overlaps_within_2x2(const double *x, const double *y, double lowest,
                                double overlap[2][2])
{
    pair clamped[4];
    clamp_to_columns(x, clamped);
    double slope[4];
    edge_slopes(x, y, slope);
    columns_2x2 sums = {pair_of(0.0), pair_of(0.0), pair_of(0.0), pair_of(0.0)};
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        if (x[next] == x[k]) {
            continue; /* vertical: no area */
        }
        add_column_parts(&sums, clamped[k], y[k] + (clamped[k] - x[k]) * slope[k], clamped[next],
                         y[k] + (clamped[next] - x[k]) * slope[k], lowest);
    }
    /* column_overlaps on both columns at once: the same operations lane by
     * lane, and +0 (all bits clear) where a column does not reach row 0 */
    const pair row_0 = sums.moment_0 * 0.5 + (1.0 - lowest) * sums.height_1;
    const pair_mask reaches_row_0 = sums.width_0 > 0.0;
    const pair overlap_0 = (pair)((pair_mask)row_0 & reaches_row_0);
    const pair overlap_1 = sums.moment_1 * 0.5;
    for (int c = 0; c < 2; c++) {
        overlap[c][0] = overlap_0[c];
        overlap[c][1] = overlap_1[c];
    }
}

/* The same for a cell inside one column of two lattice cells (block
 * coordinates in [0, 1] x [0, 2]): its edges are the column's parts. */
static void overlaps_within_one_column(const double *x, const double *y, double lowest,
                                       double overlap[2][2])
{
    column_2x2 column = {0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        add_column_part(&column, x[k], y[k], x[next], y[next], lowest);
    }
    column_overlaps(&column, lowest, overlap[0]);
    overlap[1][0] = 0.0;
    overlap[1][1] = 0.0;
}

/* The same for a cell inside one row of two lattice cells (block
 * coordinates in [0, 2] x [0, 1]): no row line to cut at, so each
 * column's overlap is the moment of its parts from the cell's lowest
 * point. */
static void overlaps_within_one_row(const double *x, const double *y, double lowest,
                                    double overlap[2][2])
{
    pair clamped[4];
    clamp_to_columns(x, clamped);
    double slope[4];
    edge_slopes(x, y, slope);
    pair twice_moment = pair_of(0.0);
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        if (x[next] == x[k]) {
            continue; /* vertical: no area */
        }
        const pair y_start = y[k] + (clamped[k] - x[k]) * slope[k];
        const pair y_end = y[k] + (clamped[next] - x[k]) * slope[k];
        twice_moment += (clamped[k] - clamped[next]) * ((y_start - lowest) + (y_end - lowest));
    }
    for (int c = 0; c < 2; c++) {
        overlap[c][0] = twice_moment[c] * 0.5;
        overlap[c][1] = 0.0;
    }
}

/* Append the overlaps of a cell inside a block of at most 2 x 2 lattice
 * cells that are not 0 (those outside the block, when it has one column
 * or row, are 0), times weight_per_area. Every candidate is written and
 * only the non-zero ones are kept (the count moves on by 0 or 1), because
 * which of them are 0 follows no pattern a branch predictor could learn.
 * 0 on success, -1 when out of memory. */
static int append_overlaps_2x2(double overlap[2][2], const cell_block *block, int64_t num_cells_y,
                               int64_t index_input, double weight_per_area, spart_triples *list)
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

/* The block of lattice cells that the bounding box [min_x, max_x] x
 * [min_y, max_y] covers inside the lattice (width or height 0 or less:
 * none). */
static cell_block block_of(const clip_problem *problem, double min_x, double max_x, double min_y,
                           double max_y)
{
    cell_block block;
    block.lower_x = floor_clamped(min_x, problem->num_cells_x);
    block.lower_y = floor_clamped(min_y, problem->num_cells_y);
    block.width = ceil_clamped(max_x, problem->num_cells_x) - block.lower_x;
    block.height = ceil_clamped(max_y, problem->num_cells_y) - block.lower_y;
    return block;
}

/* The ways a cell is weighed: not at all (outside the lattice, or no
 * area), inside one lattice cell (all of it), inside a block of at most
 * 2 x 2 lattice cells (one row, one column, or both of each: sums with
 * clamps), or by the walk along its edges. */
enum cell_kind { CELL_NONE, CELL_INSIDE_ONE, CELL_ONE_ROW, CELL_ONE_COLUMN, CELL_2X2, CELL_WALK };

/* An input cell made ready to be weighed: its corners in block
 * coordinates (winding order), its block, its lowest y in block
 * coordinates, and the weight of all of it (CELL_INSIDE_ONE:
 * weights_input) or per unit of area (weights_input over the cell's
 * area). */
typedef struct cell_geometry {
    double x[4], y[4];
    cell_block block;
    double lowest;
    double weight;
    int kind;
} cell_geometry;

/* Make input cell (i, j) ready to be weighed. */
static void cell_geometry_of(const clip_problem *problem, int64_t i, int64_t j, cell_geometry *cell)
{
    double cx[4], cy[4];
    cell_corners(problem, i, j, cx, cy);
    const double min_x = min4(cx[0], cx[1], cx[2], cx[3]);
    const double max_x = max4(cx[0], cx[1], cx[2], cx[3]);
    const double min_y = min4(cy[0], cy[1], cy[2], cy[3]);
    const double max_y = max4(cy[0], cy[1], cy[2], cy[3]);
    const cell_block block = block_of(problem, min_x, max_x, min_y, max_y);
    cell->block = block;
    cell->kind = CELL_NONE;
    if (block.width <= 0 || block.height <= 0) {
        return;
    }

    /* the cell in block coordinates: small numbers, whose differences and
     * crossings with the lattice lines round little */
    for (int k = 0; k < 4; k++) {
        cell->x[k] = cx[k] - (double)block.lower_x;
        cell->y[k] = cy[k] - (double)block.lower_y;
    }
    const double area_cell = quadrilateral_area(cell->x, cell->y);
    if (area_cell == 0) {
        return; /* no area to share out */
    }
    const int64_t index_input = i * (problem->num_y - 1) + j;
    const double weight_input =
        problem->weights_input != NULL ? problem->weights_input[index_input] : 1.0;

    /* inside one lattice cell: all of it, exactly */
    if (block.width == 1 && block.height == 1 && min_x >= (double)block.lower_x &&
        max_x <= (double)(block.lower_x + 1) && min_y >= (double)block.lower_y &&
        max_y <= (double)(block.lower_y + 1)) {
        cell->kind = CELL_INSIDE_ONE;
        cell->weight = weight_input;
        return;
    }

    /* the fraction of the cell in a lattice cell, times weights_input */
    cell->weight = weight_input / area_cell;
    cell->lowest = min_y - (double)block.lower_y;

    /* inside a block of 2 x 2 lattice cells at most: without a walk */
    if (block.width <= 2 && block.height <= 2 && min_x >= (double)block.lower_x &&
        max_x <= (double)(block.lower_x + block.width) && min_y >= (double)block.lower_y &&
        max_y <= (double)(block.lower_y + block.height)) {
        cell->kind = block.height == 1  ? CELL_ONE_ROW
                     : block.width == 1 ? CELL_ONE_COLUMN
                                        : CELL_2X2;
        return;
    }
    cell->kind = CELL_WALK;
}

/* Weigh input cell `index_input`, made ready in `cell`, against the
 * lattice cells of its block and append its entries. 0 on success, -1
 * when out of memory. */
static int weigh_cell(const clip_problem *problem, block_sums *sums, const cell_geometry *cell,
                      int64_t index_input, spart_triples *list)
{
    const cell_block *block = &cell->block;
    double overlap[2][2];
    switch (cell->kind) {
    case CELL_INSIDE_ONE:
        return spart_triples_append(list, index_input,
                                    block->lower_x * problem->num_cells_y + block->lower_y,
                                    cell->weight);
    case CELL_ONE_ROW: overlaps_within_one_row(cell->x, cell->y, cell->lowest, overlap); break;
    case CELL_ONE_COLUMN:
        overlaps_within_one_column(cell->x, cell->y, cell->lowest, overlap);
        break;
    case CELL_2X2: overlaps_within_2x2(cell->x, cell->y, cell->lowest, overlap); break;
    case CELL_WALK:
        if (spart_clip_sums_start(sums, block->width, block->height) != 0) {
            return -1;
        }
        for (int k = 0; k < 4; k++) {
            int next = (k + 1) % 4;
            spart_clip_add_edge(sums, cell->x[k], cell->y[k], cell->x[next], cell->y[next]);
        }
        return spart_clip_append_overlaps(sums, block, problem->num_cells_y, index_input,
                                          cell->weight, list);
    default: return 0; /* CELL_NONE */
    }
    return append_overlaps_2x2(overlap, block, problem->num_cells_y, index_input, cell->weight,
                               list);
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
            double width = max4(x_0[j], x_1[j], x_1[j + 1], x_0[j + 1]) -
                           min4(x_0[j], x_1[j], x_1[j + 1], x_0[j + 1]);
            double height = max4(y_0[j], y_1[j], y_1[j + 1], y_0[j + 1]) -
                            min4(y_0[j], y_1[j], y_1[j + 1], y_0[j + 1]);
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
            cell_geometry cells[CELLS_PER_RUN];
            for (int64_t k = 0; k < run; k++) {
                cell_geometry_of(problem, i, j_run + k, &cells[k]);
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
    spart_status status =
        spart_triples_list_rows(triples, num_x_input - 1, parallel, list_clipped_rows, &problem);
    spart_free(triples->allocator, x);
    spart_free(triples->allocator, y);
    return status;
}
