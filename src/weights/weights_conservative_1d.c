/*
 * src/weights/weights_conservative_1d.c: first-order conservative weights between
 * two 1-D grids, by the merge walk of regridding 3.6.0
 * (_weights_conservative_1d.py).
 *
 * The input grid is swept, vertex after vertex, through the cells of the
 * output grid. Both are read in ascending order (a descending grid is read
 * backwards), and each piece of an input cell lying in one output cell
 * gives one entry: the piece's length over the input cell's length, times
 * weights_input. For ascending grids the walk performs the reference's
 * operations in the reference's order, so every weight is bitwise the
 * reference's.
 *
 * Deliberate differences (docs/differences-clip.md): the reference reports
 * ascending cell k of a descending grid as -k-1 (a wrap-around index),
 * spart as its real flat index; the reference divides by the length of the
 * mirror cell -k-1 of a descending input, spart by the length of the input
 * cell itself; an input cell of zero length gives no entry (the reference
 * raises ZeroDivisionError); and an output cell of zero length receives
 * nothing (the reference gives it the next piece of the input). On
 * strictly monotonic grids none of the last two arises, and on ascending
 * ones the weights are the reference's, bit for bit.
 *
 * The arithmetic is src/weights/conservative_1d_math.h, shared with the
 * CUDA twin kernels/weights_conservative_1d.cu (which finds each input
 * cell's pieces on its own, on monotonic grids).
 */
#include "weights/conservative_1d_math.h"
#include "weights/weights_kernels.h"

/* A grid of vertices read in ascending order: vertex k of the view is
 * x[k], or x[num - 1 - k] when the grid descends. */
typedef struct ascending_grid {
    const double *x;
    int64_t num;
    int reversed;
} ascending_grid;

static ascending_grid ascending_view(const double *x, int64_t num)
{
    ascending_grid grid = {x, num, spart_c1d_reversed(x, num)};
    return grid;
}

static double vertex_at(const ascending_grid *grid, int64_t k)
{
    return spart_c1d_vertex(grid->x, grid->num, grid->reversed, k);
}

/* The flat index, in the caller's order, of cell k of the view. */
static int64_t cell_index(const ascending_grid *grid, int64_t k)
{
    return spart_c1d_cell_index(grid->num, grid->reversed, k);
}

/* The length of cell k of the view, as the reference's cell_length
 * computes it on the ascending copy. This is also the length of the
 * caller's cell cell_index(grid, k), which is what makes the divisor right
 * for descending grids. */
static double cell_length(const ascending_grid *grid, int64_t k)
{
    return vertex_at(grid, k + 1) - vertex_at(grid, k);
}

/* The first vertex index whose vertex is greater than `point`, by the
 * reference's bisection (index_of_point), on the ascending view. */
static int64_t index_above(const ascending_grid *grid, double point)
{
    int64_t left = 0;
    int64_t right = grid->num;
    while (right - left > 1) {
        int64_t middle = (left + right) / 2;
        if (vertex_at(grid, middle) > point) {
            right = middle;
        } else {
            left = middle;
        }
    }
    return right;
}

spart_status spart_host_weights_conservative_1d(const double *x_input, int64_t num_input,
                                                const double *x_output, int64_t num_output,
                                                const double *weights_input, spart_triples *triples)
{
    /* a grid of fewer than two vertices has no cells: nothing overlaps */
    if (num_input < 2 || num_output < 2) {
        return SPART_OK;
    }
    const ascending_grid sweep = ascending_view(x_input, num_input);
    const ascending_grid fixed = ascending_view(x_output, num_output);
    const double fixed_left = vertex_at(&fixed, 0);
    const double fixed_right = vertex_at(&fixed, num_output - 1);

    /* Where the walk starts: inside output cell `index_fixed`, or outside
     * the output grid (below it, or past it). */
    int64_t index_sweep = 0;
    int64_t index_fixed = 0;
    int inside = 0;
    double point_1 = vertex_at(&sweep, 0);
    if (fixed_left == point_1) {
        inside = 1;
    } else if (fixed_left < point_1 && point_1 < fixed_right) {
        inside = 1;
        index_fixed = index_above(&fixed, point_1) - 1;
    }

    while (index_sweep < num_input - 1) {
        double point_2 = vertex_at(&sweep, index_sweep + 1);
        if (!inside) {
            /* enter the output grid at its first vertex, if this piece
             * reaches it; otherwise move on to the next input vertex */
            if (point_1 < fixed_left && fixed_left < point_2) {
                point_2 = fixed_left;
                index_fixed = 0;
                inside = 1;
            } else if (fixed_left == point_2) {
                index_sweep += 1;
                index_fixed = 0;
                inside = 1;
            } else {
                index_sweep += 1;
            }
        } else {
            /* An output cell of zero length (a repeated vertex) holds none
             * of the input: step past it. The reference gives it the next
             * piece instead. Never happens on strictly monotonic grids. */
            while (index_fixed < num_output - 1 &&
                   !(vertex_at(&fixed, index_fixed + 1) > point_1)) {
                index_fixed += 1;
            }
            if (index_fixed >= num_output - 1) {
                break;
            }
            /* the piece from point_1 ends at the next vertex of either
             * grid; it belongs to the cells we are in before advancing */
            const int64_t cell_sweep = index_sweep;
            const int64_t cell_fixed = index_fixed;
            const double point_fixed = vertex_at(&fixed, index_fixed + 1);
            if (point_1 < point_fixed && point_fixed < point_2) {
                index_fixed += 1;
                point_2 = point_fixed;
            } else if (point_fixed == point_2) {
                index_fixed += 1;
                index_sweep += 1;
            } else {
                index_sweep += 1;
            }
            const int64_t index_input = cell_index(&sweep, cell_sweep);
            const int64_t index_output = cell_index(&fixed, cell_fixed);
            const double length_input = cell_length(&sweep, cell_sweep);
            /* an input cell of zero length has no fraction to give (the
             * reference divides by zero and raises ZeroDivisionError) */
            if (length_input != 0) {
                double ratio =
                    spart_c1d_ratio(point_1, point_2, length_input, weights_input != NULL,
                                    weights_input != NULL ? weights_input[index_input] : 0.0);
                if (spart_triples_append(triples, index_input, index_output, ratio) != 0) {
                    return SPART_ERROR_OUT_OF_MEMORY;
                }
            }
            if (!(0 <= index_fixed && index_fixed < num_output - 1)) {
                break;
            }
        }
        point_1 = point_2;
    }
    return SPART_OK;
}
