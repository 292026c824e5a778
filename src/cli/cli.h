/*
 * src/cli/cli.h: what the files of the spart command share: its exit
 * codes, the options of the command line, and the subcommands.
 *
 * The program is a user of the library like any other: it includes only
 * the public API (spart.h), and reports the library's sentences as they
 * are, prefixed with the subcommand ("spart invert: ...").
 */
#ifndef SPART_CLI_CLI_H
#define SPART_CLI_CLI_H

#include <stddef.h>

/* Exit codes, documented in `spart --help` and docs/config.md. */
enum cli_exit {
    EXIT_DONE = 0,          /* the work is done (an inversion met its stopping rule) */
    EXIT_FAILED = 1,        /* the work failed: a spart error, a file, a missing device */
    EXIT_USAGE = 2,         /* the command line is wrong */
    EXIT_BAD_CONFIG = 3,    /* the config file is wrong (the sentence says where) */
    EXIT_OUTPUT_EXISTS = 4, /* an output file exists and --overwrite was not given */
    EXIT_NOT_CONVERGED = 5, /* the inversion ended without meeting its stopping rule;
                               its outputs are written */
    EXIT_INTERRUPTED = 130  /* stopped by Ctrl-C (SIGINT) or SIGTERM: 128 + 2 */
};

/* Where the operators and the products run. */
typedef enum cli_device {
    CLI_DEVICE_UNSET = -1,
    CLI_DEVICE_HOST = 0,
    CLI_DEVICE_CUDA = 1,
    CLI_DEVICE_AUTO = 2
} cli_device;

/* The options every subcommand takes; unset ones leave the config's. */
typedef struct cli_options {
    const char *program;     /* "spart invert", for messages */
    const char *config_path; /* invert, build: the config file (NULL: the default) */
    const char *file_path;   /* info: the file to describe */
    const char *output;      /* --output DIR, or NULL */
    cli_device device;       /* --device, or CLI_DEVICE_UNSET */
    int threads;             /* --threads N, or 0 */
    int quiet;               /* --quiet */
    int overwrite;           /* --overwrite */
    int progress;            /* per-iteration lines: on a terminal and not --quiet */
} cli_options;

/* The subcommands; each returns an exit code. */
int cli_invert(const cli_options *options);
int cli_build(const cli_options *options);
int cli_info(const cli_options *options);

/* Print "<program>: <sentence>" on stderr. */
void cli_error(const cli_options *options, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Ctrl-C and SIGTERM: after cli_catch_interrupts, cli_interrupted() says
 * whether one arrived (and which signal, or 0). The handler only sets a
 * flag; the work stops at its next check and says so. */
void cli_catch_interrupts(void);
int cli_interrupted(void);
/* cli_interrupted() checked before the named step (an output file's name,
 * or "exit"). For the tests only, SPART_TEST_INTERRUPT=<step> in the
 * environment raises SIGINT just there, so that every late check can be
 * shown to work without racing a timed kill. */
int cli_interrupted_before(const char *step);

#endif /* SPART_CLI_CLI_H */
