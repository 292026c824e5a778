"""
Parity cases of the multilinear builder (1-D, 2-D and 3-D, rectilinear and
curvilinear grids, the three bounds, weights_input, orthogonal axes,
non-finite points): dense weights bit for bit in 1-D, within 1e-12 in 2-D
and 3-D.
"""

from weights_parity_harness import case
from weights_parity_helpers import (
    lattice, warped, compare, expect_spart_error, expect_package_error,
)

# Bound by weights_parity_harness.bind() once the reference packages import.
np = rg = SP = None


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
