/*
 * src/weights/weights_ops.h: the one place where building weights learns
 * whether it runs on the host or on a CUDA device (as src/mart/mart_ops.h
 * does for the MART steps). spart_weights_build and spart_weights_build_device
 * (src/weights/weights_build_device.c) check the arguments once, the same
 * way, and call the table spart_weights_select gives: the host's
 * (src/weights/weights_build.c, the OpenMP builders of host/ and
 * src/weights/) or the CUDA device's (src/weights/weights_device_cuda.c,
 * over kernels/weights_*.cu), built only with CUDA; without CUDA the
 * select answers SPART_ERROR_NO_DEVICE. Scaling weights and their
 * conservative transpose go through the table of the weights' own
 * location (weights on a device are rewritten there).
 */
#ifndef SPART_WEIGHTS_OPS_H
#define SPART_WEIGHTS_OPS_H

#include <stddef.h>

#include "spart/weights.h"
#include "weights/weights_convolve.h"
#include "weights/weights_values.h"

typedef struct spart_weights_ops {
    const char *where; /* for sentences: "host", "CUDA device" */
    /* Build the weights (the arguments checked, options not NULL). */
    spart_status (*build)(spart_context *context, int num_coordinates,
                          const spart_array *coordinates_input,
                          const spart_array *coordinates_output,
                          const spart_weights_options *options, spart_weights **weights);
    /* Build the weights from grids in device memory
     * (spart_weights_build_device_grids: the arguments' shapes and
     * pointers checked, not the coordinates' values; options not NULL).
     * The host's refuses. */
    spart_status (*build_device_grids)(spart_context *context, int num_coordinates,
                                       const spart_array *coordinates_input,
                                       const spart_array *coordinates_output,
                                       const spart_weights_options *options,
                                       spart_weights **weights);
    /* The bytes of scratch `build` takes besides the weights (checked
     * arguments). */
    spart_status (*workspace_size)(spart_context *context, int num_coordinates,
                                   const spart_array *coordinates_input,
                                   const spart_array *coordinates_output,
                                   const spart_weights_options *options, size_t *bytes);
    /* A host copy of weights of this location. */
    spart_status (*to_host)(spart_context *context, const spart_weights *weights,
                            spart_weights **host);
    /* spart_weights_scale on weights of this location (checked; the
     * factors computed on the host, src/weights/weights_values.h). */
    spart_status (*scale)(spart_context *context, spart_weights *weights,
                          const spart_weights_factors *factors);
    /* spart_weights_transpose_conservative on weights of this location:
     * a new object at the same location with the shapes and axes of
     * `shell` and its offsets (factors->num_elements elements). */
    spart_status (*transpose_conservative)(spart_context *context, const spart_weights *weights,
                                           const spart_weights_factors *factors,
                                           spart_weights *shell, spart_weights **transposed);
    /* spart_weights_convolve on weights of this location (`setup`
     * prepared on the host from the checked kernel): a new object at the
     * same location. */
    spart_status (*convolve)(spart_context *context, const spart_weights *weights,
                             const spart_convolve_setup *setup, const spart_array *kernel,
                             spart_weights **convolved);
} spart_weights_ops;

/* The table of `on_device`'s location into *ops; SPART_ERROR_NO_DEVICE
 * ("spart was built without CUDA: ...") for a device without CUDA. */
spart_status spart_weights_select(spart_context *context, int on_device, const char *what,
                                  const spart_weights_ops **ops);

/* The host's build (src/weights/weights_build.c): spart_weights_build's
 * body, which checks its arguments itself. */
spart_status spart_weights_build_host(spart_context *context, int num_coordinates,
                                      const spart_array *coordinates_input,
                                      const spart_array *coordinates_output,
                                      const spart_weights_options *options,
                                      spart_weights **weights);

/* The host's rewrites of values (src/weights/weights_scale.c,
 * src/weights/weights_transpose.c). */
spart_status spart_weights_scale_host(spart_context *context, spart_weights *weights,
                                      const spart_weights_factors *factors);
spart_status spart_weights_transpose_host(spart_context *context, const spart_weights *weights,
                                          const spart_weights_factors *factors,
                                          spart_weights *shell, spart_weights **transposed);

/* The host's convolution (src/weights/weights_convolve.c) and the
 * device's (src/weights/weights_convolve_cuda.c, CUDA builds only). */
spart_status spart_weights_convolve_host(spart_context *context, const spart_weights *weights,
                                         const spart_convolve_setup *setup,
                                         const spart_array *kernel, spart_weights **convolved);
#if defined(SPART_HAVE_CUDA)
spart_status spart_weights_convolve_on_device(spart_context *context, const spart_weights *weights,
                                              const spart_convolve_setup *setup,
                                              const spart_array *kernel, spart_weights **convolved);
#endif

#if defined(SPART_HAVE_CUDA)
/* The CUDA table's build from device grids
 * (src/weights/weights_device_grids_cuda.c). */
spart_status spart_weights_build_grids_on_device(spart_context *context, int num_coordinates,
                                                 const spart_array *coordinates_input,
                                                 const spart_array *coordinates_output,
                                                 const spart_weights_options *options,
                                                 spart_weights **weights);
#endif

extern const spart_weights_ops spart_weights_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_weights_ops spart_weights_cuda_ops;
#endif

#endif /* SPART_WEIGHTS_OPS_H */
