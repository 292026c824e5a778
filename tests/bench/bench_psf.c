/*
 * tests/bench/bench_psf.c: the time of one PSF apply (and adjoint) by FFT
 * on the ctis PSF-tutorial shape (4 channels of 128 x 64 images, 21 x 21
 * kernels), beside one product of a Regridder that holds the same
 * operator as a sparse matrix (the PSF folded into weights).
 *
 * Not registered with CTest; build it against a build tree's static
 * library and run it with the thread count as its argument (default 2):
 *
 *   cmake -S . -B build && cmake --build build -j --target spart_static
 *   cc -std=c11 -O2 -Iinclude -Ibuild/include tests/bench/bench_psf.c build/libspart.a \
 *      $(pkg-config --libs gsl cfitsio fftw3) -fopenmp -lm -o bench_psf
 *   ./bench_psf 2
 *
 * (What it found: docs/dev/performance-notes.md, "PSF: FFT against folded
 * weights".)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "spart.h"

enum { CHANNELS = 4, NY = 128, NX = 64, K = 21, REPEAT = 20 };

static void check(spart_context *context, spart_status status, const char *what)
{
    if (status != SPART_OK) {
        fprintf(stderr, "%s: %s\n", what, spart_context_error(context));
        exit(1);
    }
}

/* A Gaussian kernel per channel, wider for later channels. */
static double *make_kernels(void)
{
    double *kernels = malloc(sizeof(double) * CHANNELS * K * K);
    for (int c = 0; c < CHANNELS; c++) {
        double sigma = 1.5 + 0.5 * c;
        for (int y = 0; y < K; y++) {
            for (int x = 0; x < K; x++) {
                double dy = y - K / 2;
                double dx = x - K / 2;
                kernels[(c * K + y) * K + x] = exp(-(dx * dx + dy * dy) / (2.0 * sigma * sigma));
            }
        }
    }
    return kernels;
}

/* The PSF as weights: every pixel's light spread by its channel's kernel. */
static spart_regridder *folded_regridder(spart_context *context, const double *kernels)
{
    int64_t capacity = (int64_t)CHANNELS * NY * NX * K * K;
    int64_t *in = malloc(sizeof(int64_t) * (size_t)capacity);
    int64_t *out = malloc(sizeof(int64_t) * (size_t)capacity);
    double *values = malloc(sizeof(double) * (size_t)capacity);
    int64_t offsets[CHANNELS + 1];
    int64_t count = 0;
    for (int c = 0; c < CHANNELS; c++) {
        offsets[c] = count;
        for (int y = 0; y < NY; y++) {
            for (int x = 0; x < NX; x++) {
                for (int jy = 0; jy < K; jy++) {
                    for (int jx = 0; jx < K; jx++) {
                        int yo = y + jy - K / 2;
                        int xo = x + jx - K / 2;
                        if (yo < 0 || yo >= NY || xo < 0 || xo >= NX) {
                            continue;
                        }
                        in[count] = (int64_t)y * NX + x;
                        out[count] = (int64_t)yo * NX + xo;
                        values[count] = kernels[(c * K + jy) * K + jx];
                        count++;
                    }
                }
            }
        }
    }
    offsets[CHANNELS] = count;
    spart_shape orthogonal = {1, {CHANNELS}};
    spart_shape images = {3, {CHANNELS, NY, NX}};
    int axes[] = {1, 2};
    spart_weights *weights = NULL;
    check(context,
          spart_weights_create_from_arrays(context, &orthogonal, &images, &images, 2, axes, 2, axes,
                                           offsets, in, out, values, &weights),
          "weights");
    free(in);
    free(out);
    free(values);
    spart_regridder *regridder = NULL;
    check(context, spart_regridder_create(context, weights, NULL, &regridder), "regridder");
    spart_weights_free(weights);
    return regridder;
}

/* Median seconds of REPEAT runs of one operation. */
static double median_seconds(spart_context *context, int which, const spart_psf *psf,
                             const spart_regridder *regridder, const spart_array *x, double *y,
                             int64_t n)
{
    double times[REPEAT];
    for (int r = 0; r < REPEAT; r++) {
        double start = bench_seconds();
        spart_status status = which == 0   ? spart_psf_apply(context, psf, x, y, n)
                              : which == 1 ? spart_psf_apply_adjoint(context, psf, x, y, n)
                                           : spart_regridder_apply(context, regridder, x, y, n);
        check(context, status, "apply");
        times[r] = bench_seconds() - start;
    }
    qsort(times, REPEAT, sizeof(double), bench_compare_doubles);
    return times[REPEAT / 2];
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 1;
    }
    check(context, spart_context_set_threads(context, threads), "threads");
    double *kernels = make_kernels();
    spart_array kernel_array = {kernels, {3, {CHANNELS, K, K}}};
    spart_shape images = {3, {CHANNELS, NY, NX}};
    int64_t n = spart_shape_size(&images);
    double *x = malloc(sizeof(double) * (size_t)n);
    double *y = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (double)((i * 7919) % 1000) / 1000.0;
    }
    spart_array input = {x, images};

    double start = bench_seconds();
    spart_psf *psf = NULL;
    check(context, spart_psf_create(context, &kernel_array, &images, &psf), "psf");
    double create = bench_seconds() - start;
    double forward = median_seconds(context, 0, psf, NULL, &input, y, n);
    double adjoint = median_seconds(context, 1, psf, NULL, &input, y, n);

    start = bench_seconds();
    spart_regridder *regridder = folded_regridder(context, kernels);
    double fold = bench_seconds() - start;
    double product = median_seconds(context, 2, NULL, regridder, &input, y, n);

    printf("threads %d, images %dx%dx%d, kernels %dx%dx%d\n", threads, CHANNELS, NY, NX, CHANNELS,
           K, K);
    printf("psf create (plans, spectra):      %.3f ms\n", 1e3 * create);
    printf("psf apply (median of %d):         %.3f ms\n", REPEAT, 1e3 * forward);
    printf("psf adjoint (median of %d):       %.3f ms\n", REPEAT, 1e3 * adjoint);
    printf("folded regridder build:           %.3f ms (%lld entries)\n", 1e3 * fold,
           (long long)spart_regridder_num_entries(regridder));
    printf("folded regridder product (median): %.3f ms\n", 1e3 * product);
    spart_regridder_free(regridder);
    spart_psf_free(psf);
    free(kernels);
    free(x);
    free(y);
    spart_context_free(context);
    return 0;
}
