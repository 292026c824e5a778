/*
 * tests/unit/test_exp_math.c: the shared exponential of src/core/exp_math.h
 * against the C library's: within 2 units in the last place over the whole
 * finite range, exact special values, subnormal results and overflow where
 * C's exp has them.
 */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core/exp_math.h"
#include "test_util.h"

/* Distance in units in the last place between two finite doubles of one sign. */
static double ulps_apart(double a, double b)
{
    if (a == b) {
        return 0.0;
    }
    double unit = nextafter(fabs(b), INFINITY) - fabs(b);
    return fabs(a - b) / unit;
}

static void test_exp_within_two_ulps_of_libm(void **state)
{
    (void)state;
    uint64_t random = 20261201;
    double worst = 0.0;
    for (int i = 0; i < 200000; i++) {
        /* mostly the softmax range [-40, 0], some of the whole range */
        double u = next_uniform(&random);
        double x = (i % 4 == 0) ? -745.0 + 1454.7 * u : -40.0 * u;
        double spart_value = spart_exp(x);
        double libm_value = exp(x);
        assert_true(isfinite(spart_value) == isfinite(libm_value));
        if (libm_value >= DBL_MIN) { /* normal results: relative error */
            double apart = ulps_apart(spart_value, libm_value);
            worst = apart > worst ? apart : worst;
        } else {
            assert_true(fabs(spart_value - libm_value) <= 2.0 * 4.9406564584124654e-324);
        }
    }
    assert_true(worst <= 2.0);
}

static void test_exp_special_values(void **state)
{
    (void)state;
    assert_true(isnan(spart_exp(NAN)));
    assert_true(spart_exp(-INFINITY) == 0.0 && !signbit(spart_exp(-INFINITY)));
    assert_true(isinf(spart_exp(INFINITY)) && spart_exp(INFINITY) > 0);
    assert_true(spart_exp(0.0) == 1.0);
    assert_true(spart_exp(-0.0) == 1.0);
    assert_true(isinf(spart_exp(709.8)));
    assert_true(isfinite(spart_exp(709.78)));
    assert_true(spart_exp(-746.0) == 0.0);
    double tiny = spart_exp(-744.0); /* subnormal, as C's */
    assert_true(tiny > 0.0 && tiny < DBL_MIN);
    assert_true(fabs(tiny - exp(-744.0)) <= 4.9406564584124654e-324);
    assert_true(spart_exp(1.0) == exp(1.0) || ulps_apart(spart_exp(1.0), exp(1.0)) <= 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_within_two_ulps_of_libm),
        cmocka_unit_test(test_exp_special_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
