#!/usr/bin/env python3
"""
The Python side of tests/bench/bench_weights.c: times regridding.weights(...,
method="conservative") on the benchmark's three problems, built here with
the same formulas as the C program builds them.

    bench_weights_reference.py [--repeat N] [--case a,b,c]

Each problem is built once to compile (numba) and warm up, then N times;
the best time is reported. Run with NUMBA_NUM_THREADS set to the thread
count spart uses (bench_weights sets it). Prints one line per problem:

    RESULT <case> <best seconds> <entries> <best process CPU seconds>

and exits with 77 when numpy or regridding cannot be imported.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_markdown import versions_line  # noqa: E402


def lattice(np, x, y):
    return tuple(np.meshgrid(x, y, indexing="ij"))


def problem_a(np):
    """regridding's README warp: 66x66 vertices on [-5, 5]^2, rotated by 0.4
    rad, plus 0.05 x^2 and 0.05 y^2, onto a 33x33 lattice spanning it
    (clipping)."""
    x, y = lattice(np, np.linspace(-5, 5, 66), np.linspace(-5, 5, 66))
    angle = 0.4
    x_in = x * np.cos(angle) - y * np.sin(angle) + 0.05 * x * x
    y_in = x * np.sin(angle) + y * np.cos(angle) + 0.05 * y * y
    out = lattice(np, np.linspace(x_in.min(), x_in.max(), 33),
                  np.linspace(y_in.min(), y_in.max(), 33))
    return (x_in, y_in), out, {}


def problem_b(np):
    """512x512 cells on [-4, 4]^2 onto the same grid rotated by 0.2 rad
    (sweep, default perturbation)."""
    x, y = lattice(np, np.linspace(-4, 4, 513), np.linspace(-4, 4, 513))
    angle = 0.2
    out = (x * np.cos(angle) - y * np.sin(angle), x * np.sin(angle) + y * np.cos(angle))
    return (x, y), out, {}


def problem_c(np):
    """64 orthogonal elements of 128x128 cells on [-4, 4]^2, element k rotated
    by 0.01 k rad, onto one shared 128x128-cell lattice on [-5, 5]^2
    (clipping)."""
    x, y = lattice(np, np.linspace(-4, 4, 129), np.linspace(-4, 4, 129))
    angle = 0.01 * np.arange(64)[:, np.newaxis, np.newaxis]
    x_in = x * np.cos(angle) - y * np.sin(angle)
    y_in = x * np.sin(angle) + y * np.cos(angle)
    out = lattice(np, np.linspace(-5, 5, 129), np.linspace(-5, 5, 129))
    return (x_in, y_in), out, dict(axis_input=(1, 2), axis_output=(0, 1))


PROBLEMS = {"a": problem_a, "b": problem_b, "c": problem_c}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", default="a,b,c")
    args = parser.parse_args()
    try:
        import numpy as np
        import regridding
    except ImportError as error:
        print(f"SKIP cannot import the reference packages: {error}", flush=True)
        return 77
    print(versions_line(("numpy", "numba", "regridding")), flush=True)
    for name in args.case.split(","):
        grid_in, grid_out, kwargs = PROBLEMS[name](np)
        weights = regridding.weights(grid_in, grid_out, method="conservative", **kwargs)
        entries = sum(len(element[0]) for element in weights[0].reshape(-1))
        best = float("inf")
        best_cpu = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            start_cpu = time.process_time()
            regridding.weights(grid_in, grid_out, method="conservative", **kwargs)
            best_cpu = min(best_cpu, time.process_time() - start_cpu)
            best = min(best, time.perf_counter() - start)
        print(f"RESULT {name} {best:.6f} {entries} {best_cpu:.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
