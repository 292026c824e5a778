/*
 * src/cli/config_reader.c: typed, checked reads from a YAML tree, with
 * sentences that point at the file, line, column and key.
 */
#include "config_reader.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LENGTH 256

void reader_complain(config_reader *reader, const yaml_node *node, const char *key,
                     const char *format, ...)
{
    if (reader->failed) {
        return;
    }
    reader->failed = 1;
    int line = node != NULL ? node->line : 1;
    int column = node != NULL ? node->column : 1;
    int used = snprintf(reader->error, reader->error_size, "%s:%d:%d: %s: ", reader->path, line,
                        column, key[0] != '\0' ? key : "(top level)");
    if (used < 0 || (size_t)used >= reader->error_size) {
        return;
    }
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(reader->error + used, reader->error_size - (size_t)used, format, arguments);
    va_end(arguments);
}

const char *reader_join(char *buffer, size_t size, const char *name, const char *key)
{
    if (name[0] == '\0') {
        snprintf(buffer, size, "%s", key);
    } else {
        snprintf(buffer, size, "%s.%s", name, key);
    }
    return buffer;
}

/* Edits (insertions, deletions, substitutions) that turn a into b, for
 * "did you mean": keys are short, so the quadratic table is fine. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t length_a = strlen(a);
    size_t length_b = strlen(b);
    if (length_a > 63 || length_b > 63) {
        return 64;
    }
    size_t row[64];
    for (size_t j = 0; j <= length_b; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= length_a; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= length_b; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            best = above + 1 < best ? above + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[length_b];
}

/* The allowed keys as "a, b, c" into `buffer`. */
static void list_keys(const char *const *allowed, char *buffer, size_t size)
{
    buffer[0] = '\0';
    size_t used = 0;
    for (size_t k = 0; allowed[k] != NULL && used < size; k++) {
        int n = snprintf(buffer + used, size - used, "%s%s", k > 0 ? ", " : "", allowed[k]);
        if (n < 0) {
            return;
        }
        used += (size_t)n;
    }
}

static void complain_unknown_key(config_reader *reader, const yaml_node *key_node, const char *name,
                                 const char *const *allowed)
{
    char key[KEY_LENGTH];
    reader_join(key, sizeof key, name, key_node->text);
    const char *closest = NULL;
    size_t closest_distance = 3; /* suggest only near misses */
    size_t closest_prefix = 0;
    for (size_t k = 0; allowed[k] != NULL; k++) {
        size_t distance = edit_distance(key_node->text, allowed[k]);
        /* ties go to the key that starts alike: 'bin' is 'bins', not 'min' */
        size_t prefix = 0;
        while (key_node->text[prefix] != '\0' && key_node->text[prefix] == allowed[k][prefix]) {
            prefix++;
        }
        if (distance < closest_distance ||
            (distance == closest_distance && closest != NULL && prefix > closest_prefix)) {
            closest = allowed[k];
            closest_distance = distance;
            closest_prefix = prefix;
        }
    }
    char keys[512];
    list_keys(allowed, keys, sizeof keys);
    const char *where = name[0] != '\0' ? name : "the top level";
    if (closest != NULL) {
        reader_complain(reader, key_node, key,
                        "unknown key (did you mean '%s'?); the keys of %s are: %s", closest, where,
                        keys);
    } else {
        reader_complain(reader, key_node, key, "unknown key; the keys of %s are: %s", where, keys);
    }
}

int reader_expect_mapping(config_reader *reader, const yaml_node *node, const char *name,
                          const char *const *allowed)
{
    if (reader->failed) {
        return -1;
    }
    if (node->kind != YAML_MAPPING) {
        reader_complain(reader, node, name,
                        "expected a mapping of keys (%s: followed by indented "
                        "key: value lines), got a %s",
                        name[0] != '\0' ? name : "a file", yaml_kind_name(node->kind));
        return -1;
    }
    for (size_t k = 0; k < node->count; k++) {
        const char *text = node->keys[k]->text;
        size_t j = 0;
        while (allowed[j] != NULL && strcmp(allowed[j], text) != 0) {
            j++;
        }
        if (allowed[j] == NULL) {
            complain_unknown_key(reader, node->keys[k], name, allowed);
            return -1;
        }
    }
    return 0;
}

const yaml_node *reader_find(config_reader *reader, const yaml_node *mapping, const char *name,
                             const char *key, int required, const char *what)
{
    if (reader->failed) {
        return NULL;
    }
    const yaml_node *value = yaml_mapping_get(mapping, key, NULL);
    if (value == NULL && required) {
        char full[KEY_LENGTH];
        reader_join(full, sizeof full, name, key);
        reader_complain(reader, mapping, full, "missing required key '%s' (%s)", key, what);
    }
    return value;
}

/* A scalar written without quotes, or a complaint that says what it got. */
static int expect_plain_scalar(config_reader *reader, const yaml_node *node, const char *key,
                               const char *expected)
{
    if (node->kind != YAML_SCALAR) {
        reader_complain(reader, node, key, "expected %s, got a %s", expected,
                        yaml_kind_name(node->kind));
        return -1;
    }
    if (node->text[0] == '\0' && !node->quoted) {
        reader_complain(reader, node, key, "expected %s, got nothing", expected);
        return -1;
    }
    if (node->quoted) {
        reader_complain(reader, node, key,
                        "expected %s, got the quoted text '%s' (leave out the "
                        "quotes)",
                        expected, node->text);
        return -1;
    }
    return 0;
}

static const char *range_words(number_range range)
{
    switch (range) {
    case RANGE_POSITIVE: return "greater than 0";
    case RANGE_NON_NEGATIVE: return "0 or more";
    case RANGE_NONZERO: return "not 0";
    case RANGE_ANY: break;
    }
    return "finite";
}

static int in_range(double value, number_range range)
{
    switch (range) {
    case RANGE_POSITIVE: return value > 0.0;
    case RANGE_NON_NEGATIVE: return value >= 0.0;
    case RANGE_NONZERO: return value != 0.0;
    case RANGE_ANY: break;
    }
    return 1;
}

int reader_number(config_reader *reader, const yaml_node *node, const char *key, number_range range,
                  double *value)
{
    if (reader->failed || expect_plain_scalar(reader, node, key, "a number") != 0) {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    double parsed = strtod(node->text, &end);
    if (end == node->text || *end != '\0') {
        reader_complain(reader, node, key, "expected a number, got '%s'", node->text);
        return -1;
    }
    if (!isfinite(parsed) || errno == ERANGE) {
        reader_complain(reader, node, key, "'%s' is out of range: the number must be finite%s%s",
                        node->text, range != RANGE_ANY ? " and " : "",
                        range != RANGE_ANY ? range_words(range) : "");
        return -1;
    }
    if (!in_range(parsed, range)) {
        reader_complain(reader, node, key, "%s is out of range: it must be %s", node->text,
                        range_words(range));
        return -1;
    }
    *value = parsed;
    return 0;
}

int reader_integer(config_reader *reader, const yaml_node *node, const char *key, int64_t minimum,
                   int64_t maximum, int64_t *value)
{
    if (reader->failed || expect_plain_scalar(reader, node, key, "a whole number") != 0) {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long long parsed = strtoll(node->text, &end, 10);
    if (end == node->text || *end != '\0') {
        reader_complain(reader, node, key, "expected a whole number, got '%s'", node->text);
        return -1;
    }
    if (errno == ERANGE || parsed < minimum || parsed > maximum) {
        reader_complain(reader, node, key, "%s is out of range: it must be from %lld to %lld",
                        node->text, (long long)minimum, (long long)maximum);
        return -1;
    }
    *value = (int64_t)parsed;
    return 0;
}

int reader_boolean(config_reader *reader, const yaml_node *node, const char *key, int *value)
{
    if (reader->failed || expect_plain_scalar(reader, node, key, "true or false") != 0) {
        return -1;
    }
    if (strcmp(node->text, "true") == 0) {
        *value = 1;
    } else if (strcmp(node->text, "false") == 0) {
        *value = 0;
    } else {
        reader_complain(reader, node, key, "expected true or false, got '%s'", node->text);
        return -1;
    }
    return 0;
}

int reader_string(config_reader *reader, const yaml_node *node, const char *key, char *value,
                  size_t size)
{
    if (reader->failed) {
        return -1;
    }
    if (node->kind != YAML_SCALAR || node->text[0] == '\0') {
        reader_complain(reader, node, key, "expected a text, got %s",
                        node->kind != YAML_SCALAR ? yaml_kind_name(node->kind) : "nothing");
        return -1;
    }
    if (strlen(node->text) >= size) {
        reader_complain(reader, node, key, "the text is too long (at most %zu characters)",
                        size - 1);
        return -1;
    }
    memcpy(value, node->text, strlen(node->text) + 1);
    return 0;
}

int reader_choice(config_reader *reader, const yaml_node *node, const char *key,
                  const char *const *choices, int *value)
{
    if (reader->failed) {
        return -1;
    }
    if (node->kind != YAML_SCALAR) {
        reader_complain(reader, node, key, "expected a word, got a %s", yaml_kind_name(node->kind));
        return -1;
    }
    for (int k = 0; choices[k] != NULL; k++) {
        if (strcmp(node->text, choices[k]) == 0) {
            *value = k;
            return 0;
        }
    }
    char words[256];
    list_keys(choices, words, sizeof words);
    reader_complain(reader, node, key, "'%s' is not one of: %s", node->text, words);
    return -1;
}

int reader_number_list(config_reader *reader, const yaml_node *node, const char *key,
                       number_range range, size_t minimum, size_t maximum, double *values,
                       size_t *count)
{
    if (reader->failed) {
        return -1;
    }
    if (node->kind != YAML_SEQUENCE) {
        reader_complain(reader, node, key, "expected a list of numbers ([a, b, ...]), got a %s",
                        yaml_kind_name(node->kind));
        return -1;
    }
    if (node->count < minimum || node->count > maximum) {
        if (minimum == maximum) {
            reader_complain(reader, node, key, "expected %zu numbers, got %zu", minimum,
                            node->count);
        } else {
            reader_complain(reader, node, key, "expected from %zu to %zu numbers, got %zu", minimum,
                            maximum, node->count);
        }
        return -1;
    }
    for (size_t k = 0; k < node->count; k++) {
        char item[KEY_LENGTH];
        snprintf(item, sizeof item, "%s[%zu]", key, k);
        if (reader_number(reader, node->items[k], item, range, &values[k]) != 0) {
            return -1;
        }
    }
    *count = node->count;
    return 0;
}

int reader_optional_number(config_reader *reader, const yaml_node *mapping, const char *name,
                           const char *key, number_range range, double *value)
{
    const yaml_node *node = reader_find(reader, mapping, name, key, 0, "");
    char full[KEY_LENGTH];
    return node == NULL ? -reader->failed
                        : reader_number(reader, node, reader_join(full, sizeof full, name, key),
                                        range, value);
}

int reader_optional_integer(config_reader *reader, const yaml_node *mapping, const char *name,
                            const char *key, int64_t minimum, int64_t maximum, int64_t *value)
{
    const yaml_node *node = reader_find(reader, mapping, name, key, 0, "");
    char full[KEY_LENGTH];
    return node == NULL ? -reader->failed
                        : reader_integer(reader, node, reader_join(full, sizeof full, name, key),
                                         minimum, maximum, value);
}

int reader_optional_boolean(config_reader *reader, const yaml_node *mapping, const char *name,
                            const char *key, int *value)
{
    const yaml_node *node = reader_find(reader, mapping, name, key, 0, "");
    char full[KEY_LENGTH];
    return node == NULL
               ? -reader->failed
               : reader_boolean(reader, node, reader_join(full, sizeof full, name, key), value);
}

int reader_optional_choice(config_reader *reader, const yaml_node *mapping, const char *name,
                           const char *key, const char *const *choices, int *value)
{
    const yaml_node *node = reader_find(reader, mapping, name, key, 0, "");
    char full[KEY_LENGTH];
    return node == NULL ? -reader->failed
                        : reader_choice(reader, node, reader_join(full, sizeof full, name, key),
                                        choices, value);
}

int reader_required_number(config_reader *reader, const yaml_node *mapping, const char *name,
                           const char *key, number_range range, const char *what, double *value)
{
    const yaml_node *node = reader_find(reader, mapping, name, key, 1, what);
    char full[KEY_LENGTH];
    return node == NULL ? -1
                        : reader_number(reader, node, reader_join(full, sizeof full, name, key),
                                        range, value);
}

int reader_required_integer(config_reader *reader, const yaml_node *mapping, const char *name,
                            const char *key, int64_t minimum, int64_t maximum, const char *what,
                            int64_t *value)
{
    const yaml_node *node = reader_find(reader, mapping, name, key, 1, what);
    char full[KEY_LENGTH];
    return node == NULL ? -1
                        : reader_integer(reader, node, reader_join(full, sizeof full, name, key),
                                         minimum, maximum, value);
}
