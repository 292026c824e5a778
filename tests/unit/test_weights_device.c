/*
 * tests/unit/test_weights_device.c: the host side of weights built on a
 * device (issue 30), with or without a GPU:
 * - the device's conservative 1-D algorithm (each input cell finds its own
 *   pieces, src/weights/conservative_1d_math.h, the code the kernel
 *   compiles) run here on the host gives the host walk's entries bit for
 *   bit, in the walk's order and in the coalesced order, on random
 *   monotonic grids of either direction, with repeated vertices and grids
 *   that touch, overlap partly or not at all;
 * - spart_weights_build_device checks its arguments as spart_weights_build
 *   does, with the same statuses and sentences (a NaN coordinate among
 *   them), before it needs a device; without a device it answers
 *   SPART_ERROR_NO_DEVICE; the workspace query checks the same;
 * - spart_weights_to_host copies host weights; spart_weights_cuda_device is
 *   -1 for them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/weights.h"
#include "test_util.h"
#include "weights/conservative_1d_math.h"

/* A monotonic grid of n vertices from `start`, steps drawn in [0, 2 step]
 * (a step of zero about one time in `zeros`, 0: never), descending when
 * asked. */
static double *random_grid(uint64_t *state, int64_t n, double start, double step, int zeros,
                           int descending)
{
    double *x = malloc((size_t)n * sizeof(double));
    double at = start;
    for (int64_t k = 0; k < n; k++) {
        x[k] = descending ? -at : at;
        double draw = next_uniform(state);
        int zero = zeros > 0 && next_uniform(state) * zeros < 1.0;
        at += zero ? 0.0 : 2.0 * step * draw;
    }
    return x;
}

/* The device's algorithm, on the host: unit u of the kernel's order. */
static void device_algorithm(const double *x_in, int64_t n_in, const double *x_out, int64_t n_out,
                             const double *weights_input, int coalesced, int64_t *count,
                             int64_t *indices_input, int64_t *indices_output, double *values)
{
    int rin = spart_c1d_reversed(x_in, n_in), rout = spart_c1d_reversed(x_out, n_out);
    int64_t at = 0;
    for (int64_t u = 0; u + 1 < n_in; u++) {
        int64_t v = coalesced ? spart_c1d_cell_index(n_in, rin, u) : u;
        int64_t index_input = spart_c1d_cell_index(n_in, rin, v);
        spart_c1d_cursor cursor = spart_c1d_begin(x_in, n_in, rin, x_out, n_out, rout, v);
        int64_t first = at;
        double length = cursor.length;
        while (!cursor.done) {
            double point_2;
            int64_t cell;
            double point_1 = spart_c1d_next(x_out, n_out, rout, &cursor, &point_2, &cell);
            indices_input[at] = index_input;
            indices_output[at] = spart_c1d_cell_index(n_out, rout, cell);
            values[at] = spart_c1d_ratio(point_1, point_2, length, weights_input != NULL,
                                         weights_input != NULL ? weights_input[index_input] : 0);
            at++;
        }
        if (coalesced && rout) { /* the kernel writes these pieces backwards */
            for (int64_t a = first, b = at - 1; a < b; a++, b--) {
                int64_t t = indices_output[a];
                indices_output[a] = indices_output[b];
                indices_output[b] = t;
                double s = values[a];
                values[a] = values[b];
                values[b] = s;
            }
        }
    }
    *count = at;
}

static void compare_with_walk(spart_context *context, const double *x_in, int64_t n_in,
                              const double *x_out, int64_t n_out, const double *weights_input,
                              int coalesce, const char *what)
{
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    options.coalesce = coalesce;
    spart_array in = {x_in, {1, {n_in}}}, out = {x_out, {1, {n_out}}};
    spart_array w = {weights_input, {1, {n_in - 1}}};
    options.weights_input = weights_input != NULL ? &w : NULL;
    spart_weights *weights = NULL;
    if (spart_weights_build(context, 1, &in, &out, &options, &weights) != SPART_OK) {
        fail_msg("%s: %s", what, spart_context_error(context));
    }
    const int64_t *offsets, *ii, *io;
    const double *v;
    assert_int_equal(spart_weights_arrays(weights, &offsets, &ii, &io, &v), SPART_OK);
    size_t room = (size_t)(n_in + n_out + 2);
    int64_t *di = malloc(room * sizeof(int64_t)), *dout = malloc(room * sizeof(int64_t));
    double *dv = malloc(room * sizeof(double));
    int64_t count = 0;
    device_algorithm(x_in, n_in, x_out, n_out, weights_input, coalesce, &count, di, dout, dv);
    if (count != offsets[1]) {
        fail_msg("%s: the device algorithm makes %lld entries, the walk %lld", what,
                 (long long)count, (long long)offsets[1]);
    }
    for (int64_t k = 0; k < count; k++) {
        if (di[k] != ii[k] || dout[k] != io[k] || memcmp(&dv[k], &v[k], sizeof(double)) != 0) {
            fail_msg("%s: entry %lld is (%lld, %lld, %.17g), the walk's (%lld, %lld, %.17g)", what,
                     (long long)k, (long long)di[k], (long long)dout[k], dv[k], (long long)ii[k],
                     (long long)io[k], v[k]);
        }
    }
    free(di);
    free(dout);
    free(dv);
    spart_weights_free(weights);
}

static void test_cell_pieces_equal_the_walk(void **state)
{
    spart_context *context = *state;
    uint64_t random = 30;
    char what[128];
    for (int trial = 0; trial < 400; trial++) {
        int64_t n_in = 2 + (int64_t)(next_uniform(&random) * 40);
        int64_t n_out = 2 + (int64_t)(next_uniform(&random) * 40);
        int zeros = trial % 3 == 0 ? 5 : 0;
        /* starts and steps that make the grids nest, overlap, touch or
         * miss each other; quarter steps so that vertices coincide */
        double start_in = floor(next_uniform(&random) * 8) * 0.25;
        double start_out = floor(next_uniform(&random) * 8) * 0.25;
        double step_in = trial % 2 ? 0.25 : 0.1 + next_uniform(&random);
        double step_out = trial % 4 < 2 ? 0.25 : 0.1 + next_uniform(&random);
        int down_in = trial % 5 == 1 || trial % 5 == 3;
        int down_out = trial % 5 >= 2;
        double *x_in = random_grid(&random, n_in, start_in, step_in, zeros, down_in);
        double *x_out = random_grid(&random, n_out, start_out, step_out, zeros, down_out);
        if (trial % 7 == 0) { /* touching: the output ends where the input starts */
            double shift = x_out[down_out ? 0 : n_out - 1] - x_in[down_in ? n_in - 1 : 0];
            for (int64_t k = 0; k < n_out; k++) {
                x_out[k] -= shift;
            }
        }
        double *factors = malloc((size_t)(n_in - 1) * sizeof(double));
        for (int64_t k = 0; k + 1 < n_in; k++) {
            factors[k] = 0.5 + next_uniform(&random);
        }
        for (int coalesce = 0; coalesce < 2; coalesce++) {
            snprintf(what, sizeof what, "trial %d (%lld onto %lld, coalesce %d)", trial,
                     (long long)n_in, (long long)n_out, coalesce);
            compare_with_walk(context, x_in, n_in, x_out, n_out, trial % 2 ? factors : NULL,
                              coalesce, what);
        }
        free(x_in);
        free(x_out);
        free(factors);
    }
}

/* Both builds refuse the same arguments with the same status and words. */
static void assert_same_refusal(spart_context *context, int n, const spart_array *in,
                                const spart_array *out, const spart_weights_options *options,
                                spart_status expected)
{
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build(context, n, in, out, options, &weights), expected);
    assert_null(weights);
    char host[512];
    snprintf(host, sizeof host, "%s", spart_context_error(context));
    assert_int_equal(spart_weights_build_device(context, n, in, out, options, &weights), expected);
    assert_null(weights);
    assert_string_equal(spart_context_error(context), host);
    size_t bytes = 0;
    assert_int_equal(
        spart_weights_build_device_workspace_size(context, n, in, out, options, &bytes), expected);
    assert_string_equal(spart_context_error(context), host);
}

static void test_device_build_checks_as_the_host(void **state)
{
    spart_context *context = *state;
    double x[5] = {0, 1, 2, 3, 4}, y[4] = {0.5, NAN, 2, 3};
    spart_array in = {x, {1, {5}}}, out = {y, {1, {4}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    assert_same_refusal(context, 1, &in, &out, &options, SPART_ERROR_NOT_FINITE);
    assert_same_refusal(context, 1, &out, &in, &options, SPART_ERROR_NOT_FINITE);
    options.method = SPART_METHOD_MULTILINEAR;
    assert_same_refusal(context, 1, &out, &in, &options, SPART_ERROR_NOT_FINITE);
    options.method = (spart_method)7;
    assert_same_refusal(context, 1, &in, &in, &options, SPART_ERROR_UNKNOWN_ENUM);
    options.method = SPART_METHOD_CONSERVATIVE;
    assert_same_refusal(context, 3, &in, &in, &options, SPART_ERROR_NOT_IMPLEMENTED);
    spart_array one = {x, {1, {1}}};
    assert_same_refusal(context, 1, &one, &in, &options, SPART_ERROR_INVALID_ARGUMENT);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build_device(context, 1, NULL, &in, &options, &weights),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_weights_build_device(context, 1, &in, &in, &options, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_weights_build_device(NULL, 1, &in, &in, &options, &weights),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_weights_build_device_workspace_size(context, 1, &in, &in, &options, NULL),
        SPART_ERROR_NULL_POINTER);
}

/* Where no device can build (a build without CUDA, or no device visible)
 * the device build answers SPART_ERROR_NO_DEVICE with a sentence saying
 * why; with a device it builds (test_cuda_weights checks what). */
static void test_no_device_answers(void **state)
{
    spart_context *context = *state;
    double x[5] = {0, 1, 2, 3, 4};
    spart_array in = {x, {1, {5}}};
    spart_weights *weights = NULL;
    spart_status status = spart_weights_build_device(context, 1, &in, &in, NULL, &weights);
    if (status == SPART_OK) {
        spart_weights_free(weights);
        skip();
    }
    assert_int_equal(status, SPART_ERROR_NO_DEVICE);
    assert_null(weights);
    assert_true(strlen(spart_context_error(context)) > 20);
    size_t bytes = 1;
    status = spart_weights_build_device_workspace_size(context, 1, &in, &in, NULL, &bytes);
    /* the query needs no device where CUDA is built in */
    assert_true(status == SPART_OK || status == SPART_ERROR_NO_DEVICE);
}

static void test_to_host_copies_host_weights(void **state)
{
    spart_context *context = *state;
    double x[5] = {0, 1, 2, 3, 4}, y[3] = {0.5, 1.7, 3.2};
    spart_array in = {x, {1, {5}}}, out = {y, {1, {3}}};
    spart_weights *weights = NULL, *copy = NULL;
    assert_int_equal(spart_weights_build(context, 1, &in, &out, NULL, &weights), SPART_OK);
    assert_int_equal(spart_weights_cuda_device(weights), -1);
    assert_int_equal(spart_weights_cuda_device(NULL), -1);
    assert_int_equal(spart_weights_to_host(context, weights, &copy), SPART_OK);
    int64_t n = spart_weights_num_entries(weights);
    assert_int_equal(spart_weights_num_entries(copy), n);
    const int64_t *oa, *ia, *ja, *ob, *ib, *jb;
    const double *va, *vb;
    assert_int_equal(spart_weights_arrays(weights, &oa, &ia, &ja, &va), SPART_OK);
    assert_int_equal(spart_weights_arrays(copy, &ob, &ib, &jb, &vb), SPART_OK);
    assert_memory_equal(ia, ib, (size_t)n * sizeof(int64_t));
    assert_memory_equal(ja, jb, (size_t)n * sizeof(int64_t));
    assert_memory_equal(va, vb, (size_t)n * sizeof(double));
    assert_int_equal(spart_weights_to_host(context, NULL, &copy), SPART_ERROR_NULL_POINTER);
    spart_weights_free(weights);
    spart_weights_free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell_pieces_equal_the_walk),
        cmocka_unit_test(test_device_build_checks_as_the_host),
        cmocka_unit_test(test_no_device_answers),
        cmocka_unit_test(test_to_host_copies_host_weights),
    };
    return cmocka_run_group_tests(tests, context_set_up, context_tear_down);
}
