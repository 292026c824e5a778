/*
 * write_weights_fits: save a small, known weights object to the FITS file
 * named on the command line, and print the library version. The parity test
 * tests/parity/check_fits_astropy.py reads the file with astropy and checks
 * it holds exactly these numbers, so the two files must change together.
 *
 * The weights: orthogonal shape (2,); input shape (2, 3, 4) resampled on
 * axes 1 and 2 (12 cells); output shape (2, 5) resampled on axis 1 (5
 * cells). Element 0 has three entries, element 1 two.
 */
#include <stdio.h>

#include "spart.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.fits\n", argv[0]);
        return 2;
    }
    const spart_shape orthogonal = {1, {2}};
    const spart_shape input = {3, {2, 3, 4}};
    const spart_shape output = {2, {2, 5}};
    const int axis_input[] = {1, 2};
    const int axis_output[] = {1};
    const int64_t offsets[] = {0, 3, 5};
    const int64_t indices_input[] = {0, 5, 11, 2, 7};
    const int64_t indices_output[] = {4, 0, 2, 1, 3};
    const double values[] = {0.5, 0.25, 1.0 / 3.0, -2.0, 1e-300};

    spart_context *context = NULL;
    spart_weights *weights = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        fprintf(stderr, "%s\n", spart_last_error());
        return 1;
    }
    spart_status status = spart_weights_create_from_arrays(
        context, &orthogonal, &input, &output, 2, axis_input, 1, axis_output, offsets,
        indices_input, indices_output, values, &weights);
    if (status == SPART_OK) {
        status = spart_weights_save(context, weights, argv[1], 1);
    }
    if (status != SPART_OK) {
        fprintf(stderr, "%s: %s\n", spart_status_string(status), spart_context_error(context));
    } else {
        printf("%s\n", spart_version());
    }
    spart_weights_free(weights);
    spart_context_free(context);
    return status == SPART_OK ? 0 : 1;
}
