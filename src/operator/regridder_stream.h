/*
 * src/operator/regridder_stream.h: the streaming assembly of
 * spart_regridder_create_streamed (include/spart/regridder.h), shared by
 * its common part (src/operator/regridder_stream.c: the checks, the
 * blocks as they arrive, the budget) and its two tables of operations, the
 * host's (regridder_stream_host.c) and the CUDA device's
 * (regridder_stream_cuda.c, built with CUDA only), chosen once by
 * spart_stream_select.
 */
#ifndef SPART_REGRIDDER_STREAM_H
#define SPART_REGRIDDER_STREAM_H

#include "operator/csr_assemble_stream.h"
#include "operator/regridder_internal.h"

/* The parts of the budget (bytes) for a matrix of a given size. The
 * peak is the larger of the placing pass (cursors, tables, staging and
 * the result's entries) and the plan (cursors, entries and the plan's
 * tables and scratch, once the staging and tables are freed). */
typedef struct spart_stream_bytes {
    size_t cursors; /* 8 (rows + 1): the cursors, then row_ptr */
    size_t tables;  /* assembly tables and the per-block counts */
    size_t staging; /* one block's staging (device) */
    size_t entries; /* columns and values */
    size_t plan;    /* the plan's index, tables and scratch */
} spart_stream_bytes;

/* The peak of the parts, and what the first pass alone holds. */
size_t spart_stream_peak(const spart_stream_bytes *parts);

/* One streaming assembly in progress. */
typedef struct spart_stream_job {
    spart_context *context;
    const spart_weights_stream *stream;
    int64_t num_elements; /* of the whole stream */
    size_t budget;
    int64_t cells_input; /* the weights' cells, for the index checks */
    int64_t cells_output;
    /* the bytes query: stop after the tables, with the peak for
     * query_entries in query_bytes */
    int query;
    int64_t query_entries;
    size_t query_bytes;
    /* per block, the first pass's entries and kept entries (2 each) */
    int64_t *block_counts;
    /* the element of the last entry seen in this pass (-1: none yet) */
    int64_t last_element;
    size_t held; /* bytes held now, by the job's own count */
    spart_stream_report report;
} spart_stream_job;

/* A table of operations: the budget's parts, and the assembly. */
typedef struct spart_stream_ops {
    const char *name;
    void (*bytes)(const spart_stream_job *job, const spart_assembly_source *tables,
                  int64_t num_rows, int64_t num_columns, spart_value_type value_type,
                  int64_t num_entries, spart_stream_bytes *parts);
    spart_status (*assemble)(spart_stream_job *job, const spart_assembly_source *tables,
                             int64_t cells_input, int64_t cells_output, spart_value_type value_type,
                             spart_regridder *regridder);
} spart_stream_ops;

extern const spart_stream_ops spart_stream_host_ops;
extern const spart_stream_ops spart_stream_cuda_ops; /* builds with CUDA only */

/* ---- the common part, for the tables (src/operator/regridder_stream.c) ---------------- */

/* The bytes of the assembly tables (and of the per-block counts). */
size_t spart_stream_table_bytes(const spart_stream_job *job, const spart_assembly_source *tables,
                                int64_t cells_input, int64_t cells_output);

/* Refuse (SPART_ERROR_INVALID_ARGUMENT with the parts in bytes) when the
 * budget cannot hold `parts`; `when` says which check ("before the first
 * pass", "for the N entries the first pass counted"). */
spart_status spart_stream_check_budget(spart_stream_job *job, const spart_stream_bytes *parts,
                                       const char *when);

/* Block `block` of pass `pass` from the caller's function, checked: its
 * offsets ascend from 0, its elements lie in the orthogonal shape and do
 * not go back before the last entry's element of an earlier block, it
 * holds at most max_block_entries entries, and in pass 1 as many entries
 * as in pass 0. *num_entries its entries; *first_element its first
 * element. */
spart_status spart_stream_fetch(spart_stream_job *job, int64_t block, int pass,
                                spart_weights_block *result, int64_t *num_entries);

/* The block's source for the twins: tables advanced to its first
 * element, its arrays as given (on the device, replaced by the caller). */
spart_stream_source spart_stream_source_of(const spart_stream_job *job,
                                           const spart_assembly_source *tables,
                                           const spart_weights_block *block, int64_t num_entries,
                                           int64_t cells_input, int64_t cells_output);

/* After a pass over a block: refuse a bad index (the sentence names the
 * block, its entry, its element and the indices) and, in pass 1, a kept
 * count other than pass 0's or slots out of range. Records pass 0's kept
 * count. */
spart_status spart_stream_check_tally(spart_stream_job *job, int64_t block, int pass,
                                      const spart_weights_block *result, int64_t num_entries,
                                      const spart_stream_tally *tally);

/* The fingerprint the row pointers must have after the second pass,
 * from the cursors just scanned (host memory view of the few numbers it
 * needs: `tail` = cursor[2 .. num_rows] fingerprinted by the caller). */
uint64_t spart_stream_expected_fingerprint(uint64_t tail, int64_t num_rows, int64_t num_entries);

/* Refuse a stream whose second pass reached other row pointers. */
spart_status spart_stream_check_fingerprint(spart_stream_job *job, uint64_t expected,
                                            uint64_t reached);

/* Count `bytes` as held (and the peak), or as freed (negative). */
void spart_stream_hold(spart_stream_job *job, size_t bytes);
void spart_stream_release(spart_stream_job *job, size_t bytes);

#endif /* SPART_REGRIDDER_STREAM_H */
