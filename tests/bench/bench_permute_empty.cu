/*
 * tests/bench/bench_permute_empty.cu: the floor under a launch for
 * bench_permute: the time of one launch of an empty kernel (256 threads,
 * one block), averaged over many launches in a row on one stream.
 */
#include <cuda_runtime.h>

__global__ void bench_permute_empty_kernel() {}

extern "C" double bench_permute_empty_launch_ms(int launches)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    bench_permute_empty_kernel<<<1, 256>>>(); /* warm up */
    cudaEventRecord(start);
    for (int k = 0; k < launches; k++) {
        bench_permute_empty_kernel<<<1, 256>>>();
    }
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return (double)ms / launches;
}
