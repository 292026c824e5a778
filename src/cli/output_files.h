/*
 * src/cli/output_files.h: the output folder and its files, written so that
 * no data is lost: an existing file is replaced only with --overwrite, and
 * every file is written under a temporary name beside its final one,
 * flushed to disk and only then renamed into place. An interrupted run, a
 * full disk or a failed write leaves no truncated file under a final name
 * (and removes its temporary file).
 */
#ifndef SPART_CLI_OUTPUT_FILES_H
#define SPART_CLI_OUTPUT_FILES_H

#include <stddef.h>

#define OUTPUT_PATH_LENGTH 4352

/* Check that `folder` (and its parents) can be made where it is not there,
 * and that none of the `count` file names in it exists unless `overwrite`.
 * Nothing is made here: output_file_begin makes the folder, so that a run
 * that fails before its first file leaves no empty folder. Returns 0, 1
 * when a file exists (the sentence names it), or -1 on any other failure. */
int output_folder_prepare(const char *folder, const char *const *names, size_t count, int overwrite,
                          char *error, size_t error_size);

/* Make `folder` (and its parents) if it is not there, for files saved by
 * the library itself. Returns 0, or -1 with a sentence. */
int output_folder_make(const char *folder, char *error, size_t error_size);

/* "<folder>/<name>" into `path`; -1 when it does not fit. */
int output_path(char *path, size_t size, const char *folder, const char *name);

/* A file being written: its final name and the temporary one beside it. */
typedef struct output_file {
    char final_path[OUTPUT_PATH_LENGTH];
    char temporary_path[OUTPUT_PATH_LENGTH];
} output_file;

/* Make `folder` if it is not there yet, and reserve a temporary name
 * "<folder>/.<name>.partial-XXXXXX" for `name` (no file is left there: the
 * writer creates it). Returns 0 or -1. */
int output_file_begin(output_file *file, const char *folder, const char *name, char *error,
                      size_t error_size);

/* The temporary file is complete: flush it to disk and give it its final
 * name (atomically refusing a file that appeared meanwhile, unless
 * `overwrite`). On failure the temporary file is removed. Returns 0, 1
 * when the final name was taken meanwhile, or -1. */
int output_file_commit(output_file *file, int overwrite, char *error, size_t error_size);

/* Writing failed: remove the temporary file, if any. */
void output_file_abandon(output_file *file);

/* Write `count` bytes into the new file `path` with checked write() calls
 * (a short write, a full disk or a failed close is an error, never a
 * short file); `display_path` names it in the sentence. Writers make their
 * files in memory and hand them over here, so that no library's buffered
 * I/O can lose a failure. Returns 0, or -1 with a sentence. */
int output_write_bytes(const char *path, const char *display_path, const void *bytes, size_t count,
                       char *error, size_t error_size);

/* Writes `data` into the new file `temporary_path`; `final_path` is for
 * sentences. Returns 0, or -1 with a sentence. */
typedef int (*output_writer)(const char *temporary_path, const char *final_path, const void *data,
                             char *error, size_t error_size);

/* The whole round: begin, write, commit (or abandon). Returns 0, 1 when
 * the final name was taken meanwhile, or -1. */
int output_write(const char *folder, const char *name, int overwrite, output_writer writer,
                 const void *data, char *error, size_t error_size);

#endif /* SPART_CLI_OUTPUT_FILES_H */
