#!/usr/bin/env python3
"""The block permute (spart/permute.h) against NumPy's transpose.

Plain blocks (n = m = 1, alpha = 1, beta = 0) are copies: the destination
must hold np.transpose(source, p) bit for bit, for random shapes of 1 to 6
axes, every element type, and source views NumPy makes with any strides
(slices with steps, negative steps, transposed views), described to spart
by their byte offsets and strides within one flat buffer. Scaled and
conjugated blocks (alpha, beta complex) agree with
alpha * conj(a).transpose(p) + beta * b to a few units in the last place.
Many blocks go through one plan.

Usage: test_permute_numpy.py --library libspart.so   (exit 77 without NumPy)
"""
import argparse
import ctypes
import sys

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not installed")
    sys.exit(77)

TYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1,
         np.dtype(np.complex64): 2, np.dtype(np.complex128): 3}


class Block(ctypes.Structure):
    _fields_ = [("sizes", ctypes.POINTER(ctypes.c_int64)),
                ("num_destination", ctypes.c_int64),
                ("num_source", ctypes.c_int64),
                ("recoupling", ctypes.POINTER(ctypes.c_double)),
                ("destination_offsets", ctypes.POINTER(ctypes.c_int64)),
                ("destination_strides", ctypes.POINTER(ctypes.c_int64)),
                ("source_offsets", ctypes.POINTER(ctypes.c_int64)),
                ("source_strides", ctypes.POINTER(ctypes.c_int64))]


def int64s(values):
    array = (ctypes.c_int64 * max(len(values), 1))(*values)
    return array


class Spart:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.spart_context_error.restype = ctypes.c_char_p
        self.context = ctypes.c_void_p()
        assert self.lib.spart_context_create(ctypes.byref(self.context)) == 0

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.spart_context_error(self.context).decode()}")

    def permute(self, pairs, perm, alpha=1, beta=0, conjugate=False):
        """pairs: (a, b) with b = the destination view, both views of two
        flat buffers (the first pair's bases); one block each."""
        source_base, destination_base = pairs[0][0].base_buffer, pairs[0][1].base_buffer
        dtype = source_base.dtype
        item = dtype.itemsize
        keep, blocks = [], []
        for a, b in pairs:
            def offset(view, base):
                return (view.__array_interface__["data"][0]
                        - base.__array_interface__["data"][0]) // item
            sizes = int64s(a.shape)
            s_off = int64s([offset(a.view_of, source_base)])
            d_off = int64s([offset(b.view_of, destination_base)])
            s_str = int64s([s // item for s in a.view_of.strides])
            d_str = int64s([s // item for s in b.view_of.strides])
            keep += [sizes, s_off, d_off, s_str, d_str]
            blocks.append(Block(ctypes.cast(sizes, ctypes.POINTER(ctypes.c_int64)), 1, 1, None,
                                ctypes.cast(d_off, ctypes.POINTER(ctypes.c_int64)),
                                ctypes.cast(d_str, ctypes.POINTER(ctypes.c_int64)),
                                ctypes.cast(s_off, ctypes.POINTER(ctypes.c_int64)),
                                ctypes.cast(s_str, ctypes.POINTER(ctypes.c_int64))))
        array = (Block * len(blocks))(*blocks)
        axes = (ctypes.c_int * max(len(perm), 1))(*perm)
        plan = ctypes.c_void_p()
        self.check(self.lib.spart_permute_plan_create(
            self.context, TYPES[dtype], len(perm), axes, int(conjugate), ctypes.c_int64(len(blocks)),
            array, ctypes.c_int64(source_base.size), ctypes.c_int64(destination_base.size), 0,
            ctypes.byref(plan)), "plan")
        scalars = np.array([alpha, beta], dtype=dtype)
        self.check(self.lib.spart_permute_execute(
            self.context, plan, ctypes.c_void_p(scalars[0:].ctypes.data),
            ctypes.c_void_p(source_base.ctypes.data), ctypes.c_void_p(scalars[1:].ctypes.data),
            ctypes.c_void_p(destination_base.ctypes.data)), "execute")
        self.lib.spart_permute_plan_free(plan)


class View:
    """A NumPy view of a flat buffer, remembered with its buffer."""

    def __init__(self, view, base):
        self.view_of, self.base_buffer, self.shape = view, base, view.shape


def random_view(rng, shape, dtype, base, at):
    """A view of `shape` inside `base` from element `at`: a larger array
    sliced with random steps (some negative) and axes maybe transposed."""
    steps = [int(rng.integers(1, 3)) * (1 if rng.random() < 0.7 else -1) for _ in shape]
    parent_shape = [n * abs(s) + int(rng.integers(0, 2)) for n, s in zip(shape, steps)]
    order = list(rng.permutation(len(shape))) if rng.random() < 0.5 else list(range(len(shape)))
    size = int(np.prod(parent_shape))
    parent = base[at:at + size].reshape([parent_shape[k] for k in order]).transpose(np.argsort(order))
    index = tuple(slice(None, None, s) for s in steps)
    view = parent[index]
    view = view[tuple(slice(0, n) for n in shape)]
    return view, at + size


def values(rng, dtype, n):
    x = rng.standard_normal(n)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(n)
    return x.astype(dtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    spart = Spart(args.library)
    rng = np.random.default_rng(25)
    cases = 0
    for dtype in TYPES:
        for trial in range(40):
            num_axes = int(rng.integers(1, 7))
            perm = [int(p) for p in rng.permutation(num_axes)]
            count = int(rng.integers(1, 4))
            shapes = [tuple(int(rng.integers(1, 6)) for _ in range(num_axes)) for _ in range(count)]
            room = sum(int(np.prod([3 * n + 1 for n in s])) for s in shapes)
            source_base = values(rng, dtype, room)
            destination_base = values(rng, dtype, room)
            pairs, s_at, d_at = [], 0, 0
            for shape in shapes:
                a, s_at = random_view(rng, shape, dtype, source_base, s_at)
                permuted = tuple(shape[p] for p in perm)
                b, d_at = random_view(rng, permuted, dtype, destination_base, d_at)
                pairs.append((View(a, source_base), View(b, destination_base)))
            before = destination_base.copy()
            plain = trial % 2 == 0
            if plain:
                spart.permute(pairs, perm)
                for a, b in pairs:
                    expected = np.transpose(a.view_of, perm)
                    if np.ascontiguousarray(b.view_of).tobytes() != expected.tobytes():
                        print(f"FAILED: {dtype}, p = {perm}, shape {a.shape}: not np.transpose")
                        return 1
            else:
                alpha = (0.75 - 0.5j) if dtype.kind == "c" else 1.5
                beta = (-0.25 + 0.125j) if dtype.kind == "c" else -0.5
                conjugate = dtype.kind == "c"
                olds = [np.array(b.view_of) for _, b in pairs]
                spart.permute(pairs, perm, alpha, beta, conjugate)
                tolerance = 4 * np.finfo(dtype).eps
                for (a, b), old in zip(pairs, olds):
                    source = np.conj(a.view_of) if conjugate else a.view_of
                    expected = alpha * np.transpose(source, perm).astype(np.complex128) \
                        + beta * old.astype(np.complex128)
                    error = np.max(np.abs(b.view_of - expected), initial=0)
                    scale = 1 + np.max(np.abs(expected), initial=0)
                    if error > tolerance * scale * 4:
                        print(f"FAILED: {dtype}, p = {perm}: error {error} against NumPy")
                        return 1
            # Elements no view covers are untouched.
            touched = np.zeros(destination_base.size, bool)
            for _, b in pairs:
                marks = np.zeros(destination_base.size, bool)
                flat = np.arange(destination_base.size)
                view_index = np.lib.stride_tricks.as_strided(
                    flat[(b.view_of.__array_interface__["data"][0]
                          - destination_base.__array_interface__["data"][0]) // dtype.itemsize:],
                    shape=b.view_of.shape,
                    strides=[s // dtype.itemsize * flat.itemsize for s in b.view_of.strides])
                marks[view_index.ravel()] = True
                touched |= marks
            if not np.array_equal(destination_base[~touched], before[~touched]):
                print(f"FAILED: {dtype}, p = {perm}: an element outside the blocks changed")
                return 1
            cases += 1
    print(f"test_permute_numpy: {cases} cases of 1-3 blocks, 1-6 axes, four types: "
          "plain blocks are np.transpose bit for bit, scaled ones agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
