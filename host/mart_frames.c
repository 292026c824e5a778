/*
 * host/mart_frames.c: the MART steps of many frames at once on the host
 * (spart_mart_update_frames, spart_mart_decide_frames,
 * spart_mart_keep_frames), twin of kernels/mart_frames.cu. Each frame gets
 * the one-frame step on its own arrays: the update of host/mart_steps.c
 * (spart_mart_host_update), and the operations of the decide and keep of
 * src/mart/mart_ops_host.c in their order (the same as decide_kernel and
 * keep_kernel of kernels/mart_steps.cu). A frame whose state has stopped
 * is skipped as a whole, so its arrays keep their bits.
 */
#include <string.h>

#include "mart/mart_steps.h"

/* Whether frame f's run has stopped (`states` NULL: no gate). */
static int frame_stopped(const spart_mart_device_state *states, int64_t f)
{
    return states != NULL && states[f].stopped != SPART_MART_DEVICE_RUNNING;
}

void spart_mart_host_update_frames(double *scenes, const double *observed_back,
                                   const double *predicted_back, int64_t num_frames,
                                   int64_t num_channel, int64_t scene_size, double gamma,
                                   const spart_mart_device_state *states, int threads)
{
    int64_t channel_scenes = num_channel * scene_size;
    for (int64_t f = 0; f < num_frames; f++) {
        if (!frame_stopped(states, f)) {
            spart_mart_host_update(scenes + f * scene_size, observed_back + f * channel_scenes,
                                   predicted_back + f * channel_scenes, num_channel, scene_size,
                                   gamma, threads);
        }
    }
}

void spart_mart_host_decide_frames(const spart_mart_device_rule *rule, int64_t num_frames,
                                   const double *merits, double *history_rows,
                                   spart_mart_device_state *states)
{
    const int64_t channels = rule->num_channel;
    const double *correlations = merits + num_frames * channels;
    for (int64_t f = 0; f < num_frames; f++) {
        spart_mart_device_state *state = states + f;
        if (state->stopped != SPART_MART_DEVICE_RUNNING) {
            continue;
        }
        double *row = history_rows + f * 2 * channels;
        const double *chi2 = merits + f * channels;
        const double *r = correlations + f * channels;
        double sum = 0.0;
        for (int64_t c = 0; c < channels; c++) {
            row[c] = chi2[c];
            row[channels + c] = r[c];
            sum = sum + chi2[c];
        }
        const double merit = sum / (double)channels;
        const int below_threshold =
            rule->stop_below_threshold && state->merit_previous - merit < rule->threshold;
        const int at_target = rule->stop_at_target && merit <= rule->target;
        state->iterations = state->iterations + 1;
        if (below_threshold || at_target) {
            state->stopped = SPART_MART_DEVICE_STOPPED_BY_RULE;
        } else {
            state->merit_previous = merit;
            if (state->iterations >= rule->max_iterations) {
                state->stopped = SPART_MART_DEVICE_OUT_OF_ITERATIONS;
            }
        }
    }
}

void spart_mart_host_flat_guess_frames(const double *backprojected, int64_t num_frames,
                                       int64_t num_channel, int64_t scene_size, double *scenes)
{
    for (int64_t f = 0; f < num_frames; f++) {
        spart_mart_host_flat_guess(backprojected + f * num_channel * scene_size, num_channel,
                                   scene_size, scenes + f * scene_size);
    }
}

void spart_mart_host_keep_frames(const double *scenes, int64_t num_frames, int64_t scene_size,
                                 double *kept, const spart_mart_device_state *states)
{
    for (int64_t f = 0; f < num_frames; f++) {
        if (!frame_stopped(states, f) && kept != scenes) {
            memcpy(kept + f * scene_size, scenes + f * scene_size,
                   (size_t)scene_size * sizeof(double));
        }
    }
}
