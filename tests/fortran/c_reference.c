/*
 * tests/fortran/c_reference.c: what the Fortran tests compare with. Each
 * function computes, through the C API alone, what a Fortran test computes
 * through the module spart: it makes its inputs itself, in C order from the
 * same formulas the Fortran test evaluates in Fortran order (a Fortran
 * a(i, j) is C's a[j][i]), so equal bits on both sides prove the wrappers
 * and the column-major convention as well as the arithmetic. The values
 * are small binary fractions, so both languages compute them exactly.
 *
 * Called from Fortran through the bind(C) interfaces of spart_test_support.f90.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "spart.h"
#include "test_tiny_instrument.h"

/* Cases of reference_case (the same numbers in the Fortran tests). */
enum {
    CASE_MULTILINEAR_2D = 1,        /* curvilinear vertices to points */
    CASE_CONSERVATIVE_1D = 2,       /* an orthogonal axis, weights_input */
    CASE_CONSERVATIVE_2D = 3,       /* sheared grid to a lattice, clipping */
    CASE_CONSERVATIVE_2D_SWEEP = 4, /* the same by the sweep, jittered by a seed */
    CASE_SHARED_INPUT_FLOAT32 = 5   /* case 2 as a float32 regridder of one shared input */
};

/* A value for position (i, j, k) of an array: exact in binary, different
 * along every axis so that a transposed array cannot give the same bits. */
static double value_at(int64_t i, int64_t j, int64_t k)
{
    return 1.0 + (double)i + 16.0 * (double)j + 0.25 * (double)k;
}

/* The grids and options of a case (shapes in C order). */
typedef struct grids {
    int num_coordinates;
    double input[2][64];
    double output[2][64];
    spart_array coordinates_input[2];
    spart_array coordinates_output[2];
    double factor[8];
    spart_array weights_input;
    spart_weights_options options;
} grids;

/* Case 1: input vertices [5][7], x = i + j/8, y = j - i/16; output points
 * [4][6], x = 1/2 + 3i/4, y = 1/4 + j/2. */
static void make_multilinear_2d(grids *g)
{
    for (int j = 0; j < 5; j++) {
        for (int i = 0; i < 7; i++) {
            g->input[0][j * 7 + i] = i + 0.125 * j;
            g->input[1][j * 7 + i] = j - 0.0625 * i;
        }
    }
    for (int j = 0; j < 4; j++) {
        for (int i = 0; i < 6; i++) {
            g->output[0][j * 6 + i] = 0.5 + 0.75 * i;
            g->output[1][j * 6 + i] = 0.25 + 0.5 * j;
        }
    }
    g->num_coordinates = 2;
    for (int c = 0; c < 2; c++) {
        g->coordinates_input[c] = (spart_array){g->input[c], {2, {5, 7}}};
        g->coordinates_output[c] = (spart_array){g->output[c], {2, {4, 6}}};
    }
}

/* Case 2: three input grids [3][9], x = k + e/4 + k^2/32 (element e, vertex
 * k), onto one output grid [6], x = -1/2 + 3k/2, resampling the last axis;
 * weights_input [8] = 1 + k/2. */
static void make_conservative_1d(grids *g)
{
    for (int e = 0; e < 3; e++) {
        for (int k = 0; k < 9; k++) {
            g->input[0][e * 9 + k] = k + 0.25 * e + k * k / 32.0;
        }
    }
    for (int k = 0; k < 6; k++) {
        g->output[0][k] = -0.5 + 1.5 * k;
    }
    for (int k = 0; k < 8; k++) {
        g->factor[k] = 1.0 + 0.5 * k;
    }
    g->num_coordinates = 1;
    g->coordinates_input[0] = (spart_array){g->input[0], {2, {3, 9}}};
    g->coordinates_output[0] = (spart_array){g->output[0], {1, {6}}};
    g->weights_input = (spart_array){g->factor, {1, {8}}};
    g->options.num_axis_input = 1;
    g->options.axis_input[0] = -1;
    g->options.num_axis_output = 1;
    g->options.axis_output[0] = -1;
    g->options.weights_input = &g->weights_input;
}

/* Case 3: input vertices [6][8], x = i + j/8, y = j + i/16; output
 * lattice [5][7], x = -1/2 + 5i/4, y = -1/4 + 3j/2. */
static void make_conservative_2d(grids *g)
{
    for (int j = 0; j < 6; j++) {
        for (int i = 0; i < 8; i++) {
            g->input[0][j * 8 + i] = i + 0.125 * j;
            g->input[1][j * 8 + i] = j + 0.0625 * i;
        }
    }
    for (int j = 0; j < 5; j++) {
        for (int i = 0; i < 7; i++) {
            g->output[0][j * 7 + i] = -0.5 + 1.25 * i;
            g->output[1][j * 7 + i] = -0.25 + 1.5 * j;
        }
    }
    g->num_coordinates = 2;
    for (int c = 0; c < 2; c++) {
        g->coordinates_input[c] = (spart_array){g->input[c], {2, {6, 8}}};
        g->coordinates_output[c] = (spart_array){g->output[c], {2, {5, 7}}};
    }
}

static void make_grids(int which, grids *g)
{
    memset(g, 0, sizeof *g);
    spart_weights_options_init(&g->options);
    switch (which) {
    case CASE_MULTILINEAR_2D: make_multilinear_2d(g); break;
    case CASE_CONSERVATIVE_1D:
    case CASE_SHARED_INPUT_FLOAT32:
        make_conservative_1d(g);
        g->options.method = SPART_METHOD_CONSERVATIVE;
        break;
    case CASE_CONSERVATIVE_2D:
        make_conservative_2d(g);
        g->options.method = SPART_METHOD_CONSERVATIVE;
        g->options.algorithm = SPART_ALGORITHM_CLIP;
        break;
    case CASE_CONSERVATIVE_2D_SWEEP:
        make_conservative_2d(g);
        g->options.method = SPART_METHOD_CONSERVATIVE;
        g->options.algorithm = SPART_ALGORITHM_SWEEP;
        g->options.perturb = SPART_PERTURB_YES;
        g->options.seed = 7;
        break;
    default: break;
    }
}

/* values[index] = value_at over a C shape of up to 3 axes, the last axis
 * fastest and called i, times `scale`. */
static void fill_values(const spart_shape *shape, double scale, double *values)
{
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < shape->ndim; a++) {
        n[3 - shape->ndim + a] = shape->dims[a];
    }
    for (int64_t k = 0; k < n[0]; k++) {
        for (int64_t j = 0; j < n[1]; j++) {
            for (int64_t i = 0; i < n[2]; i++) {
                values[(k * n[1] + j) * n[2] + i] = scale * value_at(i, j, k);
            }
        }
    }
}

/* The regridder options of a case: case 5 shares one input [1][8] among
 * the three elements, in float32. */
static void regridder_options(int which, spart_regridder_options *options)
{
    spart_regridder_options_init(options);
    if (which == CASE_SHARED_INPUT_FLOAT32) {
        options->has_shape_input = 1;
        options->shape_input = (spart_shape){2, {1, 8}};
        options->value_type = SPART_FLOAT32;
    }
}

/* Build the weights and the regridder of case `which`, then:
 *   y         = A x, x of the input shape filled by fill_values,
 *   y_batch   = A [x; 2x; 3x] (three vectors on a leading axis),
 *   x_back    = A^T y (the exact transpose),
 *   x_conservative = the conservative transpose applied to y (conservative
 *               cases other than 5; left alone otherwise).
 * *weights receives the weights (free them). Returns the first failing
 * status, with its sentence in `sentence`. */
int reference_case(int which, spart_weights **weights, double *y, int64_t size_y, double *y_batch,
                   int64_t size_y_batch, double *x_back, int64_t size_x_back,
                   double *x_conservative, int64_t size_x_conservative, char *sentence,
                   int64_t capacity);
int reference_case(int which, spart_weights **weights, double *y, int64_t size_y, double *y_batch,
                   int64_t size_y_batch, double *x_back, int64_t size_x_back,
                   double *x_conservative, int64_t size_x_conservative, char *sentence,
                   int64_t capacity)
{
    static grids g;
    static double x[3 * 256];
    spart_context *context = NULL;
    spart_regridder *regridder = NULL, *transposed = NULL, *conservative = NULL;
    spart_regridder_options options;
    spart_status status = spart_context_create(&context);
    make_grids(which, &g);
    regridder_options(which, &options);
    *weights = NULL;
    if (status == SPART_OK) {
        status = spart_weights_build(context, g.num_coordinates, g.coordinates_input,
                                     g.coordinates_output, &g.options, weights);
    }
    if (status == SPART_OK) {
        status = spart_regridder_create(context, *weights, &options, &regridder);
    }
    spart_shape input = spart_regridder_shape_input(regridder);
    int64_t size_x = spart_shape_size(&input);
    if (status == SPART_OK) {
        for (int b = 0; b < 3; b++) {
            fill_values(&input, b + 1.0, x + b * size_x);
        }
        spart_array vector = {x, input};
        status = spart_regridder_apply(context, regridder, &vector, y, size_y);
    }
    if (status == SPART_OK) {
        spart_array batch = {x, {input.ndim + 1, {3}}};
        memcpy(batch.shape.dims + 1, input.dims, (size_t)input.ndim * sizeof(int64_t));
        status = spart_regridder_apply(context, regridder, &batch, y_batch, size_y_batch);
    }
    if (status == SPART_OK) {
        status = spart_regridder_transpose(context, regridder, &transposed);
    }
    spart_array y_array = {y, spart_regridder_shape_output(regridder)};
    if (status == SPART_OK) {
        status = spart_regridder_apply(context, transposed, &y_array, x_back, size_x_back);
    }
    if (status == SPART_OK && which != CASE_MULTILINEAR_2D && which != CASE_SHARED_INPUT_FLOAT32) {
        status = spart_regridder_transpose_conservative(context, regridder, g.num_coordinates,
                                                        g.coordinates_input, g.coordinates_output,
                                                        &g.options, &conservative);
        if (status == SPART_OK) {
            status = spart_regridder_apply(context, conservative, &y_array, x_conservative,
                                           size_x_conservative);
        }
    }
    snprintf(sentence, (size_t)capacity, "%s", spart_context_error(context));
    spart_regridder_free(regridder);
    spart_context_free(context);
    return (int)status;
}

/* Bad calls made from C, whose sentences the Fortran test expects for the
 * same bad calls made from Fortran (all on the regridder of case 3):
 *   1: y one value short,
 *   2: x with its two axes swapped ([7][5] for [5][7]),
 *   3: grids whose x and y coordinates do not broadcast ([6][8] and [5][8]),
 *   4: a regridder whose declared input shape [5][6] is not the weights'. */
int reference_error(int which, char *sentence, int64_t capacity);
int reference_error(int which, char *sentence, int64_t capacity)
{
    static grids g;
    static double x[35], y[64];
    spart_context *context = NULL;
    spart_weights *weights = NULL;
    spart_regridder *regridder = NULL;
    spart_status status = spart_context_create(&context);
    make_grids(CASE_CONSERVATIVE_2D, &g);
    if (status == SPART_OK) {
        if (which == 3) {
            g.coordinates_input[1].shape = (spart_shape){2, {5, 8}};
        }
        status = spart_weights_build(context, 2, g.coordinates_input, g.coordinates_output,
                                     &g.options, &weights);
    }
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    if (which == 4) {
        options.has_shape_input = 1;
        options.shape_input = (spart_shape){2, {5, 6}};
    }
    if (status == SPART_OK) {
        status = spart_regridder_create(context, weights, &options, &regridder);
    }
    if (status == SPART_OK) {
        spart_array vector = {x, {2, {5, 7}}};
        if (which == 2) {
            vector.shape = (spart_shape){2, {7, 5}};
        }
        int64_t size_y = spart_regridder_num_rows(regridder) - (which == 1 ? 1 : 0);
        status = spart_regridder_apply(context, regridder, &vector, y, size_y);
    }
    snprintf(sentence, (size_t)capacity, "%s", spart_context_error(context));
    spart_regridder_free(regridder);
    spart_weights_free(weights);
    spart_context_free(context);
    return (int)status;
}

/* ---- MART and the ideal instrument ------------------------------------------------------- */

/* A result in one array, as test_fortran_mart.f90 packs its own:
 * [num_iterations, success, gamma, num_solutions, solution, chi2 history,
 * correlation history, the kept states]. Returns the count, or -1 when
 * `capacity` is too small. */
static int64_t pack_result(const spart_mart_result *result, double *packed, int64_t capacity)
{
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    int64_t scene_size = spart_mart_result_scene_size(result);
    int64_t states = spart_mart_result_num_solutions(result);
    int64_t count = 4 + scene_size + 2 * iterations * channels + states * scene_size;
    if (count > capacity) {
        return -1;
    }
    packed[0] = (double)iterations;
    packed[1] = (double)spart_mart_result_success(result);
    packed[2] = spart_mart_result_gamma(result);
    packed[3] = (double)states;
    double *at = packed + 4;
    memcpy(at, spart_mart_result_solution(result), (size_t)scene_size * sizeof(double));
    at += scene_size;
    memcpy(at, spart_mart_result_mean_chi_squared(result),
           (size_t)(iterations * channels) * sizeof(double));
    at += iterations * channels;
    memcpy(at, spart_mart_result_correlation(result),
           (size_t)(iterations * channels) * sizeof(double));
    at += iterations * channels;
    for (int64_t k = 0; k < states; k++) {
        memcpy(at, spart_mart_result_solutions(result, k), (size_t)scene_size * sizeof(double));
        at += scene_size;
    }
    return count;
}

/* The MART problem of a regridder pair: a scene of 12 cells, x = k +
 * k^2/64 (vertices k = 0..12), seen by 3 channels of 8 cells, x = -1/4 +
 * c/2 + 3k/2 (channel c, vertex k); forward from [1][12] to [3][8],
 * backward the conservative transpose from [3][8] to [3][12]. */
typedef struct pair_problem {
    double x_input[13];
    double x_output[3 * 9];
    spart_array grid_input, grid_output;
    spart_weights_options options;
    spart_weights *weights, *transposed;
    spart_regridder *forward, *backward;
} pair_problem;

static spart_status make_pair_problem(spart_context *context, pair_problem *p)
{
    for (int k = 0; k < 13; k++) {
        p->x_input[k] = k + k * k / 64.0;
    }
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 9; k++) {
            p->x_output[c * 9 + k] = -0.25 + 0.5 * c + 1.5 * k;
        }
    }
    p->grid_input = (spart_array){p->x_input, {1, {13}}};
    p->grid_output = (spart_array){p->x_output, {2, {3, 9}}};
    spart_weights_options_init(&p->options);
    p->options.method = SPART_METHOD_CONSERVATIVE;
    p->options.num_axis_input = 1;
    p->options.axis_input[0] = -1;
    p->options.num_axis_output = 1;
    p->options.axis_output[0] = -1;
    spart_status status =
        spart_weights_build(context, 1, &p->grid_input, &p->grid_output, &p->options, &p->weights);
    if (status == SPART_OK) {
        status = spart_weights_transpose_conservative(context, p->weights, 1, &p->grid_input,
                                                      &p->grid_output, &p->options, &p->transposed);
    }
    spart_regridder_options options;
    spart_regridder_options_init(&options);
    options.has_shape_input = 1;
    options.shape_input = (spart_shape){2, {1, 12}};
    options.has_shape_output = 1;
    options.shape_output = (spart_shape){2, {3, 8}};
    if (status == SPART_OK) {
        status = spart_regridder_create(context, p->weights, &options, &p->forward);
    }
    options.shape_input = (spart_shape){2, {3, 8}};
    options.shape_output = (spart_shape){2, {3, 12}};
    if (status == SPART_OK) {
        status = spart_regridder_create(context, p->transposed, &options, &p->backward);
    }
    return status;
}

static void free_pair_problem(pair_problem *p)
{
    spart_regridder_free(p->backward);
    spart_regridder_free(p->forward);
    spart_weights_free(p->transposed);
    spart_weights_free(p->weights);
}

/* The tiny ideal instrument of tests/unit/test_instrument.c
 * (test_tiny_instrument.h) with a read noise of 2: 2 channels (0 and 90
 * degrees), 3 wavelength bins, 6 x 6 scene cells, 16 x 16 pixels; and its
 * scene [3][6][6] = 1e-9 value_at(y, x, wavelength). */
typedef struct small_instrument {
    tiny_instrument tiny;
    double scene[3 * 6 * 6];
} small_instrument;

static void make_small_instrument(small_instrument *s)
{
    make_tiny_instrument(&s->tiny);
    s->tiny.params.read_noise = 2.0;
    for (int l = 0; l < 3; l++) {
        for (int x = 0; x < 6; x++) {
            for (int y = 0; y < 6; y++) {
                s->scene[(l * 6 + x) * 6 + y] = 1e-9 * value_at(y, x, l);
            }
        }
    }
}

/* MART from C, packed (pack_result):
 *   1: the regridder pair, gain 1.5, read noise 0.5, observed = forward of
 *      the scene 1 + value_at(k, 0, 0) / 8, exactly 8 updates (stop rule
 *      COUNT), every state kept;
 *   2: the small instrument observing its scene with seed 3, MART over its
 *      operators with the defaults but at most 10 iterations.
 * The message of the result goes to `message`; *count receives the packed
 * count. Returns the first failing status, its sentence in `sentence`. */
int reference_mart(int which, double *packed, int64_t capacity, int64_t *count, char *message,
                   int64_t message_capacity, char *sentence, int64_t sentence_capacity);
int reference_mart(int which, double *packed, int64_t capacity, int64_t *count, char *message,
                   int64_t message_capacity, char *sentence, int64_t sentence_capacity)
{
    static pair_problem p;
    static small_instrument s;
    static double scene[36], observed[2 * 256];
    spart_context *context = NULL;
    spart_instrument *instrument = NULL;
    spart_mart_result *result = NULL;
    spart_mart_regridder_pair pair;
    spart_mart_operators operators;
    spart_mart_options options;
    memset(&p, 0, sizeof p);
    memset(&operators, 0, sizeof operators);
    spart_mart_options_init(&options);
    spart_status status = spart_context_create(&context);
    if (status == SPART_OK && which == 1) {
        status = make_pair_problem(context, &p);
        for (int k = 0; k < 12; k++) {
            scene[k] = 1.0 + value_at(k, 0, 0) / 8.0;
        }
        spart_array x = {scene, {2, {1, 12}}};
        if (status == SPART_OK) {
            status = spart_regridder_apply(context, p.forward, &x, observed, 24);
        }
        pair = (spart_mart_regridder_pair){p.forward, p.backward, 3, 1.5, 0.5};
        if (status == SPART_OK) {
            status = spart_mart_operators_from_regridders(context, &pair, &operators);
        }
        options.stop_rule = SPART_MART_STOP_COUNT;
        options.max_iterations = 8;
        options.keep_intermediate = 1;
    } else if (status == SPART_OK) {
        make_small_instrument(&s);
        status = spart_instrument_create(context, &s.tiny.params, &instrument);
        if (status == SPART_OK) {
            status = spart_instrument_observe(context, instrument, s.scene, 3, observed, NULL);
        }
        if (status == SPART_OK) {
            status = spart_instrument_mart_operators(context, instrument, &pair, &operators);
        }
        options.max_iterations = 10;
    }
    if (status == SPART_OK) {
        status = spart_mart_solve(context, &operators, observed, &options, &result);
    }
    *count = 0;
    snprintf(message, (size_t)message_capacity, "%s", "");
    if (status == SPART_OK) {
        *count = pack_result(result, packed, capacity);
        snprintf(message, (size_t)message_capacity, "%s", spart_mart_result_message(result));
    }
    snprintf(sentence, (size_t)sentence_capacity, "%s", spart_context_error(context));
    spart_mart_result_free(result);
    spart_instrument_free(instrument);
    free_pair_problem(&p);
    spart_context_free(context);
    return (int)status;
}

/* The small instrument's products from C: images and widths of its scene
 * (2 x 256 each), their backprojection (2 x 108), observations with seed 3
 * and their widths (2 x 256 each); and spart_scene_gaussians on velocity
 * edges -100, -50, 0, 50, 100 km/s, x and y vertices -2..2 and -3..3
 * (arcsec, step 1) at 171 A, into gaussians [4][4][6] and its 5 wavelength
 * edges. */
int reference_instrument(double *images, double *widths, double *scenes, double *observed,
                         double *observed_widths, double *gaussians, double *wavelength,
                         char *sentence, int64_t sentence_capacity);
int reference_instrument(double *images, double *widths, double *scenes, double *observed,
                         double *observed_widths, double *gaussians, double *wavelength,
                         char *sentence, int64_t sentence_capacity)
{
    static small_instrument s;
    spart_context *context = NULL;
    spart_instrument *instrument = NULL;
    double velocity[5], x[5], y[7];
    for (int k = 0; k < 5; k++) {
        velocity[k] = -100.0 + 50.0 * k;
        x[k] = -2.0 + k;
    }
    for (int k = 0; k < 7; k++) {
        y[k] = -3.0 + k;
    }
    make_small_instrument(&s);
    spart_status status = spart_context_create(&context);
    if (status == SPART_OK) {
        status = spart_instrument_create(context, &s.tiny.params, &instrument);
    }
    if (status == SPART_OK) {
        status = spart_instrument_image(context, instrument, s.scene, images, widths);
    }
    if (status == SPART_OK) {
        status = spart_instrument_backproject(context, instrument, images, scenes);
    }
    if (status == SPART_OK) {
        status =
            spart_instrument_observe(context, instrument, s.scene, 3, observed, observed_widths);
    }
    if (status == SPART_OK) {
        status = spart_scene_gaussians(context, 171.0, 4, velocity, 4, x, 6, y, NULL, wavelength,
                                       gaussians);
    }
    snprintf(sentence, (size_t)sentence_capacity, "%s", spart_context_error(context));
    spart_instrument_free(instrument);
    spart_context_free(context);
    return (int)status;
}

/* ---- the PSF (spart/psf.h) ----------------------------------------------------------------- */

/* The PSF operator from C, as test_fortran_psf.f90 uses it from Fortran:
 *   applied, adjoint   P and P^T of the images [2][6][7] = value_at(x, y,
 *                      channel) with the kernels [2][3][4] = value_at(x, y,
 *                      channel) / 64 (84 values each);
 *   convolved          the weights of case 3 convolved with the kernel
 *                      [2][3] = value_at(i, j, 0) / 32: *entries entries
 *                      into offsets (2), indices_input, indices_output and
 *                      values (capacity each; -1 entries when too small);
 *   gaussian           spart_psf_gaussian with widths 2 and 0.8 pixels at
 *                      30 degrees, size {5, 7} (35 values).
 * Returns the first failing status, its sentence in `sentence`. */
int reference_psf_operator(double *applied, double *adjoint, int64_t *offsets,
                           int64_t *indices_input, int64_t *indices_output, double *values,
                           int64_t capacity, int64_t *entries, double *gaussian, char *sentence,
                           int64_t sentence_capacity);
int reference_psf_operator(double *applied, double *adjoint, int64_t *offsets,
                           int64_t *indices_input, int64_t *indices_output, double *values,
                           int64_t capacity, int64_t *entries, double *gaussian, char *sentence,
                           int64_t sentence_capacity)
{
    static grids g;
    double kernels[2 * 3 * 4], images[2 * 6 * 7], kernel[2 * 3];
    spart_shape kernels_shape = {3, {2, 3, 4}}, images_shape = {3, {2, 6, 7}};
    spart_shape kernel_shape = {2, {2, 3}};
    fill_values(&kernels_shape, 1.0 / 64.0, kernels);
    fill_values(&images_shape, 1.0, images);
    fill_values(&kernel_shape, 1.0 / 32.0, kernel);
    spart_context *context = NULL;
    spart_psf *psf = NULL;
    spart_weights *weights = NULL, *convolved = NULL;
    *entries = 0;
    spart_status status = spart_context_create(&context);
    if (status == SPART_OK) {
        spart_array k = {kernels, kernels_shape};
        status = spart_psf_create(context, &k, &images_shape, &psf);
    }
    spart_array x = {images, images_shape};
    if (status == SPART_OK) {
        status = spart_psf_apply(context, psf, &x, applied, 84);
    }
    if (status == SPART_OK) {
        status = spart_psf_apply_adjoint(context, psf, &x, adjoint, 84);
    }
    make_grids(CASE_CONSERVATIVE_2D, &g);
    if (status == SPART_OK) {
        status = spart_weights_build(context, g.num_coordinates, g.coordinates_input,
                                     g.coordinates_output, &g.options, &weights);
    }
    if (status == SPART_OK) {
        spart_array k = {kernel, kernel_shape};
        status = spart_weights_convolve(context, weights, &k, &convolved);
    }
    if (status == SPART_OK) {
        const int64_t *o = NULL, *ii = NULL, *io = NULL;
        const double *v = NULL;
        status = spart_weights_arrays(convolved, &o, &ii, &io, &v);
        int64_t count = spart_weights_num_entries(convolved);
        *entries = count <= capacity ? count : -1;
        if (status == SPART_OK && count <= capacity) {
            memcpy(offsets, o, 2 * sizeof(int64_t));
            memcpy(indices_input, ii, (size_t)count * sizeof(int64_t));
            memcpy(indices_output, io, (size_t)count * sizeof(int64_t));
            memcpy(values, v, (size_t)count * sizeof(double));
        }
    }
    if (status == SPART_OK) {
        int64_t size[2] = {5, 7};
        status = spart_psf_gaussian(context, 2.0, 0.8, 30.0, size, gaussian, 35);
    }
    snprintf(sentence, (size_t)sentence_capacity, "%s", spart_context_error(context));
    spart_weights_free(convolved);
    spart_weights_free(weights);
    spart_psf_free(psf);
    spart_context_free(context);
    return (int)status;
}

/* The small instrument with a PSF per channel, psf [2][3][2] ([channel][x][y])
 * = value_at(y, x, channel) / 128, from C:
 *   images, scenes     the images of its scene (2 x 256) and their
 *                      backprojection (2 x 108), the PSF composed by FFT
 *                      (folded = 0) or folded into the weights (folded = 1);
 *   solution, chi2     with folded = 0: MART over
 *                      spart_mart_operators_from_regridders_psf on the
 *                      instrument's regridders and PSF (gain 1.5, read
 *                      noise 2), observed = its images, exactly 4 updates:
 *                      the solution (108) and the chi2 history (4 x 2).
 * Returns the first failing status, its sentence in `sentence`. */
int reference_psf_instrument(int folded, double *images, double *scenes, double *solution,
                             double *chi2, char *sentence, int64_t sentence_capacity);
int reference_psf_instrument(int folded, double *images, double *scenes, double *solution,
                             double *chi2, char *sentence, int64_t sentence_capacity)
{
    static small_instrument s;
    double psf[2 * 3 * 2];
    spart_shape psf_shape = {3, {2, 3, 2}};
    fill_values(&psf_shape, 1.0 / 128.0, psf);
    make_small_instrument(&s);
    s.tiny.params.psf = psf;
    s.tiny.params.psf_size[0] = 3;
    s.tiny.params.psf_size[1] = 2;
    s.tiny.params.psf_mode = folded ? SPART_PSF_FOLDED : SPART_PSF_FFT;
    spart_context *context = NULL;
    spart_instrument *instrument = NULL;
    spart_mart_result *result = NULL;
    spart_status status = spart_context_create(&context);
    if (status == SPART_OK) {
        status = spart_instrument_create(context, &s.tiny.params, &instrument);
    }
    if (status == SPART_OK) {
        status = spart_instrument_image(context, instrument, s.scene, images, NULL);
    }
    if (status == SPART_OK) {
        status = spart_instrument_backproject(context, instrument, images, scenes);
    }
    if (status == SPART_OK && !folded) {
        spart_mart_regridder_psf problem = {spart_instrument_forward(instrument),
                                            spart_instrument_psf(instrument),
                                            spart_instrument_backward(instrument),
                                            2,
                                            1.5,
                                            2.0,
                                            NULL};
        spart_mart_operators operators;
        spart_mart_options options;
        spart_mart_options_init(&options);
        options.stop_rule = SPART_MART_STOP_COUNT;
        options.max_iterations = 4;
        status = spart_mart_operators_from_regridders_psf(context, &problem, &operators);
        if (status == SPART_OK) {
            status = spart_mart_solve(context, &operators, images, &options, &result);
        }
        if (status == SPART_OK) {
            memcpy(solution, spart_mart_result_solution(result), 108 * sizeof(double));
            memcpy(chi2, spart_mart_result_mean_chi_squared(result), 8 * sizeof(double));
        }
    }
    snprintf(sentence, (size_t)sentence_capacity, "%s", spart_context_error(context));
    spart_mart_result_free(result);
    spart_instrument_free(instrument);
    spart_context_free(context);
    return (int)status;
}
