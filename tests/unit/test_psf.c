/*
 * tests/unit/test_psf.c: the PSF convolution operator (spart/psf.h)
 * against direct sums in float64, its adjoint, its determinism, its
 * errors, and the MART operators that compose it with Regridders against a
 * Regridder whose weights hold the PSF folded in by brute force.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart/mart.h"
#include "spart/psf.h"
#include "spart/regridder.h"
#include "spart/weights.h"
#include "test_util.h"
#include "test_psf_util.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* max |a - b| / max |b|. */
static double relative_error(const double *a, const double *b, int64_t n)
{
    double difference = 0.0;
    double largest = 0.0;
    for (int64_t i = 0; i < n; i++) {
        difference = fmax(difference, fabs(a[i] - b[i]));
        largest = fmax(largest, fabs(b[i]));
    }
    return difference / largest;
}

/* Make the PSF of random kernels (values in [-0.25, 0.75): negative values
 * are allowed), apply it and its adjoint to random images, and compare
 * with the direct sums. */
static void expect_direct_agreement(int image_ndim, const int64_t *image_dims, int kernel_ndim,
                                    const int64_t *kernel_dims, uint64_t seed)
{
    spart_context *context = context_or_fail();
    spart_shape images = shape_of(image_ndim, image_dims);
    spart_shape kernels = shape_of(kernel_ndim, kernel_dims);
    int64_t n = spart_shape_size(&images);
    double *kernel_values = random_values(spart_shape_size(&kernels), seed, -0.25);
    double *in = random_values(n, seed + 1, 0.0);
    double *fft = malloc((size_t)n * sizeof(double));
    double *direct = malloc((size_t)n * sizeof(double));
    spart_array kernel_array = {kernel_values, kernels};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);
    spart_array x = {in, images};
    for (int adjoint = 0; adjoint <= 1; adjoint++) {
        spart_status status = adjoint ? spart_psf_apply_adjoint(context, psf, &x, fft, n)
                                      : spart_psf_apply(context, psf, &x, fft, n);
        assert_int_equal(status, SPART_OK);
        direct_psf(&kernels, kernel_values, &images, in, direct, adjoint);
        double error = relative_error(fft, direct, n);
        if (!(error < 1e-12)) {
            fail_msg("%s: relative error %g", adjoint ? "adjoint" : "forward", error);
        }
    }
    spart_psf_free(psf);
    free(kernel_values);
    free(in);
    free(fft);
    free(direct);
    spart_context_free(context);
}

/* ---- agreement with direct sums --------------------------------------------------------- */

static void odd_kernel_shared_by_every_image_matches_direct_sums(void **state)
{
    (void)state;
    const int64_t images[] = {2, 7, 9};
    const int64_t kernels[] = {3, 5};
    expect_direct_agreement(3, images, 2, kernels, 11);
}

static void even_kernels_match_direct_sums_with_centre_at_half_size(void **state)
{
    (void)state;
    const int64_t images[] = {5, 6};
    const int64_t kernels[] = {4, 2};
    expect_direct_agreement(2, images, 2, kernels, 21);
    const int64_t mixed[] = {6, 3};
    expect_direct_agreement(2, images, 2, mixed, 22);
}

static void even_kernel_keeps_its_half_size_sample_on_the_pixel(void **state)
{
    (void)state;
    /* [a, b] along x: out[i] = b in[i] + a in[i + 1] (spart/psf.h). */
    spart_context *context = context_or_fail();
    double kernel[] = {2.0, 3.0};
    spart_array kernel_array = {kernel, {2, {1, 2}}};
    spart_shape images = {2, {1, 4}};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);
    double in[] = {1.0, 10.0, 100.0, 1000.0};
    double out[4];
    spart_array x = {in, images};
    assert_int_equal(spart_psf_apply(context, psf, &x, out, 4), SPART_OK);
    const double expected[] = {3.0 + 20.0, 30.0 + 200.0, 300.0 + 2000.0, 3000.0};
    for (int i = 0; i < 4; i++) {
        assert_true(fabs(out[i] - expected[i]) <= 1e-12 * 3000.0);
    }
    spart_psf_free(psf);
    spart_context_free(context);
}

/* Pixels no light reaches stay exactly 0 (MART leaves pixels whose model is
 * 0 out of its merit), both ways, though the FFT rounds them to ~1e-17. */
static void pixels_no_light_reaches_are_exactly_zero(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double kernel[9];
    for (int k = 0; k < 9; k++) {
        kernel[k] = 0.05 + 0.01 * k;
    }
    spart_array kernel_array = {kernel, {2, {3, 3}}};
    spart_shape images = {2, {40, 30}};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);
    static double in[40 * 30], out[40 * 30];
    memset(in, 0, sizeof in);
    in[10 * 30 + 12] = 1234.5; /* one bright pixel */
    spart_array x = {in, images};
    for (int adjoint = 0; adjoint < 2; adjoint++) {
        spart_status status = adjoint ? spart_psf_apply_adjoint(context, psf, &x, out, 40 * 30)
                                      : spart_psf_apply(context, psf, &x, out, 40 * 30);
        assert_int_equal(status, SPART_OK);
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
    spart_psf_free(psf);
    spart_context_free(context);
}

static void kernels_larger_than_the_image_match_direct_sums(void **state)
{
    (void)state;
    const int64_t images[] = {2, 3, 4};
    const int64_t kernels[] = {9, 11};
    expect_direct_agreement(3, images, 2, kernels, 31);
    const int64_t even[] = {8, 10};
    expect_direct_agreement(3, images, 2, even, 32);
}

static void per_element_kernels_match_direct_sums(void **state)
{
    (void)state;
    const int64_t images[] = {3, 2, 6, 5};
    const int64_t per_image[] = {3, 2, 5, 3};
    expect_direct_agreement(4, images, 4, per_image, 41);
    const int64_t per_first_axis[] = {3, 1, 3, 4};
    expect_direct_agreement(4, images, 4, per_first_axis, 42);
    const int64_t per_last_axis[] = {2, 5, 5};
    expect_direct_agreement(4, images, 3, per_last_axis, 43);
}

/* ---- the adjoint -------------------------------------------------------------------------- */

static void adjoint_passes_the_dot_product_test(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    const int64_t shapes[][5] = {
        /* images (3 axes), kernels (2 axes) */
        {3, 16, 12, 5, 5},
        {2, 9, 14, 4, 7},
        {1, 5, 4, 12, 9},
    };
    for (int c = 0; c < 3; c++) {
        spart_shape images = shape_of(3, shapes[c]);
        spart_shape kernels = shape_of(2, shapes[c] + 3);
        int64_t n = spart_shape_size(&images);
        double *kernel_values = random_values(spart_shape_size(&kernels), 50 + (uint64_t)c, 0.0);
        double *a = random_values(n, 60 + (uint64_t)c, -0.5);
        double *b = random_values(n, 70 + (uint64_t)c, -0.5);
        double *pa = malloc((size_t)n * sizeof(double));
        double *ptb = malloc((size_t)n * sizeof(double));
        spart_array kernel_array = {kernel_values, kernels};
        spart_psf *psf = NULL;
        assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);
        spart_array xa = {a, images};
        spart_array xb = {b, images};
        assert_int_equal(spart_psf_apply(context, psf, &xa, pa, n), SPART_OK);
        assert_int_equal(spart_psf_apply_adjoint(context, psf, &xb, ptb, n), SPART_OK);
        double left = dot(pa, b, n);
        double right = dot(a, ptb, n);
        double scale = sqrt(dot(pa, pa, n) * dot(b, b, n));
        if (!(fabs(left - right) <= 1e-12 * scale)) {
            fail_msg("case %d: <P a, b> = %.17g, <a, P^T b> = %.17g", c, left, right);
        }
        spart_psf_free(psf);
        free(kernel_values);
        free(a);
        free(b);
        free(pa);
        free(ptb);
    }
    spart_context_free(context);
}

/* ---- determinism -------------------------------------------------------------------------- */

static void results_are_the_same_bits_for_any_thread_count_and_in_place(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    spart_shape images = {3, {5, 20, 17}};
    spart_shape kernels = {3, {5, 7, 6}};
    int64_t n = spart_shape_size(&images);
    double *kernel_values = random_values(spart_shape_size(&kernels), 81, 0.0);
    double *in = random_values(n, 82, 0.0);
    double *reference = malloc((size_t)n * sizeof(double));
    double *other = malloc((size_t)n * sizeof(double));
    spart_array kernel_array = {kernel_values, kernels};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);
    spart_array x = {in, images};
    for (int adjoint = 0; adjoint <= 1; adjoint++) {
        assert_int_equal(spart_context_set_threads(context, 1), SPART_OK);
        spart_status status = adjoint ? spart_psf_apply_adjoint(context, psf, &x, reference, n)
                                      : spart_psf_apply(context, psf, &x, reference, n);
        assert_int_equal(status, SPART_OK);
        for (int threads = 2; threads <= 4; threads++) {
            assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
            status = adjoint ? spart_psf_apply_adjoint(context, psf, &x, other, n)
                             : spart_psf_apply(context, psf, &x, other, n);
            assert_int_equal(status, SPART_OK);
            assert_memory_equal(other, reference, (size_t)n * sizeof(double));
        }
        /* In place: output = input. */
        memcpy(other, in, (size_t)n * sizeof(double));
        spart_array y = {other, images};
        status = adjoint ? spart_psf_apply_adjoint(context, psf, &y, other, n)
                         : spart_psf_apply(context, psf, &y, other, n);
        assert_int_equal(status, SPART_OK);
        assert_memory_equal(other, reference, (size_t)n * sizeof(double));
    }
    spart_psf_free(psf);
    free(kernel_values);
    free(in);
    free(reference);
    free(other);
    spart_context_free(context);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void kernels_or_images_of_the_wrong_rank_are_refused(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double kernel[9] = {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0};
    spart_array one_axis = {kernel, {1, {9}}};
    spart_shape images = {2, {4, 4}};
    spart_psf *psf = NULL;
    expect_error(context, spart_psf_create(context, &one_axis, &images, &psf),
                 SPART_ERROR_INVALID_ARGUMENT, "at least 2 axes");
    assert_null(psf);
    spart_array two_axes = {kernel, {2, {3, 3}}};
    spart_shape flat_images = {1, {16}};
    expect_error(context, spart_psf_create(context, &two_axes, &flat_images, &psf),
                 SPART_ERROR_INVALID_ARGUMENT, "at least 2 axes");
    spart_array three_axes = {kernel, {3, {1, 3, 3}}};
    expect_error(context, spart_psf_create(context, &three_axes, &images, &psf),
                 SPART_ERROR_INVALID_ARGUMENT, "more than the images'");
    spart_array empty = {kernel, {2, {0, 3}}};
    expect_error(context, spart_psf_create(context, &empty, &images, &psf),
                 SPART_ERROR_INVALID_ARGUMENT, "at least 1");
    spart_context_free(context);
}

static void non_finite_kernels_and_inputs_are_refused(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double kernel[9] = {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0};
    kernel[5] = NAN;
    spart_array kernels = {kernel, {2, {3, 3}}};
    spart_shape images = {2, {4, 4}};
    spart_psf *psf = NULL;
    expect_error(context, spart_psf_create(context, &kernels, &images, &psf),
                 SPART_ERROR_NOT_FINITE, "kernel value 5");
    kernel[5] = 0.0;
    assert_int_equal(spart_psf_create(context, &kernels, &images, &psf), SPART_OK);
    double in[16] = {0.0};
    double out[16];
    in[7] = INFINITY;
    spart_array x = {in, images};
    expect_error(context, spart_psf_apply(context, psf, &x, out, 16), SPART_ERROR_NOT_FINITE,
                 "input value 7");
    expect_error(context, spart_psf_apply_adjoint(context, psf, &x, out, 16),
                 SPART_ERROR_NOT_FINITE, "psf adjoint: input value 7");
    spart_psf_free(psf);
    spart_context_free(context);
}

static void shapes_that_do_not_match_are_refused(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double kernel[18] = {0.0};
    spart_array two_kernels = {kernel, {3, {2, 3, 3}}};
    spart_shape three_images = {3, {3, 4, 4}};
    spart_psf *psf = NULL;
    expect_error(context, spart_psf_create(context, &two_kernels, &three_images, &psf),
                 SPART_ERROR_SHAPE_MISMATCH, "do not broadcast");
    spart_shape two_images = {3, {2, 4, 4}};
    assert_int_equal(spart_psf_create(context, &two_kernels, &two_images, &psf), SPART_OK);
    double in[48] = {0.0};
    double out[48];
    spart_array wrong = {in, {3, {2, 4, 6}}};
    expect_error(context, spart_psf_apply(context, psf, &wrong, out, 48),
                 SPART_ERROR_SHAPE_MISMATCH, "input has shape 2x4x6");
    spart_array right = {in, two_images};
    expect_error(context, spart_psf_apply(context, psf, &right, out, 48),
                 SPART_ERROR_INVALID_ARGUMENT, "size_output = 48");
    expect_error(context, spart_psf_apply(context, NULL, &right, out, 32), SPART_ERROR_NULL_POINTER,
                 "must not be NULL");
    assert_int_equal(spart_psf_apply(context, psf, &right, out, 32), SPART_OK);
    spart_psf_free(psf);
    spart_context_free(context);
}

/* An infinite kernel value of either sign is refused as a NaN is, and so
 * are missing pointers, leaving *psf NULL. */
static void infinite_kernels_and_null_pointers_are_refused(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double kernel[9] = {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0};
    spart_array kernels = {kernel, {2, {3, 3}}};
    spart_shape images = {2, {4, 4}};
    spart_psf *psf = NULL;
    kernel[2] = INFINITY;
    expect_error(context, spart_psf_create(context, &kernels, &images, &psf),
                 SPART_ERROR_NOT_FINITE, "kernel value 2");
    kernel[2] = -INFINITY;
    expect_error(context, spart_psf_create(context, &kernels, &images, &psf),
                 SPART_ERROR_NOT_FINITE, "kernel value 2");
    assert_null(psf);
    kernel[2] = 0.0;
    spart_array no_data = {NULL, {2, {3, 3}}};
    expect_error(context, spart_psf_create(context, &no_data, &images, &psf),
                 SPART_ERROR_NULL_POINTER, "must not be NULL");
    expect_error(context, spart_psf_create(context, NULL, &images, &psf), SPART_ERROR_NULL_POINTER,
                 "must not be NULL");
    expect_error(context, spart_psf_create(context, &kernels, NULL, &psf), SPART_ERROR_NULL_POINTER,
                 "must not be NULL");
    expect_error(context, spart_psf_create(context, &kernels, &images, NULL),
                 SPART_ERROR_NULL_POINTER, "must not be NULL");
    assert_int_equal(spart_psf_create(NULL, &kernels, &images, &psf), SPART_ERROR_NULL_POINTER);
    assert_null(psf);
    spart_context_free(context);
}

/* ---- the MART operators with a PSF -------------------------------------------------------- */

/* A small problem: a scene of S cells seen by C channels of NY x NX
 * images through random sparse weights, and one kernel per channel. */
enum { S = 14, C = 2, NY = 6, NX = 7, KY = 3, KX = 4, ENTRIES = 40 };

typedef struct entry {
    int64_t scene;   /* the scene cell */
    int64_t channel; /* the image it lands in */
    int64_t pixel;   /* y * NX + x in that image */
    double value;
} entry;

/* Forward weights: scene (S) -> images (C, NY, NX), every axis resampled.
 * With `kernels`, each entry is spread over the pixels around it (the PSF
 * folded in by brute force). */
static spart_regridder *forward_regridder(spart_context *context, const entry *entries,
                                          const double *kernels)
{
    int64_t capacity = ENTRIES * NY * NX;
    int64_t *in = malloc((size_t)capacity * sizeof(int64_t));
    int64_t *out = malloc((size_t)capacity * sizeof(int64_t));
    double *values = malloc((size_t)capacity * sizeof(double));
    int64_t count = 0;
    for (int e = 0; e < ENTRIES; e++) {
        const double *k = kernels != NULL ? kernels + entries[e].channel * KY * KX : NULL;
        for (int64_t p = 0; p < NY * NX; p++) {
            double value = entries[e].value;
            if (k != NULL) {
                int64_t jy = p / NX - entries[e].pixel / NX + KY / 2;
                int64_t jx = p % NX - entries[e].pixel % NX + KX / 2;
                if (jy < 0 || jy >= KY || jx < 0 || jx >= KX) {
                    continue;
                }
                value *= k[jy * KX + jx];
            } else if (p != entries[e].pixel) {
                continue;
            }
            in[count] = entries[e].scene;
            out[count] = entries[e].channel * NY * NX + p;
            values[count] = value;
            count++;
        }
    }
    spart_shape none = {0, {0}};
    spart_shape shape_in = {1, {S}};
    spart_shape shape_out = {3, {C, NY, NX}};
    int axes_in[] = {0};
    int axes_out[] = {0, 1, 2};
    int64_t offsets[] = {0, count};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &none, &shape_in, &shape_out, 1,
                                                      axes_in, 3, axes_out, offsets, in, out,
                                                      values, &weights),
                     SPART_OK);
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &regridder), SPART_OK);
    spart_weights_free(weights);
    free(in);
    free(out);
    free(values);
    return regridder;
}

/* Backward weights: images (C, NY, NX) -> scenes (C, S), channel the
 * orthogonal axis, each forward entry transposed; with `kernels`, B P^T
 * folded in by brute force. */
static spart_regridder *backward_regridder(spart_context *context, const entry *entries,
                                           const double *kernels)
{
    int64_t capacity = ENTRIES * NY * NX;
    int64_t *in = malloc((size_t)capacity * sizeof(int64_t));
    int64_t *out = malloc((size_t)capacity * sizeof(int64_t));
    double *values = malloc((size_t)capacity * sizeof(double));
    int64_t offsets[C + 1];
    int64_t count = 0;
    for (int64_t c = 0; c < C; c++) {
        offsets[c] = count;
        for (int e = 0; e < ENTRIES; e++) {
            if (entries[e].channel != c) {
                continue;
            }
            for (int64_t p = 0; p < NY * NX; p++) {
                double value = entries[e].value;
                if (kernels != NULL) {
                    const double *k = kernels + c * KY * KX;
                    int64_t jy = p / NX - entries[e].pixel / NX + KY / 2;
                    int64_t jx = p % NX - entries[e].pixel % NX + KX / 2;
                    if (jy < 0 || jy >= KY || jx < 0 || jx >= KX) {
                        continue;
                    }
                    value *= k[jy * KX + jx];
                } else if (p != entries[e].pixel) {
                    continue;
                }
                in[count] = p;
                out[count] = entries[e].scene;
                values[count] = value;
                count++;
            }
        }
    }
    offsets[C] = count;
    spart_shape orthogonal = {1, {C}};
    spart_shape shape_in = {3, {C, NY, NX}};
    spart_shape shape_out = {2, {C, S}};
    int axes_in[] = {1, 2};
    int axes_out[] = {1};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &shape_in, &shape_out,
                                                      2, axes_in, 1, axes_out, offsets, in, out,
                                                      values, &weights),
                     SPART_OK);
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &regridder), SPART_OK);
    spart_weights_free(weights);
    free(in);
    free(out);
    free(values);
    return regridder;
}

static void mart_operators_with_a_psf_agree_with_folded_weights(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    entry entries[ENTRIES];
    uint64_t random = 91;
    for (int e = 0; e < ENTRIES; e++) {
        entries[e].scene = (int64_t)(next_uniform(&random) * S);
        entries[e].channel = (int64_t)(next_uniform(&random) * C);
        entries[e].pixel = (int64_t)(next_uniform(&random) * NY * NX);
        entries[e].value = 0.5 + next_uniform(&random);
    }
    double *kernels = random_values(C * KY * KX, 92, 0.0);
    spart_regridder *forward = forward_regridder(context, entries, NULL);
    spart_regridder *backward = backward_regridder(context, entries, NULL);
    spart_regridder *forward_folded = forward_regridder(context, entries, kernels);
    spart_regridder *backward_folded = backward_regridder(context, entries, kernels);
    spart_array kernel_array = {kernels, {3, {C, KY, KX}}};
    spart_shape images = {3, {C, NY, NX}};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);

    spart_mart_regridder_psf problem = {forward, psf, backward, C, 2.0, 1.5, NULL};
    spart_mart_regridder_pair folded = {forward_folded, backward_folded, C, 2.0, 1.5};
    spart_mart_operators with_psf, with_folded;
    assert_int_equal(spart_mart_operators_from_regridders_psf(context, &problem, &with_psf),
                     SPART_OK);
    assert_int_equal(spart_mart_operators_from_regridders(context, &folded, &with_folded),
                     SPART_OK);
    assert_int_equal(with_psf.scene_size, S);
    assert_int_equal(with_psf.image_size, NY * NX);

    double *scene = random_values(S, 93, 0.0);
    double a_images[C * NY * NX], a_widths[C * NY * NX];
    double b_images[C * NY * NX], b_widths[C * NY * NX];
    assert_int_equal(with_psf.forward(with_psf.user, context, scene, a_images, a_widths), SPART_OK);
    assert_int_equal(with_folded.forward(with_folded.user, context, scene, b_images, b_widths),
                     SPART_OK);
    assert_true(relative_error(a_images, b_images, C * NY * NX) < 1e-13);
    assert_true(relative_error(a_widths, b_widths, C * NY * NX) < 1e-13);

    double *observed = random_values(C * NY * NX, 94, 0.0);
    double a_scenes[C * S], b_scenes[C * S];
    assert_int_equal(with_psf.backward(with_psf.user, context, observed, a_scenes), SPART_OK);
    assert_int_equal(with_folded.backward(with_folded.user, context, observed, b_scenes), SPART_OK);
    assert_true(relative_error(a_scenes, b_scenes, C * S) < 1e-13);

    free(scene);
    free(observed);
    spart_psf_free(psf);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_regridder_free(forward_folded);
    spart_regridder_free(backward_folded);
    free(kernels);
    spart_context_free(context);
}

static void mart_solves_with_a_psf_agree_with_folded_weights(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    entry entries[ENTRIES];
    uint64_t random = 101;
    for (int e = 0; e < ENTRIES; e++) {
        /* Every scene cell seen at least once, so that no ratio is 0 / 0. */
        entries[e].scene = e % S;
        entries[e].channel = (int64_t)(next_uniform(&random) * C);
        entries[e].pixel = (int64_t)(next_uniform(&random) * NY * NX);
        entries[e].value = 0.5 + next_uniform(&random);
    }
    double *kernels = random_values(C * KY * KX, 102, 0.1);
    spart_regridder *forward = forward_regridder(context, entries, NULL);
    spart_regridder *backward = backward_regridder(context, entries, NULL);
    spart_regridder *forward_folded = forward_regridder(context, entries, kernels);
    spart_regridder *backward_folded = backward_regridder(context, entries, kernels);
    spart_array kernel_array = {kernels, {3, {C, KY, KX}}};
    spart_shape images = {3, {C, NY, NX}};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &images, &psf), SPART_OK);
    spart_mart_regridder_psf problem = {forward, psf, backward, C, 1.0, 0.5, NULL};
    spart_mart_regridder_pair folded = {forward_folded, backward_folded, C, 1.0, 0.5};
    spart_mart_operators with_psf, with_folded;
    assert_int_equal(spart_mart_operators_from_regridders_psf(context, &problem, &with_psf),
                     SPART_OK);
    assert_int_equal(spart_mart_operators_from_regridders(context, &folded, &with_folded),
                     SPART_OK);
    /* Observations: the folded forward model of a random scene. */
    double *truth = random_values(S, 103, 1.0);
    double observed[C * NY * NX];
    assert_int_equal(with_folded.forward(with_folded.user, context, truth, observed, NULL),
                     SPART_OK);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = 6;
    spart_mart_result *a = NULL;
    spart_mart_result *b = NULL;
    assert_int_equal(spart_mart_solve(context, &with_psf, observed, &options, &a), SPART_OK);
    assert_int_equal(spart_mart_solve(context, &with_folded, observed, &options, &b), SPART_OK);
    assert_int_equal(spart_mart_result_num_iterations(a), spart_mart_result_num_iterations(b));
    double error = relative_error(spart_mart_result_solution(a), spart_mart_result_solution(b), S);
    if (!(error < 1e-11)) {
        fail_msg("solutions differ by %g relative", error);
    }
    spart_mart_result_free(a);
    spart_mart_result_free(b);
    free(truth);
    spart_psf_free(psf);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_regridder_free(forward_folded);
    spart_regridder_free(backward_folded);
    free(kernels);
    spart_context_free(context);
}

static void mart_operators_refuse_a_psf_for_other_images(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    entry entries[ENTRIES];
    for (int e = 0; e < ENTRIES; e++) {
        entries[e] = (entry){e % S, e % C, e % (NY * NX), 1.0};
    }
    spart_regridder *forward = forward_regridder(context, entries, NULL);
    spart_regridder *backward = backward_regridder(context, entries, NULL);
    double kernel[KY * KX] = {0.0};
    spart_array kernel_array = {kernel, {2, {KY, KX}}};
    spart_shape other = {3, {C, NX, NY}};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernel_array, &other, &psf), SPART_OK);
    spart_mart_regridder_psf problem = {forward, psf, backward, C, 1.0, 0.0, NULL};
    spart_mart_operators operators;
    expect_error(context, spart_mart_operators_from_regridders_psf(context, &problem, &operators),
                 SPART_ERROR_SHAPE_MISMATCH, "make the PSF for its output shape");
    problem.psf = NULL;
    expect_error(context, spart_mart_operators_from_regridders_psf(context, &problem, &operators),
                 SPART_ERROR_NULL_POINTER, "must not be NULL");
    spart_psf_free(psf);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(odd_kernel_shared_by_every_image_matches_direct_sums),
        cmocka_unit_test(even_kernels_match_direct_sums_with_centre_at_half_size),
        cmocka_unit_test(even_kernel_keeps_its_half_size_sample_on_the_pixel),
        cmocka_unit_test(pixels_no_light_reaches_are_exactly_zero),
        cmocka_unit_test(kernels_larger_than_the_image_match_direct_sums),
        cmocka_unit_test(per_element_kernels_match_direct_sums),
        cmocka_unit_test(adjoint_passes_the_dot_product_test),
        cmocka_unit_test(results_are_the_same_bits_for_any_thread_count_and_in_place),
        cmocka_unit_test(kernels_or_images_of_the_wrong_rank_are_refused),
        cmocka_unit_test(non_finite_kernels_and_inputs_are_refused),
        cmocka_unit_test(shapes_that_do_not_match_are_refused),
        cmocka_unit_test(infinite_kernels_and_null_pointers_are_refused),
        cmocka_unit_test(mart_operators_with_a_psf_agree_with_folded_weights),
        cmocka_unit_test(mart_solves_with_a_psf_agree_with_folded_weights),
        cmocka_unit_test(mart_operators_refuse_a_psf_for_other_images),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
