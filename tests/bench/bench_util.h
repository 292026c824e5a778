/*
 * tests/bench/bench_util.h: what the benchmarks share: the wall clock, the
 * smallest and the median of repeated timings, the host's copy bandwidth
 * (the floor a product is set against), shapes, the bytes of a CSR
 * matrix, and the instrument of the MART benchmarks.
 *
 * Every benchmark is built with OpenMP (omp_get_wtime is the clock).
 * Everything is static inline, so a benchmark that uses only part of it
 * builds without warnings.
 */
#ifndef SPART_BENCH_UTIL_H
#define SPART_BENCH_UTIL_H

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart.h"

/* Exits with the file, line, call and the context's sentence when a spart
 * call fails (for benchmarks that stop at the first failure). */
#define CHECK_SPART(context, call)                                                                 \
    do {                                                                                           \
        if ((call) != SPART_OK) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    spart_context_error(context));                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The same for a CUDA runtime call (in benchmarks that include
 * <cuda_runtime_api.h>). */
#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t check_error = (call);                                                          \
        if (check_error != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cudaGetErrorString(check_error));                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- timings ------------------------------------------------------------------------------ */

/* Wall-clock seconds from a fixed start (monotonic). */
static inline double bench_seconds(void)
{
    return omp_get_wtime();
}

static inline double bench_smaller(double a, double b)
{
    return a < b ? a : b;
}

/* The smallest of n >= 1 timings. */
static inline double bench_least(const double *times, int n)
{
    double least = times[0];
    for (int k = 1; k < n; k++) {
        least = bench_smaller(least, times[k]);
    }
    return least;
}

/* For qsort: ascending doubles. */
static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n >= 1 timings (sorts them): the middle one, or the mean
 * of the middle two. */
static inline double bench_median(double *times, int n)
{
    qsort(times, (size_t)n, sizeof(double), bench_compare_doubles);
    return n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/* ---- the host's bandwidth floor ------------------------------------------------------------- */

/* A STREAM-like copy b = a of 2^25 doubles (256 MiB each way) with
 * `threads` OpenMP threads, first touched by the same threads: the best of
 * ten, in bytes per second (read and write counted, as STREAM does); -1
 * when the arrays cannot be had. */
static inline double bench_copy_bandwidth(int threads)
{
    const int64_t n = (int64_t)1 << 25;
    double *a = malloc((size_t)n * sizeof(double));
    double *b = malloc((size_t)n * sizeof(double));
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return -1.0;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < n; k++) {
        a[k] = (double)k;
        b[k] = 0.0;
    }
    double best = INFINITY;
    for (int r = 0; r < 10; r++) {
        double start = bench_seconds();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t k = 0; k < n; k++) {
            b[k] = a[k];
        }
        best = bench_smaller(best, bench_seconds() - start);
    }
    double last = b[n - 1];
    free(a);
    free(b);
    return last == (double)(n - 1) ? 2.0 * 8.0 * (double)n / best : -1.0;
}

/* ---- shapes and matrices ------------------------------------------------------------------ */

static inline spart_shape bench_shape_of(int ndim, const int64_t *dims)
{
    spart_shape shape;
    memset(&shape, 0, sizeof shape);
    shape.ndim = ndim;
    for (int k = 0; k < ndim; k++) {
        shape.dims[k] = dims[k];
    }
    return shape;
}

/* Bytes of a regridder's CSR arrays with int32 columns: values, columns
 * and row pointers. */
static inline double bench_csr_bytes(const spart_regridder *r)
{
    double value = spart_regridder_value_type(r) == SPART_FLOAT32 ? 4.0 : 8.0;
    return (double)spart_regridder_num_entries(r) * (value + 4.0) +
           (double)(spart_regridder_num_rows(r) + 1) * 8.0;
}

/* ---- the MART benchmarks' instrument ------------------------------------------------------ */

enum {
    BENCH_MART_CHANNELS = 4,
    BENCH_MART_BINS = 20,
    BENCH_MART_SENSOR_X = 128,
    BENCH_MART_SENSOR_Y = 64
};

/* The ESIS-like instrument of the MART benchmarks on an n x n scene: 4
 * channels at 90 degrees, 20 velocity bins of 50 km/s, a 128 x 64 sensor.
 * The arrays are the caller's: angle[4], velocity[21], wavelength[20]
 * (the bins' wavelengths, for the caller to fill), x[n + 1], y[n + 1],
 * sensor_x[129], sensor_y[65]. */
static inline void bench_mart_params(int n, double *angle, double *velocity, double *wavelength,
                                     double *x, double *y, double *sensor_x, double *sensor_y,
                                     spart_instrument_params *p)
{
    for (int c = 0; c < BENCH_MART_CHANNELS; c++) {
        angle[c] = 5.64 + 90.0 * c;
    }
    for (int l = 0; l <= BENCH_MART_BINS; l++) {
        velocity[l] = -500.0 + 50.0 * l;
    }
    for (int i = 0; i <= n; i++) {
        x[i] = -10.0 + 20.0 * i / n;
        y[i] = x[i];
    }
    for (int i = 0; i <= BENCH_MART_SENSOR_X; i++) {
        sensor_x[i] = i;
    }
    for (int i = 0; i <= BENCH_MART_SENSOR_Y; i++) {
        sensor_y[i] = i;
    }
    spart_instrument_params_init(p);
    p->num_channel = BENCH_MART_CHANNELS;
    p->angle = angle;
    p->dispersion = 171.0 * 10.0 / 299792.458;
    p->plate_scale = 0.4;
    p->wavelength_ref = 171.0;
    p->position_ref[0] = 64.0;
    p->position_ref[1] = 32.0;
    p->area_effective = 1.0;
    p->exposure_time = 20.0;
    p->num_wavelength = BENCH_MART_BINS;
    p->wavelength = wavelength;
    p->num_scene_x = n;
    p->scene_x = x;
    p->num_scene_y = n;
    p->scene_y = y;
    p->num_sensor_x = BENCH_MART_SENSOR_X;
    p->sensor_x = sensor_x;
    p->num_sensor_y = BENCH_MART_SENSOR_Y;
    p->sensor_y = sensor_y;
    p->solid_angle_steradian = 1; /* spart_scene_gaussians is per steradian */
}

/* ---- the Markdown report (--markdown FILE) ------------------------------------------------ */

/* The host's processor model: the first "model name" of /proc/cpuinfo, or
 * "unknown processor". */
static inline void bench_cpu_model(char *model, size_t size)
{
    snprintf(model, size, "unknown processor");
    FILE *file = fopen("/proc/cpuinfo", "r");
    if (file == NULL) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, file) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(model, size, "%s", colon);
            break;
        }
    }
    fclose(file);
}

/* The command line as a shell would take it back: the program's base name,
 * then the arguments, single-quoted where they hold anything but
 * [A-Za-z0-9_./=,:+-]. */
static inline void bench_markdown_command(FILE *out, int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/');
    fprintf(out, "%s", name != NULL ? name + 1 : argv[0]);
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        int plain =
            a[0] != '\0' && a[strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_./=,:+-")] == '\0';
        fprintf(out, plain ? " %s" : " '%s'", a);
    }
}

/* Opens `path` for a benchmark's Markdown report and writes its header
 * block: the machine (processor model, logical processors, the threads the
 * benchmark used), spart's version and the compiler, the command line and
 * `timing` (how a figure was taken). The benchmark then adds its own lines
 * (peers' versions, the GPU) and its table. NULL (and a message) when the
 * file cannot be written. */
static inline FILE *bench_markdown_open(const char *path, int argc, char **argv, int threads,
                                        const char *timing)
{
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], path);
        return NULL;
    }
    char model[256];
    bench_cpu_model(model, sizeof model);
    fprintf(out, "- machine: %s, %d logical processors; spart on %d thread%s\n", model,
            omp_get_num_procs(), threads, threads == 1 ? "" : "s");
#ifdef __VERSION__
    fprintf(out, "- spart %s, built with C compiler %s\n", spart_version(), __VERSION__);
#else
    fprintf(out, "- spart %s\n", spart_version());
#endif
    fprintf(out, "- command: `");
    bench_markdown_command(out, argc, argv);
    fprintf(out, "`\n- timing: %s\n", timing);
    return out;
}

/* A Markdown table row: the cells, each a printf format with its value,
 * are the caller's; these write the separators. */
static inline void bench_markdown_rule(FILE *out, int columns)
{
    fprintf(out, "|");
    for (int k = 0; k < columns; k++) {
        fprintf(out, "---|");
    }
    fprintf(out, "\n");
}

#endif /* SPART_BENCH_UTIL_H */
