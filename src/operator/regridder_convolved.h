/*
 * src/operator/regridder_convolved.h: the device half of
 * spart_regridder_create_device_convolved (src/operator/regridder_convolved_cuda.c;
 * without CUDA, src/device/no_cuda.c refuses).
 */
#ifndef SPART_REGRIDDER_CONVOLVED_H
#define SPART_REGRIDDER_CONVOLVED_H

#include "operator/regridder_internal.h"
#include "weights/weights_convolve.h"

/* Convolve and assemble on the context's device (current already). */
spart_status spart_regridder_build_convolved_on_device(
    spart_context *context, const spart_convolve_setup *setup, const spart_array *kernel,
    spart_weights *shell, const spart_regridder_options *options, spart_regridder **regridder);

#endif /* SPART_REGRIDDER_CONVOLVED_H */
