/*
 * src/weights_fits.c: saving weights to a FITS file and loading them back.
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
 * interrupted save never leaves a truncated file under the final name.
 *
 * POSIX is needed for mkstemp, link, fsync and stat.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fitsio.h>

#include "shape.h"
#include "weights_internal.h"

/* The version of the layout this file writes and the only one it reads.
 * Raise it whenever docs/formats.md changes in a way old readers would
 * misread. */
#define WEIGHTS_FORMAT_VERSION 1
#define WEIGHTS_KIND "weights"

/* CFITSIO's 64-bit integer columns take `long long` arrays; ours are int64_t. */
_Static_assert(sizeof(long long) == sizeof(int64_t), "long long must be 64 bits");

/* Room for CFITSIO's status text and its stack of messages, joined. */
#define FITS_MESSAGE_LENGTH 320

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

/* ---- messages ---------------------------------------------------------------------- */

/* CFITSIO's sentence for `fits_status` followed by the messages on its
 * stack (which name the file and the routine), joined by " / "; the stack
 * is emptied so the next failure starts clean. */
static const char *fits_message(int fits_status, char *buffer, size_t size)
{
    char text[FLEN_STATUS];
    char line[FLEN_ERRMSG];
    fits_get_errstatus(fits_status, text);
    snprintf(buffer, size, "CFITSIO error %d (%s)", fits_status, text);
    size_t used = strlen(buffer);
    while (fits_read_errmsg(line) != 0) {
        if (used + 4 < size) {
            snprintf(buffer + used, size - used, " / %s", line);
            used = strlen(buffer);
        }
    }
    return buffer;
}

/* A failure of CFITSIO while reading `path`: a file that CFITSIO could read
 * but did not make sense of (too short, a header it cannot parse) is a
 * format error; running out of memory is not the file's fault. */
static spart_status fail_reading(spart_context *context, const char *path, const char *doing,
                                 int fits_status)
{
    char message[FITS_MESSAGE_LENGTH];
    fits_message(fits_status, message, sizeof message);
    if (fits_status == MEMORY_ALLOCATION) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights file %s: %s: %s", path,
                          doing, message);
    }
    const char *hint = fits_status == END_OF_FILE || fits_status == READ_ERROR
                           ? " (the file ends early: truncated?)"
                           : "";
    return spart_fail(context, SPART_ERROR_FILE_FORMAT, "weights file %s: %s%s: %s", path, doing,
                      hint, message);
}

static spart_status fail_writing(spart_context *context, const char *path, const char *doing,
                                 int fits_status)
{
    char message[FITS_MESSAGE_LENGTH];
    fits_message(fits_status, message, sizeof message);
    return spart_fail(context, SPART_ERROR_IO, "could not save weights to %s: %s: %s", path, doing,
                      message);
}

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

/* Keyword `prefix` `stem` `k`, such as INDIM0 (k < 0: no number, INNDIM).
 * Names stay within FITS's 8 characters for k < SPART_MAX_NDIM. */
static void make_key(char *key, const char *prefix, const char *stem, int k)
{
    int length = k < 0 ? snprintf(key, FLEN_KEYWORD, "%s%s", prefix, stem)
                       : snprintf(key, FLEN_KEYWORD, "%s%s%d", prefix, stem, k);
    (void)length; /* the names above always fit */
}

/* Keywords <prefix>NDIM and <prefix>DIM0 ... (axis 0 first, NumPy order). */
static void write_shape_keys(fitsfile *file, const char *prefix, const char *what,
                             const spart_shape *shape, int *fits_status)
{
    char key[FLEN_KEYWORD];
    char comment[FLEN_COMMENT];
    int ndim = shape->ndim;
    make_key(key, prefix, "NDIM", -1);
    snprintf(comment, sizeof comment, "number of axes of the %s shape", what);
    fits_write_key(file, TINT, key, &ndim, comment, fits_status);
    for (int k = 0; k < shape->ndim; k++) {
        long long extent = shape->dims[k];
        make_key(key, prefix, "DIM", k);
        snprintf(comment, sizeof comment, "%s shape, length of axis %d", what, k);
        fits_write_key(file, TLONGLONG, key, &extent, comment, fits_status);
    }
}

/* Keywords <prefix>NAX and <prefix>AX0 ...: the resampled axes, ascending. */
static void write_axes_keys(fitsfile *file, const char *prefix, const char *what, int num_axes,
                            const int *axes, int *fits_status)
{
    char key[FLEN_KEYWORD];
    char comment[FLEN_COMMENT];
    make_key(key, prefix, "NAX", -1);
    snprintf(comment, sizeof comment, "number of resampled axes of the %s", what);
    fits_write_key(file, TINT, key, &num_axes, comment, fits_status);
    for (int k = 0; k < num_axes; k++) {
        int axis = axes[k];
        make_key(key, prefix, "AX", k);
        snprintf(comment, sizeof comment, "resampled axis of the %s (0 = first)", what);
        fits_write_key(file, TINT, key, &axis, comment, fits_status);
    }
}

static void write_primary_header(fitsfile *file, const weights_header *header, int *fits_status)
{
    int version = WEIGHTS_FORMAT_VERSION;
    long long num_elements = header->num_elements;
    long long num_entries = header->num_entries;
    long long size_input = header->size_input;
    long long size_output = header->size_output;
    fits_create_img(file, BYTE_IMG, 0, NULL, fits_status);
    fits_write_key(file, TSTRING, "SPARTKND", WEIGHTS_KIND, "kind of spart file", fits_status);
    fits_write_key(file, TINT, "SPARTVER", &version, "version of the spart weights layout",
                   fits_status);
    fits_write_key(file, TSTRING, "SPARTLIB", (char *)spart_version(),
                   "version of the spart library that wrote this", fits_status);
    fits_write_key(file, TLONGLONG, "NELEM", &num_elements,
                   "orthogonal elements (rows of ELEMENTS)", fits_status);
    fits_write_key(file, TLONGLONG, "NENTRIES", &num_entries,
                   "entries of all elements (rows of WEIGHTS)", fits_status);
    fits_write_key(file, TLONGLONG, "INSIZE", &size_input, "INDEX_IN lies in [0, INSIZE)",
                   fits_status);
    fits_write_key(file, TLONGLONG, "OUTSIZE", &size_output, "INDEX_OUT lies in [0, OUTSIZE)",
                   fits_status);
    write_shape_keys(file, "ORT", "orthogonal", &header->shape_orthogonal, fits_status);
    write_shape_keys(file, "IN", "input", &header->shape_input, fits_status);
    write_shape_keys(file, "OUT", "output", &header->shape_output, fits_status);
    write_axes_keys(file, "IN", "input", header->num_axis_input, header->axis_input, fits_status);
    write_axes_keys(file, "OUT", "output", header->num_axis_output, header->axis_output,
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

/* A binary table named `name` of `rows` rows with 64-bit integer or double
 * columns, each column's TTYPE card carrying a comment that explains it. */
static void create_table(fitsfile *file, const char *name, int64_t rows, int num_columns,
                         char **names, char **formats, char **comments, int *fits_status)
{
    fits_create_tbl(file, BINARY_TBL, (LONGLONG)rows, num_columns, names, formats, NULL, name,
                    fits_status);
    for (int c = 0; c < num_columns; c++) {
        char key[FLEN_KEYWORD];
        make_key(key, "TTYPE", "", c + 1);
        fits_modify_comment(file, key, comments[c], fits_status);
    }
}

/* How many rows to move per call: CFITSIO's optimum for its buffers. */
static int64_t chunk_rows(fitsfile *file, int *fits_status)
{
    long rows = 1;
    fits_get_rowsize(file, &rows, fits_status);
    return rows > 0 ? (int64_t)rows : 1;
}

static void write_weights_table(fitsfile *file, const spart_weights *weights, int *fits_status)
{
    char *names[] = {"INDEX_IN", "INDEX_OUT", "VALUE"};
    char *formats[] = {"K", "K", "D"};
    char *comments[] = {"0-based flat index over resampled input axes",
                        "0-based flat index over resampled output axes",
                        "weight of the input cell in the output cell"};
    int64_t total = weights->offsets[weights->num_elements];
    create_table(file, "WEIGHTS", total, 3, names, formats, comments, fits_status);
    int64_t chunk = chunk_rows(file, fits_status);
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
    create_table(file, "ELEMENTS", num_elements, 2, names, formats, comments, fits_status);
    int64_t chunk = chunk_rows(file, fits_status);
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

/* Write every HDU into the open, empty `file`. */
static spart_status write_weights_file(spart_context *context, fitsfile *file,
                                       const spart_weights *weights, const char *path)
{
    weights_header header;
    header_from_weights(weights, &header);
    int fits_status = 0;
    write_primary_header(file, &header, &fits_status);
    if (fits_status != 0) {
        return fail_writing(context, path, "writing the primary header", fits_status);
    }
    write_weights_table(file, weights, &fits_status);
    if (fits_status != 0) {
        return fail_writing(context, path, "writing table WEIGHTS", fits_status);
    }
    spart_status status = write_elements_table(context, file, weights, &fits_status);
    if (status != SPART_OK) {
        return status;
    }
    if (fits_status != 0) {
        return fail_writing(context, path, "writing table ELEMENTS", fits_status);
    }
    return SPART_OK;
}

static int path_exists(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0;
}

/* Make "<path>.partial-XXXXXX" a fresh name nobody else uses: mkstemp
 * reserves it, and we remove its empty file again because CFITSIO only
 * creates files that do not exist (and then with the usual permissions,
 * not mkstemp's 0600). */
static spart_status reserve_temporary_name(spart_context *context, const char *path,
                                           char **temporary)
{
    static const char suffix[] = ".partial-XXXXXX";
    size_t length = strlen(path);
    char *name = spart_alloc(&context->allocator, length + sizeof suffix, 1);
    if (name == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "could not save weights to %s: no memory for a file name", path);
    }
    memcpy(name, path, length);
    memcpy(name + length, suffix, sizeof suffix);
    int descriptor = mkstemp(name);
    if (descriptor < 0) {
        int error = errno;
        spart_free(&context->allocator, name);
        return spart_fail(context, SPART_ERROR_IO,
                          "could not save weights to %s: cannot create a file beside it: %s", path,
                          strerror(error));
    }
    close(descriptor);
    remove(name);
    *temporary = name;
    return SPART_OK;
}

/* Push the finished file's bytes to the disk before it takes the final
 * name, so that a crash after the rename cannot leave a short file. */
static int flush_to_disk(const char *name)
{
    int descriptor = open(name, O_RDONLY);
    if (descriptor < 0) {
        return -1;
    }
    int result = fsync(descriptor);
    close(descriptor);
    return result;
}

/* Give the finished temporary file its final name. Without overwrite,
 * link() refuses atomically to replace a file that appeared while we were
 * writing; on file systems without hard links we fall back to rename(),
 * relying on the check made before writing. */
static spart_status move_into_place(spart_context *context, const char *temporary, const char *path,
                                    int overwrite)
{
    if (!overwrite) {
        if (link(temporary, path) == 0) {
            remove(temporary);
            return SPART_OK;
        }
        if (errno == EEXIST) {
            return spart_fail(context, SPART_ERROR_IO,
                              "could not save weights: %s already exists (pass overwrite = 1 "
                              "to replace it)",
                              path);
        }
    }
    if (rename(temporary, path) != 0) {
        return spart_fail(context, SPART_ERROR_IO, "could not save weights: renaming %s to %s: %s",
                          temporary, path, strerror(errno));
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
    if (path == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "path is NULL");
    }
    if (path[0] == '\0') {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "path is empty");
    }
    if (!overwrite && path_exists(path)) {
        return spart_fail(context, SPART_ERROR_IO,
                          "could not save weights: %s already exists (pass overwrite = 1 to "
                          "replace it)",
                          path);
    }
    char *temporary = NULL;
    spart_status status = reserve_temporary_name(context, path, &temporary);
    if (temporary == NULL) { /* set only on success */
        return status;
    }
    fitsfile *file = NULL;
    int fits_status = 0;
    fits_create_diskfile(&file, temporary, &fits_status);
    if (fits_status != 0) {
        status = fail_writing(context, path, "creating a file beside it", fits_status);
        spart_free(&context->allocator, temporary);
        return status;
    }
    status = write_weights_file(context, file, weights, path);
    if (status != SPART_OK) {
        int ignored = 0;
        fits_delete_file(file, &ignored); /* closes and removes the temporary */
        fits_clear_errmsg();
        spart_free(&context->allocator, temporary);
        return status;
    }
    fits_close_file(file, &fits_status);
    if (fits_status != 0) {
        status = fail_writing(context, path, "closing the file", fits_status);
    } else if (flush_to_disk(temporary) != 0) {
        status =
            spart_fail(context, SPART_ERROR_IO, "could not save weights to %s: flushing %s: %s",
                       path, temporary, strerror(errno));
    } else {
        status = move_into_place(context, temporary, path, overwrite);
    }
    if (status != SPART_OK) {
        remove(temporary);
    }
    spart_free(&context->allocator, temporary);
    return status;
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Read integer keyword `key` of the current HDU, which must be there. */
static spart_status read_integer_key(spart_context *context, fitsfile *file, const char *path,
                                     const char *key, int64_t *value)
{
    long long number = 0;
    int fits_status = 0;
    fits_read_key(file, TLONGLONG, key, &number, NULL, &fits_status);
    if (fits_status == KEY_NO_EXIST) {
        fits_clear_errmsg();
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: keyword %s is missing from the primary header", path,
                          key);
    }
    if (fits_status != 0) {
        char message[FITS_MESSAGE_LENGTH];
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: keyword %s is not an integer: %s", path, key,
                          fits_message(fits_status, message, sizeof message));
    }
    *value = (int64_t)number;
    return SPART_OK;
}

/* The kind and version keywords: is this a weights file we can read? */
static spart_status check_kind_and_version(spart_context *context, fitsfile *file, const char *path)
{
    char kind[FLEN_VALUE];
    int fits_status = 0;
    fits_read_key(file, TSTRING, "SPARTKND", kind, NULL, &fits_status);
    if (fits_status != 0) {
        fits_clear_errmsg();
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: not a spart weights file (the primary header has no "
                          "string keyword SPARTKND)",
                          path);
    }
    if (strcmp(kind, WEIGHTS_KIND) != 0) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: SPARTKND = '%s', expected '%s': this spart file does "
                          "not hold weights",
                          path, kind, WEIGHTS_KIND);
    }
    int64_t version = 0;
    spart_status status = read_integer_key(context, file, path, "SPARTVER", &version);
    if (status != SPART_OK) {
        return status;
    }
    if (version != WEIGHTS_FORMAT_VERSION) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: format version SPARTVER = %lld, but this library "
                          "(spart %s) reads version %d",
                          path, (long long)version, spart_version(), WEIGHTS_FORMAT_VERSION);
    }
    return SPART_OK;
}

/* Keywords <prefix>NDIM and <prefix>DIMk into a valid shape. */
static spart_status read_shape_keys(spart_context *context, fitsfile *file, const char *path,
                                    const char *prefix, spart_shape *shape)
{
    char key[FLEN_KEYWORD];
    int64_t ndim = 0;
    make_key(key, prefix, "NDIM", -1);
    spart_status status = read_integer_key(context, file, path, key, &ndim);
    if (status != SPART_OK) {
        return status;
    }
    if (ndim < 0 || ndim > SPART_MAX_NDIM) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: %s = %lld is outside [0, %d]", path, key,
                          (long long)ndim, SPART_MAX_NDIM);
    }
    memset(shape, 0, sizeof *shape);
    shape->ndim = (int)ndim;
    for (int k = 0; k < shape->ndim; k++) {
        make_key(key, prefix, "DIM", k);
        status = read_integer_key(context, file, path, key, &shape->dims[k]);
        if (status != SPART_OK) {
            return status;
        }
        if (shape->dims[k] < 0) {
            return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                              "weights file %s: %s = %lld is negative", path, key,
                              (long long)shape->dims[k]);
        }
    }
    if (spart_shape_size(shape) < 0) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: the shape given by %sDIMk has more elements than "
                          "int64 can count",
                          path, prefix);
    }
    return SPART_OK;
}

/* Keywords <prefix>NAX and <prefix>AXk: ascending axes of `shape`. */
static spart_status read_axes_keys(spart_context *context, fitsfile *file, const char *path,
                                   const char *prefix, const spart_shape *shape, int *num_axes,
                                   int *axes)
{
    char key[FLEN_KEYWORD];
    int64_t count = 0;
    make_key(key, prefix, "NAX", -1);
    spart_status status = read_integer_key(context, file, path, key, &count);
    if (status != SPART_OK) {
        return status;
    }
    if (count < 0 || count > shape->ndim) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: %s = %lld is outside [0, %sNDIM = %d]", path, key,
                          (long long)count, prefix, shape->ndim);
    }
    *num_axes = (int)count;
    for (int k = 0; k < *num_axes; k++) {
        int64_t axis = 0;
        make_key(key, prefix, "AX", k);
        status = read_integer_key(context, file, path, key, &axis);
        if (status != SPART_OK) {
            return status;
        }
        int lowest = k == 0 ? 0 : axes[k - 1] + 1;
        if (axis < lowest || axis >= shape->ndim) {
            return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                              "weights file %s: %s = %lld: resampled axes must be ascending "
                              "and in [0, %sNDIM = %d)",
                              path, key, (long long)axis, prefix, shape->ndim);
        }
        axes[k] = (int)axis;
    }
    return SPART_OK;
}

/* A count keyword must agree with what the shapes imply. */
static spart_status check_count(spart_context *context, fitsfile *file, const char *path,
                                const char *key, int64_t expected, const char *because)
{
    int64_t value = 0;
    spart_status status = read_integer_key(context, file, path, key, &value);
    if (status != SPART_OK) {
        return status;
    }
    if (value != expected) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: %s = %lld, but %s gives %lld", path, key,
                          (long long)value, because, (long long)expected);
    }
    return SPART_OK;
}

/* Everything the primary header says, checked for consistency. */
static spart_status read_primary_header(spart_context *context, fitsfile *file, const char *path,
                                        weights_header *header)
{
    memset(header, 0, sizeof *header);
    spart_status status = check_kind_and_version(context, file, path);
    if (status == SPART_OK) {
        status = read_shape_keys(context, file, path, "ORT", &header->shape_orthogonal);
    }
    if (status == SPART_OK) {
        status = read_shape_keys(context, file, path, "IN", &header->shape_input);
    }
    if (status == SPART_OK) {
        status = read_shape_keys(context, file, path, "OUT", &header->shape_output);
    }
    if (status == SPART_OK) {
        status = read_axes_keys(context, file, path, "IN", &header->shape_input,
                                &header->num_axis_input, header->axis_input);
    }
    if (status == SPART_OK) {
        status = read_axes_keys(context, file, path, "OUT", &header->shape_output,
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
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: the resampled axes have more cells than int64 can "
                          "count",
                          path);
    }
    status = check_count(context, file, path, "NELEM", header->num_elements,
                         "the orthogonal shape ORTDIMk");
    if (status == SPART_OK) {
        status = check_count(context, file, path, "INSIZE", header->size_input,
                             "the resampled input axes");
    }
    if (status == SPART_OK) {
        status = check_count(context, file, path, "OUTSIZE", header->size_output,
                             "the resampled output axes");
    }
    if (status == SPART_OK) {
        status = read_integer_key(context, file, path, "NENTRIES", &header->num_entries);
    }
    if (status == SPART_OK && header->num_entries < 0) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: NENTRIES = %lld is negative", path,
                          (long long)header->num_entries);
    }
    return status;
}

/* Make table `name` the current HDU, check it has `rows` rows, and find its
 * columns, each a scalar of the CFITSIO type in `types`. */
static spart_status open_table(spart_context *context, fitsfile *file, const char *path,
                               const char *name, int64_t rows, int num_columns, char **columns,
                               const int *types, int *numbers)
{
    int fits_status = 0;
    int hdu_type = 0;
    for (int c = 0; c < num_columns; c++) {
        numbers[c] = 0;
    }
    fits_movnam_hdu(file, ANY_HDU, (char *)name, 0, &fits_status);
    if (fits_status == BAD_HDU_NUM) {
        fits_clear_errmsg();
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: there is no extension named %s", path, name);
    }
    fits_get_hdu_type(file, &hdu_type, &fits_status);
    if (fits_status != 0) {
        return fail_reading(context, path, "finding its tables", fits_status);
    }
    if (hdu_type != BINARY_TBL) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: extension %s is not a binary table", path, name);
    }
    LONGLONG found_rows = 0;
    fits_get_num_rowsll(file, &found_rows, &fits_status);
    if (fits_status != 0) {
        return fail_reading(context, path, "counting table rows", fits_status);
    }
    if (found_rows != rows) {
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: table %s has %lld rows, but the primary header "
                          "promises %lld",
                          path, name, (long long)found_rows, (long long)rows);
    }
    for (int c = 0; c < num_columns; c++) {
        int type = 0;
        long repeat = 0;
        long width = 0;
        fits_get_colnum(file, CASEINSEN, columns[c], &numbers[c], &fits_status);
        fits_get_coltype(file, numbers[c], &type, &repeat, &width, &fits_status);
        if (fits_status != 0) {
            fits_clear_errmsg();
            return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                              "weights file %s: table %s has no column %s", path, name, columns[c]);
        }
        if (type != types[c] || repeat != 1) {
            return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                              "weights file %s: column %s of table %s has type code %d and "
                              "repeat %ld, expected one %s per row",
                              path, columns[c], name, type, repeat,
                              types[c] == TDOUBLE ? "double (D)" : "64-bit integer (K)");
        }
    }
    return SPART_OK;
}

/* Read ELEMENTS into offsets, checking that element e starts where element
 * e - 1 ended, that no count is negative and that the counts add up to the
 * rows of WEIGHTS. */
static spart_status read_elements(spart_context *context, fitsfile *file, const char *path,
                                  const weights_header *header, int64_t *offsets)
{
    char *columns[] = {"START", "COUNT"};
    const int types[] = {TLONGLONG, TLONGLONG};
    int numbers[2];
    int64_t num_elements = header->num_elements;
    spart_status status =
        open_table(context, file, path, "ELEMENTS", num_elements, 2, columns, types, numbers);
    if (status != SPART_OK) {
        return status;
    }
    int fits_status = 0;
    int64_t chunk = chunk_rows(file, &fits_status);
    int64_t buffer_rows = num_elements < chunk ? num_elements : chunk;
    int64_t *starts = spart_alloc(&context->allocator, (size_t)buffer_rows + 1, sizeof *starts);
    int64_t *counts = spart_alloc(&context->allocator, (size_t)buffer_rows + 1, sizeof *counts);
    if (starts == NULL || counts == NULL) {
        spart_free(&context->allocator, starts);
        spart_free(&context->allocator, counts);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights file %s: no memory to read %lld element rows", path,
                          (long long)buffer_rows);
    }
    int64_t end = 0; /* where the previous element's rows ended */
    offsets[0] = 0;
    for (int64_t first = 0; first < num_elements && status == SPART_OK; first += chunk) {
        int64_t n = num_elements - first < chunk ? num_elements - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        fits_read_col(file, TLONGLONG, numbers[0], row, 1, (LONGLONG)n, NULL, starts, NULL,
                      &fits_status);
        fits_read_col(file, TLONGLONG, numbers[1], row, 1, (LONGLONG)n, NULL, counts, NULL,
                      &fits_status);
        if (fits_status != 0) {
            status = fail_reading(context, path, "reading table ELEMENTS", fits_status);
            break;
        }
        for (int64_t k = 0; k < n; k++) {
            int64_t e = first + k;
            if (starts[k] != end || counts[k] < 0 || counts[k] > header->num_entries - end) {
                status = spart_fail(
                    context, SPART_ERROR_FILE_FORMAT,
                    "weights file %s: element %lld has START = %lld and COUNT = %lld, but "
                    "elements must follow one another from row 0 (expected START = %lld) "
                    "within the %lld rows of WEIGHTS",
                    path, (long long)e, (long long)starts[k], (long long)counts[k], (long long)end,
                    (long long)header->num_entries);
                break;
            }
            end += counts[k];
            offsets[e + 1] = end;
        }
    }
    spart_free(&context->allocator, starts);
    spart_free(&context->allocator, counts);
    if (status == SPART_OK && end != header->num_entries) {
        status = spart_fail(context, SPART_ERROR_FILE_FORMAT,
                            "weights file %s: the elements' COUNT add up to %lld rows, but "
                            "WEIGHTS has %lld",
                            path, (long long)end, (long long)header->num_entries);
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
static spart_status check_indices(spart_context *context, const char *path,
                                  const spart_weights *weights, int64_t first, int64_t n)
{
    for (int64_t row = first; row < first + n; row++) {
        int64_t in = weights->indices_input[row];
        int64_t out = weights->indices_output[row];
        if (in >= 0 && in < weights->size_input && out >= 0 && out < weights->size_output) {
            continue;
        }
        int64_t e = element_of_row(weights->offsets, weights->num_elements, row);
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: row %lld of WEIGHTS (element %lld, entry %lld) has "
                          "INDEX_IN = %lld and INDEX_OUT = %lld, outside [0, INSIZE = %lld) and "
                          "[0, OUTSIZE = %lld)",
                          path, (long long)row, (long long)e,
                          (long long)(row - weights->offsets[e]), (long long)in, (long long)out,
                          (long long)weights->size_input, (long long)weights->size_output);
    }
    return SPART_OK;
}

/* Make WEIGHTS the current HDU, with `rows` rows and its three columns. */
static spart_status open_weights_table(spart_context *context, fitsfile *file, const char *path,
                                       int64_t rows, int *numbers)
{
    char *columns[] = {"INDEX_IN", "INDEX_OUT", "VALUE"};
    const int types[] = {TLONGLONG, TLONGLONG, TDOUBLE};
    return open_table(context, file, path, "WEIGHTS", rows, 3, columns, types, numbers);
}

/* Read WEIGHTS straight into the object's arrays, a chunk at a time. */
static spart_status read_weights_table(spart_context *context, fitsfile *file, const char *path,
                                       spart_weights *weights)
{
    int numbers[3];
    int64_t total = weights->offsets[weights->num_elements];
    spart_status status = open_weights_table(context, file, path, total, numbers);
    if (status != SPART_OK) {
        return status;
    }
    int fits_status = 0;
    int64_t chunk = chunk_rows(file, &fits_status);
    for (int64_t first = 0; first < total && status == SPART_OK; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        /* A NULL null value turns off CFITSIO's NaN substitution: values
         * come back bit for bit, NaN payloads and negative zeros included. */
        fits_read_col(file, TLONGLONG, numbers[0], row, 1, (LONGLONG)n, NULL,
                      weights->indices_input + first, NULL, &fits_status);
        fits_read_col(file, TLONGLONG, numbers[1], row, 1, (LONGLONG)n, NULL,
                      weights->indices_output + first, NULL, &fits_status);
        fits_read_col(file, TDOUBLE, numbers[2], row, 1, (LONGLONG)n, NULL, weights->values + first,
                      NULL, &fits_status);
        if (fits_status != 0) {
            return fail_reading(context, path, "reading table WEIGHTS", fits_status);
        }
        status = check_indices(context, path, weights, first, n);
    }
    return status;
}

/* Read and check the whole of the open `file` into a new object. */
static spart_status read_weights_file(spart_context *context, fitsfile *file, const char *path,
                                      spart_weights **weights)
{
    weights_header header;
    spart_status status = read_primary_header(context, file, path, &header);
    if (status != SPART_OK) {
        return status;
    }
    /* WEIGHTS must have NENTRIES rows before that number sizes an
     * allocation and the elements are checked against it. */
    int numbers[3];
    status = open_weights_table(context, file, path, header.num_entries, numbers);
    if (status != SPART_OK) {
        return status;
    }
    spart_weights *made =
        spart_weights_allocate(&context->allocator, &header.shape_orthogonal, &header.shape_input,
                               &header.shape_output, header.num_axis_input, header.axis_input,
                               header.num_axis_output, header.axis_output, header.num_entries);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "weights file %s: could not allocate %lld elements and %lld entries",
                          path, (long long)header.num_elements, (long long)header.num_entries);
    }
    status = read_elements(context, file, path, &header, made->offsets);
    if (status == SPART_OK) {
        status = read_weights_table(context, file, path, made);
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
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
        return spart_fail(context, SPART_ERROR_IO,
                          "could not load weights: %s is a directory, not a file", path);
    }
    fitsfile *file = NULL;
    int fits_status = 0;
    fits_open_diskfile(&file, path, READONLY, &fits_status);
    if (fits_status == FILE_NOT_OPENED || fits_status == TOO_MANY_FILES) {
        char message[FITS_MESSAGE_LENGTH];
        return spart_fail(context, SPART_ERROR_IO, "could not open weights file %s: %s", path,
                          fits_message(fits_status, message, sizeof message));
    }
    if (fits_status == MEMORY_ALLOCATION) {
        return fail_reading(context, path, "opening it", fits_status);
    }
    if (fits_status != 0) {
        char message[FITS_MESSAGE_LENGTH];
        return spart_fail(context, SPART_ERROR_FILE_FORMAT,
                          "weights file %s: not a FITS file (or a damaged one): %s", path,
                          fits_message(fits_status, message, sizeof message));
    }
    spart_status status = read_weights_file(context, file, path, weights);
    int ignored = 0;
    fits_close_file(file, &ignored);
    fits_clear_errmsg();
    return status;
}
