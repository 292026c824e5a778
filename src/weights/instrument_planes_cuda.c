/*
 * src/weights/instrument_planes_cuda.c: the planes of an ideal CTIS
 * instrument built on a CUDA device (spart/instrument.h:
 * spart_instrument_planes_*). Built with CUDA only.
 *
 * What stays on the device for the object's life: the scene's vertex
 * axes, the sensor's vertices, the magnitudes of the pixel areas (host
 * spart_grid_cell_areas, once), the photons per radiance of every voxel
 * and every plane's constants (host, spart_instrument_plane_map). A block
 * of consecutive planes ((channel, bin) in C order) is then made without
 * another copy across the bus: the planes' vertices mapped by one kernel,
 * each plane's weights clipped onto the sensor by 30-clip's kernels
 * (src/weights/weights_clip_device.h: count, one synchronisation for the
 * plane's total, write), the geometric values kept, and the values the
 * caller asked for written beside them (forward: the unit factors folded
 * in; backward: the conservative transpose's values with its factors, the
 * mapped cells' areas computed where they are needed). The geometric
 * weights of the last block are kept, so the same block asked for again
 * (the other direction, or the other pass of an assembly of one block) is
 * not clipped again.
 *
 * The entries are those of spart_weights_build over the same planes,
 * transposed and scaled as spart_instrument_create does on the host, bit
 * for bit (the same kernels for the clip, the shared arithmetic of
 * src/weights/instrument_planes.h, grid_area_math.h and weights_values.h
 * for the rest). Stream-ordered on the context's stream; each call
 * synchronises before it returns.
 */
#include <math.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/internal.h"
#include "device/device_select.h"
#include "device/upload_cuda.h"
#include "weights/geometry_2d.h"
#include "weights/instrument_planes.h"
#include "weights/weights_clip_device.h"
#include "weights/weights_kernels.h"
#include "spart/instrument.h"

struct spart_instrument_planes {
    /* the context of the call under way (its sentences and progress); the
     * object's own memory comes from `allocator`, the creating context's,
     * whichever context frees it */
    spart_context *context;
    spart_allocator allocator;
    int device;
    cudaStream_t stream;
    int64_t num_channel, num_bins;
    int64_t scene_x, scene_y;   /* cells */
    int64_t sensor_x, sensor_y; /* pixels */
    double quantum_yield;
    int lattice;           /* the sensor a uniform axis-aligned lattice */
    spart_plane_map *maps; /* device: channel x bin */
    double *axes;          /* device: scene_x + 1 then scene_y + 1 vertex coordinates */
    double *sensor;        /* device: the sensor's vertices, x then y */
    double *pixel_area;    /* device: |area| a pixel */
    double *s;             /* device: photons per radiance, bin x scene cells */
    int *not_finite;       /* device flag */
    /* a block's buffers, grown as needed */
    double *mapped; /* device: 2 x vertices a plane */
    int64_t mapped_planes;
    int64_t *cells, *pixels; /* device: the geometric weights' indices */
    double *geometric;       /* device: their values */
    double *values;          /* device: the values asked for */
    int64_t entries;         /* capacity of the four */
    int64_t *offsets;        /* host: planes + 1 */
    spart_device_clip_counts **counts;
    int64_t offsets_planes;
    /* the block whose geometric weights are held (planes 0: none) */
    int64_t held_first, held_planes;
    /* The device's default memory pool, from which 30-clip's kernels
     * allocate their scratch stream-ordered (cudaMallocAsync) and free it
     * at each plane: its release threshold is raised for the object's life
     * (restored by spart_instrument_planes_free), so the pool keeps those
     * pages between planes instead of unmapping them at every
     * synchronisation and mapping them again (round 11: about 0.6 ms a
     * plane counted). Several objects at once: the first one raises it,
     * and its free lowers it again (the others then only run slower). */
    cudaMemPool_t pool;
    uint64_t pool_threshold; /* the threshold to restore */
    int pool_kept;
};

static spart_status failure(spart_instrument_planes *p, cudaError_t error, const char *what)
{
    return spart_device_failure(p->context, (int)error, what);
}

void spart_instrument_planes_free(spart_instrument_planes *planes)
{
    if (planes == NULL) {
        return;
    }
    int previous = -1;
    (void)spart_device_select(planes->context, planes->device, &previous);
    (void)cudaStreamSynchronize(planes->stream);
    void *device[] = {planes->maps,   planes->axes,       planes->sensor, planes->pixel_area,
                      planes->s,      planes->not_finite, planes->mapped, planes->cells,
                      planes->pixels, planes->geometric,  planes->values};
    for (size_t k = 0; k < sizeof device / sizeof device[0]; k++) {
        (void)cudaFree(device[k]);
    }
    if (planes->pool_kept) {
        (void)cudaMemPoolSetAttribute(planes->pool, cudaMemPoolAttrReleaseThreshold,
                                      &planes->pool_threshold);
    }
    spart_device_leave(previous);
    spart_free(&planes->allocator, planes->offsets);
    spart_free(&planes->allocator, planes->counts);
    spart_free(&planes->allocator, planes);
}

/* The host-side tables: every plane's constants, the sensor's vertices
 * and pixel areas (as the host build's transpose computes them). */
static spart_status upload_tables(spart_instrument_planes *p, const spart_instrument_params *params,
                                  const double *bin_low, const double *bin_high,
                                  const double *photons_per_radiance)
{
    spart_context *context = p->context;
    int64_t planes = p->num_channel * p->num_bins;
    int64_t nx = p->sensor_x + 1, ny = p->sensor_y + 1;
    size_t vertices = (size_t)(nx * ny);
    size_t pixels = (size_t)(p->sensor_x * p->sensor_y);
    spart_plane_map *maps = spart_alloc(&context->allocator, (size_t)planes, sizeof *maps);
    double *host = spart_alloc(&context->allocator, 2 * vertices + pixels, sizeof(double));
    if (maps == NULL || host == NULL) {
        spart_free(&context->allocator, maps);
        spart_free(&context->allocator, host);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "instrument_planes_create: could not allocate the sensor's vertices "
                          "(%zu values)",
                          2 * vertices + pixels);
    }
    for (int64_t c = 0; c < p->num_channel; c++) {
        for (int64_t l = 0; l < p->num_bins; l++) {
            spart_instrument_plane_map(params, c, bin_low[l], bin_high[l],
                                       &maps[c * p->num_bins + l]);
        }
    }
    double *x = host, *y = host + vertices, *area = host + 2 * vertices;
    for (int64_t i = 0; i < nx; i++) {
        for (int64_t j = 0; j < ny; j++) {
            x[i * ny + j] = params->sensor_x[i];
            y[i * ny + j] = params->sensor_y[j];
        }
    }
    p->lattice = spart_host_grid_is_lattice(x, y, nx, ny);
    spart_grid_cell_areas(x, y, nx, ny, area);
    for (size_t k = 0; k < pixels; k++) {
        area[k] = fabs(area[k]);
    }
    size_t axes = (size_t)(p->scene_x + p->scene_y + 2);
    size_t voxels = (size_t)p->num_bins * (size_t)(p->scene_x * p->scene_y);
    cudaError_t error = cudaMalloc((void **)&p->maps, (size_t)planes * sizeof *maps);
    if (error == cudaSuccess) {
        error = cudaMalloc((void **)&p->axes, axes * sizeof(double));
    }
    if (error == cudaSuccess) {
        error = cudaMalloc((void **)&p->sensor, 2 * vertices * sizeof(double));
    }
    if (error == cudaSuccess) {
        error = cudaMalloc((void **)&p->pixel_area, (pixels > 0 ? pixels : 1) * sizeof(double));
    }
    if (error == cudaSuccess) {
        error = cudaMalloc((void **)&p->s, voxels * sizeof(double));
    }
    if (error == cudaSuccess) {
        error = cudaMalloc((void **)&p->not_finite, sizeof(int));
    }
    spart_stager stager;
    memset(&stager, 0, sizeof stager);
    if (error == cudaSuccess) { /* the photons per radiance: GBs at ESIS scale */
        double bytes = 8.0 * (double)voxels;
        error = spart_stager_open(&stager, bytes >= 512.0 * 1024 * 1024 ? (size_t)32 << 20 : 0,
                                  spart_threads(context));
    }
    const void *from[5] = {maps, params->scene_x, params->scene_y, host, photons_per_radiance};
    void *to[5] = {p->maps, p->axes, p->axes + p->scene_x + 1, p->sensor, p->s};
    size_t bytes[5] = {(size_t)planes * sizeof *maps, (size_t)(p->scene_x + 1) * sizeof(double),
                       (size_t)(p->scene_y + 1) * sizeof(double),
                       (2 * vertices + pixels) * sizeof(double), voxels * sizeof(double)};
    for (int k = 0; k < 5 && error == cudaSuccess; k++) {
        if (k == 3) { /* the sensor's vertices, then its areas */
            error = cudaMemcpyAsync(p->sensor, host, 2 * vertices * sizeof(double),
                                    cudaMemcpyHostToDevice, p->stream);
            if (error == cudaSuccess && pixels > 0) {
                error = cudaMemcpyAsync(p->pixel_area, area, pixels * sizeof(double),
                                        cudaMemcpyHostToDevice, p->stream);
            }
            continue;
        }
        error = k == 4
                    ? spart_stager_copy(&stager, to[k], from[k], bytes[k], p->stream)
                    : cudaMemcpyAsync(to[k], from[k], bytes[k], cudaMemcpyHostToDevice, p->stream);
    }
    spart_stager_close(&stager);
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(p->stream);
    }
    spart_free(&context->allocator, maps);
    spart_free(&context->allocator, host);
    return error == cudaSuccess ? SPART_OK : failure(p, error, "instrument_planes_create");
}

spart_status spart_instrument_planes_create(spart_context *context,
                                            const spart_instrument_params *params, int64_t num_bins,
                                            const double *bin_low, const double *bin_high,
                                            const double *photons_per_radiance,
                                            spart_instrument_planes **planes)
{
    spart_status status = spart_instrument_planes_check(context, params, num_bins, bin_low,
                                                        bin_high, photons_per_radiance, planes);
    if (status != SPART_OK) {
        return status;
    }
    int previous = -1;
    status = spart_device_enter(context, "instrument_planes_create", &previous);
    if (status != SPART_OK) {
        return status;
    }
    spart_instrument_planes *p = spart_alloc(&context->allocator, 1, sizeof *p);
    if (p == NULL) {
        spart_device_leave(previous);
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                          "instrument_planes_create: could not allocate the object");
    }
    memset(p, 0, sizeof *p);
    p->context = context;
    p->allocator = context->allocator;
    p->device = context->cuda_device;
    p->stream = spart_device_stream_for(context, p->device);
    p->num_channel = params->num_channel;
    p->num_bins = num_bins;
    p->scene_x = params->num_scene_x;
    p->scene_y = params->num_scene_y;
    p->sensor_x = params->num_sensor_x;
    p->sensor_y = params->num_sensor_y;
    p->quantum_yield = params->quantum_yield;
    if (cudaDeviceGetDefaultMemPool(&p->pool, p->device) == cudaSuccess &&
        cudaMemPoolGetAttribute(p->pool, cudaMemPoolAttrReleaseThreshold, &p->pool_threshold) ==
            cudaSuccess) {
        /* already kept (by the caller, or by another object alive now):
         * left as it is, and not restored by this one */
        uint64_t keep = UINT64_MAX;
        p->pool_kept =
            p->pool_threshold != keep &&
            cudaMemPoolSetAttribute(p->pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
    }
    if (!p->pool_kept) {
        (void)cudaGetLastError(); /* a pool left as it is only costs time */
    }
    status = upload_tables(p, params, bin_low, bin_high, photons_per_radiance);
    spart_device_leave(previous);
    if (status != SPART_OK) {
        spart_instrument_planes_free(p);
        return status;
    }
    spart_report_progress(context, "planes' tables copied", 1, 1);
    *planes = p;
    return SPART_OK;
}

/* Room for `count` planes' vertices, offsets and counts. */
static spart_status reserve_planes(spart_instrument_planes *p, int64_t count)
{
    int64_t vertices = (p->scene_x + 1) * (p->scene_y + 1);
    if (count > p->mapped_planes) {
        (void)cudaFree(p->mapped);
        p->mapped = NULL;
        p->mapped_planes = 0;
        cudaError_t error =
            cudaMalloc((void **)&p->mapped, (size_t)(2 * count * vertices) * sizeof(double));
        if (error != cudaSuccess) {
            return failure(p, error, "instrument_planes: the planes' mapped vertices");
        }
        p->mapped_planes = count;
        p->held_planes = 0; /* the held block's vertices are gone */
    }
    if (count > p->offsets_planes) {
        spart_free(&p->allocator, p->offsets);
        spart_free(&p->allocator, p->counts);
        p->offsets = spart_alloc(&p->allocator, (size_t)count + 1, sizeof(int64_t));
        p->counts = spart_alloc(&p->allocator, (size_t)count, sizeof *p->counts);
        p->offsets_planes = p->offsets != NULL && p->counts != NULL ? count : 0;
        p->held_planes = 0;
        if (p->offsets_planes == 0) {
            return spart_fail(p->context, SPART_ERROR_OUT_OF_MEMORY,
                              "instrument_planes: could not allocate %lld planes' offsets",
                              (long long)count);
        }
    }
    return SPART_OK;
}

static spart_status reserve_entries(spart_instrument_planes *p, int64_t entries)
{
    if (entries <= p->entries) {
        return SPART_OK;
    }
    void **arrays[4] = {(void **)&p->cells, (void **)&p->pixels, (void **)&p->geometric,
                        (void **)&p->values};
    cudaError_t error = cudaStreamSynchronize(p->stream);
    for (int a = 0; a < 4; a++) {
        (void)cudaFree(*arrays[a]);
        *arrays[a] = NULL;
    }
    p->entries = 0;
    p->held_planes = 0;
    /* a quarter more than asked, so that slightly larger blocks do not
     * allocate again */
    int64_t room = entries + entries / 4;
    for (int a = 0; a < 4 && error == cudaSuccess; a++) {
        error = cudaMalloc(arrays[a], (size_t)room * 8);
    }
    if (error != cudaSuccess) {
        return failure(p, error, "instrument_planes: a block's entries");
    }
    p->entries = room;
    return SPART_OK;
}

/* Map the planes first .. first + count - 1 and count each one's entries
 * into p->offsets (ascending from 0); the counts' states are left in
 * p->counts for the write (write 0: freed at once). */
static spart_status map_and_count(spart_instrument_planes *p, int64_t first, int64_t count,
                                  int write)
{
    spart_status status = reserve_planes(p, count);
    if (status != SPART_OK) {
        return status;
    }
    p->held_planes = 0;
    int64_t nx = p->scene_x + 1, ny = p->scene_y + 1, vertices = nx * ny;
    cudaError_t error = cudaMemsetAsync(p->not_finite, 0, sizeof(int), p->stream);
    if (error == cudaSuccess) {
        error =
            (cudaError_t)spart_cuda_instrument_map(p->maps + first, count, p->axes, p->axes + nx,
                                                   nx, ny, p->mapped, p->not_finite, p->stream);
    }
    int not_finite = 0;
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(&not_finite, p->not_finite, sizeof(int), cudaMemcpyDeviceToHost,
                                p->stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(p->stream);
    }
    if (error != cudaSuccess) {
        return failure(p, error, "instrument_planes: the mapping of the scene");
    }
    if (not_finite) {
        return spart_fail(p->context, SPART_ERROR_NOT_FINITE,
                          "instrument_planes: the scene's vertices map to a sensor coordinate "
                          "that is not finite in planes %lld to %lld (channel x bins + bin; the "
                          "geometry's values overflow)",
                          (long long)first, (long long)(first + count - 1));
    }
    spart_device_clip_grid output = {p->sensor, p->sensor + (p->sensor_x + 1) * (p->sensor_y + 1),
                                     p->sensor_x + 1, p->sensor_y + 1};
    p->offsets[0] = 0;
    for (int64_t k = 0; k < count && error == cudaSuccess; k++) {
        const double *x = p->mapped + 2 * k * vertices;
        spart_device_clip_grid input = {x, x + vertices, nx, ny};
        int64_t total = 0;
        p->counts[k] = NULL;
        error = (cudaError_t)spart_cuda_clip_2d_count(&input, &output, p->lattice, NULL,
                                                      &p->counts[k], &total, p->stream);
        p->offsets[k + 1] = p->offsets[k] + total;
        if (!write) {
            spart_cuda_clip_2d_counts_free(p->counts[k], p->stream);
            p->counts[k] = NULL;
        }
    }
    if (error != cudaSuccess) {
        for (int64_t k = 0; k < count; k++) {
            spart_cuda_clip_2d_counts_free(p->counts[k], p->stream);
            p->counts[k] = NULL;
        }
        return failure(p, error, "instrument_planes: the count of the weights");
    }
    return SPART_OK;
}

static spart_status check_planes(spart_instrument_planes *p, const char *what, int64_t first,
                                 int64_t count)
{
    int64_t planes = p->num_channel * p->num_bins;
    if (first < 0 || count < 1 || first > planes - count) {
        return spart_fail(p->context, SPART_ERROR_INVALID_ARGUMENT,
                          "%s: planes %lld + %lld: the instrument has %lld planes (%lld channels "
                          "x %lld bins), and a block at least one",
                          what, (long long)first, (long long)count, (long long)planes,
                          (long long)p->num_channel, (long long)p->num_bins);
    }
    return SPART_OK;
}

spart_status spart_instrument_planes_count(spart_context *context, spart_instrument_planes *planes,
                                           int64_t first_plane, int64_t num_planes,
                                           int64_t *entries)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (planes == NULL || entries == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "instrument_planes_count: planes and entries must not be NULL");
    }
    planes->context = context;
    spart_status status = check_planes(planes, "instrument_planes_count", first_plane, num_planes);
    int previous = -1;
    if (status == SPART_OK) {
        status = spart_device_select(context, planes->device, &previous);
    }
    if (status == SPART_OK) {
        status = map_and_count(planes, first_plane, num_planes, 0);
        spart_device_leave(previous);
    }
    for (int64_t k = 0; status == SPART_OK && k < num_planes; k++) {
        entries[k] = planes->offsets[k + 1] - planes->offsets[k];
    }
    spart_report_progress(context, "planes counted", num_planes, num_planes);
    return status;
}

/* Clip the block's planes into the geometric arrays (unless held). */
static spart_status build_geometric(spart_instrument_planes *p, int64_t first, int64_t count)
{
    if (p->held_planes == count && p->held_first == first) {
        return SPART_OK;
    }
    spart_status status = map_and_count(p, first, count, 1);
    if (status == SPART_OK) {
        status = reserve_entries(p, p->offsets[count]);
    }
    cudaError_t error = cudaSuccess;
    for (int64_t k = 0; k < count; k++) {
        int64_t at = p->offsets[k], n = p->offsets[k + 1] - at;
        if (status == SPART_OK && error == cudaSuccess && n > 0) {
            error = (cudaError_t)spart_cuda_clip_2d_write(
                p->counts[k], p->cells + at, p->pixels + at, p->geometric + at, p->stream);
        }
        spart_cuda_clip_2d_counts_free(p->counts[k], p->stream);
        p->counts[k] = NULL;
    }
    if (status == SPART_OK && error != cudaSuccess) {
        status = failure(p, error, "instrument_planes: the weights' write");
    }
    if (status == SPART_OK) {
        p->held_first = first;
        p->held_planes = count;
    }
    return status;
}

spart_status spart_instrument_planes_block(spart_context *context, spart_instrument_planes *planes,
                                           int backward, int64_t first_plane, int64_t num_planes,
                                           spart_weights_block *block)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (planes == NULL || block == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "instrument_planes_block: planes and block must not be NULL");
    }
    if (backward != 0 && backward != 1) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "instrument_planes_block: backward = %d must be 0 or 1", backward);
    }
    spart_instrument_planes *p = planes;
    p->context = context;
    spart_status status = check_planes(p, "instrument_planes_block", first_plane, num_planes);
    int previous = -1;
    if (status == SPART_OK) {
        status = spart_device_select(context, p->device, &previous);
    }
    if (status != SPART_OK) {
        return status;
    }
    status = build_geometric(p, first_plane, num_planes);
    spart_report_progress(context, "weights", num_planes, num_planes);
    int64_t cells = p->scene_x * p->scene_y, vertices = (p->scene_x + 1) * (p->scene_y + 1);
    cudaError_t error = cudaSuccess;
    for (int64_t k = 0; status == SPART_OK && error == cudaSuccess && k < num_planes; k++) {
        int64_t at = p->offsets[k], n = p->offsets[k + 1] - at;
        const double *s = p->s + ((first_plane + k) % p->num_bins) * cells;
        if (!backward) {
            error = (cudaError_t)spart_cuda_instrument_forward_values(
                p->geometric + at, p->cells + at, n, s, p->quantum_yield, p->values + at,
                p->stream);
        } else {
            const double *x = p->mapped + 2 * k * vertices;
            error = (cudaError_t)spart_cuda_instrument_backward_values(
                p->geometric + at, p->cells + at, p->pixels + at, n, x, x + vertices,
                p->scene_y + 1, p->pixel_area, s, p->quantum_yield, (double)p->num_bins,
                p->values + at, p->stream);
        }
    }
    if (status == SPART_OK && error == cudaSuccess) {
        error = cudaStreamSynchronize(p->stream);
    }
    if (status == SPART_OK && error != cudaSuccess) {
        status = failure(p, error, "instrument_planes_block: the values");
    }
    spart_device_leave(previous);
    if (status != SPART_OK) {
        p->held_planes = 0;
        return status;
    }
    spart_report_progress(context, backward ? "conservative transpose" : "scale", num_planes,
                          num_planes);
    block->first_element = first_plane;
    block->num_elements = num_planes;
    block->offsets = p->offsets;
    /* backward: the transpose's indices are the forward's swapped */
    block->indices_input = backward ? p->pixels : p->cells;
    block->indices_output = backward ? p->cells : p->pixels;
    block->values = p->values;
    return SPART_OK;
}
