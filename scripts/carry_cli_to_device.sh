#!/usr/bin/env bash
# scripts/carry_cli_to_device.sh BUILD_DIR: put the spart command and the
# Fortran device test, built on this machine with CUDA (sm_90), with the
# shared libraries they need that the GPU machine lacks (it has no libfyaml,
# cairo or gfortran), the examples, and a script that runs them there, into
# .carry-lead/ (add `/.carry-*/` to .git/info/exclude). Then, with the
# device tool: run carry [".deps", ".carry-lead"], command
# `bash .carry-lead/run_carried.sh` (writes under $OUT).
set -euo pipefail
build=${1:?usage: carry_cli_to_device.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
carry=$root/.carry-lead
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib" "$carry/examples"
cp "$build/src/cli/spart" "$build/tests/fortran/test_fortran_device" "$carry/bin/"
cp "$root"/examples/*.yaml "$carry/examples/"
# Every library the two programs load, except the C runtime, the CUDA
# libraries and those the GPU machine's Ubuntu has in newer versions.
for lib in $(ldd "$carry/bin/spart" "$carry/bin/test_fortran_device" | awk '/=>/ {print $3}' |
    sort -u); do
    case $lib in
        */libc.so* | */libm.so* | */libpthread* | */libdl.* | */ld-linux* | */librt*) ;;
        */libcuda* | */libcufft* | */libstdc++* | */libgcc_s* | */libgomp* | */libfftw3*) ;;
        *) cp -L "$lib" "$carry/lib/" ;;
    esac
done
cat > "$carry/run_carried.sh" <<'RUN'
#!/bin/bash
# On the GPU machine, from the repository root.
carry=$PWD/.carry-lead
export LD_LIBRARY_PATH=$carry/lib:${LD_LIBRARY_PATH:-}
SPART_REQUIRE_GPU=1 "$carry/bin/test_fortran_device" > "$OUT/fortran_device.log" 2>&1
echo "test_fortran_device (SPART_REQUIRE_GPU=1): exit code $?"
grep -v "^ok" "$OUT/fortran_device.log" | head
for config in ideal-ctis ideal-ctis-psf; do
    for device in host cuda; do
        "$carry/bin/spart" invert "$carry/examples/$config.yaml" --device $device \
            --output "/tmp/out-$config-$device" --overwrite -q > "/tmp/cli-$config-$device.log" 2>&1
        echo "spart invert $config --device $device: exit code $?"
        tail -2 "/tmp/cli-$config-$device.log"
    done
    if cmp -s <(cut -d, -f1-10 "/tmp/out-$config-host/history.csv") \
        <(cut -d, -f1-10 "/tmp/out-$config-cuda/history.csv"); then
        echo "$config: host and cuda merits the same bits, every iteration"
    else
        echo "$config: host and cuda merits differ (expected with an FFT PSF: cuFFT against FFTW)"
    fi
done
RUN
du -sh "$carry"
