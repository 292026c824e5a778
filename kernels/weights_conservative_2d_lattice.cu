/*
 * kernels/weights_conservative_2d_lattice.cu: the conservative 2-D weights
 * onto a lattice on the device, the twin of
 * src/weights/weights_conservative_2d_clip.c (src/weights/weights_clip_device.h
 * says what the entries promise). One thread per input cell, in both
 * passes: the cell's corners in lattice units, its block and kind
 * (spart_clip_cell_prepare), then
 *   - inside one lattice cell: one entry, its weights_input;
 *   - within 2 x 2 lattice cells: the four overlaps of
 *     spart_clip_overlaps_small, the non-zero ones in C order;
 *   - otherwise the walk along its edges (clip_lattice_walk.h): a block of
 *     at most SPART_CLIP_DEVICE_WINDOW lattice cells in one window, in C
 *     order; a larger one a column at a time, right to left, each column
 *     in windows of SPART_CLIP_DEVICE_WINDOW rows from the top down, so
 *     that its entries come out in reverse C order and are written from
 *     the end of the cell's slots backwards.
 * Every number comes from the headers the host kernel uses, in the same
 * order; the windows give each lattice cell the sums the host's whole
 * block gives it. The count pass runs the same code and counts.
 *
 * A larger block's columns do not depend on one another (each column's
 * windows start from the cell alone), so such cells (coarse input cells
 * over a fine lattice: 64^2 onto 2048^2 is 32 x 32 lattice cells a cell)
 * are not walked by their own thread: the thread kernels mark them, their
 * list is made by a scan of the marks (in cell order), and a warp takes
 * each, a lane a column (32 columns a round, from the right). Counting,
 * the lanes' column counts are summed (integers); writing, each lane
 * counts its column, an exclusive scan across the lanes (and the rounds
 * before) gives the column's end, and the lane walks the column again
 * writing backwards from there: the slots and the values the one-thread
 * walk gives, with a warp on the cell instead of a thread. (The first
 * design, a thread a cell walking its columns in turn, was 3.1x slower on
 * 64^2 onto 2048^2: docs/dev/weights-device-notes.md; it lives in commit
 * d784594.)
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include "launch.cuh"
#include "weights_conservative_2d_clip.cuh"

namespace
{

using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch_items;
using spart_launch::threads_per_block;

/* The element as the kernels read it. */
struct lattice_problem {
    const double *x, *y; /* input vertices */
    int64_t num_x, num_y;
    const double *weights_input;
    const double *x_output, *y_output; /* the lattice's vertices */
    int64_t num_cells_x, num_cells_y;
};

/* The lattice's origin and steps, as the host reads them: x_output[0],
 * x_output[num_y] - x_output[0], y_output[0], y_output[1] - y_output[0]
 * (each thread reads the same few numbers, from the cache). */
struct lattice_frame {
    double origin_x, origin_y, step_x, step_y;
};

__device__ __forceinline__ lattice_frame frame_of(const lattice_problem &p)
{
    lattice_frame f;
    f.origin_x = p.x_output[0];
    f.origin_y = p.y_output[0];
    f.step_x = p.x_output[p.num_cells_y + 1] - f.origin_x;
    f.step_y = p.y_output[1] - f.origin_y;
    return f;
}

/* Where a cell's entries go: counted only (COUNT), or written at `first`
 * onwards (forwards) or before `end` (backwards). */
template <bool WRITE> struct entry_sink {
    int64_t count;
    int64_t index_input;
    int64_t first, end;
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;

    __device__ __forceinline__ void put(int64_t slot, int64_t index_output, double value)
    {
        indices_input[slot] = index_input;
        indices_output[slot] = index_output;
        values[slot] = value;
    }

    __device__ __forceinline__ void forward(int64_t index_output, double value)
    {
        if (WRITE) {
            put(first + count, index_output, value);
        }
        count++;
    }

    __device__ __forceinline__ void backward(int64_t index_output, double value)
    {
        if (WRITE) {
            put(end - 1 - count, index_output, value);
        }
        count++;
    }
};

/* The corners of input cell (i, j) in lattice units, winding order. */
__device__ __forceinline__ void corners_in_lattice_units(const lattice_problem &p,
                                                         const lattice_frame &f, int64_t i,
                                                         int64_t j, double *cx, double *cy)
{
    const int64_t v00 = i * p.num_y + j, v10 = v00 + p.num_y;
    const int64_t corner[4] = {v00, v10, v10 + 1, v00 + 1};
    for (int k = 0; k < 4; k++) {
        cx[k] = spart_clip_lattice_units(p.x[corner[k]], f.origin_x, f.step_x);
        cy[k] = spart_clip_lattice_units(p.y[corner[k]], f.origin_y, f.step_y);
    }
}

/* The walk of a cell whose block has at most SPART_CLIP_DEVICE_WINDOW
 * lattice cells: one window, entries in C order. */
template <bool WRITE>
__device__ void walk_small_block(const lattice_problem &p, const spart_clip_cell &cell,
                                 entry_sink<WRITE> &sink)
{
    spart_clip_cell_sums cells[SPART_CLIP_DEVICE_WINDOW];
    spart_clip_column_sums columns[SPART_CLIP_DEVICE_WINDOW];
    const spart_clip_block &block = cell.block;
    spart_clip_sums sums = {block.width, block.height, 0,     block.width,
                            0,           block.height, cells, columns};
    spart_clip_sums_clear(&sums);
    spart_clip_add_cell(&sums, cell.x, cell.y);
    for (int64_t c = 0; c < block.width; c++) {
        spart_clip_finish_rows(&sums, c, columns[c].above);
        const int64_t first_output = (block.lower_x + c) * p.num_cells_y + block.lower_y;
        for (int64_t r = spart_clip_lowest_row(&sums, c); r < block.height; r++) {
            const double overlap = spart_clip_window_overlap(&sums, c, r);
            if (overlap != 0) {
                sink.forward(first_output + r, overlap * cell.weight);
            }
        }
    }
}

/* Column c of a larger cell's walk, in windows of rows from the top down;
 * its entries in reverse C order (backwards from the sink's end). The
 * column depends on the cell alone, not on the columns walked before. */
template <bool WRITE>
__device__ void walk_large_column(const lattice_problem &p, const spart_clip_cell &cell, int64_t c,
                                  entry_sink<WRITE> &sink)
{
    spart_clip_cell_sums cells[SPART_CLIP_DEVICE_WINDOW];
    spart_clip_column_sums column;
    const spart_clip_block &block = cell.block;
    spart_clip_sums sums = {block.width, block.height, 0, 1, 0, 0, cells, &column};
    const int64_t first_output = (block.lower_x + c) * p.num_cells_y + block.lower_y;
    sums.first_column = c;
    double owed = 0.0;
    int64_t top = block.height; /* the window's rows lie below `top` */
    int64_t lowest = 0;
    for (bool first_window = true; first_window || top > lowest; first_window = false) {
        const int64_t bottom = top > SPART_CLIP_DEVICE_WINDOW ? top - SPART_CLIP_DEVICE_WINDOW : 0;
        sums.first_row = bottom;
        sums.num_rows = top - bottom;
        spart_clip_sums_clear(&sums);
        spart_clip_add_cell(&sums, cell.x, cell.y);
        if (first_window) {
            owed = column.above;
            lowest = spart_clip_lowest_row(&sums, c);
        }
        owed = spart_clip_finish_rows(&sums, c, owed);
        for (int64_t r = top - 1; r >= bottom && r >= lowest; r--) {
            const double overlap = spart_clip_window_overlap(&sums, c, r);
            if (overlap != 0) {
                sink.backward(first_output + r, overlap * cell.weight);
            }
        }
        top = bottom;
    }
}

/* Whether a cell takes the walk in columns (a warp's work). */
__device__ __forceinline__ bool walks_in_columns(const spart_clip_cell &cell)
{
    return cell.kind == SPART_CLIP_WALK &&
           cell.block.width * cell.block.height > SPART_CLIP_DEVICE_WINDOW;
}

/* Input cell k = i * (num_y - 1) + j made ready. */
__device__ void prepare_cell(const lattice_problem &p, const lattice_frame &f, int64_t k,
                             spart_clip_cell *cell)
{
    /* the division is 32-bit where the counts allow (a 64-bit one costs
     * several times more) */
    const int64_t num_cells_y_input = p.num_y - 1;
    int64_t i, j;
    if (k <= (int64_t)UINT32_MAX && num_cells_y_input <= (int64_t)UINT32_MAX) {
        const uint32_t k32 = (uint32_t)k, n32 = (uint32_t)num_cells_y_input;
        const uint32_t i32 = k32 / n32;
        i = i32;
        j = k32 - i32 * n32;
    } else {
        i = k / num_cells_y_input;
        j = k % num_cells_y_input;
    }
    double cx[4], cy[4];
    corners_in_lattice_units(p, f, i, j, cx, cy);
    const double weight_input = p.weights_input != NULL ? p.weights_input[k] : 1.0;
    spart_clip_cell_prepare(cx, cy, p.num_cells_x, p.num_cells_y, weight_input, cell);
}

/* Weigh a prepared cell into `sink` (not one that walks in columns: the
 * warps take those). */
template <bool WRITE>
__device__ void weigh_cell(const lattice_problem &p, const spart_clip_cell &cell,
                           entry_sink<WRITE> &sink)
{
    const spart_clip_block &block = cell.block;
    switch (cell.kind) {
    case SPART_CLIP_INSIDE_ONE:
        sink.forward(block.lower_x * p.num_cells_y + block.lower_y, cell.weight);
        return;
    case SPART_CLIP_ONE_ROW:
    case SPART_CLIP_ONE_COLUMN:
    case SPART_CLIP_2X2: {
        double overlap[2][2];
        spart_clip_overlaps_small(&cell, overlap);
        for (int64_t c = 0; c < 2; c++) {
            const int64_t first_output = (block.lower_x + c) * p.num_cells_y + block.lower_y;
            for (int64_t r = 0; r < 2; r++) {
                if (overlap[c][r] != 0) {
                    sink.forward(first_output + r, overlap[c][r] * cell.weight);
                }
            }
        }
        return;
    }
    case SPART_CLIP_WALK: walk_small_block<WRITE>(p, cell, sink); return;
    default: return; /* SPART_CLIP_NONE */
    }
}

/* Pass 1: counts[k] = the entries of input cell k; -1 for a cell that
 * walks in columns (a warp counts it), and then *any_columns = 1 (every
 * writer writes the same 1). */
__global__ void __launch_bounds__(threads_per_block)
    count_cells(lattice_problem p, int64_t num_cells, int64_t *__restrict__ counts,
                int32_t *__restrict__ any_columns)
{
    const lattice_frame f = frame_of(p);
    int columns = 0;
    for (int64_t k = first_item(); k < num_cells; k += item_stride()) {
        spart_clip_cell cell;
        prepare_cell(p, f, k, &cell);
        entry_sink<false> sink = {0, k, 0, 0, NULL, NULL, NULL};
        if (walks_in_columns(cell)) {
            counts[k] = -1;
            columns = 1;
            continue;
        }
        weigh_cell<false>(p, cell, sink);
        counts[k] = sink.count;
    }
    if (__syncthreads_or(columns) && threadIdx.x == 0) {
        *any_columns = 1;
    }
}

/* Pass 2: input cell k's entries at starts[k] .. starts[k + 1] - 1 (the
 * warps write the cells that walk in columns). */
__global__ void __launch_bounds__(threads_per_block)
    write_cells(lattice_problem p, int64_t num_cells, const int64_t *__restrict__ starts,
                int64_t *__restrict__ indices_input, int64_t *__restrict__ indices_output,
                double *__restrict__ values)
{
    const lattice_frame f = frame_of(p);
    for (int64_t k = first_item(); k < num_cells; k += item_stride()) {
        spart_clip_cell cell;
        prepare_cell(p, f, k, &cell);
        entry_sink<true> sink = {0,     k, starts[k], starts[k + 1], indices_input, indices_output,
                                 values};
        if (walks_in_columns(cell)) {
            continue;
        }
        weigh_cell<true>(p, cell, sink);
    }
}

constexpr unsigned full_warp = 0xffffffffu;
constexpr int warp_lanes = 32;

/* The entries of a cell that walks in columns, by the calling warp (every
 * lane calls with the same cell): a lane a column, 32 columns a round from
 * the right. Writing (WRITE), each column's entries end where the columns
 * to its right begin, as in the one-thread walk. Returns the cell's count
 * (in every lane). */
template <bool WRITE>
__device__ int64_t warp_walk_columns(const lattice_problem &p, const spart_clip_cell &cell,
                                     int64_t k, int64_t end, int64_t *indices_input,
                                     int64_t *indices_output, double *values)
{
    const int lane = (int)(threadIdx.x % warp_lanes);
    const int64_t width = cell.block.width;
    int64_t done = 0; /* the entries of the columns right of this round's */
    for (int64_t round = 0; round * warp_lanes < width; round++) {
        const int64_t c = width - 1 - (round * warp_lanes + lane);
        entry_sink<false> counter = {0, k, 0, 0, NULL, NULL, NULL};
        if (c >= 0) {
            walk_large_column<false>(p, cell, c, counter);
        }
        /* inclusive sum over the lanes up to this one (integers: exact) */
        int64_t through = counter.count;
        for (int d = 1; d < warp_lanes; d *= 2) {
            const int64_t other = __shfl_up_sync(full_warp, through, d);
            through += lane >= d ? other : 0;
        }
        if (WRITE && c >= 0 && counter.count > 0) {
            entry_sink<true> sink = {
                0,     k, 0, end - done - (through - counter.count), indices_input, indices_output,
                values};
            walk_large_column<true>(p, cell, c, sink);
        }
        done += __shfl_sync(full_warp, through, warp_lanes - 1);
    }
    return done;
}

/* The warps' share of pass 1: counts[cells[w]] for each listed cell (the
 * cells that walk in columns, `listed` of them), a warp a cell. */
__global__ void __launch_bounds__(threads_per_block)
    count_columns(lattice_problem p, const int64_t *__restrict__ cells, int64_t listed,
                  int64_t *__restrict__ counts)
{
    const lattice_frame f = frame_of(p);
    const int64_t warps = item_stride() / warp_lanes;
    for (int64_t w = first_item() / warp_lanes; w < listed; w += warps) {
        const int64_t k = cells[w];
        spart_clip_cell cell;
        prepare_cell(p, f, k, &cell);
        const int64_t count = warp_walk_columns<false>(p, cell, k, 0, NULL, NULL, NULL);
        if (threadIdx.x % warp_lanes == 0) {
            counts[k] = count;
        }
    }
}

/* The warps' share of pass 2: the listed cells' entries. */
__global__ void __launch_bounds__(threads_per_block)
    write_columns(lattice_problem p, const int64_t *__restrict__ cells, int64_t listed,
                  const int64_t *__restrict__ starts, int64_t *__restrict__ indices_input,
                  int64_t *__restrict__ indices_output, double *__restrict__ values)
{
    const lattice_frame f = frame_of(p);
    const int64_t warps = item_stride() / warp_lanes;
    for (int64_t w = first_item() / warp_lanes; w < listed; w += warps) {
        const int64_t k = cells[w];
        spart_clip_cell cell;
        prepare_cell(p, f, k, &cell);
        (void)warp_walk_columns<true>(p, cell, k, starts[k + 1], indices_input, indices_output,
                                      values);
    }
}

/* marks[k] = 1 for a cell counts marks -1 (it walks in columns), else 0. */
__global__ void __launch_bounds__(threads_per_block)
    mark_columns(const int64_t *__restrict__ counts, int64_t num_cells, int64_t *__restrict__ marks)
{
    for (int64_t k = first_item(); k < num_cells; k += item_stride()) {
        marks[k] = counts[k] < 0 ? 1 : 0;
    }
}

/* cells[slots[k]] = k for each marked cell (slots: the marks' exclusive
 * scan, so the list is in cell order). */
__global__ void __launch_bounds__(threads_per_block)
    list_columns(const int64_t *__restrict__ counts, int64_t num_cells,
                 const int64_t *__restrict__ slots, int64_t *__restrict__ cells)
{
    for (int64_t k = first_item(); k < num_cells; k += item_stride()) {
        if (counts[k] < 0) {
            cells[slots[k]] = k;
        }
    }
}

/* The element as the kernels read it. */
lattice_problem problem_of(const spart_device_clip_counts *state)
{
    lattice_problem p;
    p.x = state->input.x;
    p.y = state->input.y;
    p.num_x = state->input.num_x;
    p.num_y = state->input.num_y;
    p.weights_input = state->weights_input;
    p.x_output = state->output.x;
    p.y_output = state->output.y;
    p.num_cells_x = state->output.num_x - 1;
    p.num_cells_y = state->output.num_y - 1;
    return p;
}

/* The warps' grid: a warp a listed cell, at most 2048 blocks (grid-stride
 * beyond). */
dim3 column_grid(int64_t listed)
{
    const int64_t warps_per_block = threads_per_block / warp_lanes;
    const int64_t blocks = (listed + warps_per_block - 1) / warps_per_block;
    return dim3((unsigned)(blocks < 2048 ? (blocks > 0 ? blocks : 1) : 2048));
}

/* The list of the cells that walk in columns (state->columns, in cell
 * order; state->num_columns), from counts' -1 marks. */
cudaError_t list_cells_in_columns(spart_device_clip_counts *state, const int64_t *counts,
                                  cudaStream_t stream)
{
    const int64_t n = state->num_cells_input;
    cudaError_t status =
        cudaMallocAsync((void **)&state->columns, (size_t)(n + 1) * sizeof(int64_t), stream);
    int64_t *slots = NULL;
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&slots, (size_t)(n + 1) * sizeof(int64_t), stream);
    }
    if (status == cudaSuccess) {
        status = launch_items(mark_columns, n, stream, counts, n, state->columns);
    }
    if (status == cudaSuccess) {
        /* the marks' exclusive scan into slots, their number to the host */
        status = spart_clip_scan_to_host(state->columns, n, slots, &state->num_columns, stream);
    }
    if (status == cudaSuccess) {
        status = launch_items(list_columns, n, stream, counts, n, (const int64_t *)slots,
                              state->columns);
    }
    if (slots != NULL) {
        const cudaError_t freed = cudaFreeAsync(slots, stream);
        status = status != cudaSuccess ? status : freed;
    }
    return status;
}

} // namespace

cudaError_t spart_clip_lattice_count(spart_device_clip_counts *state, int64_t *counts,
                                     cudaStream_t stream)
{
    int32_t *any_columns = NULL;
    int32_t found = 0;
    cudaError_t status = cudaMallocAsync((void **)&any_columns, sizeof(int32_t), stream);
    if (status == cudaSuccess) {
        status = cudaMemsetAsync(any_columns, 0, sizeof(int32_t), stream);
    }
    if (status == cudaSuccess) {
        status = launch_items(count_cells, state->num_cells_input, stream, problem_of(state),
                              state->num_cells_input, counts, any_columns);
    }
    if (status == cudaSuccess) {
        status =
            cudaMemcpyAsync(&found, any_columns, sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
    }
    if (any_columns != NULL) {
        const cudaError_t freed = cudaFreeAsync(any_columns, stream);
        status = status != cudaSuccess ? status : freed;
    }
    if (status == cudaSuccess) {
        status = cudaStreamSynchronize(stream);
    }
    if (status == cudaSuccess && found) {
        status = list_cells_in_columns(state, counts, stream);
        if (status == cudaSuccess) {
            status = spart_launch::launch(count_columns, column_grid(state->num_columns), stream,
                                          problem_of(state), (const int64_t *)state->columns,
                                          state->num_columns, counts);
        }
    }
    return status;
}

cudaError_t spart_clip_lattice_write(const spart_device_clip_counts *state, int64_t *indices_input,
                                     int64_t *indices_output, double *values, cudaStream_t stream)
{
    cudaError_t status = launch_items(
        write_cells, state->num_cells_input, stream, problem_of(state), state->num_cells_input,
        (const int64_t *)state->starts, indices_input, indices_output, values);
    if (status == cudaSuccess && state->columns != NULL) {
        status = spart_launch::launch(write_columns, column_grid(state->num_columns), stream,
                                      problem_of(state), (const int64_t *)state->columns,
                                      state->num_columns, (const int64_t *)state->starts,
                                      indices_input, indices_output, values);
    }
    return status;
}
