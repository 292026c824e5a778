/*
 * tests/unit/test_softmax.c: the segmented softmax on the host
 * (spart/softmax.h): against a float64 reference, the edge rules, golden
 * digests for 1, 2 and 16 threads, a head alone against eight, poisoned
 * outputs, degenerate shapes (no rows, no edges, one head, a row of 10 M
 * edges), the backward, the aggregation, and every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_util.h"
#include "softmax_test_util.h"

#define POISON (-12345.0)

/* The worst |a - b| / |b| (or |a - b| where |b| < 1e-300). */
static double worst_relative(const double *a, const double *b, int64_t n)
{
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (fabs(b[i]) > 1e-300) {
            d /= fabs(b[i]);
        }
        worst = d > worst ? d : worst;
    }
    return worst;
}

static double *filled(int64_t n, double value)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        values[i] = value;
    }
    return values;
}

/* ---- against the reference ---------------------------------------------------------------- */

/* float64: within 1e-14 relative of the long double reference, on a
 * power-law graph with a row of three chunks and a bit. */
static void test_forward_float64_matches_reference(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 3;
    test_graph g = test_graph_make(3000, 6.0, 3 * SPART_SOFTMAX_CHUNK + 5, 11);
    double *scores = random_doubles(g.edges * heads, 8.0, 12);
    double *out = filled(g.edges * heads, POISON), *expected = filled(g.edges * heads, 0.0);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT64);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    reference_softmax(&g, heads, scores, expected);
    assert_true(worst_relative(out, expected, g.edges * heads) < 1e-14);
    free(scores), free(out), free(expected);
    test_graph_free(&g);
}

/* float32: the float64 result rounded once, so within one float32 ulp of
 * the reference computed from the same float32 scores. */
static void test_forward_float32_within_one_ulp(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 4;
    test_graph g = test_graph_make(2000, 9.0, 2 * SPART_SOFTMAX_CHUNK + 1, 21);
    const int64_t n = g.edges * heads;
    double *wide = random_doubles(n, 20.0, 22);
    float *scores = to_floats(wide, n);
    for (int64_t i = 0; i < n; i++) {
        wide[i] = (double)scores[i];
    }
    float *out = malloc((size_t)n * sizeof(float));
    double *expected = filled(n, 0.0);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT32);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    reference_softmax(&g, heads, wide, expected);
    for (int64_t i = 0; i < n; i++) {
        const float e = (float)expected[i];
        const float ulp = nextafterf(e, INFINITY) - e;
        assert_true(fabsf(out[i] - e) <= ulp);
    }
    free(wide), free(scores), free(out), free(expected);
    test_graph_free(&g);
}

/* ---- the edge rules ------------------------------------------------------------------------ */

/* Rows: 0 empty, 1 one edge, 2 all -inf, 3 with +inf, 4 with NaN, 5
 * finite with one -inf, 6 empty, 7 of two edges; one head. */
static void test_edge_rules(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[] = {0, 0, 1, 4, 7, 10, 13, 13, 15};
    double scores[] = {3.5, -INFINITY, -INFINITY, -INFINITY, 1.0, INFINITY, 2.0, 0.5,
                       NAN, 2.0,       1.0,       -INFINITY, 2.0, 7.0,      7.0};
    double out[16];
    for (int i = 0; i < 16; i++) {
        out[i] = POISON;
    }
    spart_softmax_segments s = {0};
    s.num_rows = 8, s.num_edges = 15, s.num_heads = 1, s.row_ptr = row_ptr;
    s.value_type = SPART_FLOAT64;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    assert_true(out[0] == 1.0); /* one finite edge: exactly 1 */
    for (int i = 1; i < 4; i++) {
        assert_true(out[i] == 0.0 && !signbit(out[i])); /* all -inf: zeros */
    }
    for (int i = 4; i < 10; i++) {
        assert_true(isnan(out[i])); /* +inf or NaN: the whole row NaN */
    }
    assert_true(out[11] == 0.0);
    assert_true(fabs(out[10] + out[12] - 1.0) < 1e-15 && out[10] > 0.0);
    assert_true(out[13] == 0.5 && out[14] == 0.5);
    assert_true(out[15] == POISON); /* past the last row: untouched */
    /* NaN written is the positive quiet NaN */
    uint64_t bits;
    memcpy(&bits, &out[4], sizeof bits);
    assert_true(bits == 0x7ff8000000000000ULL);
}

/* Edges before row_ptr[0] and from row_ptr[R] on are not written. */
static void test_edges_outside_rows_untouched(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[] = {3, 5, 5, 9};
    double scores[24], out[24];
    for (int i = 0; i < 24; i++) {
        scores[i] = 0.1 * i;
        out[i] = POISON;
    }
    spart_softmax_segments s = {0};
    s.num_rows = 3, s.num_edges = 12, s.num_heads = 2, s.row_ptr = row_ptr;
    s.value_type = SPART_FLOAT64;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    for (int i = 0; i < 24; i++) {
        const int edge = i / 2;
        assert_true((edge >= 3 && edge < 9) == (out[i] != POISON));
    }
}

/* A head whose scores are all -inf in one row, finite elsewhere: zeros
 * there only; NaN in one head of a row leaves the other head finite. */
static void test_nan_stays_in_its_row_and_head(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 2;
    test_graph g = test_graph_make(500, 5.0, 0, 31);
    double *scores = random_doubles(g.edges * heads, 3.0, 32);
    int64_t row = 10;
    while (g.row_ptr[row + 1] - g.row_ptr[row] < 2) {
        row++;
    }
    const int64_t b = g.row_ptr[row];
    scores[(b + 1) * heads + 0] = NAN;
    double *out = filled(g.edges * heads, POISON);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT64);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    for (int64_t e = 0; e < g.edges; e++) {
        const int in_row = e >= b && e < g.row_ptr[row + 1];
        assert_true(isnan(out[e * heads]) == in_row);
        assert_false(isnan(out[e * heads + 1]));
    }
    free(scores), free(out);
    test_graph_free(&g);
}

/* ---- determinism ---------------------------------------------------------------------------- */

static uint64_t forward_digest(spart_context *context, int threads, spart_value_type type)
{
    const int64_t heads = 8;
    test_graph g = test_graph_make(4000, 7.0, 2 * SPART_SOFTMAX_CHUNK + 17, 41);
    const int64_t n = g.edges * heads;
    double *scores = random_doubles(n, 10.0, 42);
    spart_softmax_segments s = test_segments(&g, heads, type);
    assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
    uint64_t digest;
    if (type == SPART_FLOAT32) {
        float *scores32 = to_floats(scores, n), *out = malloc((size_t)n * sizeof(float));
        assert_int_equal(spart_softmax_forward(context, &s, scores32, out), SPART_OK);
        digest = digest_bytes(out, (size_t)n * sizeof(float));
        free(scores32), free(out);
    } else {
        double *out = filled(n, 0.0);
        assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
        digest = digest_doubles(out, n);
        free(out);
    }
    assert_int_equal(spart_context_set_threads(context, 0), SPART_OK);
    free(scores);
    test_graph_free(&g);
    return digest;
}

/* The same bits for 1, 2 and 16 threads, and the golden digests. */
static void test_forward_golden_digests(void **state)
{
    spart_context *context = *state;
    const uint64_t golden64 = forward_digest(context, 1, SPART_FLOAT64);
    const uint64_t golden32 = forward_digest(context, 1, SPART_FLOAT32);
    assert_true(forward_digest(context, 2, SPART_FLOAT64) == golden64);
    assert_true(forward_digest(context, 16, SPART_FLOAT64) == golden64);
    assert_true(forward_digest(context, 2, SPART_FLOAT32) == golden32);
    assert_true(forward_digest(context, 16, SPART_FLOAT32) == golden32);
    assert_true(golden64 == 0x68c4f05ca1299d97ULL);
    assert_true(golden32 == 0x212f0f08032835dcULL);
}

/* A head alone gives the bits it gives among eight. */
static void test_head_alone_equals_among_eight(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 8;
    test_graph g = test_graph_make(1500, 8.0, SPART_SOFTMAX_CHUNK + 1, 51);
    const int64_t n = g.edges * heads;
    double *scores = random_doubles(n, 6.0, 52);
    double *out = filled(n, 0.0), *alone = filled(g.edges, 0.0), *one = filled(g.edges, 0.0);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT64);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    spart_softmax_segments s1 = test_segments(&g, 1, SPART_FLOAT64);
    for (int64_t h = 0; h < heads; h += 3) {
        for (int64_t e = 0; e < g.edges; e++) {
            one[e] = scores[e * heads + h];
        }
        assert_int_equal(spart_softmax_forward(context, &s1, one, alone), SPART_OK);
        for (int64_t e = 0; e < g.edges; e++) {
            assert_memory_equal(&alone[e], &out[e * heads + h], sizeof(double));
        }
    }
    free(scores), free(out), free(alone), free(one);
    test_graph_free(&g);
}

/* The host walks a row once for a block of up to 8 heads and keeps a
 * row's terms only when they fit (64 KiB a thread): with 12 heads (a block
 * of 8 and one of 4), rows whose terms fit and rows whose terms are
 * computed again (1500 and 4096 edges), a long row, a head of -inf, a
 * head with a NaN and a head with a score whose exp underflows among finite
 * ones, each head alone gives the bits it gives among the twelve, in
 * float64 and float32. */
static void test_head_blocks_give_each_head_its_own_bits(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 12,
                  lengths[] = {1500, 4096, 3, 0, 2 * SPART_SOFTMAX_CHUNK + 9, 700, 1, 33};
    test_graph g = test_graph_make(8, 1.0, 0, 71);
    for (int64_t r = 0; r < 8; r++) {
        g.row_ptr[r + 1] = g.row_ptr[r] + lengths[r];
    }
    g.edges = g.row_ptr[8];
    const int64_t n = g.edges * heads;
    double *scores = random_doubles(n, 7.0, 72);
    for (int64_t e = g.row_ptr[0]; e < g.row_ptr[1]; e++) {
        scores[e * heads + 2] = -INFINITY; /* row 0, head 2: zeros */
    }
    for (int64_t e = g.row_ptr[4]; e < g.row_ptr[5]; e++) {
        scores[e * heads + 10] = -INFINITY; /* the long row, head 10: zeros */
    }
    scores[(g.row_ptr[5] + 17) * heads + 9] = NAN; /* row 5, head 9: NaN */
    /* row 1, head 3: a score far below the others (its exp underflows) */
    const int64_t far = (g.row_ptr[1] + 100) * heads + 3;
    scores[far] = -2000.0;
    for (int type = 0; type < 2; type++) {
        const spart_value_type value_type = type ? SPART_FLOAT32 : SPART_FLOAT64;
        const size_t size = type ? sizeof(float) : sizeof(double);
        float *scores32 = to_floats(scores, n);
        const void *all = type ? (const void *)scores32 : (const void *)scores;
        char *out = malloc((size_t)n * size), *one = malloc((size_t)g.edges * size);
        char *alone = malloc((size_t)g.edges * size);
        spart_softmax_segments s = test_segments(&g, heads, value_type);
        assert_int_equal(spart_softmax_forward(context, &s, all, out), SPART_OK);
        spart_softmax_segments s1 = test_segments(&g, 1, value_type);
        for (int64_t h = 0; h < heads; h++) {
            for (int64_t e = 0; e < g.edges; e++) {
                memcpy(one + e * size, (const char *)all + (e * heads + h) * size, size);
            }
            assert_int_equal(spart_softmax_forward(context, &s1, one, alone), SPART_OK);
            for (int64_t e = 0; e < g.edges; e++) {
                assert_memory_equal(alone + e * size, out + (e * heads + h) * size, size);
            }
        }
        for (int64_t e = g.row_ptr[5]; e < g.row_ptr[6]; e++) {
            const double v9 = type ? ((float *)out)[e * heads + 9] : ((double *)out)[e * heads + 9];
            const double v8 = type ? ((float *)out)[e * heads + 8] : ((double *)out)[e * heads + 8];
            assert_true(isnan(v9) && !isnan(v8));
        }
        for (int64_t e = g.row_ptr[0]; e < g.row_ptr[1]; e++) {
            const double v2 = type ? ((float *)out)[e * heads + 2] : ((double *)out)[e * heads + 2];
            assert_true(v2 == 0.0);
        }
        const double v_far = type ? ((float *)out)[far] : ((double *)out)[far];
        const double v_near = type ? ((float *)out)[far + heads] : ((double *)out)[far + heads];
        assert_true(v_far == 0.0 && v_near > 0.0);
        free(scores32), free(out), free(one), free(alone);
    }
    free(scores);
    test_graph_free(&g);
}

/* int32 row pointers, and scores overwritten in place, give the same bits. */
static void test_int32_rows_and_in_place_same_bits(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 2;
    test_graph g = test_graph_make(1000, 12.0, SPART_SOFTMAX_CHUNK + 100, 61);
    const int64_t n = g.edges * heads;
    double *scores = random_doubles(n, 5.0, 62), *out = filled(n, 0.0), *out32 = filled(n, 0.0);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT64);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    spart_softmax_segments s32 = s;
    s32.row_ptr = NULL;
    s32.row_ptr32 = g.row_ptr32;
    assert_int_equal(spart_softmax_forward(context, &s32, scores, out32), SPART_OK);
    assert_memory_equal(out, out32, (size_t)n * sizeof(double));
    assert_int_equal(spart_softmax_forward(context, &s, scores, scores), SPART_OK);
    assert_memory_equal(out, scores, (size_t)n * sizeof(double));
    free(scores), free(out), free(out32);
    test_graph_free(&g);
}

/* ---- degenerate shapes ---------------------------------------------------------------------- */

static void test_no_rows_and_no_edges(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[] = {0, 0, 0};
    spart_softmax_segments s = {0};
    s.num_rows = 0, s.num_edges = 0, s.num_heads = 4, s.row_ptr = row_ptr;
    s.value_type = SPART_FLOAT32;
    assert_int_equal(spart_softmax_forward(context, &s, NULL, NULL), SPART_OK);
    assert_int_equal(spart_softmax_backward(context, &s, NULL, NULL, NULL), SPART_OK);
    s.num_rows = 2; /* two empty rows */
    assert_int_equal(spart_softmax_forward(context, &s, NULL, NULL), SPART_OK);
    /* the aggregation writes y = 0 for an empty row */
    float y[2 * 4 * 3];
    for (int i = 0; i < 24; i++) {
        y[i] = -1.0f;
    }
    spart_softmax_gather gather = {0};
    gather.num_nodes = 0, gather.width = 3;
    assert_int_equal(spart_softmax_aggregate(context, &s, &gather, NULL, NULL, y, NULL), SPART_OK);
    for (int i = 0; i < 24; i++) {
        assert_true(y[i] == 0.0f);
    }
}

/* One row of 10 M edges, float32, one head: sums to 1 and matches the
 * reference where sampled. */
static void test_row_of_ten_million_edges(void **state)
{
    spart_context *context = *state;
    const int64_t n = 10000000;
    int64_t row_ptr[] = {0, 3, 3 + n, 3 + n + 2};
    const int64_t edges = row_ptr[3];
    float *scores = malloc((size_t)edges * sizeof(float)),
          *out = malloc((size_t)edges * sizeof(float));
    uint64_t random = 71;
    for (int64_t e = 0; e < edges; e++) {
        scores[e] = (float)(4.0 * next_uniform(&random));
    }
    scores[3 + 1234567] = 9.0f;
    spart_softmax_segments s = {0};
    s.num_rows = 3, s.num_edges = edges, s.num_heads = 1, s.row_ptr = row_ptr;
    s.value_type = SPART_FLOAT32;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    long double sum = 0.0L;
    for (int64_t e = 3; e < 3 + n; e++) {
        sum += expl((long double)scores[e] - 9.0L);
    }
    double total = 0.0;
    for (int64_t e = 3; e < 3 + n; e++) {
        total += out[e];
    }
    assert_true(fabs(total - 1.0) < 1e-4);
    for (int64_t e = 3; e < 3 + n; e += 99991) {
        const float expected = (float)(expl((long double)scores[e] - 9.0L) / sum);
        assert_true(fabsf(out[e] - expected) <= nextafterf(expected, INFINITY) - expected);
    }
    free(scores), free(out);
}

/* ---- the backward --------------------------------------------------------------------------- */

static void test_backward_matches_reference_and_digests(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 3;
    test_graph g = test_graph_make(2500, 7.0, 2 * SPART_SOFTMAX_CHUNK + 3, 81);
    const int64_t n = g.edges * heads;
    double *scores = random_doubles(n, 4.0, 82), *grad_out = random_doubles(n, 1.0, 83);
    double *out = filled(n, 0.0), *grad = filled(n, POISON), *expected = filled(n, 0.0);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT64);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    assert_int_equal(spart_softmax_backward(context, &s, out, grad_out, grad), SPART_OK);
    reference_backward(&g, heads, out, grad_out, expected);
    for (int64_t i = 0; i < n; i++) {
        assert_true(fabs(grad[i] - expected[i]) <= 1e-15 * (1.0 + fabs(expected[i]) * 1e3));
    }
    uint64_t digest = digest_doubles(grad, n);
    for (int threads = 1; threads <= 16; threads *= 4) {
        assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
        assert_int_equal(spart_softmax_backward(context, &s, out, grad_out, grad), SPART_OK);
        assert_true(digest_doubles(grad, n) == digest);
    }
    /* in place over grad_out */
    assert_int_equal(spart_softmax_backward(context, &s, out, grad_out, grad_out), SPART_OK);
    assert_memory_equal(grad_out, grad, (size_t)n * sizeof(double));
    assert_int_equal(spart_context_set_threads(context, 0), SPART_OK);
    free(scores), free(grad_out), free(out), free(grad), free(expected);
    test_graph_free(&g);
}

/* ---- the aggregation ------------------------------------------------------------------------ */

static void test_aggregate_matches_reference_and_forward(void **state)
{
    spart_context *context = *state;
    const int64_t heads = 2, width = 19;
    test_graph g = test_graph_make(1200, 6.0, SPART_SOFTMAX_CHUNK + 9, 91);
    const int64_t n = g.edges * heads, ny = g.rows * heads * width;
    double *scores = random_doubles(n, 5.0, 92);
    double *features = random_doubles(g.nodes * heads * width, 1.0, 93);
    double *y = filled(ny, POISON), *expected = filled(ny, 0.0), *ref = filled(n, 0.0);
    double *out = filled(n, POISON), *plain = filled(n, POISON);
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT64);
    spart_softmax_gather gather = test_gather(&g, width);
    assert_int_equal(spart_softmax_aggregate(context, &s, &gather, scores, features, y, out),
                     SPART_OK);
    reference_softmax(&g, heads, scores, ref);
    reference_aggregate(&g, heads, width, ref, features, expected);
    for (int64_t i = 0; i < ny; i++) {
        assert_true(fabs(y[i] - expected[i]) <= 1e-14);
    }
    /* out, when asked for, is the forward's */
    assert_int_equal(spart_softmax_forward(context, &s, scores, plain), SPART_OK);
    assert_memory_equal(out, plain, (size_t)n * sizeof(double));
    /* the same bits without out, for any thread count, and with int32 columns */
    const uint64_t digest = digest_doubles(y, ny);
    gather.columns = NULL;
    gather.columns32 = g.columns32;
    for (int threads = 1; threads <= 16; threads *= 4) {
        assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
        assert_int_equal(spart_softmax_aggregate(context, &s, &gather, scores, features, y, NULL),
                         SPART_OK);
        assert_true(digest_doubles(y, ny) == digest);
    }
    assert_int_equal(spart_context_set_threads(context, 0), SPART_OK);
    free(scores), free(features), free(y), free(expected), free(ref), free(out), free(plain);
    test_graph_free(&g);
}

/* ---- errors --------------------------------------------------------------------------------- */

static void test_bad_input_errors(void **state)
{
    spart_context *context = *state;
    int64_t row_ptr[] = {0, 2, 1, 4};
    double scores[8] = {0}, out[8];
    spart_softmax_segments s = {0};
    s.num_rows = 3, s.num_edges = 4, s.num_heads = 2, s.row_ptr = row_ptr;
    s.value_type = SPART_FLOAT64;
    /* not ascending */
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "row pointer 2"));
    assert_int_equal(spart_softmax_check_rows(context, &s), SPART_ERROR_INVALID_ARGUMENT);
    /* past E */
    row_ptr[2] = 3, row_ptr[3] = 5;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "row pointer 3"));
    /* negative first */
    row_ptr[0] = -1, row_ptr[3] = 4;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
    row_ptr[0] = 0;
    assert_int_equal(spart_softmax_check_rows(context, &s), SPART_OK);
    /* H = 0, negative sizes, type */
    s.num_heads = 0;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
    s.num_heads = 2, s.num_rows = -1;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
    s.num_rows = 3, s.value_type = (spart_value_type)7;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_UNKNOWN_ENUM);
    s.value_type = SPART_FLOAT64;
    /* NULL with a nonzero size */
    assert_int_equal(spart_softmax_forward(context, &s, NULL, out), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_softmax_forward(context, &s, scores, NULL), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_softmax_backward(context, &s, out, NULL, out), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_softmax_forward(NULL, &s, scores, out), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_softmax_forward(context, NULL, scores, out), SPART_ERROR_NULL_POINTER);
    /* row pointers: none, or both */
    s.row_ptr = NULL;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_NULL_POINTER);
    int32_t row_ptr32[] = {0, 2, 3, 4};
    s.row_ptr = row_ptr, s.row_ptr32 = row_ptr32;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
    s.row_ptr32 = NULL;
    /* overflow of E x H */
    s.num_edges = INT64_MAX / 2;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_OVERFLOW);
    s.num_edges = 4;
    /* the workspace */
    const size_t bytes = spart_softmax_workspace_size(&s, 0);
    assert_true(bytes > 0);
    double workspace[64];
    assert_true(bytes <= sizeof workspace);
    assert_int_equal(spart_softmax_forward_workspace(context, &s, scores, out, NULL, bytes),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(
        spart_softmax_forward_workspace(context, &s, scores, out, workspace, bytes - 1),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_softmax_forward_workspace(context, &s, scores, out, workspace, bytes),
                     SPART_OK);
    /* backward: grad_scores may not be out */
    assert_int_equal(spart_softmax_backward(context, &s, out, scores, out),
                     SPART_ERROR_INVALID_ARGUMENT);
    /* aggregation: width, columns */
    int64_t columns[] = {0, 1, 2, 3};
    double features[4 * 2 * 2] = {0}, y[3 * 2 * 2];
    spart_softmax_gather gather = {0};
    gather.num_nodes = 4, gather.width = 0, gather.columns = columns;
    assert_int_equal(spart_softmax_aggregate(context, &s, &gather, scores, features, y, NULL),
                     SPART_ERROR_INVALID_ARGUMENT);
    gather.width = 2;
    assert_int_equal(spart_softmax_aggregate(context, &s, &gather, scores, features, y, NULL),
                     SPART_OK);
    columns[2] = 4;
    assert_int_equal(spart_softmax_aggregate(context, &s, &gather, scores, features, y, NULL),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "edge 2"));
    assert_int_equal(spart_softmax_aggregate(context, &s, NULL, scores, features, y, NULL),
                     SPART_ERROR_NULL_POINTER);
    /* a device call: no device here (or, with one, host arrays) */
    s.on_device = 1;
    spart_status status = spart_softmax_forward(context, &s, scores, out);
    assert_true(status == SPART_ERROR_NO_DEVICE || status == SPART_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_float64_matches_reference),
        cmocka_unit_test(test_forward_float32_within_one_ulp),
        cmocka_unit_test(test_edge_rules),
        cmocka_unit_test(test_edges_outside_rows_untouched),
        cmocka_unit_test(test_nan_stays_in_its_row_and_head),
        cmocka_unit_test(test_forward_golden_digests),
        cmocka_unit_test(test_head_alone_equals_among_eight),
        cmocka_unit_test(test_head_blocks_give_each_head_its_own_bits),
        cmocka_unit_test(test_int32_rows_and_in_place_same_bits),
        cmocka_unit_test(test_no_rows_and_no_edges),
        cmocka_unit_test(test_row_of_ten_million_edges),
        cmocka_unit_test(test_backward_matches_reference_and_digests),
        cmocka_unit_test(test_aggregate_matches_reference_and_forward),
        cmocka_unit_test(test_bad_input_errors),
    };
    return cmocka_run_group_tests(tests, context_set_up, context_tear_down);
}
