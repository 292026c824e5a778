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


# The instrument, MART and scenes live in spart_ctypes_solvers.py (imported
# last, since it builds on the names above); its names are this module's too.
from spart_ctypes_solvers import *  # noqa: E402,F401,F403
from spart_ctypes_solvers import _declare_solvers  # noqa: E402,F401
