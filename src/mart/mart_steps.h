/*
 * src/mart/mart_steps.h: the steps of the MART iteration (spart/mart_steps.h)
 * on the host (host/mart_steps.c) and on a CUDA device
 * (kernels/mart_steps.cu), with the same operations in the same order.
 * src/mart/mart_ops.h chooses between them; nothing else should.
 *
 * Fixed-order sums: chunks of SPART_MART_CHUNK values added in chunk order
 * from 0.0; within a chunk lane l of SPART_MART_LANES adds values l,
 * l + 32, ... in order from 0.0, and the lanes combine as lane l += lane
 * l + h for h = 16, 8, 4, 2, 1 (lane 0 holds the chunk's sum).
 */
#ifndef SPART_MART_STEPS_H
#define SPART_MART_STEPS_H

#include <stddef.h>
#include <stdint.h>

/* Values per chunk: small enough that a device has many chunks to share
 * out even for one image of a few thousand pixels. */
#define SPART_MART_CHUNK 1024
#define SPART_MART_LANES 32

/* Quantities summed per channel: pass 1 (z^2 over unmasked pixels, their
 * count, predicted, residual), pass 2 (the centred cross and squares). */
#define SPART_MART_PASS_SUMS 4

#ifdef __cplusplus
extern "C" {
#endif

/* Chunks of n values. */
static inline int64_t spart_mart_num_chunks(int64_t n)
{
    return n / SPART_MART_CHUNK + (n % SPART_MART_CHUNK != 0); /* no overflow near INT64_MAX */
}

/* ---- host ---- */
void spart_mart_host_clamp(double *values, int64_t n, int threads);
void spart_mart_host_noise_widths(double *images, double *widths, int64_t n, double gain,
                                  double read_variance, int threads);
void spart_mart_host_merits(const double *observed, const double *predicted, const double *widths,
                            int64_t num_channel, int64_t image_size, double *chi2,
                            double *correlation, int threads);
void spart_mart_host_flat_guess(const double *backprojected, int64_t num_channel,
                                int64_t scene_size, double *scene);
void spart_mart_host_update(double *scene, const double *observed_back,
                            const double *predicted_back, int64_t num_channel, int64_t scene_size,
                            double gamma, int threads);

/* A backward operator's matrix on the host, as the fused update takes it:
 * its CSR arrays, its plan and the vector instructions one vector's
 * product uses (a spart_simd_level: spart_host_csr_simd_level). The
 * structs are those of src/operator/regridder_internal.h. */
struct spart_csr;
struct spart_product_plan;
typedef struct spart_backward_rows {
    const struct spart_csr *csr;
    const struct spart_product_plan *plan;
    int level;
} spart_backward_rows;

/* spart_mart_host_update with predicted_back = the backward product of
 * `images` (one vector; row c * scene_size + v is voxel v of channel c),
 * made block by block inside the update and never stored: the same bits
 * as the product followed by the update. */
void spart_mart_host_backproject_update(double *scene, const spart_backward_rows *backward,
                                        const double *images, const double *observed_back,
                                        int64_t num_channel, int64_t scene_size, double gamma,
                                        int threads);

/* ---- the stopping rule of a MART run on the device, in batches
 * (spart_mart_decide) ----
 * The kernels see src/ only, not include/: these are the layouts of the
 * public spart_mart_run_state and spart_mart_run_rule (spart/mart_steps.h)
 * under the kernels' names; src/mart/mart_ops_cuda.c checks at compile
 * time that the state's layout and the constants are the same. */
/* Why a run recorded in batches stopped (spart_mart_device_state.stopped). */
enum {
    SPART_MART_DEVICE_RUNNING = 0,
    SPART_MART_DEVICE_STOPPED_BY_RULE = 1,
    SPART_MART_DEVICE_OUT_OF_ITERATIONS = 2
};

/* The state of a run on the device, in device memory. `stopped` comes
 * first: its address is the stop flag the MART steps read. */
typedef struct spart_mart_device_state {
    int stopped;           /* SPART_MART_DEVICE_RUNNING until the run ends */
    int unused;            /* keeps the layout the same in C and CUDA */
    int64_t iterations;    /* iterations whose merits were recorded */
    double merit_previous; /* the last recorded merit that did not stop the run */
} spart_mart_device_state;

/* The rule, as the driver resolved it from spart_mart_options. */
typedef struct spart_mart_device_rule {
    int64_t num_channel;
    int64_t max_iterations;
    int stop_below_threshold; /* SPART_MART_STOP_THRESHOLD: previous - merit < threshold */
    int stop_at_target;       /* SPART_MART_STOP_TARGET: merit <= target */
    double threshold;
    double target;
} spart_mart_device_rule;

/* ---- many frames at once on the host (host/mart_frames.c): each frame
 * the one-frame step (spart_mart_host_update above; the decision of
 * decide_frame in kernels/mart_steps.cuh, which the one-frame decide of
 * src/mart/mart_ops_host.c is, as one frame of these; the keep of
 * src/mart/mart_ops_host.c, keep_kernel's), frame f skipped when states[f] has
 * stopped (states NULL: none). The states and the rule are the public
 * spart_mart_run_state and spart_mart_run_rule under the kernels' names
 * (the same layout, checked where the tables cast them). ---- */
void spart_mart_host_update_frames(double *scenes, const double *observed_back,
                                   const double *predicted_back, int64_t num_frames,
                                   int64_t num_channel, int64_t scene_size, double gamma,
                                   const spart_mart_device_state *states, int threads);
void spart_mart_host_decide_frames(const spart_mart_device_rule *rule, int64_t num_frames,
                                   const double *merits, double *history_rows,
                                   spart_mart_device_state *states);
void spart_mart_host_keep_frames(const double *scenes, int64_t num_frames, int64_t scene_size,
                                 double *kept, const spart_mart_device_state *states);
/* The flat guess of each frame (spart_mart_host_flat_guess), frame f's
 * backprojection at f * num_channel * scene_size, its scene at f *
 * scene_size. */
void spart_mart_host_flat_guess_frames(const double *backprojected, int64_t num_frames,
                                       int64_t num_channel, int64_t scene_size, double *scenes);

/* ---- device: each enqueues on `stream` (a cudaStream_t) and returns a
 * cudaError_t as int (0: success). `workspace` is device memory of
 * spart_mart_workspace_size bytes. spart_mart_device_merits copies the
 * results to the host arrays and waits for the stream, or with NULL host
 * arrays leaves them in the workspace (chi2, then r) and does not wait.
 * `stop` (device memory, or NULL): when it is nonzero as the kernels run,
 * the merits and the update change nothing (a stopped batched run). ---- */
int spart_mart_device_clamp(double *values, int64_t n, void *stream);
int spart_mart_device_noise_widths(double *images, double *widths, int64_t n, double gain,
                                   double read_variance, void *stream);
int spart_mart_device_merits(const double *observed, const double *predicted, const double *widths,
                             int64_t num_channel, int64_t image_size, double *chi2,
                             double *correlation, void *workspace, const int *stop, void *stream);
/* spart_mart_device_noise_widths and then spart_mart_device_merits (the
 * results left in the workspace), in one kernel where the merits take a
 * cluster of blocks a channel (the same bits). */
int spart_mart_device_finish_and_merits(const double *observed, double *images, double *widths,
                                        int64_t num_channel, int64_t image_size, double gain,
                                        double read_variance, void *workspace, const int *stop,
                                        void *stream);
int spart_mart_device_flat_guess(const double *backprojected, int64_t num_channel,
                                 int64_t scene_size, double *scene, void *workspace, void *stream);
int spart_mart_device_update(double *scene, const double *observed_back,
                             const double *predicted_back, int64_t num_channel, int64_t scene_size,
                             double gamma, const int *stop, void *stream);
/* The end of an iteration of a batched run and the copy of a kept state
 * (spart_mart_decide and spart_mart_keep on a device). */
int spart_mart_device_decide_launch(const spart_mart_device_rule *rule, const double *merits,
                                    double *history_row, spart_mart_device_state *state,
                                    void *stream);
int spart_mart_device_keep_launch(const double *scene, int64_t scene_size, double *kept,
                                  const spart_mart_device_state *state, void *stream);
/* Many frames at once (spart_mart_*_frames; host/mart_frames.c and
 * kernels/mart_frames.cu): frame f's arrays at f times the one-frame
 * sizes, frame f gated by states[f] (NULL: none), each frame the one-frame
 * kernel's operations in its order. */
int spart_mart_device_update_frames(double *scenes, const double *observed_back,
                                    const double *predicted_back, int64_t num_frames,
                                    int64_t num_channel, int64_t scene_size, double gamma,
                                    const spart_mart_device_state *states, void *stream);
int spart_mart_device_decide_frames_launch(const spart_mart_device_rule *rule, int64_t num_frames,
                                           const double *merits, double *history_rows,
                                           spart_mart_device_state *states, void *stream);
int spart_mart_device_keep_frames_launch(const double *scenes, int64_t num_frames,
                                         int64_t scene_size, double *kept,
                                         const spart_mart_device_state *states, void *stream);
/* The flat guess of each frame in three launches for all of them (the
 * one-frame guess's sums and order): frame f's mean and chunk sums in the
 * workspace's `stride` doubles from f * stride. */
int spart_mart_device_flat_guess_frames(const double *backprojected, int64_t num_frames,
                                        int64_t num_channel, int64_t scene_size, double *scenes,
                                        void *workspace, int64_t stride, void *stream);
/* The sentence of a cudaError_t. */
const char *spart_mart_device_error_string(int error);

#ifdef __cplusplus
}
#endif

#endif /* SPART_MART_STEPS_H */
