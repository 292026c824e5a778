/*
 * src/operator/regridder_stream_cuda.c: the CUDA device's table of the
 * streaming assembly (regridder_stream.h): the two passes of
 * src/operator/csr_assemble_stream.h over the caller's blocks
 * (kernels/csr_assemble_stream.cu), within the budget, into a device
 * regridder's CSR arrays; then the plan's device tables, as the in-memory
 * device assembly makes them.
 *
 * Device memory, each allocation counted as it is made: the cursors (which
 * become row_ptr), the assembly tables, one staging allocation (a block's
 * entries copied from host memory through the pinned stages of
 * src/device/upload_cuda.h, its element offsets, the sort's workspace
 * shared with the scan's and the fingerprint's scratch, the index check's
 * workspace and the tally), then, after the first pass, the columns and
 * values. Each block ends with a wait for its tally (five numbers), which
 * is also when the caller's arrays are no longer read.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_select.h"
#include "device/upload_cuda.h"
#include "operator/regridder_cuda.h"
#include "operator/regridder_stream.h"
#include "weights/weights_check_device.h"

/* Copies of host blocks go through two pinned stages of at most this size
 * once the stream's copies come to STAGED_STREAM_MIN_BYTES or more in all
 * (pinning the two stages costs about 25 ms; staged copies run at the
 * pinned rate, about 55 GB/s on an H200's host, against 6-10 GB/s from
 * pageable memory, as regridder_build_cuda.c measured). */
#define STAGE_BYTES ((size_t)32 << 20)
#define STAGED_STREAM_MIN_BYTES ((size_t)256 << 20)

/* The stage size for a stream's host blocks, 0 for plain copies. */
static size_t stage_bytes_for(const spart_weights_stream *stream)
{
    size_t block = (size_t)stream->max_block_entries * sizeof(int64_t);
    size_t copied = 5 * block * (size_t)stream->num_blocks; /* 16 + 24 bytes an entry */
    if (stream->blocks_on_device || copied < STAGED_STREAM_MIN_BYTES) {
        return 0;
    }
    return block < STAGE_BYTES ? (block + 4095) / 4096 * 4096 : STAGE_BYTES;
}

static size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* What an allocation of `bytes` takes of the device: cudaMalloc (and the
 * stream-ordered pool) hand out whole pages of 2 MiB, so the budget counts
 * each allocation rounded up to them, and cudaMemGetInfo agrees. */
#define DEVICE_PAGE ((size_t)2 << 20)

static size_t pages(size_t bytes)
{
    return (bytes + DEVICE_PAGE - 1) / DEVICE_PAGE * DEVICE_PAGE;
}

/* The regions of the staging allocation. */
typedef struct staging_layout {
    size_t entries; /* indices_output, indices_input, values: 24 bytes an entry */
    size_t offsets; /* a block's element offsets */
    size_t sort;    /* the sort's workspace, or the scan's and fingerprint's scratch */
    size_t check;   /* the index check's workspace */
    size_t tally;   /* the pass's counts and flags */
    size_t total;
} staging_layout;

static cudaError_t layout_staging(const spart_stream_job *job, int64_t num_rows,
                                  staging_layout *layout)
{
    int64_t block = job->stream->max_block_entries;
    memset(layout, 0, sizeof *layout);
    layout->entries =
        job->stream->blocks_on_device ? 0 : 3 * round_up((size_t)block * sizeof(int64_t));
    layout->offsets = round_up(((size_t)job->num_elements + 1) * sizeof(int64_t));
    spart_device_sort sort;
    size_t scratch = 0;
    cudaError_t error = (cudaError_t)spart_cuda_sort_plan(block, num_rows, 0, &sort);
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_stream_scratch_bytes(num_rows, &scratch);
    }
    layout->sort = round_up(sort.workspace_bytes > scratch ? sort.workspace_bytes : scratch);
    layout->check = round_up(spart_cuda_first_bad_entry_workspace(block));
    layout->tally = round_up((size_t)spart_cuda_stream_tally_bytes());
    layout->total =
        layout->entries + layout->offsets + layout->sort + layout->check + layout->tally;
    return error;
}

/* The device tables: row and column offsets per element, and the lookups
 * (each its own allocation). */
static size_t device_table_bytes(const spart_stream_job *job, const spart_assembly_source *tables)
{
    size_t bytes = 2 * pages(sizeof(int64_t) * (size_t)job->num_elements);
    bytes += tables->row_lookup != NULL ? pages(sizeof(int64_t) * (size_t)job->cells_output) : 0;
    bytes += tables->column_lookup != NULL ? pages(sizeof(int64_t) * (size_t)job->cells_input) : 0;
    return bytes;
}

/* The columns and values of num_entries entries (two allocations). */
static size_t device_entry_bytes(int64_t num_columns, spart_value_type value_type,
                                 int64_t num_entries)
{
    size_t column = num_columns < ((int64_t)1 << 31) ? sizeof(int32_t) : sizeof(int64_t);
    size_t value = value_type == SPART_FLOAT32 ? sizeof(float) : sizeof(double);
    return pages(column * (size_t)num_entries) + pages(value * (size_t)num_entries);
}

static void device_bytes(const spart_stream_job *job, const spart_assembly_source *tables,
                         int64_t num_rows, int64_t num_columns, spart_value_type value_type,
                         int64_t num_entries, spart_stream_bytes *parts)
{
    memset(parts, 0, sizeof *parts);
    staging_layout layout;
    (void)layout_staging(job, num_rows, &layout);
    size_t long_rows = 0;
    (void)spart_cuda_long_rows_workspace(num_rows, &long_rows);
    size_t short_blocks =
        ((size_t)num_rows + SPART_DEVICE_SHORT_ROW_BLOCK - 1) / SPART_DEVICE_SHORT_ROW_BLOCK;
    size_t chunks = (size_t)num_entries / SPART_CHUNK_LENGTH + 1;
    parts->cursors = pages(sizeof(int64_t) * ((size_t)num_rows + 1));
    parts->tables = device_table_bytes(job, tables);
    parts->staging = pages(layout.total);
    parts->entries = device_entry_bytes(num_columns, value_type, num_entries);
    /* while the plan is made: the long-row scratch and table, and the
     * short-row index with its flags */
    parts->plan = pages(long_rows) + pages(sizeof(int64_t) * (6 * chunks + 1)) +
                  pages(short_blocks * SPART_DEVICE_SHORT_ROW_BLOCK) +
                  pages(short_blocks * sizeof(int64_t)) +
                  pages(SPART_DEVICE_SHORT_ROW_FLAGS * sizeof(int));
}

/* What the device assembly holds while it runs. */
typedef struct device_run {
    spart_stream_job *job;
    cudaStream_t stream;
    spart_stager stager;
    staging_layout layout;
    char *staging;
    int64_t *cursor;
    int64_t *tables[4]; /* row_offset, column_offset, row_lookup, column_lookup */
    size_t table_bytes[4];
    spart_assembly_source device_tables;
} device_run;

static cudaError_t take(device_run *run, size_t bytes, void **memory)
{
    cudaError_t error = cudaMalloc(memory, bytes > 0 ? bytes : 1);
    if (error != cudaSuccess) {
        *memory = NULL;
        (void)cudaGetLastError();
        return error;
    }
    spart_stream_hold(run->job, pages(bytes));
    return cudaSuccess;
}

static void give_back(device_run *run, void **memory, size_t bytes)
{
    if (*memory != NULL) {
        (void)cudaFree(*memory);
        *memory = NULL;
        spart_stream_release(run->job, pages(bytes));
    }
}

/* The tables on the device: row_offset, column_offset and the lookups. */
static cudaError_t upload_tables(device_run *run, const spart_assembly_source *tables)
{
    spart_stream_job *job = run->job;
    const int64_t *from[4] = {tables->row_offset, tables->column_offset, tables->row_lookup,
                              tables->column_lookup};
    const size_t counts[4] = {(size_t)job->num_elements, (size_t)job->num_elements,
                              (size_t)job->cells_output, (size_t)job->cells_input};
    cudaError_t error = cudaSuccess;
    for (int t = 0; t < 4 && error == cudaSuccess; t++) {
        if (from[t] == NULL) {
            continue;
        }
        run->table_bytes[t] = counts[t] * sizeof(int64_t);
        error = take(run, run->table_bytes[t], (void **)&run->tables[t]);
        if (error == cudaSuccess && counts[t] > 0) {
            error = cudaMemcpyAsync(run->tables[t], from[t], run->table_bytes[t],
                                    cudaMemcpyHostToDevice, run->stream);
        }
    }
    run->device_tables = *tables;
    run->device_tables.row_offset = run->tables[0];
    run->device_tables.column_offset = run->tables[1];
    run->device_tables.row_lookup = run->tables[2];
    run->device_tables.column_lookup = run->tables[3];
    return error;
}

static void free_run(device_run *run)
{
    for (int t = 0; t < 4; t++) {
        give_back(run, (void **)&run->tables[t], run->table_bytes[t]);
    }
    give_back(run, (void **)&run->staging, run->layout.total);
    spart_stager_close(&run->stager);
}

/* A block's entry arrays where the kernels read them: copied into the
 * staging, or the caller's device arrays (checked to be this device's). */
static spart_status place_block_entries(device_run *run, int pass, const spart_weights_block *block,
                                        int64_t n, spart_weights_block *on_device,
                                        cudaError_t *error)
{
    spart_stream_job *job = run->job;
    *on_device = *block;
    on_device->offsets = (const int64_t *)(run->staging + run->layout.entries);
    *error = cudaMemcpyAsync((void *)on_device->offsets, block->offsets,
                             ((size_t)block->num_elements + 1) * sizeof(int64_t),
                             cudaMemcpyHostToDevice, run->stream);
    if (job->stream->blocks_on_device) {
        int device = 0;
        (void)cudaGetDevice(&device);
        const void *arrays[3] = {block->indices_input, block->indices_output, block->values};
        const char *names[3] = {"indices_input", "indices_output", "values"};
        for (int a = 0; a < 3; a++) {
            spart_status status = spart_device_check_pointer(
                job->context, arrays[a], device, "streamed assembly (blocks_on_device)", names[a]);
            if (status != SPART_OK) {
                return status;
            }
        }
        return SPART_OK;
    }
    size_t bytes = (size_t)n * sizeof(int64_t);
    size_t region = run->layout.entries / 3;
    char *base = run->staging;
    on_device->indices_output = (const int64_t *)base;
    on_device->indices_input = (const int64_t *)(base + region);
    on_device->values = (const double *)(base + 2 * region);
    int values_needed = pass == 1 || run->device_tables.drop_zeros;
    const void *from[3] = {block->indices_output, block->indices_input, block->values};
    for (int a = 0; a < 3 && *error == cudaSuccess; a++) {
        if (a == 2 && !values_needed) {
            break;
        }
        *error =
            spart_stager_copy(&run->stager, base + (size_t)a * region, from[a], bytes, run->stream);
    }
    return SPART_OK;
}

/* One pass over every block. */
static spart_status run_pass(device_run *run, int pass, spart_csr *csr)
{
    spart_stream_job *job = run->job;
    job->last_element = -1;
    int64_t *tally_device = (int64_t *)(run->staging + run->layout.entries + run->layout.offsets +
                                        run->layout.sort + run->layout.check);
    void *check = run->staging + run->layout.entries + run->layout.offsets + run->layout.sort;
    spart_device_csr_arrays arrays = {csr->row_ptr, csr->columns32, csr->columns64, csr->values64,
                                      csr->values32};
    for (int64_t b = 0; b < job->stream->num_blocks; b++) {
        spart_weights_block block, on_device;
        int64_t n = 0;
        spart_status status = spart_stream_fetch(job, b, pass, &block, &n);
        if (status != SPART_OK) {
            return status;
        }
        spart_stream_tally tally;
        memset(&tally, 0, sizeof tally);
        tally.first_bad = n;
        if (n > 0) {
            cudaError_t error = cudaSuccess;
            status = place_block_entries(run, pass, &block, n, &on_device, &error);
            if (status != SPART_OK) {
                return status;
            }
            spart_stream_source source = spart_stream_source_of(
                job, &run->device_tables, &on_device, n, job->cells_input, job->cells_output);
            spart_device_sort sort;
            if (error == cudaSuccess) {
                error = (cudaError_t)spart_cuda_first_bad_entry(
                    source.indices_input, source.indices_output, n, job->cells_input,
                    job->cells_output, check, run->layout.check, run->stream);
            }
            if (error == cudaSuccess) {
                error = (cudaError_t)spart_cuda_sort_plan(n, csr->num_rows, 0, &sort);
            }
            if (error == cudaSuccess && sort.workspace_bytes > run->layout.sort) {
                error = cudaErrorInvalidValue; /* cannot happen: planned for the largest block */
            }
            sort.workspace = run->staging + run->layout.entries + run->layout.offsets;
            if (error == cudaSuccess) {
                error = pass == 0 ? (cudaError_t)spart_cuda_stream_count(&source, csr->num_rows,
                                                                         &sort, run->cursor,
                                                                         tally_device, run->stream)
                                  : (cudaError_t)spart_cuda_stream_place(
                                        &source, csr->num_rows, &sort, run->cursor,
                                        csr->num_entries, &arrays, tally_device, run->stream);
            }
            int64_t bad[3] = {n, 0, 0}, counts[2] = {0, 0};
            if (error == cudaSuccess) {
                error =
                    cudaMemcpyAsync(bad, check, sizeof bad, cudaMemcpyDeviceToHost, run->stream);
            }
            if (error == cudaSuccess) {
                error = cudaMemcpyAsync(counts, tally_device, sizeof counts, cudaMemcpyDeviceToHost,
                                        run->stream);
            }
            if (error == cudaSuccess) {
                error = cudaStreamSynchronize(run->stream);
            }
            if (error != cudaSuccess) {
                return spart_device_failure(job->context, (int)error,
                                            "the streamed assembly on the device");
            }
            tally.first_bad = bad[0];
            tally.bad_input = bad[1];
            tally.bad_output = bad[2];
            tally.kept = bad[0] < n ? 0 : counts[0];
            tally.out_of_range = counts[1];
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

/* F(values, count, first_index) on the device, brought back. */
static cudaError_t fingerprint(device_run *run, const int64_t *values, int64_t count,
                               int64_t first_index, uint64_t *result)
{
    *result = 0;
    if (count <= 0) {
        return cudaSuccess;
    }
    void *scratch = run->staging + run->layout.entries + run->layout.offsets;
    uint64_t *answer = (uint64_t *)(run->staging + run->layout.entries + run->layout.offsets +
                                    run->layout.sort + run->layout.check);
    cudaError_t error = (cudaError_t)spart_cuda_stream_fingerprint(
        values, count, first_index, scratch, run->layout.sort, answer, run->stream);
    if (error == cudaSuccess) {
        error =
            cudaMemcpyAsync(result, answer, sizeof *result, cudaMemcpyDeviceToHost, run->stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(run->stream);
    }
    return error;
}

/* A CUDA error as the sentence of the streamed assembly. */
static spart_status failed(spart_stream_job *job, cudaError_t error)
{
    return spart_device_failure(job->context, (int)error, "the streamed assembly on the device");
}

/* The columns and values of csr->num_entries entries. */
static cudaError_t take_entries(device_run *run, spart_value_type value_type, spart_csr *csr)
{
    size_t n = (size_t)csr->num_entries;
    cudaError_t error = csr->num_columns < ((int64_t)1 << 31)
                            ? take(run, n * sizeof(int32_t), (void **)&csr->columns32)
                            : take(run, n * sizeof(int64_t), (void **)&csr->columns64);
    if (error == cudaSuccess) {
        error = value_type == SPART_FLOAT32
                    ? take(run, n * sizeof(float), (void **)&csr->values32)
                    : take(run, n * sizeof(double), (void **)&csr->values64);
    }
    return error;
}

/* Between the passes and after them: the budget for the counted entries,
 * the scan, the entries' arrays, the second pass and its fingerprint. */
static spart_status device_passes(device_run *run, const spart_assembly_source *tables,
                                  spart_value_type value_type, spart_csr *csr)
{
    spart_stream_job *job = run->job;
    int64_t rows = csr->num_rows;
    spart_status status = run_pass(run, 0, csr);
    if (status != SPART_OK) {
        return status;
    }
    int64_t total = 0;
    for (int64_t b = 0; b < job->stream->num_blocks; b++) {
        total += job->block_counts[2 * b + 1];
    }
    spart_stream_bytes parts;
    device_bytes(job, tables, rows, csr->num_columns, value_type, total, &parts);
    char when[96];
    snprintf(when, sizeof when, "for the %lld entries the first pass counted", (long long)total);
    status = spart_stream_check_budget(job, &parts, when);
    if (status != SPART_OK) {
        return status;
    }
    void *scratch = run->staging + run->layout.entries + run->layout.offsets;
    cudaError_t error = (cudaError_t)spart_cuda_stream_scan(run->cursor, rows, scratch,
                                                            run->layout.sort, run->stream);
    uint64_t tail = 0, reached = 0;
    if (error == cudaSuccess) {
        error = fingerprint(run, run->cursor + 2, rows - 1, 1, &tail);
    }
    csr->num_entries = total;
    if (error == cudaSuccess) {
        error = take_entries(run, value_type, csr);
    }
    if (error != cudaSuccess) {
        return failed(job, error);
    }
    status = run_pass(run, 1, csr);
    if (status != SPART_OK) {
        return status;
    }
    error = fingerprint(run, run->cursor + 1, rows, 1, &reached);
    if (error != cudaSuccess) {
        return failed(job, error);
    }
    job->report.num_entries = total;
    job->report.staging_bytes = parts.staging;
    job->report.result_bytes = parts.cursors + parts.entries + parts.plan;
    size_t at_plan = parts.cursors + parts.entries + parts.plan;
    if (at_plan > job->report.peak_bytes) {
        job->report.peak_bytes = at_plan;
    }
    return spart_stream_check_fingerprint(job, spart_stream_expected_fingerprint(tail, rows, total),
                                          reached);
}

static spart_status device_assemble(spart_stream_job *job, const spart_assembly_source *tables,
                                    int64_t cells_input, int64_t cells_output,
                                    spart_value_type value_type, spart_regridder *regridder)
{
    (void)cells_input, (void)cells_output;
    spart_csr *csr = &regridder->csr;
    spart_stream_bytes parts;
    device_bytes(job, tables, csr->num_rows, csr->num_columns, value_type, 0, &parts);
    spart_status status = spart_stream_check_budget(job, &parts, "before the first pass");
    if (status != SPART_OK) {
        return status;
    }
    int device = regridder->device.cuda_device, previous = -1;
    status = spart_device_select(job->context, device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    device_run run;
    memset(&run, 0, sizeof run);
    run.job = job;
    run.stream = spart_device_stream_for(job->context, device);
    job->block_counts = spart_alloc_zero(
        &job->context->allocator, 2 * ((size_t)job->stream->num_blocks + 1), sizeof(int64_t));
    cudaError_t error = layout_staging(job, csr->num_rows, &run.layout);
    if (error == cudaSuccess) {
        error = spart_stager_open(&run.stager, stage_bytes_for(job->stream),
                                  spart_threads(job->context));
    }
    if (error == cudaSuccess) {
        error = take(&run, sizeof(int64_t) * ((size_t)csr->num_rows + 1), (void **)&run.cursor);
    }
    if (error == cudaSuccess) {
        error = cudaMemsetAsync(run.cursor, 0, sizeof(int64_t) * ((size_t)csr->num_rows + 1),
                                run.stream);
    }
    if (error == cudaSuccess) {
        error = upload_tables(&run, tables);
    }
    if (error == cudaSuccess) {
        error = take(&run, run.layout.total, (void **)&run.staging);
    }
    if (job->block_counts == NULL) {
        status = spart_fail(job->context, SPART_ERROR_OUT_OF_MEMORY,
                            "streamed assembly: no host memory for the per-block counts");
    } else if (error != cudaSuccess) {
        status = failed(job, error);
    } else {
        status = device_passes(&run, tables, value_type, csr);
    }
    free_run(&run);
    spart_free(&job->context->allocator, job->block_counts);
    job->block_counts = NULL;
    if (status == SPART_OK) {
        csr->row_ptr = run.cursor;
        error = spart_regridder_plan_on_device(regridder, run.stream);
        cudaError_t finished = cudaStreamSynchronize(run.stream);
        error = error != cudaSuccess ? error : finished;
        if (error != cudaSuccess) {
            status = failed(job, error);
        }
    } else {
        (void)cudaFree(run.cursor);
        (void)cudaFree(csr->columns32);
        (void)cudaFree(csr->columns64);
        (void)cudaFree(csr->values32);
        (void)cudaFree(csr->values64);
        csr->columns32 = NULL;
        csr->columns64 = NULL;
        csr->values32 = NULL;
        csr->values64 = NULL;
    }
    spart_device_leave(previous);
    return status;
}

const spart_stream_ops spart_stream_cuda_ops = {
    .name = "CUDA device",
    .bytes = device_bytes,
    .assemble = device_assemble,
};
