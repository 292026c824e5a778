/*
 * src/scoring/scoring.c: the calls of spart/scoring.h: the checks of their
 * arguments, once, then the table of their location
 * (src/scoring/scoring_ops.h), chosen here and nowhere else.
 */
#include <math.h>
#include <stdint.h>

#include "core/internal.h"
#include "scoring/scoring_kernels.h"
#include "scoring/scoring_ops.h"
#include "spart/scoring.h"

_Static_assert(SPART_SCORING_CHUNK == 1024, "spart/scoring.h and scoring_kernels.h differ");

spart_status spart_scoring_select(spart_context *context, int on_device, const char *what,
                                  const spart_scoring_ops **ops)
{
    if (!on_device) {
        *ops = &spart_scoring_host_ops;
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    (void)context, (void)what;
    *ops = &spart_scoring_cuda_ops;
    return SPART_OK;
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: %s cannot run on a device (rebuild with "
                      "-DSPART_ENABLE_CUDA=ON)",
                      what);
#endif
}

/* Q K D and the workspace's values fit int64 and size_t (a product of
 * positive sizes, checked one factor at a time). */
static int sizes_fit(int64_t num_question, int64_t num_candidate, int64_t dimension)
{
    const int64_t limit = INT64_MAX / 16;
    if (num_candidate > limit / num_question) {
        return 0;
    }
    const int64_t pairs = num_question * num_candidate;
    return dimension <= limit / pairs && (uint64_t)(pairs * 3) <= (uint64_t)(SIZE_MAX / 8);
}

size_t spart_scoring_workspace_size(int64_t num_question, int64_t num_candidate)
{
    if (num_question < 1 || num_candidate < 1 || !sizes_fit(num_question, num_candidate, 1)) {
        return 0;
    }
    return (size_t)spart_scoring_workspace_values(num_question, num_candidate) * sizeof(double);
}

static spart_status check_positive(spart_context *context, const char *what, const char *name,
                                   double value)
{
    if (!(value > 0.0) || !isfinite(value)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: %s is %g; it must be a finite number above 0", what, name, value);
    }
    return SPART_OK;
}

/* Every check of the three calls; *problem filled on success. */
static spart_status check(spart_context *context, const char *what, const void *query,
                          const void *candidates, void *probabilities, void *logits,
                          int64_t num_question, int64_t num_candidate, int64_t dimension,
                          spart_similarity similarity, double scale, double temperature,
                          spart_value_type value_type, spart_scoring_problem *problem)
{
    if (context == NULL || query == NULL || candidates == NULL || probabilities == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "%s: NULL argument (context, query, candidates and probabilities are "
                          "needed; only logits may be NULL)",
                          what);
    }
    spart_clear_error(context);
    if (num_question < 1 || num_candidate < 1 || dimension < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: %lld questions of %lld candidates of dimension %lld: each must be "
                          "at least 1",
                          what, (long long)num_question, (long long)num_candidate,
                          (long long)dimension);
    }
    if (!sizes_fit(num_question, num_candidate, dimension)) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "%s: %lld x %lld x %lld values do not fit the index types", what,
                          (long long)num_question, (long long)num_candidate, (long long)dimension);
    }
    spart_status status = check_positive(context, what, "scale", scale);
    if (status == SPART_OK) {
        status = check_positive(context, what, "temperature", temperature);
    }
    if (status != SPART_OK) {
        return status;
    }
    if (similarity != SPART_SIMILARITY_DOT && similarity != SPART_SIMILARITY_COSINE) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "%s: similarity %d is neither SPART_SIMILARITY_DOT nor "
                          "SPART_SIMILARITY_COSINE",
                          what, (int)similarity);
    }
    if (value_type != SPART_FLOAT32 && value_type != SPART_FLOAT64) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "%s: value type %d is neither SPART_FLOAT32 nor SPART_FLOAT64", what,
                          (int)value_type);
    }
    if (logits == probabilities) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: logits and probabilities are the same array", what);
    }
    problem->query = query;
    problem->candidates = candidates;
    problem->probabilities = probabilities;
    problem->logits = logits;
    problem->num_question = num_question;
    problem->num_candidate = num_candidate;
    problem->dimension = dimension;
    problem->scale = scale;
    problem->temperature = temperature;
    problem->cosine = similarity == SPART_SIMILARITY_COSINE;
    problem->float32 = value_type == SPART_FLOAT32;
    return SPART_OK;
}

/* The three calls; workspace NULL with `allocate`: the table allocates. */
static spart_status run(spart_context *context, const char *what, const void *query,
                        const void *candidates, void *probabilities, void *logits,
                        int64_t num_question, int64_t num_candidate, int64_t dimension,
                        spart_similarity similarity, double scale, double temperature,
                        spart_value_type value_type, int on_device, int allocate, void *workspace,
                        size_t workspace_bytes)
{
    spart_scoring_problem problem;
    spart_status status =
        check(context, what, query, candidates, probabilities, logits, num_question, num_candidate,
              dimension, similarity, scale, temperature, value_type, &problem);
    if (status == SPART_OK && !allocate) {
        size_t needed = spart_scoring_workspace_size(num_question, num_candidate);
        if (workspace == NULL) {
            status = spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: workspace is NULL", what);
        } else if (workspace_bytes < needed) {
            status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                "%s: workspace of %zu bytes, %zu needed "
                                "(spart_scoring_workspace_size)",
                                what, workspace_bytes, needed);
        } else if ((uintptr_t)workspace % sizeof(double) != 0) {
            status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                "%s: the workspace is not aligned for double", what);
        }
    }
    const spart_scoring_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_scoring_select(context, on_device, what, &ops);
    }
    if (status != SPART_OK) {
        return status;
    }
    return ops->run(context, &problem, allocate ? NULL : workspace, what);
}

spart_status spart_scoring_apply(spart_context *context, const void *query, const void *candidates,
                                 void *probabilities, void *logits, int64_t num_candidate,
                                 int64_t dimension, spart_similarity similarity, double scale,
                                 double temperature, spart_value_type value_type, int on_device)
{
    return run(context, "scoring_apply", query, candidates, probabilities, logits, 1, num_candidate,
               dimension, similarity, scale, temperature, value_type, on_device, 1, NULL, 0);
}

spart_status spart_scoring_apply_batch(spart_context *context, const void *query,
                                       const void *candidates, void *probabilities, void *logits,
                                       int64_t num_question, int64_t num_candidate,
                                       int64_t dimension, spart_similarity similarity, double scale,
                                       double temperature, spart_value_type value_type,
                                       int on_device)
{
    return run(context, "scoring_apply_batch", query, candidates, probabilities, logits,
               num_question, num_candidate, dimension, similarity, scale, temperature, value_type,
               on_device, 1, NULL, 0);
}

spart_status spart_scoring_apply_batch_workspace(
    spart_context *context, const void *query, const void *candidates, void *probabilities,
    void *logits, int64_t num_question, int64_t num_candidate, int64_t dimension,
    spart_similarity similarity, double scale, double temperature, spart_value_type value_type,
    int on_device, void *workspace, size_t workspace_bytes)
{
    return run(context, "scoring_apply_batch_workspace", query, candidates, probabilities, logits,
               num_question, num_candidate, dimension, similarity, scale, temperature, value_type,
               on_device, 0, workspace, workspace_bytes);
}
