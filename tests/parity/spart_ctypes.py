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

and the Regridder (include/spart/regridder.h), made from weights built here
or from regridding's own tuple (W, shape_input, shape_output):

    w = spart.weights_from_arrays(package_weights, axis_input, axis_output)
    r = spart.regridder(w, shape_input=..., value_type="float32")
    y = r(x)             # x: leading axes + r.shape_input
    r.transpose()        # the exact transpose, owned by r
    r.csr()              # (row_ptr, columns, values) as NumPy copies

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


VALUE_TYPES = {"float64": 0, "float32": 1}


class spart_regridder_options(ctypes.Structure):
    # mirrors include/spart/regridder.h field for field (value_type: an int enum)
    _fields_ = [
        ("has_shape_input", ctypes.c_int),
        ("shape_input", spart_shape),
        ("has_shape_output", ctypes.c_int),
        ("shape_output", spart_shape),
        ("num_axis_input", ctypes.c_int),
        ("axis_input", ctypes.c_int * SPART_MAX_NDIM),
        ("num_axis_output", ctypes.c_int),
        ("axis_output", ctypes.c_int * SPART_MAX_NDIM),
        ("value_type", ctypes.c_int),
        ("drop_zeros", ctypes.c_int),
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
    table.update(_regridder_signatures())
    for name, (restype, argtypes) in table.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def _regridder_signatures():
    """The C signatures of include/spart/regridder.h and of
    spart_weights_create_from_arrays."""
    status = ctypes.c_int
    ctx = ctypes.c_void_p
    weights = ctypes.c_void_p
    regridder = ctypes.c_void_p
    c_int32_p = P(ctypes.c_int32)
    return {
        "spart_weights_create_from_arrays": (
            status,
            [ctx, P(spart_shape), P(spart_shape), P(spart_shape), ctypes.c_int, P(ctypes.c_int),
             ctypes.c_int, P(ctypes.c_int), c_int64_p, c_int64_p, c_int64_p, c_double_p,
             P(weights)],
        ),
        "spart_regridder_options_init": (None, [P(spart_regridder_options)]),
        "spart_regridder_create": (
            status, [ctx, weights, P(spart_regridder_options), P(regridder)]
        ),
        "spart_regridder_free": (None, [regridder]),
        "spart_regridder_shape_input": (spart_shape, [regridder]),
        "spart_regridder_shape_output": (spart_shape, [regridder]),
        "spart_regridder_num_rows": (ctypes.c_int64, [regridder]),
        "spart_regridder_num_columns": (ctypes.c_int64, [regridder]),
        "spart_regridder_num_entries": (ctypes.c_int64, [regridder]),
        "spart_regridder_value_type": (ctypes.c_int, [regridder]),
        "spart_regridder_group_size": (ctypes.c_int, [regridder]),
        "spart_regridder_csr": (
            status, [regridder, P(c_int64_p), P(c_int32_p), P(c_int64_p), P(ctypes.c_void_p)]
        ),
        "spart_regridder_apply_shape": (
            status, [ctx, regridder, P(spart_shape), P(spart_shape)]
        ),
        "spart_regridder_workspace_size": (
            status, [ctx, regridder, P(spart_shape), P(ctypes.c_size_t)]
        ),
        "spart_regridder_apply": (
            status, [ctx, regridder, P(spart_array), c_double_p, ctypes.c_int64]
        ),
        "spart_regridder_apply_workspace": (
            status,
            [ctx, regridder, P(spart_array), c_double_p, ctypes.c_int64, ctypes.c_void_p,
             ctypes.c_size_t],
        ),
        "spart_regridder_transpose": (status, [ctx, regridder, P(regridder)]),
        "spart_regridder_transpose_conservative": (
            status,
            [ctx, regridder, ctypes.c_int, P(spart_array), P(spart_array),
             P(spart_weights_options), P(regridder)],
        ),
        "spart_regridder_save": (status, [ctx, regridder, ctypes.c_char_p, ctypes.c_int]),
        "spart_regridder_load": (status, [ctx, ctypes.c_char_p, P(regridder)]),
    }


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


class Regridder:
    """
    A spart regridder. One made by Spart.regridder() or Spart.load_regridder()
    is freed with this object; a transpose is owned by the regridder it came
    from (spart frees it with that one), so it keeps its owner alive and
    never frees itself.
    """

    def __init__(self, spart, handle, owner=None):
        self.spart = spart
        self.handle = handle
        self.owner = owner
        self._transposed = None
        self._conservative = None
        lib = spart.lib
        self.shape_input = shape_tuple(lib.spart_regridder_shape_input(handle))
        self.shape_output = shape_tuple(lib.spart_regridder_shape_output(handle))
        self.num_rows = int(lib.spart_regridder_num_rows(handle))
        self.num_columns = int(lib.spart_regridder_num_columns(handle))
        self.num_entries = int(lib.spart_regridder_num_entries(handle))
        self.value_type = "float32" if lib.spart_regridder_value_type(handle) == 1 else "float64"
        self.group_size = int(lib.spart_regridder_group_size(handle))

    def __del__(self):
        if getattr(self, "handle", None) and self.owner is None:
            self.spart.lib.spart_regridder_free(self.handle)
            self.handle = None

    def _live(self):
        if not self.handle:
            raise RuntimeError("this conservative transpose was replaced by a later call")
        return self.handle

    def apply_shape(self, shape_x):
        shape = make_shape(shape_x)
        result = spart_shape()
        self.spart._check("spart_regridder_apply_shape",
                          self.spart.lib.spart_regridder_apply_shape(
                              self.spart.context, self._live(), ctypes.byref(shape),
                              ctypes.byref(result)))
        return shape_tuple(result)

    def workspace_size(self, shape_x):
        shape = make_shape(shape_x)
        size = ctypes.c_size_t()
        self.spart._check("spart_regridder_workspace_size",
                          self.spart.lib.spart_regridder_workspace_size(
                              self.spart.context, self._live(), ctypes.byref(shape),
                              ctypes.byref(size)))
        return int(size.value)

    def __call__(self, x, workspace=False):
        """y = A x for x of shape leading axes + shape_input (copied to
        float64, C order). workspace=True goes through
        spart_regridder_apply_workspace with a NumPy buffer of the queried size."""
        keep = _Arrays()
        values = keep.array(x)
        y = np.empty(self.apply_shape(np.shape(x)), dtype=np.float64)
        pointer = y.ctypes.data_as(c_double_p)
        if not workspace:
            self.spart._check("spart_regridder_apply",
                              self.spart.lib.spart_regridder_apply(
                                  self.spart.context, self._live(), ctypes.byref(values), pointer,
                                  y.size))
            return y
        size = self.workspace_size(np.shape(x))
        scratch = np.empty(max(1, (size + 7) // 8), dtype=np.float64)
        self.spart._check("spart_regridder_apply_workspace",
                          self.spart.lib.spart_regridder_apply_workspace(
                              self.spart.context, self._live(), ctypes.byref(values), pointer,
                              y.size, scratch.ctypes.data_as(ctypes.c_void_p), size))
        return y

    def csr(self):
        """(row_ptr int64, columns int32 or int64, values float64 or float32), copies."""
        row_ptr, c32, c64 = c_int64_p(), P(ctypes.c_int32)(), c_int64_p()
        values = ctypes.c_void_p()
        self.spart._check("spart_regridder_csr",
                          self.spart.lib.spart_regridder_csr(
                              self._live(), ctypes.byref(row_ptr), ctypes.byref(c32),
                              ctypes.byref(c64), ctypes.byref(values)))
        n, rows = self.num_entries, self.num_rows

        def copy(pointer, count, ctype, dtype):
            if count == 0:
                return np.zeros(0, dtype=dtype)
            if not pointer:
                raise RuntimeError("spart_regridder_csr gave NULL for a non-empty array")
            typed = ctypes.cast(pointer, P(ctype))
            return np.ctypeslib.as_array(typed, shape=(count,)).astype(dtype, copy=True)

        columns = (copy(c32, n, ctypes.c_int32, np.int32) if c32
                   else copy(c64, n, ctypes.c_int64, np.int64))
        if self.value_type == "float32":
            data = copy(values.value, n, ctypes.c_float, np.float32)
        else:
            data = copy(values.value, n, ctypes.c_double, np.float64)
        return copy(row_ptr, rows + 1, ctypes.c_int64, np.int64), columns, data

    def matrix(self):
        """The matrix as a dense float64 array [rows, columns] (small operators only)."""
        row_ptr, columns, values = self.csr()
        result = np.zeros((self.num_rows, self.num_columns))
        rows = np.repeat(np.arange(self.num_rows), np.diff(row_ptr))
        np.add.at(result, (rows, columns), values.astype(np.float64))
        return result

    def transpose(self):
        """The exact transpose (owned by this regridder; its transpose is this one)."""
        handle = ctypes.c_void_p()
        self.spart._check("spart_regridder_transpose",
                          self.spart.lib.spart_regridder_transpose(
                              self.spart.context, self._live(), ctypes.byref(handle)))
        if self.owner is not None and handle.value == self.owner.handle.value:
            return self.owner
        if self._transposed is None:
            self._transposed = Regridder(self.spart, handle, owner=self)
        return self._transposed

    def transpose_conservative(self, coordinates_input, coordinates_output, axis_input=None,
                               axis_output=None, weights_input=None):
        """The conservative transpose, for the grids and options the weights
        were built with (owned by this regridder; a later call replaces it)."""
        keep = _Arrays()
        n_in, block_in = keep.arrays(coordinates_input)
        n_out, block_out = keep.arrays(coordinates_output)
        options = self.spart._options(keep, axis_input, axis_output, weights_input,
                                      method="conservative")
        handle = ctypes.c_void_p()
        self.spart._check("spart_regridder_transpose_conservative",
                          self.spart.lib.spart_regridder_transpose_conservative(
                              self.spart.context, self._live(), n_in, block_in, block_out,
                              ctypes.byref(options), ctypes.byref(handle)))
        if self._conservative is not None:
            self._conservative.handle = None  # spart freed it
        self._conservative = Regridder(self.spart, handle, owner=self)
        return self._conservative

    def save(self, path, overwrite=False):
        self.spart._check("spart_regridder_save",
                          self.spart.lib.spart_regridder_save(
                              self.spart.context, self._live(), os.fsencode(path),
                              1 if overwrite else 0))


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

    def weights_from_arrays(self, weights, axis_input=None, axis_output=None):
        """
        spart weights from regridding's tuple (W, shape_input, shape_output)
        through spart_weights_create_from_arrays: W's shape is the orthogonal
        shape, its elements' arrays are concatenated in C order (indices cast
        to int64, values to float64), axis_input / axis_output are the
        resampled axes the package was given (None: every axis).
        """
        array, shape_input, shape_output = weights
        array = np.asarray(array, dtype=object)
        flat = array.reshape(-1)
        counts = [len(flat[e][2]) for e in range(flat.size)]
        offsets = np.zeros(flat.size + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(counts, dtype=np.int64)

        def joined(k, dtype):
            if flat.size == 0:
                return np.zeros(1, dtype=dtype)
            parts = [np.asarray(flat[e][k]).astype(dtype).reshape(-1) for e in range(flat.size)]
            return np.ascontiguousarray(np.concatenate(parts + [np.zeros(1, dtype=dtype)]))

        ii, io, v = joined(0, np.int64), joined(1, np.int64), joined(2, np.float64)
        n_in, a_in = _int_array(_axes(axis_input))
        n_out, a_out = _int_array(_axes(axis_output))
        orthogonal, s_in, s_out = make_shape(array.shape), make_shape(shape_input), make_shape(
            shape_output)
        handle = ctypes.c_void_p()
        self._check("spart_weights_create_from_arrays",
                    self.lib.spart_weights_create_from_arrays(
                        self.context, ctypes.byref(orthogonal), ctypes.byref(s_in),
                        ctypes.byref(s_out), n_in, a_in, n_out, a_out,
                        offsets.ctypes.data_as(c_int64_p), ii.ctypes.data_as(c_int64_p),
                        io.ctypes.data_as(c_int64_p), v.ctypes.data_as(c_double_p),
                        ctypes.byref(handle)))
        return Weights(self, handle)

    def regridder(self, weights, shape_input=None, shape_output=None, axis_input=None,
                  axis_output=None, value_type="float64", drop_zeros=False):
        """
        A Regridder from Weights (spart_regridder_create). shape_input /
        shape_output None: the weights' shapes broadcast as regrid_from_weights
        lays out values; axis_* None: the weights' resampled axes counted
        from the end.
        """
        options = spart_regridder_options()
        self.lib.spart_regridder_options_init(ctypes.byref(options))
        if shape_input is not None:
            options.has_shape_input = 1
            options.shape_input = make_shape(shape_input)
        if shape_output is not None:
            options.has_shape_output = 1
            options.shape_output = make_shape(shape_output)
        options.num_axis_input, block = _int_array(_axes(axis_input))
        options.axis_input[:] = block[:]
        options.num_axis_output, block = _int_array(_axes(axis_output))
        options.axis_output[:] = block[:]
        options.value_type = VALUE_TYPES.get(value_type, value_type)
        options.drop_zeros = 1 if drop_zeros else 0
        handle = ctypes.c_void_p()
        self._check("spart_regridder_create",
                    self.lib.spart_regridder_create(self.context, weights.handle,
                                                    ctypes.byref(options), ctypes.byref(handle)))
        return Regridder(self, handle)

    def load_regridder(self, path):
        handle = ctypes.c_void_p()
        self._check("spart_regridder_load",
                    self.lib.spart_regridder_load(self.context, os.fsencode(path),
                                                  ctypes.byref(handle)))
        return Regridder(self, handle)

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


# ---- the ideal instrument, MART and the synthetic scene ---------------------------------
# (include/spart/instrument.h, mart.h, scene.h), added for test_mart_parity.py and
# bench_mart.py. Declared on first use, so libraries without these symbols still load.


class spart_instrument_params(ctypes.Structure):
    # mirrors include/spart/instrument.h field for field (value_type: an int enum)
    _fields_ = [
        ("num_channel", ctypes.c_int64),
        ("angle", c_double_p),
        ("dispersion", ctypes.c_double),
        ("plate_scale", ctypes.c_double),
        ("wavelength_ref", ctypes.c_double),
        ("position_ref", ctypes.c_double * 2),
        ("area_effective", ctypes.c_double),
        ("exposure_time", ctypes.c_double),
        ("quantum_yield", ctypes.c_double),
        ("read_noise", ctypes.c_double),
        ("num_wavelength", ctypes.c_int64),
        ("wavelength", c_double_p),
        ("num_scene_x", ctypes.c_int64),
        ("scene_x", c_double_p),
        ("num_scene_y", ctypes.c_int64),
        ("scene_y", c_double_p),
        ("num_sensor_x", ctypes.c_int64),
        ("sensor_x", c_double_p),
        ("num_sensor_y", ctypes.c_int64),
        ("sensor_y", c_double_p),
        ("solid_angle_steradian", ctypes.c_int),
        ("value_type", ctypes.c_int),
        ("keep_weights", ctypes.c_int),
        ("psf", c_double_p),
        ("psf_size", ctypes.c_int64 * 2),
        ("psf_mode", ctypes.c_int),
    ]


class spart_mart_regridder_pair(ctypes.Structure):
    _fields_ = [
        ("forward", ctypes.c_void_p),
        ("backward", ctypes.c_void_p),
        ("num_channel", ctypes.c_int64),
        ("gain", ctypes.c_double),
        ("read_noise", ctypes.c_double),
    ]


class spart_mart_operators(ctypes.Structure):
    # the two callbacks are only passed through from C to C here
    _fields_ = [
        ("num_channel", ctypes.c_int64),
        ("scene_size", ctypes.c_int64),
        ("image_size", ctypes.c_int64),
        ("forward", ctypes.c_void_p),
        ("backward", ctypes.c_void_p),
        ("user", ctypes.c_void_p),
        ("on_device", ctypes.c_int),
        ("capturable", ctypes.c_int),
    ]


class spart_mart_progress(ctypes.Structure):
    _fields_ = [
        ("iteration", ctypes.c_int64),
        ("num_channel", ctypes.c_int64),
        ("mean_chi_squared", c_double_p),
        ("correlation", c_double_p),
        ("merit", ctypes.c_double),
        ("elapsed_seconds", ctypes.c_double),
    ]


MART_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, P(spart_mart_progress))

MART_STOP_RULES = {"threshold": 0, "target": 1, "count": 2}
PSF_MODES = {"auto": 0, "fft": 1, "folded": 2}


class spart_mart_options(ctypes.Structure):
    _fields_ = [
        ("gamma", ctypes.c_double),
        ("stop_rule", ctypes.c_int),
        ("threshold", ctypes.c_double),
        ("target", ctypes.c_double),
        ("max_iterations", ctypes.c_int64),
        ("keep_intermediate", ctypes.c_int),
        ("guess", c_double_p),
        ("callback", MART_CALLBACK),
        ("callback_user", ctypes.c_void_p),
    ]


class spart_scene_gaussians_options(ctypes.Structure):
    _fields_ = [
        ("width_velocity", ctypes.c_double),
        ("width_x", ctypes.c_double),
        ("width_y", ctypes.c_double),
    ]


def _declare_solvers(lib):
    """The C signatures of spart/instrument.h, spart/mart.h and spart/scene.h
    (once per library)."""
    if getattr(lib, "_spart_solvers_declared", False):
        return
    status = ctypes.c_int
    ctx = ctypes.c_void_p
    handle = ctypes.c_void_p
    table = {
        "spart_instrument_params_init": (None, [P(spart_instrument_params)]),
        "spart_instrument_create": (status, [ctx, P(spart_instrument_params), P(handle)]),
        "spart_instrument_free": (None, [handle]),
        "spart_instrument_num_channel": (ctypes.c_int64, [handle]),
        "spart_instrument_scene_size": (ctypes.c_int64, [handle]),
        "spart_instrument_image_size": (ctypes.c_int64, [handle]),
        "spart_instrument_forward": (handle, [handle]),
        "spart_instrument_backward": (handle, [handle]),
        "spart_instrument_photons_per_radiance": (c_double_p, [handle]),
        "spart_instrument_image": (status, [ctx, handle, c_double_p, c_double_p, c_double_p]),
        "spart_instrument_backproject": (status, [ctx, handle, c_double_p, c_double_p]),
        "spart_instrument_observe": (
            status, [ctx, handle, c_double_p, ctypes.c_uint64, c_double_p, c_double_p]
        ),
        "spart_instrument_mart_operators": (
            status, [ctx, handle, P(spart_mart_regridder_pair), P(spart_mart_operators)]
        ),
        "spart_mart_options_init": (None, [P(spart_mart_options)]),
        "spart_mart_solve": (
            status,
            [ctx, P(spart_mart_operators), c_double_p, P(spart_mart_options), P(handle)],
        ),
        "spart_mart_result_free": (None, [handle]),
        "spart_mart_result_num_iterations": (ctypes.c_int64, [handle]),
        "spart_mart_result_success": (ctypes.c_int, [handle]),
        "spart_mart_result_message": (ctypes.c_char_p, [handle]),
        "spart_mart_result_gamma": (ctypes.c_double, [handle]),
        "spart_mart_result_num_channel": (ctypes.c_int64, [handle]),
        "spart_mart_result_scene_size": (ctypes.c_int64, [handle]),
        "spart_mart_result_solution": (c_double_p, [handle]),
        "spart_mart_result_num_solutions": (ctypes.c_int64, [handle]),
        "spart_mart_result_solutions": (c_double_p, [handle, ctypes.c_int64]),
        "spart_mart_result_mean_chi_squared": (c_double_p, [handle]),
        "spart_mart_result_correlation": (c_double_p, [handle]),
        "spart_scene_gaussians_options_init": (None, [P(spart_scene_gaussians_options)]),
        "spart_wavelength_from_velocity": (
            status, [ctx, ctypes.c_double, ctypes.c_int64, c_double_p, c_double_p]
        ),
        "spart_scene_gaussians": (
            status,
            [ctx, ctypes.c_double, ctypes.c_int64, c_double_p, ctypes.c_int64, c_double_p,
             ctypes.c_int64, c_double_p, P(spart_scene_gaussians_options), c_double_p,
             c_double_p],
        ),
    }
    for name, (restype, argtypes) in table.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    lib._spart_solvers_declared = True


def _double_pointer(array):
    return array.ctypes.data_as(c_double_p)


def _copy_doubles(pointer, count):
    if count == 0:
        return np.zeros(0)
    if not pointer:
        raise RuntimeError("spart returned NULL for a non-empty array")
    return np.ctypeslib.as_array(pointer, shape=(count,)).copy()


class Instrument:
    """
    A spart_instrument (include/spart/instrument.h) made in `spart`'s
    context from plain arrays in spart's units:

        inst = Instrument(spart, angle=..., dispersion=..., plate_scale=...,
                          wavelength_ref=..., position_ref=(x, y),
                          area_effective=..., exposure_time=..., wavelength=edges,
                          scene_x=..., scene_y=..., sensor_x=..., sensor_y=...,
                          quantum_yield=1, read_noise=0, solid_angle_steradian=False,
                          value_type="float64", psf=None, psf_mode="auto")
        images, widths = inst.image(scene)          # scene: (L, Nx, Ny)
        scenes = inst.backproject(images)           # images: (C, Mx, My)
        result = inst.mart(observed, gamma=..., threshold=..., max_iterations=...)

    psf: one kernel per channel, (C, kx, ky) along sensor x then y, centre
    at floor(n / 2) (include/spart/instrument.h); psf_mode "auto", "fft" or
    "folded".
    """

    def __init__(self, spart, angle, dispersion, plate_scale, wavelength_ref, position_ref,
                 area_effective, exposure_time, wavelength, scene_x, scene_y, sensor_x,
                 sensor_y, quantum_yield=1.0, read_noise=0.0, solid_angle_steradian=False,
                 value_type="float64", psf=None, psf_mode="auto"):
        _declare_solvers(spart.lib)
        self.spart = spart
        lib = spart.lib
        arrays = [np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
                  for a in (angle, wavelength, scene_x, scene_y, sensor_x, sensor_y)]
        self._arrays = arrays  # read by spart_instrument_create only; kept for clarity
        angle, wavelength, scene_x, scene_y, sensor_x, sensor_y = arrays
        params = spart_instrument_params()
        lib.spart_instrument_params_init(ctypes.byref(params))
        params.num_channel = angle.size
        params.angle = _double_pointer(angle)
        params.dispersion = float(dispersion)
        params.plate_scale = float(plate_scale)
        params.wavelength_ref = float(wavelength_ref)
        params.position_ref[0] = float(position_ref[0])
        params.position_ref[1] = float(position_ref[1])
        params.area_effective = float(area_effective)
        params.exposure_time = float(exposure_time)
        params.quantum_yield = float(quantum_yield)
        params.read_noise = float(read_noise)
        params.num_wavelength = wavelength.size - 1
        params.wavelength = _double_pointer(wavelength)
        params.num_scene_x = scene_x.size - 1
        params.scene_x = _double_pointer(scene_x)
        params.num_scene_y = scene_y.size - 1
        params.scene_y = _double_pointer(scene_y)
        params.num_sensor_x = sensor_x.size - 1
        params.sensor_x = _double_pointer(sensor_x)
        params.num_sensor_y = sensor_y.size - 1
        params.sensor_y = _double_pointer(sensor_y)
        params.solid_angle_steradian = 1 if solid_angle_steradian else 0
        params.value_type = VALUE_TYPES.get(value_type, value_type)
        if psf is not None:
            psf = np.ascontiguousarray(psf, dtype=np.float64)
            if psf.ndim != 3 or psf.shape[0] != angle.size:
                raise ValueError(f"psf of shape {psf.shape}, the instrument takes "
                                 f"({angle.size}, kx, ky)")
            self._arrays.append(psf)
            params.psf = _double_pointer(psf)
            params.psf_size[0] = psf.shape[1]
            params.psf_size[1] = psf.shape[2]
            params.psf_mode = PSF_MODES.get(psf_mode, psf_mode)
        handle = ctypes.c_void_p()
        spart._check("spart_instrument_create",
                     lib.spart_instrument_create(spart.context, ctypes.byref(params),
                                                 ctypes.byref(handle)))
        self.handle = handle
        self.num_channel = int(lib.spart_instrument_num_channel(handle))
        self.scene_shape = (wavelength.size - 1, scene_x.size - 1, scene_y.size - 1)
        self.image_shape = (self.num_channel, sensor_x.size - 1, sensor_y.size - 1)
        self.scene_size = int(lib.spart_instrument_scene_size(handle))
        self.image_size = int(lib.spart_instrument_image_size(handle))

    def __del__(self):
        if getattr(self, "handle", None):
            self.spart.lib.spart_instrument_free(self.handle)
            self.handle = None

    def forward(self):
        """The forward Regridder (owned by the instrument; keeps it alive)."""
        handle = ctypes.c_void_p(self.spart.lib.spart_instrument_forward(self.handle))
        return Regridder(self.spart, handle, owner=self)

    def backward(self):
        handle = ctypes.c_void_p(self.spart.lib.spart_instrument_backward(self.handle))
        return Regridder(self.spart, handle, owner=self)

    def photons_per_radiance(self):
        return _copy_doubles(self.spart.lib.spart_instrument_photons_per_radiance(self.handle),
                             self.scene_size).reshape(self.scene_shape)

    def image(self, scene):
        """(images, widths) of a scene, each (C, Mx, My) electrons."""
        scene = np.ascontiguousarray(scene, dtype=np.float64)
        if scene.size != self.scene_size:
            raise ValueError(f"scene of {scene.size} values, the instrument takes "
                             f"{self.scene_size}")
        images = np.empty(self.image_shape)
        widths = np.empty(self.image_shape)
        self.spart._check("spart_instrument_image",
                          self.spart.lib.spart_instrument_image(
                              self.spart.context, self.handle, _double_pointer(scene),
                              _double_pointer(images), _double_pointer(widths)))
        return images, widths

    def backproject(self, images):
        """One scene per channel, (C, L, Nx, Ny)."""
        images = np.ascontiguousarray(images, dtype=np.float64)
        if images.size != self.num_channel * self.image_size:
            raise ValueError(f"images of {images.size} values, the instrument gives "
                             f"{self.num_channel * self.image_size}")
        scenes = np.empty((self.num_channel,) + self.scene_shape)
        self.spart._check("spart_instrument_backproject",
                          self.spart.lib.spart_instrument_backproject(
                              self.spart.context, self.handle, _double_pointer(images),
                              _double_pointer(scenes)))
        return scenes

    def observe(self, scene, seed):
        scene = np.ascontiguousarray(scene, dtype=np.float64)
        images = np.empty(self.image_shape)
        widths = np.empty(self.image_shape)
        self.spart._check("spart_instrument_observe",
                          self.spart.lib.spart_instrument_observe(
                              self.spart.context, self.handle, _double_pointer(scene),
                              int(seed), _double_pointer(images), _double_pointer(widths)))
        return images, widths

    def mart_operators(self):
        """(operators, pair): the MART operators of this instrument and the
        storage they point into (keep both, and the instrument, alive)."""
        pair = spart_mart_regridder_pair()
        operators = spart_mart_operators()
        self.spart._check("spart_instrument_mart_operators",
                          self.spart.lib.spart_instrument_mart_operators(
                              self.spart.context, self.handle, ctypes.byref(pair),
                              ctypes.byref(operators)))
        return operators, pair

    def mart(self, observed, **options):
        """spart_mart_solve on this instrument's operators; see mart_solve."""
        operators, pair = self.mart_operators()
        return mart_solve(self.spart, operators, observed, keep=(pair, self), **options)


class MartResult:
    """A spart_mart_result copied into NumPy arrays (the C result is freed)."""

    def __init__(self, lib, handle, scene_shape):
        self.num_iteration = int(lib.spart_mart_result_num_iterations(handle))
        self.success = bool(lib.spart_mart_result_success(handle))
        self.message = lib.spart_mart_result_message(handle).decode()
        self.gamma = float(lib.spart_mart_result_gamma(handle))
        self.num_channel = int(lib.spart_mart_result_num_channel(handle))
        scene_size = int(lib.spart_mart_result_scene_size(handle))
        shape = tuple(scene_shape) if scene_shape is not None else (scene_size,)
        n, c = self.num_iteration, self.num_channel
        self.mean_chi_squared = _copy_doubles(
            lib.spart_mart_result_mean_chi_squared(handle), n * c).reshape(n, c)
        self.correlation_residual = _copy_doubles(
            lib.spart_mart_result_correlation(handle), n * c).reshape(n, c)
        self.solution = _copy_doubles(lib.spart_mart_result_solution(handle),
                                      scene_size).reshape(shape)
        count = int(lib.spart_mart_result_num_solutions(handle))
        self.solutions = np.stack([
            _copy_doubles(lib.spart_mart_result_solutions(handle, k), scene_size).reshape(shape)
            for k in range(count)])
        self.progress = []  # (iteration, merit, elapsed_seconds) when a callback recorded them


def mart_solve(spart, operators, observed, gamma=None, threshold=1e-3, target=None,
               max_iterations=100, stop_rule="threshold", keep_intermediate=False, guess=None,
               record_progress=False, scene_shape=None, keep=()):
    """
    spart_mart_solve with ctis's names and defaults (gamma None: 2 / C).
    record_progress=True passes a callback that records (iteration, merit,
    elapsed seconds) per iteration into result.progress. Returns a
    MartResult.
    """
    _declare_solvers(spart.lib)
    lib = spart.lib
    observed = np.ascontiguousarray(observed, dtype=np.float64)
    options = spart_mart_options()
    lib.spart_mart_options_init(ctypes.byref(options))
    if gamma is not None:
        options.gamma = float(gamma)
    options.stop_rule = MART_STOP_RULES[stop_rule]
    options.threshold = float(threshold)
    if target is not None:
        options.target = float(target)
    options.max_iterations = int(max_iterations)
    options.keep_intermediate = 1 if keep_intermediate else 0
    if guess is not None:
        guess = np.ascontiguousarray(guess, dtype=np.float64)
        options.guess = _double_pointer(guess)
    progress = []
    if record_progress:
        def on_progress(user, report):
            r = report.contents
            progress.append((int(r.iteration), float(r.merit), float(r.elapsed_seconds)))
            return 0

        callback = MART_CALLBACK(on_progress)
        options.callback = callback
    handle = ctypes.c_void_p()
    spart._check("spart_mart_solve",
                 lib.spart_mart_solve(spart.context, ctypes.byref(operators),
                                      _double_pointer(observed), ctypes.byref(options),
                                      ctypes.byref(handle)))
    try:
        result = MartResult(lib, handle, scene_shape)
    finally:
        lib.spart_mart_result_free(handle)
    result.progress = progress
    return result


def scene_gaussians(spart, wavelength_rest, velocity, x, y, width_velocity=None, width_x=None,
                    width_y=None):
    """spart_scene_gaussians: (scene (L, Nx, Ny) per steradian, wavelength edges)."""
    _declare_solvers(spart.lib)
    lib = spart.lib
    velocity, x, y = (np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
                      for a in (velocity, x, y))
    options = spart_scene_gaussians_options()
    lib.spart_scene_gaussians_options_init(ctypes.byref(options))
    for name, value in (("width_velocity", width_velocity), ("width_x", width_x),
                        ("width_y", width_y)):
        if value is not None:
            setattr(options, name, float(value))
    scene = np.empty((velocity.size - 1, x.size - 1, y.size - 1))
    wavelength = np.empty(velocity.size)
    spart._check("spart_scene_gaussians",
                 lib.spart_scene_gaussians(spart.context, float(wavelength_rest),
                                           velocity.size - 1, _double_pointer(velocity),
                                           x.size - 1, _double_pointer(x), y.size - 1,
                                           _double_pointer(y), ctypes.byref(options),
                                           _double_pointer(wavelength), _double_pointer(scene)))
    return scene, wavelength


def convolve_weights(spart, weights, kernel):
    """spart_weights_convolve (as regridding.convolve_weights): a new Weights."""
    lib = spart.lib
    function = lib.spart_weights_convolve
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, P(spart_array),
                         P(ctypes.c_void_p)]
    keep = _Arrays()
    block = keep.array(kernel)
    handle = ctypes.c_void_p()
    spart._check("spart_weights_convolve",
                 function(spart.context, weights.handle, ctypes.byref(block),
                          ctypes.byref(handle)))
    return Weights(spart, handle)


def psf_gaussian(spart, sigma_major, sigma_minor, angle, size):
    """spart_psf_gaussian: the normalised elliptical Gaussian, size (n0, n1)."""
    function = spart.lib.spart_psf_gaussian
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_double,
                         P(ctypes.c_int64), c_double_p, ctypes.c_int64]
    dims = (ctypes.c_int64 * 2)(int(size[0]), int(size[1]))
    kernel = np.empty((int(size[0]), int(size[1])))
    spart._check("spart_psf_gaussian",
                 function(spart.context, float(sigma_major), float(sigma_minor), float(angle),
                          dims, _double_pointer(kernel), kernel.size))
    return kernel
