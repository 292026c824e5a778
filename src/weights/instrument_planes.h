/*
 * src/weights/instrument_planes.h: the planes of an ideal CTIS instrument
 * (spart/instrument.h: spart_instrument_map_vertices and the device
 * builder spart_instrument_planes_*), the contract between the host code
 * (src/weights/instrument_planes.c, and src/weights/instrument_planes_cuda.c
 * on a device) and the kernels (kernels/instrument_planes.cu).
 *
 * The arithmetic is written once here and compiled for both (host C with
 * -ffp-contract=off, CUDA with --fmad=false: each product, sum and
 * quotient rounds once, the same on both sides):
 *   a vertex (x, y) of the scene mapped for one plane (ctis's order:
 *   rotate, scale by 1 / plate_scale, shift by the bin's two wavelength
 *   edges over the dispersion and the reference position, average the
 *   two): spart_plane_map_vertex, from the plane's constants
 *   (spart_plane_map, computed on the host by spart_instrument_plane_map);
 *   the unit factors folded into the operators: forward s q per scene
 *   cell, backward 1 / ((q bins) s) (the same expressions as
 *   solvers/instrument.c and solvers/instrument_stream.c, which see only
 *   the public headers; test_cuda_instrument holds the two to the same
 *   bits);
 *   the cell areas of the conservative transpose: src/weights/grid_area_math.h.
 * Each vertex, entry and value is its own: no sums across threads, no
 * atomics (the non-finite flag is a plain store of 1 by any thread that
 * finds one, read once a block).
 */
#ifndef SPART_INSTRUMENT_PLANES_H
#define SPART_INSTRUMENT_PLANES_H

#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* One plane's constants: channel c's rotation, the bin's two shifts. */
typedef struct spart_plane_map {
    double cos_a, sin_a;        /* of angle[c] in radians */
    double inverse_plate_scale; /* 1 / plate_scale */
    double shift_low;           /* (low - wavelength_ref) / dispersion, as a product */
    double shift_high;          /* likewise for the bin's upper edge */
    double position_x, position_y;
} spart_plane_map;

SPART_MATH_FUNCTION void spart_plane_map_vertex(const spart_plane_map *m, double x, double y,
                                                double *out_x, double *out_y)
{
    double rotated_x = m->cos_a * x + (-m->sin_a) * y;
    double rotated_y = m->sin_a * x + m->cos_a * y;
    double sensor_x = rotated_x * m->inverse_plate_scale;
    double low = (sensor_x + m->shift_low) + m->position_x;
    double high = (sensor_x + m->shift_high) + m->position_x;
    *out_x = 0.5 * low + 0.5 * high;
    *out_y = rotated_y * m->inverse_plate_scale + m->position_y;
}

SPART_MATH_FUNCTION double spart_instrument_forward_factor(double s, double quantum_yield)
{
    return s * quantum_yield;
}

SPART_MATH_FUNCTION double spart_instrument_backward_factor(double s, double quantum_yield,
                                                            double num_bins)
{
    return 1.0 / ((quantum_yield * num_bins) * s);
}

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the device entry points (kernels/instrument_planes.cu) ---------------
 * Enqueued on `stream`, nothing allocated or synchronised; the cudaError_t
 * as an int. Arrays are device memory. */

/* The vertices of `num_planes` planes: plane k's x into mapped[2 k V ...],
 * its y into mapped[(2 k + 1) V ...], V = num_x * num_y vertices, vertex
 * (i, j) at i * num_y + j from scene_x[i], scene_y[j]; maps[k] its
 * constants. *not_finite is set to 1 if any mapped value is not finite
 * (left as it is otherwise). */
int spart_cuda_instrument_map(const spart_plane_map *maps, int64_t num_planes,
                              const double *scene_x, const double *scene_y, int64_t num_x,
                              int64_t num_y, double *mapped, int *not_finite, void *stream);

/* One plane's forward values: values[k] = scaled(geometric[k],
 * forward_factor(s[cells[k]], q), 1.0) (src/weights/weights_values.h). */
int spart_cuda_instrument_forward_values(const double *geometric, const int64_t *cells, int64_t n,
                                         const double *s, double quantum_yield, double *values,
                                         void *stream);

/* One plane's backward values: the conservative transpose's value
 * transposed(geometric[k], |area of mapped cell cells[k]|,
 * pixel_area[pixels[k]]) scaled by (1.0, backward_factor(s[cells[k]], q,
 * num_bins)). mapped_x, mapped_y: the plane's vertices, num_y_vertices
 * along axis 1; pixel_area: magnitudes. */
int spart_cuda_instrument_backward_values(const double *geometric, const int64_t *cells,
                                          const int64_t *pixels, int64_t n, const double *mapped_x,
                                          const double *mapped_y, int64_t num_y_vertices,
                                          const double *pixel_area, const double *s,
                                          double quantum_yield, double num_bins, double *values,
                                          void *stream);

#ifdef __cplusplus
}
#endif

#if !defined(__CUDACC__)
#include "spart/instrument.h"

/* Plane (channel, bin [low, high])'s constants, as solvers/instrument's
 * mapping computes them (src/weights/instrument_planes.c). */
void spart_instrument_plane_map(const spart_instrument_params *params, int64_t channel, double low,
                                double high, spart_plane_map *map);

/* The checks of spart_instrument_planes_create that need no device, for
 * both of its builds: the context and the pointers (*planes set to NULL
 * first, the context's error cleared), then the sizes the object is made
 * for (params as spart_instrument_create accepts them otherwise). */
spart_status spart_instrument_planes_check(spart_context *context,
                                           const spart_instrument_params *params, int64_t num_bins,
                                           const double *bin_low, const double *bin_high,
                                           const double *photons_per_radiance,
                                           spart_instrument_planes **planes);
#endif

#endif /* SPART_INSTRUMENT_PLANES_H */
