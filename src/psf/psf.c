/*
 * src/psf/psf.c: the PSF convolution operator (spart/psf.h): argument checks,
 * the map from images to kernels, and the calls into host/psf_fft.c (or,
 * for a PSF on a CUDA device, through its table of operations, psf_ops.h).
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "psf/psf_ops.h"
#include "core/shape.h"

/* The kernels' and the image's shapes: at least 2 axes each, extents >= 1,
 * and kernel orthogonal axes that broadcast to the image's. */
static spart_status check_shapes(spart_context *context, const spart_shape *kernels,
                                 const spart_shape *image)
{
    char text_a[128], text_b[128];
    if (!spart_shape_is_valid(kernels) || kernels->ndim < 2 || !spart_shape_is_valid(image) ||
        image->ndim < 2) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf: the kernels (shape %s) and the images (shape %s) need at least 2 "
                          "axes each (y, x last)",
                          spart_shape_format(kernels, text_a, sizeof text_a),
                          spart_shape_format(image, text_b, sizeof text_b));
    }
    if (spart_shape_size(kernels) < 1 || spart_shape_size(image) < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf: the kernels (shape %s) and the images (shape %s) must have every "
                          "extent at least 1",
                          spart_shape_format(kernels, text_a, sizeof text_a),
                          spart_shape_format(image, text_b, sizeof text_b));
    }
    if (kernels->ndim > image->ndim) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf: the kernels have %d axes (shape %s), more than the images' %d "
                          "(shape %s)",
                          kernels->ndim, spart_shape_format(kernels, text_a, sizeof text_a),
                          image->ndim, spart_shape_format(image, text_b, sizeof text_b));
    }
    spart_shape kernel_orthogonal = *kernels;
    spart_shape image_orthogonal = *image;
    kernel_orthogonal.ndim -= 2;
    image_orthogonal.ndim -= 2;
    if (!spart_shape_broadcasts_to(&kernel_orthogonal, &image_orthogonal)) {
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "psf: the kernels of shape %s do not broadcast over the images of "
                          "shape %s (their leading axes must equal the images' or be 1)",
                          spart_shape_format(kernels, text_a, sizeof text_a),
                          spart_shape_format(image, text_b, sizeof text_b));
    }
    return SPART_OK;
}

/* The index of the first value that is NaN or infinite, or -1. */
int64_t spart_psf_first_not_finite(const double *values, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(values[i])) {
            return i;
        }
    }
    return -1;
}

/* psf->kernel_of_image: for each image (C order over the image's
 * orthogonal axes), the kernel it uses after broadcasting. */
static void map_images_to_kernels(spart_psf *psf)
{
    spart_shape image_orthogonal = psf->shape_image;
    spart_shape kernel_orthogonal = psf->shape_kernels;
    image_orthogonal.ndim -= 2;
    kernel_orthogonal.ndim -= 2;
    int64_t strides[SPART_MAX_NDIM];
    spart_broadcast_strides(&kernel_orthogonal, &image_orthogonal, strides);
    for (int64_t image = 0; image < psf->num_images; image++) {
        int64_t rest = image;
        int64_t kernel = 0;
        for (int axis = image_orthogonal.ndim - 1; axis >= 0; axis--) {
            int64_t index = rest % image_orthogonal.dims[axis];
            rest /= image_orthogonal.dims[axis];
            kernel += index * strides[axis];
        }
        psf->kernel_of_image[image] = kernel;
    }
}

/* Sizes of the FFT, checked against int (FFTW's plan sizes) and size_t:
 * at least n + k - 1 along each axis, so that nothing wraps, and at least
 * 2, since cuFFT (which a device copy of the PSF plans with the same sizes
 * and spectra) does not take transforms of length 1. */
static spart_status choose_fft_sizes(spart_context *context, spart_psf *psf)
{
    int64_t least_y = psf->ny + psf->ky - 1;
    int64_t least_x = psf->nx + psf->kx - 1;
    psf->pad_y = spart_psf_fft_length(least_y > 2 ? least_y : 2);
    psf->pad_x = spart_psf_fft_length(least_x > 2 ? least_x : 2);
    if (psf->pad_y > INT32_MAX || psf->pad_x > INT32_MAX ||
        psf->pad_y > INT64_MAX / (psf->pad_x + 2)) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "psf: images of %lld x %lld with kernels of %lld x %lld need FFTs too "
                          "large for FFTW",
                          (long long)psf->ny, (long long)psf->nx, (long long)psf->ky,
                          (long long)psf->kx);
    }
    psf->spectrum_size = psf->pad_y * (psf->pad_x / 2 + 1);
    return SPART_OK;
}

spart_status spart_psf_create(spart_context *context, const spart_array *kernels,
                              const spart_shape *shape_image, spart_psf **psf)
{
    if (psf != NULL) {
        *psf = NULL;
    }
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "psf: context is NULL");
    }
    spart_clear_error(context);
    if (kernels == NULL || kernels->data == NULL || shape_image == NULL || psf == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "psf: kernels, kernels->data, shape_image and psf must not be NULL");
    }
    spart_status status = check_shapes(context, &kernels->shape, shape_image);
    if (status != SPART_OK) {
        return status;
    }
    int64_t num_values = spart_shape_size(&kernels->shape);
    int64_t bad = spart_psf_first_not_finite(kernels->data, num_values);
    if (bad >= 0) {
        return spart_fail(context, SPART_ERROR_NOT_FINITE,
                          "psf: kernel value %lld (flat index) is %g; kernels must be finite",
                          (long long)bad, kernels->data[bad]);
    }
    const spart_allocator *allocator = &context->allocator;
    spart_psf *made = spart_alloc_zero(allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "psf: out of memory");
    }
    made->allocator = context->allocator;
    made->ops = spart_psf_ops_for(-1);
    made->shape_image = *shape_image;
    made->shape_kernels = kernels->shape;
    made->ny = shape_image->dims[shape_image->ndim - 2];
    made->nx = shape_image->dims[shape_image->ndim - 1];
    made->ky = kernels->shape.dims[kernels->shape.ndim - 2];
    made->kx = kernels->shape.dims[kernels->shape.ndim - 1];
    made->num_images = spart_shape_size(shape_image) / (made->ny * made->nx);
    made->num_kernels = num_values / (made->ky * made->kx);
    status = choose_fft_sizes(context, made);
    if (status != SPART_OK) {
        spart_psf_free(made);
        return status;
    }
    made->kernel_of_image = spart_alloc(allocator, (size_t)made->num_images, sizeof(int64_t));
    made->spectra = spart_alloc(allocator, (size_t)made->num_kernels,
                                (size_t)made->spectrum_size * sizeof(fftw_complex));
    if (made->kernel_of_image == NULL || made->spectra == NULL) {
        spart_psf_free(made);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "psf: out of memory for %lld kernel spectra of %lld values",
                          (long long)made->num_kernels, (long long)made->spectrum_size);
    }
    map_images_to_kernels(made);
    if (spart_psf_fft_make_plans(made) != 0) {
        spart_psf_free(made);
        return spart_fail(context, SPART_ERROR_INTERNAL,
                          "psf: FFTW could not plan a %lld x %lld transform (or memory ran out)",
                          (long long)made->pad_y, (long long)made->pad_x);
    }
    if (spart_psf_fft_kernel_spectra(made, kernels->data) != 0) {
        spart_psf_free(made);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "psf: out of memory for a %lld x %lld FFT buffer", (long long)made->pad_y,
                          (long long)made->pad_x);
    }
    *psf = made;
    return SPART_OK;
}

void spart_psf_free(spart_psf *psf)
{
    if (psf == NULL) {
        return;
    }
    if (psf->plan_forward != NULL) {
        fftw_destroy_plan(psf->plan_forward);
    }
    if (psf->plan_inverse != NULL) {
        fftw_destroy_plan(psf->plan_inverse);
    }
    psf->ops->release(psf);
    spart_allocator allocator = psf->allocator;
    spart_free(&allocator, psf->kernel_of_image);
    spart_free(&allocator, psf->spectra);
    spart_free(&allocator, psf->kernel_l1);
    spart_free(&allocator, psf);
}

spart_shape spart_psf_shape_image(const spart_psf *psf)
{
    spart_shape none = {0, {0}};
    return psf != NULL ? psf->shape_image : none;
}

spart_shape spart_psf_shape_kernels(const spart_psf *psf)
{
    spart_shape none = {0, {0}};
    return psf != NULL ? psf->shape_kernels : none;
}

/* The checks both directions share, then the FFT work. */
static spart_status apply(spart_context *context, const spart_psf *psf, const spart_array *input,
                          double *output, int64_t size_output, int adjoint)
{
    const char *name = adjoint ? "psf adjoint" : "psf";
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "%s: context is NULL", name);
    }
    spart_clear_error(context);
    if (psf == NULL || input == NULL || input->data == NULL || output == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "%s: psf, input, input->data and output must not be NULL", name);
    }
    if (!spart_shape_is_valid(&input->shape) ||
        !spart_shape_equal(&input->shape, &psf->shape_image)) {
        char text_a[128], text_b[128];
        return spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                          "%s: the input has shape %s, but this PSF was made for images of "
                          "shape %s",
                          name, spart_shape_format(&input->shape, text_a, sizeof text_a),
                          spart_shape_format(&psf->shape_image, text_b, sizeof text_b));
    }
    int64_t size = spart_shape_size(&psf->shape_image);
    if (size_output != size) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: size_output = %lld, but the images have %lld values", name,
                          (long long)size_output, (long long)size);
    }
    /* A device PSF's input lives on the device: its table checks it there. */
    return psf->ops->apply(context, psf, input->data, output, adjoint, name);
}

spart_status spart_psf_apply(spart_context *context, const spart_psf *psf, const spart_array *input,
                             double *output, int64_t size_output)
{
    return apply(context, psf, input, output, size_output, 0);
}

spart_status spart_psf_apply_adjoint(spart_context *context, const spart_psf *psf,
                                     const spart_array *input, double *output, int64_t size_output)
{
    return apply(context, psf, input, output, size_output, 1);
}
