/*
 * src/scoring/scoring_ops_host.c: the host's table of scoring operations
 * (src/scoring/scoring_ops.h): host/scoring.c on the context's threads,
 * its scratch from the context's allocator when the caller gave none.
 */
#include "core/internal.h"
#include "scoring/scoring_kernels.h"
#include "scoring/scoring_ops.h"

static spart_status host_run(spart_context *context, const spart_scoring_problem *problem,
                             void *workspace, const char *what)
{
    double *scratch = workspace;
    if (scratch == NULL) {
        int64_t values =
            spart_scoring_workspace_values(problem->num_question, problem->num_candidate);
        scratch = spart_alloc(&context->allocator, (size_t)values, sizeof(double));
        if (scratch == NULL) {
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                              "%s: out of memory (%lld float64 of scratch)", what,
                              (long long)values);
        }
    }
    spart_scoring_host_run(problem, scratch, spart_threads(context));
    if (workspace == NULL) {
        spart_free(&context->allocator, scratch);
    }
    return SPART_OK;
}

const spart_scoring_ops spart_scoring_host_ops = {
    .where = "host",
    .run = host_run,
};
