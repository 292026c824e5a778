/*
 * src/weights/weights_device_builders_cuda.c: the device builders of
 * spart_weights_build_device (the CUDA table's driver is
 * src/weights/weights_device_cuda.c; the contract with the kernels
 * src/weights/weights_device.h): multilinear on rectilinear and
 * curvilinear grids, element by element (kernels/weights_multilinear.cu, the coalescing sort of
 * kernels/weights_device.cu); conservative 1-D in batches of elements
 * (kernels/weights_conservative_1d.cu: count, scan, each element's first
 * entry picked and copied to the host once a batch, write); conservative
 * 2-D by clipping through 30-clip's kernels (src/weights/weights_clip_device.h).
 * Built with CUDA only.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/shape.h"
#include "device/device_select.h"
#include "weights/conservative_1d_math.h"
#include "weights/multilinear_curvilinear_math.h"
#include "weights/weights_clip_device.h"
#include "weights/weights_device_build.h"
#include "weights/weights_internal.h"
#include "weights/weights_kernels.h"

/* The profiles of element e's input grid on the device; *rectilinear 0
 * when it is not rectilinear (the host builds the problem then). */
static spart_status upload_profiles(device_build *b, const double *const *host_input,
                                    spart_device_rectilinear *profiles_out, int *rectilinear,
                                    cudaError_t *error)
{
    const spart_weights_layout *l = &b->layout;
    double *profiles[3] = {NULL, NULL, NULL};
    int coordinate[3] = {0, 0, 0}, descending[3] = {0, 0, 0};
    int found = spart_host_multilinear_rectilinear(l->num_coordinates, l->grid_shape_input,
                                                   host_input, &b->context->allocator, profiles,
                                                   coordinate, descending);
    if (found < 0) {
        return spart_fail(b->context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                          spart_wdev_what);
    }
    *rectilinear = found;
    double *at = b->profiles;
    for (int m = 0; found && m < l->num_coordinates; m++) {
        if (*error == cudaSuccess) {
            *error = spart_wdev_upload(&b->stager, at, profiles[m],
                                       (size_t)l->grid_shape_input[m] * sizeof(double), b->stream);
        }
        profiles_out->profile[m] = at;
        profiles_out->coordinate[m] = coordinate[m];
        profiles_out->descending[m] = descending[m];
        at += l->grid_shape_input[m];
        spart_free(&b->context->allocator, profiles[m]);
    }
    return SPART_OK;
}

/* The hierarchy of boxes of a curvilinear input grid, built on the host
 * as the host kernel builds it, its boxes copied to the device (freed with
 * release_tree); *deep when it has more levels than the device searches
 * (the host builds the problem then). */
static spart_status upload_tree(device_build *b, const double *const *host_input, box_tree *tree,
                                int *deep, cudaError_t *error)
{
    const spart_weights_layout *l = &b->layout;
    box_tree host;
    int64_t num_boxes = 0;
    spart_status status = spart_host_multilinear_box_tree(
        l->num_coordinates, l->grid_shape_input, host_input, &b->context->allocator,
        spart_threads(b->context), &host, &num_boxes);
    if (status != SPART_OK) {
        return spart_fail(b->context, status, "%s: out of memory", spart_wdev_what);
    }
    *tree = host;
    tree->boxes = NULL;
    *deep = host.num_levels > SPART_DEVICE_TREE_LEVELS;
    size_t bytes = (size_t)num_boxes * 2 * (size_t)l->num_coordinates * sizeof(double);
    if (!*deep && bytes > 0) {
        *error = cudaMallocAsync((void **)&tree->boxes, bytes, b->stream);
        if (*error == cudaSuccess) {
            *error = spart_wdev_upload(&b->stager, tree->boxes, host.boxes, bytes, b->stream);
        } else {
            tree->boxes = NULL;
        }
    }
    spart_free(&b->context->allocator, host.boxes);
    return SPART_OK;
}

static void release_tree(device_build *b, box_tree *tree)
{
    if (tree->boxes != NULL) {
        (void)cudaFreeAsync(tree->boxes, b->stream);
        tree->boxes = NULL;
    }
}

/* Multilinear: every element on the device, on rectilinear grids by their
 * profiles, on curvilinear ones by the host's hierarchy of boxes;
 * *unsupported for a tree deeper than the device searches. */
spart_status spart_wdev_build_multilinear(device_build *b, int *unsupported)
{
    const spart_weights_layout *l = &b->layout;
    const int64_t per_element = l->size_output * b->corners;
    cudaError_t error = spart_wdev_reserve_entries(b, per_element * l->num_elements, 0);
    const int shared = spart_weights_layout_input_shared(l);
    const int nan_outside = b->options->bounds == SPART_BOUNDS_NAN;
    spart_device_rectilinear lines;
    memset(&lines, 0, sizeof lines);
    box_tree tree;
    memset(&tree, 0, sizeof tree);
    int rectilinear = 1;
    spart_status status = SPART_OK;
    for (int64_t e = 0; e < l->num_elements && error == cudaSuccess && status == SPART_OK; e++) {
        const double *host_input[3] = {NULL, NULL, NULL}, *host_output[3] = {NULL, NULL, NULL};
        int input_ready = shared && e > 0;
        error = spart_wdev_upload_element(b, e, input_ready, host_input, host_output);
        if (!input_ready && error == cudaSuccess) {
            status = upload_profiles(b, host_input, &lines, &rectilinear, &error);
            release_tree(b, &tree);
            if (status == SPART_OK && !rectilinear) {
                int deep = 0;
                status = upload_tree(b, host_input, &tree, &deep, &error);
                if (status == SPART_OK && deep) {
                    *unsupported = 1;
                    return SPART_OK;
                }
            }
        }
        spart_device_element element = spart_wdev_element_of(b);
        spart_device_entries_out out = spart_wdev_entries_at(b, e * per_element);
        if (error == cudaSuccess && status == SPART_OK) {
            /* the host kernel extrapolates on curvilinear grids unless
             * bounds = NaN (spart_host_weights_multilinear) */
            error =
                (cudaError_t)(rectilinear ? spart_cuda_weights_multilinear(
                                                &element, &lines, nan_outside, out, b->outside + e,
                                                b->work, b->work_bytes, b->stream)
                                          : spart_cuda_weights_multilinear_curvilinear(
                                                &element, &tree, nan_outside, !nan_outside, out,
                                                b->outside + e, b->work, b->work_bytes, b->stream));
        }
        if (error == cudaSuccess && status == SPART_OK && b->options->coalesce) {
            error = (cudaError_t)spart_cuda_weights_sort(
                out, per_element, l->size_input, l->size_output, b->work, b->work_bytes, b->stream);
        }
        b->offsets[e + 1] = (e + 1) * per_element;
        spart_report_progress(b->context, "weights", e + 1, l->num_elements);
    }
    release_tree(b, &tree);
    if (status != SPART_OK) {
        return status;
    }
    int64_t num_outside = 0;
    if (error == cudaSuccess && l->num_elements > 0) {
        size_t bytes = (size_t)l->num_elements * sizeof(int64_t);
        int64_t *outside =
            spart_alloc(&b->context->allocator, (size_t)l->num_elements, sizeof(int64_t));
        if (outside == NULL) {
            return spart_fail(b->context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                              spart_wdev_what);
        }
        error = cudaMemcpyAsync(outside, b->outside, bytes, cudaMemcpyDeviceToHost, b->stream);
        if (error == cudaSuccess) {
            error = cudaStreamSynchronize(b->stream);
        }
        for (int64_t e = 0; error == cudaSuccess && e < l->num_elements; e++) {
            num_outside += outside[e];
        }
        spart_free(&b->context->allocator, outside);
    }
    if (error != cudaSuccess) {
        return spart_device_failure(b->context, (int)error, "weights_build_device: multilinear");
    }
    if (b->options->bounds == SPART_BOUNDS_ERROR && num_outside > 0) {
        /* the host build's sentence (src/weights/weights_build.c) */
        return spart_fail(b->context, SPART_ERROR_OUT_OF_BOUNDS,
                          "%lld of the output points fall outside the input grid, and bounds "
                          "= SPART_BOUNDS_ERROR",
                          (long long)num_outside);
    }
    return SPART_OK;
}

/* Whether a 1-D grid never turns back: its ascending view (as the walk
 * reads it) never decreases. */
static int grid_is_monotonic(const double *x, int64_t num)
{
    int reversed = spart_c1d_reversed(x, num);
    for (int64_t k = 0; k + 1 < num; k++) {
        if (spart_c1d_vertex(x, num, reversed, k + 1) < spart_c1d_vertex(x, num, reversed, k)) {
            return 0;
        }
    }
    return 1;
}

/* Copy one side's grids (output nonzero: the output's) of elements first
 * .. first + count - 1 to `device`, one after the other (one grid when
 * every element shares it): straight from the caller's array when they lie
 * there one after the other, else gathered into `space`. *monotonic 0 when
 * a grid turns back. */
static cudaError_t upload_grids_1d(device_build *b, int output, int64_t first, int64_t count,
                                   double *space, double *device, int *monotonic)
{
    const spart_weights_layout *l = &b->layout;
    const spart_array *coordinates = output ? b->coordinates_output : b->coordinates_input;
    const int64_t n = output ? l->grid_shape_output[0] : l->grid_shape_input[0];
    const double *start = NULL;
    int adjacent = 1;
    /* first where each grid lies (and whether they lie one after the
     * other), then copies only where they do not */
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t k = 0; k < count; k++) {
            int64_t index[SPART_MAX_NDIM] = {0};
            spart_unravel(first + k, &l->shape_orthogonal, index);
            const double *block[3] = {NULL, NULL, NULL};
            spart_wdev_host_side(l, output, coordinates, index, space + k * n, block);
            if (pass == 0) {
                *monotonic = *monotonic && grid_is_monotonic(block[0], n);
                start = k == 0 ? block[0] : start;
                adjacent = adjacent && block[0] == start + k * n;
            } else if (block[0] != space + k * n) {
                memcpy(space + k * n, block[0], (size_t)n * sizeof(double));
            }
        }
        if (adjacent) {
            break;
        }
    }
    return spart_wdev_upload(&b->stager, device, adjacent ? start : space,
                             (size_t)(count * n) * sizeof(double), b->stream);
}

/* Conservative 1-D: the elements in batches on the device; *unsupported
 * when a grid turns back. */
spart_status spart_wdev_build_conservative_1d(device_build *b, int *unsupported)
{
    const spart_weights_layout *l = &b->layout;
    const int coalesced = b->options->coalesce != 0;
    const int64_t n_in = l->grid_shape_input[0], n_out = l->grid_shape_output[0];
    cudaError_t error = cudaSuccess;
    int64_t *picked = spart_alloc(&b->context->allocator, (size_t)b->batch + 1, sizeof(int64_t));
    if (picked == NULL) {
        return spart_fail(b->context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                          spart_wdev_what);
    }
    for (int64_t first = 0; first < l->num_elements && error == cudaSuccess; first += b->batch) {
        const int64_t count =
            l->num_elements - first < b->batch ? l->num_elements - first : b->batch;
        int monotonic = 1;
        double *space = b->host;
        if (!b->shared_input || first == 0) {
            int64_t grids = b->shared_input ? 1 : count;
            error = upload_grids_1d(b, 0, first, grids, space, b->input[0], &monotonic);
            space += grids * n_in;
        }
        if (error == cudaSuccess && (!b->shared_output || first == 0)) {
            int64_t grids = b->shared_output ? 1 : count;
            error = upload_grids_1d(b, 1, first, grids, space, b->output[0], &monotonic);
            space += grids * n_out;
        }
        if (!monotonic) {
            *unsupported = 1;
            spart_free(&b->context->allocator, picked);
            return SPART_OK;
        }
        for (int64_t k = 0; b->options->weights_input != NULL && k < count; k++) {
            int64_t index[SPART_MAX_NDIM] = {0};
            spart_unravel(first + k, &l->shape_orthogonal, index);
            spart_gather_block(b->options->weights_input->data, b->strides_values, &b->full_values,
                               l->resampled_input, l->num_axes_input, index,
                               space + k * b->size_values);
        }
        if (b->options->weights_input != NULL && error == cudaSuccess) {
            error = spart_wdev_upload(&b->stager, b->weights_input, space,
                                      (size_t)(count * b->size_values) * 8, b->stream);
        }
        spart_device_grids_1d grids = {count,
                                       b->input[0],
                                       n_in,
                                       b->shared_input ? 0 : n_in,
                                       b->output[0],
                                       n_out,
                                       b->shared_output ? 0 : n_out,
                                       b->options->weights_input != NULL ? b->weights_input : NULL,
                                       b->size_values};
        const int64_t units = count * b->units;
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_cuda_weights_conservative_1d_count(&grids, coalesced,
                                                                          b->counts, b->stream);
        }
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_cuda_weights_scan(b->counts, units, b->starts, b->work,
                                                         b->work_bytes, b->stream);
        }
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_cuda_weights_pick(b->starts, b->units, count + 1, b->picked,
                                                         b->stream);
        }
        if (error == cudaSuccess) {
            error = cudaMemcpyAsync(picked, b->picked, (size_t)(count + 1) * sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, b->stream);
        }
        if (error == cudaSuccess) {
            error = cudaStreamSynchronize(b->stream);
        }
        const int64_t at = b->offsets[first];
        if (error == cudaSuccess) {
            error = spart_wdev_reserve_entries(b, at + picked[count], at);
        }
        if (error == cudaSuccess && picked[count] > 0) {
            error = (cudaError_t)spart_cuda_weights_conservative_1d_write(
                &grids, coalesced, b->starts, spart_wdev_entries_at(b, at), b->stream);
        }
        for (int64_t k = 1; error == cudaSuccess && k <= count; k++) {
            b->offsets[first + k] = at + picked[k];
        }
        spart_report_progress(b->context, "weights", first + count, l->num_elements);
    }
    spart_free(&b->context->allocator, picked);
    if (error != cudaSuccess) {
        return spart_device_failure(b->context, (int)error,
                                    "weights_build_device: conservative 1-D");
    }
    return SPART_OK;
}

/* Conservative 2-D by clipping: every output grid a lattice (the lattice
 * kernel) or not (the general one), decided on the host as the host
 * driver decides it (outputs_are_lattices in src/weights/weights_build.c);
 * for grids in device memory, by the same tests on the device. */
static int outputs_are_lattices(device_build *b)
{
    const spart_weights_layout *l = &b->layout;
    int64_t count = spart_weights_layout_output_shared(l) ? 1 : l->num_elements;
    int lattice = 1;
    for (int64_t e = 0; e < count && lattice; e++) {
        int64_t index[SPART_MAX_NDIM] = {0};
        spart_unravel(e, &l->shape_orthogonal, index);
        const double *xy[3] = {NULL, NULL, NULL};
        spart_wdev_host_side(l, 1, b->coordinates_output, index, b->host, xy);
        lattice = spart_host_grid_is_lattice(xy[0], xy[1], l->grid_shape_output[0],
                                             l->grid_shape_output[1]);
    }
    return lattice;
}

/* Conservative 2-D, element by element, through 30-clip's kernels
 * (src/weights/weights_clip_device.h): count, make room, write. */
spart_status spart_wdev_build_clip_2d(device_build *b)
{
    const spart_weights_layout *l = &b->layout;
    int lattice = 0;
    if (b->grids_on_device) {
        spart_status status = spart_wdev_outputs_are_lattices_on_device(b, &lattice);
        if (status != SPART_OK) {
            return status;
        }
    } else {
        lattice = outputs_are_lattices(b);
    }
    /* a lattice is read by its origin and steps alone: copy x[0 .. num_y]
     * and y[0 .. num_y], not the whole grid (b->output_values) */
    b->output_values = lattice ? l->grid_shape_output[1] + 1 : 0;
    const int shared = spart_weights_layout_input_shared(l);
    cudaError_t error = cudaSuccess;
    for (int64_t e = 0; e < l->num_elements && error == cudaSuccess; e++) {
        const double *host_input[3] = {NULL, NULL, NULL}, *host_output[3] = {NULL, NULL, NULL};
        error = spart_wdev_upload_element(b, e, shared && e > 0, host_input, host_output);
        spart_device_clip_grid input = {b->input[0], b->input[1], l->grid_shape_input[0],
                                        l->grid_shape_input[1]};
        spart_device_clip_grid output = {b->output[0], b->output[1], l->grid_shape_output[0],
                                         l->grid_shape_output[1]};
        const double *factors = b->options->weights_input != NULL ? b->weights_input : NULL;
        spart_device_clip_counts *counts = NULL;
        int64_t total = 0;
        if (error == cudaSuccess) {
            error = (cudaError_t)spart_cuda_clip_2d_count(&input, &output, lattice, factors,
                                                          &counts, &total, b->stream);
        }
        if (error == cudaSuccess) {
            error = spart_wdev_reserve_entries(b, b->offsets[e] + total, b->offsets[e]);
        }
        if (error == cudaSuccess && total > 0) {
            spart_device_entries_out out = spart_wdev_entries_at(b, b->offsets[e]);
            error = (cudaError_t)spart_cuda_clip_2d_write(
                counts, out.indices_input, out.indices_output, out.values, b->stream);
        }
        spart_cuda_clip_2d_counts_free(counts, b->stream);
        b->offsets[e + 1] = b->offsets[e] + total;
        spart_report_progress(b->context, "weights", e + 1, l->num_elements);
    }
    if (error != cudaSuccess) {
        return spart_device_failure(b->context, (int)error,
                                    "weights_build_device: conservative 2-D");
    }
    return SPART_OK;
}
