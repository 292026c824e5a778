/*
 * tests/unit/test_permute.c: the tiled block permute (spart/permute.h) on
 * the host against the float64 reference of the notes' CPU algorithm
 * (tests/unit/permute_cases.h): every permutation of 2 to 5 axes on small
 * odd sizes, recoupled blocks of every type with and without conjugation,
 * sizes of 1, empty blocks, no axes, eight axes, beta = 0 over NaN, the
 * same bits for any thread count, and every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "permute/permute_internal.h"
#include "spart/permute.h"
#include "test_util.h"
#include "permute_cases.h"

/* One value of the case's type from (re, im). */
static void scalar_of(spart_permute_type type, const double *value, double storage[2])
{
    if (case_single(type)) {
        float *f = (float *)storage;
        f[0] = (float)value[0];
        f[1] = (float)value[1];
    } else {
        storage[0] = value[0];
        storage[1] = value[1];
    }
}

/* Run the case on the host with `threads` threads and check it against
 * the reference (within a few units of the type's last place; exactly
 * where nothing is written). Returns a digest of the destination. */
static uint64_t run_case(const permute_case *c, spart_permute_op op, const double *alpha,
                         const double *beta, int nan_destination, int threads, uint64_t seed)
{
    spart_context *context = context_or_fail();
    assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
    void *source = case_values(c, c->source_length, seed, 0);
    void *destination = case_values(c, c->destination_length, seed + 1, nan_destination);
    int n_c = case_components(c->type);
    int64_t reals = c->destination_length * n_c;
    double *expected = malloc((size_t)(reals > 0 ? reals : 1) * sizeof(double));
    for (int64_t k = 0; k < reals; k++) {
        expected[k] = case_component(c, destination, k);
    }
    int conjugate = op == SPART_PERMUTE_CONJUGATE && n_c == 2;
    case_reference(c, conjugate, alpha, beta, source, expected);
    spart_permute_plan *plan = NULL;
    if (spart_permute_plan_create(context, c->type, c->num_axes, c->permutation, op, c->num_blocks,
                                  c->blocks, c->source_length, c->destination_length, 0,
                                  &plan) != SPART_OK) {
        fail_msg("plan: %s", spart_context_error(context));
    }
    double a[2], b[2];
    scalar_of(c->type, alpha, a);
    scalar_of(c->type, beta, b);
    if (spart_permute_execute(context, plan, a, source, b, destination) != SPART_OK) {
        fail_msg("execute: %s", spart_context_error(context));
    }
    double tolerance = case_single(c->type) ? 2e-6 : 4e-15;
    for (int64_t k = 0; k < reals; k++) {
        double got = case_component(c, destination, k), want = expected[k];
        if (isnan(got) && isnan(want)) {
            continue;
        }
        if (!(fabs(got - want) <= tolerance * (1.0 + fabs(want)) * 8.0)) {
            fail_msg("type %d, %d axes: destination value %lld is %.17g, the reference %.17g",
                     (int)c->type, c->num_axes, (long long)k, got, want);
        }
    }
    uint64_t digest =
        digest_bytes(destination, (size_t)c->destination_length * case_element_bytes(c->type));
    spart_permute_plan_free(plan);
    free(source);
    free(destination);
    free(expected);
    spart_context_free(context);
    return digest;
}

/* The next permutation in lexicographic order; 0 after the last. */
static int next_permutation(int *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] > p[i + 1]) {
        i--;
    }
    if (i < 0) {
        return 0;
    }
    int j = n - 1;
    while (p[j] < p[i]) {
        j--;
    }
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int a = i + 1, z = n - 1; a < z; a++, z--) {
        t = p[a];
        p[a] = p[z];
        p[z] = t;
    }
    return 1;
}

static const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};

/* Every permutation of 2..5 axes, odd extents 1..7, padded strides, plain
 * and scaled (alpha = 1.5, beta = -0.5), float64. */
static void every_permutation_of_2_to_5_axes(void **state)
{
    (void)state;
    const double alpha[2] = {1.5, 0.0}, beta[2] = {-0.5, 0.0};
    case_shape shape = {1, 7, 1, 1, 0, 1};
    uint64_t seed = 100;
    for (int axes = 2; axes <= 5; axes++) {
        int p[SPART_PERMUTE_MAX_AXES];
        for (int k = 0; k < axes; k++) {
            p[k] = k;
        }
        shape.max_size = axes <= 3 ? 7 : 5;
        do {
            permute_case c = make_case(SPART_PERMUTE_FLOAT64, axes, p, 2, &shape, seed++);
            run_case(&c, SPART_PERMUTE_IDENTITY, one, zero, 0, 2, seed);
            run_case(&c, SPART_PERMUTE_IDENTITY, alpha, beta, 0, 2, seed);
            free_case(&c);
        } while (next_permutation(p, axes));
    }
}

/* A copy (alpha = 1, beta = 0, n = m = 1) moves bits: -0.0 stays -0.0. */
static void plain_transpose_copies_bits(void **state)
{
    (void)state;
    const int p[3] = {2, 0, 1};
    case_shape shape = {3, 9, 1, 1, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_FLOAT64, 3, p, 3, &shape, 7);
    double *source = case_values(&c, c.source_length, 8, 0);
    for (int64_t k = 0; k < c.source_length; k += 3) {
        source[k] = -0.0;
    }
    double *destination = case_values(&c, c.destination_length, 9, 1);
    spart_context *context = context_or_fail();
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(context, c.type, 3, p, SPART_PERMUTE_IDENTITY,
                                               c.num_blocks, c.blocks, c.source_length,
                                               c.destination_length, 0, &plan),
                     SPART_OK);
    assert_int_equal(spart_permute_execute(context, plan, one, source, zero, destination),
                     SPART_OK);
    for (int64_t b = 0; b < c.num_blocks; b++) {
        const spart_permute_block *block = &c.blocks[b];
        for (int64_t s0 = 0; s0 < block->sizes[0]; s0++) {
            for (int64_t s1 = 0; s1 < block->sizes[1]; s1++) {
                for (int64_t s2 = 0; s2 < block->sizes[2]; s2++) {
                    int64_t s[3] = {s0, s1, s2};
                    int64_t from = block->source_offsets[0], to = block->destination_offsets[0];
                    for (int k = 0; k < 3; k++) {
                        from += s[k] * block->source_strides[k];
                        to += s[p[k]] * block->destination_strides[k];
                    }
                    assert_memory_equal(&source[from], &destination[to], sizeof(double));
                }
            }
        }
    }
    spart_permute_plan_free(plan);
    spart_context_free(context);
    free(source);
    free(destination);
    free_case(&c);
}

/* Fusion blocks with n, m in 0..3 and U with zeros, every type, with and
 * without conjugation, complex alpha and beta. */
static void recoupled_blocks_of_every_type(void **state)
{
    (void)state;
    const int p[4] = {1, 3, 0, 2};
    const double alpha[2] = {0.75, -0.25}, beta[2] = {0.5, 0.125};
    case_shape shape = {1, 6, 3, 1, 1, 0};
    for (int type = SPART_PERMUTE_FLOAT32; type <= SPART_PERMUTE_COMPLEX128; type++) {
        permute_case c = make_case((spart_permute_type)type, 4, p, 40, &shape, 200 + type);
        run_case(&c, SPART_PERMUTE_IDENTITY, alpha, beta, 0, 2, 11);
        run_case(&c, SPART_PERMUTE_CONJUGATE, alpha, beta, 0, 2, 12);
        run_case(&c, SPART_PERMUTE_IDENTITY, alpha, zero, 1, 2, 13);
        free_case(&c);
    }
}

/* The number of groups of a case's host plan (fusion blocks whose
 * destinations share one tiling, sources gathered once a tile). */
static int64_t count_groups(const permute_case *c)
{
    spart_context *context = context_or_fail();
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(context, c->type, c->num_axes, c->permutation,
                                               SPART_PERMUTE_IDENTITY, c->num_blocks, c->blocks,
                                               c->source_length, c->destination_length, 0, &plan),
                     SPART_OK);
    int64_t groups = 0;
    for (int64_t k = 0; k < plan->work.num_items; k++) {
        groups += plan->work.items[k].group_items > 1;
    }
    spart_permute_plan_free(plan);
    spart_context_free(context);
    return groups;
}

/* Fusion blocks whose destinations share strides (and sources theirs)
 * become groups; they give the reference, U with zeros (whole rows and
 * columns too) included, every type. */
static void recoupled_groups_match_the_reference(void **state)
{
    (void)state;
    const int p[3] = {2, 0, 1};
    const double alpha[2] = {0.75, -0.25}, beta[2] = {0.5, 0.125};
    case_shape shape = {8, 24, 4, 0, 1, 0};
    for (int type = SPART_PERMUTE_FLOAT32; type <= SPART_PERMUTE_COMPLEX128; type++) {
        permute_case c = make_case((spart_permute_type)type, 3, p, 8, &shape, 250 + type);
        /* Block 0: a zero row and a zero column of U. */
        spart_permute_block *b0 = &c.blocks[0];
        double *u = (double *)b0->recoupling;
        for (int64_t j = 0; u != NULL && j < b0->num_source; j++) {
            u[j] = 0.0;
        }
        for (int64_t i = 0; u != NULL && i < b0->num_destination; i++) {
            u[i * b0->num_source] = 0.0;
        }
        assert_true(count_groups(&c) >= 1);
        run_case(&c, SPART_PERMUTE_IDENTITY, alpha, beta, 0, 2, 23);
        run_case(&c, SPART_PERMUTE_CONJUGATE, alpha, zero, 1, 2, 24);
        free_case(&c);
    }
}

/* Large enough that tiles are cut at the edges (2-D and 3-D). */
static void blocks_larger_than_a_tile(void **state)
{
    (void)state;
    const int p2[2] = {1, 0}, p3[3] = {1, 2, 0};
    case_shape shape = {60, 90, 2, 1, 1, 0};
    for (int type = SPART_PERMUTE_FLOAT32; type <= SPART_PERMUTE_COMPLEX128; type++) {
        permute_case c = make_case((spart_permute_type)type, 2, p2, 3, &shape, 300 + type);
        run_case(&c, SPART_PERMUTE_IDENTITY, one, zero, 0, 2, 14);
        free_case(&c);
    }
    case_shape cube = {9, 23, 1, 1, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_FLOAT64, 3, p3, 2, &cube, 310);
    run_case(&c, SPART_PERMUTE_IDENTITY, one, one, 0, 2, 15);
    free_case(&c);
}

/* Extents of 1 everywhere, and some. */
static void sizes_of_one(void **state)
{
    (void)state;
    const int p[4] = {3, 2, 1, 0};
    case_shape ones = {1, 1, 2, 1, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_COMPLEX128, 4, p, 5, &ones, 400);
    run_case(&c, SPART_PERMUTE_CONJUGATE, one, one, 0, 2, 16);
    free_case(&c);
    case_shape some = {1, 2, 2, 1, 0, 0};
    c = make_case(SPART_PERMUTE_FLOAT32, 4, p, 20, &some, 401);
    run_case(&c, SPART_PERMUTE_IDENTITY, one, one, 0, 2, 17);
    free_case(&c);
}

/* Blocks with a zero extent touch nothing; so do n = 0 blocks. */
static void empty_blocks_touch_nothing(void **state)
{
    (void)state;
    const int p[3] = {2, 1, 0};
    case_shape shape = {0, 3, 2, 1, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_FLOAT64, 3, p, 30, &shape, 500);
    run_case(&c, SPART_PERMUTE_IDENTITY, one, one, 0, 2, 18);
    free_case(&c);
    /* No blocks at all, and arrays of length 0 (NULL pointers). */
    spart_context *context = context_or_fail();
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 3, p,
                                               SPART_PERMUTE_IDENTITY, 0, NULL, 0, 0, 0, &plan),
                     SPART_OK);
    int64_t items = -1, tiles = -1;
    assert_int_equal(spart_permute_plan_counts(plan, &items, &tiles, NULL), SPART_OK);
    assert_int_equal(items, 0);
    assert_int_equal(tiles, 0);
    assert_int_equal(spart_permute_execute(context, plan, one, NULL, one, NULL), SPART_OK);
    spart_permute_plan_free(plan);
    spart_context_free(context);
}

/* No axes (scalar blocks) and eight axes. */
static void zero_and_eight_axes(void **state)
{
    (void)state;
    case_shape shape = {1, 1, 3, 0, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_COMPLEX64, 0, NULL, 10, &shape, 600);
    run_case(&c, SPART_PERMUTE_CONJUGATE, one, one, 0, 2, 19);
    free_case(&c);
    const int p[8] = {7, 0, 6, 1, 5, 2, 4, 3};
    case_shape eight = {1, 3, 2, 1, 1, 0};
    c = make_case(SPART_PERMUTE_FLOAT64, 8, p, 4, &eight, 601);
    run_case(&c, SPART_PERMUTE_IDENTITY, one, one, 0, 2, 20);
    free_case(&c);
}

/* beta = 0 never reads the destination: NaN there is overwritten. */
static void beta_zero_ignores_nan(void **state)
{
    (void)state;
    const int p[3] = {1, 0, 2};
    case_shape shape = {1, 5, 2, 0, 0, 0};
    for (int type = SPART_PERMUTE_FLOAT32; type <= SPART_PERMUTE_COMPLEX128; type++) {
        permute_case c = make_case((spart_permute_type)type, 3, p, 12, &shape, 700 + type);
        run_case(&c, SPART_PERMUTE_IDENTITY, one, zero, 1, 2, 21);
        free_case(&c);
    }
}

/* The same bits with 1 and 2 threads, run after run. */
static void same_bits_for_any_thread_count(void **state)
{
    (void)state;
    const int p[4] = {2, 0, 3, 1};
    const double alpha[2] = {0.3, 0.7}, beta[2] = {-1.1, 0.2};
    case_shape shape = {1, 12, 3, 1, 1, 0};
    for (int type = SPART_PERMUTE_FLOAT32; type <= SPART_PERMUTE_COMPLEX128; type++) {
        permute_case c = make_case((spart_permute_type)type, 4, p, 25, &shape, 800 + type);
        uint64_t a = run_case(&c, SPART_PERMUTE_CONJUGATE, alpha, beta, 0, 1, 22);
        uint64_t b = run_case(&c, SPART_PERMUTE_CONJUGATE, alpha, beta, 0, 2, 22);
        assert_true(a == b);
        free_case(&c);
    }
}

/* The host's streamed stores (large float64 destinations, beta = 0) give
 * the bits of the cached loop, on ragged and line-aligned runs; so do
 * unstaged rows and tiles walked x fastest. */
static void streamed_stores_give_the_same_bits(void **state)
{
    spart_context *context = *state;
    const int p[3] = {2, 1, 0};
    case_shape shape = {5, 70, 1, 1, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_FLOAT64, 3, p, 6, &shape, 1000);
    double *source = case_values(&c, c.source_length, 1001, 0);
    double *cached = case_values(&c, c.destination_length, 1002, 1);
    double *streamed = case_values(&c, c.destination_length, 1002, 1);
    const double alpha[2] = {-1.25, 0.0};
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(context, c.type, 3, p, SPART_PERMUTE_IDENTITY,
                                               c.num_blocks, c.blocks, c.source_length,
                                               c.destination_length, 0, &plan),
                     SPART_OK);
    spart_permute_plan_set_stream_stores(plan, 0);
    assert_int_equal(spart_permute_execute(context, plan, alpha, source, zero, cached), SPART_OK);
    spart_permute_plan_set_stream_stores(plan, 1);
    assert_int_equal(spart_permute_execute(context, plan, alpha, source, zero, streamed), SPART_OK);
    assert_memory_equal(cached, streamed, (size_t)c.destination_length * sizeof(double));
    /* Rows read in place, and the tiles walked x fastest: the same bits. */
    spart_permute_plan_set_host_staging(plan, 0);
    spart_permute_plan_set_host_order(plan, 0);
    assert_int_equal(spart_permute_execute(context, plan, alpha, source, zero, streamed), SPART_OK);
    assert_memory_equal(cached, streamed, (size_t)c.destination_length * sizeof(double));
    spart_permute_plan_free(plan);
    free(source);
    free(cached);
    free(streamed);
    free_case(&c);
}

/* A plan for the errors below: one 2 x 3 float64 block, transposed. */
static const int64_t two_by_three[2] = {2, 3};
static const int64_t offset_zero[1] = {0};
static const int64_t rows_of_three[2] = {3, 1}, rows_of_two[2] = {2, 1};

static spart_permute_block small_block(void)
{
    spart_permute_block block = {two_by_three, 1,           1,           NULL,
                                 offset_zero,  rows_of_two, offset_zero, rows_of_three};
    return block;
}

static spart_status create(spart_context *context, const spart_permute_block *block,
                           int64_t source_length, int64_t destination_length,
                           spart_permute_plan **plan)
{
    const int p[2] = {1, 0};
    return spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, p, SPART_PERMUTE_IDENTITY,
                                     1, block, source_length, destination_length, 0, plan);
}

static void plan_errors(void **state)
{
    spart_context *context = *state;
    spart_permute_plan *plan = (spart_permute_plan *)1;
    spart_permute_block block = small_block();
    const int p[2] = {1, 0}, repeated[2] = {0, 0};
    assert_int_equal(create(context, &block, 6, 6, NULL), SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_permute_plan_create(NULL, SPART_PERMUTE_FLOAT64, 2, p, 0, 1, &block, 6, 6, 0, &plan),
        SPART_ERROR_NULL_POINTER);
    assert_null(plan);
    assert_int_equal(spart_permute_plan_create(context, (spart_permute_type)9, 2, p, 0, 1, &block,
                                               6, 6, 0, &plan),
                     SPART_ERROR_UNKNOWN_ENUM);
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, p,
                                               (spart_permute_op)5, 1, &block, 6, 6, 0, &plan),
                     SPART_ERROR_UNKNOWN_ENUM);
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 9, p, 0, 1, &block,
                                               6, 6, 0, &plan),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, repeated, 0, 1,
                                               &block, 6, 6, 0, &plan),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "permutation"));
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, NULL, 0, 1,
                                               &block, 6, 6, 0, &plan),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, p, 0, 1, NULL, 6, 6, 0, &plan),
        SPART_ERROR_NULL_POINTER);
    assert_int_equal(create(context, &block, -1, 6, &plan), SPART_ERROR_INVALID_ARGUMENT);
    /* Outside the arrays. */
    assert_int_equal(create(context, &block, 5, 6, &plan), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "source"));
    assert_int_equal(create(context, &block, 6, 5, &plan), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "destination"));
    const int64_t late[1] = {1};
    block.destination_offsets = late;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_ERROR_INVALID_ARGUMENT);
    block = small_block();
    const int64_t negative[2] = {-2, 0};
    block.sizes = negative;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_ERROR_INVALID_ARGUMENT);
    /* A destination that writes an element twice (stride 0). */
    block = small_block();
    const int64_t flat[2] = {0, 1};
    block.destination_strides = flat;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "twice"));
    /* U NULL with n = 2; U not finite; counts negative; arrays missing. */
    block = small_block();
    block.num_destination = 2;
    assert_int_equal(create(context, &block, 6, 12, &plan), SPART_ERROR_NULL_POINTER);
    const double infinite[1] = {INFINITY};
    block = small_block();
    block.recoupling = infinite;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_ERROR_NOT_FINITE);
    block = small_block();
    block.num_source = -1;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_ERROR_INVALID_ARGUMENT);
    block = small_block();
    block.source_strides = NULL;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_ERROR_NULL_POINTER);
    assert_null(plan);
    spart_permute_plan_free(NULL);
    assert_int_equal(spart_permute_plan_counts(NULL, NULL, NULL, NULL), SPART_ERROR_NULL_POINTER);
}

/* Two destination subblocks of different blocks at one place. */
static void overlapping_destinations_refused(void **state)
{
    spart_context *context = *state;
    spart_permute_block blocks[2] = {small_block(), small_block()};
    const int64_t shifted[1] = {3};
    blocks[1].destination_offsets = shifted; /* elements 3..8 meet 0..5 at 3..5 */
    const int p[2] = {1, 0};
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, p,
                                               SPART_PERMUTE_IDENTITY, 2, blocks, 6, 9, 0, &plan),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "twice"));
    /* Interleaved but disjoint: rows of one between rows of the other. */
    const int64_t wide[2] = {4, 1}, second[1] = {2};
    blocks[0].destination_strides = wide;
    blocks[1].destination_strides = wide;
    blocks[1].destination_offsets = second;
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, p,
                                               SPART_PERMUTE_IDENTITY, 2, blocks, 6, 12, 0, &plan),
                     SPART_OK);
    spart_permute_plan_free(plan);
}

static void execute_errors(void **state)
{
    spart_context *context = *state;
    spart_permute_block block = small_block();
    spart_permute_plan *plan = NULL;
    assert_int_equal(create(context, &block, 6, 6, &plan), SPART_OK);
    double data[12] = {0};
    assert_int_equal(spart_permute_execute(context, plan, one, data, zero, NULL),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_permute_execute(context, plan, NULL, data, zero, data + 6),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_permute_execute(context, NULL, one, data, zero, data + 6),
                     SPART_ERROR_NULL_POINTER);
    /* Aliasing: the same array, and overlapping ranges. */
    assert_int_equal(spart_permute_execute(context, plan, one, data, zero, data),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "overlap"));
    assert_int_equal(spart_permute_execute(context, plan, one, data + 3, zero, data),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_permute_execute(context, plan, one, data, zero, data + 6), SPART_OK);
    spart_permute_plan_free(plan);
}

/* Without CUDA a device plan is refused with NO_DEVICE. */
static void device_plan_without_cuda(void **state)
{
    spart_context *context = *state;
#if defined(SPART_HAVE_CUDA)
    (void)context;
    skip();
#else
    spart_permute_block block = small_block();
    const int p[2] = {1, 0};
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(context, SPART_PERMUTE_FLOAT64, 2, p,
                                               SPART_PERMUTE_IDENTITY, 1, &block, 6, 6, 1, &plan),
                     SPART_ERROR_NO_DEVICE);
    assert_null(plan);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_permutation_of_2_to_5_axes),
        cmocka_unit_test(plain_transpose_copies_bits),
        cmocka_unit_test(recoupled_blocks_of_every_type),
        cmocka_unit_test(recoupled_groups_match_the_reference),
        cmocka_unit_test(blocks_larger_than_a_tile),
        cmocka_unit_test(sizes_of_one),
        cmocka_unit_test(empty_blocks_touch_nothing),
        cmocka_unit_test(zero_and_eight_axes),
        cmocka_unit_test(beta_zero_ignores_nan),
        cmocka_unit_test(same_bits_for_any_thread_count),
        cmocka_unit_test(streamed_stores_give_the_same_bits),
        cmocka_unit_test(plan_errors),
        cmocka_unit_test(overlapping_destinations_refused),
        cmocka_unit_test(execute_errors),
        cmocka_unit_test(device_plan_without_cuda),
    };
    return cmocka_run_group_tests(tests, context_set_up, context_tear_down);
}
