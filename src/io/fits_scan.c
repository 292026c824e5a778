/*
 * src/io/fits_scan.c: the structure of a FITS file checked from its raw
 * header cards before CFITSIO moves through it (see fits_scan.h).
 *
 * Why not CFITSIO: moving to an extension makes CFITSIO allocate what the
 * header declares (TFIELDS = 5e7 allocates 7.8 GB before anything fails),
 * and a file cut short reads as "no extension named ENTRIES". Reading the
 * 80-character cards here costs one pass over the headers (a few blocks of
 * 2880 bytes each) and seeks over the data.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/fits_scan.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FITS_BLOCK 2880
#define FITS_CARD 80
/* The FITS standard's limits: 999 axes, 999 columns. */
#define FITS_MAX_AXES 999
#define FITS_MAX_FIELDS 999
/* More HDUs than any spart file has by far; a file of only headers could
 * otherwise keep the scan busy for a long time. */
#define SCAN_MAX_HDUS 64

/* What one header declares. */
typedef struct scanned_header {
    double bitpix, naxis, pcount, gcount, tfields;
    double naxes[FITS_MAX_AXES + 1];
    char extname[FITS_CARD + 1];
    int has_bitpix, has_naxis, has_end;
} scanned_header;

static void scan_fail(char *error, size_t size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void scan_fail(char *error, size_t size, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, size, format, arguments);
    va_end(arguments);
}

/* The number after "= " on a card, or NAN when there is none. */
static double card_number(const char *card)
{
    char value[FITS_CARD + 1];
    memcpy(value, card + 10, FITS_CARD - 10);
    value[FITS_CARD - 10] = '\0';
    char *end = NULL;
    double number = strtod(value, &end);
    return end == value ? NAN : number;
}

/* The quoted string of a card (EXTNAME), without its trailing blanks. */
static void card_string(const char *card, char *text)
{
    text[0] = '\0';
    const char *start = memchr(card + 10, '\'', FITS_CARD - 10);
    if (start == NULL) {
        return;
    }
    size_t used = 0;
    for (const char *c = start + 1; c < card + FITS_CARD && *c != '\''; c++) {
        text[used++] = *c;
    }
    while (used > 0 && text[used - 1] == ' ') {
        used--;
    }
    text[used] = '\0';
}

static int keyword_is(const char *card, const char *keyword)
{
    size_t length = strlen(keyword);
    if (memcmp(card, keyword, length) != 0) {
        return 0;
    }
    for (size_t k = length; k < 8; k++) {
        if (card[k] != ' ') {
            return 0;
        }
    }
    return card[8] == '=';
}

/* One card into `header`. */
static void read_card(const char *card, scanned_header *header)
{
    if (memcmp(card, "END     ", 8) == 0) {
        header->has_end = 1;
    } else if (keyword_is(card, "BITPIX")) {
        header->bitpix = card_number(card);
        header->has_bitpix = 1;
    } else if (keyword_is(card, "NAXIS")) {
        header->naxis = card_number(card);
        header->has_naxis = 1;
    } else if (memcmp(card, "NAXIS", 5) == 0 && card[8] == '=') {
        char digits[4] = {card[5], card[6], card[7], '\0'};
        int axis = atoi(digits);
        if (axis >= 1 && axis <= FITS_MAX_AXES) {
            header->naxes[axis] = card_number(card);
        }
    } else if (keyword_is(card, "PCOUNT")) {
        header->pcount = card_number(card);
    } else if (keyword_is(card, "GCOUNT")) {
        header->gcount = card_number(card);
    } else if (keyword_is(card, "TFIELDS")) {
        header->tfields = card_number(card);
    } else if (keyword_is(card, "EXTNAME")) {
        card_string(card, header->extname);
    }
}

/* A count a header declares: a whole number in [0, limit]. */
static int count_is_valid(double value, double limit)
{
    return value >= 0.0 && value <= limit && value == floor(value);
}

/* The HDU's name in sentences: "extension ENTRIES (HDU 3)". */
static void hdu_name(const scanned_header *header, int hdu, char *text, size_t size)
{
    if (hdu == 1) {
        snprintf(text, size, "the primary HDU");
    } else if (header->extname[0] != '\0') {
        snprintf(text, size, "extension %s (HDU %d)", header->extname, hdu);
    } else {
        snprintf(text, size, "HDU %d", hdu);
    }
}

/* The data bytes a checked header declares, or -1 with a sentence. */
static double data_bytes(const scanned_header *header, const char *name, double file_bytes,
                         char *error, size_t size)
{
    if (!header->has_bitpix || !header->has_naxis ||
        !count_is_valid(header->naxis, FITS_MAX_AXES)) {
        scan_fail(error, size, "%s has no valid BITPIX and NAXIS keywords", name);
        return -1.0;
    }
    double bitpix = fabs(header->bitpix);
    if (bitpix != 8 && bitpix != 16 && bitpix != 32 && bitpix != 64) {
        scan_fail(error, size, "%s has BITPIX = %g, which FITS does not allow", name,
                  header->bitpix);
        return -1.0;
    }
    if (!count_is_valid(header->tfields, FITS_MAX_FIELDS)) {
        scan_fail(error, size, "%s declares TFIELDS = %g columns (FITS allows 0 to %d)", name,
                  header->tfields, FITS_MAX_FIELDS);
        return -1.0;
    }
    /* Sizes in double: exact up to 2^53 bytes, far beyond any file, and a
     * product of huge NAXISn saturates instead of wrapping. */
    double values = header->naxis > 0 ? 1.0 : 0.0;
    for (int k = 1; k <= (int)header->naxis; k++) {
        if (!count_is_valid(header->naxes[k], 9.0e18)) {
            scan_fail(error, size, "%s has NAXIS%d = %g, not a length", name, k, header->naxes[k]);
            return -1.0;
        }
        values *= header->naxes[k];
    }
    if (!count_is_valid(header->pcount, 9.0e18) || !count_is_valid(header->gcount, 9.0e18)) {
        scan_fail(error, size, "%s has a negative or fractional PCOUNT or GCOUNT", name);
        return -1.0;
    }
    double bytes = bitpix / 8.0 * header->gcount * (header->pcount + values);
    if (!(bytes <= file_bytes)) {
        scan_fail(error, size,
                  "%s declares %.0f bytes of data, more than the whole file (%.0f bytes): the "
                  "file is truncated or damaged",
                  name, bytes, file_bytes);
        return -1.0;
    }
    return bytes;
}

int spart_fits_scan(const char *path, char *error, size_t size)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        scan_fail(error, size, "cannot open it: %s", strerror(errno));
        return -1;
    }
    struct stat info;
    double file_bytes = fstat(fileno(file), &info) == 0 ? (double)info.st_size : 0.0;
    double offset = 0.0;
    int result = 0;
    scanned_header *h = malloc(sizeof *h); /* 8 KB: kept off callers' stacks */
    if (h == NULL) {
        fclose(file);
        scan_fail(error, size, "out of memory");
        return -1;
    }
    for (int hdu = 1; offset < file_bytes && result == 0; hdu++) {
        char name[FITS_CARD + 32];
        if (hdu > SCAN_MAX_HDUS) {
            scan_fail(error, size, "more than %d HDUs: not a file spart wrote", SCAN_MAX_HDUS);
            result = -1;
            break;
        }
        memset(h, 0, sizeof *h);
        h->gcount = 1.0;
        while (!h->has_end) {
            char block[FITS_BLOCK];
            if (fseeko(file, (off_t)offset, SEEK_SET) != 0 ||
                fread(block, 1, FITS_BLOCK, file) != FITS_BLOCK) {
                hdu_name(h, hdu, name, sizeof name);
                scan_fail(error, size,
                          "the file ends inside the header of %s (after %.0f bytes): it is "
                          "truncated",
                          name, file_bytes);
                result = -1;
                break;
            }
            offset += FITS_BLOCK;
            for (int c = 0; c < FITS_BLOCK / FITS_CARD && !h->has_end; c++) {
                read_card(block + c * FITS_CARD, h);
            }
        }
        if (result != 0) {
            break;
        }
        if (hdu == 1) {
            h->tfields = 0.0; /* a primary array has no columns */
        }
        hdu_name(h, hdu, name, sizeof name);
        double bytes = data_bytes(h, name, file_bytes, error, size);
        if (bytes < 0.0) {
            result = -1;
        } else if (offset + bytes > file_bytes) {
            scan_fail(error, size,
                      "the file ends inside the data of %s (%.0f bytes short): it is truncated",
                      name, offset + bytes - file_bytes);
            result = -1;
        } else {
            offset += ceil(bytes / FITS_BLOCK) * FITS_BLOCK;
        }
    }
    free(h);
    fclose(file);
    return result;
}
