/*
 * src/weights/clip_polygon_math.h: the arithmetic of the conservative 2-D
 * weights between any two logically rectangular grids, written once for
 * the host kernel (src/weights/weights_conservative_2d_clip_general.c) and
 * its device twin (kernels/weights_conservative_2d_general.cu): an input
 * cell, a quadrilateral of any shape and orientation, clipped
 * (Sutherland-Hodgman) against an output cell made counterclockwise, as a
 * whole when it is convex, else as the two triangles of its interior
 * diagonal (weights_conservative_2d_clip_general.c says why that is exact
 * and needs no jitter). Every area, every side-of-line test and every
 * decision (which output cells can be used, which are convex, which
 * overlaps are zero) is computed here by the same operations in the same
 * order on both, so both give the same entries bit for bit.
 *
 * Arithmetic: +, -, *, / and comparisons only, each rounded on its own
 * (host: -ffp-contract=off, no fast-math; CUDA: --fmad=false,
 * --prec-div=true); isfinite is the only library call.
 *
 * Static inline, no state, no allocation (a polygon is a fixed array of
 * SPART_CLIP_SLOTS vertices). A CUDA file includes this header with
 * SPART_MATH_FUNCTION defined as `static __host__ __device__ inline`.
 */
#ifndef SPART_CLIP_POLYGON_MATH_H
#define SPART_CLIP_POLYGON_MATH_H

#include <math.h>
#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* Vertex slots of a polygon being clipped. Clipping an n-gon against a
 * half-plane gives at most n + c/2 vertices, c <= n being the (even)
 * number of edges that cross the boundary, so a quadrilateral, of any
 * shape, has at most 6, 9, 13 and 19 vertices after four clips. */
#define SPART_CLIP_SLOTS 20

/* A polygon of at most SPART_CLIP_SLOTS vertices (x[k], y[k]). */
typedef struct spart_clip_polygon {
    int num;
    double x[SPART_CLIP_SLOTS];
    double y[SPART_CLIP_SLOTS];
} spart_clip_polygon;

/* An output cell prepared for clipping. The box comes first, since most
 * candidates are rejected by it alone. */
typedef struct spart_clip_output_cell {
    double box[4]; /* x low, x high, y low, y high */
    /* corners counterclockwise; when the cell is not convex, rotated so
     * that the diagonal from corner 0 to corner 2 is interior */
    double x[4];
    double y[4];
    int convex; /* 1: one convex region; 0: triangles (0, 1, 2) and (0, 2, 3) */
    /* the first bucket (lowest along both axes) that the box touches (the
     * host's bucket grid) */
    int64_t first_bucket_x, first_bucket_y;
} spart_clip_output_cell;

/* The smaller and larger of two numbers (fmin and fmax are calls where
 * NaN must be honoured; boxes with NaN are never used). */
SPART_MATH_FUNCTION double spart_clip_smaller(double a, double b)
{
    return b < a ? b : a;
}

SPART_MATH_FUNCTION double spart_clip_larger(double a, double b)
{
    return b > a ? b : a;
}

/* Twice the signed area of the triangle (a, b, c): positive when the turn
 * a -> b -> c is counterclockwise. */
SPART_MATH_FUNCTION double spart_clip_turn(double ax, double ay, double bx, double by, double cx,
                                           double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* The signed area of a polygon, the shoelace sum halved once at the end. */
SPART_MATH_FUNCTION double spart_clip_area_signed(const spart_clip_polygon *p)
{
    double sum = 0.0;
    for (int k = 0; k < p->num; k++) {
        const int next = k + 1 == p->num ? 0 : k + 1;
        sum += p->x[k] * p->y[next] - p->x[next] * p->y[k];
    }
    return sum / 2;
}

/* Clip `in` against the half-plane left of the line a -> b (turn >= 0)
 * into `out`, Sutherland-Hodgman style, given each vertex's turn in
 * `side`. A vertex on the kept side or on the line is kept; an edge whose
 * ends lie strictly on opposite sides adds its crossing. An edge with one
 * end on the line adds nothing more, that end being kept already, so
 * crossings are never rounded copies of vertices. Winding order is kept. */
SPART_MATH_FUNCTION void spart_clip_halfplane(const spart_clip_polygon *in, const double *side,
                                              spart_clip_polygon *out)
{
    int num = 0;
    for (int k = 0; k < in->num; k++) {
        const int next = k + 1 == in->num ? 0 : k + 1;
        const double side_1 = side[k];
        const double side_2 = side[next];
        if (side_1 >= 0) {
            out->x[num] = in->x[k];
            out->y[num] = in->y[k];
            num++;
        }
        if ((side_1 > 0 && side_2 < 0) || (side_1 < 0 && side_2 > 0)) {
            const double t = side_1 / (side_1 - side_2);
            out->x[num] = in->x[k] + t * (in->x[next] - in->x[k]);
            out->y[num] = in->y[k] + t * (in->y[next] - in->y[k]);
            num++;
        }
    }
    out->num = num;
}

/* The signed area of the part of `subject` inside the convex polygon of
 * `num_region` counterclockwise vertices (region_x[k], region_y[k]).
 * `buffer` holds two polygons of scratch. A half-plane that holds every
 * vertex is not clipped against (nothing would change), and one that holds
 * none in its interior ends the clipping with zero area. */
SPART_MATH_FUNCTION double spart_clip_clipped_area(const spart_clip_polygon *subject,
                                                   const double *region_x, const double *region_y,
                                                   int num_region, spart_clip_polygon buffer[2])
{
    const spart_clip_polygon *p = subject;
    int next_buffer = 0;
    for (int e = 0; e < num_region; e++) {
        const int f = e + 1 == num_region ? 0 : e + 1;
        if (region_x[e] == region_x[f] && region_y[e] == region_y[f]) {
            continue; /* an edge of no length (a cell with two equal corners) bounds nothing */
        }
        double side[SPART_CLIP_SLOTS];
        int any_inside = 0;
        int any_outside = 0;
        for (int k = 0; k < p->num; k++) {
            side[k] = spart_clip_turn(region_x[e], region_y[e], region_x[f], region_y[f], p->x[k],
                                      p->y[k]);
            any_inside |= side[k] > 0;
            any_outside |= side[k] < 0;
        }
        if (!any_inside) {
            return 0.0; /* on or outside the line: no area (NaN: none either) */
        }
        if (any_outside) {
            spart_clip_halfplane(p, side, &buffer[next_buffer]);
            p = &buffer[next_buffer];
            next_buffer = 1 - next_buffer;
        }
    }
    return spart_clip_area_signed(p);
}

/* The signed area of the intersection of `subject` with output cell `cell`,
 * both shifted by (-shift_x, -shift_y). */
SPART_MATH_FUNCTION double spart_clip_overlap_area(const spart_clip_polygon *subject,
                                                   const spart_clip_output_cell *cell,
                                                   double shift_x, double shift_y,
                                                   spart_clip_polygon buffer[2])
{
    double x[4], y[4];
    for (int k = 0; k < 4; k++) {
        x[k] = cell->x[k] - shift_x;
        y[k] = cell->y[k] - shift_y;
    }
    if (cell->convex) {
        return spart_clip_clipped_area(subject, x, y, 4, buffer);
    }
    const double second_x[3] = {x[0], x[2], x[3]};
    const double second_y[3] = {y[0], y[2], y[3]};
    const double first = spart_clip_clipped_area(subject, x, y, 3, buffer);
    return first + spart_clip_clipped_area(subject, second_x, second_y, 3, buffer);
}

/* Output cell (a, b) of a grid with num_y vertices along axis 1, prepared
 * for clipping: its box, its corners counterclockwise, and whether it is
 * convex or, if not, which diagonal cuts it into two triangles. Returns 0
 * for a cell of zero (or non-finite) area, which overlaps nothing. */
SPART_MATH_FUNCTION int spart_clip_output_cell_prepare(const double *x, const double *y,
                                                       int64_t num_y, int64_t a, int64_t b,
                                                       spart_clip_output_cell *cell)
{
    const int64_t corner[4] = {a * num_y + b, (a + 1) * num_y + b, (a + 1) * num_y + b + 1,
                               a * num_y + b + 1};
    spart_clip_polygon quad;
    quad.num = 4;
    for (int k = 0; k < 4; k++) {
        quad.x[k] = x[corner[k]] - x[corner[0]];
        quad.y[k] = y[corner[k]] - y[corner[0]];
    }
    const double area = spart_clip_area_signed(&quad);
    cell->first_bucket_x = 0;
    cell->first_bucket_y = 0;
    if (!(area != 0) || !isfinite(area)) {
        return 0;
    }
    /* counterclockwise: a clockwise cell is walked backwards from corner 0 */
    for (int k = 0; k < 4; k++) {
        const int from = area > 0 ? k : (4 - k) % 4;
        cell->x[k] = x[corner[from]];
        cell->y[k] = y[corner[from]];
    }
    /* the turn at each corner; a reflex corner turns clockwise */
    double corner_turn[4];
    for (int k = 0; k < 4; k++) {
        const int previous = (k + 3) % 4;
        const int next = (k + 1) % 4;
        corner_turn[k] = spart_clip_turn(cell->x[previous], cell->y[previous], cell->x[k],
                                         cell->y[k], cell->x[next], cell->y[next]);
    }
    cell->convex =
        corner_turn[0] >= 0 && corner_turn[1] >= 0 && corner_turn[2] >= 0 && corner_turn[3] >= 0;
    if (!cell->convex) {
        /* The diagonal 0-2 is interior when the turns at corners 1 and 3
         * (those of the triangles it makes) are both counterclockwise, as
         * when the reflex corner is 0 or 2; otherwise the diagonal 1-3 is.
         * Taking the diagonal whose smaller turn is the larger decides
         * robustly, and then corner 1 becomes corner 0 if needed. */
        const double turn_02 = spart_clip_smaller(corner_turn[1], corner_turn[3]);
        const double turn_13 = spart_clip_smaller(corner_turn[0], corner_turn[2]);
        if (turn_13 > turn_02) {
            const double first_x = cell->x[0];
            const double first_y = cell->y[0];
            for (int k = 0; k < 3; k++) {
                cell->x[k] = cell->x[k + 1];
                cell->y[k] = cell->y[k + 1];
            }
            cell->x[3] = first_x;
            cell->y[3] = first_y;
        }
    }
    cell->box[0] = spart_clip_smaller(spart_clip_smaller(cell->x[0], cell->x[1]),
                                      spart_clip_smaller(cell->x[2], cell->x[3]));
    cell->box[1] = spart_clip_larger(spart_clip_larger(cell->x[0], cell->x[1]),
                                     spart_clip_larger(cell->x[2], cell->x[3]));
    cell->box[2] = spart_clip_smaller(spart_clip_smaller(cell->y[0], cell->y[1]),
                                      spart_clip_smaller(cell->y[2], cell->y[3]));
    cell->box[3] = spart_clip_larger(spart_clip_larger(cell->y[0], cell->y[1]),
                                     spart_clip_larger(cell->y[2], cell->y[3]));
    return isfinite(cell->box[0]) && isfinite(cell->box[1]) && isfinite(cell->box[2]) &&
           isfinite(cell->box[3]);
}

/* Whether two boxes overlap with positive area (boxes that only touch
 * cannot hold an overlap of positive area). */
SPART_MATH_FUNCTION int spart_clip_boxes_overlap(const double *a, const double *b)
{
    return a[0] < b[1] && b[0] < a[1] && a[2] < b[3] && b[2] < a[3];
}

/* Input cell (i, j) of a grid with num_y vertices along axis 1 as the
 * subject of clipping: its corners in winding order ((i,j), (i+1,j),
 * (i+1,j+1), (i,j+1)) relative to corner 0, whose coordinates go to
 * *shift_x, *shift_y (the output cells are shifted alike: the shoelace
 * then sums products of small numbers, and equal vertices of the two
 * grids stay equal), and its box in absolute coordinates. Returns its
 * signed area (0 or non-finite: a cell that overlaps nothing). */
SPART_MATH_FUNCTION double spart_clip_input_cell_prepare(const double *x, const double *y,
                                                         int64_t num_y, int64_t i, int64_t j,
                                                         spart_clip_polygon *subject, double *box,
                                                         double *shift_x, double *shift_y)
{
    const int64_t corner[4] = {i * num_y + j, (i + 1) * num_y + j, (i + 1) * num_y + j + 1,
                               i * num_y + j + 1};
    *shift_x = x[corner[0]];
    *shift_y = y[corner[0]];
    subject->num = 4;
    box[0] = (double)INFINITY;
    box[1] = -(double)INFINITY;
    box[2] = (double)INFINITY;
    box[3] = -(double)INFINITY;
    for (int k = 0; k < 4; k++) {
        const double xk = x[corner[k]];
        const double yk = y[corner[k]];
        subject->x[k] = xk - *shift_x;
        subject->y[k] = yk - *shift_y;
        box[0] = spart_clip_smaller(box[0], xk);
        box[1] = spart_clip_larger(box[1], xk);
        box[2] = spart_clip_smaller(box[2], yk);
        box[3] = spart_clip_larger(box[3], yk);
    }
    return spart_clip_area_signed(subject);
}

/* The entry of an overlap: its area over the input cell's (both carry
 * the input cell's orientation: the ratio is positive, and exactly 1 for
 * an output cell equal to the input), times weights_input. */
SPART_MATH_FUNCTION double spart_clip_overlap_value(double area, double area_input,
                                                    double weight_input)
{
    return area / area_input * weight_input;
}

#endif /* SPART_CLIP_POLYGON_MATH_H */
