#!/usr/bin/env bash
# tests/fuzz/run_fuzz.sh: build the libFuzzer harnesses of tests/fuzz with
# clang against a built spart, make their seed corpora, and run each for a
# bounded time. Registered as the test `fuzz` by tests/fuzz/register.cmake;
# by hand (docs/fuzzing.md):
#
#   bash tests/fuzz/run_fuzz.sh --source . --build build \
#       --library build/libspart.a --spart build/src/cli/spart \
#       --work /tmp/spart-fuzz --seconds 600 --runs 0 --seed 0 [--only fuzz_config]
#       [--clang clang]
#
# The test runs each fuzzer from a fixed seed for at most --runs inputs
# (and --seconds): the same inputs in the same order on every machine, so a
# slower or faster CI machine tries a prefix of what passed here, never new
# ground; `--runs 0 --seed 0` (no limit, a random seed) is for real fuzzing.
#
# Exits 0 when no fuzzer found anything; otherwise 1, naming the fuzzer,
# with the reproducing input left in WORK/<fuzzer>/ (crash-*, leak-*).
set -euo pipefail

clang=clang
seconds=8
runs=4000
seed=1
only=
libraries=
while (($#)); do
    case $1 in
    --clang) clang=$2 ;;
    --source) source_dir=$(cd "$2" && pwd) ;;
    --build) build_dir=$(cd "$2" && pwd) ;;
    --library) library=$(realpath "$2") ;;
    --spart) spart=$(realpath "$2") ;;
    --work) work=$2 ;;
    --seconds) seconds=$2 ;;
    --runs) runs=$2 ;;
    --seed) seed=$2 ;;
    --only) only=$2 ;;
    --libraries) libraries=$2 ;;
    *)
        echo "run_fuzz.sh: unknown argument $1" >&2
        exit 2
        ;;
    esac
    shift 2
done
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ---- build --------------------------------------------------------------------------
cmake -S "$source_dir/tests/fuzz" -B "$work/build" -DCMAKE_C_COMPILER="$clang" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPART_SOURCE_DIR="$source_dir" \
    -DSPART_BINARY_DIR="$build_dir" -DSPART_STATIC_LIBRARY="$library" \
    -DSPART_EXTRA_LIBRARIES="$libraries" >"$work/configure.log" ||
    { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j 2 >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

# ---- seed corpora ------------------------------------------------------------------------
# The configs: the shipped examples and the tests' small one. The FITS
# files: what spart writes for that small instrument (weights, operators,
# scene cubes), made once.
seeds=$work/seeds
if [[ ! -f $seeds/.done ]]; then
    rm -rf "$seeds"
    mkdir -p "$seeds"/{config,weights,regridder,cube}
    cp "$source_dir"/examples/*.yaml "$source_dir/tests/cli/small.yaml" "$seeds/config/"
    (
        cd "$seeds"
        "$spart" build "$source_dir/tests/cli/small.yaml" --output operators --quiet
        "$spart" invert "$source_dir/tests/cli/small.yaml" --output run --quiet
    ) >"$work/seeds.log" 2>&1 || { cat "$work/seeds.log"; exit 1; }
    cp "$seeds/operators/weights.fits" "$seeds/weights/"
    cp "$seeds/operators/forward.fits" "$seeds/operators/backward.fits" "$seeds/regridder/"
    cp "$seeds/run/truth.fits" "$seeds/run/solution.fits" "$seeds/cube/"
    cp "$seeds/run/observed.fits" "$seeds/cube/"
    touch "$seeds/.done"
fi

# ---- run --------------------------------------------------------------------------------
declare -A corpus=([fuzz_config]=config [fuzz_weights_fits]=weights
    [fuzz_regridder_fits]=regridder [fuzz_cube]=cube)
failed=0
for fuzzer in fuzz_config fuzz_weights_fits fuzz_regridder_fits fuzz_cube; do
    [[ -z $only || $only == "$fuzzer" ]] || continue
    folder=$work/$fuzzer
    mkdir -p "$folder/corpus"
    # the corpus grows across runs in WORK; the seeds are read, never written
    if (cd "$folder" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$work/build/$fuzzer" -max_total_time="$seconds" -runs="$runs" -seed="$seed" \
        -max_len=65536 -timeout=20 \
        -rss_limit_mb=2048 -print_final_stats=1 corpus "$seeds/${corpus[$fuzzer]}" \
        >"$folder/log.txt" 2>&1); then
        echo "ok: $fuzzer, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$folder/log.txt" |
            grep -o '[0-9]*$') inputs (seed $seed, at most $runs inputs and ${seconds} s)"
    else
        echo "FAIL: $fuzzer found a problem; the input is in $folder:" >&2
        tail -n 60 "$folder/log.txt" >&2
        failed=1
    fi
done
exit $failed
