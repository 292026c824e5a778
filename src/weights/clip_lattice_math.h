/*
 * src/weights/clip_lattice_math.h: the arithmetic of the conservative 2-D
 * weights onto a lattice, written once for the host kernel
 * (src/weights/weights_conservative_2d_clip.c and _clip_walk.c) and its
 * device twin (kernels/weights_conservative_2d_lattice.cu), so that the
 * two cannot drift: every overlap of an input cell with a lattice cell is
 * computed here, by the same operations in the same order on both, and so
 * are the decisions (which lattice cells a cell reaches, which way it is
 * weighed, which overlaps are zero). Host and device then give the same
 * entries bit for bit, in the same order: input cells in C order, the
 * lattice cells of each in C order, one entry per non-zero overlap (and
 * one for a cell inside one lattice cell, whatever its weight).
 * weights_conservative_2d_clip.c says how the sums go (Green's theorem
 * along the cell's edges, column by column).
 *
 * Arithmetic: +, -, *, / and comparisons only, each rounded on its own
 * (host: -ffp-contract=off, no fast-math; CUDA: --fmad=false,
 * --prec-div=true), no library call but fabs. The two columns of a block
 * of 2 x 2 lattice cells are summed side by side in a `spart_clip_pair`:
 * on the host two lanes of a vector (SSE2, NEON), on the device a struct
 * of two doubles with the same operators; each lane is a lone double's
 * IEEE arithmetic either way, so the lanes are the bits scalar code gives.
 * Minima and maxima are `a < b ? a : b` and `a > b ? a : b` on both
 * (SSE2's MINPD and MAXPD compute exactly these, NaNs and signed zeros
 * included).
 *
 * Static inline, no state, no allocation: the walk's scratch (a block's
 * sums) is the caller's. A CUDA file includes this header with
 * SPART_MATH_FUNCTION defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_CLIP_LATTICE_MATH_H
#define SPART_CLIP_LATTICE_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

#include "weights/clip_pair.h"

/* ---- a cell and its block of lattice cells ------------------------------------------ */

/* The lattice cells of an input cell's bounding box that lie in the
 * lattice: columns lower_x .. lower_x + width - 1, rows lower_y ..
 * lower_y + height - 1. In block coordinates (the cell shifted by
 * (-lower_x, -lower_y)) column c spans c <= x <= c + 1, row r spans
 * r <= y <= r + 1; column -1 stands for everything left of the block,
 * column `width` for everything right of it, and likewise rows. */
typedef struct spart_clip_block {
    int64_t lower_x, lower_y;
    int64_t width, height;
} spart_clip_block;

/* The ways a cell is weighed: not at all (outside the lattice, or no
 * area), inside one lattice cell (all of it), inside a block of at most
 * 2 x 2 lattice cells (one row, one column, or both of each: sums with
 * clamps), or by the walk along its edges. */
enum spart_clip_kind {
    SPART_CLIP_NONE,
    SPART_CLIP_INSIDE_ONE,
    SPART_CLIP_ONE_ROW,
    SPART_CLIP_ONE_COLUMN,
    SPART_CLIP_2X2,
    SPART_CLIP_WALK
};

/* An input cell made ready to be weighed: its corners in block
 * coordinates (winding order), its block, its lowest y in block
 * coordinates, and the weight of all of it (SPART_CLIP_INSIDE_ONE:
 * weights_input) or per unit of area (weights_input over its area). */
typedef struct spart_clip_cell {
    double x[4], y[4];
    spart_clip_block block;
    double lowest;
    double weight;
    int kind;
} spart_clip_cell;

/* The smaller and the larger of two numbers (minsd, maxsd on x86). */
SPART_MATH_FUNCTION double spart_clip_min(double a, double b)
{
    return a < b ? a : b;
}

SPART_MATH_FUNCTION double spart_clip_max(double a, double b)
{
    return a > b ? a : b;
}

SPART_MATH_FUNCTION double spart_clip_min4(double a, double b, double c, double d)
{
    double m = a;
    m = b < m ? b : m;
    m = c < m ? c : m;
    return d < m ? d : m;
}

SPART_MATH_FUNCTION double spart_clip_max4(double a, double b, double c, double d)
{
    double m = a;
    m = b > m ? b : m;
    m = c > m ? c : m;
    return d > m ? d : m;
}

/* A vertex coordinate in lattice-cell units, as regridding maps it:
 * (value - origin) / step, so that lattice cell (i, j) is the unit square
 * [i, i+1] x [j, j+1]. */
SPART_MATH_FUNCTION double spart_clip_lattice_units(double value, double origin, double step)
{
    return (value - origin) / step;
}

/* floor(value) clamped to [0, limit], with NaN read as 0: the value is
 * clamped first (a NaN fails value > 0), then truncated, which is floor
 * for a value >= 0; no branch. */
SPART_MATH_FUNCTION int64_t spart_clip_floor_clamped(double value, int64_t limit)
{
    return (int64_t)spart_clip_min(spart_clip_max(value, 0.0), (double)limit);
}

/* ceil(value) clamped to [0, limit], with NaN read as limit: the value is
 * clamped first (a NaN fails value < limit), then truncated and raised by
 * one when that lost a fraction; no branch. */
SPART_MATH_FUNCTION int64_t spart_clip_ceil_clamped(double value, int64_t limit)
{
    const double clamped = spart_clip_max(spart_clip_min(value, (double)limit), 0.0);
    const int64_t truncated = (int64_t)clamped;
    return truncated + ((double)truncated < clamped);
}

/* The signed area of the quadrilateral (x[k], y[k]), k = 0..3, in winding
 * order: half the cross product of its diagonals, which is the shoelace
 * sum regrouped, with differences of nearby coordinates instead of
 * products of large ones. */
SPART_MATH_FUNCTION double spart_clip_quadrilateral_area(const double *x, const double *y)
{
    return ((x[2] - x[0]) * (y[3] - y[1]) - (x[3] - x[1]) * (y[2] - y[0])) * 0.5;
}

/* Make an input cell ready to be weighed, from its corners cx, cy in
 * lattice units (winding order: (i, j), (i+1, j), (i+1, j+1), (i, j+1)),
 * the lattice's cell counts and the cell's weights_input. */
SPART_MATH_FUNCTION void spart_clip_cell_prepare(const double *cx, const double *cy,
                                                 int64_t num_cells_x, int64_t num_cells_y,
                                                 double weight_input, spart_clip_cell *cell)
{
    const double min_x = spart_clip_min4(cx[0], cx[1], cx[2], cx[3]);
    const double max_x = spart_clip_max4(cx[0], cx[1], cx[2], cx[3]);
    const double min_y = spart_clip_min4(cy[0], cy[1], cy[2], cy[3]);
    const double max_y = spart_clip_max4(cy[0], cy[1], cy[2], cy[3]);
    spart_clip_block block;
    block.lower_x = spart_clip_floor_clamped(min_x, num_cells_x);
    block.lower_y = spart_clip_floor_clamped(min_y, num_cells_y);
    block.width = spart_clip_ceil_clamped(max_x, num_cells_x) - block.lower_x;
    block.height = spart_clip_ceil_clamped(max_y, num_cells_y) - block.lower_y;
    cell->block = block;
    cell->kind = SPART_CLIP_NONE;
    cell->lowest = 0.0;
    cell->weight = 0.0;
    if (block.width <= 0 || block.height <= 0) {
        return;
    }

    /* the cell in block coordinates: small numbers, whose differences and
     * crossings with the lattice lines round little */
    for (int k = 0; k < 4; k++) {
        cell->x[k] = cx[k] - (double)block.lower_x;
        cell->y[k] = cy[k] - (double)block.lower_y;
    }
    const double area_cell = spart_clip_quadrilateral_area(cell->x, cell->y);
    if (area_cell == 0) {
        return; /* no area to share out */
    }

    /* inside one lattice cell: all of it, exactly */
    if (block.width == 1 && block.height == 1 && min_x >= (double)block.lower_x &&
        max_x <= (double)(block.lower_x + 1) && min_y >= (double)block.lower_y &&
        max_y <= (double)(block.lower_y + 1)) {
        cell->kind = SPART_CLIP_INSIDE_ONE;
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
        cell->kind = block.height == 1  ? SPART_CLIP_ONE_ROW
                     : block.width == 1 ? SPART_CLIP_ONE_COLUMN
                                        : SPART_CLIP_2X2;
        return;
    }
    cell->kind = SPART_CLIP_WALK;
}

/* ---- cells within 2 x 2 lattice cells ------------------------------------------------ */

/* The sums of one column of a block of at most 2 x 2 lattice cells: twice
 * the moments of the pieces in row 0 (from the cell's lowest point) and
 * in row 1 (from y = 1), the heights of those in row 1, and the widths of
 * those in row 0 (whether the cell reaches row 0 of the column at all). */
typedef struct spart_clip_column_2x2 {
    double moment_0, moment_1;
    double height_1;
    double width_0;
} spart_clip_column_2x2;

/* max(d, 0), exactly (d + |d| is 2d or 0), in arithmetic rather than a
 * comparison: compilers turn comparisons with constants into branches,
 * which the shapes of the cells would make unpredictable. */
SPART_MATH_FUNCTION double spart_clip_positive_part(double d)
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
SPART_MATH_FUNCTION void spart_clip_add_column_part(spart_clip_column_2x2 *column, double xa,
                                                    double ya, double xb, double yb, double lowest)
{
    const double low = spart_clip_min(ya, yb), high = spart_clip_max(ya, yb);
    const double height_below = spart_clip_positive_part(1.0 - low);  /* 1 - min(low, 1) */
    const double height_above = spart_clip_positive_part(high - 1.0); /* max(high, 1) - 1 */
    const double below = height_below / spart_clip_max((high - low) + DBL_MIN, height_below);
    const double minus_dx = xa - xb;
    const double minus_dx_0 = minus_dx * below;
    const double minus_dx_1 = minus_dx - minus_dx_0;
    column->moment_0 += minus_dx_0 * ((low - lowest) + ((high - height_above) - lowest));
    column->moment_1 += minus_dx_1 * (((low - 1.0) + height_below) + height_above);
    column->height_1 += minus_dx_1;
    column->width_0 += fabs(minus_dx_0);
}

/* column_2x2 of the two columns, lane 0 the left, lane 1 the right. */
typedef struct spart_clip_columns_2x2 {
    spart_clip_pair moment_0, moment_1;
    spart_clip_pair height_1;
    spart_clip_pair width_0;
} spart_clip_columns_2x2;

/* spart_clip_add_column_part on both columns at once, lane by lane. Its
 * positive part is max(d, 0) (spart_clip_pair_positive_part), which for
 * the heights within a block of 2 x 2 lattice cells gives the scalar
 * form's numbers. */
SPART_MATH_FUNCTION void spart_clip_add_column_parts(spart_clip_columns_2x2 *columns,
                                                     spart_clip_pair xa, spart_clip_pair ya,
                                                     spart_clip_pair xb, spart_clip_pair yb,
                                                     double lowest)
{
    const spart_clip_pair low = spart_clip_pair_min(ya, yb), high = spart_clip_pair_max(ya, yb);
    const spart_clip_pair height_below = spart_clip_pair_positive_part(1.0 - low);
    const spart_clip_pair height_above = spart_clip_pair_positive_part(high - 1.0);
    const spart_clip_pair below =
        height_below / spart_clip_pair_max((high - low) + DBL_MIN, height_below);
    const spart_clip_pair minus_dx = xa - xb;
    const spart_clip_pair minus_dx_0 = minus_dx * below;
    const spart_clip_pair minus_dx_1 = minus_dx - minus_dx_0;
    columns->moment_0 += minus_dx_0 * ((low - lowest) + ((high - height_above) - lowest));
    columns->moment_1 += minus_dx_1 * (((low - 1.0) + height_below) + height_above);
    columns->height_1 += minus_dx_1;
    columns->width_0 += spart_clip_pair_abs(minus_dx_0);
}

/* The corners of a cell in a block of two columns (0 <= x <= 2) clamped
 * to the left column (lane 0) and to the right one (lane 1): each clamp is
 * one bound. */
SPART_MATH_FUNCTION void spart_clip_clamp_to_columns(const double *x, spart_clip_pair *clamped)
{
    for (int k = 0; k < 4; k++) {
        clamped[k] = spart_clip_pair_make(spart_clip_min(x[k], 1.0), spart_clip_max(x[k], 1.0));
    }
}

/* The slopes (y[next] - y[k]) / (x[next] - x[k]) of a cell's four edges,
 * two edges to a pair division: each lane is the division a lone double
 * would do. A vertical edge (x[next] = x[k]) gets an infinity or a NaN,
 * which the callers never use: they skip vertical edges. */
SPART_MATH_FUNCTION void spart_clip_edge_slopes(const double *x, const double *y, double *slope)
{
    const spart_clip_pair dx_01 =
        spart_clip_pair_make(x[1], x[2]) - spart_clip_pair_make(x[0], x[1]);
    const spart_clip_pair dx_23 =
        spart_clip_pair_make(x[3], x[0]) - spart_clip_pair_make(x[2], x[3]);
    const spart_clip_pair dy_01 =
        spart_clip_pair_make(y[1], y[2]) - spart_clip_pair_make(y[0], y[1]);
    const spart_clip_pair dy_23 =
        spart_clip_pair_make(y[3], y[0]) - spart_clip_pair_make(y[2], y[3]);
    const spart_clip_pair slope_01 = dy_01 / dx_01, slope_23 = dy_23 / dx_23;
    slope[0] = spart_clip_pair_lane(slope_01, 0);
    slope[1] = spart_clip_pair_lane(slope_01, 1);
    slope[2] = spart_clip_pair_lane(slope_23, 0);
    slope[3] = spart_clip_pair_lane(slope_23, 1);
}

/* The overlaps of a cell that lies inside a block of 2 x 2 lattice cells
 * (block coordinates in [0, 2] x [0, 2]), overlap[c][r] for column c and
 * row r: the sums of the walk, with the one inner line of each axis
 * (x = 1, y = 1) handled by clamps instead of crossings, so that hardly
 * any branch depends on the cell's shape. Moments are taken from the
 * cell's lowest point (`lowest`, in [0, 1)) in row 0 and from y = 1 in
 * row 1. The two columns are summed side by side, in the lanes of pairs. */
SPART_MATH_FUNCTION void spart_clip_overlaps_within_2x2(const double *x, const double *y,
                                                        double lowest, double overlap[2][2])
{
    spart_clip_pair clamped[4];
    spart_clip_clamp_to_columns(x, clamped);
    double slope[4];
    spart_clip_edge_slopes(x, y, slope);
    spart_clip_columns_2x2 sums = {spart_clip_pair_of(0.0), spart_clip_pair_of(0.0),
                                   spart_clip_pair_of(0.0), spart_clip_pair_of(0.0)};
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        if (x[next] == x[k]) {
            continue; /* vertical: no area */
        }
        spart_clip_add_column_parts(&sums, clamped[k], y[k] + (clamped[k] - x[k]) * slope[k],
                                    clamped[next], y[k] + (clamped[next] - x[k]) * slope[k],
                                    lowest);
    }
    /* the overlaps of both columns at once: the same operations lane by
     * lane, and +0 where a column does not reach row 0 (row 0 holds
     * nothing below it, so its overlap is written with row 1's heights,
     * as in spart_clip_overlap_of) */
    const spart_clip_pair row_0 = sums.moment_0 * 0.5 + (1.0 - lowest) * sums.height_1;
    const spart_clip_pair overlap_0 = spart_clip_pair_where_positive(row_0, sums.width_0);
    const spart_clip_pair overlap_1 = sums.moment_1 * 0.5;
    for (int c = 0; c < 2; c++) {
        overlap[c][0] = spart_clip_pair_lane(overlap_0, c);
        overlap[c][1] = spart_clip_pair_lane(overlap_1, c);
    }
}

/* The same for a cell inside one column of two lattice cells (block
 * coordinates in [0, 1] x [0, 2]): its edges are the column's parts. */
SPART_MATH_FUNCTION void spart_clip_overlaps_within_one_column(const double *x, const double *y,
                                                               double lowest, double overlap[2][2])
{
    spart_clip_column_2x2 column = {0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        spart_clip_add_column_part(&column, x[k], y[k], x[next], y[next], lowest);
    }
    overlap[0][0] =
        column.width_0 > 0 ? column.moment_0 * 0.5 + (1.0 - lowest) * column.height_1 : 0.0;
    overlap[0][1] = column.moment_1 * 0.5;
    overlap[1][0] = 0.0;
    overlap[1][1] = 0.0;
}

/* The same for a cell inside one row of two lattice cells (block
 * coordinates in [0, 2] x [0, 1]): no row line to cut at, so each
 * column's overlap is the moment of its parts from the cell's lowest
 * point. */
SPART_MATH_FUNCTION void spart_clip_overlaps_within_one_row(const double *x, const double *y,
                                                            double lowest, double overlap[2][2])
{
    spart_clip_pair clamped[4];
    spart_clip_clamp_to_columns(x, clamped);
    double slope[4];
    spart_clip_edge_slopes(x, y, slope);
    spart_clip_pair twice_moment = spart_clip_pair_of(0.0);
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        if (x[next] == x[k]) {
            continue; /* vertical: no area */
        }
        const spart_clip_pair y_start = y[k] + (clamped[k] - x[k]) * slope[k];
        const spart_clip_pair y_end = y[k] + (clamped[next] - x[k]) * slope[k];
        twice_moment += (clamped[k] - clamped[next]) * ((y_start - lowest) + (y_end - lowest));
    }
    for (int c = 0; c < 2; c++) {
        overlap[c][0] = spart_clip_pair_lane(twice_moment, c) * 0.5;
        overlap[c][1] = 0.0;
    }
}

/* The overlaps of a cell of kind SPART_CLIP_ONE_ROW, _ONE_COLUMN or _2X2,
 * overlap[c][r] for column c, row r of its block (0 outside the block). */
SPART_MATH_FUNCTION void spart_clip_overlaps_small(const spart_clip_cell *cell,
                                                   double overlap[2][2])
{
    if (cell->kind == SPART_CLIP_ONE_ROW) {
        spart_clip_overlaps_within_one_row(cell->x, cell->y, cell->lowest, overlap);
    } else if (cell->kind == SPART_CLIP_ONE_COLUMN) {
        spart_clip_overlaps_within_one_column(cell->x, cell->y, cell->lowest, overlap);
    } else {
        spart_clip_overlaps_within_2x2(cell->x, cell->y, cell->lowest, overlap);
    }
}

#include "weights/clip_lattice_walk.h"

#endif /* SPART_CLIP_LATTICE_MATH_H */
