/*
 * src/cli/observations.h: the observed images of an inversion: synthesised
 * from the true scene with the instrument (Poisson photons and Gaussian
 * read noise from a seed, or the expected images without noise), or read
 * from a FITS file that must fit the sensor and the channels; one frame,
 * or a sequence of frames solved together (below).
 */
#ifndef SPART_CLI_OBSERVATIONS_H
#define SPART_CLI_OBSERVATIONS_H

#include <stddef.h>

#include "config.h"
#include "problem.h"
#include "spart.h"

/* The observed images (num_channel x image_size electrons) into a new
 * array *images (free it). `scene` is the truth (needed to synthesise;
 * may be NULL when they are read). Returns 0, -1 with a sentence, or 1 for
 * a fault of the config (a file that does not fit), pointing at the key. */
int observations_make(spart_context *context, const config *cfg, const problem *made,
                      const double *scene, double **images, char *error, size_t error_size);

/* ---- many frames (spart_mart_solve_frames) ----
 * The frames of an inversion: `observations.synthesize.frames` synthesised
 * frames (frame f images the scene of frame f, scene_make_frame, with the
 * seed seed + f), or the frames in `observations.file`: a FITS cube of
 * channel x sensor_x x sensor_y (one frame) or of frames x channel x
 * sensor_x x sensor_y, or a pattern with * ? [ (glob(3)) naming several
 * such files, taken in the order of their names, their frames one after
 * another. */

/* Files and frames, found before any long work. */
typedef struct observation_files {
    size_t count;         /* files (0 for synthesised frames) */
    char **paths;         /* count paths, sorted */
    int64_t *frames;      /* frames in each file */
    int64_t total_frames; /* of every file, or the synthesised frames */
} observation_files;

/* Find the files (expand a pattern, check each file's shape against the
 * sensor and the channels) or count the synthesised frames. Returns 0, -1
 * with a sentence, or 1 for a fault of the config. */
int observations_find(const config *cfg, const problem *made, observation_files *files, char *error,
                      size_t error_size);

void observations_files_free(observation_files *files);

/* The frames' observed images (total_frames x num_channel x image_size)
 * into *images, and when they are synthesised the true scene of each
 * (total_frames x scene_size) into *truths (else NULL); free both. Returns
 * as observations_make. */
int observations_make_frames(spart_context *context, const config *cfg, const problem *made,
                             const observation_files *files, double **images, double **truths,
                             char *error, size_t error_size);

#endif /* SPART_CLI_OBSERVATIONS_H */
