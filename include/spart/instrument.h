/*
 * spart/instrument.h: an ideal computed tomography imaging spectrograph
 * (CTIS), equivalent to ctis.instruments.IdealInstrument (ctis 0.3.1), with
 * its forward operator (scene -> images) and backprojection as spart
 * Regridders, synthetic observations, and MART operators.
 *
 * Units (fixed; no unit library):
 *   wavelength, wavelength_ref, dispersion   angstrom (dispersion: A/pixel)
 *   scene_x, scene_y                         arcsec (vertices of the scene cells)
 *   plate_scale                              arcsec/pixel
 *   sensor_x, sensor_y, position_ref         pixel (vertices of the sensor pixels)
 *   angle                                    degree, per channel
 *   area_effective                           cm^2
 *   exposure_time                            s
 *   quantum_yield                            electron/photon
 *   read_noise                               electron (standard deviation)
 *   scene values (radiance)                  erg / (A arcsec^2 cm^2 s), or per
 *                                            steradian with solid_angle_steradian
 *   images                                   electron
 * The energy of a photon is h c / lambda with h and c the exact SI values
 * (as astropy.constants), lambda the arithmetic centre of its bin.
 *
 * Geometry (as ctis): channel c disperses along sensor x after rotating the
 * scene by angle[c]: a scene point (x, y) at wavelength w lands on
 *   X = (w - wavelength_ref) / dispersion + (cos a x - sin a y) / plate_scale
 *       + position_ref[0],
 *   Y = (sin a x + cos a y) / plate_scale + position_ref[1],
 * evaluated at the two wavelength vertices of a bin and averaged (each bin
 * is a rigid shift of the scene grid). The weights are conservative 2-D
 * weights from the mapped scene cells to the sensor pixels, one element
 * per (channel, wavelength bin).
 *
 * Layout (C order): a scene is [wavelength][scene_x][scene_y] (num_wavelength
 * x num_scene_x x num_scene_y values); images are [channel][sensor_x][sensor_y];
 * backprojected scenes are [channel][wavelength][scene_x][scene_y].
 *
 * Several spectral lines (params.num_line >= 1, params.lines): each line has
 * its own wavelength bins (typically a rest wavelength and Doppler velocity
 * bins, spart_wavelength_from_velocity) and an intensity scale, and all are
 * dispersed onto the same sensors by the same geometry (one dispersion, one
 * wavelength_ref: a line away from wavelength_ref lands shifted along sensor
 * x). The wavelength axis of the layout above is then the lines' bins one
 * line after another: bin b of line k is spectral index offset_k + b, with
 * offset_k the bins of the lines before k, so a scene of lines with equal
 * bin counts is [line][velocity][scene_x][scene_y]. The forward operator
 * sums every bin of every line into the images (one Regridder, as for one
 * line); line k's photons per radiance are intensity_scale_k A t dlambda
 * dOmega / E, so line k's part of the operator is that of a one-line
 * instrument whose area_effective is intensity_scale_k area_effective. The
 * backprojection spreads each image over all bins of all lines: it divides
 * by the total number of bins (the sum over lines), as ctis divides by the
 * bins of its one line, so that the photons it puts back sum to the image's.
 * Equivalently, line k's backprojection is that of the one-line instrument
 * above times (bins of line k) / (bins of all lines). One line given through
 * `lines` with scale 1 and the same edges as num_wavelength / wavelength
 * gives the same operators bit for bit (tests/unit/test_instrument_lines.c);
 * tests/parity/test_lines_parity.py holds a two-line instrument to the sum
 * of two ctis instruments.
 *
 * The forward operator is one Regridder from the scene to the images: the
 * scene is shared by the channels and the wavelengths are summed inside the
 * product, the photon conversion s = A t dlambda dOmega / E and the
 * quantum yield folded into its values. The backprojection is one
 * Regridder from the images to one scene per channel: the conservative
 * transpose of the same weights divided by (quantum yield x number of
 * wavelength bins x s), as ctis's backproject(integrate=True). Differences
 * from ctis (docs/differences.md): the clamp of negative photons is applied
 * to the wavelength-summed image, not per (channel, wavelength) plane, and
 * the noise width is sqrt(quantum_yield d + read_noise^2) from the summed
 * image d (equal to ctis's per-plane quadrature for non-negative planes).
 *
 * Point-spread function (optional, params.psf): either composed by FFT
 * after the forward operator (and its adjoint before the backward one), or
 * folded into the weights before the operators are made (params.psf_mode;
 * the default, SPART_PSF_AUTO, composes by FFT, the faster on the host and
 * on a GPU). The two agree to rounding (test_instrument), with one
 * consequence for MART at read noise 0: the FFT sets values within its
 * rounding of 0 to 0, and MART's merit leaves out pixels of model 0, so the
 * far tails of the kernels that folded weights keep (and ctis 0.5.0's
 * method keeps) are out of the FFT run's merit (docs/differences.md,
 * tests/parity/test_mart_psf_parity.py).
 *
 * Memory: the instrument owns its weights and both Regridders; pointers it
 * hands out stay valid until spart_instrument_free.
 *
 * Thread safety: the products only read the instrument; several threads may
 * image or backproject with one instrument at once (each with its context).
 */
#ifndef SPART_INSTRUMENT_H
#define SPART_INSTRUMENT_H

#include "spart/common.h"
#include "spart/mart.h"
#include "spart/psf.h"
#include "spart/regridder.h"
#include "spart/weights.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an instrument applies its point-spread function. */
typedef enum spart_psf_mode {
    SPART_PSF_AUTO = 0,  /* SPART_PSF_FFT, the faster wherever MART runs, as measured on
                            the ctis PSF tutorial's shape (docs/performance.md, PSF):
                            on the host 3.3 ms per MART iteration against 46 ms folded, on
                            an H200 0.12 ms against 1.6 ms folded, with 0.05 GB of device
                            memory against 3.6 GB; the choice is made when the instrument
                            is built and holds on the host and on a device alike */
    SPART_PSF_FFT = 1,   /* compose: the forward operator, then the PSF by FFT
                            (spart/psf.h); backprojection = the adjoint, then the
                            backward operator. On the host as the instrument gives
                            them, or on a GPU: copy both Regridders and the PSF there
                            (spart_regridder_to_device, spart_psf_to_device) and make
                            the operators with spart_mart_operators_from_regridders_psf */
    SPART_PSF_FOLDED = 2 /* fold the PSF into the weights (spart_weights_convolve)
                            and take the conservative transpose of the folded
                            weights, as ctis 0.5.0 does; works on a GPU too */
} spart_psf_mode;

/* One spectral line of an instrument with several (params.lines). */
typedef struct spart_instrument_line {
    int64_t num_wavelength;   /* bins (>= 1); wavelength has num_wavelength + 1 vertices */
    const double *wavelength; /* increasing bin edges, A, the first > 0 */
    double intensity_scale;   /* > 0: multiplies the line's photons (1: as a one-line
                                 instrument) */
} spart_instrument_line;

/* The description of an ideal instrument. Arrays are read during
 * spart_instrument_create only. Start from spart_instrument_params_init. */
typedef struct spart_instrument_params {
    int64_t num_channel;      /* >= 1 */
    const double *angle;      /* num_channel dispersion angles, degree */
    double dispersion;        /* A/pixel, nonzero */
    double plate_scale;       /* arcsec/pixel, > 0 */
    double wavelength_ref;    /* A: lands on position_ref */
    double position_ref[2];   /* pixel: where the scene centre lands at wavelength_ref */
    double area_effective;    /* cm^2, > 0 */
    double exposure_time;     /* s, > 0 */
    double quantum_yield;     /* electron/photon, > 0; default 1 */
    double read_noise;        /* electron, >= 0; default 0 */
    int64_t num_wavelength;   /* bins (>= 1); wavelength has num_wavelength + 1 vertices */
    const double *wavelength; /* increasing bin edges, A */
    int64_t num_scene_x;      /* cells (>= 1); scene_x has num_scene_x + 1 vertices */
    const double *scene_x;    /* arcsec */
    int64_t num_scene_y;
    const double *scene_y;  /* arcsec */
    int64_t num_sensor_x;   /* pixels (>= 1); sensor_x has num_sensor_x + 1 vertices */
    const double *sensor_x; /* pixel */
    int64_t num_sensor_y;
    const double *sensor_y;      /* pixel */
    int solid_angle_steradian;   /* 0 (default): radiance per arcsec^2; 1: per steradian */
    spart_value_type value_type; /* of both operators; default SPART_FLOAT64 */
    int keep_weights; /* 1: keep the geometric weights (spart_instrument_weights); default 0 */
    /* Point-spread function, shift-invariant per channel: num_channel
     * kernels of psf_size[0] x psf_size[1] pixels along sensor x then y
     * (C order [channel][x][y]), centre at floor(n / 2) along each axis
     * (spart/psf.h says what an even size means), light spread past the
     * sensor's edge lost; NULL (default): none. Copied. */
    const double *psf;
    int64_t psf_size[2];
    spart_psf_mode psf_mode; /* default SPART_PSF_AUTO */
    /* Several spectral lines (the layout above): num_line >= 1 lines read
     * from `lines`, and then num_wavelength must be 0 and wavelength NULL
     * (the lines give the bins). 0 (default): one line of scale 1, the bins
     * num_wavelength / wavelength. */
    int64_t num_line;
    const spart_instrument_line *lines;
    /* Build within a memory budget: 0 (default) builds every plane's
     * weights, then assembles the two operators from them (the weights of
     * both directions in memory at once: about 70 bytes a weight a
     * direction at the peak, docs/dev/esis-notes.md). > 0: each operator is
     * assembled by streaming (spart_regridder_create_streamed, within this
     * many bytes each), its (channel, bin) planes' weights built one plane
     * at a time when the assembly asks for them (twice: it counts, then
     * places), so that the peak is the two operators and one plane's
     * weights; the same operators bit for bit. Each plane is built four
     * times (two passes, two directions), onto the pixels it can reach
     * when the pixel vertices are increasing whole numbers (on a sensor
     * much larger than a plane's footprint, as ESIS's, this is faster than
     * the in-memory build, whose builders walk the whole sensor per plane),
     * else onto the whole sensor (slower). Not with keep_weights or a
     * folded PSF (which need every weight at once). On a device
     * (on_device = 1) the budget is of device memory: every plane's
     * entries are counted on the device first, the planes cut into
     * blocks of at most 2^26 entries (fewer for a budget under 4 GB),
     * and each block built on the device (spart_instrument_planes_block)
     * and read where it lies; the builder's own buffers (about 48 bytes
     * an entry of the largest block, 16 bytes a scene vertex a plane of
     * it, and the photons per radiance) are outside the budget. */
    size_t memory_budget;
    /* Where the instrument is built: 0 (default) on the host; 1 on the
     * context's CUDA device (spart_context_set_cuda_device): the scene
     * mapped, the weights clipped, the conservative transpose taken and
     * the unit factors folded in there (the device planes builder below,
     * which copies the geometry and the photons per radiance once; with
     * keep_weights or a folded PSF, spart_weights_build_device and the
     * device forms of spart_weights_convolve, _transpose_conservative and
     * _scale instead), and both operators assembled there (streamed from
     * the builder's blocks, in memory as one block when the planes have
     * at most 2^29 entries), so that no weight crosses the bus. The
     * operators are then device Regridders, the same CSR arrays bit for
     * bit as the host build's (and as spart_regridder_to_device of them),
     * so an inversion gives the same bits; a composed PSF is copied to the
     * device too (spart_psf_to_device). Products of such an instrument
     * (spart_instrument_image, _backproject, _mart_operators) take device
     * memory; spart_instrument_observe, which draws on the host, refuses
     * it; kept weights (keep_weights) are a host copy. A field rather than
     * the context because a context always names a device (device 0 by
     * default) and the same context builds host instruments: this field is
     * the one place that decides. */
    int on_device;
} spart_instrument_params;

/* Fill `params` with the defaults (quantum_yield 1, the rest 0 / NULL). */
SPART_API void spart_instrument_params_init(spart_instrument_params *params);

typedef struct spart_instrument spart_instrument;

/* Build the weights and both operators. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (a count below 1, a non-positive plate scale,
 * area, exposure or quantum yield, a zero dispersion, a negative read
 * noise, wavelengths that do not increase, a negative num_line, lines given
 * together with num_wavelength or wavelength, a line's intensity scale that
 * is not positive, a memory_budget with keep_weights or a folded PSF, or
 * one too small for the operators: the sentence names the field and the
 * line, or the bytes),
 * SPART_ERROR_NOT_FINITE, SPART_ERROR_UNKNOWN_ENUM, SPART_ERROR_OUT_OF_MEMORY,
 * and the errors of the weights builder; with on_device = 1 also
 * SPART_ERROR_NO_DEVICE (built without CUDA, or no such device) and
 * SPART_ERROR_INTERNAL (another CUDA error, named). */
SPART_NODISCARD SPART_API spart_status spart_instrument_create(
    spart_context *context, const spart_instrument_params *params, spart_instrument **instrument);

/* Free an instrument and its operators. Accepts NULL. */
SPART_API void spart_instrument_free(spart_instrument *instrument);

/* Sizes: channels, values per scene, per channel image. */
SPART_API int64_t spart_instrument_num_channel(const spart_instrument *instrument);
/* Spectral bins of the scene: of every line together (the lines' bins one
 * line after another), so scene_size = num_wavelength x scene_x x scene_y. */
SPART_API int64_t spart_instrument_num_wavelength(const spart_instrument *instrument);
/* Spectral lines: num_line as given, or 1 for an instrument of
 * num_wavelength / wavelength. */
SPART_API int64_t spart_instrument_num_line(const spart_instrument *instrument);
SPART_API int64_t spart_instrument_scene_size(const spart_instrument *instrument);
SPART_API int64_t spart_instrument_image_size(const spart_instrument *instrument);

/* The operators (owned by the instrument). */
SPART_API const spart_regridder *spart_instrument_forward(const spart_instrument *instrument);
SPART_API const spart_regridder *spart_instrument_backward(const spart_instrument *instrument);

/* The PSF composed by FFT after the forward operator (NULL when there is
 * none or it is folded into the weights; owned by the instrument, on the
 * host). spart_instrument_mart_operators gives host operators with it; for
 * a GPU, copy it with spart_psf_to_device beside the two Regridders and
 * make the operators with spart_mart_operators_from_regridders_psf
 * (Regridders moved alone, through spart_mart_operators_from_regridders,
 * would leave the PSF out). */
SPART_API const spart_psf *spart_instrument_psf(const spart_instrument *instrument);

/* The geometric weights the operators were made from, with
 * keep_weights = 1 (else NULL; owned by the instrument): conservative 2-D
 * weights from the mapped scene cells to the sensor pixels, orthogonal
 * axes (channel, wavelength), as regridding.weights gives them, before the
 * unit factors were folded in (with a folded PSF, after it was). spart_weights_save writes them. */
SPART_API const spart_weights *spart_instrument_weights(const spart_instrument *instrument);

/* The photons per unit radiance of each scene voxel, s = A t dlambda dOmega /
 * E, times the line's intensity scale (scene_size values, owned by the
 * instrument). */
SPART_API const double *spart_instrument_photons_per_radiance(const spart_instrument *instrument);

/* Expected images (num_channel x image_size electrons) of a scene
 * (scene_size values), and, if `widths` is not NULL, the width of their
 * noise. Errors: SPART_ERROR_NULL_POINTER, those of the product. */
SPART_NODISCARD SPART_API spart_status spart_instrument_image(spart_context *context,
                                                              const spart_instrument *instrument,
                                                              const double *scene, double *images,
                                                              double *widths);

/* Backproject images (num_channel x image_size electrons) into one scene
 * per channel (num_channel x scene_size), as ctis's backproject. */
SPART_NODISCARD SPART_API spart_status
spart_instrument_backproject(spart_context *context, const spart_instrument *instrument,
                             const double *images, double *scenes);

/* Synthetic observations of a scene: Poisson photon counts of the expected
 * image (drawn per pixel, the wavelengths summed: the same distribution as
 * ctis's per-plane draws), times the quantum yield, plus Gaussian read
 * noise, from GSL's MT19937 seeded with `seed` (one stream, pixels in
 * order, so a seed gives the same images on every machine). `widths`
 * (may be NULL) receives the noise width of the expected image. */
SPART_NODISCARD SPART_API spart_status spart_instrument_observe(spart_context *context,
                                                                const spart_instrument *instrument,
                                                                const double *scene, uint64_t seed,
                                                                double *images, double *widths);

/* MART operators of this instrument (the forward and backward Regridders,
 * gain = quantum yield, its read noise); `pair` is storage that must
 * outlive `operators`. */
SPART_NODISCARD SPART_API spart_status
spart_instrument_mart_operators(spart_context *context, const spart_instrument *instrument,
                                spart_mart_regridder_pair *pair, spart_mart_operators *operators);

/* ---- The planes of an ideal instrument (advanced) -----------------------------
 * The pieces spart_instrument_create is made of, for code that assembles
 * the operators itself (solvers/instrument_stream.c streams them into
 * spart_regridder_create_streamed). A plane is one (channel, spectral bin)
 * pair; a bin is given by its two wavelength edges [low, high] (several
 * lines' bins one line after another, as the layout above). `params` must
 * be as spart_instrument_create accepts them: these functions check only
 * what they need (sizes and pointers). */

/* The scene's vertices mapped onto the sensor for channel `channel` and
 * the bin [low, high] (the geometry above, in ctis's order of operations:
 * the same bits as the instrument's build, host or device): x and y of
 * (num_scene_x + 1) x (num_scene_y + 1) values each, vertex (i, j) at
 * i (num_scene_y + 1) + j. Does nothing (x and y untouched) when a pointer
 * is NULL or `channel` is outside [0, num_channel): it returns no status,
 * so check the params first (spart_instrument_create's checks). */
SPART_API void spart_instrument_map_vertices(const spart_instrument_params *params, int64_t channel,
                                             double low, double high, double *x, double *y);

/* The planes' weights built on the context's CUDA device, ready for a
 * streamed device assembly (spart_weights_block with blocks_on_device):
 * the conservative 2-D weights of each plane's mapped scene cells onto the
 * whole sensor (spart_weights_build_device's entries), with the unit
 * factors folded in as spart_instrument_create folds them (forward:
 * photons per radiance s times the quantum yield q per scene cell;
 * backward: the conservative transpose divided by (q num_bins s)). The
 * object keeps on the device the scene's and the sensor's vertices, the
 * pixel areas, s (num_bins x num_scene_x x num_scene_y values, 8 bytes
 * each) and each plane's constants, so a block crosses the bus as one
 * flag and one count a plane; it also keeps the last block's weights (32
 * bytes an entry, and 16 bytes a scene vertex a plane), so asking for the
 * same block again (the other direction, the other pass) clips nothing
 * again. Same entries and values as the host
 * build, bit for bit (tests/unit/test_cuda_instrument.c).
 * Not thread-safe: one object is used by one thread at a time (it holds
 * the last block's buffers). Its memory comes from the allocator of the
 * context that made it, whichever context later calls or frees it.
 * While an object lives, the device's default CUDA memory pool keeps what
 * is freed to it (its release threshold raised, restored at free unless
 * it was raised already): the clipping kernels' scratch is stream-ordered
 * from that pool, and giving it back to the system between planes cost
 * most of the count's time. Other users of the default pool in the process
 * see the same threshold meanwhile. */
typedef struct spart_instrument_planes spart_instrument_planes;

/* Make the object for `num_bins` bins (bin_low[b], bin_high[b]) and the
 * photons per radiance `photons_per_radiance` (host memory, as
 * spart_instrument_photons_per_radiance gives them). Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (sizes below 1),
 * SPART_ERROR_NO_DEVICE (built without CUDA, or no such device),
 * SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL (a CUDA error, named). */
SPART_NODISCARD SPART_API spart_status spart_instrument_planes_create(
    spart_context *context, const spart_instrument_params *params, int64_t num_bins,
    const double *bin_low, const double *bin_high, const double *photons_per_radiance,
    spart_instrument_planes **planes);

/* The entries of planes first_plane ... first_plane + num_planes - 1 (plane
 * channel x num_bins + bin, the element of the operators' (channel, bin)
 * orthogonal shape) into entries[0 .. num_planes - 1] (the weights
 * counted, not written: to size a stream's blocks). Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (planes outside the instrument),
 * SPART_ERROR_NOT_FINITE (a mapped vertex overflows), and the CUDA errors
 * above. */
SPART_NODISCARD SPART_API spart_status
spart_instrument_planes_count(spart_context *context, spart_instrument_planes *planes,
                              int64_t first_plane, int64_t num_planes, int64_t *entries);

/* The weights of planes first_plane ... first_plane + num_planes - 1 as
 * one block (first_element = first_plane), forward (backward 0: scene
 * cell -> pixel) or backward (1: pixel -> scene cell). `block` gets host offsets
 * and device entry arrays, owned by the object and valid until its next
 * call or spart_instrument_planes_free. Errors: those of
 * spart_instrument_planes_count. */
SPART_NODISCARD SPART_API spart_status
spart_instrument_planes_block(spart_context *context, spart_instrument_planes *planes, int backward,
                              int64_t first_plane, int64_t num_planes, spart_weights_block *block);

/* Free the object and its device memory. Accepts NULL. */
SPART_API void spart_instrument_planes_free(spart_instrument_planes *planes);

#ifdef __cplusplus
}
#endif

#endif /* SPART_INSTRUMENT_H */
