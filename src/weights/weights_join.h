/*
 * src/weights/weights_join.h: the joining of the elements' entries of a
 * weights build, in element order, while the elements are built side by
 * side (src/weights/weights_join.c; used by src/weights/weights_build.c).
 */
#ifndef SPART_WEIGHTS_JOIN_H
#define SPART_WEIGHTS_JOIN_H

#include <stdint.h>

#include "core/internal.h"
#include "weights/triples.h"

/* The weights' arrays, filled element by element in element order, and
 * what the elements built out of turn wait in. Elements are built side by
 * side, each into a list of its own, and a finished element is appended
 * to the arrays as soon as every element before it has been. One thread
 * at a time appends (whichever finds none appending when it finishes an
 * element), copying outside the lock, while the others go on to their
 * next elements: no thread ever waits for another one's kernel (which a
 * busy core could hold up for long) nor for a copy. The list memory of
 * appended elements is handed on to elements not yet started, so that a
 * build allocates (and touches fresh pages) for a few lists, not one per
 * element. The lock (critical spart_weights_join) guards `next`, `built`,
 * `spare`, `num_spare`, `appending` and `failed`; `entries`, `offsets` and
 * `out_of_memory` belong to the appending thread. */
typedef struct spart_joined_entries {
    spart_triples entries; /* elements 0 .. next - 1 */
    int64_t *offsets;      /* num_elements + 1 */
    int64_t num_elements;
    int64_t next;         /* the next element to append */
    spart_triples *lists; /* per element: the list it is built into */
    unsigned char *built; /* per element: whether its kernel has finished */
    int64_t *spare;       /* appended elements whose lists hold memory to hand on */
    int64_t num_spare;
    int appending;     /* a thread is appending */
    int out_of_memory; /* an element could not be appended */
    int failed;        /* an element failed or could not be appended: skip the rest */
} spart_joined_entries;

/* The per-element bookkeeping of `joined`; 0 on success, -1 when out of
 * memory. */
int spart_joined_init(spart_joined_entries *joined, const spart_allocator *allocator,
                      int64_t num_elements);

void spart_joined_release(spart_joined_entries *joined);

/* Give element `element` an empty list to be built into, with the memory
 * of an appended element's list when there is one; NULL when an element
 * has failed (the rest are skipped). Call under the lock (critical
 * spart_weights_join). */
spart_triples *spart_joined_take_list(spart_joined_entries *joined, int64_t element);

/* Record that element `element`'s kernel has finished (statuses[e] says
 * whether element e succeeded) and, unless another thread is appending,
 * append every finished element that is next in line. */
void spart_joined_finish_element(const spart_context *context, spart_joined_entries *joined,
                                 int64_t element, const spart_status *statuses);

/* Before element `element` (> 0) is built straight into the joined arrays:
 * room for one more element of the mean size so far. */
void spart_joined_reserve_for_next(spart_joined_entries *joined, int64_t element);

#endif /* SPART_WEIGHTS_JOIN_H */
