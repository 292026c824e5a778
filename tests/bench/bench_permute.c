/*
 * tests/bench/bench_permute.c: the tiled block permute (spart/permute.h)
 * on the shapes, on the host and on a CUDA device, against the
 * floor: the bytes that must move (every source subblock read once, every
 * destination subblock written once; beta = 0) at the copy rate the same
 * program measures (a device-to-device cudaMemcpy; the host's STREAM-like
 * copy). Many small blocks are also set against the launch of an empty
 * kernel. torch.permute(...).contiguous() on the same shapes is timed by
 * bench_permute_torch.py, which reads the blocks this program writes with
 * --blocks FILE.
 *
 * Usage: bench_permute [--markdown FILE] [--blocks FILE] [--repeat R]
 *                      [--host-only | --device-only] [--skip-large-host]
 *                      [--only TEXT]   (the shapes whose name holds TEXT)
 *                      [--variants]    (also time the other device kernels)
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(BENCH_PERMUTE_CUDA)
#include <cuda_runtime_api.h>
double bench_permute_empty_launch_ms(int launches);
#endif

#include "bench_util.h"
#include "permute/permute_internal.h" /* the device kernel's variants */
#include "spart/permute.h"

/* A set of blocks to time. */
typedef struct bench_case {
    char name[96];
    spart_permute_type type;
    int num_axes;
    int permutation[SPART_PERMUTE_MAX_AXES];
    int64_t num_blocks;
    spart_permute_block *blocks;
    int64_t *numbers; /* sizes, offsets and strides the blocks point into */
    double *recoupling;
    int64_t source_length, destination_length;
    double bytes;   /* that must move: sources read, destinations written */
    int small;      /* many small blocks: compare with an empty launch */
    int large_host; /* skipped on the host with --skip-large-host */
} bench_case;

static int element_bytes(spart_permute_type type)
{
    return type == SPART_PERMUTE_FLOAT32                                      ? 4
           : type == SPART_PERMUTE_FLOAT64 || type == SPART_PERMUTE_COMPLEX64 ? 8
                                                                              : 16;
}

static uint64_t random_state = 12345;
static double uniform(void)
{
    random_state = random_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(random_state >> 11) / 9007199254740992.0;
}

/* C-order strides of `sizes`; returns the elements. */
static int64_t c_strides(int num_axes, const int64_t *sizes, int64_t *strides)
{
    int64_t span = 1;
    for (int k = num_axes - 1; k >= 0; k--) {
        strides[k] = span;
        span *= sizes[k];
    }
    return span;
}

/* Room for `num_blocks` blocks of up to `most` subblocks a side. */
static void allocate_case(bench_case *c, int64_t num_blocks, int64_t most)
{
    int64_t per_block = SPART_PERMUTE_MAX_AXES + 2 * most * (1 + SPART_PERMUTE_MAX_AXES);
    c->num_blocks = num_blocks;
    c->blocks = calloc((size_t)num_blocks, sizeof *c->blocks);
    c->numbers = calloc((size_t)(num_blocks * per_block), sizeof(int64_t));
    c->recoupling = calloc((size_t)(num_blocks * most * most + 1), sizeof(double));
    for (int64_t b = 0; b < num_blocks; b++) {
        int64_t *at = c->numbers + b * per_block;
        spart_permute_block *block = &c->blocks[b];
        block->sizes = at;
        block->destination_offsets = at + SPART_PERMUTE_MAX_AXES;
        block->source_offsets = at + SPART_PERMUTE_MAX_AXES + most;
        block->destination_strides = at + SPART_PERMUTE_MAX_AXES + 2 * most;
        block->source_strides =
            at + SPART_PERMUTE_MAX_AXES + 2 * most + most * SPART_PERMUTE_MAX_AXES;
    }
}

/* Block b with `sizes`, n destinations and m sources laid out one after
 * the other in C order (U dense random, or NULL for n = m = 1 plain). */
static void lay_out_block(bench_case *c, int64_t b, const int64_t *sizes, int64_t n, int64_t m,
                          int recoupled, int64_t most)
{
    spart_permute_block *block = &c->blocks[b];
    int N = c->num_axes;
    int64_t *s = (int64_t *)block->sizes, permuted[SPART_PERMUTE_MAX_AXES];
    for (int k = 0; k < N; k++) {
        s[k] = sizes[k];
    }
    for (int k = 0; k < N; k++) {
        permuted[k] = sizes[c->permutation[k]];
    }
    block->num_destination = n;
    block->num_source = m;
    int64_t elements = 1;
    for (int k = 0; k < N; k++) {
        elements *= sizes[k];
    }
    for (int64_t j = 0; j < m; j++) {
        ((int64_t *)block->source_offsets)[j] = c->source_length;
        c->source_length += c_strides(N, sizes, (int64_t *)block->source_strides + j * N);
    }
    for (int64_t i = 0; i < n; i++) {
        ((int64_t *)block->destination_offsets)[i] = c->destination_length;
        c->destination_length +=
            c_strides(N, permuted, (int64_t *)block->destination_strides + i * N);
    }
    if (recoupled) {
        double *u = c->recoupling + b * most * most;
        for (int64_t t = 0; t < n * m; t++) {
            u[t] = 2.0 * uniform() - 1.0;
        }
        block->recoupling = u;
    }
    c->bytes += (double)(elements * (n + m)) * element_bytes(c->type);
}

static bench_case dense_case(const char *name, spart_permute_type type, int num_axes,
                             const int64_t *sizes, const int *permutation, int large_host)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.type = type;
    c.num_axes = num_axes;
    memcpy(c.permutation, permutation, (size_t)num_axes * sizeof(int));
    c.large_host = large_host;
    allocate_case(&c, 1, 1);
    lay_out_block(&c, 0, sizes, 1, 1, 0, 1);
    return c;
}

/* `count` rank-4 blocks of 2-64 elements (extents 1-4), plain (U(1)) or
 * recoupled with n = m in 1..4 (SU(2)-like). */
static bench_case small_case(const char *name, int64_t count, int recoupled)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.type = SPART_PERMUTE_FLOAT64;
    c.num_axes = 4;
    const int p[4] = {2, 0, 3, 1};
    memcpy(c.permutation, p, sizeof p);
    c.small = 1;
    allocate_case(&c, count, 4);
    for (int64_t b = 0; b < count; b++) {
        int64_t sizes[4], elements;
        do {
            elements = 1;
            for (int k = 0; k < 4; k++) {
                sizes[k] = 1 + (int64_t)(uniform() * 4.0);
                elements *= sizes[k];
            }
        } while (elements < 2 || elements > 64);
        int64_t n = recoupled ? 1 + (int64_t)(uniform() * 4.0) : 1;
        lay_out_block(&c, b, sizes, n, n, recoupled, 4);
    }
    return c;
}

/* Recoupled rank-4 float64 blocks (extents 8-24, n = m in 1..3) until the
 * sources pass `bytes`. */
static bench_case recoupling_case(const char *name, double bytes)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.type = SPART_PERMUTE_FLOAT64;
    c.num_axes = 4;
    const int p[4] = {1, 3, 0, 2};
    memcpy(c.permutation, p, sizeof p);
    allocate_case(&c, 4096, 3);
    int64_t b = 0;
    while ((double)c.source_length * 8.0 < bytes && b < 4096) {
        int64_t sizes[4];
        for (int k = 0; k < 4; k++) {
            sizes[k] = 8 + (int64_t)(uniform() * 17.0);
        }
        int64_t n = 1 + (int64_t)(uniform() * 3.0);
        lay_out_block(&c, b++, sizes, n, n, 1, 3);
    }
    c.num_blocks = b;
    return c;
}

static void free_bench_case(bench_case *c)
{
    free(c->blocks);
    free(c->numbers);
    free(c->recoupling);
}

/* The blocks for bench_permute_torch.py: "case NAME TYPE N p..." then
 * "block n m sizes...". */
static void write_blocks(FILE *out, const bench_case *c)
{
    static const char *types[4] = {"float32", "float64", "complex64", "complex128"};
    fprintf(out, "case %s %s %d", c->name, types[c->type], c->num_axes);
    for (int k = 0; k < c->num_axes; k++) {
        fprintf(out, " %d", c->permutation[k]);
    }
    fprintf(out, "\n");
    for (int64_t b = 0; b < c->num_blocks; b++) {
        const spart_permute_block *block = &c->blocks[b];
        fprintf(out, "block %lld %lld", (long long)block->num_destination,
                (long long)block->num_source);
        for (int k = 0; k < c->num_axes; k++) {
            fprintf(out, " %lld", (long long)block->sizes[k]);
        }
        fprintf(out, "\n");
    }
}

typedef struct timing {
    double plan_ms, run_ms, floor_ms;
    int64_t items, tiles;
    int one_term; /* the plan has the one-term device kernel */
} timing;

static double median_of(double *times, int n)
{
    return bench_median(times, n);
}

/* stream: the host's streamed stores (spart_permute_plan_set_stream_stores),
 * -1 the plan's own choice. */
static timing time_host(spart_context *context, const bench_case *c, int repeat, double rate,
                        int stream, int staged, int y_order)
{
    timing t = {0};
    size_t bytes = (size_t)element_bytes(c->type);
    char *source = malloc((size_t)c->source_length * bytes + 1);
    char *destination = malloc((size_t)c->destination_length * bytes + 1);
    int threads = spart_context_threads(context);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < c->source_length; k++) {
        memset(source + k * (int64_t)bytes, 0x3f, bytes);
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < c->destination_length; k++) {
        memset(destination + k * (int64_t)bytes, 0, bytes);
    }
    double start = bench_seconds();
    spart_permute_plan *plan = NULL;
    CHECK_SPART(context,
                spart_permute_plan_create(context, c->type, c->num_axes, c->permutation,
                                          SPART_PERMUTE_IDENTITY, c->num_blocks, c->blocks,
                                          c->source_length, c->destination_length, 0, &plan));
    t.plan_ms = 1e3 * (bench_seconds() - start);
    CHECK_SPART(context, spart_permute_plan_counts(plan, &t.items, &t.tiles, NULL));
    t.one_term = plan->work.stream_stores; /* here: whether the plan streams */
    if (stream >= 0) {
        spart_permute_plan_set_stream_stores(plan, stream);
    }
    if (staged >= 0) {
        spart_permute_plan_set_host_staging(plan, staged);
    }
    if (y_order >= 0) {
        spart_permute_plan_set_host_order(plan, y_order);
    }
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
    int single = c->type == SPART_PERMUTE_FLOAT32 || c->type == SPART_PERMUTE_COMPLEX64;
    const void *alpha = single ? (const void *)one_f : one,
               *beta = single ? (const void *)zero_f : zero;
    double *times = malloc((size_t)repeat * sizeof(double));
    CHECK_SPART(context, spart_permute_execute(context, plan, alpha, source, beta, destination));
    for (int r = 0; r < repeat; r++) {
        start = bench_seconds();
        CHECK_SPART(context,
                    spart_permute_execute(context, plan, alpha, source, beta, destination));
        times[r] = 1e3 * (bench_seconds() - start);
    }
    t.run_ms = median_of(times, repeat);
    t.floor_ms = 1e3 * c->bytes / rate;
    free(times);
    spart_permute_plan_free(plan);
    free(source);
    free(destination);
    return t;
}

#if defined(BENCH_PERMUTE_CUDA)
/* The device's copy rate: bytes read and written per second by a
 * device-to-device cudaMemcpy of 1 GiB, the best of five. */
static double device_copy_rate(void)
{
    size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemset(a, 1, bytes));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    double best = 1e30;
    for (int r = 0; r < 6; r++) {
        CHECK_CUDA(cudaEventRecord(start, 0));
        CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        CHECK_CUDA(cudaEventRecord(stop, 0));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (r > 0) {
            best = bench_smaller(best, (double)ms);
        }
    }
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return 2.0 * (double)bytes / (best * 1e-3);
}

/* variant: the device kernel (spart_permute_plan_set_variant), -1 the
 * plan's own. */
static timing time_device(spart_context *context, const bench_case *c, int repeat, double rate,
                          int variant)
{
    timing t = {0};
    size_t bytes = (size_t)element_bytes(c->type);
    void *source = NULL, *destination = NULL;
    CHECK_CUDA(cudaMalloc(&source, (size_t)c->source_length * bytes + 1));
    CHECK_CUDA(cudaMalloc(&destination, (size_t)c->destination_length * bytes + 1));
    CHECK_CUDA(cudaMemset(source, 0x3f, (size_t)c->source_length * bytes));
    double start = bench_seconds();
    spart_permute_plan *plan = NULL;
    CHECK_SPART(context,
                spart_permute_plan_create(context, c->type, c->num_axes, c->permutation,
                                          SPART_PERMUTE_IDENTITY, c->num_blocks, c->blocks,
                                          c->source_length, c->destination_length, 1, &plan));
    t.plan_ms = 1e3 * (bench_seconds() - start);
    CHECK_SPART(context, spart_permute_plan_counts(plan, &t.items, &t.tiles, NULL));
    t.one_term = plan->work.one_term;
    if (variant >= 0) {
        spart_permute_plan_set_variant(plan, variant);
    }
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
    int single = c->type == SPART_PERMUTE_FLOAT32 || c->type == SPART_PERMUTE_COMPLEX64;
    const void *alpha = single ? (const void *)one_f : one,
               *beta = single ? (const void *)zero_f : zero;
    cudaEvent_t begin, end;
    CHECK_CUDA(cudaEventCreate(&begin));
    CHECK_CUDA(cudaEventCreate(&end));
    double *times = malloc((size_t)repeat * sizeof(double));
    CHECK_SPART(context, spart_permute_execute(context, plan, alpha, source, beta, destination));
    for (int r = 0; r < repeat; r++) {
        CHECK_CUDA(cudaEventRecord(begin, 0));
        CHECK_SPART(context,
                    spart_permute_execute(context, plan, alpha, source, beta, destination));
        CHECK_CUDA(cudaEventRecord(end, 0));
        CHECK_CUDA(cudaEventSynchronize(end));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, begin, end));
        times[r] = ms;
    }
    t.run_ms = median_of(times, repeat);
    t.floor_ms = 1e3 * c->bytes / rate;
    free(times);
    CHECK_CUDA(cudaEventDestroy(begin));
    CHECK_CUDA(cudaEventDestroy(end));
    spart_permute_plan_free(plan);
    CHECK_CUDA(cudaFree(source));
    CHECK_CUDA(cudaFree(destination));
    return t;
}
#endif

static void print_header(FILE *out)
{
    fprintf(out, "| where | shape | blocks | tiles | MB moved | ms | floor ms | of copy | GB/s "
                 "| empty launch ms (x) | plan ms |\n");
    bench_markdown_rule(out, 11);
}

static void print_row(FILE *out, const char *where, const bench_case *c, const timing *t,
                      double empty_ms)
{
    char launch[64] = "";
    if (c->small && empty_ms > 0.0) {
        snprintf(launch, sizeof launch, "%.4f (%.1fx)", empty_ms, t->run_ms / empty_ms);
    }
    fprintf(out, "| %s | %s | %lld | %lld | %.1f | %.4f | %.4f | %.0f %% | %.0f | %s | %.2f |\n",
            where, c->name, (long long)c->num_blocks, (long long)t->tiles, c->bytes / 1e6,
            t->run_ms, t->floor_ms, 100.0 * t->floor_ms / t->run_ms,
            c->bytes / (t->run_ms * 1e-3) / 1e9, launch, t->plan_ms);
}

int main(int argc, char **argv)
{
    const char *markdown = NULL, *blocks_path = NULL, *only = NULL;
    int repeat = 10, host = 1, device = 1, skip_large_host = 0, variants = 0;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--markdown") == 0 && k + 1 < argc) {
            markdown = argv[++k];
        } else if (strcmp(argv[k], "--blocks") == 0 && k + 1 < argc) {
            blocks_path = argv[++k];
        } else if (strcmp(argv[k], "--repeat") == 0 && k + 1 < argc) {
            repeat = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--host-only") == 0) {
            device = 0;
        } else if (strcmp(argv[k], "--device-only") == 0) {
            host = 0;
        } else if (strcmp(argv[k], "--only") == 0 && k + 1 < argc) {
            only = argv[++k];
        } else if (strcmp(argv[k], "--variants") == 0) {
            variants = 1;
        } else if (strcmp(argv[k], "--skip-large-host") == 0) {
            skip_large_host = 1;
        } else {
            fprintf(
                stderr,
                "usage: %s [--markdown FILE] [--blocks FILE] [--repeat R] "
                "[--host-only | --device-only] [--skip-large-host] [--only TEXT] [--variants]\n",
                argv[0]);
            return 2;
        }
    }
    repeat = repeat > 0 ? repeat : 1;
#if !defined(BENCH_PERMUTE_CUDA)
    if (device && !host) {
        fprintf(stderr, "%s: built without CUDA: no device to time\n", argv[0]);
        return 77;
    }
#endif
    const int64_t square[2] = {7264, 7264}, tall[2] = {43408, 1216}, cube[3] = {1024, 1024, 512};
    const int64_t rank4[4] = {48, 48, 48, 48};
    const int swap[2] = {1, 0}, rotate[3] = {1, 2, 0}, mix[4] = {1, 3, 0, 2};
    bench_case cases[] = {
        dense_case("2-D 7264 x 7264 float64, p = (1, 0)", SPART_PERMUTE_FLOAT64, 2, square, swap,
                   0),
        dense_case("2-D 43408 x 1216 float64, p = (1, 0)", SPART_PERMUTE_FLOAT64, 2, tall, swap, 0),
        dense_case("3-D 1024 x 1024 x 512 float64, p = (1, 2, 0)", SPART_PERMUTE_FLOAT64, 3, cube,
                   rotate, 1),
        dense_case("4-D 48^4 complex128, p = (1, 3, 0, 2)", SPART_PERMUTE_COMPLEX128, 4, rank4, mix,
                   0),
        small_case("4000 small blocks (2-64 elements), U(1)-like", 4000, 0),
        small_case("2000 small fusion blocks, n = m in 1..4 (SU(2)-like)", 2000, 1),
        recoupling_case("recoupling tensor > 100 MB, n = m in 1..3", 100e6),
    };
    const int num_cases = (int)(sizeof cases / sizeof cases[0]);
    if (blocks_path != NULL) {
        FILE *out = fopen(blocks_path, "w");
        if (out == NULL) {
            fprintf(stderr, "cannot write %s\n", blocks_path);
            return 1;
        }
        for (int k = 0; k < num_cases; k++) {
            write_blocks(out, &cases[k]);
        }
        fclose(out);
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    int threads = spart_context_threads(context);
    FILE *md = NULL;
    if (markdown != NULL) {
        md = bench_markdown_open(markdown, argc, argv, threads,
                                 "median of --repeat runs after one warm-up; device: CUDA events "
                                 "around one execute; floor: bytes that must move (sources read "
                                 "once, destinations written once, beta = 0) at the measured copy "
                                 "rate");
        if (md == NULL) {
            return 1;
        }
    }
#if defined(BENCH_PERMUTE_CUDA)
    if (device) {
        spart_context_set_cuda_device(context, 0) == SPART_OK ? (void)0 : (void)(device = 0);
    }
    if (device) {
        double rate = device_copy_rate();
        double empty_ms = bench_permute_empty_launch_ms(1000);
        struct cudaDeviceProp properties;
        CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
        printf("device %s: copy %.0f GB/s, empty launch %.4f ms\n", properties.name, rate / 1e9,
               empty_ms);
        if (md != NULL) {
            fprintf(md,
                    "\n- device: %s; cudaMemcpy device to device %.0f GB/s (read + write); "
                    "an empty kernel's launch %.4f ms\n\n",
                    properties.name, rate / 1e9, empty_ms);
            print_header(md);
        }
        print_header(stdout);
        for (int k = 0; k < num_cases; k++) {
            if (only != NULL && strstr(cases[k].name, only) == NULL) {
                continue;
            }
            timing t = time_device(context, &cases[k], repeat, rate, -1);
            print_row(stdout, "device", &cases[k], &t, empty_ms);
            if (md != NULL) {
                print_row(md, "device", &cases[k], &t, empty_ms);
                fflush(md);
            }
            /* The other kernels of a one-term plan, for comparison. */
            static const int others[6] = {0, 2, 3, 4, 5, 6};
            static const char *names[6] = {
                "device, general kernel",
                "device, one-term kernel at 6 blocks/SM",
                "device, one-term kernel, cp.async gather",
                "device, design 2 (fixed grid, double-buffered, 16-byte copies), 4 blocks/SM",
                "device, design 2 (fixed grid, three buffers, 16-byte copies), 4 blocks/SM",
                "device, design 2, element copies, 4 blocks/SM"};
            for (int v = 0; v < 6 && t.one_term && variants; v++) {
                timing other = time_device(context, &cases[k], repeat, rate, others[v]);
                const char *where = names[v];
                print_row(stdout, where, &cases[k], &other, empty_ms);
                if (md != NULL) {
                    print_row(md, where, &cases[k], &other, empty_ms);
                    fflush(md);
                }
            }
            if (!t.one_term && variants) { /* recoupled: the general kernel at 8 blocks/SM */
                timing other = time_device(context, &cases[k], repeat, rate, 7);
                const char *where = "device, general kernel at 8 blocks/SM";
                print_row(stdout, where, &cases[k], &other, empty_ms);
                if (md != NULL) {
                    print_row(md, where, &cases[k], &other, empty_ms);
                    fflush(md);
                }
            }
        }
    }
#endif
    if (host) {
        double rate = bench_copy_bandwidth(threads);
        printf("host: copy %.1f GB/s on %d threads\n", rate / 1e9, threads);
        if (md != NULL) {
            fprintf(md, "\n- host: STREAM-like copy %.1f GB/s (read + write) on %d threads\n\n",
                    rate / 1e9, threads);
            print_header(md);
        }
        print_header(stdout);
        for (int k = 0; k < num_cases; k++) {
            if ((skip_large_host && cases[k].large_host) ||
                (only != NULL && strstr(cases[k].name, only) == NULL)) {
                continue;
            }
            timing t = time_host(context, &cases[k], repeat, rate, -1, -1, -1);
            print_row(stdout, "host", &cases[k], &t, 0.0);
            if (md != NULL) {
                print_row(md, "host", &cases[k], &t, 0.0);
                fflush(md);
            }
            if (t.one_term && variants) { /* a streamed plan, for comparison: cached stores */
                timing other = time_host(context, &cases[k], repeat, rate, 0, -1, -1);
                print_row(stdout, "host, cached stores", &cases[k], &other, 0.0);
                if (md != NULL) {
                    print_row(md, "host, cached stores", &cases[k], &other, 0.0);
                    fflush(md);
                }
            }
            if (variants && !cases[k].small) { /* transposes' source rows read in place */
                timing other = time_host(context, &cases[k], repeat, rate, -1, 0, -1);
                print_row(stdout, "host, rows not staged", &cases[k], &other, 0.0);
                if (md != NULL) {
                    print_row(md, "host, rows not staged", &cases[k], &other, 0.0);
                    fflush(md);
                }
                other = time_host(context, &cases[k], repeat, rate, -1, -1, 0);
                print_row(stdout, "host, tiles x fastest", &cases[k], &other, 0.0);
                if (md != NULL) {
                    print_row(md, "host, tiles x fastest", &cases[k], &other, 0.0);
                    fflush(md);
                }
            }
        }
    }
    if (md != NULL) {
        fclose(md);
    }
    for (int k = 0; k < num_cases; k++) {
        free_bench_case(&cases[k]);
    }
    spart_context_free(context);
    return 0;
}
