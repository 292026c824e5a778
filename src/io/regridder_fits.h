/*
 * src/io/regridder_fits.h: what saving and loading a regridder's FITS file
 * share (src/io/regridder_fits_save.c, src/io/regridder_fits_load.c; the
 * layout is described there and in docs/formats.md): the format version,
 * the kind of file, and the contents of the primary header. Included by
 * those two files alone.
 */
#ifndef SPART_REGRIDDER_FITS_H
#define SPART_REGRIDDER_FITS_H

#include <stdint.h>

#include "operator/regridder_internal.h"

/* The version of the layout this file writes and the only one it reads.
 * Raise it whenever docs/formats.md changes in a way old readers would
 * misread. */
#define REGRIDDER_FORMAT_VERSION 1
#define REGRIDDER_KIND "regridder"
#define REGRIDDER_NOUN "regridder"

/* From this many columns on, column indices are int64 (as assembly and the
 * transpose choose them). */
#define INT32_COLUMN_LIMIT ((int64_t)1 << 31)

/* CFITSIO moves J columns as `int` and K columns as `long long`. */
_Static_assert(sizeof(int) == sizeof(int32_t), "int must be 32 bits");
_Static_assert(sizeof(long long) == sizeof(int64_t), "long long must be 64 bits");

/* What the primary header says: filled from a regridder when saving, from
 * the keywords (and checked) when loading. */
typedef struct regridder_header {
    int64_t num_rows;
    int64_t num_columns;
    int64_t num_entries;
    spart_value_type value_type;
    spart_product_plan plan;
    spart_axis_map input;
    spart_axis_map output;
    int has_roles; /* the roles of the axes are saved (made from weights) */
    spart_regridder_roles roles;
} regridder_header;

#endif /* SPART_REGRIDDER_FITS_H */
