/*
 * src/cli/fits_cube.h: the data cubes of the spart command (scenes and
 * images) as FITS primary arrays, with WCS keywords describing each axis
 * so that astropy, SunPy and ds9 place them (CTYPE, CUNIT, CRPIX, CRVAL,
 * CDELT), and a SPARTKND keyword that `spart info` recognises.
 *
 * Axis order: the arrays are stored in spart's C order, as NumPy lays them
 * out, so astropy's `hdu.data` has exactly spart's shape: a scene is
 * data[wavelength, x, y], images are data[channel, sensor_x, sensor_y].
 * FITS numbers its axes the other way round (NAXIS1 is the last, fastest
 * axis): NAXIS1 is y, NAXIS2 is x, NAXIS3 is wavelength or channel.
 */
#ifndef SPART_CLI_FITS_CUBE_H
#define SPART_CLI_FITS_CUBE_H

#include <stddef.h>
#include <stdint.h>

/* One axis of a cube, in C order (axis 0 is the slowest). Pixel k (from 0)
 * has the coordinate crval + cdelt * k: its centre. (The file's CRPIX and
 * CRVAL name the middle pixel instead, with the same coordinates.) */
typedef struct cube_axis {
    int64_t length;
    const char *ctype; /* WCS type, 8 characters at most ("WAVE", "HPLN-TAN") */
    const char *cunit; /* WCS unit ("Angstrom", "arcsec", "pixel", "" for none) */
    double crval;      /* coordinate of the first pixel's centre */
    double cdelt;      /* step per pixel */
    const char *name;  /* what the axis is, for the comments */
} cube_axis;

/* A cube to write: three axes, values, and what they are. */
typedef struct cube {
    cube_axis axis[3];
    const double *values; /* axis[0].length * axis[1].length * axis[2].length, C order */
    const char *kind;     /* SPARTKND: "scene" or "images" */
    const char *content;  /* CONTENT: "MART solution", "truth", "observed", ... */
    const char *bunit;    /* BUNIT: the values' unit */
    /* Extra numeric keywords (such as ANGLE0 ...), or none. */
    size_t num_extra;
    const char *const *extra_keys;
    const double *extra_values;
    const char *const *extra_comments;
    /* 1: the values written as float32 (BITPIX -32, each rounded to the
     * nearest float as a C cast rounds: what CFITSIO writes for float64
     * values into a float32 image); 0: float64 (BITPIX -64), exactly. */
    int float32;
    /* Threads that encode and write the values (0 or 1: the caller's
     * thread only); at most FITS_CUBE_MAX_THREADS. */
    int threads;
} cube;

/* The most threads a cube is written with, the bytes of values each
 * encodes and writes at a time, and the most threads fits_cube_write
 * uses: the file's pages are filled one write at a time (the page cache
 * takes the file's lock), so beyond a few threads encoding ahead more only
 * contend. Measured on the H200 machine's ext4 disk (round 11,
 * bench_fits_write, a 1.74 GB solution with fsync): 1 thread 2.40 s, 4
 * threads 1.16 s, 8 1.20 s, 16 1.32 s; the same bytes written plainly
 * 1.23 s. */
#define FITS_CUBE_MAX_THREADS 64
#define FITS_CUBE_CHUNK_BYTES ((size_t)8 << 20)
#define FITS_CUBE_WRITE_THREADS 4

/* Write `data` into the new file `path` (which must not exist: write it
 * under a temporary name, see output_files.h) as float64, or float32 with
 * data->float32. Returns 0, or -1 with a sentence naming `display_path`
 * (the final name) in `error`; on failure no file is left at `path`.
 *
 * The file is byte for byte the one CFITSIO writes (fits_create_img,
 * the keywords, fits_write_img): CFITSIO makes the header (in memory),
 * then data->threads threads (at most FITS_CUBE_WRITE_THREADS) encode the
 * values big-endian, a chunk of
 * FITS_CUBE_CHUNK_BYTES at a time each, and write each chunk at its place
 * with checked pwrite() calls (a short write, a full disk or a failed
 * close is an error naming the bytes written, never a short file), then
 * the last block's zero fill. The bytes reach the page cache; the caller
 * flushes them to disk (output_file_commit). */
int fits_cube_write(const char *path, const char *display_path, const cube *data, char *error,
                    size_t error_size);

/* fits_cube_write with chunks of `chunk_bytes` (rounded down to whole
 * values, at least one) and data->threads threads up to
 * FITS_CUBE_MAX_THREADS: for tests of many chunks on small cubes, and for
 * bench_fits_write's thread counts. */
int fits_cube_write_chunked(const char *path, const char *display_path, const cube *data,
                            size_t chunk_bytes, char *error, size_t error_size);

/* Read the primary array of `path` (read-only) into `values`, which holds
 * the product of `dims` values: the array must have exactly these three
 * extents in C order (`what` names them for the sentence, such as
 * "wavelength x scene_x x scene_y"). Returns 0, -1 for a file that cannot
 * be read, or 1 for one whose shape does not fit (the sentence says both
 * shapes). */
int fits_cube_read(const char *path, const int64_t dims[3], const char *what, double *values,
                   char *error, size_t error_size);

/* fits_cube_read's checks without reading the values: whether `path` can
 * be read and holds an array of `dims`, before any long work. */
int fits_cube_check(const char *path, const int64_t dims[3], const char *what, char *error,
                    size_t error_size);

/* Frames of observations: `path` holds either one array of `dims` (one
 * frame) or an array of frames x dims (a cube with a frame axis first,
 * NumPy order); *frames says which. Returns as fits_cube_check. */
int fits_cube_frames(const char *path, const int64_t dims[3], const char *what, int64_t *frames,
                     char *error, size_t error_size);

/* Read the `frames` x dims values of such a file (frames as
 * fits_cube_frames found it) into `values`. Returns as fits_cube_read. */
int fits_cube_read_frames(const char *path, const int64_t dims[3], const char *what, int64_t frames,
                          double *values, char *error, size_t error_size);

#endif /* SPART_CLI_FITS_CUBE_H */
