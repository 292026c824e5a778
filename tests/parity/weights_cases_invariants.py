"""
Invariants of spart's weights on random grids (conservation, non-negative
weights, transposes that round-trip, the same bytes for 1 and 2 threads),
and a context of one thread keeping every builder on one thread.
"""

import os
import sys

from weights_parity_harness import case

from weights_parity_helpers import lattice, rotated, assert_close

# Bound by weights_parity_harness.bind() once the reference packages import.
np = SP = SP1 = SP2 = dense = None

HERE = os.path.dirname(os.path.abspath(__file__))

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
    # so counting after the call would miss them. `sampled` is set once the
    # first sample (which counts the watcher itself) is in: the baseline
    # must wait for it, as on a loaded machine the thread may not run for
    # longer than any fixed sleep (a baseline of 0 then read as the main
    # thread and the watcher appearing: "+2")
    def __init__(self):
        super().__init__(daemon=True)
        self.most, self.running = 0, True
        self.sampled = threading.Event()
    def run(self):
        while self.running:
            self.most = max(self.most, count())
            self.sampled.set()
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
    watcher.sampled.wait()
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
