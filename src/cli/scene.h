/*
 * src/cli/scene.h: the true scene of an inversion: the synthetic Gaussian
 * blobs of ctis.scenes.gaussians (spart/scene.h) with an optional flat
 * background, or a cube read from a FITS file that must fit the grid.
 */
#ifndef SPART_CLI_SCENE_H
#define SPART_CLI_SCENE_H

#include <stddef.h>

#include "config.h"
#include "problem.h"
#include "spart.h"

/* The scene (made->scene_size values, radiance in the config's unit) into
 * a new array *scene (free it). Returns 0, -1 with a sentence, or 1 for a
 * fault of the config (a FITS file that does not fit the grid), whose
 * sentence points at the key. */
int scene_make(spart_context *context, const config *cfg, const problem *made, double **scene,
               char *error, size_t error_size);

/* The true scene of frame `frame` (>= 0) of a sequence, as scene_make:
 * the Gaussians with their blobs moved by frame x scene.gaussians.drift
 * arcsec (spart/scene.h; frame 0 is scene_make's scene, bit for bit), or
 * the scene file, the same for every frame. */
int scene_make_frame(spart_context *context, const config *cfg, const problem *made, int64_t frame,
                     double **scene, char *error, size_t error_size);

/* Wavelength-integrated intensity (sum over bins of radiance x bin width,
 * num_scene_x x num_scene_y values) and line-of-sight velocity (first
 * moment of the spectrum, km/s; NaN where the spectrum sums to 0 or less)
 * of a scene, for the pictures. With several lines both run over every
 * bin of every line, each bin's velocity from its own line's rest
 * wavelength: the total intensity and the intensity-weighted mean Doppler
 * velocity of all lines. */
void scene_moments(const problem *made, const double *scene, double *intensity, double *velocity);

/* Pearson correlation of two arrays of `count` values (NaN for constant
 * arrays), to say how close a solution is to the truth. */
double scene_correlation(const double *a, const double *b, int64_t count);

#endif /* SPART_CLI_SCENE_H */
