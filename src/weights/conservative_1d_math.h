/*
 * src/weights/conservative_1d_math.h: the arithmetic of conservative 1-D
 * weights that the host walk (src/weights/weights_conservative_1d.c) and
 * its CUDA twin (kernels/weights_conservative_1d.cu) share, written once:
 * reading a grid in ascending order, the index and length of a cell, and
 * the weight of a piece, (point_2 - point_1) / length_input, then times
 * weights_input (no fma; the reference's order).
 *
 * The device does not walk: each input cell finds its own pieces
 * (spart_c1d_begin, spart_c1d_next). On grids that ascend or descend end to end
 * without turning back (monotonic; repeated vertices allowed), the walk
 * enters input cell v (of the ascending view) at point_1 = its first
 * vertex, or at the output grid's first vertex when the cell starts below
 * it, in the output cell whose upper vertex is the first above point_1;
 * every piece ends at the next vertex of either grid; so the pieces of a
 * cell depend on that cell alone, and both sides compute the same points
 * and the same quotients. Grids that turn back are walked on the host.
 *
 * Static inline; a CUDA file includes this header with SPART_MATH_FUNCTION
 * defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_CONSERVATIVE_1D_MATH_H
#define SPART_CONSERVATIVE_1D_MATH_H

#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* A grid read in ascending order: vertex k of the view is x[k], or
 * x[num - 1 - k] when the grid is reversed. As the reference: anything
 * not strictly ascending end to end is read backwards. */
SPART_MATH_FUNCTION int spart_c1d_reversed(const double *x, int64_t num)
{
    return !(x[0] < x[num - 1]);
}

SPART_MATH_FUNCTION double spart_c1d_vertex(const double *x, int64_t num, int reversed, int64_t k)
{
    return reversed ? x[num - 1 - k] : x[k];
}

/* The flat index, in the caller's order, of cell k of the view. */
SPART_MATH_FUNCTION int64_t spart_c1d_cell_index(int64_t num, int reversed, int64_t k)
{
    return reversed ? num - 2 - k : k;
}

/* The weight of the piece point_1 .. point_2 of an input cell of length
 * length_input (not zero), times its factor when has_factor. */
SPART_MATH_FUNCTION double spart_c1d_ratio(double point_1, double point_2, double length_input,
                                           int has_factor, double factor)
{
    double ratio = (point_2 - point_1) / length_input;
    if (has_factor) {
        ratio = ratio * factor;
    }
    return ratio;
}

/* Where the pieces of one input cell stand: the cell's view index v, its
 * upper end and length, the next piece's start point_1 and output cell j
 * (of the output's view), and whether the pieces are all out. */
typedef struct spart_c1d_cursor {
    double point_1;
    double end;
    double length;
    int64_t j;
    int done;
} spart_c1d_cursor;

/* Start on cell v of the input's ascending view, on monotonic grids (see
 * above). An input cell of zero length has no piece (the walk skips it),
 * nor has one wholly outside the output grid. */
SPART_MATH_FUNCTION spart_c1d_cursor spart_c1d_begin(const double *x_input, int64_t num_input,
                                                     int reversed_input, const double *x_output,
                                                     int64_t num_output, int reversed_output,
                                                     int64_t v)
{
    spart_c1d_cursor cursor;
    double a = spart_c1d_vertex(x_input, num_input, reversed_input, v);
    double b = spart_c1d_vertex(x_input, num_input, reversed_input, v + 1);
    double left = spart_c1d_vertex(x_output, num_output, reversed_output, 0);
    double right = spart_c1d_vertex(x_output, num_output, reversed_output, num_output - 1);
    cursor.end = b;
    cursor.length = b - a;
    cursor.point_1 = a < left ? left : a;
    cursor.j = 0;
    cursor.done = !(cursor.length != 0) || !(cursor.point_1 < b) || !(cursor.point_1 < right);
    if (cursor.done) {
        return cursor;
    }
    /* the output cell: the first whose upper vertex lies above point_1
     * (vertex low is not above it, vertex high is) */
    int64_t low = 0, high = num_output - 1;
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (spart_c1d_vertex(x_output, num_output, reversed_output, middle) > cursor.point_1) {
            high = middle;
        } else {
            low = middle;
        }
    }
    cursor.j = low;
    return cursor;
}

/* The next piece: it ends at *point_2, the next vertex of either grid,
 * and lies in output cell *cell of the view; returns its start. */
SPART_MATH_FUNCTION double spart_c1d_next(const double *x_output, int64_t num_output,
                                          int reversed_output, spart_c1d_cursor *cursor,
                                          double *point_2, int64_t *cell)
{
    double point_1 = cursor->point_1;
    double point_fixed = spart_c1d_vertex(x_output, num_output, reversed_output, cursor->j + 1);
    *cell = cursor->j;
    if (point_fixed < cursor->end) {
        *point_2 = point_fixed;
        cursor->point_1 = point_fixed;
        cursor->j += 1;
        /* output cells of zero length (repeated vertices) hold nothing:
         * step past them, as the walk does */
        while (cursor->j < num_output - 1 &&
               !(spart_c1d_vertex(x_output, num_output, reversed_output, cursor->j + 1) >
                 point_fixed)) {
            cursor->j += 1;
        }
        cursor->done = cursor->j >= num_output - 1;
    } else {
        *point_2 = cursor->end;
        cursor->done = 1;
    }
    return point_1;
}

#endif /* SPART_CONSERVATIVE_1D_MATH_H */
