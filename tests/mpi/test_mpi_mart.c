/*
 * tests/mpi/test_mpi_mart.c: MART over the ranks gives the one-process
 * solve bit for bit (label `mpi`; 1, 2 and 4 ranks; --device: operators
 * and MART on the CUDA device, ranks sharing it).
 *
 *   - one operator split: spart_distributed_mart_operators on every rank
 *     against spart_mart_operators_from_regridders in this process: the
 *     same solution, merits and correlations, iteration for iteration;
 *   - frames split: spart_mart_solve_frames_distributed of 5 noisy frames
 *     (which stop at different iterations) against spart_mart_solve of each
 *     frame here: the same solutions (gathered in frame order), iteration
 *     counts, and each rank's own results.
 */
#include "mpi_test_util.h"
#include "spart.h"

#define assert_int_equal(a, b) MPI_CHECK((a) == (b), "%lld != %lld", (long long)(a), (long long)(b))
#include "test_small_instrument.h"

#define NUM_FRAMES 5

typedef struct problem {
    spart_instrument *instrument;
    spart_regridder *forward; /* the operators where the solve runs */
    spart_regridder *backward;
    spart_mart_regridder_pair pair;
    double *observed; /* NUM_FRAMES frames, host */
    double *observed_there;
    int64_t frame_size;
    int64_t scene_size;
    int on_device;
} problem;

static void problem_make(spart_context *context, int on_device, problem *made)
{
    memset(made, 0, sizeof *made);
    small_instrument p;
    make_small_instrument(context, &p);
    MPI_REQUIRE_OK(context, spart_instrument_create(context, &p.params, &made->instrument));
    made->on_device = on_device;
    made->scene_size = spart_instrument_scene_size(made->instrument);
    made->frame_size = spart_instrument_num_channel(made->instrument) *
                       spart_instrument_image_size(made->instrument);
    made->observed = malloc((size_t)(NUM_FRAMES * made->frame_size) * sizeof(double));
    for (int f = 0; f < NUM_FRAMES; f++) {
        MPI_REQUIRE_OK(context, spart_instrument_observe(
                                    context, made->instrument, p.scene, (uint64_t)(100 + f),
                                    made->observed + f * made->frame_size, NULL));
    }
    free(p.scene);
    made->forward = (spart_regridder *)spart_instrument_forward(made->instrument);
    made->backward = (spart_regridder *)spart_instrument_backward(made->instrument);
    made->observed_there = made->observed;
    size_t bytes = (size_t)(NUM_FRAMES * made->frame_size) * sizeof(double);
    if (on_device) {
        MPI_REQUIRE_OK(context, spart_regridder_to_device(context, made->forward, &made->forward));
        MPI_REQUIRE_OK(context,
                       spart_regridder_to_device(context, made->backward, &made->backward));
        MPI_REQUIRE_OK(context,
                       spart_memory_allocate(context, 1, bytes, (void **)&made->observed_there));
        MPI_REQUIRE_OK(
            context, spart_memory_copy(context, made->observed_there, 1, made->observed, 0, bytes));
    }
    made->pair.forward = made->forward;
    made->pair.backward = made->backward;
    made->pair.num_channel = spart_instrument_num_channel(made->instrument);
    made->pair.gain = p.params.quantum_yield;
    made->pair.read_noise = p.params.read_noise;
}

static void problem_free(spart_context *context, problem *made)
{
    if (made->on_device) {
        spart_regridder_free(made->forward);
        spart_regridder_free(made->backward);
        spart_memory_free(context, 1, made->observed_there);
    }
    spart_instrument_free(made->instrument);
    free(made->observed);
}

/* Two results with the same bits everywhere. */
static void check_same_result(const spart_mart_result *a, const spart_mart_result *b,
                              const char *what, int frame)
{
    int64_t iterations = spart_mart_result_num_iterations(a);
    int64_t channels = spart_mart_result_num_channel(a);
    MPI_CHECK(iterations == spart_mart_result_num_iterations(b), "%s frame %d: %lld != %lld", what,
              frame, (long long)iterations, (long long)spart_mart_result_num_iterations(b));
    if (iterations != spart_mart_result_num_iterations(b)) {
        return;
    }
    MPI_CHECK(spart_mart_result_success(a) == spart_mart_result_success(b), "%s", what);
    int64_t n = spart_mart_result_scene_size(a);
    MPI_CHECK(same_bits(spart_mart_result_solution(a), spart_mart_result_solution(b), n),
              "%s frame %d: solution differs at %lld", what, frame,
              (long long)first_difference(spart_mart_result_solution(a),
                                          spart_mart_result_solution(b), n));
    MPI_CHECK(same_bits(spart_mart_result_mean_chi_squared(a),
                        spart_mart_result_mean_chi_squared(b), iterations * channels),
              "%s frame %d: merits", what, frame);
    MPI_CHECK(same_bits(spart_mart_result_correlation(a), spart_mart_result_correlation(b),
                        iterations * channels),
              "%s frame %d: correlations", what, frame);
}

static void options_for_test(spart_mart_options *options)
{
    spart_mart_options_init(options);
    options->threshold = 1e-2; /* frames stop after different counts */
    options->max_iterations = 25;
}

/* One operator over the ranks: every rank solves frame 0 with the split
 * operators, and gets this process's solve. */
static void check_split_operator(spart_context *context, const spart_communicator *communicator,
                                 problem *made)
{
    spart_mart_options options;
    options_for_test(&options);
    spart_mart_operators whole;
    MPI_REQUIRE_OK(context, spart_mart_operators_from_regridders(context, &made->pair, &whole));
    spart_mart_result *reference = NULL;
    MPI_REQUIRE_OK(context,
                   spart_mart_solve(context, &whole, made->observed_there, &options, &reference));

    /* a host regridder to split: the device copies come back (their arrays
     * are the host's, bit for bit) */
    const spart_regridder *hosts[2] = {spart_instrument_forward(made->instrument),
                                       spart_instrument_backward(made->instrument)};
    spart_distributed_operator *split[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        MPI_REQUIRE_OK(context, spart_distributed_operator_create(context, communicator, hosts[k],
                                                                  made->on_device, &split[k]));
    }
    spart_distributed_mart_pair pair = {split[0], split[1], made->pair.num_channel, made->pair.gain,
                                        made->pair.read_noise};
    spart_mart_operators operators;
    MPI_REQUIRE_OK(context, spart_distributed_mart_operators(context, &pair, &operators));
    spart_mart_result *result = NULL;
    MPI_REQUIRE_OK(context,
                   spart_mart_solve(context, &operators, made->observed_there, &options, &result));
    check_same_result(result, reference, "split operator", 0);

    /* the many-frame driver over split operators (every rank all frames,
     * one frame at a time through the callbacks): frame 0 is the same */
    spart_mart_result *frames[NUM_FRAMES];
    MPI_REQUIRE_OK(context, spart_mart_solve_frames(context, &operators, NUM_FRAMES,
                                                    made->observed_there, &options, 0, frames));
    check_same_result(frames[0], reference, "split operator, solve_frames", 0);
    for (int f = 0; f < NUM_FRAMES; f++) {
        spart_mart_result_free(frames[f]);
    }

    /* wrong pairs are refused */
    spart_distributed_mart_pair swapped = {split[1], split[0], made->pair.num_channel, 1.0, 0.0};
    MPI_CHECK(spart_distributed_mart_operators(context, &swapped, &operators) ==
                  SPART_ERROR_SHAPE_MISMATCH,
              "swapped pair");
    pair.gain = 0.0;
    MPI_CHECK(spart_distributed_mart_operators(context, &pair, &operators) ==
                  SPART_ERROR_INVALID_ARGUMENT,
              "zero gain");
    spart_mart_result_free(result);
    spart_mart_result_free(reference);
    spart_distributed_operator_free(split[0]);
    spart_distributed_operator_free(split[1]);
}

/* Which frames a rank's callback was told of. */
static int frames_seen[NUM_FRAMES];

static int record_frame(void *user, const spart_mart_progress *progress)
{
    (void)user;
    if (progress->frame >= 0 && progress->frame < NUM_FRAMES) {
        frames_seen[progress->frame] = 1;
    }
    return 0;
}

/* Frames over the ranks: each frame as it is solved alone. */
static void check_frames(spart_context *context, const spart_communicator *communicator,
                         problem *made)
{
    spart_mart_options options;
    options_for_test(&options);
    options.keep_intermediate = 1; /* every state, for the all-gather of results */
    spart_mart_operators operators;
    MPI_REQUIRE_OK(context, spart_mart_operators_from_regridders(context, &made->pair, &operators));
    spart_mart_result *reference[NUM_FRAMES];
    for (int f = 0; f < NUM_FRAMES; f++) {
        MPI_REQUIRE_OK(context, spart_mart_solve(context, &operators,
                                                 made->observed_there + f * made->frame_size,
                                                 &options, &reference[f]));
    }
    spart_mart_result *results[NUM_FRAMES];
    double *solutions = malloc((size_t)(NUM_FRAMES * made->scene_size) * sizeof *solutions);
    int64_t iterations[NUM_FRAMES];
    options.callback = record_frame;
    MPI_REQUIRE_OK(context, spart_mart_solve_frames_distributed(
                                context, communicator, &operators, NUM_FRAMES, made->observed_there,
                                &options, 2, results, solutions, iterations));
    int64_t first[65];
    int size = spart_communicator_size(communicator);
    int rank = spart_communicator_rank(communicator);
    MPI_REQUIRE_OK(context, spart_distributed_partition_frames(context, NUM_FRAMES, size, first));
    int64_t distinct = 0;
    for (int f = 0; f < NUM_FRAMES; f++) {
        int mine = f >= first[rank] && f < first[rank + 1];
        MPI_CHECK((results[f] != NULL) == mine, "frame %d on rank %d", f, rank);
        MPI_CHECK(frames_seen[f] == mine, "frame %d %s the callback of rank %d", f,
                  mine ? "missed" : "reached", rank);
        if (results[f] != NULL) {
            check_same_result(results[f], reference[f], "frames", f);
        }
        MPI_CHECK(same_bits(solutions + f * made->scene_size,
                            spart_mart_result_solution(reference[f]), made->scene_size),
                  "gathered solution of frame %d", f);
        MPI_CHECK(iterations[f] == spart_mart_result_num_iterations(reference[f]),
                  "frame %d: %lld iterations gathered, %lld solved", f, (long long)iterations[f],
                  (long long)spart_mart_result_num_iterations(reference[f]));
        distinct += f > 0 && iterations[f] != iterations[0];
    }
    MPI_CHECK(distinct > 0, "the frames should stop at different iterations");
    /* then every result on every rank */
    MPI_REQUIRE_OK(context,
                   spart_mart_results_allgather(context, communicator, NUM_FRAMES, results));
    for (int f = 0; f < NUM_FRAMES; f++) {
        MPI_CHECK(results[f] != NULL, "frame %d after the all-gather", f);
        if (results[f] != NULL) {
            check_same_result(results[f], reference[f], "all-gathered", f);
            MPI_CHECK(strcmp(spart_mart_result_message(results[f]),
                             spart_mart_result_message(reference[f])) == 0 &&
                          spart_mart_result_gamma(results[f]) ==
                              spart_mart_result_gamma(reference[f]) &&
                          spart_mart_result_num_solutions(results[f]) ==
                              spart_mart_result_num_solutions(reference[f]),
                      "frame %d: message, gamma or states", f);
            int64_t states = spart_mart_result_num_solutions(reference[f]);
            MPI_CHECK(states > 1 && same_bits(spart_mart_result_solutions(results[f], 0),
                                              spart_mart_result_solutions(reference[f], 0),
                                              states * made->scene_size),
                      "frame %d: the kept states", f);
        }
    }
    for (int f = 0; f < NUM_FRAMES; f++) {
        spart_mart_result_free(results[f]);
        spart_mart_result_free(reference[f]);
    }
    /* one rank's frames fail (its options are wrong): every rank fails,
     * none waits for the others in a gather */
    spart_mart_options bad = options;
    bad.max_iterations = rank == size - 1 ? 0 : options.max_iterations;
    spart_status status = spart_mart_solve_frames_distributed(
        context, communicator, &operators, NUM_FRAMES, made->observed_there, &bad, 0, results,
        solutions, iterations);
    if (size == 1) {
        MPI_CHECK(status == SPART_ERROR_INVALID_ARGUMENT, "bad options: %s",
                  spart_status_string(status));
    } else {
        MPI_CHECK(
            status == (rank == size - 1 ? SPART_ERROR_INVALID_ARGUMENT : SPART_ERROR_INTERNAL),
            "rank %d: %s: %s", rank, spart_status_string(status), spart_context_error(context));
    }
    for (int f = 0; f < NUM_FRAMES; f++) {
        MPI_CHECK(results[f] == NULL, "frame %d kept after a failure", f);
    }
    MPI_CHECK(spart_mart_solve_frames_distributed(context, communicator, &operators, 0,
                                                  made->observed_there, &options, 0, results, NULL,
                                                  NULL) == SPART_ERROR_INVALID_ARGUMENT,
              "no frames");
    free(solutions);
}

int main(int argc, char **argv)
{
    int provided = 0; /* spart calls MPI from the main thread, its OpenMP threads never */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int on_device = mpi_test_on_device(argc, argv);
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (on_device) {
        mpi_test_choose_device(context);
    }
    spart_communicator *communicator = NULL;
    MPI_REQUIRE_OK(context, spart_communicator_create(context, NULL, &communicator));
    problem made;
    problem_make(context, on_device, &made);
    check_split_operator(context, communicator, &made);
    check_frames(context, communicator, &made);
    problem_free(context, &made);
    spart_communicator_free(communicator);
    spart_context_free(context);
    int code = mpi_test_verdict(on_device ? "test_mpi_mart --device" : "test_mpi_mart");
    MPI_Finalize();
    return code;
}
