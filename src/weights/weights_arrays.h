/*
 * src/weights/weights_arrays.h: the checks of weights given as caller arrays, shared
 * by spart_weights_create_from_arrays (entries in host memory, src/weights/weights.c)
 * and spart_regridder_create_device_from_arrays (entries in device memory,
 * src/operator/regridder_device_arrays.c), so that both refuse the same layouts with
 * the same statuses and sentences. Defined in src/weights/weights.c.
 */
#ifndef SPART_WEIGHTS_ARRAYS_H
#define SPART_WEIGHTS_ARRAYS_H

#include "core/internal.h"

/* What the checks learn of a valid layout: the resampled axes normalised
 * (non-negative, ascending), the elements, the entries and one element's
 * resampled cells on each side. */
typedef struct spart_weights_layout {
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t num_elements; /* the product of shape_orthogonal */
    int64_t num_entries;  /* offsets[num_elements] */
    int64_t size_input;   /* resampled cells of one input element */
    int64_t size_output;  /* and of one output element */
} spart_weights_layout;

/* Check shapes, axes and offsets (in host memory) as
 * spart_weights_create_from_arrays does, before it reads any entry: the
 * shape pointers and offsets are not NULL, the shapes valid, the axes in
 * range and not repeated, offsets[0] == 0 and the offsets ascending. Fills
 * `layout` on success. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT, SPART_ERROR_AXIS_OUT_OF_RANGE. */
spart_status spart_weights_check_layout(spart_context *context, const spart_shape *shape_orthogonal,
                                        const spart_shape *shape_input,
                                        const spart_shape *shape_output, int num_axis_input,
                                        const int *axis_input, int num_axis_output,
                                        const int *axis_output, const int64_t *offsets,
                                        spart_weights_layout *layout);

/* SPART_ERROR_INVALID_ARGUMENT with the sentence that names entry `entry`
 * (a position in the concatenated arrays, below offsets[num_elements]) by
 * its element and its place in it, with its two indices and the ranges
 * they must lie in. */
spart_status spart_weights_fail_bad_entry(spart_context *context, const int64_t *offsets,
                                          int64_t num_elements, int64_t entry, int64_t index_input,
                                          int64_t index_output, int64_t size_input,
                                          int64_t size_output);

#endif /* SPART_WEIGHTS_ARRAYS_H */
