/*
 * src/cli/progress.h: what the spart command tells a person while it
 * works: a start and an end line (with the time taken) around each long
 * step, with a bar that the library's progress reports move meanwhile
 * (spart_context_set_progress: weights, transpose, assembly), and a line
 * per MART iteration (iteration, merit per channel, elapsed time) from the
 * solver's callback. All of it only on a terminal and without --quiet, so
 * that logs and pipes stay clean. Errors go to stderr regardless.
 *
 * The callback also ends the run cleanly when Ctrl-C arrives, and records
 * each iteration's elapsed time for the history file.
 */
#ifndef SPART_CLI_PROGRESS_H
#define SPART_CLI_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include "spart.h"

typedef struct progress {
    int enabled;       /* print the step and iteration lines */
    FILE *stream;      /* stdout */
    double step_start; /* seconds, of the current step */
    char step[160];    /* what the current step is, for redrawing its line */
    int drew_bar;      /* the step's line holds a bar, so end it by redrawing */
    /* The merit and the elapsed seconds of each iteration, as the solver
     * reported them (num_iterations values each). */
    double *merit;
    double *elapsed;
    int64_t num_iterations;
    int64_t capacity;
    int out_of_memory;
} progress;

/* Monotonic wall-clock seconds. */
double progress_now(void);

/* Lines on stdout when it is a terminal and `quiet` is 0. */
void progress_init(progress *report, int quiet);
void progress_free(progress *report);

/* "<what> ..." then, at the end, " done in 1.23 s". */
void progress_step_begin(progress *report, const char *what);
void progress_step_end(progress *report);

/* The library's progress hook (spart_progress_fn; `user` is the progress):
 * redraws the step's line as "<what> ... <stage> [#####     ]  45%". */
void progress_library(void *user, const char *stage, int64_t done, int64_t total);

/* The MART callback: `user` is the progress. Prints the iteration's line,
 * keeps its elapsed time, and returns nonzero (stop) once Ctrl-C came. */
int progress_mart_callback(void *user, const spart_mart_progress *state);

#endif /* SPART_CLI_PROGRESS_H */
