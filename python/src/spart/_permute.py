"""
The tiled block permute with recoupling (include/spart/permute.h): many
strided N-d blocks of a flat source permuted, recombined by small dense
matrices and written into a flat destination in one call, planned once
and executed many times, on the host or a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from . import _arrays, _core
from ._core import ffi, lib

_TYPES = {np.dtype(np.float32): lib.SPART_PERMUTE_FLOAT32,
          np.dtype(np.float64): lib.SPART_PERMUTE_FLOAT64,
          np.dtype(np.complex64): lib.SPART_PERMUTE_COMPLEX64,
          np.dtype(np.complex128): lib.SPART_PERMUTE_COMPLEX128}


@dataclass
class PermuteBlock:
    """
    One fusion block: m source subblocks of shape ``sizes`` and n
    destination subblocks of the permuted shape; every offset and stride
    counts elements of the flat arrays (strides in each side's own axis
    order). ``recoupling`` is the n x m matrix U (None: n = m = 1, U = 1).
    """

    sizes: Sequence[int]
    source_offsets: Sequence[int]
    source_strides: Sequence[Sequence[int]]
    destination_offsets: Sequence[int]
    destination_strides: Sequence[Sequence[int]]
    recoupling: Optional[Any] = None


def _int64(values, name, function, count):
    array = np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))
    if array.size != count:
        raise _core.argument_error(function, f"{name}: {array.size} values, but {count} are "
                                   "needed", "shape")
    return array


class PermutePlan:
    """
    A plan for ``dst_i = beta dst_i + alpha sum_j U[i, j] transpose(op(src_j), permutation)``
    over every block, made once (checked, cut into tiles by a cost model,
    copied to the GPU for a device plan) and run with :meth:`__call__`.

    Parameters
    ----------
    blocks : sequence of PermuteBlock
    permutation : sequence of int
        NumPy's ``axes`` of ``transpose``: axis k of a destination block is
        axis ``permutation[k]`` of its source.
    dtype : float32, float64, complex64 or complex128
    source_length, destination_length : int
        Elements of the flat arrays the plan runs on.
    conjugate : bool
        Conjugate complex sources first.
    device : int, optional
        A CUDA device: the plan runs on arrays in its memory (CuPy,
        PyTorch, DLPack). None: NumPy arrays.

    Results are the same bits on host and GPU (spart/permute.h).
    """

    def __init__(self, blocks: Sequence[PermuteBlock], permutation: Sequence[int], dtype: Any,
                 source_length: int, destination_length: int, conjugate: bool = False,
                 device: Optional[int] = None) -> None:
        function = "PermutePlan"
        self.dtype = np.dtype(dtype)
        if self.dtype not in _TYPES:
            raise _core.argument_error(function, f"dtype: {self.dtype}; spart permutes float32, "
                                       "float64, complex64 or complex128", "type")
        permutation = [int(p) for p in permutation]
        axes = len(permutation)
        c_blocks = ffi.new("spart_permute_block[]", max(len(blocks), 1))
        kept = []
        for k, block in enumerate(blocks):
            name = f"blocks[{k}]"
            n, m = len(block.destination_offsets), len(block.source_offsets)
            arrays = [_int64(block.sizes, f"{name}.sizes", function, axes),
                      _int64(block.destination_offsets, f"{name}.destination_offsets", function, n),
                      _int64(block.destination_strides, f"{name}.destination_strides", function,
                             n * axes),
                      _int64(block.source_offsets, f"{name}.source_offsets", function, m),
                      _int64(block.source_strides, f"{name}.source_strides", function, m * axes)]
            # the cdata of from_buffer must outlive the call: kept with the arrays
            buffers = [ffi.from_buffer("int64_t[]", a) for a in arrays]
            c = c_blocks[k]
            (c.sizes, c.destination_offsets, c.destination_strides, c.source_offsets,
             c.source_strides) = buffers
            c.num_destination, c.num_source = n, m
            if block.recoupling is not None:
                u = np.ascontiguousarray(np.asarray(block.recoupling, dtype=np.float64))
                if u.shape != (n, m):
                    raise _core.argument_error(function, f"{name}.recoupling: shape {u.shape}; "
                                               f"the block has n x m = {n} x {m}", "shape")
                buffers.append(ffi.from_buffer("double[]", u))
                c.recoupling = buffers[-1]
            kept.append((arrays, buffers))
        p = ffi.new("int[]", permutation) if axes else ffi.NULL
        ctx = _core.context()
        if device is not None:
            ctx.check(lib.spart_context_set_cuda_device(ctx.pointer, int(device)),
                      "spart_context_set_cuda_device")
        out = ffi.new("spart_permute_plan **")
        ctx.check(lib.spart_permute_plan_create(
            ctx.pointer, _TYPES[self.dtype], axes, p,
            lib.SPART_PERMUTE_CONJUGATE if conjugate else lib.SPART_PERMUTE_IDENTITY,
            len(blocks), c_blocks, int(source_length), int(destination_length),
            0 if device is None else 1, out), "spart_permute_plan_create")
        self._pointer = ffi.gc(out[0], lib.spart_permute_plan_free)
        self.device = device
        self.source_length = int(source_length)
        self.destination_length = int(destination_length)

    @classmethod
    def transpose(cls, shape: Sequence[int], axes: Sequence[int], dtype: Any,
                  device: Optional[int] = None) -> "PermutePlan":
        """The plan of ``numpy.transpose(a, axes)`` of one dense C-order
        array of `shape` (one block, no recoupling)."""
        shape = [int(s) for s in shape]
        strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        permuted = [shape[a] for a in axes]
        out_strides = [int(np.prod(permuted[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        size = int(np.prod(shape, dtype=np.int64))
        block = PermuteBlock(shape, [0], [strides], [0], [out_strides])
        return cls([block], axes, dtype, size, size, device=device)

    def counts(self) -> dict:
        """What the plan chose: work items, tiles, bytes of a device tile."""
        values = [ffi.new("int64_t *") for _ in range(3)]
        _core.context().check(lib.spart_permute_plan_counts(self._pointer, *values),
                              "spart_permute_plan_counts")
        return dict(zip(("items", "tiles", "tile_bytes"), (int(v[0]) for v in values)))

    def __call__(self, source: Any, destination: Optional[Any] = None, alpha: complex = 1.0,
                 beta: complex = 0.0) -> Any:
        """Run the plan: the flat `source` (or any C-contiguous array of
        that many elements) into `destination` (None: a new zeroed array
        where the source is; elements no block covers stay as they are)."""
        function = "PermutePlan.__call__"
        src = _arrays.operand(source, "source", function, (self.dtype,))
        if src.size != self.source_length:
            raise _core.argument_error(function, f"source: {src.size} elements; the plan reads "
                                       f"{self.source_length}", "shape")
        if destination is None:
            destination = _arrays.empty_like(source, src, (self.destination_length,), self.dtype)
            destination[...] = 0
        dst = _arrays.operand(destination, "destination", function, (self.dtype,), writable=True)
        if dst.size != self.destination_length:
            raise _core.argument_error(function, f"destination: {dst.size} elements; the plan "
                                       f"writes {self.destination_length}", "shape")
        device = _arrays.same_place([("source", src), ("destination", dst)], function)
        if device != self.device:
            raise _core.argument_error(function, "source: " + ("host memory" if device is None
                                                               else f"CUDA device {device}")
                                       + ", but the plan was made for " +
                                       ("host memory" if self.device is None else
                                        f"CUDA device {self.device}"), "type")
        scalars = np.array([alpha, beta], dtype=self.dtype)
        ctx = _core.context()
        _arrays.enter_device(ctx, device, src.stream)
        ctx.check(lib.spart_permute_execute(
            ctx.pointer, self._pointer, ffi.from_buffer(scalars[0:1]),
            src.pointer("const void *"), ffi.from_buffer(scalars[1:2]),
            dst.pointer("void *")), "spart_permute_execute")
        return destination
