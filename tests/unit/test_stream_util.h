/*
 * tests/unit/test_stream_util.h: what the streaming assembly's tests share
 * (test_regridder_stream.c on the host, test_cuda_regridder_stream.c on a
 * device): random weights whose elements sum into shared rows, a block
 * function that cuts the weights' concatenated arrays into blocks of a
 * fixed size (with empty blocks between them on request, and faults on
 * request), an allocator that counts what is held, and the comparison of
 * two regridders' CSR arrays bit for bit.
 *
 * Include after <cmocka.h> and test_util.h.
 */
#ifndef SPART_TEST_STREAM_UTIL_H
#define SPART_TEST_STREAM_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spart.h"

/* ---- the weights ------------------------------------------------------------------------ */

/* Weights of 3 x 4 elements from (3, 4, 30) inputs to (3, 4, cells_output) outputs
 * (resampled: the last axis), elements of 0 to max_entries entries (the
 * first of each row of elements empty), random indices, values that are
 * exactly 0 about one time in eight. */
static inline spart_weights *stream_weights_sized(spart_context *context, uint64_t seed,
                                                  int64_t max_entries, int64_t cells_output)
{
    spart_shape orthogonal = {2, {3, 4}};
    spart_shape input = {3, {3, 4, 30}};
    spart_shape output = {3, {3, 4, cells_output}};
    int axis_input[1] = {2}, axis_output[1] = {2};
    int64_t offsets[13] = {0};
    uint64_t state = seed * 2654435761u + 1;
    for (int e = 0; e < 12; e++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        int64_t count = e % 4 == 0 ? 0 : (int64_t)((state >> 33) % (uint64_t)(max_entries + 1));
        offsets[e + 1] = offsets[e] + count;
    }
    int64_t n = offsets[12];
    int64_t *in = malloc((size_t)(n > 0 ? n : 1) * sizeof *in);
    int64_t *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof *values);
    assert_non_null(in);
    assert_non_null(out);
    assert_non_null(values);
    for (int64_t k = 0; k < n; k++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        in[k] = (int64_t)((state >> 33) % 30);
        out[k] = (int64_t)((state >> 17) % (uint64_t)cells_output);
        values[k] = (state >> 61) == 0 ? 0.0 : (double)(state >> 11) / 9007199254740992.0 - 0.3;
    }
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axis_input, 1, axis_output, offsets, in, out,
                                                      values, &weights),
                     SPART_OK);
    free(in);
    free(out);
    free(values);
    return weights;
}

static inline spart_weights *stream_weights(spart_context *context, uint64_t seed,
                                            int64_t max_entries)
{
    return stream_weights_sized(context, seed, max_entries, 25);
}

/* Options under which the elements along the first orthogonal axis sum
 * into the same rows (output (1, 4, 25): role N N 1), so that entries of
 * several blocks and elements share rows. */
static inline spart_regridder_options stream_options_sized(spart_value_type value_type,
                                                           int drop_zeros, int64_t cells_output)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_output = 1;
    options.shape_output = (spart_shape){3, {1, 4, cells_output}};
    options.value_type = value_type;
    options.drop_zeros = drop_zeros;
    return options;
}

static inline spart_regridder_options stream_options(spart_value_type value_type, int drop_zeros)
{
    return stream_options_sized(value_type, drop_zeros, 25);
}

/* ---- the block function -------------------------------------------------------------------- */

/* Faults a block function can be asked for. */
enum {
    STREAM_FAULT_NONE = 0,
    STREAM_FAULT_STATUS,      /* return SPART_ERROR_IO for fault_block */
    STREAM_FAULT_MOVE_ROW,    /* pass 1: fault_block's first entry in another row */
    STREAM_FAULT_FEWER,       /* pass 1: fault_block one entry short */
    STREAM_FAULT_BAD_INDEX,   /* fault_block's first entry out of range */
    STREAM_FAULT_BACKWARDS,   /* fault_block claims element 0 */
    STREAM_FAULT_DROP_NONZERO /* pass 1: fault_block's first value set to 0 */
};

/* Blocks of block_entries entries of `weights`' concatenated arrays in
 * order (the last one shorter), each followed by `empty_between` empty
 * blocks (alternately with no elements and with one element and no
 * entries). */
typedef struct stream_blocks {
    const spart_weights *weights;
    int64_t block_entries;
    int empty_between;
    int fault;
    int64_t fault_block;
    int64_t *offsets; /* scratch: the yielded block's offsets */
    int64_t *indices_input, *indices_output;
    double *values; /* scratch copies for faults */
    int64_t calls;
} stream_blocks;

static inline int64_t stream_data_blocks(const stream_blocks *blocks)
{
    int64_t n = spart_weights_num_entries(blocks->weights);
    return n == 0 ? 0 : (n + blocks->block_entries - 1) / blocks->block_entries;
}

static inline int64_t stream_num_blocks(const stream_blocks *blocks)
{
    return stream_data_blocks(blocks) * (1 + blocks->empty_between) + blocks->empty_between;
}

/* The last e with offsets[e] <= k. */
static inline int64_t stream_element_of(const int64_t *offsets, int64_t num_elements, int64_t k)
{
    int64_t e = 0;
    while (e + 1 < num_elements && offsets[e + 1] <= k) {
        e++;
    }
    return e;
}

static inline spart_status stream_block_function(void *user_data, int64_t block, int pass,
                                                 spart_weights_block *result)
{
    stream_blocks *blocks = user_data;
    blocks->calls++;
    if (blocks->fault == STREAM_FAULT_STATUS && block == blocks->fault_block) {
        return SPART_ERROR_IO;
    }
    const int64_t *offsets, *in, *out;
    const double *values;
    assert_int_equal(spart_weights_arrays(blocks->weights, &offsets, &in, &out, &values), SPART_OK);
    int64_t num_elements = spart_weights_num_elements(blocks->weights);
    int64_t per = 1 + blocks->empty_between;
    memset(result, 0, sizeof *result);
    if (block % per != 0 || block / per >= stream_data_blocks(blocks)) {
        /* an empty block: alternately no elements, and one element without entries */
        if (block % 2 == 1) {
            blocks->offsets[0] = 0;
            blocks->offsets[1] = 0;
            result->first_element = num_elements - 1;
            result->num_elements = 1;
            result->offsets = blocks->offsets;
        }
        return SPART_OK;
    }
    int64_t total = offsets[num_elements];
    int64_t begin = block / per * blocks->block_entries;
    int64_t end = begin + blocks->block_entries < total ? begin + blocks->block_entries : total;
    int64_t first = stream_element_of(offsets, num_elements, begin);
    int64_t last = stream_element_of(offsets, num_elements, end - 1);
    result->first_element = first;
    result->num_elements = last - first + 1;
    for (int64_t j = 0; j <= result->num_elements; j++) {
        int64_t at = j == 0 ? begin : (j == result->num_elements ? end : offsets[first + j]);
        blocks->offsets[j] = at - begin;
    }
    result->offsets = blocks->offsets;
    int64_t n = end - begin;
    memcpy(blocks->indices_input, in + begin, (size_t)n * sizeof(int64_t));
    memcpy(blocks->indices_output, out + begin, (size_t)n * sizeof(int64_t));
    memcpy(blocks->values, values + begin, (size_t)n * sizeof(double));
    if (block == blocks->fault_block) {
        switch (blocks->fault) {
        case STREAM_FAULT_MOVE_ROW:
            if (pass == 1) {
                blocks->indices_output[0] = blocks->indices_output[0] == 0 ? 1 : 0;
            }
            break;
        case STREAM_FAULT_FEWER:
            if (pass == 1) {
                blocks->offsets[result->num_elements]--;
            }
            break;
        case STREAM_FAULT_BAD_INDEX: blocks->indices_input[0] = 30; break;
        case STREAM_FAULT_BACKWARDS: result->first_element = 0; break;
        case STREAM_FAULT_DROP_NONZERO:
            if (pass == 1) {
                blocks->values[0] = blocks->values[0] == 0.0 ? 1.0 : 0.0;
            }
            break;
        default: break;
        }
    }
    result->indices_input = blocks->indices_input;
    result->indices_output = blocks->indices_output;
    result->values = blocks->values;
    return SPART_OK;
}

/* The blocks and a stream over them (free with stream_blocks_free). */
static inline void stream_blocks_make(const spart_weights *weights, int64_t block_entries,
                                      int empty_between, stream_blocks *blocks,
                                      spart_weights_stream *stream)
{
    memset(blocks, 0, sizeof *blocks);
    blocks->weights = weights;
    blocks->block_entries = block_entries;
    blocks->empty_between = empty_between;
    blocks->fault_block = -1;
    size_t n = (size_t)block_entries;
    blocks->offsets = calloc((size_t)spart_weights_num_elements(weights) + 2, sizeof(int64_t));
    blocks->indices_input = calloc(n, sizeof(int64_t));
    blocks->indices_output = calloc(n, sizeof(int64_t));
    blocks->values = calloc(n, sizeof(double));
    spart_weights_stream_init(stream);
    stream->shape_orthogonal = spart_weights_shape_orthogonal(weights);
    stream->shape_input = spart_weights_shape_input(weights);
    stream->shape_output = spart_weights_shape_output(weights);
    spart_weights_axes(weights, &stream->num_axis_input, stream->axis_input,
                       &stream->num_axis_output, stream->axis_output);
    stream->num_blocks = stream_num_blocks(blocks);
    stream->max_block_entries = block_entries;
    stream->function = stream_block_function;
    stream->user_data = blocks;
}

static inline void stream_blocks_free(stream_blocks *blocks)
{
    free(blocks->offsets);
    free(blocks->indices_input);
    free(blocks->indices_output);
    free(blocks->values);
}

/* ---- an allocator that counts ----------------------------------------------------------- */

/* malloc with a size header, counting the bytes held and their peak. */
typedef struct counted_memory {
    size_t held;
    size_t peak;
} counted_memory;

static inline void *counted_malloc(void *user, size_t size)
{
    counted_memory *count = user;
    size_t *block = malloc(size + 16);
    if (block == NULL) {
        return NULL;
    }
    block[0] = size;
#pragma omp critical(counted_memory)
    {
        count->held += size;
        if (count->held > count->peak) {
            count->peak = count->held;
        }
    }
    return (char *)block + 16;
}

static inline void counted_free(void *user, void *pointer)
{
    if (pointer == NULL) {
        return;
    }
    counted_memory *count = user;
    size_t *block = (size_t *)((char *)pointer - 16);
#pragma omp critical(counted_memory)
    count->held -= block[0];
    free(block);
}

static inline void *counted_realloc(void *user, void *pointer, size_t size)
{
    void *made = counted_malloc(user, size);
    if (made != NULL && pointer != NULL) {
        size_t old = ((size_t *)((char *)pointer - 16))[0];
        memcpy(made, pointer, old < size ? old : size);
        counted_free(user, pointer);
    }
    return made;
}

/* ---- comparing regridders ----------------------------------------------------------------- */

/* The CSR arrays of two host regridders are the same bit for bit. */
static inline void assert_same_host_csr(const spart_regridder *a, const spart_regridder *b)
{
    assert_int_equal(spart_regridder_num_rows(a), spart_regridder_num_rows(b));
    assert_int_equal(spart_regridder_num_columns(a), spart_regridder_num_columns(b));
    assert_int_equal(spart_regridder_num_entries(a), spart_regridder_num_entries(b));
    assert_int_equal(spart_regridder_value_type(a), spart_regridder_value_type(b));
    assert_int_equal(spart_regridder_group_size(a), spart_regridder_group_size(b));
    const int64_t *row_a, *row_b;
    const int32_t *col_a, *col_b;
    const int64_t *wide_a, *wide_b;
    const void *val_a, *val_b;
    assert_int_equal(spart_regridder_csr(a, &row_a, &col_a, &wide_a, &val_a), SPART_OK);
    assert_int_equal(spart_regridder_csr(b, &row_b, &col_b, &wide_b, &val_b), SPART_OK);
    size_t rows = (size_t)spart_regridder_num_rows(a) + 1;
    size_t n = (size_t)spart_regridder_num_entries(a);
    size_t value_bytes = spart_regridder_value_type(a) == SPART_FLOAT32 ? 4 : 8;
    assert_memory_equal(row_a, row_b, rows * sizeof(int64_t));
    assert_non_null(col_a);
    assert_non_null(col_b);
    if (n > 0) {
        assert_memory_equal(col_a, col_b, n * sizeof(int32_t));
        assert_memory_equal(val_a, val_b, n * value_bytes);
    }
}

#endif /* SPART_TEST_STREAM_UTIL_H */
