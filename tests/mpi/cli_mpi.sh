#!/usr/bin/env bash
# tests/mpi/cli_mpi.sh SPART MPIEXEC NPFLAG RANKS CONFIG WORKDIR [MPIEXEC FLAGS...]:
# `spart invert CONFIG` as one process and under `MPIEXEC NPFLAG RANKS`
# (MART's operators split over the ranks, rank 0 writing) must write the
# same files byte for byte; history.csv may differ only in its last column
# (elapsed seconds). Label `mpi`, tests/modules/mpi.cmake.
set -euo pipefail
spart=$1 mpiexec=$2 npflag=$3 ranks=$4 config=$5 work=$6
shift 6
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$spart" invert "$config" --quiet --output one
"$mpiexec" "$npflag" "$ranks" "$@" "$spart" invert "$config" --quiet --output ranks
status=0
files=$(cd one && find . -type f | sort)
for name in $files; do
    if [ ! -f "ranks/$name" ]; then
        echo "cli_mpi: $ranks ranks did not write $name" >&2
        status=1
    elif [ "$(basename "$name")" = history.csv ]; then
        columns=$(($(head -1 "one/$name" | tr -cd , | wc -c)))
        if ! cmp -s <(cut -d, -f1-$columns "one/$name") <(cut -d, -f1-$columns "ranks/$name"); then
            echo "cli_mpi: $name differs (besides the elapsed times)" >&2
            status=1
        fi
    elif ! cmp "one/$name" "ranks/$name"; then
        status=1
    fi
done
if [ "$(cd ranks && find . -type f | sort)" != "$files" ]; then
    echo "cli_mpi: $ranks ranks wrote other files than one process" >&2
    status=1
fi
[ "$status" = 0 ] && echo "cli_mpi: $ranks ranks wrote the files of one process ($(echo "$files" | wc -l) files)"
exit $status
