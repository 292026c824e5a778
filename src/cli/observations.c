/*
 * src/cli/observations.c: observed images, synthesised or read.
 */
#include "observations.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fits_cube.h"

static int synthesize(spart_context *context, const config *cfg, const problem *made,
                      const double *scene, double *images, char *error, size_t error_size)
{
    spart_status status =
        cfg->observations.noise
            ? spart_instrument_observe(context, made->instrument, scene, cfg->observations.seed,
                                       images, NULL)
            : spart_instrument_image(context, made->instrument, scene, images, NULL);
    if (status != SPART_OK) {
        snprintf(error, error_size, "synthesising the observations: %s",
                 spart_context_error(context));
        return -1;
    }
    return 0;
}

static int read_images(const config *cfg, const problem *made, double *images, char *error,
                       size_t error_size)
{
    int64_t dims[3] = {made->num_channel, made->num_sensor_x, made->num_sensor_y};
    char sentence[CONFIG_ERROR_LENGTH];
    int result = fits_cube_read(cfg->observations.file, dims, "channel x sensor_x x sensor_y",
                                images, sentence, sizeof sentence);
    if (result != 0) {
        config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                        error_size, "%s", sentence);
        return result;
    }
    int64_t count = made->num_channel * made->image_size;
    for (int64_t p = 0; p < count; p++) {
        if (!isfinite(images[p])) {
            config_error_at(cfg, cfg->observations.file_position, "observations.file", error,
                            error_size,
                            "%s: value %lld (flat C order) is %g; images must be finite",
                            cfg->observations.file, (long long)p, images[p]);
            return 1;
        }
    }
    return 0;
}

int observations_make(spart_context *context, const config *cfg, const problem *made,
                      const double *scene, double **images, char *error, size_t error_size)
{
    int64_t count = made->num_channel * made->image_size;
    *images = malloc((size_t)count * sizeof **images);
    if (*images == NULL) {
        snprintf(error, error_size, "out of memory for the images (%lld values)", (long long)count);
        return -1;
    }
    int result = cfg->observations.kind == OBSERVATIONS_SYNTHESIZE
                     ? synthesize(context, cfg, made, scene, *images, error, error_size)
                     : read_images(cfg, made, *images, error, error_size);
    if (result != 0) {
        free(*images);
        *images = NULL;
    }
    return result;
}
