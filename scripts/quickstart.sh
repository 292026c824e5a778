#!/usr/bin/env bash
# scripts/quickstart.sh: set up, build and run spart on a fresh Debian or
# Ubuntu machine. The README's two quick-start commands:
#
#   bash scripts/quickstart.sh        # set up, build, run the main example
#   bash scripts/quickstart.sh test   # set up, build, run the whole test suite
#
# Set-up installs what is missing (Debian packages with apt-get when run as
# root, the pinned Python reference packages into build/venv), then builds
# into build/ (and, for `test`, a sanitizer build into build-sanitize/).
# Environment: BUILD_DIR (default build), JOBS (default: the core count).
set -euo pipefail

mode=${1:-main}
case "$mode" in
main | test) ;;
*)
    echo "usage: bash scripts/quickstart.sh [main|test]" >&2
    exit 2
    ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

# ---- Debian packages -------------------------------------------------------------
packages=(build-essential cmake pkg-config libgsl-dev libcfitsio-dev libcmocka-dev
    libfyaml-dev libcairo2-dev libfftw3-dev gfortran python3 python3-venv python3-dev)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
# python3, python3-venv and python3-dev may come from elsewhere (pyenv,
# conda): only a working `python3 -m venv` matters, and Python.h, which the
# Python package's binding (python/, test python_package) compiles against.
if python3 -m venv --help >/dev/null 2>&1; then
    filtered=()
    for package in "${missing[@]}"; do
        [[ $package == python3 || $package == python3-venv ]] || filtered+=("$package")
    done
    missing=("${filtered[@]+"${filtered[@]}"}")
fi
if python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' 2>/dev/null; then
    filtered=()
    for package in "${missing[@]}"; do
        [[ $package == python3-dev ]] || filtered+=("$package")
    done
    missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "quickstart: missing Debian packages: ${missing[*]}" >&2
        echo "quickstart: install them (sudo apt-get install ${missing[*]}) and run again" >&2
        exit 1
    fi
    echo "quickstart: installing ${missing[*]}"
    # A fresh cloud machine often runs apt at boot (unattended upgrades):
    # wait for its locks, up to 10 minutes, instead of failing. apt-get
    # waits for dpkg's lock itself (DPkg::Lock::Timeout); `update` is
    # retried while the lists are locked.
    wait_lock=(-o DPkg::Lock::Timeout=600)
    for attempt in $(seq 60); do
        apt-get "${wait_lock[@]}" update -qq && break
        ((attempt < 60)) || exit 1
        echo "quickstart: apt is busy (another apt or dpkg holds its lock); waiting"
        sleep 10
    done
    DEBIAN_FRONTEND=noninteractive apt-get "${wait_lock[@]}" install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

# The fuzz test (tests/fuzz, label fuzz) needs clang and its libFuzzer
# runtime (Debian's libclang-rt-NN-dev): optional, so installed only as root
# for `test`, and a failure here only leaves that test out.
if [[ $mode == test && $(id -u) -eq 0 ]]; then
    if ! command -v clang >/dev/null; then
        echo "quickstart: installing clang (for the fuzz test)"
        apt-get -o DPkg::Lock::Timeout=600 update -qq || true
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
            --no-install-recommends clang >/dev/null || true
    fi
    if command -v clang >/dev/null; then
        runtime=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev
        if apt-cache show "$runtime" >/dev/null 2>&1 &&
            ! dpkg-query -W -f='${Status}' "$runtime" 2>/dev/null | grep -q "install ok installed"; then
            DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
                --no-install-recommends "$runtime" >/dev/null || true
        fi
    fi
fi

# The mpi tests (tests/mpi, label mpi: the one-process bits at 1, 2 and 4
# MPI ranks, about 20 s on 2 cores) need an MPI: optional too (spart builds
# without it), so Open MPI is installed only as root for `test`, and a
# failure here only leaves those tests out.
if [[ $mode == test && $(id -u) -eq 0 ]] && ! command -v mpicc >/dev/null; then
    echo "quickstart: installing Open MPI (for the mpi tests)"
    apt-get -o DPkg::Lock::Timeout=600 update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends libopenmpi-dev openmpi-bin >/dev/null || true
fi

# Each phase prints its wall time and the CPU time of its processes.
phase() { # phase NAME COMMAND...: run COMMAND, then say how long it took
    local name=$1 TIMEFORMAT
    shift
    TIMEFORMAT="quickstart: $name took %0R s (CPU: %0U s user, %0S s system)"
    time "$@"
}

# ---- the Python reference packages (tests and benchmarks only) --------------------
# Installed into build/venv while the library builds (pip mostly waits for
# downloads); its log is printed only if it fails.
venv_pid=
if [[ $mode == test ]]; then
    stamp="$build/venv/.requirements"
    if ! cmp -s "$root/tests/parity/requirements.txt" "$stamp" 2>/dev/null; then
        echo "quickstart: installing the Python reference packages into $build/venv (beside the build)"
        mkdir -p "$build"
        install_venv() {
            python3 -m venv "$build/venv" &&
                "$build/venv/bin/python" -m pip install -q --disable-pip-version-check \
                    -r "$root/tests/parity/requirements.txt" &&
                cp "$root/tests/parity/requirements.txt" "$stamp"
        }
        phase "installing the Python packages" install_venv >"$build/venv-install.log" 2>&1 &
        venv_pid=$!
    fi
fi

# ---- build -----------------------------------------------------------------------
werror=OFF
[[ $mode == test ]] && werror=ON
build_main() {
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPART_WERROR=$werror \
        -DSPART_PYTHON="$build/venv/bin/python" >/dev/null &&
        cmake --build "$build" -j "$jobs"
}
phase build build_main
if [[ -n $venv_pid ]]; then
    if ! wait "$venv_pid"; then
        cat "$build/venv-install.log" >&2
        echo "quickstart: installing the Python reference packages failed" >&2
        exit 1
    fi
    tail -n 1 "$build/venv-install.log"
fi

# ---- run ---------------------------------------------------------------------------
if [[ $mode == main ]]; then
    # The main job: the default example inversion (examples/ideal-ctis.yaml),
    # its results and pictures in build/spart-output/.
    "$build/src/cli/spart" invert --output "$build/spart-output" --overwrite
    exit 0
fi

export SPART_REQUIRE_PARITY=1
phase "the tests" ctest --test-dir "$build" --output-on-failure -j "$jobs"

# The unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize="${build}-sanitize"
build_sanitize() {
    cmake -S "$root" -B "$sanitize" -DCMAKE_BUILD_TYPE=Debug -DSPART_WERROR=ON -DSPART_SANITIZE=ON \
        -DSPART_ENABLE_CUDA=OFF -DSPART_ENABLE_FORTRAN=OFF >/dev/null &&
        cmake --build "$sanitize" -j "$jobs"
}
phase "the sanitizer build" build_sanitize
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    phase "the unit tests under the sanitizers" ctest --test-dir "$sanitize" --output-on-failure \
    -j "$jobs" -L unit
echo "quickstart: all tests passed"
