/*
 * src/cli/config.c: the sections of a spart config file, key by key, as
 * docs/config.md documents them.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config_reader.h"
#include "yaml_tree.h"

/* The speed of light in km/s (exact), for dispersions given as velocity. */
#define SPEED_OF_LIGHT_KM_S 299792.458
/* Cells or pixels along one axis: far more than any instrument has, and
 * small enough that products of two stay well inside int64. */
#define MAX_AXIS_CELLS 1000000

static const char *const top_keys[] = {"instrument", "scene",   "observations",
                                       "solver",     "outputs", NULL};
static const char *const instrument_keys[] = {"angles",
                                              "lines",
                                              "wavelength_rest",
                                              "velocity",
                                              "wavelength",
                                              "dispersion",
                                              "dispersion_velocity",
                                              "plate_scale",
                                              "scene_x",
                                              "scene_y",
                                              "sensor",
                                              "position_ref",
                                              "wavelength_ref",
                                              "area_effective",
                                              "exposure_time",
                                              "quantum_yield",
                                              "read_noise",
                                              "radiance_per",
                                              "operators",
                                              "psf",
                                              "memory_budget_gb",
                                              NULL};
static const char *const scene_keys[] = {"gaussians", "file", NULL};
static const char *const gaussians_keys[] = {"width_velocity", "width_x", "width_y",
                                             "background",     "drift",   NULL};
static const char *const line_keys[] = {"name",       "wavelength_rest", "velocity",
                                        "wavelength", "intensity_scale", NULL};
static const char *const observations_keys[] = {"synthesize", "file", NULL};
static const char *const synthesize_keys[] = {"seed", "noise", "frames", NULL};
static const char *const solver_keys[] = {"gamma",          "stop",   "threshold",  "target",
                                          "max_iterations", "device", "value_type", NULL};
static const char *const outputs_keys[] = {"folder", "pictures", "value_type", NULL};
static const char *const sensor_keys[] = {"pixels_x", "pixels_y", NULL};
static const char *const psf_keys[] = {"size", "major", "minor", "angle", "mode", NULL};
static const char *const psf_mode_words[] = {"auto", "fft", "folded", NULL};

static const char *const stop_words[] = {"threshold", "target", "count", NULL};
static const char *const device_words[] = {"host", "cuda", "auto", NULL};
static const char *const value_type_words[] = {"float64", "float32", NULL};
static const char *const radiance_words[] = {"steradian", "arcsec2", NULL};

void config_axis_vertices(const config_axis *axis, double *vertices)
{
    for (int64_t k = 0; k <= axis->cells; k++) {
        vertices[k] = axis->min + (axis->max - axis->min) * (double)k / (double)axis->cells;
    }
    vertices[axis->cells] = axis->max; /* exactly, whatever the rounding above */
}

void config_error_at(const config *cfg, config_position position, const char *key, char *error,
                     size_t error_size, const char *format, ...)
{
    int used = snprintf(error, error_size, "%s:%d:%d: %s: ", cfg->path, position.line,
                        position.column, key);
    if (used < 0 || (size_t)used >= error_size) {
        return;
    }
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error + used, error_size - (size_t)used, format, arguments);
    va_end(arguments);
}

/* ---- pieces shared by the sections ---------------------------------------------------- */

/* A mapping {min, max, <count_key>} of a uniform axis. */
static int read_axis(config_reader *reader, const yaml_node *node, const char *name,
                     const char *count_key, const char *unit, config_axis *axis)
{
    const char *const keys[] = {"min", "max", count_key, NULL};
    if (reader_expect_mapping(reader, node, name, keys) != 0) {
        return -1;
    }
    reader_required_number(reader, node, name, "min", RANGE_ANY, unit, &axis->min);
    reader_required_number(reader, node, name, "max", RANGE_ANY, unit, &axis->max);
    reader_required_integer(reader, node, name, count_key, 1, MAX_AXIS_CELLS, "a whole number",
                            &axis->cells);
    if (!reader->failed && !(axis->max > axis->min)) {
        char key[256];
        reader_complain(
            reader, yaml_mapping_get(node, "max", NULL), reader_join(key, sizeof key, name, "max"),
            "%g is out of range: max must be greater than min (%g)", axis->max, axis->min);
    }
    return -reader->failed;
}

/* Exactly one of two keys: which one (0 or 1) into *which, its node into
 * *value. */
static int read_one_of(config_reader *reader, const yaml_node *mapping, const char *name,
                       const char *first, const char *second, int *which, const yaml_node **value)
{
    const yaml_node *a = yaml_mapping_get(mapping, first, NULL);
    const yaml_node *b = yaml_mapping_get(mapping, second, NULL);
    char key[256];
    if (a != NULL && b != NULL) {
        /* Point at whichever of the two comes later in the file. */
        yaml_node *first_key = NULL;
        yaml_node *second_key = NULL;
        yaml_mapping_get(mapping, first, &first_key);
        yaml_mapping_get(mapping, second, &second_key);
        int first_is_later =
            first_key->line > second_key->line ||
            (first_key->line == second_key->line && first_key->column > second_key->column);
        yaml_node *later = first_is_later ? first_key : second_key;
        reader_complain(reader, later, reader_join(key, sizeof key, name, later->text),
                        "give either '%s' or '%s', not both", first, second);
        return -1;
    }
    if (a == NULL && b == NULL) {
        reader_complain(reader, mapping, name, "missing required key: give '%s' or '%s'", first,
                        second);
        return -1;
    }
    *which = a != NULL ? 0 : 1;
    *value = a != NULL ? a : b;
    return 0;
}

/* A file name, taken relative to the config file's folder unless absolute. */
static int read_input_file(config_reader *reader, const yaml_node *node, const char *key,
                           const char *config_path, char *path, size_t size,
                           config_position *position)
{
    char given[CONFIG_PATH_LENGTH];
    if (reader_string(reader, node, key, given, sizeof given) != 0) {
        return -1;
    }
    position->line = node->line;
    position->column = node->column;
    const char *slash = strrchr(config_path, '/');
    int written;
    if (given[0] == '/' || slash == NULL) {
        written = snprintf(path, size, "%s", given);
    } else {
        written = snprintf(path, size, "%.*s/%s", (int)(slash - config_path), config_path, given);
    }
    if (written < 0 || (size_t)written >= size) {
        reader_complain(reader, node, key, "the file name is too long");
        return -1;
    }
    return 0;
}

/* ---- instrument ------------------------------------------------------------------------ */

/* One line's rest wavelength and bins, from `node` (the instrument
 * section for one line, an item of instrument.lines for several); `name`
 * is the dotted key of `node`. */
static void read_line_bins(config_reader *reader, const yaml_node *node, const char *name,
                           config_line *line)
{
    char key[256];
    reader_required_number(reader, node, name, "wavelength_rest", RANGE_POSITIVE, "angstrom",
                           &line->wavelength_rest);
    int which = 0;
    const yaml_node *value = NULL;
    if (read_one_of(reader, node, name, "velocity", "wavelength", &which, &value) != 0) {
        return;
    }
    line->has_velocity = which == 0;
    if (which == 0) {
        read_axis(reader, value, reader_join(key, sizeof key, name, "velocity"), "bins", "km/s",
                  &line->velocity);
        return;
    }
    read_axis(reader, value, reader_join(key, sizeof key, name, "wavelength"), "bins", "angstrom",
              &line->wavelength);
    if (!reader->failed && !(line->wavelength.min > 0.0)) {
        char min_key[256];
        reader_join(min_key, sizeof min_key, reader_join(key, sizeof key, name, "wavelength"),
                    "min");
        reader_complain(reader, yaml_mapping_get(value, "min", NULL), min_key,
                        "%g is out of range: wavelengths must be greater than 0",
                        line->wavelength.min);
    }
}

/* instrument.lines: a list of mappings {name, wavelength_rest, velocity
 * or wavelength, intensity_scale}. */
static void read_lines_list(config_reader *reader, const yaml_node *node, const yaml_node *list,
                            config_instrument *instrument)
{
    const char *const single[] = {"wavelength_rest", "velocity", "wavelength", NULL};
    for (int k = 0; single[k] != NULL; k++) {
        yaml_node *key = NULL;
        if (yaml_mapping_get(node, single[k], &key) != NULL) {
            char name[64];
            reader_complain(reader, key, reader_join(name, sizeof name, "instrument", single[k]),
                            "give the line in instrument.lines, or one line with "
                            "wavelength_rest and velocity or wavelength, not both");
            return;
        }
    }
    if (list->kind != YAML_SEQUENCE || list->count < 1 || list->count > CONFIG_MAX_LINES) {
        reader_complain(reader, list, "instrument.lines",
                        "expected a list of 1 to %d lines, each {wavelength_rest: ..., "
                        "velocity: {...} or wavelength: {...}, intensity_scale: ...}",
                        CONFIG_MAX_LINES);
        return;
    }
    instrument->num_line = (int64_t)list->count;
    for (size_t k = 0; k < list->count && !reader->failed; k++) {
        char name[64];
        snprintf(name, sizeof name, "instrument.lines[%zu]", k);
        const yaml_node *item = list->items[k];
        config_line *line = &instrument->line[k];
        line->intensity_scale = 1.0;
        if (reader_expect_mapping(reader, item, name, line_keys) != 0) {
            return;
        }
        read_line_bins(reader, item, name, line);
        reader_optional_number(reader, item, name, "intensity_scale", RANGE_POSITIVE,
                               &line->intensity_scale);
        const yaml_node *text = reader_find(reader, item, name, "name", 0, "");
        if (text != NULL) {
            char key[96];
            reader_string(reader, text, reader_join(key, sizeof key, name, "name"), line->name,
                          sizeof line->name);
        }
    }
}

/* The spectral lines: instrument.lines, or one line from the instrument's
 * own keys; the first line's values are copied to the single-line fields. */
static void read_lines(config_reader *reader, const yaml_node *node, config_instrument *instrument)
{
    const yaml_node *list = reader_find(reader, node, "instrument", "lines", 0, "");
    instrument->has_lines = list != NULL;
    if (list != NULL) {
        read_lines_list(reader, node, list, instrument);
    } else {
        instrument->num_line = 1;
        instrument->line[0].intensity_scale = 1.0;
        read_line_bins(reader, node, "instrument", &instrument->line[0]);
    }
    const config_line *first = &instrument->line[0];
    instrument->wavelength_rest = first->wavelength_rest;
    instrument->has_velocity = first->has_velocity;
    instrument->velocity = first->velocity;
    instrument->wavelength = first->wavelength;
}

/* The dispersion: in A per pixel, or in km/s per pixel at the (first)
 * line's rest wavelength. */
static void read_dispersion(config_reader *reader, const yaml_node *node,
                            config_instrument *instrument)
{
    int which = 0;
    const yaml_node *value = NULL;
    if (read_one_of(reader, node, "instrument", "dispersion", "dispersion_velocity", &which,
                    &value) == 0) {
        instrument->has_dispersion_velocity = which == 1;
        if (which == 0) {
            reader_number(reader, value, "instrument.dispersion", RANGE_NONZERO,
                          &instrument->dispersion);
        } else {
            reader_number(reader, value, "instrument.dispersion_velocity", RANGE_NONZERO,
                          &instrument->dispersion_velocity);
            instrument->dispersion =
                instrument->wavelength_rest * instrument->dispersion_velocity / SPEED_OF_LIGHT_KM_S;
        }
    }
}

static void read_sensor(config_reader *reader, const yaml_node *node, config_instrument *instrument)
{
    const yaml_node *sensor =
        reader_find(reader, node, "instrument", "sensor", 1, "{pixels_x: ..., pixels_y: ...}");
    if (sensor == NULL ||
        reader_expect_mapping(reader, sensor, "instrument.sensor", sensor_keys) != 0) {
        return;
    }
    reader_required_integer(reader, sensor, "instrument.sensor", "pixels_x", 1, MAX_AXIS_CELLS,
                            "pixels along sensor x, the dispersion direction",
                            &instrument->sensor_pixels_x);
    reader_required_integer(reader, sensor, "instrument.sensor", "pixels_y", 1, MAX_AXIS_CELLS,
                            "pixels along sensor y", &instrument->sensor_pixels_y);
}

static void read_scene_axes(config_reader *reader, const yaml_node *node,
                            config_instrument *instrument)
{
    const yaml_node *x = reader_find(reader, node, "instrument", "scene_x", 1,
                                     "{min: ..., max: ..., cells: ...} in arcsec");
    if (x != NULL) {
        read_axis(reader, x, "instrument.scene_x", "cells", "arcsec", &instrument->scene_x);
    }
    const yaml_node *y = reader_find(reader, node, "instrument", "scene_y", 1,
                                     "{min: ..., max: ..., cells: ...} in arcsec");
    if (y != NULL) {
        read_axis(reader, y, "instrument.scene_y", "cells", "arcsec", &instrument->scene_y);
    }
}

static void read_angles(config_reader *reader, const yaml_node *node, config_instrument *instrument)
{
    const yaml_node *angles = reader_find(reader, node, "instrument", "angles", 1,
                                          "a list of dispersion angles in degree, one per channel");
    size_t count = 0;
    if (angles != NULL && reader_number_list(reader, angles, "instrument.angles", RANGE_ANY, 1,
                                             CONFIG_MAX_CHANNELS, instrument->angle, &count) == 0) {
        instrument->num_channel = (int64_t)count;
    }
}

static void read_detector(config_reader *reader, const yaml_node *node,
                          config_instrument *instrument)
{
    const char *name = "instrument";
    reader_required_number(reader, node, name, "plate_scale", RANGE_POSITIVE, "arcsec per pixel",
                           &instrument->plate_scale);
    reader_required_number(reader, node, name, "area_effective", RANGE_POSITIVE, "cm^2",
                           &instrument->area_effective);
    reader_required_number(reader, node, name, "exposure_time", RANGE_POSITIVE, "s",
                           &instrument->exposure_time);
    instrument->quantum_yield = 1.0;
    reader_optional_number(reader, node, name, "quantum_yield", RANGE_POSITIVE,
                           &instrument->quantum_yield);
    instrument->read_noise = 0.0;
    reader_optional_number(reader, node, name, "read_noise", RANGE_NON_NEGATIVE,
                           &instrument->read_noise);
    instrument->memory_budget_gb = 0.0;
    reader_optional_number(reader, node, name, "memory_budget_gb", RANGE_NON_NEGATIVE,
                           &instrument->memory_budget_gb);
    yaml_node *budget_key = NULL;
    if (yaml_mapping_get(node, "memory_budget_gb", &budget_key) != NULL) {
        instrument->memory_budget_position.line = budget_key->line;
        instrument->memory_budget_position.column = budget_key->column;
    }
    int radiance = 0;
    reader_optional_choice(reader, node, name, "radiance_per", radiance_words, &radiance);
    instrument->solid_angle_steradian = radiance == 0;
}

/* position_ref defaults to the sensor's centre and wavelength_ref to the
 * line, so that the scene's centre at rest lands mid-sensor. */
static void read_references(config_reader *reader, const yaml_node *node,
                            config_instrument *instrument)
{
    instrument->position_ref[0] = (double)instrument->sensor_pixels_x / 2.0;
    instrument->position_ref[1] = (double)instrument->sensor_pixels_y / 2.0;
    const yaml_node *position = reader_find(reader, node, "instrument", "position_ref", 0, "");
    size_t count = 0;
    if (position != NULL) {
        reader_number_list(reader, position, "instrument.position_ref", RANGE_ANY, 2, 2,
                           instrument->position_ref, &count);
    }
    instrument->wavelength_ref = instrument->wavelength_rest;
    reader_optional_number(reader, node, "instrument", "wavelength_ref", RANGE_POSITIVE,
                           &instrument->wavelength_ref);
}

/* One list of the psf section: a value per channel. */
static void read_psf_list(config_reader *reader, const yaml_node *psf, const char *key,
                          number_range range, int64_t num_channel, double *values)
{
    char name[64];
    snprintf(name, sizeof name, "instrument.psf.%s", key);
    const yaml_node *list =
        reader_find(reader, psf, "instrument.psf", key, 1, "a list with one value per channel");
    size_t count = 0;
    if (list == NULL || reader_number_list(reader, list, name, range, 1, CONFIG_MAX_CHANNELS,
                                           values, &count) != 0) {
        return;
    }
    if ((int64_t)count != num_channel && num_channel > 0) {
        reader_complain(reader, list, name, "has %zu values, but the instrument has %lld channels",
                        count, (long long)num_channel);
    }
}

/* The point-spread function, if given: elliptical Gaussians per channel. */
static void read_psf(config_reader *reader, const yaml_node *node, config_instrument *instrument)
{
    const yaml_node *psf = reader_find(reader, node, "instrument", "psf", 0, "");
    if (psf == NULL || reader_expect_mapping(reader, psf, "instrument.psf", psf_keys) != 0) {
        return;
    }
    instrument->has_psf = 1;
    reader_required_integer(reader, psf, "instrument.psf", "size", 1, 1001,
                            "pixels along each side of the kernels", &instrument->psf_size);
    read_psf_list(reader, psf, "major", RANGE_POSITIVE, instrument->num_channel,
                  instrument->psf_major);
    read_psf_list(reader, psf, "minor", RANGE_POSITIVE, instrument->num_channel,
                  instrument->psf_minor);
    read_psf_list(reader, psf, "angle", RANGE_ANY, instrument->num_channel, instrument->psf_angle);
    instrument->psf_mode = 0;
    reader_optional_choice(reader, psf, "instrument.psf", "mode", psf_mode_words,
                           &instrument->psf_mode);
}

/* The folder of operators saved by `spart build`, if given. */
static void read_operators(config_reader *reader, const yaml_node *node, const char *config_path,
                           config_instrument *instrument)
{
    const yaml_node *folder = reader_find(reader, node, "instrument", "operators", 0, "");
    if (folder != NULL) {
        read_input_file(reader, folder, "instrument.operators", config_path, instrument->operators,
                        sizeof instrument->operators, &instrument->operators_position);
    }
}

static void read_instrument(config_reader *reader, const yaml_node *root, const char *config_path,
                            config_instrument *instrument)
{
    const yaml_node *node =
        reader_find(reader, root, "", "instrument", 1, "the instrument: angles, grids, detector");
    if (node == NULL || reader_expect_mapping(reader, node, "instrument", instrument_keys) != 0) {
        return;
    }
    read_angles(reader, node, instrument);
    read_lines(reader, node, instrument);
    read_dispersion(reader, node, instrument);
    read_scene_axes(reader, node, instrument);
    read_sensor(reader, node, instrument);
    read_detector(reader, node, instrument);
    read_references(reader, node, instrument);
    read_operators(reader, node, config_path, instrument);
    read_psf(reader, node, instrument);
}

/* ---- scene ------------------------------------------------------------------------------ */

static void read_gaussians(config_reader *reader, const yaml_node *node, config_scene *scene)
{
    /* `gaussians:` with nothing after it takes every default. */
    if (node->kind == YAML_SCALAR && node->text[0] == '\0' && !node->quoted) {
        return;
    }
    const char *name = "scene.gaussians";
    if (reader_expect_mapping(reader, node, name, gaussians_keys) != 0) {
        return;
    }
    reader_optional_number(reader, node, name, "width_velocity", RANGE_POSITIVE,
                           &scene->width_velocity);
    reader_optional_number(reader, node, name, "width_x", RANGE_POSITIVE, &scene->width_x);
    reader_optional_number(reader, node, name, "width_y", RANGE_POSITIVE, &scene->width_y);
    reader_optional_number(reader, node, name, "background", RANGE_NON_NEGATIVE,
                           &scene->background);
    reader_optional_number(reader, node, name, "drift", RANGE_ANY, &scene->drift);
}

static void read_scene(config_reader *reader, const yaml_node *root, const char *config_path,
                       int synthesized, config_scene *scene)
{
    scene->width_velocity = 30.0;
    scene->width_x = 1.0;
    scene->width_y = 1.0;
    scene->background = 0.0;
    const yaml_node *node = reader_find(reader, root, "", "scene", 0, "");
    /* Without a scene section, synthetic observations image the Gaussians;
     * observations read from a file have no truth to compare with. */
    scene->kind = synthesized ? SCENE_GAUSSIANS : SCENE_NONE;
    if (node == NULL || reader_expect_mapping(reader, node, "scene", scene_keys) != 0) {
        return;
    }
    scene->kind = SCENE_GAUSSIANS;
    int which = 0;
    const yaml_node *value = NULL;
    if (read_one_of(reader, node, "scene", "gaussians", "file", &which, &value) != 0) {
        return;
    }
    if (which == 0) {
        read_gaussians(reader, value, scene);
    } else {
        scene->kind = SCENE_FILE;
        read_input_file(reader, value, "scene.file", config_path, scene->file, sizeof scene->file,
                        &scene->file_position);
    }
}

/* ---- observations ---------------------------------------------------------------------- */

static void read_synthesize(config_reader *reader, const yaml_node *node,
                            config_observations *observations)
{
    if (node->kind == YAML_SCALAR && node->text[0] == '\0' && !node->quoted) {
        return; /* `synthesize:` alone: the defaults */
    }
    const char *name = "observations.synthesize";
    if (reader_expect_mapping(reader, node, name, synthesize_keys) != 0) {
        return;
    }
    int64_t seed = (int64_t)observations->seed;
    reader_optional_integer(reader, node, name, "seed", 0, INT64_MAX, &seed);
    observations->seed = (uint64_t)seed;
    reader_optional_boolean(reader, node, name, "noise", &observations->noise);
    reader_optional_integer(reader, node, name, "frames", 1, CONFIG_MAX_FRAMES,
                            &observations->frames);
}

static void read_observations(config_reader *reader, const yaml_node *root, const char *config_path,
                              config_observations *observations)
{
    observations->kind = OBSERVATIONS_SYNTHESIZE;
    observations->seed = 42;
    observations->noise = 1;
    observations->frames = 1;
    const yaml_node *node = reader_find(reader, root, "", "observations", 0, "");
    if (node == NULL ||
        reader_expect_mapping(reader, node, "observations", observations_keys) != 0) {
        return;
    }
    int which = 0;
    const yaml_node *value = NULL;
    if (read_one_of(reader, node, "observations", "synthesize", "file", &which, &value) != 0) {
        return;
    }
    if (which == 0) {
        read_synthesize(reader, value, observations);
    } else {
        observations->kind = OBSERVATIONS_FILE;
        read_input_file(reader, value, "observations.file", config_path, observations->file,
                        sizeof observations->file, &observations->file_position);
    }
}

/* ---- solver and outputs ---------------------------------------------------------------- */

static void read_solver(config_reader *reader, const yaml_node *root, config_solver *solver)
{
    spart_mart_options defaults;
    spart_mart_options_init(&defaults);
    solver->gamma = 0.0; /* 2 / channels */
    solver->stop_rule = SPART_MART_STOP_THRESHOLD;
    solver->threshold = defaults.threshold;
    solver->target = defaults.target;
    solver->max_iterations = defaults.max_iterations;
    solver->device = DEVICE_HOST;
    solver->value_type = SPART_FLOAT64;
    const yaml_node *node = reader_find(reader, root, "", "solver", 0, "");
    const char *name = "solver";
    if (node == NULL || reader_expect_mapping(reader, node, name, solver_keys) != 0) {
        return;
    }
    reader_optional_number(reader, node, name, "gamma", RANGE_POSITIVE, &solver->gamma);
    int choice = 0;
    if (reader_optional_choice(reader, node, name, "stop", stop_words, &choice) == 0) {
        solver->stop_rule = (spart_mart_stop_rule)choice;
    }
    reader_optional_number(reader, node, name, "threshold", RANGE_ANY, &solver->threshold);
    reader_optional_number(reader, node, name, "target", RANGE_NON_NEGATIVE, &solver->target);
    reader_optional_integer(reader, node, name, "max_iterations", 1, 10000000,
                            &solver->max_iterations);
    choice = 0;
    if (reader_optional_choice(reader, node, name, "device", device_words, &choice) == 0) {
        solver->device = (config_device)choice;
    }
    choice = 0;
    if (reader_optional_choice(reader, node, name, "value_type", value_type_words, &choice) == 0) {
        solver->value_type = choice == 0 ? SPART_FLOAT64 : SPART_FLOAT32;
    }
}

static void read_outputs(config_reader *reader, const yaml_node *root, config_outputs *outputs)
{
    snprintf(outputs->folder, sizeof outputs->folder, "%s", "spart-output");
    outputs->pictures = 1;
    const yaml_node *node = reader_find(reader, root, "", "outputs", 0, "");
    if (node == NULL || reader_expect_mapping(reader, node, "outputs", outputs_keys) != 0) {
        return;
    }
    const yaml_node *folder = reader_find(reader, node, "outputs", "folder", 0, "");
    if (folder != NULL) {
        reader_string(reader, folder, "outputs.folder", outputs->folder, sizeof outputs->folder);
    }
    reader_optional_boolean(reader, node, "outputs", "pictures", &outputs->pictures);
    int choice = 0;
    if (reader_optional_choice(reader, node, "outputs", "value_type", value_type_words, &choice) ==
        0) {
        outputs->float32 = choice == 1;
    }
}

/* Loaded operators are matrices only: synthesising observations needs the
 * instrument model, which is then not built. */
static void check_operators_and_observations(config_reader *reader, const yaml_node *root,
                                             const config *cfg)
{
    if (reader->failed || cfg->instrument.operators[0] == '\0' ||
        cfg->observations.kind != OBSERVATIONS_SYNTHESIZE) {
        return;
    }
    yaml_node *key = NULL;
    yaml_mapping_get(yaml_mapping_get(root, "instrument", NULL), "operators", &key);
    reader_complain(reader, key, "instrument.operators",
                    "with operators loaded from a folder the instrument model is not built, so "
                    "observations cannot be synthesised: give observations.file");
}

int config_read(const char *path, config *cfg, char *error, size_t error_size)
{
    memset(cfg, 0, sizeof *cfg);
    if (strlen(path) >= sizeof cfg->path) {
        snprintf(error, error_size, "%.64s...: the config file's name is too long", path);
        return -1;
    }
    memcpy(cfg->path, path, strlen(path) + 1);
    yaml_node *root = NULL;
    if (yaml_tree_read(path, &root, error, error_size) != 0) {
        return -1;
    }
    config_reader reader = {path, error, error_size, 0};
    if (reader_expect_mapping(&reader, root, "", top_keys) == 0) {
        read_instrument(&reader, root, path, &cfg->instrument);
        read_observations(&reader, root, path, &cfg->observations);
        read_scene(&reader, root, path, cfg->observations.kind == OBSERVATIONS_SYNTHESIZE,
                   &cfg->scene);
        read_solver(&reader, root, &cfg->solver);
        read_outputs(&reader, root, &cfg->outputs);
    }
    check_operators_and_observations(&reader, root, cfg);
    yaml_tree_free(root);
    return reader.failed ? -1 : 0;
}
