/*
 * src/cli/main.c: the spart command: its command line (subcommands and
 * options), the help texts, the exit codes, and Ctrl-C.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spart.h"

/* The exit codes, and the commands that can end with each (a command's
 * --help lists its own only). */
enum { USED_BY_INVERT = 1, USED_BY_BUILD = 2, USED_BY_INFO = 4, USED_BY_ALL = 7 };
static const struct {
    const char *line;
    int used_by;
} exit_codes[] = {
    {"  0    done (for invert: MART met its stopping rule)\n", USED_BY_ALL},
    {"  1    failed: a spart error, a file that cannot be read or written, no CUDA device\n",
     USED_BY_ALL},
    {"  2    wrong command line\n", USED_BY_ALL},
    {"  3    wrong config file (the message gives file:line:column and the key)\n",
     USED_BY_INVERT | USED_BY_BUILD},
    {"  4    an output file exists: nothing was written (give --overwrite, or --output DIR)\n",
     USED_BY_INVERT | USED_BY_BUILD},
    {"  5    MART ended without meeting its stopping rule (outputs are written)\n", USED_BY_INVERT},
    {"  130  interrupted (Ctrl-C or SIGTERM): no partial file is left behind\n",
     USED_BY_INVERT | USED_BY_BUILD},
};

static void print_exit_codes(int used_by)
{
    fputs("exit codes:\n", stdout);
    for (size_t k = 0; k < sizeof exit_codes / sizeof exit_codes[0]; k++) {
        if (exit_codes[k].used_by & used_by) {
            fputs(exit_codes[k].line, stdout);
        }
    }
}

static const char main_help[] =
    "usage: spart <command> [options]\n"
    "\n"
    "spart builds sparse operators of imaging instruments and inverts their data with MART.\n"
    "\n"
    "commands:\n"
    "  invert [CONFIG.yaml]   run an inversion from a config file (default: the shipped\n"
    "                         examples/ideal-ctis.yaml, the ctis simple-mart tutorial)\n"
    "  build CONFIG.yaml      build the instrument's operators and save them as FITS\n"
    "  info FILE.fits         say what a FITS file written by spart holds\n"
    "\n"
    "options:\n"
    "  -h, --help             this text; `spart <command> --help` for a command's\n"
    "  --version              print spart's version\n"
    "\n"
    "The config keys are documented in docs/config.md.\n";

static const char invert_help[] =
    "usage: spart invert [CONFIG.yaml] [options]\n"
    "\n"
    "Build the instrument of CONFIG.yaml and its operators, make the observations (synthetic,\n"
    "with a seed) or read them (FITS), run MART, and write into the output folder:\n"
    "solution.fits, predicted.fits, observed.fits (synthetic observations), truth.fits\n"
    "(synthetic scene), history.csv, and the pictures scene.png, images.png, merit.png.\n"
    "Without CONFIG.yaml, the shipped examples/ideal-ctis.yaml (seconds on two cores).\n"
    "Operators saved by `spart build` are loaded instead of built when the config names\n"
    "their folder (instrument.operators).\n"
    "\n"
    "options:\n"
    "  --device host|cuda|auto  where the operators' products run (default: the config's\n"
    "                           solver.device, host); cuda fails without a usable GPU\n"
    "  --threads N              host threads (default: OMP_NUM_THREADS or all cores)\n"
    "  --output DIR             the output folder (default: the config's outputs.folder,\n"
    "                           spart-output)\n"
    "  --overwrite              replace existing outputs (without it, none is replaced)\n"
    "  -q, --quiet              no progress lines and no summary (errors still go to stderr);\n"
    "                           progress lines are shown only on a terminal anyway\n"
    "  -h, --help               this text\n";

static const char build_help[] =
    "usage: spart build CONFIG.yaml [options]\n"
    "\n"
    "Build the instrument of CONFIG.yaml (its weights, assembled into the forward operator\n"
    "and the backprojection) and save both operators as spart regridder files,\n"
    "forward.fits and backward.fits, and the geometric weights (before the unit factors,\n"
    "as regridding.weights gives them) as weights.fits, in the output folder (see\n"
    "docs/formats.md). A later\n"
    "`spart invert` loads them when its config says instrument.operators: FOLDER.\n"
    "\n"
    "options:\n"
    "  --threads N              host threads (default: OMP_NUM_THREADS or all cores)\n"
    "  --output DIR             the output folder (default: the config's outputs.folder)\n"
    "  --overwrite              replace existing files\n"
    "  -q, --quiet              no progress lines and no summary\n"
    "  -h, --help               this text\n";

static const char info_help[] =
    "usage: spart info FILE.fits\n"
    "\n"
    "Say what a FITS file written by spart holds: its kind (weights, regridder, scene,\n"
    "images), shapes, value type, number of entries and grids, from its headers.\n"
    "\n"
    "options:\n"
    "  -h, --help               this text\n";

/* ---- errors and interrupts ------------------------------------------------------------ */

void cli_error(const cli_options *options, const char *format, ...)
{
    fprintf(stderr, "%s: ", options->program);
    va_list arguments;
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fputc('\n', stderr);
}

/* The one piece of state a signal handler may touch. */
static volatile sig_atomic_t interrupt_signal = 0;

static void on_interrupt(int signal_number)
{
    interrupt_signal = signal_number;
}

void cli_catch_interrupts(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}

int cli_interrupted(void)
{
    return (int)interrupt_signal;
}

int cli_interrupted_before(const char *step)
{
    const char *wanted = getenv("SPART_TEST_INTERRUPT");
    if (wanted != NULL && strcmp(wanted, step) == 0) {
        raise(SIGINT);
    }
    return cli_interrupted();
}

/* ---- the command line -------------------------------------------------------------------- */

/* What a subcommand takes. */
typedef struct command {
    const char *name;
    const char *help;
    int (*run)(const cli_options *options);
    int takes_device;
    int takes_outputs; /* --output, --overwrite, --threads, --quiet */
    int positional_required;
    const char *positional_name;
    int used_by; /* its exit codes: USED_BY_* */
} command;

static const command commands[] = {
    {"invert", invert_help, cli_invert, 1, 1, 0, "CONFIG.yaml", USED_BY_INVERT},
    {"build", build_help, cli_build, 0, 1, 1, "CONFIG.yaml", USED_BY_BUILD},
    {"info", info_help, cli_info, 0, 0, 1, "FILE.fits", USED_BY_INFO},
};

static int usage_error(const cli_options *options, const char *format, const char *detail)
{
    fprintf(stderr, "%s: ", options->program);
    fprintf(stderr, format, detail);
    fprintf(stderr, " (see %s --help)\n", options->program);
    return EXIT_USAGE;
}

static int parse_device(const char *text, cli_device *device)
{
    const char *names[3] = {"host", "cuda", "auto"};
    for (int k = 0; k < 3; k++) {
        if (strcmp(text, names[k]) == 0) {
            *device = (cli_device)k;
            return 0;
        }
    }
    return -1;
}

static int parse_threads(const char *text, int *threads)
{
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > 4096) {
        return -1;
    }
    *threads = (int)value;
    return 0;
}

/* The value of an option given as "--name VALUE" or "--name=VALUE". */
static const char *option_value(int argc, char **argv, int *k, const char *name)
{
    size_t length = strlen(name);
    const char *argument = argv[*k];
    if (strncmp(argument, name, length) != 0) {
        return NULL;
    }
    if (argument[length] == '=') {
        return argument + length + 1;
    }
    if (argument[length] == '\0' && *k + 1 < argc) {
        *k += 1;
        return argv[*k];
    }
    return NULL;
}

static int is_option(const char *argument, const char *name)
{
    size_t length = strlen(name);
    return strncmp(argument, name, length) == 0 &&
           (argument[length] == '\0' || argument[length] == '=');
}

/* One option of a subcommand's command line; -1 with a message when wrong. */
static int parse_option(const command *which, int argc, char **argv, int *k, cli_options *options)
{
    const char *argument = argv[*k];
    const char *value = NULL;
    if (which->takes_device && is_option(argument, "--device")) {
        value = option_value(argc, argv, k, "--device");
        if (value == NULL || parse_device(value, &options->device) != 0) {
            return usage_error(options, "--device takes host, cuda or auto, not '%s'",
                               value != NULL ? value : "");
        }
    } else if (which->takes_outputs && is_option(argument, "--threads")) {
        value = option_value(argc, argv, k, "--threads");
        if (value == NULL || parse_threads(value, &options->threads) != 0) {
            return usage_error(options, "--threads takes a whole number from 1 to 4096, not '%s'",
                               value != NULL ? value : "");
        }
    } else if (which->takes_outputs && is_option(argument, "--output")) {
        value = option_value(argc, argv, k, "--output");
        if (value == NULL || value[0] == '\0') {
            return usage_error(options, "--output takes a folder%s", "");
        }
        options->output = value;
    } else if (which->takes_outputs && strcmp(argument, "--overwrite") == 0) {
        options->overwrite = 1;
    } else if (which->takes_outputs &&
               (strcmp(argument, "--quiet") == 0 || strcmp(argument, "-q") == 0)) {
        options->quiet = 1;
    } else {
        return usage_error(options, "unknown option '%s'", argument);
    }
    return EXIT_DONE;
}

static int run_command(const command *which, int argc, char **argv, cli_options *options,
                       char *program, size_t program_size)
{
    snprintf(program, program_size, "spart %s", which->name);
    options->program = program;
    const char *positional = NULL;
    for (int k = 2; k < argc; k++) {
        const char *argument = argv[k];
        if (strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0) {
            fputs(which->help, stdout);
            fputs("\n", stdout);
            print_exit_codes(which->used_by);
            return EXIT_DONE;
        }
        if (strcmp(argument, "--version") == 0) {
            printf("spart %s\n", spart_version());
            return EXIT_DONE;
        }
        if (argument[0] == '-' && argument[1] != '\0') {
            int code = parse_option(which, argc, argv, &k, options);
            if (code != EXIT_DONE) {
                return code;
            }
        } else if (positional == NULL) {
            positional = argument;
        } else {
            return usage_error(options, "takes one file, not also '%s'", argument);
        }
    }
    if (positional == NULL && which->positional_required) {
        return usage_error(options, "needs a file: %s", which->positional_name);
    }
    options->config_path = positional;
    options->file_path = positional;
    cli_catch_interrupts();
    return which->run(options);
}

int main(int argc, char **argv)
{
    cli_options options;
    char program[64];
    memset(&options, 0, sizeof options);
    options.program = "spart";
    options.device = CLI_DEVICE_UNSET;
    if (argc < 2) {
        fputs(main_help, stderr);
        return EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 || strcmp(first, "help") == 0) {
        fputs(main_help, stdout);
        fputs("\n", stdout);
        print_exit_codes(USED_BY_ALL);
        return EXIT_DONE;
    }
    if (strcmp(first, "--version") == 0) {
        printf("spart %s\n", spart_version());
        return EXIT_DONE;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        if (strcmp(first, commands[k].name) == 0) {
            return run_command(&commands[k], argc, argv, &options, program, sizeof program);
        }
    }
    return usage_error(&options, "unknown command '%s' (commands: invert, build, info)", first);
}
