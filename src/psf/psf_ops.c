/*
 * src/psf/psf_ops.c: the one place that decides whether a PSF's work runs
 * on the host or a CUDA device (psf_ops.h), the host's table (FFTW,
 * host/psf_fft.c), and the public calls about where a PSF lives.
 */
#include "device/device_select.h"
#include "psf/psf_ops.h"
#include "spart/device.h"

const spart_psf_ops *spart_psf_ops_for(int cuda_device)
{
    return cuda_device >= 0 ? spart_psf_cuda_ops() : &spart_psf_host_ops;
}

int spart_psf_cuda_device(const spart_psf *psf)
{
    return psf != NULL && psf->ops->on_device ? psf->cuda_device : -1;
}

spart_status spart_psf_to_device(spart_context *context, const spart_psf *psf, spart_psf **device)
{
    if (device != NULL) {
        *device = NULL;
    }
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "psf_to_device: context is NULL");
    }
    spart_clear_error(context);
    if (psf == NULL || device == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "psf_to_device: psf and device must not be NULL");
    }
    return spart_psf_copy_to_device(context, psf, device);
}

static spart_status host_apply(spart_context *context, const spart_psf *psf, const double *input,
                               double *output, int adjoint, const char *name)
{
    int64_t size = spart_shape_size(&psf->shape_image);
    int64_t bad = spart_psf_first_not_finite(input, size);
    if (bad >= 0) {
        return spart_fail(context, SPART_ERROR_NOT_FINITE,
                          "%s: input value %lld (flat index) is %g; the FFT would spread it over "
                          "its whole image",
                          name, (long long)bad, input[bad]);
    }
    if (spart_psf_fft_apply(psf, spart_threads(context), input, output, adjoint) != 0) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "%s: out of memory for the FFT buffers", name);
    }
    return SPART_OK;
}

/* The host's arrays and FFTW plans are freed by spart_psf_free. */
static void host_release(spart_psf *psf)
{
    (void)psf;
}

const spart_psf_ops spart_psf_host_ops = {
    .name = "host",
    .on_device = 0,
    .apply = host_apply,
    .release = host_release,
};
