/*
 * src/softmax/softmax_exp.h: a shorter exponential for the softmax of
 * float32 values (a candidate, 2026-12-02: nothing calls it in a result
 * yet; kernels/softmax.cu times it beside spart_exp in the benchmark's exp
 * pass). Where spart_exp (src/core/exp_math.h) reduces x = k ln 2 + r to
 * |r| <= ln 2 / 2 and needs the Taylor series to r^13, this one reduces
 * x = (64 k + j) ln 2 / 64 + r to |r| <= ln 2 / 128 and takes
 * e^x = 2^k 2^(j/64) e^r with 2^(j/64) from a table of 64 doubles (each
 * correctly rounded) and e^r to r^3: the next term is below
 * (ln 2 / 128)^4 / 4! = 3.6e-11 of e^r, 0.0006 of a float32 ulp, so a
 * float32 softmax rounded once from it stays within 1 ulp; about 15
 * double operations instead of 30. Built, as spart_exp, from +, -, *,
 * fma, a table read and exact exponent bits, so host and device agree bit
 * for bit: the host passes its copy of SPART_SOFTMAX_EXP_TABLE, a kernel
 * its device copy.
 */
#ifndef SPART_SOFTMAX_EXP_H
#define SPART_SOFTMAX_EXP_H

#include "core/exp_math.h"

/* 2^(j/64), j = 0 .. 63, correctly rounded. */
#define SPART_SOFTMAX_EXP_TABLE                                                                    \
    {                                                                                              \
        0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,    \
            0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0,                      \
            0x1.1429aaea92de0p+0, 0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0,                      \
            0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0, 0x1.2387a6e756238p+0,                      \
            0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,                      \
            0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0,                      \
            0x1.3a7db34e59ff7p+0, 0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0,                      \
            0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0, 0x1.4bfdad5362a27p+0,                      \
            0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,                      \
            0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0,                      \
            0x1.6623882552225p+0, 0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0,                      \
            0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0, 0x1.7a11473eb0187p+0,                      \
            0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,                      \
            0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0,                      \
            0x1.97d829fde4e50p+0, 0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0,                      \
            0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0, 0x1.ae89f995ad3adp+0,                      \
            0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,                      \
            0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0,                      \
            0x1.d072d4a07897cp+0, 0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0,                      \
            0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0, 0x1.ea4afa2a490dap+0,                      \
            0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,                      \
    }

SPART_MATH_FUNCTION double spart_softmax_exp_float32(double x, const double *table)
{
    if (x != x) {
        return x + x;
    }
    if (x > 709.782712893383973096) {
        return HUGE_VAL;
    }
    if (x < -745.133219101941108420) {
        return 0.0;
    }
    const double inverse_step = 92.332482616893656;             /* 64 / ln 2 */
    const double step_high = 6.93147180369123816490e-01 / 64.0; /* 32 bits: k * high exact */
    const double step_low = 1.90821492927058770002e-10 / 64.0;
    const double k = floor(x * inverse_step + 0.5);
    double r = fma(-k, step_high, x);
    r = fma(-k, step_low, r);
    const int n = (int)k; /* -47689 <= n <= 45426 */
    const int j = n & 63;
    const int e = (n - j) / 64;
    /* e^r - 1 = r (1 + r (1/2 + r / 6)) */
    const double q = r * fma(fma(r, 1.6666666666666666667e-01, 0.5), r, 1.0);
    const double t = table[j];
    const double p = fma(t, q, t);
    if (e > 1023) {
        return p * spart_exp_power_of_two(e - 1) * 2.0;
    }
    if (e < -1022) {
        return p * spart_exp_power_of_two(e + 54) * 5.5511151231257827021e-17; /* 2^-54 */
    }
    return p * spart_exp_power_of_two(e);
}

#endif
