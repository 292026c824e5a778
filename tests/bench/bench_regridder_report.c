/*
 * tests/bench/bench_regridder_report.c: the report of bench_regridder: the
 * goals of the issue checked, the tables printed, the Markdown for
 * docs/performance.md and the JSON of every figure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_ctis_operators.h"
#include "bench_regridder.h"
#include "bench_util.h"

static double ratio(double reference, double spart)
{
    return reference >= 0 && spart > 0 ? reference / spart : -1.0;
}

static void print_ratio(double value)
{
    if (value < 0) {
        printf(" %8s", "-");
    } else {
        printf(" %7.1fx", value);
    }
}

static void print_seconds(double value)
{
    if (value < 0) {
        printf(" %9s", "-");
    } else {
        printf(" %9.3f", 1e3 * value);
    }
}

/* The goals of the issue; returns how many are missed, and says which. */
int check_goals(const result *results, double bandwidth)
{
    int missed = 0;
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        double seconds[2] = {r->product_1, r->product_8};
        double bytes[2] = {r->bytes_1, r->bytes_8};
        int package[2] = {PACKAGE_1, PACKAGE_8}, scipy[2] = {SCIPY_1, SCIPY_8};
        const char *width[2] = {"1 vector", "8 vectors"};
        for (int k = 0; k < 2; k++) {
            double floor_fraction = bytes[k] / bandwidth / seconds[k];
            int large = strcmp(BENCH_CTIS_SPECS[c].name, "a") != 0;
            if (large && floor_fraction < 0.70) {
                printf("goal missed: case %s, %s: %.0f %% of the bandwidth floor (goal 70 %%)\n",
                       BENCH_CTIS_SPECS[c].name, width[k], 100.0 * floor_fraction);
                missed++;
            }
            double versus_package = ratio(r->reference[package[k]], seconds[k]);
            if (versus_package >= 0 && versus_package < 5.0) {
                printf("goal missed: case %s, %s: %.1fx regrid_from_weights (goal 5x)\n",
                       BENCH_CTIS_SPECS[c].name, width[k], versus_package);
                missed++;
            }
            double versus_scipy = ratio(r->reference[scipy[k]], seconds[k]);
            if (versus_scipy >= 0 && versus_scipy <= 1.0) {
                printf("goal missed: case %s, %s: %.2fx scipy (goal: faster)\n",
                       BENCH_CTIS_SPECS[c].name, width[k], versus_scipy);
                missed++;
            }
        }
    }
    return missed;
}

void print_tables(const result *results, double bandwidth, int threads, int repeat)
{
    printf("spart %s, %d threads, best of %d after a warm-up; copy bandwidth %.2f GB/s\n",
           spart_version(), threads, repeat, bandwidth * 1e-9);
    printf("\nproducts (ms; floor = bytes moved / copy bandwidth; x = their time / spart's)\n");
    printf("%-4s %-48s %9s %5s %9s %9s %5s %9s %9s %9s %9s %9s %9s %9s %9s\n", "case", "operator",
           "entries", "g", "spart 1", "floor 1", "%", "rfw 1", "x", "scipy 1", "x", "spart 8",
           "floor %", "rfw 8 x", "scipy 8 x");
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        printf("%-4s %-48s %9lld %5d", BENCH_CTIS_SPECS[c].name, BENCH_CTIS_SPECS[c].description,
               (long long)r->entries, r->group_size);
        print_seconds(r->product_1);
        print_seconds(r->bytes_1 / bandwidth);
        printf(" %4.0f%%", 100.0 * r->bytes_1 / bandwidth / r->product_1);
        print_seconds(r->reference[PACKAGE_1]);
        print_ratio(ratio(r->reference[PACKAGE_1], r->product_1));
        print_seconds(r->reference[SCIPY_1]);
        print_ratio(ratio(r->reference[SCIPY_1], r->product_1));
        print_seconds(r->product_8);
        printf(" %8.0f%%", 100.0 * r->bytes_8 / bandwidth / r->product_8);
        print_ratio(ratio(r->reference[PACKAGE_8], r->product_8));
        print_ratio(ratio(r->reference[SCIPY_8], r->product_8));
        printf("\n");
    }
    printf("\nbatch of 8 (ms): ");
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        if (!results[c].skipped) {
            printf("%s spart %.3f, rfw %.3f, scipy %.3f; ", BENCH_CTIS_SPECS[c].name,
                   1e3 * results[c].product_8, 1e3 * results[c].reference[PACKAGE_8],
                   1e3 * results[c].reference[SCIPY_8]);
        }
    }
    printf("\nbatch of 8 as a trailing axis (ms, %% of the same floor; read in place): ");
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (!r->skipped) {
            printf("%s %.3f (%.0f %%%s); ", BENCH_CTIS_SPECS[c].name, 1e3 * r->product_8_trailing,
                   100.0 * r->bytes_8 / bandwidth / r->product_8_trailing,
                   r->same_trailing ? "" : ", NOT the leading batch's bits");
        }
    }
    printf("\n\nassembly (s per million weights)\n");
    printf("%-4s %9s %9s %12s %14s %9s %14s %s\n", "case", "rows", "longest", "spart",
           "qsort (1 th)", "x", "numpy argsort", "same CSR (qsort, argsort)");
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        double million = 1e-6 * (double)r->entries;
        printf("%-4s %9lld %9lld %12.4f %14.4f", BENCH_CTIS_SPECS[c].name, (long long)r->rows,
               (long long)r->longest_row, r->assembly / million, r->sort_build / million);
        print_ratio(ratio(r->sort_build, r->assembly));
        if (r->reference[ARGSORT_BUILD] >= 0) {
            printf(" %14.4f", r->reference[ARGSORT_BUILD] / million);
        } else {
            printf(" %14s", "-");
        }
        printf(" %s, %s\n", r->same_csr_sort ? "yes" : "NO",
               r->reference[SAME_CSR_ARGSORT] < 0    ? "-"
               : r->reference[SAME_CSR_ARGSORT] == 1 ? "yes"
                                                     : "NO");
    }
    printf("\nagreement with spart's y (max |diff| / max |y|): ");
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (!r->skipped && r->reference[DIFF_PACKAGE_1] >= 0) {
            printf("%s rfw %.1g/%.1g scipy %.1g/%.1g; ", BENCH_CTIS_SPECS[c].name,
                   r->reference[DIFF_PACKAGE_1], r->reference[DIFF_PACKAGE_8],
                   r->reference[DIFF_SCIPY_1], r->reference[DIFF_SCIPY_8]);
        }
    }
    printf("\n");
}

/* A time in ms and the ratio reference / spart as Markdown cells. */
static void markdown_versus(FILE *out, double reference, double spart)
{
    if (reference < 0) {
        fprintf(out, " - | - |");
    } else {
        fprintf(out, " %.3f | %.1fx |", 1e3 * reference, reference / spart);
    }
}

/* The products' table in Markdown under its header block (--markdown FILE). */
int write_markdown(const char *path, int argc, char **argv, const result *results, double bandwidth,
                   int threads, int repeat, const char *reference_versions)
{
    char timing[160];
    snprintf(timing, sizeof timing,
             "wall clock, best of %d after a warm-up, all on the same threads; float64 values "
             "and vectors",
             repeat);
    FILE *out = bench_markdown_open(path, argc, argv, threads, timing);
    if (out == NULL) {
        return -1;
    }
    fprintf(out, "- peers: %s\n",
            reference_versions[0] != '\0' ? reference_versions
                                          : "not measured (run with --python)");
    fprintf(out,
            "- floor: the bytes a product must move (matrix, x and y once) at the copy "
            "bandwidth measured in the same run, %.2f GB/s\n\n",
            bandwidth * 1e-9);
    fprintf(out, "| case | operator | weights | vectors | spart ms | %% of floor | "
                 "scipy.sparse ms | spart speed-up | regrid_from_weights ms | spart speed-up |\n");
    bench_markdown_rule(out, 10);
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        double seconds[2] = {r->product_1, r->product_8};
        double bytes[2] = {r->bytes_1, r->bytes_8};
        int scipy[2] = {SCIPY_1, SCIPY_8}, package[2] = {PACKAGE_1, PACKAGE_8};
        for (int k = 0; k < 2; k++) {
            fprintf(out, "| %s | %s | %lld | %d | %.3f | %.0f%% |", BENCH_CTIS_SPECS[c].name,
                    BENCH_CTIS_SPECS[c].description, (long long)r->entries, k == 0 ? 1 : BATCH,
                    1e3 * seconds[k], 100.0 * bytes[k] / bandwidth / seconds[k]);
            markdown_versus(out, r->reference[scipy[k]], seconds[k]);
            markdown_versus(out, r->reference[package[k]], seconds[k]);
            fprintf(out, "\n");
        }
    }
    fclose(out);
    return 0;
}

void write_json(const char *path, const result *results, double bandwidth, int threads, int repeat,
                const char *python)
{
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        fprintf(stderr, "bench_regridder: cannot write %s\n", path);
        return;
    }
    fprintf(file,
            "{\n  \"spart_version\": \"%s\",\n  \"threads\": %d,\n  \"repeat\": %d,\n"
            "  \"copy_bandwidth_bytes_per_second\": %.6e,\n  \"python\": \"%s\",\n"
            "  \"cases\": [\n",
            spart_version(), threads, repeat, bandwidth, python != NULL ? python : "");
    const char *separator = "";
    for (int c = 0; c < BENCH_CTIS_CASES; c++) {
        const result *r = &results[c];
        if (r->skipped) {
            continue;
        }
        fprintf(file, "%s", separator);
        separator = ",\n";
        fprintf(file,
                "    {\"case\": \"%s\", \"description\": \"%s\", \"entries\": %lld, \"rows\": "
                "%lld, \"columns\": %lld, \"longest_row\": %lld, \"group_size\": %d,\n"
                "     \"spart_product_1_seconds\": %.6e, \"spart_product_8_seconds\": %.6e,\n"
                "     \"spart_product_8_trailing_seconds\": %.6e, \"trailing_same_bits\": %s,\n"
                "     \"bytes_1\": %.0f, \"bytes_8\": %.0f, \"floor_fraction_1\": %.4f, "
                "\"floor_fraction_8\": %.4f,\n"
                "     \"spart_assembly_seconds\": %.6e, \"qsort_build_seconds\": %.6e, "
                "\"qsort_same_csr\": %s",
                BENCH_CTIS_SPECS[c].name, BENCH_CTIS_SPECS[c].description, (long long)r->entries,
                (long long)r->rows, (long long)r->columns, (long long)r->longest_row, r->group_size,
                r->product_1, r->product_8, r->product_8_trailing,
                r->same_trailing ? "true" : "false", r->bytes_1, r->bytes_8,
                r->bytes_1 / bandwidth / r->product_1, r->bytes_8 / bandwidth / r->product_8,
                r->assembly, r->sort_build, r->same_csr_sort ? "true" : "false");
        for (int m = 0; m < NUM_METRICS; m++) {
            if (r->reference[m] >= 0) {
                fprintf(file, ", \"%s\": %.6e", METRIC_NAMES[m], r->reference[m]);
            }
        }
        fprintf(file, "}");
    }
    fprintf(file, "\n  ]\n}\n");
    fclose(file);
}
