"""Any CSR matrix (scipy.sparse's) as a spart operator."""

import numpy as np
import pytest
from conftest import address

import spart

scipy_sparse = pytest.importorskip("scipy.sparse")


@pytest.fixture(scope="module")
def matrix():
    rng = np.random.default_rng(0)
    a = scipy_sparse.random_array((300, 200), density=0.05, format="csr", rng=rng)
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    return a


def test_products_match_scipy(matrix):
    m = spart.CsrMatrix.from_scipy(matrix)
    assert m.shape == (300, 200) and m.nnz == matrix.nnz
    x = np.random.default_rng(1).random(200)
    assert np.allclose(m(x), matrix @ x, rtol=1e-13, atol=1e-15)
    xs = np.random.default_rng(2).random((5, 200))
    batch = m(xs)
    for k in range(5):
        assert np.array_equal(batch[k], m(xs[k]))
    v = np.random.default_rng(3).random(300)
    assert np.allclose(m.T(v), matrix.T @ v, rtol=1e-13, atol=1e-15)
    y = np.random.default_rng(4).random(300)
    expected = 2.0 * (matrix @ x) + 0.5 * y
    out = y.copy()
    assert m(x, out=out, alpha=2.0, beta=0.5) is out
    assert np.allclose(out, expected, rtol=1e-13)
    assert np.allclose(m(x.astype(np.float32)), matrix @ x, rtol=1e-6)


def test_wrap_reads_the_arrays_in_place(matrix):
    m = spart.CsrMatrix.from_scipy(matrix, wrap=True)
    indptr, indices, data = m.csr()
    assert address(indices) == address(matrix.indices) and address(data) == address(matrix.data)
    copied = spart.CsrMatrix.from_scipy(matrix)
    assert address(copied.csr()[2]) != address(matrix.data)
    x = np.random.default_rng(5).random(200)
    assert np.array_equal(m(x), copied(x))


def test_bad_arrays_are_refused():
    with pytest.raises(spart.SpartValueError) as caught:
        spart.CsrMatrix(np.array([0, 1, 2]), np.array([0, 7]), np.ones(2), (2, 3))
    assert caught.value.function == "spart_csr_matrix_create"
    with pytest.raises(TypeError, match="data: a int64 array"):
        spart.CsrMatrix(np.array([0, 1]), np.array([0]), np.array([1]), (1, 1))
    m = spart.CsrMatrix(np.array([0, 1]), np.array([0]), np.ones(1), (1, 1))
    with pytest.raises(ValueError, match=r"x: shape \(2,\)"):
        m(np.ones(2))
    with pytest.raises(ValueError, match="beta"):
        m(np.ones(1), beta=1.0)
