/*
 * src/core/shape.h: NumPy's rules for shapes and axes, in C: broadcasting,
 * normalising axis numbers, and reading a broadcast array one element's
 * resampled block at a time.
 */
#ifndef SPART_SHAPE_H
#define SPART_SHAPE_H

#include <stdint.h>

#include "spart/common.h"

/* Broadcast `a` and `b` into *result (right-aligned, 1 repeats). Returns 0,
 * or -1 when they do not broadcast. */
int spart_shape_broadcast(const spart_shape *a, const spart_shape *b, spart_shape *result);

/* Whether `shape` broadcasts to exactly `target` (one-directional). */
int spart_shape_broadcasts_to(const spart_shape *shape, const spart_shape *target);

/* Whether a shape is valid: 0 <= ndim <= SPART_MAX_NDIM, no negative extent. */
int spart_shape_is_valid(const spart_shape *shape);

/* Two shapes equal. */
int spart_shape_equal(const spart_shape *a, const spart_shape *b);

/* Normalise `count` axis numbers against `ndim` axes as regridding does:
 * each becomes negative (-1 is the last axis), and they are sorted in
 * `descending` order (-1, -2, ...) or ascending. count = 0 (or axes NULL)
 * means every axis. Returns 0, -1 for an axis out of range (its index in
 * *bad), -2 for a repeated axis (index in *bad). */
int spart_axes_normalize(int count, const int *axes, int ndim, int descending, int *normalized,
                         int *normalized_count, int *bad);

/* The shape of the axes of `shape` not in `axes` (negative numbers), in
 * order. */
spart_shape spart_shape_without_axes(const spart_shape *shape, const int *axes, int count);

/* spart_axes_normalize with the error sentence: `name` is the argument's
 * name and `what` says what the axes count in ("coordinates with 3 axes"). */
spart_status spart_axes_normalize_checked(struct spart_context *context, const char *name,
                                          int count, const int *axes, int ndim, const char *what,
                                          int *normalized, int *normalized_count);

/* Whether normalised (negative) axis `axis` is in the list. */
int spart_axes_contain(const int *axes, int count, int axis);

/* The element strides of an array of shape `shape` broadcast to `target`
 * (which it must broadcast to): 0 along broadcast axes. */
void spart_broadcast_strides(const spart_shape *shape, const spart_shape *target, int64_t *strides);

/* Copy the block of a broadcast array that one orthogonal element sees.
 * `strides` are the array's broadcast strides against the full shape
 * `full`; `resampled` lists the resampled axes as non-negative numbers in
 * ascending order; `orthogonal_index` gives, for every non-resampled axis
 * of `full` in ascending order, its index. The block is written in C order
 * over the resampled axes. */
void spart_gather_block(const double *data, const int64_t *strides, const spart_shape *full,
                        const int *resampled, int num_resampled, const int64_t *orthogonal_index,
                        double *block);

/* Where the block spart_gather_block would copy lies in `data` itself,
 * contiguous and in C order over the resampled axes (so it can be read in
 * place): its first value; NULL when it does not lie so (a resampled axis
 * broadcast or not in C order). Arguments as spart_gather_block's. */
const double *spart_block_in_place(const double *data, const int64_t *strides,
                                   const spart_shape *full, const int *resampled, int num_resampled,
                                   const int64_t *orthogonal_index);

/* The full shape of a resampled array: the orthogonal shape with the
 * extents of `shape` along `axes_descending` (negative numbers, -1 first)
 * inserted at those (negative) positions, as regridding builds it. */
spart_shape spart_shape_insert_axes(const spart_shape *orthogonal, const spart_shape *shape,
                                    const int *axes_descending, int count);

/* The inverse of spart_gather_block: write `block` (C order over the
 * resampled axes) into a dense array of shape `full` at the given
 * orthogonal index. */
void spart_scatter_block(const double *block, const spart_shape *full, const int *resampled,
                         int num_resampled, const int64_t *orthogonal_index, double *data);

/* The flat index, in `source` (which broadcasts to `joined`), of the
 * element at flat index `flat` of `joined`. */
int64_t spart_broadcast_index(int64_t flat, const spart_shape *joined, const spart_shape *source);

/* The C-order multi-index of flat index `flat` in `shape`. */
void spart_unravel(int64_t flat, const spart_shape *shape, int64_t *index);

#endif /* SPART_SHAPE_H */
