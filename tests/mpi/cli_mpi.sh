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
for file in one/*; do
    name=$(basename "$file")
    if [ ! -f "ranks/$name" ]; then
        echo "cli_mpi: $ranks ranks did not write $name" >&2
        status=1
    elif [ "$name" = history.csv ]; then
        if ! cmp -s <(cut -d, -f1-$(($(head -1 "$file" | tr -cd , | wc -c))) "$file") \
                    <(cut -d, -f1-$(($(head -1 "$file" | tr -cd , | wc -c))) "ranks/$name"); then
            echo "cli_mpi: history.csv differs (besides the elapsed times)" >&2
            status=1
        fi
    elif ! cmp "$file" "ranks/$name"; then
        status=1
    fi
done
[ "$status" = 0 ] && echo "cli_mpi: $ranks ranks wrote the files of one process ($(ls one | wc -l) files)"
exit $status
