/* libFuzzer: the YAML config reader of the spart command (yaml_tree.c and
 * config_reader.c through config_read). Any input must give 0 or a sentence,
 * never a crash, a leak or undefined behaviour. */
#include "config.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".yaml");
    if (path == NULL) {
        return 0;
    }
    static config cfg; /* large: not on the stack */
    char error[CONFIG_ERROR_LENGTH];
    if (config_read(path, &cfg, error, sizeof error) != 0 && error[0] == '\0') {
        abort(); /* a refusal must say why */
    }
    return 0;
}
