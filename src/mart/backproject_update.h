/*
 * src/mart/backproject_update.h: the MART update from images in one pass
 * on the device (src/mart/backproject_update_cuda.c; without CUDA,
 * src/device/no_cuda.c: never fusable).
 */
#ifndef SPART_BACKPROJECT_UPDATE_H
#define SPART_BACKPROJECT_UPDATE_H

#include "operator/regridder_internal.h"

/* Whether spart_device_mart_backproject_update can serve `backward`: a
 * device regridder without long rows whose one-vector product reads and
 * writes its values as they lie (no batch axes). */
int spart_device_mart_fusable(const spart_regridder *backward);

/* The MART update from images in one pass on the device (spart/mart.h's
 * spart_mart_update_from_images, for a regridder that
 * spart_device_mart_fusable accepts): checks the context's device and
 * that the arrays are its memory, then enqueues the work on the context's
 * stream (kernels/mart_steps.cu). */
spart_status spart_device_mart_backproject_update(spart_context *context,
                                                  const spart_regridder *backward,
                                                  const double *images, const double *observed_back,
                                                  double *scene, int64_t num_channel,
                                                  int64_t scene_size, double gamma);

#endif /* SPART_BACKPROJECT_UPDATE_H */
