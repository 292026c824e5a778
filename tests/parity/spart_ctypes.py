"""
A small ctypes binding of libspart.so for the parity tests.

It mirrors the C structs of include/spart/common.h and include/spart/weights.h
exactly (ctypes.Structure lays fields out with C alignment, so the padding
after `perturb` and before `weights_input` comes out as the compiler's), and
wraps the weights builders, their accessors, the two transposes and the
applications in functions shaped like those of the Python package
`regridding`:

    spart = Spart("/path/to/libspart.so")
    w = spart.weights((x_in, y_in), (x_out, y_out), method="conservative")
    w.to_regridding()   # (object array of (ii, io, values), shape_in, shape_out)
    dense(w)            # shape_orthogonal + (cells_in, cells_out) matrices

Every non-OK status raises SpartError carrying spart's own sentence.

The library path comes from the constructor argument, else from the
environment variable SPART_LIBRARY.
"""

import ctypes
import os

import numpy as np

SPART_MAX_NDIM = 16

SPART_OK = 0
STATUS_NAMES = {
    0: "SPART_OK",
    1: "SPART_ERROR_NULL_POINTER",
    2: "SPART_ERROR_INVALID_ARGUMENT",
    3: "SPART_ERROR_SHAPE_MISMATCH",
    4: "SPART_ERROR_AXIS_OUT_OF_RANGE",
    5: "SPART_ERROR_NOT_FINITE",
    6: "SPART_ERROR_OUT_OF_BOUNDS",
    7: "SPART_ERROR_UNKNOWN_ENUM",
    8: "SPART_ERROR_OUT_OF_MEMORY",
    9: "SPART_ERROR_OVERFLOW",
    10: "SPART_ERROR_IO",
    11: "SPART_ERROR_FILE_FORMAT",
    12: "SPART_ERROR_NO_DEVICE",
    13: "SPART_ERROR_NOT_IMPLEMENTED",
    14: "SPART_ERROR_INTERNAL",
}
SPART_ERROR_NOT_IMPLEMENTED = 13

METHODS = {"multilinear": 0, "conservative": 1}
BOUNDS = {"extrapolate": 0, "nan": 1, "raise": 2, "error": 2}
PERTURB = {None: 0, False: 1, True: 2}
ALGORITHMS = {"auto": 0, "sweep": 1, "clip": 2}


class SpartError(RuntimeError):
    """A spart call returned a status other than SPART_OK."""

    def __init__(self, function, status, sentence):
        self.function = function
        self.status = status
        self.name = STATUS_NAMES.get(status, f"status {status}")
        self.sentence = sentence
        super().__init__(f"{function}: {self.name}: {sentence}")


# ---- the C structs -----------------------------------------------------------


class spart_shape(ctypes.Structure):
    _fields_ = [("ndim", ctypes.c_int), ("dims", ctypes.c_int64 * SPART_MAX_NDIM)]


class spart_array(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(ctypes.c_double)), ("shape", spart_shape)]


class spart_weights_options(ctypes.Structure):
    # enums are int-sized with the compilers spart supports (gcc, clang)
    _fields_ = [
        ("method", ctypes.c_int),
        ("bounds", ctypes.c_int),
        ("perturb", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("algorithm", ctypes.c_int),
        ("coalesce", ctypes.c_int),
        ("num_axis_input", ctypes.c_int),
        ("axis_input", ctypes.c_int * SPART_MAX_NDIM),
        ("num_axis_output", ctypes.c_int),
        ("axis_output", ctypes.c_int * SPART_MAX_NDIM),
        ("weights_input", ctypes.POINTER(spart_array)),
    ]


def make_shape(dims):
    dims = tuple(int(d) for d in dims)
    if len(dims) > SPART_MAX_NDIM:
        raise ValueError(f"{len(dims)} axes: spart allows at most {SPART_MAX_NDIM}")
    shape = spart_shape()
    shape.ndim = len(dims)
    for k, d in enumerate(dims):
        shape.dims[k] = d
    return shape


def shape_tuple(shape):
    return tuple(int(shape.dims[k]) for k in range(shape.ndim))


class _Arrays:
    """Keeps the NumPy arrays behind spart_array structs alive for a call."""

    def __init__(self):
        self.keep = []

    def array(self, a):
        a = np.ascontiguousarray(a, dtype=np.float64)
        self.keep.append(a)
        result = spart_array()
        result.data = a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        result.shape = make_shape(a.shape)
        return result

    def arrays(self, coordinates):
        if isinstance(coordinates, np.ndarray):
            coordinates = (coordinates,)
        coordinates = tuple(coordinates)
        block = (spart_array * len(coordinates))()
        for k, c in enumerate(coordinates):
            block[k] = self.array(c)
        return len(coordinates), block


def _axes(axis):
    """regridding's axis argument (None, int or sequence) as a tuple."""
    if axis is None:
        return ()
    if np.ndim(axis) == 0:
        return (int(axis),)
    return tuple(int(a) for a in axis)


def _int_array(values):
    values = tuple(values)
    block = (ctypes.c_int * SPART_MAX_NDIM)()
    for k, v in enumerate(values):
        block[k] = v
    return len(values), block


# ---- the library ---------------------------------------------------------------

P = ctypes.POINTER
c_int64_p = P(ctypes.c_int64)
c_double_p = P(ctypes.c_double)


def _declare(lib):
    """Give every function used here its C signature."""
    status = ctypes.c_int
    ctx = ctypes.c_void_p
    weights = ctypes.c_void_p
    table = {
        "spart_version": (ctypes.c_char_p, []),
        "spart_status_string": (ctypes.c_char_p, [ctypes.c_int]),
        "spart_context_create": (status, [P(ctx)]),
        "spart_context_free": (None, [ctx]),
        "spart_context_error": (ctypes.c_char_p, [ctx]),
        "spart_context_set_threads": (status, [ctx, ctypes.c_int]),
        "spart_context_threads": (ctypes.c_int, [ctx]),
        "spart_weights_options_init": (None, [P(spart_weights_options)]),
        "spart_weights_build": (
            status,
            [ctx, ctypes.c_int, P(spart_array), P(spart_array), P(spart_weights_options),
             P(weights)],
        ),
        "spart_weights_free": (None, [weights]),
        "spart_weights_shape_orthogonal": (spart_shape, [weights]),
        "spart_weights_shape_input": (spart_shape, [weights]),
        "spart_weights_shape_output": (spart_shape, [weights]),
        "spart_weights_num_elements": (ctypes.c_int64, [weights]),
        "spart_weights_num_entries": (ctypes.c_int64, [weights]),
        "spart_weights_arrays": (
            status, [weights, P(c_int64_p), P(c_int64_p), P(c_int64_p), P(c_double_p)]
        ),
        "spart_weights_axes": (
            None, [weights, P(ctypes.c_int), P(ctypes.c_int), P(ctypes.c_int), P(ctypes.c_int)]
        ),
        "spart_weights_transpose": (status, [ctx, weights, P(weights)]),
        "spart_weights_transpose_conservative": (
            status,
            [ctx, weights, ctypes.c_int, P(spart_array), P(spart_array),
             P(spart_weights_options), P(weights)],
        ),
        "spart_regrid_from_weights_shape": (
            status,
            [ctx, weights, P(spart_shape), ctypes.c_int, P(ctypes.c_int), ctypes.c_int,
             P(ctypes.c_int), P(spart_shape)],
        ),
        "spart_regrid_from_weights": (
            status,
            [ctx, weights, P(spart_array), ctypes.c_int, P(ctypes.c_int), ctypes.c_int,
             P(ctypes.c_int), c_double_p, ctypes.c_int64],
        ),
        "spart_regrid_shape": (
            status,
            [ctx, ctypes.c_int, P(spart_array), P(spart_array), P(spart_shape),
             P(spart_weights_options), P(spart_shape)],
        ),
        "spart_regrid": (
            status,
            [ctx, ctypes.c_int, P(spart_array), P(spart_array), P(spart_array),
             P(spart_weights_options), c_double_p, ctypes.c_int64],
        ),
    }
    for name, (restype, argtypes) in table.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


class Weights:
    """spart weights: the C object, with its arrays copied out on demand."""

    def __init__(self, spart, handle):
        self.spart = spart
        self.handle = handle
        lib = spart.lib
        self.shape_orthogonal = shape_tuple(lib.spart_weights_shape_orthogonal(handle))
        self.shape_input = shape_tuple(lib.spart_weights_shape_input(handle))
        self.shape_output = shape_tuple(lib.spart_weights_shape_output(handle))
        self.num_elements = int(lib.spart_weights_num_elements(handle))
        self.num_entries = int(lib.spart_weights_num_entries(handle))
        n_in, n_out = ctypes.c_int(), ctypes.c_int()
        a_in, a_out = (ctypes.c_int * SPART_MAX_NDIM)(), (ctypes.c_int * SPART_MAX_NDIM)()
        lib.spart_weights_axes(handle, ctypes.byref(n_in), a_in, ctypes.byref(n_out), a_out)
        self.axis_input = tuple(a_in[k] for k in range(n_in.value))
        self.axis_output = tuple(a_out[k] for k in range(n_out.value))
        self._arrays = None

    def __del__(self):
        if getattr(self, "handle", None):
            self.spart.lib.spart_weights_free(self.handle)
            self.handle = None

    def arrays(self):
        """(offsets, indices_input, indices_output, values) as NumPy copies."""
        if self._arrays is None:
            offsets, ii, io, v = c_int64_p(), c_int64_p(), c_int64_p(), c_double_p()
            self.spart._check(
                "spart_weights_arrays",
                self.spart.lib.spart_weights_arrays(
                    self.handle, ctypes.byref(offsets), ctypes.byref(ii), ctypes.byref(io),
                    ctypes.byref(v)),
            )
            n = self.num_entries

            def copy(pointer, count, dtype):
                if count == 0:
                    return np.zeros(0, dtype=dtype)
                return np.ctypeslib.as_array(pointer, shape=(count,)).astype(dtype, copy=True)

            self._arrays = (
                copy(offsets, self.num_elements + 1, np.int64),
                copy(ii, n, np.int64),
                copy(io, n, np.int64),
                copy(v, n, np.float64),
            )
        return self._arrays

    def to_regridding(self):
        """The weights in regridding's form: (W, shape_input, shape_output)."""
        offsets, ii, io, v = self.arrays()
        result = np.empty(self.num_elements, dtype=object)
        for e in range(self.num_elements):
            s = slice(offsets[e], offsets[e + 1])
            result[e] = (ii[s], io[s], v[s])
        return result.reshape(self.shape_orthogonal), self.shape_input, self.shape_output

    @property
    def size_input(self):
        return int(np.prod([self.shape_input[a] for a in self.axis_input], dtype=np.int64))

    @property
    def size_output(self):
        return int(np.prod([self.shape_output[a] for a in self.axis_output], dtype=np.int64))


class Spart:
    """One spart context and the library it came from."""

    def __init__(self, path=None, threads=None):
        path = path or os.environ.get("SPART_LIBRARY")
        if not path:
            raise ValueError("give the path of libspart.so, or set SPART_LIBRARY")
        self.path = os.path.abspath(path)
        self.lib = ctypes.CDLL(self.path)
        _declare(self.lib)
        self.context = ctypes.c_void_p()
        status = self.lib.spart_context_create(ctypes.byref(self.context))
        if status != SPART_OK:
            raise SpartError("spart_context_create", status, "could not make a context")
        if threads is not None:
            self.set_threads(threads)

    def __del__(self):
        if getattr(self, "context", None) and self.context.value:
            self.lib.spart_context_free(self.context)
            self.context = None

    @property
    def version(self):
        return self.lib.spart_version().decode()

    def _check(self, function, status):
        if status != SPART_OK:
            sentence = self.lib.spart_context_error(self.context).decode(errors="replace")
            raise SpartError(function, status, sentence)

    def set_threads(self, threads):
        self._check("spart_context_set_threads",
                    self.lib.spart_context_set_threads(self.context, int(threads)))

    def threads(self):
        return int(self.lib.spart_context_threads(self.context))

    def _options(self, keep, axis_input=None, axis_output=None, weights_input=None,
                 method="multilinear", bounds="extrapolate", perturb=None, seed=42,
                 algorithm="auto", coalesce=True):
        options = spart_weights_options()
        self.lib.spart_weights_options_init(ctypes.byref(options))
        options.method = METHODS[method]
        options.bounds = BOUNDS[bounds]
        options.perturb = PERTURB[perturb]
        options.seed = int(seed)
        options.algorithm = ALGORITHMS[algorithm]
        options.coalesce = 1 if coalesce else 0
        axes = _axes(axis_input)
        options.num_axis_input = len(axes)
        for k, a in enumerate(axes):
            options.axis_input[k] = a
        axes = _axes(axis_output)
        options.num_axis_output = len(axes)
        for k, a in enumerate(axes):
            options.axis_output[k] = a
        if weights_input is not None:
            block = keep.array(weights_input)
            keep.keep.append(block)
            options.weights_input = ctypes.pointer(block)
        return options

    def weights(self, coordinates_input, coordinates_output, axis_input=None, axis_output=None,
                weights_input=None, method="multilinear", bounds="extrapolate", perturb=None,
                seed=42, algorithm="auto", coalesce=True):
        """As regridding.weights(); returns a Weights."""
        keep = _Arrays()
        n_in, block_in = keep.arrays(coordinates_input)
        n_out, block_out = keep.arrays(coordinates_output)
        if n_in != n_out:
            raise ValueError(f"{n_in} input and {n_out} output coordinate arrays")
        options = self._options(keep, axis_input, axis_output, weights_input, method, bounds,
                                perturb, seed, algorithm, coalesce)
        handle = ctypes.c_void_p()
        self._check("spart_weights_build",
                    self.lib.spart_weights_build(self.context, n_in, block_in, block_out,
                                                 ctypes.byref(options), ctypes.byref(handle)))
        return Weights(self, handle)

    def transpose_weights(self, weights):
        handle = ctypes.c_void_p()
        self._check("spart_weights_transpose",
                    self.lib.spart_weights_transpose(self.context, weights.handle,
                                                     ctypes.byref(handle)))
        return Weights(self, handle)

    def transpose_weights_conservative(self, weights, coordinates_input, coordinates_output,
                                       axis_input=None, axis_output=None, weights_input=None):
        keep = _Arrays()
        n_in, block_in = keep.arrays(coordinates_input)
        n_out, block_out = keep.arrays(coordinates_output)
        options = self._options(keep, axis_input, axis_output, weights_input)
        handle = ctypes.c_void_p()
        self._check("spart_weights_transpose_conservative",
                    self.lib.spart_weights_transpose_conservative(
                        self.context, weights.handle, n_in, block_in, block_out,
                        ctypes.byref(options), ctypes.byref(handle)))
        return Weights(self, handle)

    def regrid_from_weights(self, weights, values_input, axis_input=None, axis_output=None):
        keep = _Arrays()
        values = keep.array(values_input)
        n_in, a_in = _int_array(_axes(axis_input))
        n_out, a_out = _int_array(_axes(axis_output))
        shape = spart_shape()
        self._check("spart_regrid_from_weights_shape",
                    self.lib.spart_regrid_from_weights_shape(
                        self.context, weights.handle, ctypes.byref(values.shape), n_in, a_in,
                        n_out, a_out, ctypes.byref(shape)))
        result = np.empty(shape_tuple(shape), dtype=np.float64)
        self._check("spart_regrid_from_weights",
                    self.lib.spart_regrid_from_weights(
                        self.context, weights.handle, ctypes.byref(values), n_in, a_in, n_out,
                        a_out, result.ctypes.data_as(c_double_p), result.size))
        return result

    def regrid(self, coordinates_input, coordinates_output, values_input, axis_input=None,
               axis_output=None, method="multilinear", bounds="extrapolate", perturb=None,
               seed=42, algorithm="auto", coalesce=False):
        """As regridding.regrid() (which does not coalesce by default)."""
        keep = _Arrays()
        n_in, block_in = keep.arrays(coordinates_input)
        n_out, block_out = keep.arrays(coordinates_output)
        values = keep.array(values_input)
        options = self._options(keep, axis_input, axis_output, None, method, bounds, perturb,
                                seed, algorithm, coalesce)
        shape = spart_shape()
        self._check("spart_regrid_shape",
                    self.lib.spart_regrid_shape(self.context, n_in, block_in, block_out,
                                                ctypes.byref(values.shape),
                                                ctypes.byref(options), ctypes.byref(shape)))
        result = np.empty(shape_tuple(shape), dtype=np.float64)
        self._check("spart_regrid",
                    self.lib.spart_regrid(self.context, n_in, block_in, block_out,
                                          ctypes.byref(values), ctypes.byref(options),
                                          result.ctypes.data_as(c_double_p), result.size))
        return result


# ---- comparing weights ------------------------------------------------------------


def _normalise_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in _axes(axis)))


def _wrap(indices, size, side):
    """Negative indices count from the end (as regridding's apply reads
    them); anything outside [-size, size) is an error, not wrapped away."""
    if indices.size and (indices.min() < -size or indices.max() >= size):
        raise IndexError(f"{side} indices span [{indices.min()}, {indices.max()}], "
                         f"outside the {size} values of an element")
    return np.where(indices < 0, indices + size, indices)


def dense(weights, axis_input=None, axis_output=None):
    """
    Each orthogonal element's weights as a dense matrix [input, output], the
    values of repeated pairs summed (in stored order) and negative indices
    wrapped as regridding's apply wraps them. Returns an array of shape
    shape_orthogonal + (cells_input, cells_output).

    `weights` is a spart Weights (its axes are known) or regridding's tuple
    (W, shape_input, shape_output), whose resampled axes are axis_input and
    axis_output (None: every axis).
    """
    if isinstance(weights, Weights):
        array, shape_input, shape_output = weights.to_regridding()
        axis_input, axis_output = weights.axis_input, weights.axis_output
    else:
        array, shape_input, shape_output = weights
        axis_input = _normalise_axes(axis_input, len(shape_input))
        axis_output = _normalise_axes(axis_output, len(shape_output))
    size_in = int(np.prod([shape_input[a] for a in axis_input], dtype=np.int64))
    size_out = int(np.prod([shape_output[a] for a in axis_output], dtype=np.int64))
    array = np.asarray(array, dtype=object)
    result = np.zeros(array.shape + (size_in, size_out), dtype=np.float64)
    flat_result = result.reshape(-1, size_in, size_out)
    flat = array.reshape(-1)
    for e in range(flat.size):
        ii, io, v = flat[e]
        ii = _wrap(np.asarray(ii, dtype=np.int64), size_in, "input")
        io = _wrap(np.asarray(io, dtype=np.int64), size_out, "output")
        np.add.at(flat_result[e], (ii, io), np.asarray(v, dtype=np.float64))
    return result
