/*
 * tests/bench/bench_graph_floor.cu: the floor of a CUDA graph of K kernel
 * nodes on this device, to judge the MART iteration's goal honestly: an
 * iteration on the device is a chain of kernels (the update, the forward
 * product, the widths, the merits, the decision), recorded 8 iterations to
 * a graph (solvers/mart.c), so it cannot take less than its chain of
 * kernel nodes does with no work in them.
 *
 * For K = 1 .. 40 it records K dependent launches in one graph, of an
 * empty kernel (one block of 32 threads) and of a small one (32 blocks of
 * 256 threads writing 8192 doubles, the size of one channel's image of the
 * tutorial), replays the graph 200 times back to back between two events
 * and prints the microseconds a graph and a node (the best of 5 such
 * runs).
 *
 * Then the other structure an iteration could take: one cooperative
 * kernel (two blocks of 256 threads a multiprocessor, all resident) whose
 * phases are separated by grid-wide barriers (cooperative_groups
 * grid.sync()), as one graph node. For B = 0 .. 30 barriers, each phase
 * writing the same 8192 doubles as the small kernel, it prints the
 * microseconds a replay and a barrier ((t(B) - t(0)) / B).
 *
 * Last, what a node that only reads a MART product's compulsory bytes
 * costs: 20 dependent nodes, each streaming one of two arrays of `bytes`
 * (by default 12.74 MB, the tutorial's 1,061,648 entries of 8-byte value
 * and 4-byte column; the nodes alternate between the arrays as an
 * iteration alternates between its forward and backward operators, which
 * together fit the H200's L2) with coalesced 16-byte loads, nothing
 * gathered. A product moves at least this and gathers besides, so two
 * such nodes bound an iteration's two products from below. Label `bench`;
 * exits 77 without a device.
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <stdio.h>

namespace
{

__global__ void empty_kernel() {}

__global__ void small_kernel(double *values, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        values[i] = values[i] * 0.5 + 1.0;
    }
}

/* `barriers` phases after a first one, each a pass over n values spread
 * over the whole grid, separated by grid-wide barriers. */
__global__ void phased_kernel(double *values, int n, int barriers)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    for (int phase = 0; phase <= barriers; phase++) {
        if (phase > 0) {
            grid.sync();
        }
        if (i < n) {
            values[i] = values[i] * 0.5 + 1.0;
        }
    }
}

/* Each thread adds the 16-byte words i, i + stride, ... of `words` and
 * writes its sum (so that the loads are not dropped). */
__global__ void stream_kernel(const double2 *words, long long n, double *sums)
{
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    double sum = 0.0;
    for (long long i = first; i < n; i += stride) {
        const double2 word = words[i];
        sum = sum + word.x + word.y;
    }
    sums[first] = sum;
}

bool ok(cudaError_t error, const char *what)
{
    if (error != cudaSuccess) {
        fprintf(stderr, "bench_graph_floor: %s: %s\n", what, cudaGetErrorString(error));
        return false;
    }
    return true;
}

/* Microseconds a replay of the graph being captured on `stream` (capture
 * ended here, `captured` false if a launch in it failed), best of 5 runs
 * of 200 replays back to back; negative on a CUDA error. The graph is
 * destroyed. */
double replay_microseconds(cudaStream_t stream, bool captured)
{
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool fine = ok(cudaStreamEndCapture(stream, &graph), "end capture") && captured &&
                ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    cudaEvent_t start = nullptr, stop = nullptr;
    fine = fine && ok(cudaEventCreate(&start), "event") && ok(cudaEventCreate(&stop), "event");
    fine = fine && ok(cudaGraphLaunch(exec, stream), "warm-up") &&
           ok(cudaStreamSynchronize(stream), "wait");
    const int replays = 200;
    double best = 1e30;
    for (int run = 0; fine && run < 5; run++) {
        fine = ok(cudaEventRecord(start, stream), "record");
        for (int r = 0; fine && r < replays; r++) {
            fine = ok(cudaGraphLaunch(exec, stream), "graph launch");
        }
        float milliseconds = 0.0f;
        fine = fine && ok(cudaEventRecord(stop, stream), "record") &&
               ok(cudaEventSynchronize(stop), "wait") &&
               ok(cudaEventElapsedTime(&milliseconds, start, stop), "elapsed");
        const double microseconds = 1e3 * (double)milliseconds / replays;
        best = microseconds < best ? microseconds : best;
    }
    if (start != nullptr) {
        (void)cudaEventDestroy(start);
    }
    if (stop != nullptr) {
        (void)cudaEventDestroy(stop);
    }
    if (exec != nullptr) {
        (void)cudaGraphExecDestroy(exec);
    }
    if (graph != nullptr) {
        (void)cudaGraphDestroy(graph);
    }
    return fine ? best : -1.0;
}

/* Microseconds a replay of a graph of `nodes` dependent launches (small
 * kernels when `values` is not NULL, else empty ones). */
double graph_microseconds(cudaStream_t stream, int nodes, double *values)
{
    const int n = 8192;
    if (!ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture")) {
        return -1.0;
    }
    for (int k = 0; k < nodes; k++) {
        if (values != nullptr) {
            small_kernel<<<(n + 255) / 256, 256, 0, stream>>>(values, n);
        } else {
            empty_kernel<<<1, 32, 0, stream>>>();
        }
    }
    return replay_microseconds(stream, ok(cudaGetLastError(), "launch"));
}

/* Microseconds a replay of a graph of one cooperative launch of
 * phased_kernel with `barriers` grid-wide barriers on `blocks` blocks. */
double cooperative_microseconds(cudaStream_t stream, int blocks, int barriers, double *values)
{
    int n = 8192;
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)blocks);
    config.blockDim = dim3(256);
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    if (!ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture")) {
        return -1.0;
    }
    return replay_microseconds(
        stream,
        ok(cudaLaunchKernelEx(&config, phased_kernel, values, n, barriers), "cooperative launch"));
}

/* Microseconds a node of a graph of `nodes` dependent stream_kernel
 * launches, alternating between arrays a and b of `words` 16-byte words
 * each, on `blocks` blocks of 256 threads. */
double stream_microseconds(cudaStream_t stream, int nodes, const double2 *a, const double2 *b,
                           long long words, int blocks, double *sums)
{
    if (!ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture")) {
        return -1.0;
    }
    for (int k = 0; k < nodes; k++) {
        stream_kernel<<<(unsigned)blocks, 256, 0, stream>>>(k % 2 == 0 ? a : b, words, sums);
    }
    const double us = replay_microseconds(stream, ok(cudaGetLastError(), "launch"));
    return us < 0.0 ? us : us / nodes;
}

} // namespace

int main()
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("bench_graph_floor: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp properties;
    if (!ok(cudaGetDeviceProperties(&properties, 0), "device properties")) {
        return 1;
    }
    cudaStream_t stream = nullptr;
    double *values = nullptr;
    if (!ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") ||
        !ok(cudaMalloc(&values, 8192 * sizeof(double)), "malloc") ||
        !ok(cudaMemset(values, 0, 8192 * sizeof(double)), "memset")) {
        return 1;
    }
    printf("CUDA graph of K dependent kernel nodes, %s: us a replay (best of 5 x 200 replays)\n",
           properties.name);
    printf("%6s %14s %14s %14s %14s\n", "K", "empty us", "empty us/node", "small us",
           "small us/node");
    const int counts[] = {1, 2, 3, 4, 5, 6, 8, 16, 40};
    int status = 0;
    for (int count : counts) {
        const double empty = graph_microseconds(stream, count, nullptr);
        const double small = graph_microseconds(stream, count, values);
        if (empty < 0.0 || small < 0.0) {
            status = 1;
            break;
        }
        printf("%6d %14.2f %14.3f %14.2f %14.3f\n", count, empty, empty / count, small,
               small / count);
    }
    int per_multiprocessor = 0;
    if (status == 0 && ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor,
                                                                        phased_kernel, 256, 0),
                          "occupancy")) {
        const int blocks = properties.multiProcessorCount * (per_multiprocessor < 2 ? 1 : 2);
        printf("\nOne cooperative kernel of %d blocks of 256 threads, B grid-wide barriers between "
               "B + 1 passes over 8192 doubles, one graph node: us a replay\n",
               blocks);
        printf("%6s %14s %14s\n", "B", "us", "us/barrier");
        const int barrier_counts[] = {0, 1, 2, 3, 6, 30};
        double none = 0.0;
        for (int barriers : barrier_counts) {
            const double us = cooperative_microseconds(stream, blocks, barriers, values);
            if (us < 0.0) {
                status = 1;
                break;
            }
            none = barriers == 0 ? us : none;
            printf("%6d %14.2f %14.3f\n", barriers, us,
                   barriers > 0 ? (us - none) / barriers : 0.0);
        }
    }
    const long long words = (1061648LL * 12 + 15) / 16;
    double2 *a = nullptr, *b = nullptr;
    double *sums = nullptr;
    const int multiprocessors = properties.multiProcessorCount;
    if (status == 0 && ok(cudaMalloc(&a, (size_t)words * 16), "malloc") &&
        ok(cudaMalloc(&b, (size_t)words * 16), "malloc") &&
        ok(cudaMalloc(&sums, (size_t)multiprocessors * 8 * 256 * sizeof(double)), "malloc") &&
        ok(cudaMemset(a, 0, (size_t)words * 16), "memset") &&
        ok(cudaMemset(b, 0, (size_t)words * 16), "memset")) {
        printf("\n20 dependent nodes each streaming %.2f MB (16-byte loads, nothing gathered), "
               "alternating between two such arrays, one graph: us a node\n",
               (double)words * 16 / 1e6);
        printf("%14s %14s %14s\n", "blocks", "us/node", "GB/s");
        const int blocks_per_multiprocessor[] = {2, 4, 8};
        for (int per : blocks_per_multiprocessor) {
            const int blocks = multiprocessors * per;
            const double us = stream_microseconds(stream, 20, a, b, words, blocks, sums);
            if (us < 0.0) {
                status = 1;
                break;
            }
            printf("%14d %14.2f %14.0f\n", blocks, us, (double)words * 16 / (us * 1e3));
        }
    } else {
        status = 1;
    }
    (void)cudaFree(a);
    (void)cudaFree(b);
    (void)cudaFree(sums);
    (void)cudaFree(values);
    (void)cudaStreamDestroy(stream);
    return status;
}
