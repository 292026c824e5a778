/*
 * tests/unit/test_instrument.c: the ideal CTIS instrument: its operators
 * conserve photons, its seeded observations repeat, and bad descriptions
 * are refused with a sentence naming the field.
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
#include "test_tiny_instrument.h"
#include "test_util.h"

static void sizes_follow_the_grids(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &instrument), SPART_OK);
    assert_int_equal(spart_instrument_num_channel(instrument), 2);
    assert_int_equal(spart_instrument_scene_size(instrument), 3 * 6 * 6);
    assert_int_equal(spart_instrument_image_size(instrument), 16 * 16);
    assert_int_equal(spart_regridder_num_rows(spart_instrument_forward(instrument)), 2 * 256);
    assert_int_equal(spart_regridder_num_columns(spart_instrument_forward(instrument)), 108);
    assert_int_equal(spart_regridder_num_rows(spart_instrument_backward(instrument)), 2 * 108);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static void photons_per_radiance_is_area_time_volume_over_photon_energy(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &instrument), SPART_OK);
    const double *photons = spart_instrument_photons_per_radiance(instrument);
    double centre = 170.98;
    double energy = 6.62607015e-27 * 2.99792458e18 / centre;
    double expected = 2.0 * 10.0 * (0.02 * 1.0) / energy;
    assert_true(fabs(photons[0] - expected) / expected < 1e-12);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static void a_scene_inside_the_sensor_keeps_every_photon(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &instrument), SPART_OK);
    int64_t n = spart_instrument_scene_size(instrument);
    double *scene = calloc((size_t)n, sizeof(double));
    double *images = calloc(2 * 256, sizeof(double));
    double *widths = calloc(2 * 256, sizeof(double));
    const double *photons = spart_instrument_photons_per_radiance(instrument);
    double expected = 0.0;
    for (int64_t v = 0; v < n; v++) {
        scene[v] = 1.0 + (double)(v % 7);
        expected += photons[v] * scene[v] * 1.5;
    }
    assert_int_equal(spart_instrument_image(context, instrument, scene, images, widths), SPART_OK);
    for (int c = 0; c < 2; c++) {
        double total = 0.0;
        for (int p = 0; p < 256; p++) {
            total += images[c * 256 + p];
            /* Poisson in photons times the quantum yield, no read noise */
            assert_true(fabs(widths[c * 256 + p] - sqrt(1.5 * images[c * 256 + p])) <= 1e-12);
        }
        assert_true(fabs(total - expected) / expected < 1e-13);
    }
    free(scene);
    free(images);
    free(widths);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static void one_voxel_backprojects_onto_its_own_footprint(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &instrument), SPART_OK);
    int64_t n = spart_instrument_scene_size(instrument);
    double *scene = calloc((size_t)n, sizeof(double));
    double *images = calloc(2 * 256, sizeof(double));
    double *back = calloc((size_t)(2 * n), sizeof(double));
    int64_t voxel = (1 * 6 + 2) * 6 + 3;
    scene[voxel] = 5.0;
    assert_int_equal(spart_instrument_image(context, instrument, scene, images, NULL), SPART_OK);
    assert_int_equal(spart_instrument_backproject(context, instrument, images, back), SPART_OK);
    /* The footprint is one pixel (the cells are pixel-sized and aligned
     * in x up to the dispersion shift): the voxel's own backprojection is
     * positive, and voxels whose footprint misses it get 0. */
    assert_true(back[voxel] > 0.0);
    assert_true(back[n + voxel] > 0.0);
    assert_true(back[0] == 0.0);
    free(scene);
    free(images);
    free(back);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static void observations_repeat_for_a_seed(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    s.params.read_noise = 2.0;
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &instrument), SPART_OK);
    int64_t n = spart_instrument_scene_size(instrument);
    double *scene = calloc((size_t)n, sizeof(double));
    for (int64_t v = 0; v < n; v++) {
        scene[v] = 1e-8;
    }
    double a[512], b[512], c[512], widths[512];
    assert_int_equal(spart_instrument_observe(context, instrument, scene, 42, a, widths), SPART_OK);
    assert_int_equal(spart_instrument_observe(context, instrument, scene, 42, b, NULL), SPART_OK);
    assert_int_equal(spart_instrument_observe(context, instrument, scene, 43, c, NULL), SPART_OK);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    /* read noise enters every width */
    for (int p = 0; p < 512; p++) {
        assert_true(widths[p] >= 2.0);
    }
    free(scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static void mart_recovers_a_noise_free_scene_closely(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &instrument), SPART_OK);
    int64_t n = spart_instrument_scene_size(instrument);
    double *scene = calloc((size_t)n, sizeof(double));
    double images[512];
    for (int64_t v = 0; v < n; v++) {
        scene[v] = 1e-6 * (1.0 + (double)(v % 5));
    }
    assert_int_equal(spart_instrument_image(context, instrument, scene, images, NULL), SPART_OK);
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    assert_int_equal(spart_instrument_mart_operators(context, instrument, &pair, &operators),
                     SPART_OK);
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.threshold = 1e-9;
    options.max_iterations = 200;
    spart_mart_result *result = NULL;
    assert_int_equal(spart_mart_solve(context, &operators, images, &options, &result), SPART_OK);
    int64_t iterations = spart_mart_result_num_iterations(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    /* the merit falls far below its start */
    assert_true(chi2[2 * (iterations - 1)] < 1e-3 * chi2[0]);
    spart_mart_result_free(result);
    free(scene);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

/* Images and backprojections of the small instrument with `psf` (NULL:
 * none) applied in `mode`, into images (512) and back (2 x 108). */
static void image_and_back(const double *psf, int64_t kx, int64_t ky, spart_psf_mode mode,
                           double *images, double *back)
{
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    s.params.psf = psf;
    s.params.psf_size[0] = kx;
    s.params.psf_size[1] = ky;
    s.params.psf_mode = mode;
    spart_instrument *instrument = NULL;
    spart_status created = spart_instrument_create(context, &s.params, &instrument);
    if (created != SPART_OK) {
        fail_msg("%s", spart_context_error(context));
    }
    double scene[108];
    for (int v = 0; v < 108; v++) {
        scene[v] = 1.0 + (double)((v * 7) % 11);
    }
    assert_int_equal(spart_instrument_image(context, instrument, scene, images, NULL), SPART_OK);
    assert_int_equal(spart_instrument_backproject(context, instrument, images, back), SPART_OK);
    spart_instrument_free(instrument);
    spart_context_free(context);
}

static double largest_difference(const double *a, const double *b, int n, double *largest)
{
    double worst = 0.0;
    *largest = 0.0;
    for (int k = 0; k < n; k++) {
        double d = fabs(a[k] - b[k]);
        worst = d > worst ? d : worst;
        *largest = fabs(a[k]) > *largest ? fabs(a[k]) : *largest;
    }
    return worst;
}

static void a_delta_psf_changes_nothing(void **state)
{
    (void)state;
    const double delta[2] = {1.0, 1.0}; /* one 1 x 1 kernel per channel */
    double plain[512], plain_back[216], fft[512], fft_back[216], folded[512], folded_back[216];
    image_and_back(NULL, 0, 0, SPART_PSF_AUTO, plain, plain_back);
    image_and_back(delta, 1, 1, SPART_PSF_FFT, fft, fft_back);
    image_and_back(delta, 1, 1, SPART_PSF_FOLDED, folded, folded_back);
    double largest;
    assert_true(largest_difference(plain, fft, 512, &largest) <= 1e-14 * largest);
    assert_true(largest_difference(plain_back, fft_back, 216, &largest) <= 1e-14 * largest);
    assert_memory_equal(plain, folded, sizeof plain);
    assert_memory_equal(plain_back, folded_back, sizeof plain_back);
}

/* SPART_PSF_AUTO composes the PSF by FFT (the faster on the host and on a
 * GPU, docs/benchmarks.md in git history): the instrument holds a PSF and the plain
 * Regridders, not folded ones. */
static void auto_composes_the_psf_by_fft(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    double kernels[2 * 9];
    for (int k = 0; k < 18; k++) {
        kernels[k] = 1.0 / 9.0;
    }
    spart_instrument *plain = NULL, *with_psf = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &plain), SPART_OK);
    s.params.psf = kernels;
    s.params.psf_size[0] = 3;
    s.params.psf_size[1] = 3;
    s.params.psf_mode = SPART_PSF_AUTO;
    assert_int_equal(spart_instrument_create(context, &s.params, &with_psf), SPART_OK);
    assert_non_null(spart_instrument_psf(with_psf));
    assert_int_equal(spart_regridder_num_entries(spart_instrument_forward(with_psf)),
                     spart_regridder_num_entries(spart_instrument_forward(plain)));
    spart_instrument_free(plain);
    spart_instrument_free(with_psf);
    spart_context_free(context);
}

static void fft_and_folded_psf_agree_to_rounding(void **state)
{
    (void)state;
    /* a 3 x 5 blur per channel, different per channel, summing to 1 */
    double psf[2 * 15];
    for (int c = 0; c < 2; c++) {
        double total = 0.0;
        for (int k = 0; k < 15; k++) {
            psf[c * 15 + k] = 1.0 + (double)((k * (c + 3)) % 4);
            total += psf[c * 15 + k];
        }
        for (int k = 0; k < 15; k++) {
            psf[c * 15 + k] /= total;
        }
    }
    double fft[512], fft_back[216], folded[512], folded_back[216], plain[512], plain_back[216];
    image_and_back(psf, 3, 5, SPART_PSF_FFT, fft, fft_back);
    image_and_back(psf, 3, 5, SPART_PSF_FOLDED, folded, folded_back);
    image_and_back(NULL, 0, 0, SPART_PSF_AUTO, plain, plain_back);
    double largest;
    assert_true(largest_difference(folded, fft, 512, &largest) <= 1e-13 * largest);
    /* the blur moved light: the images differ from the unblurred ones */
    assert_true(largest_difference(plain, fft, 512, &largest) > 1e-3 * largest);
    /* backprojections: FFT takes P^T then the transpose of the unblurred
     * weights; folded takes the conservative transpose of P W. They agree
     * where the conservative factors are one per element, as here. */
    assert_true(largest_difference(folded_back, fft_back, 216, &largest) <= 1e-12 * largest);
}

static void expect_refused(spart_instrument_params *params, spart_status status, const char *word)
{
    spart_context *context = context_or_fail();
    spart_instrument *instrument = NULL;
    assert_int_equal(spart_instrument_create(context, params, &instrument), status);
    assert_null(instrument);
    assert_non_null(strstr(spart_context_error(context), word));
    spart_context_free(context);
}

static void bad_descriptions_are_refused_naming_the_field(void **state)
{
    (void)state;
    tiny_instrument s;
    make_tiny_instrument(&s);
    s.params.num_channel = 0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "num_channel");
    make_tiny_instrument(&s);
    s.params.exposure_time = -1.0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "exposure_time");
    make_tiny_instrument(&s);
    s.params.dispersion = 0.0;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "dispersion");
    make_tiny_instrument(&s);
    s.params.read_noise = -0.5;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "read_noise");
    make_tiny_instrument(&s);
    s.wavelength[2] = s.wavelength[1];
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "wavelength");
    make_tiny_instrument(&s);
    s.scene_x[3] = NAN;
    expect_refused(&s.params, SPART_ERROR_NOT_FINITE, "scene_x[3]");
    make_tiny_instrument(&s);
    s.params.angle = NULL;
    expect_refused(&s.params, SPART_ERROR_NULL_POINTER, "angle");
    make_tiny_instrument(&s);
    s.params.value_type = (spart_value_type)5;
    expect_refused(&s.params, SPART_ERROR_UNKNOWN_ENUM, "value_type");
    make_tiny_instrument(&s);
    const double kernel[2] = {1.0, 1.0};
    s.params.psf = kernel;
    expect_refused(&s.params, SPART_ERROR_INVALID_ARGUMENT, "psf_size");
    s.params.psf_size[0] = 1;
    s.params.psf_size[1] = 1;
    s.params.psf_mode = (spart_psf_mode)9;
    expect_refused(&s.params, SPART_ERROR_UNKNOWN_ENUM, "psf_mode");
}

/* An even-sized PSF has its centre at sample size / 2 in both modes
 * (spart/psf.h): a 2 x 4 kernel (x then y) whose only sample is at (1, 2)
 * changes nothing, and one whose only sample is at (0, 2) takes each
 * pixel's light to the pixel before it along x (images[x] = plain[x + 1],
 * the light of x = 0 lost past the edge). */
static void an_even_psf_is_centred_at_half_its_size_in_both_modes(void **state)
{
    (void)state;
    double centred[2 * 8] = {0.0}, before[2 * 8] = {0.0};
    for (int c = 0; c < 2; c++) {
        centred[c * 8 + 1 * 4 + 2] = 1.0;
        before[c * 8 + 0 * 4 + 2] = 1.0;
    }
    double plain[512], plain_back[216], images[512], back[216], moved[512];
    image_and_back(NULL, 0, 0, SPART_PSF_AUTO, plain, plain_back);
    for (int c = 0; c < 2; c++) {
        for (int x = 0; x < 16; x++) {
            for (int y = 0; y < 16; y++) {
                moved[(c * 16 + x) * 16 + y] = x < 15 ? plain[(c * 16 + x + 1) * 16 + y] : 0.0;
            }
        }
    }
    const spart_psf_mode modes[2] = {SPART_PSF_FFT, SPART_PSF_FOLDED};
    for (int m = 0; m < 2; m++) {
        double largest;
        image_and_back(centred, 2, 4, modes[m], images, back);
        assert_true(largest_difference(plain, images, 512, &largest) <= 1e-14 * largest);
        image_and_back(before, 2, 4, modes[m], images, back);
        assert_true(largest_difference(moved, images, 512, &largest) <= 1e-14 * largest);
        assert_true(largest_difference(plain, images, 512, &largest) > 1e-3 * largest);
    }
}

static void psf_kernels_that_are_not_finite_are_refused_in_both_modes(void **state)
{
    (void)state;
    tiny_instrument s;
    make_tiny_instrument(&s);
    double psf[2 * 15];
    for (int k = 0; k < 2 * 15; k++) {
        psf[k] = 1.0 / 15.0;
    }
    psf[7] = NAN;
    s.params.psf = psf;
    s.params.psf_size[0] = 3;
    s.params.psf_size[1] = 5;
    s.params.psf_mode = SPART_PSF_FFT;
    expect_refused(&s.params, SPART_ERROR_NOT_FINITE, "kernel value 7");
    s.params.psf_mode = SPART_PSF_FOLDED;
    expect_refused(&s.params, SPART_ERROR_NOT_FINITE, "kernel[7]");
    psf[7] = -INFINITY;
    expect_refused(&s.params, SPART_ERROR_NOT_FINITE, "kernel[7]");
}

static void regridders_that_do_not_chain_are_refused(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    tiny_instrument s;
    make_tiny_instrument(&s);
    spart_instrument *a = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &a), SPART_OK);
    s.params.num_sensor_x = 12; /* other images */
    spart_instrument *b = NULL;
    assert_int_equal(spart_instrument_create(context, &s.params, &b), SPART_OK);
    spart_mart_regridder_pair pair = {spart_instrument_forward(a), spart_instrument_backward(b), 2,
                                      1.0, 0.0};
    spart_mart_operators operators;
    assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators),
                     SPART_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(spart_context_error(context), "do not chain"));
    pair.backward = spart_instrument_backward(a);
    pair.gain = 0.0;
    assert_int_equal(spart_mart_operators_from_regridders(context, &pair, &operators),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_instrument_free(a);
    spart_instrument_free(b);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_follow_the_grids),
        cmocka_unit_test(photons_per_radiance_is_area_time_volume_over_photon_energy),
        cmocka_unit_test(a_scene_inside_the_sensor_keeps_every_photon),
        cmocka_unit_test(one_voxel_backprojects_onto_its_own_footprint),
        cmocka_unit_test(observations_repeat_for_a_seed),
        cmocka_unit_test(mart_recovers_a_noise_free_scene_closely),
        cmocka_unit_test(a_delta_psf_changes_nothing),
        cmocka_unit_test(auto_composes_the_psf_by_fft),
        cmocka_unit_test(fft_and_folded_psf_agree_to_rounding),
        cmocka_unit_test(bad_descriptions_are_refused_naming_the_field),
        cmocka_unit_test(regridders_that_do_not_chain_are_refused),
        cmocka_unit_test(an_even_psf_is_centred_at_half_its_size_in_both_modes),
        cmocka_unit_test(psf_kernels_that_are_not_finite_are_refused_in_both_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
