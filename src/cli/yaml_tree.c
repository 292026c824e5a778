/*
 * src/cli/yaml_tree.c: a YAML file into a tree of positioned nodes, from
 * libfyaml's event parser (see yaml_tree.h for why events).
 */
#include "yaml_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

/* What one read carries: the parser, where its diagnostics go, and the
 * sentence of the first thing that went wrong. */
typedef struct yaml_reader {
    struct fy_parser *parser;
    struct fy_diag *diag;
    const char *path;
    char *error;
    size_t error_size;
    int failed;
    int depth; /* collections open around the node being read */
} yaml_reader;

/* Lists and mappings nested deeper than this are refused: the tree is
 * built by recursion, and a config file of 100,000 nested '[' would
 * otherwise overflow the stack. spart's deepest config key is 3 levels. */
#define YAML_MAX_DEPTH 64

static void reader_fail(yaml_reader *reader, int line, int column, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Record the first failure only: later ones are consequences of it. */
static void reader_fail(yaml_reader *reader, int line, int column, const char *format, ...)
{
    if (reader->failed) {
        return;
    }
    reader->failed = 1;
    int used;
    if (line > 0) {
        used =
            snprintf(reader->error, reader->error_size, "%s:%d:%d: ", reader->path, line, column);
    } else {
        used = snprintf(reader->error, reader->error_size, "%s: ", reader->path);
    }
    if (used < 0 || (size_t)used >= reader->error_size) {
        return;
    }
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(reader->error + used, reader->error_size - (size_t)used, format, arguments);
    va_end(arguments);
}

/* The parser stopped on a syntax error: quote libfyaml's first collected
 * diagnostic, which carries its own line and column (from 1). */
static void fail_with_diagnostic(yaml_reader *reader)
{
    void *iterator = NULL;
    struct fy_diag_error *diagnostic = fy_diag_errors_iterate(reader->diag, &iterator);
    if (diagnostic != NULL && diagnostic->msg != NULL) {
        reader_fail(reader, diagnostic->line, diagnostic->column, "not valid YAML: %s",
                    diagnostic->msg);
    } else {
        reader_fail(reader, 0, 0, "not valid YAML (the parser gave no reason)");
    }
}

static yaml_node *new_node(yaml_kind kind, const struct fy_event *event)
{
    yaml_node *node = calloc(1, sizeof *node);
    if (node == NULL) {
        return NULL;
    }
    node->kind = kind;
    const struct fy_mark *mark = fy_event_start_mark((struct fy_event *)event);
    if (mark != NULL) {
        node->line = mark->line + 1;
        node->column = mark->column + 1;
    }
    return node;
}

/* Append `node` to `*array` of *count entries (grown one at a time: config
 * files are small). */
static int append(yaml_node ***array, size_t count, yaml_node *node)
{
    yaml_node **grown = realloc(*array, (count + 1) * sizeof(yaml_node *));
    if (grown == NULL) {
        return -1;
    }
    grown[count] = node;
    *array = grown;
    return 0;
}

static struct fy_event *next_event(yaml_reader *reader)
{
    struct fy_event *event = fy_parser_parse(reader->parser);
    if (event == NULL) {
        fail_with_diagnostic(reader);
    }
    return event;
}

static yaml_node *read_node(yaml_reader *reader, struct fy_event *event);

/* Anchors, tags and aliases would let one value stand for another, or
 * change its type: a config file has no use for them. */
static int refuse_extras(yaml_reader *reader, const struct fy_event *event, struct fy_token *anchor,
                         struct fy_token *tag)
{
    if (anchor == NULL && tag == NULL) {
        return 0;
    }
    const struct fy_mark *mark = fy_event_start_mark((struct fy_event *)event);
    int line = mark != NULL ? mark->line + 1 : 0;
    int column = mark != NULL ? mark->column + 1 : 0;
    reader_fail(reader, line, column, "YAML %s are not supported in spart config files",
                anchor != NULL ? "anchors (&name)" : "tags (!name)");
    return -1;
}

static yaml_node *read_scalar(yaml_reader *reader, struct fy_event *event)
{
    if (refuse_extras(reader, event, event->scalar.anchor, event->scalar.tag) != 0) {
        return NULL;
    }
    yaml_node *node = new_node(YAML_SCALAR, event);
    size_t length = 0;
    const char *text = fy_token_get_text(event->scalar.value, &length);
    if (node == NULL || text == NULL || (node->text = malloc(length + 1)) == NULL) {
        yaml_tree_free(node);
        reader_fail(reader, 0, 0, "out of memory while reading");
        return NULL;
    }
    memcpy(node->text, text, length);
    node->text[length] = '\0';
    node->quoted = fy_token_scalar_style(event->scalar.value) != FYSS_PLAIN;
    return node;
}

/* Read items until the event `end` closes the collection. Mappings
 * alternate keys and values. */
static yaml_node *read_collection(yaml_reader *reader, struct fy_event *start, yaml_kind kind,
                                  enum fy_event_type end)
{
    if (reader->depth >= YAML_MAX_DEPTH) {
        const struct fy_mark *mark = fy_event_start_mark(start);
        reader_fail(reader, mark != NULL ? mark->line + 1 : 0, mark != NULL ? mark->column + 1 : 0,
                    "lists and mappings are nested more than %d deep", YAML_MAX_DEPTH);
        return NULL;
    }
    yaml_node *node = new_node(kind, start);
    if (node == NULL) {
        reader_fail(reader, 0, 0, "out of memory while reading");
        return NULL;
    }
    reader->depth++;
    for (;;) {
        struct fy_event *event = next_event(reader);
        if (event == NULL) {
            break;
        }
        if (event->type == end) {
            fy_parser_event_free(reader->parser, event);
            reader->depth--;
            return node;
        }
        yaml_node *key = NULL;
        if (kind == YAML_MAPPING) {
            key = read_node(reader, event);
            if (key != NULL && key->kind != YAML_SCALAR) {
                reader_fail(reader, key->line, key->column, "a key must be a plain word, not a %s",
                            yaml_kind_name(key->kind));
            }
            if (key == NULL || reader->failed || (event = next_event(reader)) == NULL) {
                yaml_tree_free(key);
                break;
            }
        }
        yaml_node *value = read_node(reader, event);
        if (value == NULL) {
            yaml_tree_free(key);
            break;
        }
        if ((kind == YAML_MAPPING && append(&node->keys, node->count, key) != 0) ||
            append(&node->items, node->count, value) != 0) {
            yaml_tree_free(key);
            yaml_tree_free(value);
            reader_fail(reader, 0, 0, "out of memory while reading");
            break;
        }
        node->count++;
    }
    reader->depth--;
    yaml_tree_free(node);
    return NULL;
}

/* The node that starts with `event` (which this call frees). */
static yaml_node *read_node(yaml_reader *reader, struct fy_event *event)
{
    yaml_node *node = NULL;
    switch (event->type) {
    case FYET_SCALAR: node = read_scalar(reader, event); break;
    case FYET_SEQUENCE_START:
        if (refuse_extras(reader, event, event->sequence_start.anchor, event->sequence_start.tag) ==
            0) {
            node = read_collection(reader, event, YAML_SEQUENCE, FYET_SEQUENCE_END);
        }
        break;
    case FYET_MAPPING_START:
        if (refuse_extras(reader, event, event->mapping_start.anchor, event->mapping_start.tag) ==
            0) {
            node = read_collection(reader, event, YAML_MAPPING, FYET_MAPPING_END);
        }
        break;
    case FYET_ALIAS: {
        const struct fy_mark *mark = fy_event_start_mark(event);
        reader_fail(reader, mark != NULL ? mark->line + 1 : 0, mark != NULL ? mark->column + 1 : 0,
                    "YAML aliases (*name) are not supported in spart config files");
        break;
    }
    default: reader_fail(reader, 0, 0, "unexpected YAML event %d", (int)event->type); break;
    }
    fy_parser_event_free(reader->parser, event);
    return node;
}

/* Skip the stream and document starts; return the first event of the
 * document's root, or NULL at the end of an empty stream. */
static struct fy_event *first_content_event(yaml_reader *reader, int *empty)
{
    *empty = 0;
    for (;;) {
        struct fy_event *event = next_event(reader);
        if (event == NULL) {
            return NULL;
        }
        if (event->type == FYET_STREAM_START || event->type == FYET_DOCUMENT_START) {
            fy_parser_event_free(reader->parser, event);
            continue;
        }
        if (event->type == FYET_STREAM_END || event->type == FYET_DOCUMENT_END) {
            fy_parser_event_free(reader->parser, event);
            *empty = 1;
            return NULL;
        }
        return event;
    }
}

/* After the root: the document must end and no second one follow. */
static void expect_single_document(yaml_reader *reader)
{
    for (;;) {
        struct fy_event *event = next_event(reader);
        if (event == NULL) {
            return;
        }
        enum fy_event_type type = event->type;
        const struct fy_mark *mark = fy_event_start_mark(event);
        int line = mark != NULL ? mark->line + 1 : 0;
        int column = mark != NULL ? mark->column + 1 : 0;
        fy_parser_event_free(reader->parser, event);
        if (type == FYET_STREAM_END) {
            return;
        }
        if (type == FYET_DOCUMENT_START) {
            reader_fail(reader, line, column, "a config file holds one YAML document, not several");
            return;
        }
    }
}

/* Two equal keys in one mapping: libfyaml's event parser does not look. */
static int check_repeated_keys(yaml_reader *reader, const yaml_node *node)
{
    if (node == NULL || node->kind == YAML_SCALAR) {
        return 0;
    }
    for (size_t k = 0; k < node->count; k++) {
        if (node->kind == YAML_MAPPING) {
            for (size_t j = 0; j < k; j++) {
                if (strcmp(node->keys[j]->text, node->keys[k]->text) == 0) {
                    reader_fail(reader, node->keys[k]->line, node->keys[k]->column,
                                "key '%s' appears twice in one mapping (first on line %d)",
                                node->keys[k]->text, node->keys[j]->line);
                    return -1;
                }
            }
        }
        if (check_repeated_keys(reader, node->items[k]) != 0) {
            return -1;
        }
    }
    return 0;
}

static yaml_node *empty_mapping(void)
{
    yaml_node *node = calloc(1, sizeof *node);
    if (node != NULL) {
        node->kind = YAML_MAPPING;
        node->line = 1;
        node->column = 1;
    }
    return node;
}

static yaml_node *read_document(yaml_reader *reader)
{
    int empty = 0;
    struct fy_event *event = first_content_event(reader, &empty);
    if (event == NULL) {
        return empty && !reader->failed ? empty_mapping() : NULL;
    }
    yaml_node *root = read_node(reader, event);
    if (root != NULL && !reader->failed) {
        expect_single_document(reader);
        check_repeated_keys(reader, root);
    }
    if (reader->failed) {
        yaml_tree_free(root);
        return NULL;
    }
    return root;
}

/* Config files are small: a larger file is not one. */
#define YAML_MAX_BYTES (16 * 1024 * 1024)

/* The length of the UTF-8 sequence starting at text (at most `left`
 * bytes), or 0 when it is not well formed (overlong forms, surrogates and
 * values above U+10FFFF included). */
static size_t utf8_sequence(const unsigned char *text, size_t left)
{
    unsigned char c = text[0];
    size_t length = c < 0x80                   ? 1
                    : (c >= 0xc2 && c <= 0xdf) ? 2
                    : (c & 0xf0) == 0xe0       ? 3
                    : (c >= 0xf0 && c <= 0xf4) ? 4
                                               : 0;
    if (length == 0 || length > left) {
        return 0;
    }
    for (size_t k = 1; k < length; k++) {
        if ((text[k] & 0xc0) != 0x80) {
            return 0;
        }
    }
    if ((c == 0xe0 && text[1] < 0xa0) || (c == 0xed && text[1] > 0x9f) ||
        (c == 0xf0 && text[1] < 0x90) || (c == 0xf4 && text[1] > 0x8f)) {
        return 0;
    }
    return length;
}

/* libfyaml reads a missing file without a useful message, and loops
 * forever on some bytes that are not UTF-8 (in a '%' directive, found by
 * tests/fuzz): look first, and let only UTF-8 text without NUL through. */
static int check_readable(yaml_reader *reader)
{
    FILE *file = fopen(reader->path, "rb");
    if (file == NULL) {
        reader_fail(reader, 0, 0, "cannot read the config file: %s", strerror(errno));
        return -1;
    }
    unsigned char *text = malloc(YAML_MAX_BYTES + 1);
    size_t size = text != NULL ? fread(text, 1, YAML_MAX_BYTES + 1, file) : 0;
    int failed = text == NULL || ferror(file);
    fclose(file);
    if (failed) {
        free(text);
        reader_fail(reader, 0, 0, "cannot read the config file");
        return -1;
    }
    if (size > YAML_MAX_BYTES) {
        free(text);
        reader_fail(reader, 0, 0, "more than %d bytes: not a config file", YAML_MAX_BYTES);
        return -1;
    }
    int line = 1;
    int column = 1;
    for (size_t at = 0; at < size;) {
        size_t length = text[at] != 0 ? utf8_sequence(text + at, size - at) : 0;
        if (length == 0) {
            reader_fail(reader, line, column, "not UTF-8 text (byte 0x%02x)", text[at]);
            free(text);
            return -1;
        }
        line += text[at] == '\n';
        column = text[at] == '\n' ? 1 : column + 1;
        at += length;
    }
    free(text);
    return 0;
}

int yaml_tree_read(const char *path, yaml_node **root, char *error, size_t error_size)
{
    yaml_reader reader = {NULL, NULL, path, error, error_size, 0, 0};
    *root = NULL;
    error[0] = '\0';
    if (check_readable(&reader) != 0) {
        return -1;
    }
    struct fy_diag_cfg diag_config;
    fy_diag_cfg_default(&diag_config);
    diag_config.fp = NULL;
    diag_config.colorize = false;
    reader.diag = fy_diag_create(&diag_config);
    if (reader.diag != NULL) {
        fy_diag_set_collect_errors(reader.diag, true);
        struct fy_parse_cfg parse_config;
        memset(&parse_config, 0, sizeof parse_config);
        parse_config.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2;
        parse_config.diag = reader.diag;
        reader.parser = fy_parser_create(&parse_config);
    }
    if (reader.parser == NULL || fy_parser_set_input_file(reader.parser, path) != 0) {
        reader_fail(&reader, 0, 0, "cannot start the YAML parser");
    } else {
        *root = read_document(&reader);
    }
    fy_parser_destroy(reader.parser);
    fy_diag_destroy(reader.diag);
    return *root != NULL ? 0 : -1;
}

void yaml_tree_free(yaml_node *node)
{
    if (node == NULL) {
        return;
    }
    for (size_t k = 0; k < node->count; k++) {
        yaml_tree_free(node->items[k]);
        if (node->keys != NULL) {
            yaml_tree_free(node->keys[k]);
        }
    }
    free(node->items);
    free(node->keys);
    free(node->text);
    free(node);
}

yaml_node *yaml_mapping_get(const yaml_node *mapping, const char *key, yaml_node **key_node)
{
    if (key_node != NULL) {
        *key_node = NULL;
    }
    if (mapping == NULL || mapping->kind != YAML_MAPPING) {
        return NULL;
    }
    for (size_t k = 0; k < mapping->count; k++) {
        if (strcmp(mapping->keys[k]->text, key) == 0) {
            if (key_node != NULL) {
                *key_node = mapping->keys[k];
            }
            return mapping->items[k];
        }
    }
    return NULL;
}

const char *yaml_kind_name(yaml_kind kind)
{
    switch (kind) {
    case YAML_SCALAR: return "single value";
    case YAML_SEQUENCE: return "list";
    case YAML_MAPPING: return "mapping";
    }
    return "node";
}
