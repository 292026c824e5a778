/*
 * src/io/fits_util.h: what the FITS files of spart objects (weights,
 * regridders) share: sentences from CFITSIO's status, keyword names, shape
 * keywords, tables moved in chunks of rows, the checked opening of a file to
 * load, and the save that writes beside the final name and renames the
 * finished file into place (docs/formats.md, "Conventions").
 *
 * The calls that can fail take a spart_fits_io: the object the file holds
 * (its noun: "weights", "regridder") and the path the user gave, so that
 * every error sentence names both: "regridder file <path>: ...", "could not
 * save weights to <path>: ...".
 *
 * Thread safety: no state of its own. Saves and loads of different files
 * may run at once with a reentrant CFITSIO build; CFITSIO's message stack
 * is shared by its threads, so a sentence may then quote another thread's
 * CFITSIO message.
 */
#ifndef SPART_FITS_UTIL_H
#define SPART_FITS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <fitsio.h>

#include "core/internal.h"

/* Room for CFITSIO's status text and its stack of messages, joined. */
#define SPART_FITS_MESSAGE_LENGTH 320

/* One file being saved or loaded. */
typedef struct spart_fits_io {
    spart_context *context;
    const char *noun; /* what the file holds, as sentences name it */
    const char *path; /* the file name the user gave */
    fitsfile *file;   /* the open file (while writing: the temporary one) */
} spart_fits_io;

/* CFITSIO's sentence for `fits_status` and the messages on its stack,
 * joined by " / " into `buffer`; the stack is emptied. Returns buffer. */
const char *spart_fits_message(int fits_status, char *buffer, size_t size);

/* Record a SPART_ERROR_FILE_FORMAT sentence "<noun> file <path>: " followed
 * by the formatted text, and return that status. */
spart_status spart_fits_format_error(const spart_fits_io *io, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A CFITSIO failure while reading (`doing` says what): a format error, with
 * a hint when the file ends early; out of memory when CFITSIO ran out. */
spart_status spart_fits_fail_reading(const spart_fits_io *io, const char *doing, int fits_status);

/* A CFITSIO failure while writing: SPART_ERROR_IO. */
spart_status spart_fits_fail_writing(const spart_fits_io *io, const char *doing, int fits_status);

/* Keyword `prefix` `stem` `k` into `key` (FLEN_KEYWORD bytes), such as
 * INDIM0; k < 0: no number, such as INNDIM. */
void spart_fits_make_key(char *key, const char *prefix, const char *stem, int k);

/* How many rows of the current table to move per call: CFITSIO's optimum. */
int64_t spart_fits_chunk_rows(fitsfile *file, int *fits_status);

/* ---- saving ------------------------------------------------------------------------ */

/* Keywords <prefix>NAX and <prefix>AX0 ...: the resampled axes of a
 * side, ascending; `what` names the side in the comments. */
void spart_fits_write_axes_keys(fitsfile *file, const char *prefix, const char *what, int num_axes,
                                const int *axes, int *fits_status);

/* Keywords <prefix>NDIM and <prefix>DIM0 ... (axis 0 first, NumPy order);
 * `what` names the shape in the comments. */
void spart_fits_write_shape_keys(fitsfile *file, const char *prefix, const char *what,
                                 const spart_shape *shape, int *fits_status);

/* The keywords every spart file starts with: an empty primary HDU, then
 * SPARTKND = `kind`, SPARTVER = `version` and SPARTLIB. */
void spart_fits_write_identity(fitsfile *file, const char *kind, int version, int *fits_status);

/* A binary table `name` of `rows` rows, each column's TTYPE card carrying
 * the comment that explains it. */
void spart_fits_create_table(fitsfile *file, const char *name, int64_t rows, int num_columns,
                             char **names, char **formats, char **comments, int *fits_status);

/* Writes every HDU of `object` into the open, empty io->file. */
typedef spart_status (*spart_fits_writer)(const spart_fits_io *io, const void *object);

/* Save: refuse an existing io->path unless `overwrite`; write through
 * `write` into "<path>.partial-XXXXXX", flush it to disk and give it the
 * final name (atomically refusing a file that appeared meanwhile when not
 * `overwrite`). Nothing but the final file is left behind, on success or
 * failure. Errors: SPART_ERROR_IO, SPART_ERROR_OUT_OF_MEMORY, or what
 * `write` returns. */
spart_status spart_fits_save(spart_fits_io *io, int overwrite, spart_fits_writer write,
                             const void *object);

/* ---- loading ------------------------------------------------------------------------ */

/* Open io->path read-only into io->file: SPART_ERROR_IO for a missing file
 * or a directory, SPART_ERROR_FILE_FORMAT for what is not FITS. */
spart_status spart_fits_open_to_load(spart_fits_io *io);

/* Close io->file (if open) and empty CFITSIO's message stack. */
void spart_fits_close_loaded(spart_fits_io *io);

/* Integer keyword `key` of the current HDU, which must be there. */
spart_status spart_fits_read_integer_key(const spart_fits_io *io, const char *key, int64_t *value);

/* SPARTKND must be `kind` and SPARTVER `version`. */
spart_status spart_fits_check_identity(const spart_fits_io *io, const char *kind, int version);

/* Keywords <prefix>NAX and <prefix>AXk: ascending axes of `shape`, at
 * most its number of axes. */
spart_status spart_fits_read_axes_keys(const spart_fits_io *io, const char *prefix,
                                       const spart_shape *shape, int *num_axes, int *axes);

/* Keywords <prefix>NDIM and <prefix>DIMk into a valid shape (at most
 * SPART_MAX_NDIM axes, no negative extent, a size int64 can count). */
spart_status spart_fits_read_shape_keys(const spart_fits_io *io, const char *prefix,
                                        spart_shape *shape);

/* Integer keyword `key` must equal `expected`, which `because` explains. */
spart_status spart_fits_check_count(const spart_fits_io *io, const char *key, int64_t expected,
                                    const char *because);

/* Make table `name` the current HDU, check that it has `rows` rows and find
 * its columns, each one number per row of the CFITSIO type code in `types`
 * (TLONGLONG for K, TLONG for J, TDOUBLE for D, TFLOAT for E), their
 * numbers into `numbers`. */
spart_status spart_fits_open_table(const spart_fits_io *io, const char *name, int64_t rows,
                                   int num_columns, char **columns, const int *types, int *numbers);

#endif /* SPART_FITS_UTIL_H */
