"""
The harness of test_weights_parity.py: the list of cases and how they run.

The cases live in the weights_cases_*.py modules (CASE_MODULES, in the
order they run); each registers its functions with @case. A case returns a
sentence (what it compared and the verdict), raises Skip, or fails by
AssertionError, a SpartError or any other exception.

Numpy, regridding and spart are imported only once import_reference() has
said they can be (so that --list and the SKIP of a machine without them
work): bind() then gives every case module and the helpers their names
np, rg, dense, SpartError and SP, SP1, SP2 (spart's default context, and
contexts of 1 and 2 threads), which those modules declare as None.
"""

import importlib
import os
import subprocess
import sys
import threading
import time
import traceback

REFERENCE_VERSION = "3.6.0"
SKIP = 77

# The case modules, in the order their cases run.
CASE_MODULES = (
    "weights_cases_multilinear",
    "weights_cases_conservative_1d",
    "weights_cases_sweep",
    "weights_cases_clip",
    "weights_cases_transposes",
    "weights_cases_invariants",
)
HELPER_MODULES = ("weights_parity_helpers",)

# The cases whose package side reaches the 2-D conservative sweep (the
# slowest compilation by far), by name; the part "other" is the rest.
SWEEP_PREFIXES = ("sweep_", "clip_", "transpose_conservative_2d",
                  "transpose_conservative_opposite", "invariant_", "regrid_from_weights_batch_axes_2d",
                  "regrid_one_call", "unperturbed_seed")
PARTS = {"sweep", "other"}

CASES = []


def case(function):
    """Register a case (the decorator of the case modules)."""
    CASES.append(function)
    return function


class Skip(Exception):
    pass


def load_cases():
    """Import the case modules (which registers their cases) once; the cases in order."""
    if not CASES:
        for name in CASE_MODULES:
            importlib.import_module(name)
    return CASES


def import_reference():
    """numpy and regridding, or a reason they are not usable."""
    try:
        import numpy  # noqa: F401
        import regridding  # noqa: F401
        from importlib.metadata import version
    except ImportError as error:
        return f"cannot import the reference packages: {error}"
    found = version("regridding")
    if found != REFERENCE_VERSION:
        return f"regridding {found} is installed, the parity tests pin {REFERENCE_VERSION}"
    return None


def bind(library):
    """Give the case and helper modules numpy, regridding and spart (see the
    module's docstring); returns spart's default context, SP."""
    import numpy
    import regridding
    import spart_ctypes

    names = dict(np=numpy, rg=regridding, dense=spart_ctypes.dense,
                 SpartError=spart_ctypes.SpartError,
                 SP=spart_ctypes.Spart(library),
                 SP1=spart_ctypes.Spart(library, threads=1),
                 SP2=spart_ctypes.Spart(library, threads=2))
    for module_name in HELPER_MODULES + CASE_MODULES:
        module = importlib.import_module(module_name)
        for name, value in names.items():
            setattr(module, name, value)
    return names["SP"]


def in_part(function, part):
    if part is None:
        return True
    reaches_sweep = function.__name__.startswith(SWEEP_PREFIXES)
    return reaches_sweep == (part == "sweep")


def run(cases, allow_missing):
    """Each case in turn, a line each; exit status 1 if any failed, else 0."""
    from spart_ctypes import SpartError, SPART_ERROR_NOT_IMPLEMENTED

    failed = passed = skipped = 0
    width = max((len(c.__name__) for c in cases), default=0)
    for function in cases:
        start = time.perf_counter()
        try:
            detail = function() or ""
            status = "PASS"
        except Skip as reason:
            status, detail = "SKIP", str(reason)
        except SpartError as error:
            if error.status == SPART_ERROR_NOT_IMPLEMENTED and allow_missing:
                status, detail = "SKIP", f"not implemented yet: {error}"
            else:
                status, detail = "FAIL", str(error)
        except AssertionError as error:
            status, detail = "FAIL", str(error) or traceback.format_exc(limit=2)
        except Exception as error:  # a crash in the case is a failure too
            status = "FAIL"
            detail = f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=4)}"
        elapsed = time.perf_counter() - start
        print(f"{status} {function.__name__:<{width}} {elapsed:6.2f} s  {detail}", flush=True)
        failed += status == "FAIL"
        passed += status == "PASS"
        skipped += status == "SKIP"
    print(f"{passed} passed, {failed} failed, {skipped} skipped of {len(cases)} cases")
    return 1 if failed else 0


def run_parts(script, arguments):
    """Both parts at once, each in its own process running `script` with
    `arguments` (less --jobs) and --part; their lines as they come, the exit
    status the worse of the two (1 over 77 over 0)."""
    base = [sys.executable, os.path.abspath(script)]
    skipped = []
    words = iter(arguments)
    for word in words:
        if word == "--jobs":
            next(words, None)  # and its number
        elif not word.startswith("--jobs="):
            skipped.append(word)
    processes = [subprocess.Popen(base + skipped + ["--part", part], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
                 for part in sorted(PARTS)]
    lock = threading.Lock()

    def relay(process, part):
        for line in process.stdout:
            with lock:
                print(f"[{part}] {line}", end="", flush=True)

    threads = [threading.Thread(target=relay, args=(p, part))
               for p, part in zip(processes, sorted(PARTS))]
    for thread in threads:
        thread.start()
    codes = [p.wait() for p in processes]
    for thread in threads:
        thread.join()
    if any(code not in (0, SKIP) for code in codes):
        return 1
    return SKIP if SKIP in codes else 0
