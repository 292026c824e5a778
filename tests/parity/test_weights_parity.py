#!/usr/bin/env python3
"""
Parity of spart's weights builders, transposes and applications with the
pinned Python package `regridding` 3.6.0, run on the same inputs.

Each case prints one line (PASS, FAIL or SKIP, its name, its time and what
it compared). Weights are compared as dense matrices per orthogonal element
(repeated pairs summed), never triple by triple:
- 1-D builders and every application of weights: bit for bit;
- 2-D and 3-D builders: within 1e-12 of the largest entry of the element
  (regridding compiles its 2-D sweep with numba fastmath).
Where the package is known to be wrong (docs: shared/reference/regridding.md,
section 5) spart is checked against the exact answer instead (overlap
lengths and areas by polygon clipping, conservation), and the case also
confirms that the package still differs, so that we notice the day it is
fixed.

Exit status: 0 all passed, 1 any failure, 77 when numpy or regridding 3.6.0
cannot be imported (a failure instead when SPART_REQUIRE_PARITY=1).

    test_weights_parity.py --library build/libspart.so [-k substring] [--list]
                           [--part sweep|other] [--jobs 2]

Time: on a cold numba cache (a fresh virtual environment, as in CI) the
package's compilation is nearly all of the run. --jobs 2 (what CTest runs)
runs the cases that reach the package's 2-D sweep (--part sweep) and the
others (--part other) in two processes at once, each compiling its own
functions; CTest also sets NUMBA_OPT=0 (LLVM compiles the package's
functions without optimising them: the same IEEE operations, as fastmath
leaves nothing to reassociate unoptimised, several times faster to compile,
and fast enough on these small grids) and NUMBA_CACHE_DIR to a folder of
the build, so that those unoptimised functions never reach the package's
own cache, which the benchmarks use.

Cold numba caches: the package's 2-D sweep takes minutes to compile per
argument signature. Every sweep call here therefore uses one signature
(read-only C-contiguous input grid, writable C-contiguous output grid, no
weights_input), which is also the signature of its default, perturbed,
call; see unperturbed_seed().
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


# ---- cases -----------------------------------------------------------------------

CASES = []


def case(function):
    CASES.append(function)
    return function


class Skip(Exception):
    pass


def run(cases, allow_missing):
    from spart_ctypes import SpartError, SPART_ERROR_NOT_IMPLEMENTED

    failed = passed = skipped = 0
    width = max((len(c.__name__) for c in cases), default=0)
    for function in cases:
        start = time.perf_counter()
        try:
            detail = function() or ""
            status = "PASS"
        except Skip as reason:
            status, detail = "SKIP", str(reason)
        except SpartError as error:
            if error.status == SPART_ERROR_NOT_IMPLEMENTED and allow_missing:
                status, detail = "SKIP", f"not implemented yet: {error}"
            else:
                status, detail = "FAIL", str(error)
        except AssertionError as error:
            status, detail = "FAIL", str(error) or traceback.format_exc(limit=2)
        except Exception as error:  # a crash in the case is a failure too
            status = "FAIL"
            detail = f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=4)}"
        elapsed = time.perf_counter() - start
        print(f"{status} {function.__name__:<{width}} {elapsed:6.2f} s  {detail}", flush=True)
        failed += status == "FAIL"
        passed += status == "PASS"
        skipped += status == "SKIP"
    print(f"{passed} passed, {failed} failed, {skipped} skipped of {len(cases)} cases")
    return 1 if failed else 0


# ---- helpers ---------------------------------------------------------------------


def setup_globals(library):
    global np, rg, SP, SP1, SP2, dense, SpartError
    import numpy
    import regridding
    import spart_ctypes

    np = numpy
    rg = regridding
    dense = spart_ctypes.dense
    SpartError = spart_ctypes.SpartError
    SP = spart_ctypes.Spart(library)
    SP1 = spart_ctypes.Spart(library, threads=1)
    SP2 = spart_ctypes.Spart(library, threads=2)


def unperturbed_seed():
    """
    A seed for regridding's `perturb=True` that leaves the coordinates as
    they are. The package draws its jitter with
    numpy.random.default_rng(seed).normal(coord, scale), and default_rng
    returns a Generator it is given unchanged. Asking for perturb=True with
    this "generator" is perturb=False in effect, but the output grid reaches
    the sweep as the writable array the default (perturbed) call passes, so
    every sweep call shares one compiled numba signature. Checked below by
    unperturbed_seed_is_exact().
    """

    class Unperturbed(np.random.Generator):
        def normal(self, loc=0.0, scale=1.0, size=None):
            # C order, as the array the real draw returns
            return np.array(loc, dtype=np.float64, order="C", copy=True)

    return Unperturbed(np.random.PCG64(0))


def package_weights(coordinates_input, coordinates_output, exact=False, **kwargs):
    """regridding.weights; exact=True: no perturbation (see unperturbed_seed)."""
    if exact:
        kwargs.update(perturb=True, seed=unperturbed_seed())
    return rg.weights(coordinates_input, coordinates_output, **kwargs)


def jittered(coordinates, scale=1e-7, seed=7):
    """Coordinates moved by scale * extent * N(0,1): pre-perturbed grids for
    the sweep, identical for spart and the package."""
    rng = np.random.default_rng(seed)
    return tuple(c + scale * np.ptp(c) * rng.standard_normal(c.shape) for c in coordinates)


def lattice(x, y):
    return tuple(np.meshgrid(np.asarray(x, float), np.asarray(y, float), indexing="ij"))


def rotated(grid, angle, shift=(0.0, 0.0)):
    x, y = grid
    c, s = np.cos(angle), np.sin(angle)
    return (x * c - y * s + shift[0], x * s + y * c + shift[1])


def warped(grid, angle=0.3, a=0.15, b=0.10):
    """The clipping-versus-sweep warp of regridding.md section 7, item 7."""
    u, v = grid
    c, s = np.cos(angle), np.sin(angle)
    return (u * c - v * s + a * u * v, u * s + v * c + b * u * u)


def readme_warp(num=66):
    """The curvilinear grid of regridding's README, and its bounding-box lattice."""
    x, y = lattice(np.linspace(-5, 5, num), np.linspace(-5, 5, num))
    angle = 0.4
    x_input = x * np.cos(angle) - y * np.sin(angle) + 0.05 * x * x
    y_input = x * np.sin(angle) + y * np.cos(angle) + 0.05 * y * y
    output = lattice(np.linspace(x_input.min(), x_input.max(), num // 2),
                     np.linspace(y_input.min(), y_input.max(), num // 2))
    return (x_input, y_input), output


def describe(a, b):
    d = np.abs(a - b)
    d = np.where(np.isnan(a) & np.isnan(b), 0, d)
    k = np.unravel_index(np.nanargmax(np.where(np.isnan(d), np.inf, d)), d.shape)
    return f"max |diff| {d[k]:.3g} at {tuple(int(i) for i in k)}: spart {a[k]!r}, reference {b[k]!r}"


def assert_bitwise(a, b, what):
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}"
    if not np.array_equal(a, b, equal_nan=True):
        raise AssertionError(f"{what}: not bit for bit: {describe(a, b)}")


def assert_close(a, b, rtol, what, matrix_axes=2):
    """Per element (the last matrix_axes axes), |a - b| <= rtol * max |b|."""
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}"
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: NaN at different places"
    lead = a.shape[: a.ndim - matrix_axes]
    a2 = np.nan_to_num(a.reshape((-1,) + a.shape[len(lead):]))
    b2 = np.nan_to_num(b.reshape((-1,) + b.shape[len(lead):]))
    worst = 0.0
    for e in range(a2.shape[0]):
        scale = np.max(np.abs(b2[e])) if b2[e].size else 0.0
        diff = np.max(np.abs(a2[e] - b2[e])) if b2[e].size else 0.0
        if diff > rtol * scale or (scale == 0 and diff != 0):
            raise AssertionError(
                f"{what}: element {e}: {describe(a2[e], b2[e])} > {rtol:g} x {scale:.3g}"
            )
        worst = max(worst, diff / scale if scale else 0.0)
    if np.array_equal(a, b, equal_nan=True):
        return "bitwise"
    return f"to {worst:.1g} relative"


def compare(spart_weights, package, axis_input=None, axis_output=None, rtol=0.0, what="weights"):
    """Shapes equal, and dense matrices bit for bit (rtol 0) or within rtol."""
    array, shape_input, shape_output = package
    assert tuple(shape_input) == spart_weights.shape_input, (
        f"{what}: shape_input spart {spart_weights.shape_input}, package {tuple(shape_input)}")
    assert tuple(shape_output) == spart_weights.shape_output, (
        f"{what}: shape_output spart {spart_weights.shape_output}, package {tuple(shape_output)}")
    assert np.shape(array) == spart_weights.shape_orthogonal, (
        f"{what}: orthogonal shape spart {spart_weights.shape_orthogonal}, package "
        f"{np.shape(array)}")
    a = dense(spart_weights)
    b = dense(package, axis_input, axis_output)
    if rtol == 0:
        assert_bitwise(a, b, what)
        return "bitwise"
    return assert_close(a, b, rtol, what)


def entries(weights):
    return weights.num_entries


def expect_spart_error(name, function):
    try:
        function()
    except SpartError as error:
        assert error.name == name, f"expected {name}, got {error}"
        return error.sentence
    raise AssertionError(f"spart did not fail with {name}")


def refusal(function):
    """The sentence of a clear refusal (SPART_ERROR_INVALID_ARGUMENT or
    NOT_IMPLEMENTED) of a build the sweep cannot do right, else None: where
    the reference gives a wrong answer, refusing is an acceptable answer
    (DESIGN.md: a clear error, not a wrong answer)."""
    try:
        function()
    except SpartError as error:
        if error.name in ("SPART_ERROR_INVALID_ARGUMENT", "SPART_ERROR_NOT_IMPLEMENTED"):
            return repr(error.sentence)
        raise
    return None


def expect_package_error(function):
    try:
        function()
    except Exception as error:  # the package's own exception, whatever it is
        return f"{type(error).__name__}"
    return None


# ---- exact answers -------------------------------------------------------------


def polygon_area(p):
    x, y = p[:, 0], p[:, 1]
    return 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)


def counterclockwise(p):
    return p if polygon_area(p) > 0 else p[::-1]


def clip_convex(subject, clipper):
    """Sutherland-Hodgman: subject clipped by the convex counter-clockwise clipper."""
    output = list(subject)
    n = len(clipper)
    for k in range(n):
        a, b = clipper[k], clipper[(k + 1) % n]
        edge = b - a
        points, output = output, []
        if not points:
            break
        for m in range(len(points)):
            p, q = points[m], points[(m + 1) % len(points)]
            sp = edge[0] * (p[1] - a[1]) - edge[1] * (p[0] - a[0])
            sq = edge[0] * (q[1] - a[1]) - edge[1] * (q[0] - a[0])
            if sp >= 0:
                output.append(p)
            if (sp >= 0) != (sq >= 0):
                t = sp / (sp - sq)
                output.append(p + t * (q - p))
    return np.array(output) if len(output) >= 3 else None


def cells(grid):
    """The counter-clockwise corner polygons of every cell, flat C order."""
    x, y = grid
    nx, ny = x.shape
    result = []
    for i in range(nx - 1):
        for j in range(ny - 1):
            p = np.array([[x[i, j], y[i, j]], [x[i + 1, j], y[i + 1, j]],
                          [x[i + 1, j + 1], y[i + 1, j + 1]], [x[i, j + 1], y[i, j + 1]]])
            result.append(counterclockwise(p))
    return result


def exact_weights_2d(grid_input, grid_output):
    """area(in ∩ out) / area(in) for every pair of (convex) cells."""
    cells_in, cells_out = cells(grid_input), cells(grid_output)
    boxes_out = [(c.min(0), c.max(0)) for c in cells_out]
    result = np.zeros((len(cells_in), len(cells_out)))
    for i, ci in enumerate(cells_in):
        low, high = ci.min(0), ci.max(0)
        area = polygon_area(ci)
        for o, co in enumerate(cells_out):
            lo, ho = boxes_out[o]
            if np.any(lo > high) or np.any(ho < low):
                continue
            piece = clip_convex(ci, co)
            if piece is not None:
                result[i, o] = polygon_area(piece) / area
    return result


def exact_weights_1d(x_input, x_output):
    """overlap length / input cell length, any orientation."""
    result = np.zeros((len(x_input) - 1, len(x_output) - 1))
    for i in range(len(x_input) - 1):
        a, b = sorted((x_input[i], x_input[i + 1]))
        for o in range(len(x_output) - 1):
            c, d = sorted((x_output[o], x_output[o + 1]))
            result[i, o] = max(0.0, min(b, d) - max(a, c)) / (b - a)
    return result


# ---- multilinear --------------------------------------------------------------------


@case
def multilinear_1d_extrapolate():
    x = np.arange(5.0)
    points = np.array([-0.5, 0.5, 3.5, 4.5, 2.0, 4.0, 0.0, 1.25])
    w = SP.weights(x, points)
    verdict = compare(w, rg.weights(x, points))
    values = SP.regrid(x, points, x * x)
    expected = np.array([-0.5, 0.5, 12.5, 19.5, 4.0, 16.0, 0.0])
    assert np.allclose(values[:7], expected, rtol=0, atol=1e-15), f"x² at points: {values}"
    return f"dense {verdict}; x² at the points {values[:4]} as analytic"


@case
def multilinear_1d_nan():
    x = np.arange(5.0)
    points = np.array([-0.5, 0.5, 3.5, 4.5, 4.0, 0.0])
    w = SP.weights(x, points, bounds="nan")
    verdict = compare(w, rg.weights(x, points, bounds="nan"))
    nan = np.isnan(SP.regrid(x, points, x, bounds="nan"))
    assert list(nan) == [True, False, False, True, False, False], f"NaN pattern {nan}"
    return f"dense {verdict}; NaN exactly outside"


@case
def multilinear_1d_raise():
    x = np.arange(5.0)
    inside = np.array([0.5, 3.5, 4.0, 0.0])
    verdict = compare(SP.weights(x, inside, bounds="raise"), rg.weights(x, inside, bounds="raise"))
    outside = np.array([0.5, 4.5])
    sentence = expect_spart_error("SPART_ERROR_OUT_OF_BOUNDS",
                                  lambda: SP.weights(x, outside, bounds="raise"))
    package = expect_package_error(lambda: rg.weights(x, outside, bounds="raise"))
    assert package == "ValueError", f"package raised {package}"
    return f"inside: {verdict}; outside: both fail (spart: {sentence!r})"


@case
def multilinear_1d_nonuniform_weights_input():
    rng = np.random.default_rng(1)
    x = np.cumsum(rng.uniform(0.1, 1.0, 30))
    points = rng.uniform(x[0] - 1, x[-1] + 1, 50)
    points[:5] = x[[0, 3, 7, 12, 29]]  # exact vertices
    wi = rng.uniform(0.5, 2.0, 30)
    w = SP.weights(x, points, weights_input=wi)
    return "dense " + compare(w, rg.weights(x, points, weights_input=wi))


@case
def multilinear_1d_descending_grid():
    rng = np.random.default_rng(2)
    x = np.cumsum(rng.uniform(0.1, 1.0, 12))[::-1].copy()
    points = rng.uniform(x.min(), x.max(), 20)
    verdict = compare(SP.weights(x, points), rg.weights(x, points))
    values = rng.normal(size=x.size)
    interpolated = SP.regrid(x, points, values)
    expected = np.interp(points, x[::-1], values[::-1])
    assert np.allclose(interpolated, expected, rtol=0, atol=1e-13), "not np.interp"
    return f"dense {verdict}; agrees with np.interp"


def rectilinear_2d():
    rng = np.random.default_rng(3)
    x = np.cumsum(rng.uniform(0.2, 1.0, 9))
    y = np.cumsum(rng.uniform(0.2, 1.0, 7))
    grid = lattice(x, y)
    points = (rng.uniform(x[0] - 1, x[-1] + 1, (6, 5)), rng.uniform(y[0] - 1, y[-1] + 1, (6, 5)))
    return grid, points


@case
def multilinear_2d_rectilinear_extrapolate():
    grid, points = rectilinear_2d()
    return "dense " + compare(SP.weights(grid, points), rg.weights(grid, points), rtol=1e-12)


@case
def multilinear_2d_rectilinear_nan():
    grid, points = rectilinear_2d()
    w = SP.weights(grid, points, bounds="nan")
    return "dense " + compare(w, rg.weights(grid, points, bounds="nan"), rtol=1e-12)


def curvilinear_2d():
    grid = warped(lattice(np.linspace(-1, 1, 12), np.linspace(-1, 1, 10)), angle=0.35)
    rng = np.random.default_rng(4)
    points = (rng.uniform(-1.6, 1.6, (8, 5)), rng.uniform(-1.6, 1.6, (8, 5)))
    return grid, points


@case
def multilinear_2d_curvilinear_extrapolate():
    grid, points = curvilinear_2d()
    return "dense " + compare(SP.weights(grid, points), rg.weights(grid, points), rtol=1e-12)


@case
def multilinear_2d_curvilinear_nan():
    grid, points = curvilinear_2d()
    w = SP.weights(grid, points, bounds="nan")
    return "dense " + compare(w, rg.weights(grid, points, bounds="nan"), rtol=1e-12)


@case
def multilinear_2d_curvilinear_raise():
    grid, points = curvilinear_2d()
    inside = (0.5 * points[0][:2], 0.5 * points[1][:2])
    verdict = compare(SP.weights(grid, inside, bounds="raise"),
                      rg.weights(grid, inside, bounds="raise"), rtol=1e-12)
    expect_spart_error("SPART_ERROR_OUT_OF_BOUNDS", lambda: SP.weights(grid, points, bounds="raise"))
    assert expect_package_error(lambda: rg.weights(grid, points, bounds="raise")) == "ValueError"
    return f"inside: {verdict}; outside: both fail"


@case
def multilinear_3d_rectilinear():
    rng = np.random.default_rng(5)
    axes = [np.cumsum(rng.uniform(0.2, 1.0, n)) for n in (5, 6, 4)]
    grid = tuple(np.meshgrid(*axes, indexing="ij"))
    points = tuple(rng.uniform(a[0] - 0.5, a[-1] + 0.5, (5, 3, 2)) for a in axes)
    return "dense " + compare(SP.weights(grid, points), rg.weights(grid, points), rtol=1e-12)


@case
def multilinear_3d_curvilinear():
    rng = np.random.default_rng(6)
    u, v, t = np.meshgrid(np.linspace(0, 1, 5), np.linspace(0, 1, 6), np.linspace(0, 1, 4),
                          indexing="ij")
    grid = (u + 0.2 * v + 0.05 * t * t, v + 0.1 * u * u, t + 0.15 * u - 0.1 * v)
    points = tuple(rng.uniform(0, 1.1, (5, 3, 2)) for _ in range(3))
    return "dense " + compare(SP.weights(grid, points), rg.weights(grid, points), rtol=1e-12)


@case
def multilinear_orthogonal_axes():
    rng = np.random.default_rng(7)
    # a different 1-D grid per row (stack along axis 0), points per row
    x = np.cumsum(rng.uniform(0.1, 1.0, (3, 11)), axis=1)
    points = rng.uniform(0, 6, (3, 7))
    v1 = compare(SP.weights(x, points, axis_input=-1, axis_output=-1),
                 rg.weights(x, points, axis_input=-1, axis_output=-1), -1, -1)
    # one grid, points arranged along two axes
    grid = np.linspace(0, 1, 11) ** 2
    points = rng.uniform(-0.1, 1.1, (4, 5))
    w = SP.weights(grid, points, axis_input=0, axis_output=(0, 1))
    v2 = compare(w, rg.weights(grid, points, axis_input=0, axis_output=(0, 1)), 0, (0, 1))
    return f"stack of grids {v1}; points on two axes {v2}"


@case
def multilinear_2d_weights_input():
    grid, points = curvilinear_2d()
    wi = np.random.default_rng(8).uniform(0.5, 2, grid[0].shape)
    w = SP.weights(grid, points, weights_input=wi)
    return "dense " + compare(w, rg.weights(grid, points, weights_input=wi), rtol=1e-12)


@case
def multilinear_non_finite_points():
    x = np.arange(5.0)
    points = np.array([0.5, np.nan, np.inf, -np.inf, 2.0])
    verdicts = []
    for bounds in ("extrapolate", "nan"):
        w = SP.weights(x, points, bounds=bounds)
        verdicts.append(compare(w, rg.weights(x, points, bounds=bounds)))
    expect_spart_error("SPART_ERROR_OUT_OF_BOUNDS", lambda: SP.weights(x, points, bounds="raise"))
    assert expect_package_error(lambda: rg.weights(x, points, bounds="raise")) == "ValueError"
    grid, _ = curvilinear_2d()
    p2 = (np.array([[0.1, np.nan]]), np.array([[0.2, 0.3]]))
    v2 = compare(SP.weights(grid, p2), rg.weights(grid, p2), rtol=1e-12)
    return f"NaN and ±inf points: extrapolate {verdicts[0]}, nan {verdicts[1]}; 2-D {v2}; raise fails"


# ---- conservative 1-D ---------------------------------------------------------------


@case
def conservative_1d_uniform_ascending():
    fine, coarse = np.linspace(-1, 1, 11), np.linspace(-1, 1, 6)
    v1 = compare(SP.weights(fine, coarse, method="conservative"),
                 rg.weights(fine, coarse, method="conservative"))
    v2 = compare(SP.weights(coarse, fine, method="conservative"),
                 rg.weights(coarse, fine, method="conservative"))
    down = SP.regrid(fine, coarse, np.ones(10), method="conservative")
    up = SP.regrid(coarse, fine, np.ones(5), method="conservative")
    # linspace(-1, 1, 6) and (-1, 1, 11) share vertices only to rounding
    assert np.allclose(down, 2, rtol=0, atol=1e-15), f"coarsening ones gives {down - 2}"
    assert np.allclose(up, 0.5, rtol=0, atol=1e-15), f"refining ones gives {up - 0.5}"
    return f"coarsen {v1}, refine {v2}; ones -> 2 and 1/2 (1e-15)"


@case
def conservative_1d_uniform_descending():
    # A reversed input: the package divides by the length of the mirror
    # cell (regridding.md section 5, item 1), which on a linspace equals the
    # cell's own length only to rounding; spart divides by the cell's own.
    a, b = np.linspace(-1, 1, 21), np.linspace(-1, 1, 11) + 1e-6
    verdicts = []
    for name, x_in, x_out, rtol in (("output", a, b[::-1], 0), ("input", a[::-1], b, 1e-14),
                                    ("both", a[::-1], b[::-1], 1e-14)):
        x_in, x_out = x_in.copy(), x_out.copy()
        w = SP.weights(x_in, x_out, method="conservative")
        verdict = compare(w, rg.weights(x_in, x_out, method="conservative"), rtol=rtol,
                          what=f"reversed {name}")
        assert np.min(w.arrays()[1]) >= 0, "spart emitted a negative index"
        assert np.allclose(dense(w), exact_weights_1d(x_in, x_out), rtol=0, atol=1e-14)
        verdicts.append(f"{name} {verdict}")
    return "reversed " + ", ".join(verdicts) + "; exact overlaps"



@case
def conservative_1d_nonuniform_ascending():
    rng = np.random.default_rng(9)
    x_in = np.cumsum(rng.uniform(0.1, 1.0, 40))
    x_out = np.cumsum(rng.uniform(0.2, 2.0, 17)) + 0.3
    w = SP.weights(x_in, x_out, method="conservative")
    verdict = compare(w, rg.weights(x_in, x_out, method="conservative"))
    ii, io, v = w.arrays()[1:]
    formula = (np.minimum(x_in[ii + 1], x_out[io + 1]) - np.maximum(x_in[ii], x_out[io])) / (
        x_in[ii + 1] - x_in[ii])
    assert np.array_equal(v, formula), "values are not the overlap formula bit for bit"
    return f"dense {verdict}; each value bitwise (min - max) / length"


@case
def conservative_1d_descending_nonuniform_truth():
    # regridding.md section 5, item 1: the package divides by the mirror cell's length
    x_in, x_out = np.array([3.0, 1.0, 0.0]), np.array([0.0, 3.0])
    w = SP.weights(x_in, x_out, method="conservative")
    truth = exact_weights_1d(x_in, x_out)
    assert np.array_equal(dense(w), truth), f"spart {dense(w).ravel()}, truth {truth.ravel()}"
    rng = np.random.default_rng(10)
    x_in = np.cumsum(rng.uniform(0.1, 1.0, 25))[::-1].copy()
    x_out = np.cumsum(rng.uniform(0.3, 1.5, 9)) - 0.2
    w2 = SP.weights(x_in, x_out, method="conservative")
    assert np.allclose(dense(w2), exact_weights_1d(x_in, x_out), rtol=0, atol=1e-14)
    package = dense(rg.weights(np.array([3.0, 1.0, 0.0]), np.array([0.0, 3.0]),
                               method="conservative"))
    assert not np.allclose(package, truth), "the package is right now: drop this exception"
    return f"spart = overlap/length (1, 1); package still {package.ravel()} (known bug)"


@case
def conservative_1d_zero_length_cells_truth():
    # A repeated vertex makes a zero-length cell: the package fails (its
    # walk leaves an element unset); spart gives the overlaps of the others.
    x_in, x_out = np.array([0.0, 1.0, 1.0, 2.0]), np.array([0.0, 0.5, 0.5, 2.0])
    w = dense(SP.weights(x_in, x_out, method="conservative"))[()]
    truth = np.array([[0.5, 0.0, 0.5], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert np.array_equal(w, truth), f"spart {w.tolist()}"
    try:
        package = dense(rg.weights(x_in, x_out, method="conservative"))[()]
        outcome = "gives the truth" if np.array_equal(package, truth) else "differs"
    except Exception as error:
        outcome = f"raises {type(error).__name__}"
    assert outcome != "gives the truth", "the package is right now: compare with it instead"
    return f"spart: zero-length cells give and receive nothing; package {outcome} (known bug)"


@case
def conservative_1d_partly_outside():
    x_in = np.linspace(0, 1, 11)
    x_out = np.linspace(0.55, 1.75, 7)
    w = SP.weights(x_in, x_out, method="conservative")
    verdict = compare(w, rg.weights(x_in, x_out, method="conservative"))
    assert np.allclose(dense(w), exact_weights_1d(x_in, x_out), rtol=0, atol=1e-15)
    return f"dense {verdict}; exact overlaps"


@case
def conservative_1d_empty_overlap():
    x_in, x_out = np.linspace(0, 1, 11), np.linspace(5, 6, 4)
    w = SP.weights(x_in, x_out, method="conservative")
    p = rg.weights(x_in, x_out, method="conservative")
    assert entries(w) == 0 and len(p[0][()][0]) == 0, "expected no entries"
    values = SP.regrid(x_in, x_out, np.ones(10), method="conservative")
    assert np.array_equal(values, np.zeros(3))
    return "no entries in either; regrid gives zeros"


@case
def conservative_1d_weights_input():
    rng = np.random.default_rng(11)
    x_in = np.cumsum(rng.uniform(0.1, 1.0, 30))
    x_out = np.linspace(x_in[0] - 0.5, x_in[-1] + 0.5, 12)
    wi = rng.uniform(0.5, 3, 29)
    w = SP.weights(x_in, x_out, method="conservative", weights_input=wi)
    v1 = compare(w, rg.weights(x_in, x_out, method="conservative", weights_input=wi),
                 what="ascending")
    u = np.linspace(x_in[0], x_in[-1], 12)  # uniform: the package is right on reversals
    x_uni = np.linspace(x_in[0], x_in[-1], 30)[::-1].copy()
    w2 = SP.weights(x_uni, u, method="conservative", weights_input=wi)
    v2 = compare(w2, rg.weights(x_uni, u, method="conservative", weights_input=wi), rtol=1e-14,
                 what="descending (mirror divisor, see conservative_1d_uniform_descending)")
    return f"ascending {v1}; descending uniform {v2}"


@case
def conservative_1d_orthogonal_axes():
    rng = np.random.default_rng(12)
    x = np.cumsum(rng.uniform(0.1, 1.0, (3, 4, 11)), axis=-1)
    x_out = np.linspace(0, 6, 8)
    w = SP.weights(x, x_out, axis_input=-1, axis_output=-1, method="conservative")
    v1 = compare(w, rg.weights(x, x_out, axis_input=-1, axis_output=-1, method="conservative"),
                 -1, -1)
    xt = np.ascontiguousarray(np.moveaxis(x, -1, 0))  # (11, 3, 4), resampled axis 0
    w2 = SP.weights(xt, x_out, axis_input=0, axis_output=0, method="conservative")
    v2 = compare(w2, rg.weights(xt, x_out, axis_input=0, axis_output=0, method="conservative"),
                 0, 0)
    assert np.array_equal(dense(w), dense(w2)), "the layouts give different weights"
    # every slice equals the single-slice result
    single = dense(SP.weights(x[1, 2], x_out, method="conservative"))
    assert np.array_equal(dense(w)[1, 2], single), "slice (1, 2) differs from its own build"
    return f"stack on axis -1 {v1}, on axis 0 {v2}; slices bitwise as single builds"


@case
def conservative_1d_weights_input_output_stack_truth():
    # regridding.md section 5, item 5: weights_input is broadcast to the
    # input grid's shape only, so an output with more orthogonal elements
    # indexes past it.
    x_in = np.linspace(0, 1, 11)
    x_out = np.stack([np.linspace(0, 1, 6) + s for s in (0.0, 0.05, 0.1)])
    wi = np.linspace(1, 2, 10)
    w = SP.weights(x_in, x_out, axis_input=-1, axis_output=-1, method="conservative",
                   weights_input=wi)
    plain = SP.weights(x_in, x_out, axis_input=-1, axis_output=-1, method="conservative")
    truth = dense(plain) * wi[:, None]
    assert np.array_equal(dense(w), truth), f"spart: {describe(dense(w), truth)}"
    try:
        package = rg.weights(x_in, x_out, axis_input=-1, axis_output=-1, method="conservative",
                             weights_input=wi)
        same = np.array_equal(dense(package, -1, -1), truth)
        outcome = "gives the truth" if same else "differs"
    except Exception as error:
        same, outcome = False, f"raises {type(error).__name__}"
    assert not same, "the package is right now: compare with it instead"
    return f"spart = unweighted x weights_input; package {outcome} (known bug)"


# ---- conservative 2-D: sweep ------------------------------------------------------------


def sweep_pair():
    grid_in = rotated(lattice(np.linspace(-1, 1, 14), np.linspace(-1, 1, 13)), 0.2)
    grid_out = jittered(warped(lattice(np.linspace(-0.9, 0.9, 11), np.linspace(-0.9, 0.9, 9))))
    return grid_in, grid_out


@case
def sweep_rotated_onto_warped():
    grid_in, grid_out = sweep_pair()
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False)
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    return f"{entries(w)} entries; dense " + compare(w, p, rtol=1e-12)


@case
def sweep_warped_onto_rotated():
    grid_in = warped(lattice(np.linspace(-1, 1, 25), np.linspace(-1, 1, 22)), angle=-0.2)
    grid_out = jittered(rotated(lattice(np.linspace(-1.2, 1.2, 17), np.linspace(-1, 1.1, 19)),
                                0.7))
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False)
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    return f"{entries(w)} entries; dense " + compare(w, p, rtol=1e-12)


@case
def clip_general_rotated_onto_warped():
    """The default for curvilinear outputs: exact clipping, no jitter."""
    grid_in, grid_out = sweep_pair()
    w = SP.weights(grid_in, grid_out, method="conservative")
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    return f"{entries(w)} entries (no jitter); dense against the package's sweep " + compare(
        w, p, rtol=1e-12)


@case
def clip_general_warped_onto_rotated():
    grid_in = warped(lattice(np.linspace(-1, 1, 25), np.linspace(-1, 1, 22)), angle=-0.2)
    grid_out = jittered(rotated(lattice(np.linspace(-1.2, 1.2, 17), np.linspace(-1, 1.1, 19)),
                                0.7))
    w = SP.weights(grid_in, grid_out, method="conservative")
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    return f"{entries(w)} entries (no jitter); dense against the package's sweep " + compare(
        w, p, rtol=1e-12)


@case
def sweep_default_perturbation():
    # Both jitter the output by 1e-9 of its extent, with different
    # generators (spart: GSL), so they agree to about that.
    grid_in, grid_out = sweep_pair()
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep")
    p = rg.weights(grid_in, grid_out, method="conservative")
    a, b = dense(w), dense(p)
    assert np.max(np.abs(a - b)) < 1e-6, describe(a, b)
    exact = dense(SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False))
    assert 0 < np.max(np.abs(a - exact)) < 1e-6, "the default did not perturb (or too much)"
    return f"max |diff| {np.max(np.abs(a - b)):.2g} (jitter of 1e-9)"


@case
def sweep_orthogonal_stack():
    base = lattice(np.linspace(-1, 1, 12), np.linspace(-1, 1, 11))
    stack = [rotated(base, a) for a in (0.1, 0.4, 0.7)]
    grid_in = (np.stack([s[0] for s in stack]), np.stack([s[1] for s in stack]))
    grid_out = jittered(warped(lattice(np.linspace(-1, 1, 10), np.linspace(-1, 1, 9))))
    w = SP.weights(grid_in, grid_out, axis_input=(1, 2), axis_output=(0, 1),
                   method="conservative", algorithm="sweep", perturb=False)
    p = package_weights(grid_in, grid_out, exact=True, axis_input=(1, 2), axis_output=(0, 1),
                        method="conservative")
    verdict = compare(w, p, (1, 2), (0, 1), rtol=1e-12)
    single = SP.weights(stack[2], grid_out, method="conservative", algorithm="sweep", perturb=False)
    assert np.array_equal(dense(w)[2], dense(single)[()]), "element 2 differs from its own build"
    return f"3 elements {verdict}; element 2 bitwise as a single build"


@case
def sweep_partly_outside():
    grid_in = rotated(lattice(np.linspace(0, 1, 11), np.linspace(0, 1, 10)), 0.15)
    grid_out = jittered(warped(lattice(np.linspace(0.4, 1.8, 9), np.linspace(0.3, 1.6, 8)),
                               angle=0.1))
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False)
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    verdict = compare(w, p, rtol=1e-12)
    truth = exact_weights_2d(grid_in, grid_out)
    assert np.allclose(dense(w), truth, rtol=0, atol=1e-12), describe(dense(w), truth)
    return f"dense {verdict}; exact areas to 1e-12"


@case
def sweep_empty_overlap():
    grid_in = rotated(lattice(np.linspace(0, 1, 6), np.linspace(0, 1, 5)), 0.3)
    grid_out = jittered(warped(lattice(np.linspace(5, 6, 5), np.linspace(5, 6, 4))))
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False)
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    assert entries(w) == 0, f"spart has {entries(w)} entries"
    assert len(p[0][()][0]) == 0, "the package has entries"
    return "no entries in either"


@case
def sweep_weights_input():
    # The package's sweep with weights_input is a second numba signature
    # (minutes to compile); its unweighted weights scaled per input cell are
    # the same numbers to rounding.
    grid_in, grid_out = sweep_pair()
    wi = np.random.default_rng(13).uniform(0.5, 3, (13, 12))
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False, weights_input=wi)
    p = package_weights(grid_in, grid_out, exact=True, method="conservative")
    scaled = dense(p) * wi.reshape(-1)[:, None]
    return "dense " + assert_close(dense(w), scaled, 1e-12, "weighted sweep")


@case
def sweep_mixed_orientation_truth():
    # regridding.md section 5, item 2: the sweep is wrong when one grid is
    # clockwise and the other counter-clockwise.
    x, y = lattice(np.linspace(-1, 1, 7), np.linspace(-1, 1, 6))
    grid_in = (-x, y)  # clockwise
    grid_out = jittered(rotated(lattice(np.linspace(-0.8, 0.8, 6), np.linspace(-0.8, 0.8, 5)),
                                0.3))
    truth = exact_weights_2d(grid_in, grid_out)
    p = dense(package_weights(grid_in, grid_out, exact=True, method="conservative"))
    package_error = np.max(np.abs(p - truth))
    assert package_error > 1e-6, "the package is right now: compare with it instead"
    refused = refusal(lambda: SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False))
    if refused:
        return f"spart refuses: {refused}; package off by {package_error:.3g} (known bug)"
    w = SP.weights(grid_in, grid_out, method="conservative", algorithm="sweep", perturb=False)
    error = np.max(np.abs(dense(w)[()] - truth))
    assert error < 1e-12, (f"spart: {describe(dense(w)[()], truth)} (package off by "
                           f"{package_error:.3g})")
    return f"spart = exact areas to {error:.2g}; package off by {package_error:.3g} (known bug)"


PACKAGE_IDENTICAL_GRIDS = """
import sys
import numpy as np
import regridding
grid = tuple(np.load(sys.argv[1])[k] for k in ("x", "y"))
output = (grid[0].copy(), grid[1].copy())
w = regridding.weights(grid, output, method="conservative", perturb=False)
d = np.zeros((42, 42))
np.add.at(d, (w[0][()][0], w[0][()][1]), w[0][()][2])
print(np.max(np.abs(d - np.eye(42))))
"""


def package_in_subprocess(source, arrays, memory=2 << 30, timeout=120):
    """Run `source` with the arrays saved in an .npz (its argv[1]) in a
    child Python limited to `memory` bytes: some inputs make the package
    loop until it runs out of memory. Returns (exit status, stdout)."""
    import resource
    import subprocess
    import tempfile

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "arrays.npz")
        np.savez(path, **arrays)
        try:
            done = subprocess.run([sys.executable, "-c", source, path], capture_output=True,
                                  text=True, timeout=timeout, preexec_fn=limit)
        except subprocess.TimeoutExpired:
            return None, "timed out"
    return done.returncode, done.stdout.strip()


@case
def sweep_identical_grids_truth():
    # regridding.md section 5, item 3: identical (aligned) curvilinear grids
    # without perturbation break the sweep; the truth is the identity. The
    # package, asked for this, runs out of memory (in a child process here).
    grid = rotated(lattice(np.linspace(-1, 1, 8), np.linspace(-1, 1, 7)), 0.3)
    identity = np.eye(42)
    status, output = package_in_subprocess(PACKAGE_IDENTICAL_GRIDS, dict(x=grid[0], y=grid[1]))
    if status == 0:
        package = f"off by {float(output):.3g}"
        assert float(output) > 1e-6, "the package is right now: compare with it instead"
    else:
        package = f"fails (exit status {status}, {output or 'no output'})"
    refused = refusal(lambda: SP.weights(grid, grid, method="conservative", perturb=False))
    if refused:
        return f"spart refuses: {refused}; package {package} (known bug)"
    w = SP.weights(grid, grid, method="conservative", perturb=False)
    error = np.max(np.abs(dense(w)[()] - identity))
    assert error < 1e-12, f"spart: {describe(dense(w)[()], identity)}; package {package}"
    return f"spart = identity to {error:.2g}; package {package} (known bug)"


@case
def sweep_identical_grids_default_perturbation():
    # What users get by default: the 1e-9 jitter resolves the degeneracy.
    grid = rotated(lattice(np.linspace(-1, 1, 8), np.linspace(-1, 1, 7)), 0.3)
    identity = np.eye(42)
    error = np.max(np.abs(dense(SP.weights(grid, grid, method="conservative", algorithm="sweep"))[()] - identity))
    package = np.max(np.abs(dense(rg.weights(grid, grid, method="conservative"))[()] - identity))
    assert error < 1e-6, f"spart off the identity by {error:.3g}"
    assert package < 1e-6, f"the package off the identity by {package:.3g}"
    return f"identity to {error:.2g} (spart) and {package:.2g} (package)"


# ---- conservative 2-D: clipping (lattice outputs) -----------------------------------------
# Within 1e-12 of the element's largest entry, not bit for bit: spart's
# lattice kernel (src/weights/weights_conservative_2d_clip.c) sums each input cell's
# overlaps along its edges (Green's theorem) instead of clipping polygons
# against half-planes as the package does, so its weights round differently
# (about 1e-15 relative here, and closer to the exact areas). 1e-12 is the
# issue's tolerance for every 2-D builder; the identity, refinement and
# flipped cases are also checked against exact answers below.


@case
def clip_warped_onto_lattice():
    verdicts = []
    for angle in (0.3, -0.2, 0.9):
        t = np.linspace(-0.7, 0.7, 15)
        grid_in = warped(lattice(t, t), angle=angle)
        grid_out = lattice(np.linspace(-1.1, 1.1, 12), np.linspace(-1, 1.2, 10))
        w = SP.weights(grid_in, grid_out, method="conservative")
        verdicts.append(compare(w, rg.weights(grid_in, grid_out, method="conservative"),
                                rtol=1e-12))
    return "three warps: " + ", ".join(verdicts)


@case
def clip_readme_warp():
    grid_in, grid_out = readme_warp(34)
    w = SP.weights(grid_in, grid_out, method="conservative")
    verdict = compare(w, rg.weights(grid_in, grid_out, method="conservative"), rtol=1e-12)
    totals = dense(w)[()].sum(axis=1)
    assert np.allclose(totals, 1, rtol=0, atol=3e-13), f"row sums {totals.min()}..{totals.max()}"
    return f"{entries(w)} entries, dense {verdict}; every input cell sums to 1 (3e-13)"


@case
def clip_identical_lattices():
    grid = lattice(np.linspace(-1, 1, 9), np.linspace(0, 2, 7))
    w = SP.weights(grid, grid, method="conservative")
    verdict = compare(w, rg.weights(grid, grid, method="conservative"), rtol=1e-12)
    assert np.allclose(dense(w)[()], np.eye(48), rtol=0, atol=1e-12), "not the identity"
    return f"dense {verdict}; identity"


@case
def clip_refinement_blocks():
    fine = lattice(np.linspace(0, 1, 13), np.linspace(0, 2, 9))
    coarse = lattice(np.linspace(0, 1, 7), np.linspace(0, 2, 5))
    w = SP.weights(fine, coarse, method="conservative")
    verdict = compare(w, rg.weights(fine, coarse, method="conservative"), rtol=1e-12)
    d = dense(w)[()]
    i, j = np.meshgrid(np.arange(12), np.arange(8), indexing="ij")
    expected = np.zeros((96, 24))
    expected[np.arange(96), ((i // 2) * 4 + j // 2).ravel()] = 1
    assert np.allclose(d, expected, rtol=0, atol=1e-14), describe(d, expected)
    return f"dense {verdict}; exact 0/1 blocks"


@case
def clip_flipped_input():
    x, y = lattice(np.linspace(-1, 1, 9), np.linspace(-1, 1, 8))
    grid_in = rotated((-x, y), 0.25)  # clockwise, rotated
    grid_out = lattice(np.linspace(-1.2, 1.2, 8), np.linspace(-1.3, 1.3, 9))
    w = SP.weights(grid_in, grid_out, method="conservative")
    verdict = compare(w, rg.weights(grid_in, grid_out, method="conservative"), rtol=1e-12)
    truth = exact_weights_2d(grid_in, grid_out)
    assert np.allclose(dense(w)[()], truth, rtol=0, atol=1e-12), describe(dense(w)[()], truth)
    return f"dense {verdict}; exact areas"


@case
def clip_stack_weights_input():
    base = lattice(np.linspace(-1, 1, 10), np.linspace(-1, 1, 9))
    stack = [rotated(base, a) for a in (0.05, 0.3, 1.1)]
    grid_in = (np.stack([s[0] for s in stack]), np.stack([s[1] for s in stack]))
    grid_out = lattice(np.linspace(-1.5, 1.5, 11), np.linspace(-1.5, 1.5, 12))
    wi = np.random.default_rng(14).uniform(0.5, 3, (3, 9, 8))
    kwargs = dict(axis_input=(1, 2), axis_output=(0, 1), method="conservative")
    w = SP.weights(grid_in, grid_out, weights_input=wi, **kwargs)
    p = rg.weights(grid_in, grid_out, weights_input=wi, **kwargs)
    return "3 rotations, per-element weights_input: " + compare(w, p, (1, 2), (0, 1), rtol=1e-12)


def interleaved_problem():
    base = lattice(np.linspace(-1, 1, 9), np.linspace(-1, 1, 8))
    stack = [rotated(base, a) for a in (0.1, 0.7)]
    # input (9, 2, 8): resampled axes 0 and 2, orthogonal axis 1
    grid_in = tuple(np.ascontiguousarray(np.stack([s[k] for s in stack], axis=1)) for k in (0, 1))
    grid_out = lattice(np.linspace(-1.4, 1.4, 13), np.linspace(-1.4, 1.3, 12))
    grid_out = tuple(g[:, np.newaxis, :] for g in grid_out)  # (13, 1, 12)
    return stack, grid_in, grid_out


@case
def clip_interleaved_axes():
    stack, grid_in, grid_out = interleaved_problem()
    kwargs = dict(axis_input=(0, 2), axis_output=(0, 2), method="conservative")
    w = SP.weights(grid_in, grid_out, **kwargs)
    verdict = compare(w, rg.weights(grid_in, grid_out, **kwargs), (0, 2), (0, 2), rtol=1e-12)
    single = SP.weights(stack[1], (grid_out[0][:, 0], grid_out[1][:, 0]), method="conservative")
    assert np.array_equal(dense(w)[1], dense(single)[()]), "element 1 differs from its own build"
    return f"axis_input=(0, 2): dense {verdict}; element 1 bitwise as a single build"


@case
def clip_interleaved_weights_input_truth():
    # regridding.md section 5, item 5: the package indexes weights_input
    # with the orthogonal index, wrong unless the resampled axes are trailing.
    stack, grid_in, grid_out = interleaved_problem()
    wi = np.random.default_rng(15).uniform(0.5, 3, (8, 2, 7))
    kwargs = dict(axis_input=(0, 2), axis_output=(0, 2), method="conservative")
    w = SP.weights(grid_in, grid_out, weights_input=wi, **kwargs)
    plain = dense(SP.weights(grid_in, grid_out, **kwargs))
    truth = plain * np.moveaxis(wi, 1, 0).reshape(2, -1)[:, :, None]
    assert np.allclose(dense(w), truth, rtol=1e-15, atol=0), describe(dense(w), truth)
    try:
        p = dense(rg.weights(grid_in, grid_out, weights_input=wi, **kwargs), (0, 2), (0, 2))
        same = np.allclose(p, truth, rtol=1e-12, atol=0)
        outcome = "gives the truth" if same else "differs"
    except Exception as error:
        same, outcome = False, f"raises {type(error).__name__}"
    assert not same, "the package is right now: compare with it instead"
    return f"spart = unweighted x weights_input; package {outcome} (known bug)"


@case
def clip_partly_outside_and_empty():
    grid_in = warped(lattice(np.linspace(0, 1, 9), np.linspace(0, 1, 8)), angle=0.2)
    grid_out = lattice(np.linspace(0.5, 2.0, 8), np.linspace(-0.5, 0.9, 9))
    w = SP.weights(grid_in, grid_out, method="conservative")
    verdict = compare(w, rg.weights(grid_in, grid_out, method="conservative"), rtol=1e-12)
    far = lattice(np.linspace(10, 11, 4), np.linspace(10, 11, 5))
    empty = SP.weights(grid_in, far, method="conservative")
    p = rg.weights(grid_in, far, method="conservative")
    assert entries(empty) == 0 and len(p[0][()][0]) == 0, "expected no entries"
    return f"partly outside {verdict}; far apart: no entries in either"


# ---- transposes --------------------------------------------------------------------------


@case
def transpose_weights_exact():
    x_in, x_out = np.linspace(0, 1, 11), np.linspace(0.05, 1.2, 7)
    w = SP.weights(x_in, x_out, method="conservative")
    t = SP.transpose_weights(w)
    assert (t.shape_input, t.shape_output) == (w.shape_output, w.shape_input), "shapes not swapped"
    v1 = compare(t, rg.transpose_weights(rg.weights(x_in, x_out, method="conservative")))
    grid_in, grid_out = readme_warp(20)
    w2 = SP.weights(grid_in, grid_out, method="conservative")
    t2 = SP.transpose_weights(w2)
    assert np.array_equal(dense(t2), np.swapaxes(dense(w2), -1, -2)), "2-D: not the transpose"
    v2 = compare(t2, rg.transpose_weights(rg.weights(grid_in, grid_out, method="conservative")),
                 rtol=1e-12)
    return f"1-D {v1}; 2-D {v2}"


@case
def transpose_conservative_1d():
    rng = np.random.default_rng(16)
    x_in = np.cumsum(rng.uniform(0.1, 1.0, 21))
    x_out = np.linspace(x_in[0] + 0.03, x_in[-1] + 0.5, 9)
    wi = rng.uniform(0.5, 3, 20)
    verdicts = []
    for weights_input in (None, wi):
        w = SP.weights(x_in, x_out, method="conservative", weights_input=weights_input)
        t = SP.transpose_weights_conservative(w, x_in, x_out, weights_input=weights_input)
        p = rg.weights(x_in, x_out, method="conservative", weights_input=weights_input)
        pt = rg.transpose_weights_conservative(p, x_in, x_out, weights_input=weights_input)
        verdicts.append(compare(t, pt))
    return f"without weights_input {verdicts[0]}, with {verdicts[1]}"


@case
def transpose_conservative_2d():
    grid_in, grid_out = readme_warp(24)
    wi = np.random.default_rng(17).uniform(0.5, 3, (23, 23))
    verdicts = []
    for weights_input in (None, wi):
        w = SP.weights(grid_in, grid_out, method="conservative", weights_input=weights_input)
        t = SP.transpose_weights_conservative(w, grid_in, grid_out, weights_input=weights_input)
        p = rg.weights(grid_in, grid_out, method="conservative", weights_input=weights_input)
        pt = rg.transpose_weights_conservative(p, grid_in, grid_out, weights_input=weights_input)
        verdicts.append(compare(t, pt, rtol=1e-12))
    # orthogonal stack with per-element weights_input (trailing axes)
    base = lattice(np.linspace(-1, 1, 9), np.linspace(-1, 1, 8))
    stack = [rotated(base, a) for a in (0.2, 0.5)]
    gi = (np.stack([s[0] for s in stack]), np.stack([s[1] for s in stack]))
    go = lattice(np.linspace(-1.4, 1.4, 10), np.linspace(-1.4, 1.4, 9))
    wis = np.random.default_rng(18).uniform(0.5, 3, (2, 8, 7))
    kw = dict(axis_input=(1, 2), axis_output=(0, 1))
    w = SP.weights(gi, go, method="conservative", weights_input=wis, **kw)
    t = SP.transpose_weights_conservative(w, gi, go, weights_input=wis, **kw)
    p = rg.weights(gi, go, method="conservative", weights_input=wis, **kw)
    pt = rg.transpose_weights_conservative(p, gi, go, weights_input=wis, **kw)
    verdicts.append(compare(t, pt, (0, 1), (1, 2), rtol=1e-12))
    return "without weights_input {}, with {}, stack with {}".format(*verdicts)


@case
def transpose_conservative_opposite_orientation_truth():
    # regridding.md section 5, item 4: the package uses signed volumes, so
    # grids of opposite orientation give negative transposed weights.
    x_in = np.linspace(0, 1, 11)
    x_out = np.linspace(1, 0, 6)  # descending
    w = SP.weights(x_in, x_out, method="conservative")
    t = SP.transpose_weights_conservative(w, x_in, x_out)
    truth = exact_weights_1d(x_out, x_in)  # fraction of each output cell in each input cell
    assert np.allclose(dense(t), truth, rtol=1e-15, atol=0), describe(dense(t), truth)
    back = SP.regrid_from_weights(t, SP.regrid_from_weights(w, np.ones(10)))
    assert np.allclose(back, 1, rtol=1e-15, atol=0), f"round trip of ones {back}"
    p = rg.weights(x_in, x_out, method="conservative")
    pt = dense(rg.transpose_weights_conservative(p, x_in, x_out))
    assert np.any(pt < 0), "the package is right now: compare with it instead"
    return f"spart positive, round trip of ones = 1; package min {pt.min():.3g} (known bug)"


# ---- applying weights --------------------------------------------------------------------


@case
def regrid_from_weights_batch_axes_1d():
    rng = np.random.default_rng(19)
    x_in = np.cumsum(rng.uniform(0.1, 1.0, (3, 12)), axis=1)
    x_out = np.linspace(0, 8, 9)
    w = SP.weights(x_in, x_out, axis_input=-1, axis_output=-1, method="conservative")
    p = rg.weights(x_in, x_out, axis_input=-1, axis_output=-1, method="conservative")
    values = rng.normal(size=(5, 3, 11))
    mine = SP.regrid_from_weights(w, values, axis_input=-1, axis_output=-1)
    theirs = rg.regrid_from_weights(*p, values_input=values, axis_input=-1, axis_output=-1)
    assert_bitwise(mine, theirs, "values (5, 3, 11)")
    scalar = SP.regrid_from_weights(SP.weights(x_in[0], x_out, method="conservative"),
                                    values[:, 0])
    theirs = rg.regrid_from_weights(*rg.weights(x_in[0], x_out, method="conservative"),
                                    values_input=values[:, 0])
    assert_bitwise(scalar, theirs, "values (5, 11) on 0-d weights")
    return f"{mine.shape} and {scalar.shape} bitwise"


@case
def regrid_from_weights_batch_axes_2d():
    grid_in, grid_out = readme_warp(20)
    w = SP.weights(grid_in, grid_out, method="conservative")
    values = np.random.default_rng(20).normal(size=(4, 19, 19))
    mine = SP.regrid_from_weights(w, values)
    theirs = rg.regrid_from_weights(*w.to_regridding(), values_input=values)
    assert_bitwise(mine, theirs, "spart's weights applied by both")
    package = rg.regrid_from_weights(*rg.weights(grid_in, grid_out, method="conservative"),
                                     values_input=values)
    verdict = assert_close(mine, package, 1e-12, "package weights", matrix_axes=3)
    return f"{mine.shape}: bitwise with the same weights; {verdict} with the package's"


@case
def regrid_one_call():
    x_in, x_out = np.linspace(0, 1, 11), np.linspace(-0.1, 1.05, 8)
    values = np.random.default_rng(21).normal(size=10)
    assert_bitwise(SP.regrid(x_in, x_out, values, method="conservative"),
                   rg.regrid(x_in, x_out, values, method="conservative"), "conservative 1-D")
    points = np.linspace(-0.2, 1.3, 17)
    vertex_values = np.random.default_rng(22).normal(size=11)
    assert_bitwise(SP.regrid(x_in, points, vertex_values), rg.regrid(x_in, points, vertex_values),
                   "multilinear 1-D")
    grid_in, grid_out = readme_warp(24)
    cell_values = np.random.default_rng(23).normal(size=(23, 23))
    mine = SP.regrid(grid_in, grid_out, cell_values, method="conservative")
    theirs = rg.regrid(grid_in, grid_out, cell_values, method="conservative")
    verdict = assert_close(mine, theirs, 1e-12, "conservative 2-D", matrix_axes=2)
    grid_in, grid_out = sweep_pair()
    values_sweep = np.random.default_rng(24).normal(size=(13, 12))
    mine = SP.regrid(grid_in, grid_out, values_sweep, method="conservative", perturb=False)
    theirs = rg.regrid(grid_in, grid_out, values_sweep, method="conservative", perturb=True,
                       seed=unperturbed_seed())
    v2 = assert_close(mine, theirs, 1e-12, "sweep", matrix_axes=2)
    return f"1-D bitwise (both methods); 2-D clip {verdict}, sweep {v2}"


# ---- invariants on random grids -------------------------------------------------------------


def random_grid(rng, nx, ny, low=-1.0, high=1.0, amplitude=0.3):
    """A lattice whose vertices move by up to amplitude/2 of a cell: the
    cells stay convex and keep their orientation."""
    x, y = lattice(np.linspace(low, high, nx), np.linspace(low, high, ny))
    step = (high - low) / max(nx, ny)
    return (x + amplitude / 2 * step * rng.uniform(-1, 1, x.shape),
            y + amplitude / 2 * step * rng.uniform(-1, 1, y.shape))


@case
def invariant_conservation():
    rng = np.random.default_rng(25)
    results = []
    for output in ("sweep", "clip"):
        grid_in = rotated(random_grid(rng, 15, 13, -0.6, 0.6, 0.3), rng.uniform(0, 1))
        if output == "sweep":
            grid_out = random_grid(rng, 12, 14, -1.2, 1.2, 0.3)
        else:
            grid_out = lattice(np.linspace(-1.2, 1.2, 12), np.linspace(-1.2, 1.2, 14))
        w = SP.weights(grid_in, grid_out, method="conservative")
        totals = dense(w)[()].sum(axis=1)  # every input cell is fully covered
        error = np.max(np.abs(totals - 1))
        assert error < 1e-12, f"{output}: input cell totals off by {error:.3g}"
        values = rng.uniform(1, 2, (14, 12))
        moved = SP.regrid_from_weights(w, values)
        assert abs(moved.sum() / values.sum() - 1) < 1e-13, f"{output}: total not conserved"
        results.append(f"{output} {error:.1g}")
    x_in = np.cumsum(rng.uniform(0.1, 1, 30))
    x_out = np.linspace(x_in[0] - 1, x_in[-1] + 1, 11)
    totals = dense(SP.weights(x_in, x_out, method="conservative")).sum(axis=1)
    assert np.max(np.abs(totals - 1)) < 1e-14, "1-D totals"
    return "input cell totals = 1: " + ", ".join(results) + ", 1-D"


@case
def invariant_non_negative():
    rng = np.random.default_rng(26)
    worst = []
    for trial in range(3):
        grid_in = random_grid(rng, 14, 12, amplitude=0.3)
        grid_out = rotated(random_grid(rng, 11, 13, amplitude=0.3), rng.uniform(-1, 1))
        d = dense(SP.weights(grid_in, grid_out, method="conservative"))
        assert d.min() >= -1e-12 * d.max(), f"trial {trial}: min {d.min():.3g}"
        worst.append(d.min())
    grid_out = lattice(np.linspace(-1, 1, 9), np.linspace(-1, 1, 8))
    d = dense(SP.weights(random_grid(rng, 14, 12, amplitude=0.3), grid_out, method="conservative"))
    assert d.min() >= 0, f"clipping gave {d.min():.3g}"
    return f"sweep minima {min(worst):.2g} (>= -1e-12 x max); clipping >= 0"


@case
def invariant_transpose_round_trip():
    rng = np.random.default_rng(27)
    grid_in = random_grid(rng, 12, 11, amplitude=0.3)
    grid_out = rotated(random_grid(rng, 10, 9, -0.6, 0.6, 0.3), 0.4)
    # no jitter: the conservative transpose uses the unperturbed volumes
    w = SP.weights(grid_in, grid_out, method="conservative", perturb=False)
    tt = SP.transpose_weights(SP.transpose_weights(w))
    assert np.array_equal(dense(tt), dense(w)), "T(T(W)) != W"
    tc = SP.transpose_weights_conservative(w, grid_in, grid_out)
    tcc = SP.transpose_weights_conservative(tc, grid_out, grid_in)
    assert_close(dense(tcc), dense(w), 1e-14, "Tc(Tc(W))")
    # the output grid lies inside the input, so every output cell is fully
    # covered: its transposed weights (fractions of it) sum to 1
    totals = dense(tc)[()].sum(axis=1)
    assert np.allclose(totals, 1, rtol=0, atol=1e-12), f"Tc totals off by {np.abs(totals - 1).max()}"
    return "T(T(W)) = W exactly, Tc(Tc(W)) = W to 1e-14, each output cell's Tc sums to 1"


@case
def invariant_threads_identical():
    rng = np.random.default_rng(28)
    grid_in = random_grid(rng, 40, 37, amplitude=0.3)
    problems = {
        "multilinear curvilinear": ((grid_in, (rng.uniform(-1.2, 1.2, (20, 25)),
                                               rng.uniform(-1.2, 1.2, (20, 25)))), {}),
        "conservative 1-D stack": ((np.cumsum(rng.uniform(0.1, 1, (6, 50)), axis=1),
                                    np.linspace(0, 30, 21)),
                                   dict(method="conservative", axis_input=-1, axis_output=-1)),
        "sweep": ((grid_in, rotated(random_grid(rng, 31, 33, amplitude=0.3), 0.3)),
                  dict(method="conservative")),
        "clip": ((grid_in, lattice(np.linspace(-1, 1, 25), np.linspace(-1, 1, 27))),
                 dict(method="conservative")),
        "sweep stack": (((np.stack([grid_in[0], grid_in[0] * 0.9]),
                          np.stack([grid_in[1], grid_in[1] * 1.1])),
                         rotated(random_grid(rng, 21, 23, amplitude=0.3), 0.3)),
                        dict(method="conservative", axis_input=(1, 2), axis_output=(0, 1))),
    }
    parts = ("offsets", "indices_input", "indices_output", "values")
    for name, (grids, kwargs) in problems.items():
        # the OpenMP default too, in case a kernel does not take its thread
        # count from the context
        with omp_default_threads(1):
            a = SP1.weights(*grids, **kwargs).arrays()
        with omp_default_threads(2):
            b = SP2.weights(*grids, **kwargs).arrays()
        for x, y, part in zip(a, b, parts):
            assert x.shape == y.shape and x.tobytes() == y.tobytes(), f"{name}: {part} differ"
    grid_out = lattice(np.linspace(-1, 1, 13), np.linspace(-1, 1, 12))
    stack = (np.stack([grid_in[0], grid_in[0] * 0.9]), np.stack([grid_in[1], grid_in[1] * 1.1]))
    kw = dict(axis_input=(1, 2), axis_output=(0, 1))
    w = SP.weights(stack, grid_out, method="conservative", **kw)
    values = rng.normal(size=(3, 2, 39, 36))
    results = []
    for threads, spart in ((1, SP1), (2, SP2)):
        with omp_default_threads(threads):
            transposed = spart.transpose_weights_conservative(w, stack, grid_out, **kw).arrays()
            results.append((spart.regrid_from_weights(w, values, axis_input=(-2, -1),
                                                      axis_output=(-2, -1)), transposed))
    assert results[0][0].tobytes() == results[1][0].tobytes(), "regrid_from_weights differs"
    for x, y, part in zip(results[0][1], results[1][1], parts):
        assert x.tobytes() == y.tobytes(), f"conservative transpose: {part} differ"
    return (f"{len(problems)} builders, regrid_from_weights, conservative transpose: "
            "bytewise equal for 1 and 2 threads")


class omp_default_threads:
    """Set the OpenMP default thread count (omp_set_num_threads) for a block."""

    def __init__(self, threads):
        import ctypes

        self.gomp = ctypes.CDLL("libgomp.so.1")
        self.threads = threads

    def __enter__(self):
        self.saved = self.gomp.omp_get_max_threads()
        self.gomp.omp_set_num_threads(self.threads)

    def __exit__(self, *exception):
        self.gomp.omp_set_num_threads(self.saved)


CONTEXT_THREADS = """
import os
import sys
import threading
import time
import numpy as np
sys.path.insert(0, sys.argv[2])
from spart_ctypes import Spart

def count():
    return len(os.listdir("/proc/self/task"))

class Watcher(threading.Thread):
    # samples the process's thread count while spart works (ctypes releases
    # the GIL during the call); OpenMP workers of a finished region may exit,
    # so counting after the call would miss them
    def __init__(self):
        super().__init__(daemon=True)
        self.most, self.running = 0, True
    def run(self):
        while self.running:
            self.most = max(self.most, count())
            time.sleep(0.0002)

spart = Spart(sys.argv[1], threads=1)
x, y = np.meshgrid(np.linspace(-1, 1, 301), np.linspace(-1, 1, 281), indexing="ij")
c, s = np.cos(0.3), np.sin(0.3)
rotated = (x * c - y * s, x * s + y * c)
points = (0.9 * x, 0.9 * y)
builds = {
    "sweep": lambda: spart.weights((x, y), rotated, method="conservative"),
    "clip": lambda: spart.weights(rotated, (x, y), method="conservative"),
    "multilinear": lambda: spart.weights(rotated, points),
    "conservative 1-D": lambda: spart.weights(np.linspace(0, 1, 200001),
                                              np.linspace(0, 1, 150001), method="conservative"),
}
for name, build in builds.items():
    watcher = Watcher()
    watcher.start()
    time.sleep(0.01)
    baseline = watcher.most
    build()
    watcher.running = False
    watcher.join()
    print(name.replace(" ", "_"), baseline, watcher.most)
"""


@case
def context_threads_honoured():
    # spart_context_set_threads(1) must keep a build on one thread even where
    # the OpenMP default is larger: no OpenMP worker may appear meanwhile.
    import subprocess

    environment = dict(os.environ, OMP_NUM_THREADS="4", OPENBLAS_NUM_THREADS="1",
                       MKL_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
    done = subprocess.run([sys.executable, "-c", CONTEXT_THREADS, SP.path, HERE],
                          capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    extra = {}
    for line in done.stdout.split("\n"):
        if line:
            name, baseline, most = line.split()
            extra[name.replace("_", " ")] = int(most) - int(baseline)
    offenders = [f"{name} (+{n})" for name, n in extra.items() if n > 0]
    assert not offenders, ("with the context set to 1 thread and OMP_NUM_THREADS=4, these "
                           "builds started OpenMP threads: " + ", ".join(offenders))
    return f"{len(extra)} builders stay on one thread with a 1-thread context"


# ---- the trick that keeps the package's sweep to one signature --------------------------


@case
def unperturbed_seed_is_exact():
    from regridding import _util

    grid_in, grid_out = sweep_pair()
    normalized = _util._normalize_input_output_coordinates(grid_in, grid_out, perturb=True,
                                                           seed=unperturbed_seed())
    assert all(np.array_equal(a, b) for a, b in zip(normalized[1], grid_out)), "jittered"
    return "perturb=True with the identity generator leaves the grid exactly as given"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default=os.environ.get("SPART_LIBRARY"),
                        help="path of libspart.so (default: $SPART_LIBRARY)")
    parser.add_argument("-k", dest="select", default=None, help="run cases whose name has this")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--part", choices=sorted(PARTS), default=None,
                        help="run one part: the cases that reach the 2-D sweep, or the others")
    parser.add_argument("--jobs", type=int, default=1,
                        help="2: run the two parts in two processes at once")
    parser.add_argument("--allow-missing", action="store_true",
                        default=os.environ.get("SPART_PARITY_ALLOW_MISSING") == "1",
                        help="report SPART_ERROR_NOT_IMPLEMENTED as SKIP, not FAIL")
    args = parser.parse_args()
    if args.list:
        print("\n".join(c.__name__ for c in CASES if in_part(c, args.part)))
        return 0
    if args.jobs > 1 and args.part is None:
        return run_parts(sys.argv[1:])
    reason = import_reference()
    if reason is not None:
        required = os.environ.get("SPART_REQUIRE_PARITY") == "1"
        print(f"{'FAIL' if required else 'SKIP'}: {reason}")
        return 1 if required else SKIP
    if not args.library:
        print("FAIL: give --library PATH or set SPART_LIBRARY")
        return 1
    setup_globals(args.library)
    print(f"spart {SP.version} ({args.library}), regridding {REFERENCE_VERSION}, numpy "
          f"{np.__version__}, {SP.threads()} threads")
    cases = [c for c in CASES if (args.select is None or args.select in c.__name__) and
             in_part(c, args.part)]
    return run(cases, args.allow_missing)


# ---- two processes -----------------------------------------------------------------

# The cases whose package side reaches the 2-D conservative sweep (the
# slowest compilation by far), by name; the part "other" is the rest.
SWEEP_PREFIXES = ("sweep_", "clip_", "transpose_conservative_2d",
                  "transpose_conservative_opposite", "invariant_", "regrid_from_weights_batch_axes_2d",
                  "regrid_one_call", "unperturbed_seed")
PARTS = {"sweep", "other"}


def in_part(function, part):
    if part is None:
        return True
    reaches_sweep = function.__name__.startswith(SWEEP_PREFIXES)
    return reaches_sweep == (part == "sweep")


def run_parts(arguments):
    """Both parts at once, each in its own process; their lines as they
    come, the exit status the worse of the two (1 over 77 over 0)."""
    import subprocess
    import threading

    base = [sys.executable, os.path.abspath(__file__)]
    skipped = []
    words = iter(arguments)
    for word in words:
        if word == "--jobs":
            next(words, None)  # and its number
        elif not word.startswith("--jobs="):
            skipped.append(word)
    processes = [subprocess.Popen(base + skipped + ["--part", part], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
                 for part in sorted(PARTS)]
    lock = threading.Lock()

    def relay(process, part):
        for line in process.stdout:
            with lock:
                print(f"[{part}] {line}", end="", flush=True)

    threads = [threading.Thread(target=relay, args=(p, part))
               for p, part in zip(processes, sorted(PARTS))]
    for thread in threads:
        thread.start()
    codes = [p.wait() for p in processes]
    for thread in threads:
        thread.join()
    if any(code not in (0, SKIP) for code in codes):
        return 1
    return SKIP if SKIP in codes else 0


if __name__ == "__main__":
    sys.exit(main())
