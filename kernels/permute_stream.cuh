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

/* Where a large one-term tile lies, found once a tile (design 1 finds it
 * in every phase): its item, the first element of its source patch and of
 * its destination patch, its extents. */
struct stream_spot {
    int64_t source, destination;
    int32_t item, w, h;
};

/* Tile `t`'s spot: the item by the binary search, then the tile's
 * coordinates by 32-bit divisions where the counts allow (a 64-bit
 * division is some 70 instructions a thread: a tile's share of the issue
 * slots that its copies need). */
__device__ __forceinline__ stream_spot stream_locate(const spart_permute_work &work, int64_t t)
{
    const int64_t k = spart_permute_item_of(&work, t);
    const spart_permute_item &it = work.items[k];
    const spart_permute_term &term = work.terms[it.first_term];
    const int64_t local = t - work.tile_start[k];
    const int64_t most = 0x7fffffff;
    int64_t coordinate[2 + SPART_PERMUTE_REST_AXES] = {0};
    bool narrow = local <= most && it.tiles_x <= most && it.tiles_y <= most;
#pragma unroll
    for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
        narrow = narrow && (r >= it.num_rest || it.rest_size[r] <= most);
    }
    if (narrow) {
        uint32_t u = (uint32_t)local;
        coordinate[0] = u % (uint32_t)it.tiles_x;
        u /= (uint32_t)it.tiles_x;
        coordinate[1] = u % (uint32_t)it.tiles_y;
        u /= (uint32_t)it.tiles_y;
#pragma unroll
        for (int r = SPART_PERMUTE_REST_AXES - 1; r >= 0; r--) {
            if (r < it.num_rest) {
                coordinate[2 + r] = u % (uint32_t)it.rest_size[r];
                u /= (uint32_t)it.rest_size[r];
            }
        }
    } else {
        const tile_place p = place_of_tile(it, local);
        coordinate[0] = p.x0 >> it.shift_x;
        coordinate[1] = p.y0 >> it.shift_y;
#pragma unroll
        for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
            coordinate[2 + r] = p.rest[r];
        }
    }
    const int64_t x0 = coordinate[0] << it.shift_x, y0 = coordinate[1] << it.shift_y;
    stream_spot spot;
    spot.item = (int32_t)k;
    spot.source = term.source_offset + x0 * term.source_stride_x + y0 * term.source_stride_y;
    spot.destination =
        it.destination_offset + x0 * it.destination_stride_x + y0 * it.destination_stride_y;
#pragma unroll
    for (int r = 0; r < SPART_PERMUTE_REST_AXES; r++) {
        if (r < it.num_rest) {
            spot.source += coordinate[2 + r] * term.source_rest_stride[r];
            spot.destination += coordinate[2 + r] * it.destination_rest_stride[r];
        }
    }
    const int64_t tx = (int64_t)1 << it.shift_x, ty = (int64_t)1 << it.shift_y;
    spot.w = (int32_t)(it.size_x - x0 < tx ? it.size_x - x0 : tx);
    spot.h = (int32_t)(it.size_y - y0 < ty ? it.size_y - y0 : ty);
    return spot;
}

/* Issue the cp.async copies of the large one-term tile at `spot` into
 * `tile`. VEC: 16-byte copies of V elements along x (the plan checked
 * the strides and sizes); else each real on its own (any alignment). */
template <typename real, int C, int E, int V, bool VEC>
__device__ __forceinline__ void stream_gather(const spart_permute_work &work,
                                              const stream_spot &spot, const real *source,
                                              typename stored<real, C>::type *tile)
{
    const spart_permute_item &it = work.items[spot.item];
    const spart_permute_term &term = work.terms[it.first_term];
    const int64_t corner = spot.source;
    constexpr int W = VEC ? V : 1; /* elements a copy */
    constexpr int LOG_W = W == 4 ? 2 : W == 2 ? 1 : 0;
    const int pitch = stream_pitch(it, VEC ? V : 1);
    const int shift_c = it.shift_x - LOG_W; /* copies along a row: 2^shift_c */
    const int copies = 1 << (it.shift_x + it.shift_y - LOG_W);
#pragma unroll
    for (int r = 0; r < E / W; r++) {
        const int i = threadIdx.x + r * threads;
        const int x = (i & ((1 << shift_c) - 1)) << LOG_W, v = i >> shift_c;
        if (i < copies && x < spot.w && v < spot.h) {
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

/* Scale the tile at `spot` from `tile` and write it in destination order. VEC: a
 * thread writes V elements along y (16 bytes; the plan's vector tiles are
 * all written y first with a unit destination stride along y). */
template <typename real, int C, int E, int V, bool VEC>
__device__ __forceinline__ void
stream_write(const spart_permute_work &work, const spart_permute_scalars &s,
             const stream_spot &spot, const typename stored<real, C>::type *tile, real *destination)
{
    typedef typename stored<real, C>::type element;
    const spart_permute_item &it = work.items[spot.item];
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
            if ((i << LOG_V) < count && x < spot.w && v < spot.h) {
                real *d = destination + (spot.destination + x * it.destination_stride_x +
                                         v * it.destination_stride_y) *
                                            C;
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
            if (i < count && x < spot.w && v < spot.h) {
                const element el = tile[v * pitch + x];
                real one[C];
#pragma unroll
                for (int c = 0; c < C; c++) {
                    const real value = c == 1 && conjugate ? -part(el, c) : part(el, c);
                    one[c] = u * value;
                }
                finish<real, C>(destination + (spot.destination + x * it.destination_stride_x +
                                               v * it.destination_stride_y) *
                                                  C,
                                one, s);
            }
        }
    }
}

/* Design 2: the plan's large tiles (all of one term) by a fixed grid
 * through STAGES buffers (the gathers of STAGES - 1 tiles in flight while
 * one is written), then its small tiles. `plane` is the elements of one
 * buffer. */
template <typename real, int C, int E, int V, bool VEC, int BLOCKS, int STAGES>
__global__ void __launch_bounds__(threads, BLOCKS)
    permute_stream_kernel(spart_permute_work work, spart_permute_scalars s, const real *source,
                          real *destination, int plane)
{
    typedef typename stored<real, C>::type element;
    extern __shared__ double2 shared_raw[]; /* aligned for any element */
    element *buffers = reinterpret_cast<element *>(shared_raw);
    const int64_t large = work.first_small_tile;
    /* ring[q]: the spot of the block's tile i + q (registers: the loops
     * over it are unrolled). */
    stream_spot ring[STAGES];
#pragma unroll
    for (int q = 0; q < STAGES - 1; q++) {
        const int64_t t = (int64_t)blockIdx.x + (int64_t)q * gridDim.x;
        ring[q] = stream_spot{0, 0, 0, 0, 0};
        if (t < large) {
            ring[q] = stream_locate(work, t);
            stream_gather<real, C, E, V, VEC>(work, ring[q], source, buffers + q * plane);
        }
        __pipeline_commit();
    }
    int buffer = 0; /* tile i's: i mod STAGES */
    for (int64_t t = blockIdx.x; t < large; t += gridDim.x) {
        const int64_t ahead = t + (int64_t)(STAGES - 1) * gridDim.x;
        const int ahead_buffer = buffer == 0 ? STAGES - 1 : buffer - 1; /* (i - 1) mod STAGES */
        ring[STAGES - 1] = stream_spot{0, 0, 0, 0, 0};
        if (ahead < large) { /* its buffer's last reader passed the barrier below */
            ring[STAGES - 1] = stream_locate(work, ahead);
            stream_gather<real, C, E, V, VEC>(work, ring[STAGES - 1], source,
                                              buffers + ahead_buffer * plane);
        }
        __pipeline_commit();
        __pipeline_wait_prior(STAGES - 1); /* tile t's copies (this thread's) have landed */
        __syncthreads();                   /* ... and every thread's */
        stream_write<real, C, E, V, VEC>(work, s, ring[0], buffers + buffer * plane, destination);
        __syncthreads(); /* the buffer is free for a later tile */
        buffer = buffer + 1 == STAGES ? 0 : buffer + 1;
#pragma unroll
        for (int q = 0; q + 1 < STAGES; q++) {
            ring[q] = ring[q + 1];
        }
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
template <typename real, int C, int E, int V, bool VEC, int BLOCKS, int STAGES>
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
    const size_t shared = STAGES * (size_t)work->stream_plane * sizeof(element);
    auto kernel = permute_stream_kernel<real, C, E, V, VEC, BLOCKS, STAGES>;
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
