/*
 * src/permute/permute_check.c: the checks of spart_permute_plan_create on
 * the blocks themselves: counts, the arrays the counts need, finite
 * recoupling values, every subblock inside its flat array, and no
 * destination element covered twice (so that the kernels need no atomics).
 *
 * The last check is cheap for the usual layouts: a subblock whose axes,
 * sorted by stride, each step past the extent of the faster ones cannot
 * repeat an element, and subblocks whose address ranges do not meet
 * cannot share one. Only the subblocks that fail these tests are walked
 * element by element over a bitmap of the destination.
 */
#include <stdlib.h>
#include <string.h>

#include "permute/permute_internal.h"

/* A destination subblock: its address range, and its block and index. */
typedef struct dst_range {
    int64_t low, high; /* the first and last element it touches */
    int64_t block, index;
    int suspect; /* may share an element with itself or another */
} dst_range;

static int compare_ranges(const void *a, const void *b)
{
    const dst_range *x = a, *y = b;
    if (x->low != y->low) {
        return x->low < y->low ? -1 : 1;
    }
    return (x->block > y->block) - (x->block < y->block);
}

/* The first and last elements of a subblock (offset, strides, sizes) into
 * *low and *high; 0 on int64 overflow. */
static int subblock_range(int num_axes, const int64_t *sizes, int64_t offset,
                          const int64_t *strides, int64_t *low, int64_t *high)
{
    int64_t lo = offset, hi = offset;
    for (int k = 0; k < num_axes; k++) {
        int64_t step = 0;
        if (__builtin_mul_overflow(sizes[k] - 1, strides[k], &step)) {
            return 0;
        }
        if (step < 0 ? __builtin_add_overflow(lo, step, &lo)
                     : __builtin_add_overflow(hi, step, &hi)) {
            return 0;
        }
    }
    *low = lo;
    *high = hi;
    return 1;
}

/* Whether the strides alone prove that no element repeats: sorted by
 * |stride|, each axis steps past the extent of the faster ones. */
static int strides_injective(int num_axes, const int64_t *sizes, const int64_t *strides)
{
    int order[SPART_PERMUTE_MAX_AXES];
    int count = 0;
    for (int k = 0; k < num_axes; k++) {
        if (sizes[k] > 1) {
            int at = count++;
            while (at > 0 && llabs(strides[order[at - 1]]) > llabs(strides[k])) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = k;
        }
    }
    int64_t extent = 1; /* elements the faster axes span */
    for (int a = 0; a < count; a++) {
        int64_t stride = llabs(strides[order[a]]);
        if (stride < extent) {
            return 0;
        }
        extent = stride * (sizes[order[a]] - 1) + extent; /* in range: checked by subblock_range */
    }
    return 1;
}

/* Walk a subblock's elements over `bitmap`; 0 when one was already set. */
static int mark_elements(int num_axes, const int64_t *sizes, int64_t offset, const int64_t *strides,
                         uint64_t *bitmap, int64_t *repeated)
{
    int64_t index[SPART_PERMUTE_MAX_AXES] = {0};
    int64_t address = offset;
    if (num_axes < 0 || num_axes > SPART_PERMUTE_MAX_AXES) {
        return 1; /* checked before; this says so to the analyzer */
    }
    for (;;) {
        uint64_t bit = (uint64_t)1 << (address & 63);
        if (bitmap[address >> 6] & bit) {
            *repeated = address;
            return 0;
        }
        bitmap[address >> 6] |= bit;
        int k = num_axes - 1;
        while (k >= 0 && index[k] + 1 == sizes[k]) {
            address -= index[k] * strides[k];
            index[k] = 0;
            k--;
        }
        if (k < 0) {
            return 1;
        }
        index[k]++;
        address += strides[k];
    }
}

/* The counts and arrays of block b, its U finite. */
static spart_status check_block_arrays(spart_context *context, int num_axes, int64_t b,
                                       const spart_permute_block *block, int64_t *elements)
{
    if (num_axes > 0 && block->sizes == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "permute_plan_create: blocks[%lld].sizes is NULL", (long long)b);
    }
    int64_t count = 1;
    for (int k = 0; k < num_axes; k++) {
        if (block->sizes[k] < 0) {
            return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                              "permute_plan_create: blocks[%lld].sizes[%d] = %lld is negative",
                              (long long)b, k, (long long)block->sizes[k]);
        }
        if (__builtin_mul_overflow(count, block->sizes[k], &count)) {
            return spart_fail(
                context, SPART_ERROR_OVERFLOW,
                "permute_plan_create: blocks[%lld] has more elements than int64 holds",
                (long long)b);
        }
    }
    *elements = count;
    int64_t n = block->num_destination, m = block->num_source;
    if (n < 0 || m < 0) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "permute_plan_create: blocks[%lld] has %lld destination and %lld source "
                          "subblocks (counts must be >= 0)",
                          (long long)b, (long long)n, (long long)m);
    }
    if (block->recoupling == NULL && (n != 1 || m != 1)) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "permute_plan_create: blocks[%lld].recoupling is NULL with n = %lld, m = "
                          "%lld (NULL means n = m = 1)",
                          (long long)b, (long long)n, (long long)m);
    }
    if ((n > 0 && (block->destination_offsets == NULL ||
                   (num_axes > 0 && block->destination_strides == NULL))) ||
        (m > 0 &&
         (block->source_offsets == NULL || (num_axes > 0 && block->source_strides == NULL)))) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "permute_plan_create: blocks[%lld] lacks offsets or strides for its %lld "
                          "destination and %lld source subblocks",
                          (long long)b, (long long)n, (long long)m);
    }
    if (block->recoupling != NULL) {
        int64_t terms = 0;
        if (__builtin_mul_overflow(n, m, &terms)) {
            return spart_fail(context, SPART_ERROR_OVERFLOW,
                              "permute_plan_create: blocks[%lld]: n * m overflows", (long long)b);
        }
        for (int64_t t = 0; t < terms; t++) {
            double u = block->recoupling[t];
            if (u - u != 0.0) {
                return spart_fail(
                    context, SPART_ERROR_NOT_FINITE,
                    "permute_plan_create: blocks[%lld].recoupling[%lld] = %g is not finite",
                    (long long)b, (long long)t, u);
            }
        }
    }
    return SPART_OK;
}

/* A subblock inside [0, length). */
static spart_status check_inside(spart_context *context, int num_axes, const int64_t *sizes,
                                 int64_t offset, const int64_t *strides, int64_t length,
                                 const char *side, int64_t b, int64_t index, int64_t *low,
                                 int64_t *high)
{
    if (!subblock_range(num_axes, sizes, offset, strides, low, high) || *low < 0 ||
        *high >= length) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "permute_plan_create: blocks[%lld] %s subblock %lld (offset %lld) "
                          "reaches outside the %s array of %lld elements",
                          (long long)b, side, (long long)index, (long long)offset, side,
                          (long long)length);
    }
    return SPART_OK;
}

/* Walk the suspect subblocks over a bitmap of the destination. */
static spart_status walk_suspects(spart_context *context, int num_axes, const int *permutation,
                                  const spart_permute_block *blocks, const dst_range *ranges,
                                  int64_t count, int64_t destination_length)
{
    const spart_allocator *allocator = &context->allocator;
    uint64_t *bitmap =
        spart_alloc_zero(allocator, (size_t)(destination_length / 64 + 1), sizeof(uint64_t));
    if (bitmap == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "permute_plan_create: out of memory");
    }
    spart_status status = SPART_OK;
    for (int64_t r = 0; r < count && status == SPART_OK; r++) {
        if (!ranges[r].suspect) {
            continue;
        }
        const spart_permute_block *block = &blocks[ranges[r].block];
        int64_t sizes[SPART_PERMUTE_MAX_AXES];
        for (int k = 0; k < num_axes; k++) {
            sizes[k] = block->sizes[permutation[k]];
        }
        int64_t i = ranges[r].index, repeated = 0;
        if (!mark_elements(num_axes, sizes, block->destination_offsets[i],
                           block->destination_strides + i * num_axes, bitmap, &repeated)) {
            status = spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                                "permute_plan_create: destination element %lld is written twice "
                                "(blocks[%lld] destination subblock %lld)",
                                (long long)repeated, (long long)ranges[r].block, (long long)i);
        }
    }
    spart_free(allocator, bitmap);
    return status;
}

spart_status spart_permute_check_blocks(spart_context *context, int num_axes,
                                        const int *permutation, int64_t num_blocks,
                                        const spart_permute_block *blocks, int64_t source_length,
                                        int64_t destination_length)
{
    int64_t num_ranges = 0;
    for (int64_t b = 0; b < num_blocks; b++) {
        int64_t elements = 0;
        spart_status status = check_block_arrays(context, num_axes, b, &blocks[b], &elements);
        if (status != SPART_OK) {
            return status;
        }
        if (elements > 0) {
            num_ranges += blocks[b].num_destination;
        }
    }
    const spart_allocator *allocator = &context->allocator;
    dst_range *ranges =
        spart_alloc(allocator, (size_t)(num_ranges > 0 ? num_ranges : 1), sizeof *ranges);
    if (ranges == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "permute_plan_create: out of memory");
    }
    spart_status status = SPART_OK;
    int64_t count = 0;
    for (int64_t b = 0; b < num_blocks && status == SPART_OK; b++) {
        const spart_permute_block *block = &blocks[b];
        int64_t sizes[SPART_PERMUTE_MAX_AXES], low = 0, high = 0;
        int empty = 0;
        for (int k = 0; k < num_axes; k++) {
            sizes[k] = block->sizes[permutation[k]];
            empty |= sizes[k] == 0;
        }
        if (empty) {
            continue;
        }
        for (int64_t j = 0; j < block->num_source && status == SPART_OK; j++) {
            status = check_inside(context, num_axes, block->sizes, block->source_offsets[j],
                                  block->source_strides + j * num_axes, source_length, "source", b,
                                  j, &low, &high);
        }
        for (int64_t i = 0; i < block->num_destination && status == SPART_OK; i++) {
            const int64_t *strides = block->destination_strides + i * num_axes;
            status = check_inside(context, num_axes, sizes, block->destination_offsets[i], strides,
                                  destination_length, "destination", b, i, &low, &high);
            ranges[count] =
                (dst_range){low, high, b, i, !strides_injective(num_axes, sizes, strides)};
            count++;
        }
    }
    if (status == SPART_OK) {
        /* Subblocks in a chain of meeting ranges are suspects too. */
        qsort(ranges, (size_t)count, sizeof *ranges, compare_ranges);
        int any = 0;
        int64_t first = 0, reach = -1; /* the chain's first range, its highest element */
        for (int64_t r = 0; r <= count; r++) {
            if (r == count || ranges[r].low > reach) {
                for (int64_t s = first; r - first > 1 && s < r; s++) {
                    ranges[s].suspect = 1;
                }
                first = r;
            }
            if (r < count) {
                reach = ranges[r].high > reach ? ranges[r].high : reach;
                any |= ranges[r].suspect || r > first;
            }
        }
        if (any) {
            status = walk_suspects(context, num_axes, permutation, blocks, ranges, count,
                                   destination_length);
        }
    }
    spart_free(allocator, ranges);
    return status;
}
