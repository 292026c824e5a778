/*
 * tests/unit/test_cuda_psf.c: the PSF operator on a CUDA device (cuFFT,
 * spart_psf_to_device in spart/psf.h) against direct sums in float64 and
 * the host's FFTW operator, its adjoint, its determinism (run after run,
 * in place, recorded in a CUDA graph), pixels no light reaches, bad
 * arguments; and MART with the PSF composed on the device against MART
 * with it composed on the host, on a small instrument.
 *
 * Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_cuda_util.h"
#include "test_small_instrument.h"
#include "test_psf_util.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* Fill n device doubles with NaN bit patterns, so that a value the
 * operator does not write shows. */
static void poison(double *device, int64_t n)
{
    check_cuda(cudaMemset(device, 0xff, (size_t)n * sizeof(double)), "cudaMemset");
}

static void host_copy(spart_context *context, double *host, const double *device, int64_t n)
{
    check_cuda(cudaDeviceSynchronize(), "the device work");
    assert_int_equal(spart_device_copy_to_host(context, host, device, (size_t)n * sizeof(double)),
                     SPART_OK);
}

/* The scale of an output's rounding error: max |in| times the largest
 * sum of |K| over the kernels. */
static double error_scale(const double *in, int64_t n, const double *kernel_values,
                          int64_t num_kernels, int64_t kernel_size)
{
    double largest = 0.0, l1_largest = 0.0;
    for (int64_t i = 0; i < n; i++) {
        largest = fabs(in[i]) > largest ? fabs(in[i]) : largest;
    }
    for (int64_t k = 0; k < num_kernels; k++) {
        double l1 = 0.0;
        for (int64_t i = 0; i < kernel_size; i++) {
            l1 += fabs(kernel_values[k * kernel_size + i]);
        }
        l1_largest = l1 > l1_largest ? l1 : l1_largest;
    }
    return largest * l1_largest;
}

static double max_difference(const double *a, const double *b, int64_t n)
{
    double largest = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        largest = d > largest || isnan(d) ? d : largest;
    }
    return largest;
}

/* A host PSF of `kernels` for `images` and its device copy. */
static void make_psfs(spart_context *context, const spart_shape *kernels,
                      const double *kernel_values, const spart_shape *images, spart_psf **host,
                      spart_psf **device)
{
    spart_array kernel_array = {kernel_values, *kernels};
    assert_int_equal(spart_psf_create(context, &kernel_array, images, host), SPART_OK);
    spart_status status = spart_psf_to_device(context, *host, device);
    if (status != SPART_OK) {
        fail_msg("spart_psf_to_device: %s", spart_context_error(context));
    }
}

/* output = P in or P^T in on the device, waited for. */
static void device_apply(spart_context *context, const spart_psf *psf, const double *in,
                         double *out, int64_t n, int adjoint)
{
    spart_array x = {in, spart_psf_shape_image(psf)};
    spart_status status = adjoint ? spart_psf_apply_adjoint(context, psf, &x, out, n)
                                  : spart_psf_apply(context, psf, &x, out, n);
    if (status != SPART_OK) {
        fail_msg("device apply: %s", spart_context_error(context));
    }
    check_cuda(cudaDeviceSynchronize(), "the device apply");
}

/* ---- agreement with direct sums and the host ----------------------------------------------- */

/* Device P and P^T within 1e-12 of max|in| |K|_1 of the direct sums and
 * of the host's FFTW operator, every output written. */
static void expect_agreement(int image_ndim, const int64_t *image_dims, int kernel_ndim,
                             const int64_t *kernel_dims, uint64_t seed)
{
    spart_context *context = context_or_fail();
    spart_shape images = shape_of(image_ndim, image_dims);
    spart_shape kernels = shape_of(kernel_ndim, kernel_dims);
    int64_t n = spart_shape_size(&images);
    int64_t kernel_size = kernel_dims[kernel_ndim - 2] * kernel_dims[kernel_ndim - 1];
    int64_t num_kernels = spart_shape_size(&kernels) / kernel_size;
    double *kernel_values = random_values(spart_shape_size(&kernels), seed, -0.25);
    double *in = random_values(n, seed + 1, -0.5);
    double *direct = malloc((size_t)n * sizeof(double));
    double *host = malloc((size_t)n * sizeof(double));
    double *device = malloc((size_t)n * sizeof(double));
    spart_psf *host_psf = NULL, *device_psf = NULL;
    make_psfs(context, &kernels, kernel_values, &images, &host_psf, &device_psf);
    double *d_in = doubles_to_device(context, in, n);
    double *d_out = doubles_to_device(context, NULL, n);
    double scale = error_scale(in, n, kernel_values, num_kernels, kernel_size);
    spart_array x = {in, images};
    for (int adjoint = 0; adjoint <= 1; adjoint++) {
        direct_psf(&kernels, kernel_values, &images, in, direct, adjoint);
        spart_status status = adjoint ? spart_psf_apply_adjoint(context, host_psf, &x, host, n)
                                      : spart_psf_apply(context, host_psf, &x, host, n);
        assert_int_equal(status, SPART_OK);
        poison(d_out, n);
        device_apply(context, device_psf, d_in, d_out, n, adjoint);
        host_copy(context, device, d_out, n);
        double from_direct = max_difference(device, direct, n) / scale;
        double from_host = max_difference(device, host, n) / scale;
        if (!(from_direct < 1e-12) || !(from_host < 1e-12)) {
            fail_msg("%s: device against direct sums %g, against the host %g (of max|in| |K|_1)",
                     adjoint ? "adjoint" : "forward", from_direct, from_host);
        }
    }
    spart_device_free(context, d_in);
    spart_device_free(context, d_out);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    free(kernel_values);
    free(in);
    free(direct);
    free(host);
    free(device);
    spart_context_free(context);
}

static void a_shared_odd_kernel_matches_direct_sums_and_the_host(void **state)
{
    (void)state;
    const int64_t images[] = {2, 7, 9};
    const int64_t kernels[] = {3, 5};
    expect_agreement(3, images, 2, kernels, 11);
}

static void even_kernels_match_direct_sums_and_the_host(void **state)
{
    (void)state;
    const int64_t images[] = {5, 6};
    const int64_t kernels[] = {4, 2};
    expect_agreement(2, images, 2, kernels, 21);
}

static void kernels_larger_than_the_image_match_direct_sums_and_the_host(void **state)
{
    (void)state;
    const int64_t images[] = {2, 3, 4};
    const int64_t kernels[] = {9, 11};
    expect_agreement(3, images, 2, kernels, 31);
}

static void per_image_kernels_match_direct_sums_and_the_host(void **state)
{
    (void)state;
    const int64_t images[] = {3, 2, 6, 5};
    const int64_t per_image[] = {3, 2, 5, 3};
    expect_agreement(4, images, 4, per_image, 41);
    const int64_t per_channel[] = {3, 1, 7, 21}; /* wider than the image */
    const int64_t larger[] = {3, 2, 33, 20};
    expect_agreement(4, larger, 4, per_channel, 42);
}

/* Axes of extent 1 (FFTs of length 1 are padded to 2 for cuFFT). */
static void one_row_one_column_and_one_pixel_match_direct_sums_and_the_host(void **state)
{
    (void)state;
    const int64_t pixel[] = {1, 1};
    expect_agreement(2, pixel, 2, pixel, 51);
    const int64_t column[] = {2, 5, 1};
    const int64_t column_kernel[] = {3, 1};
    expect_agreement(3, column, 2, column_kernel, 52);
    const int64_t row[] = {1, 6};
    const int64_t row_kernel[] = {1, 3};
    expect_agreement(2, row, 2, row_kernel, 53);
}

/* ---- the adjoint -------------------------------------------------------------------------- */

static void the_device_adjoint_passes_the_dot_product_test(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_shape images = {3, {3, 16, 12}};
    spart_shape kernels = {3, {3, 5, 4}};
    int64_t n = spart_shape_size(&images);
    double *kernel_values = random_values(spart_shape_size(&kernels), 61, 0.0);
    double *a = random_values(n, 62, -0.5);
    double *b = random_values(n, 63, -0.5);
    double *pa = malloc((size_t)n * sizeof(double));
    double *ptb = malloc((size_t)n * sizeof(double));
    spart_psf *host_psf = NULL, *device_psf = NULL;
    make_psfs(context, &kernels, kernel_values, &images, &host_psf, &device_psf);
    double *d_a = doubles_to_device(context, a, n);
    double *d_b = doubles_to_device(context, b, n);
    double *d_out = doubles_to_device(context, NULL, n);
    device_apply(context, device_psf, d_a, d_out, n, 0);
    host_copy(context, pa, d_out, n);
    device_apply(context, device_psf, d_b, d_out, n, 1);
    host_copy(context, ptb, d_out, n);
    double left = dot(pa, b, n);
    double right = dot(a, ptb, n);
    double scale = sqrt(dot(pa, pa, n) * dot(b, b, n));
    if (!(fabs(left - right) <= 1e-12 * scale)) {
        fail_msg("<P a, b> = %.17g, <a, P^T b> = %.17g", left, right);
    }
    spart_device_free(context, d_a);
    spart_device_free(context, d_b);
    spart_device_free(context, d_out);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    free(kernel_values);
    free(a);
    free(b);
    free(pa);
    free(ptb);
    spart_context_free(context);
}

/* ---- determinism ------------------------------------------------------------------------- */

static void device_results_repeat_bit_for_bit_and_in_place(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_shape images = {3, {5, 40, 33}};
    spart_shape kernels = {3, {5, 9, 8}};
    int64_t n = spart_shape_size(&images);
    double *kernel_values = random_values(spart_shape_size(&kernels), 71, 0.0);
    double *in = random_values(n, 72, 0.0);
    double *first = malloc((size_t)n * sizeof(double));
    double *other = malloc((size_t)n * sizeof(double));
    spart_psf *host_psf = NULL, *device_psf = NULL;
    make_psfs(context, &kernels, kernel_values, &images, &host_psf, &device_psf);
    double *d_in = doubles_to_device(context, in, n);
    double *d_out = doubles_to_device(context, NULL, n);
    for (int adjoint = 0; adjoint <= 1; adjoint++) {
        poison(d_out, n);
        device_apply(context, device_psf, d_in, d_out, n, adjoint);
        host_copy(context, first, d_out, n);
        for (int repeat = 0; repeat < 3; repeat++) {
            poison(d_out, n);
            device_apply(context, device_psf, d_in, d_out, n, !adjoint); /* other work between */
            device_apply(context, device_psf, d_in, d_out, n, adjoint);
            host_copy(context, other, d_out, n);
            assert_memory_equal(other, first, (size_t)n * sizeof(double));
        }
        /* In place: output = input. */
        check_cuda(cudaMemcpy(d_out, d_in, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice),
                   "cudaMemcpy");
        device_apply(context, device_psf, d_out, d_out, n, adjoint);
        host_copy(context, other, d_out, n);
        assert_memory_equal(other, first, (size_t)n * sizeof(double));
    }
    spart_device_free(context, d_in);
    spart_device_free(context, d_out);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    free(kernel_values);
    free(in);
    free(first);
    free(other);
    spart_context_free(context);
}

/* What a recorded apply needs. */
typedef struct recorded_applies {
    const spart_psf *psf;
    const double *in;
    double *forward;
    double *adjoint;
    int64_t n;
} recorded_applies;

static spart_status record_applies(void *user, spart_context *context)
{
    recorded_applies *r = user;
    spart_array x = {r->in, spart_psf_shape_image(r->psf)};
    spart_status status = spart_psf_apply(context, r->psf, &x, r->forward, r->n);
    if (status == SPART_OK) {
        status = spart_psf_apply_adjoint(context, r->psf, &x, r->adjoint, r->n);
    }
    return status;
}

static void applies_recorded_in_a_cuda_graph_give_the_same_bits(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_shape images = {3, {4, 29, 31}};
    spart_shape kernels = {3, {4, 7, 7}};
    int64_t n = spart_shape_size(&images);
    double *kernel_values = random_values(spart_shape_size(&kernels), 81, 0.0);
    double *in = random_values(n, 82, 0.0);
    double *expected = malloc((size_t)n * sizeof(double));
    double *got = malloc((size_t)n * sizeof(double));
    spart_psf *host_psf = NULL, *device_psf = NULL;
    make_psfs(context, &kernels, kernel_values, &images, &host_psf, &device_psf);
    double *d_in = doubles_to_device(context, in, n);
    double *d_forward = doubles_to_device(context, NULL, n);
    double *d_adjoint = doubles_to_device(context, NULL, n);
    recorded_applies applies = {device_psf, d_in, d_forward, d_adjoint, n};
    spart_device_graph *graph = NULL;
    spart_status status = spart_device_graph_record(context, record_applies, &applies, &graph);
    if (status != SPART_OK) {
        fail_msg("recording: %s", spart_context_error(context));
    }
    for (int launch = 0; launch < 2; launch++) {
        poison(d_forward, n);
        poison(d_adjoint, n);
        assert_int_equal(spart_device_graph_launch(context, graph), SPART_OK);
        for (int adjoint = 0; adjoint <= 1; adjoint++) {
            host_copy(context, got, adjoint ? d_adjoint : d_forward, n);
            double *d_direct = doubles_to_device(context, NULL, n);
            device_apply(context, device_psf, d_in, d_direct, n, adjoint);
            host_copy(context, expected, d_direct, n);
            spart_device_free(context, d_direct);
            assert_memory_equal(got, expected, (size_t)n * sizeof(double));
        }
    }
    spart_device_graph_free(graph);
    spart_device_free(context, d_in);
    spart_device_free(context, d_forward);
    spart_device_free(context, d_adjoint);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    free(kernel_values);
    free(in);
    free(expected);
    free(got);
    spart_context_free(context);
}

/* Pixels no light reaches stay exactly 0 on the device too (MART leaves
 * pixels whose model is 0 out of its merit), both ways. */
static void pixels_no_light_reaches_are_exactly_zero_on_the_device(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double kernel[9];
    for (int k = 0; k < 9; k++) {
        kernel[k] = 0.05 + 0.01 * k;
    }
    spart_shape kernels = {2, {3, 3}};
    spart_shape images = {2, {40, 30}};
    spart_psf *host_psf = NULL, *device_psf = NULL;
    make_psfs(context, &kernels, kernel, &images, &host_psf, &device_psf);
    static double in[40 * 30], out[40 * 30];
    memset(in, 0, sizeof in);
    in[10 * 30 + 12] = 1234.5; /* one bright pixel */
    double *d_in = doubles_to_device(context, in, 40 * 30);
    double *d_out = doubles_to_device(context, NULL, 40 * 30);
    for (int adjoint = 0; adjoint < 2; adjoint++) {
        poison(d_out, 40 * 30);
        device_apply(context, device_psf, d_in, d_out, 40 * 30, adjoint);
        host_copy(context, out, d_out, 40 * 30);
        for (int y = 0; y < 40; y++) {
            for (int i = 0; i < 30; i++) {
                int inside = abs(y - 10) <= 1 && abs(i - 12) <= 1;
                if (!inside) {
                    assert_true(out[y * 30 + i] == 0.0);
                } else {
                    assert_true(out[y * 30 + i] > 0.0);
                }
            }
        }
    }
    spart_device_free(context, d_in);
    spart_device_free(context, d_out);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    spart_context_free(context);
}

/* ---- the copy, and bad arguments ----------------------------------------------------------- */

static void a_copy_of_a_device_psf_applies_the_same_and_says_where_it_is(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_shape images = {3, {2, 12, 10}};
    spart_shape kernels = {2, {5, 3}};
    int64_t n = spart_shape_size(&images);
    double *kernel_values = random_values(15, 91, 0.0);
    double *in = random_values(n, 92, 0.0);
    double *a = malloc((size_t)n * sizeof(double));
    double *b = malloc((size_t)n * sizeof(double));
    spart_psf *host_psf = NULL, *device_psf = NULL, *copy = NULL;
    make_psfs(context, &kernels, kernel_values, &images, &host_psf, &device_psf);
    assert_int_equal(spart_psf_to_device(context, device_psf, &copy), SPART_OK);
    assert_int_equal(spart_psf_cuda_device(host_psf), -1);
    assert_int_equal(spart_psf_cuda_device(NULL), -1);
    assert_int_equal(spart_psf_cuda_device(device_psf), 0);
    assert_int_equal(spart_psf_cuda_device(copy), 0);
    spart_shape shape = spart_psf_shape_image(copy);
    assert_true(spart_shape_size(&shape) == n);
    shape = spart_psf_shape_kernels(copy);
    assert_int_equal(shape.ndim, 2);
    double *d_in = doubles_to_device(context, in, n);
    double *d_out = doubles_to_device(context, NULL, n);
    device_apply(context, device_psf, d_in, d_out, n, 0);
    host_copy(context, a, d_out, n);
    poison(d_out, n);
    device_apply(context, copy, d_in, d_out, n, 0);
    host_copy(context, b, d_out, n);
    assert_memory_equal(a, b, (size_t)n * sizeof(double));
    spart_device_free(context, d_in);
    spart_device_free(context, d_out);
    spart_psf_free(copy);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    free(kernel_values);
    free(in);
    free(a);
    free(b);
    spart_context_free(context);
}

static void a_device_psf_refuses_host_memory_and_wrong_shapes(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_shape images = {2, {6, 5}};
    spart_shape kernels = {2, {3, 3}};
    double kernel_values[9] = {0.0, 0.1, 0.0, 0.1, 0.6, 0.1, 0.0, 0.1, 0.0};
    spart_psf *host_psf = NULL, *device_psf = NULL;
    make_psfs(context, &kernels, kernel_values, &images, &host_psf, &device_psf);
    double host_in[30] = {0.0}, host_out[30];
    double *d_in = doubles_to_device(context, host_in, 30);
    double *d_out = doubles_to_device(context, NULL, 30);
    spart_array on_host = {host_in, images};
    spart_array on_device = {d_in, images};
    assert_int_equal(spart_psf_apply(context, device_psf, &on_host, d_out, 30),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "input->data is host memory"));
    assert_int_equal(spart_psf_apply_adjoint(context, device_psf, &on_device, host_out, 30),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "output is host memory"));
    spart_array transposed = {d_in, {2, {5, 6}}};
    assert_int_equal(spart_psf_apply(context, device_psf, &transposed, d_out, 30),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_int_equal(spart_psf_apply(context, device_psf, &on_device, d_out, 29),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_psf *none = (spart_psf *)&none;
    assert_int_equal(spart_psf_to_device(context, NULL, &none), SPART_ERROR_NULL_POINTER);
    assert_null(none);
    spart_device_free(context, d_in);
    spart_device_free(context, d_out);
    spart_psf_free(host_psf);
    spart_psf_free(device_psf);
    spart_context_free(context);
}

/* ---- MART with the PSF on the device ------------------------------------------------------- */

/* A smaller ctis tutorial: 4 channels, 20 bins, a 32x32 scene over +-10",
 * a 64x48 sensor, Gaussian blobs plus 1 %, one 7x7 elliptical Gaussian PSF
 * per channel composed by FFT. */
typedef struct problem {
    small_instrument instrument;
    double psf[4 * 7 * 7];
} problem;

static void elliptical_gaussians(double *psf)
{
    const double major[4] = {1.5, 2.0, 1.2, 1.8};
    const double minor[4] = {0.8, 0.6, 0.9, 0.5};
    const double angle[4] = {0.0, 30.0, 75.0, 135.0};
    for (int c = 0; c < 4; c++) {
        double a = angle[c] * 3.14159265358979323846 / 180.0;
        double total = 0.0;
        for (int k = 0; k < 49; k++) {
            double x = k / 7 - 3.0, y = k % 7 - 3.0;
            double u = cos(a) * x + sin(a) * y;
            double v = -sin(a) * x + cos(a) * y;
            psf[c * 49 + k] =
                exp(-0.5 * (u * u / (major[c] * major[c]) + v * v / (minor[c] * minor[c])));
            total += psf[c * 49 + k];
        }
        for (int k = 0; k < 49; k++) {
            psf[c * 49 + k] /= total;
        }
    }
}

static void make_problem(spart_context *context, problem *p)
{
    make_small_instrument(context, &p->instrument);
    elliptical_gaussians(p->psf);
    spart_instrument_params *q = &p->instrument.params;
    q->psf = p->psf;
    q->psf_size[0] = 7;
    q->psf_size[1] = 7;
    q->psf_mode = SPART_PSF_FFT;
}

/* The instrument's Regridders and PSF on the device, with the scratch the
 * backward operator needs; freed by free_device_problem. */
typedef struct device_problem {
    spart_regridder *forward, *backward;
    spart_psf *psf;
    spart_mart_regridder_psf problem;
    void *scratch;
} device_problem;

static void make_device_problem(spart_context *context, const spart_instrument *instrument,
                                device_problem *d)
{
    memset(d, 0, sizeof *d);
    assert_int_equal(
        spart_regridder_to_device(context, spart_instrument_forward(instrument), &d->forward),
        SPART_OK);
    assert_int_equal(
        spart_regridder_to_device(context, spart_instrument_backward(instrument), &d->backward),
        SPART_OK);
    assert_int_equal(spart_psf_to_device(context, spart_instrument_psf(instrument), &d->psf),
                     SPART_OK);
    int64_t pixels = spart_regridder_num_rows(d->forward);
    assert_int_equal(spart_device_malloc(context, (size_t)pixels * sizeof(double), &d->scratch),
                     SPART_OK);
    spart_mart_regridder_psf composed = {d->forward, d->psf, d->backward, 4, 1.0, 1.5, d->scratch};
    d->problem = composed;
}

static void free_device_problem(spart_context *context, device_problem *d)
{
    spart_device_free(context, d->scratch);
    spart_psf_free(d->psf);
    spart_regridder_free(d->forward);
    spart_regridder_free(d->backward);
}

typedef struct run {
    int64_t iterations;
    int success;
    double *chi2, *solution;
} run;

static void keep_run(const spart_mart_result *result, int64_t scene_size, run *out)
{
    out->iterations = spart_mart_result_num_iterations(result);
    out->success = spart_mart_result_success(result);
    size_t merits = (size_t)(out->iterations * 4) * sizeof(double);
    out->chi2 = malloc(merits);
    out->solution = malloc((size_t)scene_size * sizeof(double));
    memcpy(out->chi2, spart_mart_result_mean_chi_squared(result), merits);
    memcpy(out->solution, spart_mart_result_solution(result), (size_t)scene_size * sizeof(double));
}

static void solve(spart_context *context, const spart_mart_operators *operators,
                  const double *observed, int64_t scene_size, run *out)
{
    spart_mart_options options;
    spart_mart_options_init(&options);
    spart_mart_result *result = NULL;
    spart_status status = spart_mart_solve(context, operators, observed, &options, &result);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    keep_run(result, scene_size, out);
    spart_mart_result_free(result);
}

static double largest_relative_difference(const double *a, const double *b, int64_t n)
{
    double largest = 0.0, scale = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        largest = d > largest || isnan(d) ? d : largest;
        scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    }
    return largest / scale;
}

static void device_mart_with_an_fft_psf_agrees_with_the_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    problem p;
    make_problem(context, &p);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &p.instrument.params, &instrument), SPART_OK);
    assert_non_null(spart_instrument_psf(instrument));
    int64_t pixels = 4 * spart_instrument_image_size(instrument);
    double *observed = malloc((size_t)pixels * sizeof(double));
    assert_int_equal(
        spart_instrument_observe(context, instrument, p.instrument.scene, 7, observed, NULL),
        SPART_OK);
    spart_mart_regridder_pair pair;
    spart_mart_operators host_operators, device_operators;
    assert_int_equal(spart_instrument_mart_operators(context, instrument, &pair, &host_operators),
                     SPART_OK);
    run host, device, again;
    solve(context, &host_operators, observed, p.instrument.scene_size, &host);

    device_problem d;
    make_device_problem(context, instrument, &d);
    assert_int_equal(
        spart_mart_operators_from_regridders_psf(context, &d.problem, &device_operators), SPART_OK);
    assert_int_equal(device_operators.on_device, 1);
    assert_int_equal(device_operators.capturable, 1);
    double *d_observed = doubles_to_device(context, observed, pixels);
    solve(context, &device_operators, d_observed, p.instrument.scene_size, &device);
    solve(context, &device_operators, d_observed, p.instrument.scene_size, &again);

    assert_true(host.iterations > 3);
    assert_int_equal(device.iterations, host.iterations);
    assert_int_equal(device.success, host.success);
    double solution =
        largest_relative_difference(device.solution, host.solution, p.instrument.scene_size);
    double chi2 = largest_relative_difference(device.chi2, host.chi2, host.iterations * 4);
    printf("device MART with the FFT PSF against the host's: %lld iterations each; solution "
           "max|difference| / max|host| = %.3g, merits %.3g\n",
           (long long)host.iterations, solution, chi2);
    if (!(solution < 1e-10) || !(chi2 < 1e-10)) {
        fail_msg("the device solution differs from the host's by %g, the merits by %g (relative)",
                 solution, chi2);
    }
    /* Run after run on the device: the same bits. */
    assert_int_equal(again.iterations, device.iterations);
    assert_memory_equal(again.solution, device.solution,
                        (size_t)p.instrument.scene_size * sizeof(double));
    assert_memory_equal(again.chi2, device.chi2, (size_t)(device.iterations * 4) * sizeof(double));

    run *runs[] = {&host, &device, &again};
    for (int k = 0; k < 3; k++) {
        free(runs[k]->chi2);
        free(runs[k]->solution);
    }
    spart_device_free(context, d_observed);
    free_device_problem(context, &d);
    free(observed);
    free(p.instrument.scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static void mart_operators_refuse_a_psf_and_regridders_in_different_places(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    problem p;
    make_problem(context, &p);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &p.instrument.params, &instrument), SPART_OK);
    device_problem d;
    make_device_problem(context, instrument, &d);
    spart_mart_operators operators;
    /* host PSF, device Regridders */
    spart_mart_regridder_psf mixed = d.problem;
    mixed.psf = spart_instrument_psf(instrument);
    assert_int_equal(spart_mart_operators_from_regridders_psf(context, &mixed, &operators),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "same place"));
    /* device PSF, host Regridders */
    mixed = d.problem;
    mixed.forward = spart_instrument_forward(instrument);
    mixed.backward = spart_instrument_backward(instrument);
    assert_int_equal(spart_mart_operators_from_regridders_psf(context, &mixed, &operators),
                     SPART_ERROR_INVALID_ARGUMENT);
    /* no scratch on the device */
    mixed = d.problem;
    mixed.device_scratch = NULL;
    assert_int_equal(spart_mart_operators_from_regridders_psf(context, &mixed, &operators),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(context), "device_scratch"));
    free_device_problem(context, &d);
    free(p.instrument.scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_shared_odd_kernel_matches_direct_sums_and_the_host),
        cmocka_unit_test(even_kernels_match_direct_sums_and_the_host),
        cmocka_unit_test(kernels_larger_than_the_image_match_direct_sums_and_the_host),
        cmocka_unit_test(per_image_kernels_match_direct_sums_and_the_host),
        cmocka_unit_test(one_row_one_column_and_one_pixel_match_direct_sums_and_the_host),
        cmocka_unit_test(the_device_adjoint_passes_the_dot_product_test),
        cmocka_unit_test(device_results_repeat_bit_for_bit_and_in_place),
        cmocka_unit_test(applies_recorded_in_a_cuda_graph_give_the_same_bits),
        cmocka_unit_test(pixels_no_light_reaches_are_exactly_zero_on_the_device),
        cmocka_unit_test(a_copy_of_a_device_psf_applies_the_same_and_says_where_it_is),
        cmocka_unit_test(a_device_psf_refuses_host_memory_and_wrong_shapes),
        cmocka_unit_test(device_mart_with_an_fft_psf_agrees_with_the_host),
        cmocka_unit_test(mart_operators_refuse_a_psf_and_regridders_in_different_places),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
