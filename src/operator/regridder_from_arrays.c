/*
 * src/operator/regridder_device_arrays.c: spart_regridder_create_device_from_arrays,
 * a device regridder assembled from weights whose entries the caller
 * already holds in device memory. Shapes, axes and offsets are checked on
 * the host by the checks of spart_weights_create_from_arrays
 * (src/weights/weights_arrays.h), the options by those of spart_regridder_create;
 * the entry pointers are checked to be memory of the context's device; the
 * indices are checked on the device (kernels/weights_check.cu), with three
 * numbers read back; then the device assembly (src/operator/regridder_device.c)
 * reads the caller's arrays in place, borrowed: never written, freed or
 * copied.
 *
 * Built without CUDA, the host checks still run (so that bad arguments get
 * the same error everywhere), then SPART_ERROR_NO_DEVICE.
 */
#include <string.h>

#include "device/device_select.h"
#include "operator/regridder_from_arrays.h"
#include "operator/regridder_device.h"
#include "spart/device.h"
#include "weights/weights_arrays.h"
#include "weights/weights_internal.h"

static const char *const what = "create_device_from_arrays";

/* Weights with the caller's shapes, axes and offsets and no entries of
 * their own: what the assembly reads besides the entries. */
static spart_status make_shell(spart_context *context, const spart_shape *shape_orthogonal,
                               const spart_shape *shape_input, const spart_shape *shape_output,
                               const spart_weights_layout *layout, const int64_t *offsets,
                               spart_weights **shell)
{
    *shell = spart_weights_allocate(&context->allocator, shape_orthogonal, shape_input,
                                    shape_output, layout->num_axis_input, layout->axis_input,
                                    layout->num_axis_output, layout->axis_output, 0);
    if (*shell == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    memcpy((*shell)->offsets, offsets, ((size_t)layout->num_elements + 1) * sizeof(int64_t));
    return SPART_OK;
}

/* Every check that reads no device memory, in the order of
 * spart_weights_create_from_arrays and then spart_regridder_create: the
 * shell of the weights when all pass, else NULL with *status and the
 * sentence saying why. */
static spart_weights *checked_shell(spart_context *context, const spart_shape *shape_orthogonal,
                                    const spart_shape *shape_input, const spart_shape *shape_output,
                                    int num_axis_input, const int *axis_input, int num_axis_output,
                                    const int *axis_output, const int64_t *offsets,
                                    const void *const *entries,
                                    const spart_regridder_options *options, spart_status *status)
{
    spart_weights_layout layout;
    *status = spart_weights_check_layout(context, shape_orthogonal, shape_input, shape_output,
                                         num_axis_input, axis_input, num_axis_output, axis_output,
                                         offsets, &layout);
    if (*status != SPART_OK) {
        return NULL;
    }
    if (layout.num_entries > 0 &&
        (entries[0] == NULL || entries[1] == NULL || entries[2] == NULL)) {
        *status = spart_fail(context, SPART_ERROR_NULL_POINTER,
                             "indices_input, indices_output and values must not be NULL");
        return NULL;
    }
    spart_weights *shell = NULL;
    *status =
        make_shell(context, shape_orthogonal, shape_input, shape_output, &layout, offsets, &shell);
    if (*status == SPART_OK) {
        *status = spart_regridder_check_options(context, shell, options);
    }
    if (*status != SPART_OK) {
        spart_weights_free(shell);
        return NULL;
    }
    return shell;
}

spart_status spart_regridder_create_device_from_arrays(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, const int64_t *indices_input,
    const int64_t *indices_output, const double *values, const spart_regridder_options *options,
    spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder: the output pointer is NULL");
    }
    *regridder = NULL;
    const void *const entries[3] = {indices_input, indices_output, values};
    /* A shell exists only when every host check has passed. */
    spart_status status = SPART_OK;
    spart_weights *shell =
        checked_shell(context, shape_orthogonal, shape_input, shape_output, num_axis_input,
                      axis_input, num_axis_output, axis_output, offsets, entries, options, &status);
    int previous = -1;
    if (shell != NULL) {
        status = spart_device_enter(context, what, &previous);
    }
    if (shell != NULL && status == SPART_OK) {
        status = spart_regridder_build_from_arrays_on_device(context, shell, entries, options,
                                                             regridder);
    }
    spart_device_leave(previous);
    spart_weights_free(shell);
    return status;
}
