/*
 * src/softmax/softmax.c: the calls of spart/softmax.h: the checks of their
 * arguments, then the operation of the table of the segments' location
 * (src/softmax/softmax_ops.h), chosen here once a call and nowhere else.
 */
#include <stdint.h>

#include "core/internal.h"
#include "softmax/softmax_kernels.h"
#include "softmax/softmax_ops.h"
#include "spart/softmax.h"

_Static_assert(SPART_SOFTMAX_CHUNK == SPART_SOFTMAX_CHUNK_EDGES,
               "spart/softmax.h and src/softmax/softmax_kernels.h differ on the chunk");

spart_status spart_softmax_select(spart_context *context, int on_device, const char *what,
                                  const spart_softmax_ops **ops)
{
    if (!on_device) {
        *ops = &spart_softmax_host_ops;
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    (void)context, (void)what;
    *ops = &spart_softmax_cuda_ops;
    return SPART_OK;
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: %s cannot run on a device (rebuild with "
                      "-DSPART_ENABLE_CUDA=ON)",
                      what);
#endif
}

/* a * b into *product; 0 when it does not fit int64 (a, b >= 0). */
static int multiply_fits(int64_t a, int64_t b, int64_t *product)
{
    if (a != 0 && b > INT64_MAX / a) {
        return 0;
    }
    *product = a * b;
    return 1;
}

size_t spart_softmax_workspace_size(const spart_softmax_segments *segments, int64_t width)
{
    if (segments == NULL || segments->num_edges < 0 || segments->num_heads < 1 || width < 0) {
        return 0;
    }
    int64_t per_slot = 0, doubles = 0;
    const int64_t windows = spart_softmax_num_windows(segments->num_edges);
    const int64_t slots = 2 * (windows > 0 ? windows : 1);
    /* a slot's doubles for each head, then its row note (one int64) */
    if (!multiply_fits(segments->num_heads, SPART_SOFTMAX_SLOT_STATS + width, &per_slot) ||
        per_slot > INT64_MAX - 1 || !multiply_fits(slots, per_slot + 1, &doubles) ||
        doubles > INT64_MAX / 8) {
        return 0;
    }
    return (size_t)doubles * sizeof(double);
}

/* The checks every call shares: the segments, their sizes and row
 * pointers' pointer, into *problem. */
static spart_status check_segments(spart_context *context, const char *what,
                                   const spart_softmax_segments *segments,
                                   spart_softmax_problem *problem)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "%s: context is NULL", what);
    }
    spart_clear_error(context);
    if (segments == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: segments is NULL", what);
    }
    const spart_softmax_segments *s = segments;
    if (s->num_rows < 0 || s->num_edges < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: num_rows = %lld and num_edges = %lld must not be negative", what,
                          (long long)s->num_rows, (long long)s->num_edges);
    }
    if (s->num_heads < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: num_heads = %lld must be at least 1", what, (long long)s->num_heads);
    }
    if (s->row_ptr == NULL && s->row_ptr32 == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "%s: row_ptr and row_ptr32 are both NULL (set one)", what);
    }
    if (s->row_ptr != NULL && s->row_ptr32 != NULL) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: row_ptr and row_ptr32 are both set (set one)", what);
    }
    if (s->value_type != SPART_FLOAT64 && s->value_type != SPART_FLOAT32) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM, "%s: value_type %d is unknown", what,
                          (int)s->value_type);
    }
    int64_t values = 0;
    if (!multiply_fits(s->num_edges, s->num_heads, &values) || values > INT64_MAX / 8) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "%s: num_edges x num_heads = %lld x %lld does not fit int64", what,
                          (long long)s->num_edges, (long long)s->num_heads);
    }
    spart_softmax_problem p = {0};
    p.num_rows = s->num_rows;
    p.num_edges = s->num_edges;
    p.num_heads = s->num_heads;
    p.row_ptr = s->row_ptr;
    p.row_ptr32 = s->row_ptr32;
    p.is_float32 = s->value_type == SPART_FLOAT32;
    *problem = p;
    return SPART_OK;
}

/* An array that must hold `count` values and is NULL. */
static spart_status check_array(spart_context *context, const char *what, const void *array,
                                const char *name, int64_t count)
{
    if (array == NULL && count > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "%s: %s is NULL but must hold %lld values", what, name, (long long)count);
    }
    return SPART_OK;
}

static spart_status check_rows_with(spart_context *context, const char *what,
                                    const spart_softmax_ops *ops, const spart_softmax_problem *p)
{
    int64_t bad = p->num_rows + 1;
    int error = ops->check_rows(context, p, &bad);
    if (error != 0) {
        return SPART_ERROR_INTERNAL; /* the table's end names it */
    }
    if (bad <= p->num_rows) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: row pointer %lld is negative, smaller than the one before it or "
                          "past num_edges = %lld",
                          what, (long long)bad, (long long)p->num_edges);
    }
    return SPART_OK;
}

spart_status spart_softmax_check_rows(spart_context *context,
                                      const spart_softmax_segments *segments)
{
    const char *what = "softmax_check_rows";
    spart_softmax_problem p;
    spart_status status = check_segments(context, what, segments, &p);
    const spart_softmax_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        status = spart_softmax_select(context, segments->on_device, what, &ops);
    }
    if (status == SPART_OK) {
        const void *pointers[] = {p.row_ptr != NULL ? (const void *)p.row_ptr
                                                    : (const void *)p.row_ptr32};
        const char *names[] = {"row_ptr"};
        status = ops->begin(context, what, 1, pointers, names, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int64_t bad = p.num_rows + 1;
    int error = ops->check_rows(context, &p, &bad);
    status = ops->end(context, error, what, token);
    if (status == SPART_OK && bad <= p.num_rows) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "%s: row pointer %lld is negative, smaller than the one before it or "
                            "past num_edges = %lld",
                            what, (long long)bad, (long long)p.num_edges);
    }
    return status;
}

/* The checks of the workspace, the table, the host's row pointers, and
 * the start of the call on its location (device pointers checked). */
static spart_status prepare(spart_context *context, const char *what,
                            const spart_softmax_segments *segments, const spart_softmax_problem *p,
                            int64_t width, void *workspace, size_t workspace_bytes, int count,
                            const void *const *pointers, const char *const *names,
                            const spart_softmax_ops **ops, int *token)
{
    const size_t needed = spart_softmax_workspace_size(segments, width);
    if (needed == 0) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "%s: the workspace's size does not fit int64", what);
    }
    if (workspace == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: workspace is NULL", what);
    }
    if (workspace_bytes < needed) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: workspace of %zu bytes, %zu needed (spart_softmax_workspace_size)",
                          what, workspace_bytes, needed);
    }
    spart_status status = spart_softmax_select(context, segments->on_device, what, ops);
    if (status == SPART_OK && !segments->on_device) {
        status = check_rows_with(context, what, *ops, p);
    }
    if (status == SPART_OK) {
        status = (*ops)->begin(context, what, count, pointers, names, token);
    }
    return status;
}

static const void *row_pointers(const spart_softmax_problem *p)
{
    return p->row_ptr != NULL ? (const void *)p->row_ptr : (const void *)p->row_ptr32;
}

spart_status spart_softmax_forward_workspace(spart_context *context,
                                             const spart_softmax_segments *segments,
                                             const void *scores, void *out, void *workspace,
                                             size_t workspace_bytes)
{
    const char *what = "softmax_forward";
    spart_softmax_problem p;
    spart_status status = check_segments(context, what, segments, &p);
    const int64_t values = status == SPART_OK ? p.num_edges * p.num_heads : 0;
    if (status == SPART_OK) {
        status = check_array(context, what, scores, "scores", values);
    }
    if (status == SPART_OK) {
        status = check_array(context, what, out, "out", values);
    }
    const spart_softmax_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {row_pointers(&p), scores, out, workspace};
        const char *names[] = {"row_ptr", "scores", "out", "workspace"};
        status = prepare(context, what, segments, &p, 0, workspace, workspace_bytes, 4, pointers,
                         names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    return ops->end(context, ops->forward(context, &p, scores, out, workspace), what, token);
}

spart_status spart_softmax_backward_workspace(spart_context *context,
                                              const spart_softmax_segments *segments,
                                              const void *out, const void *grad_out,
                                              void *grad_scores, void *workspace,
                                              size_t workspace_bytes)
{
    const char *what = "softmax_backward";
    spart_softmax_problem p;
    spart_status status = check_segments(context, what, segments, &p);
    const int64_t values = status == SPART_OK ? p.num_edges * p.num_heads : 0;
    if (status == SPART_OK) {
        status = check_array(context, what, out, "out", values);
    }
    if (status == SPART_OK) {
        status = check_array(context, what, grad_out, "grad_out", values);
    }
    if (status == SPART_OK) {
        status = check_array(context, what, grad_scores, "grad_scores", values);
    }
    if (status == SPART_OK && values > 0 && grad_scores == out) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "%s: grad_scores may not be out (it may be grad_out)", what);
    }
    const spart_softmax_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *pointers[] = {row_pointers(&p), out, grad_out, grad_scores, workspace};
        const char *names[] = {"row_ptr", "out", "grad_out", "grad_scores", "workspace"};
        status = prepare(context, what, segments, &p, 0, workspace, workspace_bytes, 5, pointers,
                         names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->backward(context, &p, out, grad_out, grad_scores, workspace);
    return ops->end(context, error, what, token);
}

/* The checks of the aggregation's gather, into *p; on the host the
 * columns too. */
static spart_status check_gather(spart_context *context, const char *what,
                                 const spart_softmax_gather *gather, const void *features,
                                 const void *aggregated, int on_device, spart_softmax_problem *p)
{
    if (gather == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: gather is NULL", what);
    }
    if (gather->num_nodes < 0 || gather->width < 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: num_nodes = %lld must not be negative and width = %lld must be at "
                          "least 1",
                          what, (long long)gather->num_nodes, (long long)gather->width);
    }
    if ((gather->columns == NULL) == (gather->columns32 == NULL) && p->num_edges > 0) {
        return spart_fail(context,
                          gather->columns == NULL ? SPART_ERROR_NULL_POINTER
                                                  : SPART_ERROR_INVALID_ARGUMENT,
                          "%s: exactly one of columns and columns32 must be set", what);
    }
    int64_t per_node = 0, feature_values = 0, aggregated_values = 0;
    if (!multiply_fits(p->num_heads, gather->width, &per_node) ||
        !multiply_fits(gather->num_nodes, per_node, &feature_values) ||
        !multiply_fits(p->num_rows, per_node, &aggregated_values) ||
        feature_values > INT64_MAX / 8 || aggregated_values > INT64_MAX / 8) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "%s: num_heads x width x (num_nodes or num_rows) does not fit int64",
                          what);
    }
    spart_status status =
        check_array(context, what, features, "features", p->num_edges > 0 ? feature_values : 0);
    if (status == SPART_OK) {
        status = check_array(context, what, aggregated, "aggregated", aggregated_values);
    }
    if (status != SPART_OK) {
        return status;
    }
    p->num_nodes = gather->num_nodes;
    p->width = gather->width;
    p->columns = gather->columns;
    p->columns32 = gather->columns32;
    for (int64_t e = 0; !on_device && e < p->num_edges; e++) {
        const int64_t column = p->columns != NULL ? p->columns[e] : (int64_t)p->columns32[e];
        if (column < 0 || column >= p->num_nodes) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "%s: column %lld of edge %lld is outside 0 .. num_nodes - 1 = %lld",
                              what, (long long)column, (long long)e, (long long)(p->num_nodes - 1));
        }
    }
    return SPART_OK;
}

spart_status spart_softmax_aggregate_workspace(spart_context *context,
                                               const spart_softmax_segments *segments,
                                               const spart_softmax_gather *gather,
                                               const void *scores, const void *features,
                                               void *aggregated, void *out, void *workspace,
                                               size_t workspace_bytes)
{
    const char *what = "softmax_aggregate";
    spart_softmax_problem p;
    spart_status status = check_segments(context, what, segments, &p);
    if (status == SPART_OK) {
        status = check_array(context, what, scores, "scores", p.num_edges * p.num_heads);
    }
    if (status == SPART_OK) {
        status = check_gather(context, what, gather, features, aggregated, segments->on_device, &p);
    }
    const spart_softmax_ops *ops = NULL;
    int token = 0;
    if (status == SPART_OK) {
        const void *columns =
            p.columns != NULL ? (const void *)p.columns : (const void *)p.columns32;
        const void *pointers[] = {row_pointers(&p), columns, scores,   features,
                                  aggregated,       out,     workspace};
        const char *names[] = {"row_ptr",    "columns", "scores",   "features",
                               "aggregated", "out",     "workspace"};
        status = prepare(context, what, segments, &p, p.width, workspace, workspace_bytes, 7,
                         pointers, names, &ops, &token);
    }
    if (status != SPART_OK) {
        return status;
    }
    int error = ops->aggregate(context, &p, scores, features, aggregated, out, workspace);
    return ops->end(context, error, what, token);
}

/* ---- the plain forms: the workspace allocated where the arrays are ---- */

/* Workspace for a plain form into *workspace (NULL when the segments are
 * not valid: the _workspace form then says why). */
static spart_status plain_workspace(spart_context *context, const char *what,
                                    const spart_softmax_segments *segments, int64_t width,
                                    const spart_softmax_ops **ops, void **workspace, size_t *bytes)
{
    *workspace = NULL;
    *bytes = 0;
    *ops = NULL;
    spart_softmax_problem p;
    if (context == NULL || check_segments(context, what, segments, &p) != SPART_OK || width < 0) {
        return SPART_OK;
    }
    *bytes = spart_softmax_workspace_size(segments, width);
    if (*bytes == 0) {
        return SPART_OK;
    }
    spart_status status = spart_softmax_select(context, segments->on_device, what, ops);
    if (status == SPART_OK) {
        status = (*ops)->allocate(context, what, *bytes, workspace);
    }
    return status;
}

spart_status spart_softmax_forward(spart_context *context, const spart_softmax_segments *segments,
                                   const void *scores, void *out)
{
    const spart_softmax_ops *ops = NULL;
    void *workspace = NULL;
    size_t bytes = 0;
    spart_status status =
        plain_workspace(context, "softmax_forward", segments, 0, &ops, &workspace, &bytes);
    if (status == SPART_OK) {
        status = spart_softmax_forward_workspace(context, segments, scores, out, workspace, bytes);
    }
    if (ops != NULL) {
        ops->release(context, workspace);
    }
    return status;
}

spart_status spart_softmax_backward(spart_context *context, const spart_softmax_segments *segments,
                                    const void *out, const void *grad_out, void *grad_scores)
{
    const spart_softmax_ops *ops = NULL;
    void *workspace = NULL;
    size_t bytes = 0;
    spart_status status =
        plain_workspace(context, "softmax_backward", segments, 0, &ops, &workspace, &bytes);
    if (status == SPART_OK) {
        status = spart_softmax_backward_workspace(context, segments, out, grad_out, grad_scores,
                                                  workspace, bytes);
    }
    if (ops != NULL) {
        ops->release(context, workspace);
    }
    return status;
}

spart_status spart_softmax_aggregate(spart_context *context, const spart_softmax_segments *segments,
                                     const spart_softmax_gather *gather, const void *scores,
                                     const void *features, void *aggregated, void *out)
{
    const spart_softmax_ops *ops = NULL;
    void *workspace = NULL;
    size_t bytes = 0;
    const int64_t width = gather != NULL ? gather->width : 0;
    spart_status status =
        plain_workspace(context, "softmax_aggregate", segments, width, &ops, &workspace, &bytes);
    if (status == SPART_OK) {
        status = spart_softmax_aggregate_workspace(context, segments, gather, scores, features,
                                                   aggregated, out, workspace, bytes);
    }
    if (ops != NULL) {
        ops->release(context, workspace);
    }
    return status;
}
