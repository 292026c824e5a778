/*
 * src/psf/psf_ops.h: where a PSF operator lives, decided once. A PSF
 * carries a table of operations chosen by spart_psf_ops_for when it is
 * made (spart_psf_create: the host's, FFTW; spart_psf_to_device: the CUDA
 * device's, cuFFT, src/psf/psf_cuda.c), as a regridder carries its
 * operator table (src/operator/operator_ops.h); src/psf/psf.c checks the
 * arguments of both directions once and calls through the table.
 */
#ifndef SPART_PSF_OPS_H
#define SPART_PSF_OPS_H

#include "psf/psf_internal.h"

typedef struct spart_psf_ops {
    const char *name; /* "host" or "CUDA device", for sentences */
    int on_device;    /* nonzero: arrays in memory of psf->cuda_device */
    /* output = P input (adjoint = 0) or P^T input (adjoint = 1), num_images
     * images of the PSF's shape, arguments checked by src/psf/psf.c;
     * `name` names the call in sentences. */
    spart_status (*apply)(spart_context *context, const spart_psf *psf, const double *input,
                          double *output, int adjoint, const char *name);
    /* Free what the table's side holds (not the struct, not the host
     * arrays src/psf/psf.c frees). */
    void (*release)(spart_psf *psf);
} spart_psf_ops;

/* The host's table (src/psf/psf_ops.c). */
extern const spart_psf_ops spart_psf_host_ops;

/* The CUDA device's table (src/psf/psf_cuda.c), or NULL in a build
 * without CUDA (src/device/no_cuda.c). */
const spart_psf_ops *spart_psf_cuda_ops(void);

/* The one choice of host or device for a PSF: the table for arrays on
 * CUDA device `cuda_device`, or on the host when it is negative. */
const spart_psf_ops *spart_psf_ops_for(int cuda_device);

/* A copy of `psf` on the context's CUDA device, the context's device
 * checked to exist (src/psf/psf_cuda.c; without CUDA, a refusal). */
spart_status spart_psf_copy_to_device(spart_context *context, const spart_psf *psf,
                                      spart_psf **device);

#endif /* SPART_PSF_OPS_H */
