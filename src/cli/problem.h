/*
 * src/cli/problem.h: the inversion problem a config describes: its grids
 * (vertex coordinates of the wavelength bins, the scene cells and the
 * sensor pixels), the ideal instrument built on them (weights and both
 * operators), and the sizes every other part needs.
 */
#ifndef SPART_CLI_PROBLEM_H
#define SPART_CLI_PROBLEM_H

#include <stdint.h>

#include "config.h"
#include "progress.h"
#include "spart.h"

typedef struct problem {
    int64_t num_channel;
    int64_t num_line;       /* spectral lines (1 without instrument.lines) */
    int64_t num_wavelength; /* spectral bins of every line together */
    int64_t num_scene_x;
    int64_t num_scene_y;
    int64_t num_sensor_x;
    int64_t num_sensor_y;
    int64_t scene_size; /* num_wavelength * num_scene_x * num_scene_y */
    int64_t image_size; /* per channel: num_sensor_x * num_sensor_y */
    /* The lines' bins, one line after another: line k has bins line_bin[k]
     * ... line_bin[k + 1] - 1 of the scene's spectral axis, and its
     * line_bin[k + 1] - line_bin[k] + 1 edges start at index line_bin[k] + k
     * of `wavelength` and `velocity` (problem_bin_* read them). */
    int64_t line_bin[CONFIG_MAX_LINES + 1];
    double *wavelength; /* num_wavelength + num_line bin edges, A */
    double *velocity;   /* the same edges in km/s (Doppler, optical, from the line's rest) */
    spart_instrument_line lines[CONFIG_MAX_LINES]; /* the library's lines (instrument.lines) */
    double *scene_x;                               /* num_scene_x + 1 vertices, arcsec */
    double *scene_y;
    double *sensor_x; /* num_sensor_x + 1 vertices, pixel */
    double *sensor_y;
    double *psf;                     /* the PSF kernels of instrument.psf, or NULL */
    spart_instrument *instrument;    /* when built (problem_make_operators); keep_weights:
                                        its geometric weights too (spart build) */
    spart_regridder *loaded_forward; /* when loaded from instrument.operators */
    spart_regridder *loaded_backward;
} problem;

/* The grids of `cfg` (no operators yet). Returns 0, or -1 with a sentence. */
int problem_make_grids(spart_context *context, const config *cfg, problem *made, char *error,
                       size_t error_size);

/* Build the instrument's weights and operators (the long part of a large
 * problem: a start and an end line on the terminal with the time taken).
 * Returns 0, -1 with a sentence, or 1 when the config asks for what cannot
 * be (keep_weights, for spart build, with instrument.memory_budget_gb). */
int problem_build_instrument(spart_context *context, const config *cfg, problem *made,
                             int keep_weights, progress *report, char *error, size_t error_size);

/* The operators: loaded from cfg->instrument.operators (forward.fits and
 * backward.fits, as `spart build` saves them) when the config names a
 * folder, else built. Returns 0, -1 with a sentence, or 1 when the loaded
 * operators do not fit the config's grids (the sentence points at the key). */
int problem_make_operators(spart_context *context, const config *cfg, problem *made,
                           progress *report, char *error, size_t error_size);

/* The forward operator (scene to images) and the backprojection (images to
 * one scene per channel), built or loaded. */
const spart_regridder *problem_forward(const problem *made);
const spart_regridder *problem_backward(const problem *made);

/* Free the grids and the instrument (accepts a zeroed problem). */
void problem_free(problem *made);

/* The line of spectral bin l (0 ... num_line - 1). */
int64_t problem_bin_line(const problem *made, int64_t l);

/* The Doppler velocity (km/s, from its line's rest wavelength) of the
 * centre of spectral bin l. */
double problem_bin_velocity(const problem *made, int64_t l);

/* The width (A) of spectral bin l. */
double problem_bin_width(const problem *made, int64_t l);

/* The unit of the scene's radiance, as a FITS BUNIT. */
const char *problem_radiance_unit(const config *cfg);

#endif /* SPART_CLI_PROBLEM_H */
