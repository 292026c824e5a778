/*
 * tests/unit/test_mart_math.c: the arithmetic under the MART steps: the
 * shared pow against libm, the correction of a voxel (its shortcuts and
 * where it keeps ctis's per-channel form), the host update's bits, and
 * the merits (chi squared, correlation) as ctis 0.3.1 computes them.
 * The driver itself is tested in test_mart.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../solvers/mart_internal.h"
#include "mart/mart_math.h"
#include "spart/mart.h"
#include "spart/weights.h"
#include "test_util.h"

/* ---- the shared pow ------------------------------------------------------------------------ */

static void pow_is_exact_for_exponents_one_two_and_half(void **state)
{
    (void)state;
    double x = 0.7390851332151607;
    assert_true(spart_mart_pow(x, 1.0) == x);
    assert_true(spart_mart_pow(x, 2.0) == x * x);
    assert_true(spart_mart_pow(x, 0.5) == sqrt(x));
    assert_true(spart_mart_pow(0.0, 0.25) == 0.0);
    assert_true(spart_mart_pow(1.0, 0.3) == 1.0);
    assert_true(isnan(spart_mart_pow(NAN, 0.25)));
}

static void pow_agrees_with_libm_to_a_few_ulp(void **state)
{
    (void)state;
    const double exponents[] = {0.25, 1.0 / 3.0, 0.125, 0.05, 1.5};
    double x = 1e-30;
    double worst = 0.0;
    while (x < 1e30) {
        for (size_t k = 0; k < sizeof exponents / sizeof exponents[0]; k++) {
            double expected = pow(x, exponents[k]);
            double got = spart_mart_pow(x, exponents[k]);
            double relative = fabs(got - expected) / expected;
            worst = relative > worst ? relative : worst;
        }
        x *= 1.0137;
    }
    /* |y log x| <= 1.5 * 69 here: the bound of the header, with room. */
    assert_true(worst < 2e-14);
}

static void pow_handles_subnormal_inputs_and_results(void **state)
{
    (void)state;
    double tiny = 4.9406564584124654e-324;
    /* |y log x| = 186: the header's bound is about 190 ulp, 4.2e-14 */
    double root = spart_mart_pow(tiny, 0.25);
    assert_true(fabs(root - pow(tiny, 0.25)) / pow(tiny, 0.25) < 5e-14);
    double small = spart_mart_pow(1e-200, 1.6);
    assert_true(fabs(small - pow(1e-200, 1.6)) <= 4.9406564584124654e-324 * 4);
}

/* The power of one ratio written out without shortcuts: the division
 * always made, then each exponent case of the header's pow in its order. */
static double plain_ratio_power(double observed, double predicted, double gamma)
{
    predicted = predicted < 0.0 ? 0.0 : predicted;
    double r = observed / predicted;
    if (r != r || r == HUGE_VAL || r == -HUGE_VAL) {
        r = 1.0;
    }
    if (gamma == 1.0) {
        return r;
    }
    if (gamma == 2.0) {
        return r * r;
    }
    if (gamma == 0.5) {
        return sqrt(r);
    }
    if (gamma == 0.25) {
        return sqrt(sqrt(r));
    }
    if (r == 0.0 || r == 1.0 || r != r || r == HUGE_VAL) {
        return r;
    }
    return spart_mart_exp(gamma * spart_mart_log(r));
}

/* Zero predictions and zero observations skip the division (and zeros the
 * square roots): the same bits as the plain formula, signed zeros too. */
static void ratio_power_shortcuts_give_the_bits_of_the_plain_formula(void **state)
{
    (void)state;
    const double observed[] = {0.0, -0.0, 1.5, 1e-310, HUGE_VAL, NAN};
    const double predicted[] = {0.0, -0.0, -2.0, 3.0, 1e-310, HUGE_VAL, NAN};
    const double exponents[] = {1.0, 2.0, 0.5, 0.25, 0.3};
    for (size_t o = 0; o < sizeof observed / sizeof observed[0]; o++) {
        for (size_t p = 0; p < sizeof predicted / sizeof predicted[0]; p++) {
            for (size_t g = 0; g < sizeof exponents / sizeof exponents[0]; g++) {
                double got = spart_mart_ratio_power(observed[o], predicted[p], exponents[g]);
                double expected = plain_ratio_power(observed[o], predicted[p], exponents[g]);
                if (memcmp(&got, &expected, sizeof got) != 0 && !(isnan(got) && isnan(expected))) {
                    fail_msg("observed %g, predicted %g, gamma %g: %a, plain formula %a",
                             observed[o], predicted[p], exponents[g], got, expected);
                }
            }
        }
    }
    for (size_t g = 0; g < sizeof exponents / sizeof exponents[0]; g++) {
        double positive = spart_mart_pow(0.0, exponents[g]);
        double negative = spart_mart_pow(-0.0, exponents[g]);
        assert_true(positive == 0.0 && !signbit(positive));
        assert_true(negative == 0.0 && signbit(negative) == (exponents[g] != 2.0));
    }
}

/* ---- the steps ------------------------------------------------------------------------------ */

static void correction_replaces_nan_and_infinite_ratios_by_one(void **state)
{
    (void)state;
    /* channel 0: 0/0 (NaN -> 1); channel 1: 3/0 (inf -> 1). */
    const double observed[] = {0.0, 3.0};
    const double predicted[] = {0.0, 0.0};
    assert_true(spart_mart_correction(observed, predicted, 1, 2, 0.5, 0.5) == 1.0);
}

static void correction_of_a_zero_observation_is_zero(void **state)
{
    (void)state;
    const double observed[] = {0.0, 2.0};
    const double predicted[] = {5.0, 2.0};
    assert_true(spart_mart_correction(observed, predicted, 1, 2, 1.0, 0.5) == 0.0);
}

static void correction_is_the_root_of_the_product_of_powers(void **state)
{
    (void)state;
    /* stride 3: the channels of voxel 0 sit at 0 and 3. */
    const double observed[] = {4.0, -1, -1, 9.0};
    const double predicted[] = {1.0, -1, -1, 1.0};
    /* ((4^1)(9^1))^(1/2) = 6 */
    assert_true(spart_mart_correction(observed, predicted, 3, 2, 1.0, 0.5) == 6.0);
    /* gamma 0.5: (2 * 3)^(1/2) */
    assert_true(spart_mart_correction(observed, predicted, 3, 2, 0.5, 0.5) == sqrt(6.0));
}

static void correction_of_four_channels_is_one_power_of_the_product_of_ratios(void **state)
{
    (void)state;
    const double observed[] = {2.0, 3.0, 5.0, 7.0};
    const double predicted[] = {1.0, 1.0, 1.0, 1.0};
    /* gamma = 2 / 4: (2 * 3 * 5 * 7)^(1/8), three square roots */
    double expected = sqrt(sqrt(sqrt(((2.0 * 3.0) * 5.0) * 7.0)));
    assert_true(spart_mart_correction(observed, predicted, 1, 4, 0.5, 0.25) == expected);
    /* gamma 0.3: one general power of the product, exponent 0.3 * 0.25 */
    expected = spart_mart_pow(210.0, 0.3 * 0.25);
    assert_true(spart_mart_correction(observed, predicted, 1, 4, 0.3, 0.25) == expected);
}

/* ctis's per-channel form, within a few ulp: random ratios of four
 * channels spread over four decades each side of 1, two exponents. Each
 * form has its own rounding: against the exact value (long double, on
 * x86) the single power is within 0.93 ulp for gamma 1/2 (the per-channel
 * form 1.07) and 2.4 ulp for gamma 0.3 (1.9); the two apart, 1.3 and 3.0. */
static void correction_is_within_four_ulp_of_the_per_channel_form(void **state)
{
    (void)state;
    uint64_t random_state = 7;
    const double gammas[] = {0.5, 0.3};
    double worst = 0.0;
    for (int k = 0; k < 20000; k++) {
        double observed[4], predicted[4];
        for (int c = 0; c < 4; c++) {
            observed[c] = pow(10.0, 8.0 * next_uniform(&random_state) - 4.0);
            predicted[c] = 1.0 + next_uniform(&random_state);
        }
        for (int g = 0; g < 2; g++) {
            double single = spart_mart_correction(observed, predicted, 1, 4, gammas[g], 0.25);
            double per_channel =
                spart_mart_correction_per_channel(observed, predicted, 1, 4, gammas[g], 0.25);
            double relative = fabs(single - per_channel) / per_channel;
            worst = relative > worst ? relative : worst;
        }
    }
    assert_true(worst <= 4.0 * 2.220446049250313e-16);
}

/* N = 2 with gamma 1/2 (or 2): both of ctis's powers are NumPy's exact
 * ones, so the correction is ctis's per-channel form, bit for bit. */
static void correction_keeps_the_per_channel_form_where_numpy_is_exact(void **state)
{
    (void)state;
    const double observed[] = {2.0, 3.0};
    const double predicted[] = {1.0, 1.0};
    assert_true(spart_mart_correction(observed, predicted, 1, 2, 0.5, 0.5) ==
                sqrt(sqrt(2.0) * sqrt(3.0)));
    assert_true(spart_mart_correction(observed, predicted, 1, 2, 2.0, 0.5) ==
                sqrt((2.0 * 2.0) * (3.0 * 3.0)));
}

/* A partial product of the unpowered ratios that overflows, or passes
 * through the subnormals, where the powered factors do not: the
 * per-channel form, bit for bit. */
static void correction_outside_the_normal_range_takes_the_per_channel_form(void **state)
{
    (void)state;
    const double predicted[] = {1.0, 1.0, 1.0, 1.0};
    const double overflowing[] = {1e300, 1e300, 1e-300, 1e-300};
    const double subnormal[] = {1e-300, 1e-20, 1e20, 1e300};
    const double *cases[] = {overflowing, subnormal};
    for (int k = 0; k < 2; k++) {
        double got = spart_mart_correction(cases[k], predicted, 1, 4, 0.5, 0.25);
        double expected = spart_mart_correction_per_channel(cases[k], predicted, 1, 4, 0.5, 0.25);
        assert_true(got == expected);
        assert_true(fabs(got - 1.0) < 1e-14);
    }
}

/* A zero ratio (observed 0, predicted > 0) zeroes the voxel, with the sign
 * of zero of the per-channel form. */
static void correction_with_a_zero_ratio_is_the_per_channel_zero(void **state)
{
    (void)state;
    const double predicted[] = {1.0, 1.0, 1.0, 1.0};
    const double positive[] = {2.0, 0.0, 3.0, 5.0};
    const double negative[] = {2.0, -0.0, 3.0, 5.0};
    const double gammas[] = {0.5, 2.0, 0.3};
    for (int g = 0; g < 3; g++) {
        for (int k = 0; k < 2; k++) {
            const double *observed = k == 0 ? positive : negative;
            double got = spart_mart_correction(observed, predicted, 1, 4, gammas[g], 0.25);
            double expected =
                spart_mart_correction_per_channel(observed, predicted, 1, 4, gammas[g], 0.25);
            assert_true(got == 0.0);
            assert_memory_equal(&got, &expected, sizeof got);
        }
    }
}

/* spart_mart_update on the host (blocks of voxels in vector instructions,
 * the exponents' cases chosen once per call) gives each voxel the bits of
 * spart_mart_correction, including the voxels that fall back to the
 * per-channel form: zero ratios, products that overflow or pass through
 * the subnormals, zero and negative predictions. 4 channels, 601 voxels:
 * two full blocks of 256 and a partial one. */
static void host_update_gives_the_bits_of_the_scalar_correction(void **state)
{
    (void)state;
    enum { CHANNELS = 4, VOXELS = 601 };
    static double observed[CHANNELS * VOXELS], predicted[CHANNELS * VOXELS];
    static double scene[VOXELS], expected[VOXELS];
    uint64_t random_state = 11;
    for (int k = 0; k < CHANNELS * VOXELS; k++) {
        observed[k] = 3.0 * next_uniform(&random_state);
        predicted[k] = 3.0 * next_uniform(&random_state) - 0.2;
    }
    const double extremes[] = {0.0, -0.0, 1e300, 1e-300, 1e-310};
    for (int v = 0; v < VOXELS; v += 7) {
        int c = v % CHANNELS;
        observed[c * VOXELS + v] = extremes[(v / 7) % 5];
        predicted[((c + 1) % CHANNELS) * VOXELS + v] = v % 3 == 0 ? 0.0 : 1e-300;
    }
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    const double gammas[] = {0.5, 0.3, 1.0};
    for (int g = 0; g < 3; g++) {
        for (int v = 0; v < VOXELS; v++) {
            scene[v] = 1.0 + v;
            expected[v] = scene[v] * spart_mart_correction(observed + v, predicted + v, VOXELS,
                                                           CHANNELS, gammas[g], 0.25);
        }
        assert_int_equal(
            spart_mart_update(context, scene, observed, predicted, CHANNELS, VOXELS, gammas[g], 0),
            SPART_OK);
        assert_memory_equal(scene, expected, sizeof scene);
    }
    spart_context_free(context);
}

/* chi2 and r of one channel through the public building block. */
static void merits_of(const double *observed, const double *predicted, const double *widths,
                      int64_t n, double *chi2, double *correlation)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    assert_int_equal(spart_mart_merits(context, observed, predicted, widths, 1, n, chi2,
                                       correlation, NULL, 0, 0),
                     SPART_OK);
    spart_context_free(context);
}

static double chi_squared_of(const double *observed, const double *predicted, const double *widths,
                             int64_t n)
{
    double chi2, correlation;
    merits_of(observed, predicted, widths, n, &chi2, &correlation);
    return chi2;
}

static double correlation_of(const double *observed, const double *predicted, int64_t n)
{
    const double widths[] = {1.0, 1.0, 1.0};
    double chi2, correlation;
    merits_of(observed, predicted, widths, n, &chi2, &correlation);
    return correlation;
}

static void chi_squared_leaves_out_pixels_of_zero_width(void **state)
{
    (void)state;
    const double observed[] = {3.0, 100.0, 1.0};
    const double predicted[] = {1.0, 0.0, 1.0};
    const double widths[] = {2.0, 0.0, 0.5};
    /* ((3-1)/2)^2 = 1 and 0, over 2 pixels */
    assert_true(chi_squared_of(observed, predicted, widths, 3) == 0.5);
}

static void chi_squared_of_an_all_masked_channel_is_nan(void **state)
{
    (void)state;
    const double observed[] = {3.0, 1.0};
    const double predicted[] = {0.0, 0.0};
    const double widths[] = {0.0, 0.0};
    assert_true(isnan(chi_squared_of(observed, predicted, widths, 2)));
}

static void correlation_uses_population_moments(void **state)
{
    (void)state;
    /* e = (1, 2, 3), r = o - e = (1, 0, 2): mean e 2, mean r 1;
     * cov = ((-1)(0) + 0(-1) + (1)(1)) / 3 = 1/3; var e = 2/3, var r = 2/3. */
    const double predicted[] = {1.0, 2.0, 3.0};
    const double observed[] = {2.0, 2.0, 5.0};
    double r = correlation_of(observed, predicted, 3);
    assert_true(fabs(r - 0.5) < 1e-15);
}

static void correlation_of_a_constant_prediction_is_nan(void **state)
{
    (void)state;
    const double predicted[] = {2.0, 2.0, 2.0};
    const double observed[] = {1.0, 2.0, 5.0};
    assert_true(isnan(correlation_of(observed, predicted, 3)));
}

static void python_float_text_matches_repr(void **state)
{
    (void)state;
    assert_string_equal(spart_mart_python_float(1e-3).text, "0.001");
    assert_string_equal(spart_mart_python_float(1e-2).text, "0.01");
    assert_string_equal(spart_mart_python_float(1e-5).text, "1e-05");
    assert_string_equal(spart_mart_python_float(100.0).text, "100.0");
    assert_string_equal(spart_mart_python_float(0.5).text, "0.5");
    assert_string_equal(spart_mart_python_float(2.5e-7).text, "2.5e-07");
    assert_string_equal(spart_mart_python_float(1e16).text, "1e+16");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pow_is_exact_for_exponents_one_two_and_half),
        cmocka_unit_test(pow_agrees_with_libm_to_a_few_ulp),
        cmocka_unit_test(pow_handles_subnormal_inputs_and_results),
        cmocka_unit_test(ratio_power_shortcuts_give_the_bits_of_the_plain_formula),
        cmocka_unit_test(correction_replaces_nan_and_infinite_ratios_by_one),
        cmocka_unit_test(correction_of_a_zero_observation_is_zero),
        cmocka_unit_test(correction_is_the_root_of_the_product_of_powers),
        cmocka_unit_test(correction_of_four_channels_is_one_power_of_the_product_of_ratios),
        cmocka_unit_test(correction_is_within_four_ulp_of_the_per_channel_form),
        cmocka_unit_test(correction_keeps_the_per_channel_form_where_numpy_is_exact),
        cmocka_unit_test(correction_outside_the_normal_range_takes_the_per_channel_form),
        cmocka_unit_test(correction_with_a_zero_ratio_is_the_per_channel_zero),
        cmocka_unit_test(host_update_gives_the_bits_of_the_scalar_correction),
        cmocka_unit_test(chi_squared_leaves_out_pixels_of_zero_width),
        cmocka_unit_test(chi_squared_of_an_all_masked_channel_is_nan),
        cmocka_unit_test(correlation_uses_population_moments),
        cmocka_unit_test(correlation_of_a_constant_prediction_is_nan),
        cmocka_unit_test(python_float_text_matches_repr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
