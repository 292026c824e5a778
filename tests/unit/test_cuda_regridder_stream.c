/*
 * tests/unit/test_cuda_regridder_stream.c: the streaming assembly on a
 * CUDA device (spart_regridder_create_streamed with on_device = 1): the
 * same CSR arrays, plan and long-row table bit for bit as the in-memory
 * assembly on the host (spart_regridder_create) and on the device
 * (spart_regridder_create_device), and the same products, with budgets
 * that force many blocks, empty blocks, rows shared by blocks and
 * elements, rows longer than a chunk, blocks in host or device memory;
 * the device memory the call takes, sampled with cudaMemGetInfo during the
 * passes, under the budget; a budget too small, a block that changes
 * between the passes and a bad index refused. Label cuda: exit 77 without
 * a device (a failure under SPART_REQUIRE_GPU=1). SPART_STREAM_SMALL set:
 * smaller cases and no memory test (2 million entries), for the
 * sanitizers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_cuda_util.h"
#include "test_stream_util.h"

#define PLENTY ((size_t)1 << 34)

/* The in-memory regridders of the host and the device, and the streamed
 * one from blocks of block_entries (empty_between empty blocks after each),
 * all the same. */
static void streamed_equals_both_in_memory(fixture *f, const spart_weights *weights,
                                           const spart_regridder_options *options,
                                           int64_t block_entries, int empty_between,
                                           const char *what)
{
    spart_context *context = f->context;
    spart_regridder *host = NULL, *device = NULL, *streamed = NULL;
    assert_int_equal(spart_regridder_create(context, weights, options, &host), SPART_OK);
    if (spart_regridder_create_device(context, weights, options, &device) != SPART_OK) {
        fail_msg("%s: create_device: %s", what, spart_context_error(context));
    }
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, block_entries, empty_between, &blocks, &stream);
    spart_stream_report report;
    if (spart_regridder_create_streamed(context, &stream, options, 1, PLENTY, &streamed, &report) !=
        SPART_OK) {
        fail_msg("%s: %s", what, spart_context_error(context));
    }
    assert_int_equal(spart_regridder_cuda_device(streamed), 0);
    uint64_t from_stream = assert_same_csr(context, host, streamed, what);
    uint64_t from_device = assert_same_csr(context, host, device, what);
    assert_true(from_stream == from_device);
    assert_same_products(context, host, streamed, 17, what);
    assert_int_equal(blocks.calls, 2 * stream.num_blocks);
    assert_int_equal(report.num_entries, spart_regridder_num_entries(host));
    assert_true(report.staging_bytes > 0);
    stream_blocks_free(&blocks);
    spart_regridder_free(streamed);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

static void streamed_equals_in_memory_for_many_block_sizes(void **state)
{
    fixture *f = *state;
    spart_weights *weights = stream_weights(f->context, 1, 300);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    const int64_t sizes[] = {301, 1000, 1, 7, 64, 100000};
    size_t count = getenv("SPART_STREAM_SMALL") != NULL ? 2 : sizeof sizes / sizeof sizes[0];
    for (size_t s = 0; s < count; s++) {
        streamed_equals_both_in_memory(f, weights, &options, sizes[s], 0, "float32");
    }
    options = stream_options(SPART_FLOAT64, 1);
    int64_t scale = getenv("SPART_STREAM_SMALL") != NULL ? 10 : 1; /* fewer blocks */
    streamed_equals_both_in_memory(f, weights, &options, 37 * scale, 0, "float64, zeros dropped");
    options = stream_options(SPART_FLOAT32, 1);
    streamed_equals_both_in_memory(f, weights, &options, 50 * scale, 2, "empty blocks");
    streamed_equals_both_in_memory(f, weights, NULL, 29 * scale, 0, "default roles");
    spart_weights_free(weights);
}

static void rows_longer_than_a_chunk_equal_in_memory(void **state)
{
    fixture *f = *state;
    /* 9 elements of up to 40000 entries summed into 4 x 3 rows: rows of
     * about 10^4 entries, two or three chunks each, from many blocks (the
     * sanitizers' runs: up to 12000 entries, rows of one or two chunks) */
    int64_t most = getenv("SPART_STREAM_SMALL") != NULL ? 12000 : 40000;
    spart_weights *weights = stream_weights_sized(f->context, 2, most, 3);
    spart_regridder_options options = stream_options_sized(SPART_FLOAT32, 1, 3);
    streamed_equals_both_in_memory(f, weights, &options, 5000, 1, "long rows");
    spart_weights_free(weights);
}

static void a_stream_without_entries_gives_an_empty_matrix(void **state)
{
    fixture *f = *state;
    spart_weights *weights = stream_weights(f->context, 3, 0);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    streamed_equals_both_in_memory(f, weights, &options, 16, 2, "no entries");
    spart_weights_free(weights);
}

/* Blocks that the test's function copies into device memory first. */
typedef struct device_blocks {
    stream_blocks blocks;
    int64_t *indices_input, *indices_output;
    double *values;
} device_blocks;

static spart_status device_block_function(void *user_data, int64_t block, int pass,
                                          spart_weights_block *result)
{
    device_blocks *d = user_data;
    spart_status status = stream_block_function(&d->blocks, block, pass, result);
    int64_t n = result->num_elements > 0 ? result->offsets[result->num_elements] : 0;
    if (status == SPART_OK && n > 0) {
        check_cuda(cudaMemcpy(d->indices_input, result->indices_input, (size_t)n * sizeof(int64_t),
                              cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        check_cuda(cudaMemcpy(d->indices_output, result->indices_output,
                              (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        check_cuda(cudaMemcpy(d->values, result->values, (size_t)n * sizeof(double),
                              cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        result->indices_input = d->indices_input;
        result->indices_output = d->indices_output;
        result->values = d->values;
    }
    return status;
}

static void blocks_in_device_memory_give_the_same_arrays(void **state)
{
    fixture *f = *state;
    spart_context *context = f->context;
    spart_weights *weights = stream_weights(context, 4, 300);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 1);
    spart_regridder *host = NULL, *streamed = NULL;
    assert_int_equal(spart_regridder_create(context, weights, &options, &host), SPART_OK);
    device_blocks d;
    spart_weights_stream stream;
    stream_blocks_make(weights, 41, 1, &d.blocks, &stream);
    check_cuda(cudaMalloc((void **)&d.indices_input, 41 * sizeof(int64_t)), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&d.indices_output, 41 * sizeof(int64_t)), "cudaMalloc");
    check_cuda(cudaMalloc((void **)&d.values, 41 * sizeof(double)), "cudaMalloc");
    stream.function = device_block_function;
    stream.user_data = &d;
    stream.blocks_on_device = 1;
    if (spart_regridder_create_streamed(context, &stream, &options, 1, PLENTY, &streamed, NULL) !=
        SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    assert_same_csr(context, host, streamed, "blocks on the device");
    /* host memory passed as device blocks is refused, never read */
    spart_regridder *refused = NULL;
    stream.function = stream_block_function;
    stream.user_data = &d.blocks;
    assert_int_equal(
        spart_regridder_create_streamed(context, &stream, &options, 1, PLENTY, &refused, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_null(refused);
    assert_non_null(strstr(spart_context_error(context), "host memory"));
    check_cuda(cudaFree(d.indices_input), "cudaFree");
    check_cuda(cudaFree(d.indices_output), "cudaFree");
    check_cuda(cudaFree(d.values), "cudaFree");
    stream_blocks_free(&d.blocks);
    spart_regridder_free(streamed);
    spart_regridder_free(host);
    spart_weights_free(weights);
}

/* A block function that samples the device's free memory at each call. */
typedef struct sampled_blocks {
    stream_blocks blocks;
    size_t least_free;
} sampled_blocks;

static spart_status sampled_block_function(void *user_data, int64_t block, int pass,
                                           spart_weights_block *result)
{
    sampled_blocks *s = user_data;
    size_t free_bytes = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    if (free_bytes < s->least_free) {
        s->least_free = free_bytes;
    }
    return stream_block_function(&s->blocks, block, pass, result);
}

/* Device memory taken during the passes, by cudaMemGetInfo, under the
 * budget (the call's own count, which counts each allocation in whole
 * 2 MiB pages as cudaMalloc hands them out), with one page to spare; the
 * in-memory device assembly of the same weights would need more than the
 * budget. */
static void device_memory_stays_under_the_budget(void **state)
{
    fixture *f = *state;
    if (getenv("SPART_STREAM_SMALL") != NULL) {
        skip(); /* the sanitizers' runs: small cases only */
    }
    spart_context *context = f->context;
    /* about 2.2 million entries */
    spart_weights *weights = stream_weights_sized(context, 5, 400000, 20000);
    int64_t entries = spart_weights_num_entries(weights);
    spart_regridder_options options = stream_options_sized(SPART_FLOAT32, 0, 20000);
    sampled_blocks s;
    spart_weights_stream stream;
    stream_blocks_make(weights, 65536, 0, &s.blocks, &stream);
    stream.function = sampled_block_function;
    stream.user_data = &s;
    size_t budget = 0;
    assert_int_equal(spart_regridder_stream_bytes(context, &stream, &options, 1, entries, &budget),
                     SPART_OK);
    /* the largest blocks this budget holds: at least these; one entry
     * more does not fit (unless they hold every entry) */
    int64_t largest = 0;
    assert_int_equal(spart_regridder_stream_block_entries(context, &stream, &options, 1, entries,
                                                          budget, &largest),
                     SPART_OK);
    assert_true(largest >= stream.max_block_entries);
    spart_weights_stream trial = stream;
    size_t bytes = 0;
    trial.max_block_entries = largest;
    assert_int_equal(spart_regridder_stream_bytes(context, &trial, &options, 1, entries, &bytes),
                     SPART_OK);
    assert_true(bytes <= budget);
    if (largest < entries) {
        trial.max_block_entries = largest + 1;
        assert_int_equal(
            spart_regridder_stream_bytes(context, &trial, &options, 1, entries, &bytes), SPART_OK);
        assert_true(bytes > budget);
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    size_t free_before = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
    s.least_free = free_before;
    spart_regridder *streamed = NULL;
    spart_stream_report report;
    if (spart_regridder_create_streamed(context, &stream, &options, 1, budget, &streamed,
                                        &report) != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    size_t taken = free_before - s.least_free;
    size_t rounding = (size_t)2 << 20; /* the budget counts whole 2 MiB pages already */
    print_message("entries %lld, budget %zu, counted peak %zu, sampled %zu bytes\n",
                  (long long)entries, budget, report.peak_bytes, taken);
    assert_true(report.peak_bytes <= budget);
    assert_true(taken <= budget + rounding);
    assert_true(taken >= (size_t)entries * 8); /* the result, at least, was held */
    /* the in-memory device assembly takes about 40 bytes an entry besides */
    assert_true(budget < (size_t)entries * 40);
    spart_regridder *host = NULL;
    assert_int_equal(spart_regridder_create(context, weights, &options, &host), SPART_OK);
    assert_same_csr(context, host, streamed, "sampled");
    spart_regridder_free(host);
    spart_regridder_free(streamed);
    stream_blocks_free(&s.blocks);
    spart_weights_free(weights);
}

static void a_budget_too_small_is_refused_before_any_device_work(void **state)
{
    fixture *f = *state;
    spart_weights *weights = stream_weights(f->context, 6, 100);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 10, 0, &blocks, &stream);
    spart_regridder *made = NULL;
    assert_int_equal(
        spart_regridder_create_streamed(f->context, &stream, NULL, 1, 4096, &made, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_null(made);
    assert_non_null(strstr(spart_context_error(f->context), "budget of 4096 bytes"));
    assert_int_equal(blocks.calls, 0);
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

static void changed_blocks_and_bad_indices_are_refused(void **state)
{
    fixture *f = *state;
    const int faults[] = {STREAM_FAULT_MOVE_ROW, STREAM_FAULT_FEWER, STREAM_FAULT_BAD_INDEX};
    const char *words[] = {"the same block", "block 2 holds", "indices_input = 30"};
    for (int k = 0; k < 3; k++) {
        spart_weights *weights = stream_weights(f->context, 7, 300);
        spart_regridder_options options = stream_options(SPART_FLOAT32, 1);
        stream_blocks blocks;
        spart_weights_stream stream;
        stream_blocks_make(weights, 50, 0, &blocks, &stream);
        blocks.fault = faults[k];
        blocks.fault_block = 2;
        spart_regridder *made = NULL;
        assert_int_equal(
            spart_regridder_create_streamed(f->context, &stream, &options, 1, PLENTY, &made, NULL),
            SPART_ERROR_INVALID_ARGUMENT);
        assert_null(made);
        if (strstr(spart_context_error(f->context), words[k]) == NULL) {
            fail_msg("expected \"%s\" in: %s", words[k], spart_context_error(f->context));
        }
        stream_blocks_free(&blocks);
        spart_weights_free(weights);
    }
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    /* SPART_TEST_FILTER: run only the tests whose names match (racecheck) */
    if (getenv("SPART_TEST_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("SPART_TEST_FILTER"));
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(streamed_equals_in_memory_for_many_block_sizes),
        cmocka_unit_test(rows_longer_than_a_chunk_equal_in_memory),
        cmocka_unit_test(a_stream_without_entries_gives_an_empty_matrix),
        cmocka_unit_test(blocks_in_device_memory_give_the_same_arrays),
        cmocka_unit_test(device_memory_stays_under_the_budget),
        cmocka_unit_test(a_budget_too_small_is_refused_before_any_device_work),
        cmocka_unit_test(changed_blocks_and_bad_indices_are_refused),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
