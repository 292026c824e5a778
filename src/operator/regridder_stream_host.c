/*
 * src/operator/regridder_stream_host.c: the host's table of the streaming
 * assembly (regridder_stream.h): the two passes of
 * src/operator/csr_assemble_stream.h over the caller's blocks, read where
 * they lie (host/csr_assemble_stream.c), into a host regridder's CSR
 * arrays, within the budget.
 */
#include <stdio.h>
#include <string.h>

#include "operator/regridder_stream.h"

/* Bytes of the columns and values of num_entries entries. */
static size_t entry_bytes(int64_t num_columns, spart_value_type value_type, int64_t num_entries)
{
    size_t column = num_columns < ((int64_t)1 << 31) ? sizeof(int32_t) : sizeof(int64_t);
    size_t value = value_type == SPART_FLOAT32 ? sizeof(float) : sizeof(double);
    return (column + value) * (size_t)num_entries;
}

static void host_bytes(const spart_stream_job *job, const spart_assembly_source *tables,
                       int64_t num_rows, int64_t num_columns, spart_value_type value_type,
                       int64_t num_entries, spart_stream_bytes *parts)
{
    memset(parts, 0, sizeof *parts);
    parts->cursors = sizeof(int64_t) * ((size_t)num_rows + 1);
    parts->tables = spart_stream_table_bytes(job, tables, job->cells_input, job->cells_output);
    parts->staging = 0; /* blocks are read where they lie */
    parts->entries = entry_bytes(num_columns, value_type, num_entries);
    /* the short-row index the plan may make: a byte a row, and a start
     * per block of SPART_SHORT_ROW_BLOCK rows */
    size_t blocks = ((size_t)num_rows + SPART_SHORT_ROW_BLOCK - 1) / SPART_SHORT_ROW_BLOCK;
    parts->plan = (size_t)num_rows + sizeof(int64_t) * blocks;
}

/* Allocate count * size bytes and count them. */
static void *take(spart_stream_job *job, size_t count, size_t size, int zero)
{
    const spart_allocator *allocator = &job->context->allocator;
    void *memory =
        zero ? spart_alloc_zero(allocator, count, size) : spart_alloc(allocator, count, size);
    if (memory != NULL) {
        spart_stream_hold(job, count * size);
    }
    return memory;
}

/* One pass over every block. */
static spart_status run_pass(spart_stream_job *job, const spart_assembly_source *tables, int pass,
                             spart_csr *csr, int64_t *cursor)
{
    job->last_element = -1;
    for (int64_t b = 0; b < job->stream->num_blocks; b++) {
        spart_weights_block block;
        int64_t n = 0;
        spart_status status = spart_stream_fetch(job, b, pass, &block, &n);
        if (status != SPART_OK) {
            return status;
        }
        spart_stream_source source =
            spart_stream_source_of(job, tables, &block, n, job->cells_input, job->cells_output);
        spart_stream_tally tally;
        memset(&tally, 0, sizeof tally);
        int threads = spart_threads(job->context);
        if (pass == 0) {
            spart_host_stream_count(&source, csr->num_rows, threads, cursor, &tally);
        } else {
            spart_host_stream_place(&source, csr->num_rows, threads, cursor, csr->num_entries,
                                    csr->columns32, csr->columns64, csr->values32, csr->values64,
                                    &tally);
        }
        status = spart_stream_check_tally(job, b, pass, &block, n, &tally);
        if (status != SPART_OK) {
            return status;
        }
        spart_report_progress(job->context, pass == 0 ? "stream count" : "stream place", b + 1,
                              job->stream->num_blocks);
    }
    return SPART_OK;
}

/* The columns and values of csr->num_entries entries. */
static spart_status take_entries(spart_stream_job *job, spart_value_type value_type, spart_csr *csr)
{
    size_t n = (size_t)csr->num_entries;
    if (csr->num_columns < ((int64_t)1 << 31)) {
        csr->columns32 = take(job, n, sizeof(int32_t), 0);
    } else {
        csr->columns64 = take(job, n, sizeof(int64_t), 0);
    }
    if (value_type == SPART_FLOAT32) {
        csr->values32 = take(job, n, sizeof(float), 0);
    } else {
        csr->values64 = take(job, n, sizeof(double), 0);
    }
    if ((csr->columns32 == NULL && csr->columns64 == NULL) ||
        (csr->values32 == NULL && csr->values64 == NULL)) {
        return spart_fail(job->context, SPART_ERROR_OUT_OF_MEMORY,
                          "streamed assembly: could not allocate the columns and values of "
                          "%lld entries",
                          (long long)csr->num_entries);
    }
    return SPART_OK;
}

/* The two passes, the scan between them and the checks. */
static spart_status host_passes(spart_stream_job *job, const spart_assembly_source *tables,
                                spart_value_type value_type, spart_csr *csr, int64_t *cursor)
{
    int64_t rows = csr->num_rows;
    spart_status status = run_pass(job, tables, 0, csr, cursor);
    if (status != SPART_OK) {
        return status;
    }
    int64_t total = 0;
    for (int64_t b = 0; b < job->stream->num_blocks; b++) {
        total += job->block_counts[2 * b + 1];
    }
    spart_stream_bytes parts;
    host_bytes(job, tables, rows, csr->num_columns, value_type, total, &parts);
    char when[96];
    snprintf(when, sizeof when, "for the %lld entries the first pass counted", (long long)total);
    status = spart_stream_check_budget(job, &parts, when);
    if (status != SPART_OK) {
        return status;
    }
    spart_host_stream_scan(cursor, rows);
    uint64_t expected = spart_stream_expected_fingerprint(
        rows > 1 ? spart_host_stream_fingerprint(cursor + 2, rows - 1, 1) : 0, rows, total);
    csr->num_entries = total;
    status = take_entries(job, value_type, csr);
    if (status == SPART_OK) {
        status = run_pass(job, tables, 1, csr, cursor);
    }
    if (status == SPART_OK) {
        uint64_t reached = rows > 0 ? spart_host_stream_fingerprint(cursor + 1, rows, 1) : 0;
        status = spart_stream_check_fingerprint(job, expected, reached);
    }
    job->report.num_entries = total;
    job->report.result_bytes = parts.cursors + parts.entries + parts.plan;
    /* the plan's index comes after the tables are freed */
    size_t at_plan = parts.cursors + parts.entries + parts.plan;
    if (at_plan > job->report.peak_bytes) {
        job->report.peak_bytes = at_plan;
    }
    return status;
}

static spart_status host_assemble(spart_stream_job *job, const spart_assembly_source *tables,
                                  int64_t cells_input, int64_t cells_output,
                                  spart_value_type value_type, spart_regridder *regridder)
{
    (void)cells_input, (void)cells_output;
    spart_csr *csr = &regridder->csr;
    spart_stream_bytes parts;
    host_bytes(job, tables, csr->num_rows, csr->num_columns, value_type, 0, &parts);
    /* the tables were allocated by the caller of the step already */
    spart_stream_hold(job,
                      parts.tables - 2 * sizeof(int64_t) * ((size_t)job->stream->num_blocks + 1));
    spart_status status = spart_stream_check_budget(job, &parts, "before the first pass");
    if (status != SPART_OK) {
        return status;
    }
    job->block_counts = take(job, 2 * ((size_t)job->stream->num_blocks + 1), sizeof(int64_t), 1);
    int64_t *cursor = take(job, (size_t)csr->num_rows + 1, sizeof(int64_t), 1);
    if (job->block_counts == NULL || cursor == NULL) {
        status = spart_fail(job->context, SPART_ERROR_OUT_OF_MEMORY,
                            "streamed assembly: could not allocate %lld row cursors",
                            (long long)csr->num_rows + 1);
    }
    if (status == SPART_OK) {
        status = host_passes(job, tables, value_type, csr, cursor);
    }
    spart_free(&job->context->allocator, job->block_counts);
    job->block_counts = NULL;
    if (status != SPART_OK) {
        spart_free(&job->context->allocator, cursor);
        csr->row_ptr = NULL;
        spart_csr_release(&job->context->allocator, csr);
        return status;
    }
    csr->row_ptr = cursor;
    return SPART_OK;
}

const spart_stream_ops spart_stream_host_ops = {
    .name = "host",
    .bytes = host_bytes,
    .assemble = host_assemble,
};
