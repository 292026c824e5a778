#!/usr/bin/env bash
# scripts/cuda_device_run.sh: on a machine with an NVIDIA GPU, build spart
# with CUDA (sm_90), run the `cuda` tests with SPART_REQUIRE_GPU=1, the
# benchmarks, and compute-sanitizer memcheck and racecheck on every cuda
# test. Logs go to $OUT (or ./cuda-logs).
#
# Where GSL, CFITSIO and cmocka are not installed, put their .deb files in
# .deps/ (on a Debian machine: cd .deps && apt-get download libgsl27
# libgslcblas0 libgsl-dev libcfitsio10 libcfitsio-dev libcmocka0
# libcmocka-dev) and carry that folder: they are unpacked under /opt/deps
# and found from there.
#
# SPART_CUDA_BENCH selects the benchmarks, one or a comma-separated list
# of: "assembly" (the default), "product" (bench_cuda_product, then its
# --skew-parts), "skew" (--skew-parts alone), "ctis" (--ctis: the CTIS-shaped
# operators of bench_regridder and their transposes), "both" (assembly and product),
# "mart" (MART on host and device), "convolve" (a PSF folded into weights
# on host and device), "psf" (MART with a PSF, FFT against folded,
# bench_mart_psf), "esis" (bench_cuda_product --esis: the two
# ESIS-scale operators, about 60 GB of host and 40 GB of device memory),
# "calls" (the host time per product call alone:
# bench_cuda_assembly --cases x), "graph" (bench_graph_floor: a CUDA graph
# of K empty or small kernel nodes) or "none"; SPART_BENCH_ARGS adds arguments to
# bench_cuda_assembly; SPART_SANITIZER_TIMEOUT bounds each sanitizer run
# (seconds, default 240); SPART_CUDA_TESTS names the cuda tests built and
# run (default: all of them); SPART_SANITIZE_TESTS names the cuda tests the
# sanitizers run (default: those); SPART_BASELINE_SOURCE names
# another source tree (the main checkout, say) whose own mart and product
# benchmarks are built beside this one and run (those that SPART_CUDA_BENCH
# names) after this tree's, before the sanitizers, for figures before and
# after a change in one run (built in SPART_BASELINE_BUILD, default
# /tmp/spart-baseline-build; SPART_CUDA_BUILD names this tree's build, so
# that calls on a machine another tree used keep their own builds).
# SPART_NCU_MART=N profiles the MART kernels, SPART_NCU_PRODUCT=1 the
# product kernels of a long row (below).
set -uo pipefail
started=$SECONDS
root=$(pwd)
out=${OUT:-$root/cuda-logs}
build=${SPART_CUDA_BUILD:-/tmp/spart-cuda-build}
benches=",${SPART_CUDA_BENCH:-assembly},"
benches=${benches//,both,/,assembly,product,}
wants() { [[ $benches == *",$1,"* ]]; }
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
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
    nvcc --version | tail -2
    gcc --version | head -1
    cmake --version | head -1
    nproc
    command -v compute-sanitizer
} > "$out/environment.txt" 2>&1
cat "$out/environment.txt"

cuda_tests=(test_cuda_product test_cuda_product_rows test_cuda_assembly test_cuda_transpose test_cuda_mart test_cuda_mart_runs
    test_cuda_convolve test_cuda_psf test_cuda_from_arrays)
if [ -n "${SPART_CUDA_TESTS:-}" ]; then read -r -a cuda_tests <<< "$SPART_CUDA_TESTS"; fi
read -r -a sanitized_tests <<< "${SPART_SANITIZE_TESTS:-${cuda_tests[*]}}"
echo "== configure and build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPART_ENABLE_CUDA=ON -DSPART_ENABLE_FORTRAN=OFF -DSPART_BUILD_CLI=OFF \
    -DSPART_BUILD_BENCHMARKS=ON "${configure_extra[@]}" > "$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 1; }
targets=("${cuda_tests[@]}" test_device_api test_convolve_device_errors
    test_device_from_arrays_errors)
if wants assembly || wants calls; then targets+=(bench_cuda_assembly); fi
if wants product || wants esis || wants skew || wants ctis; then targets+=(bench_cuda_product); fi
if wants mart; then targets+=(bench_mart_device); fi
if wants convolve; then targets+=(bench_cuda_convolve); fi
if wants psf; then targets+=(bench_mart_psf); fi
if wants graph; then targets+=(bench_graph_floor); fi
baseline=${SPART_BASELINE_SOURCE:-}
baseline_build=${SPART_BASELINE_BUILD:-/tmp/spart-baseline-build}
if [ -n "$baseline" ]; then
    baseline=$(cd "$baseline" && pwd)
    (cmake -S "$baseline" -B "$baseline_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DSPART_ENABLE_CUDA=ON -DSPART_ENABLE_FORTRAN=OFF \
        -DSPART_BUILD_CLI=OFF -DSPART_BUILD_BENCHMARKS=ON "${configure_extra[@]}" &&
        cmake --build "$baseline_build" -j"$(($(nproc) / 2))" \
            --target bench_mart_device bench_cuda_product) > "$out/baseline_build.log" 2>&1 &
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >> "$out/build.log" 2>&1 ||
    { grep -B2 -A6 -E "error" "$out/build.log" | head -60; exit 1; }
echo "built in $((SECONDS - started)) s"
wait

cd "$build" || exit 1
echo "== ctest -L cuda (SPART_REQUIRE_GPU=1)"
cuda_pattern="^($(IFS='|'; echo "${cuda_tests[*]}"))\$"
SPART_REQUIRE_GPU=1 ctest -L cuda -R "$cuda_pattern" --output-on-failure > "$out/ctest.log" 2>&1
grep -E "Test +#|tests passed|Total Test|FAILED|\[  FAILED|Failure|error" "$out/ctest.log" | head -40
ctest -R "test_device_api|test_convolve_device_errors|test_device_from_arrays_errors" \
    --output-on-failure 2>&1 | tail -3

echo "== benchmarks ($benches)"
: > "$out/bench.log"
if wants assembly; then
    # shellcheck disable=SC2086
    timeout 300 tests/bench_cuda_assembly ${SPART_BENCH_ARGS:-} \
        --json "$out/bench_cuda_assembly.json" 2>&1 |
        tee -a "$out/bench.log"
fi
if wants calls; then
    timeout 100 tests/bench_cuda_assembly --cases x 2>&1 | tee -a "$out/bench.log"
fi
if wants product; then
    timeout 200 tests/bench_cuda_product 2>&1 | tee -a "$out/bench.log"
    timeout 100 tests/bench_cuda_product --skew-parts 2>&1 | tee -a "$out/bench.log"
fi
if wants ctis; then
    timeout 200 tests/bench_cuda_product --ctis 2>&1 | tee -a "$out/bench.log"
fi
if wants skew; then
    timeout 100 tests/bench_cuda_product --skew-parts 2>&1 | tee -a "$out/bench.log"
fi
if wants esis; then
    timeout 400 tests/bench_cuda_product --esis --repeat 5 2>&1 | tee -a "$out/bench.log"
fi
if wants mart; then
    timeout 300 tests/bench_mart_device --json "$out/bench_mart_device.json" 2>&1 |
        tee -a "$out/bench.log"
fi
if wants convolve; then
    timeout 300 tests/bench_cuda_convolve --json "$out/bench_cuda_convolve.json" 2>&1 |
        tee -a "$out/bench.log"
fi
if wants psf; then
    timeout 300 tests/bench_mart_psf 2>&1 | tee -a "$out/bench.log"
fi
if wants graph; then
    timeout 100 tests/bench_graph_floor 2>&1 | tee -a "$out/bench.log"
fi

# SPART_NCU_MART=N: Nsight Compute's view (speed of light, occupancy, warp
# states, memory) of the MART kernels of one 3-iteration device solve of
# the N x N scene (bench_mart_device --profile N: the fused update and the
# merits, then the forward product), in $out/ncu_mart.txt. Run here, where
# the libraries of .deps are on the library path (the bench fails to start
# without them).
if [ -n "${SPART_NCU_MART:-}" ]; then
    sections=(--section SpeedOfLight --section Occupancy --section WarpStateStats
        --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
        --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats
        --section SchedulerStats --section SourceCounters)
    {
        timeout 60 ncu --clock-control none "${sections[@]}" \
            -k regex:"backproject_update|merits_" -c 2 \
            tests/bench_mart_device --profile "$SPART_NCU_MART"
        timeout 60 ncu --clock-control none "${sections[@]}" -k regex:product_rows -s 1 -c 1 \
            tests/bench_mart_device --profile "$SPART_NCU_MART"
    } > "$out/ncu_mart.txt" 2>&1
    grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy" \
        "$out/ncu_mart.txt" | head -40
    # The fused update's machine code with each instruction's executions
    # and stall samples (where its warps wait), in $out/ncu_update_sass.csv.
    timeout 90 ncu --clock-control none --set full -k regex:backproject_update -c 1 \
        -o /tmp/ncu_update -f tests/bench_mart_device --profile "$SPART_NCU_MART" > /dev/null 2>&1
    ncu --import /tmp/ncu_update.ncu-rep --page source --print-source sass --csv \
        > "$out/ncu_update_sass.csv" 2>&1
    ncu --import /tmp/ncu_update.ncu-rep --page details 2>&1 |
        grep -E "Duration|Registers Per|Achieved Occupancy|DRAM Throughput|Executed Instructions  " |
        sed "s/^/update (full set): /"
fi

# SPART_NCU_PRODUCT=1: the same view of the product kernels for the long
# row alone among empty rows (bench_cuda_product --long-row), in
# $out/ncu_product.txt.
if [ -n "${SPART_NCU_PRODUCT:-}" ]; then
    timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
        --section SchedulerStats -k regex:"product_rows|add_chunk_sums" -s 4 -c 4 \
        tests/bench_cuda_product --long-row --repeat 2 > "$out/ncu_product.txt" 2>&1
    grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Block Limit" \
        "$out/ncu_product.txt" | head -60
fi

# The baseline's figures come before the sanitizers, so that a time limit
# cuts the checks (which can be rerun) rather than the comparison.
if [ -n "$baseline" ]; then
    echo "== baseline benchmarks ($baseline), $((SECONDS - started)) s in"
    if [ -x "$baseline_build/tests/bench_mart_device" ]; then
        : > "$out/baseline_bench.log"
        if wants mart; then
            timeout 120 "$baseline_build/tests/bench_mart_device" 2>&1 |
                tee -a "$out/baseline_bench.log"
        fi
        if wants product; then
            timeout 120 "$baseline_build/tests/bench_cuda_product" 2>&1 |
                tee -a "$out/baseline_bench.log"
            timeout 100 "$baseline_build/tests/bench_cuda_product" --skew-parts 2>&1 |
                tee -a "$out/baseline_bench.log"
        fi
        if wants skew; then
            timeout 100 "$baseline_build/tests/bench_cuda_product" --skew-parts 2>&1 |
                tee -a "$out/baseline_bench.log"
        fi
        if wants ctis; then
            timeout 200 "$baseline_build/tests/bench_cuda_product" --ctis 2>&1 |
                tee -a "$out/baseline_bench.log"
        fi
    else
        echo "the baseline did not build:"
        tail -20 "$out/baseline_build.log"
    fi
fi

echo "== compute-sanitizer memcheck and racecheck over the cuda tests (16 GiB test left out), $((SECONDS - started)) s in"
export SPART_CUDA_TEST_SKIP=more_than_two_to_the_31_columns
: > "$out/sanitizers.log"
for tool in memcheck racecheck; do
    for t in "${sanitized_tests[@]}"; do
        extra=()
        if [ $tool = memcheck ]; then extra=(--leak-check full); fi
        (timeout "${SPART_SANITIZER_TIMEOUT:-240}" compute-sanitizer --tool $tool "${extra[@]}" \
            --error-exitcode 99 "tests/$t" > "/tmp/$tool-$t.log" 2>&1
         echo "$tool $t exit code $?" >> "/tmp/$tool-$t.log") &
    done
done
wait
for tool in memcheck racecheck; do
    for t in "${sanitized_tests[@]}"; do
        cat "/tmp/$tool-$t.log" >> "$out/sanitizers.log"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|PASSED|FAILED|exit code" \
            "/tmp/$tool-$t.log" | sed "s/^/$tool $t: /"
    done
done
echo "== done in $((SECONDS - started)) s"
