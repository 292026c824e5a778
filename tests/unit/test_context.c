/* The context, status names, version and allocator hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"

static void version_matches_macros(void **state)
{
    (void)state;
    assert_string_equal(spart_version(), SPART_VERSION_STRING);
    assert_int_equal(spart_version_number(), SPART_VERSION_NUMBER);
}

static void every_status_has_a_name(void **state)
{
    (void)state;
    for (int s = SPART_OK; s <= SPART_ERROR_INTERNAL; s++) {
        const char *name = spart_status_string((spart_status)s);
        assert_non_null(name);
        assert_true(strncmp(name, "SPART_", 6) == 0);
        assert_null(strstr(name, "UNKNOWN_STATUS"));
    }
    assert_string_equal(spart_status_string((spart_status)999), "SPART_ERROR_UNKNOWN_STATUS");
}

static void create_and_free(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    assert_non_null(context);
    assert_string_equal(spart_context_error(context), "");
    assert_true(spart_context_threads(context) >= 1);
    spart_context_free(context);
    spart_context_free(NULL);
}

static void create_rejects_null_output(void **state)
{
    (void)state;
    assert_int_equal(spart_context_create(NULL), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_last_error(), "output pointer"));
}

static void set_threads_rejects_negative(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    assert_int_equal(spart_context_set_threads(context, -1), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "threads = -1"));
    assert_int_equal(spart_context_set_threads(context, 3), SPART_OK);
    assert_string_equal(spart_context_error(context), "");
    assert_int_equal(spart_context_threads(context), 3);
    assert_int_equal(spart_context_set_threads(NULL, 1), SPART_ERROR_NULL_POINTER);
    spart_context_free(context);
}

typedef struct counting {
    int64_t live;
    int64_t calls;
} counting;

static void *counting_malloc(void *user, size_t size)
{
    counting *count = user;
    count->live++;
    count->calls++;
    return malloc(size);
}

static void *counting_realloc(void *user, void *pointer, size_t size)
{
    counting *count = user;
    count->calls++;
    if (pointer == NULL) {
        count->live++;
    }
    return realloc(pointer, size);
}

static void counting_free(void *user, void *pointer)
{
    counting *count = user;
    if (pointer != NULL) {
        count->live--;
    }
    free(pointer);
}

static void allocator_hooks_see_every_allocation(void **state)
{
    (void)state;
    counting count = {0, 0};
    spart_allocator allocator = {counting_malloc, counting_realloc, counting_free, &count};
    spart_context *context = NULL;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context), SPART_OK);
    assert_int_equal(count.live, 1);
    spart_context_free(context);
    assert_int_equal(count.live, 0);
}

static void allocator_hooks_must_all_be_given(void **state)
{
    (void)state;
    spart_allocator allocator = {counting_malloc, NULL, counting_free, NULL};
    spart_context *context = (spart_context *)&allocator;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context),
                     SPART_ERROR_NULL_POINTER);
    assert_null(context);
    assert_int_equal(spart_context_create_with_allocator(NULL, &context), SPART_ERROR_NULL_POINTER);
}

static void *refusing_malloc(void *user, size_t size)
{
    (void)user;
    (void)size;
    return NULL;
}

static void failing_malloc_gives_out_of_memory(void **state)
{
    (void)state;
    spart_allocator allocator = {refusing_malloc, counting_realloc, counting_free, NULL};
    spart_context *context = NULL;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context),
                     SPART_ERROR_OUT_OF_MEMORY);
    assert_null(context);
    assert_non_null(strstr(spart_last_error(), "could not allocate"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_matches_macros),
        cmocka_unit_test(every_status_has_a_name),
        cmocka_unit_test(create_and_free),
        cmocka_unit_test(create_rejects_null_output),
        cmocka_unit_test(set_threads_rejects_negative),
        cmocka_unit_test(allocator_hooks_see_every_allocation),
        cmocka_unit_test(allocator_hooks_must_all_be_given),
        cmocka_unit_test(failing_malloc_gives_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
