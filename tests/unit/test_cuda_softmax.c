/*
 * tests/unit/test_cuda_softmax.c: the segmented softmax on a CUDA device
 * gives the host's bits (spart/softmax.h): forward, backward and the
 * aggregation, float32 and float64, 1 to 8 heads, int32 and int64 row
 * pointers, on power-law graphs with rows of several chunks and the edge
 * rules' rows, poisoned outputs compared whole (edges outside the rows
 * stay as they were); a CUDA graph of a call replays the same bits; the
 * device check of the row pointers. Exit 77 without a device (a failure
 * with SPART_REQUIRE_GPU=1).
 *
 * SPART_SOFTMAX_SMALL=1 shrinks every case (for compute-sanitizer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "spart/device_memory.h"
#include "softmax/softmax_kernels.h"
#include "spart/softmax.h"
#include "test_cuda_util.h"
#include "softmax_test_util.h"

/* The device forward's layout the other tests take (kernels/softmax.cu:
 * the library's default, 2, unless SPART_SOFTMAX_TEST_DESIGN names one). */
static int test_design(void)
{
    const char *design = getenv("SPART_SOFTMAX_TEST_DESIGN");
    return design != NULL ? atoi(design) : 2;
}

static int small_cases(void)
{
    const char *small = getenv("SPART_SOFTMAX_SMALL");
    return small != NULL && strcmp(small, "1") == 0;
}

/* Rows, mean length and long row of the usual graph. */
static void graph_size(int64_t *rows, double *mean, int64_t *long_row)
{
    *rows = small_cases() ? 300 : 20000;
    *mean = small_cases() ? 5.0 : 9.0;
    *long_row = small_cases() ? SPART_SOFTMAX_CHUNK + 7 : 5 * SPART_SOFTMAX_CHUNK + 123;
}

static void *upload(spart_context *context, const void *host, size_t bytes)
{
    void *device = NULL;
    assert_int_equal(spart_device_malloc(context, bytes > 0 ? bytes : 1, &device), SPART_OK);
    if (bytes > 0) {
        assert_int_equal(spart_device_copy_to_device(context, device, host, bytes), SPART_OK);
    }
    return device;
}

static void download(spart_context *context, void *host, const void *device, size_t bytes)
{
    if (bytes > 0) {
        assert_int_equal(spart_device_copy_to_host(context, host, device, bytes), SPART_OK);
    }
}

/* Scores of a graph with the edge rules' rows put in: an all -inf row,
 * a row with +inf in head 0, a row with NaN in the last head, a row with
 * one -inf, and big spreads. */
static double *rule_scores(const test_graph *g, int64_t heads, uint64_t seed)
{
    double *scores = random_doubles(g->edges * heads, 30.0, seed);
    int64_t placed = 0;
    for (int64_t r = 20; r < g->rows && placed < 4; r++) {
        const int64_t b = g->row_ptr[r], n = g->row_ptr[r + 1] - b;
        if (n < 2) {
            continue;
        }
        if (placed == 0) {
            for (int64_t i = 0; i < n * heads; i++) {
                scores[b * heads + i] = -INFINITY;
            }
        } else if (placed == 1) {
            scores[(b + 1) * heads] = INFINITY;
        } else if (placed == 2) {
            scores[(b + n - 1) * heads + heads - 1] = NAN;
        } else {
            scores[b * heads] = -INFINITY;
        }
        placed++;
    }
    return scores;
}

/* Host and device forward, backward and aggregation of one case, all
 * compared bit for bit (NaN is the one quiet NaN on both). */
static void compare_case(spart_context *context, int64_t heads, spart_value_type type,
                         int int32_rows, uint64_t seed, int64_t width)
{
    int64_t rows, long_row;
    double mean;
    graph_size(&rows, &mean, &long_row);
    test_graph g = test_graph_make(rows, mean, long_row, seed);
    const int64_t n = g.edges * heads, ny = g.rows * heads * width;
    const size_t value = type == SPART_FLOAT32 ? sizeof(float) : sizeof(double);
    double *scores64 = rule_scores(&g, heads, seed + 1);
    double *grad64 = random_doubles(n, 1.0, seed + 2);
    double *features64 = random_doubles(g.nodes * heads * width, 2.0, seed + 3);
    void *scores = scores64, *grad_out = grad64, *features = features64;
    if (type == SPART_FLOAT32) {
        scores = to_floats(scores64, n);
        grad_out = to_floats(grad64, n);
        features = to_floats(features64, g.nodes * heads * width);
    }
    spart_softmax_segments host = test_segments(&g, heads, type);
    if (int32_rows) {
        host.row_ptr = NULL;
        host.row_ptr32 = g.row_ptr32;
    }
    spart_softmax_gather gather = test_gather(&g, width);
    /* host */
    unsigned char *out = malloc((size_t)n * value), *grad = malloc((size_t)n * value);
    unsigned char *y = malloc((size_t)ny * value), *out_y = malloc((size_t)n * value);
    memset(out, 0x5a, (size_t)n * value);
    memset(grad, 0x5a, (size_t)n * value);
    memset(y, 0x5a, (size_t)ny * value);
    memset(out_y, 0x5a, (size_t)n * value);
    assert_int_equal(spart_softmax_forward(context, &host, scores, out), SPART_OK);
    assert_int_equal(spart_softmax_backward(context, &host, out, grad_out, grad), SPART_OK);
    assert_int_equal(spart_softmax_aggregate(context, &host, &gather, scores, features, y, out_y),
                     SPART_OK);
    /* device, outputs poisoned the same way */
    spart_softmax_segments device = host;
    device.on_device = 1;
    void *d_rows = int32_rows ? upload(context, g.row_ptr32, (size_t)(g.rows + 1) * 4)
                              : upload(context, g.row_ptr, (size_t)(g.rows + 1) * 8);
    device.row_ptr = int32_rows ? NULL : d_rows;
    device.row_ptr32 = int32_rows ? d_rows : NULL;
    spart_softmax_gather d_gather = gather;
    d_gather.columns = upload(context, g.columns, (size_t)g.edges * 8);
    unsigned char *poison = malloc((size_t)(n > ny ? n : ny) * value);
    memset(poison, 0x5a, (size_t)(n > ny ? n : ny) * value);
    void *d_scores = upload(context, scores, (size_t)n * value);
    void *d_grad_out = upload(context, grad_out, (size_t)n * value);
    void *d_features = upload(context, features, (size_t)(g.nodes * heads * width) * value);
    void *d_out = upload(context, poison, (size_t)n * value);
    void *d_grad = upload(context, poison, (size_t)n * value);
    void *d_y = upload(context, poison, (size_t)ny * value);
    void *d_out_y = upload(context, poison, (size_t)n * value);
    assert_int_equal(spart_softmax_check_rows(context, &device), SPART_OK);
    assert_int_equal(spart_softmax_forward(context, &device, d_scores, d_out), SPART_OK);
    assert_int_equal(spart_softmax_backward(context, &device, d_out, d_grad_out, d_grad), SPART_OK);
    assert_int_equal(
        spart_softmax_aggregate(context, &device, &d_gather, d_scores, d_features, d_y, d_out_y),
        SPART_OK);
    unsigned char *back = malloc((size_t)(n > ny ? n : ny) * value);
    download(context, back, d_out, (size_t)n * value);
    assert_true(digest_bytes(back, (size_t)n * value) == digest_bytes(out, (size_t)n * value));
    download(context, back, d_grad, (size_t)n * value);
    assert_true(digest_bytes(back, (size_t)n * value) == digest_bytes(grad, (size_t)n * value));
    download(context, back, d_y, (size_t)ny * value);
    assert_true(digest_bytes(back, (size_t)ny * value) == digest_bytes(y, (size_t)ny * value));
    download(context, back, d_out_y, (size_t)n * value);
    assert_true(digest_bytes(back, (size_t)n * value) == digest_bytes(out_y, (size_t)n * value));
    assert_memory_equal(out_y, out, (size_t)n * value);
    void *device_arrays[] = {
        d_rows, (void *)d_gather.columns, d_scores, d_grad_out, d_features, d_out, d_grad, d_y,
        d_out_y};
    for (size_t k = 0; k < sizeof device_arrays / sizeof device_arrays[0]; k++) {
        spart_device_free(context, device_arrays[k]);
    }
    if (type == SPART_FLOAT32) {
        free(scores), free(grad_out), free(features);
    }
    free(scores64), free(grad64), free(features64), free(out), free(grad), free(y), free(out_y);
    free(poison), free(back);
    test_graph_free(&g);
}

static void test_host_equals_device_float32(void **state)
{
    fixture *f = *state;
    const int64_t heads[] = {1, 4, 8, 3};
    for (int k = 0; k < 4; k++) {
        compare_case(f->context, heads[k], SPART_FLOAT32, k == 3, 100 + (uint64_t)k, 5);
    }
}

static void test_host_equals_device_float64(void **state)
{
    fixture *f = *state;
    const int64_t heads[] = {1, 2, 8, 6};
    for (int k = 0; k < 4; k++) {
        compare_case(f->context, heads[k], SPART_FLOAT64, k == 1, 200 + (uint64_t)k, 5);
    }
}

/* The aggregation's blocks take H F threads rounded up to warps, 64 to
 * 256 (kernels/softmax_aggregate.cu): H F = 100 (128 threads) and 300
 * (256 threads, two passes over the values of a row) give the host's bits
 * too, float32 and float64. */
static void test_host_equals_device_wide_features(void **state)
{
    fixture *f = *state;
    compare_case(f->context, 2, SPART_FLOAT32, 0, 400, 50);
    compare_case(f->context, 3, SPART_FLOAT64, 1, 401, 100);
}

/* Graphs of short rows only (mean 2 and 40: other group shapes), and
 * one-edge rows; mean 600: rows of 33 .. a chunk edges whose terms do not
 * all stay in registers (and some longer than a chunk); each by both
 * layouts of the forward (kernels/softmax.cu, forward_design). */
static void test_host_equals_device_other_shapes(void **state)
{
    fixture *f = *state;
    spart_context *context = f->context;
    const double means[] = {2.0, 40.0, 600.0, 2.0, 40.0, 600.0, 2.0, 40.0, 600.0};
    const int designs[] = {1, 1, 1, 0, 0, 0, 2, 2, 2};
    for (int k = 0; k < 9; k++) {
        spart_softmax_bench_set_forward_design(designs[k]);
        const int64_t rows = (small_cases() ? 200 : 5000) / (means[k] > 100.0 ? 5 : 1);
        test_graph g = test_graph_make(rows, means[k], 0, 300 + (uint64_t)k);
        const int64_t heads = 2, n = g.edges * heads;
        double *wide = random_doubles(n, 10.0, 310);
        float *scores = to_floats(wide, n);
        free(wide);
        float *out = malloc((size_t)n * sizeof(float)), *back = malloc((size_t)n * sizeof(float));
        spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT32);
        assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
        spart_softmax_segments d = s;
        d.on_device = 1;
        d.row_ptr = upload(context, g.row_ptr, (size_t)(g.rows + 1) * 8);
        void *d_scores = upload(context, scores, (size_t)n * 4);
        assert_int_equal(spart_softmax_forward(context, &d, d_scores, d_scores), SPART_OK);
        download(context, back, d_scores, (size_t)n * 4);
        assert_memory_equal(back, out, (size_t)n * 4);
        spart_device_free(context, (void *)d.row_ptr);
        spart_device_free(context, d_scores);
        free(scores), free(out), free(back);
        test_graph_free(&g);
    }
    spart_softmax_bench_set_forward_design(test_design());
}

/* A graph of the workspace form replays the same bits. */
typedef struct graph_call {
    spart_softmax_segments segments;
    const void *scores;
    void *out;
    void *workspace;
    size_t bytes;
} graph_call;

static spart_status record_forward(void *user, spart_context *context)
{
    graph_call *call = user;
    return spart_softmax_forward_workspace(context, &call->segments, call->scores, call->out,
                                           call->workspace, call->bytes);
}

static void test_graph_replays_the_same_bits(void **state)
{
    fixture *f = *state;
    spart_context *context = f->context;
    int64_t rows, long_row;
    double mean;
    graph_size(&rows, &mean, &long_row);
    test_graph g = test_graph_make(rows, mean, long_row, 400);
    const int64_t heads = 4, n = g.edges * heads;
    double *wide = random_doubles(n, 10.0, 401);
    float *scores = to_floats(wide, n);
    free(wide);
    float *out = malloc((size_t)n * sizeof(float)), *back = malloc((size_t)n * sizeof(float));
    spart_softmax_segments s = test_segments(&g, heads, SPART_FLOAT32);
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
    graph_call call;
    call.segments = s;
    call.segments.on_device = 1;
    call.segments.row_ptr = upload(context, g.row_ptr, (size_t)(g.rows + 1) * 8);
    call.scores = upload(context, scores, (size_t)n * 4);
    call.out = upload(context, scores, (size_t)n * 4);
    call.bytes = spart_softmax_workspace_size(&call.segments, 0);
    assert_int_equal(spart_device_malloc(context, call.bytes, &call.workspace), SPART_OK);
    spart_device_graph *graph = NULL;
    assert_int_equal(spart_device_graph_record(context, record_forward, &call, &graph), SPART_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(spart_device_graph_launch(context, graph), SPART_OK);
        download(context, back, call.out, (size_t)n * 4);
        assert_memory_equal(back, out, (size_t)n * 4);
    }
    spart_device_graph_free(graph);
    spart_device_free(context, (void *)call.segments.row_ptr);
    spart_device_free(context, (void *)call.scores);
    spart_device_free(context, call.out);
    spart_device_free(context, call.workspace);
    free(scores), free(out), free(back);
    test_graph_free(&g);
}

/* One workspace for two graphs whose long rows lie elsewhere, its notes
 * of long rows (softmax_kernels.h) first filled with a row that is long
 * in both (row 7) and then left from the other graph: each forward gives
 * the host's bits, so a stale note is never taken. */
static void test_workspace_notes_are_checked(void **state)
{
    fixture *f = *state;
    spart_context *context = f->context;
    const int64_t heads = 2, rows = small_cases() ? 200 : 3000;
    const int64_t long_rows[] = {3 * SPART_SOFTMAX_CHUNK + 5, 2 * SPART_SOFTMAX_CHUNK + 77,
                                 3 * SPART_SOFTMAX_CHUNK + 5};
    test_graph graphs[3];
    size_t bytes = 0;
    for (int k = 0; k < 3; k++) {
        graphs[k] = test_graph_make(rows, 9.0, long_rows[k], 600 + (uint64_t)(k % 2));
        spart_softmax_segments s = test_segments(&graphs[k], heads, SPART_FLOAT32);
        const size_t need = spart_softmax_workspace_size(&s, 0);
        bytes = need > bytes ? need : bytes;
    }
    int64_t *fill = malloc(bytes);
    for (size_t i = 0; i < bytes / 8; i++) {
        fill[i] = 7;
    }
    void *workspace = upload(context, fill, bytes);
    for (int k = 0; k < 3; k++) {
        const test_graph *g = &graphs[k];
        const int64_t n = g->edges * heads;
        double *wide = random_doubles(n, 10.0, 610 + (uint64_t)k);
        float *scores = to_floats(wide, n);
        float *out = malloc((size_t)n * 4), *back = malloc((size_t)n * 4);
        spart_softmax_segments s = test_segments(g, heads, SPART_FLOAT32);
        assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_OK);
        spart_softmax_segments d = s;
        d.on_device = 1;
        d.row_ptr = upload(context, g->row_ptr, (size_t)(g->rows + 1) * 8);
        void *d_scores = upload(context, scores, (size_t)n * 4);
        void *d_out = upload(context, scores, (size_t)n * 4);
        assert_int_equal(
            spart_softmax_forward_workspace(context, &d, d_scores, d_out, workspace, bytes),
            SPART_OK);
        download(context, back, d_out, (size_t)n * 4);
        assert_memory_equal(back, out, (size_t)n * 4);
        spart_device_free(context, (void *)d.row_ptr);
        spart_device_free(context, d_scores);
        spart_device_free(context, d_out);
        free(wide), free(scores), free(out), free(back);
    }
    spart_device_free(context, workspace);
    free(fill);
    for (int k = 0; k < 3; k++) {
        test_graph_free(&graphs[k]);
    }
}

/* The device check of the row pointers, and host arrays refused. */
static void test_device_checks(void **state)
{
    fixture *f = *state;
    spart_context *context = f->context;
    int64_t row_ptr[] = {0, 2, 1, 4};
    spart_softmax_segments s = {0};
    s.num_rows = 3, s.num_edges = 4, s.num_heads = 2, s.value_type = SPART_FLOAT32;
    s.on_device = 1;
    s.row_ptr = upload(context, row_ptr, sizeof row_ptr);
    assert_int_equal(spart_softmax_check_rows(context, &s), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "row pointer 2"));
    spart_device_free(context, (void *)s.row_ptr);
    float scores[8] = {0}, out[8];
    s.row_ptr = row_ptr;
    assert_int_equal(spart_softmax_forward(context, &s, scores, out), SPART_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const int skip = cuda_tests_exit_code();
    if (skip >= 0) {
        return skip;
    }
    spart_softmax_bench_set_forward_design(test_design());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_equals_device_float32),
        cmocka_unit_test(test_host_equals_device_float64),
        cmocka_unit_test(test_host_equals_device_other_shapes),
        cmocka_unit_test(test_host_equals_device_wide_features),
        cmocka_unit_test(test_graph_replays_the_same_bits),
        cmocka_unit_test(test_workspace_notes_are_checked),
        cmocka_unit_test(test_device_checks),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
