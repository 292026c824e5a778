/*
 * src/cli/invert_frames.c: `spart invert` over a sequence of frames
 * (invert_frames.h): the frames' observations solved with
 * spart_mart_solve_frames a batch at a time (each frame's result the one a
 * run of that frame alone gives, bit for bit, whatever the batches), each
 * frame's outputs written into its own folder by a writer thread while the
 * next batch is solved, and one table of every frame's outcome.
 *
 * The writer thread only writes files (results_write, pictures_write):
 * everything that uses the context or the device (the solve, each frame's
 * predicted images) stays on the main thread, which hands each batch's
 * frames over once they are predicted. A failure on either side stops the
 * other: the solve before its next batch, the writer before its next
 * frame; every file written is complete (written beside its name and
 * renamed into place), and the sentence says which frame failed.
 */
#include "invert_frames.h"

#include <math.h>
#include <pthread.h>
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

/* The writer thread and what it shares with the solve (under `lock`). */
typedef struct frame_writer {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int64_t ready;   /* frames [0, ready) are solved and predicted */
    int finished;    /* no more frames will come */
    int code;        /* EXIT_DONE, or the writer's failure (its sentence printed) */
    int64_t written; /* frames [0, written) have their outputs written */
} frame_writer;

/* Everything a run of frames holds, freed together. */
typedef struct frames_run {
    const invert_frames_inputs *in;
    const cli_options *options;
    int64_t frames;
    double *images;     /* frames x C x image_size */
    double *truths;     /* frames x scene_size, or NULL */
    double **predicted; /* frame f's predicted images, until written */
    device_operators *device;
    spart_mart_operators operators;
    const char *where;
    spart_mart_result **results;
    frame_writer writer;
    char error[CONFIG_ERROR_LENGTH + 512];        /* the main thread's sentences */
    char writer_error[CONFIG_ERROR_LENGTH + 512]; /* the writer thread's */
} frames_run;

static void frames_run_free(frames_run *run)
{
    for (int64_t f = 0; run->results != NULL && f < run->frames; f++) {
        spart_mart_result_free(run->results[f]);
    }
    for (int64_t f = 0; run->predicted != NULL && f < run->frames; f++) {
        free(run->predicted[f]);
    }
    free(run->predicted);
    free(run->results);
    device_operators_free(run->device);
    free(run->images);
    free(run->truths);
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

/* The frames a batch of the solve holds: as many as fit the working
 * memory spart_mart_solve_frames gives a batch by default (1 GiB, at
 * most 64 frames), so that the batches here are the library's own. */
static int64_t batch_width(spart_context *context, const spart_mart_operators *operators,
                           const spart_mart_options *mart)
{
    size_t one = 0;
    if (spart_mart_frames_workspace_size(context, operators, 1, mart, 1, &one) != SPART_OK ||
        one == 0) {
        return 1;
    }
    int64_t width = (int64_t)(((size_t)1 << 30) / one);
    return width < 1 ? 1 : (width > 64 ? 64 : width);
}

/* The merit of each iteration of a result (the mean over channels, summed
 * in channel order, as the solver takes it) into `merit`. */
static void frame_merits(const spart_mart_result *result, double *merit)
{
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    for (int64_t i = 0; i < iterations; i++) {
        double sum = 0.0;
        for (int64_t c = 0; c < channels; c++) {
            sum += chi2[i * channels + c];
        }
        merit[i] = sum / (double)channels;
    }
}

/* Frame f's outputs into its folder (on the writer thread): the files of
 * a one-frame run (their elapsed times unknown: the frames ran together),
 * from its result and predicted images. */
static int write_frame(frames_run *run, int64_t f)
{
    const cli_options *options = run->options;
    const invert_frames_inputs *in = run->in;
    const problem *made = in->made;
    int64_t frame_values = made->num_channel * made->image_size;
    const spart_mart_result *result = run->results[f];
    int64_t iterations = spart_mart_result_num_iterations(result);
    double *merit = malloc((size_t)(iterations > 0 ? iterations : 1) * sizeof *merit);
    if (merit == NULL) {
        cli_error(options, "writing frame %lld: out of memory", (long long)f);
        return EXIT_FAILED;
    }
    frame_merits(result, merit);
    results outputs = {in->cfg,
                       made,
                       run->truths != NULL ? run->truths + f * made->scene_size : NULL,
                       run->images + f * frame_values,
                       run->predicted[f],
                       result,
                       merit,
                       NULL,
                       in->cfg->observations.kind == OBSERVATIONS_SYNTHESIZE,
                       in->cfg->scene.kind == SCENE_GAUSSIANS,
                       spart_context_threads(in->context)};
    char folder[OUTPUT_PATH_LENGTH];
    frame_folder(folder, sizeof folder, in->cfg, f);
    int interrupted = 0;
    int written = results_write(&outputs, folder, options->overwrite, &interrupted,
                                run->writer_error, sizeof run->writer_error);
    if (written == 0 && in->cfg->outputs.pictures) {
        written = pictures_write(&outputs, folder, options->overwrite, &interrupted,
                                 run->writer_error, sizeof run->writer_error);
    }
    free(merit);
    if (written != 0) {
        if (interrupted) {
            cli_error(options,
                      "interrupted while writing frame %lld; the files already written "
                      "are complete, the others were not written",
                      (long long)f);
            return EXIT_INTERRUPTED;
        }
        cli_error(options, "%s (files already written are complete; no partial file is left)",
                  run->writer_error);
        return written > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
    }
    return EXIT_DONE;
}

/* The writer thread: each frame as the solve hands it over, in order,
 * until the solve has finished and every frame handed over is written, or
 * until a failure (its own, or the solve's: the solve then says
 * finished). */
static void *write_frames(void *user)
{
    frames_run *run = user;
    frame_writer *w = &run->writer;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->written == w->ready && !w->finished) {
            pthread_cond_wait(&w->changed, &w->lock);
        }
        if (w->written == w->ready) {
            break;
        }
        int64_t f = w->written;
        pthread_mutex_unlock(&w->lock);
        int code = EXIT_INTERRUPTED;
        if (cli_interrupted()) {
            cli_error(run->options,
                      "interrupted before writing frame %lld; the folders of the frames before "
                      "it are complete, no other outputs were written",
                      (long long)f);
        } else {
            code = write_frame(run, f);
        }
        free(run->predicted[f]);
        run->predicted[f] = NULL;
        pthread_mutex_lock(&w->lock);
        if (code != EXIT_DONE) {
            w->code = code;
            pthread_cond_broadcast(&w->changed);
            break;
        }
        w->written = f + 1;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* The writer's code so far (EXIT_DONE while it is fine). */
static int writer_code(frame_writer *w)
{
    pthread_mutex_lock(&w->lock);
    int code = w->code;
    pthread_mutex_unlock(&w->lock);
    return code;
}

/* Frames [first, first + count) solved (every rank) and predicted (rank
 * 0), then handed to the writer. */
static int solve_batch(frames_run *run, const spart_mart_regridder_pair *pair,
                       const double *observed, const spart_mart_options *mart, int64_t first,
                       int64_t count)
{
    const cli_options *options = run->options;
    const invert_frames_inputs *in = run->in;
    int64_t frame_values = run->operators.num_channel * run->operators.image_size;
    /* one rank: spart_mart_solve_frames; several: the operators split over them */
    if (cli_ranks_solve_frames(in->context, pair, &run->operators, count,
                               observed + first * frame_values, mart,
                               run->results + first) != SPART_OK) {
        cli_error(options, "MART (frames %lld to %lld): %s", (long long)first,
                  (long long)(first + count - 1), spart_context_error(in->context));
        return EXIT_FAILED;
    }
    if (cli_ranks_rank() != 0) {
        return EXIT_DONE;
    }
    for (int64_t f = first; f < first + count; f++) {
        run->predicted[f] = malloc((size_t)frame_values * sizeof *run->predicted[f]);
        if (run->predicted[f] == NULL) {
            cli_error(options, "predicting the images of frame %lld: out of memory", (long long)f);
            return EXIT_FAILED;
        }
        if (device_operators_predict(run->device, &run->operators,
                                     spart_mart_result_solution(run->results[f]),
                                     run->operators.scene_size, run->predicted[f], frame_values,
                                     run->error, sizeof run->error) != 0) {
            cli_error(options, "predicting the images of frame %lld: %s", (long long)f, run->error);
            return EXIT_FAILED;
        }
    }
    frame_writer *w = &run->writer;
    pthread_mutex_lock(&w->lock);
    w->ready = first + count;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    return EXIT_DONE;
}

/* The solve, a batch at a time, with the writer thread (rank 0) writing
 * each batch's frames while the next is solved. */
static int solve_and_write(frames_run *run)
{
    const cli_options *options = run->options;
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
    run->predicted = calloc((size_t)run->frames, sizeof *run->predicted);
    if (run->results == NULL || run->predicted == NULL) {
        cli_error(options, "out of memory for the results of %lld frames", (long long)run->frames);
        return EXIT_FAILED;
    }
    int64_t width = batch_width(in->context, &run->operators, &mart);
    progress_step_begin(in->report, "running MART on every frame, writing each as it is solved");
    if (in->report->enabled) {
        printf(" (%lld frames on the %s, %lld a batch)", (long long)run->frames, run->where,
               (long long)width);
        fflush(stdout);
    }
    frame_writer *w = &run->writer;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, NULL);
    w->code = EXIT_DONE;
    pthread_t thread;
    int threaded = 0;
    if (cli_ranks_rank() == 0) {
        threaded = pthread_create(&thread, NULL, write_frames, run) == 0;
    }
    int code = EXIT_DONE;
    for (int64_t first = 0; first < run->frames; first += width) {
        if (code == EXIT_DONE && cli_interrupted()) {
            code = EXIT_INTERRUPTED;
        }
        if (code == EXIT_DONE && threaded) {
            code = writer_code(w) == EXIT_DONE ? EXIT_DONE : EXIT_FAILED;
        }
        code = cli_ranks_agree(code); /* every rank solves the batch, or none */
        if (code != EXIT_DONE) {
            break;
        }
        int64_t count = run->frames - first < width ? run->frames - first : width;
        code = solve_batch(run, &pair, observed, &mart, first, count);
    }
    pthread_mutex_lock(&w->lock);
    w->finished = 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    if (threaded) {
        pthread_join(thread, NULL);
    } else if (cli_ranks_rank() == 0) {
        write_frames(run); /* no thread: the frames solved written after the solve */
    }
    int written = w->code;
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    if (code == EXIT_INTERRUPTED && written != EXIT_INTERRUPTED) {
        cli_error(options,
                  "interrupted after the outputs of %lld frames were written; their folders "
                  "are complete, no other outputs were written",
                  (long long)w->written);
    }
    if (code == EXIT_DONE || (code == EXIT_FAILED && written != EXIT_DONE)) {
        code = written; /* the writer's failure, its sentence printed */
    }
    if (code == EXIT_DONE) {
        progress_step_end(in->report);
    } else if (in->report->enabled) {
        printf(" failed\n");
    }
    return code;
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

/* frames.csv, once every frame's outputs are written. */
static int write_frames_table(frames_run *run)
{
    frames_table table = {run};
    int written =
        output_write(run->in->cfg->outputs.folder, INVERT_FRAMES_TABLE, run->options->overwrite,
                     write_table, &table, run->error, sizeof run->error);
    if (written != 0) {
        cli_error(run->options, "%s", run->error);
        return written > 0 ? EXIT_OUTPUT_EXISTS : EXIT_FAILED;
    }
    return EXIT_DONE;
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
    run.options = options;
    run.frames = in->files->total_frames;
    if (code == EXIT_DONE) {
        code = make_frames(options, &run);
    }
    code = cli_ranks_agree(code); /* every rank solves, or none */
    if (code == EXIT_DONE) {
        code = solve_and_write(&run); /* rank 0 writes the outputs */
    }
    if (code == EXIT_DONE && cli_ranks_rank() == 0) {
        code = write_frames_table(&run);
    }
    if (code == EXIT_DONE) {
        code = summarise(options, &run, progress_now() - in->start);
    }
    frames_run_free(&run);
    return code;
}
