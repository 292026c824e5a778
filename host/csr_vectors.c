/*
 * host/csr_vectors.c: the elementwise passes and array checks of a CSR
 * matrix on the host (OpenMP), twin of kernels/csr_vectors.cu; the
 * operations and their order are in src/operator/csr_vectors.h.
 */
#include <math.h>

#include "operator/csr_vectors.h"

void spart_host_combine(const double *sums, int64_t count, double alpha, double beta, void *y,
                        int y_is_float, int threads)
{
    double *y64 = y;
    float *y32 = y;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < count; i++) {
        double result;
        if (beta == 0.0) {
            result = alpha * sums[i];
        } else {
            const double old = y_is_float ? (double)y32[i] : y64[i];
            result = fma(alpha, sums[i], beta * old);
        }
        if (y_is_float) {
            y32[i] = (float)result;
        } else {
            y64[i] = result;
        }
    }
}

void spart_host_float_to_double(const float *from, int64_t count, double *to, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < count; i++) {
        to[i] = (double)from[i];
    }
}

void spart_host_int32_to_int64(const int32_t *from, int64_t count, int64_t *to, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < count; i++) {
        to[i] = (int64_t)from[i];
    }
}

static int64_t index_at(const void *array, int is_int32, int64_t i)
{
    return is_int32 ? (int64_t)((const int32_t *)array)[i] : ((const int64_t *)array)[i];
}

int64_t spart_host_first_bad_row_ptr(const void *row_ptr, int is_int32, int64_t num_rows,
                                     int64_t num_entries, int threads)
{
    int64_t first = num_rows + 1;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : first)
    for (int64_t i = 0; i <= num_rows; i++) {
        const int64_t value = index_at(row_ptr, is_int32, i);
        const int bad = (i == 0 && value != 0) ||
                        (i > 0 && value < index_at(row_ptr, is_int32, i - 1)) ||
                        (i == num_rows && value != num_entries);
        if (bad && i < first) {
            first = i;
        }
    }
    return first;
}

int64_t spart_host_first_bad_column(const void *columns, int is_int32, int64_t num_entries,
                                    int64_t num_columns, int threads)
{
    int64_t first = num_entries;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : first)
    for (int64_t i = 0; i < num_entries; i++) {
        const int64_t column = index_at(columns, is_int32, i);
        if ((column < 0 || column >= num_columns) && i < first) {
            first = i;
        }
    }
    return first;
}
