"""
Any sparse matrix as a spart operator (include/spart/csr_matrix.h): CSR
arrays, from scipy.sparse or your own, copied or read where they lie, and
applied as y = alpha op(A) x + beta y in spart's fixed summation order (the
same bits for any thread count and batch width).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _core
from ._core import ffi, lib

_INDEX_TYPES = {np.dtype(np.int64): lib.SPART_INT64, np.dtype(np.int32): lib.SPART_INT32}
_VALUE_TYPES = {np.dtype(np.float64): lib.SPART_FLOAT64, np.dtype(np.float32): lib.SPART_FLOAT32}


def _typed(array, name, table, function):
    """A checked NumPy array of one of the dtypes of `table` (never copied)."""
    if not isinstance(array, np.ndarray):
        array = np.asarray(array)
    if array.dtype not in table:
        kinds = " or ".join(str(d) for d in table)
        raise _core.argument_error(function, f"{name}: a {array.dtype} array; spart reads "
                                   f"{kinds}", "type")
    if array.ndim != 1 or not array.flags.c_contiguous:
        raise _core.argument_error(function, f"{name}: shape {array.shape}, strides "
                                   f"{array.strides}; spart reads a dense 1-D array")
    return array


class CsrMatrix:
    """
    A sparse matrix from CSR arrays, applied by spart.

    Parameters
    ----------
    indptr : numpy.ndarray of int32 or int64
        ``rows + 1`` row pointers.
    indices : numpy.ndarray of int32 or int64
        Column indices; a row may list its columns in any order, and repeat
        them (its entries are summed as they lie).
    data : numpy.ndarray of float64 or float32
    shape : (int, int)
        (rows, columns).
    wrap : bool
        True: spart reads ``indices`` and ``data`` (and int64 ``indptr``)
        where they lie, no copy; this object keeps them alive, and they must
        not change while it is used. False (default): spart copies them.
    check : bool
        Check the arrays first (row pointers, columns in range); default True.

    Notes
    -----
    Each value of y is summed in one fixed order chosen from the matrix
    alone (spart/csr_matrix.h), so products repeat bit for bit; scipy's do
    not promise that order.
    """

    def __init__(self, indptr: npt.ArrayLike, indices: npt.ArrayLike, data: npt.ArrayLike,
                 shape: Tuple[int, int], wrap: bool = False, check: bool = True) -> None:
        function = "CsrMatrix"
        indptr = _typed(indptr, "indptr", _INDEX_TYPES, function)
        indices = _typed(indices, "indices", _INDEX_TYPES, function)
        data = _typed(data, "data", _VALUE_TYPES, function)
        rows, columns = (int(n) for n in shape)
        if indptr.size != rows + 1:
            raise _core.argument_error(function, f"indptr: {indptr.size} row pointers for "
                                       f"{rows} rows (need rows + 1)", "shape")
        if indices.size != data.size:
            raise _core.argument_error(function, f"indices: {indices.size} values, data: "
                                       f"{data.size}; they must be as many", "shape")
        arrays = ffi.new("spart_csr_arrays *")
        arrays.num_rows = rows
        arrays.num_columns = columns
        arrays.num_entries = data.size
        arrays.row_ptr = ffi.from_buffer(indptr)
        arrays.row_ptr_type = _INDEX_TYPES[indptr.dtype]
        arrays.columns = ffi.from_buffer(indices)
        arrays.column_type = _INDEX_TYPES[indices.dtype]
        arrays.values = ffi.from_buffer(data)
        arrays.value_type = _VALUE_TYPES[data.dtype]
        options = ffi.new("spart_csr_matrix_options *")
        lib.spart_csr_matrix_options_init(options)
        options.wrap = 1 if wrap else 0
        options.check = 1 if check else 0
        ctx = _core.context()
        out = ffi.new("spart_csr_matrix **")
        ctx.check(lib.spart_csr_matrix_create(ctx.pointer, arrays, options, out),
                  "spart_csr_matrix_create")
        self._pointer = _core.owned(out[0], lib.spart_csr_matrix_free, ctx)
        # a wrapped matrix reads these: they live as long as it does
        self._wrapped = (indptr, indices, data) if wrap else None
        self.shape = (rows, columns)
        self.nnz = int(data.size)
        self.dtype = data.dtype

    @classmethod
    def from_scipy(cls, matrix: Any, wrap: bool = False, check: bool = True) -> "CsrMatrix":
        """A CsrMatrix of a ``scipy.sparse`` matrix or array (converted to
        CSR first if it is not; ``wrap=True`` reads its arrays in place)."""
        if getattr(matrix, "format", None) != "csr":
            matrix = matrix.tocsr()
        return cls(matrix.indptr, matrix.indices, matrix.data, matrix.shape, wrap=wrap,
                   check=check)

    def __repr__(self):
        return (f"<spart.CsrMatrix {self.shape[0]} x {self.shape[1]}, {self.nnz} "
                f"{self.dtype} entries>")

    def csr(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The arrays spart reads (the caller's when wrapped), read-only
        views: int64 row pointers, int32 or int64 columns, the values."""
        row_ptr = ffi.new("const int64_t **")
        c32 = ffi.new("const int32_t **")
        c64 = ffi.new("const int64_t **")
        values = ffi.new("const void **")
        _core.context().check(lib.spart_csr_matrix_arrays(self._pointer, row_ptr, c32, c64,
                                                          values), "spart_csr_matrix_arrays")
        indices = (_core.view(self, c32[0], self.nnz, "<i4") if c32[0] != ffi.NULL
                   else _core.view(self, c64[0], self.nnz, "<i8"))
        return (_core.view(self, row_ptr[0], self.shape[0] + 1, "<i8"), indices,
                _core.view(self, values[0], self.nnz, self.dtype.str))

    def __call__(self, x: np.ndarray, out: Optional[np.ndarray] = None, alpha: float = 1.0,
                 beta: float = 0.0, transpose: bool = False) -> np.ndarray:
        """
        y = alpha op(A) x + beta y, op(A) = A or (``transpose``) its exact
        transpose (built on first use and kept).

        Parameters
        ----------
        x : numpy.ndarray
            float64 or float32, C-contiguous, shape ``(n,)`` or ``(k, n)``
            (k vectors), n the columns of op(A).
        out : numpy.ndarray, optional
            y, of x's dtype and shape ``(m,)`` or ``(k, m)``; needed for
            ``beta != 0`` (it is read then). None: a new array.
        """
        function = "CsrMatrix.__call__"
        if not isinstance(x, np.ndarray):
            x = np.asarray(x, dtype=np.float64)
        if x.dtype not in _VALUE_TYPES:
            raise _core.argument_error(function, f"x: a {x.dtype} array; spart reads float64 "
                                       "or float32 vectors", "type")
        if not x.flags.c_contiguous:
            raise _core.argument_error(function, f"x: an array that is not C-contiguous "
                                       f"(strides {x.strides})")
        rows, columns = self.shape[::-1] if transpose else self.shape
        if x.ndim not in (1, 2) or x.shape[-1] != columns:
            raise _core.argument_error(function, f"x: shape {x.shape}; op(A) takes ({columns},) "
                                       f"or (k, {columns})", "shape")
        shape_y = x.shape[:-1] + (rows,)
        if out is None:
            if beta != 0:
                raise _core.argument_error(function, "out: None with beta != 0; give the y "
                                           "that beta scales")
            y = np.empty(shape_y, dtype=x.dtype)
        else:
            if not isinstance(out, np.ndarray) or out.dtype != x.dtype:
                raise _core.argument_error(function, f"out: must be a {x.dtype} NumPy array "
                                           "(x's dtype)", "type")
            if out.shape != shape_y or not out.flags.c_contiguous or not out.flags.writeable:
                raise _core.argument_error(function, f"out: shape {out.shape}; the result is "
                                           f"{shape_y}, C-contiguous and writeable", "shape")
            y = out
        product = ffi.new("spart_csr_product *")
        lib.spart_csr_product_init(product)
        product.operation = (lib.SPART_OPERATION_TRANSPOSE if transpose
                             else lib.SPART_OPERATION_NONE)
        product.num_vectors = 1 if x.ndim == 1 else x.shape[0]
        product.alpha = float(alpha)
        product.beta = float(beta)
        product.vector_type = _VALUE_TYPES[x.dtype]
        ctx = _core.context()
        ctx.check(lib.spart_csr_matrix_multiply(ctx.pointer, self._pointer, product,
                                                ffi.from_buffer(x),
                                                ffi.from_buffer(y, require_writable=True)),
                  "spart_csr_matrix_multiply")
        return y

    @property
    def T(self) -> "_Transposed":
        """The exact transpose, as an operator: ``A.T(x)`` is ``A(x, transpose=True)``."""
        return _Transposed(self)


class _Transposed:
    """A CsrMatrix's transpose as an operator (shares the matrix)."""

    def __init__(self, matrix: CsrMatrix) -> None:
        self.matrix = matrix
        self.shape = matrix.shape[::-1]

    def __call__(self, x: np.ndarray, out: Optional[np.ndarray] = None, alpha: float = 1.0,
                 beta: float = 0.0) -> np.ndarray:
        return self.matrix(x, out=out, alpha=alpha, beta=beta, transpose=True)

    @property
    def T(self) -> CsrMatrix:
        return self.matrix
