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

The host-array path again with the NumPy grids page-locked in place
(cudaHostRegister through CuPy or PyTorch): what the copies cost from
pageable memory. From grids already on the device (CuPy arrays, or
PyTorch's without CuPy): spart_weights_build_device_grids
on CuPy copies of the grids, and, for the one-element lattice cases,
regridding's own device entry (weights_conservative_2d_clipping_cuda, the
function regridding.weights(..., device="cuda") calls per element), which
takes an input grid already on the device if it is given in output-cell
units: it is given so (converted before the timing, which favours it).
Every timed call of regridding ends with numba's cuda.synchronize() (its
last kernel is asynchronous; spart's call returns synchronised). Whether
regridding.weights() itself accepts device arrays is tried once and said.
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
            if hasattr(a, "__cuda_array_interface__"):
                out[k].data = a.__cuda_array_interface__["data"][0]
            else:
                a = np.ascontiguousarray(a, dtype=np.float64)
                out[k].data = a.ctypes.data
            self.keep.append(a)
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
        """device: False (host build), True (device build from host grids),
        "grids" (device build from device grids)."""
        a_in, a_out = self.arrays(np, grid_in), self.arrays(np, grid_out)
        o = self.options(kwargs)
        w = ctypes.c_void_p()
        name = ("weights_build_device_grids" if device == "grids" else
                "weights_build_device" if device else "weights_build")
        fn = getattr(self.lib, "spart_" + name)
        self.check(fn(self.context, len(grid_in), a_in, a_out, ctypes.byref(o), ctypes.byref(w)),
                   name)
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


class DeviceArrays:
    """Device copies of NumPy arrays, with CuPy or else PyTorch (both expose
    __cuda_array_interface__)."""

    def __init__(self, np):
        self.np = np
        try:
            import cupy
            self.name, self.cupy, self.torch = f"cupy {cupy.__version__}", cupy, None
        except Exception:  # noqa: BLE001 - try torch
            import torch
            if not torch.cuda.is_available():
                raise RuntimeError("torch without CUDA")
            self.name, self.cupy, self.torch = f"torch {torch.__version__}", None, torch

    def copy(self, a):
        a = self.np.ascontiguousarray(a, dtype=self.np.float64)
        if self.cupy is not None:
            return self.cupy.asarray(a)
        return self.torch.as_tensor(a, device="cuda")

    def pin(self, arrays, pinned):
        """Page-lock NumPy arrays in place (cudaHostRegister), so that
        spart's copies of them run at the pinned rate, appending each to
        `pinned` (for unpin) once it is."""
        for a in arrays:
            if self.cupy is not None:
                self.cupy.cuda.runtime.hostRegister(a.ctypes.data, a.nbytes, 0)
            else:
                code = self.torch.cuda.cudart().cudaHostRegister(a.ctypes.data, a.nbytes, 0)
                if int(getattr(code, "value", code)) != 0:
                    raise RuntimeError(f"cudaHostRegister: error {code}")
            pinned.append(a)

    def unpin(self, arrays):
        for a in arrays:
            if self.cupy is not None:
                self.cupy.cuda.runtime.hostUnregister(a.ctypes.data)
            else:
                self.torch.cuda.cudart().cudaHostUnregister(a.ctypes.data)

    def synchronize(self):
        if self.cupy is not None:
            self.cupy.cuda.Device().synchronize()
        else:
            self.torch.cuda.synchronize()


def to_lattice_units(cp, grid_in, grid_out):
    """regridding's device entry wants the input grid on the device in
    output-cell units (as it converts host grids itself)."""
    x_out, y_out = grid_out
    origin_x, origin_y = float(x_out[0, 0]), float(y_out[0, 0])
    step_x, step_y = float(x_out[1, 0] - x_out[0, 0]), float(y_out[0, 1] - y_out[0, 0])
    return (cp.copy((grid_in[0] - origin_x) / step_x), cp.copy((grid_in[1] - origin_y) / step_y))


def peer_from_device(regridding, cp, grid_in, grid_out, kwargs, repeat):
    """The best time of regridding's device entry from device grids (one
    element, lattice output), or NaN with the reason printed."""
    if kwargs.get("method") != "conservative" or len(grid_in) != 2 or grid_in[0].ndim != 2:
        return float("nan")
    try:
        from numba import cuda
        from regridding._weights._weights_conservative_2d._clipping._cuda import (
            weights_conservative_2d_clipping_cuda as clip_cuda)
        units = to_lattice_units(cp, grid_in, grid_out)
        call = lambda: (clip_cuda(grid_input=units, grid_output=grid_out), cuda.synchronize())  # noqa: E731
        call()
        return best_of(repeat, call)
    except Exception as error:  # noqa: BLE001 - report, do not stop
        print(f"regridding from device grids: {type(error).__name__}: {str(error)[:200]}", flush=True)
        return float("nan")


def public_api_takes_device_arrays(regridding, cp, np):
    """Whether regridding.weights(..., device="cuda") takes CuPy grids, and
    what it gives: a sentence."""
    grid_in, grid_out, kwargs = case_readme(np)
    try:
        expected = regridding.weights(grid_in, grid_out, device="cuda", **kwargs)[0]
        got = regridding.weights(tuple(cp.copy(a) for a in grid_in),
                                 tuple(cp.copy(a) for a in grid_out), device="cuda", **kwargs)[0]
        same = all(np.array_equal(np.asarray(a.copy_to_host() if hasattr(a, "copy_to_host") else a),
                                  np.asarray(b.copy_to_host() if hasattr(b, "copy_to_host") else b))
                   for a, b in zip(expected[()], got[()]))
        return (f"regridding.weights(..., device=\"cuda\") took {cp.name} grids and gave "
                + ("the same weights" if same else "DIFFERENT weights (it reads device grids as "
                   "already in output-cell units)"))
    except Exception as error:  # noqa: BLE001
        return (f"regridding.weights(..., device=\"cuda\") refused {cp.name} grids: "
                f"{type(error).__name__}: {str(error)[:160]}")


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
    try:
        cp = DeviceArrays(np)
        versions.append(f"device arrays by {cp.name}")
    except Exception as error:  # noqa: BLE001 - no device grids then
        cp = None
        print(f"neither CuPy nor PyTorch with CUDA ({error}): no device-grid columns", flush=True)
    lines = ["| case | entries | regridding GPU (ms) | spart host, %d threads (ms) | spart device (ms) "
             "| regridding GPU / spart device | host / device "
             "| spart device, pinned host grids (ms) "
             "| spart, device grids (ms) | regridding, device grids (ms) "
             "| regridding / spart, device grids | regridding GPU (host grids) / spart (device grids) |"
             % args.threads,
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("; ".join(versions), flush=True)
    notes = []
    if cp is not None and regridding is not None:
        notes.append(public_api_takes_device_arrays(regridding, cp, np))
        print(notes[-1], flush=True)
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
                from numba import cuda as numba_cuda
                call = lambda: (regridding.weights(grid_in, grid_out, device="cuda", **kwargs),  # noqa: E731
                                numba_cuda.synchronize())
                call()
                peer_time = best_of(args.repeat, call)
            except Exception as error:  # noqa: BLE001 - a case the peer cannot build
                print(f"{name}: regridding GPU: {type(error).__name__}: {str(error)[:200]}", flush=True)
        grids = peer_grids = pinned = float("nan")
        if cp is not None and spart.has_device:
            host_arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in grid_in + grid_out]
            registered = []
            try:
                cp.pin(host_arrays, registered)
                pinned_in = tuple(host_arrays[:len(grid_in)])
                pinned_out = tuple(host_arrays[len(grid_in):])
                pinned = best_of(args.repeat,
                                 lambda: spart.build(np, pinned_in, pinned_out, kwargs, True)[0],
                                 spart.free)
            except Exception as error:  # noqa: BLE001 - report, do not stop
                print(f"{name}: pinned host grids: {type(error).__name__}: {error}", flush=True)
            finally:
                cp.unpin(registered)
        if cp is not None and spart.has_device and hasattr(spart.lib, "spart_weights_build_device_grids"):
            device_in = tuple(cp.copy(a) for a in grid_in)
            device_out = tuple(cp.copy(a) for a in grid_out)
            cp.synchronize()
            try:
                w, n = spart.build(np, device_in, device_out, kwargs, "grids")
                if n != entries:
                    print(f"{name}: {n} entries from device grids, {entries} from host grids", flush=True)
                spart.free(w)
                grids = best_of(args.repeat,
                                lambda: spart.build(np, device_in, device_out, kwargs, "grids")[0],
                                spart.free)
            except RuntimeError as error:
                print(f"{name}: spart from device grids: {error}", flush=True)
            if regridding is not None:
                peer_grids = peer_from_device(regridding, cp, grid_in, grid_out, kwargs, args.repeat)
            del device_in, device_out
        ms = lambda t: f"{t * 1e3:.3f}" if t == t else "n/a"  # noqa: E731
        ratio = lambda a, b: f"{a / b:.2f}x" if a == a and b == b else "n/a"  # noqa: E731
        line = (f"| {name} | {entries} | {ms(peer_time)} | {ms(host)} | {ms(device)} | "
                f"{ratio(peer_time, device)} | {ratio(host, device)} | {ms(pinned)} | {ms(grids)} | "
                f"{ms(peer_grids)} | {ratio(peer_grids, grids)} | {ratio(peer_time, grids)} |")
        lines.append(line)
        print(line, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("## Weights built on the GPU (issue 30)\n\n")
            f.write(f"Machine: {platform.node()}; {'; '.join(versions)}\n\n")
            f.write("Command: `" + " ".join(sys.argv) + "`\n\n")
            f.write("\n".join(lines) + "\n")
            for note in notes:
                f.write("\n" + note + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
