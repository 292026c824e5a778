/*
 * src/cli/results.c: the FITS cubes and the history of an inversion (see
 * results.h), each written beside its final name and renamed into place.
 */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fits_cube.h"
#include "output_files.h"
#include "pictures.h"

/* Metres per angstrom, for the WCS keyword RESTWAV (which is in metres). */
#define METRES_PER_ANGSTROM 1e-10

size_t results_file_names(const config *cfg, const char **names)
{
    size_t count = 0;
    names[count++] = "solution.fits";
    names[count++] = "predicted.fits";
    if (cfg->observations.kind == OBSERVATIONS_SYNTHESIZE) {
        names[count++] = "observed.fits";
    }
    if (cfg->scene.kind == SCENE_GAUSSIANS) {
        names[count++] = "truth.fits";
    }
    names[count++] = "history.csv";
    if (cfg->outputs.pictures) {
        count += pictures_file_names(names + count);
    }
    return count;
}

/* ---- FITS cubes ------------------------------------------------------------------------- */

/* A cube being written: the cube and its extra keywords' storage. */
typedef struct cube_job {
    cube data;
    const char *keys[CONFIG_MAX_CHANNELS + 1];
    char key_text[CONFIG_MAX_CHANNELS][32];
    double values[CONFIG_MAX_CHANNELS + 1];
    const char *comments[CONFIG_MAX_CHANNELS + 1];
} cube_job;

static int write_cube(const char *temporary, const char *final_path, const void *data, char *error,
                      size_t error_size)
{
    const cube_job *job = data;
    return fits_cube_write(temporary, final_path, &job->data, error, error_size);
}

/* Axis k of a uniform grid of `count` cells between vertices[0] and
 * vertices[count]: the first centre and the step. */
static void uniform_axis(cube_axis *axis, int64_t count, const double *vertices)
{
    double step = (vertices[count] - vertices[0]) / (double)count;
    axis->length = count;
    axis->crval = vertices[0] + step / 2.0;
    axis->cdelt = step;
}

static void scene_job(const results *outputs, const double *values, const char *content,
                      cube_job *job)
{
    const problem *made = outputs->made;
    memset(job, 0, sizeof *job);
    cube *data = &job->data;
    data->axis[0] = (cube_axis){0, "WAVE", "Angstrom", 0, 0, "wavelength (bin centres)"};
    data->axis[1] = (cube_axis){0, "HPLN-TAN", "arcsec", 0, 0, "scene x (cell centres)"};
    data->axis[2] = (cube_axis){0, "HPLT-TAN", "arcsec", 0, 0, "scene y (cell centres)"};
    uniform_axis(&data->axis[0], made->num_wavelength, made->wavelength);
    uniform_axis(&data->axis[1], made->num_scene_x, made->scene_x);
    uniform_axis(&data->axis[2], made->num_scene_y, made->scene_y);
    data->values = values;
    data->kind = "scene";
    data->content = content;
    data->bunit = problem_radiance_unit(outputs->cfg);
    job->keys[0] = "RESTWAV";
    job->values[0] = outputs->cfg->instrument.wavelength_rest * METRES_PER_ANGSTROM;
    job->comments[0] = "[m] rest wavelength of the line (velocities)";
    data->num_extra = 1;
    if (made->num_line > 1) {
        /* The lines' bins one after another are no WCS axis: the bin index,
         * and per line its first bin and rest wavelength (LINEBk, LINEWk). */
        data->axis[0] = (cube_axis){made->num_wavelength,           "SPECBIN", "", 0.0, 1.0,
                                    "spectral bin, line after line"};
        job->comments[0] = "[m] rest wavelength of the first line";
        for (int64_t k = 0; k < made->num_line; k++) {
            int n = 1 + 2 * (int)k;
            snprintf(job->key_text[n - 1], sizeof job->key_text[0], "LINEB%lld", (long long)k);
            snprintf(job->key_text[n], sizeof job->key_text[0], "LINEW%lld", (long long)k);
            job->keys[n] = job->key_text[n - 1];
            job->values[n] = (double)made->line_bin[k];
            job->comments[n] = "first spectral bin of this line";
            job->keys[n + 1] = job->key_text[n];
            job->values[n + 1] =
                outputs->cfg->instrument.line[k].wavelength_rest * METRES_PER_ANGSTROM;
            job->comments[n + 1] = "[m] rest wavelength of this line";
        }
        data->num_extra = 1 + 2 * (size_t)made->num_line;
    }
    data->extra_keys = job->keys;
    data->extra_values = job->values;
    data->extra_comments = job->comments;
    data->float32 = outputs->cfg->outputs.float32;
    data->threads = outputs->threads;
}

static void images_job(const results *outputs, const double *values, const char *content,
                       cube_job *job)
{
    const problem *made = outputs->made;
    memset(job, 0, sizeof *job);
    cube *data = &job->data;
    data->axis[0] = (cube_axis){
        made->num_channel, "CHANNEL", "", 0.0, 1.0, "channel (dispersion angles in ANGLEk)"};
    data->axis[1] = (cube_axis){
        made->num_sensor_x, "SENSOR_X", "pixel", 0.5, 1.0, "sensor x (dispersion), pixel centres"};
    data->axis[2] =
        (cube_axis){made->num_sensor_y, "SENSOR_Y", "pixel", 0.5, 1.0, "sensor y, pixel centres"};
    data->values = values;
    data->kind = "images";
    data->content = content;
    data->bunit = "electron";
    for (int64_t c = 0; c < made->num_channel; c++) {
        snprintf(job->key_text[c], sizeof job->key_text[c], "ANGLE%lld", (long long)c);
        job->keys[c] = job->key_text[c];
        job->values[c] = outputs->cfg->instrument.angle[c];
        job->comments[c] = "[deg] dispersion angle of this channel";
    }
    data->num_extra = (size_t)made->num_channel;
    data->extra_keys = job->keys;
    data->extra_values = job->values;
    data->extra_comments = job->comments;
    data->float32 = outputs->cfg->outputs.float32;
    data->threads = outputs->threads;
}

/* ---- history ---------------------------------------------------------------------------- */

/* The history as CSV text into `file`. */
static void print_history(FILE *file, const results *outputs)
{
    const spart_mart_result *result = outputs->result;
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    const double *r = spart_mart_result_correlation(result);
    fprintf(file, "iteration,merit");
    for (int64_t c = 0; c < channels; c++) {
        fprintf(file, ",chi2_%lld", (long long)c);
    }
    for (int64_t c = 0; c < channels; c++) {
        fprintf(file, ",r_%lld", (long long)c);
    }
    fprintf(file, ",elapsed_s\n");
    for (int64_t i = 0; i < iterations; i++) {
        fprintf(file, "%lld,%.17g", (long long)i, outputs->merit != NULL ? outputs->merit[i] : NAN);
        for (int64_t c = 0; c < channels; c++) {
            fprintf(file, ",%.17g", chi2[i * channels + c]);
        }
        for (int64_t c = 0; c < channels; c++) {
            fprintf(file, ",%.17g", r[i * channels + c]);
        }
        fprintf(file, ",%.6f\n", outputs->elapsed != NULL ? outputs->elapsed[i] : NAN);
    }
}

/* The text is made in memory and written with checked writes. */
static int write_history(const char *temporary, const char *final_path, const void *data,
                         char *error, size_t error_size)
{
    char *text = NULL;
    size_t length = 0;
    FILE *memory = open_memstream(&text, &length);
    if (memory == NULL) {
        snprintf(error, error_size, "cannot write %s: out of memory", final_path);
        return -1;
    }
    print_history(memory, data);
    int failed = ferror(memory);
    if (fclose(memory) != 0 || failed) {
        snprintf(error, error_size, "cannot write %s: out of memory", final_path);
        free(text);
        return -1;
    }
    int result = output_write_bytes(temporary, final_path, text, length, error, error_size);
    free(text);
    return result;
}

/* ---- all of them ------------------------------------------------------------------------ */

int results_write(const results *outputs, const char *folder, int overwrite, int *interrupted,
                  char *error, size_t error_size)
{
    cube_job job;
    *interrupted = 0;
    const double *solution = spart_mart_result_solution(outputs->result);
    struct {
        const char *name;
        const double *values;
        int is_scene;
        const char *content;
    } cubes[] = {
        {"solution.fits", solution, 1, "MART solution"},
        {"predicted.fits", outputs->predicted, 0, "images predicted by the MART solution"},
        {"observed.fits", outputs->write_observed ? outputs->observed : NULL, 0,
         "observed images (synthesised)"},
        {"truth.fits", outputs->write_truth ? outputs->truth : NULL, 1, "true scene (synthetic)"},
    };
    for (size_t k = 0; k < sizeof cubes / sizeof cubes[0]; k++) {
        if (cubes[k].values == NULL) {
            continue;
        }
        if (cli_interrupted_before(cubes[k].name)) {
            *interrupted = 1;
            return -1;
        }
        if (cubes[k].is_scene) {
            scene_job(outputs, cubes[k].values, cubes[k].content, &job);
        } else {
            images_job(outputs, cubes[k].values, cubes[k].content, &job);
        }
        int result =
            output_write(folder, cubes[k].name, overwrite, write_cube, &job, error, error_size);
        if (result != 0) {
            return result;
        }
    }
    if (cli_interrupted_before("history.csv")) {
        *interrupted = 1;
        return -1;
    }
    return output_write(folder, "history.csv", overwrite, write_history, outputs, error,
                        error_size);
}

int results_write_operators(const spart_regridder *forward, const spart_regridder *backward,
                            const char *folder, int overwrite, spart_context *context, char *error,
                            size_t error_size)
{
    const char *names[2] = {"forward.fits", "backward.fits"};
    const spart_regridder *operators[2] = {forward, backward};
    if (output_folder_make(folder, error, error_size) != 0) {
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        char path[OUTPUT_PATH_LENGTH];
        if (output_path(path, sizeof path, folder, names[k]) != 0) {
            snprintf(error, error_size, "the output folder's name is too long");
            return -1;
        }
        if (spart_regridder_save(context, operators[k], path, overwrite) != SPART_OK) {
            snprintf(error, error_size, "%s", spart_context_error(context));
            return -1;
        }
        /* Read it back: CFITSIO can miss a write that fails when its last
         * buffer is flushed (a full disk), and a short file must not stay. */
        spart_regridder *loaded = NULL;
        spart_status status = spart_regridder_load(context, path, &loaded);
        int same = status == SPART_OK &&
                   spart_regridder_num_entries(loaded) == spart_regridder_num_entries(operators[k]);
        spart_regridder_free(loaded);
        if (!same) {
            snprintf(error, error_size, "%s was not saved whole (%s); removed", path,
                     status != SPART_OK ? spart_context_error(context) : "entries differ");
            remove(path);
            return -1;
        }
    }
    return 0;
}
