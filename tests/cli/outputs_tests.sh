#!/usr/bin/env bash
# tests/cli/outputs_tests.sh SPART SOURCE_DIR WORK_DIR CASE: how `spart
# invert` writes its outputs (src/cli/results.c, fits_cube.c,
# invert_frames.c), one behaviour per CASE, in a fresh WORK_DIR/CASE
# folder, on tests/cli/small.yaml. Exits 0 when the behaviour holds;
# otherwise prints what differed and exits 1.
#   float32_outputs      outputs.value_type: float32 writes every cube as
#                        float32 (spart info says so; half the values'
#                        bytes), the history and frames as before; a
#                        value type that is not one is refused (exit 3)
#   frames_failed_write  a sequence of frames whose writer fails (a file
#                        size limit, as a full disk) while the solve goes
#                        on: exit 1, the sentence names the file, and no
#                        file is left partial or half-made
# (frames_tests.sh's `synthesized` checks that the frames written by the
# writer thread are a one-frame run's files, byte for byte)
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cli_common.sh"

# frames.yaml: small.yaml with 3 noisy frames (seeds 7, 8, 9), into frames/.
sed -e 's|^  synthesize: {seed: 7, noise: false}$|  synthesize: {seed: 7, noise: true, frames: 3}|' \
    -e 's|^  folder: small-output$|  folder: frames|' "$small" >frames.yaml
grep -q "frames: 3" frames.yaml || fail "small.yaml changed: frames.yaml was not made"

case $case_name in
float32_outputs)
    run 0 invert "$small" --output double --quiet
    sed 's|^  folder: small-output$|  folder: single\n  value_type: float32|' "$small" >single.yaml
    grep -q "value_type: float32" single.yaml || fail "single.yaml was not made"
    run 0 invert single.yaml --quiet
    for name in solution predicted observed truth; do
        run 0 info single/$name.fits
        holds stdout.txt "float32 values"
        run 0 info double/$name.fits
        holds stdout.txt "float64 values"
    done
    # the history as before, but its elapsed times
    diff <(rev double/history.csv | cut -d, -f2- | rev) <(rev single/history.csv | cut -d, -f2- | rev) \
        >/dev/null || fail "the history changed with the cubes' type"
    # the data unit: half the bytes, in whole 2880-byte blocks
    single_bytes=$(stat -c %s single/predicted.fits)
    double_bytes=$(stat -c %s double/predicted.fits)
    (( single_bytes < double_bytes && single_bytes % 2880 == 0 )) ||
        fail "predicted.fits: $single_bytes bytes in float32 against $double_bytes in float64"
    sed 's|^  folder: small-output$|  folder: bad\n  value_type: float16|' "$small" >bad.yaml
    run 3 invert bad.yaml --quiet
    holds stderr.txt "outputs.value_type"
    ;;

frames_failed_write)
    (
        trap '' XFSZ
        ulimit -f 4
        "$spart" invert frames.yaml --quiet >stdout.txt 2>stderr.txt
        echo $? >code.txt
    )
    [[ $(cat code.txt) -eq 1 ]] || fail "a failed write exited $(cat code.txt), expected 1"
    holds stderr.txt "cannot write frames/frame-0000/solution.fits"
    holds stderr.txt "no partial file is left"
    left=$(find frames -type f | head -5)
    [[ -z $left ]] || fail "a failed write left files: $left"
    ;;

*)
    fail "no such case"
    ;;
esac
echo "PASS ($case_name)"
