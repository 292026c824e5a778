/*
 * src/operator/regridder_build_cuda.c: device regridders built on the
 * device: assembly from weights (kernels/csr_assemble.cu) with the plan
 * of the product (long-row table, short-row index), and the exact and
 * conservative transposes (kernels/csr_transpose.cu).
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_internal.h"
#include "device/device_select.h"
#include "device/upload_cuda.h"
#include "operator/regridder_cuda.h"
#include "spart/device.h"

/* Copies of large host arrays to the device go through the pinned stages
 * of src/device/upload_cuda.h: STAGE_BYTES each, and only for copies of
 * STAGED_COPY_MIN_BYTES or more in all (pinning costs about 25 ms for two
 * buffers of 32 MiB; staged copies run at about 55 GB/s on an H200's host
 * against 8 GB/s from pageable memory, measured by bench_cuda_assembly). */
#define STAGE_BYTES ((size_t)32 << 20)
#define STAGED_COPY_MIN_BYTES ((size_t)256 << 20)

/* cudaMalloc of count * size bytes (at least one) for a regridder's array. */
cudaError_t spart_device_allocate_array(size_t count, size_t size, void **array)
{
    size_t bytes = count * size;
    cudaError_t error = cudaMalloc(array, bytes > 0 ? bytes : 1);
    if (error != cudaSuccess) {
        *array = NULL;
    }
    return error;
}

/* Columns (int32 below 2^31 columns) and values of a CSR matrix in device
 * memory, with num_entries and num_columns set. */
static cudaError_t spart_device_allocate_entries(spart_csr *csr, spart_value_type value_type)
{
    size_t n = (size_t)csr->num_entries;
    cudaError_t error =
        csr->num_columns < ((int64_t)1 << 31)
            ? spart_device_allocate_array(n, sizeof(int32_t), (void **)&csr->columns32)
            : spart_device_allocate_array(n, sizeof(int64_t), (void **)&csr->columns64);
    if (error == cudaSuccess) {
        error = value_type == SPART_FLOAT32
                    ? spart_device_allocate_array(n, sizeof(float), (void **)&csr->values32)
                    : spart_device_allocate_array(n, sizeof(double), (void **)&csr->values64);
    }
    return error;
}

static spart_device_csr_arrays arrays_of(const spart_csr *csr)
{
    spart_device_csr_arrays arrays;
    arrays.row_ptr = csr->row_ptr;
    arrays.columns32 = csr->columns32;
    arrays.columns64 = csr->columns64;
    arrays.values64 = csr->values64;
    arrays.values32 = csr->values32;
    return arrays;
}

/* The plan of a device matrix and its long-row table, made on the device;
 * two numbers (the long rows and their chunks) come back to the host, to
 * size the table. */
cudaError_t spart_regridder_plan_on_device(spart_regridder *regridder, cudaStream_t stream)
{
    regridder->plan = spart_plan_product_by_rule(&regridder->csr, regridder->plan.row_rule);
    spart_regridder_device *device = &regridder->device;
    int64_t rows = regridder->csr.num_rows, chunk_length = regridder->plan.chunk_length;
    size_t bytes = 0;
    void *workspace = NULL;
    int64_t totals[2] = {0, 0};
    cudaError_t error = (cudaError_t)spart_cuda_long_rows_workspace(rows, &bytes);
    if (error == cudaSuccess) {
        error = cudaMallocAsync(&workspace, bytes, stream);
    }
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_long_rows_count(regridder->csr.row_ptr, rows, chunk_length,
                                                        workspace, bytes, stream);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(totals, workspace, sizeof totals, cudaMemcpyDeviceToHost, stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    if (error == cudaSuccess && totals[0] > 0) {
        size_t table = (size_t)(2 * totals[0] + 1 + 2 * totals[1]);
        error = spart_device_allocate_array(table, sizeof(int64_t), (void **)&device->long_table);
        if (error == cudaSuccess) {
            device->num_long_rows = totals[0];
            device->num_long_chunks = totals[1];
            device->long_rows = device->long_table;
            device->long_first_chunk = device->long_rows + totals[0];
            device->chunk_begin = device->long_first_chunk + totals[0] + 1;
            device->chunk_end = device->chunk_begin + totals[1];
            error = (cudaError_t)spart_cuda_long_rows_fill(regridder->csr.row_ptr, rows,
                                                           chunk_length, workspace, totals[0],
                                                           totals[1], device->long_table, stream);
        }
    }
    spart_device_discard(&workspace, stream);
    if (error == cudaSuccess) {
        error = spart_regridder_index_rows_on_device(regridder, stream);
    }
    return error;
}

/* The device short-row index of a device matrix (see
 * spart_device_short_rows), made on the device from its row pointers
 * where the plan has g <= 2 and no row is long; kept only when no row
 * holds more than 255 entries, which one int brought back says (the
 * stream is waited for). The index is optional: without device memory
 * for it, the matrix goes without. */
cudaError_t spart_regridder_index_rows_on_device(spart_regridder *regridder, cudaStream_t stream)
{
    spart_regridder_device *device = &regridder->device;
    int64_t rows = regridder->csr.num_rows;
    if (regridder->plan.row_rule == SPART_PLAN_BY_ROW) {
        return spart_regridder_bin_rows_on_device(regridder, stream); /* bins, no index */
    }
    if (rows == 0 || regridder->plan.group_size > 2 || device->num_long_rows > 0) {
        return cudaSuccess;
    }
    int64_t blocks = (rows + SPART_DEVICE_SHORT_ROW_BLOCK - 1) / SPART_DEVICE_SHORT_ROW_BLOCK;
    uint8_t *lengths = NULL;
    int64_t *starts = NULL;
    int *flags = NULL;
    int too_long = 1;
    cudaError_t error =
        cudaMalloc((void **)&lengths, (size_t)blocks * SPART_DEVICE_SHORT_ROW_BLOCK);
    if (error == cudaSuccess) {
        error = cudaMalloc((void **)&starts, (size_t)blocks * sizeof(int64_t));
    }
    if (error == cudaSuccess) {
        error =
            cudaMallocAsync((void **)&flags, SPART_DEVICE_SHORT_ROW_FLAGS * sizeof(int), stream);
    }
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_short_rows_index(regridder->csr.row_ptr, rows, lengths,
                                                         starts, flags, stream);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(&too_long, flags + SPART_DEVICE_SHORT_ROW_FLAGS - 1, sizeof(int),
                                cudaMemcpyDeviceToHost, stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    if (flags != NULL) {
        (void)cudaFreeAsync(flags, stream);
    }
    if (error == cudaSuccess && !too_long) {
        device->short_row_lengths = lengths;
        device->short_row_starts = starts;
        return cudaSuccess;
    }
    (void)cudaFree(lengths);
    (void)cudaFree(starts);
    if (error == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* no room for the index: go without it */
        return cudaSuccess;
    }
    return error;
}

/* The host's assembly source as the kernels read it, its arrays uploaded
 * into scratch[] (offsets, indices_output, values, row_offset, row_lookup,
 * indices_input, column_offset, column_lookup). */
enum {
    SCRATCH_OFFSETS,
    SCRATCH_INDICES_OUTPUT,
    SCRATCH_VALUES,
    SCRATCH_ROW_OFFSET,
    SCRATCH_ROW_LOOKUP,
    SCRATCH_INDICES_INPUT,
    SCRATCH_COLUMN_OFFSET,
    SCRATCH_COLUMN_LOOKUP,
    SCRATCH_COUNT
};

static cudaError_t upload_source(const spart_assembly_source *source, int64_t cells_input,
                                 int64_t cells_output, spart_stager *staging, cudaStream_t stream,
                                 void **scratch, spart_device_assembly_source *on_device)
{
    size_t elements = (size_t)source->num_elements;
    size_t entries = (size_t)source->offsets[source->num_elements];
    const void *from[SCRATCH_COUNT] = {
        source->offsets,    source->indices_output, source->values,        source->row_offset,
        source->row_lookup, source->indices_input,  source->column_offset, source->column_lookup};
    const size_t counts[SCRATCH_COUNT] = {
        elements + 1,         entries, entries,  elements,
        (size_t)cells_output, entries, elements, (size_t)cells_input};
    cudaError_t error = cudaSuccess;
    spart_device_entries *resident = source->device_entries;
    if (resident != NULL && !resident->borrowed) {
        /* Taken over: freed with the rest of the scratch. */
        scratch[SCRATCH_INDICES_OUTPUT] = resident->indices_output;
        scratch[SCRATCH_VALUES] = resident->values;
        scratch[SCRATCH_INDICES_INPUT] = resident->indices_input;
        memset(resident, 0, sizeof *resident);
    }
    for (int a = 0; a < SCRATCH_COUNT && error == cudaSuccess; a++) {
        /* int64 or double; the entry arrays staged, the small tables not */
        int per_entry =
            a == SCRATCH_INDICES_OUTPUT || a == SCRATCH_VALUES || a == SCRATCH_INDICES_INPUT;
        if (per_entry && resident != NULL) {
            continue;
        }
        error = spart_device_upload(per_entry ? staging : NULL, from[a], counts[a], 8, stream,
                                    &scratch[a]);
    }
    memset(on_device, 0, sizeof *on_device);
    on_device->num_elements = source->num_elements;
    on_device->num_entries = (int64_t)entries;
    on_device->offsets = scratch[SCRATCH_OFFSETS];
    on_device->indices_output = scratch[SCRATCH_INDICES_OUTPUT];
    on_device->values = scratch[SCRATCH_VALUES];
    on_device->row_offset = scratch[SCRATCH_ROW_OFFSET];
    on_device->row_lookup = scratch[SCRATCH_ROW_LOOKUP];
    on_device->indices_input = scratch[SCRATCH_INDICES_INPUT];
    on_device->column_offset = scratch[SCRATCH_COLUMN_OFFSET];
    on_device->column_lookup = scratch[SCRATCH_COLUMN_LOOKUP];
    on_device->row_lookup_stride = source->row_lookup_stride;
    on_device->column_lookup_stride = source->column_lookup_stride;
    on_device->drop_zeros = source->drop_zeros;
    if (resident != NULL && resident->borrowed) {
        /* The caller's arrays, read in place: never in the scratch, so
         * never freed here. */
        on_device->indices_output = resident->indices_output;
        on_device->values = resident->values;
        on_device->indices_input = resident->indices_input;
    }
    return error;
}

/* The bytes of the stager's buffers for an assembly (0: plain copies). */
static size_t stage_bytes_for(const spart_assembly_source *source,
                              const spart_device_assembly_options *options)
{
    if (source->device_entries != NULL) {
        return 0; /* the entries are on the device already */
    }
    if (options != NULL && options->stage_bytes > 0) {
        return options->stage_bytes;
    }
    size_t entry_bytes = 3 * 8 * (size_t)source->offsets[source->num_elements];
    return entry_bytes >= STAGED_COPY_MIN_BYTES ? STAGE_BYTES : 0;
}

/* The assembly's launches and copies on `stream` (see spart_device_csr_assemble). */
static cudaError_t assemble_on_stream(const spart_assembly_source *source, int64_t cells_input,
                                      int64_t cells_output, spart_value_type value_type,
                                      const spart_device_assembly_options *options, int threads,
                                      spart_regridder *regridder, cudaStream_t stream)
{
    spart_csr *csr = &regridder->csr;
    void *scratch[SCRATCH_COUNT] = {NULL};
    spart_device_assembly_source on_device;
    memset(&on_device, 0, sizeof on_device);
    spart_device_sort sort;
    memset(&sort, 0, sizeof sort);
    spart_stager staging;
    cudaError_t error = spart_stager_open(&staging, stage_bytes_for(source, options), threads);
    if (error == cudaSuccess) {
        error =
            upload_source(source, cells_input, cells_output, &staging, stream, scratch, &on_device);
    }
    spart_stager_close(&staging);
    if (error == cudaSuccess) {
        int wide_sort = options != NULL && options->wide_sort;
        error = (cudaError_t)spart_cuda_sort_plan(on_device.num_entries, csr->num_rows, wide_sort,
                                                  &sort);
    }
    if (error == cudaSuccess) {
        error = cudaMallocAsync(&sort.workspace, sort.workspace_bytes, stream);
    }
    if (error == cudaSuccess) {
        error = spart_device_allocate_array((size_t)csr->num_rows + 1, sizeof(int64_t),
                                            (void **)&csr->row_ptr);
    }
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_assemble_sort(&on_device, csr->num_rows, &sort,
                                                      csr->row_ptr, stream);
    }
    /* What only the rows needed goes before the placement's arrays come. */
    spart_device_discard(&scratch[SCRATCH_INDICES_OUTPUT], stream);
    spart_device_discard(&scratch[SCRATCH_ROW_OFFSET], stream);
    spart_device_discard(&scratch[SCRATCH_ROW_LOOKUP], stream);
    csr->num_entries = on_device.num_entries;
    if (error == cudaSuccess && source->drop_zeros) {
        error = cudaMemcpyAsync(&csr->num_entries, csr->row_ptr + csr->num_rows, sizeof(int64_t),
                                cudaMemcpyDeviceToHost, stream);
        if (error == cudaSuccess) {
            error = cudaStreamSynchronize(stream);
        }
    }
    if (error == cudaSuccess) {
        error = spart_device_allocate_entries(csr, value_type);
    }
    if (error == cudaSuccess) {
        spart_device_csr_arrays arrays = arrays_of(csr);
        error = (cudaError_t)spart_cuda_assemble_place(&on_device, &sort, csr->num_entries, &arrays,
                                                       stream);
    }
    spart_device_discard(&sort.workspace, stream);
    for (int a = 0; a < SCRATCH_COUNT; a++) {
        spart_device_discard(&scratch[a], stream);
    }
    if (error == cudaSuccess) {
        error = spart_regridder_plan_on_device(regridder, stream);
    }
    cudaError_t finished = cudaStreamSynchronize(stream);
    return error != cudaSuccess ? error : finished;
}

spart_status spart_device_csr_assemble(spart_context *context, const spart_assembly_source *source,
                                       int64_t cells_input, int64_t cells_output,
                                       spart_value_type value_type,
                                       const spart_device_assembly_options *options,
                                       spart_regridder *regridder)
{
    int device = regridder->device.cuda_device, previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    cudaError_t error = assemble_on_stream(source, cells_input, cells_output, value_type, options,
                                           spart_threads(context), regridder,
                                           spart_device_stream_for(context, device));
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error, "assembling a regridder on the device");
    }
    return SPART_OK;
}

/* The exact transpose's launches on `stream` (see spart_device_csr_transpose). */
static cudaError_t transpose_on_stream(const spart_regridder *regridder, int wide_sort,
                                       spart_regridder *transposed, cudaStream_t stream)
{
    const spart_csr *csr = &regridder->csr;
    spart_csr *made = &transposed->csr;
    made->num_rows = csr->num_columns;
    made->num_columns = csr->num_rows;
    made->num_entries = csr->num_entries;
    spart_device_csr matrix = spart_regridder_device_matrix(regridder);
    spart_device_sort sort;
    memset(&sort, 0, sizeof sort);
    cudaError_t error =
        (cudaError_t)spart_cuda_sort_plan(csr->num_entries, csr->num_columns, wide_sort, &sort);
    if (error == cudaSuccess) {
        error = cudaMallocAsync(&sort.workspace, sort.workspace_bytes, stream);
    }
    if (error == cudaSuccess) {
        error = spart_device_allocate_array((size_t)made->num_rows + 1, sizeof(int64_t),
                                            (void **)&made->row_ptr);
    }
    if (error == cudaSuccess) {
        error = spart_device_allocate_entries(made, csr->values32 != NULL ? SPART_FLOAT32
                                                                          : SPART_FLOAT64);
    }
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_transpose_sort(&matrix, &sort, made->row_ptr, stream);
    }
    if (error == cudaSuccess) {
        spart_device_csr_arrays arrays = arrays_of(made);
        error = (cudaError_t)spart_cuda_transpose_place(&matrix, &sort, &arrays, stream);
    }
    spart_device_discard(&sort.workspace, stream);
    if (error == cudaSuccess) {
        error = spart_regridder_plan_on_device(transposed, stream);
    }
    cudaError_t finished = cudaStreamSynchronize(stream);
    return error != cudaSuccess ? error : finished;
}

spart_status spart_device_csr_transpose(spart_context *context, const spart_regridder *regridder,
                                        int wide_sort, spart_regridder *transposed)
{
    int device = regridder->device.cuda_device, previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    transposed->ops = spart_operator_cuda_ops();
    transposed->device.cuda_device = device;
    cudaError_t error = transpose_on_stream(regridder, wide_sort, transposed,
                                            spart_device_stream_for(context, device));
    if (error != cudaSuccess) {
        spart_regridder_release_on_device(transposed);
    }
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error, "the exact transpose on the device");
    }
    return SPART_OK;
}

/* One side of the decoder: the resampled axes, and the orthogonal axes
 * whose grid index this side holds (source[k] == side, grid_stride[k] >
 * 0; the others add nothing to the grid index). */
static spart_device_side_decoder side_decoder(const spart_axis_map *map, const int *resampled,
                                              int num_resampled, const int *orthogonal_axes,
                                              int num_orthogonal, const int *source, int side,
                                              const int64_t *grid_stride)
{
    spart_device_side_decoder result;
    memset(&result, 0, sizeof result);
    result.num_resampled = num_resampled;
    for (int a = 0; a < num_resampled; a++) {
        result.resampled_extent[a] = map->shape.dims[resampled[a]];
        result.resampled_stride[a] = map->matrix_stride[resampled[a]];
    }
    for (int k = 0; k < num_orthogonal; k++) {
        if (source[k] == side && grid_stride[k] != 0) {
            int axis = orthogonal_axes[k], n = result.num_orthogonal++;
            result.orthogonal_extent[n] = map->shape.dims[axis];
            result.orthogonal_stride[n] = map->matrix_stride[axis];
            result.grid_stride[n] = grid_stride[k];
        }
    }
    return result;
}

/* The conservative values' launches on `stream`: made's values from
 * exact's. */
static cudaError_t conservative_on_stream(const spart_regridder *exact,
                                          const spart_device_entry_decoder *decoder,
                                          int64_t num_grids, const double *factor_input,
                                          const double *volume_output, spart_regridder *made,
                                          cudaStream_t stream)
{
    void *factor = NULL, *volume = NULL;
    size_t n = (size_t)made->csr.num_entries;
    cudaError_t error =
        exact->csr.values32 != NULL
            ? spart_device_allocate_array(n, sizeof(float), (void **)&made->csr.values32)
            : spart_device_allocate_array(n, sizeof(double), (void **)&made->csr.values64);
    if (error == cudaSuccess) {
        error = spart_device_upload(NULL, factor_input, (size_t)(num_grids * decoder->cells_input),
                                    sizeof(double), stream, &factor);
    }
    if (error == cudaSuccess) {
        error =
            spart_device_upload(NULL, volume_output, (size_t)(num_grids * decoder->cells_output),
                                sizeof(double), stream, &volume);
    }
    if (error == cudaSuccess) {
        spart_device_csr matrix = spart_regridder_device_matrix(exact);
        error = (cudaError_t)spart_cuda_conservative_values(
            &matrix, decoder, factor, volume, made->csr.values64, made->csr.values32, stream);
    }
    spart_device_discard(&factor, stream);
    spart_device_discard(&volume, stream);
    cudaError_t finished = cudaStreamSynchronize(stream);
    return error != cudaSuccess ? error : finished;
}

spart_status spart_device_transpose_conservative(
    spart_context *context, const spart_regridder *exact, const int *source,
    const int64_t *grid_stride, int64_t num_grids, int64_t cells_input, int64_t cells_output,
    const double *factor_input, const double *volume_output, spart_regridder *conservative)
{
    const spart_regridder *forward = conservative->owner;
    const spart_regridder_roles *roles = &forward->roles;
    spart_device_entry_decoder decoder;
    decoder.input =
        side_decoder(&forward->input, roles->axes_input, roles->num_resampled_input,
                     roles->orthogonal_input, roles->num_orthogonal, source, 1, grid_stride);
    decoder.output =
        side_decoder(&forward->output, roles->axes_output, roles->num_resampled_output,
                     roles->orthogonal_output, roles->num_orthogonal, source, 2, grid_stride);
    decoder.cells_input = cells_input;
    decoder.cells_output = cells_output;
    int device = forward->device.cuda_device, previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    cudaError_t error =
        conservative_on_stream(exact, &decoder, num_grids, factor_input, volume_output,
                               conservative, spart_device_stream_for(context, device));
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return spart_device_failure(context, (int)error,
                                    "the conservative transpose on the device");
    }
    return SPART_OK;
}
