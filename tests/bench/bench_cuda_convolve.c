/*
 * bench_cuda_convolve: a PSF folded into weights and assembled into a
 * regridder on the GPU (spart_regridder_create_device_convolved) against
 * the host path (spart_weights_convolve, then spart_regridder_create), in
 * one program on one machine.
 *
 * The shape of the ctis PSF tutorial, as tests/bench/bench_convolve.py
 * makes it: a 64 x 64 scene in 20 wavelength bins seen by 4 channels
 * (dispersed along +-x, slightly rotated) on a 128 x 64 sensor,
 * conservative weights built by spart (about 1.3 M entries, orthogonal
 * shape 4 x 20), each channel blurred by its own 21 x 21 elliptical
 * Gaussian (the tutorial's PSFs from spart_psf_gaussian, as
 * tests/bench/bench_mart_psf.c makes them; kernel shape 4 x 1 x 1 x 1 x 21 x
 * 21): about 144 M entries after
 * the convolution.
 *
 * Times (each the best of --repeat calls, wall clock, the device
 * synchronised; the first device call, which starts CUDA, is not timed):
 *   - host: spart_weights_convolve (all OpenMP threads), then
 *     spart_regridder_create of the result;
 *   - device: spart_regridder_create_device_convolved, split by its
 *     progress reports into the convolution (inputs copied in, convolved
 *     on the device) and the assembly;
 *   - for comparison, spart_regridder_create_device of the host-convolved
 *     weights (3.5 GB of triples copied in, then assembled).
 * Device memory: the high-water mark of the stream-ordered pool during the
 * call (the inputs, the convolved entries, the sort) and the matrix
 * itself (cudaMalloc). Checks that the device built the host's CSR arrays
 * bit for bit. Prints a table; never asserts a speed.
 *
 * Usage: bench_cuda_convolve [--repeat R] [--scale S] [--json FILE] [--markdown FILE]
 * (--scale S divides the scene and sensor sides by S, for a quick run;
 * --markdown FILE writes the table in Markdown under a header block
 * (machine, versions, command line), for docs/performance.md.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <omp.h>

#include "bench_util.h"
#include "spart.h"

enum { CHANNELS = 4, WAVELENGTHS = 20, KERNEL = 21 };

static int check(spart_context *context, spart_status status, const char *what)
{
    if (status != SPART_OK) {
        fprintf(stderr, "bench_cuda_convolve: %s: %s\n", what, spart_context_error(context));
        return 0;
    }
    return 1;
}

/* The grids of bench_convolve.py's tutorial_grids: scene vertices per
 * (channel, wavelength), shifted and rotated per channel, and the sensor's
 * lattice broadcast to every (channel, wavelength). */
typedef struct grids {
    int64_t n_scene, n_x, n_y;
    double *x_in, *y_in, *x_out, *y_out;
} grids;

static void make_grids(int scale, grids *g)
{
    g->n_scene = 64 / scale;
    g->n_x = 128 / scale;
    g->n_y = 64 / scale;
    int64_t v = g->n_scene + 1, vx = g->n_x + 1, vy = g->n_y + 1;
    size_t in = (size_t)(CHANNELS * WAVELENGTHS * v * v);
    size_t out = (size_t)(CHANNELS * WAVELENGTHS * vx * vy);
    g->x_in = malloc(in * sizeof(double));
    g->y_in = malloc(in * sizeof(double));
    g->x_out = malloc(out * sizeof(double));
    g->y_out = malloc(out * sizeof(double));
    for (int c = 0; c < CHANNELS; c++) {
        double angle = 0.03 * (c + 1);
        double direction = c % 2 == 0 ? 1.0 : -1.0;
        for (int w = 0; w < WAVELENGTHS; w++) {
            double shift = -0.5 + (double)w / (WAVELENGTHS - 1);
            for (int64_t i = 0; i < v; i++) {
                for (int64_t j = 0; j < v; j++) {
                    double x = -1.0 + 2.0 * (double)i / (double)g->n_scene;
                    double y = -1.0 + 2.0 * (double)j / (double)g->n_scene;
                    size_t k = (size_t)(((c * WAVELENGTHS + w) * v + i) * v + j);
                    g->x_in[k] = x * cos(angle) - y * sin(angle) + direction * shift;
                    g->y_in[k] = x * sin(angle) + y * cos(angle) + 0.1 * c * shift;
                }
            }
            for (int64_t i = 0; i < vx; i++) {
                for (int64_t j = 0; j < vy; j++) {
                    size_t k = (size_t)(((c * WAVELENGTHS + w) * vx + i) * vy + j);
                    g->x_out[k] = -2.0 + 4.0 * (double)i / (double)g->n_x;
                    g->y_out[k] = -1.0 + 2.0 * (double)j / (double)g->n_y;
                }
            }
        }
    }
}

static void free_grids(grids *g)
{
    free(g->x_in);
    free(g->y_in);
    free(g->x_out);
    free(g->y_out);
}

/* The tutorial's four normalised elliptical Gaussians, [channel][x][y]
 * (as bench_mart_psf.c). */
static int tutorial_psf(spart_context *context, double *psf)
{
    const double major[4] = {2.0, 3.0, 3.5, 2.5};
    const double minor[4] = {0.8, 0.6, 0.9, 0.5};
    const double angle[4] = {0.0, 30.0, 75.0, 135.0};
    const int64_t size[2] = {KERNEL, KERNEL};
    for (int c = 0; c < CHANNELS; c++) {
        if (!check(context,
                   spart_psf_gaussian(context, major[c], minor[c], angle[c], size,
                                      psf + c * KERNEL * KERNEL, KERNEL * KERNEL),
                   "psf kernel")) {
            return 0;
        }
    }
    return 1;
}

static spart_weights *tutorial_weights(spart_context *context, const grids *g)
{
    int64_t v = g->n_scene + 1;
    spart_shape in = {4, {CHANNELS, WAVELENGTHS, v, v}};
    spart_shape out = {4, {CHANNELS, WAVELENGTHS, g->n_x + 1, g->n_y + 1}};
    spart_array coordinates_input[2] = {{g->x_in, in}, {g->y_in, in}};
    spart_array coordinates_output[2] = {{g->x_out, out}, {g->y_out, out}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    options.num_axis_input = 2;
    options.axis_input[0] = -2;
    options.axis_input[1] = -1;
    options.num_axis_output = 2;
    options.axis_output[0] = -2;
    options.axis_output[1] = -1;
    spart_weights *weights = NULL;
    if (!check(context,
               spart_weights_build(context, 2, coordinates_input, coordinates_output, &options,
                                   &weights),
               "weights")) {
        return NULL;
    }
    return weights;
}

/* ---- the device call's stages, from its progress reports ---------------------------------- */

typedef struct stages {
    double convolve_start;
    double assembly_start;
} stages;

static void record_stage(void *user, const char *stage, int64_t done, int64_t total)
{
    (void)total;
    stages *s = user;
    if (done == 0 && strcmp(stage, "convolve") == 0) {
        s->convolve_start = omp_get_wtime();
    }
    if (done == 0 && strcmp(stage, "assembly") == 0) {
        s->assembly_start = omp_get_wtime();
    }
}

/* Bytes the stream-ordered pool of device 0 held at most since the last
 * reset, and the reset. */
static size_t pool_high_water(int reset)
{
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess) {
        return 0;
    }
    uint64_t value = 0;
    if (reset) {
        (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value);
        return 0;
    }
    (void)cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value);
    return (size_t)value;
}

/* Whether two regridders (the second on the device) hold the same CSR arrays. */
static int same_arrays(spart_context *context, const spart_regridder *host,
                       const spart_regridder *device)
{
    spart_regridder *back = NULL;
    if (!check(context, spart_regridder_to_host(context, device, &back), "to_host")) {
        return 0;
    }
    const int64_t *row_a = NULL, *row_b = NULL;
    const int32_t *col_a = NULL, *col_b = NULL;
    const void *val_a = NULL, *val_b = NULL;
    int same = spart_regridder_csr(host, &row_a, &col_a, NULL, &val_a) == SPART_OK &&
               spart_regridder_csr(back, &row_b, &col_b, NULL, &val_b) == SPART_OK;
    int64_t rows = spart_regridder_num_rows(host), n = spart_regridder_num_entries(host);
    same = same && spart_regridder_num_rows(back) == rows &&
           spart_regridder_num_entries(back) == n && col_a != NULL && col_b != NULL;
    same = same && memcmp(row_a, row_b, (size_t)(rows + 1) * sizeof(int64_t)) == 0 &&
           memcmp(col_a, col_b, (size_t)n * sizeof(int32_t)) == 0 &&
           memcmp(val_a, val_b, (size_t)n * sizeof(double)) == 0;
    spart_regridder_free(back);
    return same;
}

typedef struct figures {
    double host_convolve, host_assembly;
    double device_total, device_convolve, device_assembly;
    double device_from_host_weights;
    size_t pool_bytes;
    double matrix_bytes;
    int64_t entries_in, entries_out;
    int same, same_again;
} figures;

/* The device path once: its time and stages; the regridder is kept. */
static int time_device(spart_context *context, const spart_weights *weights,
                       const spart_array *kernel, spart_regridder **regridder, double *total,
                       double *convolve, double *assembly, size_t *pool)
{
    stages s = {0.0, 0.0};
    if (!check(context, spart_context_set_progress(context, record_stage, &s), "progress")) {
        return 0;
    }
    pool_high_water(1);
    double t = omp_get_wtime();
    int ok = check(
        context, spart_regridder_create_device_convolved(context, weights, kernel, NULL, regridder),
        "create_device_convolved");
    double end = omp_get_wtime();
    *total = end - t;
    *convolve = s.assembly_start - t;
    *assembly = end - s.assembly_start;
    *pool = pool_high_water(0);
    return check(context, spart_context_set_progress(context, NULL, NULL), "progress") && ok;
}

static int run(spart_context *context, int scale, int repeat, figures *f)
{
    grids g;
    make_grids(scale, &g);
    double t = omp_get_wtime();
    spart_weights *weights = tutorial_weights(context, &g);
    free_grids(&g);
    if (weights == NULL) {
        return 0;
    }
    printf("weights built in %.2f s: %lld entries\n", omp_get_wtime() - t,
           (long long)spart_weights_num_entries(weights));
    static double psf[CHANNELS * KERNEL * KERNEL];
    if (!tutorial_psf(context, psf)) {
        spart_weights_free(weights);
        return 0;
    }
    spart_array kernel = {psf, {6, {CHANNELS, 1, 1, 1, KERNEL, KERNEL}}};
    memset(f, 0, sizeof *f);
    f->entries_in = spart_weights_num_entries(weights);
    f->host_convolve = f->host_assembly = f->device_total = f->device_convolve = 1e30;
    f->device_assembly = f->device_from_host_weights = 1e30;
    /* host */
    spart_weights *convolved = NULL;
    spart_regridder *host = NULL;
    for (int k = 0; k < repeat; k++) {
        spart_weights_free(convolved);
        spart_regridder_free(host);
        convolved = NULL;
        host = NULL;
        t = omp_get_wtime();
        if (!check(context, spart_weights_convolve(context, weights, &kernel, &convolved),
                   "weights_convolve")) {
            return 0;
        }
        double middle = omp_get_wtime();
        if (!check(context, spart_regridder_create(context, convolved, NULL, &host), "create")) {
            return 0;
        }
        f->host_convolve = bench_smaller(f->host_convolve, middle - t);
        f->host_assembly = bench_smaller(f->host_assembly, omp_get_wtime() - middle);
    }
    f->entries_out = spart_weights_num_entries(convolved);
    printf("host: convolved to %lld entries, assembled\n", (long long)f->entries_out);
    /* device: one untimed call starts CUDA */
    spart_regridder *device = NULL;
    double total, convolve, assembly;
    size_t pool;
    if (!time_device(context, weights, &kernel, &device, &total, &convolve, &assembly, &pool)) {
        return 0;
    }
    f->same = same_arrays(context, host, device);
    for (int k = 0; k < repeat; k++) {
        spart_regridder_free(device);
        device = NULL;
        if (!time_device(context, weights, &kernel, &device, &total, &convolve, &assembly, &pool)) {
            return 0;
        }
        if (total < f->device_total) {
            f->device_total = total;
            f->device_convolve = convolve;
            f->device_assembly = assembly;
        }
        f->pool_bytes = pool > f->pool_bytes ? pool : f->pool_bytes;
    }
    f->same_again = same_arrays(context, host, device);
    f->matrix_bytes = bench_csr_bytes(device);
    spart_regridder_free(device);
    /* device assembly of the host-convolved weights */
    for (int k = 0; k < repeat; k++) {
        spart_regridder *copied = NULL;
        t = omp_get_wtime();
        if (!check(context, spart_regridder_create_device(context, convolved, NULL, &copied),
                   "create_device")) {
            return 0;
        }
        f->device_from_host_weights =
            bench_smaller(f->device_from_host_weights, omp_get_wtime() - t);
        spart_regridder_free(copied);
    }
    spart_regridder_free(host);
    spart_weights_free(convolved);
    spart_weights_free(weights);
    return 1;
}

static void write_json(const char *path, const figures *f, int threads)
{
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        return;
    }
    fprintf(file,
            "{\"threads\": %d, \"entries_input\": %lld, \"entries_output\": %lld,\n"
            " \"host_convolve_s\": %.6f, \"host_assembly_s\": %.6f,\n"
            " \"device_total_s\": %.6f, \"device_convolve_s\": %.6f, \"device_assembly_s\": "
            "%.6f,\n"
            " \"device_from_host_weights_s\": %.6f, \"pool_high_water_bytes\": %zu,\n"
            " \"matrix_bytes\": %.0f, \"same\": %s}\n",
            threads, (long long)f->entries_in, (long long)f->entries_out, f->host_convolve,
            f->host_assembly, f->device_total, f->device_convolve, f->device_assembly,
            f->device_from_host_weights, f->pool_bytes, f->matrix_bytes,
            f->same && f->same_again ? "true" : "false");
    fclose(file);
}

/* The table in Markdown under its header block (--markdown FILE). */
static int write_markdown(const char *path, int argc, char **argv, const figures *f, int threads,
                          int scale, int repeat)
{
    char timing[128];
    snprintf(timing, sizeof timing, "wall clock, best of %d, the device synchronised", repeat);
    FILE *out = bench_markdown_open(path, argc, argv, threads, timing);
    if (out == NULL) {
        return -1;
    }
    struct cudaDeviceProp properties;
    int runtime = 0, driver = 0;
    if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess) {
        cudaRuntimeGetVersion(&runtime);
        cudaDriverGetVersion(&driver);
        fprintf(out, "- GPU: %s, %d multiprocessors, %.0f GB; CUDA runtime %d.%d, driver %d.%d\n",
                properties.name, properties.multiProcessorCount,
                (double)properties.totalGlobalMem / 1e9, runtime / 1000, runtime % 1000 / 10,
                driver / 1000, driver % 1000 / 10);
    }
    fprintf(out,
            "- problem: the ctis PSF-tutorial shape (scale %d): %lld weights, 4 channels "
            "each blurred by its own 21 x 21 PSF, %lld entries after the convolution; the "
            "same CSR arrays bit for bit on both: %s\n\n",
            scale, (long long)f->entries_in, (long long)f->entries_out,
            f->same && f->same_again ? "yes" : "NO");
    fprintf(out, "| step | host s | device s | speed-up |\n");
    bench_markdown_rule(out, 4);
    fprintf(out, "| convolve the weights with the PSFs | %.4f | %.4f | %.1fx |\n", f->host_convolve,
            f->device_convolve, f->host_convolve / f->device_convolve);
    fprintf(out, "| assemble the regridder | %.4f | %.4f | %.1fx |\n", f->host_assembly,
            f->device_assembly, f->host_assembly / f->device_assembly);
    fprintf(out, "| both | %.4f | %.4f | %.1fx |\n", f->host_convolve + f->host_assembly,
            f->device_total, (f->host_convolve + f->host_assembly) / f->device_total);
    fclose(out);
    return 0;
}

int main(int argc, char **argv)
{
    int repeat = 3, scale = 1;
    const char *json = NULL;
    const char *markdown = NULL;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--repeat") == 0) {
            repeat = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--scale") == 0) {
            scale = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--json") == 0) {
            json = argv[a + 1];
        } else if (strcmp(argv[a], "--markdown") == 0) {
            markdown = argv[a + 1];
        }
    }
    repeat = repeat < 1 ? 1 : repeat;
    scale = scale < 1 ? 1 : scale;
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    if (spart_context_set_cuda_device(context, 0) != SPART_OK) {
        printf("SKIP: %s\n", spart_context_error(context));
        spart_context_free(context);
        return 77;
    }
    figures f;
    if (!run(context, scale, repeat, &f)) {
        spart_context_free(context);
        return 1;
    }
    int threads = spart_context_threads(context);
    printf("\nPSF-tutorial shape (scale %d): %lld weights, 4 x 21x21 PSFs -> %lld entries; "
           "host %d threads; best of %d\n",
           scale, (long long)f.entries_in, (long long)f.entries_out, threads, repeat);
    printf("%-44s %10s\n", "step", "seconds");
    printf("%-44s %10.4f\n", "host spart_weights_convolve", f.host_convolve);
    printf("%-44s %10.4f\n", "host spart_regridder_create", f.host_assembly);
    printf("%-44s %10.4f\n", "host, both", f.host_convolve + f.host_assembly);
    printf("%-44s %10.4f\n", "device create_device_convolved: convolve", f.device_convolve);
    printf("%-44s %10.4f\n", "device create_device_convolved: assembly", f.device_assembly);
    printf("%-44s %10.4f\n", "device create_device_convolved, in all", f.device_total);
    printf("%-44s %10.4f\n", "device create_device of host-convolved", f.device_from_host_weights);
    printf("device memory: pool high-water %.2f GB, the matrix %.2f GB\n",
           (double)f.pool_bytes / 1e9, f.matrix_bytes / 1e9);
    printf("speed-up of the convolution %.1f, of both steps %.1f; same CSR arrays bit for bit: "
           "%s\n",
           f.host_convolve / f.device_convolve,
           (f.host_convolve + f.host_assembly) / f.device_total,
           f.same && f.same_again ? "yes" : "NO");
    if (json != NULL) {
        write_json(json, &f, threads);
    }
    if (markdown != NULL && write_markdown(markdown, argc, argv, &f, threads, scale, repeat) != 0) {
        spart_context_free(context);
        return 1;
    }
    spart_context_free(context);
    return f.same && f.same_again ? 0 : 1;
}
