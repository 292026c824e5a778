/*
 * host/mart_steps.c: the steps of the MART iteration on the host, twin of
 * kernels/mart_steps.cu (same operations, same order; see
 * src/mart/mart_steps.h for the order of the sums).
 */
#include <float.h>
#include <math.h>

/* The power functions inlined into each caller, the AVX2 clones of the
 * update below included: called out of line, the general power (exp and
 * log) ran as baseline SSE code between AVX2 loops, and the switches
 * between the two cost 6 times its arithmetic (250 against 39 ns a voxel
 * for gamma 0.3 with 4 channels). The same operations, so the same bits. */
#if defined(__GNUC__)
#define SPART_MATH_FUNCTION static inline __attribute__((always_inline))
#endif
#include "mart/mart_math.h"
#include "mart/mart_steps.h"
#include "operator/regridder_internal.h"

void spart_mart_host_clamp(double *values, int64_t n, int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        values[i] = spart_mart_clamped(values[i]);
    }
}

void spart_mart_host_noise_widths(double *images, double *widths, int64_t n, double gain,
                                  double read_variance, int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        double d = spart_mart_clamped(images[i]);
        images[i] = d;
        widths[i] = spart_mart_width(d, gain, read_variance);
    }
}

/* lane l += lane l + h, h = 16, ..., 1, for `count` quantities side by side
 * (lanes[q][l]); the chunk's sums land in lanes[q][0]. */
static void combine_lanes(double lanes[][SPART_MART_LANES], int count)
{
    for (int h = SPART_MART_LANES / 2; h >= 1; h /= 2) {
        for (int q = 0; q < count; q++) {
            for (int l = 0; l < h; l++) {
                lanes[q][l] = lanes[q][l] + lanes[q][l + h];
            }
        }
    }
}

/* Pass 1 of one channel: sum of z^2 over pixels of nonzero width, their
 * count, sum of predicted and of residuals. */
static void merits_pass1(const double *observed, const double *predicted, const double *widths,
                         int64_t n, double *sums)
{
    for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
        sums[q] = 0.0;
    }
    for (int64_t start = 0; start < n; start += SPART_MART_CHUNK) {
        int64_t end = start + SPART_MART_CHUNK < n ? start + SPART_MART_CHUNK : n;
        double lanes[SPART_MART_PASS_SUMS][SPART_MART_LANES] = {{0.0}};
        for (int64_t p = start; p < end; p++) {
            int l = (int)((p - start) % SPART_MART_LANES);
            double residual = observed[p] - predicted[p];
            if (widths[p] != 0.0) {
                double z = residual / widths[p];
                lanes[0][l] = lanes[0][l] + z * z;
                lanes[1][l] = lanes[1][l] + 1.0;
            }
            lanes[2][l] = lanes[2][l] + predicted[p];
            lanes[3][l] = lanes[3][l] + residual;
        }
        combine_lanes(lanes, SPART_MART_PASS_SUMS);
        for (int q = 0; q < SPART_MART_PASS_SUMS; q++) {
            sums[q] = sums[q] + lanes[q][0];
        }
    }
}

/* Pass 2 of one channel: the centred cross product and squares. */
static void merits_pass2(const double *observed, const double *predicted, int64_t n,
                         double mean_predicted, double mean_residual, double *sums)
{
    for (int q = 0; q < 3; q++) {
        sums[q] = 0.0;
    }
    for (int64_t start = 0; start < n; start += SPART_MART_CHUNK) {
        int64_t end = start + SPART_MART_CHUNK < n ? start + SPART_MART_CHUNK : n;
        double lanes[3][SPART_MART_LANES] = {{0.0}};
        for (int64_t p = start; p < end; p++) {
            int l = (int)((p - start) % SPART_MART_LANES);
            double de = predicted[p] - mean_predicted;
            double dr = (observed[p] - predicted[p]) - mean_residual;
            lanes[0][l] = lanes[0][l] + de * dr;
            lanes[1][l] = lanes[1][l] + de * de;
            lanes[2][l] = lanes[2][l] + dr * dr;
        }
        combine_lanes(lanes, 3);
        for (int q = 0; q < 3; q++) {
            sums[q] = sums[q] + lanes[q][0];
        }
    }
}

void spart_mart_host_merits(const double *observed, const double *predicted, const double *widths,
                            int64_t num_channel, int64_t image_size, double *chi2,
                            double *correlation, int threads)
{
    double n = (double)image_size;
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (image_size > 4096)
    for (int64_t c = 0; c < num_channel; c++) {
        int64_t offset = c * image_size;
        double first[SPART_MART_PASS_SUMS];
        merits_pass1(observed + offset, predicted + offset, widths + offset, image_size, first);
        chi2[c] = first[1] > 0.0 ? first[0] / first[1] : NAN;
        double mean_predicted = first[2] / n;
        double mean_residual = first[3] / n;
        double second[3];
        merits_pass2(observed + offset, predicted + offset, image_size, mean_predicted,
                     mean_residual, second);
        double covariance = second[0] / n;
        double deviation_predicted = sqrt(second[1] / n);
        double deviation_residual = sqrt(second[2] / n);
        correlation[c] = covariance / (deviation_predicted * deviation_residual);
    }
}

void spart_mart_host_flat_guess(const double *backprojected, int64_t num_channel,
                                int64_t scene_size, double *scene)
{
    double channels = (double)num_channel;
    double total = 0.0;
    for (int64_t start = 0; start < scene_size; start += SPART_MART_CHUNK) {
        int64_t end = start + SPART_MART_CHUNK < scene_size ? start + SPART_MART_CHUNK : scene_size;
        double lanes[1][SPART_MART_LANES] = {{0.0}};
        for (int64_t v = start; v < end; v++) {
            double sum = 0.0;
            for (int64_t c = 0; c < num_channel; c++) {
                sum = sum + backprojected[c * scene_size + v];
            }
            int l = (int)((v - start) % SPART_MART_LANES);
            lanes[0][l] = lanes[0][l] + sum / channels;
        }
        combine_lanes(lanes, 1);
        total = total + lanes[0][0];
    }
    double mean = total / (double)scene_size;
    for (int64_t v = 0; v < scene_size; v++) {
        scene[v] = mean;
    }
}

/* ---- the update, in blocks that the compiler can vectorise ----
 * Per voxel the operations and their order are spart_mart_correction's
 * (src/mart/mart_math.h), so the bits are the device's; only the loops are
 * turned inside out: a block of voxels at a time, channel by channel, with
 * the power's special cases chosen once per call instead of per value. */

enum { UPDATE_BLOCK = 256 };

/* The block kernel is compiled three times, for AVX-512 (x86-64-v4), AVX2
 * and the baseline, and the power loops are inlined into each clone. The
 * AVX-512 clone does the gamma-1/2 arithmetic in 7.3 ns a voxel against
 * AVX2's 7.9 (bench_mart_host, one thread in cache, the 2-core development
 * machine): the divisions and square roots bound both. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define UPDATE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define UPDATE_INLINE static inline __attribute__((always_inline))
#else
#define UPDATE_CLONES
#define UPDATE_INLINE static inline
#endif

/* The exponents of one update, chosen once per call (src/mart/mart_math.h):
 * per_channel says whether the corrections take ctis's per-channel form
 * (ratio^gamma, then the product^inverse_channels) or the product of the
 * ratios to the single power `exponent` = gamma / N. */
typedef struct update_powers {
    double gamma;
    double inverse_channels;
    double exponent;
    int per_channel;
    double ratio_low, ratio_high; /* the single power's range of ratios */
} update_powers;

static update_powers powers_of(double gamma, int64_t num_channel)
{
    update_powers powers;
    powers.gamma = gamma;
    powers.inverse_channels = 1.0 / (double)num_channel;
    powers.exponent = spart_mart_voxel_exponent(gamma, powers.inverse_channels);
    powers.per_channel = spart_mart_per_channel_form(gamma, powers.inverse_channels);
    powers.ratio_low = spart_mart_single_ratio_low(num_channel);
    powers.ratio_high = spart_mart_single_ratio_high(num_channel);
    return powers;
}

/* values[i] = values[i]^y, y one of spart_mart_pow's exact cases or not. */
UPDATE_INLINE void power_in_place(double *values, int count, double y)
{
    if (y == 1.0) {
        return;
    }
    if (y == 2.0) {
        for (int i = 0; i < count; i++) {
            values[i] = values[i] * values[i];
        }
    } else if (y == 0.5) {
        for (int i = 0; i < count; i++) {
            values[i] = sqrt(values[i]);
        }
    } else if (y == 0.25) {
        for (int i = 0; i < count; i++) {
            values[i] = sqrt(sqrt(values[i]));
        }
    } else if (y == 0.125) {
        for (int i = 0; i < count; i++) {
            values[i] = sqrt(sqrt(sqrt(values[i])));
        }
    } else {
        for (int i = 0; i < count; i++) {
            values[i] = spart_mart_pow(values[i], y);
        }
    }
}

/* The ratio observed / max(predicted, 0) with NaN and +-inf replaced by 1:
 * the test keeps finite values and puts 1 for NaN and +-inf, as
 * spart_mart_ratio's three comparisons do (NaN fails every comparison). */
UPDATE_INLINE double block_ratio(double observed, double predicted)
{
    double clamped = predicted < 0.0 ? 0.0 : predicted;
    double r = observed / clamped;
    return fabs(r) <= DBL_MAX ? r : 1.0;
}

/* product[i] *= ratio[i], or ratio[i]^gamma in the per-channel form, for
 * one channel's block. A ratio outside the single power's range
 * (spart_mart_single_power_ratio) enters the product as NaN, which the
 * product keeps to the end (NaN times anything is NaN), and which marks
 * the voxel for the per-channel form: in range, ratios are finite and
 * their products finite, never NaN. Inlined with count a constant (a full
 * block), the loops have a known trip count and the compiler vectorises
 * them even at -O2. */
UPDATE_INLINE void multiply_channel_ratio(double *restrict product, const double *restrict observed,
                                          const double *restrict predicted, int count,
                                          const update_powers *powers)
{
    if (powers->per_channel) {
        double ratio[UPDATE_BLOCK];
        for (int i = 0; i < count; i++) {
            ratio[i] = block_ratio(observed[i], predicted[i]);
        }
        power_in_place(ratio, count, powers->gamma);
        for (int i = 0; i < count; i++) {
            product[i] = product[i] * ratio[i];
        }
        return;
    }
    double low = powers->ratio_low, high = powers->ratio_high;
    for (int i = 0; i < count; i++) {
        double r = block_ratio(observed[i], predicted[i]);
        product[i] = product[i] * (spart_mart_single_power_ratio(r, low, high) ? r : NAN);
    }
}

/* product[i] = 1 for a block's voxels. */
UPDATE_INLINE void start_products(double *product, int count)
{
    for (int i = 0; i < count; i++) {
        product[i] = 1.0;
    }
}

/* product[i] = product[i] to the voxel's power: the corrections, except
 * the NaN of voxels marked for the per-channel form. */
UPDATE_INLINE void power_products(double *product, int count, const update_powers *powers)
{
    power_in_place(product, count,
                   powers->per_channel ? powers->inverse_channels : powers->exponent);
}

/* Whether any voxel of the block is marked for the per-channel form (a
 * NaN correction), in one vectorised pass: the scalar search runs only
 * where it will find one. */
UPDATE_INLINE int any_marked(const double *correction, int count)
{
    int marked = 0;
    for (int i = 0; i < count; i++) {
        marked = marked | (correction[i] != correction[i]);
    }
    return marked;
}

/* scene[i] *= correction[i]. */
UPDATE_INLINE void multiply_scene(double *restrict scene, const double *restrict correction,
                                  int count)
{
    for (int i = 0; i < count; i++) {
        scene[i] = scene[i] * correction[i];
    }
}

/* The correction of `count` voxels multiplied into the scene, from the
 * stored backprojections (`stride` apart per channel). */
UPDATE_INLINE void update_voxels(double *restrict scene, const double *observed_back,
                                 const double *predicted_back, int64_t stride, int count,
                                 int64_t num_channel, const update_powers *powers)
{
    double product[UPDATE_BLOCK];
    start_products(product, count);
    for (int64_t c = 0; c < num_channel; c++) {
        multiply_channel_ratio(product, observed_back + c * stride, predicted_back + c * stride,
                               count, powers);
    }
    power_products(product, count, powers);
    if (!powers->per_channel && any_marked(product, count)) {
        for (int i = 0; i < count; i++) {
            if (product[i] != product[i]) {
                product[i] = spart_mart_correction_per_channel(
                    observed_back + i, predicted_back + i, stride, num_channel, powers->gamma,
                    powers->inverse_channels);
            }
        }
    }
    multiply_scene(scene, product, count);
}

UPDATE_CLONES static void update_block(double *restrict scene, const double *observed_back,
                                       const double *predicted_back, int64_t stride, int count,
                                       int64_t num_channel, const update_powers *powers)
{
    if (count == UPDATE_BLOCK) {
        update_voxels(scene, observed_back, predicted_back, stride, UPDATE_BLOCK, num_channel,
                      powers);
    } else {
        update_voxels(scene, observed_back, predicted_back, stride, count, num_channel, powers);
    }
}

/* The per-channel correction of voxel `voxel`, its backprojections made
 * again row by row (rows c * stride + voxel): for the rare voxels that
 * leave the single power's range, when the block's rows are gone.
 * A row's sum does not depend on the rows computed with it. */
static double backproject_correction_per_channel(const double *observed_back,
                                                 const spart_backward_rows *backward,
                                                 const double *images, int64_t voxel,
                                                 int64_t stride, int64_t num_channel,
                                                 const update_powers *powers)
{
    double product = 1.0;
    for (int64_t c = 0; c < num_channel; c++) {
        int64_t row = c * stride + voxel;
        double predicted;
        spart_host_csr_product_rows(backward->csr, backward->plan, images, &predicted, row, row + 1,
                                    (spart_simd_level)backward->level);
        product =
            product * spart_mart_ratio_power(observed_back[c * stride], predicted, powers->gamma);
    }
    return spart_mart_pow(product, powers->inverse_channels);
}

/* The same for voxels [first, first + count), their backprojections made
 * here, channel by channel, as rows c * stride + first, ... of the
 * backward product of `images`. */
UPDATE_INLINE void backproject_update_voxels(double *restrict scene, const double *observed_back,
                                             const spart_backward_rows *backward,
                                             const double *images, int64_t first, int count,
                                             int64_t stride, int64_t num_channel,
                                             const update_powers *powers)
{
    double product[UPDATE_BLOCK];
    double predicted[UPDATE_BLOCK];
    start_products(product, count);
    for (int64_t c = 0; c < num_channel; c++) {
        int64_t row = c * stride + first;
        spart_host_csr_product_rows(backward->csr, backward->plan, images, predicted, row,
                                    row + count, (spart_simd_level)backward->level);
        multiply_channel_ratio(product, observed_back + c * stride, predicted, count, powers);
    }
    power_products(product, count, powers);
    if (!powers->per_channel && any_marked(product, count)) {
        for (int i = 0; i < count; i++) {
            if (product[i] != product[i]) {
                product[i] = backproject_correction_per_channel(
                    observed_back + i, backward, images, first + i, stride, num_channel, powers);
            }
        }
    }
    multiply_scene(scene, product, count);
}

UPDATE_CLONES static void backproject_update_block(double *restrict scene,
                                                   const double *observed_back,
                                                   const spart_backward_rows *backward,
                                                   const double *images, int64_t first, int count,
                                                   int64_t stride, int64_t num_channel,
                                                   const update_powers *powers)
{
    if (count == UPDATE_BLOCK) {
        backproject_update_voxels(scene, observed_back, backward, images, first, UPDATE_BLOCK,
                                  stride, num_channel, powers);
    } else {
        backproject_update_voxels(scene, observed_back, backward, images, first, count, stride,
                                  num_channel, powers);
    }
}

void spart_mart_host_backproject_update(double *scene, const spart_backward_rows *backward,
                                        const double *images, const double *observed_back,
                                        int64_t num_channel, int64_t scene_size, double gamma,
                                        int threads)
{
    update_powers powers = powers_of(gamma, num_channel);
    int64_t blocks = (scene_size + UPDATE_BLOCK - 1) / UPDATE_BLOCK;
#pragma omp parallel for num_threads(threads) schedule(static) if (scene_size > 4096)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t first = b * UPDATE_BLOCK;
        int count = (int)(scene_size - first < UPDATE_BLOCK ? scene_size - first : UPDATE_BLOCK);
        backproject_update_block(scene + first, observed_back + first, backward, images, first,
                                 count, scene_size, num_channel, &powers);
    }
}

void spart_mart_host_update(double *scene, const double *observed_back,
                            const double *predicted_back, int64_t num_channel, int64_t scene_size,
                            double gamma, int threads)
{
    update_powers powers = powers_of(gamma, num_channel);
    int64_t blocks = (scene_size + UPDATE_BLOCK - 1) / UPDATE_BLOCK;
#pragma omp parallel for num_threads(threads) schedule(static) if (scene_size > 16384)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t start = b * UPDATE_BLOCK;
        int count = (int)(scene_size - start < UPDATE_BLOCK ? scene_size - start : UPDATE_BLOCK);
        update_block(scene + start, observed_back + start, predicted_back + start, scene_size,
                     count, num_channel, &powers);
    }
}
