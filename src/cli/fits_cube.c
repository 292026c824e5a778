/*
 * src/cli/fits_cube.c: scenes and images as FITS primary arrays with WCS
 * keywords (see fits_cube.h).
 */
#include "fits_cube.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fitsio.h>

#include "io/fits_scan.h"
#include "output_files.h"
#include "spart.h"

/* The version of the cube layout, in SPARTVER. */
#define CUBE_LAYOUT_VERSION 1

/* CFITSIO's sentence for `status` and its message stack, which it empties. */
static void fits_sentence(int status, char *buffer, size_t size)
{
    char text[FLEN_STATUS];
    char stacked[FLEN_ERRMSG];
    fits_get_errstatus(status, text);
    int used = snprintf(buffer, size, "%s", text);
    while (fits_read_errmsg(stacked) != 0) {
        if (used >= 0 && (size_t)used < size) {
            used += snprintf(buffer + used, size - (size_t)used, " / %s", stacked);
        }
    }
}

static void write_string_key(fitsfile *file, const char *key, const char *value,
                             const char *comment, int *status)
{
    fits_write_key(file, TSTRING, key, (void *)value, comment, status);
}

static void write_double_key(fitsfile *file, const char *key, double value, const char *comment,
                             int *status)
{
    fits_write_key_dbl(file, key, value, -15, comment, status);
}

/* The WCS keywords of FITS axis `fits_axis` (from 1) for `axis`. */
static void write_axis_keys(fitsfile *file, int fits_axis, const cube_axis *axis, int *status)
{
    char key[FLEN_KEYWORD];
    char comment[FLEN_COMMENT];
    snprintf(key, sizeof key, "CTYPE%d", fits_axis);
    snprintf(comment, sizeof comment, "axis %d: %s", fits_axis, axis->name);
    write_string_key(file, key, axis->ctype, comment, status);
    if (axis->cunit[0] != '\0') {
        snprintf(key, sizeof key, "CUNIT%d", fits_axis);
        write_string_key(file, key, axis->cunit, "unit of the coordinate", status);
    }
    /* The reference pixel is the middle of the axis, so that a projection
     * (TAN for the scene's sky axes) is centred on the field. */
    double middle = (double)(axis->length - 1) / 2.0;
    snprintf(key, sizeof key, "CRPIX%d", fits_axis);
    write_double_key(file, key, middle + 1.0, "reference pixel: the middle (FITS counts from 1)",
                     status);
    snprintf(key, sizeof key, "CRVAL%d", fits_axis);
    write_double_key(file, key, axis->crval + axis->cdelt * middle,
                     "coordinate at the reference pixel", status);
    snprintf(key, sizeof key, "CDELT%d", fits_axis);
    write_double_key(file, key, axis->cdelt, "coordinate step per pixel", status);
}

static void write_header(fitsfile *file, const cube *data, int *status)
{
    write_string_key(file, "SPARTKND", data->kind, "kind of spart file", status);
    int version = CUBE_LAYOUT_VERSION;
    fits_write_key(file, TINT, "SPARTVER", &version, "version of this kind's layout", status);
    write_string_key(file, "SPARTLIB", spart_version(), "spart library that wrote the file",
                     status);
    write_string_key(file, "CONTENT", data->content, "what the values are", status);
    write_string_key(file, "BUNIT", data->bunit, "unit of the values", status);
    /* C order axis 2 (fastest) is FITS axis 1. */
    for (int k = 0; k < 3; k++) {
        write_axis_keys(file, 3 - k, &data->axis[k], status);
    }
    for (size_t k = 0; k < data->num_extra; k++) {
        write_double_key(file, data->extra_keys[k], data->extra_values[k], data->extra_comments[k],
                         status);
    }
    fits_write_comment(file,
                       "Written by the spart command. The array is in spart's C order:", status);
    fits_write_comment(file, "NumPy (astropy) sees data[axis3, axis2, axis1], as named in the",
                       status);
    fits_write_comment(file, "CTYPE comments. Coordinates are those of pixel centres.", status);
}

/* The FITS file in memory: CFITSIO writes into a buffer, whose bytes
 * output_write_bytes then puts on disk with every write checked. */
static int cube_in_memory(const cube *data, void **buffer, size_t *size, LONGLONG *length,
                          char *sentence, size_t sentence_size)
{
    int status = 0;
    fitsfile *file = NULL;
    long naxes[3] = {(long)data->axis[2].length, (long)data->axis[1].length,
                     (long)data->axis[0].length};
    LONGLONG count = (LONGLONG)naxes[0] * naxes[1] * naxes[2];
    fits_create_memfile(&file, buffer, size, 2880 * 16, realloc, &status);
    if (status == 0) {
        fits_create_img(file, DOUBLE_IMG, 3, naxes, &status);
        write_header(file, data, &status);
        fits_write_img(file, TDOUBLE, 1, count, (void *)data->values, &status);
        LONGLONG header_start = 0;
        LONGLONG data_start = 0;
        fits_get_hduaddrll(file, &header_start, &data_start, length, &status);
    }
    if (file != NULL) {
        fits_close_file(file, &status);
    }
    if (status != 0) {
        fits_sentence(status, sentence, sentence_size);
        return -1;
    }
    return 0;
}

int fits_cube_write(const char *path, const char *display_path, const cube *data, char *error,
                    size_t error_size)
{
    void *buffer = NULL;
    size_t size = 0;
    LONGLONG length = 0;
    char sentence[512];
    int result = cube_in_memory(data, &buffer, &size, &length, sentence, sizeof sentence);
    if (result != 0) {
        snprintf(error, error_size, "cannot write %s: %s", display_path, sentence);
    } else if (length <= 0 || (size_t)length > size) {
        snprintf(error, error_size, "cannot write %s: CFITSIO made %lld bytes in a buffer of %zu",
                 display_path, (long long)length, size);
        result = -1;
    } else {
        result = output_write_bytes(path, display_path, buffer, (size_t)length, error, error_size);
    }
    free(buffer);
    return result;
}

static void format_dims(char *buffer, size_t size, int ndim, const int64_t *dims)
{
    int used = 0;
    buffer[0] = '\0';
    for (int k = 0; k < ndim && used >= 0 && (size_t)used < size; k++) {
        used += snprintf(buffer + used, size - (size_t)used, "%s%lld", k > 0 ? "x" : "",
                         (long long)dims[k]);
    }
    if (ndim == 0) {
        snprintf(buffer, size, "no array");
    }
}

/* The primary array's extents in C order (NumPy's), into dims. */
static int read_shape(fitsfile *file, int *ndim, int64_t dims[], int *status)
{
    int naxis = 0;
    fits_get_img_dim(file, &naxis, status);
    if (*status != 0 || naxis > 9) {
        return -1;
    }
    LONGLONG naxes[9] = {0};
    fits_get_img_sizell(file, naxis, naxes, status);
    for (int k = 0; k < naxis; k++) {
        dims[k] = (int64_t)naxes[naxis - 1 - k];
    }
    *ndim = naxis;
    return *status != 0 ? -1 : 0;
}

/* Open `path` and check its structure and its primary array's shape:
 * 0 with *opened open, or -1 / 1 as fits_cube_read with the sentence.
 * With `frames` not NULL a leading axis of frames is allowed too (a 4-D
 * array frames x dims), and *frames is set (1 for a 3-D array). */
static int open_cube_frames(const char *path, const int64_t dims[3], const char *what,
                            fitsfile **opened, int64_t *frames, char *error, size_t error_size)
{
    int status = 0;
    fitsfile *file = NULL;
    struct stat file_info;
    if (stat(path, &file_info) != 0) {
        snprintf(error, error_size, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(file_info.st_mode)) {
        snprintf(error, error_size, "cannot read %s: it is a folder, not a FITS file", path);
        return -1;
    }
    fits_open_diskfile(&file, path, READONLY, &status);
    int ndim = 0;
    int64_t found[9] = {0};
    char scanned[256];
    if (status == 0 && spart_fits_scan(path, scanned, sizeof scanned) != 0) {
        snprintf(error, error_size, "cannot read %s: %s", path, scanned);
        fits_close_file(file, &status);
        fits_clear_errmsg();
        return -1;
    }
    if (status == 0) {
        read_shape(file, &ndim, found, &status);
    }
    if (status != 0) {
        char sentence[512];
        fits_sentence(status, sentence, sizeof sentence);
        snprintf(error, error_size, "cannot read %s: %s", path, sentence);
        if (file != NULL) {
            fits_close_file(file, &status);
        }
        return -1;
    }
    int lead = frames != NULL && ndim == 4 && found[0] >= 1 ? 1 : 0;
    if (ndim != 3 + lead || found[lead] != dims[0] || found[lead + 1] != dims[1] ||
        found[lead + 2] != dims[2]) {
        char have[128];
        char need[128];
        format_dims(have, sizeof have, ndim, found);
        format_dims(need, sizeof need, 3, dims);
        if (ndim == 0) {
            snprintf(error, error_size,
                     "%s has no array in its primary HDU (spart reads the first HDU only, not "
                     "extensions), but the config's grid needs %s (%s)",
                     path, need, what);
        } else {
            snprintf(error, error_size,
                     "%s holds a %s array (NumPy order), but the config's grid needs %s (%s)%s",
                     path, have, need, what,
                     frames != NULL ? ", or frames x that (a cube with a frame axis first)" : "");
        }
        fits_close_file(file, &status);
        fits_clear_errmsg();
        return 1;
    }
    *opened = file;
    if (frames != NULL) {
        *frames = lead ? found[0] : 1;
    }
    return 0;
}

static int open_cube(const char *path, const int64_t dims[3], const char *what, fitsfile **opened,
                     char *error, size_t error_size)
{
    return open_cube_frames(path, dims, what, opened, NULL, error, error_size);
}

int fits_cube_check(const char *path, const int64_t dims[3], const char *what, char *error,
                    size_t error_size)
{
    fitsfile *file = NULL;
    int result = open_cube(path, dims, what, &file, error, error_size);
    if (result == 0) {
        int status = 0;
        fits_close_file(file, &status);
        fits_clear_errmsg();
    }
    return result;
}

int fits_cube_frames(const char *path, const int64_t dims[3], const char *what, int64_t *frames,
                     char *error, size_t error_size)
{
    fitsfile *file = NULL;
    int result = open_cube_frames(path, dims, what, &file, frames, error, error_size);
    if (result == 0) {
        int status = 0;
        fits_close_file(file, &status);
        fits_clear_errmsg();
    }
    return result;
}

/* The values of an open cube of `count` values into `values`, and the file
 * closed. */
static int read_values(fitsfile *file, const char *path, int64_t count, double *values, char *error,
                       size_t error_size);

int fits_cube_read_frames(const char *path, const int64_t dims[3], const char *what, int64_t frames,
                          double *values, char *error, size_t error_size)
{
    fitsfile *file = NULL;
    int64_t found = 0;
    int result = open_cube_frames(path, dims, what, &file, &found, error, error_size);
    if (result == 0 && found != frames) {
        snprintf(error, error_size, "%s now holds %lld frames, not the %lld it held before", path,
                 (long long)found, (long long)frames);
        int status = 0;
        fits_close_file(file, &status);
        fits_clear_errmsg();
        return 1;
    }
    if (result != 0) {
        return result;
    }
    return read_values(file, path, frames * dims[0] * dims[1] * dims[2], values, error, error_size);
}

int fits_cube_read(const char *path, const int64_t dims[3], const char *what, double *values,
                   char *error, size_t error_size)
{
    fitsfile *file = NULL;
    int result = open_cube(path, dims, what, &file, error, error_size);
    if (result != 0) {
        return result;
    }
    return read_values(file, path, dims[0] * dims[1] * dims[2], values, error, error_size);
}

static int read_values(fitsfile *file, const char *path, int64_t count_values, double *values,
                       char *error, size_t error_size)
{
    int status = 0;
    LONGLONG count = (LONGLONG)count_values;
    int any_null = 0;
    /* 0: no "null" values. CFITSIO would otherwise turn every IEEE special
     * value, +inf included, into the null value, and an observation of
     * +inf would be called NaN. */
    double null_value = 0.0;
    fits_read_img(file, TDOUBLE, 1, count, &null_value, values, &any_null, &status);
    if (status != 0) {
        char sentence[512];
        fits_sentence(status, sentence, sizeof sentence);
        snprintf(error, error_size, "cannot read the array of %s: %s", path, sentence);
        int ignored = 0;
        fits_close_file(file, &ignored);
        return -1;
    }
    fits_close_file(file, &status);
    fits_clear_errmsg();
    return 0;
}
