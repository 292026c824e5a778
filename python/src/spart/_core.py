"""
What every part of the package shares: the compiled binding, the error
classes, the per-thread spart context, and the checks that turn NumPy
arrays into the C structs spart reads without copying them.

The rule for arrays (every function of the package follows it):

- a NumPy array is used in place, so it must already be what spart reads:
  float64 and C-contiguous (an output array must also be writeable);
  anything else raises a SpartTypeError (dtype) or SpartValueError (layout,
  shape) whose message names the argument and says how to convert it;
- anything that is not a NumPy array (a list, a scalar) is converted with
  numpy.asarray(..., dtype=float64), which is a copy anyway.

So a call never copies an array behind the caller's back.
"""

from __future__ import annotations

import threading

import numpy as np

from ._spart import ffi, lib

MAX_NDIM = lib.SPART_MAX_NDIM
_DOUBLES = ffi.typeof("double[]")

# ---- errors ---------------------------------------------------------------------------


class SpartError(Exception):
    """
    An error reported by spart, or found by the package before calling it.

    Attributes
    ----------
    status : int
        spart's status code (``spart_status`` in ``include/spart/common.h``),
        for example 3 for ``SPART_ERROR_SHAPE_MISMATCH``.
    status_name : str
        The code's name, such as ``"SPART_ERROR_SHAPE_MISMATCH"``.
    sentence : str
        spart's sentence saying what was wrong.
    function : str or None
        The C function that failed, or the package function whose argument
        check failed.
    """

    def __init__(self, status, sentence, function=None):
        self.status = int(status)
        self.status_name = status_name(self.status)
        self.sentence = sentence
        self.function = function
        where = f"{function}: " if function else ""
        super().__init__(f"{where}{sentence} [{self.status_name}]")


class SpartValueError(SpartError, ValueError):
    """A SpartError about a value, a shape, an axis or a layout; also a ValueError."""


class SpartTypeError(SpartError, TypeError):
    """A SpartError about the type or dtype of an argument; also a TypeError."""


class SpartNotImplementedError(SpartError, NotImplementedError):
    """A case spart does not support; also a NotImplementedError."""


_VALUE_STATUSES = {
    lib.SPART_ERROR_NULL_POINTER,
    lib.SPART_ERROR_INVALID_ARGUMENT,
    lib.SPART_ERROR_SHAPE_MISMATCH,
    lib.SPART_ERROR_AXIS_OUT_OF_RANGE,
    lib.SPART_ERROR_NOT_FINITE,
    lib.SPART_ERROR_OUT_OF_BOUNDS,
    lib.SPART_ERROR_UNKNOWN_ENUM,
}


def status_name(status: int) -> str:
    """The name of a spart status code, such as ``"SPART_ERROR_IO"``."""
    return ffi.string(lib.spart_status_string(int(status))).decode()


def error(status, sentence, function=None):
    """The SpartError subclass that fits `status`."""
    if status in _VALUE_STATUSES:
        return SpartValueError(status, sentence, function)
    if status == lib.SPART_ERROR_NOT_IMPLEMENTED:
        return SpartNotImplementedError(status, sentence, function)
    return SpartError(status, sentence, function)


def argument_error(function, sentence, kind="value"):
    """An error about an argument, found before spart is called."""
    if kind == "type":
        return SpartTypeError(lib.SPART_ERROR_INVALID_ARGUMENT, sentence, function)
    if kind == "shape":
        return SpartValueError(lib.SPART_ERROR_SHAPE_MISMATCH, sentence, function)
    return SpartValueError(lib.SPART_ERROR_INVALID_ARGUMENT, sentence, function)


# ---- contexts -------------------------------------------------------------------------


class Context:
    """
    One spart_context. spart asks for a context per thread (it holds the
    last error sentence and the thread count), and cffi releases the GIL
    during every C call, so the package keeps one per Python thread
    (context()). Objects keep the context they were made in alive, since
    spart frees objects before their context.
    """

    __slots__ = ("pointer", "__weakref__")

    def __init__(self):
        out = ffi.new("spart_context **")
        status = lib.spart_context_create(out)
        if status != lib.SPART_OK:
            raise error(status, ffi.string(lib.spart_last_error()).decode(),
                        "spart_context_create")
        self.pointer = ffi.gc(out[0], lib.spart_context_free)

    def check(self, status, function):
        """Raise the error of a status that is not SPART_OK."""
        if status != lib.SPART_OK:
            sentence = ffi.string(lib.spart_context_error(self.pointer)).decode(errors="replace")
            raise error(status, sentence, function)


_local = threading.local()


def context():
    """The calling thread's spart context (made on first use)."""
    try:
        return _local.context
    except AttributeError:
        _local.context = Context()
        return _local.context


def owned(pointer, free, ctx, owner=None):
    """`pointer`, freed by `free` when Python collects it and before `ctx`,
    which it keeps alive (spart frees objects before their context); or,
    with an `owner` (an object that frees it itself), the bare pointer."""
    if owner is not None:
        return pointer
    return ffi.gc(pointer, lambda p, ctx=ctx: free(p))


def set_threads(threads: int) -> None:
    """
    Use `threads` OpenMP threads in this Python thread's spart calls.

    Parameters
    ----------
    threads : int
        The number of threads; 0 means OpenMP's default (``OMP_NUM_THREADS``
        or the core count).
    """
    ctx = context()
    ctx.check(lib.spart_context_set_threads(ctx.pointer, int(threads)),
              "spart_context_set_threads")


def get_threads() -> int:
    """The number of OpenMP threads this Python thread's spart calls use."""
    return int(lib.spart_context_threads(context().pointer))


def version() -> str:
    """The version of the spart C library this package is built on."""
    return ffi.string(lib.spart_version()).decode()


# ---- arrays ---------------------------------------------------------------------------


def values_in(array, name, function):
    """
    `array` as a float64 C-contiguous NumPy array spart can read in place:
    NumPy arrays are checked (never copied), anything else is converted.
    """
    if isinstance(array, np.ndarray):
        if array.dtype != np.float64:
            raise argument_error(
                function,
                f"{name}: a {array.dtype} array; spart reads float64 "
                f"(convert it once with {name}.astype(numpy.float64))", "type")
        if not array.flags.c_contiguous:
            raise argument_error(
                function,
                f"{name}: an array that is not C-contiguous (shape {array.shape}, strides "
                f"{array.strides}); spart reads dense C-order arrays "
                f"(copy it once with numpy.ascontiguousarray({name}))")
        return array
    if hasattr(array, "__cuda_array_interface__"):
        raise argument_error(
            function,
            f"{name}: an array in GPU memory, but this call works on host memory "
            "(move the Regridder with .to_device() to apply it to GPU arrays)", "type")
    try:
        return np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError) as problem:
        raise argument_error(function, f"{name}: not an array of numbers ({problem})",
                             "type") from None


def values_out(array, name, function, shape):
    """Check an output array given by the caller: float64, C-contiguous,
    writeable, of `shape`."""
    if not isinstance(array, np.ndarray):
        raise argument_error(function,
                             f"{name}: a {type(array).__name__}; give a NumPy array or None",
                             "type")
    values_in(array, name, function)
    if not array.flags.writeable:
        raise argument_error(function, f"{name}: a read-only array; spart writes into it")
    if array.shape != tuple(shape):
        raise argument_error(function,
                             f"{name}: shape {array.shape}, but the result has shape "
                             f"{tuple(shape)}", "shape")
    return array


def pointer(array, writable=False):
    """A `double *` to the data of a float64 C-contiguous NumPy array, no copy."""
    return ffi.from_buffer(_DOUBLES, array, require_writable=writable)


def fill_shape(shape_struct, dims, name, function):
    """Write a tuple of extents into a spart_shape."""
    dims = tuple(int(d) for d in dims)
    if len(dims) > MAX_NDIM:
        raise argument_error(function,
                             f"{name}: {len(dims)} axes; spart takes at most {MAX_NDIM}",
                             "shape")
    shape_struct.ndim = len(dims)
    shape_struct.dims[0:len(dims)] = dims


def shape_tuple(shape_struct):
    """A spart_shape as a tuple of ints."""
    return tuple(shape_struct.dims[0:shape_struct.ndim])


def new_array(array, name, function):
    """A spart_array struct (cdata) over a checked NumPy array. The struct
    holds a pointer into `array`: keep `array` alive while it is used."""
    struct = ffi.new("spart_array *")
    struct.data = pointer(array)
    fill_shape(struct.shape, array.shape, name, function)
    return struct


def new_arrays(coordinates, name, function):
    """(count, spart_array[count], kept arrays) for a grid given as one
    array or a sequence of arrays, as regridding takes coordinates."""
    if isinstance(coordinates, np.ndarray) or np.isscalar(coordinates):
        coordinates = (coordinates,)
    coordinates = tuple(coordinates)
    count = len(coordinates)
    block = ffi.new("spart_array[]", max(count, 1))
    kept = []
    for k, c in enumerate(coordinates):
        c = values_in(c, f"{name}[{k}]", function)
        kept.append(c)
        block[k].data = pointer(c)
        fill_shape(block[k].shape, c.shape, f"{name}[{k}]", function)
    return count, block, kept


def axes_tuple(axis):
    """regridding's axis argument (None, an int or a sequence) as a tuple."""
    if axis is None:
        return ()
    if np.ndim(axis) == 0:
        return (int(axis),)
    return tuple(int(a) for a in axis)


def fill_axes(block, axis, name, function):
    """Write axis numbers into an int[SPART_MAX_NDIM]; return their count."""
    axes = axes_tuple(axis)
    if len(axes) > MAX_NDIM:
        raise argument_error(function, f"{name}: {len(axes)} axes; spart takes at most "
                             f"{MAX_NDIM}", "shape")
    block[0:len(axes)] = axes
    return len(axes)


class OwnedView:
    """
    Exposes memory that a spart object owns as a NumPy array through the
    array interface, keeping that object alive: numpy.asarray(OwnedView(...))
    is a view whose base is this object, so the memory outlives the Python
    object that handed it out for as long as the view does.
    """

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner, address, count, typestr, writable=False):
        self.owner = owner
        self.__array_interface__ = {
            "shape": (int(count),),
            "typestr": typestr,
            "data": (int(address), not writable),
            "version": 3,
        }


def view(owner, c_pointer, count, typestr):
    """A read-only NumPy view of `count` values at `c_pointer`, kept alive
    with `owner`. An empty array for count 0 or a NULL pointer."""
    dtype = np.dtype(typestr)
    if count == 0 or c_pointer == ffi.NULL:
        return np.zeros(0, dtype=dtype)
    address = int(ffi.cast("uintptr_t", c_pointer))
    return np.asarray(OwnedView(owner, address, count, dtype.str))
