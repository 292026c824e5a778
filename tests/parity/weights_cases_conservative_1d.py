"""
Parity cases of the 1-D conservative builder: dense weights bit for bit
with the package, and the exact overlaps where the package is known to be
wrong (reversed grids, zero-length cells, weights_input on a stack).
"""

from weights_parity_harness import case
from weights_parity_helpers import describe, compare, entries, exact_weights_1d

# Bound by weights_parity_harness.bind() once the reference packages import.
np = rg = SP = dense = None


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
