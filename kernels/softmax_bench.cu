/*
 * kernels/softmax_bench.cu: the segmented softmax benchmark's second floor
 * (tests/bench/bench_softmax.py, through ctypes; not API): a pass that
 * computes one exponential a value, timed beside the softmax.
 */
#include "softmax.cuh"
#include "softmax/softmax_exp.h"

using namespace spart_softmax;

namespace
{
/* The benchmark's second floor: one pass that reads each float32 score,
 * computes spart_exp of it in double once and writes it rounded, as a
 * softmax that computes every term once at the copy rate would (its
 * arithmetic without the rows). */
__device__ const double exp_table[64] = SPART_SOFTMAX_EXP_TABLE;

template <bool SHORT> __global__ void exp_pass(const float *scores, float *out, int64_t count)
{
    for (int64_t i = spart_launch::first_item(); i < count; i += spart_launch::item_stride()) {
        const double x = (double)scores[i];
        out[i] = (float)(SHORT ? spart_softmax_exp_float32(x, exp_table) : spart_exp(x));
    }
}
} // namespace

extern "C" __attribute__((visibility("default"))) int
spart_softmax_bench_exp_pass(const float *scores, float *out, int64_t count, int shorter,
                             void *stream)
{
    return (int)(shorter ? spart_launch::launch_items(exp_pass<true>, count, (cudaStream_t)stream,
                                                      scores, out, count)
                         : spart_launch::launch_items(exp_pass<false>, count, (cudaStream_t)stream,
                                                      scores, out, count));
}
