#!/usr/bin/env bash
# scripts/lint.sh BUILD_DIR: clang-format and clang-tidy over the library's
# C sources, with the build's compile_commands.json. Exit 1 on any finding.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: scripts/lint.sh BUILD_DIR}
cd "$root"
mapfile -t sources < <(git ls-files 'src/*.c' 'host/*.c' 'solvers/*.c' 2>/dev/null || ls src/*.c host/*.c)
mapfile -t headers < <(git ls-files 'src/*.h' 'solvers/*.h' 'include/*.h' 'include/spart/*.h' 'tests/unit/*.c' 'examples/*.c')
status=0
if ! clang-format --dry-run -Werror "${sources[@]}" "${headers[@]}"; then
    echo "lint: clang-format would change the files above (run clang-format -i on them)" >&2
    status=1
fi
if ! printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet; then
    echo "lint: clang-tidy found problems (above)" >&2
    status=1
fi
exit $status
