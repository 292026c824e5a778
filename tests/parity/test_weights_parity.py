#!/usr/bin/env python3
"""
Parity of spart's weights builders, transposes and applications with the
pinned Python package `regridding` 3.6.0, run on the same inputs.

Each case prints one line (PASS, FAIL or SKIP, its name, its time and what
it compared). Weights are compared as dense matrices per orthogonal element
(repeated pairs summed), never triple by triple:
- 1-D builders and every application of weights: bit for bit;
- 2-D and 3-D builders: within 1e-12 of the largest entry of the element
  (regridding compiles its 2-D sweep with numba fastmath).
Where the package is known to be wrong (docs: shared/reference/regridding.md,
section 5) spart is checked against the exact answer instead (overlap
lengths and areas by polygon clipping, conservation), and the case also
confirms that the package still differs, so that we notice the day it is
fixed.

Exit status: 0 all passed, 1 any failure, 77 when numpy or regridding 3.6.0
cannot be imported (a failure instead when SPART_REQUIRE_PARITY=1).

    test_weights_parity.py --library build/libspart.so [-k substring] [--list]
                           [--part sweep|other] [--jobs 2] [--interpret sweep|all]

The files: this one (the command line), weights_parity_harness.py (the
list of cases, running them, the two parts), weights_parity_helpers.py
(grids, comparisons, exact answers) and a module of cases per builder:
weights_cases_multilinear.py, _conservative_1d.py, _sweep.py (the 2-D
sweep), _clip.py (2-D clipping), _transposes.py (transposes and applying
weights), _invariants.py (invariants on random grids, threads).

Time: on a cold numba cache (a fresh virtual environment, as in CI)
compiling the package is nearly all of a compiled run: its 2-D sweep alone
takes about 13 CPU-minutes to compile, even unoptimised; the cases
themselves take seconds. --jobs 2 runs the cases that reach the package's
2-D sweep (--part sweep) and the others (--part other) in two processes at
once. --interpret sweep runs the package's numba functions as Python
(NUMBA_DISABLE_JIT=1) in the sweep part's process: the same source, its
IEEE operations in the order written (no fastmath reassociation), about 4
CPU-seconds for the 30 cases, with the same comparisons and tolerances.
CTest runs `--jobs 2 --interpret sweep`; the other part stays compiled, so
that the test still compares with the package as users run it, with
NUMBA_OPT=0 (LLVM compiles without optimising: the same IEEE operations,
as fastmath leaves nothing to reassociate unoptimised, faster to compile)
and NUMBA_CACHE_DIR in the build folder, so that those unoptimised
functions never reach the package's own cache, which the benchmarks use.
Without --interpret every case compares with the compiled package.
Interpreted, the package checks array bounds, so its known out-of-bounds
bugs raise an exception where compiled they read past an array: the
"known bug" cases accept either (they assert only that the package is
still wrong).

Cold numba caches: the package's 2-D sweep takes minutes to compile per
argument signature. Every sweep call here therefore uses one signature
(read-only C-contiguous input grid, writable C-contiguous output grid, no
weights_input), which is also the signature of its default, perturbed,
call; see unperturbed_seed() in weights_parity_helpers.py.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import weights_parity_harness as harness  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default=os.environ.get("SPART_LIBRARY"),
                        help="path of libspart.so (default: $SPART_LIBRARY)")
    parser.add_argument("-k", dest="select", default=None, help="run cases whose name has this")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--part", choices=sorted(harness.PARTS), default=None,
                        help="run one part: the cases that reach the 2-D sweep, or the others")
    parser.add_argument("--jobs", type=int, default=1,
                        help="2: run the two parts in two processes at once")
    parser.add_argument("--interpret", choices=("sweep", "all"), default=None,
                        help="run regridding's numba functions as Python (NUMBA_DISABLE_JIT=1) "
                             "in the process of the sweep part (sweep) or in every process (all)")
    parser.add_argument("--allow-missing", action="store_true",
                        default=os.environ.get("SPART_PARITY_ALLOW_MISSING") == "1",
                        help="report SPART_ERROR_NOT_IMPLEMENTED as SKIP, not FAIL")
    args = parser.parse_args()
    if args.list:
        cases = harness.load_cases()
        print("\n".join(c.__name__ for c in cases if harness.in_part(c, args.part)))
        return 0
    if args.jobs > 1 and args.part is None:
        return harness.run_parts(__file__, sys.argv[1:])
    if args.interpret == "all" or (args.interpret == "sweep" and args.part != "other"):
        os.environ["NUMBA_DISABLE_JIT"] = "1"  # read when numba is imported, just below
    reason = harness.import_reference()
    if reason is not None:
        required = os.environ.get("SPART_REQUIRE_PARITY") == "1"
        print(f"{'FAIL' if required else 'SKIP'}: {reason}")
        return 1 if required else harness.SKIP
    if not args.library:
        print("FAIL: give --library PATH or set SPART_LIBRARY")
        return 1
    cases = harness.load_cases()
    spart = harness.bind(args.library)
    import numpy

    import numba

    mode = ("interpreted (NUMBA_DISABLE_JIT=1)" if numba.config.DISABLE_JIT else
            f"compiled by numba {numba.__version__} at NUMBA_OPT={int(numba.config.OPT)}")
    print(f"spart {spart.version} ({args.library}), regridding {harness.REFERENCE_VERSION} "
          f"{mode}, numpy {numpy.__version__}, {spart.threads()} threads")
    cases = [c for c in cases if (args.select is None or args.select in c.__name__) and
             harness.in_part(c, args.part)]
    return harness.run(cases, args.allow_missing)


if __name__ == "__main__":
    sys.exit(main())
