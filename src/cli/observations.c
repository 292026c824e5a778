/*
 * src/cli/observations.c: observed images, synthesised or read: one
 * frame, or a sequence of frames (observations.h).
 */
#include "observations.h"

#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fits_cube.h"
#include "scene.h"

static int synthesize(spart_context *context, const config *cfg, const problem *made,
                      const double *scene, double *images, char *error, size_t error_size)
{
    spart_status status =
        cfg->observations.noise
            ? spart_instrument_observe(context, made->instrument, scene, cfg->observations.seed,
                                       images, NULL)
            : spart_instrument_image(context, made->instrument, scene, images, NULL);
    if (status != SPART_OK) {
        snprintf(error, error_size, "synthesising the observations: %s",
                 spart_context_error(context));
        return -1;
    }
    return 0;
}

static int read_images(const config *cfg, const problem *made, double *images, char *error,
                       size_t error_size)
{
    int64_t dims[3] = {made->num_channel, made->num_sensor_x, made->num_sensor_y};
    char sentence[CONFIG_ERROR_LENGTH];
    int result = fits_cube_read(cfg->observations.file, dims, "channel x sensor_x x sensor_y",
                                images, sentence, sizeof sentence);
    if (result != 0) {
        config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                        error_size, "%s", sentence);
        return result;
    }
    int64_t count = made->num_channel * made->image_size;
    for (int64_t p = 0; p < count; p++) {
        if (!isfinite(images[p])) {
            config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                            error_size,
                            "%s: value %lld (flat C order) is %g; images must be finite",
                            cfg->observations.file, (long long)p, images[p]);
            return 1;
        }
    }
    return 0;
}

int observations_make(spart_context *context, const config *cfg, const problem *made,
                      const double *scene, double **images, char *error, size_t error_size)
{
    int64_t count = made->num_channel * made->image_size;
    *images = malloc((size_t)count * sizeof **images);
    if (*images == NULL) {
        snprintf(error, error_size, "out of memory for the images (%lld values)", (long long)count);
        return -1;
    }
    int result = cfg->observations.kind == OBSERVATIONS_SYNTHESIZE
                     ? synthesize(context, cfg, made, scene, *images, error, error_size)
                     : read_images(cfg, made, *images, error, error_size);
    if (result != 0) {
        free(*images);
        *images = NULL;
    }
    return result;
}

/* ---- many frames -------------------------------------------------------------------------- */

void observations_files_free(observation_files *files)
{
    for (size_t k = 0; k < files->count && files->paths != NULL; k++) {
        free(files->paths[k]);
    }
    free(files->paths);
    free(files->frames);
    memset(files, 0, sizeof *files);
}

/* Whether a path is a pattern for glob(3). */
static int is_pattern(const char *path)
{
    return strpbrk(path, "*?[") != NULL;
}

/* The file names: the pattern's matches in order, or the one path. */
static int list_files(const config *cfg, observation_files *files, char *error, size_t error_size)
{
    const char *given = cfg->observations.file;
    if (!is_pattern(given)) {
        files->count = 1;
        files->paths = calloc(1, sizeof *files->paths);
        if (files->paths == NULL || (files->paths[0] = strdup(given)) == NULL) {
            snprintf(error, error_size, "out of memory");
            return -1;
        }
        return 0;
    }
    glob_t found;
    int result = glob(given, 0, NULL, &found); /* unreadable folders: no match */
    if (result == GLOB_NOMATCH || (result == 0 && found.gl_pathc == 0)) {
        globfree(&found);
        config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                        error_size, "no file matches the pattern %s", given);
        return 1;
    }
    if (result != 0) {
        globfree(&found);
        snprintf(error, error_size, "cannot list the files of the pattern %s%s", given,
                 result == GLOB_NOSPACE ? ": out of memory" : ": a folder cannot be read");
        return -1;
    }
    files->paths = calloc(found.gl_pathc, sizeof *files->paths);
    for (size_t k = 0; files->paths != NULL && k < found.gl_pathc; k++) {
        files->paths[k] = strdup(found.gl_pathv[k]); /* glob sorts them */
        files->count += files->paths[k] != NULL;
    }
    int complete = files->paths != NULL && files->count == found.gl_pathc;
    globfree(&found);
    if (!complete) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    return 0;
}

int observations_find(const config *cfg, const problem *made, observation_files *files, char *error,
                      size_t error_size)
{
    memset(files, 0, sizeof *files);
    if (cfg->observations.kind == OBSERVATIONS_SYNTHESIZE) {
        files->total_frames = cfg->observations.frames;
        return 0;
    }
    int result = list_files(cfg, files, error, error_size);
    if (result == 0) {
        files->frames = calloc(files->count, sizeof *files->frames);
        result = files->frames == NULL ? -1 : 0;
        if (result != 0) {
            snprintf(error, error_size, "out of memory");
        }
    }
    int64_t dims[3] = {made->num_channel, made->num_sensor_x, made->num_sensor_y};
    for (size_t k = 0; k < files->count && result == 0; k++) {
        char sentence[CONFIG_ERROR_LENGTH];
        result = fits_cube_frames(files->paths[k], dims, "channel x sensor_x x sensor_y",
                                  &files->frames[k], sentence, sizeof sentence);
        if (result != 0) {
            config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                            error_size, "%s", sentence);
        } else if (files->frames[k] > INT64_MAX / 2 - files->total_frames) {
            snprintf(error, error_size, "too many frames in %s", files->paths[k]);
            result = -1;
        } else {
            files->total_frames += files->frames[k];
        }
    }
    if (result != 0) {
        observations_files_free(files);
    }
    return result;
}

/* Frame f synthesised: its true scene and its images (seed + f). */
static int synthesize_frame(spart_context *context, const config *cfg, const problem *made,
                            int64_t f, double *truth, double *images, char *error,
                            size_t error_size)
{
    double *scene = NULL;
    int result = scene_make_frame(context, cfg, made, f, &scene, error, error_size);
    if (result != 0) {
        return result;
    }
    memcpy(truth, scene, (size_t)made->scene_size * sizeof *truth);
    free(scene);
    spart_status status =
        cfg->observations.noise
            ? spart_instrument_observe(context, made->instrument, truth,
                                       cfg->observations.seed + (uint64_t)f, images, NULL)
            : spart_instrument_image(context, made->instrument, truth, images, NULL);
    if (status != SPART_OK) {
        snprintf(error, error_size, "synthesising the observations of frame %lld: %s", (long long)f,
                 spart_context_error(context));
        return -1;
    }
    return 0;
}

/* The files' frames, one after another, checked finite. */
static int read_frames(const config *cfg, const problem *made, const observation_files *files,
                       double *images, char *error, size_t error_size)
{
    int64_t dims[3] = {made->num_channel, made->num_sensor_x, made->num_sensor_y};
    int64_t frame_values = made->num_channel * made->image_size;
    int64_t first = 0;
    for (size_t k = 0; k < files->count; k++) {
        char sentence[CONFIG_ERROR_LENGTH];
        double *values = images + first * frame_values;
        int result = fits_cube_read_frames(files->paths[k], dims, "channel x sensor_x x sensor_y",
                                           files->frames[k], values, sentence, sizeof sentence);
        if (result != 0) {
            config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                            error_size, "%s", sentence);
            return result;
        }
        for (int64_t p = 0; p < files->frames[k] * frame_values; p++) {
            if (!isfinite(values[p])) {
                config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                                error_size,
                                "%s: value %lld (flat C order) is %g; images must be finite",
                                files->paths[k], (long long)p, values[p]);
                return 1;
            }
        }
        first += files->frames[k];
    }
    return 0;
}

int observations_make_frames(spart_context *context, const config *cfg, const problem *made,
                             const observation_files *files, double **images, double **truths,
                             char *error, size_t error_size)
{
    int64_t frames = files->total_frames;
    int64_t frame_values = made->num_channel * made->image_size;
    int synthesised = cfg->observations.kind == OBSERVATIONS_SYNTHESIZE;
    *images = malloc((size_t)(frames * frame_values) * sizeof **images);
    *truths = synthesised ? malloc((size_t)(frames * made->scene_size) * sizeof **truths) : NULL;
    if (*images == NULL || (synthesised && *truths == NULL)) {
        free(*images);
        free(*truths);
        *images = *truths = NULL;
        snprintf(error, error_size, "out of memory for %lld frames (%lld values each)",
                 (long long)frames, (long long)frame_values);
        return -1;
    }
    int result = 0;
    for (int64_t f = 0; f < frames && synthesised && result == 0; f++) {
        result = synthesize_frame(context, cfg, made, f, *truths + f * made->scene_size,
                                  *images + f * frame_values, error, error_size);
    }
    if (!synthesised) {
        result = read_frames(cfg, made, files, *images, error, error_size);
    }
    if (result != 0) {
        free(*images);
        free(*truths);
        *images = *truths = NULL;
    }
    return result;
}
