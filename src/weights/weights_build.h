/*
 * src/weights/weights_build.h: the layout of a weights problem, shared by the
 * builders and the conservative transpose: the coordinate shapes, the
 * normalised axes, the orthogonal shape and, per coordinate array, its
 * strides broadcast against the full grid shape.
 */
#ifndef SPART_WEIGHTS_BUILD_H
#define SPART_WEIGHTS_BUILD_H

#include "core/internal.h"
#include "spart/weights.h"

typedef struct spart_weights_layout {
    int num_coordinates;
    spart_shape shape_coordinates_input;  /* the input coordinates broadcast together */
    spart_shape shape_coordinates_output; /* likewise the output coordinates */
    int num_axes_input;                   /* normalised: negative, descending */
    int axes_input[SPART_MAX_NDIM];
    int num_axes_output;
    int axes_output[SPART_MAX_NDIM];
    spart_shape shape_orthogonal; /* one element each */
    spart_shape full_input;       /* orthogonal shape with the resampled axes inserted */
    spart_shape full_output;
    int resampled_input[SPART_MAX_NDIM]; /* resampled axes of full_input, >= 0, ascending */
    int resampled_output[SPART_MAX_NDIM];
    int64_t grid_shape_input[SPART_MAX_NDIM]; /* vertices along each resampled axis */
    int64_t grid_shape_output[SPART_MAX_NDIM];
    int64_t size_input;  /* vertices of one input element */
    int64_t size_output; /* vertices (points) of one output element */
    int64_t num_elements;
    int64_t strides_input[3][SPART_MAX_NDIM];
    int64_t strides_output[3][SPART_MAX_NDIM];
} spart_weights_layout;

/* Check the grids and axes and work out the layout, as regridding's
 * _normalize_input_output_coordinates does. match_axes: axis_output must
 * have as many axes as axis_input. Sets the context's error sentence. */
spart_status spart_weights_layout_make(spart_context *context, int num_coordinates,
                                       const spart_array *coordinates_input,
                                       const spart_array *coordinates_output, int num_axis_input,
                                       const int *axis_input, int num_axis_output,
                                       const int *axis_output, int match_axes,
                                       spart_weights_layout *layout);

/* Copy element `element`'s resampled coordinates of one side (output
 * nonzero: the output grid) into blocks[c] (C order over the resampled
 * axes, ascending). */
spart_status spart_weights_layout_gather(const spart_weights_layout *layout, int output,
                                         const spart_array *coordinates, int64_t element,
                                         double *const *blocks);

/* Whether every element shares one input (output) grid. */
int spart_weights_layout_input_shared(const spart_weights_layout *layout);
int spart_weights_layout_output_shared(const spart_weights_layout *layout);

/* Check that every value of the num_coordinates arrays of one side
 * ("input" or "output", for the error sentence) is finite. */
spart_status spart_weights_check_finite(spart_context *context, const char *side,
                                        int num_coordinates, const spart_array *coordinates);

/* Check weights_input against the full shape of the input values and lay
 * out its per-element block strides; NULL weights_input is fine. */
spart_status spart_weights_input_strides(spart_context *context, const spart_weights_layout *layout,
                                         const spart_array *weights_input, int cells,
                                         spart_shape *full_values, int64_t *strides);

/* Check the arguments of spart_weights_build and fill `shell` with the
 * shapes, axes and element sizes the weights would have, without building
 * them (no arrays: never pass the shell to spart_weights_free). */
spart_status spart_weights_describe(spart_context *context, int num_coordinates,
                                    const spart_array *coordinates_input,
                                    const spart_array *coordinates_output,
                                    const spart_weights_options *options,
                                    struct spart_weights *shell);

/* spart_weights_describe without reading the coordinates' values again
 * (their finiteness): for a caller that has described (checked) the same
 * arguments already, as spart_weights_build_device does before it builds
 * (reading every vertex twice cost milliseconds on large grids). */
spart_status spart_weights_describe_checked(spart_context *context, int num_coordinates,
                                            const spart_array *coordinates_input,
                                            const spart_array *coordinates_output,
                                            const spart_weights_options *options,
                                            struct spart_weights *shell);

/* The factors of the conservative transpose for grid element `element`:
 * factor_input = V_in / (w * w) per input cell (V_in without
 * weights_input; w gathered with full_values and weight_strides from
 * spart_weights_input_strides) and volume_output = V_out per output cell.
 * scratch holds 2 * the larger side's vertex count, weight_block one value
 * per input cell. The same operations in the same order for the weights'
 * and the regridder's conservative transposes. */
void spart_weights_layout_grid_factors(
    const spart_weights_layout *layout, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_array *weights_input,
    const spart_shape *full_values, const int64_t *weight_strides, int64_t element, double *scratch,
    double *weight_block, double *factor_input, double *volume_output);

/* The layout of the grids of conservative weights for their transposes:
 * 1 or 2 coordinates, the axes of `options`, as many output axes as input
 * axes. */
spart_status spart_weights_layout_conservative(spart_context *context, int num_coordinates,
                                               const spart_array *coordinates_input,
                                               const spart_array *coordinates_output,
                                               const spart_weights_options *options,
                                               spart_weights_layout *layout);

/* The cell sizes (lengths or areas, as magnitudes) of grid element
 * `element` of one side (output nonzero: the output grid) into `volume`
 * (one per cell, C order). scratch holds 2 * that side's vertex count. */
void spart_weights_layout_cell_volumes(const spart_weights_layout *layout, int output,
                                       const spart_array *coordinates, int64_t element,
                                       double *scratch, double *volume);

/* Jitter the output vertices as regridding's perturb=True does
 * (src/weights/weights_perturb.c): dense full-shape arrays in perturbed[c],
 * one per coordinate. */
spart_status spart_weights_perturb_outputs(spart_context *context,
                                           const spart_weights_layout *layout,
                                           const spart_array *coordinates, uint64_t seed,
                                           double *const *perturbed);

#endif /* SPART_WEIGHTS_BUILD_H */
