/*
 * spart/mart_steps.h: the steps of the MART iteration (spart/mart.h), for
 * users who write their own loop or another iterative method from the same
 * steps (SART, OSEM, a regularised MART), and the steps spart_mart_solve
 * itself composes: predict (the end of a prediction: clamp, noise widths),
 * measure (the merits per channel), update (the multiplicative correction,
 * alone or fused with a Regridder's backprojection), decide (the stopping
 * rule, on the device too) and keep (a copy of a state).
 *
 * Where: each step runs on the host (OpenMP) or, with on_device nonzero
 * (for spart_mart_update_from_images*: where the backward Regridder lives),
 * on the context's CUDA device and stream, its arrays device memory of that
 * device; host and device do the same operations in the same order, so
 * both give the same bits. Device steps only enqueue work on the context's
 * stream and do not wait, except spart_mart_merits with host arrays, so
 * they can be recorded in a CUDA graph (spart/device_memory.h).
 *
 * Runs recorded in batches: spart_mart_decide checks the stopping rule
 * after each iteration's merits and writes it into a spart_mart_run_state
 * (device memory for a device run), so that a graph of several iterations
 * needs the host once a batch. The steps that change the state or the
 * merits have `_gated` forms (and spart_mart_finish_and_measure a `gate`
 * argument) that read such a state and change nothing once the run has
 * stopped: the iterations after a stop then leave everything as it was.
 * The gate is an argument, never something the context remembers.
 *
 * Memory: the steps allocate nothing; spart_mart_merits* and
 * spart_mart_flat_guess take a workspace of spart_mart_workspace_size
 * bytes, where the arrays are.
 *
 * Thread safety: distinct arrays may be worked on from distinct threads
 * with distinct contexts; one context runs one step at a time.
 *
 * Determinism: sums run in one fixed order: chunks of 1024 values (small,
 * so that a device has many to share out) added in chunk order, each chunk
 * summed by 32 lanes (lane l takes values l, l + 32, ...) combined in the
 * binary tree of the products (lane l += lane l + h, h = 16, ..., 1); the
 * powers come from spart's own pow (built from +, -, *, / and fma), so
 * the results are the same for any thread count and on host and device.
 *
 * Errors, every step: SPART_ERROR_NULL_POINTER (a NULL array or context),
 * SPART_ERROR_INVALID_ARGUMENT (sizes below 1, too little workspace, an
 * array that is not memory of the context's device where device memory is
 * needed), SPART_ERROR_NO_DEVICE (on_device with a library built without
 * CUDA, or no device), SPART_ERROR_INTERNAL (a CUDA error, named); more
 * where a function says so.
 */
#ifndef SPART_MART_STEPS_PUBLIC_H
#define SPART_MART_STEPS_PUBLIC_H

#include "spart/common.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- predict, measure, update --------------------------------------------------------- */

/* Bytes of workspace spart_mart_merits*, spart_mart_finish_and_measure and
 * spart_mart_flat_guess need (0 for sizes below 1, and for sizes whose
 * workspace a size_t cannot count). */
SPART_API size_t spart_mart_workspace_size(int64_t num_channel, int64_t image_size,
                                           int64_t scene_size);

/* values = max(values, 0), in place. */
SPART_NODISCARD SPART_API spart_status spart_mart_clamp(spart_context *context, double *values,
                                                        int64_t n, int on_device);

/* Predicted counts clamped at 0 in place, and their noise widths
 * sqrt(gain d + read_noise^2) into `widths`. */
SPART_NODISCARD SPART_API spart_status spart_mart_noise_widths(spart_context *context,
                                                               double *images, double *widths,
                                                               int64_t n, double gain,
                                                               double read_noise, int on_device);

/* The end of a prediction of a counting detector: spart_mart_noise_widths
 * when `widths` is not NULL, else spart_mart_clamp. */
SPART_NODISCARD SPART_API spart_status spart_mart_finish_prediction(spart_context *context,
                                                                    double *images, double *widths,
                                                                    int64_t n, double gain,
                                                                    double read_noise,
                                                                    int on_device);

/* Per channel (num_channel images of image_size values): the mean
 * chi-squared and the correlation of residuals (spart/mart.h), written to
 * chi2 and correlation, which are HOST arrays of num_channel values (on
 * the device the call waits for its stream; the workspace is not used on
 * the host and may be NULL there). On the device both may be NULL: the
 * results then stay in the workspace, as spart_mart_merits_gated leaves
 * them, and the call does not wait. */
SPART_NODISCARD SPART_API spart_status
spart_mart_merits(spart_context *context, const double *observed, const double *predicted,
                  const double *widths, int64_t num_channel, int64_t image_size, double *chi2,
                  double *correlation, void *workspace, size_t workspace_bytes, int on_device);

/* The flat guess: every voxel of `scene` the mean over channels, then over
 * the scene, of `backprojected` (num_channel x scene_size). The workspace
 * is not used on the host and may be NULL there. */
SPART_NODISCARD SPART_API spart_status spart_mart_flat_guess(
    spart_context *context, const double *backprojected, int64_t num_channel, int64_t scene_size,
    double *scene, void *workspace, size_t workspace_bytes, int on_device);

/* scene *= the MART correction of each voxel from the clamped
 * backprojection of the observations and the backprojection of the
 * prediction (clamped here), num_channel x scene_size each. Also
 * SPART_ERROR_INVALID_ARGUMENT for gamma not positive. */
SPART_NODISCARD SPART_API spart_status spart_mart_update(spart_context *context, double *scene,
                                                         const double *observed_back,
                                                         const double *predicted_back,
                                                         int64_t num_channel, int64_t scene_size,
                                                         double gamma, int on_device);

/* The end of an iteration from the predicted images: backproject `images`
 * (num_channel x image_size, the backward Regridder's input) with
 * `backward` into num_channel x scene_size values and multiply `scene` by
 * the correction from those and observed_back, with the bits of
 * spart_regridder_apply followed by spart_mart_update. The arrays are where
 * `backward` lives (host or the context's CUDA device). On a device, when
 * `backward` has no row longer than a chunk of the product
 * (SPART_CHUNK_LENGTH entries) and no batch axes, the two are one pass
 * and the backprojection never goes to memory (no pass over num_channel
 * scenes, one launch); on the host, when `backward` has no batch axes,
 * they are one pass too (each block of voxels is backprojected inside the
 * update), and `predicted_back` is not used: it may be NULL there.
 * Otherwise `predicted_back` (num_channel x scene_size values) receives
 * the backprojection. Either way its contents afterwards are unspecified.
 * Errors: those of the two calls it stands for; SPART_ERROR_SHAPE_MISMATCH
 * when backward's output is not num_channel scenes;
 * SPART_ERROR_NULL_POINTER for a NULL predicted_back that is needed. */
SPART_NODISCARD SPART_API spart_status spart_mart_update_from_images(
    spart_context *context, const spart_regridder *backward, const double *images,
    const double *observed_back, int64_t num_channel, double gamma, double *scene,
    double *predicted_back);

/* Nonzero when spart_mart_update_from_images (and its _gated and _frames
 * forms) makes one pass over `backward` and does not use predicted_back
 * (which may then be NULL): a host backward Regridder without batch axes,
 * or a device one without batch axes, rows longer than a chunk or a plan
 * by row. 0 for NULL. */
SPART_API int spart_mart_update_from_images_is_one_pass(const spart_regridder *backward);

/* ---- runs in batches: decide, keep, and the gated steps ------------------------------- */

/* Why a run stopped (spart_mart_run_state.stopped). */
enum {
    SPART_MART_RUN_GOING = 0,            /* not stopped */
    SPART_MART_RUN_STOPPED_BY_RULE = 1,  /* the rule was met */
    SPART_MART_RUN_OUT_OF_ITERATIONS = 2 /* max_iterations merits recorded, the rule not met */
};

/* The state of a run whose rule spart_mart_decide checks, where the run's
 * arrays are (device memory for a device run: set it with a copy before
 * the first decision, read it back with a copy). `stopped` comes first:
 * the gated steps read it. */
typedef struct spart_mart_run_state {
    int stopped;           /* SPART_MART_RUN_GOING until the run ends */
    int unused;            /* 0; keeps the layout the same in C and CUDA */
    int64_t iterations;    /* iterations whose merits were recorded */
    double merit_previous; /* the last recorded merit that did not stop the run (+inf at first) */
} spart_mart_run_state;

/* The stopping rule of spart_mart_decide (spart_mart_options resolved). */
typedef struct spart_mart_run_rule {
    int64_t num_channel;
    int64_t max_iterations;   /* >= 1 */
    int stop_below_threshold; /* nonzero: stop when merit_previous - merit < threshold (ctis) */
    int stop_at_target;       /* nonzero: stop when merit <= target */
    double threshold;
    double target;
} spart_mart_run_rule;

/* The end of one iteration, unless `state` has stopped: copy the merits
 * (`merits`: num_channel mean chi-squared values, then num_channel
 * correlations, as spart_mart_merits_gated leaves them at the start of its
 * workspace) to `history_row` (2 num_channel values), count the
 * iteration, and stop the run if the rule says so (the mean merit summed
 * over channels in channel order from 0.0, then divided, then compared, as
 * spart_mart_solve does on the host) or the iteration limit is reached.
 * `rule` is a host struct; merits, history_row and state are where the
 * run is. */
SPART_NODISCARD SPART_API spart_status spart_mart_decide(spart_context *context,
                                                         const spart_mart_run_rule *rule,
                                                         const double *merits, double *history_row,
                                                         spart_mart_run_state *state,
                                                         int on_device);

/* kept = scene (scene_size values), unless `state` has stopped. */
SPART_NODISCARD SPART_API spart_status spart_mart_keep(spart_context *context, const double *scene,
                                                       int64_t scene_size, double *kept,
                                                       const spart_mart_run_state *state,
                                                       int on_device);

/* spart_mart_merits with no host arrays: the results stay at the start of
 * the workspace (num_channel mean chi-squared values, then num_channel
 * correlations), on the host as on the device, and the call does not
 * wait. With `gate` (NULL: none) a run state where the arrays are: when it
 * has stopped as the step runs, the step changes nothing. */
SPART_NODISCARD SPART_API spart_status spart_mart_merits_gated(
    spart_context *context, const double *observed, const double *predicted, const double *widths,
    int64_t num_channel, int64_t image_size, void *workspace, size_t workspace_bytes, int on_device,
    const spart_mart_run_state *gate);

/* spart_mart_noise_widths over the num_channel x image_size `images`, then
 * spart_mart_merits_gated (gated: the merits only; the prediction's end
 * runs, and gives the same images again from an unchanged state), with the
 * same bits; on a device with thread block clusters, and images of at most
 * 8 chunks a channel, in one kernel. */
SPART_NODISCARD SPART_API spart_status spart_mart_finish_and_measure(
    spart_context *context, const double *observed, double *images, double *widths,
    int64_t num_channel, int64_t image_size, double gain, double read_noise, void *workspace,
    size_t workspace_bytes, int on_device, const spart_mart_run_state *gate);

/* spart_mart_update, changing nothing when `gate` (NULL: none) has
 * stopped. */
SPART_NODISCARD SPART_API spart_status
spart_mart_update_gated(spart_context *context, double *scene, const double *observed_back,
                        const double *predicted_back, int64_t num_channel, int64_t scene_size,
                        double gamma, int on_device, const spart_mart_run_state *gate);

/* spart_mart_update_from_images, changing nothing of `scene` when `gate`
 * (NULL: none; where `backward` lives) has stopped. */
SPART_NODISCARD SPART_API spart_status spart_mart_update_from_images_gated(
    spart_context *context, const spart_regridder *backward, const double *images,
    const double *observed_back, int64_t num_channel, double gamma, double *scene,
    double *predicted_back, const spart_mart_run_state *gate);

/* ---- many frames at once (spart_mart_solve_frames) ------------------------------------ */

/* The steps above for `num_frames` frames that share one problem: frame f
 * of an array of scenes starts at f * scene_size, of an array of channel
 * scenes at f * num_channel * scene_size; `states` holds num_frames run
 * states (frame f's at states + f), where the arrays are. Each frame gets
 * the operations, in the order, of the one-frame step on its own arrays,
 * so a frame's bits do not depend on the others, on num_frames or on
 * where it sits in the batch. (spart_mart_merits* and
 * spart_mart_finish_and_measure need no frames form: frame f's channels
 * are channels f * num_channel ... of a call with num_frames *
 * num_channel channels, each summed on its own.) */

/* spart_mart_update_gated of each frame, frame f gated by states[f]
 * (states NULL: no gate). */
SPART_NODISCARD SPART_API spart_status spart_mart_update_frames(
    spart_context *context, double *scenes, const double *observed_back,
    const double *predicted_back, int64_t num_frames, int64_t num_channel, int64_t scene_size,
    double gamma, int on_device, const spart_mart_run_state *states);

/* spart_mart_update_from_images_gated of each frame, frame f gated by
 * states[f] (states NULL: none): `images` holds num_frames frames of the
 * backward Regridder's input (frame f's at f times its input size),
 * observed_back num_frames x num_channel x scene_size values, `scenes`
 * num_frames x scene_size. Where the one-frame call makes one pass, this
 * makes one pass for every frame (one launch on a device); otherwise the
 * backward product of every frame at once into predicted_back (num_frames
 * x num_channel x scene_size values; may be NULL where a pass serves)
 * and spart_mart_update_frames; that product takes `workspace` (of
 * spart_regridder_workspace_size bytes for num_frames vectors: then it
 * allocates nothing and can be recorded in a graph) or, when it is NULL,
 * allocates its own. Each frame gets the bits of its one-frame call.
 * Errors: those of spart_mart_update_from_images. */
SPART_NODISCARD SPART_API spart_status spart_mart_update_from_images_frames(
    spart_context *context, const spart_regridder *backward, const double *images,
    const double *observed_back, int64_t num_frames, int64_t num_channel, double gamma,
    double *scenes, double *predicted_back, void *workspace, size_t workspace_bytes,
    const spart_mart_run_state *states);

/* spart_mart_decide of each frame: `merits` as spart_mart_merits_gated
 * leaves them for num_frames * num_channel channels (every chi-squared
 * value, frame by frame, then every correlation), so frame f's are
 * merits[f C + c] and merits[num_frames C + f C + c]; frame f's row of
 * 2 num_channel values goes to history_rows + f * 2 num_channel (its
 * chi2, then its correlations, as spart_mart_decide writes a row). */
SPART_NODISCARD SPART_API spart_status spart_mart_decide_frames(
    spart_context *context, const spart_mart_run_rule *rule, int64_t num_frames,
    const double *merits, double *history_rows, spart_mart_run_state *states, int on_device);

/* spart_mart_flat_guess of each frame: frame f's backprojection at
 * backprojected + f * num_channel * scene_size, its guess into scenes + f
 * * scene_size; on a device three launches for all the frames (the sums
 * and their order those of the one-frame guess). The workspace (where the
 * arrays are; not used on the host, may be NULL there) holds num_frames x
 * spart_mart_workspace_size(num_channel, 1, scene_size) bytes.
 * Also SPART_ERROR_OVERFLOW for a workspace no size_t counts. */
SPART_NODISCARD SPART_API spart_status spart_mart_flat_guess_frames(
    spart_context *context, const double *backprojected, int64_t num_frames, int64_t num_channel,
    int64_t scene_size, double *scenes, void *workspace, size_t workspace_bytes, int on_device);

/* spart_mart_keep of each frame: kept + f * scene_size = scenes + f *
 * scene_size unless states[f] has stopped. */
SPART_NODISCARD SPART_API spart_status spart_mart_keep_frames(
    spart_context *context, const double *scenes, int64_t num_frames, int64_t scene_size,
    double *kept, const spart_mart_run_state *states, int on_device);

#ifdef __cplusplus
}
#endif

#endif /* SPART_MART_STEPS_PUBLIC_H */
