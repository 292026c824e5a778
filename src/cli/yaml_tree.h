/*
 * src/cli/yaml_tree.h: a YAML file read into a small tree whose every node
 * remembers where it starts in the file (line and column, from 1), so that
 * each complaint about a config file can point at the text it is about.
 *
 * libfyaml parses; its document API does not tell where a mapping or a
 * sequence starts, so the tree is built from its events instead. Only what
 * a config file needs is kept: scalars (with their quoting), sequences and
 * mappings. Anchors, aliases and tags are refused, as are repeated keys
 * (libfyaml's event parser lets them through).
 */
#ifndef SPART_CLI_YAML_TREE_H
#define SPART_CLI_YAML_TREE_H

#include <stddef.h>

typedef enum yaml_kind { YAML_SCALAR, YAML_SEQUENCE, YAML_MAPPING } yaml_kind;

typedef struct yaml_node yaml_node;

struct yaml_node {
    yaml_kind kind;
    int line;   /* from 1 */
    int column; /* from 1 */
    char *text; /* scalars: the value, NUL-terminated */
    int quoted; /* scalars: written in quotes or as a block, so never a number */
    /* Sequences: count items. Mappings: count pairs, keys[k] (scalars) and
     * items[k] their values. */
    size_t count;
    yaml_node **items;
    yaml_node **keys;
};

/* Read `path` into *root. On failure returns nonzero with a sentence
 * "<path>:<line>:<column>: <what is wrong>" (or "<path>: ..." when there
 * is no position) in `error`. An empty file gives an empty mapping. */
int yaml_tree_read(const char *path, yaml_node **root, char *error, size_t error_size);

/* Free a tree (accepts NULL). */
void yaml_tree_free(yaml_node *node);

/* The value of `key` in a mapping, or NULL; *key_node (may be NULL)
 * receives the key's node. */
yaml_node *yaml_mapping_get(const yaml_node *mapping, const char *key, yaml_node **key_node);

/* "scalar", "sequence" or "mapping", for sentences. */
const char *yaml_kind_name(yaml_kind kind);

#endif /* SPART_CLI_YAML_TREE_H */
