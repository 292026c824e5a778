/*
 * src/device_select.h: make the context's CUDA device current for the
 * length of a call, and turn CUDA errors into statuses (used by the MART
 * steps and device memory functions).
 */
#ifndef SPART_DEVICE_SELECT_H
#define SPART_DEVICE_SELECT_H

#include "internal.h"

/* Check that CUDA is built in and the context's device exists, make it
 * current; *previous is what spart_device_leave restores. Sets the
 * sentence, naming `what`, on failure. */
spart_status spart_device_enter(spart_context *context, const char *what, int *previous);
void spart_device_leave(int previous);

/* A failed CUDA call (a cudaError_t as int) as SPART_ERROR_INTERNAL, or
 * SPART_ERROR_OUT_OF_MEMORY for an allocation failure, with its name. */
spart_status spart_device_failure(spart_context *context, int error, const char *what);

#endif /* SPART_DEVICE_SELECT_H */
