/* The 2-D conservative clipping kernel and its lattice test
 * (src/weights/weights_conservative_2d_clip.c); the kernel against polygon
 * clipping cell by cell is in test_conservative_2d_clip_polygons.c. */
#include <math.h>
#include <omp.h>
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
#include "test_conservative_util.h"

/* The same grid with axis 0 reversed (x[::-1], y[::-1]). */
static grid flipped_along_axis_0(const grid *g)
{
    grid f = grid_new(g->num_x, g->num_y);
    for (int64_t i = 0; i < g->num_x; i++) {
        for (int64_t j = 0; j < g->num_y; j++) {
            f.x[i * g->num_y + j] = g->x[(g->num_x - 1 - i) * g->num_y + j];
            f.y[i * g->num_y + j] = g->y[(g->num_x - 1 - i) * g->num_y + j];
        }
    }
    return f;
}

/* The tests' distorted grid (regridding's _host_test._distorted): t =
 * linspace(-0.7, 0.7, num), x = u cos a - v sin a + 0.15 u v,
 * y = u sin a + v cos a + 0.10 u^2, scaled by `scale`. */
static grid distorted(int64_t num, double angle, double scale)
{
    grid g = grid_new(num, num);
    for (int64_t i = 0; i < num; i++) {
        for (int64_t j = 0; j < num; j++) {
            double u = scale * linspace_at(-0.7, 0.7, num, i);
            double v = scale * linspace_at(-0.7, 0.7, num, j);
            g.x[i * num + j] = u * cos(angle) - v * sin(angle) + 0.15 * u * v / scale;
            g.y[i * num + j] = u * sin(angle) + v * cos(angle) + 0.10 * u * u / scale;
        }
    }
    return g;
}

/* The weights as a dense (input cell, output cell) matrix, summed. */
static double *dense(const spart_triples *t, int64_t rows, int64_t columns)
{
    double *matrix = calloc((size_t)(rows * columns), sizeof(double));
    assert_non_null(matrix);
    for (int64_t k = 0; k < t->count; k++) {
        matrix[t->indices_input[k] * columns + t->indices_output[k]] += t->values[k];
    }
    return matrix;
}

/* ---- the lattice test --------------------------------------------------- */

static void lattices_are_recognised(void **state)
{
    (void)state;
    grid g = lattice(-1, 1, 6, -1, 1, 6);
    assert_true(spart_host_grid_is_lattice(g.x, g.y, 6, 6));
    grid_free(&g);
    g = lattice(-1, 2, 6, 0.5, 0.25, 9); /* y descending */
    assert_true(spart_host_grid_is_lattice(g.x, g.y, 6, 9));
    grid_free(&g);
    g = lattice(1, -1, 6, -1, 1, 6); /* x descending */
    assert_true(spart_host_grid_is_lattice(g.x, g.y, 6, 6));
    grid_free(&g);
}

static void distorted_grids_are_not_lattices(void **state)
{
    (void)state;
    grid g = distorted(6, 0.3, 1);
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 6, 6));
    grid_free(&g);
    /* x varying along axis 1 as well, by the least amount */
    g = lattice(-1, 1, 4, -1, 1, 4);
    g.x[1 * 4 + 3] = nextafter(g.x[1 * 4 + 3], 2.0);
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 4, 4));
    grid_free(&g);
    /* the axes swapped: x varies along axis 1 */
    g = lattice(-1, 1, 4, -1, 1, 4);
    assert_false(spart_host_grid_is_lattice(g.y, g.x, 4, 4));
    grid_free(&g);
}

/* Steps constant to a relative 1e-10, as np.allclose(step, step[0],
 * rtol=1e-10, atol=0) decides, exactly at the edge. */
static void steps_may_vary_by_a_relative_1e_10(void **state)
{
    (void)state;
    grid g = lattice(0, 3, 4, 0, 1, 2); /* steps of exactly 1 in x */
    for (int64_t j = 0; j < 2; j++) {
        g.x[3 * 2 + j] = 3 + 0.9e-10; /* last step 1 + 0.9e-10: close */
    }
    assert_true(spart_host_grid_is_lattice(g.x, g.y, 4, 2));
    for (int64_t j = 0; j < 2; j++) {
        g.x[3 * 2 + j] = 3 + 1.1e-10; /* 1 + 1.1e-10: not */
    }
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 4, 2));
    grid_free(&g);
}

static void degenerate_grids_are_not_lattices(void **state)
{
    (void)state;
    grid g = lattice(0, 1, 1, 0, 1, 3); /* one vertex along x */
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 1, 3));
    grid_free(&g);
    g = lattice(0, 0, 3, 0, 1, 3); /* zero step */
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 3, 3));
    grid_free(&g);
    g = lattice(0, 1, 3, 0, 1, 3);
    g.y[0] = NAN;
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 3, 3));
    grid_free(&g);
    g = lattice(0, 1, 3, 0, 1, 3);
    for (int64_t j = 0; j < 3; j++) {
        g.x[2 * 3 + j] = INFINITY;
    }
    assert_false(spart_host_grid_is_lattice(g.x, g.y, 3, 3));
    grid_free(&g);
}

/* ---- the clipping kernel -------------------------------------------------- */

/* Identical lattices give the identity to 1e-12. The vertices of
 * np.linspace are not exactly uniform, so slivers of about 4e-16 appear
 * next to the diagonal, as in the reference (40 entries for this grid). */
static void identical_lattices_give_the_identity(void **state)
{
    (void)state;
    grid g = lattice(-1, 1, 7, -0.3, 0.9, 5);
    spart_triples t = clip_onto_lattice(&g, &g, NULL, 1);
    int64_t n = num_cells(&g);
    assert_sorted_unique_in_range(&t, n, n);
    double *matrix = dense(&t, n, n);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t o = 0; o < n; o++) {
            assert_true(fabs(matrix[i * n + o] - (i == o ? 1.0 : 0.0)) < 1e-12);
        }
    }
    assert_int_equal(t.count, 40);
    free(matrix);
    spart_triples_release(&t);
    grid_free(&g);
}

/* On lattices of exactly representable vertices the identity is exact:
 * one entry per cell, 1.0. */
static void identical_dyadic_lattices_give_exactly_the_identity(void **state)
{
    (void)state;
    grid g = lattice(-1, 1, 9, 0, 3, 7); /* steps 0.25 and 0.5 */
    spart_triples t = clip_onto_lattice(&g, &g, NULL, 1);
    assert_int_equal(t.count, num_cells(&g));
    for (int64_t k = 0; k < t.count; k++) {
        assert_int_equal(t.indices_input[k], k);
        assert_int_equal(t.indices_output[k], k);
        assert_true(t.values[k] == 1.0);
    }
    spart_triples_release(&t);
    grid_free(&g);
}

/* A lattice twice as fine onto a coarse one: each fine cell lies in one
 * coarse cell, weight exactly 1, and nothing else. */
static void a_finer_lattice_gives_blocks_of_ones(void **state)
{
    (void)state;
    grid fine = lattice(-1, 1, 9, -1, 1, 9);
    grid coarse = lattice(-1, 1, 5, -1, 1, 5);
    spart_triples t = clip_onto_lattice(&fine, &coarse, NULL, 1);
    assert_int_equal(t.count, 64);
    for (int64_t k = 0; k < t.count; k++) {
        int64_t i = t.indices_input[k] / 8, j = t.indices_input[k] % 8;
        assert_int_equal(t.indices_output[k], (i / 2) * 4 + j / 2);
        assert_true(t.values[k] == 1.0);
    }
    spart_triples_release(&t);
    grid_free(&fine);
    grid_free(&coarse);
}

/* A coarse lattice onto one twice as fine: each coarse cell is split into
 * four quarters, exactly. */
static void a_coarser_lattice_gives_blocks_of_quarters(void **state)
{
    (void)state;
    grid fine = lattice(-1, 1, 9, -1, 1, 9);
    grid coarse = lattice(-1, 1, 5, -1, 1, 5);
    spart_triples t = clip_onto_lattice(&coarse, &fine, NULL, 1);
    assert_int_equal(t.count, 64);
    for (int64_t k = 0; k < t.count; k++) {
        int64_t i = t.indices_input[k] / 4, j = t.indices_input[k] % 4;
        int64_t o_i = t.indices_output[k] / 8, o_j = t.indices_output[k] % 8;
        assert_int_equal(o_i / 2, i);
        assert_int_equal(o_j / 2, j);
        assert_true(t.values[k] == 0.25);
    }
    spart_triples_release(&t);
    grid_free(&fine);
    grid_free(&coarse);
}

/* An input grid of the opposite orientation (axis 0 reversed) gives the
 * same positive weights, with input cell (i, j) renamed (n - 1 - i, j). */
static void a_flipped_input_gives_permuted_positive_weights(void **state)
{
    (void)state;
    grid g = distorted(9, 0.3, 1);
    grid f = flipped_along_axis_0(&g);
    grid out = lattice(-0.9, 0.9, 6, -0.8, 0.9, 7);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 1);
    spart_triples t_flipped = clip_onto_lattice(&f, &out, NULL, 1);
    int64_t n_in = num_cells(&g), n_out = num_cells(&out);
    assert_sorted_unique_in_range(&t_flipped, n_in, n_out);
    double *matrix = dense(&t, n_in, n_out);
    double *matrix_flipped = dense(&t_flipped, n_in, n_out);
    for (int64_t i = 0; i < 8; i++) {
        for (int64_t j = 0; j < 8; j++) {
            for (int64_t o = 0; o < n_out; o++) {
                double a = matrix[(i * 8 + j) * n_out + o];
                double b = matrix_flipped[((7 - i) * 8 + j) * n_out + o];
                assert_true(fabs(a - b) < 1e-12);
            }
        }
    }
    for (int64_t k = 0; k < t_flipped.count; k++) {
        assert_true(t_flipped.values[k] > 0);
    }
    free(matrix);
    free(matrix_flipped);
    spart_triples_release(&t);
    spart_triples_release(&t_flipped);
    grid_free(&g);
    grid_free(&f);
    grid_free(&out);
}

/* A lattice whose x descends gives the same positive weights, with output
 * cell (a, b) renamed (n - 1 - a, b). */
static void a_descending_lattice_gives_permuted_positive_weights(void **state)
{
    (void)state;
    grid g = distorted(7, -0.2, 1);
    grid out = lattice(-0.75, 0.75, 5, -0.8, 0.9, 6);
    grid out_flipped = lattice(0.75, -0.75, 5, -0.8, 0.9, 6);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 0);
    spart_triples t_flipped = clip_onto_lattice(&g, &out_flipped, NULL, 0);
    int64_t n_in = num_cells(&g), n_out = num_cells(&out);
    double *matrix = dense(&t, n_in, n_out);
    double *matrix_flipped = dense(&t_flipped, n_in, n_out);
    for (int64_t i = 0; i < n_in; i++) {
        for (int64_t a = 0; a < 4; a++) {
            for (int64_t b = 0; b < 5; b++) {
                double w = matrix[i * n_out + a * 5 + b];
                double w_flipped = matrix_flipped[i * n_out + (3 - a) * 5 + b];
                assert_true(fabs(w - w_flipped) < 1e-12);
            }
        }
    }
    for (int64_t k = 0; k < t_flipped.count; k++) {
        assert_true(t_flipped.values[k] > 0);
    }
    free(matrix);
    free(matrix_flipped);
    spart_triples_release(&t);
    spart_triples_release(&t_flipped);
    grid_free(&g);
    grid_free(&out);
    grid_free(&out_flipped);
}

/* regridding 3.6.0: the same entries in the same order, the values to
 * 1e-12 relative each. Not bit for bit: spart sums the overlaps along the
 * cells' edges instead of clipping polygons, and rounds differently (its
 * worst entry here, the smallest, is 1.8e-14 off the exact overlap worked
 * out in long double, the package's 1.6e-13):
 *     t = np.linspace(-0.7, 0.7, 5); a = 0.3
 *     u = t[:, None] * np.ones(5); v = np.ones(5)[:, None] * t
 *     x = u * np.cos(a) - v * np.sin(a) + 0.15 * u * v
 *     y = u * np.sin(a) + v * np.cos(a) + 0.10 * u * u
 *     xo = np.linspace(-0.8, 0.8, 4)[:, None] * np.ones(5)
 *     yo = np.ones(4)[:, None] * np.linspace(-0.8, 0.8, 5)
 *     wi = 1.0 + 0.25 * np.arange(16).reshape(4, 4) % 3
 *     regridding.weights((x, y), (xo, yo), method="conservative",
 *                        weights_input=wi)
 * (the clipping path; x, y as hex below, since cos and sin may differ in
 * the last bit between libms). */
static const double distorted_x_reference[25] = {
    -0x1.8db13b4fb8f5ep-2,
    -0x1.0e9e8f7828da5p-1,
    -0x1.566481487539bp-1,
    -0x1.9e2a7318c1990p-1,
    -0x1.e5f064e90df87p-1,
    -0x1.73ba131f1b3a8p-4,
    -0x1.b35306103c085p-3,
    -0x1.566481487539bp-2,
    -0x1.d31f7f88cc6f2p-2,
    -0x1.27ed3ee491d25p-1,
    0x1.a7a8638056b14p-3,
    0x1.a7a8638056b14p-4,
    0x0.0p+0,
    -0x1.a7a8638056b11p-4,
    -0x1.a7a8638056b14p-3,
    0x1.024b74240ebffp-1,
    0x1.ad7db4c8495ccp-2,
    0x1.566481487539ap-2,
    0x1.fe969b91422d2p-3,
    0x1.5064349199e6dp-3,
    0x1.9aaccf6807d39p-1,
    0x1.7888a8583e86bp-1,
    0x1.566481487539bp-1,
    0x1.34405a38abeccp-1,
    0x1.121c3328e29fdp-1,
};
static const double distorted_y_reference[25] = {
    -0x1.a73812fd88d9bp-1,
    -0x1.f80ba4b29c79bp-2,
    -0x1.434e46d44e802p-3,
    0x1.697abbbc9bf32p-3,
    0x1.0590ef936199bp-1,
    -0x1.8513ebedbf8cdp-1,
    -0x1.b3c3569309dfep-2,
    -0x1.757b552a5298bp-4,
    0x1.f20b57fbc126fp-3,
    0x1.27b516a32ae69p-1,
    -0x1.566481487539bp-1,
    -0x1.566481487539bp-2,
    0x0.0p+0,
    0x1.566481487539ap-2,
    0x1.566481487539bp-1,
    -0x1.1b29d30da9e08p-1,
    -0x1.bfde49a5bd0eap-3,
    0x1.d9d571d65ac9ap-4,
    0x1.ccd9ddbe0bec0p-2,
    0x1.919f2f834092ep-1,
    -0x1.a6c7c27abb023p-2,
    -0x1.418d04c917220p-4,
    0x1.060140162f713p-2,
    0x1.2e32e0af52557p-1,
    0x1.d96521538cf25p-1,
};
static const int64_t reference_input[46] = {
    0, 0, 1, 1, 1, 1, 2, 2, 3,  3,  4,  4,  5,  5,  5,  6,  6,  6,  6,  7,  7,  7,  7,
    8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 14, 14, 15, 15,
};
static const int64_t reference_output[46] = {
    0, 4, 0, 1, 4, 5, 1, 2,  2, 3, 4,  5, 1, 4, 5, 1, 2,  5, 6, 2,  3,  6, 7,
    4, 5, 8, 9, 5, 6, 9, 10, 6, 7, 10, 6, 7, 8, 9, 9, 10, 6, 7, 10, 11, 7, 11,
};
static const double reference_values[46] = {
    0x1.38a9ad3413848p-1,  0x1.7ec9266515597p-2, 0x1.9790c35043042p-3, 0x1.014452020c507p+0,
    0x1.1224e7de44810p-6,  0x1.e0407d1c8f430p-6, 0x1.19be0f83d715ep-1, 0x1.e59f21bdd1a9fp-1,
    0x1.a28c2d1e0b341p-1,  0x1.19490b2339d36p-1, 0x1.db1d56af3c7d6p+0, 0x1.27154a861c157p-3,
    0x1.0bcdbe96c3c56p-3,  0x1.833e2cecbad14p-6, 0x1.0c3ca7bcba4e1p+1, 0x1.20f3e491f17d3p-3,
    0x1.98ad576f7288ep-1,  0x1.8cb1fa162e6ebp-3, 0x1.5df4987342be2p+0, 0x1.3cf744acc67b8p-1,
    0x1.49747831c9bbap+0,  0x1.215f83779a9ecp-2, 0x1.1f700933d8bd8p-1, 0x1.6748ebd7d0e8cp-1,
    0x1.93fdaf813f3f2p-2,  0x1.2c89108683abap+0, 0x1.75a61b5a88203p-1, 0x1.d1eda004b2f26p+0,
    0x1.563411880b9b0p-2,  0x1.b775c7983016cp-1, 0x1.e653be6990db5p-3, 0x1.8e594669dbfd7p+1,
    0x1.d79fad3c57b4ap-4,  0x1.174de1620a270p-2, 0x1.a51fb0492d853p-3, 0x1.c5ae04fb6d27cp+1,
    0x1.f40035e8a9c2dp-3,  0x1.82f1f30730e6bp-1, 0x1.1913751741814p-1, 0x1.66ec8ae8be7f0p-1,
    0x1.075af4de6e13ep-11, 0x1.ddb433e18fe63p-8, 0x1.e84b113ce9dddp-1, 0x1.13b7af9e1b673p-1,
    0x1.2114d5986beaap-2,  0x1.2c87e762708c1p+0,
};

static grid distorted_reference(void)
{
    grid g = grid_new(5, 5);
    memcpy(g.x, distorted_x_reference, sizeof distorted_x_reference);
    memcpy(g.y, distorted_y_reference, sizeof distorted_y_reference);
    return g;
}

static void a_distorted_grid_matches_the_reference(void **state)
{
    (void)state;
    static const double weights_input[16] = {1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75,
                                             3.0, 3.25, 3.5, 3.75, 1.0, 1.25, 1.5, 1.75};
    grid g = distorted_reference();
    grid out = grid_new(4, 5);
    for (int64_t i = 0; i < 4; i++) {
        for (int64_t j = 0; j < 5; j++) {
            out.x[i * 5 + j] = linspace_at(-0.8, 0.8, 4, i);
            out.y[i * 5 + j] = linspace_at(-0.8, 0.8, 5, j);
        }
    }
    for (int parallel = 0; parallel <= 1; parallel++) {
        spart_triples t = clip_onto_lattice(&g, &out, weights_input, parallel);
        assert_int_equal(t.count, 46);
        assert_memory_equal(t.indices_input, reference_input, sizeof reference_input);
        assert_memory_equal(t.indices_output, reference_output, sizeof reference_output);
        for (int64_t k = 0; k < 46; k++) {
            double relative = fabs(t.values[k] - reference_values[k]) / fabs(reference_values[k]);
            assert_true(relative <= 1e-12);
        }
        spart_triples_release(&t);
    }
    grid_free(&g);
    grid_free(&out);
}

/* regridding.md section 7 item 6: a 66x66 grid on +-5, rotated by 0.4 and
 * bent (x += 0.05 u^2, y += 0.05 v^2), onto the 33x33 lattice spanning its
 * bounding box: every cell is covered, so each gives away all of itself. */
static void a_warped_grid_onto_its_bounding_lattice_conserves(void **state)
{
    (void)state;
    grid g = grid_new(66, 66);
    for (int64_t i = 0; i < 66; i++) {
        for (int64_t j = 0; j < 66; j++) {
            double u = linspace_at(-5, 5, 66, i), v = linspace_at(-5, 5, 66, j);
            g.x[i * 66 + j] = u * cos(0.4) - v * sin(0.4) + 0.05 * u * u;
            g.y[i * 66 + j] = u * sin(0.4) + v * cos(0.4) + 0.05 * v * v;
        }
    }
    grid out = bounding_lattice(&g, 33);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 1);
    int64_t n_in = num_cells(&g);
    assert_sorted_unique_in_range(&t, n_in, num_cells(&out));
    double *total = input_totals(&t, n_in);
    double sum_in = 0, sum_out = 0;
    uint64_t seed = 5;
    double *value = malloc((size_t)n_in * sizeof(double));
    assert_non_null(value);
    for (int64_t i = 0; i < n_in; i++) {
        assert_true(fabs(total[i] - 1) < 3e-13);
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        value[i] = 1 + (double)(seed >> 11) * 0x1.0p-53;
        sum_in += value[i];
    }
    for (int64_t k = 0; k < t.count; k++) {
        sum_out += t.values[k] * value[t.indices_input[k]];
    }
    assert_true(fabs(sum_out / sum_in - 1) < 1e-14);
    free(value);
    free(total);
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&out);
}

/* Randomly jittered grids: cells wholly inside the lattice give away all
 * of themselves; none gives away more. */
static void jittered_grids_conserve(void **state)
{
    (void)state;
    uint64_t seed = 17;
    for (int trial = 0; trial < 20; trial++) {
        grid g = distorted(12, 0.37 * trial, 1.0);
        for (int64_t k = 0; k < 144; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            g.x[k] += 0.02 * ((double)(seed >> 11) * 0x1.0p-53 - 0.5);
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            g.y[k] += 0.02 * ((double)(seed >> 11) * 0x1.0p-53 - 0.5);
        }
        grid out = lattice(-0.6, 0.55, 8, -0.5, 0.7, 6);
        spart_triples t = clip_onto_lattice(&g, &out, NULL, trial % 2);
        double *total = input_totals(&t, 121);
        for (int64_t i = 0; i < 11; i++) {
            for (int64_t j = 0; j < 11; j++) {
                int inside = 1;
                for (int di = 0; di <= 1; di++) {
                    for (int dj = 0; dj <= 1; dj++) {
                        double x = g.x[(i + di) * 12 + j + dj], y = g.y[(i + di) * 12 + j + dj];
                        inside &= x > -0.6 && x < 0.55 && y > -0.5 && y < 0.7;
                    }
                }
                double fraction = total[i * 11 + j];
                assert_true(fraction < 1 + 1e-13);
                if (inside) {
                    assert_true(fabs(fraction - 1) < 1e-13);
                }
            }
        }
        free(total);
        spart_triples_release(&t);
        grid_free(&g);
        grid_free(&out);
    }
}

/* The same list for serial, one thread and two threads, bit for bit. */
static void thread_counts_give_identical_weights(void **state)
{
    (void)state;
    grid g = distorted(40, 0.9, 1.3);
    grid out = lattice(-1, 1, 17, -0.9, 1.1, 13);
    double *weights_input = malloc(39 * 39 * sizeof(double));
    assert_non_null(weights_input);
    for (int64_t k = 0; k < 39 * 39; k++) {
        weights_input[k] = 0.5 + (double)(k % 7) / 4;
    }
    int threads = omp_get_max_threads();
    spart_triples serial = clip_onto_lattice(&g, &out, weights_input, 0);
    omp_set_num_threads(1);
    spart_triples one = clip_onto_lattice(&g, &out, weights_input, 1);
    omp_set_num_threads(2);
    spart_triples two = clip_onto_lattice(&g, &out, weights_input, 1);
    omp_set_num_threads(threads);
    assert_true(serial.count > 1000);
    assert_triples_bits_equal(&serial, &one);
    assert_triples_bits_equal(&serial, &two);
    spart_triples_release(&serial);
    spart_triples_release(&one);
    spart_triples_release(&two);
    free(weights_input);
    grid_free(&g);
    grid_free(&out);
}

static void an_input_outside_the_lattice_gives_nothing(void **state)
{
    (void)state;
    grid g = lattice(5, 6, 4, 5, 6, 4);
    grid out = lattice(-1, 1, 5, -1, 1, 5);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 1);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    /* touching the lattice along an edge only: no area */
    grid edge = lattice(1, 2, 3, -1, 1, 3);
    t = clip_onto_lattice(&edge, &out, NULL, 1);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&edge);
    grid_free(&out);
}

/* A cell of zero area (two vertices coincide along a whole edge) has no
 * fraction to give, and is skipped; its neighbours are not. */
static void cells_of_zero_area_are_skipped(void **state)
{
    (void)state;
    grid g = lattice(-1, 1, 3, -1, 1, 3);
    for (int64_t j = 0; j < 3; j++) { /* collapse the first row of cells */
        g.x[1 * 3 + j] = g.x[0 * 3 + j];
    }
    grid out = lattice(-1, 1, 3, -1, 1, 3);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 1);
    for (int64_t k = 0; k < t.count; k++) {
        assert_true(t.indices_input[k] >= 2);
    }
    assert_int_equal(t.count, 4); /* cells 2 and 3 each span two outputs */
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&out);
}

static void grids_without_cells_give_nothing(void **state)
{
    (void)state;
    grid g = lattice(-1, 1, 1, -1, 1, 4);
    grid out = lattice(-1, 1, 3, -1, 1, 3);
    spart_triples t;
    spart_triples_init(&t, &plain_allocator);
    assert_int_equal(
        spart_host_weights_conservative_2d_clip(g.x, g.y, 1, 4, out.x, out.y, 3, 3, NULL, 1, &t),
        SPART_OK);
    assert_int_equal(t.count, 0);
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&out);
}

/* A cell folded over itself (a self-crossing "bowtie") is outside what
 * the algorithm supports, but must not write past its scratch polygons. */
static void a_self_crossing_cell_stays_in_bounds(void **state)
{
    (void)state;
    grid g = grid_new(2, 2);
    const double x[4] = {-3.1, 3.3, 3.2, -2.9}; /* (0,0) (0,1) (1,0) (1,1) */
    const double y[4] = {-2.7, 3.4, 2.9, -3.3};
    memcpy(g.x, x, sizeof x);
    memcpy(g.y, y, sizeof y);
    grid out = lattice(-4, 4, 17, -4, 4, 17);
    spart_triples t = clip_onto_lattice(&g, &out, NULL, 0);
    assert_sorted_unique_in_range(&t, 1, 256);
    spart_triples_release(&t);
    grid_free(&g);
    grid_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lattices_are_recognised),
        cmocka_unit_test(distorted_grids_are_not_lattices),
        cmocka_unit_test(steps_may_vary_by_a_relative_1e_10),
        cmocka_unit_test(degenerate_grids_are_not_lattices),
        cmocka_unit_test(identical_lattices_give_the_identity),
        cmocka_unit_test(identical_dyadic_lattices_give_exactly_the_identity),
        cmocka_unit_test(a_finer_lattice_gives_blocks_of_ones),
        cmocka_unit_test(a_coarser_lattice_gives_blocks_of_quarters),
        cmocka_unit_test(a_flipped_input_gives_permuted_positive_weights),
        cmocka_unit_test(a_descending_lattice_gives_permuted_positive_weights),
        cmocka_unit_test(a_distorted_grid_matches_the_reference),
        cmocka_unit_test(a_warped_grid_onto_its_bounding_lattice_conserves),
        cmocka_unit_test(jittered_grids_conserve),
        cmocka_unit_test(thread_counts_give_identical_weights),
        cmocka_unit_test(an_input_outside_the_lattice_gives_nothing),
        cmocka_unit_test(cells_of_zero_area_are_skipped),
        cmocka_unit_test(grids_without_cells_give_nothing),
        cmocka_unit_test(a_self_crossing_cell_stays_in_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
