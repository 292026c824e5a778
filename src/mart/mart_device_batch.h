/*
 * src/mart/mart_device_batch.h: what the MART driver (solvers/mart.c) needs to
 * run iterations on a device in batches, without the host between them:
 * its stopping rule evaluated on the device after each iteration's merits,
 * the merits and the kept states written to device rows that the host
 * reads once a batch, and a stop flag that the later steps of a batch read
 * so that the iterations after a stop change nothing; and, for the MART
 * operators of a Regridder pair (solvers/mart_regridders.c), the end of
 * the prediction made inside the merits' kernel.
 *
 * Internal to the library: the one header of src/ that the solvers
 * include (the MART driver's batches need device memory laid out as the
 * kernels read it, and a step fused across two public building blocks,
 * neither of which the public API exposes).
 *
 * The rule here is the driver's rule_stops, the same operations in the
 * same order (the mean merit summed over channels from 0.0 in channel
 * order, then divided; the comparisons), so host and device stop at the
 * same iteration; the driver checks that they did.
 *
 * Memory: every pointer is device memory of the context's device; the
 * calls enqueue on the context's stream and do not wait (they can be
 * recorded in a CUDA graph). Not thread safe for one state.
 */
#ifndef SPART_MART_DEVICE_BATCH_H
#define SPART_MART_DEVICE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "mart/mart_steps.h" /* the state and the rule */
#include "spart/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make the MART steps enqueued from now on with `context` read the stop
 * flag of `state` (NULL: read none, the default). The driver sets it
 * around the recording of a batch and clears it after. */
void spart_mart_device_gate(spart_context *context, const spart_mart_device_state *state);

/* The end of one iteration on the device, unless `state` has stopped:
 * copy the merits (`merits`: num_channel mean chi-squared values, then
 * num_channel correlations, as spart_mart_merits leaves them in its
 * workspace) to `history_row` (2 num_channel values), count the
 * iteration, and stop the run if the rule says so or the iteration limit
 * is reached. */
SPART_NODISCARD spart_status spart_mart_device_decide(spart_context *context,
                                                      const spart_mart_device_rule *rule,
                                                      const double *merits, double *history_row,
                                                      spart_mart_device_state *state);

/* On the device, what spart_mart_finish_prediction (gain, read_noise)
 * and then spart_mart_merits (no host arrays: the results stay in the
 * workspace) do, with the same bits, in one kernel where the images take
 * the merits' cluster form (at most 8 chunks a channel, a device with
 * thread block clusters), else in those two steps. */
SPART_NODISCARD spart_status spart_mart_device_finish_and_measure(
    spart_context *context, const double *observed, double *images, double *widths,
    int64_t num_channel, int64_t image_size, double gain, double read_noise, void *workspace,
    size_t workspace_bytes);

/* kept = scene (scene_size values), unless `state` has stopped. */
SPART_NODISCARD spart_status spart_mart_device_keep(spart_context *context, const double *scene,
                                                    int64_t scene_size, double *kept,
                                                    const spart_mart_device_state *state);

#ifdef __cplusplus
}
#endif

#endif /* SPART_MART_DEVICE_BATCH_H */
