/*
 * src/io/weights_files.c: weights files as a stream for the streamed
 * assembly (spart_weights_files_open, include/spart/regridder.h): the
 * headers and element tables of every file read and checked when opened
 * (src/io/weights_fits.c, as spart_weights_load reads them), then blocks
 * of at most block_entries rows of table WEIGHTS read when the assembly
 * asks, file after file, into the object's own buffers. One file is open
 * at a time. The assembly checks every index itself.
 */
#include <string.h>

#include "core/shape.h"
#include "io/weights_fits.h"
#include "spart/regridder.h"

#define FILES_NOUN "weights"

/* One file of the stream. */
typedef struct stream_file {
    char *path;
    int64_t num_entries;
    int64_t *offsets;    /* num_elements + 1, its ELEMENTS */
    int64_t first_block; /* the stream's block where it starts */
} stream_file;

struct spart_weights_files {
    spart_context *context; /* reads report here (the opening's context) */
    spart_allocator allocator;
    int num_files;
    stream_file *files;
    int64_t num_elements;
    int64_t block_entries;
    int64_t num_blocks;
    /* the open file, or -1 */
    int open_index;
    spart_fits_io io;
    int columns[3];
    /* the yielded block */
    int64_t *offsets;
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
};

void spart_weights_files_close(spart_weights_files *files)
{
    if (files == NULL) {
        return;
    }
    const spart_allocator allocator = files->allocator;
    if (files->open_index >= 0) {
        spart_fits_close_loaded(&files->io);
    }
    for (int f = 0; f < files->num_files && files->files != NULL; f++) {
        spart_free(&allocator, files->files[f].path);
        spart_free(&allocator, files->files[f].offsets);
    }
    spart_free(&allocator, files->files);
    spart_free(&allocator, files->offsets);
    spart_free(&allocator, files->indices_input);
    spart_free(&allocator, files->indices_output);
    spart_free(&allocator, files->values);
    spart_free(&allocator, files);
}

/* Make file `index` the open one, at table WEIGHTS (its shell read again
 * and dropped: the header and elements were checked when opened). */
static spart_status open_file(spart_weights_files *files, int index)
{
    if (files->open_index == index) {
        return SPART_OK;
    }
    if (files->open_index >= 0) {
        spart_fits_close_loaded(&files->io);
        files->open_index = -1;
    }
    spart_fits_io io = {files->context, FILES_NOUN, files->files[index].path, NULL};
    spart_status status = spart_fits_open_to_load(&io);
    spart_weights *shell = NULL;
    if (status == SPART_OK) {
        status = spart_weights_fits_read_shell(&io, &shell, files->columns);
    }
    if (status == SPART_OK &&
        (spart_weights_num_entries(shell) != files->files[index].num_entries ||
         memcmp(shell->offsets, files->files[index].offsets,
                ((size_t)files->num_elements + 1) * sizeof(int64_t)) != 0)) {
        status = spart_fits_format_error(&io, "its elements changed since it was opened");
    }
    spart_weights_free(shell);
    if (status != SPART_OK) {
        spart_fits_close_loaded(&io);
        return status;
    }
    files->io = io;
    files->open_index = index;
    return SPART_OK;
}

/* The last e with offsets[e] <= row. */
static int64_t element_of_row(const int64_t *offsets, int64_t num_elements, int64_t row)
{
    int64_t low = 0, high = num_elements;
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (offsets[middle] <= row) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

/* The stream's block function: rows of one file into the buffers. */
static spart_status files_block(void *user_data, int64_t block, int pass,
                                spart_weights_block *result)
{
    (void)pass;
    spart_weights_files *files = user_data;
    int f = 0;
    while (f + 1 < files->num_files && files->files[f + 1].first_block <= block) {
        f++;
    }
    const stream_file *file = &files->files[f];
    int64_t begin = (block - file->first_block) * files->block_entries;
    int64_t end = begin + files->block_entries < file->num_entries ? begin + files->block_entries
                                                                   : file->num_entries;
    spart_status status = open_file(files, f);
    if (status != SPART_OK) {
        return status;
    }
    int64_t first = element_of_row(file->offsets, files->num_elements, begin);
    int64_t last = element_of_row(file->offsets, files->num_elements, end - 1);
    result->first_element = first;
    result->num_elements = last - first + 1;
    for (int64_t j = 0; j <= result->num_elements; j++) {
        int64_t at = j == 0 ? begin : (j == result->num_elements ? end : file->offsets[first + j]);
        files->offsets[j] = at - begin;
    }
    int fits_status = 0;
    LONGLONG row = (LONGLONG)begin + 1, n = (LONGLONG)(end - begin);
    /* A NULL null value keeps values bit for bit (as spart_weights_load). */
    fits_read_col(files->io.file, TLONGLONG, files->columns[0], row, 1, n, NULL,
                  files->indices_input, NULL, &fits_status);
    fits_read_col(files->io.file, TLONGLONG, files->columns[1], row, 1, n, NULL,
                  files->indices_output, NULL, &fits_status);
    fits_read_col(files->io.file, TDOUBLE, files->columns[2], row, 1, n, NULL, files->values, NULL,
                  &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_reading(&files->io, "reading table WEIGHTS", fits_status);
    }
    result->offsets = files->offsets;
    result->indices_input = files->indices_input;
    result->indices_output = files->indices_output;
    result->values = files->values;
    return SPART_OK;
}

/* Whether two shells have the same shapes and axes. */
static int same_layout(const spart_weights *a, const spart_weights *b)
{
    return spart_shape_equal(&a->shape_orthogonal, &b->shape_orthogonal) &&
           spart_shape_equal(&a->shape_input, &b->shape_input) &&
           spart_shape_equal(&a->shape_output, &b->shape_output) &&
           a->num_axis_input == b->num_axis_input && a->num_axis_output == b->num_axis_output &&
           memcmp(a->axis_input, b->axis_input, sizeof a->axis_input) == 0 &&
           memcmp(a->axis_output, b->axis_output, sizeof a->axis_output) == 0;
}

/* Read file f's header and elements into files->files[f] (the stream's
 * shapes from the first file). */
static spart_status read_file(spart_weights_files *files, int f, const char *path,
                              spart_weights_stream *stream, spart_weights **first_shell)
{
    stream_file *file = &files->files[f];
    size_t length = strlen(path) + 1;
    file->path = spart_alloc(&files->allocator, length, 1);
    if (file->path == NULL) {
        return spart_fail(files->context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights files: out of memory");
    }
    memcpy(file->path, path, length);
    spart_fits_io io = {files->context, FILES_NOUN, file->path, NULL};
    spart_weights *shell = NULL;
    int columns[3];
    spart_status status = spart_fits_open_to_load(&io);
    if (status == SPART_OK) {
        status = spart_weights_fits_read_shell(&io, &shell, columns);
    }
    spart_fits_close_loaded(&io);
    if (status != SPART_OK) {
        return status;
    }
    if (f == 0) {
        *first_shell = shell;
        files->num_elements = shell->num_elements;
        stream->shape_orthogonal = shell->shape_orthogonal;
        stream->shape_input = shell->shape_input;
        stream->shape_output = shell->shape_output;
        stream->num_axis_input = shell->num_axis_input;
        stream->num_axis_output = shell->num_axis_output;
        memcpy(stream->axis_input, shell->axis_input, sizeof stream->axis_input);
        memcpy(stream->axis_output, shell->axis_output, sizeof stream->axis_output);
    } else if (*first_shell == NULL || !same_layout(shell, *first_shell)) {
        spart_weights_free(shell);
        return spart_fail(files->context, SPART_ERROR_FILE_FORMAT,
                          "weights files: %s has other shapes or resampled axes than %s; the "
                          "files of one stream must have the same",
                          path, files->files[0].path);
    }
    file->offsets = shell->offsets; /* taken over */
    shell->offsets = NULL;
    file->num_entries = file->offsets[files->num_elements];
    if (f > 0) {
        spart_weights_free(shell);
    }
    return SPART_OK;
}

static spart_status open_files(spart_weights_files *files, const char *const *paths,
                               spart_weights_stream *stream)
{
    spart_weights *first_shell = NULL;
    spart_status status = SPART_OK;
    for (int f = 0; f < files->num_files && status == SPART_OK; f++) {
        if (paths[f] == NULL) {
            status = spart_fail(files->context, SPART_ERROR_NULL_POINTER, "paths[%d] is NULL", f);
        } else {
            status = read_file(files, f, paths[f], stream, &first_shell);
        }
    }
    spart_weights_free(first_shell);
    if (status != SPART_OK) {
        return status;
    }
    for (int f = 0; f < files->num_files; f++) {
        stream_file *file = &files->files[f];
        file->first_block = files->num_blocks;
        files->num_blocks += (file->num_entries + files->block_entries - 1) / files->block_entries;
    }
    size_t n = (size_t)files->block_entries;
    files->offsets =
        spart_alloc(&files->allocator, (size_t)files->num_elements + 1, sizeof(int64_t));
    files->indices_input = spart_alloc(&files->allocator, n, sizeof(int64_t));
    files->indices_output = spart_alloc(&files->allocator, n, sizeof(int64_t));
    files->values = spart_alloc(&files->allocator, n, sizeof(double));
    if (files->offsets == NULL || files->indices_input == NULL || files->indices_output == NULL ||
        files->values == NULL) {
        return spart_fail(files->context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights files: no memory for blocks of %lld entries",
                          (long long)files->block_entries);
    }
    stream->num_blocks = files->num_blocks;
    stream->max_block_entries = files->block_entries;
    stream->function = files_block;
    stream->user_data = files;
    return SPART_OK;
}

spart_status spart_weights_files_open(spart_context *context, int num_files,
                                      const char *const *paths, int64_t block_entries,
                                      spart_weights_files **files, spart_weights_stream *stream)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (files == NULL || stream == NULL || paths == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "paths, files and stream must not be NULL");
    }
    *files = NULL;
    spart_weights_stream_init(stream);
    if (num_files < 1 || block_entries < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_files = %d and block_entries = %lld must be at least 1", num_files,
                          (long long)block_entries);
    }
    spart_weights_files *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    stream_file *list = spart_alloc_zero(&context->allocator, (size_t)num_files, sizeof *list);
    if (made == NULL || list == NULL) {
        spart_free(&context->allocator, made);
        spart_free(&context->allocator, list);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights files: out of memory");
    }
    made->context = context;
    made->allocator = context->allocator;
    made->num_files = num_files;
    made->files = list;
    made->block_entries = block_entries;
    made->open_index = -1;
    spart_status status = open_files(made, paths, stream);
    if (status != SPART_OK) {
        spart_weights_files_close(made);
        spart_weights_stream_init(stream);
        return status;
    }
    *files = made;
    return SPART_OK;
}
