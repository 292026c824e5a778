/*
 * src/psf/psf_cuda.c: the CUDA device's table of PSF operations
 * (psf_ops.h): copying a PSF's spectra to the device with its working
 * buffers and cuFFT plans, checking an apply's pointers, and the call into
 * kernels/psf_fft.cu. Built with CUDA only (src/device/no_cuda.c stands
 * for it without).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "psf/psf_internal.h"

#include <cuda_runtime_api.h>

#include "device/device_select.h"
#include "psf/psf_device.h"
#include "psf/psf_ops.h"

/* A failure of kernels/psf_fft.cu as a status with a sentence. */
static spart_status report_failure(spart_context *context, const spart_cuda_psf_failure *failure,
                                   const char *what)
{
    char step[SPART_ERROR_LENGTH];
    snprintf(step, sizeof step, "%s: %s", what, failure->step);
    if (failure->cuda_error != 0) {
        return spart_device_failure(context, failure->cuda_error, step);
    }
    const int cufft_alloc_failed = 2; /* CUFFT_ALLOC_FAILED */
    spart_status status = failure->cufft_error == cufft_alloc_failed ? SPART_ERROR_OUT_OF_MEMORY
                                                                     : SPART_ERROR_INTERNAL;
    return spart_fail(context, status, "%s: cuFFT error %s (%d)", step,
                      spart_cuda_cufft_result_name(failure->cufft_error), failure->cufft_error);
}

static void cuda_release(spart_psf *psf)
{
    spart_psf_device *device = psf->device;
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) {
        previous = -1;
    } else if (previous != psf->cuda_device) {
        (void)cudaSetDevice(psf->cuda_device);
    }
    spart_cuda_psf_destroy_plans(device);
    void *arrays[] = {device->spectra, device->kernel_of_image, device->image_kernel_l1,
                      device->padded,  device->transformed,     device->largest};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        (void)cudaFree(arrays[k]);
    }
    (void)cudaGetLastError();
    spart_device_leave(previous);
    spart_free(&psf->allocator, device);
    psf->device = NULL;
}

/* The host fields of `made` from `psf` (shapes, sizes, the image-to-kernel
 * map and the kernels' sums of |K|); no spectra, no FFTW plans. */
static spart_status copy_host_fields(spart_context *context, const spart_psf *psf, spart_psf *made)
{
    made->shape_image = psf->shape_image;
    made->shape_kernels = psf->shape_kernels;
    made->num_images = psf->num_images;
    made->num_kernels = psf->num_kernels;
    made->ny = psf->ny;
    made->nx = psf->nx;
    made->ky = psf->ky;
    made->kx = psf->kx;
    made->pad_y = psf->pad_y;
    made->pad_x = psf->pad_x;
    made->spectrum_size = psf->spectrum_size;
    made->kernel_of_image = spart_alloc(&made->allocator, (size_t)psf->num_images, sizeof(int64_t));
    made->kernel_l1 = spart_alloc(&made->allocator, (size_t)psf->num_kernels, sizeof(double));
    if (made->kernel_of_image == NULL || made->kernel_l1 == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "psf_to_device: out of memory");
    }
    memcpy(made->kernel_of_image, psf->kernel_of_image, (size_t)psf->num_images * sizeof(int64_t));
    memcpy(made->kernel_l1, psf->kernel_l1, (size_t)psf->num_kernels * sizeof(double));
    return SPART_OK;
}

/* cudaMalloc every array of `device` (sizes set). */
static spart_status allocate_device_arrays(spart_context *context, spart_psf_device *device)
{
    size_t images = (size_t)device->num_images;
    size_t spectrum_doubles = 2 * (size_t)device->spectrum_size;
    size_t frame_doubles = (size_t)(device->pad_y * device->pad_x);
    void **arrays[] = {(void **)&device->spectra,         (void **)&device->kernel_of_image,
                       (void **)&device->image_kernel_l1, (void **)&device->padded,
                       (void **)&device->transformed,     (void **)&device->largest};
    size_t bytes[] = {(size_t)device->num_kernels * spectrum_doubles * sizeof(double),
                      images * sizeof(int64_t),
                      images * sizeof(double),
                      images * frame_doubles * sizeof(double),
                      images * spectrum_doubles * sizeof(double),
                      images * sizeof(double)};
    for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++) {
        cudaError_t error = cudaMalloc(arrays[k], bytes[k]);
        if (error != cudaSuccess) {
            *arrays[k] = NULL;
            (void)cudaGetLastError();
            return spart_device_failure(context, (int)error,
                                        "psf_to_device: allocating the spectra and working "
                                        "buffers");
        }
    }
    return SPART_OK;
}

/* The spectra (from the host PSF's FFTW spectra, or from another device
 * PSF), the image-to-kernel map and each image's kernel sum |K|_1. */
static spart_status fill_device_arrays(spart_context *context, const spart_psf *psf,
                                       spart_psf *made, cudaStream_t stream)
{
    spart_psf_device *device = made->device;
    size_t spectra_bytes = (size_t)(made->num_kernels * made->spectrum_size) * 2 * sizeof(double);
    const void *spectra =
        psf->device != NULL ? (const void *)psf->device->spectra : (const void *)psf->spectra;
    double *image_l1 = spart_alloc(&made->allocator, (size_t)made->num_images, sizeof(double));
    if (image_l1 == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "psf_to_device: out of memory");
    }
    for (int64_t image = 0; image < made->num_images; image++) {
        image_l1[image] = made->kernel_l1[made->kernel_of_image[image]];
    }
    cudaError_t error =
        cudaMemcpyAsync(device->spectra, spectra, spectra_bytes, cudaMemcpyDefault, stream);
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(device->kernel_of_image, made->kernel_of_image,
                                (size_t)made->num_images * sizeof(int64_t), cudaMemcpyHostToDevice,
                                stream);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(device->image_kernel_l1, image_l1,
                                (size_t)made->num_images * sizeof(double), cudaMemcpyHostToDevice,
                                stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream); /* before image_l1 goes */
    }
    spart_free(&made->allocator, image_l1);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error, "psf_to_device: copying the spectra");
    }
    return SPART_OK;
}

/* Everything of the device copy, on the current device (the context's). */
static spart_status make_device_copy(spart_context *context, const spart_psf *psf, spart_psf *made)
{
    spart_status status = copy_host_fields(context, psf, made);
    if (status != SPART_OK) {
        return status;
    }
    if (made->num_images > INT32_MAX) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "psf_to_device: %lld images are more than a CUDA grid takes",
                          (long long)made->num_images);
    }
    spart_psf_device *device = spart_alloc_zero(&made->allocator, 1, sizeof *device);
    if (device == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "psf_to_device: out of memory");
    }
    made->device = device;
    made->cuda_device = context->cuda_device;
    device->num_images = made->num_images;
    device->num_kernels = made->num_kernels;
    device->ny = made->ny;
    device->nx = made->nx;
    device->centre_y = made->ky / 2;
    device->centre_x = made->kx / 2;
    device->pad_y = made->pad_y;
    device->pad_x = made->pad_x;
    device->spectrum_size = made->spectrum_size;
    /* host/psf_fft.c's factor, in its order of operations */
    device->flush_factor = 8.0 * log2((double)(made->pad_y * made->pad_x)) * DBL_EPSILON;
    status = allocate_device_arrays(context, device);
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    if (status == SPART_OK) {
        status = fill_device_arrays(context, psf, made, stream);
    }
    spart_cuda_psf_failure failure;
    if (status == SPART_OK && spart_cuda_psf_make_plans(device, stream, &failure) != 0) {
        status = report_failure(context, &failure, "psf_to_device");
    }
    return status;
}

spart_status spart_psf_copy_to_device(spart_context *context, const spart_psf *psf,
                                      spart_psf **device)
{
    int previous = -1;
    spart_status status = spart_device_enter(context, "psf_to_device", &previous);
    if (status != SPART_OK) {
        return status;
    }
    spart_psf *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        spart_device_leave(previous);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "psf_to_device: out of memory");
    }
    made->allocator = context->allocator;
    made->ops = spart_psf_ops_for(context->cuda_device);
    status = make_device_copy(context, psf, made);
    spart_device_leave(previous);
    if (status != SPART_OK) {
        spart_psf_free(made);
        return status;
    }
    *device = made;
    return SPART_OK;
}

static spart_status cuda_apply(spart_context *context, const spart_psf *psf, const double *input,
                               double *output, int adjoint, const char *name)
{
    int previous = -1;
    spart_status status = spart_device_select(context, psf->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    status = spart_device_check_pointer(context, input, psf->cuda_device, name, "input->data");
    if (status == SPART_OK) {
        status = spart_device_check_pointer(context, output, psf->cuda_device, name, "output");
    }
    spart_cuda_psf_failure failure;
    if (status == SPART_OK && spart_cuda_psf_apply(psf->device, input, output, adjoint,
                                                   context->cuda_stream, &failure) != 0) {
        status = report_failure(context, &failure, name);
    }
    spart_device_leave(previous);
    return status;
}

static const spart_psf_ops cuda_ops = {
    .name = "CUDA device",
    .on_device = 1,
    .apply = cuda_apply,
    .release = cuda_release,
};

const spart_psf_ops *spart_psf_cuda_ops(void)
{
    return &cuda_ops;
}
