/*
 * tests/bench/bench_scoring.c: fused candidate scoring (spart/scoring.h) on
 * one GPU, on the shapes of issue 24 (K, D, Q), float32, against:
 *   - unfused: the same arithmetic (the same bits, checked) as separate
 *     launches (norms for cosine, scores, chunk sums, probabilities), each
 *     with the fused launch's block size (256) and block count;
 *   - cuBLAS: a strided-batched GEMV for the dots, then norms and a
 *     softmax in the arrays' type (a warp a row, a block a question), as a
 *     user would write them (max |difference| to the fused result shown);
 *   - the copy floor: the bytes that must move, 4 (Q K D + Q D + Q K), at
 *     the device-to-device copy rate measured here;
 *   - the launch floor: an empty kernel, launched and graph-replayed; for
 *     the grid layout also a cooperative kernel of the fused call's block
 *     count that only crosses one grid barrier (graph-replayed).
 * Every time is the median of 5 runs of `repeat` calls back to back between
 * two events, over the calls: "launched" is a call through the public API
 * (host checks included), "graph" one replay of a graph holding one call.
 * Inputs are filled on the device. Exits 77 without a device.
 *
 *   bench_scoring [--markdown FILE] [--quick] [--profile]
 *
 * --profile: no timing; each shape's fused call once through the API and
 * once with each way of taking rows (1, 2, 4 rows a warp, split), for a
 * profiler (ncu --kernel-name regex:scoring_kernel...).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "bench_util.h"
#include "scoring/scoring_kernels.h"
#include "spart/scoring.h"

int bench_scoring_empty(void *stream);
int bench_scoring_empty_grid(int64_t blocks, void *stream);
int bench_scoring_fill(void *x, int64_t n, int float32, uint64_t seed, void *stream);
int64_t bench_scoring_unfused_values(const spart_scoring_problem *problem);
int bench_scoring_unfused(const spart_scoring_problem *problem, double *scratch, int64_t blocks,
                          void *stream);
int bench_scoring_plain_softmax(const spart_scoring_problem *problem, void *dots, void *norms,
                                void *stream);

#define CHECK_INT_CUDA(call) CHECK_CUDA((cudaError_t)(call))
#define CHECK_CUBLAS(call)                                                                         \
    do {                                                                                           \
        cublasStatus_t check_status = (call);                                                      \
        if (check_status != CUBLAS_STATUS_SUCCESS) {                                               \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call,            \
                    (int)check_status);                                                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct shape {
    int64_t nk, d, nq;
    spart_similarity sim;
} shape;

/* Everything one shape's calls need. */
typedef struct bench_state {
    spart_context *context;
    cudaStream_t stream;
    cublasHandle_t cublas;
    spart_scoring_problem problem;
    spart_similarity sim;
    void *workspace;
    size_t workspace_bytes;
    double *unfused_scratch;
    int64_t blocks;
    void *dots, *norms;
    void *probabilities_unfused, *probabilities_cublas;
    int rows; /* rows a warp for call_fused_rows */
} bench_state;

typedef void (*bench_call)(bench_state *s);

static void call_fused(bench_state *s)
{
    const spart_scoring_problem *p = &s->problem;
    CHECK_SPART(s->context,
                spart_scoring_apply_batch_workspace(
                    s->context, p->query, p->candidates, p->probabilities, NULL, p->num_question,
                    p->num_candidate, p->dimension, s->sim, p->scale, p->temperature, SPART_FLOAT32,
                    1, s->workspace, s->workspace_bytes));
}

/* The fused kernel with s->rows candidate rows a warp (the internal
 * entry point, no API checks). */
static void call_fused_rows(bench_state *s)
{
    CHECK_INT_CUDA(spart_scoring_device_launch_rows(&s->problem, s->workspace,
                                                    SPART_SCORING_PATH_AUTO, s->rows, s->stream));
}

/* The fused kernel forced onto one block a question (the BLOCK layout, K
 * <= 2,048), s->rows as above. */
static void call_fused_block(bench_state *s)
{
    CHECK_INT_CUDA(spart_scoring_device_launch_rows(&s->problem, s->workspace,
                                                    SPART_SCORING_PATH_BLOCK, s->rows, s->stream));
}

static void call_unfused(bench_state *s)
{
    spart_scoring_problem p = s->problem;
    p.probabilities = s->probabilities_unfused;
    CHECK_INT_CUDA(bench_scoring_unfused(&p, s->unfused_scratch, s->blocks, s->stream));
}

static void call_cublas(bench_state *s)
{
    spart_scoring_problem p = s->problem;
    p.probabilities = s->probabilities_cublas;
    const float one = 1.0f, zero = 0.0f;
    /* C_t (K x D, row major) is a D x K column-major matrix; its transpose
     * times q_t gives the K dots. */
    CHECK_CUBLAS(cublasSgemvStridedBatched(
        s->cublas, CUBLAS_OP_T, (int)p.dimension, (int)p.num_candidate, &one,
        (const float *)p.candidates, (int)p.dimension, p.num_candidate * p.dimension,
        (const float *)p.query, 1, p.dimension, &zero, (float *)s->dots, 1, p.num_candidate,
        (int)p.num_question));
    CHECK_INT_CUDA(bench_scoring_plain_softmax(&p, s->dots, s->norms, s->stream));
}

/* The grid layout's floor at the fused call's block count. */
static void call_empty_grid(bench_state *s)
{
    CHECK_INT_CUDA(bench_scoring_empty_grid(s->blocks, s->stream));
}

static void call_empty(bench_state *s)
{
    CHECK_INT_CUDA(bench_scoring_empty(s->stream));
}

/* Microseconds a call: the median of 5 runs of `repeat` calls between two
 * events; through a graph of one call when `graph`. */
static double time_call(bench_state *s, bench_call call, int repeat, int graph)
{
    cudaGraphExec_t exec = NULL;
    if (graph) {
        cudaGraph_t g = NULL;
        CHECK_CUDA(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal));
        call(s);
        CHECK_CUDA(cudaStreamEndCapture(s->stream, &g));
        CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
        CHECK_CUDA(cudaGraphDestroy(g));
    }
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    double runs[5];
    for (int run = -1; run < 5; run++) { /* run -1 warms up */
        CHECK_CUDA(cudaEventRecord(start, s->stream));
        for (int r = 0; r < repeat; r++) {
            if (graph) {
                CHECK_CUDA(cudaGraphLaunch(exec, s->stream));
            } else {
                call(s);
            }
        }
        CHECK_CUDA(cudaEventRecord(stop, s->stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (run >= 0) {
            runs[run] = 1e3 * (double)ms / repeat;
        }
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    if (exec != NULL) {
        CHECK_CUDA(cudaGraphExecDestroy(exec));
    }
    return bench_median(runs, 5);
}

/* The device-to-device copy rate in bytes per second (read + written),
 * best of 5 copies of 1 GiB. */
static double copy_rate(cudaStream_t stream)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemsetAsync(a, 1, bytes, stream));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    double best = 0.0;
    for (int r = 0; r < 6; r++) {
        CHECK_CUDA(cudaEventRecord(start, stream));
        CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        double rate = 2.0 * (double)bytes / (1e-3 * (double)ms);
        best = r > 0 && rate > best ? rate : best; /* the first warms up */
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    return best;
}

/* Calls a run: about 20 ms of work, between 5 and 2000. */
static int repeats_for(double bytes)
{
    double calls = 20e-3 * 4e12 / (bytes > 1.0 ? bytes : 1.0);
    return calls < 5 ? 5 : calls > 2000 ? 2000 : (int)calls;
}

int main(int argc, char **argv)
{
    const char *markdown = NULL;
    int quick = 0, profile = 0;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--markdown") == 0 && k + 1 < argc) {
            markdown = argv[++k];
        } else if (strcmp(argv[k], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[k], "--profile") == 0) {
            profile = 1;
        } else {
            fprintf(stderr, "usage: %s [--markdown FILE] [--quick] [--profile]\n", argv[0]);
            return 2;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        printf("bench_scoring: no CUDA device, skipped\n");
        return 77;
    }
    bench_state s;
    memset(&s, 0, sizeof s);
    CHECK_SPART(s.context, spart_context_create(&s.context));
    CHECK_SPART(s.context, spart_context_set_cuda_device(s.context, 0));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    CHECK_SPART(s.context, spart_context_set_cuda_stream(s.context, s.stream));
    CHECK_CUBLAS(cublasCreate(&s.cublas));
    CHECK_CUBLAS(cublasSetStream(s.cublas, s.stream));
    /* a workspace of its own, so that capturing cuBLAS into a graph never
     * allocates */
    void *cublas_workspace = NULL;
    const size_t cublas_workspace_bytes = (size_t)32 << 20;
    CHECK_CUDA(cudaMalloc(&cublas_workspace, cublas_workspace_bytes));
    CHECK_CUBLAS(cublasSetWorkspace(s.cublas, cublas_workspace, cublas_workspace_bytes));
    struct cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    int runtime = 0, cublas_version = 0;
    CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
    CHECK_CUBLAS(cublasGetVersion(s.cublas, &cublas_version));

    const double rate = profile ? 1.0 : copy_rate(s.stream);
    const double empty_launched = profile ? 1.0 : time_call(&s, call_empty, 2000, 0);
    const double empty_graph = profile ? 1.0 : time_call(&s, call_empty, 2000, 1);

    const shape shapes[] = {
        {5, 512, 1, SPART_SIMILARITY_COSINE},      {64, 512, 1, SPART_SIMILARITY_COSINE},
        {255, 512, 1, SPART_SIMILARITY_COSINE},    {255, 512, 8, SPART_SIMILARITY_COSINE},
        {255, 2560, 1, SPART_SIMILARITY_DOT},      {255, 2560, 1024, SPART_SIMILARITY_DOT},
        {100000, 256, 1, SPART_SIMILARITY_COSINE}, {1000, 1024, 4096, SPART_SIMILARITY_COSINE},
    };
    const int count = quick ? 6 : (int)(sizeof shapes / sizeof shapes[0]);

    FILE *out = NULL;
    if (markdown != NULL && !profile) {
        out = bench_markdown_open(markdown, argc, argv, 1,
                                  "median of 5 runs of back-to-back calls between two CUDA "
                                  "events, microseconds a call; launched = through the API, "
                                  "graph = replay of a one-call graph");
        if (out == NULL) {
            return 1;
        }
        fprintf(out, "- GPU: %s, %d multiprocessors; CUDA runtime %d, cuBLAS %d\n", prop.name,
                prop.multiProcessorCount, runtime, cublas_version);
        fprintf(out,
                "- copy rate (device to device, read + written): %.2f TB/s; empty kernel: "
                "%.2f us launched, %.2f us graph-replayed\n",
                rate / 1e12, empty_launched, empty_graph);
        fprintf(out, "- float32 inputs, no logits written; unfused = the same arithmetic (same "
                     "bits: column `bits`) as 3-4 launches of the fused block size and count; "
                     "cuBLAS = cublasSgemvStridedBatched + norms + softmax in float32\n\n");
        fprintf(out, "| K | D | Q | sim | layout | blocks | fused launched | fused graph | "
                     "unfused launched | unfused graph | cuBLAS launched | cuBLAS graph | copy "
                     "floor | %% copy rate (graph) | graph / empty graph | bits | cuBLAS max diff "
                     "| graph, 1 / 2 / 4 rows a warp / split | graph, one block a question | "
                     "graph, a grid barrier alone |\n");
        bench_markdown_rule(out, 20);
    }
    printf("copy rate %.2f TB/s; empty kernel %.2f us launched, %.2f us graph\n", rate / 1e12,
           empty_launched, empty_graph);

    for (int i = 0; i < count; i++) {
        const shape sh = shapes[i];
        const int64_t pairs = sh.nq * sh.nk;
        const size_t query_bytes = (size_t)(sh.nq * sh.d) * sizeof(float);
        const size_t cand_bytes = (size_t)(pairs * sh.d) * sizeof(float);
        const size_t prob_bytes = (size_t)pairs * sizeof(float);
        void *query = NULL, *candidates = NULL, *probabilities = NULL;
        CHECK_CUDA(cudaMalloc(&query, query_bytes));
        CHECK_CUDA(cudaMalloc(&candidates, cand_bytes));
        CHECK_CUDA(cudaMalloc(&probabilities, prob_bytes));
        CHECK_CUDA(cudaMalloc(&s.probabilities_unfused, prob_bytes));
        CHECK_CUDA(cudaMalloc(&s.probabilities_cublas, prob_bytes));
        CHECK_CUDA(cudaMalloc(&s.dots, prob_bytes));
        CHECK_CUDA(cudaMalloc(&s.norms, (size_t)(pairs + sh.nq) * sizeof(float)));
        CHECK_INT_CUDA(bench_scoring_fill(query, sh.nq * sh.d, 1, 17 + i, s.stream));
        CHECK_INT_CUDA(bench_scoring_fill(candidates, pairs * sh.d, 1, 1017 + i, s.stream));
        spart_scoring_problem p = {query,
                                   candidates,
                                   probabilities,
                                   NULL,
                                   sh.nq,
                                   sh.nk,
                                   sh.d,
                                   sh.sim == SPART_SIMILARITY_COSINE ? 100.0 : 0.0625,
                                   sh.sim == SPART_SIMILARITY_COSINE ? 1.0 : 2.406050072164233,
                                   sh.sim == SPART_SIMILARITY_COSINE,
                                   1};
        s.problem = p;
        s.sim = sh.sim;
        s.workspace_bytes = spart_scoring_workspace_size(sh.nq, sh.nk);
        CHECK_CUDA(cudaMalloc(&s.workspace, s.workspace_bytes));
        CHECK_CUDA(cudaMalloc((void **)&s.unfused_scratch,
                              (size_t)bench_scoring_unfused_values(&p) * sizeof(double)));
        int error = 0;
        const int layout = spart_scoring_device_path(&p, SPART_SCORING_PATH_AUTO, &error);
        CHECK_INT_CUDA(error);
        CHECK_INT_CUDA(spart_scoring_device_blocks(&p, SPART_SCORING_PATH_AUTO, 0, &s.blocks));

        const double bytes = 4.0 * (double)(pairs * sh.d + sh.nq * sh.d + pairs);
        const int repeat = repeats_for(bytes);
        const int row_choices[4] = {1, 2, 4, SPART_SCORING_ROWS_SPLIT};
        if (profile) {
            call_fused(&s);
            for (int r = 0; r < 4; r++) {
                s.rows = row_choices[r];
                call_fused_rows(&s);
            }
            CHECK_CUDA(cudaStreamSynchronize(s.stream));
            printf("K %lld D %lld Q %lld: profiled (auto, 1, 2, 4 rows, split)\n", (long long)sh.nk,
                   (long long)sh.d, (long long)sh.nq);
        }
        double by_rows[4] = {0.0, 0.0, 0.0, 0.0};
        if (profile) {
            goto next_shape;
        }
        const double fused_launched = time_call(&s, call_fused, repeat, 0);
        const double fused_graph = time_call(&s, call_fused, repeat, 1);
        const double unfused_launched = time_call(&s, call_unfused, repeat, 0);
        const double unfused_graph = time_call(&s, call_unfused, repeat, 1);
        const double cublas_launched = time_call(&s, call_cublas, repeat, 0);
        const double cublas_graph = time_call(&s, call_cublas, repeat, 1);
        const double floor = 1e6 * bytes / rate;
        for (int r = 0; r < 4; r++) {
            s.rows = row_choices[r];
            by_rows[r] = time_call(&s, call_fused_rows, repeat, 1);
        }
        const double barrier_graph =
            layout == SPART_SCORING_PATH_GRID ? time_call(&s, call_empty_grid, repeat, 1) : 0.0;
        double by_block = 0.0; /* the BLOCK layout takes K <= 2048 */
        if (sh.nk <= SPART_SCORING_BLOCK_MAX_K) {
            s.rows = 0;
            by_block = time_call(&s, call_fused_block, repeat, 1);
        }

        /* bits of the unfused baseline, max |difference| of cuBLAS's */
        float *a = malloc(prob_bytes), *b = malloc(prob_bytes), *c = malloc(prob_bytes);
        CHECK_CUDA(cudaStreamSynchronize(s.stream));
        CHECK_CUDA(cudaMemcpy(a, probabilities, prob_bytes, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(b, s.probabilities_unfused, prob_bytes, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(c, s.probabilities_cublas, prob_bytes, cudaMemcpyDeviceToHost));
        const int same = memcmp(a, b, prob_bytes) == 0;
        double diff = 0.0;
        for (int64_t k = 0; k < pairs; k++) {
            double dk = fabs((double)a[k] - (double)c[k]);
            diff = dk > diff || dk != dk ? dk : diff;
        }
        const char *names[] = {"auto", "block", "grid"};
        printf("K %6lld D %5lld Q %5lld %-6s %-5s %6lld blocks: fused %9.2f / %9.2f us, unfused "
               "%9.2f / %9.2f, cuBLAS %9.2f / %9.2f, floor %9.2f (%5.1f %%), bits %s, cuBLAS "
               "diff %.2e; graph with 1/2/4 rows a warp / split %.2f / %.2f / %.2f / %.2f; one "
               "block %.2f; grid barrier alone %.2f\n",
               (long long)sh.nk, (long long)sh.d, (long long)sh.nq,
               sh.sim == SPART_SIMILARITY_COSINE ? "cosine" : "dot", names[layout],
               (long long)s.blocks, fused_launched, fused_graph, unfused_launched, unfused_graph,
               cublas_launched, cublas_graph, floor, 100.0 * floor / fused_graph,
               same ? "same" : "DIFFER", diff, by_rows[0], by_rows[1], by_rows[2], by_rows[3],
               by_block, barrier_graph);
        fflush(stdout);
        if (out != NULL) {
            fprintf(out,
                    "| %lld | %lld | %lld | %s | %s | %lld | %.2f | %.2f | %.2f | %.2f | %.2f | "
                    "%.2f | %.2f | %.1f | %.2f | %s | %.1e | %.2f / %.2f / %.2f / %.2f | %.2f "
                    "| %.2f |\n",
                    (long long)sh.nk, (long long)sh.d, (long long)sh.nq,
                    sh.sim == SPART_SIMILARITY_COSINE ? "cosine" : "dot", names[layout],
                    (long long)s.blocks, fused_launched, fused_graph, unfused_launched,
                    unfused_graph, cublas_launched, cublas_graph, floor,
                    100.0 * floor / fused_graph, fused_graph / empty_graph,
                    same ? "same" : "differ", diff, by_rows[0], by_rows[1], by_rows[2], by_rows[3],
                    by_block, barrier_graph);
            fflush(out);
        }
        free(a);
        free(b);
        free(c);
    next_shape:
        CHECK_CUDA(cudaFree(query));
        CHECK_CUDA(cudaFree(candidates));
        CHECK_CUDA(cudaFree(probabilities));
        CHECK_CUDA(cudaFree(s.probabilities_unfused));
        CHECK_CUDA(cudaFree(s.probabilities_cublas));
        CHECK_CUDA(cudaFree(s.dots));
        CHECK_CUDA(cudaFree(s.norms));
        CHECK_CUDA(cudaFree(s.workspace));
        CHECK_CUDA(cudaFree(s.unfused_scratch));
    }
    if (out != NULL) {
        fclose(out);
    }
    cublasDestroy(s.cublas);
    CHECK_CUDA(cudaFree(cublas_workspace));
    CHECK_SPART(s.context, spart_context_set_cuda_stream(s.context, NULL));
    CHECK_CUDA(cudaStreamDestroy(s.stream));
    spart_context_free(s.context);
    return 0;
}
