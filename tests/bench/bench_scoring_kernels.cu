/*
 * tests/bench/bench_scoring_kernels.cu: the device side of bench_scoring.c:
 *   - the unfused baseline: the fused call's arithmetic (kernels/scoring.cuh,
 *     the same bits) as separate launches, each of the fused launch's block
 *     size (256 threads) and block count: norms (cosine only: |c|^2 and
 *     |q|^2 of every row into memory), scores (the dots, the logits from
 *     the stored norms), chunk sums, probabilities;
 *   - the cuBLAS baseline's norms and softmax after its strided-batched
 *     GEMV: float32 (or float64) arithmetic as a user would write it (a
 *     warp a row for the norms, a block a question for the softmax with
 *     expf and a block reduction), not the fused call's bits;
 *   - an empty kernel (the launch floor), a cooperative kernel that only
 *     crosses one grid barrier (the grid layout's floor), and the fill of
 *     the inputs on the device (uniform in [-1, 1] from a hash of the index).
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "core/exp_math.h"
#include "scoring/scoring_kernels.h"
#include "../../kernels/scoring.cuh"

using namespace spart_scoring;

namespace
{

__global__ void empty_kernel() {}

/* The grid layout's floor: a cooperative kernel of 256-thread blocks that
 * only crosses one grid barrier. */
__global__ void barrier_kernel()
{
    cooperative_groups::this_grid().sync();
}

template <typename T> __global__ void fill_kernel(T *x, int64_t n, uint64_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15ull + seed;
        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
        x[i] = (T)((double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

/* Unfused 1: |c|^2 of every candidate row (norms[t K + k]) and |q|^2 of
 * every query (norms[Q K + t]), a warp a row. */
template <typename T>
__global__ void __launch_bounds__(threads_per_block) norms_kernel(view p, double *norms)
{
    const int64_t nq = p.num_question, nk = p.num_candidate, d = p.dimension;
    const int64_t warps = (int64_t)gridDim.x * warps_per_block;
    for (int64_t item = (int64_t)blockIdx.x * warps_per_block + threadIdx.x / 32;
         item < nq * nk + nq; item += warps) {
        const T *row = item < nq * nk ? static_cast<const T *>(p.candidates) + item * d
                                      : static_cast<const T *>(p.query) + (item - nq * nk) * d;
        double dot = 0.0, cc = 0.0, qq = 0.0;
        /* |row|^2 in the lane order: the squares of the "candidate" */
        row_sums<T, false, true, 1>(p, row, row, 1, &dot, &cc, &qq);
        if ((threadIdx.x & 31u) == 0) {
            norms[item] = cc;
        }
    }
}

/* Unfused 2: the logits from the dots and the stored norms, a warp a
 * candidate. */
template <typename T, bool COSINE>
__global__ void __launch_bounds__(threads_per_block)
    scores_kernel(view p, const double *norms, double *z)
{
    const int64_t nq = p.num_question, nk = p.num_candidate, d = p.dimension;
    const int64_t warps = (int64_t)gridDim.x * warps_per_block;
    for (int64_t item = (int64_t)blockIdx.x * warps_per_block + threadIdx.x / 32; item < nq * nk;
         item += warps) {
        const int64_t t = item / nk;
        const T *query = static_cast<const T *>(p.query) + t * d;
        const T *row = static_cast<const T *>(p.candidates) + item * d;
        double dot = 0.0, cc = 0.0, qq = 0.0;
        row_sums<T, true, false, 1>(p, query, row, 1, &dot, &cc, &qq);
        if ((threadIdx.x & 31u) == 0) {
            const double qn = COSINE ? norms[nq * nk + t] : 0.0;
            const double cn = COSINE ? norms[item] : 0.0;
            z[item] = spart_scoring_logit(dot, qn, cn, COSINE, p.scale, p.temperature);
        }
    }
}

/* Unfused 3: the chunks' maxima and sums, a block a (question, chunk). */
__global__ void __launch_bounds__(threads_per_block)
    chunks_kernel(view p, const double *z, double *stats)
{
    __shared__ block_scratch s;
    const int64_t nq = p.num_question, nk = p.num_candidate;
    const int64_t chunks = spart_scoring_num_chunks(nk);
    for (int64_t item = blockIdx.x; item < nq * chunks; item += gridDim.x) {
        const int64_t t = item / chunks, c = item % chunks;
        const int64_t first = c * SPART_SCORING_CHUNK;
        const int64_t n = nk - first < SPART_SCORING_CHUNK ? nk - first : SPART_SCORING_CHUNK;
        chunk_sums(z + t * nk + first, n, stats + 2 * item, &s);
    }
}

/* Unfused 4: the totals and the probabilities, a block a (question,
 * chunk). */
template <typename T>
__global__ void __launch_bounds__(threads_per_block)
    probabilities_kernel(view p, const double *z, const double *stats)
{
    __shared__ block_scratch s;
    const int64_t nq = p.num_question, nk = p.num_candidate;
    const int64_t chunks = spart_scoring_num_chunks(nk);
    for (int64_t item = blockIdx.x; item < nq * chunks; item += gridDim.x) {
        const int64_t t = item / chunks, c = item % chunks;
        double m = 0.0, sum = 0.0;
        question_total(stats + 2 * t * chunks, chunks, &s, &m, &sum);
        const int64_t first = c * SPART_SCORING_CHUNK;
        const int64_t end = first + SPART_SCORING_CHUNK < nk ? first + SPART_SCORING_CHUNK : nk;
        write_probabilities<T>(p, z + t * nk, t, first, end, m, sum);
    }
}

template <typename T>
cudaError_t unfused_typed(const spart_scoring_problem *problem, double *scratch, unsigned blocks,
                          cudaStream_t stream)
{
    const view p = view_of(problem);
    const int64_t pairs = p.num_question * p.num_candidate;
    double *norms = scratch;
    double *z = norms + pairs + p.num_question;
    double *stats = z + pairs;
    if (problem->cosine) {
        norms_kernel<T><<<blocks, threads_per_block, 0, stream>>>(p, norms);
        scores_kernel<T, true><<<blocks, threads_per_block, 0, stream>>>(p, norms, z);
    } else {
        scores_kernel<T, false><<<blocks, threads_per_block, 0, stream>>>(p, norms, z);
    }
    chunks_kernel<<<blocks, threads_per_block, 0, stream>>>(p, z, stats);
    probabilities_kernel<T><<<blocks, threads_per_block, 0, stream>>>(p, z, stats);
    return cudaGetLastError();
}

/* cuBLAS baseline: row norms in the arrays' type, a warp a row. */
template <typename T>
__global__ void plain_norms_kernel(const T *rows, int64_t n, int64_t d, T *norms)
{
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < n;
         r += warps) {
        T sum = 0;
        for (int64_t i = threadIdx.x & 31u; i < d; i += 32) {
            const T v = rows[r * d + i];
            sum += v * v;
        }
        for (int h = 16; h >= 1; h /= 2) {
            sum += __shfl_down_sync(0xffffffffu, sum, h);
        }
        if ((threadIdx.x & 31u) == 0) {
            norms[r] = sqrt(sum);
        }
    }
}

template <typename T> __device__ T plain_exp(T x);
template <> __device__ float plain_exp<float>(float x)
{
    return expf(x);
}
template <> __device__ double plain_exp<double>(double x)
{
    return exp(x);
}

/* cuBLAS baseline: logits from the GEMV's dots (and the norms), then the
 * softmax, a block a question. */
template <typename T>
__global__ void plain_softmax_kernel(const T *dots, const T *candidate_norms, const T *query_norms,
                                     int64_t nq, int64_t nk, T factor, int cosine, T *probabilities)
{
    __shared__ T part[32];
    for (int64_t t = blockIdx.x; t < nq; t += gridDim.x) {
        const T *row = dots + t * nk;
        T *out = probabilities + t * nk;
        const T floor = (T)1e-12;
        const T qn = cosine ? fmax(query_norms[t], floor) : (T)1;
        T m = -INFINITY;
        for (int64_t k = threadIdx.x; k < nk; k += blockDim.x) {
            const T cn = cosine ? fmax(candidate_norms[t * nk + k], floor) : (T)1;
            const T z = row[k] / (qn * cn) * factor;
            out[k] = z;
            m = fmax(m, z);
        }
        for (int h = 16; h >= 1; h /= 2) {
            m = fmax(m, __shfl_down_sync(0xffffffffu, m, h));
        }
        if ((threadIdx.x & 31u) == 0) {
            part[threadIdx.x / 32] = m;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (unsigned w = 1; w < blockDim.x / 32; w++) {
                part[0] = fmax(part[0], part[w]);
            }
        }
        __syncthreads();
        m = part[0];
        __syncthreads();
        T sum = 0;
        for (int64_t k = threadIdx.x; k < nk; k += blockDim.x) {
            const T e = plain_exp<T>(out[k] - m);
            out[k] = e;
            sum += e;
        }
        for (int h = 16; h >= 1; h /= 2) {
            sum += __shfl_down_sync(0xffffffffu, sum, h);
        }
        if ((threadIdx.x & 31u) == 0) {
            part[threadIdx.x / 32] = sum;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (unsigned w = 1; w < blockDim.x / 32; w++) {
                part[0] += part[w];
            }
        }
        __syncthreads();
        const T inverse = (T)1 / part[0];
        for (int64_t k = threadIdx.x; k < nk; k += blockDim.x) {
            out[k] = out[k] * inverse;
        }
        __syncthreads();
    }
}

} // namespace

extern "C" int bench_scoring_empty(void *stream)
{
    empty_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>();
    return (int)cudaGetLastError();
}

extern "C" int bench_scoring_empty_grid(int64_t blocks, void *stream)
{
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(threads_per_block);
    config.gridDim = dim3((unsigned)blocks);
    config.stream = static_cast<cudaStream_t>(stream);
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&config, barrier_kernel);
}

extern "C" int bench_scoring_fill(void *x, int64_t n, int float32, uint64_t seed, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (float32) {
        fill_kernel<float><<<4096, 256, 0, s>>>(static_cast<float *>(x), n, seed);
    } else {
        fill_kernel<double><<<4096, 256, 0, s>>>(static_cast<double *>(x), n, seed);
    }
    return (int)cudaGetLastError();
}

/* Float64 values of scratch the unfused baseline needs: norms (Q K + Q),
 * logits (Q K), chunk sums. */
extern "C" int64_t bench_scoring_unfused_values(const spart_scoring_problem *problem)
{
    const int64_t pairs = problem->num_question * problem->num_candidate;
    return 2 * pairs + problem->num_question +
           2 * problem->num_question * spart_scoring_num_chunks(problem->num_candidate);
}

extern "C" int bench_scoring_unfused(const spart_scoring_problem *problem, double *scratch,
                                     int64_t blocks, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    return (int)(problem->float32 ? unfused_typed<float>(problem, scratch, (unsigned)blocks, s)
                                  : unfused_typed<double>(problem, scratch, (unsigned)blocks, s));
}

/* The cuBLAS baseline's kernels after its GEMV wrote the dots into
 * `dots` (Q K of the arrays' type); `norms` holds Q K + Q of that type. */
extern "C" int bench_scoring_plain_softmax(const spart_scoring_problem *problem, void *dots,
                                           void *norms, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int64_t nq = problem->num_question, nk = problem->num_candidate;
    const int64_t d = problem->dimension, pairs = nq * nk;
    const int64_t rows = pairs + nq;
    const unsigned norm_blocks = (unsigned)(rows / 8 + 1 < 65536 ? rows / 8 + 1 : 65536);
    const unsigned question_blocks = (unsigned)(nq < 65536 ? nq : 65536);
    const double factor = problem->scale / problem->temperature;
    if (problem->float32) {
        float *n = static_cast<float *>(norms);
        if (problem->cosine) {
            plain_norms_kernel<float><<<norm_blocks, 256, 0, s>>>(
                static_cast<const float *>(problem->candidates), pairs, d, n);
            plain_norms_kernel<float><<<norm_blocks, 256, 0, s>>>(
                static_cast<const float *>(problem->query), nq, d, n + pairs);
        }
        plain_softmax_kernel<float><<<question_blocks, 256, 0, s>>>(
            static_cast<const float *>(dots), n, n + pairs, nq, nk, (float)factor, problem->cosine,
            static_cast<float *>(problem->probabilities));
    } else {
        double *n = static_cast<double *>(norms);
        if (problem->cosine) {
            plain_norms_kernel<double><<<norm_blocks, 256, 0, s>>>(
                static_cast<const double *>(problem->candidates), pairs, d, n);
            plain_norms_kernel<double><<<norm_blocks, 256, 0, s>>>(
                static_cast<const double *>(problem->query), nq, d, n + pairs);
        }
        plain_softmax_kernel<double><<<question_blocks, 256, 0, s>>>(
            static_cast<const double *>(dots), n, n + pairs, nq, nk, factor, problem->cosine,
            static_cast<double *>(problem->probabilities));
    }
    return (int)cudaGetLastError();
}
