/*
 * src/mart/mart_ops.h: the one place where a MART step learns whether it
 * runs on the host or on a CUDA device. A step of spart/mart_steps.h
 * checks its arguments, asks spart_mart_select for the table of operations
 * of its location (as PETSc's Mat chooses its ops once), and calls the
 * table: begin (on a device: enter the context's device and check that
 * every array is its memory), the operation, end (leave; a CUDA error
 * becomes a status). Host table: src/mart/mart_ops_host.c (the OpenMP
 * twins of host/mart_steps.c); CUDA table: src/mart/mart_ops_cuda.c (the
 * kernels of kernels/mart_steps.cu), built only with CUDA.
 *
 * The operations return 0 or a CUDA error (as int); `gate` (NULL: none)
 * is a run state where the arrays are: once it has stopped, the gated
 * operations change nothing.
 */
#ifndef SPART_MART_OPS_H
#define SPART_MART_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "spart/mart_steps.h"

typedef struct spart_mart_ops {
    const char *where; /* for sentences: "host", "CUDA device" */
    /* Nonzero: spart_mart_merits with host arrays and spart_mart_flat_guess
     * need the workspace (the device sums in it). */
    int needs_workspace;
    spart_status (*begin)(spart_context *context, const char *what, int count,
                          const void *const *pointers, const char *const *names, int *token);
    spart_status (*end)(spart_context *context, int error, const char *what, int token);

    int (*clamp)(spart_context *context, double *values, int64_t n);
    int (*noise_widths)(spart_context *context, double *images, double *widths, int64_t n,
                        double gain, double read_variance);
    /* chi2 and correlation: host arrays, or both NULL (the results stay in
     * the workspace) */
    int (*merits)(spart_context *context, const double *observed, const double *predicted,
                  const double *widths, int64_t num_channel, int64_t image_size, double *chi2,
                  double *correlation, void *workspace, const spart_mart_run_state *gate);
    int (*finish_and_merits)(spart_context *context, const double *observed, double *images,
                             double *widths, int64_t num_channel, int64_t image_size, double gain,
                             double read_variance, void *workspace,
                             const spart_mart_run_state *gate);
    int (*flat_guess)(spart_context *context, const double *backprojected, int64_t num_channel,
                      int64_t scene_size, double *scene, void *workspace);
    int (*update)(spart_context *context, double *scene, const double *observed_back,
                  const double *predicted_back, int64_t num_channel, int64_t scene_size,
                  double gamma, const spart_mart_run_state *gate);
    int (*decide)(spart_context *context, const spart_mart_run_rule *rule, const double *merits,
                  double *history_row, spart_mart_run_state *state);
    int (*keep)(spart_context *context, const double *scene, int64_t scene_size, double *kept,
                const spart_mart_run_state *state);

    /* Many frames at once (spart_mart_*_frames): frame f's arrays at f
     * times the one-frame sizes, gated by states[f] (NULL: none). */
    int (*update_frames)(spart_context *context, double *scenes, const double *observed_back,
                         const double *predicted_back, int64_t num_frames, int64_t num_channel,
                         int64_t scene_size, double gamma, const spart_mart_run_state *states);
    int (*decide_frames)(spart_context *context, const spart_mart_run_rule *rule,
                         int64_t num_frames, const double *merits, double *history_rows,
                         spart_mart_run_state *states);
    int (*keep_frames)(spart_context *context, const double *scenes, int64_t num_frames,
                       int64_t scene_size, double *kept, const spart_mart_run_state *states);
    /* frame f's sums in the workspace's `stride` doubles from f * stride */
    int (*flat_guess_frames)(spart_context *context, const double *backprojected,
                             int64_t num_frames, int64_t num_channel, int64_t scene_size,
                             double *scenes, void *workspace, int64_t stride);

    /* The backprojection and the update in one pass (spart_mart_update_from
     * _images): whether it serves `backward` (of this location), and the
     * pass itself, arguments checked, a status returned (it begins and
     * ends on its own). */
    int (*fusable)(const spart_regridder *backward);
    spart_status (*backproject_update)(spart_context *context, const spart_regridder *backward,
                                       const double *images, const double *observed_back,
                                       double *scene, int64_t num_channel, int64_t scene_size,
                                       double gamma, const spart_mart_run_state *gate);
    /* The same for num_frames frames (frame f's arrays at f times one
     * frame's, gated by states[f]; states NULL: none). */
    spart_status (*backproject_update_frames)(spart_context *context,
                                              const spart_regridder *backward, const double *images,
                                              const double *observed_back, double *scenes,
                                              int64_t num_frames, int64_t num_channel,
                                              int64_t scene_size, double gamma,
                                              const spart_mart_run_state *states);
} spart_mart_ops;

/* The table of `on_device`'s location into *ops; SPART_ERROR_NO_DEVICE
 * ("spart was built without CUDA: ...") for a device without CUDA. */
spart_status spart_mart_select(spart_context *context, int on_device, const char *what,
                               const spart_mart_ops **ops);

/* The table of `on_device` and the start of a step on it: *ops, and
 * *token for the step's (*ops)->end. `count` arrays `pointers`, named
 * `names` in a sentence, are checked by the table's begin. Used by the
 * one-frame steps (src/mart/mart_steps.c) and those of many frames
 * (src/mart/mart_frames.c). */
spart_status spart_mart_enter(spart_context *context, int on_device, const char *what, int count,
                              const void *const *pointers, const char *const *names,
                              const spart_mart_ops **ops, int *token);

extern const spart_mart_ops spart_mart_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_mart_ops spart_mart_cuda_ops;
#endif

#endif /* SPART_MART_OPS_H */
