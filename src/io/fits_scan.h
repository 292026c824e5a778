/*
 * src/io/fits_scan.h: a FITS file's structure checked from its raw header
 * cards, before CFITSIO moves through its extensions.
 *
 * spart_fits_scan walks every HDU: each header must end (END card) inside
 * the file; BITPIX, NAXIS and NAXISn must be valid, TFIELDS at most 999 (the
 * FITS limit), and the data each header declares must lie inside the file.
 * A file that passes can be moved through by CFITSIO without it allocating
 * what a damaged header claims (TFIELDS = 5e7) and without a truncated file
 * reading as a missing extension. Data missing only from the padding of
 * the last block is accepted, as CFITSIO accepts it.
 *
 * Thread safety: none needed (no state).
 */
#ifndef SPART_FITS_SCAN_H
#define SPART_FITS_SCAN_H

#include <stddef.h>

/* 0 when the structure holds; -1 with a sentence in `error` (no path in
 * it: the caller names the file) when it does not. */
int spart_fits_scan(const char *path, char *error, size_t size);

#endif
