/*
 * src/cli/observations.h: the observed images of an inversion: synthesised
 * from the true scene with the instrument (Poisson photons and Gaussian
 * read noise from a seed, or the expected images without noise), or read
 * from a FITS file that must fit the sensor and the channels.
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

#endif /* SPART_CLI_OBSERVATIONS_H */
