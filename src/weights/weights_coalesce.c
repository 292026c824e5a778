/*
 * src/weights/weights_coalesce.c: sort one element's triples by (input, output) and
 * merge repeated pairs, as regridding's _coalesce (_weights_arrays.py).
 *
 * The sort is stable, so the entries of one pair keep the order the kernel
 * built them in, and a merged value is what NumPy's add.reduceat gives for
 * that run: the first value plus NumPy's pairwise sum of the rest. Both
 * decide the bits of the result, so both are reproduced exactly.
 *
 * The sort orders one integer key per entry, the input's offset from the
 * smallest input index in the high bits and the output's offset below it
 * (the order of the reference's (input - min) * span + (output - min)),
 * carrying the value along, so the sorted list is read back in sequence.
 * Indices too far apart for a 63-bit key are sorted stably by the output
 * offset and then by the input offset instead. Short lists go through a
 * merge sort, long ones through a least-significant-digit radix sort of a
 * few passes of at most 11 bits: stable, O(n log n) and O(n) worst cases,
 * for any spread of the keys. A list that is already sorted with unique
 * pairs (as the 1-D and clipping kernels build them) is left untouched.
 * Memory: 32 bytes per entry besides the list, while sorting.
 */
#include <string.h>

#include "core/internal.h"
#include "weights/weights_kernels.h"

/* Below this many entries a merge sort beats the radix sort's histograms. */
#define COALESCE_RADIX_MIN 2048
/* Below this many entries the merge sort sorts by insertion. */
#define COALESCE_INSERTION_MAX 16
/* The radix sort's digit: at most this many bits per pass. */
#define COALESCE_DIGIT_BITS_MAX 11

/* The number of bits needed to write `value`. */
static int bit_width(uint64_t value)
{
    int bits = 0;
    while (value != 0) {
        bits += 1;
        value >>= 1;
    }
    return bits;
}

/* One entry while sorting: its key, and what travels with it (the value's
 * bits, or the entry's position). Key and payload side by side make each
 * radix pass write one stream per bucket. */
typedef struct sort_item {
    uint64_t key;
    uint64_t payload;
} sort_item;

/* Stable insertion sort of items lo..hi-1 by key. */
static void insertion_sort(sort_item *items, int64_t lo, int64_t hi)
{
    for (int64_t i = lo + 1; i < hi; i++) {
        sort_item item = items[i];
        int64_t j = i;
        while (j > lo && items[j - 1].key > item.key) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = item;
    }
}

/* Stable top-down merge sort of items lo..hi-1 by key, using the same
 * positions of `scratch`. */
static void merge_sort(sort_item *items, sort_item *scratch, int64_t lo, int64_t hi)
{
    if (hi - lo <= COALESCE_INSERTION_MAX) {
        insertion_sort(items, lo, hi);
        return;
    }
    int64_t middle = lo + (hi - lo) / 2;
    merge_sort(items, scratch, lo, middle);
    merge_sort(items, scratch, middle, hi);
    if (items[middle - 1].key <= items[middle].key) {
        return; /* the halves are already in order */
    }
    memcpy(scratch + lo, items + lo, (size_t)(hi - lo) * sizeof *items);
    int64_t a = lo;
    int64_t b = middle;
    for (int64_t k = lo; k < hi; k++) {
        /* take from the left half on ties: that keeps the sort stable */
        if (b >= hi || (a < middle && scratch[a].key <= scratch[b].key)) {
            items[k] = scratch[a++];
        } else {
            items[k] = scratch[b++];
        }
    }
}

/* Stable least-significant-digit radix sort of n items by the low `bits`
 * bits of their keys; `scratch` is used in between. `counts` holds
 * 2^COALESCE_DIGIT_BITS_MAX entries. */
static void radix_sort(sort_item *items, sort_item *scratch, int64_t n, int bits, int64_t *counts)
{
    int passes = (bits + COALESCE_DIGIT_BITS_MAX - 1) / COALESCE_DIGIT_BITS_MAX;
    if (passes == 0) {
        return; /* every key is zero */
    }
    /* spread the bits evenly over the passes, for smaller histograms */
    int digit_bits = (bits + passes - 1) / passes;
    uint64_t mask = ((uint64_t)1 << digit_bits) - 1;
    int64_t buckets = (int64_t)1 << digit_bits;
    sort_item *from = items;
    sort_item *to = scratch;
    for (int pass = 0; pass < passes; pass++) {
        int shift = pass * digit_bits;
        memset(counts, 0, (size_t)buckets * sizeof *counts);
        for (int64_t k = 0; k < n; k++) {
            counts[(from[k].key >> shift) & mask] += 1;
        }
        int64_t start = 0;
        for (int64_t d = 0; d < buckets; d++) {
            int64_t count = counts[d];
            counts[d] = start;
            start += count;
        }
        for (int64_t k = 0; k < n; k++) {
            to[counts[(from[k].key >> shift) & mask]++] = from[k];
        }
        sort_item *swap = from;
        from = to;
        to = swap;
    }
    if (from != items) {
        memcpy(items, from, (size_t)n * sizeof *items);
    }
}

/* The arrays a sort needs: n items, as many scratch items, and the radix
 * sort's bucket counts. */
typedef struct sort_work {
    int64_t n;
    sort_item *items;
    sort_item *scratch;
    int64_t *counts;
} sort_work;

/* Stable sort of the items by key, whose set bits are all below `bits`. */
static void sort_by_key(sort_work *work, int bits)
{
    if (work->n < COALESCE_RADIX_MIN) {
        merge_sort(work->items, work->scratch, 0, work->n);
    } else {
        radix_sort(work->items, work->scratch, work->n, bits, work->counts);
    }
}

/* NumPy's pairwise sum of a[0..n-1] (pairwise_sum in loops_utils.h.src):
 * fewer than 8 terms sequentially from -0.0; up to 128 terms in eight
 * strided accumulators combined as a balanced tree, then the remainder
 * sequentially; more terms split in two halves, the first a multiple of 8. */
static double numpy_pairwise_sum(const double *a, int64_t n)
{
    if (n < 8) {
        double sum = -0.0;
        for (int64_t i = 0; i < n; i++) {
            sum += a[i];
        }
        return sum;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) {
            r[j] = a[j];
        }
        int64_t i = 8;
        for (; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) {
                r[j] += a[i + j];
            }
        }
        double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) {
            sum += a[i];
        }
        return sum;
    }
    int64_t half = n / 2;
    half -= half % 8;
    return numpy_pairwise_sum(a, half) + numpy_pairwise_sum(a + half, n - half);
}

/* Whether the entries are already strictly increasing in (input, output):
 * then every pair is unique and there is nothing to do. */
static int is_sorted_unique(const spart_triples *triples)
{
    for (int64_t k = 1; k < triples->count; k++) {
        int64_t input_before = triples->indices_input[k - 1];
        int64_t input = triples->indices_input[k];
        if (input < input_before || (input == input_before && triples->indices_output[k] <=
                                                                  triples->indices_output[k - 1])) {
            return 0;
        }
    }
    return 1;
}

/* The smallest and largest of a[0..n-1], n >= 1. */
static void min_max(const int64_t *a, int64_t n, int64_t *lowest, int64_t *highest)
{
    int64_t lo = a[0], hi = a[0];
    for (int64_t k = 1; k < n; k++) {
        lo = a[k] < lo ? a[k] : lo;
        hi = a[k] > hi ? a[k] : hi;
    }
    *lowest = lo;
    *highest = hi;
}

/* a - lowest for lowest <= a, computed in unsigned arithmetic so that no
 * span overflows. */
static uint64_t offset_of(int64_t a, int64_t lowest)
{
    return (uint64_t)a - (uint64_t)lowest;
}

static uint64_t bits_of_double(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static double double_of_bits(uint64_t bits)
{
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The usual case, both offsets fitting one 63-bit key: sort (key, value)
 * and write the entries back in sorted order, decoding the key. */
static void sort_narrow(spart_triples *triples, sort_work *work, int64_t min_input,
                        int64_t min_output, int bits_input, int bits_output)
{
    int64_t n = triples->count;
    for (int64_t k = 0; k < n; k++) {
        uint64_t input = offset_of(triples->indices_input[k], min_input);
        uint64_t output = offset_of(triples->indices_output[k], min_output);
        work->items[k].key = (input << bits_output) | output;
        work->items[k].payload = bits_of_double(triples->values[k]);
    }
    sort_by_key(work, bits_input + bits_output);
    uint64_t mask_output = ((uint64_t)1 << bits_output) - 1;
    for (int64_t k = 0; k < n; k++) {
        /* each offset is below 2^63, and the sum lies in [min, max] */
        sort_item item = work->items[k];
        triples->indices_input[k] = min_input + (int64_t)(item.key >> bits_output);
        triples->indices_output[k] = min_output + (int64_t)(item.key & mask_output);
        triples->values[k] = double_of_bits(item.payload);
    }
}

/* The rare case of indices too far apart for one key: sort entry numbers
 * stably by the output offset, then by the input offset, and then gather
 * the entries in that order. 0 on success, -1 when out of memory. */
static int sort_wide(spart_triples *triples, sort_work *work, int64_t min_input, int64_t min_output,
                     int bits_input, int bits_output)
{
    int64_t n = triples->count;
    for (int64_t k = 0; k < n; k++) {
        work->items[k].key = offset_of(triples->indices_output[k], min_output);
        work->items[k].payload = (uint64_t)k;
    }
    sort_by_key(work, bits_output);
    for (int64_t k = 0; k < n; k++) {
        work->items[k].key = offset_of(triples->indices_input[work->items[k].payload], min_input);
    }
    sort_by_key(work, bits_input);

    size_t size = (size_t)n;
    int64_t *input = spart_alloc(triples->allocator, size, sizeof *input);
    int64_t *output = spart_alloc(triples->allocator, size, sizeof *output);
    double *values = spart_alloc(triples->allocator, size, sizeof *values);
    if (input == NULL || output == NULL || values == NULL) {
        spart_free(triples->allocator, input);
        spart_free(triples->allocator, output);
        spart_free(triples->allocator, values);
        return -1;
    }
    for (int64_t k = 0; k < n; k++) {
        uint64_t from = work->items[k].payload;
        input[k] = triples->indices_input[from];
        output[k] = triples->indices_output[from];
        values[k] = triples->values[from];
    }
    spart_free(triples->allocator, triples->indices_input);
    spart_free(triples->allocator, triples->indices_output);
    spart_free(triples->allocator, triples->values);
    triples->indices_input = input;
    triples->indices_output = output;
    triples->values = values;
    triples->capacity = n;
    return 0;
}

/* Merge the runs of equal (input, output) of a sorted list in place: run r
 * is written at position r, never after its own start, so nothing is
 * overwritten before it is read. */
static void merge_runs(spart_triples *triples)
{
    int64_t n = triples->count;
    int64_t *input = triples->indices_input;
    int64_t *output = triples->indices_output;
    double *values = triples->values;
    int64_t runs = 0;
    int64_t start = 0;
    while (start < n) {
        int64_t end = start + 1;
        while (end < n && input[end] == input[start] && output[end] == output[start]) {
            end++;
        }
        /* add.reduceat: the first value, then the pairwise sum of the rest */
        double value = values[start];
        if (end - start > 1) {
            value += numpy_pairwise_sum(values + start + 1, end - start - 1);
        }
        input[runs] = input[start];
        output[runs] = output[start];
        values[runs] = value;
        runs++;
        start = end;
    }
    triples->count = runs;
}

/* Give back the unused tail of the list's arrays. An array the allocator
 * cannot shrink stays as it is, which is still room for `count` entries. */
static void shrink_to_count(spart_triples *triples)
{
    const spart_allocator *allocator = triples->allocator;
    size_t count = (size_t)triples->count;
    int64_t *input = spart_realloc(allocator, triples->indices_input, count, sizeof *input);
    if (input != NULL) {
        triples->indices_input = input;
    }
    int64_t *output = spart_realloc(allocator, triples->indices_output, count, sizeof *output);
    if (output != NULL) {
        triples->indices_output = output;
    }
    double *values = spart_realloc(allocator, triples->values, count, sizeof *values);
    if (values != NULL) {
        triples->values = values;
    }
    triples->capacity = triples->count;
}

spart_status spart_weights_coalesce(spart_triples *triples)
{
    if (triples->count < 2 || is_sorted_unique(triples)) {
        return SPART_OK;
    }
    const spart_allocator *allocator = triples->allocator;
    const size_t n = (size_t)triples->count;
    sort_work work = {
        .n = triples->count,
        .items = spart_alloc(allocator, n, sizeof(sort_item)),
        .scratch = spart_alloc(allocator, n, sizeof(sort_item)),
        .counts = spart_alloc(allocator, (size_t)1 << COALESCE_DIGIT_BITS_MAX, sizeof(int64_t)),
    };
    spart_status status = SPART_ERROR_OUT_OF_MEMORY;
    if (work.items != NULL && work.scratch != NULL && work.counts != NULL) {
        int64_t min_input, max_input, min_output, max_output;
        min_max(triples->indices_input, triples->count, &min_input, &max_input);
        min_max(triples->indices_output, triples->count, &min_output, &max_output);
        int bits_input = bit_width(offset_of(max_input, min_input));
        int bits_output = bit_width(offset_of(max_output, min_output));
        if (bits_input + bits_output <= 63) {
            sort_narrow(triples, &work, min_input, min_output, bits_input, bits_output);
            status = SPART_OK;
        } else if (sort_wide(triples, &work, min_input, min_output, bits_input, bits_output) == 0) {
            status = SPART_OK;
        }
    }
    spart_free(allocator, work.items);
    spart_free(allocator, work.scratch);
    spart_free(allocator, work.counts);
    if (status == SPART_OK) {
        merge_runs(triples);
        shrink_to_count(triples);
    }
    return status;
}
