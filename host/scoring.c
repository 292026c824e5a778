/*
 * host/scoring.c: candidate scoring on the host, twin of kernels/scoring.cu
 * (the order of operations in src/scoring/scoring_kernels.h). OpenMP over
 * (question, candidate) pairs for the logits, over (question, chunk) for
 * the chunks' sums, over questions for their totals and over pairs again
 * for the probabilities: every value is made by one thread in the fixed
 * order, so the bits do not depend on the thread count, and a single
 * question still uses every thread.
 */
#include <math.h>
#include <stdint.h>

#include "scoring/scoring_kernels.h"

double spart_scoring_host_tree(double *lanes)
{
    for (int h = SPART_SCORING_LANES / 2; h >= 1; h /= 2) {
        for (int l = 0; l < h; l++) {
            lanes[l] = lanes[l] + lanes[l + h];
        }
    }
    return lanes[0];
}

/* Value i of a row of either type, as a double (exact). */
static inline double value_at(const void *row, int float32, int64_t i)
{
    return float32 ? (double)((const float *)row)[i] : ((const double *)row)[i];
}

/* Steps 1 and 2 for one candidate row: per segment the lanes' partials
 * from +0.0, added to the lanes' sums in segment order, then the tree. A
 * lane with no quad in the (last) segment adds +0.0, which leaves its sum
 * as it is (the sum starts at +0.0, so it is never -0.0): the device,
 * which skips that addition, has the same bits. */
static double logit_of(const spart_scoring_problem *p, const void *query, const void *candidate)
{
    double dot[SPART_SCORING_LANES] = {0}, qq[SPART_SCORING_LANES] = {0},
           cc[SPART_SCORING_LANES] = {0};
    const int64_t d = p->dimension;
    const int64_t quads = (d + SPART_SCORING_QUAD - 1) / SPART_SCORING_QUAD;
    for (int64_t first_quad = 0; first_quad < quads; first_quad += SPART_SCORING_SEGMENT_QUADS) {
        double pd[SPART_SCORING_LANES] = {0}, pq[SPART_SCORING_LANES] = {0},
               pc[SPART_SCORING_LANES] = {0};
        const int64_t end_quad = first_quad + SPART_SCORING_SEGMENT_QUADS < quads
                                     ? first_quad + SPART_SCORING_SEGMENT_QUADS
                                     : quads;
        for (int64_t j = first_quad; j < end_quad; j++) {
            const int l = (int)(j % SPART_SCORING_LANES);
            const int64_t first = j * SPART_SCORING_QUAD;
            const int64_t end = first + SPART_SCORING_QUAD < d ? first + SPART_SCORING_QUAD : d;
            for (int64_t i = first; i < end; i++) {
                const double a = value_at(query, p->float32, i);
                const double b = value_at(candidate, p->float32, i);
                pd[l] = fma(a, b, pd[l]);
                if (p->cosine) {
                    pq[l] = fma(a, a, pq[l]);
                    pc[l] = fma(b, b, pc[l]);
                }
            }
        }
        for (int l = 0; l < SPART_SCORING_LANES; l++) {
            dot[l] = dot[l] + pd[l];
            qq[l] = qq[l] + pq[l];
            cc[l] = cc[l] + pc[l];
        }
    }
    const double dot_sum = spart_scoring_host_tree(dot);
    const double qq_sum = p->cosine ? spart_scoring_host_tree(qq) : 0.0;
    const double cc_sum = p->cosine ? spart_scoring_host_tree(cc) : 0.0;
    return spart_scoring_logit(dot_sum, qq_sum, cc_sum, p->cosine, p->scale, p->temperature);
}

/* Step 3 for the n <= SPART_SCORING_CHUNK logits z: (m_c, s_c). */
static void chunk_sums(const double *z, int64_t n, double *stats)
{
    double m = z[0];
    for (int64_t k = 1; k < n; k++) {
        m = spart_scoring_max(m, z[k]);
    }
    double lanes[SPART_SCORING_LANES] = {0};
    for (int64_t k = 0; k < n; k++) {
        const int l = (int)(k % SPART_SCORING_LANES);
        lanes[l] = lanes[l] + spart_exp(z[k] - m);
    }
    stats[0] = m;
    stats[1] = spart_scoring_host_tree(lanes);
}

/* Step 4 from the chunks' (m_c, s_c): (m, s). */
static void question_total(const double *stats, int64_t chunks, double *m, double *s)
{
    double max = stats[0];
    for (int64_t c = 1; c < chunks; c++) {
        max = spart_scoring_max(max, stats[2 * c]);
    }
    double sum = 0.0;
    for (int64_t c = 0; c < chunks; c++) {
        sum = fma(stats[2 * c + 1], spart_exp(stats[2 * c] - max), sum);
    }
    *m = max;
    *s = sum;
}

void spart_scoring_host_run(const spart_scoring_problem *p, double *workspace, int threads)
{
    const int64_t nq = p->num_question, nk = p->num_candidate, d = p->dimension;
    const int64_t chunks = spart_scoring_num_chunks(nk);
    const size_t width = p->float32 ? sizeof(float) : sizeof(double);
    double *z = workspace;
    double *stats = workspace + nq * nk; /* (m_c, s_c) per chunk of each question */
    const char *query = p->query, *candidates = p->candidates;

#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nq * nk; i++) {
            const int64_t t = i / nk;
            z[i] =
                logit_of(p, query + (size_t)(t * d) * width, candidates + (size_t)(i * d) * width);
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nq * chunks; i++) {
            const int64_t t = i / chunks, c = i % chunks;
            const int64_t first = c * SPART_SCORING_CHUNK;
            const int64_t n = nk - first < SPART_SCORING_CHUNK ? nk - first : SPART_SCORING_CHUNK;
            chunk_sums(z + t * nk + first, n, stats + 2 * i);
        }
        /* The totals go where each question's first chunk's sums were,
         * read only by this question's own iteration. */
#pragma omp for schedule(static)
        for (int64_t t = 0; t < nq; t++) {
            double m = 0.0, s = 0.0;
            question_total(stats + 2 * t * chunks, chunks, &m, &s);
            stats[2 * t * chunks] = m;
            stats[2 * t * chunks + 1] = s;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nq * nk; i++) {
            const int64_t t = i / nk;
            const double pk =
                spart_scoring_probability(z[i], stats[2 * t * chunks], stats[2 * t * chunks + 1]);
            if (p->float32) {
                ((float *)p->probabilities)[i] = (float)pk;
                if (p->logits != NULL) {
                    ((float *)p->logits)[i] = (float)z[i];
                }
            } else {
                ((double *)p->probabilities)[i] = pk;
                if (p->logits != NULL) {
                    ((double *)p->logits)[i] = z[i];
                }
            }
        }
    }
}
