/*
 * src/weights/clip_lattice_walk.h: the walk along a cell's edges, for the
 * cells that do not lie within 2 x 2 lattice cells (or that reach out of
 * the lattice), shared by host and device as the rest of
 * src/weights/clip_lattice_math.h (which includes this file; see it for
 * the rules of the arithmetic): each edge is walked across the lattice
 * lines, each piece adding its moment and height to its lattice cell, and
 * the sums are turned into overlaps column by column from the top of the
 * block down.
 *
 * The scratch is the caller's (spart_clip_sums): the sums of a window of
 * the block's lattice cells, some columns and some rows of them, and of
 * those columns. Pieces outside the window are walked all the same and
 * dropped, so a window's cells get exactly the sums the whole block would
 * give them, in the same order. The host's window is the whole block (a
 * thread's growing scratch); the device's is one column and a few rows
 * at a time, in a thread's registers and local memory, the columns taken
 * right to left and the rows top down (spart_clip_finish_rows carries
 * what a column owes from one window to the next), so that a cell of any
 * size needs no allocation.
 */
#ifndef SPART_CLIP_LATTICE_WALK_H
#define SPART_CLIP_LATTICE_WALK_H

/* The sums of the edge pieces that lie in one lattice cell of the block:
 * each piece from (xa, ya) to (xb, yb) adds its moment
 * (xa - xb) ((ya - reference) + (yb - reference)) / 2 and its height
 * xa - xb, `reference` being the first such piece's ya (NaN before any).
 * Measuring from a point of the polygon rather than from the row's bottom
 * keeps the terms as small as the polygon's part in the cell, so that
 * cells much smaller than the lattice's lose no accuracy. Once the block
 * is finished (spart_clip_finish_rows), `moment` holds the overlap. */
typedef struct spart_clip_cell_sums {
    double moment;
    double height;
    double reference;
} spart_clip_cell_sums;

/* The sums of one column of the block. */
typedef struct spart_clip_column_sums {
    double above;       /* the heights of the pieces above the block */
    int64_t lowest_row; /* the lowest row holding a piece: -1 below the block, `height` none;
                           once finished, the first row whose overlap may be non-zero */
} spart_clip_column_sums;

/* The sums of a window of a block of width x height lattice cells:
 * columns first_column .. first_column + num_columns - 1 and rows
 * first_row .. first_row + num_rows - 1. Cell (c, r) of the window is at
 * cells[(c - first_column) * num_rows + (r - first_row)], column c at
 * columns[c - first_column]. */
typedef struct spart_clip_sums {
    int64_t width, height;
    int64_t first_column, num_columns;
    int64_t first_row, num_rows;
    spart_clip_cell_sums *cells;
    spart_clip_column_sums *columns;
} spart_clip_sums;

/* No piece in the window yet. */
SPART_MATH_FUNCTION void spart_clip_sums_clear(spart_clip_sums *sums)
{
    const int64_t num_cells = sums->num_columns * sums->num_rows;
    for (int64_t k = 0; k < num_cells; k++) {
        sums->cells[k].moment = 0.0;
        sums->cells[k].height = 0.0;
        sums->cells[k].reference = NAN;
    }
    for (int64_t c = 0; c < sums->num_columns; c++) {
        sums->columns[c].above = 0.0;
        sums->columns[c].lowest_row = sums->height;
    }
}

/* Add the piece of an edge from (xa, ya) to (xb, yb) that lies in column
 * `column`, row `row` of the block (either may be -1 or the block's size:
 * outside). Its share of the signed area is minus its integral of y dx,
 * hence the factor xa - xb. A piece in a column of the window counts in
 * that column's sums whatever its row; in its cell's sums only when the
 * row is in the window too. */
SPART_MATH_FUNCTION void spart_clip_add_piece(spart_clip_sums *sums, int64_t column, int64_t row,
                                              double xa, double ya, double xb, double yb)
{
    const double minus_dx = xa - xb;
    if (column < sums->first_column || column >= sums->first_column + sums->num_columns ||
        minus_dx == 0) {
        return; /* left or right of the window (or the lattice), or vertical: no area */
    }
    spart_clip_column_sums *sums_column = &sums->columns[column - sums->first_column];
    if (row >= sums->height) {
        sums_column->above += minus_dx;
        return;
    }
    if (row < 0) {
        sums_column->lowest_row = -1; /* below the lattice: the rows above are inside */
        return;
    }
    if (row < sums_column->lowest_row) {
        sums_column->lowest_row = row;
    }
    if (row < sums->first_row || row >= sums->first_row + sums->num_rows) {
        return; /* a row outside the window */
    }
    spart_clip_cell_sums *cell =
        &sums->cells[(column - sums->first_column) * sums->num_rows + (row - sums->first_row)];
    if (isnan(cell->reference)) {
        cell->reference = ya;
    }
    cell->moment += minus_dx * (((ya - cell->reference) + (yb - cell->reference)) * 0.5);
    cell->height += minus_dx;
}

/* floor(value) clamped to [-1, limit], for a finite value: the unit
 * interval [k, k+1] that a walk leaving `value` upwards starts in. */
SPART_MATH_FUNCTION int64_t spart_clip_interval_above(double value, int64_t limit)
{
    if (!(value >= 0)) {
        return -1;
    }
    if (value >= (double)limit) {
        return limit;
    }
    return (int64_t)value; /* truncation is floor for value >= 0 */
}

/* ceil(value) - 1 clamped to [-1, limit], for a finite value: the unit
 * interval that a walk leaving `value` downwards starts in. */
SPART_MATH_FUNCTION int64_t spart_clip_interval_below(double value, int64_t limit)
{
    if (!(value > 0)) {
        return -1;
    }
    if (value > (double)limit) {
        return limit;
    }
    const int64_t truncated = (int64_t)value;
    return (double)truncated == value ? truncated - 1 : truncated;
}

/* How an edge runs along one axis, from coordinate `start` to `end`: the
 * unit intervals of its first and last pieces (-1 below the block, `limit`
 * above it), its direction (+1, -1, or 0 when it stays on one
 * coordinate). The lines it crosses, in order, lie between `first` and
 * `last`. */
typedef struct spart_clip_edge_axis {
    int64_t first, last;
    int64_t step;
} spart_clip_edge_axis;

SPART_MATH_FUNCTION spart_clip_edge_axis spart_clip_edge_axis_of(double start, double end,
                                                                 int64_t limit)
{
    spart_clip_edge_axis axis = {0, 0, 0};
    if (end > start) {
        axis.first = spart_clip_interval_above(start, limit);
        axis.last = spart_clip_interval_below(end, limit);
        axis.step = 1;
    } else if (end < start) {
        axis.first = spart_clip_interval_below(start, limit);
        axis.last = spart_clip_interval_above(end, limit);
        axis.step = -1;
    } else {
        axis.first = spart_clip_interval_above(start, limit);
        axis.last = axis.first;
    }
    return axis;
}

/* Add one edge of a cell, from (x0, y0) to (x1, y1) in block coordinates:
 * walk along it, crossing the column and row lines in the order the edge
 * meets them (both at once through a lattice vertex), and add the piece
 * between each crossing and the next. A crossing's own coordinate is the
 * line, exactly; the other is interpolated along the edge. */
SPART_MATH_FUNCTION void spart_clip_add_edge(spart_clip_sums *sums, double x0, double y0, double x1,
                                             double y1)
{
    if (x0 == x1) {
        return; /* vertical: no area */
    }
    const spart_clip_edge_axis columns = spart_clip_edge_axis_of(x0, x1, sums->width);
    const spart_clip_edge_axis rows = spart_clip_edge_axis_of(y0, y1, sums->height);
    if (columns.first == columns.last && rows.first == rows.last) {
        spart_clip_add_piece(sums, columns.first, rows.first, x0, y0, x1, y1); /* one piece */
        return;
    }
    const double dx = x1 - x0, dy = y1 - y0;
    const double per_x = 1.0 / dx;
    const double per_y = rows.step != 0 ? 1.0 / dy : 0.0;
    int64_t column = columns.first, row = rows.first;
    /* the next lines to cross: between interval k and k + 1 lies line k + 1 */
    double line_x = (double)(columns.step > 0 ? column + 1 : column);
    double line_y = (double)(rows.step > 0 ? row + 1 : row);
    double xa = x0, ya = y0;
    while (column != columns.last || row != rows.last) {
        const double t_x = column != columns.last ? (line_x - x0) * per_x : (double)INFINITY;
        const double t_y = row != rows.last ? (line_y - y0) * per_y : (double)INFINITY;
        const double xb = t_x <= t_y ? line_x : x0 + t_y * dx;
        const double yb = t_y <= t_x ? line_y : y0 + t_x * dy;
        spart_clip_add_piece(sums, column, row, xa, ya, xb, yb);
        if (t_x <= t_y) {
            column += columns.step;
            line_x += (double)columns.step;
        }
        if (t_y <= t_x) {
            row += rows.step;
            line_y += (double)rows.step;
        }
        xa = xb;
        ya = yb;
    }
    spart_clip_add_piece(sums, column, row, xa, ya, x1, y1);
}

/* Add the four edges of a cell (corners x[k], y[k] in block coordinates,
 * winding order) to cleared sums. */
SPART_MATH_FUNCTION void spart_clip_add_cell(spart_clip_sums *sums, const double *x,
                                             const double *y)
{
    for (int k = 0; k < 4; k++) {
        const int next = (k + 1) % 4;
        spart_clip_add_edge(sums, x[k], y[k], x[next], y[next]);
    }
}

/* The overlap of the cell with lattice cell (column, row) of its block,
 * `owed` being the heights of the pieces above it in its column. A row
 * without a piece is covered (or not) only by what is above it. Otherwise
 * the overlap is the integral of clamp(y - row, 0, 1) over the row's
 * pieces: their moments from the reference, the rectangle from the row's
 * bottom to the reference, and the rows above. In the column's lowest row
 * (nothing below it) the pieces' heights are minus those above, exactly
 * but for rounding, so the rectangle is written with `owed`: the
 * overlap is then a sum of terms as small as the polygon's part in the
 * row. */
SPART_MATH_FUNCTION double spart_clip_overlap_of(const spart_clip_cell_sums *cell, int64_t row,
                                                 int lowest, double owed)
{
    if (isnan(cell->reference)) {
        return owed;
    }
    const double bottom = (double)row;
    if (lowest) {
        return cell->moment + ((bottom + 1) - cell->reference) * owed;
    }
    return cell->moment + (cell->reference - bottom) * cell->height + owed;
}

/* The first row of column `column` (of the window) whose overlap may be
 * non-zero: rows below the column's lowest piece hold nothing of the
 * cell (exactly 0). */
SPART_MATH_FUNCTION int64_t spart_clip_lowest_row(const spart_clip_sums *sums, int64_t column)
{
    const int64_t lowest_row = sums->columns[column - sums->first_column].lowest_row;
    return lowest_row < 0 ? 0 : lowest_row;
}

/* Turn the window's sums of column `column` into overlaps, from the top
 * of the window down to its bottom or the column's lowest row, owing
 * every row the heights of the pieces above it: `owed` comes in as what
 * the rows above the window owe (the column's `above` for a window that
 * reaches the block's top) and is returned for the window below.
 * Afterwards the cell's `moment` is the overlap of each of those rows. */
SPART_MATH_FUNCTION double spart_clip_finish_rows(spart_clip_sums *sums, int64_t column,
                                                  double owed)
{
    spart_clip_cell_sums *cells =
        sums->cells + (column - sums->first_column) * sums->num_rows - sums->first_row;
    const int64_t lowest_row = sums->columns[column - sums->first_column].lowest_row;
    const int64_t lowest = spart_clip_lowest_row(sums, column);
    const int64_t bottom = sums->first_row > lowest ? sums->first_row : lowest;
    for (int64_t r = sums->first_row + sums->num_rows - 1; r >= bottom; r--) {
        const double height_here = cells[r].height;
        cells[r].moment = spart_clip_overlap_of(&cells[r], r, r == lowest_row, owed);
        owed += height_here;
    }
    return owed;
}

/* The overlap of lattice cell (column, row) of a finished window. */
SPART_MATH_FUNCTION double spart_clip_window_overlap(const spart_clip_sums *sums, int64_t column,
                                                     int64_t row)
{
    return sums->cells[(column - sums->first_column) * sums->num_rows + (row - sums->first_row)]
        .moment;
}

#endif /* SPART_CLIP_LATTICE_WALK_H */
