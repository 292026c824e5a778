/*
 * spart_scene_gaussians and spart_wavelength_from_velocity against
 * ctis.scenes.gaussians (ctis 0.3.1, named_arrays 2.10.0, astropy 8.0.2,
 * numpy 2.4.6), to 1e-13 relative. The reference numbers were printed by
 * Python calls written out above each table, with
 *     import numpy as np, astropy.units as u, named_arrays as na, ctis
 *     def grid(v, x, y, wr=171):
 *         velocity = na.ScalarArray(np.array(v, float), "wavelength") * u.km / u.s
 *         position = na.Cartesian2dVectorArray(
 *             x=na.ScalarArray(np.array(x, float), "x") * u.arcsec,
 *             y=na.ScalarArray(np.array(y, float), "y") * u.arcsec)
 *         return na.DopplerPositionalVectorArray.from_velocity(
 *             velocity=velocity, wavelength_rest=wr * u.AA, position=position)
 * and the values read as ctis.scenes.gaussians(g).outputs.ndarray.value[l, i, j]
 * (axes wavelength, x, y; unit erg / (A s sr cm2)).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "test_util.h"

#define RTOL 1e-13

typedef struct reference_value {
    int l, i, j;
    double value;
} reference_value;

static void assert_close(double got, double expected, double rtol, const char *what)
{
    double difference = fabs(got - expected);
    if (!(difference <= rtol * fabs(expected))) {
        fail_msg("%s: got %.17g, ctis %.17g (relative difference %.3g > %.1g)", what, got, expected,
                 difference / fabs(expected), rtol);
    }
}

/* The grid g = grid([-300, -200, ..., 300], [-6, -4, ..., 6], [-5, -3, ..., 5]):
 * 6 x 6 x 5 cells at 171 A. */
static const double VELOCITY_A[7] = {-300, -200, -100, 0, 100, 200, 300};
static const double X_A[7] = {-6, -4, -2, 0, 2, 4, 6};
static const double Y_A[6] = {-5, -3, -1, 1, 3, 5};

static void evaluate_grid_a(spart_context *context, const spart_scene_gaussians_options *options,
                            double *wavelength, double *scene)
{
    assert_int_equal(spart_scene_gaussians(context, 171.0, 6, VELOCITY_A, 6, X_A, 5, Y_A, options,
                                           wavelength, scene),
                     SPART_OK);
}

/* g.wavelength.ndarray.value */
static void wavelength_edges_equal_named_arrays_from_velocity(void **state)
{
    static const double expected[7] = {
        170.82888161916335, 170.88592107944223, 170.94296053972113, 171.0,
        171.0570394602789,  171.11407892055777, 171.17111838083667};
    double wavelength[7], scene[6 * 6 * 5], direct[7];
    evaluate_grid_a(*state, NULL, wavelength, scene);
    assert_int_equal(spart_wavelength_from_velocity(*state, 171.0, 7, VELOCITY_A, direct),
                     SPART_OK);
    for (int l = 0; l < 7; l++) {
        /* computed in astropy's order, so equal to the last bit */
        assert_true(wavelength[l] == expected[l]);
        assert_true(direct[l] == expected[l]);
    }
}

/* ctis.scenes.gaussians(g).outputs.ndarray.value[l, i, j] */
static void default_widths_match_ctis(void **state)
{
    static const reference_value expected[] = {
        {0, 0, 0, 7.850456842761902e-06}, {1, 1, 2, 6.022245127508409},
        {2, 3, 2, 1.7180716992960365},    {3, 2, 1, 0.0043447919835395265},
        {4, 3, 4, 277.45441856563514},    {5, 5, 4, 6.5902152893567185e-06},
        {1, 2, 3, 103.59717701481694},    {5, 0, 4, 0.028251247418754993},
        {1, 4, 0, 3352.6244970846406},
    };
    double scene[6 * 6 * 5];
    evaluate_grid_a(*state, NULL, NULL, scene);
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++) {
        const reference_value *r = &expected[k];
        assert_close(scene[(r->l * 6 + r->i) * 5 + r->j], r->value, RTOL, "scene value");
    }
}

/* a.sum() = 37775.7785299339 and a.max() = 3352.6244970846406 at (1, 4, 0) */
static void default_widths_sum_and_maximum_match_ctis(void **state)
{
    double scene[6 * 6 * 5];
    evaluate_grid_a(*state, NULL, NULL, scene);
    double sum = 0.0, maximum = -INFINITY;
    int argmax = -1;
    for (int k = 0; k < 6 * 6 * 5; k++) {
        sum += scene[k];
        if (scene[k] > maximum) {
            maximum = scene[k];
            argmax = k;
        }
    }
    assert_close(sum, 37775.7785299339, RTOL, "sum");
    assert_int_equal(argmax, (1 * 6 + 4) * 5 + 0);
}

/* width = na.DopplerPositionalVectorArray.from_velocity(velocity=50 * u.km / u.s,
 *     wavelength_rest=171 * u.AA, position=na.Cartesian2dVectorArray(1.5, 2) * u.arcsec)
 * ctis.scenes.gaussians(g, width=width).outputs.ndarray.value[l, i, j] */
static void given_widths_match_ctis(void **state)
{
    static const reference_value expected[] = {
        {1, 1, 2, 429.38605639509103},
        {2, 3, 2, 889.4053311468623},
        {5, 0, 4, 132.5224082609861},
    };
    spart_scene_gaussians_options options;
    spart_scene_gaussians_options_init(&options);
    options.width_velocity = 50.0;
    options.width_x = 1.5;
    options.width_y = 2.0;
    double scene[6 * 6 * 5];
    evaluate_grid_a(*state, &options, NULL, scene);
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++) {
        const reference_value *r = &expected[k];
        assert_close(scene[(r->l * 6 + r->i) * 5 + r->j], r->value, RTOL, "scene value");
    }
}

/* g3 = grid([250, 150, -50], [3, 1, -1], [2.5, 0.5, -1.5, -3.5], wr=630.25):
 * every vertex decreasing, another rest wavelength; all 12 values. */
static void decreasing_vertices_and_other_rest_wavelength_match_ctis(void **state)
{
    static const double velocity[3] = {250, 150, -50};
    static const double x[3] = {3, 1, -1};
    static const double y[4] = {2.5, 0.5, -1.5, -3.5};
    static const double expected_wavelength[3] = {630.7755719274966, 630.565343156498,
                                                  630.1448856145007};
    static const double expected[12] = {
        100.70332028544861,    5.131042572076432,  0.010519898209322734, 791.9911348963769,
        168.08733032220985,    6.558702432408701,  1.560720042671388,    0.07770276197688127,
        0.0006768638874307445, 11.558144545716297, 0.5746586289630283,   0.005025139253529983,
    };
    double wavelength[3], scene[12];
    assert_int_equal(
        spart_scene_gaussians(*state, 630.25, 2, velocity, 2, x, 3, y, NULL, wavelength, scene),
        SPART_OK);
    for (int l = 0; l < 3; l++) {
        assert_true(wavelength[l] == expected_wavelength[l]);
    }
    for (int k = 0; k < 12; k++) {
        assert_close(scene[k], expected[k], RTOL, "scene value");
    }
}

/* The simple-mart tutorial's grid: na.linspace(-500, 500, num=21) km/s at 171 A,
 * 65 x 65 vertices from -10 to 10 arcsec. a = ctis.scenes.gaussians(coordinates_scene)
 * .outputs.ndarray.value: a.max() = 4903.468504841232 at (12, 19, 44), a[10, 32, 32] =
 * 0.10432242300992285, a[19, 0, 63] = 1.2194065968577704e-45, a.min() =
 * 1.4281057005750088e-69 at (19, 63, 0), a.sum() = 3667197.6732446486. */
static void tutorial_grid_matches_ctis(void **state)
{
    enum { NUM_L = 20, NUM_XY = 64 };
    double velocity[NUM_L + 1], vertices[NUM_XY + 1];
    for (int l = 0; l <= NUM_L; l++) {
        velocity[l] = -500.0 + 50.0 * l; /* exact, as numpy's linspace here */
    }
    for (int i = 0; i <= NUM_XY; i++) {
        vertices[i] = -10.0 + 0.3125 * i;
    }
    static double scene[NUM_L * NUM_XY * NUM_XY];
    assert_int_equal(spart_scene_gaussians(*state, 171.0, NUM_L, velocity, NUM_XY, vertices, NUM_XY,
                                           vertices, NULL, NULL, scene),
                     SPART_OK);
#define AT(l, i, j) scene[((l)*NUM_XY + (i)) * NUM_XY + (j)]
    assert_close(AT(12, 19, 44), 4903.468504841232, RTOL, "maximum");
    assert_close(AT(10, 32, 32), 0.10432242300992285, RTOL, "centre");
    assert_close(AT(19, 0, 63), 1.2194065968577704e-45, RTOL, "corner");
    assert_close(AT(19, 63, 0), 1.4281057005750088e-69, RTOL, "minimum");
#undef AT
    double sum = 0.0, maximum = -INFINITY;
    for (int k = 0; k < NUM_L * NUM_XY * NUM_XY; k++) {
        sum += scene[k];
        maximum = fmax(maximum, scene[k]);
    }
    assert_close(sum, 3667197.6732446486, RTOL, "sum");
    assert_close(maximum, 4903.468504841232, RTOL, "maximum");
}

static void options_init_gives_ctis_default_widths(void **state)
{
    (void)state;
    spart_scene_gaussians_options options;
    memset(&options, 0xff, sizeof options);
    spart_scene_gaussians_options_init(&options);
    assert_true(options.width_velocity == 30.0);
    assert_true(options.width_x == 1.0);
    assert_true(options.width_y == 1.0);
    spart_scene_gaussians_options_init(NULL); /* does nothing */
}

/* No motion (frame 0, or drift 0) is ctis's scene bit for bit. */
static void no_motion_is_the_still_scene_bit_for_bit(void **state)
{
    spart_context *context = *state;
    double still[6 * 6 * 5], moved[6 * 6 * 5];
    evaluate_grid_a(context, NULL, NULL, still);
    spart_scene_gaussians_options options;
    spart_scene_gaussians_options_init(&options);
    assert_true(options.drift == 0.0 && options.frame == 0);
    options.drift = 3.0;
    evaluate_grid_a(context, &options, NULL, moved);
    assert_memory_equal(still, moved, sizeof still);
    options.drift = 0.0;
    options.frame = 5;
    evaluate_grid_a(context, &options, NULL, moved);
    assert_memory_equal(still, moved, sizeof still);
}

/* The value of one cell centred at (x, y) and at `velocity` km/s (a bin of
 * +-1 km/s about it) in frame `frame` with drift `drift`. */
static double one_cell(spart_context *context, double x, double y, double velocity, int64_t frame,
                       double drift)
{
    spart_scene_gaussians_options options;
    spart_scene_gaussians_options_init(&options);
    options.frame = frame;
    options.drift = drift;
    double v[2] = {velocity - 1.0, velocity + 1.0};
    double xs[2] = {x - 0.01, x + 0.01};
    double ys[2] = {y - 0.01, y + 0.01};
    double value = 0.0;
    assert_int_equal(
        spart_scene_gaussians(context, 171.0, 1, v, 1, xs, 1, ys, &options, NULL, &value),
        SPART_OK);
    return value;
}

/* Blob k moves frame x drift arcsec along 45 k degrees: blob 0 (-2.5", 0",
 * 200 km/s, 3380) along +x, blob 2 (0", -2", -150 km/s, 4000) along +y,
 * blob 5 (-4", 4", 100 km/s, 7000) along (-1, -1) / sqrt(2). Each is found
 * at its new centre with its peak (the others far away by then). */
static void each_blob_moves_along_its_own_direction(void **state)
{
    spart_context *context = *state;
    assert_close(one_cell(context, 7.5, 0.0, 200.0, 1, 10.0), 3380.0, 1e-6, "blob 0, frame 1");
    assert_close(one_cell(context, 0.0, 8.0, -150.0, 2, 5.0), 4000.0, 1e-6, "blob 2, frame 2");
    double step = 12.0 * 0.70710678118654752440;
    assert_close(one_cell(context, -4.0 - step, 4.0 - step, 100.0, 3, 4.0), 7000.0, 1e-6,
                 "blob 5, frame 3");
    /* and is gone from its old place */
    assert_true(one_cell(context, -2.5, 0.0, 200.0, 1, 10.0) < 1e-6 * 3380.0);
}

/* Call with one argument changed and expect `status`, a sentence naming
 * `words`, and the scene untouched. */
static void expect_error(spart_context *context, double wavelength_rest, int64_t num_wavelength,
                         const double *velocity, int64_t num_x, const double *x,
                         const spart_scene_gaussians_options *options, double *scene,
                         spart_status status, const char *words)
{
    double poison = -12345.0;
    if (scene != NULL) {
        scene[0] = poison;
    }
    assert_int_equal(spart_scene_gaussians(context, wavelength_rest, num_wavelength, velocity,
                                           num_x, x, 5, Y_A, options, NULL, scene),
                     status);
    const char *sentence = spart_context_error(context);
    if (strstr(sentence, words) == NULL) {
        fail_msg("error sentence \"%s\" does not mention \"%s\"", sentence, words);
    }
    if (scene != NULL) {
        assert_true(scene[0] == poison);
    }
}

static void bad_arguments_are_rejected_with_a_sentence(void **state)
{
    spart_context *context = *state;
    double scene[6 * 6 * 5];
    double bad[7] = {-6, -4, -2, NAN, 2, 4, 6};
    spart_scene_gaussians_options options;
    spart_scene_gaussians_options_init(&options);

    expect_error(context, 171.0, 0, VELOCITY_A, 6, X_A, NULL, scene, SPART_ERROR_INVALID_ARGUMENT,
                 "num_wavelength");
    expect_error(context, 171.0, 6, VELOCITY_A, -1, X_A, NULL, scene, SPART_ERROR_INVALID_ARGUMENT,
                 "num_x");
    expect_error(context, 171.0, 6, NULL, 6, X_A, NULL, scene, SPART_ERROR_NULL_POINTER,
                 "velocity");
    expect_error(context, 171.0, 6, VELOCITY_A, 6, NULL, NULL, scene, SPART_ERROR_NULL_POINTER,
                 "x is NULL");
    expect_error(context, 171.0, 6, VELOCITY_A, 6, X_A, NULL, NULL, SPART_ERROR_NULL_POINTER,
                 "scene");
    expect_error(context, 0.0, 6, VELOCITY_A, 6, X_A, NULL, scene, SPART_ERROR_INVALID_ARGUMENT,
                 "wavelength_rest");
    expect_error(context, INFINITY, 6, VELOCITY_A, 6, X_A, NULL, scene, SPART_ERROR_NOT_FINITE,
                 "wavelength_rest");
    expect_error(context, 171.0, 6, VELOCITY_A, 6, bad, NULL, scene, SPART_ERROR_NOT_FINITE,
                 "x[3]");
    expect_error(context, 171.0, 6, bad, 6, X_A, NULL, scene, SPART_ERROR_NOT_FINITE,
                 "velocity[3]");
    options.width_x = -1.0;
    expect_error(context, 171.0, 6, VELOCITY_A, 6, X_A, &options, scene,
                 SPART_ERROR_INVALID_ARGUMENT, "width_x");
    options.width_x = 1.0;
    options.width_velocity = NAN;
    expect_error(context, 171.0, 6, VELOCITY_A, 6, X_A, &options, scene, SPART_ERROR_NOT_FINITE,
                 "width_velocity");
    options.width_velocity = 30.0;
    options.drift = NAN;
    expect_error(context, 171.0, 6, VELOCITY_A, 6, X_A, &options, scene, SPART_ERROR_NOT_FINITE,
                 "drift");
    options.drift = 1.0;
    options.frame = -1;
    expect_error(context, 171.0, 6, VELOCITY_A, 6, X_A, &options, scene,
                 SPART_ERROR_INVALID_ARGUMENT, "frame = -1");
    expect_error(context, 171.0, INT64_MAX / 4, VELOCITY_A, 6, X_A, NULL, scene,
                 SPART_ERROR_OVERFLOW, "overflows");
    assert_int_equal(
        spart_scene_gaussians(NULL, 171.0, 6, VELOCITY_A, 6, X_A, 5, Y_A, NULL, NULL, scene),
        SPART_ERROR_NULL_POINTER);
}

static void wavelength_from_velocity_rejects_bad_arguments(void **state)
{
    spart_context *context = *state;
    double wavelength[7];
    double bad[2] = {0.0, INFINITY};
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, -1, VELOCITY_A, wavelength),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, 7, NULL, wavelength),
                     SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_wavelength_from_velocity(context, -171.0, 7, VELOCITY_A, wavelength),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, 2, bad, wavelength),
                     SPART_ERROR_NOT_FINITE);
    assert_non_null(strstr(spart_context_error(context), "velocity[1]"));
    assert_int_equal(spart_wavelength_from_velocity(context, 171.0, 0, NULL, NULL), SPART_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(wavelength_edges_equal_named_arrays_from_velocity,
                                        context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(default_widths_match_ctis, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(default_widths_sum_and_maximum_match_ctis, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(given_widths_match_ctis, context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(decreasing_vertices_and_other_rest_wavelength_match_ctis,
                                        context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(tutorial_grid_matches_ctis, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(no_motion_is_the_still_scene_bit_for_bit, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(each_blob_moves_along_its_own_direction, context_set_up,
                                        context_tear_down),
        cmocka_unit_test(options_init_gives_ctis_default_widths),
        cmocka_unit_test_setup_teardown(bad_arguments_are_rejected_with_a_sentence, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(wavelength_from_velocity_rejects_bad_arguments,
                                        context_set_up, context_tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
