"""
Fused candidate scoring (include/spart/scoring.h): for each question, a
query against its own K candidates to a probability distribution, in one
pass, on host arrays (NumPy) or GPU arrays (CuPy, PyTorch, DLPack).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _arrays, _core
from ._core import ffi, lib

_VALUE_TYPES = {np.dtype(np.float64): lib.SPART_FLOAT64, np.dtype(np.float32): lib.SPART_FLOAT32}
_SIMILARITIES = {"dot": lib.SPART_SIMILARITY_DOT, "cosine": lib.SPART_SIMILARITY_COSINE}


def score_candidates(query: Any, candidates: Any, similarity: str = "dot", scale: float = 1.0,
                     temperature: float = 1.0, probabilities: Optional[Any] = None,
                     logits: Optional[Any] = None, return_logits: bool = False) -> Any:
    """
    ``softmax(similarity(query, candidates) * scale / temperature)`` over
    each question's candidates, in one pass over the candidates.

    Parameters
    ----------
    query : array, shape (D,) or (Q, D), float64 or float32
        NumPy, or in GPU memory (CuPy, PyTorch, DLPack): the call then runs
        on that GPU, and every array must be there.
    candidates : array, shape (K, D) or (Q, K, D), query's dtype
        Each question's own candidates.
    similarity : {"dot", "cosine"}
        ``q . c``, or ``q . c / (max(|q|, 1e-12) max(|c|, 1e-12))``.
    scale, temperature : float
        Finite and above 0.
    probabilities, logits : arrays, optional
        Where to write, shape (K,) or (Q, K); logits are written when given
        or with ``return_logits``.

    Returns
    -------
    probabilities, or (probabilities, logits) with ``return_logits``. Every
    sum is made in float64 in a fixed order (spart/scoring.h), so host and
    GPU give the same bits.
    """
    function = "score_candidates"
    q = _arrays.operand(query, "query", function, tuple(_VALUE_TYPES))
    c = _arrays.operand(candidates, "candidates", function, (q.dtype,))
    if similarity not in _SIMILARITIES:
        raise _core.argument_error(function, f"similarity: {similarity!r}; choose 'dot' or "
                                   "'cosine'", "value")
    if len(q.shape) not in (1, 2) or len(c.shape) != len(q.shape) + 1:
        raise _core.argument_error(function, f"query: shape {q.shape}, candidates: {c.shape}; "
                                   "give (D,) and (K, D), or (Q, D) and (Q, K, D)", "shape")
    if c.shape[-1] != q.shape[-1] or (len(q.shape) == 2 and c.shape[0] != q.shape[0]):
        raise _core.argument_error(function, f"candidates: shape {c.shape}; query {q.shape} "
                                   "asks for (K, D) or (Q, K, D) with its Q and D", "shape")
    num_question = q.shape[0] if len(q.shape) == 2 else 1
    num_candidate, dimension = c.shape[-2], c.shape[-1]
    shape_p = c.shape[:-1]
    if probabilities is None:
        probabilities = _arrays.empty_like(query, q, shape_p, q.dtype)
    p = _arrays.operand(probabilities, "probabilities", function, (q.dtype,), writable=True)
    z = None
    if logits is None and return_logits:
        logits = _arrays.empty_like(query, q, shape_p, q.dtype)
    if logits is not None:
        z = _arrays.operand(logits, "logits", function, (q.dtype,), writable=True)
    for name, operand in (("probabilities", p), ("logits", z)):
        if operand is not None and operand.shape != shape_p:
            raise _core.argument_error(function, f"{name}: shape {operand.shape}, but the "
                                       f"result has shape {shape_p}", "shape")
    operands = [("query", q), ("candidates", c), ("probabilities", p)]
    operands += [("logits", z)] if z is not None else []
    ctx = _core.context()
    device = _arrays.same_place(operands, function)
    _arrays.enter_device(ctx, device, q.stream)
    ctx.check(lib.spart_scoring_apply_batch(
        ctx.pointer, q.pointer("const void *"), c.pointer("const void *"),
        p.pointer("void *"), ffi.NULL if z is None else z.pointer("void *"), num_question,
        num_candidate, dimension, _SIMILARITIES[similarity], float(scale), float(temperature),
        _VALUE_TYPES[q.dtype], 0 if device is None else 1), "spart_scoring_apply_batch")
    return (probabilities, logits) if return_logits else probabilities
