/*
 * src/operator/regridder_from_arrays.h: the device half of
 * spart_regridder_create_device_from_arrays
 * (src/operator/regridder_from_arrays_cuda.c; without CUDA,
 * src/device/no_cuda.c refuses).
 */
#ifndef SPART_REGRIDDER_FROM_ARRAYS_H
#define SPART_REGRIDDER_FROM_ARRAYS_H

#include "operator/regridder_internal.h"

/* Check the entries where they lie and assemble them (the context's device
 * current). */
spart_status spart_regridder_build_from_arrays_on_device(spart_context *context,
                                                         const spart_weights *shell,
                                                         const void *const *entries,
                                                         const spart_regridder_options *options,
                                                         spart_regridder **regridder);

#endif /* SPART_REGRIDDER_FROM_ARRAYS_H */
