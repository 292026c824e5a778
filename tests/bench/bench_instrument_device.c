/*
 * tests/bench/bench_instrument_device.c: the ideal instrument built on the
 * host (OpenMP, the threads OMP_NUM_THREADS gives) against the same
 * instrument built on a CUDA device (params.on_device = 1: weights,
 * transpose, unit factors and both assemblies on the device), in the same
 * run, and the check that both give the same CSR arrays bit for bit
 * (issue 30). Cases: the ctis tutorial's instrument (64^2 scene, 4
 * channels, 20 bins, 128 x 64 sensor) and the same at 256^2; an ESIS-scale
 * slice (4 channels on the 2048 x 2080 sensor, --esis-lines lines x
 * --esis-bins bins x --esis-cells^2 cells, float32) in memory and, with
 * --budget GB, streamed (params.memory_budget: device memory on the
 * device). The ESIS time is extrapolated to the whole problem (7 lines x
 * 24 bins x 1139^2 cells x 4 channels) by the number of (channel, bin,
 * cell) triples, as bench_instrument_esis does.
 *
 * The floor: the bytes a device build must at least write once, both
 * directions' weights (24 bytes an entry) and both CSR operators, over
 * the device's copy rate measured here (read + write of 1 GiB).
 *
 *   bench_instrument_device [--esis-cells N] [--esis-lines L] [--esis-bins B]
 *                           [--budget GB] [--no-host-esis] [--streamed-only]
 *                           [--device-once] [--markdown FILE]
 *
 * Times: the host build once, the device build the faster of two (after a
 * warm-up build that pays the device's start; with --no-host-esis the
 * streamed ESIS build is compared with the in-memory device one, which
 * test_cuda_instrument holds to the host's; --device-once: one build,
 * for the whole ESIS problem, --esis-cells 1139 --esis-lines 7;
 * --streamed-only: the ESIS case streamed alone, which needs --budget). Exits 77 without a usable
 * CUDA device, 1 on a spart error or when the bits differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_esis_params.h"
#include "bench_util.h"
#include "spart.h"

typedef struct options {
    int cells, lines, bins, host_esis;
    int esis_in_memory; /* 0: the ESIS case streamed only (--streamed-only) */
    int device_builds;  /* 2, or 1 with --device-once */
    double budget_gb;
    const char *markdown;
} options;

static void usage(const char *name)
{
    fprintf(stderr,
            "usage: %s [--esis-cells N] [--esis-lines L (1-7)] [--esis-bins B] [--budget GB] "
            "[--no-host-esis] [--streamed-only] [--device-once] [--markdown FILE]\n",
            name);
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = {285, 1, 24, 1, 1, 2, 0.0, NULL};
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--no-host-esis") == 0) {
            o.host_esis = 0;
            continue;
        }
        if (strcmp(argv[k], "--streamed-only") == 0) {
            o.esis_in_memory = 0;
            continue;
        }
        if (strcmp(argv[k], "--device-once") == 0) {
            o.device_builds = 1;
            continue;
        }
        const char *value = k + 1 < argc ? argv[k + 1] : NULL;
        if (value == NULL) {
            usage(argv[0]);
        } else if (strcmp(argv[k], "--esis-cells") == 0) {
            o.cells = atoi(value);
        } else if (strcmp(argv[k], "--esis-lines") == 0) {
            o.lines = atoi(value);
        } else if (strcmp(argv[k], "--esis-bins") == 0) {
            o.bins = atoi(value);
        } else if (strcmp(argv[k], "--budget") == 0) {
            o.budget_gb = atof(value);
        } else if (strcmp(argv[k], "--markdown") == 0) {
            o.markdown = value;
        } else {
            usage(argv[0]);
        }
        k++;
    }
    if (o.cells < 1 || o.lines < 1 || o.lines > ESIS_LINES || o.bins < 1 ||
        (!o.esis_in_memory && !(o.budget_gb > 0))) {
        usage(argv[0]);
    }
    return o;
}

/* The arrays a tutorial case's params point into (an ESIS slice's are
 * bench_esis_params.h's). */
typedef struct case_arrays {
    double angle[ESIS_CHANNELS];
    double velocity[ESIS_BINS + 1 > 21 ? ESIS_BINS + 1 : 21];
    double wavelength[21];
    double *scene_x, *scene_y, *sensor_x, *sensor_y;
} case_arrays;

static void *allocate(size_t count)
{
    void *p = malloc(count * sizeof(double));
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void tutorial_params(spart_context *context, int n, case_arrays *a,
                            spart_instrument_params *p)
{
    memset(a, 0, sizeof *a);
    a->scene_x = allocate((size_t)n + 1);
    a->scene_y = allocate((size_t)n + 1);
    a->sensor_x = allocate(BENCH_MART_SENSOR_X + 1);
    a->sensor_y = allocate(BENCH_MART_SENSOR_Y + 1);
    bench_mart_params(n, a->angle, a->velocity, a->wavelength, a->scene_x, a->scene_y, a->sensor_x,
                      a->sensor_y, p);
    CHECK_SPART(context, spart_wavelength_from_velocity(context, 171.0, BENCH_MART_BINS + 1,
                                                        a->velocity, a->wavelength));
}

static void free_arrays(case_arrays *a)
{
    free(a->scene_x);
    free(a->scene_y);
    free(a->sensor_x);
    free(a->sensor_y);
}

/* Where a build's time goes, by the library's progress reports: the time
 * up to each report is given to the report's stage ("weights",
 * "conservative transpose", "scale", "assembly", "stream count", ...),
 * so a stage's figure is the work that ended in its reports. */
enum { MAX_STAGES = 12 };
typedef struct stage_times {
    const char *name[MAX_STAGES];
    double seconds[MAX_STAGES];
    int count;
    double last;
} stage_times;

static void on_progress(void *user, const char *stage, int64_t done, int64_t total)
{
    (void)done, (void)total;
    stage_times *t = user;
    double now = bench_seconds();
    int k = 0;
    while (k < t->count && strcmp(t->name[k], stage) != 0) {
        k++;
    }
    if (k == t->count && t->count < MAX_STAGES) {
        t->name[t->count++] = stage; /* the library's string literals */
    }
    if (k < MAX_STAGES) {
        t->seconds[k] += now - t->last;
    }
    t->last = now;
}

static double build_seconds(spart_context *context, const spart_instrument_params *p,
                            spart_instrument **instrument)
{
    double start = bench_seconds();
    CHECK_SPART(context, spart_instrument_create(context, p, instrument));
    return bench_seconds() - start;
}

/* Whether two regridders' CSR arrays are the same, bit for bit (either may
 * be on the device: copied back first). */
static int same_csr(spart_context *context, const spart_regridder *a, const spart_regridder *b)
{
    spart_regridder *copies[2] = {NULL, NULL};
    const spart_regridder *host[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        if (spart_regridder_cuda_device(host[k]) >= 0) {
            CHECK_SPART(context, spart_regridder_to_host(context, host[k], &copies[k]));
            host[k] = copies[k];
        }
    }
    const int64_t *ra, *rb;
    const int32_t *ca32, *cb32;
    const int64_t *ca64, *cb64;
    const void *va, *vb;
    CHECK_SPART(context, spart_regridder_csr(host[0], &ra, &ca32, &ca64, &va));
    CHECK_SPART(context, spart_regridder_csr(host[1], &rb, &cb32, &cb64, &vb));
    int64_t rows = spart_regridder_num_rows(host[0]), n = spart_regridder_num_entries(host[0]);
    size_t value = spart_regridder_value_type(host[0]) == SPART_FLOAT32 ? 4 : 8;
    int same = rows == spart_regridder_num_rows(host[1]) &&
               n == spart_regridder_num_entries(host[1]) && (ca32 != NULL) == (cb32 != NULL) &&
               memcmp(ra, rb, (size_t)(rows + 1) * sizeof(int64_t)) == 0 &&
               (n == 0 || (memcmp(ca32 != NULL ? (const void *)ca32 : (const void *)ca64,
                                  cb32 != NULL ? (const void *)cb32 : (const void *)cb64,
                                  (size_t)n * (ca32 != NULL ? 4 : 8)) == 0 &&
                           memcmp(va, vb, (size_t)n * value) == 0));
    spart_regridder_free(copies[0]);
    spart_regridder_free(copies[1]);
    return same;
}

typedef struct result {
    char name[96];
    double entries;     /* a direction (forward) */
    double host_s;      /* < 0: not run */
    double device_s;    /* the faster of two (or the one of --device-once) */
    double floor_s;     /* bytes written once over the copy rate */
    double full_s;      /* ESIS: the device time extrapolated to the whole problem; < 0 else */
    int same;           /* -1: not compared */
    stage_times stages; /* of the last device build; the rest after its last report */
    double rest_s;
} result;

/* `reference` (may be NULL): a device instrument of the same params built
 * otherwise (in memory), compared with when the host does not build;
 * `keep` (may be NULL) receives the device instrument instead of its free. */
static result run_case(spart_context *context, const char *name, spart_instrument_params *p,
                       int host, int device_builds, double rate, double scale_to_full,
                       const spart_instrument *reference, spart_instrument **keep)
{
    result r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.host_s = -1.0;
    r.same = -1;
    r.full_s = -1.0;
    spart_instrument *on_host = NULL, *on_device = NULL;
    p->on_device = 0;
    if (host) {
        r.host_s = build_seconds(context, p, &on_host);
    }
    p->on_device = 1;
    r.device_s = 1e300;
    for (int k = 0; k < device_builds; k++) {
        spart_instrument_free(on_device);
        on_device = NULL;
        if (k == device_builds - 1) { /* the last build's stages */
            memset(&r.stages, 0, sizeof r.stages);
            r.stages.last = bench_seconds();
            CHECK_SPART(context, spart_context_set_progress(context, on_progress, &r.stages));
        }
        double seconds = build_seconds(context, p, &on_device);
        r.device_s = bench_smaller(r.device_s, seconds);
        if (k == device_builds - 1) {
            r.rest_s = bench_seconds() - r.stages.last;
            CHECK_SPART(context, spart_context_set_progress(context, NULL, NULL));
        }
    }
    p->on_device = 0;
    const spart_regridder *df = spart_instrument_forward(on_device);
    const spart_regridder *db = spart_instrument_backward(on_device);
    r.entries = (double)spart_regridder_num_entries(df);
    double bytes = 24.0 * (r.entries + (double)spart_regridder_num_entries(db)) +
                   bench_csr_bytes(df) + bench_csr_bytes(db);
    r.floor_s = bytes / rate;
    if (scale_to_full > 0) {
        r.full_s = r.device_s * scale_to_full;
    }
    const spart_instrument *against = on_host != NULL ? on_host : reference;
    if (against != NULL) {
        r.same = same_csr(context, spart_instrument_forward(against), df) &&
                 same_csr(context, spart_instrument_backward(against), db);
    }
    printf("%-44s %.4g weights a direction; host %.3f s, device %.3f s (%.1fx), floor %.3f ms "
           "(device at %.0f%%)%s%s\n",
           r.name, r.entries, r.host_s, r.device_s, r.host_s > 0 ? r.host_s / r.device_s : 0.0,
           1e3 * r.floor_s, 100.0 * r.floor_s / r.device_s,
           r.same < 0 ? "" : (r.same ? ", same CSR bits" : ", CSR BITS DIFFER"), "");
    if (r.full_s > 0) {
        printf("  whole ESIS (x %.1f): about %.2f s on the device\n", scale_to_full, r.full_s);
    }
    printf("  device build's time by stage:");
    for (int k = 0; k < r.stages.count; k++) {
        printf(" %s %.3f s;", r.stages.name[k], r.stages.seconds[k]);
    }
    printf(" after the last report %.3f s\n", r.rest_s);
    spart_instrument_free(on_host);
    if (keep != NULL) {
        *keep = on_device;
    } else {
        spart_instrument_free(on_device);
    }
    return r;
}

/* The device's copy rate (bytes/s) over a buffer of `bytes`, read and written. */
static double device_copy_rate(spart_context *context, size_t bytes)
{
    void *a = NULL, *b = NULL;
    double back = 0.0;
    CHECK_SPART(context, spart_device_malloc(context, bytes, &a));
    CHECK_SPART(context, spart_device_malloc(context, bytes, &b));
    double best = 1e300;
    for (int k = 0; k < 4; k++) {
        double start = bench_seconds();
        CHECK_SPART(context, spart_device_copy_on_device(context, b, a, bytes));
        CHECK_SPART(context, spart_device_copy_to_host(context, &back, b, sizeof back));
        best = bench_smaller(best, bench_seconds() - start);
    }
    spart_device_free(context, a);
    spart_device_free(context, b);
    return 2.0 * (double)bytes / best;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0); /* each case's line out as it ends */
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    if (spart_context_set_cuda_device(context, 0) != SPART_OK) {
        printf("skipped: %s\n", spart_context_error(context));
        spart_context_free(context);
        return 77;
    }
    double rate = device_copy_rate(context, (size_t)1 << 30);
    int threads = omp_get_max_threads();
    printf("device copy rate %.0f GB/s; host builds on %d threads\n", rate / 1e9, threads);
    result results[8];
    int count = 0;
    case_arrays a;
    spart_instrument_params p;
    /* warm-up: the device's start paid by a small build */
    tutorial_params(context, 16, &a, &p);
    p.on_device = 1;
    spart_instrument *warm = NULL;
    (void)build_seconds(context, &p, &warm);
    spart_instrument_free(warm);
    free_arrays(&a);
    int sizes[2] = {64, 256};
    for (int k = 0; k < 2; k++) {
        char name[96];
        snprintf(name, sizeof name, "tutorial instrument, %d^2 scene", sizes[k]);
        tutorial_params(context, sizes[k], &a, &p);
        results[count++] = run_case(context, name, &p, 1, o.device_builds, rate, -1.0, NULL, NULL);
        free_arrays(&a);
    }
    spart_instrument *in_memory = NULL;
    for (int streamed = o.esis_in_memory ? 0 : 1; streamed < (o.budget_gb > 0 ? 2 : 1);
         streamed++) {
        char name[96];
        snprintf(name, sizeof name, "ESIS slice %d x %d x %d^2 x %d%s", o.lines, o.bins, o.cells,
                 ESIS_CHANNELS, streamed ? ", streamed" : "");
        esis_arrays e;
        esis_params(context, o.cells, o.lines, o.bins, streamed ? o.budget_gb * 1e9 : 0.0, &e, &p);
        /* without the host, the streamed build is compared with the
         * in-memory device build (one block: the host's bits by
         * test_cuda_instrument) */
        int compare = !o.host_esis && o.esis_in_memory && o.budget_gb > 0;
        results[count++] =
            run_case(context, name, &p, o.host_esis, o.device_builds, rate, esis_full_factor(&e),
                     streamed ? in_memory : NULL, !streamed && compare ? &in_memory : NULL);
        esis_arrays_free(&e);
    }
    spart_instrument_free(in_memory);
    int failed = 0;
    for (int k = 0; k < count; k++) {
        failed |= results[k].same == 0;
    }
    if (o.markdown != NULL) {
        FILE *out = bench_markdown_open(o.markdown, argc, argv, threads,
                                        o.device_builds == 2
                                            ? "spart_instrument_create, the host once, the device "
                                              "the faster of two after a warm-up build"
                                            : "spart_instrument_create, the host once, the device "
                                              "once after a warm-up build");
        if (out != NULL) {
            fprintf(out, "- device copy rate: %.0f GB/s (read + write of 1 GiB)\n", rate / 1e9);
            fprintf(out,
                    "\n| case | weights a direction | host s (%d threads) | device s | "
                    "host / device | floor ms | floor / device | whole ESIS s "
                    "(extrapolated) | same CSR bits |\n",
                    threads);
            bench_markdown_rule(out, 9);
            for (int k = 0; k < count; k++) {
                const result *r = &results[k];
                fprintf(out, "| %s | %.4g | ", r->name, r->entries);
                if (r->host_s > 0) {
                    fprintf(out, "%.3f | %.3f | %.1fx | ", r->host_s, r->device_s,
                            r->host_s / r->device_s);
                } else {
                    fprintf(out, "- | %.3f | - | ", r->device_s);
                }
                fprintf(out, "%.3f | %.1f%% | ", 1e3 * r->floor_s,
                        100.0 * r->floor_s / r->device_s);
                if (r->full_s > 0) {
                    fprintf(out, "%.2f | ", r->full_s);
                } else {
                    fprintf(out, "- | ");
                }
                fprintf(out, "%s |\n",
                        r->same < 0
                            ? "not compared"
                            : (r->same ? (r->host_s > 0 ? "yes" : "yes (the device's in memory)")
                                       : "NO"));
            }
            fprintf(out, "\nThe device builds' time by stage (the last build; the time up to "
                         "each of the library's progress reports given to its stage):\n\n");
            for (int k = 0; k < count; k++) {
                const result *r = &results[k];
                fprintf(out, "- %s:", r->name);
                for (int j = 0; j < r->stages.count; j++) {
                    fprintf(out, " %s %.3f s;", r->stages.name[j], r->stages.seconds[j]);
                }
                fprintf(out, " after the last report %.3f s\n", r->rest_s);
            }
            fclose(out);
        }
    }
    spart_context_free(context);
    return failed ? 1 : 0;
}
