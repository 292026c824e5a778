#!/usr/bin/env bash
# tests/cli/lines_tests.sh SPART SOURCE_DIR WORK_DIR CASE: the spart command
# with several spectral lines (issue 26), one behaviour per CASE, run in a
# fresh WORK_DIR/CASE folder. Exits 0 when it holds, else says what differed
# and exits 1.
set -uo pipefail

spart=$1
source_dir=$2
work=$3/$4
case_name=$4

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

holds() {
    grep -qF -- "$2" "$1" || {
        cat "$1" >&2
        fail "$1 does not say: $2"
    }
}

case $case_name in
example_esis_small)
    # The ESIS-like example scaled down: 4 channels, 7 lines of 6 bins, a
    # 40 x 40 scene; MART stops by its threshold (exit 0) and the scene
    # cubes name the lines' bins (SPECBIN, LINEBk, LINEWk: docs/config.md).
    "$spart" invert "$source_dir/examples/esis-small.yaml" --output esis-small --threads 2 \
        >stdout.txt 2>stderr.txt
    code=$?
    [[ $code -eq 0 ]] || { cat stdout.txt stderr.txt >&2; fail "spart invert exited $code"; }
    holds stdout.txt "4 channels, 42 wavelength bins, 40 x 40 scene, 224 x 48 sensor"
    holds stdout.txt "stopped because the merit fell by less than 0.01"
    for file in solution.fits truth.fits observed.fits predicted.fits history.csv scene.png; do
        [[ -s esis-small/$file ]] || fail "esis-small/$file was not written"
    done
    for key in "CTYPE3  = 'SPECBIN '" "LINEB6  =                  36" "LINEW6  ="; do
        head -c 28800 esis-small/solution.fits | grep -qF -- "$key" ||
            fail "solution.fits has no header card $key"
    done
    # the intensity comes back (the summary's correlation is of voxels)
    correlation=$(sed -n 's/.*correlation of the solution with the true scene: \([0-9.]*\).*/\1/p' \
        stdout.txt)
    awk -v r="$correlation" 'BEGIN { exit !(r > 0.5) }' ||
        fail "the solution correlates with the truth at $correlation only"
    ;;
*)
    fail "unknown case"
    ;;
esac
