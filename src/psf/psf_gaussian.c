/*
 * src/psf/psf_gaussian.c: the elliptical Gaussian PSF kernel (spart/psf.h,
 * spart_psf_gaussian), the kernel of ctis's PSF tutorial, for the spart
 * command's instrument.psf section, the benchmarks and any user who
 * wants the same kernels.
 *
 * The arithmetic is written out in one fixed order (the angle to radians
 * as angle * pi / 180, each sample as below, the sum in C order, then one
 * division per sample), so that every caller gets the same bits.
 */
#include <math.h>

#include "core/internal.h"
#include "spart/psf.h"

static const double PI = 3.14159265358979323846;

/* A width must be positive and finite, and its square (the divisor of the
 * exponent) neither 0 nor infinite, else the centre sample is 0 / 0. */
static spart_status check_width(spart_context *context, const char *name, double sigma)
{
    if (!isfinite(sigma)) {
        return spart_fail(context, SPART_ERROR_NOT_FINITE, "psf gaussian: %s = %g is not finite",
                          name, sigma);
    }
    if (!(sigma > 0.0)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf gaussian: %s = %g must be positive (a standard deviation in "
                          "pixels)",
                          name, sigma);
    }
    double square = sigma * sigma;
    if (square == 0.0 || isinf(square)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf gaussian: %s = %g is too %s: its square is %g in float64", name,
                          sigma, square == 0.0 ? "small" : "large", square);
    }
    return SPART_OK;
}

static spart_status check_arguments(spart_context *context, double sigma_major, double sigma_minor,
                                    double angle, const int64_t size[2], int64_t size_kernel)
{
    spart_status status = check_width(context, "sigma_major", sigma_major);
    if (status == SPART_OK) {
        status = check_width(context, "sigma_minor", sigma_minor);
    }
    if (status != SPART_OK) {
        return status;
    }
    if (!isfinite(angle)) {
        return spart_fail(context, SPART_ERROR_NOT_FINITE, "psf gaussian: angle = %g is not finite",
                          angle);
    }
    if (size[0] < 1 || size[1] < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf gaussian: size = %lld x %lld must be at least 1 x 1",
                          (long long)size[0], (long long)size[1]);
    }
    if (size[0] > INT64_MAX / size[1]) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "psf gaussian: size = %lld x %lld has more samples than int64 counts",
                          (long long)size[0], (long long)size[1]);
    }
    if (size_kernel != size[0] * size[1]) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "psf gaussian: size_kernel = %lld, but a %lld x %lld kernel has %lld "
                          "values",
                          (long long)size_kernel, (long long)size[0], (long long)size[1],
                          (long long)(size[0] * size[1]));
    }
    return SPART_OK;
}

spart_status spart_psf_gaussian(spart_context *context, double sigma_major, double sigma_minor,
                                double angle, const int64_t size[2], double *kernel,
                                int64_t size_kernel)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "psf gaussian: context is NULL");
    }
    spart_clear_error(context);
    if (size == NULL || kernel == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "psf gaussian: size and kernel must not be NULL");
    }
    spart_status status =
        check_arguments(context, sigma_major, sigma_minor, angle, size, size_kernel);
    if (status != SPART_OK) {
        return status;
    }
    double radians = angle * PI / 180.0;
    double cosine = cos(radians), sine = sin(radians);
    double major_squared = sigma_major * sigma_major;
    double minor_squared = sigma_minor * sigma_minor;
    int64_t centre_0 = size[0] / 2, centre_1 = size[1] / 2; /* floor(n / 2) */
    double total = 0.0;
    for (int64_t i = 0; i < size[0]; i++) {
        for (int64_t j = 0; j < size[1]; j++) {
            double p = (double)(i - centre_0), q = (double)(j - centre_1);
            double u = cosine * p + sine * q; /* along the major axis */
            double v = -sine * p + cosine * q;
            double value = exp(-0.5 * (u * u / major_squared + v * v / minor_squared));
            kernel[i * size[1] + j] = value;
            total += value;
        }
    }
    /* The centre sample is exp(0) = 1, so total >= 1. */
    for (int64_t k = 0; k < size_kernel; k++) {
        kernel[k] = kernel[k] / total;
    }
    return SPART_OK;
}
