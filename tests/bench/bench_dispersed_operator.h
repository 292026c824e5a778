/*
 * tests/bench/bench_dispersed_operator.h: the CTIS-like forward operator
 * that the streamed-assembly benchmarks build (bench_cuda_stream.c on a
 * device, bench_esis_stream.c on the host), and its weights cut into the
 * blocks of a spart_weights_stream.
 *
 * The operator: DISPERSED_CHANNELS = 4 channels x DISPERSED_WAVELENGTHS =
 * 24 wavelengths (the orthogonal elements), an N x N scene shared by the
 * channels (input (1, W, N, N)), the wavelengths summed into each
 * channel's M x M image (output (C, 1, M, M)); each element moves every
 * scene cell by its channel's dispersion (DISPERSED_SHIFT cells a
 * wavelength along the channel's direction) and spreads it over the 2 x 2
 * image cells it overlaps (bilinear fractions): 4 C W N^2 entries, N
 * chosen for the entries asked, element e's entries at [e P, (e + 1) P)
 * with P = 4 N^2. float32 values.
 *
 * Blocks: block b holds entries [b B, (b + 1) B) of the weights' arrays,
 * in storage order, for any block size B (a block may start or end inside
 * an element).
 */
#ifndef SPART_BENCH_DISPERSED_OPERATOR_H
#define SPART_BENCH_DISPERSED_OPERATOR_H

#include <math.h>
#include <stdint.h>

#include "spart.h"

#define DISPERSED_CHANNELS 4
#define DISPERSED_WAVELENGTHS 24
#define DISPERSED_SHIFT 0.37

typedef struct dispersed_operator {
    int64_t scene, image, pad, per_element, num_elements, num_entries;
} dispersed_operator;

/* The operator of about `entries` weights (a scene of at least 2 x 2). */
static inline dispersed_operator dispersed_operator_make(int64_t entries)
{
    dispersed_operator op;
    op.scene = (int64_t)llround(
        sqrt((double)entries / (4.0 * DISPERSED_CHANNELS * DISPERSED_WAVELENGTHS)));
    if (op.scene < 2) {
        op.scene = 2;
    }
    op.pad = (int64_t)ceil(DISPERSED_SHIFT * DISPERSED_WAVELENGTHS) + 1;
    op.image = op.scene + 2 * op.pad + 1;
    op.per_element = 4 * op.scene * op.scene;
    op.num_elements = DISPERSED_CHANNELS * DISPERSED_WAVELENGTHS;
    op.num_entries = op.per_element * op.num_elements;
    return op;
}

/* Entries [begin, end) into in, out and values (each from index 0), on
 * the OpenMP threads. */
static inline void dispersed_operator_generate(const dispersed_operator *op, int64_t begin,
                                               int64_t end, int64_t *in, int64_t *out,
                                               double *values)
{
    static const int dx[DISPERSED_CHANNELS] = {1, 0, -1, 0}, dy[DISPERSED_CHANNELS] = {0, 1, 0, -1};
#pragma omp parallel for schedule(static)
    for (int64_t k = begin; k < end; k++) {
        int64_t e = k / op->per_element, r = k % op->per_element;
        int64_t cell = r / 4, corner = r % 4;
        int c = (int)(e / DISPERSED_WAVELENGTHS), w = (int)(e % DISPERSED_WAVELENGTHS);
        double x = (double)(cell % op->scene) + (double)op->pad + dx[c] * DISPERSED_SHIFT * w;
        double y = (double)(cell / op->scene) + (double)op->pad + dy[c] * DISPERSED_SHIFT * w;
        double x0 = floor(x), y0 = floor(y), fx = x - x0, fy = y - y0;
        int64_t di = corner / 2, dj = corner % 2;
        in[k - begin] = cell;
        out[k - begin] = ((int64_t)y0 + di) * op->image + (int64_t)x0 + dj;
        values[k - begin] = (di ? fy : 1.0 - fy) * (dj ? fx : 1.0 - fx);
    }
}

/* The stream's shapes and axes (the scene's and the image's last two axes
 * regridded; the caller sets the blocks and the function) and options
 * with both shapes and float32 values. */
static inline void dispersed_operator_stream(const dispersed_operator *op,
                                             spart_weights_stream *stream,
                                             spart_regridder_options *options)
{
    spart_weights_stream_init(stream);
    stream->shape_orthogonal = (spart_shape){2, {DISPERSED_CHANNELS, DISPERSED_WAVELENGTHS}};
    stream->shape_input = (spart_shape){4, {1, DISPERSED_WAVELENGTHS, op->scene, op->scene}};
    stream->shape_output = (spart_shape){4, {DISPERSED_CHANNELS, 1, op->image, op->image}};
    stream->num_axis_input = 2;
    stream->axis_input[0] = 2;
    stream->axis_input[1] = 3;
    stream->num_axis_output = 2;
    stream->axis_output[0] = 2;
    stream->axis_output[1] = 3;
    spart_regridder_options_init(options);
    options->has_shape_input = 1;
    options->shape_input = stream->shape_input;
    options->has_shape_output = 1;
    options->shape_output = stream->shape_output;
    options->value_type = SPART_FLOAT32;
}

/* Block `block` of `block_entries` entries: its elements and their offsets
 * within the block into result (`offsets` holds num_elements + 1 values,
 * the caller's, pointed to by result->offsets); returns the block's first
 * entry, and its end in *end. The caller points result's arrays at the
 * entries [first, *end). */
static inline int64_t dispersed_operator_block(const dispersed_operator *op, int64_t block_entries,
                                               int64_t block, int64_t *offsets,
                                               spart_weights_block *result, int64_t *end)
{
    int64_t begin = block * block_entries;
    *end = begin + block_entries < op->num_entries ? begin + block_entries : op->num_entries;
    int64_t first = begin / op->per_element, last = (*end - 1) / op->per_element;
    result->first_element = first;
    result->num_elements = last - first + 1;
    for (int64_t j = 0; j <= result->num_elements; j++) {
        int64_t at =
            j == 0 ? begin : (j == result->num_elements ? *end : (first + j) * op->per_element);
        offsets[j] = at - begin;
    }
    result->offsets = offsets;
    return begin;
}

#endif /* SPART_BENCH_DISPERSED_OPERATOR_H */
