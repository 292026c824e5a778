/*
 * src/vcs/vcs_math.h: the recipes' g and the stored part Delta of one entry,
 * written once for the host (src/vcs/, host/vcs_product.c) and the device
 * (kernels/vcs_product.cu, which includes this header with
 * SPART_MATH_FUNCTION defined as `static __host__ __device__ inline`), so
 * that both compute the same bits: log1p from src/core/log_math.h, the
 * square root correctly rounded on both.
 */
#ifndef SPART_VCS_MATH_H
#define SPART_VCS_MATH_H

#include "core/log_math.h"

/* g codes, one a recipe family. */
#define SPART_VCS_G_IDENTITY 0
#define SPART_VCS_G_LOG1P 1
#define SPART_VCS_G_LOG10_1P1000 2 /* log10(1 + 1000 u) */
#define SPART_VCS_G_SQRT 3         /* sqrt(u) for u > 0, else 0 */

/* 1 / ln 10, rounded. */
#define SPART_VCS_INVERSE_LN10 0.43429448190325182765

SPART_MATH_FUNCTION double spart_vcs_g(int g_code, double u)
{
    switch (g_code) {
    case SPART_VCS_G_LOG1P: return spart_log1p(u);
    case SPART_VCS_G_LOG10_1P1000: return spart_log1p(1000.0 * u) * SPART_VCS_INVERSE_LN10;
    case SPART_VCS_G_SQRT: return u > 0.0 ? sqrt(u) : 0.0;
    default: return u;
    }
}

/* The argument of g: (x * a) * b, a = 1 / row_scale and b = 1 / gene_scale
 * (0 for a skipped column), in that order: two products where vsparse
 * divides twice (a GPU's float64 division is a dozen instructions). */
SPART_MATH_FUNCTION double spart_vcs_argument(double x, double row_factor, double col_factor)
{
    return (x * row_factor) * col_factor;
}

/* Delta of one stored entry: s * g((x * a) * b); 0 in a skipped column
 * (b = 0, and g(0) = 0 for every g). */
SPART_MATH_FUNCTION double spart_vcs_delta(int g_code, double x, double row_factor,
                                           double col_factor, double scale)
{
    return scale * spart_vcs_g(g_code, spart_vcs_argument(x, row_factor, col_factor));
}

#endif /* SPART_VCS_MATH_H */
