/*
 * solvers/instrument_lines.c: the spectral bins of an instrument of one or
 * several lines (solvers/instrument_lines.h). Uses the public API only.
 */
#include "instrument_lines.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Increasing, finite, positive bin edges of one line ("wavelength" for the
 * one-line form, "lines[k].wavelength" otherwise). */
static spart_status check_edges(spart_context *context, const char *count_name, const char *name,
                                int64_t count, const double *edges)
{
    if (count < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "instrument: %s = %lld must be at least 1", count_name,
                                       (long long)count);
    }
    if (edges == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER, "instrument: %s is NULL",
                                       name);
    }
    for (int64_t i = 0; i <= count; i++) {
        if (!isfinite(edges[i])) {
            return spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                           "instrument: %s[%lld] = %g is not finite", name,
                                           (long long)i, edges[i]);
        }
    }
    for (int64_t i = 0; i < count; i++) {
        if (!(edges[i + 1] > edges[i])) {
            return spart_context_set_error(
                context, SPART_ERROR_INVALID_ARGUMENT,
                "instrument: %s must be strictly increasing: %s[%lld] = %g, %s[%lld] = %g", name,
                name, (long long)i, edges[i], name, (long long)(i + 1), edges[i + 1]);
        }
    }
    if (!(edges[0] > 0.0)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "instrument: %s[0] = %g must be positive", name, edges[0]);
    }
    return SPART_OK;
}

static spart_status check_line(spart_context *context, const spart_instrument_line *line, int64_t k)
{
    char name[64], count_name[64];
    snprintf(name, sizeof name, "lines[%lld].wavelength", (long long)k);
    snprintf(count_name, sizeof count_name, "lines[%lld].num_wavelength", (long long)k);
    spart_status status =
        check_edges(context, count_name, name, line->num_wavelength, line->wavelength);
    if (status == SPART_OK && !isfinite(line->intensity_scale)) {
        status = spart_context_set_error(context, SPART_ERROR_NOT_FINITE,
                                         "instrument: lines[%lld].intensity_scale = %g is not "
                                         "finite",
                                         (long long)k, line->intensity_scale);
    }
    if (status == SPART_OK && !(line->intensity_scale > 0.0)) {
        status = spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                         "instrument: lines[%lld].intensity_scale = %g must be "
                                         "positive",
                                         (long long)k, line->intensity_scale);
    }
    return status;
}

spart_status spart_instrument_check_lines(spart_context *context,
                                          const spart_instrument_params *params, int64_t *total)
{
    if (params->num_line < 0) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "instrument: num_line = %lld must not be negative",
                                       (long long)params->num_line);
    }
    if (params->num_line == 0) {
        *total = params->num_wavelength;
        return check_edges(context, "num_wavelength", "wavelength", params->num_wavelength,
                           params->wavelength);
    }
    if (params->num_wavelength != 0 || params->wavelength != NULL) {
        return spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "instrument: num_line = %lld lines give the bins, so num_wavelength (%lld) must be 0 "
            "and wavelength NULL",
            (long long)params->num_line, (long long)params->num_wavelength);
    }
    if (params->lines == NULL) {
        return spart_context_set_error(context, SPART_ERROR_NULL_POINTER,
                                       "instrument: lines is NULL with num_line = %lld",
                                       (long long)params->num_line);
    }
    int64_t sum = 0;
    for (int64_t k = 0; k < params->num_line; k++) {
        spart_status status = check_line(context, &params->lines[k], k);
        if (status != SPART_OK) {
            return status;
        }
        if (params->lines[k].num_wavelength > INT64_MAX / 4 - sum) {
            return spart_context_set_error(
                context, SPART_ERROR_OVERFLOW,
                "instrument: the lines' bins overflow int64 at line %lld", (long long)k);
        }
        sum += params->lines[k].num_wavelength;
    }
    *total = sum;
    return SPART_OK;
}

spart_status spart_spectral_bins_make(spart_context *context, const spart_instrument_params *params,
                                      spart_spectral_bins *bins)
{
    memset(bins, 0, sizeof *bins);
    int64_t total = 0;
    spart_status status = spart_instrument_check_lines(context, params, &total);
    if (status != SPART_OK) {
        return status;
    }
    double *memory = spart_context_malloc(context, 3 * (size_t)total * sizeof(double));
    if (memory == NULL) {
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "instrument: could not allocate the %lld spectral bins",
                                       (long long)total);
    }
    bins->count = total;
    bins->low = memory;
    bins->high = memory + total;
    bins->scale = memory + 2 * total;
    /* One line of num_wavelength / wavelength is a line of scale 1. */
    spart_instrument_line single = {params->num_wavelength, params->wavelength, 1.0};
    const spart_instrument_line *lines = params->num_line == 0 ? &single : params->lines;
    bins->lines = params->num_line == 0 ? 1 : params->num_line;
    int64_t b = 0;
    for (int64_t k = 0; k < bins->lines; k++) {
        for (int64_t l = 0; l < lines[k].num_wavelength; l++, b++) {
            bins->low[b] = lines[k].wavelength[l];
            bins->high[b] = lines[k].wavelength[l + 1];
            bins->scale[b] = lines[k].intensity_scale;
        }
    }
    return SPART_OK;
}

void spart_spectral_bins_free(spart_context *context, spart_spectral_bins *bins)
{
    spart_context_free_memory(context, bins->low);
    memset(bins, 0, sizeof *bins);
}
