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

#include "device/device_select.h"
#include "mart/backproject_update.h"
#include "operator/operator_ops.h"
#include "spart/device.h"

static spart_status no_cuda(spart_context *context)
{
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: no device work is possible (reconfigure "
                      "with the CUDA Toolkit and -DSPART_ENABLE_CUDA=ON)");
}

spart_status spart_context_set_cuda_device(spart_context *context, int device)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (device < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "device = %d: CUDA devices are numbered from 0", device);
    }
    return no_cuda(context);
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





int spart_device_mart_fusable(const spart_regridder *backward)
{
    (void)backward; /* never on a device without CUDA */
    return 0;
}

spart_status spart_device_mart_backproject_update(spart_context *context,
                                                  const spart_regridder *backward,
                                                  const double *images, const double *observed_back,
                                                  double *scene, int64_t num_channel,
                                                  int64_t scene_size, double gamma)
{
    (void)backward, (void)images, (void)observed_back, (void)scene, (void)num_channel;
    (void)scene_size, (void)gamma;
    return no_cuda(context);
}


spart_status spart_device_csr_assemble(spart_context *context, const spart_assembly_source *source,
                                       int64_t cells_input, int64_t cells_output,
                                       spart_value_type value_type,
                                       const spart_device_assembly_options *options,
                                       spart_regridder *regridder)
{
    (void)source, (void)cells_input, (void)cells_output, (void)value_type, (void)options;
    (void)regridder;
    return no_cuda(context);
}

spart_status spart_device_csr_transpose(spart_context *context, const spart_regridder *regridder,
                                        int wide_sort, spart_regridder *transposed)
{
    (void)regridder, (void)wide_sort, (void)transposed;
    return no_cuda(context);
}

spart_status spart_device_transpose_conservative(spart_context *context, spart_regridder *forward,
                                                 const spart_regridder *exact, const int *source,
                                                 const int64_t *grid_stride, int64_t num_grids,
                                                 int64_t cells_input, int64_t cells_output,
                                                 const double *factor_input,
                                                 const double *volume_output,
                                                 spart_regridder **conservative)
{
    (void)forward, (void)exact, (void)source, (void)grid_stride, (void)num_grids;
    (void)cells_input, (void)cells_output, (void)factor_input, (void)volume_output;
    *conservative = NULL;
    return no_cuda(context);
}

const spart_operator_ops *spart_operator_cuda_ops(void)
{
    return NULL;
}
