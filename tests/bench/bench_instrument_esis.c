/*
 * tests/bench/bench_instrument_esis.c: building the ESIS-scale instrument
 * of examples/esis.yaml (issue 26, item 4), or a slice of it, and what it
 * costs: the time of spart_instrument_create (weights on the host,
 * assembled into two float32 Regridders), the weights per direction, the
 * peak host memory, and, where a CUDA device is usable, the copy of both
 * operators to it and one forward and one backward product there, against
 * the device's copy rate. The full problem (7 lines x 24 bins x 1139^2
 * cells x 4 channels) does not fit one host as the instrument is built
 * today, so the benchmark builds a slice (fewer lines, bins or cells: the
 * same cell size, plate scale, dispersion and sensor) and extrapolates the
 * weights and the memory to the full problem by the number of (channel,
 * bin, cell) triples, each of which overlaps the same few pixels.
 *
 *   bench_instrument_esis [--cells N] [--lines L] [--bins B] [--repeat R]
 *                         [--budget GB] [--markdown FILE]
 *
 * --budget builds through params.memory_budget (each plane's weights
 * streamed into the assembly) instead of all weights in memory.
 *
 * Defaults: N = 1139, L = 1, B = 24. Exits 1 on a spart error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_device_product.h"
#include "bench_esis_params.h"
#include "bench_util.h"
#include "spart.h"

typedef struct options {
    int cells, lines, bins, repeat;
    double budget_gb; /* > 0: params.memory_budget, the streamed build */
    const char *markdown;
} options;

static void usage(const char *name)
{
    fprintf(stderr,
            "usage: %s [--cells N] [--lines L (1-7)] [--bins B] [--repeat R] "
            "[--budget GB] [--markdown FILE]\n",
            name);
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = {ESIS_CELLS, 1, ESIS_BINS, 3, 0.0, NULL};
    for (int k = 1; k < argc; k++) {
        const char *value = k + 1 < argc ? argv[k + 1] : NULL;
        if (value == NULL) {
            usage(argv[0]);
        } else if (strcmp(argv[k], "--cells") == 0) {
            o.cells = atoi(value);
        } else if (strcmp(argv[k], "--lines") == 0) {
            o.lines = atoi(value);
        } else if (strcmp(argv[k], "--bins") == 0) {
            o.bins = atoi(value);
        } else if (strcmp(argv[k], "--repeat") == 0) {
            o.repeat = atoi(value);
        } else if (strcmp(argv[k], "--budget") == 0) {
            o.budget_gb = atof(value);
        } else if (strcmp(argv[k], "--markdown") == 0) {
            o.markdown = value;
        } else {
            usage(argv[0]);
        }
        k++;
    }
    if (o.cells < 1 || o.lines < 1 || o.lines > ESIS_LINES || o.bins < 1 || o.repeat < 1) {
        usage(argv[0]);
    }
    return o;
}

/* Peak resident memory of this process so far, bytes. */
static double peak_bytes(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss * 1024.0;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    esis_arrays arrays;
    spart_instrument_params params;
    esis_params(context, o.cells, o.lines, o.bins, o.budget_gb * 1e9, &arrays, &params);
    double memory_before = peak_bytes();
    double start = bench_seconds();
    spart_instrument *instrument = NULL;
    CHECK_SPART(context, spart_instrument_create(context, &params, &instrument));
    double build = bench_seconds() - start;
    double memory = peak_bytes() - memory_before;
    const spart_regridder *forward = spart_instrument_forward(instrument);
    const spart_regridder *backward = spart_instrument_backward(instrument);
    double weights = (double)spart_regridder_num_entries(forward);
    double triples = (double)ESIS_CHANNELS * o.lines * o.bins * (double)o.cells * o.cells;
    double full = esis_full_factor(&arrays); /* the whole problem / this slice */
    double csr = bench_csr_bytes(forward) + bench_csr_bytes(backward);
    int threads = omp_get_max_threads();
    printf("ESIS slice: %d lines x %d bins x %d^2 cells x %d channels, %d threads, %s\n", o.lines,
           o.bins, o.cells, ESIS_CHANNELS, threads,
           o.budget_gb > 0 ? "streamed (memory_budget)" : "in memory");
    printf("  spart_instrument_create %.2f s; %.4g weights a direction (%.3f per channel, bin "
           "and cell), backward %lld; peak host memory +%.2f GB (%.1f bytes a weight a "
           "direction); CSR float32 %.2f GB\n",
           build, weights, weights / triples, (long long)spart_regridder_num_entries(backward),
           memory / 1e9, memory / weights, csr / 1e9);
    printf("  full ESIS (x %.1f): %.3g weights a direction, about %.0f GB of host memory to "
           "build this way, %.1f GB of float32 CSR (both operators)\n",
           full, weights * full, memory * full / 1e9, csr * full / 1e9);
    double to_device = -1.0, forward_s = -1.0, backward_s = -1.0, rate = -1.0;
    if (spart_context_set_cuda_device(context, 0) == SPART_OK) {
        spart_regridder *d_forward = NULL, *d_backward = NULL;
        start = bench_seconds();
        CHECK_SPART(context, spart_regridder_to_device(context, forward, &d_forward));
        CHECK_SPART(context, spart_regridder_to_device(context, backward, &d_backward));
        to_device = bench_seconds() - start;
        bench_device_product_seconds(context, d_forward, 1, 0, o.repeat, &forward_s);
        bench_device_product_seconds(context, d_backward, 1, 0, o.repeat, &backward_s);
        rate = bench_device_copy_rate(context, (size_t)1 << 30, 4);
        printf("  device: both operators copied in %.2f s; forward %.2f ms (%.0f%% of the "
               "copy rate %.0f GB/s for its CSR bytes), backward %.2f ms (%.0f%%)\n",
               to_device, 1e3 * forward_s, 100.0 * bench_csr_bytes(forward) / forward_s / rate,
               rate / 1e9, 1e3 * backward_s, 100.0 * bench_csr_bytes(backward) / backward_s / rate);
        spart_regridder_free(d_forward);
        spart_regridder_free(d_backward);
    } else {
        printf("  no usable CUDA device: %s\n", spart_context_error(context));
    }
    if (o.markdown != NULL) {
        FILE *out = bench_markdown_open(o.markdown, argc, argv, threads,
                                        "one build; device products the median of --repeat");
        if (out != NULL) {
            fprintf(out, "\n| slice (lines x bins x cells^2 x channels) | build s | weights a "
                         "direction | per (c, bin, cell) | peak host GB | bytes a weight | "
                         "full ESIS weights | full ESIS host GB | to device s | forward ms | "
                         "backward ms | copy rate GB/s |\n");
            bench_markdown_rule(out, 12);
            fprintf(out,
                    "| %d x %d x %d^2 x %d%s | %.2f | %.4g | %.3f | %.2f | %.1f | %.3g | %.0f | "
                    "%.2f | %.2f | %.2f | %.0f |\n",
                    o.lines, o.bins, o.cells, ESIS_CHANNELS, o.budget_gb > 0 ? ", streamed" : "",
                    build, weights, weights / triples, memory / 1e9, memory / weights,
                    weights * full, memory * full / 1e9, to_device, 1e3 * forward_s,
                    1e3 * backward_s, rate / 1e9);
            fclose(out);
        }
    }
    spart_instrument_free(instrument);
    esis_arrays_free(&arrays);
    spart_context_free(context);
    return 0;
}
