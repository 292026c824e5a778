/*
 * src/device/context_cuda.c: the CUDA stream a context works on
 * (spart/device.h); without CUDA, src/device/no_cuda.c refuses it.
 */
#include "core/internal.h"
#include "spart/device.h"

spart_status spart_context_set_cuda_stream(spart_context *context, void *stream)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    context->cuda_stream = stream;
    return SPART_OK;
}
