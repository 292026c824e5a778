/* src/weights/triples.c: the growable list of weights triples. */
#if defined(__linux__)
#define _DEFAULT_SOURCE /* madvise */
#include <sys/mman.h>
#include <unistd.h>
#endif
#include <string.h>

#include "core/internal.h"
#include "weights/triples.h"

void spart_triples_init(spart_triples *triples, const spart_allocator *allocator)
{
    memset(triples, 0, sizeof *triples);
    triples->allocator = allocator;
}

/* Arrays of at least this many bytes are offered transparent huge pages. */
#define HUGE_PAGE_ARRAY_BYTES ((size_t)4 << 20)

#if defined(__linux__) && (defined(MADV_HUGEPAGE) || defined(MADV_POPULATE_WRITE))
/* madvise(advice) over the part of [start, start + bytes) made of whole
 * blocks of `alignment` bytes (a power of two: pages, or huge pages). A
 * hint: a failure is ignored. */
static void advise_aligned_part(void *start, size_t bytes, uintptr_t alignment, int advice)
{
    const uintptr_t address = (uintptr_t)start;
    const uintptr_t first = (address + alignment - 1) / alignment * alignment;
    const uintptr_t last = (address + bytes) / alignment * alignment;
    if (last > first) {
        (void)madvise((char *)start + (first - address), last - first, advice);
    }
}
#endif

/* Ask Linux to back the 2 MiB-aligned part of a large array with
 * transparent huge pages (MADV_HUGEPAGE), as NumPy does for its arrays of
 * 4 MiB or more: paging in a list of weights of tens of megabytes then
 * costs one fault per 2 MiB instead of one per 4 KiB (case c of
 * bench_weights: 90 MB of entries, 18 % of the time of one thread). Only a
 * hint: where the system has no huge pages, or refuses, pages come as
 * before. The memory is the context allocator's; nothing else changes. */
static void advise_huge_pages(void *start, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (start != NULL && bytes >= HUGE_PAGE_ARRAY_BYTES) {
        advise_aligned_part(start, bytes, (uintptr_t)2 << 20, MADV_HUGEPAGE);
    }
#else
    (void)start;
    (void)bytes;
#endif
}

/* Resize the three arrays to `capacity` entries (keeping the first
 * count). realloc, not malloc and copy: large blocks grow in place
 * (mremap), without copying or touching fresh pages. If one array fails,
 * the others may have been resized already; each still holds at least
 * min(old, new capacity) >= count entries, and the capacity recorded is
 * the smaller, so the list stays valid. */
static int resize_arrays(spart_triples *triples, int64_t capacity)
{
    int64_t previous = triples->capacity;
    size_t n = (size_t)capacity;
    triples->capacity = previous < capacity ? previous : capacity;
    int64_t *indices_input =
        spart_realloc(triples->allocator, triples->indices_input, n, sizeof(int64_t));
    if (indices_input == NULL) {
        return -1;
    }
    triples->indices_input = indices_input;
    int64_t *indices_output =
        spart_realloc(triples->allocator, triples->indices_output, n, sizeof(int64_t));
    if (indices_output == NULL) {
        return -1;
    }
    triples->indices_output = indices_output;
    double *values = spart_realloc(triples->allocator, triples->values, n, sizeof(double));
    if (values == NULL) {
        return -1;
    }
    triples->values = values;
    triples->capacity = capacity;
    /* the arrays may have moved to memory not paged in yet */
    triples->prepared = triples->count;
    advise_huge_pages(triples->indices_input, n * sizeof(int64_t));
    advise_huge_pages(triples->indices_output, n * sizeof(int64_t));
    advise_huge_pages(triples->values, n * sizeof(double));
    return 0;
}

/* Ask the system to page in the whole pages of [start, start + bytes) for
 * writing (MADV_POPULATE_WRITE); a failure leaves them to be paged in as
 * they are written, so it is ignored. */
static void page_in_for_writing(void *start, size_t bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const long page_size = sysconf(_SC_PAGESIZE);
    if (page_size > 0 && bytes > 0) {
        advise_aligned_part(start, bytes, (uintptr_t)page_size, MADV_POPULATE_WRITE);
    }
#else
    (void)start;
    (void)bytes;
#endif
}

void spart_triples_prepare(spart_triples *triples, int64_t extra)
{
    const int64_t needed = triples->count + extra;
    if (needed <= triples->prepared) {
        return;
    }
    const int64_t start = triples->prepared > triples->count ? triples->prepared : triples->count;
    int64_t end = start + SPART_TRIPLES_PREPARE > needed ? start + SPART_TRIPLES_PREPARE : needed;
    end = end < triples->capacity ? end : triples->capacity;
    if (end <= start) {
        return;
    }
    const size_t n = (size_t)(end - start);
    page_in_for_writing(triples->indices_input + start, n * sizeof(int64_t));
    page_in_for_writing(triples->indices_output + start, n * sizeof(int64_t));
    page_in_for_writing(triples->values + start, n * sizeof(double));
    triples->prepared = end;
}

int spart_triples_reserve(spart_triples *triples, int64_t capacity)
{
    if (capacity <= triples->capacity) {
        return 0;
    }
    return resize_arrays(triples, capacity);
}

int spart_triples_reserve_more(spart_triples *triples, int64_t extra)
{
    const int64_t needed = triples->count + extra;
    if (needed <= triples->capacity) {
        return 0;
    }
    const int64_t doubled = 2 * triples->capacity;
    return spart_triples_reserve(triples, needed > doubled ? needed : doubled);
}

int spart_triples_reserve_exactly(spart_triples *triples)
{
    int64_t capacity = triples->count > 0 ? triples->count : 1;
    if (triples->capacity <= capacity) {
        return 0;
    }
    return resize_arrays(triples, capacity);
}

int spart_triples_grow(spart_triples *triples)
{
    int64_t grown = triples->capacity < 16 ? 16 : triples->capacity * 2;
    return spart_triples_reserve(triples, grown);
}

int spart_triples_extend(spart_triples *destination, const spart_triples *source)
{
    if (source->count == 0) {
        return 0;
    }
    int64_t needed = destination->count + source->count;
    if (needed > destination->capacity) {
        /* Grow geometrically, so that many extends in a row stay linear. */
        int64_t grown = 2 * destination->capacity > needed ? 2 * destination->capacity : needed;
        if (spart_triples_reserve(destination, grown) != 0) {
            return -1;
        }
    }
    spart_triples_prepare(destination, source->count);
    size_t at = (size_t)destination->count;
    size_t n = (size_t)source->count;
    memcpy(destination->indices_input + at, source->indices_input, n * sizeof(int64_t));
    memcpy(destination->indices_output + at, source->indices_output, n * sizeof(int64_t));
    memcpy(destination->values + at, source->values, n * sizeof(double));
    destination->count = needed;
    return 0;
}

int spart_triples_join(spart_triples *destination, spart_triples *lists, int64_t count, int append)
{
    int64_t total = destination->count;
    for (int64_t k = 0; k < count; k++) {
        total += lists[k].count;
    }
    int failed = append && spart_triples_reserve(destination, total) != 0;
    for (int64_t k = 0; k < count; k++) {
        if (append && !failed && spart_triples_extend(destination, &lists[k]) != 0) {
            failed = 1;
        }
        spart_triples_release(&lists[k]);
    }
    return failed ? -1 : 0;
}

/* How many blocks of rows to hand to threads: a few a thread, so that
 * rows of unequal cost even out; one when serial. */
static int64_t num_blocks_for(int64_t num_rows, int parallel)
{
    int64_t blocks = parallel > 1 ? 4 * (int64_t)parallel : 1;
    return blocks < num_rows ? blocks : num_rows;
}

spart_status spart_triples_list_rows(spart_triples *triples, int64_t num_rows, int parallel,
                                     spart_list_rows list_rows, const void *problem)
{
    const int64_t num_blocks = num_blocks_for(num_rows, parallel);
    if (num_blocks <= 1) {
        const int64_t count_before = triples->count;
        if (list_rows(problem, 0, num_rows, triples) != 0) {
            triples->count = count_before;
            return SPART_ERROR_OUT_OF_MEMORY;
        }
        return SPART_OK;
    }
    const spart_allocator *allocator = triples->allocator;
    spart_triples *lists = spart_alloc(allocator, (size_t)num_blocks, sizeof *lists);
    int *failed = spart_alloc_zero(allocator, (size_t)num_blocks, sizeof *failed);
    if (lists == NULL || failed == NULL) {
        spart_free(allocator, lists);
        spart_free(allocator, failed);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    for (int64_t b = 0; b < num_blocks; b++) {
        spart_triples_init(&lists[b], allocator);
    }
    /* each block writes only its own list and flag */
#pragma omp parallel for schedule(dynamic, 1) num_threads(parallel)
    for (int64_t b = 0; b < num_blocks; b++) {
        int64_t first = b * num_rows / num_blocks;
        int64_t last = (b + 1) * num_rows / num_blocks;
        failed[b] = list_rows(problem, first, last, &lists[b]);
    }
    spart_status status = SPART_OK;
    for (int64_t b = 0; b < num_blocks; b++) {
        if (failed[b] != 0) {
            status = SPART_ERROR_OUT_OF_MEMORY;
        }
    }
    if (spart_triples_join(triples, lists, num_blocks, status == SPART_OK) != 0) {
        status = SPART_ERROR_OUT_OF_MEMORY;
    }
    spart_free(allocator, lists);
    spart_free(allocator, failed);
    return status;
}

void spart_triples_release(spart_triples *triples)
{
    spart_free(triples->allocator, triples->indices_input);
    spart_free(triples->allocator, triples->indices_output);
    spart_free(triples->allocator, triples->values);
    spart_triples_init(triples, triples->allocator);
}
