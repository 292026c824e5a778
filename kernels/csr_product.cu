/*
 * kernels/csr_product.cu: Y = A X for a CSR matrix in device memory, in the
 * row-group order of its twin host/csr_product.c, so that both give the
 * same bits:
 *
 *   - a row's entries are cut into chunks of chunk_length entries;
 *   - in a chunk, lane l of the row's g lanes sums entries l, l+g, l+2g, ...
 *     in that order with fma, starting from +0.0;
 *   - the g lane sums combine in a binary tree: lane l += lane l+h for
 *     h = g/2, ..., 1 (__shfl_down_sync within the group of g lanes gives
 *     lane l exactly lane l+h's value, so the pairs are the host loop's);
 *   - the chunk sums add in chunk order, starting from the first; an empty
 *     row gives +0.0.
 *
 * Float32 values are converted to double before the fma. Every fma is an
 * explicit __fma_rn and every addition an explicit __dadd_rn (the file is
 * also built with --fmad=false): nothing is left to the compiler.
 *
 * Work split. Each row gets g consecutive lanes of a warp, 32/g rows per
 * warp, grid-stride over the rows. Rows of several chunks ("long rows",
 * listed when the regridder is copied to the device) are not summed there:
 * in the same launch, blocks of their own give each of their chunks a group,
 * writing one partial sum per chunk to scratch, and add_chunk_sums then
 * adds each long row's chunk sums in chunk order. A long row therefore
 * costs one chunk's time on one group plus a short sequential addition,
 * instead of serialising the product, and the arithmetic is the sequential
 * one, bit for bit.
 *
 * Several interleaved vectors (X[column * T + t]) are done TILE at a time
 * (TILE = 1, 4 or 8, a template parameter): each vector's sum follows the
 * single-vector order exactly, so a column alone equals the column inside
 * any batch.
 *
 * Everything is enqueued on the caller's stream; nothing synchronises,
 * allocates or uses atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "device_internal.h"

namespace
{

constexpr int threads_per_block = 256;
constexpr int64_t max_blocks_x = (int64_t)1 << 24; /* grid-stride beyond this */
constexpr int64_t max_blocks_y = 65535;            /* vector tiles, grid-stride beyond */

/* The lanes of the calling thread's row group: its lane number in the
 * group, the group's size g, and the warp mask of the group's lanes. */
struct row_group {
    int lane;
    int size;
    unsigned mask;
};

__device__ __forceinline__ row_group group_of_thread(int group_size)
{
    row_group group;
    int warp_lane = (int)(threadIdx.x & 31u);
    group.size = group_size;
    group.lane = warp_lane & (group_size - 1);
    int first_lane = warp_lane - group.lane;
    group.mask = group_size == 32 ? 0xffffffffu : ((1u << group_size) - 1u) << first_lane;
    return group;
}

/* Entries of one lane loaded together before their fmas: more loads in
 * flight hide more latency, at the cost of registers (TILE x values per
 * entry). */
template <int TILE> __host__ __device__ constexpr int unroll_for_tile()
{
    return TILE == 1 ? 8 : (TILE == 4 ? 4 : 2);
}

/* The sum of entries [begin, end) of one chunk for vectors t0 .. t0 +
 * width - 1 (width <= TILE), in lane 0 of the group: lane l of g sums its
 * entries l, l+g, ... from +0.0, then the tree. All g lanes must call it. */
template <typename Value, typename Column, int TILE>
__device__ __forceinline__ void
chunk_sum(const Column *__restrict__ columns, const Value *__restrict__ values, int64_t begin,
          int64_t end, const row_group &group, const double *__restrict__ x, int64_t num_vectors,
          int64_t t0, int width, double (&sum)[TILE])
{
    constexpr int unroll = unroll_for_tile<TILE>();
#pragma unroll
    for (int j = 0; j < TILE; j++) {
        sum[j] = 0.0;
    }
    const int64_t g = group.size;
    int64_t k = begin + group.lane;
    /* `unroll` of this lane's entries at a time: their loads first, so that
     * they are in flight together, then the fmas in entry order. */
    for (; k + (unroll - 1) * g < end; k += unroll * g) {
        double value[unroll];
        double xv[unroll][TILE];
#pragma unroll
        for (int u = 0; u < unroll; u++) {
            value[u] = (double)values[k + u * g];
            const double *xk = x + (int64_t)columns[k + u * g] * num_vectors + t0;
#pragma unroll
            for (int j = 0; j < TILE; j++) {
                xv[u][j] = (TILE == 1 || j < width) ? xk[j] : 0.0;
            }
        }
#pragma unroll
        for (int u = 0; u < unroll; u++) {
#pragma unroll
            for (int j = 0; j < TILE; j++) {
                sum[j] = __fma_rn(value[u], xv[u][j], sum[j]);
            }
        }
    }
    for (; k < end; k += g) {
        double value = (double)values[k];
        const double *xk = x + (int64_t)columns[k] * num_vectors + t0;
#pragma unroll
        for (int j = 0; j < TILE; j++) {
            double xj = (TILE == 1 || j < width) ? xk[j] : 0.0;
            sum[j] = __fma_rn(value, xj, sum[j]);
        }
    }
    /* The tree: lane l += lane l + h, h = g/2, ..., 1. Lanes l >= h compute
     * values nobody reads (the host never forms them). */
    for (int h = group.size / 2; h >= 1; h /= 2) {
#pragma unroll
        for (int j = 0; j < TILE; j++) {
            double other = __shfl_down_sync(group.mask, sum[j], h, group.size);
            sum[j] = __dadd_rn(sum[j], other);
        }
    }
}

/* Write lane 0's sums for vectors t0 .. t0 + width - 1 to out[0 .. width). */
template <int TILE>
__device__ __forceinline__ void store_sums(const row_group &group, const double (&sum)[TILE],
                                           int width, double *out)
{
    if (group.lane == 0) {
#pragma unroll
        for (int j = 0; j < TILE; j++) {
            if (j < width) {
                out[j] = sum[j];
            }
        }
    }
}

/* One launch for both kinds of work, so that the long rows' chunks run
 * beside the short rows rather than after them: blocks [0, chunk_blocks)
 * take the long rows' chunks (one group per chunk, its sum into
 * chunk_sums[chunk * T + t]); the other blocks take the rows of at most one
 * chunk (one group per row, into y; long rows are skipped there). Both
 * walk their items grid-stride; blockIdx.y walks the tiles of TILE
 * vectors. */
template <typename Value, typename Column, int TILE>
__global__ void __launch_bounds__(threads_per_block)
    product_rows(spart_device_csr matrix, const Column *__restrict__ columns,
                 const Value *__restrict__ values, const double *__restrict__ x,
                 int64_t num_vectors, double *__restrict__ y, double *__restrict__ chunk_sums,
                 unsigned chunk_blocks)
{
    const row_group group = group_of_thread(matrix.group_size);
    const int64_t groups_per_block = blockDim.x / matrix.group_size;
    const int64_t group_in_block = threadIdx.x / group.size;
    const int do_chunks = blockIdx.x < chunk_blocks;
    const int64_t block = do_chunks ? blockIdx.x : blockIdx.x - chunk_blocks;
    const int64_t blocks = do_chunks ? chunk_blocks : gridDim.x - chunk_blocks;
    const int64_t first_item = block * groups_per_block + group_in_block;
    const int64_t item_stride = blocks * groups_per_block;
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const int64_t t0 = tile * TILE;
        const int width = num_vectors - t0 < TILE ? (int)(num_vectors - t0) : TILE;
        double sum[TILE];
        if (do_chunks) {
            for (int64_t chunk = first_item; chunk < matrix.num_long_chunks; chunk += item_stride) {
                chunk_sum<Value, Column, TILE>(columns, values, matrix.chunk_begin[chunk],
                                               matrix.chunk_end[chunk], group, x, num_vectors, t0,
                                               width, sum);
                store_sums<TILE>(group, sum, width, chunk_sums + chunk * num_vectors + t0);
            }
            continue;
        }
        for (int64_t row = first_item; row < matrix.num_rows; row += item_stride) {
            const int64_t begin = matrix.row_ptr[row];
            const int64_t end = matrix.row_ptr[row + 1];
            if (end - begin > matrix.chunk_length) {
                continue; /* a long row: the whole group skips it */
            }
            chunk_sum<Value, Column, TILE>(columns, values, begin, end, group, x, num_vectors, t0,
                                           width, sum);
            store_sums<TILE>(group, sum, width, y + row * num_vectors + t0);
        }
    }
}

/* Each long row's value for each vector: its chunk sums added in chunk
 * order, starting from the first (one thread per row and vector). The
 * loads are unrolled so that several are in flight; the additions stay in
 * order. */
__global__ void __launch_bounds__(threads_per_block)
    add_chunk_sums(spart_device_csr matrix, const double *__restrict__ chunk_sums,
                   int64_t num_vectors, double *__restrict__ y)
{
    const int64_t count = matrix.num_long_rows * num_vectors;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < count;
         item += stride) {
        const int64_t long_row = item / num_vectors;
        const int64_t t = item - long_row * num_vectors;
        const int64_t first = matrix.long_first_chunk[long_row];
        const int64_t last = matrix.long_first_chunk[long_row + 1];
        double total = chunk_sums[first * num_vectors + t];
#pragma unroll 8
        for (int64_t chunk = first + 1; chunk < last; chunk++) {
            total = __dadd_rn(total, chunk_sums[chunk * num_vectors + t]);
        }
        y[matrix.long_rows[long_row] * num_vectors + t] = total;
    }
}

/* Copy between C order and interleaved vectors (see spart_cuda_pack). */
__global__ void __launch_bounds__(threads_per_block)
    repack(spart_device_axis_map map, int64_t num_leading, int64_t size, const double *from,
           double *to, int to_packed)
{
    const int64_t num_vectors = num_leading * map.num_batch;
    const int64_t count = num_leading * size;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < count;
         item += stride) {
        const int64_t lead = item / size;
        int64_t rest = item - lead * size;
        int64_t matrix = 0, batch = 0;
        for (int k = map.ndim - 1; k >= 0; k--) {
            const int64_t index = rest % map.dims[k];
            rest /= map.dims[k];
            matrix += index * map.matrix_stride[k];
            batch += index * map.batch_stride[k];
        }
        const int64_t slot = matrix * num_vectors + lead * map.num_batch + batch;
        if (to_packed) {
            to[slot] = from[item];
        } else {
            to[item] = from[slot];
        }
    }
}

int64_t blocks_for(int64_t items, int64_t items_per_block)
{
    int64_t blocks = (items + items_per_block - 1) / items_per_block;
    return blocks < max_blocks_x ? blocks : max_blocks_x;
}

/* Launch `kernel` on `grid` blocks of threads_per_block threads. The
 * launch's own error is returned (cudaLaunchKernelEx), never an earlier
 * one left in the thread's last-error state by someone else's call. */
template <typename... Parameters, typename... Arguments>
cudaError_t launch(void (*kernel)(Parameters...), dim3 grid, cudaStream_t stream,
                   Arguments... arguments)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(threads_per_block);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    return cudaLaunchKernelEx(&config, kernel, arguments...);
}

/* The launches of one product, for one value type, column type and tile
 * width: the rows and the long rows' chunks, then the chunk sums. */
template <typename Value, typename Column, int TILE>
cudaError_t launch_product(const spart_device_csr &matrix, const Column *columns,
                           const Value *values, const double *x, int64_t num_vectors, double *y,
                           double *chunk_sums, cudaStream_t stream)
{
    const int64_t groups_per_block = threads_per_block / matrix.group_size;
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    const unsigned tile_blocks = (unsigned)(tiles < max_blocks_y ? tiles : max_blocks_y);
    const unsigned chunk_blocks =
        (unsigned)(matrix.num_long_chunks > 0 ? blocks_for(matrix.num_long_chunks, groups_per_block)
                                              : 0);
    const unsigned row_blocks =
        (unsigned)(matrix.num_rows > 0 ? blocks_for(matrix.num_rows, groups_per_block) : 0);
    if (chunk_blocks + row_blocks == 0) {
        return cudaSuccess;
    }
    cudaError_t error =
        launch(product_rows<Value, Column, TILE>, dim3(chunk_blocks + row_blocks, tile_blocks),
               stream, matrix, columns, values, x, num_vectors, y, chunk_sums, chunk_blocks);
    if (error != cudaSuccess || matrix.num_long_chunks == 0) {
        return error;
    }
    unsigned blocks = (unsigned)blocks_for(matrix.num_long_rows * num_vectors, threads_per_block);
    return launch(add_chunk_sums, dim3(blocks), stream, matrix, (const double *)chunk_sums,
                  num_vectors, y);
}

template <int TILE>
cudaError_t launch_for_types(const spart_device_csr &matrix, const double *x, int64_t num_vectors,
                             double *y, double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_product<double, int32_t, TILE>(matrix, matrix.columns32, matrix.values64, x,
                                                     num_vectors, y, chunk_sums, stream);
    }
    if (matrix.values64 != nullptr) {
        return launch_product<double, int64_t, TILE>(matrix, matrix.columns64, matrix.values64, x,
                                                     num_vectors, y, chunk_sums, stream);
    }
    if (matrix.columns32 != nullptr) {
        return launch_product<float, int32_t, TILE>(matrix, matrix.columns32, matrix.values32, x,
                                                    num_vectors, y, chunk_sums, stream);
    }
    return launch_product<float, int64_t, TILE>(matrix, matrix.columns64, matrix.values32, x,
                                                num_vectors, y, chunk_sums, stream);
}

cudaError_t launch_repack(const spart_device_axis_map *map, int64_t num_leading, const double *from,
                          double *to, int to_packed, cudaStream_t stream)
{
    int64_t size = 1;
    for (int k = 0; k < map->ndim; k++) {
        size *= map->dims[k];
    }
    if (num_leading * size == 0) {
        return cudaSuccess;
    }
    unsigned blocks = (unsigned)blocks_for(num_leading * size, threads_per_block);
    return launch(repack, dim3(blocks), stream, *map, num_leading, size, from, to, to_packed);
}

} // namespace

extern "C" int spart_cuda_csr_product(const spart_device_csr *matrix, const double *x,
                                      int64_t num_vectors, double *y, double *chunk_sums,
                                      void *stream)
{
    if (num_vectors <= 0) {
        return cudaSuccess;
    }
    cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
    if (num_vectors == 1) {
        return launch_for_types<1>(*matrix, x, num_vectors, y, chunk_sums, cuda_stream);
    }
    if (num_vectors <= 4) {
        return launch_for_types<4>(*matrix, x, num_vectors, y, chunk_sums, cuda_stream);
    }
    return launch_for_types<8>(*matrix, x, num_vectors, y, chunk_sums, cuda_stream);
}

extern "C" int spart_cuda_pack(const spart_device_axis_map *map, int64_t num_leading,
                               const double *values, double *packed, void *stream)
{
    return launch_repack(map, num_leading, values, packed, 1, static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_unpack(const spart_device_axis_map *map, int64_t num_leading,
                                 const double *packed, double *values, void *stream)
{
    return launch_repack(map, num_leading, packed, values, 0, static_cast<cudaStream_t>(stream));
}
