/*
 * tests/bench/bench_esis_stream.c: the host's streamed assembly
 * (spart_regridder_create_streamed on the host) against the in-memory one
 * (spart_regridder_create) in the same run, on weights shaped as an ESIS
 * operator's (issue 26): 4 channels x 24 wavelengths, each scene cell
 * dispersed along its channel's direction onto the 4 pixels about it
 * (bilinear footprint), the weights' rows the pixels, within a budget of
 * exactly spart_regridder_stream_bytes (each thread walks every block for
 * its own rows, host/csr_assemble_stream.c). Both must give the same CSR
 * arrays bit for bit (checked: exit 1 otherwise). (A second design, a
 * bucket scatter of each block by row range, was measured with this
 * benchmark in rounds 8 and 9 and withdrawn: docs/dev/streaming-notes.md.) Blocks are cut from the
 * weights' arrays in memory, so the figures are the assembly's own, not a generator's.
 *
 *   bench_esis_stream [--entries E] [--block B] [--repeat R] [--markdown FILE]
 *
 * Defaults E = 2e7, B = 2^22, R = 3 (the best of R each). Host only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_dispersed_operator.h"
#include "bench_util.h"
#include "spart.h"

typedef struct cutter {
    const dispersed_operator *op;
    int64_t block_entries;
    const int64_t *in, *out;
    const double *values;
    int64_t offsets[DISPERSED_CHANNELS * DISPERSED_WAVELENGTHS + 1];
} cutter;

/* Block b: entries [b B, (b + 1) B) of the arrays, read where they lie. */
static spart_status cut_block(void *user_data, int64_t block, int pass, spart_weights_block *result)
{
    (void)pass;
    cutter *cut = user_data;
    int64_t end = 0;
    const int64_t begin =
        dispersed_operator_block(cut->op, cut->block_entries, block, cut->offsets, result, &end);
    result->indices_input = cut->in + begin;
    result->indices_output = cut->out + begin;
    result->values = cut->values + begin;
    return SPART_OK;
}

static int same_csr(const spart_regridder *a, const spart_regridder *b)
{
    int64_t rows = spart_regridder_num_rows(a), n = spart_regridder_num_entries(a);
    if (rows != spart_regridder_num_rows(b) || n != spart_regridder_num_entries(b)) {
        return 0;
    }
    const int64_t *row_a, *row_b, *wide_a, *wide_b;
    const int32_t *col_a, *col_b;
    const void *val_a, *val_b;
    if (spart_regridder_csr(a, &row_a, &col_a, &wide_a, &val_a) != SPART_OK ||
        spart_regridder_csr(b, &row_b, &col_b, &wide_b, &val_b) != SPART_OK || col_a == NULL ||
        col_b == NULL) {
        return 0;
    }
    return memcmp(row_a, row_b, (size_t)(rows + 1) * sizeof(int64_t)) == 0 &&
           memcmp(col_a, col_b, (size_t)n * sizeof(int32_t)) == 0 &&
           memcmp(val_a, val_b, (size_t)n * sizeof(float)) == 0;
}

typedef struct run {
    const char *name;
    double seconds;
    size_t budget, peak;
    int same;
} run;

int main(int argc, char **argv)
{
    int64_t entries = 20000000, block_entries = (int64_t)1 << 22;
    int repeat = 3;
    const char *markdown = NULL;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--entries") == 0 && k + 1 < argc) {
            entries = (int64_t)atof(argv[++k]);
        } else if (strcmp(argv[k], "--block") == 0 && k + 1 < argc) {
            block_entries = (int64_t)atof(argv[++k]);
        } else if (strcmp(argv[k], "--repeat") == 0 && k + 1 < argc) {
            repeat = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--markdown") == 0 && k + 1 < argc) {
            markdown = argv[++k];
        } else {
            fprintf(stderr, "usage: %s [--entries E] [--block B] [--repeat R] [--markdown FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (entries < 1 || block_entries < 1 || repeat < 1) {
        return 2;
    }
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    const dispersed_operator p = dispersed_operator_make(entries);
    const size_t n = (size_t)p.num_entries;
    int64_t *in = malloc(n * sizeof(int64_t)), *out_index = malloc(n * sizeof(int64_t));
    double *values = malloc(n * sizeof(double));
    int64_t offsets[DISPERSED_CHANNELS * DISPERSED_WAVELENGTHS + 1];
    if (in == NULL || out_index == NULL || values == NULL) {
        fprintf(stderr, "no host memory for %lld entries\n", (long long)p.num_entries);
        return 1;
    }
    for (int64_t e = 0; e <= p.num_elements; e++) {
        offsets[e] = e * p.per_element;
    }
    dispersed_operator_generate(&p, 0, p.num_entries, in, out_index, values);
    spart_weights_stream stream;
    spart_regridder_options options;
    dispersed_operator_stream(&p, &stream, &options);
    int axes[2] = {2, 3};
    spart_weights *weights = NULL;
    CHECK_SPART(context, spart_weights_create_from_arrays(context, &stream.shape_orthogonal,
                                                          &stream.shape_input, &stream.shape_output,
                                                          2, axes, 2, axes, offsets, in, out_index,
                                                          values, &weights));
    cutter cut = {&p, block_entries, in, out_index, values, {0}};
    stream.num_blocks = (p.num_entries + block_entries - 1) / block_entries;
    stream.max_block_entries = block_entries;
    stream.function = cut_block;
    stream.user_data = &cut;
    size_t needed = 0;
    CHECK_SPART(context, spart_regridder_stream_bytes(context, &stream, &options, 0, p.num_entries,
                                                      &needed));
    int threads = omp_get_max_threads();
    enum { RUNS = 2 };
    run runs[RUNS] = {{"in memory (spart_regridder_create)", 1e300, 0, 0, 1},
                      {"streamed (budget = the query)", 1e300, needed, 0, 0}};
    spart_regridder *reference = NULL;
    for (int r = 0; r < repeat; r++) {
        for (int k = 0; k < RUNS; k++) {
            spart_regridder *made = NULL;
            spart_stream_report report;
            memset(&report, 0, sizeof report);
            double start = bench_seconds();
            if (k == 0) {
                CHECK_SPART(context, spart_regridder_create(context, weights, &options, &made));
            } else {
                CHECK_SPART(context,
                            spart_regridder_create_streamed(context, &stream, &options, 0,
                                                            runs[k].budget, &made, &report));
            }
            runs[k].seconds = bench_smaller(runs[k].seconds, bench_seconds() - start);
            runs[k].peak = report.peak_bytes;
            if (k == 0 && reference == NULL) {
                reference = made;
                continue;
            }
            if (k > 0) {
                runs[k].same = same_csr(reference, made);
            }
            spart_regridder_free(made);
        }
    }
    printf("host streamed assembly: %lld entries (%lld^2 cells x %d x %d), blocks of %lld, %d "
           "threads, best of %d\n",
           (long long)p.num_entries, (long long)p.scene, DISPERSED_CHANNELS, DISPERSED_WAVELENGTHS,
           (long long)block_entries, threads, repeat);
    int all_same = runs[1].same;
    FILE *out = markdown != NULL
                    ? bench_markdown_open(markdown, argc, argv, threads, "best of --repeat")
                    : NULL;
    for (int f = 0; f < 2; f++) {
        FILE *to = f == 0 ? stdout : out;
        if (to == NULL) {
            continue;
        }
        fprintf(to,
                "\n| assembly | s | x in memory | GB/s of weights (24 B an entry) | budget GB | "
                "peak GB (own count) | same bits |\n");
        bench_markdown_rule(to, 7);
        for (int k = 0; k < RUNS; k++) {
            fprintf(to, "| %s | %.3f | %.2f | %.1f | %s%.3f | %.3f | %s |\n", runs[k].name,
                    runs[k].seconds, runs[k].seconds / runs[0].seconds,
                    24.0 * (double)p.num_entries / runs[k].seconds / 1e9, k == 0 ? "- " : "",
                    (double)runs[k].budget / 1e9, (double)runs[k].peak / 1e9,
                    k == 0 ? "reference" : (runs[k].same ? "yes" : "NO"));
        }
    }
    if (out != NULL) {
        fclose(out);
    }
    spart_regridder_free(reference);
    spart_weights_free(weights);
    free(in);
    free(out_index);
    free(values);
    spart_context_free(context);
    return all_same ? 0 : 1;
}
