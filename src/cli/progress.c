/*
 * src/cli/progress.c: step and iteration lines on a terminal, elapsed
 * times for the history, and the clean stop on Ctrl-C (see progress.h).
 */
#include "progress.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

double progress_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void progress_init(progress *report, int quiet)
{
    report->enabled = !quiet && isatty(STDOUT_FILENO);
    report->stream = stdout;
    report->step_start = progress_now();
    report->merit = NULL;
    report->elapsed = NULL;
    report->num_iterations = 0;
    report->capacity = 0;
    report->out_of_memory = 0;
}

void progress_free(progress *report)
{
    free(report->merit);
    free(report->elapsed);
    report->merit = NULL;
    report->elapsed = NULL;
    report->num_iterations = 0;
    report->capacity = 0;
}

void progress_step_begin(progress *report, const char *what)
{
    report->step_start = progress_now();
    snprintf(report->step, sizeof report->step, "%s", what);
    report->drew_bar = 0;
    if (report->enabled) {
        fprintf(report->stream, "%s ...", what);
        fflush(report->stream);
    }
}

void progress_step_end(progress *report)
{
    if (report->enabled) {
        if (report->drew_bar) { /* back to the start of the line, and clear it */
            fprintf(report->stream, "\r%s ...\033[K", report->step);
        }
        fprintf(report->stream, " done in %.2f s\n", progress_now() - report->step_start);
        fflush(report->stream);
    }
}

void progress_library(void *user, const char *stage, int64_t done, int64_t total)
{
    progress *report = user;
    if (!report->enabled || total <= 0) {
        return;
    }
    enum { width = 20 };
    char bar[width + 1];
    int filled = (int)((done * width) / total);
    for (int k = 0; k < width; k++) {
        bar[k] = k < filled ? '#' : ' ';
    }
    bar[width] = '\0';
    fprintf(report->stream, "\r%s ... %s [%s] %3d%%\033[K", report->step, stage, bar,
            (int)((done * 100) / total));
    fflush(report->stream);
    report->drew_bar = 1;
}

/* Grow one of the per-iteration arrays to `capacity` values. */
static int grow(double **array, int64_t capacity)
{
    double *grown = realloc(*array, (size_t)capacity * sizeof *grown);
    if (grown == NULL) {
        return -1;
    }
    *array = grown;
    return 0;
}

/* Keep an iteration's merit and elapsed time: the history file has a
 * column of each. */
static void remember(progress *report, const spart_mart_progress *state)
{
    int64_t iteration = state->iteration;
    if (iteration >= report->capacity) {
        int64_t capacity = report->capacity > 0 ? 2 * report->capacity : 128;
        while (capacity <= iteration) {
            capacity *= 2;
        }
        if (grow(&report->merit, capacity) != 0 || grow(&report->elapsed, capacity) != 0) {
            report->out_of_memory = 1;
            return;
        }
        report->capacity = capacity;
    }
    report->merit[iteration] = state->merit;
    report->elapsed[iteration] = state->elapsed_seconds;
    if (iteration + 1 > report->num_iterations) {
        report->num_iterations = iteration + 1;
    }
}

static void print_iteration(progress *report, const spart_mart_progress *state)
{
    if (state->iteration == 0) {
        fprintf(report->stream, "%9s  %18s ", "iteration", "merit (mean chi^2)");
        for (int64_t c = 0; c < state->num_channel && c < 8; c++) {
            char label[16];
            snprintf(label, sizeof label, "chi^2 %lld", (long long)c);
            fprintf(report->stream, " %9s", label);
        }
        fprintf(report->stream, "%s  %8s\n", state->num_channel > 8 ? "    " : "", "elapsed");
    }
    fprintf(report->stream, "%9lld  %18.6g ", (long long)state->iteration, state->merit);
    for (int64_t c = 0; c < state->num_channel && c < 8; c++) {
        fprintf(report->stream, " %9.4g", state->mean_chi_squared[c]);
    }
    if (state->num_channel > 8) {
        fprintf(report->stream, " ...");
    }
    fprintf(report->stream, "  %6.2f s\n", state->elapsed_seconds);
    fflush(report->stream);
}

int progress_mart_callback(void *user, const spart_mart_progress *state)
{
    progress *report = user;
    remember(report, state);
    if (report->enabled) {
        print_iteration(report, state);
    }
    return cli_interrupted() != 0;
}
