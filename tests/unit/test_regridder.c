/*
 * The host Regridder: assembly, roles, products in the documented order,
 * determinism across threads and batch widths. The transpose, degenerate
 * shapes and bad input are in test_regridder_degenerate.c.
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
#include "test_regridder_util.h"

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
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
