"""
Parity cases of the transposes of weights (exact and conservative, 1-D and
2-D) and of applying weights (regrid_from_weights, regrid): bit for bit in
1-D, within 1e-12 in 2-D.
"""

from weights_parity_harness import case
from weights_parity_helpers import (
    unperturbed_seed, lattice, rotated, readme_warp, describe,
    assert_bitwise, assert_close, compare, exact_weights_1d, sweep_pair,
)

# Bound by weights_parity_harness.bind() once the reference packages import.
np = rg = SP = dense = None


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
