/*
 * kernels/weights_conservative_2d_clip.cuh: what the three files of the
 * device clipping share (kernels/weights_conservative_2d_clip.cu, the entry
 * points of src/weights/weights_clip_device.h; _lattice.cu and _general.cu,
 * the kernels): the state a count leaves for the write, and the launches
 * of each kernel's two passes.
 */
#ifndef SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_CUH
#define SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "weights/clip_lattice_math.h"
#include "weights/clip_polygon_math.h"
#include "weights/weights_clip_device.h"

/* The uniform grid of buckets over the usable output cells' boxes:
 * bucket (a, b) lists cells cell_index[start[a * num_y + b] ..
 * start[a * num_y + b + 1] - 1], ascending. */
struct spart_clip_device_buckets {
    double origin_x, origin_y;
    double scale_x, scale_y; /* buckets per unit length */
    int64_t num_x, num_y;
    int64_t *start;      /* device, num_x * num_y + 1 */
    int64_t *cell_index; /* device */
};

struct spart_device_clip_counts {
    spart_device_clip_grid input, output;
    int lattice;
    const double *weights_input;
    int64_t num_cells_input;
    int64_t *starts; /* device, num_cells_input + 1: each input cell's first slot */
    /* onto a lattice: the input cells that walk in columns, a warp each
     * (device, in cell order, NULL for none), and their number */
    int64_t *columns;
    int64_t num_columns;
    /* onto any grid: the prepared output cells (device) and their buckets */
    spart_clip_output_cell *cells;
    spart_clip_device_buckets buckets;
};

/* starts[0 .. n] = the exclusive scan (CUB) of counts[0 .. n-1] (counts
 * has n + 1 slots; counts[n] is set to 0 first, so that starts[n] is the
 * total), and the total copied to *total on the host (the stream is
 * synchronised). */
cudaError_t spart_clip_scan_to_host(int64_t *counts, int64_t n, int64_t *starts, int64_t *total,
                                    cudaStream_t stream);

/* The counts of every input cell into counts[0 .. num_cells_input - 1]
 * (the list of the cells that walk in columns kept in state for the
 * write). */
cudaError_t spart_clip_lattice_count(spart_device_clip_counts *state, int64_t *counts,
                                     cudaStream_t stream);
cudaError_t spart_clip_lattice_write(const spart_device_clip_counts *state, int64_t *indices_input,
                                     int64_t *indices_output, double *values, cudaStream_t stream);

/* Prepare the output cells and their buckets into state (cells, buckets);
 * on failure what was allocated stays in state for the caller to free. */
cudaError_t spart_clip_general_prepare(spart_device_clip_counts *state, cudaStream_t stream);
cudaError_t spart_clip_general_count(const spart_device_clip_counts *state, int64_t *counts,
                                     cudaStream_t stream);
cudaError_t spart_clip_general_write(const spart_device_clip_counts *state, int64_t *indices_input,
                                     int64_t *indices_output, double *values, cudaStream_t stream);

#endif /* SPART_WEIGHTS_CONSERVATIVE_2D_CLIP_CUH */
