/*
 * src/weights/weights_build_device.c: the public entry points of building
 * weights on the host or a device (spart_weights_build,
 * spart_weights_build_device, its workspace query, and
 * spart_weights_build_device_grids from grids in device memory, whose
 * values the CUDA table checks on the device) and of moving them
 * back (spart_weights_to_host), over the table of
 * src/weights/weights_ops.h. Both builds check their arguments here, the
 * same way (spart_weights_describe: the host build's own checks, statuses
 * and sentences), before the table is chosen, so a device build refuses
 * what the host build refuses, in the same words, with or without a
 * device.
 */
#include <string.h>

#include "weights/weights_build.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"

spart_status spart_weights_select(spart_context *context, int on_device, const char *what,
                                  const spart_weights_ops **ops)
{
    if (!on_device) {
        *ops = &spart_weights_host_ops;
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    (void)context, (void)what;
    *ops = &spart_weights_cuda_ops;
    return SPART_OK;
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: %s cannot run on a device (rebuild with "
                      "-DSPART_ENABLE_CUDA=ON)",
                      what);
#endif
}

/* A host copy of host weights. */
static spart_status host_to_host(spart_context *context, const spart_weights *weights,
                                 spart_weights **host)
{
    int64_t total = weights->offsets[weights->num_elements];
    spart_weights *made = spart_weights_allocate(
        &context->allocator, &weights->shape_orthogonal, &weights->shape_input,
        &weights->shape_output, weights->num_axis_input, weights->axis_input,
        weights->num_axis_output, weights->axis_output, total);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights_to_host: out of memory");
    }
    memcpy(made->offsets, weights->offsets, (size_t)(weights->num_elements + 1) * sizeof(int64_t));
    memcpy(made->indices_input, weights->indices_input, (size_t)total * sizeof(int64_t));
    memcpy(made->indices_output, weights->indices_output, (size_t)total * sizeof(int64_t));
    memcpy(made->values, weights->values, (size_t)total * sizeof(double));
    *host = made;
    return SPART_OK;
}

static spart_status host_workspace_size(spart_context *context, int num_coordinates,
                                        const spart_array *coordinates_input,
                                        const spart_array *coordinates_output,
                                        const spart_weights_options *options, size_t *bytes)
{
    (void)context, (void)num_coordinates, (void)coordinates_input, (void)coordinates_output;
    (void)options;
    *bytes = 0; /* the host build allocates its own */
    return SPART_OK;
}

/* The host table never builds from device grids (spart_weights_select
 * gives the CUDA table for them, or refuses without CUDA). */
static spart_status host_build_device_grids(spart_context *context, int num_coordinates,
                                            const spart_array *coordinates_input,
                                            const spart_array *coordinates_output,
                                            const spart_weights_options *options,
                                            spart_weights **weights)
{
    (void)num_coordinates, (void)coordinates_input, (void)coordinates_output, (void)options;
    (void)weights;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "weights_build_device_grids: the host cannot read grids in device memory");
}

const spart_weights_ops spart_weights_host_ops = {
    "host",
    spart_weights_build_host,
    host_build_device_grids,
    host_workspace_size,
    host_to_host,
    spart_weights_scale_host,
    spart_weights_transpose_host,
    spart_weights_convolve_host,
};

spart_status spart_weights_build(spart_context *context, int num_coordinates,
                                 const spart_array *coordinates_input,
                                 const spart_array *coordinates_output,
                                 const spart_weights_options *options, spart_weights **weights)
{
    const spart_weights_ops *ops = NULL;
    spart_status status = spart_weights_select(context, 0, "weights_build", &ops);
    if (status != SPART_OK) {
        return status;
    }
    return ops->build(context, num_coordinates, coordinates_input, coordinates_output, options,
                      weights);
}

/* The checks of a device build and its query: those of the host build
 * (check_values 0: all but the coordinates' values, which lie in device
 * memory and are checked there). */
static spart_status check_device_build(spart_context *context, int num_coordinates,
                                       const spart_array *coordinates_input,
                                       const spart_array *coordinates_output,
                                       const spart_weights_options **options,
                                       spart_weights_options *defaults, int check_values)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (*options == NULL) {
        spart_weights_options_init(defaults);
        *options = defaults;
    }
    spart_weights shell;
    spart_status status =
        check_values ? spart_weights_describe(context, num_coordinates, coordinates_input,
                                              coordinates_output, *options, &shell)
                     : spart_weights_describe_checked(context, num_coordinates, coordinates_input,
                                                      coordinates_output, *options, &shell);
    if (status == SPART_OK) {
        spart_weights_layout layout;
        memset(&layout, 0, sizeof layout);
        status = spart_weights_layout_make(
            context, num_coordinates, coordinates_input, coordinates_output,
            (*options)->num_axis_input, (*options)->axis_input, (*options)->num_axis_output,
            (*options)->axis_output,
            (*options)->method == SPART_METHOD_CONSERVATIVE || (*options)->num_axis_output == 0,
            &layout);
        if (status == SPART_OK) {
            spart_shape full_values;
            int64_t strides[SPART_MAX_NDIM];
            status = spart_weights_input_strides(context, &layout, (*options)->weights_input,
                                                 (*options)->method == SPART_METHOD_CONSERVATIVE,
                                                 &full_values, strides);
        }
    }
    return status;
}

/* The two device builds: the same checks (host_arrays: the coordinates
 * are host memory, else the context's device's) and the same way to the
 * table's operation. */
static spart_status build_on_device(spart_context *context, int num_coordinates,
                                    const spart_array *coordinates_input,
                                    const spart_array *coordinates_output,
                                    const spart_weights_options *options, int host_arrays,
                                    const char *what, spart_weights **weights)
{
    if (context != NULL && weights == NULL) {
        spart_clear_error(context);
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights: the output pointer is NULL");
    }
    if (weights != NULL) {
        *weights = NULL;
    }
    spart_weights_options defaults;
    spart_status status = check_device_build(context, num_coordinates, coordinates_input,
                                             coordinates_output, &options, &defaults, host_arrays);
    const spart_weights_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_weights_select(context, 1, what, &ops);
    }
    if (status == SPART_OK) {
        status = (host_arrays ? ops->build : ops->build_device_grids)(
            context, num_coordinates, coordinates_input, coordinates_output, options, weights);
    }
    return status;
}

spart_status spart_weights_build_device(spart_context *context, int num_coordinates,
                                        const spart_array *coordinates_input,
                                        const spart_array *coordinates_output,
                                        const spart_weights_options *options,
                                        spart_weights **weights)
{
    return build_on_device(context, num_coordinates, coordinates_input, coordinates_output, options,
                           1, "weights_build_device", weights);
}

spart_status spart_weights_build_device_grids(spart_context *context, int num_coordinates,
                                              const spart_array *coordinates_input,
                                              const spart_array *coordinates_output,
                                              const spart_weights_options *options,
                                              spart_weights **weights)
{
    return build_on_device(context, num_coordinates, coordinates_input, coordinates_output, options,
                           0, "weights_build_device_grids", weights);
}

spart_status spart_weights_build_device_workspace_size(spart_context *context, int num_coordinates,
                                                       const spart_array *coordinates_input,
                                                       const spart_array *coordinates_output,
                                                       const spart_weights_options *options,
                                                       size_t *bytes)
{
    if (context != NULL && bytes == NULL) {
        spart_clear_error(context);
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "bytes is NULL");
    }
    spart_weights_options defaults;
    spart_status status = check_device_build(context, num_coordinates, coordinates_input,
                                             coordinates_output, &options, &defaults, 1);
    const spart_weights_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_weights_select(context, 1, "weights_build_device_workspace_size", &ops);
    }
    if (status == SPART_OK) {
        status = ops->workspace_size(context, num_coordinates, coordinates_input,
                                     coordinates_output, options, bytes);
    }
    return status;
}

spart_status spart_weights_to_host(spart_context *context, const spart_weights *weights,
                                   spart_weights **host)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || host == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights and host must not be NULL");
    }
    *host = NULL;
    const spart_weights_ops *ops = NULL;
    spart_status status =
        spart_weights_select(context, weights->on_device, "weights_to_host", &ops);
    if (status == SPART_OK) {
        status = ops->to_host(context, weights, host);
    }
    return status;
}
