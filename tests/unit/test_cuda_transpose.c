/*
 * Device transposes (label `cuda`): the exact transpose of a device
 * regridder (spart_regridder_transpose) holds exactly the host transpose's
 * arrays, for float64 and float32 values and int32 and int64 columns, with
 * 64-bit sort keys forced, run after run, and for degenerate shapes (no
 * entries, no rows, no columns, empty rows, a row of three million
 * entries, columns of half a million entries, which become long rows); its
 * transpose is the original. The conservative transpose of a device
 * regridder holds the host one's values on the exact transpose's pattern
 * (shared on the device), for the roles that keep track of the elements,
 * and refuses the same roles as the host. Products through the transposes
 * equal the host's.
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

#include "operator/regridder_device.h"
#include "test_cuda_util.h"

static spart_regridder *transpose_of(fixture *f, spart_regridder *regridder)
{
    spart_regridder *transposed = NULL;
    if (spart_regridder_transpose(f->context, regridder, &transposed) != SPART_OK) {
        fail_msg("spart_regridder_transpose: %s", spart_context_error(f->context));
    }
    return transposed;
}

/* The device transpose of `host` (through spart_regridder_transpose of a
 * device copy) equals the host transpose, products included; the
 * transpose of the transpose is the original object. */
static void assert_transpose_equals_host(fixture *f, spart_regridder *host, const char *what)
{
    spart_regridder *device = to_device(f, host);
    spart_regridder *host_transposed = transpose_of(f, host);
    spart_regridder *device_transposed = transpose_of(f, device);
    (void)assert_same_csr(f->context, host_transposed, device_transposed, what);
    /* A short-row index (rows of at most 255 entries, g <= 2) on both
     * sides or on neither: the device makes its own. */
    assert_int_equal(device_transposed->device.short_row_lengths != NULL,
                     host_transposed->plan.row_lengths != NULL);
    if (host_transposed->csr.num_columns > 0) {
        assert_same_products(f->context, host_transposed, device_transposed, 31, what);
    }
    assert_ptr_equal(transpose_of(f, device_transposed), device);
    assert_ptr_equal(transpose_of(f, device), device_transposed); /* kept, not rebuilt */
    spart_regridder_free(device_transposed);                      /* owned: does nothing */
    spart_regridder_free(device);
}

/* ---- the exact transpose -------------------------------------------------------------------- */

static void every_value_and_column_type_equals_the_host(void **state)
{
    fixture *f = *state;
    int64_t *lengths = random_lengths(20000, 12, 1);
    for (int float32 = 0; float32 <= 1; float32++) {
        for (int int64_columns = 0; int64_columns <= 1; int64_columns++) {
            spart_regridder *host =
                csr_regridder(f->context, 20000, 7000, lengths, float32, int64_columns, 2);
            char what[64];
            snprintf(what, sizeof what, "float%d values, int%d columns", float32 ? 32 : 64,
                     int64_columns ? 64 : 32);
            assert_transpose_equals_host(f, host, what);
            spart_regridder_free(host);
        }
    }
    free(lengths);
}

/* spart_device_csr_transpose with 64-bit keys and positions forced, and
 * without, into fresh regridders: the host's arrays each time. */
static void sixty_four_bit_sorts_and_repeated_runs_equal_the_host(void **state)
{
    fixture *f = *state;
    int64_t *lengths = random_lengths(50000, 20, 3);
    spart_regridder *host = csr_regridder(f->context, 50000, 30000, lengths, 1, 0, 4);
    spart_regridder *host_transposed = transpose_of(f, host);
    spart_regridder *device = to_device(f, host);
    uint64_t first = 0;
    for (int run = 0; run < 6; run++) {
        int wide = run % 2;
        spart_regridder *made = device_shell(f->context, 30000, 50000);
        if (spart_device_csr_transpose(f->context, device, wide, made) != SPART_OK) {
            fail_msg("spart_device_csr_transpose: %s", spart_context_error(f->context));
        }
        char what[48];
        snprintf(what, sizeof what, "run %d, %s sort", run, wide ? "64-bit" : "32-bit");
        uint64_t digest = assert_same_csr(f->context, host_transposed, made, what);
        if (run == 0) {
            first = digest;
        }
        assert_true(digest == first);
        spart_regridder_free(made);
    }
    spart_regridder_free(device);
    spart_regridder_free(host);
    free(lengths);
}

static void empty_operators_and_empty_rows_equal_the_host(void **state)
{
    fixture *f = *state;
    int64_t zeros[6] = {0, 0, 0, 0, 0, 0};
    spart_regridder *no_entries = csr_regridder(f->context, 6, 9, zeros, 0, 0, 5);
    assert_transpose_equals_host(f, no_entries, "no entries");
    spart_regridder_free(no_entries);
    spart_regridder *no_rows = csr_regridder(f->context, 0, 9, zeros, 1, 0, 6);
    assert_transpose_equals_host(f, no_rows, "no rows");
    spart_regridder_free(no_rows);
    spart_regridder *no_columns = csr_regridder(f->context, 6, 0, zeros, 0, 0, 7);
    assert_transpose_equals_host(f, no_columns, "no columns");
    spart_regridder_free(no_columns);
    /* Most rows empty and most columns unused. */
    int64_t *lengths = calloc(100000, sizeof(int64_t));
    lengths[10] = 3;
    lengths[99999] = 5000;
    spart_regridder *sparse = csr_regridder(f->context, 100000, 100000, lengths, 0, 0, 8);
    assert_transpose_equals_host(f, sparse, "empty rows and columns");
    spart_regridder_free(sparse);
    free(lengths);
}

/* A row of three million entries spreads over many rows of the transpose;
 * eight columns of about half a million entries each become long rows of
 * the transpose (chunked, with a long-row table built on the device). */
static void an_enormous_row_and_enormous_columns_equal_the_host(void **state)
{
    fixture *f = *state;
    int64_t *lengths = random_lengths(3000, 4, 9);
    lengths[1234] = 3000000;
    spart_regridder *wide_row = csr_regridder(f->context, 3000, 200000, lengths, 1, 0, 10);
    assert_transpose_equals_host(f, wide_row, "a row of three million entries");
    spart_regridder_free(wide_row);
    free(lengths);
    lengths = random_lengths(100000, 40, 11);
    spart_regridder *tall = csr_regridder(f->context, 100000, 8, lengths, 0, 0, 12);
    spart_regridder *tall_transposed = transpose_of(f, tall);
    assert_true(tall_transposed->csr.row_ptr[1] > 50 * SPART_CHUNK_LENGTH);
    assert_transpose_equals_host(f, tall, "columns of half a million entries");
    spart_regridder_free(tall);
    free(lengths);
}

/* ---- the conservative transpose ---------------------------------------------------------------
 */

/* 1-D conservative weights: `elements` input grids of n_in vertices (each
 * shifted and stretched), one shared output grid of n_out vertices,
 * weights_input varying per element and cell. */
typedef struct conservative_case {
    int64_t elements, n_in, n_out;
    double *x_input, *x_output, *weights_input;
    spart_array grid_input, grid_output, weights_input_array;
    spart_weights_options options;
    spart_weights *weights;
} conservative_case;

static void make_conservative(fixture *f, conservative_case *c, int64_t elements, int64_t n_in,
                              int64_t n_out)
{
    memset(c, 0, sizeof *c);
    c->elements = elements;
    c->n_in = n_in;
    c->n_out = n_out;
    c->x_input = malloc((size_t)(elements * n_in) * sizeof(double));
    c->x_output = malloc((size_t)n_out * sizeof(double));
    c->weights_input = malloc((size_t)(elements * (n_in - 1)) * sizeof(double));
    for (int64_t e = 0; e < elements; e++) {
        for (int64_t i = 0; i < n_in; i++) {
            double t = (double)i / (double)(n_in - 1);
            c->x_input[e * n_in + i] =
                -1.0 + 0.1 * (double)e + (2.0 + 0.2 * (double)e) * t + 0.05 * t * t;
        }
        for (int64_t i = 0; i + 1 < n_in; i++) {
            c->weights_input[e * (n_in - 1) + i] = 1.0 + 0.25 * (double)(i % 7) + 0.5 * (double)e;
        }
    }
    for (int64_t o = 0; o < n_out; o++) {
        c->x_output[o] = -0.9 + 2.1 * (double)o / (double)(n_out - 1);
    }
    c->grid_input = (spart_array){c->x_input, {2, {elements, n_in}}};
    c->grid_output = (spart_array){c->x_output, {1, {n_out}}};
    c->weights_input_array = (spart_array){c->weights_input, {2, {elements, n_in - 1}}};
    spart_weights_options_init(&c->options);
    c->options.method = SPART_METHOD_CONSERVATIVE;
    c->options.weights_input = &c->weights_input_array;
    c->options.num_axis_input = 1;
    c->options.axis_input[0] = -1;
    if (spart_weights_build(f->context, 1, &c->grid_input, &c->grid_output, &c->options,
                            &c->weights) != SPART_OK) {
        fail_msg("spart_weights_build: %s", spart_context_error(f->context));
    }
}

static void free_conservative(conservative_case *c)
{
    spart_weights_free(c->weights);
    free(c->x_input);
    free(c->x_output);
    free(c->weights_input);
}

/* A regridder for the case's weights with values of shape (in_elements,
 * n_in - 1) and (out_elements, n_out - 1), on the device or the host. */
static spart_regridder *conservative_forward(fixture *f, const conservative_case *c,
                                             int64_t in_elements, int64_t out_elements, int float32,
                                             int on_device)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = (spart_shape){2, {in_elements, c->n_in - 1}};
    options.has_shape_output = 1;
    options.shape_output = (spart_shape){2, {out_elements, c->n_out - 1}};
    options.value_type = float32 ? SPART_FLOAT32 : SPART_FLOAT64;
    spart_regridder *regridder = NULL;
    spart_status status =
        on_device ? spart_regridder_create_device(f->context, c->weights, &options, &regridder)
                  : spart_regridder_create(f->context, c->weights, &options, &regridder);
    if (status != SPART_OK) {
        fail_msg("making the forward regridder: %s", spart_context_error(f->context));
    }
    return regridder;
}

static spart_status conservative_of(fixture *f, const conservative_case *c,
                                    spart_regridder *forward, spart_regridder **conservative)
{
    return spart_regridder_transpose_conservative(f->context, forward, 1, &c->grid_input,
                                                  &c->grid_output, &c->options, conservative);
}

static void check_conservative_role(fixture *f, const conservative_case *c, int64_t in_elements,
                                    int64_t out_elements, int float32, const char *what)
{
    spart_regridder *host = conservative_forward(f, c, in_elements, out_elements, float32, 0);
    spart_regridder *device = conservative_forward(f, c, in_elements, out_elements, float32, 1);
    spart_regridder *host_conservative = NULL, *device_conservative = NULL;
    assert_int_equal(conservative_of(f, c, host, &host_conservative), SPART_OK);
    for (int call = 0; call < 2; call++) { /* a second call replaces the first */
        if (conservative_of(f, c, device, &device_conservative) != SPART_OK) {
            fail_msg("%s: device conservative transpose: %s", what,
                     spart_context_error(f->context));
        }
    }
    assert_int_equal(spart_regridder_cuda_device(device_conservative), 0);
    (void)assert_same_csr(f->context, host_conservative, device_conservative, what);
    assert_same_products(f->context, host_conservative, device_conservative, 41, what);
    /* The pattern is the exact transpose's, shared on the device. */
    spart_regridder *exact = transpose_of(f, device);
    assert_ptr_equal(device_conservative->csr.row_ptr, exact->csr.row_ptr);
    assert_ptr_equal(device_conservative->device.short_row_lengths,
                     exact->device.short_row_lengths);
    assert_true(device_conservative->csr.columns32 == exact->csr.columns32);
    assert_true(device_conservative->csr.values64 != exact->csr.values64 ||
                device_conservative->csr.values32 != exact->csr.values32);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

static void the_conservative_transpose_equals_the_host(void **state)
{
    fixture *f = *state;
    conservative_case small, large;
    make_conservative(f, &small, 3, 9, 6);
    make_conservative(f, &large, 5, 4001, 3000);
    for (int float32 = 0; float32 <= 1; float32++) {
        check_conservative_role(f, &small, 3, 3, float32, "diagonal role, small");
        check_conservative_role(f, &small, 3, 1, float32, "summed role, small");
        check_conservative_role(f, &large, 5, 5, float32, "diagonal role, large");
        check_conservative_role(f, &large, 5, 1, float32, "summed role, large");
    }
    free_conservative(&small);
    free_conservative(&large);
}

static void lost_elements_are_refused_on_the_device_too(void **state)
{
    fixture *f = *state;
    conservative_case c;
    make_conservative(f, &c, 3, 9, 6);
    spart_regridder *device = conservative_forward(f, &c, 1, 1, 0, 1);
    spart_regridder *conservative = (spart_regridder *)&conservative;
    assert_int_equal(conservative_of(f, &c, device, &conservative), SPART_ERROR_NOT_IMPLEMENTED);
    assert_null(conservative);
    assert_non_null(strstr(spart_context_error(f->context), "is lost"));
    spart_regridder_free(device);
    free_conservative(&c);
}

/* ---- setup and main ------------------------------------------------------------------------ */

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const char *skip_pattern = getenv("SPART_CUDA_TEST_SKIP");
    if (skip_pattern != NULL && skip_pattern[0] != '\0') {
        cmocka_set_skip_filter(skip_pattern);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_value_and_column_type_equals_the_host),
        cmocka_unit_test(sixty_four_bit_sorts_and_repeated_runs_equal_the_host),
        cmocka_unit_test(empty_operators_and_empty_rows_equal_the_host),
        cmocka_unit_test(an_enormous_row_and_enormous_columns_equal_the_host),
        cmocka_unit_test(the_conservative_transpose_equals_the_host),
        cmocka_unit_test(lost_elements_are_refused_on_the_device_too),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
