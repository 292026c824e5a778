/*
 * kernels/permute.cu: the tiled block permute on a CUDA device, twin of
 * host/permute.c (src/permute/permute_kernels.h). One launch for every
 * block: a thread block of SPART_PERMUTE_THREADS threads takes a tile at
 * a time (grid-stride over the plan's tiles, heaviest items first), finds
 * its item by a binary search over the tile starts, and for each term
 * gathers the tile into shared memory in source order (x fastest: the
 * source's contiguous axis) and reads it back in destination order (y
 * fastest for a transpose, so the writes are contiguous too). Tile extents
 * are powers of two: a thread's element of a tile comes from shifts and
 * masks. A transposed tile's rows are padded by one element, so a warp
 * reading down a column meets 32 distinct banks (complex elements move as
 * one float2/double2). Each thread keeps its elements' sums in registers,
 * adding the terms in the plan's order with __fma_rn, as the host does; no
 * atomics (each destination element belongs to one item and one thread);
 * beta = 0 never reads the destination.
 */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include "permute/permute_kernels.h"

namespace
{

constexpr int threads = SPART_PERMUTE_THREADS;

/* A real type's fma (correctly rounded, never contracted otherwise: the
 * kernels build with --fmad=false) and the element as shared memory holds
 * it: the real itself, or a float2/double2 pair for a complex one. */
__device__ __forceinline__ float fma_of(float a, float b, float c)
{
    return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double fma_of(double a, double b, double c)
{
    return __fma_rn(a, b, c);
}

template <typename real, int C> struct stored;
template <> struct stored<float, 1> {
    typedef float type;
};
template <> struct stored<double, 1> {
    typedef double type;
};
template <> struct stored<float, 2> {
    typedef float2 type;
};
template <> struct stored<double, 2> {
    typedef double2 type;
};

template <typename real> __device__ __forceinline__ real part(real v, int)
{
    return v;
}
__device__ __forceinline__ float part(float2 v, int c)
{
    return c == 0 ? v.x : v.y;
}
__device__ __forceinline__ double part(double2 v, int c)
{
    return c == 0 ? v.x : v.y;
}

template <typename real, int C>
__device__ __forceinline__ typename stored<real, C>::type load_element(const real *at,
                                                                       int conjugate)
{
    if constexpr (C == 1) {
        return *at;
    } else {
        typename stored<real, C>::type v;
        v.x = at[0];
        v.y = conjugate ? -at[1] : at[1];
        return v;
    }
}

/* Where a tile lies (the host's place_of_tile). */
struct tile_place {
    int64_t x0, y0, w, h, destination, rest[SPART_PERMUTE_REST_AXES];
};

__device__ __forceinline__ tile_place place_of_tile(const spart_permute_item &it, int64_t t)
{
    tile_place p;
    p.x0 = (t % it.tiles_x) << it.shift_x;
    t /= it.tiles_x;
    p.y0 = (t % it.tiles_y) << it.shift_y;
    t /= it.tiles_y;
#pragma unroll
    for (int r = SPART_PERMUTE_REST_AXES - 1; r >= 0; r--) { /* unrolled: rest stays in registers */
        p.rest[r] = 0;
        if (r < it.num_rest) {
            p.rest[r] = t % it.rest_size[r];
            t /= it.rest_size[r];
        }
    }
    int64_t tx = (int64_t)1 << it.shift_x, ty = (int64_t)1 << it.shift_y;
    p.w = it.size_x - p.x0 < tx ? it.size_x - p.x0 : tx;
    p.h = it.size_y - p.y0 < ty ? it.size_y - p.y0 : ty;
    p.destination =
        it.destination_offset + p.x0 * it.destination_stride_x + p.y0 * it.destination_stride_y;
#pragma unroll
    for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
        if (r < it.num_rest) {
            p.destination += p.rest[r] * it.destination_rest_stride[r];
        }
    }
    return p;
}

/* Element `i` of a tile in destination order into (x, v). */
__device__ __forceinline__ void write_position(const spart_permute_item &it, int i, int &x, int &v)
{
    if (it.write_y_first) {
        v = i & ((1 << it.shift_y) - 1);
        x = i >> it.shift_y;
    } else {
        x = i & ((1 << it.shift_x) - 1);
        v = i >> it.shift_x;
    }
}

/* dst = alpha * acc (beta = 0: dst not read), else fma(beta, dst, alpha *
 * acc); complex as the contract says. */
template <typename real, int C>
__device__ __forceinline__ void finish(real *d, const real *acc, const spart_permute_scalars &s)
{
    const real ar = (real)s.alpha[0], ai = (real)s.alpha[1];
    const real br = (real)s.beta[0], bi = (real)s.beta[1];
    if constexpr (C == 1) {
        const real t = ar * acc[0];
        d[0] = s.beta_zero ? t : fma_of(br, d[0], t);
    } else {
        const real t_re = fma_of(ar, acc[0], -(ai * acc[1]));
        const real t_im = fma_of(ar, acc[1], ai * acc[0]);
        if (s.beta_zero) {
            d[0] = t_re;
            d[1] = t_im;
        } else {
            const real d_re = d[0], d_im = d[1];
            d[0] = fma_of(br, d_re, fma_of(-bi, d_im, t_re));
            d[1] = fma_of(br, d_im, fma_of(bi, d_re, t_im));
        }
    }
}

/* The source element where a term's tile starts. */
__device__ __forceinline__ int64_t source_corner(const spart_permute_item &it,
                                                 const spart_permute_term &term,
                                                 const tile_place &p)
{
    int64_t corner = term.source_offset + p.x0 * term.source_stride_x + p.y0 * term.source_stride_y;
#pragma unroll
    for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
        if (r < it.num_rest) {
            corner += p.rest[r] * term.source_rest_stride[r];
        }
    }
    return corner;
}

/* One term's tile into `plane` (shared memory, rows of `pitch`) in source
 * order, x fastest: element i < count of the tile at x = i & mask_x,
 * v = i >> shift_x (the item's values, computed once a tile by the
 * caller), inside p's w x h. ASYNC: straight into shared memory by
 * cp.async, one real at a time (any alignment), no registers held, not
 * conjugated (the reader conjugates); else loaded through registers,
 * conjugated as it is read. The caller commits, waits and synchronises.
 *
 * The shifts come from the caller and p by value (Place), except from
 * group_tile, whose loop read p by reference: so every kernel's PTX is
 * what the three copies this replaces gave, but for one integer multiply
 * hoisted. The first form (p by reference everywhere, the shifts read
 * again here) turned the bounds tests into branches, and round 11 timed
 * the one-term kernels 2-25% slower. */
template <typename real, int C, int E, bool ASYNC, typename Place = const tile_place>
__device__ __forceinline__ void
gather_term(const spart_permute_item &it, const spart_permute_term &term, Place p, int shift_x,
            int mask_x, int count, int pitch, int conjugate, const real *source,
            typename stored<real, C>::type *plane)
{
    const int64_t corner = source_corner(it, term, p);
#pragma unroll
    for (int r = 0; r < E; r++) {
        const int i = threadIdx.x + r * threads;
        const int x = i & mask_x, v = i >> shift_x;
        if (i < count && x < p.w && v < p.h) {
            const real *from =
                source + (corner + x * term.source_stride_x + v * term.source_stride_y) * C;
            if constexpr (ASYNC) {
                real *into = reinterpret_cast<real *>(&plane[v * pitch + x]);
#pragma unroll
                for (int c = 0; c < C; c++) {
                    __pipeline_memcpy_async(into + c, from + c, sizeof(real));
                }
            } else {
                plane[v * pitch + x] = load_element<real, C>(from, conjugate);
            }
        }
    }
}

/* A small tile (at most a warp's lanes) by one warp, no shared memory:
 * lane i takes element i in destination order, sums the terms in order
 * straight from the source and writes. */
template <typename real, int C>
__device__ __forceinline__ void small_tile(const spart_permute_work &work,
                                           const spart_permute_scalars &s, int64_t tile,
                                           const real *source, real *destination)
{
    const int64_t k = work.small_item[tile - work.item_table_start];
    const spart_permute_item &it = work.items[k];
    const tile_place p = place_of_tile(it, tile - work.tile_start[k]);
    const int i = threadIdx.x & 31;
    int x, v;
    write_position(it, i, x, v);
    if (i >= (1 << (it.shift_x + it.shift_y)) || x >= p.w || v >= p.h) {
        return;
    }
    real acc[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
        acc[c] = (real)0;
    }
    for (int32_t q = 0; q < it.num_terms; q++) {
        const spart_permute_term &term = work.terms[it.first_term + q];
        const real u = (real)term.coefficient;
        int64_t at = term.source_offset + (p.x0 + x) * term.source_stride_x +
                     (p.y0 + v) * term.source_stride_y;
#pragma unroll
        for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
            if (r < it.num_rest) {
                at += p.rest[r] * term.source_rest_stride[r];
            }
        }
        const typename stored<real, C>::type e =
            load_element<real, C>(source + at * C, work.conjugate);
#pragma unroll
        for (int c = 0; c < C; c++) {
            const real value = part(e, c);
            acc[c] = q == 0 ? u * value : fma_of(u, value, acc[c]);
        }
    }
    finish<real, C>(
        destination +
            (p.destination + x * it.destination_stride_x + v * it.destination_stride_y) * C,
        acc, s);
}

/* A group's tile (a fusion block whose destinations share one tiling):
 * every source the group uses gathered once into shared memory (cp.async,
 * a plane each), then each destination of the group in turn summed from
 * them in its terms' order (increasing j) and written: sources read once
 * for all n destinations, where an item a destination reads them n times. */
template <typename real, int C, int E>
__device__ __forceinline__ void group_tile(const spart_permute_work &work,
                                           const spart_permute_scalars &s, int64_t k,
                                           const tile_place &p, const real *source,
                                           real *destination, typename stored<real, C>::type *tile)
{
    const spart_permute_item &it = work.items[k];
    const int shift_x = it.shift_x, mask_x = (1 << shift_x) - 1;
    const int count = 1 << (it.shift_x + it.shift_y);
    const int pitch = (int)spart_permute_tile_pitch(&it);
    const int plane = pitch << it.shift_y;
    for (int32_t q = 0; q < it.group_sources; q++) {
        /* p by reference here, as this loop read it before the helper */
        gather_term<real, C, E, true, const tile_place &>(it, work.terms[it.group_first_source + q],
                                                          p, shift_x, mask_x, count, pitch,
                                                          work.conjugate, source, tile + q * plane);
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const int64_t within = p.destination - it.destination_offset; /* the tile in any item */
    /* Element by element, its terms in order (increasing j); the terms
     * outside the element loop with E sums held across it measured slower
     * (round 9: 0.555 ms on the recoupling tensor against 0.454). */
    for (int32_t g = 0; g < it.group_items; g++) {
        const spart_permute_item &item = work.items[k + g];
        const int64_t corner = item.destination_offset + within;
#pragma unroll
        for (int r = 0; r < E; r++) {
            const int i = threadIdx.x + r * threads;
            int x, v;
            write_position(it, i, x, v);
            if (i < count && x < p.w && v < p.h) {
                real acc[C];
#pragma unroll
                for (int c = 0; c < C; c++) {
                    acc[c] = (real)0;
                }
                for (int32_t q = 0; q < item.num_terms; q++) {
                    const spart_permute_term &term = work.terms[item.first_term + q];
                    const real u = (real)term.coefficient;
                    const auto e = tile[term.slot * plane + v * pitch + x];
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const real value = c == 1 && work.conjugate ? -part(e, c) : part(e, c);
                        acc[c] = q == 0 ? u * value : fma_of(u, value, acc[c]);
                    }
                }
                finish<real, C>(
                    destination +
                        (corner + x * it.destination_stride_x + v * it.destination_stride_y) * C,
                    acc, s);
            }
        }
    }
    __syncthreads(); /* the next tile reuses the shared memory */
}

/* E: the most elements of a tile per thread (tile elements / threads).
 * ONE_TERM: every large tile's item has one term (plain permutes, the
 * common case): the kernel holds no sums across a barrier and can be
 * built for more thread blocks an SM (BLOCKS: eight, full occupancy, or
 * six); the general kernel takes four. ASYNC: the one-term gather copies
 * global to shared memory asynchronously (cp.async), holding no
 * registers for the elements in flight. */
template <typename real, int C, int E, bool ONE_TERM, int BLOCKS, bool ASYNC>
__global__ void __launch_bounds__(threads, BLOCKS)
    permute_kernel(spart_permute_work work, spart_permute_scalars s, const real *source,
                   real *destination)
{
    typedef typename stored<real, C>::type element;
    extern __shared__ double2 shared_raw[]; /* aligned for any element */
    element *tile = reinterpret_cast<element *>(shared_raw);
    /* Units: one per large tile, then one per eight small tiles. */
    const int64_t large = work.first_small_tile;
    const int64_t units = large + (work.num_tiles - large + 7) / 8;
    for (int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
        if (unit >= large) {
            const int64_t tile = large + (unit - large) * 8 + (threadIdx.x >> 5);
            if (tile < work.num_tiles) {
                small_tile<real, C>(work, s, tile, source, destination);
            }
            continue;
        }
        const int64_t tile_index = unit;
        const int64_t k = spart_permute_item_of(&work, tile_index);
        const spart_permute_item &it = work.items[k];
        const tile_place p = place_of_tile(it, tile_index - work.tile_start[k]);
        const int shift_x = it.shift_x;
        const int mask_x = (1 << shift_x) - 1;
        const int count = 1 << (it.shift_x + it.shift_y);
        const int pitch = (int)spart_permute_tile_pitch(&it);
        if constexpr (!ONE_TERM) {
            if (it.group_items > 1) {
                group_tile<real, C, E>(work, s, k, p, source, destination, tile);
                continue;
            }
        }
        if (ONE_TERM || it.num_terms == 1) {
            /* One term (a plain permute): gather, then scale and write;
             * no sums to keep across the barrier, so few registers. */
            const spart_permute_term &term = work.terms[it.first_term];
            gather_term<real, C, E, ASYNC>(it, term, p, shift_x, mask_x, count, pitch,
                                           work.conjugate, source, tile);
            if constexpr (ASYNC) {
                __pipeline_commit();
                __pipeline_wait_prior(0);
            }
            __syncthreads();
            const real u = (real)term.coefficient;
#pragma unroll
            for (int r = 0; r < E; r++) {
                const int i = threadIdx.x + r * threads;
                int x, v;
                write_position(it, i, x, v);
                if (i < count && x < p.w && v < p.h) {
                    const element e = tile[v * pitch + x];
                    real one[C];
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        /* The asynchronous gather conjugates here. */
                        const real value =
                            ASYNC && c == 1 && work.conjugate ? -part(e, c) : part(e, c);
                        one[c] = u * value;
                    }
                    finish<real, C>(destination + (p.destination + x * it.destination_stride_x +
                                                   v * it.destination_stride_y) *
                                                      C,
                                    one, s);
                }
            }
            __syncthreads(); /* the next tile reuses the shared memory */
            continue;
        }
        if constexpr (!ONE_TERM) {
            real acc[E][C];
#pragma unroll
            for (int r = 0; r < E; r++) {
#pragma unroll
                for (int c = 0; c < C; c++) {
                    acc[r][c] = (real)0;
                }
            }
            /* The terms SPART_PERMUTE_TERMS_AT_ONCE at a time: their tiles
             * copied into shared memory together (cp.async: all in flight
             * at once, no registers held), then summed in term order. */
            const int plane = pitch << it.shift_y; /* elements of one term's tile */
            for (int32_t q0 = 0; q0 < it.num_terms; q0 += SPART_PERMUTE_TERMS_AT_ONCE) {
                const int32_t chunk = it.num_terms - q0 < SPART_PERMUTE_TERMS_AT_ONCE
                                          ? it.num_terms - q0
                                          : SPART_PERMUTE_TERMS_AT_ONCE;
                if (q0 > 0) {
                    __syncthreads(); /* the previous terms' reads are done */
                }
                for (int32_t k = 0; k < chunk; k++) {
                    gather_term<real, C, E, true>(it, work.terms[it.first_term + q0 + k], p,
                                                  shift_x, mask_x, count, pitch, work.conjugate,
                                                  source, tile + k * plane);
                }
                __pipeline_commit();
                __pipeline_wait_prior(0);
                __syncthreads();
                /* Sum in destination order, term by term. */
                for (int32_t k = 0; k < chunk; k++) {
                    const int32_t q = q0 + k;
                    const real u = (real)work.terms[it.first_term + q].coefficient;
#pragma unroll
                    for (int r = 0; r < E; r++) {
                        const int i = threadIdx.x + r * threads;
                        int x, v;
                        write_position(it, i, x, v);
                        if (i < count && x < p.w && v < p.h) {
                            const element e = tile[k * plane + v * pitch + x];
#pragma unroll
                            for (int c = 0; c < C; c++) {
                                const real value =
                                    c == 1 && work.conjugate ? -part(e, c) : part(e, c);
                                acc[r][c] = q == 0 ? u * value : fma_of(u, value, acc[r][c]);
                            }
                        }
                    }
                }
            }
            /* Write in destination order. */
#pragma unroll
            for (int r = 0; r < E; r++) {
                const int i = threadIdx.x + r * threads;
                int x, v;
                write_position(it, i, x, v);
                if (i < count && x < p.w && v < p.h) {
                    finish<real, C>(destination + (p.destination + x * it.destination_stride_x +
                                                   v * it.destination_stride_y) *
                                                      C,
                                    acc[r], s);
                }
            }
            __syncthreads(); /* the next tile reuses the shared memory */
        }
    }
}

#include "permute_stream.cuh"

template <typename real, int C, int E>
cudaError_t launch(const spart_permute_work *work, const spart_permute_scalars *scalars,
                   const void *source, void *destination, size_t shared_bytes, cudaStream_t stream)
{
    static_assert(E * threads * C * sizeof(real) == SPART_PERMUTE_TILE_BYTES,
                  "a tile's elements per thread");
    const int64_t most = (int64_t)1 << 30;
    const int64_t large = work->first_small_tile;
    const int64_t units = large + (work->num_tiles - large + 7) / 8;
    const unsigned grid = (unsigned)(units < most ? units : most);
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    const real *from = static_cast<const real *>(source);
    real *to = static_cast<real *>(destination);
    if (work->one_term && work->variant >= 4 && work->variant <= 6) {
        /* Design 2 (permute_stream.cuh): 16-byte copies where the plan
         * allows them and both arrays are 16-byte aligned. */
        constexpr int V = 16 / (C * (int)sizeof(real));
        const int vector = work->vector && work->variant != 6 &&
                           (((uintptr_t)source | (uintptr_t)destination) & 15) == 0;
        if (vector && work->variant == 5) { /* three buffers: two tiles in flight */
            return launch_stream<real, C, E, V, true, 4, 3>(work, scalars, from, to, stream);
        }
        if (vector) {
            return launch_stream<real, C, E, V, true, 4, 2>(work, scalars, from, to, stream);
        }
        return launch_stream<real, C, E, V, false, 4, 2>(work, scalars, from, to, stream);
    }
    if (work->one_term && work->variant == 1) {
        return cudaLaunchKernelEx(&config, permute_kernel<real, C, E, true, 8, false>, *work,
                                  *scalars, from, to);
    }
    if (work->one_term && work->variant == 3) {
        return cudaLaunchKernelEx(&config, permute_kernel<real, C, E, true, 8, true>, *work,
                                  *scalars, from, to);
    }
    if (work->one_term && work->variant == 2) {
        return cudaLaunchKernelEx(&config, permute_kernel<real, C, E, true, 6, false>, *work,
                                  *scalars, from, to);
    }
    if (work->variant == 7) { /* the general kernel at eight blocks an SM (32 registers) */
        return cudaLaunchKernelEx(&config, permute_kernel<real, C, E, false, 8, false>, *work,
                                  *scalars, from, to);
    }
    return cudaLaunchKernelEx(&config, permute_kernel<real, C, E, false, 4, false>, *work, *scalars,
                              from, to);
}

} // namespace

extern "C" int spart_permute_device(const spart_permute_work *work,
                                    const spart_permute_scalars *scalars, const void *source,
                                    void *destination, size_t shared_bytes, void *stream)
{
    if (work->num_tiles <= 0) {
        return 0;
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t error = cudaSuccess;
    switch (work->kind) {
    case SPART_PERMUTE_KIND_FLOAT32:
        error = launch<float, 1, 16>(work, scalars, source, destination, shared_bytes, s);
        break;
    case SPART_PERMUTE_KIND_FLOAT64:
        error = launch<double, 1, 8>(work, scalars, source, destination, shared_bytes, s);
        break;
    case SPART_PERMUTE_KIND_COMPLEX64:
        error = launch<float, 2, 8>(work, scalars, source, destination, shared_bytes, s);
        break;
    default:
        error = launch<double, 2, 4>(work, scalars, source, destination, shared_bytes, s);
        break;
    }
    return (int)error;
}

extern "C" const char *spart_permute_device_error_string(int error)
{
    return cudaGetErrorString(static_cast<cudaError_t>(error));
}
