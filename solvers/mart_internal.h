/*
 * solvers/mart_internal.h: the steps of the MART driver, exposed to the
 * unit tests, and small helpers of the solvers built on the public API.
 */
#ifndef SPART_MART_INTERNAL_H
#define SPART_MART_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "spart/common.h"
#include "spart/mart.h"
#include "spart/mart_steps.h"

/* The result of a solve: what spart/mart.h's accessors read. The driver
 * (solvers/mart.c) fills it; solvers/mart_result.c allocates and frees it. */
struct spart_mart_result {
    spart_context *context; /* whose allocator holds the arrays */
    int64_t num_channel;
    int64_t scene_size;
    int64_t num_iterations;
    int64_t capacity; /* rows allocated in the histories */
    int success;
    double gamma;
    char message[160];
    int64_t num_solutions;
    double *solutions; /* num_solutions x scene_size */
    double *mean_chi_squared;
    double *correlation;
};

/* The checks of spart_mart_solve's arguments (solvers/mart.c), which
 * spart_mart_solve_frames shares. */
spart_status spart_mart_check_arguments(spart_context *context,
                                        const spart_mart_operators *operators,
                                        const double *observed, const spart_mart_options *options,
                                        spart_mart_result **result);

/* A result for `operators` with room for 16 iterations' merits and, when
 * with_solution, one state (else none: the _into forms write the solution
 * into the caller's buffer), or NULL when memory runs out. */
spart_mart_result *spart_mart_result_allocate(spart_context *context,
                                              const spart_mart_operators *operators,
                                              int with_solution);

/* Map the host pages of the result's solution (each written once, a zero)
 * on the context's threads, before a copy from the device lands there:
 * for the drivers to call while the device works. */
void spart_mart_result_touch(const spart_context *context, spart_mart_result *result);

/* Append a state (scene_size values, host or device memory) to the kept
 * solutions, growing them by doubling (*capacity: states allocated). */
spart_status spart_mart_result_append_state(spart_context *context, spart_mart_result *result,
                                            const double *state, int on_device, int64_t *capacity);

/* Append an iteration's merits (num_channel values each, host memory). */
spart_status spart_mart_result_append_merits(spart_context *context, spart_mart_result *result,
                                             const double *chi2, const double *correlation);

/* Whether the rule ends the run at this merit (the message set then). */
int spart_mart_rule_stops(const spart_mart_options *options, double merit_previous, double merit,
                          int64_t iteration, spart_mart_result *result);

/* The success flag and message of a run that did not stop on its rule or
 * a callback. */
void spart_mart_out_of_iterations(const spart_mart_options *options, spart_mart_result *result);

/* count doubles through the context's allocator (NULL on overflow). */
double *spart_mart_alloc_doubles(const spart_context *context, size_t count);
double *spart_mart_realloc_doubles(const spart_context *context, double *pointer, size_t count);

/* Fail with `status`, keeping the sentence already in the context (what
 * a callback said) after ours: "<ours>: <theirs>". */
spart_status spart_mart_fail_keep(spart_context *context, spart_status status, const char *format,
                                  ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Nonzero when `operators` were made by spart_mart_operators_from_regridders
 * (their backward operator is a Regridder pair's), so that the driver may
 * end an iteration with spart_mart_regridders_update. */
int spart_mart_operators_are_regridders(const spart_mart_operators *operators);

/* The backward operator and the update of such operators in one call
 * (spart_mart_update_from_images on the pair's backward Regridder): one
 * pass on a device; `predicted_back` is the scratch it may need; `gate`
 * (NULL: none) the run state of a batch being recorded. */
spart_status spart_mart_regridders_update(spart_context *context,
                                          const spart_mart_operators *operators,
                                          const double *images, const double *observed_back,
                                          double gamma, double *scene, double *predicted_back,
                                          const spart_mart_run_state *gate);

/* The forward operator of such operators and the merits of its images,
 * left in the workspace (spart_mart_merits_gated): the product, then the
 * prediction's end and the merits (spart_mart_finish_and_measure, one
 * kernel on a device where it can; the same bits as the forward operator
 * followed by spart_mart_merits). */
spart_status spart_mart_regridders_predict_and_measure(spart_context *context,
                                                       const spart_mart_operators *operators,
                                                       const double *scene, const double *observed,
                                                       double *images, double *widths,
                                                       void *workspace, size_t workspace_bytes,
                                                       const spart_mart_run_state *gate);

/* Many frames (spart_mart_solve_frames) with such operators: the bytes of
 * product workspace for num_frames vectors (the larger of the two
 * products'); the forward product of num_frames scenes, the end of the
 * prediction and the merits of its num_frames x num_channel channels
 * (left in `workspace`, ungated); the backward product of num_frames
 * frames of images. With the product workspace given, nothing allocates
 * (a graph may record them). */
spart_status spart_mart_regridders_frames_workspace(spart_context *context,
                                                    const spart_mart_operators *operators,
                                                    int64_t num_frames, size_t *bytes);
spart_status spart_mart_regridders_predict_and_measure_frames(
    spart_context *context, const spart_mart_operators *operators, int64_t num_frames,
    const double *scenes, const double *observed, double *images, double *widths, void *workspace,
    size_t workspace_bytes, void *product_workspace, size_t product_bytes);
/* Nonzero when such operators' update of a frame (or of many) is one
 * pass that needs no backprojection scratch
 * (spart_mart_update_from_images_is_one_pass); 0 for other operators. */
int spart_mart_regridders_update_is_one_pass(const spart_mart_operators *operators);

/* The backward product of num_frames frames and their updates, frame f
 * gated by states[f] (spart_mart_update_from_images_frames: one pass for
 * every frame where the one-frame call makes one). */
spart_status spart_mart_regridders_update_frames(spart_context *context,
                                                 const spart_mart_operators *operators,
                                                 int64_t num_frames, const double *images,
                                                 const double *observed_back, double gamma,
                                                 double *scenes, double *predicted_back,
                                                 void *product_workspace, size_t product_bytes,
                                                 const spart_mart_run_state *states);
spart_status spart_mart_regridders_backward_frames(spart_context *context,
                                                   const spart_mart_operators *operators,
                                                   int64_t num_frames, const double *images,
                                                   double *scenes, void *product_workspace,
                                                   size_t product_bytes);

/* Nonzero when such operators' update needs no `predicted_back` scratch:
 * a host backward Regridder without batch axes, whose backprojection
 * spart_mart_update_from_images makes block by block inside the update. */
int spart_mart_regridders_update_in_place(const spart_mart_operators *operators);

/* spart_mart_solve_frames' batches: the width (batch_frames, or 0: as
 * many frames as fit 1 GiB of working arrays, 1 to 64; never more than
 * num_frames), and the checks of num_frames and batch_frames (sizes whose
 * products must fit an int64). */
int64_t spart_mart_frames_width(const spart_mart_operators *operators, int64_t num_frames,
                                int64_t batch_frames);
spart_status spart_mart_frames_check(spart_context *context, const spart_mart_operators *operators,
                                     int64_t num_frames, int64_t batch_frames);

/* A float written as Python's repr writes it (0.001, 1e-05, 100.0), for
 * messages worded as ctis's. */
typedef struct spart_mart_float_text {
    char text[48];
} spart_mart_float_text;
spart_mart_float_text spart_mart_python_float(double value);

#endif /* SPART_MART_INTERNAL_H */
