/*
 * src/weights/weights_build.c: spart_weights_build, the driver of the weights
 * builders. It does what regridding's Python layer does before it calls a
 * kernel: checks the arguments, normalises the axes, broadcasts the
 * orthogonal axes, perturbs the output grid when asked, lays out each
 * orthogonal element's resampled coordinates densely, and runs one kernel
 * per element (in parallel over elements when there are several, else in
 * parallel inside the element). Each element is coalesced on its own; the
 * elements are joined in order, so the result is the same for any thread
 * count.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "weights/geometry_2d.h"
#include "core/shape.h"
#include "weights/weights_build.h"
#include "weights/weights_kernels.h"
#include "weights/weights_internal.h"

/* Builds of fewer vertices (input and output, all elements) than this run
 * on one thread. */
#define SMALL_BUILD 65536

/* The size of the perturbation, relative to each element's extent. */
#define PERTURB_EPSILON 1e-9

static spart_status check_options(spart_context *context, const spart_weights_options *options,
                                  int num_coordinates)
{
    if (options->method != SPART_METHOD_MULTILINEAR &&
        options->method != SPART_METHOD_CONSERVATIVE) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "options->method = %d is not a spart_method (0 multilinear, "
                          "1 conservative)",
                          (int)options->method);
    }
    if (options->bounds != SPART_BOUNDS_EXTRAPOLATE && options->bounds != SPART_BOUNDS_NAN &&
        options->bounds != SPART_BOUNDS_ERROR) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "options->bounds = %d is not a spart_bounds (0 extrapolate, 1 nan, "
                          "2 error)",
                          (int)options->bounds);
    }
    if (options->perturb != SPART_PERTURB_DEFAULT && options->perturb != SPART_PERTURB_NO &&
        options->perturb != SPART_PERTURB_YES) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "options->perturb = %d is not a spart_perturb (0 default, 1 no, "
                          "2 yes)",
                          (int)options->perturb);
    }
    if (options->algorithm != SPART_ALGORITHM_AUTO && options->algorithm != SPART_ALGORITHM_SWEEP &&
        options->algorithm != SPART_ALGORITHM_CLIP) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "options->algorithm = %d is not a spart_algorithm (0 auto, 1 sweep, "
                          "2 clip)",
                          (int)options->algorithm);
    }
    if (options->num_axis_input < 0 || options->num_axis_input > SPART_MAX_NDIM ||
        options->num_axis_output < 0 || options->num_axis_output > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "options->num_axis_input = %d and num_axis_output = %d must be in "
                          "[0, %d]",
                          options->num_axis_input, options->num_axis_output, SPART_MAX_NDIM);
    }
    if (num_coordinates < 1 || num_coordinates > 3) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_coordinates = %d: grids have 1, 2 or 3 resampled dimensions",
                          num_coordinates);
    }
    if (options->method == SPART_METHOD_CONSERVATIVE && num_coordinates == 3) {
        return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                          "conservative weights are implemented in 1 and 2 dimensions, not 3 "
                          "(num_coordinates = 3)");
    }
    return SPART_OK;
}

/* Check one side's coordinate arrays and broadcast them together. */
static spart_status broadcast_coordinates(spart_context *context, const char *side,
                                          int num_coordinates, const spart_array *coordinates,
                                          spart_shape *shape)
{
    char text_a[128], text_b[128];
    memset(shape, 0, sizeof *shape);
    for (int c = 0; c < num_coordinates; c++) {
        const spart_array *array = &coordinates[c];
        if (!spart_shape_is_valid(&array->shape)) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "coordinates_%s[%d]: ndim = %d or an extent is negative or too "
                              "large",
                              side, c, array->shape.ndim);
        }
        if (array->data == NULL && spart_shape_size(&array->shape) > 0) {
            return spart_fail(context, SPART_ERROR_NULL_POINTER, "coordinates_%s[%d].data is NULL",
                              side, c);
        }
        spart_shape joined;
        if (spart_shape_broadcast(shape, &array->shape, &joined) != 0) {
            return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                              "coordinates_%s[%d] has shape %s, which does not broadcast "
                              "against %s",
                              side, c, spart_shape_format(&array->shape, text_a, sizeof text_a),
                              spart_shape_format(shape, text_b, sizeof text_b));
        }
        *shape = joined;
    }
    if (shape->ndim == 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "coordinates_%s are scalars: a grid needs at least one axis", side);
    }
    return SPART_OK;
}

spart_status spart_weights_layout_make(spart_context *context, int num_coordinates,
                                       const spart_array *coordinates_input,
                                       const spart_array *coordinates_output, int num_axis_input,
                                       const int *axis_input, int num_axis_output,
                                       const int *axis_output, int match_axes,
                                       spart_weights_layout *layout)
{
    char text_a[128], text_b[128];
    memset(layout, 0, sizeof *layout);
    layout->num_coordinates = num_coordinates;
    spart_status status = broadcast_coordinates(
        context, "input", num_coordinates, coordinates_input, &layout->shape_coordinates_input);
    if (status != SPART_OK) {
        return status;
    }
    status = broadcast_coordinates(context, "output", num_coordinates, coordinates_output,
                                   &layout->shape_coordinates_output);
    if (status != SPART_OK) {
        return status;
    }
    status = spart_axes_normalize_checked(context, "axis_input", num_axis_input, axis_input,
                                          layout->shape_coordinates_input.ndim, "coordinates",
                                          layout->axes_input, &layout->num_axes_input);
    if (status != SPART_OK) {
        return status;
    }
    status = spart_axes_normalize_checked(context, "axis_output", num_axis_output, axis_output,
                                          layout->shape_coordinates_output.ndim, "coordinates",
                                          layout->axes_output, &layout->num_axes_output);
    if (status != SPART_OK) {
        return status;
    }
    if (match_axes && layout->num_axes_output != layout->num_axes_input) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "axis_output has %d axes but axis_input has %d: they must match",
                          layout->num_axes_output, layout->num_axes_input);
    }
    if (layout->num_axes_input != num_coordinates) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_coordinates = %d must equal the number of axes in axis_input, %d",
                          num_coordinates, layout->num_axes_input);
    }
    spart_shape orthogonal_input = spart_shape_without_axes(
        &layout->shape_coordinates_input, layout->axes_input, layout->num_axes_input);
    spart_shape orthogonal_output = spart_shape_without_axes(
        &layout->shape_coordinates_output, layout->axes_output, layout->num_axes_output);
    if (spart_shape_broadcast(&orthogonal_input, &orthogonal_output, &layout->shape_orthogonal) !=
        0) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "the orthogonal axes of the input grid, %s, do not broadcast against "
                          "those of the output grid, %s",
                          spart_shape_format(&orthogonal_input, text_a, sizeof text_a),
                          spart_shape_format(&orthogonal_output, text_b, sizeof text_b));
    }
    if (layout->shape_orthogonal.ndim + layout->num_axes_input > SPART_MAX_NDIM ||
        layout->shape_orthogonal.ndim + layout->num_axes_output > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the broadcast grids would have more than %d axes", SPART_MAX_NDIM);
    }
    layout->full_input =
        spart_shape_insert_axes(&layout->shape_orthogonal, &layout->shape_coordinates_input,
                                layout->axes_input, layout->num_axes_input);
    layout->full_output =
        spart_shape_insert_axes(&layout->shape_orthogonal, &layout->shape_coordinates_output,
                                layout->axes_output, layout->num_axes_output);
    /* Resampled axes as non-negative numbers of the full shapes, ascending. */
    for (int a = 0; a < layout->num_axes_input; a++) {
        layout->resampled_input[layout->num_axes_input - 1 - a] =
            layout->full_input.ndim + layout->axes_input[a];
    }
    for (int a = 0; a < layout->num_axes_output; a++) {
        layout->resampled_output[layout->num_axes_output - 1 - a] =
            layout->full_output.ndim + layout->axes_output[a];
    }
    layout->num_elements = spart_shape_size(&layout->shape_orthogonal);
    layout->size_input = 1;
    for (int a = 0; a < layout->num_axes_input; a++) {
        int64_t n = layout->full_input.dims[layout->resampled_input[a]];
        layout->grid_shape_input[a] = n;
        layout->size_input *= n;
    }
    layout->size_output = 1;
    for (int a = 0; a < layout->num_axes_output; a++) {
        int64_t n = layout->full_output.dims[layout->resampled_output[a]];
        layout->grid_shape_output[a] = n;
        layout->size_output *= n;
    }
    for (int c = 0; c < num_coordinates; c++) {
        spart_broadcast_strides(&coordinates_input[c].shape, &layout->full_input,
                                layout->strides_input[c]);
        spart_broadcast_strides(&coordinates_output[c].shape, &layout->full_output,
                                layout->strides_output[c]);
    }
    return SPART_OK;
}

/* Whether every coordinate array has stride 0 along every orthogonal axis:
 * then all elements share one grid. */
static int grid_is_shared(const int64_t (*strides)[SPART_MAX_NDIM], int num_coordinates,
                          const spart_shape *full, const int *resampled, int num_resampled)
{
    for (int c = 0; c < num_coordinates; c++) {
        for (int k = 0; k < full->ndim; k++) {
            if (!spart_axes_contain(resampled, num_resampled, k) && strides[c][k] != 0 &&
                full->dims[k] > 1) {
                return 0;
            }
        }
    }
    return 1;
}

spart_status spart_weights_layout_gather(const spart_weights_layout *layout, int output,
                                         const spart_array *coordinates, int64_t element,
                                         double *const *blocks)
{
    if (layout->num_coordinates < 1 || layout->num_coordinates > 3) {
        return SPART_ERROR_INTERNAL; /* the layout was checked: 1 to 3 */
    }
    int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
    spart_unravel(element, &layout->shape_orthogonal, orthogonal_index);
    for (int c = 0; c < layout->num_coordinates; c++) {
        if (output) {
            /* coordinates holds num_coordinates arrays */
            /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
            spart_gather_block(coordinates[c].data, layout->strides_output[c], &layout->full_output,
                               layout->resampled_output, layout->num_axes_output, orthogonal_index,
                               blocks[c]);
        } else {
            spart_gather_block(coordinates[c].data, layout->strides_input[c], &layout->full_input,
                               layout->resampled_input, layout->num_axes_input, orthogonal_index,
                               blocks[c]);
        }
    }
    return SPART_OK;
}

int spart_weights_layout_input_shared(const spart_weights_layout *layout)
{
    return grid_is_shared(layout->strides_input, layout->num_coordinates, &layout->full_input,
                          layout->resampled_input, layout->num_axes_input);
}

int spart_weights_layout_output_shared(const spart_weights_layout *layout)
{
    return grid_is_shared(layout->strides_output, layout->num_coordinates, &layout->full_output,
                          layout->resampled_output, layout->num_axes_output);
}

/* Whether all of values[0 .. size-1] are finite: x - x is 0 for a finite
 * x and NaN for an infinity or a NaN, and a NaN stays in a sum. Four sums
 * side by side and no exit in the loop, which compilers turn into vector
 * code (a plain search for the first non-finite value takes a comparison
 * and a branch per value). */
static int all_finite(const double *values, int64_t size)
{
    double probe[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t k = 0;
    for (; k + 4 <= size; k += 4) {
        for (int lane = 0; lane < 4; lane++) {
            probe[lane] += values[k + lane] - values[k + lane];
        }
    }
    for (; k < size; k++) {
        probe[0] += values[k] - values[k];
    }
    return (probe[0] + probe[1]) + (probe[2] + probe[3]) == 0.0;
}

/* The first non-finite value of a coordinate array, or -1. */
static int64_t first_non_finite(const spart_array *array)
{
    int64_t size = spart_shape_size(&array->shape);
    if (all_finite(array->data, size)) {
        return -1;
    }
    for (int64_t k = 0; k < size; k++) {
        if (!isfinite(array->data[k])) {
            return k;
        }
    }
    return -1;
}

static spart_status check_finite(spart_context *context, const char *side, int num_coordinates,
                                 const spart_array *coordinates)
{
    for (int c = 0; c < num_coordinates; c++) {
        int64_t bad = first_non_finite(&coordinates[c]);
        if (bad >= 0) {
            return spart_fail(context, SPART_ERROR_NOT_FINITE,
                              "coordinates_%s[%d] has the non-finite value %g at flat index %lld",
                              side, c, coordinates[c].data[bad], (long long)bad);
        }
    }
    return SPART_OK;
}

spart_status spart_weights_input_strides(spart_context *context, const spart_weights_layout *layout,
                                         const spart_array *weights_input, int cells,
                                         spart_shape *full_values, int64_t *strides)
{
    char text_a[128], text_b[128];
    *full_values = layout->full_input;
    for (int a = 0; a < layout->num_axes_input; a++) {
        full_values->dims[layout->resampled_input[a]] -= cells ? 1 : 0;
    }
    if (weights_input == NULL) {
        return SPART_OK;
    }
    if (!spart_shape_is_valid(&weights_input->shape)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "weights_input: ndim = %d or an extent is out of range",
                          weights_input->shape.ndim);
    }
    if (weights_input->data == NULL && spart_shape_size(&weights_input->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights_input->data is NULL");
    }
    if (!spart_shape_broadcasts_to(&weights_input->shape, full_values)) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "weights_input has shape %s, which does not broadcast to the input "
                          "values' shape %s",
                          spart_shape_format(&weights_input->shape, text_a, sizeof text_a),
                          spart_shape_format(full_values, text_b, sizeof text_b));
    }
    spart_broadcast_strides(&weights_input->shape, full_values, strides);
    return SPART_OK;
}

/* Jitter the output vertices as regridding's perturb=True does: each
 * coordinate array in turn (x, then y, ...), every vertex of the full
 * output shape in C order, c += ptp(c over the element's resampled axes) *
 * 1e-9 * N(0, 1), the normal draws from GSL's MT19937 seeded with `seed`.
 * Writes dense full-shape arrays into perturbed[c]. */
static spart_status perturb_outputs(spart_context *context, const spart_weights_layout *layout,
                                    const spart_array *coordinates, uint64_t seed,
                                    double *const *perturbed)
{
    int64_t size = layout->size_output;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "perturb: no random generator");
    }
    gsl_rng_set(rng, (unsigned long)seed);
    int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
    int64_t full_index[SPART_MAX_NDIM] = {0};
    for (int c = 0; c < layout->num_coordinates; c++) {
        /* perturbed has num_coordinates <= 3 arrays */
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
        if (perturbed[c] == NULL) {
            gsl_rng_free(rng);
            return spart_fail(context, SPART_ERROR_INTERNAL, "perturb: no array for coordinate %d",
                              c);
        }
        /* Lay the full array out densely, element by element. */
        for (int64_t e = 0; e < layout->num_elements; e++) {
            double *block = perturbed[c] + e * size;
            spart_unravel(e, &layout->shape_orthogonal, orthogonal_index);
            spart_gather_block(coordinates[c].data, layout->strides_output[c], &layout->full_output,
                               layout->resampled_output, layout->num_axes_output, orthogonal_index,
                               block);
        }
        /* The element-major blocks are not C order over the full shape when
         * resampled axes are not trailing; walk the full shape in C order
         * and find each vertex's element and place in its block. */
        int64_t total = spart_shape_size(&layout->full_output);
        double *scale =
            spart_alloc(&context->allocator, (size_t)layout->num_elements, sizeof(double));
        if (scale == NULL) {
            gsl_rng_free(rng);
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "perturb: out of memory");
        }
        for (int64_t e = 0; e < layout->num_elements; e++) {
            const double *block = perturbed[c] + e * size;
            double low = INFINITY, high = -INFINITY;
            for (int64_t v = 0; v < size; v++) {
                low = block[v] < low ? block[v] : low;
                high = block[v] > high ? block[v] : high;
            }
            scale[e] = (high - low) * PERTURB_EPSILON;
        }
        for (int64_t flat = 0; flat < total; flat++) {
            spart_unravel(flat, &layout->full_output, full_index);
            int64_t element = 0, place = 0;
            int o = 0;
            for (int k = 0; k < layout->full_output.ndim; k++) {
                if (spart_axes_contain(layout->resampled_output, layout->num_axes_output, k)) {
                    place = place * layout->full_output.dims[k] + full_index[k];
                } else {
                    element = element * layout->shape_orthogonal.dims[o] + full_index[k];
                    o++;
                }
            }
            perturbed[c][element * size + place] += gsl_ran_gaussian_ziggurat(rng, scale[element]);
        }
        spart_free(&context->allocator, scale);
    }
    gsl_rng_free(rng);
    return SPART_OK;
}

/* The orientation of a 2-D grid: the sign of its total signed area (+1
 * when x grows along axis 0 and y along axis 1, -1 when mirrored, 0 for a
 * grid of no area). */
static int grid_orientation(const double *x, const double *y, int64_t num_x, int64_t num_y)
{
    double total = 0.0;
    for (int64_t a = 0; a + 1 < num_x; a++) {
        for (int64_t b = 0; b + 1 < num_y; b++) {
            total += spart_grid_cell_area(x, y, num_y, a, b);
        }
    }
    return (total > 0.0) - (total < 0.0);
}

/* Reverse a grid of num_x by num_y vertices along axis 0, in place. */
static void reverse_axis_0(double *values, int64_t num_x, int64_t num_y)
{
    if (values == NULL) {
        return;
    }
    for (int64_t a = 0, b = num_x - 1; a < b; a++, b--) {
        for (int64_t j = 0; j < num_y; j++) {
            double swap = values[a * num_y + j];
            values[a * num_y + j] = values[b * num_y + j];
            values[b * num_y + j] = swap;
        }
    }
}

/* The Ramshaw sweep, on grids of the same orientation. The sweep assumes
 * it (regridding.md §5, item 2: mirrored grids give wrong weights), so a
 * mirrored output grid is reversed along axis 0 for the sweep and the
 * output cells it reports are mapped back to their own indices. */
static spart_status sweep_same_orientation(const double *const *input, const int64_t *shape_in,
                                           double *const *output, const int64_t *shape_out,
                                           const double *weights_input, int threads,
                                           spart_triples *triples)
{
    int mirrored = grid_orientation(input[0], input[1], shape_in[0], shape_in[1]) *
                       grid_orientation(output[0], output[1], shape_out[0], shape_out[1]) <
                   0;
    if (mirrored) {
        reverse_axis_0(output[0], shape_out[0], shape_out[1]);
        reverse_axis_0(output[1], shape_out[0], shape_out[1]);
    }
    int64_t first = triples->count;
    spart_status status = spart_host_weights_conservative_2d_sweep(
        input[0], input[1], shape_in[0], shape_in[1], output[0], output[1], shape_out[0],
        shape_out[1], weights_input, threads, triples);
    if (mirrored) {
        int64_t cells_y = shape_out[1] - 1, last_row = shape_out[0] - 2;
        for (int64_t k = first; k < triples->count; k++) {
            int64_t row = triples->indices_output[k] / cells_y;
            int64_t column = triples->indices_output[k] % cells_y;
            triples->indices_output[k] = (last_row - row) * cells_y + column;
        }
    }
    return status;
}

/* How conservative 2-D weights are clipped: not (the sweep, and every
 * other builder), against a lattice, or against any grid. */
enum { NO_CLIPPING = 0, CLIP_LATTICE = 1, CLIP_GENERAL = 2 };

/* Everything one element's kernel call needs, shared by all elements. */
typedef struct build_plan {
    const spart_weights_options *options;
    const spart_weights_layout *layout;
    const spart_array *coordinates_input;
    const spart_array *coordinates_output;
    double *const *perturbed; /* the perturbed output blocks, one per element, or NULL */
    const spart_array *weights_input;
    spart_shape full_values_input;
    int64_t strides_weights_input[SPART_MAX_NDIM];
    int64_t size_values_input; /* cells (conservative) or vertices of one element */
    int clip;                  /* conservative 2-D: the 2-D algorithm, one of the above */
    int threads;               /* inside the element; 1 when parallel over elements */
    /* A side's coordinates gathered once, when every element shares that
     * grid (and the kernel only reads it); NULL otherwise. */
    double *shared_input[3];
    double *shared_output[3];
} build_plan;

/* Whether the plan runs the Ramshaw sweep, which mirrors its output
 * coordinates in place (sweep_same_orientation): it needs its own copy of
 * each element's. */
static int plan_sweeps(const build_plan *plan)
{
    return plan->options->method == SPART_METHOD_CONSERVATIVE &&
           plan->layout->num_coordinates == 2 && plan->clip == NO_CLIPPING;
}

/* Whether an element's output coordinates are gathered into its thread's
 * scratch (not shared, and not perturbed blocks the kernel may read in
 * place). */
static int plan_gathers_output(const build_plan *plan)
{
    if (plan->shared_output[0] != NULL) {
        return 0;
    }
    return plan->perturbed == NULL || plan_sweeps(plan);
}

/* The doubles of scratch an element needs: its input coordinates (unless
 * shared), its output coordinates (unless shared or read in place) and its
 * weights_input. */
static size_t element_scratch_size(const build_plan *plan)
{
    const spart_weights_layout *layout = plan->layout;
    size_t n = (size_t)layout->num_coordinates;
    size_t size = 0;
    if (plan->shared_input[0] == NULL) {
        size += n * (size_t)layout->size_input;
    }
    if (plan_gathers_output(plan)) {
        size += n * (size_t)layout->size_output;
    }
    if (plan->weights_input != NULL) {
        size += (size_t)plan->size_values_input;
    }
    return size;
}

/* Point blocks[c] at one side's coordinates (output nonzero: the output
 * grid's) of the element at orthogonal index `index`: in the caller's
 * arrays themselves where the element's block lies there contiguous and in
 * C order, else a copy gathered into `space`. Returns the space left. */
static double *side_blocks(const spart_weights_layout *layout, int output,
                           const spart_array *coordinates, const int64_t *index, double *space,
                           const double **blocks)
{
    const int64_t(*strides)[SPART_MAX_NDIM] =
        output ? layout->strides_output : layout->strides_input;
    const spart_shape *full = output ? &layout->full_output : &layout->full_input;
    const int *resampled = output ? layout->resampled_output : layout->resampled_input;
    const int num_resampled = output ? layout->num_axes_output : layout->num_axes_input;
    const size_t size = (size_t)(output ? layout->size_output : layout->size_input);
    for (int c = 0; c < layout->num_coordinates; c++) {
        blocks[c] = spart_block_in_place(coordinates[c].data, strides[c], full, resampled,
                                         num_resampled, index);
        if (blocks[c] == NULL) {
            spart_gather_block(coordinates[c].data, strides[c], full, resampled, num_resampled,
                               index, space);
            blocks[c] = space;
            space += size;
        }
    }
    return space;
}

/* Point input[c] and output[c] at element `element`'s coordinates: the
 * shared blocks, the caller's arrays in place, the perturbed blocks, or
 * copies in scratch. The sweep writes its output coordinates, so for it
 * they are always copies, writable_output[c]. Returns the element's
 * weights_input gathered into scratch (NULL for none). */
static const double *element_arrays(const build_plan *plan, int64_t element, double *scratch,
                                    const double **input, const double **output,
                                    double **writable_output)
{
    const spart_weights_layout *layout = plan->layout;
    const int n = layout->num_coordinates;
    const size_t size_out = (size_t)layout->size_output;
    int64_t index[SPART_MAX_NDIM] = {0};
    spart_unravel(element, &layout->shape_orthogonal, index);
    double *space = scratch;
    if (plan->shared_input[0] != NULL) {
        for (int c = 0; c < n; c++) {
            input[c] = plan->shared_input[c];
        }
    } else {
        space = side_blocks(layout, 0, plan->coordinates_input, index, space, input);
    }
    if (plan->shared_output[0] != NULL) {
        for (int c = 0; c < n; c++) {
            output[c] = plan->shared_output[c];
        }
    } else if (plan_sweeps(plan)) {
        for (int c = 0; c < n; c++) {
            writable_output[c] = space + (size_t)c * size_out;
            output[c] = writable_output[c];
        }
        space += (size_t)n * size_out;
        if (plan->perturbed != NULL) {
            for (int c = 0; c < n; c++) {
                memcpy(writable_output[c], plan->perturbed[c] + (size_t)element * size_out,
                       size_out * sizeof(double));
            }
        } else {
            spart_weights_layout_gather(layout, 1, plan->coordinates_output, element,
                                        writable_output);
        }
    } else if (plan->perturbed != NULL) {
        for (int c = 0; c < n; c++) {
            output[c] = plan->perturbed[c] + (size_t)element * size_out;
        }
    } else {
        space = side_blocks(layout, 1, plan->coordinates_output, index, space, output);
    }
    if (plan->weights_input == NULL) {
        return NULL;
    }
    spart_gather_block(plan->weights_input->data, plan->strides_weights_input,
                       &plan->full_values_input, layout->resampled_input, layout->num_axes_input,
                       index, space);
    return space;
}

/* Run element `element`'s kernel, appending its entries to `triples`;
 * scratch holds element_scratch_size(plan) doubles. */
static spart_status build_element(const build_plan *plan, double *scratch, int64_t element,
                                  spart_triples *triples, int64_t *num_outside)
{
    const spart_weights_layout *layout = plan->layout;
    const int n = layout->num_coordinates;
    const double *input[3] = {NULL, NULL, NULL}, *output[3] = {NULL, NULL, NULL};
    double *writable_output[3] = {NULL, NULL, NULL};
    const double *weights_input =
        element_arrays(plan, element, scratch, input, output, writable_output);
    const int64_t *shape_in = layout->grid_shape_input;
    const int64_t *shape_out = layout->grid_shape_output;
    spart_status status;
    *num_outside = 0;
    if (plan->options->method == SPART_METHOD_MULTILINEAR) {
        status = spart_host_weights_multilinear(n, shape_in, input, layout->size_output, output,
                                                weights_input, plan->options->bounds, plan->threads,
                                                triples, num_outside);
    } else if (n == 1) {
        status = spart_host_weights_conservative_1d(input[0], shape_in[0], output[0], shape_out[0],
                                                    weights_input, triples);
    } else if (plan->clip == CLIP_LATTICE) {
        status = spart_host_weights_conservative_2d_clip(
            input[0], input[1], shape_in[0], shape_in[1], output[0], output[1], shape_out[0],
            shape_out[1], weights_input, plan->threads, triples);
    } else if (plan->clip == CLIP_GENERAL) {
        status = spart_host_weights_conservative_2d_clip_general(
            input[0], input[1], shape_in[0], shape_in[1], output[0], output[1], shape_out[0],
            shape_out[1], weights_input, plan->threads, triples);
    } else {
        status = sweep_same_orientation(input, shape_in, writable_output, shape_out, weights_input,
                                        plan->threads, triples);
    }
    /* Clipping emits each pair once, sorted: nothing to coalesce. */
    if (status == SPART_OK && plan->options->coalesce && plan->clip == NO_CLIPPING) {
        status = spart_weights_coalesce(triples);
    }
    return status;
}

/* Whether every output element is a uniform axis-aligned lattice. */
static spart_status outputs_are_lattices(spart_context *context, const spart_weights_layout *layout,
                                         const spart_array *coordinates_output, int *lattice)
{
    size_t size = (size_t)layout->size_output;
    double *blocks = spart_alloc(&context->allocator, 2 * size, sizeof(double));
    if (blocks == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights: out of memory");
    }
    const double *xy[3] = {NULL, NULL, NULL};
    int64_t count = spart_weights_layout_output_shared(layout) ? 1 : layout->num_elements;
    *lattice = 1;
    for (int64_t e = 0; e < count && *lattice; e++) {
        int64_t index[SPART_MAX_NDIM] = {0};
        spart_unravel(e, &layout->shape_orthogonal, index);
        side_blocks(layout, 1, coordinates_output, index, blocks, xy);
        *lattice = spart_host_grid_is_lattice(xy[0], xy[1], layout->grid_shape_output[0],
                                              layout->grid_shape_output[1]);
    }
    spart_free(&context->allocator, blocks);
    return SPART_OK;
}

/* Say why an element's kernel failed, in words a user can act on. */
static void report_kernel_failure(spart_context *context, const build_plan *plan, int64_t element,
                                  spart_status status)
{
    if (status == SPART_ERROR_OUT_OF_MEMORY) {
        spart_fail(context, status, "weights element %lld: out of memory", (long long)element);
    } else if (plan_sweeps(plan) && status == SPART_ERROR_INVALID_ARGUMENT) {
        /* The sweep stops a walk that cycles: a grid line runs exactly
         * through a vertex of the other grid. */
        spart_fail(context, status,
                   "weights element %lld: the grids are degenerate (a grid line passes exactly "
                   "through a vertex of the other grid) and the sweep cannot follow it; perturb "
                   "the output grid (perturb = SPART_PERTURB_DEFAULT or SPART_PERTURB_YES)",
                   (long long)element);
    } else {
        spart_fail(
            context, status, "weights element %lld: the %s kernel failed (%s)", (long long)element,
            plan->options->method == SPART_METHOD_MULTILINEAR ? "multilinear" : "conservative",
            spart_status_string(status));
    }
}

/* Gather the coordinates of a side every element shares, once, into
 * blocks[c] (allocated here; the caller frees blocks[0]), when the kernel
 * only reads them. Leaves blocks NULL otherwise; 0 on success, -1 when out
 * of memory. */
static int gather_shared_side(const build_plan *plan, const spart_allocator *allocator, int output,
                              double **blocks)
{
    const spart_weights_layout *layout = plan->layout;
    const int n = layout->num_coordinates;
    int shared = output ? spart_weights_layout_output_shared(layout) && plan->perturbed == NULL &&
                              !plan_sweeps(plan)
                        : spart_weights_layout_input_shared(layout);
    if (!shared || layout->num_elements < 2) {
        return 0;
    }
    const size_t size = (size_t)(output ? layout->size_output : layout->size_input);
    double *memory = spart_alloc(allocator, (size_t)n * size, sizeof(double));
    if (memory == NULL) {
        return -1;
    }
    for (int c = 0; c < n; c++) {
        blocks[c] = memory + (size_t)c * size;
    }
    spart_weights_layout_gather(
        layout, output, output ? plan->coordinates_output : plan->coordinates_input, 0, blocks);
    return 0;
}

/* The weights' arrays, filled element by element in element order, and
 * what the elements built out of turn wait in. Elements are built side by
 * side, each into a list of its own, and a finished element is appended
 * to the arrays as soon as every element before it has been. One thread
 * at a time appends (whichever finds none appending when it finishes an
 * element), copying outside the lock, while the others go on to their
 * next elements: no thread ever waits for another one's kernel (which a
 * busy core could hold up for long) nor for a copy. The list memory of
 * appended elements is handed on to elements not yet started, so that a
 * build allocates (and touches fresh pages) for a few lists, not one per
 * element. The lock (critical spart_weights_join) guards `next`, `built`,
 * `spare`, `num_spare`, `appending` and `failed`; `entries`, `offsets` and
 * `out_of_memory` belong to the appending thread. */
typedef struct joined_entries {
    spart_triples entries; /* elements 0 .. next - 1 */
    int64_t *offsets;      /* num_elements + 1 */
    int64_t num_elements;
    int64_t next;         /* the next element to append */
    spart_triples *lists; /* per element: the list it is built into */
    unsigned char *built; /* per element: whether its kernel has finished */
    int64_t *spare;       /* appended elements whose lists hold memory to hand on */
    int64_t num_spare;
    int appending;     /* a thread is appending */
    int out_of_memory; /* an element could not be appended */
    int failed;        /* an element failed or could not be appended: skip the rest */
} joined_entries;

/* Make room for `needed` entries, the entries of `placed` elements. When
 * the arrays must grow, they grow to twice what all the elements would
 * need at the mean size of those placed (the elements may grow along the
 * stack), and at least to twice their capacity: a growth may copy the
 * arrays, so it should seldom come, and room never written costs no
 * memory (its pages are never touched; the arrays are cut to size at the
 * end). 0 on success, -1 when out of memory. */
static int reserve_for_the_rest(joined_entries *joined, int64_t placed, int64_t needed)
{
    const int64_t capacity = joined->entries.capacity;
    if (needed <= capacity) {
        return 0;
    }
    double grown = 2.0 * (double)needed / (double)placed * (double)joined->num_elements;
    grown = grown > 2.0 * (double)capacity ? grown : 2.0 * (double)capacity;
    if (grown < 0x1p62 && spart_triples_reserve(&joined->entries, (int64_t)grown) == 0) {
        return 0;
    }
    return spart_triples_reserve(&joined->entries, needed);
}

/* Give element `element` an empty list, with the memory of an appended
 * element's list when there is one; NULL when an element has failed (the
 * build will fail: the rest are skipped). Call from one thread at a
 * time. */
static spart_triples *take_list(joined_entries *joined, int64_t element)
{
    if (joined->failed) {
        return NULL; /* the build has failed: no need to build this one */
    }
    spart_triples *list = &joined->lists[element];
    if (joined->num_spare > 0) {
        spart_triples *spare = &joined->lists[joined->spare[--joined->num_spare]];
        *list = *spare;
        spart_triples_init(spare, spare->allocator);
    }
    list->count = 0;
    return list;
}

/* Append element `element`'s entries (none when `ok` is 0: its kernel
 * failed) and record where it ends. */
static void append_element(joined_entries *joined, int64_t element, int ok)
{
    spart_triples *list = &joined->lists[element];
    if (ok && !joined->out_of_memory) {
        const int64_t needed = joined->entries.count + list->count;
        if (reserve_for_the_rest(joined, element + 1, needed) != 0 ||
            spart_triples_extend(&joined->entries, list) != 0) {
            joined->out_of_memory = 1;
        }
    }
    joined->offsets[element + 1] = joined->entries.count;
    list->count = 0;
}

/* The next element to append, under the lock: -1 when it is not built yet
 * (the calling thread then stops appending). */
static int64_t next_to_append(joined_entries *joined)
{
    int64_t next = -1;
#pragma omp critical(spart_weights_join)
    {
        if (joined->next < joined->num_elements && joined->built[joined->next]) {
            next = joined->next;
        } else {
            joined->appending = 0;
        }
    }
    return next;
}

/* Record that element `element`'s kernel has finished (statuses[e] says
 * whether element e succeeded) and, unless another thread is appending,
 * append every finished element that is next in line. */
static void finish_element(const spart_context *context, joined_entries *joined, int64_t element,
                           const spart_status *statuses)
{
    int append = 0;
#pragma omp critical(spart_weights_join)
    {
        joined->built[element] = 1;
        joined->failed = joined->failed || statuses[element] != SPART_OK;
        append = !joined->appending;
        joined->appending = 1;
    }
    for (int64_t next = append ? next_to_append(joined) : -1; next >= 0;
         next = next_to_append(joined)) {
        append_element(joined, next, statuses[next] == SPART_OK);
        const int out_of_memory = joined->out_of_memory;
#pragma omp critical(spart_weights_join)
        {
            joined->next = next + 1;
            joined->spare[joined->num_spare++] = next; /* its list's memory, to hand on */
            joined->failed = joined->failed || out_of_memory;
            spart_report_progress(context, "weights", next + 1, joined->num_elements);
        }
    }
}

/* The per-element bookkeeping of `joined`; 0 on success, -1 when out of
 * memory. */
static int joined_init(joined_entries *joined, const spart_allocator *allocator,
                       int64_t num_elements)
{
    const size_t slots = (size_t)(num_elements > 0 ? num_elements : 1);
    memset(joined, 0, sizeof *joined);
    spart_triples_init(&joined->entries, allocator);
    joined->num_elements = num_elements;
    joined->offsets = spart_alloc_zero(allocator, slots + 1, sizeof(int64_t));
    joined->lists = spart_alloc(allocator, slots, sizeof(spart_triples));
    joined->built = spart_alloc_zero(allocator, slots, sizeof(unsigned char));
    joined->spare = spart_alloc(allocator, slots, sizeof(int64_t));
    if (joined->lists != NULL) {
        for (int64_t e = 0; e < num_elements; e++) {
            spart_triples_init(&joined->lists[e], allocator);
        }
    }
    return joined->offsets != NULL && joined->lists != NULL && joined->built != NULL &&
                   joined->spare != NULL
               ? 0
               : -1;
}

static void joined_release(joined_entries *joined)
{
    const spart_allocator *allocator = joined->entries.allocator;
    if (joined->lists != NULL) {
        for (int64_t e = 0; e < joined->num_elements; e++) {
            spart_triples_release(&joined->lists[e]);
        }
    }
    spart_triples_release(&joined->entries);
    spart_free(allocator, joined->offsets);
    spart_free(allocator, joined->lists);
    spart_free(allocator, joined->built);
    spart_free(allocator, joined->spare);
}

/* Before element `element` (> 0) is built straight into the joined arrays:
 * room for one more element of the mean size so far. */
static void reserve_for_next(joined_entries *joined, int64_t element)
{
    const int64_t count = joined->entries.count;
    if (!joined->out_of_memory &&
        reserve_for_the_rest(joined, element + 1, count + count / element) != 0) {
        joined->out_of_memory = 1;
    }
}

/* Build every element, `threads` threads taking the next element as they
 * finish one, and join them in element order (joined_entries). A single
 * element, and the elements of a serial build whose kernel only appends
 * (the clipping kernels: nothing to coalesce), are built straight into the
 * joined arrays instead, without a copy. A single element gets
 * `plan->threads` threads inside it. `scratch` holds threads *
 * element_scratch_size(plan) doubles; statuses[e] and outside[e] come in
 * as SPART_OK and 0. Once an element fails the elements not yet started
 * are skipped (they keep SPART_OK and 0: the failure is reported). */
static void build_elements(const spart_context *context, const build_plan *plan, int threads,
                           double *scratch, joined_entries *joined, spart_status *statuses,
                           int64_t *outside)
{
    const int64_t num_elements = joined->num_elements;
    const size_t scratch_size = element_scratch_size(plan);
    if (num_elements == 1 || (threads == 1 && plan->clip != NO_CLIPPING)) {
        for (int64_t e = 0; e < num_elements; e++) {
            if (e > 0) {
                reserve_for_next(joined, e);
            }
            statuses[e] = build_element(plan, scratch, e, &joined->entries, &outside[e]);
            joined->offsets[e + 1] = joined->entries.count;
            if (statuses[e] != SPART_OK || joined->out_of_memory) {
                return;
            }
            spart_report_progress(context, "weights", e + 1, num_elements);
        }
        return;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int64_t e = 0; e < num_elements; e++) {
        double *own_scratch = scratch + (size_t)omp_get_thread_num() * scratch_size;
        spart_triples *list = NULL;
#pragma omp critical(spart_weights_join)
        list = take_list(joined, e);
        if (list != NULL) {
            statuses[e] = build_element(plan, own_scratch, e, list, &outside[e]);
        }
        finish_element(context, joined, e, statuses);
    }
}

/* The threads of a build: `*outer` over elements, `*inner` inside an
 * element (the context's count for a single element, else 1). */
static void choose_threads(const spart_context *context, const spart_weights_layout *layout,
                           int *outer, int *inner)
{
    int threads = spart_threads(context);
    /* Work of well under a millisecond gains nothing from more threads and
     * loses much when a core is busy elsewhere (every thread waits at the
     * region's end for the slowest): keep small builds on one thread. */
    const int64_t work = layout->num_elements * (layout->size_input + layout->size_output);
    if (work < SMALL_BUILD) {
        threads = 1;
    }
    const int64_t num_elements = layout->num_elements;
    *inner = num_elements > 1 ? 1 : threads;
    *outer = num_elements > 1 && threads > num_elements ? (int)num_elements : threads;
}

/* The status of a finished build: the first element that failed, then
 * joining, then points outside the grid under SPART_BOUNDS_ERROR. */
static spart_status check_elements(spart_context *context, const build_plan *plan,
                                   const joined_entries *joined, const spart_status *statuses,
                                   const int64_t *outside)
{
    int64_t num_outside = 0;
    for (int64_t e = 0; e < joined->num_elements; e++) {
        if (statuses[e] != SPART_OK) {
            report_kernel_failure(context, plan, e, statuses[e]);
            return statuses[e];
        }
        num_outside += outside[e];
    }
    if (joined->out_of_memory) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights: out of memory joining the elements' entries");
    }
    if (plan->options->method == SPART_METHOD_MULTILINEAR &&
        plan->options->bounds == SPART_BOUNDS_ERROR && num_outside > 0) {
        return spart_fail(context, SPART_ERROR_OUT_OF_BOUNDS,
                          "%lld of the output points fall outside the input grid, and bounds "
                          "= SPART_BOUNDS_ERROR",
                          (long long)num_outside);
    }
    return SPART_OK;
}

/* Run the kernels over every element and join the results. */
static spart_status build_all(spart_context *context, const build_plan *plan,
                              const spart_shape *shape_input, const spart_shape *shape_output,
                              const int *axes_input, const int *axes_output,
                              spart_weights **weights)
{
    const spart_allocator *allocator = &context->allocator;
    const spart_weights_layout *layout = plan->layout;
    const size_t num_slots = (size_t)(layout->num_elements > 0 ? layout->num_elements : 1);
    build_plan element_plan = *plan;
    int threads = 1;
    choose_threads(context, layout, &threads, &element_plan.threads);
    joined_entries joined;
    int failed = joined_init(&joined, allocator, layout->num_elements) != 0;
    failed =
        gather_shared_side(&element_plan, allocator, 0, element_plan.shared_input) != 0 || failed;
    failed =
        gather_shared_side(&element_plan, allocator, 1, element_plan.shared_output) != 0 || failed;
    spart_status *statuses = spart_alloc(allocator, num_slots, sizeof(spart_status));
    int64_t *outside = spart_alloc_zero(allocator, num_slots, sizeof(int64_t));
    for (int64_t e = 0; statuses != NULL && e < layout->num_elements; e++) {
        statuses[e] = SPART_OK;
    }
    double *scratch = spart_alloc(allocator, (size_t)threads * element_scratch_size(&element_plan),
                                  sizeof(double));
    spart_status status = SPART_OK;
    if (failed || statuses == NULL || outside == NULL || scratch == NULL) {
        status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights: out of memory");
    } else {
        spart_report_progress(context, "weights", 0, layout->num_elements);
        build_elements(context, &element_plan, threads, scratch, &joined, statuses, outside);
        status = check_elements(context, plan, &joined, statuses, outside);
    }
    if (status == SPART_OK) {
        status = spart_weights_adopt_entries(context, &layout->shape_orthogonal, shape_input,
                                             shape_output, layout->num_axes_input, axes_input,
                                             layout->num_axes_output, axes_output, joined.offsets,
                                             &joined.entries, weights);
    }
    joined_release(&joined);
    spart_free(allocator, element_plan.shared_input[0]);
    spart_free(allocator, element_plan.shared_output[0]);
    spart_free(allocator, statuses);
    spart_free(allocator, outside);
    spart_free(allocator, scratch);
    return status;
}

/* The shape regridding.weights() reports for one side: the coordinates'
 * broadcast shape, less one along resampled axes for cells; and the
 * resampled axes as non-negative numbers, ascending. */
static void reported_shape(const spart_shape *coordinates, const int *axes_descending, int count,
                           int cells, spart_shape *shape, int *axes)
{
    *shape = *coordinates;
    for (int a = 0; a < count; a++) {
        int axis = coordinates->ndim + axes_descending[a];
        shape->dims[axis] -= cells ? 1 : 0;
        axes[count - 1 - a] = axis;
    }
}

static spart_status check_grid_sizes(spart_context *context, const spart_weights_layout *layout,
                                     int conservative)
{
    for (int a = 0; a < layout->num_axes_input; a++) {
        if (layout->grid_shape_input[a] < 2) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "the input grid has %lld vertices along resampled axis %d: it "
                              "needs at least two",
                              (long long)layout->grid_shape_input[a],
                              layout->resampled_input[a] - layout->full_input.ndim);
        }
    }
    for (int a = 0; conservative && a < layout->num_axes_output; a++) {
        if (layout->grid_shape_output[a] < 2) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "the output grid has %lld vertices along resampled axis %d: it "
                              "needs at least two",
                              (long long)layout->grid_shape_output[a],
                              layout->resampled_output[a] - layout->full_output.ndim);
        }
    }
    return SPART_OK;
}

/* Check everything spart_weights_build checks before it computes, and
 * work out the layout. */
static spart_status prepare(spart_context *context, int num_coordinates,
                            const spart_array *coordinates_input,
                            const spart_array *coordinates_output,
                            const spart_weights_options *options, spart_weights_layout *layout)
{
    if (coordinates_input == NULL || coordinates_output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "coordinates_input and coordinates_output must not be NULL");
    }
    spart_status status = check_options(context, options, num_coordinates);
    if (status != SPART_OK) {
        return status;
    }
    int conservative = options->method == SPART_METHOD_CONSERVATIVE;
    status = spart_weights_layout_make(
        context, num_coordinates, coordinates_input, coordinates_output, options->num_axis_input,
        options->axis_input, options->num_axis_output, options->axis_output,
        conservative || options->num_axis_output == 0, layout);
    if (status != SPART_OK) {
        return status;
    }
    status = check_grid_sizes(context, layout, conservative);
    if (status != SPART_OK) {
        return status;
    }
    status = check_finite(context, "input", num_coordinates, coordinates_input);
    if (status == SPART_OK && conservative) {
        status = check_finite(context, "output", num_coordinates, coordinates_output);
    }
    return status;
}

spart_status spart_weights_describe(spart_context *context, int num_coordinates,
                                    const spart_array *coordinates_input,
                                    const spart_array *coordinates_output,
                                    const spart_weights_options *options, spart_weights *shell)
{
    spart_weights_layout layout;
    memset(&layout, 0, sizeof layout);
    spart_status status =
        prepare(context, num_coordinates, coordinates_input, coordinates_output, options, &layout);
    if (status != SPART_OK) {
        return status;
    }
    int conservative = options->method == SPART_METHOD_CONSERVATIVE;
    memset(shell, 0, sizeof *shell);
    shell->shape_orthogonal = layout.shape_orthogonal;
    shell->num_elements = layout.num_elements;
    shell->num_axis_input = layout.num_axes_input;
    shell->num_axis_output = layout.num_axes_output;
    reported_shape(&layout.shape_coordinates_input, layout.axes_input, layout.num_axes_input,
                   conservative, &shell->shape_input, shell->axis_input);
    reported_shape(&layout.shape_coordinates_output, layout.axes_output, layout.num_axes_output,
                   conservative, &shell->shape_output, shell->axis_output);
    shell->size_input = 1;
    for (int a = 0; a < shell->num_axis_input; a++) {
        shell->size_input *= shell->shape_input.dims[shell->axis_input[a]];
    }
    shell->size_output = 1;
    for (int a = 0; a < shell->num_axis_output; a++) {
        shell->size_output *= shell->shape_output.dims[shell->axis_output[a]];
    }
    return SPART_OK;
}

spart_status spart_weights_build(spart_context *context, int num_coordinates,
                                 const spart_array *coordinates_input,
                                 const spart_array *coordinates_output,
                                 const spart_weights_options *options, spart_weights **weights)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights: the output pointer is NULL");
    }
    *weights = NULL;
    spart_weights_options defaults;
    if (options == NULL) {
        spart_weights_options_init(&defaults);
        options = &defaults;
    }
    spart_weights_layout layout;
    memset(&layout, 0, sizeof layout);
    spart_status status =
        prepare(context, num_coordinates, coordinates_input, coordinates_output, options, &layout);
    if (status != SPART_OK) {
        return status;
    }
    int conservative = options->method == SPART_METHOD_CONSERVATIVE;

    build_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.options = options;
    plan.layout = &layout;
    plan.coordinates_input = coordinates_input;
    plan.coordinates_output = coordinates_output;
    plan.weights_input = options->weights_input;
    status = spart_weights_input_strides(context, &layout, options->weights_input, conservative,
                                         &plan.full_values_input, plan.strides_weights_input);
    if (status != SPART_OK) {
        return status;
    }
    plan.size_values_input = 1;
    for (int a = 0; a < layout.num_axes_input; a++) {
        plan.size_values_input *= plan.full_values_input.dims[layout.resampled_input[a]];
    }

    /* Conservative 2-D: clipping, on the lattice fast path when every
     * output grid is a lattice (as regridding chooses), else the general
     * one; the sweep only when asked for. */
    if (conservative && num_coordinates == 2 && options->algorithm != SPART_ALGORITHM_SWEEP) {
        int lattice = 0;
        status = outputs_are_lattices(context, &layout, coordinates_output, &lattice);
        if (status != SPART_OK) {
            return status;
        }
        plan.clip = lattice ? CLIP_LATTICE : CLIP_GENERAL;
    }
    /* The jitter exists for the sweep: on by default there, on elsewhere
     * only when asked (never on a lattice, which it would break). */
    int perturb = options->perturb == SPART_PERTURB_YES ||
                  (options->perturb == SPART_PERTURB_DEFAULT && plan_sweeps(&plan));
    perturb = perturb && plan.clip != CLIP_LATTICE;

    double *perturbed[3] = {NULL, NULL, NULL};
    if (perturb) {
        for (int c = 0; c < num_coordinates; c++) {
            perturbed[c] =
                spart_alloc(&context->allocator, (size_t)(layout.num_elements * layout.size_output),
                            sizeof(double));
            if (perturbed[c] == NULL) {
                status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                                    "weights: out of memory for the perturbed output grid");
            }
        }
        if (status == SPART_OK) {
            status =
                perturb_outputs(context, &layout, coordinates_output, options->seed, perturbed);
        }
        plan.perturbed = perturbed;
    }
    if (status == SPART_OK) {
        spart_shape shape_input, shape_output;
        int axes_input[SPART_MAX_NDIM] = {0}, axes_output[SPART_MAX_NDIM] = {0};
        reported_shape(&layout.shape_coordinates_input, layout.axes_input, layout.num_axes_input,
                       conservative, &shape_input, axes_input);
        reported_shape(&layout.shape_coordinates_output, layout.axes_output, layout.num_axes_output,
                       conservative, &shape_output, axes_output);
        status = build_all(context, &plan, &shape_input, &shape_output, axes_input, axes_output,
                           weights);
    }
    for (int c = 0; c < 3; c++) {
        spart_free(&context->allocator, perturbed[c]); /* NULL where never allocated */
    }
    return status;
}
