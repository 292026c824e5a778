/*
 * src/operator/regridder_device.h: the device halves of building a regridder, as
 * the host paths call them: assembly (src/operator/regridder.c), the exact
 * transpose (src/operator/regridder_transpose.c) and the conservative transpose's
 * values (src/operator/regridder_conservative.c) of a regridder whose arrays live
 * in CUDA device memory. They are defined in src/operator/regridder_device.c; in a
 * build without CUDA they say SPART_ERROR_NO_DEVICE (no device regridder
 * exists there, so the host paths never call them).
 *
 * Each works on the regridder's CUDA device (made current for the call and
 * restored after), on the context's stream when the context uses that
 * device and on the default stream otherwise, and synchronises that stream
 * before it returns. Each leaves a sentence in the context when it fails.
 */
#ifndef SPART_REGRIDDER_DEVICE_H
#define SPART_REGRIDDER_DEVICE_H

#include "operator/regridder_internal.h"

/* spart_regridder_create with the matrix assembled in device memory of
 * CUDA device cuda_device, or in host memory for cuda_device < 0 (the
 * usual create); SPART_ERROR_NO_DEVICE when that device does not exist
 * (checked after the arguments). Defined in src/operator/regridder.c. */
spart_status spart_regridder_create_on(spart_context *context, const spart_weights *weights,
                                       const spart_regridder_options *options, int cuda_device,
                                       spart_regridder **regridder);

/* The checks spart_regridder_create makes of `options` (NULL: the
 * defaults) and of the weights' shapes and axes before it reads any entry,
 * with the same statuses and sentences, without building anything. Defined
 * in src/operator/regridder.c. */
spart_status spart_regridder_check_options(spart_context *context, const spart_weights *weights,
                                           const spart_regridder_options *options);

/* spart_regridder_create_on for the device, from weights whose entry
 * arrays (indices_input, indices_output, values) are not read: the
 * entries are `entries`, already in device memory of cuda_device (see
 * spart_device_entries, which the assembly takes over unless they are
 * borrowed). Only the shapes, axes and offsets of `weights` (in host
 * memory) are used. Defined in src/operator/regridder.c. */
spart_status spart_regridder_create_from_device_entries(
    spart_context *context, const spart_weights *weights, const spart_regridder_options *options,
    int cuda_device, spart_device_entries *entries, spart_regridder **regridder);

/* How a device assembly may be steered, so that tests reach the paths of
 * very large operators on small ones: wide_sort nonzero sorts with 64-bit
 * keys and positions whatever the sizes; stage_bytes > 0 copies every
 * entry array through pinned buffers of that many bytes. The defaults
 * (NULL, or zeros): 32-bit keys and positions where they fit, and the
 * entries staged through 32 MiB buffers when they take 256 MiB or more
 * (below that, pinning the buffers costs more than it saves). */
typedef struct spart_device_assembly_options {
    int wide_sort;
    size_t stage_bytes;
} spart_device_assembly_options;

/* Assemble regridder->csr (num_rows and num_columns set, arrays unset) on
 * the regridder's device from the entries `source` describes in host
 * memory, whose lookup tables (where not NULL) have cells_input and
 * cells_output entries: the entries are copied to the device once and
 * sorted there, for the same arrays as spart_host_csr_assemble. Also
 * builds the long-row table of the product's plan. `options` may be NULL.
 * On failure the arrays made so far stay in the regridder for
 * spart_regridder_free. */
spart_status spart_device_csr_assemble(spart_context *context, const spart_assembly_source *source,
                                       int64_t cells_input, int64_t cells_output,
                                       spart_value_type value_type,
                                       const spart_device_assembly_options *options,
                                       spart_regridder *regridder);

/* The exact transpose of a device regridder's matrix into `transposed`
 * (zeroed, allocated by the caller), on the same device, with its
 * long-row table: the arrays of spart_host_csr_transpose. On failure
 * `transposed` holds no device memory. */
spart_status spart_device_csr_transpose(spart_context *context, const spart_regridder *regridder,
                                        int wide_sort, spart_regridder *transposed);

/* The values of a device conservative transpose: `conservative` (owned by
 * the forward regridder, made by src/operator/regridder_conservative.c)
 * shares the pattern of the exact transpose `exact` and gets values of
 * its own, scaled on the device by the grid factors factor_input
 * (num_grids * cells_input) and volume_output (num_grids * cells_output),
 * in host memory, as src/operator/regridder_conservative.c computes them.
 * source[k] says where orthogonal axis k's grid index comes from (1: the
 * forward's column, 2: its row, else nowhere) and grid_stride[k] its
 * stride in the grid index; cells_input and cells_output are one grid
 * element's resampled cells. On failure the values it allocated are left
 * for the caller to release. */
spart_status spart_device_transpose_conservative(
    spart_context *context, const spart_regridder *exact, const int *source,
    const int64_t *grid_stride, int64_t num_grids, int64_t cells_input, int64_t cells_output,
    const double *factor_input, const double *volume_output, spart_regridder *conservative);

#endif /* SPART_REGRIDDER_DEVICE_H */
