/*
 * src/operator/regridder_device.c: the C side of device regridders. The context's
 * CUDA device and stream; copying a regridder to and from device memory
 * (with the table of long rows the device product needs); assembling one
 * on the device from weights, and its exact and conservative transposes
 * (kernels/csr_assemble.cu, kernels/csr_transpose.cu); checking that
 * pointers are device memory; and a product's launches: one launch for
 * one vector or for vectors one after the other (leading axes), with x
 * first copied into tiles of 8 interleaved vectors for a large batch
 * (x_tiles_needed); pack x into interleaved vectors, multiply, unpack y
 * where batch axes are declared (kernels/csr_product.cu).
 *
 * Built without CUDA (no SPART_HAVE_CUDA), every entry point says
 * SPART_ERROR_NO_DEVICE and a device regridder cannot exist.
 */
#include <string.h>

#ifdef SPART_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "device/device_internal.h"
#include "device/device_select.h"
#endif

#include "operator/regridder_device.h"
#include "operator/regridder_internal.h"
#include "spart/device.h"

spart_status spart_require_host(spart_context *context, const spart_regridder *regridder,
                                const char *what)
{
    if (regridder != NULL && regridder->device.on_device) {
        return spart_fail(context, SPART_ERROR_NOT_IMPLEMENTED,
                          "%s needs the regridder in host memory, but it lives on CUDA device %d "
                          "(copy it with spart_regridder_to_host)",
                          what, regridder->device.cuda_device);
    }
    return SPART_OK;
}

int spart_regridder_cuda_device(const spart_regridder *regridder)
{
    return regridder != NULL && regridder->device.on_device ? regridder->device.cuda_device : -1;
}

static spart_status check_create_arguments(spart_context *context, const spart_weights *weights,
                                           spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (weights == NULL || regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "weights and regridder must not be NULL");
    }
    *regridder = NULL;
    return SPART_OK;
}

#ifndef SPART_HAVE_CUDA

static spart_status no_cuda(spart_context *context)
{
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: no device work is possible (reconfigure "
                      "with the CUDA Toolkit and -DSPART_ENABLE_CUDA=ON)");
}

spart_status spart_context_set_cuda_device(spart_context *context, int device)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (device < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "device = %d: CUDA devices are numbered from 0", device);
    }
    return no_cuda(context);
}

spart_status spart_context_set_cuda_stream(spart_context *context, void *stream)
{
    (void)stream;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    return no_cuda(context);
}

spart_status spart_regridder_to_device(spart_context *context, const spart_regridder *regridder,
                                       spart_regridder **device)
{
    (void)regridder;
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (device != NULL) {
        *device = NULL;
    }
    return no_cuda(context);
}

spart_status spart_regridder_to_host(spart_context *context, const spart_regridder *regridder,
                                     spart_regridder **host)
{
    return spart_regridder_to_device(context, regridder, host);
}

void spart_device_release(spart_regridder *regridder)
{
    (void)regridder; /* never on a device without CUDA */
}

size_t spart_device_workspace_bytes(const spart_regridder *regridder, int64_t num_vectors)
{
    (void)regridder;
    (void)num_vectors;
    return 0;
}

spart_status spart_device_product(spart_context *context, const spart_regridder *regridder,
                                  const spart_array *x, double *y, int64_t size_y,
                                  int64_t num_leading, int64_t num_vectors, void *workspace,
                                  size_t workspace_bytes, int workspace_is_ours)
{
    (void)regridder, (void)x, (void)y, (void)size_y, (void)num_leading, (void)num_vectors;
    (void)workspace, (void)workspace_bytes, (void)workspace_is_ours;
    return no_cuda(context);
}

spart_status spart_device_apply(spart_context *context, const spart_regridder *regridder,
                                const spart_array *x, double *y, int64_t size_y)
{
    (void)regridder, (void)x, (void)y, (void)size_y;
    return no_cuda(context);
}

int spart_device_mart_fusable(const spart_regridder *backward)
{
    (void)backward; /* never on a device without CUDA */
    return 0;
}

spart_status spart_device_mart_backproject_update(spart_context *context,
                                                  const spart_regridder *backward,
                                                  const double *images, const double *observed_back,
                                                  double *scene, int64_t num_channel,
                                                  int64_t scene_size, double gamma)
{
    (void)backward, (void)images, (void)observed_back, (void)scene, (void)num_channel;
    (void)scene_size, (void)gamma;
    return no_cuda(context);
}

spart_status spart_regridder_create_device(spart_context *context, const spart_weights *weights,
                                           const spart_regridder_options *options,
                                           spart_regridder **regridder)
{
    (void)options;
    spart_status status = check_create_arguments(context, weights, regridder);
    return status == SPART_OK ? no_cuda(context) : status;
}

spart_status spart_device_csr_assemble(spart_context *context, const spart_assembly_source *source,
                                       int64_t cells_input, int64_t cells_output,
                                       spart_value_type value_type,
                                       const spart_device_assembly_options *options,
                                       spart_regridder *regridder)
{
    (void)source, (void)cells_input, (void)cells_output, (void)value_type, (void)options;
    (void)regridder;
    return no_cuda(context);
}

spart_status spart_device_csr_transpose(spart_context *context, const spart_regridder *regridder,
                                        int wide_sort, spart_regridder *transposed)
{
    (void)regridder, (void)wide_sort, (void)transposed;
    return no_cuda(context);
}

spart_status spart_device_transpose_conservative(spart_context *context, spart_regridder *forward,
                                                 const spart_regridder *exact, const int *source,
                                                 const int64_t *grid_stride, int64_t num_grids,
                                                 int64_t cells_input, int64_t cells_output,
                                                 const double *factor_input,
                                                 const double *volume_output,
                                                 spart_regridder **conservative)
{
    (void)forward, (void)exact, (void)source, (void)grid_stride, (void)num_grids;
    (void)cells_input, (void)cells_output, (void)factor_input, (void)volume_output;
    *conservative = NULL;
    return no_cuda(context);
}

#else /* SPART_HAVE_CUDA */

/* ---- CUDA errors, devices and pointers ------------------------------------------ */

/* The shared helpers of src/device/device_select.h, under this file's names. */
static spart_status cuda_failure(spart_context *context, cudaError_t error, const char *what)
{
    return spart_device_failure(context, (int)error, what);
}

/* SPART_OK when `pointer` is memory the kernels on `device` may use
 * (src/device/device_select.h). */
static spart_status check_device_pointer(spart_context *context, const void *pointer, int device,
                                         const char *name)
{
    return spart_device_check_pointer(context, pointer, device, "device product", name);
}

/* ---- the context ------------------------------------------------------------------ */

spart_status spart_context_set_cuda_device(spart_context *context, int device)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (device < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "device = %d: CUDA devices are numbered from 0", device);
    }
    spart_status status = spart_device_check_exists(context, device);
    if (status == SPART_OK) {
        context->cuda_device = device;
    }
    return status;
}

spart_status spart_context_set_cuda_stream(spart_context *context, void *stream)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    context->cuda_stream = stream;
    return SPART_OK;
}

/* ---- the long rows ----------------------------------------------------------------- */

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

/* ---- copies -------------------------------------------------------------------------- */

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
            return cuda_failure(context, error, "copying a regridder: cudaMalloc");
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
            return cuda_failure(context, error, "copying a regridder: cudaMemcpyAsync");
        }
    }
    return SPART_OK;
}

/* Free what a partly or fully made copy holds, wherever it lives. */
static void release_copy(spart_regridder *made)
{
    if (made->device.on_device) {
        spart_device_release(made);
    } else {
        spart_csr_release(&made->allocator, &made->csr);
    }
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
    if (source->device.on_device) {
        status = copy_array(context, row_ptr, row_bytes, 0, stream, (void **)&host_row_ptr);
        cudaError_t error = status == SPART_OK ? cudaStreamSynchronize(stream) : cudaSuccess;
        if (error != cudaSuccess) {
            status = cuda_failure(context, error, "copying a regridder's row pointers");
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
                status = cuda_failure(context, error, "copying the long-row table");
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

/* The device short-row index of a device matrix (see
 * spart_device_short_rows), made on the device from its row pointers
 * where the plan has g <= 2 and no row is long; kept only when no row
 * holds more than 255 entries, which one int brought back says (the
 * stream is waited for). The index is optional: without device memory
 * for it, the matrix goes without. */
static cudaError_t index_short_rows_on_device(spart_regridder *regridder, cudaStream_t stream)
{
    spart_regridder_device *device = &regridder->device;
    int64_t rows = regridder->csr.num_rows;
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
    made->device.on_device = to_device;
    made->device.cuda_device = to_device ? cuda_device : 0;
    status = copy_csr(context, &source->csr, &made->csr, to_device, stream);
    if (status == SPART_OK && to_device) {
        status = copy_long_table(context, source, made, stream);
    }
    if (status == SPART_OK && to_device) {
        cudaError_t error = index_short_rows_on_device(made, stream);
        if (error != cudaSuccess) {
            status = cuda_failure(context, error, "indexing a regridder's short rows");
        }
    }
    if (status == SPART_OK) {
        cudaError_t error = cudaStreamSynchronize(stream);
        if (error != cudaSuccess) {
            status = cuda_failure(context, error, "copying a regridder");
        }
    }
    if (status != SPART_OK) {
        (void)cudaStreamSynchronize(stream); /* no copy may still write into what is freed */
        release_copy(made);
    } else {
        spart_regridder_index_short_rows(made, spart_threads(context)); /* a host copy's */
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

void spart_device_release(spart_regridder *regridder)
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
    }
    (void)cudaFree(csr->values64);
    (void)cudaFree(csr->values32);
    memset(csr, 0, sizeof *csr);
    memset(&regridder->device, 0, sizeof regridder->device);
    spart_device_leave(previous);
}

/* ---- building on the device: assembly and the transposes ----------------------------- */

static spart_device_csr describe_matrix(const spart_regridder *regridder);

/* The stream of device work on `device`: the context's when the context
 * uses that device, else the default stream. */
static cudaStream_t stream_for(const spart_context *context, int device)
{
    return device == context->cuda_device ? (cudaStream_t)context->cuda_stream : 0;
}

/* Copies of large host arrays to the device go through two pinned
 * buffers: all threads fill one while the other's copy to the device
 * runs, so the copy runs at the pinned rate (about 55 GB/s on an H200's
 * host, against 8 GB/s from pageable memory, measured by
 * bench_cuda_assembly). Pinning the buffers costs time too (about 25 ms for
 * two of 32 MiB), so only copies of STAGED_COPY_MIN_BYTES or more in all
 * are staged. */
#define STAGE_BYTES ((size_t)32 << 20)
#define STAGED_COPY_MIN_BYTES ((size_t)256 << 20)

typedef struct stager {
    size_t stage_bytes; /* 0: no staging, plain copies */
    int threads;
    void *buffer[2];
    cudaEvent_t copied[2]; /* each buffer's last copy to the device */
    int next;
} stager;

static cudaError_t stager_open(stager *s, size_t stage_bytes, int threads)
{
    memset(s, 0, sizeof *s);
    s->threads = threads;
    cudaError_t error = cudaSuccess;
    for (int b = 0; b < 2 && error == cudaSuccess && stage_bytes > 0; b++) {
        error = cudaMallocHost(&s->buffer[b], stage_bytes);
        if (error == cudaSuccess) {
            error = cudaEventCreateWithFlags(&s->copied[b], cudaEventDisableTiming);
        }
    }
    s->stage_bytes = stage_bytes;
    return error;
}

/* Wait for the buffers' copies, then free them. */
static void stager_close(stager *s)
{
    for (int b = 0; b < 2; b++) {
        if (s->copied[b] != NULL) {
            (void)cudaEventSynchronize(s->copied[b]);
            (void)cudaEventDestroy(s->copied[b]);
        }
        if (s->buffer[b] != NULL) {
            (void)cudaFreeHost(s->buffer[b]);
        }
    }
    memset(s, 0, sizeof *s);
}

/* bytes of `from` to the device at `to` through the stager's buffers. */
static cudaError_t staged_copy(stager *s, void *to, const void *from, size_t bytes,
                               cudaStream_t stream)
{
    cudaError_t error = cudaSuccess;
    for (size_t offset = 0; offset < bytes && error == cudaSuccess; offset += s->stage_bytes) {
        size_t length = bytes - offset < s->stage_bytes ? bytes - offset : s->stage_bytes;
        int b = s->next;
        s->next ^= 1;
        error = cudaEventSynchronize(s->copied[b]); /* the buffer's last copy is done */
        if (error != cudaSuccess) {
            break;
        }
        char *buffer = s->buffer[b];
        const char *source = (const char *)from + offset;
        int64_t pieces = 4 * (int64_t)s->threads;
#pragma omp parallel for schedule(static) num_threads(s->threads)
        for (int64_t piece = 0; piece < pieces; piece++) {
            size_t begin = length * (size_t)piece / (size_t)pieces;
            size_t end = length * (size_t)(piece + 1) / (size_t)pieces;
            memcpy(buffer + begin, source + begin, end - begin);
        }
        error =
            cudaMemcpyAsync((char *)to + offset, buffer, length, cudaMemcpyHostToDevice, stream);
        if (error == cudaSuccess) {
            error = cudaEventRecord(s->copied[b], stream);
        }
    }
    return error;
}

/* A stream-ordered device copy of count * size bytes of host memory
 * (*copy NULL when `host` is NULL), staged when the stager has buffers. */
static cudaError_t upload(stager *s, const void *host, size_t count, size_t size,
                          cudaStream_t stream, void **copy)
{
    *copy = NULL;
    if (host == NULL) {
        return cudaSuccess;
    }
    size_t bytes = count * size;
    cudaError_t error = cudaMallocAsync(copy, bytes > 0 ? bytes : 1, stream);
    if (error != cudaSuccess) {
        *copy = NULL;
    } else if (bytes > 0 && s != NULL && s->stage_bytes > 0) {
        error = staged_copy(s, *copy, host, bytes, stream);
    } else if (bytes > 0) {
        error = cudaMemcpyAsync(*copy, host, bytes, cudaMemcpyHostToDevice, stream);
    }
    return error;
}

/* Free stream-ordered scratch (NULL: nothing) and forget it. */
static void discard(void **scratch, cudaStream_t stream)
{
    if (*scratch != NULL) {
        (void)cudaFreeAsync(*scratch, stream);
        *scratch = NULL;
    }
}

/* cudaMalloc of count * size bytes (at least one) for a regridder's array. */
static cudaError_t allocate_array(size_t count, size_t size, void **array)
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
static cudaError_t allocate_entries(spart_csr *csr, spart_value_type value_type)
{
    size_t n = (size_t)csr->num_entries;
    cudaError_t error = csr->num_columns < ((int64_t)1 << 31)
                            ? allocate_array(n, sizeof(int32_t), (void **)&csr->columns32)
                            : allocate_array(n, sizeof(int64_t), (void **)&csr->columns64);
    if (error == cudaSuccess) {
        error = value_type == SPART_FLOAT32
                    ? allocate_array(n, sizeof(float), (void **)&csr->values32)
                    : allocate_array(n, sizeof(double), (void **)&csr->values64);
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
static cudaError_t plan_on_device(spart_regridder *regridder, cudaStream_t stream)
{
    regridder->plan = spart_plan_product(&regridder->csr);
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
        error = allocate_array(table, sizeof(int64_t), (void **)&device->long_table);
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
    discard(&workspace, stream);
    if (error == cudaSuccess) {
        error = index_short_rows_on_device(regridder, stream);
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
                                 int64_t cells_output, stager *staging, cudaStream_t stream,
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
        error = upload(per_entry ? staging : NULL, from[a], counts[a], 8, stream, &scratch[a]);
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
    stager staging;
    cudaError_t error = stager_open(&staging, stage_bytes_for(source, options), threads);
    if (error == cudaSuccess) {
        error =
            upload_source(source, cells_input, cells_output, &staging, stream, scratch, &on_device);
    }
    stager_close(&staging);
    if (error == cudaSuccess) {
        int wide_sort = options != NULL && options->wide_sort;
        error = (cudaError_t)spart_cuda_sort_plan(on_device.num_entries, csr->num_rows, wide_sort,
                                                  &sort);
    }
    if (error == cudaSuccess) {
        error = cudaMallocAsync(&sort.workspace, sort.workspace_bytes, stream);
    }
    if (error == cudaSuccess) {
        error = allocate_array((size_t)csr->num_rows + 1, sizeof(int64_t), (void **)&csr->row_ptr);
    }
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_assemble_sort(&on_device, csr->num_rows, &sort,
                                                      csr->row_ptr, stream);
    }
    /* What only the rows needed goes before the placement's arrays come. */
    discard(&scratch[SCRATCH_INDICES_OUTPUT], stream);
    discard(&scratch[SCRATCH_ROW_OFFSET], stream);
    discard(&scratch[SCRATCH_ROW_LOOKUP], stream);
    csr->num_entries = on_device.num_entries;
    if (error == cudaSuccess && source->drop_zeros) {
        error = cudaMemcpyAsync(&csr->num_entries, csr->row_ptr + csr->num_rows, sizeof(int64_t),
                                cudaMemcpyDeviceToHost, stream);
        if (error == cudaSuccess) {
            error = cudaStreamSynchronize(stream);
        }
    }
    if (error == cudaSuccess) {
        error = allocate_entries(csr, value_type);
    }
    if (error == cudaSuccess) {
        spart_device_csr_arrays arrays = arrays_of(csr);
        error = (cudaError_t)spart_cuda_assemble_place(&on_device, &sort, csr->num_entries, &arrays,
                                                       stream);
    }
    discard(&sort.workspace, stream);
    for (int a = 0; a < SCRATCH_COUNT; a++) {
        discard(&scratch[a], stream);
    }
    if (error == cudaSuccess) {
        error = plan_on_device(regridder, stream);
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
    cudaError_t error =
        assemble_on_stream(source, cells_input, cells_output, value_type, options,
                           spart_threads(context), regridder, stream_for(context, device));
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return cuda_failure(context, error, "assembling a regridder on the device");
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
    spart_device_csr matrix = describe_matrix(regridder);
    spart_device_sort sort;
    memset(&sort, 0, sizeof sort);
    cudaError_t error =
        (cudaError_t)spart_cuda_sort_plan(csr->num_entries, csr->num_columns, wide_sort, &sort);
    if (error == cudaSuccess) {
        error = cudaMallocAsync(&sort.workspace, sort.workspace_bytes, stream);
    }
    if (error == cudaSuccess) {
        error =
            allocate_array((size_t)made->num_rows + 1, sizeof(int64_t), (void **)&made->row_ptr);
    }
    if (error == cudaSuccess) {
        error = allocate_entries(made, csr->values32 != NULL ? SPART_FLOAT32 : SPART_FLOAT64);
    }
    if (error == cudaSuccess) {
        error = (cudaError_t)spart_cuda_transpose_sort(&matrix, &sort, made->row_ptr, stream);
    }
    if (error == cudaSuccess) {
        spart_device_csr_arrays arrays = arrays_of(made);
        error = (cudaError_t)spart_cuda_transpose_place(&matrix, &sort, &arrays, stream);
    }
    discard(&sort.workspace, stream);
    if (error == cudaSuccess) {
        error = plan_on_device(transposed, stream);
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
    transposed->device.on_device = 1;
    transposed->device.cuda_device = device;
    cudaError_t error =
        transpose_on_stream(regridder, wide_sort, transposed, stream_for(context, device));
    if (error != cudaSuccess) {
        spart_device_release(transposed);
    }
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return cuda_failure(context, error, "the exact transpose on the device");
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
    cudaError_t error = exact->csr.values32 != NULL
                            ? allocate_array(n, sizeof(float), (void **)&made->csr.values32)
                            : allocate_array(n, sizeof(double), (void **)&made->csr.values64);
    if (error == cudaSuccess) {
        error = upload(NULL, factor_input, (size_t)(num_grids * decoder->cells_input),
                       sizeof(double), stream, &factor);
    }
    if (error == cudaSuccess) {
        error = upload(NULL, volume_output, (size_t)(num_grids * decoder->cells_output),
                       sizeof(double), stream, &volume);
    }
    if (error == cudaSuccess) {
        spart_device_csr matrix = describe_matrix(exact);
        error = (cudaError_t)spart_cuda_conservative_values(
            &matrix, decoder, factor, volume, made->csr.values64, made->csr.values32, stream);
    }
    discard(&factor, stream);
    discard(&volume, stream);
    cudaError_t finished = cudaStreamSynchronize(stream);
    return error != cudaSuccess ? error : finished;
}

spart_status spart_device_transpose_conservative(spart_context *context, spart_regridder *forward,
                                                 const spart_regridder *exact, const int *source,
                                                 const int64_t *grid_stride, int64_t num_grids,
                                                 int64_t cells_input, int64_t cells_output,
                                                 const double *factor_input,
                                                 const double *volume_output,
                                                 spart_regridder **conservative)
{
    *conservative = NULL;
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
    spart_regridder *made = spart_alloc(&forward->allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "conservative transpose: out of memory");
    }
    *made = *exact; /* the pattern and the long-row table, shared */
    made->owns_arrays = 0;
    made->transposed = NULL;
    made->conservative = NULL;
    made->has_roles = 0;
    made->owner = forward;
    made->csr.values64 = NULL;
    made->csr.values32 = NULL;
    int device = forward->device.cuda_device, previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status != SPART_OK) {
        spart_free(&forward->allocator, made);
        return status;
    }
    cudaError_t error = conservative_on_stream(exact, &decoder, num_grids, factor_input,
                                               volume_output, made, stream_for(context, device));
    if (error != cudaSuccess) {
        spart_device_release(made); /* its values only: it owns no pattern */
        spart_free(&forward->allocator, made);
        spart_device_leave(previous);
        return cuda_failure(context, error, "the conservative transpose on the device");
    }
    spart_device_leave(previous);
    *conservative = made;
    return SPART_OK;
}

spart_status spart_regridder_create_device(spart_context *context, const spart_weights *weights,
                                           const spart_regridder_options *options,
                                           spart_regridder **regridder)
{
    spart_status status = check_create_arguments(context, weights, regridder);
    if (status == SPART_OK) {
        status = spart_device_check_exists(context, context->cuda_device);
    }
    return status == SPART_OK ? spart_regridder_create_on(context, weights, options,
                                                          context->cuda_device, regridder)
                              : status;
}

/* ---- products ---------------------------------------------------------------------- */

/* Bytes rounded up to whole 256-byte blocks (cudaMalloc's alignment). */
static size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* Whether vectors must be packed into interleaved ones for the product:
 * only when a side declares batch axes. Leading axes alone give vectors one
 * after the other in C order, which the product reads and writes as they
 * lie. */
static int packing_needed(const spart_regridder *regridder, int64_t num_vectors)
{
    return num_vectors != 1 &&
           (regridder->input.num_batch != 1 || regridder->output.num_batch != 1);
}

/* Bytes of x at and above which a batch of vectors in C order is read in
 * tiles (below). */
static const double x_tile_bytes = 8.0 * 1024 * 1024;

/* Whether vectors one after the other in C order (leading axes alone) are
 * first copied into tiles of 8 interleaved vectors for the product
 * (spart_cuda_csr_product_c_order): for 5 or more vectors (the product
 * takes them 8 at a time) over a matrix of short rows
 * (spart_device_rows_are_short: no long rows, fewer than 64 entries a row
 * on average), or whose x fills 8 MiB or more. Read as they lie, each
 * term gathers its x from 8 planes, a 32-byte sector each for 8 bytes
 * used; in tiles, from one 64-byte line, at the price of one more pass
 * over x. Short rows are then summed by kernels of their own
 * (kernels/csr_product_tiles.cu). Measured on an H200 (docs/benchmarks.md,
 * "Eight vectors by quads of lanes"), 8 vectors of the CTIS operators: a
 * and its transpose (short rows, x of 4 and 1.4 MB) 0.055 -> 0.038-0.042
 * and 0.062 -> 0.032-0.035 ms in tiles, b and its transpose (short rows,
 * x of 67 and 18 MB) 0.486 -> 0.373-0.375 and 0.634 -> 0.256-0.266 ms; c
 * and its transpose (rows of 1700 and 256 entries, x of 2.4 and 0.35 MB)
 * stay as they lie: in tiles they took 0.178 and 0.154 ms against 0.105
 * and 0.111 (the copy is not paid back where x stays in the caches and
 * rows are long). */
static int x_tiles_needed(const spart_regridder *regridder, int64_t num_vectors)
{
    double x_bytes = (double)regridder->csr.num_columns * (double)num_vectors * sizeof(double);
    spart_device_csr matrix = describe_matrix(regridder);
    return num_vectors >= 5 && !packing_needed(regridder, num_vectors) &&
           (x_bytes >= x_tile_bytes || spart_device_rows_are_short(&matrix));
}

size_t spart_device_workspace_bytes(const spart_regridder *regridder, int64_t num_vectors)
{
    size_t vectors = (size_t)(num_vectors > 0 ? num_vectors : 0);
    size_t bytes = round_up((size_t)regridder->device.num_long_chunks * vectors * sizeof(double));
    if (packing_needed(regridder, num_vectors)) {
        bytes += round_up((size_t)regridder->csr.num_columns * vectors * sizeof(double));
        bytes += round_up((size_t)regridder->csr.num_rows * vectors * sizeof(double));
    }
    if (x_tiles_needed(regridder, num_vectors)) {
        size_t tiles = (vectors + 7) / 8;
        bytes += round_up((size_t)regridder->csr.num_columns * tiles * 8 * sizeof(double));
    }
    return bytes;
}

static spart_device_csr describe_matrix(const spart_regridder *regridder)
{
    const spart_csr *csr = &regridder->csr;
    const spart_regridder_device *device = &regridder->device;
    spart_device_csr matrix;
    memset(&matrix, 0, sizeof matrix);
    matrix.num_rows = csr->num_rows;
    matrix.num_columns = csr->num_columns;
    matrix.num_entries = csr->num_entries;
    matrix.row_ptr = csr->row_ptr;
    matrix.columns32 = csr->columns32;
    matrix.columns64 = csr->columns64;
    matrix.values64 = csr->values64;
    matrix.values32 = csr->values32;
    matrix.group_size = regridder->plan.group_size;
    matrix.chunk_length = regridder->plan.chunk_length;
    matrix.num_long_rows = device->num_long_rows;
    matrix.long_rows = device->long_rows;
    matrix.long_first_chunk = device->long_first_chunk;
    matrix.num_long_chunks = device->num_long_chunks;
    matrix.chunk_begin = device->chunk_begin;
    matrix.chunk_end = device->chunk_end;
    return matrix;
}

static spart_device_axis_map describe_axes(const spart_axis_map *map)
{
    spart_device_axis_map result;
    memset(&result, 0, sizeof result);
    result.ndim = map->shape.ndim;
    for (int k = 0; k < map->shape.ndim; k++) {
        result.dims[k] = map->shape.dims[k];
        result.matrix_stride[k] = map->matrix_stride[k];
        result.batch_stride[k] = map->batch_stride[k];
    }
    result.num_batch = map->num_batch;
    return result;
}

/* The checks of a device product: the context's device is the
 * regridder's, and x, y and the workspace are its device memory. */
static spart_status check_device_product(spart_context *context, const spart_regridder *regridder,
                                         const spart_array *x, const double *y, int64_t size_y,
                                         const void *workspace, size_t needed,
                                         int workspace_is_ours)
{
    int device = regridder->device.cuda_device;
    if (context->cuda_device != device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the regridder lives on CUDA device %d but the context uses device %d "
                          "(spart_context_set_cuda_device)",
                          device, context->cuda_device);
    }
    spart_status status = SPART_OK;
    if (spart_shape_size(&x->shape) > 0) {
        status = check_device_pointer(context, x->data, device, "x->data");
    }
    if (status == SPART_OK && size_y > 0) {
        status = check_device_pointer(context, y, device, "y");
    }
    if (status == SPART_OK && needed > 0 && !workspace_is_ours) {
        status = check_device_pointer(context, workspace, device, "the workspace");
    }
    return status;
}

spart_status spart_device_product(spart_context *context, const spart_regridder *regridder,
                                  const spart_array *x, double *y, int64_t size_y,
                                  int64_t num_leading, int64_t num_vectors, void *workspace,
                                  size_t workspace_bytes, int workspace_is_ours)
{
    size_t needed = spart_device_workspace_bytes(regridder, num_vectors);
    if (workspace_bytes < needed || (needed > 0 && workspace == NULL)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "workspace of %zu bytes given, %zu needed (spart_regridder_workspace_"
                          "size)",
                          workspace_bytes, needed);
    }
    int previous = -1;
    spart_status status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    status = check_device_product(context, regridder, x, y, size_y, workspace, needed,
                                  workspace_is_ours);
    if (status != SPART_OK) {
        spart_device_leave(previous);
        return status;
    }
    spart_device_csr matrix = describe_matrix(regridder);
    void *stream = context->cuda_stream;
    size_t vectors = (size_t)num_vectors;
    char *free_space = workspace;
    double *chunk_sums = (double *)free_space;
    free_space += round_up((size_t)matrix.num_long_chunks * vectors * sizeof(double));
    int error = cudaSuccess;
    if (num_vectors == 1 && regridder->device.short_row_lengths != NULL) {
        spart_device_short_rows index = {regridder->device.short_row_lengths,
                                         regridder->device.short_row_starts};
        error = spart_cuda_csr_product_indexed(&matrix, &index, x->data, y, stream);
    } else if (num_vectors == 1) {
        error = spart_cuda_csr_product(&matrix, x->data, 1, y, chunk_sums, stream);
    } else if (!packing_needed(regridder, num_vectors)) {
        double *x_tiles = x_tiles_needed(regridder, num_vectors) ? (double *)free_space : NULL;
        error = spart_cuda_csr_product_c_order(&matrix, x->data, num_vectors, x_tiles, y,
                                               chunk_sums, stream);
    } else {
        double *packed_x = (double *)free_space;
        free_space += round_up((size_t)matrix.num_columns * vectors * sizeof(double));
        double *packed_y = (double *)free_space;
        spart_device_axis_map input = describe_axes(&regridder->input);
        spart_device_axis_map output = describe_axes(&regridder->output);
        error = spart_cuda_pack(&input, num_leading, x->data, packed_x, stream);
        if (error == cudaSuccess) {
            error = spart_cuda_csr_product(&matrix, packed_x, num_vectors, packed_y, chunk_sums,
                                           stream);
        }
        if (error == cudaSuccess) {
            error = spart_cuda_unpack(&output, num_leading, packed_y, y, stream);
        }
    }
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        return cuda_failure(context, (cudaError_t)error, "device product");
    }
    return SPART_OK;
}

int spart_device_mart_fusable(const spart_regridder *backward)
{
    return backward != NULL && backward->device.on_device && backward->device.num_long_rows == 0 &&
           backward->input.num_batch == 1 && backward->output.num_batch == 1;
}

spart_status spart_device_mart_backproject_update(spart_context *context,
                                                  const spart_regridder *backward,
                                                  const double *images, const double *observed_back,
                                                  double *scene, int64_t num_channel,
                                                  int64_t scene_size, double gamma)
{
    int device = backward->device.cuda_device;
    int previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    if (context->cuda_device != device) {
        status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                            "the regridder lives on CUDA device %d but the context uses device %d "
                            "(spart_context_set_cuda_device)",
                            device, context->cuda_device);
    }
    const void *pointers[] = {images, observed_back, scene};
    const char *names[] = {"images", "observed_back", "scene"};
    for (int k = 0; k < 3 && status == SPART_OK; k++) {
        status = spart_device_check_pointer(context, pointers[k], device, "mart update from images",
                                            names[k]);
    }
    if (status == SPART_OK) {
        spart_device_csr matrix = describe_matrix(backward);
        spart_device_short_rows index = {backward->device.short_row_lengths,
                                         backward->device.short_row_starts};
        int error = spart_cuda_mart_backproject_update(
            &matrix, images, observed_back, scene, num_channel, scene_size, gamma,
            index.row_lengths != NULL ? &index : NULL, context->cuda_mart_stop,
            context->cuda_stream);
        if (error != cudaSuccess) {
            status = cuda_failure(context, (cudaError_t)error, "mart update from images");
        }
    }
    spart_device_leave(previous);
    return status;
}

spart_status spart_device_apply(spart_context *context, const spart_regridder *regridder,
                                const spart_array *x, double *y, int64_t size_y)
{
    if (x == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "regridder, x and y must not be NULL");
    }
    size_t bytes = 0;
    spart_status status = spart_regridder_workspace_size(context, regridder, &x->shape, &bytes);
    if (status != SPART_OK || bytes == 0) {
        return status != SPART_OK
                   ? status
                   : spart_regridder_apply_workspace(context, regridder, x, y, size_y, NULL, 0);
    }
    int previous = -1;
    status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    void *workspace = NULL;
    cudaError_t error = cudaMallocAsync(&workspace, bytes, stream);
    if (error != cudaSuccess) {
        spart_device_leave(previous);
        return cuda_failure(context, error, "apply: allocating the device workspace");
    }
    status = spart_regridder_apply_checked(context, regridder, x, y, size_y, workspace, bytes, 1);
    error = cudaFreeAsync(workspace, stream);
    spart_device_leave(previous);
    if (status == SPART_OK && error != cudaSuccess) {
        status = cuda_failure(context, error, "apply: freeing the device workspace");
    }
    return status;
}

#endif /* SPART_HAVE_CUDA */
