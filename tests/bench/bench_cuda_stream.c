/*
 * bench_cuda_stream: the streamed device assembly (spart_regridder_create_
 * streamed, on_device = 1) against the in-memory device assembly
 * (spart_regridder_create_device) and the host-to-device copy rate, on one
 * large CTIS-like forward operator, in one program on one GPU.
 *
 * The operator (tests/bench/bench_dispersed_operator.h, shared with
 * bench_esis_stream): 4 channels x 24 wavelengths, an N x N scene
 * dispersed onto each channel's image, 4 C W N^2 entries, N chosen for
 * --entries. float32 values, int32 columns.
 *
 * Runs, each once (wall clock, device synchronised), device memory sampled
 * every millisecond by a second thread (cudaMemGetInfo: the most taken
 * during the call, against the free memory before it):
 *   - copy: 1 GiB from pinned and from pageable host memory to the device;
 *   - in memory: spart_regridder_create_device from the weights in host
 *     memory (copy included);
 *   - streamed, host blocks: the same weights' arrays as blocks of
 *     --block entries (pointers into them, no copy), with the budget that
 *     spart_regridder_stream_bytes gives for them;
 *   - streamed, generated blocks: each block computed by the block function
 *     into its own buffers when asked (twice per block), as a builder on
 *     the fly would;
 *   - streamed, device blocks: the weights copied to the device first
 *     (not timed), blocks yielded in place (blocks_on_device): the kernels
 *     without the copies;
 *   - on the host (up to --host-limit entries, default 3e8):
 *     spart_regridder_create with every thread, and the streamed host
 *     assembly (one thread walks the blocks) with its budget.
 * Each streamed matrix is compared with the in-memory one bit for bit.
 * GB/s counts the weights' 24 bytes an entry; the floors are the bytes
 * that must cross to the device at the pinned copy rate: 24 an entry in
 * memory, 40 streamed (16 in the counting pass, 24 in the placing pass).
 *
 * Usage: bench_cuda_stream [--entries E] [--block B] [--host-limit E]
 *                          [--quick] [--markdown FILE]
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <omp.h>

#include "bench_dispersed_operator.h"
#include "bench_util.h"
#include "core/internal.h"
#include "spart.h"
#include "weights/weights_internal.h"

/* ---- the block functions ------------------------------------------------------------------ */

typedef struct blocks {
    const dispersed_operator *g;
    int64_t block_entries;
    const int64_t *in, *out; /* the whole arrays (host or device), or NULL: generate */
    const double *values;
    int64_t *buffer_in, *buffer_out; /* generated blocks */
    double *buffer_values;
    int64_t offsets[DISPERSED_CHANNELS * DISPERSED_WAVELENGTHS + 1];
} blocks;

static spart_status block_function(void *user_data, int64_t block, int pass,
                                   spart_weights_block *result)
{
    (void)pass;
    blocks *b = user_data;
    int64_t end = 0;
    const int64_t begin =
        dispersed_operator_block(b->g, b->block_entries, block, b->offsets, result, &end);
    if (b->in != NULL) {
        result->indices_input = b->in + begin;
        result->indices_output = b->out + begin;
        result->values = b->values + begin;
    } else {
        dispersed_operator_generate(b->g, begin, end, b->buffer_in, b->buffer_out,
                                    b->buffer_values);
        result->indices_input = b->buffer_in;
        result->indices_output = b->buffer_out;
        result->values = b->buffer_values;
    }
    return SPART_OK;
}

/* ---- device memory sampled by a second thread ---------------------------------------------- */

typedef struct sampler {
    pthread_t thread;
    volatile int running;
    size_t free_before, least_free;
} sampler;

static void *sample(void *argument)
{
    sampler *s = argument;
    CHECK_CUDA(cudaSetDevice(0));
    while (s->running) {
        size_t free_bytes = 0, total = 0;
        if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes < s->least_free) {
            s->least_free = free_bytes;
        }
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void sampler_start(sampler *s)
{
    size_t total = 0;
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemGetInfo(&s->free_before, &total));
    s->least_free = s->free_before;
    s->running = 1;
    pthread_create(&s->thread, NULL, sample, s);
}

/* The most device memory taken since sampler_start. */
static size_t sampler_stop(sampler *s)
{
    CHECK_CUDA(cudaDeviceSynchronize());
    s->running = 0;
    pthread_join(s->thread, NULL);
    return s->free_before - s->least_free;
}

/* ---- comparing two device matrices --------------------------------------------------------- */

static int same_device_bytes(const void *a, const void *b, size_t bytes, char *x, char *y,
                             size_t chunk)
{
    for (size_t at = 0; at < bytes; at += chunk) {
        size_t n = bytes - at < chunk ? bytes - at : chunk;
        CHECK_CUDA(cudaMemcpy(x, (const char *)a + at, n, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(y, (const char *)b + at, n, cudaMemcpyDeviceToHost));
        if (memcmp(x, y, n) != 0) {
            return 0;
        }
    }
    return 1;
}

static int same_matrix(const spart_regridder *a, const spart_regridder *b)
{
    if (spart_regridder_num_entries(a) != spart_regridder_num_entries(b) ||
        spart_regridder_num_rows(a) != spart_regridder_num_rows(b) ||
        spart_regridder_group_size(a) != spart_regridder_group_size(b)) {
        return 0;
    }
    const int64_t *row_a, *row_b, *wide;
    const int32_t *col_a, *col_b;
    const void *val_a, *val_b;
    if (spart_regridder_csr(a, &row_a, &col_a, &wide, &val_a) != SPART_OK ||
        spart_regridder_csr(b, &row_b, &col_b, &wide, &val_b) != SPART_OK) {
        return 0;
    }
    size_t chunk = (size_t)256 << 20, n = (size_t)spart_regridder_num_entries(a);
    char *x = malloc(chunk), *y = malloc(chunk);
    int same = same_device_bytes(row_a, row_b, ((size_t)spart_regridder_num_rows(a) + 1) * 8, x, y,
                                 chunk) &&
               same_device_bytes(col_a, col_b, n * 4, x, y, chunk) &&
               same_device_bytes(val_a, val_b, n * 4, x, y, chunk);
    free(x);
    free(y);
    return same;
}

/* ---- the runs ----------------------------------------------------------------------------------
 */

typedef struct run {
    const char *name;
    double seconds;
    size_t taken, budget, counted;
    int same;
    double floor_bytes; /* bytes that must cross to the device */
} run;

/* The pinned and pageable host-to-device copy rates (bytes a second), best of 3. */
static void copy_rates(double *pinned_rate, double *pageable_rate)
{
    size_t bytes = (size_t)1 << 30;
    void *device = NULL, *pinned = NULL;
    char *pageable = malloc(bytes);
    CHECK_CUDA(cudaMalloc(&device, bytes));
    CHECK_CUDA(cudaMallocHost(&pinned, bytes));
    memset(pinned, 1, bytes);
    memset(pageable, 1, bytes);
    double best_pinned = 1e30, best_pageable = 1e30;
    for (int r = 0; r < 3; r++) {
        double t = bench_seconds();
        CHECK_CUDA(cudaMemcpy(device, pinned, bytes, cudaMemcpyHostToDevice));
        best_pinned = bench_smaller(best_pinned, bench_seconds() - t);
        t = bench_seconds();
        CHECK_CUDA(cudaMemcpy(device, pageable, bytes, cudaMemcpyHostToDevice));
        best_pageable = bench_smaller(best_pageable, bench_seconds() - t);
    }
    *pinned_rate = (double)bytes / best_pinned;
    *pageable_rate = (double)bytes / best_pageable;
    CHECK_CUDA(cudaFree(device));
    CHECK_CUDA(cudaFreeHost(pinned));
    free(pageable);
}

/* A streamed assembly of `b`'s blocks with the budget the query gives. */
static spart_regridder *streamed(spart_context *context, spart_weights_stream *stream,
                                 const spart_regridder_options *options, blocks *b,
                                 const spart_regridder *reference, run *result)
{
    stream->user_data = b;
    CHECK_SPART(context, spart_regridder_stream_bytes(context, stream, options, 1,
                                                      b->g->num_entries, &result->budget));
    sampler s;
    sampler_start(&s);
    double t = bench_seconds();
    spart_regridder *made = NULL;
    spart_stream_report report;
    CHECK_SPART(context, spart_regridder_create_streamed(context, stream, options, 1,
                                                         result->budget, &made, &report));
    result->seconds = bench_seconds() - t;
    result->taken = sampler_stop(&s);
    result->counted = report.peak_bytes;
    result->same = same_matrix(made, reference);
    return made;
}

/* Two host regridders' CSR arrays are the same bits. */
static int same_host_matrix(const spart_regridder *a, const spart_regridder *b)
{
    const int64_t *row_a, *row_b, *wide;
    const int32_t *col_a, *col_b;
    const void *val_a, *val_b;
    size_t n = (size_t)spart_regridder_num_entries(a);
    if (spart_regridder_num_entries(b) != (int64_t)n ||
        spart_regridder_csr(a, &row_a, &col_a, &wide, &val_a) != SPART_OK ||
        spart_regridder_csr(b, &row_b, &col_b, &wide, &val_b) != SPART_OK) {
        return 0;
    }
    size_t rows = (size_t)spart_regridder_num_rows(a) + 1;
    return memcmp(row_a, row_b, rows * 8) == 0 && memcmp(col_a, col_b, n * 4) == 0 &&
           memcmp(val_a, val_b, n * 4) == 0;
}

/* The host's assemblies of the same weights: in memory with every thread,
 * and streamed (one thread walks the blocks), with the budget's count. */
static void host_runs(spart_context *context, const spart_weights *weights,
                      spart_weights_stream *stream, const spart_regridder_options *options,
                      blocks *host_blocks, run *in_memory, run *from_stream)
{
    double t = bench_seconds();
    spart_regridder *reference = NULL;
    CHECK_SPART(context, spart_regridder_create(context, weights, options, &reference));
    *in_memory = (run){"host, in memory (create)", bench_seconds() - t, 0, 0, 0, -1, 0};
    stream->user_data = host_blocks;
    stream->blocks_on_device = 0;
    size_t budget = 0;
    CHECK_SPART(context, spart_regridder_stream_bytes(context, stream, options, 0,
                                                      spart_weights_num_entries(weights), &budget));
    t = bench_seconds();
    spart_regridder *made = NULL;
    spart_stream_report report;
    CHECK_SPART(context, spart_regridder_create_streamed(context, stream, options, 0, budget, &made,
                                                         &report));
    *from_stream = (run){"host, streamed",
                         bench_seconds() - t,
                         0,
                         budget,
                         report.peak_bytes,
                         same_host_matrix(made, reference),
                         0};
    spart_regridder_free(made);
    spart_regridder_free(reference);
}

static void print_run(FILE *out, const run *r, int64_t entries, double pinned_rate)
{
    double weights_bytes = 24.0 * (double)entries;
    double rate = weights_bytes / r->seconds;
    double floor = r->floor_bytes / pinned_rate;
    int device = strncmp(r->name, "host", 4) != 0;
    char budget[32] = "-", counted[32] = "-", fraction[32] = "-", of_floor[32] = "-",
         taken[32] = "-";
    if (r->budget > 0) {
        snprintf(budget, sizeof budget, "%.2f", (double)r->budget / 1e9);
        snprintf(counted, sizeof counted, "%.2f", (double)r->counted / 1e9);
    }
    if (device) {
        snprintf(fraction, sizeof fraction, "%.2f", rate / pinned_rate);
        snprintf(taken, sizeof taken, "%.2f", (double)r->taken / 1e9);
    }
    if (floor > 0) {
        snprintf(of_floor, sizeof of_floor, "%.2f", floor / r->seconds);
    }
    fprintf(out, "| %s | %.3f | %.1f | %s | %s | %s | %s | %s | %s |\n", r->name, r->seconds,
            rate / 1e9, fraction, of_floor, taken, budget, counted,
            r->same < 0 ? "-" : (r->same ? "yes" : "NO"));
}

int main(int argc, char **argv)
{
    int64_t entries = 1000000000, block_entries = (int64_t)1 << 26, host_limit = 300000000;
    const char *markdown = NULL;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--entries") == 0 && k + 1 < argc) {
            entries = (int64_t)atof(argv[++k]);
        } else if (strcmp(argv[k], "--block") == 0 && k + 1 < argc) {
            block_entries = (int64_t)atof(argv[++k]);
        } else if (strcmp(argv[k], "--host-limit") == 0 && k + 1 < argc) {
            host_limit = (int64_t)atof(argv[++k]);
        } else if (strcmp(argv[k], "--quick") == 0) {
            entries = 20000000;
            block_entries = (int64_t)1 << 22;
        } else if (strcmp(argv[k], "--markdown") == 0 && k + 1 < argc) {
            markdown = argv[++k];
        } else {
            fprintf(stderr,
                    "usage: %s [--entries E] [--block B] [--host-limit E] [--quick] "
                    "[--markdown FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    CHECK_CUDA(cudaSetDevice(0));
    spart_context *context = NULL;
    CHECK_SPART(context, spart_context_create(&context));
    CHECK_SPART(context, spart_context_set_cuda_device(context, 0));
    dispersed_operator g = dispersed_operator_make(entries);
    spart_weights_stream stream;
    spart_regridder_options options;
    dispersed_operator_stream(&g, &stream, &options);
    stream.num_blocks = (g.num_entries + block_entries - 1) / block_entries;
    stream.max_block_entries = block_entries;
    stream.function = block_function;
    printf("operator: %d x %d elements, scene %lld^2, image %lld^2: %lld entries, blocks of %lld "
           "(%lld blocks)\n",
           DISPERSED_CHANNELS, DISPERSED_WAVELENGTHS, (long long)g.scene, (long long)g.image,
           (long long)g.num_entries, (long long)block_entries, (long long)stream.num_blocks);

    double pinned_rate = 0, pageable_rate = 0;
    copy_rates(&pinned_rate, &pageable_rate);
    printf("copy to the device: pinned %.1f GB/s, pageable %.1f GB/s\n", pinned_rate / 1e9,
           pageable_rate / 1e9);

    /* the weights in host memory, for the in-memory assembly and the host blocks */
    double t = bench_seconds();
    int axes[2] = {2, 3};
    spart_weights *weights =
        spart_weights_allocate(&context->allocator, &stream.shape_orthogonal, &stream.shape_input,
                               &stream.shape_output, 2, axes, 2, axes, g.num_entries);
    if (weights == NULL) {
        fprintf(stderr, "no host memory for %lld entries\n", (long long)g.num_entries);
        return 1;
    }
    for (int64_t e = 0; e <= g.num_elements; e++) {
        weights->offsets[e] = e * g.per_element;
    }
    dispersed_operator_generate(&g, 0, g.num_entries, weights->indices_input,
                                weights->indices_output, weights->values);
    printf("weights made in host memory in %.1f s\n", bench_seconds() - t);

    run runs[6];
    memset(runs, 0, sizeof runs);
    sampler s;
    sampler_start(&s);
    t = bench_seconds();
    spart_regridder *reference = NULL;
    CHECK_SPART(context, spart_regridder_create_device(context, weights, &options, &reference));
    runs[0] = (run){"in memory (create_device)", bench_seconds() - t, sampler_stop(&s), 0, 0, -1,
                    24.0 * (double)g.num_entries};

    blocks host_blocks = {&g,
                          block_entries,
                          weights->indices_input,
                          weights->indices_output,
                          weights->values,
                          NULL,
                          NULL,
                          NULL,
                          {0}};
    runs[1].name = "streamed, host blocks";
    runs[1].floor_bytes = 40.0 * (double)g.num_entries;
    spart_regridder *made = streamed(context, &stream, &options, &host_blocks, reference, &runs[1]);
    spart_regridder_free(made);

    blocks generated = {&g, block_entries, NULL, NULL, NULL, NULL, NULL, NULL, {0}};
    generated.buffer_in = malloc((size_t)block_entries * sizeof(int64_t));
    generated.buffer_out = malloc((size_t)block_entries * sizeof(int64_t));
    generated.buffer_values = malloc((size_t)block_entries * sizeof(double));
    runs[2].name = "streamed, generated blocks";
    runs[2].floor_bytes = 40.0 * (double)g.num_entries;
    made = streamed(context, &stream, &options, &generated, reference, &runs[2]);
    spart_regridder_free(made);
    free(generated.buffer_in);
    free(generated.buffer_out);
    free(generated.buffer_values);

    /* the weights on the device, blocks read in place */
    int64_t *device_in = NULL, *device_out = NULL;
    double *device_values = NULL;
    size_t bytes = (size_t)g.num_entries * 8;
    CHECK_CUDA(cudaMalloc((void **)&device_in, bytes));
    CHECK_CUDA(cudaMalloc((void **)&device_out, bytes));
    CHECK_CUDA(cudaMalloc((void **)&device_values, bytes));
    CHECK_CUDA(cudaMemcpy(device_in, weights->indices_input, bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(device_out, weights->indices_output, bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(device_values, weights->values, bytes, cudaMemcpyHostToDevice));
    blocks device_blocks = {&g,   block_entries, device_in, device_out, device_values,
                            NULL, NULL,          NULL,      {0}};
    stream.blocks_on_device = 1;
    runs[3].name = "streamed, device blocks";
    made = streamed(context, &stream, &options, &device_blocks, reference, &runs[3]);
    spart_regridder_free(made);
    CHECK_CUDA(cudaFree(device_in));
    CHECK_CUDA(cudaFree(device_out));
    CHECK_CUDA(cudaFree(device_values));

    int num_runs = 4;
    if (g.num_entries <= host_limit) {
        host_runs(context, weights, &stream, &options, &host_blocks, &runs[4], &runs[5]);
        num_runs = 6;
    }
    int all_same = runs[1].same && runs[2].same && runs[3].same && (num_runs < 6 || runs[5].same);
    struct cudaDeviceProp properties;
    CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
    FILE *outputs[2] = {stdout, NULL};
    if (markdown != NULL) {
        outputs[1] = bench_markdown_open(markdown, argc, argv, omp_get_max_threads(),
                                         "one run each, wall clock, device synchronised");
        if (outputs[1] == NULL) {
            return 1;
        }
    }
    for (int o = 0; o < 2 && outputs[o] != NULL; o++) {
        FILE *out = outputs[o];
        fprintf(out, "- GPU: %s; copy to the device %.1f GB/s pinned, %.1f GB/s pageable\n",
                properties.name, pinned_rate / 1e9, pageable_rate / 1e9);
        fprintf(out,
                "- operator: %d x %d elements, scene %lld^2, image %lld^2, %lld entries "
                "(%.1f GB of weights), float32 values, int32 columns; blocks of %lld entries "
                "(%lld blocks)\n\n",
                DISPERSED_CHANNELS, DISPERSED_WAVELENGTHS, (long long)g.scene, (long long)g.image,
                (long long)g.num_entries, 24.0 * (double)g.num_entries / 1e9,
                (long long)block_entries, (long long)stream.num_blocks);
        fprintf(out, "| assembly | seconds | GB/s of weights | of the pinned copy rate | of its "
                     "floor | device GB taken (sampled) | budget GB | counted peak GB | same "
                     "bits |\n");
        bench_markdown_rule(out, 9);
        for (int r = 0; r < num_runs; r++) {
            print_run(out, &runs[r], g.num_entries, pinned_rate);
        }
    }
    if (outputs[1] != NULL) {
        fclose(outputs[1]);
    }
    spart_regridder_free(reference);
    spart_weights_free(weights);
    spart_context_free(context);
    return all_same ? 0 : 1;
}
