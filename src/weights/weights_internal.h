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
    /* Weights built on a CUDA device (src/weights/weights_device.h): nonzero
     * on_device, and then indices_input, indices_output and values are
     * memory of CUDA device cuda_device, freed by release_device (set by
     * the code that made them); offsets stay in host memory. Zero (every
     * object made on the host, and shells): host memory. */
    int on_device;
    int cuda_device;
    void (*release_device)(struct spart_weights *weights);
};

/* SPART_OK for weights in host memory; for weights on a device
 * SPART_ERROR_INVALID_ARGUMENT with a sentence naming `what` (the
 * function) and spart_weights_to_host, for the functions that read the
 * entries on the host. */
spart_status spart_weights_require_host(spart_context *context, const spart_weights *weights,
                                        const char *what);

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
