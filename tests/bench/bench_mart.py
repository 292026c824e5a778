#!/usr/bin/env python3
"""
Benchmark of spart's MART on the ideal instrument against ctis 0.3.1's
MartInverter, on the same problems: the simple-mart tutorial (4 channels, 20
bins, 64 x 64 scene, 128 x 64 sensor) and the same instrument with a
256 x 256 scene, both noise-free, ctis's defaults (gamma 2 / C, threshold
1e-3, intermediate False).

The problems and their observed images come from tests/parity/ctis_cases.py
(cases s3_tutorial and tutorial_256, cached in --cache). Both sides run on
those images from the instrument's parameters:

- per iteration: the time between the forward predictions of successive
  iterations (spart: the progress callback's elapsed seconds; ctis: the
  instrument's image() calls, timed by a wrapper), averaged over the run;
- end to end: the operators (spart_instrument_create; ctis's IdealInstrument,
  its weights and their transpose) plus the whole MART call.

spart runs through ctypes on the shared library with the context's thread
count at all cores, then at 1; ctis as installed (numba's threads at its
default). Each figure is the best of --repeat runs. The table prints the
ratio ctis / spart of both times.

    bench_mart.py --library build/libspart.so [--cache DIR] [--repeat 3]
                  [--problem tutorial|256 ...] [--json FILE] [--markdown FILE]

--markdown FILE also writes the table in Markdown under a header block
(machine, versions, command line), for docs/performance.md
(scripts/performance_page.py).

Exit status 0, or 77 when ctis 0.3.1 cannot be imported (1 when
SPART_REQUIRE_PARITY=1).
"""

import argparse
import json
import os
import platform
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "parity"))

import ctis_cases  # noqa: E402

sys.path.insert(0, HERE)
import bench_markdown  # noqa: E402

SKIP = 77
PROBLEMS = {"tutorial": "s3_tutorial", "256": "tutorial_256"}


def spart_run(spart_ctypes, spart, record):
    """(end-to-end s, per-iteration s, build s, iterations) of one spart run."""
    keys = ("angle", "dispersion", "plate_scale", "wavelength_ref", "position_ref",
            "area_effective", "exposure_time", "wavelength", "scene_x", "scene_y", "sensor_x",
            "sensor_y", "quantum_yield", "read_noise")
    start = time.perf_counter()
    instrument = spart_ctypes.Instrument(spart, **{k: record[k] for k in keys})
    built = time.perf_counter()
    result = instrument.mart(record["observed"], record_progress=True,
                             scene_shape=record["scene"].shape)
    end = time.perf_counter()
    elapsed = [p[2] for p in result.progress]
    per_iteration = ((elapsed[-1] - elapsed[0]) / (len(elapsed) - 1) if len(elapsed) > 1
                     else float("nan"))
    return end - start, per_iteration, built - start, result.num_iteration


def ctis_run(record, name):
    """(end-to-end s, per-iteration s, build s, iterations) of one ctis run."""
    import ctis

    spec = ctis_cases.CASES[name]
    images_array = record["observed"]
    start = time.perf_counter()
    instrument, scene, _ = ctis_cases._build_instrument(spec)
    instrument.weights
    instrument.weights_transpose
    built = time.perf_counter()
    # the images as MART takes them (made before the clock runs on MART)
    template = instrument.image(scene, noise=False)
    images = ctis_cases._with_outputs(template, images_array)
    stamps = []
    image = instrument.image

    def timed_image(*args, **kwargs):
        stamps.append(time.perf_counter())
        return image(*args, **kwargs)

    instrument.image = timed_image
    mart = ctis.inverters.MartInverter(instrument=instrument)
    mart_start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mart(images)
    end = time.perf_counter()
    per_iteration = ((stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1
                     else float("nan"))
    return ((built - start) + (end - mart_start), per_iteration, built - start,
            result.num_iteration)


def best(runs):
    """The best of several runs, figure by figure (iterations must agree)."""
    iterations = {r[3] for r in runs}
    if len(iterations) != 1:
        raise RuntimeError(f"runs disagree on the iteration count: {sorted(iterations)}")
    return tuple(min(r[k] for r in runs) for k in range(3)) + (runs[0][3],)


def write_markdown(path, rows, cores, repeat):
    """The table in Markdown under its header block."""
    scenes = {"tutorial": "64 x 64 (the tutorial)", "256": "256 x 256"}
    lines = bench_markdown.header(
        f"{cores} threads, then 1",
        f"best of {repeat} runs each; ms/iteration between successive forward predictions, "
        "end to end = operators built + the whole MART call",
        ("numpy", "numba", "ctis", "named-arrays", "optika", "regridding"),
        ["- problem: ctis's simple-mart tutorial instrument (4 channels, 20 bins, 128 x 64 "
         "sensor), noise-free, ctis's defaults (gamma 2 / C, threshold 1e-3); spart through "
         "ctypes on its shared library, ctis 0.3.1 with numba's default threads"])
    table = []
    for row in rows:
        speedup = row.get("speedup_per_iteration")
        table.append([scenes.get(row["problem"], row["problem"]), row["implementation"],
                      "-" if row["threads"] is None else row["threads"], row["iterations"],
                      f"{row['per_iteration_ms']:.2f}", f"{row['end_to_end_ms']:.1f}",
                      "-" if speedup is None else f"{speedup:.1f}x",
                      "-" if speedup is None else f"{row['speedup_end_to_end']:.1f}x"])
    lines += [""] + bench_markdown.table(
        ["scene", "implementation", "threads", "iterations", "ms/iteration", "end-to-end ms",
         "speed-up per iteration", "speed-up end to end"], table)
    bench_markdown.write(path, lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default=os.environ.get("SPART_LIBRARY"))
    parser.add_argument("--cache", default=None,
                        help="directory of the ctis cases (default: ./ctis_cases)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--problem", action="append", choices=sorted(PROBLEMS), default=None)
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--markdown", default=None,
                        help="also write the table in Markdown here")
    args = parser.parse_args()
    reason = ctis_cases.reference_problem()
    if reason is not None:
        required = os.environ.get("SPART_REQUIRE_PARITY") == "1"
        print(f"{'FAIL' if required else 'SKIP'}: {reason}")
        return 1 if required else SKIP
    if not args.library:
        print("FAIL: give --library PATH or set SPART_LIBRARY")
        return 1
    import spart_ctypes

    problems = args.problem or ["tutorial", "256"]
    cache = args.cache or os.path.join(os.getcwd(), "ctis_cases")
    records = ctis_cases.load_or_build(cache, [PROBLEMS[p] for p in problems])
    cores = os.cpu_count() or 1
    rows = []
    for problem in problems:
        name = PROBLEMS[problem]
        record = records[name]
        ctis_best = best([ctis_run(record, name) for _ in range(args.repeat)])
        rows.append(dict(problem=problem, implementation="ctis 0.3.1", threads=None,
                         end_to_end_ms=1e3 * ctis_best[0], per_iteration_ms=1e3 * ctis_best[1],
                         build_ms=1e3 * ctis_best[2], iterations=ctis_best[3]))
        for threads in sorted({cores, 1}, reverse=True):
            spart = spart_ctypes.Spart(args.library, threads=threads)
            spart_best = best([spart_run(spart_ctypes, spart, record)
                               for _ in range(args.repeat)])
            rows.append(dict(problem=problem, implementation="spart (host)", threads=threads,
                             end_to_end_ms=1e3 * spart_best[0],
                             per_iteration_ms=1e3 * spart_best[1],
                             build_ms=1e3 * spart_best[2], iterations=spart_best[3],
                             speedup_per_iteration=ctis_best[1] / spart_best[1],
                             speedup_end_to_end=ctis_best[0] / spart_best[0]))
    print(f"{'problem':<9}{'implementation':<15}{'threads':>8}{'iterations':>11}"
          f"{'build ms':>10}{'ms/iteration':>13}{'end-to-end ms':>14}{'x/iter':>8}{'x e2e':>7}")
    for row in rows:
        threads = "-" if row["threads"] is None else str(row["threads"])
        ratio = (f"{row['speedup_per_iteration']:>8.1f}{row['speedup_end_to_end']:>7.1f}"
                 if "speedup_per_iteration" in row else f"{'':>8}{'':>7}")
        print(f"{row['problem']:<9}{row['implementation']:<15}{threads:>8}"
              f"{row['iterations']:>11}{row['build_ms']:>10.1f}{row['per_iteration_ms']:>13.2f}"
              f"{row['end_to_end_ms']:>14.1f}{ratio}")
    print("x/iter, x e2e: ctis's time over spart's (per iteration, end to end); best of "
          f"{args.repeat} runs; {cores} cores")
    if args.markdown:
        write_markdown(args.markdown, rows, cores, args.repeat)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(dict(machine=platform.node(), processor=platform.processor(), cores=cores,
                           repeat=args.repeat, date=time.strftime("%Y-%m-%d"), rows=rows),
                      handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
