/*
 * src/vcs/vcs_build.c: a VCS matrix from CSR or COO entries. The layout is
 * canonical: entries are placed by row in a stable counting sort, each row
 * sorted by column (a repeated column is an error), and each grouping is
 * one stable sort keyed by (major, value, minor): by rows, each row's
 * entries sorted by (value, column); by columns, a stable counting sort of
 * the rows' entries by column (rows ascending) and each column sorted by
 * (value, row). The slices are sorted in parallel; the result does not
 * depend on the thread count or on the input's order. Both groupings are
 * kept: the second is the regroup the misaligned products walk.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "vcs/vcs_internal.h"

typedef struct vcs_entry {
    double value;
    int64_t minor;
} vcs_entry;

static int compare_minor(const void *a, const void *b)
{
    const vcs_entry *x = (const vcs_entry *)a;
    const vcs_entry *y = (const vcs_entry *)b;
    return (x->minor > y->minor) - (x->minor < y->minor);
}

static int compare_value_minor(const void *a, const void *b)
{
    const vcs_entry *x = (const vcs_entry *)a;
    const vcs_entry *y = (const vcs_entry *)b;
    if (x->value != y->value) {
        return x->value < y->value ? -1 : 1;
    }
    return (x->minor > y->minor) - (x->minor < y->minor);
}

int spart_vcs_group_size(int64_t nnz, int64_t n_major)
{
    if (n_major <= 0) {
        return 1;
    }
    const int64_t mean = (nnz + n_major - 1) / n_major;
    const int64_t want = (mean + 31) / 32; /* about 32 entries a lane: the lane tree and the
                                            * output row are paid once a slice */
    int g = 1;
    while (g < 32 && g < want) {
        g *= 2;
    }
    return g;
}

void spart_vcs_layout_free(const spart_allocator *allocator, spart_vcs_layout *layout)
{
    spart_free(allocator, layout->major_ptr);
    spart_free(allocator, layout->values);
    spart_free(allocator, layout->value_ptr);
    spart_free(allocator, layout->indices);
    memset(layout, 0, sizeof *layout);
}

/* Runs of one grouping from entries sorted by (value, minor) within each
 * slice (slice m: entries slice_ptr[m] .. slice_ptr[m + 1] - 1). */
static spart_status layout_from_slices(spart_context *context, int64_t n_major, int64_t n_minor,
                                       const int64_t *slice_ptr, const vcs_entry *entries,
                                       int threads, spart_vcs_layout *layout)
{
    const spart_allocator *allocator = &context->allocator;
    memset(layout, 0, sizeof *layout);
    layout->n_major = n_major;
    layout->n_minor = n_minor;
    layout->nnz = slice_ptr[n_major];
    layout->major_ptr = spart_alloc(allocator, (size_t)n_major + 1, sizeof(int64_t));
    layout->indices = spart_alloc(allocator, (size_t)layout->nnz + 1, sizeof(int32_t));
    if (layout->major_ptr == NULL || layout->indices == NULL) {
        spart_vcs_layout_free(allocator, layout);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS layout: out of memory");
    }
    int64_t *runs = layout->major_ptr + 1; /* runs of slice m, scanned in place below */
#pragma omp parallel for num_threads(threads) schedule(static) if (n_major > 256)
    for (int64_t m = 0; m < n_major; m++) {
        int64_t count = 0;
        for (int64_t e = slice_ptr[m]; e < slice_ptr[m + 1]; e++) {
            count += (e == slice_ptr[m] || entries[e].value != entries[e - 1].value);
        }
        runs[m] = count;
    }
    layout->major_ptr[0] = 0;
    for (int64_t m = 0; m < n_major; m++) {
        layout->major_ptr[m + 1] += layout->major_ptr[m];
    }
    layout->n_runs = layout->major_ptr[n_major];
    layout->values = spart_alloc(allocator, (size_t)layout->n_runs + 1, sizeof(double));
    layout->value_ptr = spart_alloc(allocator, (size_t)layout->n_runs + 1, sizeof(int64_t));
    if (layout->values == NULL || layout->value_ptr == NULL) {
        spart_vcs_layout_free(allocator, layout);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS layout: out of memory");
    }
#pragma omp parallel for num_threads(threads) schedule(static) if (n_major > 256)
    for (int64_t m = 0; m < n_major; m++) {
        int64_t u = layout->major_ptr[m] - 1;
        for (int64_t e = slice_ptr[m]; e < slice_ptr[m + 1]; e++) {
            if (e == slice_ptr[m] || entries[e].value != entries[e - 1].value) {
                u++;
                layout->values[u] = entries[e].value;
                layout->value_ptr[u] = e;
            }
            layout->indices[e] = (int32_t)entries[e].minor;
        }
    }
    layout->value_ptr[layout->n_runs] = layout->nnz;
    layout->group_size = spart_vcs_group_size(layout->nnz, n_major);
    return SPART_OK;
}

/* The checks of the entries, in input order so the first bad one is named. */
static spart_status check_entries(spart_context *context, int64_t n_rows, int64_t n_cols,
                                  int64_t nnz, const int64_t *rows, const int64_t *row_ptr,
                                  const int64_t *cols, const double *values,
                                  spart_vcs_recipe recipe)
{
    if (row_ptr != NULL) {
        if (row_ptr[0] != 0) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "VCS from CSR: row_ptr[0] = %lld, not 0", (long long)row_ptr[0]);
        }
        for (int64_t i = 0; i < n_rows; i++) {
            if (row_ptr[i + 1] < row_ptr[i]) {
                return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                  "VCS from CSR: row_ptr[%lld] = %lld is below row_ptr[%lld] = "
                                  "%lld",
                                  (long long)(i + 1), (long long)row_ptr[i + 1], (long long)i,
                                  (long long)row_ptr[i]);
            }
        }
    }
    const char *what = row_ptr != NULL ? "VCS from CSR" : "VCS from COO";
    for (int64_t k = 0; k < nnz; k++) {
        if (rows != NULL && (rows[k] < 0 || rows[k] >= n_rows)) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "%s: rows[%lld] = %lld is outside [0, %lld)", what, (long long)k,
                              (long long)rows[k], (long long)n_rows);
        }
        if (cols[k] < 0 || cols[k] >= n_cols) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "%s: column index [%lld] = %lld is outside [0, %lld)", what,
                              (long long)k, (long long)cols[k], (long long)n_cols);
        }
        if (!isfinite(values[k])) {
            return spart_fail(context, SPART_ERROR_NOT_FINITE,
                              "%s: values[%lld] = %g is not finite", what, (long long)k, values[k]);
        }
        if (values[k] < 0.0 && recipe != SPART_VCS_RAW) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "%s: values[%lld] = %g is a negative count; recipe %d needs counts "
                              ">= 0 (only SPART_VCS_RAW takes any value)",
                              what, (long long)k, values[k], (int)recipe);
        }
    }
    return SPART_OK;
}

typedef struct build_work {
    int64_t *row_start; /* n_rows + 1 */
    int64_t *col_start; /* n_cols + 1 */
    vcs_entry *by_row;  /* kept entries by row */
    vcs_entry *by_col;  /* by column */
} build_work;

static void build_work_free(const spart_allocator *allocator, build_work *w)
{
    spart_free(allocator, w->row_start);
    spart_free(allocator, w->col_start);
    spart_free(allocator, w->by_row);
    spart_free(allocator, w->by_col);
}

/* The kept (nonzero) entries placed by row, stable, and each row sorted
 * by column; a repeated (row, column) is an error. */
static spart_status place_by_row(spart_context *context, int64_t n_rows, int64_t nnz,
                                 const int64_t *rows, const int64_t *row_ptr, const int64_t *cols,
                                 const double *values, int threads, build_work *w)
{
    const spart_allocator *allocator = &context->allocator;
    int64_t *start = w->row_start;
    memset(start, 0, ((size_t)n_rows + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nnz; k++) {
        if (values[k] != 0.0) {
            int64_t row = rows != NULL ? rows[k] : -1;
            if (row < 0) { /* CSR: found below by the row's range */
                continue;
            }
            start[row + 1]++;
        }
    }
    if (row_ptr != NULL) {
#pragma omp parallel for num_threads(threads) schedule(static) if (n_rows > 256)
        for (int64_t i = 0; i < n_rows; i++) {
            int64_t count = 0;
            for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
                count += values[k] != 0.0;
            }
            start[i + 1] = count;
        }
    }
    for (int64_t i = 0; i < n_rows; i++) {
        start[i + 1] += start[i];
    }
    const int64_t kept = start[n_rows];
    w->by_row = spart_alloc(allocator, (size_t)kept + 1, sizeof(vcs_entry));
    if (w->by_row == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS: out of memory for %lld entries",
                          (long long)kept);
    }
    if (row_ptr != NULL) {
#pragma omp parallel for num_threads(threads) schedule(static) if (n_rows > 256)
        for (int64_t i = 0; i < n_rows; i++) {
            int64_t at = start[i];
            for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
                if (values[k] != 0.0) {
                    w->by_row[at].value = values[k];
                    w->by_row[at].minor = cols[k];
                    at++;
                }
            }
        }
    } else {
        int64_t *cursor = spart_alloc(allocator, (size_t)n_rows + 1, sizeof(int64_t));
        if (cursor == NULL) {
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS: out of memory");
        }
        memcpy(cursor, start, ((size_t)n_rows + 1) * sizeof(int64_t));
        for (int64_t k = 0; k < nnz; k++) {
            if (values[k] != 0.0) {
                vcs_entry *e = &w->by_row[cursor[rows[k]]++];
                e->value = values[k];
                e->minor = cols[k];
            }
        }
        spart_free(allocator, cursor);
    }
    int64_t duplicate_row = n_rows;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)                                \
    reduction(min                                                                                  \
              : duplicate_row) if (n_rows > 256)
    for (int64_t i = 0; i < n_rows; i++) {
        vcs_entry *row = w->by_row + start[i];
        const int64_t length = start[i + 1] - start[i];
        int sorted = 1;
        for (int64_t e = 1; e < length && sorted; e++) {
            sorted = row[e - 1].minor <= row[e].minor;
        }
        if (!sorted) {
            qsort(row, (size_t)length, sizeof *row, compare_minor);
        }
        for (int64_t e = 1; e < length; e++) {
            if (row[e].minor == row[e - 1].minor && i < duplicate_row) {
                duplicate_row = i;
            }
        }
    }
    if (duplicate_row < n_rows) {
        const vcs_entry *row = w->by_row + start[duplicate_row];
        int64_t col = -1;
        for (int64_t e = 1; e < start[duplicate_row + 1] - start[duplicate_row]; e++) {
            if (row[e].minor == row[e - 1].minor) {
                col = row[e].minor;
                break;
            }
        }
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "VCS: entry (%lld, %lld) is given twice (sum duplicates first)",
                          (long long)duplicate_row, (long long)col);
    }
    return SPART_OK;
}

/* The entries by column: a stable counting sort of the rows' entries
 * (rows ascending within a column), minor = row. */
static spart_status place_by_col(spart_context *context, int64_t n_rows, int64_t n_cols,
                                 build_work *w)
{
    const spart_allocator *allocator = &context->allocator;
    const int64_t kept = w->row_start[n_rows];
    int64_t *start = w->col_start;
    memset(start, 0, ((size_t)n_cols + 1) * sizeof(int64_t));
    for (int64_t e = 0; e < kept; e++) {
        start[w->by_row[e].minor + 1]++;
    }
    for (int64_t j = 0; j < n_cols; j++) {
        start[j + 1] += start[j];
    }
    w->by_col = spart_alloc(allocator, (size_t)kept + 1, sizeof(vcs_entry));
    int64_t *cursor = spart_alloc(allocator, (size_t)n_cols + 1, sizeof(int64_t));
    if (w->by_col == NULL || cursor == NULL) {
        spart_free(allocator, cursor);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS: out of memory for the regroup");
    }
    memcpy(cursor, start, ((size_t)n_cols + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n_rows; i++) {
        for (int64_t e = w->row_start[i]; e < w->row_start[i + 1]; e++) {
            vcs_entry *to = &w->by_col[cursor[w->by_row[e].minor]++];
            to->value = w->by_row[e].value;
            to->minor = i;
        }
    }
    spart_free(allocator, cursor);
    return SPART_OK;
}

/* Entries of one slice, in minor order, into (value, minor) order: a
 * stable distribution by value (count data has few distinct values a
 * slice), or qsort past SORT_DISTINCT values. `scratch` holds n entries. */
enum { SORT_DISTINCT = 32 };

static int distinct_index(const double *distinct, int d, double value)
{
    int low = 0, high = d; /* first index with distinct[index] >= value */
    while (low < high) {
        const int middle = (low + high) / 2;
        if (distinct[middle] < value) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

static void sort_slice(vcs_entry *entries, int64_t n, vcs_entry *scratch)
{
    double distinct[SORT_DISTINCT];
    int d = 0;
    for (int64_t k = 0; k < n; k++) {
        const int at = distinct_index(distinct, d, entries[k].value);
        if (at < d && distinct[at] == entries[k].value) {
            continue;
        }
        if (d == SORT_DISTINCT) {
            qsort(entries, (size_t)n, sizeof *entries, compare_value_minor);
            return;
        }
        memmove(distinct + at + 1, distinct + at, (size_t)(d - at) * sizeof(double));
        distinct[at] = entries[k].value;
        d++;
    }
    int64_t start[SORT_DISTINCT + 1] = {0};
    for (int64_t k = 0; k < n; k++) {
        start[distinct_index(distinct, d, entries[k].value) + 1]++;
    }
    for (int v = 0; v < d; v++) {
        start[v + 1] += start[v];
    }
    for (int64_t k = 0; k < n; k++) {
        scratch[start[distinct_index(distinct, d, entries[k].value)]++] = entries[k];
    }
    memcpy(entries, scratch, (size_t)n * sizeof *entries);
}

/* Every slice into (value, minor) order, each slice's entries being in
 * minor order. */
static spart_status sort_slices(spart_context *context, vcs_entry *entries, const int64_t *start,
                                int64_t n_major, int threads)
{
    int64_t longest = 0;
    for (int64_t m = 0; m < n_major; m++) {
        longest = start[m + 1] - start[m] > longest ? start[m + 1] - start[m] : longest;
    }
    vcs_entry *scratch =
        spart_alloc(&context->allocator, (size_t)threads * (size_t)longest + 1, sizeof(vcs_entry));
    if (scratch == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS: out of memory for sorting");
    }
#pragma omp parallel num_threads(threads) if (n_major > 256)
    {
        vcs_entry *mine = scratch + (size_t)omp_get_thread_num() * (size_t)longest;
#pragma omp for schedule(dynamic, 64)
        for (int64_t m = 0; m < n_major; m++) {
            sort_slice(entries + start[m], start[m + 1] - start[m], mine);
        }
    }
    spart_free(&context->allocator, scratch);
    return SPART_OK;
}

spart_status spart_vcs_build(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                             const int64_t *rows, const int64_t *row_ptr, const int64_t *cols,
                             const double *values, spart_vcs_recipe recipe, spart_vcs_format format,
                             spart_vcs **vcs)
{
    const spart_allocator *allocator = &context->allocator;
    spart_status status =
        check_entries(context, n_rows, n_cols, nnz, rows, row_ptr, cols, values, recipe);
    if (status != SPART_OK) {
        return status;
    }
    const int threads = spart_threads(context);
    build_work w = {0};
    w.row_start = spart_alloc(allocator, (size_t)n_rows + 1, sizeof(int64_t));
    w.col_start = spart_alloc(allocator, (size_t)n_cols + 1, sizeof(int64_t));
    spart_vcs_data *data = spart_alloc_zero(allocator, 1, sizeof *data);
    if (w.row_start == NULL || w.col_start == NULL || data == NULL) {
        build_work_free(allocator, &w);
        spart_free(allocator, data);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "VCS: out of memory");
    }
    data->allocator = *allocator;
    data->ops = &spart_vcs_host_ops;
    data->n_rows = n_rows;
    data->n_cols = n_cols;
    data->recipe = recipe;
    data->format = format;
    status = place_by_row(context, n_rows, nnz, rows, row_ptr, cols, values, threads, &w);
    if (status == SPART_OK) {
        status = place_by_col(context, n_rows, n_cols, &w);
    }
    if (status == SPART_OK) {
        data->nnz = w.row_start[n_rows];
        status = sort_slices(context, w.by_row, w.row_start, n_rows, threads);
    }
    if (status == SPART_OK) {
        status = sort_slices(context, w.by_col, w.col_start, n_cols, threads);
    }
    if (status == SPART_OK) {
        status = layout_from_slices(context, n_rows, n_cols, w.row_start, w.by_row, threads,
                                    &data->groupings[SPART_VCS_BY_ROWS]);
    }
    if (status == SPART_OK) {
        status = layout_from_slices(context, n_cols, n_rows, w.col_start, w.by_col, threads,
                                    &data->groupings[SPART_VCS_BY_COLS]);
    }
    build_work_free(allocator, &w);
    if (status == SPART_OK) {
        for (int by = 0; by < 2; by++) {
            data->has_grouping[by] = 1;
            data->n_runs[by] = data->groupings[by].n_runs;
            data->group_size[by] = data->groupings[by].group_size;
        }
        status = spart_vcs_compute_stats(context, data, NULL, NULL);
    }
    if (status == SPART_OK) {
        data->views = 0;
        status = spart_vcs_new_view(context, data, 0, vcs);
    }
    if (status != SPART_OK) {
        spart_vcs_host_ops.release(data);
        spart_free(allocator, data);
    }
    return status;
}
