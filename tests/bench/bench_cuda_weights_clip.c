/*
 * tests/bench/bench_cuda_weights_clip.c: the conservative 2-D weights by
 * clipping built on the device (src/weights/weights_clip_device.h: count,
 * scan, write) against spart's host kernels on T threads and, through
 * bench_cuda_weights_clip_reference.py, regridding.weights(...,
 * device="cuda") on the same grids in the same run, plus the bandwidth
 * floor (the bytes a build must move: the input vertices read, and the
 * output's too when it is not a lattice, the entries written; over the
 * device's copy rate measured here).
 *
 *   bench_cuda_weights_clip [--threads T] [--repeat N] [--python PYTHON]
 *                           [--reference SCRIPT] [--case a,b,...] [--markdown FILE]
 *
 * The cases (the reference script builds the same grids with NumPy):
 *   warp   regridding's README warp: 66x66 vertices on [-5, 5]^2 rotated by
 *          0.4 rad plus 0.05 x^2, 0.05 y^2, onto a 33x33 lattice over its box;
 *   r512   513x513 vertices on [-4, 4]^2 rotated by 0.2 rad onto the
 *          513x513 lattice on [-4, 4]^2;
 *   r2048  the same with 2049x2049 vertices;
 *   c512   the 513x513 lattice on [-4, 4]^2 onto itself rotated by 0.2 rad
 *          (a curvilinear output: the general kernel; the package cannot
 *          build it on a GPU);
 *   k2048  65x65 vertices on [-4, 4]^2 rotated by 0.2 rad onto the 2049x2049
 *          lattice (cells of about 32 x 32 lattice cells: the walk's windows);
 *   k1024  the 65x65 lattice on [-4, 4]^2 onto the 1025x1025 grid rotated by
 *          0.2 rad (general kernel, about 256 entries a cell).
 * The device time is that of a whole build with the grids already in
 * device memory (count, scan, the total to the host, the entries'
 * allocation, write), best of N after one warm-up, by CUDA events, with
 * the device's default memory pool as it comes and keeping what is freed
 * (cudaMemPoolAttrReleaseThreshold); the
 * host time the wall clock of spart_host_weights_conservative_2d_clip(_general)
 * on T threads, best of N. Every device build is checked against the
 * host's, entry for entry (a difference is reported and the exit status
 * is 1). The speed-ups are figures to read: nothing here asserts a speed.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <omp.h>

#include "bench_cuda_peers.h"
#include "bench_util.h"
#include "weights/triples.h"
#include "weights/weights_clip_device.h"
#include "weights/weights_kernels.h"

#ifndef SPART_BENCH_CLIP_REFERENCE
#define SPART_BENCH_CLIP_REFERENCE "bench_cuda_weights_clip_reference.py"
#endif

#define NUM_CASES 6

typedef struct grid {
    int64_t num_x, num_y;
    double *x, *y;
} grid;

typedef struct bench_case {
    const char *name;
    const char *description;
    int64_t vertices;        /* of the input, along each axis */
    int64_t vertices_output; /* of the output, along each axis */
    int lattice;
    grid input, output;
    double device_ms, host_ms, reference_ms; /* < 0: not measured */
    double upload_ms;      /* the grids from (pageable) host memory to the device */
    double count_ms;       /* of device_ms: the count (with its scan and synchronisation) */
    double device_kept_ms; /* device_ms with the memory pool keeping what is freed */
    int64_t entries, reference_entries;
    int same; /* device = host, entry for entry */
    int selected;
} bench_case;

static void *plain_malloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}

static void *plain_realloc(void *user, void *pointer, size_t size)
{
    (void)user;
    return realloc(pointer, size);
}

static void plain_free(void *user, void *pointer)
{
    (void)user;
    free(pointer);
}

static const spart_allocator plain_allocator = {plain_malloc, plain_realloc, plain_free, NULL};

static double linspace(double start, double stop, int64_t num, int64_t k)
{
    return k == num - 1 ? stop : start + (double)k * ((stop - start) / (double)(num - 1));
}

static grid grid_new(int64_t num_x, int64_t num_y)
{
    grid g = {num_x, num_y, malloc((size_t)(num_x * num_y) * sizeof(double)),
              malloc((size_t)(num_x * num_y) * sizeof(double))};
    if (g.x == NULL || g.y == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return g;
}

/* The lattice [x0, x1] x [y0, y1] of num_x x num_y vertices, rotated by
 * `angle` and warped by `warp` (x += warp u^2, y += warp v^2, as the
 * README's warp). */
static grid rotated(double x0, double x1, int64_t num_x, double y0, double y1, int64_t num_y,
                    double angle, double warp)
{
    grid g = grid_new(num_x, num_y);
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            const double u = linspace(x0, x1, num_x, i), v = linspace(y0, y1, num_y, j);
            g.x[i * num_y + j] = u * cos(angle) - v * sin(angle) + warp * u * u;
            g.y[i * num_y + j] = u * sin(angle) + v * cos(angle) + warp * v * v;
        }
    }
    return g;
}

static void make_case(bench_case *c)
{
    const int64_t n = c->vertices;
    if (strcmp(c->name, "warp") == 0) {
        c->input = rotated(-5, 5, n, -5, 5, n, 0.4, 0.05);
        double low_x = INFINITY, high_x = -INFINITY, low_y = INFINITY, high_y = -INFINITY;
        for (int64_t v = 0; v < n * n; v++) {
            low_x = fmin(low_x, c->input.x[v]);
            high_x = fmax(high_x, c->input.x[v]);
            low_y = fmin(low_y, c->input.y[v]);
            high_y = fmax(high_y, c->input.y[v]);
        }
        c->output = rotated(low_x, high_x, 33, low_y, high_y, 33, 0.0, 0.0);
    } else if (c->lattice) {
        const int64_t m = c->vertices_output;
        c->input = rotated(-4, 4, n, -4, 4, n, 0.2, 0.0);
        c->output = rotated(-4, 4, m, -4, 4, m, 0.0, 0.0);
    } else {
        const int64_t m = c->vertices_output;
        c->input = rotated(-4, 4, n, -4, 4, n, 0.0, 0.0);
        c->output = rotated(-4, 4, m, -4, 4, m, 0.2, 0.0);
    }
}

static double *upload(const double *host, int64_t n)
{
    void *device = NULL;
    CHECK_CUDA(cudaMalloc(&device, (size_t)n * sizeof(double)));
    CHECK_CUDA(cudaMemcpy(device, host, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    return device;
}

/* One device build into freshly allocated arrays (the caller frees them). */
static int64_t device_build(const bench_case *c, const spart_device_clip_grid *in,
                            const spart_device_clip_grid *out, cudaStream_t stream, int64_t **ii,
                            int64_t **io, double **v, double *count_ms)
{
    spart_device_clip_counts *counts = NULL;
    int64_t n = 0;
    const double start = bench_seconds();
    CHECK_CUDA((cudaError_t)spart_cuda_clip_2d_count(in, out, c->lattice, NULL, &counts, &n,
                                                     stream)); /* returns synchronised */
    *count_ms = (bench_seconds() - start) * 1e3;
    const size_t bytes = (size_t)(n > 0 ? n : 1) * 8;
    CHECK_CUDA(cudaMallocAsync((void **)ii, bytes, stream));
    CHECK_CUDA(cudaMallocAsync((void **)io, bytes, stream));
    CHECK_CUDA(cudaMallocAsync((void **)v, bytes, stream));
    CHECK_CUDA((cudaError_t)spart_cuda_clip_2d_write(counts, *ii, *io, *v, stream));
    spart_cuda_clip_2d_counts_free(counts, stream);
    return n;
}

/* Whether the device's n entries (ii, io, v) are the host's, bit for bit. */
static int same_as_host(const spart_triples *host, int64_t n, const int64_t *ii, const int64_t *io,
                        const double *v)
{
    if (host->count != n) {
        return 0;
    }
    if (n == 0) {
        return 1;
    }
    const size_t bytes = (size_t)n * 8;
    int64_t *d_ii = malloc(bytes), *d_io = malloc(bytes);
    double *d_v = malloc(bytes);
    CHECK_CUDA(cudaMemcpy(d_ii, ii, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(d_io, io, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(d_v, v, bytes, cudaMemcpyDeviceToHost));
    const int same = memcmp(d_ii, host->indices_input, bytes) == 0 &&
                     memcmp(d_io, host->indices_output, bytes) == 0 &&
                     memcmp(d_v, host->values, bytes) == 0;
    free(d_ii);
    free(d_io);
    free(d_v);
    return same;
}

static void run_case(bench_case *c, int threads, int repeat)
{
    make_case(c);
    const int64_t nv_in = c->input.num_x * c->input.num_y;
    const int64_t nv_out = c->output.num_x * c->output.num_y;
    c->upload_ms = INFINITY;
    for (int run = 0; run < repeat; run++) {
        const double start = bench_seconds();
        double *arrays[4] = {upload(c->input.x, nv_in), upload(c->input.y, nv_in),
                             upload(c->output.x, nv_out), upload(c->output.y, nv_out)};
        c->upload_ms = fmin(c->upload_ms, (bench_seconds() - start) * 1e3);
        for (int a = 0; a < 4; a++) {
            CHECK_CUDA(cudaFree(arrays[a]));
        }
    }
    spart_device_clip_grid in = {upload(c->input.x, nv_in), upload(c->input.y, nv_in),
                                 c->input.num_x, c->input.num_y};
    spart_device_clip_grid out = {upload(c->output.x, nv_out), upload(c->output.y, nv_out),
                                  c->output.num_x, c->output.num_y};
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    timer t;
    CHECK_CUDA(cudaEventCreate(&t.start));
    CHECK_CUDA(cudaEventCreate(&t.stop));
    int64_t *ii = NULL, *io = NULL;
    double *v = NULL;
    /* twice: with the device's default memory pool as it comes (it gives
     * back what is freed at each synchronisation, so every build maps its
     * memory afresh), then keeping what is freed (release threshold: all,
     * as an application that builds repeatedly would set it) */
    cudaMemPool_t pool;
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0));
    for (int keep = 0; keep < 2; keep++) {
        uint64_t threshold = keep ? UINT64_MAX : 0;
        CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
        double *best = keep ? &c->device_kept_ms : &c->device_ms;
        *best = INFINITY;
        for (int run = -1; run < repeat; run++) {
            double count_ms = 0.0;
            CHECK_CUDA(cudaEventRecord(t.start, stream));
            c->entries = device_build(c, &in, &out, stream, &ii, &io, &v, &count_ms);
            CHECK_CUDA(cudaEventRecord(t.stop, stream));
            const double ms = elapsed_ms(&t);
            if (run >= 0 && ms < *best) {
                *best = ms;
                if (!keep) {
                    c->count_ms = count_ms;
                }
            }
            if (keep == 0 || run + 1 < repeat) {
                CHECK_CUDA(cudaFreeAsync(ii, stream));
                CHECK_CUDA(cudaFreeAsync(io, stream));
                CHECK_CUDA(cudaFreeAsync(v, stream));
            }
        }
        CHECK_CUDA(cudaStreamSynchronize(stream));
    }
    uint64_t threshold = 0;
    CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    /* the host build, timed, and compared with the device's last one */
    spart_triples host;
    spart_triples_init(&host, &plain_allocator);
    c->host_ms = INFINITY;
    for (int run = -1; run < repeat; run++) {
        host.count = 0;
        const double start = bench_seconds();
        spart_status status = (c->lattice ? spart_host_weights_conservative_2d_clip
                                          : spart_host_weights_conservative_2d_clip_general)(
            c->input.x, c->input.y, c->input.num_x, c->input.num_y, c->output.x, c->output.y,
            c->output.num_x, c->output.num_y, NULL, threads, &host);
        const double ms = (bench_seconds() - start) * 1e3;
        if (status != SPART_OK) {
            fprintf(stderr, "%s: the host build failed (%d)\n", c->name, (int)status);
            exit(1);
        }
        if (run >= 0) {
            c->host_ms = fmin(c->host_ms, ms);
        }
    }
    c->same = same_as_host(&host, c->entries, ii, io, v);
    spart_triples_release(&host);
    void *arrays[] = {ii, io, v, (void *)in.x, (void *)in.y, (void *)out.x, (void *)out.y};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        CHECK_CUDA(cudaFree(arrays[a]));
    }
    CHECK_CUDA(cudaEventDestroy(t.start));
    CHECK_CUDA(cudaEventDestroy(t.stop));
    CHECK_CUDA(cudaStreamDestroy(stream));
    free(c->input.x);
    free(c->input.y);
    free(c->output.x);
    free(c->output.y);
}

/* regridding's device build of the selected cases through the reference
 * script: lines "RESULT <case> <best seconds> <entries>"; a VERSIONS line. */
static void run_reference(bench_case *cases, const char *python, const char *script, int repeat,
                          char *versions, size_t versions_size)
{
    char names[256] = "";
    for (int k = 0; k < NUM_CASES; k++) {
        if (cases[k].selected && cases[k].lattice) {
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] != '\0' ? "," : "", cases[k].name);
        }
    }
    if (names[0] == '\0') {
        return;
    }
    char command[1024];
    snprintf(command, sizeof command, "%s %s --repeat %d --case %s 2>&1", python, script, repeat,
             names);
    FILE *pipe = popen(command, "r");
    if (pipe == NULL) {
        return;
    }
    char line[1024];
    while (fgets(line, sizeof line, pipe) != NULL) {
        char name[64];
        double seconds;
        long long entries;
        if (sscanf(line, "RESULT %63s %lf %lld", name, &seconds, &entries) == 3) {
            for (int k = 0; k < NUM_CASES; k++) {
                if (strcmp(cases[k].name, name) == 0) {
                    cases[k].reference_ms = seconds * 1e3;
                    cases[k].reference_entries = entries;
                }
            }
        } else if (strncmp(line, "VERSIONS ", 9) == 0) {
            line[strcspn(line, "\n")] = '\0';
            const size_t length = strlen(line + 9);
            const size_t kept = length < versions_size - 1 ? length : versions_size - 1;
            memcpy(versions, line + 9, kept);
            versions[kept] = '\0';
        } else {
            fputs(line, stderr); /* why the reference could not run */
        }
    }
    pclose(pipe);
}

int main(int argc, char **argv)
{
    int threads = omp_get_max_threads(), repeat = 5;
    const char *python = NULL, *script = SPART_BENCH_CLIP_REFERENCE, *markdown = NULL;
    const char *selection = "warp,r512,r2048,c512,k2048,k1024";
    for (int k = 1; k + 1 < argc; k += 2) {
        if (strcmp(argv[k], "--threads") == 0) {
            threads = atoi(argv[k + 1]);
        } else if (strcmp(argv[k], "--repeat") == 0) {
            repeat = atoi(argv[k + 1]);
        } else if (strcmp(argv[k], "--python") == 0) {
            python = argv[k + 1];
        } else if (strcmp(argv[k], "--reference") == 0) {
            script = argv[k + 1];
        } else if (strcmp(argv[k], "--case") == 0) {
            selection = argv[k + 1];
        } else if (strcmp(argv[k], "--markdown") == 0) {
            markdown = argv[k + 1];
        } else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[k]);
            return 2;
        }
    }
    repeat = repeat < 1 ? 1 : (repeat > 50 ? 50 : repeat);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: nothing to measure\n");
        return 0;
    }
    static const struct {
        const char *name, *description;
        int64_t vertices, vertices_output;
        int lattice;
    } recipes[NUM_CASES] = {
        {"warp", "README warp 66x66 onto a 33x33 lattice", 66, 33, 1},
        {"r512", "512^2 rotated 0.2 onto a 512^2 lattice", 513, 513, 1},
        {"r2048", "2048^2 rotated 0.2 onto a 2048^2 lattice", 2049, 2049, 1},
        {"c512", "512^2 lattice onto itself rotated 0.2 (curvilinear)", 513, 513, 0},
        {"k2048", "64^2 rotated 0.2 onto a 2048^2 lattice (walk)", 65, 2049, 1},
        {"k1024", "64^2 lattice onto 1024^2 rotated 0.2 (curvilinear)", 65, 1025, 0},
    };
    bench_case cases[NUM_CASES];
    memset(cases, 0, sizeof cases);
    for (int k = 0; k < NUM_CASES; k++) {
        cases[k].name = recipes[k].name;
        cases[k].description = recipes[k].description;
        cases[k].vertices = recipes[k].vertices;
        cases[k].vertices_output = recipes[k].vertices_output;
        cases[k].lattice = recipes[k].lattice;
        cases[k].selected = strstr(selection, cases[k].name) != NULL;
        cases[k].reference_ms = -1;
    }
    const double rate = copy_rate(5);
    int failed = 0;
    for (int k = 0; k < NUM_CASES; k++) {
        if (cases[k].selected) {
            run_case(&cases[k], threads, repeat);
            failed |= !cases[k].same;
        }
    }
    char versions[512] = "regridding not run";
    if (python != NULL) {
        run_reference(cases, python, script, repeat, versions, sizeof versions);
    }
    struct cudaDeviceProp properties;
    CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
    FILE *out = markdown != NULL ? bench_markdown_open(markdown, argc, argv, threads,
                                                       "best of N after a warm-up; device: CUDA "
                                                       "events around count + scan + allocation "
                                                       "+ write, grids already on the device; "
                                                       "host: wall clock")
                                 : NULL;
    FILE *streams[2] = {stdout, out};
    for (int s = 0; s < 2; s++) {
        FILE *f = streams[s];
        if (f == NULL) {
            continue;
        }
        fprintf(f, "- device: %s; copy rate %.0f GB/s; peers: %s\n\n", properties.name, rate * 1e-9,
                versions);
        fprintf(f,
                "| case | entries | spart device ms (count) | pool kept ms "
                "| floor ms | + grids' upload ms | "
                "spart host ms (%d thr) | host / device | regridding GPU ms (from host grids) | "
                "regridding / spart (/ spart + upload) | device = host |\n",
                threads);
        bench_markdown_rule(f, 11);
        for (int k = 0; k < NUM_CASES; k++) {
            const bench_case *c = &cases[k];
            if (!c->selected) {
                continue;
            }
            const double bytes =
                2.0 * 8.0 *
                    (double)(c->vertices * c->vertices +
                             (c->lattice ? 0 : c->vertices_output * c->vertices_output)) +
                24.0 * (double)c->entries;
            fprintf(f, "| %s | %lld | %.3f (%.3f) | %.3f | %.3f | %.3f | %.2f | %.1fx | ",
                    c->description, (long long)c->entries, c->device_ms, c->count_ms,
                    c->device_kept_ms, bytes / rate * 1e3, c->device_ms + c->upload_ms, c->host_ms,
                    c->host_ms / c->device_ms);
            if (c->reference_ms > 0) {
                fprintf(f, "%.3f (%lld entries) | %.1fx (%.1fx) | ", c->reference_ms,
                        (long long)c->reference_entries, c->reference_ms / c->device_ms,
                        c->reference_ms / (c->device_ms + c->upload_ms));
            } else {
                fprintf(f, "%s | - | ", c->lattice ? "not run" : "cannot (lattice only)");
            }
            fprintf(f, "%s |\n", c->same ? "yes" : "**NO**");
        }
    }
    if (out != NULL) {
        fclose(out);
    }
    return failed;
}
