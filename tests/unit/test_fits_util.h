/*
 * tests/unit/test_fits_util.h: what the tests of FITS files
 * (test_regridder_fits.c, test_weights_fits.c) share: a context and a fresh
 * folder per test, the names in a folder, and edits of a saved file (a
 * cell, a header keyword) that make it bad in one way.
 *
 * Needs _POSIX_C_SOURCE 200809L (mkdtemp, opendir), defined before the
 * first include. Include after <cmocka.h>. Everything is static inline,
 * so a test that uses only part of it builds without warnings.
 */
#ifndef SPART_TEST_FITS_UTIL_H
#define SPART_TEST_FITS_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fitsio.h>

#include "spart.h"

/* ---- a context and a fresh folder per test ------------------------------------------------ */

typedef struct fits_fixture {
    spart_context *context;
    char folder[64]; /* made by mkdtemp in the working directory */
    char path[128];  /* `file` in that folder */
} fits_fixture;

/* The set-up of a test: a context, a new folder named `prefix`-XXXXXX and
 * the path of `file` in it (not made). */
static inline int fits_set_up(void **state, const char *prefix, const char *file)
{
    fits_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(spart_context_create(&f->context), SPART_OK);
    snprintf(f->folder, sizeof f->folder, "%s-XXXXXX", prefix);
    assert_non_null(mkdtemp(f->folder));
    snprintf(f->path, sizeof f->path, "%s/%s", f->folder, file);
    *state = f;
    return 0;
}

/* The group tear-down: the folder and what is in it removed, the context freed. */
static inline int fits_tear_down(void **state)
{
    fits_fixture *f = *state;
    DIR *folder = opendir(f->folder);
    if (folder != NULL) {
        struct dirent *entry;
        while ((entry = readdir(folder)) != NULL) {
            char name[512];
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
                continue;
            }
            snprintf(name, sizeof name, "%s/%s", f->folder, entry->d_name);
            if (remove(name) != 0) {
                rmdir(name);
            }
        }
        closedir(folder);
    }
    rmdir(f->folder);
    spart_context_free(f->context);
    free(f);
    return 0;
}

/* The names in `folder` besides . and .., joined by spaces. */
static inline void list_folder(const char *folder, char *names, size_t size)
{
    names[0] = '\0';
    DIR *handle = opendir(folder);
    assert_non_null(handle);
    struct dirent *entry;
    while ((entry = readdir(handle)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
            continue;
        }
        size_t used = strlen(names);
        snprintf(names + used, size - used, "%s%s", used == 0 ? "" : " ", entry->d_name);
    }
    closedir(handle);
}

/* ---- values and shapes ------------------------------------------------------------------ */

/* The double whose bits are `bits`. */
static inline double bits_to_double(uint64_t bits)
{
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline void assert_shapes_equal(spart_shape a, spart_shape b)
{
    assert_int_equal(a.ndim, b.ndim);
    for (int k = 0; k < a.ndim; k++) {
        assert_int_equal(a.dims[k], b.dims[k]);
    }
}

/* ---- editing a saved file, to make it bad ------------------------------------------------ */

/* The file open for writing, at the binary table `extension` (NULL: the
 * primary header). */
static inline fitsfile *open_for_update(const char *path, const char *extension)
{
    fitsfile *file = NULL;
    int status = 0;
    fits_open_diskfile(&file, path, READWRITE, &status);
    if (extension != NULL) {
        fits_movnam_hdu(file, BINARY_TBL, (char *)extension, 0, &status);
    }
    assert_int_equal(status, 0);
    return file;
}

static inline void close_updated(fitsfile *file)
{
    int status = 0;
    fits_close_file(file, &status);
    assert_int_equal(status, 0);
}

/* Overwrite one cell (0-based row) of an integer column. */
static inline void set_cell(const char *path, const char *extension, const char *column,
                            int64_t row, long long value)
{
    fitsfile *file = open_for_update(path, extension);
    int status = 0;
    int number = 0;
    fits_get_colnum(file, CASEINSEN, (char *)column, &number, &status);
    fits_write_col(file, TLONGLONG, number, (LONGLONG)row + 1, 1, 1, &value, &status);
    assert_int_equal(status, 0);
    close_updated(file);
}

static inline void set_integer_key(const char *path, const char *key, long long value)
{
    fitsfile *file = open_for_update(path, NULL);
    int status = 0;
    fits_update_key(file, TLONGLONG, key, &value, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
}

static inline void set_string_key(const char *path, const char *key, const char *value)
{
    fitsfile *file = open_for_update(path, NULL);
    int status = 0;
    fits_update_key(file, TSTRING, key, (char *)value, NULL, &status);
    assert_int_equal(status, 0);
    close_updated(file);
}

#endif /* SPART_TEST_FITS_UTIL_H */
