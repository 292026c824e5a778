/*
 * src/weights/weights_device_build.h: what the two files of the CUDA table
 * of building weights share (src/weights/weights_device_cuda.c: the
 * driver, the scratch, the weights object, the host fallback, the copy
 * back; src/weights/weights_device_builders_cuda.c: the device builders,
 * element by element or in batches): everything one device build holds,
 * and the helpers that lay an element out and copy it to the device.
 * Included by those two files alone (CUDA builds).
 */
#ifndef SPART_WEIGHTS_DEVICE_BUILD_H
#define SPART_WEIGHTS_DEVICE_BUILD_H

#include <cuda_runtime_api.h>

#include "device/upload_cuda.h"
#include "weights/weights_build.h"
#include "weights/weights_device.h"
#include "weights/weights_internal.h"

extern const char *const spart_wdev_what; /* "weights_build_device", for sentences */

/* Conservative 1-D builds elements in batches of at most
 * spart_wdev_batch_words 8-byte words of grids and counts (by default
 * BATCH_WORDS, 256 MiB: larger batches gain nothing). A variable
 * only so that tests reach several batches with small problems
 * (test_cuda_weights sets it, then restores it); nothing else writes it. */
extern int64_t spart_wdev_batch_words;

#define BATCH_WORDS ((int64_t)1 << 25)

/* Everything one device build holds. */
typedef struct device_build {
    spart_context *context;
    cudaStream_t stream;
    const spart_weights_options *options;
    const spart_array *coordinates_input;
    const spart_array *coordinates_output;
    spart_weights_layout layout;
    spart_weights shell; /* shapes and axes of the result (no arrays) */
    int conservative;
    int corners; /* multilinear: 2^N entries a point */
    spart_shape full_values;
    int64_t strides_values[SPART_MAX_NDIM];
    int64_t size_values; /* weights_input of one element */
    int64_t units;       /* conservative 1-D: input cells of one element */
    int64_t batch;       /* conservative 1-D: elements built at once (else 1) */
    int grids_on_device; /* the caller's grids (and weights_input) are device
                            memory, read in place (spart_weights_build_device_grids) */
    int shared_input;    /* every element shares the input grid */
    int shared_output;   /* likewise the output grid */
    int64_t *picked;     /* conservative 1-D: each batch element's first entry */
    /* values of each output coordinate spart_wdev_upload_element copies
     * (0: all): a lattice's kernel reads only its origin and steps,
     * x[0], x[num_y], y[0], y[1] (kernels/weights_conservative_2d_lattice.cu),
     * so only the first num_y + 1 values of each are copied */
    int64_t output_values;
    /* two pinned buffers the uploads go through when the build copies
     * much (spart_wdev_stager_for; else plain copies) */
    spart_stager stager;
    /* host space for gathering one element (coordinates, weights_input) */
    double *host;
    /* device scratch, one stream-ordered allocation */
    void *scratch;
    double *input[3];
    double *output[3];
    double *weights_input;
    double *profiles;
    int64_t *counts;
    int64_t *starts;
    int64_t *outside; /* multilinear: per element */
    void *work;
    size_t work_bytes;
    /* the result's entries, device memory (cudaMalloc) */
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
    int64_t capacity;
    int64_t *offsets; /* host, num_elements + 1 */
} device_build;

/* One side's coordinates of the element at orthogonal index `index` on the
 * host, as the host driver reads them: in place where dense, else gathered
 * into `space`; returns the space left. */
double *spart_wdev_host_side(const spart_weights_layout *l, int output,
                             const spart_array *coordinates, const int64_t *index, double *space,
                             const double **blocks);

/* A stream-ordered copy of host memory to the device, through the
 * stager's pinned buffers when it has them (s may be NULL: a plain copy);
 * the host memory may be reused once the call returns. */
cudaError_t spart_wdev_upload(spart_stager *s, void *device, const void *host, size_t bytes,
                              cudaStream_t stream);

/* Open `s` with two pinned buffers when `bytes` (what a call will copy to
 * the device in all) is large enough for the pinned rate to pay for
 * their allocation (512 MiB or more: in round 9 on the H200 machine
 * staging 84-126 MB slowed the builds of the 256^2 tutorial and the 285^2
 * ESIS slice against round 8's plain copies, while the GB-sized copies of
 * full-size ESIS planes gained), else with none (plain copies). */
cudaError_t spart_wdev_stager_for(spart_stager *s, double bytes, int threads);

/* Lay element e out on the host and copy it to the device: its input grid
 * (unless `input_ready`), its output grid and its weights_input; with
 * grids on the device, point the build at the element's blocks of the
 * caller's device arrays instead (no copy; the caller checked that every
 * block lies in place). */
cudaError_t spart_wdev_upload_element(device_build *b, int64_t e, int input_ready,
                                      const double **host_input, const double **host_output);

/* Make room for `needed` entries in the device arrays, keeping the first
 * `kept`; grows to at least twice the capacity. */
cudaError_t spart_wdev_reserve_entries(device_build *b, int64_t needed, int64_t kept);

/* The entry arrays from entry `first` on. */
spart_device_entries_out spart_wdev_entries_at(const device_build *b, int64_t first);

/* The element the scratch holds, as the kernels take it. */
spart_device_element spart_wdev_element_of(const device_build *b);

/* Free the device entries of weights made on a device (their
 * release_device), on their device. */
void spart_wdev_release_entries(spart_weights *weights);

/* The CUDA table's build (src/weights/weights_device_cuda.c), from host
 * grids or (grids_on_device) from the caller's device arrays, every block
 * of which lies in place: a conservative 2-D clip only. */
spart_status spart_wdev_build(spart_context *context, int num_coordinates,
                              const spart_array *coordinates_input,
                              const spart_array *coordinates_output,
                              const spart_weights_options *options, int grids_on_device,
                              spart_weights **weights);

/* Whether every element's output grid is a lattice, decided on the device
 * for grids in device memory (src/weights/weights_device_grids_cuda.c,
 * kernels/weights_check.cu: spart_host_grid_is_lattice's tests). */
spart_status spart_wdev_outputs_are_lattices_on_device(device_build *b, int *lattice);

/* The builders (src/weights/weights_device_builders_cuda.c): every element
 * on the device, the offsets filled in; *unsupported set (and nothing
 * kept) when a grid is one the device does not take (the host builds the
 * problem then). */
spart_status spart_wdev_build_multilinear(device_build *b, int *unsupported);
spart_status spart_wdev_build_conservative_1d(device_build *b, int *unsupported);
spart_status spart_wdev_build_clip_2d(device_build *b);

#endif /* SPART_WEIGHTS_DEVICE_BUILD_H */
