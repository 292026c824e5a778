/*
 * kernels/weights_values.cu: the values of weights on a device rewritten
 * entry by entry: scaled by per-cell factors, or conservatively
 * transposed. The twin of the loops of src/weights/weights_scale.c and
 * src/weights/weights_transpose.c; the arithmetic is
 * src/weights/weights_values.h's, compiled for both (with --fmad=false the
 * product and the quotient round as on the host). A thread an entry, each
 * entry its own: no order, no atomics. Enqueued on the caller's stream.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "weights/weights_values.h"

#include "launch.cuh"

namespace
{

__global__ void scale_values(double *values, const int64_t *indices_input,
                             const int64_t *indices_output, int64_t n, const double *factor_input,
                             const double *factor_output)
{
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        double a = factor_input != nullptr ? factor_input[indices_input[k]] : 1.0;
        double b = factor_output != nullptr ? factor_output[indices_output[k]] : 1.0;
        values[k] = spart_weights_scaled_value(values[k], a, b);
    }
}

__global__ void transpose_values(const int64_t *indices_input, const int64_t *indices_output,
                                 const double *values, int64_t n, const double *factor_input,
                                 const double *volume_output, int64_t *out_input,
                                 int64_t *out_output, double *out_values)
{
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        int64_t i = indices_input[k];
        int64_t o = indices_output[k];
        out_input[k] = o;
        out_output[k] = i;
        out_values[k] =
            spart_weights_transposed_value(values[k], factor_input[i], volume_output[o]);
    }
}

} // namespace

extern "C" int spart_cuda_weights_scale_values(double *values, const int64_t *indices_input,
                                               const int64_t *indices_output, int64_t n,
                                               const double *factor_input,
                                               const double *factor_output, void *stream)
{
    return (int)spart_launch::launch_items(scale_values, n, (cudaStream_t)stream, values,
                                           indices_input, indices_output, n, factor_input,
                                           factor_output);
}

extern "C" int
spart_cuda_weights_transpose_values(const int64_t *indices_input, const int64_t *indices_output,
                                    const double *values, int64_t n, const double *factor_input,
                                    const double *volume_output, int64_t *out_input,
                                    int64_t *out_output, double *out_values, void *stream)
{
    return (int)spart_launch::launch_items(transpose_values, n, (cudaStream_t)stream, indices_input,
                                           indices_output, values, n, factor_input, volume_output,
                                           out_input, out_output, out_values);
}
