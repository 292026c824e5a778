/*
 * src/weights/weights_check_device.h: the device checks of
 * kernels/weights_check.cu: of weights' indices, as
 * spart_regridder_create_device_from_arrays
 * (src/operator/regridder_device_arrays.c) calls it; and of grids already
 * in device memory, as spart_weights_build_device_grids
 * (src/weights/weights_device_grids_cuda.c) calls them (the first
 * non-finite coordinate, whether an output grid is a lattice). Exists only in builds with
 * SPART_HAVE_CUDA. Plain C types only, so that the header reads the same in
 * C and in CUDA C++.
 *
 * The device twin of the index check of spart_weights_create_from_arrays
 * (src/weights/weights.c): the same test of every entry, and the same entry named,
 * the first one (lowest position) that fails it. The first failing position
 * is a minimum, taken per block by a fixed tree in shared memory and then
 * over the blocks by one block: no atomics, and the answer does not depend
 * on the launch.
 *
 * Only enqueues work on `stream`; never allocates (the workspace comes from
 * the caller) and never synchronises.
 */
#ifndef SPART_WEIGHTS_CHECK_DEVICE_H
#define SPART_WEIGHTS_CHECK_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of device workspace spart_cuda_first_bad_entry needs for
 * num_entries entries. */
size_t spart_cuda_first_bad_entry_workspace(int64_t num_entries);

/* Find the first entry k (lowest position below num_entries) whose
 * indices_input[k] lies outside [0, size_input) or whose indices_output[k]
 * lies outside [0, size_output), both arrays in device memory. Leaves three
 * int64 at the start of the workspace (device memory of
 * spart_cuda_first_bad_entry_workspace bytes): k, indices_input[k] and
 * indices_output[k]; or num_entries, 0, 0 when every entry is in range.
 * Returns the cudaError_t of its launches (0: cudaSuccess). */
int spart_cuda_first_bad_entry(const int64_t *indices_input, const int64_t *indices_output,
                               int64_t num_entries, int64_t size_input, int64_t size_output,
                               void *workspace, size_t workspace_bytes, void *stream);

/* Bytes of device workspace spart_cuda_first_non_finite needs for `size`
 * values. */
size_t spart_cuda_first_non_finite_workspace(int64_t size);

/* The twin of the finiteness check of a coordinate array
 * (spart_weights_check_finite in src/weights/weights_layout.c): the first
 * value k (lowest position below `size`) of `values` (device memory) that
 * is not finite. Leaves two int64 at the start of the workspace: k (or
 * `size` when every value is finite) and the bits of values[k] (0 for
 * none), for the host to read. The lowest position is a minimum taken as
 * spart_cuda_first_bad_entry takes it: no atomics, the answer independent
 * of the launch. Returns the cudaError_t of its launches. */
int spart_cuda_first_non_finite(const double *values, int64_t size, void *workspace,
                                size_t workspace_bytes, void *stream);

/* Whether the grid x, y (device memory, num_x * num_y vertices each, C
 * order) is NOT a uniform axis-aligned lattice as
 * spart_host_grid_is_lattice decides it (x varies only along axis 0, y
 * only along axis 1, both exactly; uniform steps by
 * src/weights/lattice_steps_math.h): writes the int32 1 to *not_lattice
 * (device memory) when it is not, and leaves it alone when it is, so that
 * one zeroed flag can gather several grids. Every writer writes the same
 * value: the answer does not depend on the order. num_x, num_y >= 2.
 * Returns the cudaError_t of its launch. */
int spart_cuda_grid_not_lattice(const double *x, const double *y, int64_t num_x, int64_t num_y,
                                int32_t *not_lattice, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_WEIGHTS_CHECK_DEVICE_H */
