/*
 * tests/unit/test_cuda_vcs.c: VCS products on a CUDA device give the
 * host's bits (spart/vcs.h, Determinism): every recipe, both formats,
 * both sides, transposed views, float32 and float64, widths 0 to 130, the
 * narrowed (uint16) and wide (int32) index paths, degenerate shapes; the
 * golden digests of test_vcs.c; device bytes below 0.65 of a float32
 * CSR; the refusals. Exits 77 (skipped) without a device unless
 * SPART_REQUIRE_GPU=1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "spart/vcs.h"
#include "test_cuda_util.h"
#include "vcs_test_data.h"

static const int64_t widths[] = {0, 1, 3, 8, 16, 32, 64, 130};
#define N_WIDTHS ((int)(sizeof widths / sizeof widths[0]))

static spart_vcs *make(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                       const int64_t *rows, const int64_t *cols, const double *values,
                       spart_vcs_recipe recipe, spart_vcs_format format)
{
    spart_vcs *vcs = NULL;
    if (spart_vcs_create_from_coo(context, n_rows, n_cols, nnz, rows, cols, values, recipe, format,
                                  &vcs) != SPART_OK) {
        fail_msg("create: %s", spart_context_error(context));
    }
    return vcs;
}

static void *device_copy(const void *host, size_t bytes)
{
    void *device = NULL;
    check_cuda(cudaMalloc(&device, bytes > 0 ? bytes : 1), "cudaMalloc");
    if (bytes > 0) {
        check_cuda(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    return device;
}

/* One product on the host and on the device, compared bit for bit. */
static void compare_product(spart_context *context, spart_vcs *host, spart_vcs *device,
                            int direction, int64_t width, int is_float, int64_t b_len,
                            int64_t out_len, uint64_t seed)
{
    const size_t element = is_float ? sizeof(float) : sizeof(double);
    const size_t nb = (size_t)(b_len * width), no = (size_t)(out_len * width);
    char *b = malloc(nb * element + 8), *out_host = malloc(no * element + 8);
    char *out_device = malloc(no * element + 8);
    uint64_t state = seed;
    for (size_t k = 0; k < nb; k++) {
        const double value = 2.0 * vcs_uniform(&state) - 1.0;
        if (is_float) {
            ((float *)b)[k] = (float)value;
        } else {
            ((double *)b)[k] = value;
        }
    }
    memset(out_host, 0xff, no * element + 8);
    void *b_device = device_copy(b, nb * element);
    void *out_dev = device_copy(out_host, no * element);
    spart_status status_host, status_device;
    if (is_float) {
        status_host = spart_vcs_multiply_float(context, host, (spart_vcs_direction)direction, width,
                                               (const float *)b, (float *)out_host);
        status_device = spart_vcs_multiply_float(context, device, (spart_vcs_direction)direction,
                                                 width, b_device, out_dev);
    } else {
        status_host = spart_vcs_multiply(context, host, (spart_vcs_direction)direction, width,
                                         (const double *)b, (double *)out_host);
        status_device = spart_vcs_multiply(context, device, (spart_vcs_direction)direction, width,
                                           b_device, out_dev);
    }
    if (status_host != SPART_OK || status_device != SPART_OK) {
        fail_msg("multiply: %s", spart_context_error(context));
    }
    if (no > 0) {
        check_cuda(cudaMemcpy(out_device, out_dev, no * element, cudaMemcpyDeviceToHost),
                   "cudaMemcpy");
    }
    for (size_t k = 0; k < no; k++) {
        if (memcmp(out_host + k * element, out_device + k * element, element) != 0) {
            const double h = is_float ? ((float *)out_host)[k] : ((double *)out_host)[k];
            const double d = is_float ? ((float *)out_device)[k] : ((double *)out_device)[k];
            fail_msg("direction %d width %lld float %d [%zu]: host %.17g device %.17g", direction,
                     (long long)width, is_float, k, h, d);
        }
    }
    cudaFree(b_device);
    cudaFree(out_dev);
    free(b);
    free(out_host);
    free(out_device);
}

/* Recipes first_recipe..last_recipe, every format, view, side, type and
 * width of one count matrix. */
static void compare_recipes(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                            const int64_t *rows, const int64_t *cols, const double *values,
                            int all_widths, int first_recipe, int last_recipe)
{
    for (int recipe = first_recipe; recipe <= last_recipe; recipe++) {
        for (int format = 0; format < 2; format++) {
            spart_vcs *host = make(context, n_rows, n_cols, nnz, rows, cols, values,
                                   (spart_vcs_recipe)recipe, (spart_vcs_format)format);
            spart_vcs *device = NULL, *host_t = NULL, *device_t = NULL;
            if (spart_vcs_to_device(context, host, 1, &device, NULL) != SPART_OK) {
                fail_msg("to_device: %s", spart_context_error(context));
            }
            assert_true(spart_vcs_on_device(device));
            assert_int_equal(spart_vcs_transpose(context, host, &host_t), SPART_OK);
            assert_int_equal(spart_vcs_transpose(context, device, &device_t), SPART_OK);
            for (int transposed = 0; transposed < 2; transposed++) {
                const int64_t ar = transposed ? n_cols : n_rows, ac = transposed ? n_rows : n_cols;
                for (int direction = 0; direction < 2; direction++) {
                    for (int w = 0; w < N_WIDTHS; w++) {
                        if (!all_widths && widths[w] != 1 && widths[w] != 16 && widths[w] != 130) {
                            continue;
                        }
                        for (int is_float = 0; is_float < 2; is_float++) {
                            compare_product(context, transposed ? host_t : host,
                                            transposed ? device_t : device, direction, widths[w],
                                            is_float, direction == 0 ? ac : ar,
                                            direction == 0 ? ar : ac,
                                            (uint64_t)(recipe * 1000 + w * 10 + direction));
                        }
                    }
                }
            }
            spart_vcs_free(device_t);
            spart_vcs_free(host_t);
            spart_vcs_free(device);
            spart_vcs_free(host);
        }
    }
}

static void compare_everything(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                               const int64_t *rows, const int64_t *cols, const double *values,
                               int all_widths)
{
    compare_recipes(context, n_rows, n_cols, nnz, rows, cols, values, all_widths, SPART_VCS_RAW,
                    SPART_VCS_PEARSON);
}

/* Random counts (tests/unit/vcs_test_data.h) of n_rows x n_cols at
 * `density`, from `seed`, compared for the recipes first..last (widths 1,
 * 16 and 130, or all). */
static void compare_random(spart_context *context, int64_t n_rows, int64_t n_cols, double density,
                           uint64_t seed, int all_widths, int first_recipe, int last_recipe)
{
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(n_rows, n_cols, density, seed, &nnz, &rows, &cols, &values);
    compare_recipes(context, n_rows, n_cols, nnz, rows, cols, values, all_widths, first_recipe,
                    last_recipe);
    free(rows), free(cols), free(values);
}

/* A small case for compute-sanitizer (SPART_CUDA_TEST_FILTER=small*): two
 * recipes (g once a run, g an entry) on 37 x 23, widths 1, 16 and 130. */
static void small_case_equals_the_host(void **state)
{
    fixture *f = *state;
    compare_random(f->context, 37, 23, 0.3, 5, 0, SPART_VCS_CP10K_LOG1P, SPART_VCS_PARAFAC2);
}

static void the_fixture_equals_the_host(void **state)
{
    fixture *f = *state;
    compare_random(f->context, 300, 90, 0.4, 17, 1, SPART_VCS_RAW, SPART_VCS_PEARSON);
}

/* More than 65,536 columns: int32 indices by rows, uint16 by columns;
 * long columns (g = 32) and short rows. */
static void wide_indices_equal_the_host(void **state)
{
    fixture *f = *state;
    compare_random(f->context, 700, 70000, 0.002, 31, 0, SPART_VCS_RAW, SPART_VCS_PEARSON);
}

static void degenerate_shapes_equal_the_host(void **state)
{
    fixture *f = *state;
    const int64_t shapes[][2] = {{1, 1}, {1, 7}, {5, 1}, {3, 3}, {0, 0}, {0, 4}, {4, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t rows[64], cols[64];
        double values[64];
        int64_t nnz = 0;
        for (int64_t i = 0; i < shapes[s][0]; i++) {
            for (int64_t j = 0; j < shapes[s][1]; j++) {
                if ((i + j) % 2 == 0) {
                    rows[nnz] = i, cols[nnz] = j, values[nnz] = (double)(1 + (i + 2 * j) % 5);
                    nnz++;
                }
            }
        }
        compare_everything(f->context, shapes[s][0], shapes[s][1], nnz, rows, cols, values, 0);
    }
}

/* The digests of test_vcs.c's golden test, computed on the device. */
static void golden_digests_equal_the_host(void **state)
{
    fixture *f = *state;
    const uint64_t golden[] = {0xae253ae4f2b46d86ULL, 0x8e84a9f00f15fd7eULL, 0x4f8ee793dce8a0eaULL,
                               0x85ef52585e6fad9aULL, 0x589223f14496bb18ULL};
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(300, 90, 0.4, 17, &nnz, &rows, &cols, &values);
    double b[300 * 16], out[300 * 16];
    float bf[300 * 16], outf[300 * 16];
    uint64_t s = 99;
    for (int k = 0; k < 300 * 16; k++) {
        b[k] = 2.0 * vcs_uniform(&s) - 1.0;
        bf[k] = (float)b[k];
    }
    double *b_device = device_copy(b, sizeof b);
    float *bf_device = device_copy(bf, sizeof bf);
    double *out_device = device_copy(out, sizeof out);
    float *outf_device = device_copy(outf, sizeof outf);
    for (int recipe = 0; recipe <= SPART_VCS_PEARSON; recipe++) {
        uint64_t digest = 0;
        for (int format = 0; format < 2; format++) {
            spart_vcs *host = make(f->context, 300, 90, nnz, rows, cols, values,
                                   (spart_vcs_recipe)recipe, (spart_vcs_format)format);
            spart_vcs *device = NULL;
            assert_int_equal(spart_vcs_to_device(f->context, host, 1, &device, NULL), SPART_OK);
            for (int direction = 0; direction < 2; direction++) {
                const int64_t n = direction == 0 ? 300 * 16 : 90 * 16;
                assert_int_equal(spart_vcs_multiply(f->context, device,
                                                    (spart_vcs_direction)direction, 16, b_device,
                                                    out_device),
                                 SPART_OK);
                assert_int_equal(spart_vcs_multiply_float(f->context, device,
                                                          (spart_vcs_direction)direction, 16,
                                                          bf_device, outf_device),
                                 SPART_OK);
                check_cuda(
                    cudaMemcpy(out, out_device, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost),
                    "cudaMemcpy");
                check_cuda(cudaMemcpy(outf, outf_device, (size_t)n * sizeof(float),
                                      cudaMemcpyDeviceToHost),
                           "cudaMemcpy");
                digest = digest * 31 + digest_doubles(out, n);
                digest = digest * 31 + digest_bytes(outf, (size_t)n * sizeof(float));
            }
            spart_vcs_free(device);
            spart_vcs_free(host);
        }
        if (digest != golden[recipe]) {
            fail_msg("recipe %d: device digest 0x%016llx, golden 0x%016llx", recipe,
                     (unsigned long long)digest, (unsigned long long)golden[recipe]);
        }
    }
    cudaFree(b_device), cudaFree(bf_device), cudaFree(out_device), cudaFree(outf_device);
    free(rows), free(cols), free(values);
}

/* One grouping on the device is below 0.65 of a float32 CSR of Delta
 * (int32 columns, int64 row pointers); the misaligned side is refused
 * without the second grouping; host memory is refused. */
static void device_bytes_and_refusals(void **state)
{
    fixture *f = *state;
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(6000, 2000, 0.05, 41, &nnz, &rows, &cols, &values);
    for (int format = 0; format < 2; format++) {
        spart_vcs *host = make(f->context, 6000, 2000, nnz, rows, cols, values, SPART_VCS_PARAFAC2,
                               (spart_vcs_format)format);
        spart_vcs *device = NULL;
        int64_t bytes = 0;
        assert_int_equal(spart_vcs_to_device(f->context, host, 0, &device, &bytes), SPART_OK);
        const double csr = 8.0 * (double)nnz + 8.0 * (format == 0 ? 6001.0 : 2001.0);
        print_message("format %d: %lld device bytes, %.3f of a float32 CSR\n", format,
                      (long long)bytes, (double)bytes / csr);
        assert_true((double)bytes < 0.65 * csr);
        double *b = NULL, *out = NULL;
        check_cuda(cudaMalloc((void **)&b, 6000 * 4 * sizeof(double)), "cudaMalloc");
        check_cuda(cudaMalloc((void **)&out, 6000 * 4 * sizeof(double)), "cudaMalloc");
        const spart_vcs_direction misaligned =
            format == 0 ? SPART_VCS_B_TIMES_A : SPART_VCS_A_TIMES_B;
        assert_int_equal(spart_vcs_multiply(f->context, device, misaligned, 4, b, out),
                         SPART_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(spart_context_error(f->context), "both_groupings"));
        double host_b[8] = {0}, host_out[8];
        assert_int_equal(spart_vcs_multiply(f->context, device,
                                            (spart_vcs_direction)(1 - misaligned), 1, host_b,
                                            host_out),
                         SPART_ERROR_INVALID_ARGUMENT);
        spart_vcs *again = NULL;
        assert_int_equal(spart_vcs_to_device(f->context, device, 1, &again, NULL),
                         SPART_ERROR_INVALID_ARGUMENT);
        cudaFree(b), cudaFree(out);
        spart_vcs_free(device);
        spart_vcs_free(host);
    }
    free(rows), free(cols), free(values);
}

int main(void)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    /* SPART_CUDA_TEST_FILTER=pattern runs the matching tests alone (the
     * sanitizers' small cases) */
    const char *filter = getenv("SPART_CUDA_TEST_FILTER");
    if (filter != NULL && filter[0] != '\0') {
        cmocka_set_test_filter(filter);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_case_equals_the_host),
        cmocka_unit_test(the_fixture_equals_the_host),
        cmocka_unit_test(wide_indices_equal_the_host),
        cmocka_unit_test(degenerate_shapes_equal_the_host),
        cmocka_unit_test(golden_digests_equal_the_host),
        cmocka_unit_test(device_bytes_and_refusals),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
