/*
 * solvers/mart_psf.c: MART operators from a pair of Regridders with a PSF
 * composed by FFT between them (spart_mart_operators_from_regridders_psf):
 * forward = clamp(P A x) with the noise widths, backward = B P^T images,
 * on the host or, with the Regridders and the PSF on one CUDA device, on
 * that device (every step only enqueues work, so the driver can record an
 * iteration as a CUDA graph).
 */
#include "spart/device.h"
#include "spart/mart.h"
#include "spart/psf.h"
#include "mart_internal.h"

/* Predicted images d = max(P A x, 0) and their widths. The PSF works in
 * place on the Regridder's output. */
static spart_status forward_with_psf(void *user, spart_context *context, const double *scene,
                                     double *images, double *widths)
{
    const spart_mart_regridder_psf *problem = user;
    spart_array x = {scene, spart_regridder_shape_input(problem->forward)};
    int64_t size = spart_regridder_num_rows(problem->forward);
    spart_status status = spart_regridder_apply(context, problem->forward, &x, images, size);
    if (status == SPART_OK) {
        spart_array blurred = {images, spart_psf_shape_image(problem->psf)};
        status = spart_psf_apply(context, problem->psf, &blurred, images, size);
    }
    if (status == SPART_OK) {
        status = spart_mart_finish_prediction(context, images, widths, size, problem->gain,
                                              problem->read_noise,
                                              spart_psf_cuda_device(problem->psf) >= 0);
    }
    return status;
}

/* Backprojection B (P^T images), through one image set of scratch: the
 * caller's on a device, one allocated per call on the host. */
static spart_status backward_with_psf(void *user, spart_context *context, const double *images,
                                      double *scenes)
{
    const spart_mart_regridder_psf *problem = user;
    int64_t size = spart_regridder_num_columns(problem->backward);
    int on_device = spart_psf_cuda_device(problem->psf) >= 0;
    double *spread = on_device ? problem->device_scratch
                               : spart_context_malloc(context, (size_t)size * sizeof(double));
    if (spread == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "mart operators with a psf: out of memory for %lld "
                                       "image values",
                                       (long long)size);
    }
    spart_array in = {images, spart_psf_shape_image(problem->psf)};
    spart_status status = spart_psf_apply_adjoint(context, problem->psf, &in, spread, size);
    if (status == SPART_OK) {
        spart_array x = {spread, spart_regridder_shape_input(problem->backward)};
        status = spart_regridder_apply(context, problem->backward, &x, scenes,
                                       spart_regridder_num_rows(problem->backward));
    }
    if (!on_device) {
        spart_context_free_memory(context, spread);
    }
    return status;
}

/* Shapes equal, axis by axis. */
static int same_shape(const spart_shape *a, const spart_shape *b)
{
    if (a->ndim != b->ndim) {
        return 0;
    }
    for (int axis = 0; axis < a->ndim; axis++) {
        if (a->dims[axis] != b->dims[axis]) {
            return 0;
        }
    }
    return 1;
}

spart_status spart_mart_operators_from_regridders_psf(spart_context *context,
                                                      const spart_mart_regridder_psf *problem,
                                                      spart_mart_operators *operators)
{
    if (problem == NULL || operators == NULL || problem->psf == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "mart operators with a psf: problem, problem->psf and "
                                       "operators must not be NULL");
    }
    /* The Regridders' checks are those of the pair without a PSF. */
    spart_mart_regridder_pair pair = {problem->forward, problem->backward, problem->num_channel,
                                      problem->gain, problem->read_noise};
    spart_status status = spart_mart_operators_from_regridders(context, &pair, operators);
    if (status != SPART_OK) {
        return status;
    }
    int regridder_device = spart_regridder_cuda_device(problem->forward);
    int psf_device = spart_psf_cuda_device(problem->psf);
    if (regridder_device != psf_device) {
        return spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "mart operators with a psf: the regridders are on %s%d and the PSF on %s%d: move "
            "them to the same place (spart_regridder_to_device, spart_psf_to_device)",
            regridder_device >= 0 ? "CUDA device " : "the host ", regridder_device,
            psf_device >= 0 ? "CUDA device " : "the host ", psf_device);
    }
    if (operators->on_device && problem->device_scratch == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "mart operators with a psf: on a device, "
                                       "problem->device_scratch must hold %lld doubles of "
                                       "device memory (spart_device_malloc)",
                                       (long long)spart_regridder_num_rows(problem->forward));
    }
    spart_shape images = spart_regridder_shape_output(problem->forward);
    spart_shape psf_images = spart_psf_shape_image(problem->psf);
    if (!same_shape(&images, &psf_images)) {
        return spart_context_set_error(
            context, SPART_ERROR_SHAPE_MISMATCH,
            "mart operators with a psf: the PSF is for images of %d axes (%lld values), but the "
            "forward regridder gives %d axes (%lld values): make the PSF for its output shape",
            psf_images.ndim, (long long)spart_shape_size(&psf_images), images.ndim,
            (long long)spart_shape_size(&images));
    }
    /* On a device every step only enqueues work on the context's stream. */
    operators->capturable = operators->on_device;
    operators->forward = forward_with_psf;
    operators->backward = backward_with_psf;
    operators->forward_frames = NULL; /* spart_mart_solve_frames: one frame at a time */
    operators->backward_frames = NULL;
    operators->user = (void *)problem;
    return SPART_OK;
}
