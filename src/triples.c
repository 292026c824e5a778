/* src/triples.c: the growable list of weights triples. */
#include <string.h>

#include "internal.h"
#include "triples.h"

void spart_triples_init(spart_triples *triples, const spart_allocator *allocator)
{
    memset(triples, 0, sizeof *triples);
    triples->allocator = allocator;
}

int spart_triples_reserve(spart_triples *triples, int64_t capacity)
{
    if (capacity <= triples->capacity) {
        return 0;
    }
    size_t n = (size_t)capacity;
    int64_t *indices_input = spart_alloc(triples->allocator, n, sizeof(int64_t));
    int64_t *indices_output = spart_alloc(triples->allocator, n, sizeof(int64_t));
    double *values = spart_alloc(triples->allocator, n, sizeof(double));
    if (indices_input == NULL || indices_output == NULL || values == NULL) {
        spart_free(triples->allocator, indices_input);
        spart_free(triples->allocator, indices_output);
        spart_free(triples->allocator, values);
        return -1;
    }
    if (triples->count > 0) {
        size_t used = (size_t)triples->count;
        memcpy(indices_input, triples->indices_input, used * sizeof(int64_t));
        memcpy(indices_output, triples->indices_output, used * sizeof(int64_t));
        memcpy(values, triples->values, used * sizeof(double));
    }
    spart_free(triples->allocator, triples->indices_input);
    spart_free(triples->allocator, triples->indices_output);
    spart_free(triples->allocator, triples->values);
    triples->indices_input = indices_input;
    triples->indices_output = indices_output;
    triples->values = values;
    triples->capacity = capacity;
    return 0;
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
    size_t at = (size_t)destination->count;
    size_t n = (size_t)source->count;
    memcpy(destination->indices_input + at, source->indices_input, n * sizeof(int64_t));
    memcpy(destination->indices_output + at, source->indices_output, n * sizeof(int64_t));
    memcpy(destination->values + at, source->values, n * sizeof(double));
    destination->count = needed;
    return 0;
}

void spart_triples_release(spart_triples *triples)
{
    spart_free(triples->allocator, triples->indices_input);
    spart_free(triples->allocator, triples->indices_output);
    spart_free(triples->allocator, triples->values);
    spart_triples_init(triples, triples->allocator);
}
