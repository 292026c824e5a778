"""
Regridding weights, as the Python package ``regridding`` computes and applies
them (include/spart/weights.h): weights(), regrid_from_weights(), regrid(),
transpose_weights(), transpose_weights_conservative(), convolve_weights().

The functions take and return weights in regridding's form, the tuple
``(weights, shape_input, shape_output)``, so code written for regridding
keeps its shape: ``w = spart.weights(...); spart.regrid_from_weights(*w, v)``.
The first element is a spart ``Weights`` (the arrays stay in spart's
memory; ``Weights.to_regridding()`` gives regridding's object array of
views); functions that take weights accept regridding's own tuple too.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _arrays, _core
from ._core import ffi, lib

Axes = Optional[Union[int, Sequence[int]]]
Shape = Tuple[int, ...]
Coordinates = Union[npt.ArrayLike, Sequence[npt.ArrayLike]]
WeightsTuple = Tuple["Weights", Shape, Shape]

METHODS = {"multilinear": lib.SPART_METHOD_MULTILINEAR,
           "conservative": lib.SPART_METHOD_CONSERVATIVE}
BOUNDS = {"extrapolate": lib.SPART_BOUNDS_EXTRAPOLATE, "nan": lib.SPART_BOUNDS_NAN,
          "raise": lib.SPART_BOUNDS_ERROR}
PERTURB = {None: lib.SPART_PERTURB_DEFAULT, False: lib.SPART_PERTURB_NO,
           True: lib.SPART_PERTURB_YES}
ALGORITHMS = {"auto": lib.SPART_ALGORITHM_AUTO, "sweep": lib.SPART_ALGORITHM_SWEEP,
              "clip": lib.SPART_ALGORITHM_CLIP}


def _choice(table, value, name, function):
    try:
        return table[value]
    except (KeyError, TypeError):
        names = ", ".join(repr(k) for k in table)
        raise _core.argument_error(function, f"{name}: {value!r}; expected one of {names}") \
            from None


class Weights:
    """
    Regridding weights held by spart: one triple of flat arrays
    ``(indices_input, indices_output, values)`` per orthogonal element, as
    ``regridding.weights`` returns them.

    Indexing a Weights as regridding's object array (``w[i, j]``) gives an
    element's triple as read-only NumPy views of spart's memory (no copy).

    Attributes
    ----------
    shape : tuple of int
        The orthogonal shape (one element each), as regridding's object array.
    shape_input, shape_output : tuple of int
        The shapes of the values the weights take and give, orthogonal axes
        included.
    axis_input, axis_output : tuple of int
        The resampled axes of those shapes (non-negative, ascending).
    num_entries : int
        The number of entries of all elements together.
    device : int or None
        The CUDA device whose memory holds the entries (weights built with
        ``spart.weights(..., device=d)``), or None for host memory. Weights
        on a device go to :meth:`Regridder.from_weights` (assembled there,
        in place), :func:`transpose_weights_conservative` and
        :func:`convolve_weights` (worked on there, the host's bits), or
        :meth:`to_host`; the functions that read entries on the host (the
        exact transpose, regrid_from_weights, save) refuse them.
    """

    def __init__(self, pointer, ctx, owner=None):
        # owner None: this object owns `pointer` (freed with it, before ctx);
        # else `owner` does (an IdealInstrument), and is kept alive.
        self._pointer = _core.owned(pointer, lib.spart_weights_free, ctx, owner)
        self._owner = owner
        self.shape = _core.shape_tuple(lib.spart_weights_shape_orthogonal(pointer))
        self.shape_input = _core.shape_tuple(lib.spart_weights_shape_input(pointer))
        self.shape_output = _core.shape_tuple(lib.spart_weights_shape_output(pointer))
        self.num_entries = int(lib.spart_weights_num_entries(pointer))
        counts = ffi.new("int[2]")
        axes_in = ffi.new("int[]", _core.MAX_NDIM)
        axes_out = ffi.new("int[]", _core.MAX_NDIM)
        lib.spart_weights_axes(pointer, counts, axes_in, counts + 1, axes_out)
        self.axis_input = tuple(axes_in[0:counts[0]])
        self.axis_output = tuple(axes_out[0:counts[1]])
        cuda = int(lib.spart_weights_cuda_device(pointer))
        self.device = None if cuda < 0 else cuda
        self._arrays = None

    @property
    def size(self):
        """The number of orthogonal elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self):
        """The number of orthogonal axes."""
        return len(self.shape)

    def __repr__(self):
        where = "" if self.device is None else f", on cuda:{self.device}"
        return (f"<spart.Weights: {self.size} elements of shape {self.shape}, "
                f"{self.num_entries} entries, {self.shape_input} -> {self.shape_output}"
                f"{where}>")

    def to_host(self) -> "Weights":
        """A copy in host memory (of weights on a device: copied back from it)."""
        ctx = _core.context()
        if self.device is not None:
            _arrays.enter_device(ctx, self.device, None)
        out = ffi.new("spart_weights **")
        ctx.check(lib.spart_weights_to_host(ctx.pointer, self._pointer, out),
                  "spart_weights_to_host")
        return Weights(out[0], ctx)

    def arrays(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """
        The weights' arrays, views of spart's memory (read-only, no copy).

        Returns
        -------
        offsets : numpy.ndarray of int64
            ``size + 1`` offsets: element ``e`` holds entries
            ``offsets[e]:offsets[e + 1]`` (elements in C order of ``shape``).
        indices_input, indices_output : numpy.ndarray of int64
            Flat C-order indices over the resampled axes of each element.
        values : numpy.ndarray of float64
        """
        if self.device is not None:
            raise _core.argument_error("Weights.arrays", f"the entries are in the memory of "
                                       f"CUDA device {self.device}; copy them with "
                                       ".to_host() first, or read them there with "
                                       ".device_arrays()")
        if self._arrays is None:
            out = ffi.new("const int64_t *[3]")
            values = ffi.new("const double **")
            status = lib.spart_weights_arrays(self._pointer, out, out + 1, out + 2, values)
            _core.context().check(status, "spart_weights_arrays")
            n = self.num_entries
            self._arrays = (_core.view(self, out[0], self.size + 1, "<i8"),
                            _core.view(self, out[1], n, "<i8"),
                            _core.view(self, out[2], n, "<i8"),
                            _core.view(self, values[0], n, "<f8"))
        return self._arrays

    def device_arrays(self) -> Tuple[np.ndarray, "DeviceView", "DeviceView", "DeviceView"]:
        """
        The arrays of weights built on a device, where they lie (no copy):
        the offsets as a read-only NumPy view (they are host memory), the
        entry arrays as read-only views with ``__cuda_array_interface__``
        (``cupy.asarray(view)`` or ``torch.as_tensor(view, device="cuda")``
        wrap them), kept alive with these weights.
        """
        if self.device is None:
            raise _core.argument_error("Weights.device_arrays", "the entries are in host "
                                       "memory; use .arrays()")
        out = ffi.new("const int64_t *[3]")
        values = ffi.new("const double **")
        _core.context().check(lib.spart_weights_arrays(self._pointer, out, out + 1, out + 2,
                                                       values), "spart_weights_arrays")
        n = self.num_entries
        return (_core.view(self, out[0], self.size + 1, "<i8"),
                DeviceView(self, out[1], n, "<i8"), DeviceView(self, out[2], n, "<i8"),
                DeviceView(self, values[0], n, "<f8"))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of weights without orthogonal axes")
        return self.shape[0]

    def __getitem__(self, index) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One element's ``(indices_input, indices_output, values)``, views."""
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) != len(self.shape):
            raise IndexError(f"weights of orthogonal shape {self.shape} take {len(self.shape)} "
                             f"indices, not {len(index)}")
        flat = int(np.ravel_multi_index(tuple(int(i) for i in index), self.shape)) \
            if self.shape else 0
        offsets, ii, io, v = self.arrays()
        part = slice(int(offsets[flat]), int(offsets[flat + 1]))
        return ii[part], io[part], v[part]

    def to_regridding(self) -> Tuple[np.ndarray, Shape, Shape]:
        """
        The weights in regridding's form, views of spart's memory.

        Returns
        -------
        tuple
            ``(W, shape_input, shape_output)``, W an object array of shape
            ``shape`` whose elements are ``(indices_input, indices_output,
            values)`` triples, as ``regridding.weights`` returns.
        """
        offsets, ii, io, v = self.arrays()
        result = np.empty(self.size, dtype=object)
        for e in range(self.size):
            part = slice(int(offsets[e]), int(offsets[e + 1]))
            result[e] = (ii[part], io[part], v[part])
        return result.reshape(self.shape), self.shape_input, self.shape_output

    @classmethod
    def from_regridding(cls, weights: np.ndarray, shape_input: Sequence[int],
                        shape_output: Sequence[int], axis_input: Axes = None,
                        axis_output: Axes = None) -> "Weights":
        """
        spart weights from regridding's ``(W, shape_input, shape_output)``
        (a copy: spart checks each index against its element's cells).

        Parameters
        ----------
        weights : numpy.ndarray of object
            regridding's object array of ``(indices_input, indices_output,
            values)`` triples.
        shape_input, shape_output : tuple of int
            The shapes regridding returned with it.
        axis_input, axis_output : int or sequence of int, optional
            The resampled axes regridding was given (None: every axis).
        """
        function = "Weights.from_regridding"
        array = np.asarray(weights, dtype=object)
        flat = array.reshape(-1)
        parts = [tuple(flat[e]) for e in range(flat.size)]
        for e, part in enumerate(parts):
            if len(part) != 3:
                raise _core.argument_error(
                    function, f"weights: element {e} has {len(part)} arrays, not 3 "
                    "(indices_input, indices_output, values)")
        counts = [len(np.asarray(p[2]).reshape(-1)) for p in parts]
        offsets = np.zeros(flat.size + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(counts, dtype=np.int64)

        def joined(k, dtype):
            pieces = [np.asarray(p[k]).astype(dtype, copy=False).reshape(-1) for p in parts]
            return np.ascontiguousarray(np.concatenate(pieces + [np.zeros(1, dtype=dtype)]))

        ii, io, v = joined(0, np.int64), joined(1, np.int64), joined(2, np.float64)
        shapes = ffi.new("spart_shape[3]")
        _core.fill_shape(shapes[0], array.shape, "weights", function)
        _core.fill_shape(shapes[1], shape_input, "shape_input", function)
        _core.fill_shape(shapes[2], shape_output, "shape_output", function)
        a_in = ffi.new("int[]", _core.MAX_NDIM)
        a_out = ffi.new("int[]", _core.MAX_NDIM)
        n_in = _core.fill_axes(a_in, axis_input, "axis_input", function)
        n_out = _core.fill_axes(a_out, axis_output, "axis_output", function)
        ctx = _core.context()
        out = ffi.new("spart_weights **")
        status = lib.spart_weights_create_from_arrays(
            ctx.pointer, shapes, shapes + 1, shapes + 2, n_in, a_in, n_out, a_out,
            ffi.from_buffer("int64_t[]", offsets), ffi.from_buffer("int64_t[]", ii),
            ffi.from_buffer("int64_t[]", io), ffi.from_buffer("double[]", v), out)
        ctx.check(status, "spart_weights_create_from_arrays")
        return cls(out[0], ctx)

    def save(self, path: Union[str, os.PathLike], overwrite: bool = False) -> None:
        """Save to a FITS file (docs/formats.md); refuses to replace a file
        unless `overwrite`."""
        ctx = _core.context()
        ctx.check(lib.spart_weights_save(ctx.pointer, self._pointer, os.fsencode(path),
                                         1 if overwrite else 0), "spart_weights_save")

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Weights":
        """Load weights saved by Weights.save (or the C API)."""
        ctx = _core.context()
        out = ffi.new("spart_weights **")
        ctx.check(lib.spart_weights_load(ctx.pointer, os.fsencode(path), out),
                  "spart_weights_load")
        return cls(out[0], ctx)


class DeviceView:
    """A read-only 1-D array in GPU memory owned by a spart object, exposed
    through ``__cuda_array_interface__`` (version 3; the memory is complete
    when spart hands it out, so no stream is named), keeping that object
    alive."""

    __slots__ = ("__cuda_array_interface__", "owner")

    def __init__(self, owner, c_pointer, count, typestr):
        self.owner = owner
        address = int(ffi.cast("uintptr_t", c_pointer)) if count else 0
        self.__cuda_array_interface__ = {"shape": (int(count),), "typestr": typestr,
                                         "data": (address, True), "version": 3,
                                         "strides": None, "stream": None}


def as_weights(weights, function, axis_input=None, axis_output=None):
    """A spart Weights from a Weights, spart's tuple or regridding's tuple."""
    if isinstance(weights, Weights):
        return weights
    if isinstance(weights, tuple) and len(weights) == 3:
        first = weights[0]
        if isinstance(first, Weights):
            return first
        return Weights.from_regridding(first, weights[1], weights[2], axis_input, axis_output)
    raise _core.argument_error(
        function, f"weights: a {type(weights).__name__}; give spart.weights(...)'s result, "
        "a spart.Weights or regridding's (weights, shape_input, shape_output)", "type")


def _options(function, kept, axis_input=None, axis_output=None, weights_input=None,
             method="multilinear", bounds="extrapolate", perturb=None, seed=42,
             algorithm="auto", coalesce=True):
    """A spart_weights_options struct; arrays it points into go to `kept`."""
    options = ffi.new("spart_weights_options *")
    lib.spart_weights_options_init(options)
    options.method = _choice(METHODS, method, "method", function)
    options.bounds = _choice(BOUNDS, bounds, "bounds", function)
    options.perturb = _choice(PERTURB, perturb, "perturb", function)
    options.seed = int(seed)
    options.algorithm = _choice(ALGORITHMS, algorithm, "algorithm", function)
    options.coalesce = 1 if coalesce else 0
    options.num_axis_input = _core.fill_axes(options.axis_input, axis_input, "axis_input",
                                             function)
    options.num_axis_output = _core.fill_axes(options.axis_output, axis_output, "axis_output",
                                              function)
    if weights_input is not None:
        array = _core.values_in(weights_input, "weights_input", function)
        struct = _core.new_array(array, "weights_input", function)
        kept += [array, struct]
        options.weights_input = struct
    return options


def weights(coordinates_input: Coordinates, coordinates_output: Coordinates,
            axis_input: Axes = None, axis_output: Axes = None,
            weights_input: Optional[npt.ArrayLike] = None, method: str = "multilinear",
            bounds: str = "extrapolate", perturb: Optional[bool] = None, seed: int = 42,
            algorithm: str = "auto", coalesce: bool = True,
            device: Optional[int] = None) -> WeightsTuple:
    """
    Weights that regrid values from one grid to another, as ``regridding.weights``.

    Parameters
    ----------
    coordinates_input, coordinates_output : numpy.ndarray or sequence of numpy.ndarray
        The vertices of each grid, one array per resampled dimension (``x``,
        or ``(x, y)``), broadcast together; float64 and C-contiguous.
    axis_input, axis_output : int or sequence of int, optional
        The resampled axes of each grid (None: every axis).
    weights_input : numpy.ndarray, optional
        A factor per input cell (conservative) or vertex (multilinear)
        multiplied into each weight.
    method : {"multilinear", "conservative"}
    bounds : {"extrapolate", "nan", "raise"}
        Multilinear only: what an output point outside the input grid gets.
    perturb : bool or None
        Jitter the output vertices by 1e-9 of the grid's extent (None: only
        for the 2-D sweep, as regridding).
    seed : int
        The seed of the jitter.
    algorithm : {"auto", "sweep", "clip"}
        Conservative 2-D only: which algorithm computes the overlaps.
    coalesce : bool
        Merge repeated (input, output) pairs and sort each element.
    device : int, optional
        Build on this CUDA device (``spart_weights_build_device``; spart
        built with CUDA): the same entries in the same order, bit for bit,
        with the entry arrays left in that device's memory (``.device``),
        for :meth:`Regridder.from_weights` to assemble there. None: on
        the host, unless the coordinates are GPU arrays.

    Coordinates (and ``weights_input``) that are GPU arrays (CuPy, PyTorch,
    Numba: ``__cuda_array_interface__``; or CUDA DLPack tensors), float64
    and C-contiguous, all on one device, are read there in place
    (``spart_weights_build_device_grids``): the weights are built on that
    device (``device``, if given, must name it) with the same entries, bit
    for bit, as from NumPy copies; their coordinates' values are checked
    there. Grids in host and GPU memory cannot be mixed.

    Returns
    -------
    tuple
        ``(Weights, shape_input, shape_output)``, regridding's form.

    Raises
    ------
    SpartError
        With spart's status and sentence (a SpartValueError for bad values).
    """
    function = "spart.weights"
    on_gpu = _gpu_grids(function, coordinates_input, coordinates_output, weights_input)
    if on_gpu is not None:
        return _weights_from_gpu_grids(function, on_gpu, device, axis_input, axis_output,
                                       method, bounds, perturb, seed, algorithm, coalesce)
    n_in, block_in, kept_in = _core.new_arrays(coordinates_input, "coordinates_input", function)
    n_out, block_out, kept_out = _core.new_arrays(coordinates_output, "coordinates_output",
                                                  function)
    if n_in != n_out:
        raise _core.argument_error(function, f"coordinates_input has {n_in} arrays and "
                                   f"coordinates_output {n_out}; they must be as many", "shape")
    kept = []
    options = _options(function, kept, axis_input, axis_output, weights_input, method, bounds,
                       perturb, seed, algorithm, coalesce)
    ctx = _core.context()
    out = ffi.new("spart_weights **")
    if device is None:
        ctx.check(lib.spart_weights_build(ctx.pointer, n_in, block_in, block_out, options, out),
                  "spart_weights_build")
    else:
        # on the default stream, not one a product left the context on
        _arrays.enter_device(ctx, device, None)
        ctx.check(lib.spart_weights_build_device(ctx.pointer, n_in, block_in, block_out, options,
                                                 out), "spart_weights_build_device")
    result = Weights(out[0], ctx)
    return result, result.shape_input, result.shape_output


def _gpu_grids(function, coordinates_input, coordinates_output, weights_input):
    """The coordinates (and weights_input) as GPU Operands, ([inputs],
    [outputs], weights_input or None), when any of them is a GPU array;
    None when all are host arrays."""
    def arrays_of(coordinates):
        if (isinstance(coordinates, np.ndarray) or np.isscalar(coordinates)
                or hasattr(coordinates, "__cuda_array_interface__")
                or hasattr(coordinates, "__dlpack_device__")):
            return (coordinates,)
        return tuple(coordinates)

    sides = (arrays_of(coordinates_input), arrays_of(coordinates_output))
    given = [a for side in sides for a in side] + ([weights_input] if weights_input is not None
                                                   else [])
    if not any(_on_gpu(a) for a in given):
        return None
    operands = []
    for name, side in (("coordinates_input", sides[0]), ("coordinates_output", sides[1])):
        operands.append([_arrays.operand(a, f"{name}[{k}]", function, (np.float64,))
                         for k, a in enumerate(side)])
    factor = (None if weights_input is None else
              _arrays.operand(weights_input, "weights_input", function, (np.float64,)))
    named = ([(f"coordinates_input[{k}]", o) for k, o in enumerate(operands[0])]
             + [(f"coordinates_output[{k}]", o) for k, o in enumerate(operands[1])]
             + ([("weights_input", factor)] if factor is not None else []))
    _arrays.same_place(named, function)
    return operands[0], operands[1], factor


def _on_gpu(array):
    if hasattr(array, "__cuda_array_interface__"):
        return True
    if hasattr(array, "__dlpack_device__") and not isinstance(array, np.ndarray):
        return array.__dlpack_device__()[0] != 1
    return False


def _weights_from_gpu_grids(function, on_gpu, device, axis_input, axis_output, method, bounds,
                            perturb, seed, algorithm, coalesce):
    """spart_weights_build_device_grids on GPU Operands."""
    inputs, outputs, factor = on_gpu
    if len(inputs) != len(outputs):
        raise _core.argument_error(function, f"coordinates_input has {len(inputs)} arrays and "
                                   f"coordinates_output {len(outputs)}; they must be as many",
                                   "shape")
    where = inputs[0].device
    if device is not None and int(device) != where:
        raise _core.argument_error(function, f"device={device}, but the coordinates are on "
                                   f"CUDA device {where}")
    blocks = []
    for name, side in (("coordinates_input", inputs), ("coordinates_output", outputs)):
        block = ffi.new("spart_array[]", max(len(side), 1))
        for k, o in enumerate(side):
            block[k].data = o.pointer("double *")
            _core.fill_shape(block[k].shape, o.shape, f"{name}[{k}]", function)
        blocks.append(block)
    kept = []
    options = _options(function, kept, axis_input, axis_output, None, method, bounds, perturb,
                       seed, algorithm, coalesce)
    if factor is not None:
        struct = ffi.new("spart_array *")
        struct.data = factor.pointer("double *")
        _core.fill_shape(struct.shape, factor.shape, "weights_input", function)
        kept.append(struct)
        options.weights_input = struct
    ctx = _core.context()
    out = ffi.new("spart_weights **")
    # on the stream the first coordinate's producer queued its work on
    _arrays.enter_device(ctx, where, inputs[0].stream)
    ctx.check(lib.spart_weights_build_device_grids(ctx.pointer, len(inputs), blocks[0], blocks[1],
                                                   options, out),
              "spart_weights_build_device_grids")
    result = Weights(out[0], ctx)
    return result, result.shape_input, result.shape_output


def _check_shapes(w, shape_input, shape_output, function):
    for name, given, own in (("shape_input", shape_input, w.shape_input),
                             ("shape_output", shape_output, w.shape_output)):
        if given is not None and tuple(int(d) for d in given) != own:
            raise _core.argument_error(function, f"{name}: {tuple(given)}, but the weights "
                                       f"were built for {own}", "shape")


def regrid_from_weights(weights: Union["Weights", np.ndarray],
                        shape_input: Optional[Sequence[int]],
                        shape_output: Optional[Sequence[int]], values_input: npt.ArrayLike,
                        values_output: Optional[np.ndarray] = None, axis_input: Axes = None,
                        axis_output: Axes = None) -> np.ndarray:
    """
    Apply weights to values, as ``regridding.regrid_from_weights``.

    Each orthogonal element sums ``value * values_input[i]`` into
    ``values_output[o]`` in stored order from zero, as regridding does.

    Parameters
    ----------
    weights : Weights or numpy.ndarray
        A spart Weights, or regridding's object array of triples.
    shape_input, shape_output : tuple of int
        The shapes returned with the weights.
    values_input : numpy.ndarray
        float64, C-contiguous; leading batch axes allowed.
    values_output : numpy.ndarray, optional
        Where to write the result (float64, C-contiguous, of the output
        shape); it is overwritten and returned. None: a new array.
    axis_input, axis_output : int or sequence of int, optional
        As regridding (None: the axes the weights were built with).

    Returns
    -------
    numpy.ndarray
        The regridded values.
    """
    function = "spart.regrid_from_weights"
    if isinstance(weights, Weights):
        w = weights
        _check_shapes(w, shape_input, shape_output, function)
    else:
        w = Weights.from_regridding(weights, shape_input, shape_output, axis_input, axis_output)
    values = _core.values_in(values_input, "values_input", function)
    struct = _core.new_array(values, "values_input", function)
    a_in = ffi.new("int[]", _core.MAX_NDIM)
    a_out = ffi.new("int[]", _core.MAX_NDIM)
    n_in = _core.fill_axes(a_in, axis_input, "axis_input", function)
    n_out = _core.fill_axes(a_out, axis_output, "axis_output", function)
    ctx = _core.context()
    shape = ffi.new("spart_shape *")
    ctx.check(lib.spart_regrid_from_weights_shape(ctx.pointer, w._pointer, ffi.addressof(
        struct, "shape"), n_in, a_in, n_out, a_out, shape), "spart_regrid_from_weights_shape")
    shape = _core.shape_tuple(shape)
    if values_output is None:
        result = np.empty(shape)
    else:
        result = _core.values_out(values_output, "values_output", function, shape)
    ctx.check(lib.spart_regrid_from_weights(ctx.pointer, w._pointer, struct, n_in, a_in, n_out,
                                            a_out, _core.pointer(result, True), result.size),
              "spart_regrid_from_weights")
    return result


def regrid(coordinates_input: Coordinates, coordinates_output: Coordinates,
           values_input: npt.ArrayLike, values_output: Optional[np.ndarray] = None,
           axis_input: Axes = None, axis_output: Axes = None, method: str = "multilinear",
           bounds: str = "extrapolate", perturb: Optional[bool] = None, seed: int = 42,
           algorithm: str = "auto", coalesce: bool = False) -> np.ndarray:
    """
    Build weights and apply them once, as ``regridding.regrid``.

    Parameters are those of :func:`weights` and :func:`regrid_from_weights`;
    ``coalesce`` defaults to False, as regridding's ``regrid``.

    Returns
    -------
    numpy.ndarray
        The regridded values (``values_output`` if given).
    """
    function = "spart.regrid"
    n_in, block_in, kept_in = _core.new_arrays(coordinates_input, "coordinates_input", function)
    n_out, block_out, kept_out = _core.new_arrays(coordinates_output, "coordinates_output",
                                                  function)
    values = _core.values_in(values_input, "values_input", function)
    struct = _core.new_array(values, "values_input", function)
    kept = []
    options = _options(function, kept, axis_input, axis_output, None, method, bounds, perturb,
                       seed, algorithm, coalesce)
    ctx = _core.context()
    shape = ffi.new("spart_shape *")
    ctx.check(lib.spart_regrid_shape(ctx.pointer, n_in, block_in, block_out,
                                     ffi.addressof(struct, "shape"), options, shape),
              "spart_regrid_shape")
    shape = _core.shape_tuple(shape)
    if values_output is None:
        result = np.empty(shape)
    else:
        result = _core.values_out(values_output, "values_output", function, shape)
    ctx.check(lib.spart_regrid(ctx.pointer, n_in, block_in, block_out, struct, options,
                               _core.pointer(result, True), result.size), "spart_regrid")
    return result


def transpose_weights(weights: Union[WeightsTuple, "Weights"]) -> WeightsTuple:
    """
    The exact transpose of weights, as ``regridding.transpose_weights``
    (each element's input and output swapped; not conservative).

    Parameters
    ----------
    weights : tuple
        ``(Weights, shape_input, shape_output)`` or regridding's tuple.

    Returns
    -------
    tuple
        ``(Weights, shape_output, shape_input)``.
    """
    function = "spart.transpose_weights"
    w = as_weights(weights, function)
    ctx = _core.context()
    out = ffi.new("spart_weights **")
    ctx.check(lib.spart_weights_transpose(ctx.pointer, w._pointer, out),
              "spart_weights_transpose")
    result = Weights(out[0], ctx)
    return result, result.shape_input, result.shape_output


def transpose_weights_conservative(weights: Union[WeightsTuple, "Weights"],
                                   coordinates_input: Coordinates,
                                   coordinates_output: Coordinates, axis_input: Axes = None,
                                   axis_output: Axes = None,
                                   weights_input: Optional[npt.ArrayLike] = None
                                   ) -> WeightsTuple:
    """
    The conservative transpose, as ``regridding.transpose_weights_conservative``:
    each entry ``v`` becomes ``v * F_in[input] / V_out[output]``, V the cell
    volumes and ``F_in = V_in / weights_input**2``.

    Parameters
    ----------
    weights : tuple
        ``(Weights, shape_input, shape_output)`` or regridding's tuple.
    coordinates_input, coordinates_output, axis_input, axis_output, weights_input
        Those the weights were built with.

    Returns
    -------
    tuple
        ``(Weights, shape_output, shape_input)``.
    """
    function = "spart.transpose_weights_conservative"
    w = as_weights(weights, function, axis_input, axis_output)
    n_in, block_in, kept_in = _core.new_arrays(coordinates_input, "coordinates_input", function)
    n_out, block_out, kept_out = _core.new_arrays(coordinates_output, "coordinates_output",
                                                  function)
    kept = []
    options = _options(function, kept, axis_input, axis_output, weights_input,
                       method="conservative")
    ctx = _core.context()
    _arrays.enter_device(ctx, w.device, None)  # weights on a device: worked on there
    out = ffi.new("spart_weights **")
    ctx.check(lib.spart_weights_transpose_conservative(ctx.pointer, w._pointer, n_in, block_in,
                                                       block_out, options, out),
              "spart_weights_transpose_conservative")
    result = Weights(out[0], ctx)
    return result, result.shape_input, result.shape_output


def convolve_weights(weights: Union[WeightsTuple, "Weights"], kernel: npt.ArrayLike,
                     axis_output: Axes = None) -> WeightsTuple:
    """
    Fold a kernel (a point-spread function) into weights, as
    ``regridding.convolve_weights``: W becomes P W with
    ``P[i', i] = K_i(i' - i)``.

    Parameters
    ----------
    weights : tuple
        ``(Weights, shape_input, shape_output)`` or regridding's tuple.
    kernel : numpy.ndarray
        float64, C-contiguous; its last axes are the kernel along the
        weights' resampled output axes (centre at ``n // 2``), leading axes
        broadcast against the output shape.
    axis_output : optional
        Must be None or the weights' own resampled output axes (spart
        convolves along those).

    Returns
    -------
    tuple
        ``(Weights, shape_input, shape_output)``.
    """
    function = "spart.convolve_weights"
    w = as_weights(weights, function, None, axis_output)
    if axis_output is not None:
        ndim = len(w.shape_output)
        given = tuple(sorted(a % ndim for a in _core.axes_tuple(axis_output)))
        if given != w.axis_output:
            raise _core.argument_error(function, f"axis_output: {axis_output}; spart convolves "
                                       f"along the weights' resampled axes {w.axis_output}")
    array = _core.values_in(kernel, "kernel", function)
    struct = _core.new_array(array, "kernel", function)
    ctx = _core.context()
    _arrays.enter_device(ctx, w.device, None)  # weights on a device: worked on there
    out = ffi.new("spart_weights **")
    ctx.check(lib.spart_weights_convolve(ctx.pointer, w._pointer, struct, out),
              "spart_weights_convolve")
    result = Weights(out[0], ctx)
    return result, result.shape_input, result.shape_output
