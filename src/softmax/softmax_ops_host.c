/*
 * src/softmax/softmax_ops_host.c: the host's table of softmax operations
 * (src/softmax/softmax_ops.h): the OpenMP loops of host/softmax.c. Host
 * memory needs no checks: begin and end do nothing.
 */
#include "core/internal.h"
#include "softmax/softmax_ops.h"

static spart_status host_begin(spart_context *context, const char *what, int count,
                               const void *const *pointers, const char *const *names, int *token)
{
    (void)context, (void)what, (void)count, (void)pointers, (void)names;
    *token = 0;
    return SPART_OK;
}

static spart_status host_end(spart_context *context, int error, const char *what, int token)
{
    (void)context, (void)error, (void)what, (void)token;
    return SPART_OK;
}

static spart_status host_allocate(spart_context *context, const char *what, size_t bytes,
                                  void **workspace)
{
    *workspace = spart_alloc(&context->allocator, bytes > 0 ? bytes : 1, 1);
    if (*workspace == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "%s: out of memory for a workspace of %zu bytes", what, bytes);
    }
    return SPART_OK;
}

static void host_release(spart_context *context, void *workspace)
{
    spart_free(&context->allocator, workspace);
}

static int64_t row_pointer(const spart_softmax_problem *p, int64_t r)
{
    return p->row_ptr != NULL ? p->row_ptr[r] : (int64_t)p->row_ptr32[r];
}

static int host_check_rows(spart_context *context, const spart_softmax_problem *p,
                           int64_t *first_bad)
{
    (void)context;
    const int64_t R = p->num_rows;
    int64_t bad = R + 1;
    for (int64_t r = 0; r <= R && bad > R; r++) {
        const int64_t here = row_pointer(p, r);
        const int64_t before = r > 0 ? row_pointer(p, r - 1) : 0;
        if (here < before || here > p->num_edges) {
            bad = r;
        }
    }
    *first_bad = bad;
    return 0;
}

static int host_forward(spart_context *context, const spart_softmax_problem *problem,
                        const void *scores, void *out, double *workspace)
{
    spart_softmax_host_forward(problem, scores, out, workspace, spart_threads(context));
    return 0;
}

static int host_backward(spart_context *context, const spart_softmax_problem *problem,
                         const void *out, const void *grad_out, void *grad_scores,
                         double *workspace)
{
    spart_softmax_host_backward(problem, out, grad_out, grad_scores, workspace,
                                spart_threads(context));
    return 0;
}

static int host_aggregate(spart_context *context, const spart_softmax_problem *problem,
                          const void *scores, const void *features, void *aggregated, void *out,
                          double *workspace)
{
    spart_softmax_host_aggregate(problem, scores, features, aggregated, out, workspace,
                                 spart_threads(context));
    return 0;
}

const spart_softmax_ops spart_softmax_host_ops = {
    .where = "host",
    .begin = host_begin,
    .end = host_end,
    .allocate = host_allocate,
    .release = host_release,
    .check_rows = host_check_rows,
    .forward = host_forward,
    .backward = host_backward,
    .aggregate = host_aggregate,
};
