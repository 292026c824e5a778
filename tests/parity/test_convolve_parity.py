#!/usr/bin/env python3
"""
Parity of spart_weights_convolve with regridding.convolve_weights (pinned
3.6.0), on the same weights: the package's own weights are loaded into spart
(spart_weights_create_from_arrays), both convolve them with the same kernel,
and the results are compared triple by triple, in order: the indices must be
equal and in the same order, the values equal to 1e-13 relative to the
largest of the element (the line says when every value is equal bit for
bit).

Cases: a shared kernel, per-wavelength kernels (an orthogonal axis), kernels
varying across the output grid (along one or both resampled axes), kernels
larger than the grid, even-sized kernels, kernels with zeros and negative
values, 1-D weights, and grids whose outputs reach the edge.

Exit status: 0 all passed, 1 any failure, 77 when numpy or regridding 3.6.0
cannot be imported (a failure instead when SPART_REQUIRE_PARITY=1).

    test_convolve_parity.py --library build/libspart.so
"""

import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

REFERENCE_VERSION = "3.6.0"
SKIP = 77
TOLERANCE = 1e-13


def import_reference():
    """numpy and regridding, or a reason they are not usable."""
    try:
        import numpy  # noqa: F401
        import regridding  # noqa: F401
        from importlib.metadata import version
    except ImportError as error:
        return f"cannot import the reference packages: {error}"
    found = version("regridding")
    if found != REFERENCE_VERSION:
        return f"regridding {found} is installed, the parity tests pin {REFERENCE_VERSION}"
    return None


def rotated_grid(np, num, angle, shift=0.0, leading=()):
    """A square grid of num x num vertices over [-1, 1]^2, rotated."""
    x = np.linspace(-1, 1, num)
    x, y = np.meshgrid(x, x, indexing="ij")
    xr = x * np.cos(angle) - y * np.sin(angle) + shift
    yr = x * np.sin(angle) + y * np.cos(angle)
    return (np.broadcast_to(xr, leading + xr.shape).copy(),
            np.broadcast_to(yr, leading + yr.shape).copy())


def lattice(np, num, half_width, leading=()):
    x = np.linspace(-half_width, half_width, num)
    x, y = np.meshgrid(x, x, indexing="ij")
    return (np.broadcast_to(x, leading + x.shape).copy(),
            np.broadcast_to(y, leading + y.shape).copy())


def weights_2d(np, regridding, leading=(), num_in=9, num_out=13, half_width=1.2):
    """Conservative weights from a rotated grid onto a lattice that the
    rotated grid reaches the edge of (so light is spread past the edge)."""
    axis = (-2, -1) if leading else None
    if leading:
        angles = np.linspace(0.1, 0.5, int(np.prod(leading))).reshape(leading)
        xs, ys = [], []
        for angle in angles.reshape(-1):
            x, y = rotated_grid(np, num_in, angle)
            xs.append(x)
            ys.append(y)
        coordinates_input = (np.stack(xs).reshape(leading + (num_in, num_in)),
                             np.stack(ys).reshape(leading + (num_in, num_in)))
    else:
        coordinates_input = rotated_grid(np, num_in, 0.3)
    coordinates_output = lattice(np, num_out, half_width, leading)
    weights = regridding.weights(coordinates_input, coordinates_output, axis_input=axis,
                                 axis_output=axis, method="conservative")
    return weights, axis


def weights_1d(np, regridding):
    x_in = np.linspace(-1, 1, 11)
    x_out = np.linspace(-1.05, 1.05, 8)
    return regridding.weights(x_in, x_out, method="conservative"), None


def gaussian(np, shape, width):
    grids = np.meshgrid(*[np.arange(n) - n // 2 for n in shape], indexing="ij")
    kernel = np.exp(-sum(g * g for g in grids) / (2 * width * width))
    return kernel / kernel.sum()


def compare(np, spart_weights, reference):
    """Triple by triple; returns (ok, text)."""
    array, shape_input, shape_output = reference
    if tuple(shape_input) != spart_weights.shape_input:
        return False, f"shape_input {spart_weights.shape_input} != {tuple(shape_input)}"
    if tuple(shape_output) != spart_weights.shape_output:
        return False, f"shape_output {spart_weights.shape_output} != {tuple(shape_output)}"
    array = np.asarray(array, dtype=object)
    if array.shape != spart_weights.shape_orthogonal:
        return False, f"orthogonal {spart_weights.shape_orthogonal} != {array.shape}"
    offsets, ii, io, v = spart_weights.arrays()
    flat = array.reshape(-1)
    worst = 0.0
    bits = True
    entries = 0
    for e in range(flat.size):
        r_in, r_out, r_v = (np.asarray(a) for a in flat[e])
        s = slice(offsets[e], offsets[e + 1])
        if r_in.size != offsets[e + 1] - offsets[e]:
            return False, f"element {e}: {offsets[e + 1] - offsets[e]} entries, package {r_in.size}"
        if not (np.array_equal(ii[s], r_in) and np.array_equal(io[s], r_out)):
            return False, f"element {e}: indices differ"
        entries += r_in.size
        if r_in.size == 0:
            continue
        scale = np.max(np.abs(r_v))
        difference = np.max(np.abs(v[s] - r_v))
        worst = max(worst, difference / scale if scale > 0 else difference)
        bits = bits and np.array_equal(v[s].view(np.int64), r_v.astype(np.float64).view(np.int64))
    ok = worst <= TOLERANCE
    how = "bits equal" if bits else f"worst relative difference {worst:.3g}"
    return ok, f"{entries} entries, indices and order equal, {how}"


def run_case(np, regridding, spart, spart_ctypes, name, weights, axis, kernel):
    loaded = spart.weights_from_arrays(weights, axis_input=axis, axis_output=axis)
    reference = regridding.convolve_weights(weights, kernel, axis_input=axis, axis_output=axis)
    result = spart_ctypes.convolve_weights(spart, loaded, kernel)
    return compare(np, result, reference)


def shuffled(np, weights, rng):
    """The same weights with each element's entries in a random order: runs
    split, and a pair can come out once per run that reaches it."""
    array, shape_input, shape_output = weights
    array = np.asarray(array, dtype=object)
    result = np.empty(array.shape, dtype=object)
    for index in np.ndindex(*array.shape):
        ii, io, v = (np.asarray(a) for a in array[index])
        order = rng.permutation(ii.size)
        result[index] = (ii[order], io[order], v[order])
    return result, shape_input, shape_output


def cases(np, regridding):
    w2, a2 = weights_2d(np, regridding)
    w3, a3 = weights_2d(np, regridding, leading=(3,))
    w6, a6 = weights_2d(np, regridding, leading=(2, 3))
    w1, a1 = weights_1d(np, regridding)
    w_shared, a_shared = weights_2d(np, regridding, leading=(1,))
    # the same (3,) weights declared for grids with one more orthogonal axis
    grown = (w3[0], (1,) + tuple(w3[1]), (2,) + tuple(w3[2]))
    rng = np.random.default_rng(8)
    n = 12  # output cells per axis of weights_2d
    signed = rng.normal(size=(5, 5))
    signed[1, 3] = 0.0
    signed[2, 2] = 0.0
    yield "shared 5x5 gaussian", w2, a2, gaussian(np, (5, 5), 1.0)
    yield "shared 3x3 box", w2, a2, np.full((3, 3), 1.0 / 9)
    yield "shared 1x1 delta", w2, a2, np.ones((1, 1))
    yield "shared 21x21 (larger than the 12x12 grid)", w2, a2, gaussian(np, (21, 21), 4.0)
    yield "shared 31x7 (larger than the grid along one axis)", w2, a2, rng.random((31, 7))
    yield "shared even 4x4", w2, a2, rng.random((4, 4))
    yield "shared even 2x6", w2, a2, rng.random((2, 6))
    yield "shared with zeros and negative values", w2, a2, signed
    yield "all zeros (no entries)", w2, a2, np.zeros((3, 3))
    yield "empty along one axis (0, 3)", w2, a2, np.zeros((0, 3))
    yield "varying over the grid (12, 12, 3, 3)", w2, a2, rng.random((n, n, 3, 3))
    yield "varying along the first axis (12, 1, 5, 5)", w2, a2, rng.random((n, 1, 5, 5))
    yield "varying along the second axis (12, 4, 4)", w2, a2, rng.random((n, 4, 4))
    yield "varying over the grid, larger than the grid", w2, a2, rng.random((n, n, 15, 15))
    yield "per wavelength (3, 1, 1, 7, 7)", w3, a3, rng.random((3, 1, 1, 7, 7))
    yield "per wavelength and over the grid", w3, a3, rng.random((3, n, n, 3, 3))
    yield "shared over wavelengths", w3, a3, gaussian(np, (5, 5), 1.0)
    yield "kernels along an axis the weights share (1,) -> (3,)", w_shared, a_shared, \
        rng.random((3, 1, 1, 5, 5))
    yield "a kernel adding an orthogonal axis (3,) -> (2, 3)", grown, a3, rng.random(
        (2, 1, 1, 1, 3, 3))
    yield "per channel of (2, 3) elements (2, 1, 1, 1, 5, 5)", w6, a6, rng.random(
        (2, 1, 1, 1, 5, 5))
    yield "per element of (2, 3) elements (2, 3, 1, 1, 4, 4)", w6, a6, rng.random(
        (2, 3, 1, 1, 4, 4))
    yield "entries not ordered by input cell (runs split)", shuffled(np, w2, rng), a2, \
        gaussian(np, (3, 3), 1.0)
    yield "1-D shared 3", w1, a1, np.array([0.25, 0.5, 0.25])
    yield "1-D even 2", w1, a1, np.array([0.3, 0.7])
    yield "1-D larger than the grid (19)", w1, a1, rng.random(19)
    yield "1-D varying over the grid (7, 3)", w1, a1, rng.random((7, 3))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    reason = import_reference()
    if reason is not None:
        print(f"SKIP: {reason}")
        return 1 if os.environ.get("SPART_REQUIRE_PARITY") == "1" else SKIP
    import numpy as np
    import regridding
    import spart_ctypes

    spart = spart_ctypes.Spart(args.library)
    failures = 0
    for name, weights, axis, kernel in cases(np, regridding):
        start = time.perf_counter()
        try:
            ok, text = run_case(np, regridding, spart, spart_ctypes, name, weights, axis, kernel)
        except Exception:  # noqa: BLE001 (report and go on)
            ok, text = False, traceback.format_exc()
        seconds = time.perf_counter() - start
        print(f"{'PASS' if ok else 'FAIL'} {name} ({seconds:.2f} s): {text}", flush=True)
        failures += 0 if ok else 1
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
