/*
 * src/cli/invert.c: `spart invert [CONFIG.yaml]`: read the config, build
 * the instrument and its operators, make or read the observations, run
 * MART, and write the results (FITS, CSV, PNG) into the output folder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_run.h"
#include "device.h"
#include "observations.h"
#include "fits_cube.h"
#include "invert_frames.h"
#include "output_files.h"
#include "pictures.h"
#include "problem.h"
#include "ranks.h"
#include "results.h"
#include "scene.h"

/* Everything one inversion holds, freed together. */
typedef struct inversion {
    config cfg;
    spart_context *context;
    problem made;
    progress report;
    double *truth;
    double *observed;
    double *predicted;
    device_operators *device;
    spart_mart_operators operators;
    const char *where;
    spart_mart_result *result;
    char error[CONFIG_ERROR_LENGTH + 512];
    char device_setting[CONFIG_PATH_LENGTH + 64]; /* what asked for cuda, for sentences */
    observation_files files; /* the frames: more than one goes to invert_frames.c */
    double start;
} inversion;

static void inversion_free(inversion *run)
{
    spart_mart_result_free(run->result);
    observations_files_free(&run->files);
    device_operators_free(run->device);
    free(run->truth);
    free(run->observed);
    free(run->predicted);
    problem_free(&run->made);
    progress_free(&run->report);
    spart_context_free(run->context);
}

/* Refuse existing outputs before any long work (a sequence of frames: the
 * folder of every frame). */
static int prepare_outputs(const cli_options *options, inversion *run)
{
    const char *names[RESULTS_MAX_FILES];
    size_t count = results_file_names(&run->cfg, names);
    int result =
        run->files.total_frames > 1
            ? invert_frames_prepare_outputs(&run->cfg, run->files.total_frames, options->overwrite,
                                            run->error, sizeof run->error)
            : output_folder_prepare(run->cfg.outputs.folder, names, count, options->overwrite,
                                    run->error, sizeof run->error);
    if (result != 0) {
        cli_error(options, "%s", run->error);
        return result > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
    }
    return EXIT_DONE;
}

/* The input files' shapes against the grids, before the operators take
 * their seconds: a wrong scene file is said at once. */
static int check_input_files(const config *cfg, const problem *made, char *error, size_t error_size)
{
    char sentence[CONFIG_ERROR_LENGTH];
    int result = 0;
    if (cfg->scene.kind == SCENE_FILE) {
        int64_t dims[3] = {made->num_wavelength, made->num_scene_x, made->num_scene_y};
        result = fits_cube_check(cfg->scene.file, dims, "wavelength x scene_x x scene_y", sentence,
                                 sizeof sentence);
        if (result != 0) {
            config_error_at(cfg, cfg->scene.file_position, "scene.file", error, error_size, "%s",
                            sentence);
            return result;
        }
    }
    return result;
}

/* The grids, the input files and frames checked, the outputs refused if
 * they exist (rank 0 writes them), then the operators, built or loaded. */
static int make_problem(const cli_options *options, inversion *run)
{
    int result =
        problem_make_grids(run->context, &run->cfg, &run->made, run->error, sizeof run->error);
    if (result == 0) {
        result = check_input_files(&run->cfg, &run->made, run->error, sizeof run->error);
    }
    if (result == 0) {
        result =
            observations_find(&run->cfg, &run->made, &run->files, run->error, sizeof run->error);
    }
    if (result == 0 && cli_ranks_rank() == 0) {
        int code = prepare_outputs(options, run);
        if (code != EXIT_DONE) {
            return code;
        }
    }
    if (result == 0) {
        result = problem_make_operators(run->context, &run->cfg, &run->made, &run->report,
                                        run->error, sizeof run->error);
    }
    if (result != 0) {
        cli_error(options, "%s", run->error);
        return result > 0 ? EXIT_BAD_CONFIG : EXIT_FAILED;
    }
    return EXIT_DONE;
}

/* The truth (when there is one) and the observations. */
static int make_data(const cli_options *options, inversion *run)
{
    int result = 0;
    if (run->cfg.scene.kind != SCENE_NONE) {
        result = scene_make(run->context, &run->cfg, &run->made, &run->truth, run->error,
                            sizeof run->error);
    }
    if (result == 0) {
        progress_step_begin(&run->report, run->cfg.observations.kind == OBSERVATIONS_SYNTHESIZE
                                              ? "synthesising the observations"
                                              : "reading the observations");
        double *no_truths = NULL; /* read frames have none */
        result = run->cfg.observations.kind == OBSERVATIONS_SYNTHESIZE
                     ? observations_make(run->context, &run->cfg, &run->made, run->truth,
                                         &run->observed, run->error, sizeof run->error)
                     : observations_make_frames(run->context, &run->cfg, &run->made, &run->files,
                                                &run->observed, &no_truths, run->error,
                                                sizeof run->error);
        if (result == 0) {
            progress_step_end(&run->report);
        } else if (run->report.enabled) {
            printf(" failed\n");
        }
    }
    if (result != 0) {
        cli_error(options, "%s", run->error);
        return result > 0 ? EXIT_BAD_CONFIG : EXIT_FAILED;
    }
    return EXIT_DONE;
}

/* A channel whose observed images are all zero drives MART's scene to zero
 * (every update multiplies by a power of 0 / prediction), as in ctis: say
 * so before solving. */
static void warn_of_empty_channels(const cli_options *options, const inversion *run)
{
    int64_t pixels = run->made.image_size;
    for (int64_t c = 0; c < run->made.num_channel; c++) {
        const double *image = run->observed + c * pixels;
        int64_t k = 0;
        while (k < pixels && image[k] == 0.0) {
            k++;
        }
        if (k == pixels) {
            fprintf(stderr,
                    "%s: warning: the observed images of channel %lld are all zero: MART will "
                    "drive the scene to zero (as ctis does)\n",
                    options->program, (long long)c);
        }
    }
}

static int solve(const cli_options *options, inversion *run)
{
    spart_mart_regridder_pair pair = {problem_forward(&run->made), problem_backward(&run->made),
                                      run->made.num_channel, run->cfg.instrument.quantum_yield,
                                      run->cfg.instrument.read_noise};
    if (device_operators_make(run->context, &pair, run->made.instrument, options->device,
                              run->device_setting, &run->operators, &run->device, &run->where,
                              run->error, sizeof run->error) != 0) {
        cli_error(options, "%s", run->error);
        return EXIT_FAILED;
    }
    spart_mart_options mart;
    spart_mart_options_init(&mart);
    mart.gamma = run->cfg.solver.gamma;
    mart.stop_rule = run->cfg.solver.stop_rule;
    mart.threshold = run->cfg.solver.threshold;
    mart.target = run->cfg.solver.target;
    mart.max_iterations = run->cfg.solver.max_iterations;
    mart.callback = progress_mart_callback;
    mart.callback_user = &run->report;
    warn_of_empty_channels(options, run);
    if (run->report.enabled) {
        printf("running MART on the %s\n", run->where);
    }
    const double *observed = device_operators_observed(
        run->device, run->observed, run->operators.num_channel * run->operators.image_size,
        run->error, sizeof run->error);
    if (observed == NULL) {
        cli_error(options, "%s", run->error);
        return EXIT_FAILED;
    }
    if (cli_ranks_size() > 1 && spart_instrument_psf(run->made.instrument) != NULL) {
        cli_error(options,
                  "MART over %d MPI ranks does not take a PSF operator yet; run it with one rank",
                  cli_ranks_size());
        return EXIT_FAILED;
    }
    /* one rank: spart_mart_solve; several: the operators split over them */
    if (cli_ranks_solve(run->context, &pair, &run->operators, observed, &mart, &run->result) !=
        SPART_OK) {
        cli_error(options, "MART: %s", spart_context_error(run->context));
        return EXIT_FAILED;
    }
    if (cli_interrupted()) {
        cli_error(options, "interrupted after %lld iterations; no outputs were written",
                  (long long)spart_mart_result_num_iterations(run->result));
        return EXIT_INTERRUPTED;
    }
    return EXIT_DONE;
}

/* The images the solution predicts, for predicted.fits and the pictures:
 * the forward operator of the solve, wherever it runs. */
static int predict(const cli_options *options, inversion *run)
{
    int64_t count = run->made.num_channel * run->made.image_size;
    run->predicted = malloc((size_t)count * sizeof *run->predicted);
    if (run->predicted == NULL) {
        cli_error(options, "predicting the images of the solution: out of memory");
        return EXIT_FAILED;
    }
    if (device_operators_predict(run->device, &run->operators,
                                 spart_mart_result_solution(run->result), run->operators.scene_size,
                                 run->predicted, count, run->error, sizeof run->error) != 0) {
        cli_error(options, "predicting the images of the solution: %s", run->error);
        return EXIT_FAILED;
    }
    return EXIT_DONE;
}

static int write_outputs(const cli_options *options, inversion *run)
{
    int64_t iterations = spart_mart_result_num_iterations(run->result);
    int complete = !run->report.out_of_memory && run->report.num_iterations >= iterations;
    results outputs = {&run->cfg,
                       &run->made,
                       run->truth,
                       run->observed,
                       run->predicted,
                       run->result,
                       complete ? run->report.merit : NULL,
                       complete ? run->report.elapsed : NULL,
                       run->cfg.observations.kind == OBSERVATIONS_SYNTHESIZE,
                       run->cfg.scene.kind == SCENE_GAUSSIANS,
                       spart_context_threads(run->context)};
    progress_step_begin(&run->report, "writing the outputs");
    int interrupted = 0;
    int result = results_write(&outputs, run->cfg.outputs.folder, options->overwrite, &interrupted,
                               run->error, sizeof run->error);
    if (result == 0 && run->cfg.outputs.pictures) {
        result = pictures_write(&outputs, run->cfg.outputs.folder, options->overwrite, &interrupted,
                                run->error, sizeof run->error);
    }
    if (result != 0) {
        if (run->report.enabled) {
            printf(" failed\n");
        }
        if (interrupted) {
            cli_error(options,
                      "interrupted while writing; the files already in %s are complete, "
                      "the others were not written",
                      run->cfg.outputs.folder);
            return EXIT_INTERRUPTED;
        }
        cli_error(options, "%s (files already written are complete; no partial file is left)",
                  run->error);
        return result > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
    }
    progress_step_end(&run->report);
    return EXIT_DONE;
}

/* The last check: a signal that came during the last output or the summary
 * still ends the run with 130 (the docs' promise), the files all written. */
static int interrupted_at_exit(const cli_options *options, const inversion *run, int code)
{
    if (code != EXIT_DONE && code != EXIT_NOT_CONVERGED) {
        return code;
    }
    if (cli_interrupted_before("exit")) {
        cli_error(options, "interrupted at the end; the outputs in %s are complete",
                  run->cfg.outputs.folder);
        return EXIT_INTERRUPTED;
    }
    return code;
}

/* How the run ended, in plain words, and the merit of the state written
 * (chi2[last] is the merit of the state at the start of the last
 * iteration: the solution when the rule stopped the run; after
 * max_iterations the solution is the state after the last update, whose
 * merit was not measured). */
static void describe_outcome(const inversion *run, double last, char *text, size_t size)
{
    const config_solver *solver = &run->cfg.solver;
    if (!spart_mart_result_success(run->result)) {
        snprintf(text, size,
                 "%.4g before the last update; stopped after max_iterations without meeting "
                 "the stopping rule (the solution written is the state after that update)",
                 last);
    } else if (solver->stop_rule == SPART_MART_STOP_THRESHOLD) {
        snprintf(text, size,
                 "%.4g for the solution written; stopped because the merit fell by less than "
                 "%g in the last iteration",
                 last, solver->threshold);
    } else if (solver->stop_rule == SPART_MART_STOP_TARGET) {
        snprintf(text, size,
                 "%.4g for the solution written; stopped because the merit reached the "
                 "target %g",
                 last, solver->target);
    } else {
        snprintf(text, size, "%.4g before the last update; ran the %lld iterations asked for", last,
                 (long long)solver->max_iterations);
    }
}

static void print_summary(const cli_options *options, const inversion *run, double seconds)
{
    if (options->quiet) {
        return;
    }
    const spart_mart_result *result = run->result;
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    double first = 0.0;
    double last = 0.0;
    for (int64_t c = 0; c < channels; c++) {
        first += chi2[c] / (double)channels;
        last += chi2[(iterations - 1) * channels + c] / (double)channels;
    }
    const problem *made = &run->made;
    printf("spart invert %s\n", run->cfg.path);
    printf("  problem: %lld channels, %lld wavelength bins, %lld x %lld scene, %lld x %lld "
           "sensor; operators of %lld and %lld entries\n",
           (long long)made->num_channel, (long long)made->num_wavelength,
           (long long)made->num_scene_x, (long long)made->num_scene_y,
           (long long)made->num_sensor_x, (long long)made->num_sensor_y,
           (long long)spart_regridder_num_entries(problem_forward(made)),
           (long long)spart_regridder_num_entries(problem_backward(made)));
    char outcome[256];
    describe_outcome(run, last, outcome, sizeof outcome);
    printf("  MART on the %s: %lld iterations, gamma %g; merit (mean chi^2) %.4g at the start, "
           "%s\n",
           run->where, (long long)iterations, spart_mart_result_gamma(result), first, outcome);
    if (run->truth != NULL) {
        printf("  correlation of the solution with the true scene: %.4f\n",
               scene_correlation(run->truth, spart_mart_result_solution(result), made->scene_size));
    }
    printf("  outputs in %s/ (%.2f s in all)\n", run->cfg.outputs.folder, seconds);
}

/* Apply the command line over the config. */
static void apply_options(const cli_options *options, config *cfg)
{
    if (options->output != NULL) {
        snprintf(cfg->outputs.folder, sizeof cfg->outputs.folder, "%s", options->output);
    }
}

static int invert(const cli_options *options)
{
    double start = progress_now();
    inversion *run = calloc(1, sizeof *run);
    if (run == NULL) {
        cli_error(options, "out of memory");
        return EXIT_FAILED;
    }
    run->start = start;
    int code = cli_load_config(options, &run->cfg);
    cli_options effective = *options;
    if (code == EXIT_DONE) {
        apply_options(options, &run->cfg);
        effective.device = cli_effective_device(options, &run->cfg);
        if (options->device != CLI_DEVICE_UNSET) {
            snprintf(run->device_setting, sizeof run->device_setting, "--device cuda");
        } else {
            snprintf(run->device_setting, sizeof run->device_setting, "%s: solver.device: cuda",
                     run->cfg.path);
        }
        progress_init(&run->report, options->quiet);
        code = cli_make_context(&effective, &run->context);
    }
    if (code == EXIT_DONE) {
        cli_ranks_choose_device(run->context); /* several ranks: a GPU each where there are */
    }
    if (code == EXIT_DONE) {
        code = make_problem(&effective, run);
    }
    if (run->files.total_frames > 1) { /* a sequence of frames (every rank knows it) */
        invert_frames_inputs frames = {&run->cfg,           run->context, &run->made, &run->report,
                                       run->device_setting, &run->files,  start};
        code = interrupted_at_exit(&effective, run, invert_frames(&effective, &frames, code));
        inversion_free(run);
        free(run);
        return code;
    }
    if (code == EXIT_DONE) {
        code = make_data(&effective, run);
    }
    code = cli_ranks_agree(code); /* every rank solves, or none */
    if (code == EXIT_DONE) {
        code = solve(&effective, run);
    }
    if (code == EXIT_DONE) {
        code = predict(&effective, run);
    }
    if (code == EXIT_DONE && cli_ranks_rank() == 0) {
        code = write_outputs(&effective, run);
    }
    if (code == EXIT_DONE) {
        print_summary(&effective, run, progress_now() - start);
        if (!spart_mart_result_success(run->result)) {
            cli_error(&effective, "MART did not meet its stopping rule: %s (outputs written)",
                      spart_mart_result_message(run->result));
            code = EXIT_NOT_CONVERGED;
        }
    }
    code = interrupted_at_exit(&effective, run, code);
    inversion_free(run);
    free(run);
    return code;
}

int cli_invert(const cli_options *options)
{
    char error[256];
    if (cli_ranks_begin(error, sizeof error) != 0) {
        cli_error(options, "%s", error);
        return EXIT_FAILED;
    }
    cli_options on_this_rank = *options;
    on_this_rank.quiet |= cli_ranks_rank() != 0; /* rank 0 speaks for all */
    int code = invert(&on_this_rank);
    cli_ranks_end();
    return code;
}
