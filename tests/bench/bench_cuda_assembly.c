/*
 * bench_cuda_assembly: building regridders on the GPU against building
 * them on the host, and the host time of one device product call, in one
 * program on one machine.
 *
 * The operators are CTIS forward models synthesised here: C channels x W
 * wavelengths, an N x N scene shared by the channels (input (1, W, N, N)),
 * the wavelengths summed into each channel's image (output (C, 1, M, M));
 * each element moves every scene cell by its channel's dispersion and
 * spreads it over the 2 x 2 image cells it overlaps (bilinear area
 * fractions), float32 values, int32 columns. For each operator:
 *   - assembly: spart_regridder_create on the host (all OpenMP threads)
 *     against spart_regridder_create_device (weights in host memory: their
 *     copy to the device is included), the device kernels alone (weights
 *     already on the device), and the copy alone (the same bytes from
 *     pageable host memory, from pinned memory, and staged through pinned
 *     buffers by all threads);
 *   - the exact transpose: spart_host_csr_transpose against
 *     spart_device_csr_transpose (the work of spart_regridder_transpose,
 *     into fresh matrices so that each run builds it);
 *   - the conservative transpose (after the exact one exists, so only its
 *     values): spart_regridder_transpose_conservative on both sides, grids
 *     of unit squares;
 *   - that the device built the host's arrays bit for bit, each time.
 * Each time is the best of --repeat runs (wall clock, device synchronised).
 *
 * Then the host time of one product call on the device, on a small
 * operator so that the GPU keeps up with the calls: CPU time and wall time
 * per call of spart_regridder_apply_workspace (one vector; eight), of the
 * product's launches alone (spart_cuda_csr_product), and of one
 * cudaPointerGetAttributes, over batches of 100 calls with the stream
 * synchronised between batches.
 *
 * Usage: bench_cuda_assembly [--repeat R] [--cases a,b,...] [--json FILE]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <omp.h>

#include "device/device_internal.h"
#include "operator/regridder_device.h"
#include "operator/regridder_internal.h"
#include "bench_util.h"
#include "spart.h"

#define DISPERSION 0.37 /* image cells per wavelength step */
#define MAX_REPEAT 16

static double thread_cpu_time(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- the operators ----------------------------------------------------------------------- */

typedef struct operator_spec {
    const char *name;
    int64_t channels, wavelengths, scene;
} operator_spec;

static const operator_spec SPECS[] = {
    {"b", 4, 16, 256}, /* 16.8 M weights, as case b of bench_regridder */
    {"e", 4, 35, 512}, /* 146.8 M weights: the assembly goal (145 M) */
    {"s", 1, 2, 32},   /* 8192 weights: the small operator of the per-call times */
};
#define NUM_SPECS ((int)(sizeof SPECS / sizeof SPECS[0]))

typedef struct operator_weights {
    int64_t channels, wavelengths, scene, image;
    int64_t num_elements, num_entries;
    int64_t *offsets, *indices_input, *indices_output;
    double *values;
} operator_weights;

/* Element (c, w): every scene cell (i, j) lands at (i, j) + margin +
 * displacement and spreads over the 2 x 2 image cells it overlaps. Four
 * entries per cell, so every element's offset is known in advance and the
 * elements are made in parallel. */
static void make_weights(const operator_spec *s, operator_weights *op)
{
    const double pi = 3.14159265358979323846;
    memset(op, 0, sizeof *op);
    op->channels = s->channels;
    op->wavelengths = s->wavelengths;
    op->scene = s->scene;
    int64_t margin = (int64_t)ceil(DISPERSION * 0.5 * (double)s->wavelengths) + 2;
    op->image = s->scene + 2 * margin + 2;
    op->num_elements = s->channels * s->wavelengths;
    int64_t per_element = 4 * s->scene * s->scene;
    op->num_entries = op->num_elements * per_element;
    size_t n = (size_t)op->num_entries;
    op->offsets = malloc((size_t)(op->num_elements + 1) * sizeof(int64_t));
    op->indices_input = malloc(n * sizeof(int64_t));
    op->indices_output = malloc(n * sizeof(int64_t));
    op->values = malloc(n * sizeof(double));
    if (op->offsets == NULL || op->indices_input == NULL || op->indices_output == NULL ||
        op->values == NULL) {
        fprintf(stderr, "out of host memory for %lld weights\n", (long long)op->num_entries);
        exit(1);
    }
    for (int64_t e = 0; e <= op->num_elements; e++) {
        op->offsets[e] = e * per_element;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t e = 0; e < op->num_elements; e++) {
        int64_t c = e / s->wavelengths, w = e % s->wavelengths;
        double angle = 2.0 * pi * (double)c / (double)s->channels;
        double along = DISPERSION * ((double)w - 0.5 * (double)(s->wavelengths - 1));
        double dx = along * cos(angle) + 0.25, dy = along * sin(angle) + 0.4;
        int64_t k = op->offsets[e];
        for (int64_t i = 0; i < s->scene; i++) {
            for (int64_t j = 0; j < s->scene; j++) {
                double px = (double)(i + margin) + dx, py = (double)(j + margin) + dy;
                int64_t ox = (int64_t)floor(px), oy = (int64_t)floor(py);
                double fx = px - (double)ox, fy = py - (double)oy;
                double wx[2] = {1.0 - fx, fx}, wy[2] = {1.0 - fy, fy};
                for (int a = 0; a < 2; a++) {
                    for (int b = 0; b < 2; b++) {
                        op->indices_input[k] = i * s->scene + j;
                        op->indices_output[k] = (ox + a) * op->image + (oy + b);
                        op->values[k] = wx[a] * wy[b];
                        k++;
                    }
                }
            }
        }
    }
}

static void free_weights(operator_weights *op)
{
    free(op->offsets);
    free(op->indices_input);
    free(op->indices_output);
    free(op->values);
}

static spart_shape shape4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    spart_shape shape;
    memset(&shape, 0, sizeof shape);
    shape.ndim = 4;
    shape.dims[0] = a;
    shape.dims[1] = b;
    shape.dims[2] = c;
    shape.dims[3] = d;
    return shape;
}

static spart_weights *load_weights(spart_context *context, const operator_weights *op)
{
    spart_shape orthogonal;
    memset(&orthogonal, 0, sizeof orthogonal);
    orthogonal.ndim = 2;
    orthogonal.dims[0] = op->channels;
    orthogonal.dims[1] = op->wavelengths;
    spart_shape in = shape4(op->channels, op->wavelengths, op->scene, op->scene);
    spart_shape out = shape4(op->channels, op->wavelengths, op->image, op->image);
    int axes[2] = {2, 3};
    spart_weights *weights = NULL;
    CHECK_SPART(context, spart_weights_create_from_arrays(
                             context, &orthogonal, &in, &out, 2, axes, 2, axes, op->offsets,
                             op->indices_input, op->indices_output, op->values, &weights));
    return weights;
}

static spart_regridder_options forward_options(const operator_weights *op)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = shape4(1, op->wavelengths, op->scene, op->scene);
    options.has_shape_output = 1;
    options.shape_output = shape4(op->channels, 1, op->image, op->image);
    options.value_type = SPART_FLOAT32;
    return options;
}

/* ---- comparing arrays --------------------------------------------------------------------- */

/* 1 when the device matrix holds the host matrix's arrays bit for bit. */
static int same_arrays(const spart_csr *host, const spart_csr *device)
{
    if (host->num_rows != device->num_rows || host->num_entries != device->num_entries ||
        (host->columns32 == NULL) != (device->columns32 == NULL) ||
        (host->values32 == NULL) != (device->values32 == NULL)) {
        return 0;
    }
    size_t rows = (size_t)host->num_rows + 1, n = (size_t)host->num_entries;
    size_t column_size = host->columns32 != NULL ? 4 : 8, value_size = host->values32 ? 4 : 8;
    const void *host_arrays[3] = {host->row_ptr,
                                  host->columns32 ? (void *)host->columns32 : host->columns64,
                                  host->values32 ? (void *)host->values32 : host->values64};
    const void *device_arrays[3] = {
        device->row_ptr, device->columns32 ? (void *)device->columns32 : device->columns64,
        device->values32 ? (void *)device->values32 : device->values64};
    size_t bytes[3] = {rows * 8, n * column_size, n * value_size};
    int same = 1;
    for (int a = 0; a < 3 && same; a++) {
        void *copy = malloc(bytes[a] > 0 ? bytes[a] : 1);
        CHECK_CUDA(cudaMemcpy(copy, device_arrays[a], bytes[a], cudaMemcpyDeviceToHost));
        same = memcmp(copy, host_arrays[a], bytes[a]) == 0;
        free(copy);
    }
    return same;
}

/* ---- one operator --------------------------------------------------------------------------- */

typedef struct result {
    const char *name;
    int64_t entries, rows, columns;
    double host_assembly, device_assembly, device_kernels, upload, upload_pinned, upload_staged;
    double host_transpose, device_transpose;
    double host_conservative, device_conservative;
    int same_assembly, same_kernels, same_transpose, same_conservative;
} result;

/* The time of copying the weights' arrays (indices and values, 24 bytes an
 * entry) from pageable host memory, and from pinned memory. */
static void time_upload(const operator_weights *op, int repeat, double *pageable, double *pinned)
{
    size_t bytes = (size_t)op->num_entries * sizeof(int64_t);
    void *device = NULL, *staging = NULL;
    CHECK_CUDA(cudaMalloc(&device, bytes));
    CHECK_CUDA(cudaMallocHost(&staging, bytes));
    memcpy(staging, op->values, bytes);
    double times[MAX_REPEAT], times_pinned[MAX_REPEAT];
    const void *arrays[3] = {op->indices_input, op->indices_output, op->values};
    for (int run = 0; run < repeat; run++) {
        double start = bench_seconds();
        for (int a = 0; a < 3; a++) {
            CHECK_CUDA(cudaMemcpy(device, arrays[a], bytes, cudaMemcpyHostToDevice));
        }
        times[run] = bench_seconds() - start;
        start = bench_seconds();
        for (int a = 0; a < 3; a++) {
            CHECK_CUDA(cudaMemcpy(device, staging, bytes, cudaMemcpyHostToDevice));
        }
        times_pinned[run] = bench_seconds() - start;
    }
    *pageable = bench_least(times, repeat);
    *pinned = bench_least(times_pinned, repeat);
    CHECK_CUDA(cudaFree(device));
    CHECK_CUDA(cudaFreeHost(staging));
}

/* An experiment for the library's copy of the weights: the same three
 * arrays staged through two pinned buffers of `stage` bytes, filled by all
 * OpenMP threads while the other buffer's copy to the device runs. */
static double time_staged_upload(const operator_weights *op, size_t stage, int repeat)
{
    size_t bytes = (size_t)op->num_entries * sizeof(int64_t);
    void *device = NULL, *buffers[2] = {NULL, NULL};
    cudaEvent_t done[2];
    CHECK_CUDA(cudaMalloc(&device, bytes));
    double start = bench_seconds();
    for (int b = 0; b < 2; b++) {
        CHECK_CUDA(cudaMallocHost(&buffers[b], stage));
        CHECK_CUDA(cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
    }
    double allocation = bench_seconds() - start;
    const char *arrays[3] = {(const char *)op->indices_input, (const char *)op->indices_output,
                             (const char *)op->values};
    double times[MAX_REPEAT];
    for (int run = 0; run < repeat; run++) {
        start = bench_seconds();
        int which = 0;
        for (int a = 0; a < 3; a++) {
            for (size_t offset = 0; offset < bytes; offset += stage, which ^= 1) {
                size_t length = bytes - offset < stage ? bytes - offset : stage;
                CHECK_CUDA(cudaEventSynchronize(done[which]));
                char *to = buffers[which];
                const char *from = arrays[a] + offset;
                int64_t pieces = 64;
#pragma omp parallel for schedule(static)
                for (int64_t piece = 0; piece < pieces; piece++) {
                    size_t begin = length * (size_t)piece / (size_t)pieces;
                    size_t end = length * (size_t)(piece + 1) / (size_t)pieces;
                    memcpy(to + begin, from + begin, end - begin);
                }
                CHECK_CUDA(cudaMemcpyAsync((char *)device + offset, to, length,
                                           cudaMemcpyHostToDevice, 0));
                CHECK_CUDA(cudaEventRecord(done[which], 0));
            }
        }
        CHECK_CUDA(cudaDeviceSynchronize());
        times[run] = bench_seconds() - start;
    }
    for (int b = 0; b < 2; b++) {
        CHECK_CUDA(cudaFreeHost(buffers[b]));
        CHECK_CUDA(cudaEventDestroy(done[b]));
    }
    CHECK_CUDA(cudaFree(device));
    printf("  staged copy of the weights through 2 x %zu MiB pinned buffers: %.4f s (their "
           "allocation %.4f s)\n",
           stage >> 20, bench_least(times, repeat), allocation);
    return bench_least(times, repeat);
}

/* The assembly's device work alone, the weights already in device memory
 * (as they would be for weights made on the device): the sort of the rows
 * and the placement (spart_cuda_assemble_sort, spart_cuda_assemble_place),
 * timed by CUDA events, scratch allocated beforehand. The row and column
 * of element (c, w)'s entries: c * M^2 + image cell, w * N^2 + scene cell.
 * *same: the arrays equal the host regridder's. */
static double time_device_kernels(const operator_weights *op, const spart_regridder *host,
                                  int repeat, int *same)
{
    int64_t e_count = op->num_elements, n = op->num_entries;
    int64_t *row_offset = malloc((size_t)e_count * sizeof(int64_t));
    int64_t *column_offset = malloc((size_t)e_count * sizeof(int64_t));
    for (int64_t e = 0; e < e_count; e++) {
        row_offset[e] = (e / op->wavelengths) * op->image * op->image;
        column_offset[e] = (e % op->wavelengths) * op->scene * op->scene;
    }
    const void *host_arrays[5] = {op->offsets, op->indices_input, op->indices_output, op->values,
                                  row_offset};
    size_t counts[5] = {(size_t)e_count + 1, (size_t)n, (size_t)n, (size_t)n, (size_t)e_count};
    void *device_arrays[6];
    for (int a = 0; a < 5; a++) {
        CHECK_CUDA(cudaMalloc(&device_arrays[a], counts[a] * 8));
        CHECK_CUDA(
            cudaMemcpy(device_arrays[a], host_arrays[a], counts[a] * 8, cudaMemcpyHostToDevice));
    }
    CHECK_CUDA(cudaMalloc(&device_arrays[5], (size_t)e_count * 8));
    CHECK_CUDA(
        cudaMemcpy(device_arrays[5], column_offset, (size_t)e_count * 8, cudaMemcpyHostToDevice));
    spart_device_assembly_source source;
    memset(&source, 0, sizeof source);
    source.num_elements = e_count;
    source.num_entries = n;
    source.offsets = device_arrays[0];
    source.indices_input = device_arrays[1];
    source.indices_output = device_arrays[2];
    source.values = device_arrays[3];
    source.row_offset = device_arrays[4];
    source.column_offset = device_arrays[5];
    source.row_lookup_stride = 1;
    source.column_lookup_stride = 1;
    int64_t rows = host->csr.num_rows;
    spart_device_sort sort;
    CHECK_CUDA((cudaError_t)spart_cuda_sort_plan(n, rows, 0, &sort));
    CHECK_CUDA(cudaMalloc(&sort.workspace, sort.workspace_bytes));
    spart_csr made;
    memset(&made, 0, sizeof made);
    made.num_rows = rows;
    made.num_columns = host->csr.num_columns;
    made.num_entries = n;
    CHECK_CUDA(cudaMalloc((void **)&made.row_ptr, (size_t)(rows + 1) * 8));
    CHECK_CUDA(cudaMalloc((void **)&made.columns32, (size_t)n * 4));
    CHECK_CUDA(cudaMalloc((void **)&made.values32, (size_t)n * 4));
    spart_device_csr_arrays arrays = {made.row_ptr, made.columns32, NULL, NULL, made.values32};
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    double times[MAX_REPEAT];
    for (int run = -1; run < repeat; run++) {
        CHECK_CUDA(cudaEventRecord(start, 0));
        CHECK_CUDA((cudaError_t)spart_cuda_assemble_sort(&source, rows, &sort, made.row_ptr, NULL));
        CHECK_CUDA((cudaError_t)spart_cuda_assemble_place(&source, &sort, n, &arrays, NULL));
        CHECK_CUDA(cudaEventRecord(stop, 0));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (run >= 0) {
            times[run] = 1e-3 * (double)ms;
        }
    }
    *same = same_arrays(&host->csr, &made);
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    for (int a = 0; a < 6; a++) {
        CHECK_CUDA(cudaFree(device_arrays[a]));
    }
    CHECK_CUDA(cudaFree(sort.workspace));
    CHECK_CUDA(cudaFree(made.row_ptr));
    CHECK_CUDA(cudaFree(made.columns32));
    CHECK_CUDA(cudaFree(made.values32));
    free(row_offset);
    free(column_offset);
    return bench_least(times, repeat);
}

static void time_assembly(spart_context *context, const spart_weights *weights,
                          const spart_regridder_options *options, int repeat, result *r,
                          spart_regridder **host, spart_regridder **device)
{
    double times[MAX_REPEAT], times_device[MAX_REPEAT];
    r->same_assembly = 1;
    for (int run = 0; run < repeat; run++) {
        spart_regridder *made = NULL, *made_device = NULL;
        double start = bench_seconds();
        CHECK_SPART(context, spart_regridder_create(context, weights, options, &made));
        times[run] = bench_seconds() - start;
        start = bench_seconds();
        CHECK_SPART(context,
                    spart_regridder_create_device(context, weights, options, &made_device));
        CHECK_CUDA(cudaDeviceSynchronize());
        times_device[run] = bench_seconds() - start;
        r->same_assembly &= same_arrays(&made->csr, &made_device->csr);
        if (run + 1 < repeat) {
            spart_regridder_free(made);
            spart_regridder_free(made_device);
        } else {
            *host = made;
            *device = made_device;
        }
    }
    r->host_assembly = bench_least(times, repeat);
    r->device_assembly = bench_least(times_device, repeat);
}

static void time_transpose(spart_context *context, const spart_regridder *host,
                           const spart_regridder *device, int repeat, result *r)
{
    double times[MAX_REPEAT], times_device[MAX_REPEAT];
    r->same_transpose = 1;
    int threads = omp_get_max_threads();
    for (int run = 0; run < repeat; run++) {
        spart_csr transposed;
        double start = bench_seconds();
        CHECK_SPART(context, spart_host_csr_transpose(&context->allocator, &host->csr, threads,
                                                      &transposed));
        times[run] = bench_seconds() - start;
        spart_regridder *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
        made->allocator = context->allocator;
        made->owns_arrays = 1;
        start = bench_seconds();
        CHECK_SPART(context, spart_device_csr_transpose(context, device, 0, made));
        times_device[run] = bench_seconds() - start;
        r->same_transpose &= same_arrays(&transposed, &made->csr);
        spart_csr_release(&context->allocator, &transposed);
        spart_regridder_free(made);
    }
    r->host_transpose = bench_least(times, repeat);
    r->device_transpose = bench_least(times_device, repeat);
}

/* Unit-square grids of the operator's scene and image, x and y. */
typedef struct grids {
    double *scene_x, *scene_y, *image_x, *image_y;
    spart_array input[2], output[2];
} grids;

static void make_grids(const operator_weights *op, grids *g)
{
    int64_t n = op->scene + 1, m = op->image + 1;
    g->scene_x = malloc((size_t)(n * n) * sizeof(double));
    g->scene_y = malloc((size_t)(n * n) * sizeof(double));
    g->image_x = malloc((size_t)(m * m) * sizeof(double));
    g->image_y = malloc((size_t)(m * m) * sizeof(double));
    for (int64_t i = 0; i < n * n; i++) {
        g->scene_x[i] = (double)(i / n);
        g->scene_y[i] = (double)(i % n);
    }
    for (int64_t i = 0; i < m * m; i++) {
        g->image_x[i] = (double)(i / m);
        g->image_y[i] = (double)(i % m);
    }
    spart_shape scene = {2, {n, n}}, image = {2, {m, m}};
    g->input[0] = (spart_array){g->scene_x, scene};
    g->input[1] = (spart_array){g->scene_y, scene};
    g->output[0] = (spart_array){g->image_x, image};
    g->output[1] = (spart_array){g->image_y, image};
}

static void free_grids(grids *g)
{
    free(g->scene_x);
    free(g->scene_y);
    free(g->image_x);
    free(g->image_y);
}

static void time_conservative(spart_context *context, const operator_weights *op,
                              spart_regridder *host, spart_regridder *device, int repeat, result *r)
{
    grids g;
    make_grids(op, &g);
    spart_regridder *exact = NULL, *conservative = NULL, *conservative_device = NULL;
    CHECK_SPART(context, spart_regridder_transpose(context, host, &exact));
    CHECK_SPART(context, spart_regridder_transpose(context, device, &exact));
    double times[MAX_REPEAT], times_device[MAX_REPEAT];
    for (int run = 0; run < repeat; run++) {
        double start = bench_seconds();
        CHECK_SPART(context, spart_regridder_transpose_conservative(context, host, 2, g.input,
                                                                    g.output, NULL, &conservative));
        times[run] = bench_seconds() - start;
        start = bench_seconds();
        CHECK_SPART(context,
                    spart_regridder_transpose_conservative(context, device, 2, g.input, g.output,
                                                           NULL, &conservative_device));
        times_device[run] = bench_seconds() - start;
    }
    r->same_conservative = same_arrays(&conservative->csr, &conservative_device->csr);
    r->host_conservative = bench_least(times, repeat);
    r->device_conservative = bench_least(times_device, repeat);
    free_grids(&g);
}

static void run_case(spart_context *context, const operator_spec *s, int repeat, result *r)
{
    operator_weights op;
    make_weights(s, &op);
    spart_weights *weights = load_weights(context, &op);
    spart_regridder_options options = forward_options(&op);
    memset(r, 0, sizeof *r);
    r->name = s->name;
    r->entries = op.num_entries;
    time_upload(&op, repeat, &r->upload, &r->upload_pinned);
    r->upload_staged = time_staged_upload(&op, (size_t)32 << 20, repeat);
    (void)time_staged_upload(&op, (size_t)8 << 20, repeat);
    spart_regridder *host = NULL, *device = NULL;
    time_assembly(context, weights, &options, repeat, r, &host, &device);
    r->rows = host->csr.num_rows;
    r->columns = host->csr.num_columns;
    r->device_kernels = time_device_kernels(&op, host, repeat, &r->same_kernels);
    time_transpose(context, host, device, repeat, r);
    time_conservative(context, &op, host, device, repeat, r);
    spart_regridder_free(device);
    spart_regridder_free(host);
    spart_weights_free(weights);
    free_weights(&op);
}

/* ---- host time per product call -----------------------------------------------------------------
 */

typedef struct call_times {
    double apply_1_cpu, apply_1_wall, apply_8_cpu, apply_8_wall;
    double launch_cpu, launch_wall, attributes_cpu, attributes_wall;
} call_times;

enum { BATCHES = 50, CALLS = 100 };

/* CPU and wall seconds per call of `what` (0: apply one vector, 1: apply
 * eight, 2: the product's launches alone, 3: cudaPointerGetAttributes). */
static void time_calls(spart_context *context, const spart_regridder *device, int what,
                       const double *x, double *y, void *workspace, size_t bytes, double *cpu,
                       double *wall)
{
    spart_shape one = spart_regridder_shape_input(device);
    spart_shape eight = one;
    memmove(eight.dims + 1, eight.dims, (size_t)eight.ndim * sizeof(int64_t));
    eight.dims[0] = 8;
    eight.ndim++;
    spart_array x1 = {x, one}, x8 = {x, eight};
    int64_t n_y = spart_shape_size(&device->output.shape);
    spart_device_csr matrix;
    memset(&matrix, 0, sizeof matrix);
    matrix.num_rows = device->csr.num_rows;
    matrix.num_columns = device->csr.num_columns;
    matrix.num_entries = device->csr.num_entries;
    matrix.row_ptr = device->csr.row_ptr;
    matrix.columns32 = device->csr.columns32;
    matrix.values32 = device->csr.values32;
    matrix.values64 = device->csr.values64;
    matrix.group_size = device->plan.group_size;
    matrix.chunk_length = device->plan.chunk_length;
    double cpu_total = 0.0, wall_total = 0.0;
    for (int batch = -1; batch < BATCHES; batch++) {
        double cpu_start = thread_cpu_time(), wall_start = bench_seconds();
        for (int call = 0; call < CALLS; call++) {
            if (what == 0) {
                CHECK_SPART(context, spart_regridder_apply_workspace(context, device, &x1, y, n_y,
                                                                     workspace, bytes));
            } else if (what == 1) {
                CHECK_SPART(context, spart_regridder_apply_workspace(context, device, &x8, y,
                                                                     8 * n_y, workspace, bytes));
            } else if (what == 2) {
                CHECK_CUDA((cudaError_t)spart_cuda_csr_product(&matrix, x, 1, y, NULL, NULL));
            } else {
                struct cudaPointerAttributes attributes;
                CHECK_CUDA(cudaPointerGetAttributes(&attributes, x));
            }
        }
        double cpu_end = thread_cpu_time(), wall_end = bench_seconds();
        CHECK_CUDA(cudaDeviceSynchronize());
        if (batch >= 0) { /* batch -1 warms up */
            cpu_total += cpu_end - cpu_start;
            wall_total += wall_end - wall_start;
        }
    }
    *cpu = cpu_total / (BATCHES * CALLS);
    *wall = wall_total / (BATCHES * CALLS);
}

static void time_product_calls(spart_context *context, call_times *t)
{
    operator_weights op;
    make_weights(&SPECS[NUM_SPECS - 1], &op);
    spart_weights *weights = load_weights(context, &op);
    spart_regridder_options options = forward_options(&op);
    spart_regridder *device = NULL;
    CHECK_SPART(context, spart_regridder_create_device(context, weights, &options, &device));
    int64_t n_x = 8 * spart_shape_size(&device->input.shape);
    int64_t n_y = 8 * spart_shape_size(&device->output.shape);
    double *x = NULL, *y = NULL;
    CHECK_CUDA(cudaMalloc((void **)&x, (size_t)n_x * sizeof(double)));
    CHECK_CUDA(cudaMalloc((void **)&y, (size_t)n_y * sizeof(double)));
    CHECK_CUDA(cudaMemset(x, 0, (size_t)n_x * sizeof(double)));
    spart_shape eight = spart_regridder_shape_input(device);
    memmove(eight.dims + 1, eight.dims, (size_t)eight.ndim * sizeof(int64_t));
    eight.dims[0] = 8;
    eight.ndim++;
    size_t bytes = 0;
    CHECK_SPART(context, spart_regridder_workspace_size(context, device, &eight, &bytes));
    void *workspace = NULL;
    CHECK_CUDA(cudaMalloc(&workspace, bytes > 0 ? bytes : 1));
    time_calls(context, device, 0, x, y, workspace, bytes, &t->apply_1_cpu, &t->apply_1_wall);
    time_calls(context, device, 1, x, y, workspace, bytes, &t->apply_8_cpu, &t->apply_8_wall);
    time_calls(context, device, 2, x, y, workspace, bytes, &t->launch_cpu, &t->launch_wall);
    time_calls(context, device, 3, x, y, workspace, bytes, &t->attributes_cpu, &t->attributes_wall);
    CHECK_CUDA(cudaFree(workspace));
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
    spart_regridder_free(device);
    spart_weights_free(weights);
    free_weights(&op);
}

/* ---- the report -------------------------------------------------------------------------------
 */

static void print_results(const result *results, int count, const call_times *t)
{
    printf("\n| case | weights | rows | host assembly s | device assembly s | x faster | device "
           "kernels alone s | copy of the weights s (pageable / pinned / staged) | host "
           "transpose s | device transpose s | x faster | host conservative s | device "
           "conservative s | x faster | same arrays |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int k = 0; k < count; k++) {
        const result *r = &results[k];
        printf("| %s | %.1f M | %lld | %.4f | %.4f | %.1fx | %.4f | %.4f / %.4f / %.4f | %.4f | "
               "%.4f | %.1fx | %.4f | %.4f | %.1fx | %s |\n",
               r->name, (double)r->entries * 1e-6, (long long)r->rows, r->host_assembly,
               r->device_assembly, r->host_assembly / r->device_assembly, r->device_kernels,
               r->upload, r->upload_pinned, r->upload_staged, r->host_transpose,
               r->device_transpose, r->host_transpose / r->device_transpose, r->host_conservative,
               r->device_conservative, r->host_conservative / r->device_conservative,
               r->same_assembly && r->same_kernels && r->same_transpose && r->same_conservative
                   ? "yes"
                   : "NO");
    }
    printf("\nHost time per call (8192-weight operator, batches of %d calls, CPU / wall "
           "microseconds):\n",
           CALLS);
    printf("| call | CPU us | wall us |\n|---|---:|---:|\n");
    printf("| spart_regridder_apply_workspace, one vector | %.2f | %.2f |\n", t->apply_1_cpu * 1e6,
           t->apply_1_wall * 1e6);
    printf("| spart_regridder_apply_workspace, eight vectors | %.2f | %.2f |\n",
           t->apply_8_cpu * 1e6, t->apply_8_wall * 1e6);
    printf("| spart_cuda_csr_product alone (the launch) | %.2f | %.2f |\n", t->launch_cpu * 1e6,
           t->launch_wall * 1e6);
    printf("| cudaPointerGetAttributes | %.2f | %.2f |\n", t->attributes_cpu * 1e6,
           t->attributes_wall * 1e6);
    printf("goal: under 10 us of CPU time per call: %s\n",
           t->apply_1_cpu < 10e-6 ? "met" : "NOT met");
}

static void write_json(const char *path, const result *results, int count, const call_times *t)
{
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        fprintf(stderr, "cannot write %s\n", path);
        return;
    }
    fprintf(file, "{\"cases\": [");
    for (int k = 0; k < count; k++) {
        const result *r = &results[k];
        fprintf(file,
                "%s{\"name\": \"%s\", \"weights\": %lld, \"rows\": %lld, \"columns\": %lld, "
                "\"host_assembly_s\": %.6g, \"device_assembly_s\": %.6g, "
                "\"device_kernels_s\": %.6g, \"upload_s\": %.6g, "
                "\"upload_pinned_s\": %.6g, \"upload_staged_s\": %.6g, \"host_transpose_s\": "
                "%.6g, \"device_transpose_s\": %.6g, \"host_conservative_s\": %.6g, "
                "\"device_conservative_s\": %.6g, \"same_arrays\": %s}",
                k > 0 ? ", " : "", r->name, (long long)r->entries, (long long)r->rows,
                (long long)r->columns, r->host_assembly, r->device_assembly, r->device_kernels,
                r->upload, r->upload_pinned, r->upload_staged, r->host_transpose,
                r->device_transpose, r->host_conservative, r->device_conservative,
                r->same_assembly && r->same_kernels && r->same_transpose && r->same_conservative
                    ? "true"
                    : "false");
    }
    fprintf(file,
            "], \"call_us\": {\"apply_1_cpu\": %.4g, \"apply_1_wall\": %.4g, \"apply_8_cpu\": "
            "%.4g, \"apply_8_wall\": %.4g, \"launch_cpu\": %.4g, \"launch_wall\": %.4g, "
            "\"attributes_cpu\": %.4g, \"attributes_wall\": %.4g}}\n",
            t->apply_1_cpu * 1e6, t->apply_1_wall * 1e6, t->apply_8_cpu * 1e6,
            t->apply_8_wall * 1e6, t->launch_cpu * 1e6, t->launch_wall * 1e6,
            t->attributes_cpu * 1e6, t->attributes_wall * 1e6);
    fclose(file);
}

int main(int argc, char **argv)
{
    int repeat = 3;
    const char *cases = "b,e";
    const char *json = NULL;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--repeat") == 0) {
            repeat = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--cases") == 0) {
            cases = argv[a + 1];
        } else if (strcmp(argv[a], "--json") == 0) {
            json = argv[a + 1];
        }
    }
    if (repeat < 1 || repeat > MAX_REPEAT) {
        repeat = 3;
    }
    spart_context *context = NULL;
    CHECK_SPART(context, spart_context_create(&context));
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    struct cudaDeviceProp properties;
    CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
    printf("device: %s; host: %d OpenMP threads; best of %d runs\n", properties.name,
           omp_get_max_threads(), repeat);
    result results[NUM_SPECS];
    int count = 0;
    for (int k = 0; k < NUM_SPECS - 1; k++) {
        if (strstr(cases, SPECS[k].name) == NULL) {
            continue;
        }
        run_case(context, &SPECS[k], repeat, &results[count]);
        const result *r = &results[count++];
        printf("case %s: %.1f M weights, %lld rows: assembly host %.4f s, device %.4f s "
               "(kernels alone %.4f s); transpose host %.4f s, device %.4f s; conservative host "
               "%.4f s, device %.4f s\n",
               r->name, (double)r->entries * 1e-6, (long long)r->rows, r->host_assembly,
               r->device_assembly, r->device_kernels, r->host_transpose, r->device_transpose,
               r->host_conservative, r->device_conservative);
        fflush(stdout);
    }
    call_times t;
    time_product_calls(context, &t);
    print_results(results, count, &t);
    if (json != NULL) {
        write_json(json, results, count, &t);
    }
    spart_context_free(context);
    int same = 1;
    for (int k = 0; k < count; k++) {
        same &=
            results[k].same_assembly && results[k].same_transpose && results[k].same_conservative;
    }
    return same ? 0 : 1;
}
