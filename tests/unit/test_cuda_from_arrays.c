/*
 * A regridder assembled on the device from weights already in device
 * memory (label `cuda`): spart_regridder_create_device_from_arrays builds
 * exactly the regridder that spart_regridder_create_device builds from the
 * weights spart_weights_create_from_arrays makes of the same arrays in
 * host memory: the same CSR arrays (row pointers, columns, values, read
 * back with spart_regridder_to_host and spart_regridder_csr, compared bit
 * for bit), plan, long-row table and shapes, for every role of the
 * orthogonal axes, float64 and float32 values, dropped zeros, resampled
 * axes around an orthogonal one, a row long enough to be cut into chunks,
 * and no entries at all; with the arrays written on the context's stream
 * just before the call. The caller's arrays are left as they were. An
 * index out of range is found on the device and refused with the host's
 * sentence for the first bad entry; host memory is refused, never read.
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

/* ---- weights as arrays ------------------------------------------------------------------ */

/* Weights as spart_weights_create_from_arrays takes them, in host memory. */
typedef struct host_arrays {
    spart_shape orthogonal;
    spart_shape input;
    spart_shape output;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t num_elements;
    int64_t num_entries;
    int64_t *offsets;
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
} host_arrays;

/* The same entries in device memory (cudaMalloc). */
typedef struct device_arrays {
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
} device_arrays;

/* Random entries for the shapes and axes already set in `a`: element e
 * gets counts[e] entries, or with counts NULL a random number up to
 * 2 * mean (element 1 none at all, when there are three or more), going to
 * random cells, with spread values of which about one in eight is +0.0 or
 * -0.0. */
static void fill_random(host_arrays *a, const int64_t *counts, int64_t mean, uint64_t seed)
{
    uint64_t state = seed;
    a->num_elements = spart_shape_size(&a->orthogonal);
    a->offsets = malloc((size_t)(a->num_elements + 1) * sizeof(int64_t));
    a->offsets[0] = 0;
    for (int64_t e = 0; e < a->num_elements; e++) {
        int64_t count = (int64_t)(next_uniform(&state) * (double)(2 * mean + 1));
        if (counts != NULL) {
            count = counts[e];
        } else if (e == 1 && a->num_elements >= 3) {
            count = 0;
        }
        a->offsets[e + 1] = a->offsets[e] + count;
    }
    int64_t n = a->offsets[a->num_elements];
    int64_t cells_in = resampled_cells(&a->input, a->num_axis_input, a->axis_input);
    int64_t cells_out = resampled_cells(&a->output, a->num_axis_output, a->axis_output);
    size_t room = (size_t)(n > 0 ? n : 1);
    a->num_entries = n;
    a->indices_input = malloc(room * sizeof(int64_t));
    a->indices_output = malloc(room * sizeof(int64_t));
    a->values = malloc(room * sizeof(double));
    for (int64_t k = 0; k < n; k++) {
        a->indices_input[k] = (int64_t)(next_uniform(&state) * (double)cells_in);
        a->indices_output[k] = (int64_t)(next_uniform(&state) * (double)cells_out);
        a->values[k] = spread_value(&state);
        if (next_uniform(&state) < 0.125) {
            a->values[k] = k % 2 == 0 ? 0.0 : -0.0;
        }
    }
}

/* Three elements along one orthogonal axis (the first), 40 input and 30
 * output cells, counts[e] entries in element e (NULL: about `mean`, and
 * none in element 1). */
static host_arrays three_elements(const int64_t *counts, int64_t mean, uint64_t seed)
{
    host_arrays a;
    memset(&a, 0, sizeof a);
    a.orthogonal = shape_of(1, (const int64_t[]){3});
    a.input = shape_of(2, (const int64_t[]){3, 40});
    a.output = shape_of(2, (const int64_t[]){3, 30});
    a.num_axis_input = 1;
    a.axis_input[0] = 1;
    a.num_axis_output = 1;
    a.axis_output[0] = 1;
    fill_random(&a, counts, mean, seed);
    return a;
}

static void free_host(host_arrays *a)
{
    free(a->offsets);
    free(a->indices_input);
    free(a->indices_output);
    free(a->values);
}

/* The entries copied to new device arrays. */
static device_arrays upload(const host_arrays *a)
{
    device_arrays d;
    size_t n = (size_t)(a->num_entries > 0 ? a->num_entries : 1);
    check_cuda(cudaMalloc((void **)&d.indices_input, n * sizeof(int64_t)), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&d.indices_output, n * sizeof(int64_t)), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&d.values, n * sizeof(double)), "cudaMalloc");
    size_t bytes = (size_t)a->num_entries * sizeof(int64_t);
    if (a->num_entries > 0) {
        check_cuda(cudaMemcpy(d.indices_input, a->indices_input, bytes, cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        check_cuda(cudaMemcpy(d.indices_output, a->indices_output, bytes, cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        check_cuda(cudaMemcpy(d.values, a->values, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    return d;
}

static void free_device(device_arrays *d)
{
    check_cuda(cudaFree(d->indices_input), "cudaFree");
    check_cuda(cudaFree(d->indices_output), "cudaFree");
    check_cuda(cudaFree(d->values), "cudaFree");
}

/* spart_regridder_create_device_from_arrays of a's shapes and offsets
 * with the given entry pointers. */
static spart_status from_arrays(fixture *f, const host_arrays *a, const int64_t *indices_input,
                                const int64_t *indices_output, const double *values,
                                const spart_regridder_options *options, spart_regridder **regridder)
{
    return spart_regridder_create_device_from_arrays(
        f->context, &a->orthogonal, &a->input, &a->output, a->num_axis_input, a->axis_input,
        a->num_axis_output, a->axis_output, a->offsets, indices_input, indices_output, values,
        options, regridder);
}

/* The path through the host: spart_weights_create_from_arrays, then
 * spart_regridder_create_device. */
static spart_regridder *made_through_the_host(fixture *f, const host_arrays *a,
                                              const spart_regridder_options *options)
{
    spart_weights *weights = NULL;
    if (spart_weights_create_from_arrays(f->context, &a->orthogonal, &a->input, &a->output,
                                         a->num_axis_input, a->axis_input, a->num_axis_output,
                                         a->axis_output, a->offsets, a->indices_input,
                                         a->indices_output, a->values, &weights) != SPART_OK) {
        fail_msg("spart_weights_create_from_arrays: %s", spart_context_error(f->context));
    }
    spart_regridder *regridder = NULL;
    if (spart_regridder_create_device(f->context, weights, options, &regridder) != SPART_OK) {
        fail_msg("spart_regridder_create_device: %s", spart_context_error(f->context));
    }
    spart_weights_free(weights);
    return regridder;
}

/* ---- comparing ---------------------------------------------------------------------------- */

static void assert_same_shape(spart_shape a, spart_shape b, const char *what)
{
    if (a.ndim != b.ndim || memcmp(a.dims, b.dims, (size_t)a.ndim * sizeof(int64_t)) != 0) {
        fail_msg("%s: the shapes differ", what);
    }
}

/* Two device regridders hold the same CSR arrays bit for bit (read back
 * through the public API), the same plan and long-row table, the same
 * shapes. */
static void assert_same_regridder(fixture *f, const spart_regridder *expected,
                                  const spart_regridder *got, const char *what)
{
    assert_int_equal(spart_regridder_cuda_device(got), 0);
    assert_same_shape(spart_regridder_shape_input(got), spart_regridder_shape_input(expected),
                      what);
    assert_same_shape(spart_regridder_shape_output(got), spart_regridder_shape_output(expected),
                      what);
    spart_regridder *a = NULL, *b = NULL;
    assert_int_equal(spart_regridder_to_host(f->context, expected, &a), SPART_OK);
    assert_int_equal(spart_regridder_to_host(f->context, got, &b), SPART_OK);
    int64_t rows = spart_regridder_num_rows(a), n = spart_regridder_num_entries(a);
    if (spart_regridder_num_rows(b) != rows || spart_regridder_num_entries(b) != n ||
        spart_regridder_num_columns(b) != spart_regridder_num_columns(a)) {
        fail_msg("%s: %lld rows and %lld entries, expected %lld and %lld", what,
                 (long long)spart_regridder_num_rows(b), (long long)spart_regridder_num_entries(b),
                 (long long)rows, (long long)n);
    }
    assert_int_equal(spart_regridder_value_type(b), spart_regridder_value_type(a));
    assert_int_equal(spart_regridder_group_size(b), spart_regridder_group_size(a));
    const int64_t *row_ptr_a = NULL, *row_ptr_b = NULL, *columns64_a = NULL, *columns64_b = NULL;
    const int32_t *columns32_a = NULL, *columns32_b = NULL;
    const void *values_a = NULL, *values_b = NULL;
    assert_int_equal(spart_regridder_csr(a, &row_ptr_a, &columns32_a, &columns64_a, &values_a),
                     SPART_OK);
    assert_int_equal(spart_regridder_csr(b, &row_ptr_b, &columns32_b, &columns64_b, &values_b),
                     SPART_OK);
    assert_true((columns32_a != NULL) == (columns32_b != NULL));
    size_t value_size = spart_regridder_value_type(a) == SPART_FLOAT32 ? 4 : 8;
    if (memcmp(row_ptr_a, row_ptr_b, (size_t)(rows + 1) * sizeof(int64_t)) != 0) {
        fail_msg("%s: the row pointers differ", what);
    }
    int same_columns = columns32_a != NULL
                           ? memcmp(columns32_a, columns32_b, (size_t)n * sizeof(int32_t)) == 0
                           : memcmp(columns64_a, columns64_b, (size_t)n * sizeof(int64_t)) == 0;
    if (n > 0 && !same_columns) {
        fail_msg("%s: the columns differ", what);
    }
    if (n > 0 && memcmp(values_a, values_b, (size_t)n * value_size) != 0) {
        fail_msg("%s: the values differ", what);
    }
    size_t count_a = 0, count_b = 0;
    int64_t *table_a = long_table_of(expected, &count_a);
    int64_t *table_b = long_table_of(got, &count_b);
    assert_int_equal(count_a, count_b);
    if (count_a > 0 && memcmp(table_a, table_b, count_a * sizeof(int64_t)) != 0) {
        fail_msg("%s: the long-row tables differ", what);
    }
    free(table_a);
    free(table_b);
    spart_regridder_free(a);
    spart_regridder_free(b);
}

/* The regridder from device arrays equals the one made through the host,
 * for `options`. */
static void assert_equals_the_host_made_path(fixture *f, const host_arrays *a,
                                             const spart_regridder_options *options,
                                             const char *what)
{
    device_arrays d = upload(a);
    spart_regridder *got = NULL;
    if (from_arrays(f, a, d.indices_input, d.indices_output, d.values, options, &got) != SPART_OK) {
        fail_msg("%s: spart_regridder_create_device_from_arrays: %s", what,
                 spart_context_error(f->context));
    }
    spart_regridder *expected = made_through_the_host(f, a, options);
    assert_same_regridder(f, expected, got, what);
    spart_regridder_free(expected);
    spart_regridder_free(got);
    free_device(&d);
}

/* ---- the tests ---------------------------------------------------------------------------- */

static void every_role_value_type_and_drop_zeros_equals_the_host_made_path(void **state)
{
    fixture *f = *state;
    host_arrays a = three_elements(NULL, 400, 1);
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
                options.shape_input = shape_of(ndims[role], inputs[role]);
                options.has_shape_output = 1;
                options.shape_output = shape_of(ndims[role], outputs[role]);
                options.value_type = float32 ? SPART_FLOAT32 : SPART_FLOAT64;
                options.drop_zeros = drop_zeros;
                char what[96];
                snprintf(what, sizeof what, "role %s, float%d, drop_zeros %d", names[role],
                         float32 ? 32 : 64, drop_zeros);
                assert_equals_the_host_made_path(f, &a, &options, what);
            }
        }
    }
    assert_equals_the_host_made_path(f, &a, NULL, "default options");
    free_host(&a);
}

/* Resampled axes on both sides of the orthogonal one: the assembly looks
 * cells up in tables instead of multiplying by a stride. */
static void resampled_axes_around_an_orthogonal_one_equal_the_host_made_path(void **state)
{
    fixture *f = *state;
    host_arrays a;
    memset(&a, 0, sizeof a);
    a.orthogonal = shape_of(1, (const int64_t[]){3});
    a.input = shape_of(3, (const int64_t[]){5, 3, 8});
    a.output = shape_of(3, (const int64_t[]){4, 3, 6});
    a.num_axis_input = 2;
    a.axis_input[0] = 0;
    a.axis_input[1] = -1; /* negative axes count from the end, as in NumPy */
    a.num_axis_output = 2;
    a.axis_output[0] = 0;
    a.axis_output[1] = 2;
    fill_random(&a, NULL, 300, 2);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.value_type = SPART_FLOAT32;
    options.drop_zeros = 1;
    assert_equals_the_host_made_path(f, &a, &options, "axes 0 and 2, float32, drop_zeros");
    assert_equals_the_host_made_path(f, &a, NULL, "axes 0 and 2");
    free_host(&a);
}

/* One output cell receives 2 * SPART_CHUNK_LENGTH entries: a long row, cut
 * into chunks in the plan. */
static void a_long_row_equals_the_host_made_path(void **state)
{
    fixture *f = *state;
    host_arrays a;
    memset(&a, 0, sizeof a);
    a.orthogonal = shape_of(0, NULL);
    a.input = shape_of(1, (const int64_t[]){5000});
    a.output = shape_of(1, (const int64_t[]){64});
    fill_random(&a, (const int64_t[]){4 * SPART_CHUNK_LENGTH}, 0, 3);
    for (int64_t k = 0; k < a.num_entries; k += 2) {
        a.indices_output[k] = 7;
    }
    assert_equals_the_host_made_path(f, &a, NULL, "a long row");
    free_host(&a);
}

static void no_entries_and_null_pointers_equal_the_host_made_path(void **state)
{
    fixture *f = *state;
    host_arrays a = three_elements((const int64_t[]){0, 0, 0}, 0, 4);
    assert_int_equal(a.num_entries, 0);
    spart_regridder *got = NULL;
    if (from_arrays(f, &a, NULL, NULL, NULL, NULL, &got) != SPART_OK) {
        fail_msg("no entries: %s", spart_context_error(f->context));
    }
    spart_regridder *expected = made_through_the_host(f, &a, NULL);
    assert_same_regridder(f, expected, got, "no entries");
    spart_regridder_free(expected);
    spart_regridder_free(got);
    free_host(&a);
}

static void the_callers_arrays_are_left_as_they_were(void **state)
{
    fixture *f = *state;
    host_arrays a = three_elements(NULL, 2000, 5);
    device_arrays d = upload(&a);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.drop_zeros = 1;
    options.value_type = SPART_FLOAT32;
    spart_regridder *got = NULL;
    assert_int_equal(
        from_arrays(f, &a, d.indices_input, d.indices_output, d.values, &options, &got), SPART_OK);
    spart_regridder_free(got);
    size_t n = (size_t)a.num_entries;
    int64_t *in = malloc(n * sizeof(int64_t)), *out = malloc(n * sizeof(int64_t));
    double *values = malloc(n * sizeof(double));
    check_cuda(cudaMemcpy(in, d.indices_input, n * sizeof(int64_t), cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    check_cuda(cudaMemcpy(out, d.indices_output, n * sizeof(int64_t), cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    check_cuda(cudaMemcpy(values, d.values, n * sizeof(double), cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    assert_memory_equal(in, a.indices_input, n * sizeof(int64_t));
    assert_memory_equal(out, a.indices_output, n * sizeof(int64_t));
    assert_memory_equal(values, a.values, n * sizeof(double));
    free(in);
    free(out);
    free(values);
    free_device(&d); /* still the caller's to free */
    free_host(&a);
}

/* The entries are copied in from pinned memory on the context's stream and
 * the call comes at once, without synchronising: it reads them after that
 * copy, as the stream orders it. */
static void entries_written_on_the_contexts_stream_are_read_after_that_work(void **state)
{
    fixture *f = *state;
    host_arrays a = three_elements(NULL, 20000, 6);
    size_t n = (size_t)a.num_entries;
    cudaStream_t stream = NULL;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    assert_int_equal(spart_context_set_cuda_stream(f->context, stream), SPART_OK);
    int64_t *pinned = NULL;
    check_cuda(cudaMallocHost((void **)&pinned, 3 * n * sizeof(int64_t)), "cudaMallocHost");
    memcpy(pinned, a.indices_input, n * sizeof(int64_t));
    memcpy(pinned + n, a.indices_output, n * sizeof(int64_t));
    memcpy(pinned + 2 * n, a.values, n * sizeof(double));
    device_arrays d;
    check_cuda(cudaMalloc((void **)&d.indices_input, n * sizeof(int64_t)), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&d.indices_output, n * sizeof(int64_t)), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&d.values, n * sizeof(double)), "cudaMalloc");
    check_cuda(cudaMemcpyAsync(d.indices_input, pinned, n * sizeof(int64_t), cudaMemcpyHostToDevice,
                               stream),
               "cudaMemcpyAsync");
    check_cuda(cudaMemcpyAsync(d.indices_output, pinned + n, n * sizeof(int64_t),
                               cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync");
    check_cuda(cudaMemcpyAsync(d.values, pinned + 2 * n, n * sizeof(double), cudaMemcpyHostToDevice,
                               stream),
               "cudaMemcpyAsync");
    spart_regridder *got = NULL;
    spart_status status =
        from_arrays(f, &a, d.indices_input, d.indices_output, d.values, NULL, &got);
    if (status != SPART_OK) {
        fail_msg("on a stream: %s", spart_context_error(f->context));
    }
    spart_regridder *expected = made_through_the_host(f, &a, NULL);
    assert_same_regridder(f, expected, got, "on the context's stream");
    spart_regridder_free(expected);
    spart_regridder_free(got);
    assert_int_equal(spart_context_set_cuda_stream(f->context, NULL), SPART_OK);
    check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    check_cuda(cudaFreeHost(pinned), "cudaFreeHost");
    free_device(&d);
    free_host(&a);
}

/* `a` holds an index out of range: the device path refuses it with the
 * status and the sentence of the host path, and makes no regridder. */
static void assert_refused_as_on_the_host(fixture *f, const host_arrays *a, const char *what)
{
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(
                         f->context, &a->orthogonal, &a->input, &a->output, a->num_axis_input,
                         a->axis_input, a->num_axis_output, a->axis_output, a->offsets,
                         a->indices_input, a->indices_output, a->values, &weights),
                     SPART_ERROR_INVALID_ARGUMENT);
    char sentence[512];
    snprintf(sentence, sizeof sentence, "%s", spart_context_error(f->context));
    assert_non_null(strstr(sentence, "weights element"));
    device_arrays d = upload(a);
    spart_regridder *got = (spart_regridder *)&got; /* must become NULL */
    assert_int_equal(from_arrays(f, a, d.indices_input, d.indices_output, d.values, NULL, &got),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    if (strcmp(spart_context_error(f->context), sentence) != 0) {
        fail_msg("%s: the device path says \"%s\", the host path \"%s\"", what,
                 spart_context_error(f->context), sentence);
    }
    free_device(&d);
}

static void out_of_range_indices_are_refused_naming_the_first_bad_entry(void **state)
{
    fixture *f = *state;
    /* Entries over many blocks; element 1 empty. */
    host_arrays a = three_elements((const int64_t[]){180000, 0, 200000}, 0, 7);
    int64_t last_of_2 = a.offsets[3] - 1, in_2 = a.offsets[2] + 123456;
    /* One entry past the input cells, in the last element. */
    a.indices_input[in_2] = 40;
    assert_refused_as_on_the_host(f, &a, "input index 40 of 40");
    /* An earlier negative output index wins over it. */
    a.indices_output[150000] = -1;
    assert_refused_as_on_the_host(f, &a, "output index -1 before it");
    a.indices_output[150000] = 0;
    a.indices_input[in_2] = 0;
    /* The very last entry, and the very first. */
    a.indices_output[last_of_2] = 30;
    assert_refused_as_on_the_host(f, &a, "the last entry");
    a.indices_input[0] = INT64_MIN;
    assert_refused_as_on_the_host(f, &a, "the first entry");
    a.indices_input[0] = INT64_MAX;
    assert_refused_as_on_the_host(f, &a, "the first entry, INT64_MAX");
    free_host(&a);
}

static void host_memory_is_refused_and_never_read(void **state)
{
    fixture *f = *state;
    host_arrays a = three_elements((const int64_t[]){100, 50, 100}, 0, 8);
    spart_regridder *got = (spart_regridder *)&got;
    assert_int_equal(from_arrays(f, &a, a.indices_input, a.indices_output, a.values, NULL, &got),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    assert_non_null(strstr(spart_context_error(f->context), "indices_input is host memory"));
    /* Device indices, but values in pinned host memory. */
    device_arrays d = upload(&a);
    double *pinned = NULL;
    check_cuda(cudaMallocHost((void **)&pinned, (size_t)a.num_entries * sizeof(double)),
               "cudaMallocHost");
    got = (spart_regridder *)&got;
    assert_int_equal(from_arrays(f, &a, d.indices_input, d.indices_output, pinned, NULL, &got),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    assert_non_null(strstr(spart_context_error(f->context), "values is host memory"));
    check_cuda(cudaFreeHost(pinned), "cudaFreeHost");
    free_device(&d);
    free_host(&a);
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_role_value_type_and_drop_zeros_equals_the_host_made_path),
        cmocka_unit_test(resampled_axes_around_an_orthogonal_one_equal_the_host_made_path),
        cmocka_unit_test(a_long_row_equals_the_host_made_path),
        cmocka_unit_test(no_entries_and_null_pointers_equal_the_host_made_path),
        cmocka_unit_test(the_callers_arrays_are_left_as_they_were),
        cmocka_unit_test(entries_written_on_the_contexts_stream_are_read_after_that_work),
        cmocka_unit_test(out_of_range_indices_are_refused_naming_the_first_bad_entry),
        cmocka_unit_test(host_memory_is_refused_and_never_read),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
