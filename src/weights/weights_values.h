/*
 * src/weights/weights_values.h: the values of weights rewritten entry by
 * entry (spart_weights_scale, spart_weights_transpose_conservative), on
 * the host or on the device that holds the weights. The contract of the
 * twin: the host loops (src/weights/weights_scale.c,
 * src/weights/weights_transpose.c) and the CUDA kernels
 * (kernels/weights_values.cu, driven by src/weights/weights_values_cuda.c).
 *
 * The per-cell factors are always computed on the host, by the code that
 * computed them before weights could live on a device (the gather of a
 * factor array's block, the cell volumes of spart_weights_layout_*), so
 * the factors are the same bits wherever the weights are. Only the
 * per-entry arithmetic runs where the entries lie, written once here:
 *   scale:                   v' = (v * f_in[input]) * f_out[output]
 *                            (a side without a factor multiplies by 1.0,
 *                            as the host always did)
 *   conservative transpose:  v' = (v * F_in[input]) / V_out[output],
 *                            input and output indices swapped.
 * Host C is compiled with -ffp-contract=off and CUDA with --fmad=false, so
 * a product and a quotient round once each, the same on both sides. No
 * sums, no order: each entry is its own.
 */
#ifndef SPART_WEIGHTS_VALUES_H
#define SPART_WEIGHTS_VALUES_H

#include <stddef.h>
#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

SPART_MATH_FUNCTION double spart_weights_scaled_value(double value, double factor_input,
                                                      double factor_output)
{
    double v = value * factor_input;
    return v * factor_output;
}

SPART_MATH_FUNCTION double spart_weights_transposed_value(double value, double factor_input,
                                                          double volume_output)
{
    return (value * factor_input) / volume_output;
}

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the device entry points (kernels/weights_values.cu) ----------------
 * Enqueued on `stream`, nothing allocated or synchronised; the cudaError_t
 * as an int. Arrays are device memory; n entries from the pointers given
 * (the caller offsets them to an element's first entry). */

/* values[k] = scaled(values[k], factor_input[indices_input[k]] or 1.0,
 * factor_output[indices_output[k]] or 1.0) (a NULL factor: 1.0). */
int spart_cuda_weights_scale_values(double *values, const int64_t *indices_input,
                                    const int64_t *indices_output, int64_t n,
                                    const double *factor_input, const double *factor_output,
                                    void *stream);

/* The conservative transpose of n entries: out_input[k] = indices_output[k],
 * out_output[k] = indices_input[k], out_values[k] =
 * transposed(values[k], factor_input[indices_input[k]],
 * volume_output[indices_output[k]]). */
int spart_cuda_weights_transpose_values(const int64_t *indices_input, const int64_t *indices_output,
                                        const double *values, int64_t n, const double *factor_input,
                                        const double *volume_output, int64_t *out_input,
                                        int64_t *out_output, double *out_values, void *stream);

#ifdef __cplusplus
}
#endif

#if !defined(__CUDACC__)
#include "spart/weights.h"

/* The factors of one rewrite, computed on the host element by element:
 * `fill` writes element e's blocks (cells_input values into block_input,
 * cells_output into block_output; a NULL block is not wanted), using
 * scratch_doubles of `scratch`. It only reads shared state, so threads
 * may fill different elements at once. A side whose block is the same for
 * every element (shared_*) is filled once. */
typedef struct spart_weights_factors {
    int64_t num_elements;   /* of the result */
    const int64_t *source;  /* transpose: each result element's element of the weights */
    int64_t cells_input;    /* factors of one element's input side (0: none) */
    int64_t cells_output;   /* likewise its output side */
    int shared_input;       /* the input block is the same for every element */
    int shared_output;      /* likewise the output block */
    size_t scratch_doubles; /* per fill */
    void (*fill)(const void *user, int64_t element, double *scratch, double *block_input,
                 double *block_output);
    const void *user;
    /* Optional (NULL: none): a key of element e's block of one side, equal
     * keys meaning equal blocks (a factor broadcast along some orthogonal
     * axes: the block's offset in the factor array), so that a device
     * copies each distinct block once. */
    int64_t (*key_input)(const void *user, int64_t element);
    int64_t (*key_output)(const void *user, int64_t element);
} spart_weights_factors;

/* On the device that holds `weights` (src/weights/weights_values_cuda.c):
 * scale their values in place; make their conservative transpose (a new
 * object on the same device, offsets `offsets` of factors->num_elements
 * elements, shapes and axes of `shell`). Errors: SPART_ERROR_NO_DEVICE,
 * SPART_ERROR_OUT_OF_MEMORY (host or device), SPART_ERROR_INTERNAL. */
spart_status spart_weights_scale_on_device(spart_context *context, spart_weights *weights,
                                           const spart_weights_factors *factors);
spart_status spart_weights_transpose_on_device(spart_context *context, const spart_weights *weights,
                                               const spart_weights_factors *factors,
                                               spart_weights *shell, spart_weights **transposed);
#endif

#endif /* SPART_WEIGHTS_VALUES_H */
