/*
 * src/weights/weights_conservative_2d_clip_walk.c: the overlaps of an input
 * cell with the lattice cells of its block by Green's theorem, for the
 * cells that do not lie within 2 x 2 lattice cells (or that reach out of
 * the lattice; src/weights/weights_conservative_2d_clip.c says how the
 * sums go): each edge is walked across the lattice lines, each piece
 * adding its moment and height to its lattice cell (block_sums), and the
 * sums are turned into overlaps column by column from the top of the
 * block down.
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "weights/weights_conservative_2d_clip.h"

void spart_clip_sums_init(block_sums *sums, const spart_allocator *allocator)
{
    memset(sums, 0, sizeof *sums);
    sums->allocator = allocator;
}

void spart_clip_sums_release(block_sums *sums)
{
    spart_free(sums->allocator, sums->cells);
    spart_free(sums->allocator, sums->columns);
    spart_clip_sums_init(sums, sums->allocator);
}

/* Grow a scratch array to at least `count` elements of `size` bytes (to
 * twice what it had, when that is more). 0 on success, -1 when out of
 * memory (the array is unchanged then). */
static int grow_array(const spart_allocator *allocator, void **array, size_t *capacity,
                      size_t count, size_t size)
{
    if (count <= *capacity) {
        return 0;
    }
    size_t grown = 2 * *capacity > count ? 2 * *capacity : count;
    void *larger = spart_realloc(allocator, *array, grown, size);
    if (larger == NULL) {
        return -1;
    }
    *array = larger;
    *capacity = grown;
    return 0;
}

/* Make the scratch hold a block of width x height cells, with no piece
 * in it yet. 0 on success, -1 when out of memory. */
int spart_clip_sums_start(block_sums *sums, int64_t width, int64_t height)
{
    const size_t num_cells = (size_t)width * (size_t)height;
    const size_t num_columns = (size_t)width;
    if (grow_array(sums->allocator, (void **)&sums->cells, &sums->capacity_cells, num_cells,
                   sizeof(cell_sums)) != 0 ||
        grow_array(sums->allocator, (void **)&sums->columns, &sums->capacity_columns, num_columns,
                   sizeof(column_sums)) != 0) {
        return -1;
    }
    sums->width = width;
    sums->height = height;
    for (size_t k = 0; k < num_cells; k++) {
        sums->cells[k] = (cell_sums){0.0, 0.0, NAN};
    }
    for (size_t c = 0; c < num_columns; c++) {
        sums->columns[c] = (column_sums){0.0, height};
    }
    return 0;
}

/* Add the piece of an edge from (xa, ya) to (xb, yb) that lies in column
 * `column`, row `row` of the block (either may be -1 or the block's size:
 * outside). Its share of the signed area is minus its integral of y dx,
 * hence the factor xa - xb. */
static inline void add_piece(block_sums *sums, int64_t column, int64_t row, double xa, double ya,
                             double xb, double yb)
{
    const double minus_dx = xa - xb;
    if (column < 0 || column >= sums->width || minus_dx == 0) {
        return; /* left or right of the lattice, or vertical: no area */
    }
    column_sums *sums_column = &sums->columns[column];
    if (row >= sums->height) {
        sums_column->above += minus_dx;
        return;
    }
    if (row < 0) {
        sums_column->lowest_row = -1; /* below the lattice: the rows above are inside */
        return;
    }
    cell_sums *cell = &sums->cells[column * sums->height + row];
    if (isnan(cell->reference)) {
        cell->reference = ya;
    }
    cell->moment += minus_dx * (((ya - cell->reference) + (yb - cell->reference)) * 0.5);
    cell->height += minus_dx;
    if (row < sums_column->lowest_row) {
        sums_column->lowest_row = row;
    }
}

/* floor(value) clamped to [-1, limit], for a finite value: the unit
 * interval [k, k+1] that a walk leaving `value` upwards starts in. */
static int64_t interval_above(double value, int64_t limit)
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
static int64_t interval_below(double value, int64_t limit)
{
    if (!(value > 0)) {
        return -1;
    }
    if (value > (double)limit) {
        return limit;
    }
    int64_t truncated = (int64_t)value;
    return (double)truncated == value ? truncated - 1 : truncated;
}

/* How an edge runs along one axis, from coordinate `start` to `end`: the
 * unit intervals of its first and last pieces (-1 below the block, `limit`
 * above it), its direction (+1, -1, or 0 when it stays on one
 * coordinate), and the parameter per unit of the coordinate. The lines it
 * crosses, in order, lie between `first` and `last`. */
typedef struct edge_axis {
    int64_t first, last;
    int64_t step;
    double per_unit;
} edge_axis;

static inline edge_axis edge_axis_of(double start, double end, int64_t limit)
{
    edge_axis axis = {0, 0, 0, 0.0};
    if (end > start) {
        axis.first = interval_above(start, limit);
        axis.last = interval_below(end, limit);
        axis.step = 1;
    } else if (end < start) {
        axis.first = interval_below(start, limit);
        axis.last = interval_above(end, limit);
        axis.step = -1;
    } else {
        axis.first = interval_above(start, limit);
        axis.last = axis.first;
    }
    return axis;
}

/* Add one edge of a cell, from (x0, y0) to (x1, y1) in block coordinates:
 * walk along it, crossing the column and row lines in the order the edge
 * meets them (both at once through a lattice vertex), and add the piece
 * between each crossing and the next. A crossing's own coordinate is the
 * line, exactly; the other is interpolated along the edge. */
void spart_clip_add_edge(block_sums *sums, double x0, double y0, double x1, double y1)
{
    if (x0 == x1) {
        return; /* vertical: no area */
    }
    edge_axis columns = edge_axis_of(x0, x1, sums->width);
    edge_axis rows = edge_axis_of(y0, y1, sums->height);
    if (columns.first == columns.last && rows.first == rows.last) {
        add_piece(sums, columns.first, rows.first, x0, y0, x1, y1); /* one piece */
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
        double t_x = column != columns.last ? (line_x - x0) * per_x : INFINITY;
        double t_y = row != rows.last ? (line_y - y0) * per_y : INFINITY;
        double xb = t_x <= t_y ? line_x : x0 + t_y * dx;
        double yb = t_y <= t_x ? line_y : y0 + t_x * dy;
        add_piece(sums, column, row, xa, ya, xb, yb);
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
    add_piece(sums, column, row, xa, ya, x1, y1);
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
static double overlap_of(const cell_sums *cell, int64_t row, int lowest, double owed)
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

/* Turn the sums into overlaps (each column from the top of the block
 * down, owing every row the heights of the pieces above it) and append
 * each non-zero one times weight_per_area (weights_input over the cell's
 * area), in C order of the lattice cells. 0 on success, -1 when out of
 * memory. */
int spart_clip_append_overlaps(block_sums *sums, const cell_block *block, int64_t num_cells_y,
                               int64_t index_input, double weight_per_area, spart_triples *list)
{
    const int64_t height = block->height;
    for (int64_t c = 0; c < block->width; c++) {
        cell_sums *cells = sums->cells + c * height;
        const int64_t lowest_row = sums->columns[c].lowest_row;
        /* below the lowest piece nothing of the cell is left: exactly 0 */
        const int64_t lowest = lowest_row < 0 ? 0 : lowest_row;
        double owed = sums->columns[c].above;
        for (int64_t r = height - 1; r >= lowest; r--) {
            double height_here = cells[r].height;
            cells[r].moment = overlap_of(&cells[r], r, r == lowest_row, owed);
            owed += height_here;
        }
        const int64_t first_output = (block->lower_x + c) * num_cells_y + block->lower_y;
        for (int64_t r = lowest; r < height; r++) {
            double overlap = cells[r].moment;
            if (overlap == 0) {
                continue;
            }
            double value = overlap * weight_per_area;
            if (spart_triples_append(list, index_input, first_output + r, value) != 0) {
                return -1;
            }
        }
    }
    return 0;
}
