#!/usr/bin/env bash
# tests/cli/cli_hardening.sh SPART SOURCE_DIR WORK_DIR CASE: the inputs that
# crashed or misled the spart command (issue 29), one CASE each, run in a
# fresh WORK_DIR/CASE folder. Damaged files are made from ones spart wrote,
# by editing their 80-character header cards (same length) or their data
# bytes in place with perl (part of every Debian and Ubuntu system).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cli_common.sh"

# card FILE OLD NEW: replace the first header card text OLD by NEW (same length).
card() {
    [[ ${#2} -eq ${#3} ]] || fail "card: '$2' and '$3' differ in length"
    OLD=$2 NEW=$3 perl -0777 -pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/' "$1"
    grep -qaF -- "$3" "$1" || fail "card: '$2' not found in $1"
}

# double_at FILE INDEX HEX: the INDEX-th value of the primary array of a
# spart cube (after its header's END card, rounded up to a 2880-byte block)
# set to the big-endian HEX.
double_at() {
    HEX=$3 INDEX=$2 perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f;
        my $at = 0; my $card;
        while (read($f, $card, 80) == 80) { $at += 80; last if $card =~ /^END {5}/; }
        $at = int(($at + 2879) / 2880) * 2880 + 8 * $ENV{INDEX};
        seek($f, $at, 0); print $f pack("H16", $ENV{HEX}); close $f' "$1"
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
    # found by tests/fuzz: bytes that are not UTF-8 in a '%' directive made
    # libfyaml loop forever
    printf '%% tests/c\377\377li\nfoo: 1\n' >directive.yaml
    timeout 60 "$spart" invert directive.yaml --output deep >stdout.txt 2>stderr.txt
    code=$?
    [[ $code -eq 3 ]] || fail "a directive that is not UTF-8: exit $code, expected 3"
    holds stderr.txt "directive.yaml:1:10: not UTF-8 text (byte 0xff)"
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
        # not under AddressSanitizer, whose shadow memory needs terabytes
        # of address space: there the limit would stop the program itself
        if (ulimit -v 3000000 && "$spart" --version) >/dev/null 2>&1; then
            ulimit -v 3000000
        fi
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

messages)
    # 8, 9, 10: sentences that lost or bent the cause.
    sed 's/bins: 4}/bin: 4}/' "$small" >bin.yaml
    run 3 invert bin.yaml --output out
    holds stderr.txt "did you mean 'bins'?"
    # a missing config file cannot be read (1), it is not a wrong one (3)
    run 1 invert missing.yaml --output out
    holds stderr.txt "cannot read the config file missing.yaml: No such file or directory"
    # a missing scene file: the system's reason, not CFITSIO's text
    sed 's/^  gaussians: {background: 0.01}$/  file: missing.fits/' "$small" >missing-scene.yaml
    run 1 invert missing-scene.yaml --output out
    holds stderr.txt "scene.file: cannot read missing.fits: No such file or directory"
    # an image in an extension: said so, not "a no array array"
    run 0 build "$small" --output operators --quiet
    sed 's/^  gaussians: {background: 0.01}$/  file: operators\/weights.fits/' "$small" >extension.yaml
    run 3 invert extension.yaml --output out
    holds stderr.txt "has no array in its primary HDU"
    # an observation of +inf is called inf, not nan
    run 0 invert "$small" --output first --quiet
    double_at first/observed.fits 5 7ff0000000000000
    sed 's|^  synthesize: {seed: 7, noise: false}$|  file: first/observed.fits|' "$small" >inf.yaml
    run 3 invert inf.yaml --output out
    holds stderr.txt "value 5 (flat C order) is inf"
    # a wrong scene shape is said before the operators are built
    sed 's/bins: 4}/bins: 5}/' "$small" >wrong-grid.yaml
    sed -i 's/^  gaussians: {background: 0.01}$/  file: first\/truth.fits/' wrong-grid.yaml
    run 3 invert wrong-grid.yaml --output out
    if grep -q "building the instrument" stdout.txt; then
        fail "the operators were built before the scene file's shape was checked"
    fi
    [[ ! -e out ]] || fail "a failed run left the output folder out/"
    # a huge sensor: the allocation that failed, with its own size
    sed 's/sensor: {pixels_x: 32, pixels_y: 16}/sensor: {pixels_x: 1000000, pixels_y: 1000000}/' \
        "$small" >huge-sensor.yaml
    # (AddressSanitizer, in the sanitizer build, must let malloc fail too)
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1" run 1 invert huge-sensor.yaml --output out
    holds stderr.txt "could not allocate the sensor's vertices (2000004000002 values"
    # a save of the library that fails on a full disk (files limited to
    # 8 KiB here): the system's reason, not CFITSIO's stack cut short
    (
        trap '' XFSZ
        ulimit -f 8
        "$spart" build "$small" --output full --quiet >stdout.txt 2>stderr.txt
        echo $? >code.txt
    )
    [[ $(cat code.txt) -eq 1 ]] || fail "a save to a full disk exited $(cat code.txt), expected 1"
    holds stderr.txt "forward.fits: closing the file: File too large"
    # 11: the summary says how the run ended in plain words; a channel
    # whose observed images are all zero is warned of before solving
    run 0 invert "$small" --output plain
    holds stdout.txt "for the solution written; stopped because the merit fell by less than 0.001"
    ! grep -q "Achieved merit" stdout.txt || fail "the summary still words the stop as ctis"
    run 0 invert "$small" --output zero --quiet
    perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f; my ($at, $card) = (0, "");
        while (read($f, $card, 80) == 80) { $at += 80; last if $card =~ /^END {5}/; }
        seek($f, int(($at + 2879) / 2880) * 2880, 0); print $f "\0" x (8 * 32 * 16)' \
        zero/observed.fits
    sed 's|^  synthesize: {seed: 7, noise: false}$|  file: zero/observed.fits|' "$small" >zero.yaml
    "$spart" invert zero.yaml --output zero-run --quiet >stdout.txt 2>stderr.txt
    holds stderr.txt "warning: the observed images of channel 0 are all zero"
    # cuda asked for by the config, not by --device: the sentence names the config
    sed 's/^  gamma: 1.0$/  gamma: 1.0\n  device: cuda/' "$small" >cuda.yaml
    "$spart" invert cuda.yaml --output cuda >stdout.txt 2>stderr.txt
    code=$?
    if [[ $code -ne 0 ]]; then
        [[ $code -eq 1 ]] || fail "device: cuda in the config exited $code, expected 0 or 1"
        holds stderr.txt "cuda.yaml: solver.device: cuda: "
        ! grep -q -- "--device" stderr.txt || fail "the sentence names --device, which was not given"
        ! grep -qi "driver version is insufficient" stderr.txt ||
            fail "no driver is not an old driver: $(cat stderr.txt)"
    fi
    ;;

*)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
