"""
Parity cases of the 2-D conservative sweep (curvilinear outputs), within
1e-12 of the package's sweep, and the exact areas where the package is
known to be wrong (mixed orientations, identical grids). The self-check of
the trick that keeps the package's sweep to one numba signature comes first.
"""

import os
import sys

from weights_parity_harness import case
from weights_parity_helpers import (
    unperturbed_seed, package_weights, jittered, lattice, rotated, warped,
    describe, assert_close, compare, entries, refusal, exact_weights_2d,
    sweep_pair,
)

# Bound by weights_parity_harness.bind() once the reference packages import.
np = rg = SP = dense = None


# ---- the trick that keeps the package's sweep to one signature, checked first ----------


@case
def unperturbed_seed_is_exact():
    from regridding import _util

    grid_in, grid_out = sweep_pair()
    normalized = _util._normalize_input_output_coordinates(grid_in, grid_out, perturb=True,
                                                           seed=unperturbed_seed())
    assert all(np.array_equal(a, b) for a, b in zip(normalized[1], grid_out)), "jittered"
    return "perturb=True with the identity generator leaves the grid exactly as given"


# ---- conservative 2-D: sweep ------------------------------------------------------------


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
