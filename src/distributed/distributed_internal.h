/*
 * src/distributed/distributed_internal.h: the communicator's layout and the
 * few collectives the module uses, written once over MPI
 * (src/distributed/communicator_mpi.c, built only with MPI) and refused
 * without it (src/distributed/no_mpi.c). Every collective moves values
 * only, in rank order: nothing here adds numbers from different ranks.
 */
#ifndef SPART_DISTRIBUTED_INTERNAL_H
#define SPART_DISTRIBUTED_INTERNAL_H

#include "core/internal.h"
#include "operator/regridder_internal.h"
#include "spart/csr_matrix.h"
#include "spart/distributed.h"

struct spart_communicator {
    spart_allocator allocator;
    int rank;
    int size;
    void *mpi_comm; /* an MPI_Comm (the duplicate), allocated; only the _mpi file reads it */
};

/* Gather every rank's `count` values of `item_bytes` bytes each (8 or 1)
 * into `gathered` on every rank, in rank order, with counts[r] and
 * displacements[r] (in items) given by the caller, the same on every
 * rank. Fails with a sentence naming `what`. */
spart_status spart_comm_allgatherv(spart_context *context, const spart_communicator *communicator,
                                   const void *values, int64_t count, void *gathered,
                                   const int64_t *counts, const int64_t *displacements,
                                   size_t item_bytes, const char *what);

/* One int64 from every rank into values[size], in rank order. */
spart_status spart_comm_allgather_int64(spart_context *context,
                                        const spart_communicator *communicator, int64_t value,
                                        int64_t *values, const char *what);

/* The largest of the ranks' `value`s, on every rank (MPI_Allreduce of
 * one int with MPI_MAX: for flags and counts, never for results). */
spart_status spart_comm_max_int(spart_context *context, const spart_communicator *communicator,
                                int value, int *largest, const char *what);

/* All ranks learn whether every one of them reached SPART_OK: returns
 * `mine` where this rank failed (its sentence kept), SPART_ERROR_INTERNAL
 * naming a failed rank where another did, else SPART_OK. Every rank must
 * call it, failed or not, so that none waits in a later collective. */
spart_status spart_comm_agree(spart_context *context, const spart_communicator *communicator,
                              spart_status mine, const char *what);

/* Every rank sends send_counts[r] int64 items to rank r from
 * send[send_displacements[r]...] and receives receive_counts[r] from rank r
 * into receive[receive_displacements[r]...] (MPI_Alltoallv); item_bytes 8
 * (int64 or double). */
spart_status spart_comm_alltoallv(spart_context *context, const spart_communicator *communicator,
                                  const void *send, const int64_t *send_counts,
                                  const int64_t *send_displacements, void *receive,
                                  const int64_t *receive_counts,
                                  const int64_t *receive_displacements, const char *what);

/* Counts and displacements (size values each, from the allocator) of
 * rank blocks whose first items are first[0..size] (first[size] = total). */
spart_status spart_comm_counts_from_firsts(spart_context *context, const int64_t *first, int size,
                                           int64_t **counts, int64_t **displacements);

/* One operator over the ranks (spart_distributed_operator_create in
 * src/distributed/distributed_operator.c; its products in
 * distributed_product.c). */
struct spart_distributed_operator {
    spart_allocator allocator;
    const spart_communicator *communicator; /* the caller's, borrowed */
    int on_device;
    /* A context of the caller's allocator and CUDA device, through which
     * the vectors are allocated and freed (free takes no context). */
    spart_context *own_context;
    int64_t num_rows; /* the whole matrix */
    int64_t num_columns;
    int64_t first_row;       /* this rank's rows: [first_row, first_row + local_rows) */
    int64_t source_row;      /* where they start in the regridder they come from */
    spart_product_plan plan; /* the whole matrix's order of sums */
    int64_t local_rows;
    int64_t local_entries;
    int64_t *row_counts; /* every rank's rows and first row, for the gathers */
    int64_t *row_displacements;
    int64_t num_needed; /* the columns this rank's rows use, ascending */
    int64_t *needed;
    spart_regridder *local;   /* the rows, columns renumbered 0 .. num_needed - 1;
                                 NULL when the rank has no entries */
    spart_csr_matrix *select; /* device operators: x -> x[needed] (one entry 1.0 a row) */
    double *x_needed;         /* num_needed values, where the operator lives */
    double *y_local;          /* local_rows values, where the operator lives */
    double *host_rows;        /* device operators: local_rows values, host */
    double *host_whole;       /* device operators: num_rows values, host */
    /* spart_distributed_operator_multiply's exchange (host operators),
     * made on its first call: the column partition, and per rank the
     * counts and displacements of what this rank sends (indices into its
     * x_local) and receives (into x_needed, in rank order = ascending). */
    int64_t *first_columns;
    int64_t *send_counts;
    int64_t *send_displacements;
    int64_t *receive_counts;
    int64_t *receive_displacements;
    int64_t *send_index;
    double *send_values;
    int64_t num_send;
    double *host_x;      /* device operators: this rank's x columns, host */
    double *host_needed; /* device operators: num_needed values, host */
};

/* The rows [first_row, first_row + local_rows) of the host regridder
 * `source` as a host regridder of their own: columns renumbered through
 * `column_map` (source column -> local column), summed in the order of
 * `plan` (the whole matrix's: its rule, g and chunk length), not in the
 * order the rows alone would plan (src/distributed/local_rows.c). */
spart_status spart_distributed_local_rows(spart_context *context, const spart_regridder *source,
                                          int64_t first_row, int64_t local_rows,
                                          const int64_t *column_map, int64_t num_needed,
                                          const spart_product_plan *plan, spart_regridder **local);

#endif /* SPART_DISTRIBUTED_INTERNAL_H */
