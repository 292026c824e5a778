"""
The segmented multi-head softmax of graph attention (include/spart/softmax.h)
over CSR rows: the forward, its backward and the fused aggregation, on
host arrays (NumPy) or GPU arrays (CuPy, PyTorch, DLPack), with the same
bits on both.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays, _core
from ._core import ffi, lib

_VALUE_TYPES = {np.dtype(np.float64): lib.SPART_FLOAT64, np.dtype(np.float32): lib.SPART_FLOAT32}
_INDEX_TYPES = (np.int64, np.int32)


def _segments(function, indptr, scores, value_type_of):
    """The spart_softmax_segments of `indptr` for `scores` (E, H) or (E,)."""
    if len(scores.shape) not in (1, 2):
        raise _core.argument_error(function, f"scores: shape {scores.shape}; spart takes (E,) "
                                   "or (E, H) (edges, heads)", "shape")
    if len(indptr.shape) != 1 or indptr.shape[0] < 1:
        raise _core.argument_error(function, f"indptr: shape {indptr.shape}; give R + 1 row "
                                   "pointers", "shape")
    segments = ffi.new("spart_softmax_segments *")
    segments.num_rows = indptr.shape[0] - 1
    segments.num_edges = scores.shape[0]
    segments.num_heads = scores.shape[1] if len(scores.shape) == 2 else 1
    if indptr.dtype == np.int64:
        segments.row_ptr = indptr.pointer("const int64_t *")
    else:
        segments.row_ptr32 = indptr.pointer("const int32_t *")
    segments.value_type = value_type_of
    segments.on_device = 0 if scores.device is None else 1
    return segments


def _output(function, given, name, like, like_operand, shape, dtype):
    """The caller's output array, checked, or a new one where `like` is."""
    if given is None:
        given = _arrays.empty_like(like, like_operand, shape, dtype)
    out = _arrays.operand(given, name, function, (dtype,), writable=True)
    if out.shape != tuple(shape):
        raise _core.argument_error(function, f"{name}: shape {out.shape}, but the result has "
                                   f"shape {tuple(shape)}", "shape")
    return given, out


def _run(function, c_name, operands, call):
    """Check the operands share a place, enter it, and make the call."""
    ctx = _core.context()
    device = _arrays.same_place(operands, function)
    _arrays.enter_device(ctx, device, operands[0][1].stream)
    ctx.check(call(ctx.pointer), c_name)


def softmax(scores: Any, indptr: Any, out: Optional[Any] = None) -> Any:
    """
    The softmax of each row of a CSR layout, for each head on its own.

    Parameters
    ----------
    scores : array of float64 or float32, shape (E,) or (E, H)
        One score per edge (and head); the edges of row r are
        ``indptr[r]:indptr[r+1]``. NumPy, or in GPU memory (CuPy, PyTorch,
        DLPack): the call then runs on that GPU.
    indptr : array of int64 or int32, shape (R + 1,)
        The row pointers, in the same place as ``scores``.
    out : array, optional
        Where to write (scores' dtype and shape; may be ``scores``).

    Returns
    -------
    The softmax, ``exp(s - max) / sum(exp(s - max))`` over each row (as
    ``torch_geometric.utils.softmax(scores, index)`` with ``index`` the
    edges' rows), in a fixed order of operations (spart/softmax.h).
    """
    function = "softmax"
    s = _arrays.operand(scores, "scores", function, tuple(_VALUE_TYPES))
    rows = _arrays.operand(indptr, "indptr", function, _INDEX_TYPES)
    out, o = _output(function, out, "out", scores, s, s.shape, s.dtype)
    segments = _segments(function, rows, s, _VALUE_TYPES[s.dtype])
    _run(function, "spart_softmax_forward", [("scores", s), ("indptr", rows), ("out", o)],
         lambda c: lib.spart_softmax_forward(c, segments, s.pointer("const void *"),
                                             o.pointer("void *")))
    return out


def softmax_backward(out: Any, grad_out: Any, indptr: Any,
                     grad_scores: Optional[Any] = None) -> Any:
    """
    The gradient of a loss with respect to the scores, from the forward's
    ``out`` and the gradient ``grad_out`` with respect to ``out``:
    ``out * (grad_out - sum over the row of out * grad_out)``.

    ``grad_scores`` (optional) receives it; it may be ``grad_out``. Arrays
    as in :func:`softmax`.
    """
    function = "softmax_backward"
    o = _arrays.operand(out, "out", function, tuple(_VALUE_TYPES))
    g = _arrays.operand(grad_out, "grad_out", function, (o.dtype,))
    if g.shape != o.shape:
        raise _core.argument_error(function, f"grad_out: shape {g.shape}, out: {o.shape}; they "
                                   "must be alike", "shape")
    rows = _arrays.operand(indptr, "indptr", function, _INDEX_TYPES)
    grad_scores, gs = _output(function, grad_scores, "grad_scores", out, o, o.shape, o.dtype)
    segments = _segments(function, rows, o, _VALUE_TYPES[o.dtype])
    _run(function, "spart_softmax_backward",
         [("out", o), ("grad_out", g), ("indptr", rows), ("grad_scores", gs)],
         lambda c: lib.spart_softmax_backward(c, segments, o.pointer("const void *"),
                                              g.pointer("const void *"),
                                              gs.pointer("void *")))
    return grad_scores


def softmax_aggregate(scores: Any, indptr: Any, indices: Any, features: Any,
                      aggregated: Optional[Any] = None, out: Optional[Any] = None,
                      return_softmax: bool = False) -> Any:
    """
    Graph attention's softmax and aggregation in one pass:
    ``aggregated[r, h, :] = sum over the edges e of row r of
    softmax[e, h] * features[indices[e], h, :]``.

    Parameters
    ----------
    scores : (E,) or (E, H) float64 or float32
    indptr : (R + 1,) int64 or int32
    indices : (E,) int64 or int32
        The node each edge reads (its source, with the rows the destinations).
    features : (N, H, F) or, with one head, (N, F); scores' dtype
    aggregated, out : optional outputs, (R, H, F) (or (R, F) with one head)
        and the softmax (scores' shape).
    return_softmax : bool
        Also return the softmax (written into ``out`` or a new array).

    Returns
    -------
    aggregated, or (aggregated, softmax) with ``return_softmax``.
    """
    function = "softmax_aggregate"
    s = _arrays.operand(scores, "scores", function, tuple(_VALUE_TYPES))
    rows = _arrays.operand(indptr, "indptr", function, _INDEX_TYPES)
    columns = _arrays.operand(indices, "indices", function, _INDEX_TYPES)
    x = _arrays.operand(features, "features", function, (s.dtype,))
    segments = _segments(function, rows, s, _VALUE_TYPES[s.dtype])
    heads = s.shape[1] if len(s.shape) == 2 else 1
    if columns.shape != (s.shape[0],):
        raise _core.argument_error(function, f"indices: shape {columns.shape}; give one node "
                                   f"a edge ({s.shape[0]},)", "shape")
    if len(s.shape) == 2 and (len(x.shape) != 3 or x.shape[1] != heads):
        raise _core.argument_error(function, f"features: shape {x.shape}; with {heads} heads "
                                   f"give (N, {heads}, F)", "shape")
    if len(s.shape) == 1 and len(x.shape) != 2:
        raise _core.argument_error(function, f"features: shape {x.shape}; with one head give "
                                   "(N, F)", "shape")
    width = x.shape[-1]
    num_rows = rows.shape[0] - 1
    shape_y = (num_rows, heads, width) if len(s.shape) == 2 else (num_rows, width)
    aggregated, y = _output(function, aggregated, "aggregated", scores, s, shape_y, s.dtype)
    o = None
    if return_softmax or out is not None:
        out, o = _output(function, out, "out", scores, s, s.shape, s.dtype)
    gather = ffi.new("spart_softmax_gather *")
    gather.num_nodes = x.shape[0]
    gather.width = width
    if columns.dtype == np.int64:
        gather.columns = columns.pointer("const int64_t *")
    else:
        gather.columns32 = columns.pointer("const int32_t *")
    operands = [("scores", s), ("indptr", rows), ("indices", columns), ("features", x),
                ("aggregated", y)] + ([("out", o)] if o is not None else [])
    _run(function, "spart_softmax_aggregate", operands,
         lambda c: lib.spart_softmax_aggregate(c, segments, gather, s.pointer("const void *"),
                                               x.pointer("const void *"), y.pointer("void *"),
                                               ffi.NULL if o is None else o.pointer("void *")))
    return (aggregated, out) if return_softmax else aggregated


def rows_from_index(index: np.ndarray, num_rows: Optional[int] = None) -> Tuple[np.ndarray,
                                                                                np.ndarray]:
    """
    (order, indptr) that group edges by their row ``index`` (a NumPy int
    array, as PyG's ``softmax(src, index)`` takes it): ``scores[order]`` has
    its edges in rows ``indptr[r]:indptr[r+1]``, each row's edges in their
    original order (a stable sort).
    """
    index = np.asarray(index)
    if index.ndim != 1 or index.dtype.kind not in "iu":
        raise _core.argument_error("rows_from_index", f"index: a {index.dtype} array of shape "
                                   f"{index.shape}; give one integer row an edge", "type")
    if num_rows is None:
        num_rows = int(index.max()) + 1 if index.size else 0
    if index.size and (index.min() < 0 or index.max() >= num_rows):
        raise _core.argument_error("rows_from_index", f"index: values outside 0 .. "
                                   f"{num_rows - 1}")
    order = np.argsort(index, kind="stable")
    indptr = np.zeros(num_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(index, minlength=num_rows), out=indptr[1:])
    return order, indptr
