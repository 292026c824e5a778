/*
 * kernels/psf_fft.cu: the FFT work of the PSF operator on a CUDA device
 * (cuFFT), twin of host/psf_fft.c: the same zero padding (image at offset
 * 0 and result read at the kernel's centre for the convolution, the other
 * way round for the correlation), the same spectra and products, the same
 * rule that flushes outputs within the FFT's rounding of zero to 0. The
 * transforms are cuFFT's rather than FFTW's, so results agree with the
 * host's to rounding, not bit for bit (src/psf/psf_device.h).
 *
 * Everything is enqueued on the caller's stream; no atomics.
 */
#include <cuda_runtime.h>
#include <cufft.h>

#include <stdint.h>

#include "psf/psf_device.h"

namespace
{

constexpr int threads_per_block = 256;

int64_t blocks_for(int64_t n)
{
    int64_t blocks = (n + threads_per_block - 1) / threads_per_block;
    return blocks < 1 ? 1 : (blocks > 65535 * 16 ? 65535 * 16 : blocks);
}

/* The padded images: each image at (offset_y, offset_x) of its pad_y x
 * pad_x frame, zeros elsewhere (every value of the frame is written). */
__global__ void pad_kernel(const double *input, double *padded, int64_t num_images, int64_t ny,
                           int64_t nx, int64_t pad_y, int64_t pad_x, int64_t offset_y,
                           int64_t offset_x)
{
    int64_t frame = pad_y * pad_x;
    int64_t n = num_images * frame;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t image = i / frame;
        int64_t rest = i - image * frame;
        int64_t y = rest / pad_x - offset_y;
        int64_t x = rest % pad_x - offset_x;
        int inside = y >= 0 && y < ny && x >= 0 && x < nx;
        padded[i] = inside ? input[(image * ny + y) * nx + x] : 0.0;
    }
}

/* largest[image] = max |input| over the image: one block per image, a
 * tree over shared memory. A maximum is exact in any order. NaN is never
 * larger (as on the host). */
__global__ void largest_kernel(const double *input, int64_t pixels, double *largest)
{
    __shared__ double partial[threads_per_block];
    const double *in = input + (int64_t)blockIdx.x * pixels;
    double value = 0.0;
    for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) {
        double magnitude = fabs(in[p]);
        value = magnitude > value ? magnitude : value;
    }
    partial[threadIdx.x] = value;
    __syncthreads();
    for (int h = threads_per_block / 2; h >= 1; h /= 2) {
        if ((int)threadIdx.x < h) {
            double other = partial[threadIdx.x + h];
            partial[threadIdx.x] = other > partial[threadIdx.x] ? other : partial[threadIdx.x];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        largest[blockIdx.x] = partial[0];
    }
}

/* spectrum *= kernel (convolution) or *= conj(kernel) (correlation), with
 * host/psf_fft.c's operations (no multiply-add: --fmad=false). */
__global__ void multiply_kernel(double2 *spectra, const double2 *kernels,
                                const int64_t *kernel_of_image, int64_t num_images,
                                int64_t spectrum_size, int adjoint)
{
    int64_t n = num_images * spectrum_size;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t image = i / spectrum_size;
        int64_t k = i - image * spectrum_size;
        double2 a = spectra[i];
        double2 b = kernels[kernel_of_image[image] * spectrum_size + k];
        double b_im = adjoint ? -b.y : b.y;
        double2 product;
        product.x = a.x * b.x - a.y * b_im;
        product.y = a.x * b_im + a.y * b.x;
        spectra[i] = product;
    }
}

/* The ny x nx window at (offset_y, offset_x) of each padded frame, values
 * under flush_factor * max|in| * |K|_1 in magnitude made 0 (host/psf_fft.c
 * says why). */
__global__ void window_kernel(const double *padded, double *output, int64_t num_images, int64_t ny,
                              int64_t nx, int64_t pad_y, int64_t pad_x, int64_t offset_y,
                              int64_t offset_x, const double *largest,
                              const double *image_kernel_l1, double flush_factor)
{
    int64_t pixels = ny * nx;
    int64_t n = num_images * pixels;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t image = i / pixels;
        int64_t rest = i - image * pixels;
        int64_t y = rest / nx;
        int64_t x = rest - y * nx;
        double value = padded[(image * pad_y + y + offset_y) * pad_x + x + offset_x];
        double bound = largest[image] * image_kernel_l1[image];
        double threshold = flush_factor * bound;
        output[i] = fabs(value) < threshold ? 0.0 : value;
    }
}

int fail_cuda(spart_cuda_psf_failure *failure, const char *step, cudaError_t error)
{
    failure->step = step;
    failure->cuda_error = (int)error;
    failure->cufft_error = 0;
    return -1;
}

int fail_cufft(spart_cuda_psf_failure *failure, const char *step, cufftResult result)
{
    failure->step = step;
    failure->cuda_error = 0;
    failure->cufft_error = (int)result;
    return -1;
}

/* One batched 2-D plan of `type` for psf's sizes into *handle. */
cufftResult make_plan(const spart_psf_device *psf, cufftType type, int *handle, int *have)
{
    cufftHandle plan;
    cufftResult result = cufftCreate(&plan);
    if (result != CUFFT_SUCCESS) {
        return result;
    }
    *handle = plan;
    *have = 1;
    long long int extents[2] = {(long long int)psf->pad_y, (long long int)psf->pad_x};
    size_t work_bytes = 0;
    /* NULL embeddings: each image's frame (pad_y x pad_x reals) and its
     * spectrum (pad_y x (pad_x / 2 + 1) complex values) lie one after the
     * other, as in the buffers. */
    return cufftMakePlanMany64(plan, 2, extents, NULL, 1, 0, NULL, 1, 0, type,
                               (long long int)psf->num_images, &work_bytes);
}

} // namespace

extern "C" {

const char *spart_cuda_cufft_result_name(int result)
{
    switch ((cufftResult)result) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "an unknown cuFFT result";
    }
}

int spart_cuda_psf_make_plans(spart_psf_device *psf, void *stream, spart_cuda_psf_failure *failure)
{
    cufftResult result = make_plan(psf, CUFFT_D2Z, &psf->plan_forward, &psf->have_forward);
    if (result != CUFFT_SUCCESS) {
        return fail_cufft(failure, "making the forward (D2Z) plan", result);
    }
    result = make_plan(psf, CUFFT_Z2D, &psf->plan_inverse, &psf->have_inverse);
    if (result != CUFFT_SUCCESS) {
        return fail_cufft(failure, "making the inverse (Z2D) plan", result);
    }
    cudaStream_t s = (cudaStream_t)stream;
    size_t frame_bytes = (size_t)(psf->num_images * psf->pad_y * psf->pad_x) * sizeof(double);
    cudaError_t error = cudaMemsetAsync(psf->padded, 0, frame_bytes, s);
    if (error != cudaSuccess) {
        return fail_cuda(failure, "zeroing the working images", error);
    }
    if ((result = cufftSetStream(psf->plan_forward, s)) != CUFFT_SUCCESS ||
        (result = cufftSetStream(psf->plan_inverse, s)) != CUFFT_SUCCESS ||
        (result = cufftExecD2Z(psf->plan_forward, psf->padded,
                               (cufftDoubleComplex *)psf->transformed)) != CUFFT_SUCCESS ||
        (result = cufftExecZ2D(psf->plan_inverse, (cufftDoubleComplex *)psf->transformed,
                               psf->padded)) != CUFFT_SUCCESS) {
        return fail_cufft(failure, "a first run of the plans", result);
    }
    error = cudaStreamSynchronize(s);
    if (error != cudaSuccess) {
        return fail_cuda(failure, "a first run of the plans", error);
    }
    return 0;
}

void spart_cuda_psf_destroy_plans(spart_psf_device *psf)
{
    if (psf->have_forward) {
        (void)cufftDestroy(psf->plan_forward);
        psf->have_forward = 0;
    }
    if (psf->have_inverse) {
        (void)cufftDestroy(psf->plan_inverse);
        psf->have_inverse = 0;
    }
}

int spart_cuda_psf_apply(const spart_psf_device *psf, const double *input, double *output,
                         int adjoint, void *stream, spart_cuda_psf_failure *failure)
{
    cudaStream_t s = (cudaStream_t)stream;
    /* Convolution: image at 0, result read at the centre; correlation: the
     * other way round (host/psf_fft.c). */
    int64_t write_y = adjoint ? psf->centre_y : 0;
    int64_t write_x = adjoint ? psf->centre_x : 0;
    int64_t read_y = adjoint ? 0 : psf->centre_y;
    int64_t read_x = adjoint ? 0 : psf->centre_x;
    int64_t frames = psf->num_images * psf->pad_y * psf->pad_x;
    int64_t pixels = psf->num_images * psf->ny * psf->nx;
    /* Both kernels that read the input run before anything is written to
     * the output, so output may be input. */
    largest_kernel<<<(unsigned)psf->num_images, threads_per_block, 0, s>>>(input, psf->ny * psf->nx,
                                                                           psf->largest);
    pad_kernel<<<(unsigned)blocks_for(frames), threads_per_block, 0, s>>>(
        input, psf->padded, psf->num_images, psf->ny, psf->nx, psf->pad_y, psf->pad_x, write_y,
        write_x);
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) {
        return fail_cuda(failure, "padding the images", error);
    }
    cufftDoubleComplex *spectra = (cufftDoubleComplex *)psf->transformed;
    cufftResult result = cufftSetStream(psf->plan_forward, s);
    if (result == CUFFT_SUCCESS) {
        result = cufftExecD2Z(psf->plan_forward, psf->padded, spectra);
    }
    if (result != CUFFT_SUCCESS) {
        return fail_cufft(failure, "the forward transform (cufftExecD2Z)", result);
    }
    multiply_kernel<<<(unsigned)blocks_for(psf->num_images * psf->spectrum_size), threads_per_block,
                      0, s>>>(spectra, (const double2 *)psf->spectra, psf->kernel_of_image,
                              psf->num_images, psf->spectrum_size, adjoint);
    error = cudaGetLastError();
    if (error != cudaSuccess) {
        return fail_cuda(failure, "multiplying the spectra", error);
    }
    /* Z2D overwrites its input (the working spectra), which is scratch. */
    result = cufftSetStream(psf->plan_inverse, s);
    if (result == CUFFT_SUCCESS) {
        result = cufftExecZ2D(psf->plan_inverse, spectra, psf->padded);
    }
    if (result != CUFFT_SUCCESS) {
        return fail_cufft(failure, "the inverse transform (cufftExecZ2D)", result);
    }
    window_kernel<<<(unsigned)blocks_for(pixels), threads_per_block, 0, s>>>(
        psf->padded, output, psf->num_images, psf->ny, psf->nx, psf->pad_y, psf->pad_x, read_y,
        read_x, psf->largest, psf->image_kernel_l1, psf->flush_factor);
    error = cudaGetLastError();
    if (error != cudaSuccess) {
        return fail_cuda(failure, "reading the windows", error);
    }
    return 0;
}

} // extern "C"
