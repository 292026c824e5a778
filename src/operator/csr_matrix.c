/*
 * src/operator/csr_matrix.c: a CSR matrix from the caller's arrays
 * (spart/csr_matrix.h): the checks of the arguments, the regridder it is
 * (src/operator/csr_matrix_ops.h), and y = alpha op(A) x + beta y over the
 * regridder's product and the elementwise passes of its table.
 */
#include <string.h>

#include "device/device_select.h"
#include "operator/csr_matrix_ops.h"
#include "spart/device.h"

spart_status spart_csr_matrix_select(spart_context *context, int on_device, const char *what,
                                     const spart_csr_matrix_ops **ops)
{
    if (!on_device) {
        *ops = &spart_csr_matrix_host_ops;
        return SPART_OK;
    }
#if defined(SPART_HAVE_CUDA)
    (void)context, (void)what;
    *ops = &spart_csr_matrix_cuda_ops;
    return SPART_OK;
#else
    *ops = NULL;
    return spart_fail(context, SPART_ERROR_NO_DEVICE,
                      "spart was built without CUDA: %s cannot use device arrays (rebuild with "
                      "-DSPART_ENABLE_CUDA=ON)",
                      what);
#endif
}

size_t spart_index_bytes(spart_index_type type)
{
    return type == SPART_INT32 ? sizeof(int32_t) : sizeof(int64_t);
}

size_t spart_value_bytes(spart_value_type type)
{
    return type == SPART_FLOAT32 ? sizeof(float) : sizeof(double);
}

void spart_csr_matrix_options_init(spart_csr_matrix_options *options)
{
    if (options != NULL) {
        memset(options, 0, sizeof *options);
    }
}

void spart_csr_product_init(spart_csr_product *product)
{
    if (product != NULL) {
        memset(product, 0, sizeof *product);
        product->operation = SPART_OPERATION_NONE;
        product->num_vectors = 1;
        product->alpha = 1.0;
        product->beta = 0.0;
        product->vector_type = SPART_FLOAT64;
    }
}

/* The checks that read no array. */
static spart_status check_arguments(spart_context *context, const spart_csr_arrays *a)
{
    if (a->row_ptr_type != SPART_INT32 && a->row_ptr_type != SPART_INT64) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "row_ptr_type = %d is not a spart_index_type (0 int64, 1 int32)",
                          (int)a->row_ptr_type);
    }
    if (a->column_type != SPART_INT32 && a->column_type != SPART_INT64) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "column_type = %d is not a spart_index_type (0 int64, 1 int32)",
                          (int)a->column_type);
    }
    if (a->value_type != SPART_FLOAT64 && a->value_type != SPART_FLOAT32) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "value_type = %d is not a spart_value_type (0 float64, 1 float32)",
                          (int)a->value_type);
    }
    if (a->num_rows < 0 || a->num_columns < 0 || a->num_entries < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_rows = %lld, num_columns = %lld and num_entries = %lld must not "
                          "be negative",
                          (long long)a->num_rows, (long long)a->num_columns,
                          (long long)a->num_entries);
    }
    if (a->row_ptr_type == SPART_INT32 && a->num_entries > INT32_MAX) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "int32 row pointers cannot count %lld entries (use int64)",
                          (long long)a->num_entries);
    }
    if (a->row_ptr == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "row_ptr is NULL (it holds num_rows + 1 values, also for no rows)");
    }
    if (a->num_entries > 0 && (a->columns == NULL || a->values == NULL)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "columns and values must not be NULL for %lld entries",
                          (long long)a->num_entries);
    }
    return SPART_OK;
}

/* The sentence for what a check found, or SPART_OK. */
static spart_status refuse_bad_arrays(spart_context *context, const spart_csr_arrays *a,
                                      const spart_csr_check *found)
{
    int64_t i = found->bad_row_ptr;
    if (i <= a->num_rows) {
        if (i == 0 && found->row_ptr_value != 0) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "row_ptr[0] = %lld, but the first row pointer must be 0",
                              (long long)found->row_ptr_value);
        }
        if (i > 0 && found->row_ptr_value < found->row_ptr_before) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "row_ptr[%lld] = %lld is less than row_ptr[%lld] = %lld: row "
                              "pointers must not decrease",
                              (long long)i, (long long)found->row_ptr_value, (long long)(i - 1),
                              (long long)found->row_ptr_before);
        }
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "row_ptr[num_rows = %lld] = %lld, but it must be num_entries = %lld",
                          (long long)a->num_rows, (long long)found->row_ptr_value,
                          (long long)a->num_entries);
    }
    if (found->bad_entry < a->num_entries) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "columns[%lld] = %lld is outside [0, num_columns = %lld)",
                          (long long)found->bad_entry, (long long)found->column,
                          (long long)a->num_columns);
    }
    return SPART_OK;
}

/* A regridder of the matrix's sizes with one-axis shapes and no arrays. */
static spart_regridder *allocate_regridder(const spart_allocator *allocator, int64_t num_rows,
                                           int64_t num_columns, int cuda_device)
{
    spart_regridder *made = spart_alloc_zero(allocator, 1, sizeof *made);
    if (made == NULL) {
        return NULL;
    }
    made->allocator = *allocator;
    made->owns_arrays = 1;
    made->ops = spart_operator_ops_for(cuda_device);
    made->device.cuda_device = cuda_device >= 0 ? cuda_device : 0;
    spart_axis_map *maps[2] = {&made->input, &made->output};
    int64_t extents[2] = {num_columns, num_rows};
    for (int side = 0; side < 2; side++) {
        maps[side]->shape.ndim = 1;
        maps[side]->shape.dims[0] = extents[side];
        maps[side]->matrix_stride[0] = 1;
        maps[side]->num_batch = 1;
    }
    made->csr.num_rows = num_rows;
    made->csr.num_columns = num_columns;
    return made;
}

/* The matrix around a regridder (taken over: freed on failure). */
static spart_status wrap_regridder(spart_context *context, const spart_csr_matrix_ops *ops,
                                   spart_regridder *regridder, spart_csr_matrix **matrix)
{
    spart_csr_matrix *made = spart_alloc_zero(&context->allocator, 1, sizeof *made);
    if (made == NULL) {
        spart_regridder_free(regridder);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "csr_matrix: out of memory");
    }
    made->allocator = context->allocator;
    made->ops = ops;
    made->regridder = regridder;
    *matrix = made;
    return SPART_OK;
}

/* Set to NULL whichever of csr's arrays are the caller's, so that
 * freeing the regridder leaves them alone. */
static void forget_callers_arrays(const spart_csr_arrays *a, spart_csr *csr)
{
    if ((const void *)csr->row_ptr == a->row_ptr) {
        csr->row_ptr = NULL;
    }
    if ((const void *)csr->columns32 == a->columns) {
        csr->columns32 = NULL;
    }
    if ((const void *)csr->columns64 == a->columns) {
        csr->columns64 = NULL;
    }
    if ((const void *)csr->values32 == a->values) {
        csr->values32 = NULL;
    }
    if ((const void *)csr->values64 == a->values) {
        csr->values64 = NULL;
    }
}

spart_status spart_csr_matrix_create(spart_context *context, const spart_csr_arrays *arrays,
                                     const spart_csr_matrix_options *options,
                                     spart_csr_matrix **matrix)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (arrays == NULL || matrix == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "arrays and matrix must not be NULL");
    }
    *matrix = NULL;
    spart_csr_matrix_options defaults;
    spart_csr_matrix_options_init(&defaults);
    if (options == NULL) {
        options = &defaults;
    }
    spart_status status = check_arguments(context, arrays);
    const spart_csr_matrix_ops *ops = NULL;
    if (status == SPART_OK) {
        status = spart_csr_matrix_select(context, arrays->on_device, "csr_matrix_create", &ops);
    }
    int cuda_device = arrays->on_device ? context->cuda_device : -1;
    if (status == SPART_OK && cuda_device >= 0) {
        status = spart_device_check_exists(context, cuda_device);
    }
    if (status == SPART_OK && options->check) {
        spart_csr_check found;
        status = ops->check_arrays(context, arrays, &found);
        if (status == SPART_OK) {
            status = refuse_bad_arrays(context, arrays, &found);
        }
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_regridder *regridder =
        allocate_regridder(&context->allocator, arrays->num_rows, arrays->num_columns, cuda_device);
    if (regridder == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "csr_matrix: out of memory");
    }
    regridder->csr.num_entries = arrays->num_entries;
    int wrap = options->wrap != 0;
    status = ops->adopt(context, arrays, wrap, regridder);
    if (status != SPART_OK) {
        forget_callers_arrays(arrays, &regridder->csr);
        spart_regridder_free(regridder);
        return status;
    }
    status = wrap_regridder(context, ops, regridder, matrix);
    if (status == SPART_OK) {
        (*matrix)->borrows_row_ptr = wrap && arrays->row_ptr_type == SPART_INT64;
        (*matrix)->borrows_columns = wrap;
        (*matrix)->borrows_values = wrap;
    }
    return status;
}

/* A copy of the matrix's regridder, here or there, as a matrix. */
static spart_status copy_matrix(spart_context *context, const spart_csr_matrix *matrix,
                                int to_device, spart_csr_matrix **result)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (matrix == NULL || result == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "the matrix and the result pointer must not be NULL");
    }
    *result = NULL;
    const spart_csr_matrix_ops *ops = NULL;
    spart_status status = spart_csr_matrix_select(
        context, to_device, to_device ? "csr_matrix_to_device" : "csr_matrix_to_host", &ops);
    spart_regridder *copy = NULL;
    if (status == SPART_OK) {
        status = to_device ? spart_regridder_to_device(context, matrix->regridder, &copy)
                           : spart_regridder_to_host(context, matrix->regridder, &copy);
    }
    if (status == SPART_OK) {
        status = wrap_regridder(context, ops, copy, result);
    }
    return status;
}

spart_status spart_csr_matrix_to_device(spart_context *context, const spart_csr_matrix *matrix,
                                        spart_csr_matrix **device)
{
    return copy_matrix(context, matrix, 1, device);
}

spart_status spart_csr_matrix_to_host(spart_context *context, const spart_csr_matrix *matrix,
                                      spart_csr_matrix **host)
{
    return copy_matrix(context, matrix, 0, host);
}

void spart_csr_matrix_free(spart_csr_matrix *matrix)
{
    if (matrix == NULL) {
        return;
    }
    spart_csr *csr = &matrix->regridder->csr;
    /* The caller's arrays are not the regridder's to free. */
    if (matrix->borrows_row_ptr) {
        csr->row_ptr = NULL;
    }
    if (matrix->borrows_columns) {
        csr->columns32 = NULL;
        csr->columns64 = NULL;
    }
    if (matrix->borrows_values) {
        csr->values32 = NULL;
        csr->values64 = NULL;
    }
    spart_regridder_free(matrix->regridder);
    const spart_allocator allocator = matrix->allocator;
    spart_free(&allocator, matrix);
}

int64_t spart_csr_matrix_num_rows(const spart_csr_matrix *matrix)
{
    return matrix != NULL ? matrix->regridder->csr.num_rows : 0;
}

int64_t spart_csr_matrix_num_columns(const spart_csr_matrix *matrix)
{
    return matrix != NULL ? matrix->regridder->csr.num_columns : 0;
}

int64_t spart_csr_matrix_num_entries(const spart_csr_matrix *matrix)
{
    return matrix != NULL ? matrix->regridder->csr.num_entries : 0;
}

int spart_csr_matrix_on_device(const spart_csr_matrix *matrix)
{
    return matrix != NULL && matrix->regridder->ops->on_device;
}

spart_status spart_csr_matrix_arrays(const spart_csr_matrix *matrix, const int64_t **row_ptr,
                                     const int32_t **columns32, const int64_t **columns64,
                                     const void **values)
{
    if (matrix == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "matrix is NULL");
    }
    return spart_regridder_csr(matrix->regridder, row_ptr, columns32, columns64, values);
}

spart_regridder *spart_csr_matrix_regridder(spart_csr_matrix *matrix)
{
    return matrix != NULL ? matrix->regridder : NULL;
}

/* ---- products ---------------------------------------------------------------------------- */

/* Bytes rounded up to whole 256-byte blocks, so each part of the
 * workspace starts aligned. */
static size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* Where a product's scratch goes: the regridder's own (first, at the
 * workspace's start, as spart_regridder_apply_workspace wants it), the
 * float64 copy of x (float32 vectors), the sums (unless they go straight
 * into a float64 y, beta = 0). */
typedef struct product_layout {
    const spart_regridder *regridder; /* A or its transpose */
    int64_t n_in, n_out, num_vectors;
    int x_converted, sums_apart;
    size_t regridder_bytes, x_bytes, sums_bytes, total;
} product_layout;

static spart_status check_product(spart_context *context, const spart_csr_product *p)
{
    if (p->operation != SPART_OPERATION_NONE && p->operation != SPART_OPERATION_TRANSPOSE) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "operation = %d is not a spart_operation (0 none, 1 transpose)",
                          (int)p->operation);
    }
    if (p->vector_type != SPART_FLOAT64 && p->vector_type != SPART_FLOAT32) {
        return spart_fail(context, SPART_ERROR_UNKNOWN_ENUM,
                          "vector_type = %d is not a spart_value_type (0 float64, 1 float32)",
                          (int)p->vector_type);
    }
    if (p->num_vectors < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "num_vectors = %lld must not be negative", (long long)p->num_vectors);
    }
    return SPART_OK;
}

/* The checks and the layout of a product (builds the transpose when asked
 * for it). */
static spart_status plan_product(spart_context *context, spart_csr_matrix *matrix,
                                 const spart_csr_product *p, product_layout *layout)
{
    memset(layout, 0, sizeof *layout);
    if (matrix == NULL || p == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "matrix and product must not be NULL");
    }
    spart_status status = check_product(context, p);
    spart_regridder *regridder = matrix->regridder;
    if (status == SPART_OK && p->operation == SPART_OPERATION_TRANSPOSE) {
        status = spart_regridder_transpose(context, matrix->regridder, &regridder);
    }
    if (status != SPART_OK) {
        return status;
    }
    layout->regridder = regridder;
    layout->n_in = regridder->csr.num_columns;
    layout->n_out = regridder->csr.num_rows;
    layout->num_vectors = p->num_vectors;
    if (p->num_vectors == 0) {
        return SPART_OK;
    }
    if (layout->n_in > 0 && p->num_vectors > INT64_MAX / layout->n_in) {
        return spart_fail(context, SPART_ERROR_OVERFLOW, "num_vectors = %lld is too large",
                          (long long)p->num_vectors);
    }
    if (layout->n_out > 0 && p->num_vectors > INT64_MAX / layout->n_out) {
        return spart_fail(context, SPART_ERROR_OVERFLOW, "num_vectors = %lld is too large",
                          (long long)p->num_vectors);
    }
    layout->x_converted = p->vector_type == SPART_FLOAT32;
    layout->sums_apart = p->vector_type == SPART_FLOAT32 || p->beta != 0.0;
    layout->regridder_bytes = regridder->ops->workspace_bytes(
        regridder, p->num_vectors, p->num_vectors, spart_threads(context));
    if (layout->x_converted) {
        layout->x_bytes = (size_t)(layout->n_in * p->num_vectors) * sizeof(double);
    }
    if (layout->sums_apart) {
        layout->sums_bytes = (size_t)(layout->n_out * p->num_vectors) * sizeof(double);
    }
    size_t total = round_up(layout->regridder_bytes) + round_up(layout->x_bytes) +
                   round_up(layout->sums_bytes);
    layout->total = total == round_up(layout->regridder_bytes) ? layout->regridder_bytes : total;
    return SPART_OK;
}

spart_status spart_csr_matrix_workspace_size(spart_context *context, spart_csr_matrix *matrix,
                                             const spart_csr_product *product, size_t *bytes)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (bytes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "bytes is NULL");
    }
    *bytes = 0;
    product_layout layout;
    spart_status status = plan_product(context, matrix, product, &layout);
    if (status == SPART_OK) {
        *bytes = layout.total;
    }
    return status;
}

/* Whether [a, a + a_bytes) and [b, b + b_bytes) share memory. */
static int overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    uintptr_t a_begin = (uintptr_t)a, b_begin = (uintptr_t)b;
    return a_bytes > 0 && b_bytes > 0 && a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

static spart_status multiply(spart_context *context, spart_csr_matrix *matrix,
                             const spart_csr_product *p, const void *x, void *y, void *workspace,
                             size_t workspace_bytes, int workspace_is_ours)
{
    product_layout layout;
    spart_status status = plan_product(context, matrix, p, &layout);
    if (status != SPART_OK || layout.num_vectors == 0) {
        return status;
    }
    const size_t element = spart_value_bytes(p->vector_type);
    const size_t x_bytes = (size_t)(layout.n_in * layout.num_vectors) * element;
    const size_t y_bytes = (size_t)(layout.n_out * layout.num_vectors) * element;
    if ((x == NULL && x_bytes > 0) || (y == NULL && y_bytes > 0)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "x and y must not be NULL");
    }
    if (overlap(x, x_bytes, y, y_bytes)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "x and y overlap: y is written while x is still read (give y its own "
                          "memory)");
    }
    if (workspace_bytes < layout.total || (layout.total > 0 && workspace == NULL)) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "workspace of %zu bytes given, %zu needed "
                          "(spart_csr_matrix_workspace_size)",
                          workspace_bytes, layout.total);
    }
    if (y_bytes == 0) {
        return SPART_OK; /* no rows: nothing to write */
    }
    const spart_regridder *regridder = layout.regridder;
    const spart_csr_matrix_ops *ops = matrix->ops;
    status = ops->check_vectors(context, regridder, x_bytes > 0 ? x : NULL, y);
    if (status != SPART_OK) {
        return status;
    }
    char *space = workspace;
    void *regridder_space = layout.regridder_bytes > 0 ? space : NULL;
    double *x_double =
        (double *)(layout.x_converted ? space + round_up(layout.regridder_bytes) : NULL);
    double *sums =
        layout.sums_apart
            ? (double *)(space + round_up(layout.regridder_bytes) + round_up(layout.x_bytes))
            : (double *)y;
    const int64_t x_count = layout.n_in * layout.num_vectors;
    const int64_t y_count = layout.n_out * layout.num_vectors;
    if (layout.x_converted && x_count > 0) {
        status = ops->float_to_double(context, regridder, x, x_count, x_double);
    }
    spart_array x_array;
    memset(&x_array, 0, sizeof x_array);
    x_array.data = layout.x_converted ? x_double : (const double *)x;
    if (layout.num_vectors == 1) {
        x_array.shape.ndim = 1;
        x_array.shape.dims[0] = layout.n_in;
    } else {
        x_array.shape.ndim = 2;
        x_array.shape.dims[0] = layout.num_vectors;
        x_array.shape.dims[1] = layout.n_in;
    }
    if (status == SPART_OK) {
        status = spart_regridder_apply_checked(context, regridder, &x_array, sums, y_count,
                                               regridder_space, layout.regridder_bytes,
                                               workspace_is_ours);
    }
    int plain = !layout.sums_apart && p->alpha == 1.0; /* y holds alpha s already */
    if (status == SPART_OK && !plain) {
        status = ops->combine(context, regridder, sums, y_count, p->alpha, p->beta, y,
                              p->vector_type == SPART_FLOAT32);
    }
    return status;
}

spart_status spart_csr_matrix_multiply_workspace(spart_context *context, spart_csr_matrix *matrix,
                                                 const spart_csr_product *product, const void *x,
                                                 void *y, void *workspace, size_t workspace_bytes)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    return multiply(context, matrix, product, x, y, workspace, workspace_bytes, 0);
}

spart_status spart_csr_matrix_multiply(spart_context *context, spart_csr_matrix *matrix,
                                       const spart_csr_product *product, const void *x, void *y)
{
    size_t bytes = 0;
    spart_status status = spart_csr_matrix_workspace_size(context, matrix, product, &bytes);
    if (status != SPART_OK || bytes == 0) {
        return status != SPART_OK ? status : multiply(context, matrix, product, x, y, NULL, 0, 1);
    }
    const spart_regridder *regridder = matrix->regridder;
    void *workspace = NULL;
    status = regridder->ops->workspace_allocate(context, regridder, bytes, &workspace);
    if (status == SPART_OK) {
        status = multiply(context, matrix, product, x, y, workspace, bytes, 1);
        spart_status freed = regridder->ops->workspace_free(context, regridder, workspace);
        status = status != SPART_OK ? status : freed;
    }
    return status;
}
