/*
 * src/cli/pictures.h: the PNG pictures of an inversion, drawn with cairo:
 *
 *   scene.png   the true (when known) and the recovered scene side by side:
 *               wavelength-integrated intensity and line-of-sight velocity
 *               (the first moment of each spectrum)
 *   images.png  the observed and the predicted image of each channel
 *   merit.png   the merit (mean chi^2) per iteration, log scale, with each
 *               channel's chi^2
 */
#ifndef SPART_CLI_PICTURES_H
#define SPART_CLI_PICTURES_H

#include <stddef.h>

#include "results.h"

/* The names of the pictures, into `names`; returns how many (3). */
size_t pictures_file_names(const char **names);

/* Draw and write the pictures into `folder`, checking for Ctrl-C before
 * each (then -1 with *interrupted set). Returns 0, 1 when a file appeared
 * meanwhile (without `overwrite`), or -1 with a sentence. */
int pictures_write(const results *outputs, const char *folder, int overwrite, int *interrupted,
                   char *error, size_t error_size);

#endif /* SPART_CLI_PICTURES_H */
