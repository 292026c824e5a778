/*
 * src/cli/progress.h: what the spart command tells a person while it
 * works: a start and an end line (with the time taken) around each long
 * step, since the library's builders offer no progress hook, and a line
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

/* The MART callback: `user` is the progress. Prints the iteration's line,
 * keeps its elapsed time, and returns nonzero (stop) once Ctrl-C came. */
int progress_mart_callback(void *user, const spart_mart_progress *state);

#endif /* SPART_CLI_PROGRESS_H */
