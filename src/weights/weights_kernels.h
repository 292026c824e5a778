/*
 * src/weights/weights_kernels.h: the per-element weights kernels of host/ (and,
 * later, kernels/). The driver in src/weights/weights_build.c checks every
 * argument, lays each orthogonal element's resampled coordinates out as
 * dense C-order arrays over the resampled axes (ascending axis order),
 * and calls one kernel per element. Kernels append to a triples list and
 * return a spart_status (SPART_OK, SPART_ERROR_OUT_OF_MEMORY, or an error
 * the driver turns into a sentence).
 *
 * `parallel` is the number of OpenMP threads a kernel may use inside the
 * element (the driver passes 1 when it is already parallel over elements,
 * else the context's thread count); 1 or less means serial; the
 * result must be identical either way and for any thread count.
 *
 * Indices appended are flat indices over the element's resampled cells
 * (conservative) or vertices (multilinear), never negative.
 */
#ifndef SPART_WEIGHTS_KERNELS_H
#define SPART_WEIGHTS_KERNELS_H

#include <stdint.h>

#include "spart/weights.h"
#include "weights/triples.h"

/* Conservative 1-D: input vertices x_input[0..num_input-1], output
 * vertices x_output[0..num_output-1] (each ascending or descending),
 * optional weights_input per input cell (num_input - 1, or NULL).
 * Each weight is the overlap length over the input cell's length, times
 * weights_input; entries in regridding's walk order. */
spart_status spart_host_weights_conservative_1d(const double *x_input, int64_t num_input,
                                                const double *x_output, int64_t num_output,
                                                const double *weights_input,
                                                spart_triples *triples);

/* Conservative 2-D, Ramshaw's sweep: grids of num_x_* by num_y_* vertices,
 * x_*[i * num_y + j]. weights_input per input cell ((nx-1)*(ny-1), or
 * NULL). Appends fragments (not coalesced) in regridding's order. */
spart_status spart_host_weights_conservative_2d_sweep(
    const double *x_input, const double *y_input, int64_t num_x_input, int64_t num_y_input,
    const double *x_output, const double *y_output, int64_t num_x_output, int64_t num_y_output,
    const double *weights_input, int parallel, spart_triples *triples);

/* Whether an output grid is a uniform axis-aligned lattice (x varies only
 * along axis 0 and y only along axis 1, with constant nonzero steps to a
 * relative 1e-10), as regridding decides before clipping. */
int spart_host_grid_is_lattice(const double *x, const double *y, int64_t num_x, int64_t num_y);

/* Conservative 2-D by exact polygon clipping of each input cell against
 * a lattice output grid (spart_host_grid_is_lattice must hold). Appends
 * entries sorted by (input, output), one per pair. */
spart_status spart_host_weights_conservative_2d_clip(const double *x_input, const double *y_input,
                                                     int64_t num_x_input, int64_t num_y_input,
                                                     const double *x_output, const double *y_output,
                                                     int64_t num_x_output, int64_t num_y_output,
                                                     const double *weights_input, int parallel,
                                                     spart_triples *triples);

/* Conservative 2-D by exact polygon clipping between any two logically
 * rectangular grids (same arguments as the lattice kernel above; the
 * output need not be a lattice, either grid may run either way, and
 * degenerate alignments need no perturbation). Appends entries sorted by
 * (input, output), one per pair of non-zero overlap; identical for any
 * `parallel`. */
spart_status spart_host_weights_conservative_2d_clip_general(
    const double *x_input, const double *y_input, int64_t num_x_input, int64_t num_y_input,
    const double *x_output, const double *y_output, int64_t num_x_output, int64_t num_y_output,
    const double *weights_input, int parallel, spart_triples *triples);

/* Multilinear: an input grid of `ndim` (1 to 3) axes with shape[k]
 * vertices each, coordinates_input[d] the d-th coordinate of every vertex
 * (C order); num_points output points with points[d][p] their
 * coordinates. weights_input per input vertex (or NULL). Appends 2^ndim
 * entries per point in point order, corner m of a point being one step
 * further along axis k where bit k of m is set (axis 0 the lowest bit; in
 * 2-D: (i,j), (i+1,j), (i,j+1), (i+1,j+1)), as regridding orders them, and
 * counts the
 * points outside the grid in *num_outside. bounds = NaN gives NaN values
 * for those; extrapolate extends the nearest cell; error appends as
 * extrapolate (the driver fails when *num_outside > 0). */
spart_status spart_host_weights_multilinear(int ndim, const int64_t *shape,
                                            const double *const *coordinates_input,
                                            int64_t num_points, const double *const *points,
                                            const double *weights_input, spart_bounds bounds,
                                            int parallel, spart_triples *triples,
                                            int64_t *num_outside);

/* Whether an input grid of `ndim` axes is rectilinear as the multilinear
 * kernel decides (each coordinate varying along exactly one axis, no two
 * along the same, strictly monotonically): 1 with profiles[m] (allocated
 * from `allocator`, the caller frees them) the vertices along axis m
 * ascending, coordinate[m] the coordinate varying along it and
 * descending[m] whether it decreases; 0 when it is not; -1 out of memory.
 * The device build (src/weights/weights_device_cuda.c) locates points on
 * these profiles with the host's arithmetic. */
int spart_host_multilinear_rectilinear(int ndim, const int64_t *shape,
                                       const double *const *coordinates_input,
                                       const spart_allocator *allocator, double **profiles,
                                       int *coordinate, int *descending);

/* The hierarchy of bounding boxes the multilinear kernel searches on a
 * curvilinear input grid (src/weights/multilinear_curvilinear_math.h's
 * box_tree), built as the kernel builds it: tree->boxes (*num_boxes boxes
 * of 2 * ndim values; NULL for none) allocated from `allocator`, the
 * caller frees it. The device build (src/weights/weights_device_cuda.c)
 * copies it to the device and searches it with the host's code. */
struct box_tree;
spart_status spart_host_multilinear_box_tree(int ndim, const int64_t *shape,
                                             const double *const *coordinates_input,
                                             const spart_allocator *allocator, int parallel,
                                             struct box_tree *tree, int64_t *num_boxes);

/* Sort one element's entries by (input, output) and merge repeated pairs
 * by summing, in the order NumPy's add.reduceat sums (first value plus the
 * pairwise sum of the rest), as regridding's coalescing does. In place. */
spart_status spart_weights_coalesce(spart_triples *triples);

#endif /* SPART_WEIGHTS_KERNELS_H */
