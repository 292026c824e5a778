/*
 * kernels/csr_row_sum.cuh: the sum of CSR rows by a group of g lanes, in
 * the order of host/csr_product.c, shared by the products
 * (kernels/csr_product.cu) and the MART step that backprojects and
 * updates in one pass (kernels/mart_steps.cu):
 *
 *   - lane l of the row's g lanes sums entries l, l+g, l+2g, ... of the
 *     row (or of one chunk of a long row) in that order with fma, starting
 *     from +0.0; float32 values are converted to double first;
 *   - the g lane sums combine in a binary tree: lane l += lane l+h for
 *     h = g/2, ..., 1 (__shfl_down_sync within the group gives lane l
 *     exactly lane l+h's value, so the pairs are the host loop's).
 *
 * Every fma is an explicit __fma_rn and every addition an explicit
 * __dadd_rn (the kernels are also built with --fmad=false).
 *
 * Speed without changing that order: a group sums ROWS rows at once and
 * each lane loads UNROLL of its entries of each row before any fma, so
 * that ROWS x UNROLL loads (and then as many gathers of x) are in flight
 * together. An entry a lane does not have (its row is shorter) is neither
 * loaded nor added: the fma is skipped, not done with 0, so a sum keeps
 * its sign and its bits. Short rows (a few entries a lane) then cost one
 * round trip to memory instead of one per entry.
 *
 * Every load of a round is issued unconditionally (a slot past the end of
 * its row reads the matrix's first entry, whose term is then not added):
 * loads under a condition were issued one slot after another, each waiting
 * for its column before the next (measured on an H200: 45 % slower on a
 * band matrix than loads without conditions).
 */
#ifndef SPART_CSR_ROW_SUM_CUH
#define SPART_CSR_ROW_SUM_CUH

#include <stdint.h>

namespace spart_rows
{

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

/* The entries [*begin, *end) of row `row` for a kernel whose lanes take a
 * row each: empty past the last row, whose lanes load the last row
 * pointer instead (every lane issues its load, none under a branch). */
__device__ __forceinline__ void lane_row_range(const int64_t *row_ptr, int64_t num_rows,
                                               int64_t row, int64_t *begin, int64_t *end)
{
    const bool inside = row < num_rows;
    *begin = row_ptr[inside ? row : num_rows];
    *end = inside ? row_ptr[row + 1] : *begin;
}

/* The row starts of one block of a short-row index (one byte a row,
 * SPART_DEVICE_SHORT_ROW_BLOCK = 256 rows: 8 a lane, the lane's eight
 * lengths in `word`), scanned by a whole warp into starts[0 .. 256]
 * relative to the block's first entry: each lane's rows within its share,
 * then the lanes' shares across the warp. */
__device__ __forceinline__ void scan_short_row_starts(uint64_t word, int lane, int *starts)
{
    int within[8];
    int share = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        within[k] = share;
        share += (int)((word >> (8 * k)) & 0xffu);
    }
    int inclusive = share;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const int before = __shfl_up_sync(0xffffffffu, inclusive, d);
        inclusive += lane >= d ? before : 0;
    }
#pragma unroll
    for (int k = 0; k < 8; k++) {
        starts[lane * 8 + k] = inclusive - share + within[k];
    }
    if (lane == 31) {
        starts[8 * 32] = inclusive;
    }
}

/* Where vector t = t0 + j of a tile of vectors t0, t0 + 1, ... lies:
 * x[column * x_column + t0 * x_tile + j * x_vector] and y[row * y_row + t *
 * y_vector]. Interleaved vectors (X[column * T + t]) have x_column = T,
 * x_vector = x_tile = 1; vectors one after the other in C order
 * (x[t * columns + column]) have x_column = 1, x_vector = x_tile =
 * columns; tiles of 8 interleaved vectors one after the other (the
 * tile of vectors t0 .. t0 + 7 at x[t0 * columns], see
 * spart_cuda_csr_product_c_order) have x_column = 8, x_vector = 1, x_tile
 * = columns; a tile of 2 or 4 interleaved vectors (x[column * TILE + j],
 * kernels/csr_product_frames.cu) the same with TILE for 8. A single vector
 * ignores the layout (x[column], y[row]). */
struct vector_layout {
    int64_t x_column;
    int64_t x_vector;
    int64_t y_row;
    int64_t y_vector;
    int64_t x_tile;
};

/* One round of rows_sum: entries offset + u g, u < UNROLL, of each of the
 * ROWS rows, all loaded first, then added in entry order row by row. With
 * CHECKED, a slot past the end of its row loads the matrix's first entry
 * instead (it exists: some row of the round has an entry), so that every
 * load is still issued without a branch, and its term is not added;
 * without, every slot must lie in its row (the rounds before the last). */
template <typename Value, typename Column, int TILE, int ROWS, int UNROLL, bool CHECKED,
          bool X_TILES = false>
__device__ __forceinline__ void
round_sum(const Column *__restrict__ columns, const Value *__restrict__ values,
          const int64_t (&begin)[ROWS], const int (&length)[ROWS], int offset, int g,
          const double *__restrict__ x, const vector_layout &layout, int64_t t0, int width,
          double (&sum)[ROWS][TILE])
{
    double value[ROWS][UNROLL];
    double xv[ROWS][UNROLL][TILE];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int k = offset + u * g;
            const int64_t at = !CHECKED || k < length[r] ? begin[r] + k : 0;
            value[r][u] = (double)values[at];
            const int64_t column = (int64_t)columns[at];
            if constexpr (X_TILES && (TILE == 2 || TILE == 4 || TILE == 8)) {
                /* A column's TILE values lie together, 8 TILE-byte aligned:
                 * TILE / 2 16-byte loads, one 32-byte sector for TILE <= 4.
                 * (Vectors past `width` read the tile's padding, whose sums
                 * are not stored.) */
                const double2 *tile =
                    reinterpret_cast<const double2 *>(x + column * TILE + t0 * layout.x_tile);
#pragma unroll
                for (int h = 0; h < TILE / 2; h++) {
                    const double2 pair = tile[h];
                    xv[r][u][2 * h] = pair.x;
                    xv[r][u][2 * h + 1] = pair.y;
                }
            } else {
#pragma unroll
                for (int j = 0; j < TILE; j++) {
                    if (TILE == 1) {
                        xv[r][u][j] = x[column];
                    } else {
                        const int64_t jj = j < width ? j : 0;
                        xv[r][u][j] =
                            x[column * layout.x_column + t0 * layout.x_tile + jj * layout.x_vector];
                    }
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const bool present = !CHECKED || offset + u * g < length[r];
#pragma unroll
            for (int j = 0; j < TILE; j++) {
                const double term = __fma_rn(value[r][u], xv[r][u][j], sum[r][j]);
                sum[r][j] = present ? term : sum[r][j];
            }
        }
    }
}

/* The sums of ROWS rows (or chunks) [begin[r], end[r]) for vectors t0 ..
 * t0 + width - 1 (width <= TILE), in lane 0 of the group: sum[r][j]. An
 * empty range gives +0.0. All g lanes of the group must call it with the
 * same ranges. Lanes other than 0 end with values nobody reads (the host
 * never forms them). */
template <typename Value, typename Column, int TILE, int ROWS, int UNROLL, bool X_TILES = false>
__device__ __forceinline__ void
rows_sum(const Column *__restrict__ columns, const Value *__restrict__ values,
         const int64_t (&begin)[ROWS], const int64_t (&end)[ROWS], const row_group &group,
         const double *__restrict__ x, const vector_layout &layout, int64_t t0, int width,
         double (&sum)[ROWS][TILE])
{
    /* Offsets within a row (at most a chunk, SPART_CHUNK_LENGTH) are ints,
     * which keeps registers for the loads in flight. */
    int length[ROWS];
    int longest = 0;
    int shortest = 1 << 30;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
#pragma unroll
        for (int j = 0; j < TILE; j++) {
            sum[r][j] = 0.0;
        }
        length[r] = (int)(end[r] - begin[r]);
        longest = length[r] > longest ? length[r] : longest;
        shortest = length[r] < shortest ? length[r] : shortest;
    }
    const int g = group.size;
    int offset = group.lane;
    /* Rounds that lie in every row, without checks, then the rest. The
     * entries of each lane still come in order: l, l + g, l + 2g, ... Only
     * shapes for rows of several rounds (UNROLL >= 4) take the unchecked
     * rounds: on an H200 they made a band of 2000-entry rows 20 % faster,
     * and the short rows of the shape with UNROLL = 2 (rows of 1 to 2
     * entries a lane, which seldom fill a round) 15 to 20 % slower. */
    if constexpr (UNROLL >= 4) {
        for (; offset + (UNROLL - 1) * g < shortest; offset += UNROLL * g) {
            round_sum<Value, Column, TILE, ROWS, UNROLL, false, X_TILES>(
                columns, values, begin, length, offset, g, x, layout, t0, width, sum);
        }
    }
    for (; offset < longest; offset += UNROLL * g) {
        round_sum<Value, Column, TILE, ROWS, UNROLL, true, X_TILES>(
            columns, values, begin, length, offset, g, x, layout, t0, width, sum);
    }
    /* The tree: lane l += lane l + h, h = g/2, ..., 1. */
    for (int h = group.size / 2; h >= 1; h /= 2) {
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
#pragma unroll
            for (int j = 0; j < TILE; j++) {
                const double other = __shfl_down_sync(group.mask, sum[r][j], h, group.size);
                sum[r][j] = __dadd_rn(sum[r][j], other);
            }
        }
    }
}

} // namespace spart_rows

#endif /* SPART_CSR_ROW_SUM_CUH */
