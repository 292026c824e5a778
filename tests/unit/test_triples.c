/* The growable list of triples (src/weights/triples.c): paging in the room ahead
 * of writing (spart_triples_prepare) is only a hint, so it never changes
 * what the list holds, never reaches past the capacity, and is asked
 * again after the arrays move. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weights/triples.h"
#include "test_util.h"

static void append_entries(spart_triples *t, int64_t first, int64_t count)
{
    for (int64_t k = first; k < first + count; k++) {
        assert_int_equal(spart_triples_append(t, k, 2 * k, 0.5 * (double)k), 0);
    }
}

static void assert_entries(const spart_triples *t, int64_t count)
{
    assert_int_equal(t->count, count);
    for (int64_t k = 0; k < count; k++) {
        assert_int_equal(t->indices_input[k], k);
        assert_int_equal(t->indices_output[k], 2 * k);
        assert_true(t->values[k] == 0.5 * (double)k);
    }
}

static void test_prepare_keeps_the_entries(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_triples_reserve(&t, 100000), 0);
    append_entries(&t, 0, 1000);
    spart_triples_prepare(&t, 50000);
    assert_entries(&t, 1000);
    append_entries(&t, 1000, 99000); /* into the prepared room and past it */
    assert_entries(&t, 100000);
    spart_triples_release(&t);
}

static void test_prepare_stops_at_the_capacity(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_triples_reserve(&t, 100), 0);
    append_entries(&t, 0, 10);
    spart_triples_prepare(&t, 1000000);
    assert_int_equal(t.prepared, 100);
    assert_int_equal(t.capacity, 100);
    assert_entries(&t, 10);
    spart_triples_release(&t);
}

static void test_prepare_of_an_empty_list_does_nothing(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    spart_triples_prepare(&t, 1000);
    assert_int_equal(t.prepared, 0);
    assert_null(t.indices_input);
    spart_triples_release(&t);
}

static void test_prepare_asks_in_chunks_and_not_twice(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_triples_reserve(&t, 4 * SPART_TRIPLES_PREPARE), 0);
    spart_triples_prepare(&t, 10);
    assert_int_equal(t.prepared, SPART_TRIPLES_PREPARE); /* a whole chunk */
    append_entries(&t, 0, 20);
    spart_triples_prepare(&t, 10); /* inside what is prepared: nothing asked */
    assert_int_equal(t.prepared, SPART_TRIPLES_PREPARE);
    spart_triples_prepare(&t, SPART_TRIPLES_PREPARE);
    assert_int_equal(t.prepared, 2 * SPART_TRIPLES_PREPARE);
    spart_triples_release(&t);
}

static void test_growing_forgets_what_was_prepared(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(spart_triples_reserve(&t, 1000), 0);
    append_entries(&t, 0, 300);
    spart_triples_prepare(&t, 500);
    assert_int_equal(t.prepared, 1000);
    assert_int_equal(spart_triples_reserve(&t, 5000), 0); /* the arrays may move */
    assert_int_equal(t.prepared, 300);
    assert_entries(&t, 300);
    spart_triples_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prepare_keeps_the_entries),
        cmocka_unit_test(test_prepare_stops_at_the_capacity),
        cmocka_unit_test(test_prepare_of_an_empty_list_does_nothing),
        cmocka_unit_test(test_prepare_asks_in_chunks_and_not_twice),
        cmocka_unit_test(test_growing_forgets_what_was_prepared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
