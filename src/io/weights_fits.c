/*
 * src/io/weights_fits.c: saving weights to a FITS file and loading them back.
 *
 * The layout (docs/formats.md, "Weights files") is meant to be read by
 * anyone with a FITS reader: an empty primary HDU whose keywords give the
 * kind of file, the format version and the shapes; a binary table WEIGHTS
 * with one row per entry (INDEX_IN, INDEX_OUT, VALUE) for all elements in
 * element order; and a binary table ELEMENTS with one row per orthogonal
 * element (START, COUNT) saying which rows of WEIGHTS are its entries.
 *
 * Weights can have a billion entries, so both tables move in chunks of rows
 * (CFITSIO's own optimal row count), never a row at a time, and the arrays
 * are read straight into the new object. A save writes a temporary file
 * beside the final name and renames it into place only when complete, so an
 * interrupted save never leaves a truncated file under the final name (the
 * pieces shared with regridder files are in fits_util.c).
 */
#include <stdio.h>
#include <string.h>

#include "io/fits_util.h"
#include "io/weights_fits.h"
#include "core/shape.h"
#include "weights/weights_internal.h"

/* The version of the layout this file writes and the only one it reads.
 * Raise it whenever docs/formats.md changes in a way old readers would
 * misread. */
#define WEIGHTS_FORMAT_VERSION 1
#define WEIGHTS_KIND "weights"
#define WEIGHTS_NOUN "weights"

/* CFITSIO's 64-bit integer columns take `long long` arrays; ours are int64_t. */
_Static_assert(sizeof(long long) == sizeof(int64_t), "long long must be 64 bits");

/* What the primary header says, and what the object needs, in one place:
 * filled from a weights object when saving, from the keywords when loading. */
typedef struct weights_header {
    spart_shape shape_orthogonal;
    spart_shape shape_input;
    spart_shape shape_output;
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t num_elements;
    int64_t num_entries;
    int64_t size_input;  /* resampled cells of one input element */
    int64_t size_output; /* likewise of one output element */
} weights_header;

/* ---- shapes and sizes ---------------------------------------------------------------- */

/* The product of the extents of `shape` along `axes`; -1 if it overflows. */
static int64_t resampled_size_checked(const spart_shape *shape, int num_axes, const int *axes)
{
    int64_t size = 1;
    for (int k = 0; k < num_axes; k++) {
        int64_t n = shape->dims[axes[k]];
        if (n != 0 && size > INT64_MAX / n) {
            return -1;
        }
        size *= n;
    }
    return size;
}

static void header_from_weights(const spart_weights *weights, weights_header *header)
{
    memset(header, 0, sizeof *header);
    header->shape_orthogonal = weights->shape_orthogonal;
    header->shape_input = weights->shape_input;
    header->shape_output = weights->shape_output;
    header->num_axis_input = weights->num_axis_input;
    header->num_axis_output = weights->num_axis_output;
    memcpy(header->axis_input, weights->axis_input, sizeof header->axis_input);
    memcpy(header->axis_output, weights->axis_output, sizeof header->axis_output);
    header->num_elements = weights->num_elements;
    header->num_entries = weights->offsets[weights->num_elements];
    header->size_input = weights->size_input;
    header->size_output = weights->size_output;
}

/* ---- saving ---------------------------------------------------------------------------- */

static void write_primary_header(fitsfile *file, const weights_header *header, int *fits_status)
{
    long long num_elements = header->num_elements;
    long long num_entries = header->num_entries;
    long long size_input = header->size_input;
    long long size_output = header->size_output;
    spart_fits_write_identity(file, WEIGHTS_KIND, WEIGHTS_FORMAT_VERSION, fits_status);
    fits_write_key(file, TLONGLONG, "NELEM", &num_elements,
                   "orthogonal elements (rows of ELEMENTS)", fits_status);
    fits_write_key(file, TLONGLONG, "NENTRIES", &num_entries,
                   "entries of all elements (rows of WEIGHTS)", fits_status);
    fits_write_key(file, TLONGLONG, "INSIZE", &size_input, "INDEX_IN lies in [0, INSIZE)",
                   fits_status);
    fits_write_key(file, TLONGLONG, "OUTSIZE", &size_output, "INDEX_OUT lies in [0, OUTSIZE)",
                   fits_status);
    spart_fits_write_shape_keys(file, "ORT", "orthogonal", &header->shape_orthogonal, fits_status);
    spart_fits_write_shape_keys(file, "IN", "input", &header->shape_input, fits_status);
    spart_fits_write_shape_keys(file, "OUT", "output", &header->shape_output, fits_status);
    spart_fits_write_axes_keys(file, "IN", "input", header->num_axis_input, header->axis_input,
                               fits_status);
    spart_fits_write_axes_keys(file, "OUT", "output", header->num_axis_output, header->axis_output,
                               fits_status);
    /* One card per line, each under the 72 characters a COMMENT card holds. */
    static const char *const explanation[] = {
        "Regridding weights written by the spart library (docs/formats.md).",
        "Element e, the flat C-order index into the orthogonal shape, owns",
        "rows START[e] to START[e]+COUNT[e]-1 of table WEIGHTS (table",
        "ELEMENTS; rows counted from 0). INDEX_IN and INDEX_OUT are flat",
        "C-order indices, from 0, over the resampled axes of the input and",
        "output shapes. Axis numbers in keywords count from 0, as NumPy's.",
    };
    for (size_t k = 0; k < sizeof explanation / sizeof explanation[0]; k++) {
        fits_write_comment(file, explanation[k], fits_status);
    }
}

static void write_weights_table(fitsfile *file, const spart_weights *weights, int *fits_status)
{
    char *names[] = {"INDEX_IN", "INDEX_OUT", "VALUE"};
    char *formats[] = {"K", "K", "D"};
    char *comments[] = {"0-based flat index over resampled input axes",
                        "0-based flat index over resampled output axes",
                        "weight of the input cell in the output cell"};
    int64_t total = weights->offsets[weights->num_elements];
    spart_fits_create_table(file, "WEIGHTS", total, 3, names, formats, comments, fits_status);
    int64_t chunk = spart_fits_chunk_rows(file, fits_status);
    for (int64_t first = 0; first < total && *fits_status == 0; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        fits_write_col(file, TLONGLONG, 1, row, 1, (LONGLONG)n, weights->indices_input + first,
                       fits_status);
        fits_write_col(file, TLONGLONG, 2, row, 1, (LONGLONG)n, weights->indices_output + first,
                       fits_status);
        fits_write_col(file, TDOUBLE, 3, row, 1, (LONGLONG)n, weights->values + first, fits_status);
    }
}

/* ELEMENTS: START is the offsets array itself; COUNT goes through a buffer
 * of one chunk. Returns SPART_ERROR_OUT_OF_MEMORY if that buffer fails. */
static spart_status write_elements_table(spart_context *context, fitsfile *file,
                                         const spart_weights *weights, int *fits_status)
{
    char *names[] = {"START", "COUNT"};
    char *formats[] = {"K", "K"};
    char *comments[] = {"first row of WEIGHTS of this element (0-based)",
                        "number of rows of WEIGHTS of this element"};
    int64_t num_elements = weights->num_elements;
    spart_fits_create_table(file, "ELEMENTS", num_elements, 2, names, formats, comments,
                            fits_status);
    int64_t chunk = spart_fits_chunk_rows(file, fits_status);
    if (*fits_status != 0 || num_elements == 0) {
        return SPART_OK;
    }
    int64_t buffer_rows = num_elements < chunk ? num_elements : chunk;
    int64_t *counts = spart_alloc(&context->allocator, (size_t)buffer_rows, sizeof *counts);
    if (counts == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "could not save weights: no memory for %lld element counts",
                          (long long)buffer_rows);
    }
    for (int64_t first = 0; first < num_elements && *fits_status == 0; first += chunk) {
        int64_t n = num_elements - first < chunk ? num_elements - first : chunk;
        for (int64_t k = 0; k < n; k++) {
            counts[k] = weights->offsets[first + k + 1] - weights->offsets[first + k];
        }
        LONGLONG row = (LONGLONG)first + 1;
        fits_write_col(file, TLONGLONG, 1, row, 1, (LONGLONG)n, weights->offsets + first,
                       fits_status);
        fits_write_col(file, TLONGLONG, 2, row, 1, (LONGLONG)n, counts, fits_status);
    }
    spart_free(&context->allocator, counts);
    return SPART_OK;
}

/* Write every HDU of `object` (the weights) into the open, empty file. */
static spart_status write_weights_file(const spart_fits_io *io, const void *object)
{
    const spart_weights *weights = object;
    weights_header header;
    header_from_weights(weights, &header);
    int fits_status = 0;
    write_primary_header(io->file, &header, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_writing(io, "writing the primary header", fits_status);
    }
    write_weights_table(io->file, weights, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_writing(io, "writing table WEIGHTS", fits_status);
    }
    spart_status status = write_elements_table(io->context, io->file, weights, &fits_status);
    if (status != SPART_OK) {
        return status;
    }
    if (fits_status != 0) {
        return spart_fits_fail_writing(io, "writing table ELEMENTS", fits_status);
    }
    return SPART_OK;
}

spart_status spart_weights_save(spart_context *context, const spart_weights *weights,
                                const char *path, int overwrite)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights is NULL");
    }
    spart_status on_host = spart_weights_require_host(context, weights, "weights_save");
    if (on_host != SPART_OK) {
        return on_host;
    }
    if (path == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "path is NULL");
    }
    if (path[0] == '\0') {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "path is empty");
    }
    spart_fits_io io = {context, WEIGHTS_NOUN, path, NULL};
    return spart_fits_save(&io, overwrite, write_weights_file, weights);
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Everything the primary header says, checked for consistency. */
static spart_status read_primary_header(const spart_fits_io *io, weights_header *header)
{
    memset(header, 0, sizeof *header);
    spart_status status = spart_fits_check_identity(io, WEIGHTS_KIND, WEIGHTS_FORMAT_VERSION);
    if (status == SPART_OK) {
        status = spart_fits_read_shape_keys(io, "ORT", &header->shape_orthogonal);
    }
    if (status == SPART_OK) {
        status = spart_fits_read_shape_keys(io, "IN", &header->shape_input);
    }
    if (status == SPART_OK) {
        status = spart_fits_read_shape_keys(io, "OUT", &header->shape_output);
    }
    if (status == SPART_OK) {
        status = spart_fits_read_axes_keys(io, "IN", &header->shape_input, &header->num_axis_input,
                                           header->axis_input);
    }
    if (status == SPART_OK) {
        status = spart_fits_read_axes_keys(io, "OUT", &header->shape_output,
                                           &header->num_axis_output, header->axis_output);
    }
    if (status != SPART_OK) {
        return status;
    }
    header->num_elements = spart_shape_size(&header->shape_orthogonal);
    header->size_input =
        resampled_size_checked(&header->shape_input, header->num_axis_input, header->axis_input);
    header->size_output =
        resampled_size_checked(&header->shape_output, header->num_axis_output, header->axis_output);
    if (header->size_input < 0 || header->size_output < 0) {
        return spart_fits_format_error(io, "the resampled axes have more cells than int64 can "
                                           "count");
    }
    status =
        spart_fits_check_count(io, "NELEM", header->num_elements, "the orthogonal shape ORTDIMk");
    if (status == SPART_OK) {
        status =
            spart_fits_check_count(io, "INSIZE", header->size_input, "the resampled input axes");
    }
    if (status == SPART_OK) {
        status =
            spart_fits_check_count(io, "OUTSIZE", header->size_output, "the resampled output axes");
    }
    if (status == SPART_OK) {
        status = spart_fits_read_integer_key(io, "NENTRIES", &header->num_entries);
    }
    if (status == SPART_OK && header->num_entries < 0) {
        return spart_fits_format_error(io, "NENTRIES = %lld is negative",
                                       (long long)header->num_entries);
    }
    return status;
}

/* Read ELEMENTS into offsets, checking that element e starts where element
 * e - 1 ended, that no count is negative and that the counts add up to the
 * rows of WEIGHTS. */
static spart_status read_elements(const spart_fits_io *io, const weights_header *header,
                                  int64_t *offsets)
{
    char *columns[] = {"START", "COUNT"};
    const int types[] = {TLONGLONG, TLONGLONG};
    int numbers[2];
    int64_t num_elements = header->num_elements;
    spart_status status =
        spart_fits_open_table(io, "ELEMENTS", num_elements, 2, columns, types, numbers);
    if (status != SPART_OK) {
        return status;
    }
    const spart_allocator *allocator = &io->context->allocator;
    int fits_status = 0;
    int64_t chunk = spart_fits_chunk_rows(io->file, &fits_status);
    int64_t buffer_rows = num_elements < chunk ? num_elements : chunk;
    int64_t *starts = spart_alloc(allocator, (size_t)buffer_rows + 1, sizeof *starts);
    int64_t *counts = spart_alloc(allocator, (size_t)buffer_rows + 1, sizeof *counts);
    if (starts == NULL || counts == NULL) {
        spart_free(allocator, starts);
        spart_free(allocator, counts);
        return spart_fail(io->context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights file %s: no memory to read %lld element rows", io->path,
                          (long long)buffer_rows);
    }
    int64_t end = 0; /* where the previous element's rows ended */
    offsets[0] = 0;
    for (int64_t first = 0; first < num_elements && status == SPART_OK; first += chunk) {
        int64_t n = num_elements - first < chunk ? num_elements - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        fits_read_col(io->file, TLONGLONG, numbers[0], row, 1, (LONGLONG)n, NULL, starts, NULL,
                      &fits_status);
        fits_read_col(io->file, TLONGLONG, numbers[1], row, 1, (LONGLONG)n, NULL, counts, NULL,
                      &fits_status);
        if (fits_status != 0) {
            status = spart_fits_fail_reading(io, "reading table ELEMENTS", fits_status);
            break;
        }
        for (int64_t k = 0; k < n; k++) {
            int64_t e = first + k;
            if (starts[k] != end || counts[k] < 0 || counts[k] > header->num_entries - end) {
                status = spart_fits_format_error(
                    io,
                    "element %lld has START = %lld and COUNT = %lld, but elements must follow "
                    "one another from row 0 (expected START = %lld) within the %lld rows of "
                    "WEIGHTS",
                    (long long)e, (long long)starts[k], (long long)counts[k], (long long)end,
                    (long long)header->num_entries);
                break;
            }
            end += counts[k];
            offsets[e + 1] = end;
        }
    }
    spart_free(allocator, starts);
    spart_free(allocator, counts);
    if (status == SPART_OK && end != header->num_entries) {
        status = spart_fits_format_error(io,
                                         "the elements' COUNT add up to %lld rows, but WEIGHTS "
                                         "has %lld",
                                         (long long)end, (long long)header->num_entries);
    }
    return status;
}

/* The element whose rows include `row`: the last e with offsets[e] <= row. */
static int64_t element_of_row(const int64_t *offsets, int64_t num_elements, int64_t row)
{
    int64_t low = 0;
    int64_t high = num_elements - 1;
    while (low < high) {
        int64_t middle = low + (high - low + 1) / 2;
        if (offsets[middle] <= row) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    return low;
}

/* Check one chunk of rows [first, first + n) for indices in range. */
static spart_status check_indices(const spart_fits_io *io, const spart_weights *weights,
                                  int64_t first, int64_t n)
{
    for (int64_t row = first; row < first + n; row++) {
        int64_t in = weights->indices_input[row];
        int64_t out = weights->indices_output[row];
        if (in >= 0 && in < weights->size_input && out >= 0 && out < weights->size_output) {
            continue;
        }
        int64_t e = element_of_row(weights->offsets, weights->num_elements, row);
        return spart_fits_format_error(
            io,
            "row %lld of WEIGHTS (element %lld, entry %lld) has "
            "INDEX_IN = %lld and INDEX_OUT = %lld, outside [0, "
            "INSIZE = %lld) and [0, OUTSIZE = %lld)",
            (long long)row, (long long)e, (long long)(row - weights->offsets[e]), (long long)in,
            (long long)out, (long long)weights->size_input, (long long)weights->size_output);
    }
    return SPART_OK;
}

/* Make WEIGHTS the current HDU, with `rows` rows and its three columns. */
static spart_status open_weights_table(const spart_fits_io *io, int64_t rows, int *numbers)
{
    char *columns[] = {"INDEX_IN", "INDEX_OUT", "VALUE"};
    const int types[] = {TLONGLONG, TLONGLONG, TDOUBLE};
    return spart_fits_open_table(io, "WEIGHTS", rows, 3, columns, types, numbers);
}

/* Read WEIGHTS straight into the object's arrays, a chunk at a time. */
static spart_status read_weights_table(const spart_fits_io *io, spart_weights *weights)
{
    int numbers[3];
    int64_t total = weights->offsets[weights->num_elements];
    spart_status status = open_weights_table(io, total, numbers);
    if (status != SPART_OK) {
        return status;
    }
    int fits_status = 0;
    int64_t chunk = spart_fits_chunk_rows(io->file, &fits_status);
    for (int64_t first = 0; first < total && status == SPART_OK; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        /* A NULL null value turns off CFITSIO's NaN substitution: values
         * come back bit for bit, NaN payloads and negative zeros included. */
        fits_read_col(io->file, TLONGLONG, numbers[0], row, 1, (LONGLONG)n, NULL,
                      weights->indices_input + first, NULL, &fits_status);
        fits_read_col(io->file, TLONGLONG, numbers[1], row, 1, (LONGLONG)n, NULL,
                      weights->indices_output + first, NULL, &fits_status);
        fits_read_col(io->file, TDOUBLE, numbers[2], row, 1, (LONGLONG)n, NULL,
                      weights->values + first, NULL, &fits_status);
        if (fits_status != 0) {
            return spart_fits_fail_reading(io, "reading table WEIGHTS", fits_status);
        }
        status = check_indices(io, weights, first, n);
    }
    return status;
}

/* Read and check the whole of the open file into a new object. */
static spart_status read_weights_file(const spart_fits_io *io, spart_weights **weights)
{
    weights_header header;
    spart_status status = read_primary_header(io, &header);
    if (status != SPART_OK) {
        return status;
    }
    /* WEIGHTS must have NENTRIES rows before that number sizes an
     * allocation and the elements are checked against it. */
    int numbers[3];
    status = open_weights_table(io, header.num_entries, numbers);
    if (status != SPART_OK) {
        return status;
    }
    spart_weights *made = spart_weights_allocate(
        &io->context->allocator, &header.shape_orthogonal, &header.shape_input,
        &header.shape_output, header.num_axis_input, header.axis_input, header.num_axis_output,
        header.axis_output, header.num_entries);
    if (made == NULL) {
        return spart_fail(io->context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights file %s: could not allocate %lld elements and %lld entries",
                          io->path, (long long)header.num_elements, (long long)header.num_entries);
    }
    status = read_elements(io, &header, made->offsets);
    if (status == SPART_OK) {
        status = read_weights_table(io, made);
    }
    if (status != SPART_OK) {
        spart_weights_free(made);
        return status;
    }
    *weights = made;
    return SPART_OK;
}

spart_status spart_weights_load(spart_context *context, const char *path, spart_weights **weights)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "weights: the output pointer is NULL");
    }
    *weights = NULL;
    if (path == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "path is NULL");
    }
    spart_fits_io io = {context, WEIGHTS_NOUN, path, NULL};
    spart_status status = spart_fits_open_to_load(&io);
    if (status == SPART_OK) {
        status = read_weights_file(&io, weights);
    }
    spart_fits_close_loaded(&io);
    return status;
}

/* ---- the streamed reader's opening (src/io/weights_fits.h) ----------------------------- */

spart_status spart_weights_fits_read_shell(const spart_fits_io *io, spart_weights **shell,
                                           int *columns)
{
    *shell = NULL;
    weights_header header;
    spart_status status = read_primary_header(io, &header);
    if (status == SPART_OK) {
        status = open_weights_table(io, header.num_entries, columns);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_weights *made =
        spart_weights_allocate(&io->context->allocator, &header.shape_orthogonal,
                               &header.shape_input, &header.shape_output, header.num_axis_input,
                               header.axis_input, header.num_axis_output, header.axis_output, 0);
    if (made == NULL) {
        return spart_fail(io->context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights file %s: could not allocate the offsets of %lld elements",
                          io->path, (long long)header.num_elements);
    }
    status = read_elements(io, &header, made->offsets);
    if (status == SPART_OK) {
        status = open_weights_table(io, header.num_entries, columns);
    }
    if (status != SPART_OK) {
        spart_weights_free(made);
        return status;
    }
    *shell = made;
    return SPART_OK;
}
