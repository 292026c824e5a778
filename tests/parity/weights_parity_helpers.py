"""
Helpers of the weights parity cases (weights_cases_*.py): grids, the
comparisons with the package, expected errors, and exact answers (overlap
lengths, and areas by polygon clipping) for where the package is wrong.
"""

# Bound by weights_parity_harness.bind() once the reference packages import.
np = rg = dense = SpartError = None


def unperturbed_seed():
    """
    A seed for regridding's `perturb=True` that leaves the coordinates as
    they are. The package draws its jitter with
    numpy.random.default_rng(seed).normal(coord, scale), and default_rng
    returns a Generator it is given unchanged. Asking for perturb=True with
    this "generator" is perturb=False in effect, but the output grid reaches
    the sweep as the writable array the default (perturbed) call passes, so
    every sweep call shares one compiled numba signature. Checked by the case
    unperturbed_seed_is_exact (weights_cases_sweep.py).
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


# The grids several sweep cases share: a rotated lattice onto a warped one, jittered.
def sweep_pair():
    grid_in = rotated(lattice(np.linspace(-1, 1, 14), np.linspace(-1, 1, 13)), 0.2)
    grid_out = jittered(warped(lattice(np.linspace(-0.9, 0.9, 11), np.linspace(-0.9, 0.9, 9))))
    return grid_in, grid_out


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
