/*
 * src/distributed/distributed_operator.c: one operator over the ranks
 * (spart/distributed.h): the split of a regridder's rows by entries, each
 * rank's rows and the columns they use, and where its vectors live. The
 * products are in distributed_product.c.
 */
#include <string.h>

#include "distributed/distributed_internal.h"
#include "operator/regridder_internal.h"
#include "spart/device.h"
#include "spart/device_memory.h"

static spart_status check_create(spart_context *context, const spart_communicator *communicator,
                                 const spart_regridder *whole, spart_distributed_operator **out)
{
    if (communicator == NULL || whole == NULL || out == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "distributed_operator_create: communicator, whole and distributed "
                          "must not be NULL");
    }
    *out = NULL;
    if (spart_regridder_cuda_device(whole) >= 0) {
        return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                          "distributed_operator_create: the regridder is on a CUDA device; "
                          "split a host regridder (spart_regridder_to_host) and pass on_device "
                          "= 1 to put each rank's rows on its device");
    }
    if (whole->input.num_batch != 1 || whole->output.num_batch != 1 ||
        spart_shape_size(&whole->input.shape) != whole->csr.num_columns ||
        spart_shape_size(&whole->output.shape) != whole->csr.num_rows) {
        return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                          "distributed_operator_create: the regridder has batch axes (%lld x "
                          "%lld matrix for %lld inputs and %lld outputs); only regridders whose "
                          "matrix covers their values can be split",
                          (long long)whole->csr.num_rows, (long long)whole->csr.num_columns,
                          (long long)spart_shape_size(&whole->input.shape),
                          (long long)spart_shape_size(&whole->output.shape));
    }
    return SPART_OK;
}

/* The ranks must split the same matrix: the sizes, the entries and the
 * plan's g, gathered and compared on every rank (so all fail together). */
static spart_status check_same_matrix(spart_context *context,
                                      const spart_communicator *communicator,
                                      const spart_regridder *whole)
{
    int size = communicator->size;
    int64_t *all = spart_alloc(&context->allocator, 4 * (size_t)size, sizeof *all);
    if (all == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory");
    }
    int64_t mine[4] = {whole->csr.num_rows, whole->csr.num_columns, whole->csr.num_entries,
                       whole->plan.group_size * 2 + whole->plan.row_rule};
    spart_status status = SPART_OK;
    for (int k = 0; k < 4 && status == SPART_OK; k++) {
        status = spart_comm_allgather_int64(context, communicator, mine[k], all + k * size,
                                            "distributed_operator_create");
    }
    for (int r = 0; r < size && status == SPART_OK; r++) {
        if (all[r] != all[0] || all[size + r] != all[size] || all[2 * size + r] != all[2 * size] ||
            all[3 * size + r] != all[3 * size]) {
            status = spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                                "distributed_operator_create: rank %d passed a %lld x %lld matrix "
                                "of %lld entries and rank 0 one of %lld x %lld with %lld (or "
                                "another plan): every rank must pass the same regridder",
                                r, (long long)all[r], (long long)all[size + r],
                                (long long)all[2 * size + r], (long long)all[0],
                                (long long)all[size], (long long)all[2 * size]);
        }
    }
    spart_free(&context->allocator, all);
    return status;
}

/* The columns this rank's rows use (ascending) and the map from a global
 * column to its local number. */
static spart_status find_needed(spart_context *context, const spart_csr *csr,
                                spart_distributed_operator *made, int64_t **column_map)
{
    const spart_allocator *allocator = &context->allocator;
    *column_map = spart_alloc(allocator, (size_t)csr->num_columns + 1, sizeof **column_map);
    if (*column_map == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory for %lld columns",
                          (long long)csr->num_columns);
    }
    int64_t *map = *column_map;
    for (int64_t c = 0; c < csr->num_columns; c++) {
        map[c] = -1;
    }
    int64_t begin = csr->row_ptr[made->source_row];
    int64_t end = csr->row_ptr[made->source_row + made->local_rows];
    for (int64_t k = begin; k < end; k++) {
        map[csr->columns32 != NULL ? (int64_t)csr->columns32[k] : csr->columns64[k]] = 0;
    }
    int64_t count = 0;
    for (int64_t c = 0; c < csr->num_columns; c++) {
        count += map[c] == 0;
    }
    made->num_needed = count;
    made->needed = spart_alloc(allocator, (size_t)count + 1, sizeof *made->needed);
    if (made->needed == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory");
    }
    count = 0;
    for (int64_t c = 0; c < csr->num_columns; c++) {
        if (map[c] == 0) {
            made->needed[count] = c;
            map[c] = count++;
        }
    }
    return SPART_OK;
}

/* This rank's rows, and every rank's counts for the gathers. */
static spart_status split_rows(spart_context *context, const spart_communicator *communicator,
                               const spart_regridder *whole, spart_distributed_operator *made)
{
    int size = communicator->size;
    int64_t *first = spart_alloc(&context->allocator, (size_t)size + 1, sizeof *first);
    if (first == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory");
    }
    spart_status status = spart_distributed_partition_rows(context, whole->csr.row_ptr,
                                                           whole->csr.num_rows, size, first);
    if (status == SPART_OK) {
        status = spart_comm_counts_from_firsts(context, first, size, &made->row_counts,
                                               &made->row_displacements);
    }
    if (status == SPART_OK) {
        made->first_row = first[communicator->rank];
        made->source_row = made->first_row;
        made->local_rows = first[communicator->rank + 1] - made->first_row;
        made->local_entries = whole->csr.row_ptr[made->first_row + made->local_rows] -
                              whole->csr.row_ptr[made->first_row];
    }
    spart_free(&context->allocator, first);
    return status;
}

/* x -> x[needed] on the device: a CSR matrix of one entry 1.0 a row,
 * whose product fma(1.0, x, +0.0) is x itself (a -0.0 becomes +0.0,
 * which no row sum can tell apart: every sum starts from +0.0). */
static spart_status make_select(spart_context *context, spart_distributed_operator *made)
{
    const spart_allocator *allocator = &context->allocator;
    int64_t n = made->num_needed;
    int64_t *row_ptr = spart_alloc(allocator, (size_t)n + 1, sizeof *row_ptr);
    double *ones = spart_alloc(allocator, (size_t)n + 1, sizeof *ones);
    spart_status status = SPART_OK;
    if (row_ptr == NULL || ones == NULL) {
        status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                            "distributed_operator_create: out of memory");
    }
    spart_csr_matrix *host = NULL;
    if (status == SPART_OK) {
        for (int64_t k = 0; k <= n; k++) {
            row_ptr[k] = k;
        }
        for (int64_t k = 0; k < n; k++) {
            ones[k] = 1.0;
        }
        spart_csr_arrays arrays = {
            n,    made->num_columns, n, row_ptr, SPART_INT64, made->needed, SPART_INT64,
            ones, SPART_FLOAT64,     0};
        status = spart_csr_matrix_create(context, &arrays, NULL, &host);
    }
    if (status == SPART_OK) {
        status = spart_csr_matrix_to_device(context, host, &made->select);
    }
    spart_csr_matrix_free(host);
    spart_free(allocator, row_ptr);
    spart_free(allocator, ones);
    return status;
}

/* The rows (and the device's buffers) where the operator lives. */
static spart_status place(spart_context *context, const spart_regridder *source,
                          const int64_t *column_map, spart_distributed_operator *made)
{
    spart_status status = SPART_OK;
    if (made->local_entries > 0) {
        status =
            spart_distributed_local_rows(context, source, made->source_row, made->local_rows,
                                         column_map, made->num_needed, &made->plan, &made->local);
    }
    if (status == SPART_OK && made->on_device && made->local != NULL) {
        spart_regridder *device = NULL;
        status = spart_regridder_to_device(context, made->local, &device);
        spart_regridder_free(made->local);
        made->local = device;
        if (status == SPART_OK) {
            status = make_select(context, made);
        }
    }
    const size_t doubles[2] = {(size_t)made->num_needed + 1, (size_t)made->local_rows + 1};
    double **where[2] = {&made->x_needed, &made->y_local};
    for (int k = 0; k < 2 && status == SPART_OK; k++) {
        status = spart_memory_allocate(made->own_context, made->on_device,
                                       doubles[k] * sizeof(double), (void **)where[k]);
        if (status != SPART_OK) {
            status = spart_fail(context, status, "distributed_operator_create: %s",
                                spart_context_error(made->own_context));
        }
    }
    if (status == SPART_OK && made->on_device) {
        made->host_rows =
            spart_alloc(&context->allocator, (size_t)made->local_rows + 1, sizeof(double));
        made->host_whole =
            spart_alloc(&context->allocator, (size_t)made->num_rows + 1, sizeof(double));
        if (made->host_rows == NULL || made->host_whole == NULL) {
            status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                                "distributed_operator_create: out of memory for the host "
                                "buffers of %lld rows",
                                (long long)made->num_rows);
        }
    }
    return status;
}

static void release(spart_distributed_operator *made)
{
    const spart_allocator *allocator = &made->allocator;
    spart_regridder_free(made->local);
    spart_csr_matrix_free(made->select);
    if (made->own_context != NULL) {
        spart_memory_free(made->own_context, made->on_device, made->x_needed);
        spart_memory_free(made->own_context, made->on_device, made->y_local);
    }
    int64_t *arrays[] = {
        made->row_counts,     made->row_displacements,     made->needed,
        made->first_columns,  made->send_counts,           made->send_displacements,
        made->receive_counts, made->receive_displacements, made->send_index};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        spart_free(allocator, arrays[k]);
    }
    spart_free(allocator, made->send_values);
    spart_free(allocator, made->host_x);
    spart_free(allocator, made->host_needed);
    spart_free(allocator, made->host_rows);
    spart_free(allocator, made->host_whole);
    spart_context_free(made->own_context);
    spart_free(allocator, made);
}

/* The private context: the caller's allocator and CUDA device. */
static spart_status make_own_context(spart_context *context, spart_distributed_operator *made)
{
    if (spart_context_create_with_allocator(&context->allocator, &made->own_context) != SPART_OK) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory");
    }
    made->own_context->cuda_device = context->cuda_device;
    made->own_context->cuda_stream = context->cuda_stream;
    made->own_context->threads = context->threads;
    return SPART_OK;
}

/* A new operator of `source`'s columns on this context. */
static spart_status start(spart_context *context, const spart_communicator *communicator,
                          const spart_regridder *source, int on_device,
                          spart_distributed_operator **out)
{
    spart_distributed_operator *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create: out of memory");
    }
    made->allocator = context->allocator;
    made->communicator = communicator;
    made->on_device = on_device != 0;
    made->num_columns = source->csr.num_columns;
    *out = made;
    spart_status status = make_own_context(context, made);
    if (status != SPART_OK) {
        release(made);
        *out = NULL;
    }
    return status;
}

/* The columns this rank needs, and its rows where they live. */
static spart_status finish(spart_context *context, const spart_regridder *source,
                           spart_distributed_operator *made)
{
    int64_t *column_map = NULL;
    spart_status status = find_needed(context, &source->csr, made, &column_map);
    if (status == SPART_OK) {
        status = place(context, source, column_map, made);
    }
    spart_free(&context->allocator, column_map);
    return status;
}

/* Every rank's outcome agreed (spart_comm_agree), so that a rank that
 * failed alone (memory) does not leave the others waiting in their first
 * product; the operator is kept only when all succeeded. */
static spart_status conclude(spart_context *context, const spart_communicator *communicator,
                             spart_status status, spart_distributed_operator *made,
                             spart_distributed_operator **out)
{
    status = spart_comm_agree(context, communicator, status, "distributed_operator_create");
    if (status != SPART_OK) {
        if (made != NULL) {
            release(made);
        }
        return status;
    }
    *out = made;
    return SPART_OK;
}

spart_status spart_distributed_operator_create(spart_context *context,
                                               const spart_communicator *communicator,
                                               const spart_regridder *whole, int on_device,
                                               spart_distributed_operator **distributed)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    spart_status status = check_create(context, communicator, whole, distributed);
    if (status == SPART_OK) {
        status = check_same_matrix(context, communicator, whole);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_distributed_operator *made = NULL;
    status = start(context, communicator, whole, on_device, &made);
    if (status == SPART_OK) {
        made->num_rows = whole->csr.num_rows;
        made->plan = whole->plan;
        status = split_rows(context, communicator, whole, made);
    }
    if (status == SPART_OK) {
        status = finish(context, whole, made);
    }
    return conclude(context, communicator, status, made, distributed);
}

/* Every rank's rows and entries (from_rows): the blocks in rank order,
 * the totals, and the same columns everywhere. */
static spart_status gather_blocks(spart_context *context, const spart_communicator *communicator,
                                  const spart_regridder *rows, spart_distributed_operator *made,
                                  int64_t *total_entries)
{
    int size = communicator->size;
    int64_t *all = spart_alloc(&context->allocator, 3 * (size_t)size + 1, sizeof *all);
    if (all == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "distributed_operator_create_from_rows: out of memory");
    }
    int64_t mine[3] = {rows->csr.num_rows, rows->csr.num_entries, rows->csr.num_columns};
    spart_status status = SPART_OK;
    for (int k = 0; k < 3 && status == SPART_OK; k++) {
        status = spart_comm_allgather_int64(context, communicator, mine[k], all + k * size,
                                            "distributed_operator_create_from_rows");
    }
    for (int r = 0; r < size && status == SPART_OK; r++) {
        if (all[2 * size + r] != all[2 * size]) {
            status = spart_fail(context, SPART_ERROR_SHAPE_MISMATCH,
                                "distributed_operator_create_from_rows: rank %d's rows have %lld "
                                "columns and rank 0's %lld: every block holds rows of the same "
                                "matrix, all its columns",
                                r, (long long)all[2 * size + r], (long long)all[2 * size]);
        }
    }
    int64_t *first = NULL;
    if (status == SPART_OK) {
        first = spart_alloc(&context->allocator, (size_t)size + 1, sizeof *first);
        if (first == NULL) {
            status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                                "distributed_operator_create_from_rows: out of memory");
        }
    }
    if (status == SPART_OK) {
        first[0] = 0;
        *total_entries = 0;
        for (int r = 0; r < size; r++) {
            first[r + 1] = first[r] + all[r];
            *total_entries += all[size + r];
        }
        made->num_rows = first[size];
        made->first_row = first[communicator->rank];
        made->source_row = 0;
        made->local_rows = rows->csr.num_rows;
        made->local_entries = rows->csr.num_entries;
        status = spart_comm_counts_from_firsts(context, first, size, &made->row_counts,
                                               &made->row_displacements);
    }
    spart_free(&context->allocator, first);
    spart_free(&context->allocator, all);
    return status;
}

spart_status spart_distributed_operator_create_from_rows(spart_context *context,
                                                         const spart_communicator *communicator,
                                                         const spart_regridder *rows,
                                                         spart_distributed_plan plan, int on_device,
                                                         spart_distributed_operator **distributed)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    spart_status status = check_create(context, communicator, rows, distributed);
    if (status == SPART_OK && plan != SPART_DISTRIBUTED_PLAN_MEAN &&
        plan != SPART_DISTRIBUTED_PLAN_BY_ROW) {
        status = spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                            "distributed_operator_create_from_rows: plan = %d is neither "
                            "SPART_DISTRIBUTED_PLAN_MEAN (0) nor SPART_DISTRIBUTED_PLAN_BY_ROW (1)",
                            (int)plan);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_distributed_operator *made = NULL;
    status = start(context, communicator, rows, on_device, &made);
    status =
        spart_comm_agree(context, communicator, status, "distributed_operator_create_from_rows");
    int64_t total_entries = 0;
    if (status == SPART_OK) {
        status = gather_blocks(context, communicator, rows, made, &total_entries);
    }
    if (status != SPART_OK) {
        if (made != NULL) {
            release(made);
        }
        return status;
    }
    /* The whole matrix's plan from its sizes alone (spart_plan_product
     * reads the rows and entries). */
    spart_csr sizes;
    memset(&sizes, 0, sizeof sizes);
    sizes.num_rows = made->num_rows;
    sizes.num_columns = made->num_columns;
    sizes.num_entries = total_entries;
    made->plan = spart_plan_product_by_rule(
        &sizes, plan == SPART_DISTRIBUTED_PLAN_BY_ROW ? SPART_PLAN_BY_ROW : SPART_PLAN_MEAN);
    status = finish(context, rows, made);
    return conclude(context, communicator, status, made, distributed);
}

void spart_distributed_operator_free(spart_distributed_operator *distributed)
{
    if (distributed != NULL) {
        release(distributed);
    }
}

int64_t spart_distributed_operator_num_rows(const spart_distributed_operator *d)
{
    return d != NULL ? d->num_rows : 0;
}

int64_t spart_distributed_operator_num_columns(const spart_distributed_operator *d)
{
    return d != NULL ? d->num_columns : 0;
}

int64_t spart_distributed_operator_first_row(const spart_distributed_operator *d)
{
    return d != NULL ? d->first_row : 0;
}

int64_t spart_distributed_operator_local_rows(const spart_distributed_operator *d)
{
    return d != NULL ? d->local_rows : 0;
}

int64_t spart_distributed_operator_local_entries(const spart_distributed_operator *d)
{
    return d != NULL ? d->local_entries : 0;
}

int64_t spart_distributed_operator_local_columns(const spart_distributed_operator *d)
{
    return d != NULL ? d->num_needed : 0;
}
