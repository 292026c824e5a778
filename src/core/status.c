/* src/core/status.c: status names, error sentences and the library version. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static _Thread_local char last_error[SPART_ERROR_LENGTH];

const char *spart_status_string(spart_status status)
{
    switch (status) {
    case SPART_OK: return "SPART_OK";
    case SPART_ERROR_NULL_POINTER: return "SPART_ERROR_NULL_POINTER";
    case SPART_ERROR_INVALID_ARGUMENT: return "SPART_ERROR_INVALID_ARGUMENT";
    case SPART_ERROR_SHAPE_MISMATCH: return "SPART_ERROR_SHAPE_MISMATCH";
    case SPART_ERROR_AXIS_OUT_OF_RANGE: return "SPART_ERROR_AXIS_OUT_OF_RANGE";
    case SPART_ERROR_NOT_FINITE: return "SPART_ERROR_NOT_FINITE";
    case SPART_ERROR_OUT_OF_BOUNDS: return "SPART_ERROR_OUT_OF_BOUNDS";
    case SPART_ERROR_UNKNOWN_ENUM: return "SPART_ERROR_UNKNOWN_ENUM";
    case SPART_ERROR_OUT_OF_MEMORY: return "SPART_ERROR_OUT_OF_MEMORY";
    case SPART_ERROR_OVERFLOW: return "SPART_ERROR_OVERFLOW";
    case SPART_ERROR_IO: return "SPART_ERROR_IO";
    case SPART_ERROR_FILE_FORMAT: return "SPART_ERROR_FILE_FORMAT";
    case SPART_ERROR_NO_DEVICE: return "SPART_ERROR_NO_DEVICE";
    case SPART_ERROR_NOT_IMPLEMENTED: return "SPART_ERROR_NOT_IMPLEMENTED";
    case SPART_ERROR_INTERNAL: return "SPART_ERROR_INTERNAL";
    }
    return "SPART_ERROR_UNKNOWN_STATUS";
}

const char *spart_version(void)
{
    return SPART_VERSION_STRING;
}

int spart_version_number(void)
{
    return SPART_VERSION_NUMBER;
}

spart_status spart_fail(spart_context *context, spart_status status, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
    vsnprintf(last_error, sizeof last_error, format, arguments);
    va_end(arguments);
    if (context != NULL) {
        memcpy(context->error, last_error, sizeof last_error);
    }
    return status;
}

spart_status spart_context_set_error(spart_context *context, spart_status status,
                                     const char *format, ...)
{
    char sentence[SPART_ERROR_LENGTH];
    va_list arguments;
    va_start(arguments, format);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
    vsnprintf(sentence, sizeof sentence, format, arguments);
    va_end(arguments);
    return spart_fail(context, status, "%s", sentence);
}

void spart_clear_error(spart_context *context)
{
    if (context != NULL) {
        context->error[0] = '\0';
    }
}

const char *spart_last_error(void)
{
    return last_error;
}

const char *spart_context_error(const spart_context *context)
{
    return context != NULL ? context->error : last_error;
}
