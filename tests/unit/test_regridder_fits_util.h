/*
 * tests/unit/test_regridder_fits_util.h: what the tests of Regridder files
 * share (test_regridder_fits.c, test_regridder_fits_round_trip.c): random
 * operators of every kind, the fixture of a fresh folder, and comparisons
 * of two regridders and their products.
 */
#ifndef SPART_TEST_REGRIDDER_FITS_UTIL_H
#define SPART_TEST_REGRIDDER_FITS_UTIL_H

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

static inline double *random_values(int64_t n, uint64_t seed)
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
static inline spart_weights *random_weights(spart_context *context, spart_shape orthogonal,
                                            spart_shape input, const int *axes_input,
                                            spart_shape output, const int *axes_output,
                                            int64_t cells_in, int64_t cells_out,
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

static inline spart_regridder *make(spart_context *context, const spart_weights *weights,
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
static inline spart_regridder *batch_operator(spart_context *context, spart_value_type value_type)
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
static inline spart_regridder *dense_operator(spart_context *context)
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
static inline spart_regridder *special_values_operator(spart_context *context,
                                                       spart_value_type value_type)
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
static inline spart_regridder *huge_column_operator(spart_context *context)
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
static inline spart_regridder *empty_operator(spart_context *context)
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

static inline int set_up(void **state)
{
    return fits_set_up(state, "test_regridder_fits", "operator.fits");
}

/* ---- comparing regridders
 * ------------------------------------------------------------------------- */

/* Every field of an axis map, over the shape's axes. */
static inline void assert_axis_maps_equal(const spart_axis_map *a, const spart_axis_map *b)
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
static inline void assert_regridders_identical(const spart_regridder *a, const spart_regridder *b)
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

static inline spart_regridder *save_and_load(fits_fixture *f, const spart_regridder *regridder)
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
static inline double *apply(spart_context *context, const spart_regridder *regridder, double *x,
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
static inline void assert_products_identical(spart_context *context, const spart_regridder *a,
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

static inline int has_empty_row(const spart_regridder *regridder)
{
    for (int64_t r = 0; r < regridder->csr.num_rows; r++) {
        if (regridder->csr.row_ptr[r] == regridder->csr.row_ptr[r + 1]) {
            return 1;
        }
    }
    return 0;
}

#endif
