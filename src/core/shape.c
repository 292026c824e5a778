/* src/core/shape.c: NumPy's shape and axis rules. */
#include <string.h>

#include "core/internal.h"
#include "core/shape.h"

int spart_shape_is_valid(const spart_shape *shape)
{
    if (shape->ndim < 0 || shape->ndim > SPART_MAX_NDIM) {
        return 0;
    }
    for (int k = 0; k < shape->ndim; k++) {
        if (shape->dims[k] < 0) {
            return 0;
        }
    }
    return spart_shape_size(shape) >= 0;
}

int spart_shape_equal(const spart_shape *a, const spart_shape *b)
{
    if (a->ndim != b->ndim) {
        return 0;
    }
    for (int k = 0; k < a->ndim; k++) {
        if (a->dims[k] != b->dims[k]) {
            return 0;
        }
    }
    return 1;
}

int spart_shape_broadcast(const spart_shape *a, const spart_shape *b, spart_shape *result)
{
    spart_shape out;
    memset(&out, 0, sizeof out);
    out.ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int k = 0; k < out.ndim; k++) {
        /* k counts from the last axis. */
        int64_t da = k < a->ndim ? a->dims[a->ndim - 1 - k] : 1;
        int64_t db = k < b->ndim ? b->dims[b->ndim - 1 - k] : 1;
        int64_t d;
        if (da == db || db == 1) {
            d = da;
        } else if (da == 1) {
            d = db;
        } else {
            return -1;
        }
        out.dims[out.ndim - 1 - k] = d;
    }
    *result = out;
    return 0;
}

int spart_shape_broadcasts_to(const spart_shape *shape, const spart_shape *target)
{
    if (shape->ndim > target->ndim) {
        return 0;
    }
    for (int k = 0; k < shape->ndim; k++) {
        int64_t d = shape->dims[shape->ndim - 1 - k];
        if (d != 1 && d != target->dims[target->ndim - 1 - k]) {
            return 0;
        }
    }
    return 1;
}

int spart_axes_normalize(int count, const int *axes, int ndim, int descending, int *normalized,
                         int *normalized_count, int *bad)
{
    int n = 0;
    if (count <= 0 || axes == NULL) {
        for (int k = 0; k < ndim; k++) {
            normalized[n++] = k - ndim;
        }
    } else {
        for (int k = 0; k < count; k++) {
            int axis = axes[k];
            if (axis < -ndim || axis >= ndim) {
                *bad = k;
                return -1;
            }
            int negative = axis < 0 ? axis : axis - ndim;
            for (int m = 0; m < n; m++) {
                if (normalized[m] == negative) {
                    *bad = k;
                    return -2;
                }
            }
            normalized[n++] = negative;
        }
    }
    /* Insertion sort: at most SPART_MAX_NDIM numbers. */
    for (int k = 1; k < n; k++) {
        int value = normalized[k];
        int m = k - 1;
        while (m >= 0 && (descending ? normalized[m] < value : normalized[m] > value)) {
            normalized[m + 1] = normalized[m];
            m--;
        }
        normalized[m + 1] = value;
    }
    *normalized_count = n;
    return 0;
}

spart_status spart_axes_normalize_checked(struct spart_context *context, const char *name,
                                          int count, const int *axes, int ndim, const char *what,
                                          int *normalized, int *normalized_count)
{
    int bad = 0;
    int status = spart_axes_normalize(count, axes, ndim, 1, normalized, normalized_count, &bad);
    if (status == -1) {
        return spart_fail(context, SPART_ERROR_AXIS_OUT_OF_RANGE,
                          "%s[%d] = %d is out of range for %s with %d axes", name, bad, axes[bad],
                          what, ndim);
    }
    if (status == -2) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "%s[%d] = %d is repeated", name,
                          bad, axes[bad]);
    }
    return SPART_OK;
}

spart_shape spart_shape_without_axes(const spart_shape *shape, const int *axes, int count)
{
    spart_shape result;
    memset(&result, 0, sizeof result);
    for (int k = 0; k < shape->ndim; k++) {
        if (!spart_axes_contain(axes, count, k - shape->ndim)) {
            result.dims[result.ndim++] = shape->dims[k];
        }
    }
    return result;
}

int spart_axes_contain(const int *axes, int count, int axis)
{
    for (int k = 0; k < count; k++) {
        if (axes[k] == axis) {
            return 1;
        }
    }
    return 0;
}

void spart_broadcast_strides(const spart_shape *shape, const spart_shape *target, int64_t *strides)
{
    int64_t stride = 1;
    for (int k = target->ndim - 1; k >= 0; k--) {
        int source = k - (target->ndim - shape->ndim);
        if (source < 0 || shape->dims[source] == 1) {
            strides[k] = 0;
        } else {
            strides[k] = stride;
        }
        if (source >= 0) {
            stride *= shape->dims[source];
        }
    }
}

/* Where the block of `orthogonal_index` starts in an array of these
 * strides: the orthogonal (not resampled) axes' part of the offset. */
static int64_t block_base(const int64_t *strides, const spart_shape *full, const int *resampled,
                          int num_resampled, const int64_t *orthogonal_index)
{
    int64_t base = 0;
    int o = 0;
    for (int k = 0; k < full->ndim; k++) {
        if (!spart_axes_contain(resampled, num_resampled, k)) {
            base += orthogonal_index[o++] * strides[k];
        }
    }
    return base;
}

/* Values of a block: the product of the resampled extents. */
static int64_t block_count(const spart_shape *full, const int *resampled, int num_resampled)
{
    int64_t count = 1;
    for (int r = 0; r < num_resampled; r++) {
        count *= full->dims[resampled[r]];
    }
    return count;
}

/* The next value of a block in C order: the resampled multi-index
 * `index` advanced like an odometer, *offset following it. */
static void block_step(const int64_t *strides, const spart_shape *full, const int *resampled,
                       int num_resampled, int64_t *index, int64_t *offset)
{
    for (int r = num_resampled - 1; r >= 0; r--) {
        int axis = resampled[r];
        index[r]++;
        *offset += strides[axis];
        if (index[r] < full->dims[axis]) {
            return;
        }
        *offset -= index[r] * strides[axis];
        index[r] = 0;
    }
}

const double *spart_block_in_place(const double *data, const int64_t *strides,
                                   const spart_shape *full, const int *resampled, int num_resampled,
                                   const int64_t *orthogonal_index)
{
    int64_t dense_stride = 1;
    for (int r = num_resampled - 1; r >= 0; r--) {
        const int64_t extent = full->dims[resampled[r]];
        if (extent > 1 && strides[resampled[r]] != dense_stride) {
            return NULL;
        }
        dense_stride *= extent;
    }
    return data + block_base(strides, full, resampled, num_resampled, orthogonal_index);
}

void spart_gather_block(const double *data, const int64_t *strides, const spart_shape *full,
                        const int *resampled, int num_resampled, const int64_t *orthogonal_index,
                        double *block)
{
    int64_t count = block_count(full, resampled, num_resampled);
    int64_t index[SPART_MAX_NDIM] = {0};
    int64_t offset = block_base(strides, full, resampled, num_resampled, orthogonal_index);
    for (int64_t flat = 0; flat < count; flat++) {
        block[flat] = data[offset];
        block_step(strides, full, resampled, num_resampled, index, &offset);
    }
}

void spart_unravel(int64_t flat, const spart_shape *shape, int64_t *index)
{
    for (int k = shape->ndim - 1; k >= 0; k--) {
        int64_t n = shape->dims[k];
        index[k] = n > 0 ? flat % n : 0;
        flat = n > 0 ? flat / n : 0;
    }
}

spart_shape spart_shape_insert_axes(const spart_shape *orthogonal, const spart_shape *shape,
                                    const int *axes_descending, int count)
{
    int64_t reversed[SPART_MAX_NDIM + 1] = {0};
    int n = 0;
    for (int k = orthogonal->ndim - 1; k >= 0; k--) {
        reversed[n++] = orthogonal->dims[k];
    }
    for (int a = 0; a < count; a++) {
        int position = -1 - axes_descending[a]; /* ~ax in Python */
        if (position > n) {
            position = n; /* list.insert past the end appends */
        }
        for (int k = n; k > position; k--) {
            reversed[k] = reversed[k - 1];
        }
        reversed[position] = shape->dims[shape->ndim + axes_descending[a]];
        n++;
    }
    spart_shape result;
    memset(&result, 0, sizeof result);
    result.ndim = n;
    for (int k = 0; k < n; k++) {
        result.dims[k] = reversed[n - 1 - k];
    }
    return result;
}

void spart_scatter_block(const double *block, const spart_shape *full, const int *resampled,
                         int num_resampled, const int64_t *orthogonal_index, double *data)
{
    int64_t strides[SPART_MAX_NDIM];
    int64_t stride = 1;
    for (int k = full->ndim - 1; k >= 0; k--) {
        strides[k] = stride;
        stride *= full->dims[k];
    }
    int64_t count = block_count(full, resampled, num_resampled);
    int64_t index[SPART_MAX_NDIM] = {0};
    int64_t offset = block_base(strides, full, resampled, num_resampled, orthogonal_index);
    for (int64_t flat = 0; flat < count; flat++) {
        data[offset] = block[flat];
        block_step(strides, full, resampled, num_resampled, index, &offset);
    }
}

int64_t spart_broadcast_index(int64_t flat, const spart_shape *joined, const spart_shape *source)
{
    int64_t index[SPART_MAX_NDIM];
    spart_unravel(flat, joined, index);
    int64_t result = 0;
    int shift = joined->ndim - source->ndim;
    for (int k = 0; k < source->ndim; k++) {
        int64_t i = source->dims[k] == 1 ? 0 : index[k + shift];
        result = result * source->dims[k] + i;
    }
    return result;
}
