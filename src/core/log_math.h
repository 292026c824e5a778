/*
 * src/core/log_math.h: the natural logarithm and log1p that host and
 * device must agree on (the VCS recipes' g), written once from +, -, *,
 * /, fma (and exact reads and writes of the exponent bits), as
 * src/core/exp_math.h does exp: neither glibc's log nor CUDA's is
 * correctly rounded, and they differ in the last bit.
 *
 * Method (log): x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m =
 * 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, the odd series to s^23
 * in Horner form with fma (the next term is below 1e-19 of the sum);
 * e ln 2 with ln 2 split in two so that e * high is exact. About 1 unit in
 * the last place, log1p within 2 (tests/unit/test_vcs.c checks both against
 * glibc).
 * log1p(u) = 2 atanh(u / (2 + u)) by the same series for 1 + u in
 * [sqrt(1/2), sqrt(2)), else log(w) * (u / (w - 1)) with w = 1 + u
 * (Goldberg's correction for the rounding of w).
 *
 * Special values: log(+0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN
 * stays NaN; log1p(-1) = -inf, below -1 NaN.
 *
 * Static inline, no library state; a CUDA file includes this header with
 * SPART_MATH_FUNCTION defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_LOG_MATH_H
#define SPART_LOG_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* 2 atanh(s) = log((1 + s) / (1 - s)) for |s| < 0.172: the odd series to
 * s^23, Horner with fma. */
SPART_MATH_FUNCTION double spart_log_atanh_series(double s)
{
    const double s2 = s * s;
    double series = 1.0 / 23.0;
    series = fma(series, s2, 1.0 / 21.0);
    series = fma(series, s2, 1.0 / 19.0);
    series = fma(series, s2, 1.0 / 17.0);
    series = fma(series, s2, 1.0 / 15.0);
    series = fma(series, s2, 1.0 / 13.0);
    series = fma(series, s2, 1.0 / 11.0);
    series = fma(series, s2, 1.0 / 9.0);
    series = fma(series, s2, 1.0 / 7.0);
    series = fma(series, s2, 1.0 / 5.0);
    series = fma(series, s2, 1.0 / 3.0);
    const double two_s = 2.0 * s;
    return fma(two_s, s2 * series, two_s);
}

SPART_MATH_FUNCTION double spart_log(double x)
{
    if (!(x > 0.0)) {
        if (x == 0.0) {
            return -HUGE_VAL;
        }
        return (x - x) / (x - x); /* NaN for x < 0, NaN stays NaN */
    }
    if (x == HUGE_VAL) {
        return x;
    }
    int e = 0;
    if (x < 2.2250738585072014e-308) { /* subnormal: scale into the normal range */
        x = x * 18014398509481984.0;   /* 2^54 */
        e = -54;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    e += (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m;
    memcpy(&m, &bits, sizeof m); /* m in [1, 2) */
    if (m > 1.41421356237309504880) {
        m = m * 0.5;
        e = e + 1;
    }
    const double log_m = spart_log_atanh_series((m - 1.0) / (m + 1.0));
    const double ln2_high = 6.93147180369123816490e-01; /* 32 bits: e * high is exact */
    const double ln2_low = 1.90821492927058770002e-10;
    const double k = (double)e;
    return fma(k, ln2_high, fma(k, ln2_low, log_m));
}

SPART_MATH_FUNCTION double spart_log1p(double u)
{
    if (u > -0.29 && u < 0.41) {
        /* 1 + u in [sqrt(1/2), sqrt(2)): log1p(u) = 2 atanh(u / (2 + u)),
         * without rounding 1 + u */
        return spart_log_atanh_series(u / (2.0 + u));
    }
    const double w = 1.0 + u;
    if (w == HUGE_VAL || !(w > 0.0)) {
        return spart_log(w); /* +inf, -inf at -1, NaN below */
    }
    return spart_log(w) * (u / (w - 1.0));
}

#endif /* SPART_LOG_MATH_H */
