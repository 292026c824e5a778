/*
 * kernels/csr_assemble.cu: CSR matrices built on the device, the twin of
 * host/csr_assemble.c: the assembly of a regridder from weights, the exact
 * transpose, and the table of long rows that the product needs.
 *
 * The host counts each row's entries per chunk of the input, scans the
 * counts in (row, chunk) order and lets every chunk place its entries in
 * order, so a row holds its entries in input order. Here every entry's key
 * (its row; for the transpose, its column) is sorted together with the
 * entry's position by CUB's radix sort, which is stable: equal keys keep
 * their positions in ascending order. Slot s of the result then takes the
 * entry at the s-th sorted position, which is the host's order exactly,
 * whatever the launch configuration. row_ptr[r] is the number of sorted
 * keys below r, found by a binary search. No atomics: a radix sort's
 * per-block digit counts are scanned in block order, never claimed by
 * atomic cursors.
 *
 * An entry dropped as zero gets the key num_rows, past every row: it sorts
 * after the kept entries, and row_ptr[num_rows] counts only kept ones.
 *
 * Keys and positions are 32-bit integers where they fit (fewer bytes per
 * radix pass) and 64-bit otherwise; only the bits a key can use are sorted.
 * Values are copied as they are, or rounded to float (round to nearest, as
 * the host's conversion) for float32 matrices.
 *
 * Everything is enqueued on the caller's stream; nothing here allocates or
 * synchronises.
 */
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <stdint.h>

#include "csr_assembly_entry.cuh"
#include "csr_search.cuh"
#include "device/device_internal.h"
#include "launch.cuh"
#include "operator/csr_assemble_stream.h"

namespace
{

using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch_items;
using spart_launch::threads_per_block;

size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* ---- the sort ------------------------------------------------------------------------ */

/* The item count CUB is given: the position type, so that 32-bit
 * positions get CUB's 32-bit offsets. */
template <typename Key, typename Position>
cudaError_t sort_scratch_bytes(int64_t num_items, int end_bit, size_t *bytes)
{
    cub::DoubleBuffer<Key> keys(nullptr, nullptr);
    cub::DoubleBuffer<Position> positions(nullptr, nullptr);
    return cub::DeviceRadixSort::SortPairs(nullptr, *bytes, keys, positions, (Position)num_items, 0,
                                           end_bit);
}

/* The workspace of a sort: keys 0 and 1, positions 0 and 1, CUB's scratch. */
template <typename Key> Key *key_buffer(const spart_device_sort *sort, int which)
{
    return (Key *)((char *)sort->workspace + (size_t)which * sort->key_bytes);
}

template <typename Position> Position *position_buffer(const spart_device_sort *sort, int which)
{
    return (Position *)((char *)sort->workspace + 2 * sort->key_bytes +
                        (size_t)which * sort->position_bytes);
}

/* Sort the keys and positions in buffers 0 stably by key; records where
 * the sorted arrays ended up (either buffer). */
template <typename Key, typename Position>
cudaError_t sort_pairs(spart_device_sort *sort, cudaStream_t stream)
{
    cub::DoubleBuffer<Key> keys(key_buffer<Key>(sort, 0), key_buffer<Key>(sort, 1));
    cub::DoubleBuffer<Position> positions(position_buffer<Position>(sort, 0),
                                          position_buffer<Position>(sort, 1));
    cudaError_t error = cudaSuccess;
    if (sort->num_items > 0) {
        void *scratch = (char *)sort->workspace + 2 * sort->key_bytes + 2 * sort->position_bytes;
        size_t bytes = sort->cub_bytes;
        error = cub::DeviceRadixSort::SortPairs(
            scratch, bytes, keys, positions, (Position)sort->num_items, 0, sort->end_bit, stream);
    }
    sort->sorted_keys = keys.Current();
    sort->sorted_positions = positions.Current();
    return error;
}

/* row_ptr[r] for r in [0, num_rows]: the sorted keys below r. */
template <typename Key>
__global__ void __launch_bounds__(threads_per_block)
    row_starts(const Key *__restrict__ sorted_keys, int64_t num_items, int64_t num_rows,
               int64_t *__restrict__ row_ptr)
{
    for (int64_t row = first_item(); row <= num_rows; row += item_stride()) {
        row_ptr[row] = keys_below(sorted_keys, num_items, row);
    }
}

/* ---- assembly --------------------------------------------------------------------------- */

/* Entry k's key (its row, or num_rows when it is dropped) and position. */
template <typename Key, typename Position>
__global__ void __launch_bounds__(threads_per_block)
    assembly_keys(spart_device_assembly_source source, int64_t num_rows, Key *__restrict__ keys,
                  Position *__restrict__ positions)
{
    for (int64_t k = first_item(); k < source.num_entries; k += item_stride()) {
        keys[k] = (Key)assembly_entry_row(source, k, num_rows);
        positions[k] = (Position)k;
    }
}

/* Slot s: the column and value of the entry sorted to it. */
template <typename Position, typename Column, typename Value>
__global__ void __launch_bounds__(threads_per_block)
    assembly_place(spart_device_assembly_source source, const Position *__restrict__ positions,
                   int64_t num_entries, Column *__restrict__ columns, Value *__restrict__ values)
{
    for (int64_t slot = first_item(); slot < num_entries; slot += item_stride()) {
        const int64_t k = (int64_t)positions[slot];
        columns[slot] = (Column)assembly_entry_column(source, k);
        assembly_store_value(values + slot, source.values[k]);
    }
}

template <typename Key, typename Position>
cudaError_t assemble_sort(const spart_device_assembly_source &source, int64_t num_rows,
                          spart_device_sort *sort, int64_t *row_ptr, cudaStream_t stream)
{
    cudaError_t error =
        launch_items(assembly_keys<Key, Position>, source.num_entries, stream, source, num_rows,
                     key_buffer<Key>(sort, 0), position_buffer<Position>(sort, 0));
    if (error == cudaSuccess) {
        error = sort_pairs<Key, Position>(sort, stream);
    }
    if (error == cudaSuccess && row_ptr != nullptr) {
        error = launch_items(row_starts<Key>, num_rows + 1, stream, (const Key *)sort->sorted_keys,
                             source.num_entries, num_rows, row_ptr);
    }
    return error;
}

template <typename Position, typename Column>
cudaError_t assemble_place_columns(const spart_device_assembly_source &source,
                                   const Position *positions, int64_t num_entries, Column *columns,
                                   const spart_device_csr_arrays &csr, cudaStream_t stream)
{
    if (csr.values32 != nullptr) {
        return launch_items(assembly_place<Position, Column, float>, num_entries, stream, source,
                            positions, num_entries, columns, csr.values32);
    }
    return launch_items(assembly_place<Position, Column, double>, num_entries, stream, source,
                        positions, num_entries, columns, csr.values64);
}

template <typename Position>
cudaError_t assemble_place(const spart_device_assembly_source &source, const Position *positions,
                           int64_t num_entries, const spart_device_csr_arrays &csr,
                           cudaStream_t stream)
{
    if (csr.columns32 != nullptr) {
        return assemble_place_columns(source, positions, num_entries, csr.columns32, csr, stream);
    }
    return assemble_place_columns(source, positions, num_entries, csr.columns64, csr, stream);
}

/* ---- the exact transpose ---------------------------------------------------------------- */

/* Entry k's key (its column) and position. */
template <typename Column, typename Key, typename Position>
__global__ void __launch_bounds__(threads_per_block)
    transpose_keys(const Column *__restrict__ columns, int64_t num_entries, Key *__restrict__ keys,
                   Position *__restrict__ positions)
{
    for (int64_t k = first_item(); k < num_entries; k += item_stride()) {
        keys[k] = (Key)columns[k];
        positions[k] = (Position)k;
    }
}

/* Slot s of the transpose: the row and value of the entry sorted to it. */
template <typename Position, typename Value, typename Column>
__global__ void __launch_bounds__(threads_per_block)
    transpose_place(const int64_t *__restrict__ row_ptr, int64_t num_rows,
                    const Position *__restrict__ positions, int64_t num_entries,
                    const Value *__restrict__ values, Column *__restrict__ transposed_columns,
                    Value *__restrict__ transposed_values)
{
    for (int64_t slot = first_item(); slot < num_entries; slot += item_stride()) {
        const int64_t k = (int64_t)positions[slot];
        transposed_columns[slot] = (Column)piece_holding(row_ptr, num_rows, k);
        transposed_values[slot] = values[k];
    }
}

template <typename Key, typename Position>
cudaError_t transpose_sort(const spart_device_csr &matrix, spart_device_sort *sort,
                           int64_t *row_ptr, cudaStream_t stream)
{
    Key *keys = key_buffer<Key>(sort, 0);
    Position *positions = position_buffer<Position>(sort, 0);
    cudaError_t error =
        matrix.columns32 != nullptr
            ? launch_items(transpose_keys<int32_t, Key, Position>, matrix.num_entries, stream,
                           matrix.columns32, matrix.num_entries, keys, positions)
            : launch_items(transpose_keys<int64_t, Key, Position>, matrix.num_entries, stream,
                           matrix.columns64, matrix.num_entries, keys, positions);
    if (error == cudaSuccess) {
        error = sort_pairs<Key, Position>(sort, stream);
    }
    if (error == cudaSuccess) {
        error = launch_items(row_starts<Key>, matrix.num_columns + 1, stream,
                             (const Key *)sort->sorted_keys, matrix.num_entries, matrix.num_columns,
                             row_ptr);
    }
    return error;
}

template <typename Position, typename Value>
cudaError_t transpose_place_values(const spart_device_csr &matrix, const Position *positions,
                                   const Value *values, Value *transposed_values,
                                   const spart_device_csr_arrays &transposed, cudaStream_t stream)
{
    const int64_t n = matrix.num_entries;
    if (transposed.columns32 != nullptr) {
        return launch_items(transpose_place<Position, Value, int32_t>, n, stream, matrix.row_ptr,
                            matrix.num_rows, positions, n, values, transposed.columns32,
                            transposed_values);
    }
    return launch_items(transpose_place<Position, Value, int64_t>, n, stream, matrix.row_ptr,
                        matrix.num_rows, positions, n, values, transposed.columns64,
                        transposed_values);
}

template <typename Position>
cudaError_t transpose_place_all(const spart_device_csr &matrix, const Position *positions,
                                const spart_device_csr_arrays &transposed, cudaStream_t stream)
{
    if (matrix.values32 != nullptr) {
        return transpose_place_values(matrix, positions, matrix.values32, transposed.values32,
                                      transposed, stream);
    }
    return transpose_place_values(matrix, positions, matrix.values64, transposed.values64,
                                  transposed, stream);
}

/* ---- the long-row table ------------------------------------------------------------------- */

/* Per row: 1 when it is long, and its number of chunks (0 for a short
 * row); the extra item num_rows is 0, so that after an exclusive scan it
 * holds the totals. */
__global__ void __launch_bounds__(threads_per_block)
    long_row_counts(const int64_t *__restrict__ row_ptr, int64_t num_rows, int64_t chunk_length,
                    int64_t *__restrict__ is_long, int64_t *__restrict__ chunks)
{
    for (int64_t row = first_item(); row <= num_rows; row += item_stride()) {
        int64_t length = row < num_rows ? row_ptr[row + 1] - row_ptr[row] : 0;
        int is_long_row = length > chunk_length;
        is_long[row] = is_long_row;
        chunks[row] = is_long_row ? (length + chunk_length - 1) / chunk_length : 0;
    }
}

__global__ void long_row_totals(const int64_t *__restrict__ long_index,
                                const int64_t *__restrict__ first_chunk, int64_t num_rows,
                                int64_t *__restrict__ totals)
{
    if (first_item() == 0) {
        totals[0] = long_index[num_rows];
        totals[1] = first_chunk[num_rows];
    }
}

/* The table: each long row's index, first chunk, and its chunks' bounds
 * (the layout of spart_regridder_device in src/operator/regridder_internal.h). */
__global__ void __launch_bounds__(threads_per_block)
    long_row_table(const int64_t *__restrict__ row_ptr, int64_t num_rows, int64_t chunk_length,
                   const int64_t *__restrict__ long_index, const int64_t *__restrict__ first_chunk,
                   int64_t num_long_rows, int64_t num_long_chunks, int64_t *__restrict__ table)
{
    int64_t *long_rows = table;
    int64_t *long_first_chunk = long_rows + num_long_rows;
    int64_t *chunk_begin = long_first_chunk + num_long_rows + 1;
    int64_t *chunk_end = chunk_begin + num_long_chunks;
    for (int64_t row = first_item(); row <= num_rows; row += item_stride()) {
        if (row == num_rows) {
            long_first_chunk[num_long_rows] = num_long_chunks;
            continue;
        }
        const int64_t begin = row_ptr[row], end = row_ptr[row + 1];
        if (end - begin <= chunk_length) {
            continue;
        }
        const int64_t index = long_index[row];
        int64_t chunk = first_chunk[row];
        long_rows[index] = row;
        long_first_chunk[index] = chunk;
        for (int64_t start = begin; start < end; start += chunk_length, chunk++) {
            chunk_begin[chunk] = start;
            chunk_end[chunk] = end - start > chunk_length ? start + chunk_length : end;
        }
    }
}

/* ---- the short-row index ------------------------------------------------------------------ */

/* Each row's length as a byte (zero past the last row, to the end of its
 * block), each block's first entry, and, per block of threads, whether
 * any of its rows holds more than 255 entries (too_long[blockIdx.x]; a
 * vote, not an atomic). */
__global__ void __launch_bounds__(threads_per_block)
    short_row_index(const int64_t *__restrict__ row_ptr, int64_t num_rows, int64_t padded_rows,
                    uint8_t *__restrict__ row_lengths, int64_t *__restrict__ block_starts,
                    int *__restrict__ too_long)
{
    int found = 0;
    for (int64_t row = first_item(); row < padded_rows; row += item_stride()) {
        const int64_t length = row < num_rows ? row_ptr[row + 1] - row_ptr[row] : 0;
        found |= length > 255;
        row_lengths[row] = (uint8_t)(length > 255 ? 255 : length);
        if (row % SPART_DEVICE_SHORT_ROW_BLOCK == 0) {
            block_starts[row / SPART_DEVICE_SHORT_ROW_BLOCK] = row_ptr[row];
        }
    }
    found = __syncthreads_or(found);
    if (threadIdx.x == 0) {
        too_long[blockIdx.x] = found;
    }
}

/* *any = whether any of flags[0 .. count) is set (one block). */
__global__ void __launch_bounds__(threads_per_block)
    any_flag(const int *__restrict__ flags, int count, int *__restrict__ any)
{
    int found = 0;
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        found |= flags[k];
    }
    found = __syncthreads_or(found);
    if (threadIdx.x == 0) {
        *any = found;
    }
}

/* The long-row workspace: totals (2), is_long and first chunk (num_rows +
 * 1 each, scanned in place), CUB's scan scratch. */
struct long_row_space {
    int64_t *totals;
    int64_t *long_index;
    int64_t *first_chunk;
    void *scratch;
    size_t scratch_bytes;
};

cudaError_t long_row_layout(int64_t num_rows, void *workspace, long_row_space *space,
                            size_t *total_bytes)
{
    size_t counts = round_up((size_t)(num_rows + 1) * sizeof(int64_t));
    size_t scratch = 0;
    cudaError_t error =
        cub::DeviceScan::ExclusiveSum(nullptr, scratch, (int64_t *)nullptr, num_rows + 1);
    char *base = (char *)workspace;
    space->totals = (int64_t *)base;
    space->long_index = (int64_t *)(base + 256);
    space->first_chunk = (int64_t *)(base + 256 + counts);
    space->scratch = base + 256 + 2 * counts;
    space->scratch_bytes = scratch;
    *total_bytes = 256 + 2 * counts + round_up(scratch);
    return error;
}

} // namespace

/* ---- entry points ------------------------------------------------------------------------ */

extern "C" int spart_cuda_sort_plan(int64_t num_items, int64_t key_limit, int wide,
                                    spart_device_sort *sort)
{
    *sort = spart_device_sort{};
    sort->num_items = num_items;
    sort->key_limit = key_limit;
    sort->end_bit = 1;
    while (sort->end_bit < 64 && (key_limit >> sort->end_bit) != 0) {
        sort->end_bit++;
    }
    sort->wide_keys = wide || key_limit > (int64_t)UINT32_MAX;
    sort->wide_positions = wide || num_items > (int64_t)UINT32_MAX;
    size_t items = (size_t)(num_items > 0 ? num_items : 1);
    sort->key_bytes = round_up(items * (sort->wide_keys ? 8 : 4));
    sort->position_bytes = round_up(items * (sort->wide_positions ? 8 : 4));
    cudaError_t error = cudaSuccess;
    if (num_items > 0) {
        if (!sort->wide_keys && !sort->wide_positions) {
            error =
                sort_scratch_bytes<uint32_t, uint32_t>(num_items, sort->end_bit, &sort->cub_bytes);
        } else if (!sort->wide_keys) {
            error =
                sort_scratch_bytes<uint32_t, uint64_t>(num_items, sort->end_bit, &sort->cub_bytes);
        } else if (!sort->wide_positions) {
            error =
                sort_scratch_bytes<uint64_t, uint32_t>(num_items, sort->end_bit, &sort->cub_bytes);
        } else {
            error =
                sort_scratch_bytes<uint64_t, uint64_t>(num_items, sort->end_bit, &sort->cub_bytes);
        }
    }
    sort->workspace_bytes =
        2 * sort->key_bytes + 2 * sort->position_bytes + round_up(sort->cub_bytes);
    return error;
}

extern "C" int spart_cuda_assemble_sort(const spart_device_assembly_source *source,
                                        int64_t num_rows, spart_device_sort *sort, int64_t *row_ptr,
                                        void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (!sort->wide_keys && !sort->wide_positions) {
        return assemble_sort<uint32_t, uint32_t>(*source, num_rows, sort, row_ptr, s);
    }
    if (!sort->wide_keys) {
        return assemble_sort<uint32_t, uint64_t>(*source, num_rows, sort, row_ptr, s);
    }
    if (!sort->wide_positions) {
        return assemble_sort<uint64_t, uint32_t>(*source, num_rows, sort, row_ptr, s);
    }
    return assemble_sort<uint64_t, uint64_t>(*source, num_rows, sort, row_ptr, s);
}

extern "C" int spart_cuda_assemble_place(const spart_device_assembly_source *source,
                                         const spart_device_sort *sort, int64_t num_entries,
                                         const spart_device_csr_arrays *csr, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (sort->wide_positions) {
        return assemble_place(*source, (const uint64_t *)sort->sorted_positions, num_entries, *csr,
                              s);
    }
    return assemble_place(*source, (const uint32_t *)sort->sorted_positions, num_entries, *csr, s);
}

extern "C" int spart_cuda_transpose_sort(const spart_device_csr *matrix, spart_device_sort *sort,
                                         int64_t *row_ptr, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (!sort->wide_keys && !sort->wide_positions) {
        return transpose_sort<uint32_t, uint32_t>(*matrix, sort, row_ptr, s);
    }
    if (!sort->wide_keys) {
        return transpose_sort<uint32_t, uint64_t>(*matrix, sort, row_ptr, s);
    }
    if (!sort->wide_positions) {
        return transpose_sort<uint64_t, uint32_t>(*matrix, sort, row_ptr, s);
    }
    return transpose_sort<uint64_t, uint64_t>(*matrix, sort, row_ptr, s);
}

extern "C" int spart_cuda_transpose_place(const spart_device_csr *matrix,
                                          const spart_device_sort *sort,
                                          const spart_device_csr_arrays *transposed, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (sort->wide_positions) {
        return transpose_place_all(*matrix, (const uint64_t *)sort->sorted_positions, *transposed,
                                   s);
    }
    return transpose_place_all(*matrix, (const uint32_t *)sort->sorted_positions, *transposed, s);
}

extern "C" int spart_cuda_long_rows_workspace(int64_t num_rows, size_t *bytes)
{
    long_row_space space;
    return long_row_layout(num_rows, nullptr, &space, bytes);
}

extern "C" int spart_cuda_long_rows_count(const int64_t *row_ptr, int64_t num_rows,
                                          int64_t chunk_length, void *workspace,
                                          size_t workspace_bytes, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    long_row_space space;
    size_t needed = 0;
    cudaError_t error = long_row_layout(num_rows, workspace, &space, &needed);
    if (error == cudaSuccess && workspace_bytes < needed) {
        error = cudaErrorInvalidValue;
    }
    if (error == cudaSuccess) {
        error = launch_items(long_row_counts, num_rows + 1, s, row_ptr, num_rows, chunk_length,
                             space.long_index, space.first_chunk);
    }
    size_t scratch_bytes = space.scratch_bytes;
    if (error == cudaSuccess) {
        error = cub::DeviceScan::ExclusiveSum(space.scratch, scratch_bytes, space.long_index,
                                              num_rows + 1, s);
    }
    scratch_bytes = space.scratch_bytes;
    if (error == cudaSuccess) {
        error = cub::DeviceScan::ExclusiveSum(space.scratch, scratch_bytes, space.first_chunk,
                                              num_rows + 1, s);
    }
    if (error == cudaSuccess) {
        error = launch_items(long_row_totals, 1, s, (const int64_t *)space.long_index,
                             (const int64_t *)space.first_chunk, num_rows, space.totals);
    }
    return error;
}

extern "C" int spart_cuda_long_rows_fill(const int64_t *row_ptr, int64_t num_rows,
                                         int64_t chunk_length, const void *workspace,
                                         int64_t num_long_rows, int64_t num_long_chunks,
                                         int64_t *table, void *stream)
{
    long_row_space space;
    size_t needed = 0;
    cudaError_t error = long_row_layout(num_rows, const_cast<void *>(workspace), &space, &needed);
    if (error != cudaSuccess) {
        return error;
    }
    return launch_items(long_row_table, num_rows + 1, static_cast<cudaStream_t>(stream), row_ptr,
                        num_rows, chunk_length, (const int64_t *)space.long_index,
                        (const int64_t *)space.first_chunk, num_long_rows, num_long_chunks, table);
}

extern "C" int spart_cuda_short_rows_index(const int64_t *row_ptr, int64_t num_rows,
                                           uint8_t *row_lengths, int64_t *block_starts, int *flags,
                                           void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int64_t block = SPART_DEVICE_SHORT_ROW_BLOCK;
    const int64_t padded_rows = (num_rows + block - 1) / block * block;
    /* At most SPART_DEVICE_SHORT_ROW_FLAGS - 1 blocks of threads, one flag each. */
    const int64_t most = (int64_t)(SPART_DEVICE_SHORT_ROW_FLAGS - 1) * threads_per_block;
    const int64_t items = padded_rows < most ? padded_rows : most;
    const int blocks = (int)((items + threads_per_block - 1) / threads_per_block);
    cudaError_t error = launch_items(short_row_index, items, s, row_ptr, num_rows, padded_rows,
                                     row_lengths, block_starts, flags);
    if (error == cudaSuccess) {
        error = launch_items(any_flag, 1, s, (const int *)flags, blocks,
                             flags + SPART_DEVICE_SHORT_ROW_FLAGS - 1);
    }
    return error;
}
