/*
 * src/operator/operator_ops.c: the one place that decides whether an
 * operator's work runs on the host or a CUDA device (operator_ops.h), and
 * the questions about where a regridder lives that its table answers.
 */
#include "operator/operator_ops.h"
#include "spart/device.h"

const spart_operator_ops *spart_operator_ops_for(int cuda_device)
{
    return cuda_device >= 0 ? spart_operator_cuda_ops() : &spart_operator_host_ops;
}

int spart_regridder_cuda_device(const spart_regridder *regridder)
{
    return regridder != NULL && regridder->ops->on_device ? regridder->device.cuda_device : -1;
}

spart_status spart_require_host(spart_context *context, const spart_regridder *regridder,
                                const char *what)
{
    if (regridder != NULL && regridder->ops->on_device) {
        return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                          "%s needs the regridder in host memory, but it lives on CUDA device %d "
                          "(copy it with spart_regridder_to_host)",
                          what, regridder->device.cuda_device);
    }
    return SPART_OK;
}
