/*
 * src/cli/device.c: MART operators on the host, or with their products on
 * a CUDA device (see device.h). The CUDA half is built only when the
 * library has CUDA (SPART_CLI_HAVE_CUDA).
 */
#include "device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPART_CLI_HAVE_CUDA
#include <cuda_runtime.h>
#endif

struct device_operators {
    spart_mart_regridder_pair pair; /* the host regridders, gain and read noise */
    int on_device;
#if SPART_CLI_HAVE_CUDA
    spart_regridder *forward; /* copies in device memory */
    spart_regridder *backward;
    double *scene;  /* device buffers: num_channel x scene_size at most */
    double *images; /* num_channel x image_size */
    double gain;
    double read_noise;
    char where[32];
#endif
};

#if SPART_CLI_HAVE_CUDA

static spart_status cuda_failure(spart_context *context, cudaError_t error, const char *doing)
{
    return spart_context_set_error(context, SPART_ERROR_INTERNAL, "device operators: %s: %s", doing,
                                   cudaGetErrorString(error));
}

/* y = A x on the device: x copied there, the product, y copied back. */
static spart_status device_product(spart_context *context, const spart_regridder *regridder,
                                   const double *host_x, double *device_x, double *device_y,
                                   double *host_y)
{
    int64_t columns = spart_regridder_num_columns(regridder);
    int64_t rows = spart_regridder_num_rows(regridder);
    cudaError_t error =
        cudaMemcpy(device_x, host_x, (size_t)columns * sizeof(double), cudaMemcpyHostToDevice);
    if (error != cudaSuccess) {
        return cuda_failure(context, error, "copying to the device");
    }
    spart_array x = {device_x, spart_regridder_shape_input(regridder)};
    spart_status status = spart_regridder_apply(context, regridder, &x, device_y, rows);
    if (status != SPART_OK) {
        return status;
    }
    error = cudaMemcpy(host_y, device_y, (size_t)rows * sizeof(double), cudaMemcpyDeviceToHost);
    return error != cudaSuccess ? cuda_failure(context, error, "copying from the device")
                                : SPART_OK;
}

/* As the library's operators from a regridder pair: images clamped at 0,
 * widths sqrt(gain d + read_noise^2). */
static spart_status device_forward(void *user, spart_context *context, const double *scene,
                                   double *images, double *widths)
{
    device_operators *made = user;
    spart_status status =
        device_product(context, made->forward, scene, made->scene, made->images, images);
    if (status != SPART_OK) {
        return status;
    }
    int64_t size = spart_regridder_num_rows(made->forward);
    double read_variance = made->read_noise * made->read_noise;
    for (int64_t p = 0; p < size; p++) {
        double d = images[p] > 0.0 ? images[p] : 0.0;
        images[p] = d;
        if (widths != NULL) {
            widths[p] = sqrt(made->gain * d + read_variance);
        }
    }
    return SPART_OK;
}

static spart_status device_backward(void *user, spart_context *context, const double *images,
                                    double *scenes)
{
    device_operators *made = user;
    return device_product(context, made->backward, images, made->images, made->scene, scenes);
}

static void free_device_part(device_operators *made)
{
    spart_regridder_free(made->forward);
    spart_regridder_free(made->backward);
    if (made->scene != NULL) {
        cudaFree(made->scene);
    }
    if (made->images != NULL) {
        cudaFree(made->images);
    }
}

static int make_on_device(spart_context *context, spart_mart_operators *operators,
                          device_operators *made, const char **where, char *error,
                          size_t error_size)
{
    if (spart_regridder_to_device(context, made->pair.forward, &made->forward) != SPART_OK ||
        spart_regridder_to_device(context, made->pair.backward, &made->backward) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        return -1;
    }
    int64_t scene_values = spart_regridder_num_rows(made->backward);
    int64_t image_values = spart_regridder_num_rows(made->forward);
    if (cudaMalloc((void **)&made->scene, (size_t)scene_values * sizeof(double)) != cudaSuccess ||
        cudaMalloc((void **)&made->images, (size_t)image_values * sizeof(double)) != cudaSuccess) {
        snprintf(error, error_size, "not enough device memory for the scene and the images");
        return -1;
    }
    made->gain = made->pair.gain;
    made->read_noise = made->pair.read_noise;
    operators->forward = device_forward;
    operators->backward = device_backward;
    operators->user = made;
    made->on_device = 1;
    snprintf(made->where, sizeof made->where, "cuda device %d",
             spart_regridder_cuda_device(made->forward));
    *where = made->where;
    return 0;
}

#else

static void free_device_part(device_operators *made)
{
    (void)made;
}

static int make_on_device(spart_context *context, spart_mart_operators *operators,
                          device_operators *made, const char **where, char *error,
                          size_t error_size)
{
    (void)context;
    (void)operators;
    (void)made;
    (void)where;
    snprintf(error, error_size,
             "this spart was built without CUDA, so --device cuda cannot be used (rebuild with "
             "the CUDA Toolkit installed, or use --device host)");
    return -1;
}

#endif

int device_operators_make(spart_context *context, const spart_mart_regridder_pair *host,
                          cli_device requested, spart_mart_operators *operators,
                          device_operators **made, const char **where, char *error,
                          size_t error_size)
{
    *made = calloc(1, sizeof **made);
    if (*made == NULL) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    /* The host operators first: the device ones copy their gain and noise. */
    (*made)->pair = *host;
    if (spart_mart_operators_from_regridders(context, &(*made)->pair, operators) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        device_operators_free(*made);
        *made = NULL;
        return -1;
    }
    *where = "host";
    if (requested == CLI_DEVICE_HOST || requested == CLI_DEVICE_UNSET) {
        return 0;
    }
    spart_mart_operators on_device = *operators;
    if (make_on_device(context, &on_device, *made, where, error, error_size) == 0) {
        *operators = on_device;
        return 0;
    }
    free_device_part(*made);
    (*made)->on_device = 0;
    if (requested == CLI_DEVICE_AUTO) {
        *where = "host (no usable CUDA device)";
        return 0;
    }
    char reason[512];
    snprintf(reason, sizeof reason, "%s", error);
    snprintf(error, error_size, "--device cuda: %s", reason);
    device_operators_free(*made);
    *made = NULL;
    return -1;
}

void device_operators_free(device_operators *made)
{
    if (made == NULL) {
        return;
    }
    if (made->on_device) {
        free_device_part(made);
    }
    free(made);
}
