/*
 * kernels/scoring.cu: candidate scoring on a CUDA device, twin of
 * host/scoring.c (the order of operations in
 * src/scoring/scoring_kernels.h). One launch a call, on the caller's
 * stream, no atomics, no allocation, no wait.
 *
 * Two layouts, the same bits (every value is made in the contract's
 * order whoever makes it):
 *   - BLOCK: a block a question (grid-stride over questions). Its warps
 *     score the candidates (a warp a candidate, or two or four at once
 *     sharing the query's loads) into shared memory, then the block takes each
 *     chunk's maximum and its exponentials, warp 0 sums them in the lane
 *     order, thread 0 the chunks in chunk order, and the block writes the
 *     probabilities. For K <= SPART_SCORING_BLOCK_MAX_K.
 *   - GRID: one cooperative kernel whose phases are split by grid
 *     barriers, so that one question fills the whole GPU: (1) every warp
 *     of the grid scores candidates of any question into the workspace;
 *     (2) a block a (question, chunk) takes the chunk's maximum and sum;
 *     (3) a block a (question, chunk) takes the question's total from its
 *     chunks and writes the chunk's probabilities.
 * Cooperative launches are recorded in CUDA graphs as one kernel node.
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <atomic>

#include <math.h>
#include <stdint.h>

#define SPART_MATH_FUNCTION static __host__ __device__ inline
#include "core/exp_math.h"
#include "scoring/scoring_kernels.h"
#include "scoring.cuh"

namespace
{

using namespace spart_scoring;

template <typename T, bool COSINE, int ROWS>
__global__ void __launch_bounds__(threads_per_block, sizeof(T) == 4 ? 2 : 1) block_kernel(view p)
{
    __shared__ double z[SPART_SCORING_BLOCK_MAX_K];
    __shared__ double stats[2 * (SPART_SCORING_BLOCK_MAX_K / SPART_SCORING_CHUNK)];
    /* the walking warps' sums while scoring, the softmax's scratch after */
    __shared__ union {
        block_scratch s;
        walk_scratch w;
    } shared;
    block_scratch &s = shared.s;
    const int64_t nk = p.num_candidate;
    const int64_t chunks = spart_scoring_num_chunks(nk);
    const int warp = (int)(threadIdx.x / 32);
    for (int64_t t = blockIdx.x; t < p.num_question; t += gridDim.x) {
        score_range<T, COSINE, ROWS>(p, t, 0, nk, warp, warps_per_block, z, shared.w.sums[warp]);
        __syncthreads();
        if (nk <= 32) { /* one warp's softmax, no more block barriers */
            if (threadIdx.x < 32) {
                warp_softmax<T>(p, z, t);
            }
            __syncthreads(); /* z is the next question's */
            continue;
        }
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t first = c * SPART_SCORING_CHUNK;
            const int64_t n = nk - first < SPART_SCORING_CHUNK ? nk - first : SPART_SCORING_CHUNK;
            chunk_sums(z + first, n, stats + 2 * c, &s);
        }
        if (chunks == 1) {
            write_one_chunk<T>(p, z, t, &s);
        } else {
            double m = 0.0, sum = 0.0;
            question_total(stats, chunks, &s, &m, &sum);
            write_probabilities<T>(p, z, t, 0, nk, m, sum);
        }
        __syncthreads(); /* z and s->e are the next question's */
    }
}

template <typename T, bool COSINE, int ROWS>
__global__ void __launch_bounds__(threads_per_block, sizeof(T) == 4 ? 2 : 1)
    grid_kernel(view p, double *workspace)
{
    /* phase 1's sums or partials, the softmax's scratch after */
    __shared__ union {
        block_scratch s;
        walk_scratch w;
        split_scratch parts;
    } shared;
    block_scratch &s = shared.s;
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int64_t nq = p.num_question, nk = p.num_candidate;
    const int64_t chunks = spart_scoring_num_chunks(nk);
    double *z = workspace;
    double *stats = workspace + nq * nk;

    if (ROWS == 1 && p.split) {
        /* (1) a block takes split_rows rows at a time, its warps their
         * (row, segment) units */
        const int64_t segments = spart_scoring_num_segments(p.dimension);
        const int g = split_rows(segments);
        const int64_t groups = (nk + g - 1) / g; /* a question's */
        for (int64_t item = blockIdx.x; item < nq * groups; item += gridDim.x) {
            const int64_t t = item / groups;
            const int64_t first = (item % groups) * g;
            const int count = nk - first < g ? (int)(nk - first) : g;
            score_rows_split<T, COSINE>(p, t, first, count, segments, &shared.parts, z + t * nk);
        }
    } else {
        /* (1) every warp of the grid takes ROWS candidates of a question at a time */
        const int64_t groups = (nk + ROWS - 1) / ROWS; /* a question's */
        const int64_t warps = (int64_t)gridDim.x * warps_per_block;
        for (int64_t item = (int64_t)blockIdx.x * warps_per_block + threadIdx.x / 32;
             item < nq * groups; item += warps) {
            const int64_t t = item / groups;
            const int64_t first = (item % groups) * ROWS;
            const int64_t end = first + ROWS < nk ? first + ROWS : nk;
            score_range<T, COSINE, ROWS>(p, t, first, end, 0, 1, z + t * nk,
                                         shared.w.sums[threadIdx.x / 32]);
        }
    }
    grid.sync();

    /* (2) a block a (question, chunk): its maximum and sum */
    if (nk <= 32) { /* a warp a question's softmax */
        for (int64_t t = (int64_t)blockIdx.x * warps_per_block + threadIdx.x / 32; t < nq;
             t += (int64_t)gridDim.x * warps_per_block) {
            warp_softmax<T>(p, z + t * nk, t);
        }
        return;
    }
    for (int64_t item = blockIdx.x; item < nq * chunks; item += gridDim.x) {
        const int64_t t = item / chunks, c = item % chunks;
        const int64_t first = c * SPART_SCORING_CHUNK;
        const int64_t n = nk - first < SPART_SCORING_CHUNK ? nk - first : SPART_SCORING_CHUNK;
        chunk_sums(z + t * nk + first, n, stats + 2 * item, &s);
        if (chunks == 1) { /* the question's total is its one chunk's: no barrier */
            write_one_chunk<T>(p, z + t * nk, t, &s);
            __syncthreads(); /* s->e is the next item's */
        }
    }
    if (chunks == 1) {
        return;
    }
    grid.sync();

    /* (3) a block a (question, chunk): the question's total, the chunk's
     * probabilities (stats are only read from here on) */
    for (int64_t item = blockIdx.x; item < nq * chunks; item += gridDim.x) {
        const int64_t t = item / chunks, c = item % chunks;
        double m = 0.0, sum = 0.0;
        question_total(stats + 2 * t * chunks, chunks, &s, &m, &sum);
        const int64_t first = c * SPART_SCORING_CHUNK;
        const int64_t end = first + SPART_SCORING_CHUNK < nk ? first + SPART_SCORING_CHUNK : nk;
        write_probabilities<T>(p, z + t * nk, t, first, end, m, sum);
    }
}

/* How the warps take rows: `rows` when the caller asks (1, 2 or 4 rows a
 * warp, or SPART_SCORING_ROWS_SPLIT: on the GRID path a block's warps
 * share rows, a segment each, for 2 to 32 segments a row); else split on
 * the GRID path when the call has at most split_most_units (row, segment)
 * units, rows of 2 to 32 segments (so that few long rows still fill the
 * device: (255, 2560, 1) is 2,550 units), four rows a warp when there are
 * enough rows for every warp of the device, one otherwise. Measured on an
 * H200 (tests/bench/bench_scoring.c, docs/dev/scoring-notes.md): four rows
 * were fastest on every shape of 16,384 rows or more (D from 256 to
 * 2,560), one row on every smaller one; split faster than one row a warp
 * at 510 and 2,550 units (6.17 / 7.46 us against 6.36 / 9.93), slower at
 * 4,080 ((255, 512, 8): 8.80 against 7.25). The bits are the same for
 * any. */
constexpr int64_t split_most_units = 3072;
int rows_for(const spart_scoring_problem *problem, int path, int rows)
{
    const int64_t segments = spart_scoring_num_segments(problem->dimension);
    const bool can_split = path == SPART_SCORING_PATH_GRID && segments >= 2 && segments <= 32;
    if (rows == SPART_SCORING_ROWS_SPLIT) {
        return can_split ? SPART_SCORING_ROWS_SPLIT : 1;
    }
    if (rows == 1 || rows == 2 || rows == 4) {
        return rows;
    }
    const int64_t all = problem->num_question * problem->num_candidate;
    if (can_split && all * segments <= split_most_units) {
        return SPART_SCORING_ROWS_SPLIT;
    }
    return all >= 16384 ? 4 : 1;
}

/* Blocks of the grid kernel of one (type, similarity, rows) resident on
 * a multiprocessor of `device`: asked of the runtime once a device and
 * kept (the occupancy query was a measurable part of a small call's host
 * time); devices past the 32nd are asked every time. */
template <typename T, bool COSINE, int ROWS>
cudaError_t resident_blocks(int device, int *per_multiprocessor)
{
    static std::atomic<int> known[32]; /* 0: not asked yet */
    if (device >= 0 && device < 32) {
        const int blocks = known[device].load(std::memory_order_relaxed);
        if (blocks > 0) {
            *per_multiprocessor = blocks;
            return cudaSuccess;
        }
    }
    const cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        per_multiprocessor, grid_kernel<T, COSINE, ROWS>, threads_per_block, 0);
    if (error == cudaSuccess && device >= 0 && device < 32) {
        known[device].store(*per_multiprocessor, std::memory_order_relaxed);
    }
    return error;
}

/* The blocks a launch of one (type, similarity, rows) takes: a block a
 * question (at most 2^20, striding beyond), or for the cooperative grid
 * kernel as many as its phases can use, at most all that are resident at
 * once. */
template <typename T, bool COSINE, int ROWS>
cudaError_t blocks_for(const spart_scoring_problem *problem, int path, bool split, int64_t *blocks)
{
    if (path == SPART_SCORING_PATH_BLOCK) {
        const int64_t most = (int64_t)1 << 20;
        *blocks = problem->num_question < most ? problem->num_question : most;
        return cudaSuccess;
    }
    int device = 0, multiprocessors = 0, per_multiprocessor = 0;
    cudaError_t error = cudaGetDevice(&device);
    if (error == cudaSuccess) {
        error = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    }
    if (error == cudaSuccess) {
        error = resident_blocks<T, COSINE, ROWS>(device, &per_multiprocessor);
    }
    if (error != cudaSuccess) {
        return error;
    }
    const int64_t resident = (int64_t)multiprocessors * per_multiprocessor;
    int64_t score_blocks = 0;
    if (split) {
        const int g = split_rows(spart_scoring_num_segments(problem->dimension));
        score_blocks = problem->num_question * ((problem->num_candidate + g - 1) / g);
    } else {
        const int64_t groups = (problem->num_candidate + ROWS - 1) / ROWS;
        score_blocks = (problem->num_question * groups + warps_per_block - 1) / warps_per_block;
    }
    const int64_t chunk_blocks =
        problem->num_question * spart_scoring_num_chunks(problem->num_candidate);
    int64_t wanted = score_blocks > chunk_blocks ? score_blocks : chunk_blocks;
    wanted = wanted < resident ? wanted : resident;
    *blocks = wanted > 0 ? wanted : 1;
    return cudaSuccess;
}

/* The kernel of one (type, similarity, rows), launched. */
template <typename T, bool COSINE, int ROWS>
cudaError_t launch_typed(const spart_scoring_problem *problem, double *workspace, int path,
                         bool split, cudaStream_t stream, int64_t *blocks_out)
{
    int64_t blocks = 0;
    cudaError_t error = blocks_for<T, COSINE, ROWS>(problem, path, split, &blocks);
    if (error != cudaSuccess || blocks_out != nullptr) {
        if (blocks_out != nullptr) {
            *blocks_out = blocks;
        }
        return error;
    }
    view p = view_of(problem);
    p.split = split;
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(threads_per_block);
    config.gridDim = dim3((unsigned)blocks);
    config.stream = stream;
    if (path == SPART_SCORING_PATH_BLOCK) {
        return cudaLaunchKernelEx(&config, block_kernel<T, COSINE, ROWS>, p);
    }
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, grid_kernel<T, COSINE, ROWS>, p, workspace);
}

/* blocks_out NULL: launch; else only say how many blocks it would take. */
template <typename T, bool COSINE>
cudaError_t launch_rows(const spart_scoring_problem *problem, double *workspace, int path, int rows,
                        cudaStream_t stream, int64_t *blocks_out)
{
    switch (rows_for(problem, path, rows)) {
    case SPART_SCORING_ROWS_SPLIT:
        return launch_typed<T, COSINE, 1>(problem, workspace, path, true, stream, blocks_out);
    case 4: return launch_typed<T, COSINE, 4>(problem, workspace, path, false, stream, blocks_out);
    case 2: return launch_typed<T, COSINE, 2>(problem, workspace, path, false, stream, blocks_out);
    default: return launch_typed<T, COSINE, 1>(problem, workspace, path, false, stream, blocks_out);
    }
}

cudaError_t launch_any(const spart_scoring_problem *problem, double *workspace, int path, int rows,
                       cudaStream_t stream, int64_t *blocks_out)
{
    if (problem->float32) {
        return problem->cosine
                   ? launch_rows<float, true>(problem, workspace, path, rows, stream, blocks_out)
                   : launch_rows<float, false>(problem, workspace, path, rows, stream, blocks_out);
    }
    return problem->cosine
               ? launch_rows<double, true>(problem, workspace, path, rows, stream, blocks_out)
               : launch_rows<double, false>(problem, workspace, path, rows, stream, blocks_out);
}

} // namespace

extern "C" int spart_scoring_device_path(const spart_scoring_problem *problem, int path, int *error)
{
    *error = 0;
    if (problem->num_candidate > SPART_SCORING_BLOCK_MAX_K) {
        return SPART_SCORING_PATH_GRID;
    }
    if (path != SPART_SCORING_PATH_AUTO) {
        return path;
    }
    int device = 0, multiprocessors = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess) {
        status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    }
    if (status != cudaSuccess) {
        *error = (int)status;
        return -1;
    }
    /* A block a question when the questions fill the device, or when a
     * question has no more candidates than a block has warps (a warp a
     * row either way, and no grid barriers). */
    if (problem->num_question >= 2 * (int64_t)multiprocessors ||
        problem->num_candidate <= warps_per_block) {
        return SPART_SCORING_PATH_BLOCK;
    }
    return SPART_SCORING_PATH_GRID;
}

extern "C" int spart_scoring_device_launch_rows(const spart_scoring_problem *problem,
                                                double *workspace, int path, int rows, void *stream)
{
    int error = 0;
    path = spart_scoring_device_path(problem, path, &error);
    if (error != 0) {
        return error;
    }
    return (int)launch_any(problem, workspace, path, rows, static_cast<cudaStream_t>(stream),
                           nullptr);
}

extern "C" int spart_scoring_device_launch(const spart_scoring_problem *problem, double *workspace,
                                           int path, void *stream)
{
    return spart_scoring_device_launch_rows(problem, workspace, path, 0, stream);
}

extern "C" int spart_scoring_device_blocks(const spart_scoring_problem *problem, int path, int rows,
                                           int64_t *blocks)
{
    int error = 0;
    path = spart_scoring_device_path(problem, path, &error);
    if (error != 0) {
        return error;
    }
    return (int)launch_any(problem, nullptr, path, rows, nullptr, blocks);
}

extern "C" const char *spart_scoring_device_error_string(int error)
{
    return cudaGetErrorString(static_cast<cudaError_t>(error));
}
