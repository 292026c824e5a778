#!/usr/bin/env python3
"""
Weights built on the GPU (issue 30): spart_weights_build_device against
regridding.weights(..., device="cuda") (numba-cuda) and spart's host build
(spart_weights_build, 16 threads), on the same grids in the same run.

    bench_cuda_weights.py LIBSPART [--regridding DIR] [--repeat N]
                          [--case a,b,...] [--markdown FILE]

Each builder runs once to warm up (numba compiles, CUDA loads), then N
times; the best wall time is reported, from the grids in host memory (NumPy
arrays) to the weights made: regridding's left on the device as its
weights object holds them, spart's device weights on the device (its call
returns after the stream is synchronised; the grids' copy to the device is
inside the time, and freeing the weights outside it, for every builder). Cases (conservative ones as in
bench_weights_reference.py): readme (the README warp onto a lattice), r512
and r2048 (a rotated grid onto the lattice it came from), e64 (64 elements
of 128^2 onto one lattice), ml1024 (multilinear, a 1024^2 rectilinear grid
at 1024^2 scattered points), ml3d (multilinear, 3-D 96^3 at 64^3 points),
mlcurv (multilinear, a warped 256^2 grid at 512^2 points, some outside),
c1d (conservative 1-D, 1024 elements of 2048 cells onto 1500). regridding's
GPU build takes conservative weights onto lattices only: the others have
spart's host build as their only peer. Exits 77
when numpy cannot be imported; a peer that cannot run a case says so.
"""

import argparse
import ctypes
import os
import platform
import sys
import time

MAX_NDIM = 16


class Shape(ctypes.Structure):
    _fields_ = [("ndim", ctypes.c_int), ("dims", ctypes.c_int64 * MAX_NDIM)]


class Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", Shape)]


class Options(ctypes.Structure):
    _fields_ = [("method", ctypes.c_int), ("bounds", ctypes.c_int), ("perturb", ctypes.c_int),
                ("seed", ctypes.c_uint64), ("algorithm", ctypes.c_int), ("coalesce", ctypes.c_int),
                ("num_axis_input", ctypes.c_int), ("axis_input", ctypes.c_int * MAX_NDIM),
                ("num_axis_output", ctypes.c_int), ("axis_output", ctypes.c_int * MAX_NDIM),
                ("weights_input", ctypes.c_void_p)]


def lattice(np, x, y):
    return tuple(np.meshgrid(x, y, indexing="ij"))


def rotated(np, n, angle):
    x, y = lattice(np, np.linspace(-4, 4, n + 1), np.linspace(-4, 4, n + 1))
    x_in = x * np.cos(angle) - y * np.sin(angle)
    y_in = x * np.sin(angle) + y * np.cos(angle)
    return (x_in, y_in), (x, y)


def case_readme(np):
    x, y = lattice(np, np.linspace(-5, 5, 66), np.linspace(-5, 5, 66))
    angle = 0.4
    x_in = x * np.cos(angle) - y * np.sin(angle) + 0.05 * x * x
    y_in = x * np.sin(angle) + y * np.cos(angle) + 0.05 * y * y
    out = lattice(np, np.linspace(x_in.min(), x_in.max(), 33),
                  np.linspace(y_in.min(), y_in.max(), 33))
    return (x_in, y_in), out, dict(method="conservative")


def case_r512(np):
    grid_in, grid_out = rotated(np, 512, 0.2)
    return grid_in, grid_out, dict(method="conservative")


def case_r2048(np):
    grid_in, grid_out = rotated(np, 2048, 0.2)
    return grid_in, grid_out, dict(method="conservative")


def case_e64(np):
    x, y = lattice(np, np.linspace(-4, 4, 129), np.linspace(-4, 4, 129))
    angle = 0.01 * np.arange(64)[:, np.newaxis, np.newaxis]
    x_in = x * np.cos(angle) - y * np.sin(angle)
    y_in = x * np.sin(angle) + y * np.cos(angle)
    out = lattice(np, np.linspace(-5, 5, 129), np.linspace(-5, 5, 129))
    return (x_in, y_in), out, dict(method="conservative", axis_input=(1, 2), axis_output=(0, 1))


def case_ml1024(np):
    grid_in = lattice(np, np.linspace(-4, 4, 1024), np.linspace(-3, 3, 1024))
    rng = np.random.default_rng(7)
    points = (rng.uniform(-4.2, 4.2, (1024, 1024)), rng.uniform(-3.2, 3.2, (1024, 1024)))
    return grid_in, points, dict(method="multilinear")


def case_ml3d(np):
    axes = [np.linspace(0, 1, 96), np.linspace(-1, 1, 96), np.linspace(2, 5, 96)]
    grid_in = tuple(np.meshgrid(*axes, indexing="ij"))
    rng = np.random.default_rng(8)
    points = tuple(rng.uniform(lo, hi, (64, 64, 64)) for lo, hi in ((0, 1), (-1, 1), (2, 5)))
    return grid_in, points, dict(method="multilinear")


def case_mlcurv(np):
    (x_in, y_in), _ = rotated(np, 255, 0.3)
    x_in = x_in + 0.01 * y_in * y_in
    rng = np.random.default_rng(10)
    points = (rng.uniform(-5, 5, (512, 512)), rng.uniform(-5, 5, (512, 512)))
    return (x_in, y_in), points, dict(method="multilinear")


def case_c1d(np):
    rng = np.random.default_rng(9)
    base = np.linspace(0, 10, 2049)
    shift = rng.uniform(-0.01, 0.01, (1024, 1))
    x_in = (base[np.newaxis, :] * (1 + shift),)
    x_out = (np.linspace(0.5, 9.5, 1501),)
    return x_in, x_out, dict(method="conservative", axis_input=(1,), axis_output=(0,))


CASES = {"readme": case_readme, "r512": case_r512, "e64": case_e64, "r2048": case_r2048,
         "ml1024": case_ml1024, "ml3d": case_ml3d, "mlcurv": case_mlcurv, "c1d": case_c1d}


class Spart:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.spart_context_error.restype = ctypes.c_char_p
        self.context = ctypes.c_void_p()
        self.check(self.lib.spart_context_create(ctypes.byref(self.context)))
        self.has_device = hasattr(self.lib, "spart_weights_build_device")
        self.keep = []

    def check(self, status, what="spart"):
        if status != 0:
            raise RuntimeError(f"{what}: status {status}: {self.lib.spart_context_error(self.context)}")

    def threads(self, n):
        self.check(self.lib.spart_context_set_threads(self.context, n))

    def arrays(self, np, grid):
        out = (Array * len(grid))()
        for k, a in enumerate(grid):
            a = np.ascontiguousarray(a, dtype=np.float64)
            self.keep.append(a)
            out[k].data = a.ctypes.data
            out[k].shape.ndim = a.ndim
            for d, n in enumerate(a.shape):
                out[k].shape.dims[d] = n
        return out

    def options(self, kwargs):
        o = Options()
        self.lib.spart_weights_options_init(ctypes.byref(o))
        o.method = 1 if kwargs.get("method") == "conservative" else 0
        for name in ("axis_input", "axis_output"):
            axes = kwargs.get(name)
            if axes is not None:
                setattr(o, "num_" + name, len(axes))
                arr = getattr(o, name)
                for k, a in enumerate(axes):
                    arr[k] = a
        return o

    def build(self, np, grid_in, grid_out, kwargs, device):
        a_in, a_out = self.arrays(np, grid_in), self.arrays(np, grid_out)
        o = self.options(kwargs)
        w = ctypes.c_void_p()
        fn = self.lib.spart_weights_build_device if device else self.lib.spart_weights_build
        self.check(fn(self.context, len(grid_in), a_in, a_out, ctypes.byref(o), ctypes.byref(w)),
                   "weights_build_device" if device else "weights_build")
        self.lib.spart_weights_num_entries.restype = ctypes.c_int64
        n = self.lib.spart_weights_num_entries(w)
        return w, n

    def free(self, w):
        self.lib.spart_weights_free(w)
        self.keep = []


def best_of(repeat, run, after=None):
    """The best wall time of `run` over `repeat` calls; `after(result)`
    (freeing what it made) runs outside the timing."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
        if after is not None:
            after(result)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library")
    parser.add_argument("--regridding", default=None, help="a folder to put first on sys.path")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--case", default=",".join(CASES))
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    try:
        import numpy as np
    except ImportError as error:
        print(f"SKIP numpy: {error}")
        return 77
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # removed in NumPy 2.5; regridding 3.6.0 calls it
    if args.regridding:
        sys.path.insert(0, args.regridding)
    try:
        import regridding
        peer = f"regridding {getattr(regridding, '__version__', '?')}"
    except Exception as error:  # noqa: BLE001 - any failure means no peer
        regridding = None
        peer = f"regridding unavailable ({error})"
    spart = Spart(args.library)
    spart.threads(args.threads)
    versions = [f"python {platform.python_version()}", f"numpy {np.__version__}", peer]
    for module in ("numba", "numba_cuda"):
        try:
            versions.append(f"{module} {__import__(module).__version__}")
        except Exception:  # noqa: BLE001
            pass
    lines = ["| case | entries | regridding GPU (ms) | spart host, %d threads (ms) | spart device (ms) "
             "| regridding GPU / spart device | host / device |" % args.threads,
             "|---|---:|---:|---:|---:|---:|---:|"]
    print("; ".join(versions), flush=True)
    for name in args.case.split(","):
        grid_in, grid_out, kwargs = CASES[name](np)
        w, entries = spart.build(np, grid_in, grid_out, kwargs, False)
        spart.free(w)
        host = best_of(args.repeat, lambda: spart.build(np, grid_in, grid_out, kwargs, False)[0],
                       spart.free)
        device = float("nan")
        if spart.has_device:
            try:
                spart.free(spart.build(np, grid_in, grid_out, kwargs, True)[0])
                device = best_of(args.repeat,
                                 lambda: spart.build(np, grid_in, grid_out, kwargs, True)[0],
                                 spart.free)
            except RuntimeError as error:
                print(f"{name}: spart device: {error}", flush=True)
        peer_time = float("nan")
        if regridding is not None:
            try:
                call = lambda: regridding.weights(grid_in, grid_out, device="cuda", **kwargs)  # noqa: E731
                call()
                peer_time = best_of(args.repeat, call)
            except Exception as error:  # noqa: BLE001 - a case the peer cannot build
                print(f"{name}: regridding GPU: {type(error).__name__}: {str(error)[:200]}", flush=True)
        ms = lambda t: f"{t * 1e3:.3f}" if t == t else "n/a"  # noqa: E731
        ratio = lambda a, b: f"{a / b:.2f}x" if a == a and b == b else "n/a"  # noqa: E731
        line = (f"| {name} | {entries} | {ms(peer_time)} | {ms(host)} | {ms(device)} | "
                f"{ratio(peer_time, device)} | {ratio(host, device)} |")
        lines.append(line)
        print(line, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("## Weights built on the GPU (issue 30)\n\n")
            f.write(f"Machine: {platform.node()}; {'; '.join(versions)}\n\n")
            f.write("Command: `" + " ".join(sys.argv) + "`\n\n")
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
