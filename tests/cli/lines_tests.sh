#!/usr/bin/env bash
# tests/cli/lines_tests.sh SPART SOURCE_DIR WORK_DIR CASE: the spart command
# with several spectral lines (issue 26), one behaviour per CASE, run in a
# fresh WORK_DIR/CASE folder. Exits 0 when it holds, else says what differed
# and exits 1.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cli_common.sh"

case $case_name in
example_esis_small)
    # The ESIS-like example scaled down: 4 channels, 7 lines of 6 bins, a
    # 40 x 40 scene, 3 frames of moving features; MART stops by its
    # threshold in every frame (exit 0), the scene cubes name the lines'
    # bins (SPECBIN, LINEBk, LINEWk: docs/config.md), the truth moves.
    run 0 invert "$source_dir/examples/esis-small.yaml" --output esis-small --threads 2
    holds stdout.txt "3 frames solved together"
    holds stdout.txt "3 met the stopping rule"
    for f in 0000 0001 0002; do
        for file in solution.fits truth.fits observed.fits predicted.fits history.csv; do
            [[ -s esis-small/frame-$f/$file ]] || fail "esis-small/frame-$f/$file was not written"
        done
        # the header's cards, apart (grep -q in a pipe would cut head short)
        head -c 28800 esis-small/frame-$f/solution.fits > header.txt
        for key in "CTYPE3  = 'SPECBIN '" "LINEB6  =                  36" "LINEW6  ="; do
            grep -qF -- "$key" header.txt || fail "frame-$f/solution.fits has no header card $key"
        done
    done
    cmp -s esis-small/frame-0000/truth.fits esis-small/frame-0002/truth.fits &&
        fail "the true scene of frame 2 is frame 0's: the features did not move"
    # every frame's solution correlates with its truth (frames.csv, column 7)
    awk -F, 'NR > 1 && !($7 > 0.5) { bad = 1 } END { exit bad }' esis-small/frames.csv ||
        { cat esis-small/frames.csv >&2; fail "a frame's solution barely correlates with its truth"; }
    ;;
*)
    fail "unknown case"
    ;;
esac
