/*
 * solvers/instrument_build.h: the pieces of an ideal instrument's build
 * (spart/instrument.h) that the in-memory build (solvers/instrument.c)
 * and the streamed build (solvers/instrument_stream.c) share: the scene
 * mapped onto the sensor, the sensor's vertices, the options of the
 * weights and of the two operators, the unit factors, and the streamed
 * assembly itself. Internal to solvers/.
 */
#ifndef SPART_INSTRUMENT_BUILD_H
#define SPART_INSTRUMENT_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "spart/instrument.h"
#include "spart/regridder.h"
#include "spart/weights.h"
#include "instrument_lines.h"

spart_shape spart_instrument_shape4(int64_t a, int64_t b, int64_t c, int64_t d);

/* The scene's vertices mapped onto the sensor for channel c and spectral
 * bin l: x and y of shape (scene_x + 1, scene_y + 1), the bin the mean of
 * the mapping at its two wavelength edges (ctis's order of operations). */
void spart_instrument_map_plane(const spart_instrument_params *p, const spart_spectral_bins *bins,
                                int64_t c, int64_t l, double *out_x, double *out_y);

/* Every plane: x and y of shape (channel, bin, scene_x + 1, scene_y + 1). */
void spart_instrument_map_scene(const spart_instrument_params *p, const spart_spectral_bins *bins,
                                double *mapped_x, double *mapped_y);

/* The sensor vertices as two (sensor_x + 1, sensor_y + 1) arrays. */
void spart_instrument_sensor_vertices(const spart_instrument_params *p, double *x, double *y);

/* Conservative weights over the last two axes. */
void spart_instrument_weights_options(spart_weights_options *options);

/* The options of the forward operator (backward 0: (1, bins, x, y) ->
 * (channel, 1, x', y')) or of the backprojection (backward 1: (channel,
 * 1, x', y') -> (channel, bins, x, y)). */
void spart_instrument_operator_options(const spart_instrument_params *p, int64_t num_wavelength,
                                       int backward, spart_regridder_options *options);

/* Both operators assembled by streaming (spart_regridder_create_streamed,
 * each within params->memory_budget bytes): one block a (channel, bin)
 * plane, whose weights are built, transposed for the backprojection and
 * scaled by the unit factors when the assembly asks for them, never all
 * at once. `s` holds the photons per radiance. The same operators as the
 * in-memory build, bit for bit. */
spart_status spart_instrument_assemble_streamed(spart_context *context,
                                                const spart_instrument_params *p,
                                                const spart_spectral_bins *bins, const double *s,
                                                spart_regridder **forward,
                                                spart_regridder **backward);

/* The fields of a stream of the instrument's planes that do not depend on
 * how the blocks are made: the (channel, bin) orthogonal shape, the
 * scene's and the sensor's shapes and the resampled axes of one direction
 * (backward 0: scene -> sensor; 1: sensor -> scenes). No blocks. */
void spart_instrument_stream_init(const spart_instrument_params *p, int64_t num_wavelength,
                                  int backward, spart_weights_stream *stream);

/* Both operators built on the context's CUDA device (params.on_device)
 * by the device planes builder (spart_instrument_planes_*): every plane's
 * entries counted first, the planes cut into blocks of consecutive planes
 * of about a target number of entries, each block's weights made on the
 * device and streamed where they lie into
 * spart_regridder_create_streamed(..., on_device = 1) within
 * `budget_bytes` (params.memory_budget; 0: in memory, no limit of the
 * call's own, and the planes in one block when they are few enough that
 * both directions and both passes are made from one clip). The same
 * operators as the host build, bit for bit. */
spart_status spart_instrument_assemble_on_device(spart_context *context,
                                                 const spart_instrument_params *p,
                                                 const spart_spectral_bins *bins, const double *s,
                                                 spart_regridder **forward,
                                                 spart_regridder **backward);

#endif /* SPART_INSTRUMENT_BUILD_H */
