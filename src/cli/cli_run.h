/*
 * src/cli/cli_run.h: what the subcommands that read a config share:
 * finding the config (the shipped default when none is named), reading it,
 * the device the command line or the config asks for, and the context.
 */
#ifndef SPART_CLI_CLI_RUN_H
#define SPART_CLI_CLI_RUN_H

#include <stddef.h>

#include "cli.h"
#include "config.h"
#include "spart.h"

/* The shipped default config: its name, and where it was found (the
 * installed share/spart/examples beside the executable's prefix, then the
 * source tree the program was built from). Returns 0, or -1 with the
 * places looked at in `error`. */
#define CLI_DEFAULT_CONFIG "ideal-ctis.yaml"
int cli_find_default_config(char *path, size_t size, char *error, size_t error_size);

/* Read options->config_path (or the default) into `cfg`; a complaint is
 * printed. Returns EXIT_DONE, EXIT_BAD_CONFIG or EXIT_FAILED. */
int cli_load_config(const cli_options *options, config *cfg);

/* --device if given, else the config's solver.device. */
cli_device cli_effective_device(const cli_options *options, const config *cfg);

/* A context with --threads applied. Returns EXIT_DONE or EXIT_FAILED. */
int cli_make_context(const cli_options *options, spart_context **context);

#endif /* SPART_CLI_CLI_RUN_H */
