/*
 * tests/bench/bench_regridder.h: what bench_regridder.c measures and
 * bench_regridder_report.c reports: the Python side's metrics and one
 * case's result.
 */
#ifndef SPART_BENCH_REGRIDDER_H
#define SPART_BENCH_REGRIDDER_H

#include <stdint.h>

#define BATCH 8

/* What the Python side reports, by the names it prints. */
enum reference_metric {
    PACKAGE_1,
    PACKAGE_8,
    SCIPY_1,
    SCIPY_8,
    ARGSORT_BUILD,
    DIFF_PACKAGE_1,
    DIFF_PACKAGE_8,
    DIFF_SCIPY_1,
    DIFF_SCIPY_8,
    SAME_CSR_ARGSORT,
    NUM_METRICS
};
static const char *const METRIC_NAMES[NUM_METRICS] = {
    "package_1",      "package_8",      "scipy_1",      "scipy_8",      "argsort_build",
    "diff_package_1", "diff_package_8", "diff_scipy_1", "diff_scipy_8", "same_csr_argsort",
};

typedef struct result {
    int skipped;
    int64_t entries, rows, columns, longest_row;
    int group_size;
    double product_1, product_8;   /* spart seconds */
    double product_8_trailing;     /* spart seconds, the batch as a trailing axis */
    int same_trailing;             /* the trailing batch gave the leading batch's bits */
    double bytes_1, bytes_8;       /* what the products must move */
    double assembly, sort_build;   /* seconds */
    int same_csr_sort;             /* the qsort build gave spart's arrays */
    double reference[NUM_METRICS]; /* < 0: not measured */
} result;

/* The number of goals of the issue a run misses, each printed. */
int check_goals(const result *results, double bandwidth);
/* The tables of times, ratios and checks on standard output. */
void print_tables(const result *results, double bandwidth, int threads, int repeat);
/* The products' table in Markdown under bench_markdown_open's header block;
 * reference_versions is the Python side's VERSIONS line, or "". */
int write_markdown(const char *path, int argc, char **argv, const result *results, double bandwidth,
                   int threads, int repeat, const char *reference_versions);
/* Every figure as JSON. */
void write_json(const char *path, const result *results, double bandwidth, int threads, int repeat,
                const char *python);

#endif
