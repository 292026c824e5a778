/*
 * kernels/weights_conservative_2d_general.cu: the conservative 2-D weights
 * between any two logically rectangular grids on the device, the twin of
 * src/weights/weights_conservative_2d_clip_general.c
 * (src/weights/weights_clip_device.h says what the entries promise).
 *
 * Prepare (once per element):
 *   1. one thread per output cell: spart_clip_output_cell_prepare (its
 *      corners counterclockwise, convex or cut in two, its box; unusable
 *      when of zero or non-finite area);
 *   2. the box holding every usable cell and their number (a two-level
 *      block reduction: minima, maxima and a count, exact in any order),
 *      to the host, which sizes a uniform grid of about one bucket a cell,
 *      halving it while the lists would exceed 16 entries a cell (as the
 *      host kernel sizes its own);
 *   3. each usable cell's listings (the buckets its box touches) counted,
 *      scanned, written as (bucket, cell) pairs in cell order, and sorted
 *      by bucket with CUB's stable radix sort: each bucket's cells
 *      ascending; a bucket's first listing by binary search.
 * Count and write: one thread per input cell, as clip_cell of the host:
 * spart_clip_input_cell_prepare, then every output cell listed in the
 * buckets its box touches whose box overlaps its own, once (in the first
 * bucket both boxes touch), clipped by spart_clip_overlap_area; non-zero
 * areas are entries. The write sorts a cell's entries by output cell in
 * its own slots (insertion sort). Which candidates are visited depends on
 * the buckets, the entries do not: every output cell whose box overlaps
 * the input cell's is clipped against exactly once, on host and device
 * alike, and the entries are sorted by output cell.
 */
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <math.h>
#include <stdint.h>

#include "launch.cuh"
#include "weights_conservative_2d_clip.cuh"

namespace
{

using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch;
using spart_launch::launch_items;
using spart_launch::threads_per_block;

/* The most entries per output cell in the bucket lists, on average (the
 * host's MAX_LISTINGS_PER_CELL). */
constexpr int64_t max_listings_per_cell = 16;

/* Blocks of the first level of the box reduction. */
constexpr int reduce_blocks = 256;

/* ---- 1. the output cells ---------------------------------------------------------- */

__global__ void __launch_bounds__(threads_per_block)
    prepare_cells(spart_device_clip_grid out, int64_t num_cells, spart_clip_output_cell *cells,
                  unsigned char *usable)
{
    const int64_t num_cells_y = out.num_y - 1;
    for (int64_t c = first_item(); c < num_cells; c += item_stride()) {
        usable[c] = (unsigned char)spart_clip_output_cell_prepare(
            out.x, out.y, out.num_y, c / num_cells_y, c % num_cells_y, &cells[c]);
    }
}

/* ---- 2. the box of the usable cells ------------------------------------------------ */

/* low x, high x, low y, high y, and the number of cells. */
struct box_sum {
    double low_x, high_x, low_y, high_y;
    int64_t count;
};

struct box_combine {
    __device__ __forceinline__ box_sum operator()(const box_sum &a, const box_sum &b) const
    {
        box_sum s;
        s.low_x = spart_clip_smaller(a.low_x, b.low_x);
        s.high_x = spart_clip_larger(a.high_x, b.high_x);
        s.low_y = spart_clip_smaller(a.low_y, b.low_y);
        s.high_y = spart_clip_larger(a.high_y, b.high_y);
        s.count = a.count + b.count;
        return s;
    }
};

__device__ __forceinline__ box_sum empty_box()
{
    return box_sum{(double)INFINITY, -(double)INFINITY, (double)INFINITY, -(double)INFINITY, 0};
}

/* First level: block b reduces the cells of its grid-stride range into
 * partial[b]; second level (one block): partial[0 .. n-1] into partial[n]. */
__global__ void __launch_bounds__(threads_per_block)
    reduce_boxes(const spart_clip_output_cell *cells, const unsigned char *usable,
                 int64_t num_cells, box_sum *partial)
{
    typedef cub::BlockReduce<box_sum, threads_per_block> reduce;
    __shared__ typename reduce::TempStorage storage;
    box_sum mine = empty_box();
    for (int64_t c = first_item(); c < num_cells; c += item_stride()) {
        if (usable[c]) {
            const box_sum cell = {cells[c].box[0], cells[c].box[1], cells[c].box[2],
                                  cells[c].box[3], 1};
            mine = box_combine()(mine, cell);
        }
    }
    const box_sum total = reduce(storage).Reduce(mine, box_combine());
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = total;
    }
}

__global__ void __launch_bounds__(threads_per_block)
    reduce_partials(box_sum *partial, int num_partial)
{
    typedef cub::BlockReduce<box_sum, threads_per_block> reduce;
    __shared__ typename reduce::TempStorage storage;
    box_sum mine = empty_box();
    for (int k = threadIdx.x; k < num_partial; k += blockDim.x) {
        mine = box_combine()(mine, partial[k]);
    }
    const box_sum total = reduce(storage).Reduce(mine, box_combine());
    if (threadIdx.x == 0) {
        partial[num_partial] = total;
    }
}

/* ---- 3. the buckets ------------------------------------------------------------------ */

/* The bucket holding `value` along one axis, clamped to [0, num - 1]. */
__device__ __forceinline__ int64_t bucket_of(double value, double origin, double scale, int64_t num)
{
    const double position = (value - origin) * scale;
    if (!(position > 0)) {
        return 0;
    }
    if (position >= (double)num) {
        return num - 1;
    }
    return (int64_t)position;
}

struct bucket_range {
    int64_t low_x, high_x, low_y, high_y;
};

__device__ __forceinline__ bucket_range buckets_of_box(const spart_clip_device_buckets &grid,
                                                       const double *box)
{
    bucket_range r;
    r.low_x = bucket_of(box[0], grid.origin_x, grid.scale_x, grid.num_x);
    r.high_x = bucket_of(box[1], grid.origin_x, grid.scale_x, grid.num_x);
    r.low_y = bucket_of(box[2], grid.origin_y, grid.scale_y, grid.num_y);
    r.high_y = bucket_of(box[3], grid.origin_y, grid.scale_y, grid.num_y);
    return r;
}

/* listings[c]: the buckets usable cell c's box touches (0 when unusable);
 * its first bucket into the cell. */
__global__ void __launch_bounds__(threads_per_block)
    count_listings(spart_clip_device_buckets grid, spart_clip_output_cell *cells,
                   const unsigned char *usable, int64_t num_cells, int64_t *listings)
{
    for (int64_t c = first_item(); c < num_cells; c += item_stride()) {
        int64_t count = 0;
        if (usable[c]) {
            const bucket_range r = buckets_of_box(grid, cells[c].box);
            cells[c].first_bucket_x = r.low_x;
            cells[c].first_bucket_y = r.low_y;
            count = (r.high_x - r.low_x + 1) * (r.high_y - r.low_y + 1);
        }
        listings[c] = count;
    }
}

/* The (bucket, cell) pairs of usable cell c at first[c] onwards. */
__global__ void __launch_bounds__(threads_per_block)
    write_listings(spart_clip_device_buckets grid, const spart_clip_output_cell *cells,
                   const unsigned char *usable, int64_t num_cells, const int64_t *first,
                   int64_t *keys, int64_t *values)
{
    for (int64_t c = first_item(); c < num_cells; c += item_stride()) {
        if (!usable[c]) {
            continue;
        }
        const bucket_range r = buckets_of_box(grid, cells[c].box);
        int64_t slot = first[c];
        for (int64_t a = r.low_x; a <= r.high_x; a++) {
            for (int64_t b = r.low_y; b <= r.high_y; b++) {
                keys[slot] = a * grid.num_y + b;
                values[slot] = c;
                slot++;
            }
        }
    }
}

/* start[b] = the first sorted listing of bucket b or later (b = 0 ..
 * num_buckets), by binary search in the sorted keys. */
__global__ void __launch_bounds__(threads_per_block)
    bucket_starts(const int64_t *keys, int64_t num_listings, int64_t num_buckets, int64_t *start)
{
    for (int64_t b = first_item(); b <= num_buckets; b += item_stride()) {
        int64_t low = 0, high = num_listings;
        while (low < high) {
            const int64_t middle = low + (high - low) / 2;
            if (keys[middle] < b) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        start[b] = low;
    }
}

/* ---- count and write --------------------------------------------------------------- */

struct general_problem {
    spart_device_clip_grid input;
    const double *weights_input;
    const spart_clip_output_cell *cells;
    spart_clip_device_buckets buckets;
};

/* Clip input cell k against its candidates; count (WRITE false) or write
 * its entries from `first` on, sorted by output cell. Returns the count. */
template <bool WRITE>
__device__ int64_t clip_cell(const general_problem &p, int64_t k, int64_t first,
                             int64_t *indices_input, int64_t *indices_output, double *values)
{
    const int64_t num_y = p.input.num_y;
    const int64_t i = k / (num_y - 1), j = k % (num_y - 1);
    spart_clip_polygon subject;
    double box[4], shift_x, shift_y;
    const double area_input = spart_clip_input_cell_prepare(p.input.x, p.input.y, num_y, i, j,
                                                            &subject, box, &shift_x, &shift_y);
    if (!(area_input != 0) || !isfinite(area_input)) {
        return 0;
    }
    const double weight_input = p.weights_input != NULL ? p.weights_input[k] : 1.0;
    const spart_clip_device_buckets &grid = p.buckets;
    const bucket_range r = buckets_of_box(grid, box);
    spart_clip_polygon buffer[2];
    int64_t count = 0;
    for (int64_t a = r.low_x; a <= r.high_x; a++) {
        for (int64_t b = r.low_y; b <= r.high_y; b++) {
            const int64_t bucket = a * grid.num_y + b;
            for (int64_t q = grid.start[bucket]; q < grid.start[bucket + 1]; q++) {
                const int64_t c = grid.cell_index[q];
                const spart_clip_output_cell *cell = &p.cells[c];
                if (!spart_clip_boxes_overlap(box, cell->box)) {
                    continue;
                }
                /* visit the pair only in the first bucket both boxes touch */
                if (a != (cell->first_bucket_x > r.low_x ? cell->first_bucket_x : r.low_x) ||
                    b != (cell->first_bucket_y > r.low_y ? cell->first_bucket_y : r.low_y)) {
                    continue;
                }
                const double area =
                    spart_clip_overlap_area(&subject, cell, shift_x, shift_y, buffer);
                if (area == 0) {
                    continue;
                }
                if (WRITE) {
                    /* insertion by output cell: shift the larger ones up */
                    const double value = spart_clip_overlap_value(area, area_input, weight_input);
                    int64_t slot = first + count;
                    while (slot > first && indices_output[slot - 1] > c) {
                        indices_output[slot] = indices_output[slot - 1];
                        values[slot] = values[slot - 1];
                        slot--;
                    }
                    indices_output[slot] = c;
                    values[slot] = value;
                    indices_input[first + count] = k;
                }
                count++;
            }
        }
    }
    return count;
}

__global__ void __launch_bounds__(threads_per_block)
    count_cells(general_problem p, int64_t num_cells, int64_t *__restrict__ counts)
{
    for (int64_t k = first_item(); k < num_cells; k += item_stride()) {
        counts[k] = clip_cell<false>(p, k, 0, NULL, NULL, NULL);
    }
}

__global__ void __launch_bounds__(threads_per_block)
    write_cells(general_problem p, int64_t num_cells, const int64_t *__restrict__ starts,
                int64_t *indices_input, int64_t *indices_output, double *values)
{
    for (int64_t k = first_item(); k < num_cells; k += item_stride()) {
        clip_cell<true>(p, k, starts[k], indices_input, indices_output, values);
    }
}

/* ---- the host's side of the preparation ------------------------------------------------ */

/* How many buckets along an axis of length `extent`, buckets being
 * `width` long: at least 1, at most `limit` (the host kernel's rule). */
int64_t num_buckets_along(double extent, double width, int64_t limit)
{
    const double num = ceil(extent / width);
    if (!(num >= 1)) {
        return 1;
    }
    return num >= (double)limit ? limit : (int64_t)num;
}

/* The box of the usable cells and their number, on the host. */
cudaError_t usable_box(const spart_clip_output_cell *cells, const unsigned char *usable,
                       int64_t num_cells, box_sum *box, cudaStream_t stream)
{
    box_sum *partial = NULL;
    cudaError_t status =
        cudaMallocAsync((void **)&partial, (reduce_blocks + 1) * sizeof(box_sum), stream);
    if (status == cudaSuccess) {
        status =
            launch(reduce_boxes, dim3(reduce_blocks), stream, cells, usable, num_cells, partial);
    }
    if (status == cudaSuccess) {
        status = launch(reduce_partials, dim3(1), stream, partial, reduce_blocks);
    }
    if (status == cudaSuccess) {
        status = cudaMemcpyAsync(box, partial + reduce_blocks, sizeof *box, cudaMemcpyDeviceToHost,
                                 stream);
    }
    if (status == cudaSuccess) {
        status = cudaStreamSynchronize(stream);
    }
    if (partial != NULL) {
        const cudaError_t freed = cudaFreeAsync(partial, stream);
        status = status != cudaSuccess ? status : freed;
    }
    return status;
}

/* Size the buckets (as the host's size_bucket_grid), count every usable
 * cell's listings into listings[0 .. num_cells - 1], scan them into
 * first[0 .. num_cells] and the total into *total; halve the grid while
 * the total exceeds max_listings_per_cell a usable cell. */
cudaError_t size_buckets(spart_device_clip_counts *state, const unsigned char *usable,
                         int64_t num_cells, int64_t *listings, int64_t *first, int64_t *total,
                         cudaStream_t stream)
{
    box_sum box;
    cudaError_t status = usable_box(state->cells, usable, num_cells, &box, stream);
    if (status != cudaSuccess) {
        return status;
    }
    spart_clip_device_buckets &grid = state->buckets;
    grid.origin_x = box.count > 0 ? box.low_x : 0.0;
    grid.origin_y = box.count > 0 ? box.low_y : 0.0;
    const double extent_x = box.count > 0 ? box.high_x - box.low_x : 0.0;
    const double extent_y = box.count > 0 ? box.high_y - box.low_y : 0.0;
    const int64_t limit = box.count > 1 ? box.count : 1;
    const double width = sqrt(extent_x * extent_y / (double)limit);
    grid.num_x = num_buckets_along(extent_x, width, limit);
    grid.num_y = num_buckets_along(extent_y, width, limit);
    for (;;) {
        grid.scale_x = extent_x > 0 ? (double)grid.num_x / extent_x : 0.0;
        grid.scale_y = extent_y > 0 ? (double)grid.num_y / extent_y : 0.0;
        status = launch_items(count_listings, num_cells, stream, grid, state->cells, usable,
                              num_cells, listings);
        if (status == cudaSuccess) {
            status = spart_clip_scan_to_host(listings, num_cells, first, total, stream);
        }
        if (status != cudaSuccess || grid.num_x * grid.num_y == 1 ||
            *total <= max_listings_per_cell * limit) {
            return status;
        }
        grid.num_x = (grid.num_x + 1) / 2;
        grid.num_y = (grid.num_y + 1) / 2;
    }
}

/* Fill the bucket lists from the counted listings. */
cudaError_t fill_buckets(spart_device_clip_counts *state, const unsigned char *usable,
                         int64_t num_cells, const int64_t *first, int64_t num_listings,
                         cudaStream_t stream)
{
    spart_clip_device_buckets &grid = state->buckets;
    const int64_t num_buckets = grid.num_x * grid.num_y;
    int64_t *keys = NULL, *values = NULL, *sorted_keys = NULL;
    void *scratch = NULL;
    size_t bytes = 0;
    const size_t listing_bytes = (size_t)(num_listings > 0 ? num_listings : 1) * sizeof(int64_t);
    cudaError_t status = cudaMallocAsync((void **)&keys, listing_bytes, stream);
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&values, listing_bytes, stream);
    }
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&sorted_keys, listing_bytes, stream);
    }
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&grid.cell_index, listing_bytes, stream);
    }
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&grid.start, (size_t)(num_buckets + 1) * sizeof(int64_t),
                                 stream);
    }
    if (status == cudaSuccess) {
        status = launch_items(write_listings, num_cells, stream, grid,
                              (const spart_clip_output_cell *)state->cells, usable, num_cells,
                              first, keys, values);
    }
    /* the bits a bucket index needs */
    int end_bit = 1;
    while (end_bit < 63 && ((int64_t)1 << end_bit) < num_buckets) {
        end_bit++;
    }
    if (status == cudaSuccess && num_listings > 0) {
        status = cub::DeviceRadixSort::SortPairs(NULL, bytes, keys, sorted_keys, values,
                                                 grid.cell_index, num_listings, 0, end_bit, stream);
        if (status == cudaSuccess) {
            status = cudaMallocAsync(&scratch, bytes, stream);
        }
        if (status == cudaSuccess) {
            status =
                cub::DeviceRadixSort::SortPairs(scratch, bytes, keys, sorted_keys, values,
                                                grid.cell_index, num_listings, 0, end_bit, stream);
        }
    }
    if (status == cudaSuccess) {
        status = launch_items(bucket_starts, num_buckets + 1, stream, (const int64_t *)sorted_keys,
                              num_listings, num_buckets, grid.start);
    }
    void *temporaries[4] = {keys, values, sorted_keys, scratch};
    for (int t = 0; t < 4; t++) {
        if (temporaries[t] != NULL) {
            const cudaError_t freed = cudaFreeAsync(temporaries[t], stream);
            status = status != cudaSuccess ? status : freed;
        }
    }
    return status;
}

general_problem problem_of(const spart_device_clip_counts *state)
{
    general_problem p;
    p.input = state->input;
    p.weights_input = state->weights_input;
    p.cells = state->cells;
    p.buckets = state->buckets;
    return p;
}

} // namespace

cudaError_t spart_clip_general_prepare(spart_device_clip_counts *state, cudaStream_t stream)
{
    const spart_device_clip_grid &out = state->output;
    const int64_t num_cells = (out.num_x - 1) * (out.num_y - 1);
    unsigned char *usable = NULL;
    int64_t *listings = NULL, *first = NULL;
    cudaError_t status = cudaMallocAsync(
        (void **)&state->cells, (size_t)num_cells * sizeof(spart_clip_output_cell), stream);
    if (status == cudaSuccess) {
        status = cudaMallocAsync((void **)&usable, (size_t)num_cells, stream);
    }
    if (status == cudaSuccess) {
        status =
            cudaMallocAsync((void **)&listings, (size_t)(num_cells + 1) * sizeof(int64_t), stream);
    }
    if (status == cudaSuccess) {
        status =
            cudaMallocAsync((void **)&first, (size_t)(num_cells + 1) * sizeof(int64_t), stream);
    }
    if (status == cudaSuccess) {
        status =
            launch_items(prepare_cells, num_cells, stream, out, num_cells, state->cells, usable);
    }
    int64_t num_listings = 0;
    if (status == cudaSuccess) {
        status = size_buckets(state, usable, num_cells, listings, first, &num_listings, stream);
    }
    if (status == cudaSuccess) {
        status = fill_buckets(state, usable, num_cells, first, num_listings, stream);
    }
    void *temporaries[3] = {usable, listings, first};
    for (int t = 0; t < 3; t++) {
        if (temporaries[t] != NULL) {
            const cudaError_t freed = cudaFreeAsync(temporaries[t], stream);
            status = status != cudaSuccess ? status : freed;
        }
    }
    return status;
}

cudaError_t spart_clip_general_count(const spart_device_clip_counts *state, int64_t *counts,
                                     cudaStream_t stream)
{
    return launch_items(count_cells, state->num_cells_input, stream, problem_of(state),
                        state->num_cells_input, counts);
}

cudaError_t spart_clip_general_write(const spart_device_clip_counts *state, int64_t *indices_input,
                                     int64_t *indices_output, double *values, cudaStream_t stream)
{
    return launch_items(write_cells, state->num_cells_input, stream, problem_of(state),
                        state->num_cells_input, (const int64_t *)state->starts, indices_input,
                        indices_output, values);
}
