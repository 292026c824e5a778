/*
 * src/weights/weights_device_cuda.c: the CUDA table of building weights
 * (src/weights/weights_ops.h): spart_weights_build_device's build, its
 * workspace query, and the copy of device weights back to the host. Built
 * with CUDA only. The contract with the kernels, and the representation of
 * weights on a device: src/weights/weights_device.h.
 *
 * The build, element after element, on the context's stream: the element's
 * grids laid out on the host exactly as the host driver lays them out
 * (src/weights/weights_build.c: read in place where they are dense, else
 * gathered), copied to the device (a grid every element shares, once),
 * and the element's builder run there, writing at the element's offset:
 * - multilinear: on a rectilinear input grid the grid's profiles come from
 *   the host's own decision (spart_host_multilinear_rectilinear), on a
 *   curvilinear one the host's hierarchy of boxes
 *   (spart_host_multilinear_box_tree), searched on the device with the
 *   host's code; 2^N entries a point (kernels/weights_multilinear.cu), then,
 *   when coalescing, the element's entries sorted by (input, output)
 *   (kernels/weights_device.cu);
 * - conservative 1-D between monotonic grids: counts per input cell, their
 *   scan, one copy of the total to the host, the pieces written
 *   (kernels/weights_conservative_1d.cu).
 * - conservative 2-D by clipping: 30-clip's kernels
 *   (src/weights/weights_clip_device.h: count, make room, write), onto a
 *   lattice when every output grid is one (decided on the host, as the
 *   host driver decides it), else the general clip.
 * Any other problem (conservative 1-D on a grid that turns back, a
 * curvilinear tree deeper than SPART_DEVICE_TREE_LEVELS, the 2-D sweep or a jittered output grid,
 * keys of more than 62 bits) is built by the host build and its entries copied to the device: the
 * same arrays either way.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/shape.h"
#include "device/device_select.h"
#include "weights/conservative_1d_math.h"
#include "weights/weights_build.h"
#include "weights/weights_device_build.h"
#include "weights/weights_device.h"
#include "weights/weights_internal.h"
#include "weights/weights_kernels.h"
#include "weights/weights_ops.h"

const char *const spart_wdev_what = "weights_build_device";
int64_t spart_wdev_batch_words = BATCH_WORDS;
static const char *const what = "weights_build_device";

static size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* Lay the scratch out from `base` (NULL: only measure); the bytes. */
static size_t scratch_layout(device_build *b, char *base)
{
    const spart_weights_layout *l = &b->layout;
    const int n = l->num_coordinates;
    size_t at = 0;
    /* grids on the device are read in place: no room for copies */
    const size_t grids_input = b->grids_on_device ? 0 : (size_t)(b->shared_input ? 1 : b->batch);
    const size_t grids_output = b->grids_on_device ? 0 : (size_t)(b->shared_output ? 1 : b->batch);
    for (int c = 0; c < n; c++) {
        if (base != NULL) {
            b->input[c] = (double *)(base + at);
        }
        at += round_up(grids_input * (size_t)l->size_input * sizeof(double));
    }
    for (int c = 0; c < n; c++) {
        if (base != NULL) {
            b->output[c] = (double *)(base + at);
        }
        at += round_up(grids_output * (size_t)l->size_output * sizeof(double));
    }
    if (base != NULL) {
        b->weights_input = (double *)(base + at);
    }
    at += round_up(
        (size_t)b->batch *
        (size_t)(b->options->weights_input != NULL && !b->grids_on_device ? b->size_values : 1) *
        sizeof(double));
    size_t profile = 0;
    for (int m = 0; m < l->num_axes_input; m++) {
        profile += (size_t)l->grid_shape_input[m];
    }
    if (base != NULL) {
        b->profiles = (double *)(base + at);
    }
    at += round_up(profile * sizeof(double));
    size_t units = (size_t)(b->units > 0 ? b->units * b->batch : 0) + 1;
    if (base != NULL) {
        b->picked = (int64_t *)(base + at);
    }
    at += round_up((size_t)(b->batch + 1) * sizeof(int64_t));
    if (base != NULL) {
        b->counts = (int64_t *)(base + at);
    }
    at += round_up(units * sizeof(int64_t));
    if (base != NULL) {
        b->starts = (int64_t *)(base + at);
    }
    at += round_up(units * sizeof(int64_t));
    if (base != NULL) {
        b->outside = (int64_t *)(base + at);
    }
    at += round_up((size_t)(l->num_elements > 0 ? l->num_elements : 1) * sizeof(int64_t));
    size_t work = 0;
    if (b->conservative) {
        work = spart_cuda_weights_scan_scratch(b->units * b->batch);
    } else {
        work = spart_cuda_weights_multilinear_scratch(l->size_output);
        if (b->options->coalesce) {
            size_t sort = spart_cuda_weights_sort_scratch(l->size_output * b->corners);
            work = sort > work ? sort : work;
        }
    }
    b->work_bytes = round_up(work);
    if (base != NULL) {
        b->work = base + at;
    }
    at += b->work_bytes;
    return at;
}

/* Fill in what the build needs from the (checked) arguments. */
static spart_status plan_build(device_build *b, spart_context *context, int num_coordinates,
                               const spart_array *coordinates_input,
                               const spart_array *coordinates_output,
                               const spart_weights_options *options)
{
    memset(b, 0, sizeof *b);
    b->context = context;
    b->stream = (cudaStream_t)context->cuda_stream;
    b->options = options;
    b->coordinates_input = coordinates_input;
    b->coordinates_output = coordinates_output;
    b->conservative = options->method == SPART_METHOD_CONSERVATIVE;
    /* the arguments were checked (spart_weights_build_device) */
    spart_status status = spart_weights_describe_checked(
        context, num_coordinates, coordinates_input, coordinates_output, options, &b->shell);
    if (status == SPART_OK) {
        status = spart_weights_layout_make(
            context, num_coordinates, coordinates_input, coordinates_output,
            options->num_axis_input, options->axis_input, options->num_axis_output,
            options->axis_output, b->conservative || options->num_axis_output == 0, &b->layout);
    }
    if (status == SPART_OK) {
        status = spart_weights_input_strides(context, &b->layout, options->weights_input,
                                             b->conservative, &b->full_values, b->strides_values);
    }
    b->size_values = 1;
    for (int a = 0; a < b->layout.num_axes_input; a++) {
        b->size_values *= b->full_values.dims[b->layout.resampled_input[a]];
    }
    b->corners = 1 << num_coordinates;
    b->units = b->conservative && num_coordinates == 1 ? b->layout.grid_shape_input[0] - 1 : 0;
    b->shared_input = spart_weights_layout_input_shared(&b->layout);
    b->shared_output = spart_weights_layout_output_shared(&b->layout);
    b->batch = 1;
    if (status == SPART_OK && b->units > 0 && b->layout.num_elements > 1) {
        /* 1-D elements are small: build many at once, their grids and
         * counts within a budget */
        int64_t per_element = (b->shared_input ? 0 : b->layout.size_input) +
                              (b->shared_output ? 0 : b->layout.size_output) +
                              (options->weights_input != NULL ? b->size_values : 0) + 2 * b->units;
        int64_t batch = spart_wdev_batch_words / (per_element > 0 ? per_element : 1);
        batch = batch < 1 ? 1 : batch;
        b->batch = batch < b->layout.num_elements ? batch : b->layout.num_elements;
    }
    return status;
}

/* Whether the device builds this problem itself (else the host builds it
 * and its entries are copied). The per-grid conditions (a rectilinear
 * multilinear grid, monotonic 1-D grids) are checked element by element
 * as the build goes. */
static int device_builds(const device_build *b)
{
    const spart_weights_layout *l = &b->layout;
    if (b->conservative) {
        /* 2-D: clipping (the sweep, and a jittered output grid, stay on
         * the host) */
        return l->num_coordinates == 1 || (b->options->algorithm != SPART_ALGORITHM_SWEEP &&
                                           b->options->perturb != SPART_PERTURB_YES);
    }
    /* the coalescing sort's key, input * size_output + output, in 62 bits */
    int64_t limit = (int64_t)1 << 62;
    return !b->options->coalesce || l->size_input == 0 || l->size_output < limit / l->size_input;
}

/* One side's coordinates of the element at orthogonal index `index` on the
 * host, as the host driver reads them: in place where dense, else gathered
 * into `space`; returns the space left. */
double *spart_wdev_host_side(const spart_weights_layout *l, int output,
                             const spart_array *coordinates, const int64_t *index, double *space,
                             const double **blocks)
{
    const int64_t(*strides)[SPART_MAX_NDIM] = output ? l->strides_output : l->strides_input;
    const spart_shape *full = output ? &l->full_output : &l->full_input;
    const int *resampled = output ? l->resampled_output : l->resampled_input;
    const int num_resampled = output ? l->num_axes_output : l->num_axes_input;
    const size_t size = (size_t)(output ? l->size_output : l->size_input);
    for (int c = 0; c < l->num_coordinates; c++) {
        blocks[c] = spart_block_in_place(coordinates[c].data, strides[c], full, resampled,
                                         num_resampled, index);
        if (blocks[c] == NULL) {
            spart_gather_block(coordinates[c].data, strides[c], full, resampled, num_resampled,
                               index, space);
            blocks[c] = space;
            space += size;
        }
    }
    return space;
}

cudaError_t spart_wdev_upload(spart_stager *s, void *device, const void *host, size_t bytes,
                              cudaStream_t stream)
{
    /* From pageable memory a plain copy returns once the host's bytes are
     * staged, a staged one once they are in a pinned buffer, so the host
     * space may be reused at once. */
    return spart_stager_copy(s, device, host, bytes, stream);
}

cudaError_t spart_wdev_stager_for(spart_stager *s, double bytes, int threads)
{
    const double threshold = 512.0 * 1024 * 1024;
    return spart_stager_open(s, bytes >= threshold ? (size_t)32 << 20 : 0, threads);
}

/* Lay element e out on the host and copy it to the device: its input grid
 * (unless `input_ready`: a shared grid already there), its output grid and
 * its weights_input. host_input gets the host blocks of the input grid. */
cudaError_t spart_wdev_upload_element(device_build *b, int64_t e, int input_ready,
                                      const double **host_input, const double **host_output)
{
    const spart_weights_layout *l = &b->layout;
    int64_t index[SPART_MAX_NDIM] = {0};
    spart_unravel(e, &l->shape_orthogonal, index);
    if (b->grids_on_device) {
        for (int c = 0; c < l->num_coordinates; c++) {
            b->input[c] = (double *)spart_block_in_place(
                b->coordinates_input[c].data, l->strides_input[c], &l->full_input,
                l->resampled_input, l->num_axes_input, index);
            b->output[c] = (double *)spart_block_in_place(
                b->coordinates_output[c].data, l->strides_output[c], &l->full_output,
                l->resampled_output, l->num_axes_output, index);
            host_input[c] = NULL;
            host_output[c] = NULL;
        }
        if (b->options->weights_input != NULL) {
            b->weights_input = (double *)spart_block_in_place(
                b->options->weights_input->data, b->strides_values, &b->full_values,
                l->resampled_input, l->num_axes_input, index);
        }
        return cudaSuccess;
    }
    double *space = b->host;
    cudaError_t error = cudaSuccess;
    if (!input_ready) {
        space = spart_wdev_host_side(l, 0, b->coordinates_input, index, space, host_input);
        for (int c = 0; c < l->num_coordinates && error == cudaSuccess; c++) {
            error = spart_wdev_upload(&b->stager, b->input[c], host_input[c],
                                      (size_t)l->size_input * sizeof(double), b->stream);
        }
    }
    space = spart_wdev_host_side(l, 1, b->coordinates_output, index, space, host_output);
    const int64_t values = b->output_values > 0 ? b->output_values : l->size_output;
    for (int c = 0; c < l->num_coordinates && error == cudaSuccess; c++) {
        error = spart_wdev_upload(&b->stager, b->output[c], host_output[c],
                                  (size_t)values * sizeof(double), b->stream);
    }
    if (b->options->weights_input != NULL && error == cudaSuccess) {
        spart_gather_block(b->options->weights_input->data, b->strides_values, &b->full_values,
                           l->resampled_input, l->num_axes_input, index, space);
        error = spart_wdev_upload(&b->stager, b->weights_input, space,
                                  (size_t)b->size_values * sizeof(double), b->stream);
    }
    return error;
}

/* Make room for `needed` entries in the device arrays, keeping the first
 * `kept`; grows to at least twice the capacity. */
cudaError_t spart_wdev_reserve_entries(device_build *b, int64_t needed, int64_t kept)
{
    if (needed <= b->capacity) {
        return cudaSuccess;
    }
    int64_t capacity = b->capacity * 2 > needed ? b->capacity * 2 : needed;
    void *arrays[3] = {NULL, NULL, NULL};
    void *old[3] = {b->indices_input, b->indices_output, b->values};
    cudaError_t error = cudaSuccess;
    for (int a = 0; a < 3 && error == cudaSuccess; a++) {
        error = cudaMalloc(&arrays[a], (size_t)capacity * 8);
        if (error == cudaSuccess && kept > 0) {
            error = cudaMemcpyAsync(arrays[a], old[a], (size_t)kept * 8, cudaMemcpyDeviceToDevice,
                                    b->stream);
        }
    }
    if (error != cudaSuccess) {
        for (int a = 0; a < 3; a++) {
            (void)cudaFree(arrays[a]);
        }
        return error;
    }
    (void)cudaStreamSynchronize(b->stream); /* the copies, before the old arrays go */
    for (int a = 0; a < 3; a++) {
        (void)cudaFree(old[a]);
    }
    b->indices_input = arrays[0];
    b->indices_output = arrays[1];
    b->values = arrays[2];
    b->capacity = capacity;
    return cudaSuccess;
}

spart_device_entries_out spart_wdev_entries_at(const device_build *b, int64_t first)
{
    spart_device_entries_out out = {b->indices_input + first, b->indices_output + first,
                                    b->values + first};
    return out;
}

spart_device_element spart_wdev_element_of(const device_build *b)
{
    const spart_weights_layout *l = &b->layout;
    spart_device_element element;
    memset(&element, 0, sizeof element);
    element.num_coordinates = l->num_coordinates;
    for (int c = 0; c < l->num_coordinates; c++) {
        element.input[c] = b->input[c];
        element.output[c] = b->output[c];
        element.shape_input[c] = l->grid_shape_input[c];
        element.shape_output[c] = l->grid_shape_output[c];
    }
    element.num_points = l->size_output;
    element.weights_input = b->options->weights_input != NULL ? b->weights_input : NULL;
    return element;
}

void spart_wdev_release_entries(spart_weights *weights)
{
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) {
        previous = -1;
    }
    (void)cudaSetDevice(weights->cuda_device);
    (void)cudaFree(weights->indices_input);
    (void)cudaFree(weights->indices_output);
    (void)cudaFree(weights->values);
    if (previous >= 0) {
        (void)cudaSetDevice(previous);
    }
    weights->indices_input = NULL;
    weights->indices_output = NULL;
    weights->values = NULL;
}

/* The weights object of the build's device arrays (taken over). */
static spart_status make_weights(device_build *b, spart_weights **weights)
{
    const spart_weights *s = &b->shell;
    spart_weights *made = spart_weights_allocate(
        &b->context->allocator, &s->shape_orthogonal, &s->shape_input, &s->shape_output,
        s->num_axis_input, s->axis_input, s->num_axis_output, s->axis_output, 0);
    if (made == NULL) {
        return spart_fail(b->context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    spart_free(&b->context->allocator, made->indices_input);
    spart_free(&b->context->allocator, made->indices_output);
    spart_free(&b->context->allocator, made->values);
    memcpy(made->offsets, b->offsets, (size_t)(made->num_elements + 1) * sizeof(int64_t));
    made->indices_input = b->indices_input;
    made->indices_output = b->indices_output;
    made->values = b->values;
    made->on_device = 1;
    made->cuda_device = b->context->cuda_device;
    made->release_device = spart_wdev_release_entries;
    b->indices_input = NULL;
    b->indices_output = NULL;
    b->values = NULL;
    *weights = made;
    return SPART_OK;
}

/* The host build, its entries copied to the device. */
static spart_status build_on_host(device_build *b, int num_coordinates, spart_weights **weights)
{
    spart_weights *host = NULL;
    spart_status status =
        spart_weights_build_host(b->context, num_coordinates, b->coordinates_input,
                                 b->coordinates_output, b->options, &host);
    if (status != SPART_OK) {
        return status;
    }
    int64_t total = host->offsets[host->num_elements];
    cudaError_t error = spart_wdev_reserve_entries(b, total > 0 ? total : 1, 0);
    const void *from[3] = {host->indices_input, host->indices_output, host->values};
    void *to[3] = {b->indices_input, b->indices_output, b->values};
    for (int a = 0; a < 3 && error == cudaSuccess; a++) {
        error = spart_wdev_upload(&b->stager, to[a], from[a], (size_t)total * 8, b->stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(b->stream);
    }
    if (error != cudaSuccess) {
        spart_weights_free(host);
        return spart_device_failure(b->context, (int)error, "weights_build_device: the copy");
    }
    memcpy(b->offsets, host->offsets, (size_t)(host->num_elements + 1) * sizeof(int64_t));
    spart_weights_free(host);
    return make_weights(b, weights);
}

static void release_build(device_build *b)
{
    spart_stager_close(&b->stager);
    if (b->scratch != NULL) {
        (void)cudaFreeAsync(b->scratch, b->stream);
        (void)cudaStreamSynchronize(b->stream);
    }
    (void)cudaFree(b->indices_input);
    (void)cudaFree(b->indices_output);
    (void)cudaFree(b->values);
    spart_free(&b->context->allocator, b->host);
    spart_free(&b->context->allocator, b->offsets);
}

spart_status spart_wdev_build(spart_context *context, int num_coordinates,
                              const spart_array *coordinates_input,
                              const spart_array *coordinates_output,
                              const spart_weights_options *options, int grids_on_device,
                              spart_weights **weights)
{
    device_build b;
    spart_status status =
        plan_build(&b, context, num_coordinates, coordinates_input, coordinates_output, options);
    if (status != SPART_OK) {
        return status;
    }
    b.grids_on_device = grids_on_device;
    int previous = -1;
    status = spart_device_enter(context, what, &previous);
    if (status != SPART_OK) {
        return status;
    }
    const spart_weights_layout *l = &b.layout;
    size_t host_doubles = grids_on_device
                              ? 1
                              : (size_t)b.batch * ((size_t)l->num_coordinates *
                                                       (size_t)(l->size_input + l->size_output) +
                                                   (size_t)b.size_values);
    b.host = spart_alloc(&context->allocator, host_doubles > 0 ? host_doubles : 1, sizeof(double));
    b.offsets = spart_alloc_zero(&context->allocator, (size_t)l->num_elements + 1, sizeof(int64_t));
    if (b.host == NULL || b.offsets == NULL) {
        status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    int unsupported = !device_builds(&b);
    if (status == SPART_OK && !grids_on_device) {
        /* what the elements' grids (and weights_input) copy in all */
        double grids = (double)l->num_coordinates *
                       ((b.shared_input ? 1.0 : (double)l->num_elements) * (double)l->size_input +
                        (b.shared_output ? 1.0 : (double)l->num_elements) * (double)l->size_output);
        double values = b.options->weights_input != NULL
                            ? (double)l->num_elements * (double)b.size_values
                            : 0.0;
        cudaError_t error =
            spart_wdev_stager_for(&b.stager, 8.0 * (grids + values), spart_threads(context));
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, "weights_build_device: staging");
        }
    }
    if (status == SPART_OK && !unsupported) {
        cudaError_t error = cudaMallocAsync(&b.scratch, scratch_layout(&b, NULL), b.stream);
        if (error != cudaSuccess) {
            b.scratch = NULL;
            status = spart_device_failure(context, (int)error, "weights_build_device: scratch");
        } else {
            scratch_layout(&b, b.scratch);
        }
    }
    if (status == SPART_OK && !unsupported) {
        status = !b.conservative           ? spart_wdev_build_multilinear(&b, &unsupported)
                 : l->num_coordinates == 1 ? spart_wdev_build_conservative_1d(&b, &unsupported)
                                           : spart_wdev_build_clip_2d(&b);
    }
    if (status == SPART_OK && !unsupported) {
        cudaError_t error = cudaStreamSynchronize(b.stream);
        status = error == cudaSuccess
                     ? make_weights(&b, weights)
                     : spart_device_failure(context, (int)error, "weights_build_device");
    } else if (status == SPART_OK) {
        status = build_on_host(&b, num_coordinates, weights);
    }
    release_build(&b);
    spart_device_leave(previous);
    return status;
}

static spart_status cuda_build(spart_context *context, int num_coordinates,
                               const spart_array *coordinates_input,
                               const spart_array *coordinates_output,
                               const spart_weights_options *options, spart_weights **weights)
{
    return spart_wdev_build(context, num_coordinates, coordinates_input, coordinates_output,
                            options, 0, weights);
}

static spart_status cuda_workspace_size(spart_context *context, int num_coordinates,
                                        const spart_array *coordinates_input,
                                        const spart_array *coordinates_output,
                                        const spart_weights_options *options, size_t *bytes)
{
    device_build b;
    spart_status status =
        plan_build(&b, context, num_coordinates, coordinates_input, coordinates_output, options);
    if (status == SPART_OK) {
        *bytes = device_builds(&b) ? scratch_layout(&b, NULL) : 0;
    }
    return status;
}

static spart_status cuda_to_host(spart_context *context, const spart_weights *weights,
                                 spart_weights **host)
{
    int previous = -1;
    spart_status status = spart_device_select(context, weights->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    int64_t total = weights->offsets[weights->num_elements];
    spart_weights *made = spart_weights_allocate(
        &context->allocator, &weights->shape_orthogonal, &weights->shape_input,
        &weights->shape_output, weights->num_axis_input, weights->axis_input,
        weights->num_axis_output, weights->axis_output, total);
    if (made == NULL) {
        spart_device_leave(previous);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "weights_to_host: out of memory");
    }
    memcpy(made->offsets, weights->offsets, (size_t)(weights->num_elements + 1) * sizeof(int64_t));
    const void *from[3] = {weights->indices_input, weights->indices_output, weights->values};
    void *to[3] = {made->indices_input, made->indices_output, made->values};
    cudaError_t error = cudaSuccess;
    for (int a = 0; a < 3 && error == cudaSuccess && total > 0; a++) {
        error = cudaMemcpy(to[a], from[a], (size_t)total * 8, cudaMemcpyDeviceToHost);
    }
    spart_device_leave(previous);
    if (error != cudaSuccess) {
        spart_weights_free(made);
        return spart_device_failure(context, (int)error, "weights_to_host");
    }
    *host = made;
    return SPART_OK;
}

const spart_weights_ops spart_weights_cuda_ops = {
    "CUDA device",
    cuda_build,
    spart_weights_build_grids_on_device,
    cuda_workspace_size,
    cuda_to_host,
    spart_weights_scale_on_device,
    spart_weights_transpose_on_device,
    spart_weights_convolve_on_device,
};
