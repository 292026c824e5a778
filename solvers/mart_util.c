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
