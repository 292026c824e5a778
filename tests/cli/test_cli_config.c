/*
 * tests/cli/test_cli_config.c: the config files of the spart command
 * (src/cli/config.h). A good config reads with its defaults filled in;
 * each kind of mistake is refused with a sentence that starts with the
 * file, the line and the column, and names the key:
 * "<file>:<line>:<column>: <key>: <what is wrong>".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "cli_config_fixture.h"

/* A config without mistakes: line numbers below count from this text. */
static const char good_config[] = "instrument:\n"                                /* 1 */
                                  "  angles: [0, 90]\n"                          /* 2 */
                                  "  wavelength_rest: 171.0\n"                   /* 3 */
                                  "  velocity: {min: -200, max: 200, bins: 4}\n" /* 4 */
                                  "  dispersion_velocity: 50.0\n"                /* 5 */
                                  "  plate_scale: 2.5\n"                         /* 6 */
                                  "  scene_x: {min: -10, max: 10, cells: 8}\n"   /* 7 */
                                  "  scene_y: {min: -10, max: 10, cells: 8}\n"   /* 8 */
                                  "  sensor: {pixels_x: 32, pixels_y: 16}\n"     /* 9 */
                                  "  area_effective: 1.0\n"                      /* 10 */
                                  "  exposure_time: 20.0\n";                     /* 11 */

/* The good config with `extra` appended. */
static int read_good_plus(fixture *f, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", good_config, extra);
    return read_text(f, text);
}

/* The good config with line `line` (from 1) replaced by `replacement`
 * (which may hold several lines, or none). */
static int read_good_with_line(fixture *f, int line, const char *replacement)
{
    char text[4096] = "";
    const char *start = good_config;
    for (int k = 1; *start != '\0'; k++) {
        const char *end = strchr(start, '\n');
        size_t length = (size_t)(end - start) + 1;
        if (k == line) {
            strncat(text, replacement, sizeof text - strlen(text) - 1);
        } else {
            strncat(text, start, length < sizeof text - strlen(text) ? length : 0);
        }
        start = end + 1;
    }
    return read_text(f, text);
}

/* The sentence must start with "<path>:<line>:<column>: <key>: " and hold
 * `words`. */
static void assert_complaint(const fixture *f, int line, int column, const char *key,
                             const char *words)
{
    char start[512];
    snprintf(start, sizeof start, "%s:%d:%d: %s: ", f->path, line, column, key);
    if (strncmp(f->error, start, strlen(start)) != 0 || strstr(f->error, words) == NULL) {
        fail_msg("expected a sentence starting \"%s\" and holding \"%s\", got \"%s\"", start, words,
                 f->error);
    }
}

/* ---- a good config ------------------------------------------------------------------------ */

static void test_good_config_reads_with_defaults(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_text(f, good_config), 0);
    const config_instrument *instrument = &f->cfg.instrument;
    assert_int_equal(instrument->num_channel, 2);
    assert_true(instrument->angle[1] == 90.0);
    assert_int_equal(instrument->velocity.cells, 4);
    assert_int_equal(instrument->sensor_pixels_x, 32);
    /* 50 km/s per pixel at 171 A */
    assert_true(instrument->dispersion == 171.0 * 50.0 / 299792.458);
    assert_true(instrument->quantum_yield == 1.0);
    assert_true(instrument->read_noise == 0.0);
    assert_true(instrument->position_ref[0] == 16.0 && instrument->position_ref[1] == 8.0);
    assert_true(instrument->wavelength_ref == 171.0);
    assert_int_equal(instrument->solid_angle_steradian, 1);
    assert_int_equal(f->cfg.scene.kind, SCENE_GAUSSIANS);
    assert_true(f->cfg.scene.width_velocity == 30.0 && f->cfg.scene.background == 0.0);
    assert_int_equal(f->cfg.observations.kind, OBSERVATIONS_SYNTHESIZE);
    assert_int_equal(f->cfg.observations.seed, 42);
    assert_int_equal(f->cfg.observations.noise, 1);
    assert_true(f->cfg.solver.gamma == 0.0); /* 2 / channels, resolved by MART */
    assert_int_equal(f->cfg.solver.stop_rule, SPART_MART_STOP_THRESHOLD);
    assert_true(f->cfg.solver.threshold == 1e-3);
    assert_int_equal(f->cfg.solver.max_iterations, 100);
    assert_int_equal(f->cfg.solver.device, DEVICE_HOST);
    assert_int_equal(f->cfg.solver.value_type, SPART_FLOAT64);
    assert_string_equal(f->cfg.outputs.folder, "spart-output");
    assert_int_equal(f->cfg.outputs.pictures, 1);
}

static void test_every_section_reads(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_good_plus(f, "  read_noise: 3\n"
                                       "  radiance_per: arcsec2\n"
                                       "observations:\n"
                                       "  file: images.fits\n"
                                       "solver:\n"
                                       "  stop: target\n"
                                       "  target: 1.5\n"
                                       "  max_iterations: 7\n"
                                       "  device: auto\n"
                                       "  value_type: float32\n"
                                       "outputs:\n"
                                       "  folder: there\n"
                                       "  pictures: false\n"),
                     0);
    assert_true(f->cfg.instrument.read_noise == 3.0);
    assert_int_equal(f->cfg.instrument.solid_angle_steradian, 0);
    assert_int_equal(f->cfg.observations.kind, OBSERVATIONS_FILE);
    /* Input files are found beside the config file. */
    char expected[256];
    snprintf(expected, sizeof expected, "%s/images.fits", f->folder);
    assert_string_equal(f->cfg.observations.file, expected);
    /* Observations from a file and no scene: no truth to compare with. */
    assert_int_equal(f->cfg.scene.kind, SCENE_NONE);
    assert_int_equal(f->cfg.solver.stop_rule, SPART_MART_STOP_TARGET);
    assert_true(f->cfg.solver.target == 1.5);
    assert_int_equal(f->cfg.solver.max_iterations, 7);
    assert_int_equal(f->cfg.solver.device, DEVICE_AUTO);
    assert_int_equal(f->cfg.solver.value_type, SPART_FLOAT32);
    assert_string_equal(f->cfg.outputs.folder, "there");
    assert_int_equal(f->cfg.outputs.pictures, 0);
}

/* ---- unknown keys -------------------------------------------------------------------------- */

static void test_a_typo_in_a_key_is_refused_with_a_suggestion(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 6, "  plate_scal: 2.5\n"), 0);
    assert_complaint(f, 6, 3, "instrument.plate_scal", "unknown key (did you mean 'plate_scale'?)");
}

static void test_an_unknown_section_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "solvr:\n  gamma: 1\n"), 0);
    assert_complaint(f, 12, 1, "solvr", "unknown key (did you mean 'solver'?)");
}

static void test_an_unknown_key_deep_down_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "scene:\n  gaussians: {width_z: 2}\n"), 0);
    assert_complaint(f, 13, 15, "scene.gaussians.width_z", "unknown key");
}

/* ---- wrong types ---------------------------------------------------------------------------- */

static void test_a_word_where_a_number_belongs_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 6, "  plate_scale: abc\n"), 0);
    assert_complaint(f, 6, 16, "instrument.plate_scale", "expected a number, got 'abc'");
}

static void test_a_quoted_number_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 6, "  plate_scale: \"2.5\"\n"), 0);
    assert_complaint(f, 6, 17, "instrument.plate_scale", "quoted text '2.5'");
}

static void test_a_list_where_a_number_belongs_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 10, "  area_effective: [1, 2]\n"), 0);
    assert_complaint(f, 10, 19, "instrument.area_effective", "expected a number, got a list");
}

static void test_a_fraction_where_a_count_belongs_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 7, "  scene_x: {min: -10, max: 10, cells: 8.5}\n"),
                         0);
    assert_complaint(f, 7, 39, "instrument.scene_x.cells", "expected a whole number, got '8.5'");
}

static void test_a_bad_item_of_a_list_is_named(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 2, "  angles: [0, ninety]\n"), 0);
    assert_complaint(f, 2, 15, "instrument.angles[1]", "expected a number, got 'ninety'");
}

static void test_a_word_not_in_the_choices_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "solver:\n  stop: never\n"), 0);
    assert_complaint(f, 13, 9, "solver.stop", "'never' is not one of: threshold, target, count");
}

static void test_a_boolean_must_be_true_or_false(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "outputs:\n  pictures: yes\n"), 0);
    assert_complaint(f, 13, 13, "outputs.pictures", "expected true or false, got 'yes'");
}

static void test_a_section_that_is_not_a_mapping_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "solver: fast\n"), 0);
    assert_complaint(f, 12, 9, "solver", "expected a mapping");
}

/* ---- missing keys --------------------------------------------------------------------------- */

static void test_a_missing_required_key_is_named_at_its_section(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 6, ""), 0);
    assert_complaint(f, 2, 3, "instrument.plate_scale",
                     "missing required key 'plate_scale' (arcsec per pixel)");
}

static void test_a_missing_key_of_an_axis_is_named(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 8, "  scene_y: {min: -10, cells: 8}\n"), 0);
    assert_complaint(f, 8, 12, "instrument.scene_y.max", "missing required key 'max'");
}

static void test_a_missing_instrument_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_text(f, "solver:\n  gamma: 1\n"), 0);
    assert_complaint(f, 1, 1, "instrument", "missing required key 'instrument'");
}

static void test_one_of_two_keys_is_required(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 5, ""), 0);
    assert_complaint(f, 2, 3, "instrument",
                     "missing required key: give 'dispersion' or 'dispersion_velocity'");
}

static void test_two_keys_that_exclude_each_other_are_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "  dispersion: 0.005\n"), 0);
    assert_complaint(f, 12, 3, "instrument.dispersion",
                     "give either 'dispersion' or 'dispersion_velocity', not both");
}

/* ---- values out of range ------------------------------------------------------------------------
 */

static void test_a_negative_plate_scale_is_out_of_range(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 6, "  plate_scale: -2.5\n"), 0);
    assert_complaint(f, 6, 16, "instrument.plate_scale",
                     "-2.5 is out of range: it must be greater than 0");
}

static void test_a_negative_read_noise_is_out_of_range(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "  read_noise: -1\n"), 0);
    assert_complaint(f, 12, 15, "instrument.read_noise",
                     "-1 is out of range: it must be 0 or more");
}

static void test_zero_iterations_are_out_of_range(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "solver:\n  max_iterations: 0\n"), 0);
    assert_complaint(f, 13, 19, "solver.max_iterations", "0 is out of range: it must be from 1");
}

static void test_an_axis_whose_max_is_below_its_min_is_out_of_range(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 7, "  scene_x: {min: 10, max: -10, cells: 8}\n"),
                         0);
    assert_complaint(f, 7, 27, "instrument.scene_x.max", "max must be greater than min (10)");
}

static void test_an_infinite_number_is_out_of_range(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 11, "  exposure_time: inf\n"), 0);
    assert_complaint(f, 11, 18, "instrument.exposure_time", "must be finite");
}

static void test_too_many_channels_are_refused(void **state)
{
    fixture *f = *state;
    char line[1024] = "  angles: [0";
    for (int k = 1; k <= CONFIG_MAX_CHANNELS; k++) {
        char item[16];
        snprintf(item, sizeof item, ", %d", k);
        strncat(line, item, sizeof line - strlen(line) - 1);
    }
    strncat(line, "]\n", sizeof line - strlen(line) - 1);
    assert_int_not_equal(read_good_with_line(f, 2, line), 0);
    assert_complaint(f, 2, 11, "instrument.angles", "expected from 1 to 64 numbers, got 65");
}

/* ---- the YAML itself
 * ----------------------------------------------------------------------------- */

static void test_loaded_operators_cannot_synthesise_observations(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "  operators: saved\n"), 0);
    assert_complaint(f, 12, 3, "instrument.operators", "give observations.file");
}

static void test_loaded_operators_are_found_beside_the_config(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_good_plus(f, "  operators: saved\nobservations:\n  file: seen.fits\n"),
                     0);
    char expected[256];
    snprintf(expected, sizeof expected, "%s/saved", f->folder);
    assert_string_equal(f->cfg.instrument.operators, expected);
}

static void test_a_syntax_error_gives_the_parsers_position(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_with_line(f, 2, "  angles: [0, 90\n"), 0);
    char start[256];
    snprintf(start, sizeof start, "%s:", f->path);
    assert_true(strncmp(f->error, start, strlen(start)) == 0);
    assert_non_null(strstr(f->error, "not valid YAML"));
}

static void test_a_repeated_key_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_not_equal(read_good_plus(f, "  plate_scale: 3\n"), 0);
    char start[256];
    snprintf(start, sizeof start, "%s:12:3: key 'plate_scale' appears twice", f->path);
    assert_true(strncmp(f->error, start, strlen(start)) == 0);
}

static void test_a_missing_file_is_named(void **state)
{
    fixture *f = *state;
    f->error[0] = '\0';
    assert_int_not_equal(config_read("/nonexistent/spart.yaml", &f->cfg, f->error, sizeof f->error),
                         0);
    assert_non_null(strstr(f->error, "/nonexistent/spart.yaml: cannot read the config file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define CONFIG_TEST(name) cmocka_unit_test_setup_teardown(name, make_fixture, remove_fixture)
        CONFIG_TEST(test_good_config_reads_with_defaults),
        CONFIG_TEST(test_every_section_reads),
        CONFIG_TEST(test_a_typo_in_a_key_is_refused_with_a_suggestion),
        CONFIG_TEST(test_an_unknown_section_is_refused),
        CONFIG_TEST(test_an_unknown_key_deep_down_is_refused),
        CONFIG_TEST(test_a_word_where_a_number_belongs_is_refused),
        CONFIG_TEST(test_a_quoted_number_is_refused),
        CONFIG_TEST(test_a_list_where_a_number_belongs_is_refused),
        CONFIG_TEST(test_a_fraction_where_a_count_belongs_is_refused),
        CONFIG_TEST(test_a_bad_item_of_a_list_is_named),
        CONFIG_TEST(test_a_word_not_in_the_choices_is_refused),
        CONFIG_TEST(test_a_boolean_must_be_true_or_false),
        CONFIG_TEST(test_a_section_that_is_not_a_mapping_is_refused),
        CONFIG_TEST(test_a_missing_required_key_is_named_at_its_section),
        CONFIG_TEST(test_a_missing_key_of_an_axis_is_named),
        CONFIG_TEST(test_a_missing_instrument_is_refused),
        CONFIG_TEST(test_one_of_two_keys_is_required),
        CONFIG_TEST(test_two_keys_that_exclude_each_other_are_refused),
        CONFIG_TEST(test_a_negative_plate_scale_is_out_of_range),
        CONFIG_TEST(test_a_negative_read_noise_is_out_of_range),
        CONFIG_TEST(test_zero_iterations_are_out_of_range),
        CONFIG_TEST(test_an_axis_whose_max_is_below_its_min_is_out_of_range),
        CONFIG_TEST(test_an_infinite_number_is_out_of_range),
        CONFIG_TEST(test_too_many_channels_are_refused),
        CONFIG_TEST(test_loaded_operators_cannot_synthesise_observations),
        CONFIG_TEST(test_loaded_operators_are_found_beside_the_config),
        CONFIG_TEST(test_a_syntax_error_gives_the_parsers_position),
        CONFIG_TEST(test_a_repeated_key_is_refused),
        CONFIG_TEST(test_a_missing_file_is_named),
#undef CONFIG_TEST
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
