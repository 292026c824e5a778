/*
 * Device products (label `cuda`) on rows of every kind: a row of two million
 * entries (the chunked long-row pass) beside empty rows, rows of several
 * rounds, short rows read through the device's short-row index, rows of at
 * most g entries, an empty operator and a batch of zero vectors, run after
 * run, a golden digest, more than 2^31 columns, inside a CUDA Graph, a round
 * trip, and bad pointers refused with a sentence. Types, group sizes and
 * batches are in test_cuda_product.c.
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

/* One row of two million entries (489 chunks), short rows and empty rows
 * around it, and a second long row of just over one chunk. */
static spart_regridder *long_row_regridder(fixture *f, int float32, int64_t rows, uint64_t seed)
{
    int64_t *lengths = random_lengths(rows, rows > 100000 ? 1 : 8, seed);
    lengths[0] = 0;
    lengths[1234] = 2000000;
    lengths[rows - 1] = SPART_CHUNK_LENGTH + 1;
    lengths[rows - 2] = SPART_CHUNK_LENGTH; /* one full chunk: a short row */
    spart_regridder *host = csr_regridder(f->context, rows, 100000, lengths, float32, 0, seed);
    free(lengths);
    return host;
}

static void a_row_of_two_million_entries_equals_the_host(void **state)
{
    fixture *f = *state;
    /* 3000 rows: g = 32; 400000 rows of about one entry: g = 2. */
    const int64_t row_counts[] = {3000, 400000};
    for (int float32 = 0; float32 <= 1; float32++) {
        for (int c = 0; c < 2; c++) {
            spart_regridder *host = long_row_regridder(f, float32, row_counts[c], 80);
            spart_regridder *device = to_device(f, host);
            assert_int_equal(device->device.num_long_rows, 2);
            assert_int_equal(device->device.num_long_chunks, (2000000 + 4095) / 4096 + 2);
            char what[64];
            snprintf(what, sizeof what, "long rows, group size %d", host->plan.group_size);
            (void)assert_device_equals_host(f, host, device, 1, 81, what);
            (void)assert_device_equals_host(f, host, device, 3, 82, what);
            (void)assert_device_equals_host(f, host, device, 9, 83, what);
            spart_regridder_free(device);
            spart_regridder_free(host);
        }
    }
}

/* The g = 32 cases of the two tests below: `rows` rows of random lengths
 * about `mean` (seeds length_seed + float32 for the lengths, seed +
 * int64_columns for the matrix), for every value and column type, without
 * and with one long row (row long_row of long_length entries). Each case's
 * host regridder, its group size 32, and its device copy go to `check`,
 * with a sentence naming the case. */
typedef void g32_check(fixture *f, spart_regridder *host, spart_regridder *device,
                       int with_long_row, const char *what);

static void for_each_g32_case(fixture *f, int64_t rows, int64_t columns, int64_t mean,
                              int64_t long_row, int64_t long_length, uint64_t length_seed,
                              uint64_t seed, const char *name, g32_check *check)
{
    for (int float32 = 0; float32 <= 1; float32++) {
        for (int int64_columns = 0; int64_columns <= 1; int64_columns++) {
            for (int with_long_row = 0; with_long_row <= 1; with_long_row++) {
                int64_t *lengths = random_lengths(rows, mean, length_seed + (uint64_t)float32);
                if (with_long_row) {
                    lengths[long_row] = long_length;
                }
                spart_regridder *host =
                    csr_regridder(f->context, rows, columns, lengths, float32, int64_columns,
                                  seed + (uint64_t)int64_columns);
                free(lengths);
                assert_int_equal(host->plan.group_size, 32);
                spart_regridder *device = to_device(f, host);
                char what[96];
                snprintf(what, sizeof what, "%s, float%d values, int%d columns%s", name,
                         float32 ? 32 : 64, int64_columns ? 64 : 32,
                         with_long_row ? ", a long row" : "");
                check(f, host, device, with_long_row, what);
                spart_regridder_free(device);
                spart_regridder_free(host);
            }
        }
    }
}

static void check_several_rounds(fixture *f, spart_regridder *host, spart_regridder *device,
                                 int with_long_row, const char *what)
{
    assert_true(host->csr.num_entries > 128 * host->csr.num_rows);
    assert_int_equal(device->device.num_long_rows, with_long_row);
    (void)assert_device_equals_host(f, host, device, 1, 192, what);
    /* 8 vectors as they lie (x of 3.2 MB): one entry a round, g fixed,
     * where there are no long rows. */
    (void)assert_device_equals_host(f, host, device, 8, 193, what);
}

/* Rows of several rounds of eight entries a lane with g = 32 (a mean of
 * about 270 entries: the kernel whose group size is fixed at compile
 * time), for every value and column type, without and with a long row
 * (its chunks in the same launch), equal the host bit for bit, one vector
 * and eight. */
static void rows_of_several_rounds_with_g_32_equal_the_host_for_every_type(void **state)
{
    for_each_g32_case(*state, 2000, 50000, 300, 7, 3 * SPART_CHUNK_LENGTH + 5, 190, 191, "g = 32",
                      check_several_rounds);
}

static void check_one_or_two_a_lane(fixture *f, spart_regridder *host, spart_regridder *device,
                                    int with_long_row, const char *what)
{
    if (!with_long_row) {
        assert_true(host->csr.num_entries >= 32 * host->csr.num_rows);
        assert_true(host->csr.num_entries < 64 * host->csr.num_rows);
    }
    (void)assert_device_equals_host(f, host, device, 1, 232, what);
}

/* Rows of 32 to 63 entries on average (the forward operator of the ctis
 * tutorial has 32): g = 32 with one or two entries a lane, summed four
 * rows a group and two entries a lane per round; rows of up to 80 entries
 * take a second round, a tenth are empty, and one of the matrices has a
 * long row beside them. The host's bits, for every value and column type.
 * 2003 rows: not a whole number of blocks. */
static void rows_of_one_or_two_entries_a_lane_with_g_32_equal_the_host(void **state)
{
    for_each_g32_case(*state, 2003, 30000, 40, 11, 2 * SPART_CHUNK_LENGTH + 3, 230, 231,
                      "g = 32, 32 to 63 a row", check_one_or_two_a_lane);
}

/* Rows of at most 255 entries and g <= 2 (a backprojection's shape): the
 * device copy carries a short-row index (one byte a row), which its
 * one-vector product reads instead of the row pointers, and equals the
 * host bit for bit; with one row of 256 entries it has none, and still
 * equals the host. Several blocks of 256 rows and a partial one, empty
 * rows, a row of exactly 255 entries; g = 1 and g = 2. */
static void short_rows_read_through_the_index_equal_the_host(void **state)
{
    fixture *f = *state;
    const int64_t rows = 40 * 256 + 77;
    int seen = 0;
    for (int64_t longest = 255; longest <= 256; longest++) {
        for (int64_t mean = 1; mean <= 3; mean += 2) {
            int64_t *lengths = random_lengths(rows, mean, 170 + mean);
            lengths[rows / 2] = longest;
            spart_regridder *host =
                csr_regridder(f->context, rows, 5000, lengths, mean == 3, 0, 171 + mean);
            free(lengths);
            assert_true(host->plan.group_size <= 2);
            seen |= host->plan.group_size;
            spart_regridder *device = to_device(f, host);
            assert_int_equal(device->device.short_row_lengths != NULL, longest <= 255);
            char what[80];
            snprintf(what, sizeof what, "rows of at most %lld entries, group size %d",
                     (long long)longest, host->plan.group_size);
            (void)assert_device_equals_host(f, host, device, 1, 172, what);
            (void)assert_device_equals_host(f, host, device, 2, 173, what);
            spart_regridder_free(device);
            spart_regridder_free(host);
        }
    }
    assert_int_equal(seen, 1 | 2);
}

/* Rows of g entries, g = 2, 4, 8 and 16, one thread a row on the device: a
 * row of exactly g entries gives each lane one term fma(v, x, +0.0), and
 * the thread adds them in the lanes' tree. Around them: shorter and empty
 * rows, 32 rows of g + 1 to g + 4 entries (a warp that sums its rows by
 * groups), long rows (chunks, several blocks of them), a partial last
 * warp, and a row whose every term is exactly -0.0 (v = -0.0 where x > 0,
 * +0.0 where x < 0), whose sum is +0.0 only if each lane starts from +0.0. */
static void rows_of_at_most_g_entries_summed_a_thread_a_row_equal_the_host(void **state)
{
    fixture *f = *state;
    /* Enough rows that the long rows leave the mean, and so g, as it is. */
    const int64_t rows = 3000 * 32 + 13, columns = 5000, zero_row = 77;
    const uint64_t x_seed = 191;
    int seen = 0;
    for (int g = 2; g <= 16; g *= 2) {
        int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
        uint64_t draw = 190 + (uint64_t)g;
        for (int64_t r = 0; r < rows; r++) {
            lengths[r] = r % 41 == 5 ? (int64_t)(next_uniform(&draw) * (double)g) : g;
        }
        for (int64_t r = 64 * 32; r < 65 * 32; r++) {
            lengths[r] = g + 1 + r % 4;
        }
        /* Long rows of 4, 3 and 18 chunks: 25 chunks of several lengths,
         * more than one block's 16 / g and, for g < 16, not a multiple of
         * it (the last block has empty chunk slots). float32 values for
         * g = 4, int64 columns for g = 8. */
        lengths[5000] = 3 * SPART_CHUNK_LENGTH + 5;
        lengths[6000] = 2 * SPART_CHUNK_LENGTH + 1;
        lengths[7000] = 18 * SPART_CHUNK_LENGTH - 1;
        spart_regridder *host =
            csr_regridder(f->context, rows, columns, lengths, g == 4, g == 8, draw);
        free(lengths);
        double *x = spread_values(columns, x_seed);
        make_terms_negative_zero(&host->csr, zero_row, x);
        assert_int_equal(host->plan.group_size, g);
        seen |= g;
        spart_shape shape = spart_regridder_shape_input(host);
        double *y = host_product(f, host, x, shape);
        assert_true(y[zero_row] == 0.0 && !signbit(y[zero_row]));
        free(y);
        free(x);
        spart_regridder *device = to_device(f, host);
        assert_int_equal(device->device.num_long_rows, 3);
        assert_int_equal(device->device.num_long_chunks, 4 + 3 + 18);
        char what[64];
        snprintf(what, sizeof what, "rows of %d entries, group size %d", g, g);
        (void)assert_device_equals_host(f, host, device, 1, x_seed, what);
        (void)assert_device_equals_host(f, host, device, 2, x_seed + 1, what);
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
    assert_int_equal(seen, 2 | 4 | 8 | 16);
}

static void an_empty_operator_gives_zeros(void **state)
{
    fixture *f = *state;
    int64_t lengths[5] = {0, 0, 0, 0, 0};
    spart_regridder *host = csr_regridder(f->context, 5, 7, lengths, 0, 0, 90);
    spart_regridder *device = to_device(f, host);
    spart_shape shape = {2, {3, 7}};
    double *x = spread_values(21, 91);
    double *y = device_product(f, device, x, shape);
    for (int k = 0; k < 15; k++) {
        assert_true(y[k] == 0.0 && !signbit(y[k]));
    }
    (void)assert_device_equals_host(f, host, device, 1, 92, "empty operator");
    free(x);
    free(y);
    spart_regridder_free(device);
    spart_regridder_free(host);
    /* No rows at all, and no columns at all. */
    spart_regridder *no_rows = csr_regridder(f->context, 0, 7, lengths, 0, 0, 93);
    device = to_device(f, no_rows);
    (void)assert_device_equals_host(f, no_rows, device, 4, 94, "no rows");
    spart_regridder_free(device);
    spart_regridder_free(no_rows);
    spart_regridder *no_columns = csr_regridder(f->context, 5, 0, lengths, 1, 0, 95);
    device = to_device(f, no_columns);
    (void)assert_device_equals_host(f, no_columns, device, 1, 96, "no columns");
    (void)assert_device_equals_host(f, no_columns, device, 2, 97, "no columns, two vectors");
    spart_regridder_free(device);
    spart_regridder_free(no_columns);
}

static void a_batch_of_zero_vectors_does_nothing(void **state)
{
    fixture *f = *state;
    spart_regridder *host = random_regridder(f->context, 100, 50, 4, 0, 0, 100);
    spart_regridder *device = to_device(f, host);
    spart_shape shape = {2, {0, 50}};
    size_t bytes = 1;
    assert_int_equal(spart_regridder_workspace_size(f->context, device, &shape, &bytes), SPART_OK);
    assert_int_equal(bytes, 0);
    spart_array xa = {NULL, shape};
    double *y = device_poisoned(1);
    assert_int_equal(spart_regridder_apply(f->context, device, &xa, y, 0), SPART_OK);
    double *back = copy_back(y, 1);
    uint64_t bits = 0;
    memcpy(&bits, back, sizeof bits);
    assert_true(bits == UINT64_MAX); /* untouched */
    free(back);
    check_cuda(cudaFree(y), "cudaFree");
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* A product checked again and again: x (spread values of `seed`, `shape`
 * as the product reads it), the host's product of it, x on the device and
 * a poisoned y of n values there. */
typedef struct product_case {
    double *x, *expected, *x_device, *y_device;
} product_case;

static product_case make_product_case(fixture *f, const spart_regridder *host, spart_shape shape,
                                      int64_t n, uint64_t seed)
{
    product_case c;
    int64_t size = spart_shape_size(&shape);
    c.x = spread_values(size, seed);
    c.expected = host_product(f, host, c.x, shape);
    c.x_device = device_copy(c.x, size);
    c.y_device = device_poisoned(n);
    return c;
}

static void free_product_case(product_case *c)
{
    check_cuda(cudaFree(c->x_device), "cudaFree");
    check_cuda(cudaFree(c->y_device), "cudaFree");
    free(c->x);
    free(c->expected);
}

static void one_hundred_runs_give_the_same_bits(void **state)
{
    fixture *f = *state;
    spart_regridder *host = long_row_regridder(f, 1, 3000, 110);
    spart_regridder *device = to_device(f, host);
    spart_shape shape = {2, {8, 100000}};
    int64_t n = 8 * 3000;
    product_case c = make_product_case(f, host, shape, n, 111);
    spart_array xa = {c.x_device, shape};
    uint64_t first = digest_doubles(c.expected, n);
    for (int run = 0; run < 100; run++) {
        check_cuda(cudaMemset(c.y_device, 0xff, (size_t)n * sizeof(double)), "cudaMemset");
        assert_int_equal(spart_regridder_apply(f->context, device, &xa, c.y_device, n), SPART_OK);
        double *y = copy_back(c.y_device, n);
        if (digest_doubles(y, n) != first) {
            assert_same_bits(y, c.expected, n, "a repeated run");
        }
        free(y);
    }
    free_product_case(&c);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* The digest of one fixed product, the same on every machine, host or
 * device (its value was computed by the host product, spart 0.1.0). */
static void golden_digest_of_a_fixed_product(void **state)
{
    fixture *f = *state;
    spart_regridder *host = random_regridder(f->context, 20000, 5000, 12, 1, 0, 120);
    spart_regridder *device = to_device(f, host);
    uint64_t result = assert_device_equals_host(f, host, device, 3, 121, "golden product");
    assert_true(result == UINT64_C(0x709d322db549fac8));
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* int64 columns for real: a matrix of 2^31 + 8 columns (x of 16 GiB on the
 * device) with a few entries at both ends. The host reference is the same
 * matrix with its columns renumbered compactly: the same values times the
 * same x values in the same order. */
static void more_than_two_to_the_31_columns(void **state)
{
    fixture *f = *state;
    const int64_t big = ((int64_t)1 << 31) + 8;
    size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (free_bytes < (size_t)big * sizeof(double) + ((size_t)2 << 30)) {
        skip(); /* a smaller device: the internal int64 path is tested above */
    }
    int64_t lengths[4] = {5, 0, 9000, 3};
    spart_regridder *compact = csr_regridder(f->context, 4, 64, lengths, 0, 1, 130);
    spart_regridder *host = csr_regridder(f->context, 4, 64, lengths, 0, 1, 130);
    /* Compact column c < 32 stays; c >= 32 moves to the top of the range. */
    host->csr.num_columns = big;
    host->input.shape.dims[0] = big;
    for (int64_t k = 0; k < host->csr.num_entries; k++) {
        int64_t c = host->csr.columns64[k];
        host->csr.columns64[k] = c < 32 ? c : big - 64 + c;
    }
    double *x_compact = spread_values(64, 131);
    double *expected = host_product(f, compact, x_compact, (spart_shape){1, {64}});
    spart_regridder *device = to_device(f, host);
    assert_non_null(device->csr.columns64);
    double *x_device = device_alloc((size_t)big * sizeof(double));
    check_cuda(cudaMemset(x_device, 0, (size_t)big * sizeof(double)), "cudaMemset");
    check_cuda(cudaMemcpy(x_device, x_compact, 32 * sizeof(double), cudaMemcpyHostToDevice),
               "cudaMemcpy");
    check_cuda(cudaMemcpy(x_device + big - 32, x_compact + 32, 32 * sizeof(double),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy");
    double *y_device = device_poisoned(4);
    spart_array xa = {x_device, {1, {big}}};
    assert_int_equal(spart_regridder_apply(f->context, device, &xa, y_device, 4), SPART_OK);
    double *got = copy_back(y_device, 4);
    assert_same_bits(got, expected, 4, "2^31 + 8 columns");
    check_cuda(cudaFree(x_device), "cudaFree");
    check_cuda(cudaFree(y_device), "cudaFree");
    free(got);
    free(expected);
    free(x_compact);
    spart_regridder_free(device);
    spart_regridder_free(host);
    spart_regridder_free(compact);
}

/* Captures y = A x (apply_workspace on the context's stream) in a CUDA
 * graph on a stream of its own, then replays the graph `launches` times,
 * y poisoned before each: every replay must give `expected`, bit for bit. */
static void assert_replayed_graph_gives(fixture *f, const spart_regridder *device,
                                        const spart_array *x, double *y_device, int64_t n,
                                        void *workspace, size_t bytes, const double *expected,
                                        int launches, const char *what)
{
    cudaStream_t stream = NULL;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    assert_int_equal(spart_context_set_cuda_stream(f->context, stream), SPART_OK);
    check_cuda(cudaDeviceSynchronize(), "the copies before the capture");
    cudaGraph_t graph = NULL;
    check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
    spart_status status =
        spart_regridder_apply_workspace(f->context, device, x, y_device, n, workspace, bytes);
    check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
    assert_int_equal(status, SPART_OK);
    cudaGraphExec_t exec = NULL;
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int launch = 0; launch < launches; launch++) {
        check_cuda(cudaMemsetAsync(y_device, 0xff, (size_t)n * sizeof(double), stream),
                   "cudaMemsetAsync");
        check_cuda(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        check_cuda(cudaStreamSynchronize(stream), "the graph");
        double *got = copy_back(y_device, n);
        assert_same_bits(got, expected, n, what);
        free(got);
    }
    assert_int_equal(spart_context_set_cuda_stream(f->context, NULL), SPART_OK);
    check_cuda(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    check_cuda(cudaGraphDestroy(graph), "cudaGraphDestroy");
    check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

static void the_product_can_be_captured_in_a_cuda_graph(void **state)
{
    fixture *f = *state;
    spart_regridder *host = long_row_regridder(f, 0, 3000, 140);
    spart_regridder *device = to_device(f, host);
    spart_shape shape = {2, {3, 100000}};
    int64_t n = 3 * 3000;
    product_case c = make_product_case(f, host, shape, n, 141);
    size_t bytes = 0;
    assert_int_equal(spart_regridder_workspace_size(f->context, device, &shape, &bytes), SPART_OK);
    assert_true(bytes > 0);
    void *workspace = device_alloc(bytes);
    spart_array xa = {c.x_device, shape};
    assert_replayed_graph_gives(f, device, &xa, c.y_device, n, workspace, bytes, c.expected, 2,
                                "the graph's product");
    check_cuda(cudaFree(workspace), "cudaFree");
    free_product_case(&c);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* One vector, rows of about g = 2 entries (a thread a row) and two long
 * rows (chunk sums in the workspace): a workspace full of 0xff bytes,
 * used again, and the same captured graph replayed give the host's bits
 * every time. */
static void long_rows_in_a_dirty_workspace_repeat_in_a_graph(void **state)
{
    fixture *f = *state;
    const int64_t rows = 40000, columns = 5000;
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    for (int64_t r = 0; r < rows; r++) {
        lengths[r] = 2;
    }
    lengths[100] = 3 * SPART_CHUNK_LENGTH + 7;
    lengths[20000] = 5 * SPART_CHUNK_LENGTH;
    spart_regridder *host = csr_regridder(f->context, rows, columns, lengths, 0, 0, 170);
    free(lengths);
    assert_int_equal(host->plan.group_size, 2);
    spart_regridder *device = to_device(f, host);
    assert_int_equal(device->device.num_long_rows, 2);
    spart_shape shape = {1, {columns}};
    product_case c = make_product_case(f, host, shape, rows, 171);
    size_t bytes = 0;
    assert_int_equal(spart_regridder_workspace_size(f->context, device, &shape, &bytes), SPART_OK);
    assert_true(bytes >= 9 * sizeof(double));
    void *workspace = device_alloc(bytes);
    check_cuda(cudaMemset(workspace, 0xff, bytes), "cudaMemset");
    spart_array xa = {c.x_device, shape};
    for (int call = 0; call < 2; call++) {
        assert_int_equal(spart_regridder_apply_workspace(f->context, device, &xa, c.y_device, rows,
                                                         workspace, bytes),
                         SPART_OK);
        double *got = copy_back(c.y_device, rows);
        assert_same_bits(got, c.expected, rows, "one vector, long rows, a reused workspace");
        free(got);
    }
    check_cuda(cudaMemset(workspace, 0xff, bytes), "cudaMemset");
    assert_replayed_graph_gives(f, device, &xa, c.y_device, rows, workspace, bytes, c.expected, 3,
                                "one vector, long rows, the graph replayed");
    check_cuda(cudaFree(workspace), "cudaFree");
    free_product_case(&c);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

static void a_round_trip_through_the_device_keeps_the_arrays(void **state)
{
    fixture *f = *state;
    spart_regridder *host = long_row_regridder(f, 1, 3000, 150);
    spart_regridder *device = to_device(f, host);
    spart_regridder *again = to_device(f, device); /* device to device */
    spart_regridder *back = NULL;
    assert_int_equal(spart_regridder_to_host(f->context, again, &back), SPART_OK);
    assert_int_equal(spart_regridder_cuda_device(back), -1);
    assert_int_equal(back->csr.num_entries, host->csr.num_entries);
    assert_memory_equal(back->csr.row_ptr, host->csr.row_ptr,
                        (size_t)(host->csr.num_rows + 1) * sizeof(int64_t));
    assert_memory_equal(back->csr.columns32, host->csr.columns32,
                        (size_t)host->csr.num_entries * sizeof(int32_t));
    assert_memory_equal(back->csr.values32, host->csr.values32,
                        (size_t)host->csr.num_entries * sizeof(float));
    assert_int_equal(back->plan.group_size, host->plan.group_size);
    (void)assert_device_equals_host(f, back, again, 2, 151, "after a round trip");
    spart_regridder_free(back);
    spart_regridder_free(again);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

static void host_memory_and_host_only_work_are_refused_with_a_sentence(void **state)
{
    fixture *f = *state;
    spart_regridder *host = random_regridder(f->context, 100, 50, 4, 0, 0, 160);
    spart_regridder *device = to_device(f, host);
    double x[50] = {0}, y[100];
    double *y_device = device_poisoned(100);
    spart_array host_x = {x, {1, {50}}};
    assert_int_equal(spart_regridder_apply(f->context, device, &host_x, y_device, 100),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "x->data is host memory"));
    double *x_device = device_copy(x, 50);
    spart_array device_x = {x_device, {1, {50}}};
    assert_int_equal(spart_regridder_apply(f->context, device, &device_x, y, 100),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "y is host memory"));
    /* No workspace for one vector, nor for vectors of leading axes (read
     * and written as they lie) without long rows. */
    spart_array batch = {x_device, {2, {1, 50}}};
    char small[64];
    assert_int_equal(spart_regridder_apply_workspace(f->context, device, &batch, y_device, 100,
                                                     small, sizeof small),
                     SPART_OK);
    double *x2 = device_alloc(100 * sizeof(double));
    spart_array two = {x2, {2, {2, 50}}};
    double *y2 = device_poisoned(200);
    size_t bytes = 1;
    assert_int_equal(spart_regridder_workspace_size(f->context, device, &two.shape, &bytes),
                     SPART_OK);
    assert_int_equal(bytes, 0);
    /* A workspace too small, or in host memory, where long rows need one
     * (their chunk sums). */
    int64_t lengths[100];
    for (int r = 0; r < 100; r++) {
        lengths[r] = r == 7 ? SPART_CHUNK_LENGTH + 1 : 3;
    }
    spart_regridder *long_host = csr_regridder(f->context, 100, 50, lengths, 0, 0, 161);
    spart_regridder *long_device = to_device(f, long_host);
    assert_int_equal(spart_regridder_workspace_size(f->context, long_device, &two.shape, &bytes),
                     SPART_OK);
    assert_true(bytes > sizeof small);
    assert_int_equal(spart_regridder_apply_workspace(f->context, long_device, &two, y2, 200, small,
                                                     sizeof small),
                     SPART_ERROR_INVALID_ARGUMENT);
    void *host_workspace = malloc(bytes);
    assert_int_equal(spart_regridder_apply_workspace(f->context, long_device, &two, y2, 200,
                                                     host_workspace, bytes),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "the workspace is host memory"));
    free(host_workspace);
    spart_regridder_free(long_device);
    spart_regridder_free(long_host);
    /* Saving needs the host (transposes run on the device: test_cuda_transpose). */
    assert_int_equal(spart_regridder_save(f->context, device, "never-written.fits", 1),
                     SPART_ERROR_NOT_IMPLEMENTED);
    assert_non_null(strstr(spart_context_error(f->context), "spart_regridder_to_host"));
    check_cuda(cudaDeviceSynchronize(), "nothing went wrong on the device");
    check_cuda(cudaFree(x2), "cudaFree");
    check_cuda(cudaFree(y2), "cudaFree");
    check_cuda(cudaFree(x_device), "cudaFree");
    check_cuda(cudaFree(y_device), "cudaFree");
    spart_regridder_free(device);
    spart_regridder_free(host);
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
        TEST(a_row_of_two_million_entries_equals_the_host),
        TEST(rows_of_several_rounds_with_g_32_equal_the_host_for_every_type),
        TEST(rows_of_one_or_two_entries_a_lane_with_g_32_equal_the_host),
        TEST(short_rows_read_through_the_index_equal_the_host),
        TEST(rows_of_at_most_g_entries_summed_a_thread_a_row_equal_the_host),
        TEST(an_empty_operator_gives_zeros),
        TEST(a_batch_of_zero_vectors_does_nothing),
        TEST(one_hundred_runs_give_the_same_bits),
        TEST(golden_digest_of_a_fixed_product),
        TEST(more_than_two_to_the_31_columns),
        TEST(the_product_can_be_captured_in_a_cuda_graph),
        TEST(long_rows_in_a_dirty_workspace_repeat_in_a_graph),
        TEST(a_round_trip_through_the_device_keeps_the_arrays),
        TEST(host_memory_and_host_only_work_are_refused_with_a_sentence),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
