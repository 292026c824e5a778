/*
 * spart/mart.h: the multiplicative algebraic reconstruction technique
 * (MART), as ctis.inverters.MartInverter (ctis 0.3.1) runs it, over any
 * pair of forward and backward operators.
 *
 * The problem: a scene of `scene_size` values (for an instrument, the
 * cube wavelength x scene_x x scene_y, C order), observed as
 * `num_channel` images of `image_size` values each. The forward operator
 * predicts the images of a scene and the width (standard deviation) of
 * their noise; the backward operator backprojects images into one scene
 * per channel (the channels kept apart).
 *
 * The iteration (ctis; docs/differences.md lists its quirks, kept on
 * purpose):
 *   L0    = the guess, or every voxel the mean of the unclamped
 *           backprojection of the observations (mean over channels, then
 *           over the scene);
 *   Bobs  = max(backward(observed), 0), once;
 *   for i = 0, 1, ...:
 *     predicted, width = forward(L_i)
 *     chi2[i, c] = mean over the pixels with width != 0 of
 *                  ((observed - predicted) / width)^2
 *     r[i, c]    = Pearson correlation of predicted and observed - predicted
 *                  (population moments, over all pixels)
 *     merit      = mean over channels of chi2[i, c]
 *     stop when the rule says so (below)
 *     ratio[c]   = Bobs[c] / max(backward(predicted), 0)[c], NaN and +-inf
 *                  replaced by 1
 *     L_{i+1}    = L_i * (prod over c of ratio[c]^gamma)^(1 / num_channel)
 *
 * Stopping rules: SPART_MART_STOP_THRESHOLD (ctis): success when
 * merit_previous - merit < threshold (merit_previous = +inf at i = 0), so a
 * merit that rises also ends the run as a success; SPART_MART_STOP_TARGET:
 * success when merit <= target; SPART_MART_STOP_COUNT: run exactly
 * max_iterations updates, a success. With the first two, reaching
 * max_iterations without stopping is a failure (success = 0), as in ctis.
 * A callback may also stop the run (success = 0, say so in the message).
 *
 * Results, as ctis's IterativeInversionResult: the number of iterations
 * done (rows of chi2 and r: chi2[i] is the merit of the state at the start
 * of iteration i), the solution, and with keep_intermediate the state at
 * the start of every iteration. As in ctis, the solution of a run that
 * stopped on its rule is the state it stopped at; of a run that reached
 * max_iterations it is the state after the last update, except with
 * keep_intermediate, where it is the state at the start of the last
 * iteration (ctis returns solutions[-1] there).
 *
 * Memory: the driver allocates its working arrays (a few scenes per
 * channel and images) through the context; the result owns its arrays.
 *
 * Determinism: every step has a fixed order of operations and the powers
 * come from spart's own pow (src/mart/mart_math.h, built from +, -, *, /
 * and fma, so the device path can repeat it). Host runs are identical for
 * any thread count when the operators are (spart Regridders are).
 *
 * Thread safety: one solve per context at a time.
 */
#ifndef SPART_MART_H
#define SPART_MART_H

#include "spart/common.h"
#include "spart/mart_steps.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators of a problem. The callbacks receive `user` and the context
 * of the solve, and return SPART_OK or an error status, which ends the
 * solve with that status (the sentence names the step that failed and
 * keeps the callback's own sentence, if it set one in the context). */
typedef struct spart_mart_operators {
    int64_t num_channel; /* images, and backprojected scenes (>= 1) */
    int64_t scene_size;  /* values per scene (>= 1) */
    int64_t image_size;  /* values per channel image (>= 1) */
    /* Predicted images (num_channel x image_size) of `scene`, and the noise
     * width of each predicted pixel (same layout). */
    spart_status (*forward)(void *user, spart_context *context, const double *scene, double *images,
                            double *widths);
    /* Backprojection of `images` (num_channel x image_size) into one scene
     * per channel (num_channel x scene_size), not clamped. */
    spart_status (*backward)(void *user, spart_context *context, const double *images,
                             double *scenes);
    void *user;
    /* Nonzero: the callbacks take and give memory of the context's CUDA
     * device and work on its stream; the driver then keeps every working
     * array there, `observed` and the guess must be device memory too, and
     * the host sees the merits only (the result is in host memory). */
    int on_device;
    /* Nonzero (device operators only): the callbacks only enqueue work on
     * the context's stream (no synchronisation, no copies to pageable host
     * memory, the same work every call), so the driver may record
     * iterations once as a CUDA graph and replay it (spart/device_memory.h):
     * without a callback, batches of 8 iterations, each ending with the
     * stopping rule checked on the device, the merits read once a batch
     * (the same result as one iteration at a time); with one, an iteration
     * a graph. The operators of spart_mart_operators_from_regridders are. */
    int capturable;
    /* Optional (NULL: spart_mart_solve_frames calls forward, or backward,
     * once a frame): the same operators over `num_frames` frames at once,
     * frame f's scene at scenes + f * scene_size, its images at
     * f * num_channel * image_size, its backprojection at
     * f * num_channel * scene_size. Each frame must get the bits the
     * one-frame callback gives it (one pass over a matrix for every frame
     * is the point). Set by spart_mart_operators_from_regridders;
     * spart_mart_solve ignores them. */
    spart_status (*forward_frames)(void *user, spart_context *context, int64_t num_frames,
                                   const double *scenes, double *images, double *widths);
    spart_status (*backward_frames)(void *user, spart_context *context, int64_t num_frames,
                                    const double *images, double *scenes);
} spart_mart_operators;

/* Operators from two Regridders (for example of spart_instrument, or
 * assembled by you): `forward` takes a scene of scene_size values and gives
 * num_channel x image_size values (its output shape's first axis is the
 * channel); `backward` takes num_channel x image_size values and gives
 * num_channel x scene_size. The noise width of a predicted pixel d is
 * sqrt(gain * max(d, 0) + read_noise^2): Poisson counts of d / gain
 * quanta, each worth `gain` (for an instrument: photons, and electrons per
 * photon), plus Gaussian read noise. */
typedef struct spart_mart_regridder_pair {
    const spart_regridder *forward;
    const spart_regridder *backward;
    int64_t num_channel;
    double gain;       /* > 0 */
    double read_noise; /* >= 0 */
} spart_mart_regridder_pair;

/* Fill `operators` to run on `pair` (which must outlive them). With these
 * operators spart_mart_solve ends each iteration with
 * spart_mart_update_from_images on pair->backward (one pass on a device;
 * the same bits as the backward operator followed by spart_mart_update).
 * Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_SHAPE_MISMATCH (sizes that do not
 * chain: forward's output size not num_channel x backward's input image,
 * backward's output not num_channel x forward's input),
 * SPART_ERROR_INVALID_ARGUMENT (gain not positive, read noise negative or
 * not finite, num_channel < 1). */
SPART_NODISCARD SPART_API spart_status spart_mart_operators_from_regridders(
    spart_context *context, const spart_mart_regridder_pair *pair, spart_mart_operators *operators);

/* How a run ends; see the top of this file. */
typedef enum spart_mart_stop_rule {
    SPART_MART_STOP_THRESHOLD = 0, /* the merit falls by less than `threshold` (ctis) */
    SPART_MART_STOP_TARGET = 1,    /* the merit is at or under `target` */
    SPART_MART_STOP_COUNT = 2      /* exactly max_iterations updates */
} spart_mart_stop_rule;

/* What the callback is told after the merit of iteration `iteration` is
 * known (before the rule is checked). The arrays hold num_channel values
 * and are valid during the call only. */
typedef struct spart_mart_progress {
    int64_t iteration;
    int64_t num_channel;
    const double *mean_chi_squared;
    const double *correlation;
    double merit;           /* mean over channels of mean_chi_squared */
    double elapsed_seconds; /* since the solve began (wall clock) */
    int64_t frame;          /* spart_mart_solve_frames: the frame (from 0); else 0 */
} spart_mart_progress;

/* Return 0 to go on, nonzero to stop the run cleanly after this
 * iteration's merit (the result then holds the state this merit is of). */
typedef int (*spart_mart_callback)(void *user, const spart_mart_progress *progress);

typedef struct spart_mart_options {
    double gamma;                   /* the exponent; 0 (default): 2 / num_channel, as ctis */
    spart_mart_stop_rule stop_rule; /* default SPART_MART_STOP_THRESHOLD */
    double threshold;               /* default 1e-3, as ctis */
    double target;                  /* STOP_TARGET only; default 1 */
    int64_t max_iterations;         /* default 100, as ctis; >= 1 */
    int keep_intermediate;          /* nonzero: keep the state at the start of each iteration */
    const double *guess;            /* scene_size values, or NULL (default): the flat guess */
    spart_mart_callback callback;   /* NULL (default): none */
    void *callback_user;
} spart_mart_options;

/* Fill `options` with the defaults above. */
SPART_API void spart_mart_options_init(spart_mart_options *options);

typedef struct spart_mart_result spart_mart_result;

/* Run MART on the observed images (num_channel x image_size values).
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (sizes
 * below 1, gamma negative or not finite, threshold or target not finite,
 * max_iterations < 1, an unknown stop rule: SPART_ERROR_UNKNOWN_ENUM), the
 * status of a failing operator callback, SPART_ERROR_OUT_OF_MEMORY. On
 * failure *result is NULL. A run that does not meet its rule is not an
 * error: it returns SPART_OK with a result whose success flag is 0. */
SPART_NODISCARD SPART_API spart_status spart_mart_solve(spart_context *context,
                                                        const spart_mart_operators *operators,
                                                        const double *observed,
                                                        const spart_mart_options *options,
                                                        spart_mart_result **result);

/* spart_mart_solve with the solution written into the caller's `solution`
 * (scene_size values: host memory when solution_on_device is 0, pageable
 * or pinned, else memory of the context's CUDA device) instead of into the
 * result, with the same bits. Why: a solution copied from the device into
 * memory the caller keeps (pinned, or used before, or left on the device
 * for the next stage) costs a copy at the bus's rate, where the plain
 * call's lands in host pages the allocator has just given, touched for
 * the first time by the copy. The result then holds the merits, message
 * and success flag and no solution (spart_mart_result_num_solutions 0,
 * spart_mart_result_solution NULL), except with keep_intermediate, where
 * it keeps its states as spart_mart_solve's and `solution` receives the
 * last of them too. solution NULL: spart_mart_solve. Errors: those of
 * spart_mart_solve; SPART_ERROR_NO_DEVICE for a device `solution` in a
 * library built without CUDA; SPART_ERROR_INTERNAL for a failed copy. */
SPART_NODISCARD SPART_API spart_status
spart_mart_solve_into(spart_context *context, const spart_mart_operators *operators,
                      const double *observed, const spart_mart_options *options, double *solution,
                      int solution_on_device, spart_mart_result **result);

/* Many frames per solve: MART on `num_frames` observations of the same
 * problem (frame f's images at observed + f * num_channel * image_size,
 * where the operators work), each frame with its own merits, stopping
 * rule, message and solution, in results[f] (a result as spart_mart_solve
 * gives; free each with spart_mart_result_free). Every frame's result is
 * the same, bit for bit, as spart_mart_solve of that frame alone with the
 * same operators and options (host or device, any batch_frames).
 *
 * How: the frames go in batches of `batch_frames` (0: the default, as
 * many as fit 1 GiB of working arrays, at most 64); each iteration runs
 * the operators once for the whole batch (forward_frames and
 * backward_frames; a Regridder's product over all the batch's vectors in
 * one pass over its matrix) and the merits, update and stopping rule of
 * every frame in one step each (spart_mart_*_frames of
 * spart/mart_steps.h). A frame that stops is masked: its state and merits
 * no longer change while the others go on (its prediction is still made,
 * from the unchanged state, and discarded). On a device with capturable
 * operators and no callback, 8 iterations of a batch are one CUDA graph,
 * the stopping rule checked on the device, the merits read once.
 *
 * Options as spart_mart_solve, with two differences: options->guess, when
 * not NULL, holds num_frames x scene_size values (frame f's guess at
 * f * scene_size, where the operators work); the callback is told the
 * frame (progress->frame), and a nonzero return stops that frame only.
 *
 * Memory, where the operators work: for each frame of a batch a scene,
 * three image stacks (observed, predicted, widths: num_channel x
 * image_size each) and two channel-scene stacks (num_channel x scene_size
 * each), plus, with keep_intermediate, the states of a block of iterations
 * (8 a frame on a device with graphs); the results on the host as
 * spart_mart_solve's.
 *
 * Errors: those of spart_mart_solve (the sentence names the frame where
 * one is to blame), SPART_ERROR_NULL_POINTER for results,
 * SPART_ERROR_INVALID_ARGUMENT (num_frames < 1, batch_frames < 0),
 * SPART_ERROR_OVERFLOW (sizes whose product does not fit), SPART_ERROR_
 * INTERNAL when a device run's stopping rule disagrees with the host's.
 * On failure every results[f] is NULL. */
SPART_NODISCARD SPART_API spart_status spart_mart_solve_frames(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const double *observed, const spart_mart_options *options, int64_t batch_frames,
    spart_mart_result **results);

/* The working memory of spart_mart_solve_frames kept by the caller, for
 * a sequence of solves of the same sizes (spart_mart_solve_frames
 * allocates it and frees it again at every call): the bytes
 * spart_mart_solve_frames_workspace needs for these operators, frames,
 * options and batch width (where the operators work: device memory for
 * device operators), and the solve in it. The workspace is aligned for
 * double on the host, to 256 bytes on a device (spart_memory_allocate
 * gives both), used during the call only,
 * its contents afterwards unspecified; the results are the same bits.
 * Errors: those of spart_mart_solve_frames; SPART_ERROR_INVALID_ARGUMENT
 * for a workspace too small or not aligned. */
SPART_NODISCARD SPART_API spart_status spart_mart_frames_workspace_size(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const spart_mart_options *options, int64_t batch_frames, size_t *bytes);
SPART_NODISCARD SPART_API spart_status spart_mart_solve_frames_workspace(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const double *observed, const spart_mart_options *options, int64_t batch_frames,
    void *workspace, size_t workspace_bytes, spart_mart_result **results);

/* spart_mart_solve_frames_workspace (workspace NULL: the plain call's own
 * working memory) with every frame's solution written into the caller's
 * `solutions` (num_frames x scene_size values, frame f's at f *
 * scene_size: host memory when solutions_on_device is 0, pageable or
 * pinned, else memory of the context's CUDA device), as spart_mart_solve_into
 * does for one frame: the same bits, the results without solutions
 * (except with keep_intermediate, as there). A batch's solutions lie side
 * by side on the device as in `solutions`, so each batch ends with one
 * copy of all of them, at the bus's rate when `solutions` is pinned or on
 * the device (the plain call makes a copy a frame into freshly allocated
 * pageable memory, whose pages that copy touches first: 1.7 GB a frame at
 * ESIS scale). solutions NULL: spart_mart_solve_frames_workspace.
 * Errors: those of spart_mart_solve_frames_workspace; SPART_ERROR_NO_DEVICE
 * for device `solutions` in a library built without CUDA. */
SPART_NODISCARD SPART_API spart_status spart_mart_solve_frames_into(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const double *observed, const spart_mart_options *options, int64_t batch_frames,
    void *workspace, size_t workspace_bytes, double *solutions, int solutions_on_device,
    spart_mart_result **results);

/* Free a result (accepts NULL). */
SPART_API void spart_mart_result_free(spart_mart_result *result);

/* Iterations done: rows of the merit and correlation histories. */
SPART_API int64_t spart_mart_result_num_iterations(const spart_mart_result *result);
/* 1 when the run met its rule, else 0. */
SPART_API int spart_mart_result_success(const spart_mart_result *result);
/* Why it stopped, as ctis words it ("Achieved merit less than 0.001.",
 * "Max number of iterations (100) exceeded.", ...). */
SPART_API const char *spart_mart_result_message(const spart_mart_result *result);
/* The gamma the run used (the default resolved). */
SPART_API double spart_mart_result_gamma(const spart_mart_result *result);
SPART_API int64_t spart_mart_result_num_channel(const spart_mart_result *result);
SPART_API int64_t spart_mart_result_scene_size(const spart_mart_result *result);
/* The solution (scene_size values, owned by the result). */
SPART_API const double *spart_mart_result_solution(const spart_mart_result *result);
/* Kept states: 1 without keep_intermediate, else num_iterations; state k
 * (scene_size values) is the one at the start of iteration k. */
SPART_API int64_t spart_mart_result_num_solutions(const spart_mart_result *result);
SPART_API const double *spart_mart_result_solutions(const spart_mart_result *result, int64_t k);
/* Histories, num_iterations x num_channel, C order. */
SPART_API const double *spart_mart_result_mean_chi_squared(const spart_mart_result *result);
SPART_API const double *spart_mart_result_correlation(const spart_mart_result *result);

/* The steps of the iteration (spart_mart_workspace_size, spart_mart_merits,
 * spart_mart_update, ...), for users who write their own loop:
 * spart/mart_steps.h, included here. */

#ifdef __cplusplus
}
#endif

#endif /* SPART_MART_H */
