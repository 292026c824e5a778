/*
 * tests/bench/bench_vcs.c: the VCS products on the host (OpenMP) against
 * scipy's CSR product of the same Delta plus the rank-1 term
 * (tests/bench/bench_vcs_scipy.py, one thread as scipy runs), and the
 * floor (the grouping, B and the output once at the host's copy rate).
 *
 * Shapes: 60,000 x 2,000 at density 0.05 and 200,000 x 3,000 at 0.02
 * (--shape K for one), counts 1..7 with a skew (tests/unit/vcs_test_data.h),
 * width 8, float64 B; recipes parafac2 and cp10k_log1p. A host matrix keeps
 * both groupings, so VCSR and VCSC run the same walk: A @ B over the rows,
 * B @ A over the columns. spart on all threads and on one; times are the
 * median of --repeat calls after a warm-up.
 *
 *     bench_vcs [--python PYTHON] [--repeat N] [--shape K] [--markdown FILE]
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, popen */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench_util.h"
#include "spart/vcs.h"
#include "vcs_test_data.h"

#ifndef SPART_BENCH_VCS_SCIPY
#define SPART_BENCH_VCS_SCIPY "tests/bench/bench_vcs_scipy.py"
#endif

typedef struct row {
    char shape[48];
    const char *recipe;
    const char *direction;
    int64_t nnz;
    double floor_ms, spart_ms, spart_1_ms, scipy_ms;
} row;

static row rows_out[32];
static int n_out = 0;
static char scipy_version[64] = "?";

static double time_product(spart_context *context, const spart_vcs *vcs, int direction,
                           int64_t width, const double *b, double *out, int repeat)
{
    double *times = malloc((size_t)repeat * sizeof(double));
    for (int r = -1; r < repeat; r++) {
        const double start = bench_seconds();
        CHECK_SPART(context, spart_vcs_multiply(context, vcs, (spart_vcs_direction)direction, width,
                                                b, out));
        if (r >= 0) {
            times[r] = bench_seconds() - start;
        }
    }
    const double ms = 1e3 * bench_median(times, repeat);
    free(times);
    return ms;
}

static void write_array(const char *folder, const char *name, const void *data, size_t bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, bytes, f) != bytes) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

/* scipy's times for A @ B and B @ A of the CSR of Delta; -1 when python
 * or scipy is missing. */
static void scipy_times(spart_context *context, const spart_vcs *vcs, const double *b,
                        int64_t width, const char *python, int repeat, double *ab, double *ba)
{
    *ab = *ba = -1.0;
    int64_t n_rows, n_cols, nnz;
    CHECK_SPART(context, spart_vcs_shape(vcs, &n_rows, &n_cols, &nnz, NULL));
    char folder[] = "/tmp/bench_vcs_XXXXXX";
    if (mkdtemp(folder) == NULL) {
        return;
    }
    int64_t *row_ptr = malloc((size_t)(n_rows + 1) * sizeof(int64_t));
    int64_t *col_idx = malloc((size_t)(nnz + 1) * sizeof(int64_t));
    int32_t *col32 = malloc((size_t)(nnz + 1) * sizeof(int32_t));
    double *values = malloc((size_t)(nnz + 1) * sizeof(double));
    double *delta = malloc((size_t)(nnz + 1) * sizeof(double));
    double *centre = malloc((size_t)n_cols * sizeof(double));
    double *scale = malloc((size_t)n_cols * sizeof(double));
    CHECK_SPART(context, spart_vcs_to_csr(context, vcs, row_ptr, col_idx, values, delta));
    CHECK_SPART(context, spart_vcs_statistics(context, vcs, NULL, NULL, centre, scale));
    for (int64_t k = 0; k < nnz; k++) {
        col32[k] = (int32_t)col_idx[k];
    }
    for (int64_t j = 0; j < n_cols; j++) {
        centre[j] = -(centre[j] * scale[j]); /* the offset o */
    }
    char text[128];
    snprintf(text, sizeof text, "%lld %lld %lld %lld\n", (long long)n_rows, (long long)n_cols,
             (long long)nnz, (long long)width);
    write_array(folder, "shape.txt", text, strlen(text));
    write_array(folder, "indptr.i64", row_ptr, (size_t)(n_rows + 1) * sizeof(int64_t));
    write_array(folder, "indices.i32", col32, (size_t)nnz * sizeof(int32_t));
    write_array(folder, "delta.f64", delta, (size_t)nnz * sizeof(double));
    const int64_t big = n_rows > n_cols ? n_rows : n_cols;
    write_array(folder, "b.f64", b, (size_t)(big * width) * sizeof(double));
    write_array(folder, "offset.f64", centre, (size_t)n_cols * sizeof(double));
    char command[1024];
    snprintf(command, sizeof command, "OMP_NUM_THREADS=1 %s %s %s %d", python,
             SPART_BENCH_VCS_SCIPY, folder, repeat);
    FILE *pipe = popen(command, "r");
    if (pipe != NULL) {
        if (fscanf(pipe, "%lf %lf %63s", ab, ba, scipy_version) != 3) {
            *ab = *ba = -1.0;
        }
        pclose(pipe);
    }
    snprintf(command, sizeof command, "rm -rf %s", folder);
    if (system(command) != 0) {
        fprintf(stderr, "could not remove %s\n", folder);
    }
    free(row_ptr), free(col_idx), free(col32), free(values), free(delta), free(centre), free(scale);
}

static void measure_shape(spart_context *context, int64_t n_rows, int64_t n_cols, double density,
                          int64_t width, int repeat, const char *python, double rate, int threads)
{
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(n_rows, n_cols, density, 12345, &nnz, &rows, &cols, &values);
    const int64_t big = n_rows > n_cols ? n_rows : n_cols;
    double *b = malloc((size_t)(big * width) * sizeof(double));
    double *out = malloc((size_t)(big * width) * sizeof(double));
    uint64_t state = 7;
    for (int64_t k = 0; k < big * width; k++) {
        b[k] = 2.0 * vcs_uniform(&state) - 1.0;
    }
    const spart_vcs_recipe recipes[2] = {SPART_VCS_PARAFAC2, SPART_VCS_CP10K_LOG1P};
    const char *names[2] = {"parafac2", "cp10k_log1p"};
    for (int r = 0; r < 2; r++) {
        spart_vcs *vcs = NULL;
        const double t0 = bench_seconds();
        CHECK_SPART(context, spart_vcs_create_from_coo(context, n_rows, n_cols, nnz, rows, cols,
                                                       values, recipes[r], SPART_VCS_VCSR, &vcs));
        fprintf(stderr, "%lld x %lld %s: built in %.2f s\n", (long long)n_rows, (long long)n_cols,
                names[r], bench_seconds() - t0);
        double scipy_ab, scipy_ba;
        scipy_times(context, vcs, b, width, python, repeat, &scipy_ab, &scipy_ba);
        int64_t runs_rows = 0;
        CHECK_SPART(context, spart_vcs_shape(vcs, NULL, NULL, NULL, &runs_rows));
        for (int direction = 0; direction < 2; direction++) {
            row *o = &rows_out[n_out++];
            snprintf(o->shape, sizeof o->shape, "%lld x %lld", (long long)n_rows,
                     (long long)n_cols);
            o->recipe = names[r];
            o->direction = direction == 0 ? "A @ B (VCSR; VCSC the same walk)"
                                          : "B @ A (VCSC; VCSR the same walk)";
            o->nnz = nnz;
            const double grouping_bytes = 4.0 * (double)nnz + 16.0 * (double)runs_rows;
            o->floor_ms = 1e3 * (grouping_bytes + 8.0 * (double)((n_rows + n_cols) * width)) / rate;
            CHECK_SPART(context, spart_context_set_threads(context, threads));
            o->spart_ms = time_product(context, vcs, direction, width, b, out, repeat);
            CHECK_SPART(context, spart_context_set_threads(context, 1));
            o->spart_1_ms =
                time_product(context, vcs, direction, width, b, out, repeat < 5 ? repeat : 5);
            CHECK_SPART(context, spart_context_set_threads(context, threads));
            o->scipy_ms = direction == 0 ? scipy_ab : scipy_ba;
            fprintf(stderr, "  %s %s: spart %.3f ms (%d threads), %.3f ms (1), scipy %.3f ms\n",
                    o->recipe, o->direction, o->spart_ms, threads, o->spart_1_ms, o->scipy_ms);
        }
        spart_vcs_free(vcs);
    }
    free(b), free(out), free(rows), free(cols), free(values);
}

int main(int argc, char **argv)
{
    const char *python = "python3", *markdown = NULL;
    int repeat = 10, shape = -1;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--python") == 0 && a + 1 < argc) {
            python = argv[++a];
        } else if (strcmp(argv[a], "--repeat") == 0 && a + 1 < argc) {
            repeat = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--shape") == 0 && a + 1 < argc) {
            shape = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--markdown") == 0 && a + 1 < argc) {
            markdown = argv[++a];
        } else {
            fprintf(stderr,
                    "usage: %s [--python PYTHON] [--repeat N] [--shape K] "
                    "[--markdown FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    spart_context *context = NULL;
    CHECK_SPART(context, spart_context_create(&context));
    const int threads = omp_get_max_threads();
    const double rate = bench_copy_bandwidth(threads);
    const int64_t width = 8;
    if (shape < 0 || shape == 0) {
        measure_shape(context, 60000, 2000, 0.05, width, repeat, python, rate, threads);
    }
    if (shape < 0 || shape == 1) {
        measure_shape(context, 200000, 3000, 0.02, width, repeat, python, rate, threads);
    }
    FILE *out = markdown != NULL
                    ? bench_markdown_open(markdown, argc, argv, threads,
                                          "median of the calls after a warm-up (host clock)")
                    : stdout;
    if (out == NULL) {
        return 1;
    }
    fprintf(out,
            "- peer: scipy %s, CSR of Delta (float64, int32 indices, sorted) @ B plus the "
            "rank-1 term in NumPy, one thread; width %lld, float64 B\n",
            scipy_version, (long long)width);
    fprintf(out,
            "- floor: one grouping (4 B an entry, 16 B a run), B and the output once at the "
            "copy rate measured in the same run, %.1f GB/s\n\n",
            rate * 1e-9);
    fprintf(out,
            "| shape | entries | recipe | direction | floor ms | spart ms (%d threads) | "
            "spart ms (1 thread) | scipy ms | scipy / spart (%d threads) | "
            "scipy / spart (1 thread) |\n",
            threads, threads);
    bench_markdown_rule(out, 10);
    for (int k = 0; k < n_out; k++) {
        const row *o = &rows_out[k];
        fprintf(out, "| %s | %lld | %s | %s | %.3f | %.3f | %.3f | ", o->shape, (long long)o->nnz,
                o->recipe, o->direction, o->floor_ms, o->spart_ms, o->spart_1_ms);
        if (o->scipy_ms > 0) {
            fprintf(out, "%.3f | %.2fx | %.2fx |\n", o->scipy_ms, o->scipy_ms / o->spart_ms,
                    o->scipy_ms / o->spart_1_ms);
        } else {
            fprintf(out, "- | - | - |\n");
        }
    }
    if (out != stdout) {
        fclose(out);
    }
    spart_context_free(context);
    return 0;
}
