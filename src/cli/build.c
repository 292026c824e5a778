/*
 * src/cli/build.c: `spart build CONFIG.yaml`: build the instrument of a
 * config and save its two operators (spart regridder files) for runs that
 * reuse them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cli_run.h"
#include "output_files.h"
#include "problem.h"
#include "results.h"

/* The instrument's geometric weights (before the unit factors), as
 * regridding.weights would give them, for users who rebuild operators. */
static int save_weights(spart_context *context, const problem *made, const char *folder,
                        int overwrite, char *error, size_t error_size)
{
    char path[OUTPUT_PATH_LENGTH];
    if (output_path(path, sizeof path, folder, "weights.fits") != 0) {
        snprintf(error, error_size, "the output folder's name is too long");
        return -1;
    }
    const spart_weights *weights = spart_instrument_weights(made->instrument);
    if (weights == NULL || spart_weights_save(context, weights, path, overwrite) != SPART_OK) {
        /* the library's sentence names the path */
        snprintf(error, error_size, "saving the weights: %s",
                 weights == NULL ? "the instrument kept no weights" : spart_context_error(context));
        return -1;
    }
    return 0;
}

static int build_and_save(const cli_options *options, const config *cfg, spart_context *context)
{
    static const char *const names[3] = {"forward.fits", "backward.fits", "weights.fits"};
    char error[CONFIG_ERROR_LENGTH + 512];
    int result = output_folder_prepare(cfg->outputs.folder, names, 3, options->overwrite, error,
                                       sizeof error);
    if (result != 0) {
        cli_error(options, "%s", error);
        return result > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
    }
    progress report;
    progress_init(&report, options->quiet);
    problem made;
    int code = EXIT_DONE;
    double start = progress_now();
    if (problem_make_grids(context, cfg, &made, error, sizeof error) != 0 ||
        problem_build_instrument(context, cfg, &made, 1, &report, error, sizeof error) != 0) {
        cli_error(options, "%s", error);
        code = EXIT_FAILED;
    }
    if (code == EXIT_DONE) {
        progress_step_begin(&report, "saving the operators");
        if (results_write_operators(problem_forward(&made), problem_backward(&made),
                                    cfg->outputs.folder, options->overwrite, context, error,
                                    sizeof error) != 0) {
            if (report.enabled) {
                printf(" failed\n");
            }
            cli_error(options, "%s", error);
            code = EXIT_FAILED;
        } else {
            progress_step_end(&report);
        }
    }
    if (code == EXIT_DONE) {
        progress_step_begin(&report, "saving the weights");
        if (save_weights(context, &made, cfg->outputs.folder, options->overwrite, error,
                         sizeof error) != 0) {
            if (report.enabled) {
                printf(" failed\n");
            }
            cli_error(options, "%s", error);
            code = EXIT_FAILED;
        } else {
            progress_step_end(&report);
        }
    }
    if (code == EXIT_DONE && !options->quiet) {
        const spart_regridder *forward = problem_forward(&made);
        const spart_regridder *backward = problem_backward(&made);
        printf("spart build %s\n", cfg->path);
        printf("  forward operator: %lld x %lld, %lld entries -> %s/forward.fits\n",
               (long long)spart_regridder_num_rows(forward),
               (long long)spart_regridder_num_columns(forward),
               (long long)spart_regridder_num_entries(forward), cfg->outputs.folder);
        printf("  backprojection:   %lld x %lld, %lld entries -> %s/backward.fits\n",
               (long long)spart_regridder_num_rows(backward),
               (long long)spart_regridder_num_columns(backward),
               (long long)spart_regridder_num_entries(backward), cfg->outputs.folder);
        const spart_weights *weights = spart_instrument_weights(made.instrument);
        printf("  geometric weights: %lld elements (channel x wavelength), %lld entries -> "
               "%s/weights.fits\n",
               (long long)spart_weights_num_elements(weights),
               (long long)spart_weights_num_entries(weights), cfg->outputs.folder);
        printf("  %.2f s in all\n", progress_now() - start);
    }
    problem_free(&made);
    progress_free(&report);
    return code;
}

int cli_build(const cli_options *options)
{
    config *cfg = malloc(sizeof *cfg);
    if (cfg == NULL) {
        cli_error(options, "out of memory");
        return EXIT_FAILED;
    }
    spart_context *context = NULL;
    int code = cli_load_config(options, cfg);
    if (code == EXIT_DONE && options->output != NULL) {
        snprintf(cfg->outputs.folder, sizeof cfg->outputs.folder, "%s", options->output);
    }
    if (code == EXIT_DONE) {
        code = cli_make_context(options, &context);
    }
    if (code == EXIT_DONE) {
        code = build_and_save(options, cfg, context);
    }
    spart_context_free(context);
    free(cfg);
    return code;
}
