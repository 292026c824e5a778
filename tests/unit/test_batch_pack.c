/*
 * tests/unit/test_batch_pack.c: spart_host_pack_eight (host/batch_pack_simd.c)
 * packs 8 vectors laid one after another into interleaved ones, each value
 * copied bit for bit (NaN payloads, -0.0, subnormals), for column counts
 * that are and are not multiples of 8, for a packed array written through
 * the cache and one large enough to be streamed; it declines exactly
 * where it should (no AVX-512, or packed not on a 64-byte boundary),
 * writing nothing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/regridder_internal.h"

/* 8 vectors of `columns` values, vector t after vector t - 1, every value
 * distinct and some of them unusual. */
static double *vectors_one_after_another(int64_t columns)
{
    double *x = malloc((size_t)(8 * columns + 1) * sizeof(double));
    for (int64_t k = 0; k < 8 * columns; k++) {
        x[k] = (double)k + 0.25;
    }
    if (columns > 3) {
        uint64_t payload = 0x7ff8000000001234ULL;
        memcpy(&x[1], &payload, sizeof payload); /* a NaN with a payload */
        x[columns + 2] = -0.0;
        x[2 * columns + 3] = 4.9e-324; /* the smallest subnormal */
        x[8 * columns - 1] = -INFINITY;
    }
    return x;
}

/* An array of 8 * columns doubles on a 64-byte boundary, filled with a
 * poison value, and the allocation to free. */
static double *aligned_poisoned(int64_t columns, void **allocation)
{
    size_t bytes = (size_t)(8 * columns) * sizeof(double) + 64;
    *allocation = malloc(bytes);
    uintptr_t address = (uintptr_t)*allocation;
    double *packed = (double *)((char *)*allocation + (64 - address % 64) % 64);
    for (int64_t k = 0; k < 8 * columns; k++) {
        packed[k] = 12345.0;
    }
    return packed;
}

static void assert_packed_bits(const double *x, const double *packed, int64_t columns)
{
    for (int64_t c = 0; c < columns; c++) {
        for (int64_t t = 0; t < 8; t++) {
            assert_memory_equal(&packed[c * 8 + t], &x[t * columns + c], sizeof(double));
        }
    }
}

static void eight_vectors_are_interleaved_bit_for_bit(void **state)
{
    (void)state;
    int has_avx512 = spart_host_simd_level() == SPART_SIMD_AVX512;
    /* 300007 columns: 19 MB packed, past the streaming threshold */
    const int64_t column_counts[] = {1, 5, 8, 13, 64, 1003, 300007};
    for (size_t n = 0; n < sizeof column_counts / sizeof column_counts[0]; n++) {
        int64_t columns = column_counts[n];
        double *x = vectors_one_after_another(columns);
        void *allocation = NULL;
        double *packed = aligned_poisoned(columns, &allocation);
        for (int threads = 1; threads <= 2; threads++) {
            int done = spart_host_pack_eight(x, columns, packed, threads);
            assert_int_equal(done, has_avx512);
            if (done) {
                assert_packed_bits(x, packed, columns);
            }
        }
        free(allocation);
        free(x);
    }
}

static void a_packed_array_off_a_cache_line_is_declined_untouched(void **state)
{
    (void)state;
    const int64_t columns = 16;
    double *x = vectors_one_after_another(columns);
    void *allocation = NULL;
    double *aligned = aligned_poisoned(columns + 1, &allocation);
    double *off_line = aligned + 1; /* 8 bytes past a 64-byte boundary */
    assert_int_equal(spart_host_pack_eight(x, columns, off_line, 2), 0);
    for (int64_t k = 0; k < 8 * columns; k++) {
        assert_true(off_line[k] == 12345.0);
    }
    free(allocation);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_vectors_are_interleaved_bit_for_bit),
        cmocka_unit_test(a_packed_array_off_a_cache_line_is_declined_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
