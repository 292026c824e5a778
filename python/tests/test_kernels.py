"""The reusable kernels from Python: the segmented softmax (forward,
backward, aggregation) and fused candidate scoring, against NumPy
references; arrays reached through DLPack; bad input named."""

import numpy as np
import pytest

import spart


class DLPackOnly:
    """An array seen only through the DLPack protocol (as a JAX or
    TensorFlow tensor would be)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def graph(rng, lengths, heads):
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    scores = rng.standard_normal((int(indptr[-1]), heads)) * 4
    return indptr, scores


def softmax_reference(indptr, scores):
    out = np.empty_like(scores)
    for r in range(len(indptr) - 1):
        s = scores[indptr[r]:indptr[r + 1]]
        if s.size:
            e = np.exp(s - s.max(axis=0))
            out[indptr[r]:indptr[r + 1]] = e / e.sum(axis=0)
    return out


# Row lengths unlike a benchmark's: empty rows, one edge, a row longer than
# a chunk of the order of operations (4096), a power-law tail.
LENGTHS = [0, 1, 3, 0, 33, 4100, 2, 0, 1, 257, 64]


def test_softmax_forward_backward_match_numpy():
    rng = np.random.default_rng(7)
    indptr, scores = graph(rng, LENGTHS, 3)
    out = spart.softmax(scores, indptr)
    np.testing.assert_allclose(out, softmax_reference(indptr, scores), rtol=1e-13, atol=1e-300)
    grad = rng.standard_normal(scores.shape)
    expected = np.empty_like(out)
    for r in range(len(indptr) - 1):
        o, g = out[indptr[r]:indptr[r + 1]], grad[indptr[r]:indptr[r + 1]]
        expected[indptr[r]:indptr[r + 1]] = o * (g - (o * g).sum(axis=0))
    got = spart.softmax_backward(out, grad, indptr)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)


def test_softmax_int32_rows_one_head_float32_and_in_place():
    rng = np.random.default_rng(8)
    indptr, scores = graph(rng, LENGTHS, 1)
    scores = scores[:, 0].astype(np.float32)
    expected = softmax_reference(indptr, scores.astype(np.float64)[:, None])[:, 0]
    got = spart.softmax(scores, indptr.astype(np.int32))
    assert got.dtype == np.float32
    # float32 results are the float64 values rounded once
    np.testing.assert_allclose(got, expected, rtol=2 ** -23, atol=1e-30)
    in_place = scores.copy()
    assert spart.softmax(in_place, indptr, out=in_place) is in_place
    assert np.array_equal(in_place, got)


def test_softmax_aggregate_matches_numpy_and_the_forward():
    rng = np.random.default_rng(9)
    lengths = [2, 0, 5, 1, 40, 3]
    indptr, scores = graph(rng, lengths, 2)
    nodes, width = 11, 5
    indices = rng.integers(0, nodes, size=scores.shape[0])
    features = rng.standard_normal((nodes, 2, width))
    aggregated, out = spart.softmax_aggregate(scores, indptr, indices, features,
                                              return_softmax=True)
    assert np.array_equal(out, spart.softmax(scores, indptr))
    expected = np.zeros((len(lengths), 2, width))
    for r in range(len(lengths)):
        for e in range(indptr[r], indptr[r + 1]):
            expected[r] += out[e][:, None] * features[indices[e]]
    np.testing.assert_allclose(aggregated, expected, rtol=1e-12, atol=1e-14)


def test_rows_from_index_groups_edges_as_pyg_index_does():
    rng = np.random.default_rng(10)
    index = rng.integers(0, 6, size=50)
    scores = rng.standard_normal(50)
    order, indptr = spart.rows_from_index(index, num_rows=7)
    out = np.empty(50)
    out[order] = spart.softmax(scores[order], indptr)
    for r in range(7):
        s = scores[index == r]
        if s.size:
            np.testing.assert_allclose(out[index == r], np.exp(s - s.max()) /
                                       np.exp(s - s.max()).sum(), rtol=1e-13)


def scoring_reference(query, candidates, similarity, scale, temperature):
    dots = np.einsum("qkd,qd->qk", candidates, query)
    if similarity == "cosine":
        dots = dots / (np.maximum(np.linalg.norm(query, axis=-1), 1e-12)[:, None] *
                       np.maximum(np.linalg.norm(candidates, axis=-1), 1e-12))
    z = dots * scale / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True), z


@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_score_candidates_matches_numpy(similarity):
    rng = np.random.default_rng(11)
    query = rng.standard_normal((3, 37))
    candidates = rng.standard_normal((3, 1500, 37))
    candidates[1, 4] = 0  # a zero candidate: 0 under cosine, never NaN
    p, z = spart.score_candidates(query, candidates, similarity, scale=2.0, temperature=0.5,
                                  return_logits=True)
    p_ref, z_ref = scoring_reference(query, candidates, similarity, 2.0, 0.5)
    np.testing.assert_allclose(z, z_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p, p_ref, rtol=1e-11, atol=1e-300)
    one = spart.score_candidates(query[1], candidates[1], similarity, 2.0, 0.5)
    assert np.array_equal(one, p[1])  # a question alone: the same bits


def test_dlpack_arrays_give_the_same_bits():
    rng = np.random.default_rng(12)
    indptr, scores = graph(rng, [3, 0, 9], 2)
    direct = spart.softmax(scores, indptr)
    through = spart.softmax(DLPackOnly(scores), DLPackOnly(indptr))
    assert np.array_equal(direct, through)
    query = rng.standard_normal((2, 8)).astype(np.float32)
    candidates = rng.standard_normal((2, 5, 8)).astype(np.float32)
    assert np.array_equal(spart.score_candidates(query, candidates),
                          spart.score_candidates(DLPackOnly(query), DLPackOnly(candidates)))


def test_bad_input_is_named():
    rng = np.random.default_rng(13)
    indptr, scores = graph(rng, [2, 3], 1)
    with pytest.raises(spart.SpartTypeError, match="scores"):
        spart.softmax(scores.astype(np.int64), indptr)
    with pytest.raises(spart.SpartValueError, match="scores"):
        spart.softmax(np.zeros((6, 4))[:, ::2], indptr)
    with pytest.raises(spart.SpartTypeError, match="indptr"):
        spart.softmax(scores, indptr.astype(np.float64))
    with pytest.raises(spart.SpartValueError, match="out"):
        spart.softmax(scores, indptr, out=np.empty((4, 1)))
    bad = indptr.copy()
    bad[1] = 9  # past E: spart's own check, its sentence
    with pytest.raises(spart.SpartValueError):
        spart.softmax(scores, bad)
    with pytest.raises(spart.SpartValueError, match="candidates"):
        spart.score_candidates(np.zeros((2, 4)), np.zeros((2, 5, 3)))
    with pytest.raises(spart.SpartValueError, match="similarity"):
        spart.score_candidates(np.zeros(4), np.zeros((5, 4)), similarity="l2")
    with pytest.raises(spart.SpartValueError, match="temperature"):
        spart.score_candidates(np.ones(4), np.ones((5, 4)), temperature=0.0)
