/*
 * src/distributed/local_rows.c: a rank's rows of a regridder as a
 * regridder of their own, with the whole matrix's plan.
 *
 * Why this reaches into the regridder (operator/regridder_internal.h): a
 * regridder made from weights sums every row with one group size g, taken
 * from the WHOLE matrix's mean row length (spart/regridder.h). A matrix
 * made of some of its rows (spart_csr_matrix_create, or new weights) would
 * plan its own g and sum in another order, so the split would change the
 * bits. Here the rows keep the plan of `whole` (its rule, g and chunk
 * length) and the host product's kernels sum each row exactly as they sum
 * it in `whole`. spart_distributed_operator_create_from_rows, whose ranks
 * never hold the whole matrix, makes the same plan from its sizes (the
 * mean rule needs only the total rows and entries). The columns are
 * renumbered to the columns the rows use,
 * which changes where x is read, never the order of the sums.
 */
#include <string.h>

#include "distributed/distributed_internal.h"
#include "operator/operator_ops.h"
#include "operator/regridder_internal.h"

/* A 1-D axis map of `extent` values, all matrix, no batch. */
static void one_axis(spart_axis_map *map, int64_t extent)
{
    memset(map, 0, sizeof *map);
    map->shape.ndim = 1;
    map->shape.dims[0] = extent;
    map->matrix_stride[0] = 1;
    map->num_batch = 1;
}

/* Copy the rows' arrays, renumbering the columns. */
static spart_status copy_rows(spart_context *context, const spart_csr *from, int64_t first_row,
                              const int64_t *column_map, spart_csr *to)
{
    const spart_allocator *allocator = &context->allocator;
    int64_t begin = from->row_ptr[first_row];
    int64_t n = to->num_entries;
    to->row_ptr = spart_alloc(allocator, (size_t)to->num_rows + 1, sizeof *to->row_ptr);
    if (to->num_columns < ((int64_t)1 << 31)) {
        to->columns32 = spart_alloc(allocator, (size_t)n + 1, sizeof *to->columns32);
    } else {
        to->columns64 = spart_alloc(allocator, (size_t)n + 1, sizeof *to->columns64);
    }
    if (from->values32 != NULL) {
        to->values32 = spart_alloc(allocator, (size_t)n + 1, sizeof *to->values32);
    } else {
        to->values64 = spart_alloc(allocator, (size_t)n + 1, sizeof *to->values64);
    }
    if (to->row_ptr == NULL || (to->columns32 == NULL && to->columns64 == NULL) ||
        (to->values32 == NULL && to->values64 == NULL)) {
        spart_csr_release(allocator, to);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory for %lld rows of %lld "
                          "entries",
                          (long long)to->num_rows, (long long)n);
    }
    for (int64_t r = 0; r <= to->num_rows; r++) {
        to->row_ptr[r] = from->row_ptr[first_row + r] - begin;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t column = from->columns32 != NULL ? (int64_t)from->columns32[begin + k]
                                                 : from->columns64[begin + k];
        int64_t local = column_map[column];
        if (to->columns32 != NULL) {
            to->columns32[k] = (int32_t)local;
        } else {
            to->columns64[k] = local;
        }
    }
    if (n > 0 && from->values32 != NULL) {
        memcpy(to->values32, from->values32 + begin, (size_t)n * sizeof *to->values32);
    } else if (n > 0) {
        memcpy(to->values64, from->values64 + begin, (size_t)n * sizeof *to->values64);
    }
    return SPART_OK;
}

spart_status spart_distributed_local_rows(spart_context *context, const spart_regridder *source,
                                          int64_t first_row, int64_t local_rows,
                                          const int64_t *column_map, int64_t num_needed,
                                          const spart_product_plan *plan, spart_regridder **local)
{
    *local = NULL;
    spart_regridder *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory");
    }
    made->allocator = context->allocator;
    made->ops = spart_operator_ops_for(-1);
    made->owns_arrays = 1;
    one_axis(&made->input, num_needed);
    one_axis(&made->output, local_rows);
    made->csr.num_rows = local_rows;
    made->csr.num_columns = num_needed;
    made->csr.num_entries =
        source->csr.row_ptr[first_row + local_rows] - source->csr.row_ptr[first_row];
    spart_status status = copy_rows(context, &source->csr, first_row, column_map, &made->csr);
    if (status != SPART_OK) {
        spart_free(&context->allocator, made);
        return status;
    }
    /* The whole matrix's order: its rule, g and chunks; no index yet
     * (index_rows makes this matrix's own, an index only). */
    made->plan.row_rule = plan->row_rule;
    made->plan.group_size = plan->group_size;
    made->plan.chunk_length = plan->chunk_length;
    made->plan.row_lengths = NULL;
    made->plan.block_starts = NULL;
    made->plan.row_stripes = 1;
    made->ops->index_rows(made, spart_threads(context));
    *local = made;
    return SPART_OK;
}
