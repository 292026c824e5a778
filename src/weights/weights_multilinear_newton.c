/*
 * src/weights/weights_multilinear_newton.c: Newton's method on one cell's
 * multilinear map (spart_multilinear_newton; used by
 * src/weights/weights_multilinear_curvilinear.c). The arithmetic is
 * src/weights/multilinear_newton_math.h, shared with the device.
 */
#include "weights/weights_multilinear.h"

int spart_multilinear_newton(const grid *g, const double *point, int clamp, int64_t *cell,
                             double *xi)
{
    return spart_ml_newton(g, point, clamp, cell, xi);
}
