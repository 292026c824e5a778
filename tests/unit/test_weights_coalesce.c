/* Coalescing one element's triples (src/weights/weights_coalesce.c): sorted by
 * (input, output), repeated pairs merged as NumPy's add.reduceat sums. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weights/triples.h"
#include "weights/weights_kernels.h"
#include "test_util.h"

static void append(spart_triples *t, int64_t input, int64_t output, double value)
{
    assert_int_equal(spart_triples_append(t, input, output, value), 0);
}

static void coalesce(spart_triples *t)
{
    assert_int_equal(spart_weights_coalesce(t), SPART_OK);
}

static void assert_bits_equal(double actual, double expected)
{
    assert_memory_equal(&actual, &expected, sizeof actual);
}

static void assert_entry(const spart_triples *t, int64_t k, int64_t input, int64_t output,
                         double value)
{
    assert_int_equal(t->indices_input[k], input);
    assert_int_equal(t->indices_output[k], output);
    assert_bits_equal(t->values[k], value);
}

/* The generator the reference values below were drawn with: a 64-bit LCG,
 * a 53-bit mantissa, an exponent in [-20, 20] and a sign, so that Python
 * builds the same doubles:
 *     state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
 *     value = (-1 if state & 1 else 1) * math.ldexp(float(state >> 11),
 *                                                   (state >> 3) % 41 - 20 - 53) */
static double draw(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    double mantissa = (double)(*state >> 11);
    int exponent = (int)((*state >> 3) % 41) - 20;
    double value = ldexp(mantissa, exponent - 53);
    return (*state & 1) ? -value : value;
}

static void empty_and_single_lists_stay_as_they_are(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    coalesce(&t);
    assert_int_equal(t.count, 0);
    append(&t, 4, 2, 0.5);
    coalesce(&t);
    assert_int_equal(t.count, 1);
    assert_entry(&t, 0, 4, 2, 0.5);
    spart_triples_release(&t);
}

static void a_sorted_list_of_unique_pairs_is_untouched(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    append(&t, 0, 3, 1.0);
    append(&t, 0, 4, 2.0);
    append(&t, 2, 0, 3.0);
    append(&t, 5, 1, -0.0);
    const double *values = t.values;
    coalesce(&t);
    assert_ptr_equal(t.values, values);
    assert_int_equal(t.count, 4);
    assert_entry(&t, 0, 0, 3, 1.0);
    assert_entry(&t, 3, 5, 1, -0.0);
    spart_triples_release(&t);
}

static void entries_are_sorted_by_input_then_output(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    append(&t, 2, 1, 1.0);
    append(&t, 0, 7, 2.0);
    append(&t, 2, 0, 3.0);
    append(&t, 1, 9, 4.0);
    append(&t, 0, 3, 5.0);
    coalesce(&t);
    assert_int_equal(t.count, 5);
    assert_entry(&t, 0, 0, 3, 5.0);
    assert_entry(&t, 1, 0, 7, 2.0);
    assert_entry(&t, 2, 1, 9, 4.0);
    assert_entry(&t, 3, 2, 0, 3.0);
    assert_entry(&t, 4, 2, 1, 1.0);
    spart_triples_release(&t);
}

/* np.add.reduceat([1, 1e16, -1e16], [0]) = 1 + (1e16 - 1e16) = 1, while
 * the order (1e16, 1, -1e16) would give 0: the sort keeps build order. */
static void repeated_pairs_are_summed_in_build_order(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    append(&t, 1, 1, 1.0);
    append(&t, 0, 5, 9.0);
    append(&t, 1, 1, 1e16);
    append(&t, 0, 5, 9.0);
    append(&t, 1, 1, -1e16);
    coalesce(&t);
    assert_int_equal(t.count, 2);
    assert_entry(&t, 0, 0, 5, 18.0);
    assert_entry(&t, 1, 1, 1, 1.0);
    spart_triples_release(&t);
}

/* np.add.reduceat(np.array([1e16] + [1.0] * (n - 1)), [0]) for each n:
 * NumPy's pairwise sum keeps the ones a sequential sum would lose. */
static void runs_of_ones_after_1e16_match_numpy(void **state)
{
    (void)state;
    static const struct {
        int64_t length;
        double sum;
    } cases[] = {
        {1, 0x1.1c37937e08000p+53},   {7, 0x1.1c37937e08003p+53},    {8, 0x1.1c37937e08004p+53},
        {9, 0x1.1c37937e08004p+53},   {100, 0x1.1c37937e08032p+53},  {128, 0x1.1c37937e08040p+53},
        {129, 0x1.1c37937e08040p+53}, {1000, 0x1.1c37937e081f4p+53},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spart_triples t;
        spart_triples_init(&t, &plain_allocator);
        append(&t, 3, 3, 1e16);
        for (int64_t k = 1; k < cases[c].length; k++) {
            append(&t, 3, 3, 1.0);
        }
        coalesce(&t);
        assert_int_equal(t.count, 1);
        assert_entry(&t, 0, 3, 3, cases[c].sum);
        spart_triples_release(&t);
    }
}

/* Eight pairs with runs of 1, 7, 8, 9, 100, 128, 129 and 1000 entries,
 * interleaved round-robin in build order, values from draw() starting at
 * state 2024; then `padding` single entries (10 + k, k % 13). The expected
 * sums are regridding._weights._weights_arrays._coalesce(ii, oo, vv) of
 * the same list (np.add.reduceat), as hex. */
static const int64_t run_length[8] = {1, 7, 8, 9, 100, 128, 129, 1000};
static const int64_t run_input[8] = {3, 0, 3, 1, 0, 2, 1, 2};
static const int64_t run_output[8] = {7, 2, 1, 5, 0, 9, 0, 2};
static const struct {
    int64_t input, output;
    double sum;
} run_expected[8] = {
    {0, 0, 0x1.b021159f65864p+17},  {0, 2, -0x1.1d424fb1fd960p+1},  /* 100, 7 */
    {1, 0, 0x1.1a59e255fe28ep+20},  {1, 5, 0x1.7554459e6136bp+9},   /* 129, 9 */
    {2, 2, -0x1.c32e62bc4442fp+22}, {2, 9, -0x1.85d2e583be7dap+21}, /* 1000, 128 */
    {3, 1, 0x1.98e581bf52015p+16},  {3, 7, -0x1.6fe00691d573ep+17}, /* 8, 1 */
};

static void build_interleaved_runs(spart_triples *t, int64_t padding)
{
    uint64_t state = 2024;
    int64_t remaining[8];
    memcpy(remaining, run_length, sizeof remaining);
    int64_t left = 0;
    for (int p = 0; p < 8; p++) {
        left += remaining[p];
    }
    while (left > 0) {
        for (int p = 0; p < 8; p++) {
            if (remaining[p] > 0) {
                append(t, run_input[p], run_output[p], draw(&state));
                remaining[p]--;
                left--;
            }
        }
    }
    for (int64_t k = 0; k < padding; k++) {
        append(t, 10 + k, k % 13, draw(&state));
    }
}

static void check_interleaved_runs(const spart_triples *t)
{
    for (int64_t k = 0; k < 8; k++) {
        assert_entry(t, k, run_expected[k].input, run_expected[k].output, run_expected[k].sum);
    }
}

/* 1382 entries: the merge sort. */
static void interleaved_runs_match_numpy_reduceat(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    build_interleaved_runs(&t, 0);
    coalesce(&t);
    assert_int_equal(t.count, 8);
    check_interleaved_runs(&t);
    spart_triples_release(&t);
}

/* 4382 entries: the radix sort gives the same runs. */
static void interleaved_runs_match_numpy_reduceat_in_a_long_list(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    build_interleaved_runs(&t, 3000);
    spart_triples copy;
    spart_triples_init(&copy, &plain_allocator);
    assert_int_equal(spart_triples_extend(&copy, &t), 0);
    coalesce(&t);
    assert_int_equal(t.count, 8 + 3000);
    check_interleaved_runs(&t);
    for (int64_t k = 0; k < 3000; k++) { /* the singletons keep their values */
        assert_entry(&t, 8 + k, 10 + k, k % 13, copy.values[1382 + k]);
    }
    spart_triples_release(&t);
    spart_triples_release(&copy);
}

/* np.add.reduceat(np.array([-0.0, -0.0]), [0]) is -0.0: NumPy's short
 * sums start from -0.0. */
static void signed_zeros_sum_as_numpy_does(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    append(&t, 1, 0, -0.0);
    append(&t, 0, 0, 2.0);
    append(&t, 1, 0, -0.0);
    coalesce(&t);
    assert_int_equal(t.count, 2);
    assert_entry(&t, 1, 1, 0, -0.0);
    spart_triples_release(&t);
}

static void negative_and_far_apart_indices_are_sorted(void **state)
{
    (void)state;
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    /* spans of nearly 2^64 on both sides: too wide for one key */
    append(&t, INT64_MAX, INT64_MIN, 1.0);
    append(&t, INT64_MIN, INT64_MAX, 2.0);
    append(&t, -1, 0, 3.0);
    append(&t, INT64_MIN, INT64_MIN, 4.0);
    append(&t, -1, 0, 5.0);
    append(&t, INT64_MIN, INT64_MAX, 6.0);
    coalesce(&t);
    assert_int_equal(t.count, 4);
    assert_entry(&t, 0, INT64_MIN, INT64_MIN, 4.0);
    assert_entry(&t, 1, INT64_MIN, INT64_MAX, 8.0);
    assert_entry(&t, 2, -1, 0, 8.0);
    assert_entry(&t, 3, INT64_MAX, INT64_MIN, 1.0);
    spart_triples_release(&t);
}

/* The specification, written independently of the library: entries in a
 * stable (input, output) order and NumPy's pairwise sum. */
typedef struct reference_entry {
    int64_t input, output, position;
    double value;
} reference_entry;

static int compare_reference(const void *a, const void *b)
{
    const reference_entry *x = a, *y = b;
    if (x->input != y->input) {
        return x->input < y->input ? -1 : 1;
    }
    if (x->output != y->output) {
        return x->output < y->output ? -1 : 1;
    }
    return x->position < y->position ? -1 : (x->position > y->position);
}

static double reference_pairwise(const double *a, int64_t n)
{
    if (n < 8) {
        double sum = -0.0;
        for (int64_t k = 0; k < n; k++) {
            sum += a[k];
        }
        return sum;
    }
    if (n <= 128) {
        double r[8];
        memcpy(r, a, sizeof r);
        int64_t k = 8;
        for (; k + 8 <= n; k += 8) {
            for (int j = 0; j < 8; j++) {
                r[j] += a[k + j];
            }
        }
        double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; k < n; k++) {
            sum += a[k];
        }
        return sum;
    }
    int64_t half = (n / 2) - (n / 2) % 8;
    return reference_pairwise(a, half) + reference_pairwise(a + half, n - half);
}

static void check_against_reference(int64_t n, int64_t span_input, int64_t span_output,
                                    int64_t offset, uint64_t seed)
{
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    reference_entry *entries = malloc((size_t)n * sizeof *entries);
    double *run = malloc((size_t)n * sizeof *run);
    assert_non_null(entries);
    assert_non_null(run);
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        double value = draw(&state);
        int64_t input = offset + (int64_t)(state % (uint64_t)span_input);
        int64_t output = (int64_t)((state >> 32) % (uint64_t)span_output);
        append(&t, input, output, value);
        entries[k] = (reference_entry){input, output, k, value};
    }
    qsort(entries, (size_t)n, sizeof *entries, compare_reference);
    coalesce(&t);
    int64_t runs = 0;
    for (int64_t start = 0; start < n;) {
        int64_t end = start;
        while (end < n && entries[end].input == entries[start].input &&
               entries[end].output == entries[start].output) {
            run[end - start] = entries[end].value;
            end++;
        }
        double sum = run[0];
        if (end - start > 1) {
            sum += reference_pairwise(run + 1, end - start - 1);
        }
        assert_true(runs < t.count);
        assert_entry(&t, runs, entries[start].input, entries[start].output, sum);
        runs++;
        start = end;
    }
    assert_int_equal(t.count, runs);
    free(entries);
    free(run);
    spart_triples_release(&t);
}

static void random_lists_match_the_specification(void **state)
{
    (void)state;
    check_against_reference(500, 7, 5, 0, 1);                   /* merge sort, long runs */
    check_against_reference(1500, 300, 300, -150, 2);           /* merge sort, short runs */
    check_against_reference(100000, 40, 30, 0, 3);              /* radix, runs of ~80 */
    check_against_reference(100000, 3000, 2000, 5, 4);          /* radix, mostly unique */
    check_against_reference(30000, 1, 1, INT64_MAX - 1, 5);     /* one run of 30000 */
    check_against_reference(50000, INT64_MAX, INT64_MAX, 0, 6); /* radix, 126-bit spans */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_and_single_lists_stay_as_they_are),
        cmocka_unit_test(a_sorted_list_of_unique_pairs_is_untouched),
        cmocka_unit_test(entries_are_sorted_by_input_then_output),
        cmocka_unit_test(repeated_pairs_are_summed_in_build_order),
        cmocka_unit_test(runs_of_ones_after_1e16_match_numpy),
        cmocka_unit_test(interleaved_runs_match_numpy_reduceat),
        cmocka_unit_test(interleaved_runs_match_numpy_reduceat_in_a_long_list),
        cmocka_unit_test(signed_zeros_sum_as_numpy_does),
        cmocka_unit_test(negative_and_far_apart_indices_are_sorted),
        cmocka_unit_test(random_lists_match_the_specification),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
