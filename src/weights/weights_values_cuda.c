/*
 * src/weights/weights_values_cuda.c: the CUDA table's rewrites of the
 * values of weights on a device (src/weights/weights_ops.h):
 * spart_weights_scale and spart_weights_transpose_conservative on weights
 * whose entries lie on a device. Built with CUDA only.
 *
 * The factors are the host's (src/weights/weights_values.h): computed on
 * the host by the same code as for host weights, a batch of elements at
 * a time with the context's threads, each element's blocks copied to the
 * device and its entries rewritten there (kernels/weights_values.cu). A
 * block every element shares (the sensor of an instrument, a factor
 * broadcast along the orthogonal axes) is computed and copied once. The
 * work is stream-ordered on the weights' device (the context's stream
 * when the context uses that device, else the default stream) and
 * synchronised before return.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/internal.h"
#include "device/device_select.h"
#include "weights/weights_device_build.h"
#include "weights/weights_internal.h"
#include "weights/weights_ops.h"
#include "weights/weights_values.h"

/* The factors of one rewrite: host blocks of a batch of elements, device
 * blocks of one element. */
typedef struct factor_run {
    spart_context *context;
    const spart_weights_factors *f;
    cudaStream_t stream;
    int64_t batch;      /* elements filled at once */
    size_t per_element; /* host doubles an element: scratch, input, output */
    double *host;
    double *device_input;  /* cells_input, or NULL for none */
    double *device_output; /* cells_output, or NULL */
    spart_stager stager;   /* pinned buffers when the blocks copy much */
    /* a side whose distinct blocks (by the factors' keys) are all on the
     * device at once: cache[side] (distinct x cells), slot[side][e] */
    double *cache[2];
    int64_t *slot[2];
} factor_run;

static double *host_scratch(const factor_run *run, int64_t j)
{
    return run->host + (size_t)j * run->per_element;
}

static double *host_input(const factor_run *run, int64_t j)
{
    return host_scratch(run, j) + run->f->scratch_doubles;
}

static double *host_output(const factor_run *run, int64_t j)
{
    return host_input(run, j) + run->f->cells_input;
}

static void release_run(factor_run *run)
{
    spart_stager_close(&run->stager);
    for (int side = 0; side < 2; side++) {
        (void)cudaFree(run->cache[side]);
        spart_free(&run->context->allocator, run->slot[side]);
    }
    (void)cudaFree(run->device_input);
    (void)cudaFree(run->device_output);
    spart_free(&run->context->allocator, run->host);
}

/* Allocate the run and copy the shared blocks (filled from element 0). */
static spart_status begin_run(factor_run *run, spart_context *context,
                              const spart_weights_factors *f, cudaStream_t stream, const char *what)
{
    memset(run, 0, sizeof *run);
    run->context = context;
    run->f = f;
    run->stream = stream;
    int threads = spart_threads(context);
    run->batch = f->num_elements < threads ? f->num_elements : threads;
    run->batch = run->batch < 1 ? 1 : run->batch;
    run->per_element = f->scratch_doubles + (size_t)f->cells_input + (size_t)f->cells_output;
    run->host =
        spart_alloc(&context->allocator, (size_t)run->batch * run->per_element, sizeof(double));
    if (run->host == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "%s: could not allocate %zu values of host scratch", what,
                          (size_t)run->batch * run->per_element);
    }
    double copied =
        8.0 * ((f->shared_input ? 1.0 : (double)f->num_elements) * (double)f->cells_input +
               (f->shared_output ? 1.0 : (double)f->num_elements) * (double)f->cells_output);
    cudaError_t error = spart_wdev_stager_for(&run->stager, copied, threads);
    if (error == cudaSuccess && f->cells_input > 0) {
        error = cudaMalloc((void **)&run->device_input, (size_t)f->cells_input * sizeof(double));
    }
    if (error == cudaSuccess && f->cells_output > 0) {
        error = cudaMalloc((void **)&run->device_output, (size_t)f->cells_output * sizeof(double));
    }
    if (error == cudaSuccess && f->num_elements > 0 && (f->shared_input || f->shared_output)) {
        f->fill(f->user, 0, host_scratch(run, 0),
                f->shared_input && f->cells_input > 0 ? host_input(run, 0) : NULL,
                f->shared_output && f->cells_output > 0 ? host_output(run, 0) : NULL);
        if (f->shared_input && f->cells_input > 0) {
            error = spart_wdev_upload(&run->stager, run->device_input, host_input(run, 0),
                                      (size_t)f->cells_input * sizeof(double), stream);
        }
        if (error == cudaSuccess && f->shared_output && f->cells_output > 0) {
            error = spart_wdev_upload(&run->stager, run->device_output, host_output(run, 0),
                                      (size_t)f->cells_output * sizeof(double), stream);
        }
    }
    if (error != cudaSuccess) {
        release_run(run);
        return spart_device_failure(context, (int)error, what);
    }
    return SPART_OK;
}

/* Fill the blocks that are not shared of elements first .. first + count
 * - 1 (element first + j into slot j), with the context's threads;
 * entries_of: each element's element of the weights (NULL: itself), whose
 * offsets say which have entries (the others are skipped). */
static void fill_batch(const factor_run *run, int64_t first, int64_t count,
                       const int64_t *entries_of, const int64_t *offsets)
{
    const spart_weights_factors *f = run->f;
    int threads = spart_threads(run->context);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (count > 1)
    for (int64_t j = 0; j < count; j++) {
        int64_t e = first + j;
        int64_t source = entries_of != NULL ? entries_of[e] : e;
        if (offsets[source + 1] == offsets[source]) {
            continue;
        }
        f->fill(f->user, e, host_scratch(run, j),
                !f->shared_input && run->cache[0] == NULL && f->cells_input > 0 ? host_input(run, j)
                                                                                : NULL,
                !f->shared_output && run->cache[1] == NULL && f->cells_output > 0
                    ? host_output(run, j)
                    : NULL);
    }
}

/* Copy slot j's blocks that are not shared to the device (stream-ordered:
 * after the kernels that read the previous ones). */
static cudaError_t upload_slot(factor_run *run, int64_t j)
{
    const spart_weights_factors *f = run->f;
    cudaError_t error = cudaSuccess;
    if (!f->shared_input && run->cache[0] == NULL && f->cells_input > 0) {
        error = spart_wdev_upload(&run->stager, run->device_input, host_input(run, j),
                                  (size_t)f->cells_input * sizeof(double), run->stream);
    }
    if (error == cudaSuccess && !f->shared_output && run->cache[1] == NULL && f->cells_output > 0) {
        error = spart_wdev_upload(&run->stager, run->device_output, host_output(run, j),
                                  (size_t)f->cells_output * sizeof(double), run->stream);
    }
    return error;
}

/* An element and its key, sorted by key then element. */
typedef struct keyed {
    int64_t key, element;
} keyed;

static int compare_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return x->element < y->element ? -1 : (x->element > y->element);
}

/* Put every distinct block of one side (by its keys) on the device once,
 * when there are fewer distinct blocks than elements and they take at most
 * 1 GiB; else leave the side to the per-element copies. */
static cudaError_t cache_side(factor_run *run, int side)
{
    const spart_weights_factors *f = run->f;
    int64_t (*key)(const void *, int64_t) = side == 0 ? f->key_input : f->key_output;
    int64_t cells = side == 0 ? f->cells_input : f->cells_output;
    int shared = side == 0 ? f->shared_input : f->shared_output;
    int64_t n = f->num_elements;
    if (key == NULL || shared || cells == 0 || n < 2) {
        return cudaSuccess;
    }
    const spart_allocator *allocator = &run->context->allocator;
    keyed *order = spart_alloc(allocator, (size_t)n, sizeof *order);
    int64_t *slot = spart_alloc(allocator, (size_t)n, sizeof *slot);
    int64_t *first = spart_alloc(allocator, (size_t)n, sizeof *first); /* each slot's element */
    if (order == NULL || slot == NULL || first == NULL) {
        spart_free(allocator, order);
        spart_free(allocator, slot);
        spart_free(allocator, first);
        return cudaSuccess; /* the per-element copies need none of this */
    }
    for (int64_t e = 0; e < n; e++) {
        order[e].key = key(f->user, e);
        order[e].element = e;
    }
    qsort(order, (size_t)n, sizeof *order, compare_keyed);
    int64_t distinct = 0;
    for (int64_t k = 0; k < n; k++) {
        if (k == 0 || order[k].key != order[k - 1].key) {
            first[distinct++] = order[k].element;
        }
        slot[order[k].element] = distinct - 1;
    }
    spart_free(allocator, order);
    cudaError_t error = cudaSuccess;
    double bytes = (double)distinct * (double)cells * 8.0;
    if (distinct < n && bytes <= (double)((size_t)1 << 30)) {
        error = cudaMalloc((void **)&run->cache[side], (size_t)bytes);
    }
    for (int64_t g0 = 0; run->cache[side] != NULL && error == cudaSuccess && g0 < distinct;
         g0 += run->batch) {
        int64_t count = distinct - g0 < run->batch ? distinct - g0 : run->batch;
        int threads = spart_threads(run->context);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (count > 1)
        for (int64_t j = 0; j < count; j++) {
            f->fill(f->user, first[g0 + j], host_scratch(run, j),
                    side == 0 ? host_input(run, j) : NULL, side == 1 ? host_output(run, j) : NULL);
        }
        for (int64_t j = 0; j < count && error == cudaSuccess; j++) {
            error = spart_wdev_upload(&run->stager, run->cache[side] + (g0 + j) * cells,
                                      side == 0 ? host_input(run, j) : host_output(run, j),
                                      (size_t)cells * sizeof(double), run->stream);
        }
    }
    spart_free(allocator, first);
    if (run->cache[side] != NULL) {
        run->slot[side] = slot;
    } else {
        spart_free(allocator, slot);
    }
    return error;
}

/* The stream of work on the weights' device: the context's when the
 * context uses that device. */
static cudaStream_t stream_of(const spart_context *context, const spart_weights *weights)
{
    return context->cuda_device == weights->cuda_device ? (cudaStream_t)context->cuda_stream
                                                        : (cudaStream_t)0;
}

spart_status spart_weights_scale_on_device(spart_context *context, spart_weights *weights,
                                           const spart_weights_factors *factors)
{
    static const char *const what = "weights_scale (on the device)";
    int previous = -1;
    spart_status status = spart_device_select(context, weights->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    factor_run run;
    status = begin_run(&run, context, factors, stream_of(context, weights), what);
    cudaError_t error = cudaSuccess;
    for (int side = 0; side < 2 && status == SPART_OK && error == cudaSuccess; side++) {
        error = cache_side(&run, side);
    }
    for (int64_t first = 0;
         status == SPART_OK && error == cudaSuccess && first < factors->num_elements;
         first += run.batch) {
        int64_t count =
            factors->num_elements - first < run.batch ? factors->num_elements - first : run.batch;
        fill_batch(&run, first, count, NULL, weights->offsets);
        for (int64_t j = 0; j < count && error == cudaSuccess; j++) {
            int64_t e = first + j;
            int64_t at = weights->offsets[e], n = weights->offsets[e + 1] - at;
            if (n == 0) {
                continue;
            }
            error = upload_slot(&run, j);
            const double *input = run.cache[0] != NULL
                                      ? run.cache[0] + run.slot[0][e] * factors->cells_input
                                      : run.device_input;
            const double *output = run.cache[1] != NULL
                                       ? run.cache[1] + run.slot[1][e] * factors->cells_output
                                       : run.device_output;
            if (error == cudaSuccess) {
                error = (cudaError_t)spart_cuda_weights_scale_values(
                    weights->values + at, weights->indices_input + at, weights->indices_output + at,
                    n, input, output, run.stream);
            }
        }
    }
    if (status == SPART_OK) {
        cudaError_t done = cudaStreamSynchronize(run.stream);
        error = error != cudaSuccess ? error : done;
        release_run(&run);
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, what);
        }
    }
    spart_device_leave(previous);
    return status;
}

spart_status spart_weights_transpose_on_device(spart_context *context, const spart_weights *weights,
                                               const spart_weights_factors *factors,
                                               spart_weights *shell, spart_weights **transposed)
{
    static const char *const what = "weights_transpose_conservative (on the device)";
    int previous = -1;
    spart_status status = spart_device_select(context, weights->cuda_device, &previous);
    if (status != SPART_OK) {
        return status;
    }
    int64_t total = shell->offsets[factors->num_elements];
    void *arrays[3] = {NULL, NULL, NULL};
    cudaError_t error = cudaSuccess;
    for (int a = 0; a < 3 && error == cudaSuccess; a++) {
        error = cudaMalloc(&arrays[a], (size_t)(total > 0 ? total : 1) * 8);
    }
    factor_run run;
    memset(&run, 0, sizeof run);
    if (error != cudaSuccess) {
        status = spart_device_failure(context, (int)error, what);
    } else {
        status = begin_run(&run, context, factors, stream_of(context, weights), what);
    }
    int64_t *out_input = arrays[0], *out_output = arrays[1];
    double *out_values = arrays[2];
    for (int64_t first = 0;
         status == SPART_OK && error == cudaSuccess && first < factors->num_elements;
         first += run.batch) {
        int64_t count =
            factors->num_elements - first < run.batch ? factors->num_elements - first : run.batch;
        fill_batch(&run, first, count, factors->source, weights->offsets);
        for (int64_t j = 0; j < count && error == cudaSuccess; j++) {
            int64_t e = first + j;
            int64_t source = factors->source[e];
            int64_t from = weights->offsets[source];
            int64_t n = weights->offsets[source + 1] - from;
            int64_t at = shell->offsets[e];
            if (n == 0) {
                continue;
            }
            error = upload_slot(&run, j);
            if (error == cudaSuccess) {
                error = (cudaError_t)spart_cuda_weights_transpose_values(
                    weights->indices_input + from, weights->indices_output + from,
                    weights->values + from, n, run.device_input, run.device_output, out_input + at,
                    out_output + at, out_values + at, run.stream);
            }
        }
    }
    if (status == SPART_OK) {
        cudaError_t done = cudaStreamSynchronize(run.stream);
        error = error != cudaSuccess ? error : done;
        release_run(&run);
        if (error != cudaSuccess) {
            status = spart_device_failure(context, (int)error, what);
        }
    }
    spart_weights *made = NULL;
    if (status == SPART_OK) {
        made = spart_weights_allocate(&context->allocator, &shell->shape_orthogonal,
                                      &shell->shape_input, &shell->shape_output,
                                      shell->num_axis_input, shell->axis_input,
                                      shell->num_axis_output, shell->axis_output, 0);
        if (made == NULL) {
            status = spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
        }
    }
    if (status != SPART_OK) {
        for (int a = 0; a < 3; a++) {
            (void)cudaFree(arrays[a]);
        }
        spart_device_leave(previous);
        return status;
    }
    spart_free(&context->allocator, made->indices_input);
    spart_free(&context->allocator, made->indices_output);
    spart_free(&context->allocator, made->values);
    memcpy(made->offsets, shell->offsets, ((size_t)made->num_elements + 1) * sizeof(int64_t));
    made->indices_input = out_input;
    made->indices_output = out_output;
    made->values = out_values;
    made->on_device = 1;
    made->cuda_device = weights->cuda_device;
    made->release_device = spart_wdev_release_entries;
    spart_device_leave(previous);
    *transposed = made;
    return SPART_OK;
}
