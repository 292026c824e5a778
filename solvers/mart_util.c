/*
 * solvers/mart_util.c: allocation, error and formatting helpers of the
 * solvers, on the public API.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mart_internal.h"

double *spart_mart_alloc_doubles(const spart_context *context, size_t count)
{
    if (count > SIZE_MAX / sizeof(double)) {
        return NULL;
    }
    return spart_context_malloc(context, (count > 0 ? count : 1) * sizeof(double));
}

double *spart_mart_realloc_doubles(const spart_context *context, double *pointer, size_t count)
{
    if (count > SIZE_MAX / sizeof(double)) {
        return NULL;
    }
    return spart_context_realloc(context, pointer, (count > 0 ? count : 1) * sizeof(double));
}

spart_status spart_mart_fail_keep(spart_context *context, spart_status status, const char *format,
                                  ...)
{
    char theirs[512];
    snprintf(theirs, sizeof theirs, "%s", spart_context_error(context));
    char ours[512];
    va_list arguments;
    va_start(arguments, format);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
    vsnprintf(ours, sizeof ours, format, arguments);
    va_end(arguments);
    if (theirs[0] == '\0') {
        return spart_context_set_error(context, status, "%s (%s)", ours,
                                       spart_status_string(status));
    }
    return spart_context_set_error(context, status, "%s: %s", ours, theirs);
}

spart_mart_float_text spart_mart_python_float(double value)
{
    spart_mart_float_text out;
    /* The fewest significant digits that read back as the same double. */
    int digits = 1;
    char scientific[40];
    for (; digits <= 17; digits++) {
        snprintf(scientific, sizeof scientific, "%.*e", digits - 1, value);
        if (strtod(scientific, NULL) == value) {
            break;
        }
    }
    const char *e = strchr(scientific, 'e');
    int exponent = e != NULL ? (int)strtol(e + 1, NULL, 10) : 0;
    if (value != value || value == 0.0 || exponent < -4 || exponent >= 16) {
        if (value == 0.0) {
            snprintf(out.text, sizeof out.text, "%s", signbit(value) ? "-0.0" : "0.0");
        } else {
            snprintf(out.text, sizeof out.text, "%s", scientific);
        }
        return out;
    }
    int decimals = digits - 1 - exponent;
    snprintf(out.text, sizeof out.text, "%.*f", decimals > 0 ? decimals : 0, value);
    if (strchr(out.text, '.') == NULL) {
        strncat(out.text, ".0", sizeof out.text - strlen(out.text) - 1);
    }
    return out;
}

/* ---- the batches of spart_mart_solve_frames (solvers/mart_frames.c) ---- */

/* Default batch: as many frames as fit this many bytes of working arrays,
 * at most max_default_width. */
#define DEFAULT_BATCH_BYTES ((size_t)1 << 30)
enum { max_default_width = 64 };

/* Bytes of working arrays a frame needs (0 when a size_t cannot count
 * them): its scene, three image stacks, two channel-scene stacks. */
static size_t bytes_per_frame(const spart_mart_operators *operators)
{
    double values = (double)operators->scene_size +
                    3.0 * (double)operators->num_channel * (double)operators->image_size +
                    2.0 * (double)operators->num_channel * (double)operators->scene_size;
    double bytes = values * (double)sizeof(double);
    return bytes < (double)SIZE_MAX / 2 ? (size_t)bytes : 0;
}

/* The batch width: the caller's, or as many frames as fit
 * DEFAULT_BATCH_BYTES (at least 1, at most max_default_width), and never
 * more than there are frames. */
int64_t spart_mart_frames_width(const spart_mart_operators *operators, int64_t num_frames,
                                int64_t batch_frames)
{
    int64_t width = batch_frames;
    if (width == 0) {
        size_t per_frame = bytes_per_frame(operators);
        width = per_frame == 0 ? 1 : (int64_t)(DEFAULT_BATCH_BYTES / per_frame);
        width = width < 1 ? 1 : (width > max_default_width ? max_default_width : width);
    }
    return width < num_frames ? width : num_frames;
}

spart_status spart_mart_frames_check(spart_context *context, const spart_mart_operators *operators,
                                     int64_t num_frames, int64_t batch_frames)
{
    if (num_frames < 1 || batch_frames < 0) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart frames: num_frames = %lld must be at least 1 and "
                                       "batch_frames = %lld at least 0 (0: the default)",
                                       (long long)num_frames, (long long)batch_frames);
    }
    int64_t channels = operators->num_channel;
    int64_t largest = operators->scene_size > operators->image_size ? operators->scene_size
                                                                    : operators->image_size;
    if (channels > INT64_MAX / largest || num_frames > INT64_MAX / (channels * largest) ||
        bytes_per_frame(operators) == 0) {
        return spart_context_set_error(context, SPART_ERROR_OVERFLOW,
                                       "mart frames: %lld frames of %lld channels of %lld values "
                                       "do not fit an int64",
                                       (long long)num_frames, (long long)channels,
                                       (long long)largest);
    }
    return SPART_OK;
}
