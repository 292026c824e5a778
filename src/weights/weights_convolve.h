/*
 * src/weights/weights_convolve.h: the host kernel of spart_weights_convolve, shared
 * by src/weights/weights_convolve.c (checks, layout of the kernel) and
 * host/weights_convolve.c (the OpenMP loops).
 *
 * The work is split into runs, as regridding.convolve_weights splits it: a
 * run is a maximal stretch of consecutive entries of one element that share
 * an input cell. Each run is convolved in a scratch box (the bounding box of
 * its output cells grown by the kernel and clipped to the grid) and read out
 * in grid order. A first pass counts what every run becomes, a prefix sum
 * places the runs, and a second pass writes them, so the result is the same
 * for any thread count (no atomics).
 */
#ifndef SPART_WEIGHTS_CONVOLVE_H
#define SPART_WEIGHTS_CONVOLVE_H

#include "core/internal.h"
#include "spart/weights.h"

/* Where the kernel of every output cell of every element lives. */
typedef struct spart_convolve_layout {
    int ndim;                             /* resampled output axes */
    int64_t shape_output[SPART_MAX_NDIM]; /* cells along each of them */
    int64_t shape_kernel[SPART_MAX_NDIM]; /* kernel length along each */
    int64_t row_strides[SPART_MAX_NDIM];  /* doubles between the kernels of
                                             neighbouring cells; 0 for a
                                             kernel shared along the axis */
    const double *kernel;                 /* the caller's kernel array */
    const int64_t *element_base;          /* per element: the offset of its
                                             kernel (of output cell 0) */
    int64_t size_kernel;                  /* elements of one kernel */
    const unsigned char *dense;           /* per kernel (offset / size_kernel):
                                             nonzero when no element is zero */
} spart_convolve_layout;

/* The entries of all elements, concatenated, as a weights object holds. */
typedef struct spart_convolve_entries {
    int64_t num_elements;
    const int64_t *offsets; /* num_elements + 1 */
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
} spart_convolve_entries;

/* Everything a convolution needs once the kernel has been checked: the
 * result's shapes, where every kernel lives, and the entries it reads (the
 * weights' own, or copies broadcast along an orthogonal axis the kernel
 * varies along). Shared by spart_weights_convolve and the device path
 * (src/operator/weights_convolve_device.c). */
typedef struct spart_convolve_setup {
    spart_shape orthogonal; /* the result's orthogonal shape */
    spart_shape input;      /* the result's shape_input */
    spart_shape output;     /* the result's shape_output */
    spart_convolve_layout layout;
    spart_convolve_entries entries;
    int64_t *element_base; /* owned: layout.element_base */
    unsigned char *dense;  /* owned: layout.dense */
    void *owned_entries;   /* owned: the broadcast copies, or NULL */
} spart_convolve_setup;

/* Check `kernel` against `weights` as spart_weights_convolve does (the
 * same errors and sentences) and fill `setup`. context, weights and kernel
 * are not NULL. On failure nothing is left to release. */
spart_status spart_convolve_prepare(spart_context *context, const spart_weights *weights,
                                    const spart_array *kernel, spart_convolve_setup *setup);

/* Free what spart_convolve_prepare allocated. */
void spart_convolve_release(const spart_allocator *allocator, spart_convolve_setup *setup);

/* Count pass: run_sizes[w] = the number of entries the run starting at
 * entry w becomes (0 where no run starts). Returns nonzero when scratch
 * space could not be allocated. */
int spart_convolve_count_host(const spart_allocator *allocator, const spart_convolve_layout *layout,
                              const spart_convolve_entries *entries, int threads,
                              int64_t *run_sizes);

/* Write pass: the run starting at entry w is written from run_starts[w]
 * (an exclusive prefix sum of run_sizes over all entries). Returns nonzero
 * when scratch space could not be allocated. */
int spart_convolve_write_host(const spart_allocator *allocator, const spart_convolve_layout *layout,
                              const spart_convolve_entries *entries, int threads,
                              const int64_t *run_starts, int64_t *result_input,
                              int64_t *result_output, double *result_values);

#endif /* SPART_WEIGHTS_CONVOLVE_H */
