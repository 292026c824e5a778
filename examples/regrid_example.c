/*
 * examples/regrid_example.c: the quick start's main job until the example
 * inversion lands. It builds conservative weights from a square grid to the
 * same grid rotated by 0.2 rad, moves a Gaussian blob across with them,
 * checks that the total is conserved, and goes back with the conservative
 * transpose. Then it assembles the same weights into a Regridder (one CSR
 * operator), applies it, and checks it against the weights. Every call's
 * status is checked; a failure prints spart's sentence and exits with 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "spart.h"

#define N 65 /* vertices per axis */

static int check(spart_context *context, spart_status status, const char *what)
{
    if (status != SPART_OK) {
        fprintf(stderr, "spart-example-regrid: %s failed: %s: %s\n", what,
                spart_status_string(status), spart_context_error(context));
        return 1;
    }
    return 0;
}

static double total(const double *values, int64_t count)
{
    double sum = 0.0;
    for (int64_t k = 0; k < count; k++) {
        sum += values[k];
    }
    return sum;
}

/* Assemble the weights into a Regridder, apply it, and compare with the
 * weights applied one by one (equal to rounding: the operator sums each
 * row in its own fixed order, with fma). */
static int regridder_agrees(spart_context *context, const spart_weights *weights,
                            const double *scene, const double *expected)
{
    static double y[(N - 1) * (N - 1)];
    spart_regridder *regridder = NULL;
    if (check(context, spart_regridder_create(context, weights, NULL, &regridder),
              "spart_regridder_create")) {
        return 1;
    }
    spart_array x = {scene, {2, {N - 1, N - 1}}};
    int failed = check(context, spart_regridder_apply(context, regridder, &x, y, (N - 1) * (N - 1)),
                       "spart_regridder_apply");
    if (!failed) {
        double worst = 0.0;
        for (int k = 0; k < (N - 1) * (N - 1); k++) {
            double difference = fabs(y[k] - expected[k]);
            worst = difference > worst ? difference : worst;
        }
        printf("  regridder: %lld x %lld CSR, %lld entries, %d lanes per row; "
               "largest difference from the weights %.1e\n",
               (long long)spart_regridder_num_rows(regridder),
               (long long)spart_regridder_num_columns(regridder),
               (long long)spart_regridder_num_entries(regridder),
               spart_regridder_group_size(regridder), worst);
        if (worst > 1e-12) {
            fprintf(stderr, "spart-example-regrid: the regridder disagrees with the weights\n");
            failed = 1;
        }
    }
    spart_regridder_free(regridder);
    return failed;
}

int main(void)
{
    static double x_in[N * N], y_in[N * N], x_out[N * N], y_out[N * N];
    static double scene[(N - 1) * (N - 1)], rotated[(N - 1) * (N - 1)], back[(N - 1) * (N - 1)];
    const double angle = 0.2;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            double x = -4.0 + 8.0 * i / (N - 1), y = -4.0 + 8.0 * j / (N - 1);
            x_in[i * N + j] = x;
            y_in[i * N + j] = y;
            x_out[i * N + j] = x * cos(angle) - y * sin(angle);
            y_out[i * N + j] = x * sin(angle) + y * cos(angle);
        }
    }
    for (int i = 0; i < N - 1; i++) {
        for (int j = 0; j < N - 1; j++) {
            double x = -4.0 + 8.0 * (i + 0.5) / (N - 1), y = -4.0 + 8.0 * (j + 0.5) / (N - 1);
            scene[i * (N - 1) + j] = exp(-((x - 0.5) * (x - 0.5) + y * y) / 0.5);
        }
    }
    spart_context *context = NULL;
    if (check(NULL, spart_context_create(&context), "spart_context_create")) {
        return 1;
    }
    printf("spart %s: conservative regridding of a %dx%d grid onto itself rotated by %.1f rad\n",
           spart_version(), N - 1, N - 1, angle);
    spart_array grid_in[2] = {{x_in, {2, {N, N}}}, {y_in, {2, {N, N}}}};
    spart_array grid_out[2] = {{x_out, {2, {N, N}}}, {y_out, {2, {N, N}}}};
    spart_weights_options options;
    spart_weights_options_init(&options);
    options.method = SPART_METHOD_CONSERVATIVE;
    spart_weights *weights = NULL, *transposed = NULL;
    int failed =
        check(context, spart_weights_build(context, 2, grid_in, grid_out, &options, &weights),
              "spart_weights_build");
    if (!failed) {
        printf("  weights: %lld entries (exact polygon clipping of every pair of cells)\n",
               (long long)spart_weights_num_entries(weights));
        spart_array values = {scene, {2, {N - 1, N - 1}}};
        failed = check(context,
                       spart_regrid_from_weights(context, weights, &values, 0, NULL, 0, NULL,
                                                 rotated, (N - 1) * (N - 1)),
                       "spart_regrid_from_weights");
    }
    if (!failed) {
        failed = check(context,
                       spart_weights_transpose_conservative(context, weights, 2, grid_in, grid_out,
                                                            &options, &transposed),
                       "spart_weights_transpose_conservative");
    }
    if (!failed) {
        spart_array values = {rotated, {2, {N - 1, N - 1}}};
        failed = check(context,
                       spart_regrid_from_weights(context, transposed, &values, 0, NULL, 0, NULL,
                                                 back, (N - 1) * (N - 1)),
                       "spart_regrid_from_weights (transpose)");
    }
    if (!failed) {
        int64_t cells = (N - 1) * (N - 1);
        double sum_in = total(scene, cells), sum_out = total(rotated, cells);
        double sum_back = total(back, cells);
        printf("  total of the blob:           %.15f\n", sum_in);
        printf("  total after rotation:        %.15f (relative change %.1e)\n", sum_out,
               (sum_out - sum_in) / sum_in);
        printf("  total after going back:      %.15f (relative change %.1e)\n", sum_back,
               (sum_back - sum_in) / sum_in);
        if (fabs(sum_out - sum_in) > 1e-9 * sum_in) {
            fprintf(stderr, "spart-example-regrid: the total was not conserved\n");
            failed = 1;
        }
    }
    if (!failed) {
        failed = regridder_agrees(context, weights, scene, rotated);
    }
    spart_weights_free(transposed);
    spart_weights_free(weights);
    spart_context_free(context);
    if (!failed) {
        printf("done: weights built, applied, and transposed conservatively.\n");
    }
    return failed ? 1 : 0;
}
