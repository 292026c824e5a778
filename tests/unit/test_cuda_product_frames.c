/*
 * Products over the frames of a batch on the device (label `cuda`; issue
 * 26): F vectors read interleaved (x copied into one tile of 4 for 2 to 4
 * vectors, tiles of 8 beyond), each vector the host's bits, on rows of
 * every kind (power-law lengths, empty rows, rows of several chunks, every
 * value and column type and group size); the library taking the tile of 4
 * for vectors larger than the L2 cache; MART's fused backprojection and
 * update reading the backward matrix once for 4 frames, each frame the
 * host's one-frame update, stopped frames untouched.
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
#include <cuda_runtime_api.h>

#include "device/device_internal.h"
#include "operator/csr_product_designs.h"
#include "operator/regridder_cuda.h"
#include "operator/regridder_internal.h"
#include "spart.h"
#include "spart/mart_steps.h"
#include "test_cuda_util.h"
#include "test_cuda_product_util.h"

/* Row lengths of a power law: most rows short, a few very long (up to
 * `longest`, several chunks), a tenth empty. */
static int64_t *power_law_lengths(int64_t rows, int64_t longest, uint64_t seed)
{
    int64_t *lengths = malloc((size_t)rows * sizeof(int64_t));
    uint64_t state = seed;
    for (int64_t r = 0; r < rows; r++) {
        double u = next_uniform(&state);
        /* P(length > L) ~ 1 / L: u^-1 - 1, capped */
        double length = u < 0.1 ? 0.0 : 1.0 / (1.0 - next_uniform(&state)) - 1.0;
        lengths[r] = length > (double)longest ? longest : (int64_t)length;
    }
    return lengths;
}

/* The product of `device` over `vectors` vectors in C order through
 * spart_cuda_csr_product_c_order with x in tiles (interleaved), equal to
 * the host's product bit for bit. */
static void assert_interleaved_equals_host(fixture *f, const spart_regridder *host,
                                           const spart_regridder *device, int64_t vectors,
                                           uint64_t seed, const char *what)
{
    const int64_t rows = host->csr.num_rows, columns = host->csr.num_columns;
    spart_shape shape = {2, {vectors, columns}};
    double *x = spread_values(vectors * columns, seed);
    double *expected = host_product(f, host, x, shape);
    double *x_device = device_copy(x, vectors * columns);
    double *y_device = device_poisoned(vectors * rows);
    double *tiles =
        device_alloc((size_t)spart_device_x_tiles_doubles(vectors, columns) * sizeof(double));
    check_cuda(cudaMemset(tiles, 0xff,
                          (size_t)spart_device_x_tiles_doubles(vectors, columns) * sizeof(double)),
               "cudaMemset");
    double *chunk_sums =
        device_alloc((size_t)(device->device.num_long_chunks * vectors + 1) * sizeof(double));
    spart_device_csr matrix = spart_regridder_device_matrix(device);
    check_cuda((cudaError_t)spart_cuda_csr_product_c_order(&matrix, x_device, vectors, tiles,
                                                           y_device, chunk_sums, NULL),
               "the interleaved product");
    double *got = copy_back(y_device, vectors * rows);
    char sentence[160];
    snprintf(sentence, sizeof sentence, "%s, %lld vectors interleaved", what, (long long)vectors);
    assert_same_bits(got, expected, vectors * rows, sentence);
    free(x);
    free(expected);
    free(got);
    check_cuda(cudaFree(x_device), "cudaFree");
    check_cuda(cudaFree(y_device), "cudaFree");
    check_cuda(cudaFree(tiles), "cudaFree");
    check_cuda(cudaFree(chunk_sums), "cudaFree");
}

static void check_every_width(fixture *f, const spart_regridder *host, const char *what,
                              uint64_t seed)
{
    spart_regridder *device = to_device(f, host);
    const int64_t widths[] = {2, 3, 4, 5, 8, 11};
    for (int w = 0; w < 6; w++) {
        assert_interleaved_equals_host(f, host, device, widths[w], seed + (uint64_t)w, what);
    }
    spart_regridder_free(device);
}

static void power_law_rows_with_huge_and_empty_rows_equal_the_host(void **state)
{
    fixture *f = *state;
    /* long rows of up to 3 chunks beside rows of a few entries */
    for (int float32 = 0; float32 <= 1; float32++) {
        for (int int64_columns = 0; int64_columns <= 1; int64_columns++) {
            int64_t *lengths = power_law_lengths(5000, 3 * SPART_CHUNK_LENGTH + 17, 300);
            lengths[17] = 2 * SPART_CHUNK_LENGTH + 5;
            lengths[4999] = 0;
            spart_regridder *host =
                csr_regridder(f->context, 5000, 70000, lengths, float32, int64_columns, 301);
            char what[96];
            snprintf(what, sizeof what, "power-law rows (float32 %d, int64 columns %d, g %d)",
                     float32, int64_columns, host->plan.group_size);
            check_every_width(f, host, what, 302);
            spart_regridder_free(host);
            free(lengths);
        }
    }
}

static void rows_of_every_group_size_equal_the_host(void **state)
{
    fixture *f = *state;
    /* means of 1 (g 1), 3 (g 2), 9, 20, 40 and 110 (g 32, the forward's) */
    const int64_t means[] = {1, 3, 9, 20, 40, 110};
    for (int k = 0; k < 6; k++) {
        for (int float32 = 0; float32 <= 1; float32++) {
            spart_regridder *host =
                random_regridder(f->context, 3000, 50000, means[k], float32, 0, 400 + (uint64_t)k);
            char what[96];
            snprintf(what, sizeof what, "rows of about %lld entries (float32 %d, g %d)",
                     (long long)means[k], float32, host->plan.group_size);
            check_every_width(f, host, what, 410 + (uint64_t)k);
            spart_regridder_free(host);
        }
    }
}

static void an_operator_without_entries_gives_zeros_interleaved(void **state)
{
    fixture *f = *state;
    int64_t lengths[64] = {0};
    spart_regridder *host = csr_regridder(f->context, 64, 100, lengths, 1, 0, 500);
    check_every_width(f, host, "no entries", 501);
    spart_regridder_free(host);
}

/* Vectors larger than the L2 cache: the library's own product (through
 * spart_regridder_apply) takes the tile of 4 for 2 to 4 of them, sized in
 * its workspace, and gives the host's bits. */
static void large_vectors_take_the_tile_of_four_through_the_library(void **state)
{
    fixture *f = *state;
    const int64_t columns = 4500000; /* 2 vectors: 72 MB */
    spart_regridder *host = random_regridder(f->context, 2000, columns, 100, 1, 0, 600);
    spart_regridder *device = to_device(f, host);
    for (int64_t vectors = 2; vectors <= 4; vectors++) {
        spart_shape shape = {2, {vectors, columns}};
        size_t bytes = 0;
        assert_int_equal(spart_regridder_workspace_size(f->context, device, &shape, &bytes),
                         SPART_OK);
        assert_true(bytes >= (size_t)(4 * columns) * sizeof(double));
        char what[64];
        snprintf(what, sizeof what, "%lld vectors of 4.5 M values", (long long)vectors);
        (void)assert_device_equals_host(f, host, device, vectors, 601 + (uint64_t)vectors, what);
    }
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* The benchmark's other shapes of the tiles' kernels
 * (spart_cuda_csr_product_tile_design) give the host's bits too. */
static void the_benchmarks_tile_designs_equal_the_host(void **state)
{
    fixture *f = *state;
    spart_regridder *host = random_regridder(f->context, 2500, 40000, 110, 1, 0, 650);
    assert_int_equal(host->plan.group_size, 32);
    spart_regridder *device = to_device(f, host);
    spart_device_csr matrix = spart_regridder_device_matrix(device);
    const int64_t columns = host->csr.num_columns, rows = host->csr.num_rows;
    const int64_t widths[] = {3, 4, 6, 8};
    for (int w = 0; w < 4; w++) {
        const int64_t vectors = widths[w];
        spart_shape shape = {2, {vectors, columns}};
        double *x = spread_values(vectors * columns, 651 + (uint64_t)w);
        double *expected = host_product(f, host, x, shape);
        double *x_device = device_copy(x, vectors * columns);
        double *tiles =
            device_alloc((size_t)spart_device_x_tiles_doubles(vectors, columns) * sizeof(double));
        check_cuda(
            (cudaError_t)(vectors <= 4
                              ? spart_cuda_pack_x4(x_device, columns, vectors, tiles, NULL)
                              : spart_cuda_pack_tiles(x_device, columns, vectors, tiles, NULL)),
            "packing");
        for (int design = 0; design <= 2; design++) {
            double *y_device = device_poisoned(vectors * rows);
            check_cuda((cudaError_t)spart_cuda_csr_product_tile_design(
                           &matrix, tiles, vectors, y_device, NULL, design, NULL),
                       "a design's product");
            double *got = copy_back(y_device, vectors * rows);
            char what[64];
            snprintf(what, sizeof what, "design %d, %lld vectors", design, (long long)vectors);
            assert_same_bits(got, expected, vectors * rows, what);
            free(got);
            check_cuda(cudaFree(y_device), "cudaFree");
        }
        free(x);
        free(expected);
        check_cuda(cudaFree(x_device), "cudaFree");
        check_cuda(cudaFree(tiles), "cudaFree");
    }
    spart_regridder_free(device);
    spart_regridder_free(host);
}

/* ---- MART's fused update over frames ---- */

/* A backward operator of `channels` x scene_size rows (row c * scene_size
 * + v) of about `mean` entries, on the host. */
static spart_regridder *backward_operator(fixture *f, int64_t channels, int64_t scene_size,
                                          int64_t images, int64_t mean, int float32, uint64_t seed)
{
    int64_t *lengths = random_lengths(channels * scene_size, mean, seed);
    spart_regridder *host =
        csr_regridder(f->context, channels * scene_size, images, lengths, float32, 0, seed + 1);
    free(lengths);
    return host;
}

/* The device's update of `frames` frames in one call (4 frames a pass)
 * equals the host's one-frame update of each, and leaves the stopped
 * frames (every third) as they were. */
static void check_update_frames(fixture *f, const spart_regridder *host, int64_t channels,
                                int64_t frames, double gamma, uint64_t seed, const char *what)
{
    spart_regridder *device = to_device(f, host);
    const int64_t images = host->csr.num_columns;
    const int64_t scene_size = host->csr.num_rows / channels;
    double *image = spread_values(frames * images, seed);
    double *observed = spread_values(frames * channels * scene_size, seed + 1);
    double *scenes = malloc((size_t)(frames * scene_size) * sizeof(double));
    uint64_t s = seed + 2;
    for (int64_t k = 0; k < frames * scene_size; k++) {
        scenes[k] = 0.5 + next_uniform(&s);
    }
    spart_mart_run_state *states = calloc((size_t)frames, sizeof *states);
    for (int64_t k = 0; k < frames; k++) {
        states[k].stopped = k % 3 == 2 ? 1 : 0;
    }
    /* the host, frame by frame */
    double *expected = malloc((size_t)(frames * scene_size) * sizeof(double));
    memcpy(expected, scenes, (size_t)(frames * scene_size) * sizeof(double));
    double *back = malloc((size_t)(channels * scene_size) * sizeof(double));
    for (int64_t k = 0; k < frames; k++) {
        assert_int_equal(
            spart_mart_update_from_images_gated(f->context, host, image + k * images,
                                                observed + k * channels * scene_size, channels,
                                                gamma, expected + k * scene_size, back, states + k),
            SPART_OK);
    }
    /* the device, all frames at once */
    double *d_image = device_copy(image, frames * images);
    double *d_observed = device_copy(observed, frames * channels * scene_size);
    double *d_scenes = device_copy(scenes, frames * scene_size);
    spart_mart_run_state *d_states = device_alloc((size_t)frames * sizeof *states);
    check_cuda(
        cudaMemcpy(d_states, states, (size_t)frames * sizeof *states, cudaMemcpyHostToDevice),
        "cudaMemcpy");
    assert_int_equal(spart_mart_update_from_images_frames(f->context, device, d_image, d_observed,
                                                          frames, channels, gamma, d_scenes, NULL,
                                                          NULL, 0, d_states),
                     SPART_OK);
    double *got = copy_back(d_scenes, frames * scene_size);
    assert_same_bits(got, expected, frames * scene_size, what);
    for (int64_t k = 2; k < frames; k += 3) {
        assert_memory_equal(got + k * scene_size, scenes + k * scene_size,
                            (size_t)scene_size * sizeof(double));
    }
    free(image);
    free(observed);
    free(scenes);
    free(states);
    free(expected);
    free(back);
    free(got);
    check_cuda(cudaFree(d_image), "cudaFree");
    check_cuda(cudaFree(d_observed), "cudaFree");
    check_cuda(cudaFree(d_scenes), "cudaFree");
    check_cuda(cudaFree(d_states), "cudaFree");
    spart_regridder_free(device);
}

static void the_fused_update_of_many_frames_equals_the_host_frame_by_frame(void **state)
{
    fixture *f = *state;
    /* rows of about 1, 2, 8 and 40 entries (g 1, 2, 8 and 32); the
     * single power (gamma 0.7 with 4 channels) and the per-channel form
     * (gamma 2); 2, 4, 5 and 9 frames (tiles of 4 with padding) */
    const int64_t means[] = {1, 2, 8, 40};
    const int64_t frame_counts[] = {2, 4, 5, 9};
    const double gammas[] = {0.7, 2.0};
    for (int k = 0; k < 4; k++) {
        for (int float32 = 0; float32 <= 1; float32++) {
            spart_regridder *host =
                backward_operator(f, 4, 700, 3000, means[k], float32, 700 + (uint64_t)k);
            for (int n = 0; n < 4; n++) {
                for (int g = 0; g < 2; g++) {
                    char what[128];
                    snprintf(what, sizeof what,
                             "fused update, rows of about %lld (g %d), float32 %d, %lld frames, "
                             "gamma %g",
                             (long long)means[k], host->plan.group_size, float32,
                             (long long)frame_counts[n], gammas[g]);
                    check_update_frames(f, host, 4, frame_counts[n], gammas[g],
                                        710 + (uint64_t)(k * 8 + n * 2 + g), what);
                }
            }
            spart_regridder_free(host);
        }
    }
}

/* The benchmark's fused update whose images are first packed in tiles
 * of 4 (spart_cuda_mart_backproject_update_frames_packed) equals the
 * library's, frame for frame (float32 values, int32 columns). */
static void the_benchmarks_packed_update_equals_the_librarys(void **state)
{
    fixture *f = *state;
    const int64_t means[] = {1, 2, 8, 40};
    for (int k = 0; k < 4; k++) {
        const int64_t channels = 4, scene_size = 600, frames = 7;
        spart_regridder *host =
            backward_operator(f, channels, scene_size, 2500, means[k], 1, 900 + (uint64_t)k);
        spart_regridder *device = to_device(f, host);
        spart_device_csr matrix = spart_regridder_device_matrix(device);
        const int64_t images = host->csr.num_columns;
        double *image = spread_values(frames * images, 910 + (uint64_t)k);
        double *observed = spread_values(frames * channels * scene_size, 920 + (uint64_t)k);
        double *scenes = malloc((size_t)(frames * scene_size) * sizeof(double));
        uint64_t s = 930 + (uint64_t)k;
        for (int64_t i = 0; i < frames * scene_size; i++) {
            scenes[i] = 0.5 + next_uniform(&s);
        }
        double *d_image = device_copy(image, frames * images);
        double *d_observed = device_copy(observed, frames * channels * scene_size);
        double *d_library = device_copy(scenes, frames * scene_size);
        double *d_packed = device_copy(scenes, frames * scene_size);
        double *d_x4 = device_alloc((size_t)(8 * images) * sizeof(double));
        check_cuda((cudaError_t)spart_cuda_mart_backproject_update_frames(
                       &matrix, d_image, d_observed, d_library, frames, channels, scene_size, 0.7,
                       NULL, NULL, 0, NULL),
                   "the library's update");
        check_cuda((cudaError_t)spart_cuda_mart_backproject_update_frames_packed(
                       &matrix, d_image, d_x4, d_observed, d_packed, frames, channels, scene_size,
                       0.7, NULL),
                   "the packed update");
        double *library = copy_back(d_library, frames * scene_size);
        double *packed = copy_back(d_packed, frames * scene_size);
        assert_same_bits(packed, library, frames * scene_size, "the packed fused update");
        free(image);
        free(observed);
        free(scenes);
        free(library);
        free(packed);
        check_cuda(cudaFree(d_image), "cudaFree");
        check_cuda(cudaFree(d_observed), "cudaFree");
        check_cuda(cudaFree(d_library), "cudaFree");
        check_cuda(cudaFree(d_packed), "cudaFree");
        check_cuda(cudaFree(d_x4), "cudaFree");
        spart_regridder_free(device);
        spart_regridder_free(host);
    }
}

static void three_channels_and_one_channel_update_as_the_host(void **state)
{
    fixture *f = *state;
    const int64_t channel_counts[] = {1, 3};
    for (int c = 0; c < 2; c++) {
        spart_regridder *host =
            backward_operator(f, channel_counts[c], 513, 900, 3, 1, 800 + (uint64_t)c);
        check_update_frames(f, host, channel_counts[c], 6, 0.9, 810 + (uint64_t)c,
                            channel_counts[c] == 1 ? "one channel" : "three channels");
        spart_regridder_free(host);
    }
}

#define TEST(name) cmocka_unit_test(name)

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    const char *skip_pattern = getenv("SPART_CUDA_TEST_SKIP");
    if (skip_pattern != NULL && skip_pattern[0] != '\0') {
        cmocka_set_skip_filter(skip_pattern);
    }
    const struct CMUnitTest tests[] = {
        TEST(power_law_rows_with_huge_and_empty_rows_equal_the_host),
        TEST(rows_of_every_group_size_equal_the_host),
        TEST(an_operator_without_entries_gives_zeros_interleaved),
        TEST(large_vectors_take_the_tile_of_four_through_the_library),
        TEST(the_fused_update_of_many_frames_equals_the_host_frame_by_frame),
        TEST(three_channels_and_one_channel_update_as_the_host),
        TEST(the_benchmarks_tile_designs_equal_the_host),
        TEST(the_benchmarks_packed_update_equals_the_librarys),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
