/*
 * src/vcs/vcs.c: the public calls of spart/vcs.h. Each checks its
 * arguments once and calls the matrix's table of operations (host or CUDA
 * device, chosen when the matrix was made): the one place that knows
 * where the arrays live is the table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vcs/vcs_internal.h"
#include "vcs/vcs_math.h"

/* What both creates check first: the context (its error then cleared),
 * the result pointer (then NULL), the sizes, the recipe and the format. */
static spart_status check_create(spart_context *context, const char *what, int64_t n_rows,
                                 int64_t n_cols, spart_vcs_recipe recipe, spart_vcs_format format,
                                 spart_vcs **vcs)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "%s: context is NULL", what);
    }
    spart_clear_error(context);
    if (vcs == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: vcs is NULL", what);
    }
    *vcs = NULL;
    if (n_rows < 0 || n_cols < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: n_rows = %lld and n_cols = %lld must be >= 0", what,
                          (long long)n_rows, (long long)n_cols);
    }
    if (n_rows > INT32_MAX || n_cols > INT32_MAX) {
        return spart_fail(context, SPART_ERROR_OVERFLOW,
                          "%s: n_rows = %lld or n_cols = %lld is above 2^31 - 1 (indices are "
                          "int32)",
                          what, (long long)n_rows, (long long)n_cols);
    }
    if ((int)recipe < (int)SPART_VCS_RAW || (int)recipe > (int)SPART_VCS_PEARSON) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "%s: recipe = %d is not a spart_vcs_recipe (0 raw, 1 cp10k_log1p, 2 "
                          "parafac2, 3 scanpy, 4 pearson)",
                          what, (int)recipe);
    }
    if (format != SPART_VCS_VCSR && format != SPART_VCS_VCSC) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "%s: format = %d is not SPART_VCS_VCSR (0) or SPART_VCS_VCSC (1)", what,
                          (int)format);
    }
    return SPART_OK;
}

spart_status spart_vcs_create_from_csr(spart_context *context, int64_t n_rows, int64_t n_cols,
                                       const int64_t *row_ptr, const int64_t *col_idx,
                                       const double *values, spart_vcs_recipe recipe,
                                       spart_vcs_format format, spart_vcs **vcs)
{
    const char *what = "spart_vcs_create_from_csr";
    spart_status status = check_create(context, what, n_rows, n_cols, recipe, format, vcs);
    if (status != SPART_OK) {
        return status;
    }
    if (row_ptr == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: row_ptr is NULL", what);
    }
    const int64_t nnz = row_ptr[n_rows];
    if (nnz > 0 && (col_idx == NULL || values == NULL)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: %s is NULL with %lld entries",
                          what, col_idx == NULL ? "col_idx" : "values", (long long)nnz);
    }
    return spart_vcs_build(context, n_rows, n_cols, nnz, NULL, row_ptr, col_idx, values, recipe,
                           format, vcs);
}

spart_status spart_vcs_create_from_coo(spart_context *context, int64_t n_rows, int64_t n_cols,
                                       int64_t nnz, const int64_t *rows, const int64_t *cols,
                                       const double *values, spart_vcs_recipe recipe,
                                       spart_vcs_format format, spart_vcs **vcs)
{
    const char *what = "spart_vcs_create_from_coo";
    spart_status status = check_create(context, what, n_rows, n_cols, recipe, format, vcs);
    if (status != SPART_OK) {
        return status;
    }
    if (nnz < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "%s: nnz = %lld must be >= 0",
                          what, (long long)nnz);
    }
    if (nnz > 0 && (rows == NULL || cols == NULL || values == NULL)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: %s is NULL with %lld entries",
                          what,
                          rows == NULL   ? "rows"
                          : cols == NULL ? "cols"
                                         : "values",
                          (long long)nnz);
    }
    return spart_vcs_build(context, n_rows, n_cols, nnz, rows, NULL, cols, values, recipe, format,
                           vcs);
}

spart_status spart_vcs_new_view(spart_context *context, spart_vcs_data *data, int transposed,
                                spart_vcs **view)
{
    spart_vcs *v = spart_alloc(&data->allocator, 1, sizeof *v);
    if (v == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS: out of memory for a view");
    }
    v->data = data;
    v->transposed = transposed;
    data->views++;
    *view = v;
    return SPART_OK;
}

void spart_vcs_free(spart_vcs *vcs)
{
    if (vcs == NULL) {
        return;
    }
    spart_vcs_data *data = vcs->data;
    const spart_allocator allocator = data->allocator;
    spart_free(&allocator, vcs);
    if (--data->views == 0) {
        data->ops->release(data);
        spart_free(&allocator, data);
    }
}

/* The grouping the view's format names: the data's format's. */
static int format_grouping(const spart_vcs_data *data)
{
    return data->format == SPART_VCS_VCSR ? SPART_VCS_BY_ROWS : SPART_VCS_BY_COLS;
}

spart_status spart_vcs_shape(const spart_vcs *vcs, int64_t *n_rows, int64_t *n_cols, int64_t *nnz,
                             int64_t *n_runs)
{
    if (vcs == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "spart_vcs_shape: vcs is NULL");
    }
    const spart_vcs_data *data = vcs->data;
    if (n_rows != NULL) {
        *n_rows = vcs->transposed ? data->n_cols : data->n_rows;
    }
    if (n_cols != NULL) {
        *n_cols = vcs->transposed ? data->n_rows : data->n_cols;
    }
    if (nnz != NULL) {
        *nnz = data->nnz;
    }
    if (n_runs != NULL) {
        *n_runs = data->n_runs[format_grouping(data)];
    }
    return SPART_OK;
}

spart_vcs_format spart_vcs_get_format(const spart_vcs *vcs)
{
    if (vcs == NULL) {
        return SPART_VCS_VCSR;
    }
    return (spart_vcs_format)((int)vcs->data->format ^ vcs->transposed);
}

int spart_vcs_is_transposed(const spart_vcs *vcs)
{
    return vcs != NULL && vcs->transposed;
}

int spart_vcs_on_device(const spart_vcs *vcs)
{
    return vcs != NULL && vcs->data->device != NULL;
}

spart_status spart_vcs_transpose(spart_context *context, const spart_vcs *vcs, spart_vcs **view)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "spart_vcs_transpose: context is NULL");
    }
    spart_clear_error(context);
    if (vcs == NULL || view == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "spart_vcs_transpose: %s is NULL",
                          vcs == NULL ? "vcs" : "view");
    }
    return spart_vcs_new_view(context, vcs->data, !vcs->transposed, view);
}

static spart_status check_host(spart_context *context, const spart_vcs *vcs, const char *what)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "%s: context is NULL", what);
    }
    spart_clear_error(context);
    if (vcs == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: vcs is NULL", what);
    }
    if (vcs->data->device != NULL) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: the matrix is on a CUDA device; this call takes a host matrix",
                          what);
    }
    return SPART_OK;
}

typedef struct csr_entry {
    int64_t minor;
    double value;
    double delta;
} csr_entry;

static int compare_csr_entry(const void *a, const void *b)
{
    const csr_entry *x = (const csr_entry *)a;
    const csr_entry *y = (const csr_entry *)b;
    return (x->minor > y->minor) - (x->minor < y->minor);
}

spart_status spart_vcs_to_csr(spart_context *context, const spart_vcs *vcs, int64_t *row_ptr,
                              int64_t *col_idx, double *values, double *delta)
{
    const char *what = "spart_vcs_to_csr";
    spart_status status = check_host(context, vcs, what);
    if (status != SPART_OK) {
        return status;
    }
    if (row_ptr == NULL || col_idx == NULL || values == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: %s is NULL", what,
                          row_ptr == NULL   ? "row_ptr"
                          : col_idx == NULL ? "col_idx"
                                            : "values");
    }
    const spart_vcs_data *data = vcs->data;
    const int by = vcs->transposed ? SPART_VCS_BY_COLS : SPART_VCS_BY_ROWS;
    const spart_vcs_layout *l = &data->groupings[by];
    const spart_vcs_stats *st = &data->stats;
    csr_entry *work = spart_alloc(&context->allocator, (size_t)l->nnz + 1, sizeof(csr_entry));
    if (work == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    for (int64_t m = 0; m <= l->n_major; m++) {
        row_ptr[m] = l->value_ptr[l->major_ptr[m]];
    }
    const int threads = spart_threads(context);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) if (l->n_major > 256)
    for (int64_t m = 0; m < l->n_major; m++) {
        csr_entry *slice = work + row_ptr[m];
        for (int64_t u = l->major_ptr[m]; u < l->major_ptr[m + 1]; u++) {
            for (int64_t e = l->value_ptr[u]; e < l->value_ptr[u + 1]; e++) {
                const int64_t k = l->indices[e];
                const int64_t i = vcs->transposed ? k : m, j = vcs->transposed ? m : k;
                csr_entry *to = &slice[e - row_ptr[m]];
                to->minor = k;
                to->value = l->values[u];
                to->delta = spart_vcs_delta(st->g_code, l->values[u], st->row_factor[i],
                                            st->col_factor[j], st->scale[j]);
            }
        }
        qsort(slice, (size_t)(row_ptr[m + 1] - row_ptr[m]), sizeof *slice, compare_csr_entry);
        for (int64_t e = row_ptr[m]; e < row_ptr[m + 1]; e++) {
            col_idx[e] = work[e].minor;
            values[e] = work[e].value;
            if (delta != NULL) {
                delta[e] = work[e].delta;
            }
        }
    }
    spart_free(&context->allocator, work);
    return SPART_OK;
}

/* new index of each old index (-1: not selected), from a selection list
 * (NULL: all); a repeated or out-of-range index is an error. */
static spart_status selection_map(spart_context *context, const char *name, int64_t n,
                                  int64_t count, const int64_t *list, int64_t *map)
{
    for (int64_t k = 0; k < n; k++) {
        map[k] = list == NULL ? k : -1;
    }
    if (list == NULL) {
        return SPART_OK;
    }
    for (int64_t k = 0; k < count; k++) {
        if (list[k] < 0 || list[k] >= n) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "spart_vcs_select: %s[%lld] = %lld is outside [0, %lld)", name,
                              (long long)k, (long long)list[k], (long long)n);
        }
        if (map[list[k]] >= 0) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "spart_vcs_select: %s[%lld] = %lld is selected twice", name,
                              (long long)k, (long long)list[k]);
        }
        map[list[k]] = k;
    }
    return SPART_OK;
}

spart_status spart_vcs_select(spart_context *context, const spart_vcs *vcs, int64_t n_select_rows,
                              const int64_t *rows, int64_t n_select_cols, const int64_t *cols,
                              spart_vcs **selected)
{
    const char *what = "spart_vcs_select";
    spart_status status = check_host(context, vcs, what);
    if (status != SPART_OK) {
        return status;
    }
    if (selected == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: selected is NULL", what);
    }
    *selected = NULL;
    const spart_vcs_data *data = vcs->data;
    /* the selection in the data's own rows (cells) and columns (genes) */
    const int64_t *data_rows = vcs->transposed ? cols : rows;
    const int64_t *data_cols = vcs->transposed ? rows : cols;
    int64_t n_data_rows = vcs->transposed ? n_select_cols : n_select_rows;
    int64_t n_data_cols = vcs->transposed ? n_select_rows : n_select_cols;
    if (data_rows == NULL) {
        n_data_rows = data->n_rows;
    }
    if (data_cols == NULL) {
        n_data_cols = data->n_cols;
    }
    if (n_data_rows < 0 || n_data_cols < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: the selection counts must be >= 0", what);
    }
    const spart_allocator *allocator = &context->allocator;
    int64_t *row_map = spart_alloc(allocator, (size_t)data->n_rows + 1, sizeof(int64_t));
    int64_t *col_map = spart_alloc(allocator, (size_t)data->n_cols + 1, sizeof(int64_t));
    int64_t *coo = spart_alloc(allocator, 2 * (size_t)data->nnz + 1, sizeof(int64_t));
    double *coo_values = spart_alloc(allocator, (size_t)data->nnz + 1, sizeof(double));
    if (row_map == NULL || col_map == NULL || coo == NULL || coo_values == NULL) {
        status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    const char *row_name = vcs->transposed ? "cols" : "rows";
    const char *col_name = vcs->transposed ? "rows" : "cols";
    if (status == SPART_OK) {
        status = selection_map(context, row_name, data->n_rows, n_data_rows, data_rows, row_map);
    }
    if (status == SPART_OK) {
        status = selection_map(context, col_name, data->n_cols, n_data_cols, data_cols, col_map);
    }
    if (status == SPART_OK) {
        const spart_vcs_layout *l = &data->groupings[SPART_VCS_BY_ROWS];
        int64_t count = 0;
        for (int64_t i = 0; i < data->n_rows; i++) {
            if (row_map[i] < 0) {
                continue;
            }
            for (int64_t u = l->major_ptr[i]; u < l->major_ptr[i + 1]; u++) {
                for (int64_t e = l->value_ptr[u]; e < l->value_ptr[u + 1]; e++) {
                    if (col_map[l->indices[e]] >= 0) {
                        coo[count] = row_map[i];
                        coo[data->nnz + count] = col_map[l->indices[e]];
                        coo_values[count] = l->values[u];
                        count++;
                    }
                }
            }
        }
        spart_vcs *made = NULL;
        status = spart_vcs_build(context, n_data_rows, n_data_cols, count, coo, NULL,
                                 coo + data->nnz, coo_values, data->recipe, data->format, &made);
        if (status == SPART_OK && vcs->transposed) {
            status = spart_vcs_new_view(context, made->data, 1, selected);
            spart_vcs_free(made);
        } else if (status == SPART_OK) {
            *selected = made;
        }
    }
    spart_free(allocator, row_map);
    spart_free(allocator, col_map);
    spart_free(allocator, coo);
    spart_free(allocator, coo_values);
    return status;
}

spart_status spart_vcs_statistics(spart_context *context, const spart_vcs *vcs, double *row_scale,
                                  double *gene_scale, double *centre, double *scale)
{
    spart_status status = check_host(context, vcs, "spart_vcs_statistics");
    if (status != SPART_OK) {
        return status;
    }
    const spart_vcs_data *data = vcs->data;
    const size_t rows = (size_t)data->n_rows * sizeof(double);
    const size_t cols = (size_t)data->n_cols * sizeof(double);
    if (row_scale != NULL && rows > 0) {
        memcpy(row_scale, data->stats.row_scale, rows);
    }
    if (gene_scale != NULL && cols > 0) {
        memcpy(gene_scale, data->stats.gene_scale, cols);
    }
    if (centre != NULL && cols > 0) {
        memcpy(centre, data->stats.centre, cols);
    }
    if (scale != NULL && cols > 0) {
        memcpy(scale, data->stats.scale, cols);
    }
    return SPART_OK;
}

static spart_status check_factors(spart_context *context, const char *name, const double *factor,
                                  int64_t n)
{
    for (int64_t k = 0; factor != NULL && k < n; k++) {
        if (!isfinite(factor[k])) {
            return spart_fail(context, SPART_ERROR_NOT_FINITE,
                              "spart_vcs_set_factors: %s[%lld] = %g is not finite", name,
                              (long long)k, factor[k]);
        }
        if (!(factor[k] > 0.0)) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "spart_vcs_set_factors: %s[%lld] = %g must be > 0", name,
                              (long long)k, factor[k]);
        }
    }
    return SPART_OK;
}

spart_status spart_vcs_set_factors(spart_context *context, spart_vcs *vcs, const double *row_factor,
                                   const double *col_factor)
{
    spart_status status = check_host(context, vcs, "spart_vcs_set_factors");
    if (status == SPART_OK) {
        status = check_factors(context, "row_factor", row_factor, vcs->data->n_rows);
    }
    if (status == SPART_OK) {
        status = check_factors(context, "col_factor", col_factor, vcs->data->n_cols);
    }
    if (status == SPART_OK) {
        status = spart_vcs_compute_stats(context, vcs->data, row_factor, col_factor);
    }
    return status;
}

/* ---- products ---- */

typedef struct product_plan {
    int by;
    int transposed_operands;
    spart_vcs_kernel_product product;
} product_plan;

static product_plan plan_product(const spart_vcs *vcs, spart_vcs_direction direction, int64_t width,
                                 int is_float, const void *b, void *out)
{
    const int64_t nr = vcs->data->n_rows, nc = vcs->data->n_cols;
    product_plan plan;
    memset(&plan, 0, sizeof plan);
    spart_vcs_kernel_product *p = &plan.product;
    p->width = width;
    p->is_float = is_float;
    p->x = b;
    p->z = out;
    if (direction == SPART_VCS_A_TIMES_B) {
        /* Z = Y B (by rows), or Y^T B for a transposed view (by columns) */
        plan.by = vcs->transposed ? SPART_VCS_BY_COLS : SPART_VCS_BY_ROWS;
        p->x_row_stride = width;
        p->x_col_stride = 1;
        p->z_row_stride = width;
        p->z_col_stride = 1;
    } else {
        /* (B A)^T = A^T B^T: Y^T B^T by columns, or Y B^T for a transposed view */
        plan.by = vcs->transposed ? SPART_VCS_BY_ROWS : SPART_VCS_BY_COLS;
        plan.transposed_operands = width > 1;
        const int64_t x_rows = plan.by == SPART_VCS_BY_ROWS ? nc : nr;
        const int64_t z_rows = plan.by == SPART_VCS_BY_ROWS ? nr : nc;
        p->x_row_stride = 1;
        p->x_col_stride = x_rows;
        p->z_row_stride = 1;
        p->z_col_stride = z_rows;
    }
    return plan;
}

static spart_status check_product(spart_context *context, const spart_vcs *vcs,
                                  spart_vcs_direction direction, int64_t width, const char *what)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "%s: context is NULL", what);
    }
    spart_clear_error(context);
    if (vcs == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: vcs is NULL", what);
    }
    if (direction != SPART_VCS_A_TIMES_B && direction != SPART_VCS_B_TIMES_A) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "%s: direction = %d is not SPART_VCS_A_TIMES_B (0) or "
                          "SPART_VCS_B_TIMES_A (1)",
                          what, (int)direction);
    }
    if (width < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "%s: width = %lld must be >= 0",
                          what, (long long)width);
    }
    return SPART_OK;
}

spart_status spart_vcs_workspace_size(spart_context *context, const spart_vcs *vcs,
                                      spart_vcs_direction direction, int64_t width, size_t *bytes)
{
    const char *what = "spart_vcs_workspace_size";
    spart_status status = check_product(context, vcs, direction, width, what);
    if (status != SPART_OK) {
        return status;
    }
    if (bytes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: bytes is NULL", what);
    }
    product_plan plan = plan_product(vcs, direction, width, 0, NULL, NULL);
    *bytes = vcs->data->ops->workspace_bytes(context, vcs->data, plan.by, width,
                                             plan.transposed_operands);
    return SPART_OK;
}

static spart_status multiply(spart_context *context, const spart_vcs *vcs,
                             spart_vcs_direction direction, int64_t width, int is_float,
                             const void *b, void *out, void *workspace, size_t workspace_bytes,
                             const char *what)
{
    spart_status status = check_product(context, vcs, direction, width, what);
    if (status != SPART_OK) {
        return status;
    }
    if (width == 0) {
        return SPART_OK;
    }
    if (b == NULL || out == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: %s is NULL", what,
                          b == NULL ? "b" : "out");
    }
    product_plan plan = plan_product(vcs, direction, width, is_float, b, out);
    if (!vcs->data->has_grouping[plan.by]) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: %s needs the grouping by %s, which this device matrix does not "
                          "hold (spart_vcs_to_device with both_groupings = 1 uploads it)",
                          what, direction == SPART_VCS_A_TIMES_B ? "A @ B" : "B @ A",
                          plan.by == SPART_VCS_BY_ROWS ? "rows" : "columns");
    }
    return vcs->data->ops->multiply(context, vcs->data, plan.by, &plan.product,
                                    plan.transposed_operands, workspace, workspace_bytes);
}

spart_status spart_vcs_multiply(spart_context *context, const spart_vcs *vcs,
                                spart_vcs_direction direction, int64_t width, const double *b,
                                double *out)
{
    return multiply(context, vcs, direction, width, 0, b, out, NULL, 0, "spart_vcs_multiply");
}

spart_status spart_vcs_multiply_float(spart_context *context, const spart_vcs *vcs,
                                      spart_vcs_direction direction, int64_t width, const float *b,
                                      float *out)
{
    return multiply(context, vcs, direction, width, 1, b, out, NULL, 0, "spart_vcs_multiply_float");
}

spart_status spart_vcs_multiply_workspace(spart_context *context, const spart_vcs *vcs,
                                          spart_vcs_direction direction, int64_t width,
                                          int is_float, const void *b, void *out, void *workspace,
                                          size_t workspace_bytes)
{
    const char *what = "spart_vcs_multiply_workspace";
    if (context != NULL && workspace == NULL && width > 0) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: workspace is NULL", what);
    }
    return multiply(context, vcs, direction, width, is_float != 0, b, out, workspace,
                    workspace_bytes, what);
}

/* ---- the device copy ---- */

spart_status spart_vcs_to_device(spart_context *context, const spart_vcs *vcs, int both_groupings,
                                 spart_vcs **device, int64_t *device_bytes)
{
    const char *what = "spart_vcs_to_device";
    spart_status status = check_host(context, vcs, what);
    if (status != SPART_OK) {
        return status;
    }
    if (device == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "%s: device is NULL", what);
    }
    *device = NULL;
#if defined(SPART_HAVE_CUDA)
    spart_vcs_data *copy = spart_alloc_zero(&context->allocator, 1, sizeof *copy);
    if (copy == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    status = spart_vcs_cuda_upload(context, vcs->data, both_groupings, copy);
    if (status == SPART_OK) {
        status = spart_vcs_new_view(context, copy, vcs->transposed, device);
        if (status != SPART_OK) {
            copy->ops->release(copy);
        }
    }
    if (status != SPART_OK) {
        spart_free(&context->allocator, copy);
        return status;
    }
    if (device_bytes != NULL) {
        *device_bytes = copy->device_bytes;
    }
    return SPART_OK;
#else
    (void)both_groupings;
    (void)device_bytes;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "%s: spart was built without CUDA: no device matrix", what);
#endif
}
