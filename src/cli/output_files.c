/*
 * src/cli/output_files.c: the output folder, and files written beside
 * their final names and renamed into place (see output_files.h).
 */
#include "output_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int output_path(char *path, size_t size, const char *folder, const char *name)
{
    int written = snprintf(path, size, "%s/%s", folder, name);
    return written < 0 || (size_t)written >= size ? -1 : 0;
}

/* mkdir -p: each parent in turn; an existing folder is fine. With
 * `create` 0 only looks: every existing part must be a folder, and the
 * last existing one writable when the rest is still to be made. */
static int make_folders(const char *folder, int create, char *error, size_t error_size)
{
    char path[OUTPUT_PATH_LENGTH];
    if (snprintf(path, sizeof path, "%s", folder) >= (int)sizeof path) {
        snprintf(error, error_size, "the output folder's name is too long");
        return -1;
    }
    char existing[OUTPUT_PATH_LENGTH] = ".";
    if (path[0] == '/') {
        snprintf(existing, sizeof existing, "/");
    }
    for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash != NULL) {
            *slash = '\0';
        }
        struct stat info;
        if (stat(path, &info) == 0) {
            if (!S_ISDIR(info.st_mode)) {
                snprintf(error, error_size, "cannot use %s as the output folder: %s is a file",
                         folder, path);
                return -1;
            }
            snprintf(existing, sizeof existing, "%s", path);
        } else if (!create) {
            /* the rest is made when the first file is written */
            if (access(existing, W_OK | X_OK) != 0) {
                snprintf(error, error_size, "cannot make the output folder %s: %s: %s", folder,
                         existing, strerror(errno));
                return -1;
            }
            return 0;
        } else if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(error, error_size, "cannot make the output folder %s: %s", path,
                     strerror(errno));
            return -1;
        }
        if (slash == NULL) {
            return 0;
        }
        *slash = '/';
    }
}

int output_folder_make(const char *folder, char *error, size_t error_size)
{
    return make_folders(folder, 1, error, error_size);
}

int output_folder_prepare(const char *folder, const char *const *names, size_t count, int overwrite,
                          char *error, size_t error_size)
{
    /* Nothing is made yet: a run that fails before its first output
     * leaves no empty folder behind (output_file_begin makes it). */
    if (make_folders(folder, 0, error, error_size) != 0) {
        return -1;
    }
    struct stat folder_info;
    if (stat(folder, &folder_info) != 0) {
        return 0; /* to be made: no file in it can exist */
    }
    if (access(folder, W_OK | X_OK) != 0) {
        snprintf(error, error_size, "cannot write into the output folder %s: %s", folder,
                 strerror(errno));
        return -1;
    }
    for (size_t k = 0; k < count && !overwrite; k++) {
        char path[OUTPUT_PATH_LENGTH];
        struct stat info;
        if (output_path(path, sizeof path, folder, names[k]) != 0) {
            snprintf(error, error_size, "the output folder's name is too long");
            return -1;
        }
        if (lstat(path, &info) == 0) {
            snprintf(error, error_size,
                     "%s already exists; nothing was written (give --overwrite to replace the "
                     "outputs, or --output DIR for another folder)",
                     path);
            return 1;
        }
    }
    return 0;
}

int output_file_begin(output_file *file, const char *folder, const char *name, char *error,
                      size_t error_size)
{
    file->temporary_path[0] = '\0';
    char hidden[OUTPUT_PATH_LENGTH];
    if (output_path(file->final_path, sizeof file->final_path, folder, name) != 0 ||
        snprintf(hidden, sizeof hidden, ".%s.partial-XXXXXX", name) >= (int)sizeof hidden ||
        output_path(file->temporary_path, sizeof file->temporary_path, folder, hidden) != 0) {
        snprintf(error, error_size, "the output folder's name is too long");
        file->temporary_path[0] = '\0';
        return -1;
    }
    if (make_folders(folder, 1, error, error_size) != 0) {
        file->temporary_path[0] = '\0';
        return -1;
    }
    /* mkstemp reserves a fresh name; its empty file goes again because the
     * writers (CFITSIO in particular) create their files themselves. */
    int descriptor = mkstemp(file->temporary_path);
    if (descriptor < 0) {
        snprintf(error, error_size, "cannot write %s: cannot create a file beside it: %s",
                 file->final_path, strerror(errno));
        file->temporary_path[0] = '\0';
        return -1;
    }
    close(descriptor);
    remove(file->temporary_path);
    return 0;
}

/* The bytes of a finished file go to the disk before it takes its final
 * name, so that a crash right after the rename cannot leave it short. */
static int flush_to_disk(const char *path)
{
    int descriptor = open(path, O_RDONLY);
    if (descriptor < 0) {
        return -1;
    }
    int result = fsync(descriptor);
    close(descriptor);
    return result;
}

int output_file_commit(output_file *file, int overwrite, char *error, size_t error_size)
{
    if (flush_to_disk(file->temporary_path) != 0) {
        snprintf(error, error_size, "cannot write %s: flushing it to disk: %s", file->final_path,
                 strerror(errno));
        output_file_abandon(file);
        return -1;
    }
    /* link() refuses atomically to replace a file that appeared while we
     * wrote; where hard links are not supported, rename() after the check
     * made before the run. */
    if (!overwrite) {
        if (link(file->temporary_path, file->final_path) == 0) {
            output_file_abandon(file);
            return 0;
        }
        if (errno == EEXIST) {
            snprintf(error, error_size, "%s appeared while spart was writing it; left alone",
                     file->final_path);
            output_file_abandon(file);
            return 1;
        }
    }
    if (rename(file->temporary_path, file->final_path) != 0) {
        snprintf(error, error_size, "cannot write %s: renaming %s into place: %s", file->final_path,
                 file->temporary_path, strerror(errno));
        output_file_abandon(file);
        return -1;
    }
    file->temporary_path[0] = '\0';
    return 0;
}

void output_file_abandon(output_file *file)
{
    if (file->temporary_path[0] != '\0') {
        remove(file->temporary_path);
        file->temporary_path[0] = '\0';
    }
}

int output_write_bytes(const char *path, const char *display_path, const void *bytes, size_t count,
                       char *error, size_t error_size)
{
    int descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (descriptor < 0) {
        snprintf(error, error_size, "cannot write %s: %s", display_path, strerror(errno));
        return -1;
    }
    const char *next = bytes;
    size_t left = count;
    while (left > 0) {
        ssize_t written = write(descriptor, next, left);
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {
            snprintf(error, error_size, "cannot write %s: %s after %zu of %zu bytes", display_path,
                     written < 0 ? strerror(errno) : "no progress", count - left, count);
            close(descriptor);
            remove(path);
            return -1;
        }
        next += written;
        left -= (size_t)written;
    }
    if (close(descriptor) != 0) {
        snprintf(error, error_size, "cannot write %s: closing it: %s", display_path,
                 strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

int output_write(const char *folder, const char *name, int overwrite, output_writer writer,
                 const void *data, char *error, size_t error_size)
{
    output_file file;
    if (output_file_begin(&file, folder, name, error, error_size) != 0) {
        return -1;
    }
    if (writer(file.temporary_path, file.final_path, data, error, error_size) != 0) {
        output_file_abandon(&file);
        return -1;
    }
    return output_file_commit(&file, overwrite, error, error_size);
}
