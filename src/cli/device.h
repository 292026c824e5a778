/*
 * src/cli/device.h: where the inversion's products run. On the host the
 * instrument's own MART operators are used. With --device cuda the two
 * operators are copied to the GPU (spart_regridder_to_device) and the
 * library's MART driver keeps the whole loop there: the observations go
 * over once, the merits and the solution come back, and the predicted
 * images of the solution are made there too (device_operators_predict). A
 * device product equals the host product bit for bit (spart/device.h), so
 * both give the same inversion (checked on an H200: the same merits, bit
 * for bit, every iteration of examples/ideal-ctis.yaml). With a PSF
 * composed by FFT the PSF goes to the device too (spart_psf_to_device,
 * cuFFT): that inversion equals the host's (FFTW) to rounding, not bit
 * for bit.
 *
 * --device auto takes the GPU when one is usable and the host otherwise;
 * --device cuda without a usable GPU (or in a build without CUDA) is an
 * error that says which.
 */
#ifndef SPART_CLI_DEVICE_H
#define SPART_CLI_DEVICE_H

#include <stddef.h>

#include "cli.h"
#include "spart.h"

typedef struct device_operators device_operators;

/* Prepare MART operators of the regridder pair `host` (host regridders,
 * as an instrument gives them or as loaded) on `requested` (host, cuda or
 * auto) into *operators; *made holds what they need (free it with
 * device_operators_free after the solve) and *where names the place
 * ("host", "cuda device 0"). `asked_by` names the setting that asked for
 * cuda in the sentence of a failure ("--device cuda", or the config's
 * "solver.device: cuda"). Returns 0, or -1 with a sentence. */
int device_operators_make(spart_context *context, const spart_mart_regridder_pair *host,
                          const spart_instrument *instrument, cli_device requested,
                          const char *asked_by, spart_mart_operators *operators,
                          device_operators **made, const char **where, char *error,
                          size_t error_size);

/* The observations where the operators work: `observed` itself on the
 * host, a device copy (owned by `made`) on a device; NULL with a sentence
 * in `error` when the copy fails. */
const double *device_operators_observed(device_operators *made, const double *observed,
                                        int64_t count, char *error, size_t error_size);

/* The images (count values) that `operators` predict for `scene`
 * (scene_size values), both in host memory, wherever the operators run:
 * on a device the scene goes over and the images come back. Returns 0, or
 * -1 with a sentence in `error`. */
int device_operators_predict(device_operators *made, const spart_mart_operators *operators,
                             const double *scene, int64_t scene_size, double *images, int64_t count,
                             char *error, size_t error_size);

void device_operators_free(device_operators *made);

#endif /* SPART_CLI_DEVICE_H */
