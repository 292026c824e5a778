/*
 * src/operator/regridder_stream.c: spart_regridder_create_streamed and
 * spart_regridder_stream_bytes (include/spart/regridder.h): the checks of
 * the stream, the weights' shell (the stream's shapes, axes and elements,
 * no entries) through which spart_regridder_create's roles and tables are
 * made, the choice of the host or device table (regridder_stream.h), the
 * blocks as the caller's function yields them and their checks, and the
 * budget. The passes themselves are the tables'.
 */
#include <stdio.h>
#include <string.h>

#include "core/shape.h"
#include "device/device_select.h"
#include "operator/regridder_device.h"
#include "operator/regridder_stream.h"
#include "weights/weights_arrays.h"
#include "weights/weights_internal.h"

void spart_weights_stream_init(spart_weights_stream *stream)
{
    if (stream != NULL) {
        memset(stream, 0, sizeof *stream);
    }
}

size_t spart_stream_peak(const spart_stream_bytes *parts)
{
    size_t placing = parts->cursors + parts->tables + parts->staging + parts->entries;
    size_t planning = parts->cursors + parts->entries + parts->plan;
    return placing > planning ? placing : planning;
}

void spart_stream_hold(spart_stream_job *job, size_t bytes)
{
    job->held += bytes;
    if (job->held > job->report.peak_bytes) {
        job->report.peak_bytes = job->held;
    }
}

void spart_stream_release(spart_stream_job *job, size_t bytes)
{
    job->held -= bytes < job->held ? bytes : job->held;
}

size_t spart_stream_table_bytes(const spart_stream_job *job, const spart_assembly_source *tables,
                                int64_t cells_input, int64_t cells_output)
{
    size_t bytes = 2 * sizeof(int64_t) * (size_t)job->num_elements;
    bytes += tables->row_lookup != NULL ? sizeof(int64_t) * (size_t)cells_output : 0;
    bytes += tables->column_lookup != NULL ? sizeof(int64_t) * (size_t)cells_input : 0;
    return bytes + 2 * sizeof(int64_t) * ((size_t)job->stream->num_blocks + 1);
}

spart_status spart_stream_check_budget(spart_stream_job *job, const spart_stream_bytes *parts,
                                       const char *when)
{
    size_t peak = spart_stream_peak(parts);
    if (peak <= job->budget) {
        return SPART_OK;
    }
    return spart_fail(
        job->context, SPART_ERROR_INVALID_ARGUMENT,
        "streamed assembly: the budget of %zu bytes cannot hold what the assembly needs %s: "
        "%zu bytes at its peak (row cursors %zu, assembly tables %zu, one block's staging "
        "%zu for max_block_entries = %lld, the result's columns and values %zu, the plan's "
        "tables %zu)",
        job->budget, when, peak, parts->cursors, parts->tables, parts->staging,
        (long long)job->stream->max_block_entries, parts->entries, parts->plan);
}

/* The element of entry k of a block: first_element + the last j with
 * offsets[j] <= k. */
static int64_t element_of_entry(const spart_weights_block *block, int64_t k)
{
    int64_t low = 0, high = block->num_elements;
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (block->offsets[middle] <= k) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return block->first_element + low;
}

/* The checks of spart_stream_fetch that need only the block. */
static spart_status check_block(spart_stream_job *job, int64_t b, int pass,
                                const spart_weights_block *block, int64_t *num_entries)
{
    spart_context *context = job->context;
    if (block->num_elements < 0 || block->first_element < 0 ||
        block->num_elements > job->num_elements - block->first_element) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: block %lld (pass %d) has first_element = %lld "
                          "and num_elements = %lld, outside the stream's %lld elements",
                          (long long)b, pass, (long long)block->first_element,
                          (long long)block->num_elements, (long long)job->num_elements);
    }
    *num_entries = 0;
    if (block->num_elements == 0) {
        return SPART_OK;
    }
    if (block->offsets == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "streamed assembly: block %lld (pass %d) has %lld elements and "
                          "NULL offsets",
                          (long long)b, pass, (long long)block->num_elements);
    }
    if (block->offsets[0] != 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: block %lld (pass %d) has offsets[0] = %lld; "
                          "a block's offsets start at 0",
                          (long long)b, pass, (long long)block->offsets[0]);
    }
    for (int64_t j = 0; j < block->num_elements; j++) {
        if (block->offsets[j + 1] < block->offsets[j]) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "streamed assembly: block %lld (pass %d) has offsets[%lld] = "
                              "%lld below offsets[%lld] = %lld; offsets must ascend",
                              (long long)b, pass, (long long)(j + 1),
                              (long long)block->offsets[j + 1], (long long)j,
                              (long long)block->offsets[j]);
        }
    }
    *num_entries = block->offsets[block->num_elements];
    if (*num_entries > job->stream->max_block_entries) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: block %lld (pass %d) holds %lld entries, more "
                          "than the stream's max_block_entries = %lld",
                          (long long)b, pass, (long long)*num_entries,
                          (long long)job->stream->max_block_entries);
    }
    if (*num_entries > 0 &&
        (block->indices_input == NULL || block->indices_output == NULL || block->values == NULL)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "streamed assembly: block %lld (pass %d) holds %lld entries but "
                          "indices_input, indices_output or values is NULL",
                          (long long)b, pass, (long long)*num_entries);
    }
    return SPART_OK;
}

spart_status spart_stream_fetch(spart_stream_job *job, int64_t b, int pass,
                                spart_weights_block *result, int64_t *num_entries)
{
    memset(result, 0, sizeof *result);
    *num_entries = 0;
    spart_clear_error(job->context);
    spart_status status = job->stream->function(job->stream->user_data, b, pass, result);
    if (status != SPART_OK) {
        /* the block function's own sentence, when it left one in the
         * context (a spart call of its own that failed, a file reader) */
        char why[SPART_ERROR_LENGTH];
        snprintf(why, sizeof why, "%s", spart_context_error(job->context));
        return spart_fail(job->context, status,
                          "streamed assembly: the block function returned %s for block %lld "
                          "of pass %d%s%s",
                          spart_status_string(status), (long long)b, pass,
                          why[0] != '\0' ? ": " : "", why);
    }
    status = check_block(job, b, pass, result, num_entries);
    if (status != SPART_OK) {
        return status;
    }
    if (*num_entries > 0) {
        int64_t first = element_of_entry(result, 0);
        if (first < job->last_element) {
            return spart_fail(job->context, SPART_ERROR_INVALID_ARGUMENT,
                              "streamed assembly: block %lld (pass %d) starts with an entry of "
                              "element %lld, but an earlier block already had entries of "
                              "element %lld; blocks must follow the elements in order",
                              (long long)b, pass, (long long)first, (long long)job->last_element);
        }
        job->last_element = element_of_entry(result, *num_entries - 1);
    }
    if (pass == 1 && *num_entries != job->block_counts[2 * b]) {
        return spart_fail(job->context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: block %lld holds %lld entries in the second "
                          "pass but held %lld in the first; the block function must yield "
                          "the same block both times",
                          (long long)b, (long long)*num_entries,
                          (long long)job->block_counts[2 * b]);
    }
    if (pass == 0) {
        job->block_counts[2 * b] = *num_entries;
        job->report.num_entries_read += *num_entries;
    }
    return SPART_OK;
}

spart_stream_source spart_stream_source_of(const spart_stream_job *job,
                                           const spart_assembly_source *tables,
                                           const spart_weights_block *block, int64_t num_entries,
                                           int64_t cells_input, int64_t cells_output)
{
    (void)job;
    spart_stream_source source;
    memset(&source, 0, sizeof source);
    source.num_elements = num_entries > 0 ? block->num_elements : 0;
    source.num_entries = num_entries;
    source.offsets = block->offsets;
    source.indices_input = block->indices_input;
    source.indices_output = block->indices_output;
    source.values = block->values;
    source.row_offset = tables->row_offset + block->first_element;
    source.column_offset = tables->column_offset + block->first_element;
    source.row_lookup = tables->row_lookup;
    source.column_lookup = tables->column_lookup;
    source.row_lookup_stride = tables->row_lookup_stride;
    source.column_lookup_stride = tables->column_lookup_stride;
    source.cells_input = cells_input;
    source.cells_output = cells_output;
    source.drop_zeros = tables->drop_zeros;
    return source;
}

spart_status spart_stream_check_tally(spart_stream_job *job, int64_t b, int pass,
                                      const spart_weights_block *result, int64_t num_entries,
                                      const spart_stream_tally *tally)
{
    if (tally->first_bad < num_entries) {
        int64_t k = tally->first_bad;
        int64_t element = element_of_entry(result, k);
        return spart_fail(job->context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: block %lld (pass %d), entry %lld (element %lld): "
                          "indices_input = %lld and indices_output = %lld, which must lie in "
                          "[0, %lld) and [0, %lld)",
                          (long long)b, pass, (long long)k, (long long)element,
                          (long long)tally->bad_input, (long long)tally->bad_output,
                          (long long)job->cells_input, (long long)job->cells_output);
    }
    if (pass == 0) {
        job->block_counts[2 * b + 1] = tally->kept;
        return SPART_OK;
    }
    if (tally->kept != job->block_counts[2 * b + 1] || tally->out_of_range != 0) {
        return spart_fail(job->context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: block %lld keeps %lld entries in the second pass "
                          "but kept %lld in the first%s; the block function must yield the "
                          "same block both times",
                          (long long)b, (long long)tally->kept,
                          (long long)job->block_counts[2 * b + 1],
                          tally->out_of_range != 0 ? ", and rows beyond those counted" : "");
    }
    return SPART_OK;
}

uint64_t spart_stream_expected_fingerprint(uint64_t tail, int64_t num_rows, int64_t num_entries)
{
    return num_rows > 0 ? tail + spart_stream_mix(num_rows, num_entries) : 0;
}

spart_status spart_stream_check_fingerprint(spart_stream_job *job, uint64_t expected,
                                            uint64_t reached)
{
    if (expected == reached) {
        return SPART_OK;
    }
    return spart_fail(job->context, SPART_ERROR_INVALID_ARGUMENT,
                      "streamed assembly: the second pass put entries in other rows than the "
                      "first pass counted (the row pointers' fingerprints differ); the block "
                      "function must yield the same blocks both times");
}

/* ---- the public calls ------------------------------------------------------------------ */

/* The host table or the CUDA device's (none without CUDA). */
static spart_status stream_select(spart_context *context, int on_device,
                                  const spart_stream_ops **ops)
{
    *ops = &spart_stream_host_ops;
    if (!on_device) {
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    *ops = &spart_stream_cuda_ops;
    return spart_device_check_exists(context, context->cuda_device);
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: a streamed assembly cannot run on a device "
                      "(rebuild with -DSPART_ENABLE_CUDA=ON)");
#endif
}

/* The assembly step of spart_regridder_create_by_step: the query's
 * figure, or the table's assembly. */
typedef struct stream_step {
    spart_stream_job *job;
    const spart_stream_ops *ops;
} stream_step;

/* A status the query's step returns to stop the creation after the
 * tables (never seen by a caller). */
#define QUERY_DONE SPART_ERROR_NOT_IMPLEMENTED

static spart_status step_function(spart_context *context, const spart_assembly_source *tables,
                                  int64_t cells_input, int64_t cells_output,
                                  spart_value_type value_type, spart_regridder *regridder,
                                  void *argument)
{
    (void)context;
    stream_step *step = argument;
    spart_stream_job *job = step->job;
    job->cells_input = cells_input;
    job->cells_output = cells_output;
    if (job->query) {
        spart_stream_bytes parts;
        step->ops->bytes(job, tables, regridder->csr.num_rows, regridder->csr.num_columns,
                         value_type, job->query_entries, &parts);
        job->query_bytes = spart_stream_peak(&parts);
        return QUERY_DONE;
    }
    return step->ops->assemble(job, tables, cells_input, cells_output, value_type, regridder);
}

/* The checks that read no block, and the shell of the stream's weights
 * (its shapes, axes and elements; no entries). */
static spart_status check_stream(spart_context *context, const spart_weights_stream *stream,
                                 const spart_regridder_options *options, int on_device,
                                 spart_weights **shell)
{
    *shell = NULL;
    if (stream == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "stream is NULL");
    }
    if (stream->num_blocks < 0 || stream->max_block_entries < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "stream: num_blocks = %lld and max_block_entries = %lld must not be "
                          "negative",
                          (long long)stream->num_blocks, (long long)stream->max_block_entries);
    }
    if (stream->num_blocks > 0 && stream->function == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "stream: function is NULL but num_blocks = %lld",
                          (long long)stream->num_blocks);
    }
    if (stream->blocks_on_device && !on_device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "stream: blocks_on_device is set, but the assembly is on the host "
                          "(on_device = 0), which cannot read device memory");
    }
    spart_shape elements = stream->shape_orthogonal;
    if (!spart_shape_is_valid(&elements)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "stream: shape_orthogonal has an ndim or an extent out of range");
    }
    int64_t num_elements = spart_shape_size(&elements);
    int64_t *zeros =
        spart_alloc_zero(&context->allocator, (size_t)num_elements + 1, sizeof(int64_t));
    if (zeros == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "stream: no memory for the offsets of %lld elements",
                          (long long)num_elements);
    }
    spart_weights_layout layout;
    spart_status status = spart_weights_check_layout(
        context, &stream->shape_orthogonal, &stream->shape_input, &stream->shape_output,
        stream->num_axis_input, stream->axis_input, stream->num_axis_output, stream->axis_output,
        zeros, &layout);
    spart_free(&context->allocator, zeros);
    if (status != SPART_OK) {
        return status;
    }
    *shell = spart_weights_allocate(
        &context->allocator, &stream->shape_orthogonal, &stream->shape_input, &stream->shape_output,
        layout.num_axis_input, layout.axis_input, layout.num_axis_output, layout.axis_output, 0);
    if (*shell == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "stream: out of memory");
    }
    memset((*shell)->offsets, 0, ((size_t)layout.num_elements + 1) * sizeof(int64_t));
    status = spart_regridder_check_options(context, *shell, options);
    if (status != SPART_OK) {
        spart_weights_free(*shell);
        *shell = NULL;
    }
    return status;
}

/* What both calls share: the checks, the shell, the table, the step. */
static spart_status run_stream(spart_context *context, const spart_weights_stream *stream,
                               const spart_regridder_options *options, int on_device,
                               spart_stream_job *job, spart_regridder **regridder)
{
    spart_weights *shell = NULL;
    spart_status status = check_stream(context, stream, options, on_device, &shell);
    const spart_stream_ops *ops = NULL;
    if (status == SPART_OK) {
        status = stream_select(context, on_device, &ops);
    }
    if (status == SPART_OK && shell != NULL) {
        job->context = context;
        job->stream = stream;
        job->num_elements = shell->num_elements;
        job->last_element = -1;
        job->report.budget_bytes = job->budget;
        job->report.num_blocks = stream->num_blocks;
        stream_step step = {job, ops};
        spart_assembly_step assembly = {step_function, &step};
        status = spart_regridder_create_by_step(
            context, shell, options, on_device ? context->cuda_device : -1, &assembly, regridder);
    }
    spart_weights_free(shell);
    return status;
}

spart_status spart_regridder_stream_bytes(spart_context *context,
                                          const spart_weights_stream *stream,
                                          const spart_regridder_options *options, int on_device,
                                          int64_t num_entries, size_t *bytes)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (bytes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "bytes is NULL");
    }
    *bytes = 0;
    if (num_entries < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_entries = %lld must not be negative", (long long)num_entries);
    }
    spart_stream_job job;
    memset(&job, 0, sizeof job);
    job.query = 1;
    job.query_entries = num_entries;
    spart_regridder *made = NULL;
    spart_status status = run_stream(context, stream, options, on_device, &job, &made);
    spart_regridder_free(made);
    if (status == QUERY_DONE && job.query_bytes > 0) {
        spart_clear_error(context);
        *bytes = job.query_bytes;
        return SPART_OK;
    }
    return status;
}

spart_status spart_regridder_create_streamed(spart_context *context,
                                             const spart_weights_stream *stream,
                                             const spart_regridder_options *options, int on_device,
                                             size_t budget_bytes, spart_regridder **regridder,
                                             spart_stream_report *report)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder: the output pointer is NULL");
    }
    *regridder = NULL;
    if (report != NULL) {
        memset(report, 0, sizeof *report);
    }
    spart_stream_job job;
    memset(&job, 0, sizeof job);
    job.budget = budget_bytes;
    spart_status status = run_stream(context, stream, options, on_device, &job, regridder);
    if (status == SPART_OK && report != NULL) {
        *report = job.report;
    }
    return status;
}

spart_status spart_regridder_stream_block_entries(spart_context *context,
                                                  const spart_weights_stream *stream,
                                                  const spart_regridder_options *options,
                                                  int on_device, int64_t num_entries,
                                                  size_t budget_bytes, int64_t *block_entries)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    if (stream == NULL || block_entries == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "stream and block_entries must not be NULL");
    }
    *block_entries = 0;
    spart_weights_stream trial = *stream;
    int64_t low = 1, high = num_entries > 1 ? num_entries : 1;
    size_t bytes = 0;
    trial.max_block_entries = low;
    spart_status status =
        spart_regridder_stream_bytes(context, &trial, options, on_device, num_entries, &bytes);
    if (status != SPART_OK) {
        return status;
    }
    if (bytes > budget_bytes) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "streamed assembly: the budget of %zu bytes cannot hold even blocks of "
                          "one entry for %lld entries: that takes %zu bytes",
                          budget_bytes, (long long)num_entries, bytes);
    }
    /* the bytes grow with the block: the largest block that fits */
    while (low < high) {
        int64_t middle = low + (high - low + 1) / 2;
        trial.max_block_entries = middle;
        status =
            spart_regridder_stream_bytes(context, &trial, options, on_device, num_entries, &bytes);
        if (status != SPART_OK) {
            return status;
        }
        if (bytes <= budget_bytes) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    *block_entries = low;
    return SPART_OK;
}
