/*
 * tests/unit/test_cuda_weights.c: weights built on the device
 * (spart_weights_build_device, issue 30) are the host build's, entry for
 * entry, bit for bit, in the same order: multilinear on rectilinear grids
 * (1-3-D, ascending and descending axes, coordinates varying along swapped
 * axes, every bounds mode, coalesced or not, weights_input, points on the
 * edge, outside and NaN, several elements), conservative 1-D (random
 * monotonic grids of either direction, repeated vertices, grids touching
 * or missing the output, weights_input, several elements), and the
 * conservative 2-D by clipping (onto a lattice and onto warped grids,
 * weights_input, several elements: 30-clip's kernels through this
 * plumbing), multilinear on curvilinear grids (2-D and 3-D: the host's
 * search of the boxes and Newton's method, on the device; extrapolation,
 * NaN and vertex points), and the problems the host builds for the device
 * (1-D grids that turn back, the 2-D sweep).
 * Refusals are the host's (status and sentence); the regridder assembled
 * from device weights in place is the host regridder bit for bit; host
 * functions refuse device weights. Label cuda: exit 77 without a visible
 * device, a failure under SPART_REQUIRE_GPU=1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_cuda_util.h"
#include "weights/weights_device_build.h"

/* The host's and the device's builds of the same problem: both succeed
 * with the same entries, or both fail with the same status and sentence.
 * Returns a digest of the entries (0 when refused). */
static uint64_t assert_same_build(spart_context *context, int n, const spart_array *in,
                                  const spart_array *out, const spart_weights_options *options,
                                  int assemble, const char *what)
{
    spart_weights *host = NULL, *device = NULL, *back = NULL;
    spart_status status_host = spart_weights_build(context, n, in, out, options, &host);
    char sentence[512];
    snprintf(sentence, sizeof sentence, "%s", spart_context_error(context));
    spart_status status_device = spart_weights_build_device(context, n, in, out, options, &device);
    if (status_host != status_device) {
        fail_msg("%s: the host build says %d (%s), the device build %d (%s)", what,
                 (int)status_host, sentence, (int)status_device, spart_context_error(context));
    }
    if (status_host != SPART_OK) {
        assert_string_equal(spart_context_error(context), sentence);
        assert_null(device);
        return 0;
    }
    assert_int_equal(spart_weights_cuda_device(device), 0);
    assert_int_equal(spart_weights_to_host(context, device, &back), SPART_OK);
    assert_int_equal(spart_weights_cuda_device(back), -1);
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
    int64_t total = oh[elements];
    for (int64_t k = 0; k < total; k++) {
        if (ih[k] != ib[k] || jh[k] != jb[k] || memcmp(&vh[k], &vb[k], sizeof(double)) != 0) {
            fail_msg("%s: entry %lld is (%lld, %lld, %.17g) on the device, (%lld, %lld, %.17g) "
                     "on the host",
                     what, (long long)k, (long long)ib[k], (long long)jb[k], vb[k],
                     (long long)ih[k], (long long)jh[k], vh[k]);
        }
    }
    uint64_t digest = digest_bytes(ih, (size_t)total * 8) ^
                      3 * digest_bytes(jh, (size_t)total * 8) ^ 5 * digest_doubles(vh, total);
    if (assemble) {
        spart_regridder *from_host = NULL, *from_device = NULL;
        if (spart_regridder_create(context, host, NULL, &from_host) != SPART_OK ||
            spart_regridder_create_device(context, device, NULL, &from_device) != SPART_OK) {
            fail_msg("%s: assembly: %s", what, spart_context_error(context));
        }
        (void)assert_same_csr(context, from_host, from_device, what);
        spart_regridder_free(from_host);
        spart_regridder_free(from_device);
    }
    spart_weights_free(host);
    spart_weights_free(device);
    spart_weights_free(back);
    return digest;
}

/* Ascending values from `start`, steps drawn in [0.5, 1.5] step. */
static void ascending(uint64_t *state, double *x, int64_t n, double start, double step)
{
    double at = start;
    for (int64_t k = 0; k < n; k++) {
        x[k] = at;
        at += step * (0.5 + next_uniform(state));
    }
}

static void test_multilinear_1d(void **state)
{
    fixture *f = *state;
    uint64_t random = 1;
    double grid[37], points[240], factors[37];
    ascending(&random, grid, 37, -2.0, 0.1);
    for (int k = 0; k < 240; k++) {
        points[k] = -2.5 + 5.0 * next_uniform(&random);
        factors[k % 37] = 0.5 + next_uniform(&random);
    }
    points[0] = grid[0];
    points[1] = grid[36];
    points[2] = grid[17];
    points[3] = NAN;
    points[4] = INFINITY;
    spart_array in = {grid, {1, {37}}}, out = {points, {1, {240}}};
    spart_array w = {factors, {1, {37}}};
    char what[96];
    for (int descending = 0; descending < 2; descending++) {
        if (descending) {
            for (int k = 0; k < 37; k++) {
                grid[k] = -grid[k];
            }
        }
        for (int bounds = 0; bounds < 3; bounds++) {
            for (int variant = 0; variant < 4; variant++) {
                spart_weights_options options;
                spart_weights_options_init(&options);
                options.bounds = (spart_bounds)bounds;
                options.coalesce = variant & 1;
                options.weights_input = variant & 2 ? &w : NULL;
                snprintf(what, sizeof what, "1-D descending %d bounds %d variant %d", descending,
                         bounds, variant);
                (void)assert_same_build(f->context, 1, &in, &out, &options, variant == 1, what);
            }
        }
    }
}

static void test_multilinear_2d_and_3d(void **state)
{
    fixture *f = *state;
    uint64_t random = 2;
    enum { NX = 23, NY = 17, P = 31 * 29 };
    double ax[NX], ay[NY], x[NX * NY], y[NX * NY], px[P], py[P];
    ascending(&random, ax, NX, 0.0, 0.3);
    ascending(&random, ay, NY, -1.0, 0.2);
    for (int i = 0; i < NX; i++) {
        for (int j = 0; j < NY; j++) {
            x[i * NY + j] = ax[i];
            y[i * NY + j] = -ay[j]; /* descending along axis 1 */
        }
    }
    for (int p = 0; p < P; p++) {
        px[p] = -0.5 + (ax[NX - 1] + 1.0) * next_uniform(&random);
        py[p] = -(ay[NY - 1] + 0.3) + (ay[NY - 1] - ay[0] + 0.6) * next_uniform(&random);
    }
    spart_array in[2] = {{x, {2, {NX, NY}}}, {y, {2, {NX, NY}}}};
    spart_array out[2] = {{px, {2, {31, 29}}}, {py, {2, {31, 29}}}};
    spart_array swapped[2] = {in[1], in[0]}, swapped_out[2] = {out[1], out[0]};
    for (int bounds = 0; bounds < 3; bounds++) {
        for (int coalesce = 0; coalesce < 2; coalesce++) {
            spart_weights_options options;
            spart_weights_options_init(&options);
            options.bounds = (spart_bounds)bounds;
            options.coalesce = coalesce;
            (void)assert_same_build(f->context, 2, in, out, &options, coalesce, "2-D");
            (void)assert_same_build(f->context, 2, swapped, swapped_out, &options, 0,
                                    "2-D, coordinates swapped");
        }
    }
    /* 3-D: 9 x 7 x 5 vertices, 1000 points, a quarter outside */
    enum { N3 = 9 * 7 * 5, P3 = 1000 };
    static double gx[N3], gy[N3], gz[N3], qx[P3], qy[P3], qz[P3];
    for (int i = 0; i < 9; i++) {
        for (int j = 0; j < 7; j++) {
            for (int k = 0; k < 5; k++) {
                gx[(i * 7 + j) * 5 + k] = 0.25 * i;
                gy[(i * 7 + j) * 5 + k] = 1.0 + 0.5 * j * j;
                gz[(i * 7 + j) * 5 + k] = -0.3 * k;
            }
        }
    }
    for (int p = 0; p < P3; p++) {
        qx[p] = -0.3 + 2.6 * next_uniform(&random);
        qy[p] = 0.5 + 18.5 * next_uniform(&random);
        qz[p] = -1.4 + 1.6 * next_uniform(&random);
    }
    spart_array in3[3] = {{gx, {3, {9, 7, 5}}}, {gy, {3, {9, 7, 5}}}, {gz, {3, {9, 7, 5}}}};
    spart_array out3[3] = {{qx, {1, {P3}}}, {qy, {1, {P3}}}, {qz, {1, {P3}}}};
    for (int bounds = 0; bounds < 3; bounds++) {
        spart_weights_options options;
        spart_weights_options_init(&options);
        options.bounds = (spart_bounds)bounds;
        options.num_axis_output = 1;
        options.axis_output[0] = 0;
        options.num_axis_input = 3;
        options.axis_input[0] = 0;
        options.axis_input[1] = 1;
        options.axis_input[2] = 2;
        (void)assert_same_build(f->context, 3, in3, out3, &options, 0, "3-D");
    }
}

static void test_multilinear_elements_and_curvilinear(void **state)
{
    fixture *f = *state;
    uint64_t random = 3;
    /* 4 elements along a leading axis, each its own scaled grid of 12
     * vertices; 50 points shared */
    double grid[4 * 12], points[50];
    for (int e = 0; e < 4; e++) {
        for (int k = 0; k < 12; k++) {
            grid[e * 12 + k] = (1.0 + 0.25 * e) * k;
        }
    }
    for (int p = 0; p < 50; p++) {
        points[p] = -1.0 + 17.0 * next_uniform(&random);
    }
    spart_array in = {grid, {2, {4, 12}}}, out = {points, {2, {1, 50}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.num_axis_input = 1;
    options.axis_input[0] = -1;
    options.num_axis_output = 1;
    options.axis_output[0] = -1;
    (void)assert_same_build(f->context, 1, &in, &out, &options, 0, "four elements");
    /* a warped (curvilinear) 2-D grid: the host builds it for the device */
    enum { N = 15 };
    double x[N * N], y[N * N], px[300], py[300];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            x[i * N + j] = i * cos(0.3) - j * sin(0.3) + 0.02 * j * j;
            y[i * N + j] = i * sin(0.3) + j * cos(0.3);
        }
    }
    for (int p = 0; p < 300; p++) {
        px[p] = -5.0 + 20.0 * next_uniform(&random);
        py[p] = -1.0 + 20.0 * next_uniform(&random);
    }
    spart_array cin[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array cout[2] = {{px, {1, {300}}}, {py, {1, {300}}}};
    spart_weights_options_init(&options);
    options.num_axis_output = 1;
    options.axis_output[0] = 0;
    options.num_axis_input = 2;
    options.axis_input[0] = 0;
    options.axis_input[1] = 1;
    px[0] = NAN;
    px[1] = x[3 * N + 4]; /* on a vertex */
    py[1] = y[3 * N + 4];
    char what[64];
    for (int bounds = 0; bounds < 3; bounds++) {
        for (int coalesce = 0; coalesce < 2; coalesce++) {
            options.bounds = (spart_bounds)bounds;
            options.coalesce = coalesce;
            snprintf(what, sizeof what, "curvilinear, bounds %d, coalesce %d", bounds, coalesce);
            (void)assert_same_build(f->context, 2, cin, cout, &options, coalesce, what);
        }
    }
    /* a curvilinear 3-D grid (a sheared box), points inside and out */
    enum { M = 6, Q = 400 };
    static double sx[M * M * M], sy[M * M * M], sz[M * M * M], qx[Q], qy[Q], qz[Q];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < M; j++) {
            for (int k = 0; k < M; k++) {
                int v = (i * M + j) * M + k;
                sx[v] = i + 0.1 * j * k;
                sy[v] = j + 0.05 * i * i;
                sz[v] = k - 0.07 * i * j;
            }
        }
    }
    for (int p = 0; p < Q; p++) {
        qx[p] = -1.0 + 8.0 * next_uniform(&random);
        qy[p] = -1.0 + 8.0 * next_uniform(&random);
        qz[p] = -3.0 + 9.0 * next_uniform(&random);
    }
    spart_array in3[3] = {{sx, {3, {M, M, M}}}, {sy, {3, {M, M, M}}}, {sz, {3, {M, M, M}}}};
    spart_array out3[3] = {{qx, {1, {Q}}}, {qy, {1, {Q}}}, {qz, {1, {Q}}}};
    spart_weights_options_init(&options);
    options.num_axis_output = 1;
    options.axis_output[0] = 0;
    options.num_axis_input = 3;
    options.axis_input[0] = 0;
    options.axis_input[1] = 1;
    options.axis_input[2] = 2;
    for (int bounds = 0; bounds < 2; bounds++) {
        options.bounds = (spart_bounds)bounds;
        (void)assert_same_build(f->context, 3, in3, out3, &options, 0, "curvilinear 3-D");
    }
}

/* A monotonic grid of n vertices (steps in [0, 2 step], a zero step one
 * time in `zeros`), descending when asked. */
static void monotonic(uint64_t *state, double *x, int64_t n, double start, double step, int zeros,
                      int descending)
{
    double at = start;
    for (int64_t k = 0; k < n; k++) {
        x[k] = descending ? -at : at;
        int zero = zeros > 0 && next_uniform(state) * zeros < 1.0;
        at += zero ? 0.0 : 2.0 * step * next_uniform(state);
    }
}

static void test_conservative_1d(void **state)
{
    fixture *f = *state;
    uint64_t random = 4;
    char what[96];
    double x_in[64], x_out[64], factors[63];
    /* SPART_WEIGHTS_SMALL=1 (the sanitizers' runs): a twentieth of the
     * grids, one batch budget */
    const int small = getenv("SPART_WEIGHTS_SMALL") != NULL;
    const int trials = small ? 6 : 120;
    for (int trial = 0; trial < trials; trial++) {
        int64_t n_in = 2 + (int64_t)(next_uniform(&random) * 60);
        int64_t n_out = 2 + (int64_t)(next_uniform(&random) * 60);
        double start_in = floor(next_uniform(&random) * 8) * 0.25;
        double start_out = floor(next_uniform(&random) * 8) * 0.25;
        int down_in = trial % 5 == 1 || trial % 5 == 3, down_out = trial % 5 >= 2;
        monotonic(&random, x_in, n_in, start_in, trial % 2 ? 0.25 : 0.3, trial % 3 ? 0 : 5,
                  down_in);
        monotonic(&random, x_out, n_out, start_out, trial % 4 < 2 ? 0.25 : 0.4, trial % 3 ? 0 : 5,
                  down_out);
        for (int64_t k = 0; k + 1 < n_in; k++) {
            factors[k] = 0.5 + next_uniform(&random);
        }
        spart_array in = {x_in, {1, {n_in}}}, out = {x_out, {1, {n_out}}};
        spart_array w = {factors, {1, {n_in - 1}}};
        for (int variant = 0; variant < 4; variant++) {
            spart_weights_options options;
            spart_weights_options_init(&options);
            options.method = SPART_METHOD_CONSERVATIVE;
            options.coalesce = variant & 1;
            options.weights_input = variant & 2 ? &w : NULL;
            snprintf(what, sizeof what, "1-D conservative trial %d variant %d", trial, variant);
            (void)assert_same_build(f->context, 1, &in, &out, &options, variant == 1 && trial < 10,
                                    what);
        }
    }
    /* a grid that turns back: the host builds it for the device */
    double zigzag[6] = {0, 1, 3, 2, 4, 5}, lattice[4] = {0.5, 2.0, 3.5, 5.0};
    spart_array zin = {zigzag, {1, {6}}}, zout = {lattice, {1, {4}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    (void)assert_same_build(f->context, 1, &zin, &zout, &options, 0, "a grid turning back");
    /* 8 elements, each its own input grid, one output grid */
    double grids[8 * 40];
    for (int e = 0; e < 8; e++) {
        monotonic(&random, grids + e * 40, 40, 0.1 * e, 0.3, 0, e % 2);
    }
    spart_array ein = {grids, {2, {8, 40}}}, eout = {x_out, {1, {20}}};
    monotonic(&random, x_out, 20, -1.0, 0.6, 0, 0);
    options.num_axis_input = 1;
    options.axis_input[0] = -1;
    options.num_axis_output = 1;
    options.axis_output[0] = -1;
    (void)assert_same_build(f->context, 1, &ein, &eout, &options, 0, "eight 1-D elements");
    /* 37 elements in batches of a few (the batch budget made small), each
     * its own input grid, weights_input and output grid, in either
     * direction; then one output grid for all */
    enum { E = 37, NI = 25, NO = 19 };
    static double bi[E * NI], bo[E * NO], bw[E * (NI - 1)];
    for (int e = 0; e < E; e++) {
        monotonic(&random, bi + e * NI, NI, 0.05 * e, 0.3, e % 4 == 0 ? 4 : 0, e % 3 == 1);
        monotonic(&random, bo + e * NO, NO, -0.5 + 0.03 * e, 0.45, e % 5 == 0 ? 4 : 0, e % 2);
        for (int k = 0; k < NI - 1; k++) {
            bw[e * (NI - 1) + k] = 0.25 + next_uniform(&random);
        }
    }
    int64_t saved = spart_wdev_batch_words;
    spart_array bin = {bi, {2, {E, NI}}}, bout = {bo, {2, {E, NO}}}, bf = {bw, {2, {E, NI - 1}}};
    spart_array bshared = {bo, {1, {NO}}};
    for (int budget = 0; budget < (small ? 1 : 3); budget++) {
        spart_wdev_batch_words = budget == 0 ? 200 : budget == 1 ? 1000 : saved;
        for (int variant = 0; variant < 4; variant++) {
            spart_weights_options o;
            spart_weights_options_init(&o);
            o.method = SPART_METHOD_CONSERVATIVE;
            o.coalesce = variant & 1;
            o.weights_input = variant & 2 ? &bf : NULL;
            o.num_axis_input = 1;
            o.axis_input[0] = -1;
            o.num_axis_output = 1;
            o.axis_output[0] = -1;
            snprintf(what, sizeof what, "batches (budget %d, variant %d)", budget, variant);
            (void)assert_same_build(f->context, 1, &bin, &bout, &o, 0, what);
            (void)assert_same_build(f->context, 1, &bin, &bshared, &o, 0, what);
        }
    }
    spart_wdev_batch_words = saved;
    /* NaN coordinates: refused by both with the same sentence */
    x_out[3] = NAN;
    (void)assert_same_build(f->context, 1, &ein, &eout, &options, 0, "a NaN coordinate");
}

static void test_conservative_2d(void **state)
{
    fixture *f = *state;
    enum { N = 33 };
    static double x[N * N], y[N * N], lx[N * N], ly[N * N];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            double u = -4.0 + 8.0 * i / (N - 1), v = -4.0 + 8.0 * j / (N - 1);
            x[i * N + j] = u * cos(0.4) - v * sin(0.4) + 0.05 * u * u;
            y[i * N + j] = u * sin(0.4) + v * cos(0.4) + 0.05 * v * v;
            lx[i * N + j] = u;
            ly[i * N + j] = v;
        }
    }
    spart_array in[2] = {{x, {2, {N, N}}}, {y, {2, {N, N}}}};
    spart_array out[2] = {{lx, {2, {N, N}}}, {ly, {2, {N, N}}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    (void)assert_same_build(f->context, 2, in, out, &options, 1, "2-D onto a lattice");
    (void)assert_same_build(f->context, 2, out, in, &options, 0, "2-D onto a warped grid");
    /* weights_input, and three elements (each input grid shifted) onto one
     * lattice */
    static double factors[(N - 1) * (N - 1)], x3[3 * N * N], y3[3 * N * N];
    for (int k = 0; k < (N - 1) * (N - 1); k++) {
        factors[k] = 0.5 + (k % 7) * 0.125;
    }
    for (int e = 0; e < 3; e++) {
        for (int k = 0; k < N * N; k++) {
            x3[e * N * N + k] = x[k] + 0.37 * e;
            y3[e * N * N + k] = y[k] - 0.21 * e;
        }
    }
    spart_array w = {factors, {2, {N - 1, N - 1}}};
    options.weights_input = &w;
    (void)assert_same_build(f->context, 2, in, out, &options, 0, "2-D with weights_input");
    options.weights_input = NULL;
    spart_array in3[2] = {{x3, {3, {3, N, N}}}, {y3, {3, {3, N, N}}}};
    options.num_axis_input = 2;
    options.axis_input[0] = -2;
    options.axis_input[1] = -1;
    options.num_axis_output = 2;
    options.axis_output[0] = -2;
    options.axis_output[1] = -1;
    (void)assert_same_build(f->context, 2, in3, out, &options, 0, "2-D, three elements");
    (void)assert_same_build(f->context, 2, out, in3, &options, 0,
                            "2-D, three elements onto warped grids");
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    options.algorithm = SPART_ALGORITHM_SWEEP;
    (void)assert_same_build(f->context, 2, out, in, &options, 0, "2-D by the sweep");
}

/* The shape of the ideal instrument's forward weights (solvers/instrument.c):
 * a scene grid of (channel, wavelength, x, y) vertices, each channel and
 * wavelength shifted along its own direction, onto one sensor lattice, the
 * orthogonal axes kept; the regridder assembled from the device's weights
 * equals the host's (arrays and products), so an inversion with either is
 * the same bits. */
static void test_instrument_shaped_operator(void **state)
{
    fixture *f = *state;
    enum { C = 2, L = 6, NX = 24, NY = 20, MX = 30, MY = 28 };
    static double sx[C * L * (NX + 1) * (NY + 1)], sy[C * L * (NX + 1) * (NY + 1)];
    static double lx[(MX + 1) * (MY + 1)], ly[(MX + 1) * (MY + 1)];
    for (int c = 0; c < C; c++) {
        double angle = 0.4 + 1.3 * c;
        for (int w = 0; w < L; w++) {
            double shift = 0.6 * (w - L / 2.0);
            for (int i = 0; i <= NX; i++) {
                for (int j = 0; j <= NY; j++) {
                    size_t v = (((size_t)c * L + w) * (NX + 1) + i) * (NY + 1) + j;
                    sx[v] = 3.0 + i + shift * cos(angle) + 0.01 * j;
                    sy[v] = 4.0 + j + shift * sin(angle) - 0.01 * i;
                }
            }
        }
    }
    for (int i = 0; i <= MX; i++) {
        for (int j = 0; j <= MY; j++) {
            lx[i * (MY + 1) + j] = i;
            ly[i * (MY + 1) + j] = j;
        }
    }
    spart_array in[2] = {{sx, {4, {C, L, NX + 1, NY + 1}}}, {sy, {4, {C, L, NX + 1, NY + 1}}}};
    spart_array out[2] = {{lx, {4, {1, 1, MX + 1, MY + 1}}}, {ly, {4, {1, 1, MX + 1, MY + 1}}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    options.num_axis_input = 2;
    options.axis_input[0] = -2;
    options.axis_input[1] = -1;
    options.num_axis_output = 2;
    options.axis_output[0] = -2;
    options.axis_output[1] = -1;
    spart_weights *host = NULL, *device = NULL;
    assert_int_equal(spart_weights_build(f->context, 2, in, out, &options, &host), SPART_OK);
    assert_int_equal(spart_weights_build_device(f->context, 2, in, out, &options, &device),
                     SPART_OK);
    spart_regridder_options ro;
    spart_regridder_options_init(&ro);
    ro.has_shape_input = 1;
    ro.has_shape_output = 1;
    ro.num_axis_input = 2;
    ro.axis_input[0] = -2;
    ro.axis_input[1] = -1;
    ro.num_axis_output = 2;
    ro.axis_output[0] = -2;
    ro.axis_output[1] = -1;
    ro.shape_input = (spart_shape){4, {1, L, NX, NY}};
    ro.shape_output = (spart_shape){4, {C, 1, MX, MY}};
    spart_regridder *from_host = NULL, *from_device = NULL;
    if (spart_regridder_create(f->context, host, &ro, &from_host) != SPART_OK ||
        spart_regridder_create_device(f->context, device, &ro, &from_device) != SPART_OK) {
        fail_msg("instrument-shaped assembly: %s", spart_context_error(f->context));
    }
    (void)assert_same_csr(f->context, from_host, from_device, "instrument-shaped operator");
    assert_same_products(f->context, from_host, from_device, 11, "instrument-shaped operator");
    spart_regridder_free(from_host);
    spart_regridder_free(from_device);
    spart_weights_free(host);
    spart_weights_free(device);
}

static void test_device_weights_refused_on_the_host(void **state)
{
    fixture *f = *state;
    double grid[5] = {0, 1, 2, 3, 4}, points[3] = {0.5, 1.5, 3.9};
    spart_array in = {grid, {1, {5}}}, out = {points, {1, {3}}};
    spart_weights *device = NULL, *other = NULL;
    assert_int_equal(spart_weights_build_device(f->context, 1, &in, &out, NULL, &device), SPART_OK);
    assert_int_equal(spart_weights_transpose(f->context, device, &other),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "spart_weights_to_host"));
    assert_null(other);
    /* scaled on the device where they lie (test_cuda_instrument holds the bits) */
    assert_int_equal(spart_weights_scale(f->context, device, NULL, NULL), SPART_OK);
    assert_int_equal(spart_weights_save(f->context, device, "/tmp/never.fits", 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(f->context, device, NULL, &regridder),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(regridder);
    double values[5] = {1, 2, 3, 4, 5}, result[3];
    spart_array v = {values, {1, {5}}};
    assert_int_equal(spart_regrid_from_weights(f->context, device, &v, 0, NULL, 0, NULL, result, 3),
                     SPART_ERROR_INVALID_ARGUMENT);
    /* the entries' pointers are device memory; the counts host values */
    int64_t count = 0;
    const int64_t *ii = NULL;
    assert_int_equal(spart_weights_element(device, 0, &count, &ii, NULL, NULL), SPART_OK);
    assert_int_equal(count, 6);
    struct cudaPointerAttributes attributes;
    check_cuda(cudaPointerGetAttributes(&attributes, ii), "cudaPointerGetAttributes");
    assert_int_equal(attributes.type, cudaMemoryTypeDevice);
    size_t bytes = 0;
    assert_int_equal(
        spart_weights_build_device_workspace_size(f->context, 1, &in, &out, NULL, &bytes),
        SPART_OK);
    assert_true(bytes > 0);
    spart_weights_free(device);
}

int main(void)
{
    const int skip = cuda_tests_exit_code();
    if (skip >= 0) {
        return skip;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multilinear_1d),
        cmocka_unit_test(test_multilinear_2d_and_3d),
        cmocka_unit_test(test_multilinear_elements_and_curvilinear),
        cmocka_unit_test(test_conservative_1d),
        cmocka_unit_test(test_conservative_2d),
        cmocka_unit_test(test_instrument_shaped_operator),
        cmocka_unit_test(test_device_weights_refused_on_the_host),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
