/*
 * src/mart/backproject_update.h: the MART update from images in one pass
 * on the device (src/mart/backproject_update_cuda.c), the CUDA table's
 * fusable and backproject_update operations (src/mart/mart_ops.h). CUDA
 * glue only: without CUDA spart_mart_select refuses a device, so nothing
 * stands in for them.
 */
#ifndef SPART_BACKPROJECT_UPDATE_H
#define SPART_BACKPROJECT_UPDATE_H

#include "operator/regridder_internal.h"
#include "spart/mart_steps.h"

/* Whether spart_mart_cuda_backproject_update can serve `backward`: a
 * device regridder without long rows whose one-vector product reads and
 * writes its values as they lie (no batch axes). */
int spart_mart_cuda_fusable(const spart_regridder *backward);

/* The MART update from images in one pass on the device
 * (spart_mart_update_from_images_gated, for a regridder that
 * spart_mart_cuda_fusable accepts): checks the context's device and that
 * the arrays (and the gate, when there is one) are its memory, then
 * enqueues the work on the context's stream
 * (kernels/mart_backproject_update.cu), which changes nothing once `gate`
 * (NULL: none) has stopped. */
spart_status spart_mart_cuda_backproject_update(spart_context *context,
                                                const spart_regridder *backward,
                                                const double *images, const double *observed_back,
                                                double *scene, int64_t num_channel,
                                                int64_t scene_size, double gamma,
                                                const spart_mart_run_state *gate);

/* The same for `num_frames` frames in one launch
 * (spart_mart_update_from_images_frames): frame f's images, observed_back
 * and scene at f times one frame's, gated by states[f] (states NULL:
 * none). */
spart_status spart_mart_cuda_backproject_update_frames(
    spart_context *context, const spart_regridder *backward, const double *images,
    const double *observed_back, double *scenes, int64_t num_frames, int64_t num_channel,
    int64_t scene_size, double gamma, const spart_mart_run_state *states);

#endif /* SPART_BACKPROJECT_UPDATE_H */
