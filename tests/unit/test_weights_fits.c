/* Saving weights to FITS and loading them back (spart_weights_save/load). */
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
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <fitsio.h>

#include "spart.h"
#include "test_util.h"
#include "test_fits_util.h"

/* ---- fixtures: a context and a fresh folder per test ------------------------------ */

static int set_up(void **state)
{
    return fits_set_up(state, "test_weights_fits", "weights.fits");
}

/* Weights with orthogonal shape 2x3 (six elements, two of them empty),
 * input 2x3x4x5 resampled on axes 2 and 3 (20 cells) and output 2x3x6
 * resampled on axis 2 (6 cells). Values include a NaN with a payload,
 * a negative zero, infinities and a subnormal number, which must all
 * survive the round trip bit for bit. */
static spart_weights *sample_weights(spart_context *context)
{
    const int64_t dims_orthogonal[] = {2, 3};
    const int64_t dims_input[] = {2, 3, 4, 5};
    const int64_t dims_output[] = {2, 3, 6};
    spart_shape orthogonal = shape_of(2, dims_orthogonal);
    spart_shape input = shape_of(4, dims_input);
    spart_shape output = shape_of(3, dims_output);
    const int axis_input[] = {2, 3};
    const int axis_output[] = {2};
    const int64_t offsets[] = {0, 3, 3, 5, 9, 9, 10};
    const int64_t indices_input[] = {0, 19, 7, 1, 2, 3, 4, 5, 18, 11};
    const int64_t indices_output[] = {5, 0, 3, 1, 1, 2, 2, 0, 4, 5};
    const double values[] = {1.0 / 3.0, -0.0,      bits_to_double(0x7ff80000deadbeefULL),
                             INFINITY,  -INFINITY, 4.9406564584124654e-324,
                             -2.5e300,  0.125,     1e-310,
                             7.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(
                         context, &orthogonal, &input, &output, 2, axis_input, 1, axis_output,
                         offsets, indices_input, indices_output, values, &weights),
                     SPART_OK);
    return weights;
}

/* Weights of one element (scalar orthogonal shape): 5 input cells to 4
 * output cells over every axis. */
static spart_weights *scalar_weights(spart_context *context, double scale)
{
    const int64_t dims_input[] = {5};
    const int64_t dims_output[] = {4};
    spart_shape orthogonal = shape_of(0, NULL);
    spart_shape input = shape_of(1, dims_input);
    spart_shape output = shape_of(1, dims_output);
    const int64_t offsets[] = {0, 4};
    const int64_t indices_input[] = {0, 1, 3, 4};
    const int64_t indices_output[] = {0, 1, 2, 3};
    const double values[] = {0.5 * scale, 1.0 * scale, 0.25 * scale, 2.0 * scale};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 0,
                                                      NULL, 0, NULL, offsets, indices_input,
                                                      indices_output, values, &weights),
                     SPART_OK);
    return weights;
}

/* Every field, and every array bit for bit. */
static void assert_weights_identical(const spart_weights *a, const spart_weights *b)
{
    assert_shapes_equal(spart_weights_shape_orthogonal(a), spart_weights_shape_orthogonal(b));
    assert_shapes_equal(spart_weights_shape_input(a), spart_weights_shape_input(b));
    assert_shapes_equal(spart_weights_shape_output(a), spart_weights_shape_output(b));
    int na_in, na_out, nb_in, nb_out;
    int a_in[SPART_MAX_NDIM], a_out[SPART_MAX_NDIM], b_in[SPART_MAX_NDIM], b_out[SPART_MAX_NDIM];
    spart_weights_axes(a, &na_in, a_in, &na_out, a_out);
    spart_weights_axes(b, &nb_in, b_in, &nb_out, b_out);
    assert_int_equal(na_in, nb_in);
    assert_int_equal(na_out, nb_out);
    assert_memory_equal(a_in, b_in, (size_t)na_in * sizeof(int));
    assert_memory_equal(a_out, b_out, (size_t)na_out * sizeof(int));
    int64_t elements = spart_weights_num_elements(a);
    int64_t entries = spart_weights_num_entries(a);
    assert_int_equal(elements, spart_weights_num_elements(b));
    assert_int_equal(entries, spart_weights_num_entries(b));
    const int64_t *a_offsets, *a_indices_in, *a_indices_out, *b_offsets, *b_indices_in,
        *b_indices_out;
    const double *a_values, *b_values;
    assert_int_equal(spart_weights_arrays(a, &a_offsets, &a_indices_in, &a_indices_out, &a_values),
                     SPART_OK);
    assert_int_equal(spart_weights_arrays(b, &b_offsets, &b_indices_in, &b_indices_out, &b_values),
                     SPART_OK);
    assert_memory_equal(a_offsets, b_offsets, (size_t)(elements + 1) * sizeof(int64_t));
    if (entries > 0) {
        assert_memory_equal(a_indices_in, b_indices_in, (size_t)entries * sizeof(int64_t));
        assert_memory_equal(a_indices_out, b_indices_out, (size_t)entries * sizeof(int64_t));
        assert_memory_equal(a_values, b_values, (size_t)entries * sizeof(double));
    }
}

static void save_and_load_identical(fits_fixture *f, const spart_weights *weights)
{
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    spart_weights *loaded = NULL;
    assert_int_equal(spart_weights_load(f->context, f->path, &loaded), SPART_OK);
    assert_string_equal(spart_context_error(f->context), "");
    assert_weights_identical(weights, loaded);
    spart_weights_free(loaded);
}

/* Load f->path and expect `status` with `words` in the sentence, which
 * always names the file. */
static void assert_load_fails(fits_fixture *f, spart_status status, const char *words)
{
    spart_weights *loaded = (spart_weights *)f; /* anything but NULL */
    spart_status got = spart_weights_load(f->context, f->path, &loaded);
    const char *sentence = spart_context_error(f->context);
    if (got != status || strstr(sentence, words) == NULL || strstr(sentence, f->path) == NULL) {
        print_error("status %s, sentence: %s\n", spart_status_string(got), sentence);
    }
    assert_int_equal(got, status);
    assert_null(loaded);
    assert_non_null(strstr(sentence, f->path));
    assert_non_null(strstr(sentence, words));
}

/* ---- editing saved files with CFITSIO, to spoil them ----------------------------------- */

static long file_size(const char *path)
{
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    return (long)info.st_size;
}

/* ---- round trips ------------------------------------------------------------------------ */

static void round_trip_is_bit_for_bit(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    save_and_load_identical(f, weights);
    spart_weights_free(weights);
}

static void round_trip_of_scalar_orthogonal_shape(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = scalar_weights(f->context, 1.0);
    save_and_load_identical(f, weights);
    spart_weights_free(weights);
}

/* Weights of `elements` elements (along an orthogonal axis of that
 * length; inputs of 4 cells, outputs of 2) and no entries. */
static spart_weights *weights_without_entries(spart_context *context, int64_t elements)
{
    const int64_t dims_orthogonal[] = {elements};
    const int64_t dims_input[] = {elements, 4};
    const int64_t dims_output[] = {elements, 2};
    spart_shape orthogonal = shape_of(1, dims_orthogonal);
    spart_shape input = shape_of(2, dims_input);
    spart_shape output = shape_of(2, dims_output);
    const int axis[] = {1};
    const int64_t offsets[] = {0, 0, 0, 0};
    assert_true(elements <= 3);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axis, 1, axis, offsets, NULL, NULL, NULL,
                                                      &weights),
                     SPART_OK);
    return weights;
}

static void round_trip_of_weights_without_entries(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = weights_without_entries(f->context, 3);
    save_and_load_identical(f, weights);
    spart_weights_free(weights);
}

static void round_trip_of_weights_without_elements(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = weights_without_entries(f->context, 0);
    save_and_load_identical(f, weights);
    spart_weights_free(weights);
}

/* Enough entries and elements that both tables move in many chunks. */
static void round_trip_spans_many_chunks(void **state)
{
    fits_fixture *f = *state;
    enum { elements = 5000, per_element = 37, entries = elements * per_element };
    const int64_t dims_orthogonal[] = {elements};
    const int64_t dims_input[] = {elements, 50, 60};
    const int64_t dims_output[] = {elements, 70};
    spart_shape orthogonal = shape_of(1, dims_orthogonal);
    spart_shape input = shape_of(3, dims_input);
    spart_shape output = shape_of(2, dims_output);
    const int axis_input[] = {1, 2};
    const int axis_output[] = {1};
    int64_t *offsets = malloc((elements + 1) * sizeof *offsets);
    int64_t *indices_input = malloc(entries * sizeof *indices_input);
    int64_t *indices_output = malloc(entries * sizeof *indices_output);
    double *values = malloc(entries * sizeof *values);
    assert_true(offsets && indices_input && indices_output && values);
    /* A ragged layout: elements of 18, 0 and 37 entries in turn. */
    int64_t at = 0;
    offsets[0] = 0;
    for (int64_t e = 0; e < elements; e++) {
        int64_t count = (e % 3 == 1) ? 0 : (e % 3 == 0 ? per_element / 2 : per_element);
        for (int64_t k = 0; k < count && at < entries; k++, at++) {
            indices_input[at] = (at * 7919) % 3000;
            indices_output[at] = (at * 104729) % 70;
            values[at] = (double)at / 7.0 - 1e3;
        }
        offsets[e + 1] = at;
    }
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(
                         f->context, &orthogonal, &input, &output, 2, axis_input, 1, axis_output,
                         offsets, indices_input, indices_output, values, &weights),
                     SPART_OK);
    free(offsets);
    free(indices_input);
    free(indices_output);
    free(values);
    save_and_load_identical(f, weights);
    spart_weights_free(weights);
}

/* CFITSIO's extended file-name syntax ([1], !, .gz) is not interpreted. */
static void path_is_taken_literally(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = scalar_weights(f->context, 1.0);
    snprintf(f->path, sizeof f->path, "%s/!weights[1].fits.gz", f->folder);
    save_and_load_identical(f, weights);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "!weights[1].fits.gz");
    spart_weights_free(weights);
}

/* ---- replacing files, and temporaries ------------------------------------------------- */

/* A write that the system cuts short (here a file size limit of 8 KiB, in a
 * child process so that the limit stays there) fails with SPART_ERROR_IO
 * and leaves no file behind, even where CFITSIO's last flush misses it. */
static void save_cut_short_fails_and_leaves_nothing(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = {8192, 8192};
        setrlimit(RLIMIT_FSIZE, &limit);
        /* sample_weights' file takes more than 8 KiB: the write is cut. */
        spart_status status = spart_weights_save(f->context, weights, f->path, 0);
        _exit(status == SPART_ERROR_IO ? 0 : 1);
    }
    int child_status = 0;
    assert_int_equal(waitpid(child, &child_status, 0), child);
    assert_true(WIFEXITED(child_status));
    assert_int_equal(WEXITSTATUS(child_status), 0);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "");
    spart_weights_free(weights);
}

/* Weights as a kind of file (test_fits_util.h's tests of saving). */
static spart_status save_weights(spart_context *context, const void *object, const char *path,
                                 int overwrite)
{
    return spart_weights_save(context, object, path, overwrite);
}

static spart_status load_weights(spart_context *context, const char *path, void **object)
{
    return spart_weights_load(context, path, (spart_weights **)object);
}

static void assert_weights_identical_untyped(const void *a, const void *b)
{
    assert_weights_identical(a, b);
}

static void free_weights(void *object)
{
    spart_weights_free(object);
}

static const fits_kind weights_kind = {save_weights, load_weights, assert_weights_identical_untyped,
                                       free_weights};

static void save_refuses_to_replace_a_file(void **state)
{
    fits_fixture *f = *state;
    spart_weights *first = sample_weights(f->context);
    spart_weights *second = scalar_weights(f->context, 1.0);
    check_save_refuses_to_replace(f, &weights_kind, first, second);
    spart_weights_free(first);
    spart_weights_free(second);
}

static void save_with_overwrite_replaces_a_file(void **state)
{
    fits_fixture *f = *state;
    spart_weights *first = sample_weights(f->context);
    spart_weights *second = scalar_weights(f->context, 3.0);
    check_save_with_overwrite_replaces(f, &weights_kind, first, second);
    spart_weights_free(first);
    spart_weights_free(second);
}

static void save_leaves_only_the_file(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    check_save_leaves_only_the_file(f, &weights_kind, weights);
    spart_weights_free(weights);
}

/* An allocator that fails its n-th call, to break a save half-way. */
typedef struct failing_allocator {
    int calls;
    int fail_at;
} failing_allocator;

static void *failing_malloc(void *user, size_t size)
{
    failing_allocator *state = user;
    return ++state->calls == state->fail_at ? NULL : malloc(size);
}

static void *failing_realloc(void *user, void *pointer, size_t size)
{
    failing_allocator *state = user;
    return ++state->calls == state->fail_at ? NULL : realloc(pointer, size);
}

static void failed_save_leaves_nothing(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    int failures = 0;
    for (int fail_at = 2; fail_at < 12; fail_at++) {
        failing_allocator counter = {0, 0};
        const spart_allocator allocator = {failing_malloc, failing_realloc, plain_free, &counter};
        spart_context *context = NULL;
        assert_int_equal(spart_context_create_with_allocator(&allocator, &context), SPART_OK);
        counter.fail_at = counter.calls + fail_at - 1; /* count from after the context */
        spart_status status = spart_weights_save(context, weights, f->path, 1);
        char names[1024];
        list_folder(f->folder, names, sizeof names);
        if (status == SPART_OK) {
            assert_string_equal(names, "weights.fits");
            remove(f->path);
        } else {
            assert_int_equal(status, SPART_ERROR_OUT_OF_MEMORY);
            assert_string_equal(names, "");
            failures++;
        }
        spart_context_free(context);
    }
    assert_true(failures >= 2); /* the file name and the element counts */
    spart_weights_free(weights);
}

static void save_onto_a_folder_fails_and_leaves_no_temporary(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    check_save_onto_a_folder_fails(f, &weights_kind, weights);
    spart_weights_free(weights);
}

static void save_into_a_missing_folder_is_an_io_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    char path[192];
    snprintf(path, sizeof path, "%s/no-such-folder/weights.fits", f->folder);
    assert_int_equal(spart_weights_save(f->context, weights, path, 0), SPART_ERROR_IO);
    assert_non_null(strstr(spart_context_error(f->context), path));
    spart_weights_free(weights);
}

/* ---- arguments ------------------------------------------------------------------------------ */

static void null_arguments_are_refused(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    spart_weights *loaded = NULL;
    assert_int_equal(spart_weights_save(NULL, weights, f->path, 0), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_last_error(), "context"));
    assert_int_equal(spart_weights_save(f->context, NULL, f->path, 0), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "weights"));
    assert_int_equal(spart_weights_save(f->context, weights, NULL, 0), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "path"));
    assert_int_equal(spart_weights_save(f->context, weights, "", 0), SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_weights_load(NULL, f->path, &loaded), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_weights_load(f->context, NULL, &loaded), SPART_ERROR_NULL_POINTER);
    assert_non_null(strstr(spart_context_error(f->context), "path"));
    assert_int_equal(spart_weights_load(f->context, f->path, NULL), SPART_ERROR_NULL_POINTER);
    assert_null(loaded);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, "");
    spart_weights_free(weights);
}

/* ---- loading what is not a good weights file ----------------------------------------------- */

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
    fputs("index_in,index_out,value\n0,0,1.0\n", text);
    fclose(text);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "not a FITS file");
}

static void loading_another_fits_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    fitsfile *file = NULL;
    int status = 0;
    long axes[2] = {4, 3};
    double pixels[12] = {0};
    fits_create_diskfile(&file, f->path, &status);
    fits_create_img(file, DOUBLE_IMG, 2, axes, &status);
    fits_write_img(file, TDOUBLE, 1, 12, pixels, &status);
    fits_close_file(file, &status);
    assert_int_equal(status, 0);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTKND");
}

static void loading_another_kind_of_spart_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_string_key(f->path, "SPARTKND", "operator");
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "'operator'");
    spart_weights_free(weights);
}

static void loading_a_newer_format_version_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_integer_key(f->path, "SPARTVER", 2);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "SPARTVER = 2");
    spart_weights_free(weights);
}

static void loading_an_invalid_shape_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_integer_key(f->path, "INDIM1", -3);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INDIM1 = -3");
    spart_weights_free(weights);
}

static void loading_axes_out_of_order_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_integer_key(f->path, "INAX1", 1); /* axes 2, 1: not ascending */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INAX1 = 1");
    spart_weights_free(weights);
}

static void loading_a_shape_that_disagrees_with_sizes_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_integer_key(f->path, "OUTDIM2", 7); /* OUTSIZE still says 6 */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "OUTSIZE = 6");
    spart_weights_free(weights);
}

static void loading_a_wrong_entry_count_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_integer_key(f->path, "NENTRIES", 11);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT,
                      "table WEIGHTS has 10 rows, but the primary header promises 11");
    spart_weights_free(weights);
}

static void loading_a_truncated_file_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    long size = file_size(f->path);
    /* Cut the file at every 997 bytes: through headers, tables and padding
     * (the last table's rows end early in its final 2880-byte block). */
    for (long length = size - 2880 + 40; length >= 0; length -= 997) {
        assert_int_equal(truncate(f->path, length), 0);
        assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "weights file");
    }
    spart_weights_free(weights);
}

static void loading_a_gap_between_elements_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_cell(f->path, "ELEMENTS", "START", 3, 6); /* element 3 starts at row 5 */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "element 3 has START = 6");
    spart_weights_free(weights);
}

static void loading_counts_that_miss_rows_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_cell(f->path, "ELEMENTS", "COUNT", 5, 0); /* the last row belongs to nobody */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "add up to 9 rows");
    spart_weights_free(weights);
}

static void loading_counts_past_the_table_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_cell(f->path, "ELEMENTS", "COUNT", 5, 2);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "element 5 has START = 9 and COUNT = 2");
    spart_weights_free(weights);
}

static void loading_an_output_index_out_of_range_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_cell(f->path, "WEIGHTS", "INDEX_OUT", 6, 6); /* 6 output cells: 0 to 5 */
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "row 6 of WEIGHTS (element 3, entry 1)");
    spart_weights_free(weights);
}

static void loading_a_negative_input_index_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    set_cell(f->path, "WEIGHTS", "INDEX_IN", 0, -1);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "INDEX_IN = -1");
    spart_weights_free(weights);
}

static void loading_a_file_without_a_table_is_a_format_error(void **state)
{
    fits_fixture *f = *state;
    spart_weights *weights = sample_weights(f->context);
    assert_int_equal(spart_weights_save(f->context, weights, f->path, 0), SPART_OK);
    fitsfile *file = open_for_update(f->path, "ELEMENTS");
    int status = 0;
    fits_delete_hdu(file, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
    assert_load_fails(f, SPART_ERROR_FILE_FORMAT, "no extension named ELEMENTS");
    spart_weights_free(weights);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip_is_bit_for_bit, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(round_trip_of_scalar_orthogonal_shape, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(round_trip_of_weights_without_entries, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(round_trip_of_weights_without_elements, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(round_trip_spans_many_chunks, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(path_is_taken_literally, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(save_cut_short_fails_and_leaves_nothing, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(save_refuses_to_replace_a_file, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(save_with_overwrite_replaces_a_file, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(save_leaves_only_the_file, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(failed_save_leaves_nothing, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(save_onto_a_folder_fails_and_leaves_no_temporary, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(save_into_a_missing_folder_is_an_io_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(null_arguments_are_refused, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_missing_file_is_an_io_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_folder_is_an_io_error, set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_text_file_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_another_fits_file_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_another_kind_of_spart_file_is_a_format_error,
                                        set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_newer_format_version_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_an_invalid_shape_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_axes_out_of_order_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_shape_that_disagrees_with_sizes_is_a_format_error,
                                        set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_wrong_entry_count_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_truncated_file_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_gap_between_elements_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_counts_that_miss_rows_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_counts_past_the_table_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_an_output_index_out_of_range_is_a_format_error,
                                        set_up, fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_negative_input_index_is_a_format_error, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(loading_a_file_without_a_table_is_a_format_error, set_up,
                                        fits_tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
