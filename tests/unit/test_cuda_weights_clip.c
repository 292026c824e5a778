/* The conservative 2-D weights by clipping built on the device
 * (src/weights/weights_clip_device.h) are the host kernels' entries, bit
 * for bit and in the same order, on the cases of test_clip_cases.h:
 * lattice outputs (spart_host_weights_conservative_2d_clip) and
 * curvilinear ones (spart_host_weights_conservative_2d_clip_general),
 * rotated, warped, folded and degenerate grids, grids reaching past the
 * output's edge, cells much larger and much smaller than the output's
 * (the lattice walk's windows; coarse cells walked by a warp each),
 * weights_input; twice each, for determinism. Exit 77 without a device unless SPART_REQUIRE_GPU=1.
 * SPART_CLIP_SMALL=1 runs the small scale only (for compute-sanitizer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "weights/triples.h"
#include "weights/weights_clip_device.h"
#include "weights/weights_kernels.h"
#include "test_clip_cases.h"
#include "test_cuda_util.h"

/* A copy of n doubles in device memory (NULL for NULL). */
static double *upload(const double *host, int64_t n)
{
    if (host == NULL) {
        return NULL;
    }
    void *device = NULL;
    check_cuda(cudaMalloc(&device, (size_t)(n > 0 ? n : 1) * sizeof(double)), "cudaMalloc");
    check_cuda(cudaMemcpy(device, host, (size_t)n * sizeof(double), cudaMemcpyHostToDevice),
               "cudaMemcpy");
    return device;
}

/* The device's entries of case c, into `list` (host memory). */
static void build_on_device(const clip_case *c, int lattice, spart_triples *list)
{
    const int64_t n_in = c->input.num_x * c->input.num_y;
    const int64_t n_out = c->output.num_x * c->output.num_y;
    spart_device_clip_grid input = {upload(c->input.x, n_in), upload(c->input.y, n_in),
                                    c->input.num_x, c->input.num_y};
    spart_device_clip_grid output = {upload(c->output.x, n_out), upload(c->output.y, n_out),
                                     c->output.num_x, c->output.num_y};
    const int64_t cells_in = (c->input.num_x - 1) * (c->input.num_y - 1);
    double *weights_input = upload(c->weights_input, cells_in);
    spart_device_clip_counts *counts = NULL;
    int64_t num_entries = -1;
    check_cuda((cudaError_t)spart_cuda_clip_2d_count(&input, &output, lattice, weights_input,
                                                     &counts, &num_entries, NULL),
               "spart_cuda_clip_2d_count");
    assert_non_null(counts);
    assert_true(num_entries >= 0);
    void *ii = NULL, *io = NULL, *v = NULL;
    const size_t bytes = (size_t)(num_entries > 0 ? num_entries : 1) * 8;
    check_cuda(cudaMalloc(&ii, bytes), "cudaMalloc");
    check_cuda(cudaMalloc(&io, bytes), "cudaMalloc");
    check_cuda(cudaMalloc(&v, bytes), "cudaMalloc");
    /* poison: every slot must be written */
    check_cuda(cudaMemset(ii, 0xff, bytes), "cudaMemset");
    check_cuda(cudaMemset(io, 0xff, bytes), "cudaMemset");
    check_cuda(cudaMemset(v, 0xff, bytes), "cudaMemset");
    check_cuda((cudaError_t)spart_cuda_clip_2d_write(counts, ii, io, v, NULL),
               "spart_cuda_clip_2d_write");
    spart_cuda_clip_2d_counts_free(counts, NULL);
    check_cuda(cudaDeviceSynchronize(), "the build");
    assert_int_equal(spart_triples_reserve(list, num_entries > 0 ? num_entries : 1), 0);
    list->count = num_entries;
    check_cuda(cudaMemcpy(list->indices_input, ii, (size_t)num_entries * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    check_cuda(
        cudaMemcpy(list->indices_output, io, (size_t)num_entries * 8, cudaMemcpyDeviceToHost),
        "cudaMemcpy");
    check_cuda(cudaMemcpy(list->values, v, (size_t)num_entries * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    void *arrays[] = {
        ii,           io, v, (void *)input.x, (void *)input.y, (void *)output.x, (void *)output.y,
        weights_input};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        cudaFree(arrays[a]);
    }
}

/* The host kernel's entries of case c. */
static void build_on_host(const clip_case *c, int lattice, spart_triples *list)
{
    spart_status status = (lattice ? spart_host_weights_conservative_2d_clip
                                   : spart_host_weights_conservative_2d_clip_general)(
        c->input.x, c->input.y, c->input.num_x, c->input.num_y, c->output.x, c->output.y,
        c->output.num_x, c->output.num_y, c->weights_input, 2, list);
    assert_int_equal(status, SPART_OK);
}

/* Host = device, entry for entry, twice. */
static void check_case(const clip_case *c, int lattice)
{
    spart_triples host;
    spart_triples_init(&host, &plain_allocator);
    build_on_host(c, lattice, &host);
    for (int run = 0; run < 2; run++) {
        spart_triples device;
        spart_triples_init(&device, &plain_allocator);
        build_on_device(c, lattice, &device);
        if (device.count != host.count) {
            fail_msg("%s (%s): %lld entries on the device, %lld on the host", c->name,
                     lattice ? "lattice" : "general", (long long)device.count,
                     (long long)host.count);
        }
        for (int64_t k = 0; k < host.count; k++) {
            if (device.indices_input[k] != host.indices_input[k] ||
                device.indices_output[k] != host.indices_output[k] ||
                memcmp(&device.values[k], &host.values[k], sizeof(double)) != 0) {
                fail_msg("%s (%s): entry %lld is (%lld, %lld, %.17g) on the device, (%lld, "
                         "%lld, %.17g) on the host",
                         c->name, lattice ? "lattice" : "general", (long long)k,
                         (long long)device.indices_input[k], (long long)device.indices_output[k],
                         device.values[k], (long long)host.indices_input[k],
                         (long long)host.indices_output[k], host.values[k]);
            }
        }
        spart_triples_release(&device);
    }
    spart_triples_release(&host);
}

static int64_t largest_scale(void)
{
    const char *small = getenv("SPART_CLIP_SMALL");
    return small != NULL && strcmp(small, "1") == 0 ? 1 : 3;
}

static void lattice_outputs_give_the_host_entries(void **state)
{
    (void)state;
    for (int64_t scale = 1; scale <= largest_scale(); scale += 2) {
        for (int k = 0; k < CLIP_NUM_LATTICE_CASES; k++) {
            clip_case c = clip_lattice_case(k, scale);
            check_case(&c, 1);
            clip_case_free(&c);
        }
    }
}

static void curvilinear_outputs_give_the_host_entries(void **state)
{
    (void)state;
    for (int64_t scale = 1; scale <= largest_scale(); scale += 2) {
        for (int k = 0; k < CLIP_NUM_GENERAL_CASES; k++) {
            clip_case c = clip_general_case(k, scale);
            check_case(&c, 0);
            clip_case_free(&c);
        }
    }
}

/* The general kernel onto a lattice gives what the host's general kernel
 * gives (its buckets over a lattice's cells). */
static void the_general_kernel_onto_a_lattice_gives_the_host_entries(void **state)
{
    (void)state;
    for (int k = 0; k < CLIP_NUM_LATTICE_CASES; k++) {
        clip_case c = clip_lattice_case(k, 1);
        check_case(&c, 0);
        clip_case_free(&c);
    }
}

/* Grids without cells give no entries; the write then writes nothing. */
static void grids_without_cells_give_nothing(void **state)
{
    (void)state;
    clip_case c = {0};
    c.name = "no cells";
    c.input = clip_lattice(-1, 1, 1, -1, 1, 5);
    c.output = clip_lattice(-1, 1, 4, -1, 1, 4);
    check_case(&c, 1);
    check_case(&c, 0);
    clip_case_free(&c);
    c.input = clip_lattice(-1, 1, 4, -1, 1, 4);
    c.output = clip_lattice(-1, 1, 4, -1, 1, 1);
    check_case(&c, 1);
    check_case(&c, 0);
    clip_case_free(&c);
}

static void null_arguments_are_refused(void **state)
{
    (void)state;
    spart_device_clip_grid grid = {NULL, NULL, 3, 3};
    spart_device_clip_counts *counts = (spart_device_clip_counts *)&grid;
    int64_t n = 7;
    assert_int_equal(spart_cuda_clip_2d_count(&grid, &grid, 1, NULL, &counts, &n, NULL),
                     (int)cudaErrorInvalidValue);
    assert_null(counts);
    assert_int_equal(n, 0);
    assert_int_equal(spart_cuda_clip_2d_count(NULL, &grid, 1, NULL, &counts, &n, NULL),
                     (int)cudaErrorInvalidValue);
    assert_int_equal(spart_cuda_clip_2d_count(&grid, &grid, 1, NULL, NULL, &n, NULL),
                     (int)cudaErrorInvalidValue);
    assert_int_equal(spart_cuda_clip_2d_write(NULL, NULL, NULL, NULL, NULL),
                     (int)cudaErrorInvalidValue);
    spart_cuda_clip_2d_counts_free(NULL, NULL);
}

int main(int argc, char **argv)
{
    int code = cuda_tests_exit_code();
    if (code >= 0) {
        return code;
    }
    if (argc > 1) {
        cmocka_set_test_filter(argv[1]);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lattice_outputs_give_the_host_entries),
        cmocka_unit_test(curvilinear_outputs_give_the_host_entries),
        cmocka_unit_test(the_general_kernel_onto_a_lattice_gives_the_host_entries),
        cmocka_unit_test(grids_without_cells_give_nothing),
        cmocka_unit_test(null_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
