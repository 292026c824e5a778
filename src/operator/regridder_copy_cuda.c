/*
 * src/operator/regridder_copy_cuda.c: copies of a regridder between host
 * and device memory (spart_regridder_to_device, spart_regridder_to_host),
 * with the table of long rows the device product needs, and the release
 * of a device regridder's arrays.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_internal.h"
#include "device/device_select.h"
#include "operator/regridder_cuda.h"
#include "spart/device.h"

/* The long-row table of a matrix (rows of more than chunk_length entries)
 * in one host array: long_rows, long_first_chunk, chunk_begin, chunk_end
 * (see spart_regridder_device). *table is NULL when no row is long. */
static spart_status make_long_table(spart_context *context, const int64_t *row_ptr,
                                    int64_t num_rows, int64_t chunk_length, int64_t **table,
                                    int64_t *num_long_rows, int64_t *num_long_chunks)
{
    int64_t rows = 0, chunks = 0;
    for (int64_t r = 0; r < num_rows; r++) {
        int64_t length = row_ptr[r + 1] - row_ptr[r];
        if (length > chunk_length) {
            rows++;
            chunks += (length + chunk_length - 1) / chunk_length;
        }
    }
    *table = NULL;
    *num_long_rows = rows;
    *num_long_chunks = chunks;
    if (rows == 0) {
        return SPART_OK;
    }
    int64_t *made =
        spart_alloc(&context->allocator, (size_t)(2 * rows + 1 + 2 * chunks), sizeof(int64_t));
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "to_device: could not allocate the table of %lld long rows",
                          (long long)rows);
    }
    int64_t *long_rows = made, *first_chunk = made + rows;
    int64_t *chunk_begin = first_chunk + rows + 1, *chunk_end = chunk_begin + chunks;
    int64_t row = 0, chunk = 0;
    for (int64_t r = 0; r < num_rows; r++) {
        int64_t begin = row_ptr[r], end = row_ptr[r + 1];
        if (end - begin <= chunk_length) {
            continue;
        }
        long_rows[row] = r;
        first_chunk[row++] = chunk;
        for (int64_t start = begin; start < end; start += chunk_length, chunk++) {
            chunk_begin[chunk] = start;
            chunk_end[chunk] = end - start > chunk_length ? start + chunk_length : end;
        }
    }
    first_chunk[rows] = chunks;
    *table = made;
    return SPART_OK;
}

/* Allocate `bytes` on the device or the host (never zero bytes) and copy
 * `source` (host or device memory) into it on `stream`. */
static spart_status copy_array(spart_context *context, const void *source, size_t bytes,
                               int to_device, cudaStream_t stream, void **result)
{
    *result = NULL;
    size_t size = bytes > 0 ? bytes : 1;
    if (to_device) {
        cudaError_t error = cudaMalloc(result, size);
        if (error != cudaSuccess) {
            *result = NULL;
            return spart_device_failure(context, (int)error, "copying a regridder: cudaMalloc");
        }
    } else {
        *result = spart_alloc(&context->allocator, size, 1);
        if (*result == NULL) {
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                              "copying a regridder: could not allocate %zu bytes", size);
        }
    }
    if (bytes > 0) {
        cudaError_t error = cudaMemcpyAsync(*result, source, bytes, cudaMemcpyDefault, stream);
        if (error != cudaSuccess) {
            return spart_device_failure(context, (int)error,
                                        "copying a regridder: cudaMemcpyAsync");
        }
    }
    return SPART_OK;
}

/* Free what a partly or fully made copy holds, wherever it lives. */
static void release_copy(spart_regridder *made)
{
    made->ops->release(made);
    spart_free(&made->allocator, made);
}

/* The device regridder's long-row table, from the source's row pointers
 * (copied to the host first when they live on a device). */
static spart_status copy_long_table(spart_context *context, const spart_regridder *source,
                                    spart_regridder *made, cudaStream_t stream)
{
    const spart_csr *csr = &source->csr;
    const int64_t *row_ptr = csr->row_ptr;
    int64_t *host_row_ptr = NULL;
    size_t row_bytes = (size_t)(csr->num_rows + 1) * sizeof(int64_t);
    spart_status status = SPART_OK;
    if (source->ops->on_device) {
        status = copy_array(context, row_ptr, row_bytes, 0, stream, (void **)&host_row_ptr);
        cudaError_t error = status == SPART_OK ? cudaStreamSynchronize(stream) : cudaSuccess;
        if (error != cudaSuccess) {
            status =
                spart_device_failure(context, (int)error, "copying a regridder's row pointers");
        }
        row_ptr = host_row_ptr;
    }
    int64_t *table = NULL;
    spart_regridder_device *device = &made->device;
    if (status == SPART_OK) {
        status = make_long_table(context, row_ptr, csr->num_rows, source->plan.chunk_length, &table,
                                 &device->num_long_rows, &device->num_long_chunks);
    }
    if (status == SPART_OK && table != NULL) {
        int64_t rows = device->num_long_rows, chunks = device->num_long_chunks;
        size_t bytes = (size_t)(2 * rows + 1 + 2 * chunks) * sizeof(int64_t);
        status = copy_array(context, table, bytes, 1, stream, (void **)&device->long_table);
        if (status == SPART_OK) {
            device->long_rows = device->long_table;
            device->long_first_chunk = device->long_rows + rows;
            device->chunk_begin = device->long_first_chunk + rows + 1;
            device->chunk_end = device->chunk_begin + chunks;
            /* The host table must outlive the copy from it. */
            cudaError_t error = cudaStreamSynchronize(stream);
            if (error != cudaSuccess) {
                status = spart_device_failure(context, (int)error, "copying the long-row table");
            }
        }
    }
    spart_free(&context->allocator, table);
    spart_free(&context->allocator, host_row_ptr);
    return status;
}

/* The CSR arrays of `source` copied into `made`. */
static spart_status copy_csr(spart_context *context, const spart_csr *source, spart_csr *made,
                             int to_device, cudaStream_t stream)
{
    size_t rows = (size_t)source->num_rows + 1, entries = (size_t)source->num_entries;
    spart_status status = copy_array(context, source->row_ptr, rows * sizeof(int64_t), to_device,
                                     stream, (void **)&made->row_ptr);
    if (status == SPART_OK && source->columns32 != NULL) {
        status = copy_array(context, source->columns32, entries * sizeof(int32_t), to_device,
                            stream, (void **)&made->columns32);
    } else if (status == SPART_OK) {
        status = copy_array(context, source->columns64, entries * sizeof(int64_t), to_device,
                            stream, (void **)&made->columns64);
    }
    if (status == SPART_OK && source->values32 != NULL) {
        status = copy_array(context, source->values32, entries * sizeof(float), to_device, stream,
                            (void **)&made->values32);
    } else if (status == SPART_OK) {
        status = copy_array(context, source->values64, entries * sizeof(double), to_device, stream,
                            (void **)&made->values64);
    }
    return status;
}

/* A copy of `source` (host or device) in device memory of the context's
 * device (to_device) or in host memory. */
static spart_status copy_regridder(spart_context *context, const spart_regridder *source,
                                   int to_device, spart_regridder **result)
{
    *result = NULL;
    int cuda_device = to_device ? context->cuda_device : source->device.cuda_device;
    spart_status status = spart_device_check_exists(context, cuda_device);
    if (status != SPART_OK) {
        return status;
    }
    int previous = -1;
    status = spart_device_select(context, cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    /* The context's stream belongs to the context's device. */
    cudaStream_t stream =
        cuda_device == context->cuda_device ? (cudaStream_t)context->cuda_stream : 0;
    spart_regridder *made = spart_alloc(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        spart_device_leave(previous);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "copying a regridder: out of memory");
    }
    *made = *source;
    made->allocator = context->allocator;
    made->owns_arrays = 1;
    made->owner = NULL;
    made->transposed = NULL;
    made->conservative = NULL;
    made->short_row_lengths = NULL; /* the source's, not the copy's (made again below) */
    made->short_row_starts = NULL;
    made->plan.row_lengths = NULL;
    made->plan.block_starts = NULL;
    memset(&made->csr, 0, sizeof made->csr);
    made->csr.num_rows = source->csr.num_rows;
    made->csr.num_columns = source->csr.num_columns;
    made->csr.num_entries = source->csr.num_entries;
    memset(&made->device, 0, sizeof made->device);
    made->ops = spart_operator_ops_for(to_device ? cuda_device : -1);
    made->device.cuda_device = to_device ? cuda_device : 0;
    status = copy_csr(context, &source->csr, &made->csr, to_device, stream);
    if (status == SPART_OK && to_device) {
        status = copy_long_table(context, source, made, stream);
    }
    if (status == SPART_OK && to_device) {
        cudaError_t error = spart_regridder_index_rows_on_device(made, stream);
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, "indexing a regridder's short rows");
        }
    }
    if (status == SPART_OK) {
        cudaError_t error = cudaStreamSynchronize(stream);
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, "copying a regridder");
        }
    }
    if (status != SPART_OK) {
        (void)cudaStreamSynchronize(stream); /* no copy may still write into what is freed */
        release_copy(made);
    } else {
        made->ops->index_rows(made, spart_threads(context)); /* a host copy's */
        *result = made;
    }
    spart_device_leave(previous);
    return status;
}

static spart_status check_copy_arguments(spart_context *context, const spart_regridder *regridder,
                                         spart_regridder **result)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || result == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "the regridder and the result pointer must not be NULL");
    }
    *result = NULL;
    return SPART_OK;
}

spart_status spart_regridder_to_device(spart_context *context, const spart_regridder *regridder,
                                       spart_regridder **device)
{
    spart_status status = check_copy_arguments(context, regridder, device);
    return status == SPART_OK ? copy_regridder(context, regridder, 1, device) : status;
}

spart_status spart_regridder_to_host(spart_context *context, const spart_regridder *regridder,
                                     spart_regridder **host)
{
    spart_status status = check_copy_arguments(context, regridder, host);
    return status == SPART_OK ? copy_regridder(context, regridder, 0, host) : status;
}

void spart_regridder_release_on_device(spart_regridder *regridder)
{
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) {
        previous = -1;
    } else if (previous != regridder->device.cuda_device) {
        (void)cudaSetDevice(regridder->device.cuda_device);
    }
    spart_csr *csr = &regridder->csr;
    /* A conservative transpose owns its values only: the pattern and the
     * long-row table are its exact transpose's. */
    if (regridder->owns_arrays) {
        (void)cudaFree(csr->row_ptr);
        (void)cudaFree(csr->columns32);
        (void)cudaFree(csr->columns64);
        (void)cudaFree(regridder->device.long_table);
        (void)cudaFree(regridder->device.short_row_lengths);
        (void)cudaFree(regridder->device.short_row_starts);
        (void)cudaFree(regridder->device.bin_rows);
    }
    (void)cudaFree(csr->values64);
    (void)cudaFree(csr->values32);
    memset(csr, 0, sizeof *csr);
    memset(&regridder->device, 0, sizeof regridder->device);
    spart_device_leave(previous);
}
