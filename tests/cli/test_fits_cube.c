/*
 * tests/cli/test_fits_cube.c: the spart command's FITS cubes as written by
 * src/cli/fits_cube.c (the header through CFITSIO, the values encoded and
 * written by the writer's threads, a chunk at a time): byte for byte the
 * file CFITSIO alone writes (tests/cli/fits_cube_reference.h), in float64
 * and in float32, for one chunk and for many chunks over several threads,
 * for data units that end on a block and that need the zero fill; read
 * back with the command's reader; and a failed write (a file size limit,
 * as a full disk) and a missing folder reported with a sentence and no
 * file left.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

/* The writer itself, for its static header writer (the reference's). */
#include "cli/fits_cube.c"
#include "fits_cube_reference.h"

static const char *const extra_keys[] = {"RESTWAV", "LINEB0", "LINEW0"};
static const double extra_values[] = {1.7e-8, 0.0, 1.7e-8};
static const char *const extra_comments[] = {"[m] rest wavelength", "first bin",
                                             "[m] rest wavelength of this line"};

/* A cube of `a` x `b` x `c` values, among them the special ones. */
static cube make_cube(int64_t a, int64_t b, int64_t c, double *values)
{
    int64_t count = a * b * c;
    for (int64_t k = 0; k < count; k++) {
        values[k] = sin(0.37 * (double)k) * pow(10.0, (double)(k % 19) - 9.0);
    }
    double special[] = {NAN, INFINITY, -INFINITY, -0.0, 1e300, -1e-310, 3.4028235677973366e38};
    for (size_t k = 0; k < sizeof special / sizeof special[0] && (int64_t)k < count; k++) {
        values[count - 1 - (int64_t)k] = special[k];
    }
    cube data;
    memset(&data, 0, sizeof data);
    data.axis[0] = (cube_axis){a, "SPECBIN", "", 0.0, 1.0, "spectral bin"};
    data.axis[1] = (cube_axis){b, "HPLN-TAN", "arcsec", -400.0, 0.75, "scene x"};
    data.axis[2] = (cube_axis){c, "HPLT-TAN", "arcsec", -400.0, 0.75, "scene y"};
    data.values = values;
    data.kind = "scene";
    data.content = "MART solution";
    data.bunit = "erg / (A sr cm2 s)";
    data.num_extra = 3;
    data.extra_keys = extra_keys;
    data.extra_values = extra_values;
    data.extra_comments = extra_comments;
    return data;
}

static unsigned char *read_whole(const char *path, long *length)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    fseek(file, 0, SEEK_END);
    *length = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)*length + 1);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)*length, file), (size_t)*length);
    fclose(file);
    return bytes;
}

/* `data` written with `threads` threads and chunks of `chunk` bytes is the
 * reference's file, byte for byte, and reads back. */
static void check_same_file(cube data, int threads, size_t chunk)
{
    char path[] = "test_fits_cube_XXXXXX";
    int descriptor = mkstemp(path);
    assert_true(descriptor >= 0);
    close(descriptor);
    remove(path);
    data.threads = threads;
    char error[1024] = "";
    int result = fits_cube_write_chunked(path, "cube.fits", &data, chunk, error, sizeof error);
    if (result != 0) {
        fail_msg("%s", error);
    }
    void *reference = NULL;
    size_t size = 0;
    long long reference_length = 0;
    char sentence[512];
    assert_int_equal(reference_cube_in_memory(&data, &reference, &size, &reference_length, sentence,
                                              sizeof sentence),
                     0);
    long length = 0;
    unsigned char *written = read_whole(path, &length);
    assert_int_equal(length, reference_length);
    assert_int_equal(length % 2880, 0);
    for (long k = 0; k < length; k++) {
        if (written[k] != ((unsigned char *)reference)[k]) {
            fail_msg("byte %ld differs (threads %d, chunk %zu, float32 %d)", k, threads, chunk,
                     data.float32);
        }
    }
    /* read back by the command's reader: the values, or their floats */
    int64_t dims[3] = {data.axis[0].length, data.axis[1].length, data.axis[2].length};
    int64_t count = dims[0] * dims[1] * dims[2];
    double *back = malloc((size_t)count * sizeof *back);
    assert_int_equal(fits_cube_read(path, dims, "a x b x c", back, error, sizeof error), 0);
    for (int64_t k = 0; k < count; k++) {
        double expected = data.float32 ? (double)(float)data.values[k] : data.values[k];
        if (isnan(expected)) {
            assert_true(isnan(back[k]));
        } else {
            assert_memory_equal(&back[k], &expected, sizeof expected);
        }
    }
    free(back);
    free(written);
    free(reference);
    remove(path);
}

static void float64_files_are_cfitsio_s(void **state)
{
    (void)state;
    double *values = malloc(2 * 30 * 48 * sizeof *values);
    /* 105 values: one block of data and a fill; 2880 values: 8 whole blocks */
    check_same_file(make_cube(3, 5, 7, values), 1, FITS_CUBE_CHUNK_BYTES);
    check_same_file(make_cube(3, 5, 7, values), 3, 64);
    check_same_file(make_cube(2, 30, 48, values), 1, FITS_CUBE_CHUNK_BYTES);
    check_same_file(make_cube(2, 30, 48, values), 4, 8 * 97);
    check_same_file(make_cube(2, 30, 48, values), 64, 8);
    free(values);
}

static void float32_files_are_cfitsio_s(void **state)
{
    (void)state;
    double *values = malloc(2 * 30 * 48 * sizeof *values);
    cube data = make_cube(3, 5, 7, values);
    data.float32 = 1;
    check_same_file(data, 1, FITS_CUBE_CHUNK_BYTES);
    check_same_file(data, 2, 12);
    data = make_cube(2, 30, 48, values);
    data.float32 = 1;
    check_same_file(data, 1, FITS_CUBE_CHUNK_BYTES);
    check_same_file(data, 5, 4 * 101);
    /* 5760 values of 4 bytes: 8 whole blocks */
    free(values);
}

static void a_missing_folder_is_named(void **state)
{
    (void)state;
    double values[105];
    cube data = make_cube(3, 5, 7, values);
    char error[1024] = "";
    assert_int_equal(
        fits_cube_write("no-such-folder/x.fits", "out/x.fits", &data, error, sizeof error), -1);
    assert_non_null(strstr(error, "cannot write out/x.fits: No such file or directory"));
}

/* A file that may not grow past 8 KiB (as a full disk): every writer's
 * failure comes back as one sentence, the lowest chunk's, and the file
 * is removed. */
static void a_failed_write_leaves_no_file(void **state)
{
    (void)state;
    int64_t a = 4, b = 30, c = 48; /* 46080 bytes of values */
    double *values = malloc((size_t)(a * b * c) * sizeof *values);
    cube data = make_cube(a, b, c, values);
    struct rlimit before;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &before), 0);
    struct rlimit small = before;
    small.rlim_cur = 8192;
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    const int threads[] = {1, 4};
    for (int k = 0; k < 2; k++) {
        data.threads = threads[k];
        char error[1024] = "";
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
        int result = fits_cube_write_chunked("test_fits_cube_full.fits", "full/solution.fits",
                                             &data, 4096, error, sizeof error);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &before), 0);
        assert_int_equal(result, -1);
        assert_non_null(strstr(error, "cannot write full/solution.fits: "));
        assert_non_null(strstr(error, "of 46080 bytes of values"));
        assert_int_equal(access("test_fits_cube_full.fits", F_OK), -1);
    }
    signal(SIGXFSZ, old);
    free(values);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(float64_files_are_cfitsio_s),
        cmocka_unit_test(float32_files_are_cfitsio_s),
        cmocka_unit_test(a_missing_folder_is_named),
        cmocka_unit_test(a_failed_write_leaves_no_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
