/*
 * tests/cli/fits_cube_reference.h: the spart command's cube as CFITSIO
 * alone writes it (fits_create_img, the keywords, fits_write_img, into a
 * memory file that grows as CFITSIO writes): the way src/cli/fits_cube.c
 * wrote every cube before it wrote the values itself, kept as the
 * reference its files must equal byte for byte (test_fits_cube) and as
 * the old path that bench_fits_write times beside the new one.
 *
 * Include it after src/cli/fits_cube.c itself (it uses that file's static
 * write_header and fits_sentence).
 */
#ifndef SPART_TESTS_FITS_CUBE_REFERENCE_H
#define SPART_TESTS_FITS_CUBE_REFERENCE_H

/* The whole file in *buffer (malloc'ed, *size bytes allocated), of
 * *length bytes. Returns 0, or -1 with CFITSIO's sentence. */
static int reference_cube_in_memory(const cube *data, void **buffer, size_t *size,
                                    long long *length, char *sentence, size_t sentence_size)
{
    int status = 0;
    fitsfile *file = NULL;
    long naxes[3] = {(long)data->axis[2].length, (long)data->axis[1].length,
                     (long)data->axis[0].length};
    LONGLONG count = (LONGLONG)naxes[0] * naxes[1] * naxes[2];
    LONGLONG file_length = 0;
    *buffer = NULL;
    *size = 0;
    fits_create_memfile(&file, buffer, size, 2880 * 16, realloc, &status);
    if (status == 0) {
        fits_create_img(file, data->float32 ? FLOAT_IMG : DOUBLE_IMG, 3, naxes, &status);
        write_header(file, data, &status);
        fits_write_img(file, TDOUBLE, 1, count, (void *)data->values, &status);
        LONGLONG header_start = 0;
        LONGLONG data_start = 0;
        fits_get_hduaddrll(file, &header_start, &data_start, &file_length, &status);
    }
    if (file != NULL) {
        fits_close_file(file, &status);
    }
    if (status != 0) {
        fits_sentence(status, sentence, sentence_size);
        return -1;
    }
    *length = (long long)file_length;
    return 0;
}

#endif /* SPART_TESTS_FITS_CUBE_REFERENCE_H */
