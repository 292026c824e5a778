/*
 * src/weights/weights_device.h: weights built on a CUDA device (issue 30),
 * the contract between the device driver (src/weights/weights_build_device.c,
 * the checks, shared with the host; src/weights/weights_device_cuda.c, the
 * CUDA glue) and the device builders (kernels/weights_*.cu).
 *
 * Weights on a device. A struct spart_weights whose cuda_device is >= 0:
 * its shapes, axes and offsets (num_elements + 1) are host memory as for
 * any weights; its indices_input, indices_output (int64) and values
 * (float64) are device memory of that device, each element's entries
 * contiguous at offsets[e] .. offsets[e+1]-1, in element order, the same
 * entries in the same order, bit for bit, as spart_weights_build gives on
 * the host. spart_weights_free frees them through weights->release_device.
 *
 * One element on the device. The driver lays the element's resampled
 * coordinates out on the host exactly as the host driver does (dense C
 * order over the resampled axes, ascending axis order: x[i * num_y + j]
 * in 2-D), perturbs them where the host would, uploads them, and hands a
 * builder a spart_device_element of device pointers. Every builder then
 * works in two passes on the context's stream, stream-ordered, no atomics
 * in a result:
 *
 *   1. count: the number of entries of each "unit" of the element (an
 *      input cell for conservative weights, an output point for
 *      multilinear ones; a builder whose counts are known, 2^N a point,
 *      skips the pass);
 *   2. the driver scans the counts (CUB, an exclusive scan in unit order)
 *      and copies the total to the host (the one synchronisation of an
 *      element), makes room, and the builder writes unit u's entries at
 *      its start, in the host build's order within the unit.
 *
 * The order of units and of entries within a unit is the host's order of
 * the element's entries (after coalescing when options->coalesce is set):
 * builders that the host coalesces by sorting (multilinear: 2^N entries a
 * point in point order) are sorted on the device by (input, output) with
 * CUB's stable radix sort instead; builders whose host list is already
 * sorted and unique (1-D, clipping) write it in that order.
 *
 * Elements, joined: element e's entries are written at offsets[e], so the
 * weights are the concatenation in element order, whatever the order in
 * which the device finished them.
 *
 * The 2-D clipping kernels of kernels/weights_conservative_2d_*.cu
 * (src/weights/weights_clip_device.h, their own contract) follow the same
 * two passes through their count and write entry points, with the input
 * cell as the unit; the lattice is decided on the host
 * (spart_host_grid_is_lattice) as the host driver decides it.
 *
 * Arithmetic: what host and device must agree on is written once, in
 * headers both compile (SPART_MATH_FUNCTION, as src/core/exp_math.h):
 * src/weights/multilinear_math.h (locating a point on a rectilinear grid,
 * the corner weights), src/weights/conservative_1d_math.h (the pieces of
 * one input cell). Host C is compiled with -ffp-contract=off, CUDA with
 * --fmad=false: no contraction on either side, fma only where written.
 */
#ifndef SPART_WEIGHTS_DEVICE_H
#define SPART_WEIGHTS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One element's grids in device memory. */
typedef struct spart_device_element {
    int num_coordinates;    /* resampled dimensions: 1 to 3 */
    const double *input[3]; /* device: coordinate c of every input vertex, dense C order */
    int64_t shape_input[3]; /* input vertices along each resampled axis */
    /* device: coordinate c of every output vertex (conservative) or point
     * (multilinear), dense C order */
    const double *output[3];
    int64_t shape_output[3];
    int64_t num_points; /* multilinear: output points (the product of shape_output) */
    /* device: one factor per input cell (conservative) or vertex
     * (multilinear), C order, or NULL */
    const double *weights_input;
} spart_device_element;

/* Where a device builder writes: the element's first slot in each array. */
typedef struct spart_device_entries_out {
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
} spart_device_entries_out;

/* ---- multilinear (kernels/weights_multilinear.cu) ---------------------
 * A rectilinear input grid only (the host decides it, as
 * spart_host_weights_multilinear does): profile[m] (device) holds the
 * vertices along axis m ascending, coordinate[m] which coordinate varies
 * along axis m, descending[m] whether it decreases. Writes 2^N entries a
 * point in point order (slot p * 2^N + corner), as the host kernel; counts
 * the points outside the grid into *outside (device, one int64, summed in
 * block order: no atomics). nan_outside: bounds = NaN. `scratch` holds
 * spart_cuda_weights_multilinear_scratch(num_points) bytes. */
typedef struct spart_device_rectilinear {
    const double *profile[3];
    int coordinate[3];
    int descending[3];
} spart_device_rectilinear;

size_t spart_cuda_weights_multilinear_scratch(int64_t num_points);
int spart_cuda_weights_multilinear(const spart_device_element *element,
                                   const spart_device_rectilinear *grid, int nan_outside,
                                   spart_device_entries_out out, int64_t *outside, void *scratch,
                                   size_t scratch_bytes, void *stream);

/* Multilinear on a curvilinear input grid: `tree` the host's hierarchy of
 * boxes (src/weights/multilinear_curvilinear_math.h) with its boxes in
 * device memory, searched on the device with the host's code; extrapolate
 * as the host kernel (bounds other than NaN). The rest as above. Trees of
 * more than SPART_DEVICE_TREE_LEVELS levels are searched on the host. */
#define SPART_DEVICE_TREE_LEVELS 24
struct box_tree;
int spart_cuda_weights_multilinear_curvilinear(const spart_device_element *element,
                                               const struct box_tree *tree, int nan_outside,
                                               int extrapolate, spart_device_entries_out out,
                                               int64_t *outside, void *scratch,
                                               size_t scratch_bytes, void *stream);

/* ---- conservative 1-D (kernels/weights_conservative_1d.cu) ------------
 * A batch of elements at once: element k's input grid at x_input + k *
 * stride_input (stride 0: one grid all share), likewise its output grid
 * and its weights_input (NULL: none). Unit k * (num_input - 1) + u is
 * input cell u of element k: in the caller's order when coalesced (the
 * host's sorted list: input ascending, then output ascending), else cell
 * u of the input's ascending view (the walk's order). Each grid is read
 * backwards when it does not ascend end to end, as the host walk reads it
 * (decided per grid on the device, spart_c1d_reversed). Grids must be
 * monotonic (the driver checks on the host; others go through the host
 * walk and are copied). count writes counts[unit]; write writes unit
 * u's pieces at starts[u]. */
typedef struct spart_device_grids_1d {
    int64_t num_elements;
    const double *x_input;
    int64_t num_input;
    int64_t stride_input;
    const double *x_output;
    int64_t num_output;
    int64_t stride_output;
    const double *weights_input;
    int64_t stride_weights;
} spart_device_grids_1d;

int spart_cuda_weights_conservative_1d_count(const spart_device_grids_1d *grids, int coalesced,
                                             int64_t *counts, void *stream);
int spart_cuda_weights_conservative_1d_write(const spart_device_grids_1d *grids, int coalesced,
                                             const int64_t *starts, spart_device_entries_out out,
                                             void *stream);

/* ---- the driver's device helpers (kernels/weights_device.cu) ----------- */

/* Bytes of scratch for scanning n counts, and the exclusive scan of
 * counts[0..n-1] into starts[0..n] (starts[n] the total). */
size_t spart_cuda_weights_scan_scratch(int64_t n);
/* picked[k] = values[k * stride] for k = 0 .. count - 1 (the starts of
 * each element of a batch, from the scanned counts of its units). */
int spart_cuda_weights_pick(const int64_t *values, int64_t stride, int64_t count, int64_t *picked,
                            void *stream);
int spart_cuda_weights_scan(const int64_t *counts, int64_t n, int64_t *starts, void *scratch,
                            size_t scratch_bytes, void *stream);

/* Bytes of scratch for sorting n entries, and the stable sort of one
 * element's n entries by (input, output) (the host's coalescing order;
 * pairs are unique for the builders that use it, so nothing merges).
 * size_input, size_output: the element's cells (the key is
 * input * size_output + output; the caller checks their product fits 63
 * bits). */
size_t spart_cuda_weights_sort_scratch(int64_t n);
int spart_cuda_weights_sort(spart_device_entries_out entries, int64_t n, int64_t size_input,
                            int64_t size_output, void *scratch, size_t scratch_bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_WEIGHTS_DEVICE_H */
