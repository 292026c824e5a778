/*
 * src/weights/weights_check_device.h: the device check of weights' indices
 * (kernels/weights_check.cu), as spart_regridder_create_device_from_arrays
 * (src/operator/regridder_device_arrays.c) calls it. Exists only in builds with
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

#ifdef __cplusplus
}
#endif

#endif /* SPART_WEIGHTS_CHECK_DEVICE_H */
