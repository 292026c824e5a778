"""
Weights that arrive in blocks, for the streaming assembly of a Regridder
within a memory budget (include/spart/regridder.h, "Streaming assembly"):
from a Python function of yours (a cffi ``extern "Python"`` callback) or
from weights files that :meth:`Weights.save` wrote.

    stream = spart.WeightsStream(blocks, num_blocks=4, max_block_entries=10_000,
                                 shape_orthogonal=(), shape_input=(100,),
                                 shape_output=(50,))
    r = spart.Regridder.from_stream(stream, budget_bytes=64 << 20)

The assembly calls the function twice for each block, once to count each
row's entries and once to place them; it must yield the same block both
times (spart checks that it did).
"""

from __future__ import annotations

import itertools
import os
import sys
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _arrays, _core
from ._core import ffi, lib

_INT64 = (np.dtype(np.int64),)
_FLOAT64 = (np.dtype(np.float64),)

# Running assemblies' block functions, by the key passed as user_data; each
# entry also keeps the block last yielded alive, as spart needs it to stay
# valid until the next call.
_running = {}
_keys = itertools.count(1)


class WeightsStream:
    """
    Weights given as blocks: the shapes and resampled axes that
    ``spart.weights`` would give, and where the entries come from.

    Parameters
    ----------
    blocks : callable
        ``blocks(block, pass_) -> (first_element, offsets, indices_input,
        indices_output, values)`` for ``block`` in ``0 .. num_blocks - 1``
        and ``pass_`` 0 (counting) or 1 (placing), the same block both
        times. Element ``first_element + j`` holds entries ``offsets[j] ..
        offsets[j + 1] - 1`` of the three arrays (``offsets`` int64,
        ascending from 0; the indices int64, flat over each element's
        resampled cells; ``values`` float64). A block may hold part of an
        element (the element then goes on in the next block), and blocks
        must walk the elements in order. The arrays are read in place:
        NumPy arrays, or with ``blocks_on_device`` GPU arrays
        (``__cuda_array_interface__`` or DLPack) of the assembling device.
        An exception raised in it stops the assembly and is raised again by
        :meth:`Regridder.from_stream`.
    num_blocks : int
    max_block_entries : int
        The most entries a block holds (a larger block is refused; a device
        assembly stages blocks of this size).
    shape_orthogonal, shape_input, shape_output : tuple of int
        As the Weights' ``shape``, ``shape_input`` and ``shape_output``.
    axis_input, axis_output : int or sequence of int, optional
        The resampled axes of each shape (None: every axis).
    blocks_on_device : bool
        The blocks' arrays are in the memory of the device that assembles.
        A device assembly works on that device's default stream: arrays a
        block function makes on another stream (a non-blocking CuPy or
        PyTorch stream) must be ready before it returns them.
    """

    def __init__(self, blocks: Callable[[int, int], Tuple[int, Any, Any, Any, Any]],
                 num_blocks: int, max_block_entries: int, shape_orthogonal: Sequence[int],
                 shape_input: Sequence[int], shape_output: Sequence[int],
                 axis_input: Optional[Union[int, Sequence[int]]] = None,
                 axis_output: Optional[Union[int, Sequence[int]]] = None,
                 blocks_on_device: bool = False) -> None:
        function = "WeightsStream"
        if not callable(blocks):
            raise _core.argument_error(function, f"blocks: a {type(blocks).__name__}; give a "
                                       "function blocks(block, pass_)", "type")
        self._struct = ffi.new("spart_weights_stream *")
        lib.spart_weights_stream_init(self._struct)
        s = self._struct
        _core.fill_shape(s.shape_orthogonal, shape_orthogonal, "shape_orthogonal", function)
        _core.fill_shape(s.shape_input, shape_input, "shape_input", function)
        _core.fill_shape(s.shape_output, shape_output, "shape_output", function)
        s.num_axis_input = _core.fill_axes(s.axis_input, axis_input, "axis_input", function)
        s.num_axis_output = _core.fill_axes(s.axis_output, axis_output, "axis_output", function)
        s.num_blocks = int(num_blocks)
        s.max_block_entries = int(max_block_entries)
        s.blocks_on_device = 1 if blocks_on_device else 0
        s.function = lib.spart_python_weights_block
        self._blocks = blocks
        self._files = None
        self._ctx = None

    @classmethod
    def from_files(cls, paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
                   block_entries: int) -> "WeightsStream":
        """
        Weights files as a stream (``spart_weights_files_open``): one or
        more files :meth:`Weights.save` wrote, with the same shapes and
        axes, read in blocks of at most ``block_entries`` entries, file
        after file. Their entries, concatenated, are the weights. The files'
        element tables are read now (and checked); the entries at each pass
        of the assembly, through buffers of 24 bytes times
        ``block_entries`` (not in the assembly's budget).
        """
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        encoded = [ffi.new("char[]", os.fsencode(p)) for p in paths]
        table = ffi.new("const char *[]", max(len(encoded), 1))
        for k, p in enumerate(encoded):
            table[k] = p
        self = cls.__new__(cls)
        self._struct = ffi.new("spart_weights_stream *")
        self._blocks = None
        ctx = _core.context()
        out = ffi.new("spart_weights_files **")
        ctx.check(lib.spart_weights_files_open(ctx.pointer, len(encoded), table,
                                               int(block_entries), out, self._struct),
                  "spart_weights_files_open")
        self._files = ffi.gc(out[0], lib.spart_weights_files_close)
        self._ctx = ctx  # the files report their reading errors in this context
        return self

    @property
    def num_blocks(self) -> int:
        return int(self._struct.num_blocks)

    @property
    def max_block_entries(self) -> int:
        return int(self._struct.max_block_entries)

    def __repr__(self):
        source = "files" if self._files is not None else "a function"
        return (f"<spart.WeightsStream: {self.num_blocks} blocks of at most "
                f"{self.max_block_entries} entries, from {source}>")

    def bytes_needed(self, num_entries: int, device: bool = False,
                     dtype: npt.DTypeLike = np.float64, drop_zeros: bool = False) -> int:
        """The budget (bytes) an assembly of this stream needs when its
        matrix keeps ``num_entries`` entries, on a device or on the host
        (``spart_regridder_stream_bytes``)."""
        from ._regridder import regridder_options

        options = regridder_options("WeightsStream.bytes_needed", dtype=dtype,
                                    drop_zeros=drop_zeros)
        ctx = self._ctx or _core.context()
        out = ffi.new("size_t *")
        ctx.check(lib.spart_regridder_stream_bytes(ctx.pointer, self._struct, options,
                                                   1 if device else 0, int(num_entries), out),
                  "spart_regridder_stream_bytes")
        return int(out[0])

    def block_entries_for(self, num_entries: int, budget_bytes: int, device: bool = False,
                          dtype: npt.DTypeLike = np.float64, drop_zeros: bool = False) -> int:
        """The largest block size (entries) with which an assembly keeping
        ``num_entries`` entries fits ``budget_bytes``
        (``spart_regridder_stream_block_entries``): the size to cut blocks to."""
        from ._regridder import regridder_options

        options = regridder_options("WeightsStream.block_entries_for", dtype=dtype,
                                    drop_zeros=drop_zeros)
        ctx = self._ctx or _core.context()
        out = ffi.new("int64_t *")
        ctx.check(lib.spart_regridder_stream_block_entries(
            ctx.pointer, self._struct, options, 1 if device else 0, int(num_entries),
            int(budget_bytes), out), "spart_regridder_stream_block_entries")
        return int(out[0])


def create_streamed(stream, options, device, budget_bytes):
    """(spart_regridder *, its context, report dict): Regridder.from_stream's work."""
    function = "Regridder.from_stream"
    if not isinstance(stream, WeightsStream):
        raise _core.argument_error(function, f"stream: a {type(stream).__name__}; give a "
                                   "spart.WeightsStream", "type")
    if int(budget_bytes) < 0:
        raise _core.argument_error(function, f"budget_bytes: {budget_bytes}; give a number "
                                   "of bytes >= 0")
    ctx = stream._ctx or _core.context()
    # a device assembly runs on the device's default stream (GPU blocks must
    # be ready there), not on a stream a product left the context on
    _arrays.enter_device(ctx, device, None)
    out = ffi.new("spart_regridder **")
    report = ffi.new("spart_stream_report *")
    key = None
    run = ffi.new("spart_weights_stream *")
    run[0] = stream._struct[0]  # a copy a run: two threads may assemble one stream at once
    if stream._blocks is not None:
        key = next(_keys)
        _running[key] = {"blocks": stream._blocks, "device": run.blocks_on_device,
                         "kept": None, "error": None}
        run.user_data = ffi.cast("void *", key)
    try:
        status = lib.spart_regridder_create_streamed(
            ctx.pointer, run, options, 0 if device is None else 1, int(budget_bytes),
            out, report)
    finally:
        state = _running.pop(key, None) if key is not None else None
    if state is not None and state["error"] is not None:
        raise state["error"]
    ctx.check(status, "spart_regridder_create_streamed")
    fields = ("budget_bytes", "peak_bytes", "result_bytes", "staging_bytes", "num_blocks",
              "num_entries_read", "num_entries")
    return out[0], ctx, {name: int(getattr(report, name)) for name in fields}


@ffi.def_extern()
def spart_python_weights_block(user, block, pass_, result):
    """spart's block function: asks the Python function of the running
    assembly for block `block` of pass `pass_`, checks what it gave and
    points `result` at it (kept alive until the next call)."""
    state = _running[int(ffi.cast("uintptr_t", user))]
    try:
        function = f"WeightsStream block {int(block)}, pass {int(pass_)}"
        given = state["blocks"](int(block), int(pass_))
        if not isinstance(given, tuple) or len(given) != 5:
            raise _core.argument_error(function, "the block function returned "
                                       f"{type(given).__name__}; give (first_element, offsets, "
                                       "indices_input, indices_output, values)", "type")
        first, offsets, ii, io, values = given
        names = ("offsets", "indices_input", "indices_output", "values")
        operands = []
        for name, array, dtypes in zip(names, (offsets, ii, io, values),
                                       (_INT64, _INT64, _INT64, _FLOAT64)):
            # offsets are always host memory; the entries where blocks_on_device says
            operand = _arrays.operand(array, name, function, dtypes)
            on_device = operand.device is not None
            if name != "offsets" and on_device != bool(state["device"]) and operand.size:
                where = "GPU" if on_device else "host"
                raise _core.argument_error(function, f"{name}: in {where} memory, but the "
                                           "stream's blocks_on_device is "
                                           f"{bool(state['device'])}")
            if name == "offsets" and on_device:
                raise _core.argument_error(function, "offsets: in GPU memory; give the "
                                           "offsets in host memory (NumPy)")
            operands.append(operand)
        num_elements = operands[0].size - 1
        if num_elements < 0:
            raise _core.argument_error(function, "offsets: empty; a block of n elements "
                                       "has n + 1 offsets (0 for an empty block: [0])",
                                       "shape")
        count = int(ffi.cast("const int64_t *", operands[0].address)[num_elements])
        for name, operand in zip(names[1:], operands[1:]):
            if operand.size < count:
                raise _core.argument_error(function, f"{name}: {operand.size} values, but "
                                           f"offsets end at {count}", "shape")
        state["kept"] = operands
        result.first_element = int(first)
        result.num_elements = num_elements
        result.offsets = operands[0].pointer("const int64_t *")
        result.indices_input = operands[1].pointer("const int64_t *")
        result.indices_output = operands[2].pointer("const int64_t *")
        result.values = operands[3].pointer("const double *")
        return lib.SPART_OK
    except BaseException:  # an exception cannot cross C: stop, raised again after
        state["error"] = sys.exc_info()[1]
        return lib.SPART_ERROR_INVALID_ARGUMENT
