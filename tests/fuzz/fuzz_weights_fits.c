/* libFuzzer: spart_weights_load (src/io/weights_fits.c, fits_util.c,
 * fits_scan.c) on any bytes: a status with a sentence, never a crash. */
#include "fuzz_input.h"
#include "spart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".fits");
    spart_context *context = NULL;
    if (path == NULL || spart_context_create(&context) != SPART_OK) {
        return 0;
    }
    spart_weights *weights = NULL;
    spart_status status = spart_weights_load(context, path, &weights);
    if (status != SPART_OK && spart_context_error(context)[0] == '\0') {
        abort(); /* a refusal must say why */
    }
    spart_weights_free(weights);
    spart_context_free(context);
    return 0;
}
