/*
 * The weights driver (src/weights/weights_build.c) over many orthogonal elements:
 * the elements built side by side by several threads and joined in order
 * give the same arrays, bit for bit, as one thread; coordinates read in
 * place or gathered give the same weights; elements of very different
 * sizes and empty elements are joined at the right offsets; running
 * out of memory anywhere in a build reports it and leaks nothing; and a
 * non-finite coordinate is found wherever it is.
 *
 * The stacks here are large enough (more than 65,536 vertices in all) for
 * the driver to use several threads.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_util.h"

/* ---- problems ------------------------------------------------------------ */

enum { NUM_ELEMENTS = 16, N = 61, M = 33 };

/* A stack of NUM_ELEMENTS curvilinear grids of N x N vertices (element e
 * rotated by 0.07 e rad and warped), stack[(e * N + i) * N + j], and a
 * lattice of M x M vertices over [-5, 5]^2 that the stack lies in. */
typedef struct problem {
    double x[NUM_ELEMENTS * N * N], y[NUM_ELEMENTS * N * N];
    double lattice_x[M * M], lattice_y[M * M];
    spart_array input[2], output[2];
    spart_weights_options options;
} problem;

static void make_stack(problem *p)
{
    memset(p, 0, sizeof *p);
    for (int e = 0; e < NUM_ELEMENTS; e++) {
        const double angle = 0.07 * e;
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                const double u = -3.5 + 7.0 * i / (N - 1), v = -3.5 + 7.0 * j / (N - 1);
                p->x[(e * N + i) * N + j] = u * cos(angle) - v * sin(angle) + 0.02 * v * v;
                p->y[(e * N + i) * N + j] = u * sin(angle) + v * cos(angle) + 0.01 * u * u;
            }
        }
    }
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < M; j++) {
            p->lattice_x[i * M + j] = -5.0 + 10.0 * i / (M - 1);
            p->lattice_y[i * M + j] = -5.0 + 10.0 * j / (M - 1);
        }
    }
    const spart_shape stack = shape_of(3, (int64_t[]){NUM_ELEMENTS, N, N});
    const spart_shape lattice = shape_of(2, (int64_t[]){M, M});
    p->input[0] = (spart_array){p->x, stack};
    p->input[1] = (spart_array){p->y, stack};
    p->output[0] = (spart_array){p->lattice_x, lattice};
    p->output[1] = (spart_array){p->lattice_y, lattice};
    spart_weights_options_init(&p->options);
    p->options.method = SPART_METHOD_CONSERVATIVE;
    p->options.num_axis_input = 2;
    p->options.axis_input[0] = 1;
    p->options.axis_input[1] = 2;
    p->options.num_axis_output = 2;
    p->options.axis_output[0] = 0;
    p->options.axis_output[1] = 1;
}

/* The same stack onto grids of its own: element e onto the lattice
 * rotated by 0.05 e rad (not a lattice: the Ramshaw sweep or general
 * clipping). */
typedef struct problem_pairs {
    problem base;
    double x_out[NUM_ELEMENTS * M * M], y_out[NUM_ELEMENTS * M * M];
} problem_pairs;

static void make_pairs(problem_pairs *p)
{
    make_stack(&p->base);
    for (int e = 0; e < NUM_ELEMENTS; e++) {
        const double angle = 0.05 * e;
        for (int k = 0; k < M * M; k++) {
            const double u = p->base.lattice_x[k], v = p->base.lattice_y[k];
            p->x_out[e * M * M + k] = u * cos(angle) - v * sin(angle);
            p->y_out[e * M * M + k] = u * sin(angle) + v * cos(angle);
        }
    }
    const spart_shape outputs = shape_of(3, (int64_t[]){NUM_ELEMENTS, M, M});
    p->base.output[0] = (spart_array){p->x_out, outputs};
    p->base.output[1] = (spart_array){p->y_out, outputs};
    p->base.options.axis_output[0] = 1;
    p->base.options.axis_output[1] = 2;
}

/* ---- comparing builds ---------------------------------------------------- */

static spart_weights *build_with_threads(const problem *p, int threads)
{
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build(context, 2, p->input, p->output, &p->options, &weights),
                     SPART_OK);
    spart_context_free(context);
    return weights;
}

/* Whether two weights objects hold the same arrays, byte for byte. */
static void assert_same_arrays(const spart_weights *a, const spart_weights *b)
{
    assert_int_equal(spart_weights_num_elements(a), spart_weights_num_elements(b));
    assert_int_equal(spart_weights_num_entries(a), spart_weights_num_entries(b));
    const int64_t *offsets[2], *inputs[2], *outputs[2];
    const double *values[2];
    assert_int_equal(spart_weights_arrays(a, &offsets[0], &inputs[0], &outputs[0], &values[0]),
                     SPART_OK);
    assert_int_equal(spart_weights_arrays(b, &offsets[1], &inputs[1], &outputs[1], &values[1]),
                     SPART_OK);
    const size_t elements = (size_t)spart_weights_num_elements(a);
    const size_t entries = (size_t)spart_weights_num_entries(a);
    assert_memory_equal(offsets[0], offsets[1], (elements + 1) * sizeof(int64_t));
    assert_memory_equal(inputs[0], inputs[1], entries * sizeof(int64_t));
    assert_memory_equal(outputs[0], outputs[1], entries * sizeof(int64_t));
    assert_memory_equal(values[0], values[1], entries * sizeof(double));
}

/* Builds with 2 and 3 threads equal the build with 1, byte for byte. */
static void assert_thread_count_invariant(const problem *p)
{
    spart_weights *serial = build_with_threads(p, 1);
    assert_true(spart_weights_num_entries(serial) > 0);
    for (int threads = 2; threads <= 3; threads++) {
        spart_weights *parallel = build_with_threads(p, threads);
        assert_same_arrays(serial, parallel);
        spart_weights_free(parallel);
    }
    spart_weights_free(serial);
}

static void lattice_stack_is_the_same_for_any_thread_count(void **state)
{
    (void)state;
    problem *p = malloc(sizeof *p);
    assert_non_null(p);
    make_stack(p);
    assert_thread_count_invariant(p);
    free(p);
}

static void multilinear_stack_is_the_same_for_any_thread_count(void **state)
{
    (void)state;
    problem *p = malloc(sizeof *p);
    assert_non_null(p);
    make_stack(p);
    p->options.method = SPART_METHOD_MULTILINEAR;
    assert_thread_count_invariant(p);
    free(p);
}

static void swept_pairs_are_the_same_for_any_thread_count(void **state)
{
    (void)state;
    problem_pairs *p = malloc(sizeof *p);
    assert_non_null(p);
    make_pairs(p);
    p->base.options.algorithm = SPART_ALGORITHM_SWEEP; /* perturbed by default */
    assert_thread_count_invariant(&p->base);
    free(p);
}

static void clipped_pairs_are_the_same_for_any_thread_count(void **state)
{
    (void)state;
    problem_pairs *p = malloc(sizeof *p);
    assert_non_null(p);
    make_pairs(p);
    assert_thread_count_invariant(&p->base);
    free(p);
}

/* The stack laid out with the orthogonal axis last (shape N x N x
 * NUM_ELEMENTS, so that no element's block lies contiguous and each is
 * gathered) gives the same weights as the stack with it first (each block
 * read in place). */
static void coordinates_gathered_or_read_in_place_give_the_same_weights(void **state)
{
    (void)state;
    problem *p = malloc(sizeof *p);
    double *x_last = malloc(sizeof p->x), *y_last = malloc(sizeof p->y);
    assert_non_null(p);
    assert_non_null(x_last);
    assert_non_null(y_last);
    make_stack(p);
    for (int e = 0; e < NUM_ELEMENTS; e++) {
        for (int k = 0; k < N * N; k++) {
            x_last[k * NUM_ELEMENTS + e] = p->x[e * N * N + k];
            y_last[k * NUM_ELEMENTS + e] = p->y[e * N * N + k];
        }
    }
    spart_weights *in_place = build_with_threads(p, 2);
    const spart_shape last = shape_of(3, (int64_t[]){N, N, NUM_ELEMENTS});
    p->input[0] = (spart_array){x_last, last};
    p->input[1] = (spart_array){y_last, last};
    p->options.axis_input[0] = 0;
    p->options.axis_input[1] = 1;
    spart_weights *gathered = build_with_threads(p, 2);
    assert_same_arrays(in_place, gathered);
    spart_weights_free(in_place);
    spart_weights_free(gathered);
    free(x_last);
    free(y_last);
    free(p);
}

/* Elements of very different sizes, and elements with no entries at all
 * (grids moved off the lattice), are joined at the right offsets by one
 * thread and by two: each element equals the same grid built alone. The
 * first elements are empty or small, so that the joined arrays, sized
 * from them, must grow later. */
static void elements_of_any_size_are_joined_in_order(void **state)
{
    (void)state;
    problem *p = malloc(sizeof *p);
    assert_non_null(p);
    make_stack(p);
    for (int e = 0; e < NUM_ELEMENTS; e++) {
        /* every third element far off the lattice, from the first; the
         * first three shrunk into about one lattice cell (one entry per
         * input cell, half as many as the others have) */
        const double scale = e < 3 ? 0.02 : 1.0;
        const double shift = e % 3 == 0 ? 100.0 : 0.0;
        for (int k = 0; k < N * N; k++) {
            p->x[e * N * N + k] = p->x[e * N * N + k] * scale + shift;
            p->y[e * N * N + k] = p->y[e * N * N + k] * scale;
        }
    }
    problem *alone = malloc(sizeof *alone);
    assert_non_null(alone);
    for (int threads = 1; threads <= 2; threads++) {
        spart_weights *stack = build_with_threads(p, threads);
        const spart_shape one = shape_of(2, (int64_t[]){N, N});
        for (int e = 0; e < NUM_ELEMENTS; e++) {
            *alone = *p;
            alone->input[0] = (spart_array){p->x + e * N * N, one};
            alone->input[1] = (spart_array){p->y + e * N * N, one};
            alone->options.num_axis_input = 0;
            alone->options.num_axis_output = 0;
            spart_weights *single = build_with_threads(alone, 1);
            int64_t count = 0, count_single = 0;
            const int64_t *inputs[2], *outputs[2];
            const double *values[2];
            assert_int_equal(
                spart_weights_element(stack, e, &count, &inputs[0], &outputs[0], &values[0]),
                SPART_OK);
            assert_int_equal(spart_weights_element(single, 0, &count_single, &inputs[1],
                                                   &outputs[1], &values[1]),
                             SPART_OK);
            assert_int_equal(count, count_single);
            assert_true((e % 3 == 0) == (count == 0));
            assert_memory_equal(inputs[0], inputs[1], (size_t)count * sizeof(int64_t));
            assert_memory_equal(outputs[0], outputs[1], (size_t)count * sizeof(int64_t));
            assert_memory_equal(values[0], values[1], (size_t)count * sizeof(double));
            spart_weights_free(single);
        }
        spart_weights_free(stack);
    }
    free(alone);
    free(p);
}

/* ---- checking the coordinates -------------------------------------------- */

/* A NaN or an infinity at any place of a grid of 7 vertices (the check
 * takes four values at a time, then the rest) is found and named. */
static void a_non_finite_coordinate_is_found_at_every_place(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    double x[7], x_out[3] = {0.5, 2.5, 4.5};
    const spart_array input = {x, shape_of(1, (int64_t[]){7})};
    const spart_array output = {x_out, shape_of(1, (int64_t[]){3})};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int place = 0; place < 7; place++) {
        for (int b = 0; b < 3; b++) {
            for (int k = 0; k < 7; k++) {
                x[k] = k;
            }
            x[place] = bad[b];
            spart_weights *weights = NULL;
            assert_int_equal(spart_weights_build(context, 1, &input, &output, &options, &weights),
                             SPART_ERROR_NOT_FINITE);
            assert_null(weights);
            char expected[32];
            snprintf(expected, sizeof expected, "at flat index %d", place);
            assert_non_null(strstr(spart_context_error(context), expected));
        }
    }
    spart_context_free(context);
}

/* ---- running out of memory ----------------------------------------------- */

/* An allocator over malloc, safe to call from several threads, that counts
 * the blocks alive and fails every allocation from the `fail_from`-th on
 * (counting from 0; -1: never). */
typedef struct failing {
    atomic_llong live;
    atomic_llong calls;
    long long fail_from;
} failing;

static int failing_refuses(failing *f)
{
    long long call = atomic_fetch_add(&f->calls, 1);
    return f->fail_from >= 0 && call >= f->fail_from;
}

static void *failing_malloc(void *user, size_t size)
{
    failing *f = user;
    if (failing_refuses(f)) {
        return NULL;
    }
    void *pointer = malloc(size);
    if (pointer != NULL) {
        atomic_fetch_add(&f->live, 1);
    }
    return pointer;
}

static void *failing_realloc(void *user, void *pointer, size_t size)
{
    failing *f = user;
    if (failing_refuses(f)) {
        return NULL;
    }
    void *moved = realloc(pointer, size);
    if (moved != NULL && pointer == NULL) {
        atomic_fetch_add(&f->live, 1);
    }
    return moved;
}

static void failing_free(void *user, void *pointer)
{
    failing *f = user;
    if (pointer != NULL) {
        atomic_fetch_sub(&f->live, 1);
    }
    free(pointer);
}

/* Build with an allocator that fails from its fail_from-th call; the
 * status, with every block returned once the context is freed. */
static spart_status build_failing_from(const problem *p, int threads, long long fail_from,
                                       long long *calls)
{
    failing f;
    atomic_init(&f.live, 0);
    atomic_init(&f.calls, 0);
    f.fail_from = -1; /* the context itself always gets its memory */
    const spart_allocator allocator = {failing_malloc, failing_realloc, failing_free, &f};
    spart_context *context = NULL;
    assert_int_equal(spart_context_create_with_allocator(&allocator, &context), SPART_OK);
    assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
    f.fail_from = fail_from < 0 ? -1 : atomic_load(&f.calls) + fail_from;
    long long before = atomic_load(&f.calls);
    spart_weights *weights = NULL;
    spart_status status =
        spart_weights_build(context, 2, p->input, p->output, &p->options, &weights);
    *calls = atomic_load(&f.calls) - before;
    if (status == SPART_OK) {
        assert_non_null(weights);
    } else {
        assert_null(weights);
    }
    spart_weights_free(weights);
    spart_context_free(context);
    assert_int_equal(atomic_load(&f.live), 0);
    return status;
}

/* The allocation to fail after the k-th of `calls`: each of the first
 * four, then ever more sparsely, and each of the last three. */
static long long next_to_fail(long long k, long long calls)
{
    const long long last_three = calls - 3;
    if (k >= last_three) {
        return k + 1;
    }
    const long long next = k + 1 + k / 4;
    return next < last_three ? next : last_three;
}

/* Failing the k-th allocation of the build, from the first to the last
 * (each of the first four, then ever more sparsely, and the last three:
 * about twenty builds per pass): the build reports
 * SPART_ERROR_OUT_OF_MEMORY (or succeeds with two threads, which need
 * fewer allocations when one thread takes more of the elements), leaves
 * no object and leaks no block. Passes: the lattice kernel with one
 * thread (straight into the weights' arrays) and two (lists of their
 * own), the multilinear one with two (lists, coalesced). */
static void running_out_of_memory_anywhere_is_reported_without_leaks(void **state)
{
    (void)state;
    problem *p = malloc(sizeof *p);
    assert_non_null(p);
    make_stack(p);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            p->options.method = SPART_METHOD_MULTILINEAR;
        }
        for (int threads = 1 + pass; threads <= 2; threads++) {
            long long calls = 0;
            assert_int_equal(build_failing_from(p, threads, -1, &calls), SPART_OK);
            assert_true(calls > 0);
            for (long long k = 0; k < calls; k = next_to_fail(k, calls)) {
                long long ignored = 0;
                spart_status status = build_failing_from(p, threads, k, &ignored);
                assert_true(status == SPART_ERROR_OUT_OF_MEMORY || status == SPART_OK);
                if (threads == 1) {
                    assert_int_equal(status, SPART_ERROR_OUT_OF_MEMORY);
                }
            }
        }
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lattice_stack_is_the_same_for_any_thread_count),
        cmocka_unit_test(multilinear_stack_is_the_same_for_any_thread_count),
        cmocka_unit_test(swept_pairs_are_the_same_for_any_thread_count),
        cmocka_unit_test(clipped_pairs_are_the_same_for_any_thread_count),
        cmocka_unit_test(coordinates_gathered_or_read_in_place_give_the_same_weights),
        cmocka_unit_test(elements_of_any_size_are_joined_in_order),
        cmocka_unit_test(a_non_finite_coordinate_is_found_at_every_place),
        cmocka_unit_test(running_out_of_memory_anywhere_is_reported_without_leaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
