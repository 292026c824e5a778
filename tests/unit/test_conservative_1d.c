/* The 1-D conservative weights kernel (src/weights/weights_conservative_1d.c). */
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

/* np.linspace(start, stop, num): k * step + start, the last vertex exactly
 * stop, so that grids here are bitwise the reference's. */
static void numpy_linspace(double start, double stop, int64_t num, double *out)
{
    double step = (stop - start) / (double)(num - 1);
    for (int64_t k = 0; k < num; k++) {
        out[k] = (double)k * step + start;
    }
    out[num - 1] = stop;
}

static void reverse(double *a, int64_t n)
{
    for (int64_t k = 0; k < n / 2; k++) {
        double swap = a[k];
        a[k] = a[n - 1 - k];
        a[n - 1 - k] = swap;
    }
}

/* Build the weights of one pair of grids into a fresh list. */
static spart_triples build(const double *x_input, int64_t num_input, const double *x_output,
                           int64_t num_output, const double *weights_input)
{
    spart_triples triples;
    spart_triples_init(&triples, &plain_allocator);
    assert_int_equal(spart_host_weights_conservative_1d(x_input, num_input, x_output, num_output,
                                                        weights_input, &triples),
                     SPART_OK);
    return triples;
}

static void assert_entry(const spart_triples *t, int64_t k, int64_t input, int64_t output,
                         double value)
{
    assert_int_equal(t->indices_input[k], input);
    assert_int_equal(t->indices_output[k], output);
    assert_memory_equal(&t->values[k], &value, sizeof value); /* bitwise */
}

static void identical_grids_give_the_identity(void **state)
{
    (void)state;
    double x[7] = {-2.0, -1.25, 0.0, 0.1, 0.7, 3.0, 8.5};
    spart_triples t = build(x, 7, x, 7, NULL);
    assert_int_equal(t.count, 6);
    for (int64_t k = 0; k < 6; k++) {
        assert_entry(&t, k, k, k, 1.0);
    }
    spart_triples_release(&t);
}

/* regridding.weights(np.linspace(-1, 1, 11), np.linspace(-1, 1, 6),
 *                    method="conservative"): cells (k, k // 2), all 1.0,
 * so regridding ones gives 2 * ones(5). */
static void coarsening_matches_the_reference(void **state)
{
    (void)state;
    double x_input[11], x_output[6];
    numpy_linspace(-1, 1, 11, x_input);
    numpy_linspace(-1, 1, 6, x_output);
    spart_triples t = build(x_input, 11, x_output, 6, NULL);
    assert_int_equal(t.count, 10);
    for (int64_t k = 0; k < 10; k++) {
        assert_entry(&t, k, k, k / 2, 1.0);
    }
    spart_triples_release(&t);
}

/* regridding.weights(np.linspace(-1, 1, 6), np.linspace(-1, 1, 11),
 *                    method="conservative"), bit for bit: halves, with the
 * rounding of the grids' vertices, so regridding ones gives ones(10) / 2. */
static void refinement_matches_the_reference(void **state)
{
    (void)state;
    static const double expected[10] = {
        0x1.ffffffffffffep-2, 0x1.0000000000001p-1, 0x1.0000000000001p-1, 0x1.ffffffffffffep-2,
        0x1.ffffffffffffbp-2, 0x1.0000000000002p-1, 0x1.0000000000000p-1, 0x1.0000000000000p-1,
        0x1.0000000000000p-1, 0x1.0000000000000p-1,
    };
    double x_input[6], x_output[11];
    numpy_linspace(-1, 1, 6, x_input);
    numpy_linspace(-1, 1, 11, x_output);
    spart_triples t = build(x_input, 6, x_output, 11, NULL);
    assert_int_equal(t.count, 10);
    for (int64_t k = 0; k < 10; k++) {
        assert_entry(&t, k, k / 2, k, expected[k]);
    }
    spart_triples_release(&t);
}

/* regridding.weights(np.array([0.0, 0.3, 1.1, 1.7, 2.0]),
 *                    np.array([-0.5, 0.25, 0.9, 1.7, 2.6]),
 *                    method="conservative",
 *                    weights_input=np.array([1.0, 2.0, 0.5, 3.0])) */
static void non_uniform_grids_match_the_reference(void **state)
{
    (void)state;
    const double x_input[5] = {0.0, 0.3, 1.1, 1.7, 2.0};
    const double x_output[5] = {-0.5, 0.25, 0.9, 1.7, 2.6};
    const double weights_input[4] = {1.0, 2.0, 0.5, 3.0};
    spart_triples t = build(x_input, 5, x_output, 5, weights_input);
    assert_int_equal(t.count, 6);
    assert_entry(&t, 0, 0, 0, 0x1.aaaaaaaaaaaabp-1);
    assert_entry(&t, 1, 0, 1, 0x1.5555555555554p-3);
    assert_entry(&t, 2, 1, 1, 0x1.8000000000001p+0);
    assert_entry(&t, 3, 1, 2, 0x1.0000000000001p-1);
    assert_entry(&t, 4, 2, 2, 0x1.0000000000000p-1);
    assert_entry(&t, 5, 3, 3, 0x1.8000000000000p+1);
    spart_triples_release(&t);
}

/* A small deterministic generator, so the random grids are the same on
 * every run. */
static double uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) * 0x1.0p-53;
}

static void sort_ascending(double *x, int64_t num)
{
    for (int64_t k = 1; k < num; k++) { /* insertion sort */
        double v = x[k];
        int64_t j = k;
        while (j > 0 && x[j - 1] > v) {
            x[j] = x[j - 1];
            j--;
        }
        x[j] = v;
    }
}

/* num ascending vertices drawn from [low, high). */
static void random_ascending(uint64_t *state, double low, double high, int64_t num, double *x)
{
    for (int64_t k = 0; k < num; k++) {
        x[k] = low + (high - low) * uniform(state);
    }
    sort_ascending(x, num);
}

static int strictly_increasing(const double *x, int64_t num)
{
    for (int64_t k = 1; k < num; k++) {
        if (!(x[k - 1] < x[k])) {
            return 0;
        }
    }
    return 1;
}

/* For ascending grids every weight is, bit for bit, the overlap of the two
 * cells over the input cell's length; each pair appears once, and every
 * overlapping pair appears. */
static void ascending_weights_are_the_overlap_formula(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    for (int trial = 0; trial < 200; trial++) {
        double x_input[40], x_output[40];
        int64_t num_input = 2 + (int64_t)(38 * uniform(&seed));
        int64_t num_output = 2 + (int64_t)(38 * uniform(&seed));
        random_ascending(&seed, -3, 3, num_input, x_input);
        random_ascending(&seed, -3, 3, num_output, x_output);
        if (trial % 3 == 0) { /* share vertices: exact ties decide splits */
            for (int64_t k = 0; k < num_output; k += 2) {
                x_output[k] = x_input[(k * 7) % num_input];
            }
            sort_ascending(x_output, num_output);
        }
        if (!strictly_increasing(x_input, num_input) ||
            !strictly_increasing(x_output, num_output)) {
            continue;
        }
        spart_triples t = build(x_input, num_input, x_output, num_output, NULL);
        int64_t found = 0;
        for (int64_t i = 0; i + 1 < num_input; i++) {
            for (int64_t o = 0; o + 1 < num_output; o++) {
                double low = fmax(x_input[i], x_output[o]);
                double high = fmin(x_input[i + 1], x_output[o + 1]);
                if (!(low < high)) {
                    continue;
                }
                double expected = (high - low) / (x_input[i + 1] - x_input[i]);
                int64_t matches = 0;
                for (int64_t k = 0; k < t.count; k++) {
                    if (t.indices_input[k] == i && t.indices_output[k] == o) {
                        assert_memory_equal(&t.values[k], &expected, sizeof expected);
                        matches++;
                    }
                }
                assert_int_equal(matches, 1);
                found++;
            }
        }
        assert_int_equal(t.count, found);
        spart_triples_release(&t);
    }
}

/* Every input cell inside the output grid gives all of itself away; the
 * total of weight times input length is the length covered by both. */
static void random_grids_conserve(void **state)
{
    (void)state;
    uint64_t seed = 777;
    for (int trial = 0; trial < 100; trial++) {
        double x_input[60], x_output[30];
        random_ascending(&seed, -2, 2, 60, x_input);
        random_ascending(&seed, -2.5, 2.5, 30, x_output);
        spart_triples t = build(x_input, 60, x_output, 30, NULL);
        double total[59] = {0};
        double covered = 0;
        for (int64_t k = 0; k < t.count; k++) {
            int64_t i = t.indices_input[k];
            total[i] += t.values[k];
            covered += t.values[k] * (x_input[i + 1] - x_input[i]);
        }
        for (int64_t i = 0; i < 59; i++) {
            if (x_input[i] >= x_output[0] && x_input[i + 1] <= x_output[29]) {
                assert_true(fabs(total[i] - 1) < 1e-14);
            }
        }
        double expected = fmin(x_input[59], x_output[29]) - fmax(x_input[0], x_output[0]);
        assert_true(fabs(covered - expected) < 1e-13);
        spart_triples_release(&t);
    }
}

/* Reversed uniform grids give the same weights, indexed in the caller's
 * order and never negative. */
static void reversed_uniform_grids_give_the_same(void **state)
{
    (void)state;
    double x_input[11], x_output[6];
    numpy_linspace(-1, 1, 11, x_input);
    numpy_linspace(-1, 1, 6, x_output);
    reverse(x_input, 11);
    reverse(x_output, 6);
    spart_triples t = build(x_input, 11, x_output, 6, NULL);
    assert_int_equal(t.count, 10);
    for (int64_t k = 0; k < 10; k++) {
        /* the walk goes up the ascending view: caller's cell 9 first */
        assert_entry(&t, k, 9 - k, (9 - k) / 2, 1.0);
    }
    spart_triples_release(&t);
}

/* regridding.weights(np.array([3., 1., 0.]), np.array([0., 3.]),
 *                    method="conservative") gives inputs (-2, -1) with
 * (2.0, 0.5): it divides by the length of the mirror cell. Both input
 * cells lie wholly in the output cell, so the truth is (1.0, 1.0), and
 * spart reports the cells by their real indices (1 first, in walk order). */
static void descending_non_uniform_input_divides_by_its_own_cell(void **state)
{
    (void)state;
    const double x_input[3] = {3.0, 1.0, 0.0};
    const double x_output[2] = {0.0, 3.0};
    spart_triples t = build(x_input, 3, x_output, 2, NULL);
    assert_int_equal(t.count, 2);
    assert_entry(&t, 0, 1, 0, 1.0);
    assert_entry(&t, 1, 0, 0, 1.0);
    spart_triples_release(&t);
}

/* With weights_input = (10, 20), the reference gives cell 0 the value
 * 2.0 * 10 = 20 and cell 1 0.5 * 20 = 10; the truth is 10 and 20. */
static void descending_input_applies_weights_input_to_its_own_cell(void **state)
{
    (void)state;
    const double x_input[3] = {3.0, 1.0, 0.0};
    const double x_output[2] = {0.0, 3.0};
    const double weights_input[2] = {10.0, 20.0};
    spart_triples t = build(x_input, 3, x_output, 2, weights_input);
    assert_int_equal(t.count, 2);
    assert_entry(&t, 0, 1, 0, 20.0);
    assert_entry(&t, 1, 0, 0, 10.0);
    spart_triples_release(&t);
}

/* regridding.weights(np.array([0., 1., 3.]), np.array([3., 2., 0.]),
 *                    method="conservative") gives (input, output, value)
 * (0, -1, 1.0), (1, -2, 0.5), (1, -1, 0.5) once sorted; the same values,
 * in walk order, with the real output cells (-1 is cell 1, -2 cell 0). */
static void descending_output_matches_the_reference_with_real_indices(void **state)
{
    (void)state;
    const double x_input[3] = {0.0, 1.0, 3.0};
    const double x_output[3] = {3.0, 2.0, 0.0};
    spart_triples t = build(x_input, 3, x_output, 3, NULL);
    assert_int_equal(t.count, 3);
    assert_entry(&t, 0, 0, 1, 1.0);
    assert_entry(&t, 1, 1, 1, 0.5);
    assert_entry(&t, 2, 1, 0, 0.5);
    spart_triples_release(&t);
}

/* Descending non-uniform grids on both sides give the weights of the
 * ascending problem, bit for bit, with the indices mirrored. */
static void descending_grids_mirror_the_ascending_problem(void **state)
{
    (void)state;
    uint64_t seed = 99;
    for (int trial = 0; trial < 50; trial++) {
        double x_input[25], x_output[20], weights_input[24], weights_reversed[24];
        random_ascending(&seed, -1, 1, 25, x_input);
        random_ascending(&seed, -1.2, 1.2, 20, x_output);
        for (int k = 0; k < 24; k++) {
            weights_input[k] = 0.5 + uniform(&seed);
            weights_reversed[23 - k] = weights_input[k];
        }
        spart_triples ascending = build(x_input, 25, x_output, 20, weights_input);
        reverse(x_input, 25);
        reverse(x_output, 20);
        spart_triples descending = build(x_input, 25, x_output, 20, weights_reversed);
        assert_int_equal(descending.count, ascending.count);
        for (int64_t k = 0; k < ascending.count; k++) {
            assert_entry(&descending, k, 23 - ascending.indices_input[k],
                         18 - ascending.indices_output[k], ascending.values[k]);
        }
        spart_triples_release(&ascending);
        spart_triples_release(&descending);
    }
}

/* regridding.weights(np.array([0., 2.]), np.array([0., 1., 1., 2.]),
 *                    method="conservative") gives (0, 0, 0.5), (0, 1, 0.5):
 * the second half lands in output cell 1, of zero length. It belongs to
 * cell 2. */
static void an_output_cell_of_zero_length_receives_nothing(void **state)
{
    (void)state;
    const double x_input[2] = {0.0, 2.0};
    const double x_output[4] = {0.0, 1.0, 1.0, 2.0};
    spart_triples t = build(x_input, 2, x_output, 4, NULL);
    assert_int_equal(t.count, 2);
    assert_entry(&t, 0, 0, 0, 0.5);
    assert_entry(&t, 1, 0, 2, 0.5);
    spart_triples_release(&t);
}

/* regridding.weights(np.array([0., 1., 2., 3.]), np.array([0., 1., 1., 3.]),
 * method="conservative") gives outputs (0, 1, 1): after the repeated
 * vertex every input cell lands in the zero-length cell 1. */
static void the_walk_continues_past_a_repeated_output_vertex(void **state)
{
    (void)state;
    const double x_input[4] = {0.0, 1.0, 2.0, 3.0};
    const double x_output[4] = {0.0, 1.0, 1.0, 3.0};
    spart_triples t = build(x_input, 4, x_output, 4, NULL);
    assert_int_equal(t.count, 3);
    assert_entry(&t, 0, 0, 0, 1.0);
    assert_entry(&t, 1, 1, 2, 1.0);
    assert_entry(&t, 2, 2, 2, 1.0);
    spart_triples_release(&t);
}

/* regridding.weights(np.array([0., 1., 1., 2.]), np.array([0., 2.]),
 * method="conservative") fails (ZeroDivisionError in the kernel). A cell of
 * zero length has no fraction to give: it gets no entry, its neighbours
 * theirs. */
static void an_input_cell_of_zero_length_gives_nothing(void **state)
{
    (void)state;
    const double x_input[4] = {0.0, 1.0, 1.0, 2.0};
    const double x_output[2] = {0.0, 2.0};
    spart_triples t = build(x_input, 4, x_output, 2, NULL);
    assert_int_equal(t.count, 2);
    assert_entry(&t, 0, 0, 0, 1.0);
    assert_entry(&t, 1, 2, 0, 1.0);
    spart_triples_release(&t);
}

/* An output grid of zero length ([1, 1]) overlaps nothing; the reference
 * gives input cell 1 the weight 1 into it. */
static void an_output_grid_of_zero_length_gives_nothing(void **state)
{
    (void)state;
    const double x_input[3] = {0.0, 1.0, 2.0};
    const double x_output[2] = {1.0, 1.0};
    spart_triples t = build(x_input, 3, x_output, 2, NULL);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
}

static void an_output_outside_the_input_gives_nothing(void **state)
{
    (void)state;
    const double x_input[4] = {0.0, 1.0, 2.0, 3.0};
    const double below[3] = {-5.0, -4.0, -1.0};
    const double above[2] = {3.0, 4.0};
    spart_triples t = build(x_input, 4, below, 3, NULL);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    t = build(x_input, 4, above, 2, NULL);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    t = build(below, 3, x_input, 4, NULL);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
}

static void a_grid_without_cells_gives_nothing(void **state)
{
    (void)state;
    const double x[3] = {0.0, 1.0, 2.0};
    spart_triples t = build(x, 1, x, 3, NULL);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    t = build(x, 3, x, 1, NULL);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
}

/* An output grid starting inside the input grid, or an input grid
 * starting inside the output grid, starts the walk in the right cell. */
static void partial_overlaps_start_in_the_right_cell(void **state)
{
    (void)state;
    const double x_input[5] = {0.0, 1.0, 2.0, 3.0, 4.0};
    const double x_output[3] = {1.5, 2.5, 3.5};
    spart_triples t = build(x_input, 5, x_output, 3, NULL);
    assert_int_equal(t.count, 4);
    assert_entry(&t, 0, 1, 0, 0.5);
    assert_entry(&t, 1, 2, 0, 0.5);
    assert_entry(&t, 2, 2, 1, 0.5);
    assert_entry(&t, 3, 3, 1, 0.5);
    spart_triples_release(&t);
    t = build(x_output, 3, x_input, 5, NULL);
    assert_int_equal(t.count, 4);
    assert_entry(&t, 0, 0, 1, 0.5);
    assert_entry(&t, 1, 0, 2, 0.5);
    assert_entry(&t, 2, 1, 2, 0.5);
    assert_entry(&t, 3, 1, 3, 0.5);
    spart_triples_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identical_grids_give_the_identity),
        cmocka_unit_test(coarsening_matches_the_reference),
        cmocka_unit_test(refinement_matches_the_reference),
        cmocka_unit_test(non_uniform_grids_match_the_reference),
        cmocka_unit_test(ascending_weights_are_the_overlap_formula),
        cmocka_unit_test(random_grids_conserve),
        cmocka_unit_test(reversed_uniform_grids_give_the_same),
        cmocka_unit_test(descending_non_uniform_input_divides_by_its_own_cell),
        cmocka_unit_test(descending_input_applies_weights_input_to_its_own_cell),
        cmocka_unit_test(descending_output_matches_the_reference_with_real_indices),
        cmocka_unit_test(descending_grids_mirror_the_ascending_problem),
        cmocka_unit_test(an_output_cell_of_zero_length_receives_nothing),
        cmocka_unit_test(the_walk_continues_past_a_repeated_output_vertex),
        cmocka_unit_test(an_input_cell_of_zero_length_gives_nothing),
        cmocka_unit_test(an_output_grid_of_zero_length_gives_nothing),
        cmocka_unit_test(an_output_outside_the_input_gives_nothing),
        cmocka_unit_test(a_grid_without_cells_gives_nothing),
        cmocka_unit_test(partial_overlaps_start_in_the_right_cell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
