/*
 * src/cli/scene.c: the true scene (Gaussians or a FITS cube), its moments
 * and its correlation with a solution.
 */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fits_cube.h"

/* Steradians per square arcsecond: (pi / 648000)^2. */
#define STERADIAN_PER_ARCSEC2 2.3504430539097885e-11

/* The blobs of every line (each line's bins at its own rest wavelength,
 * the same blobs in velocity and position), moved to frame `frame`. */
static int make_gaussians(spart_context *context, const config *cfg, const problem *made,
                          int64_t frame, double *scene, char *error, size_t error_size)
{
    spart_scene_gaussians_options options;
    spart_scene_gaussians_options_init(&options);
    options.width_velocity = cfg->scene.width_velocity;
    options.width_x = cfg->scene.width_x;
    options.width_y = cfg->scene.width_y;
    options.drift = cfg->scene.drift;
    options.frame = frame;
    int64_t plane = made->num_scene_x * made->num_scene_y;
    for (int64_t k = 0; k < made->num_line; k++) {
        int64_t bins = made->line_bin[k + 1] - made->line_bin[k];
        const double *velocity = made->velocity + made->line_bin[k] + k;
        if (spart_scene_gaussians(context, cfg->instrument.line[k].wavelength_rest, bins, velocity,
                                  made->num_scene_x, made->scene_x, made->num_scene_y,
                                  made->scene_y, &options, NULL,
                                  scene + made->line_bin[k] * plane) != SPART_OK) {
            snprintf(error, error_size, "the Gaussian scene of line %lld: %s", (long long)k,
                     spart_context_error(context));
            return -1;
        }
    }
    /* A floor under the blobs, as the ctis tutorial adds (1% of the peak):
     * without it most voxels are near 0, where MART's update stalls. */
    double peak = 0.0;
    for (int64_t v = 0; v < made->scene_size; v++) {
        peak = scene[v] > peak ? scene[v] : peak;
    }
    double floor_value = cfg->scene.background * peak;
    /* The blobs are per steradian; a config in arcsec^2 gets them converted. */
    double unit = cfg->instrument.solid_angle_steradian ? 1.0 : STERADIAN_PER_ARCSEC2;
    for (int64_t v = 0; v < made->scene_size; v++) {
        scene[v] = (scene[v] + floor_value) * unit;
    }
    return 0;
}

static int read_scene_file(const config *cfg, const problem *made, double *scene, char *error,
                           size_t error_size)
{
    int64_t dims[3] = {made->num_wavelength, made->num_scene_x, made->num_scene_y};
    char sentence[CONFIG_ERROR_LENGTH];
    int result = fits_cube_read(cfg->scene.file, dims, "wavelength x scene_x x scene_y", scene,
                                sentence, sizeof sentence);
    if (result != 0) {
        config_error_at(cfg, cfg->scene.file_position, "scene.file", error, error_size, "%s",
                        sentence);
        return result;
    }
    for (int64_t v = 0; v < made->scene_size; v++) {
        if (!isfinite(scene[v])) {
            config_error_at(cfg, cfg->scene.file_position, "scene.file", error, error_size,
                            "%s: value %lld (flat C order) is %g; a scene must be finite",
                            cfg->scene.file, (long long)v, scene[v]);
            return 1;
        }
    }
    return 0;
}

int scene_make(spart_context *context, const config *cfg, const problem *made, double **scene,
               char *error, size_t error_size)
{
    return scene_make_frame(context, cfg, made, 0, scene, error, error_size);
}

int scene_make_frame(spart_context *context, const config *cfg, const problem *made, int64_t frame,
                     double **scene, char *error, size_t error_size)
{
    *scene = malloc((size_t)made->scene_size * sizeof **scene);
    if (*scene == NULL) {
        snprintf(error, error_size, "out of memory for the scene (%lld values)",
                 (long long)made->scene_size);
        return -1;
    }
    int result = cfg->scene.kind == SCENE_GAUSSIANS
                     ? make_gaussians(context, cfg, made, frame, *scene, error, error_size)
                     : read_scene_file(cfg, made, *scene, error, error_size);
    if (result != 0) {
        free(*scene);
        *scene = NULL;
    }
    return result;
}

void scene_moments(const problem *made, const double *scene, double *intensity, double *velocity)
{
    /* bins in order for every pixel; velocity[] holds the moment until the end */
    int64_t plane = made->num_scene_x * made->num_scene_y;
    for (int64_t p = 0; p < plane; p++) {
        intensity[p] = 0.0;
        velocity[p] = 0.0;
    }
    for (int64_t l = 0; l < made->num_wavelength; l++) {
        double width = problem_bin_width(made, l);
        double bin_velocity = problem_bin_velocity(made, l);
        for (int64_t p = 0; p < plane; p++) {
            double value = scene[l * plane + p] * width;
            intensity[p] += value;
            velocity[p] += value * bin_velocity;
        }
    }
    for (int64_t p = 0; p < plane; p++) {
        velocity[p] = intensity[p] > 0.0 ? velocity[p] / intensity[p] : NAN;
    }
}

double scene_correlation(const double *a, const double *b, int64_t count)
{
    double mean_a = 0.0;
    double mean_b = 0.0;
    for (int64_t k = 0; k < count; k++) {
        mean_a += a[k];
        mean_b += b[k];
    }
    mean_a /= (double)count;
    mean_b /= (double)count;
    double covariance = 0.0;
    double variance_a = 0.0;
    double variance_b = 0.0;
    for (int64_t k = 0; k < count; k++) {
        double da = a[k] - mean_a;
        double db = b[k] - mean_b;
        covariance += da * db;
        variance_a += da * da;
        variance_b += db * db;
    }
    return covariance / sqrt(variance_a * variance_b);
}
