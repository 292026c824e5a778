/*
 * Saving a regridder to FITS and loading it back (spart_regridder_save and
 * spart_regridder_load): the CSR arrays, shapes, batch axes and plan come
 * back bit for bit and the products are the same; files are replaced only
 * when asked; damaged or foreign files are refused with a sentence. Round
 * trips, replacing files and null arguments are in
 * test_regridder_fits_round_trip.c.
 *
 * Run as `test_regridder_fits --write-example PATH` it saves the example
 * operator to PATH and prints the library version, an x and y = A x, one
 * line each: tests/parity/check_fits_astropy.py reads that file with
 * astropy and checks that NumPy alone reproduces y.
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

/* ---- loading what is not a good regridder file
 * ----------------------------------------------------------- */

/* Load f->path and expect `status` with `words` in the sentence, which
 * always names the file. */
static void assert_load_fails(fits_fixture *f, spart_status status, const char *words)
{
    spart_regridder *loaded = (spart_regridder *)f; /* anything but NULL */
    spart_status got = spart_regridder_load(f->context, f->path, &loaded);
    const char *sentence = spart_context_error(f->context);
    if (got != status || strstr(sentence, words) == NULL || strstr(sentence, f->path) == NULL) {
        print_error("status %s, sentence: %s\n", spart_status_string(got), sentence);
    }
    assert_int_equal(got, status);
    assert_null(loaded);
    assert_non_null(strstr(sentence, f->path));
    assert_non_null(strstr(sentence, words));
}

static void set_logical_key(const char *path, const char *key, int value)
{
    fitsfile *file = open_for_update(path, NULL);
    int status = 0;
    fits_update_key(file, TLOGICAL, key, &value, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
}

/* Save the example operator (float64 values unless said) to f->path. */
static void save_example(fits_fixture *f, spart_value_type value_type)
{
    spart_regridder *regridder = batch_operator(f->context, value_type);
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    spart_regridder_free(regridder);
}

static void loading_a_missing_file_is_an_io_error(void **state)
{
    fits_fixture *f = *state;
    assert_load_fails(f, SPART_ERROR_IO, "CFITSIO");
}

static void loading_a_folder_is_an_io_error(void **state)
{
    fits_fixture *f = *state;
    assert_int_equal(mkdir(f->path, 0700), 0);
    assert_load_fails(f, SPART_ERROR_IO, "directory");
}

static void loading_a_text_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    FILE *text = fopen(f->path, "w");
    assert_non_null(text);
    fputs("row,column,value\n0,0,1.0\n", text);
    fclose(text);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "not a FITS file");
}

static void loading_a_weights_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    const int64_t input[] = {5}, output[] = {4};
    spart_shape orthogonal = shape_of(0, NULL), in = shape_of(1, input), out = shape_of(1, output);
    const int64_t offsets[] = {0, 1}, indices_input[] = {0}, indices_output[] = {3};
    const double values[] = {1.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(f->context, &orthogonal, &in, &out, 0, NULL,
                                                      0, NULL, offsets, indices_input,
                                                      indices_output, values, &weights),
                     SPART_OK);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTKND = 'weights', expected 'regridder'");
    spart_weights_free(weights);
}

static void loading_a_regridder_file_as_weights_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_load(f->context, f->path, &weights), SPART_ERROR_FILE_FORMAT);
    assert_non_null(strstr(spart_context_error(f->context), "'regridder'"));
    assert_null(weights);
}

static void loading_another_kind_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_string_key(f->path, "SPARTKND", "operator");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTKND = 'operator'");
}

static void loading_a_newer_format_version_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "SPARTVER", 2);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTVER = 2");
}

static void loading_a_truncated_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    struct stat info;
    assert_int_equal(stat(f->path, &info), 0);
    /* Cut the file at every 997 bytes: through headers, tables and padding
     * (the last table's rows end early in its final 2880-byte block). */
    for (long length = (long)info.st_size - 2880 + 40; length >= 0; length -= 997) {
        assert_int_equal(truncate(f->path, length), 0);
        assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "regridder file");
    }
}

static void loading_row_pointers_that_decrease_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 5, 0);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "ROW_PTR[5] = 0 is less than ROW_PTR[4]");
}

static void loading_row_pointers_not_from_zero_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 0, 1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "ROW_PTR[0] = 1");
}

static void loading_row_pointers_short_of_the_entries_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = dense_operator(f->context); /* 300 entries, 3 long rows */
    assert_int_equal(spart_regridder_save(f->context, regridder, f->path, 0), SPART_OK);
    spart_regridder_free(regridder);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 3, 299);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT,
                      "ROW_PTR[3] = 299, but it must be NENTRIES = 300");
}

static void loading_row_pointers_past_the_entries_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ROW_PTR", "ROW_PTR", 10, 9);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "ROW_PTR[10] = 9 is past NENTRIES = 8");
}

static void loading_a_column_out_of_range_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64); /* 14 columns */
    set_cell(f->path, "ENTRIES", "COLUMN", 3, 14);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "row 3 of ENTRIES");
    assert_non_null(
        strstr(spart_context_error(f->context), "COLUMN = 14, outside [0, NCOLS = 14)"));
}

static void loading_a_negative_column_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_cell(f->path, "ENTRIES", "COLUMN", 0, -1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "COLUMN = -1");
}

static void loading_a_group_size_the_matrix_does_not_call_for_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64); /* 8 entries in 10 rows: 1 lane */
    set_integer_key(f->path, "GROUPSZ", 4);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "GROUPSZ = 4 and CHUNKLEN = 4096, but");
}

static void loading_a_group_size_that_is_no_power_of_two_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "GROUPSZ", 3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "GROUPSZ = 3 is not a power of two");
}

static void loading_another_chunk_length_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "CHUNKLEN", 1024);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "CHUNKLEN = 1024");
}

static void loading_a_value_type_unlike_the_column_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_string_key(f->path, "VALTYPE", "float32");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "column VALUE of table ENTRIES");
}

static void loading_an_unknown_value_type_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_string_key(f->path, "VALTYPE", "float16");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "VALTYPE = 'float16'");
}

static void loading_int64_columns_for_a_small_matrix_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, "ENTRIES");
    int status = 0;
    fits_delete_col(file, 1, &status); /* COLUMN becomes K, and all zeros */
    fits_insert_col(file, 1, "COLUMN", "K", &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "32-bit integer (J)");
}

static void loading_batch_flags_that_change_the_matrix_size_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_logical_key(f->path, "INBAT1", 0); /* the batch axis of 4 would become columns */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "NCOLS = 14, but");
}

static void loading_batch_axes_that_differ_between_sides_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    /* Both sides keep their matrix sizes, but the batch lengths differ. */
    set_integer_key(f->path, "INDIM1", 3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "batch axes of the input");
}

static void loading_a_batch_flag_on_an_axis_of_one_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "INDIM1", 1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INBAT1 = T, but axis 1 of length 1");
}

/* A zero extent keeps the shape's size within int64 while the other
 * extents' product overflows it. */
static void loading_a_shape_whose_matrix_axes_overflow_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "INNDIM", 4);
    set_integer_key(f->path, "INDIM0", 0);
    set_integer_key(f->path, "INDIM2", (long long)1 << 40);
    set_integer_key(f->path, "INDIM3", (long long)1 << 40);
    set_logical_key(f->path, "INBAT3", 0);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "more matrix or batch cells than int64");
}

static void loading_a_missing_batch_flag_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, NULL);
    int status = 0;
    fits_delete_key(file, "OUTBAT2", &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "keyword OUTBAT2 is missing");
}

static void loading_a_wrong_entry_count_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "NENTRIES", 9);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT,
                      "table ENTRIES has 8 rows, but the primary header promises 9");
}

static void loading_a_file_without_a_table_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, "ROW_PTR");
    int status = 0;
    fits_delete_hdu(file, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "no extension named ROW_PTR");
}

/* ---- the example file for tests/parity/check_fits_astropy.py
 * ---------------------------------------------- */

static void print_values(const double *values, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        printf("%s%.17g", k == 0 ? "" : " ", values[k]);
    }
    printf("\n");
}

/* Save the example operator (float64) to `path`; print the version, x (one
 * vector of the input shape 2x4x7, C order) and y = A x (2x4x5). */
static int write_example(const char *path)
{
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    spart_regridder *regridder = batch_operator(context, SPART_FLOAT64);
    double *x = random_values(2 * 4 * 7, 3);
    const int64_t dims[] = {2, 4, 7};
    int64_t size_y = 0;
    double *y = apply(context, regridder, x, shape_of(3, dims), &size_y);
    spart_status status = spart_regridder_save(context, regridder, path, 1);
    if (status != SPART_OK) {
        fprintf(stderr, "%s\n", spart_context_error(context));
    } else {
        printf("%s\n", spart_version());
        print_values(x, 2 * 4 * 7);
        print_values(y, size_y);
    }
    free(x);
    free(y);
    spart_regridder_free(regridder);
    spart_context_free(context);
    return status == SPART_OK ? 0 : 1;
}

/* ---- the roles of the axes (what the conservative transpose needs)
 * -------------------------------------------------------------------------- */

static void the_roles_of_the_axes_come_back(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    assert_true(regridder->has_roles);
    spart_regridder *loaded = save_and_load(f, regridder);
    assert_true(loaded->has_roles);
    const spart_regridder_roles *a = &regridder->roles, *b = &loaded->roles;
    assert_shapes_equal(a->shape_input, b->shape_input);
    assert_shapes_equal(a->shape_output, b->shape_output);
    assert_int_equal(a->num_resampled_input, b->num_resampled_input);
    assert_int_equal(a->num_resampled_output, b->num_resampled_output);
    assert_int_equal(a->num_orthogonal, b->num_orthogonal);
    assert_memory_equal(a->axes_input, b->axes_input, sizeof a->axes_input);
    assert_memory_equal(a->axes_output, b->axes_output, sizeof a->axes_output);
    assert_memory_equal(a->orthogonal_input, b->orthogonal_input, sizeof a->orthogonal_input);
    assert_memory_equal(a->orthogonal_output, b->orthogonal_output, sizeof a->orthogonal_output);
    assert_memory_equal(a->weights_extent, b->weights_extent, sizeof a->weights_extent);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

static void a_transpose_saves_without_roles(void **state)
{
    fits_fixture *f = *state;
    spart_regridder *regridder = batch_operator(f->context, SPART_FLOAT64);
    spart_regridder *transposed = NULL;
    assert_int_equal(spart_regridder_transpose(f->context, regridder, &transposed), SPART_OK);
    spart_regridder *loaded = save_and_load(f, transposed);
    assert_false(loaded->has_roles);
    spart_regridder_free(loaded);
    spart_regridder_free(regridder);
}

/* A file written before the role keywords existed loads as it did. */
static void a_file_without_role_keywords_loads_without_roles(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, NULL);
    int status = 0;
    const char *keys[] = {"ROLES", "INNAX", "INAX0", "OUTNAX", "OUTAX0", "WEXT0", "WEXT1"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        fits_delete_key(file, (char *)keys[k], &status);
    }
    assert_int_equal(status, 0);
    close_updated(file);
    spart_regridder *loaded = NULL;
    assert_int_equal(spart_regridder_load(f->context, f->path, &loaded), SPART_OK);
    assert_false(loaded->has_roles);
    spart_regridder_free(loaded);
}

static void loading_a_weights_extent_that_fits_no_role_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "WEXT0", 3); /* the input and output have 2 there */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "WEXT0 = 3 with input extent 2");
}

static void loading_a_weights_extent_unlike_the_batch_flags_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "WEXT1", 4); /* axis 1 is a batch axis: 1 element */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "disagrees with the batch flags");
}

static void loading_a_resampled_batch_axis_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "INAX0", 1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INAX0 = 1 names a batch axis");
}

static void loading_resampled_axes_out_of_range_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    set_integer_key(f->path, "OUTAX0", 3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "OUTAX0 = 3: resampled axes must be ascending");
}

static void loading_a_missing_role_keyword_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    save_example(f, SPART_FLOAT64);
    fitsfile *file = open_for_update(f->path, NULL);
    int status = 0;
    fits_delete_key(file, "WEXT1", &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "WEXT1");
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, set_up, fits_tear_down)

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-example") == 0) {
        return write_example(argv[2]);
    }
    const struct CMUnitTest tests[] = {
        TEST(loading_a_missing_file_is_an_io_error),
        TEST(loading_a_folder_is_an_io_error),
        TEST(loading_a_text_file_is_a_format_error),
        TEST(loading_a_weights_file_is_a_format_error),
        TEST(loading_a_regridder_file_as_weights_is_a_format_error),
        TEST(loading_another_kind_is_a_format_error),
        TEST(loading_a_newer_format_version_is_a_format_error),
        TEST(loading_a_truncated_file_is_a_format_error),
        TEST(loading_row_pointers_that_decrease_is_a_format_error),
        TEST(loading_row_pointers_not_from_zero_is_a_format_error),
        TEST(loading_row_pointers_short_of_the_entries_is_a_format_error),
        TEST(loading_row_pointers_past_the_entries_is_a_format_error),
        TEST(loading_a_column_out_of_range_is_a_format_error),
        TEST(loading_a_negative_column_is_a_format_error),
        TEST(loading_a_group_size_the_matrix_does_not_call_for_is_a_format_error),
        TEST(loading_a_group_size_that_is_no_power_of_two_is_a_format_error),
        TEST(loading_another_chunk_length_is_a_format_error),
        TEST(loading_a_value_type_unlike_the_column_is_a_format_error),
        TEST(loading_an_unknown_value_type_is_a_format_error),
        TEST(loading_int64_columns_for_a_small_matrix_is_a_format_error),
        TEST(loading_batch_flags_that_change_the_matrix_size_is_a_format_error),
        TEST(loading_batch_axes_that_differ_between_sides_is_a_format_error),
        TEST(loading_a_batch_flag_on_an_axis_of_one_is_a_format_error),
        TEST(loading_a_shape_whose_matrix_axes_overflow_is_a_format_error),
        TEST(loading_a_missing_batch_flag_is_a_format_error),
        TEST(loading_a_wrong_entry_count_is_a_format_error),
        TEST(loading_a_file_without_a_table_is_a_format_error),
        TEST(the_roles_of_the_axes_come_back),
        TEST(a_transpose_saves_without_roles),
        TEST(a_file_without_role_keywords_loads_without_roles),
        TEST(loading_a_weights_extent_that_fits_no_role_is_a_format_error),
        TEST(loading_a_weights_extent_unlike_the_batch_flags_is_a_format_error),
        TEST(loading_a_resampled_batch_axis_is_a_format_error),
        TEST(loading_resampled_axes_out_of_range_is_a_format_error),
        TEST(loading_a_missing_role_keyword_is_a_format_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
