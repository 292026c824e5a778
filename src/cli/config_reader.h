/*
 * src/cli/config_reader.h: typed, checked reads of values from a YAML tree
 * (yaml_tree.h), each complaint a sentence with the file, the line and
 * column, and the dotted key ("solver.threshold", "instrument.angles[2]").
 * config.c uses these to read each section; they know nothing of spart.
 *
 * A reader stops at the first complaint: every later call does nothing and
 * returns -1, so a section reads straight through and checks once.
 */
#ifndef SPART_CLI_CONFIG_READER_H
#define SPART_CLI_CONFIG_READER_H

#include <stddef.h>
#include <stdint.h>

#include "yaml_tree.h"

typedef struct config_reader {
    const char *path; /* the config file, for sentences */
    char *error;
    size_t error_size;
    int failed;
} config_reader;

/* Which numbers a key takes. Every number must be finite. */
typedef enum number_range {
    RANGE_ANY = 0,          /* any finite number */
    RANGE_POSITIVE = 1,     /* > 0 */
    RANGE_NON_NEGATIVE = 2, /* >= 0 */
    RANGE_NONZERO = 3       /* != 0 */
} number_range;

/* Record a complaint about `key` at `node` (NULL: the top of the file). */
void reader_complain(config_reader *reader, const yaml_node *node, const char *key,
                     const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* `node` must be a mapping whose keys are all in `allowed` (NULL-ended); a
 * key not there is a complaint naming the closest allowed one. `name` is
 * the mapping's dotted key ("" for the top level). */
int reader_expect_mapping(config_reader *reader, const yaml_node *node, const char *name,
                          const char *const *allowed);

/* The value of `key` in `mapping` (`name` its dotted key); a missing key
 * is a complaint when `required` (the sentence adds `what`, such as
 * "arcsec per pixel"), else NULL without one. */
const yaml_node *reader_find(config_reader *reader, const yaml_node *mapping, const char *name,
                             const char *key, int required, const char *what);

/* Typed values. `key` is the value's dotted key. Each returns 0 or -1. */
int reader_number(config_reader *reader, const yaml_node *node, const char *key, number_range range,
                  double *value);
int reader_integer(config_reader *reader, const yaml_node *node, const char *key, int64_t minimum,
                   int64_t maximum, int64_t *value);
int reader_boolean(config_reader *reader, const yaml_node *node, const char *key, int *value);
int reader_string(config_reader *reader, const yaml_node *node, const char *key, char *value,
                  size_t size);
/* One of the NULL-ended `choices`; *value is its index. */
int reader_choice(config_reader *reader, const yaml_node *node, const char *key,
                  const char *const *choices, int *value);
/* A list of `minimum` to `maximum` numbers; *count receives how many. */
int reader_number_list(config_reader *reader, const yaml_node *node, const char *key,
                       number_range range, size_t minimum, size_t maximum, double *values,
                       size_t *count);

/* Optional values: the default stays when `key` is absent. */
int reader_optional_number(config_reader *reader, const yaml_node *mapping, const char *name,
                           const char *key, number_range range, double *value);
int reader_optional_integer(config_reader *reader, const yaml_node *mapping, const char *name,
                            const char *key, int64_t minimum, int64_t maximum, int64_t *value);
int reader_optional_boolean(config_reader *reader, const yaml_node *mapping, const char *name,
                            const char *key, int *value);
int reader_optional_choice(config_reader *reader, const yaml_node *mapping, const char *name,
                           const char *key, const char *const *choices, int *value);

/* Required values of `key` in `mapping`. */
int reader_required_number(config_reader *reader, const yaml_node *mapping, const char *name,
                           const char *key, number_range range, const char *what, double *value);
int reader_required_integer(config_reader *reader, const yaml_node *mapping, const char *name,
                            const char *key, int64_t minimum, int64_t maximum, const char *what,
                            int64_t *value);

/* "<name>.<key>" (or "<key>" at the top level) into `buffer`. */
const char *reader_join(char *buffer, size_t size, const char *name, const char *key);

#endif /* SPART_CLI_CONFIG_READER_H */
