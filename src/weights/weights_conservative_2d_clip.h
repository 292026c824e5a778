/*
 * src/weights/weights_conservative_2d_clip.h: the host's scratch for the
 * walk of the conservative 2-D weights onto a lattice
 * (src/weights/weights_conservative_2d_clip.c, the driver;
 * weights_conservative_2d_clip_walk.c, the scratch and the appending of a
 * walked cell's entries). The arithmetic itself is in
 * src/weights/clip_lattice_math.h, shared with the device. Included by
 * those two files alone.
 */
#ifndef SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_H
#define SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "weights/clip_lattice_math.h"
#include "weights/triples.h"

/* A thread's scratch for one input cell: the sums of its edge pieces over
 * its block. Grown, never shrunk, so that a run of cells allocates only a
 * few times. */
typedef struct block_sums {
    const spart_allocator *allocator;
    spart_clip_sums block;
    size_t capacity_cells, capacity_columns;
} block_sums;

void spart_clip_sums_init(block_sums *sums, const spart_allocator *allocator);

void spart_clip_sums_release(block_sums *sums);

/* Make the scratch hold a block of width x height cells, with no piece
 * in it yet. 0 on success, -1 when out of memory. */
int spart_clip_sums_start(block_sums *sums, int64_t width, int64_t height);

/* Turn the sums of a walked cell into overlaps and append each non-zero
 * one times weight_per_area, in C order of the lattice cells. 0 on
 * success, -1 when out of memory. */
int spart_clip_append_overlaps(block_sums *sums, const spart_clip_block *block, int64_t num_cells_y,
                               int64_t index_input, double weight_per_area, spart_triples *list);

#endif /* SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_H */
