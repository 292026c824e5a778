/*
 * tests/bench/bench_mart_psf.c: MART with a point-spread function, the PSF
 * composed by FFT against folded into the weights, on the shape of the ctis
 * PSF tutorial (4 channels, 20 bins, 64x64 scene, 128x64 sensor, one 21x21
 * elliptical Gaussian per channel: widths 2, 3, 3.5, 2.5 by 0.8, 0.6,
 * 0.9, 0.5 pixels at 0, 30, 75, 135 degrees), side by side in one run: the
 * instrument's build time, the entries and bytes of its operators, and
 * milliseconds per MART iteration on the host and, when there is one, on
 * the CUDA device: the FFT composition there is the Regridders and the
 * PSF (cuFFT) moved to the device, the folded one its Regridders.
 *
 * Host figures: a 5-iteration solve over 5. Device figures: the difference
 * of a 120- and a 20-iteration solve over 100, which leaves out what a
 * solve does once (allocations, the first backprojection, recording the
 * graph). Device memory: what cudaMemGetInfo says the device operators
 * (Regridders, PSF with its buffers and cuFFT plans, scratch) and the
 * observations took.
 *
 * Prints a table. Label `bench` (built with -DSPART_BUILD_BENCHMARKS=ON).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "spart.h"

#if defined(SPART_BENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

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

/* Seconds of a solve of exactly `iterations` iterations, or -1. */
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
    return t;
}

/* Bytes of device memory in use (0 without CUDA). */
static double device_bytes_used(void)
{
#if defined(SPART_BENCH_HAVE_CUDA)
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaDeviceSynchronize() == cudaSuccess &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        return (double)(total_bytes - free_bytes);
    }
#endif
    return 0.0;
}

/* What a device run measured. */
typedef struct device_figures {
    double ms_per_iteration; /* -1: not run */
    double gigabytes;        /* device memory its operators and observations took */
} device_figures;

/* The instrument's operators moved to the device (the PSF too, when it is
 * composed by FFT), timed per iteration. */
static device_figures time_on_device(spart_context *context, const spart_instrument *instrument,
                                     const double *observed, size_t observed_bytes)
{
    device_figures figures = {-1.0, 0.0};
    double before = device_bytes_used();
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    if (!check(context, spart_instrument_mart_operators(context, instrument, &pair, &operators),
               "operators")) {
        return figures;
    }
    spart_regridder *d_forward = NULL, *d_backward = NULL;
    spart_psf *d_psf = NULL;
    void *d_observed = NULL, *d_scratch = NULL;
    const spart_psf *psf = spart_instrument_psf(instrument);
    size_t image_bytes = (size_t)spart_regridder_num_rows(pair.forward) * sizeof(double);
    int ready =
        check(context, spart_regridder_to_device(context, pair.forward, &d_forward), "device") &&
        check(context, spart_regridder_to_device(context, pair.backward, &d_backward), "device") &&
        (psf == NULL ||
         (check(context, spart_psf_to_device(context, psf, &d_psf), "device psf") &&
          check(context, spart_device_malloc(context, image_bytes, &d_scratch), "scratch"))) &&
        check(context, spart_device_malloc(context, observed_bytes, &d_observed), "device") &&
        check(context, spart_device_copy_to_device(context, d_observed, observed, observed_bytes),
              "device");
    spart_mart_regridder_psf composed = {d_forward, d_psf,           d_backward, pair.num_channel,
                                         pair.gain, pair.read_noise, d_scratch};
    pair.forward = d_forward;
    pair.backward = d_backward;
    if (ready && psf != NULL) {
        ready =
            check(context, spart_mart_operators_from_regridders_psf(context, &composed, &operators),
                  "device operators with the psf");
    } else if (ready) {
        ready = check(context, spart_mart_operators_from_regridders(context, &pair, &operators),
                      "device operators");
    }
    if (ready) {
        figures.gigabytes = (device_bytes_used() - before) / 1e9;
        time_mart(context, &operators, d_observed, 2); /* warm-up */
        double short_run = time_mart(context, &operators, d_observed, 20);
        double long_run = time_mart(context, &operators, d_observed, 120);
        if (short_run >= 0.0 && long_run >= 0.0) {
            figures.ms_per_iteration = (long_run - short_run) / 100.0 * 1e3;
        }
    }
    spart_device_free(context, d_observed);
    spart_device_free(context, d_scratch);
    spart_psf_free(d_psf);
    spart_regridder_free(d_forward);
    spart_regridder_free(d_backward);
    return figures;
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
    printf("%-7s %10s %14s %14s %12s %14s %16s %11s\n", "psf", "build s", "entries fwd",
           "entries back", "CSR GB", "host ms/iter", "device ms/iter", "device GB");
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
        double host_ms = time_mart(context, &operators, observed, 5) / 5.0 * 1e3;
        device_figures device = {-1.0, 0.0};
        if (have_device) {
            device = time_on_device(context, instrument, observed, sizeof observed);
        }
        printf("%-7s %10.2f %14lld %14lld %12.3f %14.2f %16.3f %11.3f\n", names[k], build,
               (long long)spart_regridder_num_entries(forward),
               (long long)spart_regridder_num_entries(backward),
               (bench_csr_bytes(forward) + bench_csr_bytes(backward)) / 1e9, host_ms,
               device.ms_per_iteration, device.gigabytes);
        spart_instrument_free(instrument);
    }
    spart_context_free(context);
    return 0;
}
