/*
 * tests/unit/test_scoring.c: candidate scoring on the host (spart/scoring.h):
 * against the float64 reference (inputs rounded to float32 first; the
 * tolerance is stated in test_scoring_util.h), the degenerate cases (one
 * candidate gives 1, identical candidates exactly 1/K, a zero candidate
 * under cosine no NaN, logits that overflow a naive softmax), every
 * error, golden digests (the same for 1, 2 and 3 threads), a batch row
 * against its question alone, and the workspace form against the simple
 * one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include "spart/scoring.h"
#include "test_scoring_util.h"

/* Score a case on the host (simple batch form) into new arrays of its
 * type, poisoned first. */
static void score_case(spart_context *context, const scoring_case *c, void **probabilities,
                       void **logits)
{
    const int64_t n = c->num_question * c->num_candidate;
    *probabilities = malloc((size_t)n * scoring_width(c->type));
    *logits = malloc((size_t)n * scoring_width(c->type));
    assert_non_null(*probabilities);
    assert_non_null(*logits);
    memset(*probabilities, 0xff, (size_t)n * scoring_width(c->type)); /* NaN */
    memset(*logits, 0xff, (size_t)n * scoring_width(c->type));
    spart_status status = spart_scoring_apply_batch(
        context, c->query_typed, c->candidates_typed, *probabilities, *logits, c->num_question,
        c->num_candidate, c->dimension, c->similarity, c->scale, c->temperature, c->type, 0);
    if (status != SPART_OK) {
        fail_msg("spart_scoring_apply_batch: %s", spart_context_error(context));
    }
}

/* One case against the reference: probabilities, logits, rows summing
 * to 1. */
static void check_against_reference(spart_context *context, scoring_case *c, const char *what)
{
    scoring_case_sync(c);
    const int64_t n = c->num_question * c->num_candidate;
    double *z = malloc((size_t)n * sizeof(double)), *p = malloc((size_t)n * sizeof(double));
    assert_non_null(z);
    assert_non_null(p);
    scoring_reference(c, z, p);
    void *probabilities = NULL, *logits = NULL;
    score_case(context, c, &probabilities, &logits);
    scoring_assert_close(probabilities, c->type, p, n, 0.0, what);
    double largest = 0.0;
    for (int64_t i = 0; i < n; i++) {
        largest = fmax(largest, fabs(z[i]));
    }
    scoring_assert_close(logits, c->type, z, n, 1e-12 * (1.0 + largest), what);
    for (int64_t t = 0; t < c->num_question; t++) {
        double sum = 0.0;
        for (int64_t k = 0; k < c->num_candidate; k++) {
            sum += scoring_value(probabilities, c->type, t * c->num_candidate + k);
        }
        const double eps = c->type == SPART_FLOAT32 ? 1.2e-7 : 2.3e-16;
        if (!(fabs(sum - 1.0) <= eps * (double)(c->num_candidate + 2))) {
            fail_msg("%s: question %lld sums to %.17g", what, (long long)t, sum);
        }
    }
    free(z);
    free(p);
    free(probabilities);
    free(logits);
}

static void test_reference_cases(void **state)
{
    spart_context *context = *state;
    /* (Q, K, D, similarity, scale, temperature): small and odd shapes, a
     * dimension that is not a multiple of 4, more than one chunk, the
     * scales of the CLM and Kev heads. */
    struct {
        int64_t nq, nk, d;
        spart_similarity sim;
        double scale, temperature;
    } cases[] = {
        {1, 1, 1, SPART_SIMILARITY_DOT, 1.0, 1.0},
        {1, 5, 512, SPART_SIMILARITY_COSINE, 100.0, 1.0},
        {3, 7, 3, SPART_SIMILARITY_DOT, 2.0, 1.0},
        {2, 33, 64, SPART_SIMILARITY_COSINE, 2.0, 2.406050072164233},
        {1, 255, 257, SPART_SIMILARITY_DOT, 0.0625, 2.406050072164233},
        {2, 1500, 37, SPART_SIMILARITY_COSINE, 100.0, 1.0},
        {1, 2600, 20, SPART_SIMILARITY_DOT, 1.0, 1.0},
        {4, 17, 130, SPART_SIMILARITY_DOT, 0.0625, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int type = 0; type < 2; type++) {
            spart_value_type value_type = type == 0 ? SPART_FLOAT32 : SPART_FLOAT64;
            scoring_case c =
                scoring_case_make(cases[i].nq, cases[i].nk, cases[i].d, cases[i].sim,
                                  cases[i].scale, cases[i].temperature, value_type, 1.0, 1000 + i);
            char what[96];
            snprintf(what, sizeof what, "case %zu (%s)", i, type == 0 ? "float32" : "float64");
            check_against_reference(context, &c, what);
            scoring_case_free(&c);
        }
    }
}

static void test_one_candidate_gives_one(void **state)
{
    spart_context *context = *state;
    for (int type = 0; type < 2; type++) {
        scoring_case c = scoring_case_make(3, 1, 100, SPART_SIMILARITY_COSINE, 100.0, 0.5,
                                           type == 0 ? SPART_FLOAT32 : SPART_FLOAT64, 5.0, 7);
        scoring_case_sync(&c);
        void *p = NULL, *z = NULL;
        score_case(context, &c, &p, &z);
        for (int64_t t = 0; t < 3; t++) {
            assert_true(scoring_value(p, c.type, t) == 1.0);
        }
        free(p);
        free(z);
        scoring_case_free(&c);
    }
}

/* Identical candidates: exactly 1/K (one chunk and several). */
static void test_identical_candidates(void **state)
{
    spart_context *context = *state;
    const int64_t sizes[] = {2, 3, 7, 255, 1000, 3000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int type = 0; type < 2; type++) {
            const int64_t nk = sizes[i], d = 9;
            scoring_case c =
                scoring_case_make(1, nk, d, SPART_SIMILARITY_DOT, 3.0, 1.0,
                                  type == 0 ? SPART_FLOAT32 : SPART_FLOAT64, 2.0, 11 + i);
            for (int64_t k = 1; k < nk; k++) {
                memcpy(c.candidates + k * d, c.candidates, (size_t)d * sizeof(double));
            }
            scoring_case_sync(&c);
            void *p = NULL, *z = NULL;
            score_case(context, &c, &p, &z);
            const double expected =
                type == 0 ? (double)(float)(1.0 / (double)nk) : 1.0 / (double)nk;
            for (int64_t k = 0; k < nk; k++) {
                if (scoring_value(p, c.type, k) != expected) {
                    fail_msg("K = %lld: p[%lld] = %.17g, not 1/K", (long long)nk, (long long)k,
                             scoring_value(p, c.type, k));
                }
            }
            if (type == 0) { /* and 1/K rounded once in float32 */
                assert_true(((float *)p)[0] == 1.0f / (float)nk);
            }
            free(p);
            free(z);
            scoring_case_free(&c);
        }
    }
}

/* A zero candidate (and a zero query) under cosine: similarity 0, no NaN. */
static void test_zero_candidate_cosine(void **state)
{
    spart_context *context = *state;
    for (int type = 0; type < 2; type++) {
        scoring_case c = scoring_case_make(2, 4, 16, SPART_SIMILARITY_COSINE, 100.0, 1.0,
                                           type == 0 ? SPART_FLOAT32 : SPART_FLOAT64, 1.0, 21);
        memset(c.candidates + 2 * 16, 0, 16 * sizeof(double)); /* question 0, candidate 2 */
        memset(c.query + 16, 0, 16 * sizeof(double));          /* question 1's query */
        scoring_case_sync(&c);
        void *p = NULL, *z = NULL;
        score_case(context, &c, &p, &z);
        for (int64_t i = 0; i < 8; i++) {
            assert_false(isnan(scoring_value(p, c.type, i)));
            assert_false(isnan(scoring_value(z, c.type, i)));
        }
        assert_true(scoring_value(z, c.type, 2) == 0.0);
        for (int64_t k = 0; k < 4; k++) { /* a zero query scores every candidate 0 */
            assert_true(scoring_value(z, c.type, 4 + k) == 0.0);
            assert_true(scoring_value(p, c.type, 4 + k) == (type == 0 ? 0.25f : 0.25));
        }
        free(p);
        free(z);
        scoring_case_free(&c);
    }
}

/* Logits of about 10^4 (exp overflows float64 beyond 709): finite
 * probabilities, the reference's. */
static void test_overflowing_logits(void **state)
{
    spart_context *context = *state;
    for (int type = 0; type < 2; type++) {
        scoring_case c = scoring_case_make(2, 40, 64, SPART_SIMILARITY_DOT, 1000.0, 0.5,
                                           type == 0 ? SPART_FLOAT32 : SPART_FLOAT64, 1.0, 31);
        /* the reference takes the maximum first, so it is the stable one */
        double *z = malloc(80 * sizeof(double)), *p = malloc(80 * sizeof(double));
        scoring_case_sync(&c);
        scoring_reference(&c, z, p);
        double largest = 0.0;
        for (int i = 0; i < 80; i++) {
            largest = fmax(largest, z[i]);
        }
        assert_true(largest > 710.0); /* a naive exp(z) overflows */
        assert_true(isinf(exp(largest)));
        void *got = NULL, *logits = NULL;
        score_case(context, &c, &got, &logits);
        for (int i = 0; i < 80; i++) {
            assert_true(isfinite(scoring_value(got, c.type, i)));
        }
        /* Logits near 10^4 carry an absolute error of about 1e-12 of the
         * dot's terms, which the softmax turns into a relative one. */
        const double tolerance = type == 0 ? 2e-7 : 1e-9;
        const double floor = type == 0 ? SCORING_FLOOR_32 : SCORING_FLOOR_64;
        for (int i = 0; i < 80; i++) {
            const double g = scoring_value(got, c.type, i);
            if (!(fabs(g - p[i]) <= tolerance * p[i] + floor)) {
                fail_msg("%s: p[%d] = %.17g, the reference %.17g",
                         type == 0 ? "float32" : "float64", i, g, p[i]);
            }
        }
        free(z);
        free(p);
        free(got);
        free(logits);
        scoring_case_free(&c);
    }
}

static void expect_error(spart_context *context, spart_status got, spart_status expected,
                         const char *what)
{
    if (got != expected) {
        fail_msg("%s: status %s, expected %s (%s)", what, spart_status_string(got),
                 spart_status_string(expected), spart_context_error(context));
    }
    assert_true(strlen(spart_context_error(context)) > 0);
}

static void test_errors(void **state)
{
    spart_context *context = *state;
    float q[4] = {1, 2, 3, 4}, c[8] = {1, 0, 0, 0, 0, 1, 0, 0}, p[2], z[2];
    const spart_similarity dot = SPART_SIMILARITY_DOT;
    const spart_value_type f32 = SPART_FLOAT32;
#define APPLY(Q_, C_, P_, Z_, K_, D_, SIM_, SCALE_, T_, TYPE_)                                     \
    spart_scoring_apply(context, Q_, C_, P_, Z_, K_, D_, SIM_, SCALE_, T_, TYPE_, 0)
    expect_error(context, APPLY(q, c, p, z, 0, 4, dot, 1.0, 1.0, f32), SPART_ERROR_INVALID_ARGUMENT,
                 "K = 0");
    expect_error(context, APPLY(q, c, p, z, 2, 0, dot, 1.0, 1.0, f32), SPART_ERROR_INVALID_ARGUMENT,
                 "D = 0");
    expect_error(context, APPLY(q, c, p, z, -1, 4, dot, 1.0, 1.0, f32),
                 SPART_ERROR_INVALID_ARGUMENT, "K = -1");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, 0.0, 1.0, f32), SPART_ERROR_INVALID_ARGUMENT,
                 "scale = 0");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, -1.0, 1.0, f32),
                 SPART_ERROR_INVALID_ARGUMENT, "scale = -1");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, NAN, 1.0, f32), SPART_ERROR_INVALID_ARGUMENT,
                 "scale = NaN");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, INFINITY, 1.0, f32),
                 SPART_ERROR_INVALID_ARGUMENT, "scale = inf");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, 1.0, 0.0, f32), SPART_ERROR_INVALID_ARGUMENT,
                 "temperature = 0");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, 1.0, -1.0, f32),
                 SPART_ERROR_INVALID_ARGUMENT, "temperature = -1");
    expect_error(context, APPLY(NULL, c, p, z, 2, 4, dot, 1.0, 1.0, f32), SPART_ERROR_NULL_POINTER,
                 "NULL query");
    expect_error(context, APPLY(q, NULL, p, z, 2, 4, dot, 1.0, 1.0, f32), SPART_ERROR_NULL_POINTER,
                 "NULL candidates");
    expect_error(context, APPLY(q, c, NULL, z, 2, 4, dot, 1.0, 1.0, f32), SPART_ERROR_NULL_POINTER,
                 "NULL probabilities");
    expect_error(context, APPLY(q, c, p, p, 2, 4, dot, 1.0, 1.0, f32), SPART_ERROR_INVALID_ARGUMENT,
                 "logits = probabilities");
    expect_error(context, APPLY(q, c, p, z, 2, 4, (spart_similarity)7, 1.0, 1.0, f32),
                 SPART_ERROR_UNKNOWN_ENUM, "similarity 7");
    expect_error(context, APPLY(q, c, p, z, 2, 4, dot, 1.0, 1.0, (spart_value_type)5),
                 SPART_ERROR_UNKNOWN_ENUM, "value type 5");
#undef APPLY
    assert_int_equal(spart_scoring_apply(NULL, q, c, p, z, 2, 4, dot, 1.0, 1.0, f32, 0),
                     SPART_ERROR_NULL_POINTER);
    assert_true(strlen(spart_last_error()) > 0);
    expect_error(context,
                 spart_scoring_apply_batch(context, q, c, p, z, 0, 2, 4, dot, 1.0, 1.0, f32, 0),
                 SPART_ERROR_INVALID_ARGUMENT, "Q = 0");
    expect_error(
        context,
        spart_scoring_apply_batch(context, q, c, p, z, INT64_MAX / 2, 4, 4, dot, 1.0, 1.0, f32, 0),
        SPART_ERROR_OVERFLOW, "Q K D past int64");
    /* the workspace form */
    double workspace[8];
    const size_t needed = spart_scoring_workspace_size(1, 2);
    assert_int_equal(needed, (2 + 2) * sizeof(double));
    assert_int_equal(spart_scoring_workspace_size(0, 2), 0);
    assert_int_equal(spart_scoring_workspace_size(1, 0), 0);
    expect_error(context,
                 spart_scoring_apply_batch_workspace(context, q, c, p, z, 1, 2, 4, dot, 1.0, 1.0,
                                                     f32, 0, NULL, needed),
                 SPART_ERROR_NULL_POINTER, "NULL workspace");
    expect_error(context,
                 spart_scoring_apply_batch_workspace(context, q, c, p, z, 1, 2, 4, dot, 1.0, 1.0,
                                                     f32, 0, workspace, needed - 1),
                 SPART_ERROR_INVALID_ARGUMENT, "workspace too small");
    expect_error(context,
                 spart_scoring_apply_batch_workspace(context, q, c, p, z, 1, 2, 4, dot, 1.0, 1.0,
                                                     f32, 0, (char *)workspace + 4, needed),
                 SPART_ERROR_INVALID_ARGUMENT, "workspace not aligned");
    /* on_device with host arrays: no device (a build without CUDA, or no
     * GPU visible), or a device that refuses host memory */
    spart_context *probe = context_or_fail();
    const int have_device = spart_context_set_cuda_device(probe, 0) == SPART_OK;
    spart_context_free(probe);
    expect_error(context, spart_scoring_apply(context, q, c, p, z, 2, 4, dot, 1.0, 1.0, f32, 1),
                 have_device ? SPART_ERROR_INVALID_ARGUMENT : SPART_ERROR_NO_DEVICE,
                 "on_device with host arrays");
    /* a call that works leaves no sentence */
    assert_int_equal(spart_scoring_apply(context, q, c, p, NULL, 2, 4, dot, 1.0, 1.0, f32, 0),
                     SPART_OK);
    assert_string_equal(spart_context_error(context), "");
    assert_true(fabsf(p[0] - 0.26894142f) < 1e-6f);
}

static void test_golden_digests(void **state)
{
    spart_context *context = *state;
    uint64_t digests[3];
    for (int threads = 1; threads <= 3; threads++) {
        assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
        digests[threads - 1] = scoring_digest_of_cases(context, score_case);
    }
    assert_int_equal(spart_context_set_threads(context, 0), SPART_OK);
    printf("scoring golden digest: 0x%016llxULL\n", (unsigned long long)digests[0]);
    assert_true(digests[0] == digests[1]);
    assert_true(digests[0] == digests[2]);
    assert_true(digests[0] == SCORING_GOLDEN_DIGEST);
}

/* Row t of a batch is question t scored alone, bit for bit; the
 * workspace form (a poisoned workspace) gives the simple form's bits. */
static void test_batch_against_single(void **state)
{
    spart_context *context = *state;
    for (int type = 0; type < 2; type++) {
        const int64_t nq = 5, nk = 1100, d = 33;
        scoring_case c = scoring_case_make(nq, nk, d, SPART_SIMILARITY_COSINE, 20.0, 1.0,
                                           type == 0 ? SPART_FLOAT32 : SPART_FLOAT64, 1.0, 77);
        scoring_case_sync(&c);
        void *p = NULL, *z = NULL;
        score_case(context, &c, &p, &z);
        const size_t w = scoring_width(c.type);
        void *one = malloc((size_t)nk * w), *one_z = malloc((size_t)nk * w);
        for (int64_t t = 0; t < nq; t++) {
            assert_int_equal(spart_scoring_apply(context, (char *)c.query_typed + t * d * w,
                                                 (char *)c.candidates_typed + t * nk * d * w, one,
                                                 one_z, nk, d, c.similarity, c.scale, c.temperature,
                                                 c.type, 0),
                             SPART_OK);
            assert_memory_equal(one, (char *)p + t * nk * w, (size_t)nk * w);
            assert_memory_equal(one_z, (char *)z + t * nk * w, (size_t)nk * w);
        }
        size_t bytes = spart_scoring_workspace_size(nq, nk);
        double *workspace = malloc(bytes);
        memset(workspace, 0xff, bytes);
        void *p2 = malloc((size_t)(nq * nk) * w);
        assert_int_equal(spart_scoring_apply_batch_workspace(
                             context, c.query_typed, c.candidates_typed, p2, NULL, nq, nk, d,
                             c.similarity, c.scale, c.temperature, c.type, 0, workspace, bytes),
                         SPART_OK);
        assert_memory_equal(p2, p, (size_t)(nq * nk) * w);
        free(workspace);
        free(p2);
        free(one);
        free(one_z);
        free(p);
        free(z);
        scoring_case_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_cases),      cmocka_unit_test(test_one_candidate_gives_one),
        cmocka_unit_test(test_identical_candidates), cmocka_unit_test(test_zero_candidate_cosine),
        cmocka_unit_test(test_overflowing_logits),   cmocka_unit_test(test_errors),
        cmocka_unit_test(test_golden_digests),       cmocka_unit_test(test_batch_against_single),
    };
    return cmocka_run_group_tests(tests, context_set_up, context_tear_down);
}
