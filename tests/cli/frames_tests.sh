#!/usr/bin/env bash
# tests/cli/frames_tests.sh SPART SOURCE_DIR WORK_DIR CASE: `spart invert`
# over a sequence of frames (src/cli/invert_frames.c), one behaviour per
# CASE, in a fresh WORK_DIR/CASE folder, on tests/cli/small.yaml. Exits 0
# when the behaviour holds; otherwise prints what differed and exits 1.
#   synthesized  3 synthesised frames, one folder each and frames.csv; frame
#                1 the same files as a one-frame run of seed 8, byte for byte
#   from_files   the same frames read back: a pattern of one-frame files, and
#                one cube with a frame axis (written here, Python's standard
#                library only), give the same solutions byte for byte
#   bad_inputs   a pattern that matches nothing, a cube of the wrong shape
#                (exit 3 with the file named); outputs that exist (exit 4)
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cli_common.sh"

same_file() {
    cmp -s "$1" "$2" || fail "$1 and $2 differ"
}

# frames.yaml: small.yaml with 3 noisy frames (seeds 7, 8, 9), into frames/.
sed -e 's|^  synthesize: {seed: 7, noise: false}$|  synthesize: {seed: 7, noise: true, frames: 3}|' \
    -e 's|^  folder: small-output$|  folder: frames|' "$small" >frames.yaml
grep -q "frames: 3" frames.yaml || fail "small.yaml changed: frames.yaml was not made"

# files.yaml OBSERVATIONS FOLDER: small.yaml reading observations.file.
files_config() {
    sed -e '/^scene:$/,/^$/d' \
        -e "s|^  synthesize: {seed: 7, noise: false}\$|  file: \"$1\"|" \
        -e "s|^  folder: small-output\$|  folder: $2|" "$small"
}

case $case_name in
synthesized)
    run 0 invert frames.yaml
    holds stdout.txt "3 frames solved together"
    for f in 0 1 2; do
        for name in solution.fits predicted.fits observed.fits truth.fits history.csv; do
            [[ -s frames/frame-000$f/$name ]] || fail "frames/frame-000$f/$name is missing"
        done
    done
    [[ $(wc -l <frames/frames.csv) -eq 4 ]] || fail "frames.csv has not 3 rows"
    holds frames/frames.csv "1,frame-0001,"
    # frame 1 is seed 8: a one-frame run of seed 8 writes the same files
    sed -e 's|^  synthesize: {seed: 7, noise: false}$|  synthesize: {seed: 8, noise: true}|' \
        -e 's|^  folder: small-output$|  folder: single|' "$small" >single.yaml
    run 0 invert single.yaml --quiet
    for name in solution.fits predicted.fits observed.fits truth.fits; do
        same_file frames/frame-0001/$name single/$name
    done
    # the history too, but its elapsed times (the frames ran together)
    diff <(cut -d, -f1-6 frames/frame-0001/history.csv) <(cut -d, -f1-6 single/history.csv) \
        >/dev/null || fail "the histories of frame 1 and of the one-frame run differ"
    ;;

from_files)
    run 0 invert frames.yaml --quiet
    files_config "frames/frame-*/observed.fits" pattern >pattern.yaml
    run 0 invert pattern.yaml
    holds stdout.txt "3 frames solved together"
    # one cube with a frame axis, from the three files' arrays
    python3 - frames/frame-000{0,1,2}/observed.fits cube.fits <<'EOF' || fail "no cube written"
import sys

def read(path):
    data = open(path, "rb").read()
    cards, offset = {}, 0
    while True:
        card = data[offset:offset + 80].decode("ascii")
        offset += 80
        if card.startswith("END"):
            break
        if "=" in card[:10]:
            cards[card[:8].strip()] = card[10:].split("/")[0].strip()
    start = (offset + 2879) // 2880 * 2880
    dims = [int(cards["NAXIS%d" % (k + 1)]) for k in range(int(cards["NAXIS"]))]
    count = 8 * dims[0] * dims[1] * dims[2]
    assert cards["BITPIX"] == "-64"
    return dims, data[start:start + count]

arrays = [read(p) for p in sys.argv[1:-1]]
dims = arrays[0][0] + [len(arrays)]
header = ["SIMPLE  =                    T", "BITPIX  =                  -64",
          "NAXIS   =                    4"]
header += ["NAXIS%d  = %20d" % (k + 1, n) for k, n in enumerate(dims)]
header += ["END"]
text = "".join(card.ljust(80) for card in header).encode("ascii")
text += b" " * (-len(text) % 2880)
body = b"".join(a[1] for a in arrays)
body += b"\0" * (-len(body) % 2880)
open(sys.argv[-1], "wb").write(text + body)
EOF
    files_config "cube.fits" cube >cube.yaml
    run 0 invert cube.yaml --quiet
    for f in 0 1 2; do
        same_file pattern/frame-000$f/solution.fits frames/frame-000$f/solution.fits
        same_file cube/frame-000$f/solution.fits frames/frame-000$f/solution.fits
    done
    ;;

bad_inputs)
    files_config "nowhere/frame-*.fits" none >none.yaml
    run 3 invert none.yaml
    holds stderr.txt "no file matches the pattern"
    holds stderr.txt "observations.file"
    run 0 invert "$small" --output one --quiet
    files_config "one/solution.fits" wrong >wrong.yaml # a scene, not images
    run 3 invert wrong.yaml
    holds stderr.txt "one/solution.fits holds a"
    holds stderr.txt "or frames x that"
    run 0 invert frames.yaml --quiet
    run 4 invert frames.yaml
    holds stderr.txt "frames.csv"
    run 0 invert frames.yaml --quiet --overwrite
    ;;

*)
    fail "unknown case"
    ;;
esac
exit 0
