/*
 * src/operator/csr_matrix_host.c: the host's table of a CSR matrix's
 * operations (src/operator/csr_matrix_ops.h): its arrays in host memory,
 * the elementwise passes of host/csr_vectors.c.
 */
#include <string.h>

#include "operator/csr_matrix_ops.h"
#include "operator/csr_vectors.h"

static int64_t index_at(const void *array, spart_index_type type, int64_t i)
{
    return type == SPART_INT32 ? (int64_t)((const int32_t *)array)[i] : ((const int64_t *)array)[i];
}

static spart_status host_check_arrays(spart_context *context, const spart_csr_arrays *a,
                                      spart_csr_check *found)
{
    int threads = spart_threads(context);
    memset(found, 0, sizeof *found);
    found->bad_row_ptr = spart_host_first_bad_row_ptr(a->row_ptr, a->row_ptr_type == SPART_INT32,
                                                      a->num_rows, a->num_entries, threads);
    found->bad_entry = a->num_entries;
    if (found->bad_row_ptr <= a->num_rows) {
        found->row_ptr_value = index_at(a->row_ptr, a->row_ptr_type, found->bad_row_ptr);
        if (found->bad_row_ptr > 0) {
            found->row_ptr_before = index_at(a->row_ptr, a->row_ptr_type, found->bad_row_ptr - 1);
        }
        return SPART_OK;
    }
    found->bad_entry = spart_host_first_bad_column(a->columns, a->column_type == SPART_INT32,
                                                   a->num_entries, a->num_columns, threads);
    if (found->bad_entry < a->num_entries) {
        found->column = index_at(a->columns, a->column_type, found->bad_entry);
    }
    return SPART_OK;
}

/* A copy of `bytes` bytes (at least one allocated). */
static void *copy_of(const spart_allocator *allocator, const void *from, size_t bytes)
{
    void *made = spart_alloc(allocator, bytes > 0 ? bytes : 1, 1);
    if (made != NULL && bytes > 0) {
        memcpy(made, from, bytes);
    }
    return made;
}

static spart_status host_adopt(spart_context *context, const spart_csr_arrays *a, int wrap,
                               spart_regridder *made)
{
    const spart_allocator *allocator = &context->allocator;
    int threads = spart_threads(context);
    spart_csr *csr = &made->csr;
    size_t rows = (size_t)a->num_rows + 1, entries = (size_t)a->num_entries;
    int64_t *row_ptr = NULL;
    if (a->row_ptr_type == SPART_INT32) {
        row_ptr = spart_alloc(allocator, rows, sizeof(int64_t));
        if (row_ptr != NULL) {
            spart_host_int32_to_int64(a->row_ptr, (int64_t)rows, row_ptr, threads);
        }
    } else {
        row_ptr = wrap ? (int64_t *)a->row_ptr : copy_of(allocator, a->row_ptr, rows * 8);
    }
    void *columns =
        wrap ? (void *)a->columns
             : copy_of(allocator, a->columns, entries * spart_index_bytes(a->column_type));
    void *values = wrap ? (void *)a->values
                        : copy_of(allocator, a->values, entries * spart_value_bytes(a->value_type));
    /* On failure, free what was made here, never the caller's arrays. */
    int failed = row_ptr == NULL || (!wrap && (columns == NULL || values == NULL));
    if (failed) {
        if (row_ptr != a->row_ptr) {
            spart_free(allocator, row_ptr);
        }
        if (!wrap) {
            spart_free(allocator, columns);
            spart_free(allocator, values);
        }
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "csr_matrix_create: could not allocate the arrays of %lld rows and %lld "
                          "entries",
                          (long long)a->num_rows, (long long)a->num_entries);
    }
    csr->row_ptr = row_ptr;
    if (a->column_type == SPART_INT32) {
        csr->columns32 = columns;
    } else {
        csr->columns64 = columns;
    }
    if (a->value_type == SPART_FLOAT32) {
        csr->values32 = values;
    } else {
        csr->values64 = values;
    }
    /* Each row its own group size (rows index an int32 list of bins on a
     * device, so a matrix of 2^31 rows or more keeps the mean's rule). */
    made->plan = spart_plan_product_by_rule(csr, a->num_rows < INT32_MAX ? SPART_PLAN_BY_ROW
                                                                         : SPART_PLAN_MEAN);
    made->ops->index_rows(made, threads);
    return SPART_OK;
}

static spart_status host_check_vectors(spart_context *context, const spart_regridder *regridder,
                                       const void *x, const void *y)
{
    (void)context, (void)regridder, (void)x, (void)y;
    return SPART_OK;
}

static spart_status host_float_to_double(spart_context *context, const spart_regridder *regridder,
                                         const float *from, int64_t count, double *to)
{
    (void)regridder;
    spart_host_float_to_double(from, count, to, spart_threads(context));
    return SPART_OK;
}

static spart_status host_combine(spart_context *context, const spart_regridder *regridder,
                                 const double *sums, int64_t count, double alpha, double beta,
                                 void *y, int y_is_float)
{
    (void)regridder;
    spart_host_combine(sums, count, alpha, beta, y, y_is_float, spart_threads(context));
    return SPART_OK;
}

const spart_csr_matrix_ops spart_csr_matrix_host_ops = {
    .check_arrays = host_check_arrays,
    .adopt = host_adopt,
    .check_vectors = host_check_vectors,
    .float_to_double = host_float_to_double,
    .combine = host_combine,
};
