#!/usr/bin/env bash
# scripts/lint.sh BUILD_DIR: clang-format and clang-tidy over spart's sources,
# clang-tidy with the build's compile_commands.json. Exit 1 on any finding.
#
#   clang-format: the C sources and headers of src/ (every module folder),
#                 host/, solvers/, include/, tests/unit/ and examples/, and the
#                 CUDA kernels (kernels/*.cu, *.cuh; clang-format reads them
#                 as C++, <<< >>> launches included).
#   clang-tidy:   the C sources of src/, host/ and solvers/ (.clang-tidy).
#                 Not the CUDA kernels: the compile database holds nvcc's
#                 command lines, which clang cannot take, and with clang's own
#                 CUDA mode (-x cuda --cuda-host-only) clang 14 cannot parse
#                 the CUDA 12/13 headers (its runtime wrapper includes
#                 texture_fetch_functions.h, gone since CUDA 12), while
#                 -nocudainc leaves threadIdx and the intrinsics undeclared.
#
# Files are found by pattern (git ls-files, tracked and new untracked ones), so
# sources moved between module folders are still linted. CLANG_FORMAT and
# CLANG_TIDY name the programs (default: clang-format, clang-tidy on PATH).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: scripts/lint.sh BUILD_DIR}
build=$(cd "$build" && pwd)
clang_format=${CLANG_FORMAT:-clang-format}
clang_tidy=${CLANG_TIDY:-clang-tidy}
cd "$root"

# files PATTERN...: the existing files under $root that match a glob pattern
# ('**' crosses folders), one a line, sorted.
files() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        local specs=() p
        for p in "$@"; do specs+=(":(glob)$p"); done
        git ls-files --cached --others --exclude-standard -- "${specs[@]}"
    else # a source tree without git: the same patterns through find
        local p
        for p in "$@"; do
            find "${p%%/*}" -type f -path "${p//\*\*\//*}" 2>/dev/null || true
        done
    fi | sort -u | while IFS= read -r f; do
        if [[ -f $f ]]; then printf '%s\n' "$f"; fi
    done
}

mapfile -t sources < <(files 'src/**/*.c' 'host/**/*.c' 'solvers/**/*.c')
mapfile -t formatted < <(files 'src/**/*.[ch]' 'host/**/*.[ch]' 'solvers/**/*.[ch]' \
    'include/**/*.h' 'tests/unit/**/*.[ch]' 'examples/**/*.[ch]' \
    'kernels/**/*.cu' 'kernels/**/*.cuh')
if ((${#sources[@]} == 0)); then
    echo "lint: no sources found under $root" >&2
    exit 1
fi
if [[ ! -f $build/compile_commands.json ]]; then
    echo "lint: $build/compile_commands.json is missing (configure with CMake first)" >&2
    exit 1
fi

status=0
if ! "$clang_format" --dry-run -Werror "${formatted[@]}"; then
    echo "lint: clang-format would change the files above (run clang-format -i on them)" >&2
    status=1
fi
if ! printf '%s\n' "${sources[@]}" |
    xargs -P "$(nproc)" -n 4 "$clang_tidy" -p "$build" --quiet; then
    echo "lint: clang-tidy found problems (above)" >&2
    status=1
fi
exit $status
