# tests/cli/cli_common.sh: what the command's test scripts share, sourced by
# cli_tests.sh, cli_hardening.sh, lines_tests.sh and frames_tests.sh after
# their own `set -uo pipefail`.
# Their arguments are SPART SOURCE_DIR WORK_DIR CASE: this sets spart,
# source_dir, case_name, work (WORK_DIR/CASE, made afresh and entered) and
# small (the small config every case starts from), and defines fail, run,
# holds and reuse_setup.

spart=$1
source_dir=$2
work=$3/$4
case_name=$4
small=$source_dir/tests/cli/small.yaml

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

# fail MESSAGE...: say which case failed and why, and exit 1.
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

# holds FILE TEXT: FILE contains TEXT (literally).
holds() {
    grep -qF -- "$2" "$1" || {
        cat "$1" >&2
        fail "$1 does not say: $2"
    }
}

# reuse_setup: operators/ from `spart build`, the observations of a run in
# first/, and reuse.yaml, the small config that loads both.
reuse_setup() {
    run 0 build "$small" --output operators --quiet
    run 0 invert "$small" --output first --quiet
    sed -e 's|^  exposure_time: 20.0$|  exposure_time: 20.0\n  operators: operators|' \
        -e 's|^  synthesize: {seed: 7, noise: false}$|  file: first/observed.fits|' \
        "$small" >reuse.yaml
}
