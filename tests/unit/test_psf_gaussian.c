/*
 * spart_psf_gaussian (spart/psf.h): the elliptical Gaussian kernel of
 * ctis's PSF tutorial. Each test states one property: the sum, the
 * symmetries, where the centre is, which way the angle turns, the widths
 * (second moments), and the refusals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_psf_util.h"

enum { MAX_SAMPLES = 61 * 61 };

/* A kernel of rows x columns samples (rows * columns <= MAX_SAMPLES). */
static void gaussian(spart_context *context, double major, double minor, double angle, int64_t rows,
                     int64_t columns, double *kernel)
{
    int64_t size[2] = {rows, columns};
    spart_status status =
        spart_psf_gaussian(context, major, minor, angle, size, kernel, rows * columns);
    if (status != SPART_OK) {
        fail_msg("spart_psf_gaussian: %s", spart_context_error(context));
    }
}

/* The tutorial's four kernels (21 x 21) sum to 1 to rounding, as do
 * kernels of other shapes. */
static void kernels_sum_to_one(void **state)
{
    spart_context *context = *state;
    const double major[4] = {2.0, 3.0, 3.5, 2.5}, minor[4] = {0.8, 0.6, 0.9, 0.5};
    const double angle[4] = {0.0, 30.0, 75.0, 135.0};
    const int64_t shapes[4][2] = {{21, 21}, {4, 7}, {1, 9}, {2, 2}};
    static double kernel[MAX_SAMPLES];
    for (int c = 0; c < 4; c++) {
        for (int k = 0; k < 4; k++) {
            int64_t n = shapes[k][0] * shapes[k][1];
            gaussian(context, major[c], minor[c], angle[c], shapes[k][0], shapes[k][1], kernel);
            double sum = 0.0;
            for (int64_t i = 0; i < n; i++) {
                assert_true(kernel[i] >= 0.0);
                sum += kernel[i];
            }
            assert_true(fabs(sum - 1.0) <= (double)n * 1e-16);
        }
    }
}

/* A kernel at any angle is the same after a half turn about its centre,
 * bit for bit (u and v change sign exactly); at angle 0 it is also the
 * same mirrored along either axis. */
static void odd_kernels_are_symmetric_about_their_centre(void **state)
{
    spart_context *context = *state;
    static double kernel[15 * 11];
    gaussian(context, 3.0, 1.2, 37.0, 15, 11, kernel);
    for (int i = 0; i < 15; i++) {
        for (int j = 0; j < 11; j++) {
            assert_true(kernel[i * 11 + j] == kernel[(14 - i) * 11 + (10 - j)]);
        }
    }
    gaussian(context, 3.0, 1.2, 0.0, 15, 11, kernel);
    for (int i = 0; i < 15; i++) {
        for (int j = 0; j < 11; j++) {
            assert_true(kernel[i * 11 + j] == kernel[(14 - i) * 11 + j]);
            assert_true(kernel[i * 11 + j] == kernel[i * 11 + (10 - j)]);
        }
    }
}

/* The largest sample is at (floor(rows / 2), floor(columns / 2)), for odd
 * and even sizes alike (the centre of spart_psf_create and
 * spart_weights_convolve); an even size has one sample more before the
 * centre than after it, and the samples at equal distance either side
 * are equal. */
static void the_centre_is_at_half_the_size_rounded_down(void **state)
{
    spart_context *context = *state;
    const int64_t shapes[4][2] = {{5, 5}, {4, 6}, {6, 3}, {2, 1}};
    static double kernel[64];
    for (int k = 0; k < 4; k++) {
        int64_t rows = shapes[k][0], columns = shapes[k][1];
        gaussian(context, 1.5, 0.7, 20.0, rows, columns, kernel);
        int64_t best = 0;
        for (int64_t i = 1; i < rows * columns; i++) {
            if (kernel[i] > kernel[best]) {
                best = i;
            }
        }
        assert_int_equal(best / columns, rows / 2);
        assert_int_equal(best % columns, columns / 2);
    }
    gaussian(context, 1.5, 0.7, 0.0, 4, 1, kernel); /* p = -2, -1, 0, 1 */
    assert_true(kernel[1] == kernel[3]);
    assert_true(kernel[0] < kernel[1]);
}

/* The angle turns the major axis from the first axis towards the second:
 * at 0 degrees the kernel is wider along the first axis, at 90 it is the
 * same kernel with its axes swapped (to the rounding of cos(pi / 2)), and
 * at 180 it is the kernel at 0 again. */
static void a_quarter_turn_swaps_the_axes(void **state)
{
    spart_context *context = *state;
    static double along_first[21 * 21], along_second[21 * 21], half_turn[21 * 21];
    gaussian(context, 3.0, 0.8, 0.0, 21, 21, along_first);
    gaussian(context, 3.0, 0.8, 90.0, 21, 21, along_second);
    gaussian(context, 3.0, 0.8, 180.0, 21, 21, half_turn);
    assert_true(along_first[11 * 21 + 10] > along_first[10 * 21 + 11]);
    for (int i = 0; i < 21; i++) {
        for (int j = 0; j < 21; j++) {
            assert_true(fabs(along_second[i * 21 + j] - along_first[j * 21 + i]) <= 1e-15);
            assert_true(fabs(half_turn[i * 21 + j] - along_first[i * 21 + j]) <= 1e-15);
        }
    }
}

/* The second moments of a kernel much larger than its widths are those of
 * the Gaussian, R diag(major^2, minor^2) R^T with R the turn by the
 * angle: the widths are standard deviations in pixels, and the angle runs
 * from the first axis towards the second. */
static void second_moments_are_the_widths_turned_by_the_angle(void **state)
{
    spart_context *context = *state;
    static double kernel[61 * 61];
    const double major = 3.0, minor = 1.5;
    const double angles[3] = {30.0, 75.0, 135.0};
    for (int k = 0; k < 3; k++) {
        gaussian(context, major, minor, angles[k], 61, 61, kernel);
        double m_pp = 0.0, m_pq = 0.0, m_qq = 0.0;
        for (int i = 0; i < 61; i++) {
            for (int j = 0; j < 61; j++) {
                double p = i - 30.0, q = j - 30.0, w = kernel[i * 61 + j];
                m_pp += w * p * p;
                m_pq += w * p * q;
                m_qq += w * q * q;
            }
        }
        double a = angles[k] * 3.14159265358979323846 / 180.0;
        double c = cos(a), s = sin(a);
        double big = major * major, small = minor * minor;
        assert_true(fabs(m_pp - (c * c * big + s * s * small)) <= 1e-9);
        assert_true(fabs(m_pq - c * s * (big - small)) <= 1e-9);
        assert_true(fabs(m_qq - (s * s * big + c * c * small)) <= 1e-9);
    }
}

/* One sample is the whole kernel; a 3 x 1 kernel is exp(-1/2), 1,
 * exp(-1/2) over their sum (the second width does not enter). */
static void small_kernels_have_their_closed_forms(void **state)
{
    spart_context *context = *state;
    double one[1] = {0.0};
    gaussian(context, 0.3, 7.0, 12.0, 1, 1, one);
    assert_true(one[0] == 1.0);
    double three[3];
    gaussian(context, 1.0, 0.25, 0.0, 3, 1, three);
    double side = exp(-0.5), total = 1.0 + 2.0 * side;
    assert_true(fabs(three[0] - side / total) <= 1e-16);
    assert_true(fabs(three[1] - 1.0 / total) <= 1e-16);
    assert_true(three[0] == three[2]);
}

/* Bad arguments are refused with a sentence naming them, and the kernel
 * is left as it was. */
static void bad_arguments_are_refused_and_nothing_is_written(void **state)
{
    spart_context *context = *state;
    double kernel[9];
    for (int i = 0; i < 9; i++) {
        kernel[i] = -7.0;
    }
    int64_t size[2] = {3, 3};
    expect_error(context, spart_psf_gaussian(context, 0.0, 1.0, 0.0, size, kernel, 9),
                 SPART_ERROR_INVALID_ARGUMENT, "sigma_major = 0 must be positive");
    expect_error(context, spart_psf_gaussian(context, 1.0, -1.0, 0.0, size, kernel, 9),
                 SPART_ERROR_INVALID_ARGUMENT, "sigma_minor = -1 must be positive");
    expect_error(context, spart_psf_gaussian(context, NAN, 1.0, 0.0, size, kernel, 9),
                 SPART_ERROR_NOT_FINITE, "sigma_major");
    expect_error(context, spart_psf_gaussian(context, 1.0, INFINITY, 0.0, size, kernel, 9),
                 SPART_ERROR_NOT_FINITE, "sigma_minor");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, NAN, size, kernel, 9),
                 SPART_ERROR_NOT_FINITE, "angle");
    expect_error(context, spart_psf_gaussian(context, 1e-200, 1.0, 0.0, size, kernel, 9),
                 SPART_ERROR_INVALID_ARGUMENT, "too small");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1e200, 0.0, size, kernel, 9),
                 SPART_ERROR_INVALID_ARGUMENT, "too large");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, 0.0, size, kernel, 8),
                 SPART_ERROR_INVALID_ARGUMENT, "size_kernel = 8");
    int64_t empty[2] = {0, 3}, negative[2] = {3, -1}, huge[2] = {INT64_MAX / 2, 3};
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, 0.0, empty, kernel, 0),
                 SPART_ERROR_INVALID_ARGUMENT, "at least 1 x 1");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, 0.0, negative, kernel, 9),
                 SPART_ERROR_INVALID_ARGUMENT, "at least 1 x 1");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, 0.0, huge, kernel, 9),
                 SPART_ERROR_OVERFLOW, "int64");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, 0.0, NULL, kernel, 9),
                 SPART_ERROR_NULL_POINTER, "must not be NULL");
    expect_error(context, spart_psf_gaussian(context, 1.0, 1.0, 0.0, size, NULL, 9),
                 SPART_ERROR_NULL_POINTER, "must not be NULL");
    assert_int_equal(spart_psf_gaussian(NULL, 1.0, 1.0, 0.0, size, kernel, 9),
                     SPART_ERROR_NULL_POINTER);
    for (int i = 0; i < 9; i++) {
        assert_true(kernel[i] == -7.0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kernels_sum_to_one, context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(odd_kernels_are_symmetric_about_their_centre,
                                        context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(the_centre_is_at_half_the_size_rounded_down, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(a_quarter_turn_swaps_the_axes, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(second_moments_are_the_widths_turned_by_the_angle,
                                        context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(small_kernels_have_their_closed_forms, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused_and_nothing_is_written,
                                        context_set_up, context_tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
