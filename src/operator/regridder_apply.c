/*
 * src/operator/regridder_apply.c: y = A x, what every product checks
 * before the regridder's table of operations (operator_ops.h) does the
 * work where the regridder lives: x's shape (leading axes + the input
 * shape), y's size, NULL pointers, x and y not overlapping, and the
 * workspace's size.
 */
#include <stdint.h>
#include <string.h>

#include "operator/operator_ops.h"
#include "core/shape.h"

/* The number of vectors for x of shape `shape_x`: leading axes times batch
 * axes. Checks that shape_x ends with the input shape. */
static spart_status count_vectors(spart_context *context, const spart_regridder *regridder,
                                  const spart_shape *shape_x, int64_t *num_leading,
                                  int64_t *num_vectors)
{
    char text_a[128], text_b[128];
    const spart_shape *input = &regridder->input.shape;
    int lead = shape_x->ndim - input->ndim;
    int matches = spart_shape_size(shape_x) >= 0 && lead >= 0 && shape_x->ndim <= SPART_MAX_NDIM;
    for (int k = 0; matches && k < input->ndim; k++) {
        matches = shape_x->dims[lead + k] == input->dims[k];
    }
    if (!matches) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "x has shape %s, which is not leading axes followed by the "
                          "regridder's input shape %s",
                          spart_shape_format(shape_x, text_a, sizeof text_a),
                          spart_shape_format(input, text_b, sizeof text_b));
    }
    if (regridder->output.shape.ndim + lead > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "y would have more than %d axes",
                          SPART_MAX_NDIM);
    }
    *num_leading = 1;
    for (int k = 0; k < lead; k++) {
        *num_leading *= shape_x->dims[k];
    }
    *num_vectors = *num_leading * regridder->input.num_batch;
    return SPART_OK;
}

spart_status spart_regridder_apply_shape(spart_context *context, const spart_regridder *regridder,
                                         const spart_shape *shape_x, spart_shape *shape_y)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || shape_x == NULL || shape_y == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder, shape_x and shape_y must not be NULL");
    }
    int64_t num_leading = 0, num_vectors = 0;
    spart_status status = count_vectors(context, regridder, shape_x, &num_leading, &num_vectors);
    if (status != SPART_OK) {
        return status;
    }
    int lead = shape_x->ndim - regridder->input.shape.ndim;
    spart_shape result;
    memset(&result, 0, sizeof result);
    result.ndim = lead + regridder->output.shape.ndim;
    for (int k = 0; k < lead; k++) {
        result.dims[k] = shape_x->dims[k];
    }
    for (int k = 0; k < regridder->output.shape.ndim; k++) {
        result.dims[lead + k] = regridder->output.shape.dims[k];
    }
    *shape_y = result;
    return SPART_OK;
}

/* Whether the n_a doubles at a and the n_b at b share memory (addresses
 * compared as integers: the arrays may belong to different objects). */
static int values_overlap(const double *a, int64_t n_a, const double *b, int64_t n_b)
{
    if (a == NULL || b == NULL || n_a <= 0 || n_b <= 0) {
        return 0;
    }
    uintptr_t a_begin = (uintptr_t)a, b_begin = (uintptr_t)b;
    uintptr_t a_end = a_begin + (uintptr_t)n_a * sizeof(double);
    uintptr_t b_end = b_begin + (uintptr_t)n_b * sizeof(double);
    return a_begin < b_end && b_begin < a_end;
}

spart_status spart_regridder_workspace_size(spart_context *context,
                                            const spart_regridder *regridder,
                                            const spart_shape *shape_x, size_t *bytes)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || shape_x == NULL || bytes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder, shape_x and bytes must not be NULL");
    }
    int64_t num_leading = 0, num_vectors = 0;
    spart_status status = count_vectors(context, regridder, shape_x, &num_leading, &num_vectors);
    if (status == SPART_OK) {
        *bytes = regridder->ops->workspace_bytes(regridder, num_leading, num_vectors,
                                                 spart_threads(context));
    }
    return status;
}

spart_status spart_regridder_apply_workspace(spart_context *context,
                                             const spart_regridder *regridder, const spart_array *x,
                                             double *y, int64_t size_y, void *workspace,
                                             size_t workspace_bytes)
{
    return spart_regridder_apply_checked(context, regridder, x, y, size_y, workspace,
                                         workspace_bytes, 0);
}

spart_status spart_regridder_apply_checked(spart_context *context, const spart_regridder *regridder,
                                           const spart_array *x, double *y, int64_t size_y,
                                           void *workspace, size_t workspace_bytes,
                                           int workspace_is_ours)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || x == NULL || y == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "regridder, x and y must not be NULL");
    }
    int64_t num_leading = 0, num_vectors = 0;
    spart_status status = count_vectors(context, regridder, &x->shape, &num_leading, &num_vectors);
    if (status != SPART_OK) {
        return status;
    }
    int64_t expected = num_leading * spart_shape_size(&regridder->output.shape);
    if (size_y != expected) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "size_y = %lld, but y holds %lld values", (long long)size_y,
                          (long long)expected);
    }
    if (x->data == NULL && spart_shape_size(&x->shape) > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "x->data is NULL");
    }
    if (values_overlap(x->data, spart_shape_size(&x->shape), y, size_y)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "x and y overlap: y is written while x is still read (give y its own "
                          "memory)");
    }
    if (num_vectors == 0) {
        return SPART_OK;
    }
    size_t needed = regridder->ops->workspace_bytes(regridder, num_leading, num_vectors,
                                                    spart_threads(context));
    if (workspace_bytes < needed || (needed > 0 && workspace == NULL)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "workspace of %zu bytes given, %zu needed (spart_regridder_workspace_"
                          "size)",
                          workspace_bytes, needed);
    }
    return regridder->ops->product(context, regridder, x, y, size_y, num_leading, num_vectors,
                                   workspace, workspace_is_ours);
}

spart_status spart_regridder_apply(spart_context *context, const spart_regridder *regridder,
                                   const spart_array *x, double *y, int64_t size_y)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    size_t bytes = 0;
    spart_status status =
        regridder != NULL && x != NULL
            ? spart_regridder_workspace_size(context, regridder, &x->shape, &bytes)
            : SPART_OK;
    if (status != SPART_OK) {
        return status;
    }
    if (bytes == 0) {
        return spart_regridder_apply_checked(context, regridder, x, y, size_y, NULL, 0, 1);
    }
    void *workspace = NULL;
    status = regridder->ops->workspace_allocate(context, regridder, bytes, &workspace);
    if (status == SPART_OK) {
        status =
            spart_regridder_apply_checked(context, regridder, x, y, size_y, workspace, bytes, 1);
        spart_status freed = regridder->ops->workspace_free(context, regridder, workspace);
        status = status != SPART_OK ? status : freed;
    }
    return status;
}
