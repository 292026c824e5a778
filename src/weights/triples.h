/*
 * src/weights/triples.h: a growable list of weights triples (input index, output
 * index, value), the unit every weights kernel appends to. A kernel that
 * works in parallel gives each thread or grid line its own list and joins
 * them in a fixed order, so the result does not depend on the thread count.
 */
#ifndef SPART_TRIPLES_H
#define SPART_TRIPLES_H

#include <stdint.h>

#include "spart/common.h"

typedef struct spart_triples {
    const spart_allocator *allocator;
    int64_t count;
    int64_t capacity;
    int64_t prepared; /* entries below this have their memory paged in (a hint) */
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
} spart_triples;

/* An empty list that allocates through `allocator` (not owned). */
void spart_triples_init(spart_triples *triples, const spart_allocator *allocator);

/* Make room for at least `capacity` entries. 0 on success, -1 when out of
 * memory (the list is unchanged then). */
int spart_triples_reserve(spart_triples *triples, int64_t capacity);

/* Make room for `extra` entries beyond the count; when the capacity must
 * grow, it grows to at least twice what it was, so that a run of calls
 * (a kernel appending many elements to one list) copies the entries only
 * a few times. 0 on success, -1 when out of memory. */
int spart_triples_reserve_more(spart_triples *triples, int64_t extra);

/* Double the capacity (at least 16); 0 on success, -1 out of memory. */
int spart_triples_grow(spart_triples *triples);

/* The fewest entries spart_triples_prepare asks the system for at once
 * (128 KiB of each array): fewer requests cost more calls, more page in
 * memory a list may never use. */
#define SPART_TRIPLES_PREPARE 16384

/* Append one entry; 0 on success, -1 when out of memory. Inline: kernels
 * call it once per entry. */
static inline int spart_triples_append(spart_triples *triples, int64_t index_input,
                                       int64_t index_output, double value)
{
    if (triples->count == triples->capacity && spart_triples_grow(triples) != 0) {
        return -1;
    }
    int64_t k = triples->count++;
    triples->indices_input[k] = index_input;
    triples->indices_output[k] = index_output;
    triples->values[k] = value;
    return 0;
}

/* Shrink the capacity to the count (at least 1); 0 on success, -1 when
 * out of memory (the list stays valid). */
int spart_triples_reserve_exactly(spart_triples *triples);

/* Have the memory of entries count .. count + extra - 1 (at most to the
 * capacity) paged in for writing, so that writing them takes no page
 * faults: where it is not paged in yet, ask the system for it in one
 * request per array (MADV_POPULATE_WRITE), at least SPART_TRIPLES_PREPARE
 * entries at a time, which costs about a third less than faulting fresh
 * memory in a page at a time as the entries are written. Only a hint:
 * nothing happens where the system cannot (not Linux, a kernel older than
 * 5.14), and memory paged in once (below `prepared`) is not asked for
 * again. */
void spart_triples_prepare(spart_triples *triples, int64_t extra);

/* Append all of `source` to `destination`; 0 on success, -1 out of memory. */
int spart_triples_extend(spart_triples *destination, const spart_triples *source);

/* Append lists[0 .. count-1] to `destination` in order (when `append` is
 * nonzero; a failed parallel build passes 0 to only clean up), reserving
 * the room once, then release every list. 0 on success, -1 when out of
 * memory (every list is released all the same). */
int spart_triples_join(spart_triples *destination, spart_triples *lists, int64_t count, int append);

/* Rows 0 .. num_rows - 1 of a problem, each listed by
 * list_rows(problem, first, last, list) (rows first .. last - 1 appended
 * to `list`; nonzero when out of memory), appended to `triples` in row
 * order. With parallel <= 1 straight into `triples`; else in blocks of
 * rows, a few a thread (rows of unequal cost even out), each into its own
 * list by up to `parallel` OpenMP threads, joined in block order: the same
 * entries in the same order whatever the number of threads.
 * SPART_ERROR_OUT_OF_MEMORY leaves `triples` as it came. */
typedef int (*spart_list_rows)(const void *problem, int64_t first, int64_t last,
                               spart_triples *list);
spart_status spart_triples_list_rows(spart_triples *triples, int64_t num_rows, int parallel,
                                     spart_list_rows list_rows, const void *problem);

/* Free the arrays and leave an empty list. */
void spart_triples_release(spart_triples *triples);

#endif /* SPART_TRIPLES_H */
