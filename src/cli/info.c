/*
 * src/cli/info.c: `spart info FILE.fits`: what a file written by spart
 * holds, from its headers (docs/formats.md for weights and regridders,
 * docs/config.md for the scenes and images of `spart invert`). The file is
 * opened read-only; tables are not read, so a file of any size answers at
 * once. Cubes are small, and their values' range is shown too.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fitsio.h>

#include "cli.h"

/* One open file and the sentence of its first failure. */
typedef struct info_file {
    const cli_options *options;
    const char *path;
    fitsfile *file;
    int status; /* CFITSIO's */
} info_file;

static long long integer_key(info_file *info, const char *key)
{
    long long value = 0;
    fits_read_key(info->file, TLONGLONG, key, &value, NULL, &info->status);
    return value;
}

static double double_key(info_file *info, const char *key)
{
    double value = 0.0;
    fits_read_key(info->file, TDOUBLE, key, &value, NULL, &info->status);
    return value;
}

/* A string keyword, or "" when it is not there (no failure). */
static void optional_string_key(info_file *info, const char *key, char *value)
{
    int status = 0;
    value[0] = '\0';
    fits_read_key(info->file, TSTRING, key, value, NULL, &status);
    if (status != 0) {
        value[0] = '\0';
        fits_clear_errmsg();
    }
}

/* "<PREFIX>NDIM" and "<PREFIX>DIMk" as "4x20x65", with "[b]" after batch
 * axes when the file flags them ("<PREFIX>BATk"). */
static void shape_text(info_file *info, const char *prefix, int batch_flags, char *text,
                       size_t size)
{
    char key[FLEN_KEYWORD];
    snprintf(key, sizeof key, "%sNDIM", prefix);
    long long ndim = integer_key(info, key);
    int used = 0;
    text[0] = '\0';
    for (long long k = 0; k < ndim && k < 16 && info->status == 0; k++) {
        snprintf(key, sizeof key, "%sDIM%lld", prefix, k);
        long long extent = integer_key(info, key);
        int is_batch = 0;
        if (batch_flags) {
            snprintf(key, sizeof key, "%sBAT%lld", prefix, k);
            fits_read_key(info->file, TLOGICAL, key, &is_batch, NULL, &info->status);
        }
        if (used >= 0 && (size_t)used < size) {
            used += snprintf(text + used, size - (size_t)used, "%s%lld%s", k > 0 ? "x" : "", extent,
                             is_batch ? "[batch]" : "");
        }
    }
    if (ndim == 0) {
        snprintf(text, size, "scalar");
    }
}

static void axes_text(info_file *info, const char *prefix, char *text, size_t size)
{
    char key[FLEN_KEYWORD];
    snprintf(key, sizeof key, "%sNAX", prefix);
    long long count = integer_key(info, key);
    int used = 0;
    text[0] = '\0';
    for (long long k = 0; k < count && k < 16 && info->status == 0; k++) {
        snprintf(key, sizeof key, "%sAX%lld", prefix, k);
        long long axis = integer_key(info, key);
        if (used >= 0 && (size_t)used < size) {
            used += snprintf(text + used, size - (size_t)used, "%s%lld", k > 0 ? ", " : "", axis);
        }
    }
}

static void describe_weights(info_file *info)
{
    char orthogonal[256];
    char input[256];
    char output[256];
    char axes_in[128];
    char axes_out[128];
    shape_text(info, "ORT", 0, orthogonal, sizeof orthogonal);
    shape_text(info, "IN", 0, input, sizeof input);
    shape_text(info, "OUT", 0, output, sizeof output);
    axes_text(info, "IN", axes_in, sizeof axes_in);
    axes_text(info, "OUT", axes_out, sizeof axes_out);
    long long elements = integer_key(info, "NELEM");
    long long entries = integer_key(info, "NENTRIES");
    long long in_size = integer_key(info, "INSIZE");
    long long out_size = integer_key(info, "OUTSIZE");
    if (info->status != 0) {
        return;
    }
    printf("  orthogonal shape: %s (%lld elements)\n", orthogonal, elements);
    printf("  input shape:      %s, resampled axes %s (%lld cells per element)\n", input, axes_in,
           in_size);
    printf("  output shape:     %s, resampled axes %s (%lld cells per element)\n", output, axes_out,
           out_size);
    printf("  entries:          %lld (int64 indices, float64 values)\n", entries);
}

static void describe_regridder(info_file *info)
{
    char input[256];
    char output[256];
    char value_type[FLEN_VALUE];
    shape_text(info, "IN", 1, input, sizeof input);
    shape_text(info, "OUT", 1, output, sizeof output);
    long long rows = integer_key(info, "NROWS");
    long long columns = integer_key(info, "NCOLS");
    long long entries = integer_key(info, "NENTRIES");
    long long batch = integer_key(info, "NBATCH");
    long long group = integer_key(info, "GROUPSZ");
    long long chunk = integer_key(info, "CHUNKLEN");
    fits_read_key(info->file, TSTRING, "VALTYPE", value_type, NULL, &info->status);
    if (info->status != 0) {
        return;
    }
    printf("  matrix:      %lld rows x %lld columns, %lld entries (%.2f per row)\n", rows, columns,
           entries, rows > 0 ? (double)entries / (double)rows : 0.0);
    printf("  value type:  %s (column indices int%d)\n", value_type,
           columns < 2147483648LL ? 32 : 64);
    printf("  input shape: %s\n", input);
    printf("  output shape: %s\n", output);
    printf("  batch:       %lld vectors per product\n", batch);
    printf("  plan:        %lld lanes per row, chunks of %lld entries\n", group, chunk);
}

/* One axis of a cube: "  axis 0 (WAVE): 20 values from a to b Angstrom". */
static void describe_cube_axis(info_file *info, int fits_axis, long long length, int c_axis)
{
    char key[FLEN_KEYWORD];
    char ctype[FLEN_VALUE];
    char cunit[FLEN_VALUE];
    char comment[FLEN_COMMENT] = "";
    snprintf(key, sizeof key, "CTYPE%d", fits_axis);
    ctype[0] = '\0';
    fits_read_key(info->file, TSTRING, key, ctype, comment, &info->status);
    snprintf(key, sizeof key, "CUNIT%d", fits_axis);
    optional_string_key(info, key, cunit);
    snprintf(key, sizeof key, "CRVAL%d", fits_axis);
    double reference = double_key(info, key);
    snprintf(key, sizeof key, "CRPIX%d", fits_axis);
    double reference_pixel = double_key(info, key);
    snprintf(key, sizeof key, "CDELT%d", fits_axis);
    double step = double_key(info, key);
    double first = reference + step * (1.0 - reference_pixel); /* at FITS pixel 1 */
    if (info->status != 0) {
        return;
    }
    printf("  axis %d, %-9s %5lld values from %.6g to %.6g %s (step %.6g)  [%s]\n", c_axis, ctype,
           length, first, first + step * (double)(length - 1), cunit, step, comment);
}

static void describe_values(info_file *info, long long count)
{
    double *values = malloc((size_t)count * sizeof *values);
    if (values == NULL) {
        return;
    }
    int any_null = 0;
    double null_value = NAN;
    fits_read_img(info->file, TDOUBLE, 1, count, &null_value, values, &any_null, &info->status);
    if (info->status == 0) {
        double low = INFINITY;
        double high = -INFINITY;
        double sum = 0.0;
        for (long long k = 0; k < count; k++) {
            low = values[k] < low ? values[k] : low;
            high = values[k] > high ? values[k] : high;
            sum += values[k];
        }
        printf("  values:      from %.6g to %.6g, sum %.6g\n", low, high, sum);
    }
    free(values);
}

/* The cube's value count from its header, or -1 with a sentence when the
 * header claims more values than the file holds (NAXIS2 = INT64_MAX must
 * not overflow into a bogus shape). */
static long long cube_count(info_file *info, const LONGLONG naxes[3], int bitpix, long long bytes)
{
    long long count = 1;
    long long value_bytes = bitpix < 0 ? -bitpix / 8 : bitpix / 8;
    for (int k = 0; k < 3; k++) {
        if (naxes[k] < 1 || count > LLONG_MAX / naxes[k]) {
            count = -1;
            break;
        }
        count *= naxes[k];
    }
    if (count < 0 || value_bytes < 1 || count > bytes / value_bytes) {
        cli_error(info->options,
                  "%s: the header's shape %lldx%lldx%lld (NAXIS3 x NAXIS2 x NAXIS1) is more "
                  "than the file's %lld bytes can hold: the file is damaged",
                  info->path, (long long)naxes[2], (long long)naxes[1], (long long)naxes[0], bytes);
        return -1;
    }
    return count;
}

static int describe_cube(info_file *info, long long bytes)
{
    int naxis = 0;
    int bitpix = 0;
    LONGLONG naxes[3] = {0, 0, 0};
    fits_get_img_dim(info->file, &naxis, &info->status);
    fits_get_img_type(info->file, &bitpix, &info->status);
    if (info->status != 0 || naxis != 3) {
        printf("  (not a three-axis array: NAXIS = %d)\n", naxis);
        return 0;
    }
    fits_get_img_sizell(info->file, 3, naxes, &info->status);
    long long count = info->status == 0 ? cube_count(info, naxes, bitpix, bytes) : 0;
    if (count < 0) {
        return -1;
    }
    char content[FLEN_VALUE];
    char unit[FLEN_VALUE];
    optional_string_key(info, "CONTENT", content);
    optional_string_key(info, "BUNIT", unit);
    printf("  content:     %s\n", content);
    printf("  shape:       %lldx%lldx%lld (NumPy order), %s values in %s\n", (long long)naxes[2],
           (long long)naxes[1], (long long)naxes[0],
           bitpix == DOUBLE_IMG ? "float64" : (bitpix == FLOAT_IMG ? "float32" : "integer"), unit);
    for (int c_axis = 0; c_axis < 3; c_axis++) {
        describe_cube_axis(info, 3 - c_axis, (long long)naxes[2 - c_axis], c_axis);
    }
    describe_values(info, count);
    return 0;
}

static int describe(info_file *info)
{
    char kind[FLEN_VALUE];
    char library[FLEN_VALUE];
    optional_string_key(info, "SPARTKND", kind);
    if (kind[0] == '\0') {
        cli_error(info->options,
                  "%s is a FITS file but not one spart wrote (its primary header has no SPARTKND "
                  "keyword)",
                  info->path);
        return EXIT_FAILED;
    }
    optional_string_key(info, "SPARTLIB", library);
    long long version = integer_key(info, "SPARTVER");
    struct stat file_info;
    long long bytes = stat(info->path, &file_info) == 0 ? (long long)file_info.st_size : -1;
    printf("%s: spart %s file (layout %lld, written by spart %s), %lld bytes\n", info->path, kind,
           version, library[0] != '\0' ? library : "?", bytes);
    if (strcmp(kind, "weights") == 0) {
        describe_weights(info);
    } else if (strcmp(kind, "regridder") == 0) {
        describe_regridder(info);
    } else if (strcmp(kind, "scene") == 0 || strcmp(kind, "images") == 0) {
        if (describe_cube(info, bytes) != 0) {
            return EXIT_FAILED;
        }
    } else {
        printf("  (a kind this spart does not know; its header is all that can be said)\n");
    }
    if (info->status != 0) {
        char text[FLEN_STATUS];
        fits_get_errstatus(info->status, text);
        cli_error(info->options, "%s: a header keyword is missing or wrong: %s", info->path, text);
        return EXIT_FAILED;
    }
    return EXIT_DONE;
}

int cli_info(const cli_options *options)
{
    info_file info = {options, options->file_path, NULL, 0};
    struct stat file_info;
    if (stat(info.path, &file_info) != 0) {
        cli_error(options, "%s: no such file", info.path);
        return EXIT_FAILED;
    }
    if (S_ISDIR(file_info.st_mode)) {
        cli_error(options, "%s is a folder, not a file", info.path);
        return EXIT_FAILED;
    }
    fits_open_diskfile(&info.file, info.path, READONLY, &info.status);
    if (info.status != 0) {
        char text[FLEN_STATUS];
        fits_get_errstatus(info.status, text);
        fits_clear_errmsg();
        cli_error(options, "%s is not a FITS file that can be read: %s", info.path, text);
        return EXIT_FAILED;
    }
    int code = describe(&info);
    int ignored = 0;
    fits_close_file(info.file, &ignored);
    fits_clear_errmsg();
    return code;
}
