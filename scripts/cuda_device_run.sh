#!/usr/bin/env bash
# scripts/cuda_device_run.sh: on a machine with an NVIDIA GPU, build spart
# with CUDA (sm_90), run the `cuda` tests with SPART_REQUIRE_GPU=1, the
# product benchmark, and compute-sanitizer memcheck and racecheck on the
# cuda test. Logs go to $OUT (or ./cuda-logs).
#
# Where GSL, CFITSIO and cmocka are not installed, put their .deb files in
# .deps/ (see docs/benchmarks.md, "GPU product, first measurements"): they
# are unpacked under /opt/deps and found from there.
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/cuda-logs}
build=${SPART_CUDA_BUILD:-/tmp/spart-cuda-build}
mkdir -p "$out"
configure_extra=()
if compgen -G ".deps/*.deb" > /dev/null; then
    deps=/opt/deps
    mkdir -p $deps
    for f in .deps/*.deb; do dpkg -x "$f" $deps; done
    sed -i "s|/usr|$deps/usr|g" $deps/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
    export PKG_CONFIG_PATH=$deps/usr/lib/x86_64-linux-gnu/pkgconfig
    export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    configure_extra+=("-DCMAKE_PREFIX_PATH=$deps/usr")
    if ! command -v pkg-config > /dev/null; then
        configure_extra+=("-DPKG_CONFIG_EXECUTABLE=$deps/usr/bin/pkgconf")
    fi
fi

{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
    nvcc --version | tail -2
    gcc --version | head -1
    cmake --version | head -1
    command -v compute-sanitizer
} > "$out/environment.txt" 2>&1
cat "$out/environment.txt"

echo "== configure and build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPART_ENABLE_CUDA=ON -DSPART_ENABLE_FORTRAN=OFF -DSPART_BUILD_BENCHMARKS=ON \
    "${configure_extra[@]}" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target test_cuda_product test_device_api bench_cuda_product \
    >> "$out/build.log" 2>&1 || { grep -B2 -A6 -E "error" "$out/build.log" | head -60; exit 1; }
echo "built"

cd "$build" || exit 1
echo "== ctest -L cuda (SPART_REQUIRE_GPU=1)"
SPART_REQUIRE_GPU=1 ctest -L cuda -R "test_cuda_product|test_device_api" --output-on-failure \
    2>&1 | tee "$out/ctest.log" | grep -E "OK|PASSED|FAILED|SKIPPED|Passed|Failed|tests passed|Total"
ctest -R test_device_api --output-on-failure 2>&1 | tail -3

echo "== benchmark"
timeout 200 tests/bench_cuda_product 2>&1 | tee "$out/bench.log"

export SPART_CUDA_TEST_SKIP=more_than_two_to_the_31_columns
for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool (16 GiB test left out)"
    extra=()
    if [ $tool = memcheck ]; then extra=(--leak-check full); fi
    timeout 170 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 99 \
        tests/test_cuda_product > "$out/$tool.log" 2>&1
    echo "$tool exit code $?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$out/$tool.log"
done
