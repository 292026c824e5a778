/*
 * solvers/instrument_stream.c: the ideal instrument's operators assembled
 * by streaming (params.memory_budget; solvers/instrument_build.h): each
 * (channel, bin) plane is a block of the stream, its weights built when
 * the assembly asks for the block (twice: the counting and the placing
 * pass), transposed for the backprojection, scaled by the same unit
 * factors as the in-memory build, and freed at the next block. The
 * operators are those of the in-memory build bit for bit
 * (tests/unit/test_instrument_lines.c): a plane's weights do not depend on
 * the other planes, and the blocks come in the planes' order. Uses the
 * public API only.
 */
#include <math.h>
#include <string.h>

#include "instrument_build.h"
#include "mart_internal.h"

typedef struct plane_stream {
    spart_context *context;
    const spart_instrument_params *p;
    const spart_spectral_bins *bins;
    const double *s;       /* photons per radiance, (bin, x, y) */
    int backward;          /* 0: the forward weights; 1: their conservative transpose */
    double *mapped;        /* one plane's mapped vertices, x then y */
    double *sensor;        /* the sensor's vertices, x then y */
    double *factor;        /* one plane's unit factors */
    spart_weights *current; /* the block last given (valid until the next call) */
} plane_stream;

/* The unit factors of bin l, as the in-memory build folds them in:
 * forward s q (per input cell), backward 1 / (q bins s) (per output cell). */
static void plane_factors(const plane_stream *st, int64_t l, int64_t plane)
{
    const double *s = st->s + l * plane;
    double quantum_yield = st->p->quantum_yield;
    double num_bins = (double)st->bins->count;
    for (int64_t v = 0; v < plane; v++) {
        st->factor[v] =
            st->backward ? 1.0 / ((quantum_yield * num_bins) * s[v]) : s[v] * quantum_yield;
    }
}

static spart_status plane_block(void *user_data, int64_t block, int pass,
                                spart_weights_block *result)
{
    (void)pass; /* both passes build the same plane the same way */
    plane_stream *st = user_data;
    const spart_instrument_params *p = st->p;
    spart_weights_free(st->current);
    st->current = NULL;
    int64_t l = block % st->bins->count, c = block / st->bins->count;
    int64_t nx = p->num_scene_x, ny = p->num_scene_y, mx = p->num_sensor_x, my = p->num_sensor_y;
    int64_t vertices = (nx + 1) * (ny + 1), pixels = (mx + 1) * (my + 1);
    spart_instrument_map_plane(p, st->bins, c, l, st->mapped, st->mapped + vertices);
    spart_shape plane_shape = spart_instrument_shape4(1, 1, nx + 1, ny + 1);
    spart_shape sensor_shape = spart_instrument_shape4(1, 1, mx + 1, my + 1);
    spart_array input[2] = {{st->mapped, plane_shape}, {st->mapped + vertices, plane_shape}};
    spart_array output[2] = {{st->sensor, sensor_shape}, {st->sensor + pixels, sensor_shape}};
    spart_weights_options options;
    spart_instrument_weights_options(&options);
    spart_weights *weights = NULL;
    spart_status status = spart_weights_build(st->context, 2, input, output, &options, &weights);
    if (status == SPART_OK && st->backward) {
        spart_weights *transpose = NULL;
        status = spart_weights_transpose_conservative(st->context, weights, 2, input, output,
                                                      &options, &transpose);
        spart_weights_free(weights);
        weights = transpose;
    }
    if (status == SPART_OK) {
        plane_factors(st, l, nx * ny);
        spart_array scale = {st->factor, spart_instrument_shape4(1, 1, nx, ny)};
        status = spart_weights_scale(st->context, weights, st->backward ? NULL : &scale,
                                     st->backward ? &scale : NULL);
    }
    const int64_t *offsets = NULL, *indices_input = NULL, *indices_output = NULL;
    const double *values = NULL;
    if (status == SPART_OK) {
        status = spart_weights_arrays(weights, &offsets, &indices_input, &indices_output, &values);
    }
    if (status != SPART_OK) {
        spart_weights_free(weights);
        return status;
    }
    st->current = weights;
    result->first_element = block;
    result->num_elements = 1;
    result->offsets = offsets;
    result->indices_input = indices_input;
    result->indices_output = indices_output;
    result->values = values;
    return SPART_OK;
}

/* The most entries one plane can have: each mapped cell (a rigid copy of a
 * scene cell, at most 2 max(dx, dy) / plate_scale pixels across in any
 * rotation) overlaps at most (ceil(extent) + 1)^2 pixels. */
static int64_t plane_entries_bound(const spart_instrument_params *p)
{
    double largest = 0.0;
    for (int64_t i = 0; i < p->num_scene_x; i++) {
        largest = fmax(largest, fabs(p->scene_x[i + 1] - p->scene_x[i]));
    }
    for (int64_t j = 0; j < p->num_scene_y; j++) {
        largest = fmax(largest, fabs(p->scene_y[j + 1] - p->scene_y[j]));
    }
    double across = ceil(2.0 * largest / p->plate_scale) + 1.0;
    double bound = (double)p->num_scene_x * (double)p->num_scene_y * across * across;
    return bound < 4e18 ? (int64_t)bound : (int64_t)4e18;
}

static spart_status assemble_one(plane_stream *st, int64_t num_wavelength,
                                 spart_regridder **regridder)
{
    const spart_instrument_params *p = st->p;
    spart_weights_stream stream;
    spart_weights_stream_init(&stream);
    spart_shape planes = {2, {p->num_channel, num_wavelength}};
    spart_shape scene = spart_instrument_shape4(p->num_channel, num_wavelength, p->num_scene_x,
                                                p->num_scene_y);
    spart_shape sensor = spart_instrument_shape4(1, 1, p->num_sensor_x, p->num_sensor_y);
    stream.shape_orthogonal = planes;
    stream.shape_input = st->backward ? sensor : scene;
    stream.shape_output = st->backward ? scene : sensor;
    stream.num_axis_input = 2;
    stream.axis_input[0] = 2;
    stream.axis_input[1] = 3;
    stream.num_axis_output = 2;
    stream.axis_output[0] = 2;
    stream.axis_output[1] = 3;
    stream.num_blocks = p->num_channel * num_wavelength;
    stream.max_block_entries = plane_entries_bound(p);
    stream.function = plane_block;
    stream.user_data = st;
    spart_regridder_options options;
    spart_instrument_operator_options(p, num_wavelength, st->backward, &options);
    spart_status status = spart_regridder_create_streamed(st->context, &stream, &options, 0,
                                                          p->memory_budget, regridder, NULL);
    spart_weights_free(st->current);
    st->current = NULL;
    return status;
}

spart_status spart_instrument_assemble_streamed(spart_context *context,
                                                const spart_instrument_params *p,
                                                const spart_spectral_bins *bins, const double *s,
                                                spart_regridder **forward,
                                                spart_regridder **backward)
{
    size_t vertices = (size_t)((p->num_scene_x + 1) * (p->num_scene_y + 1));
    size_t pixels = (size_t)((p->num_sensor_x + 1) * (p->num_sensor_y + 1));
    size_t cells = (size_t)(p->num_scene_x * p->num_scene_y);
    plane_stream st;
    memset(&st, 0, sizeof st);
    st.context = context;
    st.p = p;
    st.bins = bins;
    st.s = s;
    st.mapped = spart_mart_alloc_doubles(context, 2 * vertices);
    st.sensor = spart_mart_alloc_doubles(context, 2 * pixels);
    st.factor = spart_mart_alloc_doubles(context, cells);
    spart_status status = SPART_OK;
    if (st.mapped == NULL || st.sensor == NULL || st.factor == NULL) {
        status = spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                         "instrument: could not allocate one plane's vertices and "
                                         "factors and the sensor's vertices (%.3g GB)",
                                         (double)(2 * vertices + 2 * pixels + cells) * 8.0 / 1e9);
    }
    if (status == SPART_OK) {
        spart_instrument_sensor_vertices(p, st.sensor, st.sensor + pixels);
        status = assemble_one(&st, bins->count, forward);
    }
    if (status == SPART_OK) {
        st.backward = 1;
        status = assemble_one(&st, bins->count, backward);
    }
    spart_context_free_memory(context, st.mapped);
    spart_context_free_memory(context, st.sensor);
    spart_context_free_memory(context, st.factor);
    return status;
}
