/*
 * tests/unit/test_cuda_mart_runs.c: whole MART runs on a CUDA device give
 * the host's bits: an instrument whose operators were moved to the device
 * (merit histories and solutions compared with memcmp, and across repeated
 * runs), batched runs whose stopping rule is decided on the device, with
 * the library's operators and the caller's own, and long rows in a graph.
 * The building blocks are tested in test_cuda_mart.c.
 *
 * Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_cuda_util.h"
#include "test_small_instrument.h"

/* ---- whole runs ---------------------------------------------------------------------------- */

typedef struct run {
    int64_t iterations, solutions;
    int success;
    char message[160];
    double *chi2, *correlation, *solution;
} run;

static void keep_run(const spart_mart_result *result, int64_t scene_size, run *out)
{
    out->iterations = spart_mart_result_num_iterations(result);
    out->solutions = spart_mart_result_num_solutions(result);
    out->success = spart_mart_result_success(result);
    snprintf(out->message, sizeof out->message, "%s", spart_mart_result_message(result));
    size_t merits =
        (size_t)(out->iterations * spart_mart_result_num_channel(result)) * sizeof(double);
    out->chi2 = malloc(merits);
    out->correlation = malloc(merits);
    out->solution = malloc((size_t)(out->solutions * scene_size) * sizeof(double));
    memcpy(out->chi2, spart_mart_result_mean_chi_squared(result), merits);
    memcpy(out->correlation, spart_mart_result_correlation(result), merits);
    for (int64_t k = 0; k < out->solutions; k++) {
        memcpy(out->solution + k * scene_size, spart_mart_result_solutions(result, k),
               (size_t)scene_size * sizeof(double));
    }
}

static void free_run(run *r)
{
    free(r->chi2);
    free(r->correlation);
    free(r->solution);
}

static void assert_runs_equal(const run *a, const run *b, int64_t scene_size)
{
    assert_int_equal(a->iterations, b->iterations);
    assert_int_equal(a->success, b->success);
    assert_int_equal(a->solutions, b->solutions);
    assert_string_equal(a->message, b->message);
    assert_memory_equal(a->chi2, b->chi2, (size_t)(a->iterations * 4) * sizeof(double));
    assert_memory_equal(a->correlation, b->correlation,
                        (size_t)(a->iterations * 4) * sizeof(double));
    assert_memory_equal(a->solution, b->solution,
                        (size_t)(a->solutions * scene_size) * sizeof(double));
}

/* Run MART with the instrument's operators on the host, or moved to the
 * device (observations copied there). */
static void solve(spart_context *context, const spart_instrument *instrument,
                  const double *observed, const spart_mart_options *options, int on_device,
                  int64_t scene_size, run *out)
{
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    assert_int_equal(spart_instrument_mart_operators(context, instrument, &pair, &operators),
                     SPART_OK);
    spart_regridder *forward = NULL, *backward = NULL;
    const double *images = observed;
    double *d_images = NULL;
    if (on_device) {
        assert_int_equal(spart_regridder_to_device(context, pair.forward, &forward), SPART_OK);
        assert_int_equal(spart_regridder_to_device(context, pair.backward, &backward), SPART_OK);
        pair.forward = forward;
        pair.backward = backward;
        assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators),
                         SPART_OK);
        assert_int_equal(operators.on_device, 1);
        d_images = doubles_to_device(context, observed, 4 * operators.image_size);
        images = d_images;
    }
    spart_mart_result *result = NULL;
    spart_status status = spart_mart_solve(context, &operators, images, options, &result);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    keep_run(result, scene_size, out);
    spart_mart_result_free(result);
    spart_device_free(context, d_images);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
}

static int stop_at_iteration_five(void *user, const spart_mart_progress *progress)
{
    (void)user;
    return progress->iteration == 5;
}

static void instrument_runs_equal_the_host_bit_for_bit(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    small_instrument p;
    make_small_instrument(context, &p);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &p.params, &instrument), SPART_OK);
    int64_t pixels = 4 * spart_instrument_image_size(instrument);
    double *observed = malloc((size_t)pixels * sizeof(double));
    assert_int_equal(spart_instrument_observe(context, instrument, p.scene, 7, observed, NULL),
                     SPART_OK);

    /* ctis's rule; a fixed count with intermediate states and gamma 0.3;
     * odd and even fixed counts without them; two iterations; a callback
     * that stops the run midway (the device run then stops between two
     * graph launches). */
    for (int variant = 0; variant < 6; variant++) {
        spart_mart_options options;
        spart_mart_options_init(&options);
        if (variant == 1) {
            options.stop_rule = SPART_MART_STOP_COUNT;
            options.max_iterations = 12;
            options.keep_intermediate = 1;
            options.gamma = 0.3;
        } else if (variant == 2 || variant == 3 || variant == 4) {
            options.stop_rule = SPART_MART_STOP_COUNT;
            options.max_iterations = variant == 2 ? 7 : variant == 3 ? 8 : 2;
        } else if (variant == 5) {
            options.stop_rule = SPART_MART_STOP_COUNT;
            options.max_iterations = 20;
            options.callback = stop_at_iteration_five;
        }
        run host, device, again;
        solve(context, instrument, observed, &options, 0, p.scene_size, &host);
        solve(context, instrument, observed, &options, 1, p.scene_size, &device);
        solve(context, instrument, observed, &options, 1, p.scene_size, &again);
        assert_true(host.iterations > 3 || variant == 4);
        if (variant == 5) {
            assert_int_equal(host.iterations, 6);
        }
        assert_runs_equal(&host, &device, p.scene_size);
        assert_runs_equal(&device, &again, p.scene_size);
        free_run(&host);
        free_run(&device);
        free_run(&again);
    }
    free(observed);
    free(p.scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

/* ---- runs in batches: the stopping rule on the device ------------------------------------ */

/* Without a callback, device runs go in batches of iterations whose rule
 * is checked on the device (solvers/mart.c, 8 iterations a batch); each
 * case below stops where the host's run stops (the iteration counts are
 * those of the host on this problem, checked here so that each case
 * tests what it says), with the host's merits, message and states. */
typedef struct batch_case {
    const char *what;
    spart_mart_stop_rule rule;
    double threshold, target, gamma;
    int64_t max_iterations;
    int keep_intermediate;
    int64_t iterations; /* the host's */
    int success;        /* the host's */
} batch_case;

static const batch_case batch_cases[] = {
    {"ctis's rule, stopping inside the seventh batch", SPART_MART_STOP_THRESHOLD, 1e-3, 1.0, 0.0,
     100, 0, 56, 1},
    {"ctis's rule with intermediate states", SPART_MART_STOP_THRESHOLD, 1e-3, 1.0, 0.0, 100, 1, 56,
     1},
    {"a rising merit (gamma 2.05) at iteration 3", SPART_MART_STOP_THRESHOLD, 1e-3, 1.0, 2.05, 100,
     0, 4, 1},
    {"a rising merit with intermediate states", SPART_MART_STOP_THRESHOLD, 1e-3, 1.0, 2.05, 100, 1,
     4, 1},
    {"the target (2) inside the first batch", SPART_MART_STOP_TARGET, 1e-3, 2.0, 0.0, 100, 0, 7, 1},
    {"the target (1) at the last iteration of the first batch", SPART_MART_STOP_TARGET, 1e-3, 1.0,
     0.0, 100, 1, 9, 1},
    {"the target met by the first iteration (no batch runs)", SPART_MART_STOP_TARGET, 1e-3, 1e300,
     0.0, 100, 0, 1, 1},
    {"the iteration limit (11) inside the second batch", SPART_MART_STOP_THRESHOLD, 1e-4, 1.0, 0.0,
     11, 0, 11, 0},
    {"the iteration limit with intermediate states", SPART_MART_STOP_THRESHOLD, 1e-4, 1.0, 0.0, 11,
     1, 11, 0},
    {"a fixed count (17) ending at the last iteration of a batch", SPART_MART_STOP_COUNT, 1e-3, 1.0,
     0.0, 17, 0, 17, 1},
};

static void options_of_case(const batch_case *c, spart_mart_options *options)
{
    spart_mart_options_init(options);
    options->stop_rule = c->rule;
    options->threshold = c->threshold;
    options->target = c->target;
    options->gamma = c->gamma;
    options->max_iterations = c->max_iterations;
    options->keep_intermediate = c->keep_intermediate;
}

static double mean_merit_of(const run *r, int64_t iteration)
{
    const double *chi2 = r->chi2 + 4 * iteration;
    return (chi2[0] + chi2[1] + chi2[2] + chi2[3]) / 4.0;
}

/* The host's run is the case it claims to be. */
static void assert_host_run_is(const batch_case *c, const run *host)
{
    if (host->iterations != c->iterations || host->success != c->success) {
        fail_msg("%s: the host ran %lld iterations (success %d), the case expects %lld (%d)",
                 c->what, (long long)host->iterations, host->success, (long long)c->iterations,
                 c->success);
    }
    if (c->gamma == 2.05) {
        assert_true(mean_merit_of(host, host->iterations - 1) >
                    mean_merit_of(host, host->iterations - 2));
    }
}

static void batched_runs_stop_where_the_host_stops(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    small_instrument p;
    make_small_instrument(context, &p);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &p.params, &instrument), SPART_OK);
    int64_t pixels = 4 * spart_instrument_image_size(instrument);
    double *observed = malloc((size_t)pixels * sizeof(double));
    assert_int_equal(spart_instrument_observe(context, instrument, p.scene, 7, observed, NULL),
                     SPART_OK);
    for (size_t k = 0; k < sizeof batch_cases / sizeof batch_cases[0]; k++) {
        const batch_case *c = &batch_cases[k];
        spart_mart_options options;
        options_of_case(c, &options);
        run host, device;
        solve(context, instrument, observed, &options, 0, p.scene_size, &host);
        solve(context, instrument, observed, &options, 1, p.scene_size, &device);
        assert_host_run_is(c, &host);
        print_message("%s: %lld iterations\n", c->what, (long long)device.iterations);
        assert_runs_equal(&host, &device, p.scene_size);
        free_run(&host);
        free_run(&device);
    }
    free(observed);
    free(p.scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

/* Operators of the caller's own (not those of
 * spart_mart_operators_from_regridders): the driver ends each iteration
 * with the backward operator and spart_mart_update, whose kernel reads the
 * stop flag too. */
static spart_status own_forward(void *user, spart_context *context, const double *scene,
                                double *images, double *widths)
{
    const spart_mart_regridder_pair *pair = user;
    spart_array x = {scene, spart_regridder_shape_input(pair->forward)};
    int64_t size = spart_regridder_num_rows(pair->forward);
    spart_status status = spart_regridder_apply(context, pair->forward, &x, images, size);
    if (status == SPART_OK) {
        status =
            spart_mart_noise_widths(context, images, widths, size, pair->gain, pair->read_noise,
                                    spart_regridder_cuda_device(pair->forward) >= 0);
    }
    return status;
}

static spart_status own_backward(void *user, spart_context *context, const double *images,
                                 double *scenes)
{
    const spart_mart_regridder_pair *pair = user;
    spart_array x = {images, spart_regridder_shape_input(pair->backward)};
    return spart_regridder_apply(context, pair->backward, &x, scenes,
                                 spart_regridder_num_rows(pair->backward));
}

/* Run with own_forward and own_backward over the instrument's
 * Regridders, on the host or moved to the device. */
static void solve_with_own_operators(spart_context *context, const spart_instrument *instrument,
                                     const double *observed, const spart_mart_options *options,
                                     int on_device, int64_t scene_size, run *out)
{
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    assert_int_equal(spart_instrument_mart_operators(context, instrument, &pair, &operators),
                     SPART_OK);
    spart_regridder *forward = NULL, *backward = NULL;
    const double *images = observed;
    double *d_images = NULL;
    if (on_device) {
        assert_int_equal(spart_regridder_to_device(context, pair.forward, &forward), SPART_OK);
        assert_int_equal(spart_regridder_to_device(context, pair.backward, &backward), SPART_OK);
        pair.forward = forward;
        pair.backward = backward;
        d_images = doubles_to_device(context, observed, 4 * operators.image_size);
        images = d_images;
    }
    operators.forward = own_forward;
    operators.backward = own_backward;
    operators.user = &pair;
    operators.on_device = on_device;
    operators.capturable = on_device;
    spart_mart_result *result = NULL;
    spart_status status = spart_mart_solve(context, &operators, images, options, &result);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    keep_run(result, scene_size, out);
    spart_mart_result_free(result);
    spart_device_free(context, d_images);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
}

static void batched_runs_of_own_operators_stop_where_the_host_stops(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    small_instrument p;
    make_small_instrument(context, &p);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &p.params, &instrument), SPART_OK);
    int64_t pixels = 4 * spart_instrument_image_size(instrument);
    double *observed = malloc((size_t)pixels * sizeof(double));
    assert_int_equal(spart_instrument_observe(context, instrument, p.scene, 7, observed, NULL),
                     SPART_OK);
    const size_t cases[] = {0, 8}; /* ctis's rule; the iteration limit with states */
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const batch_case *c = &batch_cases[cases[k]];
        spart_mart_options options;
        options_of_case(c, &options);
        run host, device;
        solve_with_own_operators(context, instrument, observed, &options, 0, p.scene_size, &host);
        solve_with_own_operators(context, instrument, observed, &options, 1, p.scene_size, &device);
        assert_host_run_is(c, &host);
        assert_runs_equal(&host, &device, p.scene_size);
        free_run(&host);
        free_run(&device);
    }
    free(observed);
    free(p.scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

/* A forward operator whose rows are longer than SPART_CHUNK_LENGTH (so
 * its device product needs a workspace, which the driver's CUDA graph
 * must record): 4 pixels each seeing all of 6000 voxels. */
static void long_rows_run_in_a_graph_as_on_the_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    enum { voxels = 6000, pixels = 4, entries = voxels * pixels };
    int64_t offsets[2] = {0, entries};
    int64_t *in = malloc(entries * sizeof(int64_t));
    int64_t *out = malloc(entries * sizeof(int64_t));
    double *values = malloc(entries * sizeof(double));
    for (int64_t k = 0; k < entries; k++) {
        in[k] = k % voxels;
        out[k] = k / voxels;
        values[k] = 1e-3 * (double)(1 + (k * 7919) % 13);
    }
    spart_shape orthogonal = {0, {0}};
    spart_shape shape_in = {1, {voxels}}, shape_out = {1, {pixels}};
    int axis[1] = {0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &shape_in, &shape_out,
                                                      1, axis, 1, axis, offsets, in, out, values,
                                                      &weights),
                     SPART_OK);
    spart_regridder *forward = NULL, *backward = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &forward), SPART_OK);
    assert_int_equal(spart_regridder_transpose(context, forward, &backward), SPART_OK);
    double observed[pixels] = {30.0, 45.0, 20.0, 60.0};
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = 6;
    run host, device;
    spart_mart_regridder_pair pair = {forward, backward, 1, 1.0, 0.0};
    spart_mart_operators operators;
    assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators), SPART_OK);
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, observed, &options, &result), SPART_OK);
    keep_run(result, voxels, &host);
    spart_mart_result_free(result);

    spart_regridder *d_forward = NULL, *d_backward = NULL;
    assert_int_equal(spart_regridder_to_device(context, forward, &d_forward), SPART_OK);
    assert_int_equal(spart_regridder_to_device(context, backward, &d_backward), SPART_OK);
    pair.forward = d_forward;
    pair.backward = d_backward;
    assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators), SPART_OK);
    double *d_observed = doubles_to_device(context, observed, pixels);
    spart_status status = spart_mart_solve(context, &operators, d_observed, &options, &result);
    if (status != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    keep_run(result, voxels, &device);
    spart_mart_result_free(result);
    /* one channel: compare the first column of the histories only */
    assert_int_equal(host.iterations, device.iterations);
    assert_memory_equal(host.solution, device.solution, voxels * sizeof(double));
    free_run(&host);
    free_run(&device);
    spart_device_free(context, d_observed);
    spart_regridder_free(d_forward);
    spart_regridder_free(d_backward);
    spart_regridder_free(forward);
    spart_weights_free(weights);
    free(in);
    free(out);
    free(values);
    spart_context_free(context);
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(instrument_runs_equal_the_host_bit_for_bit),
        cmocka_unit_test(long_rows_run_in_a_graph_as_on_the_host),
        cmocka_unit_test(batched_runs_stop_where_the_host_stops),
        cmocka_unit_test(batched_runs_of_own_operators_stop_where_the_host_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
