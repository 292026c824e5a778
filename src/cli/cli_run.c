/*
 * src/cli/cli_run.c: the default config, reading a config, the device and
 * the context of a subcommand (see cli_run.h).
 */
#include "cli_run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by CMake: the examples folder relative to the installed executable's
 * folder ("../share/spart/examples"), and the source tree's examples
 * folder, for a program run from its build tree. */
#ifndef SPART_CLI_EXAMPLES_FROM_BINDIR
#define SPART_CLI_EXAMPLES_FROM_BINDIR "../share/spart/examples"
#endif
#ifndef SPART_CLI_SOURCE_EXAMPLES
#define SPART_CLI_SOURCE_EXAMPLES ""
#endif

/* The folder of the running executable (Linux: /proc/self/exe). */
static int executable_folder(char *folder, size_t size)
{
    ssize_t length = readlink("/proc/self/exe", folder, size - 1);
    if (length <= 0) {
        return -1;
    }
    folder[length] = '\0';
    char *slash = strrchr(folder, '/');
    if (slash == NULL) {
        return -1;
    }
    *slash = '\0';
    return 0;
}

int cli_find_default_config(char *path, size_t size, char *error, size_t error_size)
{
    char installed[CONFIG_PATH_LENGTH] = "";
    char folder[CONFIG_PATH_LENGTH];
    if (executable_folder(folder, sizeof folder) == 0) {
        snprintf(installed, sizeof installed, "%.2048s/%s/%s", folder,
                 SPART_CLI_EXAMPLES_FROM_BINDIR, CLI_DEFAULT_CONFIG);
        if (access(installed, R_OK) == 0) {
            snprintf(path, size, "%s", installed);
            return 0;
        }
    }
    char source[CONFIG_PATH_LENGTH] = "";
    if (SPART_CLI_SOURCE_EXAMPLES[0] != '\0') {
        snprintf(source, sizeof source, "%s/%s", SPART_CLI_SOURCE_EXAMPLES, CLI_DEFAULT_CONFIG);
        if (access(source, R_OK) == 0) {
            snprintf(path, size, "%s", source);
            return 0;
        }
    }
    snprintf(error, error_size,
             "the default config %s is neither installed (looked at %s) nor in the source tree "
             "(looked at %s); name a config file: spart invert CONFIG.yaml",
             CLI_DEFAULT_CONFIG, installed[0] != '\0' ? installed : "(executable not found)",
             source[0] != '\0' ? source : "(unknown)");
    return -1;
}

int cli_load_config(const cli_options *options, config *cfg)
{
    char path[CONFIG_PATH_LENGTH];
    char error[CONFIG_ERROR_LENGTH];
    if (options->config_path != NULL) {
        snprintf(path, sizeof path, "%s", options->config_path);
    } else if (cli_find_default_config(path, sizeof path, error, sizeof error) != 0) {
        cli_error(options, "%s", error);
        return EXIT_FAILED;
    }
    /* A config file that is not there, or not readable, is a file that
     * cannot be read (1), not a wrong config (3). */
    struct stat file_info;
    if (stat(path, &file_info) != 0 || access(path, R_OK) != 0) {
        cli_error(options, "cannot read the config file %s: %s", path, strerror(errno));
        return EXIT_FAILED;
    }
    if (S_ISDIR(file_info.st_mode)) {
        cli_error(options, "cannot read the config file %s: it is a folder", path);
        return EXIT_FAILED;
    }
    if (config_read(path, cfg, error, sizeof error) != 0) {
        cli_error(options, "%s", error);
        return EXIT_BAD_CONFIG;
    }
    return EXIT_DONE;
}

cli_device cli_effective_device(const cli_options *options, const config *cfg)
{
    if (options->device != CLI_DEVICE_UNSET) {
        return options->device;
    }
    switch (cfg->solver.device) {
    case DEVICE_CUDA: return CLI_DEVICE_CUDA;
    case DEVICE_AUTO: return CLI_DEVICE_AUTO;
    case DEVICE_HOST: break;
    }
    return CLI_DEVICE_HOST;
}

int cli_make_context(const cli_options *options, spart_context **context)
{
    if (spart_context_create(context) != SPART_OK) {
        cli_error(options, "%s", spart_last_error());
        return EXIT_FAILED;
    }
    if (options->threads > 0 && spart_context_set_threads(*context, options->threads) != SPART_OK) {
        cli_error(options, "%s", spart_context_error(*context));
        return EXIT_FAILED;
    }
    return EXIT_DONE;
}
