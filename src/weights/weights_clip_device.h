/*
 * src/weights/weights_clip_device.h: the conservative 2-D weights by exact
 * clipping built on a CUDA device (issue 30), the contract between the
 * device driver (src/weights/weights_device_cuda.c; the representation and
 * the two-pass protocol are in src/weights/weights_device.h) and the
 * kernels (kernels/weights_conservative_2d_clip.cu, the entry points;
 * _lattice.cu onto a lattice; _general.cu onto any grid). Exists only in
 * builds with SPART_HAVE_CUDA. Plain C types, so that the header reads
 * the same in C and in CUDA C++.
 *
 * The device twins of spart_host_weights_conservative_2d_clip (onto a
 * lattice, src/weights/weights_conservative_2d_clip.c) and
 * spart_host_weights_conservative_2d_clip_general (onto any logically
 * rectangular grid, _clip_general.c): the same entries, bit for bit, in
 * the same order: input cells in C order, the output cells of each in
 * ascending order, one entry per non-zero overlap (onto a lattice, also
 * one for a cell inside one lattice cell, whatever its weight). Every
 * number and every decision comes from the headers the host kernels use
 * (src/weights/clip_lattice_math.h, clip_lattice_walk.h, clip_pair.h,
 * clip_polygon_math.h), compiled with --fmad=false.
 *
 * Two passes, each on the caller's stream:
 *   count: one thread per input cell counts its entries; an exclusive
 *          scan (CUB, in input-cell order) gives each cell its first slot,
 *          and the total comes back to the host (one synchronisation);
 *   write: one thread per input cell writes its entries at its slots.
 * No atomics anywhere; a cell's slots depend on the counts alone, so the
 * arrays are the same for any launch configuration.
 *
 * Onto a lattice a cell that reaches more than 2 x 2 lattice cells (or
 * out of the lattice) walks its edges over a window of its block at a
 * time (one column and up to SPART_CLIP_DEVICE_WINDOW rows, in a thread's
 * own memory; clip_lattice_walk.h), so any cell is weighed without an
 * allocation; a cell spanning w x h lattice cells walks its edges about
 * w (1 + h / SPART_CLIP_DEVICE_WINDOW) times.
 *
 * Onto any grid the output cells are prepared once (corners
 * counterclockwise, convex or cut in two, their boxes) and listed in a
 * uniform grid of buckets over their boxes (a stable radix sort of
 * (bucket, cell) pairs: each bucket's cells ascending); an input cell
 * clips against each output cell whose box overlaps its own, once, in
 * the first bucket both boxes touch, and sorts its entries by output cell
 * in its own slots (insertion sort: few per cell; nearly sorted when a
 * cell has many).
 *
 * Memory: the state (spart_device_clip_counts) holds the slots (8 bytes
 * an input cell, plus 8 more for the counts during the count) and, onto
 * any grid, the prepared output cells (120 bytes each) and the bucket
 * lists (8 bytes a listing, about 4 listings an output cell and at most 16,
 * plus 24 bytes a listing while they are sorted), all allocated
 * stream-ordered (cudaMallocAsync) on the stream of the count and freed
 * by spart_cuda_clip_2d_counts_free.
 */
#ifndef SPART_WEIGHTS_CLIP_DEVICE_H
#define SPART_WEIGHTS_CLIP_DEVICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The rows of a window of the lattice walk on the device. */
#define SPART_CLIP_DEVICE_WINDOW 16

/* One element's grid in device memory, x[i * num_y + j], y likewise:
 * num_x vertices along axis 0, num_y along axis 1. */
typedef struct spart_device_clip_grid {
    const double *x, *y;
    int64_t num_x, num_y;
} spart_device_clip_grid;

/* What the count leaves for the write: the grids, the slots, the
 * prepared output cells. Opaque. */
typedef struct spart_device_clip_counts spart_device_clip_counts;

/* Pass 1. lattice != 0: the output is a uniform axis-aligned lattice
 * (spart_host_grid_is_lattice held on the host), built by the lattice
 * kernel; else by the general one. weights_input: device, one factor per
 * input cell in C order, or NULL. The grids and weights_input must stay
 * untouched until the write. On success *counts is the state for the
 * write and *num_entries the element's number of entries; on failure
 * *counts is NULL and nothing is left allocated. Returns the cudaError_t
 * of the first call that failed (0: cudaSuccess; cudaErrorInvalidValue
 * for NULL pointers or negative sizes). */
int spart_cuda_clip_2d_count(const spart_device_clip_grid *input,
                             const spart_device_clip_grid *output, int lattice,
                             const double *weights_input, spart_device_clip_counts **counts,
                             int64_t *num_entries, void *stream);

/* Pass 2: write the element's entries into indices_input[0 .. n-1],
 * indices_output and values (device memory, n = the count's
 * *num_entries), on the count's stream. Returns a cudaError_t. */
int spart_cuda_clip_2d_write(spart_device_clip_counts *counts, int64_t *indices_input,
                             int64_t *indices_output, double *values, void *stream);

/* Free the state (stream-ordered on `stream`); NULL is allowed. */
void spart_cuda_clip_2d_counts_free(spart_device_clip_counts *counts, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_WEIGHTS_CLIP_DEVICE_H */
