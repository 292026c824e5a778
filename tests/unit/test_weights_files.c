/*
 * tests/unit/test_weights_files.c: weights files as a stream
 * (spart_weights_files_open) for the streamed assembly: one file, and the
 * same weights cut by element ranges into three files, each streamed in
 * blocks smaller than an element, give spart_regridder_create's CSR
 * arrays bit for bit; the block count is as documented; files of other
 * shapes, missing files, damaged files and bad arguments refused with
 * sentences.
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_fits_util.h"
#include "test_util.h"
#include "test_stream_util.h"

#define PLENTY ((size_t)1 << 30)

static int set_up(void **state)
{
    return fits_set_up(state, "weights-files", "all.fits");
}

/* Weights holding only elements [first, last) of `weights` (the others
 * empty), same shapes: one piece of the weights cut by element ranges. */
static spart_weights *element_range(spart_context *context, const spart_weights *weights,
                                    int64_t first, int64_t last)
{
    const int64_t *offsets, *in, *out;
    const double *values;
    assert_int_equal(spart_weights_arrays(weights, &offsets, &in, &out, &values), SPART_OK);
    int64_t num_elements = spart_weights_num_elements(weights);
    int64_t *range = calloc((size_t)num_elements + 1, sizeof(int64_t));
    int64_t begin = offsets[first];
    for (int64_t e = 0; e < num_elements; e++) {
        int64_t count = e >= first && e < last ? offsets[e + 1] - offsets[e] : 0;
        range[e + 1] = range[e] + count;
    }
    spart_shape orthogonal = spart_weights_shape_orthogonal(weights);
    spart_shape input = spart_weights_shape_input(weights);
    spart_shape output = spart_weights_shape_output(weights);
    int n_in = 0, n_out = 0, axes_in[SPART_MAX_NDIM], axes_out[SPART_MAX_NDIM];
    spart_weights_axes(weights, &n_in, axes_in, &n_out, axes_out);
    spart_weights *made = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, n_in,
                                                      axes_in, n_out, axes_out, range, in + begin,
                                                      out + begin, values + begin, &made),
                     SPART_OK);
    free(range);
    return made;
}

/* Stream `paths` in blocks of block_entries and compare with `reference`. */
static void stream_files_and_compare(spart_context *context, int num_files,
                                     const char *const *paths, int64_t block_entries,
                                     const spart_regridder *reference,
                                     const spart_regridder_options *options,
                                     int64_t expected_blocks)
{
    spart_weights_files *files = NULL;
    spart_weights_stream stream;
    if (spart_weights_files_open(context, num_files, paths, block_entries, &files, &stream) !=
        SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    assert_int_equal(stream.num_blocks, expected_blocks);
    assert_int_equal(stream.max_block_entries, block_entries);
    spart_regridder *streamed = NULL;
    if (spart_regridder_create_streamed(context, &stream, options, 0, PLENTY, &streamed, NULL) !=
        SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    assert_same_host_csr(reference, streamed);
    spart_regridder_free(streamed);
    spart_weights_files_close(files);
}

static void one_file_and_three_files_equal_the_memory_assembly(void **state)
{
    fits_fixture *f = *state;
    spart_context *context = f->context;
    spart_weights *weights = stream_weights(context, 21, 300);
    spart_regridder_options options = stream_options(SPART_FLOAT32, 1);
    spart_regridder *reference = NULL;
    assert_int_equal(spart_regridder_create(context, weights, &options, &reference), SPART_OK);
    assert_int_equal(spart_weights_save(context, weights, f->path, 0), SPART_OK);
    int64_t n = spart_weights_num_entries(weights);
    const char *one[1] = {f->path};
    stream_files_and_compare(context, 1, one, 45, reference, &options, (n + 44) / 45);
    stream_files_and_compare(context, 1, one, n + 1, reference, &options, 1);

    /* elements [0, 5), [5, 6) and [6, 12) in three files */
    const int64_t cuts[4] = {0, 5, 6, 12};
    char names[3][160];
    const char *three[3];
    const int64_t *offsets;
    assert_int_equal(spart_weights_arrays(weights, &offsets, NULL, NULL, NULL), SPART_OK);
    int64_t blocks = 0;
    for (int k = 0; k < 3; k++) {
        spart_weights *piece = element_range(context, weights, cuts[k], cuts[k + 1]);
        snprintf(names[k], sizeof names[k], "%s/piece%d.fits", f->folder, k);
        assert_int_equal(spart_weights_save(context, piece, names[k], 0), SPART_OK);
        three[k] = names[k];
        blocks += (offsets[cuts[k + 1]] - offsets[cuts[k]] + 29) / 30;
        spart_weights_free(piece);
    }
    stream_files_and_compare(context, 3, three, 30, reference, &options, blocks);
    spart_regridder_free(reference);
    spart_weights_free(weights);
}

static void files_of_other_shapes_and_missing_files_are_refused(void **state)
{
    fits_fixture *f = *state;
    spart_context *context = f->context;
    spart_weights *weights = stream_weights(context, 22, 50);
    spart_weights *other = stream_weights_sized(context, 23, 50, 24);
    char other_path[160];
    snprintf(other_path, sizeof other_path, "%s/other.fits", f->folder);
    assert_int_equal(spart_weights_save(context, weights, f->path, 1), SPART_OK);
    assert_int_equal(spart_weights_save(context, other, other_path, 0), SPART_OK);
    spart_weights_files *files = (spart_weights_files *)f; /* poisoned */
    spart_weights_stream stream;
    const char *mixed[2] = {f->path, other_path};
    assert_int_equal(spart_weights_files_open(context, 2, mixed, 16, &files, &stream),
                     SPART_ERROR_FILE_FORMAT);
    assert_null(files);
    assert_non_null(strstr(spart_context_error(context), "other shapes"));
    char missing[160];
    snprintf(missing, sizeof missing, "%s/missing.fits", f->folder);
    const char *absent[2] = {f->path, missing};
    assert_int_equal(spart_weights_files_open(context, 2, absent, 16, &files, &stream),
                     SPART_ERROR_IO);
    assert_non_null(strstr(spart_context_error(context), "missing.fits"));
    const char *one[1] = {f->path};
    assert_int_equal(spart_weights_files_open(context, 1, one, 0, &files, &stream),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_weights_files_open(context, 0, one, 16, &files, &stream),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_weights_files_open(context, 1, NULL, 16, &files, &stream),
                     SPART_ERROR_NULL_POINTER);
    const char *null_path[1] = {NULL};
    assert_int_equal(spart_weights_files_open(context, 1, null_path, 16, &files, &stream),
                     SPART_ERROR_NULL_POINTER);
    spart_weights_files_close(NULL);
    spart_weights_free(other);
    spart_weights_free(weights);
}

/* A file replaced between the opening and the assembly by one whose
 * elements differ is refused, naming the file, through the block
 * function's status. */
static void a_file_changed_after_opening_is_refused(void **state)
{
    fits_fixture *f = *state;
    spart_context *context = f->context;
    spart_weights *weights = stream_weights(context, 24, 80);
    spart_weights *changed = stream_weights(context, 25, 80);
    assert_int_equal(spart_weights_save(context, weights, f->path, 1), SPART_OK);
    const char *one[1] = {f->path};
    spart_weights_files *files = NULL;
    spart_weights_stream stream;
    assert_int_equal(spart_weights_files_open(context, 1, one, 20, &files, &stream), SPART_OK);
    assert_int_equal(spart_weights_save(context, changed, f->path, 1), SPART_OK);
    spart_regridder *streamed = NULL;
    spart_status status =
        spart_regridder_create_streamed(context, &stream, NULL, 0, PLENTY, &streamed, NULL);
    assert_int_equal(status, SPART_ERROR_FILE_FORMAT);
    assert_null(streamed);
    assert_non_null(strstr(spart_context_error(context), "elements changed"));
    spart_weights_files_close(files);
    spart_weights_free(changed);
    spart_weights_free(weights);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_file_and_three_files_equal_the_memory_assembly, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(files_of_other_shapes_and_missing_files_are_refused, set_up,
                                        fits_tear_down),
        cmocka_unit_test_setup_teardown(a_file_changed_after_opening_is_refused, set_up,
                                        fits_tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
