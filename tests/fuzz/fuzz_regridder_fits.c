/* libFuzzer: spart_regridder_load (src/io/regridder_fits_load.c,
 * fits_util.c, fits_scan.c) on any bytes: a status with a sentence, never
 * a crash. A loaded operator is applied once, so that a structure the
 * loader let through that the product cannot use is found too. */
#include "fuzz_input.h"
#include "spart.h"

/* The values of a shape, or -1 above 2^16 (not worth a run's time). */
static int64_t small_size(const spart_shape *shape)
{
    int64_t size = 1;
    for (int k = 0; k < shape->ndim; k++) {
        if (shape->dims[k] < 0 || shape->dims[k] > 65536 || size * shape->dims[k] > 65536) {
            return -1;
        }
        size *= shape->dims[k];
    }
    return size;
}

static void apply_once(spart_context *context, const spart_regridder *regridder)
{
    spart_shape shape_x = spart_regridder_shape_input(regridder);
    spart_shape shape_y;
    if (spart_regridder_apply_shape(context, regridder, &shape_x, &shape_y) != SPART_OK) {
        return;
    }
    int64_t size_x = small_size(&shape_x);
    int64_t size_y = small_size(&shape_y);
    if (size_x < 0 || size_y < 0) {
        return;
    }
    double *x = calloc((size_t)size_x + 1, sizeof *x);
    double *y = calloc((size_t)size_y + 1, sizeof *y);
    if (x != NULL && y != NULL) {
        spart_array array = {x, shape_x};
        (void)spart_regridder_apply(context, regridder, &array, y, size_y);
    }
    free(x);
    free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".fits");
    spart_context *context = NULL;
    if (path == NULL || spart_context_create(&context) != SPART_OK) {
        return 0;
    }
    spart_regridder *regridder = NULL;
    spart_status status = spart_regridder_load(context, path, &regridder);
    if (status != SPART_OK && spart_context_error(context)[0] == '\0') {
        abort(); /* a refusal must say why */
    }
    if (status == SPART_OK) {
        apply_once(context, regridder);
    }
    spart_regridder_free(regridder);
    spart_context_free(context);
    return 0;
}
