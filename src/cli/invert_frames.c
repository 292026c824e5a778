/*
 * src/cli/invert_frames.c: `spart invert` over a sequence of frames
 * (invert_frames.h): every frame's observations solved together with
 * spart_mart_solve_frames (each frame's result the one a run of that frame
 * alone gives, bit for bit), then each frame's outputs written into its
 * own folder, and one table of every frame's outcome.
 */
#include "invert_frames.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fits_cube.h"
#include "output_files.h"
#include "pictures.h"
#include "ranks.h"
#include "results.h"
#include "scene.h"

/* "frame-0007": the folder of a frame inside the output folder. */
static void frame_folder(char *folder, size_t size, const config *cfg, int64_t frame)
{
    snprintf(folder, size, "%s/frame-%04lld", cfg->outputs.folder, (long long)frame);
}

int invert_frames_prepare_outputs(const config *cfg, int64_t frames, int overwrite, char *error,
                                  size_t error_size)
{
    const char *names[RESULTS_MAX_FILES];
    size_t count = results_file_names(cfg, names);
    const char *table[] = {INVERT_FRAMES_TABLE};
    int result = output_folder_prepare(cfg->outputs.folder, table, 1, overwrite, error, error_size);
    for (int64_t f = 0; f < frames && result == 0; f++) {
        char folder[OUTPUT_PATH_LENGTH];
        frame_folder(folder, sizeof folder, cfg, f);
        result = output_folder_prepare(folder, names, count, overwrite, error, error_size);
    }
    return result;
}

/* Everything a run of frames holds, freed together. */
typedef struct frames_run {
    const invert_frames_inputs *in;
    int64_t frames;
    double *images; /* frames x C x image_size */
    double *truths; /* frames x scene_size, or NULL */
    double *predicted;
    double *merit; /* one frame's merit per iteration */
    device_operators *device;
    spart_mart_operators operators;
    const char *where;
    spart_mart_result **results;
    char error[CONFIG_ERROR_LENGTH + 512];
} frames_run;

static void frames_run_free(frames_run *run)
{
    for (int64_t f = 0; run->results != NULL && f < run->frames; f++) {
        spart_mart_result_free(run->results[f]);
    }
    free(run->results);
    device_operators_free(run->device);
    free(run->images);
    free(run->truths);
    free(run->predicted);
    free(run->merit);
}

static int make_frames(const cli_options *options, frames_run *run)
{
    const invert_frames_inputs *in = run->in;
    progress_step_begin(in->report, in->cfg->observations.kind == OBSERVATIONS_SYNTHESIZE
                                        ? "synthesising the frames"
                                        : "reading the frames");
    int result = observations_make_frames(in->context, in->cfg, in->made, in->files, &run->images,
                                          &run->truths, run->error, sizeof run->error);
    if (result != 0) {
        if (in->report->enabled) {
            printf(" failed\n");
        }
        cli_error(options, "%s", run->error);
        return result > 0 ? EXIT_BAD_CONFIG : EXIT_FAILED;
    }
    progress_step_end(in->report);
    return EXIT_DONE;
}

static int solve_frames(const cli_options *options, frames_run *run)
{
    const invert_frames_inputs *in = run->in;
    const config *cfg = in->cfg;
    if (cli_ranks_size() > 1 && spart_instrument_psf(in->made->instrument) != NULL) {
        cli_error(options,
                  "MART over %d MPI ranks does not take a PSF operator yet; run it with one rank",
                  cli_ranks_size());
        return EXIT_FAILED;
    }
    spart_mart_regridder_pair pair = {problem_forward(in->made), problem_backward(in->made),
                                      in->made->num_channel, cfg->instrument.quantum_yield,
                                      cfg->instrument.read_noise};
    if (device_operators_make(in->context, &pair, in->made->instrument, options->device,
                              in->device_setting, &run->operators, &run->device, &run->where,
                              run->error, sizeof run->error) != 0) {
        cli_error(options, "%s", run->error);
        return EXIT_FAILED;
    }
    int64_t frame_values = run->operators.num_channel * run->operators.image_size;
    const double *observed = device_operators_observed(
        run->device, run->images, run->frames * frame_values, run->error, sizeof run->error);
    if (observed == NULL) {
        cli_error(options, "%s", run->error);
        return EXIT_FAILED;
    }
    spart_mart_options mart;
    spart_mart_options_init(&mart);
    mart.gamma = cfg->solver.gamma;
    mart.stop_rule = cfg->solver.stop_rule;
    mart.threshold = cfg->solver.threshold;
    mart.target = cfg->solver.target;
    mart.max_iterations = cfg->solver.max_iterations;
    run->results = calloc((size_t)run->frames, sizeof *run->results);
    if (run->results == NULL) {
        cli_error(options, "out of memory for the results of %lld frames", (long long)run->frames);
        return EXIT_FAILED;
    }
    progress_step_begin(in->report, "running MART on every frame");
    if (in->report->enabled) {
        printf(" (%lld frames on the %s)", (long long)run->frames, run->where);
        fflush(stdout);
    }
    /* one rank: spart_mart_solve_frames; several: the operators split over them */
    if (cli_ranks_solve_frames(in->context, &pair, &run->operators, run->frames, observed, &mart,
                               run->results) != SPART_OK) {
        if (in->report->enabled) {
            printf(" failed\n");
        }
        cli_error(options, "MART: %s", spart_context_error(in->context));
        return EXIT_FAILED;
    }
    progress_step_end(in->report);
    if (cli_interrupted()) {
        cli_error(options, "interrupted after MART; no outputs were written");
        return EXIT_INTERRUPTED;
    }
    return EXIT_DONE;
}

/* The merit of each iteration of a result (the mean over channels, summed
 * in channel order, as the solver takes it) into run->merit. */
static void frame_merits(frames_run *run, const spart_mart_result *result)
{
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    for (int64_t i = 0; i < iterations; i++) {
        double sum = 0.0;
        for (int64_t c = 0; c < channels; c++) {
            sum += chi2[i * channels + c];
        }
        run->merit[i] = sum / (double)channels;
    }
}

/* Frame f's outputs into its folder: its prediction, then the files of a
 * one-frame run (their elapsed times unknown: the frames ran together). */
static int write_frame(const cli_options *options, frames_run *run, int64_t f)
{
    const invert_frames_inputs *in = run->in;
    const problem *made = in->made;
    int64_t frame_values = made->num_channel * made->image_size;
    const spart_mart_result *result = run->results[f];
    if (device_operators_predict(run->device, &run->operators, spart_mart_result_solution(result),
                                 run->operators.scene_size, run->predicted, frame_values,
                                 run->error, sizeof run->error) != 0) {
        cli_error(options, "predicting the images of frame %lld: %s", (long long)f, run->error);
        return EXIT_FAILED;
    }
    frame_merits(run, result);
    results outputs = {in->cfg,
                       made,
                       run->truths != NULL ? run->truths + f * made->scene_size : NULL,
                       run->images + f * frame_values,
                       run->predicted,
                       result,
                       run->merit,
                       NULL,
                       in->cfg->observations.kind == OBSERVATIONS_SYNTHESIZE,
                       in->cfg->scene.kind == SCENE_GAUSSIANS};
    char folder[OUTPUT_PATH_LENGTH];
    frame_folder(folder, sizeof folder, in->cfg, f);
    int interrupted = 0;
    int written = results_write(&outputs, folder, options->overwrite, &interrupted, run->error,
                                sizeof run->error);
    if (written == 0 && in->cfg->outputs.pictures) {
        written = pictures_write(&outputs, folder, options->overwrite, &interrupted, run->error,
                                 sizeof run->error);
    }
    if (written != 0) {
        if (interrupted) {
            cli_error(options,
                      "interrupted while writing frame %lld; the files already written "
                      "are complete, the others were not written",
                      (long long)f);
            return EXIT_INTERRUPTED;
        }
        cli_error(options, "%s (files already written are complete; no partial file is left)",
                  run->error);
        return written > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
    }
    return EXIT_DONE;
}

/* frames.csv: a row a frame (its folder, iterations, success, merit at
 * the start and at the last iteration, the solver's message). */
typedef struct frames_table {
    const frames_run *run;
} frames_table;

static int write_table(const char *temporary_path, const char *final_path, const void *data,
                       char *error, size_t error_size)
{
    const frames_run *run = ((const frames_table *)data)->run;
    size_t size = 0;
    char *text = NULL;
    FILE *file = open_memstream(&text, &size);
    if (file == NULL) {
        snprintf(error, error_size, "%s: out of memory", final_path);
        return -1;
    }
    fprintf(file, "frame,folder,iterations,success,merit_first,merit_last,correlation_truth,"
                  "message\n");
    const problem *made = run->in->made;
    for (int64_t f = 0; f < run->frames; f++) {
        const spart_mart_result *result = run->results[f];
        int64_t iterations = spart_mart_result_num_iterations(result);
        int64_t channels = spart_mart_result_num_channel(result);
        const double *chi2 = spart_mart_result_mean_chi_squared(result);
        double first = 0.0, last = 0.0;
        for (int64_t c = 0; c < channels; c++) {
            first += chi2[c];
            last += chi2[(iterations - 1) * channels + c];
        }
        double correlation =
            run->truths != NULL
                ? scene_correlation(run->truths + f * made->scene_size,
                                    spart_mart_result_solution(result), made->scene_size)
                : NAN;
        fprintf(file, "%lld,frame-%04lld,%lld,%d,%.17g,%.17g,%.6f,\"%s\"\n", (long long)f,
                (long long)f, (long long)iterations, spart_mart_result_success(result),
                first / (double)channels, last / (double)channels, correlation,
                spart_mart_result_message(result));
    }
    fclose(file);
    int result = output_write_bytes(temporary_path, final_path, text, size, error, error_size);
    free(text);
    return result;
}

static int write_frames(const cli_options *options, frames_run *run)
{
    const invert_frames_inputs *in = run->in;
    int64_t frame_values = in->made->num_channel * in->made->image_size;
    run->predicted = malloc((size_t)frame_values * sizeof *run->predicted);
    int64_t most = 1;
    for (int64_t f = 0; f < run->frames; f++) {
        int64_t n = spart_mart_result_num_iterations(run->results[f]);
        most = n > most ? n : most;
    }
    run->merit = malloc((size_t)most * sizeof *run->merit);
    if (run->predicted == NULL || run->merit == NULL) {
        cli_error(options, "writing the frames: out of memory");
        return EXIT_FAILED;
    }
    progress_step_begin(in->report, "writing the outputs of every frame");
    int code = EXIT_DONE;
    for (int64_t f = 0; f < run->frames && code == EXIT_DONE; f++) {
        code = cli_interrupted() ? EXIT_INTERRUPTED : write_frame(options, run, f);
    }
    if (code == EXIT_DONE) {
        frames_table table = {run};
        int written = output_write(in->cfg->outputs.folder, INVERT_FRAMES_TABLE, options->overwrite,
                                   write_table, &table, run->error, sizeof run->error);
        if (written != 0) {
            cli_error(options, "%s", run->error);
            code = written > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
        }
    } else if (code == EXIT_INTERRUPTED && cli_interrupted()) {
        cli_error(options, "interrupted while writing the frames; the folders written are "
                           "complete");
    }
    if (code == EXIT_DONE) {
        progress_step_end(in->report);
    } else if (in->report->enabled) {
        printf(" failed\n");
    }
    return code;
}

/* One line for the run and one a frame; EXIT_NOT_CONVERGED when a frame
 * did not meet its rule. */
static int summarise(const cli_options *options, const frames_run *run, double seconds)
{
    int64_t failed = 0;
    for (int64_t f = 0; f < run->frames; f++) {
        failed += !spart_mart_result_success(run->results[f]);
    }
    if (!options->quiet) {
        printf("spart invert %s\n", run->in->cfg->path);
        printf("  %lld frames solved together on the %s; %lld met the stopping rule\n",
               (long long)run->frames, run->where, (long long)(run->frames - failed));
        for (int64_t f = 0; f < run->frames; f++) {
            printf("  frame %lld: %lld iterations; %s\n", (long long)f,
                   (long long)spart_mart_result_num_iterations(run->results[f]),
                   spart_mart_result_message(run->results[f]));
        }
        printf("  outputs in %s/frame-*/ and %s/%s (%.2f s in all)\n", run->in->cfg->outputs.folder,
               run->in->cfg->outputs.folder, INVERT_FRAMES_TABLE, seconds);
    }
    if (failed > 0) {
        cli_error(options,
                  "MART did not meet its stopping rule on %lld of %lld frames "
                  "(outputs written; %s says which)",
                  (long long)failed, (long long)run->frames, INVERT_FRAMES_TABLE);
        return EXIT_NOT_CONVERGED;
    }
    return EXIT_DONE;
}

int invert_frames(const cli_options *options, const invert_frames_inputs *in, int code)
{
    frames_run run;
    memset(&run, 0, sizeof run);
    run.in = in;
    run.frames = in->files->total_frames;
    if (code == EXIT_DONE) {
        code = make_frames(options, &run);
    }
    code = cli_ranks_agree(code); /* every rank solves, or none */
    if (code == EXIT_DONE) {
        code = solve_frames(options, &run);
    }
    if (code == EXIT_DONE && cli_ranks_rank() == 0) { /* rank 0 writes the outputs */
        code = write_frames(options, &run);
    }
    if (code == EXIT_DONE) {
        code = summarise(options, &run, progress_now() - in->start);
    }
    frames_run_free(&run);
    return code;
}
