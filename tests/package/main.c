/*
 * A user's program against an installed spart: print the version and build
 * a small weights object through the public API only. Built twice by
 * run_package_test.cmake: with find_package(spart) and with pkg-config.
 */
#include <stdio.h>
#include <string.h>

#include <spart.h>

int main(void)
{
    if (strcmp(spart_version(), SPART_VERSION_STRING) != 0) {
        fprintf(stderr, "library %s, headers %s\n", spart_version(), SPART_VERSION_STRING);
        return 1;
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        fprintf(stderr, "spart_context_create: %s\n", spart_last_error());
        return 1;
    }
    /* Two input cells into one output cell, halves each: no orthogonal axes. */
    const spart_shape orthogonal = {0, {0}};
    const spart_shape input = {1, {2}};
    const spart_shape output = {1, {1}};
    const int64_t offsets[] = {0, 2};
    const int64_t indices_input[] = {0, 1};
    const int64_t indices_output[] = {0, 0};
    const double values[] = {0.5, 0.5};
    spart_weights *weights = NULL;
    spart_status status =
        spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 0, NULL, 0, NULL,
                                         offsets, indices_input, indices_output, values, &weights);
    if (status != SPART_OK) {
        fprintf(stderr, "%s: %s\n", spart_status_string(status), spart_context_error(context));
        spart_context_free(context);
        return 1;
    }
    printf("spart %s: weights with %lld entries in %lld element(s)\n", spart_version(),
           (long long)spart_weights_num_entries(weights),
           (long long)spart_weights_num_elements(weights));
    spart_weights_free(weights);
    spart_context_free(context);
    return 0;
}
