#!/usr/bin/env python3
"""
Benchmark of spart_weights_convolve against regridding.convolve_weights
(3.6.0) on the ctis PSF-tutorial shape: a 64 x 64 scene in 20 wavelength
bins seen by 4 channels on a 128 x 64 sensor (conservative weights, about
1 M entries, built once by spart and handed to both), each channel blurred
by its own 21 x 21 kernel (about 148 M entries after the convolution).

Both run on the same cores: spart with OMP_NUM_THREADS threads, the package
with NUMBA_NUM_THREADS (set both; ctest sets 2). The package is called once
on a small case first, so that numba's compilation is not timed. Each side
is timed --repeat times and the best is kept; the results are checked
against each other on the entry count, the sum of the values and the
triples of a few elements (bit for bit).

    bench_convolve.py --library build/libspart.so [--repeat N] [--scale S]
                      [--min-speedup X] [--json FILE] [--markdown FILE]

--scale S divides the scene and sensor sides by S (for a quick run).
--min-speedup is for runs by hand (the test suite never asserts a speed).
--markdown FILE also writes the table in Markdown under a header block
(machine, versions, command line), for docs/performance.md
(scripts/performance_page.py).
Exit status: 0, 1 if the results differ or spart is less than --min-speedup
times as fast, 77 when numpy or regridding 3.6.0 cannot be imported.
"""

import argparse
import ctypes
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "parity"))

SKIP = 77
sys.path.insert(0, HERE)
import bench_markdown  # noqa: E402
CHANNELS = 4
WAVELENGTHS = 20
KERNEL = 21


def tutorial_grids(np, scale):
    """Vertices of the scene per (channel, wavelength), dispersed and
    slightly rotated per channel, and of the sensor's pixel lattice."""
    n_scene = 64 // scale
    n_x, n_y = 128 // scale, 64 // scale
    x = np.linspace(-1, 1, n_scene + 1)
    x, y = np.meshgrid(x, x, indexing="ij")
    shape = (CHANNELS, WAVELENGTHS, n_scene + 1, n_scene + 1)
    x_in, y_in = np.empty(shape), np.empty(shape)
    shift = np.linspace(-0.5, 0.5, WAVELENGTHS)
    for c in range(CHANNELS):
        angle = 0.03 * (c + 1)
        direction = 1.0 if c % 2 == 0 else -1.0
        xr = x * np.cos(angle) - y * np.sin(angle)
        yr = x * np.sin(angle) + y * np.cos(angle)
        for w in range(WAVELENGTHS):
            x_in[c, w] = xr + direction * shift[w]
            y_in[c, w] = yr + 0.1 * c * shift[w]
    sx = np.linspace(-2, 2, n_x + 1)
    sy = np.linspace(-1, 1, n_y + 1)
    sx, sy = np.meshgrid(sx, sy, indexing="ij")
    shape_out = (CHANNELS, WAVELENGTHS, n_x + 1, n_y + 1)
    return (x_in, y_in), (np.broadcast_to(sx, shape_out).copy(),
                          np.broadcast_to(sy, shape_out).copy())


def kernels(np):
    """A Gaussian per channel, wider for later channels, summing to one:
    shape (4, 1, 1, 1, 21, 21) against the output (4, 20, nx, ny)."""
    offset = np.arange(KERNEL) - KERNEL // 2
    result = np.empty((CHANNELS, 1, 1, 1, KERNEL, KERNEL))
    for c in range(CHANNELS):
        sigma = 1.5 + 0.5 * c
        g = np.exp(-np.square(offset) / (2 * sigma * sigma))
        k = g[:, None] * g[None, :]
        result[c, 0, 0, 0] = k / k.sum()
    return result


def element_triples(spart, weights, e):
    """Copies of spart element e's arrays."""
    import numpy as np
    lib = spart.lib
    function = lib.spart_weights_element
    function.restype = ctypes.c_int
    p64, pd = ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)
    function.argtypes = [ctypes.c_void_p, ctypes.c_int64, p64, ctypes.POINTER(p64),
                         ctypes.POINTER(p64), ctypes.POINTER(pd)]
    count, ii, io, v = ctypes.c_int64(), p64(), p64(), pd()
    spart._check("spart_weights_element",
                 function(weights.handle, e, ctypes.byref(count), ctypes.byref(ii),
                          ctypes.byref(io), ctypes.byref(v)))
    n = count.value
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return tuple(np.ctypeslib.as_array(a, shape=(n,)).copy() for a in (ii, io, v))


def total_and_sum(spart, weights):
    import numpy as np
    lib = spart.lib
    function = lib.spart_weights_arrays
    function.restype = ctypes.c_int
    p64, pd = ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)
    function.argtypes = [ctypes.c_void_p, ctypes.POINTER(p64), ctypes.POINTER(p64),
                         ctypes.POINTER(p64), ctypes.POINTER(pd)]
    v = pd()
    spart._check("spart_weights_arrays",
                 function(weights.handle, None, None, None, ctypes.byref(v)))
    n = weights.num_entries
    return n, float(np.sum(np.ctypeslib.as_array(v, shape=(n,)))) if n else 0.0


def best_time(function, repeat):
    best, result = None, None
    for _ in range(repeat):
        result = None  # free the previous result before the next call
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", required=True)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--min-speedup", type=float, default=0.0)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    try:
        import numpy as np
        import regridding
        from importlib.metadata import version
        import spart_ctypes
    except ImportError as error:
        print(f"SKIP: {error}")
        return SKIP
    if version("regridding") != "3.6.0":
        print(f"SKIP: regridding {version('regridding')}, the benchmark pins 3.6.0")
        return SKIP

    spart = spart_ctypes.Spart(args.library)
    axis = (-2, -1)
    coordinates_input, coordinates_output = tutorial_grids(np, args.scale)
    weights = spart.weights(coordinates_input, coordinates_output, axis_input=axis,
                            axis_output=axis, method="conservative")
    reference_weights = weights.to_regridding()
    kernel = kernels(np)
    print(f"weights: orthogonal {weights.shape_orthogonal}, output {weights.shape_output}, "
          f"{weights.num_entries} entries; kernel {kernel.shape}; spart threads "
          f"{spart.threads()}, NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}",
          flush=True)

    # compile the package's kernels (numba) on a small case first
    small = np.empty((), dtype=object)
    small[()] = (np.array([0], np.int64), np.array([5], np.int64), np.array([1.0]))
    regridding.convolve_weights((small, (4,), (4, 4)), np.ones((3, 3)))

    seconds_spart, result = best_time(
        lambda: spart_ctypes.convolve_weights(spart, weights, kernel), args.repeat)
    count_spart, sum_spart = total_and_sum(spart, result)
    checks = [element_triples(spart, result, e) for e in (0, 27, weights.num_elements - 1)]
    result = None
    print(f"spart: {seconds_spart:.3f} s, {count_spart} entries", flush=True)

    seconds_reference, reference = best_time(
        lambda: regridding.convolve_weights(reference_weights, kernel, axis_input=axis,
                                            axis_output=axis),
        args.repeat)
    flat = reference[0].reshape(-1)
    count_reference = sum(len(flat[e][2]) for e in range(flat.size))
    sum_reference = float(sum(np.sum(flat[e][2]) for e in range(flat.size)))
    same = count_reference == count_spart
    for e, triples in zip((0, 27, flat.size - 1), checks):
        same = same and all(np.array_equal(a, np.asarray(b))
                            for a, b in zip(triples, flat[e]))
    reference = flat = None
    print(f"regridding: {seconds_reference:.3f} s, {count_reference} entries", flush=True)

    speedup = seconds_reference / seconds_spart
    print(f"speedup {speedup:.2f}; entries equal and sampled elements bit for bit: {same}; "
          f"value sums {sum_spart!r} and {sum_reference!r}")
    if args.markdown:
        scene, sensor = 64 // args.scale, (128 // args.scale, 64 // args.scale)
        lines = bench_markdown.header(
            f"{spart.threads()} threads, regridding on NUMBA_NUM_THREADS="
            f"{os.environ.get('NUMBA_NUM_THREADS', 'its default')}",
            f"wall clock, best of {args.repeat}; numba compiled beforehand",
            ("numpy", "numba", "regridding"),
            [f"- problem: the ctis PSF-tutorial shape at scale {args.scale}: a {scene} x {scene} "
             f"scene in {WAVELENGTHS} bins, {CHANNELS} channels on a {sensor[0]} x {sensor[1]} "
             f"sensor, each channel blurred by its own {KERNEL} x {KERNEL} kernel; the same "
             f"entries in both (sampled elements bit for bit): {'yes' if same else 'NO'}"])
        lines += [""] + bench_markdown.table(
            ["weights in", "entries out", "spart s", "regridding.convolve_weights s", "speed-up"],
            [[weights.num_entries, count_spart, f"{seconds_spart:.3f}",
              f"{seconds_reference:.3f}", f"{speedup:.1f}x"]])
        bench_markdown.write(args.markdown, lines)
    if args.json:
        with open(args.json, "w") as stream:
            json.dump({"entries_input": weights.num_entries, "entries_output": count_spart,
                       "seconds_spart": seconds_spart, "seconds_regridding": seconds_reference,
                       "speedup": speedup, "same": bool(same)}, stream, indent=1)
    if not same:
        print("FAIL: the results differ")
        return 1
    if speedup < args.min_speedup:
        print(f"FAIL: less than {args.min_speedup} times as fast")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
