/*
 * Saving a regridder to FITS and loading it back (spart_regridder_save and
 * spart_regridder_load): the CSR arrays, shapes, batch axes and plan come
 * back bit for bit and the products are the same; files are replaced only
 * when asked; damaged or foreign files are refused with a sentence.
 *
 * Run as `test_regridder_fits --write-example PATH` it saves the example
 * operator to PATH and prints the library version, an x and y = A x, one
 * line each: tests/parity/check_fits_astropy.py reads that file with
 * astropy and checks that NumPy alone reproduces y.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, opendir, truncate */

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <fitsio.h>

#include "operator/regridder_internal.h"
#include "spart.h"
#include "test_fits_util.h"
#include "test_util.h"

/* ---- numbers ------------------------------------------------------------------------------ */

static double *random_values(int64_t n, uint64_t seed)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    assert_non_null(values);
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        values[k] = next_uniform(&state) * 2.0 - 1.0;
    }
    return values;
}

/* ---- operators ------------------------------------------------------------------------------ */

/* Weights of `elements` elements (orthogonal shape given), each with
 * `per_element` entries at random cells of cells_in x cells_out and values
 * in [0.5, 1.5). */
static spart_weights *random_weights(spart_context *context, spart_shape orthogonal,
                                     spart_shape input, const int *axes_input, spart_shape output,
                                     const int *axes_output, int64_t cells_in, int64_t cells_out,
                                     int64_t per_element, uint64_t seed)
{
    int64_t elements = spart_shape_size(&orthogonal);
    int64_t total = elements * per_element;
    int64_t *offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    int64_t *in = malloc((size_t)(total + 1) * sizeof(int64_t));
    int64_t *out = malloc((size_t)(total + 1) * sizeof(int64_t));
    double *values = malloc((size_t)(total + 1) * sizeof(double));
    assert_true(offsets && in && out && values);
    uint64_t state = seed;
    for (int64_t e = 0; e <= elements; e++) {
        offsets[e] = e * per_element;
    }
    for (int64_t k = 0; k < total; k++) {
        in[k] = (int64_t)(next_uniform(&state) * (double)cells_in);
        out[k] = (int64_t)(next_uniform(&state) * (double)cells_out);
        values[k] = 0.5 + next_uniform(&state);
    }
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axes_input, 1, axes_output, offsets, in, out,
                                                      values, &weights),
                     SPART_OK);
    free(offsets);
    free(in);
    free(out);
    free(values);
    return weights;
}

static spart_regridder *make(spart_context *context, const spart_weights *weights,
                             const spart_shape *shape_input, const spart_shape *shape_output,
                             spart_value_type value_type)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    if (shape_input != NULL) {
        options.has_shape_input = 1;
        options.shape_input = *shape_input;
    }
    if (shape_output != NULL) {
        options.has_shape_output = 1;
        options.shape_output = *shape_output;
    }
    options.value_type = value_type;
    spart_regridder *regridder = NULL;
    spart_status status = spart_regridder_create(context, weights, &options, &regridder);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_create: %s", spart_context_error(context));
    }
    return regridder;
}

/* The example operator: x of shape 2x4x7 to y of shape 2x4x5, resampled on
 * the last axis, orthogonal axis 0 (two elements of weights) and a batch
 * axis of 4 in the middle (the weights do not vary along it). Four entries
 * per element over five output cells leave empty rows. 10 rows, 14 columns,
 * int32 columns. */
static spart_regridder *batch_operator(spart_context *context, spart_value_type value_type)
{
    const int64_t orthogonal[] = {2, 1};
    const int64_t weights_input[] = {2, 1, 7}, weights_output[] = {2, 1, 5};
    const int64_t input[] = {2, 4, 7}, output[] = {2, 4, 5};
    const int axes[] = {2};
    spart_weights *weights =
        random_weights(context, shape_of(2, orthogonal), shape_of(3, weights_input), axes,
                       shape_of(3, weights_output), axes, 7, 5, 4, 11);
    spart_shape shape_input = shape_of(3, input), shape_output = shape_of(3, output);
    spart_regridder *regridder = make(context, weights, &shape_input, &shape_output, value_type);
    spart_weights_free(weights);
    return regridder;
}

/* Long rows: 3 rows of 100 entries each on average, so the plan takes 32
 * lanes per row. */
static spart_regridder *dense_operator(spart_context *context)
{
    const int64_t input[] = {40}, output[] = {3};
    const int axes[] = {0};
    spart_weights *weights = random_weights(context, shape_of(0, NULL), shape_of(1, input), axes,
                                            shape_of(1, output), axes, 40, 3, 300, 5);
    spart_regridder *regridder = make(context, weights, NULL, NULL, SPART_FLOAT64);
    spart_weights_free(weights);
    return regridder;
}

/* One element, 5 input cells to 4 output cells, with values that must come
 * back bit for bit: a NaN with a payload, a negative zero, infinities,
 * subnormal numbers (for float32 too). */
static spart_regridder *special_values_operator(spart_context *context, spart_value_type value_type)
{
    const int64_t input[] = {5}, output[] = {4};
    spart_shape orthogonal = shape_of(0, NULL), in = shape_of(1, input), out = shape_of(1, output);
    const int64_t offsets[] = {0, 6};
    const int64_t indices_input[] = {0, 1, 3, 4, 2, 0};
    const int64_t indices_output[] = {0, 1, 2, 3, 3, 0};
    const double values[] = {bits_to_double(0x7ff80000deadbeefULL),
                             -0.0,
                             INFINITY,
                             -INFINITY,
                             1e-40,
                             4.9406564584124654e-324};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &in, &out, 0, NULL, 0,
                                                      NULL, offsets, indices_input, indices_output,
                                                      values, &weights),
                     SPART_OK);
    spart_regridder *regridder = make(context, weights, NULL, NULL, value_type);
    spart_weights_free(weights);
    return regridder;
}

/* 2^31 + 5 input cells along one axis and three entries: column indices
 * are int64. Cheap: the matrix has 2 rows. */
static spart_regridder *huge_column_operator(spart_context *context)
{
    const int64_t big = ((int64_t)1 << 31) + 5;
    const int64_t orthogonal[] = {1}, input[] = {1, big}, output[] = {1, 2};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 3};
    const int64_t indices_in[] = {0, big - 1, big - 2}, indices_out[] = {0, 1, 1};
    const double values[] = {1.0, 2.0, 3.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *regridder = make(context, weights, NULL, NULL, SPART_FLOAT64);
    spart_weights_free(weights);
    return regridder;
}

/* Three elements without a single entry: 3x2 output, 3x4 input. */
static spart_regridder *empty_operator(spart_context *context)
{
    const int64_t orthogonal[] = {3}, input[] = {3, 4}, output[] = {3, 2};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 0, 0, 0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, NULL, NULL, NULL, &weights),
                     SPART_OK);
    spart_regridder *regridder = make(context, weights, NULL, NULL, SPART_FLOAT64);
    spart_weights_free(weights);
    return regridder;
}

/* ---- fixtures: a context and a fresh folder per test ------------------------------------------
 */

static int set_up(void **state)
{
    return fits_set_up(state, "test_regridder_fits", "operator.fits");
}

/* ---- comparing regridders
 * ------------------------------------------------------------------------- */

/* Every field of an axis map, over the shape's axes. */
static void assert_axis_maps_equal(const spart_axis_map *a, const spart_axis_map *b)
{
    assert_shapes_equal(a->shape, b->shape);
    for (int k = 0; k < a->shape.ndim; k++) {
        assert_int_equal(a->is_batch[k], b->is_batch[k]);
        assert_int_equal(a->matrix_stride[k], b->matrix_stride[k]);
        assert_int_equal(a->batch_stride[k], b->batch_stride[k]);
    }
    assert_int_equal(a->num_batch, b->num_batch);
}

/* Sizes, types, plan, axis maps, and every CSR array bit for bit. */
static void assert_regridders_identical(const spart_regridder *a, const spart_regridder *b)
{
    int64_t rows = spart_regridder_num_rows(a);
    int64_t entries = spart_regridder_num_entries(a);
    assert_int_equal(rows, spart_regridder_num_rows(b));
    assert_int_equal(spart_regridder_num_columns(a), spart_regridder_num_columns(b));
    assert_int_equal(entries, spart_regridder_num_entries(b));
    assert_int_equal(spart_regridder_value_type(a), spart_regridder_value_type(b));
    assert_int_equal(spart_regridder_group_size(a), spart_regridder_group_size(b));
    assert_int_equal(a->plan.chunk_length, b->plan.chunk_length);
    assert_shapes_equal(spart_regridder_shape_input(a), spart_regridder_shape_input(b));
    assert_shapes_equal(spart_regridder_shape_output(a), spart_regridder_shape_output(b));
    assert_axis_maps_equal(&a->input, &b->input);
    assert_axis_maps_equal(&a->output, &b->output);
    const int64_t *a_rows, *b_rows, *a_columns64, *b_columns64;
    const int32_t *a_columns32, *b_columns32;
    const void *a_values, *b_values;
    assert_int_equal(spart_regridder_csr(a, &a_rows, &a_columns32, &a_columns64, &a_values),
                     SPART_OK);
    assert_int_equal(spart_regridder_csr(b, &b_rows, &b_columns32, &b_columns64, &b_values),
                     SPART_OK);
    assert_int_equal(a_columns32 == NULL, b_columns32 == NULL);
    assert_int_equal(a_columns64 == NULL, b_columns64 == NULL);
    assert_memory_equal(a_rows, b_rows, (size_t)(rows + 1) * sizeof(int64_t));
    if (entries > 0) {
        size_t value_size = spart_regridder_value_type(a) == SPART_FLOAT32 ? 4 : 8;
        if (a_columns32 != NULL) {
            assert_memory_equal(a_columns32, b_columns32, (size_t)entries * sizeof(int32_t));
        } else {
            assert_memory_equal(a_columns64, b_columns64, (size_t)entries * sizeof(int64_t));
        }
        assert_memory_equal(a_values, b_values, (size_t)entries * value_size);
    }
    assert_null(b->transposed);
    assert_null(b->owner);
}

static spart_regridder *save_and_load(fits_fixture *f, const spart_regridder *regridder)
{
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    spart_regridder *loaded = NULL;
    spart_status status = spart_regridder_load(f->context, f->path, &loaded);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_load: %s", spart_context_error(f->context));
    }
    assert_string_equal(spart_context_error(f->context), "");
    assert_regridders_identical(regridder, loaded);
    return loaded;
}

/* y = A x for x of shape `shape_x`, allocated. */
static double *apply(spart_context *context, const spart_regridder *regridder, double *x,
                     spart_shape shape_x, int64_t *size)
{
    spart_shape shape_y;
    assert_int_equal(spart_regridder_apply_shape(context, regridder, &shape_x, &shape_y), SPART_OK);
    *size = spart_shape_size(&shape_y);
    double *y = malloc((size_t)(*size > 0 ? *size : 1) * sizeof(double));
    assert_non_null(y);
    spart_array xa = {x, shape_x};
    assert_int_equal(spart_regridder_apply(context, regridder, &xa, y, *size), SPART_OK);
    return y;
}

/* The products of `a` and `b` for a batch of 3 leading vectors (of the
 * input shape) are the same bit for bit. */
static void assert_products_identical(spart_context *context, const spart_regridder *a,
                                      const spart_regridder *b)
{
    spart_shape input = spart_regridder_shape_input(a);
    spart_shape shape_x;
    memset(&shape_x, 0, sizeof shape_x);
    shape_x.ndim = input.ndim + 1;
    shape_x.dims[0] = 3;
    for (int k = 0; k < input.ndim; k++) {
        shape_x.dims[k + 1] = input.dims[k];
    }
    double *x = random_values(spart_shape_size(&shape_x), 77);
    int64_t size_a = 0, size_b = 0;
    double *y_a = apply(context, a, x, shape_x, &size_a);
    double *y_b = apply(context, b, x, shape_x, &size_b);
    assert_int_equal(size_a, size_b);
    assert_memory_equal(y_a, y_b, (size_t)size_a * sizeof(double));
    free(x);
    free(y_a);
    free(y_b);
}

static int has_empty_row(const spart_regridder *regridder)
{
    for (int64_t r = 0; r < regridder->csr.num_rows; r++) {
        if (regridder->csr.row_ptr[r] == regridder->csr.row_ptr[r + 1]) {
            return 1;
        }
    }
    return 0;
}

/* ---- round trips
 * ------------------------------------------------------------------------------------ */

static void round_trip_of_float64_values_is_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_non_null(regridder->csr.columns32);
    assert_true(has_empty_row(regridder));
    spart_regridder *loaded = save_and_load(f, regridder);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void round_trip_of_float32_values_is_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT32);
    assert_int_equal(spart_regridder_value_type(regridder), SPART_FLOAT32);
    spart_regridder *loaded = save_and_load(f, regridder);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void special_values_survive_in_both_value_types(void **state)
{
    fits_fixture *f = *state;
    const spart_value_type types[] = {SPART_FLOAT64, SPART_FLOAT32};
    for (int t = 0; t < 2; t++) {
        spart_regridder *regridder = special_values_operator(f->context, types[t]);
        spart_regridder *loaded = save_and_load(f, regridder);
        spart_regridder_free(loaded);
        spart_regridder_free(regridder);
        remove(f->path);
    }
}

static void batch_products_of_the_loaded_operator_are_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    const spart_value_type types[] = {SPART_FLOAT64, SPART_FLOAT32};
    for (int t = 0; t < 2; t++) {
        spart_regridder *regridder = batch_operator(f->context, types[t]);
        assert_int_equal(regridder->input.num_batch, 4);
        spart_regridder *loaded = save_and_load(f, regridder);
        assert_products_identical(f->context, regridder, loaded);
        spart_regridder_free(loaded);
        spart_regridder_free(regridder);
        remove(f->path);
    }
}

static void the_plan_of_long_rows_comes_back(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = dense_operator(f->context);
    assert_int_equal(spart_regridder_group_size(regridder), 32);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_int_equal(spart_regridder_group_size(loaded), 32);
    assert_products_identical(f->context, regridder, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void a_huge_column_count_keeps_int64_columns(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = huge_column_operator(f->context);
    assert_non_null(regridder->csr.columns64);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_non_null(loaded->csr.columns64);
    assert_int_equal(loaded->csr.columns64[1], ((int64_t)1 << 31) + 4);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void an_operator_without_entries_comes_back(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = empty_operator(f->context);
    assert_int_equal(spart_regridder_num_entries(regridder), 0);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_products_identical(f->context, regridder, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* A forward model's channels applied to one shared input: the loaded
 * operator works its rows in the same stripes (derived from its roles)
 * and gives the same bits. */
static void the_loaded_operator_keeps_its_row_stripes(void **state)
{
    fits_fixture *f = *state;
    const int64_t orthogonal[] = {4};
    const int64_t weights_input[] = {4, 30}, weights_output[] = {4, 20};
    const int64_t input[] = {1, 30}, output[] = {4, 20};
    const int axes[] = {1};
    spart_weights *weights =
        random_weights(f->context, shape_of(1, orthogonal), shape_of(2, weights_input), axes,
                       shape_of(2, weights_output), axes, 30, 20, 50, 13);
    spart_shape shape_input = shape_of(2, input), shape_output = shape_of(2, output);
    spart_regridder *regridder =
        make(f->context, weights, &shape_input, &shape_output, SPART_FLOAT64);
    spart_weights_free(weights);
    assert_int_equal(regridder->plan.row_stripes, 4);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_int_equal(loaded->plan.row_stripes, 4);
    assert_products_identical(f->context, regridder, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void the_loaded_operator_builds_the_same_transpose(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *loaded = save_and_load(f, regridder);
    spart_regridder *transposed = NULL, *loaded_transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    assert_int_equal(spart_regridder_transpose(f->context, loaded, &loaded_transposed), SPART_OK);
    assert_products_identical(f->context, transposed, loaded_transposed);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* A transpose is a regridder too: saved, it loads as one of its own. */
static void a_transpose_saves_as_a_regridder(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    spart_regridder *loaded = save_and_load(f, transposed);
    assert_products_identical(f->context, transposed, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* ---- replacing files, and temporaries
 * ---------------------------------------------------------------- */

static void save_refuses_to_replace_a_file(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *first = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *second = dense_operator(f->context);
    assert_int_equal(spart_regridder_save(f->context, first, f->path, 0), SPART_OK);
    assert_int_equal(spart_regridder_save(f->context, second, f->path, 0), SPART_ERROR_IO);
    assert_non_null(strstr(spart_context_error(f->context), f->path));
    assert_non_null(strstr(spart_context_error(f->context), "already exists"));
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_load(f->context, f->path, &loaded), SPART_OK);
    assert_regridders_identical(first, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(first);
    spart_regridder_free(second);
}

static void save_with_overwrite_replaces_a_file(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *first = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *second = dense_operator(f->context);
    assert_int_equal(spart_regridder_save(f->context, first, f->path, 0), SPART_OK);
    assert_int_equal(spart_regridder_save(f->context, second, f->path, 1), SPART_OK);
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_load(f->context, f->path, &loaded), SPART_OK);
    assert_regridders_identical(second, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(first);
    spart_regridder_free(second);
}

static void save_leaves_only_the_file(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 1), SPART_OK);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "operator.fits");
    spart_regridder_free(regridder);
}

static void save_onto_a_folder_fails_and_leaves_no_temporary(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_int_equal(mkdir(f->path, 0700), 0);
    char inner[192];
    snprintf(inner, sizeof inner, "%s/keep", f->path);
    FILE *keep = fopen(inner, "w");
    assert_non_null(keep);
    fclose(keep);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 1), SPART_ERROR_IO);
    assert_non_null(strstr(spart_context_error(f->context), f->path));
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "operator.fits");
    remove(inner);
    spart_regridder_free(regridder);
}

/* An allocator whose every call fails once armed. */
typedef struct failing_allocator {
    int armed;
} failing_allocator;

static void *failing_malloc(void *user, size_t size)
{
    failing_allocator *state = user;
    return state->armed ? NULL : malloc(size);
}

static void *failing_realloc(void *user, void *pointer, size_t size)
{
    failing_allocator *state = user;
    return state->armed ? NULL : realloc(pointer, size);
}

static void save_and_load_without_memory_leave_nothing(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    failing_allocator counter = {0};
    const spart_allocator allocator = {failing_malloc, failing_realloc, plain_free, &counter};
    spart_context *context = NULL;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context), SPART_OK);
    counter.armed = 1;
    char other[192];
    snprintf(other, sizeof other, "%s/other.fits", f->folder);
    assert_int_equal(spart_regridder_save(context, regridder, other, 0), SPART_ERROR_OUT_OF_MEMORY);
    spart_regridder *loaded = (spart_regridder *)f;
    assert_int_equal(spart_regridder_load(context, f->path, &loaded), SPART_ERROR_OUT_OF_MEMORY);
    assert_null(loaded);
    assert_non_null(strstr(spart_context_error(context), f->path));
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "operator.fits");
    spart_context_free(context);
    spart_regridder_free(regridder);
}

/* ---- arguments
 * ------------------------------------------------------------------------------------------ */

static void null_arguments_are_refused(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_save(NULL, regridder, f->path, 0), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_save(f->context, NULL, f->path, 0), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "regridder"));
    assert_int_equal(spart_regridder_save(f->context, regridder, NULL, 0),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "path"));
    assert_int_equal(spart_regridder_save(f->context, regridder, "", 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_regridder_load(NULL, f->path, &loaded), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_load(f->context, NULL, &loaded), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_load(f->context, f->path, NULL), SPART_ERROR_NULL_POINTER);
    assert_null(loaded);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "");
    spart_regridder_free(regridder);
}

/* ---- loading what is not a good regridder file
 * ----------------------------------------------------------- */

/* Load f->path and expect `status` with `words` in the sentence, which
 * always names the file. */
static void assert_load_fails(fits_fixture *f, spart_status status, const char *words)
{
    spart_regridder *loaded = (spart_regridder *)f; /* anything but NULL */
    spart_status got = spart_regridder_load(f->context, f->path, &loaded);
    const char *sentence = spart_context_error(f->context);
    if (got != status || strstr(sentence, words) == NULL || strstr(sentence, f->path) == NULL) {
        print_error("status %s, sentence: %s\n", spart_status_string(got), sentence);
    }
    assert_int_equal(got, status);
    assert_null(loaded);
    assert_non_null(strstr(sentence, f->path));
    assert_non_null(strstr(sentence, words));
}

static void set_logical_key(const char *path, const char *key, int value)
{
    fitsfile *file = open_for_update(path, NULL);
    int status = 0;
    fits_update_key(file, TLOGICAL, key, &value, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
}

/* Save the example operator (float64 values unless said) to f->path. */
static void save_example(fits_fixture *f, spart_value_type value_type)
{
    spart_regridder *regridder = batch_operator(f->context, value_type);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    spart_regridder_free(regridder);
}

static void loading_a_missing_file_is_an_io_error(void **state)
{
    fits_fixture *f = *state;
    assert_load_fails(f, SPART_ERROR_IO, "CFITSIO");
}

static void loading_a_folder_is_an_io_error(void **state)
{
    fits_fixture *f = *state;
    assert_int_equal(mkdir(f->path, 0700), 0);
    assert_load_fails(f, SPART_ERROR_IO, "directory");
}

static void loading_a_text_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    FILE *text = fopen(f->path, "w");
    assert_non_null(text);
    fputs("row,column,value\n0,0,1.0\n", text);
    fclose(text);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "not a FITS file");
}

static void loading_a_weights_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    const int64_t input[] = {5}, output[] = {4};
    spart_shape orthogonal = shape_of(0, NULL), in = shape_of(1, input), out = shape_of(1, output);
    const int64_t offsets[] = {0, 1}, indices_input[] = {0}, indices_output[] = {3};
    const double values[] = {1.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &in, &out, 0, NULL,
                                                      0, NULL, offsets, indices_input,
                                                      indices_output, values, &weights),
                     SPART_OK);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTKND = 'weights', expected 'regridder'");
    spart_weights_free(weights);
}

static void loading_a_regridder_file_as_weights_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_load(f->context, f->path, &weights), SPART_ERROR_FILE_FORMAT);
    assert_non_null(strstr(spart_context_error(f->context), "'regridder'"));
    assert_null(weights);
}

static void loading_another_kind_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_string_key(f->path, "SPARTKND", "operator");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTKND = 'operator'");
}

static void loading_a_newer_format_version_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "SPARTVER", 2);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTVER = 2");
}

static void loading_a_truncated_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    struct stat info;
    assert_int_equal(stat(f->path, &info), 0);
    /* Cut the file at every 997 bytes: through headers, tables and padding
     * (the last table's rows end early in its final 2880-byte block). */
    for (long length = (long)info.st_size - 2880 + 40; length >= 0; length -= 997) {
        assert_int_equal(truncate(f->path, length), 0);
        assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "regridder file");
    }
}

static void loading_row_pointers_that_decrease_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 5, 0);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "ROW_PTR[5] = 0 is less than ROW_PTR[4]");
}

static void loading_row_pointers_not_from_zero_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 0, 1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "ROW_PTR[0] = 1");
}

static void loading_row_pointers_short_of_the_entries_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = dense_operator(f->context); /* 300 entries, 3 long rows */
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    spart_regridder_free(regridder);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 3, 299);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT,
                      "ROW_PTR[3] = 299, but it must be NENTRIES = 300");
}

static void loading_row_pointers_past_the_entries_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 10, 9);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "ROW_PTR[10] = 9 is past NENTRIES = 8");
}

static void loading_a_column_out_of_range_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64); /* 14 columns */
    set_cell(f->path, "ENTRIES", "COLUMN", 3, 14);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "row 3 of ENTRIES");
    assert_non_null(
        strstr(spart_context_error(f->context), "COLUMN = 14, outside [0, NCOLS = 14)"));
}

static void loading_a_negative_column_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ENTRIES", "COLUMN", 0, -1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "COLUMN = -1");
}

static void loading_a_group_size_the_matrix_does_not_call_for_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64); /* 8 entries in 10 rows: 1 lane */
    set_integer_key(f->path, "GROUPSZ", 4);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "GROUPSZ = 4 and CHUNKLEN = 4096, but");
}

static void loading_a_group_size_that_is_no_power_of_two_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "GROUPSZ", 3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "GROUPSZ = 3 is not a power of two");
}

static void loading_another_chunk_length_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "CHUNKLEN", 1024);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "CHUNKLEN = 1024");
}

static void loading_a_value_type_unlike_the_column_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_string_key(f->path, "VALTYPE", "float32");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "column VALUE of table ENTRIES");
}

static void loading_an_unknown_value_type_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_string_key(f->path, "VALTYPE", "float16");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "VALTYPE = 'float16'");
}

static void loading_int64_columns_for_a_small_matrix_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, "ENTRIES");
    int status = 0;
    fits_delete_col(file, 1, &status); /* COLUMN becomes K, and all zeros */
    fits_insert_col(file, 1, "COLUMN", "K", &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "32-bit integer (J)");
}

static void loading_batch_flags_that_change_the_matrix_size_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_logical_key(f->path, "INBAT1", 0); /* the batch axis of 4 would become columns */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "NCOLS = 14, but");
}

static void loading_batch_axes_that_differ_between_sides_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    /* Both sides keep their matrix sizes, but the batch lengths differ. */
    set_integer_key(f->path, "INDIM1", 3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "batch axes of the input");
}

static void loading_a_batch_flag_on_an_axis_of_one_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "INDIM1", 1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INBAT1 = T, but axis 1 of length 1");
}

/* A zero extent keeps the shape's size within int64 while the other
 * extents' product overflows it. */
static void loading_a_shape_whose_matrix_axes_overflow_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "INNDIM", 4);
    set_integer_key(f->path, "INDIM0", 0);
    set_integer_key(f->path, "INDIM2", (long long)1 << 40);
    set_integer_key(f->path, "INDIM3", (long long)1 << 40);
    set_logical_key(f->path, "INBAT3", 0);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "more matrix or batch cells than int64");
}

static void loading_a_missing_batch_flag_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, NULL);
    int status = 0;
    fits_delete_key(file, "OUTBAT2", &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "keyword OUTBAT2 is missing");
}

static void loading_a_wrong_entry_count_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "NENTRIES", 9);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT,
                      "table ENTRIES has 8 rows, but the primary header promises 9");
}

static void loading_a_file_without_a_table_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, "ROW_PTR");
    int status = 0;
    fits_delete_hdu(file, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "no extension named ROW_PTR");
}

/* ---- the example file for tests/parity/check_fits_astropy.py
 * ---------------------------------------------- */

static void print_values(const double *values, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        printf("%s%.17g", k == 0 ? "" : " ", values[k]);
    }
    printf("\n");
}

/* Save the example operator (float64) to `path`; print the version, x (one
 * vector of the input shape 2x4x7, C order) and y = A x (2x4x5). */
static int write_example(const char *path)
{
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    spart_regridder *regridder = batch_operator(context, SPART_FLOAT64);
    double *x = random_values(2 * 4 * 7, 3);
    const int64_t dims[] = {2, 4, 7};
    int64_t size_y = 0;
    double *y = apply(context, regridder, x, shape_of(3, dims), &size_y);
    spart_status status = spart_regridder_save(context, regridder, path, 1);
    if (status != SPART_OK) {
        fprintf(stderr, "%s\n", spart_context_error(context));
    } else {
        printf("%s\n", spart_version());
        print_values(x, 2 * 4 * 7);
        print_values(y, size_y);
    }
    free(x);
    free(y);
    spart_regridder_free(regridder);
    spart_context_free(context);
    return status == SPART_OK ? 0 : 1;
}

/* ---- the roles of the axes (what the conservative transpose needs)
 * -------------------------------------------------------------------------- */

static void the_roles_of_the_axes_come_back(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_true(regridder->has_roles);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_true(loaded->has_roles);
    const spart_regridder_roles *a = &regridder->roles, *b = &loaded->roles;
    assert_shapes_equal(a->shape_input, b->shape_input);
    assert_shapes_equal(a->shape_output, b->shape_output);
    assert_int_equal(a->num_resampled_input, b->num_resampled_input);
    assert_int_equal(a->num_resampled_output, b->num_resampled_output);
    assert_int_equal(a->num_orthogonal, b->num_orthogonal);
    assert_memory_equal(a->axes_input, b->axes_input, sizeof a->axes_input);
    assert_memory_equal(a->axes_output, b->axes_output, sizeof a->axes_output);
    assert_memory_equal(a->orthogonal_input, b->orthogonal_input, sizeof a->orthogonal_input);
    assert_memory_equal(a->orthogonal_output, b->orthogonal_output, sizeof a->orthogonal_output);
    assert_memory_equal(a->weights_extent, b->weights_extent, sizeof a->weights_extent);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void a_transpose_saves_without_roles(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    spart_regridder *loaded = save_and_load(f, transposed);
    assert_false(loaded->has_roles);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* A file written before the role keywords existed loads as it did. */
static void a_file_without_role_keywords_loads_without_roles(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, NULL);
    int status = 0;
    const char *keys[] = {"ROLES", "INNAX", "INAX0", "OUTNAX", "OUTAX0", "WEXT0", "WEXT1"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        fits_delete_key(file, (char *)keys[k], &status);
    }
    assert_int_equal(status, 0);
    close_updated(file);
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_load(f->context, f->path, &loaded), SPART_OK);
    assert_false(loaded->has_roles);
    spart_regridder_free(loaded);
}

static void loading_a_weights_extent_that_fits_no_role_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "WEXT0", 3); /* the input and output have 2 there */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "WEXT0 = 3 with input extent 2");
}

static void loading_a_weights_extent_unlike_the_batch_flags_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "WEXT1", 4); /* axis 1 is a batch axis: 1 element */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "disagrees with the batch flags");
}

static void loading_a_resampled_batch_axis_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "INAX0", 1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INAX0 = 1 names a batch axis");
}

static void loading_resampled_axes_out_of_range_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "OUTAX0", 3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "OUTAX0 = 3: resampled axes must be ascending");
}

static void loading_a_missing_role_keyword_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, NULL);
    int status = 0;
    fits_delete_key(file, "WEXT1", &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "WEXT1");
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, set_up, fits_tear_down)

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-example") == 0) {
        return write_example(argv[2]);
    }
    const struct CMUnitTest tests[] = {
        TEST(round_trip_of_float64_values_is_bit_for_bit),
        TEST(round_trip_of_float32_values_is_bit_for_bit),
        TEST(special_values_survive_in_both_value_types),
        TEST(batch_products_of_the_loaded_operator_are_bit_for_bit),
        TEST(the_plan_of_long_rows_comes_back),
        TEST(a_huge_column_count_keeps_int64_columns),
        TEST(an_operator_without_entries_comes_back),
        TEST(the_loaded_operator_keeps_its_row_stripes),
        TEST(the_loaded_operator_builds_the_same_transpose),
        TEST(a_transpose_saves_as_a_regridder),
        TEST(save_refuses_to_replace_a_file),
        TEST(save_with_overwrite_replaces_a_file),
        TEST(save_leaves_only_the_file),
        TEST(save_onto_a_folder_fails_and_leaves_no_temporary),
        TEST(save_and_load_without_memory_leave_nothing),
        TEST(null_arguments_are_refused),
        TEST(loading_a_missing_file_is_an_io_error),
        TEST(loading_a_folder_is_an_io_error),
        TEST(loading_a_text_file_is_a_format_error),
        TEST(loading_a_weights_file_is_a_format_error),
        TEST(loading_a_regridder_file_as_weights_is_a_format_error),
        TEST(loading_another_kind_is_a_format_error),
        TEST(loading_a_newer_format_version_is_a_format_error),
        TEST(loading_a_truncated_file_is_a_format_error),
        TEST(loading_row_pointers_that_decrease_is_a_format_error),
        TEST(loading_row_pointers_not_from_zero_is_a_format_error),
        TEST(loading_row_pointers_short_of_the_entries_is_a_format_error),
        TEST(loading_row_pointers_past_the_entries_is_a_format_error),
        TEST(loading_a_column_out_of_range_is_a_format_error),
        TEST(loading_a_negative_column_is_a_format_error),
        TEST(loading_a_group_size_the_matrix_does_not_call_for_is_a_format_error),
        TEST(loading_a_group_size_that_is_no_power_of_two_is_a_format_error),
        TEST(loading_another_chunk_length_is_a_format_error),
        TEST(loading_a_value_type_unlike_the_column_is_a_format_error),
        TEST(loading_an_unknown_value_type_is_a_format_error),
        TEST(loading_int64_columns_for_a_small_matrix_is_a_format_error),
        TEST(loading_batch_flags_that_change_the_matrix_size_is_a_format_error),
        TEST(loading_batch_axes_that_differ_between_sides_is_a_format_error),
        TEST(loading_a_batch_flag_on_an_axis_of_one_is_a_format_error),
        TEST(loading_a_shape_whose_matrix_axes_overflow_is_a_format_error),
        TEST(loading_a_missing_batch_flag_is_a_format_error),
        TEST(loading_a_wrong_entry_count_is_a_format_error),
        TEST(loading_a_file_without_a_table_is_a_format_error),
        TEST(the_roles_of_the_axes_come_back),
        TEST(a_transpose_saves_without_roles),
        TEST(a_file_without_role_keywords_loads_without_roles),
        TEST(loading_a_weights_extent_that_fits_no_role_is_a_format_error),
        TEST(loading_a_weights_extent_unlike_the_batch_flags_is_a_format_error),
        TEST(loading_a_resampled_batch_axis_is_a_format_error),
        TEST(loading_resampled_axes_out_of_range_is_a_format_error),
        TEST(loading_a_missing_role_keyword_is_a_format_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
