/*
 * src/weights/weights_scale.c: multiply weights, in place, by factors of their
 * input and output cells (spart_weights_scale). The factors of each element
 * are gathered on the host; the entries are rewritten where they lie,
 * through the table of their location (src/weights/weights_ops.h): here on
 * the host, or on their device (src/weights/weights_values_cuda.c), with
 * the arithmetic of src/weights/weights_values.h.
 */
#include <omp.h>
#include <string.h>

#include "core/internal.h"
#include "core/shape.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"
#include "weights/weights_values.h"

/* The index of element `element` along every non-resampled axis of `full`
 * (ascending): the orthogonal axes are right-aligned with the weights'
 * orthogonal shape, and an axis of extent 1 in `full` is broadcast. */
static void element_index(const spart_weights *weights, const spart_shape *full,
                          const int *resampled, int num_resampled, int64_t element,
                          int64_t *orthogonal_index)
{
    int64_t index[SPART_MAX_NDIM];
    spart_unravel(element, &weights->shape_orthogonal, index);
    int num_orthogonal = full->ndim - num_resampled;
    int k = 0;
    for (int axis = 0; axis < full->ndim; axis++) {
        if (spart_axes_contain(resampled, num_resampled, axis)) {
            continue;
        }
        /* k-th orthogonal axis of `full`, aligned from the end. */
        int from_end = num_orthogonal - k;
        int in_weights = weights->shape_orthogonal.ndim - from_end;
        int64_t i = in_weights >= 0 ? index[in_weights] : 0;
        orthogonal_index[k] = full->dims[axis] == 1 ? 0 : i;
        k++;
    }
}

/* Check one factor array against the full shape of its side. */
static spart_status check_factor(spart_context *context, const char *name,
                                 const spart_array *factor, const spart_shape *full)
{
    if (factor == NULL) {
        return SPART_OK;
    }
    if (factor->data == NULL && spart_shape_size(&factor->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s->data is NULL", name);
    }
    if (!spart_shape_is_valid(&factor->shape) || !spart_shape_broadcasts_to(&factor->shape, full)) {
        char text_a[128], text_b[128];
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "%s of shape %s does not broadcast to the weights' shape %s", name,
                          spart_shape_format(&factor->shape, text_a, sizeof text_a),
                          spart_shape_format(full, text_b, sizeof text_b));
    }
    return SPART_OK;
}

/* The factors element `element` sees on one side, one per resampled cell,
 * into `block`; 1 everywhere for no factor. */
static void gather_factors(const spart_weights *weights, const spart_array *factor,
                           const int64_t *strides, const spart_shape *full, const int *resampled,
                           int num_resampled, int64_t cells, int64_t element, double *block)
{
    if (factor == NULL) {
        for (int64_t i = 0; i < cells; i++) {
            block[i] = 1.0;
        }
        return;
    }
    int64_t orthogonal_index[SPART_MAX_NDIM];
    element_index(weights, full, resampled, num_resampled, element, orthogonal_index);
    spart_gather_block(factor->data, strides, full, resampled, num_resampled, orthogonal_index,
                       block);
}

/* What fill_factors reads. */
typedef struct scale_factors {
    const spart_weights *weights;
    const spart_array *factor_input;
    const spart_array *factor_output;
    int64_t strides_input[SPART_MAX_NDIM];
    int64_t strides_output[SPART_MAX_NDIM];
} scale_factors;

static void fill_factors(const void *user, int64_t element, double *scratch, double *block_input,
                         double *block_output)
{
    (void)scratch;
    const scale_factors *f = user;
    const spart_weights *w = f->weights;
    if (block_input != NULL) {
        gather_factors(w, f->factor_input, f->strides_input, &w->shape_input, w->axis_input,
                       w->num_axis_input, w->size_input, element, block_input);
    }
    if (block_output != NULL) {
        gather_factors(w, f->factor_output, f->strides_output, &w->shape_output, w->axis_output,
                       w->num_axis_output, w->size_output, element, block_output);
    }
}

/* The offset in one side's factor array of element `element`'s block:
 * equal offsets, equal blocks. */
static int64_t block_offset(const spart_weights *w, const int64_t *strides, const spart_shape *full,
                            const int *resampled, int num_resampled, int64_t element)
{
    int64_t orthogonal_index[SPART_MAX_NDIM];
    element_index(w, full, resampled, num_resampled, element, orthogonal_index);
    int64_t offset = 0;
    int k = 0;
    for (int axis = 0; axis < full->ndim; axis++) {
        if (!spart_axes_contain(resampled, num_resampled, axis)) {
            offset += orthogonal_index[k++] * strides[axis];
        }
    }
    return offset;
}

static int64_t key_input(const void *user, int64_t element)
{
    const scale_factors *f = user;
    const spart_weights *w = f->weights;
    return block_offset(w, f->strides_input, &w->shape_input, w->axis_input, w->num_axis_input,
                        element);
}

static int64_t key_output(const void *user, int64_t element)
{
    const scale_factors *f = user;
    const spart_weights *w = f->weights;
    return block_offset(w, f->strides_output, &w->shape_output, w->axis_output, w->num_axis_output,
                        element);
}

/* Whether a factor's block is the same for every element: no factor, or
 * a stride of 0 along every axis that is not resampled. */
static int factor_shared(const spart_array *factor, const int64_t *strides, const spart_shape *full,
                         const int *resampled, int num_resampled)
{
    if (factor == NULL) {
        return 1;
    }
    for (int axis = 0; axis < full->ndim; axis++) {
        if (!spart_axes_contain(resampled, num_resampled, axis) && strides[axis] != 0 &&
            full->dims[axis] > 1) {
            return 0;
        }
    }
    return 1;
}

spart_status spart_weights_scale_host(spart_context *context, spart_weights *weights,
                                      const spart_weights_factors *factors)
{
    /* Scratch for every thread, taken before any value changes, so that a
     * failed allocation leaves the weights as they were. A side without a
     * factor is a block of 1.0 (the multiplication kept: the same bits as
     * ever). */
    size_t cells_in = (size_t)weights->size_input;
    size_t cells_out = (size_t)weights->size_output;
    int threads = spart_threads(context);
    size_t per_thread = cells_in + cells_out;
    double *scratch =
        spart_alloc(&weights->allocator, (size_t)threads * per_thread, sizeof(double));
    if (scratch == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights_scale: could not allocate %zu values of scratch space",
                          (size_t)threads * per_thread);
    }
#pragma omp parallel num_threads(threads) if (weights->num_elements > 1)
    {
        double *block_input = scratch + (size_t)omp_get_thread_num() * per_thread;
        double *block_output = block_input + cells_in;
#pragma omp for schedule(dynamic, 1)
        for (int64_t e = 0; e < weights->num_elements; e++) {
            factors->fill(factors->user, e, NULL, block_input, block_output);
            for (int64_t k = weights->offsets[e]; k < weights->offsets[e + 1]; k++) {
                weights->values[k] = spart_weights_scaled_value(
                    weights->values[k], block_input[weights->indices_input[k]],
                    block_output[weights->indices_output[k]]);
            }
        }
    }
    spart_free(&weights->allocator, scratch);
    return SPART_OK;
}

spart_status spart_weights_scale(spart_context *context, spart_weights *weights,
                                 const spart_array *factor_input, const spart_array *factor_output)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights is NULL");
    }
    spart_status status =
        check_factor(context, "factor_input", factor_input, &weights->shape_input);
    if (status == SPART_OK) {
        status = check_factor(context, "factor_output", factor_output, &weights->shape_output);
    }
    const spart_weights_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_weights_select(context, weights->on_device, "weights_scale", &ops);
    }
    if (status != SPART_OK) {
        return status;
    }
    scale_factors f;
    memset(&f, 0, sizeof f);
    f.weights = weights;
    f.factor_input = factor_input;
    f.factor_output = factor_output;
    if (factor_input != NULL) {
        spart_broadcast_strides(&factor_input->shape, &weights->shape_input, f.strides_input);
    }
    if (factor_output != NULL) {
        spart_broadcast_strides(&factor_output->shape, &weights->shape_output, f.strides_output);
    }
    spart_weights_factors factors;
    memset(&factors, 0, sizeof factors);
    factors.num_elements = weights->num_elements;
    factors.cells_input = factor_input != NULL ? weights->size_input : 0;
    factors.cells_output = factor_output != NULL ? weights->size_output : 0;
    factors.shared_input = factor_shared(factor_input, f.strides_input, &weights->shape_input,
                                         weights->axis_input, weights->num_axis_input);
    factors.shared_output = factor_shared(factor_output, f.strides_output, &weights->shape_output,
                                          weights->axis_output, weights->num_axis_output);
    factors.fill = fill_factors;
    factors.user = &f;
    factors.key_input = factor_input != NULL ? key_input : NULL;
    factors.key_output = factor_output != NULL ? key_output : NULL;
    spart_report_progress(context, "scale", 0, 1);
    status = ops->scale(context, weights, &factors);
    if (status == SPART_OK) {
        spart_report_progress(context, "scale", 1, 1);
    }
    return status;
}
