/*
 * The host Regridder: assembly, roles, products in the documented order,
 * determinism across threads and batch widths, the exact transpose,
 * degenerate shapes and bad input.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/regridder_internal.h"

#include "spart.h"
#include "test_util.h"

/* Random weights: each of the orthogonal elements gets `per_element`
 * entries with random cells (repeats allowed) and values in [0.5, 1.5). */
static spart_weights *random_weights(spart_context *context, spart_shape orthogonal,
                                     spart_shape input, int num_axes_input, const int *axes_input,
                                     spart_shape output, int num_axes_output,
                                     const int *axes_output, int64_t per_element, uint64_t seed)
{
    int64_t elements = spart_shape_size(&orthogonal);
    int64_t cells_in = 1, cells_out = 1;
    for (int a = 0; a < num_axes_input; a++) {
        cells_in *= input.dims[axes_input[a]];
    }
    for (int a = 0; a < num_axes_output; a++) {
        cells_out *= output.dims[axes_output[a]];
    }
    int64_t total = elements * per_element;
    int64_t *offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    int64_t *in = malloc((size_t)(total + 1) * sizeof(int64_t));
    int64_t *out = malloc((size_t)(total + 1) * sizeof(int64_t));
    double *values = malloc((size_t)(total + 1) * sizeof(double));
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
    assert_int_equal(spart_weights_create_from_arrays(
                         context, &orthogonal, &input, &output, num_axes_input, axes_input,
                         num_axes_output, axes_output, offsets, in, out, values, &weights),
                     SPART_OK);
    free(offsets);
    free(in);
    free(out);
    free(values);
    return weights;
}

static double *random_values(int64_t n, uint64_t seed)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        values[k] = next_uniform(&state) * 2.0 - 1.0;
    }
    return values;
}

static void assert_close(const double *a, const double *b, int64_t n, double tolerance)
{
    for (int64_t k = 0; k < n; k++) {
        double scale = fabs(b[k]) > 1.0 ? fabs(b[k]) : 1.0;
        if (!(fabs(a[k] - b[k]) <= tolerance * scale)) {
            fail_msg("value %lld: %.17g, expected %.17g", (long long)k, a[k], b[k]);
        }
    }
}

/* ---- the documented summation order, written out plainly ---------------- */

/* Y = A x for one vector in the order of spart/regridder.h. */
static void reference_product(spart_context *context, const spart_regridder *regridder,
                              const double *x, double *y)
{
    (void)context;
    const int64_t *row_ptr = NULL;
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    const void *values = NULL;
    assert_int_equal(spart_regridder_csr(regridder, &row_ptr, &columns32, &columns64, &values),
                     SPART_OK);
    int g = spart_regridder_group_size(regridder);
    int float32 = spart_regridder_value_type(regridder) == SPART_FLOAT32;
    for (int64_t r = 0; r < spart_regridder_num_rows(regridder); r++) {
        double total = 0.0;
        for (int64_t start = row_ptr[r]; start < row_ptr[r + 1]; start += SPART_CHUNK_LENGTH) {
            int64_t stop = start + SPART_CHUNK_LENGTH < row_ptr[r + 1] ? start + SPART_CHUNK_LENGTH
                                                                       : row_ptr[r + 1];
            double lanes[32] = {0};
            for (int64_t k = start; k < stop; k++) {
                int64_t column = columns32 != NULL ? columns32[k] : columns64[k];
                double value =
                    float32 ? (double)((const float *)values)[k] : ((const double *)values)[k];
                int lane = (int)((k - start) % g);
                lanes[lane] = fma(value, x[column], lanes[lane]);
            }
            for (int half = g / 2; half >= 1; half /= 2) {
                for (int l = 0; l < half; l++) {
                    lanes[l] = lanes[l] + lanes[l + half];
                }
            }
            total = start == row_ptr[r] ? lanes[0] : total + lanes[0];
        }
        y[r] = total;
    }
}

/* ---- fixtures ---------------------------------------------------------------- */

typedef struct fixture {
    spart_context *context;
    spart_weights *trailing;    /* orthogonal (2,3); input (2,3,4,5) axes (2,3); output (2,3,6) */
    spart_weights *interleaved; /* orthogonal (2,3); input (4,2,5,3) axes (0,2); output (2,6,3) */
} fixture;

static int set_up(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    assert_int_equal(spart_context_create(&f.context), SPART_OK);
    const int64_t orthogonal[] = {2, 3};
    const int64_t input[] = {2, 3, 4, 5}, output[] = {2, 3, 6};
    const int axes_input[] = {2, 3}, axes_output[] = {2};
    f.trailing = random_weights(f.context, shape_of(2, orthogonal), shape_of(4, input), 2,
                                axes_input, shape_of(3, output), 1, axes_output, 37, 1);
    const int64_t input2[] = {4, 2, 5, 3}, output2[] = {2, 6, 3};
    const int axes_input2[] = {0, 2}, axes_output2[] = {1};
    f.interleaved = random_weights(f.context, shape_of(2, orthogonal), shape_of(4, input2), 2,
                                   axes_input2, shape_of(3, output2), 1, axes_output2, 37, 2);
    *state = &f;
    return 0;
}

static int tear_down(void **state)
{
    fixture *f = *state;
    spart_weights_free(f->trailing);
    spart_weights_free(f->interleaved);
    spart_context_free(f->context);
    return 0;
}

static spart_regridder *make(fixture *f, const spart_weights *weights, int ndim_in,
                             const int64_t *shape_in, int ndim_out, const int64_t *shape_out)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    if (shape_in != NULL) {
        options.has_shape_input = 1;
        options.shape_input = shape_of(ndim_in, shape_in);
    }
    if (shape_out != NULL) {
        options.has_shape_output = 1;
        options.shape_output = shape_of(ndim_out, shape_out);
    }
    spart_regridder *regridder = NULL;
    spart_status status = spart_regridder_create(f->context, weights, &options, &regridder);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_create: %s", spart_context_error(f->context));
    }
    return regridder;
}

/* y of the regridder for x, allocated. */
static double *apply(fixture *f, const spart_regridder *regridder, const spart_array *x,
                     int64_t *size)
{
    spart_shape shape_y;
    assert_int_equal(spart_regridder_apply_shape(f->context, regridder, &x->shape, &shape_y),
                     SPART_OK);
    *size = spart_shape_size(&shape_y);
    double *y = malloc((size_t)(*size > 0 ? *size : 1) * sizeof(double));
    for (int64_t k = 0; k < *size; k++) {
        y[k] = NAN; /* poisoned: every value must be written */
    }
    spart_status status = spart_regridder_apply(f->context, regridder, x, y, *size);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_apply: %s", spart_context_error(f->context));
    }
    return y;
}

/* regrid_from_weights of the per-element outputs, for the full shapes. */
static double *per_element(fixture *f, const spart_weights *weights, const spart_array *x,
                           int num_axes_in, const int *axes_in, int num_axes_out,
                           const int *axes_out, int64_t *size)
{
    spart_shape shape;
    assert_int_equal(spart_regrid_from_weights_shape(f->context, weights, &x->shape, num_axes_in,
                                                     axes_in, num_axes_out, axes_out, &shape),
                     SPART_OK);
    *size = spart_shape_size(&shape);
    double *y = malloc((size_t)*size * sizeof(double));
    assert_int_equal(spart_regrid_from_weights(f->context, weights, x, num_axes_in, axes_in,
                                               num_axes_out, axes_out, y, *size),
                     SPART_OK);
    return y;
}

/* ---- roles ---------------------------------------------------------------------- */

static void diagonal_role_equals_regrid_from_weights(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    assert_int_equal(spart_regridder_num_rows(regridder), 2 * 3 * 6);
    assert_int_equal(spart_regridder_num_columns(regridder), 2 * 3 * 20);
    assert_int_equal(spart_regridder_num_entries(regridder), 6 * 37);
    double *x = random_values(120, 3);
    spart_array xa = {x, {4, {2, 3, 4, 5}}};
    int64_t n = 0, m = 0;
    double *y = apply(f, regridder, &xa, &n);
    double *expected = per_element(f, f->trailing, &xa, 0, NULL, 0, NULL, &m);
    assert_int_equal(n, m);
    assert_close(y, expected, n, 1e-14);
    double *exact = malloc((size_t)n * sizeof(double));
    reference_product(f->context, regridder, x, exact);
    assert_memory_equal(y, exact, (size_t)n * sizeof(double));
    free(x);
    free(y);
    free(expected);
    free(exact);
    spart_regridder_free(regridder);
}

static void shared_input_applies_every_element_to_one_input(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {1, 3, 4, 5}, out[] = {2, 3, 6};
    spart_regridder *regridder = make(f, f->trailing, 4, in, 3, out);
    assert_int_equal(spart_regridder_num_columns(regridder), 3 * 20);
    double *x = random_values(60, 4);
    spart_array xa = {x, {4, {1, 3, 4, 5}}};
    int64_t n = 0, m = 0;
    double *y = apply(f, regridder, &xa, &n);
    double *expected = per_element(f, f->trailing, &xa, 0, NULL, 0, NULL, &m);
    assert_int_equal(n, m);
    assert_close(y, expected, n, 1e-14);
    free(x);
    free(y);
    free(expected);
    spart_regridder_free(regridder);
}

static void summed_output_adds_the_elements(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {1, 3, 4, 5}, out[] = {2, 1, 6}; /* shared on 0, summed on 1 */
    spart_regridder *regridder = make(f, f->trailing, 4, in, 3, out);
    assert_int_equal(spart_regridder_num_rows(regridder), 2 * 6);
    double *x = random_values(60, 5);
    spart_array xa = {x, {4, {1, 3, 4, 5}}};
    int64_t n = 0, m = 0;
    double *y = apply(f, regridder, &xa, &n);
    double *full = per_element(f, f->trailing, &xa, 0, NULL, 0, NULL, &m); /* (2,3,6) */
    assert_int_equal(n, 12);
    double expected[12] = {0};
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 3; b++) {
            for (int o = 0; o < 6; o++) {
                expected[a * 6 + o] += full[(a * 3 + b) * 6 + o];
            }
        }
    }
    assert_close(y, expected, n, 1e-13);
    free(x);
    free(y);
    free(full);
    spart_regridder_free(regridder);
}

static void sum_of_elements_role(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {1, 1, 4, 5}, out[] = {1, 1, 6};
    spart_regridder *regridder = make(f, f->trailing, 4, in, 3, out);
    double *x = random_values(20, 6);
    spart_array xa = {x, {4, {1, 1, 4, 5}}};
    int64_t n = 0, m = 0;
    double *y = apply(f, regridder, &xa, &n);
    double *full = per_element(f, f->trailing, &xa, 0, NULL, 0, NULL, &m);
    double expected[6] = {0};
    for (int e = 0; e < 6; e++) {
        for (int o = 0; o < 6; o++) {
            expected[o] += full[e * 6 + o];
        }
    }
    assert_int_equal(n, 6);
    assert_close(y, expected, n, 1e-13);
    free(x);
    free(y);
    free(full);
    spart_regridder_free(regridder);
}

static void interleaved_axes_diagonal_and_summed(void **state)
{
    fixture *f = *state;
    const int axes_in[] = {0, 2}, axes_out[] = {1};
    double *x = random_values(120, 7);
    spart_array xa = {x, {4, {4, 2, 5, 3}}};
    int64_t n = 0, m = 0;
    spart_regridder *diagonal = make(f, f->interleaved, 0, NULL, 0, NULL);
    double *y = apply(f, diagonal, &xa, &n);
    double *full = per_element(f, f->interleaved, &xa, 2, axes_in, 1, axes_out, &m);
    assert_int_equal(n, m);
    assert_close(y, full, n, 1e-14);
    free(y);
    /* Summed over orthogonal axis 1 (output axis 2). */
    const int64_t out[] = {2, 6, 1};
    const int64_t in[] = {4, 2, 5, 3};
    spart_regridder *summed = make(f, f->interleaved, 4, in, 3, out);
    y = apply(f, summed, &xa, &n);
    assert_int_equal(n, 12);
    double expected[12] = {0};
    for (int a = 0; a < 2; a++) {
        for (int o = 0; o < 6; o++) {
            for (int b = 0; b < 3; b++) {
                expected[a * 6 + o] += full[(a * 6 + o) * 3 + b];
            }
        }
    }
    assert_close(y, expected, n, 1e-13);
    free(x);
    free(y);
    free(full);
    spart_regridder_free(diagonal);
    spart_regridder_free(summed);
}

static void batch_axis_applies_one_matrix_to_every_input(void **state)
{
    fixture *f = *state;
    /* Weights with one orthogonal axis of 3; values with a batch axis of 5
     * in front of it. */
    const int64_t orthogonal[] = {3}, input[] = {3, 4, 5}, output[] = {3, 6};
    const int axes_input[] = {1, 2}, axes_output[] = {1};
    spart_weights *weights =
        random_weights(f->context, shape_of(1, orthogonal), shape_of(3, input), 2, axes_input,
                       shape_of(2, output), 1, axes_output, 29, 9);
    const int64_t in[] = {5, 3, 4, 5}, out[] = {5, 3, 6};
    spart_regridder *regridder = make(f, weights, 4, in, 3, out);
    assert_int_equal(spart_regridder_num_rows(regridder), 3 * 6);
    double *x = random_values(300, 10);
    spart_array xa = {x, {4, {5, 3, 4, 5}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    assert_int_equal(n, 90);
    /* Each batch entry alone through the diagonal regridder. */
    spart_regridder *single = make(f, weights, 0, NULL, 0, NULL);
    for (int b = 0; b < 5; b++) {
        spart_array xb = {x + b * 60, {3, {3, 4, 5}}};
        int64_t nb = 0;
        double *yb = apply(f, single, &xb, &nb);
        assert_int_equal(nb, 18);
        assert_memory_equal(y + b * 18, yb, 18 * sizeof(double));
        free(yb);
    }
    free(x);
    free(y);
    spart_regridder_free(single);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

/* A batch axis after the matrix axes (weights with a trailing orthogonal
 * axis of 1, values of shape (..., T)) lies as the kernels read it: x and
 * y are used in place, the workspace holds no packed copy, and each vector
 * gets the bits it gets alone, for x on a cache line or not. */
static void trailing_batch_axis_is_read_and_written_in_place(void **state)
{
    fixture *f = *state;
    const int64_t orthogonal[] = {3, 1}, input[] = {3, 4, 5, 1}, output[] = {3, 6, 1};
    const int axes_input[] = {1, 2}, axes_output[] = {1};
    spart_weights *weights =
        random_weights(f->context, shape_of(2, orthogonal), shape_of(4, input), 2, axes_input,
                       shape_of(3, output), 1, axes_output, 400, 13);
    spart_regridder *single = make(f, weights, 0, NULL, 0, NULL);
    assert_int_equal(spart_regridder_group_size(single), 32);
    const int64_t widths[] = {3, 4, 8};
    for (int w = 0; w < 3; w++) {
        int64_t width = widths[w];
        const int64_t in[] = {3, 4, 5, width}, out[] = {3, 6, width};
        spart_regridder *regridder = make(f, weights, 4, in, 3, out);
        /* the workspace of the same vectors as a leading axis, less their packed copy */
        size_t bytes = 0, bytes_leading = 0;
        spart_shape shape_x = shape_of(4, in), shape_leading = {5, {width, 3, 4, 5, 1}};
        assert_int_equal(spart_regridder_workspace_size(f->context, regridder, &shape_x, &bytes),
                         SPART_OK);
        assert_int_equal(
            spart_regridder_workspace_size(f->context, single, &shape_leading, &bytes_leading),
            SPART_OK);
        assert_int_equal(bytes, bytes_leading - (size_t)(60 * width) * sizeof(double));
        /* x on its own allocation, and one double further on */
        double *x = random_values(60 * width + 1, 30 + (uint64_t)w);
        for (int shift = 0; shift < 2; shift++) {
            spart_array xa = {x + shift, shape_x};
            int64_t n = 0;
            double *y = apply(f, regridder, &xa, &n);
            assert_int_equal(n, 18 * width);
            double *xt = malloc(60 * sizeof(double));
            for (int64_t t = 0; t < width; t++) {
                for (int64_t m = 0; m < 60; m++) {
                    xt[m] = x[shift + m * width + t];
                }
                spart_array alone = {xt, {4, {3, 4, 5, 1}}};
                int64_t m = 0;
                double *yt = apply(f, single, &alone, &m);
                assert_int_equal(m, 18);
                for (int64_t r = 0; r < 18; r++) {
                    assert_memory_equal(&y[r * width + t], &yt[r], sizeof(double));
                }
                free(yt);
            }
            free(xt);
            free(y);
        }
        free(x);
        spart_regridder_free(regridder);
    }
    spart_regridder_free(single);
    spart_weights_free(weights);
}

static void impossible_role_names_the_axis_and_lengths(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {2, 2, 4, 5}, out[] = {2, 3, 6};
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = shape_of(4, in);
    options.has_shape_output = 1;
    options.shape_output = shape_of(3, out);
    spart_regridder *regridder = (spart_regridder *)f;
    assert_int_equal(spart_regridder_create(f->context, f->trailing, &options, &regridder),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_null(regridder);
    const char *sentence = spart_context_error(f->context);
    assert_non_null(strstr(sentence, "orthogonal axis 1"));
    assert_non_null(strstr(sentence, "the weights have 3 elements, the input 2 and the output 3"));
    /* A resampled extent that differs from the weights'. */
    const int64_t wrong[] = {2, 3, 4, 6};
    options.shape_input = shape_of(4, wrong);
    assert_int_equal(spart_regridder_create(f->context, f->trailing, &options, &regridder),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "resampled axis 3"));
    options.has_shape_input = 0;
    options.value_type = (spart_value_type)5;
    assert_int_equal(spart_regridder_create(f->context, f->trailing, &options, &regridder),
                     SPART_ERROR_UNKNOWN_ENUM);
    assert_int_equal(spart_regridder_create(f->context, NULL, &options, &regridder),
                     SPART_ERROR_NULL_POINTER);
}

/* ---- determinism ------------------------------------------------------------------ */

/* A long-row operator: one orthogonal element, 9000 input cells, 8 output
 * cells, 12000 entries per output row on average: rows are cut in chunks. */
static spart_weights *long_row_weights(fixture *f)
{
    const int64_t orthogonal[] = {1}, input[] = {1, 9000}, output[] = {1, 8};
    const int axes_input[] = {1}, axes_output[] = {1};
    return random_weights(f->context, shape_of(1, orthogonal), shape_of(2, input), 1, axes_input,
                          shape_of(2, output), 1, axes_output, 96000, 11);
}

static void product_follows_the_documented_order_with_long_rows(void **state)
{
    fixture *f = *state;
    spart_weights *weights = long_row_weights(f);
    spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
    assert_int_equal(spart_regridder_group_size(regridder), 32);
    double *x = random_values(9000, 12);
    spart_array xa = {x, {2, {1, 9000}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    double expected[8];
    reference_product(f->context, regridder, x, expected);
    assert_memory_equal(y, expected, sizeof expected);
    free(x);
    free(y);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

/* y of `regridder` for x alone and inside a batch of two copies of x,
 * each bit for bit the documented order. */
static void assert_documented_order(fixture *f, const spart_regridder *regridder, const double *x)
{
    int64_t rows = spart_regridder_num_rows(regridder);
    int64_t columns = spart_regridder_num_columns(regridder);
    double *twice = malloc((size_t)(2 * columns) * sizeof(double));
    memcpy(twice, x, (size_t)columns * sizeof(double));
    memcpy(twice + columns, x, (size_t)columns * sizeof(double));
    spart_array alone = {x, {2, {1, columns}}};
    spart_array batch = {twice, {3, {2, 1, columns}}};
    int64_t n = 0, n2 = 0;
    double *y = apply(f, regridder, &alone, &n);
    double *y2 = apply(f, regridder, &batch, &n2);
    double *expected = malloc((size_t)rows * sizeof(double));
    reference_product(f->context, regridder, x, expected);
    assert_int_equal(n, rows);
    assert_same_bits_or_nan(y, expected, rows);
    assert_same_bits_or_nan(y2, expected, rows);
    assert_same_bits_or_nan(y2 + rows, expected, rows);
    free(twice);
    free(y);
    free(y2);
    free(expected);
}

/* Every group size, rows of every length up to a few groups (partial
 * groups, empty rows), signed and tiny values, -0.0, inf and NaN in x: one
 * vector's product is the documented order bit for bit, and equals the
 * same vector inside a batch (the batch kernel). Then rows whose every
 * product underflows to -0.0: the lanes a partial group does not reach
 * must keep their -0.0 (an fma adding +0.0 would make it +0.0). */
static void product_follows_the_documented_order_for_every_group_size(void **state)
{
    fixture *f = *state;
    const double mean_lengths[] = {1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 100.0};
    const int group_sizes[] = {1, 2, 4, 8, 16, 32, 32};
    const int64_t rows = 300, columns = 500;
    for (int m = 0; m < 7; m++) {
        int64_t entries = (int64_t)(mean_lengths[m] * (double)rows);
        for (int negative_zeros = 0; negative_zeros < 2; negative_zeros++) {
            spart_weights *weights = signed_weights(f->context, rows, columns, entries,
                                                    40 + (uint64_t)m, negative_zeros);
            spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
            assert_int_equal(spart_regridder_group_size(regridder), group_sizes[m]);
            double *x = random_values(columns, 50 + (uint64_t)m);
            for (int64_t c = 0; c < columns; c++) {
                if (negative_zeros) {
                    x[c] = 1e-200 * (1.5 + x[c]); /* every product underflows to -0.0 */
                } else if (c % 7 == 0) {
                    x[c] *= 1e-200; /* tiny times tiny underflows, to -0.0 when negative */
                }
            }
            if (!negative_zeros) {
                x[11] = -0.0;
                x[123] = INFINITY;
                x[321] = NAN;
            }
            assert_documented_order(f, regridder, x);
            free(x);
            spart_regridder_free(regridder);
            spart_weights_free(weights);
        }
    }
}

static void same_digest_for_any_thread_count(void **state)
{
    fixture *f = *state;
    spart_weights *weights = long_row_weights(f);
    double *x = random_values(9000, 13);
    spart_array xa = {x, {2, {1, 9000}}};
    uint64_t digests[3];
    const int threads[3] = {1, 2, 4};
    const int64_t *first_row_ptr = NULL;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(spart_context_set_threads(f->context, threads[k]), SPART_OK);
        spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
        const int64_t *row_ptr = NULL;
        const int32_t *columns = NULL;
        const void *values = NULL;
        assert_int_equal(spart_regridder_csr(regridder, &row_ptr, &columns, NULL, &values),
                         SPART_OK);
        uint64_t arrays = digest_doubles((const double *)(const void *)columns, 96000 / 2) ^
                          digest_doubles(values, 96000) ^
                          digest_doubles((const double *)(const void *)row_ptr, 9);
        (void)first_row_ptr;
        int64_t n = 0;
        double *y = apply(f, regridder, &xa, &n);
        digests[k] = digest_doubles(y, n) ^ (arrays * 31);
        free(y);
        spart_regridder_free(regridder);
    }
    assert_int_equal(spart_context_set_threads(f->context, 0), SPART_OK);
    assert_true(digests[0] == digests[1]);
    assert_true(digests[0] == digests[2]);
    free(x);
    spart_weights_free(weights);
}

static void a_column_alone_equals_the_column_in_a_batch(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    const int64_t widths[] = {3, 8, 33};
    for (int w = 0; w < 3; w++) {
        int64_t width = widths[w];
        double *x = random_values(width * 120, 20 + (uint64_t)w);
        spart_array batch = {x, {5, {width, 2, 3, 4, 5}}};
        int64_t n = 0;
        double *y = apply(f, regridder, &batch, &n);
        assert_int_equal(n, width * 36);
        for (int64_t c = 0; c < width; c++) {
            spart_array alone = {x + c * 120, {4, {2, 3, 4, 5}}};
            int64_t m = 0;
            double *yc = apply(f, regridder, &alone, &m);
            assert_memory_equal(y + c * 36, yc, 36 * sizeof(double));
            free(yc);
        }
        free(x);
        free(y);
    }
    spart_regridder_free(regridder);
}

static void golden_digest_run_after_run(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    double *x = random_values(8 * 120, 99);
    spart_array batch = {x, {5, {8, 2, 3, 4, 5}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &batch, &n);
    /* The digest of this product, fixed when the order was first written
     * down: a change here means the summation order changed. */
    uint64_t got = digest_doubles(y, n);
    if (got != 0x7664992aa1b3b4f0ULL) {
        fail_msg("digest 0x%016llx, golden 0x7664992aa1b3b4f0", (unsigned long long)got);
    }
    free(x);
    free(y);
    spart_regridder_free(regridder);
}

/* y of a regridder for x, once with the plan's stripes and once with
 * rows in order (row_stripes = 1), with 1 and 2 threads: all the same bits. */
static void assert_stripes_keep_the_sums(fixture *f, spart_regridder *regridder,
                                         const spart_array *x)
{
    int64_t stripes = regridder->plan.row_stripes, n = 0;
    double *expected = NULL;
    for (int threads = 1; threads <= 2; threads++) {
        assert_int_equal(spart_context_set_threads(f->context, threads), SPART_OK);
        for (int in_order = 0; in_order < 2; in_order++) {
            regridder->plan.row_stripes = in_order ? 1 : stripes;
            double *y = apply(f, regridder, x, &n);
            if (expected == NULL) {
                expected = y;
                continue;
            }
            assert_memory_equal(y, expected, (size_t)n * sizeof(double));
            free(y);
        }
    }
    regridder->plan.row_stripes = stripes;
    assert_int_equal(spart_context_set_threads(f->context, 0), SPART_OK);
    free(expected);
}

/* A forward model of 4 channels sharing one scene (wavelengths summed):
 * the rows form 4 stripes, one per channel, each cut into several tasks;
 * working them side by side changes no bit of y, for one vector or 8. */
static void shared_input_rows_are_worked_in_stripes_with_the_same_sums(void **state)
{
    fixture *f = *state;
    const int64_t orthogonal[] = {4, 2}, input[] = {4, 2, 300}, output[] = {4, 2, 200};
    const int axes[] = {2};
    spart_weights *weights = random_weights(f->context, shape_of(2, orthogonal), shape_of(3, input),
                                            1, axes, shape_of(3, output), 1, axes, 20000, 41);
    const int64_t in[] = {1, 2, 300}, out[] = {4, 1, 200};
    spart_regridder *regridder = make(f, weights, 3, in, 3, out);
    assert_int_equal(regridder->plan.row_stripes, 4);
    double *x = random_values(8 * 600, 42);
    spart_array one = {x, {3, {1, 2, 300}}}, eight = {x, {4, {8, 1, 2, 300}}};
    assert_stripes_keep_the_sums(f, regridder, &one);
    assert_stripes_keep_the_sums(f, regridder, &eight);
    spart_regridder_free(regridder);
    /* each channel with its own scene: rows in order */
    const int64_t own[] = {4, 2, 300};
    regridder = make(f, weights, 3, own, 3, out);
    assert_int_equal(regridder->plan.row_stripes, 1);
    spart_regridder_free(regridder);
    free(x);
    spart_weights_free(weights);
}

/* ---- transpose ------------------------------------------------------------------- */

static void transpose_passes_the_dot_product_test(void **state)
{
    fixture *f = *state;
    const int64_t in[] = {1, 3, 4, 5}, out[] = {2, 1, 6};
    spart_regridder *regridder = make(f, f->trailing, 4, in, 3, out);
    spart_regridder *transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    spart_regridder *again = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, transposed, &again), SPART_OK);
    assert_ptr_equal(again, regridder);
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &again), SPART_OK);
    assert_ptr_equal(again, transposed);
    spart_shape tin = spart_regridder_shape_input(transposed);
    assert_int_equal(tin.ndim, 3);
    assert_int_equal(tin.dims[1], 1);
    double *x = random_values(60, 30), *u = random_values(12, 31);
    spart_array xa = {x, {4, {1, 3, 4, 5}}}, ua = {u, {3, {2, 1, 6}}};
    int64_t n = 0, m = 0;
    double *ax = apply(f, regridder, &xa, &n);
    double *atu = apply(f, transposed, &ua, &m);
    assert_int_equal(n, 12);
    assert_int_equal(m, 60);
    double left = 0.0, right = 0.0;
    for (int k = 0; k < 12; k++) {
        left += ax[k] * u[k];
    }
    for (int k = 0; k < 60; k++) {
        right += x[k] * atu[k];
    }
    assert_true(fabs(left - right) <= 1e-13 * fabs(left));
    spart_regridder_free(transposed); /* owned by regridder: does nothing */
    free(x);
    free(u);
    free(ax);
    free(atu);
    spart_regridder_free(regridder);
}

/* ---- degenerate shapes --------------------------------------------------------------- */

static void empty_elements_and_rows_give_zeros(void **state)
{
    fixture *f = *state;
    const int64_t orthogonal[] = {3}, input[] = {3, 4}, output[] = {3, 5};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 0, 2, 2}; /* elements 0 and 2 empty */
    const int64_t indices_in[] = {1, 3}, indices_out[] = {4, 4};
    const double values[] = {2.0, 3.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
    double x[12] = {0, 0, 0, 0, 0, 10, 0, 100, 0, 0, 0, 0};
    spart_array xa = {x, {2, {3, 4}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    double expected[15] = {0};
    expected[9] = 2.0 * 10 + 3.0 * 100;
    assert_memory_equal(y, expected, sizeof expected);
    free(y);
    /* A batch of zero columns: nothing to do, nothing written. */
    spart_array none = {x, {3, {0, 3, 4}}};
    spart_shape shape_y;
    assert_int_equal(spart_regridder_apply_shape(f->context, regridder, &none.shape, &shape_y),
                     SPART_OK);
    assert_int_equal(spart_shape_size(&shape_y), 0);
    double dummy = 0;
    assert_int_equal(spart_regridder_apply(f->context, regridder, &none, &dummy, 0), SPART_OK);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

static void nan_reaches_only_the_rows_that_touch_it(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    double *x = random_values(120, 40);
    x[7] = NAN;
    spart_array xa = {x, {4, {2, 3, 4, 5}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    const int64_t *row_ptr = NULL;
    const int32_t *columns = NULL;
    assert_int_equal(spart_regridder_csr(regridder, &row_ptr, &columns, NULL, NULL), SPART_OK);
    for (int64_t r = 0; r < n; r++) {
        int touches = 0;
        for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++) {
            touches |= columns[k] == 7;
        }
        assert_int_equal(isnan(y[r]) != 0, touches);
    }
    free(x);
    free(y);
    spart_regridder_free(regridder);
}

static void drop_zeros_leaves_out_exact_zeros(void **state)
{
    fixture *f = *state;
    const int64_t orthogonal[] = {1}, input[] = {1, 4}, output[] = {1, 2};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 4};
    const int64_t indices_in[] = {0, 1, 2, 3}, indices_out[] = {0, 0, 1, 1};
    const double values[] = {1.0, 0.0, -0.0, 4.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.drop_zeros = 1;
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(f->context, weights, &options, &regridder), SPART_OK);
    assert_int_equal(spart_regridder_num_entries(regridder), 2);
    spart_regridder_free(regridder);
    options.drop_zeros = 0;
    assert_int_equal(spart_regridder_create(f->context, weights, &options, &regridder), SPART_OK);
    assert_int_equal(spart_regridder_num_entries(regridder), 4);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

static void huge_column_count_uses_int64_columns(void **state)
{
    fixture *f = *state;
    /* 2^31 + 5 input cells along one axis, three entries. */
    const int64_t big = ((int64_t)1 << 31) + 5;
    const int64_t orthogonal[] = {1}, input[] = {1, big}, output[] = {1, 2};
    const int axes[] = {1};
    spart_shape o = shape_of(1, orthogonal), in = shape_of(2, input), out = shape_of(2, output);
    const int64_t offsets[] = {0, 3};
    const int64_t indices_in[] = {0, big - 1, big - 2}, indices_out[] = {0, 1, 1};
    const double values[] = {1.0, 2.0, 3.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &o, &in, &out, 1, axes, 1, axes,
                                                      offsets, indices_in, indices_out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *regridder = make(f, weights, 0, NULL, 0, NULL);
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    assert_int_equal(spart_regridder_csr(regridder, NULL, &columns32, &columns64, NULL), SPART_OK);
    assert_null(columns32);
    assert_non_null(columns64);
    assert_int_equal(columns64[1], big - 1);
    assert_int_equal(columns64[2], big - 2);
    /* (Its transpose would have 2^31 + 5 rows: 16 GiB of row pointers.) */
    spart_regridder_free(regridder);
    spart_weights_free(weights);
}

static void float32_values_are_summed_in_float64(void **state)
{
    fixture *f = *state;
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.value_type = SPART_FLOAT32;
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(f->context, f->trailing, &options, &regridder),
                     SPART_OK);
    assert_int_equal(spart_regridder_value_type(regridder), SPART_FLOAT32);
    double *x = random_values(120, 50);
    spart_array xa = {x, {4, {2, 3, 4, 5}}};
    int64_t n = 0;
    double *y = apply(f, regridder, &xa, &n);
    double expected[36];
    reference_product(f->context, regridder, x, expected);
    assert_memory_equal(y, expected, sizeof expected);
    free(x);
    free(y);
    spart_regridder_free(regridder);
}

static void apply_rejects_bad_shapes_and_sizes(void **state)
{
    fixture *f = *state;
    spart_regridder *regridder = make(f, f->trailing, 0, NULL, 0, NULL);
    double x[120] = {0}, y[36];
    spart_array wrong = {x, {4, {2, 3, 5, 4}}};
    assert_int_equal(spart_regridder_apply(f->context, regridder, &wrong, y, 36),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "x has shape 2x3x5x4"));
    spart_array right = {x, {4, {2, 3, 4, 5}}};
    assert_int_equal(spart_regridder_apply(f->context, regridder, &right, y, 35),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(f->context), "size_y = 35"));
    assert_int_equal(spart_regridder_apply(f->context, regridder, &right, NULL, 36),
                     SPART_ERROR_NULL_POINTER);
    /* y where x still lies, in part or whole: refused, nothing written */
    static double shared[156];
    spart_array x_in_shared = {shared, {4, {2, 3, 4, 5}}};
    assert_int_equal(spart_regridder_apply(f->context, regridder, &x_in_shared, shared + 100, 36),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "x and y overlap"));
    assert_int_equal(spart_regridder_apply(f->context, regridder, &x_in_shared, shared, 36),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_regridder_apply(f->context, regridder, &x_in_shared, shared + 120, 36),
                     SPART_OK); /* just past x: no overlap */
    static double xb[240];
    spart_array batch = {xb, {5, {2, 2, 3, 4, 5}}};
    size_t bytes = 0;
    assert_int_equal(spart_regridder_workspace_size(f->context, regridder, &batch.shape, &bytes),
                     SPART_OK);
    assert_true(bytes > 0);
    double small[4];
    double y2[72];
    assert_int_equal(
        spart_regridder_apply_workspace(f->context, regridder, &batch, y2, 72, small, sizeof small),
        SPART_ERROR_INVALID_ARGUMENT);
    spart_regridder_free(regridder);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, set_up, tear_down)
    const struct CMUnitTest tests[] = {
        TEST(diagonal_role_equals_regrid_from_weights),
        TEST(shared_input_applies_every_element_to_one_input),
        TEST(summed_output_adds_the_elements),
        TEST(sum_of_elements_role),
        TEST(interleaved_axes_diagonal_and_summed),
        TEST(batch_axis_applies_one_matrix_to_every_input),
        TEST(trailing_batch_axis_is_read_and_written_in_place),
        TEST(impossible_role_names_the_axis_and_lengths),
        TEST(product_follows_the_documented_order_with_long_rows),
        TEST(product_follows_the_documented_order_for_every_group_size),
        TEST(same_digest_for_any_thread_count),
        TEST(a_column_alone_equals_the_column_in_a_batch),
        TEST(golden_digest_run_after_run),
        TEST(shared_input_rows_are_worked_in_stripes_with_the_same_sums),
        TEST(transpose_passes_the_dot_product_test),
        TEST(empty_elements_and_rows_give_zeros),
        TEST(nan_reaches_only_the_rows_that_touch_it),
        TEST(drop_zeros_leaves_out_exact_zeros),
        TEST(huge_column_count_uses_int64_columns),
        TEST(float32_values_are_summed_in_float64),
        TEST(apply_rejects_bad_shapes_and_sizes),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
