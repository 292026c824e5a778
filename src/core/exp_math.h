/*
 * src/core/exp_math.h: the exponential that host and device must agree on
 * (the softmaxes of the segmented softmax and of candidate scoring), written
 * once from +, -, * and fma (and exact reads and writes of the exponent
 * bits), as src/mart/mart_math.h does `pow`: neither glibc's exp nor
 * CUDA's is correctly rounded, and they differ in the last bit.
 *
 * Method: x = k ln 2 + r with k = floor(x / ln 2 + 1/2) and |r| <= ln 2 / 2
 * (ln 2 split in two so k * high is exact); e^r by its Taylor series to
 * r^13 in Horner form with fma (the next term is below 5e-18 of e^r);
 * then scaled by 2^k through the exponent bits, in two factors where 2^k
 * alone is not a normal number. Relative error about 1 unit in the last
 * place (checked against glibc in tests/unit/test_exp_math.c).
 *
 * Special values as C's exp: NaN gives NaN, -inf gives +0, +inf gives
 * +inf; x > 709.78... overflows to +inf, x < -745.13... underflows to +0;
 * results between are subnormal where they must be.
 *
 * Static inline, no library state; a CUDA file includes this header with
 * SPART_MATH_FUNCTION defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_EXP_MATH_H
#define SPART_EXP_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* 2^j for a j whose power is a normal number (-1022 <= j <= 1023). */
SPART_MATH_FUNCTION double spart_exp_power_of_two(int j)
{
    uint64_t bits = (uint64_t)(j + 1023) << 52;
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

SPART_MATH_FUNCTION double spart_exp(double x)
{
    if (x != x) {
        return x + x; /* NaN stays NaN */
    }
    if (x > 709.782712893383973096) { /* log(DBL_MAX): +inf included */
        return HUGE_VAL;
    }
    if (x < -745.133219101941108420) { /* below half the least subnormal: -inf included */
        return 0.0;
    }
    const double inverse_ln2 = 1.44269504088896338700e+00;
    const double ln2_high = 6.93147180369123816490e-01; /* 32 bits: k * high is exact */
    const double ln2_low = 1.90821492927058770002e-10;
    double k = floor(x * inverse_ln2 + 0.5);
    double r = fma(-k, ln2_high, x);
    r = fma(-k, ln2_low, r);
    /* e^r = sum over n of r^n / n!, n = 0..13, Horner from the top. */
    double p = 1.6059043836821614599e-10;     /* 1/13! */
    p = fma(p, r, 2.0876756987868098979e-09); /* 1/12! */
    p = fma(p, r, 2.5052108385441718775e-08); /* 1/11! */
    p = fma(p, r, 2.7557319223985890653e-07); /* 1/10! */
    p = fma(p, r, 2.7557319223985890653e-06); /* 1/9! */
    p = fma(p, r, 2.4801587301587301566e-05); /* 1/8! */
    p = fma(p, r, 1.9841269841269841253e-04); /* 1/7! */
    p = fma(p, r, 1.3888888888888888889e-03); /* 1/6! */
    p = fma(p, r, 8.3333333333333333333e-03); /* 1/5! */
    p = fma(p, r, 4.1666666666666666667e-02); /* 1/4! */
    p = fma(p, r, 1.6666666666666666667e-01); /* 1/3! */
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    int e = (int)k; /* -1075 <= e <= 1024 */
    if (e > 1023) {
        return p * spart_exp_power_of_two(e - 1) * 2.0;
    }
    if (e < -1022) {
        return p * spart_exp_power_of_two(e + 54) * 5.5511151231257827021e-17; /* 2^-54 */
    }
    return p * spart_exp_power_of_two(e);
}

#endif
