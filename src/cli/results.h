/*
 * src/cli/results.h: the files an inversion leaves in its output folder,
 * their names, and the FITS and CSV ones (pictures.h draws the PNGs):
 *
 *   solution.fits   the MART solution, a scene cube
 *   predicted.fits  the images the solution predicts
 *   observed.fits   the observations it was fitted to (when synthesised)
 *   truth.fits      the true scene (when synthetic; a scene read from a file
 *                   is not copied)
 *   history.csv     iteration, merit, chi^2 and r per channel, elapsed time
 */
#ifndef SPART_CLI_RESULTS_H
#define SPART_CLI_RESULTS_H

#include <stddef.h>

#include "config.h"
#include "problem.h"
#include "spart.h"

/* Room for every output's name. */
#define RESULTS_MAX_FILES 16

/* What an inversion made, for its outputs. */
typedef struct results {
    const config *cfg;
    const problem *made;
    const double *truth;     /* scene_size values, or NULL */
    const double *observed;  /* num_channel x image_size */
    const double *predicted; /* num_channel x image_size, of the solution */
    const spart_mart_result *result;
    const double *merit;   /* the solver's merit at each iteration, num_iterations values */
    const double *elapsed; /* seconds at each iteration, num_iterations values */
    int write_observed;    /* the observations were synthesised */
    int write_truth;       /* the truth is synthetic (not read from a file) */
    int threads;           /* threads writing each cube's values (0: one) */
} results;

/* The names of the files `spart invert` will write, into `names`. */
size_t results_file_names(const config *cfg, const char **names);

/* Write the FITS files and the history into `folder` (the cubes' values
 * as float64, or float32 with outputs.value_type: float32). Returns 0, 1 when
 * an output appeared meanwhile (without --overwrite), or -1; the sentence
 * says which file failed and why. Stops early after Ctrl-C (returns -1
 * with *interrupted set). */
int results_write(const results *outputs, const char *folder, int overwrite, int *interrupted,
                  char *error, size_t error_size);

/* The operators as spart regridder files (forward.fits, backward.fits),
 * each read back to be sure it is whole. */
int results_write_operators(const spart_regridder *forward, const spart_regridder *backward,
                            const char *folder, int overwrite, spart_context *context, char *error,
                            size_t error_size);

#endif /* SPART_CLI_RESULTS_H */
