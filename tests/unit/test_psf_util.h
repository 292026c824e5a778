/*
 * tests/unit/test_psf_util.h: what the tests of the PSF operator
 * (test_psf.c on the host, test_cuda_psf.c on a device, test_psf_gaussian.c)
 * share: random images and kernels, the operator's sums written out
 * directly in float64 as the reference, and the check of an error's
 * status and sentence.
 *
 * Include after <cmocka.h>. Everything is static inline, so a test that
 * uses only part of it builds without warnings.
 */
#ifndef SPART_TEST_PSF_UTIL_H
#define SPART_TEST_PSF_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spart.h"
#include "test_util.h"

/* n values uniform in [low, low + 1). */
static inline double *random_values(int64_t n, uint64_t seed, double low)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    assert_non_null(values);
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) {
        values[i] = low + next_uniform(&state);
    }
    return values;
}

/* The kernel image `image` uses: its orthogonal index broadcast against the
 * kernels' orthogonal shape. */
static inline const double *kernel_for_image(const spart_shape *kernels,
                                             const double *kernel_values, const spart_shape *images,
                                             int64_t image)
{
    int image_orthogonal = images->ndim - 2;
    int kernel_orthogonal = kernels->ndim - 2;
    int64_t kernel = 0;
    int64_t stride = 1;
    int64_t rest = image;
    for (int axis = image_orthogonal - 1; axis >= 0; axis--) {
        int64_t index = rest % images->dims[axis];
        rest /= images->dims[axis];
        int kernel_axis = axis - (image_orthogonal - kernel_orthogonal);
        if (kernel_axis >= 0) {
            int64_t extent = kernels->dims[kernel_axis];
            kernel += (extent == 1 ? 0 : index) * stride;
            stride *= extent;
        }
    }
    int64_t ky = kernels->dims[kernels->ndim - 2];
    int64_t kx = kernels->dims[kernels->ndim - 1];
    return kernel_values + kernel * ky * kx;
}

/* The sums of spart/psf.h, directly: P in (adjoint = 0) or P^T in. */
static inline void direct_psf(const spart_shape *kernels, const double *kernel_values,
                              const spart_shape *images, const double *in, double *out, int adjoint)
{
    int64_t ny = images->dims[images->ndim - 2];
    int64_t nx = images->dims[images->ndim - 1];
    int64_t ky = kernels->dims[kernels->ndim - 2];
    int64_t kx = kernels->dims[kernels->ndim - 1];
    int64_t num_images = spart_shape_size(images) / (ny * nx);
    for (int64_t image = 0; image < num_images; image++) {
        const double *k = kernel_for_image(kernels, kernel_values, images, image);
        const double *a = in + image * ny * nx;
        double *b = out + image * ny * nx;
        for (int64_t i = 0; i < ny * nx; i++) {
            b[i] = 0.0;
        }
        for (int64_t yo = 0; yo < ny; yo++) {
            for (int64_t xo = 0; xo < nx; xo++) {
                for (int64_t yi = 0; yi < ny; yi++) {
                    for (int64_t xi = 0; xi < nx; xi++) {
                        int64_t jy = yo - yi + ky / 2;
                        int64_t jx = xo - xi + kx / 2;
                        if (jy < 0 || jy >= ky || jx < 0 || jx >= kx) {
                            continue;
                        }
                        if (adjoint) {
                            b[yi * nx + xi] += k[jy * kx + jx] * a[yo * nx + xo];
                        } else {
                            b[yo * nx + xo] += k[jy * kx + jx] * a[yi * nx + xi];
                        }
                    }
                }
            }
        }
    }
}

static inline double dot(const double *a, const double *b, int64_t n)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += a[i] * b[i];
    }
    return sum;
}

/* `status` is `expected`, and the context's sentence says `words`. */
static inline void expect_error(spart_context *context, spart_status status, spart_status expected,
                                const char *words)
{
    assert_int_equal(status, expected);
    if (strstr(spart_context_error(context), words) == NULL) {
        fail_msg("the sentence \"%s\" does not say \"%s\"", spart_context_error(context), words);
    }
}

#endif /* SPART_TEST_PSF_UTIL_H */
