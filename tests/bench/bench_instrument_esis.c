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

#include "bench_util.h"
#include "spart.h"

enum { CHANNELS = 4, MAX_LINES = 7, FULL_BINS = 24, FULL_CELLS = 1139 };

/* examples/esis.yaml's lines (rest wavelength A, intensity scale), in an
 * order whose first L stay within the sensor for every L. */
static const double REST[MAX_LINES] = {609.79, 604.15, 599.59, 624.94, 629.73, 584.33, 580.91};
static const double SCALE[MAX_LINES] = {0.5, 0.15, 0.1, 0.25, 1.0, 0.5, 0.15};

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
    options o = {FULL_CELLS, 1, FULL_BINS, 3, 0.0, NULL};
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
    if (o.cells < 1 || o.lines < 1 || o.lines > MAX_LINES || o.bins < 1 || o.repeat < 1) {
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

/* The arrays an instrument's params point into. */
typedef struct esis_arrays {
    double angle[CHANNELS];
    double *edges; /* lines x (bins + 1) */
    double *scene; /* cells + 1 */
    double *sensor_x, *sensor_y;
    spart_instrument_line line[MAX_LINES];
} esis_arrays;

static void esis_params(spart_context *context, const options *o, esis_arrays *a,
                        spart_instrument_params *p)
{
    const int64_t sensor_x = 2048, sensor_y = 2080;
    a->edges = malloc((size_t)(o->lines * (o->bins + 1)) * sizeof(double));
    a->scene = malloc((size_t)(o->cells + 1) * sizeof(double));
    a->sensor_x = malloc((size_t)(sensor_x + 1) * sizeof(double));
    a->sensor_y = malloc((size_t)(sensor_y + 1) * sizeof(double));
    double *velocity = malloc((size_t)(o->bins + 1) * sizeof(double));
    if (a->edges == NULL || a->scene == NULL || a->sensor_x == NULL || a->sensor_y == NULL ||
        velocity == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int c = 0; c < CHANNELS; c++) {
        a->angle[c] = 90.0 * c;
    }
    for (int v = 0; v <= o->bins; v++) {
        velocity[v] = -450.0 + 900.0 * v / o->bins;
    }
    for (int k = 0; k < o->lines; k++) {
        double *edges = a->edges + k * (o->bins + 1);
        CHECK_SPART(context,
                    spart_wavelength_from_velocity(context, REST[k], o->bins + 1, velocity, edges));
        spart_instrument_line line = {o->bins, edges, SCALE[k]};
        a->line[k] = line;
    }
    free(velocity);
    for (int i = 0; i <= o->cells; i++) {
        a->scene[i] = 0.75 * (i - o->cells / 2.0);
    }
    for (int64_t i = 0; i <= sensor_x; i++) {
        a->sensor_x[i] = (double)i;
    }
    for (int64_t i = 0; i <= sensor_y; i++) {
        a->sensor_y[i] = (double)i;
    }
    spart_instrument_params_init(p);
    p->num_channel = CHANNELS;
    p->angle = a->angle;
    p->dispersion = 0.074;
    p->plate_scale = 0.75;
    p->wavelength_ref = 607.0;
    /* as examples/esis.yaml: the cells' edges on pixel edges across the
     * dispersion (an odd count of cells centred on 0 needs half a pixel) */
    p->position_ref[0] = sensor_x / 2.0;
    p->position_ref[1] = sensor_y / 2.0 + (o->cells % 2 == 1 ? 0.5 : 0.0);
    p->area_effective = 1.0;
    p->exposure_time = 10.0;
    p->quantum_yield = 5.4;
    p->read_noise = 4.0;
    p->num_scene_x = o->cells;
    p->scene_x = a->scene;
    p->num_scene_y = o->cells;
    p->scene_y = a->scene;
    p->num_sensor_x = sensor_x;
    p->sensor_x = a->sensor_x;
    p->num_sensor_y = sensor_y;
    p->sensor_y = a->sensor_y;
    p->solid_angle_steradian = 1;
    p->value_type = SPART_FLOAT32;
    p->num_line = o->lines;
    p->lines = a->line;
    p->memory_budget = (size_t)(o->budget_gb * 1e9);
}

/* Seconds of one product of `r` (on the device) of ones, the median of
 * `repeat`, each ended by a copy of one value back (which waits for it). */
static double device_product_seconds(spart_context *context, const spart_regridder *r, int repeat)
{
    int64_t rows = spart_regridder_num_rows(r), columns = spart_regridder_num_columns(r);
    double *x = NULL, *y = NULL, back = 0.0;
    CHECK_SPART(context,
                spart_device_malloc(context, (size_t)columns * sizeof(double), (void **)&x));
    CHECK_SPART(context, spart_device_malloc(context, (size_t)rows * sizeof(double), (void **)&y));
    double *ones = malloc((size_t)columns * sizeof(double));
    for (int64_t k = 0; k < columns; k++) {
        ones[k] = 1.0;
    }
    CHECK_SPART(context,
                spart_device_copy_to_device(context, x, ones, (size_t)columns * sizeof(double)));
    free(ones);
    spart_shape shape = spart_regridder_shape_input(r);
    spart_array array = {x, shape};
    double times[16];
    int n = repeat < 16 ? repeat : 16;
    for (int k = 0; k <= n; k++) { /* the first is a warm-up */
        double start = bench_seconds();
        CHECK_SPART(context, spart_regridder_apply(context, r, &array, y, rows));
        CHECK_SPART(context, spart_device_copy_to_host(context, &back, y, sizeof back));
        if (k > 0) {
            times[k - 1] = bench_seconds() - start;
        }
    }
    spart_device_free(context, x);
    spart_device_free(context, y);
    return bench_median(times, n);
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
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    esis_arrays arrays;
    spart_instrument_params params;
    esis_params(context, &o, &arrays, &params);
    double memory_before = peak_bytes();
    double start = bench_seconds();
    spart_instrument *instrument = NULL;
    CHECK_SPART(context, spart_instrument_create(context, &params, &instrument));
    double build = bench_seconds() - start;
    double memory = peak_bytes() - memory_before;
    const spart_regridder *forward = spart_instrument_forward(instrument);
    const spart_regridder *backward = spart_instrument_backward(instrument);
    double weights = (double)spart_regridder_num_entries(forward);
    double triples = (double)CHANNELS * o.lines * o.bins * (double)o.cells * o.cells;
    double full = (double)CHANNELS * MAX_LINES * FULL_BINS * (double)FULL_CELLS * FULL_CELLS;
    double csr = bench_csr_bytes(forward) + bench_csr_bytes(backward);
    int threads = omp_get_max_threads();
    printf("ESIS slice: %d lines x %d bins x %d^2 cells x %d channels, %d threads, %s\n", o.lines,
           o.bins, o.cells, CHANNELS, threads,
           o.budget_gb > 0 ? "streamed (memory_budget)" : "in memory");
    printf("  spart_instrument_create %.2f s; %.4g weights a direction (%.3f per channel, bin "
           "and cell), backward %lld; peak host memory +%.2f GB (%.1f bytes a weight a "
           "direction); CSR float32 %.2f GB\n",
           build, weights, weights / triples, (long long)spart_regridder_num_entries(backward),
           memory / 1e9, memory / weights, csr / 1e9);
    printf("  full ESIS (x %.1f): %.3g weights a direction, about %.0f GB of host memory to "
           "build this way, %.1f GB of float32 CSR (both operators)\n",
           full / triples, weights * full / triples, memory * full / triples / 1e9,
           csr * full / triples / 1e9);
    double to_device = -1.0, forward_s = -1.0, backward_s = -1.0, rate = -1.0;
    if (spart_context_set_cuda_device(context, 0) == SPART_OK) {
        spart_regridder *d_forward = NULL, *d_backward = NULL;
        start = bench_seconds();
        CHECK_SPART(context, spart_regridder_to_device(context, forward, &d_forward));
        CHECK_SPART(context, spart_regridder_to_device(context, backward, &d_backward));
        to_device = bench_seconds() - start;
        forward_s = device_product_seconds(context, d_forward, o.repeat);
        backward_s = device_product_seconds(context, d_backward, o.repeat);
        rate = device_copy_rate(context, (size_t)1 << 30);
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
                    o.lines, o.bins, o.cells, CHANNELS, o.budget_gb > 0 ? ", streamed" : "", build,
                    weights, weights / triples, memory / 1e9, memory / weights,
                    weights * full / triples, memory * full / triples / 1e9, to_device,
                    1e3 * forward_s, 1e3 * backward_s, rate / 1e9);
            fclose(out);
        }
    }
    spart_instrument_free(instrument);
    free(arrays.edges);
    free(arrays.scene);
    free(arrays.sensor_x);
    free(arrays.sensor_y);
    spart_context_free(context);
    return 0;
}
