/*
 * src/vcs/vcs_ops_cuda.c: the CUDA device's table of VCS operations
 * (src/vcs/vcs_internal.h) and the upload of a host matrix: the compressed
 * arrays of one or both groupings, narrowed (offsets int32 below 2^31
 * entries, values float32 where exact, indices uint16 for a minor axis of
 * at most 65,536 or, runs split at each change of the high 16 bits, over a
 * longer one where that costs fewer bytes than int32), and the
 * O(n_rows + n_cols) statistics; never an expanded copy. The products
 * enqueue kernels/vcs_product.cu on the context's stream and return.
 * Built only with CUDA.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device_select.h"
#include "vcs/vcs_internal.h"

typedef struct device_grouping {
    void *major_ptr, *value_ptr, *indices;
    double *values;      /* or NULL, and values_float */
    float *values_float; /* the values where every one is exact in float32 */
    uint16_t *run_high;  /* split runs: the high 16 bits of their minor indices */
    int offset_bytes, index_bytes;
} device_grouping;

typedef struct device_arrays {
    int cuda_device;
    device_grouping groupings[2];
    double *row_factor, *col_factor, *scale, *offset;
} device_arrays;

static void free_arrays(device_arrays *d)
{
    for (int by = 0; by < 2; by++) {
        cudaFree(d->groupings[by].major_ptr);
        cudaFree(d->groupings[by].value_ptr);
        cudaFree(d->groupings[by].indices);
        cudaFree(d->groupings[by].values);
        cudaFree(d->groupings[by].values_float);
        cudaFree(d->groupings[by].run_high);
    }
    cudaFree(d->row_factor);
    cudaFree(d->col_factor);
    cudaFree(d->scale);
    cudaFree(d->offset);
}

/* cudaMalloc and copy `bytes` (at least 1 allocated); adds to *total. */
static cudaError_t upload(const void *host, size_t bytes, void **device, int64_t *total)
{
    cudaError_t error = cudaMalloc(device, bytes > 0 ? bytes : 1);
    if (error == cudaSuccess && bytes > 0) {
        error = cudaMemcpy(*device, host, bytes, cudaMemcpyHostToDevice);
    }
    *total += (int64_t)bytes;
    return error;
}

/* An int64 array narrowed to `bytes` (4: int32, 2: uint16) or kept. */
static cudaError_t upload_narrowed(const spart_allocator *allocator, const void *host, int64_t n,
                                   int from_bytes, int bytes, void **device, int64_t *total)
{
    if (from_bytes == bytes) {
        return upload(host, (size_t)n * (size_t)bytes, device, total);
    }
    void *narrow = spart_alloc(allocator, (size_t)n + 1, (size_t)bytes);
    if (narrow == NULL) {
        return cudaErrorMemoryAllocation;
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t value =
            from_bytes == 8 ? ((const int64_t *)host)[k] : (int64_t)((const int32_t *)host)[k];
        if (bytes == 4) {
            ((int32_t *)narrow)[k] = (int32_t)value;
        } else {
            ((uint16_t *)narrow)[k] = (uint16_t)value;
        }
    }
    cudaError_t error = upload(narrow, (size_t)n * (size_t)bytes, device, total);
    spart_free(allocator, narrow);
    return error;
}

/* The runs of `l` as the device keeps them: split where the high 16 bits of
 * the minor index change (split = 1; a run's indices ascend, so each part
 * is one range of them and the entries keep their order), or as they are.
 * Fills major_ptr (n_major + 1), value_ptr and values (*n_runs + 1 each)
 * and high (*n_runs) where given; counts the runs into *n_runs. */
static void device_runs(const spart_vcs_layout *l, int split, int64_t *major_ptr,
                        int64_t *value_ptr, double *values, uint16_t *high, int64_t *n_runs)
{
    int64_t count = 0;
    for (int64_t m = 0; m < l->n_major; m++) {
        if (major_ptr != NULL) {
            major_ptr[m] = count;
        }
        for (int64_t u = l->major_ptr[m]; u < l->major_ptr[m + 1]; u++) {
            int32_t part = -1;
            for (int64_t e = l->value_ptr[u]; e < l->value_ptr[u + 1] || part < 0; e++) {
                const int32_t h = e < l->value_ptr[u + 1] && split ? l->indices[e] >> 16 : 0;
                if (h != part) {
                    if (value_ptr != NULL) {
                        value_ptr[count] = e;
                        values[count] = l->values[u];
                        high[count] = (uint16_t)h;
                    }
                    count++;
                    part = h;
                }
                if (e >= l->value_ptr[u + 1]) {
                    break; /* an empty run stays one run */
                }
            }
        }
    }
    if (major_ptr != NULL) {
        major_ptr[l->n_major] = count;
        value_ptr[count] = l->nnz;
    }
    *n_runs = count;
}

/* Whether every run value is exactly a float32. */
static int values_fit_float(const spart_vcs_layout *l)
{
    for (int64_t u = 0; u < l->n_runs; u++) {
        if (!((double)(float)l->values[u] == l->values[u])) {
            return 0;
        }
    }
    return 1;
}

/* One grouping narrowed: offsets int32 below 2^31; values float32 where
 * exact; indices uint16 for a minor axis of at most 65,536, or over a
 * longer one when splitting the runs at each change of the high 16 bits
 * costs fewer bytes than int32 indices (10 bytes a new run and 2 a run for
 * the high bits, against 2 an entry), else int32. */
static cudaError_t upload_grouping(const spart_allocator *allocator, const spart_vcs_layout *l,
                                   device_grouping *d, int64_t *total)
{
    int split = 0;
    int64_t n_runs = l->n_runs;
    if (l->n_minor > 65536) {
        int64_t split_runs = 0;
        device_runs(l, 1, NULL, NULL, NULL, NULL, &split_runs);
        split = 10 * (split_runs - l->n_runs) + 2 * split_runs < 2 * l->nnz;
        n_runs = split ? split_runs : l->n_runs;
    }
    d->offset_bytes = (l->nnz < INT32_MAX && n_runs < INT32_MAX) ? 4 : 8;
    d->index_bytes = l->n_minor <= 65536 || split ? 2 : 4;
    const int narrow_values = values_fit_float(l);
    int64_t *major_ptr = l->major_ptr, *value_ptr = l->value_ptr;
    double *values = l->values;
    uint16_t *high = NULL;
    if (split) {
        major_ptr = spart_alloc(allocator, (size_t)l->n_major + 1, sizeof(int64_t));
        value_ptr = spart_alloc(allocator, (size_t)n_runs + 1, sizeof(int64_t));
        values = spart_alloc(allocator, (size_t)n_runs + 1, sizeof(double));
        high = spart_alloc(allocator, (size_t)n_runs + 1, sizeof(uint16_t));
        if (major_ptr == NULL || value_ptr == NULL || values == NULL || high == NULL) {
            spart_free(allocator, major_ptr), spart_free(allocator, value_ptr);
            spart_free(allocator, values), spart_free(allocator, high);
            return cudaErrorMemoryAllocation;
        }
        device_runs(l, 1, major_ptr, value_ptr, values, high, &n_runs);
    }
    float *values_float = NULL;
    if (narrow_values) {
        values_float = spart_alloc(allocator, (size_t)n_runs + 1, sizeof(float));
        if (values_float == NULL) {
            if (split) {
                spart_free(allocator, major_ptr), spart_free(allocator, value_ptr);
                spart_free(allocator, values), spart_free(allocator, high);
            }
            return cudaErrorMemoryAllocation;
        }
        for (int64_t u = 0; u < n_runs; u++) {
            values_float[u] = (float)values[u];
        }
    }
    cudaError_t error = upload_narrowed(allocator, major_ptr, l->n_major + 1, 8, d->offset_bytes,
                                        &d->major_ptr, total);
    if (error == cudaSuccess) {
        error = upload_narrowed(allocator, value_ptr, n_runs + 1, 8, d->offset_bytes, &d->value_ptr,
                                total);
    }
    if (error == cudaSuccess) {
        error = narrow_values
                    ? upload(values_float, (size_t)n_runs * sizeof(float),
                             (void **)&d->values_float, total)
                    : upload(values, (size_t)n_runs * sizeof(double), (void **)&d->values, total);
    }
    if (error == cudaSuccess && split) {
        error = upload(high, (size_t)n_runs * sizeof(uint16_t), (void **)&d->run_high, total);
    }
    if (error == cudaSuccess) {
        error =
            upload_narrowed(allocator, l->indices, l->nnz, 4, d->index_bytes, &d->indices, total);
    }
    spart_free(allocator, values_float);
    if (split) {
        spart_free(allocator, major_ptr), spart_free(allocator, value_ptr);
        spart_free(allocator, values), spart_free(allocator, high);
    }
    return error;
}

spart_status spart_vcs_cuda_upload(spart_context *context, const spart_vcs_data *host,
                                   int both_groupings, spart_vcs_data *device)
{
    const char *what = "spart_vcs_to_device";
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    device_arrays *d = spart_alloc_zero(&context->allocator, 1, sizeof *d);
    if (d == NULL) {
        spart_device_leave(previous);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    *device = *host;
    memset(device->groupings, 0, sizeof device->groupings);
    memset(&device->stats, 0, sizeof device->stats);
    device->stats.g_code = host->stats.g_code; /* the device's statistics are in d */
    device->stats.has_offset = host->stats.has_offset;
    device->allocator = context->allocator;
    device->views = 0;
    device->device_bytes = 0;
    d->cuda_device = context->cuda_device;
    const int format_by = host->format == SPART_VCS_VCSR ? SPART_VCS_BY_ROWS : SPART_VCS_BY_COLS;
    cudaError_t error = cudaSuccess;
    for (int by = 0; by < 2 && error == cudaSuccess; by++) {
        device->has_grouping[by] = by == format_by || both_groupings;
        if (device->has_grouping[by]) {
            error = upload_grouping(&context->allocator, &host->groupings[by], &d->groupings[by],
                                    &device->device_bytes);
        }
    }
    const size_t rows = (size_t)host->n_rows * sizeof(double);
    const size_t cols = (size_t)host->n_cols * sizeof(double);
    if (error == cudaSuccess) {
        error =
            upload(host->stats.row_factor, rows, (void **)&d->row_factor, &device->device_bytes);
    }
    if (error == cudaSuccess) {
        error =
            upload(host->stats.col_factor, cols, (void **)&d->col_factor, &device->device_bytes);
    }
    if (error == cudaSuccess) {
        error = upload(host->stats.scale, cols, (void **)&d->scale, &device->device_bytes);
    }
    if (error == cudaSuccess) {
        error = upload(host->stats.offset, cols, (void **)&d->offset, &device->device_bytes);
    }
    if (error != cudaSuccess) {
        free_arrays(d);
        spart_free(&context->allocator, d);
        status = spart_device_failure(context, (int)error, what);
        spart_device_leave(previous);
        return status;
    }
    device->device = d;
    device->ops = &spart_vcs_cuda_ops;
    spart_device_leave(previous);
    return SPART_OK;
}

static spart_vcs_kernel_grouping kernel_grouping(const spart_vcs_data *data, int by)
{
    const device_arrays *d = data->device;
    spart_vcs_kernel_grouping g;
    memset(&g, 0, sizeof g);
    g.n_major = by == SPART_VCS_BY_ROWS ? data->n_rows : data->n_cols;
    g.n_minor = by == SPART_VCS_BY_ROWS ? data->n_cols : data->n_rows;
    g.major_ptr = d->groupings[by].major_ptr;
    g.value_ptr = d->groupings[by].value_ptr;
    g.values = d->groupings[by].values;
    g.values_float = d->groupings[by].values_float;
    g.run_high = d->groupings[by].run_high;
    g.indices = d->groupings[by].indices;
    g.offset_bytes = d->groupings[by].offset_bytes;
    g.index_bytes = d->groupings[by].index_bytes;
    g.group_size = data->group_size[by];
    g.by_rows = by == SPART_VCS_BY_ROWS;
    g.minor_factor_is_one = data->minor_factor_is_one[by];
    return g;
}

/* The scratch: the rank-1 vector (width doubles), then, for transposed
 * operands, X and Z in C order (8 bytes an element, whatever the type). */
static size_t cuda_workspace_bytes(const spart_context *context, const spart_vcs_data *data, int by,
                                   int64_t width, int transposed_operands)
{
    (void)context;
    size_t bytes = ((size_t)width * sizeof(double) + 255) / 256 * 256;
    if (transposed_operands) {
        const size_t n_major = (size_t)(by == SPART_VCS_BY_ROWS ? data->n_rows : data->n_cols);
        const size_t n_minor = (size_t)(by == SPART_VCS_BY_ROWS ? data->n_cols : data->n_rows);
        bytes += ((n_minor * (size_t)width * 8 + 255) / 256) * 256;
        bytes += n_major * (size_t)width * 8;
    }
    return bytes + 256;
}

static spart_status cuda_multiply(spart_context *context, const spart_vcs_data *data, int by,
                                  const spart_vcs_kernel_product *product, int transposed_operands,
                                  void *workspace, size_t workspace_bytes)
{
    const char *what = "VCS product on a CUDA device";
    int previous = -1;
    spart_status status = spart_device_enter(context, what, &previous);
    if (status == SPART_OK) {
        status = spart_device_check_pointer(context, product->x, context->cuda_device, what, "b");
    }
    if (status == SPART_OK) {
        status = spart_device_check_pointer(context, product->z, context->cuda_device, what, "out");
    }
    const size_t need =
        cuda_workspace_bytes(context, data, by, product->width, transposed_operands);
    if (status == SPART_OK && workspace != NULL) {
        status =
            spart_device_check_pointer(context, workspace, context->cuda_device, what, "workspace");
        if (status == SPART_OK && workspace_bytes < need) {
            status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                "%s: workspace_bytes = %zu is below the %zu needed", what,
                                workspace_bytes, need);
        }
    }
    if (status != SPART_OK) {
        spart_device_leave(previous);
        return status;
    }
    cudaStream_t stream = (cudaStream_t)context->cuda_stream;
    void *scratch = workspace;
    cudaError_t error = cudaSuccess;
    if (scratch == NULL) {
        error = cudaMallocAsync(&scratch, need, stream);
    }
    const spart_vcs_data *d = data;
    const device_arrays *arrays = d->device;
    spart_vcs_kernel_grouping g = kernel_grouping(d, by);
    spart_vcs_kernel_stats s;
    s.row_factor = arrays->row_factor;
    s.col_factor = arrays->col_factor;
    /* NULL: every s_j is 1 (a recipe that does not scale), not loaded */
    s.scale = spart_vcs_recipe_scales(d->recipe) ? arrays->scale : NULL;
    s.offset = arrays->offset;
    s.g_code = d->stats.g_code;
    s.has_offset = d->stats.has_offset;
    spart_vcs_kernel_product p = *product;
    const int element = product->is_float ? 4 : 8;
    if (error == cudaSuccess) {
        char *base = (char *)scratch;
        double *rank1 = (double *)base;
        char *x_copy = base + ((size_t)product->width * sizeof(double) + 255) / 256 * 256;
        char *z_copy = x_copy + ((size_t)g.n_minor * (size_t)product->width * 8 + 255) / 256 * 256;
        if (transposed_operands) {
            /* X is B (width x n_minor): C order as n_minor x width */
            error = (cudaError_t)spart_vcs_device_transpose(product->x, x_copy, product->width,
                                                            g.n_minor, element, stream);
            p.x = x_copy;
            p.x_row_stride = product->width;
            p.x_col_stride = 1;
            p.z = z_copy;
            p.z_row_stride = product->width;
            p.z_col_stride = 1;
        }
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_vcs_device_product(&g, &s, &p, rank1, stream);
        }
        if (error == cudaSuccess && transposed_operands) {
            error = (cudaError_t)spart_vcs_device_transpose(z_copy, product->z, g.n_major,
                                                            product->width, element, stream);
        }
        if (workspace == NULL) {
            cudaError_t freed = cudaFreeAsync(scratch, stream);
            error = error != cudaSuccess ? error : freed;
        }
    }
    if (error != cudaSuccess) {
        status = spart_device_failure(context, (int)error, what);
    }
    spart_device_leave(previous);
    return status;
}

static void cuda_release(spart_vcs_data *data)
{
    device_arrays *d = data->device;
    if (d == NULL) {
        return;
    }
    int previous = -1;
    int current = 0;
    if (cudaGetDevice(&current) == cudaSuccess && current != d->cuda_device &&
        cudaSetDevice(d->cuda_device) == cudaSuccess) {
        previous = current;
    }
    free_arrays(d);
    if (previous >= 0) {
        cudaSetDevice(previous);
    }
    spart_free(&data->allocator, d);
    data->device = NULL;
}

const spart_vcs_ops spart_vcs_cuda_ops = {
    .where = "CUDA device",
    .workspace_bytes = cuda_workspace_bytes,
    .multiply = cuda_multiply,
    .release = cuda_release,
};
