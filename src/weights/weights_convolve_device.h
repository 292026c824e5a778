/*
 * src/weights/weights_convolve_device.h: the CUDA entry point of the device
 * convolution of weights (kernels/weights_convolve.cu), as the C glue
 * (src/operator/regridder_convolved_cuda.c, src/weights/weights_convolve_cuda.c)
 * calls it. Exists only in builds with
 * SPART_HAVE_CUDA. Plain C types only, so that the header reads the same in
 * C and in CUDA C++.
 *
 * The device twin of host/weights_convolve.c: the same runs (maximal
 * stretches of consecutive entries of one element sharing an input cell),
 * the same boxes, the same cells reached, the same values (each cell starts
 * at +0 and receives value * kernel element from the run's entries in
 * order, one product and one sum, no FMA; kernel elements equal to zero
 * skipped), written in the same order. So the arrays equal
 * spart_weights_convolve's bit for bit, for any launch configuration. Runs
 * are placed by prefix sums (CUB's scans) and every cell's position inside
 * its run by a block scan in grid order: no atomics.
 *
 * Unlike the entry points of src/device/device_internal.h this one is a build
 * step, never captured in a graph: it allocates its scratch and its result
 * stream-ordered (cudaMallocAsync) on `stream` and synchronises that
 * stream twice (to learn the number of runs and of result entries).
 */
#ifndef SPART_WEIGHTS_CONVOLVE_DEVICE_H
#define SPART_WEIGHTS_CONVOLVE_DEVICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPART_CONVOLVE_DEVICE_MAX_NDIM 16

/* spart_convolve_layout (src/weights/weights_convolve.h) with its arrays in device
 * memory. */
typedef struct spart_device_convolve_layout {
    int ndim;                                             /* resampled output axes */
    int64_t shape_output[SPART_CONVOLVE_DEVICE_MAX_NDIM]; /* cells along each */
    int64_t shape_kernel[SPART_CONVOLVE_DEVICE_MAX_NDIM]; /* kernel length along each */
    int64_t row_strides[SPART_CONVOLVE_DEVICE_MAX_NDIM];  /* doubles between the kernels of
                                                             neighbouring cells (0: shared) */
    int64_t size_kernel;                                  /* elements of one kernel */
    const double *kernel;                                 /* the whole kernel array */
    const int64_t *element_base;                          /* per element: its kernel's offset */
    const unsigned char *dense; /* per kernel: nonzero when it has no zero */
} spart_device_convolve_layout;

/* The entries to convolve, in device memory. */
typedef struct spart_device_convolve_entries {
    int64_t num_elements;
    int64_t num_entries;    /* offsets[num_elements] */
    const int64_t *offsets; /* num_elements + 1 */
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
} spart_device_convolve_entries;

/* The convolved entries, in device memory allocated with cudaMallocAsync
 * on the stream of the call (free with cudaFreeAsync, or hand them to a
 * device assembly as spart_device_entries). */
typedef struct spart_device_convolve_result {
    int64_t num_entries;
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
} spart_device_convolve_result;

/* Convolve `entries` with the kernels `layout` describes. Fills the host
 * array result_offsets (num_elements + 1: where each element's entries
 * start in the result) and `result`. Returns the cudaError_t of the first
 * call that failed (0: cudaSuccess); on failure `result` holds no memory. */
int spart_cuda_weights_convolve(const spart_device_convolve_layout *layout,
                                const spart_device_convolve_entries *entries,
                                int64_t *result_offsets, spart_device_convolve_result *result,
                                void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_WEIGHTS_CONVOLVE_DEVICE_H */
