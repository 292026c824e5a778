/*
 * tests/unit/test_csr_product_simd.c: the vector-instruction kernels of
 * host/csr_product_simd.c give the C kernel's bits (the documented order,
 * which test_regridder holds against a plain reference) at every level
 * this processor has (AVX2, AVX-512), for one vector and batches of 4 and
 * 8 (y interleaved or as leading axes lay it out), every group size, partial groups, rows cut into
 * chunks, rows of every length up to 2g + 1 entries, -0.0, infinities and NaN, for any range of
 * rows, and through the short-row index of matrices of short rows.
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

/* A regridder of one element from `columns` input cells to `rows` output
 * cells with `entries` entries: signed values, one in eight tiny (with
 * all_negative_tiny, all tiny and negative, so that every product
 * underflows to -0.0 for a positive tiny x). */
static spart_regridder *random_regridder(spart_context *context, int64_t rows, int64_t columns,
                                         int64_t entries, uint64_t seed, int all_negative_tiny)
{
    spart_weights *weights =
        signed_weights(context, rows, columns, entries, seed, all_negative_tiny);
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &regridder), SPART_OK);
    spart_weights_free(weights);
    return regridder;
}

/* A regridder of one element whose entries are given (one_element_weights). */
static spart_regridder *regridder_of_entries(spart_context *context, int64_t rows, int64_t columns,
                                             int64_t entries, const int64_t *in, const int64_t *out,
                                             const double *values)
{
    spart_weights *weights = one_element_weights(context, rows, columns, entries, in, out, values);
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &regridder), SPART_OK);
    spart_weights_free(weights);
    return regridder;
}

static double *x_values(int64_t columns, uint64_t seed, int tiny)
{
    double *x = malloc((size_t)columns * sizeof(double));
    uint64_t state = seed;
    for (int64_t c = 0; c < columns; c++) {
        x[c] = 2.0 * next_uniform(&state) - 1.0;
        if (tiny) {
            x[c] = 1e-200 * (1.5 + x[c]);
        } else if (c % 7 == 0) {
            x[c] *= 1e-200;
        }
    }
    if (!tiny) {
        x[11] = -0.0;
        x[123] = INFINITY;
        x[321] = NAN;
    }
    return x;
}

/* Every level up to the processor's gives the C kernel's y, computed in
 * three ranges of rows (y_rows starts at the range's first row). */
static void assert_levels_agree(const spart_regridder *regridder, const double *x)
{
    const spart_csr *csr = &regridder->csr;
    const spart_product_plan *plan = &regridder->plan;
    int64_t rows = csr->num_rows;
    double *expected = malloc((size_t)rows * sizeof(double));
    double *got = malloc((size_t)rows * sizeof(double));
    spart_host_csr_product_rows(csr, plan, x, expected, 0, rows, SPART_SIMD_NONE);
    spart_simd_level top = spart_host_simd_level();
    for (int level = SPART_SIMD_AVX2; level <= (int)top; level++) {
        for (int64_t k = 0; k < rows; k++) {
            got[k] = 12345.0; /* poisoned */
        }
        /* ranges that start inside the first and the second block of a
         * short-row index */
        int64_t cuts[5] = {0, rows / 3, rows / 3 + 1, rows > 270 ? 270 : rows, rows};
        for (int part = 0; part < 4; part++) {
            spart_host_csr_product_rows(csr, plan, x, got + cuts[part], cuts[part], cuts[part + 1],
                                        (spart_simd_level)level);
        }
        assert_same_bits_or_nan(got, expected, rows);
    }
    free(expected);
    free(got);
}

/* Rows [0, rows) of a batch of `width` packed vectors at one level, in
 * three ranges of rows, written as `layout` says into a poisoned y; then
 * each vector's y is its y alone from the C kernel. */
static void assert_batch_layout_agrees(const spart_regridder *regridder, const double *packed_width,
                                       int64_t width, const spart_batch_layout *layout, int level,
                                       const double *alone)
{
    const spart_csr *csr = &regridder->csr;
    int64_t rows = csr->num_rows;
    double *got = malloc((size_t)(width * rows) * sizeof(double));
    double *column = malloc((size_t)rows * sizeof(double));
    for (int64_t k = 0; k < width * rows; k++) {
        got[k] = 12345.0; /* poisoned */
    }
    int64_t cuts[4] = {0, rows / 3, rows / 3 + 1, rows};
    for (int part = 0; part < 3; part++) {
        spart_host_csr_rows_simd_batch(csr, &regridder->plan, packed_width, width,
                                       got + cuts[part] * layout->row_stride, layout, cuts[part],
                                       cuts[part + 1], (spart_simd_level)level);
    }
    for (int64_t t = 0; t < width; t++) {
        for (int64_t r = 0; r < rows; r++) {
            column[r] = got[r * layout->row_stride + t * layout->vector_stride];
        }
        assert_same_bits_or_nan(column, alone + t * rows, rows);
    }
    free(column);
    free(got);
}

/* Batches of 4 and 8 interleaved vectors at every level, y written
 * interleaved and as leading axes lay it out (vectors one after another):
 * each vector's y is its y alone from the C kernel. */
static void assert_batches_agree(const spart_regridder *regridder, const double *x)
{
    const spart_csr *csr = &regridder->csr;
    const spart_product_plan *plan = &regridder->plan;
    int64_t rows = csr->num_rows, columns = csr->num_columns;
    double *alone = malloc((size_t)(8 * rows) * sizeof(double));
    double *packed = malloc((size_t)(8 * columns) * sizeof(double));
    double *shifted = malloc((size_t)columns * sizeof(double));
    for (int t = 0; t < 8; t++) { /* vector t: x rotated by t columns */
        for (int64_t c = 0; c < columns; c++) {
            shifted[c] = x[(c + t) % columns];
            packed[c * 8 + t] = shifted[c];
        }
        spart_host_csr_product_rows(csr, plan, shifted, alone + t * rows, 0, rows, SPART_SIMD_NONE);
    }
    spart_simd_level top = spart_host_simd_level();
    for (int64_t width = 4; width <= 8; width += 4) {
        double *packed_width = malloc((size_t)(width * columns) * sizeof(double));
        for (int64_t c = 0; c < columns; c++) {
            for (int64_t t = 0; t < width; t++) {
                packed_width[c * width + t] = packed[c * 8 + t];
            }
        }
        spart_batch_layout interleaved = {width, 1}, one_after_another = {1, rows};
        for (int level = SPART_SIMD_AVX2; level <= (int)top; level++) {
            assert_batch_layout_agrees(regridder, packed_width, width, &interleaved, level, alone);
            assert_batch_layout_agrees(regridder, packed_width, width, &one_after_another, level,
                                       alone);
        }
        free(packed_width);
    }
    free(alone);
    free(packed);
    free(shifted);
}

static void every_level_gives_the_c_kernels_bits(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    print_message("vector levels on this processor: up to %s\n",
                  spart_host_simd_level() == SPART_SIMD_AVX512 ? "AVX-512"
                  : spart_host_simd_level() == SPART_SIMD_AVX2 ? "AVX2"
                                                               : "none (nothing to compare)");
    /* mean row lengths giving g = 1, 2, 4, 8, 16, 32, and rows of about
     * 10000 entries (three chunks each) */
    const double mean_lengths[] = {1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 100.0, 10000.0};
    const int group_sizes[] = {1, 2, 4, 8, 16, 32, 32, 32};
    for (int m = 0; m < 8; m++) {
        int64_t rows = m == 7 ? 7 : 300, columns = 500;
        int64_t entries = (int64_t)(mean_lengths[m] * (double)rows);
        for (int tiny = 0; tiny < 2; tiny++) {
            spart_regridder *regridder =
                random_regridder(context, rows, columns, entries, 60 + (uint64_t)m, tiny);
            assert_int_equal(spart_regridder_group_size(regridder), group_sizes[m]);
            /* rows of a few entries get a short-row index, longer ones none */
            assert_true((regridder->plan.row_lengths != NULL) == (group_sizes[m] <= 2));
            double *x = x_values(columns, 70 + (uint64_t)m, tiny);
            assert_levels_agree(regridder, x);
            assert_batches_agree(regridder, x);
            free(x);
            spart_regridder_free(regridder);
        }
    }
    spart_context_free(context);
}

/* Rows that average under 4 entries (g = 1) but one of 300: no short-row
 * index (a length must fit in a byte), and the row_ptr kernels agree. */
static void a_row_too_long_for_the_index_leaves_it_out(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    const int64_t rows = 1000, columns = 500, entries = 1300;
    int64_t *in = malloc((size_t)entries * sizeof(int64_t));
    int64_t *out = malloc((size_t)entries * sizeof(int64_t));
    double *values = malloc((size_t)entries * sizeof(double));
    uint64_t rng = 90;
    for (int64_t k = 0; k < entries; k++) {
        in[k] = (int64_t)(next_uniform(&rng) * (double)columns);
        out[k] = k < 300 ? 7 : k - 300; /* row 7: 300 entries and one more */
        values[k] = next_uniform(&rng);
    }
    spart_regridder *regridder =
        regridder_of_entries(context, rows, columns, entries, in, out, values);
    assert_int_equal(spart_regridder_group_size(regridder), 1);
    assert_null(regridder->plan.row_lengths);
    double *x = x_values(columns, 91, 0);
    assert_levels_agree(regridder, x);
    free(x);
    free(in);
    free(out);
    free(values);
    spart_regridder_free(regridder);
    spart_context_free(context);
}

/* Rows of every length from 0 to 2g + 1 entries, each three times, and
 * enough rows of 4g entries that the plan picks g: for g = 1 to 32 every
 * batch kernel gives the C kernel's bits (a batch of 8 on AVX-512 sums the
 * rows of at most 2g entries lane by lane in the tree's order). */
static void batch_rows_of_up_to_twice_g_entries_give_the_c_kernels_bits(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    const int64_t columns = 500;
    for (int64_t g = 1; g <= 32; g *= 2) {
        int64_t short_rows = 3 * (2 * g + 2);
        /* (g + 1)(2g - 1) / (2g) rows of 4g lift the mean length to 2g */
        int64_t long_rows = g == 1 ? 0 : ((g + 1) * (2 * g - 1) + 2 * g - 1) / (2 * g);
        int64_t rows = short_rows + long_rows, entries = 0;
        int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
        for (int64_t r = 0; r < rows; r++) {
            lengths[r] = r < short_rows ? r % (2 * g + 2) : 4 * g;
            entries += lengths[r];
        }
        int64_t *in = malloc((size_t)entries * sizeof(int64_t));
        int64_t *out = malloc((size_t)entries * sizeof(int64_t));
        double *values = malloc((size_t)entries * sizeof(double));
        uint64_t rng = 100 + (uint64_t)g;
        for (int64_t r = 0, k = 0; r < rows; r++) {
            for (int64_t e = 0; e < lengths[r]; e++, k++) {
                in[k] = (int64_t)(next_uniform(&rng) * (double)columns);
                out[k] = r;
                values[k] = (2.0 * next_uniform(&rng) - 1.0) * (k % 8 == 3 ? 1e-200 : 1.0);
            }
        }
        spart_regridder *regridder =
            regridder_of_entries(context, rows, columns, entries, in, out, values);
        assert_int_equal(spart_regridder_group_size(regridder), (int)g);
        double *x = x_values(columns, 110 + (uint64_t)g, 0);
        assert_batches_agree(regridder, x);
        free(x);
        spart_regridder_free(regridder);
        free(lengths);
        free(in);
        free(out);
        free(values);
    }
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_level_gives_the_c_kernels_bits),
        cmocka_unit_test(a_row_too_long_for_the_index_leaves_it_out),
        cmocka_unit_test(batch_rows_of_up_to_twice_g_entries_give_the_c_kernels_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
