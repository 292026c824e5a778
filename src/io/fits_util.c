/*
 * src/io/fits_util.c: the pieces the FITS files of weights and regridders
 * share (see fits_util.h): messages, keywords, tables, the atomic save and
 * the checked open.
 *
 * POSIX is needed for mkstemp, link, fsync and stat.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fits_util.h"
#include "io/fits_scan.h"

/* ---- messages ---------------------------------------------------------------------- */

const char *spart_fits_message(int fits_status, char *buffer, size_t size)
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

spart_status spart_fits_format_error(const spart_fits_io *io, const char *format, ...)
{
    char text[SPART_ERROR_LENGTH];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    return spart_fail(io->context, SPART_ERROR_FILE_FORMAT, "%s file %s: %s", io->noun, io->path,
                      text);
}

/* A file that CFITSIO could read but did not make sense of (too short, a
 * header it cannot parse) is a format error; running out of memory is not
 * the file's fault. */
spart_status spart_fits_fail_reading(const spart_fits_io *io, const char *doing, int fits_status)
{
    char message[SPART_FITS_MESSAGE_LENGTH];
    spart_fits_message(fits_status, message, sizeof message);
    if (fits_status == MEMORY_ALLOCATION) {
        return spart_fail(io->context, SPART_ERROR_OUT_OF_MEMORY, "%s file %s: %s: %s", io->noun,
                          io->path, doing, message);
    }
    const char *hint = fits_status == END_OF_FILE || fits_status == READ_ERROR
                           ? " (the file ends early: truncated?)"
                           : "";
    return spart_fits_format_error(io, "%s%s: %s", doing, hint, message);
}

spart_status spart_fits_fail_writing(const spart_fits_io *io, const char *doing, int fits_status)
{
    /* A full disk or a size limit: the system's reason first, in words,
     * and only CFITSIO's status after it (its stack of messages would push
     * the reason past the end of the sentence). Only these errno values
     * are trusted here: they come from writes alone. */
    int reason = errno;
    if (reason == ENOSPC || reason == EFBIG
#ifdef EDQUOT
        || reason == EDQUOT
#endif
    ) {
        char text[FLEN_STATUS];
        fits_get_errstatus(fits_status, text);
        fits_clear_errmsg();
        return spart_fail(io->context, SPART_ERROR_IO,
                          "could not save %s to %s: %s: %s (CFITSIO %d, %s)", io->noun, io->path,
                          doing, strerror(reason), fits_status, text);
    }
    char message[SPART_FITS_MESSAGE_LENGTH];
    spart_fits_message(fits_status, message, sizeof message);
    return spart_fail(io->context, SPART_ERROR_IO, "could not save %s to %s: %s: %s", io->noun,
                      io->path, doing, message);
}

/* ---- keywords and tables -------------------------------------------------------------- */

/* Names stay within FITS's 8 characters for the prefixes and stems spart
 * uses and k < SPART_MAX_NDIM. */
void spart_fits_make_key(char *key, const char *prefix, const char *stem, int k)
{
    int length = k < 0 ? snprintf(key, FLEN_KEYWORD, "%s%s", prefix, stem)
                       : snprintf(key, FLEN_KEYWORD, "%s%s%d", prefix, stem, k);
    (void)length; /* the names always fit */
}

int64_t spart_fits_chunk_rows(fitsfile *file, int *fits_status)
{
    long rows = 1;
    fits_get_rowsize(file, &rows, fits_status);
    return rows > 0 ? (int64_t)rows : 1;
}

void spart_fits_write_shape_keys(fitsfile *file, const char *prefix, const char *what,
                                 const spart_shape *shape, int *fits_status)
{
    char key[FLEN_KEYWORD];
    char comment[FLEN_COMMENT];
    int ndim = shape->ndim;
    spart_fits_make_key(key, prefix, "NDIM", -1);
    snprintf(comment, sizeof comment, "number of axes of the %s shape", what);
    fits_write_key(file, TINT, key, &ndim, comment, fits_status);
    for (int k = 0; k < shape->ndim; k++) {
        long long extent = shape->dims[k];
        spart_fits_make_key(key, prefix, "DIM", k);
        snprintf(comment, sizeof comment, "%s shape, length of axis %d", what, k);
        fits_write_key(file, TLONGLONG, key, &extent, comment, fits_status);
    }
}

/* Keywords <prefix>NAX and <prefix>AX0 ...: the resampled axes, ascending. */
void spart_fits_write_axes_keys(fitsfile *file, const char *prefix, const char *what, int num_axes,
                                const int *axes, int *fits_status)
{
    char key[FLEN_KEYWORD];
    char comment[FLEN_COMMENT];
    spart_fits_make_key(key, prefix, "NAX", -1);
    snprintf(comment, sizeof comment, "number of resampled axes of the %s", what);
    fits_write_key(file, TINT, key, &num_axes, comment, fits_status);
    for (int k = 0; k < num_axes; k++) {
        int axis = axes[k];
        spart_fits_make_key(key, prefix, "AX", k);
        snprintf(comment, sizeof comment, "resampled axis of the %s (0 = first)", what);
        fits_write_key(file, TINT, key, &axis, comment, fits_status);
    }
}

void spart_fits_write_identity(fitsfile *file, const char *kind, int version, int *fits_status)
{
    char comment[FLEN_COMMENT];
    fits_create_img(file, BYTE_IMG, 0, NULL, fits_status);
    fits_write_key(file, TSTRING, "SPARTKND", (char *)kind, "kind of spart file", fits_status);
    snprintf(comment, sizeof comment, "version of the spart %s layout", kind);
    fits_write_key(file, TINT, "SPARTVER", &version, comment, fits_status);
    fits_write_key(file, TSTRING, "SPARTLIB", (char *)spart_version(),
                   "version of the spart library that wrote this", fits_status);
}

void spart_fits_create_table(fitsfile *file, const char *name, int64_t rows, int num_columns,
                             char **names, char **formats, char **comments, int *fits_status)
{
    fits_create_tbl(file, BINARY_TBL, (LONGLONG)rows, num_columns, names, formats, NULL, name,
                    fits_status);
    for (int c = 0; c < num_columns; c++) {
        char key[FLEN_KEYWORD];
        spart_fits_make_key(key, "TTYPE", "", c + 1);
        fits_modify_comment(file, key, comments[c], fits_status);
    }
}

/* ---- saving ------------------------------------------------------------------------------ */

static int path_exists(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0;
}

static spart_status already_exists(const spart_fits_io *io)
{
    return spart_fail(io->context, SPART_ERROR_IO,
                      "could not save %s: %s already exists (pass overwrite = 1 to replace it)",
                      io->noun, io->path);
}

/* Make "<path>.partial-XXXXXX" a fresh name nobody else uses: mkstemp
 * reserves it, and we remove its empty file again because CFITSIO only
 * creates files that do not exist (and then with the usual permissions,
 * not mkstemp's 0600). */
static spart_status reserve_temporary_name(const spart_fits_io *io, char **temporary)
{
    static const char suffix[] = ".partial-XXXXXX";
    size_t length = strlen(io->path);
    char *name = spart_alloc(&io->context->allocator, length + sizeof suffix, 1);
    if (name == NULL) {
        return spart_fail(io->context, SPART_ERROR_OUT_OF_MEMORY,
                          "could not save %s to %s: no memory for a file name", io->noun, io->path);
    }
    memcpy(name, io->path, length);
    memcpy(name + length, suffix, sizeof suffix);
    int descriptor = mkstemp(name);
    if (descriptor < 0) {
        int error = errno;
        spart_free(&io->context->allocator, name);
        return spart_fail(io->context, SPART_ERROR_IO,
                          "could not save %s to %s: cannot create a file beside it: %s", io->noun,
                          io->path, strerror(error));
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
static spart_status move_into_place(const spart_fits_io *io, const char *temporary, int overwrite)
{
    if (!overwrite) {
        if (link(temporary, io->path) == 0) {
            remove(temporary);
            return SPART_OK;
        }
        if (errno == EEXIST) {
            return already_exists(io);
        }
    }
    if (rename(temporary, io->path) != 0) {
        return spart_fail(io->context, SPART_ERROR_IO, "could not save %s: renaming %s to %s: %s",
                          io->noun, temporary, io->path, strerror(errno));
    }
    return SPART_OK;
}

/* Write, close, flush and move the temporary file into place; on failure
 * remove it. */
/* The byte where the last HDU of `file` ends (its padded data included). */
static long long file_end(fitsfile *file, int *fits_status)
{
    int count = 0;
    LONGLONG header_start = 0, data_start = 0, data_end = 0;
    fits_get_num_hdus(file, &count, fits_status);
    fits_movabs_hdu(file, count, NULL, fits_status);
    fits_get_hduaddrll(file, &header_start, &data_start, &data_end, fits_status);
    return (long long)data_end;
}

static spart_status write_and_place(spart_fits_io *io, const char *temporary, int overwrite,
                                    spart_fits_writer write, const void *object)
{
    int fits_status = 0;
    errno = 0; /* spart_fits_fail_writing reads the reason of a failed write */
    fits_create_diskfile(&io->file, temporary, &fits_status);
    if (fits_status != 0) {
        io->file = NULL;
        return spart_fits_fail_writing(io, "creating a file beside it", fits_status);
    }
    spart_status status = write(io, object);
    if (status != SPART_OK) {
        int ignored = 0;
        fits_delete_file(io->file, &ignored); /* closes and removes the temporary */
        fits_clear_errmsg();
        io->file = NULL;
        return status;
    }
    /* The size the file must have: the end of its last HDU. CFITSIO can
     * miss a failed write in its last flush (a full disk, a file size
     * limit), so the size on disk is checked against it after closing. */
    long long expected = file_end(io->file, &fits_status);
    fits_close_file(io->file, &fits_status);
    io->file = NULL;
    struct stat written = {0};
    if (fits_status != 0) {
        status = spart_fits_fail_writing(io, "closing the file", fits_status);
    } else if (stat(temporary, &written) != 0 || (long long)written.st_size != expected) {
        status = spart_fail(io->context, SPART_ERROR_IO,
                            "could not save %s to %s: %s holds %lld bytes of %lld (disk full or "
                            "a file size limit?)",
                            io->noun, io->path, temporary, (long long)written.st_size, expected);
    } else if (flush_to_disk(temporary) != 0) {
        status = spart_fail(io->context, SPART_ERROR_IO, "could not save %s to %s: flushing %s: %s",
                            io->noun, io->path, temporary, strerror(errno));
    } else {
        status = move_into_place(io, temporary, overwrite);
    }
    if (status != SPART_OK) {
        remove(temporary);
    }
    return status;
}

spart_status spart_fits_save(spart_fits_io *io, int overwrite, spart_fits_writer write,
                             const void *object)
{
    if (!overwrite && path_exists(io->path)) {
        return already_exists(io);
    }
    char *temporary = NULL;
    spart_status status = reserve_temporary_name(io, &temporary);
    if (temporary == NULL) { /* set only on success */
        return status;
    }
    status = write_and_place(io, temporary, overwrite, write, object);
    spart_free(&io->context->allocator, temporary);
    return status;
}

/* ---- loading ---------------------------------------------------------------------------- */

spart_status spart_fits_open_to_load(spart_fits_io *io)
{
    io->file = NULL;
    struct stat info;
    if (stat(io->path, &info) == 0 && S_ISDIR(info.st_mode)) {
        return spart_fail(io->context, SPART_ERROR_IO,
                          "could not load %s: %s is a directory, not a file", io->noun, io->path);
    }
    int fits_status = 0;
    fits_open_diskfile(&io->file, io->path, READONLY, &fits_status);
    if (fits_status == 0) {
        /* Every header checked before CFITSIO moves to it: a damaged one
         * must not make it allocate what it claims, nor a cut file read as
         * a missing extension. */
        char sentence[SPART_ERROR_LENGTH];
        if (spart_fits_scan(io->path, sentence, sizeof sentence) != 0) {
            spart_fits_close_loaded(io);
            return spart_fits_format_error(io, "%s", sentence);
        }
        return SPART_OK;
    }
    io->file = NULL;
    if (fits_status == MEMORY_ALLOCATION) {
        return spart_fits_fail_reading(io, "opening it", fits_status);
    }
    char message[SPART_FITS_MESSAGE_LENGTH];
    spart_fits_message(fits_status, message, sizeof message);
    if (fits_status == FILE_NOT_OPENED || fits_status == TOO_MANY_FILES) {
        return spart_fail(io->context, SPART_ERROR_IO, "could not open %s file %s: %s", io->noun,
                          io->path, message);
    }
    return spart_fits_format_error(io, "not a FITS file (or a damaged one): %s", message);
}

void spart_fits_close_loaded(spart_fits_io *io)
{
    if (io->file != NULL) {
        int ignored = 0;
        fits_close_file(io->file, &ignored);
        io->file = NULL;
    }
    fits_clear_errmsg();
}

spart_status spart_fits_read_integer_key(const spart_fits_io *io, const char *key, int64_t *value)
{
    long long number = 0;
    int fits_status = 0;
    fits_read_key(io->file, TLONGLONG, key, &number, NULL, &fits_status);
    if (fits_status == KEY_NO_EXIST) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "keyword %s is missing from the primary header", key);
    }
    if (fits_status != 0) {
        char message[SPART_FITS_MESSAGE_LENGTH];
        return spart_fits_format_error(io, "keyword %s is not an integer: %s", key,
                                       spart_fits_message(fits_status, message, sizeof message));
    }
    *value = (int64_t)number;
    return SPART_OK;
}

spart_status spart_fits_check_identity(const spart_fits_io *io, const char *kind, int version)
{
    char found[FLEN_VALUE];
    int fits_status = 0;
    fits_read_key(io->file, TSTRING, "SPARTKND", found, NULL, &fits_status);
    if (fits_status != 0) {
        fits_clear_errmsg();
        return spart_fits_format_error(io,
                                       "not a spart %s file (the primary header has no string "
                                       "keyword SPARTKND)",
                                       io->noun);
    }
    if (strcmp(found, kind) != 0) {
        return spart_fits_format_error(io,
                                       "SPARTKND = '%s', expected '%s': this spart file does not "
                                       "hold %s",
                                       found, kind, io->noun);
    }
    int64_t found_version = 0;
    spart_status status = spart_fits_read_integer_key(io, "SPARTVER", &found_version);
    if (status != SPART_OK) {
        return status;
    }
    if (found_version != version) {
        return spart_fits_format_error(io,
                                       "format version SPARTVER = %lld, but this library (spart "
                                       "%s) reads version %d",
                                       (long long)found_version, spart_version(), version);
    }
    return SPART_OK;
}

/* Keywords <prefix>NAX and <prefix>AXk: ascending axes of `shape`. */
spart_status spart_fits_read_axes_keys(const spart_fits_io *io, const char *prefix,
                                       const spart_shape *shape, int *num_axes, int *axes)
{
    char key[FLEN_KEYWORD];
    int64_t count = 0;
    spart_fits_make_key(key, prefix, "NAX", -1);
    spart_status status = spart_fits_read_integer_key(io, key, &count);
    if (status != SPART_OK) {
        return status;
    }
    if (count < 0 || count > shape->ndim) {
        return spart_fits_format_error(io, "%s = %lld is outside [0, %sNDIM = %d]", key,
                                       (long long)count, prefix, shape->ndim);
    }
    *num_axes = (int)count;
    for (int k = 0; k < *num_axes; k++) {
        int64_t axis = 0;
        spart_fits_make_key(key, prefix, "AX", k);
        status = spart_fits_read_integer_key(io, key, &axis);
        if (status != SPART_OK) {
            return status;
        }
        int lowest = k == 0 ? 0 : axes[k - 1] + 1;
        if (axis < lowest || axis >= shape->ndim) {
            return spart_fits_format_error(io,
                                           "%s = %lld: resampled axes must be ascending and in "
                                           "[0, %sNDIM = %d)",
                                           key, (long long)axis, prefix, shape->ndim);
        }
        axes[k] = (int)axis;
    }
    return SPART_OK;
}

spart_status spart_fits_read_shape_keys(const spart_fits_io *io, const char *prefix,
                                        spart_shape *shape)
{
    char key[FLEN_KEYWORD];
    int64_t ndim = 0;
    spart_fits_make_key(key, prefix, "NDIM", -1);
    spart_status status = spart_fits_read_integer_key(io, key, &ndim);
    if (status != SPART_OK) {
        return status;
    }
    if (ndim < 0 || ndim > SPART_MAX_NDIM) {
        return spart_fits_format_error(io, "%s = %lld is outside [0, %d]", key, (long long)ndim,
                                       SPART_MAX_NDIM);
    }
    memset(shape, 0, sizeof *shape);
    shape->ndim = (int)ndim;
    for (int k = 0; k < shape->ndim; k++) {
        spart_fits_make_key(key, prefix, "DIM", k);
        status = spart_fits_read_integer_key(io, key, &shape->dims[k]);
        if (status != SPART_OK) {
            return status;
        }
        if (shape->dims[k] < 0) {
            return spart_fits_format_error(io, "%s = %lld is negative", key,
                                           (long long)shape->dims[k]);
        }
    }
    if (spart_shape_size(shape) < 0) {
        return spart_fits_format_error(io,
                                       "the shape given by %sDIMk has more elements than int64 "
                                       "can count",
                                       prefix);
    }
    return SPART_OK;
}

spart_status spart_fits_check_count(const spart_fits_io *io, const char *key, int64_t expected,
                                    const char *because)
{
    int64_t value = 0;
    spart_status status = spart_fits_read_integer_key(io, key, &value);
    if (status != SPART_OK) {
        return status;
    }
    if (value != expected) {
        return spart_fits_format_error(io, "%s = %lld, but %s gives %lld", key, (long long)value,
                                       because, (long long)expected);
    }
    return SPART_OK;
}

/* How a sentence names a column type CFITSIO reports. */
static const char *type_name(int type)
{
    switch (type) {
    case TDOUBLE: return "double (D)";
    case TFLOAT: return "float (E)";
    case TLONG: return "32-bit integer (J)";
    case TLONGLONG: return "64-bit integer (K)";
    default: return "number";
    }
}

/* Make `name` the current HDU: a binary table of `rows` rows. */
static spart_status move_to_table(const spart_fits_io *io, const char *name, int64_t rows)
{
    int fits_status = 0;
    int hdu_type = 0;
    fits_movnam_hdu(io->file, ANY_HDU, (char *)name, 0, &fits_status);
    if (fits_status == BAD_HDU_NUM) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "there is no extension named %s", name);
    }
    fits_get_hdu_type(io->file, &hdu_type, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_reading(io, "finding its tables", fits_status);
    }
    if (hdu_type != BINARY_TBL) {
        return spart_fits_format_error(io, "extension %s is not a binary table", name);
    }
    LONGLONG found_rows = 0;
    fits_get_num_rowsll(io->file, &found_rows, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_reading(io, "counting table rows", fits_status);
    }
    if (found_rows != rows) {
        return spart_fits_format_error(io,
                                       "table %s has %lld rows, but the primary header promises "
                                       "%lld",
                                       name, (long long)found_rows, (long long)rows);
    }
    return SPART_OK;
}

spart_status spart_fits_open_table(const spart_fits_io *io, const char *name, int64_t rows,
                                   int num_columns, char **columns, const int *types, int *numbers)
{
    for (int c = 0; c < num_columns; c++) {
        numbers[c] = 0;
    }
    spart_status status = move_to_table(io, name, rows);
    if (status != SPART_OK) {
        return status;
    }
    int fits_status = 0;
    for (int c = 0; c < num_columns; c++) {
        int type = 0;
        long repeat = 0;
        long width = 0;
        fits_get_colnum(io->file, CASEINSEN, columns[c], &numbers[c], &fits_status);
        fits_get_coltype(io->file, numbers[c], &type, &repeat, &width, &fits_status);
        if (fits_status != 0) {
            fits_clear_errmsg();
            return spart_fits_format_error(io, "table %s has no column %s", name, columns[c]);
        }
        if (type != types[c] || repeat != 1) {
            return spart_fits_format_error(io,
                                           "column %s of table %s has type code %d and repeat "
                                           "%ld, expected one %s per row",
                                           columns[c], name, type, repeat, type_name(types[c]));
        }
    }
    return SPART_OK;
}
