/*
 * tests/bench/bench_mart_psf.c: MART with a point-spread function, the PSF
 * composed by FFT against folded into the weights, on the shape of the ctis
 * PSF tutorial (4 channels, 20 bins, 64x64 scene, 128x64 sensor, one 21x21
 * elliptical Gaussian per channel: widths 2, 3, 3.5, 2.5 by 0.8, 0.6,
 * 0.9, 0.5 pixels at 0, 30, 75, 135 degrees), side by side in one run: the
 * instrument's build time, the entries and bytes of its operators, and
 * milliseconds per MART iteration on the host and, for the folded
 * operators, on the CUDA device when there is one.
 *
 * Prints a table. Label `bench` (built with -DSPART_BUILD_BENCHMARKS=ON).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart.h"

static int check(spart_context *context, spart_status status, const char *what)
{
    if (status != SPART_OK) {
        fprintf(stderr, "bench_mart_psf: %s: %s\n", what, spart_context_error(context));
        return 0;
    }
    return 1;
}

/* The tutorial's four normalised elliptical Gaussians, [channel][x][y]. */
static int tutorial_psf(spart_context *context, double *psf)
{
    const double major[4] = {2.0, 3.0, 3.5, 2.5};
    const double minor[4] = {0.8, 0.6, 0.9, 0.5};
    const double angle[4] = {0.0, 30.0, 75.0, 135.0};
    const int64_t size[2] = {21, 21};
    for (int c = 0; c < 4; c++) {
        if (!check(context,
                   spart_psf_gaussian(context, major[c], minor[c], angle[c], size,
                                      psf + c * 21 * 21, 21 * 21),
                   "psf kernel")) {
            return 0;
        }
    }
    return 1;
}

static double csr_bytes(const spart_regridder *r)
{
    double value = spart_regridder_value_type(r) == SPART_FLOAT32 ? 4.0 : 8.0;
    return (double)spart_regridder_num_entries(r) * (value + 4.0) +
           (double)(spart_regridder_num_rows(r) + 1) * 8.0;
}

static double time_mart(spart_context *context, const spart_mart_operators *operators,
                        const double *observed, int64_t iterations)
{
    spart_mart_options options;
    spart_mart_options_init(&options);
    options.stop_rule = SPART_MART_STOP_COUNT;
    options.max_iterations = iterations;
    spart_mart_result *result = NULL;
    double t = omp_get_wtime();
    if (!check(context, spart_mart_solve(context, operators, observed, &options, &result),
               "mart")) {
        return -1.0;
    }
    t = omp_get_wtime() - t;
    spart_mart_result_free(result);
    return t / (double)iterations * 1e3;
}

int main(void)
{
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    double angle[4], velocity[21], wavelength[21], x[65], y[65], sensor_x[129], sensor_y[65];
    for (int c = 0; c < 4; c++) {
        angle[c] = 5.64 + 90.0 * c;
    }
    for (int l = 0; l <= 20; l++) {
        velocity[l] = -500.0 + 50.0 * l;
    }
    for (int i = 0; i <= 64; i++) {
        x[i] = -10.0 + 20.0 * i / 64.0;
        y[i] = x[i];
        sensor_y[i] = i;
    }
    for (int i = 0; i <= 128; i++) {
        sensor_x[i] = i;
    }
    static double scene[20 * 64 * 64], observed[4 * 128 * 64], psf[4 * 21 * 21];
    if (!tutorial_psf(context, psf)) {
        return 1;
    }
    if (!check(context,
               spart_scene_gaussians(context, 171.0, 20, velocity, 64, x, 64, y, NULL, wavelength,
                                     scene),
               "scene")) {
        return 1;
    }
    spart_instrument_params params;
    spart_instrument_params_init(&params);
    params.num_channel = 4;
    params.angle = angle;
    params.dispersion = 171.0 * 10.0 / 299792.458;
    params.plate_scale = 0.4;
    params.wavelength_ref = 171.0;
    params.position_ref[0] = 64.0;
    params.position_ref[1] = 32.0;
    params.area_effective = 1.0;
    params.exposure_time = 20.0;
    params.num_wavelength = 20;
    params.wavelength = wavelength;
    params.num_scene_x = 64;
    params.scene_x = x;
    params.num_scene_y = 64;
    params.scene_y = y;
    params.num_sensor_x = 128;
    params.sensor_x = sensor_x;
    params.num_sensor_y = 64;
    params.sensor_y = sensor_y;
    params.solid_angle_steradian = 1;
    params.psf = psf;
    params.psf_size[0] = 21;
    params.psf_size[1] = 21;
    int have_device = spart_context_set_cuda_device(context, 0) == SPART_OK;
    printf("MART with the ctis PSF tutorial's PSFs (4 x 21x21), 4 channels, 20 bins, 64x64 "
           "scene, 128x64 sensor; host %d threads\n",
           spart_context_threads(context));
    printf("%-7s %10s %14s %14s %12s %14s %16s\n", "psf", "build s", "entries fwd", "entries back",
           "CSR GB", "host ms/iter", "device ms/iter");
    const spart_psf_mode modes[2] = {SPART_PSF_FFT, SPART_PSF_FOLDED};
    const char *names[2] = {"fft", "folded"};
    for (int k = 0; k < 2; k++) {
        params.psf_mode = modes[k];
        spart_instrument *instrument = NULL;
        double t = omp_get_wtime();
        if (!check(context, spart_instrument_create(context, &params, &instrument), "build")) {
            return 1;
        }
        double build = omp_get_wtime() - t;
        if (!check(context, spart_instrument_observe(context, instrument, scene, 1, observed, NULL),
                   "observe")) {
            return 1;
        }
        spart_mart_regridder_pair pair;
        spart_mart_operators operators;
        if (!check(context, spart_instrument_mart_operators(context, instrument, &pair, &operators),
                   "operators")) {
            return 1;
        }
        const spart_regridder *forward = spart_instrument_forward(instrument);
        const spart_regridder *backward = spart_instrument_backward(instrument);
        double host_ms = time_mart(context, &operators, observed, 5);
        double device_ms = -1.0;
        if (have_device && modes[k] == SPART_PSF_FOLDED) {
            spart_regridder *d_forward = NULL, *d_backward = NULL;
            void *d_observed = NULL;
            if (check(context, spart_regridder_to_device(context, forward, &d_forward), "device") &&
                check(context, spart_regridder_to_device(context, backward, &d_backward),
                      "device") &&
                check(context, spart_device_malloc(context, sizeof observed, &d_observed),
                      "device") &&
                check(context,
                      spart_device_copy_to_device(context, d_observed, observed, sizeof observed),
                      "device")) {
                pair.forward = d_forward;
                pair.backward = d_backward;
                if (check(context, spart_mart_operators_from_regridders(context, &pair, &operators),
                          "device operators")) {
                    time_mart(context, &operators, d_observed, 2);
                    device_ms = time_mart(context, &operators, d_observed, 20);
                }
            }
            spart_device_free(context, d_observed);
            spart_regridder_free(d_forward);
            spart_regridder_free(d_backward);
        }
        printf("%-7s %10.2f %14lld %14lld %12.3f %14.2f %16.3f\n", names[k], build,
               (long long)spart_regridder_num_entries(forward),
               (long long)spart_regridder_num_entries(backward),
               (csr_bytes(forward) + csr_bytes(backward)) / 1e9, host_ms, device_ms);
        spart_instrument_free(instrument);
    }
    spart_context_free(context);
    return 0;
}
