/*
 * kernels/weights_conservative_1d.cu: conservative 1-D weights on the
 * device, the CUDA twin of src/weights/weights_conservative_1d.c (the host
 * walk). Contract: src/weights/weights_device.h; the arithmetic, shared
 * with the host: src/weights/conservative_1d_math.h.
 *
 * A thread an input cell (a unit) of a batch of elements: the count pass
 * finds the number of pieces of its cell, the write pass writes them at
 * the cell's start (the exclusive scan of the counts, in unit order:
 * element after element, cell after cell). Unit u is input cell
 * u in the caller's order when the list is coalesced (the host's sorted
 * order: input ascending, then output ascending, so the pieces of a cell
 * over a reversed output grid are written backwards), or cell u of the
 * input's ascending view when it is not (the walk's order). Each thread
 * writes only its own slots: no atomics, the same arrays every run.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "weights/conservative_1d_math.h"
#include "weights/weights_device.h"

#include "launch.cuh"

namespace
{

/* The grids of one element as a unit's thread reads them. */
struct grids_1d {
    const double *x_input;
    int64_t num_input;
    int reversed_input;
    const double *x_output;
    int64_t num_output;
    int reversed_output;
    const double *weights_input;
};

/* Unit `unit` of the batch: its element's grids, and its cell u. */
__device__ __forceinline__ grids_1d element_grids(const spart_device_grids_1d &b, int64_t unit,
                                                  int64_t *u)
{
    const int64_t cells = b.num_input - 1;
    const int64_t k = unit / cells;
    *u = unit - k * cells;
    grids_1d g;
    g.x_input = b.x_input + k * b.stride_input;
    g.num_input = b.num_input;
    g.reversed_input = spart_c1d_reversed(g.x_input, g.num_input);
    g.x_output = b.x_output + k * b.stride_output;
    g.num_output = b.num_output;
    g.reversed_output = spart_c1d_reversed(g.x_output, g.num_output);
    g.weights_input = b.weights_input != NULL ? b.weights_input + k * b.stride_weights : NULL;
    return g;
}

/* The view cell of unit u. */
__device__ __forceinline__ int64_t view_cell(const grids_1d &g, int coalesced, int64_t u)
{
    return coalesced ? spart_c1d_cell_index(g.num_input, g.reversed_input, u) : u;
}

__global__ void count_pieces(spart_device_grids_1d b, int coalesced, int64_t *counts)
{
    const int64_t num_units = b.num_elements * (b.num_input - 1);
    for (int64_t unit = spart_launch::first_item(); unit < num_units;
         unit += spart_launch::item_stride()) {
        int64_t u;
        grids_1d g = element_grids(b, unit, &u);
        int64_t v = view_cell(g, coalesced, u);
        spart_c1d_cursor cursor = spart_c1d_begin(g.x_input, g.num_input, g.reversed_input,
                                                  g.x_output, g.num_output, g.reversed_output, v);
        int64_t count = 0;
        while (!cursor.done) {
            double point_2;
            int64_t cell;
            (void)spart_c1d_next(g.x_output, g.num_output, g.reversed_output, &cursor, &point_2,
                                 &cell);
            count += 1;
        }
        counts[unit] = count;
    }
}

__global__ void write_pieces(spart_device_grids_1d b, int coalesced, const int64_t *starts,
                             spart_device_entries_out out)
{
    const int64_t num_units = b.num_elements * (b.num_input - 1);
    for (int64_t unit = spart_launch::first_item(); unit < num_units;
         unit += spart_launch::item_stride()) {
        int64_t u;
        grids_1d g = element_grids(b, unit, &u);
        int64_t v = view_cell(g, coalesced, u);
        int64_t start = starts[unit];
        int64_t count = starts[unit + 1] - start;
        int backwards = coalesced && g.reversed_output;
        int64_t index_input = spart_c1d_cell_index(g.num_input, g.reversed_input, v);
        int has_factor = g.weights_input != NULL;
        double factor = has_factor ? g.weights_input[index_input] : 0.0;
        spart_c1d_cursor cursor = spart_c1d_begin(g.x_input, g.num_input, g.reversed_input,
                                                  g.x_output, g.num_output, g.reversed_output, v);
        double length = cursor.length;
        for (int64_t piece = 0; !cursor.done && piece < count; piece++) {
            double point_2;
            int64_t cell;
            double point_1 = spart_c1d_next(g.x_output, g.num_output, g.reversed_output, &cursor,
                                            &point_2, &cell);
            int64_t slot = start + (backwards ? count - 1 - piece : piece);
            out.indices_input[slot] = index_input;
            out.indices_output[slot] = spart_c1d_cell_index(g.num_output, g.reversed_output, cell);
            out.values[slot] = spart_c1d_ratio(point_1, point_2, length, has_factor, factor);
        }
    }
}

} // namespace

extern "C" int spart_cuda_weights_conservative_1d_count(const spart_device_grids_1d *grids,
                                                        int coalesced, int64_t *counts,
                                                        void *stream)
{
    return (int)spart_launch::launch_items(count_pieces,
                                           grids->num_elements * (grids->num_input - 1),
                                           (cudaStream_t)stream, *grids, coalesced, counts);
}

extern "C" int spart_cuda_weights_conservative_1d_write(const spart_device_grids_1d *grids,
                                                        int coalesced, const int64_t *starts,
                                                        spart_device_entries_out out, void *stream)
{
    return (int)spart_launch::launch_items(write_pieces,
                                           grids->num_elements * (grids->num_input - 1),
                                           (cudaStream_t)stream, *grids, coalesced, starts, out);
}
