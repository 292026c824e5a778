/*
 * kernels/csr_assemble_stream.cu: the streaming assembly's passes over one
 * block on the device, the twin of host/csr_assemble_stream.c (the order
 * and the checks are written in src/operator/csr_assemble_stream.h).
 *
 * A block's entries get their rows as keys (num_rows for an entry dropped
 * as zero) and are sorted with their positions by the stable radix sort of
 * kernels/csr_assemble.cu (spart_cuda_assemble_sort without row_ptr: the
 * keys of the whole assembly, kernels/csr_assembly_entry.cuh, over the
 * block as a spart_device_assembly_source): the entries of one row
 * then form a run of the sorted keys, in the block's order. The count pass
 * adds each run's length to its row's cursor, by the one thread at the
 * run's end; the place pass puts the entry sorted to s at slot
 * cursor[row + 1] + (s - the run's first position), then advances the
 * cursors by the run lengths in a second launch, so no cursor is read and
 * written by two threads at once. A run's first position is found by
 * galloping back from s (runs are short: a row's entries in one block),
 * then a binary search. No atomics; integers only, values copied or
 * rounded to float by round-to-nearest as the host does.
 *
 * The scan of the cursors is CUB's exclusive sum; the fingerprint is a sum
 * of 64-bit integers (mod 2^64), the same in any order, by per-block trees
 * and one block over their results.
 *
 * Everything is enqueued on the caller's stream; nothing here allocates or
 * synchronises.
 */
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>
#include <stdint.h>

#include "csr_assembly_entry.cuh"
#include "csr_search.cuh"
#include "launch.cuh"
#define SPART_STREAM_FUNCTION static __host__ __device__ inline
#include "operator/csr_assemble_stream.h"

namespace
{

using spart_launch::first_item;
using spart_launch::item_stride;
using spart_launch::launch;
using spart_launch::launch_items;
using spart_launch::threads_per_block;

/* Blocks of the fingerprint's first launch (its partial sums). */
constexpr int fingerprint_blocks = 1024;

size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* The block as kernels/csr_assemble.cu reads a whole source: the same
 * fields but the index ranges, which the host checks. */
spart_device_assembly_source assembly_source_of(const spart_stream_source &block)
{
    spart_device_assembly_source source = {};
    source.num_elements = block.num_elements;
    source.num_entries = block.num_entries;
    source.offsets = block.offsets;
    source.indices_input = block.indices_input;
    source.indices_output = block.indices_output;
    source.values = block.values;
    source.row_offset = block.row_offset;
    source.column_offset = block.column_offset;
    source.row_lookup = block.row_lookup;
    source.column_lookup = block.column_lookup;
    source.row_lookup_stride = block.row_lookup_stride;
    source.column_lookup_stride = block.column_lookup_stride;
    source.drop_zeros = block.drop_zeros;
    return source;
}

/* The first position of the run of equal keys that holds position s. */
template <typename Key>
__device__ __forceinline__ int64_t run_first(const Key *__restrict__ sorted, int64_t s)
{
    const Key key = sorted[s];
    int64_t known = s; /* sorted[known] == key */
    int64_t step = 1;
    int64_t below = -1; /* a position before the run, or -1 */
    while (true) {
        const int64_t probe = s - step;
        if (probe < 0) {
            break;
        }
        if (sorted[probe] != key) {
            below = probe;
            break;
        }
        known = probe;
        step *= 2;
    }
    /* the run starts in (below, known]: the first position there holding key */
    int64_t low = below + 1, high = known;
    while (low < high) {
        const int64_t middle = low + (high - low) / 2;
        if (sorted[middle] != key) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

/* cursor[key + 1] += the length of each run of a kept row, by the thread
 * at the run's last position. */
template <typename Key>
__global__ void __launch_bounds__(threads_per_block)
    add_runs(const Key *__restrict__ sorted, int64_t n, int64_t num_rows,
             int64_t *__restrict__ cursor)
{
    for (int64_t s = first_item(); s < n; s += item_stride()) {
        const int64_t key = (int64_t)sorted[s];
        if (key >= num_rows || (s + 1 < n && (int64_t)sorted[s + 1] == key)) {
            continue;
        }
        cursor[key + 1] += s + 1 - run_first(sorted, s);
    }
}

/* tally[0] = the kept entries (the sorted keys below num_rows). */
template <typename Key>
__global__ void kept_entries(const Key *__restrict__ sorted, int64_t n, int64_t num_rows,
                             int64_t *__restrict__ tally)
{
    if (first_item() == 0) {
        tally[0] = keys_below(sorted, n, num_rows);
    }
}

/* Slot cursor[row + 1] + rank of each kept entry; slots outside [0,
 * num_entries) are counted in *out_of_range (block by block: no two
 * threads write one count), never written. */
template <typename Key, typename Position, typename Column, typename Value>
__global__ void __launch_bounds__(threads_per_block)
    place_runs(spart_device_assembly_source source, const Key *__restrict__ sorted,
               const Position *__restrict__ positions, int64_t n, int64_t num_rows,
               const int64_t *__restrict__ cursor, int64_t num_entries,
               Column *__restrict__ columns, Value *__restrict__ values,
               int *__restrict__ out_of_range)
{
    int outside = 0;
    for (int64_t s = first_item(); s < n; s += item_stride()) {
        const int64_t key = (int64_t)sorted[s];
        if (key >= num_rows) {
            continue;
        }
        const int64_t slot = cursor[key + 1] + (s - run_first(sorted, s));
        if (slot < 0 || slot >= num_entries) {
            outside = 1;
            continue;
        }
        const int64_t k = (int64_t)positions[s];
        columns[slot] = (Column)assembly_entry_column(source, k);
        assembly_store_value(values + slot, source.values[k]);
    }
    outside = __syncthreads_or(outside);
    if (threadIdx.x == 0 && outside) {
        out_of_range[blockIdx.x] = 1;
    }
}

/* The sum of every thread's `value` over its block, in thread 0 (a tree in
 * shared memory; integers, so any order gives the same). Every thread of
 * the block must call it. */
template <typename T> __device__ T block_sum(T value)
{
    __shared__ T sums[threads_per_block];
    sums[threadIdx.x] = value;
    __syncthreads();
    for (int half = threads_per_block / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            sums[threadIdx.x] += sums[threadIdx.x + half];
        }
        __syncthreads();
    }
    return sums[0];
}

/* tally[1] = how many blocks of place_runs found a slot out of range. */
__global__ void __launch_bounds__(threads_per_block)
    count_flags(const int *__restrict__ flags, int count, int64_t *__restrict__ tally)
{
    int64_t sum = 0;
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        sum += flags[k];
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        tally[1] = sum;
    }
}

/* Per block of threads, the sum of mix(first_index + j, values[j]) over its
 * items. */
__global__ void __launch_bounds__(threads_per_block)
    fingerprint_partials(const int64_t *__restrict__ values, int64_t count, int64_t first_index,
                         uint64_t *__restrict__ partials)
{
    uint64_t sum = 0;
    for (int64_t j = first_item(); j < count; j += item_stride()) {
        sum += spart_stream_mix(first_index + j, values[j]);
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
}

__global__ void __launch_bounds__(threads_per_block)
    fingerprint_total(const uint64_t *__restrict__ partials, int count,
                      uint64_t *__restrict__ result)
{
    uint64_t sum = 0;
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        sum += partials[k];
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        *result = sum;
    }
}

template <typename Key>
cudaError_t count_block(int64_t n, int64_t num_rows, const spart_device_sort *sort, int64_t *cursor,
                        int64_t *tally, cudaStream_t stream)
{
    const Key *sorted = (const Key *)sort->sorted_keys;
    cudaError_t error = launch_items(add_runs<Key>, n, stream, sorted, n, num_rows, cursor);
    if (error == cudaSuccess) {
        error = launch(kept_entries<Key>, dim3(1), stream, sorted, n, num_rows, tally);
    }
    return error;
}

/* The flags of place_runs: one int per block of its launch, at most this
 * many blocks (the grid strides beyond), kept after the tally's two
 * counts. */
constexpr int64_t place_blocks = 65536;

template <typename Key, typename Position, typename Column, typename Value>
cudaError_t place_block(const spart_device_assembly_source &source, int64_t num_rows,
                        const spart_device_sort *sort, int64_t *cursor, int64_t num_entries,
                        Column *columns, Value *values, int64_t *tally, cudaStream_t stream)
{
    const int64_t n = source.num_entries;
    const Key *sorted = (const Key *)sort->sorted_keys;
    const Position *positions = (const Position *)sort->sorted_positions;
    int *flags = (int *)(tally + 2);
    int64_t blocks = (n + threads_per_block - 1) / threads_per_block;
    blocks = blocks < place_blocks ? blocks : place_blocks;
    cudaError_t error =
        cudaMemsetAsync(flags, 0, (size_t)(blocks > 0 ? blocks : 1) * sizeof(int), stream);
    if (error == cudaSuccess && blocks > 0) {
        error = launch(place_runs<Key, Position, Column, Value>, dim3((unsigned)blocks), stream,
                       source, sorted, positions, n, num_rows, (const int64_t *)cursor, num_entries,
                       columns, values, flags);
    }
    if (error == cudaSuccess) {
        error = launch(count_flags, dim3(1), stream, (const int *)flags, (int)blocks, tally);
    }
    if (error == cudaSuccess) {
        error = count_block<Key>(n, num_rows, sort, cursor, tally, stream);
    }
    return error;
}

template <typename Key, typename Position, typename Column>
cudaError_t place_values(const spart_device_assembly_source &source, int64_t num_rows,
                         const spart_device_sort *sort, int64_t *cursor, int64_t num_entries,
                         Column *columns, const spart_device_csr_arrays &csr, int64_t *tally,
                         cudaStream_t stream)
{
    if (csr.values32 != nullptr) {
        return place_block<Key, Position, Column, float>(
            source, num_rows, sort, cursor, num_entries, columns, csr.values32, tally, stream);
    }
    return place_block<Key, Position, Column, double>(source, num_rows, sort, cursor, num_entries,
                                                      columns, csr.values64, tally, stream);
}

template <typename Key, typename Position>
cudaError_t pass_typed(int pass, const spart_device_assembly_source &source, int64_t num_rows,
                       spart_device_sort *sort, int64_t *cursor, int64_t num_entries,
                       const spart_device_csr_arrays *csr, int64_t *tally, cudaStream_t stream)
{
    cudaError_t error = cudaMemsetAsync(tally, 0, 2 * sizeof(int64_t), stream);
    if (error != cudaSuccess || source.num_entries == 0) {
        return error;
    }
    error = (cudaError_t)spart_cuda_assemble_sort(&source, num_rows, sort, nullptr, stream);
    if (error != cudaSuccess) {
        return error;
    }
    if (pass == 0) {
        return count_block<Key>(source.num_entries, num_rows, sort, cursor, tally, stream);
    }
    if (csr->columns32 != nullptr) {
        return place_values<Key, Position, int32_t>(source, num_rows, sort, cursor, num_entries,
                                                    csr->columns32, *csr, tally, stream);
    }
    return place_values<Key, Position, int64_t>(source, num_rows, sort, cursor, num_entries,
                                                csr->columns64, *csr, tally, stream);
}

cudaError_t run_pass(int pass, const spart_stream_source *block, int64_t num_rows,
                     spart_device_sort *sort, int64_t *cursor, int64_t num_entries,
                     const spart_device_csr_arrays *csr, int64_t *tally, cudaStream_t stream)
{
    const spart_device_assembly_source source = assembly_source_of(*block);
    if (!sort->wide_keys && !sort->wide_positions) {
        return pass_typed<uint32_t, uint32_t>(pass, source, num_rows, sort, cursor, num_entries,
                                              csr, tally, stream);
    }
    if (!sort->wide_keys) {
        return pass_typed<uint32_t, uint64_t>(pass, source, num_rows, sort, cursor, num_entries,
                                              csr, tally, stream);
    }
    if (!sort->wide_positions) {
        return pass_typed<uint64_t, uint32_t>(pass, source, num_rows, sort, cursor, num_entries,
                                              csr, tally, stream);
    }
    return pass_typed<uint64_t, uint64_t>(pass, source, num_rows, sort, cursor, num_entries, csr,
                                          tally, stream);
}

} // namespace

/* ---- entry points ------------------------------------------------------------------------ */

extern "C" int spart_cuda_stream_scratch_bytes(int64_t num_rows, size_t *bytes)
{
    size_t scan = 0;
    cudaError_t error =
        cub::DeviceScan::ExclusiveSum(nullptr, scan, (int64_t *)nullptr, num_rows + 1);
    size_t fingerprint = round_up((size_t)(fingerprint_blocks + 1) * sizeof(uint64_t));
    *bytes = round_up(scan) > fingerprint ? round_up(scan) : fingerprint;
    return error;
}

extern "C" int spart_cuda_stream_tally_bytes(void)
{
    return (int)(2 * sizeof(int64_t) + (size_t)place_blocks * sizeof(int));
}

extern "C" int spart_cuda_stream_count(const spart_stream_source *source, int64_t num_rows,
                                       spart_device_sort *sort, int64_t *cursor, int64_t *tally,
                                       void *stream)
{
    return run_pass(0, source, num_rows, sort, cursor, 0, nullptr, tally,
                    static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_stream_place(const spart_stream_source *source, int64_t num_rows,
                                       spart_device_sort *sort, int64_t *cursor,
                                       int64_t num_entries, const spart_device_csr_arrays *csr,
                                       int64_t *tally, void *stream)
{
    return run_pass(1, source, num_rows, sort, cursor, num_entries, csr, tally,
                    static_cast<cudaStream_t>(stream));
}

extern "C" int spart_cuda_stream_scan(int64_t *cursor, int64_t num_rows, void *scratch,
                                      size_t bytes, void *stream)
{
    size_t needed = 0;
    cudaError_t error =
        cub::DeviceScan::ExclusiveSum(nullptr, needed, (int64_t *)nullptr, num_rows + 1);
    if (error == cudaSuccess && needed > bytes) {
        error = cudaErrorInvalidValue;
    }
    if (error == cudaSuccess) {
        error = cub::DeviceScan::ExclusiveSum(scratch, needed, cursor, num_rows + 1,
                                              static_cast<cudaStream_t>(stream));
    }
    return error;
}

extern "C" int spart_cuda_stream_fingerprint(const int64_t *values, int64_t count,
                                             int64_t first_index, void *scratch, size_t bytes,
                                             uint64_t *result, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (bytes < (size_t)fingerprint_blocks * sizeof(uint64_t)) {
        return (int)cudaErrorInvalidValue;
    }
    uint64_t *partials = static_cast<uint64_t *>(scratch);
    cudaError_t error = launch(fingerprint_partials, dim3(fingerprint_blocks), s, values, count,
                               first_index, partials);
    if (error == cudaSuccess) {
        error = launch(fingerprint_total, dim3(1), s, (const uint64_t *)partials,
                       fingerprint_blocks, result);
    }
    return error;
}
