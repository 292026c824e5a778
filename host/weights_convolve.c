/*
 * host/weights_convolve.c: the OpenMP loops of spart_weights_convolve.
 *
 * The entries of all elements are cut into fixed blocks of
 * CONVOLVE_BLOCK entries; a block handles the runs that start in it (a run
 * may end in a later block). Blocks are handed to threads dynamically, but
 * every run is computed from its own entries alone and written where the
 * prefix sum of the count pass puts it, so the result does not depend on
 * the thread count. Each thread keeps one scratch box and grows it when a
 * run needs a larger one.
 *
 * Arithmetic, as regridding.convolve_weights: every cell of a run's box
 * starts at zero and receives value * kernel element from each entry of the
 * run in the run's order (one product and one sum, no FMA). A kernel
 * element equal to zero is skipped, so it does not reach a cell; a cell no
 * entry reaches gives no entry.
 *
 * Shortcut: when a run's distinct cells fill their bounding box and none of
 * its kernels has a zero (the usual PSF on a sensor lattice), the run
 * reaches every cell of its box, so the count is the box's size and the
 * box is read out without flags. The values are the same either way.
 */
#include <string.h>

#include <omp.h>

#include "weights/weights_convolve.h"

enum { CONVOLVE_BLOCK = 1024 };

/* One thread's scratch box: what each cell receives, and whether any
 * nonzero kernel element reached it. */
typedef struct convolve_scratch {
    double *values;
    unsigned char *reached;
    int64_t capacity;
} convolve_scratch;

/* The box of one run: its lower corner in the grid and its extent, per
 * resampled axis. */
typedef struct run_box {
    int64_t lower[SPART_MAX_NDIM];
    int64_t extent[SPART_MAX_NDIM];
    int64_t strides[SPART_MAX_NDIM];
    int64_t size;
    int64_t footprint; /* cells of the bounding box of the run's own cells */
} run_box;

/* The per-axis coordinates of flat output cell `index`. */
static void unravel_cell(const spart_convolve_layout *layout, int64_t index, int64_t *coordinates)
{
    for (int a = layout->ndim - 1; a >= 0; a--) {
        coordinates[a] = index % layout->shape_output[a];
        index /= layout->shape_output[a];
    }
}

/* The element owning entry w: the last e with offsets[e] <= w. */
static int64_t element_of(const spart_convolve_entries *entries, int64_t w)
{
    int64_t low = 0;
    int64_t high = entries->num_elements;
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (entries->offsets[middle] <= w) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

/* The end of the run starting at entry `start` of element `element`. */
static int64_t run_stop(const spart_convolve_entries *entries, int64_t element, int64_t start)
{
    int64_t end = entries->offsets[element + 1];
    int64_t stop = start + 1;
    while (stop < end && entries->indices_input[stop] == entries->indices_input[start]) {
        stop++;
    }
    return stop;
}

/* The bounding box of the run's output cells, grown by the kernel (centre
 * at floor(n / 2)) and clipped to the grid. */
static void find_box(const spart_convolve_layout *layout, const spart_convolve_entries *entries,
                     int64_t start, int64_t stop, run_box *box)
{
    int64_t upper[SPART_MAX_NDIM] = {0};
    int64_t coordinates[SPART_MAX_NDIM] = {0};
    for (int a = 0; a < layout->ndim; a++) {
        box->lower[a] = layout->shape_output[a];
        upper[a] = -1;
    }
    for (int64_t q = start; q < stop; q++) {
        unravel_cell(layout, entries->indices_output[q], coordinates);
        for (int a = 0; a < layout->ndim; a++) {
            box->lower[a] = coordinates[a] < box->lower[a] ? coordinates[a] : box->lower[a];
            upper[a] = coordinates[a] > upper[a] ? coordinates[a] : upper[a];
        }
    }
    box->size = 1;
    box->footprint = 1;
    for (int a = layout->ndim - 1; a >= 0; a--) {
        box->footprint *= upper[a] - box->lower[a] + 1;
        int64_t centre = layout->shape_kernel[a] / 2;
        int64_t low = box->lower[a] - centre;
        int64_t high = upper[a] + layout->shape_kernel[a] - 1 - centre;
        low = low < 0 ? 0 : low;
        high = high > layout->shape_output[a] - 1 ? layout->shape_output[a] - 1 : high;
        box->lower[a] = low;
        box->extent[a] = high - low + 1;
        box->strides[a] = box->size;
        box->size *= box->extent[a];
    }
}

/* One row of the kernel, elements first .. last-1, into one row of the box
 * (both indexed by the kernel's index along the row). A dense kernel has
 * no zero elements, so every element reaches its cell and the row is
 * marked at once; otherwise zeros are skipped. */
static void spread_row(const double *kernel, int64_t first, int64_t last, double value, int dense,
                       double *values, unsigned char *reached)
{
    if (dense) {
        if (values != NULL) {
            /* independent cells, each one product and one sum: the same bits
               in vector lanes as one by one */
#pragma omp simd
            for (int64_t j = first; j < last; j++) {
                values[j] += value * kernel[j];
            }
        }
        if (reached != NULL) {
            memset(reached + first, 1, (size_t)(last - first));
        }
        return;
    }
    for (int64_t j = first; j < last; j++) {
        double element = kernel[j];
        if (element == 0.0) {
            continue;
        }
        if (values != NULL) {
            values[j] += value * element;
        }
        if (reached != NULL) {
            reached[j] = 1;
        }
    }
}

/* Spread one entry (landing at `coordinates`, kernel `kernel`) into the
 * box: the kernel elements whose target lies in the box, row by row along
 * the last axis. `values` NULL: only mark the cells reached. */
static void scatter_entry(const spart_convolve_layout *layout, const run_box *box,
                          const int64_t *coordinates, const double *kernel, int dense, double value,
                          double *values, unsigned char *reached)
{
    int ndim = layout->ndim;
    int64_t first[SPART_MAX_NDIM] = {0}; /* kernel indices whose target is in the box */
    int64_t last[SPART_MAX_NDIM] = {0};  /* one past */
    int64_t shift[SPART_MAX_NDIM] = {0}; /* box position minus kernel index */
    int64_t kernel_strides[SPART_MAX_NDIM] = {0};
    int64_t stride = 1;
    for (int a = ndim - 1; a >= 0; a--) {
        kernel_strides[a] = stride;
        stride *= layout->shape_kernel[a];
        shift[a] = coordinates[a] - layout->shape_kernel[a] / 2 - box->lower[a];
        first[a] = shift[a] < 0 ? -shift[a] : 0;
        last[a] = box->extent[a] - shift[a];
        last[a] = last[a] > layout->shape_kernel[a] ? layout->shape_kernel[a] : last[a];
        if (first[a] >= last[a]) {
            return;
        }
    }
    int64_t k[SPART_MAX_NDIM] = {0};
    for (int a = 0; a < ndim; a++) {
        k[a] = first[a];
    }
    int inner = ndim - 1;
    for (;;) {
        int64_t at_box = shift[inner];
        int64_t at_kernel = 0;
        for (int a = 0; a < inner; a++) {
            at_box += (k[a] + shift[a]) * box->strides[a];
            at_kernel += k[a] * kernel_strides[a];
        }
        spread_row(kernel + at_kernel, first[inner], last[inner], value, dense,
                   values == NULL ? NULL : values + at_box,
                   reached == NULL ? NULL : reached + at_box);
        int a = inner - 1;
        while (a >= 0) {
            k[a]++;
            if (k[a] < last[a]) {
                break;
            }
            k[a] = first[a];
            a--;
        }
        if (a < 0) {
            return;
        }
    }
}

/* The offset, in the caller's kernel array, of the kernel of the cell at
 * `coordinates` of element `element`. */
static int64_t kernel_offset(const spart_convolve_layout *layout, int64_t element,
                             const int64_t *coordinates)
{
    int64_t offset = layout->element_base[element];
    for (int a = 0; a < layout->ndim; a++) {
        offset += coordinates[a] * layout->row_strides[a];
    }
    return offset;
}

/* Make room for a box of `size` cells. Returns nonzero on failure. */
static int reserve(const spart_allocator *allocator, convolve_scratch *scratch, int64_t size)
{
    if (size <= scratch->capacity && scratch->values != NULL && scratch->reached != NULL) {
        return 0;
    }
    int64_t capacity = 2 * size;
    spart_free(allocator, scratch->values);
    spart_free(allocator, scratch->reached);
    scratch->values = spart_alloc(allocator, (size_t)capacity, sizeof(double));
    scratch->reached = spart_alloc(allocator, (size_t)capacity, 1);
    scratch->capacity = capacity;
    if (scratch->values == NULL || scratch->reached == NULL) {
        scratch->capacity = 0;
        return 1;
    }
    return 0;
}

/* Read the box out in grid order: the entries of the run, written from
 * `at` if `result_input` is not NULL; every cell if `all_reached`, else
 * the cells flagged. Returns how many. */
static int64_t read_box(const spart_convolve_layout *layout, const run_box *box,
                        const convolve_scratch *scratch, int all_reached, int64_t index_input,
                        int64_t at, int64_t *result_input, int64_t *result_output,
                        double *result_values)
{
    int inner = layout->ndim - 1;
    int64_t row_length = box->extent[inner];
    int64_t grid_strides[SPART_MAX_NDIM] = {0};
    int64_t row[SPART_MAX_NDIM] = {0}; /* the row's position in the box */
    int64_t stride = 1;
    for (int a = inner; a >= 0; a--) {
        grid_strides[a] = stride;
        stride *= layout->shape_output[a];
    }
    int64_t count = 0;
    if (result_input == NULL && all_reached) {
        return box->size;
    }
    if (result_input == NULL) {
        /* counting only: reached holds 0 or 1 */
#pragma omp simd reduction(+ : count)
        for (int64_t t = 0; t < box->size; t++) {
            count += scratch->reached[t];
        }
        return count;
    }
    for (int64_t row_start = 0; row_start < box->size; row_start += row_length) {
        /* the grid index of the row's first cell */
        int64_t cell = box->lower[inner];
        for (int a = 0; a < inner; a++) {
            cell += (box->lower[a] + row[a]) * grid_strides[a];
        }
        for (int64_t j = 0; j < row_length; j++) {
            if (!all_reached && !scratch->reached[row_start + j]) {
                continue;
            }
            result_input[at + count] = index_input;
            result_output[at + count] = cell + j;
            result_values[at + count] = scratch->values[row_start + j];
            count++;
        }
        for (int a = inner - 1; a >= 0; a--) {
            row[a]++;
            if (row[a] < box->extent[a]) {
                break;
            }
            row[a] = 0;
        }
    }
    return count;
}

/* Where one pass writes: run_sizes for the count pass, else the result. */
typedef struct convolve_target {
    int64_t *run_sizes;
    const int64_t *run_starts;
    int64_t *result_input;
    int64_t *result_output;
    double *result_values;
} convolve_target;

/* Whether the kernel of the cell at `coordinates` of `element` has no zero
 * element; its offset in the caller's array into *offset. */
static int dense_kernel(const spart_convolve_layout *layout, int64_t element,
                        const int64_t *coordinates, int64_t *offset)
{
    *offset = kernel_offset(layout, element, coordinates);
    return layout->size_kernel > 0 && layout->dense[*offset / layout->size_kernel];
}

/* Whether the run reaches every cell of its box, which is then its count:
 * its cells are distinct (strictly ascending) and fill their bounding box,
 * and every kernel it uses is dense. The kernels centred on every cell of a
 * rectangle cover that rectangle grown by the kernel, which is the box
 * before it is clipped to the grid. */
static int run_fills_box(const spart_convolve_layout *layout, const spart_convolve_entries *entries,
                         int64_t element, int64_t start, int64_t stop, const run_box *box)
{
    if (stop - start != box->footprint) {
        return 0;
    }
    int64_t coordinates[SPART_MAX_NDIM] = {0};
    for (int64_t q = start; q < stop; q++) {
        if (q > start && entries->indices_output[q] <= entries->indices_output[q - 1]) {
            return 0;
        }
        int64_t offset = 0;
        unravel_cell(layout, entries->indices_output[q], coordinates);
        if (!dense_kernel(layout, element, coordinates, &offset)) {
            return 0;
        }
    }
    return 1;
}

/* Convolve the run of entries start .. stop-1 of `element`. Returns the
 * number of entries it becomes, or -1 when scratch ran out. */
static int64_t convolve_run(const spart_allocator *allocator, const spart_convolve_layout *layout,
                            const spart_convolve_entries *entries, int64_t element, int64_t start,
                            int64_t stop, convolve_scratch *scratch, const convolve_target *target)
{
    run_box box = {{0}, {0}, {0}, 0, 0};
    find_box(layout, entries, start, stop, &box);
    if (box.size == 0) {
        return 0;
    }
    int write = target->result_input != NULL;
    int filled = run_fills_box(layout, entries, element, start, stop, &box);
    if (!write && filled) {
        return box.size;
    }
    if (reserve(allocator, scratch, box.size) != 0) {
        return -1;
    }
    /* a filled box needs no flags: every cell is reached */
    unsigned char *reached = filled ? NULL : scratch->reached;
    if (reached != NULL) {
        memset(reached, 0, (size_t)box.size);
    }
    if (write) {
        memset(scratch->values, 0, (size_t)box.size * sizeof(double));
    }
    int64_t coordinates[SPART_MAX_NDIM] = {0};
    for (int64_t q = start; q < stop; q++) {
        unravel_cell(layout, entries->indices_output[q], coordinates);
        int64_t offset = 0;
        int dense = dense_kernel(layout, element, coordinates, &offset);
        scatter_entry(layout, &box, coordinates, layout->kernel + offset, dense, entries->values[q],
                      write ? scratch->values : NULL, reached);
    }
    int64_t at = write ? target->run_starts[start] : 0;
    return read_box(layout, &box, scratch, filled, entries->indices_input[start], at,
                    target->result_input, target->result_output, target->result_values);
}

/* The runs starting in block `block`. Returns nonzero when scratch ran out. */
static int convolve_block(const spart_allocator *allocator, const spart_convolve_layout *layout,
                          const spart_convolve_entries *entries, int64_t block,
                          convolve_scratch *scratch, const convolve_target *target)
{
    int64_t total = entries->offsets[entries->num_elements];
    int64_t begin = block * CONVOLVE_BLOCK;
    int64_t end = begin + CONVOLVE_BLOCK < total ? begin + CONVOLVE_BLOCK : total;
    int64_t element = element_of(entries, begin);
    for (int64_t w = begin; w < end; w++) {
        while (entries->offsets[element + 1] <= w) {
            element++;
        }
        int starts = w == entries->offsets[element] ||
                     entries->indices_input[w - 1] != entries->indices_input[w];
        if (!starts) {
            if (target->run_sizes != NULL) {
                target->run_sizes[w] = 0;
            }
            continue;
        }
        int64_t stop = run_stop(entries, element, w);
        int64_t count = convolve_run(allocator, layout, entries, element, w, stop, scratch, target);
        if (count < 0) {
            return 1;
        }
        if (target->run_sizes != NULL) {
            target->run_sizes[w] = count;
        }
    }
    return 0;
}

/* One pass over every block. Returns nonzero when scratch ran out. */
static int convolve_pass(const spart_allocator *allocator, const spart_convolve_layout *layout,
                         const spart_convolve_entries *entries, int threads,
                         const convolve_target *target)
{
    int64_t total = entries->offsets[entries->num_elements];
    int64_t num_blocks = (total + CONVOLVE_BLOCK - 1) / CONVOLVE_BLOCK;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed) if (num_blocks > 1)
    {
        convolve_scratch scratch = {NULL, NULL, 0};
#pragma omp for schedule(dynamic, 1)
        for (int64_t block = 0; block < num_blocks; block++) {
            if (failed == 0) {
                failed |= convolve_block(allocator, layout, entries, block, &scratch, target);
            }
        }
        spart_free(allocator, scratch.values);
        spart_free(allocator, scratch.reached);
    }
    return failed;
}

int spart_convolve_count_host(const spart_allocator *allocator, const spart_convolve_layout *layout,
                              const spart_convolve_entries *entries, int threads,
                              int64_t *run_sizes)
{
    convolve_target target = {run_sizes, NULL, NULL, NULL, NULL};
    return convolve_pass(allocator, layout, entries, threads, &target);
}

int spart_convolve_write_host(const spart_allocator *allocator, const spart_convolve_layout *layout,
                              const spart_convolve_entries *entries, int threads,
                              const int64_t *run_starts, int64_t *result_input,
                              int64_t *result_output, double *result_values)
{
    convolve_target target = {NULL, run_starts, result_input, result_output, result_values};
    return convolve_pass(allocator, layout, entries, threads, &target);
}
