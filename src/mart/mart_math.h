/*
 * src/mart/mart_math.h: the power function of the MART update, written
 * once from +, -, *, / and sqrt (and exact reads and writes of the exponent bits), so that the
 * host and the device compute the same bits: neither glibc's pow nor
 * CUDA's is correctly rounded, and they differ.
 *
 * Accuracy: for x > 0 the relative error is about (|y log x| + 4) units in
 * the last place, enough for MART, whose exponents are small (gamma and
 * 1 / channels) and whose ratios stay near 1 as it converges. Exponents
 * 1, 2 and 0.5 are exact (x, x * x, sqrt x) as NumPy's fast paths make
 * them; exponent 0.25 is sqrt(sqrt(x)) and 0.125 (gamma / channels for
 * ctis's default gamma = 2 / 4 with four channels) sqrt(sqrt(sqrt(x))),
 * each within an ulp of the true value.
 *
 * The correction of a voxel, (prod over c of ratio_c^gamma)^(1 / N) for N
 * channels, is taken as (prod over c of ratio_c)^(gamma / N): one power a
 * voxel instead of N + 1 (for four channels and gamma = 1/2, 3 square
 * roots instead of 6). Equal in exact arithmetic; in floating point within
 * a few ulp of ctis's per-channel form (1.3 ulp apart for gamma = 1/2, 3
 * for gamma = 0.3, in test_mart), not bit for bit. The per-channel form,
 * bit for bit as before, is kept
 * - where both of ctis's powers are NumPy's exact ones (gamma and 1 / N in
 *   {1, 2, 1/2}: N = 1, or N = 2 with gamma = 1/2, 1 or 2), so those runs
 *   repeat ctis's bits;
 * - for gamma > 1 (ctis asks for 0 < gamma < 1; its default 2 / N is at
 *   most 1 from N = 2 on), whose powered factors can overflow where the
 *   ratios do not;
 * - for a voxel with a ratio outside [2^-k, 2^k], k = floor(1022 / N)
 *   (2^-255 to 2^255 for four channels), a negative one too (an observed
 *   backprojection that was not clamped): inside, every partial product
 *   of the ratios is a normal number, rounded once; outside, it could
 *   overflow, or pass through the subnormals and lose digits, where the
 *   powered factors (gamma < 1) may not.
 * An exact 0 in the product, from a ratio 0 (observed 0, predicted > 0),
 * stays in the single form: with gamma <= 1 ctis's factors are finite, so
 * both forms give a zero, and of the same sign (x^y keeps the sign of a
 * zero for every exponent but 2).
 *
 * The functions are static inline and use no library state (the
 * exponent is read from and written into the bits of a double, with
 * memcpy, which CUDA device code allows too); a CUDA file
 * includes this header with SPART_MATH_FUNCTION defined as
 * `static __host__ __device__ inline`.
 */
#ifndef SPART_MART_MATH_H
#define SPART_MART_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* ln 2 split so that k * SPART_LN2_HIGH is exact for |k| < 2^11. */
#define SPART_LN2_HIGH 6.93147180369123816490e-01
#define SPART_LN2_LOW 1.90821492927058770002e-10

/* Natural logarithm of a finite x > 0. x = m 2^e with m in [sqrt(1/2),
 * sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, summed
 * as the odd series to s^23 (the next term is below 1e-19 of the sum). */
SPART_MATH_FUNCTION double spart_mart_log(double x)
{
    int e = 0;
    if (x < 2.2250738585072014e-308) { /* subnormal: scale into the normal range */
        x = x * 18014398509481984.0;   /* 2^54 */
        e = -54;
    }
    /* m in [1, 2) from the bits of x; e its binary exponent. */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    e += (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > 1.41421356237309504880) {
        m = m * 0.5;
        e = e + 1;
    }
    double s = (m - 1.0) / (m + 1.0);
    double s2 = s * s;
    double series = 1.0 / 23.0;
    series = series * s2 + 1.0 / 21.0;
    series = series * s2 + 1.0 / 19.0;
    series = series * s2 + 1.0 / 17.0;
    series = series * s2 + 1.0 / 15.0;
    series = series * s2 + 1.0 / 13.0;
    series = series * s2 + 1.0 / 11.0;
    series = series * s2 + 1.0 / 9.0;
    series = series * s2 + 1.0 / 7.0;
    series = series * s2 + 1.0 / 5.0;
    series = series * s2 + 1.0 / 3.0;
    double log_m = 2.0 * s + (2.0 * s) * (s2 * series);
    double k = (double)e;
    return k * SPART_LN2_HIGH + (log_m + k * SPART_LN2_LOW);
}

/* 2^k for -1022 <= k <= 1023, from its bits. */
SPART_MATH_FUNCTION double spart_mart_power_of_two(int k)
{
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Exponential of a finite t: t = k ln 2 + r with |r| <= ln 2 / 2, exp r
 * by its Taylor series to r^14 (the next term is below 1e-19), times 2^k. */
SPART_MATH_FUNCTION double spart_mart_exp(double t)
{
    if (t > 709.8) {
        return HUGE_VAL;
    }
    if (t < -745.2) {
        return 0.0;
    }
    double k = floor(t * 1.44269504088896340736 + 0.5);
    double r = (t - k * SPART_LN2_HIGH) - k * SPART_LN2_LOW;
    double p = 1.0 / 87178291200.0; /* 1 / 14! */
    p = p * r + 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* p 2^k in two exact-or-once-rounded steps, each power of two normal
     * (k is in [-1075, 1024]), as ldexp(ldexp(p, h), k - h) rounds. */
    int half = (int)k / 2;
    return (p * spart_mart_power_of_two(half)) * spart_mart_power_of_two((int)k - half);
}

/* x^y for x >= 0 (or NaN) and finite y > 0: 0 for x = 0, x for y = 1,
 * x * x for y = 2, sqrt x for y = 0.5, sqrt(sqrt x) for y = 0.25,
 * sqrt(sqrt(sqrt x)) for y = 0.125, +inf for x = +inf, NaN for NaN.
 */
SPART_MATH_FUNCTION double spart_mart_pow(double x, double y)
{
    /* Zeros first: each case below gives x for x = +-0, except x * x
     * (+0). On a GPU a square root of 0 leaves the fast path for a called
     * routine, and MART's zero voxels make such calls the common case. */
    if (x == 0.0) {
        return y == 2.0 ? x * x : x;
    }
    if (y == 1.0) {
        return x;
    }
    if (y == 2.0) {
        return x * x;
    }
    if (y == 0.5) {
        return sqrt(x);
    }
    if (y == 0.25) { /* the root of 4 channels: two correctly rounded roots */
        return sqrt(sqrt(x));
    }
    if (y == 0.125) { /* gamma / N for 4 channels and gamma = 1/2: three roots */
        return sqrt(sqrt(sqrt(x)));
    }
    if (x == 0.0 || x == 1.0 || x != x || x == HUGE_VAL) { /* NaN != NaN */
        return x;
    }
    return spart_mart_exp(y * spart_mart_log(x));
}

/* One channel's ratio observed / max(predicted, 0), with NaN and +-inf
 * replaced by 1, as ctis. */
SPART_MATH_FUNCTION double spart_mart_ratio(double observed, double predicted)
{
    predicted = predicted < 0.0 ? 0.0 : predicted;
    /* Two exact shortcuts around the division, which on a GPU calls a slow
     * routine for zero operands: observed / +-0 (or / NaN) is +-inf or NaN,
     * so the ratio is 1; and +-0 / predicted (predicted > 0) is observed
     * itself. */
    if (!(predicted > 0.0)) {
        return 1.0;
    }
    double ratio = observed == 0.0 ? observed : observed / predicted;
    if (ratio != ratio || ratio == HUGE_VAL || ratio == -HUGE_VAL) {
        ratio = 1.0;
    }
    return ratio;
}

/* One channel's factor of ctis's per-channel form: ratio^gamma. */
SPART_MATH_FUNCTION double spart_mart_ratio_power(double observed, double predicted, double gamma)
{
    return spart_mart_pow(spart_mart_ratio(observed, predicted), gamma);
}

/* Whether NumPy's x ** y is exact for this exponent (its fast paths). */
SPART_MATH_FUNCTION int spart_mart_exact_exponent(double y)
{
    return y == 1.0 || y == 2.0 || y == 0.5;
}

/* Whether the corrections take ctis's per-channel form everywhere: both
 * of its powers exact, or gamma > 1 (see the top). */
SPART_MATH_FUNCTION int spart_mart_per_channel_form(double gamma, double inverse_channels)
{
    return gamma > 1.0 ||
           (spart_mart_exact_exponent(gamma) && spart_mart_exact_exponent(inverse_channels));
}

/* The single exponent of the correction, gamma / N, as host and device
 * both compute it. */
SPART_MATH_FUNCTION double spart_mart_voxel_exponent(double gamma, double inverse_channels)
{
    return gamma * inverse_channels;
}

/* The range of ratios in which the single power is used: ratios in
 * [2^-k, 2^k] with k = floor(1022 / N), so that every partial product of
 * up to N of them is a normal number (rounded to nearest, a product of
 * values within [2^-ik, 2^ik] and [2^-k, 2^k] stays within [2^-(i+1)k,
 * 2^(i+1)k]), each rounded once, to half an ulp. */
SPART_MATH_FUNCTION double spart_mart_single_ratio_high(int64_t num_channel)
{
    return spart_mart_power_of_two((int)(1022 / num_channel));
}

SPART_MATH_FUNCTION double spart_mart_single_ratio_low(int64_t num_channel)
{
    return spart_mart_power_of_two(-(int)(1022 / num_channel));
}

/* Whether a ratio keeps its voxel in the single power (see the top): 0
 * (either sign; the product is then an exact zero), or within [low,
 * high], which leaves out negative ratios too. */
SPART_MATH_FUNCTION int spart_mart_single_power_ratio(double ratio, double low, double high)
{
    return ratio <= high && (ratio >= low || ratio == 0.0);
}

/* The MART correction of one voxel in ctis's per-channel form from its
 * backprojections of the observed images (clamped) and of the predicted
 * images (clamped here) in each channel, `stride` apart: (prod over c of
 * ratio_c^gamma)^(1 / channels), the product taken in channel order
 * from 1. */
SPART_MATH_FUNCTION double spart_mart_correction_per_channel(const double *observed_back,
                                                             const double *predicted_back,
                                                             int64_t stride, int64_t num_channel,
                                                             double gamma, double inverse_channels)
{
    double product = 1.0;
    for (int64_t c = 0; c < num_channel; c++) {
        product = product * spart_mart_ratio_power(observed_back[c * stride],
                                                   predicted_back[c * stride], gamma);
    }
    return spart_mart_pow(product, inverse_channels);
}

/* The MART correction of one voxel as spart computes it (see the top):
 * (prod over c of ratio_c)^(gamma / channels), the product taken in
 * channel order from 1, or the per-channel form where the top says. */
SPART_MATH_FUNCTION double spart_mart_correction(const double *observed_back,
                                                 const double *predicted_back, int64_t stride,
                                                 int64_t num_channel, double gamma,
                                                 double inverse_channels)
{
    int single = !spart_mart_per_channel_form(gamma, inverse_channels);
    double low = spart_mart_single_ratio_low(num_channel);
    double high = spart_mart_single_ratio_high(num_channel);
    double product = 1.0;
    for (int64_t c = 0; c < num_channel && single; c++) {
        double ratio = spart_mart_ratio(observed_back[c * stride], predicted_back[c * stride]);
        single = spart_mart_single_power_ratio(ratio, low, high);
        product = product * ratio;
    }
    if (single) {
        return spart_mart_pow(product, spart_mart_voxel_exponent(gamma, inverse_channels));
    }
    return spart_mart_correction_per_channel(observed_back, predicted_back, stride, num_channel,
                                             gamma, inverse_channels);
}

/* A predicted count, clamped at 0, and its noise width sqrt(gain d +
 * read_variance). */
SPART_MATH_FUNCTION double spart_mart_clamped(double value)
{
    return value < 0.0 ? 0.0 : value;
}

SPART_MATH_FUNCTION double spart_mart_width(double count, double gain, double read_variance)
{
    return sqrt(gain * count + read_variance);
}

#endif /* SPART_MART_MATH_H */
