/*
 * kernels/weights_convolve.cu: folding a kernel into weights on the device,
 * the twin of host/weights_convolve.c (see src/weights/weights_convolve_device.h for
 * what the result promises).
 *
 * Steps, each a launch or a CUB scan on the caller's stream:
 *   1. flag the entries that start a run and scan the flags: run_index[w]
 *      is the number of runs before entry w (the run of entry w when w
 *      starts one), run_index[total] the number of runs;
 *   2. one thread per run: its element, its box (the bounding box of its
 *      output cells grown by the kernel, clipped to the grid) and, when its
 *      distinct cells fill their bounding box and every kernel it uses has
 *      no zero, its count (the whole box: the host's shortcut);
 *   3. one block per run not counted yet: each cell of the box is reached
 *      when some entry's kernel element landing on it is not zero; the
 *      block sums the flags;
 *   4. a scan of the counts places the runs (out_start), and so the
 *      elements;
 *   5. one block per run: each thread computes one cell of the box (a tile
 *      of cells at a time, in grid order), summing value * kernel element
 *      over the run's entries in their order, exactly as the host's
 *      scatter adds them into that cell; a block scan of the reached flags
 *      gives each reached cell its slot.
 * A run's entries are decoded once per tile into shared memory (their cells'
 * coordinates, values and kernels' offsets), so a cell reads them from
 * there. Products and sums are explicit round-to-nearest operations
 * (__dmul_rn, __dadd_rn), never contracted into an FMA.
 *
 * The resampled output axes are a template parameter (1, 2 or 3, or 0 for
 * any number up to SPART_CONVOLVE_DEVICE_MAX_NDIM), so that the usual
 * cases keep coordinates in registers.
 */
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <stdint.h>

#include "csr_search.cuh"
#include "launch.cuh"
#include "weights/weights_convolve_device.h"

namespace
{

using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch_items;
using spart_launch::threads_per_block;
constexpr int run_threads = 128; /* threads of a run's block, and entries per tile */
constexpr int64_t max_blocks = spart_launch::max_blocks_items; /* runs: grid-stride beyond */

typedef spart_device_convolve_layout layout_t;
typedef spart_device_convolve_entries entries_t;

/* Axes stored per coordinate: NDIM, or the most any layout has. */
template <int NDIM> __host__ __device__ constexpr int max_axes()
{
    return NDIM > 0 ? NDIM : SPART_CONVOLVE_DEVICE_MAX_NDIM;
}

template <int NDIM> __device__ __forceinline__ int axes_of(const layout_t &layout)
{
    return NDIM > 0 ? NDIM : layout.ndim;
}

/* Launch `kernel` with one block of run_threads per run (grid-stride). */
template <typename... Parameters, typename... Arguments>
cudaError_t launch_runs(void (*kernel)(Parameters...), int64_t runs, cudaStream_t stream,
                        Arguments... arguments)
{
    if (runs <= 0) {
        return cudaSuccess;
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)(runs < max_blocks ? runs : max_blocks));
    config.blockDim = dim3(run_threads);
    config.stream = stream;
    return cudaLaunchKernelEx(&config, kernel, arguments...);
}

/* The per-axis coordinates of flat output cell `index` (C order). */
template <int NDIM>
__device__ __forceinline__ void unravel_cell(const layout_t &layout, int64_t index,
                                             int64_t *coordinates)
{
    const int ndim = axes_of<NDIM>(layout);
    for (int a = ndim - 1; a >= 0; a--) {
        coordinates[a] = index % layout.shape_output[a];
        index /= layout.shape_output[a];
    }
}

/* The offset in the kernel array of the kernel of the cell at
 * `coordinates` of `element`. */
template <int NDIM>
__device__ __forceinline__ int64_t kernel_offset(const layout_t &layout, int64_t element,
                                                 const int64_t *coordinates)
{
    const int ndim = axes_of<NDIM>(layout);
    int64_t offset = layout.element_base[element];
    for (int a = 0; a < ndim; a++) {
        offset += coordinates[a] * layout.row_strides[a];
    }
    return offset;
}

/* ---- step 1: the runs ------------------------------------------------------------------ */

/* flags[w] = 1 when entry w starts a run (the first entry of its element,
 * or an input cell other than the entry before); flags[total] = 0. */
__global__ void __launch_bounds__(threads_per_block)
    run_start_flags(entries_t entries, int64_t *__restrict__ flags)
{
    const int64_t total = entries.num_entries;
    for (int64_t w = first_item(); w <= total; w += item_stride()) {
        int64_t starts = 0;
        if (w < total) {
            const int64_t element = piece_holding(entries.offsets, entries.num_elements, w);
            starts = w == entries.offsets[element] ||
                     entries.indices_input[w - 1] != entries.indices_input[w];
        }
        flags[w] = starts;
    }
}

/* run_begin[r]: the first entry of run r; run_begin[num_runs] = total. */
__global__ void __launch_bounds__(threads_per_block)
    run_begins(const int64_t *__restrict__ run_index, int64_t total,
               int64_t *__restrict__ run_begin)
{
    for (int64_t w = first_item(); w <= total; w += item_stride()) {
        if (w == total || run_index[w + 1] != run_index[w]) {
            run_begin[run_index[w]] = w;
        }
    }
}

/* ---- step 2: the boxes ----------------------------------------------------------------- */

/* Per run, the facts the two block passes need. */
struct run_table {
    int64_t *element;  /* num_runs */
    int64_t *lower;    /* num_runs * ndim: the box's lower corner */
    int64_t *extent;   /* num_runs * ndim: its extent */
    int64_t *box_size; /* num_runs */
    int64_t *count;    /* num_runs + 1: entries it becomes (-1: not counted yet) */
};

/* One thread per run: as find_box and run_fills_box of the host. */
template <int NDIM>
__global__ void __launch_bounds__(threads_per_block)
    run_boxes(layout_t layout, entries_t entries, const int64_t *__restrict__ run_begin,
              int64_t num_runs, run_table runs)
{
    const int ndim = axes_of<NDIM>(layout);
    for (int64_t r = first_item(); r <= num_runs; r += item_stride()) {
        if (r == num_runs) {
            runs.count[r] = 0; /* so that the scan's last item is the total */
            continue;
        }
        const int64_t begin = run_begin[r], stop = run_begin[r + 1];
        const int64_t element = piece_holding(entries.offsets, entries.num_elements, begin);
        int64_t lower[max_axes<NDIM>()], upper[max_axes<NDIM>()], cell[max_axes<NDIM>()];
        for (int a = 0; a < ndim; a++) {
            lower[a] = layout.shape_output[a];
            upper[a] = -1;
        }
        bool ascending = true;
        bool dense = layout.size_kernel > 0;
        for (int64_t q = begin; q < stop; q++) {
            unravel_cell<NDIM>(layout, entries.indices_output[q], cell);
            for (int a = 0; a < ndim; a++) {
                lower[a] = cell[a] < lower[a] ? cell[a] : lower[a];
                upper[a] = cell[a] > upper[a] ? cell[a] : upper[a];
            }
            if (q > begin && entries.indices_output[q] <= entries.indices_output[q - 1]) {
                ascending = false;
            }
            if (dense) {
                const int64_t offset = kernel_offset<NDIM>(layout, element, cell);
                dense = layout.dense[offset / layout.size_kernel] != 0;
            }
        }
        int64_t size = 1, footprint = 1;
        for (int a = ndim - 1; a >= 0; a--) {
            footprint *= upper[a] - lower[a] + 1;
            const int64_t centre = layout.shape_kernel[a] / 2;
            int64_t low = lower[a] - centre;
            int64_t high = upper[a] + layout.shape_kernel[a] - 1 - centre;
            low = low < 0 ? 0 : low;
            high = high > layout.shape_output[a] - 1 ? layout.shape_output[a] - 1 : high;
            runs.lower[r * ndim + a] = low;
            runs.extent[r * ndim + a] = high - low + 1;
            size *= high - low + 1;
        }
        const bool filled = stop - begin == footprint && ascending && dense;
        runs.element[r] = element;
        runs.box_size[r] = size;
        runs.count[r] = size == 0 || filled ? size : -1;
    }
}

/* ---- steps 3 and 5: the cells of a run ------------------------------------------------- */

/* A tile of a run's entries, decoded into shared memory. */
template <int NDIM> struct entry_tile {
    int64_t cell[run_threads * max_axes<NDIM>()];
    int64_t kernel[run_threads]; /* offset of the entry's kernel */
    double value[run_threads];
};

/* Entries first .. first + count - 1 into the tile, one per thread. */
template <int NDIM>
__device__ __forceinline__ void load_tile(const layout_t &layout, const entries_t &entries,
                                          int64_t element, int64_t first, int count,
                                          entry_tile<NDIM> &tile)
{
    const int t = threadIdx.x;
    if (t < count) {
        int64_t cell[max_axes<NDIM>()];
        unravel_cell<NDIM>(layout, entries.indices_output[first + t], cell);
        const int ndim = axes_of<NDIM>(layout);
        for (int a = 0; a < ndim; a++) {
            tile.cell[t * max_axes<NDIM>() + a] = cell[a];
        }
        tile.kernel[t] = kernel_offset<NDIM>(layout, element, cell);
        tile.value[t] = entries.values[first + t];
    }
}

/* What the tile's `count` entries bring to the cell at `cell`, in order:
 * *reached becomes true when a nonzero kernel element lands on it, and
 * *sum receives each value * element (when WITH_VALUES). */
template <int NDIM, bool WITH_VALUES>
__device__ __forceinline__ void gather_tile(const layout_t &layout, const entry_tile<NDIM> &tile,
                                            int count, const int64_t *cell, bool *reached,
                                            double *sum)
{
    const int ndim = axes_of<NDIM>(layout);
    for (int j = 0; j < count; j++) {
        int64_t at = 0;
        bool inside = true;
        for (int a = 0; a < ndim; a++) {
            const int64_t n = layout.shape_kernel[a];
            const int64_t k = cell[a] - tile.cell[j * max_axes<NDIM>() + a] + n / 2;
            inside = inside && k >= 0 && k < n;
            at = at * n + k;
        }
        if (!inside) {
            continue;
        }
        const double element = layout.kernel[tile.kernel[j] + at];
        if (element == 0.0) {
            continue;
        }
        *reached = true;
        if (WITH_VALUES) {
            *sum = __dadd_rn(*sum, __dmul_rn(tile.value[j], element));
        }
    }
}

/* The box cell `index` of run r (C order over the box) as grid
 * coordinates. */
template <int NDIM>
__device__ __forceinline__ void box_cell(const layout_t &layout, const run_table &runs, int64_t r,
                                         int64_t index, int64_t *cell)
{
    const int ndim = axes_of<NDIM>(layout);
    for (int a = ndim - 1; a >= 0; a--) {
        const int64_t extent = runs.extent[r * ndim + a];
        cell[a] = runs.lower[r * ndim + a] + index % extent;
        index /= extent;
    }
}

/* Where the write pass puts the result. */
struct result_arrays {
    const int64_t *out_start; /* per run: its first result entry */
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
};

/* One block per run. WRITE false (step 3): runs not counted yet get the
 * number of cells reached. WRITE true (step 5): every run's reached cells
 * are written, in grid order, from out_start[r]. */
template <int NDIM, bool WRITE>
__global__ void __launch_bounds__(run_threads)
    convolve_runs(layout_t layout, entries_t entries, const int64_t *__restrict__ run_begin,
                  int64_t num_runs, run_table runs, result_arrays result)
{
    typedef cub::BlockScan<int, run_threads> block_scan;
    typedef cub::BlockReduce<int, run_threads> block_reduce;
    __shared__ entry_tile<NDIM> tile;
    __shared__ union {
        typename block_scan::TempStorage scan;
        typename block_reduce::TempStorage reduce;
    } temp;
    const int ndim = axes_of<NDIM>(layout);
    for (int64_t r = blockIdx.x; r < num_runs; r += gridDim.x) {
        /* After step 4, count holds the runs' starts (out_start). */
        const int64_t known = WRITE ? result.out_start[r + 1] - result.out_start[r] : runs.count[r];
        if (WRITE ? known == 0 : known >= 0) {
            continue; /* the same for the whole block */
        }
        const int64_t begin = run_begin[r], stop = run_begin[r + 1];
        const int64_t element = runs.element[r], box_size = runs.box_size[r];
        const bool one_tile = stop - begin <= run_threads;
        int64_t placed = 0; /* cells reached in the tiles before */
        for (int64_t first_cell = 0; first_cell < box_size; first_cell += run_threads) {
            const int64_t index = first_cell + threadIdx.x;
            const bool active = index < box_size;
            int64_t cell[max_axes<NDIM>()] = {};
            if (active) {
                box_cell<NDIM>(layout, runs, r, index, cell);
            }
            bool reached = false;
            double sum = 0.0;
            for (int64_t first = begin; first < stop; first += run_threads) {
                const int count = (int)(stop - first < run_threads ? stop - first : run_threads);
                if (!one_tile || first_cell == 0) {
                    __syncthreads(); /* the tile's last readers are done */
                    load_tile<NDIM>(layout, entries, element, first, count, tile);
                    __syncthreads();
                }
                if (active) {
                    gather_tile<NDIM, WRITE>(layout, tile, count, cell, &reached, &sum);
                }
            }
            const int flag = reached ? 1 : 0;
            if (WRITE) {
                int slot = 0, tile_total = 0;
                block_scan(temp.scan).ExclusiveSum(flag, slot, tile_total);
                if (reached) {
                    int64_t grid = 0;
                    for (int a = 0; a < ndim; a++) {
                        grid = grid * layout.shape_output[a] + cell[a];
                    }
                    const int64_t at = result.out_start[r] + placed + slot;
                    result.indices_input[at] = entries.indices_input[begin];
                    result.indices_output[at] = grid;
                    result.values[at] = sum;
                }
                placed += tile_total;
            } else {
                const int tile_total = block_reduce(temp.reduce).Sum(flag);
                placed += tile_total; /* meaningful in thread 0 only */
            }
            __syncthreads(); /* temp is reused by the next tile */
        }
        if (!WRITE && threadIdx.x == 0) {
            runs.count[r] = placed;
        }
    }
}

/* ---- step 4: the elements --------------------------------------------------------------- */

/* result_offsets[e]: the first result entry of element e, the start of the
 * run its first entry begins (for an empty element, the next run's start;
 * past the last, the total). */
__global__ void __launch_bounds__(threads_per_block)
    element_starts(entries_t entries, const int64_t *__restrict__ run_index,
                   const int64_t *__restrict__ out_start, int64_t *__restrict__ result_offsets)
{
    for (int64_t e = first_item(); e <= entries.num_elements; e += item_stride()) {
        result_offsets[e] = out_start[run_index[entries.offsets[e]]];
    }
}

/* ---- the whole ----------------------------------------------------------------------- */

/* Stream-ordered scratch of the steps, freed together. */
struct scratch {
    int64_t *run_index;      /* total + 1 */
    int64_t *run_begin;      /* num_runs + 1 */
    int64_t *run_element;    /* num_runs */
    int64_t *box_lower;      /* num_runs * ndim */
    int64_t *box_extent;     /* num_runs * ndim */
    int64_t *box_size;       /* num_runs */
    int64_t *count;          /* num_runs + 1, scanned into the runs' starts */
    int64_t *result_offsets; /* num_elements + 1 */
    void *scan_space;
};

template <typename T> cudaError_t allocate(T **array, int64_t count, cudaStream_t stream)
{
    size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(T);
    cudaError_t error = cudaMallocAsync((void **)array, bytes, stream);
    if (error != cudaSuccess) {
        *array = nullptr;
    }
    return error;
}

template <typename T> void release(T **array, cudaStream_t stream)
{
    if (*array != nullptr) {
        (void)cudaFreeAsync((void *)*array, stream);
        *array = nullptr;
    }
}

/* An exclusive prefix sum of `items` int64 in place. */
cudaError_t scan_in_place(int64_t *data, int64_t items, void **space, cudaStream_t stream)
{
    size_t bytes = 0;
    cudaError_t error = cub::DeviceScan::ExclusiveSum(nullptr, bytes, data, items, stream);
    if (error == cudaSuccess) {
        error = cudaMallocAsync(space, bytes > 0 ? bytes : 1, stream);
    }
    if (error == cudaSuccess) {
        error = cub::DeviceScan::ExclusiveSum(*space, bytes, data, items, stream);
    }
    if (*space != nullptr) {
        (void)cudaFreeAsync(*space, stream);
        *space = nullptr;
    }
    return error;
}

/* One number from the device, after everything enqueued before it. */
cudaError_t read_number(const int64_t *device, int64_t *host, cudaStream_t stream)
{
    cudaError_t error =
        cudaMemcpyAsync(host, device, sizeof(int64_t), cudaMemcpyDeviceToHost, stream);
    return error == cudaSuccess ? cudaStreamSynchronize(stream) : error;
}

/* Step 1: the runs. */
cudaError_t find_runs(const entries_t &entries, scratch &s, int64_t *num_runs, cudaStream_t stream)
{
    const int64_t total = entries.num_entries;
    cudaError_t error = allocate(&s.run_index, total + 1, stream);
    if (error == cudaSuccess) {
        error = launch_items(run_start_flags, total + 1, stream, entries, s.run_index);
    }
    if (error == cudaSuccess) {
        error = scan_in_place(s.run_index, total + 1, &s.scan_space, stream);
    }
    if (error == cudaSuccess) {
        error = read_number(s.run_index + total, num_runs, stream);
    }
    if (error == cudaSuccess) {
        error = allocate(&s.run_begin, *num_runs + 1, stream);
    }
    if (error == cudaSuccess) {
        error = launch_items(run_begins, total + 1, stream, (const int64_t *)s.run_index, total,
                             s.run_begin);
    }
    return error;
}

/* Steps 2 to 4: the boxes, the counts, the places of runs and elements. */
template <int NDIM>
cudaError_t count_runs(const layout_t &layout, const entries_t &entries, int64_t num_runs,
                       scratch &s, run_table &runs, int64_t *result_offsets, cudaStream_t stream)
{
    const int64_t ndim = layout.ndim;
    cudaError_t error = allocate(&s.run_element, num_runs, stream);
    if (error == cudaSuccess) {
        error = allocate(&s.box_lower, num_runs * ndim, stream);
    }
    if (error == cudaSuccess) {
        error = allocate(&s.box_extent, num_runs * ndim, stream);
    }
    if (error == cudaSuccess) {
        error = allocate(&s.box_size, num_runs, stream);
    }
    if (error == cudaSuccess) {
        error = allocate(&s.count, num_runs + 1, stream);
    }
    if (error == cudaSuccess) {
        error = allocate(&s.result_offsets, entries.num_elements + 1, stream);
    }
    runs = run_table{s.run_element, s.box_lower, s.box_extent, s.box_size, s.count};
    if (error == cudaSuccess) {
        error = launch_items(run_boxes<NDIM>, num_runs + 1, stream, layout, entries,
                             (const int64_t *)s.run_begin, num_runs, runs);
    }
    if (error == cudaSuccess) {
        error = launch_runs(convolve_runs<NDIM, false>, num_runs, stream, layout, entries,
                            (const int64_t *)s.run_begin, num_runs, runs, result_arrays{});
    }
    if (error == cudaSuccess) {
        error = scan_in_place(s.count, num_runs + 1, &s.scan_space, stream);
    }
    if (error == cudaSuccess) {
        error =
            launch_items(element_starts, entries.num_elements + 1, stream, entries,
                         (const int64_t *)s.run_index, (const int64_t *)s.count, s.result_offsets);
    }
    if (error == cudaSuccess) {
        size_t bytes = (size_t)(entries.num_elements + 1) * sizeof(int64_t);
        error = cudaMemcpyAsync(result_offsets, s.result_offsets, bytes, cudaMemcpyDeviceToHost,
                                stream);
    }
    if (error == cudaSuccess) {
        error = cudaStreamSynchronize(stream);
    }
    return error;
}

/* Step 5: the result. */
template <int NDIM>
cudaError_t write_runs(const layout_t &layout, const entries_t &entries, int64_t num_runs,
                       const scratch &s, const run_table &runs,
                       spart_device_convolve_result &result, cudaStream_t stream)
{
    cudaError_t error = allocate(&result.indices_input, result.num_entries, stream);
    if (error == cudaSuccess) {
        error = allocate(&result.indices_output, result.num_entries, stream);
    }
    if (error == cudaSuccess) {
        error = allocate(&result.values, result.num_entries, stream);
    }
    if (error == cudaSuccess) {
        result_arrays arrays{s.count, result.indices_input, result.indices_output, result.values};
        error = launch_runs(convolve_runs<NDIM, true>, num_runs, stream, layout, entries,
                            (const int64_t *)s.run_begin, num_runs, runs, arrays);
    }
    return error;
}

template <int NDIM>
cudaError_t convolve_all(const layout_t &layout, const entries_t &entries, int64_t *result_offsets,
                         spart_device_convolve_result &result, cudaStream_t stream)
{
    scratch s = {};
    run_table runs = {};
    int64_t num_runs = 0;
    cudaError_t error = find_runs(entries, s, &num_runs, stream);
    if (error == cudaSuccess) {
        error = count_runs<NDIM>(layout, entries, num_runs, s, runs, result_offsets, stream);
    }
    if (error == cudaSuccess) {
        result.num_entries = result_offsets[entries.num_elements];
        error = write_runs<NDIM>(layout, entries, num_runs, s, runs, result, stream);
    }
    release(&s.run_index, stream);
    release(&s.run_begin, stream);
    release(&s.run_element, stream);
    release(&s.box_lower, stream);
    release(&s.box_extent, stream);
    release(&s.box_size, stream);
    release(&s.count, stream);
    release(&s.result_offsets, stream);
    if (error != cudaSuccess) {
        release(&result.indices_input, stream);
        release(&result.indices_output, stream);
        release(&result.values, stream);
        result.num_entries = 0;
    }
    return error;
}

} // namespace

extern "C" int spart_cuda_weights_convolve(const spart_device_convolve_layout *layout,
                                           const spart_device_convolve_entries *entries,
                                           int64_t *result_offsets,
                                           spart_device_convolve_result *result, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    *result = spart_device_convolve_result{};
    switch (layout->ndim) {
    case 1: return convolve_all<1>(*layout, *entries, result_offsets, *result, s);
    case 2: return convolve_all<2>(*layout, *entries, result_offsets, *result, s);
    case 3: return convolve_all<3>(*layout, *entries, result_offsets, *result, s);
    default: return convolve_all<0>(*layout, *entries, result_offsets, *result, s);
    }
}
