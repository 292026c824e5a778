/*
 * Saving a regridder to FITS and loading it back (spart_regridder_save and
 * spart_regridder_load): round trips give the CSR arrays, shapes, batch axes,
 * plan, stripes and transposes bit for bit; files are replaced only when
 * asked, no temporary is left behind, no memory is lost when allocation
 * fails; NULL arguments are refused. Damaged files are in
 * test_regridder_fits.c.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, opendir, truncate */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <fitsio.h>

#include "operator/regridder_internal.h"
#include "spart.h"
#include "test_fits_util.h"
#include "test_util.h"
#include "test_regridder_fits_util.h"

/* ---- round trips
 * ------------------------------------------------------------------------------------ */

static void round_trip_of_float64_values_is_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_non_null(regridder->csr.columns32);
    assert_true(has_empty_row(regridder));
    spart_regridder *loaded = save_and_load(f, regridder);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void round_trip_of_float32_values_is_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT32);
    assert_int_equal(spart_regridder_value_type(regridder), SPART_FLOAT32);
    spart_regridder *loaded = save_and_load(f, regridder);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void special_values_survive_in_both_value_types(void **state)
{
    fits_fixture *f = *state;
    const spart_value_type types[] = {SPART_FLOAT64, SPART_FLOAT32};
    for (int t = 0; t < 2; t++) {
        spart_regridder *regridder = special_values_operator(f->context, types[t]);
        spart_regridder *loaded = save_and_load(f, regridder);
        spart_regridder_free(loaded);
        spart_regridder_free(regridder);
        remove(f->path);
    }
}

static void batch_products_of_the_loaded_operator_are_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    const spart_value_type types[] = {SPART_FLOAT64, SPART_FLOAT32};
    for (int t = 0; t < 2; t++) {
        spart_regridder *regridder = batch_operator(f->context, types[t]);
        assert_int_equal(regridder->input.num_batch, 4);
        spart_regridder *loaded = save_and_load(f, regridder);
        assert_products_identical(f->context, regridder, loaded);
        spart_regridder_free(loaded);
        spart_regridder_free(regridder);
        remove(f->path);
    }
}

static void the_plan_of_long_rows_comes_back(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = dense_operator(f->context);
    assert_int_equal(spart_regridder_group_size(regridder), 32);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_int_equal(spart_regridder_group_size(loaded), 32);
    assert_products_identical(f->context, regridder, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void a_huge_column_count_keeps_int64_columns(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = huge_column_operator(f->context);
    assert_non_null(regridder->csr.columns64);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_non_null(loaded->csr.columns64);
    assert_int_equal(loaded->csr.columns64[1], ((int64_t)1 << 31) + 4);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void an_operator_without_entries_comes_back(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = empty_operator(f->context);
    assert_int_equal(spart_regridder_num_entries(regridder), 0);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_products_identical(f->context, regridder, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* A forward model's channels applied to one shared input: the loaded
 * operator works its rows in the same stripes (derived from its roles)
 * and gives the same bits. */
static void the_loaded_operator_keeps_its_row_stripes(void **state)
{
    fits_fixture *f = *state;
    const int64_t orthogonal[] = {4};
    const int64_t weights_input[] = {4, 30}, weights_output[] = {4, 20};
    const int64_t input[] = {1, 30}, output[] = {4, 20};
    const int axes[] = {1};
    spart_weights *weights =
        random_weights(f->context, shape_of(1, orthogonal), shape_of(2, weights_input), axes,
                       shape_of(2, weights_output), axes, 30, 20, 50, 13);
    spart_shape shape_input = shape_of(2, input), shape_output = shape_of(2, output);
    spart_regridder *regridder =
        make(f->context, weights, &shape_input, &shape_output, SPART_FLOAT64);
    spart_weights_free(weights);
    assert_int_equal(regridder->plan.row_stripes, 4);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_int_equal(loaded->plan.row_stripes, 4);
    assert_products_identical(f->context, regridder, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void the_loaded_operator_builds_the_same_transpose(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *loaded = save_and_load(f, regridder);
    spart_regridder *transposed = NULL, *loaded_transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    assert_int_equal(spart_regridder_transpose(f->context, loaded, &loaded_transposed), SPART_OK);
    assert_products_identical(f->context, transposed, loaded_transposed);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* A transpose is a regridder too: saved, it loads as one of its own. */
static void a_transpose_saves_as_a_regridder(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    spart_regridder *loaded = save_and_load(f, transposed);
    assert_products_identical(f->context, transposed, loaded);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* ---- replacing files, and temporaries
 * ---------------------------------------------------------------- */

/* A regridder as a kind of file (test_fits_util.h's tests of saving). */
static spart_status save_regridder(spart_context *context, const void *object, const char *path,
                                   int overwrite)
{
    return spart_regridder_save(context, object, path, overwrite);
}

static spart_status load_regridder(spart_context *context, const char *path, void **object)
{
    return spart_regridder_load(context, path, (spart_regridder **)object);
}

static void assert_regridders_identical_untyped(const void *a, const void *b)
{
    assert_regridders_identical(a, b);
}

static void free_regridder(void *object)
{
    spart_regridder_free(object);
}

static const fits_kind regridder_kind = {save_regridder, load_regridder,
                                         assert_regridders_identical_untyped, free_regridder};

static void save_refuses_to_replace_a_file(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *first = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *second = dense_operator(f->context);
    check_save_refuses_to_replace(f, &regridder_kind, first, second);
    spart_regridder_free(first);
    spart_regridder_free(second);
}

static void save_with_overwrite_replaces_a_file(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *first = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *second = dense_operator(f->context);
    check_save_with_overwrite_replaces(f, &regridder_kind, first, second);
    spart_regridder_free(first);
    spart_regridder_free(second);
}

static void save_leaves_only_the_file(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    check_save_leaves_only_the_file(f, &regridder_kind, regridder);
    spart_regridder_free(regridder);
}

static void save_onto_a_folder_fails_and_leaves_no_temporary(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    check_save_onto_a_folder_fails(f, &regridder_kind, regridder);
    spart_regridder_free(regridder);
}

/* An allocator whose every call fails once armed. */
typedef struct failing_allocator {
    int armed;
} failing_allocator;

static void *failing_malloc(void *user, size_t size)
{
    failing_allocator *state = user;
    return state->armed ? NULL : malloc(size);
}

static void *failing_realloc(void *user, void *pointer, size_t size)
{
    failing_allocator *state = user;
    return state->armed ? NULL : realloc(pointer, size);
}

static void save_and_load_without_memory_leave_nothing(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    failing_allocator counter = {0};
    const spart_allocator allocator = {failing_malloc, failing_realloc, plain_free, &counter};
    spart_context *context = NULL;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context), SPART_OK);
    counter.armed = 1;
    char other[192];
    snprintf(other, sizeof other, "%s/other.fits", f->folder);
    assert_int_equal(spart_regridder_save(context, regridder, other, 0), SPART_ERROR_OUT_OF_MEMORY);
    spart_regridder *loaded = (spart_regridder *)f;
    assert_int_equal(spart_regridder_load(context, f->path, &loaded), SPART_ERROR_OUT_OF_MEMORY);
    assert_null(loaded);
    assert_non_null(strstr(spart_context_error(context), f->path));
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "operator.fits");
    spart_context_free(context);
    spart_regridder_free(regridder);
}

/* ---- arguments
 * ------------------------------------------------------------------------------------------ */

static void null_arguments_are_refused(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_save(NULL, regridder, f->path, 0), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_save(f->context, NULL, f->path, 0), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "regridder"));
    assert_int_equal(spart_regridder_save(f->context, regridder, NULL, 0),
                     SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "path"));
    assert_int_equal(spart_regridder_save(f->context, regridder, "", 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_regridder_load(NULL, f->path, &loaded), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_load(f->context, NULL, &loaded), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_regridder_load(f->context, f->path, NULL), SPART_ERROR_NULL_POINTER);
    assert_null(loaded);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "");
    spart_regridder_free(regridder);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, set_up, fits_tear_down)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(round_trip_of_float64_values_is_bit_for_bit),
        TEST(round_trip_of_float32_values_is_bit_for_bit),
        TEST(special_values_survive_in_both_value_types),
        TEST(batch_products_of_the_loaded_operator_are_bit_for_bit),
        TEST(the_plan_of_long_rows_comes_back),
        TEST(a_huge_column_count_keeps_int64_columns),
        TEST(an_operator_without_entries_comes_back),
        TEST(the_loaded_operator_keeps_its_row_stripes),
        TEST(the_loaded_operator_builds_the_same_transpose),
        TEST(a_transpose_saves_as_a_regridder),
        TEST(save_refuses_to_replace_a_file),
        TEST(save_with_overwrite_replaces_a_file),
        TEST(save_leaves_only_the_file),
        TEST(save_onto_a_folder_fails_and_leaves_no_temporary),
        TEST(save_and_load_without_memory_leave_nothing),
        TEST(null_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
