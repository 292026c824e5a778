"""
The Regridder: one CSR matrix assembled from weights, applied as y = A x
(include/spart/regridder.h and, for GPUs, include/spart/device.h), with the
surface of regridding's Regridder: from_weights, __call__, .T, to_scipy().
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _arrays, _core
from ._core import _local, ffi, lib
from ._weights import as_weights

_FLOAT64 = np.dtype(np.float64)
_DOUBLES = ffi.typeof("double[]")
_from_buffer = ffi.from_buffer
_VALUE_TYPES = {np.dtype(np.float64): lib.SPART_FLOAT64, np.dtype(np.float32): lib.SPART_FLOAT32}
_MAX_PLANS = 32  # products remember this many shapes of x


class Regridder:
    """
    A sparse operator from input values to output values, one CSR matrix
    over all orthogonal elements, applied deterministically (the same bits
    for any thread count and batch width).

    Make one with :meth:`Regridder.from_weights` (or :meth:`Regridder.load`,
    or from an :class:`IdealInstrument`). ``r(x)`` applies it; ``r.T`` is
    its exact transpose; ``r.to_scipy()`` the matrix as a
    ``scipy.sparse.csr_array`` sharing spart's arrays.

    Attributes
    ----------
    shape_input, shape_output : tuple of int
        The shapes of the values it takes and gives (without leading axes).
    shape : tuple of int
        The matrix's (rows, columns).
    nnz : int
        Its stored entries.
    dtype : numpy.dtype
        How its values are stored (float64 or float32; products sum in float64).
    device : int or None
        The CUDA device holding it, or None for host memory.
    """

    def __init__(self, pointer, ctx, owner=None):
        # owner None: this object owns `pointer` (freed with it, before ctx);
        # else `owner` (a Regridder or an IdealInstrument) does, and is kept alive.
        self._pointer = _core.owned(pointer, lib.spart_regridder_free, ctx, owner)
        self._owner = owner
        self._replaced = False
        self.shape_input = _core.shape_tuple(lib.spart_regridder_shape_input(pointer))
        self.shape_output = _core.shape_tuple(lib.spart_regridder_shape_output(pointer))
        self.shape = (int(lib.spart_regridder_num_rows(pointer)),
                      int(lib.spart_regridder_num_columns(pointer)))
        self.nnz = int(lib.spart_regridder_num_entries(pointer))
        value_type = lib.spart_regridder_value_type(pointer)
        self.dtype = np.dtype(np.float32 if value_type == lib.SPART_FLOAT32 else np.float64)
        self.group_size = int(lib.spart_regridder_group_size(pointer))
        cuda = int(lib.spart_regridder_cuda_device(pointer))
        self.device = None if cuda < 0 else cuda
        self._ndim_input = len(self.shape_input)
        self._plans = {}
        self._transpose = None
        self._conservative = None
        self.stream_report = None

    # ---- making one ----------------------------------------------------------------

    @classmethod
    def from_weights(cls, weights: Any, axis_input: Optional[Union[int, Sequence[int]]] = None,
                     axis_output: Optional[Union[int, Sequence[int]]] = None,
                     shape_input: Optional[Sequence[int]] = None,
                     shape_output: Optional[Sequence[int]] = None,
                     dtype: npt.DTypeLike = np.float64, drop_zeros: bool = False,
                     device: Optional[int] = None) -> "Regridder":
        """
        Assemble a Regridder from weights.

        Each orthogonal axis takes a role from its lengths in the weights,
        ``shape_input`` and ``shape_output``: its own input per element (N, N,
        N), one shared input (N, 1, N), outputs summed (N, N, 1), the sum of
        the elements (N, 1, 1), or a batch (1, M, M).

        Parameters
        ----------
        weights : tuple or Weights
            ``spart.weights(...)``'s result, a Weights, or regridding's
            ``(weights, shape_input, shape_output)``.
        axis_input, axis_output : int or sequence of int, optional
            The resampled axes of ``shape_input`` and ``shape_output``
            (None: the axes the weights were built with, from the end).
        shape_input, shape_output : tuple of int, optional
            The shapes of the values (None: the weights' shapes with their
            orthogonal axes broadcast, as regrid_from_weights lays values out).
        dtype : {numpy.float64, numpy.float32}
            How the matrix values are stored.
        drop_zeros : bool
            Leave out entries whose value is exactly 0.
        device : int, optional
            Assemble on this CUDA device (spart built with CUDA) instead of
            the host. None: where the weights are (the host, or the device
            of weights built with ``spart.weights(..., device=d)``, read
            there in place).
        """
        function = "Regridder.from_weights"
        w = as_weights(weights, function, axis_input, axis_output)
        options = regridder_options(function, axis_input, axis_output, shape_input,
                                    shape_output, dtype, drop_zeros)
        if device is None:
            device = w.device  # weights built on a GPU are assembled where they lie
        ctx = _core.context()
        out = ffi.new("spart_regridder **")
        if device is None:
            ctx.check(lib.spart_regridder_create(ctx.pointer, w._pointer, options, out),
                      "spart_regridder_create")
        else:
            _arrays.enter_device(ctx, device, None)  # the default stream
            ctx.check(lib.spart_regridder_create_device(ctx.pointer, w._pointer, options, out),
                      "spart_regridder_create_device")
        return cls(out[0], ctx)

    @classmethod
    def from_stream(cls, stream: Any, budget_bytes: int, device: Optional[int] = None,
                    axis_input: Optional[Union[int, Sequence[int]]] = None,
                    axis_output: Optional[Union[int, Sequence[int]]] = None,
                    shape_input: Optional[Sequence[int]] = None,
                    shape_output: Optional[Sequence[int]] = None,
                    dtype: npt.DTypeLike = np.float64, drop_zeros: bool = False
                    ) -> "Regridder":
        """
        Assemble a Regridder from weights that arrive in blocks (a
        :class:`WeightsStream`: a Python function of yours, or weights
        files), holding at most ``budget_bytes`` at once: the Regridder
        :meth:`from_weights` makes from the concatenated blocks, bit for
        bit, for any block sizes (``spart_regridder_create_streamed``).

        Parameters
        ----------
        stream : WeightsStream
        budget_bytes : int
            The most bytes the assembly allocates where it assembles (the
            result included; ``include/spart/regridder.h`` has the memory
            model). ``stream.bytes_needed(num_entries)`` gives the figure.
        device : int, optional
            Assemble on this CUDA device (None: on the host).
        axis_input, axis_output, shape_input, shape_output, dtype, drop_zeros
            As :meth:`from_weights`.

        Returns
        -------
        Regridder
            With ``stream_report``, a dict of what the assembly held
            (``peak_bytes``, ``result_bytes``, ``staging_bytes``,
            ``num_blocks``, ``num_entries_read``, ``num_entries``).
        """
        from ._stream import create_streamed

        options = regridder_options("Regridder.from_stream", axis_input, axis_output,
                                    shape_input, shape_output, dtype, drop_zeros)
        pointer, ctx, report = create_streamed(stream, options, device, budget_bytes)
        regridder = cls(pointer, ctx)
        regridder.stream_report = report
        return regridder

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Regridder":
        """Load a Regridder saved by :meth:`save` (or the C API, or ``spart build``)."""
        ctx = _core.context()
        out = ffi.new("spart_regridder **")
        ctx.check(lib.spart_regridder_load(ctx.pointer, os.fsencode(path), out),
                  "spart_regridder_load")
        return cls(out[0], ctx)

    def save(self, path: Union[str, os.PathLike], overwrite: bool = False) -> None:
        """Save to a FITS file (docs/formats.md); refuses to replace a file
        unless `overwrite`."""
        ctx = _core.context()
        ctx.check(lib.spart_regridder_save(ctx.pointer, self._live(), os.fsencode(path),
                                           1 if overwrite else 0), "spart_regridder_save")

    def __repr__(self):
        where = "host" if self.device is None else f"cuda:{self.device}"
        return (f"<spart.Regridder {self.shape_input} -> {self.shape_output}: "
                f"{self.shape[0]} x {self.shape[1]}, {self.nnz} {self.dtype} entries, {where}>")

    def _live(self):
        if self._replaced:
            raise _core.SpartError(lib.SPART_ERROR_INVALID_ARGUMENT,
                                   "this conservative transpose was replaced by a later "
                                   "transpose_conservative call on its regridder",
                                   "Regridder")
        return self._pointer

    # ---- products --------------------------------------------------------------------

    def _plan(self, shape_x, function):
        """(shape of y, size of y, spart_shape of x) for x of shape_x, kept."""
        n = self._ndim_input
        if len(shape_x) < n or tuple(shape_x[len(shape_x) - n:]) != self.shape_input:
            raise _core.argument_error(
                function, f"x: shape {tuple(shape_x)} does not end with the regridder's "
                f"shape_input {self.shape_input}", "shape")
        shape = ffi.new("spart_shape *")
        _core.fill_shape(shape, shape_x, "x", function)
        shape_y = ffi.new("spart_shape *")
        ctx = _core.context()
        ctx.check(lib.spart_regridder_apply_shape(ctx.pointer, self._live(), shape, shape_y),
                  "spart_regridder_apply_shape")
        shape_y = _core.shape_tuple(shape_y)
        plan = (shape_y, int(np.prod(shape_y, dtype=np.int64)), shape)
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
        self._plans[tuple(shape_x)] = plan
        return plan

    def __call__(self, x: Any, out: Optional[Any] = None) -> Any:
        """
        y = A x.

        Parameters
        ----------
        x : numpy.ndarray
            float64, C-contiguous, of shape ``leading axes + shape_input``
            (each vector of the leading axes is a column of the product).
            Read in place, never copied. On a GPU Regridder: an array in that
            device's memory with ``__cuda_array_interface__`` (CuPy, PyTorch).
        out : numpy.ndarray, optional
            Where to write y (float64, C-contiguous, of the result's shape),
            overwritten and returned; must not overlap x.

        Returns
        -------
        numpy.ndarray
            y, of shape ``leading axes + shape_output``.
        """
        if self.device is not None:
            return self._call_device(x, out)
        # The common case (a float64 C-contiguous x of a shape seen before)
        # takes the fast path; anything else goes through the checks.
        try:
            if x.dtype is not _FLOAT64:
                raise TypeError
            x_data = _from_buffer(_DOUBLES, x)
            shape_y, size_y, shape_x = self._plans[x.shape]
        except (AttributeError, TypeError, ValueError, BufferError, KeyError):
            x, x_data, (shape_y, size_y, shape_x) = self._checked_input(x)
        if out is None:
            y = np.empty(shape_y)
            y_data = _from_buffer(_DOUBLES, y, True)
        else:
            y = out
            try:
                if y.dtype is not _FLOAT64 or y.shape != shape_y:
                    raise TypeError
                y_data = _from_buffer(_DOUBLES, y, True)
            except (AttributeError, TypeError, ValueError, BufferError):
                y = _core.values_out(out, "out", "Regridder.__call__", shape_y)
                y_data = _from_buffer(_DOUBLES, y, True)
        try:
            ctx = _local.context
        except AttributeError:
            ctx = _core.context()
        status = lib.spart_python_regridder_apply(ctx.pointer, self._pointer, x_data, shape_x,
                                                  y_data, size_y)
        if status:
            self._live()
            ctx.check(status, "spart_regridder_apply")
        return y

    def _checked_input(self, x):
        """(x, its data, its plan) after the checks, with their messages."""
        function = "Regridder.__call__"
        x = _core.values_in(x, "x", function)
        plan = self._plans.get(x.shape) or self._plan(x.shape, function)
        return x, _core.pointer(x), plan

    apply = __call__

    def bind(self, x: Any, out: Any) -> "BoundProduct":
        """
        The product y = A x with x and y fixed, for loops that apply the
        operator to the same arrays again and again (an iteration whose
        arrays are updated in place): checked once here, each call of the
        result then only calls the C function (no checks, no lookups), the
        least a call from Python can cost.

        Parameters
        ----------
        x, out : numpy.ndarray (or GPU arrays for a GPU Regridder)
            As for ``__call__``; ``out`` is required. Both are kept alive by
            the result, read and written where they lie at each call.

        Returns
        -------
        BoundProduct
            ``p()`` makes the product into ``out`` and returns ``out``.
        """
        function = "Regridder.bind"
        if out is None:
            raise _core.argument_error(function, "out: None; a bound product writes into an "
                                       "array of yours")
        if self.device is not None:
            x_address, shape_x_tuple, stream = _device_array(x, "x", function, writable=False)
            shape_y, size_y, shape_x = (self._plans.get(shape_x_tuple)
                                        or self._plan(shape_x_tuple, function))
            y_address, shape_out, _ = _device_array(out, "out", function, writable=True)
            if shape_out != shape_y:
                raise _core.argument_error(function, f"out: shape {shape_out}, but the result "
                                           f"has shape {shape_y}", "shape")
            # the calls go to the stream x is ready on now, as __call__'s do
            ctx = _core.context()
            ctx.check(lib.spart_context_set_cuda_stream(
                ctx.pointer, ffi.NULL if stream in (None, 1) else ffi.cast("void *", stream)),
                "spart_context_set_cuda_stream")
            x_data = ffi.cast("const double *", x_address)
            y_data = ffi.cast("double *", y_address)
        else:
            x, x_data, (shape_y, size_y, shape_x) = self._checked_input(x)
            y = _core.values_out(out, "out", function, shape_y)
            y_data = _from_buffer(_DOUBLES, y, True)
        return BoundProduct(self, x, out, x_data, shape_x, y_data, size_y)

    def _call_device(self, x, out):
        """The product on a GPU, x and y in the regridder's device memory."""
        function = "Regridder.__call__"
        x_address, shape_x, stream = _device_array(x, "x", function, writable=False)
        shape_y, size_y, shape = self._plans.get(shape_x) or self._plan(shape_x, function)
        if out is None:
            out = _device_empty(x, shape_y, function)
        y_address, shape_out, _ = _device_array(out, "out", function, writable=True)
        if shape_out != shape_y:
            raise _core.argument_error(function, f"out: shape {shape_out}, but the result has "
                                       f"shape {shape_y}", "shape")
        ctx = _core.context()
        # The product is enqueued on the stream x is ready on, as its
        # __cuda_array_interface__ says (CuPy's and PyTorch's current
        # stream); None or 1 (the legacy default stream): spart's default.
        ctx.check(lib.spart_context_set_cuda_stream(
            ctx.pointer, ffi.NULL if stream in (None, 1) else ffi.cast("void *", stream)),
            "spart_context_set_cuda_stream")
        ctx.check(lib.spart_python_regridder_apply(ctx.pointer, self._live(),
                                                   ffi.cast("const double *", x_address), shape,
                                                   ffi.cast("double *", y_address), size_y),
                  "spart_regridder_apply")
        return out

    # ---- transposes ------------------------------------------------------------------

    @property
    def T(self) -> "Regridder":
        """The exact transpose (made on first use and kept; ``r.T.T is r``)."""
        if self._transpose is None:
            ctx = _core.context()
            out = ffi.new("spart_regridder **")
            ctx.check(lib.spart_regridder_transpose(ctx.pointer, self._live(), out),
                      "spart_regridder_transpose")
            transposed = Regridder(out[0], ctx, owner=self)
            transposed._transpose = self
            self._transpose = transposed
        return self._transpose

    def transpose_conservative(self, coordinates_input: Any, coordinates_output: Any,
                               axis_input: Optional[Union[int, Sequence[int]]] = None,
                               axis_output: Optional[Union[int, Sequence[int]]] = None,
                               weights_input: Optional[npt.ArrayLike] = None) -> "Regridder":
        """
        The conservative transpose, as regridding's: the exact transpose's
        pattern with each entry ``v * F_in[input] / V_out[output]``.

        Parameters
        ----------
        coordinates_input, coordinates_output, axis_input, axis_output, weights_input
            Those the weights were built with.

        Returns
        -------
        Regridder
            Owned by this regridder; a later call replaces it (the earlier
            object then refuses to work).
        """
        from ._weights import _options

        function = "Regridder.transpose_conservative"
        n_in, block_in, kept_in = _core.new_arrays(coordinates_input, "coordinates_input",
                                                   function)
        n_out, block_out, kept_out = _core.new_arrays(coordinates_output, "coordinates_output",
                                                      function)
        kept = []
        options = _options(function, kept, axis_input, axis_output, weights_input,
                           method="conservative")
        ctx = _core.context()
        out = ffi.new("spart_regridder **")
        ctx.check(lib.spart_regridder_transpose_conservative(
            ctx.pointer, self._live(), n_in, block_in, block_out, options, out),
            "spart_regridder_transpose_conservative")
        if self._conservative is not None:
            self._conservative._pointer = ffi.NULL  # spart freed it
            self._conservative._replaced = True
        self._conservative = Regridder(out[0], ctx, owner=self)
        return self._conservative

    # ---- the matrix -------------------------------------------------------------------

    def csr(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        The CSR arrays, read-only views of spart's memory (no copy).

        Returns
        -------
        indptr : numpy.ndarray of int64
            ``rows + 1`` row pointers.
        indices : numpy.ndarray of int32 or int64
            Column indices (int64 from 2**31 columns on).
        data : numpy.ndarray of float64 or float32
        """
        if self.device is not None:
            raise _core.argument_error("Regridder.csr", "the matrix is in GPU memory; copy "
                                       "the regridder with .to_host() first")
        row_ptr = ffi.new("const int64_t **")
        c32 = ffi.new("const int32_t **")
        c64 = ffi.new("const int64_t **")
        values = ffi.new("const void **")
        _core.context().check(lib.spart_regridder_csr(self._live(), row_ptr, c32, c64, values),
                              "spart_regridder_csr")
        n = self.nnz
        indices = (_core.view(self, c32[0], n, "<i4") if c32[0] != ffi.NULL
                   else _core.view(self, c64[0], n, "<i8"))
        return (_core.view(self, row_ptr[0], self.shape[0] + 1, "<i8"), indices,
                _core.view(self, values[0], n, self.dtype.str))

    def to_scipy(self, copy: bool = False) -> Any:
        """
        The matrix as a ``scipy.sparse.csr_array``.

        Parameters
        ----------
        copy : bool
            False (default): data and indices are spart's own arrays
            (read-only views, kept alive by the result); only the row
            pointers are converted (to int32 when the column indices are
            int32). True: scipy's copies.

        Notes
        -----
        Entries with the same (row, column) are kept, not summed, and
        columns are in the regridder's order within a row (its summation
        order), so scipy does not see the matrix as canonical.
        """
        import scipy.sparse

        indptr, indices, data = self.csr()
        if indices.dtype == np.int32:
            # scipy wants one index type; int32 row pointers (rows + 1
            # values) let it keep the column indices as they are
            indptr = indptr.astype(np.int32)
        return scipy.sparse.csr_array((data, indices, indptr), shape=self.shape, copy=copy)

    # ---- devices -----------------------------------------------------------------------

    def to_device(self, device: int = 0) -> "Regridder":
        """A copy of this regridder on CUDA device `device` (spart built with CUDA)."""
        ctx = _core.context()
        _arrays.enter_device(ctx, device, None)  # the default stream
        out = ffi.new("spart_regridder **")
        ctx.check(lib.spart_regridder_to_device(ctx.pointer, self._live(), out),
                  "spart_regridder_to_device")
        return Regridder(out[0], ctx)

    def to_host(self) -> "Regridder":
        """A copy of this regridder in host memory."""
        ctx = _core.context()
        if self.device is not None:
            _arrays.enter_device(ctx, self.device, None)  # the default stream
        out = ffi.new("spart_regridder **")
        ctx.check(lib.spart_regridder_to_host(ctx.pointer, self._live(), out),
                  "spart_regridder_to_host")
        return Regridder(out[0], ctx)


def regridder_options(function, axis_input=None, axis_output=None, shape_input=None,
                      shape_output=None, dtype=np.float64, drop_zeros=False):
    """A spart_regridder_options struct of from_weights's arguments."""
    options = ffi.new("spart_regridder_options *")
    lib.spart_regridder_options_init(options)
    if shape_input is not None:
        options.has_shape_input = 1
        _core.fill_shape(options.shape_input, shape_input, "shape_input", function)
    if shape_output is not None:
        options.has_shape_output = 1
        _core.fill_shape(options.shape_output, shape_output, "shape_output", function)
    options.num_axis_input = _core.fill_axes(options.axis_input, axis_input, "axis_input",
                                             function)
    options.num_axis_output = _core.fill_axes(options.axis_output, axis_output, "axis_output",
                                              function)
    try:
        options.value_type = _VALUE_TYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise _core.argument_error(function, f"dtype: {dtype!r}; spart stores float64 or "
                                   "float32 values", "type") from None
    options.drop_zeros = 1 if drop_zeros else 0
    return options


def _device_array(array, name, function, writable):
    """(address, shape, stream) of a float64 C-contiguous array in GPU
    memory, read through __cuda_array_interface__ (CuPy, PyTorch, Numba)
    by the reader the kernels use (_arrays.from_cuda_interface)."""
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is None:
        raise _core.argument_error(function, f"{name}: a {type(array).__name__}; this "
                                   "Regridder is on a GPU and takes arrays in GPU memory "
                                   "(CuPy, PyTorch)", "type")
    operand = _arrays.from_cuda_interface(array, interface, name, function, (_FLOAT64,),
                                          writable)
    return operand.address, operand.shape, operand.stream


def _device_empty(like, shape, function):
    """A new float64 array in the same GPU library as `like`."""
    operand = _arrays.from_cuda_interface(like, like.__cuda_array_interface__, "x", function,
                                          (_FLOAT64,), False)
    return _arrays.empty_like(like, operand, shape, _FLOAT64, function)


class BoundProduct:
    """A Regridder's product with its arrays fixed (Regridder.bind)."""

    __slots__ = ("regridder", "x", "out", "_arguments")

    def __init__(self, regridder, x, out, x_data, shape_x, y_data, size_y):
        self.regridder = regridder
        self.x = x
        self.out = out
        self._arguments = (regridder._live(), x_data, shape_x, y_data, size_y)

    def __call__(self) -> Any:
        """y = A x into ``out`` (on a GPU Regridder: enqueued on the
        context's stream); returns ``out``."""
        try:
            ctx = _local.context
        except AttributeError:
            ctx = _core.context()
        status = lib.spart_python_regridder_apply(ctx.pointer, *self._arguments)
        if status:
            ctx.check(status, "spart_regridder_apply")
        return self.out

