/*
 * kernels/instrument_planes.cu: the planes of an ideal CTIS instrument on
 * a device (src/weights/instrument_planes.h): the scene's vertices mapped
 * for a block of (channel, bin) planes, and the values of a plane's
 * weights with the unit factors folded in (forward) or conservatively
 * transposed and scaled (backward). The host twins are
 * spart_instrument_map_vertices (src/weights/instrument_planes.c) and the
 * host build's spart_weights_transpose_conservative and spart_weights_scale;
 * every number comes from the shared headers (instrument_planes.h,
 * grid_area_math.h, weights_values.h), compiled with --fmad=false. A
 * thread a vertex or an entry, each its own: no order, no atomics.
 * Enqueued on the caller's stream.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "weights/grid_area_math.h"
#include "weights/instrument_planes.h"
#include "weights/weights_values.h"

#include "launch.cuh"

namespace
{

__global__ void map_planes(const spart_plane_map *maps, int64_t num_planes, const double *scene_x,
                           const double *scene_y, int64_t num_x, int64_t num_y, double *mapped,
                           int *not_finite)
{
    int64_t vertices = num_x * num_y;
    int64_t n = num_planes * vertices;
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        int64_t plane = k / vertices;
        int64_t v = k - plane * vertices;
        int64_t i = v / num_y;
        int64_t j = v - i * num_y;
        spart_plane_map m = maps[plane];
        double x = 0.0, y = 0.0;
        spart_plane_map_vertex(&m, scene_x[i], scene_y[j], &x, &y);
        double *out = mapped + 2 * plane * vertices;
        out[v] = x;
        out[vertices + v] = y;
        if (!isfinite(x) || !isfinite(y)) {
            *not_finite = 1;
        }
    }
}

__global__ void forward_values(const double *geometric, const int64_t *cells, int64_t n,
                               const double *s, double quantum_yield, double *values)
{
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        double factor = spart_instrument_forward_factor(s[cells[k]], quantum_yield);
        values[k] = spart_weights_scaled_value(geometric[k], factor, 1.0);
    }
}

__global__ void backward_values(const double *geometric, const int64_t *cells,
                                const int64_t *pixels, int64_t n, const double *mapped_x,
                                const double *mapped_y, int64_t num_y_vertices,
                                const double *pixel_area, const double *s, double quantum_yield,
                                double num_bins, double *values)
{
    int64_t cells_y = num_y_vertices - 1;
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        int64_t cell = cells[k];
        int64_t a = cell / cells_y;
        int64_t b = cell - a * cells_y;
        double area = fabs(spart_grid_cell_area_math(mapped_x, mapped_y, num_y_vertices, a, b));
        double transposed =
            spart_weights_transposed_value(geometric[k], area, pixel_area[pixels[k]]);
        double factor = spart_instrument_backward_factor(s[cell], quantum_yield, num_bins);
        values[k] = spart_weights_scaled_value(transposed, 1.0, factor);
    }
}

} // namespace

extern "C" int spart_cuda_instrument_map(const spart_plane_map *maps, int64_t num_planes,
                                         const double *scene_x, const double *scene_y,
                                         int64_t num_x, int64_t num_y, double *mapped,
                                         int *not_finite, void *stream)
{
    return (int)spart_launch::launch_items(map_planes, num_planes * num_x * num_y,
                                           (cudaStream_t)stream, maps, num_planes, scene_x, scene_y,
                                           num_x, num_y, mapped, not_finite);
}

extern "C" int spart_cuda_instrument_forward_values(const double *geometric, const int64_t *cells,
                                                    int64_t n, const double *s,
                                                    double quantum_yield, double *values,
                                                    void *stream)
{
    return (int)spart_launch::launch_items(forward_values, n, (cudaStream_t)stream, geometric,
                                           cells, n, s, quantum_yield, values);
}

extern "C" int spart_cuda_instrument_backward_values(const double *geometric, const int64_t *cells,
                                                     const int64_t *pixels, int64_t n,
                                                     const double *mapped_x, const double *mapped_y,
                                                     int64_t num_y_vertices,
                                                     const double *pixel_area, const double *s,
                                                     double quantum_yield, double num_bins,
                                                     double *values, void *stream)
{
    return (int)spart_launch::launch_items(backward_values, n, (cudaStream_t)stream, geometric,
                                           cells, pixels, n, mapped_x, mapped_y, num_y_vertices,
                                           pixel_area, s, quantum_yield, num_bins, values);
}
