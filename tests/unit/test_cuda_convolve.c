/*
 * Folding a kernel into weights on the device (label `cuda`):
 * spart_regridder_create_device_convolved builds exactly the CSR arrays
 * (row pointers, columns, values, bit for bit), plan and long-row table
 * that spart_regridder_create builds on the host from the weights that
 * spart_weights_convolve gives. Kernels shared, per orthogonal element
 * (as per wavelength or channel), varying over the output grid, varying
 * along an orthogonal axis the weights are shared along; larger than the
 * grid; of even lengths; with zeros and negative elements; one to four
 * resampled axes; runs that fill their box and runs that do not; runs of
 * more entries than a block holds; empty elements and no entries; the
 * regridder options passed through (float32 values, dropped zeros). The
 * same arrays run after run, and products equal to the host's. Bad
 * kernels and options are refused as on the host.
 *
 * Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_cuda_util.h"

/* ---- weights and kernels ---------------------------------------------------------------- */

/* Shapes and axes of weights, as spart_weights_create_from_arrays takes them. */
typedef struct weights_spec {
    spart_shape orthogonal;
    spart_shape input;
    spart_shape output;
    int num_axes;    /* resampled axes: the last num_axes of input and output */
    int64_t max_run; /* entries an input cell sends out at most */
    int scatter;     /* nonzero: a run's cells anywhere, in any order, repeated */
} weights_spec;

static int64_t resampled_size(const spart_shape *shape, int num_axes)
{
    int64_t size = 1;
    for (int a = shape->ndim - num_axes; a < shape->ndim; a++) {
        size *= shape->dims[a];
    }
    return size;
}

/* Weights like a regridder's: each element visits the input cells in
 * order, each sending 0 to max_run entries (a run) into a patch of output
 * cells: rows of `width` cells from an anchor cell, ascending, filled or
 * with cells left out (and wrapping past a row's end, so not always a
 * rectangle), with spread values; or, with `scatter`, into cells
 * anywhere, in any order, some repeated. */
static spart_weights *run_weights(fixture *f, const weights_spec *s, uint64_t seed)
{
    int64_t elements = spart_shape_size(&s->orthogonal);
    int64_t cells_in = resampled_size(&s->input, s->num_axes);
    int64_t cells_out = resampled_size(&s->output, s->num_axes);
    int64_t capacity = elements * cells_in * s->max_run + 1;
    int64_t last = s->output.dims[s->output.ndim - 1];
    int64_t *offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    int64_t *in = malloc((size_t)capacity * sizeof(int64_t));
    int64_t *out = malloc((size_t)capacity * sizeof(int64_t));
    double *values = malloc((size_t)capacity * sizeof(double));
    uint64_t state = seed;
    int64_t n = 0;
    offsets[0] = 0;
    for (int64_t e = 0; e < elements; e++) {
        for (int64_t i = 0; i < cells_in; i++) {
            int64_t length = (int64_t)(next_uniform(&state) * (double)(s->max_run + 1));
            int64_t anchor = (int64_t)(next_uniform(&state) * (double)cells_out);
            int64_t width = 1 + (int64_t)(next_uniform(&state) * (s->max_run > 10 ? 20.0 : 3.0));
            int ragged = next_uniform(&state) < 0.3;
            for (int64_t q = 0; q < length; q++) {
                int64_t cell = s->scatter ? (int64_t)(next_uniform(&state) * (double)cells_out)
                                          : anchor + (q / width) * last + q % width;
                if (cell >= cells_out) {
                    break; /* the patch reached the grid's end */
                }
                if (ragged && next_uniform(&state) < 0.3) {
                    continue;
                }
                in[n] = i;
                out[n] = cell;
                values[n] = spread_value(&state);
                n++;
            }
        }
        offsets[e + 1] = n;
    }
    int axes[SPART_MAX_NDIM];
    for (int a = 0; a < s->num_axes; a++) {
        axes[a] = s->input.ndim - s->num_axes + a;
    }
    int axes_output[SPART_MAX_NDIM];
    for (int a = 0; a < s->num_axes; a++) {
        axes_output[a] = s->output.ndim - s->num_axes + a;
    }
    spart_weights *weights = NULL;
    if (spart_weights_create_from_arrays(f->context, &s->orthogonal, &s->input, &s->output,
                                         s->num_axes, axes, s->num_axes, axes_output, offsets, in,
                                         out, values, &weights) != SPART_OK) {
        fail_msg("spart_weights_create_from_arrays: %s", spart_context_error(f->context));
    }
    free(offsets);
    free(in);
    free(out);
    free(values);
    return weights;
}

/* A kernel of the given shape: spread values of either sign, with about
 * zero_fraction of its elements +0 or -0. */
static double *make_kernel(const spart_shape *shape, double zero_fraction, uint64_t seed)
{
    int64_t size = spart_shape_size(shape);
    double *kernel = malloc((size_t)(size > 0 ? size : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < size; k++) {
        kernel[k] = spread_value(&state);
        if (next_uniform(&state) < zero_fraction) {
            kernel[k] = k % 2 == 0 ? 0.0 : -0.0;
        }
    }
    return kernel;
}

/* ---- the comparison ----------------------------------------------------------------------- */

/* The device-convolved regridder holds the arrays of the host path
 * (spart_weights_convolve, then spart_regridder_create); its products too
 * when `with_product`. Returns the arrays' digest. */
static uint64_t assert_convolved_equals_host(fixture *f, const spart_weights *weights,
                                             const spart_array *kernel,
                                             const spart_regridder_options *options,
                                             int with_product, const char *what)
{
    spart_weights *convolved = NULL;
    spart_regridder *host = NULL, *device = NULL;
    if (spart_weights_convolve(f->context, weights, kernel, &convolved) != SPART_OK) {
        fail_msg("%s: spart_weights_convolve: %s", what, spart_context_error(f->context));
    }
    if (spart_regridder_create(f->context, convolved, options, &host) != SPART_OK) {
        fail_msg("%s: spart_regridder_create: %s", what, spart_context_error(f->context));
    }
    if (spart_regridder_create_device_convolved(f->context, weights, kernel, options, &device) !=
        SPART_OK) {
        fail_msg("%s: spart_regridder_create_device_convolved: %s", what,
                 spart_context_error(f->context));
    }
    uint64_t digest = assert_same_csr(f->context, host, device, what);
    if (with_product) {
        assert_same_products(f->context, host, device, 23, what);
    }
    spart_regridder_free(device);
    spart_regridder_free(host);
    spart_weights_free(convolved);
    return digest;
}

/* run_weights, then the comparison with a kernel of shape `kernel_shape`. */
static uint64_t check_case(fixture *f, const weights_spec *s, const spart_shape *kernel_shape,
                           double zero_fraction, uint64_t seed, const char *what)
{
    spart_weights *weights = run_weights(f, s, seed);
    double *data = make_kernel(kernel_shape, zero_fraction, seed + 1);
    spart_array kernel = {data, *kernel_shape};
    uint64_t digest = assert_convolved_equals_host(f, weights, &kernel, NULL, 0, what);
    free(data);
    spart_weights_free(weights);
    return digest;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void a_shared_kernel_equals_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = {shape_of(1, (int64_t[]){3}),
                      shape_of(3, (int64_t[]){3, 7, 6}),
                      shape_of(3, (int64_t[]){3, 12, 9}),
                      2,
                      4,
                      0};
    spart_shape kernel = shape_of(2, (int64_t[]){5, 3});
    check_case(f, &s, &kernel, 0.0, 1, "dense 5x3 kernel");
    check_case(f, &s, &kernel, 0.3, 2, "5x3 kernel with zeros");
    kernel = shape_of(2, (int64_t[]){1, 1});
    check_case(f, &s, &kernel, 0.0, 3, "delta kernel");
}

static void even_kernels_equal_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = {
        shape_of(0, NULL), shape_of(2, (int64_t[]){5, 5}), shape_of(2, (int64_t[]){8, 7}), 2, 5, 0};
    spart_shape kernel = shape_of(2, (int64_t[]){4, 2});
    check_case(f, &s, &kernel, 0.0, 4, "4x2 kernel");
    kernel = shape_of(2, (int64_t[]){6, 6});
    check_case(f, &s, &kernel, 0.1, 5, "6x6 kernel with zeros");
}

static void kernels_larger_than_the_grid_equal_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = {shape_of(1, (int64_t[]){2}),
                      shape_of(3, (int64_t[]){2, 4, 4}),
                      shape_of(3, (int64_t[]){2, 5, 4}),
                      2,
                      3,
                      0};
    spart_shape kernel = shape_of(2, (int64_t[]){9, 11});
    check_case(f, &s, &kernel, 0.0, 6, "9x11 kernel on a 5x4 grid");
    kernel = shape_of(2, (int64_t[]){12, 3});
    check_case(f, &s, &kernel, 0.2, 7, "12x3 kernel on a 5x4 grid");
}

static void per_element_kernels_equal_the_host(void **state)
{
    fixture *f = *state;
    /* (channel, wavelength) elements with a kernel per channel, as the PSF
     * tutorial's (4, 1, 1, 1, 21, 21) against (4, 20, 128, 64) */
    weights_spec s = {shape_of(2, (int64_t[]){3, 4}),
                      shape_of(4, (int64_t[]){3, 4, 6, 6}),
                      shape_of(4, (int64_t[]){3, 4, 10, 8}),
                      2,
                      4,
                      0};
    spart_shape kernel = shape_of(6, (int64_t[]){3, 1, 1, 1, 5, 5});
    check_case(f, &s, &kernel, 0.0, 8, "a kernel per channel");
    kernel = shape_of(6, (int64_t[]){3, 4, 1, 1, 3, 4});
    check_case(f, &s, &kernel, 0.2, 9, "a kernel per channel and wavelength");
}

static void kernels_varying_over_the_grid_equal_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = {shape_of(1, (int64_t[]){2}),
                      shape_of(3, (int64_t[]){2, 5, 5}),
                      shape_of(3, (int64_t[]){2, 7, 6}),
                      2,
                      4,
                      0};
    spart_shape kernel = shape_of(4, (int64_t[]){7, 6, 3, 3});
    check_case(f, &s, &kernel, 0.0, 10, "a kernel per output cell");
    kernel = shape_of(5, (int64_t[]){2, 7, 1, 3, 4});
    check_case(f, &s, &kernel, 0.25, 11, "a kernel per element and output row");
}

static void a_kernel_along_an_axis_the_weights_share_equals_the_host(void **state)
{
    fixture *f = *state;
    /* weights shared along the first axis (1), kernels varying along it (3) */
    weights_spec s = {shape_of(1, (int64_t[]){1}),
                      shape_of(3, (int64_t[]){1, 5, 4}),
                      shape_of(3, (int64_t[]){1, 6, 6}),
                      2,
                      3,
                      0};
    spart_shape kernel = shape_of(5, (int64_t[]){3, 1, 1, 3, 3});
    check_case(f, &s, &kernel, 0.1, 12, "kernels broadcasting the weights");
}

static void one_to_four_resampled_axes_equal_the_host(void **state)
{
    fixture *f = *state;
    weights_spec one = {shape_of(1, (int64_t[]){2}),
                        shape_of(2, (int64_t[]){2, 30}),
                        shape_of(2, (int64_t[]){2, 25}),
                        1,
                        4,
                        0};
    spart_shape kernel = shape_of(1, (int64_t[]){7});
    check_case(f, &one, &kernel, 0.2, 13, "one axis");
    weights_spec three = {shape_of(0, NULL),
                          shape_of(3, (int64_t[]){4, 4, 3}),
                          shape_of(3, (int64_t[]){5, 4, 6}),
                          3,
                          4,
                          0};
    kernel = shape_of(3, (int64_t[]){3, 2, 5});
    check_case(f, &three, &kernel, 0.1, 14, "three axes");
    weights_spec four = {shape_of(0, NULL),
                         shape_of(4, (int64_t[]){2, 3, 3, 2}),
                         shape_of(4, (int64_t[]){3, 4, 3, 5}),
                         4,
                         3,
                         0};
    kernel = shape_of(4, (int64_t[]){2, 3, 1, 3});
    check_case(f, &four, &kernel, 0.1, 15, "four axes");
}

static void scattered_and_long_runs_equal_the_host(void **state)
{
    fixture *f = *state;
    /* cells anywhere, unsorted and repeated: no run fills its box */
    weights_spec scattered = {shape_of(1, (int64_t[]){2}),
                              shape_of(3, (int64_t[]){2, 3, 3}),
                              shape_of(3, (int64_t[]){2, 9, 11}),
                              2,
                              6,
                              1};
    spart_shape kernel = shape_of(2, (int64_t[]){3, 3});
    check_case(f, &scattered, &kernel, 0.0, 16, "scattered runs");
    /* runs of up to 400 entries: several tiles of a block's entries */
    weights_spec long_runs = {shape_of(0, NULL),
                              shape_of(2, (int64_t[]){2, 2}),
                              shape_of(2, (int64_t[]){40, 30}),
                              2,
                              400,
                              1};
    check_case(f, &long_runs, &kernel, 0.1, 17, "long runs");
    weights_spec long_patches = {shape_of(0, NULL),
                                 shape_of(2, (int64_t[]){2, 2}),
                                 shape_of(2, (int64_t[]){40, 30}),
                                 2,
                                 300,
                                 0};
    kernel = shape_of(2, (int64_t[]){4, 5});
    check_case(f, &long_patches, &kernel, 0.0, 18, "long ascending runs");
}

static void empty_elements_and_zero_kernels_equal_the_host(void **state)
{
    fixture *f = *state;
    /* max_run 1: many input cells send nothing, some elements stay empty */
    weights_spec s = {shape_of(1, (int64_t[]){5}),
                      shape_of(3, (int64_t[]){5, 2, 1}),
                      shape_of(3, (int64_t[]){5, 4, 4}),
                      2,
                      1,
                      0};
    spart_shape kernel = shape_of(2, (int64_t[]){3, 3});
    check_case(f, &s, &kernel, 0.0, 19, "sparse elements");
    check_case(f, &s, &kernel, 1.0, 20, "an all-zero kernel");
    kernel = shape_of(2, (int64_t[]){0, 3});
    check_case(f, &s, &kernel, 0.0, 21, "an empty kernel");
    weights_spec none = {shape_of(1, (int64_t[]){2}),
                         shape_of(3, (int64_t[]){2, 3, 3}),
                         shape_of(3, (int64_t[]){2, 4, 4}),
                         2,
                         0,
                         0};
    kernel = shape_of(2, (int64_t[]){3, 3});
    check_case(f, &none, &kernel, 0.0, 22, "no entries");
}

static void options_and_products_equal_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = {shape_of(1, (int64_t[]){3}),
                      shape_of(3, (int64_t[]){3, 6, 6}),
                      shape_of(3, (int64_t[]){3, 9, 8}),
                      2,
                      4,
                      0};
    spart_weights *weights = run_weights(f, &s, 24);
    spart_shape shape = shape_of(5, (int64_t[]){3, 1, 1, 5, 5});
    double *data = make_kernel(&shape, 0.2, 25);
    spart_array kernel = {data, shape};
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    assert_convolved_equals_host(f, weights, &kernel, &options, 1, "float64 defaults");
    options.value_type = SPART_FLOAT32;
    options.drop_zeros = 1;
    assert_convolved_equals_host(f, weights, &kernel, &options, 1, "float32, zeros dropped");
    free(data);
    spart_weights_free(weights);
}

static void repeated_runs_give_the_same_arrays(void **state)
{
    fixture *f = *state;
    weights_spec s = {shape_of(1, (int64_t[]){4}),
                      shape_of(3, (int64_t[]){4, 12, 12}),
                      shape_of(3, (int64_t[]){4, 20, 16}),
                      2,
                      5,
                      0};
    spart_shape kernel = shape_of(5, (int64_t[]){4, 1, 1, 7, 7});
    uint64_t first = check_case(f, &s, &kernel, 0.05, 26, "run 1");
    for (int run = 2; run <= 4; run++) {
        assert_true(check_case(f, &s, &kernel, 0.05, 26, "a later run") == first);
    }
}

static void bad_kernels_and_options_are_refused_as_on_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = {
        shape_of(0, NULL), shape_of(2, (int64_t[]){3, 3}), shape_of(2, (int64_t[]){4, 4}), 2, 2, 0};
    spart_weights *weights = run_weights(f, &s, 27);
    double data[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    spart_array kernel = {data, shape_of(2, (int64_t[]){3, 3})};
    spart_regridder *device = (spart_regridder *)&device;
    spart_array wrong_rank = {data, shape_of(1, (int64_t[]){9})};
    assert_int_equal(
        spart_regridder_create_device_convolved(f->context, weights, &wrong_rank, NULL, &device),
        SPART_ERROR_SHAPE_MISMATCH);
    assert_null(device);
    data[4] = INFINITY;
    assert_int_equal(
        spart_regridder_create_device_convolved(f->context, weights, &kernel, NULL, &device),
        SPART_ERROR_NOT_FINITE);
    data[4] = 1.0;
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.value_type = (spart_value_type)7;
    assert_int_equal(
        spart_regridder_create_device_convolved(f->context, weights, &kernel, &options, &device),
        SPART_ERROR_UNKNOWN_ENUM);
    assert_null(device);
    assert_int_equal(
        spart_regridder_create_device_convolved(f->context, NULL, &kernel, NULL, &device),
        SPART_ERROR_NULL_POINTER);
    spart_weights_free(weights);
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_shared_kernel_equals_the_host),
        cmocka_unit_test(even_kernels_equal_the_host),
        cmocka_unit_test(kernels_larger_than_the_grid_equal_the_host),
        cmocka_unit_test(per_element_kernels_equal_the_host),
        cmocka_unit_test(kernels_varying_over_the_grid_equal_the_host),
        cmocka_unit_test(a_kernel_along_an_axis_the_weights_share_equals_the_host),
        cmocka_unit_test(one_to_four_resampled_axes_equal_the_host),
        cmocka_unit_test(scattered_and_long_runs_equal_the_host),
        cmocka_unit_test(empty_elements_and_zero_kernels_equal_the_host),
        cmocka_unit_test(options_and_products_equal_the_host),
        cmocka_unit_test(repeated_runs_give_the_same_arrays),
        cmocka_unit_test(bad_kernels_and_options_are_refused_as_on_the_host),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
