/*
 * src/psf/psf_internal.h: the layout of a spart_psf and the FFT work of
 * host/psf_fft.c that src/psf/psf.c orchestrates.
 */
#ifndef SPART_PSF_INTERNAL_H
#define SPART_PSF_INTERNAL_H

#include <fftw3.h>
#include <stdint.h>

#include "core/internal.h"
#include "spart/psf.h"

struct spart_psf {
    spart_allocator allocator;
    spart_shape shape_image;
    spart_shape shape_kernels;
    int64_t num_images;       /* images: the product of the image's orthogonal extents */
    int64_t num_kernels;      /* kernels: the product of the kernels' orthogonal extents */
    int64_t *kernel_of_image; /* num_images entries: which kernel each image uses */
    int64_t ny, nx;           /* image extents */
    int64_t ky, kx;           /* kernel extents */
    int64_t pad_y, pad_x;     /* FFT extents: at least n + k - 1 (nothing wraps) and 2 */
    int64_t spectrum_size;    /* complex values of one spectrum: pad_y * (pad_x / 2 + 1) */
    fftw_complex *spectra;    /* num_kernels spectra, each scaled by 1 / (pad_y pad_x) */
    double *kernel_l1;        /* num_kernels sums of |K|: bound an output by max|in| |K|_1 */
    fftw_plan plan_forward;   /* real pad_y x pad_x -> spectrum */
    fftw_plan plan_inverse;   /* spectrum -> real pad_y x pad_x (unnormalised) */
    /* Where the PSF lives: its table of operations (src/psf/psf_ops.h). */
    const struct spart_psf_ops *ops;
    /* A PSF on a CUDA device (spart_psf_to_device): `device` holds its
     * arrays and cuFFT plans (src/psf/psf_device.h) on CUDA device cuda_device,
     * and spectra and the FFTW plans above are NULL. NULL on the host. */
    struct spart_psf_device *device;
    int cuda_device;
};

/* The smallest length >= `minimum` whose only prime factors are 2, 3, 5
 * and 7 (lengths FFTW transforms fastest). */
int64_t spart_psf_fft_length(int64_t minimum);

/* Make psf->plan_forward and psf->plan_inverse for psf->pad_y x
 * psf->pad_x. Returns 0, or -1 when memory or a plan could not be had. */
int spart_psf_fft_make_plans(spart_psf *psf);

/* psf->spectra from `kernels` (num_kernels kernels of ky x kx values, C
 * order, one after the other). Returns 0, or -1 when memory failed. */
int spart_psf_fft_kernel_spectra(spart_psf *psf, const double *kernels);

/* output = P input (adjoint = 0) or P^T input (adjoint = 1) over every
 * image, with `threads` threads. `output` may be `input`. Returns 0, or -1
 * when the working buffers could not be allocated. */
int spart_psf_fft_apply(const spart_psf *psf, int threads, const double *input, double *output,
                        int adjoint);

/* The index of the first value that is NaN or infinite, or -1
 * (src/psf/psf.c). */
int64_t spart_psf_first_not_finite(const double *values, int64_t n);

#endif /* SPART_PSF_INTERNAL_H */
