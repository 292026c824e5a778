/*
 * kernels/weights_device.cu: the device driver's helpers for weights built
 * on the device (contract: src/weights/weights_device.h): the exclusive
 * scan of a builder's counts (CUB, in unit order) and the coalescing sort
 * of one element's entries by (input, output) (CUB's stable radix sort of
 * the key input * size_output + output, carrying each entry's position,
 * then a gather). Pairs are unique for the builders that sort, so the
 * sorted list is the host's coalesced list. Enqueued on the caller's
 * stream; nothing here allocates or synchronises.
 */
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <stdint.h>

#include "weights/weights_device.h"

#include "launch.cuh"

namespace
{

size_t round_up(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

int bit_width(uint64_t value)
{
    int bits = 0;
    while (value != 0) {
        bits += 1;
        value >>= 1;
    }
    return bits;
}

__global__ void make_keys(spart_device_entries_out entries, int64_t n, int64_t size_output,
                          uint64_t *keys, int64_t *positions)
{
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        keys[k] = (uint64_t)entries.indices_input[k] * (uint64_t)size_output +
                  (uint64_t)entries.indices_output[k];
        positions[k] = k;
    }
}

__global__ void gather_entries(spart_device_entries_out from, const int64_t *positions, int64_t n,
                               spart_device_entries_out to)
{
    for (int64_t k = spart_launch::first_item(); k < n; k += spart_launch::item_stride()) {
        int64_t p = positions[k];
        to.indices_input[k] = from.indices_input[p];
        to.indices_output[k] = from.indices_output[p];
        to.values[k] = from.values[p];
    }
}

__global__ void pick_values(const int64_t *values, int64_t stride, int64_t count, int64_t *picked)
{
    for (int64_t k = spart_launch::first_item(); k < count; k += spart_launch::item_stride()) {
        picked[k] = values[k * stride];
    }
}

__global__ void set_first_zero(int64_t *starts)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        starts[0] = 0;
    }
}

size_t cub_scan_bytes(int64_t n)
{
    size_t bytes = 0;
    cub::DeviceScan::InclusiveSum(NULL, bytes, (const int64_t *)NULL, (int64_t *)NULL, n);
    return bytes;
}

size_t cub_sort_bytes(int64_t n)
{
    size_t bytes = 0;
    cub::DoubleBuffer<uint64_t> keys(NULL, NULL);
    cub::DoubleBuffer<int64_t> values(NULL, NULL);
    cub::DeviceRadixSort::SortPairs(NULL, bytes, keys, values, n);
    return bytes;
}

} // namespace

extern "C" size_t spart_cuda_weights_scan_scratch(int64_t n)
{
    return round_up(cub_scan_bytes(n > 0 ? n : 1));
}

extern "C" int spart_cuda_weights_pick(const int64_t *values, int64_t stride, int64_t count,
                                       int64_t *picked, void *stream)
{
    return (int)spart_launch::launch_items(pick_values, count, (cudaStream_t)stream, values, stride,
                                           count, picked);
}

extern "C" int spart_cuda_weights_scan(const int64_t *counts, int64_t n, int64_t *starts,
                                       void *scratch, size_t scratch_bytes, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t error = spart_launch::launch(set_first_zero, dim3(1), s, starts);
    if (error != cudaSuccess || n <= 0) {
        return (int)error;
    }
    size_t bytes = scratch_bytes;
    return (int)cub::DeviceScan::InclusiveSum(scratch, bytes, counts, starts + 1, n, s);
}

/* Layout of the sort's scratch: keys twice, positions twice, the sorted
 * entries (24 bytes each), then CUB's own. */
extern "C" size_t spart_cuda_weights_sort_scratch(int64_t n)
{
    size_t count = (size_t)(n > 0 ? n : 1);
    return 2 * round_up(count * sizeof(uint64_t)) + 2 * round_up(count * sizeof(int64_t)) +
           2 * round_up(count * sizeof(int64_t)) + round_up(count * sizeof(double)) +
           round_up(cub_sort_bytes((int64_t)count));
}

extern "C" int spart_cuda_weights_sort(spart_device_entries_out entries, int64_t n,
                                       int64_t size_input, int64_t size_output, void *scratch,
                                       size_t scratch_bytes, void *stream)
{
    if (n < 2) {
        return 0;
    }
    cudaStream_t s = (cudaStream_t)stream;
    size_t count = (size_t)n;
    char *space = (char *)scratch;
    uint64_t *keys[2];
    int64_t *positions[2];
    for (int b = 0; b < 2; b++) {
        keys[b] = (uint64_t *)space;
        space += round_up(count * sizeof(uint64_t));
    }
    for (int b = 0; b < 2; b++) {
        positions[b] = (int64_t *)space;
        space += round_up(count * sizeof(int64_t));
    }
    spart_device_entries_out sorted;
    sorted.indices_input = (int64_t *)space;
    space += round_up(count * sizeof(int64_t));
    sorted.indices_output = (int64_t *)space;
    space += round_up(count * sizeof(int64_t));
    sorted.values = (double *)space;
    space += round_up(count * sizeof(double));
    size_t used = (size_t)(space - (char *)scratch);
    if (used > scratch_bytes) {
        return (int)cudaErrorInvalidValue;
    }
    size_t cub_bytes = scratch_bytes - used;
    /* only the bits a key can have (the caller checked size_input *
     * size_output fits 63 bits): fewer passes of the radix sort */
    uint64_t largest = (uint64_t)size_input * (uint64_t)size_output - 1;
    int end_bit = bit_width(largest) > 0 ? bit_width(largest) : 1;
    cudaError_t error =
        spart_launch::launch_items(make_keys, n, s, entries, n, size_output, keys[0], positions[0]);
    cub::DoubleBuffer<uint64_t> key_buffer(keys[0], keys[1]);
    cub::DoubleBuffer<int64_t> position_buffer(positions[0], positions[1]);
    if (error == cudaSuccess) {
        error = cub::DeviceRadixSort::SortPairs(space, cub_bytes, key_buffer, position_buffer, n, 0,
                                                end_bit, s);
    }
    if (error == cudaSuccess) {
        error = spart_launch::launch_items(gather_entries, n, s, entries,
                                           (const int64_t *)position_buffer.Current(), n, sorted);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(entries.indices_input, sorted.indices_input,
                                count * sizeof(int64_t), cudaMemcpyDeviceToDevice, s);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(entries.indices_output, sorted.indices_output,
                                count * sizeof(int64_t), cudaMemcpyDeviceToDevice, s);
    }
    if (error == cudaSuccess) {
        error = cudaMemcpyAsync(entries.values, sorted.values, count * sizeof(double),
                                cudaMemcpyDeviceToDevice, s);
    }
    return (int)error;
}
