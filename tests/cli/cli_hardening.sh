#!/usr/bin/env bash
# tests/cli/cli_hardening.sh SPART SOURCE_DIR WORK_DIR CASE: the inputs that
# crashed or misled the spart command (issue 29), one CASE each, run in a
# fresh WORK_DIR/CASE folder. Damaged files are made from ones spart wrote,
# by editing their 80-character header cards (same length) or their data
# bytes in place with perl (part of every Debian and Ubuntu system).
set -uo pipefail

spart=$1
source_dir=$2
work=$3/$4
case_name=$4
small=$source_dir/tests/cli/small.yaml

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

# run EXPECTED_CODE ARGS...: run spart, keep stdout and stderr, check the code.
run() {
    local expected=$1
    shift
    "$spart" "$@" >stdout.txt 2>stderr.txt
    local code=$?
    if [[ $code -ne $expected ]]; then
        echo "--- stdout" >&2
        cat stdout.txt >&2
        echo "--- stderr" >&2
        cat stderr.txt >&2
        fail "spart $* exited $code, expected $expected"
    fi
}

holds() {
    grep -qF -- "$2" "$1" || {
        cat "$1" >&2
        fail "$1 does not say: $2"
    }
}

# card FILE OLD NEW: replace the first header card text OLD by NEW (same length).
card() {
    [[ ${#2} -eq ${#3} ]] || fail "card: '$2' and '$3' differ in length"
    OLD=$2 NEW=$3 perl -0777 -pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/' "$1"
    grep -qaF -- "$3" "$1" || fail "card: '$2' not found in $1"
}

# double_at FILE INDEX HEX: the INDEX-th value of the last data block of a
# spart cube (its data fit one 2880-byte block) set to the big-endian HEX.
double_at() {
    local size offset
    size=$(stat -c %s "$1")
    offset=$((size - 2880 + 8 * $2))
    HEX=$3 OFFSET=$offset perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f;
        seek($f, $ENV{OFFSET}, 0); print $f pack("H16", $ENV{HEX}); close $f' "$1"
}

# operators/ from `spart build` and reuse.yaml that loads them (with the
# observations of a run in first/).
reuse_setup() {
    run 0 build "$small" --output operators --quiet
    run 0 invert "$small" --output first --quiet
    sed -e 's|^  exposure_time: 20.0$|  exposure_time: 20.0\n  operators: operators|' \
        -e 's|^  synthesize: {seed: 7, noise: false}$|  file: first/observed.fits|' \
        "$small" >reuse.yaml
}

case $case_name in
huge_values)
    # 1: a scene of huge finite values draws its pictures;
    # the colour index of a NaN fraction ran far outside the table (SIGSEGV).
    run 0 invert "$small" --output first --quiet
    double_at first/truth.fits 0 7fe1ccf385ebc8a0 # 1e308
    double_at first/truth.fits 1 ffe1ccf385ebc8a0 # -1e308
    sed 's/^  gaussians: {background: 0.01}$/  file: first\/truth.fits/' "$small" >huge.yaml
    "$spart" invert huge.yaml --output huge --quiet >stdout.txt 2>stderr.txt
    code=$?
    ((code < 128)) || fail "spart invert on a scene of 1e308 died of signal $((code - 128))"
    [[ -s huge/scene.png ]] || fail "scene.png was not drawn (exit $code): $(cat stderr.txt)"
    ;;

deep_yaml)
    # 2: 100,000 nested lists overflowed the stack of the tree builder.
    perl -e 'print "instrument: ", "[" x 100000, "\n"' >deep.yaml
    run 3 invert deep.yaml --output deep
    holds stderr.txt "deep.yaml:1:"
    holds stderr.txt "nested more than 64 deep"
    perl -e 'print "{a: " x 200000, "\n"' >deep-mappings.yaml
    run 3 invert deep-mappings.yaml --output deep
    holds stderr.txt "nested more than 64 deep"
    ;;

info_huge_axis)
    # 4: NAXIS2 = INT64_MAX overflowed the value count: a bogus shape, exit 0.
    run 0 invert "$small" --output run --quiet
    card run/solution.fits "NAXIS2  =                    8" "NAXIS2  =  9223372036854775807"
    run 1 info run/solution.fits
    holds stderr.txt "more than the file's 5760 bytes can hold"
    ;;

huge_tfields)
    # 5: a table header claiming 5e7 columns made CFITSIO allocate 7.8 GB
    # before anything failed (under a 3 GB limit here: an allocation that
    # large fails instead of succeeding); 1e12 gave a wrong message.
    reuse_setup
    cp operators/forward.fits forward.fits
    card operators/forward.fits "TFIELDS =                    1" "TFIELDS =             50000000"
    (
        ulimit -v 3000000
        "$spart" invert reuse.yaml --output out >stdout.txt 2>stderr.txt
        echo $? >code.txt
    )
    [[ $(cat code.txt) -eq 3 ]] || fail "exit $(cat code.txt), expected 3: $(cat stderr.txt)"
    holds stderr.txt "extension ROW_PTR (HDU 2) declares TFIELDS = 5e+07 columns (FITS allows 0 to 999)"
    cp forward.fits operators/forward.fits
    card operators/forward.fits "TFIELDS =                    1" "TFIELDS =        1000000000000"
    run 3 invert reuse.yaml --output out
    holds stderr.txt "declares TFIELDS = 1e+12 columns"
    ;;

truncated_operator)
    # 8: a cut regridder file said "there is no extension named ENTRIES".
    reuse_setup
    size=$(stat -c %s operators/forward.fits)
    truncate -s $((size - 3000)) operators/forward.fits
    run 3 invert reuse.yaml --output out
    holds stderr.txt "it is truncated"
    [[ ! -e out ]] || fail "a failed run left the output folder out/"
    ;;

interrupt_late)
    # 6: SIGINT during the last writing steps was ignored (exit 0). The
    # signal is raised at each named step (SPART_TEST_INTERRUPT, a test
    # hook of the command): every one must end with 130.
    for step in predicted.fits history.csv scene.png images.png merit.png exit; do
        SPART_TEST_INTERRUPT=$step "$spart" invert "$small" --output "late-$step" --quiet \
            >stdout.txt 2>stderr.txt
        code=$?
        [[ $code -eq 130 ]] || fail "SIGINT before $step: exit $code, expected 130"
        holds stderr.txt "interrupted"
    done
    ;;

*)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
