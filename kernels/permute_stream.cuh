/*
 * kernels/permute_stream.cuh: design 2 of the device's large one-term
 * tiles (included by kernels/permute.cu, whose helpers it uses; twin of
 * host/permute.c through the same contract, src/permute/permute_kernels.h).
 *
 * Design 1 (permute.cu) gives each large tile a thread block that gathers
 * it, waits, writes it and exits: between the gather's issue and its
 * arrival the block holds its shared memory and moves nothing. Here a
 * fixed grid of blocks (BLOCKS an SM) walks the tiles, block b taking b,
 * b + grid, b + 2 grid, ...: the gather of the next tile (cp.async into
 * the second of two buffers) is in flight while the current one is
 * scaled and written. Where the plan allows it (spart_permute_work.vector)
 * and the arrays are 16-byte aligned, each copy moves 16 bytes: a thread
 * gathers V elements along x (the source's contiguous axis) and writes V
 * elements along y (the destination's), reading them down a column of the
 * tile, whose rows are padded by V elements (16 bytes: each row stays
 * aligned for cp.async). The small tiles follow, a warp each, as in
 * design 1. The same operations per element as design 1 and the host:
 * u * x, then alpha and beta (finish); no atomics, beta = 0 never reads.
 */

/* The elements from one row of a design-2 tile to the next: 2^shift_x,
 * padded when the tile is written y first (a transpose) by V elements
 * (vector copies) or one (element copies). */
__device__ __forceinline__ int stream_pitch(const spart_permute_item &it, int pad)
{
    return (1 << it.shift_x) + (it.write_y_first ? pad : 0);
}

/* Issue the cp.async copies of tile `t` (a large one-term tile) into
 * `tile`. VEC: 16-byte copies of V elements along x (the plan checked
 * the strides and sizes); else each real on its own (any alignment). */
template <typename real, int C, int E, int V, bool VEC>
__device__ __forceinline__ void stream_gather(const spart_permute_work &work, int64_t t,
                                              const real *source,
                                              typename stored<real, C>::type *tile)
{
    const int64_t k = spart_permute_item_of_tile(work.tile_start, work.num_items, t);
    const spart_permute_item &it = work.items[k];
    const tile_place p = place_of_tile(it, t - work.tile_start[k]);
    const spart_permute_term &term = work.terms[it.first_term];
    int64_t corner = term.source_offset + p.x0 * term.source_stride_x + p.y0 * term.source_stride_y;
#pragma unroll
    for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
        if (r < it.num_rest) {
            corner += p.rest[r] * term.source_rest_stride[r];
        }
    }
    constexpr int W = VEC ? V : 1; /* elements a copy */
    constexpr int LOG_W = W == 4 ? 2 : W == 2 ? 1 : 0;
    const int pitch = stream_pitch(it, VEC ? V : 1);
    const int shift_c = it.shift_x - LOG_W; /* copies along a row: 2^shift_c */
    const int copies = 1 << (it.shift_x + it.shift_y - LOG_W);
#pragma unroll
    for (int r = 0; r < E / W; r++) {
        const int i = threadIdx.x + r * threads;
        const int x = (i & ((1 << shift_c) - 1)) << LOG_W, v = i >> shift_c;
        if (i < copies && x < p.w && v < p.h) {
            const real *from =
                source + (corner + x * term.source_stride_x + v * term.source_stride_y) * C;
            real *into = reinterpret_cast<real *>(&tile[v * pitch + x]);
            if constexpr (VEC) {
                __pipeline_memcpy_async(into, from, 16);
            } else {
#pragma unroll
                for (int c = 0; c < C; c++) {
                    __pipeline_memcpy_async(into + c, from + c, sizeof(real));
                }
            }
        }
    }
}

/* Scale tile `t` from `tile` and write it in destination order. VEC: a
 * thread writes V elements along y (16 bytes; the plan's vector tiles are
 * all written y first with a unit destination stride along y). */
template <typename real, int C, int E, int V, bool VEC>
__device__ __forceinline__ void
stream_write(const spart_permute_work &work, const spart_permute_scalars &s, int64_t t,
             const typename stored<real, C>::type *tile, real *destination)
{
    typedef typename stored<real, C>::type element;
    const int64_t k = spart_permute_item_of_tile(work.tile_start, work.num_items, t);
    const spart_permute_item &it = work.items[k];
    const tile_place p = place_of_tile(it, t - work.tile_start[k]);
    const real u = (real)work.terms[it.first_term].coefficient;
    const int conjugate = work.conjugate;
    const int pitch = stream_pitch(it, VEC ? V : 1);
    const int count = 1 << (it.shift_x + it.shift_y);
    if constexpr (VEC) {
        constexpr int LOG_V = V == 4 ? 2 : V == 2 ? 1 : 0;
        const int shift_c = it.shift_y - LOG_V; /* copies along a column: 2^shift_c */
#pragma unroll
        for (int r = 0; r < E / V; r++) {
            const int i = threadIdx.x + r * threads;
            const int v = (i & ((1 << shift_c) - 1)) << LOG_V, x = i >> shift_c;
            if ((i << LOG_V) < count && x < p.w && v < p.h) {
                real *d =
                    destination +
                    (p.destination + x * it.destination_stride_x + v * it.destination_stride_y) * C;
                __align__(16) real values[V * C];
                if (!s.beta_zero) {
                    *reinterpret_cast<uint4 *>(values) = *reinterpret_cast<const uint4 *>(d);
                }
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const element el = tile[(v + e) * pitch + x];
                    real one[C];
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const real value = c == 1 && conjugate ? -part(el, c) : part(el, c);
                        one[c] = u * value;
                    }
                    finish<real, C>(values + e * C, one, s);
                }
                *reinterpret_cast<uint4 *>(d) = *reinterpret_cast<const uint4 *>(values);
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < E; r++) {
            const int i = threadIdx.x + r * threads;
            int x, v;
            write_position(it, i, x, v);
            if (i < count && x < p.w && v < p.h) {
                const element el = tile[v * pitch + x];
                real one[C];
#pragma unroll
                for (int c = 0; c < C; c++) {
                    const real value = c == 1 && conjugate ? -part(el, c) : part(el, c);
                    one[c] = u * value;
                }
                finish<real, C>(destination + (p.destination + x * it.destination_stride_x +
                                               v * it.destination_stride_y) *
                                                  C,
                                one, s);
            }
        }
    }
}

/* Design 2: the plan's large tiles (all of one term) double-buffered by a
 * fixed grid, then its small tiles. `plane` is the elements of one buffer. */
template <typename real, int C, int E, int V, bool VEC, int BLOCKS>
__global__ void __launch_bounds__(threads, BLOCKS)
    permute_stream_kernel(spart_permute_work work, spart_permute_scalars s, const real *source,
                          real *destination, int plane)
{
    typedef typename stored<real, C>::type element;
    extern __shared__ double2 shared_raw[]; /* aligned for any element */
    element *buffers = reinterpret_cast<element *>(shared_raw);
    const int64_t large = work.first_small_tile;
    int buffer = 0;
    if ((int64_t)blockIdx.x < large) {
        stream_gather<real, C, E, V, VEC>(work, blockIdx.x, source, buffers);
    }
    __pipeline_commit();
    for (int64_t t = blockIdx.x; t < large; t += gridDim.x) {
        const int64_t next = t + gridDim.x;
        if (next < large) { /* its buffer's last reader passed the barrier below */
            stream_gather<real, C, E, V, VEC>(work, next, source, buffers + (buffer ^ 1) * plane);
        }
        __pipeline_commit();
        __pipeline_wait_prior(1); /* tile t's copies (this thread's) have landed */
        __syncthreads();          /* ... and every thread's */
        stream_write<real, C, E, V, VEC>(work, s, t, buffers + buffer * plane, destination);
        __syncthreads(); /* the buffer is free for tile t + 2 grid */
        buffer ^= 1;
    }
    const int64_t small_units = (work.num_tiles - large + 7) / 8;
    for (int64_t unit = blockIdx.x; unit < small_units; unit += gridDim.x) {
        const int64_t tile = large + unit * 8 + (threadIdx.x >> 5);
        if (tile < work.num_tiles) {
            small_tile<real, C>(work, s, tile, source, destination);
        }
    }
}

/* Launch design 2: a grid of BLOCKS blocks an SM (at most one per unit). */
template <typename real, int C, int E, int V, bool VEC, int BLOCKS>
cudaError_t launch_stream(const spart_permute_work *work, const spart_permute_scalars *scalars,
                          const real *source, real *destination, cudaStream_t stream)
{
    typedef typename stored<real, C>::type element;
    int device = 0, multiprocessors = 0;
    cudaError_t error = cudaGetDevice(&device);
    if (error == cudaSuccess) {
        error = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    }
    if (error != cudaSuccess) {
        return error;
    }
    const int64_t large = work->first_small_tile;
    const int64_t units = large + (work->num_tiles - large + 7) / 8;
    const int64_t most = (int64_t)multiprocessors * BLOCKS;
    const size_t shared = 2 * (size_t)work->stream_plane * sizeof(element);
    auto kernel = permute_stream_kernel<real, C, E, V, VEC, BLOCKS>;
    if (shared > 48 * 1024) {
        error =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
        if (error != cudaSuccess) {
            return error;
        }
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)(units < most ? units : most));
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    return cudaLaunchKernelEx(&config, kernel, *work, *scalars, source, destination,
                              (int)work->stream_plane);
}
