/*
 * tests/bench/bench_mpi_split.c: one instrument's operators split over MPI
 * ranks against the whole operators in one rank (label `bench`, built
 * with MPI and -DSPART_BUILD_BENCHMARKS=ON):
 *
 *   mpirun -np P bench_mpi_split [--scene N] [--device] [--repeat R]
 *                                [--iterations K] [--frames F] [--markdown FILE]
 *
 * The ESIS-like instrument of the MART benchmarks (bench_util.h) on an N x
 * N scene (default 128). Per product (forward, backward): the whole
 * product on rank 0 alone (the others wait), and the split product
 * (spart_distributed_operator_apply: this rank's rows, then the rows
 * gathered on every rank), the slowest rank's time, medians of R; the
 * bytes each rank receives in the gather, and, for device ranks, the
 * bytes staged through the host. Then K MART iterations (a fixed count)
 * both ways, and F frames (default 8) of K iterations solved by one rank
 * (spart_mart_solve_frames) against the frames split over the ranks
 * (spart_mart_solve_frames_distributed, each rank the whole operators);
 * whether the solutions have the same bits. With ranks
 * sharing one GPU or one host's cores the split cannot be faster: these
 * figures measure the exchange's cost; the scaling needs several GPUs.
 */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "spart.h"
#include "spart/distributed.h"

#define MAX_REPEAT 64

#define REQUIRE(context, call)                                                                     \
    do {                                                                                           \
        spart_status status_ = (call);                                                             \
        if (status_ != SPART_OK) {                                                                 \
            fprintf(stderr, "bench_mpi_split: %s: %s\n", #call, spart_context_error(context));     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

typedef struct settings {
    int scene;
    int device;
    int repeat;
    int iterations;
    int frames;
    const char *markdown;
} settings;

static void parse(int argc, char **argv, settings *s)
{
    s->scene = 128;
    s->device = 0;
    s->repeat = 9;
    s->iterations = 8;
    s->frames = 8;
    s->markdown = NULL;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--device") == 0) {
            s->device = 1;
        } else if (strcmp(argv[k], "--scene") == 0 && k + 1 < argc) {
            s->scene = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--repeat") == 0 && k + 1 < argc) {
            s->repeat = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--iterations") == 0 && k + 1 < argc) {
            s->iterations = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--frames") == 0 && k + 1 < argc) {
            s->frames = atoi(argv[++k]);
        } else if (strcmp(argv[k], "--markdown") == 0 && k + 1 < argc) {
            s->markdown = argv[++k];
        }
    }
    s->repeat = s->repeat < 1 ? 1 : s->repeat > MAX_REPEAT ? MAX_REPEAT : s->repeat;
    s->scene = s->scene < 8 ? 8 : s->scene;
    s->frames = s->frames < 1 ? 1 : s->frames;
}

/* The slowest rank's seconds. */
static double slowest(double seconds)
{
    double worst = seconds;
    MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* Median over repeats of the slowest rank's time of `run`. */
typedef void (*timed_fn)(void *user);
static double time_median(timed_fn run, void *user, int repeat, int only_rank_zero)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double times[MAX_REPEAT];
    for (int r = 0; r < repeat; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = bench_seconds();
        if (!only_rank_zero || rank == 0) {
            run(user);
        }
        times[r] = slowest(bench_seconds() - start);
    }
    return bench_median(times, repeat);
}

typedef struct product_run {
    spart_context *context;
    const spart_regridder *whole;
    spart_distributed_operator *split;
    const double *x;
    double *y;
    int device;
} product_run;

static void run_whole(void *user)
{
    product_run *p = user;
    spart_array x = {p->x, spart_regridder_shape_input(p->whole)};
    REQUIRE(p->context, spart_regridder_apply(p->context, p->whole, &x, p->y,
                                              spart_regridder_num_rows(p->whole)));
    if (p->device) { /* the split product waits for its gather; so does this */
        double one;
        REQUIRE(p->context, spart_memory_copy(p->context, &one, 0, p->y, 1, sizeof one));
    }
}

static void run_split(void *user)
{
    product_run *p = user;
    REQUIRE(p->context, spart_distributed_operator_apply(p->context, p->split, p->x, p->y));
}

typedef struct solve_run {
    spart_context *context;
    const spart_mart_operators *operators;
    const double *observed;
    const spart_mart_options *options;
    spart_mart_result *result;
} solve_run;

static void run_solve(void *user)
{
    solve_run *s = user;
    spart_mart_result_free(s->result);
    s->result = NULL;
    REQUIRE(s->context,
            spart_mart_solve(s->context, s->operators, s->observed, s->options, &s->result));
}

/* --device on a host of several GPUs: each rank its own (its rank on the
 * host mod the devices visible); with one GPU the ranks share it. */
static void choose_device(spart_context *context)
{
    MPI_Comm host;
    int local_rank = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(host, &local_rank);
        MPI_Comm_free(&host);
    }
    int devices = 0;
    while (devices < 1024 && spart_context_set_cuda_device(context, devices) == SPART_OK) {
        devices++;
    }
    if (devices > 0) {
        REQUIRE(context, spart_context_set_cuda_device(context, local_rank % devices));
    }
}

/* Many frames: all on rank 0 (spart_mart_solve_frames), or split over
 * the ranks (spart_mart_solve_frames_distributed, the solutions gathered
 * on every rank). */
typedef struct frames_run {
    spart_context *context;
    const spart_communicator *communicator;
    const spart_mart_operators *operators;
    const double *observed;
    const spart_mart_options *options;
    int64_t frames;
    spart_mart_result **results;
    double *solutions;
    int split;
} frames_run;

static void run_frames(void *user)
{
    frames_run *r = user;
    for (int64_t f = 0; f < r->frames; f++) {
        spart_mart_result_free(r->results[f]);
        r->results[f] = NULL;
    }
    if (r->split) {
        REQUIRE(r->context, spart_mart_solve_frames_distributed(
                                r->context, r->communicator, r->operators, r->frames, r->observed,
                                r->options, 0, r->results, r->solutions, NULL));
    } else {
        REQUIRE(r->context, spart_mart_solve_frames(r->context, r->operators, r->frames,
                                                    r->observed, r->options, 0, r->results));
    }
}

int main(int argc, char **argv)
{
    int provided = 0; /* spart calls MPI from the main thread, its OpenMP threads never */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    settings s;
    parse(argc, argv, &s);
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (s.device) {
        choose_device(context);
    }
    spart_communicator *communicator = NULL;
    REQUIRE(context, spart_communicator_create(context, NULL, &communicator));

    int n = s.scene;
    double angle[4], velocity[21], wavelength[21], sensor_x[129], sensor_y[65];
    double *x = malloc((size_t)(n + 1) * sizeof *x);
    double *y = malloc((size_t)(n + 1) * sizeof *y);
    spart_instrument_params params;
    bench_mart_params(n, angle, velocity, wavelength, x, y, sensor_x, sensor_y, &params);
    int64_t scene_size = (int64_t)BENCH_MART_BINS * n * n;
    double *scene = malloc((size_t)scene_size * sizeof *scene);
    REQUIRE(context, spart_scene_gaussians(context, 171.0, BENCH_MART_BINS, velocity, n, x, n, y,
                                           NULL, wavelength, scene));
    spart_instrument *instrument = NULL;
    REQUIRE(context, spart_instrument_create(context, &params, &instrument));
    int64_t image_values =
        spart_instrument_num_channel(instrument) * spart_instrument_image_size(instrument);
    double *observed = malloc((size_t)image_values * sizeof *observed);
    REQUIRE(context, spart_instrument_observe(context, instrument, scene, 1, observed, NULL));
    /* the frames: the same scene, each frame its own noise */
    int64_t frames = s.frames;
    double *observed_frames = malloc((size_t)(frames * image_values) * sizeof *observed_frames);
    for (int64_t f = 0; f < frames; f++) {
        REQUIRE(context, spart_instrument_observe(context, instrument, scene, (uint64_t)(1 + f),
                                                  observed_frames + f * image_values, NULL));
    }

    const spart_regridder *host[2] = {spart_instrument_forward(instrument),
                                      spart_instrument_backward(instrument)};
    const spart_regridder *whole[2] = {host[0], host[1]};
    spart_regridder *device_copy[2] = {NULL, NULL};
    spart_distributed_operator *split[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        if (s.device) {
            REQUIRE(context, spart_regridder_to_device(context, host[k], &device_copy[k]));
            whole[k] = device_copy[k];
        }
        REQUIRE(context, spart_distributed_operator_create(context, communicator, host[k], s.device,
                                                           &split[k]));
    }
    /* the vectors of both products, where the operators are */
    int64_t largest = spart_regridder_num_rows(host[1]) > spart_regridder_num_columns(host[1])
                          ? spart_regridder_num_rows(host[1])
                          : spart_regridder_num_columns(host[1]);
    double *in = NULL;
    double *out = NULL;
    double *observed_there = observed;
    REQUIRE(context, spart_memory_allocate(context, s.device, (size_t)largest * 8, (void **)&in));
    REQUIRE(context, spart_memory_allocate(context, s.device, (size_t)largest * 8, (void **)&out));
    double *ones = malloc((size_t)largest * sizeof *ones);
    for (int64_t k = 0; k < largest; k++) {
        ones[k] = 1.0 + (double)(k % 7);
    }
    REQUIRE(context, spart_memory_copy(context, in, s.device, ones, 0, (size_t)largest * 8));
    if (s.device) {
        REQUIRE(context, spart_memory_allocate(context, 1, (size_t)image_values * 8,
                                               (void **)&observed_there));
        REQUIRE(context, spart_memory_copy(context, observed_there, 1, observed, 0,
                                           (size_t)image_values * 8));
    }

    const char *names[2] = {"forward", "backward"};
    double whole_ms[2], split_ms[2];
    long long gathered[2], staged[2], entries_min[2], entries_max[2];
    for (int k = 0; k < 2; k++) {
        product_run p = {context, whole[k], split[k], in, out, s.device};
        whole_ms[k] = 1e3 * time_median(run_whole, &p, s.repeat, 1);
        split_ms[k] = 1e3 * time_median(run_split, &p, s.repeat, 0);
        long long rows = spart_distributed_operator_num_rows(split[k]);
        long long local = spart_distributed_operator_local_rows(split[k]);
        long long mine = spart_distributed_operator_local_entries(split[k]);
        gathered[k] = 8 * (rows - local);
        staged[k] =
            s.device ? 8 * (rows + local + spart_distributed_operator_local_columns(split[k])) : 0;
        MPI_Allreduce(&mine, &entries_min[k], 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &entries_max[k], 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        long long most = gathered[k];
        MPI_Allreduce(&most, &gathered[k], 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    }

    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = s.iterations;
    spart_mart_regridder_pair pair = {whole[0], whole[1], spart_instrument_num_channel(instrument),
                                      params.quantum_yield, params.read_noise};
    spart_mart_operators whole_operators;
    REQUIRE(context, spart_mart_operators_from_regridders(context, &pair, &whole_operators));
    spart_distributed_mart_pair split_pair = {split[0], split[1], pair.num_channel, pair.gain,
                                              pair.read_noise};
    spart_mart_operators split_operators;
    REQUIRE(context, spart_distributed_mart_operators(context, &split_pair, &split_operators));
    solve_run whole_solve = {context, &whole_operators, observed_there, &options, NULL};
    solve_run split_solve = {context, &split_operators, observed_there, &options, NULL};
    int solve_repeat = s.repeat < 3 ? s.repeat : 3;
    double whole_solve_ms = 1e3 * time_median(run_solve, &whole_solve, solve_repeat, 1);
    double split_solve_ms = 1e3 * time_median(run_solve, &split_solve, solve_repeat, 0);
    int same = rank != 0 || memcmp(spart_mart_result_solution(whole_solve.result),
                                   spart_mart_result_solution(split_solve.result),
                                   (size_t)scene_size * sizeof(double)) == 0;
    int all_same = 0;
    MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    /* many frames: one rank alone against the frames split over the ranks */
    double *frames_there = observed_frames;
    size_t frames_bytes = (size_t)(frames * image_values) * sizeof(double);
    if (s.device) {
        REQUIRE(context, spart_memory_allocate(context, 1, frames_bytes, (void **)&frames_there));
        REQUIRE(context,
                spart_memory_copy(context, frames_there, 1, observed_frames, 0, frames_bytes));
    }
    spart_mart_result **results = calloc((size_t)frames, sizeof *results);
    double *solutions = malloc((size_t)(frames * scene_size) * sizeof *solutions);
    frames_run alone = {context,      communicator, &whole_operators,
                        frames_there, &options,     frames,
                        results,      solutions,    0};
    double frames_whole_ms = 1e3 * time_median(run_frames, &alone, solve_repeat, 1);
    double *first_solution = malloc((size_t)scene_size * sizeof *first_solution);
    double *last_solution = malloc((size_t)scene_size * sizeof *last_solution);
    if (rank == 0) {
        memcpy(first_solution, spart_mart_result_solution(results[0]),
               (size_t)scene_size * sizeof(double));
        memcpy(last_solution, spart_mart_result_solution(results[frames - 1]),
               (size_t)scene_size * sizeof(double));
    }
    frames_run split_frames = alone;
    split_frames.split = 1;
    double frames_split_ms = 1e3 * time_median(run_frames, &split_frames, solve_repeat, 0);
    int frames_same =
        rank != 0 || (memcmp(first_solution, solutions, (size_t)scene_size * sizeof(double)) == 0 &&
                      memcmp(last_solution, solutions + (frames - 1) * scene_size,
                             (size_t)scene_size * sizeof(double)) == 0);
    MPI_Allreduce(MPI_IN_PLACE, &frames_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    all_same = all_same && frames_same;
    for (int64_t f = 0; f < frames; f++) {
        spart_mart_result_free(results[f]);
    }
    free(results);
    free(solutions);
    free(first_solution);
    free(last_solution);
    free(observed_frames);
    if (s.device) {
        spart_memory_free(context, 1, frames_there);
    }

    if (rank == 0) {
        printf("bench_mpi_split: %d ranks, %s, scene %d x %d x %d\n", size,
               s.device ? "operators on the CUDA device" : "host", BENCH_MART_BINS, n, n);
        FILE *md = s.markdown != NULL
                       ? bench_markdown_open(s.markdown, argc, argv, omp_get_max_threads(),
                                             "median of the slowest rank's time, MPI_Barrier "
                                             "before each run")
                       : NULL;
        FILE *outs[2] = {stdout, md};
        for (int o = 0; o < 2; o++) {
            FILE *f = outs[o];
            if (f == NULL) {
                continue;
            }
            fprintf(f, "\n%d MPI ranks, %s; the instrument of bench_mart on a %d x %d scene\n\n",
                    size, s.device ? "each with the operators on CUDA device 0 (shared)" : "host",
                    n, n);
            fprintf(f,
                    "| product | entries a rank (min - max) | whole, one rank (ms) | split (ms) "
                    "| split / whole | bytes gathered a rank | bytes staged through the host |\n");
            bench_markdown_rule(f, 7);
            for (int k = 0; k < 2; k++) {
                fprintf(f, "| %s | %lld - %lld | %.3f | %.3f | %.2f | %lld | %lld |\n", names[k],
                        entries_min[k], entries_max[k], whole_ms[k], split_ms[k],
                        split_ms[k] / whole_ms[k], gathered[k], staged[k]);
            }
            fprintf(f, "| MART, %d iterations | | %.3f | %.3f | %.2f | | |\n", s.iterations,
                    whole_solve_ms, split_solve_ms, split_solve_ms / whole_solve_ms);
            fprintf(f,
                    "| MART, %lld frames x %d iterations, frames split (whole operators a rank) "
                    "| | %.3f | %.3f | %.2f | | |\n",
                    (long long)frames, s.iterations, frames_whole_ms, frames_split_ms,
                    frames_split_ms / frames_whole_ms);
            fprintf(f, "\nsplit solution = one-rank solution, bit for bit: %s\n",
                    all_same ? "yes" : "NO");
        }
        if (md != NULL) {
            fclose(md);
        }
    }
    spart_mart_result_free(whole_solve.result);
    spart_mart_result_free(split_solve.result);
    spart_memory_free(context, s.device, in);
    spart_memory_free(context, s.device, out);
    if (s.device) {
        spart_memory_free(context, 1, observed_there);
    }
    for (int k = 0; k < 2; k++) {
        spart_distributed_operator_free(split[k]);
        spart_regridder_free(device_copy[k]);
    }
    spart_instrument_free(instrument);
    spart_communicator_free(communicator);
    spart_context_free(context);
    free(ones);
    free(observed);
    free(scene);
    free(x);
    free(y);
    MPI_Finalize();
    return all_same ? 0 : 1;
}
