/*
 * tests/unit/test_cuda_mart.c: MART on a CUDA device gives the host's bits:
 * each building block on fresh inputs (sizes that are not multiples of a
 * chunk, poisoned outputs). Whole runs are in test_cuda_mart_runs.c.
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
#include "test_cuda_util.h"
#include "test_small_instrument.h"

/* n values in [low, high), with some exact zeros and negatives when low < 0. */
static double *random_values(int64_t n, double low, double high, uint64_t seed)
{
    double *values = malloc((size_t)n * sizeof(double));
    assert_non_null(values);
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) {
        int zero = (int)(next_uniform(&state) * 17.0) == 0; /* about one in 17 */
        values[i] = zero ? 0.0 : low + (high - low) * next_uniform(&state);
    }
    return values;
}

static void from_device(spart_context *context, double *host, const double *device, int64_t n)
{
    assert_int_equal(spart_device_copy_to_host(context, host, device, (size_t)n * sizeof(double)),
                     SPART_OK);
}

/* ---- building blocks ------------------------------------------------------------------------ */

/* spart_mart_merits of random images (seeds seed, seed + 1, seed + 2;
 * widths with some exact zeros, which the merits leave out) on the device
 * give the host's bits, whatever the workspace held before (all bits set
 * here) and again on a second call with the same workspace. */
static void assert_merits_equal_the_host(int64_t channels, int64_t pixels, uint64_t seed)
{
    spart_context *context = context_or_fail();
    int64_t n = channels * pixels;
    double *observed = random_values(n, 0.0, 50.0, seed);
    double *predicted = random_values(n, 0.0, 50.0, seed + 1);
    double *widths = random_values(n, 0.0, 7.0, seed + 2);
    double chi2_host[4], r_host[4], chi2_device[4], r_device[4];
    assert_true(channels <= 4);
    assert_int_equal(spart_mart_merits(context, observed, predicted, widths, channels, pixels,
                                       chi2_host, r_host, NULL, 0, 0),
                     SPART_OK);
    size_t bytes = spart_mart_workspace_size(channels, pixels, 1);
    void *workspace = NULL;
    assert_int_equal(spart_device_malloc(context, bytes, &workspace), SPART_OK);
    double *d_observed = doubles_to_device(context, observed, n);
    double *d_predicted = doubles_to_device(context, predicted, n);
    double *d_widths = doubles_to_device(context, widths, n);
    unsigned char *garbage = malloc(bytes);
    assert_non_null(garbage);
    memset(garbage, 0xff, bytes);
    assert_int_equal(spart_device_copy_to_device(context, workspace, garbage, bytes), SPART_OK);
    free(garbage);
    for (int call = 0; call < 2; call++) {
        memset(chi2_device, 0, sizeof chi2_device);
        memset(r_device, 0, sizeof r_device);
        assert_int_equal(spart_mart_merits(context, d_observed, d_predicted, d_widths, channels,
                                           pixels, chi2_device, r_device, workspace, bytes, 1),
                         SPART_OK);
        assert_memory_equal(chi2_host, chi2_device, (size_t)channels * sizeof(double));
        assert_memory_equal(r_host, r_device, (size_t)channels * sizeof(double));
    }
    spart_device_free(context, d_observed);
    spart_device_free(context, d_predicted);
    spart_device_free(context, d_widths);
    spart_device_free(context, workspace);
    free(observed);
    free(predicted);
    free(widths);
    spart_context_free(context);
}

/* spart_mart_finish_and_measure on raw predictions (negatives and
 * zeros among them; read noise 0 gives widths of exactly 0) leaves the
 * images, the widths and the merits in the workspace with the bits of
 * spart_mart_noise_widths and then spart_mart_merits, in the one-kernel
 * form (at most 8 chunks a channel) and in the two-step one. */
static void assert_finish_and_measure_equals_the_steps(int64_t channels, int64_t pixels,
                                                       double read_noise, uint64_t seed)
{
    spart_context *context = context_or_fail();
    int64_t n = channels * pixels;
    double gain = 1.75;
    double *observed = random_values(n, 0.0, 50.0, seed);
    double *raw = random_values(n, -5.0, 50.0, seed + 1);
    size_t bytes = spart_mart_workspace_size(channels, pixels, 1);
    double *d_observed = doubles_to_device(context, observed, n);
    double *d_images[2], *d_widths[2];
    void *workspace[2];
    for (int k = 0; k < 2; k++) {
        d_images[k] = doubles_to_device(context, raw, n);
        d_widths[k] = doubles_to_device(context, raw, n); /* overwritten */
        assert_int_equal(spart_device_malloc(context, bytes, &workspace[k]), SPART_OK);
    }
    assert_int_equal(
        spart_mart_noise_widths(context, d_images[0], d_widths[0], n, gain, read_noise, 1),
        SPART_OK);
    assert_int_equal(spart_mart_merits(context, d_observed, d_images[0], d_widths[0], channels,
                                       pixels, NULL, NULL, workspace[0], bytes, 1),
                     SPART_OK);
    assert_int_equal(spart_mart_finish_and_measure(context, d_observed, d_images[1], d_widths[1],
                                                   channels, pixels, gain, read_noise, workspace[1],
                                                   bytes, 1, NULL),
                     SPART_OK);
    double *expected = malloc((size_t)n * sizeof(double));
    double *got = malloc((size_t)n * sizeof(double));
    assert_non_null(expected);
    assert_non_null(got);
    from_device(context, expected, d_images[0], n);
    from_device(context, got, d_images[1], n);
    assert_memory_equal(expected, got, (size_t)n * sizeof(double));
    from_device(context, expected, d_widths[0], n);
    from_device(context, got, d_widths[1], n);
    assert_memory_equal(expected, got, (size_t)n * sizeof(double));
    from_device(context, expected, workspace[0], 2 * channels); /* chi2, then r */
    from_device(context, got, workspace[1], 2 * channels);
    assert_memory_equal(expected, got, (size_t)(2 * channels) * sizeof(double));
    for (int k = 0; k < 2; k++) {
        spart_device_free(context, d_images[k]);
        spart_device_free(context, d_widths[k]);
        spart_device_free(context, workspace[k]);
    }
    spart_device_free(context, d_observed);
    free(expected);
    free(got);
    free(observed);
    free(raw);
    spart_context_free(context);
}

static void finish_and_measure_equals_the_steps(void **state)
{
    (void)state;
    assert_finish_and_measure_equals_the_steps(4, 8 * 1024, 0.0, 61);     /* one kernel */
    assert_finish_and_measure_equals_the_steps(3, 5 * 1024 - 7, 2.5, 64); /* the last chunk short */
    assert_finish_and_measure_equals_the_steps(1, 100, 0.0, 67);          /* one chunk */
    assert_finish_and_measure_equals_the_steps(2, 9 * 1024 + 3, 2.5, 70); /* the two steps */
}

static void merits_equal_the_host(void **state)
{
    (void)state;
    assert_merits_equal_the_host(3, 10007, 1); /* 10 chunks, the last short */
}

static void elementwise_steps_and_flat_guess_equal_the_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    const int64_t channels = 4, voxels = 9001;
    int64_t n = channels * voxels;
    double *observed_back = random_values(n, 0.0, 3.0, 4);
    double *predicted_back = random_values(n, -0.5, 3.0, 5); /* negatives: clamped */
    double *scene = random_values(voxels, 0.0, 2.0, 6);
    double *images = random_values(n, -1.0, 40.0, 7);
    double *widths = malloc((size_t)n * sizeof(double));
    double *guess = malloc((size_t)voxels * sizeof(double));
    double *back_result = malloc((size_t)voxels * sizeof(double));
    double *images_result = malloc((size_t)n * sizeof(double));
    double *widths_result = malloc((size_t)n * sizeof(double));
    double *guess_result = malloc((size_t)voxels * sizeof(double));

    double *d_observed_back = doubles_to_device(context, observed_back, n);
    double *d_predicted_back = doubles_to_device(context, predicted_back, n);
    double *d_scene = doubles_to_device(context, scene, voxels);
    double *d_images = doubles_to_device(context, images, n);
    double *d_widths = doubles_to_device(context, NULL, n);
    double *d_guess = doubles_to_device(context, NULL, voxels);
    size_t bytes = spart_mart_workspace_size(channels, 1, voxels);
    void *workspace = NULL;
    assert_int_equal(spart_device_malloc(context, bytes, &workspace), SPART_OK);

    /* update, gamma 0.3 (the general pow) and 0.5 (sqrt) */
    for (int k = 0; k < 2; k++) {
        double gamma = k == 0 ? 0.3 : 0.5;
        assert_int_equal(spart_mart_update(context, scene, observed_back, predicted_back, channels,
                                           voxels, gamma, 0),
                         SPART_OK);
        assert_int_equal(spart_mart_update(context, d_scene, d_observed_back, d_predicted_back,
                                           channels, voxels, gamma, 1),
                         SPART_OK);
        from_device(context, back_result, d_scene, voxels);
        assert_memory_equal(scene, back_result, (size_t)voxels * sizeof(double));
    }
    /* widths (clamping the images) */
    assert_int_equal(spart_mart_noise_widths(context, images, widths, n, 1.7, 3.0, 0), SPART_OK);
    assert_int_equal(spart_mart_noise_widths(context, d_images, d_widths, n, 1.7, 3.0, 1),
                     SPART_OK);
    from_device(context, images_result, d_images, n);
    from_device(context, widths_result, d_widths, n);
    assert_memory_equal(images, images_result, (size_t)n * sizeof(double));
    assert_memory_equal(widths, widths_result, (size_t)n * sizeof(double));
    /* flat guess */
    assert_int_equal(
        spart_mart_flat_guess(context, predicted_back, channels, voxels, guess, NULL, 0, 0),
        SPART_OK);
    assert_int_equal(spart_mart_flat_guess(context, d_predicted_back, channels, voxels, d_guess,
                                           workspace, bytes, 1),
                     SPART_OK);
    from_device(context, guess_result, d_guess, voxels);
    assert_memory_equal(guess, guess_result, (size_t)voxels * sizeof(double));

    double *device_arrays[] = {d_observed_back, d_predicted_back, d_scene,
                               d_images,        d_widths,         d_guess};
    for (size_t k = 0; k < sizeof device_arrays / sizeof device_arrays[0]; k++) {
        spart_device_free(context, device_arrays[k]);
    }
    spart_device_free(context, workspace);
    free(observed_back);
    free(predicted_back);
    free(scene);
    free(images);
    free(widths);
    free(guess);
    free(back_result);
    free(images_result);
    free(widths_result);
    free(guess_result);
    spart_context_free(context);
}

static void a_device_step_refuses_too_little_workspace(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double *d = doubles_to_device(context, NULL, 8);
    double chi2, r;
    assert_int_equal(spart_mart_merits(context, d, d, d, 1, 8, &chi2, &r, d, 8, 1),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "workspace"));
    spart_device_free(context, d);
    spart_context_free(context);
}

static void a_device_step_refuses_host_memory(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    double host_values[8] = {0.0};
    assert_int_equal(spart_mart_clamp(context, host_values, 8, 1), SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "values is host memory"));
    spart_context_free(context);
}

/* The backprojection and the update in one call on the device give the
 * host's bits (where the host applies, then updates): one pass for
 * backward operators of group size 1, 4 and 32 (float64 and float32
 * values, int32 and int64 columns; 3 channels, so that a group's channels
 * are not all there in its last round), and through the backprojection
 * for one with a row longer than a chunk. */
static void update_from_images_equals_the_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    const int64_t channels = 3, voxels = 5003, pixels = 700, rows = channels * voxels;
    const int64_t means[] = {1, 6, 80, 3};
    for (int m = 0; m < 4; m++) {
        int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
        uint64_t rng = 100 + (uint64_t)m;
        for (int64_t r = 0; r < rows; r++) {
            lengths[r] = (int64_t)(next_uniform(&rng) * (double)(2 * means[m] + 1));
        }
        if (m == 3) {
            lengths[17] = SPART_CHUNK_LENGTH + 5;
        }
        spart_regridder *host =
            csr_regridder(context, rows, pixels, lengths, m == 1, m == 2, 200 + (uint64_t)m);
        free(lengths);
        spart_regridder *device = NULL;
        assert_int_equal(spart_regridder_to_device(context, host, &device), SPART_OK);
        assert_int_equal(device->device.num_long_rows, m == 3 ? 1 : 0);
        double *images = random_values(pixels, 0.0, 50.0, 300 + (uint64_t)m);
        double *observed_back = random_values(rows, 0.0, 3.0, 400 + (uint64_t)m);
        double *scene = random_values(voxels, 0.1, 2.0, 500 + (uint64_t)m);
        double *scratch = malloc((size_t)rows * sizeof(double));
        double *result = malloc((size_t)voxels * sizeof(double));
        double *d_images = doubles_to_device(context, images, pixels);
        double *d_observed_back = doubles_to_device(context, observed_back, rows);
        double *d_scene = doubles_to_device(context, scene, voxels);
        double *d_scratch = doubles_to_device(context, NULL, rows);
        for (int k = 0; k < 2; k++) {
            double gamma = k == 0 ? 0.3 : 0.5;
            assert_int_equal(spart_mart_update_from_images(context, host, images, observed_back,
                                                           channels, gamma, scene, scratch),
                             SPART_OK);
            spart_status status = spart_mart_update_from_images(
                context, device, d_images, d_observed_back, channels, gamma, d_scene, d_scratch);
            if (status != SPART_OK) {
                fail_msg("%s", spart_context_error(context));
            }
            from_device(context, result, d_scene, voxels);
            if (memcmp(result, scene, (size_t)voxels * sizeof(double)) != 0) {
                fail_msg("mean row length %lld (group size %d), gamma %g: the device scene differs "
                         "from the host's",
                         (long long)means[m], host->plan.group_size, gamma);
            }
        }
        spart_device_free(context, d_images);
        spart_device_free(context, d_observed_back);
        spart_device_free(context, d_scene);
        spart_device_free(context, d_scratch);
        free(images);
        free(observed_back);
        free(scene);
        free(scratch);
        free(result);
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
    spart_context_free(context);
}

/* Observed backprojections far from the predictions (ratios whose product
 * overflows, or passes through the subnormals) and negative ones (not
 * clamped): the voxels that leave the single power for ctis's per-channel
 * form (src/mart/mart_math.h), on the device as on the host, in the update and
 * in the fused update; gammas 0.5 and 0.3 (the single power elsewhere) and
 * 2 (the per-channel form everywhere). */
static void corrections_outside_the_single_power_equal_the_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    const int64_t channels = 4, voxels = 3001, pixels = 500, rows = channels * voxels;
    const double extremes[] = {1e300, 1e-300, 1e-310, -1.0};
    double *observed_back = random_values(rows, 0.0, 3.0, 600);
    for (int64_t v = 0; v < voxels; v += 5) {
        observed_back[v] = extremes[(v / 5) % 4];          /* channel 0 */
        observed_back[voxels + v] = extremes[(v / 5) % 4]; /* and 1: the product leaves the range */
    }
    double *predicted_back = random_values(rows, 0.0, 3.0, 601);
    double *images = random_values(pixels, 0.0, 50.0, 602);
    double *start = random_values(voxels, 0.1, 2.0, 603);
    int64_t *lengths = random_lengths(rows, 6, 604);
    spart_regridder *host = csr_regridder(context, rows, pixels, lengths, 0, 0, 605);
    free(lengths);
    spart_regridder *device = NULL;
    assert_int_equal(spart_regridder_to_device(context, host, &device), SPART_OK);
    double *scene = malloc((size_t)voxels * sizeof(double));
    double *scratch = malloc((size_t)rows * sizeof(double));
    double *result = malloc((size_t)voxels * sizeof(double));
    double *d_observed_back = doubles_to_device(context, observed_back, rows);
    double *d_predicted_back = doubles_to_device(context, predicted_back, rows);
    double *d_images = doubles_to_device(context, images, pixels);
    double *d_scene = doubles_to_device(context, NULL, voxels);
    double *d_scratch = doubles_to_device(context, NULL, rows);
    const double gammas[] = {0.5, 0.3, 2.0};
    for (int g = 0; g < 3; g++) {
        for (int fused = 0; fused < 2; fused++) {
            memcpy(scene, start, (size_t)voxels * sizeof(double));
            assert_int_equal(spart_device_copy_to_device(context, d_scene, start,
                                                         (size_t)voxels * sizeof(double)),
                             SPART_OK);
            spart_status on_host, on_device;
            if (fused) {
                on_host = spart_mart_update_from_images(context, host, images, observed_back,
                                                        channels, gammas[g], scene, scratch);
                on_device =
                    spart_mart_update_from_images(context, device, d_images, d_observed_back,
                                                  channels, gammas[g], d_scene, d_scratch);
            } else {
                on_host = spart_mart_update(context, scene, observed_back, predicted_back, channels,
                                            voxels, gammas[g], 0);
                on_device = spart_mart_update(context, d_scene, d_observed_back, d_predicted_back,
                                              channels, voxels, gammas[g], 1);
            }
            assert_int_equal(on_host, SPART_OK);
            assert_int_equal(on_device, SPART_OK);
            from_device(context, result, d_scene, voxels);
            if (memcmp(result, scene, (size_t)voxels * sizeof(double)) != 0) {
                fail_msg("gamma %g, %s: the device scene differs from the host's", gammas[g],
                         fused ? "fused update" : "update");
            }
        }
    }
    spart_device_free(context, d_observed_back);
    spart_device_free(context, d_predicted_back);
    spart_device_free(context, d_images);
    spart_device_free(context, d_scene);
    spart_device_free(context, d_scratch);
    free(observed_back);
    free(predicted_back);
    free(images);
    free(start);
    free(scene);
    free(scratch);
    free(result);
    spart_regridder_free(device);
    spart_regridder_free(host);
    spart_context_free(context);
}

/* One fused update of `channels` channels on the device against the host:
 * rows of mean length `mean` (with `long_every` > 0, every long_every-th
 * row holds 150 entries), every fifth voxel's observed backprojections in
 * channels 0 and 1 far from its predictions (the per-channel form), gamma
 * 0.5, 0.3 and 2. */
static void assert_fused_update_equals_the_host(spart_context *context, int64_t channels,
                                                int64_t voxels, int64_t mean, int64_t long_every,
                                                int expected_group_size)
{
    const int64_t pixels = 600, rows = channels * voxels;
    const double extremes[] = {1e300, 1e-300, 1e-310, -1.0};
    const uint64_t seed = 700 + 10 * (uint64_t)channels + (uint64_t)mean;
    double *observed_back = random_values(rows, 0.0, 3.0, seed);
    for (int64_t v = 0; v < voxels; v += 5) {
        for (int64_t c = 0; c < channels && c < 2; c++) {
            observed_back[c * voxels + v] = extremes[(v / 5) % 4];
        }
    }
    double *images = random_values(pixels, 0.0, 50.0, seed + 1);
    double *start = random_values(voxels, 0.1, 2.0, seed + 2);
    int64_t *lengths = random_lengths(rows, mean, seed + 3);
    for (int64_t r = long_every - 1; long_every > 0 && r < rows; r += long_every) {
        lengths[r] = 150;
    }
    spart_regridder *host = csr_regridder(context, rows, pixels, lengths, 0, 0, seed + 4);
    free(lengths);
    assert_int_equal(host->plan.group_size, expected_group_size);
    spart_regridder *device = NULL;
    assert_int_equal(spart_regridder_to_device(context, host, &device), SPART_OK);
    if (expected_group_size == 1) { /* rows of at most 255 entries */
        assert_non_null(device->device.short_row_lengths);
    }
    double *scene = malloc((size_t)voxels * sizeof(double));
    double *scratch = malloc((size_t)rows * sizeof(double));
    double *result = malloc((size_t)voxels * sizeof(double));
    double *d_observed_back = doubles_to_device(context, observed_back, rows);
    double *d_images = doubles_to_device(context, images, pixels);
    double *d_scene = doubles_to_device(context, NULL, voxels);
    double *d_scratch = doubles_to_device(context, NULL, rows);
    const double gammas[] = {0.5, 0.3, 2.0};
    for (int g = 0; g < 3; g++) {
        memcpy(scene, start, (size_t)voxels * sizeof(double));
        assert_int_equal(
            spart_device_copy_to_device(context, d_scene, start, (size_t)voxels * sizeof(double)),
            SPART_OK);
        assert_int_equal(spart_mart_update_from_images(context, host, images, observed_back,
                                                       channels, gammas[g], scene, scratch),
                         SPART_OK);
        assert_int_equal(spart_mart_update_from_images(context, device, d_images, d_observed_back,
                                                       channels, gammas[g], d_scene, d_scratch),
                         SPART_OK);
        from_device(context, result, d_scene, voxels);
        if (memcmp(result, scene, (size_t)voxels * sizeof(double)) != 0) {
            fail_msg("%lld channels, group size %d, gamma %g: the device scene differs from the "
                     "host's",
                     (long long)channels, expected_group_size, gammas[g]);
        }
    }
    spart_device_free(context, d_observed_back);
    spart_device_free(context, d_images);
    spart_device_free(context, d_scene);
    spart_device_free(context, d_scratch);
    free(observed_back);
    free(images);
    free(start);
    free(scene);
    free(scratch);
    free(result);
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* The fused update sums a voxel's rows several channels at a time: a
 * thread a voxel for rows of about one to four entries (group sizes 1 and
 * 2, MART's backprojections), a few of them of 150 entries; a group of
 * lanes for longer rows (group size 4). Any number of channels, fewer than
 * four, a multiple of four and one or two batches past it, gives the
 * host's bits, in the single power and in ctis's per-channel form. Group
 * size 1 with 2048 voxels (8 blocks of 256) and at most 4 channels finds
 * the rows through the short-row index (backproject_update_indexed_kernel),
 * with 2011 voxels or more channels through the row pointers. */
static void fused_update_of_any_channel_count_equals_the_host(void **state)
{
    (void)state;
    spart_context *context = context_or_fail();
    const int64_t channel_counts[] = {1, 2, 4, 5, 9};
    for (size_t k = 0; k < sizeof channel_counts / sizeof channel_counts[0]; k++) {
        assert_fused_update_equals_the_host(context, channel_counts[k], 2011, 1, 0, 1);
        assert_fused_update_equals_the_host(context, channel_counts[k], 2011, 1, 997, 1);
        assert_fused_update_equals_the_host(context, channel_counts[k], 2048, 1, 0, 1);
        assert_fused_update_equals_the_host(context, channel_counts[k], 2048, 1, 997, 1);
        assert_fused_update_equals_the_host(context, channel_counts[k], 2011, 3, 0, 2);
        assert_fused_update_equals_the_host(context, channel_counts[k], 2011, 3, 1201, 2);
        assert_fused_update_equals_the_host(context, channel_counts[k], 2011, 6, 0, 4);
    }
    spart_context_free(context);
}

/* Merits of images of more than 64 chunks a channel give the host's bits
 * too. */
static void merits_of_large_images_equal_the_host(void **state)
{
    (void)state;
    assert_merits_equal_the_host(2, 70 * 1024 + 77, 11);
}

/* Images of many chunks a channel (301, each chunk its own block) give
 * the host's bits. */
static void merits_of_many_chunks_a_channel_equal_the_host(void **state)
{
    (void)state;
    assert_merits_equal_the_host(4, 300 * 1024 + 5, 21);
}

/* Images of up to 8 chunks a channel (a warp a chunk, which keeps its
 * values between the passes), at the limit and just past it, give the
 * host's bits. */
static void merits_of_a_chunk_a_warp_equal_the_host(void **state)
{
    (void)state;
    assert_merits_equal_the_host(4, 8 * 1024, 41);
    assert_merits_equal_the_host(3, 8 * 1024 - 5, 44);
    assert_merits_equal_the_host(2, 8 * 1024 + 1, 47);
}

/* Small odd images (one pixel; under, just over and just under a warp and
 * a chunk) give the host's bits. */
static void merits_of_small_odd_images_equal_the_host(void **state)
{
    (void)state;
    const int64_t sizes[] = {1, 31, 33, 1023, 1025};
    for (int k = 0; k < 5; k++) {
        assert_merits_equal_the_host(1 + k % 4, sizes[k], 31 + 3 * (uint64_t)k);
    }
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merits_equal_the_host),
        cmocka_unit_test(finish_and_measure_equals_the_steps),
        cmocka_unit_test(merits_of_large_images_equal_the_host),
        cmocka_unit_test(merits_of_many_chunks_a_channel_equal_the_host),
        cmocka_unit_test(merits_of_small_odd_images_equal_the_host),
        cmocka_unit_test(merits_of_a_chunk_a_warp_equal_the_host),
        cmocka_unit_test(update_from_images_equals_the_host),
        cmocka_unit_test(corrections_outside_the_single_power_equal_the_host),
        cmocka_unit_test(fused_update_of_any_channel_count_equals_the_host),
        cmocka_unit_test(elementwise_steps_and_flat_guess_equal_the_host),
        cmocka_unit_test(a_device_step_refuses_too_little_workspace),
        cmocka_unit_test(a_device_step_refuses_host_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
