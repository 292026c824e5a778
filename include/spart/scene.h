/*
 * spart/scene.h: synthetic scenes for examples, tests and benchmarks.
 *
 * spart_scene_gaussians is ctis.scenes.gaussians (ctis 0.3.1): the sum of
 * eight Gaussian blobs in (Doppler velocity, x, y), prepared by Amy R.
 * Winebarger, evaluated at the cell centres of a grid given by its
 * vertices. The spectral axis is given as Doppler velocity bin edges and a
 * rest wavelength; the function also returns the wavelength bin edges the
 * instrument (spart/instrument.h) needs.
 *
 * Doppler convention: the optical one, as astropy's doppler_optical and
 * named_arrays' DopplerPositionalVectorArray.from_velocity use it:
 *   wavelength = wavelength_rest (1 + v / c),   v = c (wavelength / wavelength_rest - 1),
 * with c = 299792458 m/s. As in ctis, every velocity the Gaussians see (the
 * cell centres, the blob centres and the width) goes through this
 * conversion and back, and a cell's centre is the mean of its two
 * wavelength vertices, so the values agree with ctis to rounding (the
 * round trip moves the default width of 30 km/s by about 1e-12).
 *
 * Units:
 *   velocity                  km/s (bin edges, increasing or decreasing)
 *   wavelength_rest           angstrom (> 0)
 *   wavelength (returned)     angstrom (bin edges)
 *   x, y                      arcsec (cell vertices)
 *   scene values              erg / (A sr cm^2 s): spectral radiance per
 *                             steradian, as ctis (give the instrument
 *                             solid_angle_steradian = 1 to image them)
 *
 * Layout: the scene is [wavelength][x][y], C order: num_wavelength x num_x x
 * num_y values.
 *
 * Memory: the caller owns every array; nothing is allocated.
 *
 * Thread safety and determinism: the functions only read their inputs and
 * write their outputs; the result depends on nothing else. The blobs are
 * summed in a fixed order (NumPy's pairwise order for eight terms, as ctis
 * sums them); exp comes from the C library, so the last bit may differ
 * from NumPy's exp on some platforms.
 */
#ifndef SPART_SCENE_H
#define SPART_SCENE_H

#include "spart/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The standard deviations of the blobs, and their motion for a sequence
 * of frames. Start from spart_scene_gaussians_options_init.
 *
 * Moving features: in frame f, blob k's centre is moved by f x drift
 * arcsec along its own direction, 45 k degrees from +x (k = 0..7, the
 * unit vectors (1, 0), (s, s), (0, 1), (-s, s), ... with s = sqrt(1/2)),
 * so the eight blobs spread apart as the frames go on, each at the speed
 * drift. frame 0 or drift 0 is ctis's scene, bit for bit. */
typedef struct spart_scene_gaussians_options {
    double width_velocity; /* km/s, > 0; default 30 */
    double width_x;        /* arcsec, > 0; default 1 */
    double width_y;        /* arcsec, > 0; default 1 */
    double drift;          /* arcsec per frame, finite; default 0 */
    int64_t frame;         /* the frame, >= 0; default 0 */
} spart_scene_gaussians_options;

/* Fill `options` with the defaults above (as ctis's width=None). */
SPART_API void spart_scene_gaussians_options_init(spart_scene_gaussians_options *options);

/* The wavelengths of `count` Doppler velocities (km/s) of a line at rest
 * wavelength `wavelength_rest` (A): wavelength[i] = wavelength_rest (1 +
 * velocity[i] / c), the optical convention, computed in the order astropy
 * computes it so that the edges equal ctis's. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (count < 0,
 * wavelength_rest not positive, a velocity at or below -c, whose
 * wavelength would not be positive), SPART_ERROR_NOT_FINITE. */
SPART_NODISCARD SPART_API spart_status spart_wavelength_from_velocity(spart_context *context,
                                                                      double wavelength_rest,
                                                                      int64_t count,
                                                                      const double *velocity,
                                                                      double *wavelength);

/* The eight Gaussians of ctis.scenes.gaussians at the cell centres of the
 * grid (velocity, x, y).
 *   wavelength_rest   rest wavelength of the line, A (> 0)
 *   num_wavelength    bins (>= 1); velocity holds num_wavelength + 1 edges, km/s
 *   num_x, x          cells (>= 1) and num_x + 1 vertices, arcsec
 *   num_y, y          cells (>= 1) and num_y + 1 vertices, arcsec
 *   options           the widths; NULL: the defaults
 *   wavelength        out, num_wavelength + 1 bin edges in A (as
 *                     spart_wavelength_from_velocity); may be NULL
 *   scene             out, num_wavelength x num_x x num_y values,
 *                     erg / (A sr cm^2 s)
 * Vertices may increase or decrease but must be finite. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (a count below 1, a
 * rest wavelength or width that is not positive, a negative frame),
 * SPART_ERROR_NOT_FINITE (a vertex, width or drift that is NaN or infinite), SPART_ERROR_OVERFLOW
 * (a scene too large for int64). On error nothing is written. */
SPART_NODISCARD SPART_API spart_status spart_scene_gaussians(
    spart_context *context, double wavelength_rest, int64_t num_wavelength, const double *velocity,
    int64_t num_x, const double *x, int64_t num_y, const double *y,
    const spart_scene_gaussians_options *options, double *wavelength, double *scene);

#ifdef __cplusplus
}
#endif

#endif /* SPART_SCENE_H */
