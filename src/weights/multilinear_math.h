/*
 * src/weights/multilinear_math.h: the arithmetic of multilinear weights on a
 * rectilinear grid that the host kernel (src/weights/weights_multilinear.c)
 * and its CUDA twin (kernels/weights_multilinear.cu) must agree on bit for
 * bit, written once: locating a coordinate along one axis (a binary search
 * of its ascending profile, as numpy.searchsorted, and the local
 * coordinate in the cell found) and the weight of a cell's corner.
 *
 * Order of operations (the reference's, regridding._rectilinear.locate):
 * xi = (value - v[j]) / (v[j + 1] - v[j]), then 1 - xi on a descending
 * axis; a corner's weight is multiplied up from 1.0 in axis order, by xi
 * where the corner is one step further along the axis and by 1 - xi where
 * it is not; then times weights_input. No fma: none of these is one.
 *
 * Static inline; a CUDA file includes this header with SPART_MATH_FUNCTION
 * defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_MULTILINEAR_MATH_H
#define SPART_MULTILINEAR_MATH_H

#include <math.h>
#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* numpy.searchsorted(values, value, side="left") on n ascending values:
 * the first index whose value is not less than `value`, n for NaN (NumPy
 * sorts NaN after everything). */
SPART_MATH_FUNCTION int64_t spart_search_sorted_left(const double *values, int64_t n, double value)
{
    if (value != value) {
        return n;
    }
    int64_t low = 0;
    int64_t high = n;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (values[middle] < value) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

/* Locate `value` along an axis of n vertices whose profile `values` is
 * ascending (the axis itself descends when `descending`): the cell's
 * first vertex along the axis in *cell, the local coordinate in *xi (NaN
 * for a value that is not finite). Returns whether the value lies within
 * the axis's extent; outside it the edge cell is extended. */
SPART_MATH_FUNCTION int spart_multilinear_locate_axis(const double *values, int64_t n,
                                                      int descending, double value, int64_t *cell,
                                                      double *xi)
{
    int inside = values[0] <= value && value <= values[n - 1];
    int64_t j = spart_search_sorted_left(values, n, value) - 1;
    if (j < 0) {
        j = 0;
    } else if (j > n - 2) {
        j = n - 2;
    }
    double fraction = (value - values[j]) / (values[j + 1] - values[j]);
    if (!isfinite(value)) {
        fraction = NAN;
    }
    if (descending) {
        j = n - 2 - j;
        fraction = 1 - fraction;
    }
    *cell = j;
    *xi = fraction;
    return inside;
}

/* The weight of corner `corner` at local coordinates xi, multiplied up
 * from 1 in axis order as the reference does. */
SPART_MATH_FUNCTION double spart_multilinear_corner_weight(int corner, int num_axes,
                                                           const double *xi)
{
    double weight = 1.0;
    for (int m = 0; m < num_axes; m++) {
        if ((corner >> m) & 1) {
            weight *= xi[m];
        } else {
            weight *= 1 - xi[m];
        }
    }
    return weight;
}

#endif /* SPART_MULTILINEAR_MATH_H */
