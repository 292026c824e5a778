/* The host's 2-D conservative clipping kernels hold their bits: golden
 * digests of the entries they build on the cases of test_clip_cases.h
 * (lattice and curvilinear outputs, folded, degenerate and partly covered
 * grids), taken before their arithmetic moved into the headers they share
 * with the device (src/weights/clip_lattice_math.h,
 * clip_polygon_math.h). A change to those headers that moves one bit of
 * one entry fails here. SPART_PRINT_DIGESTS=1 prints the digests. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "weights/triples.h"
#include "weights/weights_kernels.h"
#include "test_clip_cases.h"
#include "test_util.h"

/* The digest of a list: its indices and values, in order. */
static uint64_t digest_of(const spart_triples *t)
{
    uint64_t d = digest_bytes(t->indices_input, (size_t)t->count * sizeof(int64_t));
    d ^= 3 * digest_bytes(t->indices_output, (size_t)t->count * sizeof(int64_t));
    d ^= 5 * digest_bytes(t->values, (size_t)t->count * sizeof(double));
    return d;
}

/* Build case c with the lattice (lattice != 0) or the general kernel on
 * `parallel` threads; returns the list's digest and its count. */
static uint64_t build(const clip_case *c, int lattice, int parallel, int64_t *count)
{
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    spart_status status = (lattice ? spart_host_weights_conservative_2d_clip
                                   : spart_host_weights_conservative_2d_clip_general)(
        c->input.x, c->input.y, c->input.num_x, c->input.num_y, c->output.x, c->output.y,
        c->output.num_x, c->output.num_y, c->weights_input, parallel, &t);
    assert_int_equal(status, SPART_OK);
    uint64_t d = digest_of(&t);
    *count = t.count;
    spart_triples_release(&t);
    return d;
}

/* Taken from the host kernels as they stood before the shared headers
 * (commit 793d285), on x86-64 with SSE2. */
static const uint64_t lattice_digests[CLIP_NUM_LATTICE_CASES] = {
    0x2f39223c3407c8e9ull, 0xce342d8503830737ull, 0x05c9b0bc1bc49db8ull, 0x514d5447f1aff2b1ull,
    0xa9aed4c31acf9eb6ull, 0xbd38b7d99c2e9173ull, 0xd97a73c51cd10caeull, 0x185190e4fabf718bull,
    0xde45d3e0facd492dull, 0xe6c2a7dae03fd0d4ull, 0x689ff3223d3c1111ull,
};
static const int64_t lattice_counts[CLIP_NUM_LATTICE_CASES] = {
    2315, 1133, 2095, 5439, 10501, 2227, 2310, 2373, 77, 8979, 1170,
};
static const uint64_t general_digests[CLIP_NUM_GENERAL_CASES] = {
    0xeaa9cef9de5c7c92ull, 0x3ae5652f649c7bb8ull, 0x7b46aafceaf56ae0ull, 0xe3c59d5810200fa5ull,
    0x75fdbf0d7cf1708dull, 0x0d9f1ef5273bdca5ull, 0x8ae93bcec68b66f4ull,
};
static const int64_t general_counts[CLIP_NUM_GENERAL_CASES] = {
    1564, 816, 1876, 3446, 1793, 400, 878,
};

static void check_cases(int lattice)
{
    const int num = lattice ? CLIP_NUM_LATTICE_CASES : CLIP_NUM_GENERAL_CASES;
    const int print = getenv("SPART_PRINT_DIGESTS") != NULL;
    for (int k = 0; k < num; k++) {
        clip_case c = lattice ? clip_lattice_case(k, 1) : clip_general_case(k, 1);
        int64_t count, count_parallel;
        uint64_t d = build(&c, lattice, 1, &count);
        uint64_t d_parallel = build(&c, lattice, 3, &count_parallel);
        assert_int_equal(count, count_parallel);
        assert_true(d == d_parallel);
        if (print) {
            printf("%s %d (%s): 0x%016" PRIx64 "ull, %" PRId64 "\n",
                   lattice ? "lattice" : "general", k, c.name, d, count);
        } else {
            assert_int_equal(count, lattice ? lattice_counts[k] : general_counts[k]);
            assert_true(d == (lattice ? lattice_digests[k] : general_digests[k]));
        }
        clip_case_free(&c);
    }
}

static void lattice_kernel_keeps_its_bits(void **state)
{
    (void)state;
    check_cases(1);
}

static void general_kernel_keeps_its_bits(void **state)
{
    (void)state;
    check_cases(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lattice_kernel_keeps_its_bits),
        cmocka_unit_test(general_kernel_keeps_its_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
