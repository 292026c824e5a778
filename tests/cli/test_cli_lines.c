/*
 * tests/cli/test_cli_lines.c: spectral lines in the config files of the
 * spart command (src/cli/config.h, instrument.lines) and their grids
 * (src/cli/problem.h): a list of lines reads with its defaults, each kind
 * of mistake is refused pointing at the line and column, one line without
 * `lines` still reads as before, and the shipped ESIS configs are valid and
 * have the sizes their comments promise (examples/esis.yaml is too large to
 * build here: only its config and grids are made).
 */
#include <math.h>
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
#include "problem.h"

/* The folder of the source tree's examples (set by CMake). */
#ifndef SPART_EXAMPLES_DIR
#error "SPART_EXAMPLES_DIR must name the examples folder"
#endif

/* progress.c (linked for problem.c) asks the command whether Ctrl-C came;
 * the command's main.c is not part of this test. */
int cli_interrupted(void);
int cli_interrupted(void)
{
    return 0;
}

/* An instrument of two lines; line numbers below count from this text. */
static const char two_lines[] =
    "instrument:\n"                                                              /* 1 */
    "  angles: [0, 90]\n"                                                        /* 2 */
    "  lines:\n"                                                                 /* 3 */
    "    - {wavelength_rest: 171.0, velocity: {min: -200, max: 200, bins: 4}}\n" /* 4 */
    "    - name: Fe X\n"                                                         /* 5 */
    "      wavelength_rest: 174.53\n"                                            /* 6 */
    "      wavelength: {min: 174.5, max: 174.56, bins: 3}\n"                     /* 7 */
    "      intensity_scale: 0.5\n"                                               /* 8 */
    "  dispersion_velocity: 50.0\n"                                              /* 9 */
    "  plate_scale: 2.5\n"                                                       /* 10 */
    "  scene_x: {min: -10, max: 10, cells: 8}\n"                                 /* 11 */
    "  scene_y: {min: -10, max: 10, cells: 8}\n"                                 /* 12 */
    "  sensor: {pixels_x: 32, pixels_y: 16}\n"                                   /* 13 */
    "  area_effective: 1.0\n"                                                    /* 14 */
    "  exposure_time: 20.0\n";                                                   /* 15 */

/* two_lines with the text `from` replaced by `to` (which must occur). */
static int read_changed(fixture *f, const char *from, const char *to)
{
    char text[4096];
    const char *at = strstr(two_lines, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - two_lines), two_lines, to,
             at + strlen(from));
    return read_text(f, text);
}

static void expect_complaint(fixture *f, const char *where, const char *words)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s:%s: ", f->path, where);
    if (strncmp(f->error, prefix, strlen(prefix)) != 0 || strstr(f->error, words) == NULL) {
        fail_msg("expected \"%s...%s\", got \"%s\"", prefix, words, f->error);
    }
}

static void a_list_of_lines_reads_with_its_defaults(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_text(f, two_lines), 0);
    const config_instrument *instrument = &f->cfg.instrument;
    assert_int_equal(instrument->has_lines, 1);
    assert_int_equal(instrument->num_line, 2);
    assert_true(instrument->line[0].wavelength_rest == 171.0);
    assert_int_equal(instrument->line[0].has_velocity, 1);
    assert_int_equal(instrument->line[0].velocity.cells, 4);
    assert_true(instrument->line[0].intensity_scale == 1.0);
    assert_string_equal(instrument->line[0].name, "");
    assert_string_equal(instrument->line[1].name, "Fe X");
    assert_int_equal(instrument->line[1].has_velocity, 0);
    assert_int_equal(instrument->line[1].wavelength.cells, 3);
    assert_true(instrument->line[1].intensity_scale == 0.5);
    /* the first line's values are the single-line fields; the dispersion
     * in km/s per pixel is converted at the first line's rest wavelength */
    assert_true(instrument->wavelength_rest == 171.0);
    assert_true(instrument->wavelength_ref == 171.0);
    assert_true(instrument->dispersion == 171.0 * 50.0 / 299792.458);
}

static void one_line_without_lines_reads_as_before(void **state)
{
    fixture *f = *state;
    char text[4096];
    const char *end_of_lines = strstr(two_lines, "  dispersion_velocity");
    snprintf(text, sizeof text,
             "instrument:\n  angles: [0, 90]\n  wavelength_rest: 171.0\n"
             "  velocity: {min: -200, max: 200, bins: 4}\n%s",
             end_of_lines);
    assert_int_equal(read_text(f, text), 0);
    assert_int_equal(f->cfg.instrument.has_lines, 0);
    assert_int_equal(f->cfg.instrument.num_line, 1);
    assert_true(f->cfg.instrument.line[0].wavelength_rest == 171.0);
    assert_int_equal(f->cfg.instrument.line[0].velocity.cells, 4);
    assert_true(f->cfg.instrument.line[0].intensity_scale == 1.0);
}

static void mistakes_in_lines_point_at_the_line(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_changed(f, "  dispersion_velocity",
                                  "  wavelength_rest: 171.0\n"
                                  "  dispersion_velocity"),
                     -1);
    expect_complaint(f, "9:3", "instrument.wavelength_rest: give the line in instrument.lines");
    assert_int_equal(read_changed(f, "intensity_scale: 0.5", "intensity_scale: -1"), -1);
    expect_complaint(f, "8:24", "instrument.lines[1].intensity_scale: -1 is out of range");
    assert_int_equal(read_changed(f, "      wavelength_rest: 174.53\n", ""), -1);
    expect_complaint(f, "5:7", "instrument.lines[1].wavelength_rest: missing required key");
    assert_int_equal(
        read_changed(f, "{min: 174.5, max: 174.56, bins: 3}", "{min: -1, max: 174.56, bins: 3}"),
        -1);
    expect_complaint(f, "7:25", "instrument.lines[1].wavelength.min: -1 is out of range");
    assert_int_equal(read_changed(f, "intensity_scale: 0.5", "intensity: 0.5"), -1);
    expect_complaint(f, "8:7", "instrument.lines[1].intensity: unknown key");
    assert_int_equal(read_changed(f, "    - {wavelength_rest: 171.0,",
                                  "    - {wavelength_rest: 171.0, wavelength: {min: 1, max: 2, "
                                  "bins: 1},"),
                     -1);
    expect_complaint(
        f, "4:71",
        "instrument.lines[0].velocity: give either 'velocity' or 'wavelength', not both");
    char text[4096];
    snprintf(text, sizeof text, "instrument:\n  angles: [0, 90]\n  lines: []\n%s",
             strstr(two_lines, "  dispersion_velocity"));
    assert_int_equal(read_text(f, text), -1);
    expect_complaint(f, "3:10", "instrument.lines: expected a list of 1 to 16 lines");
}

static void frames_and_drift_read_with_their_defaults(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_text(f, two_lines), 0);
    assert_int_equal(f->cfg.observations.frames, 1);
    assert_true(f->cfg.scene.drift == 0.0);
    char text[4096];
    snprintf(text, sizeof text,
             "%sscene:\n  gaussians: {drift: 0.75}\nobservations:\n  synthesize: {frames: 30}\n",
             two_lines);
    assert_int_equal(read_text(f, text), 0);
    assert_int_equal(f->cfg.observations.frames, 30);
    assert_true(f->cfg.scene.drift == 0.75);
    snprintf(text, sizeof text, "%sobservations:\n  synthesize: {frames: 0}\n", two_lines);
    assert_int_equal(read_text(f, text), -1);
    expect_complaint(f, "17:24", "observations.synthesize.frames: 0 is out of range");
}

/* The grids of two lines: each line's edges in its own place, bins line
 * after line, velocities from each line's rest wavelength. */
static void two_lines_make_their_grids(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_text(f, two_lines), 0);
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    problem made;
    assert_int_equal(problem_make_grids(context, &f->cfg, &made, f->error, sizeof f->error), 0);
    assert_int_equal(made.num_line, 2);
    assert_int_equal(made.num_wavelength, 7);
    assert_int_equal(made.scene_size, 7 * 8 * 8);
    assert_int_equal(made.line_bin[1], 4);
    assert_int_equal(problem_bin_line(&made, 3), 0);
    assert_int_equal(problem_bin_line(&made, 4), 1);
    assert_true(made.lines[1].num_wavelength == 3);
    assert_true(made.lines[1].wavelength[0] == 174.5);
    assert_true(made.lines[1].intensity_scale == 0.5);
    assert_true(made.wavelength[5] == 174.5); /* line 1's first edge, after line 0's 5 */
    /* the middle bin of 174.5 ... 174.56 is centred on 174.53, its rest */
    assert_true(fabs(problem_bin_velocity(&made, 5)) < 1e-6);
    assert_true(fabs(problem_bin_velocity(&made, 0) + 150.0) < 1e-9);
    assert_true(problem_bin_width(&made, 4) > 0.0199 && problem_bin_width(&made, 4) < 0.0201);
    problem_free(&made);
    spart_context_free(context);
}

/* examples/esis.yaml (and esis-small.yaml, esis-line.yaml): valid, and the
 * sizes their comments give. */
static void the_esis_config_is_valid_at_full_size(void **state)
{
    fixture *f = *state;
    assert_int_equal(
        config_read(SPART_EXAMPLES_DIR "/esis.yaml", &f->cfg, f->error, sizeof f->error), 0);
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    problem made;
    assert_int_equal(problem_make_grids(context, &f->cfg, &made, f->error, sizeof f->error), 0);
    assert_int_equal(made.num_channel, 4);
    assert_int_equal(made.num_line, 7);
    assert_int_equal(made.num_wavelength, 7 * 24);
    assert_int_equal(made.num_scene_x, 1139);
    assert_int_equal(made.num_scene_y, 1139);
    assert_true(made.scene_x[1] - made.scene_x[0] > 0.7499999 &&
                made.scene_x[1] - made.scene_x[0] < 0.7500001);
    assert_int_equal(made.num_sensor_y, 2 * 1040);
    assert_int_equal(f->cfg.observations.frames, 30);
    assert_int_equal(f->cfg.solver.value_type, SPART_FLOAT32);
    assert_true(f->cfg.instrument.memory_budget_gb == 40.0);
    problem_free(&made);
    assert_int_equal(
        config_read(SPART_EXAMPLES_DIR "/esis-small.yaml", &f->cfg, f->error, sizeof f->error), 0);
    assert_int_equal(f->cfg.instrument.num_line, 7);
    /* examples/esis-line.yaml: one line of the full field, 3 frames */
    assert_int_equal(
        config_read(SPART_EXAMPLES_DIR "/esis-line.yaml", &f->cfg, f->error, sizeof f->error), 0);
    assert_int_equal(problem_make_grids(context, &f->cfg, &made, f->error, sizeof f->error), 0);
    assert_int_equal(made.num_line, 1);
    assert_int_equal(made.num_wavelength, 24);
    assert_int_equal(made.num_scene_x, 1139);
    assert_int_equal(made.num_sensor_y, 2 * 1040);
    assert_int_equal(f->cfg.observations.frames, 3);
    problem_free(&made);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_list_of_lines_reads_with_its_defaults, make_fixture,
                                        remove_fixture),
        cmocka_unit_test_setup_teardown(one_line_without_lines_reads_as_before, make_fixture,
                                        remove_fixture),
        cmocka_unit_test_setup_teardown(mistakes_in_lines_point_at_the_line, make_fixture,
                                        remove_fixture),
        cmocka_unit_test_setup_teardown(frames_and_drift_read_with_their_defaults, make_fixture,
                                        remove_fixture),
        cmocka_unit_test_setup_teardown(two_lines_make_their_grids, make_fixture, remove_fixture),
        cmocka_unit_test_setup_teardown(the_esis_config_is_valid_at_full_size, make_fixture,
                                        remove_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
