/*
 * tests/cli/cli_config_fixture.h: what the config tests of the spart
 * command share (test_cli_config.c, test_cli_lines.c): a fixture of a
 * fresh folder under /tmp holding the config file, the config read and
 * the error sentence; cmocka's setup and teardown for it; and writing a
 * text as the config file and reading it. Include after <cmocka.h>.
 */
#ifndef SPART_CLI_CONFIG_FIXTURE_H
#define SPART_CLI_CONFIG_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"

typedef struct fixture {
    char folder[64];
    char path[128];
    config cfg;
    char error[CONFIG_ERROR_LENGTH];
} fixture;

static int make_fixture(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL) {
        return -1;
    }
    snprintf(f->folder, sizeof f->folder, "/tmp/spart-config-test-XXXXXX");
    if (mkdtemp(f->folder) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/run.yaml", f->folder);
    *state = f;
    return 0;
}

static int remove_fixture(void **state)
{
    fixture *f = *state;
    remove(f->path);
    rmdir(f->folder);
    free(f);
    return 0;
}

/* Write `text` as the config file and read it: config_read's answer, its
 * sentence in f->error. */
static int read_text(fixture *f, const char *text)
{
    FILE *file = fopen(f->path, "w");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
    f->error[0] = '\0';
    return config_read(f->path, &f->cfg, f->error, sizeof f->error);
}

#endif /* SPART_CLI_CONFIG_FIXTURE_H */
