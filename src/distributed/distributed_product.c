/*
 * src/distributed/distributed_product.c: the products of a distributed
 * operator (spart/distributed.h). Each rank forms its rows with its local
 * regridder, which sums them in the whole matrix's order
 * (local_rows.c); the exchanges only move values: the x entries a rank's
 * columns need (a gather from a whole x, or one MPI_Alltoallv from the
 * ranks that own them), and the rows gathered in rank order.
 */
#include <string.h>

#include "distributed/distributed_internal.h"
#include "spart/device_memory.h"

/* y_local = this rank's rows of A x, from x_needed (where the operator
 * lives): +0.0 for a rank without entries (an empty row's sum). */
static spart_status local_product(spart_context *context, spart_distributed_operator *d)
{
    if (d->local_rows == 0) {
        return SPART_OK;
    }
    if (d->local == NULL) {
        if (!d->on_device) {
            for (int64_t r = 0; r < d->local_rows; r++) {
                d->y_local[r] = 0.0;
            }
            return SPART_OK;
        }
        for (int64_t r = 0; r < d->local_rows; r++) {
            d->host_rows[r] = 0.0;
        }
        return spart_memory_copy(context, d->y_local, 1, d->host_rows, 0,
                                 (size_t)d->local_rows * sizeof(double));
    }
    spart_array x = {d->x_needed, spart_regridder_shape_input(d->local)};
    return spart_regridder_apply(context, d->local, &x, d->y_local, d->local_rows);
}

/* x_needed = x[needed] from a whole x. */
static spart_status gather_needed(spart_context *context, spart_distributed_operator *d,
                                  const double *x)
{
    if (d->num_needed == 0) {
        return SPART_OK;
    }
    if (d->on_device) {
        spart_csr_product product;
        spart_csr_product_init(&product);
        return spart_csr_matrix_multiply(context, d->select, &product, x, d->x_needed);
    }
    const int64_t *needed = d->needed;
    double *x_needed = d->x_needed;
    int64_t n = d->num_needed;
#pragma omp parallel for num_threads(spart_threads(context)) schedule(static) if (n > 65536)
    for (int64_t k = 0; k < n; k++) {
        x_needed[k] = x[needed[k]];
    }
    return SPART_OK;
}

/* Every rank's y_local into the whole y, in rank order (device vectors
 * through the host buffers). */
static spart_status gather_rows(spart_context *context, spart_distributed_operator *d, double *y)
{
    const char *what = "distributed_operator_apply";
    if (!d->on_device) {
        return spart_comm_allgatherv(context, d->communicator, d->y_local, d->local_rows, y,
                                     d->row_counts, d->row_displacements, sizeof(double), what);
    }
    size_t bytes = (size_t)d->local_rows * sizeof(double);
    spart_status status = spart_memory_copy(context, d->host_rows, 0, d->y_local, 1, bytes);
    if (status == SPART_OK) {
        status = spart_comm_allgatherv(context, d->communicator, d->host_rows, d->local_rows,
                                       d->host_whole, d->row_counts, d->row_displacements,
                                       sizeof(double), what);
    }
    if (status == SPART_OK) {
        status = spart_memory_copy(context, y, 1, d->host_whole, 0,
                                   (size_t)d->num_rows * sizeof(double));
    }
    return status;
}

static int overlap(const double *a, int64_t a_count, const double *b, int64_t b_count)
{
    return a < b + b_count && b < a + a_count;
}

spart_status spart_distributed_operator_apply(spart_context *context,
                                              spart_distributed_operator *distributed,
                                              const double *x, double *y)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    spart_distributed_operator *d = distributed;
    if (d == NULL || (x == NULL && d->num_columns > 0) || (y == NULL && d->num_rows > 0)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "distributed_operator_apply: distributed, x and y must not be NULL");
    }
    if (x != NULL && y != NULL && overlap(x, d->num_columns, y, d->num_rows)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "distributed_operator_apply: x and y overlap");
    }
    spart_status status = gather_needed(context, d, x);
    if (status == SPART_OK) {
        status = local_product(context, d);
    }
    if (status == SPART_OK) {
        status = gather_rows(context, d, y);
    }
    return status;
}

spart_status spart_distributed_operator_column_partition(spart_context *context,
                                                         const spart_distributed_operator *d,
                                                         int64_t *first_column)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (d == NULL || first_column == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "distributed_operator_column_partition: distributed and first_column "
                          "must not be NULL");
    }
    return spart_distributed_partition_frames(context, d->num_columns, d->communicator->size,
                                              first_column);
}

/* The exchange of spart_distributed_operator_multiply, made once: which
 * of its columns each rank sends to each other rank. */
static spart_status plan_exchange(spart_context *context, spart_distributed_operator *d)
{
    const spart_allocator *allocator = &context->allocator;
    int size = d->communicator->size;
    const char *what = "distributed_operator_multiply";
    d->first_columns = spart_alloc(allocator, (size_t)size + 1, sizeof(int64_t));
    int64_t **arrays[4] = {&d->send_counts, &d->send_displacements, &d->receive_counts,
                           &d->receive_displacements};
    for (int k = 0; k < 4; k++) {
        *arrays[k] = spart_alloc_zero(allocator, (size_t)size, sizeof(int64_t));
    }
    int64_t *ones = spart_alloc(allocator, (size_t)size, sizeof(int64_t));
    int64_t *offsets = spart_alloc(allocator, (size_t)size, sizeof(int64_t));
    spart_status status = SPART_OK;
    if (d->first_columns == NULL || d->send_counts == NULL || d->send_displacements == NULL ||
        d->receive_counts == NULL || d->receive_displacements == NULL || ones == NULL ||
        offsets == NULL) {
        status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    if (status == SPART_OK) {
        status =
            spart_distributed_partition_frames(context, d->num_columns, size, d->first_columns);
    }
    if (status == SPART_OK) {
        /* needed is ascending and the owners' blocks are too: the columns
         * needed from rank o are one run of it, and rank order is its order */
        int owner = 0;
        for (int64_t k = 0; k < d->num_needed; k++) {
            while (d->needed[k] >= d->first_columns[owner + 1]) {
                owner++;
            }
            d->receive_counts[owner]++;
        }
        int64_t at = 0;
        for (int r = 0; r < size; r++) {
            d->receive_displacements[r] = at;
            at += d->receive_counts[r];
            ones[r] = 1;
            offsets[r] = r;
        }
        /* each owner learns how many of its columns each rank needs */
        status = spart_comm_alltoallv(context, d->communicator, d->receive_counts, ones, offsets,
                                      d->send_counts, ones, offsets, what);
    }
    if (status == SPART_OK) {
        int64_t at = 0;
        for (int r = 0; r < size; r++) {
            d->send_displacements[r] = at;
            at += d->send_counts[r];
        }
        d->num_send = at;
        d->send_index = spart_alloc(allocator, (size_t)at + 1, sizeof(int64_t));
        d->send_values = spart_alloc(allocator, (size_t)at + 1, sizeof(double));
        if (d->on_device) { /* device vectors pass through the host */
            int rank = d->communicator->rank;
            int64_t mine = d->first_columns[rank + 1] - d->first_columns[rank];
            d->host_x = spart_alloc(allocator, (size_t)mine + 1, sizeof(double));
            d->host_needed = spart_alloc(allocator, (size_t)d->num_needed + 1, sizeof(double));
        }
        if (d->send_index == NULL || d->send_values == NULL ||
            (d->on_device && (d->host_x == NULL || d->host_needed == NULL))) {
            status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
        }
    }
    if (status == SPART_OK) {
        /* and which: the global columns, made local to the owner */
        status = spart_comm_alltoallv(context, d->communicator, d->needed, d->receive_counts,
                                      d->receive_displacements, d->send_index, d->send_counts,
                                      d->send_displacements, what);
    }
    if (status == SPART_OK) {
        int64_t first = d->first_columns[d->communicator->rank];
        for (int64_t k = 0; k < d->num_send; k++) {
            d->send_index[k] -= first;
        }
    }
    spart_free(allocator, ones);
    spart_free(allocator, offsets);
    if (status != SPART_OK) { /* made again on the next call */
        int64_t **indices[6] = {&d->first_columns,         &d->send_counts,
                                &d->send_displacements,    &d->receive_counts,
                                &d->receive_displacements, &d->send_index};
        for (int k = 0; k < 6; k++) {
            spart_free(allocator, *indices[k]);
            *indices[k] = NULL;
        }
        double **values[3] = {&d->send_values, &d->host_x, &d->host_needed};
        for (int k = 0; k < 3; k++) {
            spart_free(allocator, *values[k]);
            *values[k] = NULL;
        }
    }
    return status;
}

spart_status spart_distributed_operator_multiply(spart_context *context,
                                                 spart_distributed_operator *distributed,
                                                 const double *x_local, double *y_local)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    spart_distributed_operator *d = distributed;
    if (d == NULL || x_local == NULL || (y_local == NULL && d->local_rows > 0)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "distributed_operator_multiply: distributed, x_local and y_local must "
                          "not be NULL");
    }
    spart_status status = d->send_index != NULL ? SPART_OK : plan_exchange(context, d);
    if (status != SPART_OK) {
        return status;
    }
    /* device vectors pass through host buffers, as the apply's do */
    const double *x_host = x_local;
    if (d->on_device) {
        int rank = d->communicator->rank;
        int64_t mine = d->first_columns[rank + 1] - d->first_columns[rank];
        status =
            spart_memory_copy(context, d->host_x, 0, x_local, 1, (size_t)mine * sizeof(double));
        x_host = d->host_x;
    }
    for (int64_t k = 0; k < d->num_send && status == SPART_OK; k++) {
        d->send_values[k] = x_host[d->send_index[k]];
    }
    /* doubles moved as 8-byte items, bit for bit */
    double *received = d->on_device ? d->host_needed : d->x_needed;
    if (status == SPART_OK) {
        status = spart_comm_alltoallv(context, d->communicator, d->send_values, d->send_counts,
                                      d->send_displacements, received, d->receive_counts,
                                      d->receive_displacements, "distributed_operator_multiply");
    }
    if (status == SPART_OK && d->on_device) {
        status = spart_memory_copy(context, d->x_needed, 1, d->host_needed, 0,
                                   (size_t)d->num_needed * sizeof(double));
    }
    if (status == SPART_OK) {
        status = local_product(context, d);
    }
    if (status == SPART_OK && d->local_rows > 0) {
        status = spart_memory_copy(context, y_local, d->on_device, d->y_local, d->on_device,
                                   (size_t)d->local_rows * sizeof(double));
    }
    return status;
}
