#!/usr/bin/env python3
"""
The CTest test python_package (tests/modules/python.cmake): build the
package from an already-built libspart.so and run its pytest suite.

    ctest_package.py --library build/libspart.so --work build/tests/python_package

pip installs the package (the repository's root, pyproject.toml) into
WORK/site (no build isolation, no dependencies: the running Python must
have cffi, scikit-build-core, numpy and pytest) with the library linked,
not rebuilt (SPART_PYTHON_LIBRARY, see python/CMakeLists.txt), keeping its
build folder in WORK/build; then
pytest runs python/tests against WORK/site with SPART_LIBRARY set, so that
test_c_api_bits.py compares the package with the C API called directly.

Exit status: pytest's, or 77 (skipped) when something it needs is missing,
1 then when SPART_REQUIRE_PARITY=1.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
ROOT = os.path.dirname(PACKAGE)
SKIP = 77


def missing():
    """Why the package cannot be built and tested here, or None."""
    for module in ("cffi", "scikit_build_core", "numpy", "pytest"):
        if importlib.util.find_spec(module) is None:
            return f"{sys.executable} lacks {module} (pip install -r tests/parity/requirements.txt)"
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        return f"Python's headers are missing ({include}/Python.h): install python3-dev"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", required=True, help="the libspart.so to link")
    parser.add_argument("--work", required=True, help="a folder for the build and the install")
    args = parser.parse_args()
    reason = missing()
    if reason is not None:
        required = os.environ.get("SPART_REQUIRE_PARITY") == "1"
        print(f"{'FAIL' if required else 'SKIP'}: {reason}")
        return 1 if required else SKIP
    site = os.path.join(args.work, "site")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--no-build-isolation", "--no-deps",
                    "--upgrade", "--target", site,
                    f"-Cbuild-dir={os.path.join(args.work, 'build')}",
                    f"-Ccmake.define.SPART_PYTHON_LIBRARY={os.path.abspath(args.library)}",
                    ROOT], check=True)
    print(f"python_package: built and installed in {time.perf_counter() - start:.1f} s")
    environment = dict(os.environ, SPART_LIBRARY=os.path.abspath(args.library),
                       PYTHONPATH=site + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", PACKAGE, HERE], env=environment).returncode


if __name__ == "__main__":
    sys.exit(main())
