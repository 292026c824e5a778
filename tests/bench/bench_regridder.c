/*
 * tests/bench/bench_regridder.c: times spart's Regridder (assembly and
 * product, include/spart/regridder.h) on operators shaped like CTIS
 * problems, against the memory-bandwidth floor of the product measured in
 * the same run, against regridding.regrid_from_weights and scipy.sparse on
 * the same weights, and its assembly against plain sort-based builds.
 *
 *   bench_regridder [--threads T] [--repeat N] [--python PYTHON]
 *                   [--reference bench_regridder_reference.py] [--json FILE]
 *                   [--case a,b,c] [--scratch DIR] [--keep] [--require-goals]
 *                   [--products-only] [--markdown FILE]
 *
 * The operators (weights synthesised in bench_ctis_operators.h, then written to files in a
 * scratch folder for the Python side, so that both use the same numbers):
 *   a  tutorial-sized forward model: a 64x64 scene at 16 wavelengths seen
 *      by 4 channels (orthogonal elements (4, 16)); each element moves every
 *      scene cell by its own dispersion (0.37 cells per wavelength step, in
 *      the channel's direction) and spreads it over the 2x2 output cells it
 *      overlaps, with the area fractions of a shifted square (about 1M
 *      weights);
 *   b  the same for a 256x256 scene (about 17M weights);
 *   c  a PSF-folded forward model: one channel, 16 wavelengths, a 48x48
 *      scene, each cell spread over a 16x16 Gaussian footprint (about 9M
 *      weights; interior rows hold 4096 entries).
 * Every operator is the CTIS forward operator: the scene (1, W, N, N) is
 * shared across the channels and the wavelengths are summed, giving
 * (C, 1, N', N'): spart_regridder_create with those shapes.
 *
 * Measured (each once to warm up, then N times; the best counts):
 *   - spart_regridder_apply_workspace for one vector and a batch of 8
 *     (leading axis), the workspace allocated once beforehand; and the
 *     batch of 8 as a trailing axis (x of shape (1, W, N, N, 8), from
 *     weights with a trailing orthogonal axis of 1), which the product
 *     reads and writes in place, checked to give the leading batch's bits;
 *   - the bandwidth floor of each product: the bytes it must move (values,
 *     columns, row_ptr, x and y, once each) over the bandwidth of a
 *     STREAM-like copy this program measures with OpenMP on the same
 *     threads;
 *   - spart_regridder_create per million weights, against a plain build
 *     that qsorts (row, position) keys (one thread), checked to give the
 *     same CSR arrays;
 *   - with --python: the script times regrid_from_weights (numba, the same
 *     thread count) followed by the wavelength sum, scipy.sparse's
 *     csr_matrix @ x on spart's own CSR arrays, and a NumPy build with a
 *     stable argsort, and checks that all of them give spart's answers.
 * --products-only skips the assembly timings (for profiling the product).
 * --require-goals makes the exit status 1 when a goal of the issue is not
 * met: >= 70 % of the bandwidth floor on cases b and c, >= 5x faster than
 * regrid_from_weights, faster than scipy on every case (by hand only: the
 * test suite never asserts a speed). --markdown FILE also writes the
 * products' table in Markdown under a header block (machine, versions,
 * command line), for docs/performance.md (scripts/performance_page.py).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "bench_ctis_operators.h"
#include "bench_util.h"
#include "spart.h"

#ifndef SPART_BENCH_REFERENCE
#define SPART_BENCH_REFERENCE "bench_regridder_reference.py"
#endif

#include "bench_regridder.h"

/* The reference script's VERSIONS line (python, numpy, numba, scipy, regridding). */
static char reference_versions[512] = "";

/* ---- the operators ------------------------------------------------------------ */

/* The same weights with a trailing orthogonal axis of 1, to which values
 * can give a trailing batch axis. */
static spart_status load_weights_trailing(spart_context *context, const bench_ctis_weights *op,
                                          spart_weights **weights)
{
    int64_t n = op->scene, m = op->scene_output, c = op->channels, w = op->wavelengths;
    spart_shape orthogonal = bench_shape_of(3, (int64_t[]){c, w, 1});
    spart_shape in = bench_shape_of(5, (int64_t[]){c, w, n, n, 1});
    spart_shape out = bench_shape_of(5, (int64_t[]){c, w, m, m, 1});
    int axes[2] = {2, 3};
    return spart_weights_create_from_arrays(context, &orthogonal, &in, &out, 2, axes, 2, axes,
                                            op->offsets, op->indices_input, op->indices_output,
                                            op->values, weights);
}

/* The forward operator of bench_ctis_regridder for a batch of BATCH vectors as a
 * trailing axis: the scene (1, W, N, N, 8), the images (C, 1, N', N', 8). */
static spart_status make_regridder_trailing(spart_context *context, const bench_ctis_weights *op,
                                            const spart_weights *weights,
                                            spart_regridder **regridder)
{
    int64_t n = op->scene, m = op->scene_output;
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = bench_shape_of(5, (int64_t[]){1, op->wavelengths, n, n, BATCH});
    options.has_shape_output = 1;
    options.shape_output = bench_shape_of(5, (int64_t[]){op->channels, 1, m, m, BATCH});
    return spart_regridder_create(context, weights, &options, regridder);
}

/* ---- the plain sort-based build --------------------------------------------------- */

typedef struct sort_key {
    int64_t row;
    int64_t position;
} sort_key;

static int compare_keys(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    if (x->row != y->row) {
        return x->row < y->row ? -1 : 1;
    }
    return x->position < y->position ? -1 : x->position > y->position;
}

typedef struct plain_csr {
    int64_t *row_ptr;
    int32_t *columns;
    double *values;
} plain_csr;

/* The operator's CSR arrays by qsort of (row, position): the row and
 * column of entry k of element (c, w) are c N'^2 + output cell and
 * w N^2 + input cell. Returns -1 when out of memory. */
static int sort_build(const bench_ctis_weights *op, int64_t num_rows, plain_csr *csr)
{
    int64_t n = op->num_entries;
    size_t count = (size_t)(n > 0 ? n : 1);
    sort_key *keys = malloc(count * sizeof *keys);
    int32_t *column_of = malloc(count * sizeof(int32_t));
    csr->row_ptr = calloc((size_t)num_rows + 1, sizeof(int64_t));
    csr->columns = malloc(count * sizeof(int32_t));
    csr->values = malloc(count * sizeof(double));
    if (keys == NULL || column_of == NULL || csr->row_ptr == NULL || csr->columns == NULL ||
        csr->values == NULL) {
        free(keys);
        free(column_of);
        return -1;
    }
    int64_t cells_out = op->scene_output * op->scene_output;
    int64_t cells_in = op->scene * op->scene;
    for (int64_t e = 0; e < op->num_elements; e++) {
        int64_t c = e / op->wavelengths, w = e % op->wavelengths;
        for (int64_t k = op->offsets[e]; k < op->offsets[e + 1]; k++) {
            keys[k].row = c * cells_out + op->indices_output[k];
            keys[k].position = k;
            column_of[k] = (int32_t)(w * cells_in + op->indices_input[k]);
        }
    }
    qsort(keys, (size_t)n, sizeof *keys, compare_keys);
    for (int64_t k = 0; k < n; k++) {
        int64_t p = keys[k].position;
        csr->row_ptr[keys[k].row + 1]++;
        csr->columns[k] = column_of[p];
        csr->values[k] = op->values[p];
    }
    for (int64_t r = 0; r < num_rows; r++) {
        csr->row_ptr[r + 1] += csr->row_ptr[r];
    }
    free(keys);
    free(column_of);
    return 0;
}

static void free_plain(plain_csr *csr)
{
    free(csr->row_ptr);
    free(csr->columns);
    free(csr->values);
    memset(csr, 0, sizeof *csr);
}

static int same_csr(const spart_regridder *regridder, const plain_csr *plain)
{
    const int64_t *row_ptr = NULL;
    const int32_t *columns = NULL;
    const int64_t *columns64 = NULL;
    const void *values = NULL;
    if (spart_regridder_csr(regridder, &row_ptr, &columns, &columns64, &values) != SPART_OK ||
        columns == NULL) {
        return 0;
    }
    int64_t rows = spart_regridder_num_rows(regridder);
    int64_t n = spart_regridder_num_entries(regridder);
    return memcmp(row_ptr, plain->row_ptr, (size_t)(rows + 1) * sizeof(int64_t)) == 0 &&
           memcmp(columns, plain->columns, (size_t)n * sizeof(int32_t)) == 0 &&
           memcmp(values, plain->values, (size_t)n * sizeof(double)) == 0;
}

/* ---- timing spart ------------------------------------------------------------------- */

/* Deterministic values in [0.5, 1.5): a SplitMix64 stream. */
static void fill_values(double *x, int64_t n, uint64_t seed)
{
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        state += 0x9E3779B97F4A7C15ULL;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        x[k] = 0.5 + (double)(z >> 11) * 0x1.0p-53;
    }
}

static int time_product(spart_context *context, const spart_regridder *regridder,
                        const spart_array *x, double *y, int64_t size_y, int repeat, double *best)
{
    size_t bytes = 0;
    if (spart_regridder_workspace_size(context, regridder, &x->shape, &bytes) != SPART_OK) {
        return -1;
    }
    void *workspace = bytes > 0 ? malloc(bytes) : NULL;
    if (bytes > 0 && workspace == NULL) {
        return -1;
    }
    *best = INFINITY;
    for (int r = -1; r < repeat; r++) {
        double start = bench_seconds();
        spart_status status =
            spart_regridder_apply_workspace(context, regridder, x, y, size_y, workspace, bytes);
        double elapsed = bench_seconds() - start;
        if (status != SPART_OK) {
            fprintf(stderr, "bench_regridder: apply failed: %s\n", spart_context_error(context));
            free(workspace);
            return -1;
        }
        if (r >= 0 && elapsed < *best) {
            *best = elapsed;
        }
    }
    free(workspace);
    return 0;
}

/* Time the batch of 8 as a trailing axis: x8 (leading) transposed into
 * (..., 8), y compared with y8 (leading) bit for bit. */
static int time_trailing(spart_context *context, const bench_ctis_weights *op, int repeat,
                         const double *x8, const double *y8, result *r)
{
    spart_weights *weights = NULL;
    spart_regridder *regridder = NULL;
    int64_t columns = r->columns, rows = r->rows;
    /* on cache lines: each column's 8 values are then one line */
    double *x = aligned_alloc(64, (size_t)(columns * BATCH) * sizeof(double));
    double *y = aligned_alloc(64, (size_t)(rows * BATCH) * sizeof(double));
    int failed = x == NULL || y == NULL ||
                 load_weights_trailing(context, op, &weights) != SPART_OK ||
                 make_regridder_trailing(context, op, weights, &regridder) != SPART_OK;
    if (!failed) {
        for (int64_t c = 0; c < columns; c++) {
            for (int64_t t = 0; t < BATCH; t++) {
                x[c * BATCH + t] = x8[t * columns + c];
            }
        }
        int64_t n = op->scene, w = op->wavelengths;
        spart_array a = {x, bench_shape_of(5, (int64_t[]){1, w, n, n, BATCH})};
        failed = time_product(context, regridder, &a, y, rows * BATCH, repeat,
                              &r->product_8_trailing) != 0;
    }
    if (!failed) {
        r->same_trailing = 1;
        for (int64_t row = 0; row < rows; row++) {
            for (int64_t t = 0; t < BATCH; t++) {
                r->same_trailing &=
                    memcmp(&y[row * BATCH + t], &y8[t * rows + row], sizeof(double)) == 0;
            }
        }
    } else {
        fprintf(stderr, "bench_regridder: the trailing batch: %s\n", spart_context_error(context));
    }
    free(x);
    free(y);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
    return failed ? -1 : 0;
}

static int time_assembly(spart_context *context, const bench_ctis_weights *op,
                         const spart_weights *weights, int repeat, double *best)
{
    *best = INFINITY;
    for (int r = -1; r < repeat; r++) {
        spart_regridder *regridder = NULL;
        double start = bench_seconds();
        spart_status status = bench_ctis_regridder(context, op, weights, &regridder);
        double elapsed = bench_seconds() - start;
        spart_regridder_free(regridder);
        if (status != SPART_OK) {
            fprintf(stderr, "bench_regridder: create failed: %s\n", spart_context_error(context));
            return -1;
        }
        if (r >= 0 && elapsed < *best) {
            *best = elapsed;
        }
    }
    return 0;
}

static int time_sort_build(const bench_ctis_weights *op, int64_t rows, int repeat,
                           const spart_regridder *regridder, double *best, int *same)
{
    *best = INFINITY;
    for (int r = 0; r < repeat; r++) {
        plain_csr csr;
        memset(&csr, 0, sizeof csr);
        double start = bench_seconds();
        int status = sort_build(op, rows, &csr);
        double elapsed = bench_seconds() - start;
        if (status != 0) {
            free_plain(&csr);
            return -1;
        }
        if (r == 0) {
            *same = same_csr(regridder, &csr);
        }
        free_plain(&csr);
        *best = elapsed < *best ? elapsed : *best;
    }
    return 0;
}

/* ---- files for the Python side ----------------------------------------------------- */

static int write_array(const char *folder, const char *case_name, const char *what,
                       const void *data, size_t bytes)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s_%s.bin", folder, case_name, what);
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        return -1;
    }
    size_t written = bytes > 0 ? fwrite(data, 1, bytes, file) : 0;
    return fclose(file) == 0 && written == bytes ? 0 : -1;
}

static const char *const FILE_NAMES[] = {"offsets",
                                         "indices_input",
                                         "indices_output",
                                         "values",
                                         "row_ptr",
                                         "columns",
                                         "csr_values",
                                         "x1",
                                         "y1",
                                         "x8",
                                         "y8"};
#define NUM_FILES ((int)(sizeof FILE_NAMES / sizeof FILE_NAMES[0]))

/* The weights, spart's CSR arrays, and x and y of both products, as raw
 * little-endian arrays, and a text file of the sizes. */
static int write_case(const char *folder, const char *name, const bench_ctis_weights *op,
                      const spart_regridder *regridder, const double *x1, const double *y1,
                      const double *x8, const double *y8, int threads)
{
    const int64_t *row_ptr = NULL;
    const int32_t *columns = NULL;
    const void *values = NULL;
    if (spart_regridder_csr(regridder, &row_ptr, &columns, NULL, &values) != SPART_OK ||
        columns == NULL) {
        return -1;
    }
    int64_t rows = spart_regridder_num_rows(regridder);
    int64_t cols = spart_regridder_num_columns(regridder);
    size_t n = (size_t)op->num_entries;
    const void *data[NUM_FILES] = {op->offsets,
                                   op->indices_input,
                                   op->indices_output,
                                   op->values,
                                   row_ptr,
                                   columns,
                                   values,
                                   x1,
                                   y1,
                                   x8,
                                   y8};
    size_t bytes[NUM_FILES] = {(size_t)(op->num_elements + 1) * 8,
                               n * 8,
                               n * 8,
                               n * 8,
                               (size_t)(rows + 1) * 8,
                               n * 4,
                               n * 8,
                               (size_t)cols * 8,
                               (size_t)rows * 8,
                               (size_t)cols * BATCH * 8,
                               (size_t)rows * BATCH * 8};
    for (int f = 0; f < NUM_FILES; f++) {
        if (write_array(folder, name, FILE_NAMES[f], data[f], bytes[f]) != 0) {
            return -1;
        }
    }
    char path[8192];
    snprintf(path, sizeof path, "%s/%s_meta.txt", folder, name);
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        return -1;
    }
    fprintf(file,
            "channels %lld\nwavelengths %lld\nscene %lld\nscene_output %lld\nentries %lld\n"
            "rows %lld\ncolumns %lld\nbatch %d\nthreads %d\n",
            (long long)op->channels, (long long)op->wavelengths, (long long)op->scene,
            (long long)op->scene_output, (long long)op->num_entries, (long long)rows,
            (long long)cols, BATCH, threads);
    return fclose(file) == 0 ? 0 : -1;
}

static void remove_case(const char *folder, const char *name)
{
    char path[8192];
    for (int f = 0; f < NUM_FILES; f++) {
        snprintf(path, sizeof path, "%s/%s_%s.bin", folder, name, FILE_NAMES[f]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/%s_meta.txt", folder, name);
    unlink(path);
}

/* ---- one case ------------------------------------------------------------------------ */

static int64_t longest_row(const spart_regridder *regridder)
{
    const int64_t *row_ptr = NULL;
    int64_t longest = 0;
    if (spart_regridder_csr(regridder, &row_ptr, NULL, NULL, NULL) == SPART_OK) {
        for (int64_t r = 0; r < spart_regridder_num_rows(regridder); r++) {
            int64_t length = row_ptr[r + 1] - row_ptr[r];
            longest = length > longest ? length : longest;
        }
    }
    return longest;
}

static int run_case(spart_context *context, const bench_ctis_spec *s, int repeat, int threads,
                    int products_only, const char *folder, result *r)
{
    bench_ctis_weights op;
    if (bench_ctis_make_weights(s, &op) != 0) {
        fprintf(stderr, "bench_regridder: case %s: out of memory\n", s->name);
        return -1;
    }
    spart_weights *weights = NULL;
    spart_regridder *regridder = NULL;
    double *x1 = NULL, *y1 = NULL, *x8 = NULL, *y8 = NULL;
    int failed = bench_ctis_load_weights(context, &op, &weights) != SPART_OK ||
                 bench_ctis_regridder(context, &op, weights, &regridder) != SPART_OK;
    if (failed) {
        fprintf(stderr, "bench_regridder: case %s: %s\n", s->name, spart_context_error(context));
    } else {
        r->entries = spart_regridder_num_entries(regridder);
        r->rows = spart_regridder_num_rows(regridder);
        r->columns = spart_regridder_num_columns(regridder);
        r->group_size = spart_regridder_group_size(regridder);
        r->longest_row = longest_row(regridder);
        x1 = malloc((size_t)r->columns * sizeof(double));
        y1 = malloc((size_t)r->rows * sizeof(double));
        x8 = malloc((size_t)r->columns * BATCH * sizeof(double));
        y8 = malloc((size_t)r->rows * BATCH * sizeof(double));
        failed = x1 == NULL || y1 == NULL || x8 == NULL || y8 == NULL;
    }
    if (!failed) {
        fill_values(x1, r->columns, 1);
        fill_values(x8, r->columns * BATCH, 8);
        int64_t n = op.scene, w = op.wavelengths;
        spart_array a1 = {x1, bench_shape_of(4, (int64_t[]){1, w, n, n})};
        spart_array a8 = {x8, bench_shape_of(5, (int64_t[]){BATCH, 1, w, n, n})};
        failed =
            time_product(context, regridder, &a1, y1, r->rows, repeat, &r->product_1) != 0 ||
            time_product(context, regridder, &a8, y8, r->rows * BATCH, repeat, &r->product_8) !=
                0 ||
            (!products_only && (time_assembly(context, &op, weights, repeat, &r->assembly) != 0 ||
                                time_sort_build(&op, r->rows, repeat, regridder, &r->sort_build,
                                                &r->same_csr_sort) != 0));
        /* values and columns once, row_ptr once, x and y once per vector */
        double matrix = 12.0 * (double)r->entries + 8.0 * (double)(r->rows + 1);
        r->bytes_1 = matrix + 8.0 * (double)(r->columns + r->rows);
        r->bytes_8 = matrix + 8.0 * BATCH * (double)(r->columns + r->rows);
    }
    if (!failed && folder != NULL) {
        failed = write_case(folder, s->name, &op, regridder, x1, y1, x8, y8, threads) != 0;
        if (failed) {
            fprintf(stderr, "bench_regridder: cannot write case %s to %s\n", s->name, folder);
        }
    }
    spart_regridder_free(regridder); /* before the trailing batch's regridder is made */
    regridder = NULL;
    if (!failed) {
        failed = time_trailing(context, &op, repeat, x8, y8, r) != 0;
    }
    free(x1);
    free(y1);
    free(x8);
    free(y8);
    spart_regridder_free(regridder);
    spart_weights_free(weights);
    bench_ctis_free_weights(&op);
    return failed ? -1 : 0;
}

/* ---- the Python side ------------------------------------------------------------------ */

static int time_reference(const char *python, const char *reference, const char *folder,
                          int threads, int repeat, const char *selected, result *results)
{
    char command[8192];
    snprintf(command, sizeof command,
             "NUMBA_NUM_THREADS=%d OMP_NUM_THREADS=%d '%s' '%s' --folder '%s' --repeat %d "
             "--case %s",
             threads, threads, python, reference, folder, repeat, selected);
    FILE *pipe = popen(command, "r");
    if (pipe == NULL) {
        fprintf(stderr, "bench_regridder: cannot run %s\n", command);
        return -1;
    }
    char line[512];
    while (fgets(line, sizeof line, pipe) != NULL) {
        char name[16], metric[32];
        double value;
        if (strncmp(line, "VERSIONS ", 9) == 0) {
            snprintf(reference_versions, sizeof reference_versions, "%s", line + 9);
            reference_versions[strcspn(reference_versions, "\n")] = '\0';
            continue;
        }
        if (sscanf(line, "RESULT %15s %31s %lf", name, metric, &value) != 3) {
            fprintf(stderr, "bench_regridder: reference says: %s", line);
            continue;
        }
        for (int c = 0; c < BENCH_CTIS_CASES; c++) {
            for (int m = 0; m < NUM_METRICS; m++) {
                if (strcmp(BENCH_CTIS_SPECS[c].name, name) == 0 &&
                    strcmp(METRIC_NAMES[m], metric) == 0) {
                    results[c].reference[m] = value;
                }
            }
        }
    }
    int status = pclose(pipe);
    if (status == 77 << 8) {
        fprintf(stderr, "bench_regridder: the reference packages are not there; spart alone\n");
        return 0;
    }
    if (status != 0) {
        fprintf(stderr, "bench_regridder: the reference script exited with status %d\n", status);
        return -1;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_regridder [--threads T] [--repeat N] [--python PYTHON] "
                    "[--reference SCRIPT] [--json FILE] [--case a,b,c] [--scratch DIR] [--keep] "
                    "[--require-goals] [--products-only] [--markdown FILE]\n");
}

int main(int argc, char **argv)
{
    int threads = omp_get_max_threads();
    int repeat = 5;
    const char *python = NULL;
    const char *reference = SPART_BENCH_REFERENCE;
    const char *json = NULL;
    const char *markdown = NULL;
    const char *selected = "a,b,c";
    const char *scratch = NULL;
    int keep = 0, require_goals = 0, products_only = 0;
    for (int k = 1; k < argc; k++) {
        int more = k + 1 < argc;
        if (strcmp(argv[k], "--threads") == 0 && more) {
            threads = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--repeat") == 0 && more) {
            repeat = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--python") == 0 && more) {
            python = argv[++k];
        } else if (strcmp(argv[k], "--reference") == 0 && more) {
            reference = argv[++k];
        } else if (strcmp(argv[k], "--json") == 0 && more) {
            json = argv[++k];
        } else if (strcmp(argv[k], "--markdown") == 0 && more) {
            markdown = argv[++k];
        } else if (strcmp(argv[k], "--case") == 0 && more) {
            selected = argv[++k];
        } else if (strcmp(argv[k], "--scratch") == 0 && more) {
            scratch = argv[++k];
        } else if (strcmp(argv[k], "--keep") == 0) {
            keep = 1;
        } else if (strcmp(argv[k], "--products-only") == 0) {
            products_only = 1;
        } else if (strcmp(argv[k], "--require-goals") == 0) {
            require_goals = 1;
        } else {
            usage();
            return 2;
        }
    }
    if (threads < 1 || repeat < 1) {
        usage();
        return 2;
    }
    char folder[4096] = "";
    if (python != NULL) {
        snprintf(folder, sizeof folder, "%s/bench_regridder.XXXXXX",
                 scratch != NULL ? scratch : "/tmp");
        if (mkdtemp(folder) == NULL) {
            fprintf(stderr, "bench_regridder: cannot make a scratch folder %s\n", folder);
            return 1;
        }
    }
    result results[BENCH_CTIS_CASES];
    memset(results, 0, sizeof results);
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        results[c].skipped = strstr(selected, BENCH_CTIS_SPECS[c].name) == NULL;
        for (int m = 0; m < NUM_METRICS; m++) {
            results[c].reference[m] = -1.0;
        }
    }
    double bandwidth = bench_copy_bandwidth(threads);
    spart_context *context = NULL;
    int failed = bandwidth <= 0 || spart_context_create(&context) != SPART_OK ||
                 spart_context_set_threads(context, threads) != SPART_OK;
    for (int c = 0; c < BENCH_CTIS_CASES && !failed; c++) {
        if (!results[c].skipped) {
            failed = run_case(context, &BENCH_CTIS_SPECS[c], repeat, threads, products_only,
                              python != NULL ? folder : NULL, &results[c]) != 0;
        }
    }
    spart_context_free(context);
    if (!failed && python != NULL) {
        failed = time_reference(python, reference, folder, threads, repeat, selected, results);
    }
    if (python != NULL) {
        if (!keep) {
            for (int c = 0; c < BENCH_CTIS_CASES; c++) {
                remove_case(folder, BENCH_CTIS_SPECS[c].name);
            }
            rmdir(folder);
        } else {
            printf("files kept in %s\n", folder);
        }
    }
    if (failed) {
        fprintf(stderr, "bench_regridder: failed\n");
        return 1;
    }
    print_tables(results, bandwidth, threads, repeat);
    if (json != NULL) {
        write_json(json, results, bandwidth, threads, repeat, python);
    }
    if (markdown != NULL && write_markdown(markdown, argc, argv, results, bandwidth, threads,
                                           repeat, reference_versions) != 0) {
        return 1;
    }
    int missed = check_goals(results, bandwidth);
    printf("%d goal(s) missed\n", missed);
    return require_goals && missed > 0 ? 1 : 0;
}
