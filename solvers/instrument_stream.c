/*
 * solvers/instrument_stream.c: the ideal instrument's operators assembled
 * by streaming (params.memory_budget; solvers/instrument_build.h): each
 * (channel, bin) plane is a block of the stream, its weights built when
 * the assembly asks for the block (twice: the counting and the placing
 * pass) onto the pixels the plane can reach (its bounding box, not the
 * whole sensor, when the pixel vertices are whole numbers: the builders'
 * cost per call grows with the output grid),
 * transposed for the backprojection, scaled by the same unit factors as
 * the in-memory build, its pixel indices moved to the whole sensor's, and
 * freed at the next block. On a device (params.on_device) the planes
 * come from the device builder instead (solvers/instrument_device.c). The
 * operators are those of the in-memory build bit for bit
 * (tests/unit/test_instrument_lines.c): a plane's weights do not depend on
 * the other planes, and the blocks come in the planes' order. Uses the
 * public API only.
 */
#include <math.h>
#include <string.h>

#include "instrument_build.h"
#include "mart_internal.h"

/* Planes (bins of one channel) built in one call of the weights builder,
 * which shares a call's planes among its threads: a block of the stream. */
enum { PLANES_PER_BLOCK = 16 };

typedef struct plane_stream {
    spart_context *context;
    const spart_instrument_params *p;
    const spart_spectral_bins *bins;
    const double *s;        /* photons per radiance, (bin, x, y) */
    int backward;           /* 0: the forward weights; 1: their conservative transpose */
    double *mapped;         /* a block's planes' mapped vertices, x then y */
    double *sensor;         /* the vertices of the pixels a block reaches, x then y */
    double *factor;         /* a block's unit factors */
    spart_weights *current; /* the block last given (valid until the next call) */
    int64_t *sensor_index;  /* its entries' pixel indices on the whole sensor */
    int64_t capacity;       /* of sensor_index */
    int whole_pixels;       /* the pixel vertices increasing whole numbers */
    int64_t planes;         /* planes a block: PLANES_PER_BLOCK */
} plane_stream;

/* The pixels a plane can reach: the vertex range [first, last] of one
 * increasing axis of pixel vertices (count + 1 of them) that holds
 * [low, high], at least one pixel. */
static void reach(const double *vertices, int64_t count, double low, double high, int64_t *first,
                  int64_t *last)
{
    int64_t a = 0, b = count;
    while (a + 1 < count && vertices[a + 1] <= low) {
        a++;
    }
    while (b - 1 > a && vertices[b - 1] >= high) {
        b--;
    }
    *first = a;
    *last = b > a ? b : a + 1;
}

/* The unit factors of bins l ... l + count - 1, as the in-memory build
 * folds them in: forward s q (per input cell), backward 1 / (q bins s)
 * (per output cell). */
static void plane_factors(const plane_stream *st, int64_t l, int64_t count, int64_t plane)
{
    const double *s = st->s + l * plane;
    double quantum_yield = st->p->quantum_yield;
    double num_bins = (double)st->bins->count;
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < count * plane; v++) {
        st->factor[v] =
            st->backward ? 1.0 / ((quantum_yield * num_bins) * s[v]) : s[v] * quantum_yield;
    }
}

/* Whether the pixel vertices increase and are whole numbers: the weights
 * onto part of such a sensor are those onto the whole, bit for bit (a
 * whole number subtracted from a coordinate is exact); on other sensors
 * the builders' arithmetic relative to the first vertex given would round
 * differently (tests/unit/test_instrument_lines.c). */
static int whole_increasing(const double *vertices, int64_t count)
{
    for (int64_t i = 0; i <= count; i++) {
        if (vertices[i] != floor(vertices[i]) || (i > 0 && !(vertices[i] > vertices[i - 1]))) {
            return 0;
        }
    }
    return 1;
}

/* The pixel vertex ranges [x0, x1] and [y0, y1] that hold the plane's
 * mapped vertices (the whole sensor unless its vertices are increasing
 * whole numbers). */
static void plane_reach(const plane_stream *st, int64_t vertices, int64_t *x0, int64_t *x1,
                        int64_t *y0, int64_t *y1)
{
    const spart_instrument_params *p = st->p;
    *x0 = 0;
    *x1 = p->num_sensor_x;
    *y0 = 0;
    *y1 = p->num_sensor_y;
    if (!st->whole_pixels) {
        return;
    }
    const double *x = st->mapped, *y = st->mapped + vertices;
    double x_low = x[0], x_high = x[0], y_low = y[0], y_high = y[0];
    for (int64_t v = 1; v < vertices; v++) {
        x_low = fmin(x_low, x[v]);
        x_high = fmax(x_high, x[v]);
        y_low = fmin(y_low, y[v]);
        y_high = fmax(y_high, y[v]);
    }
    reach(p->sensor_x, p->num_sensor_x, x_low, x_high, x0, x1);
    reach(p->sensor_y, p->num_sensor_y, y_low, y_high, y0, y1);
}

/* The entries' pixel indices on the reached mx x my pixels (from x0, y0),
 * as indices on the whole sensor, into st->sensor_index. */
static spart_status to_sensor(plane_stream *st, int64_t entries, const int64_t *local, int64_t x0,
                              int64_t mx, int64_t y0, int64_t my)
{
    (void)mx;
    if (entries > st->capacity) {
        int64_t *grown =
            spart_context_realloc(st->context, st->sensor_index, (size_t)entries * sizeof *grown);
        if (grown == NULL) {
            return spart_context_set_error(st->context, SPART_ERROR_OUT_OF_MEMORY,
                                           "instrument: could not allocate the pixel indices of "
                                           "one plane (%lld entries)",
                                           (long long)entries);
        }
        st->sensor_index = grown;
        st->capacity = entries;
    }
    int64_t sensor_y = st->p->num_sensor_y;
    for (int64_t k = 0; k < entries; k++) {
        int64_t i = local[k] / my, j = local[k] % my;
        st->sensor_index[k] = (x0 + i) * sensor_y + (y0 + j);
    }
    return SPART_OK;
}

static spart_status plane_block(void *user_data, int64_t block, int pass,
                                spart_weights_block *result)
{
    (void)pass; /* both passes build the same plane the same way */
    plane_stream *st = user_data;
    const spart_instrument_params *p = st->p;
    spart_weights_free(st->current);
    st->current = NULL;
    /* A block is up to st->planes bins of one channel: the builders
     * share a call's planes among their threads. */
    int64_t blocks_per_channel = (st->bins->count + st->planes - 1) / st->planes;
    int64_t c = block / blocks_per_channel;
    int64_t l = (block % blocks_per_channel) * st->planes;
    int64_t count = st->bins->count - l < st->planes ? st->bins->count - l : st->planes;
    int64_t nx = p->num_scene_x, ny = p->num_scene_y;
    int64_t vertices = (nx + 1) * (ny + 1);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < count; k++) {
        spart_instrument_map_plane(p, st->bins, c, l + k, st->mapped + k * vertices,
                                   st->mapped + (count + k) * vertices);
    }
    /* The weights onto the pixels the planes can reach (their bounding
     * box), their pixel indices then moved to the whole sensor's. */
    int64_t x0, x1, y0, y1;
    plane_reach(st, count * vertices, &x0, &x1, &y0, &y1);
    int64_t mx = x1 - x0, my = y1 - y0, pixels = (mx + 1) * (my + 1);
    for (int64_t i = 0; i <= mx; i++) {
        for (int64_t j = 0; j <= my; j++) {
            st->sensor[i * (my + 1) + j] = p->sensor_x[x0 + i];
            st->sensor[pixels + i * (my + 1) + j] = p->sensor_y[y0 + j];
        }
    }
    spart_shape plane_shape = spart_instrument_shape4(1, count, nx + 1, ny + 1);
    spart_shape sensor_shape = spart_instrument_shape4(1, 1, mx + 1, my + 1);
    spart_array input[2] = {{st->mapped, plane_shape},
                            {st->mapped + count * vertices, plane_shape}};
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
        plane_factors(st, l, count, nx * ny);
        spart_array scale = {st->factor, spart_instrument_shape4(1, count, nx, ny)};
        status = spart_weights_scale(st->context, weights, st->backward ? NULL : &scale,
                                     st->backward ? &scale : NULL);
    }
    const int64_t *offsets = NULL, *indices_input = NULL, *indices_output = NULL;
    const double *values = NULL;
    if (status == SPART_OK) {
        status = spart_weights_arrays(weights, &offsets, &indices_input, &indices_output, &values);
    }
    /* onto the whole sensor the indices are the sensor's already */
    int whole = x0 == 0 && y0 == 0 && mx == p->num_sensor_x && my == p->num_sensor_y;
    if (status == SPART_OK && !whole) {
        status = to_sensor(st, offsets[count], st->backward ? indices_input : indices_output, x0,
                           mx, y0, my);
    }
    if (status != SPART_OK) {
        spart_weights_free(weights);
        return status;
    }
    st->current = weights;
    result->first_element = c * st->bins->count + l;
    result->num_elements = count;
    result->offsets = offsets;
    const int64_t *sensor_index =
        whole ? (st->backward ? indices_input : indices_output) : st->sensor_index;
    result->indices_input = st->backward ? sensor_index : indices_input;
    result->indices_output = st->backward ? indices_output : sensor_index;
    result->values = values;
    return SPART_OK;
}

/* The most entries one plane can have: each mapped cell (a rigid copy of a
 * scene cell, at most 2 max(dx, dy) / plate_scale sensor units across in
 * any rotation) overlaps at most (ceil(extent / smallest pixel) + 1)^2
 * pixels. */
static int64_t plane_entries_bound(const spart_instrument_params *p)
{
    double largest = 0.0, smallest = INFINITY;
    for (int64_t i = 0; i < p->num_scene_x; i++) {
        largest = fmax(largest, fabs(p->scene_x[i + 1] - p->scene_x[i]));
    }
    for (int64_t j = 0; j < p->num_scene_y; j++) {
        largest = fmax(largest, fabs(p->scene_y[j + 1] - p->scene_y[j]));
    }
    for (int64_t i = 0; i < p->num_sensor_x; i++) {
        smallest = fmin(smallest, fabs(p->sensor_x[i + 1] - p->sensor_x[i]));
    }
    for (int64_t j = 0; j < p->num_sensor_y; j++) {
        smallest = fmin(smallest, fabs(p->sensor_y[j + 1] - p->sensor_y[j]));
    }
    double across = ceil(2.0 * largest / p->plate_scale / smallest) + 1.0;
    double bound = (double)p->num_scene_x * (double)p->num_scene_y * across * across;
    return bound < 4e18 ? (int64_t)bound : (int64_t)4e18;
}

void spart_instrument_stream_init(const spart_instrument_params *p, int64_t num_wavelength,
                                  int backward, spart_weights_stream *stream)
{
    spart_weights_stream_init(stream);
    spart_shape planes = {2, {p->num_channel, num_wavelength}};
    spart_shape scene =
        spart_instrument_shape4(p->num_channel, num_wavelength, p->num_scene_x, p->num_scene_y);
    spart_shape sensor = spart_instrument_shape4(1, 1, p->num_sensor_x, p->num_sensor_y);
    stream->shape_orthogonal = planes;
    stream->shape_input = backward ? sensor : scene;
    stream->shape_output = backward ? scene : sensor;
    stream->num_axis_input = 2;
    stream->axis_input[0] = 2;
    stream->axis_input[1] = 3;
    stream->num_axis_output = 2;
    stream->axis_output[0] = 2;
    stream->axis_output[1] = 3;
}

static spart_status assemble_one(plane_stream *st, int64_t num_wavelength,
                                 spart_regridder **regridder)
{
    const spart_instrument_params *p = st->p;
    spart_weights_stream stream;
    spart_instrument_stream_init(p, num_wavelength, st->backward, &stream);
    stream.num_blocks = p->num_channel * ((num_wavelength + st->planes - 1) / st->planes);
    int64_t bound = plane_entries_bound(p);
    stream.max_block_entries = bound < INT64_MAX / st->planes ? bound * st->planes : INT64_MAX;
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
    st.whole_pixels = whole_increasing(p->sensor_x, p->num_sensor_x) &&
                      whole_increasing(p->sensor_y, p->num_sensor_y);
    st.planes = PLANES_PER_BLOCK;
    st.mapped = spart_mart_alloc_doubles(context, 2 * (size_t)st.planes * vertices);
    st.sensor = spart_mart_alloc_doubles(context, 2 * pixels);
    st.factor = spart_mart_alloc_doubles(context, (size_t)st.planes * cells);
    spart_status status = SPART_OK;
    if (st.mapped == NULL || st.sensor == NULL || st.factor == NULL) {
        status = spart_context_set_error(
            context, SPART_ERROR_OUT_OF_MEMORY,
            "instrument: could not allocate a block's vertices and "
            "factors and the sensor's vertices (%.3g GB)",
            (double)((size_t)st.planes * (2 * vertices + cells) + 2 * pixels) * 8.0 / 1e9);
    }
    if (status == SPART_OK) {
        status = assemble_one(&st, bins->count, forward);
    }
    if (status == SPART_OK) {
        st.backward = 1;
        status = assemble_one(&st, bins->count, backward);
    }
    spart_context_free_memory(context, st.mapped);
    spart_context_free_memory(context, st.sensor);
    spart_context_free_memory(context, st.factor);
    spart_context_free_memory(context, st.sensor_index);
    return status;
}
