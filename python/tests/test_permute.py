"""The block permute from Python: a dense transpose against NumPy, fusion
blocks with recoupling against a NumPy loop, alpha/beta, conjugation, and
bad blocks refused with spart's sentence."""

import numpy as np
import pytest

import spart


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_dense_transpose_matches_numpy(dtype):
    rng = np.random.default_rng(30)
    shape, axes = (5, 1, 7, 33), (2, 0, 3, 1)
    a = rng.standard_normal(shape).astype(dtype)
    if np.iscomplexobj(a):
        a += 1j * rng.standard_normal(shape)
    plan = spart.PermutePlan.transpose(shape, axes, dtype)
    out = plan(a.reshape(-1))
    assert np.array_equal(out.reshape([shape[k] for k in axes]), np.transpose(a, axes))


def test_recoupled_blocks_match_a_numpy_loop():
    rng = np.random.default_rng(31)
    sizes, axes = (3, 4, 2), (1, 2, 0)
    volume = 24
    # block 0: 2 sources -> 3 destinations; block 1: a plain transpose
    src = rng.standard_normal(5 * volume)
    u = rng.standard_normal((3, 2))
    u[1, 0] = 0  # a zero U skips its source
    c_strides = [8, 2, 1]
    permuted = [sizes[a] for a in axes]
    d_strides = [permuted[1] * permuted[2], permuted[2], 1]
    blocks = [spart.PermuteBlock(sizes, [0, volume], [c_strides, c_strides],
                                 [0, volume, 2 * volume], [d_strides] * 3, u),
              spart.PermuteBlock(sizes, [3 * volume], [c_strides], [3 * volume], [d_strides])]
    plan = spart.PermutePlan(blocks, axes, np.float64, 5 * volume, 4 * volume)
    before = rng.standard_normal(4 * volume)
    got = plan(src, before.copy(), alpha=2.0, beta=0.5)
    pieces = [np.transpose(src[k * volume:(k + 1) * volume].reshape(sizes), axes).reshape(-1)
              for k in range(5)]
    expected = before.copy()
    for i in range(3):
        acc = sum(u[i, j] * pieces[j] for j in range(2))
        expected[i * volume:(i + 1) * volume] = 0.5 * before[i * volume:(i + 1) * volume] + 2 * acc
    expected[3 * volume:] = 0.5 * before[3 * volume:] + 2 * pieces[3]
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14)
    assert plan.counts()["items"] == 4


def test_conjugate_and_errors():
    rng = np.random.default_rng(32)
    a = (rng.standard_normal((4, 6)) + 1j * rng.standard_normal((4, 6))).astype(np.complex128)
    block = spart.PermuteBlock((4, 6), [0], [[6, 1]], [0], [[4, 1]])
    plan = spart.PermutePlan([block], (1, 0), np.complex128, 24, 24, conjugate=True)
    assert np.array_equal(plan(a.reshape(-1)).reshape(6, 4), a.T.conj())
    with pytest.raises(spart.SpartTypeError, match="source"):
        plan(a.reshape(-1).real.copy())
    with pytest.raises(spart.SpartValueError, match="source: 23"):
        plan(a.reshape(-1)[:23].copy())
    outside = spart.PermuteBlock((4, 6), [0], [[6, 1]], [10], [[4, 1]])
    with pytest.raises(spart.SpartValueError):  # past the destination: spart's check
        spart.PermutePlan([outside], (1, 0), np.float64, 24, 24)
    with pytest.raises(spart.SpartValueError, match="blocks\\[0\\].sizes"):
        spart.PermutePlan([spart.PermuteBlock((4,), [0], [[1]], [0], [[1]])], (1, 0),
                          np.float64, 24, 24)
