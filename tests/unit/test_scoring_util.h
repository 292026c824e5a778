/*
 * tests/unit/test_scoring_util.h: what test_scoring.c and
 * test_cuda_scoring.c share: a scoring case (inputs drawn reproducibly in
 * float64 and rounded to float32, the arrays of either type), the float64
 * reference of spart/scoring.h's formula in the plain order (a naive dot,
 * the softmax with its maximum subtracted), and the comparison with its
 * stated tolerance.
 *
 * Include after <cmocka.h> and test_util.h.
 */
#ifndef SPART_TEST_SCORING_UTIL_H
#define SPART_TEST_SCORING_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/scoring.h"

/* Tolerances against the reference (relative to the reference value, plus
 * an absolute floor for values near 0): the two orders of the dot round
 * differently, by a few units of 2^-53 of the terms' sum, and the
 * exponential passes a logit's error on as a relative one; |z| stays
 * below 200 in these cases, so float64 agrees to 1e-11. Float32 outputs
 * are that result rounded once: half a unit of 2^-23, with margin 2^-23,
 * and 1e-44 for subnormal floats. */
#define SCORING_TOLERANCE_64 1e-11
#define SCORING_TOLERANCE_32 1.2e-7
#define SCORING_FLOOR_64 1e-300
#define SCORING_FLOOR_32 1e-44

typedef struct scoring_case {
    int64_t num_question, num_candidate, dimension;
    spart_similarity similarity;
    double scale, temperature;
    spart_value_type type;
    /* the values, float32-representable, as double */
    double *query, *candidates;
    /* the arrays of `type`: query, candidates */
    void *query_typed, *candidates_typed;
} scoring_case;

static inline size_t scoring_width(spart_value_type type)
{
    return type == SPART_FLOAT32 ? sizeof(float) : sizeof(double);
}

/* A case with values uniform in [-amplitude, amplitude], rounded to
 * float32 (for either type, so the reference sees the same numbers). */
static inline scoring_case scoring_case_make(int64_t nq, int64_t nk, int64_t d,
                                             spart_similarity similarity, double scale,
                                             double temperature, spart_value_type type,
                                             double amplitude, uint64_t seed)
{
    scoring_case c;
    memset(&c, 0, sizeof c);
    c.num_question = nq;
    c.num_candidate = nk;
    c.dimension = d;
    c.similarity = similarity;
    c.scale = scale;
    c.temperature = temperature;
    c.type = type;
    const int64_t nquery = nq * d, ncand = nq * nk * d;
    c.query = malloc((size_t)nquery * sizeof(double));
    c.candidates = malloc((size_t)ncand * sizeof(double));
    c.query_typed = malloc((size_t)nquery * scoring_width(type));
    c.candidates_typed = malloc((size_t)ncand * scoring_width(type));
    assert_non_null(c.query);
    assert_non_null(c.candidates);
    assert_non_null(c.query_typed);
    assert_non_null(c.candidates_typed);
    uint64_t state = seed;
    for (int64_t i = 0; i < nquery; i++) {
        c.query[i] = (double)(float)(amplitude * (2.0 * next_uniform(&state) - 1.0));
    }
    for (int64_t i = 0; i < ncand; i++) {
        c.candidates[i] = (double)(float)(amplitude * (2.0 * next_uniform(&state) - 1.0));
    }
    return c;
}

/* Copy the double values into the typed arrays (after a test changed
 * them). */
static inline void scoring_case_sync(scoring_case *c)
{
    const int64_t nquery = c->num_question * c->dimension;
    const int64_t ncand = nquery * c->num_candidate;
    for (int64_t i = 0; i < nquery; i++) {
        if (c->type == SPART_FLOAT32) {
            ((float *)c->query_typed)[i] = (float)c->query[i];
        } else {
            ((double *)c->query_typed)[i] = c->query[i];
        }
    }
    for (int64_t i = 0; i < ncand; i++) {
        if (c->type == SPART_FLOAT32) {
            ((float *)c->candidates_typed)[i] = (float)c->candidates[i];
        } else {
            ((double *)c->candidates_typed)[i] = c->candidates[i];
        }
    }
}

static inline void scoring_case_free(scoring_case *c)
{
    free(c->query);
    free(c->candidates);
    free(c->query_typed);
    free(c->candidates_typed);
}

/* The reference: z (Q x K) and p (Q x K) in float64, the plain order. */
static inline void scoring_reference(const scoring_case *c, double *z, double *p)
{
    const int64_t nk = c->num_candidate, d = c->dimension;
    for (int64_t t = 0; t < c->num_question; t++) {
        const double *q = c->query + t * d;
        double qq = 0.0;
        for (int64_t i = 0; i < d; i++) {
            qq += q[i] * q[i];
        }
        double m = -INFINITY;
        for (int64_t k = 0; k < nk; k++) {
            const double *row = c->candidates + (t * nk + k) * d;
            double dot = 0.0, cc = 0.0;
            for (int64_t i = 0; i < d; i++) {
                dot += q[i] * row[i];
                cc += row[i] * row[i];
            }
            double sim = dot;
            if (c->similarity == SPART_SIMILARITY_COSINE) {
                sim = dot / (fmax(sqrt(qq), 1e-12) * fmax(sqrt(cc), 1e-12));
            }
            z[t * nk + k] = sim * c->scale / c->temperature;
            m = fmax(m, z[t * nk + k]);
        }
        double s = 0.0;
        for (int64_t k = 0; k < nk; k++) {
            s += exp(z[t * nk + k] - m);
        }
        for (int64_t k = 0; k < nk; k++) {
            p[t * nk + k] = exp(z[t * nk + k] - m) / s;
        }
    }
}

/* Value i of an array of `type` as a double. */
static inline double scoring_value(const void *array, spart_value_type type, int64_t i)
{
    return type == SPART_FLOAT32 ? (double)((const float *)array)[i] : ((const double *)array)[i];
}

/* Every value of `got` (n of `type`) within the tolerance of `expected`;
 * `zero_floor`: also an absolute tolerance of that size (logits near 0,
 * whose error is one of the sum, not of the value). */
static inline void scoring_assert_close(const void *got, spart_value_type type,
                                        const double *expected, int64_t n, double zero_floor,
                                        const char *what)
{
    const double tolerance = type == SPART_FLOAT32 ? SCORING_TOLERANCE_32 : SCORING_TOLERANCE_64;
    const double floor = type == SPART_FLOAT32 ? SCORING_FLOOR_32 : SCORING_FLOOR_64;
    for (int64_t i = 0; i < n; i++) {
        const double g = scoring_value(got, type, i);
        const double allowed = tolerance * fabs(expected[i]) + floor + zero_floor;
        if (!(fabs(g - expected[i]) <= allowed)) {
            fail_msg("%s: value %lld is %.17g, the reference %.17g (allowed %.3g)", what,
                     (long long)i, g, expected[i], allowed);
        }
    }
}

/* The golden digest of scoring_digest_of_cases: the contract's order held
 * still, on the host for any thread count and on the device. (The second
 * order, D in segments of 256 values, changed it from 0x11b1065f887b58a8,
 * the first order's.) */
#define SCORING_GOLDEN_DIGEST 0xb6b4ce85637e1c12ULL

/* A way to score a case into new arrays of its type (host or device). */
typedef void (*scoring_scorer)(spart_context *context, const scoring_case *c, void **probabilities,
                               void **logits);

/* The digest of a fixed set of cases (float32 and float64, dot and
 * cosine, one chunk and several, a dimension that is not a multiple of 4),
 * probabilities and logits. */
static inline uint64_t scoring_digest_of_cases(spart_context *context, scoring_scorer score)
{
    uint64_t digest = 0;
    const int64_t shapes[][3] = {{2, 5, 512}, {1, 255, 257}, {1, 2100, 24}, {3, 64, 7}};
    for (int s = 0; s < 4; s++) {
        for (int type = 0; type < 2; type++) {
            for (int sim = 0; sim < 2; sim++) {
                scoring_case c = scoring_case_make(shapes[s][0], shapes[s][1], shapes[s][2],
                                                   (spart_similarity)sim, 100.0 / 7.0, 1.3,
                                                   type == 0 ? SPART_FLOAT32 : SPART_FLOAT64, 3.0,
                                                   (uint64_t)(500 + 4 * s + 2 * type + sim));
                scoring_case_sync(&c);
                void *p = NULL, *z = NULL;
                score(context, &c, &p, &z);
                size_t bytes = (size_t)(c.num_question * c.num_candidate) * scoring_width(c.type);
                digest = digest * 31 + digest_bytes(p, bytes);
                digest = digest * 31 + digest_bytes(z, bytes);
                free(p);
                free(z);
                scoring_case_free(&c);
            }
        }
    }
    return digest;
}

#endif /* SPART_TEST_SCORING_UTIL_H */
