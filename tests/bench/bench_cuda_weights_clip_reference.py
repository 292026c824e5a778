#!/usr/bin/env python3
"""
The Python side of tests/bench/bench_cuda_weights_clip.c: times
regridding.weights(..., method="conservative", device="cuda") (numba-cuda;
lattice outputs only) on the benchmark's lattice cases, built here with the
same formulas as the C program builds them.

    bench_cuda_weights_clip_reference.py [--repeat N] [--case warp,r512,r2048,k2048]

Each case is built once to compile (numba) and warm up, then N times; the
best wall time is reported, from the host's NumPy grids to the weights in
device memory (numba.cuda.synchronize() after each build). Prints

    VERSIONS <python, numpy, numba, regridding>
    RESULT <case> <best seconds> <entries>

and exits with 77 when numpy, numba's CUDA target or regridding cannot be
used (saying why).
"""

import argparse
import platform
import sys
import time


def rotated(np, x0, x1, num_x, y0, y1, num_y, angle, warp):
    u, v = np.meshgrid(np.linspace(x0, x1, num_x), np.linspace(y0, y1, num_y), indexing="ij")
    x = u * np.cos(angle) - v * np.sin(angle) + warp * u * u
    y = u * np.sin(angle) + v * np.cos(angle) + warp * v * v
    return x, y


def problem(np, name):
    if name == "warp":
        grid_in = rotated(np, -5, 5, 66, -5, 5, 66, 0.4, 0.05)
        x, y = grid_in
        grid_out = rotated(np, x.min(), x.max(), 33, y.min(), y.max(), 33, 0.0, 0.0)
        return grid_in, grid_out
    n, m = {"r512": (513, 513), "r2048": (2049, 2049), "k2048": (65, 2049)}[name]
    return rotated(np, -4, 4, n, -4, 4, n, 0.2, 0.0), rotated(np, -4, 4, m, -4, 4, m, 0.0, 0.0)


def entries_of(np, weights):
    """The number of entries (device slots marked -1 left out)."""
    w = weights[0]
    count = 0
    for element in np.asarray(w, dtype=object).reshape(-1):
        indices_input = element[0]
        if hasattr(indices_input, "copy_to_host"):
            indices_input = indices_input.copy_to_host()
        count += int((np.asarray(indices_input) >= 0).sum())
    return count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--case", default="warp,r512,r2048,k2048")
    args = parser.parse_args()
    try:
        import numpy as np
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack  # removed in NumPy 2.5; regridding 3.6.0 calls it
        from numba import cuda
        import numba
        import regridding
    except Exception as error:  # noqa: BLE001
        print(f"regridding cannot be imported: {error!r}")
        return 77
    if not cuda.is_available():
        print("numba sees no CUDA device")
        return 77
    print(f"VERSIONS Python {platform.python_version()}, NumPy {np.__version__}, "
          f"numba {numba.__version__}, regridding {getattr(regridding, '__version__', '3.6.0')} "
          f"(device=\"cuda\")")
    sys.stdout.flush()
    for name in args.case.split(","):
        grid_in, grid_out = problem(np, name)
        best = float("inf")
        weights = None
        for run in range(-1, args.repeat):
            start = time.perf_counter()
            weights = regridding.weights(grid_in, grid_out, method="conservative", device="cuda")
            cuda.synchronize()
            seconds = time.perf_counter() - start
            if run >= 0:
                best = min(best, seconds)
        print(f"RESULT {name} {best:.6e} {entries_of(np, weights)}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
