/*
 * tests/bench/bench_ctis_operators.h: the CTIS-shaped operators the
 * Regridder benchmarks share (bench_regridder on the host,
 * bench_cuda_product on the GPU), synthesised here so that both measure
 * the same weights:
 *   a  tutorial-sized forward model: a 64x64 scene at 16 wavelengths seen
 *      by 4 channels (orthogonal elements (4, 16)); each element moves every
 *      scene cell by its own dispersion (0.37 cells per wavelength step, in
 *      the channel's direction) and spreads it over the 2x2 output cells it
 *      overlaps, with the area fractions of a shifted square (about 1M
 *      weights);
 *   b  the same for a 256x256 scene (about 17M weights);
 *   c  a PSF-folded forward model: one channel, 16 wavelengths, a 48x48
 *      scene, each cell spread over a 16x16 Gaussian footprint (about 9M
 *      weights; interior rows hold 4096 entries).
 * Every operator is the CTIS forward operator: the scene (1, W, N, N) is
 * shared across the channels and the wavelengths are summed, giving
 * (C, 1, N', N') (bench_ctis_regridder).
 *
 * Everything is static inline, like bench_util.h, which it needs.
 */
#ifndef SPART_BENCH_CTIS_OPERATORS_H
#define SPART_BENCH_CTIS_OPERATORS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "spart.h"

#define BENCH_CTIS_CASES 3
#define BENCH_CTIS_DISPERSION 0.37 /* cells per wavelength step */

/* How an operator is made. */
typedef struct bench_ctis_spec {
    const char *name;
    const char *description;
    int64_t channels;    /* C */
    int64_t wavelengths; /* W */
    int64_t scene;       /* N: the scene is N x N cells */
    int64_t footprint;   /* 0: 2x2 area fractions; F: an F x F Gaussian PSF */
} bench_ctis_spec;

static const bench_ctis_spec BENCH_CTIS_SPECS[BENCH_CTIS_CASES] = {
    {"a", "tutorial: 4 ch x 16 wl, 64^2 scene, 2x2 overlaps", 4, 16, 64, 0},
    {"b", "256^2 scene: 4 ch x 16 wl, 2x2 overlaps", 4, 16, 256, 0},
    {"c", "PSF-folded: 1 ch x 16 wl, 48^2 scene, 16x16 PSF", 1, 16, 48, 16},
};

/* The weights of one operator, as regridding lays them out: elements
 * (channel, wavelength) in C order, each a list of (input cell, output
 * cell, value) sorted by input cell, then output cell. */
typedef struct bench_ctis_weights {
    int64_t channels, wavelengths, scene, scene_output, margin;
    int64_t num_elements, num_entries;
    int64_t *offsets;
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
} bench_ctis_weights;

/* Where element (c, w) moves a scene cell: the channel's direction, the
 * dispersion of the wavelength, and a fixed sub-cell offset so that no
 * area fraction is exactly 0 or 1. */
static inline void bench_ctis_displacement(const bench_ctis_weights *op, int64_t c, int64_t w,
                                           double *dx, double *dy)
{
    const double pi = 3.14159265358979323846;
    double angle = 2.0 * pi * (double)c / (double)op->channels;
    double along = BENCH_CTIS_DISPERSION * ((double)w - 0.5 * (double)(op->wavelengths - 1));
    *dx = along * cos(angle) + 0.25;
    *dy = along * sin(angle) + 0.4;
}

/* The 2x2 output cells a unit square at (px, py) overlaps, with their area
 * fractions, in ascending order of output cell. */
static inline int64_t bench_ctis_emit_overlaps(const bench_ctis_weights *op, int64_t cell_in,
                                               double px, double py, int64_t *ii, int64_t *io,
                                               double *v)
{
    int64_t ox = (int64_t)floor(px), oy = (int64_t)floor(py);
    double fx = px - (double)ox, fy = py - (double)oy;
    double wx[2] = {1.0 - fx, fx}, wy[2] = {1.0 - fy, fy};
    int64_t n = 0;
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++) {
            double value = wx[a] * wy[b];
            if (value != 0.0) {
                ii[n] = cell_in;
                io[n] = (ox + a) * op->scene_output + (oy + b);
                v[n] = value;
                n++;
            }
        }
    }
    return n;
}

/* An F x F Gaussian footprint (sigma F / 6) centred at (px, py), its
 * values normalised to sum to 1, in ascending order of output cell. */
static inline int64_t bench_ctis_emit_psf(const bench_ctis_weights *op, int64_t footprint,
                                          int64_t cell_in, double px, double py, int64_t *ii,
                                          int64_t *io, double *v)
{
    double gx[64], gy[64], sx = 0.0, sy = 0.0;
    double sigma = (double)footprint / 6.0;
    int64_t x0 = (int64_t)floor(px) - footprint / 2 + 1,
            y0 = (int64_t)floor(py) - footprint / 2 + 1;
    for (int64_t k = 0; k < footprint; k++) {
        double ex = ((double)(x0 + k) + 0.5 - px) / sigma;
        double ey = ((double)(y0 + k) + 0.5 - py) / sigma;
        gx[k] = exp(-0.5 * ex * ex);
        gy[k] = exp(-0.5 * ey * ey);
        sx += gx[k];
        sy += gy[k];
    }
    int64_t n = 0;
    for (int64_t a = 0; a < footprint; a++) {
        for (int64_t b = 0; b < footprint; b++) {
            ii[n] = cell_in;
            io[n] = (x0 + a) * op->scene_output + (y0 + b);
            v[n] = (gx[a] / sx) * (gy[b] / sy);
            n++;
        }
    }
    return n;
}

static inline void bench_ctis_free_weights(bench_ctis_weights *op)
{
    free(op->offsets);
    free(op->indices_input);
    free(op->indices_output);
    free(op->values);
    memset(op, 0, sizeof *op);
}

static inline int bench_ctis_make_weights(const bench_ctis_spec *s, bench_ctis_weights *op)
{
    memset(op, 0, sizeof *op);
    op->channels = s->channels;
    op->wavelengths = s->wavelengths;
    op->scene = s->scene;
    op->margin = (int64_t)ceil(BENCH_CTIS_DISPERSION * 0.5 * (double)s->wavelengths) + 2;
    op->scene_output = s->scene + 2 * op->margin + (s->footprint > 0 ? s->footprint : 1);
    op->num_elements = s->channels * s->wavelengths;
    int64_t per_cell = s->footprint > 0 ? s->footprint * s->footprint : 4;
    size_t most = (size_t)(op->num_elements * s->scene * s->scene * per_cell);
    op->offsets = malloc((size_t)(op->num_elements + 1) * sizeof(int64_t));
    op->indices_input = malloc(most * sizeof(int64_t));
    op->indices_output = malloc(most * sizeof(int64_t));
    op->values = malloc(most * sizeof(double));
    if (op->offsets == NULL || op->indices_input == NULL || op->indices_output == NULL ||
        op->values == NULL || s->footprint > 64) {
        bench_ctis_free_weights(op);
        return -1;
    }
    int64_t n = 0;
    op->offsets[0] = 0;
    for (int64_t c = 0; c < s->channels; c++) {
        for (int64_t w = 0; w < s->wavelengths; w++) {
            double dx, dy;
            bench_ctis_displacement(op, c, w, &dx, &dy);
            for (int64_t i = 0; i < s->scene; i++) {
                for (int64_t j = 0; j < s->scene; j++) {
                    /* a footprint starts F/2 - 1 cells before its centre */
                    double start = (double)(op->margin + s->footprint / 2);
                    double px = (double)i + start + dx, py = (double)j + start + dy;
                    int64_t cell = i * s->scene + j;
                    n += s->footprint > 0
                             ? bench_ctis_emit_psf(op, s->footprint, cell, px, py,
                                                   op->indices_input + n, op->indices_output + n,
                                                   op->values + n)
                             : bench_ctis_emit_overlaps(op, cell, px, py, op->indices_input + n,
                                                        op->indices_output + n, op->values + n);
                }
            }
            op->offsets[c * s->wavelengths + w + 1] = n;
        }
    }
    op->num_entries = n;
    return 0;
}

/* The weights as spart weights: orthogonal (C, W), input cells (C, W, N, N)
 * and output cells (C, W, N', N'), resampled axes 2 and 3 on both sides. */
static inline spart_status bench_ctis_load_weights(spart_context *context,
                                                   const bench_ctis_weights *op,
                                                   spart_weights **weights)
{
    int64_t n = op->scene, m = op->scene_output;
    spart_shape orthogonal = bench_shape_of(2, (int64_t[]){op->channels, op->wavelengths});
    spart_shape in = bench_shape_of(4, (int64_t[]){op->channels, op->wavelengths, n, n});
    spart_shape out = bench_shape_of(4, (int64_t[]){op->channels, op->wavelengths, m, m});
    int axes[2] = {2, 3};
    return spart_weights_create_from_arrays(context, &orthogonal, &in, &out, 2, axes, 2, axes,
                                            op->offsets, op->indices_input, op->indices_output,
                                            op->values, weights);
}

/* The CTIS forward operator: the scene (1, W, N, N) shared by the
 * channels, the wavelengths summed into (C, 1, N', N'). */
static inline spart_status bench_ctis_regridder(spart_context *context,
                                                const bench_ctis_weights *op,
                                                const spart_weights *weights,
                                                spart_regridder **regridder)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = bench_shape_of(4, (int64_t[]){1, op->wavelengths, op->scene, op->scene});
    options.has_shape_output = 1;
    options.shape_output =
        bench_shape_of(4, (int64_t[]){op->channels, 1, op->scene_output, op->scene_output});
    return spart_regridder_create(context, weights, &options, regridder);
}

#endif
