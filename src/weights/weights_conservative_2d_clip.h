/*
 * src/weights/weights_conservative_2d_clip.h: what the two files of the
 * conservative 2-D weights onto a lattice share
 * (src/weights/weights_conservative_2d_clip.c, the driver and the cells
 * within 2 x 2 lattice cells; weights_conservative_2d_clip_walk.c, the walk
 * along a larger cell's edges): a cell's block of lattice cells, the
 * thread's sums of edge pieces over it. Included by those two files alone.
 */
#ifndef SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_H
#define SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "weights/triples.h"

/* The lattice cells of an input cell's bounding box that lie in the
 * lattice: columns lower_x .. lower_x + width - 1, rows lower_y ..
 * lower_y + height - 1. In block coordinates (the cell shifted by
 * (-lower_x, -lower_y)) column c spans c <= x <= c + 1, row r spans
 * r <= y <= r + 1; column -1 stands for everything left of the block,
 * column `width` for everything right of it, and likewise rows. */
typedef struct cell_block {
    int64_t lower_x, lower_y;
    int64_t width, height;
} cell_block;

/* The sums of the edge pieces that lie in one lattice cell of the block:
 * each piece from (xa, ya) to (xb, yb) adds its moment
 * (xa - xb) ((ya - reference) + (yb - reference)) / 2 and its height
 * xa - xb, `reference` being the first such piece's ya (NaN before any).
 * Measuring from a point of the polygon rather than from the row's bottom
 * keeps the terms as small as the polygon's part in the cell, so that
 * cells much smaller than the lattice's lose no accuracy. */
typedef struct cell_sums {
    double moment;
    double height;
    double reference;
} cell_sums;

/* The sums of one column of the block. */
typedef struct column_sums {
    double above;       /* the heights of the pieces above the block */
    int64_t lowest_row; /* the lowest row holding a piece: -1 below the block, `height` none */
} column_sums;

/* A thread's scratch for one input cell: the sums of its edge pieces over
 * its block, cell (c, r) at index c * height + r. Grown, never shrunk, so
 * that a run of cells allocates only a few times. */
typedef struct block_sums {
    const spart_allocator *allocator;
    int64_t width, height;
    cell_sums *cells;
    column_sums *columns;
    size_t capacity_cells, capacity_columns;
} block_sums;

void spart_clip_sums_init(block_sums *sums, const spart_allocator *allocator);

void spart_clip_sums_release(block_sums *sums);

/* Make the scratch hold a block of width x height cells, with no piece
 * in it yet. 0 on success, -1 when out of memory. */
int spart_clip_sums_start(block_sums *sums, int64_t width, int64_t height);

/* Add one edge of a cell, from (x0, y0) to (x1, y1) in block coordinates,
 * piece by piece between its crossings of the lattice lines. */
void spart_clip_add_edge(block_sums *sums, double x0, double y0, double x1, double y1);

/* Turn the sums into overlaps and append each non-zero one times
 * weight_per_area, in C order of the lattice cells. 0 on success, -1 when
 * out of memory. */
int spart_clip_append_overlaps(block_sums *sums, const cell_block *block, int64_t num_cells_y,
                               int64_t index_input, double weight_per_area, spart_triples *list);

#endif /* SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_H */
