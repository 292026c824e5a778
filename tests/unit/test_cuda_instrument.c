/*
 * tests/unit/test_cuda_instrument.c: the ideal instrument built on a CUDA
 * device (params.on_device = 1; issue 30) gives the host build's operators
 * bit for bit: the CSR arrays, plan and long-row tables of both
 * Regridders, for the ctis tutorial's geometry at a smaller size
 * (test_small_instrument.h), a two-line instrument, float64 and float32,
 * in memory and streamed within a device memory budget
 * (blocks_on_device), with a composed PSF and with a folded one; and a
 * MART inversion on the device gives the same bits from either build.
 * Also the device rewrites of weights on their own: spart_weights_scale
 * and spart_weights_transpose_conservative of device weights equal the
 * host's entry for entry. And the device planes builder on its own
 * (spart_instrument_planes_*): any cut into blocks gives the same entries.
 *
 * Exit code 77 (skipped) when no CUDA device is visible, unless
 * SPART_REQUIRE_GPU=1, which makes that a failure.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "spart/instrument.h"
#include "test_cuda_util.h"
#include "test_small_instrument.h"

enum { LINE_CHANNELS = 2, LINE_CELLS = 6, LINE_PIXELS = 24 };

/* Two lines (3 and 2 bins, the second scaled by 2.5) on a 24 x 24 sensor,
 * two channels (0 and 30 degrees), as test_instrument_lines.c has them. */
typedef struct lines_instrument {
    double angle[LINE_CHANNELS];
    double wavelength_a[4];
    double wavelength_b[3];
    double scene[LINE_CELLS + 1];
    double sensor[LINE_PIXELS + 1];
    spart_instrument_line lines[2];
    spart_instrument_params params;
} lines_instrument;

static void lines_params(lines_instrument *s)
{
    s->angle[0] = 0.0;
    s->angle[1] = 30.0;
    for (int l = 0; l <= 3; l++) {
        s->wavelength_a[l] = 170.97 + 0.02 * l;
    }
    for (int l = 0; l <= 2; l++) {
        s->wavelength_b[l] = 171.05 + 0.02 * l;
    }
    for (int i = 0; i <= LINE_CELLS; i++) {
        s->scene[i] = -3.0 + i;
    }
    for (int i = 0; i <= LINE_PIXELS; i++) {
        s->sensor[i] = i;
    }
    spart_instrument_line a = {3, s->wavelength_a, 1.0};
    spart_instrument_line b = {2, s->wavelength_b, 2.5};
    s->lines[0] = a;
    s->lines[1] = b;
    spart_instrument_params *p = &s->params;
    spart_instrument_params_init(p);
    p->num_channel = LINE_CHANNELS;
    p->angle = s->angle;
    p->dispersion = 0.01;
    p->plate_scale = 1.0;
    p->wavelength_ref = 171.0;
    p->position_ref[0] = 8.0;
    p->position_ref[1] = 12.0;
    p->area_effective = 2.0;
    p->exposure_time = 10.0;
    p->quantum_yield = 1.5;
    p->num_scene_x = LINE_CELLS;
    p->scene_x = s->scene;
    p->num_scene_y = LINE_CELLS;
    p->scene_y = s->scene;
    p->num_sensor_x = LINE_PIXELS;
    p->sensor_x = s->sensor;
    p->num_sensor_y = LINE_PIXELS;
    p->sensor_y = s->sensor;
    p->num_line = 2;
    p->lines = s->lines;
}

static spart_instrument *make(spart_context *context, const spart_instrument_params *params)
{
    spart_instrument *instrument = NULL;
    if (spart_instrument_create(context, params, &instrument) != SPART_OK) {
        fail_msg("spart_instrument_create (on_device %d, budget %zu): %s", params->on_device,
                 params->memory_budget, spart_context_error(context));
    }
    return instrument;
}

/* The instrument of `params` built on the host and on the device: the same
 * operators (the device ones' arrays copied back and memcmp'd), products
 * included. */
static void assert_device_build_is_the_host_build(spart_context *context,
                                                  spart_instrument_params *params, const char *what)
{
    params->on_device = 0;
    spart_instrument *host = make(context, params);
    params->on_device = 1;
    spart_instrument *device = make(context, params);
    params->on_device = 0;
    const spart_regridder *operators[2][2] = {
        {spart_instrument_forward(host), spart_instrument_forward(device)},
        {spart_instrument_backward(host), spart_instrument_backward(device)}};
    for (int d = 0; d < 2; d++) {
        char name[160];
        snprintf(name, sizeof name, "%s, %s", what, d == 0 ? "forward" : "backward");
        assert_int_equal(spart_regridder_cuda_device(operators[d][0]), -1);
        assert_true(spart_regridder_num_entries(operators[d][0]) > 100);
        (void)assert_same_csr(context, operators[d][0], operators[d][1], name);
        if (spart_regridder_value_type(operators[d][0]) == SPART_FLOAT64) {
            assert_same_products(context, operators[d][0], operators[d][1], 5 + (uint64_t)d, name);
        }
    }
    spart_instrument_free(host);
    spart_instrument_free(device);
}

static void tutorial_geometry_equals_the_host_build(void **state)
{
    fixture *f = *state;
    small_instrument p;
    make_small_instrument(f->context, &p);
    assert_device_build_is_the_host_build(f->context, &p.params, "small tutorial, float64");
    p.params.value_type = SPART_FLOAT32;
    assert_device_build_is_the_host_build(f->context, &p.params, "small tutorial, float32");
    free(p.scene);
}

static void two_lines_equal_the_host_build(void **state)
{
    fixture *f = *state;
    lines_instrument s;
    lines_params(&s);
    assert_device_build_is_the_host_build(f->context, &s.params, "two lines");
    /* a sensor of pixels of 0.37 from -1.1 (not whole numbers) */
    for (int i = 0; i <= LINE_PIXELS; i++) {
        s.sensor[i] = -1.1 + 0.37 * i;
    }
    s.params.plate_scale = 3.0;
    s.params.position_ref[0] = 3.3;
    s.params.position_ref[1] = 3.5;
    assert_device_build_is_the_host_build(f->context, &s.params, "two lines, 0.37 pixels");
}

/* memory_budget > 0 on the device: the planes built on the device and
 * streamed where they lie give the host's in-memory operators (and its
 * streamed ones, which are those). */
static void streamed_on_the_device_equals_the_host_build(void **state)
{
    fixture *f = *state;
    lines_instrument s;
    lines_params(&s);
    spart_instrument *host = make(f->context, &s.params);
    s.params.on_device = 1;
    s.params.memory_budget = (size_t)256 << 20;
    spart_instrument *device = make(f->context, &s.params);
    (void)assert_same_csr(f->context, spart_instrument_forward(host),
                          spart_instrument_forward(device), "streamed forward");
    (void)assert_same_csr(f->context, spart_instrument_backward(host),
                          spart_instrument_backward(device), "streamed backward");
    spart_instrument_free(device);
    spart_instrument_free(host);

    small_instrument p;
    make_small_instrument(f->context, &p);
    host = make(f->context, &p.params);
    p.params.on_device = 1;
    p.params.memory_budget = (size_t)256 << 20;
    device = make(f->context, &p.params);
    (void)assert_same_csr(f->context, spart_instrument_forward(host),
                          spart_instrument_forward(device), "small tutorial streamed forward");
    (void)assert_same_csr(f->context, spart_instrument_backward(host),
                          spart_instrument_backward(device), "small tutorial streamed backward");
    spart_instrument_free(device);
    spart_instrument_free(host);
    free(p.scene);
}

/* A PSF of 3 x 5 per channel: composed by FFT (the device instrument's PSF
 * on the device) and folded into the weights on the device. */
static void psf_composed_and_folded_equal_the_host_build(void **state)
{
    fixture *f = *state;
    small_instrument p;
    make_small_instrument(f->context, &p);
    double psf[4 * 3 * 5];
    for (int k = 0; k < 4 * 15; k++) {
        psf[k] = 1.0 / (1.0 + (double)((k * 7) % 15));
    }
    p.params.psf = psf;
    p.params.psf_size[0] = 3;
    p.params.psf_size[1] = 5;
    p.params.psf_mode = SPART_PSF_FFT;
    p.params.on_device = 1;
    spart_instrument *device = make(f->context, &p.params);
    assert_int_equal(spart_psf_cuda_device(spart_instrument_psf(device)), 0);
    spart_instrument_free(device);
    p.params.psf_mode = SPART_PSF_FOLDED;
    assert_device_build_is_the_host_build(f->context, &p.params, "small tutorial, folded PSF");
    free(p.scene);
}

typedef struct run {
    int64_t iterations;
    double *solution;
} run;

/* MART (ctis's rule, 12 iterations at most) on the device with the
 * instrument's operators, the observations copied there. */
static run solve_on_device(spart_context *context, const spart_instrument *instrument,
                           const double *observed, int64_t scene_size)
{
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    spart_regridder *forward = NULL, *backward = NULL;
    if (spart_regridder_cuda_device(spart_instrument_forward(instrument)) < 0) {
        assert_int_equal(
            spart_regridder_to_device(context, spart_instrument_forward(instrument), &forward),
            SPART_OK);
        assert_int_equal(
            spart_regridder_to_device(context, spart_instrument_backward(instrument), &backward),
            SPART_OK);
        memset(&pair, 0, sizeof pair);
        assert_int_equal(spart_instrument_mart_operators(context, instrument, &pair, &operators),
                         SPART_OK);
        pair.forward = forward;
        pair.backward = backward;
        assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators),
                         SPART_OK);
    } else {
        assert_int_equal(spart_instrument_mart_operators(context, instrument, &pair, &operators),
                         SPART_OK);
    }
    assert_int_equal(operators.on_device, 1);
    double *d_images = doubles_to_device(context, observed, 4 * operators.image_size);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.max_iterations = 12;
    spart_mart_result *result = NULL;
    if (spart_mart_solve(context, &operators, d_images, &options, &result) != SPART_OK) {
        fail_msg("spart_mart_solve: %s", spart_context_error(context));
    }
    run out;
    out.iterations = spart_mart_result_num_iterations(result);
    out.solution = malloc((size_t)scene_size * sizeof(double));
    memcpy(out.solution, spart_mart_result_solution(result), (size_t)scene_size * sizeof(double));
    spart_mart_result_free(result);
    spart_device_free(context, d_images);
    spart_regridder_free(forward);
    spart_regridder_free(backward);
    return out;
}

static void inversion_gives_the_same_bits(void **state)
{
    fixture *f = *state;
    small_instrument p;
    make_small_instrument(f->context, &p);
    spart_instrument *host = make(f->context, &p.params);
    int64_t pixels = 4 * spart_instrument_image_size(host);
    double *observed = malloc((size_t)pixels * sizeof(double));
    assert_int_equal(spart_instrument_observe(f->context, host, p.scene, 7, observed, NULL),
                     SPART_OK);
    p.params.on_device = 1;
    spart_instrument *device = make(f->context, &p.params);
    run a = solve_on_device(f->context, host, observed, p.scene_size);
    run b = solve_on_device(f->context, device, observed, p.scene_size);
    assert_true(a.iterations > 1);
    assert_int_equal(a.iterations, b.iterations);
    assert_memory_equal(a.solution, b.solution, (size_t)p.scene_size * sizeof(double));
    /* a device instrument's images are device memory: observe refuses */
    assert_int_equal(spart_instrument_observe(f->context, device, p.scene, 7, observed, NULL),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "on_device"));
    free(a.solution);
    free(b.solution);
    free(observed);
    spart_instrument_free(host);
    spart_instrument_free(device);
    free(p.scene);
}

/* keep_weights on the device keeps a host copy of the geometric weights,
 * the host build's entry for entry. */
static void kept_weights_are_the_host_ones(void **state)
{
    fixture *f = *state;
    lines_instrument s;
    lines_params(&s);
    s.params.keep_weights = 1;
    spart_instrument *host = make(f->context, &s.params);
    s.params.on_device = 1;
    spart_instrument *device = make(f->context, &s.params);
    const spart_weights *a = spart_instrument_weights(host);
    const spart_weights *b = spart_instrument_weights(device);
    assert_int_equal(spart_weights_cuda_device(b), -1);
    const int64_t *oa, *ia, *ja, *ob, *ib, *jb;
    const double *va, *vb;
    assert_int_equal(spart_weights_arrays(a, &oa, &ia, &ja, &va), SPART_OK);
    assert_int_equal(spart_weights_arrays(b, &ob, &ib, &jb, &vb), SPART_OK);
    int64_t elements = LINE_CHANNELS * 5; /* (channel, bin) planes: 3 + 2 bins */
    assert_memory_equal(oa, ob, (size_t)(elements + 1) * sizeof(int64_t));
    size_t n = (size_t)oa[elements];
    assert_memory_equal(ia, ib, n * sizeof(int64_t));
    assert_memory_equal(ja, jb, n * sizeof(int64_t));
    assert_memory_equal(va, vb, n * sizeof(double));
    spart_instrument_free(host);
    spart_instrument_free(device);
}

/* The device rewrites on their own: weights built on the device, scaled by
 * factors of both sides (one broadcast along an orthogonal axis) and
 * conservatively transposed, equal the host's entry for entry. */
static void device_scale_and_transpose_equal_the_host(void **state)
{
    fixture *f = *state;
    enum { E = 3, N = 9, M = 7 };
    double xi[E][N + 1][N + 1], yi[E][N + 1][N + 1], xo[M + 1][M + 1], yo[M + 1][M + 1];
    for (int e = 0; e < E; e++) {
        for (int i = 0; i <= N; i++) {
            for (int j = 0; j <= N; j++) {
                xi[e][i][j] = 0.3 + 0.61 * i + 0.05 * j + 0.1 * e;
                yi[e][i][j] = 0.2 + 0.58 * j - 0.04 * i + 0.07 * e;
            }
        }
    }
    for (int i = 0; i <= M; i++) {
        for (int j = 0; j <= M; j++) {
            xo[i][j] = i;
            yo[i][j] = j;
        }
    }
    spart_array in[2] = {{&xi[0][0][0], {3, {E, N + 1, N + 1}}},
                         {&yi[0][0][0], {3, {E, N + 1, N + 1}}}};
    spart_array out[2] = {{&xo[0][0], {3, {1, M + 1, M + 1}}}, {&yo[0][0], {3, {1, M + 1, M + 1}}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    options.num_axis_input = 2;
    options.axis_input[0] = -2;
    options.axis_input[1] = -1;
    options.num_axis_output = 2;
    options.axis_output[0] = -2;
    options.axis_output[1] = -1;
    spart_weights *w[2] = {NULL, NULL}, *t[2] = {NULL, NULL};
    assert_int_equal(spart_weights_build(f->context, 2, in, out, &options, &w[0]), SPART_OK);
    assert_int_equal(spart_weights_build_device(f->context, 2, in, out, &options, &w[1]), SPART_OK);
    double fi[E][N][N], fo[M][M];
    for (int k = 0; k < E * N * N; k++) {
        (&fi[0][0][0])[k] = 0.5 + (double)((k * 37) % 101) / 7.0;
    }
    for (int k = 0; k < M * M; k++) {
        (&fo[0][0])[k] = 1.0 / (1.0 + k);
    }
    spart_array factor_input = {&fi[0][0][0], {3, {E, N, N}}};
    spart_array factor_output = {&fo[0][0], {3, {1, M, M}}};
    for (int d = 0; d < 2; d++) {
        assert_int_equal(
            spart_weights_transpose_conservative(f->context, w[d], 2, in, out, &options, &t[d]),
            SPART_OK);
        assert_int_equal(spart_weights_scale(f->context, w[d], &factor_input, &factor_output),
                         SPART_OK);
        assert_int_equal(spart_weights_scale(f->context, t[d], &factor_output, NULL), SPART_OK);
    }
    assert_int_equal(spart_weights_cuda_device(t[1]), 0);
    for (int k = 0; k < 2; k++) {
        spart_weights *host = k == 0 ? w[0] : t[0];
        spart_weights *back = NULL;
        assert_int_equal(spart_weights_to_host(f->context, k == 0 ? w[1] : t[1], &back), SPART_OK);
        const int64_t *oa, *ia, *ja, *ob, *ib, *jb;
        const double *va, *vb;
        assert_int_equal(spart_weights_arrays(host, &oa, &ia, &ja, &va), SPART_OK);
        assert_int_equal(spart_weights_arrays(back, &ob, &ib, &jb, &vb), SPART_OK);
        assert_memory_equal(oa, ob, (E + 1) * sizeof(int64_t));
        size_t n = (size_t)oa[E];
        assert_true(n > 100);
        assert_memory_equal(ia, ib, n * sizeof(int64_t));
        assert_memory_equal(ja, jb, n * sizeof(int64_t));
        assert_memory_equal(va, vb, n * sizeof(double));
        spart_weights_free(back);
    }
    for (int d = 0; d < 2; d++) {
        spart_weights_free(w[d]);
        spart_weights_free(t[d]);
    }
}

/* One block's arrays copied to the host. */
typedef struct host_block {
    int64_t offsets[81];
    int64_t *input, *output;
    double *values;
    int64_t n;
} host_block;

static void fetch_block(spart_context *context, const spart_weights_block *b, host_block *h)
{
    memcpy(h->offsets, b->offsets, ((size_t)b->num_elements + 1) * sizeof(int64_t));
    h->n = b->offsets[b->num_elements];
    h->input = malloc((size_t)(h->n + 1) * sizeof(int64_t));
    h->output = malloc((size_t)(h->n + 1) * sizeof(int64_t));
    h->values = malloc((size_t)(h->n + 1) * sizeof(double));
    size_t bytes = (size_t)h->n * 8;
    assert_int_equal(spart_device_copy_to_host(context, h->input, b->indices_input, bytes),
                     SPART_OK);
    assert_int_equal(spart_device_copy_to_host(context, h->output, b->indices_output, bytes),
                     SPART_OK);
    assert_int_equal(spart_device_copy_to_host(context, h->values, b->values, bytes), SPART_OK);
}

static void free_block(host_block *h)
{
    free(h->input);
    free(h->output);
    free(h->values);
}

/* The device planes builder cut into any blocks gives the entries of one
 * block of every plane (which the instrument tests hold to the host
 * build), in both directions, whatever was asked in between; its counts
 * are the blocks' offsets; planes outside the instrument are refused. */
static void planes_in_any_blocks_give_the_same_entries(void **state)
{
    fixture *f = *state;
    small_instrument p;
    make_small_instrument(f->context, &p);
    enum { PLANES = 80 };
    double low[20], high[20];
    for (int l = 0; l < 20; l++) {
        low[l] = p.wavelength[l];
        high[l] = p.wavelength[l + 1];
    }
    spart_instrument_planes *planes = NULL;
    assert_int_equal(
        spart_instrument_planes_create(f->context, &p.params, 20, low, high, p.scene, &planes),
        SPART_OK);
    int64_t entries[PLANES];
    assert_int_equal(spart_instrument_planes_count(f->context, planes, 0, 50, entries), SPART_OK);
    assert_int_equal(spart_instrument_planes_count(f->context, planes, 50, 30, entries + 50),
                     SPART_OK);
    for (int backward = 0; backward < 2; backward++) {
        spart_weights_block block;
        assert_int_equal(
            spart_instrument_planes_block(f->context, planes, backward, 0, PLANES, &block),
            SPART_OK);
        host_block whole;
        fetch_block(f->context, &block, &whole);
        assert_true(whole.n > 1000);
        for (int k = 0; k < PLANES; k++) {
            assert_int_equal(whole.offsets[k + 1] - whole.offsets[k], entries[k]);
        }
        const int cuts[4] = {0, 7, 30, PLANES};
        for (int c = 0; c < 3; c++) {
            int64_t count = 0;
            /* something else asked in between */
            assert_int_equal(spart_instrument_planes_count(f->context, planes, 79, 1, &count),
                             SPART_OK);
            assert_int_equal(spart_instrument_planes_block(f->context, planes, backward, cuts[c],
                                                           cuts[c + 1] - cuts[c], &block),
                             SPART_OK);
            assert_int_equal(block.first_element, cuts[c]);
            host_block part;
            fetch_block(f->context, &block, &part);
            int64_t at = whole.offsets[cuts[c]];
            assert_int_equal(part.n, whole.offsets[cuts[c + 1]] - at);
            assert_memory_equal(part.input, whole.input + at, (size_t)part.n * 8);
            assert_memory_equal(part.output, whole.output + at, (size_t)part.n * 8);
            assert_memory_equal(part.values, whole.values + at, (size_t)part.n * 8);
            free_block(&part);
        }
        free_block(&whole);
    }
    spart_weights_block block;
    assert_int_equal(spart_instrument_planes_block(f->context, planes, 0, 79, 2, &block),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(f->context), "has 80 planes"));
    assert_int_equal(spart_instrument_planes_block(f->context, planes, 2, 0, 1, &block),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_instrument_planes_free(planes);
    free(p.scene);
}

/* An argument is a cmocka test filter (the sanitizers run a few tests:
 * "device_*", "two_*"). */
int main(int argc, char **argv)
{
    if (argc > 1) {
        cmocka_set_test_filter(argv[1]);
    }
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_scale_and_transpose_equal_the_host),
        cmocka_unit_test(tutorial_geometry_equals_the_host_build),
        cmocka_unit_test(two_lines_equal_the_host_build),
        cmocka_unit_test(streamed_on_the_device_equals_the_host_build),
        cmocka_unit_test(kept_weights_are_the_host_ones),
        cmocka_unit_test(inversion_gives_the_same_bits),
        cmocka_unit_test(psf_composed_and_folded_equal_the_host_build),
        cmocka_unit_test(planes_in_any_blocks_give_the_same_entries),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
