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
 *
 * The layout of the coordinates (axes, broadcasting, strides) is worked out
 * in src/weights/weights_layout.c, the output grid perturbed in
 * src/weights/weights_perturb.c, and the elements' entries are joined in
 * src/weights/weights_join.c.
 *
 * spart_weights_build_host is the host table's build
 * (src/weights/weights_ops.h); spart_weights_build, in
 * src/weights/weights_build_device.c, calls it through the table.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "weights/geometry_2d.h"
#include "core/shape.h"
#include "weights/weights_build.h"
#include "weights/weights_kernels.h"
#include "weights/weights_internal.h"
#include "weights/weights_join.h"
#include "weights/weights_ops.h"

/* Builds of fewer vertices (input and output, all elements) than this run
 * on one thread. */
#define SMALL_BUILD 65536

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

/* Build every element, `threads` threads taking the next element as they
 * finish one, and join them in element order (spart_joined_entries). A single
 * element, and the elements of a serial build whose kernel only appends
 * (the clipping kernels: nothing to coalesce), are built straight into the
 * joined arrays instead, without a copy. A single element gets
 * `plan->threads` threads inside it. `scratch` holds threads *
 * element_scratch_size(plan) doubles; statuses[e] and outside[e] come in
 * as SPART_OK and 0. Once an element fails the elements not yet started
 * are skipped (they keep SPART_OK and 0: the failure is reported). */
static void build_elements(const spart_context *context, const build_plan *plan, int threads,
                           double *scratch, spart_joined_entries *joined, spart_status *statuses,
                           int64_t *outside)
{
    const int64_t num_elements = joined->num_elements;
    const size_t scratch_size = element_scratch_size(plan);
    if (num_elements == 1 || (threads == 1 && plan->clip != NO_CLIPPING)) {
        for (int64_t e = 0; e < num_elements; e++) {
            if (e > 0) {
                spart_joined_reserve_for_next(joined, e);
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
        list = spart_joined_take_list(joined, e);
        if (list != NULL) {
            statuses[e] = build_element(plan, own_scratch, e, list, &outside[e]);
        }
        spart_joined_finish_element(context, joined, e, statuses);
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
                                   const spart_joined_entries *joined, const spart_status *statuses,
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
    spart_joined_entries joined;
    int failed = spart_joined_init(&joined, allocator, layout->num_elements) != 0;
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
    spart_joined_release(&joined);
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
                            const spart_weights_options *options, int check_values,
                            spart_weights_layout *layout)
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
    if (status != SPART_OK || !check_values) {
        return status;
    }
    status = spart_weights_check_finite(context, "input", num_coordinates, coordinates_input);
    if (status == SPART_OK && conservative) {
        status = spart_weights_check_finite(context, "output", num_coordinates, coordinates_output);
    }
    return status;
}

/* spart_weights_describe, checking the coordinates' values or not. */
static spart_status describe(spart_context *context, int num_coordinates,
                             const spart_array *coordinates_input,
                             const spart_array *coordinates_output,
                             const spart_weights_options *options, int check_values,
                             spart_weights *shell)
{
    spart_weights_layout layout;
    memset(&layout, 0, sizeof layout);
    spart_status status = prepare(context, num_coordinates, coordinates_input, coordinates_output,
                                  options, check_values, &layout);
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

spart_status spart_weights_describe(spart_context *context, int num_coordinates,
                                    const spart_array *coordinates_input,
                                    const spart_array *coordinates_output,
                                    const spart_weights_options *options, spart_weights *shell)
{
    return describe(context, num_coordinates, coordinates_input, coordinates_output, options, 1,
                    shell);
}

spart_status spart_weights_describe_checked(spart_context *context, int num_coordinates,
                                            const spart_array *coordinates_input,
                                            const spart_array *coordinates_output,
                                            const spart_weights_options *options,
                                            spart_weights *shell)
{
    return describe(context, num_coordinates, coordinates_input, coordinates_output, options, 0,
                    shell);
}

spart_status spart_weights_build_host(spart_context *context, int num_coordinates,
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
    spart_status status = prepare(context, num_coordinates, coordinates_input, coordinates_output,
                                  options, 1, &layout);
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
            status = spart_weights_perturb_outputs(context, &layout, coordinates_output,
                                                   options->seed, perturbed);
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
