/*
 * kernels/csr_product.cu: Y = A X for a CSR matrix in device memory, in the
 * row-group order of its twin host/csr_product.c, so that both give the
 * same bits:
 *
 *   - a row's entries are cut into chunks of chunk_length entries;
 *   - each chunk is summed by the row's g lanes as kernels/csr_row_sum.cuh
 *     says (lane l sums entries l, l+g, ... with fma from +0.0, then the
 *     fixed binary tree);
 *   - the chunk sums add in chunk order, starting from the first; an empty
 *     row gives +0.0.
 *
 * Work split. Each row gets g consecutive lanes of a warp, 32/g rows per
 * warp; a group takes ROWS rows at once (their loads in flight together),
 * grid-stride over the rows. Rows of several chunks ("long rows", listed
 * when the regridder is copied to the device) are not summed there: in the
 * same launch, blocks of their own give each of their chunks a group,
 * writing one partial sum per chunk to scratch, and add_chunk_sums then
 * adds each long row's chunk sums in chunk order. A long row therefore
 * costs one chunk's time on one group plus a short sequential addition,
 * instead of serialising the product, and the arithmetic is the sequential
 * one, bit for bit.
 *
 * Rows of one round. A one-vector product of a matrix of g = 2, 4, 8 or 16
 * whose rows other than the long ones hold about g entries or fewer
 * (rows_fit_one_round) gives each row one thread instead of g lanes
 * (kernels/csr_product_by_thread.cu). A matrix of g <= 2 with a short-row
 * index has a one-vector product of its own (kernels/csr_product_indexed.cu).
 *
 * Several vectors are done TILE at a time (TILE = 1, 4 or 8, a template
 * parameter), interleaved (X[column * T + t]) or one after the other in C
 * order (x[t * columns + column], no packing needed): each vector's sum
 * follows the single-vector order exactly, so a column alone equals the
 * column inside any batch, in either layout. Batches in 64-byte tiles of 8
 * vectors over matrices of short rows have kernels of their own
 * (kernels/csr_product_tiles.cu).
 *
 * Everything is enqueued on the caller's stream; nothing synchronises,
 * allocates or uses atomics.
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "csr_product.cuh"
#include "csr_row_sum.cuh"
#include "device/device_internal.h"
#include "launch.cuh"
#include "operator/csr_product_by_row.h"
#include "operator/csr_product_designs.h"

namespace
{

using spart_launch::blocks_for;
using spart_launch::launch;
using spart_launch::max_blocks_y;
using spart_launch::threads_per_block;
using spart_product::store_row;
using spart_rows::group_of_thread;
using spart_rows::row_group;
using spart_rows::rows_sum;
using spart_rows::vector_layout;

/* Blocks a multiprocessor for the kernels whose group size is fixed at
 * compile time (a launch bound, so at most 64 registers a thread). With
 * the group size a constant, a round's loads have constant strides, and
 * with a launch bound that names blocks a multiprocessor ptxas issues a
 * round's loads before its first fma (seen in the machine code of a
 * one-block build); with the group size read at run time, or without that
 * bound (ptxas then held the kernel to 32 registers), it interleaved
 * loads and fmas. Measured on an H200 (docs/benchmarks.md in git history, "GPU product:
 * group sizes fixed at compile time"): 4 blocks (64 registers) was within
 * 3 % of the fastest choice on the ESIS-scale forward operator and the
 * fastest on a band whose columns spread over 65536; 1 block (72
 * registers) was 11 % slower there. */
constexpr int min_blocks_fixed_group = 4;

/* Entries a lane loads per round in a long row's chunk (up to
 * SPART_CHUNK_LENGTH / g entries a lane, so as many in flight as the
 * registers allow). */
template <int TILE> __host__ __device__ constexpr int chunk_unroll()
{
    return TILE == 1 ? 8 : 4;
}

/* The long rows' chunks first_chunk, first_chunk + chunk_stride, ... for
 * vectors t0 .. t0 + width - 1: one group a chunk, chunk_unroll entries a
 * lane in flight, each chunk's sum into chunk_sums[chunk * T + t]. */
template <typename Value, typename Column, int TILE, bool X_TILES>
__device__ __forceinline__ void
sum_long_chunks(const spart_device_csr &matrix, const Column *__restrict__ columns,
                const Value *__restrict__ values, const double *__restrict__ x,
                const vector_layout &layout, int64_t num_vectors, int64_t t0, int width,
                const row_group &group, int64_t first_chunk, int64_t chunk_stride,
                double *__restrict__ chunk_sums)
{
    for (int64_t chunk = first_chunk; chunk < matrix.num_long_chunks; chunk += chunk_stride) {
        const int64_t begin[1] = {matrix.chunk_begin[chunk]};
        const int64_t end[1] = {matrix.chunk_end[chunk]};
        double sum[1][TILE];
        rows_sum<Value, Column, TILE, 1, chunk_unroll<TILE>(), X_TILES>(
            columns, values, begin, end, group, x, layout, t0, width, sum);
        if (group.lane == 0) {
#pragma unroll
            for (int j = 0; j < TILE; j++) {
                if (j < width) {
                    chunk_sums[chunk * num_vectors + t0 + j] = sum[0][j];
                }
            }
        }
    }
}

/* One launch for both kinds of work, so that the long rows' chunks run
 * beside the short rows rather than after them: blocks [0, chunk_blocks)
 * take the long rows' chunks (one group per chunk, chunk_unroll entries a
 * lane in flight, its sum into chunk_sums[chunk * T + t]); the other
 * blocks take the rows of at most one chunk, ROWS at a time per group (row
 * item + r * item_stride for r < ROWS, so that the groups of a warp read
 * neighbouring rows; long rows are skipped there). blockIdx.y walks the
 * tiles of TILE vectors. A matrix without long rows takes the instance
 * without the chunks' code (CHUNKS false), whose registers are the short
 * rows' alone. G, when not 0, is the matrix's group size fixed at compile
 * time, and the kernel is built for min_blocks_fixed_group blocks a
 * multiprocessor (see there). */
template <typename Value, typename Column, int TILE, int ROWS, int UNROLL, bool CHUNKS, int G,
          bool X_TILES>
__global__ void __launch_bounds__(threads_per_block, G > 0 ? min_blocks_fixed_group : 0)
    product_rows(spart_device_csr matrix, const Column *__restrict__ columns,
                 const Value *__restrict__ values, const double *__restrict__ x,
                 vector_layout layout, int64_t num_vectors, double *__restrict__ y,
                 double *__restrict__ chunk_sums, unsigned chunk_blocks)
{
    const int group_size = G > 0 ? G : matrix.group_size;
    const row_group group = group_of_thread(group_size);
    const int64_t groups_per_block = blockDim.x / group_size;
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
        if (CHUNKS && do_chunks) {
            sum_long_chunks<Value, Column, TILE, X_TILES>(matrix, columns, values, x, layout,
                                                          num_vectors, t0, width, group, first_item,
                                                          item_stride, chunk_sums);
            continue;
        }
        for (int64_t base = first_item; base < matrix.num_rows; base += item_stride * ROWS) {
            int64_t begin[ROWS], end[ROWS];
            bool mine[ROWS]; /* a row of this launch's short pass */
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int64_t row = base + r * item_stride;
                begin[r] = 0;
                end[r] = 0;
                mine[r] = row < matrix.num_rows;
                if (mine[r]) {
                    begin[r] = matrix.row_ptr[row];
                    end[r] = matrix.row_ptr[row + 1];
                }
                if (end[r] - begin[r] > matrix.chunk_length) {
                    mine[r] = false; /* a long row: its chunks are summed apart */
                    end[r] = begin[r];
                }
            }
            double sum[ROWS][TILE];
            rows_sum<Value, Column, TILE, ROWS, UNROLL, X_TILES>(columns, values, begin, end, group,
                                                                 x, layout, t0, width, sum);
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (mine[r]) {
                    store_row<TILE>(group, sum[r], width, layout, base + r * item_stride, t0, y);
                }
            }
        }
    }
}

/* Each long row's value for each vector: its chunk sums added in chunk
 * order, starting from the first; a block per row and vector. The block's
 * threads stage up to staged_chunk_sums of the row's chunk sums in shared
 * memory at once (16 loads a thread in flight, one trip to memory), and
 * thread 0 then adds them in order, reading 16 ahead of its additions.
 * Measured on an H200, a row of 1024 chunks: a warp loading 128 sums a
 * trip took 13-15 us, one trip after another; staged, the additions wait
 * on nothing but each other. */
constexpr int staged_chunk_sums = 16 * threads_per_block;

__global__ void __launch_bounds__(threads_per_block)
    add_chunk_sums(spart_device_csr matrix, const double *__restrict__ chunk_sums,
                   int64_t num_vectors, vector_layout layout, double *__restrict__ y)
{
    __shared__ double staged[staged_chunk_sums];
    const int64_t count = matrix.num_long_rows * num_vectors;
    for (int64_t item = blockIdx.x; item < count; item += gridDim.x) {
        const int64_t long_row = item / num_vectors;
        const int64_t t = item - long_row * num_vectors;
        const int64_t first = matrix.long_first_chunk[long_row];
        const int64_t last = matrix.long_first_chunk[long_row + 1];
        double total = 0.0;
        for (int64_t piece = first; piece < last; piece += staged_chunk_sums) {
            const int n =
                last - piece < staged_chunk_sums ? (int)(last - piece) : staged_chunk_sums;
            double loaded[staged_chunk_sums / threads_per_block];
#pragma unroll
            for (int i = 0; i < staged_chunk_sums / threads_per_block; i++) {
                const int k = (int)threadIdx.x + i * threads_per_block;
                loaded[i] = k < n ? chunk_sums[(piece + k) * num_vectors + t] : 0.0;
            }
#pragma unroll
            for (int i = 0; i < staged_chunk_sums / threads_per_block; i++) {
                const int k = (int)threadIdx.x + i * threads_per_block;
                if (k < n) {
                    staged[k] = loaded[i];
                }
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                int k = 0;
                if (piece == first) {
                    total = staged[0]; /* the first chunk's sum starts the total */
                    k = 1;
                }
                for (; k + 16 <= n; k += 16) {
                    double next[16];
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        next[j] = staged[k + j];
                    }
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        total = __dadd_rn(total, next[j]);
                    }
                }
                for (; k < n; k++) {
                    total = __dadd_rn(total, staged[k]);
                }
            }
            __syncthreads(); /* the piece is added before the next overwrites it */
        }
        if (threadIdx.x == 0) {
            const int64_t row = matrix.long_rows[long_row];
            y[num_vectors == 1 ? row : row * layout.y_row + t * layout.y_vector] = total;
        }
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

/* The launches of one product, for one value type, column type, tile
 * width and row shape (ROWS rows a group, UNROLL entries a lane per
 * round; G the group size when fixed at compile time, else 0): the rows
 * and the long rows' chunks, then the chunk sums. With long_rows_only,
 * the long rows alone (the others summed by another kernel). */
template <typename Value, typename Column, int TILE, int ROWS, int UNROLL, int G = 0,
          bool X_TILES = false>
cudaError_t launch_product(const spart_device_csr &matrix, const Column *columns,
                           const Value *values, const double *x, const vector_layout &layout,
                           int64_t num_vectors, double *y, double *chunk_sums, cudaStream_t stream,
                           bool long_rows_only = false)
{
    const int64_t groups_per_block = threads_per_block / matrix.group_size;
    const int64_t tiles = (num_vectors + TILE - 1) / TILE;
    const unsigned tile_blocks = (unsigned)(tiles < max_blocks_y ? tiles : max_blocks_y);
    const unsigned chunk_blocks =
        (unsigned)(matrix.num_long_chunks > 0 ? blocks_for(matrix.num_long_chunks, groups_per_block)
                                              : 0);
    const int64_t row_items = (matrix.num_rows + ROWS - 1) / ROWS;
    const unsigned row_blocks =
        (unsigned)(matrix.num_rows > 0 && !long_rows_only ? blocks_for(row_items, groups_per_block)
                                                          : 0);
    if (chunk_blocks + row_blocks == 0) {
        return cudaSuccess;
    }
    const dim3 grid(chunk_blocks + row_blocks, tile_blocks);
    if (matrix.num_long_chunks == 0) {
        return launch(product_rows<Value, Column, TILE, ROWS, UNROLL, false, G, X_TILES>, grid,
                      stream, matrix, columns, values, x, layout, num_vectors, y, chunk_sums, 0u);
    }
    cudaError_t error =
        launch(product_rows<Value, Column, TILE, ROWS, UNROLL, true, G, X_TILES>, grid, stream,
               matrix, columns, values, x, layout, num_vectors, y, chunk_sums, chunk_blocks);
    if (error != cudaSuccess) {
        return error;
    }
    unsigned blocks = (unsigned)blocks_for(matrix.num_long_rows * num_vectors, 1);
    return launch(add_chunk_sums, dim3(blocks), stream, matrix, (const double *)chunk_sums,
                  num_vectors, layout, y);
}

/* The row shape for a tile width, group size and mean row length. A group
 * size g < 32 means rows of 1 to 4 entries a lane on average (the plan
 * doubles g while the mean row holds 2g entries or more): one vector
 * takes four rows a group and two entries a lane per round, so that most
 * rows cost one round trip; g = 32 with rows of 1 to 2 entries a lane
 * the same, g fixed at compile time (the forward operator of the ctis
 * tutorial, 32 entries a row: 10.8 -> 7.5 us on an H200, where two rows
 * and four entries a round left three of a lane's four slots empty and
 * took twice the warps); g = 16, or g = 32 with rows of up to 4 entries
 * a lane, two rows and four entries a round; longer rows eight entries a
 * round, with g = 32 fixed at compile time. Tiles of 4 vectors take one
 * row and four entries a round, each holding TILE values of x; tiles of 8
 * one row and two entries a round (on an H200, the CTIS operators of
 * bench_cuda_product --ctis: as fast or up to 15 % faster than four,
 * docs/benchmarks.md in git history "Eight vectors in tiles"), except that tiles of 8
 * vectors as they lie (not in 64-byte tiles) at g = 32 without long rows
 * take one entry a round with g fixed at compile time (8 vectors of the
 * transpose of CTIS c, rows of 256 entries: 0.111 -> 0.093 ms on an H200,
 * docs/benchmarks.md in git history "Eight vectors by quads of lanes"). (These shapes
 * take 32 to 64 registers for one vector, 48 to 96 for tiles; two rows a
 * group in tiles took 100.) One vector over rows of
 * about g entries, g = 2, 4, 8 or 16, takes a thread a row
 * (spart_product::launch_rows_by_thread), its long rows' chunk sums then
 * added here. */
template <typename Value, typename Column, int TILE, bool X_TILES = false>
cudaError_t launch_for_shape(const spart_device_csr &matrix, const Column *columns,
                             const Value *values, const double *x, const vector_layout &layout,
                             int64_t num_vectors, double *y, double *chunk_sums,
                             cudaStream_t stream)
{
    const int g = matrix.group_size;
    const int64_t mean = matrix.num_rows > 0 ? matrix.num_entries / matrix.num_rows : 0;
    if constexpr (TILE == 1) {
        if (spart_device_rows_fit_one_round(&matrix)) {
            cudaError_t error =
                spart_product::launch_rows_by_thread(matrix, x, y, chunk_sums, stream);
            if (error != cudaSuccess || matrix.num_long_chunks == 0) {
                return error;
            }
            const vector_layout one = {1, 1, 1, 1, 1};
            unsigned blocks = (unsigned)blocks_for(matrix.num_long_rows, 1);
            return launch(add_chunk_sums, dim3(blocks), stream, matrix, (const double *)chunk_sums,
                          (int64_t)1, one, y);
        }
        if (g < 16) {
            return launch_product<Value, Column, TILE, 4, 2>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
        }
        if (g == 32 && mean < 2 * 32) {
            return launch_product<Value, Column, TILE, 4, 2, 32>(
                matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
        }
        if (g == 16 || mean <= 4 * 32) {
            return launch_product<Value, Column, TILE, 2, 4>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
        }
        /* Here g = 32 (g < 16 and g = 16 were taken above), fixed at
         * compile time. */
        return launch_product<Value, Column, TILE, 1, 8, 32>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
    } else {
        (void)g, (void)mean;
        if constexpr (TILE == 4 && X_TILES) {
            /* A column's 4 values in one 32-byte sector (spart_cuda_pack_x4):
             * 16 values of x in flight a lane, as 8-vector tiles take. */
            if (g == 32) {
                return launch_product<Value, Column, 4, 1, 4, 32, true>(
                    matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
            }
            if (g == 16) {
                return launch_product<Value, Column, 4, 1, 4, 0, true>(
                    matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
            }
            return launch_product<Value, Column, 4, 2, 2, 0, true>(
                matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
        }
        if constexpr (TILE == 8 && !X_TILES) {
            if (g == 32 && matrix.num_long_chunks == 0) {
                return launch_product<Value, Column, TILE, 1, 1, 32>(
                    matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
            }
        }
        if constexpr (TILE == 8) {
            return launch_product<Value, Column, TILE, 1, 2, 0, X_TILES>(
                matrix, columns, values, x, layout, num_vectors, y, chunk_sums, stream);
        } else {
            return launch_product<Value, Column, TILE, 1, 4>(matrix, columns, values, x, layout,
                                                             num_vectors, y, chunk_sums, stream);
        }
    }
}

template <int TILE, bool X_TILES = false>
cudaError_t launch_for_types(const spart_device_csr &matrix, const double *x,
                             const vector_layout &layout, int64_t num_vectors, double *y,
                             double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_for_shape<double, int32_t, TILE, X_TILES>(matrix, matrix.columns32,
                                                                matrix.values64, x, layout,
                                                                num_vectors, y, chunk_sums, stream);
    }
    if (matrix.values64 != nullptr) {
        return launch_for_shape<double, int64_t, TILE, X_TILES>(matrix, matrix.columns64,
                                                                matrix.values64, x, layout,
                                                                num_vectors, y, chunk_sums, stream);
    }
    if (matrix.columns32 != nullptr) {
        return launch_for_shape<float, int32_t, TILE, X_TILES>(matrix, matrix.columns32,
                                                               matrix.values32, x, layout,
                                                               num_vectors, y, chunk_sums, stream);
    }
    return launch_for_shape<float, int64_t, TILE, X_TILES>(
        matrix, matrix.columns64, matrix.values32, x, layout, num_vectors, y, chunk_sums, stream);
}

/* The long rows alone of a product in tiles of 8 vectors (their chunks,
 * then the chunk sums), beside spart_cuda_csr_product_short_rows_in_tiles,
 * which leaves them out. */
cudaError_t launch_long_rows_in_tiles(const spart_device_csr &matrix, const double *x_tiles,
                                      const vector_layout &layout, int64_t num_vectors, double *y,
                                      double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_product<double, int32_t, 8, 1, 2, 0, true>(
            matrix, matrix.columns32, matrix.values64, x_tiles, layout, num_vectors, y, chunk_sums,
            stream, true);
    }
    if (matrix.values64 != nullptr) {
        return launch_product<double, int64_t, 8, 1, 2, 0, true>(
            matrix, matrix.columns64, matrix.values64, x_tiles, layout, num_vectors, y, chunk_sums,
            stream, true);
    }
    if (matrix.columns32 != nullptr) {
        return launch_product<float, int32_t, 8, 1, 2, 0, true>(
            matrix, matrix.columns32, matrix.values32, x_tiles, layout, num_vectors, y, chunk_sums,
            stream, true);
    }
    return launch_product<float, int64_t, 8, 1, 2, 0, true>(
        matrix, matrix.columns64, matrix.values32, x_tiles, layout, num_vectors, y, chunk_sums,
        stream, true);
}

/* The long rows alone of a product of vectors in C order (their chunks,
 * then the chunk sums), for the plan by row
 * (kernels/csr_product_by_row.cu sums the other rows). */
template <int TILE>
cudaError_t launch_long_rows_c_order(const spart_device_csr &matrix, const double *x,
                                     const vector_layout &layout, int64_t num_vectors, double *y,
                                     double *chunk_sums, cudaStream_t stream)
{
    if (matrix.values64 != nullptr && matrix.columns32 != nullptr) {
        return launch_product<double, int32_t, TILE, 1, 2>(matrix, matrix.columns32,
                                                           matrix.values64, x, layout, num_vectors,
                                                           y, chunk_sums, stream, true);
    }
    if (matrix.values64 != nullptr) {
        return launch_product<double, int64_t, TILE, 1, 2>(matrix, matrix.columns64,
                                                           matrix.values64, x, layout, num_vectors,
                                                           y, chunk_sums, stream, true);
    }
    if (matrix.columns32 != nullptr) {
        return launch_product<float, int32_t, TILE, 1, 2>(matrix, matrix.columns32, matrix.values32,
                                                          x, layout, num_vectors, y, chunk_sums,
                                                          stream, true);
    }
    return launch_product<float, int64_t, TILE, 1, 2>(matrix, matrix.columns64, matrix.values32, x,
                                                      layout, num_vectors, y, chunk_sums, stream,
                                                      true);
}

/* The product for any layout: tiles of 1, 4 or 8 vectors; x in tiles of
 * 8 interleaved vectors where x_tiles says (vector_layout). */
cudaError_t launch_any(const spart_device_csr &matrix, const double *x, const vector_layout &layout,
                       int64_t num_vectors, double *y, double *chunk_sums, bool x_tiles,
                       cudaStream_t stream)
{
    if (num_vectors <= 0) {
        return cudaSuccess;
    }
    if (x_tiles) {
        return launch_for_types<8, true>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
    }
    if (num_vectors == 1) {
        return launch_for_types<1>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
    }
    if (num_vectors <= 4) {
        return launch_for_types<4>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
    }
    return launch_for_types<8>(matrix, x, layout, num_vectors, y, chunk_sums, stream);
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
    const vector_layout interleaved = {num_vectors, 1, num_vectors, 1, 1};
    return launch_any(*matrix, x, interleaved, num_vectors, y, chunk_sums, false,
                      static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_csr_product_c_order(const spart_device_csr *matrix, const double *x,
                                              int64_t num_vectors, double *x_tiles, double *y,
                                              double *chunk_sums, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int64_t columns = matrix->num_columns;
    if (x_tiles == nullptr) {
        const vector_layout c_order = {1, columns, 1, matrix->num_rows, columns};
        return launch_any(*matrix, x, c_order, num_vectors, y, chunk_sums, false, s);
    }
    if (num_vectors <= 4) {
        /* 2 to 4 vectors: one tile of 4, a column's values in one sector */
        const int error = spart_cuda_pack_x4(x, columns, num_vectors, x_tiles, stream);
        if (error != cudaSuccess) {
            return error;
        }
        const vector_layout in_four = {4, 1, 1, matrix->num_rows, columns};
        return launch_for_types<4, true>(*matrix, x_tiles, in_four, num_vectors, y, chunk_sums, s);
    }
    const int error = spart_cuda_pack_tiles(x, columns, num_vectors, x_tiles, stream);
    if (error != cudaSuccess) {
        return error;
    }
    const vector_layout in_tiles = {8, 1, 1, matrix->num_rows, columns};
    if (spart_device_rows_are_short(matrix)) {
        const int short_error =
            spart_cuda_csr_product_short_rows_in_tiles(matrix, x_tiles, num_vectors, y, stream);
        if (short_error != cudaSuccess || matrix->num_long_chunks == 0) {
            return short_error;
        }
        return launch_long_rows_in_tiles(*matrix, x_tiles, in_tiles, num_vectors, y, chunk_sums, s);
    }
    return launch_any(*matrix, x_tiles, in_tiles, num_vectors, y, chunk_sums, true, s);
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

extern "C" int spart_cuda_csr_product_long_rows(const spart_device_csr *matrix, const double *x,
                                                int x_in_tiles, int64_t num_vectors, double *y,
                                                double *chunk_sums, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const vector_layout c_order = {1, matrix->num_columns, 1, matrix->num_rows,
                                   matrix->num_columns};
    if (num_vectors <= 0 || matrix->num_long_chunks == 0) {
        return cudaSuccess;
    }
    if (x_in_tiles) {
        const vector_layout in_tiles = {8, 1, 1, matrix->num_rows, matrix->num_columns};
        return launch_long_rows_in_tiles(*matrix, x, in_tiles, num_vectors, y, chunk_sums, s);
    }
    if (num_vectors == 1) {
        return launch_long_rows_c_order<1>(*matrix, x, c_order, 1, y, chunk_sums, s);
    }
    if (num_vectors <= 4) {
        return launch_long_rows_c_order<4>(*matrix, x, c_order, num_vectors, y, chunk_sums, s);
    }
    return launch_long_rows_c_order<8>(*matrix, x, c_order, num_vectors, y, chunk_sums, s);
}

extern "C" int spart_cuda_csr_product_tile_design(const spart_device_csr *matrix,
                                                  const double *x_tiles, int64_t num_vectors,
                                                  double *y, double *chunk_sums, int design,
                                                  void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int64_t columns = matrix->num_columns;
    const vector_layout in_four = {4, 1, 1, matrix->num_rows, columns};
    const vector_layout in_eight = {8, 1, 1, matrix->num_rows, columns};
    if (num_vectors < 2 || num_vectors > 8) {
        return cudaErrorInvalidValue;
    }
    if (design == 0) {
        return num_vectors <= 4 ? launch_for_types<4, true>(*matrix, x_tiles, in_four, num_vectors,
                                                            y, chunk_sums, s)
                                : launch_for_types<8, true>(*matrix, x_tiles, in_eight, num_vectors,
                                                            y, chunk_sums, s);
    }
    if (matrix->values32 == nullptr || matrix->columns32 == nullptr || matrix->group_size != 32 ||
        design < 1 || design > 2) {
        return cudaErrorNotSupported;
    }
    const float *values = matrix->values32;
    const int32_t *cols = matrix->columns32;
    if (num_vectors <= 4) {
        return design == 1
                   ? launch_product<float, int32_t, 4, 1, 8, 0, true>(
                         *matrix, cols, values, x_tiles, in_four, num_vectors, y, chunk_sums, s)
                   : launch_product<float, int32_t, 4, 2, 4, 32, true>(
                         *matrix, cols, values, x_tiles, in_four, num_vectors, y, chunk_sums, s);
    }
    return design == 1
               ? launch_product<float, int32_t, 8, 1, 4, 0, true>(
                     *matrix, cols, values, x_tiles, in_eight, num_vectors, y, chunk_sums, s)
               : launch_product<float, int32_t, 8, 1, 2, 32, true>(
                     *matrix, cols, values, x_tiles, in_eight, num_vectors, y, chunk_sums, s);
}
