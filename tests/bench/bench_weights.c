/*
 * tests/bench/bench_weights.c: times spart's conservative 2-D weights
 * builders against the Python package regridding on the same problems, in
 * the same run, on the same cores.
 *
 *   bench_weights [--threads T] [--repeat N] [--python PYTHON]
 *                 [--reference bench_weights_reference.py] [--json FILE]
 *                 [--min-speedup X] [--case a,b,c] [--markdown FILE]
 *
 * The problems (built identically by bench_weights_reference.py):
 *   a  regridding's README warp: 66x66 vertices on [-5, 5]^2 rotated by
 *      0.4 rad plus 0.05 x^2 and 0.05 y^2, onto a 33x33 lattice spanning
 *      its bounding box (clipping);
 *   b  512x512 cells on [-4, 4]^2 onto the same grid rotated by 0.2 rad
 *      (sweep, default perturbation);
 *   c  64 orthogonal elements of 128x128 cells on [-4, 4]^2, element k
 *      rotated by 0.01 k rad, onto one 128x128-cell lattice on [-5, 5]^2
 *      (clipping).
 * Each is built once to warm up, then N times; the best time counts, of
 * the wall clock and, separately, of the process's CPU time (all threads
 * together: it counts what a build costs rather than when it ends, so it
 * suffers less when other programs share the cores). With --python, the
 * reference script runs through popen with NUMBA_NUM_THREADS set to
 * spart's thread count, and the table shows both and the speed-up.
 * --min-speedup X makes the exit status 1 when any speed-up is below X (by
 * hand only: the test suite never asserts a speed). --markdown FILE also
 * writes the table in Markdown, under a header block (machine, versions,
 * command line), for docs/performance.md (scripts/performance_page.py).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "bench_util.h"
#include "spart.h"

#ifndef SPART_BENCH_REFERENCE
#define SPART_BENCH_REFERENCE "bench_weights_reference.py"
#endif

#define NUM_CASES 3

/* The reference script's VERSIONS line (python, numpy, numba, regridding). */
static char reference_versions[512] = "";

/* One benchmark problem: the grids and the options of its build. */
typedef struct problem {
    double *x_input, *y_input, *x_output, *y_output;
    spart_array input[2], output[2];
    spart_weights_options options;
} problem;

typedef struct result {
    const char *name;
    const char *description;
    double spart_seconds;
    double spart_cpu_seconds;
    int64_t spart_entries;
    double reference_seconds; /* < 0: not measured */
    double reference_cpu_seconds;
    int64_t reference_entries;
    int skipped; /* not selected with --case */
} result;

/* The CPU time of the process so far, every thread's. */
static double process_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* NumPy's linspace: start + k * step, the last point exactly stop. */
static double linspace(double start, double stop, int64_t num, int64_t k)
{
    if (k == num - 1) {
        return stop;
    }
    return start + (double)k * ((stop - start) / (double)(num - 1));
}

static int allocate(problem *p, size_t size_input, size_t size_output)
{
    memset(p, 0, sizeof *p);
    p->x_input = malloc(size_input * sizeof(double));
    p->y_input = malloc(size_input * sizeof(double));
    p->x_output = malloc(size_output * sizeof(double));
    p->y_output = malloc(size_output * sizeof(double));
    spart_weights_options_init(&p->options);
    p->options.method = SPART_METHOD_CONSERVATIVE;
    return p->x_input && p->y_input && p->x_output && p->y_output ? 0 : -1;
}

static void release(problem *p)
{
    free(p->x_input);
    free(p->y_input);
    free(p->x_output);
    free(p->y_output);
}

/* A lattice of nx x ny vertices, x[i * ny + j]. */
static void fill_lattice(double *x, double *y, int64_t nx, int64_t ny, double x0, double x1,
                         double y0, double y1)
{
    for (int64_t i = 0; i < nx; i++) {
        for (int64_t j = 0; j < ny; j++) {
            x[i * ny + j] = linspace(x0, x1, nx, i);
            y[i * ny + j] = linspace(y0, y1, ny, j);
        }
    }
}

static void set_arrays(problem *p, int ndim_input, const int64_t *dims_input, int ndim_output,
                       const int64_t *dims_output)
{
    spart_shape in = bench_shape_of(ndim_input, dims_input);
    spart_shape out = bench_shape_of(ndim_output, dims_output);
    p->input[0] = (spart_array){p->x_input, in};
    p->input[1] = (spart_array){p->y_input, in};
    p->output[0] = (spart_array){p->x_output, out};
    p->output[1] = (spart_array){p->y_output, out};
}

static int make_readme_warp(problem *p)
{
    const int64_t n = 66, m = 33;
    if (allocate(p, (size_t)(n * n), (size_t)(m * m)) != 0) {
        return -1;
    }
    const double angle = 0.4;
    double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < n; j++) {
            double x = linspace(-5, 5, n, i), y = linspace(-5, 5, n, j);
            double xi = x * cos(angle) - y * sin(angle) + 0.05 * x * x;
            double yi = x * sin(angle) + y * cos(angle) + 0.05 * y * y;
            p->x_input[i * n + j] = xi;
            p->y_input[i * n + j] = yi;
            x_low = fmin(x_low, xi);
            x_high = fmax(x_high, xi);
            y_low = fmin(y_low, yi);
            y_high = fmax(y_high, yi);
        }
    }
    fill_lattice(p->x_output, p->y_output, m, m, x_low, x_high, y_low, y_high);
    set_arrays(p, 2, (int64_t[]){n, n}, 2, (int64_t[]){m, m});
    return 0;
}

static int make_rotated_onto_itself(problem *p)
{
    const int64_t n = 513;
    if (allocate(p, (size_t)(n * n), (size_t)(n * n)) != 0) {
        return -1;
    }
    const double angle = 0.2;
    fill_lattice(p->x_input, p->y_input, n, n, -4, 4, -4, 4);
    for (int64_t k = 0; k < n * n; k++) {
        double x = p->x_input[k], y = p->y_input[k];
        p->x_output[k] = x * cos(angle) - y * sin(angle);
        p->y_output[k] = x * sin(angle) + y * cos(angle);
    }
    set_arrays(p, 2, (int64_t[]){n, n}, 2, (int64_t[]){n, n});
    return 0;
}

static int make_stack(problem *p)
{
    const int64_t elements = 64, n = 129;
    if (allocate(p, (size_t)(elements * n * n), (size_t)(n * n)) != 0) {
        return -1;
    }
    fill_lattice(p->x_output, p->y_output, n, n, -4, 4, -4, 4);
    for (int64_t e = 0; e < elements; e++) {
        double angle = 0.01 * (double)e;
        for (int64_t k = 0; k < n * n; k++) {
            double x = p->x_output[k], y = p->y_output[k];
            p->x_input[e * n * n + k] = x * cos(angle) - y * sin(angle);
            p->y_input[e * n * n + k] = x * sin(angle) + y * cos(angle);
        }
    }
    fill_lattice(p->x_output, p->y_output, n, n, -5, 5, -5, 5);
    set_arrays(p, 3, (int64_t[]){elements, n, n}, 2, (int64_t[]){n, n});
    p->options.num_axis_input = 2;
    p->options.axis_input[0] = 1;
    p->options.axis_input[1] = 2;
    p->options.num_axis_output = 2;
    p->options.axis_output[0] = 0;
    p->options.axis_output[1] = 1;
    return 0;
}

/* Build once to warm up, then `repeat` times; the best wall-clock time
 * and the best CPU time of a build. */
static int time_spart(spart_context *context, const problem *p, int repeat, double *best,
                      double *best_cpu, int64_t *entries)
{
    *best = INFINITY;
    *best_cpu = INFINITY;
    for (int r = -1; r < repeat; r++) {
        spart_weights *weights = NULL;
        double start = bench_seconds();
        double start_cpu = process_cpu();
        spart_status status =
            spart_weights_build(context, 2, p->input, p->output, &p->options, &weights);
        double elapsed = bench_seconds() - start;
        double elapsed_cpu = process_cpu() - start_cpu;
        if (status != SPART_OK) {
            fprintf(stderr, "bench_weights: spart_weights_build failed: %s: %s\n",
                    spart_status_string(status), spart_context_error(context));
            return -1;
        }
        *entries = spart_weights_num_entries(weights);
        spart_weights_free(weights);
        if (r >= 0 && elapsed < *best) {
            *best = elapsed;
        }
        if (r >= 0 && elapsed_cpu < *best_cpu) {
            *best_cpu = elapsed_cpu;
        }
    }
    return 0;
}

/* Run the reference script and read its RESULT lines into `results`. */
static int time_reference(const char *python, const char *reference, int threads, int repeat,
                          const char *selected, result *results)
{
    char command[4096];
    snprintf(command, sizeof command,
             "NUMBA_NUM_THREADS=%d OMP_NUM_THREADS=%d '%s' '%s' --repeat %d --case %s", threads,
             threads, python, reference, repeat, selected);
    FILE *pipe = popen(command, "r");
    if (pipe == NULL) {
        fprintf(stderr, "bench_weights: cannot run %s\n", command);
        return -1;
    }
    char line[512];
    while (fgets(line, sizeof line, pipe) != NULL) {
        char name[16];
        double seconds, cpu_seconds = -1;
        long long entries;
        if (strncmp(line, "VERSIONS ", 9) == 0) {
            snprintf(reference_versions, sizeof reference_versions, "%s", line + 9);
            reference_versions[strcspn(reference_versions, "\n")] = '\0';
        } else if (sscanf(line, "RESULT %15s %lf %lld %lf", name, &seconds, &entries,
                          &cpu_seconds) >= 3) {
            for (int c = 0; c < NUM_CASES; c++) {
                if (strcmp(results[c].name, name) == 0) {
                    results[c].reference_seconds = seconds;
                    results[c].reference_cpu_seconds = cpu_seconds;
                    results[c].reference_entries = entries;
                }
            }
        } else {
            fprintf(stderr, "bench_weights: reference says: %s", line);
        }
    }
    int status = pclose(pipe);
    if (status != 0) {
        fprintf(stderr, "bench_weights: the reference script exited with status %d\n", status);
        return -1;
    }
    return 0;
}

static void write_json(const char *path, const result *results, int threads, int repeat,
                       const char *python)
{
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        fprintf(stderr, "bench_weights: cannot write %s\n", path);
        return;
    }
    fprintf(file, "{\n  \"spart_version\": \"%s\",\n  \"threads\": %d,\n  \"repeat\": %d,\n",
            spart_version(), threads, repeat);
    fprintf(file, "  \"python\": \"%s\",\n  \"cases\": [\n", python != NULL ? python : "");
    const char *separator = "";
    for (int c = 0; c < NUM_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        fprintf(file, "%s", separator);
        separator = ",\n";
        fprintf(file,
                "    {\"case\": \"%s\", \"description\": \"%s\", \"spart_seconds\": %.6f, "
                "\"spart_cpu_seconds\": %.6f, \"spart_entries\": %lld",
                r->name, r->description, r->spart_seconds, r->spart_cpu_seconds,
                (long long)r->spart_entries);
        if (r->reference_seconds >= 0) {
            fprintf(file,
                    ", \"regridding_seconds\": %.6f, \"regridding_cpu_seconds\": %.6f, "
                    "\"regridding_entries\": %lld, \"speedup\": %.3f",
                    r->reference_seconds, r->reference_cpu_seconds, (long long)r->reference_entries,
                    r->reference_seconds / r->spart_seconds);
        }
        fprintf(file, "}");
    }
    fprintf(file, "\n  ]\n}\n");
    fclose(file);
}

/* The table in Markdown under its header block (--markdown FILE). */
static int write_markdown(const char *path, int argc, char **argv, const result *results,
                          int threads, int repeat)
{
    char timing[128];
    snprintf(timing, sizeof timing,
             "wall clock, best of %d after a warm-up, both on the same "
             "threads",
             repeat);
    FILE *out = bench_markdown_open(path, argc, argv, threads, timing);
    if (out == NULL) {
        return -1;
    }
    fprintf(out, "- peers: %s\n\n",
            reference_versions[0] != '\0' ? reference_versions
                                          : "not measured (run with --python)");
    fprintf(out, "| case | problem | weights | spart s | regridding s | speed-up | "
                 "spart CPU s | regridding CPU s |\n");
    bench_markdown_rule(out, 8);
    for (int c = 0; c < NUM_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        fprintf(out, "| %s | %s | %lld | %.4f |", r->name, r->description,
                (long long)r->spart_entries, r->spart_seconds);
        if (r->reference_seconds >= 0) {
            fprintf(out, " %.4f | %.1fx |", r->reference_seconds,
                    r->reference_seconds / r->spart_seconds);
        } else {
            fprintf(out, " - | - |");
        }
        fprintf(out, " %.4f |", r->spart_cpu_seconds);
        if (r->reference_cpu_seconds >= 0) {
            fprintf(out, " %.4f |\n", r->reference_cpu_seconds);
        } else {
            fprintf(out, " - |\n");
        }
    }
    fclose(out);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_weights [--threads T] [--repeat N] [--python PYTHON] "
                    "[--reference SCRIPT] [--json FILE] [--min-speedup X] [--case a,b,c] "
                    "[--markdown FILE]\n");
}

int main(int argc, char **argv)
{
    int threads = omp_get_max_threads();
    int repeat = 3;
    const char *python = NULL;
    const char *reference = SPART_BENCH_REFERENCE;
    const char *json = NULL;
    const char *markdown = NULL;
    double min_speedup = 0.0;
    const char *selected = "a,b,c";
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
        } else if (strcmp(argv[k], "--min-speedup") == 0 && more) {
            min_speedup = atof(argv[++k]);
        } else if (strcmp(argv[k], "--case") == 0 && more) {
            selected = argv[++k];
        } else {
            usage();
            return 2;
        }
    }
    if (threads < 1 || repeat < 1) {
        usage();
        return 2;
    }
    result results[NUM_CASES] = {
        {"a", "README warp 66x66 onto a 33x33 lattice (clip)", 0, 0, 0, -1, -1, 0, 0},
        {"b", "512x512 cells onto itself rotated by 0.2 rad (sweep)", 0, 0, 0, -1, -1, 0, 0},
        {"c", "64 elements of 128x128 cells, rotated, onto one lattice (clip)", 0, 0, 0, -1, -1, 0,
         0},
    };
    int (*make[NUM_CASES])(problem *) = {make_readme_warp, make_rotated_onto_itself, make_stack};

    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK ||
        spart_context_set_threads(context, threads) != SPART_OK) {
        fprintf(stderr, "bench_weights: cannot make a context: %s\n", spart_last_error());
        return 1;
    }
    for (int c = 0; c < NUM_CASES; c++) {
        results[c].skipped = strstr(selected, results[c].name) == NULL;
        if (results[c].skipped) {
            continue;
        }
        problem p;
        int failed = make[c](&p) != 0 ||
                     time_spart(context, &p, repeat, &results[c].spart_seconds,
                                &results[c].spart_cpu_seconds, &results[c].spart_entries) != 0;
        release(&p);
        if (failed) {
            spart_context_free(context);
            return 1;
        }
    }
    spart_context_free(context);
    if (python != NULL &&
        time_reference(python, reference, threads, repeat, selected, results) != 0) {
        return 1;
    }

    printf("spart %s, conservative 2-D weights, %d threads, best of %d after a warm-up\n",
           spart_version(), threads, repeat);
    printf("%-4s %-62s %10s %12s %9s %12s %12s %9s %10s %10s\n", "case", "problem", "spart s",
           "regridding s", "speed-up", "spart cpu s", "package cpu", "cpu ratio", "entries",
           "(package)");
    int below = 0;
    for (int c = 0; c < NUM_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        printf("%-4s %-62s %10.4f ", r->name, r->description, r->spart_seconds);
        if (r->reference_seconds >= 0) {
            double speedup = r->reference_seconds / r->spart_seconds;
            below += speedup < min_speedup;
            printf("%12.4f %8.1fx ", r->reference_seconds, speedup);
        } else {
            printf("%12s %9s ", "-", "-");
        }
        printf("%12.4f ", r->spart_cpu_seconds);
        if (r->reference_cpu_seconds >= 0) {
            printf("%12.4f %8.1fx ", r->reference_cpu_seconds,
                   r->reference_cpu_seconds / r->spart_cpu_seconds);
        } else {
            printf("%12s %9s ", "-", "-");
        }
        printf("%10lld", (long long)r->spart_entries);
        if (r->reference_seconds >= 0) {
            printf(" %10lld", (long long)r->reference_entries);
        }
        printf("\n");
    }
    if (json != NULL) {
        write_json(json, results, threads, repeat, python);
    }
    if (markdown != NULL && write_markdown(markdown, argc, argv, results, threads, repeat) != 0) {
        return 1;
    }
    if (below > 0) {
        printf("%d case(s) below the goal of a %.1fx speed-up\n", below, min_speedup);
        return 1;
    }
    return 0;
}
