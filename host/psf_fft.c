/*
 * host/psf_fft.c: the FFT work of the PSF operator (spart/psf.h) with
 * FFTW: plans, kernel spectra, and the per-image convolution and
 * correlation, shared out over images with OpenMP.
 *
 * Linear (not circular) convolution by FFT: an image of n samples and a
 * kernel of k samples are zero-padded to a length N >= n + k - 1, so their
 * circular convolution has room for the whole linear one and nothing
 * wraps. For the convolution the image sits at offset 0 and the result is
 * read from offset c = floor(k / 2); for the correlation the image sits at
 * offset c and the result is read from 0 (see spart/psf.h for the sums).
 */
#include <omp.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "psf/psf_internal.h"

int64_t spart_psf_fft_length(int64_t minimum)
{
    for (int64_t length = minimum;; length++) {
        int64_t rest = length;
        const int64_t primes[] = {2, 3, 5, 7};
        for (int p = 0; p < 4; p++) {
            while (rest % primes[p] == 0) {
                rest /= primes[p];
            }
        }
        if (rest == 1) {
            return length;
        }
    }
}

int spart_psf_fft_make_plans(spart_psf *psf)
{
    size_t real_size = (size_t)(psf->pad_y * psf->pad_x);
    double *real = spart_alloc(&psf->allocator, real_size, sizeof(double));
    fftw_complex *spectrum =
        spart_alloc(&psf->allocator, (size_t)psf->spectrum_size, sizeof(fftw_complex));
    if (real != NULL && spectrum != NULL) {
        /* FFTW_ESTIMATE picks the algorithm by a fixed rule rather than by
         * timing candidates (FFTW_MEASURE), so the same machine always runs
         * the same arithmetic and gives the same bits; it also leaves the
         * arrays alone. FFTW_UNALIGNED lets the new-array execute functions
         * take buffers of any alignment (the context's allocator promises
         * only double alignment), with code that does not depend on it. */
        unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
        int n0 = (int)psf->pad_y;
        int n1 = (int)psf->pad_x;
        psf->plan_forward = fftw_plan_dft_r2c_2d(n0, n1, real, spectrum, flags);
        psf->plan_inverse = fftw_plan_dft_c2r_2d(n0, n1, spectrum, real, flags);
    }
    spart_free(&psf->allocator, real);
    spart_free(&psf->allocator, spectrum);
    return psf->plan_forward != NULL && psf->plan_inverse != NULL ? 0 : -1;
}

int spart_psf_fft_kernel_spectra(spart_psf *psf, const double *kernels)
{
    size_t real_size = (size_t)(psf->pad_y * psf->pad_x);
    double *real = spart_alloc(&psf->allocator, real_size, sizeof(double));
    if (real == NULL) {
        return -1;
    }
    /* FFTW's transforms are unnormalised: inverse(forward(a)) = N a. The
     * 1 / N goes into the kernel's spectrum once. */
    double scale = 1.0 / ((double)psf->pad_y * (double)psf->pad_x);
    psf->kernel_l1 = spart_alloc(&psf->allocator, (size_t)psf->num_kernels, sizeof(double));
    if (psf->kernel_l1 == NULL) {
        spart_free(&psf->allocator, real);
        return -1;
    }
    for (int64_t k = 0; k < psf->num_kernels; k++) {
        const double *kernel = kernels + k * psf->ky * psf->kx;
        double l1 = 0.0;
        for (int64_t i = 0; i < psf->ky * psf->kx; i++) {
            l1 += fabs(kernel[i]);
        }
        psf->kernel_l1[k] = l1;
        memset(real, 0, real_size * sizeof(double));
        for (int64_t y = 0; y < psf->ky; y++) {
            memcpy(real + y * psf->pad_x, kernel + y * psf->kx, (size_t)psf->kx * sizeof(double));
        }
        fftw_complex *spectrum = psf->spectra + k * psf->spectrum_size;
        fftw_execute_dft_r2c(psf->plan_forward, real, spectrum);
        for (int64_t i = 0; i < psf->spectrum_size; i++) {
            spectrum[i][0] *= scale;
            spectrum[i][1] *= scale;
        }
    }
    spart_free(&psf->allocator, real);
    return 0;
}

/* spectrum *= kernel (convolution) or *= conj(kernel) (correlation).
 * (kernel is not const: C before C23 cannot pass fftw_complex arrays,
 * arrays of double[2], as pointers to const.) */
static void multiply_spectra(fftw_complex *spectrum, fftw_complex *kernel, int64_t size,
                             int adjoint)
{
    for (int64_t i = 0; i < size; i++) {
        double a_re = spectrum[i][0];
        double a_im = spectrum[i][1];
        double b_re = kernel[i][0];
        double b_im = adjoint ? -kernel[i][1] : kernel[i][1];
        spectrum[i][0] = a_re * b_re - a_im * b_im;
        spectrum[i][1] = a_re * b_im + a_im * b_re;
    }
}

/* One image: pad it into `real`, transform, multiply, transform back and
 * read the ny x nx window. */
static void apply_one_image(const spart_psf *psf, int64_t image, const double *input,
                            double *output, int adjoint, double *real, fftw_complex *spectrum)
{
    int64_t size = psf->ny * psf->nx;
    const double *in = input + image * size;
    double *out = output + image * size;
    int64_t centre_y = psf->ky / 2;
    int64_t centre_x = psf->kx / 2;
    /* Convolution: image at 0, result at the centre; correlation: the
     * other way round. */
    int64_t write_y = adjoint ? centre_y : 0;
    int64_t write_x = adjoint ? centre_x : 0;
    int64_t read_y = adjoint ? 0 : centre_y;
    int64_t read_x = adjoint ? 0 : centre_x;
    memset(real, 0, (size_t)(psf->pad_y * psf->pad_x) * sizeof(double));
    double largest = 0.0;
    for (int64_t y = 0; y < psf->ny; y++) {
        memcpy(real + (y + write_y) * psf->pad_x + write_x, in + y * psf->nx,
               (size_t)psf->nx * sizeof(double));
        for (int64_t x = 0; x < psf->nx; x++) {
            double magnitude = fabs(in[y * psf->nx + x]);
            largest = magnitude > largest ? magnitude : largest;
        }
    }
    fftw_execute_dft_r2c(psf->plan_forward, real, spectrum);
    fftw_complex *kernel = psf->spectra + psf->kernel_of_image[image] * psf->spectrum_size;
    multiply_spectra(spectrum, kernel, psf->spectrum_size, adjoint);
    fftw_execute_dft_c2r(psf->plan_inverse, spectrum, real);
    for (int64_t y = 0; y < psf->ny; y++) {
        memcpy(out + y * psf->nx, real + (y + read_y) * psf->pad_x + read_x,
               (size_t)psf->nx * sizeof(double));
    }
    /* The FFT's rounding leaves about 1e-17 of the image's scale where the
     * exact result is 0 (no light reaches the pixel). Such a pixel must
     * stay exactly 0: MART leaves pixels whose model is 0 out of the merit,
     * and a width of sqrt(1e-17) would make its chi-squared explode.
     * Values within the FFT's error bound of zero, 8 log2(N) ulps of
     * max|in| |K|_1, the largest any output can be, become 0. */
    double bound = largest * psf->kernel_l1[psf->kernel_of_image[image]];
    double threshold = 8.0 * log2((double)(psf->pad_y * psf->pad_x)) * DBL_EPSILON * bound;
    for (int64_t k = 0; k < size; k++) {
        if (fabs(out[k]) < threshold) {
            out[k] = 0.0;
        }
    }
}

int spart_psf_fft_apply(const spart_psf *psf, int threads, const double *input, double *output,
                        int adjoint)
{
    if ((int64_t)threads > psf->num_images) {
        threads = (int)psf->num_images;
    }
    size_t real_size = (size_t)(psf->pad_y * psf->pad_x);
    size_t spectrum_size = (size_t)psf->spectrum_size;
    /* Every thread its own buffers: FFTW's execute functions are
     * thread-safe with distinct arrays. */
    double *reals = spart_alloc(&psf->allocator, (size_t)threads * real_size, sizeof(double));
    fftw_complex *spectra =
        spart_alloc(&psf->allocator, (size_t)threads * spectrum_size, sizeof(fftw_complex));
    if (reals == NULL || spectra == NULL) {
        spart_free(&psf->allocator, reals);
        spart_free(&psf->allocator, spectra);
        return -1;
    }
    /* Each image is done whole by one thread with the same plan, so the
     * result does not depend on how images are shared out. */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t image = 0; image < psf->num_images; image++) {
        int thread = omp_get_thread_num();
        apply_one_image(psf, image, input, output, adjoint, reals + (size_t)thread * real_size,
                        spectra + (size_t)thread * spectrum_size);
    }
    spart_free(&psf->allocator, reals);
    spart_free(&psf->allocator, spectra);
    return 0;
}
