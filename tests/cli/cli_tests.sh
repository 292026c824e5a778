#!/usr/bin/env bash
# tests/cli/cli_tests.sh SPART SOURCE_DIR WORK_DIR CASE: one behaviour of the
# spart command per CASE, run in a fresh WORK_DIR/CASE folder. Exits 0 when
# the behaviour holds; otherwise prints what differed and exits 1.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cli_common.sh"

no_partial_files() {
    if find "$1" -name '.*partial-*' | grep -q .; then
        find "$1" >&2
        fail "a partial file was left in $1"
    fi
}

case $case_name in
help_and_version)
    run 0 --help
    holds stdout.txt "usage: spart <command>"
    holds stdout.txt "exit codes:"
    for command in invert build info; do
        run 0 $command --help
        holds stdout.txt "usage: spart $command"
        holds stdout.txt "1    failed"
    done
    # each command lists only the exit codes it can end with
    for command in invert build; do
        run 0 $command --help
        holds stdout.txt "4    an output file exists"
    done
    run 0 info --help
    ! grep -qE "^  (3|4|5|130) " stdout.txt || fail "info --help lists codes info never uses"
    run 0 build --help
    ! grep -qE "^  5 " stdout.txt || fail "build --help lists code 5 (MART)"
    run 0 --version
    grep -qE '^spart [0-9]+\.[0-9]+\.[0-9]+$' stdout.txt || fail "--version printed: $(cat stdout.txt)"
    run 2
    run 2 frobnicate
    holds stderr.txt "unknown command 'frobnicate'"
    run 2 invert --bogus
    holds stderr.txt "unknown option '--bogus'"
    run 2 invert --threads 0
    run 2 invert --device gpu
    holds stderr.txt "--device takes host, cuda or auto"
    run 2 build
    holds stderr.txt "needs a file: CONFIG.yaml"
    run 2 info a.fits b.fits
    ;;

bad_config)
    # A typo: file, line, column and key, exit code 3.
    sed 's/^  plate_scale:/  plate_scal:/' "$small" >typo.yaml
    run 3 invert typo.yaml
    holds stderr.txt "typo.yaml:9:3: instrument.plate_scal: unknown key (did you mean 'plate_scale'?)"
    # A FITS scene whose shape does not fit the grid: the key's position.
    run 0 invert "$small" --output first --quiet
    sed 's/bins: 4}/bins: 5}/' "$small" >wrong-grid.yaml
    sed -i 's/^  gaussians: {background: 0.01}$/  file: first\/truth.fits/' wrong-grid.yaml
    run 3 invert wrong-grid.yaml --output second
    holds stderr.txt "wrong-grid.yaml:17:9: scene.file: "
    holds stderr.txt "holds a 4x8x8 array (NumPy order), but the config's grid needs 5x8x8"
    [[ ! -e second/solution.fits ]] || fail "a run with a bad scene file wrote outputs"
    ;;

build_and_info)
    run 0 build "$small" --output operators
    for side in forward backward; do
        [[ -s operators/$side.fits ]] || fail "operators/$side.fits was not written"
        run 0 info operators/$side.fits
        holds stdout.txt "spart regridder file"
        holds stdout.txt "entries"
        holds stdout.txt "value type:  float64"
    done
    [[ -s operators/weights.fits ]] || fail "operators/weights.fits was not written"
    run 0 info operators/weights.fits
    holds stdout.txt "spart weights file"
    holds stdout.txt "orthogonal shape: 2x4 (8 elements)"
    run 0 info operators/forward.fits
    holds stdout.txt "input shape: 1x4x8x8"
    holds stdout.txt "output shape: 2x1x32x16"
    run 0 invert "$small" --output run --quiet
    run 0 info run/solution.fits
    holds stdout.txt "spart scene file"
    holds stdout.txt "shape:       4x8x8 (NumPy order), float64 values in erg / (Angstrom cm2 s sr)"
    holds stdout.txt "axis 1, HPLN-TAN      8 values from -8.75 to 8.75 arcsec"
    run 0 info run/observed.fits
    holds stdout.txt "spart images file"
    holds stdout.txt "shape:       2x32x16 (NumPy order), float64 values in electron"
    run 1 info run/history.csv
    holds stderr.txt "is not a FITS file"
    run 1 info missing.fits
    holds stderr.txt "no such file"
    ;;

reuse_operators)
    # Operators saved by `spart build` and loaded by `spart invert` (with
    # observations from a file) give the same solution, bit for bit.
    reuse_setup
    run 0 invert reuse.yaml --output second --quiet
    cmp -s first/solution.fits second/solution.fits || fail "the loaded operators' solution differs"
    cmp -s first/predicted.fits second/predicted.fits || fail "the predicted images differ"
    [[ ! -e second/observed.fits ]] || fail "observations read from a file were copied"
    # Operators of other grids are refused, pointing at the key.
    sed 's|scene_x: {min: -10, max: 10, cells: 8}|scene_x: {min: -10, max: 10, cells: 9}|' \
        reuse.yaml >other-grid.yaml
    run 3 invert other-grid.yaml --output third
    holds stderr.txt "other-grid.yaml:15:14: instrument.operators: forward.fits maps 1x4x8x8 values to 2x1x32x16, but the config's grids need 1x4x9x8 to 2x1x32x16"
    # Another sensor: the observations file no longer fits, said first
    # (input files are checked before any operator is built or loaded).
    sed 's|sensor: {pixels_x: 32, pixels_y: 16}|sensor: {pixels_x: 30, pixels_y: 16}|' \
        reuse.yaml >other-sensor.yaml
    run 3 invert other-sensor.yaml --output third
    holds stderr.txt "observations.file: first/observed.fits holds a 2x32x16 array (NumPy order), but the config's grid needs 2x30x16"
    ;;

not_converged)
    # Reaching max_iterations under the threshold rule: exit 5, outputs written.
    sed 's/^  gamma: 1.0$/  gamma: 1.0\n  max_iterations: 2/' "$small" >two.yaml
    run 5 invert two.yaml --output two
    holds stderr.txt "MART did not meet its stopping rule: Max number of iterations (2) exceeded. (outputs written)"
    [[ -s two/solution.fits && -s two/history.csv ]] || fail "the outputs were not written"
    [[ $(wc -l <two/history.csv) -eq 3 ]] || fail "history.csv should hold a header and 2 rows"
    ;;

no_overwrite)
    run 0 invert "$small" --output out --quiet
    before=$(cksum out/solution.fits)
    run 4 invert "$small" --output out
    holds stderr.txt "out/solution.fits already exists; nothing was written (give --overwrite"
    [[ $(cksum out/solution.fits) == "$before" ]] || fail "solution.fits changed without --overwrite"
    no_partial_files out
    # Inputs are never modified, outputs are replaced on request.
    input_before=$(cksum "$small")
    run 0 invert "$small" --output out --overwrite --quiet
    [[ $(cksum "$small") == "$input_before" ]] || fail "the config file changed"
    no_partial_files out
    ;;

failed_write)
    # A disk that fills up: files may not grow past 4 KiB (SIGXFSZ ignored,
    # so a write fails as on a full disk). Nothing partial may be left.
    (
        trap '' XFSZ
        ulimit -f 4
        "$spart" invert "$small" --output full --quiet >stdout.txt 2>stderr.txt
        echo $? >code.txt
    )
    [[ $(cat code.txt) -eq 1 ]] || fail "a failed write exited $(cat code.txt), expected 1"
    holds stderr.txt "cannot write full/solution.fits"
    holds stderr.txt "no partial file is left"
    if [[ -n $(ls -A full) ]]; then
        ls -la full >&2
        fail "a failed write left files in the output folder"
    fi
    ;;

interrupted)
    # An endless run (a fixed count of ten million iterations), stopped by
    # Ctrl-C: it says so, exits 130 and writes nothing.
    sed 's/^  gamma: 1.0$/  gamma: 1.0\n  stop: count\n  max_iterations: 10000000/' "$small" >endless.yaml
    "$spart" invert endless.yaml --output stopped --quiet >stdout.txt 2>stderr.txt &
    pid=$!
    sleep 1
    kill -INT $pid
    wait $pid
    code=$?
    [[ $code -eq 130 ]] || fail "an interrupted run exited $code, expected 130"
    holds stderr.txt "interrupted after"
    [[ -z $(ls -A stopped 2>/dev/null) ]] || fail "an interrupted run left files in stopped/"
    ;;

device)
    # auto always works; cuda works on a GPU and otherwise says why, exit 1.
    run 0 invert "$small" --output auto --device auto --quiet
    "$spart" invert "$small" --output cuda --device cuda >stdout.txt 2>stderr.txt
    code=$?
    if [[ $code -ne 0 ]]; then
        [[ $code -eq 1 ]] || fail "--device cuda exited $code, expected 0 or 1"
        holds stderr.txt "spart invert: --device cuda: "
        [[ ! -e cuda/solution.fits ]] || fail "a failed --device cuda wrote outputs"
    else
        holds stdout.txt "MART on the cuda device"
        cmp -s <(tail -c +2881 auto/solution.fits) <(tail -c +2881 cuda/solution.fits) ||
            echo "note: the cuda solution differs from the host one" >&2
    fi
    ;;

example_default)
    # `spart invert` with no config runs the shipped examples/ideal-ctis.yaml.
    run 0 invert --output example --threads 2
    holds stdout.txt "spart invert $source_dir/examples/ideal-ctis.yaml"
    holds stdout.txt "stopped because the merit fell by less than 0.001 in the last iteration"
    for file in solution.fits predicted.fits observed.fits truth.fits history.csv scene.png \
        images.png merit.png; do
        [[ -s example/$file ]] || fail "example/$file was not written"
    done
    no_partial_files example
    ;;

example_psf)
    # The shipped config with a PSF (composed by FFT), at full size.
    run 0 invert "$source_dir/examples/ideal-ctis-psf.yaml" --output example-psf --threads 2
    holds stdout.txt "stopped because the merit fell by less than 0.001 in the last iteration"
    for file in solution.fits predicted.fits history.csv scene.png; do
        [[ -s example-psf/$file ]] || fail "example-psf/$file was not written"
    done
    no_partial_files example-psf
    # --device cuda: the PSF by FFT goes to the GPU with the operators;
    # without a usable GPU the run stops and says why (exit 1).
    "$spart" invert "$source_dir/examples/ideal-ctis-psf.yaml" --output example-psf-cuda \
        --device cuda --threads 2 >stdout.txt 2>stderr.txt
    code=$?
    if [[ $code -ne 0 ]]; then
        [[ $code -eq 1 ]] || fail "--device cuda with the PSF exited $code, expected 0 or 1"
        holds stderr.txt "spart invert: --device cuda: "
    else
        holds stdout.txt "MART on the cuda device"
        holds stdout.txt "stopped because the merit fell by less than 0.001 in the last iteration"
    fi
    ;;

*)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
