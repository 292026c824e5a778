/*
 * src/operator/regridder_convolved.c: spart_regridder_create_device_convolved,
 * a regridder on the device from weights with a kernel folded in, the
 * convolution and the assembly both done on the device. The kernel is
 * checked and laid out on the host, as spart_weights_convolve does it
 * (src/weights/weights_convolve.c); the unconvolved entries, the kernel and its
 * tables are copied to the device; kernels/weights_convolve.cu convolves
 * them there; and the device assembly (src/operator/regridder_device.c) takes the
 * convolved entries over without a copy to the host. Only two numbers and
 * the result's element offsets come back.
 *
 * Weights already on a device (spart_weights_build_device) take the one
 * path that keeps them there: spart_weights_convolve folds the kernel into
 * them on their device (src/weights/weights_convolve_cuda.c, the same twin
 * kernels), and spart_regridder_create_device assembles the result in
 * place; the same CSR arrays, bit for bit, as from host weights.
 *
 * Built without CUDA, the arguments are still checked (so that a bad
 * kernel gets the same error everywhere), then SPART_ERROR_NO_DEVICE.
 */
#include <string.h>

#include "device/device_select.h"
#include "operator/regridder_convolved.h"
#include "operator/regridder_device.h"
#include "spart/device.h"
#include "weights/weights_convolve.h"
#include "weights/weights_internal.h"

/* Weights with the result's shapes and axes and no entries (every element
 * empty until the offsets are filled in), for the regridder's layout. */
static spart_status make_shell(spart_context *context, const spart_weights *weights,
                               const spart_convolve_setup *setup, spart_weights **shell)
{
    *shell = spart_weights_allocate(&context->allocator, &setup->orthogonal, &setup->input,
                                    &setup->output, weights->num_axis_input, weights->axis_input,
                                    weights->num_axis_output, weights->axis_output, 0);
    if (*shell == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "create_device_convolved: out of memory");
    }
    for (int64_t e = 0; e <= (*shell)->num_elements; e++) {
        (*shell)->offsets[e] = 0;
    }
    return SPART_OK;
}

/* The regridder options checked as spart_regridder_create checks them, by
 * building the (empty, host) regridder of the result's shapes: an error
 * in them comes before any device work and without a device. */
static spart_status check_options(spart_context *context, const spart_weights *shell,
                                  const spart_regridder_options *options)
{
    spart_regridder *probe = NULL;
    spart_status status = spart_regridder_create(context, shell, options, &probe);
    spart_regridder_free(probe);
    return status;
}

/* Weights on a device: folded there (spart_weights_convolve dispatches on
 * their location), then assembled in place. The convolved weights live
 * only for the call. */
static spart_status convolved_from_device_weights(spart_context *context,
                                                  const spart_weights *weights,
                                                  const spart_array *kernel,
                                                  const spart_regridder_options *options,
                                                  spart_regridder **regridder)
{
    spart_weights *convolved = NULL;
    spart_status status = spart_weights_convolve(context, weights, kernel, &convolved);
    if (status == SPART_OK) {
        status = spart_regridder_create_device(context, convolved, options, regridder);
    }
    spart_weights_free(convolved);
    return status;
}

spart_status spart_regridder_create_device_convolved(spart_context *context,
                                                     const spart_weights *weights,
                                                     const spart_array *kernel,
                                                     const spart_regridder_options *options,
                                                     spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || kernel == NULL || regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights, kernel and regridder must not be NULL");
    }
    *regridder = NULL;
    if (spart_weights_cuda_device(weights) >= 0) {
        return convolved_from_device_weights(context, weights, kernel, options, regridder);
    }
    spart_convolve_setup setup;
    spart_status status = spart_convolve_prepare(context, weights, kernel, &setup);
    if (status != SPART_OK) {
        return status;
    }
    spart_weights *shell = NULL;
    status = make_shell(context, weights, &setup, &shell);
    if (status == SPART_OK) {
        status = check_options(context, shell, options);
    }
    int previous = -1;
    if (status == SPART_OK) {
        status = spart_device_enter(context, "create_device_convolved", &previous);
    }
    if (status == SPART_OK) {
        status = spart_regridder_build_convolved_on_device(context, &setup, kernel, shell, options,
                                                           regridder);
    }
    spart_device_leave(previous);
    spart_weights_free(shell);
    spart_convolve_release(&context->allocator, &setup);
    return status;
}
