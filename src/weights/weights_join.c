/*
 * src/weights/weights_join.c: the weights' arrays of a build, filled
 * element by element in element order while the elements are built side
 * by side (src/weights/weights_join.h says how), so that the result is
 * the same for any thread count. The driver of the builders
 * (src/weights/weights_build.c) takes a list per element from here and
 * hands each finished element back.
 */
#include <string.h>

#include "weights/weights_join.h"

/* Make room for `needed` entries, the entries of `placed` elements. When
 * the arrays must grow, they grow to twice what all the elements would
 * need at the mean size of those placed (the elements may grow along the
 * stack), and at least to twice their capacity: a growth may copy the
 * arrays, so it should seldom come, and room never written costs no
 * memory (its pages are never touched; the arrays are cut to size at the
 * end). 0 on success, -1 when out of memory. */
static int reserve_for_the_rest(spart_joined_entries *joined, int64_t placed, int64_t needed)
{
    const int64_t capacity = joined->entries.capacity;
    if (needed <= capacity) {
        return 0;
    }
    double grown = 2.0 * (double)needed / (double)placed * (double)joined->num_elements;
    grown = grown > 2.0 * (double)capacity ? grown : 2.0 * (double)capacity;
    if (grown < 0x1p62 && spart_triples_reserve(&joined->entries, (int64_t)grown) == 0) {
        return 0;
    }
    return spart_triples_reserve(&joined->entries, needed);
}

/* Give element `element` an empty list, with the memory of an appended
 * element's list when there is one; NULL when an element has failed (the
 * build will fail: the rest are skipped). Call from one thread at a
 * time. */
spart_triples *spart_joined_take_list(spart_joined_entries *joined, int64_t element)
{
    if (joined->failed) {
        return NULL; /* the build has failed: no need to build this one */
    }
    spart_triples *list = &joined->lists[element];
    if (joined->num_spare > 0) {
        spart_triples *spare = &joined->lists[joined->spare[--joined->num_spare]];
        *list = *spare;
        spart_triples_init(spare, spare->allocator);
    }
    list->count = 0;
    return list;
}

/* Append element `element`'s entries (none when `ok` is 0: its kernel
 * failed) and record where it ends. */
static void append_element(spart_joined_entries *joined, int64_t element, int ok)
{
    spart_triples *list = &joined->lists[element];
    if (ok && !joined->out_of_memory) {
        const int64_t needed = joined->entries.count + list->count;
        if (reserve_for_the_rest(joined, element + 1, needed) != 0 ||
            spart_triples_extend(&joined->entries, list) != 0) {
            joined->out_of_memory = 1;
        }
    }
    joined->offsets[element + 1] = joined->entries.count;
    list->count = 0;
}

/* The next element to append, under the lock: -1 when it is not built yet
 * (the calling thread then stops appending). */
static int64_t next_to_append(spart_joined_entries *joined)
{
    int64_t next = -1;
#pragma omp critical(spart_weights_join)
    {
        if (joined->next < joined->num_elements && joined->built[joined->next]) {
            next = joined->next;
        } else {
            joined->appending = 0;
        }
    }
    return next;
}

/* Record that element `element`'s kernel has finished (statuses[e] says
 * whether element e succeeded) and, unless another thread is appending,
 * append every finished element that is next in line. */
void spart_joined_finish_element(const spart_context *context, spart_joined_entries *joined,
                                 int64_t element, const spart_status *statuses)
{
    int append = 0;
#pragma omp critical(spart_weights_join)
    {
        joined->built[element] = 1;
        joined->failed = joined->failed || statuses[element] != SPART_OK;
        append = !joined->appending;
        joined->appending = 1;
    }
    for (int64_t next = append ? next_to_append(joined) : -1; next >= 0;
         next = next_to_append(joined)) {
        append_element(joined, next, statuses[next] == SPART_OK);
        const int out_of_memory = joined->out_of_memory;
#pragma omp critical(spart_weights_join)
        {
            joined->next = next + 1;
            joined->spare[joined->num_spare++] = next; /* its list's memory, to hand on */
            joined->failed = joined->failed || out_of_memory;
            spart_report_progress(context, "weights", next + 1, joined->num_elements);
        }
    }
}

/* The per-element bookkeeping of `joined`; 0 on success, -1 when out of
 * memory. */
int spart_joined_init(spart_joined_entries *joined, const spart_allocator *allocator,
                      int64_t num_elements)
{
    const size_t slots = (size_t)(num_elements > 0 ? num_elements : 1);
    memset(joined, 0, sizeof *joined);
    spart_triples_init(&joined->entries, allocator);
    joined->num_elements = num_elements;
    joined->offsets = spart_alloc_zero(allocator, slots + 1, sizeof(int64_t));
    joined->lists = spart_alloc(allocator, slots, sizeof(spart_triples));
    joined->built = spart_alloc_zero(allocator, slots, sizeof(unsigned char));
    joined->spare = spart_alloc(allocator, slots, sizeof(int64_t));
    if (joined->lists != NULL) {
        for (int64_t e = 0; e < num_elements; e++) {
            spart_triples_init(&joined->lists[e], allocator);
        }
    }
    return joined->offsets != NULL && joined->lists != NULL && joined->built != NULL &&
                   joined->spare != NULL
               ? 0
               : -1;
}

void spart_joined_release(spart_joined_entries *joined)
{
    const spart_allocator *allocator = joined->entries.allocator;
    if (joined->lists != NULL) {
        for (int64_t e = 0; e < joined->num_elements; e++) {
            spart_triples_release(&joined->lists[e]);
        }
    }
    spart_triples_release(&joined->entries);
    spart_free(allocator, joined->offsets);
    spart_free(allocator, joined->lists);
    spart_free(allocator, joined->built);
    spart_free(allocator, joined->spare);
}

/* Before element `element` (> 0) is built straight into the joined arrays:
 * room for one more element of the mean size so far. */
void spart_joined_reserve_for_next(spart_joined_entries *joined, int64_t element)
{
    const int64_t count = joined->entries.count;
    if (!joined->out_of_memory &&
        reserve_for_the_rest(joined, element + 1, count + count / element) != 0) {
        joined->out_of_memory = 1;
    }
}
