/*
 * tests/unit/test_regridder_stream.c: the streaming assembly on the host
 * (spart_regridder_create_streamed, include/spart/regridder.h): the same
 * CSR arrays bit for bit as spart_regridder_create for any block size,
 * with empty blocks, rows shared by many blocks and elements, float32 and
 * float64, dropped zeros; the index check on several threads; the memory
 * it holds, counted by the context's
 * allocator, under the budget; a budget too small for the cursors or for
 * the result refused with a sentence; blocks that change between the
 * passes, bad indices, blocks out of order or too large refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "operator/csr_assemble_stream.h"
#include "test_util.h"
#include "test_stream_util.h"

#define PLENTY ((size_t)1 << 30)

/* Stream `weights` in blocks of block_entries and compare with the
 * in-memory assembly; returns the report. */
static spart_stream_report stream_and_compare(spart_context *context, const spart_weights *weights,
                                              const spart_regridder_options *options,
                                              int64_t block_entries, int empty_between)
{
    spart_regridder *reference = NULL, *streamed = NULL;
    assert_int_equal(spart_regridder_create(context, weights, options, &reference), SPART_OK);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, block_entries, empty_between, &blocks, &stream);
    spart_stream_report report;
    spart_status status =
        spart_regridder_create_streamed(context, &stream, options, 0, PLENTY, &streamed, &report);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    assert_same_host_csr(reference, streamed);
    assert_int_equal(blocks.calls, 2 * stream.num_blocks); /* each block once a pass */
    assert_int_equal(report.num_blocks, stream.num_blocks);
    assert_int_equal(report.num_entries_read, spart_weights_num_entries(weights));
    assert_int_equal(report.num_entries, spart_regridder_num_entries(reference));
    stream_blocks_free(&blocks);
    spart_regridder_free(reference);
    spart_regridder_free(streamed);
    return report;
}

static void streamed_equals_memory_for_any_block_size(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 1, 300);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    const int64_t sizes[] = {1, 2, 7, 64, 301, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        stream_and_compare(context, weights, &options, sizes[s], 0);
    }
    spart_weights_free(weights);
}

static void streamed_equals_memory_in_float64_with_dropped_zeros(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 2, 500);
    spart_regridder_options options = stream_options(SPART_FLOAT64, 1);
    stream_and_compare(context, weights, &options, 37, 0);
    options = stream_options(SPART_FLOAT64, 0);
    stream_and_compare(context, weights, &options, 37, 0);
    spart_weights_free(weights);
}

static void empty_blocks_change_nothing(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 3, 200);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 1);
    stream_and_compare(context, weights, &options, 50, 1);
    stream_and_compare(context, weights, &options, 50, 3);
    spart_weights_free(weights);
}

static void a_stream_without_entries_gives_an_empty_matrix(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 4, 0);
    assert_int_equal(spart_weights_num_entries(weights), 0);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    stream_and_compare(context, weights, &options, 16, 2);
    spart_weights_free(weights);
}

static void the_default_roles_give_the_same_arrays(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 5, 300);
    stream_and_compare(context, weights, NULL, 29, 0);
    spart_weights_free(weights);
}

/* Blocks large enough to be walked by several threads (each owning a
 * range of rows) give the same arrays for 1, 2 and 3 threads. */
static void threads_give_the_same_arrays(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights_sized(context, 12, 60000, 40);
    spart_regridder_options options = stream_options_sized(SPART_FLOAT32, 1, 40);
    assert_true(spart_weights_num_entries(weights) > 2 * 70000);
    for (int threads = 1; threads <= 3; threads++) {
        assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
        stream_and_compare(context, weights, &options, 70000, 0);
    }
    assert_int_equal(spart_context_set_threads(context, 0), SPART_OK);
    spart_weights_free(weights);
}

/* The index check of a large block on several threads names the first
 * bad entry of the block, not the first one a thread happens to meet,
 * and a block with a bad entry counts nothing. */
static void the_first_bad_entry_is_named_on_any_threads(void **state)
{
    (void)state;
    enum { n = 200000 };
    int64_t *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    double *values = calloc(n, sizeof *values);
    int64_t *cursor = calloc(11, sizeof *cursor);
    assert_non_null(in);
    assert_non_null(out);
    assert_non_null(values);
    assert_non_null(cursor);
    for (int64_t k = 0; k < n; k++) {
        out[k] = k % 10;
        values[k] = 1.0;
    }
    in[150001] = 7;   /* cells_input is 5: bad */
    out[170000] = -1; /* bad, later */
    int64_t offsets[2] = {0, n}, zero[1] = {0};
    spart_stream_source source;
    memset(&source, 0, sizeof source);
    source.num_elements = 1;
    source.num_entries = n;
    source.offsets = offsets;
    source.indices_input = in;
    source.indices_output = out;
    source.values = values;
    source.row_offset = zero;
    source.column_offset = zero;
    source.row_lookup_stride = 1;
    source.column_lookup_stride = 1;
    source.cells_input = 5;
    source.cells_output = 10;
    for (int threads = 1; threads <= 4; threads++) {
        spart_stream_tally tally;
        spart_host_stream_count(&source, 10, threads, cursor, &tally);
        assert_int_equal(tally.first_bad, 150001);
        assert_int_equal(tally.bad_input, 7);
        assert_int_equal(tally.kept, 0);
        for (int r = 0; r <= 10; r++) {
            assert_int_equal(cursor[r], 0);
        }
    }
    free(in);
    free(out);
    free(values);
    free(cursor);
}

/* The allocator's own count of what the call held stays under the budget
 * and agrees with the report; spart_regridder_stream_bytes says the same
 * peak beforehand; and that peak is enough. */
static void memory_held_stays_under_the_budget(void **state)
{
    (void)state;
    counted_memory count = {0, 0};
    spart_allocator allocator = {counted_malloc, counted_realloc, counted_free, &count};
    spart_context *context = NULL;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context), SPART_OK);
    spart_weights *weights = stream_weights(context, 6, 400);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    spart_regridder *reference = NULL;
    assert_int_equal(spart_regridder_create(context, weights, &options, &reference), SPART_OK);
    int64_t entries = spart_regridder_num_entries(reference);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 40, 0, &blocks, &stream);
    size_t needed = 0;
    assert_int_equal(spart_regridder_stream_bytes(context, &stream, &options, 0, entries, &needed),
                     SPART_OK);
    assert_true(needed > 0);
    size_t before = count.held;
    count.peak = before;
    spart_regridder *streamed = NULL;
    spart_stream_report report;
    spart_status status =
        spart_regridder_create_streamed(context, &stream, &options, 0, needed, &streamed, &report);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    assert_same_host_csr(reference, streamed);
    size_t measured = count.peak - before;
    /* the allocator saw no more than the call counted, besides the
     * regridder's struct and the weights' shell (a few KiB) */
    assert_true(report.peak_bytes <= needed);
    assert_true(report.peak_bytes == needed);
    assert_true(measured <= needed + 16384);
    /* and the call held its result: at least the columns and values */
    assert_true(measured >= (size_t)entries * 8);
    spart_regridder_free(streamed);
    stream_blocks_free(&blocks);
    spart_regridder_free(reference);
    spart_weights_free(weights);
    spart_context_free(context);
}

/* The block size for a budget: on the host any block fits once the
 * result does; a budget below the result is refused with its bytes. */
static void the_block_size_for_a_budget(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 13, 200);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 10, 0, &blocks, &stream);
    int64_t entries = spart_weights_num_entries(weights), block = 0;
    size_t needed = 0;
    assert_int_equal(spart_regridder_stream_bytes(context, &stream, &options, 0, entries, &needed),
                     SPART_OK);
    assert_int_equal(spart_regridder_stream_block_entries(context, &stream, &options, 0, entries,
                                                          needed, &block),
                     SPART_OK);
    assert_int_equal(block, entries);
    assert_int_equal(spart_regridder_stream_block_entries(context, &stream, &options, 0, entries,
                                                          needed - 1, &block),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(block, 0);
    assert_non_null(strstr(spart_context_error(context), "even blocks of one entry"));
    assert_int_equal(blocks.calls, 0);
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

static void a_budget_too_small_for_the_cursors_is_refused(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 7, 100);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 10, 0, &blocks, &stream);
    spart_regridder *streamed = (spart_regridder *)&blocks; /* poisoned */
    assert_int_equal(
        spart_regridder_create_streamed(context, &stream, &options, 0, 100, &streamed, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_null(streamed);
    assert_non_null(strstr(spart_context_error(context), "budget of 100 bytes"));
    assert_non_null(strstr(spart_context_error(context), "before the first pass"));
    assert_int_equal(blocks.calls, 0); /* refused before any block was read */
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

static void a_budget_too_small_for_the_result_is_refused_after_counting(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 8, 300);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 64, 0, &blocks, &stream);
    size_t cursors_only = 0, whole = 0;
    int64_t entries = spart_weights_num_entries(weights);
    assert_int_equal(spart_regridder_stream_bytes(context, &stream, &options, 0, 0, &cursors_only),
                     SPART_OK);
    assert_int_equal(spart_regridder_stream_bytes(context, &stream, &options, 0, entries, &whole),
                     SPART_OK);
    assert_true(whole > cursors_only);
    spart_regridder *streamed = NULL;
    assert_int_equal(spart_regridder_create_streamed(context, &stream, &options, 0, cursors_only,
                                                     &streamed, NULL),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(streamed);
    assert_non_null(strstr(spart_context_error(context), "the first pass counted"));
    assert_int_equal(blocks.calls, stream.num_blocks); /* the first pass only */
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

/* A block function with `fault` at block `at` fails with `expected` and a
 * sentence holding `words`. */
static void expect_fault(spart_context *context, int fault, int64_t at, spart_status expected,
                         const char *words)
{
    spart_weights *weights = stream_weights(context, 9, 300);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 1);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 50, 0, &blocks, &stream);
    blocks.fault = fault;
    blocks.fault_block = at;
    spart_regridder *streamed = NULL;
    spart_status status =
        spart_regridder_create_streamed(context, &stream, &options, 0, PLENTY, &streamed, NULL);
    assert_int_equal(status, expected);
    assert_null(streamed);
    if (strstr(spart_context_error(context), words) == NULL) {
        fail_msg("expected \"%s\" in: %s", words, spart_context_error(context));
    }
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

static void blocks_that_change_between_the_passes_are_refused(void **state)
{
    spart_context *context = *state;
    expect_fault(context, STREAM_FAULT_MOVE_ROW, 2, SPART_ERROR_INVALID_ARGUMENT, "the same block");
    expect_fault(context, STREAM_FAULT_FEWER, 1, SPART_ERROR_INVALID_ARGUMENT, "block 1 holds");
    expect_fault(context, STREAM_FAULT_DROP_NONZERO, 3, SPART_ERROR_INVALID_ARGUMENT,
                 "block 3 keeps");
}

static void bad_blocks_are_refused_with_a_sentence(void **state)
{
    spart_context *context = *state;
    expect_fault(context, STREAM_FAULT_STATUS, 2, SPART_ERROR_IO,
                 "returned SPART_ERROR_IO for block 2");
    expect_fault(context, STREAM_FAULT_BAD_INDEX, 1, SPART_ERROR_INVALID_ARGUMENT,
                 "indices_input = 30");
    expect_fault(context, STREAM_FAULT_BACKWARDS, 4, SPART_ERROR_INVALID_ARGUMENT,
                 "must follow the elements in order");
}

static void a_block_larger_than_declared_is_refused(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 10, 300);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 50, 0, &blocks, &stream);
    stream.max_block_entries = 49;
    spart_regridder *streamed = NULL;
    assert_int_equal(
        spart_regridder_create_streamed(context, &stream, NULL, 0, PLENTY, &streamed, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "max_block_entries = 49"));
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

static void bad_arguments_are_refused(void **state)
{
    spart_context *context = *state;
    spart_weights *weights = stream_weights(context, 11, 10);
    stream_blocks blocks;
    spart_weights_stream stream;
    stream_blocks_make(weights, 8, 0, &blocks, &stream);
    spart_regridder *made = NULL;
    assert_int_equal(spart_regridder_create_streamed(NULL, &stream, NULL, 0, PLENTY, &made, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_create_streamed(context, NULL, NULL, 0, PLENTY, &made, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_create_streamed(context, &stream, NULL, 0, PLENTY, NULL, NULL),
                     SPART_ERROR_NULL_POINTER);
    spart_weights_stream broken = stream;
    broken.function = NULL;
    assert_int_equal(
        spart_regridder_create_streamed(context, &broken, NULL, 0, PLENTY, &made, NULL),
        SPART_ERROR_NULL_POINTER);
    broken = stream;
    broken.num_blocks = -1;
    assert_int_equal(
        spart_regridder_create_streamed(context, &broken, NULL, 0, PLENTY, &made, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    broken = stream;
    broken.blocks_on_device = 1;
    assert_int_equal(
        spart_regridder_create_streamed(context, &broken, NULL, 0, PLENTY, &made, NULL),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "blocks_on_device"));
    broken = stream;
    broken.axis_input[0] = 7;
    assert_int_equal(
        spart_regridder_create_streamed(context, &broken, NULL, 0, PLENTY, &made, NULL),
        SPART_ERROR_AXIS_OUT_OF_RANGE);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 0);
    options.value_type = (spart_value_type)9;
    assert_int_equal(
        spart_regridder_create_streamed(context, &stream, &options, 0, PLENTY, &made, NULL),
        SPART_ERROR_UNKNOWN_ENUM);
    assert_null(made);
    assert_int_equal(blocks.calls, 0);
    size_t bytes = 0;
    assert_int_equal(spart_regridder_stream_bytes(context, &stream, NULL, 0, -1, &bytes),
                     SPART_ERROR_INVALID_ARGUMENT);
    stream_blocks_free(&blocks);
    spart_weights_free(weights);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(streamed_equals_memory_for_any_block_size),
        cmocka_unit_test(streamed_equals_memory_in_float64_with_dropped_zeros),
        cmocka_unit_test(empty_blocks_change_nothing),
        cmocka_unit_test(a_stream_without_entries_gives_an_empty_matrix),
        cmocka_unit_test(the_default_roles_give_the_same_arrays),
        cmocka_unit_test(threads_give_the_same_arrays),
        cmocka_unit_test(the_first_bad_entry_is_named_on_any_threads),
        cmocka_unit_test(memory_held_stays_under_the_budget),
        cmocka_unit_test(the_block_size_for_a_budget),
        cmocka_unit_test(a_budget_too_small_for_the_cursors_is_refused),
        cmocka_unit_test(a_budget_too_small_for_the_result_is_refused_after_counting),
        cmocka_unit_test(blocks_that_change_between_the_passes_are_refused),
        cmocka_unit_test(bad_blocks_are_refused_with_a_sentence),
        cmocka_unit_test(a_block_larger_than_declared_is_refused),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, context_set_up, context_tear_down);
}
