/*
 * tests/unit/test_regridder_util.h: what the host Regridder's tests share
 * (test_regridder.c, test_regridder_degenerate.c): random weights and values,
 * the documented summation order written out plainly, the fixture, and
 * making and applying a Regridder.
 */
#ifndef SPART_TEST_REGRIDDER_UTIL_H
#define SPART_TEST_REGRIDDER_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/regridder_internal.h"

#include "spart.h"
#include "test_util.h"

/* Random weights: each of the orthogonal elements gets `per_element`
 * entries with random cells (repeats allowed) and values in [0.5, 1.5). */
static inline spart_weights *random_weights(spart_context *context, spart_shape orthogonal,
                                            spart_shape input, int num_axes_input,
                                            const int *axes_input, spart_shape output,
                                            int num_axes_output, const int *axes_output,
                                            int64_t per_element, uint64_t seed)
{
    int64_t elements = spart_shape_size(&orthogonal);
    int64_t cells_in = 1, cells_out = 1;
    for (int a = 0; a < num_axes_input; a++) {
        cells_in *= input.dims[axes_input[a]];
    }
    for (int a = 0; a < num_axes_output; a++) {
        cells_out *= output.dims[axes_output[a]];
    }
    int64_t total = elements * per_element;
    int64_t *offsets = malloc((size_t)(elements + 1) * sizeof(int64_t));
    int64_t *in = malloc((size_t)(total + 1) * sizeof(int64_t));
    int64_t *out = malloc((size_t)(total + 1) * sizeof(int64_t));
    double *values = malloc((size_t)(total + 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t e = 0; e <= elements; e++) {
        offsets[e] = e * per_element;
    }
    for (int64_t k = 0; k < total; k++) {
        in[k] = (int64_t)(next_uniform(&state) * (double)cells_in);
        out[k] = (int64_t)(next_uniform(&state) * (double)cells_out);
        values[k] = 0.5 + next_uniform(&state);
    }
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(
                         context, &orthogonal, &input, &output, num_axes_input, axes_input,
                         num_axes_output, axes_output, offsets, in, out, values, &weights),
                     SPART_OK);
    free(offsets);
    free(in);
    free(out);
    free(values);
    return weights;
}

static inline double *random_values(int64_t n, uint64_t seed)
{
    double *values = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    uint64_t state = seed;
    for (int64_t k = 0; k < n; k++) {
        values[k] = next_uniform(&state) * 2.0 - 1.0;
    }
    return values;
}

static inline void assert_close(const double *a, const double *b, int64_t n, double tolerance)
{
    for (int64_t k = 0; k < n; k++) {
        double scale = fabs(b[k]) > 1.0 ? fabs(b[k]) : 1.0;
        if (!(fabs(a[k] - b[k]) <= tolerance * scale)) {
            fail_msg("value %lld: %.17g, expected %.17g", (long long)k, a[k], b[k]);
        }
    }
}

/* ---- the documented summation order, written out plainly ---------------- */

/* Y = A x for one vector in the order of spart/regridder.h. */
static inline void reference_product(spart_context *context, const spart_regridder *regridder,
                                     const double *x, double *y)
{
    (void)context;
    const int64_t *row_ptr = NULL;
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    const void *values = NULL;
    assert_int_equal(spart_regridder_csr(regridder, &row_ptr, &columns32, &columns64, &values),
                     SPART_OK);
    int g = spart_regridder_group_size(regridder);
    int float32 = spart_regridder_value_type(regridder) == SPART_FLOAT32;
    for (int64_t r = 0; r < spart_regridder_num_rows(regridder); r++) {
        double total = 0.0;
        for (int64_t start = row_ptr[r]; start < row_ptr[r + 1]; start += SPART_CHUNK_LENGTH) {
            int64_t stop = start + SPART_CHUNK_LENGTH < row_ptr[r + 1] ? start + SPART_CHUNK_LENGTH
                                                                       : row_ptr[r + 1];
            double lanes[32] = {0};
            for (int64_t k = start; k < stop; k++) {
                int64_t column = columns32 != NULL ? columns32[k] : columns64[k];
                double value =
                    float32 ? (double)((const float *)values)[k] : ((const double *)values)[k];
                int lane = (int)((k - start) % g);
                lanes[lane] = fma(value, x[column], lanes[lane]);
            }
            for (int half = g / 2; half >= 1; half /= 2) {
                for (int l = 0; l < half; l++) {
                    lanes[l] = lanes[l] + lanes[l + half];
                }
            }
            total = start == row_ptr[r] ? lanes[0] : total + lanes[0];
        }
        y[r] = total;
    }
}

/* ---- fixtures ---------------------------------------------------------------- */

typedef struct fixture {
    spart_context *context;
    spart_weights *trailing;    /* orthogonal (2,3); input (2,3,4,5) axes (2,3); output (2,3,6) */
    spart_weights *interleaved; /* orthogonal (2,3); input (4,2,5,3) axes (0,2); output (2,6,3) */
} fixture;

static inline int set_up(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    assert_int_equal(spart_context_create(&f.context), SPART_OK);
    const int64_t orthogonal[] = {2, 3};
    const int64_t input[] = {2, 3, 4, 5}, output[] = {2, 3, 6};
    const int axes_input[] = {2, 3}, axes_output[] = {2};
    f.trailing = random_weights(f.context, shape_of(2, orthogonal), shape_of(4, input), 2,
                                axes_input, shape_of(3, output), 1, axes_output, 37, 1);
    const int64_t input2[] = {4, 2, 5, 3}, output2[] = {2, 6, 3};
    const int axes_input2[] = {0, 2}, axes_output2[] = {1};
    f.interleaved = random_weights(f.context, shape_of(2, orthogonal), shape_of(4, input2), 2,
                                   axes_input2, shape_of(3, output2), 1, axes_output2, 37, 2);
    *state = &f;
    return 0;
}

static inline int tear_down(void **state)
{
    fixture *f = *state;
    spart_weights_free(f->trailing);
    spart_weights_free(f->interleaved);
    spart_context_free(f->context);
    return 0;
}

static inline spart_regridder *make(fixture *f, const spart_weights *weights, int ndim_in,
                                    const int64_t *shape_in, int ndim_out, const int64_t *shape_out)
{
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    if (shape_in != NULL) {
        options.has_shape_input = 1;
        options.shape_input = shape_of(ndim_in, shape_in);
    }
    if (shape_out != NULL) {
        options.has_shape_output = 1;
        options.shape_output = shape_of(ndim_out, shape_out);
    }
    spart_regridder *regridder = NULL;
    spart_status status = spart_regridder_create(f->context, weights, &options, &regridder);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_create: %s", spart_context_error(f->context));
    }
    return regridder;
}

/* y of the regridder for x, allocated. */
static inline double *apply(fixture *f, const spart_regridder *regridder, const spart_array *x,
                            int64_t *size)
{
    spart_shape shape_y;
    assert_int_equal(spart_regridder_apply_shape(f->context, regridder, &x->shape, &shape_y),
                     SPART_OK);
    *size = spart_shape_size(&shape_y);
    double *y = malloc((size_t)(*size > 0 ? *size : 1) * sizeof(double));
    for (int64_t k = 0; k < *size; k++) {
        y[k] = NAN; /* poisoned: every value must be written */
    }
    spart_status status = spart_regridder_apply(f->context, regridder, x, y, *size);
    if (status != SPART_OK) {
        fail_msg("spart_regridder_apply: %s", spart_context_error(f->context));
    }
    return y;
}

/* regrid_from_weights of the per-element outputs, for the full shapes. */
static inline double *per_element(fixture *f, const spart_weights *weights, const spart_array *x,
                                  int num_axes_in, const int *axes_in, int num_axes_out,
                                  const int *axes_out, int64_t *size)
{
    spart_shape shape;
    assert_int_equal(spart_regrid_from_weights_shape(f->context, weights, &x->shape, num_axes_in,
                                                     axes_in, num_axes_out, axes_out, &shape),
                     SPART_OK);
    *size = spart_shape_size(&shape);
    double *y = malloc((size_t)*size * sizeof(double));
    assert_int_equal(spart_regrid_from_weights(f->context, weights, x, num_axes_in, axes_in,
                                               num_axes_out, axes_out, y, *size),
                     SPART_OK);
    return y;
}

#endif
