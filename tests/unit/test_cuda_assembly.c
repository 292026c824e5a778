/*
 * Device assembly (label `cuda`): spart_regridder_create_device builds, on
 * the GPU, exactly the CSR arrays that spart_regridder_create builds on the
 * host (row pointers, columns and values compared bit for bit, and the
 * plan and long-row table), for every role of the orthogonal axes, float64
 * and float32 values, int32 and int64 columns, lookup tables and affine
 * strides, dropped zeros; run after run; with 64-bit sort keys forced;
 * with the weights copied through pinned buffers; and for degenerate
 * shapes: no entries, no rows, empty rows, one row of three million
 * entries. Its products equal the host regridder's.
 *
 * Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure. Without a device the
 * program still checks that spart_regridder_create_device says
 * SPART_ERROR_NO_DEVICE with a sentence.
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

/* ---- weights ---------------------------------------------------------------------------- */

/* What random weights look like: shapes and axes as
 * spart_weights_create_from_arrays takes them, entries per element, and
 * the fraction of values set to +0.0 or -0.0. */
typedef struct weights_spec {
    spart_shape orthogonal;
    spart_shape input;
    spart_shape output;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t entries_per_element;
    double zero_fraction;
} weights_spec;

/* Weights whose entries go to random cells in random order (so that rows
 * collect entries from all over the stream), with spread values. */
static spart_weights *random_weights(fixture *f, const weights_spec *s, uint64_t seed)
{
    int64_t elements = spart_shape_size(&s->orthogonal);
    int64_t n = elements * s->entries_per_element;
    int64_t cells_in = resampled_cells(&s->input, s->num_axis_input, s->axis_input);
    int64_t cells_out = resampled_cells(&s->output, s->num_axis_output, s->axis_output);
    int64_t *offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    int64_t *in = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    int64_t *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t e = 0; e <= elements; e++) {
        offsets[e] = e * s->entries_per_element;
    }
    for (int64_t k = 0; k < n; k++) {
        in[k] = (int64_t)(next_uniform(&state) * (double)cells_in);
        out[k] = (int64_t)(next_uniform(&state) * (double)cells_out);
        values[k] = spread_value(&state);
        if (next_uniform(&state) < s->zero_fraction) {
            values[k] = (k % 2 == 0) ? 0.0 : -0.0;
        }
    }
    spart_weights *weights = NULL;
    spart_status status = spart_weights_create_from_arrays(
        f->context, &s->orthogonal, &s->input, &s->output, s->num_axis_input, s->axis_input,
        s->num_axis_output, s->axis_output, offsets, in, out, values, &weights);
    if (status != SPART_OK) {
        fail_msg("spart_weights_create_from_arrays: %s", spart_context_error(f->context));
    }
    free(offsets);
    free(in);
    free(out);
    free(values);
    return weights;
}

/* The host regridder and the device-assembled one for the same weights
 * and options hold the same arrays; their products agree too when
 * `with_product`. Returns the arrays' digest. */
static uint64_t assert_device_assembly_equals_host(fixture *f, const spart_weights *weights,
                                                   const spart_regridder_options *options,
                                                   int with_product, const char *what)
{
    spart_regridder *host = NULL, *device = NULL;
    if (spart_regridder_create(f->context, weights, options, &host) != SPART_OK) {
        fail_msg("%s: spart_regridder_create: %s", what, spart_context_error(f->context));
    }
    if (spart_regridder_create_device(f->context, weights, options, &device) != SPART_OK) {
        fail_msg("%s: spart_regridder_create_device: %s", what, spart_context_error(f->context));
    }
    uint64_t result = assert_same_csr(f->context, host, device, what);
    if (with_product) {
        assert_same_products(f->context, host, device, 17, what);
    }
    spart_regridder_free(device);
    spart_regridder_free(host);
    return result;
}

static void set_shape(spart_shape *shape, int ndim, const int64_t *dims)
{
    memset(shape, 0, sizeof *shape);
    shape->ndim = ndim;
    for (int k = 0; k < ndim; k++) {
        shape->dims[k] = dims[k];
    }
}

/* Three elements along one orthogonal axis, 40 input and 30 output cells. */
static weights_spec three_elements(int64_t entries_per_element, double zero_fraction)
{
    weights_spec s;
    memset(&s, 0, sizeof s);
    set_shape(&s.orthogonal, 1, (const int64_t[]){3});
    set_shape(&s.input, 2, (const int64_t[]){3, 40});
    set_shape(&s.output, 2, (const int64_t[]){3, 30});
    s.num_axis_input = 1;
    s.axis_input[0] = 1;
    s.num_axis_output = 1;
    s.axis_output[0] = 1;
    s.entries_per_element = entries_per_element;
    s.zero_fraction = zero_fraction;
    return s;
}

/* ---- the tests ---------------------------------------------------------------------------- */

static void every_role_and_value_type_equals_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s = three_elements(500, 0.1);
    spart_weights *weights = random_weights(f, &s, 1);
    /* N N N, N 1 N, N N 1, N 1 1, and a batch axis (1 M M) before N N N. */
    const int64_t inputs[5][3] = {{3, 40}, {1, 40}, {3, 40}, {1, 40}, {5, 3, 40}};
    const int64_t outputs[5][3] = {{3, 30}, {3, 30}, {1, 30}, {1, 30}, {5, 3, 30}};
    const int ndims[5] = {2, 2, 2, 2, 3};
    const char *const names[5] = {"N N N", "N 1 N", "N N 1", "N 1 1", "1 M M"};
    for (int role = 0; role < 5; role++) {
        for (int float32 = 0; float32 <= 1; float32++) {
            for (int drop_zeros = 0; drop_zeros <= 1; drop_zeros++) {
                spart_regridder_options options;
                spart_regridder_options_init(&options);
                options.has_shape_input = 1;
                set_shape(&options.shape_input, ndims[role], inputs[role]);
                options.has_shape_output = 1;
                set_shape(&options.shape_output, ndims[role], outputs[role]);
                options.value_type = float32 ? SPART_FLOAT32 : SPART_FLOAT64;
                options.drop_zeros = drop_zeros;
                char what[96];
                snprintf(what, sizeof what, "role %s, float%d, drop_zeros %d", names[role],
                         float32 ? 32 : 64, drop_zeros);
                (void)assert_device_assembly_equals_host(f, weights, &options, 1, what);
            }
        }
    }
    spart_weights_free(weights);
}

/* Resampled axes that are not one dense block of the matrix index (an
 * orthogonal axis between them) need lookup tables on both sides. */
static void lookup_tables_equal_the_host(void **state)
{
    fixture *f = *state;
    weights_spec s;
    memset(&s, 0, sizeof s);
    set_shape(&s.orthogonal, 1, (const int64_t[]){3});
    set_shape(&s.input, 3, (const int64_t[]){4, 3, 5});
    set_shape(&s.output, 3, (const int64_t[]){2, 3, 7});
    s.num_axis_input = 2;
    s.axis_input[0] = 0;
    s.axis_input[1] = 2;
    s.num_axis_output = 2;
    s.axis_output[0] = 0;
    s.axis_output[1] = 2;
    s.entries_per_element = 300;
    spart_weights *weights = random_weights(f, &s, 2);
    for (int float32 = 0; float32 <= 1; float32++) {
        spart_regridder_options options;
        spart_regridder_options_init(&options);
        options.value_type = float32 ? SPART_FLOAT32 : SPART_FLOAT64;
        (void)assert_device_assembly_equals_host(f, weights, &options, 1, "lookup tables");
    }
    spart_weights_free(weights);
}

/* 2^31 + 8 input cells: the columns are int64 on both sides (no product:
 * x would take 16 GiB). */
static void int64_columns_equal_the_host(void **state)
{
    fixture *f = *state;
    const int64_t big = ((int64_t)1 << 31) + 8;
    weights_spec s;
    memset(&s, 0, sizeof s);
    set_shape(&s.input, 1, &big);
    set_shape(&s.output, 1, (const int64_t[]){50});
    s.num_axis_input = 1;
    s.num_axis_output = 1;
    s.entries_per_element = 2000;
    spart_weights *weights = random_weights(f, &s, 3);
    for (int float32 = 0; float32 <= 1; float32++) {
        spart_regridder_options options;
        spart_regridder_options_init(&options);
        options.value_type = float32 ? SPART_FLOAT32 : SPART_FLOAT64;
        spart_regridder *device = NULL;
        assert_int_equal(spart_regridder_create_device(f->context, weights, &options, &device),
                         SPART_OK);
        assert_non_null(device->csr.columns64);
        assert_null(device->csr.columns32);
        spart_regridder_free(device);
        (void)assert_device_assembly_equals_host(f, weights, &options, 0, "int64 columns");
    }
    spart_weights_free(weights);
}

/* +0.0 and -0.0 values are left out when asked, kept otherwise; weights
 * of zeros only make an operator without entries. */
static void zeros_are_dropped_as_on_the_host(void **state)
{
    fixture *f = *state;
    for (int all_zero = 0; all_zero <= 1; all_zero++) {
        weights_spec s = three_elements(400, all_zero ? 1.0 : 0.4);
        spart_weights *weights = random_weights(f, &s, 4);
        for (int drop_zeros = 0; drop_zeros <= 1; drop_zeros++) {
            spart_regridder_options options;
            spart_regridder_options_init(&options);
            options.drop_zeros = drop_zeros;
            spart_regridder *device = NULL;
            assert_int_equal(spart_regridder_create_device(f->context, weights, &options, &device),
                             SPART_OK);
            int64_t expected = drop_zeros && all_zero ? 0 : 1200;
            if (drop_zeros && !all_zero) {
                assert_true(spart_regridder_num_entries(device) < 1200);
            } else {
                assert_int_equal(spart_regridder_num_entries(device), expected);
            }
            spart_regridder_free(device);
            (void)assert_device_assembly_equals_host(f, weights, &options, 1, "zeros");
        }
        spart_weights_free(weights);
    }
}

static void repeated_assemblies_give_the_same_arrays(void **state)
{
    fixture *f = *state;
    weights_spec s;
    memset(&s, 0, sizeof s);
    set_shape(&s.orthogonal, 1, (const int64_t[]){4});
    set_shape(&s.input, 2, (const int64_t[]){4, 20000});
    set_shape(&s.output, 2, (const int64_t[]){4, 3000});
    s.num_axis_input = 1;
    s.axis_input[0] = 1;
    s.num_axis_output = 1;
    s.axis_output[0] = 1;
    s.entries_per_element = 250000;
    spart_weights *weights = random_weights(f, &s, 5);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.value_type = SPART_FLOAT32;
    options.has_shape_input = 1;
    set_shape(&options.shape_input, 2, (const int64_t[]){1, 20000}); /* a shared input */
    uint64_t first = assert_device_assembly_equals_host(f, weights, &options, 1, "run 0");
    for (int run = 1; run < 5; run++) {
        char what[32];
        snprintf(what, sizeof what, "run %d", run);
        assert_true(assert_device_assembly_equals_host(f, weights, &options, 0, what) == first);
    }
    spart_weights_free(weights);
}

/* ---- the assembly function itself: forced 64-bit sorts, degenerate shapes ----------------- */

/* An assembly source over caller arrays: `elements` elements of
 * entries_per_element entries each, rows and columns drawn below num_rows
 * and num_columns (affine strides 1, element offsets 0), except that a
 * fraction long_fraction of the entries go to row long_row (when >= 0);
 * 5 % of the values are 0. */
typedef struct source_arrays {
    spart_assembly_source source;
    int64_t *offsets, *in, *out, *row_offset, *column_offset;
    double *values;
} source_arrays;

static void make_source(source_arrays *a, int64_t elements, int64_t entries_per_element,
                        int64_t num_rows, int64_t num_columns, int64_t long_row,
                        double long_fraction, int drop_zeros, uint64_t seed)
{
    int64_t n = elements * entries_per_element;
    size_t count = (size_t)(n > 0 ? n : 1);
    a->offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    a->in = malloc(count * sizeof(int64_t));
    a->out = malloc(count * sizeof(int64_t));
    a->values = malloc(count * sizeof(double));
    a->row_offset = calloc((size_t)(elements > 0 ? elements : 1), sizeof(int64_t));
    a->column_offset = calloc((size_t)(elements > 0 ? elements : 1), sizeof(int64_t));
    uint64_t state = seed;
    for (int64_t e = 0; e <= elements; e++) {
        a->offsets[e] = e * entries_per_element;
    }
    for (int64_t k = 0; k < n; k++) {
        int to_long_row = long_row >= 0 && next_uniform(&state) < long_fraction;
        a->out[k] = to_long_row ? long_row : (int64_t)(next_uniform(&state) * (double)num_rows);
        a->in[k] = (int64_t)(next_uniform(&state) * (double)num_columns);
        a->values[k] = next_uniform(&state) < 0.05 ? 0.0 : spread_value(&state);
    }
    memset(&a->source, 0, sizeof a->source);
    a->source.num_elements = elements;
    a->source.offsets = a->offsets;
    a->source.indices_input = a->in;
    a->source.indices_output = a->out;
    a->source.values = a->values;
    a->source.row_offset = a->row_offset;
    a->source.column_offset = a->column_offset;
    a->source.row_lookup_stride = 1;
    a->source.column_lookup_stride = 1;
    a->source.drop_zeros = drop_zeros;
}

static void free_source(source_arrays *a)
{
    free(a->offsets);
    free(a->in);
    free(a->out);
    free(a->values);
    free(a->row_offset);
    free(a->column_offset);
}

/* Ways to steer the device assembly: the defaults, 64-bit sorts, and
 * copies staged through small pinned buffers (many per array, one of an
 * odd size so that chunks split values). */
static const spart_device_assembly_options PLAIN = {0, 0};
static const spart_device_assembly_options WIDE = {1, 0};
static const spart_device_assembly_options STAGED = {0, 65536};
static const spart_device_assembly_options STAGED_ODD = {1, 1001};

/* spart_host_csr_assemble and spart_device_csr_assemble (steered by
 * `options`) on the same source build the same arrays. */
static void assert_source_assembles_alike(fixture *f, const source_arrays *a, int64_t num_rows,
                                          int64_t num_columns, spart_value_type value_type,
                                          spart_device_assembly_options options, const char *what)
{
    spart_regridder *host = device_shell(f->context, num_rows, num_columns);
    host->ops = spart_operator_ops_for(-1);
    assert_int_equal(spart_host_csr_assemble(&f->context->allocator, &a->source, num_rows,
                                             num_columns, value_type, 2, &host->csr),
                     SPART_OK);
    host->plan = spart_plan_product(&host->csr);
    spart_regridder *device = device_shell(f->context, num_rows, num_columns);
    if (spart_device_csr_assemble(f->context, &a->source, num_columns, num_rows, value_type,
                                  &options, device) != SPART_OK) {
        fail_msg("%s: spart_device_csr_assemble: %s", what, spart_context_error(f->context));
    }
    (void)assert_same_csr(f->context, host, device, what);
    if (num_columns > 0) {
        assert_same_products(f->context, host, device, 23, what);
    }
    spart_regridder_free(device);
    spart_regridder_free(host);
}

static void sixty_four_bit_sort_keys_equal_the_host(void **state)
{
    fixture *f = *state;
    source_arrays a;
    make_source(&a, 5, 20000, 7000, 9000, -1, 0.0, 1, 6);
    for (int type = 0; type <= 1; type++) {
        spart_value_type value_type = type ? SPART_FLOAT32 : SPART_FLOAT64;
        assert_source_assembles_alike(f, &a, 7000, 9000, value_type, WIDE, "64-bit sort");
        assert_source_assembles_alike(f, &a, 7000, 9000, value_type, PLAIN, "32-bit sort");
    }
    free_source(&a);
}

/* The weights' arrays copied through pinned buffers (the path of copies
 * of 256 MiB or more) give the same arrays. */
static void a_staged_copy_of_the_weights_equals_the_host(void **state)
{
    fixture *f = *state;
    source_arrays a;
    make_source(&a, 5, 20000, 7000, 9000, -1, 0.0, 1, 11);
    assert_source_assembles_alike(f, &a, 7000, 9000, SPART_FLOAT32, STAGED, "staged copy");
    assert_source_assembles_alike(f, &a, 7000, 9000, SPART_FLOAT64, STAGED_ODD,
                                  "staged copy, odd buffers");
    free_source(&a);
}

static void an_operator_without_entries_or_rows_equals_the_host(void **state)
{
    fixture *f = *state;
    source_arrays a;
    make_source(&a, 3, 0, 50, 40, -1, 0.0, 0, 7); /* elements without entries */
    assert_source_assembles_alike(f, &a, 50, 40, SPART_FLOAT64, PLAIN, "no entries");
    free_source(&a);
    make_source(&a, 0, 0, 0, 40, -1, 0.0, 0, 8); /* no elements, no rows */
    assert_source_assembles_alike(f, &a, 0, 40, SPART_FLOAT32, STAGED, "no rows");
    free_source(&a);
    make_source(&a, 1, 0, 9, 0, -1, 0.0, 0, 9); /* no columns */
    assert_source_assembles_alike(f, &a, 9, 0, SPART_FLOAT64, PLAIN, "no columns");
    free_source(&a);
}

/* Most rows empty, one of about three million entries (731 chunks: the
 * long-row table built on the device), a few short ones. */
static void one_enormous_row_among_empty_rows_equals_the_host(void **state)
{
    fixture *f = *state;
    source_arrays a;
    make_source(&a, 3, 1000000, 100000, 50000, 77777, 0.999, 1, 10);
    assert_source_assembles_alike(f, &a, 100000, 50000, SPART_FLOAT64, PLAIN, "one enormous row");
    const spart_device_assembly_options wide_staged = {1, (size_t)1 << 20};
    assert_source_assembles_alike(f, &a, 100000, 50000, SPART_FLOAT32, wide_staged,
                                  "one enormous row, 64-bit sort, staged copy");
    free_source(&a);
}

/* ---- setup and main ------------------------------------------------------------------------ */

/* Without a device, device assembly refuses with SPART_ERROR_NO_DEVICE and
 * a sentence, leaving *regridder NULL. 0 when it does. */
static int no_device_is_refused_clearly(void)
{
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    const spart_shape none = {0, {0}}, cells = {1, {3}};
    const int axes[] = {0};
    const int64_t offsets[] = {0, 1}, indices[] = {0};
    const double values[] = {1.0};
    spart_weights *weights = NULL;
    int failures =
        spart_weights_create_from_arrays(context, &none, &cells, &cells, 1, axes, 1, axes, offsets,
                                         indices, indices, values, &weights) != SPART_OK;
    spart_regridder *regridder = (spart_regridder *)&regridder;
    spart_status status = spart_regridder_create_device(context, weights, NULL, &regridder);
    failures += status != SPART_ERROR_NO_DEVICE || regridder != NULL ||
                strlen(spart_context_error(context)) == 0;
    printf("without a device, spart_regridder_create_device says %s: %s\n",
           spart_status_string(status), spart_context_error(context));
    spart_weights_free(weights);
    spart_context_free(context);
    return failures;
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return no_device_is_refused_clearly() == 0 ? code : 1;
    }
    const char *skip_pattern = getenv("SPART_CUDA_TEST_SKIP");
    if (skip_pattern != NULL && skip_pattern[0] != '\0') {
        cmocka_set_skip_filter(skip_pattern);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_role_and_value_type_equals_the_host),
        cmocka_unit_test(lookup_tables_equal_the_host),
        cmocka_unit_test(int64_columns_equal_the_host),
        cmocka_unit_test(zeros_are_dropped_as_on_the_host),
        cmocka_unit_test(repeated_assemblies_give_the_same_arrays),
        cmocka_unit_test(sixty_four_bit_sort_keys_equal_the_host),
        cmocka_unit_test(a_staged_copy_of_the_weights_equals_the_host),
        cmocka_unit_test(an_operator_without_entries_or_rows_equals_the_host),
        cmocka_unit_test(one_enormous_row_among_empty_rows_equals_the_host),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
