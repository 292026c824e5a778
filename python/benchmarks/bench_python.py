#!/usr/bin/env python3
"""
Benchmark of the Python package (issue 28): what a call from Python costs
over the C call, and ctis's tutorial inversion through the package against
ctis 0.3.1 in the same run.

1. Overhead per product. On ctis's simple-mart tutorial instrument (its
   forward operator: 1.06 M entries, a scene of 20 x 64 x 64 to 4 images of
   128 x 64; its backprojection) and on a tiny 5 x 10 operator, with one
   OpenMP thread: the product called from C
   (spart._spart.lib.spart_python_time_apply), bare through cffi, and from
   Python as r(x, out=y) and r(x) (a new y each call), in random order,
   timed as thread CPU time (all of the work runs on the calling thread;
   the time other processes take the core is left out). Overhead = the
   Python call's median less the C call's (time_products says more).

2. The tutorial inversion (tests/parity/ctis_cases.py, case s3_tutorial:
   noise-free images, ctis's defaults) through spart.IdealInstrument and
   spart.mart, with the context's threads at all cores, against ctis's
   MartInverter timed as tests/bench/bench_mart.py times it (its ctis_run):
   end to end (operators built + the whole MART call) and per iteration;
   with SPART_LIBRARY set, also bench_mart.py's own spart run (ctypes on
   that libspart.so), the C benchmark's figure.

    bench_python.py [--cache DIR] [--repeat 5] [--skip-ctis] [--markdown FILE] [--json FILE]

Needs the package installed (pip install . from the repository root) and, for part 2, the
reference packages of tests/parity/requirements.txt.
"""

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import spart
from spart._spart import ffi, lib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def tutorial_instrument(observed_seed=None):
    """ctis's simple-mart tutorial instrument and scene, built by spart."""
    velocity = np.linspace(-500, 500, 21)
    edges = np.linspace(-10, 10, 65)
    truth, wavelength = spart.scene_gaussians(velocity, edges, edges, wavelength_rest=171.0)
    truth += truth.max() / 100
    instrument = spart.IdealInstrument(
        angle=5.64 + np.arange(4) * 90.0,
        dispersion=spart.wavelength_from_velocity([10.0], 171.0)[0] - 171.0,
        plate_scale=0.4, wavelength_ref=171.0, position_ref=(64, 32), area_effective=1.0,
        timedelta_exposure=20.0, wavelength=wavelength, scene_x=edges, scene_y=edges,
        sensor_x=np.arange(129.0), sensor_y=np.arange(65.0), solid_angle_steradian=True)
    return instrument, truth


def time_products(r, x, rounds):
    """
    Per-call thread CPU seconds (medians over `rounds`) of the same product
    made four ways, in a fresh random order every round so that none gains
    from its place (on a busy machine two identical calls in a row differ
    by tens of microseconds by position alone):

      c     spart_python_time_apply: one call timed inside C, no Python;
      cffi  the binding's C function called bare through cffi with
            arguments prepared once (what any binding pays at least);
      out   r(x, out=y);
      new   r(x), a new y every call;
      bound r.bind(x, y)(), the product with its arrays fixed.

    The cost of reading the clock from Python (the median of timing
    nothing) is taken off the three timed in Python.
    """
    y = np.empty(r(x).shape)
    shape_y, size_y, shape_x = r._plans[x.shape]
    seconds = ffi.new("double[2]")
    ctx = spart._core.context().pointer
    x_data = ffi.from_buffer("double[]", x)
    y_data = ffi.from_buffer("double[]", y, require_writable=True)
    clock = time.thread_time

    def c():
        status = lib.spart_python_time_apply(ctx, r._pointer, x_data, shape_x, y_data, size_y,
                                             1, seconds)
        if status != lib.SPART_OK:
            raise RuntimeError(f"spart_python_time_apply: status {status}")
        return seconds[1]

    def bare():
        t0 = clock()
        lib.spart_python_regridder_apply(ctx, r._pointer, x_data, shape_x, y_data, size_y)
        return clock() - t0

    def out():
        t0 = clock()
        r(x, out=y)
        return clock() - t0

    def new():
        t0 = clock()
        r(x)
        return clock() - t0

    bound_product = r.bind(x, y)

    def bound():
        t0 = clock()
        bound_product()
        return clock() - t0

    def nothing():
        t0 = clock()
        return clock() - t0

    variants = {"c": c, "cffi": bare, "out": out, "new": new, "bound": bound, "clock": nothing}
    samples = {name: [] for name in variants}
    order = list(variants)
    shuffle = np.random.default_rng(0).permutation
    for _ in range(rounds):
        for k in shuffle(len(order)):
            samples[order[k]].append(variants[order[k]]())
    clock_cost = float(np.median(samples["clock"]))
    result = {name: float(np.median(samples[name])) - (0 if name == "c" else clock_cost)
              for name in ("c", "cffi", "out", "new", "bound")}
    result["clock"] = clock_cost
    return result


def overhead_rows(repeat):
    spart.set_threads(1)
    instrument, truth = tutorial_instrument()
    images = instrument.image(truth)
    w = spart.weights(np.linspace(-1, 1, 11), np.linspace(-1, 1, 6), method="conservative")
    cases = [("tutorial forward (scene to images)", instrument.forward, truth[None], 100),
             ("tutorial backprojection", instrument.backward, images[:, None], 100),
             ("tiny (5 x 10)", spart.Regridder.from_weights(w), np.ones(10), 4000)]
    rows = []
    for name, r, x, rounds in cases:
        x = np.ascontiguousarray(x)
        r(x)  # its plan
        t = time_products(r, x, rounds * repeat)
        rows.append(dict(operator=name, entries=r.nnz, rounds=rounds * repeat,
                         c_us=1e6 * t["c"], cffi_us=1e6 * t["cffi"], out_us=1e6 * t["out"],
                         new_us=1e6 * t["new"], bound_us=1e6 * t["bound"],
                         clock_us=1e6 * t["clock"]))
    spart.set_threads(0)
    return rows


def mart_rows(cache, repeat):
    """The tutorial inversion: ctis, then spart through the package."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "parity"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
    import bench_mart
    import ctis_cases

    reason = ctis_cases.reference_problem()
    if reason is not None:
        print(f"SKIP the ctis comparison: {reason}")
        return []
    record = ctis_cases.load_or_build(cache, ["s3_tutorial"])["s3_tutorial"]
    ctis_best = bench_mart.best([bench_mart.ctis_run(record, "s3_tutorial")
                                 for _ in range(repeat)])
    keys = ("angle", "dispersion", "plate_scale", "wavelength_ref", "position_ref",
            "area_effective", "wavelength", "scene_x", "scene_y", "sensor_x", "sensor_y",
            "quantum_yield", "read_noise")
    observed = np.ascontiguousarray(record["observed"], dtype=np.float64)

    def package_run():
        stamps = []
        start = time.perf_counter()
        instrument = spart.IdealInstrument(timedelta_exposure=float(record["exposure_time"]),
                                           **{k: record[k] for k in keys})
        built = time.perf_counter()
        result = spart.mart(instrument, observed,
                            callback=lambda report: stamps.append(report["elapsed_seconds"]))
        end = time.perf_counter()
        per_iteration = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
        return end - start, per_iteration, built - start, result.num_iteration

    spart.set_threads(0)
    spart_best = bench_mart.best([package_run() for _ in range(repeat)])
    if spart_best[3] != int(record["mart_num_iteration"]):
        raise RuntimeError(f"spart took {spart_best[3]} iterations, ctis "
                           f"{int(record['mart_num_iteration'])}")
    rows = []
    library = os.environ.get("SPART_LIBRARY")
    if library:  # the C benchmark's own path (ctypes on libspart.so), for reference
        import spart_ctypes

        c = spart_ctypes.Spart(library, threads=os.cpu_count() or 1)
        c_best = bench_mart.best([bench_mart.spart_run(spart_ctypes, c, record)
                                  for _ in range(repeat)])
        rows.append(dict(implementation="spart (ctypes, as bench_mart.py)",
                         iterations=c_best[3], build_ms=1e3 * c_best[2],
                         per_iteration_ms=1e3 * c_best[1], end_to_end_ms=1e3 * c_best[0],
                         speedup_per_iteration=ctis_best[1] / c_best[1],
                         speedup_end_to_end=ctis_best[0] / c_best[0]))
    return [dict(implementation="ctis 0.3.1", iterations=ctis_best[3],
                 build_ms=1e3 * ctis_best[2], per_iteration_ms=1e3 * ctis_best[1],
                 end_to_end_ms=1e3 * ctis_best[0]),
            dict(implementation="spart (Python package)", iterations=spart_best[3],
                 build_ms=1e3 * spart_best[2], per_iteration_ms=1e3 * spart_best[1],
                 end_to_end_ms=1e3 * spart_best[0],
                 speedup_per_iteration=ctis_best[1] / spart_best[1],
                 speedup_end_to_end=ctis_best[0] / spart_best[0])] + rows


def markdown(overheads, marts, repeat, command):
    versions = [f"spart {spart.version()}", f"numpy {np.__version__}",
                f"Python {platform.python_version()}"]
    try:
        from importlib.metadata import version

        versions += [f"cffi {version('cffi')}", f"ctis {version('ctis')}"]
    except Exception:  # the reference packages are optional here
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"- machine: {platform.node()}, {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores, load average {load:.1f} at the start",
             f"- versions: {', '.join(versions)}",
             f"- command: `{command}`", "",
             "| operator | entries | C call, timed in C (us) | bare cffi call (us) "
             "| r(x, out=y) (us) | r(x) (us) | r.bind(x, y)() (us) "
             "| overhead of r(x, out=y) (us) | overhead of r(x) (us) "
             "| overhead of r.bind(x, y)() (us) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in overheads:
        lines.append(f"| {row['operator']} | {row['entries']} | {row['c_us']:.2f} | "
                     f"{row['cffi_us']:.2f} | {row['out_us']:.2f} | {row['new_us']:.2f} | "
                     f"{row['bound_us']:.2f} | {row['out_us'] - row['c_us']:.2f} | "
                     f"{row['new_us'] - row['c_us']:.2f} | {row['bound_us'] - row['c_us']:.2f} |")
    lines += ["", "Thread CPU time per call with one OpenMP thread: medians over "
              f"{overheads[0]['rounds']} (tutorial) and {overheads[-1]['rounds']} (tiny) rounds "
              "of the five calls in a random order, less the cost of reading the clock from "
              f"Python ({overheads[-1]['clock_us']:.2f} us) for the four timed there; "
              "overhead = the Python call's median less the C call's."]
    if marts:
        lines += ["", "| tutorial inversion | iterations | build ms | ms/iteration | "
                  "end-to-end ms | speed-up per iteration | speed-up end to end |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for row in marts:
            speed = ("-", "-") if "speedup_per_iteration" not in row else (
                f"{row['speedup_per_iteration']:.1f}x", f"{row['speedup_end_to_end']:.1f}x")
            lines.append(f"| {row['implementation']} | {row['iterations']} | "
                         f"{row['build_ms']:.1f} | {row['per_iteration_ms']:.2f} | "
                         f"{row['end_to_end_ms']:.1f} | {speed[0]} | {speed[1]} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=os.path.join(os.getcwd(), "ctis_cases"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-ctis", action="store_true")
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    overheads = overhead_rows(args.repeat)
    marts = [] if args.skip_ctis else mart_rows(args.cache, max(1, min(args.repeat, 3)))
    text = markdown(overheads, marts, args.repeat, " ".join(["bench_python.py"] + sys.argv[1:]))
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(dict(machine=platform.node(), cores=os.cpu_count(), repeat=args.repeat,
                           date=time.strftime("%Y-%m-%d %H:%M"), overheads=overheads,
                           marts=marts), handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
