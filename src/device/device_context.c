/*
 * src/device/device_context.c: the CUDA device a context works on
 * (spart/device.h), in both builds: without CUDA,
 * spart_device_check_exists refuses every device.
 */
#include "device/device_select.h"
#include "spart/device.h"

spart_status spart_context_set_cuda_device(spart_context *context, int device)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    /* a setter leaves an earlier error sentence alone */
    if (device < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "device = %d: CUDA devices are numbered from 0", device);
    }
    spart_status status = spart_device_check_exists(context, device);
    if (status == SPART_OK) {
        context->cuda_device = device;
    }
    return status;
}
