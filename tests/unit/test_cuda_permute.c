/*
 * tests/unit/test_cuda_permute.c: the tiled block permute on CUDA device 0
 * gives the host's bits (kernels/permute.cu against host/permute.c) for
 * every type, with and without conjugation and recoupling, beta = 0 over
 * NaN, tiles cut at the edges, thousands of small blocks; and the device
 * plan's checks. Each case prints its digest (host = device).
 * Exit 77 without a device unless SPART_REQUIRE_GPU=1. An argument is a
 * cmocka test filter (e.g. "small_*" for a sanitizer run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "permute/permute_internal.h"
#include "spart/permute.h"
#include "test_cuda_util.h"
#include "permute_cases.h"

static void scalar_of(spart_permute_type type, const double *value, double storage[2])
{
    if (case_single(type)) {
        float *f = (float *)storage;
        f[0] = (float)value[0];
        f[1] = (float)value[1];
    } else {
        storage[0] = value[0];
        storage[1] = value[1];
    }
}

static void *to_device_bytes(const void *host, size_t bytes)
{
    void *device = NULL;
    check_cuda(cudaMalloc(&device, bytes > 0 ? bytes : 1), "cudaMalloc");
    if (bytes > 0) {
        check_cuda(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    return device;
}

/* The case on the host and on the device from the same data: the same
 * bytes everywhere in the destination. */
static void same_bits(fixture *f, const permute_case *c, spart_permute_op op, const double *alpha,
                      const double *beta, int nan_destination, const char *name)
{
    spart_context *context = f->context;
    size_t bytes = case_element_bytes(c->type);
    size_t source_bytes = (size_t)c->source_length * bytes;
    size_t destination_bytes = (size_t)c->destination_length * bytes;
    void *source = case_values(c, c->source_length, 31, 0);
    void *host = case_values(c, c->destination_length, 32, nan_destination);
    void *back = malloc(destination_bytes > 0 ? destination_bytes : 1);
    void *source_device = to_device_bytes(source, source_bytes);
    void *destination_device = to_device_bytes(host, destination_bytes);
    spart_permute_plan *host_plan = NULL, *device_plan = NULL;
    if (spart_permute_plan_create(context, c->type, c->num_axes, c->permutation, op, c->num_blocks,
                                  c->blocks, c->source_length, c->destination_length, 0,
                                  &host_plan) != SPART_OK ||
        spart_permute_plan_create(context, c->type, c->num_axes, c->permutation, op, c->num_blocks,
                                  c->blocks, c->source_length, c->destination_length, 1,
                                  &device_plan) != SPART_OK) {
        fail_msg("%s: plan: %s", name, spart_context_error(context));
    }
    double a[2], b[2];
    scalar_of(c->type, alpha, a);
    scalar_of(c->type, beta, b);
    if (spart_permute_execute(context, host_plan, a, source, b, host) != SPART_OK) {
        fail_msg("%s: host execute: %s", name, spart_context_error(context));
    }
    /* Every device kernel: the plan's own choice, the general one, the
     * one-term one at eight and six blocks an SM, with the asynchronous
     * gather; design 2 (a fixed grid) with two and three buffers and
     * 16-byte copies where allowed, and with element copies; the general
     * one at eight blocks an SM. */
    const int variants[9] = {-1, 0, 1, 2, 3, 4, 5, 6, 7};
    for (int k = 0; k < 9; k++) {
        if (variants[k] >= 0) {
            spart_permute_plan_set_variant(device_plan, variants[k]);
        }
        void *initial = case_values(c, c->destination_length, 32, nan_destination);
        if (destination_bytes > 0) {
            check_cuda(
                cudaMemcpy(destination_device, initial, destination_bytes, cudaMemcpyHostToDevice),
                "cudaMemcpy");
        }
        free(initial);
        if (spart_permute_execute(context, device_plan, a, source_device, b, destination_device) !=
            SPART_OK) {
            fail_msg("%s: device execute: %s", name, spart_context_error(context));
        }
        check_cuda(cudaDeviceSynchronize(), "the permute kernel");
        if (destination_bytes > 0) {
            check_cuda(
                cudaMemcpy(back, destination_device, destination_bytes, cudaMemcpyDeviceToHost),
                "cudaMemcpy");
        }
        for (int64_t e = 0; e < c->destination_length; e++) {
            const char *h = (const char *)host + e * bytes, *d = (const char *)back + e * bytes;
            if (memcmp(h, d, bytes) != 0) {
                fail_msg("%s (kernel %d): destination element %lld differs: host %.17g, device "
                         "%.17g",
                         name, variants[k], (long long)e,
                         case_component(c, host, e * case_components(c->type)),
                         case_component(c, back, e * case_components(c->type)));
            }
        }
    }
    int64_t items = 0, tiles = 0, tile_bytes = 0;
    assert_int_equal(spart_permute_plan_counts(device_plan, &items, &tiles, &tile_bytes), SPART_OK);
    printf("%s: %lld items, %lld tiles of up to %lld bytes: host = device, digest %016llx\n", name,
           (long long)items, (long long)tiles, (long long)tile_bytes,
           (unsigned long long)digest_bytes(host, destination_bytes));
    spart_permute_plan_free(host_plan);
    spart_permute_plan_free(device_plan);
    check_cuda(cudaFree(source_device), "cudaFree");
    check_cuda(cudaFree(destination_device), "cudaFree");
    free(source);
    free(host);
    free(back);
}

static const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
static const double alpha_c[2] = {0.75, -0.25}, beta_c[2] = {0.5, 0.125};
static const char *type_names[4] = {"float32", "float64", "complex64", "complex128"};

/* Small recoupled blocks of every type (the sanitizer's case). */
static void small_recoupled_blocks(void **state)
{
    const int p[4] = {1, 3, 0, 2};
    case_shape shape = {1, 6, 3, 1, 1, 0};
    for (int type = 0; type < 4; type++) {
        permute_case c = make_case((spart_permute_type)type, 4, p, 30, &shape, 900 + type);
        char name[96];
        snprintf(name, sizeof name, "recoupled %s", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_IDENTITY, alpha_c, beta_c, 0, name);
        snprintf(name, sizeof name, "recoupled conjugated %s, beta 0 over NaN", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_CONJUGATE, alpha_c, zero, 1, name);
        free_case(&c);
    }
}

/* Recoupled fusion blocks whose destinations share strides: groups,
 * each source gathered once a tile for every destination (the sanitizer's
 * case too). */
static void small_recoupled_groups(void **state)
{
    const int p[3] = {2, 0, 1};
    case_shape shape = {8, 20, 4, 0, 1, 0};
    for (int type = 0; type < 4; type++) {
        permute_case c = make_case((spart_permute_type)type, 3, p, 4, &shape, 960 + type);
        char name[96];
        snprintf(name, sizeof name, "recoupled groups %s", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_CONJUGATE, alpha_c, beta_c, 0, name);
        snprintf(name, sizeof name, "recoupled groups %s, beta 0 over NaN", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_IDENTITY, alpha_c, zero, 1, name);
        free_case(&c);
    }
}

/* Blocks larger than a tile: 2-D transposes cut at the edges, a 3-D
 * permute, every type. */
static void blocks_larger_than_a_tile(void **state)
{
    const int p2[2] = {1, 0}, p3[3] = {1, 2, 0};
    case_shape shape = {70, 300, 2, 1, 1, 0};
    for (int type = 0; type < 4; type++) {
        permute_case c = make_case((spart_permute_type)type, 2, p2, 4, &shape, 910 + type);
        char name[96];
        snprintf(name, sizeof name, "2-D transposes %s", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_CONJUGATE, alpha_c, beta_c, 0, name);
        free_case(&c);
    }
    case_shape cube = {20, 70, 1, 1, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_FLOAT64, 3, p3, 3, &cube, 920);
    same_bits(*state, &c, SPART_PERMUTE_IDENTITY, one, zero, 1, "3-D (1, 2, 0) float64");
    free_case(&c);
}

/* Thousands of small blocks (2-64 elements) with recoupling, rank 4. */
static void thousands_of_small_blocks(void **state)
{
    const int p[4] = {2, 0, 3, 1};
    case_shape shape = {1, 3, 3, 1, 1, 0};
    permute_case c = make_case(SPART_PERMUTE_COMPLEX128, 4, p, 3000, &shape, 930);
    same_bits(*state, &c, SPART_PERMUTE_CONJUGATE, alpha_c, beta_c, 0, "3000 small blocks");
    free_case(&c);
    case_shape eight = {1, 3, 2, 1, 1, 0};
    const int p8[8] = {7, 0, 6, 1, 5, 2, 4, 3};
    c = make_case(SPART_PERMUTE_FLOAT32, 8, p8, 50, &eight, 931);
    same_bits(*state, &c, SPART_PERMUTE_IDENTITY, one, one, 0, "eight axes float32");
    free_case(&c);
}

/* Transposes whose sizes, offsets and strides are multiples of 16 bytes
 * take design 2's 16-byte copies (the plan says so), and give the host's
 * bits; so does a 3-D permute, merged into a 2-D transpose. */
static void aligned_transposes_take_16_byte_copies(void **state)
{
    const int p2[2] = {1, 0}, p3[3] = {1, 2, 0};
    case_shape shape = {96, 96, 1, 0, 0, 0};
    for (int type = 0; type < 4; type++) {
        permute_case c = make_case((spart_permute_type)type, 2, p2, 3, &shape, 940 + type);
        spart_permute_plan *plan = NULL;
        assert_int_equal(spart_permute_plan_create(((fixture *)*state)->context, c.type, 2, p2,
                                                   SPART_PERMUTE_IDENTITY, c.num_blocks, c.blocks,
                                                   c.source_length, c.destination_length, 1, &plan),
                         SPART_OK);
        assert_int_equal(plan->work.vector, 1);
        spart_permute_plan_free(plan);
        char name[96];
        snprintf(name, sizeof name, "aligned 2-D transposes %s", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_CONJUGATE, alpha_c, beta_c, 0, name);
        snprintf(name, sizeof name, "aligned 2-D transposes %s, beta 0 over NaN", type_names[type]);
        same_bits(*state, &c, SPART_PERMUTE_IDENTITY, one, zero, 1, name);
        free_case(&c);
    }
    case_shape cube = {32, 32, 1, 0, 0, 0};
    permute_case c = make_case(SPART_PERMUTE_FLOAT64, 3, p3, 2, &cube, 950);
    same_bits(*state, &c, SPART_PERMUTE_IDENTITY, alpha_c, beta_c, 0, "aligned 3-D (1, 2, 0)");
    free_case(&c);
}

/* A device plan refuses host arrays. */
static void small_device_plan_refuses_host_memory(void **state)
{
    fixture *f = *state;
    const int64_t sizes[2] = {2, 3}, offset[1] = {0}, src_strides[2] = {3, 1},
                  dst_strides[2] = {2, 1};
    spart_permute_block block = {sizes, 1, 1, NULL, offset, dst_strides, offset, src_strides};
    const int p[2] = {1, 0};
    spart_permute_plan *plan = NULL;
    assert_int_equal(spart_permute_plan_create(f->context, SPART_PERMUTE_FLOAT64, 2, p,
                                               SPART_PERMUTE_IDENTITY, 1, &block, 6, 6, 1, &plan),
                     SPART_OK);
    double source[6] = {0}, destination[6] = {0};
    assert_int_equal(spart_permute_execute(f->context, plan, one, source, zero, destination),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_permute_plan_free(plan);
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
        cmocka_unit_test(small_recoupled_blocks),
        cmocka_unit_test(small_recoupled_groups),
        cmocka_unit_test(blocks_larger_than_a_tile),
        cmocka_unit_test(thousands_of_small_blocks),
        cmocka_unit_test(aligned_transposes_take_16_byte_copies),
        cmocka_unit_test(small_device_plan_refuses_host_memory),
    };
    return cmocka_run_group_tests(tests, cuda_set_up, cuda_tear_down);
}
