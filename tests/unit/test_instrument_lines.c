/*
 * tests/unit/test_instrument_lines.c: an ideal instrument of several
 * spectral lines (spart/instrument.h, params.lines): one line given as a
 * line is the one-line instrument bit for bit; two lines image as the sum
 * of two one-line instruments (the second with its area times the line's
 * intensity scale) and backproject as they do times the line's share of
 * the bins; bad lines are refused naming the line and the field.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart/instrument.h"
#include "test_util.h"

enum { NUM_CHANNEL = 2, NUM_CELLS = 6, NUM_PIXELS = 24, BINS_A = 3, BINS_B = 2 };

/* A small instrument of 2 channels (0 and 30 degrees), a 6 x 6 scene over
 * +-3" at 1"/pixel and a 24 x 24 sensor, dispersion 0.01 A/pixel about
 * 171 A; line A: 3 bins from 170.97 A, line B: 2 bins from 171.05 A
 * (5 pixels to the side of A), scale 2.5. */
typedef struct lines_instrument {
    double angle[NUM_CHANNEL];
    double wavelength_a[BINS_A + 1];
    double wavelength_b[BINS_B + 1];
    double scene[NUM_CELLS + 1];
    double sensor[NUM_PIXELS + 1];
    spart_instrument_line lines[2];
    spart_instrument_params params;
} lines_instrument;

static void lines_params(lines_instrument *s)
{
    s->angle[0] = 0.0;
    s->angle[1] = 30.0;
    for (int l = 0; l <= BINS_A; l++) {
        s->wavelength_a[l] = 170.97 + 0.02 * l;
    }
    for (int l = 0; l <= BINS_B; l++) {
        s->wavelength_b[l] = 171.05 + 0.02 * l;
    }
    for (int i = 0; i <= NUM_CELLS; i++) {
        s->scene[i] = -3.0 + i;
    }
    for (int i = 0; i <= NUM_PIXELS; i++) {
        s->sensor[i] = i;
    }
    spart_instrument_line a = {BINS_A, s->wavelength_a, 1.0};
    spart_instrument_line b = {BINS_B, s->wavelength_b, 2.5};
    s->lines[0] = a;
    s->lines[1] = b;
    spart_instrument_params *p = &s->params;
    spart_instrument_params_init(p);
    p->num_channel = NUM_CHANNEL;
    p->angle = s->angle;
    p->dispersion = 0.01;
    p->plate_scale = 1.0;
    p->wavelength_ref = 171.0;
    p->position_ref[0] = 8.0;
    p->position_ref[1] = 12.0;
    p->area_effective = 2.0;
    p->exposure_time = 10.0;
    p->quantum_yield = 1.5;
    p->num_scene_x = NUM_CELLS;
    p->scene_x = s->scene;
    p->num_scene_y = NUM_CELLS;
    p->scene_y = s->scene;
    p->num_sensor_x = NUM_PIXELS;
    p->sensor_x = s->sensor;
    p->num_sensor_y = NUM_PIXELS;
    p->sensor_y = s->sensor;
    p->num_line = 2;
    p->lines = s->lines;
}

/* The one-line form of line k: num_wavelength / wavelength, the area times
 * the line's scale. */
static void one_line_params(lines_instrument *s, int k)
{
    spart_instrument_params *p = &s->params;
    p->num_line = 0;
    p->lines = NULL;
    p->num_wavelength = s->lines[k].num_wavelength;
    p->wavelength = s->lines[k].wavelength;
    p->area_effective = 2.0 * s->lines[k].intensity_scale;
}

static spart_instrument *make(spart_context *context, const spart_instrument_params *params)
{
    spart_instrument *instrument = NULL;
    if (spart_instrument_create(context, params, &instrument) != SPART_OK) {
        fail_msg("spart_instrument_create: %s", spart_context_error(context));
    }
    return instrument;
}

static void fill_scene(double *scene, int64_t size, uint64_t seed)
{
    for (int64_t v = 0; v < size; v++) {
        scene[v] = 1.0 + next_uniform(&seed);
    }
}

static double largest_relative(const double *got, const double *expected, int64_t n)
{
    double scale = 0.0, largest = 0.0;
    for (int64_t k = 0; k < n; k++) {
        scale = fmax(scale, fabs(expected[k]));
    }
    for (int64_t k = 0; k < n; k++) {
        largest = fmax(largest, fabs(got[k] - expected[k]));
    }
    return scale > 0.0 ? largest / scale : largest;
}

static void sizes_count_the_bins_of_every_line(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    lines_instrument s;
    lines_params(&s);
    spart_instrument *instrument = make(context, &s.params);
    assert_int_equal(spart_instrument_num_line(instrument), 2);
    assert_int_equal(spart_instrument_num_wavelength(instrument), BINS_A + BINS_B);
    assert_int_equal(spart_instrument_scene_size(instrument),
                     (BINS_A + BINS_B) * NUM_CELLS * NUM_CELLS);
    spart_shape input = spart_regridder_shape_input(spart_instrument_forward(instrument));
    assert_int_equal(input.dims[1], BINS_A + BINS_B);
    spart_instrument_free(instrument);
    one_line_params(&s, 0);
    instrument = make(context, &s.params);
    assert_int_equal(spart_instrument_num_line(instrument), 1);
    assert_int_equal(spart_instrument_num_wavelength(instrument), BINS_A);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

/* The CSR arrays of two Regridders, entry for entry. */
static void assert_same_operator(const spart_regridder *a, const spart_regridder *b)
{
    assert_int_equal(spart_regridder_num_rows(a), spart_regridder_num_rows(b));
    assert_int_equal(spart_regridder_num_entries(a), spart_regridder_num_entries(b));
    const int64_t *row_a = NULL, *row_b = NULL;
    const int32_t *col_a = NULL, *col_b = NULL;
    const void *val_a = NULL, *val_b = NULL;
    assert_int_equal(spart_regridder_csr(a, &row_a, &col_a, NULL, &val_a), SPART_OK);
    assert_int_equal(spart_regridder_csr(b, &row_b, &col_b, NULL, &val_b), SPART_OK);
    int64_t rows = spart_regridder_num_rows(a), nnz = spart_regridder_num_entries(a);
    assert_memory_equal(row_a, row_b, (size_t)(rows + 1) * sizeof *row_a);
    assert_memory_equal(col_a, col_b, (size_t)nnz * sizeof *col_a);
    assert_memory_equal(val_a, val_b, (size_t)nnz * sizeof(double));
}

static void one_line_given_as_a_line_is_the_one_line_instrument_bit_for_bit(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    lines_instrument s;
    lines_params(&s);
    s.lines[0].intensity_scale = 1.0;
    s.params.num_line = 1;
    spart_instrument *as_line = make(context, &s.params);
    one_line_params(&s, 0);
    spart_instrument *plain = make(context, &s.params);
    assert_same_operator(spart_instrument_forward(as_line), spart_instrument_forward(plain));
    assert_same_operator(spart_instrument_backward(as_line), spart_instrument_backward(plain));
    assert_memory_equal(spart_instrument_photons_per_radiance(as_line),
                        spart_instrument_photons_per_radiance(plain),
                        (size_t)spart_instrument_scene_size(plain) * sizeof(double));
    spart_instrument_free(as_line);
    spart_instrument_free(plain);
    spart_context_free(context);
}

/* Two lines image as the sum of the one-line instruments (the second's
 * area times 2.5), and their photons per radiance are those instruments'
 * one after the other, bit for bit (the scale multiplies the area first). */
static void two_lines_image_as_the_sum_of_two_one_line_instruments(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    lines_instrument s;
    lines_params(&s);
    spart_instrument *both = make(context, &s.params);
    one_line_params(&s, 0);
    spart_instrument *a = make(context, &s.params);
    lines_params(&s);
    one_line_params(&s, 1);
    spart_instrument *b = make(context, &s.params);
    int64_t size_a = spart_instrument_scene_size(a), size_b = spart_instrument_scene_size(b);
    int64_t pixels = NUM_CHANNEL * spart_instrument_image_size(both);
    double *scene = malloc((size_t)(size_a + size_b) * sizeof *scene);
    double *images = malloc(4 * (size_t)pixels * sizeof *images);
    assert_non_null(scene);
    assert_non_null(images);
    double *images_a = images + pixels, *images_b = images + 2 * pixels, *sum = images + 3 * pixels;
    fill_scene(scene, size_a + size_b, 26);
    assert_int_equal(spart_instrument_image(context, both, scene, images, NULL), SPART_OK);
    assert_int_equal(spart_instrument_image(context, a, scene, images_a, NULL), SPART_OK);
    assert_int_equal(spart_instrument_image(context, b, scene + size_a, images_b, NULL), SPART_OK);
    double total_b = 0.0;
    for (int64_t p = 0; p < pixels; p++) {
        sum[p] = images_a[p] + images_b[p];
        total_b += images_b[p];
    }
    assert_true(total_b > 0.0); /* line B lands on the sensor */
    assert_true(largest_relative(images, sum, pixels) < 1e-14);
    const double *s_both = spart_instrument_photons_per_radiance(both);
    assert_memory_equal(s_both, spart_instrument_photons_per_radiance(a),
                        (size_t)size_a * sizeof(double));
    assert_memory_equal(s_both + size_a, spart_instrument_photons_per_radiance(b),
                        (size_t)size_b * sizeof(double));
    free(scene);
    free(images);
    spart_instrument_free(both);
    spart_instrument_free(a);
    spart_instrument_free(b);
    spart_context_free(context);
}

/* Line k's backprojection is the one-line instrument's times (bins of k) /
 * (bins of all lines): the image is spread over every bin of every line. */
static void each_line_backprojects_its_share_of_the_bins(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    lines_instrument s;
    lines_params(&s);
    spart_instrument *both = make(context, &s.params);
    spart_instrument *one[2];
    for (int k = 0; k < 2; k++) {
        lines_params(&s);
        one_line_params(&s, k);
        one[k] = make(context, &s.params);
    }
    int64_t pixels = NUM_CHANNEL * spart_instrument_image_size(both);
    int64_t plane = NUM_CELLS * NUM_CELLS;
    int64_t bins[2] = {BINS_A, BINS_B};
    double *images = malloc((size_t)pixels * sizeof *images);
    double *scenes = malloc((size_t)(NUM_CHANNEL * (BINS_A + BINS_B) * plane) * sizeof *scenes);
    double *line = malloc((size_t)(NUM_CHANNEL * BINS_A * plane) * sizeof *line);
    assert_non_null(images);
    assert_non_null(scenes);
    assert_non_null(line);
    fill_scene(images, pixels, 7);
    assert_int_equal(spart_instrument_backproject(context, both, images, scenes), SPART_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(spart_instrument_backproject(context, one[k], images, line), SPART_OK);
        double share = (double)bins[k] / (double)(BINS_A + BINS_B);
        for (int64_t c = 0; c < NUM_CHANNEL; c++) {
            double *expected = line + c * bins[k] * plane;
            for (int64_t v = 0; v < bins[k] * plane; v++) {
                expected[v] *= share;
            }
            const double *got = scenes + (c * (BINS_A + BINS_B) + (k == 0 ? 0 : BINS_A)) * plane;
            assert_true(largest_relative(got, expected, bins[k] * plane) < 1e-14);
        }
    }
    free(images);
    free(scenes);
    free(line);
    spart_instrument_free(both);
    spart_instrument_free(one[0]);
    spart_instrument_free(one[1]);
    spart_context_free(context);
}

/* params.memory_budget: the planes' weights built one at a time onto the
 * pixels each reaches and streamed into the assembly give the in-memory
 * operators bit for bit, for two lines, float64 and float32, a rotated
 * channel, and sensors of whole pixels (each plane onto the pixels it
 * reaches), of pixels of 0.37 from -1.1 and of decreasing vertices (each
 * plane onto the whole sensor: part of such a sensor would round
 * differently). */
static void streamed_operators_are_the_in_memory_ones_bit_for_bit(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    for (int type = 0; type < 4; type++) {
        lines_instrument s;
        lines_params(&s);
        s.params.value_type = type == 1 ? SPART_FLOAT32 : SPART_FLOAT64;
        for (int i = 0; i <= NUM_PIXELS && type >= 2; i++) {
            s.sensor[i] = type == 2 ? -1.1 + 0.37 * i : (double)(NUM_PIXELS - i);
        }
        if (type == 2) {
            s.params.plate_scale = 3.0; /* the scene on the small pixels */
            s.params.position_ref[0] = 3.3;
            s.params.position_ref[1] = 3.5;
        }
        spart_instrument *in_memory = make(context, &s.params);
        s.params.memory_budget = (size_t)64 << 20;
        spart_instrument *streamed = make(context, &s.params);
        const spart_regridder *a = spart_instrument_forward(in_memory);
        const spart_regridder *b = spart_instrument_forward(streamed);
        assert_int_equal(spart_regridder_group_size(a), spart_regridder_group_size(b));
        if (type != 1) {
            assert_true(spart_regridder_num_entries(a) > 100);
            assert_same_operator(a, b);
            assert_same_operator(spart_instrument_backward(in_memory),
                                 spart_instrument_backward(streamed));
        } else { /* float32 values: compare the bytes of the 4-byte values */
            const void *va = NULL, *vb = NULL;
            assert_int_equal(spart_regridder_csr(a, NULL, NULL, NULL, &va), SPART_OK);
            assert_int_equal(spart_regridder_csr(b, NULL, NULL, NULL, &vb), SPART_OK);
            assert_memory_equal(va, vb, (size_t)spart_regridder_num_entries(a) * 4);
        }
        spart_instrument_free(in_memory);
        spart_instrument_free(streamed);
    }
    spart_context_free(context);
}

/* A channel of more bins than a streamed block holds (16 planes a block):
 * blocks of 16 and of 2 bins give the in-memory operators too. */
static void streamed_blocks_of_part_of_a_channel_are_the_in_memory_ones(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    lines_instrument s;
    lines_params(&s);
    double edges[19];
    for (int l = 0; l <= 18; l++) {
        edges[l] = 170.91 + 0.01 * l;
    }
    s.params.num_line = 0;
    s.params.lines = NULL;
    s.params.num_wavelength = 18;
    s.params.wavelength = edges;
    spart_instrument *in_memory = make(context, &s.params);
    s.params.memory_budget = (size_t)64 << 20;
    spart_instrument *streamed = make(context, &s.params);
    assert_same_operator(spart_instrument_forward(in_memory), spart_instrument_forward(streamed));
    assert_same_operator(spart_instrument_backward(in_memory), spart_instrument_backward(streamed));
    spart_instrument_free(in_memory);
    spart_instrument_free(streamed);
    spart_context_free(context);
}

static void expect_refused(spart_instrument_params *params, spart_status status, const char *word)
{
    spart_context *context = context_or_fail();
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, params, &instrument), status);
    assert_null(instrument);
    if (strstr(spart_context_error(context), word) == NULL) {
        fail_msg("'%s' does not name '%s'", spart_context_error(context), word);
    }
    spart_context_free(context);
}

static void bad_lines_are_refused_naming_the_line(void **state)
{
    (void)state;
    lines_instrument s;
    lines_params(&s);
    s.params.num_line = -1;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "num_line = -1");
    lines_params(&s);
    s.params.num_wavelength = 3;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "num_wavelength (3) must be 0");
    lines_params(&s);
    s.params.wavelength = s.wavelength_a;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "wavelength NULL");
    lines_params(&s);
    s.params.lines = NULL;
    expect_refused(&s.params, SPART_ERROR_NULL_POINTER, "lines is NULL");
    lines_params(&s);
    s.lines[1].intensity_scale = 0.0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "lines[1].intensity_scale");
    lines_params(&s);
    s.lines[1].intensity_scale = NAN;
    expect_refused(&s.params, SPART_ERROR_NOT_FINITE, "lines[1].intensity_scale");
    lines_params(&s);
    s.wavelength_b[2] = s.wavelength_b[1];
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "lines[1].wavelength");
    lines_params(&s);
    s.lines[0].num_wavelength = 0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "lines[0].num_wavelength = 0");
    lines_params(&s);
    s.lines[1].wavelength = NULL;
    expect_refused(&s.params, SPART_ERROR_NULL_POINTER, "lines[1].wavelength is NULL");
    lines_params(&s);
    s.wavelength_a[0] = -1.0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "lines[0].wavelength[0]");
    lines_params(&s);
    s.params.memory_budget = 1000;
    s.params.keep_weights = 1;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "keep_weights = 1");
    lines_params(&s);
    s.params.memory_budget = 1000; /* too small for the operators: the stream says so */
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "budget");
    /* the one-line form keeps its sentences */
    lines_params(&s);
    one_line_params(&s, 0);
    s.params.num_wavelength = 0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "num_wavelength = 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_count_the_bins_of_every_line),
        cmocka_unit_test(one_line_given_as_a_line_is_the_one_line_instrument_bit_for_bit),
        cmocka_unit_test(two_lines_image_as_the_sum_of_two_one_line_instruments),
        cmocka_unit_test(each_line_backprojects_its_share_of_the_bins),
        cmocka_unit_test(streamed_operators_are_the_in_memory_ones_bit_for_bit),
        cmocka_unit_test(streamed_blocks_of_part_of_a_channel_are_the_in_memory_ones),
        cmocka_unit_test(bad_lines_are_refused_naming_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
