/*
 * src/cli/device.c: MART operators on the host, or on a CUDA device (see
 * device.h). On the device the regridders are copied there once and the
 * library's MART driver keeps the whole loop there (spart/mart.h): only the
 * observations go over once, and the merits and the solution come back.
 */
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct device_operators {
    spart_mart_regridder_pair pair;    /* the regridders in use, gain and read noise */
    spart_mart_regridder_psf composed; /* with a PSF composed by FFT, on the device */
    int on_device;
    spart_context *context;   /* of the device memory below */
    spart_regridder *forward; /* device copies (NULL on the host) */
    spart_regridder *backward;
    spart_psf *psf; /* the PSF's device copy (NULL without one) */
    void *scratch;  /* the PSF composition's image set on the device */
    void *observed; /* the observations in device memory */
    char where[32];
};

static void free_device_part(device_operators *made)
{
    spart_regridder_free(made->forward);
    spart_regridder_free(made->backward);
    spart_psf_free(made->psf);
    spart_device_free(made->context, made->scratch);
    spart_device_free(made->context, made->observed);
    made->forward = NULL;
    made->backward = NULL;
    made->psf = NULL;
    made->scratch = NULL;
    made->observed = NULL;
}

/* Device copies of the regridders and operators on them. */
static int make_on_device(spart_context *context, spart_mart_operators *operators,
                          device_operators *made, const char **where, char *error,
                          size_t error_size)
{
    spart_mart_regridder_pair pair = made->pair;
    made->context = context;
    if (spart_regridder_to_device(context, pair.forward, &made->forward) != SPART_OK ||
        spart_regridder_to_device(context, pair.backward, &made->backward) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        return -1;
    }
    pair.forward = made->forward;
    pair.backward = made->backward;
    made->pair = pair;
    if (spart_mart_operators_from_regridders(context, &made->pair, operators) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        return -1;
    }
    made->on_device = 1;
    snprintf(made->where, sizeof made->where, "cuda device %d",
             spart_regridder_cuda_device(made->forward));
    *where = made->where;
    return 0;
}

/* The instrument's PSF (composed by FFT) on the device with device copies
 * of the regridders, and operators on them (spart_mart_regridder_psf). */
static int make_psf_on_device(spart_context *context, const spart_instrument *instrument,
                              spart_mart_operators *operators, device_operators *made,
                              const char **where, char *error, size_t error_size)
{
    made->context = context;
    size_t image_bytes = (size_t)spart_regridder_num_rows(made->pair.forward) * sizeof(double);
    if (spart_regridder_to_device(context, made->pair.forward, &made->forward) != SPART_OK ||
        spart_regridder_to_device(context, made->pair.backward, &made->backward) != SPART_OK ||
        spart_psf_to_device(context, spart_instrument_psf(instrument), &made->psf) != SPART_OK ||
        spart_device_malloc(context, image_bytes, &made->scratch) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        return -1;
    }
    spart_mart_regridder_psf composed = {made->forward,   made->psf,
                                         made->backward,  made->pair.num_channel,
                                         made->pair.gain, made->pair.read_noise,
                                         made->scratch};
    made->composed = composed;
    if (spart_mart_operators_from_regridders_psf(context, &made->composed, operators) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        return -1;
    }
    made->on_device = 1;
    snprintf(made->where, sizeof made->where, "cuda device %d", spart_psf_cuda_device(made->psf));
    *where = made->where;
    return 0;
}

/* An instrument whose PSF is composed by FFT: its own operators (the
 * PSF between the Regridders) on the host, or all of it on the device. */
static int make_with_psf(spart_context *context, const spart_instrument *instrument,
                         cli_device requested, const char *asked_by,
                         spart_mart_operators *operators, device_operators *made,
                         const char **where, char *error, size_t error_size)
{
    if (spart_instrument_mart_operators(context, instrument, &made->pair, operators) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        return -1;
    }
    *where = "host";
    if (requested == CLI_DEVICE_HOST || requested == CLI_DEVICE_UNSET) {
        return 0;
    }
    spart_mart_operators on_device = *operators;
    if (make_psf_on_device(context, instrument, &on_device, made, where, error, error_size) == 0) {
        *operators = on_device;
        return 0;
    }
    free_device_part(made);
    made->on_device = 0;
    if (requested == CLI_DEVICE_AUTO) {
        *where = "host (no usable CUDA device)";
        return 0;
    }
    char reason[512];
    snprintf(reason, sizeof reason, "%s", error);
    snprintf(error, error_size, "%s: %s", asked_by, reason);
    return -1;
}

int device_operators_make(spart_context *context, const spart_mart_regridder_pair *host,
                          const spart_instrument *instrument, cli_device requested,
                          const char *asked_by, spart_mart_operators *operators,
                          device_operators **made, const char **where, char *error,
                          size_t error_size)
{
    *made = calloc(1, sizeof **made);
    if (*made == NULL) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    (*made)->context = context;
    if (instrument != NULL && spart_instrument_psf(instrument) != NULL) {
        if (make_with_psf(context, instrument, requested, asked_by, operators, *made, where, error,
                          error_size) != 0) {
            device_operators_free(*made);
            *made = NULL;
            return -1;
        }
        return 0;
    }
    (*made)->pair = *host;
    if (spart_mart_operators_from_regridders(context, &(*made)->pair, operators) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(context));
        device_operators_free(*made);
        *made = NULL;
        return -1;
    }
    *where = "host";
    if (requested == CLI_DEVICE_HOST || requested == CLI_DEVICE_UNSET) {
        return 0;
    }
    spart_mart_operators on_device = *operators;
    if (make_on_device(context, &on_device, *made, where, error, error_size) == 0) {
        *operators = on_device;
        return 0;
    }
    free_device_part(*made);
    (*made)->pair = *host;
    (*made)->on_device = 0;
    if (requested == CLI_DEVICE_AUTO) {
        *where = "host (no usable CUDA device)";
        return 0;
    }
    char reason[512];
    snprintf(reason, sizeof reason, "%s", error);
    snprintf(error, error_size, "%s: %s", asked_by, reason);
    device_operators_free(*made);
    *made = NULL;
    return -1;
}

const double *device_operators_observed(device_operators *made, const double *observed,
                                        int64_t count, char *error, size_t error_size)
{
    if (!made->on_device) {
        return observed;
    }
    size_t bytes = (size_t)count * sizeof(double);
    if (made->observed == NULL &&
        spart_device_malloc(made->context, bytes, &made->observed) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(made->context));
        return NULL;
    }
    if (spart_device_copy_to_device(made->context, made->observed, observed, bytes) != SPART_OK) {
        snprintf(error, error_size, "%s", spart_context_error(made->context));
        return NULL;
    }
    return made->observed;
}

int device_operators_predict(device_operators *made, const spart_mart_operators *operators,
                             const double *scene, int64_t scene_size, double *images, int64_t count,
                             char *error, size_t error_size)
{
    spart_context *context = made->context;
    if (!made->on_device) {
        if (operators->forward(operators->user, context, scene, images, NULL) != SPART_OK) {
            snprintf(error, error_size, "%s", spart_context_error(context));
            return -1;
        }
        return 0;
    }
    size_t scene_bytes = (size_t)scene_size * sizeof(double);
    size_t image_bytes = (size_t)count * sizeof(double);
    void *scene_device = NULL, *images_device = NULL;
    int ok = spart_device_malloc(context, scene_bytes, &scene_device) == SPART_OK &&
             spart_device_malloc(context, image_bytes, &images_device) == SPART_OK &&
             spart_device_copy_to_device(context, scene_device, scene, scene_bytes) == SPART_OK &&
             operators->forward(operators->user, context, scene_device, images_device, NULL) ==
                 SPART_OK &&
             spart_device_copy_to_host(context, images, images_device, image_bytes) == SPART_OK;
    if (!ok) {
        snprintf(error, error_size, "%s", spart_context_error(context));
    }
    spart_device_free(context, images_device);
    spart_device_free(context, scene_device);
    return ok ? 0 : -1;
}

void device_operators_free(device_operators *made)
{
    if (made == NULL) {
        return;
    }
    if (made->on_device) {
        free_device_part(made);
    }
    free(made);
}
