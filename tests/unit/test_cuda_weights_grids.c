/*
 * tests/unit/test_cuda_weights_grids.c: weights built on the device from
 * grids already in device memory (spart_weights_build_device_grids, issue
 * 30) are the host build's from host copies of the same arrays, entry for
 * entry, bit for bit, in the same order: conservative 2-D by clipping from
 * the arrays in place (onto lattices, onto warped grids, onto grids that
 * are almost lattices on either side of the tolerance, weights_input,
 * several elements onto one broadcast lattice, grids past the lattice's
 * edge), and the problems built from host copies (multilinear, 1-D, the
 * sweep, grids broadcast along a resampled axis). Refusals are the host's
 * (status and sentence): a NaN or infinite coordinate found on the device,
 * bad shapes; host memory is refused naming the array. A kernel folded
 * into device weights by spart_regridder_create_device_convolved gives the
 * host's convolved regridder bit for bit. Label cuda: exit 77
 * without a visible device, a failure under SPART_REQUIRE_GPU=1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_cuda_util.h"

enum { MAX_ARRAYS = 7 };

/* Device copies of the arrays of a problem (the same shapes). */
typedef struct device_problem {
    spart_array input[3], output[3], weights_input;
    spart_weights_options options;
    void *memory[MAX_ARRAYS];
    int count;
} device_problem;

static spart_array array_to_device(spart_context *context, const spart_array *host,
                                   device_problem *p)
{
    spart_array a = *host;
    int64_t n = spart_shape_size(&host->shape);
    double *copy = doubles_to_device(context, host->data, n > 0 ? n : 1);
    a.data = copy;
    p->memory[p->count++] = copy;
    return a;
}

static void problem_to_device(spart_context *context, int n, const spart_array *in,
                              const spart_array *out, const spart_weights_options *options,
                              device_problem *p)
{
    memset(p, 0, sizeof *p);
    for (int c = 0; c < n && c < 3; c++) {
        p->input[c] = array_to_device(context, &in[c], p);
        p->output[c] = array_to_device(context, &out[c], p);
    }
    p->options = *options;
    if (options->weights_input != NULL) {
        p->weights_input = array_to_device(context, options->weights_input, p);
        p->options.weights_input = &p->weights_input;
    }
}

static void problem_free(spart_context *context, device_problem *p)
{
    for (int k = 0; k < p->count; k++) {
        spart_device_free(context, p->memory[k]);
    }
}

/* The host's build of host arrays and the device's of device copies: both
 * succeed with the same entries, or both fail with the same status and
 * sentence. */
static void assert_same_build(spart_context *context, int n, const spart_array *in,
                              const spart_array *out, const spart_weights_options *options,
                              const char *what)
{
    spart_weights *host = NULL, *device = NULL, *back = NULL;
    spart_status status_host = spart_weights_build(context, n, in, out, options, &host);
    char sentence[512];
    snprintf(sentence, sizeof sentence, "%s", spart_context_error(context));
    device_problem p;
    problem_to_device(context, n, in, out, options, &p);
    spart_status status_device =
        spart_weights_build_device_grids(context, n, p.input, p.output, &p.options, &device);
    if (status_host != status_device) {
        fail_msg("%s: the host build says %d (%s), the device build %d (%s)", what,
                 (int)status_host, sentence, (int)status_device, spart_context_error(context));
    }
    if (status_host != SPART_OK) {
        assert_string_equal(spart_context_error(context), sentence);
        assert_null(device);
        problem_free(context, &p);
        return;
    }
    problem_free(context, &p); /* the weights do not need the grids */
    assert_int_equal(spart_weights_cuda_device(device), 0);
    assert_int_equal(spart_weights_to_host(context, device, &back), SPART_OK);
    int64_t elements = spart_weights_num_elements(host);
    assert_int_equal(spart_weights_num_elements(back), elements);
    spart_shape a = spart_weights_shape_input(host), b = spart_weights_shape_input(back);
    assert_memory_equal(&a, &b, sizeof a);
    a = spart_weights_shape_output(host), b = spart_weights_shape_output(back);
    assert_memory_equal(&a, &b, sizeof a);
    const int64_t *oh, *ih, *jh, *ob, *ib, *jb;
    const double *vh, *vb;
    assert_int_equal(spart_weights_arrays(host, &oh, &ih, &jh, &vh), SPART_OK);
    assert_int_equal(spart_weights_arrays(back, &ob, &ib, &jb, &vb), SPART_OK);
    for (int64_t e = 0; e <= elements; e++) {
        if (oh[e] != ob[e]) {
            fail_msg("%s: element %lld starts at %lld on the device, %lld on the host", what,
                     (long long)e, (long long)ob[e], (long long)oh[e]);
        }
    }
    assert_true(oh[elements] > 0);
    for (int64_t k = 0; k < oh[elements]; k++) {
        if (ih[k] != ib[k] || jh[k] != jb[k] || memcmp(&vh[k], &vb[k], sizeof(double)) != 0) {
            fail_msg("%s: entry %lld is (%lld, %lld, %.17g) on the device, (%lld, %lld, %.17g) "
                     "on the host",
                     what, (long long)k, (long long)ib[k], (long long)jb[k], vb[k],
                     (long long)ih[k], (long long)jh[k], vh[k]);
        }
    }
    spart_weights_free(host);
    spart_weights_free(device);
    spart_weights_free(back);
}

enum { N = 41, M = 37 };

/* An N x N grid rotated by `angle`, warped by `warp`, shifted by `shift`. */
static void rotated_grid(double *x, double *y, double angle, double warp, double shift)
{
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            double u = -4.0 + 8.0 * i / (N - 1), v = -4.0 + 8.0 * j / (N - 1);
            x[i * N + j] = u * cos(angle) - v * sin(angle) + warp * u * u + shift;
            y[i * N + j] = u * sin(angle) + v * cos(angle) + warp * v * v - 0.5 * shift;
        }
    }
}

/* An M x M lattice over [-lo, lo]^2. */
static void lattice(double *x, double *y, double lo)
{
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < M; j++) {
            x[i * M + j] = -lo + 2.0 * lo * i / (M - 1);
            y[i * M + j] = -lo + 2.0 * lo * j / (M - 1);
        }
    }
}

static void conservative(spart_weights_options *options)
{
    spart_weights_options_init(options);
    options->method = SPART_METHOD_CONSERVATIVE;
}

static void test_clip_in_place(void **state)
{
    fixture *f = *state;
    static double x[N * N], y[N * N], lx[M * M], ly[M * M], factors[(N - 1) * (N - 1)];
    rotated_grid(x, y, 0.2, 0.0, 0.0);
    lattice(lx, ly, 4.5);
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    assert_same_build(f->context, 2, in, out, &options, "rotated onto a lattice");
    lattice(lx, ly, 3.0); /* the grid reaches past the lattice */
    assert_same_build(f->context, 2, in, out, &options, "past the lattice's edge");
    rotated_grid(x, y, 0.4, 0.05, 0.3);
    assert_same_build(f->context, 2, in, out, &options, "warped onto a lattice");
    assert_same_build(f->context, 2, out, in, &options, "a lattice onto a warped grid");
    for (int k = 0; k < (N - 1) * (N - 1); k++) {
        factors[k] = 0.5 + (k % 7) * 0.125;
    }
    spart_array w = {factors, {2, {N - 1, N - 1}}};
    options.weights_input = &w;
    assert_same_build(f->context, 2, in, out, &options, "weights_input");
}

/* Output grids that are almost lattices: the host's and the device's tests
 * must decide them alike (the lattice kernel and the general one order and
 * round differently, so a different decision shows in the entries). */
static void test_lattice_decision(void **state)
{
    fixture *f = *state;
    static double x[N * N], y[N * N], lx[M * M], ly[M * M];
    rotated_grid(x, y, 0.3, 0.02, 0.0);
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    const double relative[] = {1e-12, 5e-11, 2e-10, 1e-8};
    for (int r = 0; r < 4; r++) {
        lattice(lx, ly, 4.2);
        double step = 8.4 / (M - 1);
        for (int j = 0; j < M; j++) { /* x's 11th vertex moves along axis 0 */
            lx[11 * M + j] += relative[r] * step;
        }
        char what[64];
        snprintf(what, sizeof what, "x step off by %g", relative[r]);
        assert_same_build(f->context, 2, in, out, &options, what);
        lattice(lx, ly, 4.2);
        for (int i = 0; i < M; i++) { /* y's 20th vertex likewise */
            ly[i * M + 20] -= relative[r] * step;
        }
        snprintf(what, sizeof what, "y step off by %g", relative[r]);
        assert_same_build(f->context, 2, in, out, &options, what);
    }
    lattice(lx, ly, 4.2);
    lx[5 * M + 9] += 1e-15; /* x varies along axis 1 at one vertex */
    assert_same_build(f->context, 2, in, out, &options, "x not constant along axis 1");
}

/* Three elements (input grids shifted) onto one lattice, broadcast. */
static void test_elements(void **state)
{
    fixture *f = *state;
    static double x[N * N], y[N * N], x3[3 * N * N], y3[3 * N * N], lx[M * M], ly[M * M];
    static double factors[3 * (N - 1) * (N - 1)];
    for (int e = 0; e < 3; e++) {
        rotated_grid(x, y, 0.1 + 0.2 * e, 0.01 * e, 0.37 * e);
        memcpy(x3 + e * N * N, x, sizeof x);
        memcpy(y3 + e * N * N, y, sizeof y);
    }
    for (int k = 0; k < 3 * (N - 1) * (N - 1); k++) {
        factors[k] = 0.25 + (k % 11) * 0.0625;
    }
    lattice(lx, ly, 4.4);
    spart_array in3[2] = {{x3, {3, {3, N, N}}}, {y3, {3, {3, N, N}}}};
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    options.num_axis_input = 2;
    options.axis_input[0] = -2;
    options.axis_input[1] = -1;
    options.num_axis_output = 2;
    options.axis_output[0] = -2;
    options.axis_output[1] = -1;
    assert_same_build(f->context, 2, in3, out, &options, "three elements onto a lattice");
    assert_same_build(f->context, 2, out, in3, &options, "a lattice onto three warped grids");
    spart_array w = {factors, {3, {3, N - 1, N - 1}}};
    options.weights_input = &w;
    assert_same_build(f->context, 2, in3, out, &options, "three elements, weights_input");
}

/* Problems built from host copies of the device arrays. */
static void test_from_host_copies(void **state)
{
    fixture *f = *state;
    static double ax[N], ay[N], x[N * N], y[N * N], px[M * M], py[M * M], lx[M * M], ly[M * M];
    for (int k = 0; k < N; k++) {
        ax[k] = -4.0 + 8.0 * k / (N - 1) + 0.01 * k * k / N;
        ay[k] = -3.0 + 6.0 * k / (N - 1);
    }
    uint64_t random = 5;
    for (int k = 0; k < M * M; k++) {
        px[k] = -4.5 + 9.0 * next_uniform(&random);
        py[k] = -3.5 + 7.0 * next_uniform(&random);
    }
    /* a rectilinear grid as two broadcast vectors: strided blocks */
    spart_array in_broadcast[2] = {{ax, {2, {N, 1}}}, {ay, {2, {1, N}}}};
    lattice(lx, ly, 3.5);
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    assert_same_build(f->context, 2, in_broadcast, out, &options, "broadcast vectors, clipped");
    spart_array points[2] = {{px, {2, {M, M}}}, {py, {2, {M, M}}}};
    spart_weights_options_init(&options);
    assert_same_build(f->context, 2, in_broadcast, points, &options, "multilinear, rectilinear");
    rotated_grid(x, y, 0.3, 0.01, 0.0);
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    assert_same_build(f->context, 2, in, points, &options, "multilinear, curvilinear");
    spart_array in_1d = {ax, {1, {N}}}, out_1d = {ay, {1, {N}}};
    conservative(&options);
    assert_same_build(f->context, 1, &in_1d, &out_1d, &options, "conservative 1-D");
    options.algorithm = SPART_ALGORITHM_SWEEP;
    assert_same_build(f->context, 2, in, out, &options, "the sweep");
}

/* A NaN or an infinity in a coordinate: the host's status and sentence,
 * found on the device (the first bad value, in the host's order). */
static void test_non_finite_refused(void **state)
{
    fixture *f = *state;
    static double x[N * N], y[N * N], lx[M * M], ly[M * M];
    rotated_grid(x, y, 0.2, 0.0, 0.0);
    lattice(lx, ly, 4.5);
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    y[N * N - 1] = INFINITY;
    y[977] = -NAN;
    x[1500] = NAN;
    assert_same_build(f->context, 2, in, out, &options, "NaN in the input");
    rotated_grid(x, y, 0.2, 0.0, 0.0);
    ly[M * M - 2] = -INFINITY;
    assert_same_build(f->context, 2, in, out, &options, "infinity in the output");
    /* multilinear: the input grid is checked */
    lattice(lx, ly, 4.5);
    spart_weights_options_init(&options);
    x[0] = NAN;
    assert_same_build(f->context, 2, in, out, &options, "multilinear, NaN in the grid");
    assert_int_equal(spart_weights_build_device_grids(f->context, 2, in, out, &options, NULL),
                     SPART_ERROR_NULL_POINTER);
}

/* Host memory where device memory was promised is refused, naming it; bad
 * shapes get the host build's sentence without reading a value. */
static void test_refusals(void **state)
{
    fixture *f = *state;
    static double x[N * N], y[N * N], lx[M * M], ly[M * M];
    rotated_grid(x, y, 0.2, 0.0, 0.0);
    lattice(lx, ly, 4.5);
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_build_device_grids(f->context, 2, in, out, &options, &weights),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(weights);
    assert_non_null(strstr(spart_context_error(f->context), "coordinates_input[0].data"));
    assert_non_null(strstr(spart_context_error(f->context), "host memory"));
    device_problem p;
    problem_to_device(f->context, 2, in, out, &options, &p);
    p.output[1].data = ly;
    assert_int_equal(
        spart_weights_build_device_grids(f->context, 2, p.input, p.output, &options, &weights),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "coordinates_output[1].data"));
    problem_free(f->context, &p);
    /* shapes: the host's sentences */
    spart_array short_y = {y, {2, {N, N - 1}}};
    spart_array bad[2] = {in[0], short_y};
    assert_same_build(f->context, 2, bad, out, &options, "shapes that do not broadcast");
    assert_same_build(f->context, 0, in, out, &options, "no coordinates");
    options.method = (spart_method)7;
    assert_same_build(f->context, 2, in, out, &options, "an unknown method");
}

/* spart_regridder_create_device_convolved from device weights (folded on
 * their device, assembled in place): the CSR arrays of the host's
 * spart_weights_convolve + spart_regridder_create, and of the same call
 * from host weights; a NaN in the kernel refused in the same words. */
static void test_convolved_from_device_weights(void **state)
{
    fixture *f = *state;
    static double x[N * N], y[N * N], x3[3 * N * N], y3[3 * N * N], lx[M * M], ly[M * M];
    for (int e = 0; e < 3; e++) {
        rotated_grid(x, y, 0.15 + 0.1 * e, 0.0, 0.2 * e);
        memcpy(x3 + e * N * N, x, sizeof x);
        memcpy(y3 + e * N * N, y, sizeof y);
    }
    lattice(lx, ly, 4.4);
    spart_array in3[2] = {{x3, {3, {3, N, N}}}, {y3, {3, {3, N, N}}}};
    spart_array out[2] = {{lx, {2, {M, M}}}, {ly, {2, {M, M}}}};
    spart_weights_options options;
    conservative(&options);
    options.num_axis_input = 2;
    options.axis_input[0] = -2;
    options.axis_input[1] = -1;
    options.num_axis_output = 2;
    options.axis_output[0] = -2;
    options.axis_output[1] = -1;
    static double kernel[3 * 4];
    for (int k = 0; k < 3 * 4; k++) {
        kernel[k] = 0.05 + 0.01 * (k % 5) + 0.001 * k;
    }
    spart_array kernels = {kernel, {2, {3, 4}}}; /* one 3 x 4 kernel */
    spart_weights *host = NULL, *convolved = NULL, *device = NULL;
    assert_int_equal(spart_weights_build(f->context, 2, in3, out, &options, &host), SPART_OK);
    assert_int_equal(spart_weights_convolve(f->context, host, &kernels, &convolved), SPART_OK);
    spart_regridder *expected = NULL, *from_host = NULL, *from_device = NULL;
    assert_int_equal(spart_regridder_create(f->context, convolved, NULL, &expected), SPART_OK);
    assert_int_equal(
        spart_regridder_create_device_convolved(f->context, host, &kernels, NULL, &from_host),
        SPART_OK);
    device_problem p;
    problem_to_device(f->context, 2, in3, out, &options, &p);
    assert_int_equal(
        spart_weights_build_device_grids(f->context, 2, p.input, p.output, &p.options, &device),
        SPART_OK);
    problem_free(f->context, &p);
    if (spart_regridder_create_device_convolved(f->context, device, &kernels, NULL, &from_device) !=
        SPART_OK) {
        fail_msg("create_device_convolved of device weights: %s", spart_context_error(f->context));
    }
    uint64_t a = assert_same_csr(f->context, expected, from_host, "convolved, host weights");
    uint64_t b = assert_same_csr(f->context, expected, from_device, "convolved, device weights");
    assert_int_equal(a, b);
    /* a kernel that is not finite: refused in the host's words */
    spart_regridder *refused = NULL;
    kernel[7] = NAN;
    spart_status status_host =
        spart_regridder_create_device_convolved(f->context, host, &kernels, NULL, &refused);
    char sentence[512];
    snprintf(sentence, sizeof sentence, "%s", spart_context_error(f->context));
    assert_int_equal(
        spart_regridder_create_device_convolved(f->context, device, &kernels, NULL, &refused),
        status_host);
    assert_int_not_equal(status_host, SPART_OK);
    assert_string_equal(spart_context_error(f->context), sentence);
    assert_null(refused);
    spart_regridder_free(expected);
    spart_regridder_free(from_host);
    spart_regridder_free(from_device);
    spart_weights_free(host);
    spart_weights_free(convolved);
    spart_weights_free(device);
}

int main(void)
{
    const int skip = cuda_tests_exit_code();
    if (skip >= 0) {
        return skip;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clip_in_place),
        cmocka_unit_test(test_lattice_decision),
        cmocka_unit_test(test_elements),
        cmocka_unit_test(test_from_host_copies),
        cmocka_unit_test(test_non_finite_refused),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_convolved_from_device_weights),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
