/*
 * solvers/instrument_lines.h: the spectral bins of an ideal instrument
 * (spart/instrument.h) with one or several lines, as one list of bins:
 * line 0's bins, then line 1's, ... Each bin keeps its own two wavelength
 * edges and its line's intensity scale, so the geometry and the photon
 * conversion of solvers/instrument.c see one bin at a time and need not
 * know the lines.
 */
#ifndef SPART_INSTRUMENT_LINES_H
#define SPART_INSTRUMENT_LINES_H

#include <stdint.h>

#include "spart/common.h"
#include "spart/instrument.h"

typedef struct spart_spectral_bins {
    int64_t count; /* bins of all lines */
    int64_t lines; /* lines (1 for num_wavelength / wavelength) */
    double *low;   /* count lower edges, A */
    double *high;  /* count upper edges, A */
    double *scale; /* count intensity scales (each its line's) */
} spart_spectral_bins;

/* Check the spectral part of `params`: either num_line = 0 and the bins
 * num_wavelength / wavelength, or num_line >= 1 lines each with increasing
 * positive edges and a positive finite scale, and then num_wavelength = 0
 * and wavelength = NULL. The sentence names the field and the line.
 * *total receives the bins of all lines (on success). */
spart_status spart_instrument_check_lines(spart_context *context,
                                          const spart_instrument_params *params, int64_t *total);

/* The bins of checked params, in the context's memory (free with
 * spart_spectral_bins_free). Errors: SPART_ERROR_OUT_OF_MEMORY. */
spart_status spart_spectral_bins_make(spart_context *context, const spart_instrument_params *params,
                                      spart_spectral_bins *bins);

void spart_spectral_bins_free(spart_context *context, spart_spectral_bins *bins);

#endif /* SPART_INSTRUMENT_LINES_H */
