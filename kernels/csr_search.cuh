/*
 * kernels/csr_search.cuh: the two binary searches the device builds share
 * (kernels/csr_assemble.cu, kernels/csr_transpose.cu): the piece of a
 * partition holding an index, and the count of sorted keys below a value.
 */
#ifndef SPART_CSR_SEARCH_CUH
#define SPART_CSR_SEARCH_CUH

#include <stdint.h>

/* The last p in [0, count) with starts[p] <= k, for ascending starts with
 * starts[0] <= k < starts[count]: the element holding weights entry k
 * (starts = offsets), or the row holding matrix entry k (starts =
 * row_ptr). Empty pieces are skipped as host/csr_assemble.c's element_of
 * skips them. */
__device__ __forceinline__ int64_t piece_holding(const int64_t *__restrict__ starts, int64_t count,
                                                 int64_t k)
{
    int64_t low = 0, high = count; /* starts[low] <= k < starts[high] */
    while (high - low > 1) {
        const int64_t middle = low + (high - low) / 2;
        if (starts[middle] <= k) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

/* How many of the num_items ascending keys are below `value`. */
template <typename Key>
__device__ __forceinline__ int64_t keys_below(const Key *__restrict__ keys, int64_t num_items,
                                              int64_t value)
{
    int64_t low = 0, high = num_items; /* keys[.. low) < value <= keys[high ..) */
    while (low < high) {
        const int64_t middle = low + (high - low) / 2;
        if ((int64_t)keys[middle] < value) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

#endif /* SPART_CSR_SEARCH_CUH */
