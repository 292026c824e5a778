/*
 * src/weights/weights_internal.h: the layout of a spart_weights object. All
 * elements' triples are concatenated in element order; element e owns
 * entries offsets[e] .. offsets[e+1]-1.
 */
#ifndef SPART_WEIGHTS_INTERNAL_H
#define SPART_WEIGHTS_INTERNAL_H

#include "core/internal.h"
#include "spart/weights.h"
#include "weights/triples.h"

struct spart_weights {
    spart_allocator allocator;
    spart_shape shape_orthogonal;
    spart_shape shape_input;
    spart_shape shape_output;
    int num_axis_input; /* resampled axes of shape_input, ascending, >= 0 */
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t size_input;  /* resampled cells (vertices) of one input element */
    int64_t size_output; /* likewise of one output element */
    int64_t num_elements;
    int64_t *offsets; /* num_elements + 1 */
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
};

/* Allocate an object for `num_entries` entries with the given shapes;
 * arrays uninitialised apart from offsets[0] = 0. NULL when out of memory. */
spart_weights *spart_weights_allocate(const spart_allocator *allocator,
                                      const spart_shape *shape_orthogonal,
                                      const spart_shape *shape_input,
                                      const spart_shape *shape_output, int num_axis_input,
                                      const int *axis_input, int num_axis_output,
                                      const int *axis_output, int64_t num_entries);

/* Make a new object whose arrays are the entries of `entries`, element e
 * holding entries offsets[e] .. offsets[e+1]-1 (offsets: one more than the
 * elements of shape_orthogonal, from 0 to entries->count). The list's
 * arrays are taken over without a copy (the list is left empty); the
 * offsets are copied. */
spart_status spart_weights_adopt_entries(spart_context *context,
                                         const spart_shape *shape_orthogonal,
                                         const spart_shape *shape_input,
                                         const spart_shape *shape_output, int num_axis_input,
                                         const int *axis_input, int num_axis_output,
                                         const int *axis_output, const int64_t *offsets,
                                         spart_triples *entries, spart_weights **weights);

#endif /* SPART_WEIGHTS_INTERNAL_H */
