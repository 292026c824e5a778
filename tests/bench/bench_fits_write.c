/*
 * tests/bench/bench_fits_write.c: where the time of writing one ESIS-sized
 * solution goes (issue 26: a 168 x 1139 x 1139 float64 scene, 1.74 GB), and
 * how near the floor the spart command's writer comes, in one run on one
 * disk:
 *
 *   old path      CFITSIO alone (tests/cli/fits_cube_reference.h): the file
 *                 made in a memory buffer that grows as CFITSIO writes
 *                 (its byte swapping on one thread), then its bytes put on
 *                 disk with plain write() calls (output_write_bytes), then
 *                 fsync (output_file_commit's flush): each part timed
 *   floor         the same bytes, already made, written with one write()
 *                 call a 64 MiB block and flushed: the disk's and page
 *                 cache's own rate for this file (the job also runs dd)
 *   new path      fits_cube_write (src/cli/fits_cube.c): CFITSIO's header,
 *                 the values encoded and written by T threads, 8 MiB at a
 *                 time each, then fsync; for T = 1, 4, 8, 16 (past its
 *                 default cap of FITS_CUBE_WRITE_THREADS), and once in
 *                 float32 at the cap (half the bytes); the float64 file
 *                 compared byte for byte with the old path's
 *
 *   bench_fits_write [--bins B] [--cells N] [--out DIR] [--markdown FILE]
 *
 * Needs no GPU. Exits 1 when a file differs or a write fails.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
/* the writer itself, for the reference (its static header writer) */
#include "cli/fits_cube.c"
#include "cli/output_files.h"
#include "../cli/fits_cube_reference.h"

#define BLOCK ((size_t)64 << 20)

static void die(const char *what)
{
    fprintf(stderr, "bench_fits_write: %s\n", what);
    exit(1);
}

static double flush_seconds(const char *path)
{
    double start = bench_seconds();
    int descriptor = open(path, O_RDONLY);
    if (descriptor < 0 || fsync(descriptor) != 0) {
        die("cannot flush a file");
    }
    close(descriptor);
    return bench_seconds() - start;
}

/* The floor: `bytes` written a block a call into a new file. */
static double plain_write(const char *path, const unsigned char *bytes, size_t count)
{
    double start = bench_seconds();
    int descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (descriptor < 0) {
        die("cannot open the floor's file");
    }
    for (size_t at = 0; at < count;) {
        size_t n = count - at < BLOCK ? count - at : BLOCK;
        ssize_t written = write(descriptor, bytes + at, n);
        if (written <= 0) {
            die("the floor's write failed");
        }
        at += (size_t)written;
    }
    close(descriptor);
    return bench_seconds() - start;
}

/* 1 when the file at `path` holds exactly `count` bytes equal to `bytes`. */
static int same_file(const char *path, const unsigned char *bytes, size_t count)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        return 0;
    }
    unsigned char *block = malloc(BLOCK);
    size_t at = 0;
    int same = block != NULL;
    while (same) {
        size_t n = fread(block, 1, BLOCK, file);
        if (n == 0) {
            break;
        }
        same = at + n <= count && memcmp(block, bytes + at, n) == 0;
        at += n;
    }
    fclose(file);
    free(block);
    return same && at == count;
}

typedef struct row {
    char what[128];
    double make, write, flush; /* seconds: in memory, to the page cache, fsync */
    double bytes;
} row;

static void print_rows(FILE *out, const row *rows, int count)
{
    fprintf(out, "\n| path | in memory s | write s | fsync s | total s | GB | GB/s (total) | "
                 "GB/s (without fsync) |\n");
    bench_markdown_rule(out, 8);
    for (int k = 0; k < count; k++) {
        const row *r = &rows[k];
        double total = r->make + r->write + r->flush;
        fprintf(out, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |\n", r->what, r->make,
                r->write, r->flush, total, r->bytes / 1e9, r->bytes / total / 1e9,
                r->bytes / (r->make + r->write) / 1e9);
    }
}

int main(int argc, char **argv)
{
    int bins = 168, cells = 1139;
    const char *folder = ".", *markdown = NULL;
    for (int k = 1; k + 1 < argc; k += 2) {
        if (strcmp(argv[k], "--bins") == 0) {
            bins = atoi(argv[k + 1]);
        } else if (strcmp(argv[k], "--cells") == 0) {
            cells = atoi(argv[k + 1]);
        } else if (strcmp(argv[k], "--out") == 0) {
            folder = argv[k + 1];
        } else if (strcmp(argv[k], "--markdown") == 0) {
            markdown = argv[k + 1];
        } else {
            fprintf(stderr, "usage: %s [--bins B] [--cells N] [--out DIR] [--markdown FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (bins < 1 || cells < 1 || (argc % 2) == 0) {
        fprintf(stderr, "usage: %s [--bins B] [--cells N] [--out DIR] [--markdown FILE]\n",
                argv[0]);
        return 2;
    }
    size_t count = (size_t)bins * (size_t)cells * (size_t)cells;
    double *values = malloc(count * sizeof *values);
    if (values == NULL) {
        die("out of memory");
    }
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < (long long)count; k++) {
        values[k] = 1e3 * exp(-1e-6 * (double)(k % 1000003)) + 1e-3 * (double)(k % 7);
    }
    cube data;
    memset(&data, 0, sizeof data);
    data.axis[0] = (cube_axis){bins, "SPECBIN", "", 0.0, 1.0, "spectral bin"};
    data.axis[1] = (cube_axis){cells, "HPLN-TAN", "arcsec", -427.0, 0.75, "scene x"};
    data.axis[2] = (cube_axis){cells, "HPLT-TAN", "arcsec", -427.0, 0.75, "scene y"};
    data.values = values;
    data.kind = "scene";
    data.content = "MART solution";
    data.bunit = "erg / (A sr cm2 s)";
    char path[4096], error[1024], sentence[512];
    snprintf(path, sizeof path, "%s/bench_fits_write.fits", folder);
    remove(path);
    row rows[8];
    int n = 0;
    printf("bench_fits_write: %d x %d x %d float64 (%.3f GB of values) into %s\n", bins, cells,
           cells, (double)count * 8.0 / 1e9, folder);

    /* old path: CFITSIO in memory, write(), fsync */
    void *file_bytes = NULL;
    size_t size = 0;
    long long length = 0;
    double start = bench_seconds();
    if (reference_cube_in_memory(&data, &file_bytes, &size, &length, sentence, sizeof sentence) !=
        0) {
        die(sentence);
    }
    row *r = &rows[n++];
    snprintf(r->what, sizeof r->what, "old: CFITSIO in a growing buffer, then write()");
    r->make = bench_seconds() - start;
    r->bytes = (double)length;
    start = bench_seconds();
    if (output_write_bytes(path, path, file_bytes, (size_t)length, error, sizeof error) != 0) {
        die(error);
    }
    r->write = bench_seconds() - start;
    r->flush = flush_seconds(path);
    remove(path);
    printf("  %s: %.3f + %.3f + %.3f s\n", r->what, r->make, r->write, r->flush);

    /* the floor: the same bytes, 64 MiB a write() */
    r = &rows[n++];
    snprintf(r->what, sizeof r->what, "floor: the same bytes, 64 MiB a write()");
    r->bytes = (double)length;
    r->write = plain_write(path, file_bytes, (size_t)length);
    r->flush = flush_seconds(path);
    remove(path);
    printf("  %s: %.3f + %.3f s\n", r->what, r->write, r->flush);

    /* new path */
    const int thread_counts[] = {1, 4, 8, 16};
    int differs = 0;
    for (int t = 0; t < 4; t++) {
        data.threads = thread_counts[t];
        r = &rows[n++];
        snprintf(r->what, sizeof r->what, "new: fits_cube_write, %d thread%s", data.threads,
                 data.threads > 1 ? "s" : "");
        start = bench_seconds();
        if (fits_cube_write_chunked(path, path, &data, FITS_CUBE_CHUNK_BYTES, error,
                                    sizeof error) != 0) {
            die(error);
        }
        r->write = bench_seconds() - start;
        r->flush = flush_seconds(path);
        struct stat info;
        r->bytes = stat(path, &info) == 0 ? (double)info.st_size : 0.0;
        if (t == 3 && !same_file(path, file_bytes, (size_t)length)) {
            fprintf(stderr, "bench_fits_write: the new file differs from CFITSIO's\n");
            differs = 1;
        }
        remove(path);
        printf("  %s: %.3f + %.3f s\n", r->what, r->write, r->flush);
    }
    free(file_bytes);
    data.float32 = 1;
    data.threads = FITS_CUBE_WRITE_THREADS;
    r = &rows[n++];
    snprintf(r->what, sizeof r->what, "new: fits_cube_write float32, %d threads", data.threads);
    start = bench_seconds();
    if (fits_cube_write(path, path, &data, error, sizeof error) != 0) {
        die(error);
    }
    r->write = bench_seconds() - start;
    r->flush = flush_seconds(path);
    struct stat info;
    r->bytes = stat(path, &info) == 0 ? (double)info.st_size : 0.0;
    remove(path);
    printf("  %s: %.3f + %.3f s\n", r->what, r->write, r->flush);

    print_rows(stdout, rows, n);
    if (markdown != NULL) {
        FILE *out = bench_markdown_open(markdown, argc, argv, omp_get_max_threads(),
                                        "one run, each file removed after it is timed");
        if (out != NULL) {
            fprintf(out, "\nOne solution of %d x %d x %d values written to %s%s.\n", bins, cells,
                    cells, folder, differs ? " (THE NEW FILE DIFFERED FROM CFITSIO'S)" : "");
            print_rows(out, rows, n);
            fclose(out);
        }
    }
    free(values);
    return differs;
}
