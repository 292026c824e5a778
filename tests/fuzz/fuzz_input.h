/*
 * tests/fuzz/fuzz_input.h: the readers under fuzzing take a file name, so
 * each input is written to one temporary file per process first.
 */
#ifndef SPART_FUZZ_INPUT_H
#define SPART_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file holding `size` bytes of `data`, or NULL when it cannot be
 * written (then the input is skipped). Its name has the suffix the readers
 * expect; it is removed at exit. */
static char fuzz_path[256];

static void fuzz_remove_file(void)
{
    if (fuzz_path[0] != '\0') {
        remove(fuzz_path);
    }
}

static const char *fuzz_write_input(const uint8_t *data, size_t size, const char *suffix)
{
    if (fuzz_path[0] == '\0') {
        const char *folder = getenv("TMPDIR");
        snprintf(fuzz_path, sizeof fuzz_path, "%s/spart-fuzz-%ld%s",
                 folder != NULL ? folder : "/tmp", (long)getpid(), suffix);
        atexit(fuzz_remove_file);
    }
    FILE *file = fopen(fuzz_path, "wb");
    if (file == NULL) {
        return NULL;
    }
    size_t written = size > 0 ? fwrite(data, 1, size, file) : 0;
    if (fclose(file) != 0 || written != size) {
        return NULL;
    }
    return fuzz_path;
}

#endif
