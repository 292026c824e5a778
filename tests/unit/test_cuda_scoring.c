/*
 * tests/unit/test_cuda_scoring.c: candidate scoring on a CUDA device
 * against the host twin, bit for bit (spart/scoring.h, Determinism): the
 * golden digest of test_scoring.c on the device; both layouts (a block a
 * question, the grid cooperative kernel) forced on the same cases, with
 * every way of taking rows (1, 2, 4 a warp; split: warps share a row's
 * segments); odd
 * dimensions and rows not on 16 bytes (scalar loads); K = 10^5; a batch
 * row against its question alone; the context's own stream; a call
 * recorded in a CUDA graph is one kernel node whose replays give the same
 * bits; device calls refuse host memory. Label `cuda`: exits 77 without a
 * device (1 under SPART_REQUIRE_GPU=1).
 *
 * `test_cuda_scoring --small`: only the small cases, for the sanitizers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "test_cuda_util.h"

#include "scoring/scoring_kernels.h"
#include "spart/scoring.h"
#include "test_scoring_util.h"

/* Device copies of a case's typed arrays, `offset` values past a fresh
 * allocation's start (1: rows not on 16 bytes). */
typedef struct device_case {
    void *query, *candidates, *probabilities, *logits;
    void *query_base, *candidates_base;
    double *workspace;
    size_t workspace_bytes;
} device_case;

static device_case to_device_case(const scoring_case *c, int offset)
{
    device_case d;
    memset(&d, 0, sizeof d);
    const size_t w = scoring_width(c->type);
    const size_t nquery = (size_t)(c->num_question * c->dimension);
    const size_t ncand = nquery * (size_t)c->num_candidate;
    const size_t n = (size_t)(c->num_question * c->num_candidate);
    check_cuda(cudaMalloc(&d.query_base, (nquery + 1) * w), "cudaMalloc");
    check_cuda(cudaMalloc(&d.candidates_base, (ncand + 1) * w), "cudaMalloc");
    check_cuda(cudaMalloc(&d.probabilities, n * w), "cudaMalloc");
    check_cuda(cudaMalloc(&d.logits, n * w), "cudaMalloc");
    d.query = (char *)d.query_base + (size_t)offset * w;
    d.candidates = (char *)d.candidates_base + (size_t)offset * w;
    check_cuda(cudaMemcpy(d.query, c->query_typed, nquery * w, cudaMemcpyHostToDevice), "copy");
    check_cuda(cudaMemcpy(d.candidates, c->candidates_typed, ncand * w, cudaMemcpyHostToDevice),
               "copy");
    check_cuda(cudaMemset(d.probabilities, 0xff, n * w), "poison");
    check_cuda(cudaMemset(d.logits, 0xff, n * w), "poison");
    d.workspace_bytes = spart_scoring_workspace_size(c->num_question, c->num_candidate);
    check_cuda(cudaMalloc((void **)&d.workspace, d.workspace_bytes), "cudaMalloc");
    check_cuda(cudaMemset(d.workspace, 0xff, d.workspace_bytes), "poison");
    return d;
}

static void free_device_case(device_case *d)
{
    check_cuda(cudaFree(d->query_base), "cudaFree");
    check_cuda(cudaFree(d->candidates_base), "cudaFree");
    check_cuda(cudaFree(d->probabilities), "cudaFree");
    check_cuda(cudaFree(d->logits), "cudaFree");
    check_cuda(cudaFree(d->workspace), "cudaFree");
}

/* The device's probabilities and logits, copied back into new arrays. */
static void copy_back(const scoring_case *c, const device_case *d, void **p, void **z)
{
    const size_t bytes = (size_t)(c->num_question * c->num_candidate) * scoring_width(c->type);
    *p = malloc(bytes);
    *z = malloc(bytes);
    check_cuda(cudaDeviceSynchronize(), "the scoring kernel");
    check_cuda(cudaMemcpy(*p, d->probabilities, bytes, cudaMemcpyDeviceToHost), "copy back");
    check_cuda(cudaMemcpy(*z, d->logits, bytes, cudaMemcpyDeviceToHost), "copy back");
}

/* The public simple form on the device (the layout it chooses). */
static void score_on_device(spart_context *context, const scoring_case *c, void **p, void **z)
{
    device_case d = to_device_case(c, 0);
    spart_status status = spart_scoring_apply_batch(
        context, d.query, d.candidates, d.probabilities, d.logits, c->num_question,
        c->num_candidate, c->dimension, c->similarity, c->scale, c->temperature, c->type, 1);
    if (status != SPART_OK) {
        fail_msg("device spart_scoring_apply_batch: %s", spart_context_error(context));
    }
    copy_back(c, &d, p, z);
    free_device_case(&d);
}

static void score_on_host(spart_context *context, const scoring_case *c, void **p, void **z)
{
    const size_t bytes = (size_t)(c->num_question * c->num_candidate) * scoring_width(c->type);
    *p = malloc(bytes);
    *z = malloc(bytes);
    spart_status status = spart_scoring_apply_batch(
        context, c->query_typed, c->candidates_typed, *p, *z, c->num_question, c->num_candidate,
        c->dimension, c->similarity, c->scale, c->temperature, c->type, 0);
    if (status != SPART_OK) {
        fail_msg("host spart_scoring_apply_batch: %s", spart_context_error(context));
    }
}

static spart_scoring_problem problem_of(const scoring_case *c, const device_case *d)
{
    spart_scoring_problem problem = {d->query,
                                     d->candidates,
                                     d->probabilities,
                                     d->logits,
                                     c->num_question,
                                     c->num_candidate,
                                     c->dimension,
                                     c->scale,
                                     c->temperature,
                                     c->similarity == SPART_SIMILARITY_COSINE,
                                     c->type == SPART_FLOAT32};
    return problem;
}

static void assert_same_bits(const void *got, const void *expected, size_t bytes, const char *what)
{
    if (memcmp(got, expected, bytes) != 0) {
        fail_msg("%s: the device's bits differ from the host's", what);
    }
}

/* One case: host, then the device on each layout and with each number of
 * rows a warp in `rows` (0: the device code's choice; and rows off 16
 * bytes when `offset`), the same bits. */
static void check_case_rows(spart_context *context, int64_t nq, int64_t nk, int64_t d,
                            spart_similarity sim, spart_value_type type, int offset, uint64_t seed,
                            const int *rows, int num_rows)
{
    scoring_case c = scoring_case_make(nq, nk, d, sim, 100.0 / 7.0, 1.3, type, 2.0, seed);
    scoring_case_sync(&c);
    void *hp = NULL, *hz = NULL;
    score_on_host(context, &c, &hp, &hz);
    const size_t bytes = (size_t)(nq * nk) * scoring_width(type);
    char what[128];
    for (int path = SPART_SCORING_PATH_AUTO; path <= SPART_SCORING_PATH_GRID; path++) {
        if (path == SPART_SCORING_PATH_BLOCK && nk > SPART_SCORING_BLOCK_MAX_K) {
            continue;
        }
        for (int r = 0; r < num_rows; r++) {
            device_case dc = to_device_case(&c, offset);
            spart_scoring_problem problem = problem_of(&c, &dc);
            check_cuda((cudaError_t)spart_scoring_device_launch_rows(&problem, dc.workspace, path,
                                                                     rows[r], NULL),
                       "spart_scoring_device_launch_rows");
            void *dp = NULL, *dz = NULL;
            copy_back(&c, &dc, &dp, &dz);
            snprintf(what, sizeof what, "Q %lld K %lld D %lld %s %s offset %d path %d rows %d",
                     (long long)nq, (long long)nk, (long long)d, sim ? "cosine" : "dot",
                     type == SPART_FLOAT32 ? "float32" : "float64", offset, path, rows[r]);
            assert_same_bits(dp, hp, bytes, what);
            assert_same_bits(dz, hz, bytes, what);
            free(dp);
            free(dz);
            free_device_case(&dc);
        }
    }
    free(hp);
    free(hz);
    scoring_case_free(&c);
}

/* Under the sanitizers (--small): the device code's choice, the split
 * rows and four rows a warp only. */
static int small_run = 0;

/* check_case_rows with every number of rows a warp. */
static void check_case(spart_context *context, int64_t nq, int64_t nk, int64_t d,
                       spart_similarity sim, spart_value_type type, int offset, uint64_t seed)
{
    const int rows[] = {0, SPART_SCORING_ROWS_SPLIT, 4, 1, 2};
    check_case_rows(context, nq, nk, d, sim, type, offset, seed, rows, small_run ? 3 : 5);
}

/* check_case_rows with the device code's choice, four rows a warp and
 * the split rows. */
static void check_case_large(spart_context *context, int64_t nq, int64_t nk, int64_t d,
                             spart_similarity sim, spart_value_type type, uint64_t seed)
{
    const int rows[] = {0, 4, SPART_SCORING_ROWS_SPLIT};
    check_case_rows(context, nq, nk, d, sim, type, 0, seed, rows, 3);
}

static void test_golden_digest_on_device(void **state)
{
    fixture *f = *state;
    const uint64_t digest = scoring_digest_of_cases(f->context, score_on_device);
    printf("device digest: 0x%016llxULL\n", (unsigned long long)digest);
    assert_true(digest == SCORING_GOLDEN_DIGEST);
}

static void test_layouts_small(void **state)
{
    fixture *f = *state;
    for (int type = 0; type < 2; type++) {
        spart_value_type t = type == 0 ? SPART_FLOAT32 : SPART_FLOAT64;
        for (int sim = 0; sim < 2; sim++) {
            check_case(f->context, 1, 1, 1, (spart_similarity)sim, t, 0, 1);
            check_case(f->context, 3, 5, 512, (spart_similarity)sim, t, 0, 2);
            check_case(f->context, 2, 70, 130, (spart_similarity)sim, t, 1, 3); /* off 16 bytes */
            check_case(f->context, 2, 1030, 9, (spart_similarity)sim, t, 0, 4); /* two chunks */
            /* four segments, the last of 59 quads (lanes 27..31 have one) */
            check_case(f->context, 2, 20, 1001, (spart_similarity)sim, t, 1, 11);
        }
    }
}

static void test_layouts_large(void **state)
{
    fixture *f = *state;
    for (int type = 0; type < 2; type++) {
        spart_value_type t = type == 0 ? SPART_FLOAT32 : SPART_FLOAT64;
        check_case_large(f->context, 1, 255, 2560, SPART_SIMILARITY_DOT, t, 5);
        check_case_large(f->context, 8, 255, 512, SPART_SIMILARITY_COSINE, t, 6);
        check_case(f->context, 300, 64, 100, SPART_SIMILARITY_COSINE, t, 0, 7);
        check_case_large(f->context, 1, 100000, 16, SPART_SIMILARITY_COSINE, t, 8);
        check_case_large(f->context, 2, 5000, 8192, SPART_SIMILARITY_DOT, t, 9);
        check_case_large(f->context, 3, 2048, 33, SPART_SIMILARITY_DOT, t, 10);
    }
}

/* Row t of a device batch is question t scored alone on the device. */
static void test_batch_against_single(void **state)
{
    fixture *f = *state;
    const int64_t nq = 4, nk = 1500, d = 40;
    scoring_case c =
        scoring_case_make(nq, nk, d, SPART_SIMILARITY_COSINE, 30.0, 1.0, SPART_FLOAT32, 1.0, 99);
    scoring_case_sync(&c);
    device_case dc = to_device_case(&c, 0);
    assert_int_equal(spart_scoring_apply_batch(f->context, dc.query, dc.candidates,
                                               dc.probabilities, NULL, nq, nk, d, c.similarity,
                                               c.scale, c.temperature, c.type, 1),
                     SPART_OK);
    void *batch = NULL, *unused = NULL;
    copy_back(&c, &dc, &batch, &unused);
    float *one = NULL;
    check_cuda(cudaMalloc((void **)&one, (size_t)nk * sizeof(float)), "cudaMalloc");
    float *host_one = malloc((size_t)nk * sizeof(float));
    for (int64_t t = 0; t < nq; t++) {
        assert_int_equal(spart_scoring_apply(f->context, (float *)dc.query + t * d,
                                             (float *)dc.candidates + t * nk * d, one, NULL, nk, d,
                                             c.similarity, c.scale, c.temperature, c.type, 1),
                         SPART_OK);
        check_cuda(cudaMemcpy(host_one, one, (size_t)nk * sizeof(float), cudaMemcpyDeviceToHost),
                   "copy back");
        assert_memory_equal(host_one, (float *)batch + t * nk, (size_t)nk * sizeof(float));
    }
    free(host_one);
    check_cuda(cudaFree(one), "cudaFree");
    free(batch);
    free(unused);
    free_device_case(&dc);
    scoring_case_free(&c);
}

typedef struct recorded_call {
    const scoring_case *c;
    const device_case *d;
} recorded_call;

/* One call of the workspace form on a context whose stream is being
 * captured. */
static spart_status record_call(spart_context *context, const recorded_call *call)
{
    const scoring_case *c = call->c;
    const device_case *d = call->d;
    return spart_scoring_apply_batch_workspace(
        context, d->query, d->candidates, d->probabilities, d->logits, c->num_question,
        c->num_candidate, c->dimension, c->similarity, c->scale, c->temperature, c->type, 1,
        d->workspace, d->workspace_bytes);
}

/* A call captured from the context's own stream is one kernel node; three
 * replays give the host's bits each time (outputs poisoned between). Both
 * layouts: a few candidates (a block a question), K = 3000 (the
 * cooperative grid kernel) and K = 255 of D = 600 (the grid kernel with
 * warps sharing rows). */
static void test_graph_replay(void **state)
{
    fixture *f = *state;
    const int64_t shapes[][3] = {{2, 64, 512}, {1, 3000, 16}, {1, 255, 600}};
    cudaStream_t stream = NULL;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    assert_int_equal(spart_context_set_cuda_stream(f->context, stream), SPART_OK);
    for (int s = 0; s < 3; s++) {
        scoring_case c =
            scoring_case_make(shapes[s][0], shapes[s][1], shapes[s][2], SPART_SIMILARITY_COSINE,
                              100.0, 1.0, SPART_FLOAT32, 1.0, 40 + s);
        scoring_case_sync(&c);
        void *hp = NULL, *hz = NULL;
        score_on_host(f->context, &c, &hp, &hz);
        device_case dc = to_device_case(&c, 0);
        recorded_call call = {&c, &dc};
        cudaGraph_t graph = NULL;
        check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
        spart_status status = record_call(f->context, &call);
        check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
        if (status != SPART_OK) {
            fail_msg("recording: %s", spart_context_error(f->context));
        }
        size_t nodes = 0;
        check_cuda(cudaGraphGetNodes(graph, NULL, &nodes), "graph nodes");
        assert_int_equal(nodes, 1);
        cudaGraphNode_t node = NULL;
        check_cuda(cudaGraphGetNodes(graph, &node, &nodes), "graph nodes");
        enum cudaGraphNodeType kind;
        check_cuda(cudaGraphNodeGetType(node, &kind), "node type");
        assert_int_equal(kind, cudaGraphNodeTypeKernel);
        cudaGraphExec_t exec = NULL;
        check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
        const size_t bytes = (size_t)(c.num_question * c.num_candidate) * sizeof(float);
        for (int replay = 0; replay < 3; replay++) {
            check_cuda(cudaMemsetAsync(dc.probabilities, 0xff, bytes, stream), "poison");
            check_cuda(cudaMemsetAsync(dc.logits, 0xff, bytes, stream), "poison");
            check_cuda(cudaMemsetAsync(dc.workspace, 0xff, dc.workspace_bytes, stream), "poison");
            check_cuda(cudaGraphLaunch(exec, stream), "replay");
            check_cuda(cudaStreamSynchronize(stream), "replay");
            void *dp = NULL, *dz = NULL;
            copy_back(&c, &dc, &dp, &dz);
            assert_same_bits(dp, hp, bytes, "graph replay");
            assert_same_bits(dz, hz, bytes, "graph replay");
            free(dp);
            free(dz);
        }
        check_cuda(cudaGraphExecDestroy(exec), "destroy");
        check_cuda(cudaGraphDestroy(graph), "destroy");
        free_device_case(&dc);
        free(hp);
        free(hz);
        scoring_case_free(&c);
    }
    assert_int_equal(spart_context_set_cuda_stream(f->context, NULL), SPART_OK);
    check_cuda(cudaStreamDestroy(stream), "stream");
}

/* Device calls refuse host arrays, with a sentence. */
static void test_host_memory_refused(void **state)
{
    fixture *f = *state;
    float q[4] = {1, 2, 3, 4}, c[8] = {0}, p[2];
    assert_int_equal(spart_scoring_apply(f->context, q, c, p, NULL, 2, 4, SPART_SIMILARITY_DOT, 1.0,
                                         1.0, SPART_FLOAT32, 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "query"));
}

int main(int argc, char **argv)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const int small = argc > 1 && strcmp(argv[1], "--small") == 0;
    small_run = small;
    const struct CMUnitTest all[] = {
        cmocka_unit_test(test_golden_digest_on_device), cmocka_unit_test(test_layouts_small),
        cmocka_unit_test(test_batch_against_single),    cmocka_unit_test(test_graph_replay),
        cmocka_unit_test(test_host_memory_refused),     cmocka_unit_test(test_layouts_large),
    };
    const struct CMUnitTest few[] = {
        cmocka_unit_test(test_layouts_small),
        cmocka_unit_test(test_graph_replay),
    };
    if (small) {
        return cmocka_run_group_tests(few, cuda_set_up, cuda_tear_down);
    }
    return cmocka_run_group_tests(all, cuda_set_up, cuda_tear_down);
}
