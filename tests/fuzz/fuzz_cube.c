/* libFuzzer: the FITS cube reader of the spart command (fits_cube_read, for
 * scene.file and observations.file) on any bytes, for a 4 x 8 x 8 grid. */
#include "fits_cube.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".fits");
    if (path == NULL) {
        return 0;
    }
    static const int64_t dims[3] = {4, 8, 8};
    static double values[4 * 8 * 8];
    char error[1024];
    error[0] = '\0';
    if (fits_cube_read(path, dims, "wavelength x scene_x x scene_y", values, error, sizeof error) !=
            0 &&
        error[0] == '\0') {
        abort(); /* a refusal must say why */
    }
    return 0;
}
