#!/usr/bin/env python3
"""
The Python side of tests/bench/bench_regridder.c: on the weights, CSR
arrays and vectors the C program wrote to --folder, times

  package_1, package_8   regridding.regrid_from_weights (numba, the thread
                         count of NUMBA_NUM_THREADS) on the same weights,
                         followed by the sum over wavelengths that the
                         spart operator does inside its product; the batch
                         of 8 in one call, the weights broadcast over it;
  scipy_1, scipy_8       scipy.sparse.csr_matrix @ x on spart's own CSR
                         arrays (scipy's product is single-threaded);
  argsort_build          a NumPy build of the same CSR arrays: rows and
                         columns of every entry, a stable argsort on the
                         rows, gathers and a bincount;

each once to warm up (numba compiles then), then N times, the best
counting; and checks that every result is spart's (diff_*: max |diff| /
max |y|; same_csr_argsort: 1 when the argsort build gives spart's arrays
bit for bit).

    bench_regridder_reference.py --folder DIR [--repeat N] [--case a,b,c]

Prints `RESULT <case> <metric> <value>` lines; exits with 77 when numpy,
scipy or regridding cannot be imported.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_markdown import versions_line  # noqa: E402


def best_time(function, repeat):
    function()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def read_case(np, folder, name):
    meta = {}
    with open(os.path.join(folder, f"{name}_meta.txt")) as file:
        for line in file:
            key, value = line.split()
            meta[key] = int(value)

    def array(what, dtype):
        return np.fromfile(os.path.join(folder, f"{name}_{what}.bin"), dtype=dtype)

    arrays = dict(
        offsets=array("offsets", "<i8"),
        indices_input=array("indices_input", "<i8"),
        indices_output=array("indices_output", "<i8"),
        values=array("values", "<f8"),
        row_ptr=array("row_ptr", "<i8"),
        columns=array("columns", "<i4"),
        csr_values=array("csr_values", "<f8"),
        x1=array("x1", "<f8"),
        y1=array("y1", "<f8"),
        x8=array("x8", "<f8"),
        y8=array("y8", "<f8"),
    )
    return meta, arrays


def package_weights(np, meta, arrays):
    """regridding's form: an object array (channels, wavelengths) of
    (indices_input, indices_output, values) tuples (views of the files)."""
    c, w = meta["channels"], meta["wavelengths"]
    offsets = arrays["offsets"]
    weights = np.empty((c, w), dtype=object)
    for e in range(c * w):
        s = slice(offsets[e], offsets[e + 1])
        weights[e // w, e % w] = (arrays["indices_input"][s], arrays["indices_output"][s],
                                  arrays["values"][s])
    n, m = meta["scene"], meta["scene_output"]
    return weights, (c, w, n, n), (c, w, m, m)


def relative(np, a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def run_case(np, sparse, regridding, folder, name, repeat):
    meta, arrays = read_case(np, folder, name)
    c, w, n, m = meta["channels"], meta["wavelengths"], meta["scene"], meta["scene_output"]
    batch = meta["batch"]
    weights, shape_input, shape_output = package_weights(np, meta, arrays)
    x1 = arrays["x1"].reshape(1, w, n, n)
    x8 = arrays["x8"].reshape(batch, 1, w, n, n)
    y1 = arrays["y1"].reshape(c, 1, m, m)
    y8 = arrays["y8"].reshape(batch, c, 1, m, m)

    # the package: per element, each entry added in stored order; the scene
    # broadcast over the channels, the wavelengths summed afterwards
    def package_1():
        out = regridding.regrid_from_weights(weights, shape_input, shape_output, values_input=x1,
                                             axis_input=(2, 3), axis_output=(2, 3))
        return out.sum(axis=1, keepdims=True)

    # the batch in one call: a leading axis of length 1 on the weights,
    # broadcast over the 8 scenes by the package itself
    weights_8 = weights.reshape((1,) + weights.shape)

    def package_8():
        out = regridding.regrid_from_weights(weights_8, (1,) + shape_input, (1,) + shape_output,
                                             values_input=x8, axis_input=(3, 4),
                                             axis_output=(3, 4))
        return out.sum(axis=2, keepdims=True)

    rows, columns = meta["rows"], meta["columns"]
    matrix = sparse.csr_matrix((arrays["csr_values"], arrays["columns"], arrays["row_ptr"]),
                               shape=(rows, columns))
    flat_1 = x1.reshape(-1)
    flat_8 = x8.reshape(batch, -1)

    def scipy_1():
        return matrix @ flat_1

    def scipy_8():
        return (matrix @ flat_8.T).T

    offsets = arrays["offsets"]
    counts = np.diff(offsets)

    def argsort_build():
        element = np.repeat(np.arange(c * w), counts)
        row = (element // w) * (m * m) + arrays["indices_output"]
        column = (element % w) * (n * n) + arrays["indices_input"]
        order = np.argsort(row, kind="stable")
        row_ptr = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=rows), out=row_ptr[1:])
        return row_ptr, column[order].astype(np.int32), arrays["values"][order]

    results = {}
    results["package_1"] = best_time(package_1, repeat)
    results["diff_package_1"] = relative(np, package_1(), y1)
    results["package_8"] = best_time(package_8, repeat)
    results["diff_package_8"] = relative(np, package_8(), y8)
    results["scipy_1"] = best_time(scipy_1, repeat)
    results["diff_scipy_1"] = relative(np, scipy_1().reshape(y1.shape), y1)
    results["scipy_8"] = best_time(scipy_8, repeat)
    results["diff_scipy_8"] = relative(np, scipy_8().reshape(y8.shape), y8)
    results["argsort_build"] = best_time(argsort_build, repeat)
    built = argsort_build()
    same = all(np.array_equal(a, b) for a, b in
               zip(built, (arrays["row_ptr"], arrays["columns"], arrays["csr_values"])))
    results["same_csr_argsort"] = 1.0 if same else 0.0
    for metric, value in results.items():
        print(f"RESULT {name} {metric} {value:.9g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--case", default="a,b,c")
    args = parser.parse_args()
    try:
        import numpy as np
        import regridding
        from scipy import sparse
    except ImportError as error:
        print(f"SKIP cannot import the reference packages: {error}", flush=True)
        return 77
    print(versions_line(("numpy", "numba", "scipy", "regridding")), flush=True)
    for name in args.case.split(","):
        if os.path.exists(os.path.join(args.folder, f"{name}_meta.txt")):
            run_case(np, sparse, regridding, args.folder, name, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
