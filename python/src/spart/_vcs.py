"""
Value-compressed sparse (VCS) count matrices and their normalized views
(include/spart/vcs.h): a cells x genes count matrix stored once, its
normalization (CP10K + log1p, Scanpy, Pearson residuals, ...) never
expanded, multiplied by dense matrices on the host or a GPU.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays, _core
from ._core import ffi, lib

_RECIPES = {"raw": lib.SPART_VCS_RAW, "cp10k_log1p": lib.SPART_VCS_CP10K_LOG1P,
            "parafac2": lib.SPART_VCS_PARAFAC2, "scanpy": lib.SPART_VCS_SCANPY,
            "pearson": lib.SPART_VCS_PEARSON}
_FORMATS = {"vcsr": lib.SPART_VCS_VCSR, "vcsc": lib.SPART_VCS_VCSC}
_VALUES = (np.float64, np.float32)


def _choice(function, name, value, table):
    if value not in table:
        raise _core.argument_error(function, f"{name}: {value!r}; choose one of "
                                   f"{', '.join(repr(k) for k in table)}", "value")
    return table[value]


class VcsMatrix:
    """
    A count matrix (rows = cells, columns = genes) with a normalized view
    ``Y = s * (g(x * a * b) - c)`` per recipe, multiplied without expanding it.

    Make one with :meth:`from_scipy` or :meth:`from_csr`; ``A @ B`` and
    ``B @ A`` take dense NumPy arrays (float64 or float32, C-contiguous)
    for a host matrix, GPU arrays (CuPy, PyTorch, DLPack) for one moved
    with :meth:`to_device`. ``A.T`` is the transposed view (no copy).
    Results are summed in a fixed order (spart/vcs.h): the same bits on
    host and GPU, for any thread count.
    """

    # NumPy defers to __rmatmul__ for ``B @ A`` instead of making A an object array
    __array_ufunc__ = None

    def __init__(self, pointer, owner=None) -> None:
        self.device = None  # the CUDA device of a matrix moved there
        self._pointer = ffi.gc(pointer, lib.spart_vcs_free)
        self._owner = owner  # the matrix a view shares its arrays with
        sizes = [ffi.new("int64_t *") for _ in range(4)]
        _core.context().check(lib.spart_vcs_shape(self._pointer, *sizes), "spart_vcs_shape")
        self.shape = (int(sizes[0][0]), int(sizes[1][0]))
        self.nnz = int(sizes[2][0])
        self.num_runs = int(sizes[3][0])
        self.on_device = bool(lib.spart_vcs_on_device(self._pointer))

    @classmethod
    def from_csr(cls, indptr: Any, indices: Any, data: Any, shape: Tuple[int, int],
                 recipe: str = "raw", format: str = "vcsr") -> "VcsMatrix":
        """A host matrix from CSR arrays (int64 indptr and indices, float64
        counts; explicit zeros dropped, a repeated (row, column) refused)."""
        function = "VcsMatrix.from_csr"
        indptr = _arrays.operand(indptr, "indptr", function, (np.int64,))
        indices = _arrays.operand(indices, "indices", function, (np.int64,))
        data = _arrays.operand(data, "data", function, (np.float64,))
        for name, a in (("indptr", indptr), ("indices", indices), ("data", data)):
            if a.device is not None:
                raise _core.argument_error(function, f"{name}: in GPU memory; a VCS matrix is "
                                           "built on the host (then .to_device())", "type")
        rows, columns = (int(n) for n in shape)
        if indptr.shape != (rows + 1,) or indices.shape != data.shape or len(data.shape) != 1:
            raise _core.argument_error(function, f"indptr {indptr.shape}, indices "
                                       f"{indices.shape}, data {data.shape}: give ({rows + 1},) "
                                       "row pointers and as many indices as data", "shape")
        out = ffi.new("spart_vcs **")
        ctx = _core.context()
        ctx.check(lib.spart_vcs_create_from_csr(
            ctx.pointer, rows, columns, indptr.pointer("const int64_t *"),
            indices.pointer("const int64_t *"), data.pointer("const double *"),
            _choice(function, "recipe", recipe, _RECIPES),
            _choice(function, "format", format, _FORMATS), out), "spart_vcs_create_from_csr")
        return cls(out[0])

    @classmethod
    def from_scipy(cls, matrix: Any, recipe: str = "raw", format: str = "vcsr") -> "VcsMatrix":
        """A host matrix of a ``scipy.sparse`` count matrix (any format)."""
        csr = matrix.tocsr()
        return cls.from_csr(csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                            csr.data.astype(np.float64), csr.shape, recipe, format)

    def __repr__(self):
        where = "GPU" if self.on_device else "host"
        return (f"<spart.VcsMatrix {self.shape[0]} x {self.shape[1]}, {self.nnz} entries in "
                f"{self.num_runs} runs, {where}>")

    @property
    def T(self) -> "VcsMatrix":
        """The transposed view, sharing this matrix's arrays."""
        out = ffi.new("spart_vcs **")
        ctx = _core.context()
        ctx.check(lib.spart_vcs_transpose(ctx.pointer, self._pointer, out),
                  "spart_vcs_transpose")
        return VcsMatrix(out[0], owner=self)

    def to_device(self, device: int = 0, both_groupings: bool = True) -> "VcsMatrix":
        """A copy on CUDA device `device` (spart built with CUDA); both
        groupings by default, so that A @ B and B @ A both work there."""
        ctx = _core.context()
        ctx.check(lib.spart_context_set_cuda_device(ctx.pointer, int(device)),
                  "spart_context_set_cuda_device")
        out = ffi.new("spart_vcs **")
        ctx.check(lib.spart_vcs_to_device(ctx.pointer, self._pointer, 1 if both_groupings else 0,
                                          out, ffi.NULL), "spart_vcs_to_device")
        matrix = VcsMatrix(out[0])
        matrix.device = int(device)
        return matrix

    def statistics(self) -> dict:
        """row_scale, gene_scale, centre and scale of the recipe (host
        matrices; of the matrix, not of a transposed view)."""
        rows, columns = (self.shape[::-1] if lib.spart_vcs_is_transposed(self._pointer)
                         else self.shape)
        result = {"row_scale": np.empty(rows), "gene_scale": np.empty(columns),
                  "centre": np.empty(columns), "scale": np.empty(columns)}
        pointers = [ffi.from_buffer("double[]", a, require_writable=True)
                    for a in result.values()]
        ctx = _core.context()
        ctx.check(lib.spart_vcs_statistics(ctx.pointer, self._pointer, *pointers),
                  "spart_vcs_statistics")
        return result

    def to_scipy(self, normalized: bool = False):
        """The counts (or, ``normalized``, the stored part Delta of the
        view) as a ``scipy.sparse.csr_array`` (a host matrix)."""
        import scipy.sparse

        rows, columns = self.shape
        indptr = np.empty(rows + 1, dtype=np.int64)
        indices = np.empty(self.nnz, dtype=np.int64)
        counts = np.empty(self.nnz)
        delta = np.empty(self.nnz) if normalized else None
        ctx = _core.context()
        ctx.check(lib.spart_vcs_to_csr(
            ctx.pointer, self._pointer, ffi.from_buffer("int64_t[]", indptr, True),
            ffi.from_buffer("int64_t[]", indices, True), ffi.from_buffer("double[]", counts, True),
            ffi.NULL if delta is None else ffi.from_buffer("double[]", delta, True)),
            "spart_vcs_to_csr")
        return scipy.sparse.csr_array((delta if normalized else counts, indices, indptr),
                                      shape=self.shape)

    def multiply(self, b: Any, side: str = "right", out: Optional[Any] = None) -> Any:
        """``A @ b`` (side "right", b of shape (columns, width)) or ``b @ A``
        (side "left", b of shape (width, rows)) with the normalized values;
        float64 or float32 (summed in float64, rounded once)."""
        function = "VcsMatrix.multiply"
        direction = _choice(function, "side", side, {"right": lib.SPART_VCS_A_TIMES_B,
                                                     "left": lib.SPART_VCS_B_TIMES_A})
        operand = _arrays.operand(b, "b", function, _VALUES)
        rows, columns = self.shape
        if len(operand.shape) != 2:
            raise _core.argument_error(function, f"b: shape {operand.shape}; give a matrix",
                                       "shape")
        if side == "right":
            if operand.shape[0] != columns:
                raise _core.argument_error(function, f"b: shape {operand.shape}; A @ b needs "
                                           f"({columns}, width)", "shape")
            width, shape_out = operand.shape[1], (rows, operand.shape[1])
        else:
            if operand.shape[1] != rows:
                raise _core.argument_error(function, f"b: shape {operand.shape}; b @ A needs "
                                           f"(width, {rows})", "shape")
            width, shape_out = operand.shape[0], (operand.shape[0], columns)
        if (operand.device is not None) != self.on_device:
            raise _core.argument_error(function, "b: in " + ("GPU" if operand.device is not None
                                                            else "host") + " memory, but the "
                                       "matrix is " + ("on a GPU" if self.on_device else
                                                       "in host memory"), "type")
        if out is None:
            out = _arrays.empty_like(b, operand, shape_out, operand.dtype)
        result = _arrays.operand(out, "out", function, (operand.dtype,), writable=True)
        if result.shape != shape_out:
            raise _core.argument_error(function, f"out: shape {result.shape}, but the result "
                                       f"has shape {shape_out}", "shape")
        ctx = _core.context()
        _arrays.enter_device(ctx, operand.device, operand.stream)
        if operand.dtype == np.float64:
            ctx.check(lib.spart_vcs_multiply(ctx.pointer, self._pointer, direction, width,
                                             operand.pointer("const double *"),
                                             result.pointer("double *")), "spart_vcs_multiply")
        else:
            ctx.check(lib.spart_vcs_multiply_float(ctx.pointer, self._pointer, direction, width,
                                                   operand.pointer("const float *"),
                                                   result.pointer("float *")),
                      "spart_vcs_multiply_float")
        return out

    def __matmul__(self, b: Any) -> Any:
        return self.multiply(b, "right")

    def __rmatmul__(self, b: Any) -> Any:
        return self.multiply(b, "left")
