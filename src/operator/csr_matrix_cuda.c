/*
 * src/operator/csr_matrix_cuda.c: the CUDA device's table of a CSR
 * matrix's operations (src/operator/csr_matrix_ops.h): arrays in device
 * memory of the context's device, checked and copied there, the
 * elementwise passes of kernels/csr_vectors.cu on the context's stream.
 * Built with CUDA only.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_select.h"
#include "operator/csr_matrix_ops.h"
#include "operator/csr_vectors.h"
#include "operator/regridder_cuda.h"

static const char *const what = "csr_matrix_create";

/* The caller's arrays are memory of the context's device (current). */
static spart_status check_array_pointers(spart_context *context, const spart_csr_arrays *a)
{
    int device = context->cuda_device;
    spart_status status = spart_device_check_pointer(context, a->row_ptr, device, what, "row_ptr");
    if (status == SPART_OK && a->num_entries > 0) {
        status = spart_device_check_pointer(context, a->columns, device, what, "columns");
    }
    if (status == SPART_OK && a->num_entries > 0) {
        status = spart_device_check_pointer(context, a->values, device, what, "values");
    }
    return status;
}

/* The index at position i of a device array of `type`, read back. */
static cudaError_t read_index(const void *array, spart_index_type type, int64_t i, int64_t *value)
{
    if (type == SPART_INT32) {
        int32_t narrow = 0;
        cudaError_t error =
            cudaMemcpy(&narrow, (const int32_t *)array + i, sizeof narrow, cudaMemcpyDeviceToHost);
        *value = narrow;
        return error;
    }
    return cudaMemcpy(value, (const int64_t *)array + i, sizeof *value, cudaMemcpyDeviceToHost);
}

static cudaError_t find_bad(const spart_csr_arrays *a, cudaStream_t stream, int64_t *scratch,
                            spart_csr_check *found)
{
    int64_t *answer = scratch + spart_cuda_first_bad_scratch();
    cudaError_t error = (cudaError_t)spart_cuda_first_bad_row_ptr(
        a->row_ptr, a->row_ptr_type == SPART_INT32, a->num_rows, a->num_entries, scratch, answer,
        stream);
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(&found->bad_row_ptr, answer, sizeof(int64_t),
                                cudaMemcpyDeviceToHost, stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    if (error != cudaSuccess) {
        return error;
    }
    if (found->bad_row_ptr <= a->num_rows) {
        error = read_index(a->row_ptr, a->row_ptr_type, found->bad_row_ptr, &found->row_ptr_value);
        if (error == cudaSuccess && found->bad_row_ptr > 0) {
            error = read_index(a->row_ptr, a->row_ptr_type, found->bad_row_ptr - 1,
                               &found->row_ptr_before);
        }
        return error;
    }
    if (a->num_entries == 0) {
        return cudaSuccess;
    }
    error = (cudaError_t)spart_cuda_first_bad_column(a->columns, a->column_type == SPART_INT32,
                                                     a->num_entries, a->num_columns, scratch,
                                                     answer, stream);
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(&found->bad_entry, answer, sizeof(int64_t), cudaMemcpyDeviceToHost,
                                stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    if (error == cudaSuccess && found->bad_entry < a->num_entries) {
        error = read_index(a->columns, a->column_type, found->bad_entry, &found->column);
    }
    return error;
}

static spart_status cuda_check_arrays(spart_context *context, const spart_csr_arrays *a,
                                      spart_csr_check *found)
{
    memset(found, 0, sizeof *found);
    found->bad_row_ptr = a->num_rows + 1;
    found->bad_entry = a->num_entries;
    int previous = -1;
    spart_status status = spart_device_select(context, context->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    status = check_array_pointers(context, a);
    if (status == SPART_OK) {
        cudaStream_t stream = (cudaStream_t)context->cuda_stream;
        int64_t *scratch = NULL;
        size_t bytes = (size_t)(spart_cuda_first_bad_scratch() + 1) * sizeof(int64_t);
        cudaError_t error = cudaMallocAsync((void **)&scratch, bytes, stream);
        if (error == cudaSuccess) {
            error = find_bad(a, stream, scratch, found);
            (void)cudaFreeAsync(scratch, stream);
        }
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, "csr_matrix_create: the check");
        }
    }
    spart_device_leave(previous);
    return status;
}

/* A device array of `bytes` (at least one) holding a copy of `from`. */
static cudaError_t copy_of(const void *from, size_t bytes, cudaStream_t stream, void **made)
{
    cudaError_t error = cudaMalloc(made, bytes > 0 ? bytes : 1);
    if (error != cudaSuccess) {
        *made = NULL;
        return error;
    }
    return bytes > 0 ? cudaMemcpyAsync(*made, from, bytes, cudaMemcpyDeviceToDevice, stream)
                     : cudaSuccess;
}

static cudaError_t adopt_on_stream(const spart_csr_arrays *a, int wrap, spart_regridder *made,
                                   cudaStream_t stream)
{
    spart_csr *csr = &made->csr;
    size_t rows = (size_t)a->num_rows + 1, entries = (size_t)a->num_entries;
    cudaError_t error = cudaSuccess;
    /* Arrays made here go into csr at once, so that a failure's release
     * frees them; the caller's go in only when all is made. */
    if (a->row_ptr_type == SPART_INT32) {
        error = cudaMalloc((void **)&csr->row_ptr, rows * sizeof(int64_t));
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_cuda_int32_to_int64(a->row_ptr, (int64_t)rows, csr->row_ptr,
                                                           stream);
        } else {
            csr->row_ptr = NULL;
        }
    } else if (!wrap) {
        error = copy_of(a->row_ptr, rows * sizeof(int64_t), stream, (void **)&csr->row_ptr);
    }
    void *columns = NULL, *values = NULL;
    if (error == cudaSuccess && !wrap) {
        error = copy_of(a->columns, entries * spart_index_bytes(a->column_type), stream, &columns);
        if (a->column_type == SPART_INT32) {
            csr->columns32 = columns;
        } else {
            csr->columns64 = columns;
        }
    }
    if (error == cudaSuccess && !wrap) {
        error = copy_of(a->values, entries * spart_value_bytes(a->value_type), stream, &values);
        if (a->value_type == SPART_FLOAT32) {
            csr->values32 = values;
        } else {
            csr->values64 = values;
        }
    }
    if (error != cudaSuccess) {
        return error;
    }
    if (wrap) {
        if (a->row_ptr_type == SPART_INT64) {
            csr->row_ptr = (int64_t *)a->row_ptr;
        }
        if (a->column_type == SPART_INT32) {
            csr->columns32 = (int32_t *)a->columns;
        } else {
            csr->columns64 = (int64_t *)a->columns;
        }
        if (a->value_type == SPART_FLOAT32) {
            csr->values32 = (float *)a->values;
        } else {
            csr->values64 = (double *)a->values;
        }
    }
    made->plan.row_rule = a->num_rows < INT32_MAX ? SPART_PLAN_BY_ROW : SPART_PLAN_MEAN;
    error = spart_regridder_plan_on_device(made, stream);
    cudaError_t finished = cudaStreamSynchronize(stream);
    return error != cudaSuccess ? error : finished;
}

static spart_status cuda_adopt(spart_context *context, const spart_csr_arrays *a, int wrap,
                               spart_regridder *made)
{
    int previous = -1;
    spart_status status = spart_device_select(context, context->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    status = check_array_pointers(context, a);
    if (status == SPART_OK) {
        cudaError_t error = adopt_on_stream(a, wrap, made, (cudaStream_t)context->cuda_stream);
        if (error != cudaSuccess) {
            (void)cudaStreamSynchronize((cudaStream_t)context->cuda_stream);
            status = spart_device_failure(context, (int)error, what);
        }
    }
    spart_device_leave(previous);
    return status;
}

static spart_status cuda_check_vectors(spart_context *context, const spart_regridder *regridder,
                                       const void *x, const void *y)
{
    int device = regridder->device.cuda_device;
    if (context->cuda_device != device) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "the matrix lives on CUDA device %d but the context uses device %d "
                          "(spart_context_set_cuda_device)",
                          device, context->cuda_device);
    }
    int previous = -1;
    spart_status status = spart_device_select(context, device, &previous);
    if (status == SPART_OK && x != NULL) {
        status = spart_device_check_pointer(context, x, device, "csr_matrix_multiply", "x");
    }
    if (status == SPART_OK && y != NULL) {
        status = spart_device_check_pointer(context, y, device, "csr_matrix_multiply", "y");
    }
    spart_device_leave(previous);
    return status;
}

static spart_status cuda_float_to_double(spart_context *context, const spart_regridder *regridder,
                                         const float *from, int64_t count, double *to)
{
    int previous = -1;
    spart_status status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    int error = spart_cuda_float_to_double(from, count, to, context->cuda_stream);
    spart_device_leave(previous);
    return error == cudaSuccess
               ? SPART_OK
               : spart_device_failure(context, error, "csr_matrix_multiply: float32 x");
}

static spart_status cuda_combine(spart_context *context, const spart_regridder *regridder,
                                 const double *sums, int64_t count, double alpha, double beta,
                                 void *y, int y_is_float)
{
    int previous = -1;
    spart_status status = spart_device_select(context, regridder->device.cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    int error = spart_cuda_combine(sums, count, alpha, beta, y, y_is_float, context->cuda_stream);
    spart_device_leave(previous);
    return error == cudaSuccess
               ? SPART_OK
               : spart_device_failure(context, error, "csr_matrix_multiply: alpha and beta");
}

const spart_csr_matrix_ops spart_csr_matrix_cuda_ops = {
    .check_arrays = cuda_check_arrays,
    .adopt = cuda_adopt,
    .check_vectors = cuda_check_vectors,
    .float_to_double = cuda_float_to_double,
    .combine = cuda_combine,
};
