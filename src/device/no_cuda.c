/*
 * src/device/no_cuda.c: the one file that stands for the CUDA glue in a
 * build without CUDA (CMake builds it instead of the files named *_cuda.c). Every
 * public device entry point says SPART_ERROR_NO_DEVICE with a sentence
 * after the checks of its arguments that need no device, and the internal
 * entry points that common code may call exist and refuse too. No device
 * regridder, PSF or memory can exist in such a build, so the tables of
 * operations for a device are absent (spart_operator_cuda_ops: NULL).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device/device_memory.h"
#include "device/device_select.h"
#include "operator/operator_ops.h"
#include "operator/regridder_convolved.h"
#include "operator/regridder_from_arrays.h"
#include "psf/psf_ops.h"
#include "spart/device.h"

static spart_status no_cuda(spart_context *context)
{
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: no device work is possible (reconfigure "
                      "with the CUDA Toolkit and -DSPART_ENABLE_CUDA=ON)");
}

spart_status spart_context_set_cuda_stream(spart_context *context, void *stream)
{
    (void)stream;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    return no_cuda(context);
}

spart_status spart_regridder_to_device(spart_context *context, const spart_regridder *regridder,
                                       spart_regridder **device)
{
    (void)regridder;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (device != NULL) {
        *device = NULL;
    }
    return no_cuda(context);
}

spart_status spart_regridder_to_host(spart_context *context, const spart_regridder *regridder,
                                     spart_regridder **host)
{
    return spart_regridder_to_device(context, regridder, host);
}

const spart_operator_ops *spart_operator_cuda_ops(void)
{
    return NULL;
}

/* ---- PSFs (src/psf/psf_cuda.c) ---- */

const spart_psf_ops *spart_psf_cuda_ops(void)
{
    return NULL;
}

spart_status spart_psf_copy_to_device(spart_context *context, const spart_psf *psf,
                                      spart_psf **device)
{
    (void)psf, (void)device;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "psf_to_device: spart was built without CUDA: no device work is possible "
                      "(reconfigure with the CUDA Toolkit and -DSPART_ENABLE_CUDA=ON)");
}

/* ---- regridders made on the device (src/operator/regridder_*_cuda.c);
 * their callers checked their arguments and spart_device_enter refused
 * first, so these are never reached ---- */

spart_status spart_regridder_build_convolved_on_device(
    spart_context *context, const spart_convolve_setup *setup, const spart_array *kernel,
    spart_weights *shell, const spart_regridder_options *options, spart_regridder **regridder)
{
    (void)setup, (void)kernel, (void)shell, (void)options, (void)regridder;
    return no_cuda(context);
}

spart_status spart_regridder_build_from_arrays_on_device(spart_context *context,
                                                         const spart_weights *shell,
                                                         const void *const *entries,
                                                         const spart_regridder_options *options,
                                                         spart_regridder **regridder)
{
    (void)shell, (void)entries, (void)options, (void)regridder;
    return no_cuda(context);
}

/* ---- device memory, device selection and graphs (src/device/device_memory_cuda.c) ---- */

spart_status spart_device_failure(spart_context *context, int error, const char *what)
{
    return spart_fail(context, SPART_ERROR_INTERNAL, "%s: CUDA error %d", what, error);
}

spart_status spart_device_check_exists(spart_context *context, int device)
{
    (void)device;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA (configure with SPART_ENABLE_CUDA=ON "
                      "where nvcc is installed)");
}

spart_status spart_device_select(spart_context *context, int device, int *previous)
{
    *previous = -1;
    return spart_device_check_exists(context, device);
}

void spart_device_leave(int previous)
{
    (void)previous;
}

spart_status spart_device_check_pointer(spart_context *context, const void *pointer, int device,
                                        const char *what, const char *name)
{
    (void)pointer, (void)name;
    return spart_fail(context, SPART_ERROR_NO_DEVICE, "%s: no CUDA in this build (device %d)", what,
                      device);
}

/* ---- the CUDA halves of device memory (src/device/device_memory.h): never
 * reached, spart_device_enter refuses first ---- */

spart_status spart_device_malloc_entered(spart_context *context, size_t bytes, void **pointer)
{
    (void)bytes, (void)pointer;
    return no_cuda(context);
}

void spart_device_free_entered(void *pointer)
{
    (void)pointer;
}

spart_status spart_device_malloc_async_entered(spart_context *context, size_t bytes, void **pointer)
{
    (void)bytes, (void)pointer;
    return no_cuda(context);
}

void spart_device_free_async_entered(spart_context *context, void *pointer)
{
    (void)context, (void)pointer;
}

spart_status spart_device_copy_entered(spart_context *context, void *to, const void *from,
                                       size_t bytes, spart_copy_kind kind, const char *what)
{
    (void)to, (void)from, (void)bytes, (void)kind, (void)what;
    return no_cuda(context);
}

spart_status spart_device_graph_record_entered(spart_context *context,
                                               spart_status (*record)(void *user,
                                                                      spart_context *context),
                                               void *user, spart_device_graph **graph)
{
    (void)record, (void)user, (void)graph;
    return no_cuda(context);
}

spart_status spart_device_graph_launch_entered(spart_context *context,
                                               const spart_device_graph *graph)
{
    (void)graph;
    return no_cuda(context);
}

/* No graph can be recorded without CUDA, so there is none to free. */
void spart_device_graph_free(spart_device_graph *graph)
{
    (void)graph;
}
