/*
 * src/psf/psf_device.h: the PSF operator on a CUDA device, as the C glue
 * (src/psf/psf_cuda.c) and the cuFFT work (kernels/psf_fft.cu) share it.
 * Plain C types only, so that the header reads the same in C and in CUDA
 * C++; the cuFFT plans are their handles (cufftHandle is an int).
 *
 * The algorithm is host/psf_fft.c's: each image is zero-padded to
 * pad_y x pad_x (at least n + k - 1 along each axis, so nothing wraps),
 * transformed, multiplied by its kernel's spectrum (conjugated for the
 * adjoint), transformed back and read from its window; outputs within the
 * FFT's error bound of zero become 0. All images go through one batched
 * cuFFT plan per direction.
 *
 * Every entry point but the plan functions only enqueues work on `stream`
 * (a cudaStream_t): no synchronisation, no allocation, so an apply can be
 * recorded in a CUDA graph. The kernels use no atomics; the largest
 * magnitude of an image is a maximum, exact in any order.
 */
#ifndef SPART_PSF_DEVICE_H
#define SPART_PSF_DEVICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A device PSF's arrays (all in device memory) and plans. */
typedef struct spart_psf_device {
    int64_t num_images;
    int64_t num_kernels;
    int64_t ny, nx;           /* image extents */
    int64_t centre_y;         /* floor(ky / 2) */
    int64_t centre_x;         /* floor(kx / 2) */
    int64_t pad_y, pad_x;     /* FFT extents, as the host PSF's */
    int64_t spectrum_size;    /* complex values of one spectrum: pad_y * (pad_x / 2 + 1) */
    double flush_factor;      /* 8 log2(pad_y pad_x) DBL_EPSILON, as host/psf_fft.c */
    double *spectra;          /* num_kernels spectra, (re, im) pairs, scaled by 1 / (pad_y pad_x) */
    int64_t *kernel_of_image; /* num_images: which kernel each image uses */
    double *image_kernel_l1;  /* num_images: the sum of |K| of that kernel */
    double *padded;           /* num_images x pad_y x pad_x: working images */
    double *transformed;      /* num_images spectra: working spectra */
    double *largest;          /* num_images: max |input| of each image */
    int plan_forward;         /* cufftHandle: D2Z, batch num_images */
    int plan_inverse;         /* cufftHandle: Z2D, batch num_images */
    int have_forward;         /* nonzero once plan_forward exists */
    int have_inverse;
} spart_psf_device;

/* What failed: the step, and a CUDA runtime error or a cuFFT result. */
typedef struct spart_cuda_psf_failure {
    const char *step;
    int cuda_error;  /* a cudaError_t, or 0 */
    int cufft_error; /* a cufftResult, or 0 */
} spart_cuda_psf_failure;

/* Make both plans for psf's sizes (batched over num_images), then run each
 * once on zeroed working buffers on `stream` and wait for it, so that
 * cuFFT loads its kernels here and never while a graph is recorded.
 * Returns 0, or -1 with *failure filled (plans made so far stay in psf for
 * spart_cuda_psf_destroy_plans). */
int spart_cuda_psf_make_plans(spart_psf_device *psf, void *stream, spart_cuda_psf_failure *failure);

/* Destroy the plans that exist. */
void spart_cuda_psf_destroy_plans(spart_psf_device *psf);

/* output = P input (adjoint = 0) or P^T input (adjoint = 1), num_images
 * images of ny x nx values each, in device memory; output may be input.
 * Only enqueues work on `stream` (also made the plans' stream). Returns 0,
 * or -1 with *failure filled. */
int spart_cuda_psf_apply(const spart_psf_device *psf, const double *input, double *output,
                         int adjoint, void *stream, spart_cuda_psf_failure *failure);

/* The name of a cufftResult ("CUFFT_ALLOC_FAILED"), or "an unknown cuFFT
 * result". */
const char *spart_cuda_cufft_result_name(int result);

#ifdef __cplusplus
}
#endif

#endif /* SPART_PSF_DEVICE_H */
