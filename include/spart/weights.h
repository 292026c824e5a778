/*
 * spart/weights.h: regridding weights between grids, as the Python package
 * `regridding` (pinned: 3.6.0) computes them.
 *
 * A grid is a list of coordinate arrays, one per resampled dimension (x, or
 * x and y, or x, y and z), broadcast together NumPy-style. Coordinates are
 * vertices: conservative weights move values that live on cells (n - 1 per
 * resampled axis), multilinear weights interpolate values that live on
 * vertices at output points. Axes that are not resampled are orthogonal:
 * they broadcast between input and output, and each orthogonal element gets
 * its own triple of flat arrays (indices_input, indices_output, values).
 * Indices are flat C-order indices over the resampled axes taken in
 * ascending axis order, exactly as `regridding.weights()` returns them.
 *
 * Memory: a spart_weights object owns its arrays; accessors return
 * pointers into it, valid until it is freed. Builders copy what they need
 * from the caller's arrays.
 *
 * Thread safety: a weights object is immutable once built; any number of
 * threads may read it at once. Builders use the context's OpenMP threads.
 *
 * Determinism: every builder gives the same arrays, bit for bit, for any
 * thread count and run after run (elements and grid lines are built into
 * their own lists and joined in order; perturbations draw from a seeded
 * GSL generator).
 */
#ifndef SPART_WEIGHTS_H
#define SPART_WEIGHTS_H

#include "spart/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum spart_method {
    SPART_METHOD_MULTILINEAR = 0, /* interpolate vertex values at points */
    SPART_METHOD_CONSERVATIVE = 1 /* move cell values, conserving their sum */
} spart_method;

/* Multilinear only: what a point outside the input grid gets. */
typedef enum spart_bounds {
    SPART_BOUNDS_EXTRAPOLATE = 0, /* extend the nearest cell linearly */
    SPART_BOUNDS_NAN = 1,         /* NaN weights */
    SPART_BOUNDS_ERROR = 2        /* fail with SPART_ERROR_OUT_OF_BOUNDS */
} spart_bounds;

/* Whether to jitter the output vertices by 1e-9 of the grid's extent (a
 * normal draw per vertex) to break degenerate alignments of the 2-D sweep.
 * Clipping needs no jitter, and a lattice output is never jittered. */
typedef enum spart_perturb {
    SPART_PERTURB_DEFAULT = 0, /* on for the 2-D sweep only */
    SPART_PERTURB_NO = 1,
    SPART_PERTURB_YES = 2
} spart_perturb;

/* Conservative 2-D only: which algorithm computes the overlaps. */
typedef enum spart_algorithm {
    SPART_ALGORITHM_AUTO = 0,  /* clipping (the default; see below) */
    SPART_ALGORITHM_SWEEP = 1, /* Ramshaw's (1985) edge sweep, as regridding uses for
                                  curvilinear outputs, on a jittered output grid */
    SPART_ALGORITHM_CLIP = 2   /* exact polygon clipping of each input cell against the
                                  output cells: a fast path when every output grid is a
                                  uniform axis-aligned lattice (as regridding), else
                                  between any two grids, degenerate alignments and
                                  mirrored grids included, without jitter */
} spart_algorithm;

/* Everything a weights builder takes besides the grids. Start from
 * spart_weights_options_init() and change what you need. */
typedef struct spart_weights_options {
    spart_method method;       /* default SPART_METHOD_MULTILINEAR, as regridding */
    spart_bounds bounds;       /* default SPART_BOUNDS_EXTRAPOLATE */
    spart_perturb perturb;     /* default SPART_PERTURB_DEFAULT */
    uint64_t seed;             /* seed of the perturbation; default 42 */
    spart_algorithm algorithm; /* default SPART_ALGORITHM_AUTO */
    int coalesce;              /* nonzero (default): merge repeated pairs, sort
                                  each element by (input, output) */
    /* The resampled axes of the input grid: num_axis_input numbers
     * (negative count from the end); 0 numbers means every axis. */
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    /* The resampled axes of the output grid, likewise. */
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    /* Factors multiplied into every weight by input cell (conservative) or
     * input vertex (multilinear), broadcast against the input values' shape;
     * NULL for none. */
    const spart_array *weights_input;
} spart_weights_options;

/* Fill `options` with the defaults above. */
SPART_API void spart_weights_options_init(spart_weights_options *options);

typedef struct spart_weights spart_weights;

/* Build weights from `num_coordinates` coordinate arrays per grid (the
 * resampled dimensions, 1 to 3; conservative supports 1 and 2). As
 * regridding.weights(coordinates_input, coordinates_output, ...).
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (counts,
 * sizes, fewer than two vertices on a resampled axis),
 * SPART_ERROR_SHAPE_MISMATCH, SPART_ERROR_AXIS_OUT_OF_RANGE,
 * SPART_ERROR_NOT_FINITE (conservative grids), SPART_ERROR_UNKNOWN_ENUM,
 * SPART_ERROR_OUT_OF_BOUNDS (bounds = error), SPART_ERROR_NOT_IMPLEMENTED,
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_weights_build(spart_context *context,
                                                           int num_coordinates,
                                                           const spart_array *coordinates_input,
                                                           const spart_array *coordinates_output,
                                                           const spart_weights_options *options,
                                                           spart_weights **weights);

/* Build weights on the context's CUDA device (spart_context_set_cuda_device):
 * the weights spart_weights_build gives for the same arguments, the same
 * entries in the same order bit for bit, with their entry arrays
 * (indices_input, indices_output, values) in the memory of that device and
 * their offsets, shapes and axes in host memory. The coordinates (and
 * options->weights_input) are read in host memory, checked there as
 * spart_weights_build checks them, with the same statuses and sentences
 * (so a NaN coordinate is refused in the same words without a device), and
 * each orthogonal element's grids are copied to the device once.
 *
 * What is computed on the device: multilinear weights (1 to 3 axes, every
 * bounds mode; rectilinear grids by their profiles, curvilinear ones by
 * the host's search of its hierarchy of boxes and Newton's method), with
 * their coalescing (a sort by (input, output) on the device); conservative
 * 1-D weights between monotonic grids; conservative 2-D weights by
 * clipping, onto lattices and onto any grid. The other problems (1-D grids
 * that turn back, the 2-D sweep, a jittered output grid) are built on the
 * host and their entries copied to the device: the same arrays, bit for
 * bit, as for every builder. The arithmetic host and device share
 * is written once, in headers both compile (no contraction, no fma but
 * where written). The grids are copied from host memory: for large grids
 * that copy (from pageable memory) can take longer than the build itself;
 * spart_weights_build_device_grids takes grids already on the device.
 *
 * Use: spart_regridder_create_device assembles such weights on their
 * device where they lie (no copy); spart_weights_element and
 * spart_weights_arrays return device pointers for the entry arrays (the
 * offsets and counts are host values); spart_weights_to_host copies them
 * back. spart_weights_scale, spart_weights_transpose_conservative and
 * spart_weights_convolve work on them where they lie, on their device,
 * giving what they give for a host copy bit for bit (the factors, cell
 * volumes and kernel tables computed on the host as for host weights and
 * copied over; the per-entry arithmetic written once for both,
 * src/weights/weights_values.h; the convolution the twin of the host's;
 * a convolution whose kernel broadcasts the weights to more elements is
 * refused with SPART_ERROR_INVALID_ARGUMENT), and so does
 * spart_regridder_create_device_convolved (spart/device.h: their
 * spart_weights_convolve, then spart_regridder_create_device). The
 * functions that read entries on the host (the exact transpose,
 * regrid_from_weights, save, spart_regridder_create) refuse them with
 * SPART_ERROR_INVALID_ARGUMENT naming spart_weights_to_host.
 * spart_weights_free frees them (on their device).
 *
 * Device memory, besides the weights' own 24 bytes an entry: the scratch
 * spart_weights_build_device_workspace_size reports, allocated
 * stream-ordered on the context's stream and freed before return. The call
 * works on the context's stream and synchronises it before returning (the
 * entries are then complete). Errors: those of spart_weights_build, checked
 * first; then SPART_ERROR_NO_DEVICE (built without CUDA, no such device),
 * SPART_ERROR_OUT_OF_MEMORY (device or host memory), SPART_ERROR_INTERNAL
 * (another CUDA error, named in the sentence). */
SPART_NODISCARD SPART_API spart_status spart_weights_build_device(
    spart_context *context, int num_coordinates, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_weights_options *options,
    spart_weights **weights);

/* Build weights on the context's CUDA device from grids already in that
 * device's memory: spart_weights_build_device with every array it reads
 * in device memory, said so by calling this function (nothing is guessed
 * from the pointers): the `data` of each coordinate array of both sides,
 * and options->weights_input's when given, are memory of the context's
 * device (cudaMalloc, a CuPy or PyTorch array's, or managed memory), laid
 * out as for the host build (C order, shapes broadcast NumPy-style). The
 * shapes, counts and options are host values, checked as
 * spart_weights_build checks them; the coordinates' values are checked on
 * the device: the first non-finite coordinate (of the input grids; of the
 * output grids too for conservative weights) is refused with
 * SPART_ERROR_NOT_FINITE in the host build's words, naming the array, the
 * value and its flat index. The result: the weights spart_weights_build
 * gives for host copies of the same arrays, bit for bit and in the same
 * order, their entry arrays in device memory (as spart_weights_build_device
 * leaves them). The caller's arrays are only read, and may be freed once
 * the call returns.
 *
 * Conservative 2-D weights by clipping (the default algorithm) whose every
 * orthogonal element's grids and weights_input lie dense in the caller's
 * arrays (full C-order arrays do, also when broadcast along orthogonal
 * axes; vectors broadcast along a resampled axis do not) are built from the
 * arrays where they lie: the decision that the output grids are lattices
 * is made on the device with the host build's tests, and nothing crosses
 * the bus but a few counts. Every other problem (multilinear and 1-D
 * weights, the sweep, grids strided along their resampled axes) is built
 * from copies of the arrays in host memory, as spart_weights_build_device
 * builds host grids: the same entries, with the copies' time.
 *
 * Errors: those of spart_weights_build_device; SPART_ERROR_INVALID_ARGUMENT
 * also for an array in host memory or on another device (the sentence
 * names it), SPART_ERROR_NO_DEVICE without CUDA or without the device. */
SPART_NODISCARD SPART_API spart_status spart_weights_build_device_grids(
    spart_context *context, int num_coordinates, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_weights_options *options,
    spart_weights **weights);

/* The bytes of device scratch spart_weights_build_device takes for these
 * arguments besides the weights themselves (the largest element's grids,
 * counts and sort), an upper bound. Checks the arguments as
 * spart_weights_build does, and needs no device. */
SPART_NODISCARD SPART_API spart_status spart_weights_build_device_workspace_size(
    spart_context *context, int num_coordinates, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_weights_options *options, size_t *bytes);

/* The CUDA device whose memory holds the weights' entries, or -1 for
 * weights in host memory (and for NULL). */
SPART_API int spart_weights_cuda_device(const spart_weights *weights);

/* A copy of `weights` in host memory (weights on a device are copied back
 * from it; host weights are copied). Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_NO_DEVICE, SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL. */
SPART_NODISCARD SPART_API spart_status spart_weights_to_host(spart_context *context,
                                                             const spart_weights *weights,
                                                             spart_weights **host);

/* Make weights from caller arrays (copied): num_elements elements (the
 * product of shape_orthogonal), element e holding entries
 * offsets[e] .. offsets[e+1]-1 of the three arrays. shape_input and
 * shape_output are the shapes the weights were built for, orthogonal axes
 * included; axis_input and axis_output name their resampled axes (0
 * numbers: every axis; a negative count, or a count with a NULL array, is
 * refused). The axes of each side that are not resampled must broadcast
 * with shape_orthogonal. Every index is checked against its element's
 * resampled cells: 0 <= index < the product of the resampled extents.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (offsets
 * not ascending, an index out of range, an axis count out of range),
 * SPART_ERROR_SHAPE_MISMATCH, SPART_ERROR_AXIS_OUT_OF_RANGE,
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_weights_create_from_arrays(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, const int64_t *indices_input,
    const int64_t *indices_output, const double *values, spart_weights **weights);

/* The resampled axes of the input and output shapes (non-negative,
 * ascending), as the weights were built. Any output pointer may be NULL;
 * the arrays need room for SPART_MAX_NDIM numbers. */
SPART_API void spart_weights_axes(const spart_weights *weights, int *num_axis_input,
                                  int *axis_input, int *num_axis_output, int *axis_output);

/* Free weights. Accepts NULL. */
SPART_API void spart_weights_free(spart_weights *weights);

/* The shapes: of the orthogonal axes (one element each), of the input
 * values and of the output values, orthogonal axes included, as
 * regridding.weights() returns them. */
SPART_API spart_shape spart_weights_shape_orthogonal(const spart_weights *weights);
SPART_API spart_shape spart_weights_shape_input(const spart_weights *weights);
SPART_API spart_shape spart_weights_shape_output(const spart_weights *weights);

/* The number of orthogonal elements, and of entries in all of them. */
SPART_API int64_t spart_weights_num_elements(const spart_weights *weights);
SPART_API int64_t spart_weights_num_entries(const spart_weights *weights);

/* The arrays of element `element` (flat C-order index into the orthogonal
 * shape): *count entries, pointers into the object. Any output pointer may
 * be NULL. Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT
 * (element out of range). */
SPART_NODISCARD SPART_API spart_status spart_weights_element(const spart_weights *weights,
                                                             int64_t element, int64_t *count,
                                                             const int64_t **indices_input,
                                                             const int64_t **indices_output,
                                                             const double **values);

/* The concatenated arrays of all elements, and the num_elements + 1
 * offsets that split them. Any output pointer may be NULL. */
SPART_NODISCARD SPART_API spart_status spart_weights_arrays(const spart_weights *weights,
                                                            const int64_t **offsets,
                                                            const int64_t **indices_input,
                                                            const int64_t **indices_output,
                                                            const double **values);

/* Multiply every entry, in place, by a factor of its input cell and a
 * factor of its output cell: v = (v * factor_input[input cell]) *
 * factor_output[output cell]. Each factor array broadcasts against the
 * weights' shape_input (shape_output), orthogonal axes included, so a
 * factor may vary per element too; NULL for none. Used to fold unit
 * conversions (photons per radiance, cell volumes) into an operator.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_SHAPE_MISMATCH (a factor
 * that does not broadcast; the sentence names both shapes). */
SPART_NODISCARD SPART_API spart_status spart_weights_scale(spart_context *context,
                                                           spart_weights *weights,
                                                           const spart_array *factor_input,
                                                           const spart_array *factor_output);

/* The exact transpose: each element's (input, output) swapped, shapes
 * swapped, as regridding.transpose_weights. Not conservative. */
SPART_NODISCARD SPART_API spart_status spart_weights_transpose(spart_context *context,
                                                               const spart_weights *weights,
                                                               spart_weights **transposed);

/* Fold a kernel into the weights, as regridding.convolve_weights: W becomes
 * P W with P[i', i] = K_i(i' - i), spreading what lands in output cell i
 * over the cells around it; light spread past the grid's edge is lost.
 * `kernel`'s last num_axis_output axes are the kernel along the weights'
 * resampled output axes (ascending); the element at floor(n / 2) along
 * each is the centre (so an even length n reaches n / 2 cells back and
 * n / 2 - 1 forward). Its leading axes broadcast, right-aligned, against
 * shape_output: per orthogonal element (such as per wavelength) and/or per
 * output cell i (each 1 or the grid's extent); a kernel varying along an
 * orthogonal axis the weights are shared along copies them out along it
 * (the result's orthogonal and grid shapes broadcast, as the package's).
 * Negative values are allowed, zeros reach no cell. Each run of
 * consecutive entries sharing an input cell becomes that input's entries
 * in grid order, merged, as the package gives them (docs/differences.md).
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_SHAPE_MISMATCH (too few
 * kernel axes, leading axes that do not broadcast), SPART_ERROR_NOT_FINITE,
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_weights_convolve(spart_context *context,
                                                              const spart_weights *weights,
                                                              const spart_array *kernel,
                                                              spart_weights **convolved);

/* The conservative transpose, as regridding.transpose_weights_conservative:
 * each entry v becomes v * F_in[input] / V_out[output] with cell volumes V
 * of the unperturbed grids and F_in = V_in / (w * w) for weights_input w
 * (V_in without). Volumes are taken unsigned (see docs/differences.md).
 * options: only axis_input, axis_output and weights_input are read. */
SPART_NODISCARD SPART_API spart_status spart_weights_transpose_conservative(
    spart_context *context, const spart_weights *weights, int num_coordinates,
    const spart_array *coordinates_input, const spart_array *coordinates_output,
    const spart_weights_options *options, spart_weights **transposed);

/* The shape regrid_from_weights gives for input values of shape
 * `shape_values_input` (leading batch axes allowed). axis_input and
 * axis_output as in regridding.regrid_from_weights, counted in the
 * weights' shape_input and shape_output; NULL/0 numbers: the axes the
 * weights were built with (regridding takes every axis, which is the same
 * for weights without orthogonal axes and fails for weights with them). */
SPART_NODISCARD SPART_API spart_status spart_regrid_from_weights_shape(
    spart_context *context, const spart_weights *weights, const spart_shape *shape_values_input,
    int num_axis_input, const int *axis_input, int num_axis_output, const int *axis_output,
    spart_shape *shape_values_output);

/* Apply weights as regridding.regrid_from_weights: per orthogonal element,
 * out[o] += value * in[i] in stored order from zero (no FMA). values_output
 * must hold spart_shape_size(shape) doubles for the shape the query above
 * returns; it is overwritten entirely. */
SPART_NODISCARD SPART_API spart_status spart_regrid_from_weights(
    spart_context *context, const spart_weights *weights, const spart_array *values_input,
    int num_axis_input, const int *axis_input, int num_axis_output, const int *axis_output,
    double *values_output, int64_t size_output);

/* Build weights and apply them once, as regridding.regrid. `options`
 * (NULL: defaults) gives the method, axes and perturbation; the output
 * shape comes from spart_regrid_shape. */
SPART_NODISCARD SPART_API spart_status spart_regrid_shape(
    spart_context *context, int num_coordinates, const spart_array *coordinates_input,
    const spart_array *coordinates_output, const spart_shape *shape_values_input,
    const spart_weights_options *options, spart_shape *shape_values_output);
SPART_NODISCARD SPART_API spart_status spart_regrid(spart_context *context, int num_coordinates,
                                                    const spart_array *coordinates_input,
                                                    const spart_array *coordinates_output,
                                                    const spart_array *values_input,
                                                    const spart_weights_options *options,
                                                    double *values_output, int64_t size_output);

/* Save weights to a FITS file (layout in docs/formats.md); fails rather
 * than replace an existing file unless `overwrite` is nonzero. The file is
 * written beside its final name and renamed into place. */
SPART_NODISCARD SPART_API spart_status spart_weights_save(spart_context *context,
                                                          const spart_weights *weights,
                                                          const char *path, int overwrite);

/* Load weights saved by spart_weights_save. Errors: SPART_ERROR_IO,
 * SPART_ERROR_FILE_FORMAT (not a spart weights file, or inconsistent). */
SPART_NODISCARD SPART_API spart_status spart_weights_load(spart_context *context, const char *path,
                                                          spart_weights **weights);

#ifdef __cplusplus
}
#endif

#endif /* SPART_WEIGHTS_H */
