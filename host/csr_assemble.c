/*
 * host/csr_assemble.c: CSR matrices by a parallel stable counting sort:
 * the assembly of a regridder from weights, and the exact transpose.
 *
 * The entries are cut into as many fixed chunks as there are threads (fewer
 * when the per-chunk row histograms would be large). Each chunk counts its
 * entries per row; a scan over rows, and within a row over chunks in order,
 * gives every (chunk, row) its first slot; each chunk then places its
 * entries in order. A row therefore holds its entries in the order of the
 * input stream, whatever the chunking: the arrays are the same bit for bit
 * for any thread count.
 */
#include <string.h>

#include "operator/regridder_internal.h"

/* Per-chunk histograms are kept below this many counters. */
#define HISTOGRAM_BUDGET ((int64_t)1 << 25)

static int choose_chunks(int threads, int64_t num_keys, int64_t num_entries)
{
    int64_t chunks = threads > 0 ? threads : 1;
    int64_t by_memory = HISTOGRAM_BUDGET / (num_keys > 0 ? num_keys : 1);
    if (chunks > by_memory) {
        chunks = by_memory;
    }
    if (chunks > num_entries / 4096 + 1) {
        chunks = num_entries / 4096 + 1; /* no point in tiny chunks */
    }
    return chunks < 1 ? 1 : (int)chunks;
}

/* Turn per-chunk counts into per-chunk cursors (in place) and fill
 * row_ptr; returns the number of entries. counts[c * num_keys + r]. */
static int64_t scan_counts(int64_t *counts, int num_chunks, int64_t num_keys, int64_t *row_ptr)
{
    int64_t running = 0;
    for (int64_t r = 0; r < num_keys; r++) {
        row_ptr[r] = running;
        for (int c = 0; c < num_chunks; c++) {
            int64_t count = counts[(int64_t)c * num_keys + r];
            counts[(int64_t)c * num_keys + r] = running;
            running += count;
        }
    }
    row_ptr[num_keys] = running;
    return running;
}

/* The element holding entry k: the last e with offsets[e] <= k. */
static int64_t element_of(const int64_t *offsets, int64_t num_elements, int64_t k)
{
    int64_t low = 0, high = num_elements; /* offsets[low] <= k < offsets[high] */
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (offsets[middle] <= k) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

static spart_status allocate_arrays(const spart_allocator *allocator, spart_csr *csr,
                                    spart_value_type value_type)
{
    size_t n = (size_t)csr->num_entries;
    if (csr->num_columns < ((int64_t)1 << 31)) {
        csr->columns32 = spart_alloc(allocator, n, sizeof(int32_t));
    } else {
        csr->columns64 = spart_alloc(allocator, n, sizeof(int64_t));
    }
    if (value_type == SPART_FLOAT32) {
        csr->values32 = spart_alloc(allocator, n, sizeof(float));
    } else {
        csr->values64 = spart_alloc(allocator, n, sizeof(double));
    }
    if ((csr->columns32 == NULL && csr->columns64 == NULL) ||
        (csr->values32 == NULL && csr->values64 == NULL)) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    return SPART_OK;
}

static void store(spart_csr *csr, int64_t slot, int64_t column, double value)
{
    if (csr->columns32 != NULL) {
        csr->columns32[slot] = (int32_t)column;
    } else {
        csr->columns64[slot] = column;
    }
    if (csr->values32 != NULL) {
        csr->values32[slot] = (float)value;
    } else {
        csr->values64[slot] = value;
    }
}

/* One pass over a chunk of the weights: count (place = 0) or place. */
static void assemble_chunk(const spart_assembly_source *source, int64_t begin, int64_t end,
                           int place, int64_t *cursor, spart_csr *csr)
{
    if (begin >= end) {
        return;
    }
    int64_t element = element_of(source->offsets, source->num_elements, begin);
    for (int64_t k = begin; k < end; k++) {
        while (source->offsets[element + 1] <= k) {
            element++;
        }
        double value = source->values[k];
        if (source->drop_zeros && value == 0.0) {
            continue;
        }
        int64_t cell_out = source->indices_output[k];
        int64_t row = source->row_offset[element] + (source->row_lookup != NULL
                                                         ? source->row_lookup[cell_out]
                                                         : cell_out * source->row_lookup_stride);
        if (!place) {
            cursor[row]++;
            continue;
        }
        int64_t cell_in = source->indices_input[k];
        int64_t column = source->column_offset[element] +
                         (source->column_lookup != NULL ? source->column_lookup[cell_in]
                                                        : cell_in * source->column_lookup_stride);
        store(csr, cursor[row]++, column, value);
    }
}

/* One pass over entries begin .. end - 1 of a sort's source, counting
 * each entry's row in cursor[row] (place 0) or storing the entry at
 * cursor[row]++ of `csr` (place 1). */
typedef void (*chunk_pass)(const void *source, int64_t begin, int64_t end, int place,
                           int64_t *cursor, spart_csr *csr);

/* The counting sort both builds share: `total` entries of `source` into
 * `csr` (whose num_rows is the number of keys), in chunks of entries by
 * threads: each chunk counts its rows, the counts are scanned into row
 * starts and each chunk's cursors, then each chunk places its entries in
 * order, so the result is the same for any number of threads. */
static spart_status counting_sort(const spart_allocator *allocator, const void *source,
                                  int64_t total, chunk_pass pass, spart_value_type value_type,
                                  int threads, spart_csr *csr)
{
    int64_t keys = csr->num_rows;
    int num_chunks = choose_chunks(threads, keys, total);
    int64_t *counts =
        spart_alloc_zero(allocator, (size_t)num_chunks * (size_t)keys + 1, sizeof(int64_t));
    csr->row_ptr = spart_alloc(allocator, (size_t)keys + 1, sizeof(int64_t));
    if (counts == NULL || csr->row_ptr == NULL) {
        spart_free(allocator, counts);
        spart_csr_release(allocator, csr);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static, 1) num_threads(num_chunks)
    for (int c = 0; c < num_chunks; c++) {
        pass(source, total * c / num_chunks, total * (c + 1) / num_chunks, 0,
             counts + (int64_t)c * keys, csr);
    }
    csr->num_entries = scan_counts(counts, num_chunks, keys, csr->row_ptr);
    if (allocate_arrays(allocator, csr, value_type) != SPART_OK) {
        spart_free(allocator, counts);
        spart_csr_release(allocator, csr);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static, 1) num_threads(num_chunks)
    for (int c = 0; c < num_chunks; c++) {
        pass(source, total * c / num_chunks, total * (c + 1) / num_chunks, 1,
             counts + (int64_t)c * keys, csr);
    }
    spart_free(allocator, counts);
    return SPART_OK;
}

/* assemble_chunk as counting_sort takes it. */
static void assemble_pass(const void *source, int64_t begin, int64_t end, int place,
                          int64_t *cursor, spart_csr *csr)
{
    assemble_chunk(source, begin, end, place, cursor, csr);
}

spart_status spart_host_csr_assemble(const spart_allocator *allocator,
                                     const spart_assembly_source *source, int64_t num_rows,
                                     int64_t num_columns, spart_value_type value_type, int threads,
                                     spart_csr *csr)
{
    memset(csr, 0, sizeof *csr);
    csr->num_rows = num_rows;
    csr->num_columns = num_columns;
    int64_t total = source->offsets[source->num_elements];
    return counting_sort(allocator, source, total, assemble_pass, value_type, threads, csr);
}

static int64_t column_at(const spart_csr *csr, int64_t k)
{
    return csr->columns32 != NULL ? csr->columns32[k] : csr->columns64[k];
}

static double value_at(const spart_csr *csr, int64_t k)
{
    return csr->values32 != NULL ? (double)csr->values32[k] : csr->values64[k];
}

/* One pass over a chunk of entries of `csr`, counting or placing them by
 * column. The row of entry k is found by walking row_ptr. */
static void transpose_chunk(const spart_csr *csr, int64_t begin, int64_t end, int place,
                            int64_t *cursor, spart_csr *transposed)
{
    if (begin >= end) {
        return;
    }
    int64_t row = element_of(csr->row_ptr, csr->num_rows, begin);
    for (int64_t k = begin; k < end; k++) {
        while (csr->row_ptr[row + 1] <= k) {
            row++;
        }
        int64_t column = column_at(csr, k);
        if (!place) {
            cursor[column]++;
        } else {
            store(transposed, cursor[column]++, row, value_at(csr, k));
        }
    }
}

/* transpose_chunk as counting_sort takes it. */
static void transpose_pass(const void *source, int64_t begin, int64_t end, int place,
                           int64_t *cursor, spart_csr *transposed)
{
    transpose_chunk(source, begin, end, place, cursor, transposed);
}

spart_status spart_host_csr_transpose(const spart_allocator *allocator, const spart_csr *csr,
                                      int threads, spart_csr *transposed)
{
    memset(transposed, 0, sizeof *transposed);
    transposed->num_rows = csr->num_columns;
    transposed->num_columns = csr->num_rows;
    spart_value_type type = csr->values32 != NULL ? SPART_FLOAT32 : SPART_FLOAT64;
    return counting_sort(allocator, csr, csr->num_entries, transpose_pass, type, threads,
                         transposed);
}

void spart_csr_release(const spart_allocator *allocator, spart_csr *csr)
{
    spart_free(allocator, csr->row_ptr);
    spart_free(allocator, csr->columns32);
    spart_free(allocator, csr->columns64);
    spart_free(allocator, csr->values32);
    spart_free(allocator, csr->values64);
    memset(csr, 0, sizeof *csr);
}
