/*
 * spart/psf.h: a point-spread function (PSF) as a convolution operator on
 * images, for kernels that are shift-invariant per orthogonal element (one
 * 2-D kernel per channel or wavelength, the same all over the image),
 * applied by FFT (FFTW on the host, cuFFT on a CUDA device: see "On a CUDA
 * device" below).
 *
 * Shapes, C order: the images have shape (orthogonal axes..., ny, nx),
 * with zero or more orthogonal axes (channels, wavelengths); the kernels
 * have shape (kernel orthogonal axes..., ky, kx), whose orthogonal axes
 * broadcast against the images' as NumPy's do (missing leading axes and
 * axes of length 1 share one kernel), so a 2-D kernel is shared by every
 * image. The kernel's centre is at index (floor(ky / 2), floor(kx / 2)),
 * as in regridding.convolve_weights (regridding 3.6.0). For an odd size
 * the centre is the middle sample; for an even size k it is sample k / 2,
 * so a pixel's light goes to the k / 2 pixels before it (lower indices)
 * and the k / 2 - 1 after it: the kernel [a, b] keeps b on the pixel and
 * moves a onto the pixel before it (out[i] = b in[i] + a in[i + 1]).
 *
 * The operator P (spart_psf_apply), per image:
 *     out[y', x'] = sum over y, x of K(y' - y + cy, x' - x + cx) in[y, x]
 * with K zero outside its ky x kx samples: light from pixel (y, x) spread
 * over its neighbours, and light spread past the image's edge lost (zero
 * padding, never a circular wrap). Kernels may be larger than the image.
 * Its adjoint P^T (spart_psf_apply_adjoint) is the correlation
 *     out[y, x] = sum over y', x' of K(y' - y + cy, x' - x + cx) in[y', x'],
 * so that <P a, b> = <a, P^T b> to rounding.
 *
 * Accuracy: the FFT's rounding error is relative to the largest value of an
 * image (about 1e-16 times it, times a small factor that grows as the log
 * of the image size), not to each pixel: a pixel that direct convolution
 * makes exactly 0 may come out as a tiny number of either sign.
 *
 * Memory: a spart_psf owns the kernels' spectra and its FFTW plans; each
 * call allocates its working buffers (two per thread) through the context.
 *
 * Thread safety: a host spart_psf is immutable once made; any number of
 * threads may apply it at once (a device PSF may not: see below). Making
 * and freeing one call FFTW's planner, which is shared by the whole
 * process and not thread-safe: do not make or free spart_psf objects while
 * another thread plans FFTW transforms.
 *
 * Determinism: the plans are made with FFTW_ESTIMATE (never by timing
 * trials) and every image is transformed by one thread with the same plan,
 * so results are the same bits for any thread count and run after run on
 * one machine; FFTW picks its SIMD code from the CPU, so other machines (or
 * a process that loaded FFTW wisdom) may differ in the last bits.
 *
 * On a CUDA device: spart_psf_to_device copies a PSF to the context's
 * device; spart_psf_apply and spart_psf_apply_adjoint on that copy run
 * there with cuFFT, on input->data and output in that device's memory
 * (host memory is refused with SPART_ERROR_INVALID_ARGUMENT, never read).
 * - The same operator: the same zero padding, the same FFT sizes, the same
 *   spectra (the host's, copied), the same rule making values within the
 *   FFT's rounding of 0 exactly 0 (so pixels no light reaches stay 0).
 *   cuFFT rounds differently from FFTW: the results agree with the host's
 *   to rounding (within 1e-12 of max|in| |K|_1), not bit for bit.
 * - Asynchrony: an apply only enqueues work on the context's stream (a
 *   stream of the PSF's device, or NULL) and returns; it never waits and
 *   allocates nothing (its plans and working buffers were made by
 *   spart_psf_to_device), so it can be recorded in a CUDA graph. Read the
 *   output after synchronising that stream. Input values are not checked
 *   for NaN or infinity there (that would need a copy to the host): a NaN
 *   spreads over its whole image.
 * - Memory: a device PSF holds in device memory the kernels' spectra, one
 *   set of working images and spectra (about 3 x 8 bytes per padded pixel
 *   of every image) and cuFFT's plans and their work areas; spart_psf_free
 *   releases them (cudaFree synchronises the device).
 * - Thread safety: unlike a host PSF, a device PSF is not read-only while
 *   it applies: its working buffers and its plans' stream are shared by
 *   every call. Applies enqueued on one stream, one at a time, are safe;
 *   two threads (or two streams) must not apply one device PSF at once
 *   (copy it once per thread with spart_psf_to_device).
 * - Determinism: the same device, inputs and plan give the same bits run
 *   after run (cuFFT's plans are fixed when made; spart's kernels use no
 *   atomics, and the largest |input| of an image is a maximum, exact in any
 *   order); the results in place and out of place are the same bits.
 */
#ifndef SPART_PSF_H
#define SPART_PSF_H

#include "spart/common.h"
#include "spart/mart.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spart_psf spart_psf;

/* Make the PSF operator of `kernels` (shape above, at least 2 axes, every
 * value finite; negative values are allowed) for images of shape
 * `shape_image` (at least 2 axes). The kernels are copied; their spectra
 * are computed here, with the FFTW plans every apply reuses.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (fewer
 * than 2 axes, an extent below 1, kernels with more axes than the images),
 * SPART_ERROR_SHAPE_MISMATCH (kernel orthogonal axes that do not broadcast
 * against the images'), SPART_ERROR_NOT_FINITE (a kernel value that is NaN
 * or infinite), SPART_ERROR_OVERFLOW, SPART_ERROR_OUT_OF_MEMORY,
 * SPART_ERROR_INTERNAL (FFTW could not make a plan). On failure *psf is
 * NULL. */
SPART_NODISCARD SPART_API spart_status spart_psf_create(spart_context *context,
                                                        const spart_array *kernels,
                                                        const spart_shape *shape_image,
                                                        spart_psf **psf);

/* Free a PSF operator. Accepts NULL. */
SPART_API void spart_psf_free(spart_psf *psf);

/* The image shape it applies to, and the kernels' shape. */
SPART_API spart_shape spart_psf_shape_image(const spart_psf *psf);
SPART_API spart_shape spart_psf_shape_kernels(const spart_psf *psf);

/* A copy of `psf` (on the host or a device) on the context's CUDA device,
 * for applies there: the same shapes and spectra, with its cuFFT plans
 * made (and run once, so that cuFFT loads its code here and not while a
 * graph records) and its working buffers allocated. Waits for the
 * context's stream. Free it with spart_psf_free. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_NO_DEVICE (built without CUDA, or
 * no such device), SPART_ERROR_OUT_OF_MEMORY (device or host memory, or
 * cuFFT's work area), SPART_ERROR_OVERFLOW (2^31 images or more),
 * SPART_ERROR_INTERNAL (another CUDA or cuFFT error, named). On failure
 * *device is NULL. */
SPART_NODISCARD SPART_API spart_status spart_psf_to_device(spart_context *context,
                                                           const spart_psf *psf,
                                                           spart_psf **device);

/* The CUDA device a PSF applies on, or -1 for a host PSF (and for NULL). */
SPART_API int spart_psf_cuda_device(const spart_psf *psf);

/* output = P input (spart_psf_apply) or P^T input (spart_psf_apply_adjoint).
 * input must have exactly the image shape (no broadcasting, no leading
 * axes) and finite values (an FFT would spread a NaN over a whole image);
 * output holds size_output = the image's size values, overwritten, and may
 * be input itself (in place). On the host the images are shared out among
 * the context's threads; for a device PSF both arrays are device memory
 * and the work is enqueued on the context's stream (see the top of this
 * file). Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_SHAPE_MISMATCH
 * (the sentence names both shapes), SPART_ERROR_INVALID_ARGUMENT (a wrong
 * size_output; for a device PSF, host memory or another device's),
 * SPART_ERROR_NOT_FINITE (host PSF only: naming the first bad input
 * value), SPART_ERROR_OUT_OF_MEMORY, SPART_ERROR_INTERNAL (device PSF: a
 * CUDA or cuFFT error, named). */
SPART_NODISCARD SPART_API spart_status spart_psf_apply(spart_context *context, const spart_psf *psf,
                                                       const spart_array *input, double *output,
                                                       int64_t size_output);
SPART_NODISCARD SPART_API spart_status spart_psf_apply_adjoint(spart_context *context,
                                                               const spart_psf *psf,
                                                               const spart_array *input,
                                                               double *output, int64_t size_output);

/* MART operators with a PSF composed by FFT (rather than folded into the
 * weights): spart_mart_regridder_pair's fields, and a PSF whose image shape
 * is the forward Regridder's output shape. forward(x) = P (A x), then the
 * clamp at 0 and the noise widths of spart_mart_operators_from_regridders;
 * backward(images) = B (P^T images). Either everything on the host, or
 * both Regridders and the PSF on one CUDA device (spart_regridder_to_device,
 * spart_psf_to_device) with device_scratch set: the whole MART loop then
 * stays on the device and is recorded as a CUDA graph. */
typedef struct spart_mart_regridder_psf {
    const spart_regridder *forward;
    const spart_psf *psf;
    const spart_regridder *backward;
    int64_t num_channel;
    double gain;       /* > 0 */
    double read_noise; /* >= 0 */
    /* On a device: num_channel x image_size doubles (the forward
     * Regridder's rows) of that device's memory, which the backward
     * operator writes P^T images into (spart_device_malloc; the caller's,
     * kept as long as the operators; no other use meanwhile). On the host:
     * NULL (each backward call allocates its own through the context). */
    double *device_scratch;
} spart_mart_regridder_psf;

/* Fill `operators` to run on `problem` (which must outlive them). On the
 * host the backward callback allocates one image set of scratch per call
 * through the context; on a device it uses problem->device_scratch and
 * the operators are on_device and capturable. Errors: those of
 * spart_mart_operators_from_regridders, and SPART_ERROR_SHAPE_MISMATCH (a
 * PSF whose image shape is not the forward Regridder's output shape),
 * SPART_ERROR_INVALID_ARGUMENT (the PSF and the Regridders in different
 * places), SPART_ERROR_NULL_POINTER (device operators without
 * device_scratch). */
SPART_NODISCARD SPART_API spart_status spart_mart_operators_from_regridders_psf(
    spart_context *context, const spart_mart_regridder_psf *problem,
    spart_mart_operators *operators);

/* ---- kernels: the elliptical Gaussian ---------------------------------------------------- */

/* Fill `kernel` (size[0] x size[1] values, C order, size_kernel =
 * size[0] * size[1]) with an elliptical Gaussian normalised to sum 1, the
 * kernel of ctis's PSF tutorial (one per channel there: 21 x 21 with
 * widths 2 x 0.8, 3 x 0.6, 3.5 x 0.9 and 2.5 x 0.5 pixels at 0, 30, 75 and
 * 135 degrees). Sample (i, j) sits at (p, q) = (i - floor(size[0] / 2),
 * j - floor(size[1] / 2)) pixels from the centre, the library's kernel
 * centre (so an even size puts the centre on sample size / 2), and is
 *     exp(-(u^2 / sigma_major^2 + v^2 / sigma_minor^2) / 2),
 *     u = cos(a) p + sin(a) q,  v = -sin(a) p + cos(a) q,
 * before the samples are divided by their sum (taken in C order): sigma_major
 * is the standard deviation (pixels) along the direction at `angle` (a, in
 * degrees) from the first axis towards the second, sigma_minor across it
 * (either may be the larger). For an instrument (spart/instrument.h) the
 * first axis is sensor x and the second sensor y. The kernel is sampled,
 * not integrated over pixels, and cut at its edges before normalising.
 * Writes only `kernel`; exp, cos and sin come from the C library, so the
 * last bit may differ between platforms.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_NOT_FINITE (a width or the
 * angle NaN or infinite), SPART_ERROR_INVALID_ARGUMENT (a size below 1,
 * size_kernel other than size[0] * size[1], a width that is not positive or
 * whose square is 0 or infinite in float64), SPART_ERROR_OVERFLOW (size[0] *
 * size[1] beyond int64). On error nothing is written. */
SPART_NODISCARD SPART_API spart_status spart_psf_gaussian(spart_context *context,
                                                          double sigma_major, double sigma_minor,
                                                          double angle, const int64_t size[2],
                                                          double *kernel, int64_t size_kernel);

#ifdef __cplusplus
}
#endif

#endif /* SPART_PSF_H */
