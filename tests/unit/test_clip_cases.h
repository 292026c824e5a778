/*
 * tests/unit/test_clip_cases.h: the grids on which the device builds of
 * the 2-D conservative weights are held to the host's, entry for entry
 * (tests/unit/test_cuda_weights_clip.c), and on which a change to the
 * shared clipping arithmetic (src/weights/clip_lattice_math.h,
 * clip_polygon_math.h) is checked to keep the host's bits
 * (test_clip_digests.c: golden digests).
 *
 * Each case is an input grid and an output grid of vertices,
 * x[i * num_y + j], made from a fixed recipe and a fixed-seed generator,
 * so that every machine builds the same numbers: rotated and warped grids,
 * random warps strong enough to fold cells, cells of zero area, corners
 * on the lattice lines, grids reaching past the output's edge or lying
 * outside it, cells far larger and far smaller than the output's, and
 * optional weights_input. The lattice cases have lattice outputs
 * (spart_host_grid_is_lattice holds); the general cases curvilinear ones.
 *
 * Everything is static, so a test that uses only part of it builds
 * without warnings; plain C (no cmocka), so a benchmark may use it too.
 */
#ifndef SPART_TEST_CLIP_CASES_H
#define SPART_TEST_CLIP_CASES_H

#include <stdint.h>
#include <stdlib.h>

/* A grid of num_x by num_y vertices. */
typedef struct clip_grid {
    int64_t num_x, num_y;
    double *x, *y;
} clip_grid;

/* A case: input, output, and weights_input per input cell or NULL. */
typedef struct clip_case {
    const char *name;
    clip_grid input, output;
    double *weights_input;
} clip_case;

static inline void clip_case_free(clip_case *c)
{
    free(c->input.x);
    free(c->input.y);
    free(c->output.x);
    free(c->output.y);
    free(c->weights_input);
}

/* A fixed-seed generator (SplitMix64) and its uniform draws in [0, 1). */
static inline double clip_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* cos and sin by their Taylor series, in plain arithmetic (no libm, whose
 * last bits may differ between systems, so that the golden digests hold
 * everywhere); |angle| <= 4. */
static inline void clip_cos_sin(double angle, double *c, double *s)
{
    double term = 1.0, cos_sum = 0.0, sin_sum = 0.0;
    for (int k = 0; k < 40; k++) {
        if (k % 2 == 0) {
            cos_sum += (k % 4 == 0) ? term : -term;
        } else {
            sin_sum += (k % 4 == 1) ? term : -term;
        }
        term = term * angle / (double)(k + 1);
    }
    *c = cos_sum;
    *s = sin_sum;
}

static inline clip_grid clip_grid_new(int64_t num_x, int64_t num_y)
{
    clip_grid g = {num_x, num_y, malloc((size_t)(num_x * num_y) * sizeof(double)),
                   malloc((size_t)(num_x * num_y) * sizeof(double))};
    return g;
}

/* start + k (stop - start) / (num - 1), the last exactly stop. */
static inline double clip_linspace(double start, double stop, int64_t num, int64_t k)
{
    return k == num - 1 ? stop : start + (double)k * ((stop - start) / (double)(num - 1));
}

/* A lattice of num_x by num_y vertices over [x0, x1] x [y0, y1]. */
static inline clip_grid clip_lattice(double x0, double x1, int64_t num_x, double y0, double y1,
                                     int64_t num_y)
{
    clip_grid g = clip_grid_new(num_x, num_y);
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            g.x[i * num_y + j] = clip_linspace(x0, x1, num_x, i);
            g.y[i * num_y + j] = clip_linspace(y0, y1, num_y, j);
        }
    }
    return g;
}

/* The square [-half, half]^2 of num x num vertices, rotated by `angle`,
 * shifted by (shift_x, shift_y), warped by warp (x' += warp y^2, y' +=
 * warp x^2), and each vertex moved by up to `jitter` times the spacing
 * along each axis at random (jitter 0.5 and more folds cells). */
static inline clip_grid clip_warped(int64_t num, double half, double angle, double shift_x,
                                    double shift_y, double warp, double jitter, uint64_t seed)
{
    clip_grid g = clip_grid_new(num, num);
    const double spacing = 2 * half / (double)(num - 1);
    uint64_t state = seed;
    double cos_angle, sin_angle;
    clip_cos_sin(angle, &cos_angle, &sin_angle);
    for (int64_t i = 0; i < num; i++) {
        for (int64_t j = 0; j < num; j++) {
            double u = clip_linspace(-half, half, num, i);
            double v = clip_linspace(-half, half, num, j);
            if (jitter > 0) {
                u += jitter * spacing * (2 * clip_uniform(&state) - 1);
                v += jitter * spacing * (2 * clip_uniform(&state) - 1);
            }
            double x = u * cos_angle - v * sin_angle;
            double y = u * sin_angle + v * cos_angle;
            g.x[i * num + j] = x + warp * y * y + shift_x;
            g.y[i * num + j] = y + warp * x * x + shift_y;
        }
    }
    return g;
}

/* weights_input for the cells of g: uniform in [0.5, 2), some exactly 0. */
static inline double *clip_weights_input(const clip_grid *g, uint64_t seed)
{
    const int64_t n = (g->num_x - 1) * (g->num_y - 1);
    double *w = malloc((size_t)n * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        w[k] = k % 17 == 5 ? 0.0 : 0.5 + 1.5 * clip_uniform(&state);
    }
    return w;
}

/* Collapse some cells of g: every 7th vertex of row 3 onto its
 * neighbour (zero-area and triangular cells), and row 5 onto row 4
 * (a line of cells of zero area). */
static inline void clip_degenerate(clip_grid *g)
{
    const int64_t ny = g->num_y;
    for (int64_t j = 0; j + 1 < ny && g->num_x > 3; j += 7) {
        g->x[3 * ny + j] = g->x[3 * ny + j + 1];
        g->y[3 * ny + j] = g->y[3 * ny + j + 1];
    }
    for (int64_t j = 0; j < ny && g->num_x > 5; j++) {
        g->x[5 * ny + j] = g->x[4 * ny + j];
        g->y[5 * ny + j] = g->y[4 * ny + j];
    }
}

/* regridding's test grid (_host_test._distorted): t = linspace(-0.7, 0.7,
 * num), x = u cos a - v sin a + 0.15 u v, y = u sin a + v cos a + 0.10 u^2. */
static inline clip_grid clip_distorted(int64_t num, double angle)
{
    clip_grid g = clip_grid_new(num, num);
    double c, s;
    clip_cos_sin(angle, &c, &s);
    for (int64_t i = 0; i < num; i++) {
        for (int64_t j = 0; j < num; j++) {
            const double u = clip_linspace(-0.7, 0.7, num, i);
            const double v = clip_linspace(-0.7, 0.7, num, j);
            g.x[i * num + j] = u * c - v * s + 0.15 * u * v;
            g.y[i * num + j] = u * s + v * c + 0.10 * u * u;
        }
    }
    return g;
}

/* The lattice of num x num vertices over the bounding box of g. */
static inline clip_grid clip_bounding_lattice(const clip_grid *g, int64_t num)
{
    double low_x = g->x[0], high_x = g->x[0], low_y = g->y[0], high_y = g->y[0];
    for (int64_t v = 0; v < g->num_x * g->num_y; v++) {
        low_x = g->x[v] < low_x ? g->x[v] : low_x;
        high_x = g->x[v] > high_x ? g->x[v] : high_x;
        low_y = g->y[v] < low_y ? g->y[v] : low_y;
        high_y = g->y[v] > high_y ? g->y[v] : high_y;
    }
    return clip_lattice(low_x, high_x, num, low_y, high_y, num);
}

#define CLIP_NUM_LATTICE_CASES 11

/* Lattice case k (0 <= k < CLIP_NUM_LATTICE_CASES). `scale` multiplies the
 * vertex counts (1 for the tests; larger for timing). */
static inline clip_case clip_lattice_case(int k, int64_t scale)
{
    clip_case c = {0};
    const int64_t n = 24 * scale;
    switch (k) {
    case 0:
        c.name = "rotated onto a lattice of the same size";
        c.input = clip_warped(n + 1, 4, 0.2, 0, 0, 0, 0, 1);
        c.output = clip_lattice(-4, 4, n + 1, -4, 4, n + 1);
        break;
    case 1:
        c.name = "warped, reaching past the lattice's edge";
        c.input = clip_warped(n + 1, 5, 0.4, 0.3, -0.2, 0.05, 0, 2);
        c.output = clip_lattice(-4, 4, n / 2 + 1, -4.5, 3.5, n / 2 + 3);
        break;
    case 2:
        c.name = "random warp folding cells, weights_input";
        c.input = clip_warped(n + 1, 3, 0.3, 0.01, 0.02, 0.02, 0.6, 3);
        c.output = clip_lattice(-4, 4, n + 1, -4, 4, n + 1);
        c.weights_input = clip_weights_input(&c.input, 33);
        break;
    case 3:
        c.name = "coarse cells onto a fine lattice (the walk)";
        c.input = clip_warped(n / 4 + 1, 4, 0.3, 0, 0, 0.02, 0.1, 4);
        c.output = clip_lattice(-5, 5, 4 * n + 1, -5, 5, 3 * n + 1);
        break;
    case 4:
        c.name = "fine cells onto a coarse lattice";
        c.input = clip_warped(4 * n + 1, 4, 0.7, 0, 0, 0.01, 0.2, 5);
        c.output = clip_lattice(-6, 6, n / 3 + 1, -6, 6, n / 4 + 1);
        break;
    case 5:
        c.name = "degenerate cells";
        c.input = clip_warped(n + 1, 4, 0.25, 0, 0, 0, 0.05, 6);
        clip_degenerate(&c.input);
        c.output = clip_lattice(-4, 4, n + 1, -4, 4, n + 1);
        break;
    case 6:
        c.name = "dyadic lattice and its refinement, shifted by halves";
        c.input = clip_lattice(-4, 4, n + 1, -4, 4, n + 1);
        for (int64_t v = 0; v < c.input.num_x * c.input.num_y; v++) {
            c.input.x[v] += 0.5 * (8.0 / (double)n);
        }
        c.output = clip_lattice(-4, 4, 2 * n + 1, -4, 4, n / 2 + 1);
        break;
    case 7:
        c.name = "mirrored input on a descending lattice";
        c.input = clip_warped(n + 1, 4, 3.0, 0, 0, 0.03, 0.1, 7);
        c.output = clip_lattice(4, -4, n + 1, 4.2, -4.2, n + 2);
        break;
    case 9:
        c.name = "regridding's README warp onto its bounding lattice";
        c.input = clip_warped(66 * scale, 5, 0.4, 0, 0, 0, 0, 9);
        for (int64_t v = 0; v < c.input.num_x * c.input.num_y; v++) {
            const double x = c.input.x[v], y = c.input.y[v];
            c.input.x[v] = x + 0.05 * x * x;
            c.input.y[v] = y + 0.05 * y * y;
        }
        c.output = clip_bounding_lattice(&c.input, 33 * scale);
        break;
    case 10:
        c.name = "regridding's distorted grid (0.9 rad) onto a lattice";
        c.input = clip_distorted(n + 1, 0.9);
        c.output = clip_lattice(-1.1, 1.1, n / 2 + 1, -1.0, 1.2, n / 2 + 2);
        break;
    default:
        c.name = "input mostly outside, over the lattice's corner";
        c.input = clip_warped(n + 1, 2, 0.1, 5.1, 4.9, 0, 0, 8);
        c.output = clip_lattice(-4, 4, n + 1, -4, 4, n + 1);
        break;
    }
    return c;
}

#define CLIP_NUM_GENERAL_CASES 7

/* General case k (0 <= k < CLIP_NUM_GENERAL_CASES): curvilinear outputs. */
static inline clip_case clip_general_case(int k, int64_t scale)
{
    clip_case c = {0};
    const int64_t n = 20 * scale;
    switch (k) {
    case 0:
        c.name = "a lattice onto a rotated grid";
        c.input = clip_lattice(-4, 4, n + 1, -4, 4, n + 1);
        c.output = clip_warped(n + 1, 4, 0.2, 0, 0, 0, 0, 11);
        break;
    case 1:
        c.name = "warped onto warped, reaching past the edge, weights_input";
        c.input = clip_warped(n + 1, 4, 0.4, 0.2, 0.1, 0.05, 0.1, 12);
        c.output = clip_warped(n / 2 + 1, 3.5, -0.3, 0, 0, -0.03, 0.05, 13);
        c.weights_input = clip_weights_input(&c.input, 14);
        break;
    case 2:
        c.name = "random warps folding cells, both sides";
        c.input = clip_warped(n + 1, 3, 0.1, 0, 0, 0, 0.6, 15);
        c.output = clip_warped(n + 1, 3, -0.1, 0, 0, 0, 0.6, 16);
        break;
    case 3:
        c.name = "coarse cells onto fine curvilinear cells";
        c.input = clip_warped(n / 4 + 1, 4, 0.3, 0, 0, 0.02, 0, 17);
        c.output = clip_warped(3 * n + 1, 4.5, 0.5, 0, 0, 0.01, 0.1, 18);
        break;
    case 4:
        c.name = "degenerate cells on both sides, a grid against its mirror";
        c.input = clip_warped(n + 1, 4, 0.25, 0, 0, 0, 0.05, 19);
        clip_degenerate(&c.input);
        c.output = clip_warped(n + 1, 4, 0.25 + 3.14159265358979323846, 0, 0, 0, 0.05, 19);
        clip_degenerate(&c.output);
        break;
    case 6:
        c.name = "regridding's distorted grids, 0.3 onto -0.2 rad";
        c.input = clip_distorted(n + 1, 0.3);
        c.output = clip_distorted(n / 2 + 1, -0.2);
        break;
    default:
        c.name = "identical grids (the identity)";
        c.input = clip_warped(n + 1, 4, 0.6, 0, 0, 0.04, 0, 20);
        c.output = clip_warped(n + 1, 4, 0.6, 0, 0, 0.04, 0, 20);
        break;
    }
    return c;
}

#endif /* SPART_TEST_CLIP_CASES_H */
