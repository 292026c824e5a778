/*
 * tests/unit/test_fits_util.h: what the tests of FITS files
 * (test_regridder_fits.c, test_weights_fits.c) share: a context and a fresh
 * folder per test, the names in a folder, edits of a saved file (a cell,
 * a header keyword) that make it bad in one way, and the tests of saving
 * that hold for every kind of file (over a table of the kind's save,
 * load, comparison and free).
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
#include <sys/stat.h>
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

/* ---- saving, the same for every kind of file -------------------------------------------- */

/* A kind of object a file holds (weights, a regridder): its save, load,
 * bit-for-bit comparison and free, over untyped pointers, so that the
 * tests of saving below serve every kind. */
typedef struct fits_kind {
    spart_status (*save)(spart_context *context, const void *object, const char *path,
                         int overwrite);
    spart_status (*load)(spart_context *context, const char *path, void **object);
    void (*assert_identical)(const void *a, const void *b);
    void (*free)(void *object);
} fits_kind;

/* The fixture's file name (the last part of its path). */
static inline const char *fixture_file_name(const fits_fixture *f)
{
    const char *slash = strrchr(f->path, '/');
    return slash != NULL ? slash + 1 : f->path;
}

/* Saving `second` where `first` was saved, without overwrite, is an I/O
 * error naming the path and saying it already exists; the file still
 * holds `first`. */
static inline void check_save_refuses_to_replace(fits_fixture *f, const fits_kind *kind,
                                                 const void *first, const void *second)
{
    assert_int_equal(kind->save(f->context, first, f->path, 0), SPART_OK);
    assert_int_equal(kind->save(f->context, second, f->path, 0), SPART_ERROR_IO);
    assert_non_null(strstr(spart_context_error(f->context), f->path));
    assert_non_null(strstr(spart_context_error(f->context), "already exists"));
    void *loaded = NULL;
    assert_int_equal(kind->load(f->context, f->path, &loaded), SPART_OK);
    kind->assert_identical(first, loaded);
    kind->free(loaded);
}

/* With overwrite, `second` replaces `first`'s file. */
static inline void check_save_with_overwrite_replaces(fits_fixture *f, const fits_kind *kind,
                                                      const void *first, const void *second)
{
    assert_int_equal(kind->save(f->context, first, f->path, 0), SPART_OK);
    assert_int_equal(kind->save(f->context, second, f->path, 1), SPART_OK);
    void *loaded = NULL;
    assert_int_equal(kind->load(f->context, f->path, &loaded), SPART_OK);
    kind->assert_identical(second, loaded);
    kind->free(loaded);
}

/* Saving, then saving again with overwrite, leaves the file alone in its
 * folder (no temporary). */
static inline void check_save_leaves_only_the_file(fits_fixture *f, const fits_kind *kind,
                                                   const void *object)
{
    assert_int_equal(kind->save(f->context, object, f->path, 0), SPART_OK);
    assert_int_equal(kind->save(f->context, object, f->path, 1), SPART_OK);
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, fixture_file_name(f));
}

/* Saving with overwrite onto a folder (holding a file) is an I/O error
 * naming the path, and leaves no temporary beside it. */
static inline void check_save_onto_a_folder_fails(fits_fixture *f, const fits_kind *kind,
                                                  const void *object)
{
    assert_int_equal(mkdir(f->path, 0700), 0);
    char inner[192];
    snprintf(inner, sizeof inner, "%s/keep", f->path);
    FILE *keep = fopen(inner, "w");
    assert_non_null(keep);
    fclose(keep);
    assert_int_equal(kind->save(f->context, object, f->path, 1), SPART_ERROR_IO);
    assert_non_null(strstr(spart_context_error(f->context), f->path));
    char names[1024];
    list_folder(f->folder, names, sizeof names);
    assert_string_equal(names, fixture_file_name(f));
    remove(inner);
}

#endif /* SPART_TEST_FITS_UTIL_H */
