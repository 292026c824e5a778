/*
 * src/device/device_select.h: what every device entry point does first (check
 * that the device exists, make it current for the call, restore the
 * caller's afterwards) and how a CUDA error becomes a status with a
 * sentence. Used by the regridder's device paths, the MART steps and the
 * device memory functions; defined in src/device/device_memory.c.
 */
#ifndef SPART_DEVICE_SELECT_H
#define SPART_DEVICE_SELECT_H

#include "core/internal.h"

/* A failed CUDA call (a cudaError_t as int) as a status: OUT_OF_MEMORY
 * for an allocation failure, NO_DEVICE for a missing or unusable device,
 * else INTERNAL; the sentence is "<what>: CUDA error <name> (<text>)". */
spart_status spart_device_failure(spart_context *context, int error, const char *what);

/* SPART_OK when CUDA is built in and device `device` exists; else
 * SPART_ERROR_NO_DEVICE with a sentence saying which. */
spart_status spart_device_check_exists(spart_context *context, int device);

/* Make `device` the calling thread's current device; *previous is what
 * spart_device_leave restores (-1: nothing). */
spart_status spart_device_select(spart_context *context, int device, int *previous);
void spart_device_leave(int previous);

/* SPART_OK when `pointer` is memory kernels on `device` may use (device
 * memory of that device, or managed memory); else
 * SPART_ERROR_INVALID_ARGUMENT: "<what>: <name> is host memory, ...". */
spart_status spart_device_check_pointer(spart_context *context, const void *pointer, int device,
                                        const char *what, const char *name);

/* Check that the context's device exists and make it current, naming
 * `what` in the sentence of a failure. */
spart_status spart_device_enter(spart_context *context, const char *what, int *previous);

#endif /* SPART_DEVICE_SELECT_H */
