/* The context, status names, version and allocator hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
    /* a setter keeps the earlier sentence (issue 29, item 7) */
    assert_non_null(strstr(spart_context_error(context), "threads = -1"));
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

/* What a progress callback saw. */
typedef struct progress_record {
    int calls;
    int64_t first_done, last_done, last_total;
    int backwards; /* a report with done below the previous one */
    char stage[64];
} progress_record;

static void record_progress(void *user, const char *stage, int64_t done, int64_t total)
{
    progress_record *r = user;
    if (r->calls == 0) {
        r->first_done = done;
    } else if (done < r->last_done) {
        r->backwards = 1;
    }
    r->calls++;
    r->last_done = done;
    r->last_total = total;
    snprintf(r->stage, sizeof r->stage, "%s", stage);
}

static void progress_reports_a_weights_build_from_start_to_end(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    progress_record record = {0, 0, 0, 0, 0, ""};
    assert_int_equal(spart_context_set_progress(context, record_progress, &record), SPART_OK);
    /* 300 elements of 1-D multilinear weights (an orthogonal axis). */
    enum { elements = 300, points = 11 };
    static double x[elements * points], y[elements * 4];
    for (int e = 0; e < elements; e++) {
        for (int i = 0; i < points; i++) {
            x[e * points + i] = i;
        }
        for (int j = 0; j < 4; j++) {
            y[e * 4 + j] = 1.5 + 2.0 * j;
        }
    }
    spart_array input = {x, {2, {elements, points}}};
    spart_array output = {y, {2, {elements, 4}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.num_axis_input = 1;
    options.axis_input[0] = -1;
    options.num_axis_output = 1;
    options.axis_output[0] = -1;
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build(context, 1, &input, &output, &options, &weights),
                     SPART_OK);
    assert_true(record.calls >= 2);
    assert_int_equal(record.first_done, 0);
    assert_int_equal(record.last_done, elements);
    assert_int_equal(record.last_total, elements);
    assert_int_equal(record.backwards, 0);
    assert_string_equal(record.stage, "weights");
    assert_true(record.calls <= 2 + 101); /* about a hundred reports at most */
    spart_weights_free(weights);
    /* NULL turns it off */
    assert_int_equal(spart_context_set_progress(context, NULL, NULL), SPART_OK);
    int calls = record.calls;
    assert_int_equal(spart_weights_build(context, 1, &input, &output, &options, &weights),
                     SPART_OK);
    assert_int_equal(record.calls, calls);
    spart_weights_free(weights);
    spart_context_free(context);
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
        cmocka_unit_test(progress_reports_a_weights_build_from_start_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
