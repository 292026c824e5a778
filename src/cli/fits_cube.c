/*
 * src/cli/fits_cube.c: scenes and images as FITS primary arrays with WCS
 * keywords (see fits_cube.h).
 */
#include "fits_cube.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fitsio.h>

#include "io/fits_scan.h"
#include "spart.h"

/* The version of the cube layout, in SPARTVER. */
#define CUBE_LAYOUT_VERSION 1

/* FITS files are made of blocks of this many bytes. */
#define FITS_BLOCK 2880

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

/* ---- writing: the header through CFITSIO, the values in parallel ------------------------ */

/* The header of `data`'s file, as CFITSIO would write it in front of the
 * values: its cards (END included), 80 characters each, padded with
 * spaces to whole 2880-byte blocks. CFITSIO makes it in a small memory
 * file that never holds the values: the axes' lengths are set to 1 once
 * the cards are read, so that closing does not fill a data unit of
 * gigabytes. */
static int cube_header(const cube *data, int bitpix, char **header, size_t *length, char *sentence,
                       size_t sentence_size)
{
    int status = 0;
    fitsfile *file = NULL;
    void *buffer = NULL;
    size_t size = 0;
    char *cards = NULL;
    int num_cards = 0;
    long naxes[3] = {(long)data->axis[2].length, (long)data->axis[1].length,
                     (long)data->axis[0].length};
    *header = NULL;
    fits_create_memfile(&file, &buffer, &size, 2880 * 4, realloc, &status);
    if (status == 0) {
        fits_create_img(file, bitpix, 3, naxes, &status);
        write_header(file, data, &status);
        fits_hdr2str(file, 0, NULL, 0, &cards, &num_cards, &status);
        /* One value an axis: the file closes with a data unit of one block
         * (fits_resize_img would first write the whole data unit). */
        const char *lengths[3] = {"NAXIS1", "NAXIS2", "NAXIS3"};
        for (int k = 0; k < 3; k++) {
            fits_modify_key_lng(file, lengths[k], 1, "&", &status);
        }
    }
    if (file != NULL) {
        fits_close_file(file, &status);
    }
    free(buffer);
    if (status != 0) {
        fits_sentence(status, sentence, sentence_size);
        if (cards != NULL) {
            int ignored = 0;
            fits_free_memory(cards, &ignored);
        }
        return -1;
    }
    size_t used = (size_t)num_cards * 80;
    size_t blocks = (used + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK;
    *header = malloc(blocks);
    if (*header == NULL || strlen(cards) != used) {
        snprintf(sentence, sentence_size, "%s",
                 *header == NULL ? "out of memory" : "CFITSIO's header has a card of odd length");
        free(*header);
        *header = NULL;
        fits_free_memory(cards, &status);
        return -1;
    }
    memcpy(*header, cards, used);
    memset(*header + used, ' ', blocks - used);
    *length = blocks;
    fits_free_memory(cards, &status);
    return 0;
}

/* 1 when this machine stores numbers little-endian (FITS is big-endian). */
static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static uint64_t swap64(uint64_t bits)
{
    return ((bits & 0x00000000000000ffull) << 56) | ((bits & 0x000000000000ff00ull) << 40) |
           ((bits & 0x0000000000ff0000ull) << 24) | ((bits & 0x00000000ff000000ull) << 8) |
           ((bits & 0x000000ff00000000ull) >> 8) | ((bits & 0x0000ff0000000000ull) >> 24) |
           ((bits & 0x00ff000000000000ull) >> 40) | ((bits & 0xff00000000000000ull) >> 56);
}

static uint32_t swap32(uint32_t bits)
{
    return (bits >> 24) | ((bits >> 8) & 0xff00u) | ((bits << 8) & 0xff0000u) | (bits << 24);
}

/* `count` values as FITS bytes (big-endian float64, or float32 rounded as
 * a C cast rounds, as CFITSIO converts) into `bytes`. A loop a case, each
 * simple enough for the compiler to vectorise (the swaps are byte
 * shuffles). */
static void encode_values(const double *restrict values, size_t count, int float32, int swap,
                          unsigned char *restrict bytes)
{
    if (float32) {
        for (size_t k = 0; k < count; k++) {
            float value = (float)values[k];
            uint32_t bits;
            memcpy(&bits, &value, sizeof bits);
            bits = swap ? swap32(bits) : bits;
            memcpy(bytes + 4 * k, &bits, sizeof bits);
        }
    } else if (swap) {
        for (size_t k = 0; k < count; k++) {
            uint64_t bits;
            memcpy(&bits, &values[k], sizeof bits);
            bits = swap64(bits);
            memcpy(bytes + 8 * k, &bits, sizeof bits);
        }
    } else {
        memcpy(bytes, values, count * sizeof(double));
    }
}

/* Every byte of `count` at `offset` of the open file, or -1 with errno
 * (0 for a write that made no progress). */
static int write_at(int descriptor, const void *bytes, size_t count, off_t offset)
{
    const unsigned char *next = bytes;
    while (count > 0) {
        ssize_t written = pwrite(descriptor, next, count, offset);
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {
            if (written == 0) {
                errno = 0;
            }
            return -1;
        }
        next += written;
        offset += written;
        count -= (size_t)written;
    }
    return 0;
}

/* The values' writers: a thread takes chunks t, t + T, t + 2T, ... of the
 * data unit, encodes each into its own buffer and writes it at its place.
 * The first failure (lowest chunk) is the one reported. */
typedef struct value_writer {
    int descriptor;
    const double *values;
    size_t count; /* values */
    size_t chunk; /* values a chunk */
    size_t width; /* bytes a value: 8 or 4 */
    off_t start;  /* the data unit's offset: the header's length */
    int float32, swap, threads;
    pthread_mutex_t lock;
    size_t failed_chunk; /* the lowest chunk that failed, or SIZE_MAX */
    int failed_errno;
} value_writer;

typedef struct value_thread {
    value_writer *writer;
    int index;
    pthread_t thread;
} value_thread;

static void *write_values(void *user)
{
    value_thread *self = user;
    value_writer *w = self->writer;
    unsigned char *buffer = malloc(w->chunk * w->width);
    size_t chunks = (w->count + w->chunk - 1) / w->chunk;
    for (size_t c = (size_t)self->index; c < chunks; c += (size_t)w->threads) {
        pthread_mutex_lock(&w->lock);
        int stop = w->failed_chunk < c;
        pthread_mutex_unlock(&w->lock);
        if (stop) {
            break;
        }
        size_t first = c * w->chunk;
        size_t count = w->count - first < w->chunk ? w->count - first : w->chunk;
        int failed = buffer == NULL;
        int error = ENOMEM;
        if (!failed) {
            encode_values(w->values + first, count, w->float32, w->swap, buffer);
            failed = write_at(w->descriptor, buffer, count * w->width,
                              w->start + (off_t)(first * w->width)) != 0;
            error = errno;
        }
        if (failed) {
            pthread_mutex_lock(&w->lock);
            if (c < w->failed_chunk) {
                w->failed_chunk = c;
                w->failed_errno = error;
            }
            pthread_mutex_unlock(&w->lock);
            break;
        }
    }
    free(buffer);
    return NULL;
}

/* The writers over the values; returns 0, or -1 with the sentence. */
static int write_data_unit(value_writer *w, const char *display_path, char *error,
                           size_t error_size)
{
    value_thread threads[FITS_CUBE_MAX_THREADS];
    int started = 0;
    pthread_mutex_init(&w->lock, NULL);
    w->failed_chunk = SIZE_MAX;
    for (int t = 1; t < w->threads; t++) {
        threads[t].writer = w;
        threads[t].index = t;
        if (pthread_create(&threads[t].thread, NULL, write_values, &threads[t]) != 0) {
            break;
        }
        started = t;
    }
    /* threads that could not start leave their chunks to the next round:
     * fewer threads, the same chunks, so only the count changes */
    if (started + 1 < w->threads) {
        for (int t = 1; t <= started; t++) {
            pthread_join(threads[t].thread, NULL);
        }
        started = 0;
        w->threads = 1;
        w->failed_chunk = SIZE_MAX;
    }
    threads[0].writer = w;
    threads[0].index = 0;
    write_values(&threads[0]);
    for (int t = 1; t <= started; t++) {
        pthread_join(threads[t].thread, NULL);
    }
    pthread_mutex_destroy(&w->lock);
    if (w->failed_chunk != SIZE_MAX) {
        size_t total = w->count * w->width;
        size_t at = w->failed_chunk * w->chunk * w->width;
        snprintf(error, error_size, "cannot write %s: %s after %zu of %zu bytes of values",
                 display_path, w->failed_errno != 0 ? strerror(w->failed_errno) : "no progress", at,
                 total);
        return -1;
    }
    return 0;
}

int fits_cube_write(const char *path, const char *display_path, const cube *data, char *error,
                    size_t error_size)
{
    cube capped = *data;
    capped.threads =
        data->threads < FITS_CUBE_WRITE_THREADS ? data->threads : FITS_CUBE_WRITE_THREADS;
    return fits_cube_write_chunked(path, display_path, &capped, FITS_CUBE_CHUNK_BYTES, error,
                                   error_size);
}

int fits_cube_write_chunked(const char *path, const char *display_path, const cube *data,
                            size_t chunk_bytes, char *error, size_t error_size)
{
    int bitpix = data->float32 ? FLOAT_IMG : DOUBLE_IMG;
    size_t width = data->float32 ? 4 : 8;
    char *header = NULL;
    size_t header_length = 0;
    char sentence[512];
    if (cube_header(data, bitpix, &header, &header_length, sentence, sizeof sentence) != 0) {
        snprintf(error, error_size, "cannot write %s: %s", display_path, sentence);
        return -1;
    }
    size_t count =
        (size_t)data->axis[0].length * (size_t)data->axis[1].length * (size_t)data->axis[2].length;
    size_t data_bytes = count * width;
    size_t fill = (FITS_BLOCK - data_bytes % FITS_BLOCK) % FITS_BLOCK;
    int descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (descriptor < 0) {
        snprintf(error, error_size, "cannot write %s: %s", display_path, strerror(errno));
        free(header);
        return -1;
    }
    int result = 0;
    if (write_at(descriptor, header, header_length, 0) != 0) {
        snprintf(error, error_size, "cannot write %s: %s in its header", display_path,
                 errno != 0 ? strerror(errno) : "no progress");
        result = -1;
    }
    free(header);
    if (result == 0 && count > 0) {
        size_t chunk = chunk_bytes / width < 1 ? 1 : chunk_bytes / width;
        size_t chunks = (count + chunk - 1) / chunk;
        int threads = data->threads < 1 ? 1 : data->threads;
        threads = threads > FITS_CUBE_MAX_THREADS ? FITS_CUBE_MAX_THREADS : threads;
        threads = (size_t)threads > chunks ? (int)chunks : threads;
        value_writer w;
        memset(&w, 0, sizeof w);
        w.descriptor = descriptor;
        w.values = data->values;
        w.count = count;
        w.chunk = chunk;
        w.width = width;
        w.start = (off_t)header_length;
        w.float32 = data->float32;
        w.swap = little_endian();
        w.threads = threads;
        result = write_data_unit(&w, display_path, error, error_size);
    }
    if (result == 0 && fill > 0) {
        static const char zeros[FITS_BLOCK];
        if (write_at(descriptor, zeros, fill, (off_t)(header_length + data_bytes)) != 0) {
            snprintf(error, error_size, "cannot write %s: %s in its last block", display_path,
                     errno != 0 ? strerror(errno) : "no progress");
            result = -1;
        }
    }
    if (close(descriptor) != 0 && result == 0) {
        snprintf(error, error_size, "cannot write %s: closing it: %s", display_path,
                 strerror(errno));
        result = -1;
    }
    if (result != 0) {
        remove(path);
    }
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
