/*
 * src/io/weights_fits.h: what src/io/weights_fits.c (weights files, the
 * layout of docs/formats.md) lends to the streamed reader of
 * src/io/weights_files.c.
 */
#ifndef SPART_WEIGHTS_FITS_H
#define SPART_WEIGHTS_FITS_H

#include "io/fits_util.h"
#include "weights/weights_internal.h"

/* Read and check an open weights file's primary header and its table
 * ELEMENTS, as spart_weights_load does, into a new weights object without
 * entries (*shell: shapes, axes and offsets; free it with
 * spart_weights_free), and leave the file at table WEIGHTS, whose columns
 * INDEX_IN, INDEX_OUT and VALUE are columns[0 .. 2] (CFITSIO numbers).
 * Errors as spart_weights_load's. */
spart_status spart_weights_fits_read_shell(const spart_fits_io *io, spart_weights **shell,
                                           int *columns);

#endif /* SPART_WEIGHTS_FITS_H */
