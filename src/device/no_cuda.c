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

#include "device/device_select.h"
#include "mart/backproject_update.h"
#include "operator/operator_ops.h"
#include "operator/regridder_device.h"
#include "operator/regridder_convolved.h"
#include "operator/regridder_from_arrays.h"
#include "psf/psf_ops.h"
#include "spart/device.h"
#include "spart/device_memory.h"

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

spart_status spart_device_enter(spart_context *context, const char *what, int *previous)
{
    *previous = -1;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "%s: spart was built without CUDA (configure with SPART_ENABLE_CUDA=ON "
                      "where nvcc is installed)",
                      what);
}

spart_status spart_device_malloc(spart_context *context, size_t bytes, void **pointer)
{
    if (context == NULL || pointer == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "device_malloc: context and pointer must not be NULL");
    }
    spart_clear_error(context);
    *pointer = NULL;
    int previous;
    spart_status status = spart_device_enter(context, "device_malloc", &previous);
    if (status != SPART_OK) {
        return status;
    }
    (void)bytes;
    spart_device_leave(previous);
    return status;
}

void spart_device_free(spart_context *context, void *pointer)
{
    (void)context;
    (void)pointer;
}

/* kind: 0 host -> device, 1 device -> host, 2 device -> device. */
static spart_status copy(spart_context *context, void *to, const void *from, size_t bytes, int kind,
                         const char *what)
{
    if (context == NULL || to == NULL || from == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: arguments must not be NULL",
                          what);
    }
    spart_clear_error(context);
    int previous;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    (void)bytes;
    (void)kind;
    spart_device_leave(previous);
    return status;
}

spart_status spart_device_copy_to_device(spart_context *context, void *device, const void *host,
                                         size_t bytes)
{
    return copy(context, device, host, bytes, 0, "device_copy_to_device");
}

spart_status spart_device_copy_to_host(spart_context *context, void *host, const void *device,
                                       size_t bytes)
{
    return copy(context, host, device, bytes, 1, "device_copy_to_host");
}

spart_status spart_device_copy_on_device(spart_context *context, void *to, const void *from,
                                         size_t bytes)
{
    return copy(context, to, from, bytes, 2, "device_copy_on_device");
}

/* ---- graphs ---- */

struct spart_device_graph {
    spart_context *context; /* whose allocator holds this object */
};

void spart_device_graph_free(spart_device_graph *graph)
{
    if (graph == NULL) {
        return;
    }
    spart_free(&graph->context->allocator, graph);
}

spart_status spart_device_graph_record(spart_context *context,
                                       spart_status (*record)(void *user, spart_context *context),
                                       void *user, spart_device_graph **graph)
{
    if (context == NULL || record == NULL || graph == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "device_graph_record: context, record and graph must not be NULL");
    }
    spart_clear_error(context);
    *graph = NULL;
    int previous;
    spart_status status = spart_device_enter(context, "device_graph_record", &previous);
    if (status != SPART_OK) {
        return status;
    }
    (void)user;
    spart_device_leave(previous);
    return status;
}

spart_status spart_device_graph_launch(spart_context *context, const spart_device_graph *graph)
{
    if (context == NULL || graph == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "device_graph_launch: context and graph must not be NULL");
    }
    int previous;
    spart_status status = spart_device_enter(context, "device_graph_launch", &previous);
    if (status != SPART_OK) {
        return status;
    }
    spart_device_leave(previous);
    return status;
}
