/*
 * src/mart/backproject_update_cuda.c: the MART update from images on the
 * device in one pass (spart_mart_update_from_images for a device backward
 * regridder without long rows or batch axes): the backprojection is made
 * inside the update's kernel (kernels/mart_backproject_update.cu) and never
 * stored. The CUDA table's fusable and backproject_update operations
 * (src/mart/mart_ops.h).
 */
#include <cuda_runtime_api.h>

#include <stddef.h>

#include "device/device_internal.h"
#include "device/device_select.h"
#include "mart/backproject_update.h"
#include "operator/regridder_cuda.h"

_Static_assert(sizeof(spart_mart_run_state) % sizeof(int) == 0 &&
                   offsetof(spart_mart_run_state, stopped) == 0,
               "the stop flags of frames' run states lie a whole number of ints apart");

int spart_mart_cuda_fusable(const spart_regridder *backward)
{
    /* The fused kernel sums every row with the plan's one g: a matrix
     * planned by row (a CSR matrix's regridder) takes the unfused steps. */
    return backward != NULL && backward->ops->on_device && backward->device.num_long_rows == 0 &&
           backward->input.num_batch == 1 && backward->output.num_batch == 1 &&
           backward->plan.row_rule == SPART_PLAN_MEAN;
}

spart_status spart_mart_cuda_backproject_update(spart_context *context,
                                                const spart_regridder *backward,
                                                const double *images, const double *observed_back,
                                                double *scene, int64_t num_channel,
                                                int64_t scene_size, double gamma,
                                                const spart_mart_run_state *gate)
{
    return spart_mart_cuda_backproject_update_frames(
        context, backward, images, observed_back, scene, 1, num_channel, scene_size, gamma, gate);
}

spart_status spart_mart_cuda_backproject_update_frames(
    spart_context *context, const spart_regridder *backward, const double *images,
    const double *observed_back, double *scenes, int64_t num_frames, int64_t num_channel,
    int64_t scene_size, double gamma, const spart_mart_run_state *states)
{
    const spart_mart_run_state *gate = states;
    double *scene = scenes;
    int device = backward->device.cuda_device;
    int previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    if (context->cuda_device != device) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "the regridder lives on CUDA device %d but the context uses device %d "
                            "(spart_context_set_cuda_device)",
                            device, context->cuda_device);
    }
    const void *pointers[] = {images, observed_back, scene, gate};
    const char *names[] = {"images", "observed_back", "scene", "gate"};
    for (int k = 0; k < (gate != NULL ? 4 : 3) && status == SPART_OK; k++) {
        status = spart_device_check_pointer(context, pointers[k], device, "mart update from images",
                                            names[k]);
    }
    if (status == SPART_OK) {
        spart_device_csr matrix = spart_regridder_device_matrix(backward);
        spart_device_short_rows index = {backward->device.short_row_lengths,
                                         backward->device.short_row_starts};
        /* frame f's stop flag: states[f].stopped, a state's size apart */
        int64_t stop_stride = (int64_t)(sizeof(spart_mart_run_state) / sizeof(int));
        int error = spart_cuda_mart_backproject_update_frames(
            &matrix, images, observed_back, scene, num_frames, num_channel, scene_size, gamma,
            index.row_lengths != NULL ? &index : NULL, gate != NULL ? &gate->stopped : NULL,
            stop_stride, context->cuda_stream);
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, "mart update from images");
        }
    }
    spart_device_leave(previous);
    return status;
}
