#!/usr/bin/env python3
"""
Where the cost of a product called from Python goes (issue 28, per-call
overhead): whole loops of N products timed by a C clock at their two ends
(spart_python_clock: the calling thread's CPU time, CLOCK_THREAD_CPUTIME_ID,
and CLOCK_MONOTONIC), one OpenMP thread, so that no clock is read from
Python inside a loop.

The loops, on ctis's tutorial forward operator (1.06 M entries), its
backprojection and a tiny 5 x 10 operator:

  C          N products in one C loop (spart_python_time_apply): the product
             back to back, nothing between;
  py+C       a Python loop calling spart_python_time_apply(repeat=1) N
             times: the loop's time, and inside it the sum of the N
             products timed in C ("product inside py+C");
  cffi       a Python loop of the bare cffi call, arguments prepared once;
  bound      a Python loop of r.bind(x, y)();
  out        a Python loop of r(x, out=y);
  new        a Python loop of r(x) (a new y each call).

So, per call: "product inside py+C" less C = what the product itself loses
when Python runs between products (caches, branch predictors); the
py+C loop less its products = the Python loop and one cffi call; out less
"product inside py+C" = the binding's own work (plus the loop). Every
variant runs `repeat` times in a random order; the figures are medians of
the per-call means, and again from each variant's fastest run.

    bench_loop.py [--repeat 60] [--calls 10] [--markdown FILE] [--json FILE]

Short loops many times over (10 products, 60 runs of each variant, in a
fresh random order each round) keep slow drifts of the machine (other
processes, the clock's frequency) from landing on one variant.
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
sys.path.insert(0, HERE)
from bench_python import tutorial_instrument  # noqa: E402


def loops(r, x, calls, repeat):
    """Per-call thread CPU seconds of each loop (medians over `repeat`)."""
    y = np.empty(r(x).shape)
    shape_y, size_y, shape_x = r._plans[x.shape]
    ctx = spart._core.context().pointer
    x_data = ffi.from_buffer("double[]", x)
    y_data = ffi.from_buffer("double[]", y, require_writable=True)
    pointer = r._pointer
    clock = ffi.new("double[2]")
    inner = ffi.new("double[2]")
    apply = lib.spart_python_regridder_apply
    time_apply = lib.spart_python_time_apply
    bound = r.bind(x, y)

    def c_loop():
        time_apply(ctx, pointer, x_data, shape_x, y_data, size_y, calls, inner)
        return inner[1], None

    def py_c_loop():
        products = 0.0
        lib.spart_python_clock(clock)
        start = clock[1]
        for _ in range(calls):
            time_apply(ctx, pointer, x_data, shape_x, y_data, size_y, 1, inner)
            products += inner[1]
        lib.spart_python_clock(clock)
        return clock[1] - start, products

    def cffi_loop():
        lib.spart_python_clock(clock)
        start = clock[1]
        for _ in range(calls):
            apply(ctx, pointer, x_data, shape_x, y_data, size_y)
        lib.spart_python_clock(clock)
        return clock[1] - start, None

    def bound_loop():
        lib.spart_python_clock(clock)
        start = clock[1]
        for _ in range(calls):
            bound()
        lib.spart_python_clock(clock)
        return clock[1] - start, None

    def out_loop():
        lib.spart_python_clock(clock)
        start = clock[1]
        for _ in range(calls):
            r(x, out=y)
        lib.spart_python_clock(clock)
        return clock[1] - start, None

    def new_loop():
        lib.spart_python_clock(clock)
        start = clock[1]
        for _ in range(calls):
            r(x)
        lib.spart_python_clock(clock)
        return clock[1] - start, None

    variants = {"c": c_loop, "py_c": py_c_loop, "cffi": cffi_loop, "bound": bound_loop,
                "out": out_loop, "new": new_loop}
    samples = {name: [] for name in variants}
    samples["py_c_products"] = []
    order = list(variants)
    shuffle = np.random.default_rng(1).permutation
    for name in order:  # one warm-up round
        variants[name]()
    for _ in range(repeat):
        for k in shuffle(len(order)):
            name = order[k]
            total, products = variants[name]()
            samples[name].append(total / calls)
            if products is not None:
                samples["py_c_products"].append(products / calls)
    result = {name: float(np.median(values)) for name, values in samples.items()}
    # the least-disturbed loop of each variant: noise only ever adds time
    result.update({name + "_min": float(np.min(values)) for name, values in samples.items()})
    result.update({name + "_iqr": float(np.subtract(*np.percentile(values, [75, 25])))
                   for name, values in samples.items()})
    return result


def rows(calls, repeat):
    spart.set_threads(1)
    instrument, truth = tutorial_instrument()
    images = instrument.image(truth)
    w = spart.weights(np.linspace(-1, 1, 11), np.linspace(-1, 1, 6), method="conservative")
    cases = [("tutorial forward (scene to images)", instrument.forward, truth[None], calls),
             ("tutorial backprojection", instrument.backward, images[:, None], calls),
             ("tiny (5 x 10)", spart.Regridder.from_weights(w), np.ones(10), 100 * calls)]
    result = []
    for name, r, x, n in cases:
        x = np.ascontiguousarray(x)
        r(x)
        t = loops(r, x, n, repeat)
        result.append(dict(operator=name, entries=r.nnz, calls=n, repeat=repeat,
                           **{key + "_us": 1e6 * value for key, value in t.items()}))
    spart.set_threads(0)
    return result


def markdown(table, command):
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"- machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, "
             f"load average {load:.1f} at the start",
             f"- versions: spart {spart.version()}, numpy {np.__version__}, "
             f"Python {platform.python_version()}",
             f"- command: `{command}`", "",
             "| operator | entries | C loop (us) | product inside py+C (us) | py+C loop (us) "
             "| cffi loop (us) | bound loop (us) | r(x, out=y) loop (us) | r(x) loop (us) "
             "| product's loss when Python runs between (us) | Python loop + cffi call (us) "
             "| r(x, out=y) less product inside py+C (us) | r(x, out=y) less C loop (us) "
             "| bound less C loop (us) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in table:
        lines.append(
            f"| {row['operator']} | {row['entries']} | {row['c_us']:.2f} | "
            f"{row['py_c_products_us']:.2f} | {row['py_c_us']:.2f} | {row['cffi_us']:.2f} | "
            f"{row['bound_us']:.2f} | {row['out_us']:.2f} | {row['new_us']:.2f} | "
            f"{row['py_c_products_us'] - row['c_us']:.2f} | "
            f"{row['py_c_us'] - row['py_c_products_us']:.2f} | "
            f"{row['out_us'] - row['py_c_products_us']:.2f} | "
            f"{row['out_us'] - row['c_us']:.2f} | {row['bound_us'] - row['c_us']:.2f} |")
    lines += ["", f"Thread CPU time per call, one OpenMP thread: each loop {table[0]['calls']} "
              f"calls (tiny: {table[-1]['calls']}), timed by a C clock at its ends; medians "
              f"over {table[0]['repeat']} runs of the six loops in a random order.", "",
              "The same differences from each variant's least-disturbed run (its minimum "
              "per-call mean; noise only adds time), and the spread of the runs:", "",
              "| operator | product's loss when Python runs between (us) "
              "| r(x, out=y) less product inside py+C (us) | r(x, out=y) less C loop (us) "
              "| bound less C loop (us) | interquartile range of the C loop's runs (us) "
              "| of the r(x, out=y) loop's runs (us) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for row in table:
        lines.append(
            f"| {row['operator']} | {row['py_c_products_min_us'] - row['c_min_us']:.2f} | "
            f"{row['out_min_us'] - row['py_c_products_min_us']:.2f} | "
            f"{row['out_min_us'] - row['c_min_us']:.2f} | "
            f"{row['bound_min_us'] - row['c_min_us']:.2f} | {row['c_iqr_us']:.2f} | "
            f"{row['out_iqr_us']:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    table = rows(args.calls, args.repeat)
    text = markdown(table, " ".join(["bench_loop.py"] + sys.argv[1:]))
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(dict(machine=platform.node(), cores=os.cpu_count(),
                           date=time.strftime("%Y-%m-%d %H:%M"), rows=table), handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
