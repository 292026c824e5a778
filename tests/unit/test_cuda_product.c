/*
 * Device products (label `cuda`): a regridder copied to the GPU gives the
 * host product bit for bit, for float64 and float32 values, int32 and
 * int64 columns, every group size, batches of 1, 3, 8 and 33 vectors
 * (a column alone equals the same column in a batch), batches read in
 * tiles, and declared batch axes. Rows of every kind, graphs and errors are
 * in test_cuda_product_rows.c.
 *
 * Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "operator/regridder_internal.h"
#include "spart.h"
#include "test_cuda_util.h"

#include "test_cuda_product_util.h"

/* ---- the tests ------------------------------------------------------------------------- */

static void every_value_and_column_type_equals_the_host(void **state)
{
    fixture *f = *state;
    for (int float32 = 0; float32 <= 1; float32++) {
        for (int int64_columns = 0; int64_columns <= 1; int64_columns++) {
            spart_regridder *host =
                random_regridder(f->context, 20000, 5000, 12, float32, int64_columns, 11);
            assert_true(float32 ? host->csr.values32 != NULL : host->csr.values64 != NULL);
            assert_true(int64_columns ? host->csr.columns64 != NULL : host->csr.columns32 != NULL);
            spart_regridder *device = to_device(f, host);
            char what[64];
            snprintf(what, sizeof what, "float%d values, int%d columns", float32 ? 32 : 64,
                     int64_columns ? 64 : 32);
            (void)assert_device_equals_host(f, host, device, 1, 12, what);
            spart_regridder_free(device);
            spart_regridder_free(host);
        }
    }
}

static void every_group_size_equals_the_host(void **state)
{
    fixture *f = *state;
    /* Mean lengths that give g = 1, 2, 4, 8, 16 and 32. */
    const int64_t means[] = {1, 3, 6, 12, 24, 100};
    int seen = 0;
    for (size_t m = 0; m < sizeof means / sizeof means[0]; m++) {
        spart_regridder *host = random_regridder(f->context, 3000, 4000, means[m], 0, 0, 20 + m);
        seen |= host->plan.group_size;
        spart_regridder *device = to_device(f, host);
        char what[64];
        snprintf(what, sizeof what, "group size %d", host->plan.group_size);
        (void)assert_device_equals_host(f, host, device, 1, 30 + m, what);
        (void)assert_device_equals_host(f, host, device, 5, 40 + m, what);
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
    assert_int_equal(seen, 1 | 2 | 4 | 8 | 16 | 32);
}

static void batches_of_1_3_8_33_equal_the_host_and_each_column_alone(void **state)
{
    fixture *f = *state;
    for (int types = 0; types < 4; types++) {
        const int float32 = types & 1, int64_columns = types >> 1;
        spart_regridder *host =
            random_regridder(f->context, 4000, 3000, 20, float32, int64_columns, 50 + types);
        spart_regridder *device = to_device(f, host);
        const int64_t widths[] = {1, 3, 8, 33};
        for (size_t w = 0; w < 4; w++) {
            int64_t width = widths[w];
            spart_shape shape = {2, {width, 3000}};
            double *x = spread_values(width * 3000, 60 + w);
            double *batch = device_product(f, device, x, shape);
            double *expected = host_product(f, host, x, shape);
            assert_same_bits(batch, expected, width * 4000, "batch against the host");
            for (int64_t t = 0; t < width; t++) {
                spart_shape one = {1, {3000}};
                double *alone = device_product(f, device, x + t * 3000, one);
                assert_same_bits(batch + t * 4000, alone, 4000, "a column alone against the batch");
                free(alone);
            }
            free(x);
            free(batch);
            free(expected);
        }
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
}

/* The product of one batch in tiles (x of 8 MiB or more, so
 * x_tiles_needed in src/operator/regridder_device.c holds) against the host, and
 * each fourth column alone against the batch. */
static void assert_batch_in_tiles_equals_the_host(fixture *f, const spart_regridder *host,
                                                  const spart_regridder *device, int64_t width,
                                                  uint64_t seed, const char *what)
{
    const int64_t rows = host->csr.num_rows, columns = host->csr.num_columns;
    assert_true((double)columns * width * 8 >= 8.0 * 1024 * 1024);
    spart_shape shape = {2, {width, columns}};
    double *x = spread_values(width * columns, seed);
    double *batch = device_product(f, device, x, shape);
    double *expected = host_product(f, host, x, shape);
    assert_same_bits(batch, expected, width * rows, what);
    spart_shape one = {1, {columns}};
    for (int64_t t = 0; t < width; t += 4) {
        double *alone = device_product(f, device, x + t * columns, one);
        assert_same_bits(batch + t * rows, alone, rows, "a column alone against the batch");
        free(alone);
    }
    free(x);
    free(batch);
    free(expected);
}

/* Batches whose x fills 8 MiB or more (150000 columns, 8 and 13 vectors)
 * are copied into tiles of 8 interleaved vectors before the product
 * (x_tiles_needed in src/operator/regridder_device.c; 13 leaves the second tile 3
 * vectors of padding), summed by the kernels of short rows in tiles
 * (kernels/csr_product_tiles.cu; a long row by its chunks) or, over rows
 * of 64 entries or more, by row groups: the same bits as the host for every
 * value and column type, every group size (rows of 1 to 100 entries on
 * average; 2001 rows leave the last warp's rows partly past the end) and
 * with a long row, and each column alone. */
static void batches_read_in_tiles_equal_the_host(void **state)
{
    fixture *f = *state;
    const int64_t rows = 2001, columns = 150000;
    for (int types = 0; types < 4; types++) {
        const int float32 = types & 1, int64_columns = types >> 1;
        spart_regridder *host =
            random_regridder(f->context, rows, columns, 40, float32, int64_columns, 70 + types);
        spart_regridder *device = to_device(f, host);
        assert_batch_in_tiles_equals_the_host(f, host, device, 8, 80, "tiles, 8 vectors");
        assert_batch_in_tiles_equals_the_host(f, host, device, 13, 81, "tiles, 13 vectors");
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
    /* Mean lengths that give g = 1, 2, 4, 8, 16 and 32. */
    const int64_t means[] = {1, 3, 6, 12, 24, 100};
    int seen = 0;
    for (size_t m = 0; m < sizeof means / sizeof means[0]; m++) {
        spart_regridder *host = random_regridder(f->context, rows, columns, means[m], 0, 0, 90 + m);
        seen |= host->plan.group_size;
        spart_regridder *device = to_device(f, host);
        char what[64];
        snprintf(what, sizeof what, "tiles, group size %d", host->plan.group_size);
        assert_batch_in_tiles_equals_the_host(f, host, device, 8, 100 + m, what);
        assert_batch_in_tiles_equals_the_host(f, host, device, 13, 110 + m, what);
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
    assert_int_equal(seen, 1 | 2 | 4 | 8 | 16 | 32);
    int64_t *lengths = random_lengths(rows, 12, 120);
    lengths[5] = 2 * SPART_CHUNK_LENGTH + 3;
    spart_regridder *host = csr_regridder(f->context, rows, columns, lengths, 0, 0, 121);
    free(lengths);
    spart_regridder *device = to_device(f, host);
    assert_int_equal(device->device.num_long_rows, 1);
    assert_batch_in_tiles_equals_the_host(f, host, device, 8, 122, "tiles, a long row");
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* Tiles of 8 vectors over short rows take kernels of their own: rows of
 * at most g entries (g = 2, 4, 8, 16: rows_fit_one_round) a thread a row
 * and pair of vectors from entries staged in shared memory
 * (product_tiles_by_thread), rows of 32 to 64 entries at g = 32 a row at a
 * time with the next row's loads in flight (product_tiles_pipelined).
 * Around the rows that fit: shorter and empty rows, one warp's worth of
 * rows that do not fit (summed by quads of lanes), a partial last warp,
 * a row whose every term is -0.0 (its sum is +0.0 only if each lane
 * starts from +0.0), and, in a second pass, three long rows (summed by
 * their chunks, the kernels above leaving them out). The host's bits, 8
 * and 13 vectors, each column alone. */
static void tiles_of_short_rows_equal_the_host(void **state)
{
    fixture *f = *state;
    const int64_t rows = 3000 * 32 + 13, columns = 150000, zero_row = 77;
    int seen = 0;
    for (int pass = 0; pass < 10; pass++) {
        const int g = 2 << (pass % 5), with_long_rows = pass >= 5;
        int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
        uint64_t draw = 290 + (uint64_t)g;
        for (int64_t r = 0; r < rows; r++) {
            if (g < 32) {
                lengths[r] = r % 41 == 5 ? (int64_t)(next_uniform(&draw) * (double)g) : g;
            } else {
                lengths[r] = r % 41 == 5 ? 0 : 32 + (int64_t)(next_uniform(&draw) * 33.0);
            }
        }
        for (int64_t r = rows - 40; r < rows; r++) {
            lengths[r] = 0; /* the last rows empty: their bounds are the matrix's end */
        }
        /* The rows of one warp that do not fit. For g < 32 they also make
         * up for the shorter rows, so that the mean is g and a thirty-second
         * (the plan then keeps g, and rows_fit_one_round holds). */
        int64_t missing = 0;
        for (int64_t r = 0; r < rows; r++) {
            missing += r >= 64 * 32 && r < 65 * 32 ? 0 : g - lengths[r];
        }
        for (int64_t r = 64 * 32; r < 65 * 32; r++) {
            lengths[r] =
                g < 32 ? g + 1 + missing / 32 + (r == 64 * 32 ? missing % 32 : 0) : 65 + r % 7;
        }
        if (with_long_rows) {
            /* 4, 3 and 18 chunks: summed apart, the others around them as
             * without (the long rows add about one entry to the mean). */
            lengths[5000] = 3 * SPART_CHUNK_LENGTH + 5;
            lengths[6000] = 2 * SPART_CHUNK_LENGTH + 1;
            lengths[7000] = 18 * SPART_CHUNK_LENGTH - 1;
        }
        spart_regridder *host =
            csr_regridder(f->context, rows, columns, lengths, g == 4, g == 8, draw);
        free(lengths);
        double *x = spread_values(columns * 13, 300 + (uint64_t)g);
        make_terms_negative_zero(&host->csr, zero_row, x);
        free(x);
        const spart_csr *csr = &host->csr;
        assert_int_equal(host->plan.group_size, g);
        const int64_t long_room = with_long_rows ? 25 * SPART_CHUNK_LENGTH : 0;
        assert_true(g == 32 ? csr->num_entries - long_room < 64 * (rows - 3 * with_long_rows)
                            : csr->num_entries - long_room <= g * rows + rows / 32);
        seen |= g;
        spart_regridder *device = to_device(f, host);
        assert_int_equal(device->device.num_long_rows, with_long_rows ? 3 : 0);
        char what[64];
        snprintf(what, sizeof what, "tiles, short rows, group size %d%s", g,
                 with_long_rows ? ", long rows" : "");
        assert_batch_in_tiles_equals_the_host(f, host, device, 8, 300 + (uint64_t)g, what);
        assert_batch_in_tiles_equals_the_host(f, host, device, 13, 310 + (uint64_t)g, what);
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
    assert_int_equal(seen, 2 | 4 | 8 | 16 | 32);
}

/* Weights with one orthogonal axis of 3 and x with a declared batch axis of
 * 5 in front of it (role 1 M M), plus a leading axis of 2: the pack and
 * unpack kernels follow the axis maps. */
static void declared_batch_axes_equal_the_host(void **state)
{
    fixture *f = *state;
    const spart_shape orthogonal = {1, {3}}, input = {3, {3, 4, 5}}, output = {2, {3, 6}};
    const int axes_input[] = {1, 2}, axes_output[] = {1};
    const int64_t per_element = 29;
    int64_t offsets[4], in[3 * 29], out[3 * 29];
    double values[3 * 29];
    uint64_t rng = 9;
    for (int e = 0; e <= 3; e++) {
        offsets[e] = e * per_element;
    }
    for (int64_t k = 0; k < 3 * per_element; k++) {
        in[k] = (int64_t)(next_uniform(&rng) * 20.0);
        out[k] = (int64_t)(next_uniform(&rng) * 6.0);
        values[k] = spread_value(&rng);
    }
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &input, &output, 2,
                                                      axes_input, 1, axes_output, offsets, in, out,
                                                      values, &weights),
                     SPART_OK);
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = (spart_shape){4, {5, 3, 4, 5}};
    options.has_shape_output = 1;
    options.shape_output = (spart_shape){3, {5, 3, 6}};
    spart_regridder *host = NULL;
    assert_int_equal(spart_regridder_create(f->context, weights, &options, &host), SPART_OK);
    assert_int_equal(host->input.num_batch, 5);
    spart_regridder *device = to_device(f, host);
    (void)assert_device_equals_host(f, host, device, 1, 70, "declared batch axis");
    (void)assert_device_equals_host(f, host, device, 2, 71, "declared batch axis and leading axis");
    spart_regridder_free(device);
    spart_regridder_free(host);
    spart_weights_free(weights);
}

/* ---- setup and main ---------------------------------------------------------------------- */

#define TEST(name) cmocka_unit_test(name)

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    /* SPART_CUDA_TEST_SKIP=pattern leaves out the tests it matches (cmocka's
     * wildcards), e.g. the 16 GiB one under compute-sanitizer. */
    const char *skip_pattern = getenv("SPART_CUDA_TEST_SKIP");
    if (skip_pattern != NULL && skip_pattern[0] != '\0') {
        cmocka_set_skip_filter(skip_pattern);
    }
    const struct CMUnitTest tests[] = {
        TEST(every_value_and_column_type_equals_the_host),
        TEST(every_group_size_equals_the_host),
        TEST(batches_of_1_3_8_33_equal_the_host_and_each_column_alone),
        TEST(batches_read_in_tiles_equal_the_host),
        TEST(tiles_of_short_rows_equal_the_host),
        TEST(declared_batch_axes_equal_the_host),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
