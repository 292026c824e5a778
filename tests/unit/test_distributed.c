/*
 * tests/unit/test_distributed.c: what spart/distributed.h does without
 * other ranks (label `unit`): the partitions of frames and of rows by
 * entries, their errors, and the communicator's answer in a build without
 * MPI (SPART_ERROR_NOT_IMPLEMENTED, saying how to build with it) or, in a
 * build with MPI, before MPI_Init. The products and solves over ranks are
 * the `mpi` tests (tests/mpi).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spart/distributed.h"

static int setup(void **state)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    *state = context;
    return 0;
}

static int teardown(void **state)
{
    spart_context_free(*state);
    return 0;
}

static void test_frames_split_into_blocks_differing_by_at_most_one(void **state)
{
    spart_context *context = *state;
    int64_t first[5];
    assert_int_equal(spart_distributed_partition_frames(context, 10, 4, first), SPART_OK);
    int64_t expected[5] = {0, 2, 5, 7, 10};
    assert_memory_equal(first, expected, sizeof expected);
    assert_int_equal(spart_distributed_partition_frames(context, 3, 4, first), SPART_OK);
    int64_t few[5] = {0, 0, 1, 2, 3}; /* rank 0 gets none */
    assert_memory_equal(first, few, sizeof few);
    assert_int_equal(spart_distributed_partition_frames(context, 0, 1, first), SPART_OK);
    assert_int_equal(first[1], 0);
}

static void test_rows_split_by_entries_not_rows(void **state)
{
    spart_context *context = *state;
    /* 8 rows: the first four hold 1 entry each, the last four 7 each */
    int64_t row_ptr[9] = {0, 1, 2, 3, 4, 11, 18, 25, 32};
    int64_t first[3];
    assert_int_equal(spart_distributed_partition_rows(context, row_ptr, 8, 2, first), SPART_OK);
    /* half the entries (16) are reached where row 6 starts (row_ptr[6] =
     * 18 >= 16): rows 0-5 (18 entries) and rows 6-7 (14) */
    int64_t expected[3] = {0, 6, 8};
    assert_memory_equal(first, expected, sizeof expected);
}

static void test_a_heavy_row_leaves_a_rank_without_rows(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[5] = {0, 90, 94, 97, 100};
    int64_t first[5];
    assert_int_equal(spart_distributed_partition_rows(context, row_ptr, 4, 4, first), SPART_OK);
    int64_t expected[5] = {0, 1, 1, 1, 4};
    assert_memory_equal(first, expected, sizeof expected);
}

static void test_rows_without_entries_split_by_rows(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[7] = {0};
    int64_t first[4];
    assert_int_equal(spart_distributed_partition_rows(context, row_ptr, 6, 3, first), SPART_OK);
    int64_t expected[4] = {0, 2, 4, 6};
    assert_memory_equal(first, expected, sizeof expected);
    int64_t one[1] = {0};
    assert_int_equal(spart_distributed_partition_rows(context, one, 0, 2, first), SPART_OK);
    assert_int_equal(first[0] + first[1] + first[2], 0);
}

static void test_one_rank_takes_every_row(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[4] = {0, 3, 3, 9};
    int64_t first[2];
    assert_int_equal(spart_distributed_partition_rows(context, row_ptr, 3, 1, first), SPART_OK);
    assert_int_equal(first[0], 0);
    assert_int_equal(first[1], 3);
}

static void test_partitions_refuse_bad_arguments(void **state)
{
    spart_context *context = *state;
    int64_t first[3];
    int64_t decreasing[4] = {0, 5, 4, 6};
    assert_int_equal(spart_distributed_partition_rows(context, decreasing, 3, 2, first),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "row_ptr[2] = 4"));
    int64_t shifted[2] = {1, 2};
    assert_int_equal(spart_distributed_partition_rows(context, shifted, 1, 2, first),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_distributed_partition_rows(context, NULL, 1, 2, first),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_distributed_partition_rows(context, decreasing, 3, 0, first),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_distributed_partition_frames(context, -1, 2, first),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_distributed_partition_frames(context, 4, 0, first),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_distributed_partition_frames(context, 4, 2, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_distributed_partition_frames(NULL, 4, 2, first),
                     SPART_ERROR_NULL_POINTER);
}

static void test_a_communicator_needs_mpi(void **state)
{
    spart_context *context = *state;
    spart_communicator *communicator = (spart_communicator *)context; /* poisoned */
    spart_status status = spart_communicator_create(context, NULL, &communicator);
    assert_null(communicator);
#if defined(SPART_TEST_HAVE_MPI)
    assert_int_equal(spart_distributed_has_mpi(), 1);
    /* this program never calls MPI_Init */
    assert_int_equal(status, SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "MPI_Init"));
#else
    assert_int_equal(spart_distributed_has_mpi(), 0);
    assert_int_equal(status, SPART_ERROR_NOT_IMPLEMENTED);
    assert_non_null(strstr(spart_context_error(context), "built without MPI"));
    assert_non_null(strstr(spart_context_error(context), "SPART_ENABLE_MPI=ON"));
#endif
    assert_int_equal(spart_communicator_create(context, NULL, NULL), SPART_ERROR_NULL_POINTER);
    spart_communicator_free(NULL);
    assert_int_equal(spart_communicator_rank(NULL), 0);
    assert_int_equal(spart_communicator_size(NULL), 1);
    assert_int_equal(spart_distributed_operator_num_rows(NULL), 0);
    spart_distributed_operator_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames_split_into_blocks_differing_by_at_most_one),
        cmocka_unit_test(test_rows_split_by_entries_not_rows),
        cmocka_unit_test(test_a_heavy_row_leaves_a_rank_without_rows),
        cmocka_unit_test(test_rows_without_entries_split_by_rows),
        cmocka_unit_test(test_one_rank_takes_every_row),
        cmocka_unit_test(test_partitions_refuse_bad_arguments),
        cmocka_unit_test(test_a_communicator_needs_mpi),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
