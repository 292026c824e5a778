/*
 * spart/device.h: regridders on an NVIDIA GPU. A context names the CUDA
 * device and stream of its device work; spart_regridder_create_device
 * assembles a regridder in that device's memory from weights, and
 * spart_regridder_to_device copies one there; spart_regridder_apply and
 * spart_regridder_apply_workspace then run on the device, with x, y and
 * the workspace in device memory.
 *
 * Availability: CUDA is optional at build time and detected at run time. In
 * a build without CUDA, or on a machine where no device is visible, these
 * functions return SPART_ERROR_NO_DEVICE with a sentence saying which, and
 * the host library works as before.
 *
 * Memory: a device regridder owns its device memory (cudaMalloc, freed by
 * spart_regridder_free, which synchronises the device as cudaFree does).
 * spart_regridder_csr returns device pointers for it. x->data, y and the
 * workspace of a device product must be device memory of the regridder's
 * device (cudaMalloc, cudaMallocAsync or managed memory): host memory is
 * refused with SPART_ERROR_INVALID_ARGUMENT, never read.
 *
 * What runs on the device in this version: assembly from weights (the
 * weights' entries are copied to the device once, sorted there), also
 * after folding a kernel (a PSF) into them on the device
 * (spart_regridder_create_device_convolved), and from entries already in
 * device memory (spart_regridder_create_device_from_arrays); the
 * product y = A x on the device (vectors of leading axes read and written
 * where they lie, in one launch; declared batch axes packed into
 * interleaved vectors and unpacked); the exact transpose
 * (spart_regridder_transpose) and the conservative transpose
 * (spart_regridder_transpose_conservative: its grid factors, one per cell,
 * are computed on the host and copied; each entry is scaled on the
 * device), both device regridders on the same device. Saving needs the
 * regridder on the host (spart_regridder_to_host); on a device regridder
 * it returns SPART_ERROR_NOT_IMPLEMENTED.
 *
 * Asynchrony: a device product only enqueues work on the context's stream
 * and returns; read y after synchronising that stream. It never
 * synchronises, so spart_regridder_apply_workspace (with a workspace you
 * allocated) can be captured in a CUDA Graph; spart_regridder_apply
 * allocates its workspace with cudaMallocAsync on the stream when it needs
 * one (several vectors, or rows longer than SPART_CHUNK_LENGTH).
 * spart_regridder_to_device and spart_regridder_to_host synchronise the
 * stream before they return, as do assembly and the transposes, which
 * work on the regridder's device: on the context's stream when the
 * context uses that device, else on the default stream.
 *
 * Thread safety: as for host regridders. The calling thread's current CUDA
 * device is switched to the regridder's for the duration of a call and
 * restored before it returns.
 *
 * Determinism: device assembly and the device transposes build the same
 * CSR arrays as the host's, bit for bit, run after run: entries are placed
 * by a stable radix sort keyed by row (or column) carrying each entry's
 * position, never by atomic cursors. The device product adds in exactly
 * the order of the host product (spart/regridder.h: lanes, tree, chunks; float32 values summed
 * in float64; explicit fma, no other contraction), so a device product
 * equals the host product bit for bit, run after run, for a column alone
 * or in any batch. The one exception is NaN: a NaN result is NaN on both,
 * but its payload bits may differ. No atomics.
 */
#ifndef SPART_DEVICE_H
#define SPART_DEVICE_H

#include "spart/common.h"
#include "spart/regridder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Use CUDA device `device` (as numbered by cudaGetDevice) for this
 * context's device work; the default is device 0. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (negative),
 * SPART_ERROR_NO_DEVICE (built without CUDA, no device visible, or no
 * device of that number). */
SPART_NODISCARD SPART_API spart_status spart_context_set_cuda_device(spart_context *context,
                                                                     int device);

/* Enqueue this context's device work on `stream`, a cudaStream_t of the
 * context's device; NULL (the default) is the default stream. The stream
 * must outlive the work. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_NO_DEVICE (built without CUDA). */
SPART_NODISCARD SPART_API spart_status spart_context_set_cuda_stream(spart_context *context,
                                                                     void *stream);

/* Assemble a regridder from weights (in host memory), as
 * spart_regridder_create does (options NULL: the defaults), with its
 * matrix in the memory of the context's CUDA device: the weights' entries
 * are copied to the device once and assembled there by a stable sort, into
 * the same CSR arrays, bit for bit, as spart_regridder_create builds on
 * the host, and the same plan. Large weights (256 MiB of entries or more)
 * are copied through two pinned 32 MiB buffers that the context's threads
 * fill, at the pinned copy rate. Besides the matrix it takes, for the
 * duration of the call, about 40 bytes of device memory per entry (the
 * entries and the sort). Free it with spart_regridder_free. Errors:
 * those of spart_regridder_create, SPART_ERROR_NO_DEVICE (built without
 * CUDA, or no such device), SPART_ERROR_OUT_OF_MEMORY (device or host
 * memory), SPART_ERROR_INTERNAL (another CUDA error, named in the
 * sentence). */
SPART_NODISCARD SPART_API spart_status
spart_regridder_create_device(spart_context *context, const spart_weights *weights,
                              const spart_regridder_options *options, spart_regridder **regridder);

/* Fold `kernel` into `weights` and assemble the result, both on the
 * context's CUDA device: the regridder spart_regridder_create_device
 * would build from spart_weights_convolve(weights, kernel), the same CSR
 * arrays bit for bit and the same plan, without the convolved weights ever
 * existing in host memory. The kernel is read as spart_weights_convolve
 * reads it (spart/weights.h); options as spart_regridder_create reads them
 * (NULL: the defaults), for the convolved weights' shapes. The unconvolved
 * entries and the kernel are copied to the device; the convolution runs
 * there in the host's order of operations (each cell's sum in the order of
 * the run's entries, no FMA) and places its runs by prefix sums, never by
 * atomics, so the arrays are the same run after run; the device assembly
 * then takes the convolved entries over. Device memory for the duration
 * of the call, besides the matrix: about 24 bytes per convolved entry
 * (the entries) plus the assembly's sort (about 16 bytes per entry) while
 * both are held, and the copied inputs. Weights already on a device
 * (spart_weights_build_device) are not copied: the kernel is folded into
 * them on their device by spart_weights_convolve, and the result
 * assembled by spart_regridder_create_device (the same arrays, bit for
 * bit; the convolved weights held for the call; a kernel that broadcasts
 * the weights to more elements is refused, as spart_weights_convolve
 * refuses it for device weights). Progress stages (see
 * spart_context_set_progress): "convolve", then "assembly". Free the
 * result with spart_regridder_free. Errors: SPART_ERROR_NULL_POINTER;
 * those of spart_weights_convolve for the kernel and of
 * spart_regridder_create for the options, checked on the host before any
 * device work (so they are the same without a device); then
 * SPART_ERROR_NO_DEVICE (built without CUDA, or no such device),
 * SPART_ERROR_OUT_OF_MEMORY (device or host memory), SPART_ERROR_INTERNAL
 * (another CUDA error, named in the sentence). */
SPART_NODISCARD SPART_API spart_status spart_regridder_create_device_convolved(
    spart_context *context, const spart_weights *weights, const spart_array *kernel,
    const spart_regridder_options *options, spart_regridder **regridder);

/* Assemble a regridder on the context's CUDA device from weights whose
 * entries are already in that device's memory (made by your own kernels,
 * or by CuPy or PyTorch), without a trip through host memory: the
 * regridder spart_regridder_create_device builds from the weights that
 * spart_weights_create_from_arrays makes of the same arguments, the same
 * CSR arrays bit for bit and the same plan. The arguments are those of
 * spart_weights_create_from_arrays, with the regridder options of
 * spart_regridder_create (NULL: the defaults): shapes, axes and offsets
 * (num_elements + 1 values, from 0, ascending) in host memory;
 * indices_input, indices_output (int64) and values (float64), each of
 * offsets[num_elements] entries, in device memory of the context's device
 * (spart_device_malloc, cudaMalloc, cudaMallocAsync or managed memory).
 *
 * The entry arrays are read in place, never written or freed, and not
 * copied: the call works on the context's stream, so they must be written
 * by work that has finished or that was enqueued before on that stream.
 * They are no longer read once the call returns (it synchronises the
 * stream), and stay yours. Device memory for the duration of the call,
 * besides the matrix: the assembly's sort (about 16 bytes per entry) and
 * its tables. Progress stage (see spart_context_set_progress): "assembly".
 *
 * Checks, in this order: on the host, before any device work, the
 * arguments as spart_weights_create_from_arrays checks them (NULL
 * pointers, shapes, axes, offsets; entry pointers may be NULL only when
 * there are no entries) and the options as spart_regridder_create does,
 * with the same statuses and sentences, so that they are the same without
 * a device; then the device (SPART_ERROR_NO_DEVICE); then that each entry
 * pointer is memory of the context's device (SPART_ERROR_INVALID_ARGUMENT
 * naming it; host memory is never read); then, on the device, every
 * index against its side's resampled cells (0 <= index < their product):
 * the first entry out of range is refused with SPART_ERROR_INVALID_ARGUMENT
 * and the sentence spart_weights_create_from_arrays gives it ("weights
 * element 3: entry 17 has indices_input = ..."). Other errors:
 * SPART_ERROR_OUT_OF_MEMORY (device or host memory), SPART_ERROR_INTERNAL
 * (another CUDA error, named in the sentence). Free the result with
 * spart_regridder_free. */
SPART_NODISCARD SPART_API spart_status spart_regridder_create_device_from_arrays(
    spart_context *context, const spart_shape *shape_orthogonal, const spart_shape *shape_input,
    const spart_shape *shape_output, int num_axis_input, const int *axis_input, int num_axis_output,
    const int *axis_output, const int64_t *offsets, const int64_t *indices_input,
    const int64_t *indices_output, const double *values, const spart_regridder_options *options,
    spart_regridder **regridder);

/* A new regridder whose matrix lives in the memory of the context's CUDA
 * device: the same CSR arrays, plan and shapes as `regridder` (which may
 * be a host or a device regridder), so the same products. Its transposes
 * are not copied. Free it with spart_regridder_free. Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_NO_DEVICE, SPART_ERROR_OUT_OF_MEMORY
 * (device or host memory), SPART_ERROR_INTERNAL (another CUDA error, named
 * in the sentence). */
SPART_NODISCARD SPART_API spart_status spart_regridder_to_device(spart_context *context,
                                                                 const spart_regridder *regridder,
                                                                 spart_regridder **device);

/* A new regridder in host memory with the same matrix, plan and shapes as
 * `regridder` (a device or a host regridder). Errors: as
 * spart_regridder_to_device. */
SPART_NODISCARD SPART_API spart_status spart_regridder_to_host(spart_context *context,
                                                               const spart_regridder *regridder,
                                                               spart_regridder **host);

/* The CUDA device whose memory holds the regridder's matrix, or -1 for a
 * regridder in host memory (and for NULL). */
SPART_API int spart_regridder_cuda_device(const spart_regridder *regridder);

#ifdef __cplusplus
}
#endif

#endif /* SPART_DEVICE_H */
